/*
 * Unit tests for the HDF5 writer (src/stats/h5out.c). Each test writes into
 * its own mkdtemp() directory and reads the file back with the HDF5 C API,
 * checking the documented layout: root attributes and their types, /engine
 * columns, /nodes tables and per-node counters and histograms with their
 * attributes, /failures rows; then the failure behaviour: one-line messages
 * naming the path, no file and no temporary file left behind, no leaked HDF5 ids,
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
#include "cxlsim/publish.h"
#include "cxlsim/stats.h"
#include "unit_suites.h"

/* ---- the record under test -------------------------------------------- */

struct fixture {
	char dir[64];
	char path[128];
	struct cxs_stats *stats[3];
	uint64_t events[2];
	double sync_wall_s[2];
	struct cxs_rank_column columns[2];
	struct cxs_node_record nodes[3];
	struct cxs_failure_record failure;
	struct cxs_run_record rec;
};

static struct fixture fx;

/*
 * Three nodes: 0 alive with a counter and a histogram; 1 dead, its statistics
 * lost (NULL); 2 alive with components registered interleaved (a, b, a), so
 * the writer must reopen a component group it already made.
 */
static void setup(void)
{
	struct cxs_hist *h;

	memset(&fx, 0, sizeof(fx));
	strcpy(fx.dir, "/tmp/cxs_h5out_XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(fx.dir));
	snprintf(fx.path, sizeof(fx.path), "%s/out.h5", fx.dir);

	fx.stats[0] = cxs_stats_new();
	*cxs_stats_counter(fx.stats[0], "l1", "hits", "lines", "demand hits in L1") = 42;
	h = cxs_stats_hist(fx.stats[0], "l1", "latency_ps", "ps", "load-to-use latency", 8);
	ck_assert_ptr_nonnull(h);
	cxs_hist_add(h, 0);
	cxs_hist_add(h, 3);
	cxs_hist_add(h, 1000); /* past bucket 7: clamped into it */
	fx.stats[2] = cxs_stats_new();
	*cxs_stats_counter(fx.stats[2], "a", "x", "events", "first of a") = 1;
	*cxs_stats_counter(fx.stats[2], "b", "y", "events", "only of b") = 2;
	*cxs_stats_counter(fx.stats[2], "a", "z", "events", "second of a") = UINT64_MAX;

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
		.nnodes = 3,
		.nodes = fx.nodes,
		.nfailures = 1,
		.failures = &fx.failure,
	};
}

static void teardown(void)
{
	DIR *d = opendir(fx.dir);
	struct dirent *e;
	char p[512];

	cxs_stats_free(fx.stats[0]);
	cxs_stats_free(fx.stats[2]);
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
	snprintf(partial, sizeof(partial), "%s" CXS_PUBLISH_SUFFIX, fx.path);
	ck_assert(exists(fx.path));
	ck_assert(!exists(partial));
	ck_assert_int_eq(dir_entries(fx.dir), 1);

	f = open_file();
	ck_assert_uint_eq(attr_u32(f, "/", "format_version"), 1);
	assert_attr_str(f, "/", "cxlsim_version", "0.1.0");
	assert_attr_str(f, "/", "command_line", fx.rec.command_line);
	assert_attr_str(f, "/", "config", "[engine]\nend_time = 5ms\n");
	assert_attr_str(f, "/", "status", "complete-with-failures");
	assert_attr_str(f, "/", "model", "phold");
	ck_assert_uint_eq(attr_u32(f, "/", "nranks"), 2);
	ck_assert_uint_eq(attr_u32(f, "/", "nnodes"), 3);
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
	char *type[3] = { NULL, NULL, NULL };
	uint8_t alive[3];
	uint32_t rank[3];

	write_ok();
	f = open_file();
	d = open_dset(f, "/nodes/type", 1, 3, -1);
	mt = vlen_str_type();
	ck_assert_int_ge(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, type), 0);
	ck_assert_str_eq(type[0], "cn");
	ck_assert_str_eq(type[1], "mn");
	ck_assert_str_eq(type[2], "cn");
	sp = H5Dget_space(d);
	H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, type);
	H5Sclose(sp);
	H5Tclose(mt);
	H5Dclose(d);

	d = open_dset(f, "/nodes/alive", 1, 3, H5T_STD_U8LE);
	ck_assert_int_ge(H5Dread(d, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, alive), 0);
	ck_assert_uint_eq(alive[0], 1);
	ck_assert_uint_eq(alive[1], 0);
	ck_assert_uint_eq(alive[2], 1);
	H5Dclose(d);

	d = open_dset(f, "/nodes/rank", 1, 3, H5T_STD_U32LE);
	ck_assert_int_ge(H5Dread(d, H5T_NATIVE_UINT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, rank), 0);
	ck_assert_uint_eq(rank[0], 0);
	ck_assert_uint_eq(rank[1], 1);
	ck_assert_uint_eq(rank[2], 1);
	H5Dclose(d);

	/* type, alive, rank and one group per node, dead ones included (empty). */
	ck_assert_uint_eq(group_links(f, "/nodes"), 6);
	ck_assert_uint_eq(group_links(f, "/nodes/0001"), 0);
	ck_assert_int_eq(H5Fclose(f), 0);
}
END_TEST

START_TEST(test_node_counters)
{
	hid_t f, d;
	uint64_t v = 0;

	write_ok();
	f = open_file();
	ck_assert_uint_eq(group_links(f, "/nodes/0000"), 1);
	ck_assert_uint_eq(group_links(f, "/nodes/0000/l1"), 2);
	d = open_dset(f, "/nodes/0000/l1/hits", 0, 0, H5T_STD_U64LE);
	ck_assert_int_ge(H5Dread(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v), 0);
	ck_assert_uint_eq(v, 42);
	H5Dclose(d);
	assert_attr_str(f, "/nodes/0000/l1/hits", "units", "lines");
	assert_attr_str(f, "/nodes/0000/l1/hits", "description", "demand hits in L1");

	/* Interleaved components land in one group each. */
	ck_assert_uint_eq(group_links(f, "/nodes/0002"), 2);
	ck_assert_uint_eq(group_links(f, "/nodes/0002/a"), 2);
	ck_assert_uint_eq(group_links(f, "/nodes/0002/b"), 1);
	d = open_dset(f, "/nodes/0002/a/z", 0, 0, H5T_STD_U64LE);
	ck_assert_int_ge(H5Dread(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
	H5Dclose(d);
	assert_attr_str(f, "/nodes/0002/a/z", "units", "events");
	assert_attr_str(f, "/nodes/0002/b/y", "description", "only of b");
	ck_assert_int_eq(H5Fclose(f), 0);
}
END_TEST

START_TEST(test_node_histogram)
{
	const char *p = "/nodes/0000/l1/latency_ps";
	uint64_t b[8];
	hid_t f, d;

	write_ok();
	f = open_file();
	d = open_dset(f, p, 1, 8, H5T_STD_U64LE);
	ck_assert_int_ge(H5Dread(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, b), 0);
	H5Dclose(d);
	ck_assert_uint_eq(b[0], 1); /* 0 */
	ck_assert_uint_eq(b[1], 0);
	ck_assert_uint_eq(b[2], 1); /* 3 */
	for (int i = 3; i < 7; i++)
		ck_assert_uint_eq(b[i], 0);
	ck_assert_uint_eq(b[7], 1); /* 1000, clamped */
	assert_attr_str(f, p, "units", "ps");
	assert_attr_str(f, p, "description", "load-to-use latency");
	ck_assert_uint_eq(attr_u64(f, p, "count"), 3);
	ck_assert_uint_eq(attr_u64(f, p, "sum"), 1003);
	ck_assert_uint_eq(attr_u64(f, p, "min"), 0);
	ck_assert_uint_eq(attr_u64(f, p, "max"), 1000);
	assert_attr_str(f, p, "bucket_rule", "bucket 0: value 0; bucket i>=1: [2^(i-1), 2^i)");
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

	snprintf(partial, sizeof(partial), "%s" CXS_PUBLISH_SUFFIX, fx.path);
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
	tcase_add_test(file, test_node_counters);
	tcase_add_test(file, test_node_histogram);
	tcase_add_test(file, test_failures);
	tcase_add_test(file, test_empty_record);
	tcase_add_test(file, test_replaces_old_file_and_stale_partial);
	tcase_add_test(file, test_no_leaked_ids);
	suite_add_tcase(s, file);

	tcase_add_checked_fixture(fail, setup, teardown);
	tcase_add_test(fail, test_missing_directory);
	tcase_add_test(fail, test_failure_midway_removes_partial);
	tcase_add_test(fail, test_bad_record);
	suite_add_tcase(s, fail);
	return s;
}
