/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Stand-ins for combining sequences, through the pty stream stage into the
 * real libtsm: a base and its marks in one read become one cell whose
 * stand-in means exactly that sequence; strings and sequences never give
 * text, and every code point of the stand-in area on the screen is one the
 * table handed out.
 */
#include <stdio.h>

#include "test-stream-fake.h"

static const uint32_t *lookup(struct fake_term *f, unsigned x, unsigned y, size_t *len)
{
	return cluster_lookup(f->table, f->cells[y][x].ch, len, NULL);
}

static void test_join(void)
{
	struct fake_term f;
	const uint32_t *seq;
	size_t len = 0;
	uint32_t a, b;

	fake_term_init(&f, 40, 6);
	/* e + U+0301, then a + U+0308 + U+0323: two stand-ins */
	fake_feed(&f, "\033[?25lxe\xcc\x81y\xc3\xa4 a\xcc\x88\xcc\xa3 e\xcc\x81");
	fake_term_read(&f);
	CHECK(f.cells[0][0].ch == 'x' && f.cells[0][2].ch == 'y' && f.cells[0][3].ch == 0xe4);
	a = f.cells[0][1].ch;
	CHECK_EQ_U(a, CLUSTER_FIRST);
	seq = lookup(&f, 1, 0, &len);
	CHECK(seq && len == 2 && seq[0] == 'e' && seq[1] == 0x301);
	b = f.cells[0][5].ch;
	CHECK_EQ_U(b, CLUSTER_FIRST + 1);
	seq = lookup(&f, 5, 0, &len);
	CHECK(seq && len == 3 && seq[0] == 'a' && seq[1] == 0x308 && seq[2] == 0x323);
	/* the same sequence gets the same stand-in */
	CHECK(f.cells[0][7].ch == a);
	/* other code points mean nothing */
	CHECK(cluster_lookup(f.table, 'e', &len, NULL) == NULL);
	CHECK(cluster_lookup(f.table, CLUSTER_FIRST + 2, &len, NULL) == NULL);
	fake_term_fini(&f);
}

static void test_not_joined(void)
{
	struct fake_term f;
	size_t len = 0;

	fake_term_init(&f, 40, 6);
	/* a mark inside an OSC title or a DCS shows nothing */
	fake_feed(&f,
		  "\033[?25l\033]0;e\xcc\x81\007\033]2;title e\xcc\x81\033\\\033Pe\xcc\x81\033\\|");
	/* a mark after a control character has no base */
	fake_feed(&f, "\r\xcc\x81");
	/* a sequence cut at the end of a read waits for its rest (here a
	 * mark whose base has gone on already: dropped) */
	fake_feed(&f, "\033[1Ce\xcc");
	fake_feed(&f, "\x81x");
	fake_term_read(&f);
	CHECK(f.cells[0][0].ch == '|' && f.cells[0][1].ch == 'e' && f.cells[0][2].ch == 'x');
	CHECK(f.cells[0][3].ch == ' ');
	/* a wide base keeps its width and loses the mark */
	fake_feed(&f, "\r\n|\xe4\xb8\xad\xcc\x81|");
	fake_term_read(&f);
	CHECK(f.cells[1][1].ch == 0x4e2d && f.cells[1][3].ch == '|');
	/* malformed UTF-8 is a U+FFFD, which takes the mark */
	fake_feed(&f, "\r\ne\xff\xcc\x81.");
	fake_term_read(&f);
	CHECK(f.cells[2][0].ch == 'e' && f.cells[2][2].ch == '.');
	CHECK(lookup(&f, 1, 2, &len) && len == 2 && lookup(&f, 1, 2, &len)[0] == 0xfffd);
	fake_term_fini(&f);

	/* a session that ends inside a string or a cut sequence leaves
	 * nothing behind for the next one */
	fake_term_init(&f, 40, 6);
	fake_feed(&f, "\033Pq\xe4\xb8");
	tsm_vte_hard_reset(f.vte);
	stream_reset(f.stream);
	cluster_table_reset(f.table);
	fake_feed(&f, "\033[?25lo\xcc\x83\033[1;31mo\xcc\x83");
	fake_term_read(&f);
	CHECK(f.cells[0][0].ch == CLUSTER_FIRST && f.cells[0][1].ch == CLUSTER_FIRST);
	CHECK(f.cells[0][1].attr.fccode == 1 && f.cells[0][1].attr.bold);
	fake_term_fini(&f);
}

/* A program's own code points of the area get stand-ins too, so every
 * code point of the area on the screen is one the table knows. */
static void test_private_area(void)
{
	struct fake_term f;
	const uint32_t *seq;
	size_t len = 0;

	fake_term_init(&f, 40, 6);
	fake_feed(&f, "\033[?25le\xcc\x81\xf4\x80\x80\x80"); /* U+100000 from the program */
	fake_term_read(&f);
	CHECK(f.cells[0][1].ch == CLUSTER_FIRST + 1);
	seq = lookup(&f, 1, 0, &len);
	CHECK(seq && len == 1 && seq[0] == 0x100000);
	/* inside a string: nothing reaches libtsm */
	fake_feed(&f, "\033]0;\xf4\x80\x80\x80\007|");
	/* ... also when a read ends inside it */
	fake_feed(&f, "ab\xf4\x8f");
	fake_feed(&f, "\xbf");
	fake_feed(&f, "\xbd!");
	fake_term_read(&f);
	CHECK(f.cells[0][2].ch == '|' && f.cells[0][3].ch == 'a' && f.cells[0][4].ch == 'b');
	seq = lookup(&f, 5, 0, &len);
	CHECK(seq && len == 1 && seq[0] == 0x10fffd && f.cells[0][6].ch == '!');
	fake_term_fini(&f);
}

/* Marks beyond CLUSTER_MAX_LEN - 1 are dropped, not the cluster. */
static void test_long_cluster(void)
{
	struct fake_term f;
	char in[64] = "o";
	const uint32_t *seq;
	size_t len = 0;

	fake_term_init(&f, 40, 6);
	for (int i = 0; i < 12; i++)
		strcat(in, "\xcc\x81");
	strcat(in, "|");
	fake_feed(&f, in);
	fake_term_read(&f);
	seq = lookup(&f, 0, 0, &len);
	CHECK(seq && len == CLUSTER_MAX_LEN && seq[0] == 'o' && seq[7] == 0x301);
	CHECK(f.cells[0][1].ch == '|');
	fake_term_fini(&f);
}

/* A new session starts with an empty table: what the last one joined is
 * forgotten, and a table one user filled up joins marks again. */
static void test_reset(void)
{
	struct fake_term f;
	char in[16];
	size_t len = 0;
	const uint32_t *seq;

	fake_term_init(&f, 40, 6);
	fake_feed(&f, "\033[?25le\xcc\x81");
	fake_term_read(&f);
	CHECK(f.cells[0][0].ch == CLUSTER_FIRST);
	cluster_table_reset(f.table);
	stream_reset(f.stream);
	CHECK(cluster_lookup(f.table, CLUSTER_FIRST, &len, NULL) == NULL);
	fake_feed(&f, "\ra\xcc\x80");
	fake_term_read(&f);
	seq = lookup(&f, 0, 0, &len);
	CHECK(f.cells[0][0].ch == CLUSTER_FIRST && seq && len == 2 && seq[0] == 'a' &&
	      seq[1] == 0x300);

	/* fill the whole area with distinct clusters (base + 2 marks) */
	for (uint32_t i = 1; i <= CLUSTER_LAST - CLUSTER_FIRST; i++) {
		uint32_t m1 = 0x300 + i % 0x70, m2 = 0x300 + (i / 0x70) % 0x70;
		uint32_t base = 'A' + (i / (0x70 * 0x70)) % 26;

		snprintf(in, sizeof(in), "\r%c%c%c%c%c", (char)base, (char)(0xc0 | m1 >> 6),
			 (char)(0x80 | (m1 & 0x3f)), (char)(0xc0 | m2 >> 6),
			 (char)(0x80 | (m2 & 0x3f)));
		fake_feed(&f, in);
	}
	/* used up: the mark is dropped, and dim text is plain */
	fake_feed(&f, "\rz\xcc\x81\033[2my\033[m");
	fake_term_read(&f);
	CHECK(f.cells[0][0].ch == 'z' && f.cells[0][1].ch == 'y');
	cluster_table_reset(f.table);
	fake_feed(&f, "\rz\xcc\x81");
	fake_term_read(&f);
	CHECK(f.cells[0][0].ch == CLUSTER_FIRST);
	fake_term_fini(&f);
}

/* Flags are part of what a stand-in means. */
static void test_flags(void)
{
	struct cluster_table *t = cluster_table_new();
	const uint32_t e[] = {'e', 0x301};
	uint32_t a, b, c;
	unsigned flags = 99;
	size_t len = 0;

	a = cluster_intern(t, e, 2, 0);
	b = cluster_intern(t, e, 2, CLUSTER_DIM);
	c = cluster_intern(t, e, 1, CLUSTER_DIM | CLUSTER_STRIKE);
	CHECK(a == CLUSTER_FIRST && b == CLUSTER_FIRST + 1 && c == CLUSTER_FIRST + 2);
	CHECK(cluster_intern(t, e, 2, CLUSTER_DIM) == b);
	CHECK(cluster_lookup(t, a, &len, &flags) && len == 2 && flags == 0);
	CHECK(cluster_lookup(t, b, &len, &flags) && len == 2 && flags == CLUSTER_DIM);
	CHECK(cluster_lookup(t, c, &len, &flags) && len == 1 &&
	      flags == (CLUSTER_DIM | CLUSTER_STRIKE));
	cluster_table_free(t);
}

int main(void)
{
	RUN(test_join);
	RUN(test_not_joined);
	RUN(test_private_area);
	RUN(test_long_cluster);
	RUN(test_reset);
	RUN(test_flags);
	return TESTS_RESULT();
}
