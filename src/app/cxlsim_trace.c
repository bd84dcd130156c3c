/*
 * cxlsim_trace.c — the `cxlsim-trace` command: make, read and check per-core
 * traces (the format is in include/cxlsim/trace.h).
 *
 *   cxlsim-trace from-text   IN.txt    OUT.trace [--core N] [--level L] [--block-records N]
 *   cxlsim-trace from-lackey IN.lackey OUT.trace [--core N] [--level L] [--block-records N]
 *   cxlsim-trace dump  IN.trace [--limit N]
 *   cxlsim-trace check IN.trace
 *   cxlsim-trace record [-o DIR] [--roi thread|start|request] [--roi-start FUNC]
 *                       [--follow-fork] [--level L] [--verbose] -- PROGRAM ARGS...
 *
 * record runs PROGRAM under Valgrind with the project's cxltrace tool
 * (src/vgtool; its directory is compiled in, CXLSIM_VALGRIND_LIB in the
 * environment overrides it) and writes DIR/core<N>.trace, DIR/pages.map and
 * DIR/trace.ini (trace_record.h). Its exit status is the program's.
 *
 * Options may stand anywhere after the subcommand, as "--opt N" or
 * "--opt=N". Every user error (bad arguments, a missing or damaged file, a
 * bad input line) prints one line "cxlsim-trace: ..." on stderr and exits 2;
 * success exits 0. This file only parses arguments and prints: the work is in
 * src/workload/trace.c, where the tests reach it.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxlsim/trace.h"
#include "cxlsim/trace_record.h"

#define EXIT_USAGE 2

static const char usage_text[] =
	"usage: cxlsim-trace from-text IN.txt OUT.trace [--core N] [--level 0..9]"
	" [--block-records N]\n"
	"       cxlsim-trace from-lackey IN.lackey OUT.trace [--core N] [--level 0..9]"
	" [--block-records N]\n"
	"       cxlsim-trace dump IN.trace [--limit N]\n"
	"       cxlsim-trace check IN.trace\n"
	"       cxlsim-trace record [-o DIR] [--roi thread|start|request] [--roi-start FUNC]\n"
	"                           [--follow-fork] [--level 0..9] [--verbose] -- PROGRAM ARGS...\n";

struct args {
	const char *cmd;
	const char *pos[2];
	int npos;
	uint32_t core;
	uint64_t limit;
	struct cxs_trace_writer_opts wopts;
};

static int fail(const char *msg)
{
	fprintf(stderr, "cxlsim-trace: %s\n", msg);
	return EXIT_USAGE;
}

/* Decimal only: a core number or a limit is never written in hex. */
static bool parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return false;
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (v > max)
		return false;
	*out = v;
	return true;
}

/*
 * Matches argv[*i] against --name N or --name=N and parses N; returns 1 if
 * matched, 0 if not this option, -1 (with msg) if N is missing or bad.
 */
static int option(char **argv, int argc, int *i, const char *name, uint64_t max, uint64_t *out,
		  char *msg, size_t msglen)
{
	size_t n = strlen(name);
	const char *arg = argv[*i], *val;

	if (strncmp(arg, name, n) != 0 || (arg[n] != '\0' && arg[n] != '='))
		return 0;
	if (arg[n] == '=') {
		val = arg + n + 1;
	} else if (*i + 1 < argc) {
		val = argv[++*i];
	} else {
		snprintf(msg, msglen, "%s needs a value", name);
		return -1;
	}
	if (!parse_u64(val, max, out)) {
		snprintf(msg, msglen, "%s: '%s' is not a whole number in 0..%" PRIu64, name, val,
			 max);
		return -1;
	}
	return 1;
}

/* Returns 0, or -1 with msg. Which options a subcommand takes is checked here. */
static int parse_args(int argc, char **argv, struct args *a, char *msg, size_t msglen)
{
	bool converts, dumps;
	int want;

	a->cmd = argv[1];
	converts = strcmp(a->cmd, "from-text") == 0 || strcmp(a->cmd, "from-lackey") == 0;
	dumps = strcmp(a->cmd, "dump") == 0;
	if (!converts && !dumps && strcmp(a->cmd, "check") != 0) {
		snprintf(msg, msglen, "unknown subcommand '%s' (from-text, from-lackey, dump,"
			 " check, record; --help for usage)", a->cmd);
		return -1;
	}
	want = converts ? 2 : 1;
	for (int i = 2; i < argc; i++) {
		uint64_t v;
		int rc = 0;

		if (converts && (rc = option(argv, argc, &i, "--core", UINT32_MAX, &v, msg,
					     msglen)) != 0) {
			a->core = (uint32_t)v;
		} else if (converts && (rc = option(argv, argc, &i, "--level", 9, &v, msg,
						    msglen)) != 0) {
			a->wopts.level = (int)v;
		} else if (converts && (rc = option(argv, argc, &i, "--block-records",
						    CXS_TRACE_MAX_BLOCK_RECORDS, &v, msg,
						    msglen)) != 0) {
			a->wopts.block_records = (uint32_t)v;
		} else if (dumps && (rc = option(argv, argc, &i, "--limit", UINT64_MAX, &v, msg,
						 msglen)) != 0) {
			a->limit = v;
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			snprintf(msg, msglen, "%s: unknown option '%s'", a->cmd, argv[i]);
			return -1;
		} else if (a->npos < want) {
			a->pos[a->npos++] = argv[i];
		} else {
			snprintf(msg, msglen, "%s: unexpected argument '%s'", a->cmd, argv[i]);
			return -1;
		}
		if (rc < 0)
			return -1;
	}
	if (a->npos < want) {
		snprintf(msg, msglen, "%s: needs %s", a->cmd,
			 converts ? "IN and OUT.trace" : "IN.trace");
		return -1;
	}
	return 0;
}

static int run_convert(const struct args *a, char *err, size_t errlen)
{
	struct cxs_trace_convert_stats st;
	bool lackey = strcmp(a->cmd, "from-lackey") == 0;
	int rc;

	if (lackey)
		rc = cxs_trace_from_lackey(a->pos[0], a->pos[1], a->core, &a->wopts, &st, err,
					   errlen);
	else
		rc = cxs_trace_from_text(a->pos[0], a->pos[1], a->core, &a->wopts, &st, err,
					 errlen);
	if (rc < 0)
		return -1;
	printf("%s: %" PRIu64 " records for core %" PRIu32 " from %" PRIu64 " lines of %s\n",
	       a->pos[1], st.records, a->core, st.lines, a->pos[0]);
	if (lackey)
		printf("  %" PRIu64 " instructions, %" PRIu64 " accesses, %" PRIu64 " split into"
		       " aligned pieces, %" PRIu64 " trailing instructions dropped\n",
		       st.instructions, st.accesses, st.split, st.dropped_instructions);
	return 0;
}

/* record's own argument parser: options, then "--", then the program. */
static int run_record(int argc, char **argv)
{
	struct cxs_trace_record_opts o = {.out_dir = "cxlsim-traces", .level = 1};
	struct cxs_trace_record_stats st;
	char err[CXS_TRACE_ERR_MAX], msg[CXS_TRACE_ERR_MAX];
	int i = 2;

	o.vglib = getenv("CXLSIM_VALGRIND_LIB");
#ifdef CXLSIM_VALGRIND_LIB
	if (o.vglib == NULL)
		o.vglib = CXLSIM_VALGRIND_LIB;
#endif
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *a = argv[i];
		uint64_t v;
		int rc;
		if ((strcmp(a, "-o") == 0 || strcmp(a, "--roi") == 0 ||
		     strcmp(a, "--roi-start") == 0) && i + 1 < argc) {
			const char **dst = a[1] == 'o' ? &o.out_dir : a[5] == '-' ? &o.roi_start : &o.roi;
			*dst = argv[++i];
		} else if (strcmp(a, "--verbose") == 0) {
			o.verbose = true;
		} else if (strcmp(a, "--follow-fork") == 0) {
			o.follow_fork = true;
		} else if ((rc = option(argv, argc, &i, "--level", 9, &v, msg, sizeof msg)) != 0) {
			if (rc < 0)
				return fail(msg);
			o.level = (int)v;
		} else {
			snprintf(msg, sizeof msg, "record: unknown option or missing value '%s' (the"
				 " program goes after --)", a);
			return fail(msg);
		}
	}
	if (i >= argc - 1)
		return fail("record: needs -- PROGRAM [ARGS...]");
	if (o.roi && strcmp(o.roi, "thread") != 0 && strcmp(o.roi, "start") != 0 &&
	    strcmp(o.roi, "request") != 0)
		return fail("record: --roi must be thread, start or request");
	if (o.vglib == NULL)
		return fail("record: this cxlsim-trace was built without the Valgrind tool (install"
			    " valgrind, which ships its tool headers, and rebuild)");
	if (cxs_trace_record(&o, argc - i - 1, argv + i + 1, &st, err, sizeof err) != 0)
		return fail(err);
	if (st.threads == 0)
		return fail("record: the region of interest never began (the program created no"
			    " thread; use --roi start, or --roi-start FUNC)");
	printf("%s: %" PRIu32 " threads, %" PRIu64 " records (%" PRIu64 " ld, %" PRIu64 " st, %"
	       PRIu64 " rmw, %" PRIu64 " sync), %" PRIu64 " instructions, %" PRIu64 " bytes of"
	       " traces\n", o.out_dir, st.threads, st.records, st.by_op[CXS_TRACE_LOAD],
	       st.by_op[CXS_TRACE_STORE], st.by_op[CXS_TRACE_RMW],
	       st.by_op[CXS_TRACE_LOCK] + st.by_op[CXS_TRACE_UNLOCK] + st.by_op[CXS_TRACE_BARRIER] +
	       st.by_op[CXS_TRACE_POST] + st.by_op[CXS_TRACE_WAIT], st.instructions, st.trace_bytes);
	printf("  %" PRIu64 " records with an address dependency, %" PRIu64 " with a value"
	       " dependency; %" PRIu64 " pages, %" PRIu64 " touched by more than one thread; %"
	       PRIu64 " lock acquisitions in order\n",
	       st.with_addr_dep, st.with_value_dep, st.pages, st.shared_pages, st.lock_turns);
	printf("  replay: cxlsim MACHINE.ini %s/trace.ini\n", o.out_dir);
	if (st.status != 0)
		printf("  the program exited with status %d\n", st.status);
	fflush(stdout);
	return st.status;
}

static int run_check(const struct args *a, char *err, size_t errlen)
{
	struct cxs_trace_summary s;

	if (cxs_trace_check(a->pos[0], &s, err, errlen) < 0)
		return -1;
	printf("%s: valid; core %" PRIu32 ", %" PRIu64 " records in %" PRIu64 " blocks, %" PRIu64
	       " non-memory instructions\n", a->pos[0], s.core_id, s.records, s.blocks,
	       s.gap_total);
	for (unsigned op = 1; op <= CXS_TRACE_OP_MAX; op++)
		printf("  %-8s %" PRIu64 "\n", cxs_trace_op_name(op), s.by_op[op]);
	return 0;
}

int main(int argc, char **argv)
{
	struct args a = { 0 };
	char err[CXS_TRACE_ERR_MAX];
	int rc;

	cxs_trace_writer_opts_default(&a.wopts);
	if (argc < 2) {
		fputs(usage_text, stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		fputs(usage_text, stdout);
		return EXIT_SUCCESS;
	}
	if (strcmp(argv[1], "record") == 0)
		return run_record(argc, argv);
	if (parse_args(argc, argv, &a, err, sizeof err) < 0)
		return fail(err);
	if (strcmp(a.cmd, "dump") == 0)
		rc = cxs_trace_dump(a.pos[0], stdout, a.limit, err, sizeof err);
	else if (strcmp(a.cmd, "check") == 0)
		rc = run_check(&a, err, sizeof err);
	else
		rc = run_convert(&a, err, sizeof err);
	if (rc < 0)
		return fail(err);
	if (fflush(stdout) != 0)
		return fail("cannot write to standard output");
	return EXIT_SUCCESS;
}
