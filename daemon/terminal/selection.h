/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * The mouse selection, its copy buffer and paste.
 *
 * A selection is kept in "line numbers" that stay with the text when it
 * scrolls: libtsm numbers the lines it pushes into the scrollback (sb_id,
 * read through tsmpeek.h), and screen row r is line sb_last_id + 1 + r. So a
 * selection dragged into the scrollback, or scrolled away by output, still
 * names the same text. What the view shows of it is handed to libtsm's own
 * selection (tsm_screen_selection_start/_target), whose tsm_screen_draw()
 * inverts the selected cells for the renderer; libtsm's copy is not used (it
 * returns stand-ins, not clusters, and keeps trailing blanks).
 *
 * Units: one click selects cells (from the press to where the pointer is),
 * two select words (word characters: ASCII letters and digits, every
 * character above U+00A0, and the configured extra ones), three select lines
 * (with the lines they wrap into). Wide characters are always selected
 * whole. Copy: each cell's real text (a stand-in resolved to its cluster,
 * cluster.h), blanks at the end of each line dropped, lines joined where the
 * text wrapped (the line's last cell holds a character, as the Linux
 * console's selection decides), a newline between others; a line selection
 * ends with a newline, as in xterm.
 *
 * The selection ends (is no longer shown) when output changes one of its
 * cells (selection_check()). The buffer stays until replaced, or until the
 * session ends (selection_wipe()). It is never written to disk; share.h
 * shares it between the VTs of one user (consoled(8), MOUSE).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct term;
struct tsm_screen;
struct cluster_table;
struct selection;

/* The word characters besides letters and digits when none are configured. */
#define SELECTION_WORD_CHARS_DEFAULT "-_./~:@+%"
/* The most a buffer holds (bytes of UTF-8); a longer copy is cut at a
 * character, a longer OSC 52 text is ignored. */
#define SELECTION_MAX (256 * 1024)

/* What a selection works on (selection_new() takes them from a term). */
struct selection_target {
	struct tsm_screen *screen;
	const struct cluster_table *clusters;
	/* bytes for the session (the pty) */
	void (*write)(const char *bytes, size_t len, void *userdata);
	/* the view or what it highlights changed: a frame is due */
	void (*damage)(void *userdata);
	void *userdata;
};

/* word_chars: UTF-8, NULL for SELECTION_WORD_CHARS_DEFAULT. -EINVAL when
 * it is not valid UTF-8 or holds controls. */
int selection_new(struct term *t, const char *word_chars, struct selection **ret);
int selection_new_target(const struct selection_target *target, const char *word_chars,
			 struct selection **ret);
void selection_free(struct selection *s);

/* Whether word_chars is a valid setting (options.c). */
bool selection_word_chars_valid(const char *word_chars);

/* A press of the selecting button at view cell col,row (row may be -1 or
 * the view's height while dragging past the edges): clicks 1, 2 or 3;
 * extend (Shift) moves the nearer end of the current selection there. */
void selection_start(struct selection *s, unsigned col, int row, unsigned clicks, bool extend);
/* The pointer moved with the button held: past the top or bottom edge the
 * view scrolls one line into (out of) the scrollback. */
void selection_move(struct selection *s, unsigned col, int row);
/* The button released: the selected text goes into the buffer (true: it
 * did, a copy). */
bool selection_end(struct selection *s);
/* Hides the selection (the buffer stays). */
void selection_clear(struct selection *s);
/* After output, before each frame: ends the selection if output changed a
 * selected cell, and shows what the view holds of it. */
void selection_check(struct selection *s);
/* Writes the buffer to the session, sanitised (selection_sanitize()); with
 * `bracketed` (DECSET 2004) between ESC [ 200 ~ and ESC [ 201 ~. */
void selection_paste(struct selection *s, bool bracketed);
/* Replaces the buffer with text (UTF-8; longer than SELECTION_MAX:
 * ignored). */
void selection_set_buffer(struct selection *s, const char *text, size_t len);
/* OSC 52 from the session, what follows "52;": "Pc;Pd" with Pd base64 (set
 * the buffer), empty (clear it) or "?" (a query: never answered). True
 * when the buffer was set or cleared. */
bool selection_osc52(struct selection *s, const char *args, size_t len);
/* The session ended: selection and buffer are wiped (nothing one user copied
 * reaches the next). */
void selection_wipe(struct selection *s);

/* The buffer (not NUL-terminated; NULL when empty). */
const char *selection_buffer(const struct selection *s, size_t *ret_len);
/* Whether a selection is shown. */
bool selection_active(const struct selection *s);

/* What a paste sends of in[0..len): C0 controls but tab and newline, DEL,
 * C1 controls (U+0080..U+009F) and malformed UTF-8 dropped, newline (and
 * CR LF) sent as CR, as xterm does. out has room for len bytes; returns the
 * bytes written. */
size_t selection_sanitize(const char *in, size_t len, char *out);
