/*
 * memsys.c — CN and MN node types: the glue between the engine, the fabric
 * ports and the two coherence agents (src/mem), and the cores.
 *
 * A message between nodes: the sender's agent emits it at some time `when`
 * (now or later: a DRAM read, a directory lookup); the sender's port adds
 * egress queueing and the flight (cxs_port_send), and the engine delivers it
 * to the receiving node at the arrival time. The receiver's port adds ingress
 * queueing (cxs_port_receive); if that delays it, the message is handed to the
 * agent by a local event at the delivery time, else at once.
 *
 * Deadlock and livelock detection: a node with work in progress (requests
 * of its cores, home transactions) runs a watchdog every
 * coherence.watchdog_interval of simulated time; a CN request or a home
 * transaction that has made no progress for coherence.deadlock_timeout stops
 * the run with an error naming the node, the line and the states involved.
 * An idle node's watchdog stops and the next message or request re-arms it,
 * so a finished workload ends the run instead of ticking to the end time
 * (which cost a window per tick: memsys at np = 2 was 3x slower than np = 1).
 *
 * Per-run parameters are read once by cxs_memsys_configure and shared
 * read-only by all nodes of the process (like the configuration itself).
 */
#include "cxlsim/memsys.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxlsim/addr_map.h"
#include "cxlsim/coherence.h"
#include "cxlsim/dram.h"
#include "cxlsim/fabric.h"
#include "cxlsim/core.h"
#include "cxlsim/kthread.h"
#include "cxlsim/tester.h"
#include "cxlsim/tier.h"

enum {
	EV_MSG = 1,     /* a coherence message arriving at the port */
	EV_DELIVER,     /* ... handed to the agent after ingress queueing */
	EV_CORE_ISSUE,  /* a core issues its next request */
	EV_CORE_DONE,   /* a request completed */
	EV_WATCHDOG,
	EV_SEND,        /* a message the agent emitted for a later time */
	EV_CORE_STEP,   /* an out-of-order core asked to be woken */
	EV_END_CHECK,   /* just before the end time: did the workload finish? */
};

struct core_done {
	struct cxs_mem_req r;
	uint64_t value;
};
_Static_assert(sizeof(struct core_done) <= CXS_EVENT_PAYLOAD_MAX, "fits an event");

const struct cxs_cfg_key cxs_memsys_keys[] = {
	{"system", "cns", CXS_CFG_UINT, "4", "Compute nodes (DIKTAMO: 16); at most 64, the home's sharer vector.", NULL, 1, CXS_MAX_CNS},
	{"system", "mns", CXS_CFG_UINT, "2", "Memory nodes (DIKTAMO: 16).", NULL, 1, 1024},
	{"system", "cores_per_cn", CXS_CFG_UINT, "4", "Cores per compute node (DIKTAMO: 4).", NULL, 1, 32},
	{"system", "core_ghz", CXS_CFG_DOUBLE, "2.4", "Core clock in GHz (DIKTAMO: 2.4).", NULL, 0.1, 10},
	{"system", "local_size", CXS_CFG_SIZE, "1GiB", "Private memory per CN.", NULL, 4096, 1e15},
	{"system", "cxl_size", CXS_CFG_SIZE, "1GiB", "Shared CXL memory, over all MNs.", NULL, 4096, 1e15},
	{"system", "interleave", CXS_CFG_SIZE, "64B", "Interleaving unit of CXL memory over the MNs: 64B (lines) or 4KiB (pages).", NULL, 64, 1e9},
	{"cache", "l1_size", CXS_CFG_SIZE, "48KiB", "L1 data cache per core.", NULL, 64, 1e12},
	{"cache", "l1_ways", CXS_CFG_UINT, "12", "L1 associativity.", NULL, 1, 64},
	{"cache", "l1_latency", CXS_CFG_UINT, "5", "L1 round-trip latency in core cycles.", NULL, 1, 1e6},
	{"cache", "l2_size", CXS_CFG_SIZE, "512KiB", "L2 per core.", NULL, 64, 1e12},
	{"cache", "l2_ways", CXS_CFG_UINT, "8", "L2 associativity.", NULL, 1, 64},
	{"cache", "l2_latency", CXS_CFG_UINT, "13", "L2 round-trip latency in core cycles.", NULL, 1, 1e6},
	{"cache", "l3_size", CXS_CFG_SIZE, "8MiB", "Shared inclusive L3 per CN.", NULL, 64, 1e12},
	{"cache", "l3_ways", CXS_CFG_UINT, "16", "L3 associativity.", NULL, 1, 64},
	{"cache", "l3_latency", CXS_CFG_UINT, "36", "L3 round-trip latency in core cycles.", NULL, 1, 1e6},
	{"fabric", "link_latency", CXS_CFG_TIME, "40ns", "Node to switch, one way (200 ns round trip with the switch and a 20 ns directory lookup).", NULL, 1, 1e12},
	{"fabric", "switch_latency", CXS_CFG_TIME, "10ns", "Switch traversal.", NULL, 0, 1e12},
	{"fabric", "link_gbps", CXS_CFG_DOUBLE, "125", "Link bandwidth per direction in GB/s (4 TB/s over 32 ports).", NULL, 0.001, 1e6},
	{"mn", "dir_latency", CXS_CFG_TIME, "20ns", "Home directory lookup per message.", NULL, 0, 1e12},
	{"mn", "dram_channels", CXS_CFG_UINT, "4", "DRAM channels per MN (and per CN's local memory).", NULL, 1, 64},
	{"mn", "dram_banks", CXS_CFG_UINT, "16", "Banks per channel.", NULL, 1, 256},
	{"coherence", "deadlock_timeout", CXS_CFG_TIME, "100us", "No progress on a request or a home transaction for this long stops the run as a deadlock.", NULL, 1, 1e18},
	{"coherence", "watchdog_interval", CXS_CFG_TIME, "10us", "How often each node checks for a deadlock.", NULL, 1, 1e18},
	{"coherence", "fault", CXS_CFG_ENUM, "none", "Fault injection for testing the checkers: ack_inv_keep_copy makes every CN acknowledge invalidations without dropping its copy (a stale-copy bug the exact check must report).", "none|ack_inv_keep_copy", 0, 0},
	{"coherence", "drop_message", CXS_CFG_ENUM, "none", "Fault injection for testing the deadlock detector: every node loses the first message of this type it sends.", "none|inv_ack|recall_data|put_ack|data_m", 0, 0},
	{"tester", "ops", CXS_CFG_UINT, "20000", "Operations per core.", NULL, 0, 1e15},
	{"tester", "stamp_lines", CXS_CFG_UINT, "16", "Shared lines written with write-order stamps.", NULL, 1, 1e6},
	{"tester", "counters", CXS_CFG_UINT, "4", "Shared fetch-and-add counters (one line).", NULL, 0, CXS_TESTER_MAX_COUNTERS},
	{"tester", "private_words", CXS_CFG_UINT, "64", "Private words per core.", NULL, 0, 1e6},
	{"tester", "load_share", CXS_CFG_DOUBLE, "0.5", "Share of loads among stamp-line operations.", NULL, 0, 1},
	{"tester", "rmw_share", CXS_CFG_DOUBLE, "0.15", "Share of operations on the counters.", NULL, 0, 1},
	{"tester", "private_share", CXS_CFG_DOUBLE, "0.1", "Share of operations on private words.", NULL, 0, 1},
	{"tester", "max_think_cycles", CXS_CFG_UINT, "20", "Uniform random delay before each operation, in core cycles.", NULL, 0, 1e9},
	{"system", "protocol", CXS_CFG_ENUM, "wb", "How remote (CXL) stores reach memory: wb (MESI write-back) or wt (write-through: every remote store is written to its MN, and under TSO the next store waits for the MN's ack; DIKTAMO Fig. 2).", "wb|wt", 0, 0},
	{"workload", "kernel", CXS_CFG_STRING, "tester", "What the cores run: tester (the random coherence tester) or a built-in thread program on out-of-order cores (cxlsim --list-kernels).", NULL, 0, 0},
	{"workload", "size", CXS_CFG_UINT, "0", "The kernel's size parameter (0: its default; see --list-kernels).", NULL, 0, 1e15},
	{"workload", "ops", CXS_CFG_UINT, "0", "Operations per thread for kernels that take a count (ycsb: get/put operations); 0: the kernel's default.", NULL, 0, 1e12},
	{"workload", "variant", CXS_CFG_UINT, "0", "The kernel's variant or second parameter (0: its default; cxlsim --list-kernels says what it is for each kernel, e.g. ptrchase: independent chains, graph kernels: 0 power-law, 1 road-like).", NULL, 0, 1e12},
	{"workload", "seed", CXS_CFG_UINT, "1", "Seed of the kernel's data and of its threads' random streams.", NULL, 0, 1e18},
	{"workload", "trace", CXS_CFG_STRING, "", "With kernel = trace: the per-core trace files, a path pattern where %u stands for the thread (node * cores_per_cn + core), e.g. traces/core%u.trace.", NULL, 0, 0},
	{"workload", "check", CXS_CFG_BOOL, "true", "Run the kernel natively first and compare the simulated machine's results with it word for word (deterministic kernels).", NULL, 0, 0},
	{"core", "rob", CXS_CFG_UINT, "224", "Reorder buffer entries (instructions in flight).", NULL, 1, 1048576},
	{"core", "lq", CXS_CFG_UINT, "128", "Load queue entries (DIKTAMO Table II).", NULL, 1, 1048576},
	{"core", "sq", CXS_CFG_UINT, "72", "Store queue entries, store buffer included (DIKTAMO Table II).", NULL, 1, 1048576},
	{"core", "lfb", CXS_CFG_UINT, "12", "Line fill buffers: L1 misses in flight per core.", NULL, 1, 64},
	{"core", "l1_prefetch", CXS_CFG_BOOL, "true", "L1 next-line stream prefetcher.", NULL, 0, 0},
	{"core", "l2_prefetch", CXS_CFG_BOOL, "true", "L2 stream prefetcher.", NULL, 0, 0},
	{"core", "fault", CXS_CFG_ENUM, "none", "Fault injection for testing the litmus tests: fence_noop (fences drain nothing), sb_parallel (the store buffer drains all at once, out of order), no_replay (loads that performed out of order are kept), unordered (sb_parallel + no_replay).", "none|fence_noop|sb_parallel|no_replay|unordered", 0, 0},
	{"tester", "exact_check", CXS_CFG_BOOL, "false", "Also check every load of CXL memory against the latest write performed before it in simulated time (a shadow memory; needs every CN in one process, e.g. -np 1).", NULL, 0, 0},
};
const size_t cxs_memsys_nkeys = sizeof cxs_memsys_keys / sizeof cxs_memsys_keys[0];

/* ---- per-run parameters ---------------------------------------------------- */

static struct {
	uint32_t cns, mns, cores;
	struct cxs_cn_params cn;
	struct cxs_addr_map map;
	struct cxs_fabric_params fab;
	struct cxs_dram_params dram;
	cxs_time dir_latency, deadlock_timeout, watchdog;
	struct cxs_tester_params tester;
	int drop_type; /* enum cxs_msg_type, or -1 */
	bool exact;
	bool fault_keep_copy;
	bool configured;
	/* built-in workload on out-of-order cores (kernel != NULL) */
	const struct cxs_kernel *kernel;
	struct cxs_kimage img;
	uint8_t *reference;
	uint64_t private_stride; /* bytes of local memory per thread */
	struct cxs_core_params core;
	struct cxs_tier tier;  /* CAMP's two tiers (tier.h); placement off: classic layout */
	uint64_t shared_base;  /* address of the kernel's shared byte 0 */
} P;

/*
 * The exact checker (tester.exact_check). The random tester's own checks are
 * local to a core and cannot see a stale copy that keeps returning an old
 * value; this one can: with every CN in one process, events are performed in
 * global simulated-time order, so a shadow of every CXL line, updated when a
 * write is performed, holds exactly the value a load performed now must see.
 * Results do not depend on the rank count, so checking the np = 1 run checks
 * the run every other rank count reproduces. It reaches across nodes, which
 * models must not do: it is a checker, refused unless all CNs share a process.
 */
struct shadow_line {
	uint8_t data[CXS_LINE_BYTES];
	uint32_t writer;
	cxs_time written;
};
static struct cxs_line_map shadow;
static uint32_t cns_here; /* CNs initialised in this process */

static void list_kernels(char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = 0;
	for (size_t i = 0; cxs_kernels[i] && o + 1 < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "", cxs_kernels[i]->name);
}

/*
 * workload.kernel: builds the kernel's image (every process the same way)
 * and, for a deterministic kernel with workload.check, its reference run.
 */
static int configure_workload(const struct cxs_config *cfg, const struct cxs_addr_map_params *mp,
			      char *err, size_t errlen)
{
	const char *name = cxs_config_str(cfg, "workload", "kernel");
	cxs_core_default_params(&P.core);
	P.core.rob = (uint32_t)cxs_config_uint(cfg, "core", "rob");
	P.core.lq = (uint32_t)cxs_config_uint(cfg, "core", "lq");
	P.core.sq = (uint32_t)cxs_config_uint(cfg, "core", "sq");
	P.core.lfb = (uint32_t)cxs_config_uint(cfg, "core", "lfb");
	P.core.l1_prefetch = cxs_config_bool(cfg, "core", "l1_prefetch");
	P.core.l2_prefetch = cxs_config_bool(cfg, "core", "l2_prefetch");
	P.core.write_through = cxs_config_enum(cfg, "system", "protocol") == 1;
	P.core.fault = (uint8_t)cxs_config_enum(cfg, "core", "fault");
	P.core.cycle_ps = P.cn.cycle_ps;
	if (strcmp(name, "tester") == 0)
		return 0;
	char sub[512];
	P.kernel = cxs_kernel_find(name);
	if (!P.kernel) {
		list_kernels(sub, sizeof sub);
		snprintf(err, errlen, "%s: workload.kernel: unknown kernel '%s' (known: tester, %s)",
			 cxs_config_origin(cfg, "workload", "kernel"), name, sub);
		return -1;
	}
	uint64_t size = cxs_config_uint(cfg, "workload", "size");
	P.img = (struct cxs_kimage){.size = size ? size : P.kernel->default_size,
				    .seed = cxs_config_uint(cfg, "workload", "seed"),
				    .ops = cxs_config_uint(cfg, "workload", "ops"),
				    .variant = cxs_config_uint(cfg, "workload", "variant"),
				    .nthreads = P.cns * P.cores};
	const char *trace = cxs_config_str(cfg, "workload", "trace");
	if (strcmp(name, "trace") == 0 && trace[0] && !(P.img.info = strdup(trace))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (P.kernel->build(&P.img, sub, sizeof sub) != 0) {
		const char *key = strcmp(name, "trace") == 0 ? "trace" : "size";
		snprintf(err, errlen, "%s: workload.%s: %s: %s",
			 cxs_config_origin(cfg, "workload", key), key, P.kernel->name, sub);
		return -1;
	}
	P.private_stride = (P.img.private_bytes + 4095) & ~UINT64_C(4095);
	if (cxs_tier_shared_base(&P.tier, P.private_stride * P.cores, P.img.shared_bytes,
				 mp->local_bytes, &P.shared_base) != 0 ||
	    (P.tier.placement == CXS_TIER_OFF && P.img.shared_bytes > mp->cxl_bytes) ||
	    P.private_stride * P.cores > mp->local_bytes) {
		snprintf(err, errlen,
			 "%s: %s at size %" PRIu64 " needs %" PRIu64 " bytes of CXL memory and %" PRIu64
			 " of local memory per CN: raise system.cxl_size / system.local_size",
			 cxs_config_origin(cfg, "workload", "size"), P.kernel->name, P.img.size,
			 P.img.shared_bytes, P.private_stride * P.cores);
		return -1;
	}
	if (P.kernel->deterministic && cxs_config_bool(cfg, "workload", "check") &&
	    cxs_kt_run_native(P.kernel, &P.img, &P.reference, sub, sizeof sub) != 0) {
		snprintf(err, errlen, "workload %s: %s", P.kernel->name, sub);
		return -1;
	}
	return 0;
}

int cxs_memsys_configure(const struct cxs_config *cfg, struct cxs_memsys_info *out, char *err,
			 size_t errlen)
{
	char sub[256];
	cxs_kimage_free(&P.img);
	free(P.reference);
	memset(&P, 0, sizeof P);
	P.cns = (uint32_t)cxs_config_uint(cfg, "system", "cns");
	P.mns = (uint32_t)cxs_config_uint(cfg, "system", "mns");
	P.cores = (uint32_t)cxs_config_uint(cfg, "system", "cores_per_cn");
	double ghz = cxs_config_double(cfg, "system", "core_ghz");
	struct cxs_addr_map_params mp = {
		.nmns = P.mns,
		.local_bytes = cxs_config_size_bytes(cfg, "system", "local_size"),
		.cxl_bytes = cxs_config_size_bytes(cfg, "system", "cxl_size"),
		.interleave_bytes = cxs_config_size_bytes(cfg, "system", "interleave"),
	};
	if (cxs_tier_configure(cfg, &P.tier, &mp, err, errlen) != 0)
		return -1;
	if (cxs_addr_map_init(&P.map, &mp, sub, sizeof sub) != 0) {
		snprintf(err, errlen, "[system]: %s", sub);
		return -1;
	}
	P.cn = (struct cxs_cn_params){
		.ncores = P.cores,
		.l1 = {cxs_config_size_bytes(cfg, "cache", "l1_size"),
		       (uint32_t)cxs_config_uint(cfg, "cache", "l1_ways"),
		       (uint32_t)cxs_config_uint(cfg, "cache", "l1_latency")},
		.l2 = {cxs_config_size_bytes(cfg, "cache", "l2_size"),
		       (uint32_t)cxs_config_uint(cfg, "cache", "l2_ways"),
		       (uint32_t)cxs_config_uint(cfg, "cache", "l2_latency")},
		.l3 = {cxs_config_size_bytes(cfg, "cache", "l3_size"),
		       (uint32_t)cxs_config_uint(cfg, "cache", "l3_ways"),
		       (uint32_t)cxs_config_uint(cfg, "cache", "l3_latency")},
		.cycle_ps = cxs_period_ps((uint64_t)llround(ghz * 1e9)),
		.map = &P.map,
		.first_mn_node = P.cns,
	};
	static const char *lv[] = {"l1", "l2", "l3"};
	const struct cxs_cache_geom *g[] = {&P.cn.l1, &P.cn.l2, &P.cn.l3};
	for (int i = 0; i < 3; i++) {
		struct cxs_cache probe;
		if (cxs_cache_init(&probe, g[i], sub, sizeof sub) != 0) {
			char key[16];
			snprintf(key, sizeof key, "%s_size", lv[i]);
			snprintf(err, errlen, "%s: cache.%s: %s", cxs_config_origin(cfg, "cache", key),
				 key, sub);
			return -1;
		}
		cxs_cache_destroy(&probe);
	}
	P.fab = (struct cxs_fabric_params){
		.link_latency = cxs_config_time_ps(cfg, "fabric", "link_latency"),
		.switch_latency = cxs_config_time_ps(cfg, "fabric", "switch_latency"),
		.link_bytes_per_s = (uint64_t)llround(cxs_config_double(cfg, "fabric", "link_gbps") * 1e9),
	};
	cxs_dram_default(&P.dram);
	P.dram.nchannels = (uint32_t)cxs_config_uint(cfg, "mn", "dram_channels");
	P.dram.nbanks = (uint32_t)cxs_config_uint(cfg, "mn", "dram_banks");
	P.dir_latency = cxs_config_time_ps(cfg, "mn", "dir_latency");
	P.deadlock_timeout = cxs_config_time_ps(cfg, "coherence", "deadlock_timeout");
	P.watchdog = cxs_config_time_ps(cfg, "coherence", "watchdog_interval");
	static const int drops[] = {-1, CXS_MSG_INV_ACK, CXS_MSG_RECALL_DATA, CXS_MSG_PUT_ACK,
				    CXS_MSG_DATA_M};
	P.drop_type = drops[cxs_config_enum(cfg, "coherence", "drop_message")];
	P.exact = cxs_config_bool(cfg, "tester", "exact_check");
	P.fault_keep_copy = cxs_config_enum(cfg, "coherence", "fault") == 1;
	cns_here = 0;
	if (P.exact) {
		cxs_line_map_free(&shadow);
		if (cxs_line_map_init(&shadow, sizeof(struct shadow_line)) != 0) {
			snprintf(err, errlen, "out of memory for tester.exact_check");
			return -1;
		}
	}
	P.tester = (struct cxs_tester_params){
		.ops = cxs_config_uint(cfg, "tester", "ops"),
		.stamp_lines = (uint32_t)cxs_config_uint(cfg, "tester", "stamp_lines"),
		.counters = (uint32_t)cxs_config_uint(cfg, "tester", "counters"),
		.private_words = (uint32_t)cxs_config_uint(cfg, "tester", "private_words"),
		.load_share = cxs_config_double(cfg, "tester", "load_share"),
		.rmw_share = cxs_config_double(cfg, "tester", "rmw_share"),
		.private_share = cxs_config_double(cfg, "tester", "private_share"),
		.max_think_cycles = (uint32_t)cxs_config_uint(cfg, "tester", "max_think_cycles"),
		.shared_base = CXS_CXL_BASE,
		.private_base = 0,
	};
	if (P.tester.rmw_share + P.tester.private_share > 1) {
		snprintf(err, errlen, "%s: tester.rmw_share + tester.private_share must not exceed 1",
			 cxs_config_origin(cfg, "tester", "rmw_share"));
		return -1;
	}
	if ((uint64_t)P.cores * P.tester.private_words * 8 > mp.local_bytes ||
	    ((uint64_t)P.tester.stamp_lines + 1) * CXS_LINE_BYTES > mp.cxl_bytes) {
		snprintf(err, errlen, "%s: tester: its words do not fit system.local_size / system.cxl_size",
			 cxs_config_origin(cfg, "tester", "stamp_lines"));
		return -1;
	}
	if (configure_workload(cfg, &mp, err, errlen) != 0)
		return -1;
	P.configured = true;
	out->nnodes = P.cns + P.mns;
	out->lookahead = cxs_fabric_min_latency(&P.fab);
	return 0;
}

/* ---- shared by both node types --------------------------------------------- */

struct node_common {
	struct cxs_lp *lp;
	struct cxs_port port;
	struct cxs_dram dram;
	bool dropped; /* coherence.drop_message already applied */
	bool watching; /* a watchdog event is scheduled */
};

static void arm(struct node_common *nc)
{
	if (!nc->watching) {
		nc->watching = true;
		cxs_schedule(nc->lp, P.watchdog, EV_WATCHDOG, NULL, 0);
	}
}

/*
 * Sends m at `when` (>= now) through our port. A message for later is held as
 * a local event and given to the port at its time, so that each egress link
 * serves messages in time order: giving it to the port now would make every
 * message emitted after it, even one ready at once, queue behind it.
 */
static void port_send(struct node_common *nc, cxs_time when, const struct cxs_coh_msg *m)
{
	cxs_time now = cxs_now(nc->lp);
	if (when > now) {
		cxs_schedule(nc->lp, when - now, EV_SEND, m, sizeof *m);
		return;
	}
	if (P.drop_type >= 0 && m->type == (uint32_t)P.drop_type && !nc->dropped) {
		/* Fault injection for the deadlock test: this message is lost. */
		nc->dropped = true;
		cxs_log(CXS_LOG_WARN, now, "node %u: dropping %s for line %#" PRIx64
			" (coherence.drop_message)", m->src, cxs_msg_info(m->type)->name, m->line);
		return;
	}
	cxs_time flight = cxs_port_send(&nc->port, &P.fab, when, m->type);
	cxs_send(nc->lp, m->dst, (when - now) + flight, EV_MSG, m, sizeof *m);
}

/* A message arrived: ingress queueing, then the agent (now or by a local event). */
static bool arrived(struct node_common *nc, const struct cxs_event *ev)
{
	const struct cxs_coh_msg *m = (const void *)ev->data;
	arm(nc);
	cxs_time done = cxs_port_receive(&nc->port, &P.fab, ev->time, m->type);
	if (done > ev->time) {
		cxs_schedule(nc->lp, done - ev->time, EV_DELIVER, m, sizeof *m);
		return false;
	}
	return true;
}

static int common_init(struct node_common *nc, struct cxs_lp *lp)
{
	char err[256];
	nc->lp = lp;
	if (!P.configured)
		cxs_bug(lp, "memsys: cxs_memsys_configure was not called before the run");
	if (cxs_port_init(&nc->port, cxs_lp_stats(lp)) != 0 ||
	    cxs_dram_init(&nc->dram, cxs_tier_dram(&P.tier, cxs_lp_id(lp) < P.cns, &P.dram), err,
			  sizeof err) != 0) {
		cxs_lp_fail(lp, 2, "node %u: %s", cxs_lp_id(lp), err);
		return -1;
	}
	return 0;
}

static void dram_counters(struct node_common *nc)
{
	struct cxs_stats *st = cxs_lp_stats(nc->lp);
	*cxs_stats_counter(st, "dram", "reads", "lines", "DRAM reads") = nc->dram.reads;
	*cxs_stats_counter(st, "dram", "writes", "lines", "DRAM writes") = nc->dram.writes;
	*cxs_stats_counter(st, "dram", "bytes", "bytes", "bytes moved to or from DRAM") = nc->dram.bytes;
	*cxs_stats_counter(st, "dram", "row_hits", "accesses", "accesses that found their row open") =
		nc->dram.row_hits;
	*cxs_stats_counter(st, "dram", "bus_busy_ps", "ps",
			   "data bus occupancy summed over channels: bandwidth used = bytes / end time") =
		nc->dram.busy_bus_ps;
	*cxs_stats_counter(st, "dram", "latency_ps_total", "ps", "sum of access latencies") =
		nc->dram.total_latency_ps;
}

/* ---- MN ------------------------------------------------------------------- */

struct mn_node {
	struct node_common c;
	struct cxs_home home;
};

static void mn_send(void *ctx, cxs_time when, const struct cxs_coh_msg *m)
{
	port_send(&((struct mn_node *)ctx)->c, when, m);
}

static cxs_time mn_dram(void *ctx, cxs_time now, uint64_t line, int is_write)
{
	struct mn_node *mn = ctx;
	struct cxs_addr_target t = cxs_addr_map_lookup(&P.map, line << CXS_LINE_SHIFT);
	return cxs_dram_access(&mn->c.dram, now, t.mn_line, is_write);
}

/* Initial contents of a line (MN, or CN-local in tier mode): the workload's shared image, else zeros. */
static void mn_init_line(void *ctx, uint64_t line, uint8_t out[CXS_LINE_BYTES])
{
	(void)ctx;
	uint64_t off = (line << CXS_LINE_SHIFT) - P.shared_base;
	if (P.img.shared && (line << CXS_LINE_SHIFT) >= P.shared_base && off < P.img.shared_bytes)
		memcpy(out, P.img.shared + off, CXS_LINE_BYTES);
	else
		memset(out, 0, CXS_LINE_BYTES);
}

static int mn_init(struct cxs_lp *lp, void *state)
{
	struct mn_node *mn = state;
	if (common_init(&mn->c, lp) != 0)
		return -1;
	struct cxs_home_env env = {.ctx = mn, .send = mn_send, .dram = mn_dram,
				   .init_line = mn_init_line};
	if (cxs_home_init(&mn->home, cxs_lp_id(lp), P.cns, P.dir_latency, &env,
			  cxs_lp_stats(lp)) != 0) {
		cxs_lp_fail(lp, 2, "node %u: cannot create the home directory", cxs_lp_id(lp));
		return -1;
	}
	return 0;
}

static void mn_event(struct cxs_lp *lp, void *state, const struct cxs_event *ev)
{
	struct mn_node *mn = state;
	char err[512] = "";
	switch (ev->type) {
	case EV_MSG:
		if (!arrived(&mn->c, ev))
			return;
		/* fall through */
	case EV_DELIVER:
		if (cxs_home_handle(&mn->home, ev->time, (const void *)ev->data, err, sizeof err) != 0)
			cxs_lp_fail(lp, 3, "protocol error: %s", err);
		return;
	case EV_SEND:
		port_send(&mn->c, ev->time, (const void *)ev->data);
		return;
	case EV_WATCHDOG:
		mn->c.watching = false;
		if (cxs_home_stuck(&mn->home, ev->time, P.deadlock_timeout, err, sizeof err))
			cxs_lp_fail(lp, 4, "deadlock: %s", err);
		else if (mn->home.nbusy)
			arm(&mn->c);
		return;
	default:
		cxs_bug(lp, "MN got event type %u", ev->type);
	}
}

static void mn_finalize(struct cxs_lp *lp, void *state)
{
	struct mn_node *mn = state;
	(void)lp;
	dram_counters(&mn->c);
	cxs_home_free(&mn->home);
	cxs_dram_destroy(&mn->c.dram);
}

static const struct cxs_node_type mn_type = {
	.name = "mn",
	.state_size = sizeof(struct mn_node),
	.init = mn_init,
	.event = mn_event,
	.finalize = mn_finalize,
};

/* ---- CN ------------------------------------------------------------------- */

struct cn_node {
	struct node_common c;
	struct cxs_cn *agent;
	struct cxs_tester *cores;   /* tester mode */
	struct cxs_kt **kts;        /* workload mode: a program and a core per core */
	struct cxs_core **ooo;
	bool end_check_armed;
};

/* ---- out-of-order cores: their environment ---------------------------------- */

static int ooo_request(void *ctx, cxs_time t, const struct cxs_mem_req *r, char *err, size_t len)
{
	struct cn_node *cn = ctx;
	arm(&cn->c);
	return cxs_cn_request(cn->agent, t, r, err, len);
}

static int ooo_where(void *ctx, uint32_t core, uint64_t addr, bool write)
{
	struct cn_node *cn = ctx;
	int lvl = cxs_cn_where(cn->agent, core, addr, write);
	return lvl < CXS_LVL_LOCAL && cxs_cn_local_pending(cn->agent, addr, cxs_now(cn->c.lp))
		       ? CXS_LVL_LOCAL : lvl;
}

static bool ooo_remote(void *ctx, uint64_t addr)
{
	(void)ctx;
	return cxs_addr_map_lookup(&P.map, addr).kind == CXS_ADDR_CXL;
}

static void ooo_wake(void *ctx, uint32_t core, cxs_time t)
{
	struct cn_node *cn = ctx;
	cxs_schedule(cn->c.lp, t - cxs_now(cn->c.lp), EV_CORE_STEP, &core, sizeof core);
}

static void cn_invalidated(void *ctx, cxs_time t, uint32_t core, uint64_t line)
{
	struct cn_node *cn = ctx;
	if (cn->ooo)
		cxs_core_invalidated(cn->ooo[core], t, line);
}

static int workload_init(struct cn_node *cn, struct cxs_lp *lp, char *err, size_t len)
{
	uint32_t node = cxs_lp_id(lp);
	cn->kts = calloc(P.cores, sizeof *cn->kts);
	cn->ooo = calloc(P.cores, sizeof *cn->ooo);
	if (!cn->kts || !cn->ooo) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	struct cxs_core_env env = {.ctx = cn, .request = ooo_request, .where = ooo_where,
				   .remote = ooo_remote, .wake = ooo_wake};
	for (uint32_t c = 0; c < P.cores; c++) {
		struct cxs_kt_params kp = {.kernel = P.kernel, .img = &P.img,
					   .reference = P.reference, .id = node * P.cores + c,
					   .shared_base = P.shared_base,
					   .private_base = c * P.private_stride};
		if (!(cn->kts[c] = cxs_kt_new(&kp, err, len)) ||
		    !(cn->ooo[c] = cxs_core_new(node, c, &P.core, &env, cn->kts[c],
						cxs_lp_stats(lp), err, len)))
			return -1;
		ooo_wake(cn, c, cxs_now(lp));
	}
	return 0;
}

/*
 * A workload that spins for ever must end as an error, not quietly at the end
 * time. The check is an event just before the end, armed only once a core is
 * still busy in the last eighth of the run, so that a run that finishes
 * earlier does not carry an event to the end (its final time stays its own).
 */
static void arm_end_check(struct cn_node *cn, struct cxs_lp *lp)
{
	cxs_time end = cxs_end_time(lp), now = cxs_now(lp);
	if (cn->end_check_armed || end == CXS_TIME_INF || now < end - end / 8 || now + 1 >= end)
		return;
	cn->end_check_armed = true;
	cxs_schedule(lp, end - 1 - now, EV_END_CHECK, NULL, 0);
}

static void workload_end_check(struct cn_node *cn, struct cxs_lp *lp)
{
	for (uint32_t c = 0; c < P.cores; c++)
		if (!cxs_core_done(cn->ooo[c])) {
			char d[512];
			cxs_core_describe(cn->ooo[c], d, sizeof d);
			cxs_lp_fail(lp, 4,
				    "workload %s did not finish by engine.end_time (spinning for "
				    "ever?): node %u %s",
				    P.kernel->name, cxs_lp_id(lp), d);
			return;
		}
}

/* Per-CN workload figures: the ROI's bounds and the programs' result counters. */
static void workload_counters(struct cn_node *cn, struct cxs_lp *lp)
{
	struct cxs_stats *st = cxs_lp_stats(lp);
	uint64_t *b = cxs_stats_counter(st, "workload", "roi_begin_ps", "ps",
					"earliest start of the region of interest over the CN's cores");
	uint64_t *e = cxs_stats_counter(st, "workload", "roi_end_ps", "ps",
					"latest end of the region of interest over the CN's cores");
	*b = UINT64_MAX;
	*e = 0;
	for (uint32_t c = 0; c < P.cores; c++) {
		if (!cn->ooo || !cn->ooo[c])
			continue;
		cxs_core_finish_counters(cn->ooo[c]);
		cxs_time rb = cxs_core_roi_begin(cn->ooo[c]), re = cxs_core_roi_end(cn->ooo[c]);
		if (rb < *b)
			*b = rb;
		if (re > *e)
			*e = re;
		uint64_t v;
		const char *name;
		for (size_t i = 0; (name = cxs_kt_result_at(cn->kts[c], i, &v)); i++)
			*cxs_stats_counter(st, "workload", name, "count",
					   "the kernel's own result counter, summed over the CN's cores") += v;
	}
	if (*b == UINT64_MAX)
		*b = 0;
}

static void cn_send(void *ctx, cxs_time when, const struct cxs_coh_msg *m)
{
	port_send(&((struct cn_node *)ctx)->c, when, m);
}

static void cn_complete(void *ctx, cxs_time when, const struct cxs_mem_req *r, uint64_t value)
{
	struct cn_node *cn = ctx;
	struct core_done d = {.r = *r, .value = value};
	cxs_schedule(cn->c.lp, when - cxs_now(cn->c.lp), EV_CORE_DONE, &d, sizeof d);
}

static cxs_time cn_local_dram(void *ctx, cxs_time now, uint64_t line, int is_write)
{
	return cxs_dram_access(&((struct cn_node *)ctx)->c.dram, now, line, is_write);
}

static void cn_perform(void *ctx, cxs_time t, const struct cxs_mem_req *r, uint64_t value,
		       int is_write)
{
	struct cn_node *cn = ctx;
	if (!P.exact || cxs_addr_map_lookup(&P.map, r->addr).kind != CXS_ADDR_CXL)
		return;
	if (cns_here != P.cns) {
		cxs_lp_fail(cn->c.lp, 2,
			    "tester.exact_check needs every CN in one process (%u of %u here): run "
			    "with -np 1 or map all CNs to one rank",
			    cns_here, P.cns);
		return;
	}
	uint8_t size = r->op == CXS_OP_STORE_STAMP ? 8 : r->size;
	uint32_t off = (uint32_t)(r->addr & (CXS_LINE_BYTES - 1));
	struct shadow_line *sl = cxs_line_map_get(&shadow, r->addr >> CXS_LINE_SHIFT, NULL);
	if (!sl) {
		cxs_lp_fail(cn->c.lp, 2, "out of memory in tester.exact_check");
		return;
	}
	uint64_t want = 0;
	for (uint8_t i = 0; i < size; i++)
		want |= (uint64_t)sl->data[off + i] << (8 * i);
	if (is_write) {
		for (uint8_t i = 0; i < size; i++)
			sl->data[off + i] = (uint8_t)(value >> (8 * i));
		sl->writer = cxs_lp_id(cn->c.lp);
		sl->written = t;
	} else if (value != want) {
		cxs_lp_fail(cn->c.lp, 5,
			    "coherence violation (exact check): node %u core %u load of 0x%" PRIx64
			    " performed at %" PRIu64 " ps returned 0x%" PRIx64
			    ", but the latest write before it (node %u at %" PRIu64 " ps) left 0x%" PRIx64
			    "; the CN's copy is stale (state %s)",
			    cxs_lp_id(cn->c.lp), r->core, r->addr, t, value, sl->writer, sl->written, want,
			    cxs_cn_line_state(cn->agent, r->addr >> CXS_LINE_SHIFT));
	}
}

static void issue_next(struct cn_node *cn, uint32_t core)
{
	struct cxs_mem_req r;
	cxs_time think;
	if (!cxs_tester_next(&cn->cores[core], cn->c.lp, &r, &think, P.cn.cycle_ps))
		return;
	r.issued = cxs_now(cn->c.lp) + think;
	cxs_schedule(cn->c.lp, think, EV_CORE_ISSUE, &r, sizeof r);
}

static int cn_init(struct cxs_lp *lp, void *state)
{
	struct cn_node *cn = state;
	char err[256];
	if (common_init(&cn->c, lp) != 0)
		return -1;
	struct cxs_cn_env env = {.ctx = cn, .send = cn_send, .complete = cn_complete,
				 .local_dram = cn_local_dram, .perform = cn_perform,
				 .invalidated = cn_invalidated, .init_local = mn_init_line};
	cns_here++;
	cn->agent = cxs_cn_new(cxs_lp_id(lp), &P.cn, &env, cxs_lp_stats(lp), err, sizeof err);
	if (cn->agent && P.kernel) {
		if (workload_init(cn, lp, err, sizeof err) != 0) {
			cxs_lp_fail(lp, 2, "node %u: %s", cxs_lp_id(lp), err);
			return -1;
		}
		return 0;
	}
	cn->cores = calloc(P.cores, sizeof *cn->cores);
	if (!cn->agent || !cn->cores) {
		cxs_lp_fail(lp, 2, "node %u: %s", cxs_lp_id(lp), cn->agent ? "out of memory" : err);
		return -1;
	}
	for (uint32_t c = 0; c < P.cores; c++)
		if (cxs_tester_init(&cn->cores[c], &P.tester, cxs_lp_id(lp), c, cxs_lp_stats(lp)) != 0) {
			cxs_lp_fail(lp, 2, "node %u: cannot create the tester", cxs_lp_id(lp));
			return -1;
		}
	for (uint32_t c = 0; c < P.cores; c++)
		issue_next(cn, c);
	return 0;
}

static void cn_event(struct cxs_lp *lp, void *state, const struct cxs_event *ev)
{
	struct cn_node *cn = state;
	char err[2048] = "";
	switch (ev->type) {
	case EV_MSG:
		if (!arrived(&cn->c, ev))
			return;
		/* fall through */
	case EV_DELIVER: {
		const struct cxs_coh_msg *m = (const void *)ev->data;
		if (P.fault_keep_copy && m->type == CXS_MSG_INV) {
			/* coherence.fault: acknowledge, but keep the (now stale) copy. */
			struct cxs_coh_msg ack = {.line = m->line, .type = CXS_MSG_INV_ACK,
						  .src = cxs_lp_id(lp), .dst = m->src};
			port_send(&cn->c, ev->time, &ack);
			return;
		}
		if (cxs_cn_handle(cn->agent, ev->time, m, err, sizeof err) != 0)
			cxs_lp_fail(lp, 3, "protocol error: %s", err);
		return;
	}
	case EV_CORE_ISSUE:
		arm(&cn->c);
		if (cxs_cn_request(cn->agent, ev->time, (const void *)ev->data, err, sizeof err) != 0)
			cxs_lp_fail(lp, 3, "%s", err);
		return;
	case EV_CORE_STEP: {
		uint32_t core;
		memcpy(&core, ev->data, sizeof core);
		arm_end_check(cn, lp);
		if (cxs_core_step(cn->ooo[core], ev->time, err, sizeof err) != 0)
			cxs_lp_fail(lp, cxs_core_failed(cn->ooo[core]) ? 6 : 3, "%s", err);
		return;
	}
	case EV_END_CHECK:
		workload_end_check(cn, lp);
		return;
	case EV_CORE_DONE: {
		const struct core_done *d = (const void *)ev->data;
		if (cn->ooo) {
			if (cxs_core_complete(cn->ooo[d->r.core], ev->time, &d->r, d->value, err,
					      sizeof err) != 0)
				cxs_lp_fail(lp, cxs_core_failed(cn->ooo[d->r.core]) ? 6 : 3, "%s", err);
			return;
		}
		if (cxs_tester_check(&cn->cores[d->r.core], ev->time, &d->r, d->value, err,
				     sizeof err) != 0) {
			cxs_lp_fail(lp, 5, "%s", err);
			return;
		}
		issue_next(cn, d->r.core);
		return;
	}
	case EV_SEND:
		port_send(&cn->c, ev->time, (const void *)ev->data);
		return;
	case EV_WATCHDOG:
		cn->c.watching = false;
		if (cxs_cn_stuck(cn->agent, ev->time, P.deadlock_timeout, err, sizeof err))
			cxs_lp_fail(lp, 4, "deadlock: %s", err);
		else if (cxs_cn_pending(cn->agent))
			arm(&cn->c);
		return;
	default:
		cxs_bug(lp, "CN got event type %u", ev->type);
	}
}

static void cn_finalize(struct cxs_lp *lp, void *state)
{
	struct cn_node *cn = state;
	(void)lp;
	dram_counters(&cn->c);
	for (uint32_t c = 0; cn->cores && c < P.cores; c++)
		cxs_tester_free(&cn->cores[c]);
	free(cn->cores);
	if (cn->ooo)
		workload_counters(cn, lp);
	for (uint32_t c = 0; cn->ooo && c < P.cores; c++) {
		cxs_core_free(cn->ooo[c]);
		cxs_kt_free(cn->kts[c]);
	}
	free(cn->ooo);
	free(cn->kts);
	cxs_cn_free(cn->agent);
	cxs_dram_destroy(&cn->c.dram);
}

static const struct cxs_node_type cn_type = {
	.name = "cn",
	.state_size = sizeof(struct cn_node),
	.init = cn_init,
	.event = cn_event,
	.finalize = cn_finalize,
};

const struct cxs_node_type *cxs_memsys_type_of(uint32_t node, void *ctx)
{
	(void)ctx;
	return node < P.cns ? &cn_type : &mn_type;
}
