/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Runs saved fuzz inputs through the fuzz target's entry point without
 * libFuzzer, so that the seed corpus and every crash ever found
 * (tests/fuzz/regressions/) replay in the normal unit suite. Arguments are
 * files or directories; a broken invariant aborts, which fails the test.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLAY_MAX (1 << 20)

static int
replay_file(const char *path)
{
	static uint8_t buf[REPLAY_MAX];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (f == NULL) {
		perror(path);
		return -1;
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	printf("replay %s (%zu bytes)\n", path, n);
	fflush(stdout);
	LLVMFuzzerTestOneInput(buf, n);
	return 0;
}

static int
by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Returns the number of inputs run, or -1. */
static int
replay_path(const char *path)
{
	struct dirent **ents;
	struct stat sb;
	int n, i, runs = 0;

	if (stat(path, &sb) != 0) {
		perror(path);
		return -1;
	}
	if (!S_ISDIR(sb.st_mode))
		return replay_file(path) == 0 ? 1 : -1;
	n = scandir(path, &ents, NULL, by_name);
	if (n < 0) {
		perror(path);
		return -1;
	}
	for (i = 0; i < n; i++) {
		char file[4096];

		/* Dot files (.gitkeep) and notes are not inputs. */
		if (ents[i]->d_name[0] != '.' &&
				strstr(ents[i]->d_name, ".md") == NULL) {
			snprintf(file, sizeof(file), "%s/%s", path,
					ents[i]->d_name);
			if (replay_file(file) == 0)
				runs++;
		}
		free(ents[i]);
	}
	free(ents);
	return runs;
}

int
main(int argc, char **argv)
{
	int i, total = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	LLVMFuzzerInitialize(&argc, &argv);
	for (i = 1; i < argc; i++) {
		int n = replay_path(argv[i]);

		if (n < 0)
			return 1;
		total += n;
	}
	printf("%d inputs replayed, no invariant broken\n", total);
	return total > 0 ? 0 : 1;
}
