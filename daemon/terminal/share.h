/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * The selection buffer shared between the consoled instances whose
 * sessions belong to the same user (consoled(8), MOUSE).
 *
 * Who: the user of a VT's session is the owner of the session's pty slave
 * (login fchown()s the tty to the user), confirmed by logind: that user has
 * a session, not closing, whose TTY is that pty. Anything else (a login
 * prompt: the tty is root's and no session names it; logind unreadable; a
 * pty of another owner than the session's) shares nothing: the buffer stays
 * the VT's own.
 *
 * Where: a file per user, SHARE_DIR/selection-UID, root's, mode 0600, in
 * a directory only root may enter, on tmpfs (or ramfs) only: never on a
 * disk. Written whole (a temporary file renamed over it); read only when
 * it is a regular file of ours with mode 0600 and one link, not a symlink,
 * at most SELECTION_MAX bytes.
 *
 * Wiped: every instance watches logind (sd_login_monitor) and removes the
 * file of a user who has no session left but closing ones; also when its
 * own session exits, and when it starts.
 */
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

/* The directory shared by all instances (consoled@.service's
 * RuntimeDirectory=, mode 0700). */
#define SHARE_DIR "/run/consoled"
#define SHARE_PREFIX "selection-"

struct share;

/* ---- the store (no logind: unit-tested) ---- */

/* Whether dir is usable: a directory (not a symlink) of this process's
 * user, no access for group and others, on tmpfs or ramfs. -ENOENT,
 * -ENOTDIR, -ELOOP, -EPERM (owner or mode), -EXDEV (not in memory). */
int share_store_check_dir(const char *dir);
/* Replaces uid's buffer with buf[0..len) (len 0: removes it). len at most
 * SELECTION_MAX (-EFBIG). */
int share_store_write(const char *dir, uid_t uid, const char *buf, size_t len);
/* uid's buffer in *ret (malloc()ed, may be NULL when empty) and *ret_len.
 * -ENOENT none; -ELOOP a symlink; -EPERM not a regular file of ours with
 * mode 0600 and one link; -EFBIG longer than SELECTION_MAX. */
int share_store_read(const char *dir, uid_t uid, char **ret, size_t *ret_len);
int share_store_remove(const char *dir, uid_t uid);
/* Removes the buffer of every uid for which keep(uid) is false; the
 * number removed. */
int share_store_sweep(const char *dir, bool (*keep)(uid_t uid, void *userdata), void *userdata);

/* ---- sharing for one VT ---- */

/* dir: SHARE_DIR (tests: elsewhere). Sharing is off (share_uid() fails)
 * when the directory is unusable; logged once. */
int share_new(sd_event *event, const char *dir, struct share **ret);
void share_free(struct share *sh);
/* The user whose buffer the session on the pty of master_fd shares:
 * 0 and *ret, or negative (not shared). Logs when it changes. */
int share_uid(struct share *sh, int master_fd, uid_t *ret);
/* A copy or OSC 52 on the VT set the buffer: stored for the session's
 * user, if shared. */
void share_copied(struct share *sh, int master_fd, const char *buf, size_t len);
/* Before a paste: the user's shared buffer, if shared and stored (1, *ret
 * malloc()ed), else 0. */
int share_get(struct share *sh, int master_fd, char **ret, size_t *ret_len);
/* Removes the buffers of users without sessions (also run by the logind
 * monitor). */
void share_sweep(struct share *sh);
