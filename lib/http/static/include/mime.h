/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Media types of static files by their extension: the operator's
 * overrides first, then a mime.types file (Debian's media-types package
 * installs /etc/mime.types), then a built-in table of the types a web site
 * needs, so that a host without the file still says font/woff2 and
 * application/wasm. text/html and text/plain from a table are sent with
 * "; charset=utf-8"; an override is sent as written. Built at start-up,
 * read-only afterwards.
 */
#ifndef EWYK_MIME_H
#define EWYK_MIME_H

#include <stddef.h>
#include <stdint.h>

#define MIME_DEFAULT_FILE "/etc/mime.types"
#define MIME_TYPE_MAX 127	/* a type's length, parameters included */
#define MIME_EXT_MAX 31

struct mime_entry;

struct mime_table {
	struct mime_entry *e;	/* sorted by extension */
	uint32_t n;
	uint32_t cap;
};

/*
 * Builds the table. file: a mime.types file, NULL for the default (which
 * may be absent: the built-in table serves alone), "" for none; a file
 * given by name must be readable. overrides: "EXT=TYPE" each. Returns 0,
 * or -1 with a message in err.
 */
int mime_table_load(struct mime_table *t, const char *file,
		const char *const *overrides, uint32_t n_overrides, char *err,
		size_t errlen);
void mime_table_free(struct mime_table *t);

/* The type of a file name (by its last extension, case-blind);
 * application/octet-stream when unknown. Lives as long as the table. */
const char *mime_type_of(const struct mime_table *t, const char *name);

/* Whether "EXT=TYPE" is an override mime_table_load() takes: an
 * extension of letters, digits, '-', '_' and '+' (no dot), and a
 * type/subtype with optional parameters, without control characters.
 * Returns 0, or -1 with the reason in err. */
int mime_override_check(const char *ext_type, char *err, size_t errlen);

#endif /* EWYK_MIME_H */
