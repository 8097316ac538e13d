/* SPDX-License-Identifier: BSD-3-Clause */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http_priv.h"

#define WWW_MAX_DEPTH 16

static const struct {
	const char *ext;
	const char *type;
} types[] = {
	{ "html", "text/html; charset=utf-8" },
	{ "htm", "text/html; charset=utf-8" },
	{ "txt", "text/plain; charset=utf-8" },
	{ "css", "text/css" },
	{ "js", "text/javascript" },
	{ "json", "application/json" },
	{ "xml", "application/xml" },
	{ "svg", "image/svg+xml" },
	{ "png", "image/png" },
	{ "jpg", "image/jpeg" },
	{ "jpeg", "image/jpeg" },
	{ "gif", "image/gif" },
	{ "webp", "image/webp" },
	{ "ico", "image/x-icon" },
	{ "wasm", "application/wasm" },
	{ "pdf", "application/pdf" },
	{ "gz", "application/gzip" },
};

static const char *
www_content_type(const char *name)
{
	const char *dot = strrchr(name, '.');
	size_t i;

	if (dot != NULL && strchr(dot, '/') == NULL)
		for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			if (strcasecmp(dot + 1, types[i].ext) == 0)
				return types[i].type;
	return "application/octet-stream";
}

static uint64_t
fnv1a(const void *p, size_t n, uint64_t h)
{
	const uint8_t *b = p;

	while (n--) {
		h ^= *b++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

#define FNV_BASIS 0xcbf29ce484222325ULL

static int
read_all(const char *fs_path, uint8_t **data, uint64_t *size)
{
	struct stat st;
	uint64_t got = 0;
	int fd = open(fs_path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return -1;
	}
	*data = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
	if (*data == NULL) {
		close(fd);
		return -1;
	}
	while (got < (uint64_t)st.st_size) {
		ssize_t r = read(fd, *data + got, (size_t)st.st_size - got);

		if (r <= 0) {
			free(*data);
			close(fd);
			return -1;
		}
		got += (uint64_t)r;
	}
	close(fd);
	*size = got;
	return 0;
}

static int
add_file(struct www *w, const char *url, const char *fs_path, char *err,
		size_t errlen)
{
	struct www_file *f;

	if (w->n == w->cap) {
		uint32_t cap = w->cap ? 2 * w->cap : 64;
		struct www_file *nf = realloc(w->files, cap * sizeof(*nf));

		if (nf == NULL) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		w->files = nf;
		w->cap = cap;
	}
	f = &w->files[w->n];
	memset(f, 0, sizeof(*f));
	if (read_all(fs_path, &f->data, &f->size) != 0) {
		snprintf(err, errlen, "%s: %s", fs_path, strerror(errno));
		return -1;
	}
	if (w->bytes + f->size > w->max_bytes) {
		free(f->data);
		snprintf(err, errlen, "%s: the static files exceed %llu bytes",
				fs_path, (unsigned long long)w->max_bytes);
		return -1;
	}
	f->path = strdup(url);
	if (f->path == NULL) {
		free(f->data);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	f->path_len = (uint32_t)strlen(url);
	f->content_type = www_content_type(url);
	f->content_type_len = (uint8_t)strlen(f->content_type);
	f->etag_len = (uint8_t)snprintf(f->etag, sizeof(f->etag), "\"%016llx\"",
			(unsigned long long)fnv1a(f->data, f->size,
			fnv1a(&f->size, 8, FNV_BASIS)));
	w->bytes += f->size;
	w->n++;
	return 0;
}

/* True if the resolved path lies inside the resolved root. */
static bool
inside_root(const struct www *w, const char *fs_path)
{
	char real[PATH_MAX];
	size_t n = strlen(w->root);

	if (realpath(fs_path, real) == NULL)
		return false;
	return strncmp(real, w->root, n) == 0 && (real[n] == '/' || real[n] == 0);
}

static int
walk(struct www *w, const char *dir, const char *url, int depth, char *err,
		size_t errlen)
{
	struct dirent *de;
	DIR *d;
	int rc = 0;

	if (depth > WWW_MAX_DEPTH)
		return 0;
	d = opendir(dir);
	if (d == NULL) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		char fs_path[PATH_MAX], sub[PATH_MAX];
		struct stat st;

		if (de->d_name[0] == '.')
			continue;	/* hidden files and . / .. are not served */
		if (snprintf(fs_path, sizeof(fs_path), "%s/%s", dir, de->d_name) >=
				(int)sizeof(fs_path) ||
				snprintf(sub, sizeof(sub), "%s/%s", url, de->d_name) >=
				(int)sizeof(sub))
			continue;
		if (lstat(fs_path, &st) != 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			if (!inside_root(w, fs_path) || stat(fs_path, &st) != 0) {
				fprintf(stderr, "ewyk: www: skipping %s: link leads "
						"outside %s\n", fs_path, w->root);
				continue;
			}
			if (S_ISDIR(st.st_mode))
				continue;	/* no directory links: no cycles */
		}
		if (S_ISDIR(st.st_mode))
			rc = walk(w, fs_path, sub, depth + 1, err, errlen);
		else if (S_ISREG(st.st_mode))
			rc = add_file(w, sub, fs_path, err, errlen);
	}
	closedir(d);
	return rc;
}

static uint32_t
path_hash(const char *p, size_t n)
{
	return (uint32_t)fnv1a(p, n, FNV_BASIS);
}

static int
build_index(struct www *w, char *err, size_t errlen)
{
	uint32_t size = 16, i;

	while (size < 2 * w->n)
		size <<= 1;
	w->index = calloc(size, sizeof(*w->index));
	if (w->index == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	w->mask = size - 1;
	for (i = 0; i < w->n; i++) {
		uint32_t h = path_hash(w->files[i].path, w->files[i].path_len) &
			w->mask;

		while (w->index[h] != 0)
			h = (h + 1) & w->mask;
		w->index[h] = i + 1;
	}
	return 0;
}

int
www_load(struct www *w, const char *root, uint64_t max_bytes, char *err,
		size_t errlen)
{
	struct stat st;

	memset(w, 0, sizeof(*w));
	w->max_bytes = max_bytes;
	if (realpath(root, w->root) == NULL || stat(w->root, &st) != 0) {
		snprintf(err, errlen, "%s: %s", root, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: not a directory", root);
		return -1;
	}
	if (walk(w, w->root, "", 0, err, errlen) != 0 ||
			build_index(w, err, errlen) != 0) {
		www_free(w);
		return -1;
	}
	return 0;
}

void
www_free(struct www *w)
{
	uint32_t i;

	for (i = 0; i < w->n; i++) {
		free(w->files[i].path);
		free(w->files[i].data);
	}
	free(w->files);
	free(w->index);
	memset(w, 0, sizeof(*w));
}

/* Percent-decodes into out and refuses what could escape the root. */
static long
decode_path(const char *in, size_t len, char *out, size_t cap)
{
	size_t i, o = 0;

	if (len == 0 || in[0] != '/')
		return -1;
	for (i = 0; i < len; i++) {
		char c = in[i];

		if (c == '%') {
			int hi, lo;

			if (i + 2 >= len)
				return -1;
			hi = http_hex_digit((unsigned char)in[i + 1]);
			lo = http_hex_digit((unsigned char)in[i + 2]);
			if (hi < 0 || lo < 0)
				return -1;
			c = (char)(hi << 4 | lo);
			if (c == 0 || c == '/' || c == '\\')
				return -1;	/* encoded separators stay out */
			i += 2;
		}
		if (c == '\\' || o + 1 >= cap)
			return -1;
		out[o++] = c;
	}
	out[o] = 0;
	/* No "." or ".." segment, no empty segment ("//"). */
	for (i = 0; i < o; i++) {
		if (out[i] != '/')
			continue;
		if (out[i + 1] == '/')
			return -1;
		if (out[i + 1] == '.' && (out[i + 2] == '/' || out[i + 2] == 0 ||
				(out[i + 2] == '.' &&
				 (out[i + 3] == '/' || out[i + 3] == 0))))
			return -1;
	}
	return (long)o;
}

static const struct www_file *
lookup(const struct www *w, const char *p, size_t n)
{
	uint32_t h, slot;

	if (w->index == NULL)
		return NULL;
	for (h = path_hash(p, n) & w->mask; (slot = w->index[h]) != 0;
			h = (h + 1) & w->mask) {
		const struct www_file *f = &w->files[slot - 1];

		if (f->path_len == n && memcmp(f->path, p, n) == 0)
			return f;
	}
	return NULL;
}

/* A path decode_path() would leave as it is, and that names a file rather
 * than a directory's index: looked up in place. Anything else ("%", a "/"
 * followed by "/" or ".") takes the long way. */
static bool
plain_path(const char *p, size_t len, size_t cap)
{
	size_t i;

	if (len == 0 || len >= cap || p[0] != '/' || p[len - 1] == '/')
		return false;
	for (i = 0; i < len; i++)
		if (p[i] == '%' || p[i] == '\\' || (p[i] == '/' &&
				(p[i + 1] == '/' || p[i + 1] == '.')))
			return false;	/* p[i + 1]: the path ends in no "/" */
	return true;
}

const struct www_file *
www_find(const struct www *w, const char *path, size_t len)
{
	char buf[1024 + 16];
	long n;

	if (plain_path(path, len, sizeof(buf) - 16))
		return lookup(w, path, len);
	n = decode_path(path, len, buf, sizeof(buf) - 16);

	if (n < 0)
		return NULL;
	if (buf[n - 1] == '/') {
		memcpy(buf + n, "index.html", 11);
		n += 10;
	}
	return lookup(w, buf, (size_t)n);
}
