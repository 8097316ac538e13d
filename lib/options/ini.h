/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration file read line by line: "[section]" lines, then
 * "key = value" lines, comments from a ';' to the end of the line (and
 * whole lines that start with '#'). Every entry keeps its line, so that
 * an error names it; a section given twice is refused, since one of them
 * would be silently ignored otherwise.
 */
#ifndef EWYK_OPTIONS_INI_H
#define EWYK_OPTIONS_INI_H

#include <stddef.h>

#define INI_NAME_MAX 64
#define INI_SECTIONS_MAX 16

struct ini_entry {
	char section[INI_NAME_MAX];
	char key[INI_NAME_MAX];
	char *value;		/* blanks around it removed */
	int line;
};

struct ini_section {
	char name[INI_NAME_MAX];
	int line;
};

struct ini {
	struct ini_entry *entries;	/* in the file's order */
	int n;
	struct ini_section sections[INI_SECTIONS_MAX];	/* each once */
	int nsections;
};

/* Reads file. 0, or -1 with "FILE:LINE: what is wrong" (or "FILE: why
 * it cannot be read") in err. */
int options_ini_load(struct ini *ini, const char *file, char *err,
		size_t errlen);
void options_ini_free(struct ini *ini);

#endif /* EWYK_OPTIONS_INI_H */
