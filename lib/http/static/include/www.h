/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Static files, read into memory once at start-up and shared read-only by
 * every shard. Regular files under the root are loaded; symbolic links,
 * to files or directories, are followed when they resolve inside the
 * root, so no request can reach outside it, and a directory met again
 * below itself (a loop) is not entered twice. Whatever the walk leaves
 * out is reported, one call per path with the reason. Each file carries
 * what its answers need: media type, validators (a strong ETag from its
 * bytes, Last-Modified), Cache-Control, and its precompressed siblings
 * ("a.js.br", "a.js.gz" beside "a.js").
 */
#ifndef EWYK_WWW_H
#define EWYK_WWW_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mime.h"

#define WWW_MAX_DEPTH 64	/* directory levels below the root */
#define WWW_MAX_ENTRIES (1u << 22)	/* files and directories */
#define WWW_CACHE_CONTROL_MAX 255	/* a Cache-Control value's length */

/* Precompressed siblings, in the order of preference on a tie. */
enum www_coding {
	WWW_BR,		/* "NAME.br", Content-Encoding: br */
	WWW_GZIP,	/* "NAME.gz", Content-Encoding: gzip */
	WWW_CODINGS,
};

struct http_field_block;

struct www_file {
	char *path;		/* URL path, "/dir/name.ext", decoded */
	uint8_t *data;
	uint64_t size;
	const char *content_type;
	const char *cache_control;	/* NULL: none configured */
	int64_t mtime;		/* seconds; never after the load */
	/* Its precompressed siblings (NULL: none); the selected one is the
	 * representation: its bytes, ETag and Last-Modified. */
	const struct www_file *coded[WWW_CODINGS];
	/* The fields of every answer of each representation (by coding,
	 * WWW_CODINGS for identity): the first head_fields in all (ETag,
	 * Accept-Ranges, Vary, Cache-Control), the others in those with
	 * content (Last-Modified, Content-Type, Content-Encoding). */
	struct http_field_block *fields[WWW_CODINGS + 1];
	uint32_t path_len;
	uint8_t head_fields;
	uint16_t cache_control_len;
	uint8_t etag_len;	/* lengths: answers copy them */
	uint8_t content_type_len;
	bool dir;		/* a directory: "/dir" answers 301 "/dir/" */
	bool has_coded;		/* some sibling: every answer says Vary */
	bool date_strong;	/* Last-Modified is a strong validator (RFC
				 * 9110 8.8.2.2): a second older than the load */
	char etag[24];		/* strong, quoted */
	char last_modified[30];	/* an IMF-fixdate (http_date.h) */
};

/* Told of each path the walk leaves out, and why. */
typedef void (*www_skipped_fn)(void *arg, const char *fs_path,
		const char *why);

struct www_conf {
	const char *root;
	uint64_t max_bytes;	/* of all files together: more fails */
	const char *mime_types;	/* a mime.types file: NULL the default,
				 * "" none (the built-in table) */
	const char *const *mime_overrides;	/* "EXT=TYPE" each */
	uint32_t n_mime_overrides;
	const char *const *cache_control;	/* "PREFIX=VALUE" each */
	uint32_t n_cache_control;
	www_skipped_fn skipped;	/* NULL: a line on stderr */
	void *skipped_arg;
};

struct www {
	struct www_file *files;	/* and directories */
	uint32_t n;
	uint32_t cap;
	uint32_t nfiles;	/* of them files */
	uint32_t skipped;	/* paths left out */
	uint32_t *index;	/* file + 1, 0 = empty; open addressing */
	uint32_t mask;
	uint64_t bytes;
	uint64_t max_bytes;
	struct mime_table types;
	char root[PATH_MAX];	/* resolved */
};

/* Loads every file under conf->root. Returns 0, or -1 with a message in
 * err (the root unusable, the files over max_bytes, a bad rule). */
int www_load(struct www *w, const struct www_conf *conf, char *err,
		size_t errlen);
void www_free(struct www *w);

/* Whether "PREFIX=VALUE" is a Cache-Control rule www_load() takes: a
 * prefix starting with '/', a value of visible characters and spaces.
 * Returns 0, or -1 with the reason in err. */
int www_cache_control_check(const char *rule, char *err, size_t errlen);

/*
 * Maps a request path (still percent-encoded, without the query) to a file
 * or a directory. "/" and "/dir/" map to their index.html, "/dir" to the
 * directory itself. Returns NULL when there is no such file or the path
 * is unsafe ("..", encoded NUL or slash).
 */
const struct www_file *www_find(const struct www *w, const char *path,
		size_t len);

#endif /* EWYK_WWW_H */
