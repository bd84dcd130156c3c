/*
 * src/camp without the simulator: the perf stat readers on fixtures
 * (tests/fixtures/camp: text and -x, CSV, SKX and SPR/EMR names, per-CPU
 * and per-box lines, <not counted>, a missing event, a file that is not
 * perf output), CAMP's equations on counts whose features are round
 * numbers (checked against values worked out by hand), the interleaving
 * curve's closed forms and the 5 % rule, the parameter file, and the
 * calibration on synthetic pairs that follow the model exactly (it must
 * recover the constants) or that cannot determine it (it must refuse).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cxlsim/camp.h"
#include "unit_suites.h"

#ifndef CAMP_FIXTURES
#error "CAMP_FIXTURES must name tests/fixtures/camp"
#endif

static const char *fx(const char *name)
{
	static char path[1024];
	snprintf(path, sizeof path, "%s/%s", CAMP_FIXTURES, name);
	return path;
}

static bool near(double a, double b, double tol)
{
	return fabs(a - b) <= tol;
}

/* The fixtures' counts: s_LLC 0.4, s_Cache 0.1, s_SB 0.05, R_LFB 0.75; L/MLP 80, L 200,
 * MLP 2.5 from the L3-miss events P11m..P13m, L/MLP 60, L 180, MLP 3 from P11..P13. */
static void expect_fixture_features(const char *file, double r_mem, bool uncore)
{
	struct camp_counts c;
	struct camp_features f;
	char err[1024];
	ck_assert_msg(camp_read(fx(file), &c, err, sizeof err) == 0, "%s: %s", file, err);
	ck_assert_msg(camp_features(&c, &f, err, sizeof err) == 0, "%s: %s", file, err);
	ck_assert(near(f.cycles, 1e9, 0.5));
	ck_assert(near(f.s_llc, 0.4, 1e-12) && near(f.s_cache, 0.1, 1e-12) && near(f.s_sb, 0.05, 1e-12));
	ck_assert(near(f.r_lfb, 0.75, 1e-12));
	ck_assert(near(f.lom, 80, 1e-9) && near(f.lat, 200, 1e-9) && near(f.mlp, 2.5, 1e-12));
	struct camp_params paper = {.drd_events = CAMP_DRD_EV_DEMAND};
	struct camp_features g;
	ck_assert_msg(camp_features_for(&paper, &c, &g, err, sizeof err) == 0, "%s: %s", file, err);
	ck_assert(near(g.lom, 60, 1e-9) && near(g.lat, 180, 1e-9) && near(g.mlp, 3, 1e-12));
	ck_assert_msg(near(f.r_mem, r_mem, 1e-12), "%s: R_Mem %g, want %g", file, f.r_mem, r_mem);
	ck_assert(f.r_mem_uncore == uncore);
	ck_assert(near(c.v[CAMP_TIME_NS], 1.002e9, 1));
}

START_TEST(test_perf_text_and_csv_skx_and_spr)
{
	expect_fixture_features("skx_text.txt", 0.75, false); /* (20 - 5) / 20 */
	expect_fixture_features("skx_csv.txt", 0.75, false);  /* cpu/...,name=X/ split at commas */
	expect_fixture_features("spr_text.txt", 0.1875, true); /* 3/12 * 6/(6+2); CHA boxes summed */
	expect_fixture_features("spr_csv_percpu.txt", 0.1875, true); /* CPU0, CPU1 columns summed */
}
END_TEST

START_TEST(test_perf_layouts_in_memory)
{
	struct camp_counts c;
	char err[1024];
	/* --per-socket text: "S0  8  value event"; interval CSV: "time,value,,event" summed */
	ck_assert(camp_parse_perf("sock", "S0        8     1,234,567      cycles\n"
					  "S1        8     1,000,000      cycles\n",
				  &c, err, sizeof err) == 0);
	ck_assert(near(c.v[CAMP_CYCLES], 2234567, 0));
	ck_assert(camp_parse_perf("iv", "1.000,100,,instructions,1,100.00,,\n2.000,50,,instructions,1,100.00,,\n",
				  &c, err, sizeof err) == 0);
	ck_assert(near(c.v[CAMP_INSTRUCTIONS], 150, 0) && c.state[CAMP_INSTRUCTIONS] == CAMP_COUNTED);
	/* the paper's short names, a duration_time in text with its unit */
	ck_assert(camp_parse_perf("short", "  12  OR.DEMAND_RD\n  34  ORO.CYC_W_DEMAND_RD\n"
					   "  1,000 ns  duration_time\n",
				  &c, err, sizeof err) == 0);
	ck_assert(near(c.v[CAMP_OR_DRD], 12, 0) && near(c.v[CAMP_ORO_CYC_DRD], 34, 0));
	ck_assert(near(c.v[CAMP_TIME_NS], 1000, 0));
	/* <not supported> is kept apart from <not counted> */
	ck_assert(camp_parse_perf("ns", " <not supported>  exe_activity.bound_on_stores\n  5 cycles\n", &c,
				  err, sizeof err) == 0);
	ck_assert_uint_eq(c.state[CAMP_BOUND_STORES], CAMP_NOT_SUPPORTED);
	enum camp_ev e = CAMP_BOUND_STORES;
	ck_assert(camp_need(&c, &e, 1, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, "ns:1: exe_activity.bound_on_stores is <not supported>"), "%s", err);
}
END_TEST

START_TEST(test_perf_errors_are_one_clear_line)
{
	struct camp_counts c;
	struct camp_features f;
	char err[1024];
	ck_assert(camp_read(fx("skx_not_counted.txt"), &c, err, sizeof err) == 0);
	ck_assert(camp_features(&c, &f, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, "skx_not_counted.txt:12: mem_load_retired.fb_hit is <not counted> (P5"),
		      "%s", err);
	ck_assert(camp_read(fx("skx_missing_store.txt"), &c, err, sizeof err) == 0);
	ck_assert(camp_features(&c, &f, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, "skx_missing_store.txt: no count of exe_activity.bound_on_stores (P6") &&
			      strstr(err, "add -e exe_activity.bound_on_stores"),
		      "%s", err);
	ck_assert(camp_read(fx("garbage.txt"), &c, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, "garbage.txt: no line with a value and an event") &&
			      strstr(err, "not perf stat output"),
		      "%s", err);
	ck_assert(camp_read(fx("no-such-file.txt"), &c, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, "no-such-file.txt: cannot open"), "%s", err);
	/* No R_Mem source at all: the SKX events are named, and SPR's alternative */
	ck_assert(camp_parse_perf("nomem", "1000 cycles\n1 cycle_activity.stalls_l1d_miss\n"
					   "1 cycle_activity.stalls_l2_miss\n1 cycle_activity.stalls_l3_miss\n"
					   "1 mem_load_retired.l1_miss\n1 mem_load_retired.fb_hit\n"
					   "1 exe_activity.bound_on_stores\n1 offcore_requests.demand_data_rd\n"
					   "1 offcore_requests_outstanding.cycles_with_demand_data_rd\n",
				  &c, err, sizeof err) == 0);
	ck_assert(camp_features(&c, &f, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, "offcore_response.pf_l1d_and_sw.any_response") &&
			      strstr(err, "SPR/EMR, the uncore P14..P17"),
		      "%s", err);
	/* an HDF5 signature on a file that is no HDF5 */
	char tmp[] = "/tmp/camp-badh5.XXXXXX";
	int fd = mkstemp(tmp);
	ck_assert(fd >= 0);
	ck_assert(write(fd, "\x89HDF\r\n\x1a\ngarbage", 15) == 15);
	close(fd);
	ck_assert(camp_read(tmp, &c, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, "cannot open as HDF5"), "%s", err);
	unlink(tmp);
}
END_TEST

START_TEST(test_predict_matches_hand_values)
{
	struct camp_counts c;
	struct camp_features f;
	struct camp_slowdown s;
	char err[1024];
	/* P11..P13 (the paper's events: drd_events 0), as the hand values use */
	struct camp_params P = {.p = 1, .q = 0.01, .k_drd = 1, .k_cache = 2, .k_store = 3};
	ck_assert(camp_read(fx("skx_text.txt"), &c, err, sizeof err) == 0);
	ck_assert(camp_features_for(&P, &c, &f, err, sizeof err) == 0);
	camp_predict(&P, &f, &s);
	/* S_DRd = 1 / (1 + 0.6) * 0.4 = 0.25; S_Cache = 2 * 0.75 * 0.75 * 0.1; S_Store = 3 * 0.05 */
	ck_assert(near(s.drd, 0.25, 1e-12));
	ck_assert(near(s.cache, 0.1125, 1e-12));
	ck_assert(near(s.store, 0.15, 1e-12));
	ck_assert(near(s.total, 0.5125, 1e-12));
	/* The uncore proxy on SPR: R_Mem 0.1875 instead of 0.75 */
	ck_assert(camp_read(fx("spr_text.txt"), &c, err, sizeof err) == 0);
	ck_assert(camp_features_for(&P, &c, &f, err, sizeof err) == 0);
	camp_predict(&P, &f, &s);
	ck_assert(near(s.cache, 2 * 0.75 * 0.1875 * 0.1, 1e-12));
}
END_TEST

/*
 * The critical thread: a thread that stalls (the fixture's counts, S 0.5125)
 * beside one that only spins, the same cycles and no stalls. The program
 * takes the stalling thread's time, 1.5125 c; the process's sum halves every
 * stall share and would say about half of that. A spinning thread that ran
 * twice as long (an uneven end) hides the other's growth entirely.
 */
START_TEST(test_predict_critical_thread)
{
	struct camp_counts t[3];
	struct camp_features f;
	struct camp_slowdown s;
	char err[1024];
	struct camp_params P = {.p = 1, .q = 0.01, .k_drd = 1, .k_cache = 2, .k_store = 3};
	ck_assert(camp_read(fx("skx_text.txt"), &t[0], err, sizeof err) == 0);
	t[1] = t[0];
	t[1].v[CAMP_STALLS_L1D] = t[1].v[CAMP_STALLS_L2] = t[1].v[CAMP_STALLS_L3] = 0;
	t[1].v[CAMP_BOUND_STORES] = 0;
	ck_assert(camp_features_for(&P, &t[1], &f, err, sizeof err) == 0);
	camp_predict(&P, &f, &s);
	ck_assert(near(s.total, 0, 1e-12));
	ck_assert(near(camp_predict_critical(&P, t, 2), 0.5125, 1e-12));
	/* a core that ran nothing does not count */
	t[2] = t[1];
	t[2].v[CAMP_CYCLES] = 0;
	ck_assert(near(camp_predict_critical(&P, t, 3), 0.5125, 1e-12));
	/* the spinning thread ran 2 c: the slowest stays at 2 c */
	t[1].v[CAMP_CYCLES] *= 2;
	ck_assert(near(camp_predict_critical(&P, t, 2), 0, 1e-12));
	/* one thread: no critical-thread answer, the process's sum is it */
	ck_assert(isnan(camp_predict_critical(&P, t, 1)));
}
END_TEST

/*
 * perf stat --per-thread (text, as perf 6.1 prints it; and -I -x, CSV with
 * a duration_time line of no thread): the main thread waited in a join
 * (<not counted> on every event), one worker has the fixture's counts and
 * the other spun for as long without a stall or a miss. Per thread, the slowest is
 * the stalling one, S 0.5125; the process's sum halves every share, S
 * 0.25625; the idle thread refuses nothing in the sum.
 */
START_TEST(test_perf_per_thread)
{
	static const char *const files[] = {"skx_per_thread.txt", "skx_per_thread_csv.txt"};
	struct camp_params P = {.p = 1, .q = 0.01, .k_drd = 1, .k_cache = 2, .k_store = 3};
	char err[1024];
	for (int i = 0; i < 2; i++) {
		struct camp_counts c, *t;
		struct camp_features f;
		struct camp_slowdown s;
		uint32_t n;
		ck_assert_msg(camp_read_threads(fx(files[i]), &t, &n, err, sizeof err) == 0, "%s", err);
		ck_assert_uint_eq(n, 3);
		ck_assert_msg(strstr(t[0].source, "(thread xsbench-4242)"), "%s", t[0].source);
		ck_assert_uint_eq(t[0].state[CAMP_CYCLES], CAMP_NOT_COUNTED);
		ck_assert(near(t[1].v[CAMP_CYCLES], 1e9, 0) && near(t[2].v[CAMP_INSTRUCTIONS], 2e9, 0));
		ck_assert(near(t[2].v[CAMP_STALLS_L3], 0, 0) && t[2].state[CAMP_STALLS_L3] == CAMP_COUNTED);
		ck_assert(near(camp_predict_critical(&P, t, n), 0.5125, 1e-12));
		/* the duration_time line has no thread: every thread takes it */
		if (i == 1)
			ck_assert(near(t[1].v[CAMP_TIME_NS], 1.002e9, 0) && near(t[0].v[CAMP_TIME_NS], 1.002e9, 0));
		free(t);
		ck_assert_msg(camp_read(fx(files[i]), &c, err, sizeof err) == 0, "%s", err);
		ck_assert_uint_eq(c.state[CAMP_CYCLES], CAMP_COUNTED);
		ck_assert(near(c.v[CAMP_CYCLES], 2e9, 0) && near(c.v[CAMP_TIME_NS], 1.002e9, 1));
		ck_assert_msg(camp_features_for(&P, &c, &f, err, sizeof err) == 0, "%s", err);
		camp_predict(&P, &f, &s);
		ck_assert(near(s.total, 0.25625, 1e-12));
	}
	/* a file without thread columns has no threads; a comm with blanks is one thread */
	struct camp_counts *t;
	uint32_t n;
	ck_assert(camp_read_threads(fx("skx_text.txt"), &t, &n, err, sizeof err) == 0);
	ck_assert_uint_eq(n, 0);
	free(t);
	ck_assert(camp_parse_perf_threads("blank", "  Web Content-77   1,000  cycles\n"
						   "  Web Content-77     500  instructions\n"
						   "  Web Content-78     300  cycles\n"
						   "  CPU3-ish           1  cycles\n",
					  &t, &n, err, sizeof err) == 0);
	ck_assert_uint_eq(n, 2);
	ck_assert(near(t[0].v[CAMP_CYCLES], 1000, 0) && near(t[0].v[CAMP_INSTRUCTIONS], 500, 0));
	ck_assert(near(t[1].v[CAMP_CYCLES], 300, 0));
	free(t);
	/* -A with -I: "time CPUn value event" lines are read and summed, with no thread */
	struct camp_counts c;
	ck_assert(camp_parse_perf("ia", "     1.000 CPU0   1,000  cycles\n     1.000 CPU1   2,000  cycles\n", &c,
				  err, sizeof err) == 0);
	ck_assert(near(c.v[CAMP_CYCLES], 3000, 0));
}
END_TEST

/* A run's counts with the fixture's shape, but latency l, MLP m and stall shares given. */
static struct camp_counts synth(double cycles, double l, double m, double s_llc, double s_cache,
				double s_sb, double time)
{
	struct camp_counts c;
	memset(&c, 0, sizeof c);
	snprintf(c.source, sizeof c.source, "synthetic");
	double reads = 1e6;
	double v[CAMP_NEV] = {0};
	v[CAMP_CYCLES] = cycles;
	v[CAMP_STALLS_L3] = s_llc * cycles;
	v[CAMP_STALLS_L2] = s_llc * cycles;
	v[CAMP_STALLS_L1D] = (s_llc + s_cache) * cycles;
	v[CAMP_BOUND_STORES] = s_sb * cycles;
	v[CAMP_L1_MISS] = 1e6;
	v[CAMP_LFB_HIT] = 3e6;
	v[CAMP_PF_L1D_ANY] = 4e6;
	v[CAMP_PF_L1D_L3HIT] = 1e6;
	v[CAMP_OR_DRD] = reads;
	v[CAMP_ORO_DRD] = l * reads;
	v[CAMP_ORO_CYC_DRD] = l * reads / m;
	v[CAMP_TIME_NS] = time;
	for (int e = 0; e < CAMP_NEV; e++)
		if (e != CAMP_INSTRUCTIONS && e < CAMP_LLC_PF_RD) {
			c.v[e] = v[e];
			c.state[e] = CAMP_COUNTED;
		}
	c.v[CAMP_TIME_NS] = time;
	c.state[CAMP_TIME_NS] = CAMP_COUNTED;
	return c;
}

/*
 * Pairs that follow Eq. 5-7 exactly with p = 0.8, q = 0.004 and k = (1.1,
 * 1.6, 2.2): the CXL run's latency is R times the DRAM run's with the same
 * MLP, R - 1 = 1 / (p + q L/MLP), each component's stall cycles grow by the
 * component's predicted slowdown, and its time by their sum.
 */
static const double TP = 0.8, TQ = 0.004, TK[3] = {1.1, 1.6, 2.2};

static void make_pair(struct camp_pair *pr, double l, double m, double s_llc, double s_cache, double s_sb)
{
	double lom = l / m, y = 1 / (TP + TQ * lom);
	double sd = TK[0] * y * s_llc, sc = TK[1] * 0.75 * 0.75 * s_cache, ss = TK[2] * s_sb;
	double S = sd + sc + ss;
	pr->dram = synth(1e9, l, m, s_llc, s_cache, s_sb, 1e6);
	/* each component's stall cycles grow by its share of the slowdown */
	pr->cxl = synth(1e9 * (1 + S), l * (1 + y), m, (s_llc + sd) / (1 + S), (s_cache + sc) / (1 + S),
			(s_sb + ss) / (1 + S), 1e6 * (1 + S));
}

START_TEST(test_calibrate_recovers_known_constants)
{
	struct camp_pair pairs[7];
	make_pair(&pairs[0], 200, 1, 0.95, 0, 0);     /* pointer chase */
	make_pair(&pairs[1], 220, 4, 0.8, 0.02, 0);   /* chains */
	make_pair(&pairs[2], 300, 10, 0.6, 0.15, 0);  /* stream */
	make_pair(&pairs[3], 250, 12, 0.7, 0.05, 0);  /* strided */
	make_pair(&pairs[4], 260, 2, 0.05, 0.3, 0.02);/* prefetch-heavy */
	make_pair(&pairs[5], 200, 1, 0.01, 0, 0.9);   /* memset */
	/* Time no stall counter explains (threads spinning at a barrier): each k
	 * is fitted on its own component, so this pair does not move them. */
	make_pair(&pairs[6], 230, 3, 0.5, 0.1, 0.2);
	pairs[6].cxl.v[CAMP_CYCLES] *= 1.3;
	pairs[6].cxl.v[CAMP_TIME_NS] *= 1.3;
	struct camp_params P;
	char err[1024];
	ck_assert_msg(camp_calibrate(pairs, 7, 0, 0, &P, err, sizeof err) == 0, "%s", err);
	ck_assert_msg(near(P.p, TP, 1e-6) && near(P.q, TQ, 1e-8), "p %g q %g", P.p, P.q);
	ck_assert_msg(near(P.k_drd, TK[0], 1e-6) && near(P.k_cache, TK[1], 1e-6) &&
			      near(P.k_store, TK[2], 1e-6),
		      "k %g %g %g", P.k_drd, P.k_cache, P.k_store);
	/* pairs that follow the paper's Eq. 5 keep its form */
	ck_assert_uint_eq(P.drd_x, CAMP_DRD_X_LOM);
	ck_assert_uint_eq(P.drd_base, CAMP_DRD_BASE_SLLC);
	ck_assert_uint_eq(P.cache_x, CAMP_CACHE_X_STALLS); /* and Eq. 6 */
	ck_assert(near(P.l_idle_dram, 200, 1e-9)); /* the lowest-MLP pair's latencies */
	ck_assert(near(P.l_idle_cxl, 200 * (1 + 1 / (TP + TQ * 200)), 1e-6));
	ck_assert_uint_eq(P.pairs, 7);

	/* The parameter file round-trips; a bad line is named. */
	char path[] = "/tmp/camp-params.XXXXXX";
	int fd = mkstemp(path);
	ck_assert(fd >= 0);
	close(fd);
	ck_assert(camp_params_write(path, &P, "unit test", err, sizeof err) == 0);
	struct camp_params Q;
	ck_assert(camp_params_read(path, &Q, err, sizeof err) == 0);
	ck_assert(Q.p == P.p && Q.q == P.q && Q.k_store == P.k_store && Q.l_idle_cxl == P.l_idle_cxl);
	ck_assert_uint_eq(Q.load, CAMP_LOAD_RATE); /* calibrate's choice, camp_fit.c */
	P.load = CAMP_LOAD_FOOTPRINT;
	ck_assert(camp_params_write(path, &P, NULL, err, sizeof err) == 0);
	ck_assert(camp_params_read(path, &Q, err, sizeof err) == 0);
	ck_assert_uint_eq(Q.load, CAMP_LOAD_FOOTPRINT);
	FILE *f = fopen(path, "a");
	fputs("load_share = busy\n", f);
	fclose(f);
	ck_assert(camp_params_read(path, &Q, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, ": load_share: expected footprint or rate, got 'busy'"), "%s", err);
	ck_assert(camp_params_write(path, &P, NULL, err, sizeof err) == 0);
	f = fopen(path, "a");
	fputs("k_drd = fast\n", f);
	fclose(f);
	ck_assert(camp_params_read(path, &Q, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, ": k_drd: expected a number, got 'fast'"), "%s", err);
	f = fopen(path, "w");
	fputs("p = 1\n", f);
	fclose(f);
	ck_assert(camp_params_read(path, &Q, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, "missing key q"), "%s", err);
	unlink(path);
}
END_TEST

/*
 * Pairs whose demand-read slowdown follows Eq. 4 with a device that adds a
 * latency: the CXL run's latency is R times the DRAM run's at the same MLP,
 * R - 1 = 1 / (p + q L) whatever the MLP, and the L3-miss stall cycles grow
 * by k (R - 1) C, C = P13 / c the memory-active cycles. Calibration must
 * choose the hyperbola in L and the base C, and recover p, q, k_drd.
 */
/* Predicting a pair's DRAM run with P reproduces its measured S_DRd growth. */
static void assert_drd_reproduced(const struct camp_params *P, const struct camp_pair *pr)
{
	struct camp_features f;
	struct camp_slowdown pd, me;
	char err[1024];
	ck_assert(camp_features(&pr->dram, &f, err, sizeof err) == 0);
	camp_predict(P, &f, &pd);
	ck_assert(camp_measure(&pr->dram, &pr->cxl, &me, err, sizeof err) == 0);
	ck_assert_msg(near(pd.drd, me.drd, 1e-6), "S_DRd %g vs %g", pd.drd, me.drd);
}

/* An empty temporary file for a parameter file; path is its mkstemp template. */
static void temp_file(char *path)
{
	int fd = mkstemp(path);
	ck_assert(fd >= 0);
	close(fd);
}

static const double LP = 0.05, LQ = 0.003;

static void make_pair_l(struct camp_pair *pr, double l, double m, double s_llc, double s_cache,
			double s_sb)
{
	double y = 1 / (LP + LQ * l), cmem = l * 1e6 / m / 1e9; /* synth's P13 / cycles */
	double sd = TK[0] * y * cmem, sc = TK[1] * 0.75 * 0.75 * s_cache, ss = TK[2] * s_sb;
	double S = sd + sc + ss;
	pr->dram = synth(1e9, l, m, s_llc, s_cache, s_sb, 1e6);
	pr->cxl = synth(1e9 * (1 + S), l * (1 + y), m, (s_llc + sd) / (1 + S), (s_cache + sc) / (1 + S),
			(s_sb + ss) / (1 + S), 1e6 * (1 + S));
}

START_TEST(test_calibrate_chooses_latency_form)
{
	struct camp_pair pairs[6];
	make_pair_l(&pairs[0], 200, 1, 0.19, 0, 0);     /* pointer chase */
	make_pair_l(&pairs[1], 210, 4, 0.05, 0.02, 0);  /* 4 chains: same L, L/MLP a quarter */
	make_pair_l(&pairs[2], 320, 10, 0.02, 0.15, 0); /* loaded stream: s_LLC well below C */
	make_pair_l(&pairs[3], 150, 12, 0.012, 0.05, 0);/* strided, row hits */
	make_pair_l(&pairs[4], 260, 2, 0.06, 0.3, 0.02);
	make_pair_l(&pairs[5], 200, 1, 0.01, 0, 0.9);   /* memset */
	struct camp_params P;
	char err[1024];
	ck_assert_msg(camp_calibrate(pairs, 6, 0, 0, &P, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_eq(P.drd_x, CAMP_DRD_X_LAT);
	ck_assert_uint_eq(P.drd_base, CAMP_DRD_BASE_MEM);
	ck_assert_msg(near(P.p, LP, 1e-6) && near(P.q, LQ, 1e-8), "p %g q %g", P.p, P.q);
	ck_assert_msg(near(P.k_drd, TK[0], 1e-6), "k_drd %g", P.k_drd);
	/* prediction from a DRAM run alone reproduces the synthetic growth */
	assert_drd_reproduced(&P, &pairs[2]);

	/* The form is in the parameter file and read back; a bad name is refused by
	 * name; a file without the keys (before they existed) has the paper's form. */
	char path[] = "/tmp/camp-params.XXXXXX";
	temp_file(path);
	ck_assert(camp_params_write(path, &P, NULL, err, sizeof err) == 0);
	struct camp_params Q;
	ck_assert(camp_params_read(path, &Q, err, sizeof err) == 0);
	ck_assert(Q.drd_x == CAMP_DRD_X_LAT && Q.drd_base == CAMP_DRD_BASE_MEM && Q.p == P.p);
	FILE *fp = fopen(path, "a");
	fputs("drd_x = latency\n", fp);
	fclose(fp);
	ck_assert(camp_params_read(path, &Q, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, ": drd_x: expected l_over_mlp, l or queue, got 'latency'"), "%s",
		      err);
	fp = fopen(path, "w");
	fputs("p = 1\nq = 2\nk_drd = 1\nk_cache = 1\nk_store = 1\nl_idle_dram = 200\n"
	      "l_idle_cxl = 500\n", fp);
	fclose(fp);
	ck_assert(camp_params_read(path, &Q, err, sizeof err) == 0);
	ck_assert(Q.drd_x == CAMP_DRD_X_LOM && Q.drd_base == CAMP_DRD_BASE_SLLC);
	unlink(path);

	/* The form in L needs P11 (the latency); without it, one line naming it. */
	struct camp_counts c = pairs[0].dram;
	c.state[CAMP_ORO_DRD] = CAMP_ABSENT;
	ck_assert(camp_predict_need(&Q, &c, err, sizeof err) == 0); /* L/MLP: P12, P13 only */
	ck_assert(camp_predict_need(&P, &c, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, "offcore_requests_outstanding.demand_data_rd"), "%s", err);
}
END_TEST

/*
 * Pairs whose device follows the queue form (camp_model.c): idle latencies
 * 200 and 500 cycles, the device's service time beta times DRAM's, the
 * corner's sharpness kappa; the CXL run's latency is L (1 + y) at the same
 * MLP and the L3-miss stalls grow by k y C. Calibration must fit the queue
 * form better than both hyperbolas, and, asked for it, recover beta, kappa
 * and k_drd, both for a device with half DRAM's bandwidth and for one with
 * the same.
 */
static void make_pair_q(struct camp_pair *pr, double beta, double kappa, double l, double m,
			double s_cache, double s_sb)
{
	double y = camp_queue_y(l, 200, 500, beta, kappa), cmem = l * 1e6 / m / 1e9;
	double sd = TK[0] * y * cmem, sc = TK[1] * 0.75 * 0.75 * s_cache, ss = TK[2] * s_sb;
	double S = sd + sc + ss, s_llc = 0.8 * cmem;
	pr->dram = synth(1e9, l, m, s_llc, s_cache, s_sb, 1e6);
	pr->cxl = synth(1e9 * (1 + S), l * (1 + y), m, (s_llc + sd) / (1 + S), (s_cache + sc) / (1 + S),
			(s_sb + ss) / (1 + S), 1e6 * (1 + S));
}

START_TEST(test_calibrate_queue_form)
{
	/* the curve itself: unloaded below the idle latency, continuous at it, and
	 * tending to beta - 1 far above it */
	ck_assert(near(camp_queue_y(150, 200, 500, 2, 6), 300.0 / 150, 1e-12));
	ck_assert(near(camp_queue_y(200, 200, 500, 2, 6), 300.0 / 200, 1e-12));
	ck_assert(near(camp_queue_y(200.001, 200, 500, 2, 6), 300.0 / 200, 1e-4));
	ck_assert(near(camp_queue_y(1e5, 200, 500, 2, 6), 1, 1e-6));
	ck_assert(near(camp_queue_y(1e5, 200, 500, 1, 6), 0, 1e-6));
	static const double dev[2][2] = {{2, 6}, {1, 3}}; /* (beta, kappa): CXL-A-like, CXL-C-like */
	for (int d = 0; d < 2; d++) {
		double beta = dev[d][0], kappa = dev[d][1];
		struct camp_pair pairs[8];
		make_pair_q(&pairs[0], beta, kappa, 200, 1, 0, 0);     /* pointer chase: the idle pair */
		make_pair_q(&pairs[1], beta, kappa, 210, 4, 0.02, 0);  /* chains */
		make_pair_q(&pairs[2], beta, kappa, 260, 6, 0, 0);     /* chains on 8 threads */
		make_pair_q(&pairs[3], beta, kappa, 150, 12, 0.05, 0); /* strided, row hits */
		make_pair_q(&pairs[4], beta, kappa, 330, 3.5, 0.15, 0);/* streams, loaded */
		make_pair_q(&pairs[5], beta, kappa, 420, 3.8, 0.3, 0.02);
		make_pair_q(&pairs[6], beta, kappa, 700, 8, 0.1, 0);
		make_pair_q(&pairs[7], beta, kappa, 200, 1.5, 0, 0.9); /* memset */
		struct camp_params P;
		char err[1024];
		/* by default a hyperbola is kept, the queue form's better fit reported */
		ck_assert_msg(camp_calibrate(pairs, 8, 0, 0, &P, err, sizeof err) == 0, "%s", err);
		ck_assert(P.drd_x != CAMP_DRD_X_QUEUE);
		ck_assert_msg(P.fit_rms[CAMP_DRD_X_QUEUE] < 1e-6 &&
				      P.fit_rms[CAMP_DRD_X_LAT] > 100 * P.fit_rms[CAMP_DRD_X_QUEUE] &&
				      P.beta_se < 1e-6,
			      "rms %g %g %g se %g", P.fit_rms[0], P.fit_rms[1], P.fit_rms[2], P.beta_se);
		ck_assert_msg(camp_calibrate_form(pairs, 8, 0, 0, CAMP_DRD_X_QUEUE, &P, err, sizeof err) ==
				      0,
			      "%s", err);
		ck_assert_uint_eq(P.drd_x, CAMP_DRD_X_QUEUE);
		ck_assert_uint_eq(P.drd_base, CAMP_DRD_BASE_MEM);
		ck_assert(near(P.l_idle_dram, 200, 1e-9) && near(P.l_idle_cxl, 500, 1e-9));
		ck_assert_msg(near(P.beta, beta, 1e-4) && near(P.kappa, kappa, 1e-3), "beta %g kappa %g",
			      P.beta, P.kappa);
		ck_assert_msg(near(P.k_drd, TK[0], 1e-6), "k_drd %g", P.k_drd);
		assert_drd_reproduced(&P, &pairs[5]);

		/* beta and kappa round-trip through the file; drd_x = queue needs them */
		char path[] = "/tmp/camp-params.XXXXXX";
		temp_file(path);
		ck_assert(camp_params_write(path, &P, NULL, err, sizeof err) == 0);
		struct camp_params Q;
		ck_assert_msg(camp_params_read(path, &Q, err, sizeof err) == 0, "%s", err);
		ck_assert(Q.drd_x == CAMP_DRD_X_QUEUE && Q.beta == P.beta && Q.kappa == P.kappa);
		FILE *fp = fopen(path, "w");
		fputs("p = 1\nq = 2\nk_drd = 1\nk_cache = 1\nk_store = 1\nl_idle_dram = 200\n"
		      "l_idle_cxl = 500\nbeta = 2\ndrd_x = queue\n", fp);
		fclose(fp);
		ck_assert(camp_params_read(path, &Q, err, sizeof err) == -1);
		ck_assert_msg(strstr(err, ": drd_x = queue without kappa"), "%s", err);
		fp = fopen(path, "a");
		fputs("kappa = 0.5\n", fp);
		fclose(fp);
		ck_assert(camp_params_read(path, &Q, err, sizeof err) == -1);
		ck_assert_msg(strstr(err, ": kappa = 0.5: expected at least 1"), "%s", err);
		unlink(path);
		/* pairs that never load memory past the corner (all at or below the
		 * idle latency) do not determine beta: asked for, the form is refused */
		struct camp_pair light[5];
		make_pair_q(&light[0], beta, kappa, 200, 1, 0, 0);
		make_pair_q(&light[1], beta, kappa, 190, 1.2, 0.02, 0);
		make_pair_q(&light[2], beta, kappa, 150, 1.1, 0.05, 0);
		make_pair_q(&light[3], beta, kappa, 170, 1.4, 0.1, 0);
		make_pair_q(&light[4], beta, kappa, 200, 1.5, 0, 0.9);
		struct camp_params L;
		ck_assert(camp_calibrate_form(light, 5, 0, 0, CAMP_DRD_X_QUEUE, &L, err, sizeof err) ==
			  -1);
		ck_assert_msg(strstr(err, "the queue form's beta is not determined"), "%s", err);
		ck_assert_msg(camp_calibrate(light, 5, 0, 0, &L, err, sizeof err) == 0, "%s", err);
		ck_assert(!(L.beta_se <= CAMP_BETA_SE_MAX));
		/* the queue form reads L: without P11, one line naming it */
		struct camp_counts c = pairs[0].dram;
		c.state[CAMP_ORO_DRD] = CAMP_ABSENT;
		ck_assert(camp_predict_need(&P, &c, err, sizeof err) == -1);
		ck_assert_msg(strstr(err, "offcore_requests_outstanding.demand_data_rd"), "%s", err);
	}
}
END_TEST

/*
 * L, MLP and C from the L3-miss events P11m..P13m where every run has them,
 * else from the paper's P11..P13, which here also count L3 hits (as many as
 * the misses, 40 cycles each): P12 doubles, P11 gains the hits' cycles, P13
 * is unchanged (the hits overlap the misses), so L/MLP halves.
 */
static void add_l3_hits(struct camp_counts *c, bool keep_l3m)
{
	double reads = c->v[CAMP_OR_DRD];
	if (keep_l3m) {
		c->v[CAMP_ORO_DRD_L3M] = c->v[CAMP_ORO_DRD];
		c->v[CAMP_OR_DRD_L3M] = reads;
		c->v[CAMP_ORO_CYC_DRD_L3M] = c->v[CAMP_ORO_CYC_DRD];
		c->state[CAMP_ORO_DRD_L3M] = c->state[CAMP_OR_DRD_L3M] =
			c->state[CAMP_ORO_CYC_DRD_L3M] = CAMP_COUNTED;
	}
	c->v[CAMP_OR_DRD] = 2 * reads;
	c->v[CAMP_ORO_DRD] += 40 * reads;
}

/*
 * Pairs whose cache stalls grow by k_cache P5/c R_Mem (1 - C/c) (camp_model.c,
 * "S_Cache"), not by Eq. 6: a prefetch-heavy pair with few cache stalls in DRAM
 * grows the most. Calibration must keep the LFB-hit form with k_cache exact,
 * write it to the parameter file, and keep Eq. 6 when told to.
 */
static void make_pair_lfb(struct camp_pair *pr, double l, double m, double s_llc, double s_cache,
			  double lfb)
{
	double y = 1 / (TP + TQ * l / m), cmem = l / (1000 * m); /* C/c: l 1e6 / m over 1e9 */
	double sd = TK[0] * y * s_llc, sc = TK[1] * lfb * 0.75 * (1 - cmem), S = sd + sc;
	pr->dram = synth(1e9, l, m, s_llc, s_cache, 0, 1e6);
	pr->cxl = synth(1e9 * (1 + S), l * (1 + y), m, (s_llc + sd) / (1 + S), (s_cache + sc) / (1 + S),
			0, 1e6 * (1 + S));
	pr->dram.v[CAMP_LFB_HIT] = pr->cxl.v[CAMP_LFB_HIT] = lfb * 1e9;
}

START_TEST(test_calibrate_chooses_lfb_cache_form)
{
	struct camp_pair pairs[6];
	make_pair_lfb(&pairs[0], 200, 1, 0.95, 0, 0);        /* pointer chase */
	make_pair_lfb(&pairs[1], 220, 4, 0.8, 0.02, 0.001);  /* chains */
	make_pair_lfb(&pairs[2], 300, 10, 0.6, 0.15, 0.004); /* stream, late in DRAM */
	make_pair_lfb(&pairs[3], 250, 12, 0.7, 0.05, 0.002); /* strided */
	make_pair_lfb(&pairs[4], 260, 2, 0.05, 0.01, 0.006); /* just in time in DRAM */
	make_pair(&pairs[5], 200, 1, 0.01, 0, 0.9);          /* memset, no fill-buffer hits */
	pairs[5].dram.v[CAMP_LFB_HIT] = pairs[5].cxl.v[CAMP_LFB_HIT] = 0;
	struct camp_params P;
	char err[1024];
	ck_assert_msg(camp_calibrate(pairs, 6, 0, 0, &P, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_eq(P.cache_x, CAMP_CACHE_X_LFB);
	ck_assert_msg(near(P.k_cache, TK[1], 1e-6), "k_cache %g", P.k_cache);
	ck_assert_msg(P.cache_rms[1] < 1e-9 && P.cache_rms[0] > 1e-4, "rms %g %g", P.cache_rms[0],
		      P.cache_rms[1]);
	/* prediction from the DRAM run alone gives the pair's growth */
	struct camp_features f;
	struct camp_slowdown s, m;
	ck_assert(camp_features_for(&P, &pairs[4].dram, &f, err, sizeof err) == 0);
	camp_predict(&P, &f, &s);
	ck_assert(camp_measure(&pairs[4].dram, &pairs[4].cxl, &m, err, sizeof err) == 0);
	ck_assert_msg(near(s.cache, m.cache, 1e-9) && m.cache > 0.006, "%g %g", s.cache, m.cache);

	/* told to, calibration keeps Eq. 6, which cannot fit these pairs exactly */
	struct camp_params Q;
	ck_assert(camp_calibrate_forms(pairs, 6, 0, 0, -1, CAMP_CACHE_X_STALLS, &Q, err, sizeof err) ==
		  0);
	ck_assert_uint_eq(Q.cache_x, CAMP_CACHE_X_STALLS);
	ck_assert(!near(Q.k_cache, TK[1], 1e-3));

	/* the form is in the parameter file; a bad name is refused by name; a file
	 * without the key has Eq. 6 */
	char path[] = "/tmp/camp-params.XXXXXX";
	temp_file(path);
	ck_assert(camp_params_write(path, &P, NULL, err, sizeof err) == 0);
	ck_assert(camp_params_read(path, &Q, err, sizeof err) == 0);
	ck_assert(Q.cache_x == CAMP_CACHE_X_LFB && Q.k_cache == P.k_cache);
	ck_assert_uint_eq(Q.load_lat, CAMP_LOAD_LAT_MM1); /* calibrate's choice, camp_fit.c */
	FILE *fp = fopen(path, "a");
	fputs("cache_x = lfb\n", fp);
	fclose(fp);
	ck_assert(camp_params_read(path, &Q, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, ": cache_x: expected stalls or lfb_hits, got 'lfb'"), "%s", err);
	fp = fopen(path, "w");
	fputs("p = 1\nq = 2\nk_drd = 1\nk_cache = 1\nk_store = 1\nl_idle_dram = 200\n"
	      "l_idle_cxl = 500\n", fp);
	fclose(fp);
	ck_assert(camp_params_read(path, &Q, err, sizeof err) == 0);
	ck_assert_uint_eq(Q.cache_x, CAMP_CACHE_X_STALLS);
	ck_assert_uint_eq(Q.load_lat, CAMP_LOAD_LAT_QUADRATIC);
	fp = fopen(path, "a");
	fputs("load_latency = mm2\n", fp);
	fclose(fp);
	ck_assert(camp_params_read(path, &Q, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, ": load_latency: expected quadratic or mm1, got 'mm2'"), "%s", err);
	unlink(path);
}
END_TEST

START_TEST(test_demand_read_events_l3_miss_or_paper)
{
	struct camp_pair pairs[6], paper[6];
	make_pair(&pairs[0], 200, 1, 0.95, 0, 0);
	make_pair(&pairs[1], 220, 4, 0.8, 0.02, 0);
	make_pair(&pairs[2], 300, 10, 0.6, 0.15, 0);
	make_pair(&pairs[3], 250, 12, 0.7, 0.05, 0);
	make_pair(&pairs[4], 260, 2, 0.05, 0.3, 0.02);
	make_pair(&pairs[5], 200, 1, 0.01, 0, 0.9);
	for (int i = 0; i < 6; i++) {
		paper[i] = pairs[i];
		add_l3_hits(&pairs[i].dram, true);
		add_l3_hits(&pairs[i].cxl, true);
		add_l3_hits(&paper[i].dram, false);
		add_l3_hits(&paper[i].cxl, false);
	}
	char err[1024];
	struct camp_params P, Q;
	/* with P11m..P13m in every run the constants come back exactly */
	ck_assert_msg(camp_calibrate(pairs, 6, 0, 0, &P, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_eq(P.drd_events, CAMP_DRD_EV_L3_MISS);
	ck_assert_msg(near(P.p, TP, 1e-6) && near(P.q, TQ, 1e-8), "p %g q %g", P.p, P.q);
	/* without them, P11..P13: the same y over half the L/MLP gives twice q */
	ck_assert_msg(camp_calibrate(paper, 6, 0, 0, &Q, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_eq(Q.drd_events, CAMP_DRD_EV_DEMAND);
	ck_assert_msg(near(Q.q, 2 * TQ, 1e-8), "q %g", Q.q);

	/* features: P11m..P13m by default; the parameters' set when given */
	struct camp_features f;
	ck_assert(camp_features(&pairs[2].dram, &f, err, sizeof err) == 0);
	ck_assert(f.drd_events == CAMP_DRD_EV_L3_MISS && near(f.lat, 300, 1e-9));
	ck_assert(camp_features_for(&Q, &pairs[2].dram, &f, err, sizeof err) == 0);
	ck_assert_msg(f.drd_events == CAMP_DRD_EV_DEMAND && near(f.lat, (300 + 40) / 2.0, 1e-9),
		      "L %g", f.lat);
	/* a model fitted on P11m..P13m refuses a run without them, by name */
	ck_assert(camp_features_for(&P, &paper[2].dram, &f, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, "offcore_requests.l3_miss_demand_data_rd"), "%s", err);
	P.drd_x = CAMP_DRD_X_LAT;
	ck_assert(camp_predict_need(&P, &paper[2].dram, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, "offcore_requests_outstanding.l3_miss_demand_data_rd"), "%s", err);

	/* the set is in the parameter file; a file without the key has the paper's */
	char path[] = "/tmp/camp-params.XXXXXX";
	int fd = mkstemp(path);
	ck_assert(fd >= 0);
	close(fd);
	ck_assert(camp_params_write(path, &P, NULL, err, sizeof err) == 0);
	struct camp_params R;
	ck_assert(camp_params_read(path, &R, err, sizeof err) == 0);
	ck_assert_uint_eq(R.drd_events, CAMP_DRD_EV_L3_MISS);
	FILE *fp = fopen(path, "w");
	fputs("p = 1\nq = 2\nk_drd = 1\nk_cache = 1\nk_store = 1\nl_idle_dram = 200\n"
	      "l_idle_cxl = 500\ndrd_events = l2\n", fp);
	fclose(fp);
	ck_assert(camp_params_read(path, &R, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, ": drd_events: expected demand or l3_miss, got 'l2'"), "%s", err);
	fp = fopen(path, "w");
	fputs("p = 1\nq = 2\nk_drd = 1\nk_cache = 1\nk_store = 1\nl_idle_dram = 200\n"
	      "l_idle_cxl = 500\n", fp);
	fclose(fp);
	ck_assert(camp_params_read(path, &R, err, sizeof err) == 0);
	ck_assert_uint_eq(R.drd_events, CAMP_DRD_EV_DEMAND);
	unlink(path);

	/* perf stat names of the L3-miss variants */
	struct camp_counts c;
	ck_assert(camp_parse_perf("l3m", "  7  offcore_requests.l3_miss_demand_data_rd\n"
					 "  70  offcore_requests_outstanding.l3_miss_demand_data_rd\n"
					 "  20  offcore_requests_outstanding.cycles_with_l3_miss_demand_data_rd\n",
				  &c, err, sizeof err) == 0);
	ck_assert(near(c.v[CAMP_OR_DRD_L3M], 7, 0) && near(c.v[CAMP_ORO_DRD_L3M], 70, 0) &&
		  near(c.v[CAMP_ORO_CYC_DRD_L3M], 20, 0));
	ck_assert(c.state[CAMP_OR_DRD] == CAMP_ABSENT);
}
END_TEST

START_TEST(test_calibrate_refuses_what_it_cannot_fit)
{
	struct camp_pair pairs[4];
	struct camp_params P;
	char err[1024];
	/* no store-bound pair: k_store is not determined */
	make_pair(&pairs[0], 200, 1, 0.95, 0, 0);
	make_pair(&pairs[1], 300, 10, 0.6, 0.15, 0);
	make_pair(&pairs[2], 250, 12, 0.7, 0.05, 0);
	ck_assert(camp_calibrate(pairs, 3, 0, 0, &P, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, "no pair exercises store-buffer stalls"), "%s", err);
	/* one memory-bound pair: the hyperbola is not determined */
	make_pair(&pairs[0], 200, 1, 0.95, 0, 0);
	make_pair(&pairs[1], 200, 1, 0.01, 0.2, 0.02);
	make_pair(&pairs[2], 200, 1, 0.01, 0, 0.9);
	ck_assert(camp_calibrate(pairs, 3, 0, 0, &P, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, "memory-bound pair(s) with distinct L/MLP"), "%s", err);
	/* pairs given CXL first: the CXL runs are not slower */
	make_pair(&pairs[0], 200, 1, 0.95, 0, 0);
	make_pair(&pairs[1], 300, 10, 0.6, 0.15, 0);
	make_pair(&pairs[2], 200, 1, 0.01, 0, 0.9);
	make_pair(&pairs[3], 250, 12, 0.7, 0.05, 0);
	for (int i = 0; i < 4; i++) {
		struct camp_counts t = pairs[i].dram;
		pairs[i].dram = pairs[i].cxl;
		pairs[i].cxl = t;
	}
	ck_assert(camp_calibrate(pairs, 4, 0, 0, &P, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, "DRAM, CXL order"), "%s", err);
}
END_TEST

START_TEST(test_interleave_closed_forms)
{
	struct camp_params P = {.p = 1, .q = 0.01, .k_drd = 1, .k_cache = 2, .k_store = 3,
				.l_idle_dram = 180, .l_idle_cxl = 450};
	struct camp_counts c;
	struct camp_features f, fc;
	struct camp_curve cv;
	struct camp_slowdown s;
	char err[1024];
	ck_assert(camp_read(fx("skx_text.txt"), &c, err, sizeof err) == 0);
	ck_assert(camp_features_for(&P, &c, &f, err, sizeof err) == 0);
	/* L = 180 = idle: latency-bound, one run, S(x) = (1 - x) S(0), the §4 prediction at x = 0 */
	ck_assert_uint_eq(camp_interleave_runs(&P, &f), 1);
	ck_assert(camp_interleave(&P, &f, NULL, 0, 11, &cv, err, sizeof err) == 0);
	camp_predict(&P, &f, &s);
	ck_assert_uint_eq(cv.runs, 1);
	for (uint32_t i = 0; i < 11; i++)
		ck_assert(near(cv.s[i].total, (1 - cv.x[i]) * s.total, 1e-12));
	ck_assert_uint_eq(cv.best, 10); /* all DRAM */
	camp_curve_free(&cv);
	/* L 5 % above idle is bandwidth-bound: the CXL run is required */
	P.l_idle_dram = 180 / 1.06;
	ck_assert_uint_eq(camp_interleave_runs(&P, &f), 2);
	ck_assert(camp_interleave(&P, &f, NULL, 0, 11, &cv, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, "bandwidth-bound") && strstr(err, "CXL-only run"), "%s", err);
	/*
	 * Two runs: DRAM loaded (L 180, idle 120), CXL run with s_LLC 0.5 at L 500 (idle 450),
	 * same cycles. Eq. 8-10 at x = 0.5, DRd: M_D = 0.5 (120 + 60 * 0.25) / 180 = 0.375,
	 * M_C = 0.5 (450 + 50 * 0.25) / 500 = 0.4625, S_DRd = 0.375 * 0.4 + 0.4625 * 0.5 - 0.4.
	 */
	P.l_idle_dram = 120;
	fc = f;
	fc.s_llc = 0.5;
	fc.lat = 500;
	ck_assert(camp_interleave(&P, &f, &fc, 0, 3, &cv, err, sizeof err) == 0);
	ck_assert_uint_eq(cv.runs, 2);
	ck_assert(near(cv.s[1].drd, 0.375 * 0.4 + 0.4625 * 0.5 - 0.4, 1e-12));
	ck_assert(near(cv.s[0].drd, 0.5 - 0.4, 1e-12) && near(cv.s[2].drd, 0, 1e-12)); /* endpoints */
	ck_assert(near(cv.s[1].store, 0.375 * 0.05 + 0.4625 * 0.05 - 0.05, 1e-12));
	ck_assert_uint_eq(cv.best, 1); /* the bathtub's bottom is inside */
	ck_assert(cv.s[1].total < 0);
	struct camp_slowdown foot[3] = {cv.s[0], cv.s[1], cv.s[2]};
	camp_curve_free(&cv);
	/*
	 * The single-server queue's latency (load_latency = mm1): rho_D = 1 - 120/180 = 1/3,
	 * rho_C = 1 - 450/500 = 0.1; at x = 0.5, M_D = 0.5 (120 / (1 - 1/6)) / 180 = 0.4,
	 * M_C = 0.5 (450 / 0.95) / 500; the endpoints are the same.
	 */
	P.load_lat = CAMP_LOAD_LAT_MM1;
	ck_assert(camp_interleave(&P, &f, &fc, 0, 3, &cv, err, sizeof err) == 0);
	ck_assert(near(cv.s[1].drd, 0.4 * 0.4 + 0.5 * (450 / 0.95) / 500 * 0.5 - 0.4, 1e-12));
	ck_assert(near(cv.s[0].drd, 0.5 - 0.4, 1e-12) && near(cv.s[2].drd, 0, 1e-12));
	ck_assert(cv.s[1].drd > foot[1].drd); /* both tiers lightly loaded: above the quadratic */
	camp_curve_free(&cv);
	P.load_lat = CAMP_LOAD_LAT_QUADRATIC;
	/*
	 * The rate share: the same endpoints; at x = 0.5 the loads are x'_D = 0.5 / (1 + S) and
	 * x'_C = 0.5 (1 + S0) / (1 + S) with S the result itself (a fixed point), so recomputing
	 * S from them by hand must give S back.
	 */
	P.load = CAMP_LOAD_RATE;
	ck_assert(camp_interleave(&P, &f, &fc, 0, 3, &cv, err, sizeof err) == 0);
	ck_assert(near(cv.s[0].total, foot[0].total, 1e-12) && near(cv.s[2].total, 0, 1e-12));
	double S = cv.s[1].total, S0 = cv.s[0].total;
	double xd = 0.5 / (1 + S), xc = 0.5 * (1 + S0) / (1 + S);
	double md = 0.5 * (120 + 60 * xd * xd) / 180, mc = 0.5 * (450 + 50 * xc * xc) / 500;
	double sd[3] = {f.s_llc, f.s_cache, f.s_sb}, sc[3] = {fc.s_llc, fc.s_cache, fc.s_sb};
	double again = 0;
	for (int k = 0; k < 3; k++)
		again += md * sd[k] + mc * sc[k] - sd[k];
	ck_assert_msg(near(again, S, 1e-7), "fixed point: %.9f from %.9f", again, S);
	/*
	 * S0 > 0 > S(0.5): both tiers serve more than half their endpoint's rate, so both queue
	 * more than Eq. 8's x'^2 = 0.25 says, and the bathtub is shallower than the footprint's.
	 */
	ck_assert(S0 > 0 && S < 0 && xc > 0.5 && xd > 0.5 && S > foot[1].total);
	camp_curve_free(&cv);
	/*
	 * With the DRAM run's stall shares summing to at most 1, 1 + S(x) >= (1 - x)(1 + S(0)),
	 * so neither load share exceeds 1. Degenerate counts (a DRAM stall sum above 1 and a CXL
	 * run with fewer stalls, where a damped iteration never settled) need the clamp to
	 * [0, 1]: every point must still be a fixed point of the clamped map, by hand.
	 */
	f.s_llc = 1.1;
	fc.s_llc = 0.6;
	fc.lat = 1500;
	ck_assert(camp_interleave(&P, &f, &fc, 0, 11, &cv, err, sizeof err) == 0);
	S0 = cv.s[0].total;
	sd[0] = f.s_llc;
	sc[0] = fc.s_llc;
	int capped = 0;
	for (uint32_t i = 1; i < 10; i++) {
		double x = cv.x[i];
		S = cv.s[i].total;
		ck_assert(isfinite(S) && 1 + S > 0);
		xd = x / (1 + S);
		xc = (1 - x) * (1 + S0) / (1 + S);
		capped += xd > 1 || xc > 1 || xc < 0;
		xd = fmin(xd, 1);
		xc = fmax(0, fmin(xc, 1));
		md = x * (120 + 60 * xd * xd) / 180;
		mc = (1 - x) * (450 + 1050 * xc * xc) / 1500;
		again = 0;
		for (int k = 0; k < 3; k++)
			again += md * sd[k] + mc * sc[k] - sd[k];
		ck_assert_msg(near(again, S, 1e-7), "x %.1f: %.9f from %.9f", x, again, S);
	}
	ck_assert_msg(capped > 0, "no point needed the cap");
	camp_curve_free(&cv);
}
END_TEST

Suite *camp_suite(void)
{
	Suite *s = suite_create("camp");
	TCase *tc = tcase_create("camp");
	tcase_add_test(tc, test_perf_text_and_csv_skx_and_spr);
	tcase_add_test(tc, test_perf_layouts_in_memory);
	tcase_add_test(tc, test_perf_errors_are_one_clear_line);
	tcase_add_test(tc, test_predict_matches_hand_values);
	tcase_add_test(tc, test_predict_critical_thread);
	tcase_add_test(tc, test_perf_per_thread);
	tcase_add_test(tc, test_calibrate_recovers_known_constants);
	tcase_add_test(tc, test_calibrate_chooses_latency_form);
	tcase_add_test(tc, test_calibrate_queue_form);
	tcase_add_test(tc, test_calibrate_chooses_lfb_cache_form);
	tcase_add_test(tc, test_demand_read_events_l3_miss_or_paper);
	tcase_add_test(tc, test_calibrate_refuses_what_it_cannot_fit);
	tcase_add_test(tc, test_interleave_closed_forms);
	suite_add_tcase(s, tc);
	return s;
}
