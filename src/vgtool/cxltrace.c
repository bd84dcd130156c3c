/*
 * cxltrace.c — a Valgrind tool that records a multithreaded program as
 * cxlsim traces, one per thread, in the form of DIKTAMO's Pin traces
 * (papers/diktamo.md §VI): every load, store and atomic with its size,
 * address and value and the count of other instructions before it, plus
 * the program's synchronisation, plus what the Pin traces do not have and
 * cxlsim's cores need to get memory-level parallelism right — which earlier
 * load each address (and each stored value) was computed from.
 *
 * It is not run by hand: `cxlsim-trace record -- PROG ARGS` (src/workload/
 * trace_record.c) makes a pipe, runs `valgrind --tool=cxltrace --cxl-fd=N`
 * with VALGRIND_LIB pointing at the build's tool directory, and writes the
 * chunks this tool sends (cxltrace_proto.h) into trace files.
 *
 * What is recorded
 * ----------------
 * Per guest instruction (an IMark) the instrumenter knows whether it touches
 * memory. Instructions that do not are counted into the next record's gap
 * (added in the helper of the next access, or into g_gap before a side exit
 * and at the end of the superblock, so no count is lost when the block is
 * left early). Every load, store, guarded load/store, CAS and memory effect
 * of a dirty helper calls a helper with its address, value, size and the
 * dataflow shadows below; accesses wider than 8 bytes go lane by lane, and
 * an access that is not aligned to its size is split into aligned pieces
 * (largest first, as the lackey converter does), so every record obeys the
 * trace format. x86's locked read-modify-writes arrive from VEX as a load
 * and a CAS of the same address in one instruction: the two make one rmw
 * record; when the CAS's new value is the loaded value plus something (lock
 * add, xadd, inc, dec) it is an fadd record carrying the addend, so that a
 * replay that takes threads in another order still counts right.
 *
 * Dataflow
 * --------
 * Every load and rmw is a producer, numbered per thread (g_nprod). A shadow
 * value per IR temporary and per 8-byte slot of the guest registers (in
 * Valgrind's shadow guest state, offset total_sizeB) holds the number of the
 * latest producer the value was computed from: a load's result gets its own
 * number, an operation the maximum over its operands, a PUT stores its
 * operand's shadow, a GET reads it back. The maximum is the nearest
 * producer, the one an out-of-order core waits for longest. Inside one
 * superblock most of this is static: a temporary that depends on a load of
 * the same superblock depends on the latest such load (known at
 * instrumentation time), and only a value coming in through registers needs
 * a run-time maximum (two IR ops). A record carries the distance back to
 * its producers (trace.h addr_dep, value_dep), up to DEP_HORIZON (4096)
 * producers back: a producer that much older has retired on any core with a
 * load queue of fewer entries (DIKTAMO's has 128), and leaving such stale
 * dependencies out (a stack pointer restored from memory long ago, say)
 * keeps the records compressible. A store whose value is a
 * load of the same superblock plus or minus constants (counter++) is
 * flagged `add`. Dependencies through memory (a value stored and loaded
 * back) are the core's store-to-load forwarding, not the tool's business;
 * dependencies through the instruction pointer and the x87 register stack
 * (GETI/PUTI) are not tracked.
 *
 * Synchronisation
 * ---------------
 * The preload library (cxltrace_preload.c) wraps pthread mutexes, spin
 * locks, rwlocks, barriers, condition variables, create and join, and tells
 * the tool through client requests (include/cxlsim/cxltrace.h). Inside a
 * wrapped call nothing is recorded and its instructions are not counted:
 * the library's lock-word CAS and futex bookkeeping are implementation, and
 * the replay puts its own lock in their place. A mutex gives lock/unlock
 * records on its address, only for its outermost acquisition (a recursive
 * mutex taken again is no hand-over), each lock with its turn in the lock's
 * global order of acquisitions ("Locks" below); a barrier wait a barrier record with the count
 * from its init; a condition wait an unlock and, on return, a lock of its
 * mutex (a release and an acquire point); pthread_create a post of the new
 * thread's start word, which the new thread waits for first; a thread's
 * exit a post of its exit word, which pthread_join waits for. Plain atomics
 * and fences (mfence, lock-prefixed instructions) are recorded as they
 * execute.
 *
 * Placement
 * ---------
 * Each record says where its address is: a thread's stack, the client heap
 * (brk) or an anonymous mapping (heap), a writable file mapping or a bss
 * (global), anything else (other). Pages are classified on first touch and
 * cached (a direct-mapped cache of 64 Ki pages, flushed for unmapped
 * ranges). Which pages are shared is decided by the recorder, which sees
 * every thread's records.
 *
 * Region of interest
 * ------------------
 * By default recording starts at the first pthread_create (the paper skips
 * to the parallel section); --roi=start records from the first instruction,
 * --roi-start=FUNC from the first entry of FUNC, and CXLTRACE_ROI_BEGIN()
 * in the program from there. Threads alive when it starts are numbered
 * from 0 (the one that starts it first), later ones in order of creation.
 *
 * Threads. Valgrind runs one thread at a time; the running thread's hot
 * state (gap, producer count, whether it records) lives in globals that
 * generated code updates, swapped at every thread switch
 * (track_start_client_code). After a fork one process records: by default
 * the parent, and the child stops at once (it would write into its
 * parent's stream); with --fork=child the parent flushes what it has and
 * stops, and the child carries on — for programs such as stress-ng whose
 * work runs in forked children (each fork hands recording on, so the last
 * process of a chain of forks records).
 *
 * Speed: one helper call per access, as lackey, but a 32-byte binary record
 * into a buffer instead of a formatted line; the shadows cost a few IR ops
 * per operation. Measured figures are in the README ("Tracing real
 * programs").
 */
#include "pub_tool_basics.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_guest.h"
#include "pub_tool_hashtable.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_tooliface.h"

#include "cxlsim/cxltrace.h"
#include "cxlsim/cxltrace_proto.h"

/* VG_(safe_fd) is the core's (it moves an fd out of the client's range). */
extern Int VG_(safe_fd)(Int oldfd);

/* The trace format's ops and flags (include/cxlsim/trace.h, version 2). */
enum { OP_LD = 1, OP_ST = 2, OP_RMW = 3, OP_FENCE = 4, OP_LOCK = 5, OP_UNLOCK = 6,
       OP_BARRIER = 7, OP_POST = 8, OP_WAIT = 9, OP_CHECK = 10 };
enum { W_UNKNOWN = 0, W_HEAP = 1, W_STACK = 2, W_GLOBAL = 3, W_OTHER = 4 };
#define F_ADD 0x08
#define F_FADD 0x10
#define F_TURN 0x20

/* ---- options --------------------------------------------------------------- */

static Int clo_fd = -1;
static const HChar *clo_roi = "thread";   /* thread | start | func | request */
static const HChar *clo_roi_start = NULL; /* --roi-start=FUNC */
static const HChar *clo_fork = "parent";  /* parent | child: who records after a fork */

/* ---- per-thread state --------------------------------------------------------- */

/* A lock a thread holds: how often it took it (recursive mutexes) without releasing. */
struct held {
	Addr a;
	UInt depth;
};

typedef struct {
	Bool exists;
	Int num;            /* trace thread number; -1 until numbered */
	UInt sync_depth;    /* inside wrapped library calls */
	ULong saved_gap;    /* g_gap when the outermost wrapped call began */
	ULong nprod, gap;   /* g_nprod and g_gap while another thread runs */
	UInt nbuf;
	struct cxt_rec *buf;
	Int last_child;     /* number of the thread it created last */
	struct held *held;  /* the locks it holds (recorded acquisitions), nheld of caph */
	UInt nheld, caph;
} Thr;

static Thr *thr;                 /* VG_N_THREADS */
static ThreadId cur_tid = VG_INVALID_THREADID;
static Thr *cur;

/* The running thread's state, read and written by generated code. */
static ULong g_gap;     /* non-memory instructions since its last record */
static ULong g_nprod;   /* producers it recorded */
static Bool g_rec;      /* it records now: ROI, numbered, not in a wrapped call */

static Bool g_roi;      /* the region of interest has begun */
static Bool g_dead;     /* no more output (forked child, or the recorder is gone) */
static Int g_fd = -1;
static Int next_num;

static void set_rec(void)
{
	g_rec = g_roi && !g_dead && cur != NULL && cur->num >= 0 && cur->sync_depth == 0;
}

/* ---- output -------------------------------------------------------------------- */

static void write_all(const void *p, SizeT n)
{
	const UChar *b = p;
	while (n > 0 && !g_dead) {
		Int w = VG_(write)(g_fd, b, (Int)(n > 0x40000000 ? 0x40000000 : n));
		if (w <= 0) {
			VG_(umsg)("cxltrace: the recorder stopped reading its pipe; tracing stops\n");
			g_dead = True;
			set_rec();
			return;
		}
		b += w;
		n -= (SizeT)w;
	}
}

static void send_chunk(UInt kind, UInt thread, const void *payload, UInt count, SizeT bytes)
{
	struct cxt_chunk h = {CXT_MAGIC, kind, thread, count};
	write_all(&h, sizeof h);
	if (bytes)
		write_all(payload, bytes);
}

static void flush(Thr *t)
{
	if (t->nbuf > 0 && t->num >= 0)
		send_chunk(CXT_RECORDS, (UInt)t->num, t->buf, t->nbuf,
			   (SizeT)t->nbuf * sizeof(struct cxt_rec));
	t->nbuf = 0;
}

static void append(Thr *t, const struct cxt_rec *r)
{
	if (g_dead)
		return;
	if (t->buf == NULL)
		t->buf = VG_(malloc)("cxltrace.buf", CXT_CHUNK_RECORDS * sizeof(struct cxt_rec));
	t->buf[t->nbuf++] = *r;
	if (t->nbuf == CXT_CHUNK_RECORDS)
		flush(t);
}

static void fail_msg(const HChar *msg)
{
	VG_(umsg)("cxltrace: %s\n", msg);
	if (!g_dead)
		send_chunk(CXT_ERROR, 0, msg, (UInt)VG_(strlen)(msg), VG_(strlen)(msg));
}

/* ---- where an address is --------------------------------------------------------- */

#define WCACHE 65536
static struct {
	Addr page1; /* page number + 1; 0: empty */
	UChar where;
} wcache[WCACHE];

static UInt wslot(Addr page)
{
	return (UInt)((page ^ (page >> 16)) & (WCACHE - 1));
}

static UInt classify(Addr a)
{
	if (a >= CXT_SYNC_BASE)
		return W_OTHER;
	for (ThreadId tid = 1; tid < VG_N_THREADS; tid++) {
		if (!thr[tid].exists)
			continue;
		Addr hi = VG_(thread_get_stack_max)(tid);
		SizeT sz = VG_(thread_get_stack_size)(tid);
		if (hi != 0 && a <= hi && a + sz >= hi + 1)
			return W_STACK;
	}
	NSegment const *s = VG_(am_find_nsegment)(a);
	if (s == NULL)
		return W_OTHER;
	if (s->kind == SkFileC)
		return s->hasW ? W_GLOBAL : W_OTHER;
	if (s->kind != SkAnonC)
		return W_OTHER;
	if (s->isCH)
		return W_HEAP;
	for (const DebugInfo *di = VG_(next_DebugInfo)(NULL); di; di = VG_(next_DebugInfo)(di)) {
		Addr b = VG_(DebugInfo_get_bss_avma)(di);
		SizeT n = VG_(DebugInfo_get_bss_size)(di);
		if (n && a >= b && a < b + n)
			return W_GLOBAL;
	}
	return W_HEAP;
}

static UInt where_of(Addr a)
{
	Addr page = a >> 12;
	UInt i = wslot(page);
	if (wcache[i].page1 != page + 1) {
		wcache[i].page1 = page + 1;
		wcache[i].where = (UChar)classify(a);
	}
	return wcache[i].where;
}

static void forget_range(Addr a, SizeT len)
{
	Addr first = a >> 12, last = (a + len - 1) >> 12;
	if (len == 0)
		return;
	if (last - first >= WCACHE) {
		VG_(memset)(wcache, 0, sizeof wcache);
		return;
	}
	for (Addr p = first; p <= last; p++)
		if (wcache[wslot(p)].page1 == p + 1)
			wcache[wslot(p)].page1 = 0;
}

static void on_munmap(Addr a, SizeT len)
{
	forget_range(a, len);
}

static void on_mmap(Addr a, SizeT len, Bool rr, Bool ww, Bool xx, ULong di_handle)
{
	forget_range(a, len);
}

/* ---- records ---------------------------------------------------------------------- */

/*
 * Distance back from the record about to be made to producer `id32` (the
 * low 32 bits of its number): 0 for none, or further than the field holds.
 */
#define DEP_HORIZON 4096

static UShort dist(ULong id32)
{
	if ((UInt)id32 == 0)
		return 0;
	UInt d = (UInt)g_nprod - (UInt)id32 + 1;
	return d >= 1 && d <= DEP_HORIZON ? (UShort)d : 0;
}

static UInt clamp_gap(ULong g)
{
	return g > 0xffffffffull ? 0xffffffffu : (UInt)g;
}

/*
 * Records an access of any size as aligned pieces of at most 8 bytes (the
 * first carries the gap); value holds the bytes of this 8-byte lane. Returns
 * the number of the last producer it made (0 for a store).
 */
static ULong put_access(UInt op, Addr a, UInt size, ULong value, UInt flags, ULong adep,
			ULong vdep)
{
	ULong id = 0;
	while (size > 0) {
		UInt piece = 8;
		while (piece > 1 && (piece > size || (a & (piece - 1)) != 0))
			piece >>= 1;
		struct cxt_rec r = {0};
		r.op = (UChar)op;
		r.size = (UChar)piece;
		r.addr = a;
		r.value = piece < 8 ? value & ((1ull << (8 * piece)) - 1) : value;
		value = piece < 8 ? value >> (8 * piece) : 0;
		r.gap = clamp_gap(g_gap);
		g_gap = 0;
		r.addr_dep = dist(adep);
		if (op == OP_ST || op == OP_RMW)
			r.value_dep = dist(vdep);
		r.flags = (UChar)(where_of(a) | flags);
		if (r.value_dep == 0)
			r.flags &= (UChar)~F_ADD;
		if (op == OP_LD || op == OP_RMW)
			id = ++g_nprod;
		append(cur, &r);
		a += piece;
		size -= piece;
	}
	return id;
}

/* Does the running thread make records (also inside a wrapped call)? */
static Bool sync_rec(void)
{
	return g_roi && !g_dead && cur != NULL && cur->num >= 0;
}

/* A synchronisation record of the running thread (also inside a wrapped call). */
static void put_sync_flags(UInt op, Addr a, ULong value, UInt flags)
{
	if (!sync_rec())
		return;
	struct cxt_rec r = {0};
	r.op = (UChar)op;
	r.size = 8;
	r.addr = a & ~7ull;
	r.value = value;
	r.flags = (UChar)(where_of(a) | flags);
	if (cur->sync_depth > 0) {
		r.gap = clamp_gap(cur->saved_gap);
		cur->saved_gap = 0;
	} else {
		r.gap = clamp_gap(g_gap);
		g_gap = 0;
	}
	append(cur, &r);
}

static void put_sync(UInt op, Addr a, ULong value)
{
	put_sync_flags(op, a, value, 0);
}

/*
 * Locks: recursion and the order of acquisitions.
 *
 * A recursive mutex is locked again by the thread that holds it; only the
 * outermost lock and the matching last unlock are a hand-over between
 * threads, so only they are recorded (each thread keeps the locks it holds
 * with their depth). An unlock of a lock the thread does not hold by a
 * recorded lock (taken before the region of interest) is not recorded
 * either: its acquisition is not in the trace.
 *
 * Every recorded lock carries its turn, its index among all recorded
 * acquisitions of that lock (flag turn, value = turn): Valgrind runs one
 * thread at a time, so the order the tool sees is one the program really
 * took, and the replay takes each lock in that order (a thread's k-th
 * acquisition waits for its turn), so it cannot invent an order the program
 * could not have had (pigz: main joins its workers holding a mutex each of
 * them took and released first). The recorder collects the turns of each
 * lock into DIR/locks.order (include/cxlsim/lock_order.h).
 */
typedef struct {
	VgHashNode node; /* key: the lock's address (8-aligned) */
	ULong turns;     /* acquisitions recorded so far */
} LockTurns;

static VgHashTable *lock_turns;

static struct held *held_find(Thr *t, Addr a)
{
	for (UInt i = t->nheld; i-- > 0;)
		if (t->held[i].a == a)
			return &t->held[i];
	return NULL;
}

static void on_lock(Thr *t, Addr obj)
{
	Addr a = obj & ~7ull;
	if (!sync_rec())
		return;
	struct held *h = held_find(t, a);
	if (h != NULL) {
		h->depth++;
		return;
	}
	if (t->nheld == t->caph) {
		t->caph = t->caph ? 2 * t->caph : 8;
		t->held = VG_(realloc)("cxltrace.held", t->held, t->caph * sizeof *t->held);
	}
	t->held[t->nheld++] = (struct held){a, 1};
	LockTurns *l = VG_(HT_lookup)(lock_turns, a);
	if (l == NULL) {
		l = VG_(malloc)("cxltrace.lockturns", sizeof *l);
		l->node.key = a;
		l->turns = 0;
		VG_(HT_add_node)(lock_turns, l);
	}
	put_sync_flags(OP_LOCK, a, l->turns++, F_TURN);
}

static void on_unlock(Thr *t, Addr obj)
{
	Addr a = obj & ~7ull;
	struct held *h = sync_rec() ? held_find(t, a) : NULL;
	if (h == NULL || --h->depth > 0)
		return;
	*h = t->held[--t->nheld];
	put_sync(OP_UNLOCK, a, 0);
}

/* ---- helpers called from generated code ------------------------------------------------ */

/* info: bits 0..7 size, 8..31 instructions to add to the gap first, 32.. flags */
#define INFO(size, gap, fl) ((ULong)(size) | (ULong)(gap) << 8 | (ULong)(fl) << 32)
#define I_SIZE(i) ((UInt)((i) & 0xff))
#define I_GAP(i) ((i) >> 8 & 0xffffff)
#define I_ADD (1ull << 32)     /* st: value is an in-block load plus constants */
#define I_FADD (1ull << 33)    /* cas: the new value is the old one plus something */
#define I_WRITE (1ull << 34)   /* dirty memory effect: writes */
#define I_READ (1ull << 35)    /* dirty memory effect: reads */
/* deps: producer numbers (low 32 bits) of the address (high half) and the value */
#define D_ADDR(d) ((d) >> 32)
#define D_VALUE(d) ((d) & 0xffffffffull)

static VG_REGPARM(0) ULong h_load(Addr a, ULong value, ULong info, ULong deps)
{
	g_gap += I_GAP(info);
	if (!g_rec)
		return 0;
	return put_access(OP_LD, a, I_SIZE(info), value, 0, D_ADDR(deps), 0);
}

static VG_REGPARM(0) void h_store(Addr a, ULong value, ULong info, ULong deps)
{
	g_gap += I_GAP(info);
	if (g_rec)
		put_access(OP_ST, a, I_SIZE(info), value, (info & I_ADD) ? F_ADD : 0, D_ADDR(deps),
			   D_VALUE(deps));
}

/* The number the next producer will get: for the load half of a locked instruction. */
static VG_REGPARM(0) ULong h_reserve(void)
{
	return g_rec ? g_nprod + 1 : 0;
}

static VG_REGPARM(0) ULong h_cas(Addr a, ULong expd, ULong data, ULong old, ULong info,
				 ULong deps)
{
	g_gap += I_GAP(info);
	if (!g_rec)
		return 0;
	UInt size = I_SIZE(info);
	ULong mask = size < 8 ? (1ull << (8 * size)) - 1 : ~0ull;
	Bool ok = ((old ^ expd) & mask) == 0;
	if (ok && (info & I_FADD))
		return put_access(OP_RMW, a, size, (data - old) & mask, F_FADD, D_ADDR(deps), 0);
	return put_access(OP_RMW, a, size, (ok ? data : old) & mask, 0, D_ADDR(deps),
			  D_VALUE(deps));
}

static VG_REGPARM(0) void h_fence(ULong info)
{
	g_gap += I_GAP(info);
	if (!g_rec)
		return;
	struct cxt_rec r = {0};
	r.op = OP_FENCE;
	r.gap = clamp_gap(g_gap);
	g_gap = 0;
	append(cur, &r);
}

/* A dirty helper's memory effect (xsave, fxrstor, ...): its bytes, without values. */
static VG_REGPARM(0) void h_dirty(Addr a, ULong size, ULong info)
{
	g_gap += I_GAP(info);
	if (!g_rec)
		return;
	if (info & I_READ)
		for (UInt o = 0; o < size; o += 8)
			put_access(OP_LD, a + o, size - o < 8 ? size - o : 8, 0, 0, 0, 0);
	if (info & I_WRITE)
		for (UInt o = 0; o < size; o += 8)
			put_access(OP_ST, a + o, size - o < 8 ? size - o : 8, 0, 0, 0, 0);
}

static void roi_begin(void);

static VG_REGPARM(0) void h_roi_entry(void)
{
	if (!g_roi)
		roi_begin();
}

/* ---- instrumentation ------------------------------------------------------------------------ */

/*
 * A shadow: where a value's nearest producer number comes from.
 *   SH_NONE  no producer (constants, or values from before recording)
 *   SH_SB    a producer of this superblock, the idx-th; tmp holds its number
 *   SH_DYN   only registers from before this superblock; tmp holds the number
 * Any SH_SB producer is younger than any SH_DYN one, and among SH_SB the
 * larger idx is younger, so only DYN with DYN needs a run-time maximum.
 */
enum { SH_NONE = 0, SH_SB, SH_DYN };
typedef struct {
	UChar kind;
	Int idx;
	IRTemp tmp;
} Sh;

#define MAX_SLOTS 512 /* 8-byte slots of the guest state (amd64: ~130) */
_Static_assert(sizeof(VexGuestArchState) <= MAX_SLOTS * 8, "the guest state fits MAX_SLOTS");

typedef struct {
	IRSB *out;
	const VexGuestLayout *layout;
	Bool skip;        /* the current instruction is the preload library's: not recorded */
	Sh *tsh;          /* per input temp */
	IRTemp *aff;      /* per input temp: the in-block load it is that plus constants */
	Bool *merged;     /* per input temp: a load that is half of a locked instruction */
	Sh slot[MAX_SLOTS];
	Bool slot_set[MAX_SLOTS];  /* slot[] holds a value set in this superblock */
	IRTemp slot_dyn[MAX_SLOTS]; /* the slot's shadow as read at entry, or INVALID */
	Int nslots;
	Int next_idx;
	UInt pending_gap; /* instructions without an access not yet added */
	Bool cur_has_mem; /* the current instruction touches memory */
	Bool gap_taken;   /* ... and its pending gap went into a helper already */
} Ctx;

static const Sh sh_none = {SH_NONE, 0, IRTemp_INVALID};

static IRTemp new_tmp(Ctx *c, IRType ty)
{
	return newIRTemp(c->out->tyenv, ty);
}

static IRExpr *assign(Ctx *c, IRType ty, IRExpr *e)
{
	IRTemp t = new_tmp(c, ty);
	addStmtToIRSB(c->out, IRStmt_WrTmp(t, e));
	return IRExpr_RdTmp(t);
}

static IRExpr *u64(ULong v)
{
	return IRExpr_Const(IRConst_U64(v));
}

static Sh sh_max(Ctx *c, Sh a, Sh b)
{
	if (a.kind == SH_NONE)
		return b;
	if (b.kind == SH_NONE)
		return a;
	if (a.kind == SH_SB || b.kind == SH_SB) {
		if (a.kind != SH_SB)
			return b;
		if (b.kind != SH_SB)
			return a;
		return a.idx >= b.idx ? a : b;
	}
	IRExpr *lt = assign(c, Ity_I1, IRExpr_Binop(Iop_CmpLT64U, IRExpr_RdTmp(a.tmp),
						      IRExpr_RdTmp(b.tmp)));
	IRTemp t = new_tmp(c, Ity_I64);
	addStmtToIRSB(c->out, IRStmt_WrTmp(t, IRExpr_ITE(lt, IRExpr_RdTmp(b.tmp),
							 IRExpr_RdTmp(a.tmp))));
	Sh r = {SH_DYN, 0, t};
	return r;
}

static IRExpr *sh_expr(Sh s)
{
	return s.kind == SH_NONE ? u64(0) : IRExpr_RdTmp(s.tmp);
}

static Sh sh_atom(Ctx *c, IRExpr *e)
{
	if (e != NULL && e->tag == Iex_RdTmp)
		return c->tsh[e->Iex.RdTmp.tmp];
	return sh_none;
}

static Bool slot_tracked(Ctx *c, Int off)
{
	/* The instruction pointer is not data. */
	return off / 8 != c->layout->offset_IP / 8 && off / 8 < c->nslots;
}

static Sh sh_get(Ctx *c, Int off, IRType ty)
{
	Int sz = sizeofIRType(ty);
	Sh r = sh_none;
	for (Int s = off / 8; s <= (off + sz - 1) / 8; s++) {
		if (!slot_tracked(c, s * 8))
			continue;
		Sh x;
		if (c->slot_set[s]) {
			x = c->slot[s];
		} else {
			if (c->slot_dyn[s] == IRTemp_INVALID) {
				c->slot_dyn[s] = new_tmp(c, Ity_I64);
				addStmtToIRSB(c->out, IRStmt_WrTmp(c->slot_dyn[s],
					IRExpr_Get(c->layout->total_sizeB + s * 8, Ity_I64)));
			}
			x.kind = SH_DYN;
			x.idx = 0;
			x.tmp = c->slot_dyn[s];
		}
		r = sh_max(c, r, x);
	}
	return r;
}

static void sh_put(Ctx *c, Int off, IRType ty, Sh v)
{
	Int sz = sizeofIRType(ty);
	for (Int s = off / 8; s <= (off + sz - 1) / 8; s++) {
		if (!slot_tracked(c, s * 8))
			continue;
		c->slot[s] = v;
		c->slot_set[s] = True;
		addStmtToIRSB(c->out, IRStmt_Put(c->layout->total_sizeB + s * 8, sh_expr(v)));
	}
}

/* The deps argument: the address's producer in the high half, the value's in the low. */
static IRExpr *deps_arg(Ctx *c, Sh addr, Sh value)
{
	if (addr.kind == SH_NONE && value.kind == SH_NONE)
		return u64(0);
	IRExpr *hi = addr.kind == SH_NONE ? u64(0)
		: assign(c, Ity_I64, IRExpr_Binop(Iop_Shl64, sh_expr(addr), IRExpr_Const(IRConst_U8(32))));
	IRExpr *lo = value.kind == SH_NONE ? u64(0)
		: assign(c, Ity_I64, IRExpr_Binop(Iop_And64, sh_expr(value), u64(0xffffffffull)));
	return assign(c, Ity_I64, IRExpr_Binop(Iop_Or64, hi, lo));
}

/* Lane k (8 bytes) of a value of type ty as an I64 atom; 0 if it has no integer view. */
static IRExpr *lane(Ctx *c, IRExpr *e, IRType ty, Int k)
{
	switch (ty) {
	case Ity_I8:
		return assign(c, Ity_I64, IRExpr_Unop(Iop_8Uto64, e));
	case Ity_I16:
		return assign(c, Ity_I64, IRExpr_Unop(Iop_16Uto64, e));
	case Ity_I32:
		return assign(c, Ity_I64, IRExpr_Unop(Iop_32Uto64, e));
	case Ity_I64:
		return e;
	case Ity_F32:
		return assign(c, Ity_I64, IRExpr_Unop(Iop_32Uto64,
			assign(c, Ity_I32, IRExpr_Unop(Iop_ReinterpF32asI32, e))));
	case Ity_F64:
		return assign(c, Ity_I64, IRExpr_Unop(Iop_ReinterpF64asI64, e));
	case Ity_I128:
		return assign(c, Ity_I64, IRExpr_Unop(k ? Iop_128HIto64 : Iop_128to64, e));
	case Ity_V128:
		return assign(c, Ity_I64, IRExpr_Unop(k ? Iop_V128HIto64 : Iop_V128to64, e));
	case Ity_V256: {
		static const IROp ops[4] = {Iop_V256to64_0, Iop_V256to64_1, Iop_V256to64_2,
					    Iop_V256to64_3};
		return assign(c, Ity_I64, IRExpr_Unop(ops[k], e));
	}
	default:
		return u64(0);
	}
}

static IRExpr *lane_addr(Ctx *c, IRExpr *addr, Int k)
{
	return k == 0 ? addr : assign(c, Ity_I64, IRExpr_Binop(Iop_Add64, addr, u64(8 * k)));
}

/* The gap to hand to the first helper of an instruction (0 for the others). */
static UInt take_gap(Ctx *c)
{
	if (c->gap_taken)
		return 0;
	c->gap_taken = True;
	UInt g = c->pending_gap;
	c->pending_gap = 0;
	return g;
}

static void flush_gap(Ctx *c)
{
	if (c->pending_gap == 0)
		return;
	IRExpr *a = IRExpr_Const(IRConst_U64((ULong)(HWord)&g_gap));
	IRExpr *v = assign(c, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, a));
	IRExpr *s = assign(c, Ity_I64, IRExpr_Binop(Iop_Add64, v, u64(c->pending_gap)));
	addStmtToIRSB(c->out, IRStmt_Store(Iend_LE, a, s));
	c->pending_gap = 0;
}

static IRDirty *call(const HChar *name, void *fn, IRExpr **args, IRTemp dst)
{
	void *entry = VG_(fnptr_to_fnentry)(fn);
	return dst == IRTemp_INVALID ? unsafeIRDirty_0_N(0, name, entry, args)
				     : unsafeIRDirty_1_N(dst, 0, name, entry, args);
}

static Sh new_sb_sh(Ctx *c, IRTemp t)
{
	Sh s = {SH_SB, c->next_idx++, t};
	return s;
}

/* A load of type ty at addr into value temp `dst` (already assigned); guard may be NULL. */
static Sh do_load(Ctx *c, IRExpr *addr, IRType ty, IRExpr *value, IRExpr *guard)
{
	Int sz = sizeofIRType(ty), nl = sz > 8 ? sz / 8 : 1;
	Sh a = sh_atom(c, addr);
	IRExpr *deps = deps_arg(c, a, sh_none);
	IRTemp id = IRTemp_INVALID;
	for (Int k = 0; k < nl; k++) {
		id = new_tmp(c, Ity_I64);
		IRDirty *d = call("h_load", h_load,
				  mkIRExprVec_4(lane_addr(c, addr, k), lane(c, value, ty, k),
						u64(INFO(sz > 8 ? 8 : sz, take_gap(c), 0)), deps),
				  id);
		if (guard)
			d->guard = guard;
		addStmtToIRSB(c->out, IRStmt_Dirty(d));
	}
	return new_sb_sh(c, id);
}

static void do_store(Ctx *c, IRExpr *addr, IRExpr *data, IRExpr *guard)
{
	IRType ty = typeOfIRExpr(c->out->tyenv, data);
	Int sz = sizeofIRType(ty), nl = sz > 8 ? sz / 8 : 1;
	Sh a = sh_atom(c, addr), v = sh_atom(c, data);
	ULong fl = 0;
	if (data->tag == Iex_RdTmp && c->aff[data->Iex.RdTmp.tmp] != IRTemp_INVALID && sz <= 8) {
		IRTemp base = c->aff[data->Iex.RdTmp.tmp];
		/* affine in one in-block load whose shadow is the value's own */
		if (c->tsh[base].kind == SH_SB && v.kind == SH_SB && c->tsh[base].idx == v.idx)
			fl = I_ADD >> 32;
	}
	IRExpr *deps = deps_arg(c, a, v);
	for (Int k = 0; k < nl; k++) {
		IRDirty *d = call("h_store", h_store,
				  mkIRExprVec_4(lane_addr(c, addr, k), lane(c, data, ty, k),
						u64(INFO(sz > 8 ? 8 : sz, take_gap(c), fl)), deps),
				  IRTemp_INVALID);
		if (guard)
			d->guard = guard;
		addStmtToIRSB(c->out, IRStmt_Dirty(d));
	}
}

static Bool is_int_convert(IROp op)
{
	switch (op) {
	case Iop_8Uto16: case Iop_8Uto32: case Iop_8Uto64: case Iop_16Uto32: case Iop_16Uto64:
	case Iop_32Uto64: case Iop_8Sto16: case Iop_8Sto32: case Iop_8Sto64: case Iop_16Sto32:
	case Iop_16Sto64: case Iop_32Sto64: case Iop_64to32: case Iop_64to16: case Iop_64to8:
	case Iop_32to16: case Iop_32to8: case Iop_16to8:
		return True;
	default:
		return False;
	}
}

static Bool is_add_sub(IROp op)
{
	switch (op) {
	case Iop_Add8: case Iop_Add16: case Iop_Add32: case Iop_Add64:
	case Iop_Sub8: case Iop_Sub16: case Iop_Sub32: case Iop_Sub64:
		return True;
	default:
		return False;
	}
}

/* Shadow and affine base of the value of expression e, emitting what it needs. */
static Sh expr_sh(Ctx *c, IRExpr *e, IRTemp *aff)
{
	*aff = IRTemp_INVALID;
	switch (e->tag) {
	case Iex_Get:
		return sh_get(c, e->Iex.Get.offset, e->Iex.Get.ty);
	case Iex_RdTmp:
		*aff = c->aff[e->Iex.RdTmp.tmp];
		return c->tsh[e->Iex.RdTmp.tmp];
	case Iex_Unop:
		if (is_int_convert(e->Iex.Unop.op) && e->Iex.Unop.arg->tag == Iex_RdTmp)
			*aff = c->aff[e->Iex.Unop.arg->Iex.RdTmp.tmp];
		return sh_atom(c, e->Iex.Unop.arg);
	case Iex_Binop: {
		IRExpr *x = e->Iex.Binop.arg1, *y = e->Iex.Binop.arg2;
		if (is_add_sub(e->Iex.Binop.op)) {
			if (x->tag == Iex_RdTmp && y->tag == Iex_Const)
				*aff = c->aff[x->Iex.RdTmp.tmp];
			else if (y->tag == Iex_RdTmp && x->tag == Iex_Const &&
				 e->Iex.Binop.op >= Iop_Add8 && e->Iex.Binop.op <= Iop_Add64)
				*aff = c->aff[y->Iex.RdTmp.tmp];
		}
		return sh_max(c, sh_atom(c, x), sh_atom(c, y));
	}
	case Iex_Triop: {
		IRTriop *t = e->Iex.Triop.details;
		return sh_max(c, sh_max(c, sh_atom(c, t->arg1), sh_atom(c, t->arg2)),
			      sh_atom(c, t->arg3));
	}
	case Iex_Qop: {
		IRQop *q = e->Iex.Qop.details;
		return sh_max(c, sh_max(c, sh_atom(c, q->arg1), sh_atom(c, q->arg2)),
			      sh_max(c, sh_atom(c, q->arg3), sh_atom(c, q->arg4)));
	}
	case Iex_ITE:
		return sh_max(c, sh_atom(c, e->Iex.ITE.cond),
			      sh_max(c, sh_atom(c, e->Iex.ITE.iftrue), sh_atom(c, e->Iex.ITE.iffalse)));
	case Iex_CCall: {
		Sh r = sh_none;
		for (Int i = 0; e->Iex.CCall.args[i]; i++)
			r = sh_max(c, r, sh_atom(c, e->Iex.CCall.args[i]));
		return r;
	}
	default:
		return sh_none;
	}
}

static Bool same_atom(const IRExpr *a, const IRExpr *b)
{
	if (a->tag != b->tag)
		return False;
	if (a->tag == Iex_RdTmp)
		return a->Iex.RdTmp.tmp == b->Iex.RdTmp.tmp;
	if (a->tag == Iex_Const)
		return eqIRConst(a->Iex.Const.con, b->Iex.Const.con);
	return False;
}

/* Does statement st touch memory (so that its instruction is not in a gap)? */
static Bool touches_memory(const IRStmt *st)
{
	switch (st->tag) {
	case Ist_WrTmp:
		return st->Ist.WrTmp.data->tag == Iex_Load;
	case Ist_Store: case Ist_StoreG: case Ist_LoadG: case Ist_CAS: case Ist_LLSC:
		return True;
	case Ist_Dirty:
		return st->Ist.Dirty.details->mFx != Ifx_None;
	case Ist_MBE:
		return st->Ist.MBE.event == Imbe_Fence;
	default:
		return False;
	}
}

/*
 * The locked read-modify-writes: a CAS and, earlier in the same
 * instruction, a load of the same address. Marks those loads merged and
 * returns, per CAS statement index, whether its new value is the old one
 * plus something (an fadd).
 */
static void find_locked_rmws(Ctx *c, IRSB *in, Bool *fadd)
{
	Int imark = 0;
	for (Int i = 0; i < in->stmts_used; i++) {
		IRStmt *st = in->stmts[i];
		fadd[i] = False;
		if (st->tag == Ist_IMark)
			imark = i;
		if (st->tag != Ist_CAS || st->Ist.CAS.details->oldHi != IRTemp_INVALID)
			continue;
		IRCAS *cas = st->Ist.CAS.details;
		IRTemp ld = IRTemp_INVALID;
		for (Int j = i - 1; j > imark; j--) {
			IRStmt *s = in->stmts[j];
			if (s->tag == Ist_WrTmp && s->Ist.WrTmp.data->tag == Iex_Load &&
			    same_atom(s->Ist.WrTmp.data->Iex.Load.addr, cas->addr)) {
				ld = s->Ist.WrTmp.tmp;
				break;
			}
		}
		if (ld == IRTemp_INVALID)
			continue;
		c->merged[ld] = True;
		/* the new value: an Add/Sub with the loaded value as an operand */
		if (cas->dataLo->tag != Iex_RdTmp)
			continue;
		for (Int j = i - 1; j > imark; j--) {
			IRStmt *s = in->stmts[j];
			if (s->tag != Ist_WrTmp || s->Ist.WrTmp.tmp != cas->dataLo->Iex.RdTmp.tmp)
				continue;
			IRExpr *e = s->Ist.WrTmp.data;
			if (e->tag == Iex_Binop && is_add_sub(e->Iex.Binop.op) &&
			    ((e->Iex.Binop.arg1->tag == Iex_RdTmp &&
			      e->Iex.Binop.arg1->Iex.RdTmp.tmp == ld) ||
			     (e->Iex.Binop.arg2->tag == Iex_RdTmp &&
			      e->Iex.Binop.arg2->Iex.RdTmp.tmp == ld)))
				fadd[i] = True;
			break;
		}
	}
}

static void do_cas(Ctx *c, IRCAS *cas, Bool fadd)
{
	IRType ty = typeOfIRExpr(c->out->tyenv, cas->dataLo);
	Int sz = sizeofIRType(ty);
	if (sz > 8)
		sz = 8;
	Sh a = sh_atom(c, cas->addr), v = sh_atom(c, cas->dataLo);
	IRExpr *deps = deps_arg(c, a, v);
	IRTemp id = new_tmp(c, Ity_I64);
	IRDirty *d = call("h_cas", h_cas,
			  mkIRExprVec_6(cas->addr, lane(c, cas->expdLo, ty, 0),
					lane(c, cas->dataLo, ty, 0),
					lane(c, IRExpr_RdTmp(cas->oldLo), ty, 0),
					u64(INFO(sz, take_gap(c), fadd ? I_FADD >> 32 : 0)), deps),
			  id);
	addStmtToIRSB(c->out, IRStmt_Dirty(d));
	c->tsh[cas->oldLo] = new_sb_sh(c, id);
	if (cas->oldHi != IRTemp_INVALID)
		c->tsh[cas->oldHi] = c->tsh[cas->oldLo];
}

/*
 * The preload library's code (its wrappers and their client requests) is
 * not the program's: its instructions are neither recorded nor counted.
 */
static Addr pre_lo, pre_hi;

static Bool in_preload(Addr a)
{
	if (pre_hi == 0) {
		for (const DebugInfo *di = VG_(next_DebugInfo)(NULL); di;
		     di = VG_(next_DebugInfo)(di)) {
			const HChar *f = VG_(DebugInfo_get_filename)(di);
			if (f && VG_(strstr)(f, "vgpreload_cxltrace") &&
			    VG_(DebugInfo_get_text_size)(di) > 0) {
				pre_lo = VG_(DebugInfo_get_text_avma)(di);
				pre_hi = pre_lo + VG_(DebugInfo_get_text_size)(di);
			}
		}
	}
	return a >= pre_lo && a < pre_hi;
}

/* Is a (an instruction's address) the entry of --roi-start's function? */
static Bool roi_func_entry(Addr a)
{
	const HChar *name;
	if (clo_roi_start == NULL || g_roi)
		return False;
	return VG_(get_fnname_if_entry)(VG_(current_DiEpoch)(), a, &name) &&
	       VG_(strcmp)(name, clo_roi_start) == 0;
}

static IRSB *instrument(VgCallbackClosure *closure, IRSB *in, const VexGuestLayout *layout,
			const VexGuestExtents *vge, const VexArchInfo *archinfo_host,
			IRType gWordTy, IRType hWordTy)
{
	if (gWordTy != Ity_I64 || hWordTy != Ity_I64)
		VG_(tool_panic)("cxltrace: 64-bit guests and hosts only");
	Int ntemps = in->tyenv->types_used;
	Ctx c;
	VG_(memset)(&c, 0, sizeof c);
	c.out = deepCopyIRSBExceptStmts(in);
	c.layout = layout;
	c.nslots = layout->total_sizeB / 8;
	if (c.nslots > MAX_SLOTS)
		VG_(tool_panic)("cxltrace: guest state larger than MAX_SLOTS");
	c.tsh = VG_(calloc)("cxltrace.tsh", ntemps + 1, sizeof *c.tsh);
	c.aff = VG_(malloc)("cxltrace.aff", (ntemps + 1) * sizeof *c.aff);
	c.merged = VG_(calloc)("cxltrace.merged", ntemps + 1, sizeof *c.merged);
	Bool *fadd = VG_(calloc)("cxltrace.fadd", in->stmts_used + 1, sizeof *fadd);
	for (Int i = 0; i <= ntemps; i++)
		c.aff[i] = IRTemp_INVALID;
	for (Int s = 0; s < MAX_SLOTS; s++)
		c.slot_dyn[s] = IRTemp_INVALID;
	find_locked_rmws(&c, in, fadd);

	Int i = 0;
	for (; i < in->stmts_used && in->stmts[i]->tag != Ist_IMark; i++)
		addStmtToIRSB(c.out, in->stmts[i]);

	for (; i < in->stmts_used; i++) {
		IRStmt *st = in->stmts[i];
		if (st->tag == Ist_IMark)
			c.skip = in_preload(st->Ist.IMark.addr);
		if (c.skip && st->tag != Ist_Exit) {
			addStmtToIRSB(c.out, st);
			continue;
		}
		switch (st->tag) {
		case Ist_IMark: {
			Bool mem = False;
			for (Int j = i + 1; j < in->stmts_used && in->stmts[j]->tag != Ist_IMark; j++)
				mem |= touches_memory(in->stmts[j]);
			c.cur_has_mem = mem;
			c.gap_taken = False;
			addStmtToIRSB(c.out, st);
			/* Superblocks may run into a function through a direct call: check
			 * every instruction, not the block's first. */
			if (roi_func_entry(st->Ist.IMark.addr)) {
				flush_gap(&c);
				addStmtToIRSB(c.out, IRStmt_Dirty(call("h_roi_entry", h_roi_entry,
								       mkIRExprVec_0(), IRTemp_INVALID)));
			}
			if (!mem)
				c.pending_gap++;
			break;
		}
		case Ist_Put: {
			IRTemp aff;
			Sh v = expr_sh(&c, st->Ist.Put.data, &aff);
			addStmtToIRSB(c.out, st);
			sh_put(&c, st->Ist.Put.offset, typeOfIRExpr(in->tyenv, st->Ist.Put.data), v);
			break;
		}
		case Ist_WrTmp: {
			IRTemp t = st->Ist.WrTmp.tmp;
			IRExpr *e = st->Ist.WrTmp.data;
			if (e->tag == Iex_Load) {
				addStmtToIRSB(c.out, st);
				if (c.merged[t]) {
					IRTemp id = new_tmp(&c, Ity_I64);
					addStmtToIRSB(c.out, IRStmt_Dirty(call("h_reserve", h_reserve,
									      mkIRExprVec_0(), id)));
					c.tsh[t] = new_sb_sh(&c, id);
				} else {
					c.tsh[t] = do_load(&c, e->Iex.Load.addr, e->Iex.Load.ty,
							   IRExpr_RdTmp(t), NULL);
				}
				c.aff[t] = t;
				break;
			}
			IRTemp aff;
			Sh v = expr_sh(&c, e, &aff);
			addStmtToIRSB(c.out, st);
			c.tsh[t] = v;
			c.aff[t] = aff;
			break;
		}
		case Ist_Store:
			addStmtToIRSB(c.out, st);
			do_store(&c, st->Ist.Store.addr, st->Ist.Store.data, NULL);
			break;
		case Ist_StoreG: {
			IRStoreG *sg = st->Ist.StoreG.details;
			addStmtToIRSB(c.out, st);
			do_store(&c, sg->addr, sg->data, sg->guard);
			break;
		}
		case Ist_LoadG: {
			IRLoadG *lg = st->Ist.LoadG.details;
			IRType tyRes, tyArg;
			typeOfIRLoadGOp(lg->cvt, &tyRes, &tyArg);
			addStmtToIRSB(c.out, st);
			Sh s = do_load(&c, lg->addr, tyArg, IRExpr_RdTmp(lg->dst), lg->guard);
			/* when the guard is false, the value is alt's */
			IRTemp t = new_tmp(&c, Ity_I64);
			addStmtToIRSB(c.out, IRStmt_WrTmp(t, IRExpr_ITE(lg->guard, sh_expr(s),
							sh_expr(sh_atom(&c, lg->alt)))));
			s.tmp = t;
			c.tsh[lg->dst] = s;
			break;
		}
		case Ist_CAS:
			addStmtToIRSB(c.out, st);
			do_cas(&c, st->Ist.CAS.details, fadd[i]);
			break;
		case Ist_Dirty: {
			IRDirty *d = st->Ist.Dirty.details;
			Sh r = sh_none;
			for (Int k = 0; d->args[k]; k++)
				if (d->args[k]->tag == Iex_RdTmp)
					r = sh_max(&c, r, sh_atom(&c, d->args[k]));
			addStmtToIRSB(c.out, st);
			if (d->tmp != IRTemp_INVALID)
				c.tsh[d->tmp] = r;
			if (d->mFx != Ifx_None && d->mSize > 0) {
				ULong fl = (d->mFx == Ifx_Read || d->mFx == Ifx_Modify ? I_READ : 0) |
					   (d->mFx == Ifx_Write || d->mFx == Ifx_Modify ? I_WRITE : 0);
				IRDirty *h = call("h_dirty", h_dirty,
						  mkIRExprVec_3(d->mAddr, u64((ULong)d->mSize),
								u64(INFO(0, take_gap(&c), fl >> 32))),
						  IRTemp_INVALID);
				h->guard = d->guard;
				addStmtToIRSB(c.out, IRStmt_Dirty(h));
			}
			break;
		}
		case Ist_MBE:
			addStmtToIRSB(c.out, st);
			if (st->Ist.MBE.event == Imbe_Fence)
				addStmtToIRSB(c.out, IRStmt_Dirty(call("h_fence", h_fence,
					mkIRExprVec_1(u64(INFO(0, take_gap(&c), 0))), IRTemp_INVALID)));
			break;
		case Ist_Exit:
			flush_gap(&c);
			addStmtToIRSB(c.out, st);
			break;
		default: /* NoOp, AbiHint, PutI, LLSC (not on amd64) */
			addStmtToIRSB(c.out, st);
			break;
		}
	}
	flush_gap(&c);
	VG_(free)(c.tsh);
	VG_(free)(c.aff);
	VG_(free)(c.merged);
	VG_(free)(fadd);
	return c.out;
}

/* ---- threads and the region of interest ----------------------------------------------------- */

static void number(Thr *t)
{
	if (t->num < 0)
		t->num = next_num++;
}

static void roi_begin(void)
{
	g_roi = True;
	if (cur != NULL)
		number(cur);
	for (ThreadId tid = 1; tid < VG_N_THREADS; tid++)
		if (thr[tid].exists)
			number(&thr[tid]);
	g_gap = 0;
	for (ThreadId tid = 1; tid < VG_N_THREADS; tid++)
		thr[tid].gap = 0;
	set_rec();
}

static void switch_to(ThreadId tid)
{
	if (tid == cur_tid)
		return;
	if (cur != NULL) {
		cur->gap = g_gap;
		cur->nprod = g_nprod;
	}
	cur_tid = tid;
	cur = &thr[tid];
	g_gap = cur->gap;
	g_nprod = cur->nprod;
	set_rec();
}

static void on_start_client_code(ThreadId tid, ULong blocks_done)
{
	switch_to(tid);
}

static void on_thread_create(ThreadId parent, ThreadId child)
{
	Thr *c = &thr[child];
	if (parent == VG_INVALID_THREADID && c->exists)
		return; /* the main thread, set up (and maybe numbered) by post_clo_init */
	struct cxt_rec *buf = c->buf;
	struct held *held = c->held;
	UInt caph = c->caph;
	VG_(memset)(c, 0, sizeof *c);
	c->buf = buf;
	c->held = held;
	c->caph = caph;
	c->exists = True;
	c->num = -1;
	c->last_child = -1;
	if (parent == VG_INVALID_THREADID || !g_roi || g_dead) {
		set_rec();
		return;
	}
	switch_to(parent);
	number(c);
	thr[parent].last_child = c->num;
	/* The creator posts the child's start event; the child waits for it first. */
	put_sync(OP_POST, CXT_START_ADDR(c->num), 0);
	struct cxt_rec r = {0};
	r.op = OP_WAIT;
	r.size = 8;
	r.addr = CXT_START_ADDR(c->num);
	r.value = 1;
	r.flags = W_OTHER;
	append(c, &r);
}

/* A new thread's registers came from its creator, their shadows must not. */
static void on_first_insn(ThreadId tid)
{
	static UChar zeros[MAX_SLOTS * 8];
	VG_(set_shadow_regs_area)(tid, 1, 0, sizeof(VexGuestArchState), zeros);
}

static void on_thread_exit(ThreadId tid)
{
	Thr *t = &thr[tid];
	if (t->num >= 0 && g_roi && !g_dead) {
		switch_to(tid);
		UInt depth = t->sync_depth;
		t->sync_depth = 0;
		put_sync(OP_POST, CXT_EXIT_ADDR(t->num), 0);
		t->sync_depth = depth;
		flush(t);
		send_chunk(CXT_THREAD_END, (UInt)t->num, NULL, 0, 0);
	}
	if (t->exists) {
		Addr hi = VG_(thread_get_stack_max)(tid);
		SizeT sz = VG_(thread_get_stack_size)(tid);
		if (hi != 0 && sz != 0)
			forget_range(hi + 1 - sz, sz);
	}
	t->exists = False;
	t->num = -1;
	t->nbuf = 0;
	if (cur == t) {
		cur = NULL;
		cur_tid = VG_INVALID_THREADID;
	}
	set_rec();
}

static void stop_recording(void)
{
	g_dead = True;
	if (g_fd >= 0)
		VG_(close)(g_fd);
	g_fd = -1;
	set_rec();
}

static Bool follow_child(void)
{
	return VG_(strcmp)(clo_fork, "child") == 0;
}

static void on_fork_pre(ThreadId tid)
{
	if (!follow_child() || g_dead)
		return;
	switch_to(tid);
	cur->gap = g_gap;
	cur->nprod = g_nprod;
	for (ThreadId t = 1; t < VG_N_THREADS; t++)
		flush(&thr[t]);
}

static void on_fork_parent(ThreadId tid)
{
	if (follow_child())
		stop_recording();
}

static void on_fork_child(ThreadId tid)
{
	if (!follow_child()) {
		stop_recording();
		return;
	}
	/* Only the forking thread lives on in the child. */
	for (ThreadId t = 1; t < VG_N_THREADS; t++)
		if (t != tid)
			thr[t].exists = False;
	set_rec();
}

/* pthread_t -> trace number, for joins */
static struct {
	UWord pt;
	Int num;
} *ptmap;
static Int nptmap, capptmap;

static Int lookup_pthread(UWord pt)
{
	for (Int i = nptmap - 1; i >= 0; i--)
		if (ptmap[i].pt == pt)
			return ptmap[i].num;
	return -1;
}

/* barrier address -> count */
static struct {
	Addr a;
	UWord count;
} *bmap;
static Int nbmap, capbmap;

static UWord barrier_count(Addr a)
{
	for (Int i = nbmap - 1; i >= 0; i--)
		if (bmap[i].a == a)
			return bmap[i].count;
	return 0;
}

static Bool client_request(ThreadId tid, UWord *args, UWord *ret)
{
	if (!VG_IS_TOOL_USERREQ('C', 'X', args[0]))
		return False;
	switch_to(tid);
	Thr *t = cur;
	*ret = 0;
	switch (args[0]) {
	case CXLTRACE_REQ_SYNC_ENTER:
		if (t->sync_depth++ == 0)
			t->saved_gap = g_gap;
		break;
	case CXLTRACE_REQ_SYNC_LEAVE:
		if (t->sync_depth > 0 && --t->sync_depth == 0)
			g_gap = t->saved_gap;
		break;
	/* Only the outermost wrapped call is the program's (pthread_create locks
	 * dl_load_lock through pthread_mutex_lock inside). */
	case CXLTRACE_REQ_LOCK:
		if (t->sync_depth <= 1)
			on_lock(t, args[1]);
		break;
	case CXLTRACE_REQ_UNLOCK:
		if (t->sync_depth <= 1)
			on_unlock(t, args[1]);
		break;
	case CXLTRACE_REQ_BARRIER_INIT:
		if (nbmap == capbmap) {
			capbmap = capbmap ? 2 * capbmap : 16;
			bmap = VG_(realloc)("cxltrace.bmap", bmap, capbmap * sizeof *bmap);
		}
		bmap[nbmap].a = args[1];
		bmap[nbmap++].count = args[2];
		break;
	case CXLTRACE_REQ_BARRIER:
		if (t->sync_depth <= 1)
			put_sync(OP_BARRIER, args[1], barrier_count(args[1]));
		break;
	case CXLTRACE_REQ_CREATE:
		if (!g_roi && VG_(strcmp)(clo_roi, "thread") == 0)
			roi_begin();
		t->last_child = -1;
		break;
	case CXLTRACE_REQ_CREATED:
		if (t->last_child >= 0) {
			if (nptmap == capptmap) {
				capptmap = capptmap ? 2 * capptmap : 16;
				ptmap = VG_(realloc)("cxltrace.ptmap", ptmap,
						     capptmap * sizeof *ptmap);
			}
			ptmap[nptmap].pt = args[1];
			ptmap[nptmap++].num = t->last_child;
		}
		break;
	case CXLTRACE_REQ_JOINED: {
		Int k = lookup_pthread(args[1]);
		if (k >= 0)
			put_sync(OP_WAIT, CXT_EXIT_ADDR(k), 1);
		break;
	}
	case CXLTRACE_REQ_ROI_BEGIN:
		if (!g_roi)
			roi_begin();
		break;
	case CXLTRACE_REQ_CHECK:
		if (g_rec) {
			UInt size = (UInt)args[2];
			if ((size != 1 && size != 2 && size != 4 && size != 8) || (args[1] & (size - 1))) {
				fail_msg("CXLTRACE_CHECK needs an aligned access of 1, 2, 4 or 8 bytes");
				break;
			}
			struct cxt_rec r = {0};
			r.op = OP_CHECK;
			r.size = (UChar)size;
			r.addr = args[1];
			r.value = size < 8 ? args[3] & ((1ull << (8 * size)) - 1) : args[3];
			r.gap = clamp_gap(g_gap);
			g_gap = 0;
			r.flags = (UChar)where_of(args[1]);
			append(t, &r);
		}
		break;
	default:
		return False;
	}
	set_rec();
	return True;
}

/* ---- life cycle ----------------------------------------------------------------------------------- */

static Bool process_cmd_line_option(const HChar *arg)
{
	if VG_INT_CLO (arg, "--cxl-fd", clo_fd) {
	} else if VG_STR_CLO (arg, "--roi", clo_roi) {
	} else if VG_STR_CLO (arg, "--roi-start", clo_roi_start) {
	} else if VG_STR_CLO (arg, "--fork", clo_fork) {
	} else
		return False;
	return True;
}

static void print_usage(void)
{
	VG_(printf)("    --cxl-fd=N              the recorder's pipe (set by cxlsim-trace record)\n"
		    "    --roi=thread|start|request  start recording at the first pthread_create\n"
		    "                            (default), at the first instruction, or at\n"
		    "                            CXLTRACE_ROI_BEGIN()\n"
		    "    --roi-start=FUNC        start recording at the first entry of FUNC\n"
		    "    --fork=parent|child     who records after a fork (default parent)\n");
}

static void print_debug_usage(void)
{
	VG_(printf)("    (none)\n");
}

static void post_clo_init(void)
{
	if (clo_fd < 0) {
		VG_(umsg)("cxltrace: run this tool through `cxlsim-trace record -- PROGRAM`\n");
		VG_(exit)(2);
	}
	if (VG_(strcmp)(clo_roi, "thread") != 0 && VG_(strcmp)(clo_roi, "start") != 0 &&
	    VG_(strcmp)(clo_roi, "request") != 0) {
		VG_(umsg)("cxltrace: --roi must be thread, start or request\n");
		VG_(exit)(2);
	}
	g_fd = VG_(safe_fd)(clo_fd);
	if (g_fd < 0) {
		VG_(umsg)("cxltrace: --cxl-fd=%d is not an open file descriptor\n", clo_fd);
		VG_(exit)(2);
	}
	thr = VG_(calloc)("cxltrace.thr", VG_N_THREADS, sizeof *thr);
	for (UInt i = 0; i < VG_N_THREADS; i++) {
		thr[i].num = -1;
		thr[i].last_child = -1;
	}
	thr[1].exists = True; /* the main thread, which nobody creates */
	lock_turns = VG_(HT_construct)("cxltrace.lock_turns");
	if (VG_(strcmp)(clo_roi, "start") == 0 && clo_roi_start == NULL) {
		switch_to(1);
		roi_begin();
	}
	if (VG_(strcmp)(clo_fork, "parent") != 0 && VG_(strcmp)(clo_fork, "child") != 0) {
		VG_(umsg)("cxltrace: --fork must be parent or child\n");
		VG_(exit)(2);
	}
	VG_(atfork)(on_fork_pre, on_fork_parent, on_fork_child);
}

static void fini(Int exitcode)
{
	if (g_dead)
		return;
	if (cur != NULL) {
		cur->gap = g_gap;
		cur->nprod = g_nprod;
	}
	for (ThreadId tid = 1; tid < VG_N_THREADS; tid++)
		if (thr[tid].num >= 0)
			flush(&thr[tid]);
	send_chunk(CXT_END, (UInt)next_num, NULL, 0, 0);
	VG_(close)(g_fd);
}

static void pre_clo_init(void)
{
	VG_(details_name)("cxltrace");
	VG_(details_version)(NULL);
	VG_(details_description)("per-thread memory traces with dataflow for cxlsim");
	VG_(details_copyright_author)("the cxlsim authors");
	VG_(details_bug_reports_to)("the cxlsim issue tracker");
	VG_(details_avg_translation_sizeB)(400);
	VG_(basic_tool_funcs)(post_clo_init, instrument, fini);
	VG_(needs_command_line_options)(process_cmd_line_option, print_usage, print_debug_usage);
	VG_(needs_client_requests)(client_request);
	VG_(track_start_client_code)(on_start_client_code);
	VG_(track_pre_thread_ll_create)(on_thread_create);
	VG_(track_pre_thread_ll_exit)(on_thread_exit);
	VG_(track_pre_thread_first_insn)(on_first_insn);
	VG_(track_die_mem_munmap)(on_munmap);
	VG_(track_new_mem_mmap)(on_mmap);
}

VG_DETERMINE_INTERFACE_VERSION(pre_clo_init)
