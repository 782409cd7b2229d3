/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "restore"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "restore.h"
#include "snapshot.h"
#include "term.h"
#include "../util/log.h"
#include "../util/util.h"

enum {
	FD_PTY,
	FD_PIDFD,
	FD_SNAPSHOT,
	FD_HELPER,
	_FD_MAX,
};

static const char *const fd_names[_FD_MAX] = {
    [FD_PTY] = "pty",
    [FD_PIDFD] = "pidfd",
    [FD_SNAPSHOT] = "snapshot",
    [FD_HELPER] = "helper",
};

/* What the store handed over at start, not yet taken by a terminal: PID 1
 * hands everything over once, the terminals start one by one. */
struct handed_fd {
	int fd;
	int kind;      /* FD_* */
	unsigned slot; /* the terminal, from 1 */
};
static struct handed_fd *pool;
static size_t pool_n;

struct restore {
	struct restore_config cfg;
	/* The fd store's names of this terminal's fds: "pty", "pty.2", ... */
	char names[_FD_MAX][RESTORE_NAME_MAX];
	struct snapshot *snap;
	bool unsupported; /* this libtsm cannot be snapshotted */
	/* What the store handed over, until adopted or dropped. */
	int handed[_FD_MAX];
	pid_t handed_pid; /* the handed pidfd's process (handed_check()) */
	/* The running session's fds are in the store. */
	bool stored;
	/* The handed snapshot's stored copy is replaced by ours. */
	bool replace_snapshot;
	/* A session runs: from its end to the next session's start, frames
	 * still show the old screen, which must not go into the snapshot. */
	bool live;
};

static void store_remove_name(bool store, const char *name)
{
	int e;

	if (!store && !getenv("NOTIFY_SOCKET"))
		return;
	e = sd_notifyf(0, "FDSTOREREMOVE=1\nFDNAME=%s", name);
	if (e < 0)
		log_warning_errno(e, "Failed to remove '%s' from the fd store: %m", name);
}

static void store_remove(const struct restore *r, const char *name)
{
	store_remove_name(r->cfg.store, name);
}

static void store_remove_all(const struct restore *r)
{
	for (int i = 0; i < _FD_MAX; i++)
		store_remove(r, r->names[i]);
}

static int store_add(const char *name, int fd, bool poll)
{
	char msg[64];
	int e;

	snprintf(msg, sizeof(msg), "FDSTORE=1\nFDNAME=%s%s", name, poll ? "" : "\nFDPOLL=0");
	e = sd_pid_notify_with_fds(0, 0, msg, &fd, 1);
	if (e < 0)
		return log_warning_errno(e, "Failed to put '%s' in the fd store: %m", name);
	if (e == 0)
		return log_warning_errno(ENOTCONN, "No fd store to put '%s' in: %m", name);
	return 0;
}

static void drop_handed(struct restore *r)
{
	for (int i = 0; i < _FD_MAX; i++)
		if (r->handed[i] >= 0) {
			close(r->handed[i]);
			r->handed[i] = -1;
		}
	/* Closing the master (the store's copy goes too) hangs the session up
	 * if it still ran. */
	store_remove_all(r);
}

/* The pid a pidfd refers to (-1 once it has exited, on Linux 5.x and
 * later), from /proc/self/fdinfo; -ENOTTY if fd is no pidfd. */
static int pidfd_get_pid(int fd, pid_t *ret)
{
	char path[64], line[256];
	FILE *f;
	bool is_pidfd = false;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(path, line, sizeof(line) - 1);
	if (n < 0)
		return -errno;
	line[n] = '\0';
	if (strcmp(line, "anon_inode:[pidfd]") != 0)
		return -ENOTTY;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		int pid;
		if (sscanf(line, "Pid:\t%d", &pid) == 1) {
			*ret = pid;
			is_pidfd = true;
			break;
		}
	}
	fclose(f);
	return is_pidfd ? 0 : -ENOTTY;
}

/* Whether the handed fds are a session worth adopting (its leader's pid
 * kept in handed_pid); logs why not. */
static bool handed_check(struct restore *r)
{
	struct pollfd pfd = {.fd = r->handed[FD_PIDFD], .events = POLLIN};
	unsigned ptn;
	pid_t pid = 0, sid = 0;
	int flags, e;

	if (r->handed[FD_PTY] < 0 || r->handed[FD_PIDFD] < 0 || r->handed[FD_SNAPSHOT] < 0) {
		log_warning("The fd store handed over an incomplete session (pty %s, pidfd %s, "
			    "snapshot %s): starting a new session",
			    r->handed[FD_PTY] >= 0 ? "yes" : "missing",
			    r->handed[FD_PIDFD] >= 0 ? "yes" : "missing",
			    r->handed[FD_SNAPSHOT] >= 0 ? "yes" : "missing");
		return false;
	}
	flags = fcntl(r->handed[FD_PTY], F_GETFL);
	if (ioctl(r->handed[FD_PTY], TIOCGPTN, &ptn) < 0 || flags < 0 ||
	    (flags & O_ACCMODE) != O_RDWR) {
		log_warning("The fd store's 'pty' is not a pty master: starting a new session");
		return false;
	}
	e = pidfd_get_pid(r->handed[FD_PIDFD], &pid);
	if (e < 0) {
		log_warning_errno(e, "The fd store's 'pidfd' is not a pidfd (%m): starting a new "
				     "session");
		return false;
	}
	if (poll(&pfd, 1, 0) != 0 || pid <= 0) {
		log_info("The session of the last consoled has ended meanwhile: starting a new "
			 "session");
		return false;
	}
	/* The pidfd's process leads the pty's session. */
	if (ioctl(r->handed[FD_PTY], TIOCGSID, &sid) < 0 || sid != pid) {
		log_warning("The fd store's pidfd (process %d) does not lead the session of "
			    "/dev/pts/%u (%d): starting a new session",
			    (int)pid, ptn, (int)sid);
		return false;
	}
	log_debug("The fd store handed over /dev/pts/%u with session leader %d", ptn, (int)pid);
	r->handed_pid = pid;
	return true;
}

/* The connection to consoled-session that started the session, if the store
 * has it (optional: a consoled before it kept none): a stream socket, or it
 * is closed and the session is adopted without it. */
static void handed_check_helper(struct restore *r)
{
	struct stat st;
	int type = 0;
	socklen_t len = sizeof(type);

	if (r->handed[FD_HELPER] < 0)
		return;
	if (fstat(r->handed[FD_HELPER], &st) < 0 || !S_ISSOCK(st.st_mode) ||
	    getsockopt(r->handed[FD_HELPER], SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
	    (type != SOCK_STREAM && type != SOCK_SEQPACKET)) {
		log_warning("The fd store's '%s' is not a socket: the session is adopted "
			    "without its helper",
			    r->names[FD_HELPER]);
		close(r->handed[FD_HELPER]);
		r->handed[FD_HELPER] = -1;
		store_remove(r, r->names[FD_HELPER]);
	}
}

void restore_fd_name(unsigned slot, int kind, char *buf, size_t size)
{
	if (slot <= 1)
		snprintf(buf, size, "%s", fd_names[kind]);
	else
		snprintf(buf, size, "%s.%u", fd_names[kind], slot);
}

/* "pty" is terminal 1's, "pty.2" terminal 2's (up to RESTORE_SLOTS_MAX);
 * false for any other name. */
static bool parse_name(const char *name, int *kind, unsigned *slot)
{
	for (int k = 0; k < _FD_MAX; k++) {
		size_t len = strlen(fd_names[k]);
		unsigned long n;
		char *end;

		if (strncmp(name, fd_names[k], len) != 0)
			continue;
		*kind = k;
		if (name[len] == '\0') {
			*slot = 1;
			return true;
		}
		if (name[len] != '.' || name[len + 1] < '2' || name[len + 1] > '9')
			return false;
		errno = 0;
		n = strtoul(name + len + 1, &end, 10);
		if (errno || *end || n > RESTORE_SLOTS_MAX)
			return false;
		*slot = (unsigned)n;
		return true;
	}
	return false;
}

/* Reads what the store hands over (once: the environment is unset) into
 * the pool; with session restore off here, everything is closed. */
static void pool_fill(const struct restore_config *c)
{
	char **names = NULL;
	int n;

	n = sd_listen_fds_with_names(1, &names);
	if (n < 0)
		log_warning_errno(n, "Failed to read the fds handed over, ignoring: %m");
	if (n <= 0) {
		free(names);
		return;
	}
	if (!c->enabled || !c->store)
		log_info("Session restore is off%s: closing the %d fds from the fd store",
			 c->enabled ? " here (no session socket)" : "", n);
	for (int i = 0; i < n; i++) {
		int fd = SD_LISTEN_FDS_START + i, kind;
		const char *name = names && names[i] ? names[i] : "unknown";
		unsigned slot;

		if (!c->enabled || !c->store) {
			store_remove_name(c->store, name);
		} else if (!parse_name(name, &kind, &slot)) {
			log_warning("Closing fd %d of unknown name '%s' from the fd store", fd,
				    name);
			store_remove_name(c->store, name);
		} else {
			pool = xrealloc(pool, (pool_n + 1) * sizeof(*pool));
			pool[pool_n++] = (struct handed_fd){fd, kind, slot};
			continue;
		}
		close(fd);
	}
	for (int i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

bool restore_stored(unsigned slot)
{
	for (size_t i = 0; i < pool_n; i++)
		if (pool[i].slot == (slot ? slot : 1))
			return true;
	return false;
}

void restore_drop_unclaimed(void)
{
	char name[RESTORE_NAME_MAX];

	for (size_t i = 0; i < pool_n; i++) {
		restore_fd_name(pool[i].slot, pool[i].kind, name, sizeof(name));
		log_warning("Closing '%s' from the fd store: no terminal %u here", name,
			    pool[i].slot);
		close(pool[i].fd);
		store_remove_name(true, name);
	}
	free(pool);
	pool = NULL;
	pool_n = 0;
}

void restore_new(const struct restore_config *c, struct restore **ret)
{
	struct restore *r = xcalloc(1, sizeof(*r));
	unsigned slot = c->slot ? c->slot : 1;
	size_t kept = 0;

	r->cfg = *c;
	for (int i = 0; i < _FD_MAX; i++) {
		r->handed[i] = -1;
		restore_fd_name(slot, i, r->names[i], sizeof(r->names[i]));
	}
	*ret = r;

	pool_fill(c);
	/* this terminal's fds leave the pool */
	for (size_t i = 0; i < pool_n; i++) {
		struct handed_fd h = pool[i];

		if (h.slot != slot) {
			pool[kept++] = h;
		} else if (r->handed[h.kind] >= 0) {
			log_warning("Closing a second '%s' from the fd store", r->names[h.kind]);
			close(h.fd);
		} else {
			r->handed[h.kind] = h.fd;
		}
	}
	pool_n = kept;
	if (r->handed[FD_PTY] < 0 && r->handed[FD_PIDFD] < 0 && r->handed[FD_SNAPSHOT] < 0 &&
	    r->handed[FD_HELPER] < 0)
		return;
	if (!r->cfg.enabled || !r->cfg.store)
		drop_handed(r);
	else if (!handed_check(r))
		drop_handed(r);
	else
		handed_check_helper(r);
}

bool restore_handed(struct restore *r, struct term_adopt *ret)
{
	if (r->handed[FD_PTY] < 0)
		return false;
	*ret = (struct term_adopt){
	    .pid = r->handed_pid, /* handed_check() found it a live pidfd's */
	    .master = r->handed[FD_PTY],
	    .pidfd = r->handed[FD_PIDFD],
	    .snapshot = r->handed[FD_SNAPSHOT],
	    .helper = r->handed[FD_HELPER],
	};
	return true;
}

void restore_handed_done(struct restore *r, bool adopted, int error)
{
	if (r->handed[FD_PTY] < 0)
		return;
	if (!adopted) {
		log_warning_errno(error,
				  "The snapshot of the last consoled's session cannot be restored "
				  "(%m): closing that session, starting a new one");
		drop_handed(r);
		return;
	}
	/* The term has master, pidfd and the helper's connection; they stay
	 * in the store as they are. Our own snapshot replaces the handed one. */
	close(r->handed[FD_SNAPSHOT]);
	for (int i = 0; i < _FD_MAX; i++)
		r->handed[i] = -1;
	r->stored = true;
	r->replace_snapshot = true;
}

bool restore_active(const struct restore *r)
{
	return r && r->cfg.enabled && r->snap;
}

void restore_update(struct restore *r, struct term *t)
{
	int e;

	if (!restore_active(r) || !t || !r->live)
		return;
	e = snapshot_update(r->snap, term_screen(t), term_stream(t), term_clusters(t));
	if (e < 0)
		log_debug_errno(e, "Failed to update the snapshot: %m");
}

bool restore_update_flood(struct restore *r, struct term *t)
{
	int e;

	if (!restore_active(r) || !t || !r->live)
		return false;
	e = snapshot_update_flood(r->snap, term_screen(t), term_stream(t), term_clusters(t));
	if (e < 0)
		log_debug_errno(e, "Failed to update the snapshot: %m");
	return e != 0;
}

void restore_session_started(struct restore *r, struct term *t)
{
	int e;

	if (!r->cfg.enabled)
		return;
	if (!r->snap && !r->unsupported) {
		if (!snapshot_supported(term_screen(t))) {
			log_warning("This libtsm's screen is not laid out as libtsm 4.0.2's: "
				    "session restore is off");
			r->unsupported = true;
		} else {
			e = snapshot_new(r->cfg.sb_size, &r->snap);
			if (e < 0) {
				log_warning_errno(e,
						  "Failed to make a snapshot, session restore is "
						  "off: %m");
				r->unsupported = true;
			}
		}
	}
	if (!r->snap) {
		if (r->stored) {
			/* an adopted session we cannot keep fresh */
			store_remove_all(r);
			r->stored = false;
		}
		return;
	}
	/* Written once before it is stored: the store never has an empty one. */
	r->live = true;
	restore_update(r, t);
	if (!r->cfg.store)
		return;
	if (r->replace_snapshot) {
		/* The handed snapshot goes, ours comes (a crash between the two
		 * costs the session: a missing snapshot gives a new one). */
		store_remove(r, r->names[FD_SNAPSHOT]);
		if (store_add(r->names[FD_SNAPSHOT], snapshot_fd(r->snap), true) < 0) {
			store_remove_all(r);
			r->stored = false;
		}
		r->replace_snapshot = false;
		return;
	}
	if (term_pidfd(t) < 0 || term_master_fd(t) < 0)
		return;
	/* The snapshot first, the pty last: a set without its pty is dropped
	 * at the next start, and a pty is never kept without the rest. The
	 * helper's connection lets a successor ask for the session's
	 * activation (a seat without VTs) and hear its exit status; PID 1
	 * drops it when the helper hangs up (polled). */
	if (store_add(r->names[FD_SNAPSHOT], snapshot_fd(r->snap), true) < 0 ||
	    store_add(r->names[FD_PIDFD], term_pidfd(t), true) < 0 ||
	    (term_helper_fd(t) >= 0 &&
	     store_add(r->names[FD_HELPER], term_helper_fd(t), true) < 0) ||
	    store_add(r->names[FD_PTY], term_master_fd(t), false) < 0) {
		store_remove_all(r);
		return;
	}
	r->stored = true;
	log_debug("The session's %s, %s and %s are in the fd store", r->names[FD_PTY],
		  r->names[FD_PIDFD], r->names[FD_SNAPSHOT]);
}

void restore_session_ended(struct restore *r)
{
	if (r->stored) {
		store_remove_all(r);
		r->stored = false;
	}
	r->replace_snapshot = false;
	r->live = false;
	if (r->snap)
		snapshot_reset(r->snap);
}

void restore_free(struct restore *r)
{
	if (!r)
		return;
	/* Nothing leaves the store here: systemctl restart keeps it for our
	 * successor, systemctl stop makes PID 1 drop it. */
	for (int i = 0; i < _FD_MAX; i++)
		if (r->handed[i] >= 0)
			close(r->handed[i]);
	snapshot_free(r->snap);
	free(r);
}
