/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One terminal (terminal.h): the session, its snapshot's pace, the selection
 * and its sharing, the vcs mirror, the bell and the respawn throttle.
 */
#define LOG_MODULE "consoled"
#include "terminal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "selection.h"
#include "share.h"
#include "stream.h"
#include "vcs.h"
#include "../util/log.h"
#include "../util/util.h"

/* Session restore: while output keeps coming, the snapshot is brought up to
 * date at most once per SNAPSHOT_INTERVAL (at a frame, with at most a
 * screenful of new scrollback), the first time SNAPSHOT_INTERVAL after the
 * first frame it lacks, and once more (whole) when no new output follows a
 * frame for SNAPSHOT_QUIET: it lags the screen by at most about
 * SNAPSHOT_INTERVAL during a flood, and holds the screen last drawn and the
 * whole scrollback SNAPSHOT_QUIET after the output stops (restore.h). Not
 * at the first frame of new output: an echo's update waits for the quiet
 * (not before the next key), and a burst of output is parsed first. */
#define SNAPSHOT_INTERVAL_USEC (100 * USEC_PER_MSEC)
/* two frame intervals (FRAME_INTERVAL_USEC, screen/frame.h); the vcs
 * mirror after an echo waits as long (VCS_QUIET_MS): one wake-up for both */
#define SNAPSHOT_QUIET_USEC (2 * 16 * USEC_PER_MSEC)
/* A copy made by OSC 52 sets this VT's buffer at once, but is shared with
 * the user's other VTs (share_copied(): logind's files read, the store's
 * file written and renamed: ~80 us natively, some milliseconds under TCG)
 * at most once per SHARE_INTERVAL: the first one after a quiet time at once,
 * the last of a burst SHARE_INTERVAL after the one before (a timer to the
 * millisecond). A paste on this VT shares what is pending first; one on
 * another VT comes later than 100 ms after the copy anyway (a VT switch,
 * then a key). A program can send 372 OSC 52 in one read of the pty (4 KiB:
 * the master's line discipline hands out no more), thousands a second:
 * sharing each held the loop ~30 ms per read natively (81 us each), seconds
 * under TCG; once per FRAME_INTERVAL the stores under TCG still delayed
 * an echo by 40-50 ms (tests/vm/selecttest.py osc52-flood). */
#define SHARE_INTERVAL_USEC (100 * USEC_PER_MSEC)
/* The session ended (a logout): a new login comes at once, unless sessions
 * keep dying (RESPAWN_BURST within RESPAWN_INTERVAL), then after a pause, so a
 * broken login command does not spin. */
#define RESPAWN_BURST 5
#define RESPAWN_INTERVAL_USEC (10 * USEC_PER_SEC)

_Static_assert(ELEMENTSOF(((struct terminal *)0)->exits) == RESPAWN_BURST,
	       "one exit time per RESPAWN_BURST");

/* A frame was drawn (or is due while another VT is shown): the snapshot
 * follows now if the last update and the first frame it lacks are
 * SNAPSHOT_INTERVAL old (with at most a screenful of new scrollback: output
 * may be flooding in), and once more when the output has stopped
 * (terminal_on_snapshot()) unless that one was complete. */
void terminal_frame_done(struct terminal *t)
{
	uint64_t now = now_usec();

	if (!restore_active(t->restore))
		return;
	if (!t->snapshot_behind_usec)
		t->snapshot_behind_usec = now;
	if (now >= t->last_snapshot_usec + SNAPSHOT_INTERVAL_USEC &&
	    now >= t->snapshot_behind_usec + SNAPSHOT_INTERVAL_USEC) {
		bool more;

		t->last_snapshot_usec = now;
		more = restore_update_flood(t->restore, t->term);
		t->snapshot_usec += now_usec() - now;
		if (!more) {
			t->snapshot_behind_usec = 0;
			sd_event_source_set_enabled(t->snapshot_source, SD_EVENT_OFF);
			return;
		}
	}
	sd_event_source_set_time(t->snapshot_source, now + SNAPSHOT_QUIET_USEC);
	sd_event_source_set_enabled(t->snapshot_source, SD_EVENT_ONESHOT);
}

static int terminal_on_snapshot(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct terminal *t = userdata;

	(void)s;
	(void)usec;
	/* A frame is pending: output goes on, that frame updates the
	 * snapshot or waits again. */
	if (t->cb.frame_pending(t, t->userdata) || !t->term)
		return 0;
	uint64_t start = now_usec();

	restore_update(t->restore, t->term);
	t->snapshot_behind_usec = 0;
	t->last_snapshot_usec = now_usec();
	t->snapshot_usec += t->last_snapshot_usec - start;
	return 0;
}

static bool terminal_vcs_source(void *userdata, struct vcs_source *ret)
{
	struct terminal *t = userdata;

	/* after vcs_clear() at the exit, nothing of the ended session comes
	 * back (a band of kernel messages, a selection or a VT switch during
	 * the pause damages the mirror) */
	if (!t->term || t->ended)
		return false;
	*ret = (struct vcs_source){term_screen(t->term), term_clusters(t->term)};
	return true;
}

static void terminal_on_damage(void *userdata)
{
	struct terminal *t = userdata;

	t->cb.damage(t, t->userdata);
	vcs_damage(t->vcs);
}

/* ---- selection and paste (selection.h) ---- */

/* Whether the session asked for bracketed paste (DECSET 2004, followed by
 * the stream stage). */
static bool terminal_bracketed_paste(struct terminal *t)
{
	return stream_mouse_modes(term_stream(t->term)) & STREAM_MOUSE_BRACKETED_PASTE;
}

void terminal_paste(struct terminal *t)
{
	char *shared;
	size_t len;

	if (!t->selection || !t->term)
		return;
	terminal_share_flush(t);
	/* the last copy on any VT of the session's user (share.h) */
	if (share_get(t->share, term_master_fd(t->term), &shared, &len) > 0) {
		selection_set_buffer(t->selection, shared, len);
		if (shared)
			explicit_bzero(shared, len);
		free(shared);
	}
	selection_paste(t->selection, terminal_bracketed_paste(t));
}

/* The buffer was set on this VT: shared with the user's other VTs. */
void terminal_copied(struct terminal *t)
{
	size_t len;
	const char *buf = selection_buffer(t->selection, &len);

	if (t->share_osc52s)
		log_debug("OSC 52 set the buffer (%zu bytes; %u OSC 52 since it was last shared)",
			  len, t->share_osc52s);
	t->share_osc52s = 0;
	t->last_share_usec = now_usec();
	sd_event_source_set_enabled(t->share_source, SD_EVENT_OFF);
	if (t->term)
		share_copied(t->share, term_master_fd(t->term), buf, len);
}

/* What OSC 52 copied and is not shared yet is shared now: before a paste
 * reads the shared buffer, and before the session's buffer goes. */
void terminal_share_flush(struct terminal *t)
{
	if (t->share_osc52s && t->selection)
		terminal_copied(t);
}

static int terminal_on_share(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)s;
	(void)usec;
	terminal_share_flush(userdata);
	return 0;
}

static void terminal_on_osc52(const char *args, size_t len, void *userdata)
{
	struct terminal *t = userdata;
	uint64_t now;

	if (!t->selection || !selection_osc52(t->selection, args, len))
		return;
	if (t->share_osc52s++ > 0)
		return; /* the timer runs */
	now = now_usec();
	if (now >= t->last_share_usec + SHARE_INTERVAL_USEC) {
		terminal_copied(t);
		return;
	}
	sd_event_source_set_time(t->share_source, t->last_share_usec + SHARE_INTERVAL_USEC);
	sd_event_source_set_enabled(t->share_source, SD_EVENT_ONESHOT);
}

/* ---- end of selection and paste ---- */

static int terminal_on_respawn(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct terminal *t = userdata;

	(void)s;
	(void)usec;
	/* A new session starts from nothing of the last one: the terminal
	 * (both screens, the scrollback, saved cursors, modes, the stream
	 * stage's state and stand-ins: stream_wipe()), and what was selected
	 * or copied on the old screen while no session ran (the pause of a
	 * throttled respawn) is gone before the new one can paste it. */
	if (t->selection)
		selection_wipe(t->selection);
	t->cb.respawning(t, t->userdata);
	if (term_restart(t->term) < 0) {
		t->cb.failed(t, true, t->userdata);
		return 0;
	}
	t->ended = false;
	/* the snapshot, written again from the empty terminal */
	restore_session_started(t->restore, t->term);
	/* the cluster table starts empty: stand-ins are handed out again;
	 * and nothing of the last user stays in video memory */
	t->cb.respawned(t, t->userdata);
	sd_notify(0, "STATUS=Session running");
	return 0;
}

static void terminal_on_exited(int status, void *userdata)
{
	struct terminal *t = userdata;
	uint64_t now = now_usec(), oldest = t->exits[t->n_exits % RESPAWN_BURST];
	uint64_t when = now;
	int r;

	/* Nothing of the session stays in the fd store or the snapshot. */
	restore_session_ended(t->restore);
	/* nor what its user selected or copied (after the user's other VTs
	 * got the last copy, as they would have without SHARE_INTERVAL) */
	terminal_share_flush(t);
	if (t->selection)
		selection_wipe(t->selection);
	share_sweep(t->share); /* the user's last session? */
	/* nor what the VT's buffer mirrored of its screen */
	t->ended = true;
	vcs_clear(t->vcs);
	sd_event_source_set_enabled(t->snapshot_source, SD_EVENT_OFF);
	t->snapshot_behind_usec = 0;
	t->exits[t->n_exits++ % RESPAWN_BURST] = now;
	if (t->n_exits >= RESPAWN_BURST && now - oldest < RESPAWN_INTERVAL_USEC) {
		when = oldest + RESPAWN_INTERVAL_USEC;
		log_warning("The session exited %d times within %llu s (last status %d); waiting "
			    "%llu ms before starting it again",
			    RESPAWN_BURST,
			    (unsigned long long)(RESPAWN_INTERVAL_USEC / USEC_PER_SEC), status,
			    (unsigned long long)((when - now) / USEC_PER_MSEC));
		sd_notify(0, "STATUS=Session keeps exiting, waiting before a new login");
	}
	if (!t->respawn_source) {
		r = sd_event_add_time(t->event, &t->respawn_source, CLOCK_MONOTONIC, when, 0,
				      terminal_on_respawn, t);
		if (r < 0) {
			log_error_errno(r, "Failed to schedule a new session: %m");
			t->cb.failed(t, false, t->userdata);
			return;
		}
	} else
		sd_event_source_set_time(t->respawn_source, when);
	sd_event_source_set_enabled(t->respawn_source, SD_EVENT_ONESHOT);
}

/* ---- the bell (bell.h) ---- */

static void terminal_on_bell_flash(bool on, void *userdata)
{
	struct terminal *t = userdata;

	t->cb.flash(t, on, t->userdata);
}

static int terminal_on_bell_tone(unsigned hz, unsigned ms, void *userdata)
{
	struct terminal *t = userdata;

	return t->cb.tone(t, hz, ms, t->userdata);
}

static void terminal_on_bell(unsigned count, void *userdata)
{
	struct terminal *t = userdata;

	bell_ring(t->bell, count, t->cb.visible(t, t->userdata));
}

int terminal_new(sd_event *event, enum bell_mode bell, const struct terminal_callbacks *cb,
		 void *userdata, struct terminal **ret)
{
	struct terminal *t = xcalloc(1, sizeof(*t));
	int r;

	t->event = event;
	t->cb = *cb;
	t->userdata = userdata;
	*ret = t;
	/* to the millisecond (sd-event's default accuracy is 250 ms) */
	r = sd_event_add_time(event, &t->snapshot_source, CLOCK_MONOTONIC, 0, USEC_PER_MSEC,
			      terminal_on_snapshot, t);
	if (r < 0)
		return log_error_errno(r, "Failed to create the snapshot timer: %m");
	sd_event_source_set_enabled(t->snapshot_source, SD_EVENT_OFF);
	/* to the millisecond (SHARE_INTERVAL) */
	r = sd_event_add_time(event, &t->share_source, CLOCK_MONOTONIC, 0, USEC_PER_MSEC,
			      terminal_on_share, t);
	if (r < 0)
		return log_error_errno(r, "Failed to create the share timer: %m");
	sd_event_source_set_enabled(t->share_source, SD_EVENT_OFF);
	return bell_new(event, bell,
			&(struct bell_callbacks){terminal_on_bell_flash, terminal_on_bell_tone}, t,
			&t->bell);
}

int terminal_start(struct terminal *t, struct terminal_config *c)
{
	struct term_adopt adopt;
	int r = 0;

	/* A session that the last consoled left in systemd's fd store is
	 * adopted; without one (or if its snapshot is bad) a new one starts. */
	restore_new(&c->restore, &t->restore);
	if (restore_handed(t->restore, &adopt)) {
		c->term.adopt = &adopt;
		r = term_new(t->event, &c->term,
			     &(struct term_callbacks){terminal_on_damage, terminal_on_exited}, t,
			     &t->term);
		restore_handed_done(t->restore, r >= 0, r);
		c->term.adopt = NULL;
	}
	if (!t->term)
		r = term_new(t->event, &c->term,
			     &(struct term_callbacks){terminal_on_damage, terminal_on_exited}, t,
			     &t->term);
	if (r < 0) {
		/* a seat's next Ctrl+Alt+Fn tries again from the start */
		restore_free(t->restore);
		t->restore = NULL;
		return r;
	}
	term_set_bell(t->term, terminal_on_bell, t);
	restore_session_started(t->restore, t->term);
	if (!t->share)
		share_new(t->event, SHARE_DIR, &t->share);
	if (selection_new(t->term, c->word_chars, &t->selection) >= 0)
		term_set_osc52(t->term, terminal_on_osc52, t);
	else
		log_warning("No mouse selection");
	/* made active when its VT is acquired; without it, no mirror */
	if (c->vcs)
		(void)vcs_new(t->event, c->term.vt, terminal_vcs_source, t, &t->vcs);
	return 0;
}

void terminal_stop(struct terminal *t)
{
	if (!t)
		return;
	/* The last output is in the snapshot that the store keeps. */
	restore_update(t->restore, t->term);
	terminal_share_flush(t);
	selection_free(t->selection);
	t->selection = NULL;
	share_free(t->share);
	t->share = NULL;
	term_free(t->term);
	t->term = NULL;
	restore_free(t->restore);
	t->restore = NULL;
	/* the VT's buffer cleared while the VT is still in graphics mode */
	vcs_free(t->vcs);
	t->vcs = NULL;
}

void terminal_free(struct terminal *t)
{
	if (!t)
		return;
	sd_event_source_unref(t->snapshot_source);
	sd_event_source_unref(t->respawn_source);
	sd_event_source_unref(t->share_source);
	bell_free(t->bell);
	free(t);
}
