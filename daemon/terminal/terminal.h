/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One terminal: a session on a pty (term.h: libtsm and the stream stage in
 * front of it) and everything kept of it: the session-restore snapshot and
 * fd store (restore.h), the selection and the copy buffer shared with the
 * user's other VTs (selection.h, share.h), the mirror into the VT's buffer
 * (vcs.h), the bell (bell.h), and a new session when one ends (with a
 * throttle: RESPAWN_BURST exits within RESPAWN_INTERVAL wait).
 *
 * A terminal knows no screen: what it needs of the screens that show it
 * (a frame, a flash, whether it is seen, a wiped video memory) it asks
 * through its callbacks, which the seat (seat.h) wires.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "bell.h"
#include "restore.h"
#include "term.h"

struct terminal;

struct terminal_callbacks {
	/* New output: a frame is due on every screen showing it. */
	void (*damage)(struct terminal *t, void *userdata);
	/* Whether a frame is due on a screen showing it (the snapshot's
	 * update after the output stops waits for that frame). */
	bool (*frame_pending)(struct terminal *t, void *userdata);
	/* Whether a screen shows it (drawn, not blanked): the bell flashes. */
	bool (*visible)(struct terminal *t, void *userdata);
	void (*flash)(struct terminal *t, bool on, void *userdata);
	int (*tone)(struct terminal *t, unsigned hz, unsigned ms, void *userdata);
	/* A new session is about to start on it (the old one's pointer
	 * buttons are forgotten). */
	void (*respawning)(struct terminal *t, void *userdata);
	/* The new session runs: new stand-ins, video memory wiped. */
	void (*respawned)(struct terminal *t, void *userdata);
	/* No session can run any more; session_start: a session could not be
	 * started (the helper is gone or refuses). The caller exits. */
	void (*failed)(struct terminal *t, bool session_start, void *userdata);
};

struct terminal_config {
	struct term_config term;
	struct restore_config restore;
	const char *word_chars;
	bool vcs; /* the mirror into the VT's buffer (term.vt's) */
};

struct terminal {
	sd_event *event;
	struct term *term;
	struct selection *selection; /* NULL if it could not be made */
	struct share *share;	     /* the buffer shared between one user's VTs */
	/* OSC 52 copies not shared yet (SHARE_INTERVAL): the timer, how many
	 * since the last time the buffer was shared, and when that was. */
	sd_event_source *share_source;
	unsigned share_osc52s;
	uint64_t last_share_usec;
	struct restore *restore;	  /* session restore: the snapshot, the fd store */
	sd_event_source *snapshot_source; /* the update after the last frame */
	uint64_t last_snapshot_usec;
	uint64_t snapshot_behind_usec; /* the first frame the snapshot lacks, or 0 */
	uint64_t snapshot_usec;	       /* time spent updating the snapshot (--stats) */
	sd_event_source *respawn_source;
	uint64_t exits[5]; /* times of the last RESPAWN_BURST session exits */
	unsigned n_exits;
	/* the session exited and the next is not started yet (the respawn's
	 * pause): the vcs mirror shows nothing of the old screen */
	bool ended;
	/* The mirror into the VT's screen buffer (vcs.h); NULL with --vcs=no. */
	struct vcs *vcs;
	struct bell *bell; /* what BEL does (--bell=) */
	struct terminal_callbacks cb;
	void *userdata;
};

/* Its timers and its bell; no session yet (terminal_start()). */
int terminal_new(sd_event *event, enum bell_mode bell, const struct terminal_callbacks *cb,
		 void *userdata, struct terminal **ret);
/* The session: adopted from the fd store if the last consoled left one
 * there, else a new one; then the snapshot, the selection, the mirror.
 * Fails only if no session can be had (term_new()'s error). */
int terminal_start(struct terminal *t, struct terminal_config *c);
/* The last output into the snapshot, then the session's parts freed in
 * order (the VT's buffer cleared last). */
void terminal_stop(struct terminal *t);
void terminal_free(struct terminal *t);

/* A frame was drawn, or is due while nothing draws it: the snapshot
 * follows at its pace (SNAPSHOT_INTERVAL, SNAPSHOT_QUIET). */
void terminal_frame_done(struct terminal *t);
/* The last copy of the user's (share.h) pasted, bracketed if asked for. */
void terminal_paste(struct terminal *t);
/* The selection's buffer was set here: shared with the user's other VTs. */
void terminal_copied(struct terminal *t);
/* What OSC 52 copied and is not shared yet is shared now. */
void terminal_share_flush(struct terminal *t);
