/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Small helpers shared by every subsystem: allocation that aborts on OOM (for
 * small objects; framebuffer-sized buffers use plain malloc and handle -ENOMEM),
 * _cleanup_ attributes, array sizes and time.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

#define USEC_PER_SEC UINT64_C(1000000)
#define USEC_PER_MSEC UINT64_C(1000)
#define NSEC_PER_USEC UINT64_C(1000)

void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t size);
char *xstrdup(const char *s);

uint64_t now_usec(void);

/* The most memory one store that grows with a setting may take (the
 * scrollback's lines, the sixel images): a quarter of the physical memory
 * (`ram` bytes; 0: unknown, not a bound) and an eighth of the address space
 * (`addr_space`: SIZE_MAX; a parameter so that a test on a 64-bit host can
 * ask for a 32-bit machine's). 100000 lines of scrollback at 240 columns are
 * about 900 MiB: more than a 32-bit process's eighth (512 MiB) and than
 * most of the small machines consoled is for have. */
uint64_t memory_cap(uint64_t ram, uint64_t addr_space);

/* The machine's physical memory in bytes (sysconf), or 0 if unknown. */
uint64_t memory_physical(void);

/* a x b x c bytes into *ret; false (*ret untouched) if the product does not
 * fit a size_t: a 32-bit machine's 4 GiB, where a buffer's size from a
 * cell's pixels times a count wraps to a small allocation that the writes
 * then overrun. */
static inline bool size_mul3(size_t a, size_t b, size_t c, size_t *ret)
{
	size_t n;

	if (__builtin_mul_overflow(a, b, &n) || __builtin_mul_overflow(n, c, &n))
		return false;
	*ret = n;
	return true;
}

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

/* The index of s in names[n] (a NULL entry or s matches nothing), or
 * -EINVAL: the enums' *_from_string(). */
int string_table_lookup(const char *const *names, size_t n, const char *s);

/* Parses a decimal unsigned integer in [min, max]; the whole string must be a number. */
int parse_uint(const char *s, unsigned min, unsigned max, unsigned *ret);

/* The length (1 to 4) of the well-formed UTF-8 character that in[0..len)
 * starts (shortest form, no surrogate, at most U+10FFFF; NUL counts as one
 * byte), with its code point in *ret; 0 when it starts none (then one byte
 * is to be skipped). len >= 1. */
size_t utf8_get(const unsigned char *in, size_t len, uint32_t *ret);

/* The value of a hexadecimal digit, either case, or -1. */
static inline int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* cp (at most U+10FFFF) as UTF-8 at out (room for 4 bytes); returns how
 * many bytes. Inline: the stream stage writes every character with it. */
static inline size_t utf8_put(uint32_t cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* s as a log line or a terminal may show it: controls (C0, DEL and C1),
 * backslashes and bytes that are not well-formed UTF-8 written as C escapes
 * (\n, \t, \\, \xHH), so that a configuration line or an argument cannot
 * move the cursor, recolour or clear the terminal that shows the message,
 * or forge a log line. Allocated; free() it. */
char *cescape(const char *s);

/* Reads a whole small file (sysfs attribute) into a NUL-terminated buffer. */
int read_small_file(const char *path, char *buf, size_t size);

/* Reads every pending event of a non-blocking inotify fd, for watchers
 * that only care that something changed. */
void inotify_drain(int fd);
