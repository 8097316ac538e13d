/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Static files, read into memory once at start-up and shared read-only by
 * every shard. Only regular files under the root are loaded; a symbolic
 * link is followed only if it resolves inside the root, so no request can
 * reach outside it.
 */
#ifndef EWYK_WWW_H
#define EWYK_WWW_H

#include <stddef.h>
#include <stdint.h>

struct www_file {
	char *path;		/* URL path, "/dir/name.ext" */
	uint32_t path_len;
	uint8_t *data;
	uint64_t size;
	const char *content_type;
	char etag[24];		/* strong, quoted */
	uint8_t etag_len;	/* their lengths: answers copy them */
	uint8_t content_type_len;
};

struct www {
	struct www_file *files;
	uint32_t n;
	uint32_t cap;
	uint32_t *index;	/* file + 1, 0 = empty; open addressing */
	uint32_t mask;
	uint64_t bytes;
	uint64_t max_bytes;
	char root[4096];	/* resolved */
};

/* Loads every file under root. Returns 0, or -1 with a message in err. */
int www_load(struct www *w, const char *root, uint64_t max_bytes, char *err,
		size_t errlen);
void www_free(struct www *w);

#endif /* EWYK_WWW_H */
