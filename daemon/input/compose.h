/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Compose and dead keys, through libxkbcommon's compose API: every keysym a
 * key press gives goes through a Compose table's state machine first, so
 * that dead_acute then e, or Multi_key (compose:ralt) then o then /, send
 * one character (é, ø) instead of two keys.
 *
 * The table is --compose-file's (a file in XCompose(5) syntax; its
 * include "%L" means the locale's table), else the one libX11's data
 * (Debian: libx11-data, /usr/share/X11/locale) has for the system locale:
 * the first of LC_ALL, LC_CTYPE and LANG set in consoled's environment, else
 * in /etc/locale.conf, else in /etc/default/locale. consoled's terminal is
 * UTF-8 whatever the locale, so a locale's other codeset is taken as UTF-8
 * (de_DE.ISO-8859-1 and de_DE use de_DE.UTF-8's table), and no locale, C and
 * POSIX use C.UTF-8's (the full en_US.UTF-8 table, not C's Latin-1-only
 * one; libxkbcommon 1.5 maps C there itself, older and other builds may
 * not). libxkbcommon itself lets $XCOMPOSEFILE and ~/.XCompose of consoled's
 * own environment replace the locale's table.
 *
 * Without a table (no libx11-data, a locale it does not know) consoled warns
 * and keys go through as they are: dead keys then type nothing.
 *
 * A key that cancels a sequence (dead_acute then q, where the table has no
 * such sequence) is dropped with it, as Xlib's input method does in xterm
 * and as foot does. The pending sequence is dropped when the VT goes or
 * comes back and when keyboard events were lost (input.h): what was typed
 * before must not combine with what is typed after.
 */
#include <stdint.h>

struct xkb_context;
struct compose;

/* Where the system locale is read from when the environment has none. */
struct compose_locale_files {
	const char *locale_conf;    /* systemd's locale.conf(5) */
	const char *default_locale; /* Debian's /etc/default/locale, same syntax */
};

/* /etc/locale.conf and /etc/default/locale. */
extern const struct compose_locale_files compose_system_files;

/* The locale whose table is used (allocated), as described above; *ret_from
 * says where it came from: "the environment", one of the paths, or "no
 * locale set". files == NULL reads the environment only. */
char *compose_locale(const struct compose_locale_files *files, const char **ret_from);

/* The compose state for keysyms of ctx's keymaps: file's table if file is
 * not NULL and loads (else a warning and the locale's; xkbcommon skips a bad
 * line with a message, as libX11 does), else the locale's;
 * without any table (warned) compose_feed() passes every key. Never fails;
 * logs which table it uses. */
struct compose *compose_new(struct xkb_context *ctx, const char *file,
			    const struct compose_locale_files *files);
void compose_free(struct compose *c);

enum compose_result {
	COMPOSE_PASS,	   /* not part of a sequence: the key as it is */
	COMPOSE_PENDING,   /* started or continued a sequence: nothing to send yet */
	COMPOSE_CANCELLED, /* ended a sequence the table does not have: drop the key */
	COMPOSE_DONE,	   /* completed a sequence: send the text */
};

/* The most bytes of a composed text with its NUL (longer ones are cut at a
 * character). */
#define COMPOSE_TEXT_MAX 64

/* Feeds one pressed key's keysym. On COMPOSE_DONE, text holds the UTF-8 to
 * send (not empty) and *ret_keysym the result's keysym (0 if it has none). */
enum compose_result compose_feed(struct compose *c, uint32_t keysym,
				 char text[static COMPOSE_TEXT_MAX], uint32_t *ret_keysym);

/* Drops a pending sequence. */
void compose_reset(struct compose *c);
