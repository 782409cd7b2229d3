/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What consoled-session(8) trusts: the name of its peer's unit (the VT comes
 * from it and only from it), the request's bytes and the fd it was given.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../daemon/session/session.h"
#include "../../daemon/util/util.h"
#include "tests.h"

static void test_unit_vt(void)
{
	static const char *const refused[] = {
	    "consoled@tty0.service",
	    "consoled@tty64.service",
	    "consoled@tty01.service",
	    "consoled@tty.service",
	    "consoled@tty1.service.d",
	    "consoled@tty1.socket",
	    "consoled@ttyS1.service",
	    "consoled@tty1x.service",
	    "consoled@tty+1.service",
	    "consoled@tty 1.service",
	    "consoled@tty100.service",
	    "consoled.service",
	    "getty@tty1.service",
	    "autovt@tty1.service",
	    "xconsoled@tty1.service",
	    "consoled@tty-1.service",
	    "consoled-session@0.service",
	    "",
	    "consoled@tty1.serviceconsoled@tty1.service",
	};
	unsigned vt = 99;

	CHECK(session_unit_vt("consoled@tty1.service", &vt) == 0);
	CHECK_EQ_U(vt, 1);
	CHECK(session_unit_vt("consoled@tty63.service", &vt) == 0);
	CHECK_EQ_U(vt, 63);
	CHECK(session_unit_vt("consoled@tty12.service", &vt) == 0);
	CHECK_EQ_U(vt, 12);
	for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
		vt = 99;
		if (session_unit_vt(refused[i], &vt) != -EPERM)
			fprintf(stderr, "accepted '%s'\n", refused[i]);
		CHECK(session_unit_vt(refused[i], &vt) == -EPERM);
		CHECK_EQ_U(vt, 99);
	}
	CHECK(session_unit_vt(NULL, &vt) == -EPERM);
}

static void test_msg_check(void)
{
	struct session_msg m = {
	    .magic = SESSION_MSG_MAGIC, .type = SESSION_MSG_START, .flags = SESSION_FLAG_TRUECOLOR};

	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_START) == 0);
	m.flags = 0;
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_START) == 0);
	/* the wrong size, magic, type, unknown flags, a value in START */
	CHECK(session_msg_check(&m, sizeof(m) - 1, SESSION_MSG_START) == -EBADMSG);
	CHECK(session_msg_check(&m, sizeof(m) + 1, SESSION_MSG_START) == -EBADMSG);
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_STARTED) == -EBADMSG);
	m.flags = 2;
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_START) == -EBADMSG);
	m.flags = 0;
	m.value = 1;
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_START) == -EBADMSG);
	m.value = 0;
	m.magic ^= 1;
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_START) == -EBADMSG);

	/* STARTED: a pid; EXITED: a status from 0 to 255 */
	m = (struct session_msg){
	    .magic = SESSION_MSG_MAGIC, .type = SESSION_MSG_STARTED, .value = 42};
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_STARTED) == 0);
	m.value = 0;
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_STARTED) == -EBADMSG);
	m = (struct session_msg){.magic = SESSION_MSG_MAGIC, .type = SESSION_MSG_EXITED};
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_EXITED) == 0);
	m.value = 255;
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_EXITED) == 0);
	m.value = 256;
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_EXITED) == -EBADMSG);
	m.value = -1;
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_EXITED) == -EBADMSG);
	m.value = 0;
	m.flags = SESSION_FLAG_TRUECOLOR;
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_EXITED) == -EBADMSG);

	/* KMSG: no flags, no value */
	m = (struct session_msg){.magic = SESSION_MSG_MAGIC, .type = SESSION_MSG_KMSG};
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_KMSG) == 0);
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_START) == -EBADMSG);
	CHECK(session_msg_check(&m, sizeof(m) - 1, SESSION_MSG_KMSG) == -EBADMSG);
	m.flags = SESSION_FLAG_TRUECOLOR;
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_KMSG) == -EBADMSG);
	m.flags = 0;
	m.value = 1;
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_KMSG) == -EBADMSG);
	/* START is not KMSG: the helper tells the two apart by the type */
	m = (struct session_msg){.magic = SESSION_MSG_MAGIC, .type = SESSION_MSG_START};
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_KMSG) == -EBADMSG);

	/* KMSG_FD: 0 or an errno up to 4095, no flags */
	m = (struct session_msg){.magic = SESSION_MSG_MAGIC, .type = SESSION_MSG_KMSG_FD};
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_KMSG_FD) == 0);
	m.value = EPERM;
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_KMSG_FD) == 0);
	m.value = 4095;
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_KMSG_FD) == 0);
	m.value = 4096;
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_KMSG_FD) == -EBADMSG);
	m.value = -EPERM;
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_KMSG_FD) == -EBADMSG);
	m.value = 0;
	m.flags = 1;
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_KMSG_FD) == -EBADMSG);
	m.flags = 0;
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_STARTED) == -EBADMSG);
}

/* A KMSG_FD reply: the fd with 0, none with an errno; anything else is
 * malformed. */
static void test_kmsg_reply(void)
{
	struct session_msg m = {.magic = SESSION_MSG_MAGIC, .type = SESSION_MSG_KMSG_FD};

	CHECK(session_kmsg_reply_check(&m, sizeof(m), 7) == 0);
	CHECK(session_kmsg_reply_check(&m, sizeof(m), -1) == -EBADMSG);
	CHECK(session_kmsg_reply_check(&m, sizeof(m) + 1, 7) == -EBADMSG);
	m.value = EACCES;
	CHECK(session_kmsg_reply_check(&m, sizeof(m), -1) == -EACCES);
	CHECK(session_kmsg_reply_check(&m, sizeof(m), 7) == -EBADMSG);
	m.value = 5000;
	CHECK(session_kmsg_reply_check(&m, sizeof(m), -1) == -EBADMSG);
	/* another type with a fd */
	m = (struct session_msg){
	    .magic = SESSION_MSG_MAGIC, .type = SESSION_MSG_STARTED, .value = 1};
	CHECK(session_kmsg_reply_check(&m, sizeof(m), 7) == -EBADMSG);
}

/* /dev/kmsg is the character device 1:11 and nothing else is. */
static void test_stat_is_kmsg(void)
{
	struct stat st = {.st_mode = S_IFCHR, .st_rdev = makedev(1, 11)};
	int fd;

	CHECK(session_stat_is_kmsg(&st));
	st.st_rdev = makedev(1, 3); /* /dev/null */
	CHECK(!session_stat_is_kmsg(&st));
	st.st_rdev = makedev(2, 11);
	CHECK(!session_stat_is_kmsg(&st));
	st = (struct stat){.st_mode = S_IFBLK, .st_rdev = makedev(1, 11)};
	CHECK(!session_stat_is_kmsg(&st));
	fd = open("/dev/null", O_RDONLY);
	CHECK(fstat(fd, &st) == 0 && !session_stat_is_kmsg(&st));
	close(fd);
	if (stat("/dev/kmsg", &st) == 0)
		CHECK(session_stat_is_kmsg(&st));
}

/* What the stand-in helper of test_ask_kmsg() does with the request. */
enum fake_reply {
	FAKE_KMSG,   /* opens /dev/kmsg and passes it */
	FAKE_ERRNO,  /* replies EACCES without a fd */
	FAKE_NULL,   /* passes /dev/null: not the kmsg device */
	FAKE_WRITE,  /* passes /dev/kmsg open for writing */
	FAKE_CLOSE,  /* closes the connection: a refusal */
	FAKE_RESET,  /* closes it with the request unread, as for a refused peer */
	FAKE_SILENT, /* never answers */
	FAKE_BOTH,   /* an errno and a fd */
};

/* Serves one connection on listener as told; exits 0 if the request was a
 * well-formed KMSG without a fd, 1 if not. */
static _Noreturn void fake_helper(int listener, enum fake_reply how)
{
	struct session_msg msg;
	size_t len = 0;
	int c, fd = -1, passfd = -1, value = 0, ok;

	c = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		_exit(1);
	if (how == FAKE_RESET) {
		struct pollfd req = {.fd = c, .events = POLLIN};

		/* the request is there, unread */
		_exit(poll(&req, 1, 5000) == 1 ? 0 : 1);
	}
	struct pollfd pfd = {.fd = c, .events = POLLIN};
	if (poll(&pfd, 1, 5000) != 1 || session_recv_msg(c, &msg, &len, &fd) != 1)
		_exit(1);
	ok = session_msg_check(&msg, len, SESSION_MSG_KMSG) == 0 && fd < 0;
	switch (how) {
	case FAKE_KMSG:
		passfd = open("/dev/kmsg", O_RDONLY | O_CLOEXEC); /* blocking: the reader sets it */
		break;
	case FAKE_ERRNO:
		value = EACCES;
		break;
	case FAKE_NULL:
		passfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		break;
	case FAKE_WRITE:
		passfd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
		break;
	case FAKE_CLOSE:
	case FAKE_RESET:
		_exit(ok ? 0 : 1);
	case FAKE_SILENT:
		pause();
		_exit(1);
	case FAKE_BOTH:
		value = EACCES;
		passfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		break;
	}
	if (session_send_msg(c, SESSION_MSG_KMSG_FD, value, passfd) < 0)
		_exit(1);
	/* the reader's end before ours: the fd is in flight until read */
	pfd = (struct pollfd){.fd = c, .events = POLLIN};
	poll(&pfd, 1, 5000);
	_exit(ok ? 0 : 1);
}

/* consoled's side of KMSG against a stand-in helper on a socket in a
 * temporary directory: the fd passed is taken only if it is /dev/kmsg read
 * only (then made non-blocking); the helper's errno, a refusal, silence and
 * a missing socket are told apart. */
static void test_ask_kmsg(void)
{
	static const struct {
		enum fake_reply how;
		int expect; /* >= 0: a fd */
		bool needs_kmsg;
	} cases[] = {
	    {FAKE_KMSG, 0, true},
	    {FAKE_ERRNO, -EACCES, false},
	    {FAKE_NULL, -EBADMSG, false},
	    {FAKE_WRITE, -EBADMSG, true},
	    {FAKE_CLOSE, -EPROTO, false},
	    {FAKE_RESET, -EPROTO, false},
	    {FAKE_SILENT, -ETIMEDOUT, false},
	    {FAKE_BOTH, -EBADMSG, false},
	};
	char dir[] = "/tmp/test-session-XXXXXX", path[64];
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	bool have_kmsg;
	int listener, fd;

	fd = open("/dev/kmsg", O_RDONLY | O_CLOEXEC);
	have_kmsg = fd >= 0;
	if (fd >= 0)
		close(fd);
	fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	have_kmsg = have_kmsg && fd >= 0;
	if (fd >= 0)
		close(fd);
	if (!have_kmsg)
		fprintf(stderr, "(/dev/kmsg cannot be opened here: its cases skipped)\n");

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/sock", dir);
	/* nobody listening: the connection's errno */
	CHECK(session_ask_kmsg(path, 1000) == -ENOENT);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	listener = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	CHECK(listener >= 0);
	CHECK(bind(listener, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	CHECK(listen(listener, 4) == 0);

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		int status;
		pid_t pid;

		if (cases[i].needs_kmsg && !have_kmsg)
			continue;
		pid = fork();
		CHECK(pid >= 0);
		if (pid == 0)
			fake_helper(listener, cases[i].how);
		fd = session_ask_kmsg(path, cases[i].how == FAKE_SILENT ? 300 : 5000);
		if (cases[i].expect >= 0) {
			struct stat st;

			CHECK(fd >= 0);
			CHECK(fd >= 0 && fstat(fd, &st) == 0 && session_stat_is_kmsg(&st));
			CHECK(fd >= 0 && (fcntl(fd, F_GETFL) & O_NONBLOCK));
			CHECK(fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC));
			if (fd >= 0)
				close(fd);
		} else {
			if (fd != cases[i].expect)
				fprintf(stderr, "case %zu: %d, expected %d\n", i, fd,
					cases[i].expect);
			CHECK(fd == cases[i].expect);
		}
		if (cases[i].how == FAKE_SILENT)
			kill(pid, SIGTERM);
		CHECK(waitpid(pid, &status, 0) == pid);
		if (cases[i].how != FAKE_SILENT)
			CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	close(listener);
	unlink(path);
	rmdir(dir);
	/* a path longer than sun_path */
	{
		char lng[200];

		memset(lng, 'x', sizeof(lng) - 1);
		lng[sizeof(lng) - 1] = '\0';
		CHECK(session_ask_kmsg(lng, 10) == -ENAMETOOLONG);
	}
}

/* A real pty's slave is one, its master and other devices are not. */
static void test_pty_slave(void)
{
	struct stat st;
	char name[64];
	int master, slave, fd;

	master = posix_openpt(O_RDWR | O_NOCTTY);
	CHECK(master >= 0);
	if (master < 0)
		return;
	CHECK(grantpt(master) == 0 && unlockpt(master) == 0);
	CHECK(ptsname_r(master, name, sizeof(name)) == 0);
	slave = open(name, O_RDWR | O_NOCTTY);
	CHECK(slave >= 0);
	CHECK(fstat(slave, &st) == 0 && session_stat_is_pty_slave(&st));
	CHECK(fstat(master, &st) == 0 && !session_stat_is_pty_slave(&st));
	fd = open("/dev/null", O_RDWR);
	CHECK(fstat(fd, &st) == 0 && !session_stat_is_pty_slave(&st));
	close(fd);
	CHECK(stat("/", &st) == 0 && !session_stat_is_pty_slave(&st));
	/* majors 136 to 143 */
	st = (struct stat){.st_mode = S_IFCHR, .st_rdev = makedev(143, 1)};
	CHECK(session_stat_is_pty_slave(&st));
	st.st_rdev = makedev(144, 1);
	CHECK(!session_stat_is_pty_slave(&st));
	st.st_rdev = makedev(135, 1);
	CHECK(!session_stat_is_pty_slave(&st));
	st = (struct stat){.st_mode = S_IFBLK, .st_rdev = makedev(136, 1)};
	CHECK(!session_stat_is_pty_slave(&st));
	close(slave);
	close(master);
}

/* The helper's environment (LISTEN_*, INVOCATION_ID, ...) stays out. */
/* consoled-seat@NAME.service: the seat's name, logind's characters only,
 * nothing else (a VT's unit, another template, a path, a suffix). */
static void test_unit_seat(void)
{
	static const char *const refused[] = {
	    "consoled-seat@.service",
	    "consoled-seat@seat1.socket",
	    "consoled-seat@seat1.service.d",
	    "consoled-seat@seat/1.service",
	    "consoled-seat@seat 1.service",
	    "consoled-seat@seat1",
	    "consoled-seat@seat0.service",
	    "consoled-seat@seat-usb_2.service", /* not escaped: %I would be seat/usb_2 */
	    "consoled-seat@usb1.service",
	    "consoled-seat@seat\\x2f1.service",
	    "consoled-seat@seat\\x2.service",
	    "consoled@seat1.service",
	    "consoled@tty1.service",
	    "xconsoled-seat@seat1.service",
	    "consoled-seat@seat1.serviceconsoled-seat@seat2.service",
	    "consoled-seat@seat-with-a-name-longer-than-the-buffer-given.service",
	    "",
	};
	char seat[16] = "unchanged";

	CHECK(session_unit_seat("consoled-seat@seat1.service", seat, sizeof(seat)) == 0);
	CHECK(strcmp(seat, "seat1") == 0);
	CHECK(session_unit_seat("consoled-seat@seat\\x2dusb_2.service", seat, sizeof(seat)) == 0);
	CHECK(strcmp(seat, "seat-usb_2") == 0);
	for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
		strcpy(seat, "unchanged");
		if (session_unit_seat(refused[i], seat, sizeof(seat)) != -EPERM)
			fprintf(stderr, "accepted '%s'\n", refused[i]);
		CHECK(session_unit_seat(refused[i], seat, sizeof(seat)) == -EPERM);
		CHECK(strcmp(seat, "unchanged") == 0);
	}
	CHECK(session_unit_seat(NULL, seat, sizeof(seat)) == -EPERM);
}

/* A seat without VTs: XDG_SEAT is its name and there is no XDG_VTNR. */
static void test_env_seat(void)
{
	struct session_env_config c = {.term = "linux", .seat = "seat1"};
	char scratch[1024], *env[16];

	CHECK_EQ_U(session_env(&c, NULL, env, ELEMENTSOF(env), scratch, sizeof(scratch)), 4);
	CHECK(strcmp(env[3], "XDG_SEAT=seat1") == 0);
	CHECK(env[4] == NULL);
}

static void test_env(void)
{
	char *parent[] = {"LISTEN_FDS=1", "LISTEN_PID=5", "INVOCATION_ID=x", "LANG=C.UTF-8", NULL};
	struct session_env_config c = {.term = "linux", .vt = 7};
	char scratch[1024], *env[16];

	CHECK_EQ_U(session_env(&c, parent, env, ELEMENTSOF(env), scratch, sizeof(scratch)), 6);
	CHECK(strcmp(env[0], "TERM=linux") == 0);
	CHECK(strcmp(env[1], "COLORFGBG=7;0") == 0);
	CHECK(strcmp(env[2], "PATH=" SESSION_PATH) == 0);
	CHECK(strcmp(env[3], "XDG_SEAT=seat0") == 0);
	CHECK(strcmp(env[4], "XDG_VTNR=7") == 0);
	CHECK(strcmp(env[5], "LANG=C.UTF-8") == 0);
	CHECK(env[6] == NULL);
}

static bool env_has(char **env, const char *entry)
{
	for (; *env; env++)
		if (strcmp(*env, entry) == 0)
			return true;
	return false;
}

/* The daemon's own environment (the notify socket, the watchdog, the journal
 * stream, test switches, the loader's) stays out; the terminal's, the
 * seat's, PATH and the locale go in. */
static void test_env_daemon(void)
{
	char *daemon_env[] = {
	    "NOTIFY_SOCKET=/run/systemd/notify",
	    "WATCHDOG_USEC=30000000",
	    "WATCHDOG_PID=1",
	    "JOURNAL_STREAM=8:1234",
	    "CONSOLED_BACKEND_DIR=/tmp/evil",
	    "LD_PRELOAD=/tmp/x.so",
	    "HOME=/root",
	    "PATH=/tmp/evil:/bin",
	    "TERM=linux",
	    "LANG=de_DE.UTF-8",
	    "LC_TIME=C",
	    "TZ=Europe/Berlin",
	    "LCX=1",
	    "LANGUAGE=de",
	    NULL,
	};
	struct session_env_config cfg = {.term = "xterm-256color", .vt = 3, .truecolor = true};
	char scratch[4096], *env[32];
	size_t n;

	n = session_env(&cfg, daemon_env, env, ELEMENTSOF(env), scratch, sizeof(scratch));
	CHECK(env[n] == NULL);
	CHECK_EQ_U(n, 10);
	CHECK(env_has(env, "TERM=xterm-256color"));
	CHECK(env_has(env, "COLORTERM=truecolor"));
	/* the default colours, light grey on black: a dark background */
	CHECK(env_has(env, "COLORFGBG=7;0"));
	CHECK(env_has(env, "XDG_SEAT=seat0"));
	CHECK(env_has(env, "XDG_VTNR=3"));
	CHECK(env_has(env, "PATH=" SESSION_PATH));
	CHECK(env_has(env, "LANG=de_DE.UTF-8"));
	CHECK(env_has(env, "LANGUAGE=de"));
	CHECK(env_has(env, "LC_TIME=C"));
	CHECK(env_has(env, "TZ=Europe/Berlin"));
	for (size_t i = 0; i < n; i++) {
		CHECK(strncmp(env[i], "NOTIFY_SOCKET", 13) != 0);
		CHECK(strncmp(env[i], "CONSOLED_", 9) != 0);
		CHECK(strncmp(env[i], "LD_", 3) != 0);
	}

	/* 8 bpp, no VT: no COLORTERM, no seat */
	cfg.truecolor = false;
	cfg.vt = 0;
	n = session_env(&cfg, (char *[]){NULL}, env, ELEMENTSOF(env), scratch, sizeof(scratch));
	CHECK_EQ_U(n, 3);
	CHECK(env_has(env, "TERM=xterm-256color"));
	CHECK(env_has(env, "COLORFGBG=7;0"));
	CHECK(env_has(env, "PATH=" SESSION_PATH));

	/* the palette's default colours (palette_colorfgbg()) */
	cfg.colorfgbg = "12;8";
	n = session_env(&cfg, (char *[]){NULL}, env, ELEMENTSOF(env), scratch, sizeof(scratch));
	CHECK_EQ_U(n, 3);
	CHECK(env_has(env, "COLORFGBG=12;8"));
	cfg.colorfgbg = NULL;

	/* Bounded by the array and the scratch space, always terminated. */
	n = session_env(&cfg, daemon_env, env, 2, scratch, sizeof(scratch));
	CHECK_EQ_U(n, 1);
	CHECK(env[1] == NULL);
	n = session_env(&cfg, daemon_env, env, ELEMENTSOF(env), scratch, 20);
	CHECK_EQ_U(n, 1);
	CHECK(env[1] == NULL);
}

/* STARTED brings a pidfd of the session's leader over the connection; the
 * pidfd becomes readable when that process ends, whoever its parent. */
static void test_started_pidfd(void)
{
	struct session_msg msg;
	struct pollfd pfd;
	size_t len = 0;
	int sp[2], pidfd, got = -1, status;
	pid_t pid;

	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	pidfd = session_pidfd_open(pid);
	CHECK(pidfd >= 0);
	CHECK(session_send_msg(sp[0], SESSION_MSG_STARTED, (int)pid, pidfd) == 0);
	close(pidfd);
	CHECK(session_recv_msg(sp[1], &msg, &len, &got) == 1);
	CHECK(session_msg_check(&msg, len, SESSION_MSG_STARTED) == 0);
	CHECK(msg.value == (int)pid);
	CHECK(got >= 0);
	CHECK((fcntl(got, F_GETFD) & FD_CLOEXEC) != 0);
	/* alive: not readable */
	pfd = (struct pollfd){.fd = got, .events = POLLIN};
	CHECK(poll(&pfd, 1, 0) == 0);
	kill(pid, SIGTERM);
	CHECK(poll(&pfd, 1, 5000) == 1 && (pfd.revents & POLLIN));
	CHECK(waitpid(pid, &status, 0) == pid);
	close(got);

	/* EXITED without a fd */
	CHECK(session_send_msg(sp[0], SESSION_MSG_EXITED, 3, -1) == 0);
	CHECK(session_recv_msg(sp[1], &msg, &len, &got) == 1);
	CHECK(session_msg_check(&msg, len, SESSION_MSG_EXITED) == 0 && msg.value == 3);
	CHECK(got == -1);
	/* nothing there yet */
	CHECK(session_recv_msg(sp[1], &msg, &len, &got) == -EAGAIN);

	/* Two fds: malformed, both closed. */
	{
		int two[2] = {dup(sp[0]), dup(sp[0])};
		union {
			struct cmsghdr hdr;
			char buf[CMSG_SPACE(sizeof(two))];
		} control = {};
		struct session_msg m = {
		    .magic = SESSION_MSG_MAGIC, .type = SESSION_MSG_STARTED, .value = 1};
		struct iovec iov = {.iov_base = &m, .iov_len = sizeof(m)};
		struct msghdr mh = {.msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = control.buf,
				    .msg_controllen = sizeof(control.buf)};
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		int before, after;

		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(two));
		memcpy(CMSG_DATA(c), two, sizeof(two));
		CHECK(sendmsg(sp[0], &mh, 0) == (ssize_t)sizeof(m));
		close(two[0]);
		close(two[1]);
		before = dup(0);
		close(before);
		CHECK(session_recv_msg(sp[1], &msg, &len, &got) == -EBADMSG);
		CHECK(got == -1);
		/* no fd leaked: the lowest free one is the same as before */
		after = dup(0);
		CHECK(after == before);
		close(after);
	}

	/* the end of the connection */
	close(sp[0]);
	CHECK(session_recv_msg(sp[1], &msg, &len, &got) == 0);
	close(sp[1]);
}

#define CHECK_REASON(want)                                                                         \
	do {                                                                                       \
		if (strcmp(reason, want) != 0)                                                     \
			fprintf(stderr, "the reason: '%s'\n", reason);                             \
		CHECK(strcmp(reason, want) == 0);                                                  \
	} while (0)

/* ACTIVATE: the session this connection started, on the peer's seat
 * without VTs, on the pty passed; never a session consoled names. */
static void test_activate_check(void)
{
	static const char *const bad_ids[] = {
	    "",
	    "../3",
	    "3/..",
	    "c1 ",
	    " 3",
	    "3\n",
	    "_1",
	    "a-b",
	    "1.2",
	    "s\xc3\xa9",
	    "12345678901234567890123456789012345678901234567890123456789012345",
	};
	struct session_msg m = {
	    .magic = SESSION_MSG_MAGIC, .type = SESSION_MSG_ACTIVATE, .value = 1234};
	struct session_activate_facts ok =
					  {
					      .child = 1234,
					      .seat = "seat1",
					      .tty = "pts/3",
					      .id = "c7",
					      .id_seat = "seat1",
					      .id_tty = "pts/3",
					  },
				      f;
	char reason[160];

	/* the message: a pid, no flags; the answer 0 or an errno */
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_ACTIVATE) == 0);
	m.value = 0;
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_ACTIVATE) == -EBADMSG);
	m.value = -1234;
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_ACTIVATE) == -EBADMSG);
	m.value = 1234;
	m.flags = SESSION_FLAG_TRUECOLOR;
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_ACTIVATE) == -EBADMSG);
	m.flags = 0;
	CHECK(session_msg_check(&m, sizeof(m) - 1, SESSION_MSG_ACTIVATE) == -EBADMSG);
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_START) == -EBADMSG);
	m.type = SESSION_MSG_ACTIVATED;
	m.value = 0;
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_ACTIVATED) == 0);
	m.value = ENODATA;
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_ACTIVATED) == 0);
	m.value = -1;
	CHECK(session_msg_check(&m, sizeof(m), SESSION_MSG_ACTIVATED) == -EBADMSG);
	m = (struct session_msg){
	    .magic = SESSION_MSG_MAGIC, .type = SESSION_MSG_ACTIVATE, .value = 1234};

	CHECK(session_id_valid("3"));
	CHECK(session_id_valid("c12"));
	CHECK(!session_id_valid(NULL));
	for (size_t i = 0; i < ELEMENTSOF(bad_ids); i++) {
		if (session_id_valid(bad_ids[i]))
			fprintf(stderr, "accepted the id '%s'\n", bad_ids[i]);
		CHECK(!session_id_valid(bad_ids[i]));
	}

	CHECK(session_activate_check(&m, sizeof(m), &ok, reason, sizeof(reason)) == 0);
	CHECK_REASON("session c7 of process 1234");

	/* another pid than this connection's session: never, whatever it is */
	m.value = 1;
	CHECK(session_activate_check(&m, sizeof(m), &ok, reason, sizeof(reason)) == -EPERM);
	CHECK_REASON("it names process 1, not this connection's session (process 1234)");
	m.value = 1235;
	CHECK(session_activate_check(&m, sizeof(m), &ok, reason, sizeof(reason)) == -EPERM);
	m.value = 1234;
	/* malformed */
	m.flags = 1;
	CHECK(session_activate_check(&m, sizeof(m), &ok, reason, sizeof(reason)) == -EBADMSG);
	CHECK_REASON("a malformed ACTIVATE request");
	m.flags = 0;
	CHECK(session_activate_check(&m, sizeof(m) + 1, &ok, reason, sizeof(reason)) == -EBADMSG);
	/* no session started (yet) */
	f = ok;
	f.child = 0;
	CHECK(session_activate_check(&m, sizeof(m), &f, reason, sizeof(reason)) == -EPERM);
	/* consoled on a VT: the VT switch does it */
	f = ok;
	f.seat = NULL;
	CHECK(session_activate_check(&m, sizeof(m), &f, reason, sizeof(reason)) == -EPERM);
	CHECK_REASON("consoled serves a VT, not a seat without VTs");
	/* nobody logged in yet */
	f = ok;
	f.id = NULL;
	CHECK(session_activate_check(&m, sizeof(m), &f, reason, sizeof(reason)) == -ENODATA);
	CHECK_REASON("process 1234 has no logind session (yet)");
	/* a bad id */
	for (size_t i = 0; i < ELEMENTSOF(bad_ids); i++) {
		f = ok;
		f.id = bad_ids[i];
		CHECK(session_activate_check(&m, sizeof(m), &f, reason, sizeof(reason)) == -EPERM);
		CHECK_REASON("process 1234's session id is not a valid one");
	}
	/* another seat, a VT, another pty */
	f = ok;
	f.id_seat = "seat0";
	CHECK(session_activate_check(&m, sizeof(m), &f, reason, sizeof(reason)) == -EPERM);
	CHECK_REASON("session c7 is on seat seat0, not seat1");
	f.id_seat = NULL;
	CHECK(session_activate_check(&m, sizeof(m), &f, reason, sizeof(reason)) == -EPERM);
	CHECK_REASON("session c7 is on seat (none), not seat1");
	f = ok;
	f.id_seat = "seat10";
	CHECK(session_activate_check(&m, sizeof(m), &f, reason, sizeof(reason)) == -EPERM);
	f = ok;
	f.id_vt = 2;
	CHECK(session_activate_check(&m, sizeof(m), &f, reason, sizeof(reason)) == -EPERM);
	CHECK_REASON("session c7 has VT 2");
	f = ok;
	f.id_tty = "pts/30";
	CHECK(session_activate_check(&m, sizeof(m), &f, reason, sizeof(reason)) == -EPERM);
	CHECK_REASON("session c7 is on pts/30, not pts/3");
	f.id_tty = NULL;
	CHECK(session_activate_check(&m, sizeof(m), &f, reason, sizeof(reason)) == -EPERM);
	f = ok;
	f.tty = NULL;
	f.id_tty = NULL;
	CHECK(session_activate_check(&m, sizeof(m), &f, reason, sizeof(reason)) == -EPERM);
	/* a reason that does not fit is cut, not overrun */
	CHECK(session_activate_check(&m, sizeof(m), &ok, reason, 8) == 0);
	CHECK_REASON("session");
}

int main(void)
{
	RUN(test_unit_vt);
	RUN(test_msg_check);
	RUN(test_kmsg_reply);
	RUN(test_stat_is_kmsg);
	RUN(test_ask_kmsg);
	RUN(test_pty_slave);
	RUN(test_unit_seat);
	RUN(test_env);
	RUN(test_env_seat);
	RUN(test_env_daemon);
	RUN(test_started_pidfd);
	RUN(test_activate_check);
	return TESTS_RESULT();
}
