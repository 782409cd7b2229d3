/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Console keymap names (kbd's, as /etc/vconsole.conf's KEYMAP= gives them:
 * "de-latin1", "fr", "uk") to XKB names, the way systemd-localed converts
 * them: through systemd's table /usr/share/systemd/kbd-model-map, one
 * keymap a line with five blank-separated columns
 *
 *   consolelayout  xkblayout  xkbmodel  xkbvariant  xkboptions
 *
 * where "-" is empty and '#' starts a comment line. The first line for a
 * name wins (the table lists "dvorak" twice; localed takes the first too).
 */

struct kbdmap_entry {
	char *layout, *model, *variant, *options; /* NULL for "-" */
};

/* Looks keymap up in the table at path. Returns 0 with *ret filled (release
 * it with kbdmap_entry_fini()), -ESRCH when the table has no such name, or
 * another negative errno when the table cannot be read (not logged: the
 * caller says what it falls back to). */
int kbdmap_lookup(const char *path, const char *keymap, struct kbdmap_entry *ret);
void kbdmap_entry_fini(struct kbdmap_entry *e);
