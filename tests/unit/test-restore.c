/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Session restore without systemd: what restore.c takes from the fd store
 * (LISTEN_FDS, LISTEN_FDNAMES as PID 1 sets them) and tells it (a datagram
 * socket as NOTIFY_SOCKET stands in for PID 1's), and term.c adopting a real
 * session: a process on a real pty, its pidfd and a snapshot of a real
 * terminal. The session's end is seen through the pidfd, keys reach it, its
 * output is shown, and a session that is not adopted is hung up.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>
#include <xkbcommon/xkbcommon-keysyms.h>

#include "../../daemon/terminal/restore.h"
#include "../../daemon/session/session.h"
#include "../../daemon/terminal/snapshot.h"
#include "../../daemon/terminal/term.h"
#include "../../daemon/util/util.h"
#include "test-stream-fake.h"

static int notify_fd = -1;
/* The last fd the stand-in notify socket got (the others are closed). */
static int notify_last_fd = -1;
static char notify_dir[] = "/tmp/test-restore-XXXXXX";

/* What "PID 1" got since the last call: the messages joined by '|', and
 * how many fds came (closed). */
static void notify_read(char *buf, size_t size, unsigned *ret_fds)
{
	size_t used = 0;

	buf[0] = '\0';
	*ret_fds = 0;
	for (;;) {
		char msg[512];
		union {
			struct cmsghdr hdr;
			char buf[CMSG_SPACE(sizeof(int) * 8)];
		} control;
		struct iovec iov = {.iov_base = msg, .iov_len = sizeof(msg) - 1};
		struct msghdr mh = {.msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = control.buf,
				    .msg_controllen = sizeof(control.buf)};
		ssize_t n = recvmsg(notify_fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

		if (n < 0)
			break;
		msg[n] = '\0';
		for (char *p = msg; *p; p++)
			if (*p == '\n')
				*p = ',';
		used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? "|" : "", msg);
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t i = 0; i < k; i++) {
				int fd;
				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				if (notify_last_fd >= 0)
					close(notify_last_fd);
				notify_last_fd = fd;
				(*ret_fds)++;
			}
		}
	}
}

static void notify_setup(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	CHECK(mkdtemp(notify_dir) != NULL);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/notify", notify_dir);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CHECK(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	/* far from 3.., where the store's fds go */
	notify_fd = fcntl(fd, F_DUPFD_CLOEXEC, 100);
	close(fd);
	setenv("NOTIFY_SOCKET", sa.sun_path, 1);
}

static void notify_teardown(void)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/notify", notify_dir);
	unlink(path);
	rmdir(notify_dir);
	close(notify_fd);
	unsetenv("NOTIFY_SOCKET");
}

/* A session as consoled-session starts one: a child that leads its own
 * session on the pty's slave. It answers one line with "got:LINE" and
 * exits with status 3. */
static pid_t session_start(int *ret_master)
{
	char name[64];
	int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	pid_t pid;

	CHECK(master >= 0);
	CHECK(grantpt(master) == 0 && unlockpt(master) == 0);
	CHECK(ptsname_r(master, name, sizeof(name)) == 0);
	pid = fork();
	if (pid == 0) {
		char line[64], out[80];
		size_t n = 0;
		int fd;

		signal(SIGHUP, SIG_DFL);
		setsid();
		fd = open(name, O_RDWR);
		if (fd < 0 || ioctl(fd, TIOCSCTTY, 0) < 0)
			_exit(120);
		/* none of the test's fds (masters, pidfds) stays open here */
		if (dup2(fd, 0) < 0)
			_exit(122);
		syscall(SYS_close_range, 1u, ~0u, 0u);
		fd = 0;
		(void)!write(fd, "ready\r\n", 7);
		while (n < sizeof(line) - 1) {
			ssize_t k = read(fd, line + n, 1);
			if (k <= 0)
				_exit(121);
			if (line[n] == '\r' || line[n] == '\n')
				break;
			n++;
		}
		line[n] = '\0';
		snprintf(out, sizeof(out), "got:%s\r\n", line);
		(void)!write(fd, out, strlen(out));
		tcdrain(fd);
		_exit(3);
	}
	CHECK(pid > 0);
	/* wait for it to be on the pty (its line comes through the master) */
	{
		char buf[16];
		struct pollfd pfd = {.fd = master, .events = POLLIN};
		CHECK(poll(&pfd, 1, 5000) == 1);
		CHECK(read(master, buf, sizeof(buf)) > 0);
	}
	*ret_master = master;
	return pid;
}

/* The memfd of a snapshot of a terminal of cols x rows that shows `text`,
 * away from the fds handed over. */
static int snapshot_of(const char *text, unsigned cols, unsigned rows)
{
	struct fake_term f;
	struct snapshot *s = NULL;
	int fd;

	fake_term_init(&f, cols, rows);
	fake_feed(&f, text);
	CHECK(snapshot_new(100, &s) == 0);
	CHECK(snapshot_update(s, f.screen, f.stream, f.table) == 0);
	fake_term_fini(&f);
	fd = fcntl(snapshot_fd(s), F_DUPFD_CLOEXEC, 50);
	snapshot_free(s);
	return fd;
}

/* Puts fds at 3, 4, ... with LISTEN_* naming them, as PID 1 does. */
static void hand_over(const int *fds, const char *const *names, unsigned n)
{
	char buf[256] = "", pid[32];
	int high[16];

	for (unsigned i = 0; i < n; i++)
		high[i] = fcntl(fds[i], F_DUPFD, 200);
	for (unsigned i = 0; i < n; i++)
		close(fds[i]);
	for (unsigned i = 0; i < n; i++) {
		CHECK(dup2(high[i], 3 + (int)i) == 3 + (int)i);
		close(high[i]);
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", i ? ":" : "",
			 names[i]);
	}
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("LISTEN_PID", pid, 1);
	snprintf(pid, sizeof(pid), "%u", n);
	setenv("LISTEN_FDS", pid, 1);
	setenv("LISTEN_FDNAMES", buf, 1);
}

static bool fd_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

struct events {
	int exited, status;
	bool damaged;
};

static void on_damage(void *userdata)
{
	((struct events *)userdata)->damaged = true;
}

static void on_exited(int status, void *userdata)
{
	struct events *e = userdata;

	e->exited++;
	e->status = status;
}

static char screen_text[30][101];

static int draw_cell(struct tsm_screen *con, uint64_t id, const uint32_t *ch, size_t len,
		     unsigned width, unsigned posx, unsigned posy,
		     const struct tsm_screen_attr *attr, tsm_age_t age, void *data)
{
	(void)con, (void)id, (void)width, (void)attr, (void)age, (void)data;
	if (posx < 100 && posy < 30)
		screen_text[posy][posx] = len && ch[0] < 128 && ch[0] >= 32 ? (char)ch[0] : ' ';
	return 0;
}

static const char *row(struct term *t, unsigned y)
{
	memset(screen_text, ' ', sizeof(screen_text));
	for (unsigned i = 0; i < 30; i++)
		screen_text[i][100] = '\0';
	tsm_screen_draw(term_screen(t), draw_cell, NULL);
	for (int x = 99; x >= 0 && screen_text[y][x] == ' '; x--)
		screen_text[y][x] = '\0';
	return screen_text[y];
}

/* Whether the snapshot in fd, restored into a fresh terminal, shows text
 * anywhere on its screen (a snapshot that is refused shows nothing). */
static bool snapshot_shows(int fd, const char *text)
{
	struct fake_term f;
	bool found = false;

	memset(screen_text, ' ', sizeof(screen_text));
	fake_term_init(&f, 100, 30);
	if (snapshot_restore(fd, f.screen, f.vte, f.stream, f.table, NULL, NULL) == 0) {
		tsm_screen_draw(f.screen, draw_cell, NULL);
		for (unsigned y = 0; y < 30; y++) {
			screen_text[y][100] = '\0';
			found = found || strstr(screen_text[y], text);
		}
	}
	fake_term_fini(&f);
	return found;
}

/* The whole way: handed over, adopted at another grid, keys in, output out,
 * the end through the pidfd; the fd store told what it keeps. */
static void test_adopt(void)
{
	static const char *const names[] = {"pty", "pidfd", "snapshot", "bogus"};
	int snap = snapshot_of("hello\r\nworld", 80, 24);
	struct restore *r = NULL;
	struct term_adopt a;
	struct term *t = NULL;
	struct events ev = {};
	struct winsize ws = {};
	sd_event *event = NULL;
	char got[1024];
	unsigned n_fds;
	int master, fds[4], status, e;
	pid_t pid = session_start(&master);

	fds[0] = master;
	fds[1] = session_pidfd_open(pid);
	fds[2] = snap;
	fds[3] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	CHECK(fds[1] >= 0);
	hand_over(fds, names, 4);

	restore_new(&(struct restore_config){.enabled = true, .store = true, .sb_size = 100}, &r);
	CHECK(getenv("LISTEN_FDS") == NULL);
	notify_read(got, sizeof(got), &n_fds);
	CHECK(strcmp(got, "FDSTOREREMOVE=1,FDNAME=bogus") == 0);
	CHECK(!fd_open(6));
	CHECK(restore_handed(r, &a));
	CHECK(a.master == 3 && a.pidfd == 4 && a.snapshot == 5);

	CHECK(sd_event_new(&event) >= 0);
	e = term_new(event,
		     &(struct term_config){.cols = 100,
					   .rows = 30,
					   .width_px = 800,
					   .height_px = 480,
					   .term = "xterm",
					   .sb_size = 100,
					   .adopt = &a},
		     &(struct term_callbacks){on_damage, on_exited}, &ev, &t);
	CHECK(e == 0);
	if (e < 0)
		return;
	restore_handed_done(r, true, 0);
	CHECK(!fd_open(5)); /* the handed snapshot is read and closed */
	CHECK(fd_open(3) && fd_open(4));
	CHECK(term_master_fd(t) == 3 && term_pidfd(t) == 4);
	/* the screen as the snapshot had it, at our grid; the pty too */
	CHECK(tsm_screen_get_width(term_screen(t)) == 100);
	CHECK(tsm_screen_get_height(term_screen(t)) == 30);
	CHECK(strcmp(row(t, 0), "hello") == 0);
	CHECK(strcmp(row(t, 1), "world") == 0);
	CHECK(ioctl(3, TIOCGWINSZ, &ws) == 0 && ws.ws_col == 100 && ws.ws_row == 30);
	CHECK(ev.damaged);

	/* our snapshot replaces the handed one in the store, written first */
	restore_session_started(r, t);
	notify_read(got, sizeof(got), &n_fds);
	CHECK(strcmp(got, "FDSTOREREMOVE=1,FDNAME=snapshot|FDSTORE=1,FDNAME=snapshot") == 0);
	CHECK(n_fds == 1);

	/* keys reach the session, its answer is shown, its end is seen */
	term_handle_key(t, XKB_KEY_o, 'o', 0, 'o', NULL);
	term_handle_key(t, XKB_KEY_k, 'k', 0, 'k', NULL);
	term_handle_key(t, XKB_KEY_Return, '\r', 0, '\r', NULL);
	for (int i = 0; i < 500 && !ev.exited; i++)
		sd_event_run(event, 10 * 1000);
	CHECK(ev.exited == 1 && ev.status == -1);
	CHECK(strstr(row(t, 2), "got:ok") || strstr(row(t, 1), "got:ok"));
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 3);
	{
		/* What is left of the session (a process that still has the
		 * tty) is no longer read after its end, nor written to: its
		 * output (an OSC 52 after the selection was wiped) cannot
		 * reach the next user, nor keys typed before the next login
		 * reach it. */
		int slave = open(ptsname(3), O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
		char late[64];

		struct termios raw;

		CHECK(slave >= 0);
		/* bytes readable one by one, not in lines */
		CHECK(tcgetattr(slave, &raw) == 0);
		cfmakeraw(&raw);
		CHECK(tcsetattr(slave, TCSANOW, &raw) == 0);
		CHECK(write(slave, "late-output", 11) == 11);
		ev.damaged = false;
		/* past the pty's hangup recheck (100 ms) */
		for (uint64_t end = now_usec() + 400 * 1000; now_usec() < end;)
			sd_event_run(event, 10 * 1000);
		CHECK(!ev.damaged);
		for (unsigned y = 0; y < 30; y++)
			CHECK(!strstr(row(t, y), "late-output"));
		term_handle_key(t, XKB_KEY_x, 'x', 0, 'x', NULL);
		term_send(t, "\033[<0;1;1M", 10);
		for (uint64_t end = now_usec() + 400 * 1000; now_usec() < end;)
			sd_event_run(event, 10 * 1000);
		CHECK(read(slave, late, sizeof(late)) < 0 && errno == EAGAIN);
		close(slave);
	}

	/* the stored snapshot is the live one */
	restore_update(r, t);
	CHECK(notify_last_fd >= 0 && snapshot_shows(notify_last_fd, "got:ok"));

	restore_session_ended(r);
	notify_read(got, sizeof(got), &n_fds);
	CHECK(strcmp(got, "FDSTOREREMOVE=1,FDNAME=pty|FDSTOREREMOVE=1,FDNAME=pidfd|"
			  "FDSTOREREMOVE=1,FDNAME=snapshot|FDSTOREREMOVE=1,FDNAME=helper") == 0);
	/* Frames after the session's end still show its screen (the new
	 * session starts later): none of it goes into the snapshot, which the
	 * next session's start stores again. */
	restore_update(r, t);
	CHECK(!snapshot_shows(notify_last_fd, "got:ok"));
	CHECK(!snapshot_shows(notify_last_fd, "world"));
	close(notify_last_fd);
	notify_last_fd = -1;
	term_free(t);
	CHECK(!fd_open(3) && !fd_open(4));
	restore_free(r);
	sd_event_unref(event);
}

/* A session that ended while no consoled ran, a corrupt snapshot, an
 * incomplete set, session restore off: never adopted; what was handed over
 * is closed (a session still up gets SIGHUP) and leaves the store. */
static void test_refused(void)
{
	static const char *const names[] = {"pty", "pidfd", "snapshot"};
	int snap = snapshot_of("x", 80, 24);
	struct restore *r = NULL;
	struct term_adopt a;
	char got[1024];
	unsigned n_fds;
	int master, fds[3], status, zero, e;
	pid_t pid;

	/* ended */
	pid = session_start(&master);
	fds[0] = master;
	fds[1] = session_pidfd_open(pid);
	fds[2] = dup(snap);
	kill(pid, SIGKILL);
	CHECK(waitpid(pid, &status, 0) == pid);
	hand_over(fds, names, 3);
	restore_new(&(struct restore_config){.enabled = true, .store = true, .sb_size = 100}, &r);
	CHECK(!restore_handed(r, &a));
	CHECK(!fd_open(3) && !fd_open(4) && !fd_open(5));
	notify_read(got, sizeof(got), &n_fds);
	CHECK(strcmp(got, "FDSTOREREMOVE=1,FDNAME=pty|FDSTOREREMOVE=1,FDNAME=pidfd|"
			  "FDSTOREREMOVE=1,FDNAME=snapshot|FDSTOREREMOVE=1,FDNAME=helper") == 0);
	restore_free(r);

	/* a corrupt snapshot: the session is hung up */
	pid = session_start(&master);
	fds[0] = master;
	fds[1] = session_pidfd_open(pid);
	fds[2] = open(notify_dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	CHECK(fds[2] >= 0);
	zero = 0;
	for (int i = 0; i < 64; i++)
		CHECK(write(fds[2], &zero, sizeof(zero)) == sizeof(zero));
	hand_over(fds, names, 3);
	restore_new(&(struct restore_config){.enabled = true, .store = true, .sb_size = 100}, &r);
	CHECK(restore_handed(r, &a));
	{
		sd_event *event = NULL;
		struct term *t = NULL;
		struct events ev = {};

		CHECK(sd_event_new(&event) >= 0);
		e = term_new(
		    event,
		    &(struct term_config){
			.cols = 80, .rows = 24, .term = "xterm", .sb_size = 100, .adopt = &a},
		    &(struct term_callbacks){on_damage, on_exited}, &ev, &t);
		CHECK(e == -EBADMSG || e == -EPROTONOSUPPORT);
		CHECK(!t);
		/* nothing taken */
		CHECK(fd_open(3) && fd_open(4) && fd_open(5));
		restore_handed_done(r, false, e);
		sd_event_unref(event);
	}
	CHECK(!fd_open(3) && !fd_open(4) && !fd_open(5));
	notify_read(got, sizeof(got), &n_fds);
	CHECK(strstr(got, "FDSTOREREMOVE=1,FDNAME=pty") != NULL);
	CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGHUP);
	restore_free(r);

	/* incomplete (no pidfd) */
	pid = session_start(&master);
	fds[0] = master;
	fds[1] = dup(snap);
	hand_over(fds, (const char *const[]){"pty", "snapshot"}, 2);
	restore_new(&(struct restore_config){.enabled = true, .store = true, .sb_size = 100}, &r);
	CHECK(!restore_handed(r, &a));
	CHECK(!fd_open(3) && !fd_open(4));
	CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGHUP);
	notify_read(got, sizeof(got), &n_fds);
	restore_free(r);

	/* session restore off: closed and removed by name, all of them */
	pid = session_start(&master);
	fds[0] = master;
	fds[1] = session_pidfd_open(pid);
	fds[2] = dup(snap);
	hand_over(fds, names, 3);
	restore_new(&(struct restore_config){.enabled = false, .store = false, .sb_size = 100}, &r);
	CHECK(!restore_handed(r, &a));
	CHECK(!restore_active(r));
	CHECK(!fd_open(3) && !fd_open(4) && !fd_open(5));
	notify_read(got, sizeof(got), &n_fds);
	CHECK(strcmp(got, "FDSTOREREMOVE=1,FDNAME=pty|FDSTOREREMOVE=1,FDNAME=pidfd|"
			  "FDSTOREREMOVE=1,FDNAME=snapshot") == 0);
	CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGHUP);
	restore_free(r);
	close(snap);
}

/* A seat's terminals: each takes its own names from what is handed over
 * ("pty" terminal 1's, "pty.2" terminal 2's), a name of no terminal (a
 * leading zero, beyond RESTORE_SLOTS_MAX) is closed at once, one of a
 * terminal that takes nothing (terminals= lowered) by
 * restore_drop_unclaimed(); a terminal's fds leave the store by its names. */
static void test_slots(void)
{
	static const char *const names[] = {"pty.2",	"pidfd.2", "snapshot.2", "pty",	  "pidfd",
					    "snapshot", "pty.5",   "pty.02",	 "pty.13"};
	int snap = snapshot_of("x", 80, 24);
	struct restore *r1 = NULL, *r2 = NULL;
	struct term_adopt a;
	char got[1024];
	unsigned n_fds;
	int m1, m2, fds[9], status;
	pid_t p1 = session_start(&m1), p2 = session_start(&m2);

	fds[0] = m2;
	fds[1] = session_pidfd_open(p2);
	fds[2] = dup(snap);
	fds[3] = m1;
	fds[4] = session_pidfd_open(p1);
	fds[5] = dup(snap);
	for (int i = 6; i < 9; i++)
		fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	hand_over(fds, names, 9);

	restore_new(&(struct restore_config){.enabled = true, .store = true, .sb_size = 100}, &r1);
	notify_read(got, sizeof(got), &n_fds);
	CHECK(strcmp(got, "FDSTOREREMOVE=1,FDNAME=pty.02|FDSTOREREMOVE=1,FDNAME=pty.13") == 0);
	CHECK(!fd_open(10) && !fd_open(11));
	CHECK(restore_handed(r1, &a));
	CHECK(a.master == 6 && a.pidfd == 7 && a.snapshot == 8);
	CHECK(restore_stored(2) && restore_stored(5) && !restore_stored(1) && !restore_stored(3));

	restore_new(
	    &(struct restore_config){.enabled = true, .store = true, .sb_size = 100, .slot = 2},
	    &r2);
	CHECK(restore_handed(r2, &a));
	CHECK(a.master == 3 && a.pidfd == 4 && a.snapshot == 5);
	CHECK(!restore_stored(2) && restore_stored(5));

	restore_drop_unclaimed();
	CHECK(!fd_open(9) && !restore_stored(5));
	notify_read(got, sizeof(got), &n_fds);
	CHECK(strcmp(got, "FDSTOREREMOVE=1,FDNAME=pty.5") == 0);

	/* refused: terminal 2's session is hung up and leaves the store by its
	 * names, terminal 1's is left alone */
	restore_handed_done(r2, false, -EBADMSG);
	CHECK(!fd_open(3) && !fd_open(4) && !fd_open(5));
	CHECK(fd_open(6) && fd_open(7) && fd_open(8));
	notify_read(got, sizeof(got), &n_fds);
	CHECK(strcmp(got,
		     "FDSTOREREMOVE=1,FDNAME=pty.2|FDSTOREREMOVE=1,FDNAME=pidfd.2|"
		     "FDSTOREREMOVE=1,FDNAME=snapshot.2|FDSTOREREMOVE=1,FDNAME=helper.2") == 0);
	CHECK(waitpid(p2, &status, 0) == p2 && WIFSIGNALED(status) && WTERMSIG(status) == SIGHUP);
	restore_handed_done(r1, false, -EBADMSG);
	notify_read(got, sizeof(got), &n_fds);
	CHECK(strcmp(got, "FDSTOREREMOVE=1,FDNAME=pty|FDSTOREREMOVE=1,FDNAME=pidfd|"
			  "FDSTOREREMOVE=1,FDNAME=snapshot|FDSTOREREMOVE=1,FDNAME=helper") == 0);
	CHECK(waitpid(p1, &status, 0) == p1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGHUP);
	restore_free(r1);
	restore_free(r2);
	close(snap);
}

/* A term of 80x24 that adopts a. */
static struct term *adopt_80x24(sd_event *event, const struct term_adopt *a, struct events *ev)
{
	struct term *t = NULL;

	CHECK(term_new(event,
		       &(struct term_config){.cols = 80,
					     .rows = 24,
					     .width_px = 640,
					     .height_px = 384,
					     .term = "xterm",
					     .sb_size = 100,
					     .adopt = a},
		       &(struct term_callbacks){on_damage, on_exited}, ev, &t) == 0);
	return t;
}

/* The connection to consoled-session comes back with the session: the
 * adopted term asks it for the session's activation (ACTIVATE with the
 * leader's pid) and hears the exit status from it; a session started through
 * a helper stores it; a "helper" that is no socket is closed and the session
 * is adopted without it. */
static void test_adopt_helper(void)
{
	static const char *const names[] = {"pty", "pidfd", "snapshot", "helper"};
	struct restore *r = NULL;
	struct term_adopt a;
	struct term *t = NULL;
	struct events ev = {};
	struct session_msg msg;
	sd_event *event = NULL;
	char got[1024];
	unsigned n_fds;
	size_t len = 0;
	int master, fds[4], sp[2], extra = -1, status;
	pid_t pid = session_start(&master);

	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0);
	/* the helper's end away from 3.., where the store's fds go */
	{
		int high = fcntl(sp[1], F_DUPFD_CLOEXEC, 60);

		close(sp[1]);
		sp[1] = high;
	}
	fds[0] = master;
	fds[1] = session_pidfd_open(pid);
	fds[2] = snapshot_of("adopted", 80, 24);
	fds[3] = sp[0];
	hand_over(fds, names, 4);
	restore_new(&(struct restore_config){.enabled = true, .store = true, .sb_size = 100}, &r);
	notify_read(got, sizeof(got), &n_fds);
	CHECK(got[0] == '\0');
	CHECK(restore_handed(r, &a));
	CHECK(a.helper == 6 && a.pid == pid);
	CHECK(sd_event_new(&event) >= 0);
	t = adopt_80x24(event, &a, &ev);
	restore_handed_done(r, true, 0);
	CHECK(term_helper_fd(t) == 6);
	/* the snapshot is replaced; the helper's connection stays stored */
	restore_session_started(r, t);
	notify_read(got, sizeof(got), &n_fds);
	CHECK(strcmp(got, "FDSTOREREMOVE=1,FDNAME=snapshot|FDSTORE=1,FDNAME=snapshot") == 0);

	/* ACTIVATE reaches the helper with the session leader's pid */
	CHECK(term_activate(t) == 0);
	{
		struct pollfd pfd = {.fd = sp[1], .events = POLLIN};
		CHECK(poll(&pfd, 1, 2000) == 1);
	}
	CHECK(session_recv_msg(sp[1], &msg, &len, &extra) == 1);
	CHECK(session_msg_check(&msg, len, SESSION_MSG_ACTIVATE) == 0 && msg.value == pid);
	/* its answer is only logged; the exit status comes from the helper */
	CHECK(session_send_msg(sp[1], SESSION_MSG_ACTIVATED, 0, -1) == 0);
	kill(pid, SIGKILL);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(session_send_msg(sp[1], SESSION_MSG_EXITED, 7, -1) == 0);
	for (int i = 0; i < 200 && !ev.exited; i++)
		sd_event_run(event, 10 * 1000);
	CHECK(ev.exited == 1 && ev.status == 7);
	restore_session_ended(r);
	notify_read(got, sizeof(got), &n_fds);
	CHECK(strcmp(got, "FDSTOREREMOVE=1,FDNAME=pty|FDSTOREREMOVE=1,FDNAME=pidfd|"
			  "FDSTOREREMOVE=1,FDNAME=snapshot|FDSTOREREMOVE=1,FDNAME=helper") == 0);
	if (notify_last_fd >= 0)
		close(notify_last_fd);
	notify_last_fd = -1;
	term_free(t);
	restore_free(r);
	close(sp[1]);

	/* a "helper" that is not a socket: closed, removed, adopted without */
	pid = session_start(&master);
	fds[0] = master;
	fds[1] = session_pidfd_open(pid);
	fds[2] = snapshot_of("adopted", 80, 24);
	fds[3] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	hand_over(fds, names, 4);
	restore_new(&(struct restore_config){.enabled = true, .store = true, .sb_size = 100}, &r);
	notify_read(got, sizeof(got), &n_fds);
	CHECK(strcmp(got, "FDSTOREREMOVE=1,FDNAME=helper") == 0);
	CHECK(!fd_open(6));
	CHECK(restore_handed(r, &a));
	CHECK(a.helper == -1);
	t = adopt_80x24(event, &a, &ev);
	restore_handed_done(r, true, 0);
	CHECK(term_helper_fd(t) == -1);
	CHECK(term_activate(t) == -ENOTCONN);
	kill(pid, SIGKILL);
	CHECK(waitpid(pid, &status, 0) == pid);
	term_free(t);
	restore_free(r);
	notify_read(got, sizeof(got), &n_fds);
	if (notify_last_fd >= 0)
		close(notify_last_fd);
	notify_last_fd = -1;
	sd_event_unref(event);
}

/* Whether TIOCGSID names a pty's session leader here: restore checks the
 * handed pidfd with it. qemu-user (the cross-architecture runs of
 * tests/cross/run) answers it without writing the sid. */
static bool tiocgsid_works(void)
{
	int master, status;
	pid_t pid = session_start(&master), sid = -1; /* set up once it returns */
	bool ok;

	ok = ioctl(master, TIOCGSID, &sid) == 0 && sid == pid;
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(master);
	return ok;
}

int main(void)
{
	/* the sessions' hangups are theirs, not ours */
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	if (!tiocgsid_works()) {
		fprintf(stderr, "SKIP: TIOCGSID does not report a pty's session leader here "
				"(qemu-user does not emulate it)\n");
		return 77;
	}
	notify_setup();
	RUN(test_adopt);
	RUN(test_refused);
	RUN(test_slots);
	RUN(test_adopt_helper);
	notify_teardown();
	return TESTS_RESULT();
}
