/*
 * main.c — the `cxlsim` command line.
 *
 * A run is four steps, one function each:
 *
 *   parse      options, then configuration files and --set assignments
 *   validate   cross-key checks; fills struct cxs_engine_config
 *   run        cxs_engine_new + cxs_engine_run; the output callback writes HDF5
 *   summarise  a few lines on stdout, from the rank that wrote the file
 *
 * Every rank parses the same arguments and the same files, so every rank
 * normally reaches the same verdict by itself. It may not: a configuration
 * file can be readable on one host and missing on another. So after parse and
 * validate the ranks meet (agree_start, src/engine/startup.c): each sends
 * every other its verdict and a hash of its configuration; the lowest failing
 * rank's message is printed once, as one line "cxlsim: ...", and every rank
 * returns EXIT_USAGE through MPI_Finalize; a configuration that differs
 * between hosts (no error locally, yet nodes would disagree) is refused the
 * same way. The meeting has a bound (CXLSIM_STARTUP_TIMEOUT): a rank that
 * died before it is named and every other stops with status 69, instead of
 * all waiting in a collective for ever. No rank can hang on a user's mistake
 * or on a peer that never came.
 *
 * Shortcut options (--model, --output, --seed, --end) are --set assignments
 * in disguise, applied in command-line order with the real ones after all
 * files, so the last word wins and the configuration dumped into the output
 * file records them. -v is not an assignment: it only ever raises the log
 * level above output.log_level, never lowers it.
 *
 * After cxs_engine_run no collective is made: ranks may have died, and the
 * engine has already gathered what is needed on the writer rank.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app_config_priv.h"
#include "cxlsim/errmsg.h"
#include "cxlsim/config.h"
#include "cxlsim/engine.h"
#include "cxlsim/h5out.h"
#include "cxlsim/kthread.h"
#include "cxlsim/model.h"
#include "cxlsim/phold.h"
#include "cxlsim/publish.h"
#include "cxlsim/startup.h"
#include "cxlsim/utf8.h"
#include "lifecycle_priv.h"
#include "mem_estimate_priv.h"
#include "rank_map_priv.h"

#ifndef CXLSIM_VERSION
#define CXLSIM_VERSION "unknown"
#endif

#define EXIT_USAGE 2      /* the user's mistake: bad option, key, file, value */
#define ERR_MAX CXS_CONFIG_ERR_MAX

enum action { ACT_RUN, ACT_HELP, ACT_HELP_CONFIG, ACT_VERSION, ACT_LIST_KERNELS };

/* One "section.key=value", and the option that produced it (for messages). */
struct assignment {
	const char *opt;
	char *text;
};

/* A --kill or --fail before validation: the node, the time, and the argument as typed. */
struct kill_arg {
	uint32_t node;
	cxs_time time;
	const char *arg;
	bool fail_only; /* --fail */
};

struct options {
	enum action action;
	const char **configs;       /* files, in order */
	size_t nconfigs;
	struct assignment *sets;    /* --set and shortcuts, in order */
	size_t nsets;
	struct kill_arg kills[CXS_MAX_KILLS];
	size_t nkills;
	bool quiet;
	int verbose;                /* number of -v */
};

struct app {
	int rank, nranks;
	struct options opt;
	char *command_line;
	struct cxs_config *cfg;
	struct cxs_config *scratch; /* parses --kill times as the config parses times */
	const struct cxs_model *model;
	struct cxs_model_run run;   /* what the model's configure built (run.ctx: its instance) */
	struct cxs_engine_config ecfg;
	uint32_t *rank_map;         /* mapping = balanced or explicit */
	const char *output_path;
	bool write_failed;          /* the output callback failed on this rank */
	size_t nfailures;           /* ranks' nodes lost during the run */
	bool peers_lost;            /* some rank never arrived at the start */
	uint64_t rss_before;        /* resident bytes before validate (mem_estimate.c) */
	char write_err[ERR_MAX];
};

static const char usage_text[] =
	"usage: cxlsim [options] [CONFIG.ini ...]\n"
	"\n"
	"Simulates the configured cluster, one or more nodes per MPI rank, and writes\n"
	"one HDF5 file. Run it under mpirun (mpirun -np 4 cxlsim ...); without mpirun\n"
	"it runs every node in one process. Configuration files are read in order,\n"
	"then the options below in command-line order, the last assignment winning.\n"
	"\n"
	"options:\n"
	"  --set SECTION.KEY=VALUE  set one configuration key (repeatable);\n"
	"                           see --help-config for every key\n"
	"  --model NAME             the model every node runs, = --set engine.model=NAME;\n"
	"                           phold (the engine benchmark), memsys (the CXL\n"
	"                           memory system with the random coherence tester)\n"
	"                           or axle (offloading to CXL computational memory)\n"
	"  --kill NODE@TIME         kill the rank hosting NODE at the first window\n"
	"                           boundary at or after simulated TIME (a time such as\n"
	"                           2ms or 150ns; a bare number is ps); repeatable, at\n"
	"                           most 16. Launch with mpi-configs/cxlsim-mpirun\n"
	"                           (mpirun --enable-recovery ...) so survivors go on\n"
	"  --fail NODE@TIME         NODE fail-stops at simulated TIME exactly, as under\n"
	"                           --kill, but its process lives on (also at -np 1, and\n"
	"                           for a node that shares its rank); repeatable, --kill\n"
	"                           and --fail together at most 16\n"
	"  -o, --output PATH        HDF5 output file, = --set output.file=PATH\n"
	"  --seed N                 run seed, = --set engine.seed=N\n"
	"  --end TIME               simulated end time, = --set engine.end_time=TIME\n"
	"  --snapshot-at TIME       memory system: every node writes its part of the coherent\n"
	"                           image of CXL memory at TIME, = --set image.snapshot_at=TIME\n"
	"                           (analysis/cxlsim-imagediff compares images)\n"
	"  -q, --quiet              no progress line\n"
	"  -v, --verbose            log at level info; -vv (or twice) at level debug\n"
	"  --help-config            list every configuration key, its type, default and\n"
	"                           meaning, and exit\n"
	"  --list-kernels           list the built-in workloads (workload.kernel) and exit\n"
	"  --version                print the version and exit\n"
	"  -h, --help               print this help and exit\n"
	"  --                       the remaining arguments are configuration files\n"
	"\n"
	"Options taking a value accept --opt VALUE and --opt=VALUE (-o PATH, -oPATH).\n"
	"\n"
	"PHOLD, ROSS's benchmark: mean and lookahead are in units of 1 us, so ROSS's\n"
	"--mean=1 --lookahead=0.1 --end=5000 is cxlsim's default:\n"
	"  mpirun -np 4 cxlsim --set phold.lps=1024 --set phold.remote=0.5\n"
	"\n"
	"Exit status: 0 when the run completed (also after surviving injected\n"
	"failures), 2 for a usage or configuration error, otherwise the run's status.\n";

/* ---- small helpers ---------------------------------------------------- */

/* Formats ps in the largest unit that is exact ("100ns", "5ms", "0ps"). */
static void format_ps(cxs_time ps, char *buf, size_t n)
{
	static const struct {
		const char *name;
		uint64_t ps;
	} units[] = { { "s", CXS_PS_PER_S }, { "ms", CXS_PS_PER_MS }, { "us", CXS_PS_PER_US },
		      { "ns", CXS_PS_PER_NS } };

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (ps != 0 && ps % units[i].ps == 0) {
			snprintf(buf, n, "%llu%s", (unsigned long long)(ps / units[i].ps),
				 units[i].name);
			return;
		}
	}
	snprintf(buf, n, "%llups", (unsigned long long)ps);
}

/* Whether a shell would take arg as one word unquoted. */
static bool shell_safe(const char *arg)
{
	static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				   "0123456789_-+=.,/:@%^";

	return arg[0] != '\0' && strspn(arg, safe) == strlen(arg);
}

/*
 * argv joined with blanks, each argument that a shell would split or expand
 * single-quoted (' written as '\''), so the line can be pasted back. The line
 * is stored as UTF-8 in the output file, so an argument that is not UTF-8
 * is stored with its stray bytes as \xNN (that one cannot be pasted back).
 */
static char *join_command_line(int argc, char **argv)
{
	size_t len = 1;
	char *s, *p;

	for (int i = 0; i < argc; i++)
		len += 4 * strlen(argv[i]) + 3;
	s = malloc(len);
	if (s == NULL)
		return NULL;
	p = s;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		char *shown = NULL;

		if (!cxs_utf8_valid(a)) {
			size_t n = 4 * strlen(a) + 1;

			shown = malloc(n);
			if (shown == NULL) {
				free(s);
				return NULL;
			}
			a = cxs_utf8_printable(shown, n, a);
		}
		if (i > 0)
			*p++ = ' ';
		if (shell_safe(a)) {
			p = stpcpy(p, a);
			free(shown);
			continue;
		}
		*p++ = '\'';
		for (; *a != '\0'; a++) {
			if (*a == '\'')
				p = stpcpy(p, "'\\''");
			else
				*p++ = *a;
		}
		*p++ = '\'';
		free(shown);
	}
	*p = '\0';
	return s;
}

/* Adds the assignment "key=value" made by option opt. */
static int add_set(struct options *o, const char *opt, const char *key, const char *value,
		   char *err, size_t errlen)
{
	size_t n = strlen(key) + 1 + strlen(value) + 1;
	char *text = malloc(n);

	if (text == NULL) {
		cxs_set_err(err, errlen, "%s: out of memory", opt);
		return -1;
	}
	snprintf(text, n, "%s%s%s", key, key[0] != '\0' ? "=" : "", value);
	o->sets[o->nsets].opt = opt;
	o->sets[o->nsets].text = text;
	o->nsets++;
	return 0;
}

/* Parses "NODE@TIME"; the time through the scratch config, as a time key would. */
static int parse_kill(struct app *app, const char *opt, const char *arg, char *err, size_t errlen)
{
	bool fail_only = strcmp(opt, "--fail") == 0;
	static const struct cxs_cfg_key time_key = {
		.section = "kill", .key = "time", .type = CXS_CFG_TIME, .def = "0",
	};
	static const char prefix[] = "--set: kill.time: ";
	struct options *o = &app->opt;
	const char *at = strchr(arg, '@');
	char *end, *assignment;
	unsigned long long node;
	char sub[ERR_MAX];
	int rc;

	if (o->nkills == CXS_MAX_KILLS) {
		cxs_set_err(err, errlen, "%s %s: at most %d kills and fails per run", opt, arg,
			    CXS_MAX_KILLS);
		return -1;
	}
	if (at == NULL || arg[0] < '0' || arg[0] > '9') {
		cxs_set_err(err, errlen, "%s: expected NODE@TIME such as 3@2ms, got \"%s\"", opt, arg);
		return -1;
	}
	node = strtoull(arg, &end, 10);
	if (end != at || node >= UINT32_MAX) {
		cxs_set_err(err, errlen, "%s: expected NODE@TIME such as 3@2ms, got \"%s\"", opt, arg);
		return -1;
	}
	if (app->scratch == NULL) {
		app->scratch = cxs_config_new();
		if (app->scratch == NULL ||
		    cxs_config_register(app->scratch, &time_key, 1, sub, sizeof(sub)) != 0) {
			cxs_set_err(err, errlen, "%s: out of memory", opt);
			return -1;
		}
	}
	assignment = malloc(strlen("kill.time=") + strlen(at + 1) + 1);
	if (assignment == NULL) {
		cxs_set_err(err, errlen, "%s: out of memory", opt);
		return -1;
	}
	strcpy(stpcpy(assignment, "kill.time="), at + 1);
	rc = cxs_config_set(app->scratch, assignment, sub, sizeof(sub));
	free(assignment);
	if (rc != 0) {
		const char *what = strncmp(sub, prefix, strlen(prefix)) == 0 ? sub + strlen(prefix)
									   : sub;

		cxs_set_err(err, errlen, "%s %s: %s", opt, arg, what);
		return -1;
	}
	o->kills[o->nkills].fail_only = fail_only;
	o->kills[o->nkills].node = (uint32_t)node;
	o->kills[o->nkills].time = cxs_config_time_ps(app->scratch, "kill", "time");
	o->kills[o->nkills].arg = arg;
	o->nkills++;
	return 0;
}

/* ---- parse ------------------------------------------------------------ */

/*
 * The long options that take a value, and the key each assigns: "" for --set
 * (the value is the assignment), NULL for --kill (handled apart).
 */
static const struct {
	const char *name;
	const char *key;
} valued[] = {
	{ "--set", "" },
	{ "--model", "engine.model" },
	{ "--output", "output.file" },
	{ "--seed", "engine.seed" },
	{ "--end", "engine.end_time" },
	{ "--snapshot-at", "image.snapshot_at" },
	{ "--kill", NULL },
	{ "--fail", NULL },
};

/* Whether the first len characters of a are an option without a value. */
static bool is_flag(const char *a, size_t len)
{
	static const char *const flags[] = { "--help", "--help-config", "--version", "--quiet",
					     "--verbose", "--list-kernels" };

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		if (strlen(flags[i]) == len && strncmp(a, flags[i], len) == 0)
			return true;
	}
	return false;
}

/* The first information option given is the one acted on. */
static void set_action(struct options *o, enum action a)
{
	if (o->action == ACT_RUN)
		o->action = a;
}

static int parse_args(struct app *app, int argc, char **argv, char *err, size_t errlen)
{
	struct options *o = &app->opt;
	bool only_files = false;

	o->configs = calloc((size_t)argc + 1, sizeof(*o->configs));
	o->sets = calloc((size_t)argc + 1, sizeof(*o->sets));
	if (o->configs == NULL || o->sets == NULL) {
		cxs_set_err(err, errlen, "out of memory");
		return -1;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *value = NULL, *name = NULL, *key = NULL;
		size_t k;

		if (only_files || a[0] != '-' || strcmp(a, "-") == 0) {
			o->configs[o->nconfigs++] = a;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			only_files = true;
			continue;
		}
		/* An information option wins over a run, but the rest of the line is
		 * still checked: "--help-config --bogus" is a mistake, not help. */
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			set_action(o, ACT_HELP);
			continue;
		}
		if (strcmp(a, "--help-config") == 0) {
			set_action(o, ACT_HELP_CONFIG);
			continue;
		}
		if (strcmp(a, "--version") == 0) {
			set_action(o, ACT_VERSION);
			continue;
		}
		if (strcmp(a, "--list-kernels") == 0) {
			set_action(o, ACT_LIST_KERNELS);
			continue;
		}
		if (strcmp(a, "--quiet") == 0) {
			o->quiet = true;
			continue;
		}
		if (strcmp(a, "--verbose") == 0) {
			o->verbose++;
			continue;
		}
		if (a[1] != '-') { /* a cluster of short options: -q, -v, -vv, -o PATH */
			for (const char *c = a + 1; *c != '\0' && name == NULL; c++) {
				if (*c == 'q') {
					o->quiet = true;
				} else if (*c == 'v') {
					o->verbose++;
				} else if (*c == 'h') {
					set_action(o, ACT_HELP);
				} else if (*c == 'o') {
					name = "--output";
					key = "output.file";
					value = c[1] != '\0' ? c + 1 : NULL;
				} else {
					cxs_set_err(err, errlen,
						 "unknown option -%c in \"%s\" (see cxlsim --help)", *c,
						 a);
					return -1;
				}
			}
			if (name == NULL)
				continue;
		} else {
			size_t len = strcspn(a, "=");

			for (k = 0; k < sizeof(valued) / sizeof(valued[0]); k++) {
				if (strlen(valued[k].name) == len && strncmp(a, valued[k].name, len) == 0)
					break;
			}
			if (k == sizeof(valued) / sizeof(valued[0])) {
				bool flag = a[len] == '=' && is_flag(a, len);

				cxs_set_err(err, errlen, "%s %.*s%s (see cxlsim --help)",
					 flag ? "option" : "unknown option", (int)len, a,
					 flag ? " takes no value" : "");
				return -1;
			}
			name = valued[k].name;
			key = valued[k].key;
			value = a[len] == '=' ? a + len + 1 : NULL;
		}
		if (value == NULL) {
			if (i + 1 == argc) {
				cxs_set_err(err, errlen, "option %s needs a value (see cxlsim --help)", name);
				return -1;
			}
			value = argv[++i];
		}
		if (key == NULL) {
			if (parse_kill(app, name, value, err, errlen) != 0)
				return -1;
		} else if (add_set(o, name, key, value, err, errlen) != 0) {
			return -1;
		}
	}
	return 0;
}

/*
 * Applies one assignment. A shortcut's message names the option the user
 * typed ("--seed: engine.seed: ...") rather than the --set it stands for.
 */
static int apply_set(struct cxs_config *cfg, const struct assignment *s, char *err, size_t errlen)
{
	static const char prefix[] = "--set: ";
	char sub[ERR_MAX];

	if (cxs_config_set(cfg, s->text, sub, sizeof(sub)) == 0)
		return 0;
	if (strcmp(s->opt, "--set") != 0 && strncmp(sub, prefix, strlen(prefix)) == 0)
		cxs_set_err(err, errlen, "%s: %s", s->opt, sub + strlen(prefix));
	else
		cxs_set_err(err, errlen, "%s", sub);
	return -1;
}

/* Options, then (for a run) files and assignments. Keys are registered for --help-config too. */
static int parse(struct app *app, int argc, char **argv, char *err, size_t errlen)
{
	struct options *o = &app->opt;

	if (parse_args(app, argc, argv, err, errlen) != 0)
		return -1;
	app->command_line = join_command_line(argc, argv);
	app->cfg = cxs_config_new();
	if (app->command_line == NULL || app->cfg == NULL) {
		cxs_set_err(err, errlen, "out of memory");
		return -1;
	}
	if (cxs_config_register(app->cfg, cxs_app_keys, cxs_app_nkeys, err, errlen) != 0)
		return -1;
	/* Every model's keys, so that --help-config lists them all and any file reads. */
	for (size_t m = 0; cxs_models[m] != NULL; m++) {
		for (const struct cxs_key_table *const *t = cxs_models[m]->keys; *t != NULL; t++) {
			if (cxs_config_register(app->cfg, (*t)->keys, (*t)->n, err, errlen) != 0)
				return -1;
		}
	}
	if (o->action != ACT_RUN)
		return 0;
	for (size_t i = 0; i < o->nconfigs; i++) {
		if (cxs_config_load(app->cfg, o->configs[i], err, errlen) != 0)
			return -1;
	}
	for (size_t i = 0; i < o->nsets; i++) {
		if (apply_set(app->cfg, &o->sets[i], err, errlen) != 0)
			return -1;
	}
	return cxs_config_check_required(app->cfg, err, errlen);
}

/* ---- validate --------------------------------------------------------- */

/*
 * engine.lookahead against the model's (the key section.key holds it), and
 * engine.end_time against the result.
 */
static int check_times(struct app *app, cxs_time model_lookahead, const char *section,
		       const char *key, char *err, size_t errlen)
{
	const struct cxs_config *cfg = app->cfg;
	struct cxs_engine_config *e = &app->ecfg;
	cxs_time lookahead = cxs_config_time_ps(cfg, "engine", "lookahead");
	char a[32], b[32];

	if (lookahead != 0 && lookahead != model_lookahead) {
		format_ps(lookahead, a, sizeof(a));
		format_ps(model_lookahead, b, sizeof(b));
		cxs_set_err(err, errlen,
			 "%s: engine.lookahead: %s differs from %s.%s = %s (from %s), the model's "
			 "minimum delay; leave engine.lookahead at 0 to take the model's",
			 cxs_config_origin(cfg, "engine", "lookahead"), a, section, key, b,
			 cxs_config_origin(cfg, section, key));
		return -1;
	}
	e->lookahead = model_lookahead;
	e->end_time = cxs_config_time_ps(cfg, "engine", "end_time");
	if (e->end_time == 0)
		e->end_time = app->run.end_time;
	if (e->end_time <= e->lookahead) {
		format_ps(e->end_time, a, sizeof(a));
		format_ps(e->lookahead, b, sizeof(b));
		cxs_set_err(err, errlen, "%s: engine.end_time: %s must exceed the lookahead, %s",
			 cxs_config_origin(cfg, "engine", "end_time"), a, b);
		return -1;
	}
	return 0;
}

/* Node types of a memory-system CN weigh this much per core (rank_map.c, "Balanced maps"). */
#define CN_WEIGHT_PER_CORE 2.0
#define MAX_NODE_TYPES 16

/*
 * engine.mapping = balanced: each node weighs its type's weight (a CN 2 per
 * core, anything else 1, engine.weights overriding) and rank_map.c spreads
 * the weights. Types are told apart by their node type's name.
 */
static int balanced_map(struct app *app, char *err, size_t errlen)
{
	const struct cxs_config *cfg = app->cfg;
	struct cxs_engine_config *e = &app->ecfg;
	const char *names[MAX_NODE_TYPES];
	double tw[MAX_NODE_TYPES];
	uint32_t ntypes = 0, *kind = NULL;
	double *w = NULL;
	char sub[ERR_MAX];
	int rc = -1;

	kind = malloc((size_t)e->nnodes * sizeof(*kind));
	w = malloc((size_t)e->nnodes * sizeof(*w));
	if (kind == NULL || w == NULL) {
		cxs_set_err(err, errlen, "engine.mapping: out of memory for %u nodes", e->nnodes);
		goto out;
	}
	for (uint32_t n = 0; n < e->nnodes; n++) {
		const char *name = e->type_of(n, e->type_ctx)->name;
		uint32_t k = 0;

		while (k < ntypes && strcmp(names[k], name) != 0)
			k++;
		if (k == ntypes) {
			if (ntypes == MAX_NODE_TYPES) {
				cxs_set_err(err, errlen, "engine.mapping: the model has more than %d node "
					    "types; use block, round_robin or explicit", MAX_NODE_TYPES);
				goto out;
			}
			names[ntypes] = name;
			tw[ntypes++] = strcmp(app->model->name, "memsys") == 0 && strcmp(name, "cn") == 0
					       ? CN_WEIGHT_PER_CORE *
							 (double)cxs_config_uint(cfg, "system", "cores_per_cn")
					       : 1.0;
		}
		kind[n] = k;
	}
	if (cxs_parse_weights(cxs_config_str(cfg, "engine", "weights"), names, ntypes, tw, sub,
			      sizeof(sub)) != 0) {
		cxs_set_err(err, errlen, "%s: %s", cxs_config_origin(cfg, "engine", "weights"), sub);
		goto out;
	}
	for (uint32_t n = 0; n < e->nnodes; n++)
		w[n] = tw[kind[n]];
	if (cxs_balanced_rank_map(w, kind, ntypes, e->nnodes, (uint32_t)app->nranks,
				  app->rank_map) != 0) {
		cxs_set_err(err, errlen, "engine.mapping: out of memory for %u nodes", e->nnodes);
		goto out;
	}
	rc = 0;
out:
	free(kind);
	free(w);
	return rc;
}

/* engine.mapping, engine.map and engine.weights. */
static int check_mapping(struct app *app, char *err, size_t errlen)
{
	const struct cxs_config *cfg = app->cfg;
	struct cxs_engine_config *e = &app->ecfg;
	unsigned mapping = cxs_config_enum(cfg, "engine", "mapping");
	const char *map = cxs_config_str(cfg, "engine", "map");
	static const char *const names[] = {"block", "round_robin", "explicit", "balanced"};
	char sub[ERR_MAX];

	if (mapping != APP_MAP_EXPLICIT && map[0] != '\0') {
		cxs_set_err(err, errlen,
			 "%s: engine.map: is set, but engine.mapping is %s (from %s); set "
			 "engine.mapping = explicit to use it",
			 cxs_config_origin(cfg, "engine", "map"), names[mapping],
			 cxs_config_origin(cfg, "engine", "mapping"));
		return -1;
	}
	if (mapping != APP_MAP_BALANCED && cxs_config_str(cfg, "engine", "weights")[0] != '\0') {
		cxs_set_err(err, errlen,
			 "%s: engine.weights: is set, but engine.mapping is %s (from %s); weights "
			 "apply to engine.mapping = balanced only",
			 cxs_config_origin(cfg, "engine", "weights"), names[mapping],
			 cxs_config_origin(cfg, "engine", "mapping"));
		return -1;
	}
	e->mapping = mapping == APP_MAP_ROUND_ROBIN ? CXS_MAP_ROUND_ROBIN : CXS_MAP_BLOCK;
	if (mapping == APP_MAP_BLOCK || mapping == APP_MAP_ROUND_ROBIN)
		return 0;
	if (mapping == APP_MAP_EXPLICIT && map[0] == '\0') {
		cxs_set_err(err, errlen,
			 "%s: engine.mapping: explicit needs engine.map, the rank of each node "
			 "in node order (e.g. \"0*8 1*8\")",
			 cxs_config_origin(cfg, "engine", "mapping"));
		return -1;
	}
	app->rank_map = malloc((size_t)e->nnodes * sizeof(*app->rank_map));
	if (app->rank_map == NULL) {
		cxs_set_err(err, errlen, "engine.map: out of memory for %u nodes", e->nnodes);
		return -1;
	}
	if (mapping == APP_MAP_BALANCED) {
		if (balanced_map(app, err, errlen) != 0)
			return -1;
	} else if (cxs_parse_rank_map(map, e->nnodes, (uint32_t)app->nranks, app->rank_map, sub,
				      sizeof(sub)) != 0) {
		cxs_set_err(err, errlen, "%s: %s", cxs_config_origin(cfg, "engine", "map"), sub);
		return -1;
	}
	e->rank_map = app->rank_map; /* overrides e->mapping */
	return 0;
}

/* The rank that will host node n (engine.h, "Logical processes"). */
static uint32_t node_rank(const struct app *app, uint32_t n)
{
	const struct cxs_engine_config *e = &app->ecfg;

	if (e->rank_map != NULL)
		return e->rank_map[n];
	if (e->mapping == CXS_MAP_ROUND_ROBIN)
		return n % (uint32_t)app->nranks;
	return (uint32_t)((uint64_t)n * (uint64_t)app->nranks / e->nnodes);
}

/*
 * --kill against the run: nodes exist, times precede the end, no node twice,
 * and some rank survives to write the output. The engine gets the kills in
 * (time, node) order.
 */
static const char *kill_opt(const struct kill_arg *k)
{
	return k->fail_only ? "--fail" : "--kill";
}

static int check_kills(struct app *app, char *err, size_t errlen)
{
	const struct options *o = &app->opt;
	struct cxs_engine_config *e = &app->ecfg;
	bool *doomed = NULL;
	size_t ndoomed = 0, nrank_kills = 0;
	char a[32], b[32];
	int rc = -1;

	for (size_t i = 0; i < o->nkills; i++) {
		const struct kill_arg *k = &o->kills[i];

		if (k->node >= e->nnodes) {
			cxs_set_err(err, errlen, "%s %s: no node %u; the run has %u nodes (0..%u)",
				 kill_opt(k), k->arg, k->node, e->nnodes, e->nnodes - 1);
			goto out;
		}
		if (k->time >= e->end_time) {
			format_ps(k->time, a, sizeof(a));
			format_ps(e->end_time, b, sizeof(b));
			cxs_set_err(err, errlen,
				 "%s %s: time %s is not before engine.end_time = %s (from %s)",
				 kill_opt(k), k->arg, a, b,
				 cxs_config_origin(app->cfg, "engine", "end_time"));
			goto out;
		}
		for (size_t j = 0; j < i; j++) {
			if (o->kills[j].node == k->node) {
				cxs_set_err(err, errlen, "%s %s: node %u already fails by %s %s",
					 kill_opt(k), k->arg, k->node, kill_opt(&o->kills[j]),
					 o->kills[j].arg);
				goto out;
			}
		}
	}
	doomed = calloc((size_t)app->nranks, sizeof(*doomed));
	if (doomed == NULL) {
		cxs_set_err(err, errlen, "--kill: out of memory");
		goto out;
	}
	for (size_t i = 0; i < o->nkills; i++) {
		uint32_t r = node_rank(app, o->kills[i].node);

		if (o->kills[i].fail_only)
			continue; /* its rank lives on */
		nrank_kills++;
		ndoomed += !doomed[r];
		doomed[r] = true;
	}
	if (nrank_kills > 0 && ndoomed == (size_t)app->nranks) {
		cxs_set_err(err, errlen,
			 "--kill: the killed nodes live on all %d rank%s; at least one rank must "
			 "survive to write the output (--fail NODE@TIME fails a node without its rank)",
			 app->nranks, app->nranks == 1 ? "" : "s");
		goto out;
	}
	/* insertion sort by (time, node): at most CXS_MAX_KILLS entries */
	e->nkills = 0;
	for (size_t i = 0; i < o->nkills; i++) {
		struct cxs_kill k = { .node = o->kills[i].node, .time = o->kills[i].time,
				      .fail_only = o->kills[i].fail_only };
		size_t j = e->nkills;

		while (j > 0 && (e->kills[j - 1].time > k.time ||
				 (e->kills[j - 1].time == k.time && e->kills[j - 1].node > k.node))) {
			e->kills[j] = e->kills[j - 1];
			j--;
		}
		e->kills[j] = k;
		e->nkills++;
	}
	rc = 0;
out:
	free(doomed);
	return rc;
}

/*
 * Rank 0 will write the output unless it dies: find out now, not after the
 * run, that the file cannot be put there — the path is a directory or a
 * device, or its directory takes no new file (cxs_publish_check creates the
 * temporary file and removes it, which access(2) cannot stand in for: root
 * may "write" to /proc).
 */
static int check_output(struct app *app, char *err, size_t errlen)
{
	const char *path = cxs_config_str(app->cfg, "output", "file");
	char sub[ERR_MAX];

	app->output_path = path;
	if (path[0] == '\0') {
		cxs_set_err(err, errlen, "%s: output.file: must not be empty",
			 cxs_config_origin(app->cfg, "output", "file"));
		return -1;
	}
	if (app->rank != 0)
		return 0;
	if (cxs_publish_check(path, sub, sizeof(sub)) != 0) {
		cxs_set_err(err, errlen, "%s: output.file: %s",
			 cxs_config_origin(app->cfg, "output", "file"), sub);
		return -1;
	}
	return 0;
}

/*
 * The run's memory estimate (mem_estimate.c) against this host and this
 * process's limits, once the model is configured: what configure built is
 * measured (resident size now, less before validate), the rest estimated.
 */
static int check_memory(struct app *app, char *err, size_t errlen)
{
	const struct cxs_engine_config *e = &app->ecfg;
	struct mem_estimate m;
	struct mem_host h;
	uint32_t nlocal = 0;
	uint64_t configured;

	mem_host_probe(&h, app->nranks);
	configured = h.rss_bytes > app->rss_before ? h.rss_bytes - app->rss_before : 0;
	if (app->model == &cxs_phold_model)
		mem_estimate_phold(app->run.ctx, &m);
	else if (strcmp(app->model->name, "memsys") == 0)
		mem_estimate_memsys(app->cfg, e->nnodes, configured, &m);
	else if (strcmp(app->model->name, "axle") == 0)
		mem_estimate_axle(e->nnodes, configured, &m);
	else
		return 0;
	for (uint32_t n = 0; n < e->nnodes; n++)
		nlocal += node_rank(app, n) == (uint32_t)app->rank;
	if (app->rank == 0 && cxs_log_level >= CXS_LOG_INFO) {
		char f[MEM_NPARTS][32], rss[32];
		for (int i = 0; i < MEM_NPARTS; i++)
			mem_format(m.part[i], f[i], sizeof(f[i]));
		mem_format(h.rss_bytes, rss, sizeof(rss));
		cxs_log(CXS_LOG_INFO, 0,
			"memory estimate: nodes %s, events %s, caches %s, memory %s, output %s; "
			"in use now %s per rank, %u rank(s) on this host",
			f[MEM_NODES], f[MEM_EVENTS], f[MEM_CACHES], f[MEM_MEMORY], f[MEM_OUTPUT], rss,
			h.local_ranks);
	}
	if (!cxs_config_bool(app->cfg, "engine", "memory_check"))
		return 0;
	return mem_check(&m, &h, e->nnodes, nlocal, err, errlen);
}

/* Cross-key checks, then every field of the engine's configuration. */
static int validate(struct app *app, char *err, size_t errlen)
{
	const struct cxs_config *cfg = app->cfg;
	struct cxs_engine_config *e = &app->ecfg;
	int level = (int)cxs_config_enum(cfg, "output", "log_level");

	app->model = cxs_models[cxs_config_enum(cfg, "engine", "model")];
	if (app->model->configure(cfg, &app->run, err, errlen) != 0) {
		app->run.ctx = NULL; /* configure released what it had built */
		return -1;
	}
	e->model = app->model->name;
	e->nnodes = app->run.nnodes;
	e->type_of = app->run.type_of;
	e->type_ctx = app->run.ctx;
	if (check_times(app, app->run.lookahead, app->run.lookahead_section, app->run.lookahead_key,
			err, errlen) != 0)
		return -1;
	if (check_mapping(app, err, errlen) != 0 || check_kills(app, err, errlen) != 0 ||
	    check_output(app, err, errlen) != 0 || app_sampling_configure(cfg, e, err, errlen) != 0)
		return -1;
	e->seed = cxs_config_uint(cfg, "engine", "seed");
	e->failure_timeout_s = cxs_config_double(cfg, "engine", "failure_timeout");
	e->sync = cxs_config_enum(cfg, "engine", "sync") == 1 ? CXS_SYNC_ASYNC : CXS_SYNC_WINDOWS;
	e->progress_interval_s = cxs_config_double(cfg, "engine", "progress_interval");
	e->quiet = app->opt.quiet;

	/* -v raises the configured level, never lowers it */
	if (level < CXS_LOG_WARN + app->opt.verbose)
		level = CXS_LOG_WARN + app->opt.verbose;
	cxs_log_level = level < CXS_LOG_DEBUG ? level : CXS_LOG_DEBUG;
	return check_memory(app, err, errlen);
}

/*
 * "cxlsim: MSG" on stderr as one line of valid UTF-8: a line break becomes a
 * blank, and bytes a user typed that are not UTF-8, or control characters,
 * become \xNN (utf8.h), whichever code made the message.
 */
static void print_error_line_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void print_error_line(const char *msg)
{
	print_error_line_fmt("%s", msg);
}

static void print_error_line_fmt(const char *fmt, ...)
{
	char line[4 * ERR_MAX], flat[ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(flat, sizeof(flat), fmt, ap);
	va_end(ap);
	for (char *p = flat; *p != '\0'; p++) {
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	}
	fprintf(stderr, "cxlsim: %s\n", cxs_utf8_printable(line, sizeof(line), flat));
}

/* Prints a user's error as one line on rank 0; every rank exits with EXIT_USAGE. */
static int report(const struct app *app, char *err)
{
	if (app->rank == 0)
		print_error_line(err[0] != '\0' ? err : "cannot start the run");
	return EXIT_USAGE;
}

/* ---- agreement before the run ------------------------------------------ */

/*
 * A 64-bit FNV-1a hash of the action and cxs_config_dump: ranks can end up
 * with different configurations without any error (a file that is not the
 * same on every host, or a configuration piped to stdin, which mpirun gives
 * to rank 0 alone), and the engine would then run nodes that disagree on the
 * model. 0 when there is nothing to compare (a failed parse, out of memory).
 */
static uint64_t config_hash(const struct app *app)
{
	char *dump = app->cfg != NULL ? cxs_config_dump(app->cfg) : NULL;
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	h = (h ^ (uint64_t)app->opt.action) * UINT64_C(0x100000001b3);
	for (const char *p = dump != NULL ? dump : ""; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * UINT64_C(0x100000001b3);
	if (dump == NULL)
		h = 0;
	free(dump);
	return h;
}

/*
 * Every rank brings its verdict and meets the others, within the start-up
 * bound (startup.h: no collective, so a rank that died before the run costs
 * the bound, never a hang). Returns 0 when the run may go on; otherwise the
 * status to exit with, err holding the message for the rank that speaks.
 */
static int agree_start(struct app *app, bool failed, char *err, size_t errlen)
{
	struct cxs_startup_result r;
	double bound = cxs_startup_timeout_s();

	lifecycle_arrived(app->rank);
	cxs_startup_agree(failed, err, failed ? 0 : config_hash(app), bound, &r);
	switch (r.verdict) {
	case CXS_START_OK:
		return 0;
	case CXS_START_FAILED:
		if (r.rank != 0)
			cxs_set_err(err, errlen, "%s (on rank %d)", r.msg, r.rank);
		else
			cxs_set_err(err, errlen, "%s", r.msg);
		break;
	case CXS_START_DIFFERS:
		cxs_set_err(err, errlen,
			 "the configuration on rank %d differs from rank 0's: are the files the same "
			 "on every host? (mpirun passes stdin to rank 0 only)", r.rank);
		break;
	case CXS_START_MISSING:
		app->peers_lost = true;
		if (r.speaker)
			print_error_line_fmt("start-up: rank(s) %s did not arrive within %.0f s (killed, "
					     "or stuck before the run); every rank stops (bound: %s)",
					     r.msg, bound, CXS_STARTUP_TIMEOUT_ENV);
		return CXS_EXIT_STARTUP;
	}
	if (r.speaker)
		print_error_line(err[0] != '\0' ? err : "cannot start the run");
	return EXIT_USAGE;
}

/* --help, --help-config, --version: rank 0 prints, everyone exits 0. */
static int print_info(const struct app *app)
{
	if (app->rank != 0)
		return EXIT_SUCCESS;
	if (app->opt.action == ACT_HELP)
		fputs(usage_text, stdout);
	else if (app->opt.action == ACT_HELP_CONFIG)
		cxs_config_help(app->cfg, stdout);
	else if (app->opt.action == ACT_LIST_KERNELS)
		for (size_t i = 0; cxs_kernels[i]; i++)
			printf("%-18s size %-8" PRIu64 " %s\n", cxs_kernels[i]->name,
			       cxs_kernels[i]->default_size, cxs_kernels[i]->doc);
	else
		printf("cxlsim %s\n", CXLSIM_VERSION);
	return EXIT_SUCCESS;
}

/* ---- run --------------------------------------------------------------- */

/* The engine's output callback: adds what the application owns, writes the file. */
static int write_output(struct cxs_run_record *rec, void *ctx, char *err, size_t errlen)
{
	struct app *app = ctx;
	char *text = cxs_config_dump(app->cfg);
	int rc = -1;

	if (text == NULL) {
		cxs_set_err(err, errlen, "%s: out of memory writing the configuration",
			 app->output_path);
		goto out;
	}
	rec->cxlsim_version = CXLSIM_VERSION;
	rec->command_line = app->command_line;
	rec->config_text = text;
	rc = cxs_h5_write(app->output_path, rec, err, errlen);
	rec->config_text = NULL; /* freed below */
out:
	if (rc != 0) {
		app->write_failed = true;
		cxs_set_err(app->write_err, sizeof(app->write_err), "%s", err);
	}
	free(text);
	return rc;
}

/* ---- summarise --------------------------------------------------------- */

/* The writer's summary on stdout; returns the process exit status. */
static int summarise(const struct app *app, const struct cxs_run_result *res, int status)
{
	if (app->write_failed)
		print_error_line(app->write_err);
	if (res->writer) {
		double rate = res->loop_wall_s > 0 ? (double)res->committed / res->loop_wall_s : 0;

		printf("model       %s\n", app->ecfg.model);
		printf("nodes       %u\n", app->ecfg.nnodes);
		printf("ranks       %d\n", app->nranks);
		printf("committed   %llu events\n", (unsigned long long)res->committed);
		printf("events/s    %.4g\n", rate);
		printf("checksum    0x%016llx\n", (unsigned long long)res->checksum);
		printf("failures    %zu\n", res->nfailures);
		printf("output      %s%s\n", app->output_path,
		       app->write_failed ? " (not written)" : "");
		if (status != 0)
			printf("status      %d\n", status);
		fflush(stdout);
	}
	if (status == 0 && app->write_failed)
		return EXIT_USAGE;
	if (status < 0 || status > 255)
		return EXIT_FAILURE;
	return status;
}

/* ---- main -------------------------------------------------------------- */

static int cxlsim(struct app *app, int argc, char **argv)
{
	char err[ERR_MAX] = "";
	struct cxs_run_result res;
	struct cxs_engine *eng;
	bool failed;
	int status;

	failed = parse(app, argc, argv, err, sizeof(err)) != 0;
	if (!failed && app->opt.action == ACT_RUN) {
		struct mem_host h;

		mem_host_probe(&h, app->nranks);
		app->rss_before = h.rss_bytes;
		failed = validate(app, err, sizeof(err)) != 0;
	}
	if ((status = agree_start(app, failed, err, sizeof(err))) != 0)
		return status;
	if (app->opt.action != ACT_RUN)
		return print_info(app);

	app->ecfg.interrupt = lifecycle_catch_interrupts();
	eng = cxs_engine_new(&app->ecfg, err, sizeof(err)); /* collective: one verdict */
	if (eng == NULL)
		return report(app, err);
	memset(&res, 0, sizeof(res));
	status = cxs_engine_run(eng, &res, write_output, app);
	app->nfailures = res.nfailures;
	cxs_engine_free(eng);
	return summarise(app, &res, status);
}

static void app_free(struct app *app)
{
	for (size_t i = 0; i < app->opt.nsets; i++)
		free(app->opt.sets[i].text);
	free(app->opt.sets);
	free(app->opt.configs);
	free(app->command_line);
	free(app->rank_map);
	if (app->model != NULL && app->model->release != NULL)
		app->model->release(app->run.ctx);
	cxs_config_free(app->cfg);
	cxs_config_free(app->scratch);
}

int main(int argc, char **argv)
{
	struct app app;
	int rc;

	memset(&app, 0, sizeof(app));
	lifecycle_before_init();
	MPI_Init(&argc, &argv);
	lifecycle_after_init();
	MPI_Comm_rank(MPI_COMM_WORLD, &app.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &app.nranks);
	rc = cxlsim(&app, argc, argv);
	bool peers_lost = app.nfailures > 0 || app.peers_lost;
	app_free(&app);
	lifecycle_report_status(app.rank, rc);
	fflush(stdout);
	fflush(stderr);
	return lifecycle_finalize(rc, peers_lost);
}
