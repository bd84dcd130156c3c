/*
 * camp.h — CAMP (papers/camp-summary-ko.md; DESIGN.md "CAMP"): predicting a
 * workload's slowdown on CXL memory and its best DRAM:CXL interleave from
 * PMU counters of a DRAM-only run.
 *
 * camp stands apart from the simulator (DESIGN.md, "Layout"): it reads
 * counters — from a cxlsim HDF5 file or from `perf stat` output of a real
 * machine — into one struct of CAMP's Table 5 events, and everything else
 * (calibration, prediction, interleaving) works on that struct only. The
 * readers are the only code that knows a file format:
 *
 *   camp_read_h5     cxlsim HDF5, format 2 (/stats/core/<counter> columns):
 *                    counters summed over every core of every CN, the run's
 *                    time from the workload's ROI bounds
 *   camp_read_perf   `perf stat -e ...` text or `perf stat -x,` CSV, SKX or
 *                    SPR/EMR event names (Table 5), per-CPU, per-socket,
 *                    per-thread and interval lines summed per event
 *                    (camp_read_perf_threads: each thread of --per-thread)
 *
 * A missing event is not an error when reading; the model asks for what it
 * needs (camp_need) and a missing one becomes one line naming the file, the
 * event and the perf name to add.
 */
#ifndef CXLSIM_CAMP_H
#define CXLSIM_CAMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CAMP's Table 5 (P1..P17), the cycle and instruction counts, and time. */
enum camp_ev {
	CAMP_CYCLES = 0,
	CAMP_INSTRUCTIONS,
	CAMP_STALLS_L1D,    /* P1  CYCLE_ACTIVITY.STALLS_L1D_MISS */
	CAMP_STALLS_L2,     /* P2  CYCLE_ACTIVITY.STALLS_L2_MISS */
	CAMP_STALLS_L3,     /* P3  CYCLE_ACTIVITY.STALLS_L3_MISS: s_LLC */
	CAMP_L1_MISS,       /* P4  MEM_LOAD_RETIRED.L1_MISS */
	CAMP_LFB_HIT,       /* P5  MEM_LOAD_RETIRED.FB_HIT */
	CAMP_BOUND_STORES,  /* P6  EXE_ACTIVITY.BOUND_ON_STORES: s_SB */
	CAMP_PF_L1D_ANY,    /* P7  OFFCORE_RESPONSE.PF_L1D_AND_SW.ANY_RESPONSE */
	CAMP_PF_L1D_L3HIT,  /* P8  OFFCORE_RESPONSE.PF_L1D_AND_SW.L3_HIT.ANY_SNOOP */
	CAMP_PF_L2_ANY,     /* P9  PF_L2 any response (derivation only) */
	CAMP_PF_L2_L3HIT,   /* P10 PF_L2 L3 hit (derivation only) */
	CAMP_ORO_DRD,       /* P11 OFFCORE_REQUESTS_OUTSTANDING.DEMAND_DATA_RD */
	CAMP_OR_DRD,        /* P12 OFFCORE_REQUESTS.DEMAND_DATA_RD */
	CAMP_ORO_CYC_DRD,   /* P13 OFFCORE_REQUESTS_OUTSTANDING.CYCLES_WITH_DEMAND_DATA_RD */
	CAMP_LLC_PF_RD,     /* P14 UNC_CHA_LLC_LOOKUP.PF_RD (SPR/EMR) */
	CAMP_LLC_ALL,       /* P15 UNC_CHA_LLC_LOOKUP.ALL */
	CAMP_TOR_PREF,      /* P16 UNC_CHA_TOR_INSERTS.IA_PREF */
	CAMP_TOR_HIT_PREF,  /* P17 UNC_CHA_TOR_INSERTS.IA_HIT_PREF */
	/* P11..P13 of the demand reads that missed L3 only (Intel's L3_MISS_ variants) */
	CAMP_ORO_DRD_L3M,     /* P11m OFFCORE_REQUESTS_OUTSTANDING.L3_MISS_DEMAND_DATA_RD */
	CAMP_OR_DRD_L3M,      /* P12m OFFCORE_REQUESTS.L3_MISS_DEMAND_DATA_RD */
	CAMP_ORO_CYC_DRD_L3M, /* P13m OFFCORE_REQUESTS_OUTSTANDING.CYCLES_WITH_L3_MISS_DEMAND_DATA_RD */
	CAMP_TIME_NS,       /* elapsed time of the run (or of its ROI) */
	CAMP_NEV
};

enum camp_state {
	CAMP_ABSENT = 0,      /* no line for the event */
	CAMP_COUNTED,
	CAMP_NOT_COUNTED,     /* perf printed <not counted> (on some line) */
	CAMP_NOT_SUPPORTED,   /* perf printed <not supported> */
};

struct camp_counts {
	double v[CAMP_NEV];          /* summed over the lines (CPUs, boxes, intervals) */
	uint8_t state[CAMP_NEV];     /* enum camp_state */
	uint32_t line[CAMP_NEV];     /* perf: the line that made the state (0 for HDF5) */
	char source[512];            /* the file, for messages */
};

/* Table 5 row: the CAMP label (P3), our short name, the SKX perf name. */
const char *camp_ev_label(enum camp_ev e);
const char *camp_ev_name(enum camp_ev e);
const char *camp_ev_perf(enum camp_ev e);

/*
 * Readers: 0, or -1 with one line in err ("FILE: what"). camp_read picks the
 * reader by content (the HDF5 signature, else perf stat text or CSV).
 */
int camp_read(const char *path, struct camp_counts *out, char *err, size_t errlen);
int camp_read_h5(const char *path, struct camp_counts *out, char *err, size_t errlen);
int camp_read_perf(const char *path, struct camp_counts *out, char *err, size_t errlen);
/*
 * Counters per thread, in *out (malloc'd, *n of them; free()). A cxlsim HDF5
 * file's per core (one thread each: camp.ini runs one thread a core; no
 * time: the run's is camp_read_h5's); a `perf stat --per-thread` file's per
 * COMM-TID column (*n = 0 for a file without one). camp_read_threads picks
 * the reader as camp_read does.
 */
int camp_read_threads(const char *path, struct camp_counts **out, uint32_t *n, char *err,
		      size_t errlen);
int camp_read_h5_threads(const char *path, struct camp_counts **out, uint32_t *n, char *err,
			 size_t errlen);
int camp_read_perf_threads(const char *path, struct camp_counts **out, uint32_t *n, char *err,
			   size_t errlen);
/* Parses perf stat output held in memory (name is used in messages). */
int camp_parse_perf(const char *name, const char *text, struct camp_counts *out, char *err,
		    size_t errlen);
int camp_parse_perf_threads(const char *name, const char *text, struct camp_counts **out,
			    uint32_t *n, char *err, size_t errlen);

/* 0 if every listed event is present, else -1 with "FILE: no EVENT (P#: ...)". */
int camp_need(const struct camp_counts *c, const enum camp_ev *evs, size_t n, char *err,
	      size_t errlen);

/* ---- the model (camp_model.c) ------------------------------------------------ */

/*
 * S_DRd's two forms (camp_model.c): the latency growth's curve and its
 * argument, and the stall count it scales. The paper's Eq. 5 is (L/MLP,
 * s_LLC); calibration keeps whichever hyperbola and base fit the
 * microbenchmarks better, the queue form when asked (camp_fit.c).
 */
enum camp_drd_x {
	CAMP_DRD_X_LOM = 0, /* 1 / (p + q L/MLP)   (Eq. 5; "l_over_mlp") */
	CAMP_DRD_X_LAT,     /* 1 / (p + q L)       ("l") */
	CAMP_DRD_X_QUEUE,   /* the device's latency at the DRAM run's load, camp_drd_y ("queue") */
};
enum camp_drd_base {
	CAMP_DRD_BASE_SLLC = 0, /* s_LLC = P3 / c, Eq. 5's proxy ("s_llc") */
	CAMP_DRD_BASE_MEM,      /* C = P13 / c, Eq. 4's memory-active cycles ("c_mem") */
};

/*
 * Which demand-read events L, MLP and C come from (camp_model.c): P11..P13,
 * every demand read that missed L2 (the paper's Table 5), or P11m..P13m,
 * those that missed L3 too. Calibration uses P11m..P13m when every pair has
 * them; prediction reads the set its parameters were fitted on.
 */
enum camp_drd_events {
	CAMP_DRD_EV_DEMAND = 0, /* P11..P13 ("demand"; a file without the key) */
	CAMP_DRD_EV_L3_MISS,    /* P11m..P13m ("l3_miss") */
};

/*
 * A tier's load share x' in Eq. 8 when a share x of the pages is in DRAM
 * (camp_model.c, "Interleaving"): the paper's footprint share (x' = x for
 * DRAM, 1 - x for the device), or the share of its endpoint run's request
 * rate, which the faster interleaved run raises (x' = x / (1 + S(x)) and
 * (1 - x)(1 + S(0)) / (1 + S(x)), solved with S(x)).
 */
enum camp_load {
	CAMP_LOAD_FOOTPRINT = 0, /* Eq. 8 as the paper ("footprint"; a file without the key) */
	CAMP_LOAD_RATE,          /* rate-weighted ("rate") */
};

/*
 * A tier's latency at load share x' in Eq. 8 (camp_model.c, "Interleaving"):
 * the paper's L_idle + (L_full - L_idle) x'^2, or a single-server queue's
 * L_idle / (1 - rho x') through the same two points (rho = 1 - L_idle / L_full).
 */
enum camp_load_latency {
	CAMP_LOAD_LAT_QUADRATIC = 0, /* Eq. 8 ("quadratic"; a file without the key) */
	CAMP_LOAD_LAT_MM1,           /* the queue's ("mm1") */
};

/*
 * S_Cache's predictor (camp_model.c, "S_Cache"): the paper's Eq. 6, the
 * DRAM run's cache stalls R_LFB R_Mem s_Cache / c, or the loads that hit a
 * fill buffer on a line prefetched from memory, counted outside the
 * memory-active cycles, P5 R_Mem (1 - C/c) / c. Calibration keeps the one
 * that fits the microbenchmarks' streams better (camp_fit.c).
 */
enum camp_cache_x {
	CAMP_CACHE_X_STALLS = 0, /* R_LFB R_Mem s_Cache / c  (Eq. 6; "stalls"; a file without the key) */
	CAMP_CACHE_X_LFB,        /* P5 R_Mem (1 - C/c) / c   ("lfb_hits") */
};

/* The queue form is kept only with beta known to 25 % (camp_fit.c). */
#define CAMP_BETA_SE_MAX 0.25

/* Platform constants, fitted once per platform by camp_calibrate. */
struct camp_params {
	double p, q;                 /* the hyperbola: 1 / (p + q x), x per drd_x */
	double beta, kappa;          /* drd_x = queue: bandwidth ratio, bound sharpness */
	double k_drd, k_cache, k_store;
	double l_idle_dram, l_idle_cxl; /* idle demand-read latency, core cycles */
	uint32_t pairs;              /* calibration pairs it was fitted from */
	uint8_t drd_x;               /* enum camp_drd_x (0 in a file without the key) */
	uint8_t drd_base;            /* enum camp_drd_base (likewise) */
	uint8_t drd_events;          /* enum camp_drd_events (likewise) */
	uint8_t load;                /* enum camp_load: interleaving's load share (likewise) */
	uint8_t load_lat;            /* enum camp_load_latency: and latency at that share (likewise) */
	uint8_t cache_x;             /* enum camp_cache_x: S_Cache's predictor (likewise) */
	/* calibrate's evidence, not in the file: each drd_x form's rms of y over the
	 * memory-bound pairs (NAN: not fitted), beta's relative standard error, each
	 * cache_x form's rms of the S_Cache growth over all pairs */
	double fit_rms[3], beta_se, cache_rms[2];
};

/* Derived quantities of one run (all ratios of counters). */
struct camp_features {
	double cycles;
	double lat;        /* L = P11 / P12, cycles */
	double mlp;        /* P11 / P13 */
	double lom;        /* L / MLP = P13 / P12 */
	double c_mem;      /* P13 / cycles: memory-active cycles C = N L / MLP (Eq. 3) */
	double s_llc;      /* P3 / cycles */
	double s_cache;    /* (P1 - P2) / cycles */
	double s_sb;       /* P6 / cycles */
	double r_lfb;      /* P5 / (P5 + P4) */
	double lfb;        /* P5 / cycles */
	double r_mem;      /* (P7 - P8) / P7, or the SPR/EMR uncore proxy */
	bool r_mem_uncore; /* which of the two */
	uint8_t drd_events; /* enum camp_drd_events: where lat, mlp, lom, c_mem came from */
};

/*
 * Fills f; -1 with a message naming the first missing event. L, MLP and C
 * come from P11m..P13m when c has all three, else from P11..P13.
 */
int camp_features(const struct camp_counts *c, struct camp_features *f, char *err,
		  size_t errlen);
/* The same, with L, MLP and C from the event set P was fitted on (P->drd_events). */
int camp_features_for(const struct camp_params *P, const struct camp_counts *c,
		      struct camp_features *f, char *err, size_t errlen);

/*
 * R_Lat / R_MLP - 1 that S_DRd scales, for a DRAM run with demand-read
 * latency L (f->lat) or L/MLP (f->lom), per P->drd_x (camp_model.c).
 */
double camp_drd_y(const struct camp_params *P, const struct camp_features *f);
/* The queue form's y at DRAM latency L (camp_model.c, "The queue form"). */
double camp_queue_y(double L, double l_idle_dram, double l_idle_cxl, double beta, double kappa);

/* CAMP §4: the predicted slowdown components of moving every page to CXL. */
struct camp_slowdown {
	double drd, cache, store, total;
};
void camp_predict(const struct camp_params *P, const struct camp_features *f,
		  struct camp_slowdown *out);
/*
 * The slowdown of the slowest thread (camp_model.c, "The critical thread"):
 * each thread's time c_i (1 + S_i), S_i Eq. 5-7 on its own counters, the
 * program's the largest, over the largest c_i: max c_i (1 + S_i) / max c_i - 1.
 * NAN when fewer than two threads ran (then the process's sum is the answer).
 */
double camp_predict_critical(const struct camp_params *P, const struct camp_counts *threads,
			     uint32_t n);
/* 0 if c has every event P's S_DRd form reads (P11 for x = L), else -1. */
int camp_predict_need(const struct camp_params *P, const struct camp_counts *c, char *err,
		      size_t errlen);

/* Measured slowdown of a (DRAM, CXL) pair: time ratio - 1, and the stall deltas. */
int camp_measure(const struct camp_counts *dram, const struct camp_counts *cxl,
		 struct camp_slowdown *out, char *err, size_t errlen);

/* ---- interleaving (CAMP §5, Eq. 8-10) ----------------------------------------- */

/*
 * The curve S(x), x = share of pages in DRAM, from the DRAM-only run and,
 * for a bandwidth-bound workload, the CXL-only run. camp_interleave_runs
 * applies the 5 % rule: 1 when the DRAM run's latency is within 5 % of the
 * idle DRAM latency (latency-bound), 2 otherwise.
 */
struct camp_curve {
	uint32_t npts;      /* x = i / (npts - 1), i = 0 .. npts - 1 */
	double *x;
	struct camp_slowdown *s;
	uint32_t runs;      /* profiling runs used: 1 or 2 */
	uint32_t best;      /* argmin of s[].total */
};

uint32_t camp_interleave_runs(const struct camp_params *P, const struct camp_features *dram);
/*
 * cxl may be NULL when runs is 1. runs: 0 = the 5 % rule, 1 or 2 to force.
 * -1 with a message when two runs are needed and cxl is NULL.
 */
int camp_interleave(const struct camp_params *P, const struct camp_features *dram,
		    const struct camp_features *cxl, uint32_t runs, uint32_t npts,
		    struct camp_curve *out, char *err, size_t errlen);
void camp_curve_free(struct camp_curve *c);

/* ---- calibration (camp_fit.c) ---------------------------------------------------- */

struct camp_pair {
	struct camp_counts dram, cxl;
};

/*
 * Fits p, q (the hyperbola, GSL nonlinear least squares on the pairs'
 * R_Lat / R_MLP - 1 against L/MLP and against L, keeping the better fit:
 * drd_x; the queue form's beta, kappa are fitted too, camp_calibrate_form),
 * then k_drd, k_cache, k_store, each by least squares through the origin of
 * its component's measured growth (camp_measure) on its predictor (k_drd on
 * s_LLC and on C, keeping the better: drd_base). The idle latencies come from
 * the pair with the lowest DRAM MLP (a pointer chase) unless *idle_* are > 0.
 * -1 with a message when the pairs cannot determine the constants (too few
 * memory-bound pairs, a component no pair exercises, a failed fit).
 */
int camp_calibrate(const struct camp_pair *pairs, size_t n, double idle_dram, double idle_cxl,
		   struct camp_params *out, char *err, size_t errlen);
/*
 * The same with S_DRd's curve given (form: an enum camp_drd_x) or chosen (-1,
 * as camp_calibrate: the better hyperbola). The queue form is fitted and its
 * rms and beta's standard error reported in any case; given, it is refused by
 * name when the pairs do not determine beta.
 */
int camp_calibrate_form(const struct camp_pair *pairs, size_t n, double idle_dram,
			double idle_cxl, int form, struct camp_params *out, char *err, size_t errlen);
/* The same with S_Cache's predictor given too (cache_form: an enum camp_cache_x, or -1: the
 * one that fits the pairs better). */
int camp_calibrate_forms(const struct camp_pair *pairs, size_t n, double idle_dram,
			 double idle_cxl, int form, int cache_form, struct camp_params *out,
			 char *err, size_t errlen);

/* The parameter file: "key = value" lines, '#' comments. */
int camp_params_write(const char *path, const struct camp_params *P, const char *comment,
		      char *err, size_t errlen);
int camp_params_read(const char *path, struct camp_params *P, char *err, size_t errlen);

#endif /* CXLSIM_CAMP_H */
