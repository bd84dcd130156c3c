/*
 * Unit tests for the HDF5 writer, format 2 (src/stats/h5out.c). Each test
 * writes into its own mkdtemp() directory and reads the file back with the
 * HDF5 C API, checking the documented layout: root attributes and their
 * types, /engine columns, /nodes tables, the column-wise /stats groups (rows
 * sorted by node and instance, absent rows, histograms with uneven bucket
 * counts, ragged vectors, chunked storage of a large one), /series (padding
 * of a node's short series), /failures rows; then the failure behaviour:
 * one-line messages naming the path (also for statistics the models laid out
 * inconsistently), no file and no .partial left behind, no leaked HDF5 ids,
 * and HDF5's automatic error printing restored afterwards.
 *
 * No MPI_Init: the writer uses the sec2 driver of Debian's parallel HDF5 build
 * serially, which needs no MPI (these tests are the proof).
 */
#include <check.h>
#include <hdf5.h>

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cxlsim/h5out.h"
#include "cxlsim/stats.h"
#include "unit_suites.h"

/* ---- the record under test -------------------------------------------- */

struct fixture {
	char dir[64];
	char path[128];
	struct cxs_stats *stats[4];
	uint64_t events[2];
	double sync_wall_s[2];
	struct cxs_rank_column columns[2];
	struct cxs_node_record nodes[4];
	struct cxs_failure_record failure;
	struct cxs_run_record rec;
};

static struct fixture fx;

#define INTERVAL_PS 2000000000ull /* final time 4999999000: samples at 0, 2, 4, 6 ms */

/*
 * Four nodes:
 *   0  cn, alive: l1/hits, l1/latency_ps (8 buckets); core1 then core0, both
 *      instances of "core" (registered out of order, core0 without "stalls");
 *      samples core/cycles twice.
 *   1  mn, dead, its statistics lost (NULL).
 *   2  cn, alive: components interleaved (a, b, a), l1 with a 4-bucket
 *      histogram, a vector a/v; samples a/x three times.
 *   3  cn, died with its rank (alive 0, statistics lost): no rows. Its
 *      statistics exist (fx.stats[3]) for test_failed_node_keeps_rows, where
 *      it failed inside a live process (--fail) and keeps its rows.
 */
static void setup(void)
{
	struct cxs_hist *h;
	struct cxs_stats *st;
	uint64_t *c0, *c1, *x;

	memset(&fx, 0, sizeof(fx));
	strcpy(fx.dir, "/tmp/cxs_h5out_XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(fx.dir));
	snprintf(fx.path, sizeof(fx.path), "%s/out.h5", fx.dir);

	st = fx.stats[0] = cxs_stats_new();
	*cxs_stats_counter(st, "l1", "hits", "lines", "demand hits in L1") = 42;
	h = cxs_stats_hist(st, "l1", "latency_ps", "ps", "load-to-use latency", 8);
	ck_assert_ptr_nonnull(h);
	cxs_hist_add(h, 0);
	cxs_hist_add(h, 3);
	cxs_hist_add(h, 1000); /* past bucket 7: clamped into it */
	ck_assert_int_eq(cxs_stats_instance(st, "core1", "core", 1), 0);
	c1 = cxs_stats_counter(st, "core1", "cycles", "cycles", "core clock cycles");
	*cxs_stats_counter(st, "core1", "stalls", "cycles", "stall cycles") = 5;
	ck_assert_int_eq(cxs_stats_instance(st, "core0", "core", 0), 0);
	c0 = cxs_stats_counter(st, "core0", "cycles", "cycles", "core clock cycles");
	ck_assert_int_eq(cxs_stats_sample_select(st, "core/cycles"), 0);
	*c0 = 1;
	*c1 = 2;
	ck_assert_int_eq(cxs_stats_sample(st), 0);
	*c0 = 3;
	*c1 = 4;
	ck_assert_int_eq(cxs_stats_sample(st), 0);
	*c0 = 10;
	*c1 = 11;

	st = fx.stats[2] = cxs_stats_new();
	x = cxs_stats_counter(st, "a", "x", "events", "first of a");
	*cxs_stats_counter(st, "b", "y", "events", "only of b") = 2;
	*cxs_stats_counter(st, "a", "z", "events", "second of a") = UINT64_MAX;
	*cxs_stats_counter(st, "l1", "hits", "lines", "demand hits in L1") = 7;
	h = cxs_stats_hist(st, "l1", "latency_ps", "ps", "load-to-use latency", 4);
	cxs_hist_add(h, 5);
	struct cxs_vec *v = cxs_stats_vector(st, "a", "v", "words", "a memory image");
	ck_assert_int_eq(cxs_vec_push(v, 5), 0);
	ck_assert_int_eq(cxs_vec_push(v, 6), 0);
	ck_assert_int_eq(cxs_vec_push(v, 7), 0);
	ck_assert_int_eq(cxs_stats_sample_select(st, "a/x"), 0);
	for (uint64_t k = 1; k <= 3; k++) {
		*x = 100 * k;
		ck_assert_int_eq(cxs_stats_sample(st), 0);
	}
	*x = 1;

	st = fx.stats[3] = cxs_stats_new();
	*cxs_stats_counter(st, "l1", "hits", "lines", "demand hits in L1") = 99;
	*cxs_stats_counter(st, "dead", "only", "", "") = 1;

	fx.events[0] = 10;
	fx.events[1] = 20;
	fx.sync_wall_s[0] = 0.5;
	fx.sync_wall_s[1] = 1.25;
	fx.columns[0] = (struct cxs_rank_column){ .name = "events", .unit = "events",
						  .desc = "events processed", .uvals = fx.events };
	fx.columns[1] = (struct cxs_rank_column){ .name = "sync_wall_s", .unit = "s",
						  .desc = "wall time in synchronisation",
						  .is_double = 1, .dvals = fx.sync_wall_s };

	fx.nodes[0] = (struct cxs_node_record){ "cn", 0, 1, fx.stats[0] };
	fx.nodes[1] = (struct cxs_node_record){ "mn", 1, 0, NULL };
	fx.nodes[2] = (struct cxs_node_record){ "cn", 1, 1, fx.stats[2] };
	fx.nodes[3] = (struct cxs_node_record){ "cn", 0, 0, NULL };

	fx.failure = (struct cxs_failure_record){ .node = 1, .rank = 1, .time_ps = 123456789,
						  .detected_wall_s = 2.5, .epoch = 3,
						  .cause = "injected" };

	fx.rec = (struct cxs_run_record){
		.cxlsim_version = "0.1.0",
		.command_line = "cxlsim --set engine.end_time=5ms inputs/phold.ini",
		.config_text = "[engine]\nend_time = 5ms\n",
		.model = "phold",
		.status = "complete-with-failures",
		.exit_status = 0,
		.nranks = 2,
		.seed = 0xfeedfacecafebeefull,
		.checksum = 0x0123456789abcdefull,
		.end_time_ps = 5000000000ull,
		.final_time_ps = 4999999000ull,
		.wall_seconds = 3.75,
		.ncolumns = 2,
		.columns = fx.columns,
		.nnodes = 4,
		.nodes = fx.nodes,
		.nfailures = 1,
		.failures = &fx.failure,
		.sample_interval_ps = INTERVAL_PS,
	};
}

static void teardown(void)
{
	DIR *d = opendir(fx.dir);
	struct dirent *e;
	char p[512];

	for (int i = 0; i < 4; i++)
		cxs_stats_free(fx.stats[i]);
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", fx.dir, e->d_name);
		remove(p);
	}
	closedir(d);
	rmdir(fx.dir);
}

/* ---- reading helpers -------------------------------------------------- */

static int exists(const char *p)
{
	return access(p, F_OK) == 0;
}

static int dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL)
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

static hid_t vlen_str_type(void)
{
	hid_t t = H5Tcopy(H5T_C_S1);

	ck_assert_int_ge(t, 0);
	ck_assert_int_ge(H5Tset_size(t, H5T_VARIABLE), 0);
	ck_assert_int_ge(H5Tset_cset(t, H5T_CSET_UTF8), 0);
	return t;
}

static hid_t open_file(void)
{
	hid_t f = H5Fopen(fx.path, H5F_ACC_RDONLY, H5P_DEFAULT);

	ck_assert_msg(f >= 0, "cannot reopen %s", fx.path);
	return f;
}

/* Attribute `name` of object `obj`; checks it is a variable-length UTF-8 string. */
static char *read_attr_str(hid_t f, const char *obj, const char *name)
{
	hid_t a = H5Aopen_by_name(f, obj, name, H5P_DEFAULT, H5P_DEFAULT);
	hid_t ft, mt;
	char *s = NULL, *copy;

	ck_assert_msg(a >= 0, "no attribute %s on %s", name, obj);
	ft = H5Aget_type(a);
	ck_assert_int_gt(H5Tis_variable_str(ft), 0);
	ck_assert_int_eq(H5Tget_cset(ft), H5T_CSET_UTF8);
	mt = vlen_str_type();
	ck_assert_int_ge(H5Aread(a, mt, &s), 0);
	ck_assert_ptr_nonnull(s);
	copy = strdup(s);
	H5free_memory(s);
	H5Tclose(mt);
	H5Tclose(ft);
	H5Aclose(a);
	return copy;
}

static void assert_attr_str(hid_t f, const char *obj, const char *name, const char *want)
{
	char *got = read_attr_str(f, obj, name);

	ck_assert_msg(strcmp(got, want) == 0, "%s:%s is \"%s\", want \"%s\"", obj, name, got, want);
	free(got);
}

/* Reads a numeric scalar attribute, checking its on-disk type is `type`. */
static void read_attr_num(hid_t f, const char *obj, const char *name, hid_t type, hid_t mem,
			  void *out)
{
	hid_t a = H5Aopen_by_name(f, obj, name, H5P_DEFAULT, H5P_DEFAULT);
	hid_t ft, sp;

	ck_assert_msg(a >= 0, "no attribute %s on %s", name, obj);
	ft = H5Aget_type(a);
	ck_assert_msg(H5Tequal(ft, type) > 0, "%s:%s has the wrong type", obj, name);
	sp = H5Aget_space(a);
	ck_assert_int_eq(H5Sget_simple_extent_type(sp), H5S_SCALAR);
	ck_assert_int_ge(H5Aread(a, mem, out), 0);
	H5Sclose(sp);
	H5Tclose(ft);
	H5Aclose(a);
}

static uint64_t attr_u64(hid_t f, const char *obj, const char *name)
{
	uint64_t v;

	read_attr_num(f, obj, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, &v);
	return v;
}

static uint32_t attr_u32(hid_t f, const char *obj, const char *name)
{
	uint32_t v;

	read_attr_num(f, obj, name, H5T_STD_U32LE, H5T_NATIVE_UINT32, &v);
	return v;
}

/* Opens a dataset and checks its rank and (for rank 1) its length. */
static hid_t open_dset(hid_t f, const char *p, int rank, hsize_t len, hid_t type)
{
	hid_t d = H5Dopen2(f, p, H5P_DEFAULT);
	hid_t sp, ft;
	hsize_t dims[1] = { 0 };

	ck_assert_msg(d >= 0, "no dataset %s", p);
	sp = H5Dget_space(d);
	ck_assert_int_eq(H5Sget_simple_extent_ndims(sp), rank);
	if (rank == 1) {
		H5Sget_simple_extent_dims(sp, dims, NULL);
		ck_assert_uint_eq(dims[0], len);
	}
	if (type >= 0) {
		ft = H5Dget_type(d);
		ck_assert_msg(H5Tequal(ft, type) > 0, "%s has the wrong type", p);
		H5Tclose(ft);
	}
	H5Sclose(sp);
	return d;
}

static hsize_t group_links(hid_t f, const char *p)
{
	H5G_info_t info;

	ck_assert_int_ge(H5Gget_info_by_name(f, p, &info, H5P_DEFAULT), 0);
	return info.nlinks;
}

static int write_ok(void)
{
	char err[512] = "untouched";
	int rc = cxs_h5_write(fx.path, &fx.rec, err, sizeof(err));

	ck_assert_msg(rc == 0, "write failed: %s", err);
	ck_assert_str_eq(err, "");
	return rc;
}

/* ---- a complete file -------------------------------------------------- */

START_TEST(test_root_attrs)
{
	char partial[160];
	hid_t f;
	int32_t exit_status;
	double wall;

	write_ok();
	snprintf(partial, sizeof(partial), "%s.partial", fx.path);
	ck_assert(exists(fx.path));
	ck_assert(!exists(partial));
	ck_assert_int_eq(dir_entries(fx.dir), 1);

	f = open_file();
	ck_assert_uint_eq(attr_u32(f, "/", "format_version"), 2);
	assert_attr_str(f, "/", "cxlsim_version", "0.1.0");
	assert_attr_str(f, "/", "command_line", fx.rec.command_line);
	assert_attr_str(f, "/", "config", "[engine]\nend_time = 5ms\n");
	assert_attr_str(f, "/", "status", "complete-with-failures");
	assert_attr_str(f, "/", "model", "phold");
	ck_assert_uint_eq(attr_u32(f, "/", "nranks"), 2);
	ck_assert_uint_eq(attr_u32(f, "/", "nnodes"), 4);
	ck_assert_uint_eq(attr_u64(f, "/", "checksum"), 0x0123456789abcdefull);
	ck_assert_uint_eq(attr_u64(f, "/", "seed"), 0xfeedfacecafebeefull);
	ck_assert_uint_eq(attr_u64(f, "/", "end_time_ps"), 5000000000ull);
	ck_assert_uint_eq(attr_u64(f, "/", "final_time_ps"), 4999999000ull);
	read_attr_num(f, "/", "exit_status", H5T_STD_I32LE, H5T_NATIVE_INT32, &exit_status);
	ck_assert_int_eq(exit_status, 0);
	read_attr_num(f, "/", "wall_seconds", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &wall);
	ck_assert_double_eq(wall, 3.75);
	ck_assert_int_eq(H5Fclose(f), 0);
}
END_TEST

START_TEST(test_engine_columns)
{
	hid_t f, d;
	uint64_t u[2] = { 0, 0 };
	double v[2] = { 0, 0 };

	write_ok();
	f = open_file();
	ck_assert_uint_eq(group_links(f, "/engine"), 2);
	d = open_dset(f, "/engine/events", 1, 2, H5T_STD_U64LE);
	ck_assert_int_ge(H5Dread(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, u), 0);
	ck_assert_uint_eq(u[0], 10);
	ck_assert_uint_eq(u[1], 20);
	H5Dclose(d);
	assert_attr_str(f, "/engine/events", "units", "events");
	assert_attr_str(f, "/engine/events", "description", "events processed");

	d = open_dset(f, "/engine/sync_wall_s", 1, 2, H5T_IEEE_F64LE);
	ck_assert_int_ge(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v), 0);
	ck_assert_double_eq(v[0], 0.5);
	ck_assert_double_eq(v[1], 1.25);
	H5Dclose(d);
	assert_attr_str(f, "/engine/sync_wall_s", "units", "s");
	ck_assert_int_eq(H5Fclose(f), 0);
}
END_TEST

START_TEST(test_node_tables)
{
	hid_t f, d, mt, sp;
	char *type[4] = { NULL, NULL, NULL, NULL };
	uint8_t alive[4];
	uint32_t rank[4];

	write_ok();
	f = open_file();
	d = open_dset(f, "/nodes/type", 1, 4, -1);
	mt = vlen_str_type();
	ck_assert_int_ge(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, type), 0);
	ck_assert_str_eq(type[0], "cn");
	ck_assert_str_eq(type[1], "mn");
	ck_assert_str_eq(type[2], "cn");
	ck_assert_str_eq(type[3], "cn");
	sp = H5Dget_space(d);
	H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, type);
	H5Sclose(sp);
	H5Tclose(mt);
	H5Dclose(d);

	d = open_dset(f, "/nodes/alive", 1, 4, H5T_STD_U8LE);
	ck_assert_int_ge(H5Dread(d, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, alive), 0);
	ck_assert_uint_eq(alive[0], 1);
	ck_assert_uint_eq(alive[1], 0);
	ck_assert_uint_eq(alive[2], 1);
	ck_assert_uint_eq(alive[3], 0);
	H5Dclose(d);

	d = open_dset(f, "/nodes/rank", 1, 4, H5T_STD_U32LE);
	ck_assert_int_ge(H5Dread(d, H5T_NATIVE_UINT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, rank), 0);
	ck_assert_uint_eq(rank[0], 0);
	ck_assert_uint_eq(rank[1], 1);
	ck_assert_uint_eq(rank[2], 1);
	ck_assert_uint_eq(rank[3], 0);
	H5Dclose(d);

	/* Format 2: no per-node groups any more. */
	ck_assert_uint_eq(group_links(f, "/nodes"), 3);
	ck_assert_int_eq(H5Fclose(f), 0);
}
END_TEST

/* A whole 1-D dataset of n elements of on-disk type `type`, read as `mem`. */
static void read_all(hid_t f, const char *p, hsize_t n, hid_t type, hid_t mem, void *out)
{
	hid_t d = open_dset(f, p, 1, n, type);

	if (n > 0)
		ck_assert_int_ge(H5Dread(d, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, out), 0);
	H5Dclose(d);
}

static void read_u64s(hid_t f, const char *p, hsize_t n, uint64_t *out)
{
	read_all(f, p, n, H5T_STD_U64LE, H5T_NATIVE_UINT64, out);
}

static void read_u32s(hid_t f, const char *p, hsize_t n, uint32_t *out)
{
	read_all(f, p, n, H5T_STD_U32LE, H5T_NATIVE_UINT32, out);
}

/* A 2-D uint64 dataset of rows x cols. */
static void read_u64_2d(hid_t f, const char *p, hsize_t rows, hsize_t cols, uint64_t *out)
{
	hid_t d = H5Dopen2(f, p, H5P_DEFAULT);
	hid_t sp;
	hsize_t dims[2];

	ck_assert_msg(d >= 0, "no dataset %s", p);
	sp = H5Dget_space(d);
	ck_assert_int_eq(H5Sget_simple_extent_ndims(sp), 2);
	H5Sget_simple_extent_dims(sp, dims, NULL);
	ck_assert_uint_eq(dims[0], rows);
	ck_assert_uint_eq(dims[1], cols);
	ck_assert_int_ge(H5Dread(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, out), 0);
	H5Sclose(sp);
	H5Dclose(d);
}

/* Attribute absent_rows of obj: its length, the rows in out (up to max). */
static hssize_t absent_rows(hid_t f, const char *obj, uint32_t *out, size_t max)
{
	hid_t a, sp, ft;
	hssize_t n;

	if (H5Aexists_by_name(f, obj, "absent_rows", H5P_DEFAULT) <= 0)
		return 0;
	a = H5Aopen_by_name(f, obj, "absent_rows", H5P_DEFAULT, H5P_DEFAULT);
	ft = H5Aget_type(a);
	ck_assert(H5Tequal(ft, H5T_STD_U32LE) > 0);
	sp = H5Aget_space(a);
	n = H5Sget_simple_extent_npoints(sp);
	ck_assert_int_le(n, (hssize_t)max);
	ck_assert_int_ge(H5Aread(a, H5T_NATIVE_UINT32, out), 0);
	H5Sclose(sp);
	H5Tclose(ft);
	H5Aclose(a);
	return n;
}

static uint8_t attr_u8(hid_t f, const char *obj, const char *name)
{
	uint8_t v;

	read_attr_num(f, obj, name, H5T_STD_U8LE, H5T_NATIVE_UINT8, &v);
	return v;
}

/* Link names of a group in creation order. */
static void assert_links(hid_t f, const char *p, const char *const *want, size_t n)
{
	char name[128];

	ck_assert_uint_eq(group_links(f, p), n);
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_gt(H5Lget_name_by_idx(f, p, H5_INDEX_CRT_ORDER, H5_ITER_INC, i, name,
						    sizeof(name), H5P_DEFAULT), 0);
		ck_assert_msg(strcmp(name, want[i]) == 0, "%s link %zu is %s, want %s", p, i, name,
			      want[i]);
	}
}

/* Groups in first-registration order; dead and failed nodes have no rows. */
START_TEST(test_stats_groups)
{
	static const char *const groups[] = { "l1", "core", "a", "b" };
	static const char *const l1[] = { "node", "index", "hits", "latency_ps" };
	static const char *const a[] = { "node", "index", "x", "z", "v" };
	uint32_t node[2], index[2];
	uint64_t v[2];
	hid_t f;

	write_ok();
	f = open_file();
	assert_links(f, "/stats", groups, 4);
	assert_links(f, "/stats/l1", l1, 4);
	assert_links(f, "/stats/a", a, 5);
	ck_assert_uint_eq(attr_u8(f, "/stats/l1", "instanced"), 0);
	read_u32s(f, "/stats/l1/node", 2, node); /* not node 3: it died with its rank */
	read_u32s(f, "/stats/l1/index", 2, index);
	ck_assert_uint_eq(node[0], 0);
	ck_assert_uint_eq(node[1], 2);
	ck_assert_uint_eq(index[0], 0);
	ck_assert_uint_eq(index[1], 0);
	read_u64s(f, "/stats/l1/hits", 2, v);
	ck_assert_uint_eq(v[0], 42);
	ck_assert_uint_eq(v[1], 7);
	assert_attr_str(f, "/stats/l1/hits", "units", "lines");
	assert_attr_str(f, "/stats/l1/hits", "description", "demand hits in L1");
	ck_assert_int_eq(absent_rows(f, "/stats/l1/hits", index, 2), 0);
	ck_assert_int_eq(H5Lexists(f, "/stats/dead", H5P_DEFAULT), 0);

	/* Interleaved components: one group each, all their counters. */
	read_u32s(f, "/stats/a/node", 1, node);
	ck_assert_uint_eq(node[0], 2);
	read_u64s(f, "/stats/a/z", 1, v);
	ck_assert_uint_eq(v[0], UINT64_MAX);
	read_u64s(f, "/stats/b/y", 1, v);
	ck_assert_uint_eq(v[0], 2);
	assert_attr_str(f, "/stats/a/z", "units", "events");
	assert_attr_str(f, "/stats/b/y", "description", "only of b");
	ck_assert_int_eq(H5Fclose(f), 0);
}
END_TEST

/*
 * A node failed with --fail keeps its statistics as they were at its failure:
 * it has rows (and /nodes/alive says it failed), unlike one whose rank died.
 */
START_TEST(test_failed_node_keeps_rows)
{
	uint32_t node[3];
	uint64_t v[3];
	uint8_t alive[4];
	hid_t f, d;

	fx.nodes[3].stats = fx.stats[3];
	write_ok();
	f = open_file();
	read_u32s(f, "/stats/l1/node", 3, node);
	ck_assert_uint_eq(node[0], 0);
	ck_assert_uint_eq(node[1], 2);
	ck_assert_uint_eq(node[2], 3);
	read_u64s(f, "/stats/l1/hits", 3, v);
	ck_assert_uint_eq(v[2], 99);
	read_u32s(f, "/stats/dead/node", 1, node);
	ck_assert_uint_eq(node[0], 3);
	d = open_dset(f, "/nodes/alive", 1, 4, H5T_STD_U8LE);
	ck_assert_int_ge(H5Dread(d, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, alive), 0);
	ck_assert_uint_eq(alive[3], 0);
	H5Dclose(d);
	ck_assert_int_eq(H5Fclose(f), 0);
}
END_TEST

/* Instances are rows of their group, sorted by index; a missing counter reads 0. */
START_TEST(test_stats_instances)
{
	static const char *const core[] = { "node", "index", "cycles", "stalls" };
	uint32_t node[2], index[2], absent[4];
	uint64_t v[2];
	hid_t f;

	write_ok();
	f = open_file();
	assert_links(f, "/stats/core", core, 4);
	ck_assert_uint_eq(attr_u8(f, "/stats/core", "instanced"), 1);
	read_u32s(f, "/stats/core/node", 2, node);
	read_u32s(f, "/stats/core/index", 2, index);
	ck_assert_uint_eq(node[0], 0);
	ck_assert_uint_eq(node[1], 0);
	ck_assert_uint_eq(index[0], 0); /* core1 was registered first */
	ck_assert_uint_eq(index[1], 1);
	read_u64s(f, "/stats/core/cycles", 2, v);
	ck_assert_uint_eq(v[0], 10);
	ck_assert_uint_eq(v[1], 11);
	read_u64s(f, "/stats/core/stalls", 2, v);
	ck_assert_uint_eq(v[0], 0);
	ck_assert_uint_eq(v[1], 5);
	ck_assert_int_eq(absent_rows(f, "/stats/core/stalls", absent, 4), 1);
	ck_assert_uint_eq(absent[0], 0);
	ck_assert_int_eq(absent_rows(f, "/stats/core/cycles", absent, 4), 0);
	ck_assert_int_eq(H5Fclose(f), 0);
}
END_TEST

START_TEST(test_stats_histogram)
{
	const char *p = "/stats/l1/latency_ps";
	uint64_t b[2][8], count[2], sum[2], mn[2], mx[2];
	uint32_t nb[2];
	hid_t f;

	write_ok();
	f = open_file();
	read_u64_2d(f, "/stats/l1/latency_ps/buckets", 2, 8, &b[0][0]);
	ck_assert_uint_eq(b[0][0], 1); /* 0 */
	ck_assert_uint_eq(b[0][1], 0);
	ck_assert_uint_eq(b[0][2], 1); /* 3 */
	for (int i = 3; i < 7; i++)
		ck_assert_uint_eq(b[0][i], 0);
	ck_assert_uint_eq(b[0][7], 1); /* 1000, clamped */
	ck_assert_uint_eq(b[1][3], 1); /* node 2: 5 in [4, 8) */
	for (int i = 4; i < 8; i++)
		ck_assert_uint_eq(b[1][i], 0); /* padding past its 4 buckets */
	read_u64s(f, "/stats/l1/latency_ps/count", 2, count);
	read_u64s(f, "/stats/l1/latency_ps/sum", 2, sum);
	read_u64s(f, "/stats/l1/latency_ps/min", 2, mn);
	read_u64s(f, "/stats/l1/latency_ps/max", 2, mx);
	ck_assert_uint_eq(count[0], 3);
	ck_assert_uint_eq(sum[0], 1003);
	ck_assert_uint_eq(mn[0], 0);
	ck_assert_uint_eq(mx[0], 1000);
	ck_assert_uint_eq(count[1], 1);
	ck_assert_uint_eq(sum[1], 5);
	read_u32s(f, "/stats/l1/latency_ps/nbuckets", 2, nb);
	ck_assert_uint_eq(nb[0], 8);
	ck_assert_uint_eq(nb[1], 4);
	ck_assert_uint_eq(attr_u32(f, p, "nbuckets"), 8);
	assert_attr_str(f, p, "kind", "histogram");
	assert_attr_str(f, p, "units", "ps");
	assert_attr_str(f, p, "description", "load-to-use latency");
	assert_attr_str(f, p, "bucket_rule", "bucket 0: value 0; bucket i>=1: [2^(i-1), 2^i)");
	ck_assert_int_eq(H5Fclose(f), 0);
}
END_TEST

START_TEST(test_stats_vector)
{
	uint64_t values[3], off[2];
	hid_t f;

	write_ok();
	f = open_file();
	read_u64s(f, "/stats/a/v/values", 3, values);
	read_u64s(f, "/stats/a/v/offsets", 2, off);
	ck_assert_uint_eq(values[0], 5);
	ck_assert_uint_eq(values[2], 7);
	ck_assert_uint_eq(off[0], 0);
	ck_assert_uint_eq(off[1], 3);
	assert_attr_str(f, "/stats/a/v", "kind", "vector");
	assert_attr_str(f, "/stats/a/v", "units", "words");
	ck_assert_int_eq(H5Fclose(f), 0);
}
END_TEST

/* A vector past CHUNK_MIN_BYTES is stored chunked and deflated, and reads back whole. */
START_TEST(test_large_vector_chunked)
{
	enum { N = 300000 }; /* 2.4 MB */
	struct cxs_vec *v = cxs_stats_vector(fx.stats[2], "a", "big", "", "");
	uint64_t off[3];
	hid_t f, d, dcpl;
	unsigned flags;
	size_t nelmts = 0;
	char name[32];

	for (uint64_t i = 0; i < N; i++)
		ck_assert_int_eq(cxs_vec_push(v, i * 3), 0);
	/* Node 0 gets a short one, so there are two rows. */
	ck_assert_int_eq(cxs_vec_push(cxs_stats_vector(fx.stats[0], "a", "big", "", ""), 9), 0);
	write_ok();
	f = open_file();
	read_u64s(f, "/stats/a/big/offsets", 3, off);
	ck_assert_uint_eq(off[1], 1);
	ck_assert_uint_eq(off[2], N + 1);
	d = open_dset(f, "/stats/a/big/values", 1, N + 1, H5T_STD_U64LE);
	dcpl = H5Dget_create_plist(d);
	ck_assert_int_eq(H5Pget_layout(dcpl), H5D_CHUNKED);
	ck_assert_int_eq(H5Pget_nfilters(dcpl), 2);
	ck_assert_int_eq(H5Pget_filter2(dcpl, 1, &flags, &nelmts, NULL, sizeof(name), name, NULL),
			 H5Z_FILTER_DEFLATE);
	H5Pclose(dcpl);
	H5Dclose(d);
	uint64_t *all = malloc((N + 1) * sizeof(uint64_t));
	read_u64s(f, "/stats/a/big/values", N + 1, all);
	ck_assert_uint_eq(all[0], 9);
	for (uint64_t i = 0; i < N; i++)
		ck_assert_uint_eq(all[1 + i], i * 3);
	/* Small datasets stay contiguous. */
	d = open_dset(f, "/stats/l1/hits", 1, 2, H5T_STD_U64LE);
	dcpl = H5Dget_create_plist(d);
	ck_assert_int_eq(H5Pget_layout(dcpl), H5D_CONTIGUOUS);
	H5Pclose(dcpl);
	H5Dclose(d);
	free(all);
	ck_assert_int_eq(H5Fclose(f), 0);
}
END_TEST

/* Series: common sample times; a node's short series repeats its last sample. */
START_TEST(test_series)
{
	static const char *const series[] = { "time_ps", "core", "a" };
	uint64_t t[4], c[2][4], x[1][4];
	uint32_t node[2], index[2];
	hid_t f;

	write_ok();
	f = open_file();
	assert_links(f, "/series", series, 3);
	ck_assert_uint_eq(attr_u64(f, "/series", "interval_ps"), INTERVAL_PS);
	read_u64s(f, "/series/time_ps", 4, t); /* final time 4.999999 ms: 0, 2, 4, and 6 ms */
	for (int k = 0; k < 4; k++)
		ck_assert_uint_eq(t[k], k * INTERVAL_PS);
	ck_assert_uint_eq(attr_u8(f, "/series/core", "instanced"), 1);
	read_u32s(f, "/series/core/node", 2, node);
	read_u32s(f, "/series/core/index", 2, index);
	ck_assert_uint_eq(index[0], 0);
	ck_assert_uint_eq(index[1], 1);
	read_u64_2d(f, "/series/core/cycles", 2, 4, &c[0][0]);
	ck_assert_uint_eq(c[0][0], 1);
	ck_assert_uint_eq(c[0][1], 3);
	ck_assert_uint_eq(c[0][2], 3); /* padded */
	ck_assert_uint_eq(c[0][3], 3);
	ck_assert_uint_eq(c[1][0], 2);
	ck_assert_uint_eq(c[1][3], 4);
	assert_attr_str(f, "/series/core/cycles", "units", "cycles");
	read_u64_2d(f, "/series/a/x", 1, 4, &x[0][0]);
	ck_assert_uint_eq(x[0][0], 100);
	ck_assert_uint_eq(x[0][2], 300);
	ck_assert_uint_eq(x[0][3], 300);
	ck_assert_int_eq(H5Fclose(f), 0);

	/* Without sampling there is no /series. */
	fx.rec.sample_interval_ps = 0;
	write_ok();
	f = open_file();
	ck_assert_int_eq(H5Lexists(f, "/series", H5P_DEFAULT), 0);
	ck_assert_int_eq(H5Fclose(f), 0);
}
END_TEST

/* The reader's view of a /failures row. */
struct row {
	uint32_t node, rank;
	uint64_t time_ps;
	double detected_wall_s;
	uint32_t epoch;
	char *cause;
};

static hid_t row_type(void)
{
	hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(struct row));
	hid_t s = vlen_str_type();

	H5Tinsert(t, "node", offsetof(struct row, node), H5T_NATIVE_UINT32);
	H5Tinsert(t, "rank", offsetof(struct row, rank), H5T_NATIVE_UINT32);
	H5Tinsert(t, "time_ps", offsetof(struct row, time_ps), H5T_NATIVE_UINT64);
	H5Tinsert(t, "detected_wall_s", offsetof(struct row, detected_wall_s), H5T_NATIVE_DOUBLE);
	H5Tinsert(t, "epoch", offsetof(struct row, epoch), H5T_NATIVE_UINT32);
	H5Tinsert(t, "cause", offsetof(struct row, cause), s);
	H5Tclose(s);
	return t;
}

static void assert_failure_members(hid_t d)
{
	const char *names[] = { "node", "rank", "time_ps", "detected_wall_s", "epoch", "cause" };
	hid_t ft = H5Dget_type(d);

	ck_assert_int_eq(H5Tget_class(ft), H5T_COMPOUND);
	ck_assert_int_eq(H5Tget_nmembers(ft), 6);
	for (unsigned i = 0; i < 6; i++) {
		char *n = H5Tget_member_name(ft, i);
		ck_assert_str_eq(n, names[i]);
		H5free_memory(n);
	}
	ck_assert_int_eq(H5Tget_member_class(ft, 5), H5T_STRING);
	H5Tclose(ft);
}

START_TEST(test_failures)
{
	struct row r;
	hid_t f, d, mt, sp;

	write_ok();
	f = open_file();
	d = open_dset(f, "/failures", 1, 1, -1);
	assert_failure_members(d);
	mt = row_type();
	ck_assert_int_ge(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, &r), 0);
	ck_assert_uint_eq(r.node, 1);
	ck_assert_uint_eq(r.rank, 1);
	ck_assert_uint_eq(r.time_ps, 123456789);
	ck_assert_double_eq(r.detected_wall_s, 2.5);
	ck_assert_uint_eq(r.epoch, 3);
	ck_assert_str_eq(r.cause, "injected");
	sp = H5Dget_space(d);
	H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, &r);
	H5Sclose(sp);
	H5Tclose(mt);
	H5Dclose(d);
	ck_assert_int_eq(H5Fclose(f), 0);
}
END_TEST

/* Nothing at all: zero ranks, nodes and failures still make a valid file. */
START_TEST(test_empty_record)
{
	struct cxs_run_record rec = { .status = "complete" };
	char err[256];
	hid_t f, d;

	ck_assert_int_eq(cxs_h5_write(fx.path, &rec, err, sizeof(err)), 0);
	f = open_file();
	d = open_dset(f, "/failures", 1, 0, -1);
	assert_failure_members(d);
	H5Dclose(d);
	H5Dclose(open_dset(f, "/nodes/type", 1, 0, -1));
	ck_assert_uint_eq(group_links(f, "/nodes"), 3);
	ck_assert_uint_eq(group_links(f, "/stats"), 0);
	ck_assert_int_eq(H5Lexists(f, "/series", H5P_DEFAULT), 0);
	ck_assert_uint_eq(group_links(f, "/engine"), 0);
	assert_attr_str(f, "/", "model", ""); /* NULL strings are written as "" */
	assert_attr_str(f, "/", "status", "complete");
	ck_assert_int_eq(H5Fclose(f), 0);
}
END_TEST

/* The rename replaces an older file and a stale .partial from a crash. */
START_TEST(test_replaces_old_file_and_stale_partial)
{
	char partial[160];
	FILE *fp;
	hid_t f;

	snprintf(partial, sizeof(partial), "%s.partial", fx.path);
	fp = fopen(partial, "w");
	ck_assert_ptr_nonnull(fp);
	fputs("stale", fp);
	fclose(fp);
	write_ok();
	fx.rec.status = "error: second run";
	write_ok();
	ck_assert(!exists(partial));
	f = open_file();
	assert_attr_str(f, "/", "status", "error: second run");
	ck_assert_int_eq(H5Fclose(f), 0);
}
END_TEST

START_TEST(test_no_leaked_ids)
{
	char err[256];

	write_ok();
	ck_assert_int_eq(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0);
	fx.columns[1].name = "events"; /* fails half-way, see below */
	ck_assert_int_eq(cxs_h5_write(fx.path, &fx.rec, err, sizeof(err)), -1);
	ck_assert_int_eq(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0);
}
END_TEST

/* ---- failures --------------------------------------------------------- */

static int printed; /* calls of the test's own HDF5 error handler */

static herr_t count_prints(hid_t stack, void *data)
{
	(void)stack;
	(void)data;
	printed++;
	return 0;
}

START_TEST(test_missing_directory)
{
	char path[160], partial[176], err[512];
	H5E_auto2_t func = NULL;
	void *data = NULL;

	snprintf(path, sizeof(path), "%s/no/such/dir/out.h5", fx.dir);
	snprintf(partial, sizeof(partial), "%s.partial", path);
	ck_assert_int_ge(H5Eset_auto2(H5E_DEFAULT, count_prints, &printed), 0);

	ck_assert_int_eq(cxs_h5_write(path, &fx.rec, err, sizeof(err)), -1);
	ck_assert_msg(strncmp(err, path, strlen(path)) == 0, "message \"%s\" does not start with "
			     "the path", err);
	ck_assert_ptr_nonnull(strstr(err, ": cannot create file"));
	ck_assert_ptr_nonnull(strstr(err, "(HDF5: "));
	ck_assert_ptr_nonnull(strstr(err, "No such file or directory"));
	ck_assert_ptr_null(strchr(err, '\n'));
	ck_assert_uint_eq(err[strlen(err) - 1], ')');
	ck_assert(!exists(path));
	ck_assert(!exists(partial));
	ck_assert_int_eq(dir_entries(fx.dir), 0);

	/* HDF5 printed nothing itself, and our handler is back in place. */
	ck_assert_int_eq(printed, 0);
	ck_assert_int_ge(H5Eget_auto2(H5E_DEFAULT, &func, &data), 0);
	ck_assert(func == count_prints);
	ck_assert_ptr_eq(data, &printed);
}
END_TEST

/* A failure after the file exists: the .partial is removed, no final file. */
START_TEST(test_failure_midway_removes_partial)
{
	char err[512];

	fx.columns[1].name = "events"; /* duplicate: the second dataset create fails */
	ck_assert_int_eq(cxs_h5_write(fx.path, &fx.rec, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, fx.path));
	ck_assert_ptr_nonnull(strstr(err, "cannot create dataset /engine/events"));
	ck_assert_ptr_nonnull(strstr(err, "already exists"));
	ck_assert_int_eq(dir_entries(fx.dir), 0);
}
END_TEST

/* Statistics the models laid out inconsistently: one line naming them, no file. */
START_TEST(test_inconsistent_layout)
{
	char err[512];

	/* A plain component "core" where node 0 has instances of "core". */
	*cxs_stats_counter(fx.stats[2], "core", "cycles", "", "") = 1;
	ck_assert_int_eq(cxs_h5_write(fx.path, &fx.rec, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, fx.path));
	ck_assert_msg(strstr(err, "statistics group core") != NULL, "%s", err);
	ck_assert_ptr_nonnull(strstr(err, "node 0"));
	ck_assert_ptr_nonnull(strstr(err, "node 2"));
	ck_assert_ptr_null(strchr(err, '\n'));
	ck_assert_int_eq(dir_entries(fx.dir), 0);
	ck_assert_int_eq(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0);

	/* A counter on one node, a histogram of the same name on another. */
	cxs_stats_free(fx.stats[2]);
	fx.stats[2] = cxs_stats_new();
	fx.nodes[2].stats = fx.stats[2];
	ck_assert_ptr_nonnull(cxs_stats_hist(fx.stats[2], "l1", "hits", "", "", 4));
	ck_assert_int_eq(cxs_h5_write(fx.path, &fx.rec, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "statistic l1/hits is a counter on node 0 but a histogram on "
				  "node 2") != NULL, "%s", err);
	ck_assert_int_eq(dir_entries(fx.dir), 0);
}
END_TEST

START_TEST(test_bad_record)
{
	char err[256];

	fx.columns[0].name = "a/b";
	ck_assert_int_eq(cxs_h5_write(fx.path, &fx.rec, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, fx.path));
	ck_assert_ptr_nonnull(strstr(err, "\"a/b\""));
	ck_assert_int_eq(dir_entries(fx.dir), 0);

	fx.columns[0].name = "events";
	fx.columns[1].dvals = NULL;
	ck_assert_int_eq(cxs_h5_write(fx.path, &fx.rec, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "sync_wall_s"));
	ck_assert_int_eq(dir_entries(fx.dir), 0);

	/* No room for a message is not a crash. */
	ck_assert_int_eq(cxs_h5_write(fx.path, &fx.rec, NULL, 0), -1);
	ck_assert_int_eq(cxs_h5_write(fx.path, NULL, err, sizeof(err)), -1);
	ck_assert_int_eq(dir_entries(fx.dir), 0);
}
END_TEST

Suite *h5out_suite(void)
{
	Suite *s = suite_create("h5out");
	TCase *file = tcase_create("file");
	TCase *fail = tcase_create("failure");

	tcase_add_checked_fixture(file, setup, teardown);
	tcase_add_test(file, test_root_attrs);
	tcase_add_test(file, test_engine_columns);
	tcase_add_test(file, test_node_tables);
	tcase_add_test(file, test_stats_groups);
	tcase_add_test(file, test_stats_instances);
	tcase_add_test(file, test_failed_node_keeps_rows);
	tcase_add_test(file, test_stats_histogram);
	tcase_add_test(file, test_stats_vector);
	tcase_add_test(file, test_large_vector_chunked);
	tcase_add_test(file, test_series);
	tcase_add_test(file, test_failures);
	tcase_add_test(file, test_empty_record);
	tcase_add_test(file, test_replaces_old_file_and_stale_partial);
	tcase_add_test(file, test_no_leaked_ids);
	suite_add_tcase(s, file);

	tcase_add_checked_fixture(fail, setup, teardown);
	tcase_add_test(fail, test_missing_directory);
	tcase_add_test(fail, test_failure_midway_removes_partial);
	tcase_add_test(fail, test_inconsistent_layout);
	tcase_add_test(fail, test_bad_record);
	suite_add_tcase(s, fail);
	return s;
}
