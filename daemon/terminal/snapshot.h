/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * The terminal's snapshot, for session restore (consoled(8), SESSION
 * RESTORE): a memfd that consoled keeps in systemd's file descriptor store
 * beside the pty master, so that a consoled started after a crash or a
 * restart shows the screen as it was last drawn and goes on with the same
 * session.
 *
 * It holds the visible screen (main and alternate), the scrollback (up to
 * the sb-size it was made for), every cell's character and attributes, the
 * cursor and its visibility, the scrolling region, the screen's flags, the
 * tab stops, the vte's hidden state (stream_state: SGR pen, character sets,
 * saved cursor, key modes, mouse modes), the stand-ins' clusters and the
 * grid size.
 *
 * Format (versioned, little-endian, documented in snapshot.c): two header
 * slots, each with a generation counter and a CRC; the newest valid one
 * wins, so a crash in the middle of an update leaves the previous state
 * readable. Updates are incremental: only rows that changed since the last
 * update are written (to the copy being updated), scrollback lines are
 * appended as they arrive, never the whole history per update. State
 * records are tagged (tag, length), unknown tags are skipped, so later
 * features add records without a new version (the mouse modes did so).
 *
 * The reader trusts nothing in the file: every size, offset, count and code
 * point is checked, and a snapshot that fails any check is refused as a
 * whole (-EBADMSG), never half-applied.
 */
#include <libtsm.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct snapshot;
struct stream;
struct stream_state;
struct cluster_table;

/* A new snapshot in a new memfd ("consoled-snapshot", close-on-exec), for a
 * terminal of up to sb_size scrollback lines. */
int snapshot_new(unsigned sb_size, struct snapshot **ret);
void snapshot_free(struct snapshot *s);
/* The memfd (owned by the snapshot; dup it to hand it on). */
int snapshot_fd(const struct snapshot *s);

/* Brings the memfd up to date with the terminal: called after a frame drawn
 * (or due, while another VT is shown), at most every 100 ms while output
 * keeps coming and once right after it stops (restore.h), so the snapshot
 * may lag the screen by that much. Costs O(rows changed + scrollback lines
 * added since the last update, at most sb_size of them); a scrollback line
 * costs about its text's bytes plus 12 per run of equal attributes. */
int snapshot_update(struct snapshot *s, struct tsm_screen *screen, struct stream *stream,
		    const struct cluster_table *clusters);

/* The same while output floods in: of the scrollback lines added since the
 * last update, at most a screenful (the newest) is written; if more came, the
 * snapshot's scrollback starts over from these (older lines are dropped from
 * it), so an update costs about two screenfuls however fast the output
 * comes. Returns 1 while the snapshot holds less scrollback than the screen
 * (the next snapshot_update() writes all of it again), 0 if it holds all, or
 * a negative errno. */
int snapshot_update_flood(struct snapshot *s, struct tsm_screen *screen, struct stream *stream,
			  const struct cluster_table *clusters);

/* A new session: what the snapshot holds is dropped at once (the next
 * update writes everything anew), so nothing of the last user stays in it. */
void snapshot_reset(struct snapshot *s);

/* Adoption: checks the snapshot in fd (magic, version, sizes, CRCs, every
 * value) and rebuilds screen, vte (through stream_set_state()) and clusters
 * from it, at the grid the snapshot was made for (the screen is resized to
 * it; the caller then resizes to its own grid, as on a zoom). Returns 0, or a
 * negative errno (-EBADMSG: corrupt or truncated; -EPROTONOSUPPORT: another
 * version) with nothing changed (a snapshot is checked whole, the stream
 * state on a scratch terminal, before anything is rebuilt); *ret_cols and
 * *ret_rows: the grid it was made for (may be NULL). */
int snapshot_restore(int fd, struct tsm_screen *screen, struct tsm_vte *vte, struct stream *stream,
		     struct cluster_table *clusters, unsigned *ret_cols, unsigned *ret_rows);

/* Whether this libtsm's screen can be snapshotted (its internals are read
 * as libtsm 4.0.2 lays them out, after a check that the layout matches). */
bool snapshot_supported(struct tsm_screen *screen);

/* Tests only (NULL otherwise): called in every update right before a header
 * is written, with the memfd and the phase (1: a header that only drops the
 * scrollback lines the update is about to overwrite; 2: the update's own).
 * A copy of the memfd taken there is what a crash at that instant leaves. */
extern void (*snapshot_test_commit_hook)(int fd, unsigned phase, void *userdata);
extern void *snapshot_test_commit_userdata;
