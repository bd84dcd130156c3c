/*
 * cxlsim_camp.c — the cxlsim-camp command: CAMP's calibration, prediction,
 * interleaving synthesis and best-shot policy (include/cxlsim/camp.h) on
 * counters from cxlsim HDF5 files or `perf stat` output.
 *
 *   cxlsim-camp calibrate [-o PARAMS] [--idle-dram C] [--idle-cxl C]
 *                         [--drd-form auto|l_over_mlp|l|queue]
 *                         [--cache-form auto|stalls|lfb_hits] DRAM CXL [DRAM CXL ...]
 *   cxlsim-camp predict   -p PARAMS [--csv] [--sum] DRAM ...
 *   cxlsim-camp predict   -p PARAMS [--csv] [--runs auto|1|2] --pair DRAM CXL
 *   cxlsim-camp interleave -p PARAMS [--csv] [--runs auto|1|2] [--load footprint|rate]
 *                          [--load-latency quadratic|mm1] [--points N] DRAM [CXL]
 *   cxlsim-camp best-shot -p PARAMS [--csv] [--runs auto|1|2] [--load footprint|rate]
 *                         [--load-latency quadratic|mm1] DRAM [CXL]
 *   cxlsim-camp measure   [--csv] DRAM CXL
 *   cxlsim-camp counters  FILE ...
 *
 * Every file is read by content (HDF5 signature, else perf stat text or
 * CSV). Errors a user can cause (a file, an event, an option) are one line
 * on stderr and exit status 1; bad usage is exit status 2.
 */
#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxlsim/camp.h"

#define ERR_MAX 1024

static const char usage[] =
	"usage: cxlsim-camp COMMAND [options] FILES\n"
	"  calibrate [-o PARAMS] [--idle-dram CYCLES] [--idle-cxl CYCLES]\n"
	"            [--drd-form auto|l_over_mlp|l|queue] [--cache-form auto|stalls|lfb_hits]\n"
	"            DRAM CXL [DRAM CXL ...]\n"
	"        fit p, q, k_drd, k_cache, k_store from microbenchmark pairs (a DRAM-only and a\n"
	"        CXL-only run each; the four microbenchmarks of CAMP); writes PARAMS\n"
	"        (default camp-params.txt); --drd-form: S_DRd's curve, 1 / (p + q L/MLP) (Eq. 5),\n"
	"        1 / (p + q L), or the device's latency at the DRAM run's load (queue: beta,\n"
	"        kappa); auto (default): the hyperbola that fits the pairs better;\n"
	"        --cache-form: S_Cache's predictor, R_LFB R_Mem s_Cache/c (stalls, Eq. 6) or\n"
	"        P5/c R_Mem (1 - C/c) (lfb_hits: fill-buffer hits on lines from memory outside\n"
	"        the memory-active cycles); auto (default): the one that fits the pairs better\n"
	"  predict -p PARAMS [--csv] [--sum] DRAM ...\n"
	"        S_DRd, S_Cache, S_Store and the slowdown S from DRAM-only runs (CAMP Eq. 5-7);\n"
	"        S is the slowest thread's (each thread from its own counters) where the file\n"
	"        has them (cxlsim HDF5's per-core counters, perf stat --per-thread), else, and\n"
	"        with --sum, the components' sum over the process's counters (the paper's)\n"
	"  predict -p PARAMS [--csv] [--runs auto|1|2] --pair DRAM CXL\n"
	"        CAMP's workflow: a latency-bound run (the 5 % rule) from itself, a\n"
	"        bandwidth-bound one from both runs (Eq. 10 at x = 0)\n"
	"  interleave -p PARAMS [--csv] [--runs auto|1|2] [--load footprint|rate]\n"
	"             [--load-latency quadratic|mm1] [--points N] DRAM [CXL]\n"
	"        the slowdown S(x) at DRAM share x = 0 .. 1 (Eq. 8-10; N points, default 101);\n"
	"        --runs auto applies the 5 % rule (a bandwidth-bound DRAM run needs its CXL run);\n"
	"        --load: a tier's load share in Eq. 8, its share of the pages (footprint, the\n"
	"        paper's) or of its endpoint run's request rate (rate); default: PARAMS' load_share;\n"
	"        --load-latency: a tier's latency at that share, Eq. 8's quadratic or a single-\n"
	"        server queue's through the same idle and endpoint latencies (mm1); default:\n"
	"        PARAMS' load_latency\n"
	"  best-shot -p PARAMS [--csv] [--runs auto|1|2] [--load footprint|rate]\n"
	"            [--load-latency quadratic|mm1] DRAM [CXL]\n"
	"        the DRAM share x* minimising S(x) over 1 % steps\n"
	"  measure [--csv] DRAM CXL\n"
	"        the measured slowdown (time ratio - 1) and its stall components\n"
	"  counters FILE ...\n"
	"        the Table 5 events as read from each file\n"
	"FILES are cxlsim HDF5 outputs or perf stat output (text, or -x, CSV; SKX or SPR/EMR names).\n";

static int fail(const char *msg)
{
	fprintf(stderr, "cxlsim-camp: %s\n", msg);
	return 1;
}

static int bad_usage(const char *msg)
{
	fprintf(stderr, "cxlsim-camp: %s\n%s", msg, usage);
	return 2;
}

struct opts {
	const char *params, *out;
	bool csv, pair, sum;
	uint32_t runs, points;
	int load; /* enum camp_load, -1: the parameter file's */
	int load_lat; /* enum camp_load_latency, -1: the parameter file's */
	int drd_form; /* enum camp_drd_x, -1: auto */
	int cache_form; /* enum camp_cache_x, -1: auto */
	double idle_dram, idle_cxl;
	const char *files[4096];
	size_t nfiles;
};

static int parse_double(const char *s, double *v)
{
	char *end;
	errno = 0;
	*v = strtod(s, &end);
	return *s && !*end && !errno && isfinite(*v) ? 0 : -1;
}

/*
 * The options that name one of a few forms: their names in enum order (camp.h);
 * "auto", where it comes first, is -1 (calibration chooses) and the enum starts
 * after it.
 */
struct choice {
	const char *opt;
	const char *const *names;
	size_t off; /* an int in struct opts */
};
static const char *const load_names[] = {"footprint", "rate", NULL};
static const char *const load_lat_names[] = {"quadratic", "mm1", NULL};
static const char *const drd_form_names[] = {"auto", "l_over_mlp", "l", "queue", NULL};
static const char *const cache_form_names[] = {"auto", "stalls", "lfb_hits", NULL};
static const struct choice choices[] = {
	{"--load", load_names, offsetof(struct opts, load)},
	{"--load-latency", load_lat_names, offsetof(struct opts, load_lat)},
	{"--drd-form", drd_form_names, offsetof(struct opts, drd_form)},
	{"--cache-form", cache_form_names, offsetof(struct opts, cache_form)},
};

static const struct choice *choice_of(const char *opt)
{
	for (size_t i = 0; i < sizeof choices / sizeof choices[0]; i++)
		if (strcmp(opt, choices[i].opt) == 0)
			return &choices[i];
	return NULL;
}

/* *out = v's value, or -1 with "OPT: expected a, b or c, got 'v'". */
static int choose(const struct choice *ch, const char *v, int *out, char *msg, size_t len)
{
	int base = strcmp(ch->names[0], "auto") == 0 ? -1 : 0;
	char list[160];
	size_t n = 0;
	for (int i = 0; ch->names[i]; i++) {
		if (strcmp(v, ch->names[i]) == 0) {
			*out = base + i;
			return 0;
		}
		if (n < sizeof list)
			n += (size_t)snprintf(list + n, sizeof list - n, "%s%s",
					      i == 0 ? "" : ch->names[i + 1] ? ", " : " or ", ch->names[i]);
	}
	snprintf(msg, len, "%s: expected %s, got '%s'", ch->opt, list, v);
	return -1;
}

/* Options of every command; -1 after printing the usage error. */
static int parse(int argc, char **argv, struct opts *o, char *msg, size_t len)
{
	*o = (struct opts){.points = 101, .load = -1, .load_lat = -1, .drd_form = -1, .cache_form = -1};
	const struct choice *ch;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--csv") == 0) {
			o->csv = true;
		} else if (strcmp(a, "--sum") == 0) {
			o->sum = true;
		} else if (strcmp(a, "--pair") == 0) {
			o->pair = true;
		} else if (strcmp(a, "-p") == 0 || strcmp(a, "--params") == 0) {
			if (!next)
				goto missing;
			o->params = argv[++i];
		} else if (strcmp(a, "-o") == 0) {
			if (!next)
				goto missing;
			o->out = argv[++i];
		} else if (strcmp(a, "--runs") == 0) {
			if (!next)
				goto missing;
			i++;
			if (strcmp(next, "auto") == 0)
				o->runs = 0;
			else if (strcmp(next, "1") == 0 || strcmp(next, "2") == 0)
				o->runs = (uint32_t)(next[0] - '0');
			else {
				snprintf(msg, len, "--runs: expected auto, 1 or 2, got '%s'", next);
				return -1;
			}
		} else if ((ch = choice_of(a)) != NULL) {
			if (!next)
				goto missing;
			i++;
			if (choose(ch, next, (int *)((char *)o + ch->off), msg, len) != 0)
				return -1;
		} else if (strcmp(a, "--points") == 0) {
			double v;
			if (!next)
				goto missing;
			i++;
			if (parse_double(next, &v) != 0 || v < 2 || v > 100001 || v != floor(v)) {
				snprintf(msg, len, "--points: expected an integer 2..100001, got '%s'", next);
				return -1;
			}
			o->points = (uint32_t)v;
		} else if (strcmp(a, "--idle-dram") == 0 || strcmp(a, "--idle-cxl") == 0) {
			double v;
			if (!next)
				goto missing;
			i++;
			if (parse_double(next, &v) != 0 || v <= 0) {
				snprintf(msg, len, "%s: expected a positive latency in core cycles, got '%s'", a,
					 next);
				return -1;
			}
			*(a[7] == 'd' ? &o->idle_dram : &o->idle_cxl) = v;
		} else if (a[0] == '-' && a[1]) {
			snprintf(msg, len, "unknown option '%s'", a);
			return -1;
		} else {
			if (o->nfiles == sizeof o->files / sizeof o->files[0]) {
				snprintf(msg, len, "too many files (at most %zu)",
					 sizeof o->files / sizeof o->files[0]);
				return -1;
			}
			o->files[o->nfiles++] = a;
		}
		continue;
	missing:
		snprintf(msg, len, "%s needs a value", a);
		return -1;
	}
	return 0;
}

static int read_params(const struct opts *o, struct camp_params *P, char *err)
{
	if (!o->params) {
		snprintf(err, ERR_MAX, "-p PARAMS is required (made by cxlsim-camp calibrate)");
		return -1;
	}
	if (camp_params_read(o->params, P, err, ERR_MAX) != 0)
		return -1;
	if (o->load >= 0)
		P->load = (uint8_t)o->load;
	if (o->load_lat >= 0)
		P->load_lat = (uint8_t)o->load_lat;
	return 0;
}

static int cmd_calibrate(const struct opts *o)
{
	char err[ERR_MAX];
	if (o->nfiles < 2 || o->nfiles % 2)
		return bad_usage("calibrate: give DRAM CXL pairs of files");
	size_t n = o->nfiles / 2;
	struct camp_pair *pairs = calloc(n, sizeof *pairs);
	struct camp_params P;
	int rc = 1;
	if (!pairs)
		return fail("out of memory");
	for (size_t i = 0; i < n; i++)
		if (camp_read(o->files[2 * i], &pairs[i].dram, err, sizeof err) != 0 ||
		    camp_read(o->files[2 * i + 1], &pairs[i].cxl, err, sizeof err) != 0)
			goto out;
	if (camp_calibrate_forms(pairs, n, o->idle_dram, o->idle_cxl, o->drd_form, o->cache_form,
				 &P, err, sizeof err) != 0)
		goto out;
	const char *path = o->out ? o->out : "camp-params.txt";
	if (camp_params_write(path, &P, NULL, err, sizeof err) != 0)
		goto out;
	const char *base = P.drd_base == CAMP_DRD_BASE_MEM ? "C" : "s_LLC";
	if (P.drd_x == CAMP_DRD_X_QUEUE)
		printf("beta = %.6g  kappa = %.6g  k_drd = %.6g  k_cache = %.6g  k_store = %.6g\n"
		       "S_DRd = k_drd y(L) %s/c, y the device's latency at the DRAM run's load "
		       "(queue form)\n",
		       P.beta, P.kappa, P.k_drd, P.k_cache, P.k_store, base);
	else
		printf("p = %.6g  q = %.6g  k_drd = %.6g  k_cache = %.6g  k_store = %.6g\n"
		       "S_DRd = k_drd / (p + q %s) %s/c\n",
		       P.p, P.q, P.k_drd, P.k_cache, P.k_store,
		       P.drd_x == CAMP_DRD_X_LAT ? "L" : "L/MLP", base);
	printf("idle demand-read latency: DRAM %.1f, CXL %.1f cycles; %zu pairs -> %s\n",
	       P.l_idle_dram, P.l_idle_cxl, n, path);
	char se[64];
	if (isfinite(P.beta_se))
		snprintf(se, sizeof se, "beta's standard error %.1f %%%s", 100 * P.beta_se,
			 P.beta_se > CAMP_BETA_SE_MAX ? ": not determined" : "");
	else
		snprintf(se, sizeof se, "beta not determined: no pair loaded past the corner");
	printf("S_DRd's forms on the microbenchmarks, rms of R_Lat / R_MLP - 1: 1 / (p + q L/MLP) "
	       "%.3f, 1 / (p + q L) %.3f, queue %.3f (%s)\n",
	       P.fit_rms[0], P.fit_rms[1], P.fit_rms[2], se);
	char rms[2][32];
	for (int j = 0; j < 2; j++)
		snprintf(rms[j], sizeof rms[j], isfinite(P.cache_rms[j]) ? "%.3f" : "not fitted",
			 P.cache_rms[j]);
	printf("S_Cache = k_cache %s; its forms on the microbenchmarks, rms of the growth: "
	       "R_LFB R_Mem s_Cache/c %s, P5/c R_Mem (1 - C/c) %s\n",
	       P.cache_x == CAMP_CACHE_X_LFB ? "P5/c R_Mem (1 - C/c)" : "R_LFB R_Mem s_Cache/c",
	       rms[0], rms[1]);
	rc = 0;
out:
	free(pairs);
	return rc ? fail(err) : 0;
}

/*
 * predict --pair DRAM CXL: CAMP's workflow (the paper's Table 2: "DRAM (+CXL
 * for BW-bound)"): a latency-bound DRAM run (the 5 % rule) is predicted from
 * itself (Eq. 5-7), a bandwidth-bound one from both runs (Eq. 10 at x = 0).
 */
static int cmd_predict_pair(const struct opts *o, const struct camp_params *P)
{
	char err[ERR_MAX];
	struct camp_counts cd, cc;
	struct camp_features fd, fc;
	struct camp_curve cv;
	if (o->nfiles != 2)
		return bad_usage("predict --pair: give a DRAM-only and a CXL-only run");
	if (camp_read(o->files[0], &cd, err, sizeof err) != 0 ||
	    camp_features_for(P, &cd, &fd, err, sizeof err) != 0 ||
	    camp_read(o->files[1], &cc, err, sizeof err) != 0 ||
	    camp_features_for(P, &cc, &fc, err, sizeof err) != 0 ||
	    camp_interleave(P, &fd, &fc, o->runs, 2, &cv, err, sizeof err) != 0)
		return fail(err);
	const struct camp_slowdown *s = &cv.s[0]; /* x = 0: every page on CXL */
	const char *kind = camp_interleave_runs(P, &fd) == 1 ? "latency-bound" : "bandwidth-bound";
	if (o->csv)
		printf("file,s_drd,s_cache,s_store,s_total,runs,kind\n%s,%.6f,%.6f,%.6f,%.6f,%u,%s\n",
		       o->files[0], s->drd, s->cache, s->store, s->total, cv.runs, kind);
	else
		printf("%s: S_DRd %.3f  S_Cache %.3f  S_Store %.3f  S %.3f  (%s: %u profiling run%s)\n",
		       o->files[0], s->drd, s->cache, s->store, s->total, kind, cv.runs,
		       cv.runs == 1 ? "" : "s");
	camp_curve_free(&cv);
	return 0;
}

static int cmd_predict(const struct opts *o)
{
	char err[ERR_MAX];
	struct camp_params P;
	if (o->nfiles == 0)
		return bad_usage("predict: give one or more DRAM-only runs");
	if (read_params(o, &P, err) != 0)
		return fail(err);
	if (o->pair)
		return cmd_predict_pair(o, &P);
	if (o->csv)
		printf("file,s_drd,s_cache,s_store,s_total,l_over_mlp,latency,mlp,s_llc,s_cache_stalls,"
		       "s_sb,r_lfb,r_mem,s_sum,threads,c_mem,lfb\n");
	for (size_t i = 0; i < o->nfiles; i++) {
		struct camp_counts c;
		struct camp_features f;
		struct camp_slowdown s;
		if (camp_read(o->files[i], &c, err, sizeof err) != 0 ||
		    camp_features_for(&P, &c, &f, err, sizeof err) != 0 ||
		    camp_predict_need(&P, &c, err, sizeof err) != 0)
			return fail(err);
		camp_predict(&P, &f, &s);
		double sum = s.total;
		uint32_t threads = 1;
		if (!o->sum) {
			struct camp_counts *t;
			uint32_t n;
			if (camp_read_threads(o->files[i], &t, &n, err, sizeof err) != 0)
				return fail(err);
			double crit = camp_predict_critical(&P, t, n);
			free(t);
			if (!isnan(crit)) {
				s.total = crit;
				threads = n;
			}
		}
		if (o->csv)
			printf("%s,%.6f,%.6f,%.6f,%.6f,%.4f,%.4f,%.4f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%u,"
			       "%.6f,%.6f\n",
			       o->files[i], s.drd, s.cache, s.store, s.total, f.lom, f.lat, f.mlp, f.s_llc,
			       f.s_cache, f.s_sb, f.r_lfb, f.r_mem, sum, threads, f.c_mem, f.lfb);
		else
			printf("%s: S_DRd %.3f  S_Cache %.3f  S_Store %.3f  S %.3f%s  (L %.1f, L/MLP %.1f "
			       "cycles, C %.2f, s_LLC %.2f, s_Cache %.2f, s_SB %.2f, R_LFB %.2f, P5/c "
			       "%.3f, R_Mem %.2f%s)\n",
			       o->files[i], s.drd, s.cache, s.store, s.total,
			       threads > 1 ? " (slowest thread)" : "", f.lat, f.lom, f.c_mem,
			       f.s_llc, f.s_cache, f.s_sb, f.r_lfb, f.lfb, f.r_mem,
			       f.r_mem_uncore ? " uncore" : "");
	}
	return 0;
}

static int cmd_curve(const struct opts *o, bool best_only)
{
	char err[ERR_MAX];
	struct camp_params P;
	struct camp_counts cd, cc;
	struct camp_features fd, fc;
	struct camp_curve cv;
	if (o->nfiles < 1 || o->nfiles > 2)
		return bad_usage("interleave / best-shot: give the DRAM-only run and, optionally, the "
				 "CXL-only run");
	if (read_params(o, &P, err) != 0 || camp_read(o->files[0], &cd, err, sizeof err) != 0 ||
	    camp_features_for(&P, &cd, &fd, err, sizeof err) != 0)
		return fail(err);
	if (o->nfiles == 2 && (camp_read(o->files[1], &cc, err, sizeof err) != 0 ||
			       camp_features_for(&P, &cc, &fc, err, sizeof err) != 0))
		return fail(err);
	uint32_t runs = o->runs ? o->runs : camp_interleave_runs(&P, &fd);
	if (camp_interleave(&P, &fd, o->nfiles == 2 ? &fc : NULL, runs, best_only ? 101 : o->points,
			    &cv, err, sizeof err) != 0)
		return fail(err);
	const char *kind = camp_interleave_runs(&P, &fd) == 1 ? "latency-bound" : "bandwidth-bound";
	const struct camp_slowdown *b = &cv.s[cv.best];
	double xb = cv.x[cv.best];
	if (best_only) {
		if (o->csv)
			printf("file,x_best,s_best,s_drd,s_cache,s_store,runs,kind\n%s,%.2f,%.6f,%.6f,%.6f,"
			       "%.6f,%u,%s\n",
			       o->files[0], xb, b->total, b->drd, b->cache, b->store, cv.runs, kind);
		else
			printf("%s: x* = %.2f (DRAM:CXL %.0f:%.0f), predicted S(x*) = %+.3f (%s, %u "
			       "profiling run%s)\n",
			       o->files[0], xb, 100 * xb, 100 - 100 * xb, b->total, kind, cv.runs,
			       cv.runs == 1 ? "" : "s");
	} else {
		printf("# %s: %s, %u profiling run%s; x* = %.2f, S(x*) = %.6f; load share %s, "
		       "latency %s\n",
		       o->files[0], kind, cv.runs, cv.runs == 1 ? "" : "s", xb, b->total,
		       P.load == CAMP_LOAD_RATE ? "rate" : "footprint",
		       P.load_lat == CAMP_LOAD_LAT_MM1 ? "mm1" : "quadratic");
		printf(o->csv ? "x,s_drd,s_cache,s_store,s_total\n" : "%6s %9s %9s %9s %9s\n", "x",
		       "S_DRd", "S_Cache", "S_Store", "S");
		for (uint32_t i = 0; i < cv.npts; i++)
			printf(o->csv ? "%.4f,%.6f,%.6f,%.6f,%.6f\n" : "%6.2f %9.4f %9.4f %9.4f %9.4f\n",
			       cv.x[i], cv.s[i].drd, cv.s[i].cache, cv.s[i].store, cv.s[i].total);
	}
	camp_curve_free(&cv);
	return 0;
}

static int cmd_measure(const struct opts *o)
{
	char err[ERR_MAX];
	struct camp_counts a, b;
	struct camp_slowdown s;
	if (o->nfiles != 2)
		return bad_usage("measure: give a DRAM-only and a CXL-only run");
	if (camp_read(o->files[0], &a, err, sizeof err) != 0 ||
	    camp_read(o->files[1], &b, err, sizeof err) != 0 ||
	    camp_measure(&a, &b, &s, err, sizeof err) != 0)
		return fail(err);
	if (o->csv)
		printf("dram,cxl,s_total,s_drd,s_cache,s_store,time_dram_ns,time_cxl_ns\n%s,%s,%.6f,%.6f,"
		       "%.6f,%.6f,%.1f,%.1f\n",
		       o->files[0], o->files[1], s.total, s.drd, s.cache, s.store, a.v[CAMP_TIME_NS],
		       b.v[CAMP_TIME_NS]);
	else
		printf("measured S %.3f (stall growth: DRd %.3f, Cache %.3f, Store %.3f)\n", s.total,
		       s.drd, s.cache, s.store);
	return 0;
}

static int cmd_counters(const struct opts *o)
{
	char err[ERR_MAX];
	static const char *state[] = {"absent", "", "<not counted>", "<not supported>"};
	if (o->nfiles == 0)
		return bad_usage("counters: give one or more files");
	for (size_t i = 0; i < o->nfiles; i++) {
		struct camp_counts c;
		if (camp_read(o->files[i], &c, err, sizeof err) != 0)
			return fail(err);
		printf("%s\n", o->files[i]);
		for (int e = 0; e < CAMP_NEV; e++)
			printf("  %-4s %-18s %18.0f %s\n", camp_ev_label((enum camp_ev)e),
			       camp_ev_name((enum camp_ev)e), c.v[e], state[c.state[e]]);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	char msg[512];
	if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (parse(argc, argv, &o, msg, sizeof msg) != 0)
		return bad_usage(msg);
	const char *cmd = argv[1];
	if (strcmp(cmd, "calibrate") == 0)
		return cmd_calibrate(&o);
	if (strcmp(cmd, "predict") == 0)
		return cmd_predict(&o);
	if (strcmp(cmd, "interleave") == 0)
		return cmd_curve(&o, false);
	if (strcmp(cmd, "best-shot") == 0)
		return cmd_curve(&o, true);
	if (strcmp(cmd, "measure") == 0)
		return cmd_measure(&o);
	if (strcmp(cmd, "counters") == 0)
		return cmd_counters(&o);
	snprintf(msg, sizeof msg, "unknown command '%s'", cmd);
	return bad_usage(msg);
}
