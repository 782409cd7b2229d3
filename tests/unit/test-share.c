/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The shared selection store (daemon/terminal/share.c): names, modes, what a read
 * refuses, the size limit, the sweep; on a real tmpfs (/dev/shm) and a
 * directory on disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "../../daemon/terminal/selection.h"
#include "../../daemon/terminal/share.h"
#include "tests.h"

static char dir[64];

static void path_of(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", dir, name);
}

static void put_file(const char *name, const char *text, size_t len, mode_t mode)
{
	char p[128];
	int fd;

	path_of(p, sizeof(p), name);
	unlink(p);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, mode);
	CHECK(fd >= 0);
	CHECK(write(fd, text, len) == (ssize_t)len);
	CHECK(fchmod(fd, mode) == 0);
	close(fd);
}

static int read_back(uid_t uid, const char *expect)
{
	char *buf = NULL;
	size_t len;
	int r = share_store_read(dir, uid, &buf, &len);

	if (r == 0 && expect)
		CHECK(len == strlen(expect) && memcmp(buf, expect, len) == 0);
	free(buf);
	return r;
}

static void test_write_read(void)
{
	struct stat st;
	char p[128];

	CHECK(share_store_check_dir(dir) == 0);
	CHECK(share_store_write(dir, 1000, "copied text\n", 12) == 0);
	path_of(p, sizeof(p), "selection-1000");
	CHECK(lstat(p, &st) == 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ_U(st.st_mode & 07777, 0600);
	CHECK_EQ_U(st.st_uid, geteuid());
	CHECK(read_back(1000, "copied text\n") == 0);
	/* another uid: its own file, none for the others */
	CHECK(read_back(1001, NULL) == -ENOENT);
	CHECK(share_store_write(dir, 0, "root's", 6) == 0);
	CHECK(read_back(0, "root's") == 0);
	CHECK(read_back(1000, "copied text\n") == 0);
	/* replaced whole; no temporary file left */
	CHECK(share_store_write(dir, 1000, "new", 3) == 0);
	CHECK(read_back(1000, "new") == 0);
	path_of(p, sizeof(p), ".selection-1000.0.tmp");
	snprintf(p, sizeof(p), "%s/.selection-1000.%ld.tmp", dir, (long)getpid());
	CHECK(access(p, F_OK) < 0 && errno == ENOENT);
	/* a stale temporary file of our pid (a crash) is replaced */
	CHECK(close(open(p, O_WRONLY | O_CREAT, 0644)) == 0);
	CHECK(share_store_write(dir, 1000, "again", 5) == 0);
	CHECK(read_back(1000, "again") == 0);
	CHECK(access(p, F_OK) < 0);
	/* empty: removed */
	CHECK(share_store_write(dir, 1000, "", 0) == 0);
	CHECK(read_back(1000, NULL) == -ENOENT);
	CHECK(share_store_remove(dir, 0) == 0);
	CHECK(share_store_remove(dir, 0) == -ENOENT);
}

static void test_refusals(void)
{
	char p[128], target[128];

	/* a symlink to a good file */
	CHECK(share_store_write(dir, 7, "good", 4) == 0);
	path_of(target, sizeof(target), "selection-7");
	path_of(p, sizeof(p), "selection-8");
	CHECK(symlink(target, p) == 0);
	CHECK(read_back(8, NULL) == -ELOOP);
	/* a write replaces the symlink itself, never writes through it */
	CHECK(share_store_write(dir, 8, "mine", 4) == 0);
	CHECK(read_back(7, "good") == 0);
	CHECK(read_back(8, "mine") == 0);
	/* wrong modes */
	put_file("selection-9", "x", 1, 0644);
	CHECK(read_back(9, NULL) == -EPERM);
	put_file("selection-9", "x", 1, 0640);
	CHECK(read_back(9, NULL) == -EPERM);
	put_file("selection-9", "x", 1, 0600);
	CHECK(read_back(9, "x") == 0);
	/* a second link (someone else's file linked in) */
	path_of(p, sizeof(p), "extra-link");
	CHECK(link(target, p) == 0);
	CHECK(read_back(7, NULL) == -EPERM);
	unlink(p);
	CHECK(read_back(7, "good") == 0);
	/* a FIFO does not block the read, and is refused */
	path_of(p, sizeof(p), "selection-10");
	CHECK(mkfifo(p, 0600) == 0);
	CHECK(read_back(10, NULL) == -EPERM);
	/* a file of another owner */
	if (geteuid() == 0) {
		put_file("selection-11", "x", 1, 0600);
		path_of(p, sizeof(p), "selection-11");
		CHECK(chown(p, 1, 1) == 0);
		CHECK(read_back(11, NULL) == -EPERM);
	} else
		fprintf(stderr, "not root: the wrong-owner case is skipped\n");
}

static void test_size(void)
{
	char *big = malloc(SELECTION_MAX + 2);

	memset(big, 'a', SELECTION_MAX + 1);
	big[SELECTION_MAX + 1] = 0;
	CHECK(share_store_write(dir, 20, big, SELECTION_MAX + 1) == -EFBIG);
	CHECK(read_back(20, NULL) == -ENOENT);
	CHECK(share_store_write(dir, 20, big, SELECTION_MAX) == 0);
	big[SELECTION_MAX] = 0;
	CHECK(read_back(20, big) == 0);
	big[SELECTION_MAX] = 'a';
	put_file("selection-21", big, SELECTION_MAX + 1, 0600);
	CHECK(read_back(21, NULL) == -EFBIG);
	free(big);
}

static bool keep_1000(uid_t uid, void *userdata)
{
	(*(int *)userdata)++;
	return uid == 1000;
}

static void test_sweep(void)
{
	char p[128];
	int asked = 0;

	CHECK(share_store_write(dir, 1000, "a", 1) == 0);
	CHECK(share_store_write(dir, 1001, "b", 1) == 0);
	CHECK(share_store_write(dir, 0, "c", 1) == 0);
	put_file("other", "o", 1, 0600);
	put_file("selection-x1", "o", 1, 0600);
	CHECK(share_store_sweep(dir, keep_1000, &asked) >= 2);
	CHECK(read_back(1000, "a") == 0);
	CHECK(read_back(1001, NULL) == -ENOENT);
	CHECK(read_back(0, NULL) == -ENOENT);
	path_of(p, sizeof(p), "other");
	CHECK(access(p, F_OK) == 0);
	path_of(p, sizeof(p), "selection-x1");
	CHECK(access(p, F_OK) == 0);
	CHECK(asked >= 3);
}

static void test_bad_dirs(void)
{
	char disk[] = "test-share-disk-XXXXXX", link_path[128];

	/* group or others may enter */
	CHECK(chmod(dir, 0755) == 0);
	CHECK(share_store_check_dir(dir) == -EPERM);
	CHECK(share_store_write(dir, 1, "x", 1) == -EPERM);
	CHECK(read_back(1000, NULL) == -EPERM);
	CHECK(chmod(dir, 0700) == 0);
	/* the directory through a symlink */
	snprintf(link_path, sizeof(link_path), "%s-link", dir);
	CHECK(symlink(dir, link_path) == 0);
	CHECK(share_store_check_dir(link_path) < 0);
	CHECK(share_store_write(link_path, 1, "x", 1) < 0);
	unlink(link_path);
	/* not in memory: the build directory's file system, unless it is tmpfs */
	CHECK(mkdtemp(disk) != NULL);
	CHECK(chmod(disk, 0700) == 0);
	struct statfs sfs;
	CHECK(statfs(disk, &sfs) == 0);
	if (sfs.f_type != 0x01021994 /* TMPFS_MAGIC */) {
		CHECK(share_store_check_dir(disk) == -EXDEV);
		CHECK(share_store_write(disk, 1, "x", 1) == -EXDEV);
	} else
		fprintf(stderr, "the build directory is on tmpfs: the disk case is skipped\n");
	rmdir(disk);
	CHECK(share_store_check_dir("/nonexistent-consoled") == -ENOENT);
}

int main(void)
{
	char cmd[128];

	snprintf(dir, sizeof(dir), "/dev/shm/test-share-XXXXXX");
	if (!mkdtemp(dir)) {
		fprintf(stderr, "no /dev/shm: skipped\n");
		return 77;
	}
	RUN(test_write_read);
	RUN(test_refusals);
	RUN(test_size);
	RUN(test_sweep);
	RUN(test_bad_dirs);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return tests_failed;
}
