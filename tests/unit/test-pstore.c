/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The last boot's crash from pstore (daemon/util/pstore.h) on sample files
 * in a temporary directory: a ramoops panic, an oops, an EFI dump in three
 * parts among other dumps, systemd-pstore's archive (252's EFI
 * subdirectory and flat ramoops, 253's ID/COUNT/), records too old or from
 * this boot, and hostile files (garbage, a FIFO, a symlink out, a file
 * larger than the cap, a compressed record).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../daemon/util/pstore.h"
#include "../../daemon/util/util.h"
#include "tests.h"

#define BOOT ((int64_t)1800000000)

static char root[64];

static void path_of(char *buf, size_t size, const char *rel)
{
	snprintf(buf, size, "%s/%s", root, rel);
}

static void mkdir_at(const char *rel, int64_t mtime)
{
	char p[512];
	struct timespec ts[2] = {{(time_t)mtime, 0}, {(time_t)mtime, 0}};

	path_of(p, sizeof(p), rel);
	CHECK(mkdir(p, 0755) == 0 || errno == EEXIST);
	CHECK(utimensat(AT_FDCWD, p, ts, 0) == 0);
}

static void touch_dir(const char *rel, int64_t mtime)
{
	char p[512];
	struct timespec ts[2] = {{(time_t)mtime, 0}, {(time_t)mtime, 0}};

	path_of(p, sizeof(p), rel);
	CHECK(utimensat(AT_FDCWD, p, ts, 0) == 0);
}

static void put(const char *rel, const char *data, size_t len, int64_t mtime)
{
	char p[512];
	struct timespec ts[2] = {{(time_t)mtime, 0}, {(time_t)mtime, 0}};
	FILE *f;

	path_of(p, sizeof(p), rel);
	f = fopen(p, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	CHECK(fwrite(data, 1, len, f) == len);
	fclose(f);
	CHECK(utimensat(AT_FDCWD, p, ts, 0) == 0);
}

static void puts_at(const char *rel, const char *text, int64_t mtime)
{
	put(rel, text, strlen(text), mtime);
}

static void reset(void)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf %s/pstore %s/archive", root, root);
	CHECK(system(cmd) == 0);
	mkdir_at("pstore", BOOT);
	mkdir_at("archive", BOOT - 86400);
}

static int find(bool text, struct pstore_crash *c)
{
	char ps[512], ar[512];

	path_of(ps, sizeof(ps), "pstore");
	path_of(ar, sizeof(ar), "archive");
	return pstore_find(&(struct pstore_paths){ps, ar}, BOOT, text, c);
}

static const char panic_text[] =
    "Panic#1 Part1\n"
    "<6>[    0.000000] Linux version 6.1.0-57-amd64\n"
    "<6>[   20.500000] sysrq: Trigger a crash\n"
    "<0>[   20.500100] Kernel panic - not syncing: sysrq triggered crash\n";

static void test_ramoops_panic(void)
{
	struct pstore_crash c = {};

	reset();
	puts_at("pstore/dmesg-ramoops-0", panic_text, BOOT - 30);
	puts_at("pstore/console-ramoops-0", "Panic#9 Part1\nnot a dmesg file\n", BOOT - 10);
	CHECK_EQ_U(find(true, &c), 1);
	CHECK_EQ_U(c.reason, PSTORE_PANIC);
	CHECK(!c.archived);
	CHECK(strcmp(c.where, "pstore dmesg-ramoops-0") == 0);
	CHECK_EQ_U(c.parts, 1);
	CHECK_EQ_U(c.time, BOOT - 30);
	CHECK(c.text && strcmp(c.text, panic_text + strlen("Panic#1 Part1\n")) == 0);
	CHECK_EQ_U(c.len, strlen(panic_text) - strlen("Panic#1 Part1\n"));
	CHECK(strcmp(pstore_reason_name(c.reason), "panic") == 0);
	pstore_crash_fini(&c);
	/* without the text: the same record, no text read */
	CHECK_EQ_U(find(false, &c), 1);
	CHECK(c.text == NULL);
	CHECK(strcmp(c.where, "pstore dmesg-ramoops-0") == 0);
}

static void test_oops(void)
{
	struct pstore_crash c = {};

	reset();
	puts_at("pstore/dmesg-ramoops-0",
		"Oops#1 Part1\r\n<4>[    5.000000] BUG: kernel NULL pointer dereference\n",
		BOOT - 100);
	/* an older panic, and a newer record that is no crash */
	puts_at("pstore/dmesg-ramoops-1", panic_text, BOOT - 200);
	puts_at("pstore/dmesg-ramoops-2", "Emergency#1 Part1\n<0>[ 1.000000] x\n", BOOT - 50);
	CHECK_EQ_U(find(true, &c), 1);
	CHECK_EQ_U(c.reason, PSTORE_OOPS);
	CHECK(strcmp(c.where, "pstore dmesg-ramoops-0") == 0);
	CHECK(c.text && strstr(c.text, "NULL pointer") && !strstr(c.text, "Oops#1"));
	CHECK(strcmp(pstore_reason_name(c.reason), "oops") == 0);
	pstore_crash_fini(&c);
	/* at the same time a panic comes before an oops */
	puts_at("pstore/dmesg-ramoops-1", panic_text, BOOT - 100);
	CHECK_EQ_U(find(false, &c), 1);
	CHECK_EQ_U(c.reason, PSTORE_PANIC);
	CHECK(strcmp(c.where, "pstore dmesg-ramoops-1") == 0);
}

/* An efi-pstore dump: ids (time * 100 + part) * 1000 + count. */
static void put_efi(const char *dir, int64_t t, unsigned part, unsigned count, const char *reason,
		    const char *line, int64_t mtime)
{
	char rel[256], text[256];

	snprintf(rel, sizeof(rel), "%s/dmesg-efi-%lld%02u%03u", dir, (long long)t, part, count);
	snprintf(text, sizeof(text), "%s#%u Part%u\n%s\n", reason, count, part, line);
	puts_at(rel, text, mtime);
}

static void test_efi_parts(void)
{
	struct pstore_crash c = {};
	int64_t t = BOOT - 40;

	reset();
	/* the dump: Part3 the oldest text, Part1 the newest; Part2's id
	 * crossed a second */
	put_efi("pstore", t, 1, 1, "Panic", "<0>[   20.000003] part one", t);
	put_efi("pstore", t + 1, 2, 1, "Panic", "<6>[   20.000002] part two", t + 1);
	put_efi("pstore", t, 3, 1, "Panic", "<6>[   20.000001] part three", t);
	/* an earlier boot's oops of the same backend, a day older: no part of it */
	put_efi("pstore", t - 86400, 1, 1, "Oops", "<4>[ 1.000000] old one", t - 86400);
	put_efi("pstore", t - 86400, 4, 1, "Panic", "<4>[ 1.000000] old four", t - 86400);
	CHECK_EQ_U(find(true, &c), 1);
	CHECK_EQ_U(c.reason, PSTORE_PANIC);
	CHECK_EQ_U(c.parts, 3);
	CHECK(strncmp(c.where, "pstore dmesg-efi-", 17) == 0 && strstr(c.where, "01001"));
	CHECK(c.text && strcmp(c.text, "<6>[   20.000001] part three\n"
				       "<6>[   20.000002] part two\n"
				       "<0>[   20.000003] part one\n") == 0);
	pstore_crash_fini(&c);
}

static void test_archive(void)
{
	struct pstore_crash c = {};
	char want[512];
	int64_t t = BOOT - 40, now = BOOT + 3;

	/* systemd 252: EFI parts in ID (less 6 digits)/ with a dmesg.txt */
	reset();
	mkdir_at("archive/1799999960", now);
	put_efi("archive/1799999960", t, 1, 1, "Panic", "<0>[   9.000002] efi newest", now);
	put_efi("archive/1799999960", t, 2, 1, "Panic", "<6>[   9.000001] efi oldest", now);
	puts_at("archive/1799999960/dmesg.txt", "dmesg-efi-x:\nPanic#1 Part1\n", now);
	touch_dir("archive/1799999960", now);
	CHECK_EQ_U(find(true, &c), 1);
	CHECK(c.archived);
	CHECK_EQ_U(c.parts, 2);
	path_of(want, sizeof(want), "archive/1799999960/dmesg-efi-179999996001001");
	CHECK(strcmp(c.where, want) == 0);
	CHECK(c.text && strcmp(c.text, "<6>[   9.000001] efi oldest\n"
				       "<0>[   9.000002] efi newest\n") == 0);
	pstore_crash_fini(&c);

	/* systemd 252: ramoops flat, beside an old subdirectory */
	reset();
	mkdir_at("archive/1700000000", BOOT - 86400 * 30);
	put_efi("archive/1700000000", 1700000000, 1, 1, "Panic", "<0>[ 1.0] old",
		BOOT - 86400 * 30);
	touch_dir("archive/1700000000", BOOT - 86400 * 30);
	puts_at("archive/dmesg-ramoops-0", panic_text, now);
	puts_at("archive/dmesg.txt", "dmesg-ramoops-0:\n", now);
	CHECK_EQ_U(find(true, &c), 1);
	path_of(want, sizeof(want), "archive/dmesg-ramoops-0");
	CHECK(c.archived && strcmp(c.where, want) == 0);
	CHECK(c.text && strstr(c.text, "sysrq: Trigger a crash"));
	pstore_crash_fini(&c);

	/* systemd 253: EFI in ID/COUNT/ */
	reset();
	mkdir_at("archive/17999999600", now);
	mkdir_at("archive/17999999600/1", now);
	put_efi("archive/17999999600/1", t, 1, 1, "Oops", "<4>[ 3.000000] two deep", now);
	touch_dir("archive/17999999600/1", now);
	touch_dir("archive/17999999600", now);
	CHECK_EQ_U(find(true, &c), 1);
	CHECK(c.archived && c.reason == PSTORE_OOPS && strstr(c.where, "17999999600/1/dmesg-efi-"));
	pstore_crash_fini(&c);

	/* pstore comes first */
	puts_at("pstore/dmesg-ramoops-0", panic_text, BOOT - 10);
	CHECK_EQ_U(find(false, &c), 1);
	CHECK(!c.archived && c.reason == PSTORE_PANIC);
}

static void test_old_ignored(void)
{
	struct pstore_crash c = {};

	reset();
	/* in pstore for longer than PSTORE_RECENT_SEC before this boot */
	puts_at("pstore/dmesg-ramoops-0", panic_text, BOOT - PSTORE_RECENT_SEC - 1);
	/* made after this boot began (pstore.update_ms): this boot's */
	puts_at("pstore/dmesg-ramoops-1", panic_text, BOOT + 60);
	/* copied to the archive in an earlier boot */
	puts_at("archive/dmesg-ramoops-0", panic_text, BOOT - 1);
	mkdir_at("archive/1799999960", BOOT - 5);
	put_efi("archive/1799999960", BOOT - 5, 1, 1, "Panic", "<0>[ 1.0] x", BOOT + 5);
	touch_dir("archive/1799999960", BOOT - 5);
	CHECK_EQ_U(find(true, &c), 0);
	/* the edge: exactly PSTORE_RECENT_SEC counts */
	puts_at("pstore/dmesg-ramoops-0", panic_text, BOOT - PSTORE_RECENT_SEC);
	CHECK_EQ_U(find(false, &c), 1);
	/* and the clock's slack: a reset within the second */
	puts_at("pstore/dmesg-ramoops-0", panic_text, BOOT + PSTORE_CLOCK_SLACK_SEC);
	CHECK_EQ_U(find(false, &c), 1);
	/* no directories at all */
	CHECK_EQ_U(pstore_find(&(struct pstore_paths){"/nonexistent/pstore", NULL}, BOOT, true, &c),
		   0);
}

static void test_garbage(void)
{
	struct pstore_crash c = {};
	char p[512], target[512];
	static const char *const bad[] = {
	    "",
	    "Panic#1 Part1",	   /* no end of line */
	    "Panic#x Part1\nx\n",  /* no count */
	    "Panic#1 Part0\nx\n",  /* no part 0 */
	    "Panic#1 Part1 \nx\n", /* trailing blank */
	    "panic#1 Part1\nx\n",  /* case */
	    "Panic#12345678901 Part1\nx\n",
	    "\177ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0", /* a binary */
	};
	char *big;
	size_t big_len = PSTORE_FILE_MAX * 2;

	reset();
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		char rel[64];

		snprintf(rel, sizeof(rel), "pstore/dmesg-ramoops-%zu", i);
		put(rel, bad[i], i == ELEMENTSOF(bad) - 1 ? 16 : strlen(bad[i]), BOOT - 10);
	}
	/* a FIFO that nobody writes: skipped, no hang */
	path_of(p, sizeof(p), "pstore/dmesg-ramoops-fifo");
	CHECK(mkfifo(p, 0600) == 0);
	/* a symlink to a good record out of the directory: not followed */
	path_of(target, sizeof(target), "outside");
	puts_at("outside", panic_text, BOOT - 10);
	path_of(p, sizeof(p), "pstore/dmesg-ramoops-link");
	CHECK(symlink(target, p) == 0);
	/* a directory and a compressed record */
	mkdir_at("pstore/dmesg-ramoops-dir", BOOT - 10);
	puts_at("pstore/dmesg-efi-1.enc.z", panic_text, BOOT - 10);
	/* in the archive: a symlinked subdirectory */
	path_of(target, sizeof(target), "pstore");
	path_of(p, sizeof(p), "archive/1799999960");
	CHECK(symlink(target, p) == 0);
	CHECK_EQ_U(find(true, &c), 0);

	/* a record larger than the cap: its text bounded, NUL bytes kept
	 * from ending it */
	big = xmalloc(big_len);
	memset(big, 'a', big_len);
	memcpy(big, "Panic#1 Part1\n<0>[ 1.000000] \0x", 32);
	for (size_t i = 100; i < big_len; i += 80)
		big[i] = '\n';
	put("pstore/dmesg-ramoops-big", big, big_len, BOOT - 10);
	free(big);
	CHECK_EQ_U(find(true, &c), 1);
	CHECK(strcmp(c.where, "pstore dmesg-ramoops-big") == 0);
	CHECK(c.text && c.len <= PSTORE_FILE_MAX && c.len == strlen(c.text));
	CHECK(c.text && c.text[c.len - 1] == '\n');
	pstore_crash_fini(&c);
}

static void test_parse_line(void)
{
	unsigned level = 99;
	uint64_t usec = 0;
	const char *text = NULL;

	CHECK(pstore_parse_line("<6>[   20.500000] sysrq: Trigger a crash", &level, &usec, &text));
	CHECK_EQ_U(level, 6);
	CHECK_EQ_U(usec, 20500000);
	CHECK(strcmp(text, "sysrq: Trigger a crash") == 0);
	/* facility bits dropped */
	CHECK(pstore_parse_line("<12>[12345.000001] user", &level, &usec, &text));
	CHECK_EQ_U(level, 4);
	CHECK_EQ_U(usec, 12345000001);
	level = 99;
	CHECK(!pstore_parse_line("no prefix", &level, &usec, &text));
	CHECK(!pstore_parse_line("<6>[ 1.5] short fraction", &level, &usec, &text));
	CHECK(!pstore_parse_line("<6> [1.000000] blank", &level, &usec, &text));
	CHECK(!pstore_parse_line("<6>[1.000000", &level, &usec, &text));
	CHECK_EQ_U(level, 99);
}

int main(void)
{
	char cmd[256];

	snprintf(root, sizeof(root), "/tmp/test-pstore-XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}
	RUN(test_ramoops_panic);
	RUN(test_oops);
	RUN(test_efi_parts);
	RUN(test_archive);
	RUN(test_old_ignored);
	RUN(test_garbage);
	RUN(test_parse_line);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd) != 0)
		return EXIT_FAILURE;
	return TESTS_RESULT();
}
