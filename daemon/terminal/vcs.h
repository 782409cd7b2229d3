/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * The mirror: the visible text and the cursor, copied into the VT's own
 * screen buffer, which /dev/vcsN, /dev/vcsaN and /dev/vcsuN read. Screen
 * readers and braille displays (BRLTTY) and `setterm --dump` read those; on
 * consoled's VT they would otherwise find whatever the kernel's console
 * showed before consoled took it.
 *
 * The mirror is written to the VT's tty as terminal output while the VT is
 * in KD_GRAPHICS (vt.h): the kernel then draws nothing, but its terminal
 * emulation still updates the buffer. Writing /dev/vcsaN directly would need
 * the glyph numbers of the kernel's font and would leave /dev/vcsuN (the
 * code points) stale; as output, each character goes through the kernel's
 * own unicode map, so vcsa gets the glyph the font has for it (or its
 * replacement) and vcsu the code point itself.
 *
 * What is written is a fixed preamble (UTF-8, default attributes, no insert
 * mode, no origin mode, no autowrap), then every row: its position (CUP),
 * an erase of the row (EL 2) and its characters as UTF-8; then the
 * cursor's position and visibility. No byte below 0x20 except the ESC of
 * those sequences, and no C1 control, DEL, surrogate or zero-width
 * character the kernel would not advance over, reaches the VT: a cell
 * holding one (nothing libtsm should store, but the screen is the session's
 * and hostile) is written as '?'. No newline, carriage return or tab is
 * written, so the tty's output processing (OPOST, ONLCR, ...), which
 * consoled leaves as it is, changes nothing; no query is written, so the
 * kernel never answers into the tty's input.
 *
 * Sizes: the VT keeps the size the kernel's console gave it (TIOCGWINSZ,
 * read before every mirror). A grid smaller than the VT leaves the rest of
 * the VT blank; a larger one is clipped to a window of the VT's size that
 * holds the cursor (top-left otherwise). A character that libtsm and the
 * kernel may count with different widths (from U+0300 on) is followed by a
 * column position (CHA), so a disagreement never shifts the rest of a row.
 *
 * Only the rows that differ from the last mirror the VT got are written
 * (vcs_encode_changes()), with the preamble and the cursor: an echo costs
 * the kernel a row, not a screenful. A whole mirror is written when the VT
 * is ours again (another program may have written to it meanwhile), after
 * the VT's size changed, after a clear and after a write that failed.
 * Whatever else writes to the VT while it is ours (root with `echo
 * >/dev/ttyN`) stays in the buffer until those rows change.
 *
 * Rate: a change is mirrored VCS_QUIET_MS after it if the last mirror is
 * VCS_INTERVAL_MS old (an echo's mirror comes after its frame has been
 * seen, not between the frame and consoled's sleep); a change within that
 * time (output going on: a flood) waits until the last mirror is
 * VCS_FLOOD_INTERVAL_MS old. The last change is always
 * mirrored. On release (another VT in front, or another program took ours)
 * nothing is written until the VT is ours again. When a session ends, the
 * buffer is cleared at once, and at exit too, with the cursor shown and
 * autowrap on again: nothing of one user's screen waits there for the next.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

struct vcs;
struct tsm_screen;
struct cluster_table;

#define VCS_INTERVAL_MS 50
/* session restore's quiet time (SNAPSHOT_QUIET, terminal.c): an echo's
 * mirror and snapshot share a wake-up */
#define VCS_QUIET_MS 32
/* The buffer emptied, the cursor shown and autowrap on again: the kernel's
 * console as a fresh VT has it (also what consoled-fallback writes, plus
 * CSI 3 J there). Not CSI 3 J here: on the VT in front, fbcon (6.1 has no
 * scrollback to flush) runs its whole switch for it, which sets the
 * framebuffer's mode and pan under consoled; the mirror never scrolls, so
 * the kernel's scrollback holds nothing of it anyway. */
#define VCS_CLEAR_SEQ "\033[0m\033[?7h\033[?25h\033[H\033[2J"
#define VCS_FLOOD_INTERVAL_MS 250

/* What the mirror copies; the getter returns false when there is no
 * screen (no term). clusters may be NULL. */
struct vcs_source {
	struct tsm_screen *screen;
	const struct cluster_table *clusters;
};
typedef bool (*vcs_source_fn)(void *userdata, struct vcs_source *ret);

/* Rows drawn over the screen's (the kernel messages' band or view:
 * overlay_row_text(), screen/overlay.h), so that the mirror shows what the
 * glass shows: fills cps[0..cols) with the row's code points (0: the right
 * half of the wide character before) and returns true, or returns false
 * for the screen's own row. */
typedef bool (*vcs_row_fn)(void *userdata, unsigned row, unsigned cols, uint32_t *cps);

struct vcs_stats {
	uint64_t writes; /* mirrors and clears written */
	uint64_t bytes;	 /* bytes written to the tty */
	uint64_t failed; /* writes that failed or were short (retried) */
	uint64_t usec;	 /* time spent making and writing mirrors */
};

/* Opens /dev/ttyN on its own (non-blocking) file description. */
int vcs_new(sd_event *event, unsigned vt, vcs_source_fn source, void *userdata, struct vcs **ret);
/* Clears the buffer (the cursor shown, autowrap on) and closes. */
void vcs_free(struct vcs *v);

/* The VT is ours and in front (true: mirrored now) or not (nothing is
 * written until it is again). */
void vcs_set_active(struct vcs *v, bool active);
/* The screen changed: mirrored within VCS_QUIET_MS, or within
 * VCS_FLOOD_INTERVAL_MS of the last mirror while output goes on. */
void vcs_damage(struct vcs *v);
/* From the next mirror on, rows come from `row` where it has one (NULL:
 * none); a change of those rows is a vcs_damage() too. */
void vcs_set_rows(struct vcs *v, vcs_row_fn row, void *userdata);
/* The session ended: the buffer is cleared now, whether the VT is in front
 * or not. */
void vcs_clear(struct vcs *v);
const struct vcs_stats *vcs_get_stats(const struct vcs *v);

/* What a cell's code point is written as: itself, or '?' for anything the
 * kernel's terminal takes as a control (C0, DEL, C1: U+009B is CSI there),
 * anything that is not a character (surrogates, beyond U+10FFFF, U+FFFE,
 * U+FFFF), and the zero-width characters the kernel prints without moving
 * the cursor (U+200B..U+200F, U+FEFF). */
uint32_t vcs_safe_cp(uint32_t cp);

/* The bytes of one mirror, appended to a growing buffer. An encoding
 * (vcs_encode*()) also says where its rows are: row i's bytes (its CUP,
 * erase and text) start at rows[i]; rows[n_rows] is where the rows end
 * and what follows them (the erase below, the cursor) starts. */
struct vcs_cell {
	uint32_t cp;	/* ' ' for a blank */
	unsigned width; /* 1 or 2; 0 behind a wide character */
};
struct vcs_buf {
	char *data;
	size_t len, cap;
	size_t *rows;
	unsigned n_rows, rows_cap;
	/* the cells the rows were encoded from: n_rows rows of cols */
	struct vcs_cell *cells;
	size_t cells_cap;
	unsigned cols;
	/* the whole grid as read from libtsm (grid_cols x grid_rows), and
	 * what it was read from: libtsm's age counter then (0: not to be
	 * kept: drawn, a view into the scrollback, rows drawn over it), the
	 * screen, its line array and the stand-ins' table */
	struct vcs_cell *grid;
	size_t grid_cap;
	unsigned grid_cols, grid_rows;
	uint64_t grid_age;
	const void *grid_screen, *grid_lines, *grid_clusters;
};
void vcs_buf_fini(struct vcs_buf *b);
/* Encodes src for a VT of vt_cols x vt_rows into out (emptied first). */
void vcs_encode(const struct vcs_source *src, unsigned vt_cols, unsigned vt_rows,
		struct vcs_buf *out);
/* ... with the rows `row` gives (NULL: as vcs_encode()) in place of the
 * screen's. */
void vcs_encode_rows(const struct vcs_source *src, vcs_row_fn row_fn, void *row_data,
		     unsigned vt_cols, unsigned vt_rows, struct vcs_buf *out);
/* ... taking the bytes of each row whose cells are those of prev's row
 * (an encoding for a window as wide; NULL: none) from prev, and the
 * cells of each row libtsm did not change since prev's grid was read from
 * that grid: what the mirror does, where most rows are as the last mirror
 * left them. The same bytes as vcs_encode_rows(). prev must be what the
 * last encoding of this screen wrote (its grid is trusted for the rows
 * libtsm's ages say are unchanged). */
void vcs_encode_after(const struct vcs_source *src, vcs_row_fn row_fn, void *row_data,
		      unsigned vt_cols, unsigned vt_rows, const struct vcs_buf *prev,
		      struct vcs_buf *out);
/* Tests: the grid always through tsm_screen_draw(), never read from
 * libtsm's lines (what a libtsm whose layout tsmpeek does not know gets). */
extern bool vcs_test_draw_only;
/* What of the encoding `cur` differs from `prev`, the one the VT holds,
 * both for the same VT size, into out (emptied first): the preamble, the
 * rows whose bytes differ, and the end (the erase below the rows and the
 * cursor). All of cur when the row counts differ or prev has no rows. */
void vcs_encode_changes(const struct vcs_buf *prev, const struct vcs_buf *cur, struct vcs_buf *out);
