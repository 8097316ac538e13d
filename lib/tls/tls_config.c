/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration: certificate and key pairs read and checked, each
 * shard's credentials and priority cache built from them, reloaded as a
 * new generation, and the ticket keys. Loads run on one thread (ewykd's
 * main); the shards read the current generation with an acquire load.
 *
 * A private key is read into memory only to build credentials, wiped
 * right after, and never named in a message but by its file's path.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/ocsp.h>
#include <gnutls/x509.h>

#include "tls_config.h"

#define FILE_MAX (1u << 20)	/* a certificate chain, a key, an OCSP response */

const char *const tls_fail_names[TLS_FAIL__COUNT] = {
#define TLS_FAIL_NAME(n) #n,
	TLS_FAIL_REASONS(TLS_FAIL_NAME)
#undef TLS_FAIL_NAME
};

const char *const tls_cipher_names[TLS_CIPHER__COUNT] = {
	"aes_128_gcm", "aes_256_gcm", "chacha20_poly1305", "other",
};

/* What one pair's files hold, for one load. */
struct pair_data {
	gnutls_datum_t cert;
	gnutls_datum_t key;
	gnutls_datum_t ocsp;	/* size 0: none */
};

enum { PATH_CERT, PATH_KEY, PATH_OCSP };

static void
datum_wipe(gnutls_datum_t *d)
{
	if (d->data != NULL) {
		gnutls_memset(d->data, 0, d->size);
		free(d->data);
	}
	d->data = NULL;
	d->size = 0;
}

/* The whole of a regular file; a private key's must be its owner's alone. */
static int
read_file(const char *path, const char *what, bool secret, gnutls_datum_t *out,
		char *err, size_t errlen)
{
	struct stat st;
	ssize_t n;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		snprintf(err, errlen, "%s %s: %s", what, path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0 ||
			(size_t)st.st_size > FILE_MAX) {
		snprintf(err, errlen, "%s %s: not a regular file of 1 byte to "
				"1 MiB", what, path);
		goto fail;
	}
	if (secret && ((st.st_mode & 077) != 0 || st.st_uid != geteuid())) {
		snprintf(err, errlen, "%s %s: a private key must be readable by "
				"its owner only (%s; chown root and chmod 600 it)",
				what, path, (st.st_mode & 077) != 0 ?
				"group or others may read it" :
				"owned by another user");
		goto fail;
	}
	out->data = malloc((size_t)st.st_size + 1);
	if (out->data == NULL) {
		snprintf(err, errlen, "%s %s: out of memory", what, path);
		goto fail;
	}
	while (got < (size_t)st.st_size) {
		n = read(fd, out->data + got, (size_t)st.st_size - got);
		if (n <= 0) {
			snprintf(err, errlen, "%s %s: %s", what, path,
					n < 0 ? strerror(errno) : "shorter than said");
			out->size = (unsigned int)got;
			datum_wipe(out);
			goto fail;
		}
		got += (size_t)n;
	}
	out->data[got] = '\0';
	out->size = (unsigned int)got;
	close(fd);
	return 0;
fail:
	close(fd);
	return -1;
}

static void
format_time(time_t t, char *buf, size_t len)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

static void
cert_name(gnutls_x509_crt_t crt, char *name, size_t cap)
{
	size_t len = cap;
	unsigned int i;
	int type;

	for (i = 0; ; i++) {
		len = cap;
		type = gnutls_x509_crt_get_subject_alt_name(crt, i, name, &len,
				NULL);
		if (type < 0)
			break;
		if (type == GNUTLS_SAN_DNSNAME)
			return;
	}
	len = cap;
	if (gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0,
			0, name, &len) < 0)
		snprintf(name, cap, "(unnamed)");
}

static const char *
key_type(int pk)
{
	switch (pk) {
	case GNUTLS_PK_ECDSA:
		return "ECDSA";
	case GNUTLS_PK_RSA:
	case GNUTLS_PK_RSA_PSS:
		return "RSA";
	case GNUTLS_PK_EDDSA_ED25519:
	case GNUTLS_PK_EDDSA_ED448:
		return "EdDSA";
	default:
		return "other";
	}
}

/* The pair's certificate (the first of its chain) against its key, its
 * dates and its OCSP response; what it is, into info. */
static int
check_pair(const struct tls_config *cfg, unsigned int i,
		const struct pair_data *pd, struct tls_cert_info *info,
		char *err, size_t errlen)
{
	const char *cert_path = cfg->paths[i][PATH_CERT];
	const char *key_path = cfg->paths[i][PATH_KEY];
	gnutls_x509_crt_t *crts = NULL;
	gnutls_x509_privkey_t key = NULL;
	unsigned char cid[64], kid[64];
	size_t clen = sizeof(cid), klen = sizeof(kid);
	unsigned int n = 0, k;
	time_t now = time(NULL), t;
	char when[64];
	int rc = -1, pk;

	if (gnutls_x509_crt_list_import2(&crts, &n, &pd->cert,
			GNUTLS_X509_FMT_PEM, 0) < 0 || n == 0) {
		snprintf(err, errlen, "--tls-cert %s: no PEM certificate in it",
				cert_path);
		return -1;
	}
	if (gnutls_x509_privkey_init(&key) < 0 ||
			gnutls_x509_privkey_import2(key, &pd->key,
			GNUTLS_X509_FMT_PEM, NULL, GNUTLS_PKCS_PLAIN) < 0) {
		snprintf(err, errlen, "--tls-key %s: not an unencrypted PEM "
				"private key", key_path);
		goto out;
	}
	if (gnutls_x509_crt_get_key_id(crts[0], GNUTLS_KEYID_USE_SHA256, cid,
			&clen) < 0 || gnutls_x509_privkey_get_key_id(key,
			GNUTLS_KEYID_USE_SHA256, kid, &klen) < 0 ||
			clen != klen || memcmp(cid, kid, clen) != 0) {
		snprintf(err, errlen, "--tls-key %s does not match the "
				"certificate of --tls-cert %s", key_path,
				cert_path);
		goto out;
	}
	t = gnutls_x509_crt_get_expiration_time(crts[0]);
	if (t != (time_t)-1 && t < now) {
		format_time(t, when, sizeof(when));
		snprintf(err, errlen, "--tls-cert %s: expired on %s", cert_path,
				when);
		goto out;
	}
	info->not_after = (int64_t)t;
	t = gnutls_x509_crt_get_activation_time(crts[0]);
	if (t != (time_t)-1 && t > now) {
		format_time(t, when, sizeof(when));
		snprintf(err, errlen, "--tls-cert %s: not valid before %s",
				cert_path, when);
		goto out;
	}
	cert_name(crts[0], info->name, sizeof(info->name));
	pk = gnutls_x509_privkey_get_pk_algorithm2(key, NULL);
	snprintf(info->key_type, sizeof(info->key_type), "%s", key_type(pk));
	info->ocsp = pd->ocsp.size > 0;
	if (pd->ocsp.size > 0) {
		gnutls_ocsp_resp_t resp;
		int ok = gnutls_ocsp_resp_init(&resp) == 0 &&
			gnutls_ocsp_resp_import(resp, &pd->ocsp) == 0;

		if (ok)
			gnutls_ocsp_resp_deinit(resp);
		if (!ok) {
			snprintf(err, errlen, "--tls-ocsp %s: not a DER OCSP "
					"response", cfg->paths[i][PATH_OCSP]);
			goto out;
		}
	}
	rc = 0;
out:
	if (key != NULL)
		gnutls_x509_privkey_deinit(key);
	for (k = 0; k < n; k++)
		gnutls_x509_crt_deinit(crts[k]);
	gnutls_free(crts);
	return rc;
}

static void
pairs_wipe(struct pair_data *pd, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		datum_wipe(&pd[i].cert);
		datum_wipe(&pd[i].key);
		datum_wipe(&pd[i].ocsp);
	}
}

/* Every pair's files, read and checked. */
static int
pairs_read(const struct tls_config *cfg, struct pair_data *pd,
		struct tls_cert_info *info, char *err, size_t errlen)
{
	unsigned int i;

	memset(pd, 0, sizeof(*pd) * TLS_PAIRS_MAX);
	for (i = 0; i < cfg->conf.n_pairs; i++) {
		memset(&info[i], 0, sizeof(info[i]));
		if (read_file(cfg->paths[i][PATH_CERT], "--tls-cert", false,
				&pd[i].cert, err, errlen) != 0 ||
				read_file(cfg->paths[i][PATH_KEY], "--tls-key",
				true, &pd[i].key, err, errlen) != 0 ||
				(cfg->paths[i][PATH_OCSP][0] != '\0' &&
				read_file(cfg->paths[i][PATH_OCSP], "--tls-ocsp",
				false, &pd[i].ocsp, err, errlen) != 0) ||
				check_pair(cfg, i, &pd[i], &info[i], err,
				errlen) != 0) {
			pairs_wipe(pd, i + 1);
			return -1;
		}
	}
	return 0;
}

static void
gen_free(struct tls_gen *g)
{
	uint16_t i;

	for (i = 0; i < g->shards; i++) {
		unsigned int p;

		if (g->per[i].creds != NULL)
			gnutls_certificate_free_credentials(g->per[i].creds);
		for (p = 0; p < TLS_PAIRS_MAX; p++)
			if (g->per[i].pair[p] != NULL)
				gnutls_certificate_free_credentials(
						g->per[i].pair[p]);
		if (g->per[i].prio != NULL)
			gnutls_priority_deinit(g->per[i].prio);
	}
	for (i = 0; i < TLS_PAIRS_MAX; i++)
		if (g->crt[i] != NULL)
			gnutls_x509_crt_deinit(g->crt[i]);
	free(g);
}

/* Makes g the current generation, and lets the previous one go. */
static void
gen_publish(struct tls_config *cfg, struct tls_gen *g)
{
	struct tls_gen *old;

	pthread_mutex_lock(&cfg->gen_lock);
	old = cfg->cur;
	cfg->cur = g;
	atomic_store_explicit(&cfg->cur_id, g != NULL ? g->id : 0,
			memory_order_release);
	pthread_mutex_unlock(&cfg->gen_lock);
	tls_gen_release(old);
}

struct tls_gen *
tls_gen_take(struct tls_config *cfg)
{
	struct tls_gen *g;

	pthread_mutex_lock(&cfg->gen_lock);
	g = cfg->cur;
	if (g != NULL)
		atomic_fetch_add_explicit(&g->holders, 1, memory_order_relaxed);
	pthread_mutex_unlock(&cfg->gen_lock);
	return g;
}

void
tls_gen_release(struct tls_gen *g)
{
	if (g != NULL && atomic_fetch_sub_explicit(&g->holders, 1,
			memory_order_acq_rel) == 1)
		gen_free(g);
}

void *
tls_creds_take(struct tls_config *cfg, uint16_t id, void **held)
{
	struct tls_gen *g = tls_gen_take(cfg);

	*held = g;
	if (g == NULL || id >= g->shards) {
		tls_gen_release(g);
		*held = NULL;
		return NULL;
	}
	return g->per[id].creds;
}

void
tls_creds_hold(void *held)
{
	atomic_fetch_add_explicit(&((struct tls_gen *)held)->holders, 1,
			memory_order_relaxed);
}

bool
tls_creds_current(struct tls_config *cfg, const void *held)
{
	return tls_gen_current(cfg, held);
}

void
tls_creds_release(void *held)
{
	tls_gen_release(held);
}

/* The priority string, as GnuTLS reads it: no protocol older than
 * TLS 1.2, and one of 1.2 and 1.3 at least. */
static int
priority_check(gnutls_priority_t p, const char *str, char *err, size_t errlen)
{
	const unsigned int *list;
	int n = gnutls_priority_protocol_list(p, &list), i;
	bool modern = false;

	for (i = 0; i < n; i++) {
		if (list[i] == GNUTLS_TLS1_2 || list[i] == GNUTLS_TLS1_3) {
			modern = true;
			continue;
		}
		if (list[i] < GNUTLS_TLS1_2 || list[i] == GNUTLS_DTLS0_9 ||
				list[i] == GNUTLS_DTLS1_0) {
			snprintf(err, errlen, "--tls-priority '%s' enables %s, "
					"older than TLS 1.2", str,
					gnutls_protocol_get_name(list[i]));
			return -1;
		}
	}
	if (!modern) {
		snprintf(err, errlen, "--tls-priority '%s' enables neither "
				"TLS 1.2 nor TLS 1.3", str);
		return -1;
	}
	return 0;
}

int
tls_priority_load(const char *str, gnutls_priority_t *prio, char *err,
		size_t errlen)
{
	const char *errpos = NULL;
	int rc = gnutls_priority_init(prio, str, &errpos);

	if (rc < 0) {
		*prio = NULL;
		snprintf(err, errlen, "--tls-priority '%s': %s at '%.40s'",
				str, gnutls_strerror(rc),
				errpos != NULL ? errpos : "");
		return -1;
	}
	return priority_check(*prio, str, err, errlen);
}

int
tls_priority_check(const char *str, char *err, size_t errlen)
{
	gnutls_priority_t p;
	int rc = tls_priority_load(str, &p, err, errlen);

	if (p != NULL)
		gnutls_priority_deinit(p);
	return rc;
}

/* Pair i (and its OCSP response) into creds: 0, or -1 with err. */
static int
pair_add(const struct tls_config *cfg, const struct pair_data *pd,
		unsigned int i, gnutls_certificate_credentials_t creds,
		char *err, size_t errlen)
{
	int idx, rc;

	idx = gnutls_certificate_set_x509_key_mem2(creds, &pd[i].cert,
			&pd[i].key, GNUTLS_X509_FMT_PEM, NULL, 0);
	if (idx < 0) {
		snprintf(err, errlen, "--tls-cert %s with --tls-key %s: %s",
				cfg->paths[i][PATH_CERT],
				cfg->paths[i][PATH_KEY], gnutls_strerror(idx));
		return -1;
	}
	if (pd[i].ocsp.size == 0)
		return 0;
	rc = gnutls_certificate_set_ocsp_status_request_mem(creds,
			&pd[i].ocsp, (unsigned int)idx, GNUTLS_X509_FMT_DER);
	if (rc < 0) {
		snprintf(err, errlen, "--tls-ocsp %s: %s",
				cfg->paths[i][PATH_OCSP], gnutls_strerror(rc));
		return -1;
	}
	return 0;
}

static int
creds_new(gnutls_certificate_credentials_t *creds, char *err, size_t errlen)
{
	if (gnutls_certificate_allocate_credentials(creds) < 0) {
		*creds = NULL;
		snprintf(err, errlen, "TLS credentials: out of memory");
		return -1;
	}
	gnutls_certificate_set_flags(*creds, GNUTLS_CERTIFICATE_API_V2);
	return 0;
}

/* Whether a list of names ("a\nb\n") holds name (len bytes, its '\n'
 * included). */
static bool
has_name(const char *list, const char *name, size_t len)
{
	const char *q;

	for (q = list; *q != '\0'; q = strchr(q, '\n') + 1)
		if (strncmp(q, name, len) == 0)
			return true;
	return false;
}

/* Whether two lists of names hold the same names. */
static bool
same_names(const char *a, const char *b)
{
	const char *p, *e;
	size_t na = 0, nb = 0;

	for (p = a; (e = strchr(p, '\n')) != NULL; p = e + 1, na++)
		if (!has_name(b, p, (size_t)(e - p + 1)))
			return false;
	for (p = b; (p = strchr(p, '\n')) != NULL; p++)
		nb++;
	return na == nb && na > 0;
}

/* Pair i with every pair of the same names, i first. */
static int
pair_creds(const struct tls_config *cfg, const struct pair_data *pd,
		const char (*names)[512], unsigned int i,
		gnutls_certificate_credentials_t *creds, char *err, size_t errlen)
{
	unsigned int j;

	if (creds_new(creds, err, errlen) != 0 ||
			pair_add(cfg, pd, i, *creds, err, errlen) != 0)
		return -1;
	for (j = 0; j < cfg->conf.n_pairs; j++)
		if (j != i && same_names(names[i], names[j]) &&
				pair_add(cfg, pd, j, *creds, err, errlen) != 0)
			return -1;
	return 0;
}

/* One shard's credentials: every pair (the first the default), its OCSP
 * response, and the priority cache; with several pairs, each with its
 * namesakes too. */
static int
creds_build(const struct tls_config *cfg, const struct pair_data *pd,
		const char (*names)[512], struct tls_shard_creds *sc, char *err,
		size_t errlen)
{
	unsigned int i, n = cfg->conf.n_pairs;

	if (tls_priority_load(cfg->priority, &sc->prio, err, errlen) != 0 ||
			creds_new(&sc->creds, err, errlen) != 0)
		return -1;
	for (i = 0; i < n; i++)
		if (pair_add(cfg, pd, i, sc->creds, err, errlen) != 0 ||
				(n > 1 && pair_creds(cfg, pd, names, i,
				&sc->pair[i], err, errlen) != 0))
			return -1;
	return 0;
}

/* A certificate's DNS names, each ending '\n' (those that fit). */
static void
dns_names(gnutls_x509_crt_t crt, char *out, size_t cap)
{
	size_t used = 0;
	unsigned int i;

	out[0] = '\0';
	for (i = 0; ; i++) {
		char name[256];
		size_t len = sizeof(name) - 1;
		int type = gnutls_x509_crt_get_subject_alt_name(crt, i, name,
				&len, NULL);

		if (type < 0)
			break;
		if (type != GNUTLS_SAN_DNSNAME || used + len + 2 > cap)
			continue;
		memcpy(out + used, name, len);
		used += len;
		out[used++] = '\n';
		out[used] = '\0';
	}
}

/* Each pair's certificate (the first of its chain) and names, for
 * tls_gen_pick() and the pairs' credentials. */
static int
crts_load(struct tls_gen *g, const struct pair_data *pd, unsigned int n,
		char *err, size_t errlen)
{
	unsigned int i;

	g->n_pairs = (uint16_t)n;
	for (i = 0; i < n; i++) {
		if (gnutls_x509_crt_init(&g->crt[i]) < 0 ||
				gnutls_x509_crt_import(g->crt[i], &pd[i].cert,
				GNUTLS_X509_FMT_PEM) < 0) {
			snprintf(err, errlen, "TLS certificate %u: unreadable",
					i + 1);
			return -1;
		}
		dns_names(g->crt[i], g->names[i], sizeof(g->names[i]));
	}
	return 0;
}

int
tls_gen_pick(const struct tls_gen *g, const char *host)
{
	static const unsigned int passes[] = {
		GNUTLS_VERIFY_DO_NOT_ALLOW_WILDCARDS, 0,
	};
	unsigned int p, i;

	for (p = 0; p < 2; p++)
		for (i = 0; i < g->n_pairs; i++)
			if (g->crt[i] != NULL && gnutls_x509_crt_check_hostname2(
					g->crt[i], host, passes[p]) != 0)
				return p == 0 ? -1 : (int)i;
	return -1;
}

/* A new generation from the files as they are now: every shard's. */
static struct tls_gen *
gen_load(struct tls_config *cfg, struct tls_cert_info *info, char *err,
		size_t errlen)
{
	struct pair_data pd[TLS_PAIRS_MAX];
	uint16_t shards = cfg->conf.shards ? cfg->conf.shards : 1, i;
	struct tls_gen *g;

	if (pairs_read(cfg, pd, info, err, errlen) != 0)
		return NULL;
	g = calloc(1, sizeof(*g) + sizeof(g->per[0]) * shards);
	if (g == NULL) {
		snprintf(err, errlen, "TLS credentials: out of memory");
		pairs_wipe(pd, cfg->conf.n_pairs);
		return NULL;
	}
	g->shards = shards;
	if (crts_load(g, pd, cfg->conf.n_pairs, err, errlen) != 0) {
		pairs_wipe(pd, cfg->conf.n_pairs);
		gen_free(g);
		return NULL;
	}
	for (i = 0; i < shards; i++)
		if (creds_build(cfg, pd, g->names, &g->per[i], err,
				errlen) != 0) {
			pairs_wipe(pd, cfg->conf.n_pairs);
			gen_free(g);
			return NULL;
		}
	pairs_wipe(pd, cfg->conf.n_pairs);
	g->id = ++cfg->next_gen;
	atomic_init(&g->holders, 1);	/* the configuration's */
	return g;
}

static int
ticket_key_new(struct tls_config *cfg, uint64_t now_s)
{
	uint64_t seq = atomic_load_explicit(&cfg->key_seq, memory_order_relaxed);
	uint8_t *slot = cfg->keys[(seq + 1) % TLS_TICKET_KEYS];
	gnutls_datum_t k = { NULL, 0 };

	if (gnutls_session_ticket_key_generate(&k) < 0 ||
			k.size != TLS_TICKET_KEY_LEN) {
		gnutls_free(k.data);
		return -1;
	}
	memcpy(slot, k.data, TLS_TICKET_KEY_LEN);
	gnutls_memset(k.data, 0, k.size);
	gnutls_free(k.data);
	atomic_store_explicit(&cfg->key_seq, seq + 1, memory_order_release);
	cfg->key_born_s = now_s;
	return 0;
}

void
tls_ticket_key(struct tls_config *cfg, uint8_t key[TLS_TICKET_KEY_LEN])
{
	uint64_t seq = atomic_load_explicit(&cfg->key_seq, memory_order_acquire);

	/* Rotations write the next slot only: this one stays whole for
	 * TLS_TICKET_KEYS - 1 of them. */
	memcpy(key, cfg->keys[seq % TLS_TICKET_KEYS], TLS_TICKET_KEY_LEN);
}

static int
copy_path(char *dst, const char *src, const char *what, char *err,
		size_t errlen)
{
	if (src == NULL) {
		dst[0] = '\0';
		return 0;
	}
	if (src[0] == '\0' || strlen(src) >= 4096) {
		snprintf(err, errlen, "%s '%s': not a usable path", what, src);
		return -1;
	}
	strcpy(dst, src);
	return 0;
}

struct tls_config *
tls_config_create(const struct tls_conf *conf, char *err, size_t errlen)
{
	struct tls_config *cfg;
	struct tls_gen *g;
	unsigned int i;

	if (conf->n_pairs == 0 || conf->n_pairs > TLS_PAIRS_MAX) {
		snprintf(err, errlen, "TLS needs 1 to %d --tls-cert/--tls-key "
				"pairs", TLS_PAIRS_MAX);
		return NULL;
	}
	cfg = calloc(1, sizeof(*cfg));
	if (cfg == NULL) {
		snprintf(err, errlen, "TLS: out of memory");
		return NULL;
	}
	cfg->conf = *conf;
	pthread_mutex_init(&cfg->info_lock, NULL);
	pthread_mutex_init(&cfg->gen_lock, NULL);
	snprintf(cfg->priority, sizeof(cfg->priority), "%s",
			conf->priority != NULL ? conf->priority :
			TLS_PRIORITY_DEFAULT);
	for (i = 0; i < conf->n_pairs; i++)
		if (copy_path(cfg->paths[i][PATH_CERT], conf->pairs[i].cert,
				"--tls-cert", err, errlen) != 0 ||
				copy_path(cfg->paths[i][PATH_KEY],
				conf->pairs[i].key, "--tls-key", err,
				errlen) != 0 ||
				copy_path(cfg->paths[i][PATH_OCSP],
				conf->pairs[i].ocsp, "--tls-ocsp", err,
				errlen) != 0)
			goto fail;
	if (ticket_key_new(cfg, (uint64_t)time(NULL)) != 0) {
		snprintf(err, errlen, "TLS: no ticket key could be made");
		goto fail;
	}
	g = gen_load(cfg, cfg->info.certs, err, errlen);
	if (g == NULL)
		goto fail;
	cfg->info.n_certs = conf->n_pairs;
	cfg->info.generation = g->id;
	snprintf(cfg->info.priority, sizeof(cfg->info.priority), "%s",
			cfg->priority);
	gen_publish(cfg, g);
	return cfg;
fail:
	pthread_mutex_destroy(&cfg->info_lock);
	pthread_mutex_destroy(&cfg->gen_lock);
	gnutls_memset(cfg->keys, 0, sizeof(cfg->keys));
	free(cfg);
	return NULL;
}

void
tls_config_destroy(struct tls_config *cfg)
{
	if (cfg == NULL)
		return;
	gen_publish(cfg, NULL);
	pthread_mutex_destroy(&cfg->info_lock);
	pthread_mutex_destroy(&cfg->gen_lock);
	gnutls_memset(cfg->keys, 0, sizeof(cfg->keys));
	free(cfg);
}

int
tls_config_reload(struct tls_config *cfg, char *err, size_t errlen)
{
	struct tls_cert_info info[TLS_PAIRS_MAX];
	struct tls_gen *g = gen_load(cfg, info, err, errlen);

	pthread_mutex_lock(&cfg->info_lock);
	if (g == NULL) {
		cfg->info.reload_failures++;
		pthread_mutex_unlock(&cfg->info_lock);
		return -1;
	}
	memcpy(cfg->info.certs, info, sizeof(info));
	cfg->info.generation = g->id;
	cfg->info.reloads++;
	pthread_mutex_unlock(&cfg->info_lock);
	gen_publish(cfg, g);
	return 0;
}

bool
tls_config_tick(struct tls_config *cfg, uint64_t now_s)
{
	bool rotated = false;

	if (cfg->conf.ticket_rotate_s == 0 ||
			now_s - cfg->key_born_s < cfg->conf.ticket_rotate_s)
		return false;
	pthread_mutex_lock(&cfg->info_lock);	/* key_born_s: info's too */
	if (ticket_key_new(cfg, now_s) == 0) {
		cfg->info.ticket_rotations++;
		rotated = true;
	}
	pthread_mutex_unlock(&cfg->info_lock);
	return rotated;
}

void
tls_config_info(struct tls_config *cfg, struct tls_config_info *info)
{
	pthread_mutex_lock(&cfg->info_lock);
	*info = cfg->info;
	info->ticket_key_age_s = (uint64_t)time(NULL) - cfg->key_born_s;
	pthread_mutex_unlock(&cfg->info_lock);
}
