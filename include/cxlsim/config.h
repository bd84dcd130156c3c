/*
 * config.h — typed, schema-checked configuration.
 *
 * Every module declares the keys it reads in a static table of struct
 * cxs_cfg_key (section, key, type, default, documentation) and registers it
 * with cxs_config_register before anything is parsed. A configuration file is
 * INI (parsed by libinih), one section per component:
 *
 *     [engine]
 *     lookahead = 100ns
 *     end_time  = 5ms
 *
 * and `--set section.key=value` overrides any key after the files are read.
 * Unknown sections, unknown keys and values that do not parse as the key's type
 * are errors whose message names the file, the line and the key, e.g.
 *
 *     inputs/x.ini:12: engine.lookahead: expected a time such as 100ns, got "fast"
 *
 * Values are typed:
 *   uint    non-negative 64-bit integer, decimal or 0x-hex, optional k/M/G (10^3..)
 *   int     signed 64-bit integer
 *   double  finite floating point number
 *   bool    true/false, yes/no, on/off, 1/0
 *   time    integer with unit ps, ns, us, ms or s (a bare number is ps); stored in ps,
 *           rejected when it is not a whole number of picoseconds or overflows
 *   size    integer with unit B, KiB, MiB, GiB (a bare number is bytes)
 *   enum    one of the words listed in `choices` ("a|b|c")
 *   string  any one-line text (limits below)
 * Keys may give a range [min, max] (for uint/int/double/time/size); 0/0 means none.
 * Time bounds are in ps and size bounds in bytes.
 *
 * A time may have a fraction ("2.5ms") if it is still a whole number of ps.
 * Comments start at ';' or '#' at the start of a line or after a blank, so
 * "lookahead = 100ns ; why" works. Section and key names are 1 to 49 letters,
 * digits, '_' or '-' (inih's limit); a line is at most 197 characters once its
 * comment is removed. A string value may not contain control characters,
 * leading or trailing blanks, or ';'/'#' first or after a blank, whether it comes from
 * a file, --set or a default, so that every configuration can be dumped and
 * read back.
 *
 * The effective configuration (every registered key with its value, defaults
 * included, and where the value came from) can be dumped as INI text so that a
 * run's output records exactly what it ran with.
 */
#ifndef CXLSIM_CONFIG_H
#define CXLSIM_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum cxs_cfg_type {
	CXS_CFG_UINT,
	CXS_CFG_INT,
	CXS_CFG_DOUBLE,
	CXS_CFG_BOOL,
	CXS_CFG_TIME,
	CXS_CFG_SIZE,
	CXS_CFG_ENUM,
	CXS_CFG_STRING,
};

struct cxs_cfg_key {
	const char *section;
	const char *key;
	enum cxs_cfg_type type;
	const char *def;     /* default, written as in a file; NULL = required */
	const char *doc;     /* one sentence for --help-config */
	const char *choices; /* enum only: "a|b|c" */
	double min, max;     /* inclusive range; min == max == 0 means unbounded */
};

struct cxs_config;

/* Size of the buffer callers pass for error messages. */
#define CXS_CONFIG_ERR_MAX 512

struct cxs_config *cxs_config_new(void);
void cxs_config_free(struct cxs_config *cfg);

/*
 * Adds a module's key table. Keys are unique by section.key; registering the
 * same table twice is harmless. Defaults are validated here: a bad default is
 * a programming error (returns -1 with a message).
 */
int cxs_config_register(struct cxs_config *cfg, const struct cxs_cfg_key *keys, size_t n,
			char *err, size_t errlen);

/*
 * Reads an INI file. On error returns -1 and writes "file:line: key: what" to err;
 * keys assigned before the offending line keep their new values.
 */
int cxs_config_load(struct cxs_config *cfg, const char *path, char *err, size_t errlen);

/* Applies "section.key=value" (from --set). Errors name "--set" and the key. */
int cxs_config_set(struct cxs_config *cfg, const char *assignment, char *err, size_t errlen);

/*
 * Call once all files and --set options are applied: returns -1 with
 * "missing required key section.key" (the first in registration order) when
 * a key without a default was never set, else 0. Reading such a key aborts.
 */
int cxs_config_check_required(const struct cxs_config *cfg, char *err, size_t errlen);

/*
 * Typed getters. Asking for a key that was never registered, or with the wrong
 * type, is a programming error: it aborts with the key's name.
 */
uint64_t cxs_config_uint(const struct cxs_config *cfg, const char *section, const char *key);
int64_t cxs_config_int(const struct cxs_config *cfg, const char *section, const char *key);
double cxs_config_double(const struct cxs_config *cfg, const char *section, const char *key);
bool cxs_config_bool(const struct cxs_config *cfg, const char *section, const char *key);
uint64_t cxs_config_time_ps(const struct cxs_config *cfg, const char *section, const char *key);
uint64_t cxs_config_size_bytes(const struct cxs_config *cfg, const char *section, const char *key);
/* The enum's index in `choices` (0-based). */
unsigned cxs_config_enum(const struct cxs_config *cfg, const char *section, const char *key);
const char *cxs_config_str(const struct cxs_config *cfg, const char *section, const char *key);

/*
 * Where a key's value came from, for error messages raised after parsing
 * (a cross-key check such as "lookahead must not exceed end_time"):
 * "file:line", "--set" or "default" ("unset" for a required key never set).
 */
const char *cxs_config_origin(const struct cxs_config *cfg, const char *section, const char *key);

/*
 * The effective configuration as INI text (malloc'd; caller frees; NULL when
 * memory runs out). Values are canonical (times and sizes in the largest exact
 * unit) with "; from file:line" after those not defaulted; loading it into a
 * fresh configuration with the same keys gives the same values.
 */
char *cxs_config_dump(const struct cxs_config *cfg);

/* Every registered key: section, key, type, default, range/choices and doc. */
void cxs_config_help(const struct cxs_config *cfg, FILE *out);

/* One table of keys, as the module that reads them exports it (model.h lists a model's). */
struct cxs_key_table {
	const struct cxs_cfg_key *keys;
	size_t n;
};
#define CXS_KEY_TABLE(arr) { (arr), sizeof(arr) / sizeof((arr)[0]) }

#endif /* CXLSIM_CONFIG_H */
