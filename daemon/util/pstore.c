/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "pstore.h"
#include "util.h"

const struct pstore_paths pstore_system_paths = {"/sys/fs/pstore", "/var/lib/systemd/pstore"};

/* Directories read in the archive: itself and its recent subdirectories
 * (two levels: systemd 253's ID/COUNT/). */
#define PSTORE_DIRS_MAX 64
#define PSTORE_DEPTH_MAX 2
/* Bytes of a file read for its header line. */
#define PSTORE_HEADER_MAX 64

/* One part of a dump: a file with a crash's header line. */
struct pstore_part {
	unsigned dir; /* index into scan.dirs */
	char name[256];
	enum pstore_reason reason;
	unsigned count, part;
	int64_t time;
};

struct pstore_dir {
	int fd;
	char rel[256]; /* "" for the top, else "ID" or "ID/COUNT" */
};

struct pstore_scan {
	int64_t boot_time;
	bool archive;
	struct pstore_dir dirs[PSTORE_DIRS_MAX];
	unsigned n_dirs;
	struct pstore_part *parts;
	size_t n_parts;
};

int64_t pstore_boot_time(void)
{
	struct timespec real, boot;
	int64_t ns;

	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_BOOTTIME, &boot);
	ns = ((int64_t)real.tv_sec - (int64_t)boot.tv_sec) * 1000000000 +
	     ((int64_t)real.tv_nsec - (int64_t)boot.tv_nsec);
	return ns >= 0 ? ns / 1000000000 : -((-ns + 999999999) / 1000000000);
}

const char *pstore_reason_name(enum pstore_reason r)
{
	return r == PSTORE_PANIC ? "panic" : "oops";
}

/* Digits at *s into *ret (at most 9 of them): false for none or more. */
static bool parse_digits(const char **s, unsigned *ret)
{
	unsigned v = 0, n = 0;

	while (**s >= '0' && **s <= '9') {
		if (++n > 9)
			return false;
		v = v * 10 + (unsigned)(**s - '0');
		(*s)++;
	}
	*ret = v;
	return n > 0;
}

/* "Panic#N PartM\n" or "Oops#N PartM\n" (CR LF too) at the start of buf. */
static bool parse_header(const char *buf, enum pstore_reason *reason, unsigned *count,
			 unsigned *part)
{
	const char *s = buf;

	if (strncmp(s, "Panic#", 6) == 0) {
		*reason = PSTORE_PANIC;
		s += 6;
	} else if (strncmp(s, "Oops#", 5) == 0) {
		*reason = PSTORE_OOPS;
		s += 5;
	} else {
		return false;
	}
	if (!parse_digits(&s, count) || strncmp(s, " Part", 5) != 0)
		return false;
	s += 5;
	if (!parse_digits(&s, part) || *part == 0)
		return false;
	return *s == '\n' || (s[0] == '\r' && s[1] == '\n');
}

/* Opens name in dir as a regular file, no symlink, no blocking. */
static int open_regular(int dir, const char *name, struct stat *st)
{
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		return -EBADF;
	}
	return fd;
}

/* Up to max bytes of fd (a pstore file or a copy: read() may return less
 * than asked before the end). */
static size_t read_bounded(int fd, char *buf, size_t max)
{
	size_t n = 0;

	while (n < max) {
		ssize_t k = read(fd, buf + n, max - n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	return n;
}

static bool recent(const struct pstore_scan *scan, int64_t mtime)
{
	/* the archive: copied at this boot; pstore: made before it, lately */
	if (scan->archive)
		return mtime >= scan->boot_time;
	return mtime <= scan->boot_time + PSTORE_CLOCK_SLACK_SEC &&
	       mtime >= scan->boot_time - PSTORE_RECENT_SEC;
}

/* Names as the kernel and systemd-pstore make them: no byte a terminal
 * would read as a control, since the login screen prints the name. */
static bool name_ok(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' || *s == '.'))
			return false;
	return true;
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* A dmesg file's header, added to the parts when it is a crash's. */
static void scan_file(struct pstore_scan *scan, unsigned dir, const char *name)
{
	char buf[PSTORE_HEADER_MAX + 1];
	struct pstore_part p = {.dir = dir};
	struct stat st;
	size_t n;
	int fd;

	if (strncmp(name, "dmesg-", 6) != 0 || has_suffix(name, ".enc.z") ||
	    strlen(name) >= sizeof(p.name) || !name_ok(name) || scan->n_parts >= PSTORE_ENTRIES_MAX)
		return;
	fd = open_regular(scan->dirs[dir].fd, name, &st);
	if (fd < 0)
		return;
	if (!recent(scan, (int64_t)st.st_mtime)) {
		close(fd);
		return;
	}
	n = read_bounded(fd, buf, PSTORE_HEADER_MAX);
	close(fd);
	buf[n] = '\0';
	if (!parse_header(buf, &p.reason, &p.count, &p.part))
		return;
	strcpy(p.name, name);
	p.time = (int64_t)st.st_mtime;
	scan->parts = xrealloc(scan->parts, (scan->n_parts + 1) * sizeof(*scan->parts));
	scan->parts[scan->n_parts++] = p;
}

static void scan_dir(struct pstore_scan *scan, unsigned dir, unsigned depth)
{
	int fd = dup(scan->dirs[dir].fd);
	DIR *d;
	struct dirent *de;
	unsigned seen = 0;

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d)) && seen++ < PSTORE_ENTRIES_MAX) {
		struct stat st;
		int sub;

		if (de->d_name[0] == '.')
			continue;
		if (strncmp(de->d_name, "dmesg-", 6) == 0) {
			scan_file(scan, dir, de->d_name);
			continue;
		}
		/* the archive's subdirectories made at this boot */
		if (!scan->archive || depth >= PSTORE_DEPTH_MAX ||
		    scan->n_dirs >= PSTORE_DIRS_MAX || !name_ok(de->d_name))
			continue;
		if (fstatat(scan->dirs[dir].fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode) || !recent(scan, (int64_t)st.st_mtime))
			continue;
		sub = openat(scan->dirs[dir].fd, de->d_name,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		struct pstore_dir *nd = &scan->dirs[scan->n_dirs];
		char rel[sizeof(nd->rel)];
		int k = snprintf(rel, sizeof(rel), "%s%s%s", scan->dirs[dir].rel,
				 scan->dirs[dir].rel[0] ? "/" : "", de->d_name);

		if (k < 0 || (size_t)k >= sizeof(rel)) {
			close(sub);
			continue;
		}
		memcpy(nd->rel, rel, sizeof(rel));
		nd->fd = sub;
		scan_dir(scan, scan->n_dirs++, depth + 1);
	}
	closedir(d);
}

/* a is newer than b: its time, then a panic before an oops, then the
 * greater name (efi ids grow with time). */
static bool part_newer(const struct pstore_part *a, const struct pstore_part *b)
{
	if (a->time != b->time)
		return a->time > b->time;
	if (a->reason != b->reason)
		return a->reason == PSTORE_PANIC;
	return strcmp(a->name, b->name) > 0;
}

/* The same dump as first: same directory, backend, reason and count,
 * written at about the same time. */
static bool same_dump(const struct pstore_part *a, const struct pstore_part *first)
{
	const char *da = strrchr(a->name, '-'), *df = strrchr(first->name, '-');
	int64_t dt = a->time - first->time;

	return a->dir == first->dir && a->reason == first->reason && a->count == first->count &&
	       da - a->name == df - first->name &&
	       strncmp(a->name, first->name, (size_t)(da - a->name)) == 0 &&
	       dt <= PSTORE_PART_SLACK_SEC && dt >= -PSTORE_PART_SLACK_SEC;
}

/* A part's text without its header line, NUL bytes made visible, ending
 * in a newline; NULL for an empty or unreadable part. */
static char *read_part(const struct pstore_scan *scan, const struct pstore_part *p, size_t *ret_len)
{
	struct stat st;
	char *buf, *nl;
	size_t n, skip;
	int fd = open_regular(scan->dirs[p->dir].fd, p->name, &st);

	if (fd < 0)
		return NULL;
	buf = xmalloc(PSTORE_FILE_MAX + 2);
	n = read_bounded(fd, buf, PSTORE_FILE_MAX);
	close(fd);
	nl = memchr(buf, '\n', n);
	skip = nl ? (size_t)(nl - buf) + 1 : n;
	memmove(buf, buf + skip, n - skip);
	n -= skip;
	if (n == 0) {
		free(buf);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = 0x1a; /* shown as U+FFFD, not the text's end */
	if (buf[n - 1] != '\n')
		buf[n++] = '\n';
	buf[n] = '\0';
	*ret_len = n;
	return buf;
}

/* The dump's text: parts from the highest to Part1, within
 * PSTORE_TEXT_MAX (the oldest parts left out). */
static void read_text(const struct pstore_scan *scan, const struct pstore_part **by_part,
		      unsigned max_part, struct pstore_crash *c)
{
	char *texts[PSTORE_PARTS_MAX + 1] = {};
	size_t lens[PSTORE_PARTS_MAX + 1] = {}, total = 0;
	unsigned last = 0;

	for (unsigned i = 1; i <= max_part; i++) {
		if (!by_part[i])
			continue;
		texts[i] = read_part(scan, by_part[i], &lens[i]);
		if (texts[i] && total + lens[i] > PSTORE_TEXT_MAX) {
			free(texts[i]);
			texts[i] = NULL;
			break;
		}
		total += lens[i];
		last = i;
	}
	c->text = xmalloc(total + 1);
	c->len = 0;
	for (unsigned i = last; i >= 1; i--) {
		if (texts[i])
			memcpy(c->text + c->len, texts[i], lens[i]);
		c->len += texts[i] ? lens[i] : 0;
		free(texts[i]);
	}
	c->text[c->len] = '\0';
}

static void scan_free(struct pstore_scan *scan)
{
	for (unsigned i = 0; i < scan->n_dirs; i++)
		close(scan->dirs[i].fd);
	free(scan->parts);
	*scan = (struct pstore_scan){};
}

/* The newest crash in one place: 1 with *ret filled, else 0. */
static int find_in(const char *path, bool archive, int64_t boot_time, bool text,
		   struct pstore_crash *ret)
{
	struct pstore_scan scan = {.boot_time = boot_time, .archive = archive};
	const struct pstore_part *best = NULL, *by_part[PSTORE_PARTS_MAX + 1] = {};
	unsigned max_part = 1;
	int fd;

	if (!path)
		return 0;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	scan.dirs[0].fd = fd;
	scan.n_dirs = 1;
	scan_dir(&scan, 0, 0);
	for (size_t i = 0; i < scan.n_parts; i++)
		if (scan.parts[i].part == 1 && (!best || part_newer(&scan.parts[i], best)))
			best = &scan.parts[i];
	if (!best) {
		scan_free(&scan);
		return 0;
	}
	by_part[1] = best;
	for (size_t i = 0; i < scan.n_parts; i++) {
		const struct pstore_part *p = &scan.parts[i];
		unsigned k = p->part;

		if (k < 2 || k > PSTORE_PARTS_MAX || !same_dump(p, best))
			continue;
		/* two of one number: the one nearer Part1's time */
		if (by_part[k] &&
		    llabs(by_part[k]->time - best->time) <= llabs(p->time - best->time))
			continue;
		by_part[k] = p;
		max_part = MAX(max_part, k);
	}
	*ret =
	    (struct pstore_crash){.reason = best->reason, .archived = archive, .time = best->time};
	for (unsigned i = 1; i <= max_part; i++)
		ret->parts += by_part[i] ? 1 : 0;
	if (archive)
		snprintf(ret->where, sizeof(ret->where), "%s/%s%s%s", path,
			 scan.dirs[best->dir].rel, scan.dirs[best->dir].rel[0] ? "/" : "",
			 best->name);
	else
		snprintf(ret->where, sizeof(ret->where), "pstore %s", best->name);
	if (text)
		read_text(&scan, by_part, max_part, ret);
	scan_free(&scan);
	return 1;
}

int pstore_find(const struct pstore_paths *paths, int64_t boot_time, bool text,
		struct pstore_crash *ret)
{
	if (find_in(paths->pstore, false, boot_time, text, ret) > 0)
		return 1;
	return find_in(paths->archive, true, boot_time, text, ret);
}

void pstore_crash_fini(struct pstore_crash *c)
{
	free(c->text);
	c->text = NULL;
	c->len = 0;
}

bool pstore_parse_line(const char *line, unsigned *ret_level, uint64_t *ret_usec,
		       const char **ret_text)
{
	const char *s = line;
	unsigned prio, sec, frac;
	const char *f;

	if (*s++ != '<' || !parse_digits(&s, &prio) || *s++ != '>' || *s++ != '[')
		return false;
	while (*s == ' ')
		s++;
	if (!parse_digits(&s, &sec) || *s++ != '.')
		return false;
	f = s;
	if (!parse_digits(&s, &frac) || s - f != 6 || *s++ != ']')
		return false;
	if (*s == ' ')
		s++;
	*ret_level = prio & 7;
	*ret_usec = (uint64_t)sec * USEC_PER_SEC + frac;
	*ret_text = s;
	return true;
}
