/*
 * axle_model.c — the AXLE model (`--model axle`): its [axle] keys, how they
 * become the model's instance (the run's parameters and its workload, which
 * both node types read through cxs_lp_ctx), the fabric as the two node types
 * use it (the node port, include/cxlsim/nport.h), which node is which, and
 * the registry entry.
 *
 * Nodes: 2k is a host CN (src/axle/host.c), 2k+1 its CCM MN (src/axle/ccm.c),
 * for k < axle.pairs; every pair runs the same workload independently, so
 * pairs only add load on the engine (and a check that pairs agree).
 *
 * Fabric. Table III gives protocol round trips, not links: CXL.mem 70 ns and
 * CXL.io 350 ns. The port model (src/fabric/port.c) charges a one-way flight
 * of 2 x link + switch; here that is mem_rt / 2 (35 ns: link 17.5 ns, switch
 * 0), which is also the engine's lookahead, and a CXL.io or DMA message adds
 * (io_rt - mem_rt) / 2 = 140 ns on top, so its one way is io_rt / 2. Every
 * message is serialised at axle.link_gbps (64 GB/s: a CXL x16 link) by its
 * wire size from the registry (src/fabric/fabric.c), and counted per class.
 *
 * DRAM. Both nodes use the DRAM model (src/mem/dram.c) with its DDR timing
 * and Table III's 16 channels; the burst is DDR5-4800's 64 B in 1.667 ns
 * (38.4 GB/s per channel).
 *
 * Workload sizes. axle.size = small (default) runs each workload in seconds
 * of wall time; full is Table IV. Every size key left at 0 takes the preset
 * of the chosen size; KNN's shapes are small enough to be full in both.
 */
#include "cxlsim/axle.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "axle_priv.h"

#define K(key, type, def, doc) {"axle", key, type, def, doc, NULL, 0, 0}
#define KR(key, type, def, doc, lo, hi) {"axle", key, type, def, doc, NULL, lo, hi}
#define KE(key, def, choices, doc) {"axle", key, CXS_CFG_ENUM, def, doc, choices, 0, 0}

static const struct cxs_cfg_key axle_keys[] = {
	KE("mechanism", "axle", "rp|bs|axle|axle_irq", "Offload mechanism: remote polling, bulk synchronous, AXLE (local polling), AXLE with interrupts."),
	KE("workload", "knn_a", "knn_a|knn_b|knn_c|sssp|pagerank|ssb_q11|ssb_q12|llm|dlrm", "Table IV workload: (a)-(c) KNN, (d) SSSP, (e) PageRank, (f)(g) SSB Q1.1/Q1.2, (h) OPT-2.7B attention, (i) DLRM SLS."),
	KE("size", "small", "small|full", "Workload size preset: small runs in seconds, full is Table IV; any size key set to non-zero overrides the preset."),
	KR("seed", CXS_CFG_UINT, "42", "Seed of the generated input data.", 0, 0),
	KR("pairs", CXS_CFG_UINT, "1", "Host/CCM pairs (nodes 2k and 2k+1), each running the workload.", 1, 512),
	KR("knn_dim", CXS_CFG_UINT, "0", "KNN vector dimension (0: 2048, 1024, 512 for knn_a, b, c).", 0, 1 << 20),
	KR("knn_rows", CXS_CFG_UINT, "0", "KNN database rows (0: 128, 256, 512 for knn_a, b, c).", 0, 1 << 26),
	KR("knn_k", CXS_CFG_UINT, "10", "KNN neighbours kept.", 1, 1024),
	KR("vertices", CXS_CFG_UINT, "0", "Graph vertices (0: small 8192; full 264346 SSSP, 299067 PageRank).", 0, 1 << 28),
	KR("edges", CXS_CFG_UINT, "0", "Graph edges (0: small 22741 / 26781; full 733846 SSSP, 977676 PageRank).", 0, 1 << 30),
	KR("iterations", CXS_CFG_UINT, "0", "Graph rounds: PageRank's count (0: 5); SSSP's maximum (0: until no distance changes).", 0, 1 << 20),
	KR("ssb_rows", CXS_CFG_UINT, "0", "SSB lineorder rows (0: small 262144, full 6001171 = scale factor 1).", 0, 1 << 30),
	KR("tokens", CXS_CFG_UINT, "0", "LLM tokens in the KV cache (0: small 256, full 1024).", 0, 1 << 20),
	KR("hidden", CXS_CFG_UINT, "0", "LLM hidden size (0: small 640, full 2560 = OPT-2.7B).", 0, 1 << 16),
	KR("heads", CXS_CFG_UINT, "0", "LLM attention heads (0: small 8, full 32); must divide hidden.", 0, 1024),
	KR("dlrm_rows", CXS_CFG_UINT, "0", "DLRM embedding rows (0: small 65536, full 1M).", 0, 1 << 30),
	KR("dlrm_dim", CXS_CFG_UINT, "0", "DLRM embedding dimension (0: 256).", 0, 4096),
	KR("bags", CXS_CFG_UINT, "0", "DLRM bags (lookups) per batch (0: small 256, full 2048).", 0, 1 << 24),
	KR("pooling", CXS_CFG_UINT, "0", "DLRM rows summed per bag (0: small 32, full 80).", 0, 1 << 16),
	KR("ccm_pus", CXS_CFG_UINT, "16", "CCM processing units (Table III: 16).", 1, 4096),
	KR("ccm_threads", CXS_CFG_UINT, "16", "µthreads per CCM processing unit (Table III: 16).", 1, 256),
	KR("ccm_ghz", CXS_CFG_DOUBLE, "2", "CCM clock in GHz (Table III: 2).", 0.01, 100),
	KR("host_pus", CXS_CFG_UINT, "32", "Host processing units (Table III: 32).", 1, 4096),
	KR("host_threads", CXS_CFG_UINT, "2", "µthreads per host processing unit (Table III: 2).", 1, 256),
	KR("host_ghz", CXS_CFG_DOUBLE, "3", "Host clock in GHz (Table III: 3).", 0.01, 100),
	KE("ccm_sched", "rr", "rr|fifo", "CCM scheduler: rr deals partitions to µthreads in contiguous blocks, fifo serves one queue in offset order."),
	KE("host_sched", "rr", "rr|fifo", "Host scheduler: rr gives each µthread its own task list, fifo runs ready tasks in readiness order."),
	KR("mem_rt", CXS_CFG_TIME, "70ns", "CXL.mem round-trip protocol latency (Table III); half of it is the lookahead.", 2, 1e12),
	KR("io_rt", CXS_CFG_TIME, "350ns", "CXL.io round-trip protocol latency (Table III), also DMA writes' (one way = half).", 2, 1e12),
	KR("link_gbps", CXS_CFG_DOUBLE, "64", "Link bandwidth per direction in GB/s (CXL x16).", 0.001, 1e6),
	KR("dram_channels", CXS_CFG_UINT, "16", "DRAM channels of the CCM and of the host (Table III: DDR5-4800, 16).", 1, 256),
	KR("rp_interval", CXS_CFG_TIME, "1us", "RP: remote polling interval (Table III: 1 µs).", 1, 1e15),
	KR("poll_interval", CXS_CFG_TIME, "500ns", "AXLE: local polling interval (Table III: 50 ns, 500 ns, 5 µs).", 1, 1e15),
	KR("slot_size", CXS_CFG_SIZE, "32B", "AXLE: DMA slot = ring slot size (Table III: 32 B, 64 B).", 4, 64),
	KR("streaming_factor", CXS_CFG_SIZE, "32B", "AXLE: pending payload bytes that trigger a DMA request (Table III: 32 B, 64 B); 0 = use sf_pct.", 0, 1e12),
	KR("sf_pct", CXS_CFG_DOUBLE, "0", "AXLE: streaming factor as a percentage of a round's result (Fig. 14 SF_Y%), when streaming_factor = 0.", 0, 100),
	KR("dma_slots", CXS_CFG_UINT, "50000", "AXLE: payload and metadata ring capacity in slots (Table III: 50000).", 1, 1e9),
	KR("dma_slots_pct", CXS_CFG_DOUBLE, "0", "AXLE: if > 0, ring capacity as a percentage of a round's payload slots (Fig. 16 DMACp_Y%), overriding dma_slots.", 0, 100),
	KR("dma_prep", CXS_CFG_TIME, "500ns", "AXLE: DMA preparation latency per request (Table III).", 0, 1e15),
	KR("irq_latency", CXS_CFG_TIME, "50us", "AXLE with interrupts: handling latency per notification (Table III).", 0, 1e15),
	K("ooo", CXS_CFG_BOOL, "true", "AXLE: out-of-order streaming; off streams payloads strictly in result-offset order."),
	KR("host_mlp", CXS_CFG_UINT, "16", "RP/BS: result lines a host core loads at once over CXL.mem.", 1, 4096),
	KR("ccm_mlp", CXS_CFG_UINT, "16", "DRAM lines a CCM µthread has outstanding at once (a step waits for its slowest).", 1, 4096),
	KR("ccm_l1_lines", CXS_CFG_UINT, "512", "Data cache of a CCM unit in 64-byte lines, direct-mapped, emptied at every launch (0 = none).", 0, 1 << 24),
	KE("fault", "none", "none|tail_before_metadata|metadata_before_payload|ignore_credit", "Fault injection for testing the invariant checker: break one ordering or the flow control in the DMA executor."),
};
static const struct cxs_key_table axle_key_table = CXS_KEY_TABLE(axle_keys);

#undef K
#undef KR
#undef KE

static uint32_t pick(const struct cxs_config *cfg, const char *key, uint32_t preset)
{
	uint32_t v = (uint32_t)cxs_config_uint(cfg, "axle", key);
	return v ? v : preset;
}

static int bad(const struct cxs_config *cfg, const char *key, char *err, size_t errlen,
	       const char *what)
{
	snprintf(err, errlen, "%s: axle.%s: %s", cxs_config_origin(cfg, "axle", key), key, what);
	return -1;
}

static int workload_params(const struct cxs_config *cfg, uint64_t seed, struct axle_wl_params *p,
			   char *err, size_t errlen)
{
	unsigned wl = cxs_config_enum(cfg, "axle", "workload");
	bool full = cxs_config_enum(cfg, "axle", "size") == 1;
	static const uint32_t knn_dim[] = {2048, 1024, 512}, knn_rows[] = {128, 256, 512};

	memset(p, 0, sizeof *p);
	p->seed = cxs_config_uint(cfg, "axle", "seed") ^ (seed * UINT64_C(0x9e3779b97f4a7c15));
	p->knn_k = (uint32_t)cxs_config_uint(cfg, "axle", "knn_k");
	switch (wl) {
	case 0: case 1: case 2:
		p->kind = WL_KNN;
		p->knn_dim = pick(cfg, "knn_dim", knn_dim[wl]);
		p->knn_rows = pick(cfg, "knn_rows", knn_rows[wl]);
		break;
	case 3:
		p->kind = WL_SSSP;
		p->vertices = pick(cfg, "vertices", full ? 264346 : 8192);
		p->edges = pick(cfg, "edges", full ? 733846 : 22741);
		p->iterations = (uint32_t)cxs_config_uint(cfg, "axle", "iterations");
		break;
	case 4:
		p->kind = WL_PAGERANK;
		p->vertices = pick(cfg, "vertices", full ? 299067 : 8192);
		p->edges = pick(cfg, "edges", full ? 977676 : 26781);
		p->iterations = pick(cfg, "iterations", 5);
		break;
	case 5: case 6:
		p->kind = WL_SSB;
		p->ssb_rows = pick(cfg, "ssb_rows", full ? 6001171 : 262144);
		p->ssb_query = wl == 5 ? 1 : 2;
		break;
	case 7:
		p->kind = WL_LLM;
		p->tokens = pick(cfg, "tokens", full ? 1024 : 256);
		p->hidden = pick(cfg, "hidden", full ? 2560 : 640);
		p->heads = pick(cfg, "heads", full ? 32 : 8);
		if (p->hidden % p->heads != 0)
			return bad(cfg, "heads", err, errlen, "must divide axle.hidden");
		if (p->hidden / p->heads > 1024)
			return bad(cfg, "heads", err, errlen, "head dimension hidden / heads must not exceed 1024");
		break;
	default:
		p->kind = WL_DLRM;
		p->dlrm_rows = pick(cfg, "dlrm_rows", full ? 1000000 : 65536);
		p->dlrm_dim = pick(cfg, "dlrm_dim", 256);
		p->bags = pick(cfg, "bags", full ? 2048 : 256);
		p->pooling = pick(cfg, "pooling", full ? 80 : 32);
		if (p->dlrm_dim > 1024)
			return bad(cfg, "dlrm_dim", err, errlen, "must not exceed 1024 (a host task's stack buffer)");
		break;
	}
	if (p->kind == WL_SSSP || p->kind == WL_PAGERANK) {
		if (p->vertices < 2)
			return bad(cfg, "vertices", err, errlen, "a graph needs at least 2 vertices");
	}
	return 0;
}

static int configure_params(const struct cxs_config *cfg, struct axle_model *M, char *err,
			    size_t errlen)
{
	struct axle_params *P = &M->P;
	uint64_t seed = cxs_config_uint(cfg, "engine", "seed");
	cxs_time mem_rt = cxs_config_time_ps(cfg, "axle", "mem_rt");
	cxs_time io_rt = cxs_config_time_ps(cfg, "axle", "io_rt");

	if (io_rt < mem_rt)
		return bad(cfg, "io_rt", err, errlen, "must not be below axle.mem_rt");
	P->pairs = (uint32_t)cxs_config_uint(cfg, "axle", "pairs");
	P->mech = (enum axle_mech)cxs_config_enum(cfg, "axle", "mechanism");
	P->ccm_sched = (enum axle_sched)cxs_config_enum(cfg, "axle", "ccm_sched");
	P->host_sched = (enum axle_sched)cxs_config_enum(cfg, "axle", "host_sched");
	P->fault = (enum axle_fault)cxs_config_enum(cfg, "axle", "fault");
	P->ccm_pus = (uint32_t)cxs_config_uint(cfg, "axle", "ccm_pus");
	P->ccm_threads = (uint32_t)cxs_config_uint(cfg, "axle", "ccm_threads");
	P->host_pus = (uint32_t)cxs_config_uint(cfg, "axle", "host_pus");
	P->host_threads = (uint32_t)cxs_config_uint(cfg, "axle", "host_threads");
	if (P->host_pus * P->host_threads < 2)
		return bad(cfg, "host_threads", err, errlen,
			   "the host needs at least 2 µthreads (one runs the offload runtime)");
	P->ccm_cycle = cxs_period_ps((uint64_t)llround(cxs_config_double(cfg, "axle", "ccm_ghz") * 1e9));
	P->host_cycle = cxs_period_ps((uint64_t)llround(cxs_config_double(cfg, "axle", "host_ghz") * 1e9));
	P->io_extra = (io_rt - mem_rt) / 2;
	P->rp_interval = cxs_config_time_ps(cfg, "axle", "rp_interval");
	P->poll_interval = cxs_config_time_ps(cfg, "axle", "poll_interval");
	P->dma_prep = cxs_config_time_ps(cfg, "axle", "dma_prep");
	P->irq_latency = cxs_config_time_ps(cfg, "axle", "irq_latency");
	P->slot_bytes = (uint32_t)cxs_config_size_bytes(cfg, "axle", "slot_size");
	P->sf_bytes = cxs_config_size_bytes(cfg, "axle", "streaming_factor");
	P->sf_pct = cxs_config_double(cfg, "axle", "sf_pct");
	if (P->sf_bytes == 0 && P->sf_pct <= 0)
		return bad(cfg, "sf_pct", err, errlen,
			   "must be above 0 when axle.streaming_factor is 0");
	P->ooo = cxs_config_bool(cfg, "axle", "ooo");
	P->host_mlp = (uint32_t)cxs_config_uint(cfg, "axle", "host_mlp");
	P->ccm_mlp = (uint32_t)cxs_config_uint(cfg, "axle", "ccm_mlp");
	P->ccm_l1_lines = (uint32_t)cxs_config_uint(cfg, "axle", "ccm_l1_lines");
	P->fab.link_latency = mem_rt / 2 / 2;
	P->fab.switch_latency = mem_rt / 2 - 2 * P->fab.link_latency;
	P->fab.link_bytes_per_s = (uint64_t)llround(cxs_config_double(cfg, "axle", "link_gbps") * 1e9);
	cxs_dram_default(&P->ccm_dram);
	P->ccm_dram.nchannels = (uint32_t)cxs_config_uint(cfg, "axle", "dram_channels");
	P->ccm_dram.t_burst = 1667; /* 64 B at 38.4 GB/s (DDR5-4800 x64) */
	P->host_dram = P->ccm_dram;

	if (workload_params(cfg, seed, &P->wl, err, errlen) != 0)
		return -1;
	M->wl = axle_wl_new(&P->wl, err, errlen);
	if (!M->wl)
		return -1;
	struct axle_round r;
	axle_wl_round(M->wl, 0, &r);
	uint64_t slots = ((uint64_t)r.ntasks * r.task_bytes + P->slot_bytes - 1) / P->slot_bytes;
	double pct = cxs_config_double(cfg, "axle", "dma_slots_pct");
	P->dma_slots = pct > 0 ? (uint64_t)ceil(pct / 100.0 * (double)slots)
			       : cxs_config_uint(cfg, "axle", "dma_slots");
	if (P->dma_slots == 0)
		P->dma_slots = 1;
	P->configured = true;
	M->port = (struct cxs_nport_cfg){.fab = &P->fab, .ev_deliver = EV_DELIVER, .drop_type = -1};
	M->port.class_extra[CXS_CLASS_IO] = P->io_extra;
	M->port.class_extra[CXS_CLASS_DMA] = P->io_extra;
	return 0;
}

void axle_failure(struct cxs_lp *lp, void *state, const struct cxs_failure_notice *f)
{
	(void)state;
	cxs_lp_fail(lp, 9,
		    "AXLE: node %u failed at %llu ps; offloading has no failure model (the "
		    "paper's hosts and CCMs do not fail), so the run stops",
		    f->nodes[0], (unsigned long long)f->times[0]);
}

static void release(void *ctx)
{
	struct axle_model *M = ctx;
	if (!M)
		return;
	axle_wl_free(M->wl);
	free(M);
}

static const struct cxs_node_type *type_of(uint32_t node, void *ctx)
{
	(void)ctx;
	return node % 2 == 0 ? &axle_host_type : &axle_ccm_type;
}

static int configure(const struct cxs_config *cfg, struct cxs_model_run *out, char *err,
		     size_t errlen)
{
	struct axle_model *M = calloc(1, sizeof *M);
	if (!M) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (configure_params(cfg, M, err, errlen) != 0) {
		release(M);
		return -1;
	}
	*out = (struct cxs_model_run){
		.ctx = M,
		.nnodes = 2 * M->P.pairs,
		.lookahead = cxs_fabric_min_latency(&M->P.fab),
		.lookahead_section = "axle",
		.lookahead_key = "mem_rt",
		.type_of = type_of,
		.end_time = CXS_END_CAP,
	};
	return 0;
}

static const struct cxs_key_table *const tables[] = {&axle_key_table, NULL};

const struct cxs_model cxs_axle_model = {
	.name = "axle",
	.doc = "offloading from host CNs to CXL computational memory (CCM MNs)",
	.keys = tables,
	.configure = configure,
	.release = release,
};



/* ---- the fabric as both node types use it -------------------------------- */

enum cxs_msg_type axle_msg_type(const struct axle_params *P, uint32_t ev)
{
	switch ((enum axle_ev)ev) {
	case EV_LAUNCH: case EV_WB: case EV_FC: return CXS_MSG_MEM_WR;
	case EV_LAUNCH_CMP: return CXS_MSG_MEM_CMP;
	case EV_MBOX_ENQ: case EV_MBOX_DEQ: return CXS_MSG_MBOX;
	case EV_MBOX_ACK: case EV_POLL_REQ: case EV_POLL_RESP: return CXS_MSG_MMIO;
	case EV_RD: return CXS_MSG_MEM_RD;
	case EV_RD_DATA: return CXS_MSG_MEM_RD_DATA;
	case EV_DMA_PAYLOAD:
		return P->slot_bytes <= 32 ? CXS_MSG_DMA_PAYLOAD32 : CXS_MSG_DMA_WRITE;
	case EV_DMA_META: return CXS_MSG_DMA_META;
	case EV_DMA_META_TAIL: case EV_DMA_PAYLOAD_TAIL: return CXS_MSG_DMA_TAIL;
	case EV_MSI: return CXS_MSG_MSI;
	default: return CXS_MSG_TYPE_COUNT;
	}
}

void axle_send(struct cxs_nport *np, const struct axle_params *P, uint32_t dst,
	       const struct axle_msg *m)
{
	enum cxs_msg_type t = axle_msg_type(P, m->ev);
	if (t == CXS_MSG_TYPE_COUNT)
		cxs_bug(np->lp, "AXLE: event %u is not a message", m->ev);
	/* The message travels as its AXLE event number: the nodes' one numbering. */
	cxs_nport_send(np, cxs_now(np->lp), m->ev, dst, t, m, sizeof *m, 0);
}
