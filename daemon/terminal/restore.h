/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Session restore (consoled(8), SESSION RESTORE): what survives a crash or a
 * restart of consoled lives in systemd's file descriptor store, under three
 * names: "pty" (the session's pty master, stored with FDPOLL=0: PID 1 would
 * drop it on the POLLHUP it shows whenever no slave fd is open, as while
 * login calls vhangup()), "pidfd" (a pidfd of the session's leader, from
 * consoled-session(8)) and "snapshot" (the memfd of snapshot.h).
 *
 * A seat without VTs keeps each terminal's session: terminal N's fds are
 * named "pty.N", "pidfd.N" and "snapshot.N" (terminal 1's as above, so a
 * VT's single terminal and an older consoled's store read the same). At
 * start, the first restore_new() reads what the store hands over
 * (sd_listen_fds_with_names()) into a pool, each terminal's restore_new()
 * takes its own names from it and checks them: the pty must be a pty master,
 * the pidfd's process alive and the leader of the pty's session; the
 * snapshot is checked by snapshot_restore() when the term adopts the
 * session. Anything else (an incomplete set, a dead session, unknown names,
 * session restore off) is closed, removed from the store and logged in one
 * line; closing the master hangs a session that was left up.
 *
 * While a session runs, its fds are in the store (only under systemd, with
 * sessions started through consoled-session: a session consoled forked lives
 * in consoled's cgroup and dies with it), and the snapshot is brought up to
 * date as frames are drawn (or would be, while another VT is shown): at a
 * frame if the last update is 100 ms old, else 32 ms after a frame that no
 * new output follows (terminal.c). So during a flood of output it lags the
 * screen by at most about 100 ms (a crash then restores a screen a little
 * older than the last one drawn, still whole, whose scrollback may hold only
 * the last screenful or two of the flood: an update at a frame writes at most
 * a screenful of new scrollback lines), and once the output stops it holds
 * exactly the screen last drawn and the whole scrollback within 32 ms. The
 * snapshot is kept with session restore on also without systemd (so its cost
 * can be measured), only never stored. When the session ends, its fds leave
 * the store and the snapshot is reset. At exit nothing is removed: systemctl
 * restart keeps the store, systemctl stop makes PID 1 drop it.
 */
#include <stdbool.h>
#include <stddef.h>

/* The terminals a seat can keep over a restart (options.h's
 * OPTIONS_TERMINALS_MAX), and the longest fd name ("snapshot.12"). */
#define RESTORE_SLOTS_MAX 12
#define RESTORE_NAME_MAX 16

struct restore;
struct term;
struct term_adopt;

struct restore_config {
	bool enabled; /* --session-restore */
	/* Hand sessions to systemd's fd store: under systemd (NOTIFY_SOCKET)
	 * and with sessions through consoled-session (--session-socket). */
	bool store;
	unsigned sb_size; /* the snapshot's scrollback */
	/* The terminal, from 1: its fds are stored as "pty", "pidfd" and
	 * "snapshot" (terminal 1, and 0 the same), "pty.N", "pidfd.N" and
	 * "snapshot.N" (terminal N). */
	unsigned slot;
};

/* The fd store's name of an fd (kind: 0 pty, 1 pidfd, 2 snapshot) of
 * terminal slot. */
void restore_fd_name(unsigned slot, int kind, char *buf, size_t size);
/* Whether the store handed over fds of terminal slot that no terminal has
 * taken yet (a seat starts that terminal at once, to adopt its session). */
bool restore_stored(unsigned slot);
/* Closes and removes from the store what the store handed over and no
 * terminal took (a terminal beyond terminals=), with a log line each. */
void restore_drop_unclaimed(void);

/* Takes the fds the store handed over (closing and removing what cannot be
 * adopted). Never fails: a problem only costs the old session. */
void restore_new(const struct restore_config *c, struct restore **ret);
void restore_free(struct restore *r);

/* The session handed over, checked but for its snapshot: fills *ret and
 * returns true, or false if there is none. */
bool restore_handed(struct restore *r, struct term_adopt *ret);
/* The term took the handed session's master and pidfd (true), or could not
 * restore its snapshot (false, error: its negative errno): then everything
 * handed over is closed and removed from the store, with a log line. */
void restore_handed_done(struct restore *r, bool adopted, int error);

/* A session runs on t (started or adopted): the snapshot is made (the first
 * time) and written, and the session's fds go to the store. */
void restore_session_started(struct restore *r, struct term *t);
/* The session ended: its fds leave the store, the snapshot is reset. */
void restore_session_ended(struct restore *r);
/* Brings the snapshot up to date with t (terminal.c calls it at the pace above). */
void restore_update(struct restore *r, struct term *t);
/* The same during a flood of output: with at most a screenful of the new
 * scrollback (snapshot_update_flood()). Returns true if the snapshot then
 * holds less scrollback than t: a restore_update() is due once the output
 * stops. */
bool restore_update_flood(struct restore *r, struct term *t);

/* Whether a snapshot is kept (session restore on and possible). */
bool restore_active(const struct restore *r);
