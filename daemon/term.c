/* SPDX-License-Identifier: GPL-2.0-or-later */

#define LOG_MODULE "term"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#if defined(__i386__) || defined(__x86_64__)
#include <sys/io.h>
#endif
#include <unistd.h>

#include "cluster.h"
#include "log.h"
#include "term.h"
#include "util/util.h"

#define TERM_READ_SIZE (64 * 1024)

struct term {
	sd_event *event;
	struct term_config cfg;
	struct tsm_screen *screen;
	struct tsm_vte *vte;
	int master;
	pid_t child;
	sd_event_source *io_source, *child_source;
	struct term_callbacks cb;
	void *userdata;

	/* Combining marks joined to their base before libtsm (cluster.h). */
	struct cluster_filter filter;

	/* Bytes for the pty that did not fit (the session is not reading). */
	char *out;
	size_t out_len, out_cap;
};

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

static void term_write_cb(struct tsm_vte *vte, const char *u8, size_t len, void *data)
{
	struct term *t = data;

	(void)vte;
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

static int term_on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct term *t = userdata;
	char buf[TERM_READ_SIZE], joined[CLUSTER_FILTER_OUT(TERM_READ_SIZE)];

	(void)s;
	if (revents & EPOLLOUT)
		term_flush(t);
	if (revents & (EPOLLIN | EPOLLHUP)) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n > 0) {
			size_t m = cluster_filter_feed(&t->filter, buf, (size_t)n, joined);

			tsm_vte_input(t->vte, joined, m);
			if (t->cb.damage)
				t->cb.damage(t->userdata);
		} else if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			/* EIO: every slave fd is closed. The child's exit ends us;
			 * stop polling a fd that stays readable. */
			sd_event_source_set_enabled(t->io_source, SD_EVENT_OFF);
		}
	}
	return 0;
}

static int term_on_child(sd_event_source *s, const siginfo_t *si, void *userdata)
{
	struct term *t = userdata;
	int status = si->si_code == CLD_EXITED ? si->si_status : 128 + si->si_status;

	(void)s;
	log_info("Session process %d exited with status %d", (int)t->child, status);
	t->child = 0;
	if (t->cb.exited)
		t->cb.exited(status, t->userdata);
	return 0;
}

static void child_close_fds(void)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3u, ~0u, 0u) == 0)
		return;
#endif
	for (int fd = 3; fd < 65536; fd++)
		close(fd);
}

/* The daemon's I/O port access (the cirrus plugin's ioperm(), taken after the
 * first session was forked) survives fork and exec: the session must start
 * with none. Lowering needs no privilege; failing to is fatal for the child. */
static int child_drop_io_permissions(void)
{
#if defined(__i386__) || defined(__x86_64__)
	if (iopl(0) < 0 && errno != ENOSYS)
		return -errno;
	if (ioperm(0, 65536, 0) < 0 && errno != ENOSYS)
		return -errno;
#endif
	return 0;
}

/* Locale and time zone settings pass from the daemon's environment (systemd
 * gives services the system locale); nothing else of it does. */
static bool term_env_passes(const char *entry)
{
	static const char *const names[] = {"LANG=", "LANGUAGE=", "TZ="};

	if (strncmp(entry, "LC_", 3) == 0 && strchr(entry, '='))
		return true;
	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		if (strncmp(entry, names[i], strlen(names[i])) == 0)
			return true;
	return false;
}

/* The session's environment, built from nothing (consoled(8), ENVIRONMENT):
 * TERM, COLORTERM at 15 bpp and deeper, XDG_SEAT and XDG_VTNR for
 * pam_systemd, a fixed PATH, and the daemon's locale and time zone. Nothing
 * of the daemon's own (NOTIFY_SOCKET, WATCHDOG_*, JOURNAL_STREAM,
 * CONSOLED_*, ...) reaches `login -p` and so the user. */
size_t term_session_env(const struct term_config *cfg, char *const *daemon_env, char **ret,
			size_t max, char *scratch, size_t scratch_size)
{
	size_t n = 0, used = 0;

#define ADD(...)                                                                                   \
	do {                                                                                       \
		int len_ = snprintf(scratch + used, scratch_size - used, __VA_ARGS__);             \
		if (len_ >= 0 && (size_t)len_ < scratch_size - used && n + 1 < max) {             \
			ret[n++] = scratch + used;                                                 \
			used += (size_t)len_ + 1;                                                  \
		}                                                                                  \
	} while (0)

	ADD("TERM=%s", cfg->term);
	/* 24-bit colours are shown as they are only at 15 bpp and deeper; at
	 * 8 bpp they take the nearest colour map entry, so do not promise them. */
	if (cfg->truecolor)
		ADD("COLORTERM=truecolor");
	ADD("PATH=%s", TERM_SESSION_PATH);
	/* pam_systemd registers a local seat session from these. */
	if (cfg->vt) {
		ADD("XDG_SEAT=seat0");
		ADD("XDG_VTNR=%u", cfg->vt);
	}
	for (char *const *e = daemon_env; e && *e; e++)
		if (term_env_passes(*e))
			ADD("%s", *e);
#undef ADD
	ret[n] = NULL;
	return n;
}

/* Runs in the forked child; never returns. */
static void term_exec_child(const char *slave_name, const struct term_config *cfg)
{
	static char scratch[8192];
	char *envp[64];
	sigset_t none;
	int fd;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	if (child_drop_io_permissions() < 0)
		_exit(127);

	if (setsid() < 0)
		_exit(127);
	/* Opening the slave as a session leader without a controlling tty
	 * makes it ours; TIOCSCTTY says so explicitly. */
	fd = open(slave_name, O_RDWR);
	if (fd < 0)
		_exit(127);
	ioctl(fd, TIOCSCTTY, 0);
	if (dup2(fd, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
		_exit(127);
	child_close_fds();

	term_session_env(cfg, environ, envp, ELEMENTSOF(envp), scratch, sizeof(scratch));
	execvpe(cfg->argv[0], cfg->argv, envp);
	fprintf(stderr, "consoled: failed to run %s: %s\n", cfg->argv[0], strerror(errno));
	_exit(127);
}

static int term_spawn(struct term *t, const struct term_config *cfg)
{
	struct winsize ws = {
	    .ws_col = (unsigned short)cfg->cols,
	    .ws_row = (unsigned short)cfg->rows,
	    .ws_xpixel = (unsigned short)cfg->width_px,
	    .ws_ypixel = (unsigned short)cfg->height_px,
	};
	struct termios tio;
	char slave_name[128];
	pid_t pid;

	t->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	if (t->master < 0)
		return log_error_errno(errno, "Failed to open a pty: %m");
	if (grantpt(t->master) < 0 || unlockpt(t->master) < 0 ||
	    ptsname_r(t->master, slave_name, sizeof(slave_name)) != 0)
		return log_error_errno(errno, "Failed to set up the pty: %m");
	if (ioctl(t->master, TIOCSWINSZ, &ws) < 0)
		log_warning_errno(errno, "Failed to set the pty's window size: %m");
	if (tcgetattr(t->master, &tio) == 0) {
		tio.c_iflag |= IUTF8;
		tcsetattr(t->master, TCSANOW, &tio);
	}

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

/* Starts the session on a new pty and watches both. */
static int term_start_session(struct term *t)
{
	int r;

	r = term_spawn(t, &t->cfg);
	if (r < 0)
		return r;
	r = sd_event_add_io(t->event, &t->io_source, t->master, EPOLLIN, term_on_io, t);
	if (r < 0)
		return log_error_errno(r, "Failed to watch the pty: %m");
	r = sd_event_add_child(t->event, &t->child_source, t->child, WEXITED, term_on_child, t);
	if (r < 0)
		return log_error_errno(r, "Failed to watch the session process: %m");
	return 0;
}

/* Forgets the session: its pty, its watches, what it left to write. */
static void term_end_session(struct term *t)
{
	t->io_source = sd_event_source_disable_unref(t->io_source);
	t->child_source = sd_event_source_disable_unref(t->child_source);
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
	int r;

	t = xcalloc(1, sizeof(*t));
	t->event = sd_event_ref(event);
	t->cfg = *cfg;
	t->master = -1;
	t->cb = *cb;
	t->userdata = userdata;
	t->filter.table = cluster_table_new();

	r = tsm_screen_new(&t->screen, term_tsm_log, NULL);
	if (r < 0) {
		log_error_errno(r, "Failed to create the terminal screen: %m");
		goto fail;
	}
	tsm_screen_set_max_sb(t->screen, cfg->sb_size);
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

	r = term_start_session(t);
	if (r < 0)
		goto fail;

	*ret = t;
	return 0;

fail:
	term_free(t);
	return r;
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

	r = tsm_screen_resize(t->screen, cols, rows);
	if (r < 0)
		return log_error_errno(r, "Failed to size the terminal to %ux%u: %m", cols, rows);
	t->cfg.cols = cols;
	t->cfg.rows = rows;
	t->cfg.width_px = width_px;
	t->cfg.height_px = height_px;
	/* The kernel sends SIGWINCH to the session's foreground group. */
	if (t->master >= 0 && ioctl(t->master, TIOCSWINSZ, &ws) < 0)
		log_warning_errno(errno, "Failed to set the pty's window size: %m");
	return 0;
}

int term_restart(struct term *t)
{
	term_end_session(t);
	/* Nothing the previous user saw stays readable: the screen, the
	 * scrollback and every mode go back to a fresh terminal's. */
	tsm_vte_hard_reset(t->vte);
	cluster_filter_reset(&t->filter);
	tsm_screen_clear_sb(t->screen);
	tsm_screen_erase_screen(t->screen, false);
	/* no stand-in is left on the screen or in the scrollback */
	cluster_table_reset(t->filter.table);
	tsm_screen_move_to(t->screen, 0, 0);
	if (t->cb.damage)
		t->cb.damage(t->userdata);
	return term_start_session(t);
}

void term_free(struct term *t)
{
	if (!t)
		return;
	term_end_session(t);
	tsm_vte_unref(t->vte);
	/* libtsm 4.0.2 frees the scrollback's lines only when asked to */
	if (t->screen)
		tsm_screen_clear_sb(t->screen);
	tsm_screen_unref(t->screen);
	cluster_filter_fini(&t->filter);
	cluster_table_free(t->filter.table);
	sd_event_unref(t->event);
	free(t->out);
	free(t);
}

const struct cluster_table *term_clusters(struct term *t)
{
	return t->filter.table;
}

struct tsm_screen *term_screen(struct term *t)
{
	return t->screen;
}

void term_handle_key(struct term *t, uint32_t keysym, uint32_t ascii, unsigned mods,
		     uint32_t unicode)
{
	if (tsm_vte_handle_keyboard(t->vte, keysym, ascii, mods, unicode)) {
		/* Typing brings the view back from the scrollback, as in xterm. */
		tsm_screen_sb_reset(t->screen);
		if (t->cb.damage)
			t->cb.damage(t->userdata);
	}
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
