/*
 * models.c — the models the command line can run (engine.model): the one
 * place a model is added, through CXS_MODELS in app_config_priv.h, which also
 * gives the key's choices in the same order.
 */
#include "app_config_priv.h"

#include <stddef.h>

#include "cxlsim/axle.h"
#include "cxlsim/memsys.h"
#include "cxlsim/phold.h"

const struct cxs_model *const cxs_models[] = {
#define MODEL_PTR(m) &cxs_##m##_model,
	CXS_MODELS(MODEL_PTR)
#undef MODEL_PTR
	NULL,
};
