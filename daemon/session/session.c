/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#if defined(__i386__) || defined(__x86_64__)
#include <sys/io.h>
#endif
#include <unistd.h>

#include "getty.h"
#include "session.h"
#include "../util/util.h"

/* linux/major.h */
#define MEM_MAJOR 1
#define UNIX98_PTY_SLAVE_MAJOR 136
#define UNIX98_PTY_MAJOR_COUNT 8
/* drivers/char/mem.c: /dev/kmsg's minor of MEM_MAJOR */
#define KMSG_MINOR 11
/* The largest errno a KMSG_FD reply may carry (the kernel's MAX_ERRNO). */
#define SESSION_ERRNO_MAX 4095

/* Locale and time zone settings pass from the parent's environment (systemd
 * gives services the system locale); nothing else of it does. */
static bool session_env_passes(const char *entry)
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
 * TERM, COLORTERM at 15 bpp and deeper, COLORFGBG, XDG_SEAT and XDG_VTNR for
 * pam_systemd, a fixed PATH, and the parent's locale and time zone. Nothing
 * of the daemon's or the helper's own (NOTIFY_SOCKET, WATCHDOG_*,
 * JOURNAL_STREAM, LISTEN_*, CONSOLED_*, ...) reaches `login -p` and so the
 * user. */
size_t session_env(const struct session_env_config *c, char *const *parent_env, char **ret,
		   size_t max, char *scratch, size_t scratch_size)
{
	size_t n = 0, used = 0;

#define ADD(...)                                                                                   \
	do {                                                                                       \
		int len_ = snprintf(scratch + used, scratch_size - used, __VA_ARGS__);             \
		if (len_ >= 0 && (size_t)len_ < scratch_size - used && n + 1 < max) {              \
			ret[n++] = scratch + used;                                                 \
			used += (size_t)len_ + 1;                                                  \
		}                                                                                  \
	} while (0)

	ADD("TERM=%s", c->term);
	/* 24-bit colours are shown as they are only at 15 bpp and deeper; at
	 * 8 bpp they take the nearest colour map entry, so do not promise them. */
	if (c->truecolor)
		ADD("COLORTERM=truecolor");
	/* The default colours as entries of the 16 (palette.h): what vim and
	 * others read to choose their colours for a dark or light background. */
	ADD("COLORFGBG=%s", c->colorfgbg ? c->colorfgbg : "7;0");
	ADD("PATH=%s", SESSION_PATH);
	/* pam_systemd registers a local seat session from these; on a seat
	 * without VTs logind makes each new session the active one. */
	if (c->seat)
		ADD("XDG_SEAT=%s", c->seat);
	else if (c->vt) {
		ADD("XDG_SEAT=seat0");
		ADD("XDG_VTNR=%u", c->vt);
	}
	for (char *const *e = parent_env; e && *e; e++)
		if (session_env_passes(*e))
			ADD("%s", *e);
#undef ADD
	ret[n] = NULL;
	return n;
}

static void session_close_fds(void)
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
static int session_drop_io_permissions(void)
{
#if defined(__i386__) || defined(__x86_64__)
	if (iopl(0) < 0 && errno != ENOSYS)
		return -errno;
	if (ioperm(0, 65536, 0) < 0 && errno != ENOSYS)
		return -errno;
#endif
	return 0;
}

_Noreturn void session_exec(int tty_fd, char *const *argv, const struct session_env_config *c)
{
	static char scratch[8192];
	char *envp[64];
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	if (session_drop_io_permissions() < 0)
		_exit(127);

	/* A new session whose controlling tty is the slave; TIOCSCTTY without
	 * force fails for a tty that already is another session's. */
	if (setsid() < 0 || ioctl(tty_fd, TIOCSCTTY, 0) < 0)
		_exit(127);
	if (dup2(tty_fd, 0) < 0 || dup2(tty_fd, 1) < 0 || dup2(tty_fd, 2) < 0)
		_exit(127);
	session_close_fds();

	if (c->getty)
		argv = getty_run(c->vt, argv[0], c->autologin);
	session_env(c, environ, envp, ELEMENTSOF(envp), scratch, sizeof(scratch));
	execvpe(argv[0], argv, envp);
	fprintf(stderr, "%s: failed to run %s: %s\n", program_invocation_short_name, argv[0],
		strerror(errno));
	_exit(127);
}

int session_msg_check(const struct session_msg *msg, size_t len, enum session_msg_type type)
{
	if (len != sizeof(*msg) || msg->magic != SESSION_MSG_MAGIC || msg->type != (uint32_t)type)
		return -EBADMSG;
	switch (type) {
	case SESSION_MSG_START:
		if ((msg->flags & ~SESSION_FLAGS_KNOWN) || msg->value != 0)
			return -EBADMSG;
		return 0;
	case SESSION_MSG_STARTED:
		return msg->flags == 0 && msg->value > 0 ? 0 : -EBADMSG;
	case SESSION_MSG_EXITED:
		return msg->flags == 0 && msg->value >= 0 && msg->value <= 255 ? 0 : -EBADMSG;
	case SESSION_MSG_KMSG:
		return msg->flags == 0 && msg->value == 0 ? 0 : -EBADMSG;
	case SESSION_MSG_ACTIVATE:
		return msg->flags == 0 && msg->value > 0 ? 0 : -EBADMSG;
	case SESSION_MSG_KMSG_FD:
	case SESSION_MSG_ACTIVATED:
		return msg->flags == 0 && msg->value >= 0 && msg->value <= SESSION_ERRNO_MAX
			   ? 0
			   : -EBADMSG;
	}
	return -EBADMSG;
}

int session_kmsg_reply_check(const struct session_msg *msg, size_t len, int fd)
{
	if (session_msg_check(msg, len, SESSION_MSG_KMSG_FD) < 0)
		return -EBADMSG;
	/* the fd with 0, none with an errno */
	if (msg->value == 0)
		return fd >= 0 ? 0 : -EBADMSG;
	return fd < 0 ? -msg->value : -EBADMSG;
}

#define SESSION_ID_MAX 64

bool session_id_valid(const char *id)
{
	size_t len;

	if (!id)
		return false;
	len = strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789");
	return len > 0 && len <= SESSION_ID_MAX && id[len] == '\0';
}

int session_activate_check(const struct session_msg *msg, size_t len,
			   const struct session_activate_facts *f, char *reason, size_t reason_size)
{
#define REFUSE(r, ...)                                                                             \
	do {                                                                                       \
		snprintf(reason, reason_size, __VA_ARGS__);                                        \
		return (r);                                                                        \
	} while (0)

	if (session_msg_check(msg, len, SESSION_MSG_ACTIVATE) < 0)
		REFUSE(-EBADMSG, "a malformed ACTIVATE request");
	/* only the session this connection started, whatever pid is named */
	if (f->child <= 0 || msg->value != (int32_t)f->child)
		REFUSE(-EPERM, "it names process %d, not this connection's session (process %d)",
		       (int)msg->value, (int)f->child);
	/* on a seat with VTs, the VT switch activates sessions */
	if (!f->seat || !f->seat[0])
		REFUSE(-EPERM, "consoled serves a VT, not a seat without VTs");
	if (!f->id)
		REFUSE(-ENODATA, "process %d has no logind session (yet)", (int)f->child);
	if (!session_id_valid(f->id))
		REFUSE(-EPERM, "process %d's session id is not a valid one", (int)f->child);
	if (!f->id_seat || strcmp(f->id_seat, f->seat) != 0)
		REFUSE(-EPERM, "session %s is on seat %s, not %s", f->id,
		       f->id_seat ? f->id_seat : "(none)", f->seat);
	if (f->id_vt != 0)
		REFUSE(-EPERM, "session %s has VT %u", f->id, f->id_vt);
	if (!f->tty || !f->id_tty || strcmp(f->id_tty, f->tty) != 0)
		REFUSE(-EPERM, "session %s is on %s, not %s", f->id,
		       f->id_tty ? f->id_tty : "(no tty)", f->tty ? f->tty : "(no tty)");
#undef REFUSE
	snprintf(reason, reason_size, "session %s of process %d", f->id, (int)f->child);
	return 0;
}

int session_unit_vt(const char *unit, unsigned *ret)
{
	static const char prefix[] = "consoled@tty", suffix[] = ".service";
	char number[3];
	size_t len;
	unsigned vt;

	if (!unit || strncmp(unit, prefix, strlen(prefix)) != 0)
		return -EPERM;
	unit += strlen(prefix);
	len = strspn(unit, "0123456789");
	if (len == 0 || len > 2 || strcmp(unit + len, suffix) != 0 || unit[0] == '0')
		return -EPERM;
	memcpy(number, unit, len);
	number[len] = '\0';
	if (parse_uint(number, 1, 63, &vt) < 0)
		return -EPERM;
	*ret = vt;
	return 0;
}

int session_unit_seat(const char *unit, char *ret, size_t size)
{
	static const char prefix[] = "consoled-seat@", suffix[] = ".service";
	char name[256];
	size_t n = 0;

	if (!unit || strncmp(unit, prefix, strlen(prefix)) != 0)
		return -EPERM;
	unit += strlen(prefix);
	/* the instance as systemd escapes it (74-consoled-seat.rules): a
	 * seat's "-" is "\x2d" (a plain "-" would be "/" in the unit's %I) */
	for (;;) {
		size_t len =
		    strspn(unit, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");

		if (n + len >= sizeof(name))
			return -EPERM;
		memcpy(name + n, unit, len);
		n += len;
		unit += len;
		if (strncmp(unit, "\\x2d", 4) != 0)
			break;
		if (n + 1 >= sizeof(name))
			return -EPERM;
		name[n++] = '-';
		unit += 4;
	}
	name[n] = '\0';
	/* logind's seat names; seat0 has VTs (consoled@ttyN serves it) */
	if (strcmp(unit, suffix) != 0 || strncmp(name, "seat", 4) != 0 ||
	    strcmp(name, "seat0") == 0 || n >= size)
		return -EPERM;
	memcpy(ret, name, n + 1);
	return 0;
}

bool session_stat_is_pty_slave(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && major(st->st_rdev) >= UNIX98_PTY_SLAVE_MAJOR &&
	       major(st->st_rdev) < UNIX98_PTY_SLAVE_MAJOR + UNIX98_PTY_MAJOR_COUNT;
}

bool session_stat_is_kmsg(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && major(st->st_rdev) == MEM_MAJOR &&
	       minor(st->st_rdev) == KMSG_MINOR;
}

/* One message, with passfd (>= 0) as its one SCM_RIGHTS fd. */
static int session_send(int fd, const struct session_msg *msg, int passfd)
{
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int))];
	} control = {};
	struct iovec iov = {.iov_base = (void *)msg, .iov_len = sizeof(*msg)};
	struct msghdr mh = {
	    .msg_iov = &iov,
	    .msg_iovlen = 1,
	};

	if (passfd >= 0) {
		struct cmsghdr *cmsg;

		mh.msg_control = control.buf;
		mh.msg_controllen = sizeof(control.buf);
		cmsg = CMSG_FIRSTHDR(&mh);
		cmsg->cmsg_level = SOL_SOCKET;
		cmsg->cmsg_type = SCM_RIGHTS;
		cmsg->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cmsg), &passfd, sizeof(int));
	}
	if (sendmsg(fd, &mh, MSG_NOSIGNAL) != (ssize_t)sizeof(*msg))
		return -errno;
	return 0;
}

int session_send_start(int fd, int slave, uint32_t flags)
{
	struct session_msg msg = {
	    .magic = SESSION_MSG_MAGIC,
	    .type = SESSION_MSG_START,
	    .flags = flags,
	};

	return session_send(fd, &msg, slave);
}

int session_send_msg(int fd, enum session_msg_type type, int value, int passfd)
{
	struct session_msg msg = {.magic = SESSION_MSG_MAGIC, .type = type, .value = value};

	return session_send(fd, &msg, passfd);
}

int session_recv_msg(int fd, struct session_msg *ret, size_t *ret_len, int *ret_fd)
{
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int) * SESSION_MAX_FDS)];
	} control;
	/* One byte more than a message: a longer one is not cut to size. */
	char buf[sizeof(struct session_msg) + 1];
	struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
	struct msghdr mh = {
	    .msg_iov = &iov,
	    .msg_iovlen = 1,
	    .msg_control = control.buf,
	    .msg_controllen = sizeof(control.buf),
	};
	int fds[SESSION_MAX_FDS];
	size_t n_fds = 0;
	ssize_t n;

	*ret_fd = -1;
	n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k && n_fds < ELEMENTSOF(fds); i++)
			memcpy(&fds[n_fds++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
	}
	if (n_fds > 1 || (mh.msg_flags & MSG_CTRUNC)) {
		for (size_t i = 0; i < n_fds; i++)
			close(fds[i]);
		return -EBADMSG;
	}
	if (n == 0) {
		if (n_fds)
			close(fds[0]);
		return 0;
	}
	memset(ret, 0, sizeof(*ret));
	memcpy(ret, buf, MIN((size_t)n, sizeof(*ret)));
	*ret_len = (size_t)n;
	if (n_fds)
		*ret_fd = fds[0];
	return 1;
}

int session_connect(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

int session_ask_kmsg(const char *path, int timeout_msec)
{
	_cleanup_(closep) int fd = -1;
	struct session_msg msg;
	struct pollfd pfd;
	struct stat st;
	size_t len = 0;
	int r, kmsg = -1, flags;

	fd = session_connect(path);
	if (fd < 0)
		return fd;
	/* The helper refuses a peer before it reads the request: closed with
	 * the request unread, the connection is reset. */
	r = session_send_msg(fd, SESSION_MSG_KMSG, 0, -1);
	if (r == -EPIPE || r == -ECONNRESET)
		return -EPROTO;
	if (r < 0)
		return r;
	pfd = (struct pollfd){.fd = fd, .events = POLLIN};
	do
		r = poll(&pfd, 1, timeout_msec);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (r == 0)
		return -ETIMEDOUT;
	r = session_recv_msg(fd, &msg, &len, &kmsg);
	if (r == 0 || r == -ECONNRESET)
		return -EPROTO; /* closed without a reply: refused */
	if (r < 0)
		return r;
	r = session_kmsg_reply_check(&msg, len, kmsg);
	if (r < 0) {
		if (kmsg >= 0)
			close(kmsg);
		return r;
	}
	/* kmsg.h's reader wants EAGAIN, not a wait, when nothing is new */
	flags = fcntl(kmsg, F_GETFL);
	if (fstat(kmsg, &st) < 0 || !session_stat_is_kmsg(&st) || flags < 0 ||
	    (flags & O_ACCMODE) != O_RDONLY || fcntl(kmsg, F_SETFL, flags | O_NONBLOCK) < 0) {
		close(kmsg);
		return -EBADMSG;
	}
	return kmsg;
}

int session_pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
	int fd = (int)syscall(SYS_pidfd_open, pid, 0u);

	if (fd < 0)
		return -errno;
	/* pidfds are close-on-exec from the start */
	return fd;
#else
	(void)pid;
	return -ENOSYS;
#endif
}
