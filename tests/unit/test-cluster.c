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

/* Cluster k of test_many(): distinct for every k by construction. Its
 * length (1 to CLUSTER_MAX_LEN) and flags come from k's low bits, its last
 * code point from the rest; clusters of four and more code points all start
 * with the same three, which is all an index slot keeps of them, so only
 * the code points after those tell them apart. */
static size_t many_cluster(unsigned k, uint32_t *ch, unsigned *flags)
{
	size_t len = 1 + k % CLUSTER_MAX_LEN;
	uint32_t v = k / (CLUSTER_MAX_LEN * 4);

	*flags = (k / CLUSTER_MAX_LEN) % 4;
	ch[0] = len == 1 ? 0x4e00 + v : 'a' + v % 26;
	for (size_t i = 1; i < len; i++)
		ch[i] = len > 3 && i < 3 ? 0x300 + (uint32_t)i : 0x300 + (uint32_t)(i % 2);
	if (len > 1)
		ch[len - 1] = 0x1000 + v;
	return len;
}

/* Thousands of clusters in an order with repeats: each first seen gets the
 * next stand-in (CLUSTER_FIRST up, in first-seen order: session restore and
 * the vcs mirror rely on it), each seen again its own, before and after the
 * index grows, and each stand-in means its cluster. */
static void test_many(void)
{
	enum { MANY = 6000, CALLS = 30000 };
	struct cluster_table *t = cluster_table_new(), *r = cluster_table_new();
	uint32_t *expect = calloc(MANY, sizeof(uint32_t)), ch[CLUSTER_MAX_LEN];
	unsigned next = CLUSTER_FIRST, bad = 0, bad_k = 0, flags;
	uint64_t rng = 0x2545f4914f6cdd1dull;
	size_t len;

	for (unsigned call = 0; call < CALLS; call++) {
		unsigned k;
		uint32_t cp;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		/* early calls pick among few clusters, later ones among all */
		k = (unsigned)(rng % (call < MANY ? call / 2 + 1 : MANY));
		len = many_cluster(k, ch, &flags);
		cp = cluster_intern(t, ch, len, flags);
		if (!expect[k])
			expect[k] = next++;
		if (cp != expect[k] && !bad++)
			bad_k = k;
	}
	if (bad)
		fprintf(stderr, "%u wrong stand-ins, the first for cluster %u\n", bad, bad_k);
	CHECK(bad == 0);
	CHECK_EQ_U(cluster_table_count(t), next - CLUSTER_FIRST);
	/* every stand-in means its cluster; again, every cluster its stand-in */
	bad = 0;
	for (unsigned k = 0; k < MANY; k++) {
		uint32_t want[CLUSTER_MAX_LEN];
		unsigned want_flags;
		size_t want_len = many_cluster(k, want, &want_flags);
		const uint32_t *seq;

		if (!expect[k])
			continue;
		seq = cluster_lookup(t, expect[k], &len, &flags);
		if (!seq || len != want_len || flags != want_flags ||
		    memcmp(seq, want, len * sizeof(*seq)) != 0 ||
		    cluster_intern(t, want, want_len, want_flags) != expect[k])
			bad++;
	}
	CHECK(bad == 0);
	CHECK_EQ_U(cluster_table_count(t), next - CLUSTER_FIRST);

	/* a restored table (snapshot.c's order) hands out the same */
	for (uint32_t cp = CLUSTER_FIRST; cp < next; cp++) {
		const uint32_t *seq = cluster_lookup(t, cp, &len, &flags);

		CHECK(seq && cluster_table_restore(r, cp, seq, len, flags) == 0);
	}
	bad = 0;
	for (unsigned k = 0; k < MANY; k++) {
		len = many_cluster(k, ch, &flags);
		if (expect[k] && cluster_intern(r, ch, len, flags) != expect[k])
			bad++;
	}
	CHECK(bad == 0);
	len = many_cluster(MANY, ch, &flags); /* a new one: the next stand-in */
	CHECK_EQ_U(cluster_intern(r, ch, len, flags), next);
	free(expect);
	cluster_table_free(t);
	cluster_table_free(r);
}

/* Clusters that differ only where an index slot holds 0 for "no code point
 * here": code point 0 is a cluster's like any other. Many of them, so that
 * some share a run of the index's slots, where only their lengths tell them
 * apart. */
static void test_zero(void)
{
	enum { BASES = 1000, LENS = 4 };
	struct cluster_table *t = cluster_table_new();
	uint32_t ch[LENS] = {0};
	unsigned bad = 0, flags;
	size_t len;

	for (int pass = 0; pass < 2; pass++)
		for (uint32_t b = 0; b < BASES; b++)
			for (size_t n = 1; n <= LENS; n++) {
				uint32_t want = CLUSTER_FIRST + b * LENS + (uint32_t)n - 1;

				ch[0] = b;
				if (cluster_intern(t, ch, n, 0) != want ||
				    !cluster_lookup(t, want, &len, &flags) || len != n)
					bad++;
			}
	CHECK(bad == 0);
	CHECK_EQ_U(cluster_table_count(t), BASES * LENS);
	cluster_table_free(t);
}

/* Plain text is scanned eight bytes at a time (stream.c's
 * ascii_run_end()): a character with marks, or an escape sequence, at any
 * offset of a word still ends the run where it starts. */
static void test_run_ends(void)
{
	struct fake_term f;
	char in[64];
	size_t len = 0;
	unsigned flags = 0;

	fake_term_init(&f, 40, 6);
	fake_feed(&f, "\033[?25l");
	for (unsigned k = 0; k < 20; k++) {
		/* k letters, then a base with a mark, or a dim letter */
		memset(in, 'x', k);
		snprintf(in + k, sizeof(in) - k, "e\xcc\x81|%16s", "");
		fake_feed(&f, "\r");
		fake_feed(&f, in);
		fake_term_read(&f);
		CHECK(f.cells[0][k].ch == CLUSTER_FIRST && f.cells[0][k + 1].ch == '|');
		snprintf(in + k, sizeof(in) - k, "\033[2mz\033[m|%16s", "");
		fake_feed(&f, "\r");
		fake_feed(&f, in);
		fake_term_read(&f);
		CHECK(cluster_lookup(f.table, f.cells[0][k].ch, &len, &flags) && len == 1 &&
		      flags == CLUSTER_DIM && f.cells[0][k + 1].ch == '|');
		if (k > 0)
			CHECK(f.cells[0][k - 1].ch == 'x');
	}
	fake_term_fini(&f);
}

int main(void)
{
	RUN(test_join);
	RUN(test_not_joined);
	RUN(test_private_area);
	RUN(test_long_cluster);
	RUN(test_reset);
	RUN(test_flags);
	RUN(test_many);
	RUN(test_zero);
	RUN(test_run_ends);
	return TESTS_RESULT();
}
