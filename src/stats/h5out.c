/*
 * h5out.c — writes a run's one HDF5 file, format 2 (layout in
 * include/cxlsim/h5out.h).
 *
 * Who calls it: one surviving rank, once, at the end of a run, with everything
 * already gathered into a struct cxs_run_record. So the file is written with
 * the serial API and the sec2 (POSIX) driver even though Debian links the
 * parallel HDF5 build: nothing here is collective, so a dead rank cannot hang
 * the writer, and no MPI call is made (the unit tests run it without
 * MPI_Init).
 *
 * Column-wise statistics. Format 1 wrote one scalar dataset per counter per
 * node: 4,736 datasets and 2.3 MB for 16 CNs x 4 cores + 16 MNs, 0.86 s to
 * load with h5py (2 s for 1024 PHOLD nodes), because every HDF5 object costs
 * an object header on disk and a few calls to read. Format 2 writes one
 * dataset per statistic *name* over every row that has it, so the object
 * count no longer grows with the node count. The writer first builds the
 * layout in memory, in one pass over the nodes in id order:
 *
 *   layout ─ group "core" ─ rows  (node, index)   appended in node order
 *          │               └ columns "cycles", ... each a cell per row:
 *          │                   counter: the value; histogram: its struct;
 *          │                   vector / series: pointer and length
 *          └ group "port" ...
 *
 * The cells point into the gathered registries, which outlive the write, so
 * nothing is copied twice. Rows of one node are contiguous but may come in
 * any instance order, so each group's rows are sorted by (node, index) once,
 * and every dataset is gathered through that order into one buffer and
 * written with one H5Dwrite: the number of HDF5 calls is per column, never
 * per value. Lookups go through small string maps (group name; column name
 * per group) and a one-entry cache of the last component, because a
 * component's statistics are usually registered together.
 *
 * Storage choice: a dataset below CHUNK_MIN_BYTES (every counter column of a
 * 1024-node run is 8 KiB) is contiguous, unfiltered: nothing to gain from
 * chunking, and it is read in one piece. Larger ones (series, vectors,
 * histogram buckets of big runs) are chunked in pieces of about CHUNK_BYTES
 * with shuffle + deflate level 1: counters over time compress several-fold
 * and level 1 costs little CPU. The file uses the HDF5 1.8 object format
 * (libver bounds V18): smaller object headers and attributes of any size,
 * readable by every HDF5 since 1.8 (h5py included).
 *
 * Atomic publication: everything goes to a temporary name (partial_path),
 * which is closed (flushed) and then published (rename()d over <path>, in
 * publish()); on any failure the temporary file is removed. A reader therefore
 * sees either no file, an older file, or a complete one — never a torn one.
 * Whether the *run* succeeded is the root attribute `status`, not the file's
 * existence.
 *
 * Types on disk are fixed little-endian (STD_U64LE, IEEE_F64LE, ...) whatever
 * the host, so files compare byte for byte across machines apart from
 * HDF5's own timestamps. Strings are variable-length UTF-8 (h5py: str); a
 * NULL string in the record is written as "". Groups track link creation
 * order, so a reader that honours it (h5py does) lists groups and columns in
 * the order they were first registered.
 *
 * Errors: HDF5's automatic stack printing is switched off for the duration of
 * the call (and restored after), and the first failure becomes one line in
 * err: "<path>: <what failed> (HDF5: <major> / <minor>: <detail>)", taken from
 * the innermost entry of the HDF5 error stack, which is the one that names
 * the cause (e.g. errno text for a missing directory). A layout the models
 * got wrong (a statistic that is a counter on one node and a histogram on
 * another; a group that is instanced on one node and a plain component on
 * another) is such a failure too, named in the message. Every id is closed on
 * every path; the file is opened with H5F_CLOSE_SEMI so that a leaked id
 * would make H5Fclose fail loudly instead of silently keeping the file open.
 */
#include "cxlsim/h5out.h"

#include <hdf5.h>

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bump when the layout changes in a way a reader must know about. */
#define CXS_H5_FORMAT_VERSION 2u

#define BUCKET_RULE "bucket 0: value 0; bucket i>=1: [2^(i-1), 2^i)"

/* Longest object path we name in a message: /series/<group>/<name>/buckets. */
#define WHERE_MAX 256

#define CHUNK_MIN_BYTES (64u << 10) /* below: contiguous */
#define CHUNK_BYTES (1u << 20)     /* about this much per chunk */
#define DEFLATE_LEVEL 1

struct writer {
	const char *path; /* the final name, which messages use */
	char *err;
	size_t errlen;
	int failed;       /* the first failure wins the message */
	hid_t str_type;   /* variable-length UTF-8 string, memory and file */
	hid_t gcpl;       /* group creation: link creation order tracked */
	int deflate;      /* the deflate filter is available */
	void (*tick)(void *ctx);
	void *tick_ctx;
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

static void tick(struct writer *w)
{
	if (w->tick != NULL)
		w->tick(w->tick_ctx);
}

/* ---- attributes and datasets ------------------------------------------ */

/* An attribute: scalar when n is 0, else 1-D of n elements. */
static int write_attr(struct writer *w, hid_t loc, const char *where, const char *name,
		      hid_t file_type, hid_t mem_type, hsize_t n, const void *buf)
{
	hid_t space = -1, attr = -1;

	space = n == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, NULL);
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

	return write_attr(w, loc, where, name, w->str_type, w->str_type, 0, &v);
}

static int attr_u64(struct writer *w, hid_t loc, const char *where, const char *name, uint64_t v)
{
	return write_attr(w, loc, where, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, 0, &v);
}

static int attr_u32(struct writer *w, hid_t loc, const char *where, const char *name, uint32_t v)
{
	return write_attr(w, loc, where, name, H5T_STD_U32LE, H5T_NATIVE_UINT32, 0, &v);
}

static int attr_u8(struct writer *w, hid_t loc, const char *where, const char *name, uint8_t v)
{
	return write_attr(w, loc, where, name, H5T_STD_U8LE, H5T_NATIVE_UINT8, 0, &v);
}

static int attr_i32(struct writer *w, hid_t loc, const char *where, const char *name, int32_t v)
{
	return write_attr(w, loc, where, name, H5T_STD_I32LE, H5T_NATIVE_INT32, 0, &v);
}

static int attr_f64(struct writer *w, hid_t loc, const char *where, const char *name, double v)
{
	return write_attr(w, loc, where, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 0, &v);
}

static int attr_units(struct writer *w, hid_t obj, const char *where, const char *unit,
		      const char *desc)
{
	if (attr_str(w, obj, where, "units", unit) < 0)
		return -1;
	return attr_str(w, obj, where, "description", desc);
}

/*
 * The dataset creation properties for an array of `bytes` bytes and shape
 * dims[rank]: H5P_DEFAULT (contiguous) when small, else chunks of about
 * CHUNK_BYTES — whole rows of a 2-D array when a row fits — with shuffle and
 * deflate. Returns the list (the caller closes it unless H5P_DEFAULT) or -1.
 */
static hid_t array_dcpl(struct writer *w, const char *where, int rank, const hsize_t *dims,
			size_t elem, hsize_t bytes)
{
	hsize_t chunk[2];
	hsize_t per_chunk = CHUNK_BYTES / elem; /* elements */
	hid_t dcpl;

	if (bytes < CHUNK_MIN_BYTES || !w->deflate)
		return H5P_DEFAULT;
	if (rank == 1) {
		chunk[0] = dims[0] < per_chunk ? dims[0] : per_chunk;
	} else {
		chunk[1] = dims[1] < per_chunk ? dims[1] : per_chunk;
		chunk[0] = per_chunk / chunk[1];
		if (chunk[0] > dims[0])
			chunk[0] = dims[0];
		if (chunk[0] == 0)
			chunk[0] = 1;
	}
	dcpl = H5Pcreate(H5P_DATASET_CREATE);
	if (dcpl < 0 || H5Pset_chunk(dcpl, rank, chunk) < 0 || H5Pset_shuffle(dcpl) < 0 ||
	    H5Pset_deflate(dcpl, DEFLATE_LEVEL) < 0) {
		fail_h5(w, "cannot set up chunked storage for %s", where);
		if (dcpl >= 0)
			H5Pclose(dcpl);
		return -1;
	}
	return dcpl;
}

/*
 * Creates dataset `name` under loc, 1-D (rank 1) or 2-D, and writes buf into
 * it (nothing to write when it is empty). Returns the open dataset, which the
 * caller closes, or -1.
 */
static hid_t make_array(struct writer *w, hid_t loc, const char *name, const char *where,
			hid_t file_type, hid_t mem_type, int rank, const hsize_t *dims,
			const void *buf)
{
	hid_t space = -1, dset = -1, dcpl = H5P_DEFAULT;
	hsize_t n = rank == 1 ? dims[0] : dims[0] * dims[1];
	size_t elem = H5Tget_size(mem_type);

	assert(rank == 1 || rank == 2);
	space = H5Screate_simple(rank, dims, NULL);
	if (space < 0) {
		fail_h5(w, "cannot create dataspace for %s", where);
		goto out;
	}
	dcpl = array_dcpl(w, where, rank, dims, elem ? elem : 1, n * elem);
	if (dcpl < 0)
		goto out;
	dset = H5Dcreate2(loc, name, file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	if (dset < 0) {
		fail_h5(w, "cannot create dataset %s", where);
		goto out;
	}
	if (n > 0 && H5Dwrite(dset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
		fail_h5(w, "cannot write dataset %s", where);
		goto out;
	}
out:
	close_id(w, &space, H5Sclose, where);
	if (dcpl != H5P_DEFAULT)
		close_id(w, &dcpl, H5Pclose, where);
	if (w->failed)
		close_id(w, &dset, H5Dclose, where);
	return dset;
}

static hid_t make_vector(struct writer *w, hid_t loc, const char *name, const char *where,
			 hid_t file_type, hid_t mem_type, hsize_t n, const void *buf)
{
	return make_array(w, loc, name, where, file_type, mem_type, 1, &n, buf);
}

/* Writes a whole 1-D uint64 / uint32 dataset with optional units; closes it. */
static int put_u64s(struct writer *w, hid_t loc, const char *name, const char *where, hsize_t n,
		    const uint64_t *v)
{
	hid_t d = make_vector(w, loc, name, where, H5T_STD_U64LE, H5T_NATIVE_UINT64, n, v);

	close_id(w, &d, H5Dclose, where);
	return w->failed ? -1 : 0;
}

static int put_u32s(struct writer *w, hid_t loc, const char *name, const char *where, hsize_t n,
		    const uint32_t *v)
{
	hid_t d = make_vector(w, loc, name, where, H5T_STD_U32LE, H5T_NATIVE_UINT32, n, v);

	close_id(w, &d, H5Dclose, where);
	return w->failed ? -1 : 0;
}

static hid_t make_group(struct writer *w, hid_t loc, const char *name, const char *where)
{
	hid_t g = H5Gcreate2(loc, name, H5P_DEFAULT, w->gcpl, H5P_DEFAULT);

	if (g < 0)
		fail_h5(w, "cannot create group %s", where);
	return g;
}

/* malloc that records "out of memory" as the failure; n == 0 allocates 1. */
static void *xmalloc(struct writer *w, size_t n, size_t size)
{
	void *p = NULL;

	if (size == 0 || n <= SIZE_MAX / size)
		p = malloc(n * size > 0 ? n * size : 1);
	if (p == NULL)
		fail_plain(w, "out of memory");
	return p;
}

static void *xcalloc(struct writer *w, size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		fail_plain(w, "out of memory");
	return p;
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
			dset = make_vector(w, grp, c->name, where, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
					   rec->nranks, c->dvals);
		else
			dset = make_vector(w, grp, c->name, where, H5T_STD_U64LE, H5T_NATIVE_UINT64,
					   rec->nranks, c->uvals);
		if (dset < 0 || attr_units(w, dset, where, c->unit, c->desc) < 0)
			goto out;
		close_id(w, &dset, H5Dclose, where);
	}
out:
	close_id(w, &dset, H5Dclose, "/engine dataset");
	close_id(w, &grp, H5Gclose, "/engine");
	return w->failed ? -1 : 0;
}

/* /nodes: type, alive and rank per node id. */
static int write_nodes(struct writer *w, hid_t file, const struct cxs_run_record *rec)
{
	hid_t grp = -1, dset = -1;
	size_t n = rec->nnodes;
	const char **type = NULL;
	uint8_t *alive = NULL;
	uint32_t *rank = NULL;

	type = xmalloc(w, n, sizeof(*type));
	alive = xmalloc(w, n, sizeof(*alive));
	rank = xmalloc(w, n, sizeof(*rank));
	if (w->failed)
		goto out;
	for (size_t i = 0; i < n; i++) {
		type[i] = rec->nodes[i].type != NULL ? rec->nodes[i].type : "";
		alive[i] = rec->nodes[i].alive != 0;
		rank[i] = rec->nodes[i].rank;
	}

	grp = make_group(w, file, "nodes", "/nodes");
	if (grp < 0)
		goto out;
	dset = make_vector(w, grp, "type", "/nodes/type", w->str_type, w->str_type, n, type);
	if (dset < 0)
		goto out;
	close_id(w, &dset, H5Dclose, "/nodes/type");
	dset = make_vector(w, grp, "alive", "/nodes/alive", H5T_STD_U8LE, H5T_NATIVE_UINT8, n,
			   alive);
	if (dset < 0)
		goto out;
	close_id(w, &dset, H5Dclose, "/nodes/alive");
	put_u32s(w, grp, "rank", "/nodes/rank", n, rank);
out:
	close_id(w, &dset, H5Dclose, "/nodes dataset");
	close_id(w, &grp, H5Gclose, "/nodes");
	free(type);
	free(alive);
	free(rank);
	return w->failed ? -1 : 0;
}

/* ---- the column-wise layout -------------------------------------------- */

/*
 * A string -> id map: FNV-1a, linear probing, at most half full. Keys are
 * not copied: they point into the gathered registries, which outlive the
 * write. Only probed, never iterated (ids carry the order), so the hash
 * cannot reach the file.
 */
struct smap {
	const char **key;
	uint32_t *id;
	size_t nslots, used;
};

static size_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return (size_t)h;
}

static bool smap_find(const struct smap *m, const char *key, uint32_t *id)
{
	if (m->nslots == 0)
		return false;
	for (size_t s = str_hash(key) & (m->nslots - 1); m->key[s] != NULL;
	     s = (s + 1) & (m->nslots - 1)) {
		if (strcmp(m->key[s], key) == 0) {
			*id = m->id[s];
			return true;
		}
	}
	return false;
}

static void smap_insert(const char **keys, uint32_t *ids, size_t nslots, const char *key,
			uint32_t id)
{
	size_t s = str_hash(key) & (nslots - 1);

	while (keys[s] != NULL)
		s = (s + 1) & (nslots - 1);
	keys[s] = key;
	ids[s] = id;
}

/* Adds a key that smap_find did not find. */
static int smap_put(struct writer *w, struct smap *m, const char *key, uint32_t id)
{
	if ((m->used + 1) * 2 > m->nslots) {
		size_t n = m->nslots ? m->nslots * 2 : 16;
		const char **keys = xcalloc(w, n, sizeof(*keys));
		uint32_t *ids = xcalloc(w, n, sizeof(*ids));
		if (keys == NULL || ids == NULL) {
			free(keys);
			free(ids);
			return -1;
		}
		for (size_t s = 0; s < m->nslots; s++)
			if (m->key[s] != NULL)
				smap_insert(keys, ids, n, m->key[s], m->id[s]);
		free(m->key);
		free(m->id);
		m->key = keys;
		m->id = ids;
		m->nslots = n;
	}
	smap_insert(m->key, m->id, m->nslots, key, id);
	m->used++;
	return 0;
}

static void smap_free(struct smap *m)
{
	free(m->key);
	free(m->id);
}

/* What one row holds of one column. */
struct cell {
	uint64_t v;    /* counter: the value; vector, series: the length */
	const void *p; /* histogram: its struct cxs_hist; vector, series: the values */
};

struct column {
	const char *name;
	enum cxs_stat_kind kind;
	const char *unit, *desc; /* of the first row that has it */
	uint32_t first_node;     /* for messages */
	uint32_t nbuckets;       /* histograms: the most of any row */
	bool nbuckets_differ;
	struct cell *cell;       /* caprows of them */
	uint8_t *have;           /* caprows: the row has this statistic */
	size_t nhave;
};

struct row {
	uint32_t node, index;
	size_t id; /* position in append order (sorting) */
};

struct sgroup {
	const char *name;
	bool instanced;
	uint32_t first_node;
	struct row *rows; /* append order; sorted by (node, index) once built */
	size_t nrows, caprows;
	size_t *order;    /* once built: order[k] = append position of file row k */
	struct column *cols;
	size_t ncols, capcols;
	struct smap colmap;
	uint32_t hint;    /* the column after the last one found: the next guess */
};

struct layout {
	struct sgroup *g;
	size_t ng, capg;
	struct smap gmap;
	/* The component resolved last, on node cache_node: its group and row. */
	const char *cache_comp;
	uint32_t cache_node;
	uint32_t cache_g;
	size_t cache_row;
};

static void layout_free(struct layout *L)
{
	for (size_t i = 0; i < L->ng; i++) {
		struct sgroup *g = &L->g[i];
		for (size_t c = 0; c < g->ncols; c++) {
			free(g->cols[c].cell);
			free(g->cols[c].have);
		}
		free(g->cols);
		free(g->rows);
		free(g->order);
		smap_free(&g->colmap);
	}
	free(L->g);
	smap_free(&L->gmap);
	memset(L, 0, sizeof(*L));
}

static const char *kind_name(enum cxs_stat_kind k)
{
	return k == CXS_STAT_COUNTER ? "counter" : k == CXS_STAT_HIST ? "histogram" : "vector";
}

/* The group `name`, made if new; instanced must agree with its other rows. */
static int group_for(struct writer *w, struct layout *L, const char *name, bool instanced,
		     uint32_t node, uint32_t *gid)
{
	if (smap_find(&L->gmap, name, gid)) {
		const struct sgroup *g = &L->g[*gid];
		if (g->instanced != instanced) {
			fail_plain(w, "statistics group %s: node %" PRIu32 " has %s, node %" PRIu32
				   " has %s; one group cannot be both",
				   name, g->first_node,
				   g->instanced ? "instances of it" : "a plain component of that name",
				   node, instanced ? "instances of it" : "a plain component of that name");
			return -1;
		}
		return 0;
	}
	if (L->ng == L->capg) {
		size_t cap = L->capg ? L->capg * 2 : 16;
		struct sgroup *p = realloc(L->g, cap * sizeof(*p));
		if (p == NULL) {
			fail_plain(w, "out of memory");
			return -1;
		}
		L->g = p;
		L->capg = cap;
	}
	if (smap_put(w, &L->gmap, name, (uint32_t)L->ng) != 0)
		return -1;
	L->g[L->ng] = (struct sgroup){ .name = name, .instanced = instanced, .first_node = node };
	*gid = (uint32_t)L->ng++;
	return 0;
}

/* Grows the rows of g and every column's cells to cap. */
static int grow_rows(struct writer *w, struct sgroup *g, size_t cap)
{
	struct row *rows = realloc(g->rows, cap * sizeof(*rows));

	if (rows == NULL) {
		fail_plain(w, "out of memory");
		return -1;
	}
	g->rows = rows;
	for (size_t c = 0; c < g->ncols; c++) {
		struct column *col = &g->cols[c];
		struct cell *cell = realloc(col->cell, cap * sizeof(*cell));
		if (cell != NULL)
			col->cell = cell;
		uint8_t *have = realloc(col->have, cap);
		if (have != NULL)
			col->have = have;
		if (cell == NULL || have == NULL) {
			/* Columns before c have the new size; it is recorded only below. */
			fail_plain(w, "out of memory");
			return -1;
		}
		memset(col->have + g->caprows, 0, cap - g->caprows);
	}
	g->caprows = cap;
	return 0;
}

/*
 * The row of (node, index) in g, appended if new. Nodes are added in id order,
 * so the node's rows are the last ones.
 */
static int row_for(struct writer *w, struct sgroup *g, uint32_t node, uint32_t index,
		   size_t *row)
{
	for (size_t k = g->nrows; k-- > 0 && g->rows[k].node == node;) {
		if (g->rows[k].index == index) {
			*row = k;
			return 0;
		}
	}
	if (g->nrows == g->caprows && grow_rows(w, g, g->caprows ? g->caprows * 2 : 16) != 0)
		return -1;
	g->rows[g->nrows] = (struct row){ .node = node, .index = index, .id = g->nrows };
	*row = g->nrows++;
	return 0;
}

/* The column `name` of g, made if new; its kind must agree with its other rows. */
static struct column *column_for(struct writer *w, struct sgroup *g, const char *name,
				 enum cxs_stat_kind kind, const char *unit, const char *desc,
				 uint32_t node)
{
	uint32_t c;

	if (g->hint < g->ncols && strcmp(g->cols[g->hint].name, name) == 0) {
		c = g->hint;
	} else if (!smap_find(&g->colmap, name, &c)) {
		if (g->ncols == g->capcols) {
			size_t cap = g->capcols ? g->capcols * 2 : 16;
			struct column *p = realloc(g->cols, cap * sizeof(*p));
			if (p == NULL) {
				fail_plain(w, "out of memory");
				return NULL;
			}
			g->cols = p;
			g->capcols = cap;
		}
		struct column *col = &g->cols[g->ncols];
		*col = (struct column){ .name = name, .kind = kind, .unit = unit, .desc = desc,
					.first_node = node };
		col->cell = xmalloc(w, g->caprows, sizeof(*col->cell));
		col->have = xcalloc(w, g->caprows, 1);
		if (col->cell == NULL || col->have == NULL ||
		    smap_put(w, &g->colmap, name, (uint32_t)g->ncols) != 0) {
			free(col->cell);
			free(col->have);
			return NULL;
		}
		c = (uint32_t)g->ncols++;
	}
	struct column *col = &g->cols[c];
	if (col->kind != kind) {
		fail_plain(w, "statistic %s/%s is a %s on node %" PRIu32 " but a %s on node %" PRIu32,
			   g->name, name, kind_name(col->kind), col->first_node, kind_name(kind), node);
		return NULL;
	}
	g->hint = c + 1;
	return col;
}

/* Puts one statistic of `node` into the layout. */
static int add_cell(struct writer *w, struct layout *L, uint32_t node, const struct cxs_stats *st,
		    const struct cxs_stat_view *v, struct cell cell, uint32_t nbuckets)
{
	if (L->cache_comp == NULL || L->cache_node != node ||
	    strcmp(L->cache_comp, v->component) != 0) {
		const char *group;
		uint32_t index, gid;
		bool inst = cxs_stats_instance_of(st, v->component, &group, &index);

		if (group_for(w, L, group, inst, node, &gid) != 0 ||
		    row_for(w, &L->g[gid], node, index, &L->cache_row) != 0) {
			L->cache_comp = NULL;
			return -1;
		}
		L->cache_comp = v->component;
		L->cache_node = node;
		L->cache_g = gid;
	}
	struct sgroup *g = &L->g[L->cache_g];
	struct column *col = column_for(w, g, v->name, v->kind, v->unit, v->desc, node);
	if (col == NULL)
		return -1;
	/* Names are unique in a registry and a component has one row. */
	assert(!col->have[L->cache_row]);
	col->cell[L->cache_row] = cell;
	col->have[L->cache_row] = 1;
	col->nhave++;
	if (v->kind == CXS_STAT_HIST) {
		if (col->nhave > 1 && nbuckets != col->nbuckets)
			col->nbuckets_differ = true;
		if (nbuckets > col->nbuckets)
			col->nbuckets = nbuckets;
	}
	return 0;
}

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* Sorts every group's rows by (node, index); order[] maps file rows to cells. */
static int sort_rows(struct writer *w, struct layout *L)
{
	for (size_t i = 0; i < L->ng; i++) {
		struct sgroup *g = &L->g[i];
		g->order = xmalloc(w, g->nrows, sizeof(*g->order));
		if (g->order == NULL)
			return -1;
		qsort(g->rows, g->nrows, sizeof(*g->rows), cmp_row);
		for (size_t k = 0; k < g->nrows; k++)
			g->order[k] = g->rows[k].id;
	}
	return 0;
}

/*
 * Rows with statistics: nodes whose registry reached the writer. A node that
 * failed with its rank has none; one that failed inside a live process
 * (--fail) keeps its state up to its failure, which the failure checks read
 * (/nodes/alive says which nodes failed).
 */
static bool node_has_rows(const struct cxs_node_record *n)
{
	return n->stats != NULL;
}

/* /stats: every statistic of every row. */
static int build_stats(struct writer *w, struct layout *L, const struct cxs_run_record *rec)
{
	for (uint32_t node = 0; node < rec->nnodes; node++) {
		const struct cxs_stats *st = rec->nodes[node].stats;

		if (!node_has_rows(&rec->nodes[node]))
			continue;
		for (size_t i = 0; i < cxs_stats_count(st); i++) {
			struct cxs_stat_view v;
			struct cell cell = { 0 };
			uint32_t nb = 0;

			if (cxs_stats_get(st, i, &v) != 0) {
				fail_plain(w, "cannot read statistic %zu of node %" PRIu32, i, node);
				return -1;
			}
			if (v.kind == CXS_STAT_COUNTER) {
				cell.v = v.value;
			} else if (v.kind == CXS_STAT_HIST) {
				cell.p = v.hist;
				nb = v.hist->nbuckets;
			} else {
				cell.v = v.vec->len;
				cell.p = v.vec->values;
			}
			if (add_cell(w, L, node, st, &v, cell, nb) != 0)
				return -1;
		}
		tick(w);
	}
	return sort_rows(w, L);
}

/* /series: every sampled counter of every row. */
static int build_series(struct writer *w, struct layout *L, const struct cxs_run_record *rec)
{
	for (uint32_t node = 0; node < rec->nnodes; node++) {
		const struct cxs_stats *st = rec->nodes[node].stats;

		if (!node_has_rows(&rec->nodes[node]))
			continue;
		for (size_t i = 0; i < cxs_stats_nseries(st); i++) {
			struct cxs_series_view s;
			struct cxs_stat_view v;

			if (cxs_stats_series(st, i, &s) != 0 || cxs_stats_get(st, s.stat, &v) != 0) {
				fail_plain(w, "cannot read series %zu of node %" PRIu32, i, node);
				return -1;
			}
			struct cell cell = { .v = cxs_stats_nsamples(st), .p = s.values };
			if (add_cell(w, L, node, st, &v, cell, 0) != 0)
				return -1;
		}
		tick(w);
	}
	return sort_rows(w, L);
}

/* ---- writing the layout ------------------------------------------------ */

/* The absent rows of a column (file row numbers) as attribute absent_rows. */
static int write_absent(struct writer *w, hid_t obj, const char *where, const struct sgroup *g,
			const struct column *col)
{
	size_t n = g->nrows - col->nhave, k = 0;
	uint32_t *rows;

	if (n == 0)
		return 0;
	rows = xmalloc(w, n, sizeof(*rows));
	if (rows == NULL)
		return -1;
	for (size_t r = 0; r < g->nrows; r++)
		if (!col->have[g->order[r]])
			rows[k++] = (uint32_t)r;
	assert(k == n);
	write_attr(w, obj, where, "absent_rows", H5T_STD_U32LE, H5T_NATIVE_UINT32, n, rows);
	free(rows);
	return w->failed ? -1 : 0;
}

/* A counter column: uint64[R]; an absent row reads 0. */
static int write_counter(struct writer *w, hid_t grp, const char *where, const struct sgroup *g,
			 const struct column *col)
{
	uint64_t *buf = xmalloc(w, g->nrows, sizeof(*buf));
	hid_t d = -1;

	if (buf == NULL)
		return -1;
	for (size_t r = 0; r < g->nrows; r++) {
		size_t c = g->order[r];
		buf[r] = col->have[c] ? col->cell[c].v : 0;
	}
	d = make_vector(w, grp, col->name, where, H5T_STD_U64LE, H5T_NATIVE_UINT64, g->nrows, buf);
	if (d >= 0 && attr_units(w, d, where, col->unit, col->desc) == 0)
		write_absent(w, d, where, g, col);
	close_id(w, &d, H5Dclose, where);
	free(buf);
	return w->failed ? -1 : 0;
}

/*
 * A histogram column: group <name> with buckets uint64[R, nbuckets] and count,
 * sum, min, max uint64[R]. Rows with fewer buckets than the widest are padded
 * with zeros, and then nbuckets uint32[R] says how many each row has.
 */
static int write_hist(struct writer *w, hid_t grp, const char *where, const struct sgroup *g,
		      const struct column *col)
{
	size_t R = g->nrows, nb = col->nbuckets;
	uint64_t *b = xcalloc(w, R * nb, sizeof(*b));
	uint64_t *f = xcalloc(w, 4 * R, sizeof(*f)); /* count, sum, min, max */
	uint32_t *rownb = xcalloc(w, R, sizeof(*rownb));
	static const char *field[4] = { "count", "sum", "min", "max" };
	char sub[WHERE_MAX];
	hid_t h = -1, d = -1;

	if (w->failed)
		goto out;
	for (size_t r = 0; r < R; r++) {
		size_t c = g->order[r];
		const struct cxs_hist *hist = col->cell[c].p;
		if (!col->have[c])
			continue;
		memcpy(b + r * nb, hist->bucket, hist->nbuckets * sizeof(uint64_t));
		f[r] = hist->count;
		f[R + r] = hist->sum;
		f[2 * R + r] = hist->min;
		f[3 * R + r] = hist->max;
		rownb[r] = hist->nbuckets;
	}
	h = make_group(w, grp, col->name, where);
	if (h < 0 || attr_str(w, h, where, "kind", "histogram") < 0 ||
	    attr_units(w, h, where, col->unit, col->desc) < 0 ||
	    attr_str(w, h, where, "bucket_rule", BUCKET_RULE) < 0 ||
	    attr_u32(w, h, where, "nbuckets", (uint32_t)nb) < 0 ||
	    write_absent(w, h, where, g, col) < 0)
		goto out;
	hsize_t dims[2] = { R, nb };
	snprintf(sub, sizeof(sub), "%.190s/buckets", where);
	d = make_array(w, h, "buckets", sub, H5T_STD_U64LE, H5T_NATIVE_UINT64, 2, dims, b);
	close_id(w, &d, H5Dclose, sub);
	for (int i = 0; i < 4 && !w->failed; i++) {
		snprintf(sub, sizeof(sub), "%.190s/%s", where, field[i]);
		put_u64s(w, h, field[i], sub, R, f + (size_t)i * R);
	}
	if (col->nbuckets_differ && !w->failed) {
		snprintf(sub, sizeof(sub), "%.190s/nbuckets", where);
		put_u32s(w, h, "nbuckets", sub, R, rownb);
	}
out:
	close_id(w, &h, H5Gclose, where);
	free(b);
	free(f);
	free(rownb);
	return w->failed ? -1 : 0;
}

/* A vector column: group <name> with values (concatenated) and offsets uint64[R + 1]. */
static int write_vector(struct writer *w, hid_t grp, const char *where, const struct sgroup *g,
			const struct column *col)
{
	size_t R = g->nrows;
	uint64_t *off = xmalloc(w, R + 1, sizeof(*off));
	uint64_t *val = NULL, total = 0;
	char sub[WHERE_MAX];
	hid_t h = -1;

	if (off == NULL)
		goto out;
	for (size_t r = 0; r < R; r++) {
		size_t c = g->order[r];
		off[r] = total;
		total += col->have[c] ? col->cell[c].v : 0;
	}
	off[R] = total;
	val = xmalloc(w, total, sizeof(*val));
	if (val == NULL)
		goto out;
	for (size_t r = 0; r < R; r++) {
		size_t c = g->order[r];
		if (col->have[c] && col->cell[c].v > 0)
			memcpy(val + off[r], col->cell[c].p, col->cell[c].v * sizeof(uint64_t));
	}
	h = make_group(w, grp, col->name, where);
	if (h < 0 || attr_str(w, h, where, "kind", "vector") < 0 ||
	    attr_units(w, h, where, col->unit, col->desc) < 0 ||
	    write_absent(w, h, where, g, col) < 0)
		goto out;
	snprintf(sub, sizeof(sub), "%.190s/values", where);
	if (put_u64s(w, h, "values", sub, total, val) < 0)
		goto out;
	snprintf(sub, sizeof(sub), "%.190s/offsets", where);
	put_u64s(w, h, "offsets", sub, R + 1, off);
out:
	close_id(w, &h, H5Gclose, where);
	free(off);
	free(val);
	return w->failed ? -1 : 0;
}

/*
 * A series column: uint64[R, S]. A row's samples past its own count repeat its
 * last one: after a node's last event its counters no longer change
 * (engine.c, "Time series").
 */
static int write_series_column(struct writer *w, hid_t grp, const char *where,
			       const struct sgroup *g, const struct column *col, uint64_t S)
{
	size_t R = g->nrows;
	uint64_t *buf = xcalloc(w, R * S, sizeof(*buf));
	hid_t d = -1;

	if (buf == NULL)
		return -1;
	for (size_t r = 0; r < R; r++) {
		size_t c = g->order[r];
		const uint64_t *p = col->cell[c].p;
		uint64_t n = col->cell[c].v < S ? col->cell[c].v : S;
		if (!col->have[c] || n == 0)
			continue;
		memcpy(buf + r * S, p, n * sizeof(uint64_t));
		for (uint64_t k = n; k < S; k++)
			buf[r * S + k] = p[n - 1];
	}
	hsize_t dims[2] = { R, S };
	d = make_array(w, grp, col->name, where, H5T_STD_U64LE, H5T_NATIVE_UINT64, 2, dims, buf);
	if (d >= 0 && attr_units(w, d, where, col->unit, col->desc) == 0)
		write_absent(w, d, where, g, col);
	close_id(w, &d, H5Dclose, where);
	free(buf);
	return w->failed ? -1 : 0;
}

/* One group: node, index, then its columns; S > 0 for a /series group. */
static int write_group(struct writer *w, hid_t parent, const char *parent_where,
		       const struct sgroup *g, uint64_t S)
{
	char where[WHERE_MAX], sub[WHERE_MAX];
	uint32_t *node = xmalloc(w, g->nrows, sizeof(*node));
	uint32_t *index = xmalloc(w, g->nrows, sizeof(*index));
	hid_t grp = -1;

	if (w->failed)
		goto out;
	for (size_t r = 0; r < g->nrows; r++) {
		node[r] = g->rows[r].node;
		index[r] = g->rows[r].index;
	}
	snprintf(where, sizeof(where), "%.120s/%s", parent_where, g->name);
	grp = make_group(w, parent, g->name, where);
	if (grp < 0 || attr_u8(w, grp, where, "instanced", g->instanced) < 0)
		goto out;
	snprintf(sub, sizeof(sub), "%.190s/node", where);
	if (put_u32s(w, grp, "node", sub, g->nrows, node) < 0)
		goto out;
	snprintf(sub, sizeof(sub), "%.190s/index", where);
	if (put_u32s(w, grp, "index", sub, g->nrows, index) < 0)
		goto out;
	for (size_t c = 0; c < g->ncols && !w->failed; c++) {
		const struct column *col = &g->cols[c];

		snprintf(sub, sizeof(sub), "%.190s/%s", where, col->name);
		if (S > 0)
			write_series_column(w, grp, sub, g, col, S);
		else if (col->kind == CXS_STAT_COUNTER)
			write_counter(w, grp, sub, g, col);
		else if (col->kind == CXS_STAT_HIST)
			write_hist(w, grp, sub, g, col);
		else
			write_vector(w, grp, sub, g, col);
		tick(w);
	}
out:
	close_id(w, &grp, H5Gclose, where);
	free(node);
	free(index);
	return w->failed ? -1 : 0;
}

static int write_stats(struct writer *w, hid_t file, const struct cxs_run_record *rec)
{
	struct layout L = { 0 };
	hid_t grp = -1;

	if (build_stats(w, &L, rec) < 0)
		goto out;
	grp = make_group(w, file, "stats", "/stats");
	for (size_t i = 0; i < L.ng && grp >= 0 && !w->failed; i++)
		write_group(w, grp, "/stats", &L.g[i], 0);
out:
	close_id(w, &grp, H5Gclose, "/stats");
	layout_free(&L);
	return w->failed ? -1 : 0;
}

/*
 * Number of samples of the run: boundaries 0, I, 2I, ... up to the final time,
 * and one more, which holds every node's final values.
 */
static uint64_t sample_count(const struct cxs_run_record *rec)
{
	return rec->final_time_ps / rec->sample_interval_ps + 2;
}

static int write_series(struct writer *w, hid_t file, const struct cxs_run_record *rec)
{
	struct layout L = { 0 };
	hid_t grp = -1;
	uint64_t S, *time = NULL;

	if (rec->sample_interval_ps == 0)
		return 0;
	S = sample_count(rec);
	time = xmalloc(w, S, sizeof(*time));
	if (time == NULL || build_series(w, &L, rec) < 0)
		goto out;
	for (uint64_t k = 0; k < S; k++)
		time[k] = k > UINT64_MAX / rec->sample_interval_ps ? UINT64_MAX
								  : k * rec->sample_interval_ps;
	grp = make_group(w, file, "series", "/series");
	if (grp < 0 || attr_u64(w, grp, "/series", "interval_ps", rec->sample_interval_ps) < 0 ||
	    put_u64s(w, grp, "time_ps", "/series/time_ps", S, time) < 0)
		goto out;
	for (size_t i = 0; i < L.ng && !w->failed; i++)
		write_group(w, grp, "/series", &L.g[i], S);
out:
	close_id(w, &grp, H5Gclose, "/series");
	layout_free(&L);
	free(time);
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
	dset = make_vector(w, file, "failures", "/failures", file_type, mem_type, n, row);
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

/*
 * Publication, in one place: the file is written under partial_path(path)
 * and, once closed, publish() moves it to path with rename(), atomic within
 * a file system. How the temporary is named may change; nothing else may
 * depend on it (the error path removes what partial_path named).
 */
static char *partial_path(const char *path)
{
	char *p = malloc(strlen(path) + sizeof(".partial"));

	if (p != NULL) {
		strcpy(p, path);
		strcat(p, ".partial");
	}
	return p;
}

static int publish(struct writer *w, const char *partial, const char *path)
{
	if (rename(partial, path) != 0) {
		fail_plain(w, "cannot rename %s to %s: %s", partial, path, strerror(errno));
		return -1;
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
	char *partial = NULL;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (path == NULL || path[0] == '\0') {
		fail_plain(&w, "no output path");
		goto out;
	}
	if (check_record(&w, rec) < 0)
		goto out;
	w.tick = rec->tick;
	w.tick_ctx = rec->tick_ctx;
	partial = partial_path(path);
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

	w.deflate = H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0 && H5Zfilter_avail(H5Z_FILTER_SHUFFLE) > 0;
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
	if (fapl < 0 || H5Pset_fapl_sec2(fapl) < 0 || H5Pset_fclose_degree(fapl, H5F_CLOSE_SEMI) < 0 ||
	    H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18) < 0) {
		fail_h5(&w, "cannot create file access properties");
		goto out;
	}

	file = H5Fcreate(partial, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
	if (file < 0) {
		fail_h5(&w, "cannot create file");
		goto out;
	}
	if (write_root_attrs(&w, file, rec) < 0 || write_engine(&w, file, rec) < 0 ||
	    write_nodes(&w, file, rec) < 0 || write_stats(&w, file, rec) < 0 ||
	    write_series(&w, file, rec) < 0 || write_failures(&w, file, rec) < 0)
		goto out;

	/* Every helper closed what it opened: only the file itself is left. */
	assert(H5Fget_obj_count(file, H5F_OBJ_ALL) == 1);
	if (H5Fclose(file) < 0) {
		fail_h5(&w, "cannot close file %s", partial); /* out: retries the close */
		goto out;
	}
	file = -1;
	publish(&w, partial, path);
out:
	close_id(&w, &file, H5Fclose, "file");
	close_id(&w, &fapl, H5Pclose, "file access properties");
	close_id(&w, &w.gcpl, H5Pclose, "group properties");
	close_id(&w, &w.str_type, H5Tclose, "string type");
	if (w.failed && partial != NULL)
		remove(partial); /* may never have been created: ENOENT is fine */
	if (restore_auto)
		H5Eset_auto2(H5E_DEFAULT, old_func, old_data);
	free(partial);
	return w.failed ? -1 : 0;
}
