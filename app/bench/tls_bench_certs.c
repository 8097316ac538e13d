/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The run's certificates: an ECDSA P-256 and an RSA-2048 key, each with a
 * self-signed certificate for "localhost", made in memory with libcrypto
 * at start-up and handed to every library as PEM. Nothing is written to
 * disk, nothing secret is kept.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "tls_bench.h"

static char *
bio_text(BIO *b)
{
	char *data;
	long n = BIO_get_mem_data(b, &data);
	char *s = n > 0 ? malloc((size_t)n + 1) : NULL;

	if (s != NULL) {
		memcpy(s, data, (size_t)n);
		s[n] = '\0';
	}
	return s;
}

static int
self_signed(EVP_PKEY *pk, char **cert, char **key)
{
	X509 *x = X509_new();
	X509_NAME *name;
	BIO *cb = BIO_new(BIO_s_mem()), *kb = BIO_new(BIO_s_mem());
	int rc = -1;

	if (x == NULL || cb == NULL || kb == NULL)
		goto out;
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 7 * 24 * 3600);
	name = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
			(const unsigned char *)"localhost", -1, -1, 0);
	X509_set_issuer_name(x, name);
	X509_set_pubkey(x, pk);
	if (X509_sign(x, pk, EVP_sha256()) == 0 ||
			PEM_write_bio_X509(cb, x) != 1 ||
			PEM_write_bio_PrivateKey(kb, pk, NULL, NULL, 0, NULL,
					NULL) != 1)
		goto out;
	*cert = bio_text(cb);
	*key = bio_text(kb);
	rc = *cert != NULL && *key != NULL ? 0 : -1;
out:
	X509_free(x);
	BIO_free(cb);
	BIO_free(kb);
	return rc;
}

int
tb_creds_make(struct tb_creds *c)
{
	EVP_PKEY *ec = EVP_EC_gen("P-256");
	EVP_PKEY *rsa = EVP_RSA_gen(2048);
	int rc = -1;

	memset(c, 0, sizeof(*c));
	if (ec != NULL && rsa != NULL &&
			self_signed(ec, &c->cert[TB_ECDSA_P256],
				&c->key[TB_ECDSA_P256]) == 0 &&
			self_signed(rsa, &c->cert[TB_RSA_2048],
				&c->key[TB_RSA_2048]) == 0)
		rc = 0;
	else
		ERR_print_errors_fp(stderr);
	EVP_PKEY_free(ec);
	EVP_PKEY_free(rsa);
	return rc;
}

void
tb_creds_free(struct tb_creds *c)
{
	for (int i = 0; i < 2; i++) {
		free(c->cert[i]);
		free(c->key[i]);
	}
}
