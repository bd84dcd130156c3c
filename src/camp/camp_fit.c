/*
 * camp_fit.c — calibrating CAMP's platform constants from microbenchmark
 * pairs (a DRAM-only and a CXL-only run each), and the parameter file.
 *
 * Two fits, as the paper separates them (§4.1 steps 3 and 4):
 *
 *   1  the hyperbola. For every pair whose DRAM run is memory-bound (at
 *      least 5 % of its cycles stalled on L3 misses: elsewhere latency and
 *      MLP ratios are noise), y = R_Lat / R_MLP - 1 measured from the two
 *      runs (L = P11/P12, MLP = P11/P13) against x of the DRAM run;
 *      y = 1 / (p + q x) by nonlinear least squares, once with x = L/MLP
 *      (the paper's) and once with x = L; the fit with the smaller sum of
 *      squared residuals is kept (drd_x; camp_model.c says why L can be the
 *      better argument), the paper's on a tie or if the other fails. The
 *      queue form (camp_model.c: the device's latency at the DRAM run's
 *      load; beta, kappa fitted with the idle latencies fixed) is fitted
 *      too and its residual reported, but kept only when asked
 *      (camp_calibrate_form): on cxlsim's four presets it fits the
 *      microbenchmarks best (rms 0.06-0.09 against 0.09-0.23) and recovers
 *      each device's bandwidth ratio as beta (NUMA 1.04, CXL-A 1.87, CXL-B
 *      2.02, CXL-C 0.98: the presets' 1, 2, 2, 1), yet predicts the other
 *      105 configurations' S_DRd worse on CXL-A and CXL-B (README "CAMP"):
 *      a DRAM latency L mixes the unloaded latency (row hits or misses)
 *      with queueing, so programs at one L differ in y by up to 0.5, and a
 *      curve that follows the microbenchmarks' corner misses the rest;
 *   2  the scales, one per component, as the paper calibrates k_store on
 *      memset: with p, q fixed, each predictor of Eq. 5-7 without its k
 *      (A = s/c / (p + q x), B = R_LFB R_Mem s_Cache/c, C = s_SB/c)
 *      against its own measured component over all pairs (the growth of
 *      s_LLC, of s_L1D - s_L2 and of s_SB from the DRAM to the CXL run, over
 *      the DRAM run's cycles: what Fig. 6 compares), a line through the
 *      origin each (k = sum A S / sum A^2). Fitting the three against the
 *      total slowdown instead lets one component's k soak up another's
 *      error (a stream's prefetch cliff raised k_store), and the
 *      per-component accuracy the paper reports would be unexamined.
 *      The authors' artifact (MoatLab/CAMP, prof/proc/param.py) fits
 *      each of these lines with an intercept too; fitted on the
 *      microbenchmarks alone, an intercept is the offset of a few
 *      calibration points (cxlsim's CXL-A: +0.084 on S_Cache from the
 *      streams' prefetch cliff, +0.065 on S_DRd) that every predicted
 *      workload would then carry, cache-resident ones included, so the
 *      lines here go through the origin.
 *      A's stall count s is fitted both as s_LLC (Eq. 5) and as the
 *      memory-active cycles C = P13 (Eq. 4), and the line with the smaller
 *      residual is kept (drd_base); B likewise both as Eq. 6 and as the
 *      loads that hit a fill buffer on a line prefetched from memory outside
 *      the memory-active cycles, P5 R_Mem (1 - C/c) / c (cache_x;
 *      camp_model.c says why: on cxlsim's streams Eq. 6's ratio of growth
 *      to predictor runs 33 to 1.5 with the thread count, the LFB form's
 *      2.6-3.2).
 *
 * The demand-read events (L, MLP, C) are P11m..P13m, the L3-miss
 * variants, when every run of the pairs has them, else the paper's P11..P13
 * (drd_events; camp_model.c says why the L3 misses).
 *
 * Both choices are made on the calibration pairs alone, so a platform
 * whose microbenchmarks follow the paper's Eq. 5 keeps it; on cxlsim's four
 * presets the microbenchmarks choose L and C (README "CAMP").
 *
 * Why GSL. The hyperbola is a small nonlinear least-squares problem, but a
 * hand-written Gauss-Newton has no step control and diverges from a poor
 * start when the data are flat (q near 0, p large); GSL's gsl_multifit_nlinear
 * (Levenberg-Marquardt with a trust region, geodesic acceleration off) is
 * well tested, in Debian (libgsl-dev), and reports convergence and the
 * reason it stopped. The scales use gsl_fit_mul (least squares through the
 * origin); a predictor no pair exercises (no memset pair, so no store-bound
 * run) has no scale, and that is refused by name rather than fitted to
 * noise.
 *
 * What can fail, each with one message: fewer than two memory-bound pairs
 * with distinct L/MLP; the nonlinear solver not converging; a hyperbola
 * that crosses zero inside the calibration range (p + q x <= 0 would turn
 * Eq. 5 negative or infinite); a predictor that is zero for every pair; a
 * negative k.
 *
 * Idle latencies (for interleaving and the queue form) are the demand-read
 * latencies of the pair whose DRAM run has the lowest MLP — a pointer chase,
 * as Intel MLC's idle latency is — unless given.
 */
#include "cxlsim/camp.h"

#include <errno.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEMORY_BOUND 0.05 /* s_LLC / c of a pair usable for the hyperbola */

struct pts {
	const double *x, *y;
	size_t n;
};

static int hyp_f(const gsl_vector *b, void *data, gsl_vector *r)
{
	const struct pts *d = data;
	double p = gsl_vector_get(b, 0), q = gsl_vector_get(b, 1);
	for (size_t i = 0; i < d->n; i++) {
		double h = p + q * d->x[i];
		gsl_vector_set(r, i, (h != 0 ? 1 / h : 1e300) - d->y[i]);
	}
	return GSL_SUCCESS;
}

static int hyp_df(const gsl_vector *b, void *data, gsl_matrix *J)
{
	const struct pts *d = data;
	double p = gsl_vector_get(b, 0), q = gsl_vector_get(b, 1);
	for (size_t i = 0; i < d->n; i++) {
		double h = p + q * d->x[i], g = h != 0 ? -1 / (h * h) : 0;
		gsl_matrix_set(J, i, 0, g);
		gsl_matrix_set(J, i, 1, g * d->x[i]);
	}
	return GSL_SUCCESS;
}

/* The queue form (camp_model.c): beta = e^u, kappa = 1 + e^v keep both in range. */
struct qpts {
	const double *x, *y;
	size_t n;
	double l0d, l0c;
};

static void queue_bk(const gsl_vector *b, double *beta, double *kappa)
{
	*beta = exp(fmin(gsl_vector_get(b, 0), 20));
	*kappa = 1 + exp(fmin(gsl_vector_get(b, 1), 20));
}

static int queue_f(const gsl_vector *b, void *data, gsl_vector *r)
{
	const struct qpts *d = data;
	double beta, kappa;
	queue_bk(b, &beta, &kappa);
	for (size_t i = 0; i < d->n; i++)
		gsl_vector_set(r, i, camp_queue_y(d->x[i], d->l0d, d->l0c, beta, kappa) - d->y[i]);
	return GSL_SUCCESS;
}

/*
 * The relative standard error of beta at (beta, kappa): sigma^2 (J^T J)^-1 for
 * u = ln beta, sigma^2 the residual variance; INFINITY where J^T J is singular
 * (no point past the corner: beta does not move the curve).
 */
static double queue_beta_se(const struct qpts *d, double beta, double kappa, double ssr)
{
	const double h = 1e-6; /* central differences in u = ln beta and v = ln(kappa - 1) */
	double u = log(beta), v = log(kappa - 1);
	double a = 0, b = 0, c = 0; /* J^T J = [a b; b c] */
	for (size_t i = 0; i < d->n; i++) {
		double ju = (camp_queue_y(d->x[i], d->l0d, d->l0c, exp(u + h), kappa) -
			     camp_queue_y(d->x[i], d->l0d, d->l0c, exp(u - h), kappa)) / (2 * h);
		double jv = (camp_queue_y(d->x[i], d->l0d, d->l0c, beta, 1 + exp(v + h)) -
			     camp_queue_y(d->x[i], d->l0d, d->l0c, beta, 1 + exp(v - h))) / (2 * h);
		a += ju * ju, b += ju * jv, c += jv * jv;
	}
	if (!(a > 0))
		return INFINITY;
	if (!(c > 0) || !isfinite(c)) /* kappa at 1, where v = ln(kappa - 1) has no slope */
		return sqrt(ssr / (double)(d->n - 2) / a);
	double det = a * c - b * b;
	if (!(det > 1e-12 * a * c))
		return INFINITY;
	return sqrt(ssr / (double)(d->n - 2) * c / det);
}

/*
 * y = camp_queue_y(L) over the points, from a few starts (the surface is flat
 * in kappa where no point is near the corner); 0 and the best fit's beta,
 * kappa and residual, or -1 if no start converged, the device is not slower
 * at idle, or the points do not determine beta (its standard error above
 * CAMP_BETA_SE_MAX, camp.h: microbenchmarks that never load memory past the
 * corner, whose best fit can put beta anywhere and extrapolate to any loaded
 * program). The Jacobian is GSL's finite differences: two parameters, ~20
 * points.
 */
static int fit_queue(const double *x, const double *y, size_t n, double l0d, double l0c,
		     double *beta, double *kappa, double *ssr, double *se)
{
	*se = INFINITY;
	if (n < 3 || !(l0c > l0d) || !(l0d > 0))
		return -1;
	struct qpts data = {x, y, n, l0d, l0c};
	gsl_multifit_nlinear_parameters params = gsl_multifit_nlinear_default_parameters();
	gsl_multifit_nlinear_fdf fdf = {.f = queue_f, .df = NULL, .fvv = NULL, .n = n, .p = 2,
					.params = &data};
	gsl_multifit_nlinear_workspace *w =
		gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &params, n, 2);
	gsl_vector *b0 = gsl_vector_alloc(2);
	int rc = -1;
	*ssr = INFINITY;
	static const double starts[][2] = {{1, 2}, {2, 2}, {1, 8}, {2, 8}, {1.5, 4}};
	for (size_t s = 0; w && b0 && s < sizeof starts / sizeof starts[0]; s++) {
		int info = 0;
		gsl_vector_set(b0, 0, log(starts[s][0]));
		gsl_vector_set(b0, 1, log(starts[s][1] - 1));
		gsl_multifit_nlinear_init(b0, &fdf, w);
		if (gsl_multifit_nlinear_driver(200, 1e-10, 1e-10, 1e-12, NULL, NULL, &info, w) !=
		    GSL_SUCCESS)
			continue;
		double bt, kp, r2 = 0;
		queue_bk(w->x, &bt, &kp);
		for (size_t i = 0; i < n; i++) {
			double r = camp_queue_y(x[i], l0d, l0c, bt, kp) - y[i];
			r2 += r * r;
		}
		if (isfinite(r2) && r2 < *ssr) {
			*ssr = r2;
			*beta = bt;
			*kappa = kp;
			rc = 0;
		}
	}
	if (rc == 0 && !((*se = queue_beta_se(&data, *beta, *kappa, *ssr)) <= CAMP_BETA_SE_MAX))
		rc = -1;
	gsl_vector_free(b0);
	if (w)
		gsl_multifit_nlinear_free(w);
	return rc;
}

/* y = 1 / (p + q x) over the points; -1 with a message. */
static int fit_hyperbola(const double *x, const double *y, size_t n, double *p, double *q,
			 double *ssr, char *err, size_t errlen)
{
	double ym = 0, xmin = INFINITY, xmax = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		ym += y[i] / n;
		xmin = fmin(xmin, x[i]);
		xmax = fmax(xmax, x[i]);
	}
	if (n < 2 || xmax - xmin < 1e-9 * fmax(1, xmax)) {
		snprintf(err, errlen,
			 "calibrate: %zu memory-bound pair(s) with distinct L/MLP; the hyperbola needs "
			 "at least 2 (pointer chases with several chains, streams at several thread counts)",
			 n);
		return -1;
	}
	if (ym <= 0) {
		snprintf(err, errlen,
			 "calibrate: the pairs' mean R_Lat / R_MLP - 1 is %g <= 0: the CXL runs are not "
			 "slower than the DRAM runs (are the pairs in DRAM, CXL order?)",
			 ym);
		return -1;
	}
	const gsl_multifit_nlinear_type *T = gsl_multifit_nlinear_trust;
	gsl_multifit_nlinear_parameters params = gsl_multifit_nlinear_default_parameters();
	struct pts data = {x, y, n};
	gsl_multifit_nlinear_fdf fdf = {.f = hyp_f, .df = hyp_df, .fvv = NULL, .n = n, .p = 2,
					.params = &data};
	gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(T, &params, n, 2);
	gsl_vector *b0 = gsl_vector_alloc(2);
	int rc = -1, info = 0;
	if (!w || !b0) {
		snprintf(err, errlen, "calibrate: out of memory");
		goto out;
	}
	gsl_vector_set(b0, 0, 1 / ym);
	gsl_vector_set(b0, 1, 0);
	gsl_multifit_nlinear_init(b0, &fdf, w);
	int status = gsl_multifit_nlinear_driver(200, 1e-10, 1e-10, 1e-12, NULL, NULL, &info, w);
	if (status != GSL_SUCCESS) {
		snprintf(err, errlen, "calibrate: the hyperbola fit did not converge (GSL: %s)",
			 gsl_strerror(status));
		goto out;
	}
	*p = gsl_vector_get(w->x, 0);
	*q = gsl_vector_get(w->x, 1);
	*ssr = 0;
	for (size_t i = 0; i < n; i++) {
		double r = 1 / (*p + *q * x[i]) - y[i];
		*ssr += r * r;
	}
	if (*p + *q * xmin <= 0 || *p + *q * xmax <= 0) {
		snprintf(err, errlen,
			 "calibrate: the fitted hyperbola 1 / (%g + %g L/MLP) has a pole inside the "
			 "calibration range L/MLP = %g .. %g cycles",
			 *p, *q, xmin, xmax);
		goto out;
	}
	rc = 0;
out:
	gsl_vector_free(b0);
	if (w)
		gsl_multifit_nlinear_free(w);
	return rc;
}

int camp_calibrate(const struct camp_pair *pairs, size_t n, double idle_dram, double idle_cxl,
		   struct camp_params *out, char *err, size_t errlen)
{
	return camp_calibrate_form(pairs, n, idle_dram, idle_cxl, -1, out, err, errlen);
}

int camp_calibrate_form(const struct camp_pair *pairs, size_t n, double idle_dram,
			double idle_cxl, int form, struct camp_params *out, char *err, size_t errlen)
{
	return camp_calibrate_forms(pairs, n, idle_dram, idle_cxl, form, -1, out, err, errlen);
}

int camp_calibrate_forms(const struct camp_pair *pairs, size_t n, double idle_dram,
			 double idle_cxl, int form, int cache_form, struct camp_params *out,
			 char *err, size_t errlen)
{
	int rc = -1;
	struct camp_features *fd = calloc(n ? n : 1, sizeof *fd), *fc = calloc(n ? n : 1, sizeof *fc);
	double *x = calloc(n ? n : 1, sizeof *x), *y = calloc(n ? n : 1, sizeof *y);
	double *xl = calloc(n ? n : 1, sizeof *xl);
	struct camp_slowdown *G = calloc(n ? n : 1, sizeof *G); /* measured components */
	gsl_error_handler_t *old = gsl_set_error_handler_off();
	memset(out, 0, sizeof *out);
	if (!fd || !fc || !x || !y || !xl || !G) {
		snprintf(err, errlen, "calibrate: out of memory");
		goto out;
	}
	if (n < 3) {
		snprintf(err, errlen, "calibrate: %zu pair(s); at least 3 (the four microbenchmarks)", n);
		goto out;
	}
	/* The demand-read events: P11m..P13m if every run has them (camp_model.c). */
	struct camp_params ev = {.drd_events = CAMP_DRD_EV_L3_MISS};
	for (size_t i = 0; i < 2 * n && ev.drd_events == CAMP_DRD_EV_L3_MISS; i++) {
		struct camp_features probe;
		const struct camp_counts *c = i % 2 ? &pairs[i / 2].cxl : &pairs[i / 2].dram;
		if (camp_features(c, &probe, err, errlen) != 0)
			goto out;
		if (probe.drd_events != CAMP_DRD_EV_L3_MISS)
			ev.drd_events = CAMP_DRD_EV_DEMAND;
	}
	size_t m = 0, lowest = 0;
	for (size_t i = 0; i < n; i++) {
		struct camp_slowdown meas;
		if (camp_features_for(&ev, &pairs[i].dram, &fd[i], err, errlen) != 0 ||
		    camp_features_for(&ev, &pairs[i].cxl, &fc[i], err, errlen) != 0 ||
		    camp_measure(&pairs[i].dram, &pairs[i].cxl, &meas, err, errlen) != 0)
			goto out;
		G[i] = meas;
		if (fd[i].mlp > 0 && (fd[lowest].mlp <= 0 || fd[i].mlp < fd[lowest].mlp))
			lowest = i;
		if (fd[i].s_llc >= MEMORY_BOUND && fd[i].lat > 0 && fc[i].lat > 0 && fd[i].mlp > 0 &&
		    fc[i].mlp > 0) {
			x[m] = fd[i].lom;
			xl[m] = fd[i].lat;
			y[m] = (fc[i].lat / fd[i].lat) / (fc[i].mlp / fd[i].mlp) - 1;
			m++;
		}
	}
	out->l_idle_dram = idle_dram > 0 ? idle_dram : fd[lowest].lat;
	out->l_idle_cxl = idle_cxl > 0 ? idle_cxl : fc[lowest].lat;
	double ssr, lp, lq, lssr = INFINITY, qb = 0, qk = 0, qssr = INFINITY;
	char lerr[512];
	out->fit_rms[0] = out->fit_rms[1] = out->fit_rms[2] = NAN;
	if (fit_hyperbola(x, y, m, &out->p, &out->q, &ssr, err, errlen) != 0)
		goto out;
	out->fit_rms[CAMP_DRD_X_LOM] = sqrt(ssr / (double)m);
	int lrc = fit_hyperbola(xl, y, m, &lp, &lq, &lssr, lerr, sizeof lerr);
	if (lrc == 0)
		out->fit_rms[CAMP_DRD_X_LAT] = sqrt(lssr / (double)m);
	int qrc = fit_queue(xl, y, m, out->l_idle_dram, out->l_idle_cxl, &qb, &qk, &qssr,
			    &out->beta_se);
	if (isfinite(qssr))
		out->fit_rms[CAMP_DRD_X_QUEUE] = sqrt(qssr / (double)m);
	/* auto: the better hyperbola; the queue form only when asked (header) */
	bool lat = form == CAMP_DRD_X_LAT || (form < 0 && lrc == 0 && lssr < ssr);
	if (form == CAMP_DRD_X_LAT && lrc != 0) {
		snprintf(err, errlen, "%s", lerr);
		goto out;
	}
	if (lat || (form == CAMP_DRD_X_QUEUE && lrc == 0 && lssr < ssr)) {
		out->p = lp; /* with the queue form: the better hyperbola's, for reference */
		out->q = lq;
	}
	out->drd_x = lat ? CAMP_DRD_X_LAT : CAMP_DRD_X_LOM;
	if (form == CAMP_DRD_X_QUEUE) {
		if (qrc != 0) {
			if (isfinite(out->beta_se))
				snprintf(err, errlen,
					 "calibrate: the queue form's beta is not determined by these "
					 "pairs (standard error %.0f %%, at most %.0f %%): run the "
					 "microbenchmarks on enough threads to load memory",
					 100 * out->beta_se, 100 * CAMP_BETA_SE_MAX);
			else
				snprintf(err, errlen,
					 "calibrate: the queue form's beta is not determined by these "
					 "pairs: none loads memory past the corner (run the "
					 "microbenchmarks on enough threads to load memory)");
			goto out;
		}
		out->beta = qb;
		out->kappa = qk;
		out->drd_x = CAMP_DRD_X_QUEUE;
	}
	/* col: the three predictors without their k (rows 0..2), A on C (row 3), and
	 * S_Cache's LFB-hit predictor (row 4) */
	double *col = calloc(5 * n, sizeof *col), *grow = calloc(3 * n, sizeof *grow);
	if (!col || !grow) {
		free(col), free(grow);
		snprintf(err, errlen, "calibrate: out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct camp_params unit = {.p = out->p, .q = out->q, .beta = out->beta,
					   .kappa = out->kappa, .k_drd = 1, .k_cache = 1,
					   .k_store = 1, .l_idle_dram = out->l_idle_dram,
					   .l_idle_cxl = out->l_idle_cxl, .drd_x = out->drd_x,
					   .drd_events = ev.drd_events};
		struct camp_slowdown c, cm;
		camp_predict(&unit, &fd[i], &c);
		unit.drd_base = CAMP_DRD_BASE_MEM;
		unit.cache_x = CAMP_CACHE_X_LFB;
		camp_predict(&unit, &fd[i], &cm);
		col[i] = c.drd, col[n + i] = c.cache, col[2 * n + i] = c.store, col[3 * n + i] = cm.drd;
		col[4 * n + i] = cm.cache;
		grow[i] = G[i].drd, grow[n + i] = G[i].cache, grow[2 * n + i] = G[i].store;
	}
	static const char *what[3] = {"demand reads (S_DRd: a pointer chase or a stream)",
				      "prefetch-served loads (S_Cache: a stream or strided access)",
				      "store-buffer stalls (S_Store: memset)"};
	double k[3], sumsq[3];
	for (int j = 0; j < 3; j++) {
		double norm = 0, cov;
		for (size_t i = 0; i < n; i++)
			norm += col[j * n + i] * col[j * n + i];
		if (norm < 1e-12 || gsl_fit_mul(col + j * n, 1, grow + j * n, 1, n, &k[j], &cov,
						&sumsq[j]) != GSL_SUCCESS) {
			if (j == 1 && cache_form != CAMP_CACHE_X_STALLS) {
				k[j] = NAN; /* the LFB-hit predictor may still be fitted */
				sumsq[j] = INFINITY;
				continue;
			}
			free(col), free(grow);
			snprintf(err, errlen, "calibrate: no pair exercises %s: its k cannot be fitted",
				 what[j]);
			goto out;
		}
	}
	/* S_Cache's predictor: the paper's, or the LFB hits (camp_model.c), by the residual */
	out->cache_rms[0] = isfinite(sumsq[1]) ? sqrt(sumsq[1] / (double)n) : NAN;
	out->cache_rms[1] = NAN;
	out->cache_x = CAMP_CACHE_X_STALLS;
	if (cache_form != CAMP_CACHE_X_STALLS) {
		double kl, cov, sl = INFINITY, norm = 0;
		for (size_t i = 0; i < n; i++)
			norm += col[4 * n + i] * col[4 * n + i];
		if (norm >= 1e-12 &&
		    gsl_fit_mul(col + 4 * n, 1, grow + n, 1, n, &kl, &cov, &sl) == GSL_SUCCESS)
			out->cache_rms[1] = sqrt(sl / (double)n);
		else
			sl = INFINITY;
		if (isfinite(sl) && (cache_form == CAMP_CACHE_X_LFB || sl < sumsq[1])) {
			k[1] = kl;
			out->cache_x = CAMP_CACHE_X_LFB;
		} else if (!isfinite(sumsq[1]) || cache_form == CAMP_CACHE_X_LFB) {
			free(col), free(grow);
			snprintf(err, errlen, "calibrate: no pair exercises %s: its k cannot be fitted",
				 what[1]);
			goto out;
		}
	}
	out->drd_base = CAMP_DRD_BASE_SLLC;
	double km, cov, sm, norm = 0;
	for (size_t i = 0; i < n; i++)
		norm += col[3 * n + i] * col[3 * n + i];
	if (norm >= 1e-12 && gsl_fit_mul(col + 3 * n, 1, grow, 1, n, &km, &cov, &sm) == GSL_SUCCESS &&
	    sm < sumsq[0]) {
		k[0] = km;
		out->drd_base = CAMP_DRD_BASE_MEM;
	}
	free(col), free(grow);
	out->k_drd = k[0];
	out->k_cache = k[1];
	out->k_store = k[2];
	static const char *kname[3] = {"k_drd", "k_cache", "k_store"};
	for (int j = 0; j < 3; j++)
		if (k[j] < 0) {
			snprintf(err, errlen,
				 "calibrate: the fit gave %s = %g < 0: the pairs contradict Eq. 5-7 (are "
				 "they in DRAM, CXL order?)",
				 kname[j], k[j]);
			goto out;
		}
	out->pairs = (uint32_t)n;
	out->drd_events = ev.drd_events;
	/*
	 * Interleaving's load share: not something the microbenchmarks' endpoint runs can
	 * choose. The rate share is what a tier's load is (camp_model.c, "Interleaving"); on
	 * cxlsim's CXL-A sweeps it puts 73.6 % of the points within 5 % against the footprint
	 * share's 56.4 % (README "CAMP"). load_share = footprint in the file is the paper's.
	 */
	out->load = CAMP_LOAD_RATE;
	/* Likewise the latency at a load share: the M/M/1 curve puts 216 of the 264 swept
	 * points within 5 % against Eq. 8's quadratic's 203 (camp_model.c, README "CAMP"). */
	out->load_lat = CAMP_LOAD_LAT_MM1;
	rc = 0;
out:
	gsl_set_error_handler(old);
	free(fd), free(fc), free(x), free(y), free(xl), free(G);
	return rc;
}

/* ---- the parameter file --------------------------------------------------------- */

struct pkey {
	const char *name;
	size_t off;
};

#define PK(f) {#f, offsetof(struct camp_params, f)}
static const struct pkey pkeys[] = {PK(p), PK(q), PK(k_drd), PK(k_cache), PK(k_store),
				    PK(l_idle_dram), PK(l_idle_cxl)};
#define NPKEYS (sizeof pkeys / sizeof pkeys[0])

/* S_DRd's form (enum camp_drd_x, camp_drd_base); a file without them has the paper's. */
static const char *const drd_x_names[] = {"l_over_mlp", "l", "queue", NULL};
static const char *const drd_base_names[] = {"s_llc", "c_mem", NULL};
static const char *const drd_events_names[] = {"demand", "l3_miss", NULL};
static const char *const load_names[] = {"footprint", "rate", NULL};
static const char *const cache_x_names[] = {"stalls", "lfb_hits", NULL};
static const char *const load_lat_names[] = {"quadratic", "mm1", NULL};

/* v's index in the NULL-terminated names, or -1. */
static int name_index(const char *const names[], const char *v)
{
	for (int i = 0; names[i]; i++)
		if (strcmp(v, names[i]) == 0)
			return i;
	return -1;
}

/* "a, b or c" of the NULL-terminated names, into buf. */
static const char *name_list(const char *const names[], char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = 0;
	for (int i = 0; names[i] && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i == 0 ? "" : names[i + 1] ? ", " : " or ",
				      names[i]);
	return buf;
}

int camp_params_write(const char *path, const struct camp_params *P, const char *comment,
		      char *err, size_t errlen)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
		return -1;
	}
	fprintf(f, "# cxlsim-camp parameters (CAMP Eq. 5-10), fitted from %u microbenchmark pairs\n",
		P->pairs);
	if (comment && *comment)
		fprintf(f, "# %s\n", comment);
	if (P->drd_x == CAMP_DRD_X_QUEUE)
		fprintf(f, "# S_DRd = k_drd y(L) s/c, y the device's latency at the DRAM run's load (queue "
			   "form, beta, kappa; p, q: the better hyperbola, unused), s = %s;",
			P->drd_base == CAMP_DRD_BASE_MEM ? "C" : "s_LLC");
	else
		fprintf(f, "# S_DRd = k_drd / (p + q x) s/c with x = %s, s = %s;",
			P->drd_x == CAMP_DRD_X_LAT ? "L" : "L/MLP",
			P->drd_base == CAMP_DRD_BASE_MEM ? "C" : "s_LLC");
	fprintf(f, " S_Cache = k_cache %s; S_Store = k_store s_SB/c\n"
		   "# latencies in core cycles\n",
		P->cache_x == CAMP_CACHE_X_LFB ? "P5/c R_Mem (1 - C/c)" : "R_LFB R_Mem s_Cache/c");
	for (size_t i = 0; i < NPKEYS; i++)
		fprintf(f, "%s = %.17g\n", pkeys[i].name,
			*(const double *)((const char *)P + pkeys[i].off));
	if (P->drd_x == CAMP_DRD_X_QUEUE)
		fprintf(f, "beta = %.17g\nkappa = %.17g\n", P->beta, P->kappa);
	fprintf(f, "drd_x = %s\n", drd_x_names[P->drd_x <= CAMP_DRD_X_QUEUE ? P->drd_x : 0]);
	fprintf(f, "drd_base = %s\n", drd_base_names[P->drd_base ? 1 : 0]);
	fprintf(f, "drd_events = %s\n", drd_events_names[P->drd_events ? 1 : 0]);
	fprintf(f, "load_share = %s\n", load_names[P->load ? 1 : 0]);
	fprintf(f, "cache_x = %s\n", cache_x_names[P->cache_x ? 1 : 0]);
	fprintf(f, "load_latency = %s\n", load_lat_names[P->load_lat ? 1 : 0]);
	fprintf(f, "pairs = %u\n", P->pairs);
	if (fclose(f) != 0) {
		snprintf(err, errlen, "%s: write error: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int camp_params_read(const char *path, struct camp_params *P, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	memset(P, 0, sizeof *P);
	bool seen[NPKEYS] = {false}, seen_beta = false, seen_kappa = false;
	char line[512];
	int rc = -1;
	for (unsigned ln = 1; fgets(line, sizeof line, f); ln++) {
		char key[64], val[128], extra[2];
		char *s = line + strspn(line, " \t");
		if (*s == '#' || *s == '\n' || *s == 0)
			continue;
		int got = sscanf(s, " %63[A-Za-z_] = %127s %1s", key, val, extra);
		if (got != 2) {
			snprintf(err, errlen, "%s:%u: expected 'key = value'", path, ln);
			goto out;
		}
		if (strcmp(key, "pairs") == 0) {
			P->pairs = (uint32_t)strtoul(val, NULL, 10);
			continue;
		}
		if (strcmp(key, "drd_x") == 0 || strcmp(key, "drd_base") == 0 ||
		    strcmp(key, "drd_events") == 0 || strcmp(key, "load_share") == 0 ||
		    strcmp(key, "cache_x") == 0 || strcmp(key, "load_latency") == 0) {
			bool ll = strcmp(key, "load_latency") == 0;
			const char *const *names = ll		   ? load_lat_names
						   : key[0] == 'l' ? load_names
						   : key[0] == 'c' ? cache_x_names
						   : key[4] == 'x' ? drd_x_names
						   : key[4] == 'b' ? drd_base_names
								   : drd_events_names;
			uint8_t *field = ll		 ? &P->load_lat
					 : key[0] == 'l' ? &P->load
					 : key[0] == 'c' ? &P->cache_x
					 : key[4] == 'x' ? &P->drd_x
					 : key[4] == 'b' ? &P->drd_base
							 : &P->drd_events;
			int i = name_index(names, val);
			if (i < 0) {
				char list[128];
				snprintf(err, errlen, "%s:%u: %s: expected %s, got '%s'", path, ln, key,
					 name_list(names, list, sizeof list), val);
				goto out;
			}
			*field = (uint8_t)i;
			continue;
		}
		size_t i = 0;
		while (i < NPKEYS && strcmp(pkeys[i].name, key) != 0)
			i++;
		double *dst = i < NPKEYS ? (double *)((char *)P + pkeys[i].off) : NULL;
		if (strcmp(key, "beta") == 0)
			dst = &P->beta, seen_beta = true;
		else if (strcmp(key, "kappa") == 0)
			dst = &P->kappa, seen_kappa = true;
		if (!dst) {
			snprintf(err, errlen, "%s:%u: unknown key '%s'", path, ln, key);
			goto out;
		}
		char *end;
		errno = 0;
		double v = strtod(val, &end);
		if (*end || errno || !isfinite(v)) {
			snprintf(err, errlen, "%s:%u: %s: expected a number, got '%s'", path, ln, key, val);
			goto out;
		}
		*dst = v;
		if (i < NPKEYS)
			seen[i] = true;
	}
	for (size_t i = 0; i < NPKEYS; i++)
		if (!seen[i]) {
			snprintf(err, errlen, "%s: missing key %s (made by cxlsim-camp calibrate?)", path,
				 pkeys[i].name);
			goto out;
		}
	if (P->drd_x == CAMP_DRD_X_QUEUE && (!seen_beta || !seen_kappa)) {
		snprintf(err, errlen, "%s: drd_x = queue without %s (made by cxlsim-camp calibrate?)", path,
			 !seen_beta ? "beta" : "kappa");
		goto out;
	}
	if (P->drd_x == CAMP_DRD_X_QUEUE && (!(P->beta > 0) || !(P->kappa >= 1))) {
		snprintf(err, errlen, "%s: %s = %g: expected %s", path, P->beta > 0 ? "kappa" : "beta",
			 P->beta > 0 ? P->kappa : P->beta, P->beta > 0 ? "at least 1" : "more than 0");
		goto out;
	}
	rc = 0;
out:
	fclose(f);
	return rc;
}
