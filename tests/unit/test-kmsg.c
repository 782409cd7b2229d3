/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel message reader: records parsed and unescaped, the level
 * filter against the printk files read live, the store's budget, bounded
 * work per read and the band's newest lines under a flood (records through
 * a SOCK_SEQPACKET socket, which like /dev/kmsg gives one record per read()
 * and EAGAIN when empty), and the host's own /dev/kmsg: a record written to
 * it comes back with its level and text (as root; skipped otherwise).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../../daemon/devices/kmsg.h"
#include "../../daemon/util/util.h"
#include "tests.h"

static int parse(const char *rec, struct kmsg_record *r, char *buf, size_t size)
{
	const char *why = NULL;
	size_t len = strlen(rec);
	int ret;

	if (len >= size)
		return -E2BIG;
	memcpy(buf, rec, len + 1);
	ret = kmsg_parse_record(buf, len, r, &why);
	if (ret < 0)
		CHECK(why != NULL && why[0] != '\0');
	return ret;
}

static bool text_is(const struct kmsg_record *r, const char *want, size_t want_len)
{
	if (r->len == want_len && memcmp(r->text, want, want_len) == 0)
		return true;
	fprintf(stderr, "text: got '%.*s' (%zu bytes), want '%s'\n", (int)r->len, r->text, r->len,
		want);
	return false;
}

static void test_parse(void)
{
	struct kmsg_record r;
	char buf[512];

	CHECK(parse("6,339,5140900,-;NET: Registered PF_INET6 protocol family\n", &r, buf,
		    sizeof(buf)) == 0);
	CHECK_EQ_U(r.prio, 6);
	CHECK_EQ_U(r.seq, 339);
	CHECK_EQ_U(r.usec, 5140900);
	CHECK(!r.cont);
	CHECK(text_is(&r, "NET: Registered PF_INET6 protocol family", 40));

	/* Escapes: controls, the backslash itself, UTF-8 bytes, upper case
	 * hex digits; "\x" without two hex digits stays as it is. */
	CHECK(parse("4,1,2,-;a\\x1b[1mb\\x5cc caf\\xc3\\xA9 \\x7f \\xZZ \\x4\n", &r, buf,
		    sizeof(buf)) == 0);
	CHECK(text_is(&r, "a\x1b[1mb\\c caf\xc3\xa9 \x7f \\xZZ \\x4", 25));
	CHECK(parse("4,1,2,-;end\\x0", &r, buf, sizeof(buf)) == 0);
	CHECK(text_is(&r, "end\\x0", 6));
	CHECK(parse("4,1,2,-;nul\\x00byte", &r, buf, sizeof(buf)) == 0);
	CHECK(text_is(&r, "nul\0byte", 8));

	/* The dictionary is dropped; unknown fields after FLAGS ignored. */
	CHECK(parse("3,1204,77000123,-,caller=T42;usb 1-1: device descriptor read/64, error "
		    "-71\n SUBSYSTEM=usb\n DEVICE=c189:1\n",
		    &r, buf, sizeof(buf)) == 0);
	CHECK_EQ_U(r.prio, 3);
	CHECK(text_is(&r, "usb 1-1: device descriptor read/64, error -71", 45));
	CHECK(parse("12,5,6,c;continued", &r, buf, sizeof(buf)) == 0);
	CHECK(r.cont);
	CHECK_EQ_U(r.prio, 12);
	CHECK(text_is(&r, "continued", 9));
	CHECK(parse("6,5,6,-,cgroup=c;x", &r, buf, sizeof(buf)) == 0);
	CHECK(!r.cont);
	CHECK(parse("6,5,6,;", &r, buf, sizeof(buf)) == 0);
	CHECK(text_is(&r, "", 0));
	/* a ';' in the text is text */
	CHECK(parse("6,5,6,-;a;b", &r, buf, sizeof(buf)) == 0);
	CHECK(text_is(&r, "a;b", 3));

	/* Bad records: refused, *r untouched. */
	static const char *const bad[] = {
	    "",
	    "garbage",
	    "6,1,2,-",
	    ";text",
	    "6,1,2;no flags",
	    "6,1;two fields",
	    "x,1,2,-;bad prio",
	    "-6,1,2,-;negative",
	    "6,,2,-;empty seq",
	    "6,1,2x,-;junk in ts",
	    "6,99999999999999999999999,2,-;seq overflow",
	    "4294967296,1,2,-;prio over 32 bits",
	    " 6,1,2,-;leading blank",
	};
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		struct kmsg_record keep = {.prio = 99};

		if (parse(bad[i], &keep, buf, sizeof(buf)) != -EBADMSG) {
			fprintf(stderr, "accepted: '%s'\n", bad[i]);
			tests_failed = 1;
		}
		CHECK_EQ_U(keep.prio, 99);
	}
	/* len counts, not the NUL: a header cut before its ';' is refused. */
	const char *why = NULL;
	memcpy(buf, "6,1,2,-;x", 10);
	CHECK(kmsg_parse_record(buf, 7, &r, &why) == -EBADMSG);
	CHECK(why && strcmp(why, "no ';' after the header") == 0);
}

/* A reader over one end of a SOCK_SEQPACKET pair; *ret_peer is the other. */
static struct kmsg *reader_new(int level, const struct kmsg_files *files, size_t budget,
			       int *ret_peer)
{
	struct kmsg *k = NULL;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0) {
		perror("socketpair");
		exit(EXIT_FAILURE);
	}
	/* 300 short records fit in the socket with the default
	 * net.core.wmem_max (212992: 555 of them); a flood goes in chunks */
	setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &(int){212992}, sizeof(int));
	CHECK(kmsg_new(sv[0], level, files, budget, &k) == 0);
	*ret_peer = sv[1];
	return k;
}

static void send_record(int peer, unsigned prio, uint64_t seq, const char *text)
{
	char rec[1024];
	int n = snprintf(rec, sizeof(rec), "%u,%llu,%llu,-;%s\n", prio, (unsigned long long)seq,
			 (unsigned long long)seq * 1000, text);

	if (send(peer, rec, (size_t)n, 0) != n) {
		perror("send");
		exit(EXIT_FAILURE);
	}
}

/* kmsg_read() until the socket is empty; returns how many calls. */
static unsigned drain(struct kmsg *k)
{
	unsigned calls = 0;
	int r;

	do {
		r = kmsg_read(k);
		calls++;
	} while (r == 1 && calls < 10000);
	CHECK(r == 0);
	return calls;
}

static const struct kmsg_line *line(struct kmsg *k, size_t i)
{
	return kmsg_store_get(kmsg_store(k), i);
}

static void test_lines(void)
{
	struct kmsg_stats st;
	int peer;
	struct kmsg *k = reader_new(8, NULL, 0, &peer);
	const struct kmsg_line *l;

	/* a record of three lines (one empty), one whose newline ends it,
	 * an empty one, a user-space one, a bad one between */
	send_record(peer, 3, 10, "first\\x0a\\x0athird");
	send_record(peer, 4, 11, "trailing newline\\x0a");
	send_record(peer, 6, 12, "");
	CHECK(send(peer, "bad record", 10, 0) == 10);
	send_record(peer, 14, 13, "from user space");
	CHECK(kmsg_read(k) == 0);
	CHECK_EQ_U(kmsg_store_count(kmsg_store(k)), 6);
	const char *const want[] = {"first",	      "", "third", "trailing newline", "",
				    "from user space"};
	const uint8_t want_level[] = {3, 3, 3, 4, 6, 6};
	for (size_t i = 0; i < ELEMENTSOF(want); i++) {
		l = line(k, i);
		CHECK(l != NULL);
		if (!l)
			continue;
		if (strcmp(l->text, want[i]) != 0 || l->len != strlen(want[i])) {
			fprintf(stderr, "line %zu: '%s', want '%s'\n", i, l->text, want[i]);
			tests_failed = 1;
		}
		CHECK_EQ_U(l->level, want_level[i]);
		CHECK(l->shown);
		CHECK(!l->fresh);
	}
	l = line(k, 0);
	CHECK(l && l->seq == 10 && l->usec == 10000 && l->facility == 0);
	l = line(k, 2);
	CHECK(l && l->seq == 10 && l->usec == 10000);
	l = line(k, 5);
	CHECK(l && l->facility == 1 && l->seq == 13);
	CHECK(line(k, 6) == NULL);
	kmsg_get_stats(k, &st);
	CHECK_EQ_U(st.records, 4);
	CHECK_EQ_U(st.bad, 1);
	CHECK_EQ_U(st.lines, 6);
	CHECK_EQ_U(st.earlier, 10);
	CHECK_EQ_U(st.lost, 0);

	/* a gap in SEQ: records overwritten or clipped */
	send_record(peer, 6, 20, "after a gap");
	send_record(peer, 6, 21, "next");
	CHECK(kmsg_read(k) == 0);
	kmsg_get_stats(k, &st);
	CHECK_EQ_U(st.lost, 6);

	/* the peer gone: the reader says so */
	close(peer);
	CHECK(kmsg_read(k) == -ESHUTDOWN);
	kmsg_free(k);
	kmsg_free(NULL);
	CHECK(kmsg_new(-1, KMSG_LEVEL_KERNEL, NULL, 0, &k) == -EINVAL);
	CHECK(kmsg_new(dup(0), 9, NULL, 0, &k) == -EINVAL);
}

static void write_setting(const char *path, const char *text)
{
	/* in place (O_TRUNC, same inode): the reader's kept fd sees it */
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	if (fd >= 0)
		close(fd);
}

static void test_filter(void)
{
	char dir[] = "/tmp/test-kmsg-XXXXXX", printk[64], ignore[64];
	struct kmsg_files files = {printk, ignore};
	struct kmsg *k;
	int peer;

	CHECK(kmsg_level_shown(3, 4));
	CHECK(!kmsg_level_shown(4, 4));
	CHECK(!kmsg_level_shown(0, 0));
	CHECK(kmsg_level_shown(7, 8));
	CHECK(kmsg_level_shown(7, 15));

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(EXIT_FAILURE);
	}
	snprintf(printk, sizeof(printk), "%s/printk", dir);
	snprintf(ignore, sizeof(ignore), "%s/ignore_loglevel", dir);
	write_setting(printk, "4\t4\t1\t7\n");
	write_setting(ignore, "N\n");

	k = reader_new(KMSG_LEVEL_KERNEL, &files, 0, &peer);
	CHECK_EQ_U(kmsg_threshold(k), 4);
	drain(k); /* the (empty) backlog: what follows is fresh */
	send_record(peer, 3, 1, "error");
	send_record(peer, 4, 2, "warning");
	CHECK(kmsg_read(k) == 0);
	CHECK(line(k, 0)->shown && line(k, 0)->fresh);
	CHECK(!line(k, 1)->shown && line(k, 1)->fresh);

	/* dmesg -n 8: the next read takes it */
	write_setting(printk, "8\t4\t1\t7\n");
	CHECK_EQ_U(kmsg_threshold(k), 8);
	send_record(peer, 7, 3, "debug");
	CHECK(kmsg_read(k) == 0);
	CHECK(line(k, 2)->shown);
	write_setting(printk, "1 4 1 7\n");
	send_record(peer, 1, 4, "alert");
	send_record(peer, 0, 5, "emerg");
	CHECK(kmsg_read(k) == 0);
	CHECK(!line(k, 3)->shown);
	CHECK(line(k, 4)->shown);
	/* after an oops: 15, all */
	write_setting(printk, "15\t4\t1\t7\n");
	CHECK_EQ_U(kmsg_threshold(k), 15);
	/* ignore_loglevel: everything, whatever the level */
	write_setting(printk, "1\t4\t1\t7\n");
	write_setting(ignore, "Y\n");
	CHECK(kmsg_threshold(k) > 7);
	send_record(peer, 7, 6, "debug again");
	CHECK(kmsg_read(k) == 0);
	CHECK(line(k, 5)->shown);
	/* an unreadable value: the default */
	write_setting(ignore, "N\n");
	write_setting(printk, "\n");
	CHECK_EQ_U(kmsg_threshold(k), KMSG_LEVEL_FALLBACK);
	close(peer);
	kmsg_free(k);

	/* a fixed level: the threshold is it, and the kernel's console log
	 * level is still read (an oops' 15 wakes the screen) */
	write_setting(printk, "4\t4\t1\t7\n");
	k = reader_new(3, &files, 0, &peer);
	CHECK_EQ_U(kmsg_threshold(k), 3);
	CHECK_EQ_U(kmsg_console_level(k), 4);
	write_setting(printk, "15\t4\t1\t7\n");
	CHECK_EQ_U(kmsg_threshold(k), 3);
	CHECK_EQ_U(kmsg_console_level(k), 15);
	close(peer);
	kmsg_free(k);

	/* files that are not there: level 7, logged */
	unlink(printk);
	unlink(ignore);
	k = reader_new(KMSG_LEVEL_KERNEL, &files, 0, &peer);
	CHECK_EQ_U(kmsg_threshold(k), KMSG_LEVEL_FALLBACK);
	CHECK(kmsg_console_level(k) == -1);
	close(peer);
	kmsg_free(k);
	rmdir(dir);

	/* fixed levels: the files do not count */
	k = reader_new(3, &files, 0, &peer);
	CHECK_EQ_U(kmsg_threshold(k), 3);
	drain(k);
	send_record(peer, 2, 1, "crit");
	send_record(peer, 3, 2, "err");
	CHECK(kmsg_read(k) == 0);
	CHECK(line(k, 0)->shown && !line(k, 1)->shown);
	close(peer);
	kmsg_free(k);
	/* off (0): nothing, not even emerg; still stored for the view */
	k = reader_new(0, &files, 0, &peer);
	drain(k);
	send_record(peer, 0, 1, "emerg");
	CHECK(kmsg_read(k) == 0);
	CHECK(line(k, 0) && !line(k, 0)->shown);
	close(peer);
	kmsg_free(k);
}

static void test_store(void)
{
	struct kmsg_store s;
	struct kmsg_line proto = {.level = 6};
	char text[64];
	size_t max_n = 0;

	kmsg_store_init(&s, 8192);
	for (unsigned i = 0; i < 1000; i++) {
		int n = snprintf(text, sizeof(text), "line %u of the store", i);

		proto.seq = i;
		const struct kmsg_line *l = kmsg_store_append(&s, &proto, text, (size_t)n);
		CHECK(l->seq == i && strcmp(l->text, text) == 0);
		CHECK(s.bytes <= s.budget);
		max_n = MAX(max_n, kmsg_store_count(&s));
	}
	/* roughly budget / (header + text + slot) lines, oldest gone */
	CHECK(kmsg_store_count(&s) > 8192 / 128);
	CHECK_EQ_U(kmsg_store_dropped(&s) + kmsg_store_count(&s), 1000);
	CHECK_EQ_U(kmsg_store_get(&s, 0)->seq, kmsg_store_dropped(&s));
	CHECK_EQ_U(kmsg_store_get(&s, kmsg_store_count(&s) - 1)->seq, 999);
	CHECK(strcmp(kmsg_store_get(&s, kmsg_store_count(&s) - 1)->text, "line 999 of the store") ==
	      0);
	for (size_t i = 1; i < kmsg_store_count(&s); i++)
		CHECK_EQ_U(kmsg_store_get(&s, i)->seq, kmsg_store_get(&s, i - 1)->seq + 1);
	CHECK(kmsg_store_get(&s, kmsg_store_count(&s)) == NULL);
	CHECK(s.cap <= 2 * max_n + 64);

	/* a line larger than the budget: it alone is kept */
	char big[10000];
	memset(big, 'x', sizeof(big));
	proto.seq = 1000;
	kmsg_store_append(&s, &proto, big, sizeof(big));
	CHECK_EQ_U(kmsg_store_count(&s), 1);
	CHECK_EQ_U(kmsg_store_get(&s, 0)->len, sizeof(big));
	CHECK_EQ_U(kmsg_store_dropped(&s), 1000);
	kmsg_store_fini(&s);
}

static void test_flood(void)
{
	const struct kmsg_line *out[KMSG_BAND_LINES_MAX];
	char text[64];
	uint64_t skipped = 99;
	struct kmsg_stats st;
	int peer, r;
	struct kmsg *k = reader_new(4, NULL, 0, &peer);

	/* the backlog, read KMSG_READ_MAX records a call: never in the band */
	for (unsigned i = 0; i < 300; i++) {
		snprintf(text, sizeof(text), "backlog %u", i);
		send_record(peer, 2, i, text);
	}
	r = kmsg_read(k);
	kmsg_get_stats(k, &st);
	CHECK(r == 1);
	CHECK_EQ_U(st.records, KMSG_READ_MAX);
	CHECK_EQ_U(drain(k), 1);
	CHECK_EQ_U(kmsg_store_count(kmsg_store(k)), 300);
	CHECK(!line(k, 299)->fresh && line(k, 299)->shown);
	CHECK_EQ_U(kmsg_take_new(k, 3, out, &skipped), 0);
	CHECK_EQ_U(skipped, 0);

	/* a flood after it, taken in chunks as it comes: the newest 3 shown
	 * lines and the count of the rest */
	for (unsigned i = 1000; i < 3000; i++) {
		snprintf(text, sizeof(text), "flood %u", i);
		send_record(peer, i % 2 ? 2 : 6, i, text);
		if (i % 250 == 249)
			CHECK(kmsg_read(k) == 0);
	}
	/* out[] is only read as far as it was filled */
	memset(out, 0, sizeof(out));
	CHECK_EQ_U(kmsg_take_new(k, 3, out, &skipped), 3);
	CHECK(out[0] && strcmp(out[0]->text, "flood 2995") == 0);
	CHECK(out[1] && strcmp(out[1]->text, "flood 2997") == 0);
	CHECK(out[2] && strcmp(out[2]->text, "flood 2999") == 0);
	CHECK(out[2] && out[2]->fresh && out[2]->shown && out[2]->level == 2);
	CHECK_EQ_U(skipped, 1000 - 3);
	CHECK_EQ_U(kmsg_take_new(k, 3, out, &skipped), 0);
	CHECK_EQ_U(skipped, 0);
	/* fewer than asked; more than the band can hold is capped */
	send_record(peer, 1, 3000, "one");
	CHECK(kmsg_read(k) == 0);
	memset(out, 0, sizeof(out));
	CHECK_EQ_U(kmsg_take_new(k, 3, out, &skipped), 1);
	CHECK(out[0] && strcmp(out[0]->text, "one") == 0 && skipped == 0);
	for (unsigned i = 3001; i < 3020; i++)
		send_record(peer, 1, i, "many");
	CHECK(kmsg_read(k) == 0);
	CHECK_EQ_U(kmsg_take_new(k, 100, out, &skipped), KMSG_BAND_LINES_MAX);
	CHECK_EQ_U(skipped, 19 - KMSG_BAND_LINES_MAX);
	close(peer);
	kmsg_free(k);

	/* a store too small for the band's lines: the dropped ones are skipped */
	k = reader_new(4, NULL, 256, &peer);
	drain(k);
	for (unsigned i = 0; i < 10; i++) {
		snprintf(text, sizeof(text), "small store %u", i);
		send_record(peer, 2, i, text);
	}
	CHECK(kmsg_read(k) == 0);
	size_t n = kmsg_take_new(k, 10, out, &skipped);
	CHECK(n >= 1 && n < 10);
	CHECK_EQ_U(n + skipped, 10);
	CHECK(n >= 1 && strcmp(out[n - 1]->text, "small store 9") == 0);
	close(peer);
	kmsg_free(k);
}

/* The host's /dev/kmsg: a record written with <2> comes back at level 2
 * (facility 1, user space), in the backlog when written before the open and
 * fresh in the band when after. */
static void test_real_kmsg(void)
{
	const struct kmsg_line *out[KMSG_BAND_LINES_MAX];
	char marker[2][96], rec[128];
	bool found[2] = {false, false};
	uint64_t skipped;
	struct kmsg *k;
	int wfd, fd, n;

	if (geteuid() != 0) {
		fprintf(stderr, "test_real_kmsg: not root: writing to /dev/kmsg needs root; "
				"skipped\n");
		return;
	}
	wfd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	if (wfd < 0) {
		fprintf(stderr, "test_real_kmsg: /dev/kmsg not writable (%s); skipped\n",
			strerror(errno));
		return;
	}
	for (int i = 0; i < 2; i++)
		snprintf(marker[i], sizeof(marker[i]), "consoled test-kmsg %d %ld.%d marker %s",
			 (int)getpid(), (long)time(NULL), i, i ? "after open" : "before open");
	n = snprintf(rec, sizeof(rec), "<2>%s\n", marker[0]);
	CHECK(write(wfd, rec, (size_t)n) == n);

	fd = kmsg_open();
	if (fd < 0) {
		fprintf(stderr, "test_real_kmsg: cannot open /dev/kmsg to read: %s\n",
			strerror(-fd));
		tests_failed = 1;
		close(wfd);
		return;
	}
	CHECK(kmsg_new(fd, KMSG_LEVEL_KERNEL, NULL, 0, &k) == 0);
	drain(k);
	n = snprintf(rec, sizeof(rec), "<2>%s\n", marker[1]);
	CHECK(write(wfd, rec, (size_t)n) == n);
	close(wfd);
	drain(k);

	const struct kmsg_store *s = kmsg_store(k);
	for (size_t i = 0; i < kmsg_store_count(s); i++) {
		const struct kmsg_line *l = kmsg_store_get(s, i);

		for (int m = 0; m < 2; m++)
			if (strcmp(l->text, marker[m]) == 0) {
				found[m] = true;
				CHECK_EQ_U(l->level, 2);
				CHECK_EQ_U(l->facility, 1);
				CHECK(l->fresh == (m == 1));
				CHECK(l->usec > 0);
			}
	}
	if (!found[0] || !found[1]) {
		fprintf(stderr, "test_real_kmsg: markers not read back: before %d, after %d\n",
			found[0], found[1]);
		tests_failed = 1;
	}
	/* level 2 is below every console level but 0-2 (dmesg -n 1 or 2); the
	 * host may have logged something of its own meanwhile */
	if (kmsg_threshold(k) > 2) {
		size_t got = kmsg_take_new(k, KMSG_BAND_LINES_MAX, out, &skipped);
		bool in_band = false;

		for (size_t i = 0; i < got; i++)
			in_band |= strcmp(out[i]->text, marker[1]) == 0;
		CHECK(in_band);
	}
	kmsg_free(k);
}

int main(void)
{
	RUN(test_parse);
	RUN(test_lines);
	RUN(test_filter);
	RUN(test_store);
	RUN(test_flood);
	RUN(test_real_kmsg);
	return TESTS_RESULT();
}
