/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ini.h"

#define LINE_MAX_BYTES 4096

/* p without the blanks (and line end) around it. */
static char *
trim(char *p)
{
	char *end;

	while (*p == ' ' || *p == '\t')
		p++;
	end = p + strlen(p);
	while (end > p && (end[-1] == ' ' || end[-1] == '\t' ||
			end[-1] == '\r' || end[-1] == '\n'))
		*--end = '\0';
	return p;
}

static bool
name_ok(const char *s, size_t len)
{
	size_t i;

	if (len == 0)
		return false;
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
				(s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
				s[i] == '-'))
			return false;
	return true;
}

void *
options_grow(void **array, int n, size_t size)
{
	void *a = realloc(*array, size * (size_t)(n + 1));

	if (a != NULL)
		*array = a;
	return a;
}

/* A "[KIND]" or "[KIND NAME]" line: the section from here on. */
static int
open_section(struct ini *ini, char *p, int no, const char *file, char *err,
		size_t errlen)
{
	size_t len = strlen(p), kind_len;
	struct ini_section *sec;
	char *body = p + 1, *space;
	int i;

	if (len < 3 || p[len - 1] != ']') {
		snprintf(err, errlen, "%s:%d: expected [KIND] or [KIND NAME]",
				file, no);
		return -1;
	}
	p[len - 1] = '\0';
	space = strchr(body, ' ');
	kind_len = space != NULL ? (size_t)(space - body) : strlen(body);
	if (!name_ok(body, kind_len) || kind_len >= INI_NAME_MAX ||
			(space != NULL && (!name_ok(space + 1, strlen(space + 1)) ||
			strlen(space + 1) > INI_SECTION_NAME_MAX))) {
		snprintf(err, errlen, "%s:%d: [%s]: expected [KIND] or [KIND NAME] "
				"(one space; a NAME of letters, digits, '_' and '-', "
				"up to %d)", file, no, body, INI_SECTION_NAME_MAX);
		return -1;
	}
	if (space != NULL)
		*space = '\0';
	for (i = 0; i < ini->nsections; i++) {
		sec = &ini->sections[i];
		if (strcmp(sec->kind, body) == 0 &&
				strcmp(sec->name, space != NULL ? space + 1 : "") == 0) {
			if (space != NULL)
				*space = ' ';
			snprintf(err, errlen, "%s:%d: section [%s] given twice "
					"(first on line %d): its keys go in one",
					file, no, body, sec->line);
			return -1;
		}
	}
	if (options_grow((void **)&ini->sections, ini->nsections, sizeof(*sec)) == NULL) {
		snprintf(err, errlen, "%s: %s", file, strerror(ENOMEM));
		return -1;
	}
	sec = &ini->sections[ini->nsections++];
	snprintf(sec->kind, sizeof(sec->kind), "%s", body);
	snprintf(sec->name, sizeof(sec->name), "%s", space != NULL ? space + 1 : "");
	sec->line = no;
	return 0;
}

/* A "key = value" line of the last section. */
static int
add_entry(struct ini *ini, char *p, int no, const char *file, char *err,
		size_t errlen)
{
	char *eq = strchr(p, '='), *key;
	struct ini_entry *e;

	if (eq == NULL || eq == p) {
		snprintf(err, errlen, "%s:%d: expected [KIND NAME] or key = value",
				file, no);
		return -1;
	}
	if (ini->nsections == 0) {
		snprintf(err, errlen, "%s:%d: a key before any [section]", file, no);
		return -1;
	}
	*eq = '\0';
	key = trim(p);
	if (strlen(key) >= INI_NAME_MAX || !name_ok(key, strlen(key))) {
		snprintf(err, errlen, "%s:%d: unknown key '%.*s'", file, no,
				INI_NAME_MAX, key);
		return -1;
	}
	if (options_grow((void **)&ini->entries, ini->n, sizeof(*e)) == NULL)
		goto nomem;
	e = &ini->entries[ini->n];
	snprintf(e->key, sizeof(e->key), "%s", key);
	e->section = ini->nsections - 1;
	e->line = no;
	e->value = strdup(trim(eq + 1));
	if (e->value == NULL)
		goto nomem;
	ini->n++;
	return 0;
nomem:
	snprintf(err, errlen, "%s: %s", file, strerror(ENOMEM));
	return -1;
}

int
options_ini_load(struct ini *ini, const char *file, char *err,
		size_t errlen)
{
	char line[LINE_MAX_BYTES];
	FILE *f = fopen(file, "r");
	int no = 0, rc = 0;

	*ini = (struct ini){ 0 };
	if (f == NULL) {
		snprintf(err, errlen, "%s: %s", file, strerror(errno));
		return -1;
	}
	while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
		char *p;

		no++;
		if (strchr(line, '\n') == NULL && !feof(f)) {
			snprintf(err, errlen, "%s:%d: a line longer than %d "
					"bytes", file, no, LINE_MAX_BYTES - 2);
			rc = -1;
			break;
		}
		p = trim(line);
		if (*p == '\0' || *p == ';' || *p == '#')
			continue;
		rc = *p == '[' ? open_section(ini, p, no, file, err, errlen) :
			add_entry(ini, p, no, file, err, errlen);
	}
	fclose(f);
	if (rc != 0)
		options_ini_free(ini);
	return rc;
}

void
options_ini_free(struct ini *ini)
{
	int i;

	for (i = 0; i < ini->n; i++)
		free(ini->entries[i].value);
	free(ini->entries);
	free(ini->sections);
	*ini = (struct ini){ 0 };
}
