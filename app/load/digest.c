/* SPDX-License-Identifier: BSD-3-Clause */
#include "digest.h"

#ifdef LOAD_HAVE_LIBCRYPTO
#include <openssl/evp.h>

bool
digest_available(void)
{
	return true;
}

struct digest *
digest_new(void)
{
	return (struct digest *)EVP_MD_CTX_new();
}

void
digest_free(struct digest *d)
{
	EVP_MD_CTX_free((EVP_MD_CTX *)d);
}

void
digest_begin(struct digest *d)
{
	EVP_DigestInit_ex((EVP_MD_CTX *)d, EVP_sha256(), NULL);
}

void
digest_update(struct digest *d, const void *p, size_t n)
{
	EVP_DigestUpdate((EVP_MD_CTX *)d, p, n);
}

int
digest_end(struct digest *d, uint8_t out[32])
{
	unsigned int len = 0;

	return EVP_DigestFinal_ex((EVP_MD_CTX *)d, out, &len) == 1 &&
		len == 32 ? 0 : -1;
}
#else
bool
digest_available(void)
{
	return false;
}

struct digest *
digest_new(void)
{
	return NULL;
}

void
digest_free(struct digest *d)
{
	(void)d;
}

void
digest_begin(struct digest *d)
{
	(void)d;
}

void
digest_update(struct digest *d, const void *p, size_t n)
{
	(void)d;
	(void)p;
	(void)n;
}

int
digest_end(struct digest *d, uint8_t out[32])
{
	(void)d;
	(void)out;
	return -1;
}
#endif
