/*
 * h5out.c — writes a run's one HDF5 file (layout in include/cxlsim/h5out.h).
 *
 * Who calls it: one surviving rank, once, at the end of a run, with everything
 * already gathered into a struct cxs_run_record. So the file is written with
 * the serial API and the sec2 (POSIX) driver even though Debian links the
 * parallel HDF5 build: nothing here is collective, so a dead rank cannot hang
 * the writer, and no MPI call is made (the unit tests run it without
 * MPI_Init).
 *
 * Atomic publication (publish.c): everything goes to "<path>.incomplete",
 * which is closed, flushed to disk and then rename()d over <path>; on any
 * failure the temporary file is removed. A reader therefore sees either no file, an older file, or a
 * complete one — never a torn one. Whether the *run* succeeded is the root
 * attribute `status`, not the file's existence.
 *
 * Types on disk are fixed little-endian (STD_U64LE, IEEE_F64LE, ...) whatever
 * the host, so files compare byte for byte across machines apart from
 * HDF5's own timestamps. Strings are variable-length UTF-8 (h5py: str); a
 * NULL string in the record is written as "".
 *
 * Node and component groups track link creation order, so a reader that
 * honours it (h5py does) lists counters in registration order, the order the
 * digest uses, rather than alphabetically. Node groups are named "%04u"
 * (0007); ids past 9999 simply get more digits.
 *
 * Errors: HDF5's automatic stack printing is switched off for the duration of
 * the call (and restored after), and the first failure becomes one line in
 * err: "<path>: <what failed> (HDF5: <major> / <minor>: <detail>)", taken from
 * the innermost entry of the HDF5 error stack, which is the one that names
 * the cause (e.g. errno text for a missing directory). Every id is closed on
 * every path; the file is opened with H5F_CLOSE_SEMI so that a leaked id
 * would make H5Fclose fail loudly instead of silently keeping the file open.
 */
#include "cxlsim/h5out.h"
#include "cxlsim/publish.h"

#include <hdf5.h>

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bump when the layout changes in a way a reader must know about. */
#define CXS_H5_FORMAT_VERSION 1u

#define BUCKET_RULE "bucket 0: value 0; bucket i>=1: [2^(i-1), 2^i)"

/* Longest object path we name in a message: /nodes/<id>/<component>/<name>. */
#define WHERE_MAX 256

struct writer {
	const char *path; /* the final name, which messages use */
	char *err;
	size_t errlen;
	int failed;       /* the first failure wins the message */
	hid_t str_type;   /* variable-length UTF-8 string, memory and file */
	hid_t gcpl;       /* group creation: link creation order tracked */
};

/* One row of /failures as it sits in memory; the file type is packed. */
struct failure_row {
	uint32_t node;
	uint32_t rank;
	uint64_t time_ps;
	double detected_wall_s;
	uint32_t epoch;
	const char *cause;
};

/* ---- errors ----------------------------------------------------------- */

struct stack_msg {
	char text[512];
	int found;
};

/* Keeps the first entry of an upward walk: the innermost, most specific. */
static herr_t stack_entry(unsigned n, const H5E_error2_t *e, void *data)
{
	struct stack_msg *m = data;
	char maj[128] = "?", min[128] = "?";

	(void)n;
	if (m->found)
		return 0;
	if (H5Eget_msg(e->maj_num, NULL, maj, sizeof(maj)) < 0)
		strcpy(maj, "?");
	if (H5Eget_msg(e->min_num, NULL, min, sizeof(min)) < 0)
		strcpy(min, "?");
	snprintf(m->text, sizeof(m->text), "%s / %s: %s", maj, min, e->desc ? e->desc : "");
	m->found = 1;
	return 0;
}

/*
 * Records the first failure as one line in w->err. With hdf5 set, appends the
 * innermost HDF5 error; it must then be called right after the failing call,
 * before any other API call clears the stack.
 */
static void fail_v(struct writer *w, int hdf5, const char *fmt, va_list ap)
{
	struct stack_msg m = { .found = 0 };
	char what[WHERE_MAX + 64];

	if (hdf5) {
		H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, stack_entry, &m);
		H5Eclear2(H5E_DEFAULT);
	}
	if (w->failed)
		return;
	w->failed = 1;
	vsnprintf(what, sizeof(what), fmt, ap);
	if (w->err == NULL || w->errlen == 0)
		return;
	if (m.found)
		snprintf(w->err, w->errlen, "%s: %s (HDF5: %s)", w->path, what, m.text);
	else
		snprintf(w->err, w->errlen, "%s: %s", w->path, what);
	/* HDF5 details sometimes carry newlines (a ctime() string); one line. */
	for (char *p = w->err; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void fail_h5(struct writer *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fail_v(w, 1, fmt, ap);
	va_end(ap);
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void fail_plain(struct writer *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fail_v(w, 0, fmt, ap);
	va_end(ap);
}

/* Closes *id if open and marks it closed; a failing close is a failure. */
static void close_id(struct writer *w, hid_t *id, herr_t (*close_fn)(hid_t), const char *where)
{
	if (*id >= 0 && close_fn(*id) < 0)
		fail_h5(w, "cannot close %s", where);
	*id = -1;
}

/* ---- attributes and datasets ------------------------------------------ */

static int write_attr(struct writer *w, hid_t loc, const char *where, const char *name,
		      hid_t file_type, hid_t mem_type, const void *buf)
{
	hid_t space = -1, attr = -1;

	space = H5Screate(H5S_SCALAR);
	if (space < 0) {
		fail_h5(w, "cannot create dataspace for attribute %s of %s", name, where);
		goto out;
	}
	attr = H5Acreate2(loc, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT);
	if (attr < 0) {
		fail_h5(w, "cannot create attribute %s of %s", name, where);
		goto out;
	}
	if (H5Awrite(attr, mem_type, buf) < 0) {
		fail_h5(w, "cannot write attribute %s of %s", name, where);
		goto out;
	}
out:
	close_id(w, &attr, H5Aclose, where);
	close_id(w, &space, H5Sclose, where);
	return w->failed ? -1 : 0;
}

static int attr_str(struct writer *w, hid_t loc, const char *where, const char *name, const char *s)
{
	const char *v = s != NULL ? s : "";

	return write_attr(w, loc, where, name, w->str_type, w->str_type, &v);
}

static int attr_u64(struct writer *w, hid_t loc, const char *where, const char *name, uint64_t v)
{
	return write_attr(w, loc, where, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, &v);
}

static int attr_u32(struct writer *w, hid_t loc, const char *where, const char *name, uint32_t v)
{
	return write_attr(w, loc, where, name, H5T_STD_U32LE, H5T_NATIVE_UINT32, &v);
}

static int attr_i32(struct writer *w, hid_t loc, const char *where, const char *name, int32_t v)
{
	return write_attr(w, loc, where, name, H5T_STD_I32LE, H5T_NATIVE_INT32, &v);
}

static int attr_f64(struct writer *w, hid_t loc, const char *where, const char *name, double v)
{
	return write_attr(w, loc, where, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &v);
}

static int attr_units(struct writer *w, hid_t obj, const char *where, const char *unit,
		      const char *desc)
{
	if (attr_str(w, obj, where, "units", unit) < 0)
		return -1;
	return attr_str(w, obj, where, "description", desc);
}

/*
 * Creates dataset `name` under loc — scalar when scalar is set, else 1-D of
 * n elements — and writes buf into it (nothing to write when n == 0).
 * Returns the open dataset, which the caller closes, or -1.
 */
static hid_t make_dataset(struct writer *w, hid_t loc, const char *name, const char *where,
			  hid_t file_type, hid_t mem_type, int scalar, hsize_t n, const void *buf)
{
	hid_t space = -1, dset = -1;

	space = scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, NULL);
	if (space < 0) {
		fail_h5(w, "cannot create dataspace for %s", where);
		goto out;
	}
	dset = H5Dcreate2(loc, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (dset < 0) {
		fail_h5(w, "cannot create dataset %s", where);
		goto out;
	}
	if ((scalar || n > 0) && H5Dwrite(dset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
		fail_h5(w, "cannot write dataset %s", where);
		goto out;
	}
out:
	close_id(w, &space, H5Sclose, where);
	if (w->failed)
		close_id(w, &dset, H5Dclose, where);
	return dset;
}

static hid_t make_group(struct writer *w, hid_t loc, const char *name, const char *where)
{
	hid_t g = H5Gcreate2(loc, name, H5P_DEFAULT, w->gcpl, H5P_DEFAULT);

	if (g < 0)
		fail_h5(w, "cannot create group %s", where);
	return g;
}

/* ---- sections of the file --------------------------------------------- */

static int write_root_attrs(struct writer *w, hid_t file, const struct cxs_run_record *rec)
{
	const char *r = "/";

	if (attr_u32(w, file, r, "format_version", CXS_H5_FORMAT_VERSION) < 0 ||
	    attr_str(w, file, r, "cxlsim_version", rec->cxlsim_version) < 0 ||
	    attr_str(w, file, r, "command_line", rec->command_line) < 0 ||
	    attr_str(w, file, r, "config", rec->config_text) < 0 ||
	    attr_u32(w, file, r, "nranks", rec->nranks) < 0 ||
	    attr_u32(w, file, r, "nnodes", rec->nnodes) < 0 ||
	    attr_str(w, file, r, "status", rec->status) < 0 ||
	    attr_i32(w, file, r, "exit_status", rec->exit_status) < 0 ||
	    attr_u64(w, file, r, "checksum", rec->checksum) < 0 ||
	    attr_u64(w, file, r, "end_time_ps", rec->end_time_ps) < 0 ||
	    attr_u64(w, file, r, "final_time_ps", rec->final_time_ps) < 0 ||
	    attr_f64(w, file, r, "wall_seconds", rec->wall_seconds) < 0 ||
	    attr_u64(w, file, r, "seed", rec->seed) < 0 ||
	    attr_str(w, file, r, "model", rec->model) < 0)
		return -1;
	return 0;
}

static int write_engine(struct writer *w, hid_t file, const struct cxs_run_record *rec)
{
	hid_t grp = -1, dset = -1;
	char where[WHERE_MAX];

	grp = make_group(w, file, "engine", "/engine");
	if (grp < 0)
		goto out;
	for (size_t i = 0; i < rec->ncolumns; i++) {
		const struct cxs_rank_column *c = &rec->columns[i];

		snprintf(where, sizeof(where), "/engine/%s", c->name);
		if (c->is_double)
			dset = make_dataset(w, grp, c->name, where, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
					    0, rec->nranks, c->dvals);
		else
			dset = make_dataset(w, grp, c->name, where, H5T_STD_U64LE, H5T_NATIVE_UINT64,
					    0, rec->nranks, c->uvals);
		if (dset < 0 || attr_units(w, dset, where, c->unit, c->desc) < 0)
			goto out;
		close_id(w, &dset, H5Dclose, where);
	}
out:
	close_id(w, &dset, H5Dclose, "/engine dataset");
	close_id(w, &grp, H5Gclose, "/engine");
	return w->failed ? -1 : 0;
}

/* The component group for a statistic: opened if an earlier one made it. */
static hid_t component_group(struct writer *w, hid_t node, const char *component, const char *where)
{
	htri_t exists = H5Lexists(node, component, H5P_DEFAULT);
	hid_t g;

	if (exists < 0) {
		fail_h5(w, "cannot look up group %s", where);
		return -1;
	}
	if (exists == 0)
		return make_group(w, node, component, where);
	g = H5Gopen2(node, component, H5P_DEFAULT);
	if (g < 0)
		fail_h5(w, "cannot open group %s", where);
	return g;
}

static int write_stat(struct writer *w, hid_t comp, const char *node_where,
		      const struct cxs_stat_view *v)
{
	char where[WHERE_MAX];
	hid_t dset = -1;
	const struct cxs_hist *h = v->hist;

	snprintf(where, sizeof(where), "%s/%s/%s", node_where, v->component, v->name);
	if (v->kind == CXS_STAT_COUNTER) {
		dset = make_dataset(w, comp, v->name, where, H5T_STD_U64LE, H5T_NATIVE_UINT64, 1, 1,
				    &v->value);
		if (dset >= 0)
			attr_units(w, dset, where, v->unit, v->desc);
		goto out;
	}

	assert(h != NULL && h->nbuckets >= 1 && h->nbuckets <= CXS_HIST_BUCKETS_MAX);
	dset = make_dataset(w, comp, v->name, where, H5T_STD_U64LE, H5T_NATIVE_UINT64, 0,
			    h->nbuckets, h->bucket);
	if (dset < 0 || attr_units(w, dset, where, v->unit, v->desc) < 0 ||
	    attr_u64(w, dset, where, "count", h->count) < 0 ||
	    attr_u64(w, dset, where, "sum", h->sum) < 0 ||
	    attr_u64(w, dset, where, "min", h->min) < 0 ||
	    attr_u64(w, dset, where, "max", h->max) < 0 ||
	    attr_str(w, dset, where, "bucket_rule", BUCKET_RULE) < 0)
		goto out;
out:
	close_id(w, &dset, H5Dclose, where);
	return w->failed ? -1 : 0;
}

/* /nodes/<id>, empty when the node's statistics were lost with its rank. */
static int write_node_stats(struct writer *w, hid_t nodes, uint32_t id, const struct cxs_stats *st)
{
	char name[16], where[32], comp_where[WHERE_MAX] = "";
	hid_t grp = -1, comp = -1;
	const char *comp_name = NULL; /* the component comp is open on */

	snprintf(name, sizeof(name), "%04" PRIu32, id);
	snprintf(where, sizeof(where), "/nodes/%s", name);
	grp = make_group(w, nodes, name, where);
	if (grp < 0)
		goto out;
	for (size_t i = 0; i < cxs_stats_count(st); i++) {
		struct cxs_stat_view v;

		if (cxs_stats_get(st, i, &v) != 0) {
			fail_plain(w, "cannot read statistic %zu of node %" PRIu32, i, id);
			goto out;
		}
		/* Components usually register their statistics together; keep
		 * the group open across a run of them. */
		if (comp_name == NULL || strcmp(comp_name, v.component) != 0) {
			close_id(w, &comp, H5Gclose, comp_where);
			snprintf(comp_where, sizeof(comp_where), "%s/%s", where, v.component);
			comp = component_group(w, grp, v.component, comp_where);
			if (comp < 0)
				goto out;
			comp_name = v.component;
		}
		if (write_stat(w, comp, where, &v) < 0)
			goto out;
	}
out:
	close_id(w, &comp, H5Gclose, "component group");
	close_id(w, &grp, H5Gclose, where);
	return w->failed ? -1 : 0;
}

static int write_nodes(struct writer *w, hid_t file, const struct cxs_run_record *rec)
{
	hid_t grp = -1, dset = -1;
	size_t n = rec->nnodes;
	const char **type = NULL;
	uint8_t *alive = NULL;
	uint32_t *rank = NULL;

	/* +1: malloc(0) may return NULL, which is not an error here. */
	type = malloc((n + 1) * sizeof(*type));
	alive = malloc((n + 1) * sizeof(*alive));
	rank = malloc((n + 1) * sizeof(*rank));
	if (type == NULL || alive == NULL || rank == NULL) {
		fail_plain(w, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		type[i] = rec->nodes[i].type != NULL ? rec->nodes[i].type : "";
		alive[i] = rec->nodes[i].alive != 0;
		rank[i] = rec->nodes[i].rank;
	}

	grp = make_group(w, file, "nodes", "/nodes");
	if (grp < 0)
		goto out;
	dset = make_dataset(w, grp, "type", "/nodes/type", w->str_type, w->str_type, 0, n, type);
	if (dset < 0)
		goto out;
	close_id(w, &dset, H5Dclose, "/nodes/type");
	dset = make_dataset(w, grp, "alive", "/nodes/alive", H5T_STD_U8LE, H5T_NATIVE_UINT8, 0, n,
			    alive);
	if (dset < 0)
		goto out;
	close_id(w, &dset, H5Dclose, "/nodes/alive");
	dset = make_dataset(w, grp, "rank", "/nodes/rank", H5T_STD_U32LE, H5T_NATIVE_UINT32, 0, n,
			    rank);
	if (dset < 0)
		goto out;
	close_id(w, &dset, H5Dclose, "/nodes/rank");

	for (uint32_t i = 0; i < rec->nnodes; i++) {
		if (write_node_stats(w, grp, i, rec->nodes[i].stats) < 0)
			goto out;
		if (rec->tick)
			rec->tick(rec->tick_ctx);
	}
out:
	close_id(w, &dset, H5Dclose, "/nodes dataset");
	close_id(w, &grp, H5Gclose, "/nodes");
	free(type);
	free(alive);
	free(rank);
	return w->failed ? -1 : 0;
}

/*
 * Builds the /failures compound type: with offsetof() for memory, or packed
 * (no padding, fixed little-endian members) for the file.
 */
static hid_t failure_type(struct writer *w, int packed)
{
	struct member {
		const char *name;
		hid_t mem, file;
		size_t offset;
	} m[] = {
		{ "node", H5T_NATIVE_UINT32, H5T_STD_U32LE, offsetof(struct failure_row, node) },
		{ "rank", H5T_NATIVE_UINT32, H5T_STD_U32LE, offsetof(struct failure_row, rank) },
		{ "time_ps", H5T_NATIVE_UINT64, H5T_STD_U64LE,
		  offsetof(struct failure_row, time_ps) },
		{ "detected_wall_s", H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE,
		  offsetof(struct failure_row, detected_wall_s) },
		{ "epoch", H5T_NATIVE_UINT32, H5T_STD_U32LE, offsetof(struct failure_row, epoch) },
		{ "cause", w->str_type, w->str_type, offsetof(struct failure_row, cause) },
	};
	size_t nm = sizeof(m) / sizeof(m[0]);
	size_t size = 0;
	hid_t t = -1;

	if (packed) {
		for (size_t i = 0; i < nm; i++) {
			m[i].offset = size;
			size += H5Tget_size(m[i].file);
		}
	} else {
		size = sizeof(struct failure_row);
	}
	t = H5Tcreate(H5T_COMPOUND, size);
	if (t < 0) {
		fail_h5(w, "cannot create the /failures type");
		goto out;
	}
	for (size_t i = 0; i < nm; i++) {
		if (H5Tinsert(t, m[i].name, m[i].offset, packed ? m[i].file : m[i].mem) < 0) {
			fail_h5(w, "cannot add member %s to the /failures type", m[i].name);
			goto out;
		}
	}
out:
	if (w->failed)
		close_id(w, &t, H5Tclose, "/failures type");
	return t;
}

static int write_failures(struct writer *w, hid_t file, const struct cxs_run_record *rec)
{
	hid_t mem_type = -1, file_type = -1, dset = -1;
	struct failure_row *row = NULL;
	size_t n = rec->nfailures;

	row = calloc(n + 1, sizeof(*row));
	if (row == NULL) {
		fail_plain(w, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct cxs_failure_record *f = &rec->failures[i];
		row[i] = (struct failure_row){
			.node = f->node,
			.rank = f->rank,
			.time_ps = f->time_ps,
			.detected_wall_s = f->detected_wall_s,
			.epoch = f->epoch,
			.cause = f->cause != NULL ? f->cause : "",
		};
	}
	mem_type = failure_type(w, 0);
	if (mem_type < 0)
		goto out;
	file_type = failure_type(w, 1);
	if (file_type < 0)
		goto out;
	dset = make_dataset(w, file, "failures", "/failures", file_type, mem_type, 0, n, row);
out:
	close_id(w, &dset, H5Dclose, "/failures");
	close_id(w, &file_type, H5Tclose, "/failures type");
	close_id(w, &mem_type, H5Tclose, "/failures type");
	free(row);
	return w->failed ? -1 : 0;
}

/* ---- the record and the file ------------------------------------------ */

/* An engine column name must be one HDF5 link name. */
static int valid_column_name(const char *s)
{
	return s != NULL && s[0] != '\0' && strchr(s, '/') == NULL && strcmp(s, ".") != 0 &&
	       strcmp(s, "..") != 0;
}

/* Checks what HDF5 would not: missing arrays and unusable names. */
static int check_record(struct writer *w, const struct cxs_run_record *rec)
{
	if (rec == NULL) {
		fail_plain(w, "no run record");
		return -1;
	}
	if ((rec->ncolumns > 0 && rec->columns == NULL) || (rec->nnodes > 0 && rec->nodes == NULL) ||
	    (rec->nfailures > 0 && rec->failures == NULL)) {
		fail_plain(w, "run record has a count without its array");
		return -1;
	}
	for (size_t i = 0; i < rec->ncolumns; i++) {
		const struct cxs_rank_column *c = &rec->columns[i];
		const void *vals = c->is_double ? (const void *)c->dvals : (const void *)c->uvals;

		if (!valid_column_name(c->name)) {
			fail_plain(w, "engine column %zu: invalid name \"%s\"", i,
				   c->name != NULL ? c->name : "(null)");
			return -1;
		}
		if (rec->nranks > 0 && vals == NULL) {
			fail_plain(w, "engine column %s has no values", c->name);
			return -1;
		}
	}
	return 0;
}

int cxs_h5_write(const char *path, const struct cxs_run_record *rec, char *err, size_t errlen)
{
	struct writer w = { .path = path != NULL ? path : "(null)", .err = err, .errlen = errlen,
			    .str_type = -1, .gcpl = -1 };
	H5E_auto2_t old_func = NULL;
	void *old_data = NULL;
	int restore_auto = 0;
	hid_t fapl = -1, file = -1;
	char *partial = NULL, why[512];

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (path == NULL || path[0] == '\0') {
		fail_plain(&w, "no output path");
		goto out;
	}
	if (check_record(&w, rec) < 0)
		goto out;
	partial = cxs_publish_begin(path);
	if (partial == NULL) {
		fail_plain(&w, "out of memory");
		goto out;
	}

	/* Our caller gets one line, not HDF5's stack dump on stderr. */
	if (H5Eget_auto2(H5E_DEFAULT, &old_func, &old_data) < 0 ||
	    H5Eset_auto2(H5E_DEFAULT, NULL, NULL) < 0) {
		fail_plain(&w, "cannot initialise HDF5");
		goto out;
	}
	restore_auto = 1;

	w.str_type = H5Tcopy(H5T_C_S1);
	if (w.str_type < 0 || H5Tset_size(w.str_type, H5T_VARIABLE) < 0 ||
	    H5Tset_cset(w.str_type, H5T_CSET_UTF8) < 0) {
		fail_h5(&w, "cannot create the string type");
		goto out;
	}
	w.gcpl = H5Pcreate(H5P_GROUP_CREATE);
	if (w.gcpl < 0 ||
	    H5Pset_link_creation_order(w.gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) < 0) {
		fail_h5(&w, "cannot create group properties");
		goto out;
	}
	fapl = H5Pcreate(H5P_FILE_ACCESS);
	if (fapl < 0 || H5Pset_fapl_sec2(fapl) < 0 || H5Pset_fclose_degree(fapl, H5F_CLOSE_SEMI) < 0) {
		fail_h5(&w, "cannot create file access properties");
		goto out;
	}

	file = H5Fcreate(partial, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
	if (file < 0) {
		fail_h5(&w, "cannot create file");
		goto out;
	}
	if (write_root_attrs(&w, file, rec) < 0 || write_engine(&w, file, rec) < 0 ||
	    write_nodes(&w, file, rec) < 0 || write_failures(&w, file, rec) < 0)
		goto out;

	/* Every helper closed what it opened: only the file itself is left. */
	assert(H5Fget_obj_count(file, H5F_OBJ_ALL) == 1);
	if (H5Fclose(file) < 0) {
		fail_h5(&w, "cannot close file %s", partial); /* out: retries the close */
		goto out;
	}
	file = -1;
	if (cxs_publish_commit(partial, path, why, sizeof(why)) != 0) {
		fail_plain(&w, "%s", why);
		goto out;
	}
out:
	close_id(&w, &file, H5Fclose, "file");
	close_id(&w, &fapl, H5Pclose, "file access properties");
	close_id(&w, &w.gcpl, H5Pclose, "group properties");
	close_id(&w, &w.str_type, H5Tclose, "string type");
	if (w.failed && partial != NULL)
		cxs_publish_abort(partial); /* may never have been created: ENOENT is fine */
	if (restore_auto)
		H5Eset_auto2(H5E_DEFAULT, old_func, old_data);
	free(partial);
	return w.failed ? -1 : 0;
}
