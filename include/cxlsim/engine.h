/*
 * engine.h — the parallel discrete-event core of cxlsim.
 *
 * Time. Simulated time is an unsigned 64-bit count of picoseconds (cxs_time);
 * 2^64 ps is about 213 days. A clock domain of f Hz converts cycles to time as
 * cycles * round(1e12 / f) picoseconds: the period is rounded to the nearest
 * picosecond once, when the domain is created (cxs_period_ps), never per
 * conversion, so that cycle counts and times stay exactly proportional.
 *
 * Logical processes. Every simulated node (a CN, an MN, a PHOLD LP) is one
 * logical process with a node id 0..n-1. Node n lives on rank
 * floor(n * nranks / nnodes) (contiguous blocks), on rank n % nranks with
 * mapping = round_robin, or where cfg.rank_map says (the command line's
 * default, engine.mapping = balanced, is such a map: src/app/rank_map.c);
 * -np 1 runs every node in one process.
 *
 * Events are totally ordered by the key (time, source node, per-source
 * sequence number). The source's sequence number counts every event that node
 * has created, so the key depends only on what the model did, never on which
 * rank holds which node or on message arrival order: the same configuration
 * gives the same event order, bit for bit, at any rank count and mapping.
 * Engine-generated events (the start event, failure notices) use the source
 * CXS_SRC_ENGINE, which sorts after every node at equal time.
 *
 * The model API is a table of callbacks per node type (struct cxs_node_type).
 * A handler may read and write only its own node's state, send a message to
 * another node with a delay of at least the lookahead, and schedule events for
 * itself with any delay >= 0. Model code never calls MPI. Events at or past
 * the run's end time are silently not scheduled (and counted).
 *
 * Payloads. An event carries up to CXS_EVENT_PAYLOAD_MAX bytes inline, in the
 * queue record itself; a larger payload (up to CXS_EVENT_PAYLOAD_BIG_MAX: a
 * log dump, a recovery reply with its lines and values) travels out of line:
 * the engine copies it into a buffer of its own, ships its real bytes in the
 * batch when the destination lives on another rank, and frees it once the
 * event has been handled. Handlers read either kind through cxs_event_data().
 *
 * Failures are exact fail-stops. A node that fails at T_f — killed with its
 * rank (--kill NODE@T, or kill -9 from outside at any wall-clock moment) or
 * failed inside a live process (--fail NODE@T) — has handled every event below
 * T_f and none at or after it; every message it created while handling those
 * events is delivered, and none created later is. For --kill and --fail, T_f is
 * the given time exactly: every rank caps its bound there until the failure is
 * applied. For a kill -9 from outside, the survivors agree on the last window
 * reduction that some of them completed, w (membership.c): the dead rank took
 * part in it, so it had finished window w and its batches of that window were
 * announced and are delivered; whatever it did afterwards (its next window,
 * its batches of that window, perhaps half sent) is dropped everywhere, and T_f
 * is the dead rank's bound for window w — the start of the window it never
 * finished. Survivors may already have handled events past T_f when they learn
 * of it, so the notice reaches them at a time T_n >= T_f (the largest of their
 * bounds), with every dead node's own T_f in it (struct cxs_failure_notice);
 * for --kill and --fail, T_n = T_f. A model that reacts to a failure at
 * T_f + a detection latency, never at T_n, therefore behaves the same in a
 * kill -9 run as in a --fail run of the same node at the same T_f. The one
 * inexact case is a batch announced in the agreed reduction that never
 * arrives (its rank died before MPI delivered it): it is counted
 * (engine/lost_batches) and warned about.
 *
 * Synchronisation, membership after failures and output are described in
 * src/engine/engine.c, src/engine/membership.c and src/engine/reduce.c.
 */
#ifndef CXLSIM_ENGINE_H
#define CXLSIM_ENGINE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cxlsim/stats.h"

typedef uint64_t cxs_time; /* picoseconds */

#define CXS_TIME_INF UINT64_MAX
#define CXS_PS_PER_NS UINT64_C(1000)
#define CXS_PS_PER_US UINT64_C(1000000)
#define CXS_PS_PER_MS UINT64_C(1000000000)
#define CXS_PS_PER_S UINT64_C(1000000000000)

/*
 * Largest payload carried inline in an event record, in bytes: a 16-byte
 * message envelope and a 96-byte body (a coherence message with its line, an
 * AXLE record). Queue records are fixed-size; larger payloads go out of line.
 */
#define CXS_EVENT_PAYLOAD_MAX 112
/* Largest payload of one event at all (out of line): 64 MiB. */
#define CXS_EVENT_PAYLOAD_BIG_MAX (UINT32_C(64) << 20)

#define CXS_SRC_ENGINE UINT32_MAX

/* Cycle period of a clock of hz, rounded to the nearest picosecond. */
static inline cxs_time cxs_period_ps(uint64_t hz)
{
	return (CXS_PS_PER_S + hz / 2) / hz;
}

struct cxs_lp; /* one simulated node, owned by the engine */

/* An event as a handler sees it. */
struct cxs_event {
	cxs_time time;
	uint64_t seq;   /* per-source sequence number */
	uint32_t src;   /* source node, or CXS_SRC_ENGINE */
	uint32_t dst;
	uint32_t type;  /* model-defined */
	uint32_t size;  /* payload bytes: inline in data up to CXS_EVENT_PAYLOAD_MAX,
			   else data holds a pointer to them (cxs_event_data) */
	unsigned char data[CXS_EVENT_PAYLOAD_MAX];
};

/* The payload of an event, inline or out of line; ev->size bytes. */
static inline const void *cxs_event_data(const struct cxs_event *ev)
{
	if (ev->size <= CXS_EVENT_PAYLOAD_MAX)
		return ev->data;
	const void *p;
	memcpy(&p, ev->data, sizeof p);
	return p;
}

/* What a failure callback is told: the nodes that failed together, each with its T_f. */
struct cxs_failure_notice {
	const uint32_t *nodes;
	const cxs_time *times; /* times[i]: the fail-stop time of nodes[i] (<= now) */
	size_t n;
};

typedef int cxs_init_fn(struct cxs_lp *lp, void *state);
typedef void cxs_event_fn(struct cxs_lp *lp, void *state, const struct cxs_event *ev);
/*
 * Called on every surviving node once per agreed failure, at the notice time
 * T_n (cxs_now), which is at or after every dead node's own T_f (engine.h,
 * "Failures are exact fail-stops").
 */
typedef void cxs_failure_fn(struct cxs_lp *lp, void *state, const struct cxs_failure_notice *f);
/* Optional: a digest of the node's state, folded into the run checksum. */
typedef uint64_t cxs_snapshot_fn(struct cxs_lp *lp, const void *state);
typedef void cxs_finalize_fn(struct cxs_lp *lp, void *state);
/*
 * Optional: how much of the node's work is done, in units of the model's
 * choosing (a CN: memory operations against the reference run's count), for
 * the progress line; *total 0 when the node cannot tell. Reads state only.
 */
typedef void cxs_progress_fn(const struct cxs_lp *lp, const void *state, uint64_t *done,
			     uint64_t *total);

struct cxs_node_type {
	const char *name;
	size_t state_size;
	cxs_init_fn *init;
	cxs_event_fn *event;
	cxs_failure_fn *failure;
	cxs_snapshot_fn *snapshot;
	cxs_finalize_fn *finalize;
	cxs_progress_fn *progress;
};

/* Which node type each node id has; ctx is the caller's. */
typedef const struct cxs_node_type *cxs_type_of_fn(uint32_t node, void *ctx);

enum cxs_mapping { CXS_MAP_BLOCK = 0, CXS_MAP_ROUND_ROBIN = 1 };

/*
 * How ranks synchronise (engine.c, async.c): windows of one lookahead with a
 * reduction each, or asynchronous stretches on per-peer clocks between
 * reductions, which gains where the ranks' work is uneven inside windows
 * but does not survive a rank killed from outside (kill -9) inside one.
 * The results are the same with both.
 */
enum cxs_sync { CXS_SYNC_WINDOWS = 0, CXS_SYNC_ASYNC = 1 };

/* An injected failure: the rank hosting node kills itself (--kill), or node alone fails-stop (--fail). */
struct cxs_kill {
	uint32_t node;
	cxs_time time;
	bool fail_only; /* --fail: the node stops, its process lives on */
};

#define CXS_MAX_KILLS 16

struct cxs_engine_config {
	uint32_t nnodes;
	cxs_time lookahead;     /* minimum delay of cxs_send, > 0 */
	cxs_time end_time;      /* events at or past it are not scheduled */
	uint64_t seed;
	enum cxs_mapping mapping;
	enum cxs_sync sync;
	const uint32_t *rank_map; /* if not NULL: the rank of each node (overrides mapping) */
	double failure_timeout_s; /* wall-clock silence that makes a rank suspect */
	double progress_interval_s;
	bool quiet;
	size_t nkills;
	struct cxs_kill kills[CXS_MAX_KILLS];
	cxs_type_of_fn *type_of;
	void *type_ctx;          /* the model's instance: cxs_lp_ctx() in every node */
	const char *model;       /* recorded in the output */
	/* Time series: every sample_interval of simulated time (0: off), the
	 * counters that `sample` selects (cxs_stats_patterns_check); engine.c,
	 * "Time series". Sampling creates no event and changes no checksum. */
	cxs_time sample_interval;
	const char *sample;
	/*
	 * If not NULL: a signal number that a handler sets (SIGINT, SIGTERM) on
	 * any rank; every rank then stops after the same window, the results are
	 * written marked "interrupted", and the run's status is 128 + signal.
	 */
	const volatile sig_atomic_t *interrupt;
};

/* What a run reports back to the caller (valid on every surviving rank). */
struct cxs_run_result {
	int status;               /* 0 ok; otherwise the model/engine error code */
	bool writer;              /* this rank holds the gathered output */
	uint64_t checksum;        /* over all nodes' event digests and counters */
	uint64_t committed;       /* events processed by all nodes */
	double loop_wall_s;       /* wall time of the event loop on this rank */
	cxs_time final_time;       /* time of the last event handled (writer) */
	size_t nfailures;
	int interrupted;          /* the signal that stopped the run, or 0 */
};

struct cxs_engine;
struct cxs_run_record;

/* Collective over MPI_COMM_WORLD (the only MPI collective the engine makes). */
struct cxs_engine *cxs_engine_new(const struct cxs_engine_config *cfg, char *err,
				  size_t errlen);
void cxs_engine_free(struct cxs_engine *eng);

/*
 * Called once, on the rank that gathered every survivor's results (the lowest
 * alive rank), with the run's record filled by the engine (nodes, counters,
 * engine figures, failures, checksum, status). The caller adds what it owns
 * (version, command line, configuration text) and writes the file. Returns 0
 * or -1 with a one-line message in err. If the writer dies before it is done,
 * the survivors elect another and call it there.
 */
typedef int cxs_output_fn(struct cxs_run_record *rec, void *ctx, char *err, size_t errlen);

/*
 * Runs to the end time (or until a model reports an error), then gathers the
 * results and calls `out` on the writer rank. Returns the run's exit status
 * (0 when complete, also with failures survived).
 */
int cxs_engine_run(struct cxs_engine *eng, struct cxs_run_result *res, cxs_output_fn *out,
		   void *ctx);

/* ---- model API -------------------------------------------------------- */

cxs_time cxs_now(const struct cxs_lp *lp);
uint32_t cxs_lp_id(const struct cxs_lp *lp);
uint32_t cxs_lp_count(const struct cxs_lp *lp);
cxs_time cxs_lookahead(const struct cxs_lp *lp);
cxs_time cxs_end_time(const struct cxs_lp *lp);
/*
 * The signal that stopped the run early (SIGINT, SIGTERM; agreed by every
 * rank), or 0. In finalize: checks that the run reached its end (every core
 * finished, the final image, end-of-run protocol checks) do not apply to an
 * interrupted run, whose status says how far it got.
 */
int cxs_run_interrupted(const struct cxs_lp *lp);
struct cxs_stats *cxs_lp_stats(struct cxs_lp *lp);
/* The model instance the run was configured with (cxs_engine_config.type_ctx). */
void *cxs_lp_ctx(const struct cxs_lp *lp);
/* Whether node is alive as this node knows it now (failures are learnt at T_n). */
bool cxs_node_alive(const struct cxs_lp *lp, uint32_t node);

/*
 * Sends an event to node dst at now + delay. Precondition: delay >= lookahead
 * and dst != this node (use cxs_schedule for self events); violating it is a
 * model bug and stops the run with the node, time and caller's file:line.
 * Sends to a dead node are dropped and counted. size may be up to
 * CXS_EVENT_PAYLOAD_BIG_MAX (out of line beyond CXS_EVENT_PAYLOAD_MAX).
 */
void cxs_send_at(struct cxs_lp *lp, uint32_t dst, cxs_time delay, uint32_t type,
		 const void *data, uint32_t size, const char *file, int line);
#define cxs_send(lp, dst, delay, type, data, size)                                    \
	cxs_send_at((lp), (dst), (delay), (type), (data), (size), __FILE__, __LINE__)

/* Schedules an event for this node at now + delay (delay >= 0). */
void cxs_schedule(struct cxs_lp *lp, cxs_time delay, uint32_t type, const void *data,
		  uint32_t size);

/* Per-node deterministic random stream, seeded from (run seed, node id). */
uint64_t cxs_rand_u64(struct cxs_lp *lp);
double cxs_rand_unif(struct cxs_lp *lp);      /* [0, 1) */
double cxs_rand_exp(struct cxs_lp *lp, double mean);

/*
 * A model-detected error the user caused (a corrupt trace, say): stops the run
 * on every rank at the end of the current window with status `code` and the
 * message in the output; the run is recorded as failed, not complete.
 */
void cxs_lp_fail(struct cxs_lp *lp, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A bug: prints rank, simulated time and file:line, then aborts every rank. */
_Noreturn void cxs_bug_at(const struct cxs_lp *lp, const char *file, int line, const char *fmt,
			  ...) __attribute__((format(printf, 4, 5)));
#define cxs_bug(lp, ...) cxs_bug_at((lp), __FILE__, __LINE__, __VA_ARGS__)

/* Logging: "[rank R t=TIME] message" on stderr, when level <= the log level. */
enum cxs_log_level { CXS_LOG_ERROR = 0, CXS_LOG_WARN = 1, CXS_LOG_INFO = 2, CXS_LOG_DEBUG = 3 };
extern int cxs_log_level;
void cxs_log_at(enum cxs_log_level lvl, cxs_time t, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define cxs_log(lvl, t, ...)                                                           \
	do {                                                                           \
		if ((int)(lvl) <= cxs_log_level)                                       \
			cxs_log_at((lvl), (t), __VA_ARGS__);                           \
	} while (0)

#endif /* CXLSIM_ENGINE_H */
