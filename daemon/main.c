/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * consoled: options, start-up and exit order, the event loop, exit statuses.
 *
 * What runs is a seat (seat.h: its VT, keyboards and pointers, which
 * terminal is in front), its screens (screen/screen.h: one framebuffer each
 * and its frames, screen/frame.h; fbdev= lists them, or fbdev=all takes
 * the seat's, devices/fbseat.h) and its terminals
 * (terminal/terminal.h: one session each; one for all screens, or one per
 * screen with screens=separate). Start-up touches the framebuffer before the VT, so an unusable
 * device is refused before anything changes on the console. Exit undoes
 * start-up in reverse, the framebuffer's mode and colour map before the VT's
 * text mode.
 */
#define LOG_MODULE "consoled"
#include <errno.h>
#include <libudev.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "devices/backend.h"
#include "devices/fbdev.h"
#include "devices/fbseat.h"
#include "devices/fbwait.h"
#include "devices/udevseat.h"
#include "devices/vt.h"
#include "options.h"
#include "screen/blank.h"
#include "color/palette.h"
#include "screen/render.h"
#include "screen/scroll.h"
#include "screen/screen.h"
#include "seat.h"
#include "terminal/bell.h"
#include "terminal/terminal.h"
#include "terminal/vcs.h"
#include "util/crash.h"
#include "util/log.h"
#include "util/util.h"

struct manager {
	sd_event *event;
	struct options opts;
	struct palette palette;
	struct seat *seat; /* one seat: the VT's, or one without VTs (--seat) */
	/* fbdev=all: screen i's path (its watch waits there for a successor),
	 * and the watch for the seat's framebuffers that come later */
	char *fb_paths[OPTIONS_SCREENS_MAX];
	struct fbseat *fbseat;
	int exit_status;
};

static int manager_on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct manager *m = userdata;

	(void)s;
	log_info("Received %s, exiting", strsignal((int)si->ssi_signo));
	sd_event_exit(m->event, 0);
	return 0;
}

static void manager_log_stats(struct manager *m)
{
	struct screen *s = seat_screen(m->seat);
	struct terminal *t = m->seat->n_terminals ? m->seat->terminals[0] : NULL;

	if (t && t->bell) {
		const struct bell_stats *b = bell_get_stats(t->bell);

		log_info("stats: bell=%s bells=%llu flashes=%llu tones=%llu",
			 bell_mode_to_string(bell_get_mode(t->bell)), (unsigned long long)b->bells,
			 (unsigned long long)b->flashes, (unsigned long long)b->tones);
	}
	if (!s || !s->render || !s->scroller)
		return;
	log_info("stats: mode=%s full-screen=%s region=%s",
		 scroll_mode_to_string(scroller_requested(s->scroller)),
		 scroll_mode_to_string(scroller_full_mode(s->scroller)),
		 scroll_mode_to_string(scroller_region_mode(s->scroller)));
	for (int i = 0; i < _SCROLL_MODE_MAX; i++) {
		const struct scroll_counters *c = render_get_counters(s->render, i);

		if (!c->frames && !c->rows_scrolled && !c->pans)
			continue;
		log_info(
		    "stats: strategy=%s frames=%llu rows_scrolled=%llu vram_bytes_written=%llu "
		    "vram_bytes_read=%llu blits=%llu fills=%llu pans=%llu render_usec=%llu",
		    scroll_mode_to_string(i), (unsigned long long)c->frames,
		    (unsigned long long)c->rows_scrolled, (unsigned long long)c->vram_bytes_written,
		    (unsigned long long)c->vram_bytes_read, (unsigned long long)c->blits,
		    (unsigned long long)c->fills, (unsigned long long)c->pans,
		    (unsigned long long)c->render_usec);
	}
	/* where the process's time went: parsing, snapshots (and above:
	 * drawing, below: the mirror); the rest is the event loop, input,
	 * the pty's writes */
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) == 0)
		log_info("stats: cpu user_usec=%llu sys_usec=%llu parse_usec=%llu "
			 "snapshot_usec=%llu",
			 (unsigned long long)ru.ru_utime.tv_sec * USEC_PER_SEC +
			     (unsigned long long)ru.ru_utime.tv_usec,
			 (unsigned long long)ru.ru_stime.tv_sec * USEC_PER_SEC +
			     (unsigned long long)ru.ru_stime.tv_usec,
			 t && t->term ? (unsigned long long)term_parse_usec(t->term) : 0ULL,
			 t ? (unsigned long long)t->snapshot_usec : 0ULL);
	if (t && t->vcs) {
		const struct vcs_stats *vs = vcs_get_stats(t->vcs);

		log_info("stats: vcs writes=%llu bytes=%llu failed=%llu usec=%llu",
			 (unsigned long long)vs->writes, (unsigned long long)vs->bytes,
			 (unsigned long long)vs->failed, (unsigned long long)vs->usec);
	}
}

static int manager_on_sigusr1(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	(void)s;
	(void)si;
	manager_log_stats(userdata);
	return 0;
}

/* The seat whose framebuffers consoled may take (udevseat.h): --seat's;
 * on a VT with fbdev=all or an fbdev= list, seat0's (a screen lets its
 * framebuffer go when it moves to another seat); NULL: any (a VT's first
 * framebuffer). */
static const char *manager_fb_seat(const struct options *o)
{
	if (o->seat)
		return o->seat;
	return options_fbdev_all(o) || o->n_fbdevs ? UDEVSEAT_DEFAULT : NULL;
}

/* The seat's next screen on path (NULL: the first framebuffer, of the seat
 * with fbdev=all; waited for, fb-wait=): opened, its fonts and its
 * renderer. On failure it is no screen of the seat, and *ret_status says
 * what consoled exits with if it is the start's only one. */
static int manager_open_screen(struct manager *m, const char *path, struct screen **ret,
			       int *ret_status)
{
	const struct options *o = &m->opts;
	unsigned i = m->seat->n_screens;
	struct screen_config sc = {
	    .fbdev = path,
	    .seat = manager_fb_seat(o),
	    .fb_wait = o->fb_wait,
	    .font_file = o->font_file,
	    .font_name = o->font_name,
	    .font_size = options_font_size(o, i),
	    .font_dpi = o->font_dpi,
	    .scroll_mode = o->scroll_mode,
	    .calibrate = o->calibrate,
	    .stats = o->stats,
	    .fb_flush = o->fb_flush,
	    .backend = o->backend,
	    .rotate = options_rotate(o, i),
	};
	struct screen *s;
	int r;

	*ret_status = EXIT_FAILURE;
	if (o->seat && path) {
		/* fbdev= of the files every instance reads: not another seat's */
		struct udev *udev = udev_new();
		bool ours = udevseat_node_is(udev, path, o->seat);

		udev_unref(udev);
		if (!ours) {
			log_error("%s is not on %s (udev's ID_SEAT): refusing it", path, o->seat);
			*ret_status = EXIT_NO_FRAMEBUFFER;
			return -EPERM;
		}
	}
	s = seat_add_screen(m->seat, &sc, &m->palette);
	/* The driver may come after us at boot: wait for it (bounded). */
	r = screen_open(s);
	if (r < 0)
		*ret_status = EXIT_NO_FRAMEBUFFER;
	if (r >= 0)
		r = screen_load_fonts(s);
	if (r >= 0) {
		r = screen_new_render(s);
		if (r == -ERANGE)
			/* the same font on the same screen next time: no restart */
			*ret_status = EXIT_FONT_TOO_LARGE;
	}
	if (r < 0) {
		seat_drop_screen(m->seat, s);
		return r;
	}
	*ret = s;
	return 0;
}

/* fbdev=all: the screen at path, whose string the manager keeps for the
 * screen's life (its watch waits there for a successor). */
static int manager_open_screen_at(struct manager *m, const char *path, struct screen **ret,
				  int *ret_status)
{
	unsigned i = m->seat->n_screens;
	int r;

	if (i >= OPTIONS_SCREENS_MAX)
		return -ENOSPC;
	free(m->fb_paths[i]);
	m->fb_paths[i] = path ? xstrdup(path) : NULL;
	r = manager_open_screen(m, m->fb_paths[i], ret, ret_status);
	if (r >= 0 && !path) {
		/* waited for: its path from now on */
		m->fb_paths[i] = xstrdup((*ret)->fb->path);
		(*ret)->cfg.fbdev = m->fb_paths[i];
	}
	return r;
}

/* " node", or " node (why)", appended to the log line in buf. */
static void manager_list_fb(char *buf, size_t size, const char *node, const char *why)
{
	size_t len = strlen(buf);

	if (len + 1 < size)
		snprintf(buf + len, size - len, why ? " %s (%s)" : " %s", node, why);
}

/* fbdev=all at start: every framebuffer of the seat, in /dev/fbN order,
 * OPTIONS_SCREENS_MAX at most; the log says which were taken and why the
 * others were not. With none there yet, the first is waited for (fb-wait=),
 * then the seat's are looked at again. One that cannot be used is left
 * out; none usable: consoled exits. */
static int manager_open_all(struct manager *m)
{
	const char *seat = manager_fb_seat(&m->opts);
	struct udev *udev = udev_new();
	struct fbseat_entry *e = NULL;
	size_t n = 0;
	char taken[512] = "", left[512] = "", why[64];
	struct screen *s;
	int r = 0, status = EXIT_NO_FRAMEBUFFER;

	n = udev ? fbseat_list(udev, &e) : 0;
	fbseat_choose(e, n, seat, NULL, 0, OPTIONS_SCREENS_MAX);
	bool any = false;
	for (size_t i = 0; i < n; i++)
		any = any || e[i].verdict == FBSEAT_TAKE;
	if (!any) {
		/* the first one of the seat, waited for as one screen's is */
		fbseat_list_free(e, n);
		e = NULL;
		n = 0;
		r = manager_open_screen_at(m, NULL, &s, &status);
		if (r < 0) {
			udev_unref(udev);
			m->exit_status = status;
			return r;
		}
		n = udev ? fbseat_list(udev, &e) : 0;
		fbseat_choose(e, n, seat, (const char *const[]){s->cfg.fbdev}, 1,
			      OPTIONS_SCREENS_MAX);
		manager_list_fb(taken, sizeof(taken), s->cfg.fbdev, NULL);
	}
	for (size_t i = 0; i < n; i++) {
		if (e[i].verdict == FBSEAT_USED)
			continue;
		if (e[i].verdict == FBSEAT_OTHER_SEAT) {
			snprintf(why, sizeof(why), "on %s", e[i].seat);
			manager_list_fb(left, sizeof(left), e[i].node, why);
			continue;
		}
		if (e[i].verdict == FBSEAT_FULL) {
			snprintf(why, sizeof(why), "%u screens at most", OPTIONS_SCREENS_MAX);
			manager_list_fb(left, sizeof(left), e[i].node, why);
			continue;
		}
		r = manager_open_screen_at(m, e[i].node, &s, &status);
		manager_list_fb(r < 0 ? left : taken, r < 0 ? sizeof(left) : sizeof(taken),
				e[i].node, r < 0 ? "cannot be used" : NULL);
	}
	fbseat_list_free(e, n);
	udev_unref(udev);
	if (!m->seat->n_screens) {
		m->exit_status = status;
		return r < 0 ? r : -ENODEV;
	}
	log_info("The framebuffers of %s (fbdev=all): taken:%s; left out:%s", seat, taken,
		 left[0] ? left : " none");
	return 0;
}

/* The idle timer's seconds (blank.h). */
static unsigned manager_blank_sec(const struct manager *m)
{
	return m->opts.blank_sec == OPTIONS_BLANK_KERNEL
		   ? blank_kernel_timeout(BLANK_KERNEL_SETTING)
		   : m->opts.blank_sec;
}

/* fbdev=all: the paths the screens have or wait at (fbseat.h). */
static size_t manager_fbs_used(const char **used, size_t max, void *userdata)
{
	struct manager *m = userdata;
	size_t n = 0;

	for (unsigned i = 0; i < m->seat->n_screens && n < max; i++)
		if (m->seat->screens[i]->cfg.fbdev)
			used[n++] = m->seat->screens[i]->cfg.fbdev;
	return n;
}

/* fbdev=all: a framebuffer that came on the seat is a new screen, opened
 * as at start, then shown (seat_attach_screen()). One that cannot be used
 * is left out; consoled goes on. */
static int manager_fb_added(const char *node, void *userdata)
{
	struct manager *m = userdata;
	struct screen *s;
	int status, r;

	r = manager_open_screen_at(m, node, &s, &status);
	if (r < 0) {
		log_warning_errno(r, "%s is left out: %m", node);
		return r;
	}
	r = screen_start(s, m->event, manager_blank_sec(m));
	if (r < 0) {
		/* nothing of it shown, no terminal given to it: left out,
		 * the other screens and their sessions go on */
		log_warning_errno(r, "Cannot show %s, left out: %m", node);
		screen_unwatch(s);
		screen_stop(s);
		seat_drop_screen(m->seat, s);
		return r;
	}
	r = seat_attach_screen(m->seat, s);
	if (r < 0) {
		/* its own terminal's session could not start (separate): as
		 * a session that fails anywhere (seat_term_failed()) */
		log_error_errno(r, "Cannot show %s: %m", node);
		seat_exit(m->seat, m->opts.session_socket ? EXIT_NO_SESSION_HELPER : EXIT_FAILURE);
	}
	return r;
}

static int manager_start(struct manager *m)
{
	static const int exit_signals[] = {SIGTERM, SIGINT, SIGHUP};
	unsigned n_screens;
	struct screen *screens[OPTIONS_SCREENS_MAX];
	struct terminal *terms[OPTIONS_SCREENS_MAX];
	sigset_t mask;
	int r;

	if (palette_init(&m->palette, m->opts.palette, "/sys/module/vt/parameters"))
		log_debug("Console colours from /sys/module/vt/parameters");
	palette_set_colors(&m->palette, m->opts.colors, m->opts.colors_set);

	m->seat = seat_new(&m->opts, &m->exit_status);
	/* every framebuffer before the VT is touched: one consoled cannot
	 * draw on is refused with the console as it was */
	if (options_fbdev_all(&m->opts)) {
		r = manager_open_all(m);
		if (r < 0)
			return r;
	}
	for (unsigned i = 0; !options_fbdev_all(&m->opts) && i < MAX(m->opts.n_fbdevs, 1u); i++) {
		int status;

		r = manager_open_screen(m, m->opts.n_fbdevs ? m->opts.fbdevs[i] : NULL, &screens[i],
					&status);
		if (r < 0) {
			m->exit_status = status;
			return r;
		}
	}
	n_screens = m->seat->n_screens;
	for (unsigned i = 0; i < n_screens; i++)
		screens[i] = m->seat->screens[i];
	if (n_screens > 1)
		log_info("%u screens, %s", n_screens,
			 m->opts.screens == OPTIONS_SCREENS_SEPARATE ? "a terminal each"
								     : "one terminal mirrored");

	r = sd_event_default(&m->event);
	if (r < 0)
		return log_error_errno(r, "Failed to create the event loop: %m");
	/* Under systemd with WatchdogSec=, the loop pings the watchdog. */
	r = sd_event_set_watchdog(m->event, true);
	if (r < 0)
		log_warning_errno(r, "Failed to set up the watchdog, ignoring: %m");

	sigemptyset(&mask);
	for (unsigned i = 0; i < ELEMENTSOF(exit_signals); i++)
		sigaddset(&mask, exit_signals[i]);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGUSR1);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	r = sd_event_add_signal(m->event, NULL, SIGUSR1, manager_on_sigusr1, m);
	if (r < 0)
		return log_error_errno(r, "Failed to watch SIGUSR1: %m");
	for (unsigned i = 0; i < ELEMENTSOF(exit_signals); i++) {
		r = sd_event_add_signal(m->event, NULL, exit_signals[i], manager_on_signal, m);
		if (r < 0)
			return log_error_errno(r, "Failed to watch signals: %m");
	}
	crash_install_handlers();
	/* Session restore under systemd: a crash leaves the last frame for the
	 * consoled started next (consoled-fallback@.service puts the text mode
	 * back if none is). */
	crash_set_keep_display(m->opts.session_restore && m->opts.session_socket &&
			       getenv("NOTIFY_SOCKET"));
	(void)crash_add_test_hooks(m->event);

	/* the device watch, the frame and pointer timers, the idle timer */
	for (unsigned i = 0; i < n_screens; i++) {
		r = screen_start(screens[i], m->event, manager_blank_sec(m));
		if (r < 0)
			return r;
	}
	/* the snapshot and share timers, the bell: one terminal, or one per
	 * screen (screens=separate) */
	for (unsigned i = 0; i < n_screens; i++) {
		if (i == 0 || m->opts.screens == OPTIONS_SCREENS_SEPARATE) {
			r = seat_add_terminal(m->seat, m->event, &terms[i]);
			if (r < 0)
				return r;
		} else {
			terms[i] = terms[0];
		}
		seat_show_terminal(m->seat, screens[i], terms[i]);
	}
	/* a seat without VTs has terminals= of them (those of the screens
	 * above counted), the others started when first shown */
	for (unsigned i = m->seat->n_terminals; m->opts.seat && i < m->opts.terminals; i++) {
		struct terminal *more;

		r = seat_add_terminal(m->seat, m->event, &more);
		if (r < 0)
			return r;
	}

	r = seat_open_vt(m->seat, m->event);
	if (r < 0) {
		m->exit_status = EXIT_NO_VT;
		return r;
	}
	crash_set_active(vt_is_active(m->seat->vt));

	/* A session that the last consoled left in systemd's fd store is
	 * adopted; without one (or if its snapshot is bad) a new one starts. */
	for (unsigned i = 0; i < n_screens; i++) {
		if (i > 0 && terms[i] == terms[0])
			continue;
		r = seat_start_terminal(m->seat, terms[i], screens[i]);
		if (r < 0) {
			if (m->opts.session_socket)
				m->exit_status = EXIT_NO_SESSION_HELPER;
			return r;
		}
	}
	/* a seat's other terminals with a session in the fd store */
	seat_adopt_terminals(m->seat);
	/* the mouse, the keyboards and pointers */
	r = seat_start_input(m->seat);
	if (r < 0)
		return r;
	/* kernel messages: /dev/kmsg followed (without it, consoled goes on) */
	r = seat_start_kmsg(m->seat);
	if (r < 0)
		return r;

	if (m->opts.seat) {
		/* in front while the seat's active session is none or ours */
		r = seat_follow(m->seat);
		if (r < 0)
			return r;
	} else if (vt_is_active(m->seat->vt))
		seat_acquire(m->seat);
	/* fbdev=all: a framebuffer that comes on the seat later is a screen */
	if (options_fbdev_all(&m->opts))
		return fbseat_new(m->event, manager_fb_seat(&m->opts), OPTIONS_SCREENS_MAX,
				  &(struct fbseat_callbacks){manager_fbs_used, manager_fb_added}, m,
				  &m->fbseat);
	return 0;
}

static void manager_stop(struct manager *m)
{
	struct seat *seat = m->seat;

	if (!seat) {
		sd_event_unref(m->event);
		return;
	}
	/* A compositor that took the VT within the last second keeps the
	 * framebuffer as it is: no wipe, no mode restored (vt_free() leaves
	 * the VT's mode alone too). */
	if (seat->vt)
		vt_poll(seat->vt);
	if (m->opts.stats)
		manager_log_stats(m);
	for (unsigned i = 0; i < seat->n_terminals; i++)
		bell_stop(seat->terminals[i]->bell); /* a tone going on ends with us */
	fbseat_free(m->fbseat);
	m->fbseat = NULL;
	for (unsigned i = 0; i < seat->n_screens; i++)
		screen_unwatch(seat->screens[i]);
	input_free(seat->input);
	mouse_free(seat->mouse);
	/* each terminal's last output into its snapshot, its session's parts
	 * freed, its VT's buffer cleared while the VT is still in graphics
	 * mode */
	for (unsigned i = 0; i < seat->n_terminals; i++)
		terminal_stop(seat->terminals[i]);
	/* video memory wiped, the blitter let go, the mode back */
	for (unsigned i = 0; i < seat->n_screens; i++)
		screen_stop(seat->screens[i]);
	vt_free(seat->vt);
	for (unsigned i = 0; i < seat->n_screens; i++)
		screen_free(seat->screens[i]);
	for (unsigned i = 0; i < seat->n_terminals; i++)
		terminal_free(seat->terminals[i]);
	seat_free(seat);
	sd_event_unref(m->event);
}

/* --list-backends: the plugins, and whether each matches the framebuffer.
 * Without --fbdev a machine without a framebuffer (a container, a build
 * host) is no error: the plugins are listed all the same, "(no
 * framebuffer)", and the status is 0. A framebuffer named with --fbdev that
 * cannot be opened is: the answer would not be about it (status 3, as at a
 * start). */
static int manager_list_backends(const char *fbdev)
{
	_cleanup_(freep) char *path = NULL;
	struct palette palette;
	struct fbdev *fb = NULL;
	int r = 0;

	palette_init(&palette, PALETTE_LINUX, NULL);
	if (fbdev) {
		r = fbdev_open(fbdev, &palette, &fb);
	} else {
		struct udev *udev = udev_new();

		path = udev ? fbwait_first_node(udev) : NULL;
		udev_unref(udev);
		if (path)
			r = fbdev_open(path, &palette, &fb);
		else
			log_info("No framebuffer: the plugins are listed without a probe");
	}
	backend_list(r < 0 ? NULL : fb, stdout);
	fbdev_free(fb);
	return r < 0 ? EXIT_NO_FRAMEBUFFER : EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
	struct manager m = {.exit_status = EXIT_SUCCESS};
	int r;

	if (options_parse(argc, argv, &options_system_files, &m.opts) < 0)
		return EXIT_USAGE;
	switch (m.opts.action) {
	case OPTIONS_HELP:
		options_help(stdout);
		options_fini(&m.opts);
		return 0;
	case OPTIONS_VERSION:
		printf("consoled %s\n", CONSOLED_VERSION);
		options_fini(&m.opts);
		return 0;
	case OPTIONS_LIST_BACKENDS:
		r = manager_list_backends(m.opts.fbdev);
		options_fini(&m.opts);
		return r;
	case OPTIONS_RUN:
		break;
	}
	if (m.opts.verbose)
		log_set_max_level(LOG_DEBUG);

	r = manager_start(&m);
	if (r >= 0) {
		/* Ready whether or not the VT is in front: VT, framebuffer, pty
		 * and session are set up. */
		struct fbdev *fb = seat_screen(m.seat)->fb;

		sd_notifyf(0, "READY=1\nSTATUS=Running on %s, %s (%s)", vt_name(m.seat->vt),
			   fb->path, fb->fix.id);
		r = sd_event_loop(m.event);
		if (r < 0)
			log_error_errno(r, "Event loop failed: %m");
		sd_notify(0, "STOPPING=1");
	}
	manager_stop(&m);
	for (unsigned i = 0; i < OPTIONS_SCREENS_MAX; i++)
		free(m.fb_paths[i]);
	options_fini(&m.opts);
	if (r < 0)
		return m.exit_status != EXIT_SUCCESS ? m.exit_status : EXIT_FAILURE;
	return m.exit_status;
}
