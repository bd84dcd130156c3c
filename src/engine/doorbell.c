/*
 * doorbell.c — a waiting rank sleeps in the kernel until a message for it is
 * sent, instead of polling with a sleep back-off.
 *
 * Why. Open MPI's shared-memory transport (vader) has no blocking receive:
 * a rank that waits must poll. The engine used to poll with a back-off of
 * spin, sched_yield, then nanosleep doubling from 10 us to 1 ms. With one
 * rank per node (34 ranks on 2 cores, the everyday case) nearly every rank
 * waits in every window, and a rank that had backed off to 1 ms slept long
 * after its message came: the 16x4 ocean_cp run at np = 32 handled 8.2e4
 * events/s against 1.23e6 at np = 1 (issue 12). A rank that only yields
 * instead burns the cores its 33 peers need. What is wanted is a blocking
 * wait that any sender can end.
 *
 * How. The ranks of a job on one host share a small POSIX shared-memory
 * segment with one 64-byte slot per world rank:
 *
 *     slot r:  | seq (u32) | sleeping (u32) | pid (i32) | padding to 64 bytes |
 *
 * A rank writes its pid into its slot when it opens the segment: a rank
 * whose slot holds a pid is on this host. Every engine send to such a rank
 * (batches, reductions, control messages) is followed by door_ring: seq is
 * incremented and, if the rank said it sleeps, a futex wake on seq. A waiter
 * reads seq (door_arm) before it polls MPI once more, and sleeps with
 * futex_wait(seq, value read) only if nothing is complete: a ring after the
 * read changes seq and the wait returns at once, so no wake-up is lost
 * (sleeping is set before the kernel call and both sides use sequentially
 * consistent atomics, the usual futex pairing). The sleep has a bound
 * (DOOR_MAX_SLEEP_NS) for what rings no bell: a peer on another host, a
 * killed peer, the later fragments of a message above the eager limit.
 *
 * When a rank may sleep (comm.c decides, from door_may_sleep): every rank it
 * waits for is on this host, and none of its own sends is still in
 * progress — a send larger than the eager limit moves only while its sender
 * polls, so a sender asleep would stall its receiver, which would stall it.
 * Otherwise it polls with the old back-off.
 *
 * The segment may carry a further region after the slots (door_open's
 * `extra` bytes, zero-filled by ftruncate): reduce_shm.c keeps the window
 * reduction there when every rank of the job is on this host.
 *
 * The segment is named by user, job (PMIX_NAMESPACE) and parent process (the
 * local mpirun or orted), so concurrent jobs never share one, and it is
 * unlinked after the first reduction (every rank has opened it by then: all
 * took part); the mappings live on until the ranks exit. A job without a
 * launcher's namespace, or where shm_open fails, runs without doorbells:
 * slower when ranks outnumber cores, otherwise the same.
 *
 * A shared bell (struct door_bell, bell_*) is the same pairing for many
 * waiters on one word: each counts itself in `sleepers` before it reads seq
 * and sleeps, the ringer increments seq before it reads `sleepers`, and one
 * FUTEX_WAKE wakes them all. reduce_shm.c's waits sleep on one, so that the
 * rank completing a reduction wakes the host's ranks with one system call,
 * and a batch sent to a rank in that wait (rung on its own doorbell) does
 * not wake it for nothing.
 *
 * A parked rank (reduce_shm.c, "Parking") sleeps on its own doorbell with a
 * longer bound (door_sleep_ns): the completer of the result that needs it
 * rings it, and the batches announced to it do not (they would wake it
 * before that result exists).
 *
 * Ended ranks. The pid in a slot also tells a survivor at once that a rank
 * on this host has died (door_ended): its process is gone, or a zombie that
 * nobody reaped yet. A killed rank's slot keeps its pid (only a rank that
 * closes the segment clears it), so the waits of comm.c and membership.c
 * need not sit out the failure timeout twice for a rank they can see is
 * dead; ranks on other hosts, and one that is only stopped or descheduled,
 * are still judged by their silence.
 *
 * Linux only (futex(2)); Debian 12 is the target.
 */
#define _GNU_SOURCE /* syscall */
#include "engine_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * The bound on one sleep. A wait that no bell ends (see above) costs at most
 * this per poll; 2 ms keeps the odd unrung wait far below a window's work
 * at np = 2 while making such wake-ups rare enough to cost nothing at np = 34.
 */
#define DOOR_MAX_SLEEP_NS 2000000L

struct door_slot {
	_Atomic uint32_t seq;
	_Atomic uint32_t sleeping;
	_Atomic int32_t pid;
	char pad[64 - 3 * sizeof(uint32_t)];
};
_Static_assert(sizeof(struct door_slot) == 64, "one doorbell slot per cache line");

struct doorbell {
	struct door_slot *slot;
	size_t bytes, extra;
	int nranks, rank;
	char name[96];
	bool unlinked;
	int ncpus, local_ranks;
};

static long futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, (uint32_t *)addr, op, val, ts, NULL, 0);
}

struct doorbell *door_open(int rank, int nranks, size_t extra)
{
	const char *ns = getenv("PMIX_NAMESPACE");
	if (nranks < 2 || ns == NULL || ns[0] == '\0' || strlen(ns) > 40)
		return NULL;
	struct doorbell *d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	d->rank = rank;
	d->nranks = nranks;
	d->extra = extra;
	d->bytes = (size_t)nranks * sizeof(struct door_slot) + extra;
	snprintf(d->name, sizeof d->name, "/cxlsim-door-%u-%s-%ld", (unsigned)getuid(), ns,
		 (long)getppid());
	for (char *p = d->name + 1; *p; p++)
		if (*p == '/')
			*p = '_';
	int fd = shm_open(d->name, O_RDWR | O_CREAT, 0600);
	if (fd < 0)
		goto fail;
	struct stat st;
	/* Every rank sets the same size; a larger one (none expected) is kept. */
	if (fstat(fd, &st) != 0 || ((size_t)st.st_size < d->bytes && ftruncate(fd, (off_t)d->bytes) != 0)) {
		close(fd);
		goto fail;
	}
	void *m = mmap(NULL, d->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		goto fail;
	d->slot = m;
	atomic_store(&d->slot[rank].pid, (int32_t)getpid());
	/* The host's processors, not this rank's affinity: mpirun binds each of a
	 * few ranks to one core, and those ranks are not oversubscribed. */
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	d->ncpus = ncpu > 0 ? (int)ncpu : 1;
	const char *ls = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
	d->local_ranks = ls ? atoi(ls) : nranks;
	return d;
fail:
	free(d);
	return NULL;
}

void door_unlink(struct doorbell *d)
{
	if (d && !d->unlinked) {
		shm_unlink(d->name); /* ENOENT when a peer was first: fine */
		d->unlinked = true;
	}
}

void door_close(struct doorbell *d)
{
	if (!d)
		return;
	door_unlink(d);
	atomic_store(&d->slot[d->rank].pid, 0);
	munmap(d->slot, d->bytes);
	free(d);
}

void *door_extra(const struct doorbell *d)
{
	return d && d->extra ? (void *)(d->slot + d->nranks) : NULL;
}

bool door_local(const struct doorbell *d, int rank)
{
	return d && rank >= 0 && rank < d->nranks && atomic_load(&d->slot[rank].pid) != 0;
}

bool door_ended(const struct doorbell *d, int rank)
{
	if (!d || rank < 0 || rank >= d->nranks || rank == d->rank)
		return false;
	pid_t pid = (pid_t)atomic_load(&d->slot[rank].pid);
	if (pid <= 0)
		return false;
	if (kill(pid, 0) != 0)
		return errno == ESRCH;
	/* Still there: a zombie (ended, not yet reaped by its launcher) counts as ended. */
	char path[64], buf[256];
	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *rp = strrchr(buf, ')'); /* the command name may hold spaces and ')' */
	return rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X');
}

bool door_oversubscribed(const struct doorbell *d)
{
	return d && d->local_ranks > d->ncpus;
}

bool door_crowded(const struct doorbell *d, int per_cpu)
{
	return d && d->local_ranks >= per_cpu * d->ncpus;
}

void door_ring(struct doorbell *d, int rank)
{
	if (!d || rank < 0 || rank >= d->nranks || rank == d->rank)
		return;
	struct door_slot *s = &d->slot[rank];
	if (atomic_load_explicit(&s->pid, memory_order_relaxed) == 0)
		return;
	atomic_fetch_add(&s->seq, 1);
	if (atomic_load(&s->sleeping))
		futex(&s->seq, FUTEX_WAKE, INT_MAX, NULL);
}

uint32_t door_arm(struct doorbell *d)
{
	return atomic_load(&d->slot[d->rank].seq);
}

/* Sleeps while *seq == armed, at most ns (< 1 s); false when the bound ended it. */
static bool wait_seq_ns(_Atomic uint32_t *seq, uint32_t armed, long ns)
{
	struct timespec ts = {0, ns};
	long r = 0;
	if (atomic_load(seq) == armed)
		r = futex(seq, FUTEX_WAIT, armed, &ts);
	return !(r != 0 && errno == ETIMEDOUT);
}

static bool wait_seq(_Atomic uint32_t *seq, uint32_t armed)
{
	return wait_seq_ns(seq, armed, DOOR_MAX_SLEEP_NS);
}

bool door_sleep_ns(struct doorbell *d, uint32_t armed, long ns)
{
	struct door_slot *s = &d->slot[d->rank];
	atomic_store(&s->sleeping, 1);
	bool woken = wait_seq_ns(&s->seq, armed, ns);
	atomic_store(&s->sleeping, 0);
	return woken;
}

bool door_sleep(struct doorbell *d, uint32_t armed)
{
	return door_sleep_ns(d, armed, DOOR_MAX_SLEEP_NS);
}

uint32_t bell_arm(struct door_bell *b)
{
	return atomic_load(&b->seq);
}

bool bell_sleep(struct door_bell *b, uint32_t armed)
{
	atomic_fetch_add(&b->sleepers, 1);
	bool woken = wait_seq(&b->seq, armed);
	atomic_fetch_sub(&b->sleepers, 1);
	return woken;
}

void bell_ring_all(struct door_bell *b)
{
	atomic_fetch_add(&b->seq, 1);
	if (atomic_load(&b->sleepers))
		futex(&b->seq, FUTEX_WAKE, INT_MAX, NULL);
}
