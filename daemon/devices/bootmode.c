/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "fbdev"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bootmode.h"
#include "../util/log.h"
#include "../util/util.h"

#define BOOTMODE_MAGIC "CNSDMODE"
#define BOOTMODE_VERSION 1u

/* The file: written and read by consoled of the same boot (the boot id is
 * part of the identity), so the machine's own layout is fine. */
struct bootmode_file {
	char magic[8];
	uint32_t version;
	uint32_t size;
	struct bootmode_identity ident;
	struct bootmode mode;
};

void bootmode_identity_init(struct bootmode_identity *ident, const struct fb_fix_screeninfo *fix)
{
	char boot_id[64] = "";

	memset(ident, 0, sizeof(*ident));
	memcpy(ident->id, fix->id, MIN(sizeof(ident->id), sizeof(fix->id)));
	ident->smem_start = fix->smem_start;
	ident->smem_len = fix->smem_len;
	if (read_small_file("/proc/sys/kernel/random/boot_id", boot_id, sizeof(boot_id)) == 0)
		snprintf(ident->boot_id, sizeof(ident->boot_id), "%.36s", boot_id);
}

/* Only root may have written what we trust: the directory and the file are
 * root's and closed to everyone else. */
static int check_private(const struct stat *st, mode_t type, const char *what, const char *path)
{
	if ((st->st_mode & S_IFMT) != type || st->st_uid != 0 || (st->st_mode & 0077))
		return log_warning_errno(EPERM,
					 "%s %s is not root's alone (owner %u, mode %04o), not "
					 "using it",
					 what, path, (unsigned)st->st_uid,
					 (unsigned)(st->st_mode & 07777));
	return 0;
}

static int bootmode_open_dir(const char *dir, bool create)
{
	struct stat st;
	int fd;

	if (create && mkdir(dir, 0700) < 0 && errno != EEXIST)
		return log_warning_errno(errno, "Cannot create %s: %m", dir);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return log_warning_errno(errno, "Cannot open %s: %m", dir);
	if (fstat(fd, &st) < 0 || check_private(&st, S_IFDIR, "Directory", dir) < 0) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* 1 and *ret: a valid file for this device; 0: none or not this device's
 * (or not trustworthy); negative: cannot read. */
static int bootmode_read(int dfd, const char *dir, const char *name,
			 const struct bootmode_identity *ident, bool replace, struct bootmode *ret)
{
	const char *then = replace ? "replacing it" : "ignoring it";

	struct bootmode_file f;
	struct stat st;
	ssize_t n;
	int fd;

	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT
			   ? 0
			   : log_warning_errno(errno, "Cannot open %s/%s: %m", dir, name);
	if (fstat(fd, &st) < 0 || check_private(&st, S_IFREG, "Saved mode", name) < 0) {
		close(fd);
		return 0;
	}
	n = read(fd, &f, sizeof(f));
	close(fd);
	if (n != (ssize_t)sizeof(f) || memcmp(f.magic, BOOTMODE_MAGIC, 8) != 0 ||
	    f.version != BOOTMODE_VERSION || f.size != sizeof(f) || f.mode.cmap_len > 256) {
		log_warning("%s/%s is not a saved mode of this version, %s", dir, name, then);
		return 0;
	}
	if (memcmp(&f.ident, ident, sizeof(*ident)) != 0) {
		log_info("%s/%s describes another device or boot (%.16s), %s", dir, name,
			 f.ident.id, then);
		return 0;
	}
	*ret = f.mode;
	return 1;
}

int bootmode_load_or_save(const char *dir, const char *name, const struct bootmode_identity *ident,
			  const struct bootmode *current, struct bootmode *ret)
{
	struct bootmode_file f = {
	    .magic = BOOTMODE_MAGIC, .version = BOOTMODE_VERSION, .size = sizeof(f)};
	char tmp[64];
	int dfd, fd, r;

	dfd = bootmode_open_dir(dir, true);
	if (dfd < 0)
		return dfd;
	r = bootmode_read(dfd, dir, name, ident, true, ret);
	if (r != 0)
		goto out;

	/* Ours is the first look at the device: its mode now is the boot
	 * mode. Stale or foreign files go; a new one is linked into place, so
	 * a racing instance either finds ours or we find theirs. */
	f.ident = *ident;
	f.mode = *current;
	snprintf(tmp, sizeof(tmp), ".%s.%d", name, (int)getpid());
	unlinkat(dfd, tmp, 0);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		r = log_warning_errno(errno, "Cannot save the boot mode in %s: %m", dir);
		goto out;
	}
	if (write(fd, &f, sizeof(f)) != (ssize_t)sizeof(f)) {
		r = log_warning_errno(errno ? errno : EIO, "Cannot save the boot mode in %s: %m",
				      dir);
		close(fd);
		unlinkat(dfd, tmp, 0);
		goto out;
	}
	close(fd);
	r = -EEXIST;
	for (int tries = 0; tries < 2; tries++) {
		int k;

		if (linkat(dfd, tmp, dfd, name, 0) == 0) {
			*ret = *current;
			log_info("Boot mode of the framebuffer saved in %s/%s", dir, name);
			r = 0;
			break;
		}
		if (errno != EEXIST) {
			r = log_warning_errno(errno, "Cannot save the boot mode in %s: %m", dir);
			break;
		}
		/* Another instance was first, or a stale file is in the way. */
		k = bootmode_read(dfd, dir, name, ident, true, ret);
		if (k != 0) {
			r = k;
			break;
		}
		if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT) {
			r = log_warning_errno(errno, "Cannot replace %s/%s: %m", dir, name);
			break;
		}
	}
	if (r == -EEXIST)
		log_warning("Cannot save the boot mode in %s: %s keeps coming back", dir, name);
	unlinkat(dfd, tmp, 0);
out:
	close(dfd);
	return r;
}

int bootmode_load(const char *dir, const char *name, const struct bootmode_identity *ident,
		  struct bootmode *ret)
{
	int dfd, r;

	dfd = bootmode_open_dir(dir, false);
	if (dfd < 0)
		return dfd;
	r = bootmode_read(dfd, dir, name, ident, false, ret);
	close(dfd);
	return r;
}

int bootmode_drop(const char *dir, const char *name, const struct bootmode_identity *ident)
{
	struct bootmode mode;
	int dfd, r;

	dfd = bootmode_open_dir(dir, false);
	if (dfd < 0)
		return dfd == -ENOENT ? 0 : dfd;
	r = bootmode_read(dfd, dir, name, ident, false, &mode);
	if (r > 0 && unlinkat(dfd, name, 0) < 0)
		r = errno == ENOENT
			? 0
			: log_warning_errno(errno, "Cannot remove %s/%s: %m", dir, name);
	close(dfd);
	return r;
}
