/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sites.h"
#include "trees.h"

/* The tree of dir, loaded when it is new. Its index, or -1 (err set). */
static int
tree_of(struct ewykd *e, const char *dir, char *err, size_t errlen)
{
	struct site_tree *t;
	uint16_t i;

	for (i = 0; i < e->ntrees; i++)
		if (strcmp(e->trees[i].dir, dir) == 0)
			return i;
	t = &e->trees[e->ntrees];
	snprintf(t->dir, sizeof(t->dir), "%s", dir);
	t->www = trees_load(e, dir, err, errlen);
	if (t->www == NULL)
		return -1;
	t->statics.www = t->www;
	return e->ntrees++;
}

static const char *const kinds[] = {
	[ROUTE_ROOT] = "root", [ROUTE_UPSTREAM] = "upstream",
	[ROUTE_REDIRECT] = "redirect", [ROUTE_STATUS] = "status",
	[ROUTE_PLUGIN] = "plugin",
};

/* [route]'s description for the serving side. */
static int
route_made(struct ewykd *e, const struct route_conf *rc, struct serve_route *sr,
		const char **headers, char *err, size_t errlen)
{
	char sub[EWYKD_ERR_LEN];
	uint16_t j;
	int t;

	*sr = (struct serve_route){
		.path = rc->path, .exact = rc->exact, .target = rc->target,
		.code = rc->code, .strip_prefix = rc->strip_prefix,
		.compress = rc->compress, .websocket = rc->websocket,
		.headers = headers, .nb_headers = rc->nb_headers,
		.limit = { rc->limit_rps, rc->limit_burst, rc->limit_conns },
	};
	for (j = 0; j < rc->nb_headers; j++)
		headers[j] = rc->headers[j];
	switch (rc->kind) {
	case ROUTE_ROOT:
		t = tree_of(e, rc->target, sub, sizeof(sub));
		if (t < 0) {
			snprintf(err, errlen, "[route %s] root %s: %s", rc->name,
					rc->target, sub);
			return -1;
		}
		sr->kind = SERVE_ROUTE_ROOT;
		sr->files = &e->trees[t].statics;
		return 0;
	case ROUTE_UPSTREAM:
		sr->kind = SERVE_ROUTE_UPSTREAM;
		return 0;
	case ROUTE_REDIRECT:
		sr->kind = SERVE_ROUTE_REDIRECT;
		return 0;
	case ROUTE_STATUS:
		sr->kind = SERVE_ROUTE_STATUS;
		return 0;
	case ROUTE_PLUGIN:
		sr->kind = SERVE_ROUTE_PLUGIN;
		sr->named = http_route_named(&e->router, rc->target);
		if (sr->named != NULL)
			return 0;
		snprintf(err, errlen, "[route %s] plugin %s: no --plugin "
				"registered a handler by that name", rc->name,
				rc->target);
		return -1;
	case ROUTE_NONE:
		break;
	}
	snprintf(err, errlen, "[route %s]: does nothing", rc->name);
	return -1;
}

/* Adds sr to site's router; a path the site has already (its own route
 * before every site's) is skipped when may_skip. */
static int
route_into(struct http_site *site, const struct serve_route *sr,
		bool may_skip, const char *what, char *err, size_t errlen)
{
	int rc = serve_route_add(&site->router, sr);

	if (rc == 0 || (rc == -EEXIST && may_skip))
		return 0;
	snprintf(err, errlen, "[site %s]: %s %s: %s", site->name, what, sr->path,
			rc == -ENOSPC ? "more routes than a site holds (64)" :
			strerror(-rc));
	return -1;
}

static int
site_routes(struct ewykd *e, int i, char *err, size_t errlen)
{
	const struct sites_conf *s = &e->cfg.sites;
	const struct site_conf *sc = &s->sites[i];
	struct http_site *site = &e->sites.sites[i];
	struct serve_route *files = &e->conf_routes[s->nroutes + i];
	int r, t, pass;

	/* The site's own first: on one path they beat every site's. */
	for (pass = 0; pass < 2; pass++)
		for (r = 0; r < s->nroutes; r++)
			if (s->routes[r].site == (pass == 0 ? i : -1) &&
					route_into(site, &e->conf_routes[r], pass == 1,
					kinds[s->routes[r].kind], err, errlen) != 0)
				return -1;
	if (sc->root[0] == '\0')
		return 0;
	t = tree_of(e, sc->root, err, errlen);
	if (t < 0) {
		char why[EWYKD_ERR_LEN];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "[site %s] root %s: %s", sc->name, sc->root,
				why);
		return -1;
	}
	*files = (struct serve_route){ .path = "/", .kind = SERVE_ROUTE_ROOT,
		.files = &e->trees[t].statics };
	return route_into(site, files, true, "root", err, errlen);
}

enum ewykd_err
sites_open(struct ewykd *e, char *err, size_t errlen)
{
	const struct sites_conf *s = &e->cfg.sites;
	const char **names;
	int i, h, rc;

	if (s->nsites == 0)
		return EWYKD_OK;
	e->trees = calloc((size_t)(s->nsites + s->nroutes), sizeof(*e->trees));
	e->conf_routes = calloc((size_t)(s->nroutes + s->nsites),
			sizeof(*e->conf_routes));
	e->conf_headers = calloc((size_t)s->nroutes * ROUTE_HEADERS_MAX + 1,
			sizeof(*e->conf_headers));
	names = calloc((size_t)s->nsites, sizeof(*names));
	if (e->trees == NULL || e->conf_routes == NULL ||
			e->conf_headers == NULL || names == NULL) {
		free(names);
		snprintf(err, errlen, "sites: %s", strerror(ENOMEM));
		return EWYKD_ERR_NOMEM;
	}
	for (i = 0; i < s->nsites; i++)
		names[i] = s->sites[i].name;
	rc = http_sites_init(&e->sites, (uint32_t)s->nsites, names, &e->router);
	free(names);
	if (rc != 0) {
		snprintf(err, errlen, "sites: %s", strerror(-rc));
		return EWYKD_ERR_NOMEM;
	}
	for (i = 0; i < s->nsites; i++)
		for (h = 0; h < s->sites[i].nb_hosts; h++) {
			rc = http_sites_host_add(&e->sites, s->sites[i].hosts[h],
					(uint32_t)i);
			if (rc != 0) {
				snprintf(err, errlen, "[site %s] host %s: %s",
						s->sites[i].name, s->sites[i].hosts[h],
						strerror(-rc));
				return EWYKD_ERR_CONFIG;
			}
		}
	for (i = 0; i < s->nroutes; i++)
		if (route_made(e, &s->routes[i], &e->conf_routes[i],
				&e->conf_headers[(size_t)i * ROUTE_HEADERS_MAX], err,
				errlen) != 0)
			return s->routes[i].kind == ROUTE_ROOT ? EWYKD_ERR_WWW :
				EWYKD_ERR_CONFIG;
	for (i = 0; i < s->nsites; i++)
		if (site_routes(e, i, err, errlen) != 0)
			return EWYKD_ERR_WWW;
	e->nconf_routes = (uint32_t)(s->nroutes + s->nsites);
	rc = http_sites_number_routes(&e->sites);
	if (rc < 0) {
		snprintf(err, errlen, "sites: more routes in all than %u",
				UINT16_MAX + 1u);
		return EWYKD_ERR_CONFIG;
	}
	e->route_ids = (uint32_t)rc;
	trees_note(e);
	return EWYKD_OK;
}

void
sites_close(struct ewykd *e)
{
	uint16_t i;

	for (i = 0; i < e->ntrees; i++) {
		trees_free(e->trees[i].www);
		trees_free(e->trees[i].retiring);
	}
	free(e->trees);
	e->trees = NULL;
	e->ntrees = 0;
	free(e->conf_routes);
	e->conf_routes = NULL;
	free(e->conf_headers);
	e->conf_headers = NULL;
	http_sites_free(&e->sites);
}

int
sites_reload(struct ewykd *e, char *err, size_t errlen)
{
	struct www **next;
	char sub[EWYKD_ERR_LEN];
	uint16_t i, j;

	if (e->ntrees == 0)
		return 1;
	next = calloc(e->ntrees, sizeof(*next));
	if (next == NULL) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -1;
	}
	for (i = 0; i < e->ntrees; i++) {
		next[i] = trees_load(e, e->trees[i].dir, sub, sizeof(sub));
		if (next[i] == NULL) {
			snprintf(err, errlen, "root %s: %s", e->trees[i].dir, sub);
			for (j = 0; j < i; j++)
				trees_free(next[j]);
			free(next);
			return -1;
		}
	}
	for (i = 0; i < e->ntrees; i++) {
		struct site_tree *t = &e->trees[i];

		http_static_swap(&t->statics, next[i]);
		t->retiring = t->www;
		t->www = next[i];
	}
	free(next);
	trees_note(e);
	return 0;
}

bool
sites_retire(struct ewykd *e)
{
	const struct www *old;
	bool all = true;
	uint16_t i;

	for (i = 0; i < e->ntrees; i++) {
		struct site_tree *t = &e->trees[i];

		if (!t->statics.swapping)
			continue;
		if (http_static_retired(&t->statics, &old)) {
			trees_free(t->retiring);
			t->retiring = NULL;
		} else {
			all = false;
		}
	}
	return all;
}
