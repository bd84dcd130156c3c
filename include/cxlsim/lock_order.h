/*
 * lock_order.h — the order in which a recorded program's threads took each
 * lock: the synchronisation half of a recording beside the page map
 * (cxlsim-trace record writes DIR/locks.order beside DIR/core%u.trace).
 *
 * Why the replay needs it. Each trace keeps its own thread's order, not
 * which thread had a lock first; a replay that lets threads take a lock in
 * any order can invent one the program could not have had and deadlock in
 * it (pigz's main thread joins its workers holding a mutex each worker took
 * and released before it exited: a replay in which main wins the mutex first
 * waits for ever). So every recorded lock carries its turn (trace.h, flag
 * turn: its index among all acquisitions of that lock), and the replay makes
 * a thread's acquisition wait until the lock's previous turns are done.
 * The turn in the record is enough for that; this file says whose each turn
 * is, which the replay needs only after a CN failure: a dead thread's turns
 * never come, and a waiter skips a turn whose owner is dead (kthread.h,
 * cxs_kt_lock_turn), which it can tell only by knowing the owner.
 *
 * The file (little-endian; sizes in bytes)
 * ----------------------------------------
 *    0  u8[8] magic        "CXSLOCKS"
 *    8  u16   version      1
 *   10  u16   header_bytes 32
 *   12  u32   threads      trace threads of the recording
 *   16  u64   locks        lock entries
 *   24  u32   reserved     0
 *   28  u32   header_crc   CRC32 of bytes 0..27
 *   32  locks entries, by address, strictly increasing, each
 *        0  u64  addr      the lock's traced address (8-aligned, as in its records)
 *        8  u64  turns     its acquisitions (>= 1)
 *       16  u64  runs      runs that follow (1..turns)
 *       24  runs x { u32 thread (< threads), u32 count (>= 1) }: turns in order,
 *           run-length coded (count consecutive turns by one thread; the counts
 *           add up to turns)
 *   then u32 CRC32 of every byte after the header; nothing follows.
 * Run-length coding because a thread usually takes a lock many times in a row
 * (one thread of sqlite: a single run per lock), while a turn-by-turn list
 * would cost 4 bytes per acquisition.
 *
 * Errors are one line naming the file, like the page map's. Nothing the
 * reader trusts from the file drives an allocation larger than the file.
 */
#ifndef CXLSIM_LOCK_ORDER_H
#define CXLSIM_LOCK_ORDER_H

#include <stddef.h>
#include <stdint.h>

#define CXS_LOCK_ORDER_MAGIC "CXSLOCKS"
#define CXS_LOCK_ORDER_VERSION 1
#define CXS_LOCK_ORDER_HEADER_BYTES 32
#define CXS_LOCK_ORDER_ENTRY_BYTES 24
#define CXS_LOCK_ORDER_RUN_BYTES 8

struct cxs_lock_run {
	uint64_t first;   /* the run's first turn */
	uint32_t thread;
	uint32_t count;
};

struct cxs_lock_ent {
	uint64_t addr;
	uint64_t turns;
	size_t run0, nruns; /* its runs: runs[run0 .. run0 + nruns) */
};

struct cxs_lock_order {
	struct cxs_lock_ent *e;  /* by address */
	size_t n;
	struct cxs_lock_run *runs;
	size_t nruns;
	uint32_t threads;
};

/* Reads and checks path into o (freed with cxs_lock_order_free). */
int cxs_lock_order_read(const char *path, struct cxs_lock_order *o, char *err, size_t errlen);

/* The entry of the lock at addr, or NULL. */
const struct cxs_lock_ent *cxs_lock_order_find(const struct cxs_lock_order *o, uint64_t addr);

/* The thread whose turn `turn` of lock e is; UINT32_MAX for a turn the recording did not have. */
uint32_t cxs_lock_order_owner(const struct cxs_lock_order *o, const struct cxs_lock_ent *e,
			      uint64_t turn);

void cxs_lock_order_free(struct cxs_lock_order *o);

/*
 * Collecting the order while recording: the recorder gets each thread's
 * records in chunks, so turns of one lock arrive out of order.
 * cxs_lock_acc_add says turn `turn` of lock addr was thread's; a turn given
 * twice is an error (a tool bug). cxs_lock_acc_write checks that every lock's
 * turns are 0 .. turns-1 without a gap and writes the file via path.partial.
 * cxs_lock_acc_free frees it (also after an error).
 */
struct cxs_lock_acc;
struct cxs_lock_acc *cxs_lock_acc_new(void);
int cxs_lock_acc_add(struct cxs_lock_acc *a, uint64_t addr, uint64_t turn, uint32_t thread,
		     char *err, size_t errlen);
int cxs_lock_acc_write(struct cxs_lock_acc *a, const char *path, uint32_t threads,
		       uint64_t *acquisitions, char *err, size_t errlen);
void cxs_lock_acc_free(struct cxs_lock_acc *a);

#endif /* CXLSIM_LOCK_ORDER_H */
