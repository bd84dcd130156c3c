/*
 * engine_priv.h — state shared by the engine's files:
 *
 *   engine.c      window loop, model API, batches, kills, failures
 *   async.c       asynchronous stretches between reductions (engine.sync = async)
 *   reduce.c      the per-window reduction over the live ranks (point to point)
 *   reduce_shm.c  the same through the doorbell's segment when all ranks share a host
 *   recv_set.c    receiving one message from each of several sources
 *   output.c      gathering the results on the writer at the end
 *   comm.c        waiting: polling with back-off, timeouts, pings, control service
 *   doorbell.c    sleeping in a wait until a peer on this host sends (futex)
 *   membership.c  agreement on the dead set after a silence (leader + two phases)
 *   progress.c    the progress line
 *
 * Only these files call MPI. Tags (MPI_TAG_UB >= 2^30 is checked at start):
 *
 *   bits 27..29  kind: 1 batch, 2 reduce, 3 control, 4 gather, 5 done, 6 stretch
 *   bits 16..26  membership epoch (reduce only; mod 2048)
 *   bits  0..15  window number (mod 65536; a stretch has the number of its window)
 *
 * Windows of adjacent numbers are the only ones ever in flight at once, and a
 * new epoch gives every reduction a fresh tag, so stale messages of a dead
 * rank or an abandoned reduction can never match a live receive.
 */
#ifndef CXLSIM_ENGINE_PRIV_H
#define CXLSIM_ENGINE_PRIV_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cxlsim/engine.h"
#include "event_queue_priv.h"

#define TAG_KIND_SHIFT 27
#define TAG_BATCH (1 << TAG_KIND_SHIFT)
#define TAG_REDUCE (2 << TAG_KIND_SHIFT)
#define TAG_CTL (3 << TAG_KIND_SHIFT)
#define TAG_GATHER (4 << TAG_KIND_SHIFT)
#define TAG_DONE (5 << TAG_KIND_SHIFT)

static inline int tag_batch(uint64_t w)
{
	return TAG_BATCH | (int)(w & 0xffff);
}
static inline int tag_reduce(uint32_t epoch, uint64_t w)
{
	return TAG_REDUCE | (int)((epoch & 0x7ff) << 16) | (int)(w & 0xffff);
}

/* Exit status of a rank that learns the survivors excluded it. */
#define CXS_EXIT_EXCLUDED 75

/*
 * The per-window reduction vector: four sections, each combined with its own
 * operator. With N world ranks and B = ceil(N/64):
 *
 *   MIN  [0, N)        heap minimum of rank r (only r writes its slot)
 *        [N, 2N)       earliest message sent to rank r in this window
 *   OR   [2N, 2N+N*B)  bit s of row d: rank s sent a batch to rank d
 *   MAX  abort code, interrupting signal, the window's events and busy time,
 *        the critical path so far (a MAX so that a rank that sat windows out
 *        learns the sum from the others, reduce_shm.c "Parking")
 *   SUM  committed events, remote messages, work done and its total (progress)
 */
enum {
	RED_MAX_ABORT = 0,
	RED_MAX_INTERRUPT = 1,
	RED_MAX_WIN_EVENTS = 2,  /* events handled in the window just ended */
	RED_MAX_WIN_BUSY_NS = 3, /* wall time it took to handle them */
	RED_MAX_CRIT_EVENTS = 4,  /* critical path before this window (engine_figures) */
	RED_MAX_CRIT_BUSY_NS = 5,
	RED_MAX_STRETCH_NS = 6,   /* wall time of the stretch just ended (async.c) */
	RED_NMAX = 7,
};
enum {
	RED_SUM_COMMITTED = 0,
	RED_SUM_REMOTE = 1,
	RED_SUM_WORK_DONE = 2,  /* the nodes' progress (cxs_progress_fn), summed */
	RED_SUM_WORK_TOTAL = 3,
	RED_NSUM = 4,
};

struct red_layout {
	uint32_t nranks;
	uint32_t bitmap_words; /* B */
	size_t nmin, nor, nmax, nsum, total;
};

void red_layout_init(struct red_layout *l, uint32_t nranks);
void red_identity(const struct red_layout *l, uint64_t *v);
void red_combine(const struct red_layout *l, uint64_t *acc, const uint64_t *in);

static inline uint64_t *red_heapmin(const struct red_layout *l, uint64_t *v)
{
	(void)l;
	return v;
}
static inline uint64_t *red_sentmin(const struct red_layout *l, uint64_t *v)
{
	return v + l->nranks;
}
static inline uint64_t *red_bitmap_row(const struct red_layout *l, uint64_t *v, uint32_t dst)
{
	return v + l->nmin + (size_t)dst * l->bitmap_words;
}
static inline uint64_t *red_max(const struct red_layout *l, uint64_t *v)
{
	return v + l->nmin + l->nor;
}
static inline uint64_t *red_sum(const struct red_layout *l, uint64_t *v)
{
	return v + l->nmin + l->nor + l->nmax;
}

/*
 * The recursive-doubling schedule over `n` live ranks for the member at index
 * `i`: returns the number of steps and fills steps[] (at most 2 + log2 n).
 * Members past the largest power of two p fold into i - p first and get the
 * result back last; the rest exchange with i XOR 2^k.
 */
enum red_step_kind { RED_SEND_ONLY, RED_RECV_COMBINE, RED_EXCHANGE, RED_SEND_RESULT, RED_RECV_RESULT };
struct red_step {
	enum red_step_kind kind;
	uint32_t peer; /* index into the live list */
};
#define RED_MAX_STEPS 40
int red_schedule(uint32_t n, uint32_t i, struct red_step *steps);


/* ---- waiting -------------------------------------------------------- */

enum wait_result { WAIT_OK = 0, WAIT_CHANGED = 1 };

struct cxs_engine;
struct recv_set;

/*
 * Waits for every request; the ranks in `awaited` are the ones whose silence
 * would explain a hang (pinged after the timeout). Returns WAIT_CHANGED when a
 * membership decision was applied meanwhile, or at once if a rank in
 * `awaited` is already known dead; the caller must then re-examine
 * what it was waiting for (requests not completed are still pending).
 */
enum wait_result comm_wait(struct cxs_engine *e, MPI_Request *reqs, int nreqs,
			   const int *awaited, int nawaited);
/* The same with a custom poll: poll(ctx, arg) returns how much is still pending (0: done). */
typedef int comm_poll_fn(void *ctx, int arg);
enum wait_result comm_wait_poll(struct cxs_engine *e, comm_poll_fn *poll, void *ctx, int arg,
				const int *awaited, int nawaited);
/*
 * How long a wait goes before it first asks, and then how often, whether a
 * rank it waits on has ended (door_ended: a /proc read, so not every poll).
 */
#define ENDED_CHECK_S 0.02
/* The first of the n ranks, alive in e->alive, whose process on this host has ended; -1 if none. */
int comm_first_ended(const struct cxs_engine *e, const int *ranks, int n);
/* Runs window e->w's reduction over the live ranks: e->contrib -> e->result. */
enum wait_result reduce_run(struct cxs_engine *e);

/* ---- the reduction in shared memory (reduce_shm.c) ------------------------ */

struct rshm;
/* Bytes of the region reduce_shm needs in the doorbell segment (0: not used at this size). */
size_t rshm_bytes(const struct red_layout *l);
/* After reduction 0: the shared reduction if every rank is on this host, else NULL. */
struct rshm *rshm_attach(struct cxs_engine *e);
void rshm_free(struct rshm *s);
/* reduce_run's path when e->rshm is set. */
enum wait_result rshm_run(struct cxs_engine *e);
/* Whether rank r takes part in the reduction after result res (engine.c; reduce_shm.c "Parking"). */
bool engine_takes_part(const struct cxs_engine *e, const uint64_t *res, int r);
/* Whether rank r takes part in the reduction now being run (e->part, or all after a decision). */
bool engine_in_part(const struct cxs_engine *e, int r);
/* Rings every parked rank that takes part in the reduction after result res. */
void engine_wake_needed(struct cxs_engine *e, const uint64_t *res);

/* Services control messages without waiting; WAIT_CHANGED as above. */
enum wait_result comm_service(struct cxs_engine *e);
double comm_now(void);

/* Services control messages at most every SERVICE_INTERVAL_S (long phases). */
#define SERVICE_INTERVAL_S 0.01
void comm_service_now_and_then(struct cxs_engine *e);
void comm_service_tick(void *ctx); /* the same, as an h5out tick callback */

/* ---- doorbells (doorbell.c) ------------------------------------------------ */

struct doorbell;
/* The job's segment on this host, or NULL (np 1, no launcher, shm refused);
 * `extra` bytes after the slots, zeroed, for door_extra. */
struct doorbell *door_open(int rank, int nranks, size_t extra);
/* The extra region (64-byte aligned), or NULL if none. */
void *door_extra(const struct doorbell *d);
void door_unlink(struct doorbell *d);
void door_close(struct doorbell *d);
/* Whether `rank` is on this host (has opened the segment). False for NULL. */
bool door_local(const struct doorbell *d, int rank);
/* More ranks of the job on this host than processors this rank may use. */
bool door_oversubscribed(const struct doorbell *d);
/* Whether rank (on this host) has died: its process gone or a zombie (doorbell.c). */
bool door_ended(const struct doorbell *d, int rank);
/* At least per_cpu ranks of this host per processor (the same answer on every rank). */
bool door_crowded(const struct doorbell *d, int per_cpu);
/* After a send to `rank`: wakes it if it sleeps. Any d (NULL: nothing). */
void door_ring(struct doorbell *d, int rank);
/* The value to pass to door_sleep: read it before the last poll. */
uint32_t door_arm(struct doorbell *d);
/* Sleeps until a ring after door_arm, or a bound; false if the bound ended it. */
bool door_sleep(struct doorbell *d, uint32_t armed);
/* The same with a bound of ns nanoseconds (a parked rank, reduce_shm.c). */
bool door_sleep_ns(struct doorbell *d, uint32_t armed, long ns);

/* A bell many ranks of a host sleep on (shared memory); zeroed is idle. */
struct door_bell {
	_Atomic uint32_t seq;
	_Atomic uint32_t sleepers;
};
uint32_t bell_arm(struct door_bell *b);
/* As door_sleep, on the shared bell. */
bool bell_sleep(struct door_bell *b, uint32_t armed);
/* Wakes every rank asleep on the bell (one system call, none if nobody sleeps). */
void bell_ring_all(struct door_bell *b);

/* ---- receiving from several sources (recv_set.c) ------------------------- */

struct recv_set {
	int n, cap;
	int *src;
	int *state; /* 0 waiting for probe, 1 receiving, 2 done, 3 given up */
	MPI_Request *req;
	unsigned char **buf;
	size_t *bufcap;
	int *len;
	bool *busy;  /* while waiting: set when a message is received in part (doorbell.c) */
};

struct recv_set *recv_set_new(int cap);
void recv_set_free(struct recv_set *s);
void recv_set_add(struct recv_set *s, int src);
/* Waits for the set; returns how many sources died and were given up. */
int recv_set_wait(struct cxs_engine *e, struct recv_set *s, int tag);

/* ---- membership ----------------------------------------------------- */

struct decision {
	uint64_t round;
	uint32_t leader;
	uint64_t w_star;       /* highest window whose reduction some survivor completed, +1 */
	bool has_result;
	uint64_t *dead_bits;   /* world ranks, B words */
	uint64_t *result;      /* reduction vector of window w_star - 1 */
	uint64_t *prev_result; /* of window w_star - 2 (a dead rank's last bound; a parked rank lacks it) */
};

/* Runs the agreement; returns when a decision has been applied. */
void membership_agree(struct cxs_engine *e, const char *why, int suspect);
/* Handles one control message; may enter the agreement. */
enum wait_result membership_on_ctl(struct cxs_engine *e, const void *msg, int len, int src);

/* ---- engine state ---------------------------------------------------- */

/*
 * What every event touches comes first, 64 bytes together: handle() reads
 * and writes these, a send the sequence number. The engine's own per-node
 * counters (events = committed, sent, scheduled) are counted here and copied
 * into the node's statistics only when those are read (engine_publish_counters:
 * a sample, the output): a counter in the statistics is a separate allocation
 * per node, two more cache lines per event. PHOLD 1024 LPs, np = 1: loop
 * 0.986x in 9 alternating runs (issue 12).
 */
struct cxs_lp {
	struct cxs_engine *eng;
	const struct cxs_node_type *type;
	void *state;
	uint64_t seq;        /* next per-source sequence number */
	uint64_t digest;     /* hash chain over handled events */
	uint64_t committed;  /* events handled: the statistic engine/events */
	cxs_time next_sample; /* next time-series boundary; CXS_TIME_INF when off */
	uint32_t id;
	uint64_t rng[4];     /* xoshiro256** */
	uint64_t sent, scheduled; /* engine/sent, engine/scheduled */
	struct cxs_stats *stats;
	uint64_t *c_events, *c_sent, *c_scheduled, *c_dropped_dead, *c_dropped_end;
};

/* Copies the counters kept in the cxs_lp into its statistics (before they are read). */
void engine_publish_counters(struct cxs_lp *lp);

struct batch_buf {
	unsigned char *data;
	size_t len, cap;
	uint32_t nevents;
};

/* Wire record of one event in a batch (batch.c); the payload follows, padded to 8. */
struct wire_ev {
	uint64_t time;
	uint64_t seq;
	uint32_t src;
	uint32_t dst;
	uint32_t type;
	uint32_t size;
};

/* Appends one record with its payload's bytes (size of them, inline or not). */
void batch_append(struct batch_buf *b, const struct wire_ev *w, const void *data);
/* Appends n raw bytes (async.c's trailer after the records). */
void batch_append_bytes(struct batch_buf *b, const void *p, size_t n);
/*
 * Decodes the record at *off of a batch of len bytes: 1 with *w and *payload
 * set and *off advanced, 0 at the end, -1 if the batch is truncated or a size
 * is out of range.
 */
int batch_next(const unsigned char *p, size_t len, size_t *off, struct wire_ev *w,
	       const unsigned char **payload);
/* payload.c: puts size bytes into the event (inline or out of line); frees an out-of-line one. */
void engine_store_payload(struct cxs_event *ev, const void *data, uint32_t size);
void engine_drop_payload(struct cxs_event *ev);

struct engine_figures {
	uint64_t events, windows, remote_msgs, batches_sent, agreements;
	uint64_t lost_batches;
	uint64_t door_sleeps, door_timeouts; /* waits that slept; of those, ended by the bound */
	uint64_t parked_windows, parks; /* reductions this rank stood out of; times it parked */
	uint64_t stretches, clock_msgs; /* asynchronous stretches, and messages sent in them */
	/* Over all windows, the largest rank's events and busy time (the critical path of work). */
	uint64_t crit_events;
	uint64_t crit_busy_ns;
	uint64_t win_events0;   /* fig.events when the window began */
	double win_busy0_s;     /* busy_wall_s when the window began */
	double loop_wall_s, sync_wall_s, idle_wall_s, busy_wall_s, agreement_wall_s;
};

/*
 * The nodes that one agreement (or one --fail) found dead: each with its own
 * fail-stop time, and the notice time at which the survivors learn of it.
 */
struct fail_batch {
	cxs_time time;      /* T_n */
	uint32_t *nodes;
	cxs_time *times;    /* T_f per node */
	size_t n;
};

struct failure_rec {
	uint32_t node, rank, epoch;
	cxs_time time;
	double detected_wall_s;
	const char *cause;
};

struct cxs_engine {
	struct cxs_engine_config cfg;
	int rank, nranks;
	uint32_t nlocal;
	uint32_t *local_ids;       /* node ids hosted here, ascending */
	struct cxs_lp *lps;        /* indexed by local index */
	uint32_t *node_rank;       /* node -> rank */
	uint32_t *node_local;      /* node -> local index on its rank */
	uint8_t *node_alive;

	struct cxs_event_queue eq;
	struct cxs_lp *cur;        /* node whose event is being handled */
	cxs_time now;

	/* windows */
	uint64_t w;                /* current window number */
	cxs_time bound;            /* events below it may be handled now */
	struct red_layout rl;
	uint64_t *contrib, *result, *tmp, *sendbuf;
	uint64_t *done_result;      /* result of reduction w_red - 1 */
	uint64_t *prev_result;      /* result of reduction w_red - 2 (a dead rank's last bound) */
	uint64_t w_red;            /* windows whose reduction completed here (count) */
	struct batch_buf *out;     /* per destination rank */
	MPI_Request *out_reqs;
	int *out_dst;
	int nout_reqs;
	struct recv_set *rs;       /* batch and gather receives (engine.c) */
	cxs_time gmin;             /* global minimum after the last reduction */
	int abort_code;
	char abort_msg[256];
	int interrupted;           /* the signal that stopped the run (agreed), or 0 */

	/* membership */
	uint8_t *alive;            /* world ranks */
	int *live;
	int nlive;
	uint32_t epoch;
	uint64_t round_seen;
	bool in_agreement;
	struct decision last;      /* last applied decision */
	double *last_heard;        /* wall time of the last message from each rank */
	uint8_t *gone;             /* world ranks that said they were excluded while alive */
	double t_start;
	int kill_pending;          /* index into cfg.kills of the next injected kill, or -1 */
	bool kill_fired;           /* agreed; lift the cap after the next reduction */
	int test_die_after_commits; /* membership.c test hook; 0: off */
	struct fail_batch *failbatches;
	size_t nfailbatches;

	struct failure_rec *failures;
	size_t nfailures, cap_failures;

	struct engine_figures fig;
	double last_progress;
	double last_service;        /* wall time of the last service outside the event loop */
	bool printed_progress;
	uint64_t global_committed;
	uint64_t global_work_done, global_work_total; /* from the last reduction */
	bool has_progress;          /* some local node type has a progress callback */

	/* waiting (comm.c, doorbell.c) */
	struct doorbell *door;     /* NULL: poll with back-off only */
	uint32_t door_armed;       /* door_arm() before the last poll */
	bool door_on;              /* sleeping allowed: inside the window loop */
	bool wait_local;           /* the current wait is on ranks of this host only */
	bool wait_busy;            /* a transfer that rings no bell is in progress */
	bool door_woke;            /* the last back-off slept and was rung */
	MPI_Request *red_sreq;     /* the reduction step's send, while it is waited on */
	struct rshm *rshm;         /* the reduction in shared memory, or NULL (reduce_shm.c) */
	struct door_bell *wait_bell; /* set: the current wait sleeps on this bell, not the doorbell */
	/* parking (reduce_shm.c): who takes part in reduction w, and in the next */
	uint64_t *part, *part_next; /* world ranks, B words */
	bool epoch_fresh;          /* no reduction completed in this epoch yet: everyone takes part */
	int interrupt_fwd;         /* a parked rank's signal, forwarded (CTL_INTERRUPT) */
	struct async_state *as;    /* engine.sync = async with more than one rank, else NULL */
	bool async_died, async_died_logged; /* abort_msg is async_death's; and printed */
};

/* calloc that stops the run when memory runs out (engine.c). */
void *engine_xcalloc(size_t n, size_t sz);

/* Gathers every survivor's results on the writer and writes them (output.c). */
int engine_gather_and_write(struct cxs_engine *e, struct cxs_run_result *res, cxs_output_fn *out,
			    void *ctx);

static inline uint64_t mix64(uint64_t h, uint64_t v)
{
	h ^= v + UINT64_C(0x9e3779b97f4a7c15) + (h << 6) + (h >> 2);
	h *= UINT64_C(0xff51afd7ed558ccd);
	return h ^ (h >> 33);
}

/* ---- asynchronous stretches (async.c) ------------------------------------ */

struct async_state;
struct async_state *async_new(const struct cxs_engine *e);
void async_free(struct async_state *a);
/* After a reduction whose global minimum is gmin: whether a stretch runs next, to *T. */
bool async_plan(struct cxs_engine *e, cxs_time gmin, cxs_time *T);
/* Handles every event below T on per-peer clocks; all its messages have arrived on return. */
void async_stretch(struct cxs_engine *e, cxs_time T);
/* The next stretch's length from the slowest rank's wall time for the last one (same on all). */
void async_adapt(struct cxs_engine *e, uint64_t slowest_ns);
/* This rank's wall time for the stretch just ended (0 if none), for the reduction; resets it. */
uint64_t async_take_wall_ns(struct cxs_engine *e);

/*
 * engine.c, for async.c: the earliest event rank s can send after reduction
 * res; one event handled; one batch queued.
 */
cxs_time engine_first_send(const struct cxs_engine *e, const uint64_t *res, int s);
void engine_handle_next(struct cxs_engine *e);
void engine_unpack_batch(struct cxs_engine *e, const unsigned char *p, size_t len, int src);

/* Applies e->last (just agreed) to the engine: live list, epoch, failures. */
void engine_on_decision(struct cxs_engine *e);
void progress_update(struct cxs_engine *e, bool final);

#endif /* CXLSIM_ENGINE_PRIV_H */
