/* SPDX-License-Identifier: BSD-3-Clause */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_token.h"
#include "mime.h"

struct mime_entry {
	char ext[MIME_EXT_MAX + 1];	/* lower case */
	char *type;
	uint32_t rank;		/* of its source: lower wins */
};

/* For a host without a mime.types file: what web sites serve. */
static const char *const builtin[][2] = {
	{ "html", "text/html" }, { "htm", "text/html" },
	{ "txt", "text/plain" }, { "css", "text/css" },
	{ "js", "text/javascript" }, { "mjs", "text/javascript" },
	{ "json", "application/json" },
	{ "webmanifest", "application/manifest+json" },
	{ "map", "application/json" }, { "xml", "application/xml" },
	{ "svg", "image/svg+xml" }, { "png", "image/png" },
	{ "jpg", "image/jpeg" }, { "jpeg", "image/jpeg" },
	{ "gif", "image/gif" }, { "webp", "image/webp" },
	{ "avif", "image/avif" }, { "ico", "image/vnd.microsoft.icon" },
	{ "wasm", "application/wasm" }, { "pdf", "application/pdf" },
	{ "woff", "font/woff" }, { "woff2", "font/woff2" },
	{ "ttf", "font/ttf" }, { "otf", "font/otf" },
	{ "mp4", "video/mp4" }, { "webm", "video/webm" },
	{ "mp3", "audio/mpeg" }, { "ogg", "audio/ogg" },
	{ "csv", "text/csv" }, { "md", "text/markdown" },
	{ "gz", "application/gzip" }, { "zip", "application/zip" },
	{ "tar", "application/x-tar" },
};

enum { RANK_OVERRIDE, RANK_FILE, RANK_BUILTIN };

static bool
ext_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '+';
}

/* type/subtype, then anything printable (its parameters). */
static bool
type_ok(const char *t)
{
	const char *slash = strchr(t, '/');
	size_t i;

	if (slash == NULL || slash == t || strlen(t) > MIME_TYPE_MAX)
		return false;
	for (i = 0; t + i < slash; i++)
		if (!http_is_tchar((unsigned char)t[i]))
			return false;
	for (i = 1; slash[i] != '\0' && slash[i] != ';'; i++)
		if (!http_is_tchar((unsigned char)slash[i]))
			return false;
	if (i == 1)
		return false;
	for (; slash[i] != '\0'; i++)
		if ((unsigned char)slash[i] < ' ' || slash[i] == 0x7f)
			return false;
	return true;
}

int
mime_override_check(const char *v, char *err, size_t errlen)
{
	const char *eq = strchr(v, '=');
	size_t i;

	if (eq == NULL || eq == v || (size_t)(eq - v) > MIME_EXT_MAX) {
		snprintf(err, errlen, "'%s' is not EXT=TYPE (an extension of 1 "
				"to %d characters, without its dot)", v,
				MIME_EXT_MAX);
		return -1;
	}
	for (i = 0; v + i < eq; i++)
		if (!ext_char(v[i])) {
			snprintf(err, errlen, "'%.*s': an extension is letters, "
					"digits, '-', '_' and '+'", (int)(eq - v), v);
			return -1;
		}
	if (!type_ok(eq + 1)) {
		snprintf(err, errlen, "'%s' is not a media type (type/subtype, "
				"optional parameters, at most %d characters)",
				eq + 1, MIME_TYPE_MAX);
		return -1;
	}
	return 0;
}

static int
add(struct mime_table *t, const char *ext, size_t el, const char *type,
		uint32_t rank)
{
	struct mime_entry *e;
	size_t i, tl = strlen(type);
	bool charset = rank != RANK_OVERRIDE &&
		(strcmp(type, "text/html") == 0 || strcmp(type, "text/plain") == 0);

	if (el == 0 || el > MIME_EXT_MAX || !type_ok(type))
		return 0;	/* a line of the file we cannot use */
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? 2 * t->cap : 256;
		struct mime_entry *ne = realloc(t->e, cap * sizeof(*ne));

		if (ne == NULL)
			return -1;
		t->e = ne;
		t->cap = cap;
	}
	e = &t->e[t->n];
	for (i = 0; i < el; i++)
		e->ext[i] = (char)tolower((unsigned char)ext[i]);
	e->ext[el] = '\0';
	e->type = malloc(tl + sizeof("; charset=utf-8"));
	if (e->type == NULL)
		return -1;
	memcpy(e->type, type, tl + 1);
	if (charset)
		strcat(e->type, "; charset=utf-8");
	e->rank = rank;
	t->n++;
	return 0;
}

/* "type ext ext ..." lines; '#' starts a comment. */
static int
load_file(struct mime_table *t, FILE *f)
{
	char line[1024];

	while (fgets(line, sizeof(line), f) != NULL) {
		char *save = NULL, *type, *ext, *hash = strchr(line, '#');

		if (hash != NULL)
			*hash = '\0';
		type = strtok_r(line, " \t\r\n", &save);
		if (type == NULL)
			continue;
		while ((ext = strtok_r(NULL, " \t\r\n", &save)) != NULL)
			if (add(t, ext, strlen(ext), type, RANK_FILE) != 0)
				return -1;
	}
	return 0;
}

static int
by_ext_then_rank(const void *a, const void *b)
{
	const struct mime_entry *x = a, *y = b;
	int c = strcmp(x->ext, y->ext);

	return c != 0 ? c : (int)x->rank - (int)y->rank;
}

int
mime_table_load(struct mime_table *t, const char *file,
		const char *const *overrides, uint32_t n_overrides, char *err,
		size_t errlen)
{
	uint32_t i, kept;
	int rc = 0;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < n_overrides && rc == 0; i++) {
		const char *eq;

		if (mime_override_check(overrides[i], err, errlen) != 0) {
			mime_table_free(t);
			return -1;
		}
		eq = strchr(overrides[i], '=');
		rc = add(t, overrides[i], (size_t)(eq - overrides[i]), eq + 1,
				RANK_OVERRIDE);
	}
	if (rc == 0 && (file == NULL || file[0] != '\0')) {
		FILE *f = fopen(file != NULL ? file : MIME_DEFAULT_FILE, "r");

		if (f == NULL && file != NULL) {
			snprintf(err, errlen, "%s: %s", file, strerror(errno));
			mime_table_free(t);
			return -1;
		}
		if (f != NULL) {
			rc = load_file(t, f);
			fclose(f);
		}
	}
	for (i = 0; rc == 0 && i < sizeof(builtin) / sizeof(builtin[0]); i++)
		rc = add(t, builtin[i][0], strlen(builtin[i][0]), builtin[i][1],
				RANK_BUILTIN);
	if (rc != 0) {
		snprintf(err, errlen, "media types: out of memory");
		mime_table_free(t);
		return -1;
	}
	/* One entry per extension: the best ranked, the first of a rank. */
	for (i = 0; i < t->n; i++)
		t->e[i].rank = t->e[i].rank << 24 | i;
	qsort(t->e, t->n, sizeof(*t->e), by_ext_then_rank);
	for (i = 0, kept = 0; i < t->n; i++) {
		if (kept > 0 && strcmp(t->e[kept - 1].ext, t->e[i].ext) == 0) {
			free(t->e[i].type);
			continue;
		}
		t->e[kept++] = t->e[i];
	}
	t->n = kept;
	return 0;
}

void
mime_table_free(struct mime_table *t)
{
	uint32_t i;

	for (i = 0; i < t->n; i++)
		free(t->e[i].type);
	free(t->e);
	memset(t, 0, sizeof(*t));
}

static int
ext_cmp(const void *key, const void *entry)
{
	return strcasecmp(key, ((const struct mime_entry *)entry)->ext);
}

const char *
mime_type_of(const struct mime_table *t, const char *name)
{
	const char *dot = strrchr(name, '.');
	const struct mime_entry *e = NULL;

	if (dot != NULL && strchr(dot, '/') == NULL && t->n > 0)
		e = bsearch(dot + 1, t->e, t->n, sizeof(*t->e), ext_cmp);
	return e != NULL ? e->type : "application/octet-stream";
}
