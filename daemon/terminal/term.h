/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * The terminal: a libtsm screen and vte, fed by the master side of a pty whose
 * slave is the controlling tty of the session (login). Bytes from the pty go
 * through the stream stage (stream.h, which answers some queries itself)
 * into the vte, which updates the screen and calls `damage` so the renderer
 * schedules a frame; keys from input go through the vte's keyboard encoder
 * back to the pty. When the session's process exits, `exited` is called.
 *
 * The child is started in its own session with the pty as controlling tty,
 * the window size set from the grid, default signal dispositions, no daemon
 * fd open other than 0-2, no I/O port permission, and an environment built
 * from nothing (session_env(), session.h).
 *
 * With cfg->session_socket (under systemd), consoled never forks: the pty's
 * slave goes to consoled-session(8) over that socket (session.h has the
 * protocol), which starts the session outside consoled's sandbox; the
 * helper's report of the session's end, or the connection's end, is the
 * session's exit. Starting a session fails when the helper cannot be
 * reached, refuses or does not answer.
 *
 * Session restore (consoled(8)): a term can also adopt a session that an
 * earlier consoled ran and left in systemd's file descriptor store: its pty
 * master, a pidfd of its leader and the snapshot of the screen
 * (snapshot.h). That session is nobody's child here and has no helper
 * connection: its end is the pidfd becoming readable.
 */
#include <libtsm.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "stream.h"
#include "../session/session.h"

struct term;
struct cluster_table;
struct palette;
struct stream;

/* A session handed over (session restore). */
struct term_adopt {
	int master;   /* the pty master; the term takes it */
	int pidfd;    /* the session leader's pidfd; the term takes it */
	int snapshot; /* the snapshot's memfd; read, left to the caller */
	/* the connection to consoled-session that started the session, or
	 * -1; the term takes it (its exit status, ACTIVATE) */
	int helper;
	pid_t pid; /* the session leader's (the pidfd's) */
};

struct term_callbacks {
	void (*damage)(void *userdata);
	/* status: the exit status, 128 + a signal, or -1 when the session
	 * helper went away without saying */
	void (*exited)(int status, void *userdata);
};

struct term_config {
	unsigned cols, rows;
	unsigned width_px, height_px; /* for TIOCSWINSZ */
	char **argv;		      /* without session_socket */
	const char *term;
	const char *session_socket; /* consoled-session's socket, or NULL: fork */
	unsigned sb_size;
	size_t image_memory; /* bytes the session's sixel images may take; 0: no images */
	unsigned vt;	     /* XDG_VTNR for the session; 0 = not set */
	const char *seat;    /* XDG_SEAT of a seat without VTs (no XDG_VTNR); NULL */
	bool truecolor;	     /* COLORTERM=truecolor (15 bpp and deeper) */
	/* The colours OSC 4, 10 and 11 queries report (the renderer's; the
	 * caller keeps it); NULL: the Linux console's. */
	const struct palette *palette;
	/* A session to adopt instead of starting one, or NULL. term_new()
	 * fails (-EBADMSG, -EPROTONOSUPPORT: snapshot_restore()) without
	 * taking its fds if the snapshot cannot be restored. */
	const struct term_adopt *adopt;
	/* autologin= (getty.h) for a session consoled forks; NULL = none. */
	const char *autologin;
	/* cursor-shape=, cursor-blink= (stream.h, stream_config's cursor) */
	struct stream_cursor cursor;
};

int term_new(sd_event *event, const struct term_config *cfg, const struct term_callbacks *cb,
	     void *userdata, struct term **ret);
void term_free(struct term *t);

/* After the session exited: clears the screen and the scrollback, resets the
 * terminal and the combining-cluster table (the renderer must forget its
 * cached stand-ins: render_set_clusters()) and starts the session command
 * again on a new pty. */
int term_restart(struct term *t);

/* The scrollback lines kept for sb-size= `want` on a grid `cols` wide: at
 * most `want`, and no more than lines of `cols` cells take in `cap` bytes
 * (memory_cap()), counting libtsm's cells (24 bytes each, a line's header
 * and its two heap blocks) and the snapshot's record of the line (16 bytes
 * a cell at most, snapshot.c). term_new() and term_resize() apply it to the
 * widest grid the terminal has had (libtsm keeps a line at the width it was
 * written at) and log what they cut. */
unsigned term_sb_lines_fit(unsigned want, unsigned cols, uint64_t cap);

/* The session's tty as logind names it ("pts/N", TTY= of its session
 * file) into buf; < 0 without a pty. */
int term_tty_name(const struct term *t, char *buf, size_t size);

/* A new grid (zoom): the screen keeps its content as libtsm resizes it and
 * the session gets SIGWINCH. The scrollback's bound follows the width
 * (term_sb_lines_fit()). */
int term_resize(struct term *t, unsigned cols, unsigned rows, unsigned width_px,
		unsigned height_px);

/* Synchronized output (DECSET 2026): while the session has it set, its
 * frames are held, for at most TERM_SYNC_TIMEOUT_USEC from the set (then
 * a frame is scheduled: the callbacks' damage). True while held; false
 * means the caller draws (which ends the hold for the next set). */
#define TERM_SYNC_TIMEOUT_USEC (1000 * UINT64_C(1000))
bool term_frame_held(struct term *t);

struct tsm_screen *term_screen(struct term *t);
struct tsm_vte *term_vte(struct term *t);
struct stream *term_stream(struct term *t);
/* Bytes of what was read from the session's pty so far that reached
 * libtsm (stream_bytes_out(): frame pacing tells floods by them, and a
 * flood of strings, which show nothing, such as OSC 52, is none). */
uint64_t term_bytes_in(const struct term *t);
/* Line feed bytes among them (a screenful of new lines tells a flood
 * before a screenful of bytes does on a wide screen). */
uint64_t term_lines_in(const struct term *t);
/* Time spent parsing what the pty gave (the stream stage and libtsm), in
 * microseconds (--stats). */
uint64_t term_parse_usec(const struct term *t);

/* A key's way from consoled to the session and back (the line
 * discipline's echo), in CLOCK_MONOTONIC microseconds: the screen adds the
 * frame's part and logs it (--verbose, "Key:"). Only the last key is
 * followed: one typed before the echo of the one before replaces it. */
struct term_key_trace {
	uint64_t event_usec;  /* the key's evdev event, the kernel's time (0: unknown) */
	uint64_t input_usec;  /* its device's read began (0: unknown) */
	uint64_t key_usec;    /* term_handle_key() entered */
	uint64_t write_usec;  /* its bytes handed to the pty (write()) */
	uint64_t read_usec;   /* the first read of the pty after it began */
	uint64_t parsed_usec; /* that read parsed (libtsm's screen changed) */
	bool pending;	      /* sent, its echo not yet drawn */
	/* its byte is the session's VINTR, VQUIT or VSUSP with ISIG on: the
	 * foreground gets a signal (Ctrl+C), a flood most likely stops */
	bool interrupt;
};
const struct term_key_trace *term_key_trace(const struct term *t);
/* Whether the damage callback runs for the first read of the session's
 * output after a key (its echo, most likely), at the end of that read's
 * handler: the caller may draw a frame due at once there (screen_draw_due())
 * rather than at the loop's next turn. True once per such read: a damage
 * callback that the frame drawn there causes finds it false, so no frame is
 * drawn inside another. */
bool term_take_echo_read(struct term *t);
/* The frame that drew the echo was drawn: the trace waits for a key again. */
void term_key_trace_done(struct term *t);

/* The session's pty master and its leader's pidfd (-1 if none: a session
 * consoled forked, or a helper without pidfds), or -1 between sessions. */
int term_master_fd(struct term *t);
int term_pidfd(struct term *t);
/* The connection to consoled-session of the session, or -1. */
int term_helper_fd(struct term *t);
/* Asks consoled-session, on the session's connection, to make the session's
 * logind session the seat's active one (a seat without VTs: session.h,
 * ACTIVATE); the answer comes later and is only logged. 0 once asked,
 * -ENOTCONN without a connection (run by hand, an adopted session, or none
 * started), or the send's negative errno (logged). */
int term_activate(struct term *t);

/* What the stand-ins for combining sequences on the screen mean. */
const struct cluster_table *term_clusters(struct term *t);
/* The session's sixel images (image.h), for the renderer; NULL without
 * images (image-memory=0). Outlives the session: term_restart() wipes it. */
const struct image_store *term_images(struct term *t);

/* A key event: keysym and unicode from xkbcommon, TSM_*_MASK mods and
 * KEYS_NUM_LOCK_MASK, ev its type and alternate keys (keys.h; NULL: a press
 * with none known). Under the kitty keyboard protocol's flags the session
 * set (stream_kitty_flags()) keys_kitty_encode() sends it; what that leaves
 * to the legacy encoding, keys_encode() (keys.h) sends what libtsm would
 * send wrong, in the modes followed in the session's output, libtsm the
 * rest. Releases are sent only under flag 2 (event types) and dropped
 * otherwise; repeats are presses without it. */
struct keys_event;
void term_handle_key(struct term *t, uint32_t keysym, uint32_t ascii, unsigned mods,
		     uint32_t unicode, const struct keys_event *ev);
/* Whether term_handle_key() would send a release (flag 2 on top of the
 * kitty stack of the screen shown). */
bool term_sends_releases(struct term *t);

/* Where OSC 52 from the session goes: what follows "52;" (stream.h);
 * NULL: dropped. */
void term_set_osc52(struct term *t, void (*osc52)(const char *args, size_t len, void *userdata),
		    void *userdata);
/* Where the session's BELs go (stream.h: counted per read, not those
 * that end an OSC); NULL: nowhere. */
void term_set_bell(struct term *t, void (*bell)(unsigned count, void *userdata), void *userdata);
/* What the screen shows changed outside the session's output (the
 * selection, the view): calls the damage callback. */
void term_redraw(struct term *t);

/* Shift+PageUp / Shift+PageDown: walk the scrollback by pages (dir < 0 = up). */
void term_scroll_page(struct term *t, int dir);

/* Bytes for the session as if typed (mouse reports, wheel keys, focus
 * events: mouse.h; a paste: selection.h), queued with libtsm's answers and
 * the keys (dropped whole when more than 1 MiB waits, or between sessions). */
void term_send(struct term *t, const char *bytes, size_t len);
