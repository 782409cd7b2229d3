/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Starting a login session, whoever starts it: consoled itself (term.c, when
 * run by hand) or consoled-session(8), the helper that a sandboxed consoled
 * under systemd asks for one (session-helper.c). Both give the session the
 * same start: its own session with the pty slave as controlling tty and as
 * fds 0-2, no other fd, default signals, no I/O port permission and an
 * environment built from nothing (session_env()).
 *
 * The helper's protocol, on a SOCK_SEQPACKET connection to its socket
 * (consoled-session.socket, Accept=yes, one helper per connection):
 *
 *   consoled -> helper  START, with the pty slave as the only SCM_RIGHTS fd
 *   helper -> consoled  STARTED (value: the session's pid), once it runs,
 *                       with a pidfd of the session's leader as the only
 *                       SCM_RIGHTS fd (none if the kernel has no pidfds)
 *   helper -> consoled  EXITED (value: its exit status, 128 + signal), then
 *                       the helper closes the connection and exits
 *
 * or, on a connection of its own, for the kernel's messages (consoled's
 * sandbox has neither CAP_SYSLOG nor /dev/kmsg: ProtectKernelLogs=yes):
 *
 *   consoled -> helper  KMSG, no fd
 *   helper -> consoled  KMSG_FD (value 0) with /dev/kmsg, opened
 *                       O_RDONLY|O_NONBLOCK|O_CLOEXEC, as the only
 *                       SCM_RIGHTS fd; or (value: an errno) with none when
 *                       it cannot open it. Then the helper closes the
 *                       connection and exits; no session is started.
 *
 * consoled asks again at every start (a restarted consoled that adopts its
 * session from the fd store connects for KMSG all the same).
 *
 * On a seat without VTs, on the START connection while the session runs,
 * whenever consoled puts the terminal in front (logind makes each new
 * session on such a seat the active one, and has no VT switch to follow):
 *
 *   consoled -> helper  ACTIVATE (value: the pid STARTED told), no fd
 *   helper -> consoled  ACTIVATED (value 0: the session is the seat's
 *                       active one; or an errno: ENODATA while nobody has
 *                       logged in on it yet, EPERM when the helper refused
 *                       the request, that of logind's call otherwise)
 *
 * The connection is the authority: the helper activates only the logind
 * session of the process it started for this connection (sd_pid_get_session()
 * of its own child, never an id consoled names), and only when that session
 * is on the peer's seat, has no VT and is on the pty consoled passed
 * (session_activate_check()). A restarted consoled that adopted its session
 * has no connection, and so cannot ask.
 *
 * Every message is one struct session_msg. The helper takes nothing else
 * from consoled: the command and TERM come from root's consoled.conf, the VT
 * from the name of consoled's unit (consoled@ttyN.service), checked with
 * SO_PEERCRED and the peer's cgroup, for either request. The helper closing
 * the connection without EXITED (or KMSG_FD) means the session could not be
 * started or the helper refused consoled.
 *
 * consoled closing the connection does not end the session: consoled may be
 * restarting, with the pty master and the pidfd kept in systemd's file
 * descriptor store (consoled(8), SESSION RESTORE), and its successor adopts
 * the session without the helper. The helper goes on waiting for the session
 * and sends EXITED only if the connection is still open. The session ends
 * when the pty master is closed for good (the kernel hangs the pty up): by
 * consoled when it does not keep the session, or by PID 1 when it drops the
 * store.
 *
 * The checks here are pure functions, unit-tested in test-session.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* The session's PATH (that of systemd's services, and so of getty's login). */
#define SESSION_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

struct session_env_config {
	const char *term;
	unsigned vt;	       /* XDG_VTNR for the session; 0 = not set */
	const char *seat;      /* a seat without VTs: XDG_SEAT, and no XDG_VTNR */
	bool truecolor;	       /* COLORTERM=truecolor (15 bpp and deeper) */
	const char *colorfgbg; /* "F;B" (palette_colorfgbg()); NULL = "7;0" */
	/* The login screen (getty.h) before argv, which then is the default
	 * /bin/login -p; autologin: its user (checked), or NULL. */
	bool getty;
	const char *autologin;
};

/* Fills ret (max entries, NULL-terminated; the strings live in scratch) with
 * the session's environment: TERM, COLORTERM=truecolor when c->truecolor,
 * COLORFGBG (the default colours, c->colorfgbg), PATH, XDG_SEAT=c->seat alone
 * with c->seat, else XDG_SEAT=seat0 and XDG_VTNR when c->vt, and the LANG,
 * LANGUAGE, LC_* and TZ entries of parent_env; nothing else. Returns the count.
 * Async-signal-safe enough for a forked child (no allocation). */
size_t session_env(const struct session_env_config *c, char *const *parent_env, char **ret,
		   size_t max, char *scratch, size_t scratch_size);

/* In a forked child: makes tty_fd (a tty opened with O_NOCTTY) the
 * controlling tty of a new session and fds 0-2, closes every other fd,
 * drops I/O port permissions, resets signals and runs argv with
 * session_env(c, environ). Never returns: a failure is reported on the tty
 * when it can be and ends the child with status 127. */
_Noreturn void session_exec(int tty_fd, char *const *argv, const struct session_env_config *c);

/* The protocol (see above). */
#define SESSION_MSG_MAGIC UINT32_C(0x53446c43) /* "ClDS" */
#define SESSION_FLAG_TRUECOLOR UINT32_C(1)
#define SESSION_FLAGS_KNOWN SESSION_FLAG_TRUECOLOR

enum session_msg_type {
	SESSION_MSG_START = 1,
	SESSION_MSG_STARTED = 2,
	SESSION_MSG_EXITED = 3,
	SESSION_MSG_KMSG = 4,
	SESSION_MSG_KMSG_FD = 5,
	SESSION_MSG_ACTIVATE = 6,
	SESSION_MSG_ACTIVATED = 7,
};

struct session_msg {
	uint32_t magic;
	uint32_t type;	/* enum session_msg_type */
	uint32_t flags; /* START: SESSION_FLAG_*; else 0 */
	/* STARTED, ACTIVATE: pid; EXITED: status; KMSG_FD, ACTIVATED: 0 or an
	 * errno; START, KMSG: 0 */
	int32_t value;
};

/* Returns 0 if the len bytes at msg are one well-formed message of that
 * type (size, magic, flags and value in range), else -EBADMSG. */
int session_msg_check(const struct session_msg *msg, size_t len, enum session_msg_type type);

/* What a KMSG_FD reply of len bytes that brought fd (-1: none) says: 0 (the
 * fd is /dev/kmsg's), the helper's negative errno (then no fd came), or
 * -EBADMSG when it is malformed or the fd does not match the value. Closes
 * nothing. */
int session_kmsg_reply_check(const struct session_msg *msg, size_t len, int fd);

/* What the helper knows when ACTIVATE comes, for session_activate_check(). */
struct session_activate_facts {
	pid_t child;	  /* the session's leader this connection started */
	const char *seat; /* the peer's seat (consoled-seat@NAME.service); NULL
			     for consoled@ttyN.service */
	const char *tty;  /* the pty the session was started on: "pts/N" */
	/* sd_pid_get_session(child): its logind session, NULL if none (yet),
	 * and that session's seat, TTY= (NULL if unknown) and VT (0: none) */
	const char *id;
	const char *id_seat;
	const char *id_tty;
	unsigned id_vt;
};

/* Whether an ACTIVATE request of len bytes at msg may be carried out: 0 when
 * it is well-formed, names this connection's session (value == f->child),
 * the peer serves a seat without VTs, and the child's logind session has a
 * well-formed id (session_id_valid()) on that seat, no VT and the pty's TTY=.
 * Else -EBADMSG (malformed), -ENODATA (the child has no logind session yet:
 * at the login prompt, or a command without PAM) or -EPERM, with the reason
 * for the log written into reason (reason_size bytes). Logs nothing. */
int session_activate_check(const struct session_msg *msg, size_t len,
			   const struct session_activate_facts *f, char *reason,
			   size_t reason_size);

/* Whether id is a logind session id as logind accepts them: 1 to 64 ASCII
 * letters and digits ("3", "c12"); nothing that could name a path. */
bool session_id_valid(const char *id);

/* The VT of a consoled unit: "consoled@ttyN.service" with N from 1 to 63,
 * written as the kernel names the VT (no sign, no leading zero). Anything
 * else, aliases and other instances included, is -EPERM. */
int session_unit_vt(const char *unit, unsigned *ret);
/* The seat of a consoled unit for a seat without VTs:
 * "consoled-seat@NAME.service", NAME escaped as systemd-escape does (each
 * '-' as "\x2d"), unescaped a seat name as logind's ("seat", then letters,
 * digits, '-' and '_'), not seat0, at most size - 1 bytes, into ret.
 * Anything else is -EPERM and leaves ret alone. */
int session_unit_seat(const char *unit, char *ret, size_t size);

/* Whether st is that of a UNIX 98 pty slave (/dev/pts/N: a character device
 * of majors 136 to 143). */
bool session_stat_is_pty_slave(const struct stat *st);

/* consoled's request: START with `flags` (SESSION_FLAG_*) and the pty slave
 * as the one fd; 0 or a negative errno. */
int session_send_start(int fd, int slave, uint32_t flags);

/* A message (the helper's STARTED, EXITED, KMSG_FD; consoled's KMSG) with
 * value, and passfd as its one fd when >= 0; 0 or a negative errno. */
int session_send_msg(int fd, enum session_msg_type type, int value, int passfd);

/* The most fds a message is read with; more make it malformed. */
#define SESSION_MAX_FDS 8

/* Reads one message without waiting: 0 at the end of the connection, 1 with
 * a message in *ret (its length in *ret_len, not checked yet: see
 * session_msg_check()) and the fd it brought in *ret_fd (close-on-exec; -1
 * if none), or a negative errno (-EBADMSG: more than one fd, which are
 * closed). */
int session_recv_msg(int fd, struct session_msg *ret, size_t *ret_len, int *ret_fd);

/* A SOCK_SEQPACKET connection (close-on-exec) to the helper's socket at
 * path: the fd or a negative errno (-ENAMETOOLONG for a path too long). */
int session_connect(const char *path);

/* consoled's side of KMSG: connects to path, asks, waits for the reply up
 * to timeout_msec. Returns /dev/kmsg's fd (close-on-exec, non-blocking,
 * read only: it is checked to be the kmsg device), or a negative errno:
 * the helper's own (it could not open the device), -ETIMEDOUT, -EPROTO
 * when the helper closed or reset the connection without a reply (it
 * refused us),
 * -EBADMSG for a malformed reply, or that of the connection. */
int session_ask_kmsg(const char *path, int timeout_msec);

/* Whether st is that of /dev/kmsg (character device 1:11). */
bool session_stat_is_kmsg(const struct stat *st);

/* pidfd_open(2) (Linux 5.3): a close-on-exec pidfd, or a negative errno. */
int session_pidfd_open(pid_t pid);
