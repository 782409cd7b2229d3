/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A seat (seat.h): the wiring of its devices, screens and terminals.
 */
#define LOG_MODULE "consoled"
#include "seat.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>
#include <xkbcommon/xkbcommon-keysyms.h>

#include "screen/rotate.h"
#include "session/session.h"
#include "terminal/keys.h"
#include "terminal/restore.h"
#include "terminal/selection.h"
#include "terminal/share.h"
#include "terminal/vcs.h"
#include "util/crash.h"
#include "util/log.h"
#include "util/pstore.h"
#include "util/util.h"

void seat_exit(struct seat *seat, int status)
{
	*seat->exit_status = status;
	sd_event_exit(seat->event, 0);
}

struct screen *seat_screen(struct seat *seat)
{
	for (unsigned i = 0; i < seat->n_screens; i++)
		if (seat->screens[i]->terminal == seat->front && seat->screens[i]->fb)
			return seat->screens[i];
	for (unsigned i = 0; i < seat->n_screens; i++)
		if (seat->screens[i]->terminal == seat->front)
			return seat->screens[i];
	return seat->n_screens ? seat->screens[0] : NULL;
}

/* screens=mirror: every screen showing a terminal draws the grid of the
 * smallest of them (the fewest columns, the fewest rows), so the session's
 * size fits each; a screen without a framebuffer counts for nothing. Each
 * screen's uncapped grid (render_fit_grid()) decides, so a zoom out on the
 * smallest screen lets the others grow again. Called after every layout;
 * the layouts it makes call it back, and are not followed again. */
static void seat_fit_grids(struct seat *seat)
{
	if (seat->fitting || seat->n_screens < 2)
		return;
	seat->fitting = true;
	for (unsigned ti = 0; ti < seat->n_terminals; ti++) {
		struct terminal *t = seat->terminals[ti];
		unsigned cols = UINT_MAX, rows = UINT_MAX, n = 0;

		for (unsigned i = 0; i < seat->n_screens; i++) {
			struct screen *s = seat->screens[i];
			unsigned c, r;

			if (s->terminal != t || !s->fb || !s->render)
				continue;
			render_fit_grid(s->render, &c, &r);
			cols = MIN(cols, c);
			rows = MIN(rows, r);
			n++;
		}
		for (unsigned i = 0; i < seat->n_screens; i++) {
			struct screen *s = seat->screens[i];

			if (s->terminal == t && s->fb)
				screen_set_grid_max(s, n > 1 ? cols : 0, n > 1 ? rows : 0);
		}
	}
	seat->fitting = false;
}

/* The pointer's area: the screen in front; with screens=separate every
 * screen with a framebuffer side by side, in fbdev='s order (the pointer
 * moves past one's right edge onto the next). */
static void seat_pointer_area(struct seat *seat)
{
	unsigned w = 0, h = 0;

	if (!seat->input)
		return;
	for (unsigned i = 0; i < seat->n_screens; i++) {
		struct screen *s = seat->screens[i];

		if (!s->fb ||
		    (seat->opts->screens != OPTIONS_SCREENS_SEPARATE && s != seat_screen(seat)))
			continue;
		w += s->fb->var.xres;
		h = MAX(h, s->fb->var.yres);
	}
	input_set_pointer_area(seat->input, w, h);
}

/* The screen under the pointer's area's x, and x made that screen's. */
static struct screen *seat_pointer_screen(struct seat *seat, int *x)
{
	int left = 0;

	if (seat->opts->screens != OPTIONS_SCREENS_SEPARATE)
		return seat_screen(seat);
	for (unsigned i = 0; i < seat->n_screens; i++) {
		struct screen *s = seat->screens[i];

		if (!s->fb)
			continue;
		if (*x < left + (int)s->fb->var.xres) {
			*x -= left;
			return s;
		}
		left += (int)s->fb->var.xres;
	}
	return seat_screen(seat);
}

/* The mouse dispatcher's grid: the screen in front's. */
static void seat_mouse_geometry(struct seat *seat)
{
	struct screen *s = seat_screen(seat);

	if (seat->mouse && s && s->fb && s->render)
		mouse_set_geometry(seat->mouse, fontset_cell_width(s->fonts),
				   fontset_cell_height(s->fonts), render_cols(s->render),
				   render_rows(s->render));
}

/* ---- the terminals' callbacks (terminal.h) ---- */

/* A frame on every screen that shows t. */
static void seat_term_damage(struct terminal *t, void *userdata)
{
	struct seat *seat = userdata;
	struct screen *first = NULL;

	for (unsigned i = 0; i < seat->n_screens; i++)
		if (seat->screens[i]->terminal == t) {
			screen_schedule_frame(seat->screens[i]);
			if (!first)
				first = seat->screens[i];
		}
	/* a terminal behind (a seat's Ctrl+Alt+Fn) has no frames: its
	 * snapshot follows its output as a frame that draws nothing would */
	if (!first)
		terminal_frame_done(t);
	/* A key's echo: its frame, if due at once, is drawn here, at the end
	 * of the pty's read, not at the loop's next turn (sd-event's prepare,
	 * an epoll_wait() and its dispatch of the defer source: cirrus under
	 * TCG, the parse-to-frame stage of --stats 122 us median before, 74
	 * after, what is left being the frame's checks). One screen: a frame
	 * may find its framebuffer gone and lay the screens out again
	 * (fbwatch_lost()); the others draw at the next turn. */
	else if (t->term && term_take_echo_read(t->term))
		screen_draw_due(first);
}

static bool seat_term_frame_pending(struct terminal *t, void *userdata)
{
	struct seat *seat = userdata;

	for (unsigned i = 0; i < seat->n_screens; i++)
		if (seat->screens[i]->terminal == t && frame_pending(&seat->screens[i]->frame))
			return true;
	return false;
}

static bool seat_term_visible(struct terminal *t, void *userdata)
{
	struct seat *seat = userdata;

	for (unsigned i = 0; i < seat->n_screens; i++)
		if (seat->screens[i]->terminal == t && screen_visible(seat->screens[i]))
			return true;
	return false;
}

static void seat_term_flash(struct terminal *t, bool on, void *userdata)
{
	struct seat *seat = userdata;

	for (unsigned i = 0; i < seat->n_screens; i++) {
		struct screen *s = seat->screens[i];

		if (s->terminal != t)
			continue;
		if (s->render)
			render_set_flash(s->render, on);
		screen_schedule_frame(s);
	}
}

/* Every speaker among the input devices, else the VT's KDMKTONE (which
 * the kernel plays on the EV_SND devices its keyboard handler has). */
static int seat_term_tone(struct terminal *t, unsigned hz, unsigned ms, void *userdata)
{
	struct seat *seat = userdata;
	int r = seat->input ? input_sound(seat->input, hz) : -ENODEV;

	(void)t;
	if (r < 0 && seat->vt)
		r = vt_tone(seat->vt, hz, ms);
	return r < 0 ? r : 0;
}

/* A new session: the pointer's buttons the last one saw are forgotten. */
static void seat_term_respawning(struct terminal *t, void *userdata)
{
	struct seat *seat = userdata;

	if (t == seat->front)
		mouse_reset(seat->mouse);
}

/* A screen's renderer draws t's cells: its cluster table and its images
 * (both start anew with each session). */
static void seat_render_tables(struct screen *s, const struct terminal *t)
{
	if (!s->render || !t || !t->term)
		return;
	render_set_clusters(s->render, term_clusters(t->term));
	render_set_images(s->render, term_images(t->term));
}

static void seat_term_respawned(struct terminal *t, void *userdata)
{
	struct seat *seat = userdata;

	for (unsigned i = 0; i < seat->n_screens; i++) {
		struct screen *s = seat->screens[i];

		if (s->terminal != t)
			continue;
		/* the cluster table starts empty: stand-ins are handed out
		 * again */
		seat_render_tables(s, t);
		screen_wipe(s);
	}
}

static void seat_term_failed(struct terminal *t, bool session_start, void *userdata)
{
	struct seat *seat = userdata;

	(void)t;
	seat_exit(seat, session_start && seat->opts->session_socket ? EXIT_NO_SESSION_HELPER
								    : EXIT_FAILURE);
}

static const struct terminal_callbacks seat_terminal_callbacks = {
    .damage = seat_term_damage,
    .frame_pending = seat_term_frame_pending,
    .visible = seat_term_visible,
    .flash = seat_term_flash,
    .tone = seat_term_tone,
    .respawning = seat_term_respawning,
    .respawned = seat_term_respawned,
    .failed = seat_term_failed,
};

/* ---- the screens' callbacks (screen.h) ---- */

/* The pointer lives on the visible screen (input's pixels are the glass's,
 * turned in seat_on_pointer_event()), on the new grid. */
static void seat_overlay_show(struct seat *seat);

static void seat_screen_laid_out(struct screen *s, void *userdata)
{
	struct seat *seat = userdata;

	/* a mirror's screens: the smallest grid */
	seat_fit_grids(seat);
	/* the band or the view on the new grid */
	if (seat->kmsg && (seat->band_n || seat->view_open))
		seat_overlay_show(seat);
	seat_pointer_area(seat);
	if (s == seat_screen(seat))
		seat_mouse_geometry(seat);
}

static void seat_acquire_screen(struct seat *seat, struct screen *s)
{
	int r = screen_acquire(s);

	if (r == -ENODEV) {
		/* No screen, or it was unregistered while another VT was
		 * shown (fbwatch.h): keys still go to the session. */
		if (seat->input)
			input_set_active(seat->input, true);
		fbwatch_lost(s->fbwatch);
		return;
	}
	if (r < 0)
		return; /* exiting */
	if (seat->input)
		input_set_active(seat->input, true);
	/* focus in (1004) */
	if (seat->mouse)
		mouse_focus(seat->mouse, true);
	screen_redraw(s);
	if (s->terminal)
		vcs_set_active(s->terminal->vcs, true);
}

static void seat_screen_acquire(struct screen *s, void *userdata)
{
	seat_acquire_screen(userdata, s);
}

/* A screen's framebuffer went: a mirror's grid is the other screens'
 * (seat_fit_grids()), the pointer's area without it. */
static void seat_screen_gone(struct screen *s, void *userdata)
{
	struct seat *seat = userdata;

	(void)s;
	seat_fit_grids(seat);
	seat_pointer_area(seat);
	seat_mouse_geometry(seat);
}

static void seat_screen_failed(struct screen *s, void *userdata)
{
	(void)s;
	seat_exit(userdata, EXIT_FAILURE);
}

static const struct screen_callbacks seat_screen_callbacks = {
    .laid_out = seat_screen_laid_out,
    .acquire = seat_screen_acquire,
    .gone = seat_screen_gone,
    .failed = seat_screen_failed,
};

/* ---- the VT (vt.h) ---- */

/* A seat without VTs: the terminal in front (with screens=separate, the
 * one with the keyboard's focus) is the seat's active logind session, so
 * that the devices' ACLs (sound, a webcam) follow its user; logind made the
 * newest session active, and has no VT switch to see. consoled-session
 * does it (term_activate(): consoled has no system bus); only while the
 * seat is ours, never taking it from a compositor. The switch keeps the
 * seat ours: seat_is_ours() counts every terminal's session. */
static void seat_activate_front(struct seat *seat)
{
	int r;

	/* logind's files read again: a compositor that took the seat a
	 * moment ago keeps it */
	if (!seat->opts->seat || !seat->front || !seat->front->term || !vt_is_active(seat->vt) ||
	    !seat_is_ours(seat))
		return;
	r = term_activate(seat->front->term);
	if (r == -ENOTCONN)
		log_debug("The session in front has no session helper's connection (adopted or "
			  "run by consoled): it cannot be made the seat's active one");
}

void seat_acquire(struct seat *seat)
{
	for (unsigned i = 0; i < seat->n_screens; i++)
		seat_acquire_screen(seat, seat->screens[i]);
	seat_activate_front(seat);
}

static void seat_on_acquire(void *userdata)
{
	seat_acquire(userdata);
}

/* Another VT is shown, or another program (a compositor's logind) took ours:
 * no drawing, no blitter, and every input event is dropped from here until
 * seat_on_acquire() (input_set_active(): keys and pointer events). */
static void seat_on_release(void *userdata)
{
	struct seat *seat = userdata;

	crash_set_active(0);
	for (unsigned i = 0; i < seat->n_screens; i++)
		screen_release(seat->screens[i]);
	if (seat->input)
		input_set_active(seat->input, false);
	/* focus out (1004), and a drag in progress ends */
	if (seat->mouse)
		mouse_focus(seat->mouse, false);
	/* no flash left for the return, no tone going on */
	for (unsigned i = 0; i < seat->n_terminals; i++)
		bell_stop(seat->terminals[i]->bell);
	for (unsigned i = 0; i < seat->n_screens; i++)
		frame_cancel(&seat->screens[i]->frame);
	for (unsigned i = 0; i < seat->n_terminals; i++)
		vcs_set_active(seat->terminals[i]->vcs, false);
}

/* ---- kernel messages (kmsg.h, overlay.h) ---- */

/* The view key's name in the view's status line (consoled(8), KEYS). */
#define SEAT_VIEW_CLOSE_KEYS "Esc or Ctrl+Logo+K"
/* The kernel's console log level after console_verbose(): oops_begin(),
 * panic(), a hung task. */
#define SEAT_LOGLEVEL_MOTORMOUTH 15

static void seat_band_show(struct seat *seat)
{
	struct overlay_msg msgs[KMSG_BAND_LINES_MAX];

	for (unsigned i = 0; i < seat->band_n; i++)
		msgs[i] = (struct overlay_msg){seat->band[i].usec, seat->band[i].level,
					       seat->band[i].text};
	for (unsigned i = 0; i < seat->n_screens; i++) {
		if (seat->band_n == 0)
			screen_hide_overlay(seat->screens[i]);
		else
			screen_show_band(seat->screens[i], msgs, seat->band_n, seat->band_skipped,
					 seat->opts->kmsg_lines);
	}
}

/* The last boot's crash's lines (pstore_n), then every stored line, oldest
 * first (n in all, into *ret: free() it); the view's place moved to the
 * store's indices of now. */
static struct overlay_msg *seat_view_msgs(struct seat *seat, size_t *ret_n)
{
	const struct kmsg_store *st = kmsg_store(seat->kmsg);
	uint64_t dropped = kmsg_store_dropped(st);
	size_t k = seat->pstore_n, n = k + kmsg_store_count(st);
	struct overlay_msg *msgs = xcalloc(n ? n : 1, sizeof(*msgs));

	/* the last boot's crash first: it came before */
	for (size_t i = 0; i < k; i++)
		msgs[i] = seat->pstore_msgs[i];
	for (size_t i = k; i < n; i++) {
		const struct kmsg_line *l = kmsg_store_get(st, i - k);

		msgs[i] = (struct overlay_msg){l->usec, l->level, l->text};
	}
	/* the crash's k lines never go; this boot's follow the store */
	if (!seat->view_pos.end && seat->view_pos.msg >= k) {
		uint64_t at = seat->view_base + (seat->view_pos.msg - k);

		/* the line on top dropped from the store: this boot's oldest now */
		if (at < dropped)
			seat->view_pos = (struct overlay_view_pos){false, k, 0};
		else
			seat->view_pos.msg = k + (size_t)(at - dropped);
	}
	seat->view_base = dropped;
	*ret_n = n;
	return msgs;
}

/* The status line's note: the search being typed, or one that found
 * nothing (NULL: the keys). */
static const char *seat_view_note(struct seat *seat, char *buf, size_t size)
{
	if (seat->view_typing)
		snprintf(buf, size, "find: %s_   Enter: find   Esc: cancel", seat->view_find);
	else if (seat->view_not_found)
		snprintf(buf, size, "not found before: %s   n: again   Esc: close",
			 seat->view_find);
	else
		return NULL;
	return buf;
}

/* The view of msgs[0..n) (seat_view_msgs()) on every screen from the
 * seat's place; the front screen's clamped place is the seat's. */
static void seat_view_lay_out(struct seat *seat, const struct overlay_msg *msgs, size_t n)
{
	char buf[160];
	const char *note = seat_view_note(seat, buf, sizeof(buf));

	for (unsigned i = 0; i < seat->n_screens; i++) {
		struct screen *s = seat->screens[i];
		struct overlay_view_pos pos = seat->view_pos;

		screen_show_view(s, msgs, n, &pos, note, SEAT_VIEW_CLOSE_KEYS);
		if (s == seat_screen(seat))
			seat->view_pos = pos;
	}
}

static void seat_view_show(struct seat *seat)
{
	size_t n;
	struct overlay_msg *msgs = seat_view_msgs(seat, &n);

	seat_view_lay_out(seat, msgs, n);
	free(msgs);
}

/* The view's place moved by act: 'u'/'d' a page up or down, 'h' the
 * oldest, 'e' the newest, 'f' the previous message holding the search. */
static void seat_view_move(struct seat *seat, char act)
{
	size_t n;
	struct overlay_msg *msgs = seat_view_msgs(seat, &n);
	struct screen *s = seat_screen(seat);

	switch (act) {
	case 'u':
	case 'd':
		overlay_view_page(&s->overlay, msgs, n, act == 'u' ? -1 : 1, &seat->view_pos);
		break;
	case 'h':
		overlay_view_home(&seat->view_pos);
		break;
	case 'e':
		seat->view_pos = (struct overlay_view_pos){true, 0, 0};
		break;
	case 'f':
		seat->view_not_found =
		    !overlay_view_find(msgs, n, seat->view_find, &seat->view_pos);
		break;
	}
	seat_view_lay_out(seat, msgs, n);
	free(msgs);
}

/* What covers the session now: the view, the band, or nothing. */
static void seat_overlay_show(struct seat *seat)
{
	if (seat->view_open)
		seat_view_show(seat);
	else
		seat_band_show(seat);
}

/* The band's timer at its oldest line's expiry, or off without lines. */
static void seat_band_arm(struct seat *seat)
{
	if (seat->band_n == 0) {
		sd_event_source_set_enabled(seat->band_timer, SD_EVENT_OFF);
		return;
	}
	sd_event_source_set_time(seat->band_timer, seat->band[0].expires);
	sd_event_source_set_enabled(seat->band_timer, SD_EVENT_ONESHOT);
}

static void seat_band_drop_oldest(struct seat *seat)
{
	free(seat->band[0].text);
	memmove(seat->band, seat->band + 1, --seat->band_n * sizeof(seat->band[0]));
}

/* Lines go when their time is up (whether the VT is in front or not: on
 * return only the live ones show); with the last one the band goes and
 * the session's cells come back. */
static int seat_on_band_timer(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct seat *seat = userdata;
	uint64_t now = now_usec();

	(void)src;
	(void)usec;
	while (seat->band_n && seat->band[0].expires <= now)
		seat_band_drop_oldest(seat);
	if (seat->band_n == 0)
		seat->band_skipped = 0;
	seat_band_arm(seat);
	if (!seat->view_open)
		seat_band_show(seat);
	return 0;
}

/* New fresh lines into the band (the newest kernel-messages-lines of
 * them; kmsg_take_new() counts the rest), each for kernel-messages-time
 * seconds. Returns whether the band changed. */
static bool seat_band_take(struct seat *seat)
{
	const struct kmsg_line *lines[KMSG_BAND_LINES_MAX];
	uint64_t skipped = 0, expires = now_usec() + seat->opts->kmsg_time_sec * USEC_PER_SEC;
	size_t n = kmsg_take_new(seat->kmsg, seat->opts->kmsg_lines, lines, &skipped);
	/* The band holds what it shows: kernel-messages-lines lines. One
	 * pushed out by a newer one of the same batch was never drawn and
	 * counts as not shown; one from an earlier batch had its frames. */
	size_t before = seat->band_n;
	size_t limit = MIN((size_t)seat->opts->kmsg_lines, (size_t)KMSG_BAND_LINES_MAX);

	if (n == 0 && skipped == 0)
		return false;
	seat->band_skipped += skipped;
	for (size_t i = 0; i < n; i++) {
		if (seat->band_n >= limit) {
			seat_band_drop_oldest(seat);
			if (before > 0)
				before--;
			else
				seat->band_skipped++;
		}
		seat->band[seat->band_n++] = (struct seat_band_line){
		    xstrdup(lines[i]->text), lines[i]->usec, lines[i]->level, expires};
	}
	if (seat->band_n == 0)
		seat->band_skipped = 0; /* only skipped ones (gone from the store): no band */
	seat_band_arm(seat);
	return true;
}

/* An oops or a panic raises the console log level to 15
 * (console_verbose()); the kernel's console_unblank() at its end wakes a
 * blanked text console: so does consoled, and at nothing else the kernel
 * prints (vt_console_print() never unblanks). The kernel's level is read
 * whatever kernel-messages= says: a fixed level does not hide an oops. */
static void seat_kmsg_check_oops(struct seat *seat)
{
	int level = kmsg_console_level(seat->kmsg);

	if (level == SEAT_LOGLEVEL_MOTORMOUTH && seat->kmsg_threshold != SEAT_LOGLEVEL_MOTORMOUTH) {
		log_info("The kernel's console log level went to %d (an oops or a panic): waking "
			 "the screen",
			 level);
		for (unsigned i = 0; i < seat->n_screens; i++)
			screen_activity(seat->screens[i]);
	}
	seat->kmsg_threshold = level;
}

static void seat_kmsg_stop(struct seat *seat)
{
	seat->kmsg_io = sd_event_source_disable_unref(seat->kmsg_io);
	seat->kmsg_more = sd_event_source_disable_unref(seat->kmsg_more);
}

/* One batch of records (KMSG_READ_MAX at most): a flood costs a bounded
 * time per iteration of the loop, the pty and the keys are served between
 * batches. */
static void seat_kmsg_read(struct seat *seat)
{
	int r = kmsg_read(seat->kmsg);

	if (r < 0) {
		seat_kmsg_stop(seat); /* logged by kmsg_read() */
		return;
	}
	/* more pending: the next batch from the defer source, the fd's
	 * (level-triggered) source off meanwhile, so one batch an iteration */
	sd_event_source_set_enabled(seat->kmsg_io, r > 0 ? SD_EVENT_OFF : SD_EVENT_ON);
	sd_event_source_set_enabled(seat->kmsg_more, r > 0 ? SD_EVENT_ONESHOT : SD_EVENT_OFF);
	seat_kmsg_check_oops(seat);
	/* the view shows every stored line, the band only new ones: one
	 * layout a batch */
	if (seat_band_take(seat) || seat->view_open)
		seat_overlay_show(seat);
}

static int seat_on_kmsg(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	(void)src;
	(void)fd;
	(void)revents;
	seat_kmsg_read(userdata);
	return 0;
}

static int seat_on_kmsg_more(sd_event_source *src, void *userdata)
{
	(void)src;
	seat_kmsg_read(userdata);
	return 0;
}

/* How long consoled-session may take to pass /dev/kmsg (a helper started
 * per connection); well below WatchdogSec=, since the start waits. */
#define SEAT_KMSG_HELPER_TIMEOUT_MSEC (5 * 1000)

/* /dev/kmsg: from consoled-session under systemd (the sandbox keeps the
 * kernel's log from consoled: ProtectKernelLogs=yes), opened here when run
 * by hand. Nothing else is tried when the session helper gives none. */
static int seat_kmsg_fd(const struct options *o)
{
	int fd;

	if (!o->session_socket) {
		fd = kmsg_open();
		if (fd < 0)
			log_warning_errno(
			    fd, "Cannot read /dev/kmsg, no kernel messages on the screen: %m");
		return fd;
	}
	fd = session_ask_kmsg(o->session_socket, SEAT_KMSG_HELPER_TIMEOUT_MSEC);
	if (fd == -EPROTO)
		log_warning("The session helper at %s refused to pass /dev/kmsg (its log: "
			    "journalctl -u 'consoled-session@*'), no kernel messages on the screen",
			    o->session_socket);
	else if (fd < 0)
		log_warning_errno(fd,
				  "Got no /dev/kmsg from the session helper at %s, no kernel "
				  "messages on the screen: %m",
				  o->session_socket);
	return fd;
}

/* The most lines of the last boot's crash the view shows: its newest
 * (a 10 KiB dump, pstore's default, is about 150). */
#define SEAT_PSTORE_LINES_MAX 2000

/* The last boot's crash (pstore.h), read once, bounded, into lines for the
 * view, and logged; without one nothing. Its lines keep the last boot's
 * times. */
static void seat_read_pstore(struct seat *seat)
{
	struct pstore_crash c;
	size_t n = 0, first = 0, k = 0;
	char *s;

	if (pstore_find(&pstore_system_paths, pstore_boot_time(), true, &c) <= 0)
		return;
	log_info("The last boot's %s is in %s (%u part%s, %zu bytes): shown in the kernel "
		 "messages' view",
		 pstore_reason_name(c.reason), c.where, c.parts, c.parts == 1 ? "" : "s", c.len);
	for (size_t i = 0; i < c.len; i++)
		n += c.text[i] == '\n';
	if (n > SEAT_PSTORE_LINES_MAX)
		first = n - SEAT_PSTORE_LINES_MAX;
	seat->pstore_msgs =
	    xcalloc(MIN(n, (size_t)SEAT_PSTORE_LINES_MAX) + 2, sizeof(struct overlay_msg));
	seat->pstore_heading = xmalloc(sizeof(c.where) + 64);
	snprintf(seat->pstore_heading, sizeof(c.where) + 64, "--- the last boot's %s (%s) ---",
		 pstore_reason_name(c.reason), c.where);
	seat->pstore_msgs[k++] = (struct overlay_msg){OVERLAY_UNTIMED, 6, seat->pstore_heading};
	s = c.text;
	for (size_t line = 0; line < n; line++) {
		char *nl = strchr(s, '\n');
		struct overlay_msg m = {OVERLAY_UNTIMED, 6, s};

		if (!nl)
			break; /* none: pstore.c ends every part with one */
		*nl = '\0';
		if (line >= first && *s) {
			/* "<PRIO>[ sec.usec] text" as the dump gives it */
			pstore_parse_line(s, &m.level, &m.usec, &m.text);
			seat->pstore_msgs[k++] = m;
		}
		s = nl + 1;
	}
	seat->pstore_msgs[k++] = (struct overlay_msg){OVERLAY_UNTIMED, 6, "--- this boot ---"};
	seat->pstore_n = k;
	seat->pstore_text = c.text; /* the lines point into it */
}

int seat_start_kmsg(struct seat *seat)
{
	const struct options *o = seat->opts;
	int fd, r;

	if (o->kmsg_level == 0)
		return 0; /* kernel-messages=off */
	fd = seat_kmsg_fd(o);
	if (fd < 0)
		return 0;
	r = kmsg_new(fd, o->kmsg_level, NULL, 0, &seat->kmsg);
	if (r < 0) {
		log_warning_errno(r, "Cannot follow kernel messages: %m");
		return 0;
	}
	seat->kmsg_threshold = kmsg_console_level(seat->kmsg);
	r = sd_event_add_io(seat->event, &seat->kmsg_io, kmsg_fd(seat->kmsg), EPOLLIN | EPOLLPRI,
			    seat_on_kmsg, seat);
	if (r >= 0)
		r = sd_event_add_defer(seat->event, &seat->kmsg_more, seat_on_kmsg_more, seat);
	if (r >= 0)
		r = sd_event_source_set_enabled(seat->kmsg_more, SD_EVENT_OFF);
	if (r >= 0)
		r = sd_event_add_time(seat->event, &seat->band_timer, CLOCK_MONOTONIC, 0,
				      USEC_PER_MSEC, seat_on_band_timer, seat);
	if (r >= 0)
		r = sd_event_source_set_enabled(seat->band_timer, SD_EVENT_OFF);
	if (r < 0)
		return log_error_errno(r, "Failed to watch /dev/kmsg: %m");
	seat_read_pstore(seat);
	return 0;
}

/* The view key (Ctrl+Logo+K) opens the view of every kernel message at
 * the newest or closes it; Escape closes it too. */
static void seat_view_toggle(struct seat *seat, bool open)
{
	/* a button held when the view opens is forgotten: its release and
	 * motion reach nothing (pointer events are dropped while it is open) */
	if (open && !seat->view_open && seat->mouse)
		mouse_reset(seat->mouse);
	if (open != seat->view_open)
		log_debug("The kernel messages' view %s", open ? "opens" : "closes");
	seat->view_open = open;
	seat->view_pos = (struct overlay_view_pos){true, 0, 0};
	seat->view_typing = seat->view_not_found = false;
	seat_overlay_show(seat);
}

/* ---- the mouse dispatcher's callbacks (mouse.h) ---- */

/* Reports, wheel keys and focus events go to the session as typed keys. */
static void seat_mouse_send(const char *bytes, size_t len, void *userdata)
{
	struct seat *seat = userdata;

	if (seat->front->term)
		term_send(seat->front->term, bytes, len);
}

/* The wheel on the normal screen: libtsm's scrollback, lines > 0 up. */
static void seat_mouse_scroll_view(int lines, void *userdata)
{
	struct seat *seat = userdata;
	struct terminal *t = seat->front;

	if (!t->term)
		return;
	if (lines > 0)
		tsm_screen_sb_up(term_screen(t->term), (unsigned)lines);
	else
		tsm_screen_sb_down(term_screen(t->term), (unsigned)-lines);
	seat_term_damage(t, seat);
}

/* Selection and paste: selection.h. */
static void seat_mouse_select_start(unsigned col, int row, unsigned clicks, bool extend,
				    void *userdata)
{
	struct seat *seat = userdata;

	if (seat->front->selection)
		selection_start(seat->front->selection, col, row, clicks, extend);
}

static void seat_mouse_select_move(unsigned col, int row, void *userdata)
{
	struct seat *seat = userdata;

	if (seat->front->selection)
		selection_move(seat->front->selection, col, row);
}

static void seat_mouse_select_end(void *userdata)
{
	struct seat *seat = userdata;

	if (seat->front->selection && selection_end(seat->front->selection))
		terminal_copied(seat->front);
}

static void seat_mouse_paste(void *userdata)
{
	struct seat *seat = userdata;

	terminal_paste(seat->front);
}

static const struct mouse_callbacks seat_mouse_callbacks = {
    .select_start = seat_mouse_select_start,
    .select_move = seat_mouse_select_move,
    .select_end = seat_mouse_select_end,
    .paste = seat_mouse_paste,
    .scroll_view = seat_mouse_scroll_view,
    .send = seat_mouse_send,
};

/* ---- input (input.h) ---- */

/* A key while the view is open (none reaches the session): Escape closes
 * it; PageUp/PageDown page it (as Shift+PageUp/PageDown), Home and End go
 * to the oldest and the newest; `/` starts a search, typed into the status
 * line (BackSpace, Enter finds the previous message holding it, Escape
 * cancels), `n` finds the last one again. */
static void seat_view_key(struct seat *seat, uint32_t keysym, uint32_t unicode)
{
	size_t len = strlen(seat->view_find);
	char buf[8];

	if (seat->view_typing) {
		switch (keysym) {
		case XKB_KEY_Escape:
			seat->view_typing = false;
			seat->view_find[0] = '\0';
			break;
		case XKB_KEY_Return:
		case XKB_KEY_KP_Enter:
			seat->view_typing = false;
			seat_view_move(seat, 'f');
			return;
		case XKB_KEY_BackSpace:
			/* a whole UTF-8 character */
			while (len > 0 && (seat->view_find[--len] & 0xc0) == 0x80)
				;
			seat->view_find[len] = '\0';
			break;
		default:
			/* (TSM_VTE_INVALID, no character, is above U+10FFFF) */
			if (unicode < 0x20 || unicode == 0x7f ||
			    (unicode >= 0x80 && unicode <= 0x9f) || unicode > 0x10ffff)
				return;
			buf[utf8_put(unicode, buf)] = '\0';
			if (len + strlen(buf) < sizeof(seat->view_find))
				strcat(seat->view_find, buf);
			break;
		}
		seat_view_show(seat);
		return;
	}
	switch (keysym) {
	case XKB_KEY_Escape:
		seat_view_toggle(seat, false);
		break;
	case XKB_KEY_Prior:
	case XKB_KEY_KP_Prior:
		seat_view_move(seat, 'u');
		break;
	case XKB_KEY_Next:
	case XKB_KEY_KP_Next:
		seat_view_move(seat, 'd');
		break;
	case XKB_KEY_Home:
	case XKB_KEY_KP_Home:
		seat_view_move(seat, 'h');
		break;
	case XKB_KEY_End:
	case XKB_KEY_KP_End:
		seat_view_move(seat, 'e');
		break;
	case XKB_KEY_slash:
	case XKB_KEY_KP_Divide:
		seat->view_typing = true;
		seat->view_not_found = false;
		seat->view_find[0] = '\0';
		seat_view_show(seat);
		break;
	case XKB_KEY_n:
		if (seat->view_find[0])
			seat_view_move(seat, 'f');
		break;
	}
}

/* screens=separate: the keyboard (and the mouse dispatcher: reports,
 * selection, wheel) goes to the terminal s shows; focus out (1004) to the
 * one that had it, focus in to it. */
static void seat_focus(struct seat *seat, struct screen *s)
{
	struct terminal *t = s->terminal;
	int r;

	if (!t || !t->term || t == seat->front)
		return;
	screen_hide_pointer(seat_screen(seat));
	if (seat->mouse)
		mouse_focus(seat->mouse, false);
	mouse_free(seat->mouse);
	seat->mouse = NULL;
	seat->front = t;
	seat->insert_pasted = false;
	r = mouse_new(term_stream(t->term), &seat_mouse_callbacks, seat, &seat->mouse);
	if (r < 0)
		log_warning_errno(r, "Failed to set up the mouse for %s, ignoring: %m",
				  s->fb ? s->fb->path : "the screen");
	seat_mouse_geometry(seat);
	if (seat->mouse)
		mouse_focus(seat->mouse, true);
	log_info("Keyboard focus on %s", s->fb ? s->fb->path : s->cfg.fbdev);
	seat_activate_front(seat);
}

/* Ctrl+Alt+Logo+Right/Left (step 1, -1): the focus to the next or the
 * previous screen with a framebuffer and a terminal (screens=separate). */
static void seat_focus_step(struct seat *seat, int step)
{
	struct screen *cur = seat_screen(seat);
	unsigned at = 0, n = seat->n_screens;

	for (unsigned i = 0; i < n; i++)
		if (seat->screens[i] == cur)
			at = i;
	for (unsigned k = 1; k < n; k++) {
		struct screen *s = seat->screens[(at + n + (unsigned)step * k) % n];

		if (s->fb && s->terminal && s->terminal != seat->front) {
			seat_focus(seat, s);
			return;
		}
	}
}

/* The focus keys: Ctrl+Alt+Logo+Right and Left (input.c takes Ctrl+Logo
 * with arrows without Alt for rotation). */
static int seat_focus_key(uint32_t keysym, unsigned mods)
{
	if ((mods & (TSM_CONTROL_MASK | TSM_ALT_MASK | TSM_LOGO_MASK | TSM_SHIFT_MASK)) !=
	    (TSM_CONTROL_MASK | TSM_ALT_MASK | TSM_LOGO_MASK))
		return 0;
	if (keysym == XKB_KEY_Right || keysym == XKB_KEY_KP_Right)
		return 1;
	if (keysym == XKB_KEY_Left || keysym == XKB_KEY_KP_Left)
		return -1;
	return 0;
}

static void seat_on_key(uint32_t keysym, uint32_t ascii, unsigned mods, uint32_t unicode,
			const struct keys_event *ev, void *userdata)
{
	struct seat *seat = userdata;
	struct terminal *t = seat->front;
	bool release = ev && ev->type == KEYS_RELEASE;

	/* typing hides the pointer; a modifier alone does not (Shift+click,
	 * Ctrl+Plus) */
	if (!keys_is_modifier(keysym) && !release)
		screen_hide_pointer(seat_screen(seat));
	/* not one key for the shell after a compositor took the VT; a release
	 * the session did not ask for reaches no session (term_handle_key()
	 * drops it) and is not asked about: an ioctl less per key typed, on
	 * the way between the key's write to the pty and the read of its
	 * echo (the frame's vt_poll() still asks before anything is drawn) */
	if (!release || (t->term && term_sends_releases(t->term)))
		vt_poll(seat->vt);
	/* screens=separate: the screen in front went (fbwatch.h): the keys
	 * go to a screen that is there */
	if (seat->opts->screens == OPTIONS_SCREENS_SEPARATE && !seat_screen(seat)->fb) {
		seat_focus_step(seat, 1);
		t = seat->front;
	}
	if (!t->term || !vt_is_active(seat->vt))
		return;
	/* screens=separate: the focus keys move the keyboard, their
	 * releases reach no session */
	if (seat->opts->screens == OPTIONS_SCREENS_SEPARATE && seat->n_screens > 1 &&
	    (keysym == XKB_KEY_Right || keysym == XKB_KEY_KP_Right || keysym == XKB_KEY_Left ||
	     keysym == XKB_KEY_KP_Left)) {
		if (release && seat->focus_key_down) {
			seat->focus_key_down = false;
			return;
		}
		if (!release && seat_focus_key(keysym, mods)) {
			seat->focus_key_down = true;
			seat_focus_step(seat, seat_focus_key(keysym, mods));
			return;
		}
	}
	/* the view of kernel messages: its key and Escape close it, no
	 * other key reaches the session while it is open */
	if (seat->view_open) {
		if (!release)
			seat_view_key(seat, keysym, unicode);
		return;
	}
	/* Shift+Insert pastes (xterm); its release is not sent either, even
	 * when Shift went up first */
	if (keysym == XKB_KEY_Insert && release && seat->insert_pasted) {
		seat->insert_pasted = false;
		return;
	}
	if (keysym == XKB_KEY_Insert &&
	    (mods & (TSM_SHIFT_MASK | TSM_CONTROL_MASK | TSM_ALT_MASK | TSM_LOGO_MASK)) ==
		TSM_SHIFT_MASK &&
	    t->selection) {
		if (!release) {
			terminal_paste(t);
			seat->insert_pasted = true;
		}
		return;
	}
	/* the session's flags decide whether a release or repeat is sent */
	term_handle_key(t->term, keysym, ascii, mods, unicode, ev);
}

/* A seat without VTs: terminal i in front of the screen that showed the
 * last one (of every screen that mirrored it), its session started the
 * first time it is shown (as getty's autovt); keys, the pointer and the
 * mouse's modes follow it. A terminal another screen shows already
 * (screens=separate) takes the focus there instead. A session that cannot
 * start leaves the one in front as it was. */
static void seat_switch_terminal(struct seat *seat, unsigned i)
{
	struct screen *s = seat_screen(seat);
	struct terminal *t, *old;
	bool shown[OPTIONS_SCREENS_MAX] = {false};
	unsigned w, h;

	if (i >= seat->n_terminals || seat->terminals[i] == seat->front || !s || !s->render ||
	    !s->fb)
		return;
	t = seat->terminals[i];
	for (unsigned k = 0; k < seat->n_screens; k++)
		if (seat->screens[k]->terminal == t && seat->screens[k]->fb) {
			seat_focus(seat, seat->screens[k]);
			return;
		}
	log_info("Terminal %u of %s in front", i + 1, seat->opts->seat);
	old = s->terminal;
	/* the screens that show the one in front: s, and its mirrors */
	for (unsigned k = 0; k < seat->n_screens && k < OPTIONS_SCREENS_MAX; k++)
		shown[k] = seat->screens[k]->terminal == old;
	if (seat->mouse)
		mouse_focus(seat->mouse, false);
	bell_stop(seat->front->bell);
	for (unsigned k = 0; k < seat->n_screens && k < OPTIONS_SCREENS_MAX; k++)
		if (shown[k])
			seat->screens[k]->terminal = t;
	if (!t->term) {
		if (seat_start_terminal(seat, t, s) < 0) {
			/* logged; the one in front stays */
			for (unsigned k = 0; k < seat->n_screens && k < OPTIONS_SCREENS_MAX; k++)
				if (shown[k])
					seat->screens[k]->terminal = old;
			seat_fit_grids(seat);
			if (seat->mouse)
				mouse_focus(seat->mouse, true);
			return;
		}
		seat->front = t;
	} else {
		seat->front = t;
		seat_fit_grids(seat);
		/* zoomed or turned while it was behind */
		rotate_logical_size(render_rotation(s->render), s->fb->var.xres, s->fb->var.yres,
				    &w, &h);
		term_resize(t->term, render_cols(s->render), render_rows(s->render), w, h);
	}
	for (unsigned k = 0; k < seat->n_screens && k < OPTIONS_SCREENS_MAX; k++)
		if (shown[k])
			seat_render_tables(seat->screens[k], t);
	mouse_free(seat->mouse);
	seat->mouse = NULL;
	if (mouse_new(term_stream(t->term), &seat_mouse_callbacks, seat, &seat->mouse) >= 0) {
		mouse_set_geometry(seat->mouse, fontset_cell_width(s->fonts),
				   fontset_cell_height(s->fonts), render_cols(s->render),
				   render_rows(s->render));
		mouse_focus(seat->mouse, true);
	}
	seat->insert_pasted = false;
	for (unsigned k = 0; k < seat->n_screens && k < OPTIONS_SCREENS_MAX; k++)
		if (shown[k])
			screen_redraw(seat->screens[k]);
	seat_activate_front(seat);
}

static void seat_on_switch_vt(unsigned target, void *userdata)
{
	struct seat *seat = userdata;

	if (seat->opts->seat)
		seat_switch_terminal(seat, target - 1);
	else
		vt_activate(seat->vt, target);
}

static void seat_on_scroll_page(int dir, void *userdata)
{
	struct seat *seat = userdata;

	if (seat->view_open) {
		/* the view's own pages (dir < 0: back, up) */
		seat_view_move(seat, dir < 0 ? 'u' : 'd');
		return;
	}
	if (seat->front->term)
		term_scroll_page(seat->front->term, dir);
}

static bool seat_on_zoom(int step, void *userdata)
{
	return screen_zoom(seat_screen(userdata), step);
}

/* Ctrl+Logo+K: without kernel messages (kernel-messages=off, no
 * /dev/kmsg) the key is the session's. */
static bool seat_on_view(void *userdata)
{
	struct seat *seat = userdata;

	vt_poll(seat->vt);
	if (!seat->kmsg || !vt_is_active(seat->vt))
		return false;
	seat_view_toggle(seat, !seat->view_open);
	return true;
}

static void seat_on_rotate(int step, void *userdata)
{
	screen_rotate(seat_screen(userdata), step);
}

/* Every key event and pointer report: every screen's idle timer starts
 * again, a blanked one wakes. */
static void seat_on_activity(void *userdata)
{
	struct seat *seat = userdata;

	for (unsigned i = 0; i < seat->n_screens; i++)
		screen_activity(seat->screens[i]);
}

/* input moves the pointer over the glass (a mouse moved right goes right,
 * a tablet's corner is the glass's); the grid is turned: the event in s's
 * logical pixels. */
static struct input_pointer_event seat_pointer_turn(struct screen *s,
						    const struct input_pointer_event *glass)
{
	struct input_pointer_event turned = *glass;
	unsigned x, y;

	if (s->fb && s->render && glass->x >= 0 && glass->y >= 0) {
		rotate_point_to_logical(render_rotation(s->render), s->fb->var.xres,
					s->fb->var.yres, (unsigned)glass->x, (unsigned)glass->y, &x,
					&y);
		turned.x = (int)x;
		turned.y = (int)y;
	}
	return turned;
}

/* input's pointer callback: the pointer is shown, then the event goes on
 * (selection, paste, wheel, reports: the mouse dispatcher). */
static void seat_on_pointer_event(const struct input_pointer_event *area, void *userdata)
{
	struct seat *seat = userdata;
	struct input_pointer_event glass = *area, ev;
	struct screen *s = seat_pointer_screen(seat, &glass.x);

	/* as for keys: not one click, paste or report for the shell after a
	 * compositor took the VT (input drops events only once we know) */
	vt_poll(seat->vt);
	if (!vt_is_active(seat->vt))
		return;
	/* the view of kernel messages covers the session: no click, paste,
	 * wheel or report reaches it, as no key does */
	if (seat->view_open)
		return;
	if (s->fb && glass.y >= (int)s->fb->var.yres)
		glass.y = (int)s->fb->var.yres - 1; /* below a lower screen's bottom */
	/* screens=separate: over another screen the pointer shows there; a
	 * click moves the keyboard there, and goes on to its terminal */
	if (s != seat_screen(seat)) {
		screen_hide_pointer(seat_screen(seat));
		if (!(glass.kind == INPUT_POINTER_BUTTON && glass.pressed)) {
			ev = seat_pointer_turn(s, &glass);
			screen_show_pointer(s, ev.x, ev.y);
			return;
		}
		seat_focus(seat, s);
		if (s != seat_screen(seat))
			return; /* (no terminal there) */
	}
	ev = seat_pointer_turn(s, &glass);
	screen_show_pointer(s, ev.x, ev.y);
	if (seat->mouse)
		mouse_handle(seat->mouse, &ev);
}

/* ---- a seat without VTs: logind's state (seat_follow()) ---- */

#define SEAT_LOGIND_SEATS "/run/systemd/seats"
#define SEAT_LOGIND_SESSIONS "/run/systemd/sessions"

/* KEY='s value in an env file's text (logind's state files: KEY=VALUE
 * lines, unquoted), into ret; empty when it has none. */
static void seat_env_value(const char *text, const char *key, char *ret, size_t size)
{
	size_t klen = strlen(key);

	ret[0] = '\0';
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (strncmp(l, key, klen) == 0 && l[klen] == '=') {
			size_t n = strcspn(l + klen + 1, "\n");

			if (n >= size)
				n = size - 1;
			memcpy(ret, l + klen + 1, n);
			ret[n] = '\0';
			return;
		}
}

bool seat_is_ours(struct seat *seat)
{
	char text[4096], path[256], active[64], tty[64], controller[128], ours[64];

	snprintf(path, sizeof(path), SEAT_LOGIND_SEATS "/%s", seat->opts->seat);
	if (read_small_file(path, text, sizeof(text)) < 0)
		return true; /* no logind, or no such seat (yet): ours */
	seat_env_value(text, "ACTIVE", active, sizeof(active));
	if (!active[0] || strchr(active, '/'))
		return true; /* nobody's, e.g. at the login prompt */
	snprintf(path, sizeof(path), SEAT_LOGIND_SESSIONS "/%s", active);
	/* logind names a new session active before it writes the session's
	 * file (a login on one of our terminals, seen as "letting go" for a
	 * moment): unknown yet, the state stays as it is until the file
	 * comes (the watch on the directory sees it) */
	if (read_small_file(path, text, sizeof(text)) < 0)
		return vt_is_active(seat->vt);
	seat_env_value(text, "CONTROLLER", controller, sizeof(controller));
	if (controller[0])
		return false; /* a compositor took the session's devices */
	seat_env_value(text, "TTY", tty, sizeof(tty));
	for (unsigned i = 0; tty[0] && i < seat->n_terminals; i++)
		if (seat->terminals[i]->term &&
		    term_tty_name(seat->terminals[i]->term, ours, sizeof(ours)) == 0 &&
		    strcmp(ours, tty) == 0)
			return true;
	return false;
}

static int seat_on_gone(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct seat *seat = userdata;

	(void)src;
	(void)usec;
	if (seat->seat_seen)
		log_info("%s: logind removed the seat (its last graphics card went): exiting "
			 "with status %d",
			 seat->opts->seat, EXIT_SEAT_GONE);
	else
		log_warning("%s: logind has no such seat after %d s: exiting with status %d",
			    seat->opts->seat, SEAT_WAIT_SEC, EXIT_SEAT_GONE);
	seat_exit(seat, EXIT_SEAT_GONE);
	return 0;
}

/* The seat's state file there: the timer off; missing: the timer armed
 * (if it is not yet), for the grace of a seat seen or the wait at start.
 * logind replaces the file by a rename, so a missing file is a removal. */
static void seat_follow_presence(struct seat *seat)
{
	char path[256];
	int sec, r;

	snprintf(path, sizeof(path), SEAT_LOGIND_SEATS "/%s", seat->opts->seat);
	if (access(path, F_OK) == 0) {
		if (seat->gone_timer)
			log_info("%s: logind's seat is there", seat->opts->seat);
		seat->gone_timer = sd_event_source_disable_unref(seat->gone_timer);
		seat->seat_seen = true;
		return;
	}
	if (seat->gone_timer)
		return;
	sec = seat->seat_seen ? SEAT_GONE_GRACE_SEC : SEAT_WAIT_SEC;
	log_info("%s: logind has no such seat %s; exiting unless it is there within %d s",
		 seat->opts->seat, seat->seat_seen ? "any more" : "yet", sec);
	/* housekeeping: sd-event's default accuracy */
	r = sd_event_add_time_relative(seat->event, &seat->gone_timer, CLOCK_MONOTONIC,
				       (uint64_t)sec * USEC_PER_SEC, 0, seat_on_gone, seat);
	if (r < 0)
		log_warning_errno(r, "Failed to arm the seat's timer, ignoring: %m");
}

static void seat_follow_check(struct seat *seat)
{
	bool ours = seat_is_ours(seat);

	if (ours != vt_is_active(seat->vt))
		log_info("%s: %s", seat->opts->seat,
			 ours ? "one of consoled's sessions is active again: drawing"
			      : "another session is active or controlled: letting go");
	vt_set_active(seat->vt, ours);
	seat_follow_presence(seat);
}

static int seat_on_follow(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	(void)src;
	(void)revents;
	/* which file changed does not matter: the rule reads both */
	inotify_drain(fd);
	seat_follow_check(userdata);
	return 0;
}

/* Adds the watches still missing; whether both are there. Logs a failure
 * once per directory (and its end). */
static bool seat_follow_watch(struct seat *seat)
{
	static const char *const dirs[] = {SEAT_LOGIND_SEATS, SEAT_LOGIND_SESSIONS};
	bool all = true;

	for (unsigned i = 0; i < ELEMENTSOF(dirs); i++) {
		unsigned bit = 1u << i;

		if (seat->follow_watched & bit)
			continue;
		/* logind writes a temporary file and renames it over the old
		 * one */
		if (inotify_add_watch(seat->follow_fd, dirs[i],
				      IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE) >= 0) {
			seat->follow_watched |= bit;
			if (seat->follow_failed & bit)
				log_info("Watching %s now", dirs[i]);
			continue;
		}
		all = false;
		if (!(seat->follow_failed & bit))
			log_warning_errno(errno,
					  "Failed to watch %s (%m): reading it every second "
					  "until a watch can be added",
					  dirs[i]);
		seat->follow_failed |= bit;
	}
	return all;
}

/* Without a watch on both directories (one not made yet: /run/systemd/
 * sessions comes with the first session; out of inotify watches), the
 * files are read every SEAT_FOLLOW_POLL_USEC, and the watch tried again. */
static int seat_on_follow_poll(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct seat *seat = userdata;

	if (seat_follow_watch(seat))
		seat->follow_poll = sd_event_source_disable_unref(seat->follow_poll);
	else
		(void)sd_event_source_set_time(src, usec + SEAT_FOLLOW_POLL_USEC);
	seat_follow_check(seat);
	return 0;
}

int seat_follow(struct seat *seat)
{
	int r;

	seat->follow_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (seat->follow_fd < 0)
		return log_error_errno(errno, "Failed to watch logind's state: %m");
	r = sd_event_add_io(seat->event, &seat->follow_source, seat->follow_fd, EPOLLIN,
			    seat_on_follow, seat);
	if (r < 0)
		return log_error_errno(r, "Failed to watch logind's state: %m");
	if (!seat_follow_watch(seat)) {
		r = sd_event_add_time_relative(seat->event, &seat->follow_poll, CLOCK_MONOTONIC,
					       SEAT_FOLLOW_POLL_USEC, 0, seat_on_follow_poll, seat);
		if (r < 0)
			return log_error_errno(r, "Failed to arm the timer that reads logind's "
						  "state: %m");
		(void)sd_event_source_set_enabled(seat->follow_poll, SD_EVENT_ON);
	}
	seat_follow_check(seat);
	return 0;
}

/* ---- start-up ---- */

struct seat *seat_new(const struct options *opts, int *exit_status)
{
	struct seat *seat = xcalloc(1, sizeof(*seat));

	seat->opts = opts;
	seat->exit_status = exit_status;
	seat->follow_fd = -1;
	/* once for every terminal's image store */
	seat->image_memory =
	    options_image_memory(opts->image_memory_mib, memory_cap(memory_physical(), SIZE_MAX));
	if (seat->image_memory < (uint64_t)opts->image_memory_mib << 20)
		log_warning("image-memory=%u MiB cut to %zu MiB, a quarter of the memory and an "
			    "eighth of the address space",
			    opts->image_memory_mib, seat->image_memory >> 20);
	return seat;
}

void seat_free(struct seat *seat)
{
	if (!seat)
		return;
	seat_kmsg_stop(seat);
	seat->follow_source = sd_event_source_disable_unref(seat->follow_source);
	seat->follow_poll = sd_event_source_disable_unref(seat->follow_poll);
	seat->gone_timer = sd_event_source_disable_unref(seat->gone_timer);
	if (seat->follow_fd >= 0)
		close(seat->follow_fd);
	seat->band_timer = sd_event_source_disable_unref(seat->band_timer);
	while (seat->band_n)
		seat_band_drop_oldest(seat);
	kmsg_free(seat->kmsg);
	free(seat->pstore_msgs);
	free(seat->pstore_text);
	free(seat->pstore_heading);
	free(seat->screens);
	free(seat->terminals);
	free(seat);
}

struct screen *seat_add_screen(struct seat *seat, const struct screen_config *cfg,
			       const struct palette *palette)
{
	struct screen *s = screen_new(cfg, palette, &seat_screen_callbacks, seat);

	seat->screens = xrealloc(seat->screens, (seat->n_screens + 1) * sizeof(*seat->screens));
	seat->screens[seat->n_screens++] = s;
	s->vt = seat->vt;
	return s;
}

void seat_drop_screen(struct seat *seat, struct screen *s)
{
	for (unsigned i = 0; i < seat->n_screens; i++)
		if (seat->screens[i] == s) {
			memmove(seat->screens + i, seat->screens + i + 1,
				(seat->n_screens - i - 1) * sizeof(*seat->screens));
			seat->n_screens--;
			break;
		}
	screen_free(s);
}

int seat_attach_screen(struct seat *seat, struct screen *s)
{
	struct terminal *t = seat->front;
	int r;

	if (seat->opts->screens == OPTIONS_SCREENS_SEPARATE) {
		/* a terminal and session of its own; the keyboard stays */
		r = seat_add_terminal(seat, seat->event, &t);
		if (r >= 0)
			r = seat_start_terminal(seat, t, s);
		if (r < 0)
			return r;
		log_info("%s shows terminal %u, a session of its own", s->cfg.fbdev,
			 seat->n_terminals);
	} else {
		/* the terminal in front, in the smallest screen's grid: a
		 * smaller one shrinks the session's (SIGWINCH) */
		seat_show_terminal(seat, s, t);
		seat_render_tables(s, t);
		seat_fit_grids(seat);
		log_info("%s shows the terminal in front (mirror)", s->cfg.fbdev);
	}
	seat_pointer_area(seat);
	/* drawn now if the VT (the seat) is ours, else at the next acquire */
	if (vt_is_active(seat->vt))
		seat_acquire_screen(seat, s);
	return 0;
}

int seat_add_terminal(struct seat *seat, sd_event *event, struct terminal **ret)
{
	int r;

	seat->event = event;
	r = terminal_new(event, seat->opts->bell, &seat_terminal_callbacks, seat, ret);
	seat->terminals =
	    xrealloc(seat->terminals, (seat->n_terminals + 1) * sizeof(*seat->terminals));
	seat->terminals[seat->n_terminals++] = *ret;
	return r;
}

int seat_open_vt(struct seat *seat, sd_event *event)
{
	int r;

	seat->event = event;
	if (seat->opts->seat)
		/* no kernel VT: in front once the seat is ours (seat_follow()) */
		r = vt_new_none(&(struct vt_callbacks){seat_on_release, seat_on_acquire}, seat,
				seat->opts->seat, &seat->vt);
	else
		r = vt_open(event, seat->opts->vt, seat->opts->switchvt,
			    &(struct vt_callbacks){seat_on_release, seat_on_acquire}, seat,
			    &seat->vt);
	for (unsigned i = 0; i < seat->n_screens; i++)
		seat->screens[i]->vt = seat->vt;
	return r;
}

void seat_show_terminal(struct seat *seat, struct screen *s, struct terminal *t)
{
	(void)seat;
	s->terminal = t;
}

int seat_start_terminal(struct seat *seat, struct terminal *t, struct screen *s)
{
	const struct options *o = seat->opts;
	/* the VT has one screen buffer: a separate screen's terminal on a VT
	 * is not kept over a restart; each of a seat's terminals is, under
	 * names of its own (restore.h) */
	bool first = seat->n_terminals && t == seat->terminals[0];
	unsigned slot = 1;
	struct terminal_config c;
	bool kept;
	int r;

	for (unsigned i = 0; i < seat->n_terminals; i++)
		if (seat->terminals[i] == t)
			slot = i + 1;
	/* (a screen's that came later may be beyond the store's names) */
	kept = (first || o->seat) && slot <= RESTORE_SLOTS_MAX;
	s->terminal = t;
	/* a mirror's grid before the session's size */
	seat_fit_grids(seat);
	c = (struct terminal_config){
	    .term =
		{
		    .cols = render_cols(s->render),
		    .rows = render_rows(s->render),
		    .width_px = rotate_sideways(render_rotation(s->render)) ? s->fb->var.yres
									    : s->fb->var.xres,
		    .height_px = rotate_sideways(render_rotation(s->render)) ? s->fb->var.xres
									     : s->fb->var.yres,
		    .argv = o->login_argv,
		    .term = o->term,
		    .session_socket = o->session_socket,
		    .sb_size = o->sb_size,
		    .image_memory = seat->image_memory,
		    .vt = vt_number(seat->vt),
		    .seat = o->seat,
		    .truecolor = !s->fb->format.indexed,
		    .palette = s->palette,
		    .autologin = o->autologin,
		    .cursor = {o->cursor_shape, o->cursor_blink},
		},
	    .restore =
		{
		    .enabled = o->session_restore && kept,
		    .store =
			o->session_restore && kept && o->session_socket && getenv("NOTIFY_SOCKET"),
		    .sb_size = o->sb_size,
		    .slot = slot,
		},
	    .word_chars = o->word_chars,
	    /* the mirror is a kernel VT's screen buffer */
	    .vcs = o->vcs && first && !o->seat,
	};

	r = terminal_start(t, &c);
	if (r < 0)
		return r;
	for (unsigned i = 0; i < seat->n_screens; i++)
		if (seat->screens[i]->terminal == t)
			seat_render_tables(seat->screens[i], t);
	if (!seat->front)
		seat->front = t;
	/* the band's and the view's rows in the mirror, as on the glass */
	if (t->vcs)
		vcs_set_rows(t->vcs, screen_vcs_row, s);
	return 0;
}

void seat_adopt_terminals(struct seat *seat)
{
	struct screen *s = seat_screen(seat);
	struct terminal *shown;
	unsigned last = seat->n_terminals;
	int r;

	/* a terminal beyond terminals=, of a screen that came while the last
	 * consoled ran (fbdev=all, screens=separate): its session lives on
	 * behind, Ctrl+Alt+Fn shows it */
	for (unsigned slot = last + 1; seat->opts->seat && s && slot <= RESTORE_SLOTS_MAX; slot++)
		if (restore_stored(slot))
			last = slot;
	while (seat->n_terminals < last) {
		struct terminal *more;

		if (seat_add_terminal(seat, seat->event, &more) < 0)
			break;
	}
	for (unsigned i = 1; seat->opts->seat && s && i < seat->n_terminals; i++) {
		struct terminal *t = seat->terminals[i];

		if (t->term || !restore_stored(i + 1))
			continue;
		log_info("Terminal %u of %s has a session in the fd store: adopting it", i + 1,
			 seat->opts->seat);
		/* started on the screen for its size, then the one in front is
		 * shown again */
		shown = s->terminal;
		r = seat_start_terminal(seat, t, s);
		s->terminal = shown;
		seat_fit_grids(seat);
		seat_render_tables(s, shown);
		if (r < 0)
			log_warning_errno(r,
					  "Terminal %u of %s: no session (%m), started when shown",
					  i + 1, seat->opts->seat);
	}
	/* a terminal beyond terminals= loses its session */
	restore_drop_unclaimed();
}

int seat_start_input(struct seat *seat)
{
	const struct options *o = seat->opts;
	int r;

	/* the mouse follows the term's modes (the stream stage's) */
	r = mouse_new(term_stream(seat->front->term), &seat_mouse_callbacks, seat, &seat->mouse);
	if (r < 0)
		return log_error_errno(r, "Failed to set up the mouse: %m");

	struct input_config ic = {
	    .model = o->xkb_model,
	    .layout = o->xkb_layout,
	    .variant = o->xkb_variant,
	    .options = o->xkb_options,
	    .repeat_delay_ms = o->repeat_delay_ms,
	    .repeat_rate_hz = o->repeat_rate_hz,
	    .pointer = o->mouse,
	    .pointer_speed = o->mouse_speed,
	    .compose_file = o->compose_file,
	    .sound = o->bell == BELL_SOUND,
	    .seat = o->seat,
	};
	return input_new(seat->event, &ic,
			 &(struct input_callbacks){
			     seat_on_key, seat_on_switch_vt, seat_on_scroll_page, seat_on_zoom,
			     seat_on_activity, seat_on_pointer_event, seat_on_rotate, seat_on_view},
			 seat, &seat->input);
}
