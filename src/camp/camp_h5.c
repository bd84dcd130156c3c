/*
 * camp_h5.c — reading a cxlsim run's counters from its HDF5 file (camp.h).
 *
 * The only code of src/camp that knows cxlsim's output layout. It reads the
 * cores' counters (src/core/core.c, named after CAMP's Table 5) and sums
 * them over every core of every CN, as `perf stat` sums a process's threads:
 *
 *   cxlsim counter             event
 *   cycles                     cycles
 *   instructions               instructions
 *   stalls_l1d_miss            P1
 *   stalls_l2_miss             P2
 *   stalls_l3_miss             P3
 *   l1d_misses                 P4
 *   lfb_hits                   P5
 *   bound_on_stores            P6
 *   l1_pf_offcore              P7 (L1 prefetches that missed L2: the offcore
 *                                  responses OFFCORE_RESPONSE counts)
 *   l1_pf_offcore - l1_pf_from_mem    P8 (of those, the ones L3 served)
 *   l2_pf_requests             P9
 *   l2_pf_l3_hits              P10
 *   offcore_demand_reads_outstanding   P11 (demand reads that missed L2,
 *                                  L3 hits included, as Intel counts them)
 *   l2_misses                  P12
 *   cycles_with_offcore_demand_read    P13
 *   demand_reads_outstanding   P11m (the same of the demand reads that
 *   demand_reads               P12m  missed L3: Intel's L3_MISS_DEMAND_DATA_RD
 *   cycles_with_demand_read    P13m  variants)
 *   (no uncore: P14..P17 absent, so R_Mem uses the SKX form)
 *
 * A file written before the offcore_* counters existed has P11m..P13m and
 * no P11..P13 (its demand_* counters were read as P11..P13 then, which made
 * a model calibrated on cxlsim read L3 misses and the same model on a
 * server's perf stat L2 misses; README "CAMP").
 *
 * A file written before l1_pf_offcore existed gives P7 = l1_pf_requests,
 * every L1 prefetch including those L2 served, which OFFCORE_RESPONSE does
 * not see: its R_Mem is lower wherever L2 holds prefetched lines.
 *
 * and the run's time as max(roi_end_ps) - min(roi_begin_ps) over the CNs
 * (component "workload"), which is what the slowdown is measured on.
 *
 * Layout (format 2, include/cxlsim/h5out.h): /stats/<group>/<counter> is a
 * uint64 column over the group's rows (node and index columns alongside),
 * so a counter of group "core" is one read and one sum. A file without the
 * root attribute format_version, of another format (the per-node format 1
 * included: analysis/cxlsim_h5.py refuses it too), or whose root attribute
 * status does not start with "complete", is refused with one line.
 *
 * HDF5's automatic error printing is off while reading (restored after);
 * the first failure becomes the message.
 */
#include "cxlsim/camp.h"

#include <hdf5.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "camp_priv.h"

struct map {
	const char *name;
	enum camp_ev ev;
};

static const struct map core_map[] = {
	{"cycles", CAMP_CYCLES},
	{"instructions", CAMP_INSTRUCTIONS},
	{"stalls_l1d_miss", CAMP_STALLS_L1D},
	{"stalls_l2_miss", CAMP_STALLS_L2},
	{"stalls_l3_miss", CAMP_STALLS_L3},
	{"l1d_misses", CAMP_L1_MISS},
	{"lfb_hits", CAMP_LFB_HIT},
	{"bound_on_stores", CAMP_BOUND_STORES},
	{"l2_pf_requests", CAMP_PF_L2_ANY},
	{"l2_pf_l3_hits", CAMP_PF_L2_L3HIT},
};
#define NMAP (sizeof core_map / sizeof core_map[0])

/*
 * The demand-read counters: P11..P13 from the L2-miss ones (Intel's
 * OFFCORE_REQUESTS definition) where the file has them (older files do not:
 * then the run has no P11..P13), P11m..P13m from the L3-miss ones. l2_misses
 * is P12 only beside the offcore_* counters of the same cxlsim.
 */
static const struct map drd_map[2][3] = {
	{{"offcore_demand_reads_outstanding", CAMP_ORO_DRD},
	 {"l2_misses", CAMP_OR_DRD},
	 {"cycles_with_offcore_demand_read", CAMP_ORO_CYC_DRD}},
	{{"demand_reads_outstanding", CAMP_ORO_DRD_L3M},
	 {"demand_reads", CAMP_OR_DRD_L3M},
	 {"cycles_with_demand_read", CAMP_ORO_CYC_DRD_L3M}},
};

struct acc {
	struct camp_counts *c;
	double pf_from_mem, pf_requests, pf_offcore;
	bool have_pf_from_mem, have_pf_requests, have_pf_offcore;
	uint64_t roi_begin, roi_end; /* min, max */
	bool have_cores;
	uint32_t cns;
	const char *err_what;        /* first failure */
};

/* A uint64 dataset (scalar or 1-D) into *buf (malloc'd, *n values); -1 if it cannot be read. */
static int read_u64(hid_t loc, const char *name, uint64_t **buf, hssize_t *n)
{
	int rc = -1;
	hid_t d = H5Dopen2(loc, name, H5P_DEFAULT), sp = -1;
	*buf = NULL;
	if (d < 0)
		return -1;
	sp = H5Dget_space(d);
	*n = sp < 0 ? -1 : H5Sget_simple_extent_npoints(sp);
	if (*n < 0 || !(*buf = malloc((size_t)(*n ? *n : 1) * sizeof **buf)))
		goto out;
	if (*n > 0 && H5Dread(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, *buf) < 0)
		goto out;
	rc = 0;
out:
	if (rc != 0) {
		free(*buf);
		*buf = NULL;
	}
	if (sp >= 0)
		H5Sclose(sp);
	H5Dclose(d);
	return rc;
}

/* Sum of a uint64 dataset (scalar or 1-D), its min and max; -1 if it cannot be read. */
static int read_sum(hid_t loc, const char *name, double *sum, uint64_t *mn, uint64_t *mx)
{
	uint64_t *buf;
	hssize_t n;
	if (read_u64(loc, name, &buf, &n) != 0)
		return -1;
	*sum = 0;
	for (hssize_t i = 0; i < n; i++) {
		*sum += (double)buf[i];
		if (mn && buf[i] < *mn)
			*mn = buf[i];
		if (mx && buf[i] > *mx)
			*mx = buf[i];
	}
	free(buf);
	return 0;
}

static bool exists(hid_t loc, const char *path)
{
	return H5Lexists(loc, path, H5P_DEFAULT) > 0;
}

/* A uint64 column of n rows, as doubles into buf; -1 if it cannot be read or has other rows. */
static int read_rows(hid_t loc, const char *name, double *buf, hssize_t n)
{
	uint64_t *u;
	hssize_t got;
	if (read_u64(loc, name, &u, &got) != 0)
		return -1;
	for (hssize_t i = 0; got == n && i < n; i++)
		buf[i] = (double)u[i];
	free(u);
	return got == n ? 0 : -1;
}

/* Adds the core group's counter columns (summed over its rows: every core of every CN). */
static int add_core(hid_t g, struct acc *a)
{
	for (size_t i = 0; i < NMAP; i++) {
		double v;
		if (!exists(g, core_map[i].name))
			continue;
		if (read_sum(g, core_map[i].name, &v, NULL, NULL) != 0) {
			a->err_what = core_map[i].name;
			return -1;
		}
		camp_add(a->c, core_map[i].ev, v);
	}
	for (int s = exists(g, drd_map[0][0].name) ? 0 : 1; s < 2; s++)
		for (int i = 0; i < 3; i++) {
			const struct map *m = &drd_map[s][i];
			double v;
			if (!exists(g, m->name))
				continue;
			if (read_sum(g, m->name, &v, NULL, NULL) != 0) {
				a->err_what = m->name;
				return -1;
			}
			camp_add(a->c, m->ev, v);
		}
	/* P7 and P8 come from the L1 prefetch counters together (after the loop) */
	static const char *const pf[3] = {"l1_pf_from_mem", "l1_pf_requests", "l1_pf_offcore"};
	double *sum[3] = {&a->pf_from_mem, &a->pf_requests, &a->pf_offcore};
	bool *have[3] = {&a->have_pf_from_mem, &a->have_pf_requests, &a->have_pf_offcore};
	for (int i = 0; i < 3; i++) {
		double v;
		if (!exists(g, pf[i]))
			continue;
		if (read_sum(g, pf[i], &v, NULL, NULL) != 0) {
			a->err_what = pf[i];
			return -1;
		}
		*sum[i] += v;
		*have[i] = true;
	}
	return 0;
}

static int add_workload(hid_t g, struct acc *a)
{
	double dummy;
	if (!exists(g, "roi_begin_ps") || !exists(g, "roi_end_ps"))
		return 0;
	if (read_sum(g, "roi_begin_ps", &dummy, &a->roi_begin, NULL) != 0 ||
	    read_sum(g, "roi_end_ps", &dummy, NULL, &a->roi_end) != 0) {
		a->err_what = "workload/roi_*_ps";
		return -1;
	}
	a->cns++;
	return 0;
}

/* A string attribute of the root (variable-length UTF-8), into buf. */
static int root_string(hid_t f, const char *name, char *buf, size_t len)
{
	int rc = -1;
	hid_t at = H5Aopen(f, name, H5P_DEFAULT), ty = -1, mt = -1;
	char *s = NULL;
	if (at < 0)
		return -1;
	ty = H5Aget_type(at);
	if (ty < 0 || H5Tget_class(ty) != H5T_STRING)
		goto out;
	if (H5Tis_variable_str(ty) > 0) {
		mt = H5Tcopy(H5T_C_S1);
		H5Tset_size(mt, H5T_VARIABLE);
		H5Tset_cset(mt, H5Tget_cset(ty));
		if (H5Aread(at, mt, &s) < 0)
			goto out;
		snprintf(buf, len, "%s", s ? s : "");
		H5free_memory(s);
	} else {
		size_t n = H5Tget_size(ty);
		char *tmp = calloc(1, n + 1);
		mt = H5Tcopy(ty);
		if (!tmp || H5Aread(at, mt, tmp) < 0) {
			free(tmp);
			goto out;
		}
		snprintf(buf, len, "%s", tmp);
		free(tmp);
	}
	rc = 0;
out:
	if (mt >= 0)
		H5Tclose(mt);
	if (ty >= 0)
		H5Tclose(ty);
	H5Aclose(at);
	return rc;
}

int camp_read_h5(const char *path, struct camp_counts *out, char *err, size_t errlen)
{
	H5E_auto2_t old_fn;
	void *old_data;
	H5Eget_auto2(H5E_DEFAULT, &old_fn, &old_data);
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	int rc = -1;
	memset(out, 0, sizeof *out);
	snprintf(out->source, sizeof out->source, "%s", path);
	struct acc a = {.c = out, .roi_begin = UINT64_MAX, .roi_end = 0};
	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (f < 0) {
		snprintf(err, errlen, "%s: cannot open as HDF5", path);
		goto out;
	}
	uint32_t version = 0;
	hid_t at = H5Aexists(f, "format_version") > 0 ? H5Aopen(f, "format_version", H5P_DEFAULT) : -1;
	if (at < 0 || H5Aread(at, H5T_NATIVE_UINT32, &version) < 0) {
		if (at >= 0)
			H5Aclose(at);
		snprintf(err, errlen, "%s: not a cxlsim output file (no format_version attribute)", path);
		goto out;
	}
	H5Aclose(at);
	char status[512] = "";
	if (root_string(f, "status", status, sizeof status) != 0 ||
	    strncmp(status, "complete", 8) != 0) {
		snprintf(err, errlen, "%s: the run did not complete (status: %s)", path,
			 status[0] ? status : "missing");
		goto out;
	}
	if (version != 2) {
		snprintf(err, errlen,
			 "%s: format_version %u; cxlsim-camp reads format 2 only (re-run the simulation "
			 "with this cxlsim: its configuration is the file's attribute config)",
			 path, version);
		goto out;
	}
	if (exists(f, "/stats") && exists(f, "/stats/core")) {
		hid_t g = H5Gopen2(f, "/stats/core", H5P_DEFAULT);
		if (g < 0 || add_core(g, &a) != 0) {
			if (g >= 0)
				H5Gclose(g);
			snprintf(err, errlen, "%s: cannot read /stats/core/%s", path,
				 a.err_what ? a.err_what : "");
			goto out;
		}
		a.have_cores = true;
		H5Gclose(g);
	}
	if (exists(f, "/stats") && exists(f, "/stats/workload")) {
		hid_t g = H5Gopen2(f, "/stats/workload", H5P_DEFAULT);
		if (g < 0 || add_workload(g, &a) != 0) {
			if (g >= 0)
				H5Gclose(g);
			snprintf(err, errlen, "%s: cannot read /stats/workload", path);
			goto out;
		}
		H5Gclose(g);
	}
	if (!a.have_cores || out->state[CAMP_CYCLES] != CAMP_COUNTED) {
		snprintf(err, errlen,
			 "%s: no core counters (a run of an out-of-order workload: workload.kernel "
			 "other than tester)",
			 path);
		goto out;
	}
	if ((a.have_pf_offcore || a.have_pf_requests) && a.have_pf_from_mem) {
		double any = a.have_pf_offcore ? a.pf_offcore : a.pf_requests;
		camp_add(out, CAMP_PF_L1D_ANY, any);
		camp_add(out, CAMP_PF_L1D_L3HIT, any - a.pf_from_mem);
	}
	if (a.cns && a.roi_end > a.roi_begin)
		camp_add(out, CAMP_TIME_NS, (double)(a.roi_end - a.roi_begin) / 1e3);
	rc = 0;
out:
	if (f >= 0)
		H5Fclose(f);
	H5Eset_auto2(H5E_DEFAULT, old_fn, old_data);
	return rc;
}

/*
 * Per core: the same events as camp_read_h5 from each row of /stats/core
 * (its P7/P8 from the row's own prefetch counters). Called on a file
 * camp_read_h5 accepted, so only reading can fail here.
 */
int camp_read_h5_threads(const char *path, struct camp_counts **out, uint32_t *n, char *err,
			 size_t errlen)
{
	H5E_auto2_t old_fn;
	void *old_data;
	H5Eget_auto2(H5E_DEFAULT, &old_fn, &old_data);
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	int rc = -1;
	*out = NULL;
	*n = 0;
	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), g = -1, d = -1, sp = -1;
	hssize_t rows = -1;
	struct camp_counts *t = NULL;
	double *col = NULL, *pf[3] = {NULL, NULL, NULL};
	const char *what = "cycles";
	if (f < 0 || (g = H5Gopen2(f, "/stats/core", H5P_DEFAULT)) < 0 ||
	    (d = H5Dopen2(g, "cycles", H5P_DEFAULT)) < 0 || (sp = H5Dget_space(d)) < 0 ||
	    (rows = H5Sget_simple_extent_npoints(sp)) <= 0)
		goto out;
	t = calloc((size_t)rows, sizeof *t);
	col = malloc((size_t)rows * sizeof *col);
	for (int i = 0; i < 3; i++)
		pf[i] = calloc((size_t)rows, sizeof *pf[i]);
	if (!t || !col || !pf[0] || !pf[1] || !pf[2]) {
		what = "(out of memory)";
		goto out;
	}
	for (hssize_t r = 0; r < rows; r++)
		snprintf(t[r].source, sizeof t[r].source, "%s (core row %lld)", path, (long long)r);
	struct map all[NMAP + 6];
	size_t nall = 0;
	for (size_t i = 0; i < NMAP; i++)
		all[nall++] = core_map[i];
	for (int s = exists(g, drd_map[0][0].name) ? 0 : 1; s < 2; s++)
		for (int i = 0; i < 3; i++)
			all[nall++] = drd_map[s][i];
	for (size_t i = 0; i < nall; i++) {
		if (!exists(g, all[i].name))
			continue;
		what = all[i].name;
		if (read_rows(g, all[i].name, col, rows) != 0)
			goto out;
		for (hssize_t r = 0; r < rows; r++)
			camp_add(&t[r], all[i].ev, col[r]);
	}
	static const char *const pfn[3] = {"l1_pf_from_mem", "l1_pf_requests", "l1_pf_offcore"};
	bool have[3];
	for (int i = 0; i < 3; i++) {
		what = pfn[i];
		have[i] = exists(g, pfn[i]);
		if (have[i] && read_rows(g, pfn[i], pf[i], rows) != 0)
			goto out;
	}
	if ((have[1] || have[2]) && have[0])
		for (hssize_t r = 0; r < rows; r++) {
			double any = have[2] ? pf[2][r] : pf[1][r];
			camp_add(&t[r], CAMP_PF_L1D_ANY, any);
			camp_add(&t[r], CAMP_PF_L1D_L3HIT, any - pf[0][r]);
		}
	*out = t;
	*n = (uint32_t)rows;
	t = NULL;
	rc = 0;
out:
	if (rc != 0)
		snprintf(err, errlen, "%s: cannot read /stats/core/%s per core", path, what);
	free(t);
	free(col);
	for (int i = 0; i < 3; i++)
		free(pf[i]);
	if (sp >= 0)
		H5Sclose(sp);
	if (d >= 0)
		H5Dclose(d);
	if (g >= 0)
		H5Gclose(g);
	if (f >= 0)
		H5Fclose(f);
	H5Eset_auto2(H5E_DEFAULT, old_fn, old_data);
	return rc;
}

static bool h5_signature(const char *path)
{
	static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
	unsigned char head[8] = {0};
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	size_t n = fread(head, 1, sizeof head, f);
	fclose(f);
	return n == sizeof head && memcmp(head, sig, sizeof sig) == 0;
}

int camp_read_threads(const char *path, struct camp_counts **out, uint32_t *n, char *err,
		      size_t errlen)
{
	if (h5_signature(path))
		return camp_read_h5_threads(path, out, n, err, errlen);
	return camp_read_perf_threads(path, out, n, err, errlen);
}

int camp_read(const char *path, struct camp_counts *out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	fclose(f);
	if (h5_signature(path))
		return camp_read_h5(path, out, err, errlen);
	return camp_read_perf(path, out, err, errlen);
}
