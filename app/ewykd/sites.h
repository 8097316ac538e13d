/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration's sites and routes made real: each distinct root
 * (a site's or a route's) loaded as one static tree, each site's router
 * filled with its own routes, then the every-site ones, then its root's
 * files at "/"; a reload loads every tree anew and swaps them all, or
 * none.
 */
#ifndef EWYKD_SITES_H
#define EWYKD_SITES_H

#include <stdbool.h>
#include <stddef.h>

#include "ewykd.h"

struct site_tree {
	char dir[PATH_MAX];
	struct www *www;		/* served */
	struct www *retiring;		/* replaced, answers still lent */
	struct http_static statics;
};

/* Nothing without [site] sections. EWYKD_OK, or an error with its line
 * in err. */
enum ewykd_err sites_open(struct ewykd *e, char *err, size_t errlen);
void sites_close(struct ewykd *e);
/* Every tree loaded anew: all swapped in (0), or none, the reason in err
 * (-1); 1 when there are no sites. */
int sites_reload(struct ewykd *e, char *err, size_t errlen);
/* The trees a reload replaced, freed once no answer holds them; true
 * when none is left. */
bool sites_retire(struct ewykd *e);
#endif /* EWYKD_SITES_H */
