/* SPDX-License-Identifier: BSD-3-Clause */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "ewyk_http.h"
#include "options.h"
#include "plugin.h"

/* Opens the plugin of spec ("FILE.so[:ARG]") and finds its init: 0 with
 * *so, *init and *arg (within spec), or -1 with the line in err. */
static int
open_one(const char *spec, void **so, ewyk_plugin_init_fn *init,
		const char **arg, char *err, size_t errlen)
{
	char path[PATH_MAX];
	char *colon;

	snprintf(path, sizeof(path), "%s", spec);
	colon = strchr(path, ':');
	*arg = "";
	if (colon != NULL) {
		*colon = '\0';
		*arg = spec + (colon - path) + 1;
	}
	/* RTLD_NOW: a missing symbol is an error now, not in a handler. */
	*so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (*so == NULL) {
		snprintf(err, errlen, "--plugin %s: %s", path, dlerror());
		return -1;
	}
	*init = (ewyk_plugin_init_fn)(uintptr_t)dlsym(*so, EWYK_PLUGIN_INIT);
	if (*init == NULL) {
		snprintf(err, errlen, "--plugin %s: no %s() in it", path,
				EWYK_PLUGIN_INIT);
		dlclose(*so);
		return -1;
	}
	return 0;
}

static int
load_one(const char *spec, struct ewyk_router *r, char *err, size_t errlen)
{
	ewyk_plugin_init_fn init;
	const char *arg;
	void *so;
	int rc;

	if (open_one(spec, &so, &init, &arg, err, errlen) != 0)
		return -1;
	rc = init(r, EWYK_HTTP_API, arg);
	if (rc != 0) {
		snprintf(err, errlen, "--plugin %.*s: %s() refused: %s",
				(int)strcspn(spec, ":"), spec, EWYK_PLUGIN_INIT,
				strerror(rc < 0 ? -rc : rc));
		return -1;	/* its routes may be in: ewykd does not start */
	}
	return 0;
}

int
plugins_load(const struct ewykd_config *cfg, struct ewyk_router *r,
		char *err, size_t errlen)
{
	uint16_t i;

	for (i = 0; i < cfg->nb_plugins; i++)
		if (load_one(cfg->plugins[i], r, err, errlen) != 0)
			return -1;
	return 0;
}

int
plugins_check(const struct ewykd_config *cfg, char *err, size_t errlen)
{
	ewyk_plugin_init_fn init;
	const char *arg;
	uint16_t i;
	void *so;

	for (i = 0; i < cfg->nb_plugins; i++) {
		if (open_one(cfg->plugins[i], &so, &init, &arg, err, errlen) != 0)
			return -1;
		dlclose(so);
	}
	return 0;
}
