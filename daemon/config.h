/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Configuration files and the system's keyboard settings.
 *
 * consoled.conf holds one setting a line, kmscon-style: "key=value", or
 * "key" alone for a boolean that is on; '#' starts a comment line; blank
 * lines and blanks around keys and values do not count. Keys are the long
 * options' names and take the same values (options_set() parses both). The
 * file is read first, then the files ending in ".conf" in the directory of
 * its name plus ".d", in strcmp() order, so a later drop-in wins.
 *
 * Nothing here is fatal: a missing file or directory is normal, an
 * unreadable one and a bad line are logged ("FILE:LINE: ...") and skipped,
 * and every good line still applies. A console that does not come up over
 * a typo leaves the user without a login, which is worse than a wrong
 * colour.
 *
 * The keyboard settings are shell-style variable assignments
 * (XKBLAYOUT="de"), as systemd's vconsole.conf and Debian's
 * /etc/default/keyboard write them.
 */
#include "options.h"

/* Reads path, then path + ".d" / *.conf, into o. Returns how many lines and
 * files were ignored (each one logged, and a summary if any). */
unsigned config_load(struct options *o, const char *path);

/* Sets o's keymap names (xkb-model, -layout, -variant, -options) from the
 * XKB* variables of vconsole if it sets any, else of default_keyboard, else
 * layout "us", and logs which. Either path may be NULL (not read). */
void config_load_keyboard(struct options *o, const char *vconsole, const char *default_keyboard);
