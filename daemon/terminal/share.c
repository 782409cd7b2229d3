/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "share"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <systemd/sd-login.h>

#include "selection.h"
#include "share.h"
#include "../util/log.h"
#include "../util/util.h"

/* UNIX98_PTY_SLAVE_MAJOR .. + UNIX98_PTY_MAJOR_COUNT - 1 (linux/major.h) */
#define PTY_SLAVE_MAJOR_FIRST 136
#define PTY_SLAVE_MAJOR_LAST 143

struct share {
	char *dir;
	bool usable;
	sd_login_monitor *monitors[2];
	sd_event_source *sources[2];
	/* what was last logged for this VT: -1 not shared */
	int64_t logged_uid;
};

/* ---- the store ------------------------------------------------------------ */

static void store_name(uid_t uid, char *buf, size_t size)
{
	snprintf(buf, size, SHARE_PREFIX "%" PRIu32, (uint32_t)uid);
}

static int open_dir(const char *dir)
{
	struct statfs sfs;
	struct stat st;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || fstatfs(fd, &sfs) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 077)) {
		close(fd);
		return -EPERM;
	}
	if ((unsigned long)sfs.f_type != TMPFS_MAGIC && (unsigned long)sfs.f_type != RAMFS_MAGIC) {
		close(fd);
		return -EXDEV;
	}
	return fd;
}

int share_store_check_dir(const char *dir)
{
	int fd = open_dir(dir);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int share_store_write(const char *dir, uid_t uid, const char *buf, size_t len)
{
	char name[64], tmp[96];
	int dfd, fd, r;

	if (len > SELECTION_MAX)
		return -EFBIG;
	if (len == 0)
		return share_store_remove(dir, uid);
	dfd = open_dir(dir);
	if (dfd < 0)
		return dfd;
	store_name(uid, name, sizeof(name));
	snprintf(tmp, sizeof(tmp), ".%s.%ld.tmp", name, (long)getpid());
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST) {
		/* left by a process of the same pid: ours to replace */
		unlinkat(dfd, tmp, 0);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	}
	if (fd < 0) {
		r = -errno;
		close(dfd);
		return r;
	}
	r = fchmod(fd, 0600) < 0 ? -errno : write_all(fd, buf, len);
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(dfd, tmp, dfd, name) < 0)
		r = -errno;
	if (r < 0)
		unlinkat(dfd, tmp, 0);
	close(dfd);
	return r;
}

int share_store_read(const char *dir, uid_t uid, char **ret, size_t *ret_len)
{
	char name[64], *buf = NULL;
	struct stat st;
	size_t len = 0;
	int dfd, fd, r = 0;

	*ret = NULL;
	*ret_len = 0;
	dfd = open_dir(dir);
	if (dfd < 0)
		return dfd;
	store_name(uid, name, sizeof(name));
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	r = fd < 0 ? -errno : 0;
	close(dfd);
	if (r < 0)
		return r;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 07777) != 0600 ||
		 st.st_nlink != 1)
		r = -EPERM;
	else if (st.st_size > SELECTION_MAX)
		r = -EFBIG;
	if (r == 0 && st.st_size > 0) {
		/* one more byte than allowed: a file that grew is refused too */
		buf = xmalloc(SELECTION_MAX + 1);
		while (len <= SELECTION_MAX) {
			ssize_t n = read(fd, buf + len, SELECTION_MAX + 1 - len);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				r = -errno;
				break;
			}
			if (n == 0)
				break;
			len += (size_t)n;
		}
		if (r == 0 && len > SELECTION_MAX)
			r = -EFBIG;
		if (r < 0) {
			explicit_bzero(buf, SELECTION_MAX + 1);
			free(buf);
			buf = NULL;
			len = 0;
		}
	}
	close(fd);
	*ret = buf;
	*ret_len = len;
	return r;
}

int share_store_remove(const char *dir, uid_t uid)
{
	char name[64];
	int dfd = open_dir(dir), r = 0;

	if (dfd < 0)
		return dfd;
	store_name(uid, name, sizeof(name));
	if (unlinkat(dfd, name, 0) < 0)
		r = -errno;
	close(dfd);
	return r;
}

int share_store_sweep(const char *dir, bool (*keep)(uid_t uid, void *userdata), void *userdata)
{
	int dfd = open_dir(dir), n = 0;
	struct dirent *de;
	DIR *d;

	if (dfd < 0)
		return dfd;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -errno;
	}
	while ((de = readdir(d))) {
		const char *p = de->d_name + strlen(SHARE_PREFIX);
		char *end;
		unsigned long v;

		if (strncmp(de->d_name, SHARE_PREFIX, strlen(SHARE_PREFIX)) != 0 || *p < '0' ||
		    *p > '9')
			continue;
		errno = 0;
		v = strtoul(p, &end, 10);
		if (errno || *end || v > UINT32_MAX - 1)
			continue;
		if (keep(v, userdata))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == 0)
			n++;
	}
	closedir(d);
	return n;
}

/* ---- logind --------------------------------------------------------------- */

/* Whether uid has a session that is not closing (and, with tty, one on that
 * tty: "pts/N"). */
static bool uid_has_session(uid_t uid, const char *tty)
{
	char **sessions = NULL;
	bool found = false;
	int n = sd_uid_get_sessions(uid, 0, &sessions);

	for (int i = 0; i < n && !found; i++) {
		char *state = NULL, *stty = NULL;
		uid_t suid;

		if (sd_session_get_uid(sessions[i], &suid) >= 0 && suid == uid &&
		    sd_session_get_state(sessions[i], &state) >= 0 &&
		    strcmp(state, "closing") != 0) {
			if (!tty)
				found = true;
			else if (sd_session_get_tty(sessions[i], &stty) >= 0)
				found = strcmp(stty, tty) == 0 || (strncmp(stty, "/dev/", 5) == 0 &&
								   strcmp(stty + 5, tty) == 0);
		}
		free(state);
		free(stty);
	}
	for (int i = 0; i < n; i++)
		free(sessions[i]);
	free(sessions);
	return found;
}

static bool keep_logged_in(uid_t uid, void *userdata)
{
	(void)userdata;
	return uid_has_session(uid, NULL);
}

static void share_log(struct share *sh, int64_t uid)
{
	if (sh->logged_uid == uid)
		return;
	sh->logged_uid = uid;
	if (uid < 0)
		log_info("The selection buffer is this VT's own (no logged-in user confirmed by "
			 "logind)");
	else
		log_info("The selection buffer is shared between the sessions of uid %" PRId64,
			 uid);
}

int share_uid(struct share *sh, int master_fd, uid_t *ret)
{
	char path[64], tty[32];
	unsigned ptn;
	struct stat st;

	if (!sh || !sh->usable)
		return -EOPNOTSUPP;
	if (master_fd < 0 || ioctl(master_fd, TIOCGPTN, &ptn) < 0) {
		share_log(sh, -1);
		return -ENOTTY;
	}
	snprintf(tty, sizeof(tty), "pts/%u", ptn);
	snprintf(path, sizeof(path), "/dev/%s", tty);
	if (stat(path, &st) < 0 || !S_ISCHR(st.st_mode) ||
	    major(st.st_rdev) < PTY_SLAVE_MAJOR_FIRST || major(st.st_rdev) > PTY_SLAVE_MAJOR_LAST) {
		share_log(sh, -1);
		return -ENOTTY;
	}
	if (!uid_has_session(st.st_uid, tty)) {
		share_log(sh, -1);
		return -ESRCH;
	}
	share_log(sh, st.st_uid);
	*ret = st.st_uid;
	return 0;
}

void share_copied(struct share *sh, int master_fd, const char *buf, size_t len)
{
	uid_t uid;
	int r;

	if (share_uid(sh, master_fd, &uid) < 0)
		return;
	r = share_store_write(sh->dir, uid, buf, len);
	if (r < 0 && !(r == -ENOENT && len == 0))
		log_warning_errno(r, "Failed to store the shared selection buffer: %m");
	/* the session may have closed meanwhile, after a sweep */
	if (!uid_has_session(uid, NULL))
		share_store_remove(sh->dir, uid);
}

int share_get(struct share *sh, int master_fd, char **ret, size_t *ret_len)
{
	uid_t uid;
	int r;

	if (share_uid(sh, master_fd, &uid) < 0)
		return 0;
	r = share_store_read(sh->dir, uid, ret, ret_len);
	if (r == -ENOENT)
		return 0;
	if (r < 0) {
		log_warning_errno(r, "Refusing the shared selection buffer of uid %" PRIu32 ": %m",
				  (uint32_t)uid);
		return 0;
	}
	return 1;
}

void share_sweep(struct share *sh)
{
	int r;

	if (!sh || !sh->usable)
		return;
	r = share_store_sweep(sh->dir, keep_logged_in, NULL);
	if (r > 0)
		log_debug("Wiped %d shared selection buffer(s) of users without sessions", r);
}

static int share_on_login(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct share *sh = userdata;

	(void)fd;
	(void)revents;
	for (size_t i = 0; i < ELEMENTSOF(sh->sources); i++)
		if (sh->sources[i] == s)
			sd_login_monitor_flush(sh->monitors[i]);
	share_sweep(sh);
	return 0;
}

int share_new(sd_event *event, const char *dir, struct share **ret)
{
	static const char *const categories[] = {"session", "uid"};
	struct share *sh = xcalloc(1, sizeof(*sh));
	int r;

	sh->dir = xstrdup(dir);
	sh->logged_uid = -2;
	r = share_store_check_dir(dir);
	if (r < 0) {
		log_info_errno(r,
			       "%s is not a private directory in memory (%m): the selection buffer "
			       "stays per VT",
			       dir);
		*ret = sh;
		return 0;
	}
	for (size_t i = 0; i < ELEMENTSOF(categories); i++) {
		r = sd_login_monitor_new(categories[i], &sh->monitors[i]);
		if (r >= 0)
			r = sd_event_add_io(event, &sh->sources[i],
					    sd_login_monitor_get_fd(sh->monitors[i]),
					    (uint32_t)sd_login_monitor_get_events(sh->monitors[i]),
					    share_on_login, sh);
		if (r < 0) {
			log_info_errno(r,
				       "Cannot watch logind's sessions (%m): the selection buffer "
				       "stays per VT");
			*ret = sh;
			return 0;
		}
	}
	sh->usable = true;
	share_sweep(sh);
	*ret = sh;
	return 0;
}

void share_free(struct share *sh)
{
	if (!sh)
		return;
	for (size_t i = 0; i < ELEMENTSOF(sh->sources); i++) {
		sd_event_source_unref(sh->sources[i]);
		sd_login_monitor_unref(sh->monitors[i]);
	}
	free(sh->dir);
	free(sh);
}
