/*
 * fabric.c — the registry of message types and the fabric's timing parameters.
 *
 * Sizes on the wire
 * -----------------
 * Every message type has one fixed size, header + payload, which is what its
 * serialisation time and the per-class byte counters charge. The sizes follow
 * the CXL 2.0 68-byte flit, whose body is four 16-byte slots: a CXL.mem
 * request, response or snoop fills one header slot, and a cache line travels
 * in four data slots behind it. Hence:
 *
 *   type                                     bytes   why
 *   GETS GETM PUTE INV INV_ACK RECALL_S/I      16    one header slot, no data
 *   RECALL_ACK PUT_ACK WT_ACK
 *   DATA_S DATA_E DATA_M PUTM RECALL_DATA      80    header + 64-byte line
 *   WT (write-through: a CXL MemWr of the line)
 *   MBOX MMIO MSI (CXL.io)                     24    16-byte TLP header (4 DW)
 *                                                    + one 8-byte data word
 *   DMA_WRITE                                  80    header + 64-byte line: a
 *                                                    posted write of one line
 *   REPL                                  24 + 8n    header + 8 bytes of fields a
 *                                                    CXL.mem header lacks (requester
 *                                                    id, word mask) + the n words'
 *                                                    values (Fig. 4a); 32 for one
 *   REPL_ACK                                   16    header only
 *   VAL                                   24 + 8v    header (the 7-bit TS fits in
 *                                                    it) + the stamp that orders
 *                                                    the writes of two CNs
 *                                                    (diktamo.h) + v word values
 *                                                    the REPL could not carry
 *                                                    (atomics, sub-word stores)
 *   LOG_DUMP                           80 per 64 B   compressed log saved in 64-byte
 *                                                    messages (§IV-E): header + 64
 *                                                    bytes each, one event per dump
 *   LOG_SYNC                                   16    the dump's synchronisation
 *   recovery requests and responses            16    control only
 *   FETCH_LATEST_RESP                          80    header + the line's latest
 *                                                    version
 *   MEM_RD MEM_CMP (AXLE, non-coherent)        16    M2S Req / S2M NDR: header only
 *   MEM_RD_DATA MEM_WR                         80    S2M DRS / M2S RwD: header +
 *                                                    one line (a kernel launch or a
 *                                                    head-index store is one RwD)
 *   DMA_PAYLOAD32                              48    posted write of a 32-byte
 *                                                    payload slot (64-byte slots
 *                                                    use DMA_WRITE)
 *   DMA_META                                   32    posted write of one 16-byte
 *                                                    metadata record
 *   DMA_TAIL                                   24    posted write of one 8-byte
 *                                                    ring tail index
 *
 * The 2-byte protocol id and 2-byte CRC of each 68-byte flit are not counted:
 * link_bytes_per_s is taken as the payload rate of a link, which is also how
 * DIKTAMO quotes the switch (4 TB/s aggregate, Table II).
 *
 * Messages sized by their fields (REPL, VAL, LOG_DUMP and the recovery
 * replies) say their own size (nport.h, wire_bytes); the table gives the size
 * of the smallest one. A log dump to one MN travels as one event with all its
 * bytes, charged as the 64-byte messages the paper sends (§IV-E).
 *
 * Names are lower_case versions of the enum names ("gets", "recall_i",
 * "fetch_latest_resp") because they become counter names (tx_<name>), which
 * must be HDF5 link names; classes are "mem", "io", "dma", "repl", "recovery".
 *
 * Serialisation arithmetic
 * ------------------------
 * ser(B) = ceil(B * 1e12 / bw) ps. B * 1e12 needs up to 72 bits, so it is
 * computed as B * 5^12 (< 2^60 for any 32-bit B) followed by twelve exact
 * doublings of the quotient and remainder (1e12 = 5^12 * 2^12), each keeping
 * a * 2^k = q * bw + r with 0 <= r < bw and never forming a value above bw.
 * That is exact for every B and every bw > 0, with no 128-bit type. The
 * result needs more than 64 bits only if bw < 256 B/s; it then saturates.
 */
#include "cxlsim/fabric.h"
#include "cxlsim/model.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>

/* CXL.mem slot and line sizes behind the table below. */
enum {
	HDR_BYTES = 16,
	LINE_BYTES = 64,
	WORD_BYTES = 8,
	DATA_MSG_BYTES = HDR_BYTES + LINE_BYTES,
	IO_MSG_BYTES = HDR_BYTES + WORD_BYTES,
	REPL_MSG_BYTES = HDR_BYTES + WORD_BYTES + 8,
	AXLE_PAYLOAD32_BYTES = HDR_BYTES + 32,
	AXLE_META_BYTES = HDR_BYTES + 16,
};

_Static_assert(DATA_MSG_BYTES == 80, "a line message is one header slot + four data slots");
_Static_assert(IO_MSG_BYTES == 24, "a CXL.io message is a 4-DW TLP header + one word");
_Static_assert(REPL_MSG_BYTES == 32, "a REPL carries one word and its extra fields");

#define MSG(nm, cls_, bytes) { .name = (nm), .cls = CXS_CLASS_##cls_, .wire_bytes = (bytes) }

static const struct cxs_msg_info msg_table[] = {
	[CXS_MSG_GETS]        = MSG("gets", MEM, HDR_BYTES),
	[CXS_MSG_GETM]        = MSG("getm", MEM, HDR_BYTES),
	[CXS_MSG_PUTM]        = MSG("putm", MEM, DATA_MSG_BYTES),
	[CXS_MSG_PUTE]        = MSG("pute", MEM, HDR_BYTES),
	[CXS_MSG_INV_ACK]     = MSG("inv_ack", MEM, HDR_BYTES),
	[CXS_MSG_RECALL_DATA] = MSG("recall_data", MEM, DATA_MSG_BYTES),
	[CXS_MSG_RECALL_ACK]  = MSG("recall_ack", MEM, HDR_BYTES),
	[CXS_MSG_DATA_S]      = MSG("data_s", MEM, DATA_MSG_BYTES),
	[CXS_MSG_DATA_E]      = MSG("data_e", MEM, DATA_MSG_BYTES),
	[CXS_MSG_DATA_M]      = MSG("data_m", MEM, DATA_MSG_BYTES),
	[CXS_MSG_INV]         = MSG("inv", MEM, HDR_BYTES),
	[CXS_MSG_RECALL_S]    = MSG("recall_s", MEM, HDR_BYTES),
	[CXS_MSG_RECALL_I]    = MSG("recall_i", MEM, HDR_BYTES),
	[CXS_MSG_PUT_ACK]     = MSG("put_ack", MEM, HDR_BYTES),
	[CXS_MSG_WT]          = MSG("wt", MEM, DATA_MSG_BYTES),
	[CXS_MSG_WT_ACK]      = MSG("wt_ack", MEM, HDR_BYTES),

	[CXS_MSG_MBOX] = MSG("mbox", IO, IO_MSG_BYTES),
	[CXS_MSG_MMIO] = MSG("mmio", IO, IO_MSG_BYTES),
	[CXS_MSG_MSI]  = MSG("msi", IO, IO_MSG_BYTES),

	[CXS_MSG_DMA_WRITE] = MSG("dma_write", DMA, DATA_MSG_BYTES),

	[CXS_MSG_REPL]     = MSG("repl", REPL, REPL_MSG_BYTES),
	[CXS_MSG_REPL_ACK] = MSG("repl_ack", REPL, HDR_BYTES),
	[CXS_MSG_VAL]      = MSG("val", REPL, HDR_BYTES + WORD_BYTES),
	[CXS_MSG_LOG_DUMP] = MSG("log_dump", REPL, DATA_MSG_BYTES),
	[CXS_MSG_LOG_SYNC] = MSG("log_sync", REPL, HDR_BYTES),

	[CXS_MSG_INTERRUPT]         = MSG("interrupt", RECOVERY, HDR_BYTES),
	[CXS_MSG_INTERRUPT_RESP]    = MSG("interrupt_resp", RECOVERY, HDR_BYTES),
	[CXS_MSG_INIT_RECOV]        = MSG("init_recov", RECOVERY, HDR_BYTES),
	[CXS_MSG_FETCH_LATEST]      = MSG("fetch_latest", RECOVERY, HDR_BYTES),
	[CXS_MSG_FETCH_LATEST_RESP] = MSG("fetch_latest_resp", RECOVERY, DATA_MSG_BYTES),
	[CXS_MSG_INIT_RECOV_RESP]   = MSG("init_recov_resp", RECOVERY, HDR_BYTES),
	[CXS_MSG_RECOV_END]         = MSG("recov_end", RECOVERY, HDR_BYTES),
	[CXS_MSG_RECOV_END_RESP]    = MSG("recov_end_resp", RECOVERY, HDR_BYTES),

	[CXS_MSG_MEM_RD]      = MSG("mem_rd", MEM, HDR_BYTES),
	[CXS_MSG_MEM_RD_DATA] = MSG("mem_rd_data", MEM, DATA_MSG_BYTES),
	[CXS_MSG_MEM_WR]      = MSG("mem_wr", MEM, DATA_MSG_BYTES),
	[CXS_MSG_MEM_CMP]     = MSG("mem_cmp", MEM, HDR_BYTES),

	[CXS_MSG_DMA_PAYLOAD32] = MSG("dma_payload32", DMA, AXLE_PAYLOAD32_BYTES),
	[CXS_MSG_DMA_META]      = MSG("dma_meta", DMA, AXLE_META_BYTES),
	[CXS_MSG_DMA_TAIL]      = MSG("dma_tail", DMA, IO_MSG_BYTES),
};

#undef MSG

/*
 * The size check catches a type added at the end of the enum without an
 * entry; a hole in the middle would be a zeroed entry, which the unit test
 * catches (every entry must have a name and a size).
 */
_Static_assert(sizeof(msg_table) / sizeof(msg_table[0]) == CXS_MSG_TYPE_COUNT,
	       "msg_table must have one entry per enum cxs_msg_type");

static const char *const class_names[] = {
	[CXS_CLASS_MEM] = "mem",
	[CXS_CLASS_IO] = "io",
	[CXS_CLASS_DMA] = "dma",
	[CXS_CLASS_REPL] = "repl",
	[CXS_CLASS_RECOVERY] = "recovery",
};

_Static_assert(sizeof(class_names) / sizeof(class_names[0]) == CXS_CLASS_COUNT,
	       "class_names must have one entry per enum cxs_msg_class");

const struct cxs_msg_info *cxs_msg_info(enum cxs_msg_type t)
{
	assert((unsigned)t < CXS_MSG_TYPE_COUNT);
	return &msg_table[t];
}

const char *cxs_msg_class_name(enum cxs_msg_class c)
{
	assert((unsigned)c < CXS_CLASS_COUNT);
	return class_names[c];
}

void cxs_fabric_default(struct cxs_fabric_params *p)
{
	/* DIKTAMO Table II; derivation in fabric.h. */
	p->link_latency = 40 * CXS_PS_PER_NS;
	p->switch_latency = 10 * CXS_PS_PER_NS;
	p->link_bytes_per_s = UINT64_C(4000000000000) / 32;
}

cxs_time cxs_fabric_min_latency(const struct cxs_fabric_params *p)
{
	return 2 * p->link_latency + p->switch_latency;
}

cxs_time cxs_fabric_ser(const struct cxs_fabric_params *p, uint32_t bytes)
{
	const uint64_t five12 = UINT64_C(244140625); /* 5^12; 1e12 = 5^12 * 2^12 */
	const uint64_t bw = p->link_bytes_per_s;
	uint64_t a, q, r;

	assert(bw > 0);
	/*
	 * A whole number of ps per byte (the default 125 GB/s is 8 ps), the
	 * common case: one division instead of the doubling loop below, which
	 * was 1.6 % of a DIKTAMO run's instructions (every message's hops).
	 */
	const uint64_t ps_per_s = UINT64_C(1000000000000);
	if (ps_per_s % bw == 0 && ps_per_s / bw < (UINT64_C(1) << 31))
		return (uint64_t)bytes * (ps_per_s / bw); /* < 2^63 */
	a = (uint64_t)bytes * five12; /* < 2^32 * 2^28 = 2^60 */
	q = a / bw;
	r = a % bw;
	/* q * 2^12 + 2^12 must fit: q < 2^52, else the result is >= 2^64. */
	if (q >= (UINT64_C(1) << 52))
		return CXS_TIME_INF;
	for (int k = 0; k < 12; k++) {
		/* Double q * bw + r; r < bw, so 2r < 2bw and at most one bw carries. */
		q *= 2;
		if (r >= bw - r) {
			r -= bw - r;
			q++;
		} else {
			r *= 2;
		}
	}
	if (r == 0)
		return q;
	return q == CXS_TIME_INF ? q : q + 1;
}

/* ---- [fabric]: the switch and links of the memory system's cluster ---------- */

const struct cxs_cfg_key cxs_fabric_keys[] = {
	{"fabric", "link_latency", CXS_CFG_TIME, "40ns", "Node to switch, one way (200 ns round trip with the switch and a 20 ns directory lookup).", NULL, 1, 1e12},
	{"fabric", "switch_latency", CXS_CFG_TIME, "10ns", "Switch traversal.", NULL, 0, 1e12},
	{"fabric", "link_gbps", CXS_CFG_DOUBLE, "125", "Link bandwidth per direction in GB/s (4 TB/s over 32 ports).", NULL, 0.001, 1e6},
	{"fabric", "repl_jitter", CXS_CFG_TIME, "0", "Adaptive routing of replication traffic (REPL, REPL_ACK, VAL, log dumps): each message takes up to this much extra flight, so VALs can overtake each other; CXL.mem keeps its per-pair order, which the coherence protocol relies on.", NULL, 0, 1e12},
};
const struct cxs_key_table cxs_fabric_key_table = CXS_KEY_TABLE(cxs_fabric_keys);

int cxs_fabric_configure(const struct cxs_config *cfg, struct cxs_fabric_params *p, char *err,
			 size_t errlen)
{
	(void)err;
	(void)errlen;
	*p = (struct cxs_fabric_params){
		.link_latency = cxs_config_time_ps(cfg, "fabric", "link_latency"),
		.switch_latency = cxs_config_time_ps(cfg, "fabric", "switch_latency"),
		.link_bytes_per_s = (uint64_t)llround(cxs_config_double(cfg, "fabric", "link_gbps") * 1e9),
		.repl_jitter = cxs_config_time_ps(cfg, "fabric", "repl_jitter"),
	};
	return 0;
}
