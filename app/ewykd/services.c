/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ewyk_serve.h"
#include "ewyk_quic.h"
#include "ewyk_tls.h"
#include "http_static.h"
#include "plugin.h"
#include "services.h"
#include "sites.h"
#include "store.h"
#include "trees.h"

static enum ewykd_err
stores_open(struct ewykd *e, char *err, size_t errlen)
{
	const struct ewykd_config *cfg = &e->cfg;
	struct store_conf stc = {
		.dir = cfg->state_dir[0] ? cfg->state_dir : NULL,
		.capacity = cfg->store_keys,
		.journal_max = (uint64_t)cfg->journal_max_mb << 20,
		.no_conflate = cfg->store_no_conflate,
	};
	struct store_conf kvc = { .capacity = cfg->kv_keys };
	char sub[EWYKD_ERR_LEN] = "";

	e->state = store_open(&stc, sub, sizeof(sub));
	if (e->state == NULL) {
		snprintf(err, errlen, "--state-dir: %s", sub);
		return EWYKD_ERR_STATE_DIR;
	}
	e->kv = store_open(&kvc, sub, sizeof(sub));
	if (e->kv == NULL) {
		snprintf(err, errlen, "/kv: %s", sub);
		return EWYKD_ERR_NOMEM;	/* a store in memory only */
	}
	return EWYKD_OK;
}

struct tls_config *
services_tls_load(const struct ewykd_config *cfg, uint16_t shards, char *err,
		size_t errlen)
{
	struct tls_conf tc = {
		.n_pairs = options_tls_pairs(cfg),
		.priority = cfg->tls_priority[0] ? cfg->tls_priority : NULL,
		.handshake_timeout_ms = cfg->tls_handshake_timeout_ms,
		.ticket_rotate_s = cfg->tls_ticket_rotate_s,
		.shards = shards,
	};
	unsigned int n = cfg->nb_tls_certs;
	int i;

	for (i = 0; i < cfg->nb_tls_certs; i++) {
		tc.pairs[i].cert = cfg->tls_cert[i];
		tc.pairs[i].key = cfg->tls_key[i];
		tc.pairs[i].ocsp = cfg->tls_ocsp[i][0] ? cfg->tls_ocsp[i] : NULL;
	}
	for (i = 0; i < cfg->sites.nsites; i++) {
		const struct site_conf *site = &cfg->sites.sites[i];

		if (site->tls_cert[0] == '\0')
			continue;
		tc.pairs[n].cert = site->tls_cert;
		tc.pairs[n++].key = site->tls_key;
	}
	return tls_config_create(&tc, err, errlen);
}

/* The certificates and keys, checked, with every shard's credentials. */
static enum ewykd_err
tls_open(struct ewykd *e, char *err, size_t errlen)
{
	if (options_tls_pairs(&e->cfg) == 0)
		return EWYKD_OK;
	e->tls = services_tls_load(&e->cfg, e->nb_shards, err, errlen);
	if (e->tls == NULL)
		return EWYKD_ERR_TLS;
	/* QUIC's address tokens: one set of keys for every shard. */
	if (e->cfg.http3 && (e->quic_tokens = quic_tokens_new()) == NULL) {
		snprintf(err, errlen, "QUIC: no token key could be made");
		return EWYKD_ERR_TLS;
	}
	return EWYKD_OK;
}

enum ewykd_err
services_check_served(const struct ewykd_config *cfg, char *err, size_t errlen)
{
	if (cfg->www[0] == '\0' && !cfg->demo_routes && !cfg->state_api &&
			cfg->nb_plugins == 0 && cfg->nb_upstreams == 0 &&
			cfg->sites.nsites == 0) {
		snprintf(err, errlen, "nothing to serve: give --www DIR (or "
				"--plugin, --upstream, --state-api, --demo-routes, "
				"or [site] sections)");
		return EWYKD_ERR_CONFIG;
	}
	return EWYKD_OK;
}

enum ewykd_err
services_open(struct ewykd *e, char *err, size_t errlen)
{
	const struct ewykd_config *cfg = &e->cfg;
	char sub[EWYKD_ERR_LEN] = "";
	enum ewykd_err rc;
	int err_no;

	rc = services_check_served(cfg, err, errlen);
	if (rc != EWYKD_OK)
		return rc;
	if (cfg->www[0] != '\0') {
		e->www = trees_load(e, cfg->www, sub, sizeof(sub));
		if (e->www == NULL) {
			snprintf(err, errlen, "--www: %s", sub);
			return EWYKD_ERR_WWW;
		}
		e->statics.www = e->www;
	}
	trees_note(e);
	rc = tls_open(e, err, errlen);
	if (rc != EWYKD_OK)
		return rc;
	rc = stores_open(e, err, errlen);
	if (rc != EWYKD_OK)
		return rc;
	if (cfg->access_log[0] != '\0') {
		e->access_log = serve_log_open(cfg->access_log,
				cfg->access_log_json ? SERVE_LOG_JSON :
				SERVE_LOG_COMBINED, sub, sizeof(sub));
		if (e->access_log == NULL) {
			snprintf(err, errlen, "--access-log: %s", sub);
			return EWYKD_ERR_CONFIG;
		}
	}
	serve_state_attach(e->state);	/* before the plugins' init */
	err_no = 0;
	if (cfg->demo_routes)
		err_no = serve_demo_routes_add(&e->router, e->kv);
	if (err_no == 0 && cfg->state_api)
		err_no = serve_state_routes_add(&e->router, e->state,
				cfg->fibers > 0, cfg->state_api_token);
	/* With sites, each site's files are its own routes'. */
	if (err_no == 0 && cfg->sites.nsites == 0)
		err_no = http_static_route_add(&e->router, &e->statics);
	if (err_no == 0 && cfg->nb_upstreams > 0)
		err_no = serve_proxy_route_add(&e->router);
	if (err_no != 0) {
		snprintf(err, errlen, "built-in routes: %s", strerror(-err_no));
		return EWYKD_ERR_NOMEM;	/* the route table is full */
	}
	if (plugins_load(cfg, &e->router, err, errlen) != 0)
		return EWYKD_ERR_PLUGIN;
	return sites_open(e, err, errlen);
}

void
services_close(struct ewykd *e)
{
	serve_log_close(e->access_log);	/* what the shards logged, written */
	e->access_log = NULL;
	serve_state_attach(NULL);
	store_close(e->state);
	e->state = NULL;
	store_close(e->kv);
	e->kv = NULL;
	trees_free(e->www);
	e->www = NULL;
	trees_free(e->www_retiring);
	e->www_retiring = NULL;
	sites_close(e);
	tls_config_destroy(e->tls);	/* after the shards' */
	e->tls = NULL;
	quic_tokens_free(e->quic_tokens);
	e->quic_tokens = NULL;
}
