/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_static.h"
#include "sites.h"
#include "trees.h"

struct www *
trees_load(const struct ewykd *e, const char *root, char *err, size_t errlen)
{
	const struct ewykd_config *cfg = &e->cfg;
	const char *cache[EWYKD_CACHE_RULES_MAX], *types[EWYKD_MIME_TYPES_MAX];
	struct www_conf wc = {
		.root = root,
		.max_bytes = cfg->www_max_mb << 20,
		.mime_types = cfg->mime_types_file[0] == '\0' ? NULL :
			strcmp(cfg->mime_types_file, "none") == 0 ? "" :
			cfg->mime_types_file,
		.mime_overrides = types,
		.n_mime_overrides = cfg->nb_mime_types,
		.cache_control = cache,
		.n_cache_control = cfg->nb_cache_control,
	};
	struct www *w;
	uint16_t i;

	for (i = 0; i < cfg->nb_cache_control; i++)
		cache[i] = cfg->cache_control[i];
	for (i = 0; i < cfg->nb_mime_types; i++)
		types[i] = cfg->mime_types[i];
	w = calloc(1, sizeof(*w));
	if (w == NULL) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return NULL;
	}
	if (www_load(w, &wc, err, errlen) != 0) {
		www_free(w);
		free(w);
		return NULL;
	}
	return w;
}

void
trees_free(struct www *w)
{
	if (w == NULL)
		return;
	www_free(w);
	free(w);
}

void
trees_count(const struct ewykd *e, uint32_t *files, uint32_t *skipped,
		uint64_t *bytes)
{
	uint16_t i;

	*files = *skipped = 0;
	*bytes = 0;
	for (i = 0; i < e->ntrees; i++) {
		*files += e->trees[i].www->nfiles;
		*skipped += e->trees[i].www->skipped;
		*bytes += e->trees[i].www->bytes;
	}
}

void
trees_note(struct ewykd *e)
{
	const struct www *w = e->www;
	uint32_t files = w != NULL ? w->nfiles : 0;
	uint32_t skipped = w != NULL ? w->skipped : 0;
	uint64_t bytes = w != NULL ? w->bytes : 0;

	if (e->ntrees > 0)
		trees_count(e, &files, &skipped, &bytes);
	__atomic_store_n(&e->reload.files, files, __ATOMIC_RELAXED);
	__atomic_store_n(&e->reload.skipped, skipped, __ATOMIC_RELAXED);
	__atomic_store_n(&e->reload.bytes, bytes, __ATOMIC_RELAXED);
}
