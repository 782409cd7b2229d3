/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * The login screen, as getty's: with the default session command
 * (/bin/login -p), the session's process first shows the issue text
 * (issue.h) and "HOST login: ", reads the user name from the tty (its
 * canonical mode echoes it) and only then runs `login -p -- NAME`, which
 * asks for the password; or, with autologin=USER, shows
 * "HOST login: USER (automatic login)" and runs `login -f -p -- USER` at
 * once, as agetty --autologin does (consoled(8), LOGIN SCREEN).
 *
 * getty_run() runs in the forked session child, after session_exec() made
 * the tty its controlling tty and fds 0-2 and closed every other fd, so
 * nothing it reads comes from or goes to the daemon. The autologin user
 * comes from root's own configuration only: consoled-session(8) reads it,
 * never consoled's request.
 */
#include <stdbool.h>
#include <stddef.h>

/* The longest user name read at the prompt (LOGIN_NAME_MAX). */
#define GETTY_NAME_MAX 256

/* Whether argv is the default session command, /bin/login -p: the one the
 * login screen is shown for (another command runs as it is). */
bool getty_is_default_login(char *const *argv);

/* Whether name may be given to login: 1 to GETTY_NAME_MAX - 1 characters
 * of [A-Za-z0-9._@-] and a '$' at the end, not starting with '-'. */
bool getty_name_valid(const char *name);

/* The user of an autologin= value ("USER" or "USER@ttyN") for the VT vt:
 * 1 with the user in ret (size bytes), 0 if the value names another VT,
 * -EINVAL if it is malformed. */
int getty_autologin_parse(const char *value, unsigned vt, char *ret, size_t size);

/* autologin= (NULL: none) for VT vt, checked and logged: 1 with the user
 * (who exists: getpwnam()) in ret, 0 for no autologin here; a bad value or
 * unknown user is logged as a warning and means no autologin. */
int getty_autologin_user(const char *value, unsigned vt, char *ret, size_t size);

/* In the session child, on fds 0-2: the login screen for VT vt, then the
 * login command (login: the default command's path) in a static argv to
 * execute; autologin (NULL: none) is a user getty_autologin_user()
 * returned. Exits the child (status 0) at the end of the input. */
char **getty_run(unsigned vt, const char *login, const char *autologin);
