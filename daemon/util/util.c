/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>
#include <time.h>

#include "util.h"

static void oom(void)
{
	static const char msg[] = "consoled: out of memory\n";
	ssize_t r = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	(void)r;
	abort();
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (!p)
		oom();
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		oom();
	return p;
}

uint64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / NSEC_PER_USEC;
}

uint64_t memory_cap(uint64_t ram, uint64_t addr_space)
{
	uint64_t cap = addr_space / 8;

	return ram ? MIN(cap, ram / 4) : cap;
}

uint64_t memory_physical(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || page <= 0)
		return 0;
	return (uint64_t)pages * (uint64_t)page;
}

int string_table_lookup(const char *const *names, size_t n, const char *s)
{
	for (size_t i = 0; s && i < n; i++)
		if (names[i] && strcmp(s, names[i]) == 0)
			return (int)i;
	return -EINVAL;
}

int parse_uint(const char *s, unsigned min, unsigned max, unsigned *ret)
{
	unsigned long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > UINT_MAX)
		return -ERANGE;
	if (v < min || v > max)
		return -ERANGE;
	*ret = (unsigned)v;
	return 0;
}

size_t utf8_get(const unsigned char *in, size_t len, uint32_t *ret)
{
	uint32_t cp, min;
	size_t n;

	if (in[0] < 0x80) {
		*ret = in[0];
		return 1;
	}
	if (in[0] >= 0xc2 && in[0] <= 0xdf)
		n = 2, cp = in[0] & 0x1f, min = 0x80;
	else if (in[0] >= 0xe0 && in[0] <= 0xef)
		n = 3, cp = in[0] & 0x0f, min = 0x800;
	else if (in[0] >= 0xf0 && in[0] <= 0xf4)
		n = 4, cp = in[0] & 0x07, min = 0x10000;
	else
		return 0;
	if (len < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((in[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (in[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	*ret = cp;
	return n;
}

char *cescape(const char *s)
{
	/* at most 4 bytes ("\xHH") for each byte */
	const char *end = s + strlen(s);
	char *ret = xmalloc((size_t)(end - s) * 4 + 1), *out = ret;

	while (*s) {
		uint32_t cp = 0;
		size_t len = utf8_get((const unsigned char *)s, (size_t)(end - s), &cp);

		if (len > 0 && cp >= 0x20 && cp != 0x7f && !(cp >= 0x80 && cp < 0xa0) &&
		    cp != '\\') {
			memcpy(out, s, len);
			out += len;
			s += len;
			continue;
		}
		/* one byte at a time: a C1 control's two bytes both escaped */
		len = len > 0 ? len : 1;
		for (size_t i = 0; i < len; i++, s++) {
			unsigned char c = (unsigned char)*s;

			if (c == '\\')
				out += sprintf(out, "\\\\");
			else if (c == '\n')
				out += sprintf(out, "\\n");
			else if (c == '\t')
				out += sprintf(out, "\\t");
			else if (c == '\r')
				out += sprintf(out, "\\r");
			else
				out += sprintf(out, "\\x%02x", c);
		}
	}
	*out = '\0';
	return ret;
}

int read_small_file(const char *path, char *buf, size_t size)
{
	_cleanup_(closep) int fd = -1;
	ssize_t n;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

void inotify_drain(int fd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}
