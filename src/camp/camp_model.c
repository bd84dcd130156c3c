/*
 * camp_model.c — CAMP's equations (papers/camp-summary-ko.md §4, §5;
 * DESIGN.md "CAMP") on the counters of camp.h. Everything here is a closed
 * form of counter ratios; the constants come from camp_fit.c.
 *
 * Slowdown of moving every page from DRAM to CXL, from the DRAM run alone
 * (c: cycles; L/MLP = P13 / P12, the latency per outstanding demand read,
 * since L = P11 / P12 and MLP = P11 / P13):
 *
 * P11..P13 are the paper's OFFCORE_REQUESTS events, which count every demand
 * read that missed L2, L3 hits included, or their L3_MISS_ variants P11m..P13m
 * (camp.h), which count the reads that went to memory. What CXL lengthens is
 * the latency of those; an L3 hit takes as long as before. With L3 hits in,
 * L is lowered toward the L3 latency, MLP mixes hits with misses, and C counts
 * cycles with only hits outstanding, so a program that hits L3 often looks
 * more exposed than it is: on cxlsim's CXL-A set (8 MiB L3, up to 93 % of the
 * demand reads that miss L2 hit it) the same model predicts 16 % of the
 * configurations within 5 % from P11..P13 against 53 % from P11m..P13m. The
 * microbenchmarks cannot tell the two apart (their reads all miss L3), so
 * calibration takes P11m..P13m whenever every pair has them, records it in
 * the parameter file (drd_events), and prediction reads that set.
 *
 *   S_DRd   = k_drd / (p + q x) * s / c                             (Eq. 5)
 *             x = L/MLP (the paper's) or L = P11 / P12
 *             (or k_drd y(L) s / c, the queue form below)
 *             s = s_LLC = P3 (the paper's) or C = P13
 *   S_Cache = k_cache * R_LFB * R_Mem * s_Cache / c      s_Cache = P1 - P2 (Eq. 6)
 *             R_LFB = P5 / (P5 + P4)
 *             R_Mem = (P7 - P8) / P7   (SKX: L1 prefetches served from memory)
 *                   = P14 / P15 * P16 / (P16 + P17)   (SPR/EMR uncore proxy)
 *   S_Store = k_store * s_SB / c                        s_SB = P6        (Eq. 7)
 *
 * S_Cache's predictor (cache_x = lfb_hits, chosen by calibration as
 * S_DRd's form is):
 *
 *   S_Cache = k_cache * P5 / c * R_Mem * (1 - C/c)           C = P13 (or P13m)
 *
 * Eq. 6 scales the DRAM run's cache stalls s_Cache. Those say how late the
 * prefetches are in DRAM, not how late they will be on the device: a
 * one-thread stream whose prefetches arrive just in time in DRAM has almost
 * no s_Cache there and waits on nearly every prefetched line on the device.
 * On cxlsim's CXL-A streams (1, 2, 4, 8 threads) the growth of s_Cache over
 * R_LFB R_Mem s_Cache/c runs 33, 4.4, 2.6, 1.5: no one k_cache fits them.
 * What the device lengthens is the wait of each load that hits a fill buffer
 * on a line coming from memory (P5, with R_Mem the share of the prefetches
 * served from memory), and that wait is a cache stall only while no demand
 * read to memory is outstanding: with one outstanding, Intel's
 * CYCLE_ACTIVITY.STALLS_L2_MISS (and cxlsim's core) counts the cycle as an
 * L2-miss stall, i.e. in S_DRd. C/c is the share of cycles with one
 * outstanding (Little's law, as for S_DRd's base). Over the same streams the
 * growth over P5 R_Mem (1 - C/c) / c is 2.59-3.18 cycles per such load
 * (k_cache 2.70): the high-MLP programs (dlrm, kvstore, xsbench, gpt2_mlp),
 * with many LFB hits but C/c at 0.8-0.96, grow by almost nothing, and so
 * does their prediction. README "CAMP" has the accuracy of both.
 *
 * S_DRd's two choices, made by calibration on the microbenchmarks
 * (camp_fit.c; the parameter file's drd_x and drd_base):
 *
 *   s   Eq. 5 is Eq. 4, S_DRd = (R_Lat / R_MLP - 1) C / c, with the stall
 *       cycles s_LLC standing in for the memory-active cycles C (the paper:
 *       "50-70 % coverage"). C needs no proxy: Little's law makes it
 *       N L / MLP = P12 (P11 / P12) / (P11 / P13) = P13, a counter Eq. 5
 *       already reads for L/MLP. What CXL adds is latency, and a miss's
 *       added latency is stalled on whether or not its DRAM latency was
 *       hidden, so the stall growth follows C, not s_LLC (on cxlsim's
 *       CXL-A pairs with s_LLC/c >= 0.02 the growth of P3 is 0.96-1.12
 *       times that of P13, median 1.00, while s_LLC is 0.3-0.9 of C for
 *       the streams and prefetch-heavy programs).
 *   x   The hyperbola stands for R_Lat / R_MLP - 1. Where MLP does not
 *       change with the device (the paper's MLP invariance, §5.2.1), that is
 *       R_Lat - 1 = (L_CXL - L) / L: the device's added latency over the
 *       DRAM latency, a hyperbola in L. Dividing L by MLP then moves a
 *       program along the curve without changing its y: pointer chases of
 *       1..8 chains have nearly one L (1.00-1.10 x idle) and y 1.26-1.43
 *       while L/MLP runs 214..35.
 *
 * The queue form (drd_x = queue). The hyperbola in L says that the device
 * adds a latency that shrinks relative to L as L grows, and passes through
 * both the unloaded chase and the loaded streams only on a device with half
 * DRAM's bandwidth. Where the device has DRAM's bandwidth (cxlsim's NUMA and
 * CXL-C presets) a saturated stream's latency is set by its bandwidth, not
 * by the idle latency: with the same reads outstanding, Little's law gives
 * the same latency on both tiers, and the device adds nothing (CXL-C's
 * strided reads at 2.7 and 5.5 x the idle DRAM latency: y 0.02 and 0.00,
 * where one hyperbola through the unloaded chase's 1.39 gives 0.3-0.6). The
 * asymptotic bounds of a closed queue say so for any device: with N reads
 * outstanding, an unloaded latency Z and a service time D at the bottleneck,
 * L >= max(Z + D, N D). Smoothed (kappa: how sharp the corner is),
 *
 *   L^k    = Z^k + (N D)^k                      (the DRAM run: N D from L)
 *   L_C^k  = (Z + Delta)^k + beta^k (N D)^k     (the device: Delta more idle
 *                                                latency, beta x the service time)
 *   y      = L_C / L - 1
 *
 * with Z the idle DRAM latency Lidle_D, Delta = Lidle_C - Lidle_D (both
 * measured by calibration's pointer chase) and beta, kappa fitted on the
 * microbenchmarks as p, q are. A run below the idle latency (row hits) is
 * unloaded: L_C = L + Delta. MLP invariance is kept (N is the same on both
 * tiers), so y is R_Lat - 1 as for the hyperbola in L, and the base is C.
 *
 * The measured slowdown of a (DRAM, CXL) pair is the time ratio minus one;
 * its components, as Melody attributes them, are the growth of each stall
 * count over the DRAM run's cycles: (P3' - P3) / c, ((P1' - P2') - (P1 - P2))
 * / c, (P6' - P6) / c. Those are what the per-component accuracy is judged
 * on; they need not add up to the total (spinning, frontend effects).
 *
 * The critical thread. A program's time is its slowest thread's, while the
 * process's counters (perf stat's, and camp_predict's input) are sums over
 * its threads. Where the threads wait for the slowest at barriers by
 * spinning (cxlsim's kernels do: compute and L1-hit loads of the sense word,
 * counted in cycles, never stalled), or end unevenly, the sum dilutes the
 * slowest thread's stall growth with the others' spin cycles: on cxlsim's
 * CXL-A set bc, bfs, sssp, histogram and mcf were under-predicted by 0.09-
 * 0.34 that is in no stall component (README "CAMP"). camp_predict_critical
 * predicts each thread from its own counters, c_i (1 + S_i), and takes the
 * largest over the largest DRAM-run c_i. It cannot see a critical thread that
 * changes from one barrier interval to the next (streamcluster): the sum over
 * intervals of each interval's largest growth is above the largest sum.
 *
 * Interleaving, x = share of pages in DRAM (Eq. 8-10), per component with
 * s_D its stall count in the DRAM-only run, s_C in the CXL-only run:
 *
 *   L_t(x')  = Lidle_t + (Lfull_t - Lidle_t) x'^2      (a tier's latency at load share x')
 *   M_t(x')  = x' L_t(x') / Lfull_t                     (its stall cycles' share)
 *   S(x)     = [M_D(x) s_D + M_C(1 - x) s_C - s_D] / c
 *
 * Lfull_t is the measured latency of the tier's endpoint run, Lidle_t the
 * calibrated idle latency.
 *
 * The load share x' (enum camp_load). The paper's is the footprint share,
 * x' = x for DRAM and 1 - x for the device. But a tier's queueing follows
 * its request rate, and the interleaved run is faster than the CXL-only one:
 * with the same requests in less time the device serves more than its
 * footprint share of its endpoint's rate. On cxlsim's CXL-A sweeps (README
 * "CAMP") the device's queueing at x = 0.5 was 0.50 (0.38-0.60) of the
 * CXL-only run's where x'^2 = 0.25 says 0.25, the DRAM tier's 0.27 (0.12-
 * 0.39). load_share = rate takes the rate share, each tier's requests per
 * unit time over its endpoint run's:
 *
 *   x'_D = x / (1 + S(x)),   x'_C = (1 - x)(1 + S(0)) / (1 + S(x))   (at most 1)
 *   M_t  = f_t L_t(x'_t) / Lfull_t,   f_D = x, f_C = 1 - x           (requests x latency)
 *
 * S(x) = T(x) / T_D - 1 is on both sides: S(0) is the footprint curve's
 * (x'_C = 1, exact), and each S(x) is a fixed point t = g(t), g(t) the
 * curve at the loads that t gives. With x' clamped to [0, 1], g's values lie
 * between the smallest and the largest of its four corners (x'_D, x'_C in
 * {0, 1}: each tier's M is monotone in its own x'), so g(t) - t changes sign
 * on that interval and bisection finds a root whatever the shape (a damped
 * iteration did not converge on degenerate counts, e.g. a DRAM stall sum
 * above 1 and a CXL run with fewer stalls). When the DRAM run's stall
 * shares sum to at most 1, 1 + S(x) >= (1 - x)(1 + S(0)) and neither x'
 * exceeds 1; the clamp is for such degenerate counts. At x = 0 and 1 the
 * two forms agree.
 *
 * The latency at a load share (enum camp_load_latency). Eq. 8's x'^2 is
 * one curve through the idle and the endpoint latency; a single-server
 * queue gives another with no more constants: L = L_idle / (1 - rho) at
 * utilisation rho, so the endpoint's rho is 1 - L_idle / L_full, and at load
 * share x' (utilisation rho x')
 *
 *   L_t(x') = L_idle / (1 - rho x'),   rho = 1 - Lidle_t / Lfull_t
 *
 * It falls faster than x'^2 from a nearly saturated endpoint (at x' = 0.5,
 * L_full = 3.7 L_idle: 1.57 L_idle against the quadratic's 1.68) and more
 * slowly from a lightly loaded one (L_full = 1.5 L_idle: 1.20 against
 * 1.125): README "CAMP" found the rate share's curves too high for the
 * three most loaded of its 20 sweeps and too low for the lightly loaded,
 * high-MLP ones. On the 24 swept CXL-A configurations it puts 216 of 264
 * points within 5 % against the quadratic's 203 (README "CAMP"), so
 * calibrate writes load_latency = mm1; a file without the key has Eq. 8's.
 * rho is capped at 0.99 (an endpoint 100 x its idle latency).
 *
 * The 5 % rule: a DRAM run within 5 % of the idle
 * DRAM latency is latency-bound, its CXL endpoint is the §4 prediction
 * (s_C = s_D + S_comp c, at idle latency: M linear, S(x) = (1 - x) S(0)) and
 * one run is enough; otherwise the CXL-only run gives s_C and Lfull_C.
 */
#include "cxlsim/camp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAU 0.05 /* the 5 % rule */

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

/* P11, P12, P13 of each set (enum camp_drd_events). */
static const enum camp_ev drd_set[2][3] = {
	{CAMP_ORO_DRD, CAMP_OR_DRD, CAMP_ORO_CYC_DRD},
	{CAMP_ORO_DRD_L3M, CAMP_OR_DRD_L3M, CAMP_ORO_CYC_DRD_L3M},
};

static bool has_set(const struct camp_counts *c, int s)
{
	for (int i = 0; i < 3; i++)
		if (c->state[drd_set[s][i]] != CAMP_COUNTED)
			return false;
	return true;
}

/* which: an enum camp_drd_events, or -1 for P11m..P13m if c has them all. */
static int features(const struct camp_counts *c, int which, struct camp_features *f, char *err,
		    size_t errlen)
{
	static const enum camp_ev core[] = {CAMP_CYCLES,   CAMP_STALLS_L1D,   CAMP_STALLS_L2,
					    CAMP_STALLS_L3, CAMP_L1_MISS,     CAMP_LFB_HIT,
					    CAMP_BOUND_STORES};
	memset(f, 0, sizeof *f);
	if (camp_need(c, core, sizeof core / sizeof core[0], err, errlen) != 0)
		return -1;
	int s = which >= 0 ? which : has_set(c, CAMP_DRD_EV_L3_MISS) ? CAMP_DRD_EV_L3_MISS
								   : CAMP_DRD_EV_DEMAND;
	const enum camp_ev *d = drd_set[s]; /* P11, P12, P13 */
	if (camp_need(c, d + 1, 2, err, errlen) != 0)
		return -1;
	const double *v = c->v;
	if (v[CAMP_CYCLES] <= 0) {
		snprintf(err, errlen, "%s: cycles is 0: nothing ran", c->source);
		return -1;
	}
	f->cycles = v[CAMP_CYCLES];
	f->drd_events = (uint8_t)s;
	f->lom = ratio(v[d[2]], v[d[1]]);
	if (c->state[d[0]] == CAMP_COUNTED) { /* P11: latency and MLP themselves */
		f->lat = ratio(v[d[0]], v[d[1]]);
		f->mlp = ratio(v[d[0]], v[d[2]]);
	}
	f->c_mem = v[d[2]] / f->cycles;
	f->s_llc = v[CAMP_STALLS_L3] / f->cycles;
	f->s_cache = fmax(0, v[CAMP_STALLS_L1D] - v[CAMP_STALLS_L2]) / f->cycles;
	f->s_sb = v[CAMP_BOUND_STORES] / f->cycles;
	f->r_lfb = ratio(v[CAMP_LFB_HIT], v[CAMP_LFB_HIT] + v[CAMP_L1_MISS]);
	f->lfb = v[CAMP_LFB_HIT] / f->cycles;
	static const enum camp_ev skx[] = {CAMP_PF_L1D_ANY, CAMP_PF_L1D_L3HIT};
	static const enum camp_ev spr[] = {CAMP_LLC_PF_RD, CAMP_LLC_ALL, CAMP_TOR_PREF,
					   CAMP_TOR_HIT_PREF};
	char sub[512];
	if (camp_need(c, skx, 2, sub, sizeof sub) == 0) {
		f->r_mem = ratio(fmax(0, v[CAMP_PF_L1D_ANY] - v[CAMP_PF_L1D_L3HIT]), v[CAMP_PF_L1D_ANY]);
	} else if (camp_need(c, spr, 4, err, errlen) == 0) {
		f->r_mem = ratio(v[CAMP_LLC_PF_RD], v[CAMP_LLC_ALL]) *
			   ratio(v[CAMP_TOR_PREF], v[CAMP_TOR_PREF] + v[CAMP_TOR_HIT_PREF]);
		f->r_mem_uncore = true;
	} else {
		/* Neither set: name the SKX one, the smaller (err has the SPR message). */
		snprintf(err, errlen, "%s (or, on SPR/EMR, the uncore P14..P17)", sub);
		return -1;
	}
	return 0;
}

int camp_features(const struct camp_counts *c, struct camp_features *f, char *err, size_t errlen)
{
	return features(c, -1, f, err, errlen);
}

int camp_features_for(const struct camp_params *P, const struct camp_counts *c,
		      struct camp_features *f, char *err, size_t errlen)
{
	return features(c, P->drd_events ? CAMP_DRD_EV_L3_MISS : CAMP_DRD_EV_DEMAND, f, err, errlen);
}

int camp_predict_need(const struct camp_params *P, const struct camp_counts *c, char *err,
		      size_t errlen)
{
	const enum camp_ev *lat = &drd_set[P->drd_events ? 1 : 0][0]; /* P11 or P11m */
	return P->drd_x != CAMP_DRD_X_LOM ? camp_need(c, lat, 1, err, errlen) : 0;
}

#define KAPPA_MAX 64.0 /* past it the corner is sharp to 1 %: no different, and pow stays finite */

double camp_queue_y(double L, double l_idle_dram, double l_idle_cxl, double beta, double kappa)
{
	if (L <= 0)
		return 0;
	double delta = l_idle_cxl - l_idle_dram;
	if (L <= l_idle_dram)
		return delta / L; /* unloaded: the device's idle latency on top */
	double k = fmin(fmax(kappa, 1), KAPPA_MAX);
	/* in units of L, so that the powers stay near 1 */
	double z = l_idle_cxl / L, b = l_idle_dram / L;
	return pow(pow(z, k) + pow(beta, k) * (1 - pow(b, k)), 1 / k) - 1;
}

double camp_drd_y(const struct camp_params *P, const struct camp_features *f)
{
	if (P->drd_x == CAMP_DRD_X_QUEUE)
		return camp_queue_y(f->lat, P->l_idle_dram, P->l_idle_cxl, P->beta, P->kappa);
	double h = P->p + P->q * (P->drd_x == CAMP_DRD_X_LAT ? f->lat : f->lom);
	return h > 0 ? 1 / h : 0;
}

void camp_predict(const struct camp_params *P, const struct camp_features *f,
		  struct camp_slowdown *out)
{
	double s = P->drd_base == CAMP_DRD_BASE_MEM ? f->c_mem : f->s_llc;
	out->drd = P->k_drd * camp_drd_y(P, f) * s;
	out->cache = P->cache_x == CAMP_CACHE_X_LFB
			     ? P->k_cache * f->lfb * f->r_mem * fmax(0, 1 - f->c_mem)
			     : P->k_cache * f->r_lfb * f->r_mem * f->s_cache;
	out->store = P->k_store * f->s_sb;
	out->total = out->drd + out->cache + out->store;
}

double camp_predict_critical(const struct camp_params *P, const struct camp_counts *threads,
			     uint32_t n)
{
	double t_max = 0, c_max = 0;
	uint32_t ran = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct camp_features f;
		struct camp_slowdown s;
		char err[512];
		if (threads[i].v[CAMP_CYCLES] <= 0)
			continue; /* a core that ran nothing */
		if (camp_features_for(P, &threads[i], &f, err, sizeof err) != 0)
			return NAN;
		camp_predict(P, &f, &s);
		ran++;
		c_max = fmax(c_max, f.cycles);
		t_max = fmax(t_max, f.cycles * (1 + s.total));
	}
	return ran >= 2 && c_max > 0 ? t_max / c_max - 1 : NAN;
}

int camp_measure(const struct camp_counts *dram, const struct camp_counts *cxl,
		 struct camp_slowdown *out, char *err, size_t errlen)
{
	static const enum camp_ev need[] = {CAMP_CYCLES, CAMP_TIME_NS, CAMP_STALLS_L1D,
					    CAMP_STALLS_L2, CAMP_STALLS_L3, CAMP_BOUND_STORES};
	if (camp_need(dram, need, 6, err, errlen) != 0 || camp_need(cxl, need, 6, err, errlen) != 0)
		return -1;
	const double *a = dram->v, *b = cxl->v;
	if (a[CAMP_TIME_NS] <= 0 || a[CAMP_CYCLES] <= 0) {
		snprintf(err, errlen, "%s: zero time or cycles", dram->source);
		return -1;
	}
	out->total = b[CAMP_TIME_NS] / a[CAMP_TIME_NS] - 1;
	out->drd = (b[CAMP_STALLS_L3] - a[CAMP_STALLS_L3]) / a[CAMP_CYCLES];
	out->cache = ((b[CAMP_STALLS_L1D] - b[CAMP_STALLS_L2]) - (a[CAMP_STALLS_L1D] - a[CAMP_STALLS_L2])) /
		     a[CAMP_CYCLES];
	out->store = (b[CAMP_BOUND_STORES] - a[CAMP_BOUND_STORES]) / a[CAMP_CYCLES];
	return 0;
}

uint32_t camp_interleave_runs(const struct camp_params *P, const struct camp_features *dram)
{
	return dram->lat <= (1 + TAU) * P->l_idle_dram ? 1 : 2;
}

#define RHO_MAX 0.99 /* the M/M/1 curve's utilisation at the endpoint, at most */

/* M_t of Eq. 9 (and Eq. 8 inside it): request share f at load share xs. */
static double load_scale(double f, double xs, double l_idle, double l_full, bool mm1)
{
	if (l_full <= 0)
		return f;
	xs = xs < 0 ? 0 : xs > 1 ? 1 : xs;
	if (mm1) {
		if (l_idle <= 0 || l_full <= l_idle)
			return f; /* no queueing at the endpoint: none below it */
		double rho = fmin(1 - l_idle / l_full, RHO_MAX);
		return f * (l_idle / (1 - rho * xs)) / l_full;
	}
	return f * (l_idle + (l_full - l_idle) * xs * xs) / l_full;
}

struct il_point {
	double sd[3], sc[3];
	double l_idle_d, l_idle_c, lfull_d, lfull_c;
	bool mm1;
};

/* S(x)'s components at load shares xd, xc. */
static void il_eval(const struct il_point *q, double x, double xd, double xc, double s[3])
{
	double md = load_scale(x, xd, q->l_idle_d, q->lfull_d, q->mm1);
	double mc = load_scale(1 - x, xc, q->l_idle_c, q->lfull_c, q->mm1);
	for (int k = 0; k < 3; k++)
		s[k] = md * q->sd[k] + mc * q->sc[k] - q->sd[k];
}

/* S(x) at the loads that a total slowdown t gives (rate share); s0 = S(0)'s total. */
static double il_at(const struct il_point *q, double x, double s0, double t, double s[3])
{
	double r = 1 + t > 0.01 ? 1 + t : 0.01; /* T(x) / T_D */
	il_eval(q, x, x / r, (1 - x) * (1 + s0) / r, s);
	return s[0] + s[1] + s[2];
}

/* The rate-weighted fixed point t = g(t) by bisection; s: its components. */
static void il_rate(const struct il_point *q, double x, double s0, double s[3])
{
	double lo = INFINITY, hi = -INFINITY;
	for (int c = 0; c < 4; c++) {
		double v[3];
		il_eval(q, x, c & 1, c >> 1, v);
		double t = v[0] + v[1] + v[2];
		lo = t < lo ? t : lo;
		hi = t > hi ? t : hi;
	}
	/* g(lo) >= lo and g(hi) <= hi: a root in between */
	for (int it = 0; it < 200 && hi - lo > 1e-13; it++) {
		double mid = 0.5 * (lo + hi);
		if (il_at(q, x, s0, mid, s) > mid)
			lo = mid;
		else
			hi = mid;
	}
	il_at(q, x, s0, 0.5 * (lo + hi), s);
}

int camp_interleave(const struct camp_params *P, const struct camp_features *dram,
		    const struct camp_features *cxl, uint32_t runs, uint32_t npts,
		    struct camp_curve *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	if (npts < 2) {
		snprintf(err, errlen, "interleave: at least 2 points (got %u)", npts);
		return -1;
	}
	if (dram->lat <= 0) {
		snprintf(err, errlen,
			 "interleave: the DRAM run has no demand-read latency (P11 "
			 "offcore_requests_outstanding.demand_data_rd missing or zero)");
		return -1;
	}
	out->runs = runs ? runs : camp_interleave_runs(P, dram);
	if (out->runs == 2 && !cxl) {
		snprintf(err, errlen,
			 "interleave: the DRAM run is bandwidth-bound (demand-read latency %.1f cycles, "
			 "more than 5 %% above the idle %.1f): give its CXL-only run too",
			 dram->lat, P->l_idle_dram);
		return -1;
	}
	out->npts = npts;
	out->x = calloc(npts, sizeof *out->x);
	out->s = calloc(npts, sizeof *out->s);
	if (!out->x || !out->s) {
		camp_curve_free(out);
		snprintf(err, errlen, "interleave: out of memory");
		return -1;
	}
	/* Per component: stall counts at the two endpoints, as shares of the DRAM run's cycles. */
	struct il_point q = {.sd = {dram->s_llc, dram->s_cache, dram->s_sb},
			     .l_idle_d = P->l_idle_dram, .l_idle_c = P->l_idle_cxl,
			     .lfull_d = dram->lat, .mm1 = P->load_lat == CAMP_LOAD_LAT_MM1};
	if (out->runs == 1) {
		struct camp_slowdown pr;
		camp_predict(P, dram, &pr);
		q.sc[0] = q.sd[0] + pr.drd;
		q.sc[1] = q.sd[1] + pr.cache;
		q.sc[2] = q.sd[2] + pr.store;
		q.lfull_d = P->l_idle_dram; /* latency-bound: no contention term */
		q.lfull_c = P->l_idle_cxl;
	} else {
		double scale = cxl->cycles / dram->cycles; /* cxl's shares back to DRAM cycles */
		q.sc[0] = cxl->s_llc * scale;
		q.sc[1] = cxl->s_cache * scale;
		q.sc[2] = cxl->s_sb * scale;
		q.lfull_c = cxl->lat > 0 ? cxl->lat : P->l_idle_cxl;
	}
	double s0[3];
	il_eval(&q, 0, 0, 1, s0);
	out->best = 0;
	for (uint32_t i = 0; i < npts; i++) {
		double x = (double)i / (npts - 1);
		double s[3];
		if (P->load == CAMP_LOAD_RATE)
			il_rate(&q, x, s0[0] + s0[1] + s0[2], s);
		else
			il_eval(&q, x, x, 1 - x, s);
		out->x[i] = x;
		out->s[i] = (struct camp_slowdown){s[0], s[1], s[2], s[0] + s[1] + s[2]};
		if (out->s[i].total < out->s[out->best].total)
			out->best = i;
	}
	return 0;
}

void camp_curve_free(struct camp_curve *c)
{
	free(c->x);
	free(c->s);
	memset(c, 0, sizeof *c);
}
