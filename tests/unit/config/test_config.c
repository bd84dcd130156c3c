/*
 * Unit tests for src/config/config.c. Every error test compares the whole
 * message, so a wrong line number, key name or wording fails; value tests read
 * the typed getters back. Files are written with mkstemp under /tmp and removed
 * by the test that made them. Check forks each test, so the abort tests
 * (programming errors) are expected to die of SIGABRT.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* mkstemp, mkdtemp, open_memstream */
#endif

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cxlsim/config.h"
#include "unit_suites.h"

#define WHAT_UINT "expected a non-negative integer such as 42, 0x2a or 4k"
#define WHAT_UINT_BIG "expected an integer below 2^64"
#define WHAT_INT "expected an integer such as -3"
#define WHAT_INT_BIG "expected an integer in [-2^63, 2^63 - 1]"
#define WHAT_DOUBLE "expected a finite number such as 0.25 or 1e-3"
#define WHAT_BOOL "expected true/false, yes/no, on/off or 1/0"
#define WHAT_TIME "expected a time such as 100ns (units ps, ns, us, ms, s)"
#define WHAT_TIME_FRAC "expected a whole number of picoseconds"
#define WHAT_TIME_BIG "expected a time of at most 18446744073709551615ps (213 days)"
#define WHAT_SIZE "expected a size such as 48KiB (a whole number; units B, KiB, MiB, GiB)"
#define WHAT_SIZE_BIG "expected a size below 2^64 bytes"
#define WHAT_ENUM "expected one of wb|wt|none"

/* One unbounded key per type: the parsing tests. */
static const struct cxs_cfg_key type_keys[] = {
	{ "types", "u", CXS_CFG_UINT, "0", "A uint.", NULL, 0, 0 },
	{ "types", "i", CXS_CFG_INT, "0", "An int.", NULL, 0, 0 },
	{ "types", "d", CXS_CFG_DOUBLE, "0", "A double.", NULL, 0, 0 },
	{ "types", "b", CXS_CFG_BOOL, "false", "A bool.", NULL, 0, 0 },
	{ "types", "t", CXS_CFG_TIME, "0", "A time.", NULL, 0, 0 },
	{ "types", "s", CXS_CFG_SIZE, "0", "A size.", NULL, 0, 0 },
	{ "types", "e", CXS_CFG_ENUM, "wb", "An enum.", "wb|wt|none", 0, 0 },
	{ "types", "str", CXS_CFG_STRING, "", "A string.", NULL, 0, 0 },
};

/* Ranged and required keys, shaped like a real module's table. */
static const struct cxs_cfg_key engine_keys[] = {
	{ "engine", "lookahead", CXS_CFG_TIME, "100ns",
	  "Conservative lookahead: the least latency of any link between ranks.", NULL, 1e3, 1e9 },
	{ "engine", "end_time", CXS_CFG_TIME, NULL, "Simulated time at which the run stops.", NULL,
	  0, 0 },
	{ "engine", "seed", CXS_CFG_UINT, "42", "Seed of every random stream.", NULL, 0, 0 },
	{ "engine", "ranks", CXS_CFG_UINT, "4", "Ranks expected.", NULL, 1, 100 },
	{ "engine", "offset", CXS_CFG_INT, "-5", "A signed offset.", NULL, -10, 10 },
	{ "engine", "ratio", CXS_CFG_DOUBLE, "0.5", "A fraction.", NULL, 0, 1 },
	{ "engine", "verbose", CXS_CFG_BOOL, "no", "Log more.", NULL, 0, 0 },
	{ "cache", "size", CXS_CFG_SIZE, "48KiB", "Capacity of the cache.", NULL, 64, 1073741824.0 },
	{ "cache", "policy", CXS_CFG_ENUM, "wb", "Write policy.", "wb|wt|none", 0, 0 },
	{ "cache", "name", CXS_CFG_STRING, "l1", "Label in the output.", NULL, 0, 0 },
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static struct cxs_config *new_cfg(void)
{
	struct cxs_config *cfg = cxs_config_new();
	char err[CXS_CONFIG_ERR_MAX] = "";

	ck_assert_ptr_nonnull(cfg);
	ck_assert_msg(cxs_config_register(cfg, type_keys, N_OF(type_keys), err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_msg(cxs_config_register(cfg, engine_keys, N_OF(engine_keys), err, sizeof(err)) == 0,
		      "%s", err);
	return cfg;
}

/* Writes text to a fresh file under /tmp; path must hold 32 bytes. */
static void write_tmp(char *path, const char *text)
{
	int fd;
	size_t len = strlen(text);

	strcpy(path, "/tmp/cxs_cfg_XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
	ck_assert_int_eq(close(fd), 0);
}

static int load_text(struct cxs_config *cfg, const char *text, char *path, char *err)
{
	write_tmp(path, text);
	return cxs_config_load(cfg, path, err, CXS_CONFIG_ERR_MAX);
}

/* Loads "[types]\nkey = value" with the key on line 3; asserts success. */
static struct cxs_config *good(const char *key, const char *value)
{
	struct cxs_config *cfg = new_cfg();
	char path[32], err[CXS_CONFIG_ERR_MAX] = "", text[512];
	int rc;

	snprintf(text, sizeof(text), "; a comment\n[types]\n%s = %s\n", key, value);
	rc = load_text(cfg, text, path, err);
	unlink(path);
	ck_assert_msg(rc == 0, "%s = %s rejected: %s", key, value, err);
	return cfg;
}

/* Same file shape; asserts the exact message "path:3: types.key: what, got "value"". */
static void bad(const char *key, const char *value, const char *what)
{
	struct cxs_config *cfg = new_cfg();
	char path[32], err[CXS_CONFIG_ERR_MAX] = "", text[512], want[CXS_CONFIG_ERR_MAX];
	int rc;

	snprintf(text, sizeof(text), "; a comment\n[types]\n%s = %s\n", key, value);
	rc = load_text(cfg, text, path, err);
	snprintf(want, sizeof(want), "%s:3: types.%s: %s, got \"%s\"", path, key, what, value);
	unlink(path);
	ck_assert_msg(rc == -1, "%s = %s accepted", key, value);
	ck_assert_str_eq(err, want);
	cxs_config_free(cfg);
}

static void set_ok(struct cxs_config *cfg, const char *assignment)
{
	char err[CXS_CONFIG_ERR_MAX] = "";

	ck_assert_msg(cxs_config_set(cfg, assignment, err, sizeof(err)) == 0, "%s: %s", assignment,
		      err);
}

static void set_bad(const char *assignment, const char *want)
{
	struct cxs_config *cfg = new_cfg();
	char err[CXS_CONFIG_ERR_MAX] = "";

	ck_assert_int_eq(cxs_config_set(cfg, assignment, err, sizeof(err)), -1);
	ck_assert_str_eq(err, want);
	cxs_config_free(cfg);
}

/* ---- types -------------------------------------------------------------- */

static void check_uint(const char *text, uint64_t want)
{
	struct cxs_config *cfg = good("u", text);

	ck_assert_msg(cxs_config_uint(cfg, "types", "u") == want, "%s", text);
	cxs_config_free(cfg);
}

START_TEST(uint_good)
{
	check_uint("0", 0);
	check_uint("42", 42);
	check_uint("0x2a", 42);
	check_uint("0X2A", 42);
	check_uint("4k", 4000);
	check_uint("4K", 4000);
	check_uint("3M", 3000000);
	check_uint("2G", 2000000000);
	check_uint("0x10k", 16000);
	check_uint("18446744073709551615", UINT64_MAX);
	check_uint("18446744073709551k", 18446744073709551000u);
}
END_TEST

START_TEST(uint_bad)
{
	bad("u", "-1", WHAT_UINT);
	bad("u", "+1", WHAT_UINT);
	bad("u", "abc", WHAT_UINT);
	bad("u", "1.5", WHAT_UINT);
	bad("u", "4m", WHAT_UINT);
	bad("u", "1 k", WHAT_UINT);
	bad("u", "0x", WHAT_UINT);
	bad("u", "0x1g", WHAT_UINT);
	bad("u", "", WHAT_UINT);
	bad("u", "18446744073709551616", WHAT_UINT_BIG);
	bad("u", "18446744073709552k", WHAT_UINT_BIG);
	bad("u", "0x10000000000000000", WHAT_UINT_BIG);
}
END_TEST

static void check_int(const char *text, int64_t want)
{
	struct cxs_config *cfg = good("i", text);

	ck_assert_msg(cxs_config_int(cfg, "types", "i") == want, "%s", text);
	cxs_config_free(cfg);
}

START_TEST(int_good)
{
	check_int("-5", -5);
	check_int("7", 7);
	check_int("+7", 7);
	check_int("0x10", 16);
	check_int("-0x10", -16);
	check_int("9223372036854775807", INT64_MAX);
	check_int("-9223372036854775808", INT64_MIN);
}
END_TEST

START_TEST(int_bad)
{
	bad("i", "1.0", WHAT_INT);
	bad("i", "x", WHAT_INT);
	bad("i", "--1", WHAT_INT);
	bad("i", "-", WHAT_INT);
	bad("i", "4k", WHAT_INT);
	bad("i", "9223372036854775808", WHAT_INT_BIG);
	bad("i", "-9223372036854775809", WHAT_INT_BIG);
}
END_TEST

START_TEST(double_good)
{
	struct cxs_config *cfg = good("d", "0.25");

	ck_assert_double_eq(cxs_config_double(cfg, "types", "d"), 0.25);
	cxs_config_free(cfg);
	cfg = good("d", "-1e3");
	ck_assert_double_eq(cxs_config_double(cfg, "types", "d"), -1000.0);
	cxs_config_free(cfg);
	cfg = good("d", "3");
	ck_assert_double_eq(cxs_config_double(cfg, "types", "d"), 3.0);
	cxs_config_free(cfg);
}
END_TEST

START_TEST(double_bad)
{
	bad("d", "nan", WHAT_DOUBLE);
	bad("d", "inf", WHAT_DOUBLE);
	bad("d", "-infinity", WHAT_DOUBLE);
	bad("d", "1e999", WHAT_DOUBLE);
	bad("d", "abc", WHAT_DOUBLE);
	bad("d", "1.5x", WHAT_DOUBLE);
	bad("d", "", WHAT_DOUBLE);
}
END_TEST

START_TEST(bool_words)
{
	static const char *const yes[] = { "true", "YES", "on", "1", "True" };
	static const char *const no[] = { "false", "No", "OFF", "0" };
	size_t i;

	for (i = 0; i < N_OF(yes); i++) {
		struct cxs_config *cfg = good("b", yes[i]);

		ck_assert_msg(cxs_config_bool(cfg, "types", "b"), "%s", yes[i]);
		cxs_config_free(cfg);
	}
	for (i = 0; i < N_OF(no); i++) {
		struct cxs_config *cfg = new_cfg();
		char a[64];

		/* the default is false; make it true first so that the word must change it */
		set_ok(cfg, "types.b=on");
		ck_assert(cxs_config_bool(cfg, "types", "b"));
		snprintf(a, sizeof(a), "types.b=%s", no[i]);
		set_ok(cfg, a);
		ck_assert_msg(!cxs_config_bool(cfg, "types", "b"), "%s", no[i]);
		cxs_config_free(cfg);
	}
	bad("b", "maybe", WHAT_BOOL);
	bad("b", "2", WHAT_BOOL);
	bad("b", "", WHAT_BOOL);
}
END_TEST

static void check_time(const char *text, uint64_t want)
{
	struct cxs_config *cfg = good("t", text);

	ck_assert_msg(cxs_config_time_ps(cfg, "types", "t") == want, "%s gave %llu", text,
		      (unsigned long long)cxs_config_time_ps(cfg, "types", "t"));
	cxs_config_free(cfg);
}

START_TEST(time_units)
{
	check_time("7", 7);
	check_time("7ps", 7);
	check_time("100ns", 100000);
	check_time("3us", 3000000);
	check_time("2ms", 2000000000);
	check_time("1s", 1000000000000);
	check_time("5 ns", 5000);
	check_time("2.0", 2);
	check_time("2.5ms", 2500000000);
	check_time("0.001ns", 1);
	check_time("1.500000ns", 1500);
	check_time("18446744073709551615ps", UINT64_MAX);
	check_time("18446744s", 18446744000000000000u);
}
END_TEST

START_TEST(time_bad)
{
	bad("t", "fast", WHAT_TIME);
	bad("t", "ns", WHAT_TIME);
	bad("t", "100 furlongs", WHAT_TIME);
	bad("t", "100NS", WHAT_TIME);
	bad("t", "1e3ns", WHAT_TIME);
	bad("t", "-1ns", WHAT_TIME);
	bad("t", "1.ns", WHAT_TIME);
	bad("t", ".5ns", WHAT_TIME);
	bad("t", "1..2ns", WHAT_TIME);
	bad("t", "", WHAT_TIME);
	bad("t", "0.5ps", WHAT_TIME_FRAC);
	bad("t", "2.5", WHAT_TIME_FRAC);
	bad("t", "1.0001ns", WHAT_TIME_FRAC);
	bad("t", "18446745s", WHAT_TIME_BIG);
	bad("t", "18446744073709551616ps", WHAT_TIME_BIG);
	/* the integer part fits after scaling; adding the fraction overflows */
	bad("t", "18446744073709551.616ns", WHAT_TIME_BIG);
}
END_TEST

static void check_size(const char *text, uint64_t want)
{
	struct cxs_config *cfg = good("s", text);

	ck_assert_msg(cxs_config_size_bytes(cfg, "types", "s") == want, "%s", text);
	cxs_config_free(cfg);
}

START_TEST(size_units)
{
	check_size("0", 0);
	check_size("100", 100);
	check_size("100B", 100);
	check_size("48KiB", 49152);
	check_size("2MiB", 2097152);
	check_size("1 GiB", 1073741824);
	check_size("17179869183GiB", 17179869183ull << 30);
	bad("s", "1KB", WHAT_SIZE);
	bad("s", "1kib", WHAT_SIZE);
	bad("s", "1.5KiB", WHAT_SIZE);
	bad("s", "-1B", WHAT_SIZE);
	bad("s", "KiB", WHAT_SIZE);
	bad("s", "17179869184GiB", WHAT_SIZE_BIG);
	bad("s", "18446744073709551616", WHAT_SIZE_BIG);
}
END_TEST

START_TEST(enum_choices)
{
	struct cxs_config *cfg = good("e", "wt");

	ck_assert_uint_eq(cxs_config_enum(cfg, "types", "e"), 1);
	set_ok(cfg, "types.e=none");
	ck_assert_uint_eq(cxs_config_enum(cfg, "types", "e"), 2);
	set_ok(cfg, "types.e=wb");
	ck_assert_uint_eq(cxs_config_enum(cfg, "types", "e"), 0);
	cxs_config_free(cfg);
	bad("e", "WB", WHAT_ENUM);
	bad("e", "w", WHAT_ENUM);
	bad("e", "wbx", WHAT_ENUM);
	bad("e", "wb|wt", WHAT_ENUM);
	bad("e", "", WHAT_ENUM);
}
END_TEST

START_TEST(string_values)
{
	struct cxs_config *cfg = good("str", "hello world");
	char err[CXS_CONFIG_ERR_MAX] = "";

	ck_assert_str_eq(cxs_config_str(cfg, "types", "str"), "hello world");
	cxs_config_free(cfg);
	cfg = good("str", "a#b;c");
	ck_assert_str_eq(cxs_config_str(cfg, "types", "str"), "a#b;c");
	cxs_config_free(cfg);
	cfg = good("str", "");
	set_ok(cfg, "types.str=  padded  ");
	ck_assert_str_eq(cxs_config_str(cfg, "types", "str"), "padded");
	/* would read back as "x": rejected so that dumps round-trip */
	ck_assert_int_eq(cxs_config_set(cfg, "types.str=x ; y", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "--set: types.str: expected text without ';' or '#' at its start or "
			      "after a blank, got \"x ; y\"");
	ck_assert_int_eq(cxs_config_set(cfg, "types.str=#x", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "--set: types.str: expected text without ';' or '#' at its start or "
			      "after a blank, got \"#x\"");
	ck_assert_str_eq(cxs_config_str(cfg, "types", "str"), "padded");
	cxs_config_free(cfg);
}
END_TEST

/* ---- ranges ------------------------------------------------------------- */

static void range_bad(const char *assignment, const char *want)
{
	set_bad(assignment, want);
}

START_TEST(ranges)
{
	struct cxs_config *cfg = new_cfg();

	range_bad("engine.ranks=0", "--set: engine.ranks: expected a value in [1, 100], got \"0\"");
	range_bad("engine.ranks=101",
		  "--set: engine.ranks: expected a value in [1, 100], got \"101\"");
	range_bad("engine.lookahead=999ps",
		  "--set: engine.lookahead: expected a value in [1ns, 1ms], got \"999ps\"");
	range_bad("engine.lookahead=1000001ns",
		  "--set: engine.lookahead: expected a value in [1ns, 1ms], got \"1000001ns\"");
	range_bad("engine.offset=-11",
		  "--set: engine.offset: expected a value in [-10, 10], got \"-11\"");
	range_bad("engine.ratio=1.5", "--set: engine.ratio: expected a value in [0, 1], got \"1.5\"");
	range_bad("cache.size=32B", "--set: cache.size: expected a value in [64B, 1GiB], got \"32B\"");
	range_bad("cache.size=2GiB",
		  "--set: cache.size: expected a value in [64B, 1GiB], got \"2GiB\"");

	/* the bounds themselves are inside */
	set_ok(cfg, "engine.ranks=1");
	ck_assert_uint_eq(cxs_config_uint(cfg, "engine", "ranks"), 1);
	set_ok(cfg, "engine.ranks=100");
	ck_assert_uint_eq(cxs_config_uint(cfg, "engine", "ranks"), 100);
	set_ok(cfg, "engine.lookahead=1ms");
	ck_assert_uint_eq(cxs_config_time_ps(cfg, "engine", "lookahead"), 1000000000);
	set_ok(cfg, "engine.offset=-10");
	ck_assert_int_eq(cxs_config_int(cfg, "engine", "offset"), -10);
	set_ok(cfg, "cache.size=1GiB");
	ck_assert_uint_eq(cxs_config_size_bytes(cfg, "cache", "size"), 1073741824);
	cxs_config_free(cfg);
}
END_TEST

START_TEST(range_in_file_names_line)
{
	struct cxs_config *cfg = new_cfg();
	char path[32], err[CXS_CONFIG_ERR_MAX] = "", want[CXS_CONFIG_ERR_MAX];

	ck_assert_int_eq(load_text(cfg, "[engine]\nranks = 8\n\n[engine]\nranks = 500\n", path, err),
			 -1);
	snprintf(want, sizeof(want), "%s:5: engine.ranks: expected a value in [1, 100], got \"500\"",
		 path);
	unlink(path);
	ck_assert_str_eq(err, want);
	/* the rejected value did not replace the one before it */
	ck_assert_uint_eq(cxs_config_uint(cfg, "engine", "ranks"), 8);
	cxs_config_free(cfg);
}
END_TEST

/* ---- file structure ----------------------------------------------------- */

static void file_error(const char *text, const char *want_after_path)
{
	struct cxs_config *cfg = new_cfg();
	char path[32], err[CXS_CONFIG_ERR_MAX] = "", want[CXS_CONFIG_ERR_MAX];
	int rc = load_text(cfg, text, path, err);

	snprintf(want, sizeof(want), "%s%s", path, want_after_path);
	unlink(path);
	ck_assert_int_eq(rc, -1);
	ck_assert_str_eq(err, want);
	cxs_config_free(cfg);
}

START_TEST(unknown_section)
{
	file_error("[engine]\nseed = 1\n\n[bogus]\nx = 1\n", ":4: unknown section [bogus]");
	/* reported at the header even when the section has no keys */
	file_error("[engine]\n[bogus]\n", ":2: unknown section [bogus]");
	file_error("; c\n[engnie]\nseed = 1\n", ":2: unknown section [engnie] (did you mean [engine]?)");
}
END_TEST

START_TEST(unknown_key_suggests)
{
	file_error("[engine]\n; c\nlookahaed = 1ns\n",
		   ":3: unknown key engine.lookahaed (did you mean engine.lookahead?)");
	file_error("[engine]\nrank = 3\n", ":2: unknown key engine.rank (did you mean engine.ranks?)");
	/* two edits away is still suggested, three is not */
	file_error("[engine]\nlokahed = 3\n",
		   ":2: unknown key engine.lokahed (did you mean engine.lookahead?)");
	file_error("[engine]\nlkahed = 3\n", ":2: unknown key engine.lkahed");
	/* two swaps of neighbours: two edits, where plain Levenshtein counts four */
	file_error("[engine]\nolokahaed = 3\n",
		   ":2: unknown key engine.olokahaed (did you mean engine.lookahead?)");
	file_error("[engine]\nzzzzzz = 3\n", ":2: unknown key engine.zzzzzz");
	/* only keys of the same section are suggested: cache.size is not engine.size */
	file_error("[engine]\nsize = 3\n", ":2: unknown key engine.size");
	file_error("[engine]\nseedxyz = 3\n", ":2: unknown key engine.seedxyz");
}
END_TEST

START_TEST(syntax_errors)
{
	file_error("[engine]\nlookahead 100ns\n",
		   ":2: expected \"[section]\" or \"key = value\", got \"lookahead 100ns\"");
	file_error("\n\n[engine\n", ":3: expected \"[section]\" or \"key = value\", got \"[engine\"");
	file_error("[engine] x\n", ":1: expected \"[section]\" or \"key = value\", got \"[engine] x\"");
	file_error("[ ]\n", ":1: expected \"[section]\" or \"key = value\", got \"[ ]\"");
	file_error("[engine]\nseed: 5\n", ":2: expected \"[section]\" or \"key = value\", got \"seed: 5\"");
	file_error("[engine]\n= 5\n", ":2: expected \"[section]\" or \"key = value\", got \"= 5\"");
	/* inih would append an indented line to the previous key; here it is an error */
	file_error("[engine]\nseed = 5\n    6\n", ":3: expected \"[section]\" or \"key = value\", got \"6\"");
	file_error("seed = 1\n", ":1: expected a [section] before the first key, got key \"seed\"");
}
END_TEST

START_TEST(long_line)
{
	char text[400], tail[300];

	memset(tail, 'x', 250);
	tail[250] = '\0';
	snprintf(text, sizeof(text), "[types]\nstr = %s\n", tail);
	file_error(text, ":2: expected a line of at most 197 characters, got 256");
}
END_TEST

START_TEST(comments_and_layout)
{
	struct cxs_config *cfg = new_cfg();
	char path[32], err[CXS_CONFIG_ERR_MAX] = "";
	int rc = load_text(cfg,
			   "\xEF\xBB\xBF; leading comment after a byte order mark\r\n"
			   "# hash comment\r\n"
			   "  [ engine ]   ; header comment\r\n"
			   "lookahead = 200ns ; comment\r\n"
			   "seed = 7 # hash comment\r\n"
			   "\t ranks=8\r\n"
			   "\r\n"
			   "[cache]\n"
			   "name = a#b ; keeps the # that has no blank before it\n",
			   path, err);

	unlink(path);
	ck_assert_msg(rc == 0, "%s", err);
	ck_assert_uint_eq(cxs_config_time_ps(cfg, "engine", "lookahead"), 200000);
	ck_assert_uint_eq(cxs_config_uint(cfg, "engine", "seed"), 7);
	ck_assert_uint_eq(cxs_config_uint(cfg, "engine", "ranks"), 8);
	ck_assert_str_eq(cxs_config_str(cfg, "cache", "name"), "a#b");
	cxs_config_free(cfg);
}
END_TEST

START_TEST(missing_file)
{
	struct cxs_config *cfg = new_cfg();
	char err[CXS_CONFIG_ERR_MAX] = "", want[CXS_CONFIG_ERR_MAX];

	ck_assert_int_eq(cxs_config_load(cfg, "/tmp/cxs_cfg_no/such.ini", err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "/tmp/cxs_cfg_no/such.ini: cannot open: %s", strerror(ENOENT));
	ck_assert_str_eq(err, want);
	ck_assert_int_eq(cxs_config_load(cfg, "/tmp", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "/tmp: is a directory, not a configuration file");
	cxs_config_free(cfg);
}
END_TEST

/* ---- bytes and kinds of file (issue 13: read wrongly without a word) ---- */

/* Writes n bytes to a fresh file under /tmp; path must hold 32 bytes. */
static void write_tmp_bytes(char *path, const char *bytes, size_t n)
{
	int fd;

	strcpy(path, "/tmp/cxs_cfg_XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, bytes, n), (ssize_t)n);
	ck_assert_int_eq(close(fd), 0);
}

static void bytes_error(const char *bytes, size_t n, const char *want_after_path)
{
	struct cxs_config *cfg = new_cfg();
	char path[32], err[CXS_CONFIG_ERR_MAX] = "", want[CXS_CONFIG_ERR_MAX];
	int rc;

	write_tmp_bytes(path, bytes, n);
	rc = cxs_config_load(cfg, path, err, sizeof(err));
	unlink(path);
	snprintf(want, sizeof(want), "%s%s", path, want_after_path);
	ck_assert_int_eq(rc, -1);
	ck_assert_str_eq(err, want);
	/* nothing after the bad byte was applied */
	ck_assert_uint_eq(cxs_config_uint(cfg, "engine", "ranks"), 4);
	cxs_config_free(cfg);
}

#define NUL_MSG ": NUL byte at column %s: a configuration file is text (a binary file?)"
#define CR_MSG ": carriage return at column %s that does not end the line: lines must end " \
	       "in LF or CRLF (CR-only line endings, as classic Mac OS editors write, make " \
	       "the file one long line)"

START_TEST(nul_and_cr_refused)
{
	static const char nul[] = "[engine]\nranks = 1\00024\n";
	static const char cr[] = "; a comment\r[engine]\rranks = 9\r";
	char zeros[4096] = { 0 }, want[512];

	snprintf(want, sizeof(want), ":2" NUL_MSG, "10");
	bytes_error(nul, sizeof(nul) - 1, want);
	snprintf(want, sizeof(want), ":1" NUL_MSG, "1");
	bytes_error(zeros, sizeof(zeros), want);
	snprintf(want, sizeof(want), ":1" CR_MSG, "12");
	bytes_error(cr, sizeof(cr) - 1, want);
	snprintf(want, sizeof(want), ":2" CR_MSG, "6");
	bytes_error("[engine]\nranks\r= 9\n", 19, want);
}
END_TEST

START_TEST(crlf_accepted)
{
	struct cxs_config *cfg = new_cfg();
	char path[32], err[CXS_CONFIG_ERR_MAX] = "";
	int rc = load_text(cfg, "[engine]\r\nranks = 9\r\n; note\r\n[cache]\r\nname = x\r\n", path,
			   err);

	unlink(path);
	ck_assert_msg(rc == 0, "%s", err);
	ck_assert_uint_eq(cxs_config_uint(cfg, "engine", "ranks"), 9);
	ck_assert_str_eq(cxs_config_str(cfg, "cache", "name"), "x");
	ck_assert_str_eq(cxs_config_origin(cfg, "engine", "ranks") + strlen(path), ":2");
	cxs_config_free(cfg);
}
END_TEST

START_TEST(devices_refused)
{
	struct cxs_config *cfg = new_cfg();
	char err[CXS_CONFIG_ERR_MAX] = "";

	ck_assert_int_eq(cxs_config_load(cfg, "/dev/zero", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "/dev/zero: not a regular file (a character device): a configuration "
			      "is a file that every rank reads");
	ck_assert_int_eq(cxs_config_load(cfg, "/dev/null", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "/dev/null: not a regular file (a character device): a configuration "
			      "is a file that every rank reads");
	cxs_config_free(cfg);
}
END_TEST

/* A pipe whose writer writes is read whole (cat x.ini | cxlsim /dev/stdin). */
START_TEST(fifo_with_writer_read)
{
	struct cxs_config *cfg = new_cfg();
	char path[64] = "/tmp/cxs_cfg_fifo_XXXXXX", err[CXS_CONFIG_ERR_MAX] = ""; /* + "/f" */
	static const char text[] = "[engine]\nranks = 7\n";
	pid_t pid;
	int rc;

	ck_assert_ptr_nonnull(mkdtemp(path));
	strcat(path, "/f");
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open(path, O_WRONLY);

		struct timespec ts = { 0, 100000000 };

		nanosleep(&ts, NULL); /* the reader polls meanwhile */
		_exit(fd >= 0 && write(fd, text, sizeof(text) - 1) == sizeof(text) - 1 ? 0 : 1);
	}
	rc = cxs_config_load(cfg, path, err, sizeof(err));
	waitpid(pid, NULL, 0);
	unlink(path);
	*strrchr(path, '/') = '\0';
	rmdir(path);
	ck_assert_msg(rc == 0, "%s", err);
	ck_assert_uint_eq(cxs_config_uint(cfg, "engine", "ranks"), 7);
	cxs_config_free(cfg);
}
END_TEST

START_TEST(utf8_values_and_messages)
{
	struct cxs_config *cfg = new_cfg();
	char err[CXS_CONFIG_ERR_MAX] = "";

	/* valid UTF-8 is a string like any other, and is echoed as it is */
	ck_assert_int_eq(cxs_config_set(cfg, "cache.name=caf\xc3\xa9", err, sizeof(err)), 0);
	ck_assert_str_eq(cxs_config_str(cfg, "cache", "name"), "caf\xc3\xa9");
	ck_assert_int_eq(cxs_config_set(cfg, "cache.policy=\xc3\xa9", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "--set: cache.policy: expected one of wb|wt|none, got \"\xc3\xa9\"");
	/* anything else is refused as a value, and escaped in the message */
	ck_assert_int_eq(cxs_config_set(cfg, "cache.name=x\xff\xfey", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "--set: cache.name: expected UTF-8 text, got \"x\\xff\\xfey\"");
	ck_assert_int_eq(cxs_config_set(cfg, "cache.policy=\xc0\xaf\xed\xa0\x80", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "--set: cache.policy: expected one of wb|wt|none, got "
			      "\"\\xc0\\xaf\\xed\\xa0\\x80\"");
	ck_assert_str_eq(cxs_config_str(cfg, "cache", "name"), "caf\xc3\xa9");
	cxs_config_free(cfg);
}
END_TEST

/* ---- precedence and origin ---------------------------------------------- */

START_TEST(override_and_origin)
{
	struct cxs_config *cfg = new_cfg();
	char p1[32], p2[32], err[CXS_CONFIG_ERR_MAX] = "", want[64];

	ck_assert_str_eq(cxs_config_origin(cfg, "engine", "seed"), "default");
	ck_assert_str_eq(cxs_config_origin(cfg, "engine", "end_time"), "unset");
	ck_assert_int_eq(load_text(cfg, "[engine]\nseed = 1\nranks = 2\nseed = 3\n", p1, err), 0);
	ck_assert_uint_eq(cxs_config_uint(cfg, "engine", "seed"), 3);
	snprintf(want, sizeof(want), "%s:4", p1);
	ck_assert_str_eq(cxs_config_origin(cfg, "engine", "seed"), want);

	/* a second file overrides the first, key by key */
	ck_assert_int_eq(load_text(cfg, "[engine]\n\nranks = 9\n", p2, err), 0);
	ck_assert_uint_eq(cxs_config_uint(cfg, "engine", "ranks"), 9);
	ck_assert_uint_eq(cxs_config_uint(cfg, "engine", "seed"), 3);
	snprintf(want, sizeof(want), "%s:3", p2);
	ck_assert_str_eq(cxs_config_origin(cfg, "engine", "ranks"), want);

	/* --set overrides both */
	set_ok(cfg, "engine.seed=11");
	ck_assert_uint_eq(cxs_config_uint(cfg, "engine", "seed"), 11);
	ck_assert_str_eq(cxs_config_origin(cfg, "engine", "seed"), "--set");
	set_ok(cfg, " engine.seed = 12 ");
	ck_assert_uint_eq(cxs_config_uint(cfg, "engine", "seed"), 12);
	ck_assert_str_eq(cxs_config_origin(cfg, "cache", "policy"), "default");
	unlink(p1);
	unlink(p2);
	cxs_config_free(cfg);
}
END_TEST

START_TEST(set_errors)
{
	set_bad("engine.seed", "--set: expected section.key=value, got \"engine.seed\"");
	set_bad("seed=3", "--set: expected section.key=value, got \"seed=3\"");
	set_bad(".seed=3", "--set: expected section.key=value, got \".seed=3\"");
	set_bad("engine.=3", "--set: expected section.key=value, got \"engine.=3\"");
	set_bad("=3", "--set: expected section.key=value, got \"=3\"");
	set_bad("bogus.x=1", "--set: unknown section [bogus]");
	set_bad("engien.seed=1", "--set: unknown section [engien] (did you mean [engine]?)");
	set_bad("engine.sede=1", "--set: unknown key engine.sede (did you mean engine.seed?)");
	set_bad("engine.lookahead=fast",
		"--set: engine.lookahead: expected a time such as 100ns (units ps, ns, us, ms, s), "
		"got \"fast\"");
	set_bad("engine.seed=", "--set: engine.seed: " WHAT_UINT ", got \"\"");
	/* user text is escaped: the message stays on one line */
	set_bad("types.str=a\nb", "--set: types.str: expected text without control characters, "
				  "got \"a\\x0ab\"");
	set_bad("engine.se\ned=1",
		"--set: unknown key engine.se\\x0aed (did you mean engine.seed?)");
	set_bad("zz\tzz.seed=1", "--set: unknown section [zz\\x09zz]");
	set_bad("engine.seed=\"4\"\\", "--set: engine.seed: " WHAT_UINT ", got \"\\\"4\\\"\\\\\"");
}
END_TEST

START_TEST(failed_set_keeps_value)
{
	struct cxs_config *cfg = new_cfg();
	char err[CXS_CONFIG_ERR_MAX] = "";

	set_ok(cfg, "engine.lookahead=5ns");
	ck_assert_int_eq(cxs_config_set(cfg, "engine.lookahead=5 parsecs", err, sizeof(err)), -1);
	ck_assert_uint_eq(cxs_config_time_ps(cfg, "engine", "lookahead"), 5000);
	ck_assert_str_eq(cxs_config_origin(cfg, "engine", "lookahead"), "--set");
	cxs_config_free(cfg);
}
END_TEST

/* ---- required keys ------------------------------------------------------ */

START_TEST(required_key)
{
	struct cxs_config *cfg = new_cfg();
	char err[CXS_CONFIG_ERR_MAX] = "";

	ck_assert_int_eq(cxs_config_check_required(cfg, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "missing required key engine.end_time");
	set_ok(cfg, "engine.end_time=5ms");
	strcpy(err, "untouched");
	ck_assert_int_eq(cxs_config_check_required(cfg, err, sizeof(err)), 0);
	ck_assert_str_eq(err, "untouched");
	ck_assert_uint_eq(cxs_config_time_ps(cfg, "engine", "end_time"), 5000000000);
	cxs_config_free(cfg);
}
END_TEST

START_TEST(required_unset_getter_aborts)
{
	struct cxs_config *cfg = new_cfg();

	(void)cxs_config_time_ps(cfg, "engine", "end_time");
}
END_TEST

START_TEST(wrong_type_aborts)
{
	struct cxs_config *cfg = new_cfg();

	(void)cxs_config_uint(cfg, "engine", "lookahead");
}
END_TEST

START_TEST(unregistered_aborts)
{
	struct cxs_config *cfg = new_cfg();

	(void)cxs_config_uint(cfg, "engine", "nonesuch");
}
END_TEST

START_TEST(enum_read_as_string_aborts)
{
	struct cxs_config *cfg = new_cfg();

	(void)cxs_config_str(cfg, "cache", "policy");
}
END_TEST

/* ---- registration ------------------------------------------------------- */

static void register_bad(const struct cxs_cfg_key *k, const char *want)
{
	struct cxs_config *cfg = cxs_config_new();
	char err[CXS_CONFIG_ERR_MAX] = "";

	ck_assert_int_eq(cxs_config_register(cfg, k, 1, err, sizeof(err)), -1);
	ck_assert_str_eq(err, want);
	cxs_config_free(cfg);
}

START_TEST(register_checks)
{
	static const struct cxs_cfg_key bad_default = { "x", "y", CXS_CFG_TIME, "5 minutes", "D.",
							NULL, 0, 0 };
	static const struct cxs_cfg_key out_of_range = { "x", "y", CXS_CFG_UINT, "0", "D.", NULL, 1,
							 2 };
	static const struct cxs_cfg_key no_choices = { "x", "y", CXS_CFG_ENUM, "a", "D.", NULL, 0,
						       0 };
	static const struct cxs_cfg_key empty_choice = { "x", "y", CXS_CFG_ENUM, "a", "D.", "a||b",
							 0, 0 };
	static const struct cxs_cfg_key bool_range = { "x", "y", CXS_CFG_BOOL, "true", "D.", NULL,
						       0, 1 };
	static const struct cxs_cfg_key empty_range = { "x", "y", CXS_CFG_INT, "0", "D.", NULL, 2,
							1 };
	static const struct cxs_cfg_key dotted = { "x.z", "y", CXS_CFG_INT, "0", "D.", NULL, 0, 0 };
	static const struct cxs_cfg_key bad_string = { "x", "y", CXS_CFG_STRING, "a ; b", "D.",
						       NULL, 0, 0 };

	register_bad(&bad_default, "cxs_config_register: x.y: bad default: " WHAT_TIME
				   ", got \"5 minutes\"");
	register_bad(&out_of_range, "cxs_config_register: x.y: bad default: expected a value in "
				    "[1, 2], got \"0\"");
	register_bad(&no_choices, "cxs_config_register: x.y: enum without choices");
	register_bad(&empty_choice, "cxs_config_register: x.y: empty word in choices \"a||b\"");
	register_bad(&bool_range, "cxs_config_register: x.y: range given for a bool");
	register_bad(&empty_range, "cxs_config_register: x.y: range [2, 1] is empty");
	register_bad(&dotted, "cxs_config_register: key 0: section and key must be 1 to 49 "
			      "letters, digits, '_' or '-'");
	register_bad(&bad_string, "cxs_config_register: x.y: bad default: expected text without "
				  "';' or '#' at its start or after a blank, got \"a ; b\"");
}
END_TEST

START_TEST(register_twice)
{
	static const struct cxs_cfg_key other[] = {
		{ "engine", "fresh", CXS_CFG_UINT, "1", "Added by a second table.", NULL, 0, 0 },
		{ "engine", "seed", CXS_CFG_UINT, "43", "Same key, other default.", NULL, 0, 0 },
	};
	struct cxs_config *cfg = new_cfg();
	char err[CXS_CONFIG_ERR_MAX] = "";
	char *dump;

	/* the same table again is harmless: no duplicate rows, value kept */
	set_ok(cfg, "engine.seed=9");
	ck_assert_int_eq(cxs_config_register(cfg, engine_keys, N_OF(engine_keys), err, sizeof(err)),
			 0);
	ck_assert_uint_eq(cxs_config_uint(cfg, "engine", "seed"), 9);
	dump = cxs_config_dump(cfg);
	ck_assert_ptr_nonnull(dump);
	ck_assert_ptr_nonnull(strstr(dump, "\nseed = "));
	ck_assert_ptr_null(strstr(strstr(dump, "\nseed = ") + 1, "\nseed = "));
	free(dump);

	/* a conflicting definition is refused, and nothing of that table is added */
	ck_assert_int_eq(cxs_config_register(cfg, other, N_OF(other), err, sizeof(err)), -1);
	ck_assert_str_eq(err, "cxs_config_register: engine.seed: registered twice with different "
			      "definitions");
	ck_assert_int_eq(cxs_config_set(cfg, "engine.fresh=2", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "--set: unknown key engine.fresh");
	cxs_config_free(cfg);
}
END_TEST

/* ---- dump --------------------------------------------------------------- */

static void assert_same_values(const struct cxs_config *a, const struct cxs_config *b)
{
	ck_assert_uint_eq(cxs_config_uint(a, "types", "u"), cxs_config_uint(b, "types", "u"));
	ck_assert_int_eq(cxs_config_int(a, "types", "i"), cxs_config_int(b, "types", "i"));
	/* bit-identical, not merely close */
	ck_assert(memcmp(&(double){ cxs_config_double(a, "types", "d") },
			 &(double){ cxs_config_double(b, "types", "d") }, sizeof(double)) == 0);
	ck_assert_int_eq(cxs_config_bool(a, "types", "b"), cxs_config_bool(b, "types", "b"));
	ck_assert_uint_eq(cxs_config_time_ps(a, "types", "t"), cxs_config_time_ps(b, "types", "t"));
	ck_assert_uint_eq(cxs_config_size_bytes(a, "types", "s"),
			  cxs_config_size_bytes(b, "types", "s"));
	ck_assert_uint_eq(cxs_config_enum(a, "types", "e"), cxs_config_enum(b, "types", "e"));
	ck_assert_str_eq(cxs_config_str(a, "types", "str"), cxs_config_str(b, "types", "str"));
	ck_assert_uint_eq(cxs_config_time_ps(a, "engine", "lookahead"),
			  cxs_config_time_ps(b, "engine", "lookahead"));
	ck_assert_uint_eq(cxs_config_time_ps(a, "engine", "end_time"),
			  cxs_config_time_ps(b, "engine", "end_time"));
	ck_assert_uint_eq(cxs_config_uint(a, "engine", "seed"),
			  cxs_config_uint(b, "engine", "seed"));
	ck_assert_uint_eq(cxs_config_uint(a, "engine", "ranks"),
			  cxs_config_uint(b, "engine", "ranks"));
	ck_assert_int_eq(cxs_config_int(a, "engine", "offset"),
			 cxs_config_int(b, "engine", "offset"));
	ck_assert_double_eq(cxs_config_double(a, "engine", "ratio"),
			    cxs_config_double(b, "engine", "ratio"));
	ck_assert_int_eq(cxs_config_bool(a, "engine", "verbose"),
			 cxs_config_bool(b, "engine", "verbose"));
	ck_assert_uint_eq(cxs_config_size_bytes(a, "cache", "size"),
			  cxs_config_size_bytes(b, "cache", "size"));
	ck_assert_uint_eq(cxs_config_enum(a, "cache", "policy"),
			  cxs_config_enum(b, "cache", "policy"));
	ck_assert_str_eq(cxs_config_str(a, "cache", "name"), cxs_config_str(b, "cache", "name"));
}

/* Dumps a, loads the dump into a fresh configuration and compares every key. */
static void round_trip(const struct cxs_config *a)
{
	struct cxs_config *b = new_cfg();
	char path[32], err[CXS_CONFIG_ERR_MAX] = "";
	char *dump = cxs_config_dump(a);
	int rc;

	ck_assert_ptr_nonnull(dump);
	rc = load_text(b, dump, path, err);
	unlink(path);
	ck_assert_msg(rc == 0, "%s\n%s", err, dump);
	ck_assert_int_eq(cxs_config_check_required(b, err, sizeof(err)), 0);
	assert_same_values(a, b);
	free(dump);
	cxs_config_free(b);
}

START_TEST(dump_round_trip)
{
	struct cxs_config *cfg = new_cfg();
	char path[32], err[CXS_CONFIG_ERR_MAX] = "", want[96];
	char *dump;

	ck_assert_int_eq(load_text(cfg,
				   "[types]\n"
				   "u = 4k\n"
				   "i = -0x10\n"
				   "d = 0.1\n"
				   "b = yes\n"
				   "t = 2.5ms\n"
				   "s = 48KiB\n"
				   "e = none\n"
				   "str = some text; with a semicolon\n"
				   "[engine]\n"
				   "end_time = 5ms\n"
				   "lookahead = 100000ps\n",
				   path, err),
			 0);
	set_ok(cfg, "cache.size=1048576");
	set_ok(cfg, "engine.ratio=0.3333333333333333");
	dump = cxs_config_dump(cfg);
	ck_assert_ptr_nonnull(dump);
	/* canonical forms, the largest exact unit, and where each value came from */
	snprintf(want, sizeof(want), "\nlookahead = 100ns ; from %s:12\n", path);
	ck_assert_msg(strstr(dump, want) != NULL, "%s", dump);
	snprintf(want, sizeof(want), "\nt = 2500us ; from %s:6\n", path);
	ck_assert_msg(strstr(dump, want) != NULL, "%s", dump);
	snprintf(want, sizeof(want), "\nu = 4000 ; from %s:2\n", path);
	ck_assert_msg(strstr(dump, want) != NULL, "%s", dump);
	ck_assert_msg(strstr(dump, "\nsize = 1MiB ; from --set\n") != NULL, "%s", dump);
	ck_assert_msg(strstr(dump, "\nseed = 42\n") != NULL, "%s", dump);
	ck_assert_msg(strstr(dump, "\ns = 48KiB ; from") != NULL, "%s", dump);
	ck_assert_msg(strstr(dump, "\nd = 0.1 ; from") != NULL, "%s", dump);
	ck_assert_msg(strstr(dump, "\nverbose = false\n") != NULL, "%s", dump);
	ck_assert_msg(strstr(dump, "\nname = l1\n") != NULL, "%s", dump);
	/* sections in registration order */
	ck_assert_ptr_nonnull(strstr(dump, "[types]"));
	ck_assert(strstr(dump, "[types]") < strstr(dump, "[engine]"));
	ck_assert(strstr(dump, "[engine]") < strstr(dump, "[cache]"));
	free(dump);
	round_trip(cfg);
	unlink(path);
	cxs_config_free(cfg);
}
END_TEST

START_TEST(dump_round_trip_extremes)
{
	struct cxs_config *cfg = new_cfg();
	char a[300], v[200];

	set_ok(cfg, "engine.end_time=18446744073709551615");
	set_ok(cfg, "types.u=18446744073709551615");
	set_ok(cfg, "types.i=-9223372036854775808");
	set_ok(cfg, "types.d=-1.2345678901234567e-300");
	set_ok(cfg, "types.t=0");
	set_ok(cfg, "types.s=17179869183GiB");
	/* a string so long that "str = value" would not fit in a line; "str=value" does */
	memset(v, 'q', 193);
	v[193] = '\0';
	snprintf(a, sizeof(a), "types.str=%s", v);
	set_ok(cfg, a);
	round_trip(cfg);
	set_ok(cfg, "types.d=-0.0");
	set_ok(cfg, "types.s=1025");
	round_trip(cfg);
	cxs_config_free(cfg);
}
END_TEST

START_TEST(dump_unset_required_is_comment)
{
	struct cxs_config *cfg = new_cfg();
	char *dump = cxs_config_dump(cfg);

	ck_assert_ptr_nonnull(dump);
	ck_assert_msg(strstr(dump, "\nstr =\n") != NULL, "%s", dump);
	ck_assert_msg(strstr(dump, "\n; end_time is required and was never set\n") != NULL, "%s",
		      dump);
	free(dump);
	cxs_config_free(cfg);
}
END_TEST

/* ---- help --------------------------------------------------------------- */

/* Column where the type word starts on the help line of key. */
static long type_column(const char *help, const char *key, const char *type)
{
	char needle[64];
	const char *line, *t;

	snprintf(needle, sizeof(needle), "\n  %s ", key);
	line = strstr(help, needle);
	ck_assert_msg(line != NULL, "no line for %s in\n%s", key, help);
	t = strstr(line + 1, type);
	ck_assert_ptr_nonnull(t);
	return t - (line + 1);
}

START_TEST(help_lists_keys)
{
	struct cxs_config *cfg = new_cfg();
	char *help = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&help, &len);

	ck_assert_ptr_nonnull(f);
	cxs_config_help(cfg, f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_msg(strstr(help, "[engine]\n") != NULL, "%s", help);
	ck_assert_msg(strstr(help, "in [1ns, 1ms]") != NULL, "%s", help);
	ck_assert_msg(strstr(help, "one of wb|wt|none") != NULL, "%s", help);
	ck_assert_msg(strstr(help, "(required)") != NULL, "%s", help);
	ck_assert_msg(strstr(help, "100ns") != NULL, "%s", help);
	ck_assert_msg(strstr(help, "48KiB") != NULL, "%s", help);
	ck_assert_msg(strstr(help, "Seed of every random stream.") != NULL, "%s", help);
	/* the long doc is wrapped onto indented lines */
	ck_assert_msg(strstr(help, "\n      Conservative lookahead:") != NULL, "%s", help);
	/* columns line up across keys of different lengths */
	ck_assert_int_eq(type_column(help, "lookahead", "time"), type_column(help, "seed", "uint"));
	ck_assert_int_eq(type_column(help, "u", "uint"), type_column(help, "verbose", "bool"));
	/* no trailing blanks */
	ck_assert_ptr_null(strstr(help, " \n"));
	free(help);
	cxs_config_free(cfg);
}
END_TEST

Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *types = tcase_create("types");
	TCase *files = tcase_create("files");
	TCase *prec = tcase_create("precedence");
	TCase *reg = tcase_create("registration");
	TCase *dump = tcase_create("dump");
	TCase *misuse = tcase_create("misuse");

	tcase_add_test(types, uint_good);
	tcase_add_test(types, uint_bad);
	tcase_add_test(types, int_good);
	tcase_add_test(types, int_bad);
	tcase_add_test(types, double_good);
	tcase_add_test(types, double_bad);
	tcase_add_test(types, bool_words);
	tcase_add_test(types, time_units);
	tcase_add_test(types, time_bad);
	tcase_add_test(types, size_units);
	tcase_add_test(types, enum_choices);
	tcase_add_test(types, string_values);
	tcase_add_test(types, ranges);
	tcase_add_test(types, range_in_file_names_line);
	suite_add_tcase(s, types);

	tcase_add_test(files, unknown_section);
	tcase_add_test(files, unknown_key_suggests);
	tcase_add_test(files, syntax_errors);
	tcase_add_test(files, long_line);
	tcase_add_test(files, comments_and_layout);
	tcase_add_test(files, missing_file);
	tcase_add_test(files, nul_and_cr_refused);
	tcase_add_test(files, crlf_accepted);
	tcase_add_test(files, devices_refused);
	tcase_add_test(files, fifo_with_writer_read);
	tcase_add_test(files, utf8_values_and_messages);
	suite_add_tcase(s, files);

	tcase_add_test(prec, override_and_origin);
	tcase_add_test(prec, set_errors);
	tcase_add_test(prec, failed_set_keeps_value);
	tcase_add_test(prec, required_key);
	suite_add_tcase(s, prec);

	tcase_add_test(reg, register_checks);
	tcase_add_test(reg, register_twice);
	suite_add_tcase(s, reg);

	tcase_add_test(dump, dump_round_trip);
	tcase_add_test(dump, dump_round_trip_extremes);
	tcase_add_test(dump, dump_unset_required_is_comment);
	tcase_add_test(dump, help_lists_keys);
	suite_add_tcase(s, dump);

	tcase_add_test_raise_signal(misuse, required_unset_getter_aborts, SIGABRT);
	tcase_add_test_raise_signal(misuse, wrong_type_aborts, SIGABRT);
	tcase_add_test_raise_signal(misuse, unregistered_aborts, SIGABRT);
	tcase_add_test_raise_signal(misuse, enum_read_as_string_aborts, SIGABRT);
	suite_add_tcase(s, misuse);
	return s;
}
