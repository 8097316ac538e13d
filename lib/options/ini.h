/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration file read line by line: section lines, "[KIND]" or
 * "[KIND NAME]" (one space; NAME of [A-Za-z0-9_-], up to 32 bytes), then
 * "key = value" lines. A comment is a whole line whose first visible
 * character is ';' or '#': a value keeps every ';' it holds (a header's
 * value may need one). Every entry keeps its line and its section, so
 * that an error names both; a section given twice is refused, since one
 * of them would be silently ignored otherwise. What the kinds and keys
 * mean is the caller's.
 */
#ifndef EWYK_OPTIONS_INI_H
#define EWYK_OPTIONS_INI_H

#include <stddef.h>

#define INI_NAME_MAX 64		/* a key's or a kind's bytes, with the NUL */
#define INI_SECTION_NAME_MAX 32	/* a section's NAME, without the NUL */

struct ini_section {
	char kind[INI_NAME_MAX];
	char name[INI_SECTION_NAME_MAX + 1];	/* "" for "[KIND]" */
	int line;
};

struct ini_entry {
	int section;		/* index in sections */
	char key[INI_NAME_MAX];
	char *value;		/* blanks around it removed */
	int line;
};

struct ini {
	struct ini_entry *entries;	/* in the file's order */
	int n;
	struct ini_section *sections;	/* in the file's order, each once */
	int nsections;
};

/* Reads file. 0, or -1 with "FILE:LINE: what is wrong" (or "FILE: why
 * it cannot be read") in err. */
int options_ini_load(struct ini *ini, const char *file, char *err,
		size_t errlen);
void options_ini_free(struct ini *ini);
/* Grows an array of n items of size each by one (realloc); the new item
 * is array[n]. NULL when out of memory (the array kept). */
void *options_grow(void **array, int n, size_t size);

#endif /* EWYK_OPTIONS_INI_H */
