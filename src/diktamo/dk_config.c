/*
 * dk_config.c — the [diktamo] keys: DIKTAMO's parameters (Table II where it
 * gives them) and the checker and fault-injection switches of the tests.
 */
#include <math.h>
#include <stdio.h>

#include "cxlsim/diktamo.h"

static const struct cxs_cfg_key dk_keys[] = {
	{"diktamo", "replicas", CXS_CFG_UINT, "3", "N_r: Logging Units every remote store is replicated to (Table II: 3); the writer may be one of them.", NULL, 1, CXS_DK_MAX_REPLICAS},
	{"diktamo", "sram_bytes", CXS_CFG_SIZE, "4KiB", "SRAM Log Buffer per Logging Unit (Table II: 4 KB); an entry takes 24 bytes.", NULL, 24, 1e9},
	{"diktamo", "sram_latency", CXS_CFG_TIME, "4ns", "SRAM Log Buffer access (Table II: 4 ns).", NULL, 0, 1e12},
	{"diktamo", "lu_mhz", CXS_CFG_DOUBLE, "500", "Logging Unit clock (Table II: 500 MHz): one log entry moved or read per cycle.", NULL, 1, 1e5},
	{"diktamo", "dram_log", CXS_CFG_SIZE, "18MiB", "DRAM log per Logging Unit (Table II: 18 MB), in the CN's local DRAM.", NULL, 4096, 1e12},
	{"diktamo", "watermark", CXS_CFG_DOUBLE, "0.75", "Share of the DRAM log past which its Logging Unit asks for an early flush (§IV-E).", NULL, 0.01, 1},
	{"diktamo", "dump_period", CXS_CFG_TIME, "2.5ms", "Period between log dumps to the MNs (Table II: 2.5 ms).", NULL, 1, 1e15},
	{"diktamo", "spill_after", CXS_CFG_TIME, "1us", "How long a REPL from a store-buffer head waits for room in a full SRAM Log Buffer before its entries are kept in the CN's DRAM instead (a spill; without it full buffers can wait on each other for ever).", NULL, 0, 1e12},
	{"diktamo", "recovery_dir_entry", CXS_CFG_TIME, "1ns", "Recovery's TravDir: time per directory entry an MN scans (a 16-byte entry streamed from DRAM with sequential prefetching, §VII-C).", NULL, 0, 1e12},
	{"diktamo", "recovery_log_entry", CXS_CFG_TIME, "2ns", "Recovery's MNMerge: time per dumped-log entry an MN's handler reads and per word it merges.", NULL, 0, 1e12},
	{"diktamo", "recovery_inflate_gbps", CXS_CFG_DOUBLE, "1", "Recovery's MNMerge: GB/s at which an MN's handler decompresses its dumped logs.", NULL, 0.001, 1e6},
	{"diktamo", "zlib_level", CXS_CFG_UINT, "9", "zlib level of the dumped logs (the paper's gzip -9).", NULL, 1, 9},
	{"diktamo", "compress_threads", CXS_CFG_UINT, "0", "Threads the Logging Units compress their logs on, as the drain deposits them, beside the simulation: 0 = this rank's share of the processors it may run on (1 with a core per rank: compressed in the caller); the results are the same at any count; at most 8.", NULL, 0, 8},
	{"diktamo", "detect_latency", CXS_CFG_TIME, "1us", "How long after a CN fails the switch notices (it sets the CN's Viral_Status bit and tells the other nodes, §V-A), under every protocol of the memory system; longer than any message's flight, so that everything the CN sent before failing has arrived.", NULL, 1, 1e15},
	{"diktamo", "check", CXS_CFG_BOOL, "false", "The protocol checker: every committed remote store VALed with its value in exactly N_r Logging Units or in an MN log, no non-VALed entry in a DRAM log, per-word stamp order (needs every node in one process, e.g. -np 1).", NULL, 0, 0},
	{"diktamo", "fault", CXS_CFG_ENUM, "none", "Fault injection for testing the checkers: commit_before_ack commits stores without waiting for their REPL_ACKs; drop_val never sends the first VAL meant for a line's saver (the member that dumps it), so a committed store misses its N_r copies.", "none|commit_before_ack|drop_val", 0, 0},
};
const struct cxs_key_table cxs_dk_key_table = CXS_KEY_TABLE(dk_keys);

int cxs_dk_configure(const struct cxs_config *cfg, struct cxs_dk_params *p, char *err,
		     size_t errlen)
{
	(void)err;
	(void)errlen;
	cxs_lu_default_params(&p->lu);
	p->replicas = (uint32_t)cxs_config_uint(cfg, "diktamo", "replicas");
	p->lu.sram_bytes = (uint32_t)cxs_config_size_bytes(cfg, "diktamo", "sram_bytes");
	p->lu.sram_ps = cxs_config_time_ps(cfg, "diktamo", "sram_latency");
	p->lu.cycle_ps = cxs_period_ps((uint64_t)llround(cxs_config_double(cfg, "diktamo", "lu_mhz") * 1e6));
	p->lu.dram_bytes = cxs_config_size_bytes(cfg, "diktamo", "dram_log");
	p->lu.watermark = cxs_config_double(cfg, "diktamo", "watermark");
	p->lu.zlib_level = (int)cxs_config_uint(cfg, "diktamo", "zlib_level");
	p->lu.compress_threads =
		cxs_dk_compress_threads((unsigned)cxs_config_uint(cfg, "diktamo", "compress_threads"));
	p->dump_period = cxs_config_time_ps(cfg, "diktamo", "dump_period");
	p->spill_after = cxs_config_time_ps(cfg, "diktamo", "spill_after");
	p->rec_dir_entry_ps = cxs_config_time_ps(cfg, "diktamo", "recovery_dir_entry");
	p->rec_log_entry_ps = cxs_config_time_ps(cfg, "diktamo", "recovery_log_entry");
	p->rec_inflate_bytes_per_ps = cxs_config_double(cfg, "diktamo", "recovery_inflate_gbps") * 1e-3;
	p->check = cxs_config_bool(cfg, "diktamo", "check");
	p->lu.check_dram = p->check;
	p->fault = (enum cxs_dk_fault)cxs_config_enum(cfg, "diktamo", "fault");
	return 0;
}
