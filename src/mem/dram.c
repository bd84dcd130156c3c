/*
 * dram.c — channels, banks and an open-page row buffer, first-come
 * first-served (the contract is in include/cxlsim/dram.h).
 *
 * Why this model. CAMP's interleaving synthesis (DESIGN.md, "CAMP") needs a
 * DRAM whose latency rises with load, and DIKTAMO needs a 45 ns idle access.
 * A fixed latency gives the second but not the first; a cycle-level DDR
 * model (DRAMSim-like command scheduling, refresh, bank groups) gives both but
 * costs far more than one array lookup per access, and the papers' results do
 * not depend on command-level detail. Two kinds of queue are enough for the
 * curve: banks (a row miss holds a bank for t_rp + t_rcd + t_cas) and the
 * channel data bus (every line holds it for t_burst).
 *
 * Mapping of a line address L (low bits spread consecutive lines over
 * channels first, then banks, so a stream uses every bus and every bank):
 *
 *     L = ((row * nbanks) + bank) * nchannels + channel     (mod row size)
 *
 *     channel = L % nchannels
 *     bank    = (L / nchannels) % nbanks
 *     row     = L / nchannels / nbanks / lines_per_row
 *
 * The row is computed by repeated division, which equals division by the
 * product without forming it, so no parameter values can overflow it.
 *
 * With rotate_banks the bank is rotated by a hash of the row, bank' = (bank
 * + h(row)) % nbanks with h a Fibonacci (multiplicative) hash: lines in
 * different rows of one bank (arrays, or threads' slices, a power of two
 * apart) go to different banks, as the XOR bank hashing of real controllers
 * does. Without it, eight threads streaming slices 1 MiB apart all hit one
 * bank with a different row each, every access a row miss behind the
 * previous one: the measured bandwidth of such a run was 6 GB/s of 51.2.
 * A plain rotation by row % nbanks was not enough: slices 4 MiB apart are
 * 16 rows apart and rotate to the same bank again. (A row stays inside one
 * bank either way: the rotation only relabels banks per row.)
 *
 * One access, arriving at `now` on bank b of channel c:
 *
 *     start      = max(now, b.free_at)
 *     array_done = start + (hit ? t_cas : t_rp + t_rcd + t_cas)
 *     xfer_end   = max(array_done, c.bus_free) + t_burst
 *     done       = xfer_end + t_ctrl
 *     b.free_at  = array_done;  c.bus_free = xfer_end;  b.open_row = row
 *
 * The bank is released when its array access ends, not when its data has
 * left: column reads to an open row pipeline in real DRAM, and the bus already
 * serialises the transfers. Data leaves the channel in arrival order (the bus
 * is one "free at" time, not a calendar), so an access stuck behind a busy
 * bank also delays the ones behind it on its channel — the head-of-line
 * blocking of an in-order controller, which is what makes latency climb well
 * before the bus itself is full.
 *
 * Invariants: b.free_at and c.bus_free never decrease; done - now >=
 * cxs_dram_idle_latency() for a miss and >= t_ctrl + t_cas + t_burst for a hit.
 *
 * What is left out, on purpose: refresh (about 4 % of time on DDR4, folded
 * into nothing rather than modelled as random stalls, to keep runs
 * deterministic and the calibration exact), bank groups and tCCD, tRAS/tWR
 * and read/write turnaround, and request reordering (FR-FCFS). Writes are
 * timed like reads: a write's CAS write latency (CWL) is within a few cycles
 * of CL, and the posted-write buffering of a real controller would only hide
 * write latency from the requester, which callers model by not waiting.
 *
 * A closed bank (never used) is charged the precharge too: every miss costs
 * t_rp + t_rcd + t_cas. The 45 ns figure is a measured random-access idle
 * latency, where the bank almost always holds some other row; charging the
 * first touch differently would make the first access of a run 13.75 ns
 * faster than every later miss for no physical reason worth modelling.
 *
 * Defaults, DDR4-3200 (JEDEC speed bin DDR4-3200AA, 22-22-22, clock 1600 MHz,
 * tCK = 0.625 ns):
 *   t_cas = t_rcd = t_rp = 22 tCK = 13750 ps.
 *   t_burst = BL8 on a 64-bit channel = 64 B in 4 tCK = 2500 ps, i.e.
 *             3200 MT/s * 8 B = 25.6 GB/s per channel.
 *   t_ctrl  = 1250 ps (2 tCK): the remainder that makes the idle row-miss
 *             latency 1250 + 3 * 13750 + 2500 = 45000 ps, DIKTAMO Table II
 *             ("DRAM Access Latency 45 ns").
 *   4 channels, 16 banks (DDR4: 4 bank groups of 4), 128 lines per row
 *   (8 KiB: eight x8 chips with 1 KiB pages each), so the peak is
 *   4 * 25.6 = 102.4 GB/s.
 * tests/unit/dram/test_dram.c measures the idle latency (45 ns exactly), the
 * peak (a 100000-line stream finishes within 2 % of N * 64 B / 102.4 GB/s)
 * and the rise of latency with load.
 */
#include "cxlsim/dram.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DRAM_LINE_BYTES 64

/* DDR4-3200 timings in picoseconds; see the header comment. */
#define DDR4_3200_T_CAS_PS 13750
#define DDR4_3200_T_BURST_PS 2500
#define DRAM_T_CTRL_PS 1250

void cxs_dram_default(struct cxs_dram_params *p)
{
	memset(p, 0, sizeof *p);
	p->nchannels = 4;
	p->nbanks = 16;
	p->lines_per_row = 128;
	p->t_cas = DDR4_3200_T_CAS_PS;
	p->t_rcd = DDR4_3200_T_CAS_PS;
	p->t_rp = DDR4_3200_T_CAS_PS;
	p->t_burst = DDR4_3200_T_BURST_PS;
	p->t_ctrl = DRAM_T_CTRL_PS;
}

cxs_time cxs_dram_idle_latency(const struct cxs_dram_params *p)
{
	return p->t_ctrl + p->t_rp + p->t_rcd + p->t_cas + p->t_burst;
}

int cxs_dram_init(struct cxs_dram *d, const struct cxs_dram_params *p, char *err, size_t errlen)
{
	int rc = -1;
	size_t nbanks_total;

	memset(d, 0, sizeof *d);
	if (p->nchannels == 0) {
		snprintf(err, errlen, "dram: nchannels must be at least 1, got 0");
		goto out;
	}
	if (p->nbanks == 0) {
		snprintf(err, errlen, "dram: nbanks must be at least 1, got 0");
		goto out;
	}
	if (p->lines_per_row == 0) {
		snprintf(err, errlen, "dram: lines_per_row must be at least 1, got 0");
		goto out;
	}
	/* A zero burst would let one channel move unbounded bandwidth. */
	if (p->t_burst == 0) {
		snprintf(err, errlen, "dram: t_burst must be greater than 0 ps, got 0");
		goto out;
	}
	if ((uint64_t)p->nchannels * p->nbanks > SIZE_MAX / sizeof *d->banks) {
		snprintf(err, errlen, "dram: nchannels * nbanks = %" PRIu64 " banks is too many",
			 (uint64_t)p->nchannels * p->nbanks);
		goto out;
	}
	nbanks_total = (size_t)p->nchannels * p->nbanks;
	d->p = *p;
	d->banks = calloc(nbanks_total, sizeof *d->banks);
	d->bus_free = calloc(p->nchannels, sizeof *d->bus_free);
	if (!d->banks || !d->bus_free) {
		snprintf(err, errlen, "dram: out of memory for %zu banks", nbanks_total);
		goto out;
	}
	rc = 0;
out:
	if (rc != 0)
		cxs_dram_destroy(d);
	return rc;
}

void cxs_dram_destroy(struct cxs_dram *d)
{
	free(d->banks);
	free(d->bus_free);
	memset(d, 0, sizeof *d);
}

static cxs_time max_time(cxs_time a, cxs_time b)
{
	return a > b ? a : b;
}

cxs_time cxs_dram_access(struct cxs_dram *d, cxs_time now, uint64_t line_addr, int is_write)
{
	const struct cxs_dram_params *p = &d->p;
	uint32_t channel = (uint32_t)(line_addr % p->nchannels);
	uint64_t across = line_addr / p->nchannels;
	uint32_t bank_ix = (uint32_t)(across % p->nbanks);
	uint64_t row = across / p->nbanks / p->lines_per_row;
	if (p->rotate_banks)
		bank_ix = (uint32_t)((bank_ix + ((row * UINT64_C(0x9e3779b97f4a7c15)) >> 32)) %
				     p->nbanks);
	struct cxs_dram_bank *b;
	cxs_time start, array_done, xfer_end, done;

	assert(d->banks != NULL && d->bus_free != NULL);
	b = &d->banks[(size_t)channel * p->nbanks + bank_ix];

	start = max_time(now, b->free_at);
	if (b->row_open && b->open_row == row) {
		array_done = start + p->t_cas;
		d->row_hits++;
	} else {
		array_done = start + p->t_rp + p->t_rcd + p->t_cas;
		d->row_misses++;
	}
	xfer_end = max_time(array_done, d->bus_free[channel]) + p->t_burst;
	done = xfer_end + p->t_ctrl;

	b->free_at = array_done;
	b->open_row = row;
	b->row_open = 1;
	d->bus_free[channel] = xfer_end;

	if (is_write)
		d->writes++;
	else
		d->reads++;
	d->bytes += DRAM_LINE_BYTES;
	d->busy_bus_ps += p->t_burst;
	d->total_latency_ps += done - now;
	return done;
}
