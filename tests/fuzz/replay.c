/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Runs files through a fuzz target's LLVMFuzzerTestOneInput without
 * libFuzzer, so committed corpora (seeds and past crashes) are ordinary
 * tests that any compiler builds and sanitizers watch:
 *     replay-psf tests/fuzz/corpus/psf [FILE|DIR]...
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rbe");
	uint8_t *buf = NULL;
	size_t size = 0, cap = 0, n;

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	do {
		if (size == cap) {
			cap = cap ? cap * 2 : 4096;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		n = fread(buf + size, 1, cap - size, f);
		size += n;
	} while (n > 0);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, size);
	free(buf);
	return 0;
}

static int filter(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

int main(int argc, char **argv)
{
	unsigned count = 0;
	int status = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		struct dirent **list;
		int n;

		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			status = 1;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			status |= replay_file(argv[i]) < 0;
			count++;
			continue;
		}
		n = scandir(argv[i], &list, filter, alphasort);
		if (n < 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			status = 1;
			continue;
		}
		for (int k = 0; k < n; k++) {
			char path[4096];

			snprintf(path, sizeof(path), "%s/%s", argv[i], list[k]->d_name);
			fprintf(stderr, "%s\n", path);
			status |= replay_file(path) < 0;
			count++;
			free(list[k]);
		}
		free(list);
	}
	fprintf(stderr, "replay: %u inputs\n", count);
	if (count == 0)
		status = 1;
	return status;
}
