/*
 * dram.h — a DRAM timing model whose latency rises with load.
 *
 * Channels, each with banks. An access maps to (channel, bank, row) from its
 * line address: channel = line % nchannels, bank = (line / nchannels) % nbanks,
 * row = line / (nchannels * nbanks * lines_per_row). Timing, all in ps:
 *
 *   row hit    : t_cas
 *   row miss   : t_rp + t_rcd + t_cas (open-page policy; an idle bank starts
 *                closed and its first access is charged as a miss, t_rp
 *                included, so every miss costs the same; see dram.c)
 *   bus        : every access occupies its channel's data bus for t_burst
 *                (64 B / channel bandwidth)
 *
 * An access arriving at time t starts on its bank when the bank is free
 * (bank_free >= t), then needs the channel bus for t_burst once its array
 * access is done; its completion = max(array done, bus free) + t_burst, plus a
 * fixed controller/queueing overhead t_ctrl. So latency is t_ctrl + array +
 * t_burst when idle and grows as banks and buses queue up. The model is
 * first-come first-served by arrival time (arrivals must be presented in
 * non-decreasing time order; it is a per-node model, called from one LP).
 *
 * Defaults (cxs_dram_default) are calibrated so that the idle latency of a
 * row-miss access is 45 ns (DIKTAMO Table II) and the peak bandwidth of one
 * channel is 25.6 GB/s (DDR4-3200 x64); a test checks both.
 */
#ifndef CXLSIM_DRAM_H
#define CXLSIM_DRAM_H

#include <stdbool.h>
#include <stdint.h>

#include "cxlsim/engine.h"

struct cxs_dram_params {
	uint32_t nchannels;
	uint32_t nbanks;          /* per channel */
	uint32_t lines_per_row;   /* 64-byte lines per DRAM row */
	cxs_time t_cas, t_rcd, t_rp, t_burst, t_ctrl;
	/*
	 * Rotate the bank by a hash of the row (bank = (bank + h(row)) %
	 * nbanks), as memory controllers hash bank bits with row bits so that
	 * arrays a power of two apart do not all fall in one bank. Off by default (the classic
	 * mapping above); tier mode (tier.h) turns it on.
	 */
	bool rotate_banks;
};

struct cxs_dram_bank {
	cxs_time free_at;
	uint64_t open_row;
	int row_open;
};

struct cxs_dram {
	struct cxs_dram_params p;
	struct cxs_dram_bank *banks;  /* nchannels * nbanks */
	cxs_time *bus_free;           /* per channel */
	uint64_t reads, writes, row_hits, row_misses;
	uint64_t bytes;
	cxs_time busy_bus_ps;         /* total bus occupancy, for bandwidth used */
	cxs_time total_latency_ps;
};

void cxs_dram_default(struct cxs_dram_params *p);
int cxs_dram_init(struct cxs_dram *d, const struct cxs_dram_params *p, char *err, size_t errlen);
void cxs_dram_destroy(struct cxs_dram *d);

/*
 * Schedules one 64-byte access of line_addr arriving at `now`; returns the
 * time its data is available (reads) or written (writes). Precondition: now is
 * not earlier than any earlier call's now.
 */
cxs_time cxs_dram_access(struct cxs_dram *d, cxs_time now, uint64_t line_addr, int is_write);

/* Latency of an access to an idle DRAM that misses the row. */
cxs_time cxs_dram_idle_latency(const struct cxs_dram_params *p);

#endif /* CXLSIM_DRAM_H */
