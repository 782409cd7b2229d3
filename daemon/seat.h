/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A seat: its devices (keyboards and pointers: input.h, the mouse
 * dispatcher: mouse.h; its VT if it has one: vt.h), its screens (screen.h)
 * and its terminals (terminal.h), which terminal is in front, and the wiring
 * between them: keys and pointer events to the terminal in front, a VT
 * switch to every screen, a terminal's output to the screens that show it.
 *
 * A seat has one VT and one screen per framebuffer (fbdev=, up to
 * OPTIONS_SCREENS_MAX; fbdev=all: every one of the seat's, and a screen
 * more for each that comes later, seat_attach_screen()). With screens=mirror one terminal is shown
 * on every screen, each drawing it at its own resolution, depth, font and rotation; the grid is the
 * smallest screen's (seat_fit_grids(): the larger screens' grids are capped,
 * render_set_grid_max()). With screens=separate every screen shows a terminal of its own, with its
 * own session; the keyboard goes to the terminal in front (`front`), which Ctrl+Alt+Logo+Right/Left
 * or a click on another screen moves. The pointer moves over the screens
 * side by side, in the order fbdev= lists them. Both follow the VT: every
 * screen is drawn while it is in front, none while it is away. A screen
 * whose framebuffer goes (fbwatch.h) draws nothing until one comes back at
 * its path; its terminal and session live on, and a mirror's grid is then
 * the other screens'.
 */
#pragma once

#include <stdbool.h>
#include <systemd/sd-event.h>

#include "options.h"
#include "input/input.h"
#include "input/mouse.h"
#include "screen/screen.h"
#include "terminal/terminal.h"
#include "devices/kmsg.h"
#include "devices/vt.h"

struct seat {
	sd_event *event;
	const struct options *opts;
	int *exit_status; /* where a fatal error's status goes (sd_event_exit()) */
	struct vt *vt;	  /* NULL: a seat without a VT */
	struct input *input;
	/* The mouse dispatcher: reports, wheel, selection (mouse.h), for the
	 * terminal in front. */
	struct mouse *mouse;
	struct screen **screens;
	unsigned n_screens;
	struct terminal **terminals;
	unsigned n_terminals;
	struct terminal *front; /* the terminal keys and the pointer go to */
	/* image-memory= in bytes, cut to what the machine can give (seat_new()) */
	size_t image_memory;
	bool fitting; /* seat_fit_grids() is laying screens out */
	/* Ctrl+Alt+Logo+Right/Left moved the focus: its release is not sent */
	bool focus_key_down;
	/* Kernel messages (kmsg.h; NULL: kernel-messages=off, or /dev/kmsg
	 * could not be opened): the reader, its fd's source and the deferred
	 * read that follows a full batch (KMSG_READ_MAX records a wake). */
	struct kmsg *kmsg;
	sd_event_source *kmsg_io, *kmsg_more;
	/* The band: its lines, oldest first, each until its expiry; the
	 * lines given since it came that it does not hold; the timer of the
	 * oldest expiry. */
	struct seat_band_line {
		char *text;
		uint64_t usec; /* the kernel's timestamp */
		unsigned level;
		uint64_t expires; /* CLOCK_MONOTONIC */
	} band[KMSG_BAND_LINES_MAX];
	unsigned band_n;
	uint64_t band_skipped;
	sd_event_source *band_timer;
	int kmsg_threshold; /* the kernel's console log level last read */
	/* The view of all kernel messages (Ctrl+Logo+K): open, its place
	 * (view_pos.msg counts from view_base, the store's kmsg_store_dropped()
	 * when it was laid out, after the last boot's crash's pstore_n lines:
	 * lines the store drops do not move it), and a
	 * search: the text being typed after `/` (view_typing) or the last one
	 * (n finds it again), and whether that found nothing. */
	bool view_open;
	struct overlay_view_pos view_pos;
	uint64_t view_base;
	bool view_typing, view_not_found;
	char view_find[64];
	/* the Insert key down was taken for a paste: its release is not sent */
	bool insert_pasted;
	/* The last boot's crash from pstore (pstore.h), read once at start:
	 * its lines for the view, before this boot's (a heading first, a
	 * closing line last), and the text they point into. */
	struct overlay_msg *pstore_msgs;
	size_t pstore_n;
	char *pstore_text, *pstore_heading;
	/* A seat without VTs: logind's state files watched (inotify on
	 * /run/systemd/seats and /run/systemd/sessions), seat_follow(). */
	int follow_fd;
	sd_event_source *follow_source;
	/* Which of the two directories have a watch, and which failed to get
	 * one; while one lacks it, follow_poll reads the files every
	 * SEAT_FOLLOW_POLL_USEC and tries again. */
	unsigned follow_watched, follow_failed;
	sd_event_source *follow_poll;
	/* Armed while the seat's state file is missing: consoled exits when
	 * it fires (seat_follow()); seat_seen once the file was there. */
	sd_event_source *gone_timer;
	bool seat_seen;
};

struct seat *seat_new(const struct options *opts, int *exit_status);
/* Frees the seat itself; its devices, screens and terminals go first, in
 * the exit order (main.c). */
void seat_free(struct seat *seat);

/* A screen on the framebuffer of cfg, with the seat's callbacks; opened by
 * the caller (screen_open()...). */
struct screen *seat_add_screen(struct seat *seat, const struct screen_config *cfg,
			       const struct palette *palette);
/* A screen that could not be opened (seat_add_screen()) goes again, freed. */
void seat_drop_screen(struct seat *seat, struct screen *s);
/* A screen added while consoled runs (fbdev=all: a framebuffer that came
 * on the seat), opened and started (screen_start()): with screens=mirror it
 * shows the terminal in front (the grid is the smallest screen's: the
 * session gets SIGWINCH if that shrinks), with separate a new terminal and
 * session of its own (the keyboard stays where it is). Drawn at once if the
 * VT (the seat) is consoled's, else at the next acquire. */
int seat_attach_screen(struct seat *seat, struct screen *s);
/* A terminal, its timers and bell; started by seat_start_terminal(). */
int seat_add_terminal(struct seat *seat, sd_event *event, struct terminal **ret);
/* The seat's VT (--vt, --switch), which every screen follows. */
int seat_open_vt(struct seat *seat, sd_event *event);
/* s shows t (screens=mirror: several screens show one terminal), from
 * seat_start_terminal() on. */
void seat_show_terminal(struct seat *seat, struct screen *s, struct terminal *t);
/* The terminal's session, sized for the screens that show it (the smallest
 * grid among them; s is one of them); the first terminal started is the one
 * in front. Only the first terminal has the VT's vcs mirror and, on a VT,
 * session restore (the VT has one screen buffer); on a seat without VTs
 * every terminal's session is kept, under fd names of its own (restore.h). */
int seat_start_terminal(struct seat *seat, struct terminal *t, struct screen *s);
/* After the screens' terminals: on a seat without VTs, every other terminal
 * whose session the fd store handed over is started at once and adopts it,
 * behind the one in front; what no terminal took is closed. */
void seat_adopt_terminals(struct seat *seat);
/* The keyboards and pointers, and the mouse dispatcher for the terminal in
 * front. */
int seat_start_input(struct seat *seat);

/* Kernel messages (kernel-messages=; not with off): /dev/kmsg followed,
 * the band and the view. Without /dev/kmsg (logged) consoled goes on. */
int seat_start_kmsg(struct seat *seat);

/* The screen showing the terminal in front (one with a framebuffer, if
 * any has), where the zoom and rotation keys act. */
struct screen *seat_screen(struct seat *seat);
/* The VT is ours (now, or at start when it is in front): every screen
 * draws again, input is on. */
void seat_acquire(struct seat *seat);
/* A seat without VTs (--seat): consoled draws and reads keys while logind's
 * active session of the seat (ACTIVE= of /run/systemd/seats/NAME) is none,
 * or one of its terminals' (TTY= of /run/systemd/sessions/ID is one of
 * their ptys) that no program controls (no CONTROLLER=: a compositor's
 * TakeControl); otherwise it lets go, as on a VT switch, until that is so
 * again. Both directories are watched (inotify): no system bus; one that
 * cannot be (not made yet, no watches left) is read every
 * SEAT_FOLLOW_POLL_USEC until it can. Runs the first check now.
 * The seat itself is followed too: logind removes /run/systemd/seats/NAME
 * when the seat's last master device (its last graphics card) goes; once
 * that file is gone for SEAT_GONE_GRACE_SEC, or not there SEAT_WAIT_SEC
 * after the start (logind may make the seat after udev started the unit),
 * consoled exits with EXIT_SEAT_GONE, its sessions ending as at SIGTERM. */
int seat_follow(struct seat *seat);
#define SEAT_GONE_GRACE_SEC 2
/* How often the files are read while a directory has no inotify watch. */
#define SEAT_FOLLOW_POLL_USEC (1000 * 1000ULL)
#define SEAT_WAIT_SEC 10
/* Whether the seat is consoled's now, by the files (the rule above); while
 * the active session's file is not written yet, as it was. */
bool seat_is_ours(struct seat *seat);

/* A fatal error: consoled exits with status. */
void seat_exit(struct seat *seat, int status);
