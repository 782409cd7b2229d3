/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Joining combining marks to their base in the pty's byte stream: text is
 * rewritten, escape sequences and strings never are, and every stand-in
 * means exactly the sequence it replaced.
 */
#include <stdio.h>
#include <string.h>

#include "../../daemon/cluster.h"
#include "tests.h"

static size_t feed(struct cluster_filter *f, const char *in, char *out)
{
	return cluster_filter_feed(f, in, strlen(in), out);
}

/* The code point of the 4-byte UTF-8 sequence at s. */
static uint32_t utf8_4(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	return (uint32_t)(u[0] & 0x07) << 18 | (uint32_t)(u[1] & 0x3f) << 12 |
	       (uint32_t)(u[2] & 0x3f) << 6 | (u[3] & 0x3f);
}

static void test_join(void)
{
	struct cluster_filter f = {.table = cluster_table_new()};
	char out[256];
	const uint32_t *seq;
	size_t n, len = 0;
	uint32_t a, b;

	/* e + U+0301, then a + U+0308 + U+0323: two stand-ins */
	n = feed(&f, "xe\xcc\x81y\xc3\xa4", out);
	CHECK_EQ_U(n, 1 + 4 + 1 + 2);
	CHECK(out[0] == 'x' && out[5] == 'y' && memcmp(out + 6, "\xc3\xa4", 2) == 0);
	a = utf8_4(out + 1);
	CHECK_EQ_U(a, CLUSTER_FIRST);
	seq = cluster_lookup(f.table, a, &len);
	CHECK(seq && len == 2 && seq[0] == 'e' && seq[1] == 0x301);

	n = feed(&f, "a\xcc\x88\xcc\xa3", out);
	CHECK_EQ_U(n, 4);
	b = utf8_4(out);
	CHECK_EQ_U(b, CLUSTER_FIRST + 1);
	seq = cluster_lookup(f.table, b, &len);
	CHECK(seq && len == 3 && seq[0] == 'a' && seq[1] == 0x308 && seq[2] == 0x323);

	/* the same sequence gets the same stand-in */
	n = feed(&f, "e\xcc\x81", out);
	CHECK(n == 4 && utf8_4(out) == a);

	/* plain text passes untouched; other code points mean nothing */
	n = feed(&f, "plain \xe4\xb8\xad text", out);
	CHECK(n == strlen("plain \xe4\xb8\xad text") &&
	      memcmp(out, "plain \xe4\xb8\xad text", n) == 0);
	CHECK(cluster_lookup(f.table, 'e', &len) == NULL);
	CHECK(cluster_lookup(f.table, CLUSTER_FIRST + 2, &len) == NULL);
	cluster_table_free(f.table);
}

static void test_not_joined(void)
{
	struct cluster_filter f = {.table = cluster_table_new()};
	char out[256];
	size_t n;

	/* a mark inside an OSC title and after CSI parameters stays as it is */
	const char *osc = "\033]0;e\xcc\x81\007";
	n = feed(&f, osc, out);
	CHECK(n == strlen(osc) && memcmp(out, osc, n) == 0);
	const char *st = "\033]2;title e\xcc\x81\033\\";
	n = feed(&f, st, out);
	CHECK(n == strlen(st) && memcmp(out, st, n) == 0);
	/* a wide base keeps its width: the mark is left for libtsm to drop */
	n = feed(&f, "\xe4\xb8\xad\xcc\x81", out);
	CHECK(n == 5 && memcmp(out, "\xe4\xb8\xad\xcc\x81", 5) == 0);
	/* a mark after a control character has no base */
	n = feed(&f, "\n\xcc\x81", out);
	CHECK(n == 3 && memcmp(out, "\n\xcc\x81", 3) == 0);
	/* a sequence cut at the end of a read waits for its rest (here a mark
	 * whose base has gone on already: left for libtsm to drop) */
	n = feed(&f, "e\xcc", out);
	CHECK(n == 1 && out[0] == 'e');
	n = feed(&f, "\x81x", out);
	CHECK(n == 3 && memcmp(out, "\xcc\x81x", 3) == 0);
	/* malformed UTF-8 passes as bytes */
	n = feed(&f, "e\xff\xcc\x81", out);
	CHECK(n == 4 && memcmp(out, "e\xff\xcc\x81", 4) == 0);
	/* a session that ends inside a string or a cut sequence leaves
	 * nothing behind for the next one */
	n = feed(&f, "\033Pq\xe4\xb8", out);
	CHECK_EQ_U(n, 3);
	cluster_filter_reset(&f);
	n = feed(&f, "o\xcc\x83", out);
	CHECK(n == 4 && utf8_4(out) == CLUSTER_FIRST);

	/* ... and after all that, text is joined again */
	n = feed(&f, "\033[1;31mo\xcc\x83", out);
	CHECK(n == 7 + 4 && memcmp(out, "\033[1;31m", 7) == 0);
	CHECK(utf8_4(out + 7) == CLUSTER_FIRST);
	cluster_filter_fini(&f);
	cluster_table_free(f.table);
}

/* A program's own code points of the area get stand-ins too, so every
 * code point of the area on the screen is one the table knows. */
static void test_private_area(void)
{
	struct cluster_filter f = {.table = cluster_table_new()};
	char out[256];
	const uint32_t *seq;
	size_t n, len = 0;

	n = feed(&f, "e\xcc\x81\xf4\x80\x80\x80", out); /* U+100000 from the program */
	CHECK_EQ_U(n, 8);
	seq = cluster_lookup(f.table, utf8_4(out + 4), &len);
	CHECK(seq && len == 1 && seq[0] == 0x100000);
	CHECK(utf8_4(out + 4) == CLUSTER_FIRST + 1);

	/* ... also inside an escape sequence: which bytes libtsm takes for text
	 * cannot depend on this filter following its parser exactly */
	n = feed(&f, "\033]0;\xf4\x80\x80\x80\007", out);
	CHECK(n == 9 && utf8_4(out + 4) == CLUSTER_FIRST + 1); /* the same as above */

	/* ... also when a read ends inside it */
	n = feed(&f, "ab\xf4\x8f", out);
	CHECK(n == 2 && memcmp(out, "ab", 2) == 0);
	n = feed(&f, "\xbf", out);
	CHECK_EQ_U(n, 0);
	n = feed(&f, "\xbd!", out);
	CHECK_EQ_U(n, 5);
	seq = cluster_lookup(f.table, utf8_4(out), &len);
	CHECK(seq && len == 1 && seq[0] == 0x10fffd && out[4] == '!');
	cluster_filter_fini(&f);
	cluster_table_free(f.table);
}

/* Marks beyond CLUSTER_MAX_LEN - 1 are dropped, not the cluster. */
static void test_long_cluster(void)
{
	struct cluster_filter f = {.table = cluster_table_new()};
	char in[64] = "o", out[128];
	const uint32_t *seq;
	size_t n, len = 0;

	for (int i = 0; i < 12; i++)
		strcat(in, "\xcc\x81");
	n = feed(&f, in, out);
	CHECK_EQ_U(n, 4);
	seq = cluster_lookup(f.table, utf8_4(out), &len);
	CHECK(seq && len == CLUSTER_MAX_LEN && seq[0] == 'o' && seq[7] == 0x301);
	cluster_table_free(f.table);
}

/* A new session starts with an empty table: what the last one joined is
 * forgotten, and a table one user filled up joins marks again. */
static void test_reset(void)
{
	struct cluster_filter f = {.table = cluster_table_new()};
	char in[16], out[64];
	size_t n, len = 0;

	n = feed(&f, "e\xcc\x81", out);
	CHECK(n == 4 && utf8_4(out) == CLUSTER_FIRST);
	cluster_table_reset(f.table);
	cluster_filter_reset(&f);
	CHECK(cluster_lookup(f.table, CLUSTER_FIRST, &len) == NULL);
	n = feed(&f, "a\xcc\x80", out);
	CHECK(n == 4 && utf8_4(out) == CLUSTER_FIRST);
	const uint32_t *seq = cluster_lookup(f.table, CLUSTER_FIRST, &len);
	CHECK(seq && len == 2 && seq[0] == 'a' && seq[1] == 0x300);

	/* fill the whole area with distinct clusters (base + 2 marks) */
	for (uint32_t i = 1; i <= CLUSTER_LAST - CLUSTER_FIRST; i++) {
		uint32_t m1 = 0x300 + i % 0x70, m2 = 0x300 + (i / 0x70) % 0x70;
		uint32_t base = 'A' + (i / (0x70 * 0x70)) % 26;

		snprintf(in, sizeof(in), "%c%c%c%c%c", (char)base, (char)(0xc0 | m1 >> 6),
			 (char)(0x80 | (m1 & 0x3f)), (char)(0xc0 | m2 >> 6),
			 (char)(0x80 | (m2 & 0x3f)));
		feed(&f, in, out);
	}
	n = feed(&f, "z\xcc\x81", out);
	CHECK(n == 1 && out[0] == 'z'); /* used up: the mark is dropped */
	cluster_table_reset(f.table);
	n = feed(&f, "z\xcc\x81", out);
	CHECK(n == 4 && utf8_4(out) == CLUSTER_FIRST);
	cluster_filter_fini(&f);
	cluster_table_free(f.table);
}

int main(void)
{
	RUN(test_join);
	RUN(test_not_joined);
	RUN(test_private_area);
	RUN(test_long_cluster);
	RUN(test_reset);
	return TESTS_RESULT();
}
