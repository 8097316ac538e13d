/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ini.h"

#define LINE_MAX_BYTES 4096

/* The line without its comment and the blanks around what is left. */
static char *
strip(char *p)
{
	char *end;

	p[strcspn(p, ";\r\n")] = '\0';
	while (*p == ' ' || *p == '\t')
		p++;
	end = p + strlen(p);
	while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	return p;
}

static int
add_entry(struct ini *ini, const char *section, const char *key,
		const char *value, int line)
{
	struct ini_entry *e;

	e = realloc(ini->entries, sizeof(*e) * (size_t)(ini->n + 1));
	if (e == NULL)
		return -1;
	ini->entries = e;
	e = &ini->entries[ini->n];
	snprintf(e->section, sizeof(e->section), "%s", section);
	snprintf(e->key, sizeof(e->key), "%s", key);
	e->line = line;
	e->value = strdup(value);
	if (e->value == NULL)
		return -1;
	ini->n++;
	return 0;
}

/* A "[name]" line: the section from here on; each name once. */
static int
open_section(struct ini *ini, char *p, int no, const char *file, char *err,
		size_t errlen)
{
	char *close = strchr(p, ']'), *name;
	int i;

	if (close == NULL || close[1] != '\0') {
		snprintf(err, errlen, "%s:%d: expected [section]", file, no);
		return -1;
	}
	*close = '\0';
	name = strip(p + 1);
	if (name[0] == '\0' || strlen(name) >= INI_NAME_MAX) {
		snprintf(err, errlen, "%s:%d: expected [section]", file, no);
		return -1;
	}
	for (i = 0; i < ini->nsections; i++)
		if (strcmp(ini->sections[i].name, name) == 0) {
			snprintf(err, errlen, "%s:%d: section [%s] given twice "
					"(first on line %d): its keys go in one",
					file, no, name, ini->sections[i].line);
			return -1;
		}
	if (ini->nsections == INI_SECTIONS_MAX) {
		snprintf(err, errlen, "%s:%d: more than %d sections", file, no,
				INI_SECTIONS_MAX);
		return -1;
	}
	snprintf(ini->sections[ini->nsections].name, INI_NAME_MAX, "%s", name);
	ini->sections[ini->nsections++].line = no;
	return 0;
}

int
options_ini_load(struct ini *ini, const char *file, char *err,
		size_t errlen)
{
	char line[LINE_MAX_BYTES];
	FILE *f = fopen(file, "r");
	int no = 0;

	ini->entries = NULL;
	ini->n = 0;
	ini->nsections = 0;
	if (f == NULL) {
		snprintf(err, errlen, "%s: %s", file, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		char *p = line, *eq, *key;

		no++;
		if (strchr(line, '\n') == NULL && !feof(f)) {
			snprintf(err, errlen, "%s:%d: a line longer than %d "
					"bytes", file, no, LINE_MAX_BYTES - 2);
			goto fail;
		}
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '#')
			continue;
		p = strip(p);
		if (*p == '\0')
			continue;
		if (*p == '[') {
			if (open_section(ini, p, no, file, err, errlen) != 0)
				goto fail;
			continue;
		}
		eq = strchr(p, '=');
		if (eq == NULL || eq == p) {
			snprintf(err, errlen, "%s:%d: expected [section] or "
					"key = value", file, no);
			goto fail;
		}
		if (ini->nsections == 0) {
			snprintf(err, errlen, "%s:%d: a key before any [section]",
					file, no);
			goto fail;
		}
		*eq = '\0';
		key = strip(p);
		if (strlen(key) >= INI_NAME_MAX) {
			snprintf(err, errlen, "%s:%d: unknown key '%s'", file,
					no, key);
			goto fail;
		}
		if (add_entry(ini, ini->sections[ini->nsections - 1].name, key,
				strip(eq + 1), no) != 0) {
			snprintf(err, errlen, "%s: %s", file, strerror(ENOMEM));
			goto fail;
		}
	}
	fclose(f);
	return 0;
fail:
	fclose(f);
	options_ini_free(ini);
	return -1;
}

void
options_ini_free(struct ini *ini)
{
	int i;

	for (i = 0; i < ini->n; i++)
		free(ini->entries[i].value);
	free(ini->entries);
	ini->entries = NULL;
	ini->n = 0;
}
