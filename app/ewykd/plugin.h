/* SPDX-License-Identifier: BSD-3-Clause */
/* --plugin FILE.so[:ARG]: shared objects that add routes at start-up. */
#ifndef EWYKD_PLUGIN_H
#define EWYKD_PLUGIN_H

#include <stddef.h>

struct ewyk_router;
struct ewykd_config;

/* Loads each plugin and calls its ewyk_plugin_init. 0, or -1 with a
 * message naming the plugin in err. Plugins stay loaded until exit. */
int plugins_load(const struct ewykd_config *cfg, struct ewyk_router *r,
		char *err, size_t errlen);

/* --check-config: each plugin opened as a start would (its symbols
 * resolved against ewykd's), its init found, and closed again; the init
 * is not called (it may start what the plugin serves with). */
int plugins_check(const struct ewykd_config *cfg, char *err, size_t errlen);

#endif /* EWYKD_PLUGIN_H */
