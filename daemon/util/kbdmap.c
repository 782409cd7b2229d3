/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kbdmap.h"
#include "util.h"

static void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

static char *column(const char *s)
{
	return strcmp(s, "-") == 0 ? NULL : xstrdup(s);
}

int kbdmap_lookup(const char *path, const char *keymap, struct kbdmap_entry *ret)
{
	_cleanup_(fclosep) FILE *f = fopen(path, "re");
	_cleanup_(freep) char *line = NULL;
	size_t size = 0;

	if (!f)
		return -errno;
	errno = 0;
	while (getline(&line, &size, f) >= 0) {
		char *col[5], *save = NULL;
		size_t n = 0;

		for (char *w = strtok_r(line, " \t\r\n", &save); w && n < ELEMENTSOF(col);
		     w = strtok_r(NULL, " \t\r\n", &save))
			col[n++] = w;
		if (n == 0 || col[0][0] == '#' || strcmp(col[0], keymap) != 0)
			continue;
		/* localed needs all five; a short line is no conversion */
		if (n < ELEMENTSOF(col))
			continue;
		*ret = (struct kbdmap_entry){
		    .layout = column(col[1]),
		    .model = column(col[2]),
		    .variant = column(col[3]),
		    .options = column(col[4]),
		};
		return 0;
	}
	if (ferror(f))
		return errno ? -errno : -EIO;
	return -ESRCH;
}

void kbdmap_entry_fini(struct kbdmap_entry *e)
{
	free(e->layout);
	free(e->model);
	free(e->variant);
	free(e->options);
	*e = (struct kbdmap_entry){};
}
