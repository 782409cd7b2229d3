/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "compose"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <xkbcommon/xkbcommon-compose.h>
#include <xkbcommon/xkbcommon.h>

#include "compose.h"
#include "../util/config.h"
#include "../util/log.h"
#include "../util/util.h"

struct compose {
	struct xkb_compose_table *table; /* NULL: no table, every key passes */
	struct xkb_compose_state *state;
};

const struct compose_locale_files compose_system_files = {
    .locale_conf = "/etc/locale.conf",
    .default_locale = "/etc/default/locale",
};

/* The variables that name the locale of characters, strongest first. */
static const char *const locale_vars[] = {"LC_ALL", "LC_CTYPE", "LANG"};

/* name with a UTF-8 codeset: lang[_territory][.codeset][@modifier] keeps
 * its language, territory and modifier. Unset, C and POSIX are C.UTF-8. */
static char *locale_utf8(const char *name)
{
	const char *at, *dot;
	size_t base, size;
	char *s;

	if (strcmp(name, "C") == 0 || strcmp(name, "POSIX") == 0)
		return xstrdup("C.UTF-8");
	at = strchr(name, '@');
	dot = strchr(name, '.');
	if (dot && at && dot > at)
		dot = NULL;
	if (dot) {
		size_t len = at ? (size_t)(at - dot - 1) : strlen(dot + 1);

		if ((len == 5 && strncasecmp(dot + 1, "utf-8", 5) == 0) ||
		    (len == 4 && strncasecmp(dot + 1, "utf8", 4) == 0))
			return xstrdup(name);
	}
	base = dot ? (size_t)(dot - name) : at ? (size_t)(at - name) : strlen(name);
	size = base + sizeof(".UTF-8") + (at ? strlen(at) : 0);
	s = xmalloc(size);
	snprintf(s, size, "%.*s.UTF-8%s", (int)base, name, at ? at : "");
	return s;
}

/* The strongest of the locale variables path sets, or NULL. */
static char *locale_from_file(const char *path)
{
	char *values[ELEMENTSOF(locale_vars)] = {};
	char *found = NULL;

	if (!path || config_read_vars(path, locale_vars, ELEMENTSOF(locale_vars), values) < 0)
		return NULL;
	for (size_t i = 0; i < ELEMENTSOF(values); i++) {
		if (!found)
			found = values[i];
		else
			free(values[i]);
	}
	return found;
}

char *compose_locale(const struct compose_locale_files *files, const char **ret_from)
{
	_cleanup_(freep) char *value = NULL;

	for (size_t i = 0; i < ELEMENTSOF(locale_vars); i++) {
		const char *v = getenv(locale_vars[i]);

		if (v && v[0]) {
			*ret_from = "the environment";
			return locale_utf8(v);
		}
	}
	if (files) {
		value = locale_from_file(files->locale_conf);
		if (value) {
			*ret_from = files->locale_conf;
			return locale_utf8(value);
		}
		value = locale_from_file(files->default_locale);
		if (value) {
			*ret_from = files->default_locale;
			return locale_utf8(value);
		}
	}
	*ret_from = "no locale set";
	return xstrdup("C.UTF-8");
}

static struct xkb_compose_table *compose_load_file(struct xkb_context *ctx, const char *file,
						   const char *locale)
{
	struct xkb_compose_table *table;
	FILE *f = fopen(file, "re");

	if (!f) {
		log_warning_errno(errno,
				  "Failed to open the Compose file %s: %m, using the "
				  "locale's table.",
				  file);
		return NULL;
	}
	table = xkb_compose_table_new_from_file(ctx, f, locale, XKB_COMPOSE_FORMAT_TEXT_V1,
						XKB_COMPOSE_COMPILE_NO_FLAGS);
	fclose(f);
	if (!table)
		log_warning("Failed to load the Compose file %s (see above), using the "
			    "locale's table.",
			    file);
	return table;
}

struct compose *compose_new(struct xkb_context *ctx, const char *file,
			    const struct compose_locale_files *files)
{
	struct compose *c = xcalloc(1, sizeof(*c));
	const char *from;
	_cleanup_(freep) char *locale = compose_locale(files, &from);

	if (file) {
		c->table = compose_load_file(ctx, file, locale);
		if (c->table)
			log_info("Compose sequences from %s (locale %s from %s)", file, locale,
				 from);
	}
	if (!c->table) {
		c->table =
		    xkb_compose_table_new_from_locale(ctx, locale, XKB_COMPOSE_COMPILE_NO_FLAGS);
		if (c->table)
			log_info("Compose sequences of locale %s (from %s)", locale, from);
		else
			log_warning("No Compose table for locale %s (from %s): dead keys and the "
				    "Compose key type nothing. Is libx11-data installed?",
				    locale, from);
	}
	if (c->table) {
		c->state = xkb_compose_state_new(c->table, XKB_COMPOSE_STATE_NO_FLAGS);
		if (!c->state) {
			log_warning("Failed to create the Compose state, going on without.");
			xkb_compose_table_unref(c->table);
			c->table = NULL;
		}
	}
	return c;
}

void compose_free(struct compose *c)
{
	if (!c)
		return;
	xkb_compose_state_unref(c->state);
	xkb_compose_table_unref(c->table);
	free(c);
}

/* Cuts s (size bytes with its NUL) after its last whole UTF-8 character. */
static void utf8_cut(char *s, size_t size)
{
	size_t n = size - 1;

	s[n] = '\0';
	while (n > 0 && ((unsigned char)s[n - 1] & 0xc0) == 0x80)
		n--;
	/* s[n - 1] leads the last character: keep it if it is whole */
	if (n > 0 && (unsigned char)s[n - 1] >= 0xc0) {
		unsigned char lead = (unsigned char)s[n - 1];
		size_t len = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;

		if (n - 1 + len > size - 1)
			s[n - 1] = '\0';
	}
}

enum compose_result compose_feed(struct compose *c, uint32_t keysym,
				 char text[static COMPOSE_TEXT_MAX], uint32_t *ret_keysym)
{
	int n;

	if (!c->state || xkb_compose_state_feed(c->state, keysym) == XKB_COMPOSE_FEED_IGNORED)
		return COMPOSE_PASS;
	switch (xkb_compose_state_get_status(c->state)) {
	case XKB_COMPOSE_NOTHING:
		return COMPOSE_PASS;
	case XKB_COMPOSE_COMPOSING:
		return COMPOSE_PENDING;
	case XKB_COMPOSE_CANCELLED:
		xkb_compose_state_reset(c->state);
		return COMPOSE_CANCELLED;
	case XKB_COMPOSE_COMPOSED:
		break;
	}
	*ret_keysym = xkb_compose_state_get_one_sym(c->state);
	n = xkb_compose_state_get_utf8(c->state, text, COMPOSE_TEXT_MAX);
	if (n >= COMPOSE_TEXT_MAX)
		utf8_cut(text, COMPOSE_TEXT_MAX);
	else if (n <= 0 && *ret_keysym != XKB_KEY_NoSymbol)
		n = xkb_keysym_to_utf8(*ret_keysym, text, COMPOSE_TEXT_MAX) - 1;
	xkb_compose_state_reset(c->state);
	/* a sequence that gives nothing to type is one more cancelled */
	if (n <= 0 || text[0] == '\0')
		return COMPOSE_CANCELLED;
	return COMPOSE_DONE;
}

void compose_reset(struct compose *c)
{
	if (c->state)
		xkb_compose_state_reset(c->state);
}
