/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "ewyk_tls.h"
#include "lcores.h"
#include "port_eal.h"
#include "plugin.h"
#include "services.h"
#include "sites.h"
#include "trees.h"

/* What the checks found, for the summary. */
struct check {
	struct ewykd *e;
	int eal_argc;
	char **eal_argv;
	unsigned int lcores;
	uint16_t shards;
};

typedef enum ewykd_err (*check_fn)(struct check *c, char *err,
		size_t errlen);

static enum ewykd_err
check_eal(struct check *c, char *err, size_t errlen)
{
	return ewykd_err_of_eal(port_eal_check(c->eal_argc, c->eal_argv,
			&c->lcores, err, errlen));
}

static enum ewykd_err
check_lcores(struct check *c, char *err, size_t errlen)
{
	return lcores_plan(&c->e->cfg, c->lcores - 1, &c->shards, err, errlen);
}

static enum ewykd_err
check_served(struct check *c, char *err, size_t errlen)
{
	return services_check_served(&c->e->cfg, err, errlen);
}

/* The tree is loaded by the start's own loader, which names on stderr
 * what it leaves out, then let go. */
static enum ewykd_err
check_www(struct check *c, char *err, size_t errlen)
{
	char sub[EWYKD_ERR_LEN] = "";
	struct www *w;

	if (c->e->cfg.www[0] == '\0')
		return EWYKD_OK;
	w = trees_load(c->e, c->e->cfg.www, sub, sizeof(sub));
	if (w == NULL) {
		snprintf(err, errlen, "--www: %s", sub);
		return EWYKD_ERR_WWW;
	}
	printf("; www: %u files, %llu bytes, %u left out\n", w->nfiles,
			(unsigned long long)w->bytes, w->skipped);
	trees_free(w);
	return EWYKD_OK;
}

/* The sites' trees and routers, made by the start's own code, then let
 * go. */
static enum ewykd_err
check_sites(struct check *c, char *err, size_t errlen)
{
	const struct sites_conf *s = &c->e->cfg.sites;
	enum ewykd_err rc;
	uint32_t files, skipped;
	uint64_t bytes;

	if (s->nsites == 0)
		return EWYKD_OK;
	rc = sites_open(c->e, err, errlen);
	if (rc == EWYKD_OK) {
		trees_count(c->e, &files, &skipped, &bytes);
		printf("; sites: %d, routes: %d, trees: %u (%u files, %llu bytes, "
				"%u left out)\n", s->nsites, s->nroutes,
				c->e->ntrees, files, (unsigned long long)bytes,
				skipped);
	}
	sites_close(c->e);
	return rc;
}

/* Whether the start could create or write what is at path (a directory
 * when dir), found by doing what it does without changing anything: an
 * existing file opened for appending and closed, a missing one created
 * and removed again. The daemon may be running on this configuration:
 * nothing it uses is touched. */
static int
writable(const char *path, bool dir, char *why, size_t whylen)
{
	struct stat st;
	int fd;

	if (stat(path, &st) == 0) {
		if (dir != S_ISDIR(st.st_mode)) {
			errno = dir ? ENOTDIR : EISDIR;
			goto fail;
		}
		if (dir) {
			if (faccessat(AT_FDCWD, path, W_OK | X_OK,
					AT_EACCESS) != 0)
				goto fail;
			return 0;
		}
		fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (fd < 0)
			goto fail;
		close(fd);
		return 0;
	}
	if (errno != ENOENT)
		goto fail;
	if (dir ? mkdir(path, 0755) != 0 : (fd = open(path, O_WRONLY | O_CREAT |
			O_EXCL | O_CLOEXEC, 0644)) < 0)
		goto fail;
	if (dir)
		rmdir(path);
	else {
		close(fd);
		unlink(path);
	}
	return 0;
fail:
	snprintf(why, whylen, "%s: %s", path, strerror(errno));
	return -1;
}

/* The journal is only looked at: the daemon may be writing it. */
static enum ewykd_err
check_state_dir(struct check *c, char *err, size_t errlen)
{
	const char *dir = c->e->cfg.state_dir;
	char journal[PATH_MAX + 16], why[PATH_MAX + 64];
	struct stat st;
	int rc;

	if (dir[0] == '\0')
		return EWYKD_OK;
	snprintf(journal, sizeof(journal), "%s/journal.ewyk", dir);
	/* As the start: the directory made if missing, the journal opened
	 * (or created) in it. */
	if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
		rc = writable(dir, true, why, sizeof(why));
	else if (stat(dir, &st) == 0)
		rc = writable(journal, false, why, sizeof(why));
	else
		rc = writable(dir, true, why, sizeof(why));
	if (rc != 0) {
		snprintf(err, errlen, "--state-dir: %s", why);
		return EWYKD_ERR_STATE_DIR;
	}
	return EWYKD_OK;
}

static enum ewykd_err
check_access_log(struct check *c, char *err, size_t errlen)
{
	const char *path = c->e->cfg.access_log;
	char why[PATH_MAX + 64];

	if (path[0] == '\0' || strcmp(path, "-") == 0)
		return EWYKD_OK;
	if (writable(path, false, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "--access-log: %s", why);
		return EWYKD_ERR_CONFIG;
	}
	return EWYKD_OK;
}

/* The start's own loader: every pair read and matched, the priority
 * string taken, the credentials built; then let go. */
static enum ewykd_err
check_tls(struct check *c, char *err, size_t errlen)
{
	struct tls_config *tls;

	if (options_tls_pairs(&c->e->cfg) == 0)
		return EWYKD_OK;
	tls = services_tls_load(&c->e->cfg, c->shards, err, errlen);
	if (tls == NULL)
		return EWYKD_ERR_TLS;
	tls_config_destroy(tls);
	return EWYKD_OK;
}

static enum ewykd_err
check_plugins(struct check *c, char *err, size_t errlen)
{
	return plugins_check(&c->e->cfg, err, errlen) == 0 ? EWYKD_OK :
		EWYKD_ERR_PLUGIN;
}

/* In the order a start meets them (main.c, services.c), so that the
 * first error is the one the start would stop at. */
static const struct {
	const char *what;
	check_fn fn;
} steps[] = {
	{ "the EAL options (read by the EAL's own parser, nothing set up)", check_eal },
	{ "the lcores for the shards and --reserved", check_lcores },
	{ "something to serve", check_served },
	{ "the static tree (loaded by the start's loader, then let go)", check_www },
	{ "the sites and routes (their trees loaded, then let go)", check_sites },
	{ "the TLS certificates and keys (loaded by the start's loader, then let go)", check_tls },
	{ "the state directory and its journal (may they be written)", check_state_dir },
	{ "the access log (may it be written)", check_access_log },
	{ "the plugins (opened, their init found, closed: not called)", check_plugins },
};

/* The EAL's arguments as they were given, on one line. */
static void
eal_line(const struct check *c, char *buf, size_t len)
{
	size_t used = 0;
	int i;

	buf[0] = '\0';
	for (i = 1; i < c->eal_argc && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
				i > 1 ? " " : "", c->eal_argv[i]);
}

int
check_config(struct ewykd *e, int eal_argc, char **eal_argv)
{
	struct check c = { .e = e, .eal_argc = eal_argc, .eal_argv = eal_argv };
	const struct ewykd_config *cfg = &e->cfg;
	char err[EWYKD_ERR_LEN] = "", eal[1024];
	enum ewykd_err rc;
	size_t i;

	printf("; ewykd %s: --check-config of %s\n", EWYK_VERSION,
			cfg->config_file[0] != '\0' ? cfg->config_file :
			"the command line");
	for (i = 0; i < RTE_DIM(steps); i++) {
		rc = steps[i].fn(&c, err, sizeof(err));
		if (rc != EWYKD_OK) {
			fflush(stdout);
			fprintf(stderr, "ewykd: %s\n", err);
			return ewykd_err_status(rc);
		}
		printf("; checked: %s\n", steps[i].what);
	}
	printf("; lcores: %u, so %u shard(s) and %u reserved\n"
	       "; not checked: the ports, memory and hugepages, and whether the "
	       "file prefix is in use: ewykd takes them when it starts\n"
	       "; configuration good%s%s\n\n", c.lcores, c.shards,
	       c.lcores - 1 > c.shards ? c.lcores - 1 - c.shards : 0,
	       cfg->config_file[0] != '\0' ? ": " : "", cfg->config_file);
	eal_line(&c, eal, sizeof(eal));
	options_write(cfg, eal, stdout);
	fflush(stdout);
	return 0;
}
