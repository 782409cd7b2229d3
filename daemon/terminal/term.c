/* SPDX-License-Identifier: GPL-2.0-or-later */

#define LOG_MODULE "term"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "cluster.h"
#include "snapshot.h"
#include "stream.h"
#include "term.h"
#include "tsmpeek.h"
#include "image.h"
#include "keys.h"
#include "../color/palette.h"
#include "../session/getty.h"
#include "../session/session.h"
#include "../util/log.h"
#include "../util/util.h"

#define TERM_READ_SIZE (64 * 1024)
/* While sixel data is decoded (stream_in_sixel()): a read of the worst data
 * (repeats to the right edge after graphics carriage returns, 1920 pixels
 * wide) costs about 14 ms, not 110 ms, so keys wait no longer behind it. */
#define TERM_SIXEL_READ_SIZE (8 * 1024)

/* How long consoled-session may take to start the session (systemd starts
 * one helper per connection); below WatchdogSec=, since the loop waits. */
#define TERM_HELPER_TIMEOUT_MSEC (15 * 1000)

/* linux/tty.h (Linux 4.13): the pty's slave, opened without a path lookup. */
#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif

struct term {
	sd_event *event;
	struct term_config cfg;
	struct tsm_screen *screen;
	struct tsm_vte *vte;
	int master;
	pid_t child;
	sd_event_source *io_source, *child_source;
	/* With cfg.session_socket: the connection to consoled-session, which
	 * runs the session (then child is 0). */
	int helper;
	sd_event_source *helper_source;
	pid_t helper_pid; /* the session's pid, as the helper's STARTED told */
	/* A pidfd of the session's leader (from the helper, or handed over
	 * with an adopted session), or -1; watched when neither child nor
	 * helper tells us of the session's end (an adopted session). */
	int pidfd;
	sd_event_source *pidfd_source;
	/* Polls the pty again after every slave fd was closed for a moment. */
	sd_event_source *recheck_source;
	/* The session ended (its last output read): the pty is neither read
	 * nor written until the next session, so nothing typed, pasted or
	 * reported reaches what is left of it, and nothing it still prints
	 * (an OSC 52 after the selection was wiped) reaches the next user. */
	bool ended;
	struct term_callbacks cb;
	void *userdata;
	void (*osc52)(const char *args, size_t len, void *userdata);
	void *osc52_userdata;
	void (*bell)(unsigned count, void *userdata);
	void *bell_userdata;

	/* The pty's bytes on their way to libtsm (stream.h), and the
	 * stand-ins it hands out (cluster.h). */
	struct stream *stream;
	struct cluster_table *clusters;
	struct image_store *images; /* sixel images (image.h), or NULL */
	/* Bytes read from the pty since the start: frame pacing tells a
	 * flood by them. */
	uint64_t bytes_in;
	uint64_t lines_in;   /* line feeds among them */
	uint64_t parse_usec; /* time in stream_feed() (--stats) */
	struct term_key_trace key;
	/* the damage callback runs for the first read after a key */
	bool echo_read;
	/* while term_handle_key() writes: how many bytes, the first one */
	bool key_writing;
	size_t key_len;
	unsigned char key_byte;

	/* Bytes for the pty that did not fit (the session is not reading). */
	char *out;
	size_t out_len, out_cap;

	/* Synchronized output (stream_synchronized()): set since sync_since,
	 * frames held until then + TERM_SYNC_TIMEOUT_USEC (the timer's end
	 * schedules one); sync_drawn: a frame was drawn since the last set,
	 * so the next set starts a new hold (a program that resets and sets
	 * it again between two frames does not hold them longer). */
	bool sync_on, sync_drawn;
	uint64_t sync_since;
	sd_event_source *sync_timer;

	/* The scrollback's bound (term_sb_fit()): the widest grid so far, the
	 * lines libtsm keeps (once sb_set). */
	unsigned sb_cols, sb_max;
	bool sb_set;
};

/* A scrollback line's cost (term_sb_lines_fit()): libtsm's cell and the
 * snapshot's worst case (a cell of its own in a run, and a text byte up to
 * 4), per cell; libtsm's line header, two malloc headers and the snapshot
 * record's header, per line. */
#define SB_CELL_BYTES (sizeof(struct tsmpeek_cell) + 16u)
#define SB_LINE_BYTES (sizeof(struct tsmpeek_line) + 2 * 16u + 32u)

unsigned term_sb_lines_fit(unsigned want, unsigned cols, uint64_t cap)
{
	uint64_t line = (uint64_t)cols * SB_CELL_BYTES + SB_LINE_BYTES;

	return (unsigned)MIN((uint64_t)want, cap / line);
}

/* Applies the scrollback's bound for a grid `cols` wide. */
static void term_sb_fit(struct term *t, unsigned cols)
{
	uint64_t ram = memory_physical(), cap = memory_cap(ram, SIZE_MAX);
	unsigned lines;

	t->sb_cols = MAX(t->sb_cols, cols);
	lines = term_sb_lines_fit(t->cfg.sb_size, t->sb_cols, cap);
	/* libtsm redraws everything after tsm_screen_set_max_sb() */
	if (t->sb_set && lines == t->sb_max)
		return;
	if (lines < t->cfg.sb_size)
		log_warning("Scrollback cut to %u of sb-size=%u lines: lines of %u columns "
			    "take about %u bytes, and the scrollback may take at most %" PRIu64
			    " MiB (the lesser of a quarter of the %" PRIu64
			    " MiB of memory and an eighth of the address space)",
			    lines, t->cfg.sb_size, t->sb_cols,
			    (unsigned)(t->sb_cols * SB_CELL_BYTES + SB_LINE_BYTES), cap >> 20,
			    ram >> 20);
	t->sb_max = lines;
	t->sb_set = true;
	tsm_screen_set_max_sb(t->screen, lines);
}

__attribute__((format(printf, 7, 0))) static void term_tsm_log(void *data, const char *file,
							       int line, const char *func,
							       const char *subs, unsigned sev,
							       const char *format, va_list args)
{
	(void)data;
	(void)file;
	(void)line;
	(void)func;
	(void)subs;
	/* libtsm's severities are syslog's; its chatter is debug output for us. */
	if (log_get_max_level() >= LOG_DEBUG && sev <= LOG_DEBUG)
		log_internalv(LOG_DEBUG, 0, "tsm", format, args);
}

static void term_update_io_events(struct term *t)
{
	if (t->io_source)
		sd_event_source_set_io_events(t->io_source, EPOLLIN | (t->out_len ? EPOLLOUT : 0));
}

static void term_flush(struct term *t)
{
	while (t->out_len > 0) {
		ssize_t n = write(t->master, t->out, t->out_len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				t->out_len = 0; /* the session is gone; drop the bytes */
			break;
		}
		memmove(t->out, t->out + n, t->out_len - (size_t)n);
		t->out_len -= (size_t)n;
	}
	term_update_io_events(t);
}

/* Bytes for the session: libtsm's answers and keys, the stream stage's
 * answers. */
static void term_queue_write(const char *u8, size_t len, void *data)
{
	struct term *t = data;

	if (t->ended)
		return;
	/* Bound what we queue for a session that never reads its tty. */
	if (t->out_len + len > 1024 * 1024)
		return;
	if (t->out_len + len > t->out_cap) {
		t->out_cap = MAX(t->out_cap * 2, t->out_len + len);
		t->out = xrealloc(t->out, t->out_cap);
	}
	memcpy(t->out + t->out_len, u8, len);
	t->out_len += len;
	term_flush(t);
}

static void term_write_cb(struct tsm_vte *vte, const char *u8, size_t len, void *data)
{
	struct term *t = data;

	(void)vte;
	if (t->key_writing && len > 0) {
		if (!t->key_len)
			t->key_byte = (unsigned char)u8[0];
		t->key_len += len;
	}
	term_queue_write(u8, len, data);
}

#define TERM_HANGUP_RECHECK_USEC (100 * 1000)

static void term_stream_osc52(const char *args, size_t len, void *userdata)
{
	struct term *t = userdata;

	if (t->osc52)
		t->osc52(args, len, t->osc52_userdata);
}

static void term_stream_bell(unsigned count, void *userdata)
{
	struct term *t = userdata;

	if (t->bell)
		t->bell(count, t->bell_userdata);
}

static int term_on_recheck(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct term *t = userdata;

	(void)s;
	(void)usec;
	if (t->io_source)
		sd_event_source_set_enabled(t->io_source, SD_EVENT_ON);
	return 0;
}

static void term_recheck_later(struct term *t)
{
	uint64_t now = 0;

	sd_event_now(t->event, CLOCK_MONOTONIC, &now);
	if (!t->recheck_source) {
		if (sd_event_add_time(t->event, &t->recheck_source, CLOCK_MONOTONIC,
				      now + TERM_HANGUP_RECHECK_USEC, 0, term_on_recheck, t) < 0)
			return;
	} else
		sd_event_source_set_time(t->recheck_source, now + TERM_HANGUP_RECHECK_USEC);
	sd_event_source_set_enabled(t->recheck_source, SD_EVENT_ONESHOT);
}

static int term_on_sync_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct term *t = userdata;

	(void)s;
	(void)usec;
	/* the hold is over: a frame shows what the program wrote so far */
	if (t->cb.damage)
		t->cb.damage(t->userdata);
	return 0;
}

/* After the stream stage got bytes: synchronized output set or reset. */
static void term_follow_sync(struct term *t)
{
	bool on = stream_synchronized(t->stream);

	if (on == t->sync_on)
		return;
	t->sync_on = on;
	if (!on) {
		/* the frame the reset's read scheduled draws it all */
		if (t->sync_timer)
			sd_event_source_set_enabled(t->sync_timer, SD_EVENT_OFF);
		return;
	}
	if (t->sync_drawn) {
		t->sync_since = now_usec();
		t->sync_drawn = false;
	}
	if (!t->sync_timer) {
		if (sd_event_add_time(t->event, &t->sync_timer, CLOCK_MONOTONIC,
				      t->sync_since + TERM_SYNC_TIMEOUT_USEC, USEC_PER_MSEC,
				      term_on_sync_timeout, t) < 0) {
			t->sync_timer = NULL;
			return; /* no timer: term_frame_held() still ends the hold */
		}
	} else
		sd_event_source_set_time(t->sync_timer, t->sync_since + TERM_SYNC_TIMEOUT_USEC);
	sd_event_source_set_enabled(t->sync_timer, SD_EVENT_ONESHOT);
}

/* The stream stage's cell size (XTWINOPS' pixel reports), from the grid
 * and its pixels in t->cfg. */
static void term_stream_cell_size(struct term *t)
{
	if (t->cfg.cols && t->cfg.rows)
		stream_set_cell_size(t->stream, t->cfg.width_px / t->cfg.cols,
				     t->cfg.height_px / t->cfg.rows);
}

bool term_frame_held(struct term *t)
{
	if (t->sync_on && now_usec() < t->sync_since + TERM_SYNC_TIMEOUT_USEC)
		return true;
	t->sync_drawn = true;
	return false;
}

static int term_on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct term *t = userdata;
	char buf[TERM_READ_SIZE];

	(void)s;
	if (revents & EPOLLOUT)
		term_flush(t);
	if (revents & (EPOLLIN | EPOLLHUP)) {
		uint64_t woke = t->key.pending && !t->key.read_usec ? now_usec() : 0;
		ssize_t n =
		    read(fd, buf, stream_in_sixel(t->stream) ? TERM_SIXEL_READ_SIZE : sizeof(buf));
		if (n > 0) {
			uint64_t start = now_usec(), out = stream_bytes_out(t->stream);

			for (const char *q = buf, *e = buf + n;
			     (q = memchr(q, '\n', (size_t)(e - q))); q++)
				t->lines_in++;
			stream_feed(t->stream, buf, (size_t)n);
			term_follow_sync(t);
			t->bytes_in += stream_bytes_out(t->stream) - out;
			t->parse_usec += now_usec() - start;
			if (woke) {
				t->key.read_usec = woke;
				t->key.parsed_usec = now_usec();
			}
			t->echo_read = woke != 0;
			if (t->cb.damage)
				t->cb.damage(t->userdata);
			t->echo_read = false;
		} else if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			/* EIO: every slave fd is closed. That is the session's end
			 * (its exit, the helper or the pidfd tell us) or a moment
			 * of it (login closes its fds for vhangup() and opens the
			 * tty again): stop polling a fd that stays readable, and
			 * look again a little later. */
			sd_event_source_set_enabled(t->io_source, SD_EVENT_OFF);
			term_recheck_later(t);
		}
	}
	return 0;
}

/* The session ended: what it wrote last may still wait in the pty (its end
 * can be seen before its last output), so it is read and shown first. Bounded:
 * a slave another process still holds open cannot keep us here. */
static void term_drain(struct term *t)
{
	char buf[TERM_READ_SIZE];

	if (t->master < 0)
		return;
	for (unsigned i = 0; i < 16; i++) {
		ssize_t n = read(t->master, buf, sizeof(buf));
		if (n <= 0)
			break;
		stream_feed(t->stream, buf, (size_t)n);
		term_follow_sync(t);
		if (t->cb.damage)
			t->cb.damage(t->userdata);
	}
	/* and that was the session's last word (term_restart() or
	 * term_free() close the pty) */
	t->ended = true;
	t->out_len = 0;
	if (t->io_source)
		sd_event_source_set_enabled(t->io_source, SD_EVENT_OFF);
	if (t->recheck_source)
		sd_event_source_set_enabled(t->recheck_source, SD_EVENT_OFF);
}

static int term_on_child(sd_event_source *s, const siginfo_t *si, void *userdata)
{
	struct term *t = userdata;
	int status = si->si_code == CLD_EXITED ? si->si_status : 128 + si->si_status;

	(void)s;
	log_info("Session process %d exited with status %d", (int)t->child, status);
	t->child = 0;
	term_drain(t);
	if (t->cb.exited)
		t->cb.exited(status, t->userdata);
	return 0;
}

/* libtsm keeps rgb values beside the colour codes of its attributes: made
 * consoled's, so that nothing it derives from them disagrees with the screen.
 * libtsm erases its screen on a palette change: done before any output. */
static bool term_set_tsm_palette(struct term *t, const struct palette *p)
{
	int r = stream_vte_set_palette(t->vte, p);

	if (r < 0)
		log_warning_errno(r, "Failed to give libtsm the palette: %m, ignoring.");
	return r >= 0;
}

/* Runs in the forked child; never returns. */
static void term_exec_child(const char *slave_name, const struct term_config *cfg)
{
	static char autologin[GETTY_NAME_MAX];
	struct session_env_config c = {
	    .term = cfg->term, .vt = cfg->vt, .seat = cfg->seat, .truecolor = cfg->truecolor};
	char colorfgbg[16];
	int fd;

	if (cfg->palette) {
		unsigned fg, bg;

		palette_colorfgbg(cfg->palette, &fg, &bg);
		snprintf(colorfgbg, sizeof(colorfgbg), "%u;%u", fg, bg);
		c.colorfgbg = colorfgbg;
	}
	/* The login screen as consoled-session(8) shows it (still on the
	 * daemon's stderr here: the autologin's log line goes there). */
	c.getty = getty_is_default_login(cfg->argv);
	if (c.getty &&
	    getty_autologin_user(cfg->autologin, cfg->vt, autologin, sizeof(autologin)) > 0)
		c.autologin = autologin;

	fd = open(slave_name, O_RDWR | O_NOCTTY);
	if (fd < 0)
		_exit(127);
	session_exec(fd, cfg->argv, &c);
}

static int close_fd(int fd)
{
	if (fd >= 0)
		close(fd);
	return -1;
}

/* A new pty with the grid's size; returns its slave's name. */
static int term_open_pty(struct term *t, const struct term_config *cfg, char *slave_name,
			 size_t size)
{
	struct winsize ws = {
	    .ws_col = (unsigned short)cfg->cols,
	    .ws_row = (unsigned short)cfg->rows,
	    .ws_xpixel = (unsigned short)cfg->width_px,
	    .ws_ypixel = (unsigned short)cfg->height_px,
	};
	struct termios tio;

	t->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	if (t->master < 0)
		return log_error_errno(errno, "Failed to open a pty: %m");
	if (grantpt(t->master) < 0 || unlockpt(t->master) < 0 ||
	    ptsname_r(t->master, slave_name, size) != 0)
		return log_error_errno(errno, "Failed to set up the pty: %m");
	if (ioctl(t->master, TIOCSWINSZ, &ws) < 0)
		log_warning_errno(errno, "Failed to set the pty's window size: %m");
	if (tcgetattr(t->master, &tio) == 0) {
		tio.c_iflag |= IUTF8;
		tcsetattr(t->master, TCSANOW, &tio);
	}
	return 0;
}

static int term_fork_session(struct term *t, const struct term_config *cfg, const char *slave_name)
{
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return log_error_errno(errno, "Failed to fork the session: %m");
	if (pid == 0)
		term_exec_child(slave_name, cfg);

	t->child = pid;
	log_info("Started session '%s' as process %d on %s (%ux%u)", cfg->argv[0], (int)pid,
		 slave_name, cfg->cols, cfg->rows);
	return 0;
}

/* The session through consoled-session(8): the slave goes to the helper,
 * which checks who we are, starts the configured command on it and says
 * STARTED. Waits for that, so that a helper that is not there or refuses
 * is an error of the start (consoled then exits, and getty takes the VT). */
static int term_request_session(struct term *t, const struct term_config *cfg,
				const char *slave_name)
{
	const char *path = cfg->session_socket;
	_cleanup_(closep) int slave = -1, fd = -1;
	struct pollfd pfd;
	struct session_msg msg;
	size_t len = 0;
	int r, pidfd = -1;

	slave = ioctl(t->master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (slave < 0)
		slave = open(slave_name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (slave < 0)
		return log_error_errno(errno, "Failed to open %s: %m", slave_name);

	fd = session_connect(path);
	if (fd < 0)
		return log_error_errno(fd,
				       "Cannot reach the session helper at %s: %m "
				       "(consoled-session.socket not running?)",
				       path);
	r = session_send_start(fd, slave, cfg->truecolor ? SESSION_FLAG_TRUECOLOR : 0);
	if (r < 0)
		return log_error_errno(r, "Failed to pass %s to the session helper: %m",
				       slave_name);
	/* Only the session keeps the slave open: its last close is the
	 * master's hangup. */
	slave = close_fd(slave);

	pfd = (struct pollfd){.fd = fd, .events = POLLIN};
	do
		r = poll(&pfd, 1, TERM_HELPER_TIMEOUT_MSEC);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return log_error_errno(errno, "Failed to wait for the session helper: %m");
	if (r == 0)
		return log_error_errno(ETIMEDOUT,
				       "The session helper did not start the session within %u s",
				       TERM_HELPER_TIMEOUT_MSEC / 1000);
	r = session_recv_msg(fd, &msg, &len, &pidfd);
	if (r < 0)
		return log_error_errno(r, "Failed to hear from the session helper: %m");
	if (r == 0 || session_msg_check(&msg, len, SESSION_MSG_STARTED) < 0) {
		close_fd(pidfd);
		return log_error_errno(EPERM,
				       "The session helper refused the session or could not start "
				       "it (its log: journalctl -u 'consoled-session@*')");
	}
	if (pidfd < 0)
		log_warning("The session helper sent no pidfd of the session: it cannot be kept "
			    "over a restart of consoled");

	t->helper = fd;
	fd = -1;
	t->helper_pid = (pid_t)msg.value;
	t->pidfd = pidfd;
	log_info("Session on %s started by consoled-session as process %d (%ux%u)", slave_name,
		 (int)msg.value, cfg->cols, cfg->rows);
	return 0;
}

/* The helper says how the session ended, or goes away. */
static int term_on_helper(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct term *t = userdata;
	struct session_msg msg;
	size_t len = 0;
	int r, status = -1, extra = -1;

	(void)s;
	(void)revents;
	r = session_recv_msg(fd, &msg, &len, &extra);
	close_fd(extra);
	if (r == -EAGAIN || r == -EINTR)
		return 0;
	/* the answer to term_activate() */
	if (r > 0 && extra < 0 && session_msg_check(&msg, len, SESSION_MSG_ACTIVATED) == 0) {
		if (msg.value == 0)
			log_debug("The session is the seat's active one");
		else if (msg.value == ENODATA)
			log_debug("The session has no logind session yet: nothing to activate");
		else
			log_warning("The session helper could not make the session the seat's "
				    "active one: %s (its log: journalctl -u 'consoled-session@*')",
				    strerror(msg.value));
		return 0;
	}
	if (r < 0)
		log_warning_errno(r, "Lost the session helper: %m");
	else if (r == 0)
		log_warning("The session helper went away without the session's status");
	else if (session_msg_check(&msg, len, SESSION_MSG_EXITED) < 0)
		log_warning("The session helper sent a bad message; ending the session");
	else
		status = msg.value;
	if (status >= 0)
		log_info("Session exited with status %d", status);

	t->helper_source = sd_event_source_disable_unref(t->helper_source);
	t->helper = close_fd(t->helper);
	term_drain(t);
	if (t->cb.exited)
		t->cb.exited(status, t->userdata);
	return 0;
}

/* The session's leader is gone (a session we did not start: adopted). */
static int term_on_pidfd(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct term *t = userdata;

	(void)s;
	(void)fd;
	(void)revents;
	log_info("The session's process ended");
	t->pidfd_source = sd_event_source_disable_unref(t->pidfd_source);
	term_drain(t);
	if (t->cb.exited)
		t->cb.exited(-1, t->userdata);
	return 0;
}

/* Watches the pty, and the session's end the way we learn of it. */
static int term_watch_session(struct term *t)
{
	int r;

	r = sd_event_add_io(t->event, &t->io_source, t->master, EPOLLIN, term_on_io, t);
	if (r < 0)
		return log_error_errno(r, "Failed to watch the pty: %m");
	if (t->helper >= 0) {
		r = sd_event_add_io(t->event, &t->helper_source, t->helper, EPOLLIN, term_on_helper,
				    t);
		if (r < 0)
			return log_error_errno(r, "Failed to watch the session helper: %m");
		return 0;
	}
	if (t->child > 0) {
		r = sd_event_add_child(t->event, &t->child_source, t->child, WEXITED, term_on_child,
				       t);
		if (r < 0)
			return log_error_errno(r, "Failed to watch the session process: %m");
		return 0;
	}
	/* A pidfd is readable once its process has exited. */
	r = sd_event_add_io(t->event, &t->pidfd_source, t->pidfd, EPOLLIN, term_on_pidfd, t);
	if (r < 0)
		return log_error_errno(r, "Failed to watch the session's process: %m");
	return 0;
}

/* Session restore: takes over a session that a predecessor ran (its pty
 * master and its leader's pidfd) and the screen it showed (the snapshot),
 * at the snapshot's grid, then resizes to ours (SIGWINCH if it differs). On
 * failure nothing of `a` is taken. */
static int term_adopt(struct term *t, const struct term_adopt *a)
{
	unsigned cols = 0, rows = 0;
	int flags, r;

	r = snapshot_restore(a->snapshot, t->screen, t->vte, t->stream, t->clusters, &cols, &rows);
	if (r < 0)
		return r;

	flags = fcntl(a->master, F_GETFL);
	if (flags >= 0 && !(flags & O_NONBLOCK))
		(void)fcntl(a->master, F_SETFL, flags | O_NONBLOCK);
	t->master = a->master;
	t->pidfd = a->pidfd;
	/* With the helper's connection the session's end comes from it, with
	 * its status, and term_activate() works for the adopted session. */
	if (a->helper >= 0) {
		t->helper = a->helper;
		t->helper_pid = a->pid;
	}
	r = term_watch_session(t);
	if (r < 0) {
		t->master = -1;
		t->pidfd = -1;
		t->helper = -1;
		t->helper_pid = 0;
		t->io_source = sd_event_source_disable_unref(t->io_source);
		t->helper_source = sd_event_source_disable_unref(t->helper_source);
		return r;
	}
	log_info("Adopted the session of the last consoled (snapshot of %ux%u)", cols, rows);
	/* its scrollback's lines are as wide as its grid */
	t->sb_cols = MAX(t->sb_cols, cols);
	/* Our grid: libtsm keeps what fits, the session gets SIGWINCH when the
	 * size differs (the kernel sends it only then). */
	term_resize(t, t->cfg.cols, t->cfg.rows, t->cfg.width_px, t->cfg.height_px);
	if (t->cb.damage)
		t->cb.damage(t->userdata);
	return 0;
}

/* Starts the session on a new pty and watches both. */
static int term_start_session(struct term *t)
{
	char slave_name[128];
	int r;

	t->ended = false;
	r = term_open_pty(t, &t->cfg, slave_name, sizeof(slave_name));
	if (r < 0)
		return r;
	if (t->cfg.session_socket)
		r = term_request_session(t, &t->cfg, slave_name);
	else
		r = term_fork_session(t, &t->cfg, slave_name);
	if (r < 0)
		return r;
	return term_watch_session(t);
}

/* Forgets the session: its pty, its watches, what it left to write. */
static void term_end_session(struct term *t)
{
	t->io_source = sd_event_source_disable_unref(t->io_source);
	t->child_source = sd_event_source_disable_unref(t->child_source);
	t->helper_source = sd_event_source_disable_unref(t->helper_source);
	t->pidfd_source = sd_event_source_disable_unref(t->pidfd_source);
	t->recheck_source = sd_event_source_disable_unref(t->recheck_source);
	/* The helper does not end the session when we close the connection:
	 * closing the master does, unless systemd's fd store keeps a copy for
	 * our successor (session restore). */
	t->helper = close_fd(t->helper);
	t->pidfd = close_fd(t->pidfd);
	if (t->child > 0) {
		/* Like a hangup on a real terminal: the session gets SIGHUP. */
		kill(-t->child, SIGHUP);
		kill(t->child, SIGHUP);
		t->child = 0;
	}
	if (t->master >= 0)
		close(t->master);
	t->master = -1;
	t->out_len = 0;
}

int term_new(sd_event *event, const struct term_config *cfg, const struct term_callbacks *cb,
	     void *userdata, struct term **ret)
{
	struct term *t;
	bool palette_ok;
	int r;

	t = xcalloc(1, sizeof(*t));
	t->event = sd_event_ref(event);
	t->sync_drawn = true;
	t->cfg = *cfg;
	t->master = -1;
	t->helper = -1;
	t->pidfd = -1;
	t->cb = *cb;
	t->cfg.adopt = NULL;
	t->userdata = userdata;
	t->clusters = cluster_table_new();
	if (cfg->image_memory)
		t->images = image_store_new(cfg->image_memory);
	r = tsm_screen_new(&t->screen, term_tsm_log, NULL);
	if (r < 0) {
		log_error_errno(r, "Failed to create the terminal screen: %m");
		goto fail;
	}
	term_sb_fit(t, cfg->cols);
	r = tsm_screen_resize(t->screen, cfg->cols, cfg->rows);
	if (r < 0) {
		log_error_errno(r, "Failed to size the terminal to %ux%u: %m", cfg->cols,
				cfg->rows);
		goto fail;
	}
	r = tsm_vte_new(&t->vte, t->screen, term_write_cb, t, term_tsm_log, NULL);
	if (r < 0) {
		log_error_errno(r, "Failed to create the terminal emulator: %m");
		goto fail;
	}
	palette_ok = cfg->palette && term_set_tsm_palette(t, cfg->palette);
	t->stream = stream_new(&(struct stream_config){
	    .vte = t->vte,
	    .screen = t->screen,
	    .table = t->clusters,
	    .images = t->images,
	    .palette = cfg->palette,
	    .reply = term_queue_write,
	    .osc52 = term_stream_osc52,
	    .bell = term_stream_bell,
	    .term_name = t->cfg.term,
	    .cursor = cfg->cursor,
	    .userdata = t,
	});
	term_stream_cell_size(t);
	/* text straight onto the screen only in the colours libtsm has */
	if (!palette_ok)
		stream_set_direct(t->stream, false);

	if (cfg->adopt)
		r = term_adopt(t, cfg->adopt);
	else
		r = term_start_session(t);
	if (r < 0)
		goto fail;

	*ret = t;
	return 0;

fail:
	term_free(t);
	return r;
}

int term_tty_name(const struct term *t, char *buf, size_t size)
{
	char path[64];

	if (t->master < 0 || ptsname_r(t->master, path, sizeof(path)) != 0)
		return -ENOTTY;
	if (strncmp(path, "/dev/", 5) != 0 || strlen(path + 5) >= size)
		return -ENAMETOOLONG;
	strcpy(buf, path + 5);
	return 0;
}

int term_resize(struct term *t, unsigned cols, unsigned rows, unsigned width_px, unsigned height_px)
{
	struct winsize ws = {
	    .ws_col = (unsigned short)cols,
	    .ws_row = (unsigned short)rows,
	    .ws_xpixel = (unsigned short)width_px,
	    .ws_ypixel = (unsigned short)height_px,
	};
	int r;

	/* before the resize: fewer lines to keep when the grid widens */
	term_sb_fit(t, cols);
	r = tsm_screen_resize(t->screen, cols, rows);
	if (r < 0)
		return log_error_errno(r, "Failed to size the terminal to %ux%u: %m", cols, rows);
	t->cfg.cols = cols;
	t->cfg.rows = rows;
	t->cfg.width_px = width_px;
	t->cfg.height_px = height_px;
	term_stream_cell_size(t);
	/* The kernel sends SIGWINCH to the session's foreground group. */
	if (t->master >= 0 && ioctl(t->master, TIOCSWINSZ, &ws) < 0)
		log_warning_errno(errno, "Failed to set the pty's window size: %m");
	return 0;
}

int term_restart(struct term *t)
{
	term_end_session(t);
	/* Nothing the previous user saw stays readable: both screens, the
	 * scrollback and every mode go back to a fresh terminal's. */
	stream_wipe(t->stream);
	term_follow_sync(t);
	if (t->cb.damage)
		t->cb.damage(t->userdata);
	return term_start_session(t);
}

void term_free(struct term *t)
{
	if (!t)
		return;
	term_end_session(t);
	sd_event_source_disable_unref(t->sync_timer);
	tsm_vte_unref(t->vte);
	/* libtsm 4.0.2 frees the scrollback's lines only when asked to */
	if (t->screen)
		tsm_screen_clear_sb(t->screen);
	tsm_screen_unref(t->screen);
	stream_free(t->stream);
	cluster_table_free(t->clusters);
	image_store_free(t->images);
	sd_event_unref(t->event);
	free(t->out);
	free(t);
}

int term_master_fd(struct term *t)
{
	return t->master;
}

int term_activate(struct term *t)
{
	int r;

	if (t->helper < 0 || t->helper_pid <= 0)
		return -ENOTCONN;
	r = session_send_msg(t->helper, SESSION_MSG_ACTIVATE, (int)t->helper_pid, -1);
	if (r < 0)
		return log_warning_errno(r, "Failed to ask the session helper to activate the "
					    "session, ignoring: %m");
	return 0;
}

int term_pidfd(struct term *t)
{
	return t->pidfd;
}

int term_helper_fd(struct term *t)
{
	return t->helper;
}

struct tsm_vte *term_vte(struct term *t)
{
	return t->vte;
}

uint64_t term_bytes_in(const struct term *t)
{
	return t->bytes_in;
}

uint64_t term_lines_in(const struct term *t)
{
	return t->lines_in;
}

uint64_t term_parse_usec(const struct term *t)
{
	return t->parse_usec;
}

struct stream *term_stream(struct term *t)
{
	return t->stream;
}

const struct cluster_table *term_clusters(struct term *t)
{
	return t->clusters;
}

const struct image_store *term_images(struct term *t)
{
	return t->images;
}

const struct term_key_trace *term_key_trace(const struct term *t)
{
	return &t->key;
}

bool term_take_echo_read(struct term *t)
{
	bool echo = t->echo_read;

	t->echo_read = false;
	return echo;
}

void term_key_trace_done(struct term *t)
{
	t->key.pending = false;
}

struct tsm_screen *term_screen(struct term *t)
{
	return t->screen;
}

/* Whether byte c, written to the pty, signals the session's foreground: its
 * line discipline has ISIG and c is VINTR, VQUIT or VSUSP. Asked only for a
 * control character (the termios of the pty, through the master). */
static bool term_signals(struct term *t, unsigned char c)
{
	struct termios tio;

	if (c >= 0x20 || t->master < 0 || tcgetattr(t->master, &tio) < 0 || !(tio.c_lflag & ISIG))
		return false;
	return (c == tio.c_cc[VINTR] || c == tio.c_cc[VQUIT] || c == tio.c_cc[VSUSP]) &&
	       c != _POSIX_VDISABLE;
}

void term_handle_key(struct term *t, uint32_t keysym, uint32_t ascii, unsigned mods,
		     uint32_t unicode, const struct keys_event *ev)
{
	char seq[KEYS_KITTY_MAX];
	uint64_t start = now_usec();
	int k = keys_kitty_encode(keysym, unicode, mods, ev, stream_kitty_flags(t->stream), seq);
	size_t n;

	if (k == 0)
		return; /* a release nobody asked for */
	if (k > 0)
		n = (size_t)k;
	else /* the modes the stream stage followed in what libtsm got */
		n = keys_encode(keysym, mods, stream_key_modes(t->stream), seq);

	/* keys.c sends what libtsm would get wrong (keys.h) */
	t->key_writing = true;
	t->key_len = 0;
	if (n > 0)
		term_write_cb(t->vte, seq, n, t);
	bool sent = n > 0 || tsm_vte_handle_keyboard(t->vte, keysym, ascii, mods, unicode);
	t->key_writing = false;
	if (sent) {
		t->key = (struct term_key_trace){.event_usec = ev ? ev->event_usec : 0,
						 .input_usec = ev ? ev->read_usec : 0,
						 .key_usec = start,
						 .write_usec = now_usec(),
						 .pending = true,
						 .interrupt = t->key_len == 1 &&
							      term_signals(t, t->key_byte)};
		/* Typing brings the view back from the scrollback, as in xterm;
		 * a modifier or a release (kitty protocol) does not, or Shift+
		 * PageUp could not page back under flags 8 or 2. Only that
		 * calls for a frame: the key's echo, if any, comes from the
		 * session, and a frame before it (the whole grid taken from
		 * libtsm for nothing, 2 ms at 160x50 under TCG) would delay
		 * its read. Without tsmpeek's view, every key calls for one. */
		if (!keys_is_modifier(keysym) && !(ev && ev->type == KEYS_RELEASE)) {
			bool back = !tsmpeek_check(t->screen) ||
				    tsmpeek_view_offset(tsmpeek(t->screen)) > 0;

			tsm_screen_sb_reset(t->screen);
			if (back && t->cb.damage)
				t->cb.damage(t->userdata);
		}
	}
}

bool term_sends_releases(struct term *t)
{
	return stream_kitty_flags(t->stream) & STREAM_KITTY_EVENT_TYPES;
}

void term_send(struct term *t, const char *bytes, size_t len)
{
	if (t->master >= 0)
		term_queue_write(bytes, len, t);
}

void term_set_osc52(struct term *t, void (*osc52)(const char *args, size_t len, void *userdata),
		    void *userdata)
{
	t->osc52 = osc52;
	t->osc52_userdata = userdata;
}

void term_set_bell(struct term *t, void (*bell)(unsigned count, void *userdata), void *userdata)
{
	t->bell = bell;
	t->bell_userdata = userdata;
}

void term_redraw(struct term *t)
{
	if (t->cb.damage)
		t->cb.damage(t->userdata);
}

void term_scroll_page(struct term *t, int dir)
{
	if (dir < 0)
		tsm_screen_sb_page_up(t->screen, 1);
	else
		tsm_screen_sb_page_down(t->screen, 1);
	if (t->cb.damage)
		t->cb.damage(t->userdata);
}
