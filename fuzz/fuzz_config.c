/*
 * fuzz_config.c — the configuration parser (src/config/config.c) on
 * arbitrary files and --set assignments, with cxlsim's real key tables.
 *
 * Properties checked on every input, beyond not crashing:
 *   - a load that fails leaves one line of valid UTF-8 that names the file;
 *   - a load that succeeds dumps a configuration that loads again into the
 *     same values (config.c's dump invariant): the two dumps agree line for
 *     line once the "; from FILE:LINE" origins are stripped;
 *   - the first line of the input as a --set assignment either applies or
 *     fails with one line of valid UTF-8.
 */
#include "harness.h"

#include <string.h>

#include "app_config_priv.h"
#include "cxlsim/config.h"
#include "cxlsim/utf8.h"

static struct cxs_config *new_cfg(void)
{
	struct cxs_config *c = cxs_config_new();
	char err[CXS_CONFIG_ERR_MAX];

	harness_assert(c != NULL, "out of memory");
	harness_assert(cxs_config_register(c, cxs_app_keys, cxs_app_nkeys, err, sizeof err) == 0,
		       "%s", err);
	/* every model's keys, as cxlsim registers them (main.c, parse) */
	for (size_t m = 0; cxs_models[m] != NULL; m++) {
		for (const struct cxs_key_table *const *t = cxs_models[m]->keys; *t != NULL; t++)
			harness_assert(cxs_config_register(c, (*t)->keys, (*t)->n, err,
							   sizeof err) == 0, "%s", err);
	}
	return c;
}

static void one_line(const char *err)
{
	harness_assert(err[0] != '\0', "an error without a message");
	harness_assert(strchr(err, '\n') == NULL, "a message of several lines: %s", err);
	harness_assert(cxs_utf8_valid(err), "a message that is not UTF-8");
}

/* The dump without its "; from ..." origin comments. */
static void strip_origins(char *s)
{
	char *o = s;

	for (char *p = s; *p != '\0';) {
		char *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p);
		char *from = strstr(p, " ; from ");

		if (from != NULL && from < end)
			end = from;
		memmove(o, p, (size_t)(end - p));
		o += end - p;
		if (nl == NULL)
			break;
		*o++ = '\n';
		p = nl + 1;
	}
	*o = '\0';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[CXS_CONFIG_ERR_MAX] = "";
	struct cxs_config *c = new_cfg();
	const char *path = harness_file(0, data, size);

	if (cxs_config_load(c, path, err, sizeof err) == 0) {
		char *d1 = cxs_config_dump(c), *d2;
		struct cxs_config *c2 = new_cfg();

		harness_assert(d1 != NULL, "dump failed");
		harness_assert(cxs_config_load(c2, harness_file(1, d1, strlen(d1)), err,
					       sizeof err) == 0,
			       "the dump does not load: %s", err);
		d2 = cxs_config_dump(c2);
		harness_assert(d2 != NULL, "dump failed");
		strip_origins(d1);
		strip_origins(d2);
		harness_assert(strcmp(d1, d2) == 0, "the dump does not read back the same");
		free(d1);
		free(d2);
		cxs_config_free(c2);
	} else {
		one_line(err);
		harness_assert(strstr(err, "/proc/self/fd/") != NULL, "the message names no file: %s",
			       err);
	}
	/* The first line as --set section.key=value. */
	size_t n = 0;
	while (n < size && data[n] != '\n' && data[n] != '\0' && n < 4096)
		n++;
	char *set = malloc(n + 1);
	harness_assert(set != NULL, "out of memory");
	memcpy(set, data, n);
	set[n] = '\0';
	err[0] = '\0';
	if (cxs_config_set(c, set, err, sizeof err) != 0)
		one_line(err);
	free(set);
	cxs_config_free(c);
	return 0;
}
