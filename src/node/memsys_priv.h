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
 *   dk_node.c      DIKTAMO's components on both node types (the protocols
 *                  that replicate) and its protocol checker (diktamo.check)
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
#include "cxlsim/diktamo.h"
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
	EV_DK_LOGGER,   /* a DIKTAMO Logging Unit's timer (CN) */
	EV_DK_KEEPER,   /* the DIKTAMO dump coordinator's timer (MN) */
	EV_DK_RECOVERY, /* a DIKTAMO MN's recovery timer */
	EV_ORACLE,      /* the golden-image check after a failure without recovery (CN) */
	EV_SNAPSHOT,    /* image.snapshot_at: this node's part of the coherent image */
};

/* A CN's failure as the switch detects it, diktamo.detect_latency after its T_f. */
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

/*
 * Shadow of CXL memory (exact_check.c): every write as it is performed, so
 * the committed image. Kept for the exact checker (tester.exact_check: every
 * load against it) and for the golden-image oracle (diktamo.oracle: the
 * coherent image against it after a failure and at the end).
 */
struct cn_node;
struct mn_node;
struct exact_check {
	struct cxs_line_map shadow; /* line -> struct shadow_line */
	uint32_t cns_here;          /* CNs initialised in this process */
	bool loads, oracle;         /* check loads; compare images */
	struct cn_node **cn;        /* this process's nodes, for the image */
	struct mn_node **mn;
	uint32_t mns_here;
	bool oracle_failed;         /* an image check failed already (report once) */
	bool end_checked;           /* the end-of-run check is done */
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
	cxs_time detect_latency;         /* diktamo.detect_latency: T_f to the switch setting Viral_Status */
	cxs_time snapshot_at;            /* image.snapshot_at (0: none) */
	struct workload wl;
	struct exact_check *exact;       /* NULL unless tester.exact_check */
	struct dk_cluster *dk;           /* NULL unless system.protocol replicates */
};

/*
 * The engine's failure notice, as every memsys node takes it (memsys.c): a
 * failed MN stops the run (outside the papers' failure model); for a failed
 * CN it schedules EV_FAILED at T_f + diktamo.detect_latency — never earlier
 * than now — and sets its bit in *known (the CNs this node knows dead).
 */
void memsys_failure_notice(struct cxs_lp *lp, const struct memsys *M,
			   const struct cxs_failure_notice *f, uint64_t *known);

/* Each part's keys (model.h), listed by the model in memsys.c. */
struct dk_cluster;
extern const struct cxs_key_table memsys_cn_key_table, memsys_mn_key_table,
	memsys_workload_key_table, memsys_exact_key_table;

int cn_configure(const struct cxs_config *cfg, struct memsys *M, char *err, size_t errlen);
int mn_configure(const struct cxs_config *cfg, struct memsys *M, char *err, size_t errlen);
int workload_configure(const struct cxs_config *cfg, struct memsys *M, char *err, size_t errlen);
void workload_release(struct workload *w);
int exact_configure(const struct cxs_config *cfg, struct memsys *M, char *err, size_t errlen);
void exact_release(struct exact_check *x);
/* The initial contents of a memory line (MN, or CN-local in tier mode, tier.h): the
 * workload's shared image, zeros beyond it (workload.c). */
void memsys_initial_line(const struct memsys *M, uint64_t line, uint8_t out[CXS_LINE_BYTES]);
struct cxs_home *mn_home(struct mn_node *mn);
int dk_configure(const struct cxs_config *cfg, struct memsys *M, char *err, size_t errlen);
void dk_release(struct dk_cluster *d);

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
	/*
	 * The watchdog does not judge requests before this time: a DIKTAMO
	 * recovery pauses the CN (CXS_TIME_INF) and its requests to lines under
	 * recovery wait for the MNs' merge, which takes as long as their logs
	 * take to search; after the resume they get a whole deadlock_timeout.
	 */
	cxs_time watch_quiet_until;
	struct cxs_cn *agent;
	uint64_t dead;               /* CNs whose failure the switch has reported */
	uint64_t runtime_failed;     /* ... that the threads' runtime knows of (kthread.h) */
	uint64_t known_dead;         /* ... or the engine's notice has */
	struct cxs_tester *testers;  /* tester mode: one per core */
	struct cxs_kt **kts;         /* kernel mode: a program and a core per core */
	struct cxs_core **ooo;
	struct cxs_dk_sender *dks;   /* DIKTAMO (M->dk): replication of remote stores */
	struct cxs_dk_logger *dkl;   /* ... and the CN's Logging Unit */
	struct cxs_dk_rec_cn *dkr;   /* ... and recovery */
	/* Recovery pauses the cores: what reaches them meanwhile waits here, in order. */
	bool paused;
	struct deferred *deferred;
	size_t ndeferred, cap_deferred;
};

/* Something for a core that arrived while the CN was paused (workload.c). */
struct deferred {
	uint32_t type;      /* EV_CORE_STEP, EV_CORE_DONE, or 0: a replication's REPL_ACKs */
	uint32_t core, id;
	struct cxs_mem_req r;
	uint64_t value;
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
/* Memory operations done and the reference run's count (0: unknown), over the CN's cores. */
void workload_progress(const struct cn_node *cn, uint64_t *done, uint64_t *total);
void workload_invalidated(struct cn_node *cn, cxs_time t, uint32_t core, uint64_t line);
/* Recovery's pause of the cores, and the resume that hands them what waited. */
void workload_pause(struct cn_node *cn);
void workload_resume(struct cn_node *cn, cxs_time now);
/* Keeps d for the resume (the CN is paused). */
void workload_defer(struct cn_node *cn, const struct deferred *d);

/* exact_check.c: every performed access of a CN (cxs_cn_env.perform) */
void exact_perform(struct cn_node *cn, cxs_time t, const struct cxs_mem_req *r, uint64_t value,
		   int is_write);
void exact_cn_init(struct exact_check *x, struct cn_node *cn);
void exact_mn_init(struct exact_check *x, struct mn_node *mn, uint32_t index);
/*
 * The golden-image check (diktamo.oracle): the coherent image of CXL memory —
 * for every word ever written, what a load would return: a live CN's dirty
 * copy, else its MN's memory — against the committed image. `when` names the
 * moment in the messages ("after recovery", "at the end"). A mismatch fails
 * the run (exit 5) naming the words; the images go to the output of the node
 * lp (component image). Needs every node in this process.
 */
void oracle_check(struct cxs_lp *lp, const struct memsys *M, const char *when);
/* Every node's finalize: the first live one runs the end-of-run check (nothing is freed yet). */
void oracle_finalize(struct cxs_lp *lp, const struct memsys *M);

/* image.c: a node's part of the coherent image, in component image_<name> */
void image_cn_part(struct cn_node *cn, const char *name);
void image_mn_part(struct cxs_lp *lp, const struct cxs_home *h, const char *name);

/* dk_node.c: DIKTAMO's components (M->dk != NULL) */
int dk_cn_init(struct cn_node *cn, char *err, size_t errlen);
int dk_cn_replicate(struct cn_node *cn, uint32_t core, cxs_time t, const struct cxs_sb_store *s,
		    uint32_t n, unsigned flags, uint32_t *id, char *err, size_t errlen);
void dk_cn_at_head(struct cn_node *cn, uint32_t core, cxs_time t, uint32_t id);
void dk_cn_performed(struct cn_node *cn, cxs_time t, const struct cxs_mem_req *r, uint64_t stamp,
		     uint64_t word);
bool dk_cn_stuck(struct cn_node *cn, cxs_time now, char *err, size_t errlen);
bool dk_cn_busy(const struct cn_node *cn);
void dk_cn_failed(struct cn_node *cn, uint32_t failed);
struct cxs_dk_keeper *dk_mn_init(struct cxs_lp *lp, struct cxs_nport *port,
				 const struct cxs_dk_rec_mn_env *env, struct cxs_dk_rec_mn **rec,
				 char *err, size_t errlen);
/* Every node's finalize: the process's last one runs the protocol checker. */
void dk_finalize(struct cxs_lp *lp);

#endif /* CXLSIM_MEMSYS_PRIV_H */
