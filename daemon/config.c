/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "config"
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "util/util.h"

static void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

static char *concat(const char *a, const char *b, const char *c)
{
	size_t size = strlen(a) + strlen(b) + strlen(c) + 1;
	char *s = xmalloc(size);

	snprintf(s, size, "%s%s%s", a, b, c);
	return s;
}

static char *strip(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

/* Calls line() for each line that is neither blank nor a comment, with the
 * key and the value split at the first '=' and stripped of blanks (value NULL
 * without '='). Returns 0, -ENOENT for a missing file (not logged), or a
 * negative errno after logging why the file could not be read; the lines
 * before a read error have been handed on. */
static int config_parse_file(const char *path,
			     void (*line)(const char *path, unsigned lineno, char *key, char *value,
					  void *userdata),
			     void *userdata)
{
	_cleanup_(fclosep) FILE *f = NULL;
	_cleanup_(freep) char *buf = NULL;
	size_t size = 0;
	unsigned lineno = 0;

	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT)
			return -ENOENT;
		return log_warning_errno(errno, "Failed to open %s: %m, ignoring.", path);
	}
	errno = 0;
	while (getline(&buf, &size, f) >= 0) {
		char *key = strip(buf), *value = NULL, *eq;

		lineno++;
		if (*key == '\0' || *key == '#')
			continue;
		eq = strchr(key, '=');
		if (eq) {
			*eq = '\0';
			key = strip(key);
			value = strip(eq + 1);
		}
		line(path, lineno, key, value, userdata);
		errno = 0;
	}
	if (ferror(f))
		return log_warning_errno(errno ? errno : EIO, "Failed to read %s: %m, ignoring.",
					 path);
	return 0;
}

struct config_state {
	struct options *options;
	unsigned ignored;
};

static void config_apply_line(const char *path, unsigned lineno, char *key, char *value,
			      void *userdata)
{
	struct config_state *s = userdata;
	char err[256];

	if (options_set(s->options, key, value, err, sizeof(err)) < 0) {
		log_error("%s:%u: %s, ignoring.", path, lineno, err);
		s->ignored++;
	}
}

static void config_load_file(struct config_state *s, const char *path)
{
	int r = config_parse_file(path, config_apply_line, s);

	if (r == -ENOENT)
		log_debug("No %s", path);
	else if (r < 0)
		s->ignored++;
	else
		log_debug("Read %s", path);
}

static int dropin_filter(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return d->d_name[0] != '.' && n > 5 && strcmp(d->d_name + n - 5, ".conf") == 0;
}

/* Byte order, not the locale's collation: "lexical" must not depend on LANG. */
static int dropin_compare(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

unsigned config_load(struct options *o, const char *path)
{
	struct config_state s = {.options = o};
	_cleanup_(freep) char *dir = concat(path, ".d", "");
	struct dirent **names = NULL;
	int n;

	config_load_file(&s, path);

	n = scandir(dir, &names, dropin_filter, dropin_compare);
	if (n < 0 && errno != ENOENT) {
		log_warning_errno(errno, "Failed to list %s: %m, ignoring.", dir);
		s.ignored++;
	}
	for (int i = 0; i < n; i++) {
		_cleanup_(freep) char *file = concat(dir, "/", names[i]->d_name);

		config_load_file(&s, file);
		free(names[i]);
	}
	free(names);

	if (s.ignored > 0)
		log_warning("Ignored %u bad line(s) or file(s) of the configuration, going on with "
			    "the valid settings",
			    s.ignored);
	return s.ignored;
}

/* The shell variables of vconsole.conf and /etc/default/keyboard, and the
 * options they stand for. */
static const struct {
	const char *var, *key;
} keyboard_vars[] = {
    {"XKBMODEL", "xkb-model"},
    {"XKBLAYOUT", "xkb-layout"},
    {"XKBVARIANT", "xkb-variant"},
    {"XKBOPTIONS", "xkb-options"},
};

struct keyboard {
	char *values[ELEMENTSOF(keyboard_vars)];
};

static void keyboard_fini(struct keyboard *kb)
{
	for (size_t i = 0; i < ELEMENTSOF(kb->values); i++)
		free(kb->values[i]);
}

/* A shell word without expansions: 'value', "value" or value up to a blank
 * (where a comment may follow). NULL for an unterminated quote. */
static char *shell_unquote(char *v)
{
	if (*v == '"' || *v == '\'') {
		char *end = strchr(v + 1, *v);

		if (!end)
			return NULL;
		*end = '\0';
		return v + 1;
	}
	v[strcspn(v, " \t")] = '\0';
	return v;
}

static void keyboard_line(const char *path, unsigned lineno, char *key, char *value, void *userdata)
{
	struct keyboard *kb = userdata;

	if (!value)
		return;
	if (strncmp(key, "export", 6) == 0 && isspace((unsigned char)key[6]))
		key = strip(key + 6);
	value = shell_unquote(value);
	if (!value) {
		log_warning("%s:%u: unterminated quote, ignoring.", path, lineno);
		return;
	}
	for (size_t i = 0; i < ELEMENTSOF(keyboard_vars); i++) {
		if (strcmp(key, keyboard_vars[i].var) != 0)
			continue;
		free(kb->values[i]);
		/* XKBVARIANT="" is how Debian says "none". */
		kb->values[i] = value[0] ? xstrdup(value) : NULL;
	}
}

/* Returns 0 when path sets at least one XKB* variable. */
static int keyboard_read(const char *path, struct keyboard *kb)
{
	int r = config_parse_file(path, keyboard_line, kb);

	if (r < 0)
		return r;
	for (size_t i = 0; i < ELEMENTSOF(kb->values); i++)
		if (kb->values[i])
			return 0;
	return -ENODATA;
}

void config_load_keyboard(struct options *o, const char *vconsole, const char *default_keyboard)
{
	const char *const paths[] = {vconsole, default_keyboard};
	char err[256];

	for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
		struct keyboard kb = {};

		if (!paths[i] || keyboard_read(paths[i], &kb) < 0) {
			keyboard_fini(&kb);
			continue;
		}
		for (size_t j = 0; j < ELEMENTSOF(keyboard_vars); j++)
			if (kb.values[j])
				(void)options_set(o, keyboard_vars[j].key, kb.values[j], err,
						  sizeof(err));
		keyboard_fini(&kb);
		log_info("Keymap from %s: model '%s' layout '%s' variant '%s' options '%s'",
			 paths[i], o->xkb_model ? o->xkb_model : "",
			 o->xkb_layout ? o->xkb_layout : "", o->xkb_variant ? o->xkb_variant : "",
			 o->xkb_options ? o->xkb_options : "");
		return;
	}
	(void)options_set(o, "xkb-layout", "us", err, sizeof(err));
	log_info("No keyboard settings in %s or %s, using layout 'us'",
		 vconsole ? vconsole : "(none)", default_keyboard ? default_keyboard : "(none)");
}
