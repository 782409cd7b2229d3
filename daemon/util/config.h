/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Configuration files and the system's keyboard settings.
 *
 * consoled.conf holds one setting a line, kmscon-style: "key=value", or
 * "key" alone for a boolean that is on; '#' starts a comment line; blank
 * lines and blanks around keys and values do not count. What a key means is
 * not known here: each setting goes to the caller's config_set_fn, which
 * for consoled is options_set() (options.c), so keys are the long options'
 * names and take the same values. The file is read first, then the files ending in ".conf" in the
 * directory of its name plus ".d", in strcmp() order, so a later drop-in wins.
 *
 * Nothing here is fatal but a file named on the command line
 * (--config=PATH) that cannot be read: a missing file or directory is
 * normal, an unreadable one and a bad line are logged ("FILE:LINE: ...",
 * control bytes escaped) and skipped, and every good line still applies. A
 * console that does not come up over a typo leaves the user without a
 * login, which is worse than a wrong colour. A path typed on the command
 * line is another matter: that file is what the user asked for, and running
 * without it would look like success.
 *
 * The keyboard settings are shell-style variable assignments
 * (XKBLAYOUT="de"), as systemd's vconsole.conf and Debian's
 * /etc/default/keyboard write them.
 */
#include <stdbool.h>
#include <stddef.h>

/* Takes one setting: key, and its value as written after "=" (NULL for a
 * key alone). Returns 0, or a negative errno with a message in err
 * (err_size bytes) that the caller prefixes with the file and line, as
 * options_set() does. */
typedef int config_set_fn(void *userdata, const char *key, const char *value, char *err,
			  size_t err_size);

/* Reads path, then path + ".d" / *.conf, handing each setting to set(). Returns how many lines and
 * files were ignored (each one logged, and a summary if any). With required
 * (a file named by --config=), path itself must be there and readable: if it
 * is not, returns its negative errno (-ENOENT, -EACCES, -EISDIR, ...) without
 * logging it, and reads no drop-in; the caller reports it. */
int config_load(const char *path, bool required, config_set_fn *set, void *userdata);

/* Sets the keymap names (the keys xkb-model, -layout, -variant, -options,
 * through set()), in this order, from: the XKB* variables of vconsole if it sets any; else those of
 * default_keyboard; else vconsole's KEYMAP= (a kbd keymap name) mapped to
 * XKB names through kbd_model_map as systemd-localed maps it (kbdmap.h), or
 * layout "us" with a warning when the map has no such name; else layout
 * "us". Logs which. Any path may be NULL (not read). */
void config_load_keyboard(const char *vconsole, const char *default_keyboard,
			  const char *kbd_model_map, config_set_fn *set, void *userdata);

/* Reads the shell-style assignments (NAME=value, NAME="value", as in the
 * keyboard settings) of the n variables names[] in path: values[i] becomes
 * the last value given to names[i] (allocated, replacing what was there;
 * NULL for an empty one); others stay. Returns 0, -ENOENT for a missing file
 * (not logged), or a negative errno (logged). */
int config_read_vars(const char *path, const char *const *names, size_t n, char **values);
