/*
 * app_config_priv.h — the keys the cxlsim command line owns: [engine], [output].
 */
#ifndef CXLSIM_APP_CONFIG_PRIV_H
#define CXLSIM_APP_CONFIG_PRIV_H

#include <stddef.h>

#include "cxlsim/config.h"
#include "cxlsim/model.h"

extern const struct cxs_cfg_key cxs_app_keys[];
extern const size_t cxs_app_nkeys;

/*
 * The models, in the order of engine.model's choices and of cxs_models
 * (models.c): adding a model is one entry here.
 */
#define CXS_MODELS(X) X(phold) X(memsys) X(axle)
#define APP_MODEL_CHOICE(m) "|" #m
#define APP_MODEL_CHOICES (&(CXS_MODELS(APP_MODEL_CHOICE))[1]) /* without the first "|" */

/* NULL-terminated, engine.model's choice i is cxs_models[i]. */
extern const struct cxs_model *const cxs_models[];

/* Indices of the enum keys' choices, in the order the key table lists them. */
enum app_mapping {
	APP_MAP_BLOCK = 0,
	APP_MAP_ROUND_ROBIN = 1,
	APP_MAP_EXPLICIT = 2,
	APP_MAP_BALANCED = 3,
};
/* output.log_level lists error|warn|info|debug: the indices are enum cxs_log_level. */

struct cxs_engine_config;

/* output.sample_interval and output.sample into e; 0, or -1 with file:line:key in err. */
int app_sampling_configure(const struct cxs_config *cfg, struct cxs_engine_config *e, char *err,
			   size_t errlen);

#endif /* CXLSIM_APP_CONFIG_PRIV_H */
