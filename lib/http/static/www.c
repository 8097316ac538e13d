/* SPDX-License-Identifier: BSD-3-Clause */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "http_date.h"
#include "http_fields.h"
#include "http_token.h"
#include "www.h"

_Static_assert(sizeof(((struct www_file *)0)->last_modified) ==
		HTTP_DATE_LEN + 1, "a file's Last-Modified is an IMF-fixdate");

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

/* The walk's state: one path buffer of each kind, extended and cut back
 * level by level, and the directories on the way down (for loops). */
struct walk {
	struct www *w;
	const struct www_conf *conf;
	int64_t now;
	char fs[PATH_MAX];	/* the file system's path */
	char url[PATH_MAX];	/* the URL path, decoded */
	struct {
		dev_t dev;
		ino_t ino;
	} up[WWW_MAX_DEPTH + 1];
	int depth;
	char *err;
	size_t errlen;
};

#define STR_(x) #x
#define STR(x) STR_(x)

static void
tell(const struct www_conf *conf, const char *fs_path, const char *why)
{
	if (conf->skipped != NULL)
		conf->skipped(conf->skipped_arg, fs_path, why);
	else
		fprintf(stderr, "ewyk: www: skipped %s: %s\n", fs_path, why);
}

static void
skip(const struct walk *k, const char *why)
{
	k->w->skipped++;
	tell(k->conf, k->fs, why);
}

/* Reads the file whole. 0, or an errno (EAGAIN: it changed meanwhile). */
static int
read_all(const char *fs_path, uint8_t **data, uint64_t *size,
		int64_t *mtime)
{
	struct stat st;
	uint64_t got = 0;
	int fd = open(fs_path, O_RDONLY | O_CLOEXEC), e;

	if (fd < 0)
		return errno;
	if (fstat(fd, &st) != 0) {
		e = errno;
		close(fd);
		return e;
	}
	*data = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
	if (*data == NULL) {
		close(fd);
		return ENOMEM;
	}
	while (got < (uint64_t)st.st_size) {
		ssize_t r = read(fd, *data + got, (size_t)st.st_size - got);

		if (r <= 0) {
			e = r < 0 ? errno : EAGAIN;
			free(*data);
			close(fd);
			return e;
		}
		got += (uint64_t)r;
	}
	close(fd);
	*size = got;
	*mtime = (int64_t)st.st_mtim.tv_sec;
	return 0;
}

static struct www_file *
new_entry(struct walk *k)
{
	struct www *w = k->w;
	struct www_file *f;

	if (w->n == WWW_MAX_ENTRIES) {
		snprintf(k->err, k->errlen, "%s: more than %u files and "
				"directories", w->root, WWW_MAX_ENTRIES);
		return NULL;
	}
	if (w->n == w->cap) {
		uint32_t cap = w->cap ? 2 * w->cap : 64;
		struct www_file *nf = realloc(w->files, cap * sizeof(*nf));

		if (nf == NULL) {
			snprintf(k->err, k->errlen, "out of memory");
			return NULL;
		}
		w->files = nf;
		w->cap = cap;
	}
	f = &w->files[w->n];
	memset(f, 0, sizeof(*f));
	f->path = strdup(k->url);
	if (f->path == NULL) {
		snprintf(k->err, k->errlen, "out of memory");
		return NULL;
	}
	f->path_len = (uint32_t)strlen(k->url);
	w->n++;
	return f;
}

/* The Cache-Control of the longest rule whose prefix the path has. */
static void
cache_control_of(const struct www_conf *conf, struct www_file *f)
{
	size_t best = 0;
	uint32_t i;

	for (i = 0; i < conf->n_cache_control; i++) {
		const char *r = conf->cache_control[i], *eq = strchr(r, '=');
		size_t pl = (size_t)(eq - r);

		if (pl > best && pl <= f->path_len &&
				memcmp(f->path, r, pl) == 0) {
			best = pl;
			f->cache_control = eq + 1;
			f->cache_control_len = (uint16_t)strlen(eq + 1);
		}
	}
}

/* A regular file: 0 when loaded or left out (told), -1 to stop. */
static int
add_file(struct walk *k, uint64_t size)
{
	struct www *w = k->w;
	struct www_file *f;
	uint8_t *data = NULL;
	int64_t mtime = 0;
	char why[128];
	int e;

	if (size > w->max_bytes) {
		snprintf(why, sizeof(why), "too large (%llu bytes, over the "
				"static files' limit alone)",
				(unsigned long long)size);
		skip(k, why);
		return 0;
	}
	e = read_all(k->fs, &data, &size, &mtime);
	if (e != 0) {
		snprintf(why, sizeof(why), "unreadable: %s", e == EAGAIN ?
				"it changed while read" : strerror(e));
		skip(k, why);
		return 0;
	}
	if (w->bytes + size > w->max_bytes) {
		free(data);
		snprintf(k->err, k->errlen, "%s: the static files exceed %llu "
				"bytes", k->fs, (unsigned long long)w->max_bytes);
		return -1;
	}
	f = new_entry(k);
	if (f == NULL) {
		free(data);
		return -1;
	}
	f->data = data;
	f->size = size;
	/* RFC 9110 8.8.2.1: never a Last-Modified after the answer's Date;
	 * and 8.8.2.2: a date is a strong validator only when the file
	 * cannot have changed twice within its second. */
	f->mtime = mtime < k->now ? mtime : k->now;
	f->date_strong = f->mtime + 1 < k->now;
	http_date_format(f->mtime > 0 ? f->mtime : 0, f->last_modified);
	f->content_type = mime_type_of(&w->types, f->path);
	f->content_type_len = (uint8_t)strlen(f->content_type);
	f->etag_len = (uint8_t)snprintf(f->etag, sizeof(f->etag), "\"%016llx\"",
			(unsigned long long)fnv1a(f->data, f->size,
			fnv1a(&f->size, 8, FNV_BASIS)));
	cache_control_of(k->conf, f);
	w->bytes += size;
	w->nfiles++;
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

static int walk_dir(struct walk *k);

/* A directory below the root: walked (and recorded, for "/dir" ->
 * "/dir/"), unless it is too deep or one of its own ancestors. */
static int
enter_dir(struct walk *k, const struct stat *st)
{
	int i, rc;

	if (k->depth == WWW_MAX_DEPTH) {
		skip(k, "too deep (more than " STR(WWW_MAX_DEPTH) " directory levels)");
		return 0;
	}
	for (i = 0; i <= k->depth; i++)
		if (k->up[i].dev == st->st_dev && k->up[i].ino == st->st_ino) {
			skip(k, "a link loop (leads to a directory above it)");
			return 0;
		}
	k->depth++;
	k->up[k->depth].dev = st->st_dev;
	k->up[k->depth].ino = st->st_ino;
	rc = walk_dir(k);
	k->depth--;
	return rc;
}

/* One entry of a directory, its paths in k->fs and k->url. */
static int
walk_entry(struct walk *k)
{
	struct stat st;
	char why[64];

	if (lstat(k->fs, &st) != 0) {
		snprintf(why, sizeof(why), "unreadable: %s", strerror(errno));
		skip(k, why);
		return 0;
	}
	if (S_ISLNK(st.st_mode)) {
		if (stat(k->fs, &st) != 0) {
			snprintf(why, sizeof(why), "a link to nothing: %s",
					strerror(errno));
			skip(k, why);
			return 0;
		}
		if (!inside_root(k->w, k->fs)) {
			skip(k, "a link leading outside the root");
			return 0;
		}
	}
	if (S_ISDIR(st.st_mode))
		return enter_dir(k, &st);
	if (S_ISREG(st.st_mode))
		return add_file(k, (uint64_t)st.st_size);
	skip(k, "a special file (not a regular file, directory or link)");
	return 0;
}

static int
walk_dir(struct walk *k)
{
	size_t fl = strlen(k->fs), ul = strlen(k->url);
	struct dirent *de;
	char why[64];
	int rc = 0;
	DIR *d;

	d = opendir(k->fs);
	if (d == NULL) {
		if (k->depth == 0) {
			snprintf(k->err, k->errlen, "%s: %s", k->fs,
					strerror(errno));
			return -1;
		}
		snprintf(why, sizeof(why), "unreadable: %s", strerror(errno));
		skip(k, why);
		return 0;
	}
	if (k->depth > 0) {
		struct www_file *dir = new_entry(k);

		if (dir == NULL) {
			closedir(d);
			return -1;
		}
		dir->dir = true;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		size_t nl = strlen(de->d_name);

		if (de->d_name[0] == '.')
			continue;	/* hidden files and . / .. are not served */
		if (fl + 1 + nl >= sizeof(k->fs) ||
				ul + 1 + nl >= sizeof(k->url)) {
			k->fs[fl] = '\0';
			snprintf(why, sizeof(why), "a name in it makes a path "
					"over %d bytes", PATH_MAX - 1);
			skip(k, why);
			continue;
		}
		k->fs[fl] = '/';
		memcpy(k->fs + fl + 1, de->d_name, nl + 1);
		k->url[ul] = '/';
		memcpy(k->url + ul + 1, de->d_name, nl + 1);
		rc = walk_entry(k);
	}
	k->fs[fl] = '\0';
	k->url[ul] = '\0';
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

static const struct www_file *lookup(const struct www *w, const char *p,
		size_t n);

/* "NAME.br" and "NAME.gz" beside a file NAME become its encodings, unless
 * older than it (made from an earlier NAME). Both stay files of their
 * own too. */
static void
link_siblings(struct www *w, const struct www_conf *conf)
{
	static const char suffix[WWW_CODINGS][4] = { ".br", ".gz" };
	char fs[PATH_MAX + 64];
	uint32_t i;
	int c;

	for (i = 0; i < w->n; i++) {
		struct www_file *s = &w->files[i];
		const struct www_file *found;
		struct www_file *base;

		if (s->dir || s->path_len < 4)
			continue;
		for (c = 0; c < WWW_CODINGS; c++)
			if (memcmp(s->path + s->path_len - 3, suffix[c], 3) == 0)
				break;
		if (c == WWW_CODINGS)
			continue;
		found = lookup(w, s->path, s->path_len - 3);
		if (found == NULL || found->dir)
			continue;
		base = &w->files[found - w->files];
		if (s->mtime < base->mtime) {
			snprintf(fs, sizeof(fs), "%s%s", w->root, s->path);
			w->skipped++;
			tell(conf, fs, "older than the file it encodes: not "
					"served as its encoding");
			continue;
		}
		base->coded[c] = s;
		base->has_coded = true;
	}
}

/* The fields of f's answers as representation rep (f itself, or its
 * sibling of coding c). */
static struct http_field_block *
answer_fields(struct www_file *f, const struct www_file *rep, int c)
{
	static const char *const coding_names[WWW_CODINGS] = { "br", "gzip" };
	const char *v[2 * 8 + 1];
	int n = 0;

	v[n++] = "ETag";
	v[n++] = rep->etag;
	v[n++] = "Accept-Ranges";
	v[n++] = "bytes";
	if (f->has_coded) {
		v[n++] = "Vary";
		v[n++] = "Accept-Encoding";
	}
	if (f->cache_control != NULL) {
		v[n++] = "Cache-Control";
		v[n++] = f->cache_control;
	}
	f->head_fields = (uint8_t)(n / 2);
	v[n++] = "Last-Modified";
	v[n++] = rep->last_modified;
	v[n++] = "Content-Type";
	v[n++] = f->content_type;
	if (c < WWW_CODINGS) {
		v[n++] = "Content-Encoding";
		v[n++] = coding_names[c];
	}
	v[n] = NULL;
	return http_field_block_new(v);
}

static int
prepare_answers(struct www *w, char *err, size_t errlen)
{
	uint32_t i;
	int c;

	for (i = 0; i < w->n; i++) {
		struct www_file *f = &w->files[i];

		if (f->dir)
			continue;
		f->fields[WWW_CODINGS] = answer_fields(f, f, WWW_CODINGS);
		if (f->fields[WWW_CODINGS] == NULL)
			goto nomem;
		for (c = 0; c < WWW_CODINGS; c++) {
			if (f->coded[c] == NULL)
				continue;
			f->fields[c] = answer_fields(f, f->coded[c], c);
			if (f->fields[c] == NULL)
				goto nomem;
		}
	}
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	return -1;
}

int
www_cache_control_check(const char *rule, char *err, size_t errlen)
{
	const char *eq = strchr(rule, '='), *v;

	if (rule[0] != '/' || eq == NULL || eq[1] == '\0') {
		snprintf(err, errlen, "'%s' is not PREFIX=VALUE (a path prefix "
				"starting with '/', a Cache-Control value)", rule);
		return -1;
	}
	for (v = eq + 1; *v != '\0'; v++)
		if ((unsigned char)*v < ' ' || *v == 0x7f) {
			snprintf(err, errlen, "'%s': a control character in "
					"the value", rule);
			return -1;
		}
	if (strlen(eq + 1) > WWW_CACHE_CONTROL_MAX || eq[1] == ' ' ||
			v[-1] == ' ') {
		snprintf(err, errlen, "'%s': the value is longer than %d "
				"characters, or starts or ends in a space", rule,
				WWW_CACHE_CONTROL_MAX);
		return -1;
	}
	return 0;
}

int
www_load(struct www *w, const struct www_conf *conf, char *err,
		size_t errlen)
{
	struct walk *k;
	struct stat st;
	uint32_t i;
	int rc = -1;

	memset(w, 0, sizeof(*w));
	w->max_bytes = conf->max_bytes;
	for (i = 0; i < conf->n_cache_control; i++)
		if (www_cache_control_check(conf->cache_control[i], err,
				errlen) != 0)
			return -1;
	if (realpath(conf->root, w->root) == NULL || stat(w->root, &st) != 0) {
		snprintf(err, errlen, "%s: %s", conf->root, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: not a directory", conf->root);
		return -1;
	}
	if (mime_table_load(&w->types, conf->mime_types, conf->mime_overrides,
			conf->n_mime_overrides, err, errlen) != 0)
		return -1;
	k = calloc(1, sizeof(*k));	/* two paths: not for the stack */
	if (k == NULL) {
		snprintf(err, errlen, "out of memory");
		www_free(w);
		return -1;
	}
	k->w = w;
	k->conf = conf;
	k->now = (int64_t)time(NULL);
	k->err = err;
	k->errlen = errlen;
	k->up[0].dev = st.st_dev;
	k->up[0].ino = st.st_ino;
	snprintf(k->fs, sizeof(k->fs), "%s", w->root);
	if (walk_dir(k) == 0 && build_index(w, err, errlen) == 0) {
		link_siblings(w, conf);
		rc = prepare_answers(w, err, errlen);
	}
	free(k);
	if (rc != 0)
		www_free(w);
	return rc;
}

void
www_free(struct www *w)
{
	uint32_t i;
	int c;

	for (i = 0; i < w->n; i++) {
		free(w->files[i].path);
		free(w->files[i].data);
		for (c = 0; c <= WWW_CODINGS; c++)
			free(w->files[i].fields[c]);
	}
	free(w->files);
	free(w->index);
	mime_table_free(&w->types);
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

/* The entry of URL path p, whose hash is h. */
static const struct www_file *
lookup_hashed(const struct www *w, const char *p, size_t n, uint32_t h)
{
	uint32_t slot;

	if (w->index == NULL)
		return NULL;
	for (h &= w->mask; (slot = w->index[h]) != 0; h = (h + 1) & w->mask) {
		const struct www_file *f = &w->files[slot - 1];

		if (f->path_len == n && memcmp(f->path, p, n) == 0)
			return f;
	}
	return NULL;
}

static const struct www_file *
lookup(const struct www *w, const char *p, size_t n)
{
	return lookup_hashed(w, p, n, path_hash(p, n));
}

/* A path decode_path() would leave as it is, and that names a file rather
 * than a directory's index: looked up in place, its hash (path_hash())
 * taken on the way. Anything else ("%", a "/" followed by "/" or ".")
 * takes the long way. */
static bool
plain_path(const char *p, size_t len, size_t cap, uint32_t *hash)
{
	uint64_t h = FNV_BASIS;
	size_t i;

	if (len == 0 || len >= cap || p[0] != '/' || p[len - 1] == '/')
		return false;
	for (i = 0; i < len; i++) {
		if (p[i] == '%' || p[i] == '\\' || (p[i] == '/' &&
				(p[i + 1] == '/' || p[i + 1] == '.')))
			return false;	/* p[i + 1]: the path ends in no "/" */
		h = (h ^ (uint8_t)p[i]) * 0x100000001b3ULL;
	}
	*hash = (uint32_t)h;
	return true;
}

const struct www_file *
www_find(const struct www *w, const char *path, size_t len)
{
	char buf[PATH_MAX + 16];
	uint32_t h;
	long n;

	if (plain_path(path, len, sizeof(buf) - 16, &h))
		return lookup_hashed(w, path, len, h);
	n = decode_path(path, len, buf, sizeof(buf) - 16);

	if (n < 0)
		return NULL;
	if (buf[n - 1] == '/') {
		memcpy(buf + n, "index.html", 11);
		n += 10;
	}
	return lookup(w, buf, (size_t)n);
}
