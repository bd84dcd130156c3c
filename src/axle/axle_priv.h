/*
 * axle_priv.h — what the AXLE model's files share: the run's parameters, the
 * wire records between host and CCM, and the workload interface
 * (src/axle/kernels.c) that the CCM device (ccm.c) and the host runtime
 * (host.c) drive.
 */
#ifndef CXLSIM_AXLE_PRIV_H
#define CXLSIM_AXLE_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "cxlsim/axle.h"
#include "cxlsim/dram.h"
#include "cxlsim/engine.h"
#include "cxlsim/fabric.h"
#include "cxlsim/nport.h"

enum axle_mech { AXLE_RP = 0, AXLE_BS, AXLE_AXLE, AXLE_IRQ };
enum axle_sched { AXLE_SCHED_RR = 0, AXLE_SCHED_FIFO };
enum axle_fault { AXLE_FAULT_NONE = 0, AXLE_FAULT_TAIL_BEFORE_META, AXLE_FAULT_META_BEFORE_PAYLOAD,
		  AXLE_FAULT_IGNORE_CREDIT };

enum axle_wl_kind { WL_KNN = 0, WL_SSSP, WL_PAGERANK, WL_SSB, WL_LLM, WL_DLRM };

/* Sizes of a workload; which fields matter depends on the kind. */
struct axle_wl_params {
	enum axle_wl_kind kind;
	uint32_t knn_dim, knn_rows, knn_k;
	uint32_t vertices, edges, iterations;
	uint32_t ssb_rows, ssb_query; /* query 1 = Q1.1, 2 = Q1.2 */
	uint32_t tokens, hidden, heads;
	uint32_t dlrm_rows, dlrm_dim, bags, pooling;
	uint64_t seed;
};

/* Everything read once from [axle]; read-only during the run. */
struct axle_params {
	uint32_t pairs;
	enum axle_mech mech;
	enum axle_sched ccm_sched, host_sched;
	enum axle_fault fault;
	uint32_t ccm_pus, ccm_threads, host_pus, host_threads;
	cxs_time ccm_cycle, host_cycle;
	cxs_time io_extra;       /* CXL.io one-way latency beyond CXL.mem's */
	cxs_time rp_interval, poll_interval, dma_prep, irq_latency;
	uint32_t slot_bytes;     /* DMA slot = ring slot size, <= 64 */
	uint64_t sf_bytes;       /* streaming factor; 0 = from sf_pct */
	double sf_pct;
	uint64_t dma_slots;      /* payload and metadata ring capacity */
	double dma_slots_pct;
	bool ooo;
	uint32_t host_mlp;       /* outstanding lines of a host result load */
	uint32_t ccm_mlp;        /* outstanding lines of a CCM µthread */
	uint32_t ccm_l1_lines;   /* data cache of a CCM unit, lines (0 = none) */
	struct cxs_fabric_params fab;
	struct cxs_dram_params ccm_dram, host_dram;
	struct axle_wl_params wl;
	bool configured;
};

struct axle_wl;

/* The model's instance (axle_model.c), read by both node types through cxs_lp_ctx. */
struct axle_model {
	struct axle_params P;
	struct axle_wl *wl;
	struct cxs_nport_cfg port;
};

/* ---- wire ------------------------------------------------------------- */

enum axle_ev {
	/* messages between nodes */
	EV_LAUNCH = 1,   /* host -> CCM, CXL.mem store of the kernel launch (iteration) */
	EV_LAUNCH_CMP,   /* CCM -> host, its completion */
	EV_MBOX_ENQ,     /* host -> CCM, CXL.io mailbox enqueue (RP) */
	EV_MBOX_DEQ,     /* host -> CCM, CXL.io dequeue (RP) */
	EV_MBOX_ACK,     /* CCM -> host, completion of an enqueue / dequeue */
	EV_POLL_REQ,     /* host -> CCM, CXL.io read of the mailbox status (RP) */
	EV_POLL_RESP,    /* CCM -> host */
	EV_RD,           /* host -> CCM, CXL.mem read of one result line */
	EV_RD_DATA,      /* CCM -> host */
	EV_WB,           /* host -> CCM, CXL.mem write-back of updated input values */
	EV_FC,           /* host -> CCM, CXL.mem store of the ring heads (flow control) */
	EV_DMA_PAYLOAD,  /* CCM -> host, DMA posted write of one payload slot */
	EV_DMA_META,     /* CCM -> host, one metadata record */
	EV_DMA_META_TAIL,
	EV_DMA_PAYLOAD_TAIL,
	EV_MSI,          /* CCM -> host, interrupt (AXLE with interrupts) */
	EV_MSG_LAST = EV_MSI,
	/* local events */
	EV_DELIVER = 32, /* a message held by ingress queueing */
	EV_TASK_DONE,
	EV_DMA_ISSUE,
	EV_DMA_IDLE,
	EV_POLL,
	EV_POLL_DONE,
	EV_HOST_DONE,
	EV_WB_SEND,      /* a host task's write-back leaves as the task ends */
	EV_EPILOGUE_DONE,
	EV_IRQ_DONE,
	EV_LOAD_DONE,
	EV_END_CHECK,
};

/* One message; data carries real bytes (a payload slot, a result line). */
struct axle_msg {
	uint32_t ev;       /* enum axle_ev; also the engine event type */
	uint32_t len;      /* bytes of data used */
	uint64_t a, b, c;  /* meaning per ev (see host.c / ccm.c) */
	uint8_t data[64];
};
_Static_assert(sizeof(struct axle_msg) <= CXS_EVENT_PAYLOAD_MAX, "an AXLE message fits an event");

/*
 * Sends m now through the node's port as the fabric message type of its ev
 * (axle_msg_type); CXL.io and DMA classes pay the extra protocol latency
 * (axle.io_rt - axle.mem_rt) / 2 (the port's class_extra). Receiving side:
 * the port dispatches classes mem, io and dma to the node's message handler.
 */
void axle_send(struct cxs_nport *np, const struct axle_params *P, uint32_t dst,
	       const struct axle_msg *m);
enum cxs_msg_type axle_msg_type(const struct axle_params *P, uint32_t ev);

/* The two node types (host.c, ccm.c), and the failure callback both have: an error. */
extern const struct cxs_node_type axle_host_type, axle_ccm_type;
void axle_failure(struct cxs_lp *lp, void *state, const struct cxs_failure_notice *f);

/* ---- workloads (kernels.c) -------------------------------------------- */

/*
 * One offload round. The CCM runs ntasks partitions, each writing task_bytes
 * of result at offset task * task_bytes; the host runs one task per
 * host_bytes of result (a multiple of the slot size, so a payload slot never
 * feeds two host tasks).
 */
struct axle_round {
	uint32_t ntasks;
	uint32_t task_bytes;
	uint32_t host_unit; /* result bytes per host task before rounding to slots */
	bool serial;        /* host tasks update one shared structure, one at a time (a lock) */
};

/* Called by a kernel for every memory word it reads; the caller charges DRAM lines. */
typedef void axle_touch_fn(void *ctx, uint64_t addr);

struct axle_wl;

/*
 * The lines a processing unit read last (its line buffers): a kernel that
 * walks three columns row by row reads each line once, not once per row.
 */
#define AXLE_RECENT_LINES 8
struct axle_recent {
	uint64_t line[AXLE_RECENT_LINES];
	uint32_t next;
};

static inline void axle_recent_reset(struct axle_recent *r)
{
	for (int i = 0; i < AXLE_RECENT_LINES; i++)
		r->line[i] = UINT64_MAX;
	r->next = 0;
}

/* Whether line was read recently; if not, it is remembered now. */
static inline bool axle_recent_line(struct axle_recent *r, uint64_t line)
{
	for (int i = 0; i < AXLE_RECENT_LINES; i++)
		if (r->line[i] == line)
			return true;
	r->line[r->next] = line;
	r->next = (r->next + 1) % AXLE_RECENT_LINES;
	return false;
}

struct axle_wl *axle_wl_new(const struct axle_wl_params *p, char *err, size_t errlen);
void axle_wl_free(struct axle_wl *w);
const char *axle_wl_name(const struct axle_wl *w);
void axle_wl_round(const struct axle_wl *w, uint32_t iter, struct axle_round *out);

/* The CCM's mutable copy of the workload's state (vertex values ...). */
void *axle_wl_ccm_new(const struct axle_wl *w);
void axle_wl_ccm_free(void *s);
/* At a launch: the write-backs of the previous round become the values read. */
void axle_wl_ccm_begin_round(const struct axle_wl *w, void *s);
/* Runs partition `task` of round `iter` into out; returns instructions executed. */
uint64_t axle_wl_ccm_task(const struct axle_wl *w, void *s, uint32_t iter, uint32_t task,
			  uint8_t *out, axle_touch_fn *touch, void *ctx);
/* Applies a host write-back of len bytes at byte offset off of the shared state. */
void axle_wl_ccm_writeback(const struct axle_wl *w, void *s, uint64_t off, const uint8_t *data,
			   uint32_t len);

void *axle_wl_host_new(const struct axle_wl *w);
void axle_wl_host_free(void *s);
/*
 * Host task over result bytes [off, off + len) of round iter. May fill wb
 * (len bytes at most) with values to write back to the CCM at the same
 * offset, setting *wb_len (0 = none). Returns instructions executed.
 */
uint64_t axle_wl_host_task(const struct axle_wl *w, void *s, uint32_t iter, uint64_t off,
			   const uint8_t *data, uint32_t len, axle_touch_fn *touch, void *ctx,
			   uint8_t *wb, uint32_t *wb_len);
/*
 * After every host task of a round: sets *more when another round follows.
 * Returns the instructions of one host µthread; *par_instr more are spread
 * over every host unit and *par_bytes are streamed from host DRAM meanwhile
 * (the LLM layer's MLP), 0 for the others.
 */
uint64_t axle_wl_epilogue(const struct axle_wl *w, void *s, uint32_t iter, bool *more,
			  uint64_t *par_instr, uint64_t *par_bytes);
/* Compares the offloaded result with a host-only computation of the same kernel. */
int axle_wl_check(const struct axle_wl *w, const void *s, char *err, size_t errlen);
/* Digest of the final result (a counter, so runs can be compared). */
uint64_t axle_wl_digest(const struct axle_wl *w, const void *s);

#endif /* CXLSIM_AXLE_PRIV_H */
