/*
 * memsys_priv.h — what the files of the memory-system model share.
 *
 *   memsys.c       the model: [system] and [coherence] keys, configure, which
 *                  node is which, the registry entry
 *   cn_node.c      the compute node type: port, caches and agent, cores
 *   mn_node.c      the memory node type: port, home directory, DRAM
 *   workload.c     what the cores run: the random tester or a thread program
 *                  on out-of-order cores; reference run; completion
 *   exact_check.c  the exact coherence checker (tester.exact_check)
 *
 * The model's instance (struct memsys) is built once by configure and read by
 * every node of the process through cxs_lp_ctx; nothing here is a
 * process-wide variable. Only the exact checker's shadow memory is written
 * during the run, and only because it is a checker that needs every CN in one
 * process (it says so and refuses otherwise).
 */
#ifndef CXLSIM_MEMSYS_PRIV_H
#define CXLSIM_MEMSYS_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "cxlsim/addr_map.h"
#include "cxlsim/coherence.h"
#include "cxlsim/config.h"
#include "cxlsim/core.h"
#include "cxlsim/dram.h"
#include "cxlsim/engine.h"
#include "cxlsim/fabric.h"
#include "cxlsim/kthread.h"
#include "cxlsim/line_map.h"
#include "cxlsim/model.h"
#include "cxlsim/nport.h"
#include "cxlsim/protocol.h"
#include "cxlsim/tester.h"
#include "cxlsim/tier.h"

/*
 * Engine event types of both node types. The numbers are part of every run's
 * event digest (checksum): keep them.
 */
enum {
	EV_MSG = 1,     /* a message arriving at the port */
	EV_DELIVER,     /* ... handed to its agent after ingress queueing */
	EV_CORE_ISSUE,  /* a tester core issues its next request */
	EV_CORE_DONE,   /* a request completed */
	EV_WATCHDOG,
	EV_SEND,        /* a message an agent emitted for a later time */
	EV_CORE_STEP,   /* an out-of-order core asked to be woken */
	EV_FAILED,      /* the switch has detected a CN's failure (struct fail_ev) */
};

/* A CN's failure as the switch detects it, fabric.detect_latency after its T_f. */
struct fail_ev {
	uint32_t node;
	uint32_t pad;
	cxs_time tf;
};


/* ---- configuration of each part ---------------------------------------------- */

struct cn_config {
	uint32_t cores;
	struct cxs_cn_params agent;  /* caches, cycle, address map */
	bool fault_keep_copy;        /* coherence.fault = ack_inv_keep_copy */
};

struct mn_config {
	cxs_time dir_latency;
	struct cxs_dram_params dram; /* also the CNs' local DRAM */
};

/* Shadow of CXL memory for the exact checker (exact_check.c). */
struct exact_check {
	struct cxs_line_map shadow; /* line -> struct shadow_line */
	uint32_t cns_here;          /* CNs initialised in this process */
};

/* The workload (workload.c): tester, or a kernel on out-of-order cores. */
struct workload {
	const struct cxs_kernel *kernel; /* NULL: the random tester */
	struct cxs_kimage img;
	uint8_t *reference;              /* the native run's final shared image, or NULL */
	uint64_t *ref_ops;               /* the native run's memory operations per thread, or NULL */
	uint64_t private_stride;         /* bytes of local memory per thread */
	uint64_t shared_base;            /* address of the kernel's shared byte 0 (tier.h) */
	struct cxs_core_params core;
	struct cxs_tester_params tester;
};

/* The model's instance. */
struct memsys {
	uint32_t cns, mns;
	enum cxs_protocol protocol;
	struct cxs_addr_map map;
	struct cxs_tier tier;            /* CAMP's two tiers on one CN; placement off: classic */
	struct cxs_fabric_params fab;
	struct cxs_nport_cfg port;
	struct cn_config cn;
	struct mn_config mn;
	cxs_time deadlock_timeout, watchdog;
	struct workload wl;
	struct exact_check *exact;       /* NULL unless tester.exact_check */
};

/*
 * The engine's failure notice, as every memsys node takes it (memsys.c): a
 * failed MN stops the run (outside the papers' failure model); for a failed
 * CN it schedules EV_FAILED at T_f + fabric.detect_latency — never earlier
 * than now — and sets its bit in *known (the CNs this node knows dead).
 */
void memsys_failure_notice(struct cxs_lp *lp, const struct memsys *M,
			   const struct cxs_failure_notice *f, uint64_t *known);

/* Each part's keys (model.h), listed by the model in memsys.c. */
extern const struct cxs_key_table memsys_cn_key_table, memsys_mn_key_table,
	memsys_workload_key_table, memsys_exact_key_table;

int cn_configure(const struct cxs_config *cfg, struct memsys *M, char *err, size_t errlen);
int mn_configure(const struct cxs_config *cfg, struct memsys *M, char *err, size_t errlen);
int workload_configure(const struct cxs_config *cfg, struct memsys *M, char *err, size_t errlen);
void workload_release(struct workload *w);
/* Initial contents of a memory line (MN, or CN-local in tier mode): the kernel's shared image, else zeros. */
void workload_init_line(const struct memsys *M, uint64_t line, uint8_t out[CXS_LINE_BYTES]);
int exact_configure(const struct cxs_config *cfg, struct memsys *M, char *err, size_t errlen);
void exact_release(struct exact_check *x);

extern const struct cxs_node_type memsys_cn_type, memsys_mn_type;

/* ---- what both node types have ------------------------------------------------ */

/*
 * Deadlock watchdog: a node with work in progress checks every
 * coherence.watchdog_interval of simulated time; an idle node's watchdog
 * stops and the next message or request re-arms it (memsys.c explains why).
 */
struct node_watch {
	struct cxs_lp *lp;
	cxs_time interval;
	bool armed;
};

static inline void watch_arm(struct node_watch *w)
{
	if (!w->armed) {
		w->armed = true;
		cxs_schedule(w->lp, w->interval, EV_WATCHDOG, NULL, 0);
	}
}

/* The port's arrival hook: every message re-arms the watchdog. */
static inline void watch_on_arrival(void *ctx)
{
	watch_arm(ctx);
}

/* Publishes a DRAM model's figures as counters (at the end of the run). */
void dram_counters(struct cxs_stats *st, const struct cxs_dram *d);

/* ---- the CN, as workload.c and exact_check.c see it --------------------------- */

struct cn_node {
	struct cxs_lp *lp;
	const struct memsys *M;
	struct cxs_nport port;
	struct cxs_dram dram;
	struct node_watch watch;
	struct cxs_cn *agent;
	uint64_t dead;               /* CNs whose failure the switch has reported */
	uint64_t known_dead;         /* ... or the engine's notice has */
	struct cxs_tester *testers;  /* tester mode: one per core */
	struct cxs_kt **kts;         /* kernel mode: a program and a core per core */
	struct cxs_core **ooo;
};

/* A completed request travels to the workload as an event at its completion time. */
struct core_done {
	struct cxs_mem_req r;
	uint64_t value;
};
_Static_assert(sizeof(struct core_done) <= CXS_EVENT_PAYLOAD_MAX, "fits an event");

/* workload.c: the cores of one CN */
int workload_cn_init(struct cn_node *cn, char *err, size_t errlen);
void workload_issue(struct cn_node *cn, const struct cxs_event *ev);
void workload_step(struct cn_node *cn, const struct cxs_event *ev);
void workload_done(struct cn_node *cn, const struct cxs_event *ev);
void workload_cn_finish(struct cn_node *cn); /* counters, completion check, frees */
void workload_invalidated(struct cn_node *cn, cxs_time t, uint32_t core, uint64_t line);

/* exact_check.c: every performed access of a CN (cxs_cn_env.perform) */
void exact_perform(struct cn_node *cn, cxs_time t, const struct cxs_mem_req *r, uint64_t value,
		   int is_write);
void exact_cn_init(struct exact_check *x);

#endif /* CXLSIM_MEMSYS_PRIV_H */
