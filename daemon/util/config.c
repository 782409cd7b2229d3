/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "config"
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "kbdmap.h"
#include "log.h"
#include "util.h"

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
 * without '='). Returns 0 or the negative errno of why the file could not be
 * opened or read (-ENOENT: missing; -EISDIR: a directory), logging nothing;
 * the lines before a read error have been handed on. */
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
	if (!f)
		return -errno;
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
		return errno ? -errno : -EIO;
	return 0;
}

struct config_state {
	config_set_fn *set;
	void *userdata;
	unsigned ignored;
};

static void config_apply_line(const char *path, unsigned lineno, char *key, char *value,
			      void *userdata)
{
	struct config_state *s = userdata;
	char err[256];

	if (s->set(s->userdata, key, value, err, sizeof(err)) < 0) {
		_cleanup_(freep) char *p = cescape(path);

		log_error("%s:%u: %s, ignoring.", p, lineno, err);
		s->ignored++;
	}
}

/* Returns 0, or the negative errno of a file that exists but cannot be read
 * (logged as ignored unless required, counted either way). */
static int config_load_file(struct config_state *s, const char *path, bool required)
{
	_cleanup_(freep) char *p = cescape(path);
	int r = config_parse_file(path, config_apply_line, s);

	if (r == -ENOENT && !required) {
		log_debug("No %s", p);
		return 0;
	}
	if (r < 0) {
		if (!required)
			log_warning_errno(r, "Failed to read %s: %m, ignoring.", p);
		s->ignored++;
		return r;
	}
	log_debug("Read %s", p);
	return 0;
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

int config_load(const char *path, bool required, config_set_fn *set, void *userdata)
{
	struct config_state s = {.set = set, .userdata = userdata};
	_cleanup_(freep) char *dir = concat(path, ".d", "");
	struct dirent **names = NULL;
	int n, r;

	r = config_load_file(&s, path, required);
	if (r < 0 && required)
		return r;

	n = scandir(dir, &names, dropin_filter, dropin_compare);
	if (n < 0 && errno != ENOENT) {
		_cleanup_(freep) char *d = cescape(dir);

		log_warning_errno(errno, "Failed to list %s: %m, ignoring.", d);
		s.ignored++;
	}
	for (int i = 0; i < n; i++) {
		_cleanup_(freep) char *file = concat(dir, "/", names[i]->d_name);

		(void)config_load_file(&s, file, false);
		free(names[i]);
	}
	free(names);

	if (s.ignored > 0)
		log_warning("Ignored %u bad line(s) or file(s) of the configuration, going on with "
			    "the valid settings",
			    s.ignored);
	return (int)MIN(s.ignored, (unsigned)INT_MAX);
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

struct shell_vars {
	const char *const *names;
	size_t n;
	char **values;
};

static void shell_vars_line(const char *path, unsigned lineno, char *key, char *value,
			    void *userdata)
{
	struct shell_vars *v = userdata;

	if (!value)
		return;
	if (strncmp(key, "export", 6) == 0 && isspace((unsigned char)key[6]))
		key = strip(key + 6);
	value = shell_unquote(value);
	if (!value) {
		log_warning("%s:%u: unterminated quote, ignoring.", path, lineno);
		return;
	}
	for (size_t i = 0; i < v->n; i++) {
		if (strcmp(key, v->names[i]) != 0)
			continue;
		free(v->values[i]);
		/* XKBVARIANT="" is how Debian says "none". */
		v->values[i] = value[0] ? xstrdup(value) : NULL;
	}
}

int config_read_vars(const char *path, const char *const *names, size_t n, char **values)
{
	struct shell_vars v = {names, n, values};
	int r = config_parse_file(path, shell_vars_line, &v);

	if (r < 0 && r != -ENOENT) {
		_cleanup_(freep) char *p = cescape(path);

		return log_warning_errno(r, "Failed to read %s: %m, ignoring.", p);
	}
	return r;
}

/* The variables of vconsole.conf and /etc/default/keyboard read here: the
 * XKB ones with the options they stand for, then the console keymap. */
enum { KEYBOARD_XKB_VARS = 4, KEYBOARD_KEYMAP = KEYBOARD_XKB_VARS, KEYBOARD_VARS };
static const char *const keyboard_names[KEYBOARD_VARS] = {"XKBMODEL", "XKBLAYOUT", "XKBVARIANT",
							  "XKBOPTIONS", "KEYMAP"};
static const char *const keyboard_keys[KEYBOARD_XKB_VARS] = {"xkb-model", "xkb-layout",
							     "xkb-variant", "xkb-options"};

struct keyboard {
	char *values[KEYBOARD_VARS];
};

static void keyboard_fini(struct keyboard *kb)
{
	for (size_t i = 0; i < ELEMENTSOF(kb->values); i++)
		free(kb->values[i]);
}

/* Returns 0 when path sets at least one XKB* variable, -ENODATA when it sets
 * none (kb may still have KEYMAP), or a negative errno. */
static int keyboard_read(const char *path, struct keyboard *kb)
{
	int r = config_read_vars(path, keyboard_names, KEYBOARD_VARS, kb->values);

	if (r < 0)
		return r;
	for (size_t i = 0; i < KEYBOARD_XKB_VARS; i++)
		if (kb->values[i])
			return 0;
	return -ENODATA;
}

/* Sets the keymap names (model, layout, variant, options; NULL: not set)
 * and says where they came from. */
static void keyboard_apply(const char *const values[KEYBOARD_XKB_VARS], const char *from,
			   config_set_fn *set, void *userdata)
{
	char err[256];

	for (size_t j = 0; j < KEYBOARD_XKB_VARS; j++)
		if (values[j])
			(void)set(userdata, keyboard_keys[j], values[j], err, sizeof(err));
	log_info("Keymap from %s: model '%s' layout '%s' variant '%s' options '%s'", from,
		 values[0] ? values[0] : "", values[1] ? values[1] : "", values[2] ? values[2] : "",
		 values[3] ? values[3] : "");
}

void config_load_keyboard(const char *vconsole, const char *default_keyboard,
			  const char *kbd_model_map, config_set_fn *set, void *userdata)
{
	const char *const paths[] = {vconsole, default_keyboard};
	_cleanup_(freep) char *keymap = NULL;
	char err[256];

	for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
		struct keyboard kb = {};

		if (!paths[i] || keyboard_read(paths[i], &kb) < 0) {
			/* vconsole.conf's KEYMAP= counts after both files' XKB* */
			if (i == 0 && kb.values[KEYBOARD_KEYMAP]) {
				keymap = kb.values[KEYBOARD_KEYMAP];
				kb.values[KEYBOARD_KEYMAP] = NULL;
			}
			keyboard_fini(&kb);
			continue;
		}
		keyboard_apply((const char *const *)kb.values, paths[i], set, userdata);
		keyboard_fini(&kb);
		return;
	}
	if (keymap && kbd_model_map) {
		struct kbdmap_entry e;
		int r = kbdmap_lookup(kbd_model_map, keymap, &e);

		if (r >= 0) {
			const char *values[] = {e.model, e.layout, e.variant, e.options};
			_cleanup_(freep) char *from = concat(vconsole, ": KEYMAP=", keymap);

			keyboard_apply(values, from, set, userdata);
			kbdmap_entry_fini(&e);
			return;
		}
		(void)set(userdata, "xkb-layout", "us", err, sizeof(err));
		if (r == -ESRCH)
			log_warning("%s: KEYMAP=%s has no XKB layout in %s, using layout 'us'",
				    vconsole, keymap, kbd_model_map);
		else
			log_warning_errno(r,
					  "%s: KEYMAP=%s: cannot read %s (%m), using layout 'us'",
					  vconsole, keymap, kbd_model_map);
		return;
	}
	(void)set(userdata, "xkb-layout", "us", err, sizeof(err));
	log_info("No keyboard settings in %s or %s, using layout 'us'",
		 vconsole ? vconsole : "(none)", default_keyboard ? default_keyboard : "(none)");
}
