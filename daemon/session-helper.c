/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * consoled-session: starts the login session of a sandboxed consoled, outside
 * its sandbox (consoled-session(8)). systemd runs one per connection to
 * consoled-session.socket (Accept=yes), the connection on fd 0
 * (StandardInput=socket).
 *
 * It trusts consoled with nothing but a pty slave: the peer must be root in
 * consoled@ttyN.service (SO_PEERCRED, then the cgroup of its pid), the VT
 * for XDG_VTNR is that unit's N (or in consoled-seat@NAME.service: XDG_SEAT
 * is NAME, and there is no VT), the fd must be a UNIX 98 pty slave that no
 * session has as controlling tty yet, and the command and TERM come from
 * root's consoled.conf, as consoled itself reads them. Then it starts the
 * command on the slave as consoled would (session_exec()), tells consoled
 * the pid (with a pidfd of the session's leader: consoled keeps it in
 * systemd's fd store to see the session's end after a restart), waits, and
 * tells it the exit status if consoled is still connected. consoled closing
 * the connection does not end the session (a restarting consoled adopts it);
 * closing the pty master for good does.
 *
 * On a connection of its own consoled asks for /dev/kmsg instead (KMSG):
 * its sandbox keeps it from the kernel's log (ProtectKernelLogs=yes, no
 * CAP_SYSLOG, which kernel.dmesg_restrict=1 wants for the open), so the
 * helper, checked the same way, opens the device read only and passes the
 * fd back; no session is started for that connection.
 *
 * On a seat without VTs consoled asks, on the session's connection, that the
 * session be the seat's active one when its terminal comes in front
 * (ACTIVATE): the helper looks up the logind session of the process it
 * started (sd_pid_get_session()), checks it (session_activate_check(): this
 * connection's process, the peer's seat, no VT, the pty consoled passed) and
 * calls logind's ActivateSession for it. consoled never names a session id.
 */
#define LOG_MODULE "consoled-session"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-login.h>
#include <unistd.h>

#include "options.h"
#include "color/palette.h"
#include "devices/kmsg.h"
#include "session/getty.h"
#include "session/session.h"
#include "util/log.h"
#include "util/util.h"

/* consoled sends its request right after connecting. */
#define REQUEST_TIMEOUT_MSEC (10 * 1000)

/* Exit statuses: 0 the session ran (its own status went to consoled) or the
 * answer to KMSG went out, 1 the request was refused or the session could
 * not be started. */

/* The peer's VT (consoled@ttyN.service), or its seat without VTs
 * (consoled-seat@NAME.service: *ret_vt 0, ret_seat NAME). */
static int check_peer(int fd, unsigned *ret_vt, char *ret_seat, size_t seat_size)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	_cleanup_(freep) char *unit = NULL;
	int r;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return log_error_errno(errno, "Failed to get the peer's credentials: %m");
	if (cred.uid != 0)
		return log_error_errno(EPERM, "Refusing process %d of uid %u: not root",
				       (int)cred.pid, (unsigned)cred.uid);
	r = sd_pid_get_unit(cred.pid, &unit);
	if (r < 0)
		return log_error_errno(r, "Refusing process %d: no unit of its own: %m",
				       (int)cred.pid);
	*ret_vt = 0;
	ret_seat[0] = '\0';
	if (session_unit_vt(unit, ret_vt) < 0 && session_unit_seat(unit, ret_seat, seat_size) < 0)
		return log_error_errno(EPERM,
				       "Refusing process %d of %s: not consoled@ttyN.service or "
				       "consoled-seat@NAME.service",
				       (int)cred.pid, unit);
	log_debug("Request of process %d of %s", (int)cred.pid, unit);
	return 0;
}

static void close_fds(const int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
}

/* The request: START and exactly one fd, a pty slave open for reading and
 * writing (in *ret_tty); or KMSG and no fd (*ret_tty is -1). */
static int receive_request(int fd, struct session_msg *ret_msg, int *ret_tty)
{
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int) * 8)];
	} control;
	char buf[sizeof(struct session_msg) + 1];
	struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
	struct msghdr mh = {
	    .msg_iov = &iov,
	    .msg_iovlen = 1,
	    .msg_control = control.buf,
	    .msg_controllen = sizeof(control.buf),
	};
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	int fds[8], n_fds = 0, flags;
	struct stat st;
	ssize_t n;
	int r;

	r = poll(&pfd, 1, REQUEST_TIMEOUT_MSEC);
	if (r < 0)
		return log_error_errno(errno, "Failed to wait for the request: %m");
	if (r == 0)
		return log_error_errno(ETIMEDOUT, "No request within %d s",
				       REQUEST_TIMEOUT_MSEC / 1000);
	n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0)
		return log_error_errno(errno, "Failed to read the request: %m");
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k && n_fds < (int)ELEMENTSOF(fds); i++)
			memcpy(&fds[n_fds++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
	}
	memset(ret_msg, 0, sizeof(*ret_msg));
	memcpy(ret_msg, buf, MIN((size_t)n, sizeof(*ret_msg)));
	if (session_msg_check(ret_msg, (size_t)n, SESSION_MSG_KMSG) == 0 &&
	    !(mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		if (n_fds != 0) {
			close_fds(fds, (size_t)n_fds);
			return log_error_errno(
			    EBADMSG, "Refusing a KMSG request with %d fds, not none", n_fds);
		}
		*ret_tty = -1;
		return 0;
	}
	if (session_msg_check(ret_msg, (size_t)n, SESSION_MSG_START) < 0 ||
	    (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		close_fds(fds, (size_t)n_fds);
		return log_error_errno(EBADMSG, "Refusing a malformed request");
	}
	if (n_fds != 1) {
		close_fds(fds, (size_t)n_fds);
		return log_error_errno(EBADMSG, "Refusing a request with %d fds, not one", n_fds);
	}
	if (fstat(fds[0], &st) < 0 || !session_stat_is_pty_slave(&st) || !isatty(fds[0])) {
		close(fds[0]);
		return log_error_errno(EPERM, "Refusing a request whose fd is not a pty slave");
	}
	flags = fcntl(fds[0], F_GETFL);
	if (flags < 0 || (flags & O_ACCMODE) != O_RDWR) {
		close(fds[0]);
		return log_error_errno(EPERM,
				       "Refusing a pty slave not open for reading and writing");
	}
	*ret_tty = fds[0];
	return 0;
}

/* KMSG: /dev/kmsg read only as the reply's one fd, or the errno of the
 * open without one. 0 once the reply went out. */
static int send_kmsg(int fd)
{
	int kmsg = kmsg_open(), r;

	if (kmsg < 0)
		log_warning_errno(kmsg, "Failed to open /dev/kmsg for consoled: %m");
	r = session_send_msg(fd, SESSION_MSG_KMSG_FD, kmsg < 0 ? -kmsg : 0, kmsg);
	if (kmsg >= 0)
		close(kmsg);
	if (r < 0)
		return log_error_errno(r, "Failed to pass /dev/kmsg to consoled: %m");
	log_debug("Passed %s to consoled", kmsg >= 0 ? "/dev/kmsg" : "the open's error");
	return 0;
}

/* The command and TERM from root's configuration, as consoled reads them;
 * only the files (no keyboard settings, no command line of consoled's). */
static int read_config(struct options *o)
{
	static const struct options_files files = {.config = "/etc/consoled/consoled.conf"};
	char *argv[] = {(char *)"consoled-session", NULL};
	int saved = log_get_max_level(), r;

	/* Errors in the files are logged, the keymap's choice is not news. */
	log_set_max_level(MIN(saved, LOG_NOTICE));
	r = options_parse(1, argv, &files, o);
	log_set_max_level(saved);
	return r;
}

/* What the helper knows of the session it started, for ACTIVATE. */
struct helper_session {
	pid_t pid;
	const char *seat; /* the peer's seat without VTs, or NULL */
	char tty[64];	  /* "pts/N", or empty */
};

/* logind's ActivateSession(id): on a seat without VTs logind makes it the
 * seat's active one at once when the old one has no devices taken (a
 * compositor's are paused first). 0 or a negative errno, logged. */
static int activate_session(const char *id)
{
	sd_bus_error error = SD_BUS_ERROR_NULL;
	sd_bus *bus = NULL;
	int r;

	r = sd_bus_open_system(&bus);
	if (r < 0)
		return log_error_errno(r, "Failed to connect to the system bus: %m");
	r = sd_bus_call_method(bus, "org.freedesktop.login1", "/org/freedesktop/login1",
			       "org.freedesktop.login1.Manager", "ActivateSession", &error, NULL,
			       "s", id);
	if (r < 0)
		log_error("Failed to activate session %s: %s", id,
			  error.message ? error.message : strerror(-r));
	sd_bus_error_free(&error);
	sd_bus_flush_close_unref(bus);
	return r;
}

/* One message from consoled on the session's connection: ACTIVATE is
 * carried out for this connection's session only; anything else is refused.
 * The answer (ACTIVATED) goes back either way. */
static void handle_request(int fd, const struct session_msg *msg, size_t len, int extra,
			   const struct helper_session *hs)
{
	struct session_activate_facts f = {.child = hs->pid, .seat = hs->seat, .tty = hs->tty};
	char *id = NULL, *id_seat = NULL, *id_tty = NULL, reason[160];
	int r;

	if (extra >= 0) {
		close(extra);
		r = -EBADMSG;
		log_error("Refusing a request with an fd on the session's connection");
		goto reply;
	}
	if (sd_pid_get_session(hs->pid, &id) >= 0) {
		f.id = id;
		/* sd-login refuses ids that are not logind's itself */
		if (session_id_valid(id)) {
			(void)sd_session_get_seat(id, &id_seat);
			(void)sd_session_get_tty(id, &id_tty);
			(void)sd_session_get_vt(id, &f.id_vt);
		}
		f.id_seat = id_seat;
		f.id_tty = id_tty;
	}
	r = session_activate_check(msg, len, &f, reason, sizeof(reason));
	if (r == -ENODATA)
		log_info("Not activating a session: %s", reason);
	else if (r < 0)
		log_error("Refusing to activate a session: %s", reason);
	else {
		r = activate_session(id);
		if (r >= 0)
			log_info("Activated %s on %s", reason, hs->seat);
	}
reply:
	r = session_send_msg(fd, SESSION_MSG_ACTIVATED, r < 0 ? MIN(-r, 4095) : 0, -1);
	if (r < 0)
		log_warning_errno(r, "Failed to answer consoled's request, ignoring: %m");
	free(id);
	free(id_seat);
	free(id_tty);
}

/* Waits for the session to end, whether or not consoled stays connected
 * (*connected is cleared when it goes), answering consoled's requests
 * meanwhile; returns its status. */
static int wait_session(int fd, const struct helper_session *hs, bool *connected)
{
	pid_t pid = hs->pid;
	sigset_t mask;
	int sfd;

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	for (;;) {
		/* Without the signalfd, poll the child once a second. */
		struct pollfd pfd[2] = {{.fd = sfd, .events = POLLIN},
					{.fd = *connected ? fd : -1, .events = POLLIN}};
		int status;
		pid_t w;

		w = waitpid(pid, &status, WNOHANG);
		if (w == pid) {
			if (sfd >= 0)
				close(sfd);
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		}
		if (w < 0 && errno != EINTR) {
			log_error_errno(errno, "Failed to wait for the session: %m");
			if (sfd >= 0)
				close(sfd);
			return 127;
		}
		if (poll(pfd, 2, sfd >= 0 ? -1 : 1000) < 0 && errno != EINTR)
			continue;
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			(void)!read(sfd, &si, sizeof(si));
		}
		/* A request (ACTIVATE), or the connection's end: a restart,
		 * or consoled stopped; the session goes on, on the pty master
		 * that systemd's fd store or a new consoled holds. */
		if (pfd[1].revents) {
			struct session_msg msg;
			size_t len = 0;
			int extra = -1, r = session_recv_msg(fd, &msg, &len, &extra);

			if (r > 0) {
				handle_request(fd, &msg, len, extra, hs);
				continue;
			}
			if (r == -EAGAIN || r == -EINTR)
				continue;
			log_info("consoled closed the connection; the session goes on");
			*connected = false;
		}
	}
}

int main(int argc, char **argv)
{
	struct options o = {};
	struct session_msg req;
	struct session_env_config ec;
	struct palette palette;
	char colorfgbg[16];
	unsigned fg, bg;
	char autologin[GETTY_NAME_MAX];
	sigset_t mask;
	unsigned vt;
	char seat[64];
	int fd = STDIN_FILENO, tty = -1, pidfd, status, r;
	bool connected = true;
	struct helper_session hs = {};
	char ttypath[64];
	pid_t pid;

	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "consoled-session takes no arguments; systemd starts it for "
				"consoled-session.socket (see consoled-session(8))\n");
		return 2;
	}
	if (sd_is_socket(fd, AF_UNIX, SOCK_SEQPACKET, 0) <= 0) {
		log_error("Standard input is not a connection to consoled-session.socket");
		return 1;
	}
	if (check_peer(fd, &vt, seat, sizeof(seat)) < 0 || receive_request(fd, &req, &tty) < 0)
		return 1;
	if (req.type == SESSION_MSG_KMSG)
		return send_kmsg(fd) < 0 ? 1 : 0;
	/* the pty as logind names it (TTY=), for ACTIVATE's check */
	if (ttyname_r(tty, ttypath, sizeof(ttypath)) == 0 && strncmp(ttypath, "/dev/", 5) == 0)
		snprintf(hs.tty, sizeof(hs.tty), "%s", ttypath + 5);
	if (read_config(&o) < 0)
		return 1;
	palette_from_options(&palette, &o, "/sys/module/vt/parameters");
	palette_colorfgbg(&palette, &fg, &bg);
	snprintf(colorfgbg, sizeof(colorfgbg), "%u;%u", fg, bg);
	ec = (struct session_env_config){
	    .term = o.term,
	    .vt = vt,
	    .seat = seat[0] ? seat : NULL,
	    .truecolor = req.flags & SESSION_FLAG_TRUECOLOR,
	    .colorfgbg = colorfgbg,
	    .getty = getty_is_default_login(o.login_argv),
	};
	/* autologin= of root's files, as the command: never consoled's word. */
	/* Never on a seat without VTs (vt 0): a seat that comes with a
	 * plugged-in dock would otherwise bring a logged-in shell. */
	if (ec.getty && vt &&
	    getty_autologin_user(o.autologin, vt, autologin, sizeof(autologin)) > 0)
		ec.autologin = autologin;

	/* SIGCHLD goes to the signalfd; the child resets its mask. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	pid = fork();
	if (pid < 0) {
		log_error_errno(errno, "Failed to fork the session: %m");
		return 1;
	}
	if (pid == 0)
		session_exec(tty, o.login_argv, &ec);
	close(tty);
	if (seat[0])
		log_info("Started '%s' on %s for consoled as process %d", o.login_argv[0], seat,
			 (int)pid);
	else
		log_info("Started '%s' on tty%u for consoled as process %d", o.login_argv[0], vt,
			 (int)pid);
	/* We are its parent and have not reaped it: the pid is still its. */
	pidfd = session_pidfd_open(pid);
	if (pidfd < 0)
		log_warning_errno(pidfd, "Failed to get a pidfd of the session, consoled cannot "
					 "keep it over a restart: %m");
	r = session_send_msg(fd, SESSION_MSG_STARTED, (int)pid, pidfd);
	if (r < 0)
		log_warning_errno(r, "Failed to tell consoled that the session started: %m");
	if (pidfd >= 0)
		close(pidfd);

	hs.pid = pid;
	hs.seat = seat[0] ? seat : NULL;
	status = wait_session(fd, &hs, &connected);
	log_info("Session exited with status %d", status);
	if (connected) {
		r = session_send_msg(fd, SESSION_MSG_EXITED, status, -1);
		if (r < 0)
			log_warning_errno(r, "Failed to tell consoled that the session ended: %m");
	}
	options_fini(&o);
	return 0;
}
