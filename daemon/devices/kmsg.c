/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "kmsg"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "kmsg.h"
#include "../util/log.h"
#include "../util/util.h"

/* kmsg_threshold() with ignore_loglevel: above every level and above the
 * kernel's own 15 (CONSOLE_LOGLEVEL_MOTORMOUTH). */
#define THRESHOLD_ALL 16

#define STR_(x) #x
#define STR(x) STR_(x)

const struct kmsg_files kmsg_system_files = {
    .printk = "/proc/sys/kernel/printk",
    .ignore_loglevel = "/sys/module/printk/parameters/ignore_loglevel",
};

struct kmsg {
	int fd;
	int level; /* KMSG_LEVEL_KERNEL or a fixed threshold */
	int printk_fd, ignore_fd;
	bool backlog;	 /* no EAGAIN yet: what is read is the backlog */
	bool seq_known;	 /* next_seq is the record expected next */
	bool bad_logged; /* a bad record was logged at warning level */
	int threshold;	 /* for the records of the current kmsg_read() */
	uint64_t next_seq;
	struct kmsg_store store;
	char buf[KMSG_RECORD_MAX];
	/* The band: store indices (kmsg_store_dropped() + i) of the newest
	 * fresh shown lines, a ring of KMSG_BAND_LINES_MAX, and how many
	 * fresh shown lines came since the last kmsg_take_new(). */
	uint64_t recent[KMSG_BAND_LINES_MAX];
	uint64_t n_recent, pending;
	struct kmsg_stats stats;
};

/* --- the store --- */

/* What a line costs: its allocation and its slot. */
static size_t line_cost(const struct kmsg_line *l)
{
	return sizeof(*l) + l->len + 1 + sizeof(struct kmsg_line *);
}

void kmsg_store_init(struct kmsg_store *s, size_t budget)
{
	*s = (struct kmsg_store){.budget = budget ? budget : KMSG_BUDGET_DEFAULT};
}

void kmsg_store_fini(struct kmsg_store *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->slots[(s->head + i) % s->cap]);
	free(s->slots);
	*s = (struct kmsg_store){};
}

static void store_drop_oldest(struct kmsg_store *s)
{
	struct kmsg_line *l = s->slots[s->head];

	s->bytes -= line_cost(l);
	free(l);
	s->head = (s->head + 1) % s->cap;
	s->n--;
	s->dropped++;
}

const struct kmsg_line *kmsg_store_append(struct kmsg_store *s, const struct kmsg_line *proto,
					  const char *text, size_t len)
{
	struct kmsg_line *l = xmalloc(sizeof(*l) + len + 1);

	*l = *proto;
	l->len = (uint32_t)len;
	memcpy(l->text, text, len);
	l->text[len] = '\0';

	while (s->n > 0 && s->bytes + line_cost(l) > s->budget)
		store_drop_oldest(s);
	if (s->n == s->cap) {
		/* Doubling, the ring unrolled into the new array's start. */
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct kmsg_line **slots = xcalloc(cap, sizeof(*slots));

		for (size_t i = 0; i < s->n; i++)
			slots[i] = s->slots[(s->head + i) % s->cap];
		free(s->slots);
		s->slots = slots;
		s->cap = cap;
		s->head = 0;
	}
	s->slots[(s->head + s->n) % s->cap] = l;
	s->n++;
	s->bytes += line_cost(l);
	return l;
}

const struct kmsg_line *kmsg_store_get(const struct kmsg_store *s, size_t i)
{
	return i < s->n ? s->slots[(s->head + i) % s->cap] : NULL;
}

/* --- the parser --- */

/* A decimal number of [*p, end) up to the next ',' or end, no sign. */
static int parse_field_u64(const char **p, const char *end, uint64_t *ret)
{
	const char *q = *p;
	uint64_t v = 0;

	if (q == end || *q < '0' || *q > '9')
		return -EBADMSG;
	for (; q < end && *q >= '0' && *q <= '9'; q++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -EBADMSG;
		v = v * 10 + (uint64_t)(*q - '0');
	}
	if (q < end && *q != ',')
		return -EBADMSG;
	*p = q < end ? q + 1 : q;
	*ret = v;
	return 0;
}

/* "\xNN" to its byte, in place; any other backslash stays. Returns the new
 * length. */
static size_t unescape(char *s, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		int hi, lo;

		if (s[i] == '\\' && i + 3 < len && s[i + 1] == 'x' &&
		    (hi = hex_value(s[i + 2])) >= 0 && (lo = hex_value(s[i + 3])) >= 0) {
			s[o++] = (char)(hi << 4 | lo);
			i += 3;
		} else
			s[o++] = s[i];
	}
	return o;
}

int kmsg_parse_record(char *buf, size_t len, struct kmsg_record *ret, const char **ret_error)
{
	const char *end, *semi = memchr(buf, ';', len), *p = buf, *flags, *comma;
	uint64_t prio, seq, usec;
	char *text, *nl;
	bool cont;

	if (!semi) {
		*ret_error = "no ';' after the header";
		return -EBADMSG;
	}
	end = semi;
	if (parse_field_u64(&p, end, &prio) < 0 || prio > UINT32_MAX) {
		*ret_error = "bad priority";
		return -EBADMSG;
	}
	if (parse_field_u64(&p, end, &seq) < 0) {
		*ret_error = "bad sequence number";
		return -EBADMSG;
	}
	if (parse_field_u64(&p, end, &usec) < 0) {
		*ret_error = "bad timestamp";
		return -EBADMSG;
	}
	if (p == end && p[-1] != ',') {
		*ret_error = "no flags";
		return -EBADMSG;
	}
	/* FLAGS up to the next ',': fields after it are ignored. */
	flags = p;
	comma = memchr(flags, ',', (size_t)(end - flags));
	cont = memchr(flags, 'c', (size_t)((comma ? comma : end) - flags)) != NULL;
	/* The text ends at the first newline: dictionary lines follow. */
	text = buf + (semi - buf) + 1;
	nl = memchr(text, '\n', len - (size_t)(text - buf));
	*ret = (struct kmsg_record){
	    .prio = (unsigned)prio,
	    .seq = seq,
	    .usec = usec,
	    .cont = cont,
	    .text = text,
	    .len = unescape(text, nl ? (size_t)(nl - text) : len - (size_t)(text - buf)),
	};
	return 0;
}

/* --- the filter --- */

/* The first number of fd's content (re-read from its start), or -1. */
static int read_first_number(int fd)
{
	char buf[64];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	int v = 0, digits = 0;

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	for (const char *p = buf + strspn(buf, " \t"); *p >= '0' && *p <= '9' && digits < 4; p++)
		v = v * 10 + (*p - '0'), digits++;
	return digits ? v : -1;
}

int kmsg_threshold(struct kmsg *k)
{
	char c;
	int v;

	if (k->level != KMSG_LEVEL_KERNEL)
		return k->level;
	if (k->ignore_fd >= 0 && pread(k->ignore_fd, &c, 1, 0) == 1 && (c == 'Y' || c == 'y'))
		return THRESHOLD_ALL;
	v = kmsg_console_level(k);
	return v >= 0 ? MIN(v, THRESHOLD_ALL) : KMSG_LEVEL_FALLBACK;
}

int kmsg_console_level(struct kmsg *k)
{
	return k->printk_fd >= 0 ? read_first_number(k->printk_fd) : -1;
}

/* A setting's file, kept open for pread(); -1 (logged) when it cannot be,
 * and instead stands in. */
static int open_setting(const char *path, const char *instead)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		log_warning_errno(errno, "Cannot read %s: %m; taking %s.", path, instead);
	return fd;
}

/* --- the reader --- */

int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int kmsg_new(int fd, int level, const struct kmsg_files *files, size_t budget, struct kmsg **ret)
{
	struct kmsg *k;

	if (fd < 0 || level < KMSG_LEVEL_KERNEL || level > KMSG_LEVEL_MAX) {
		if (fd >= 0)
			close(fd);
		return -EINVAL;
	}
	k = xcalloc(1, sizeof(*k));
	k->fd = fd;
	k->level = level;
	k->printk_fd = k->ignore_fd = -1;
	k->backlog = true;
	kmsg_store_init(&k->store, budget);
	if (!files)
		files = &kmsg_system_files;
	/* with a fixed level too: kmsg_console_level() tells an oops */
	k->printk_fd =
	    open_setting(files->printk, level == KMSG_LEVEL_KERNEL
					    ? "console log level " STR(KMSG_LEVEL_FALLBACK)
					    : "no oops to wake the screen");
	if (level == KMSG_LEVEL_KERNEL)
		k->ignore_fd = open_setting(files->ignore_loglevel, "ignore_loglevel N");
	k->threshold = kmsg_threshold(k);
	*ret = k;
	return 0;
}

void kmsg_free(struct kmsg *k)
{
	if (!k)
		return;
	kmsg_store_fini(&k->store);
	closep(&k->fd);
	closep(&k->printk_fd);
	closep(&k->ignore_fd);
	free(k);
}

int kmsg_fd(const struct kmsg *k)
{
	return k->fd;
}

static void add_line(struct kmsg *k, const struct kmsg_record *r, const char *text, size_t len)
{
	struct kmsg_line proto = {
	    .seq = r->seq,
	    .usec = r->usec,
	    .level = (uint8_t)(r->prio & 7),
	    .facility = (uint8_t)MIN(r->prio >> 3, 255u),
	    .fresh = !k->backlog,
	};

	proto.shown = kmsg_level_shown(proto.level, k->threshold);
	kmsg_store_append(&k->store, &proto, text, len);
	k->stats.lines++;
	if (proto.shown && proto.fresh) {
		uint64_t index = kmsg_store_dropped(&k->store) + kmsg_store_count(&k->store) - 1;

		k->recent[k->n_recent++ % KMSG_BAND_LINES_MAX] = index;
		k->pending++;
	}
}

int kmsg_feed(struct kmsg *k, char *buf, size_t len)
{
	struct kmsg_record r;
	const char *why;
	int ret = kmsg_parse_record(buf, len, &r, &why);

	if (ret < 0) {
		_cleanup_(freep) char *e = NULL;
		char head[81];

		k->stats.bad++;
		memcpy(head, buf, MIN(len, sizeof(head) - 1));
		head[MIN(len, sizeof(head) - 1)] = '\0';
		e = cescape(head);
		log_full_errno(k->bad_logged ? LOG_DEBUG : LOG_WARNING, 0,
			       "Kernel message record not understood (%s): '%s', dropped.", why, e);
		k->bad_logged = true;
		return ret;
	}
	k->stats.records++;
	if (!k->seq_known)
		k->stats.earlier = r.seq;
	else if (r.seq > k->next_seq)
		k->stats.lost += r.seq - k->next_seq;
	k->seq_known = true;
	k->next_seq = r.seq + 1;

	/* A trailing newline ends the last line; it does not start another. */
	for (size_t start = 0;;) {
		const char *nl = memchr(r.text + start, '\n', r.len - start);
		size_t end = nl ? (size_t)(nl - r.text) : r.len;

		add_line(k, &r, r.text + start, end - start);
		if (!nl || end + 1 == r.len)
			break;
		start = end + 1;
	}
	return 0;
}

int kmsg_read(struct kmsg *k)
{
	k->threshold = kmsg_threshold(k);
	for (unsigned n = 0; n < KMSG_READ_MAX; n++) {
		ssize_t len = read(k->fd, k->buf, sizeof(k->buf));

		if (len > 0) {
			(void)kmsg_feed(k, k->buf, (size_t)len);
			continue;
		}
		if (len == 0)
			return log_warning_errno(-ESHUTDOWN,
						 "Kernel messages ended, no longer read.");
		switch (errno) {
		case EAGAIN:
			k->backlog = false;
			return 0;
		case EPIPE:
			/* Overwritten before read: the next record's SEQ
			 * says how many. */
			k->stats.overruns++;
			break;
		case EINVAL:
			/* A record longer than the buffer: the kernel has
			 * moved past it; the SEQ gap counts it. */
			break;
		case EINTR:
			break;
		default:
			return log_warning_errno(-errno, "Cannot read kernel messages: %m");
		}
	}
	return 1;
}

size_t kmsg_take_new(struct kmsg *k, size_t max, const struct kmsg_line **out,
		     uint64_t *ret_skipped)
{
	uint64_t first = kmsg_store_dropped(&k->store);
	size_t want = (size_t)MIN(MIN(max, (size_t)KMSG_BAND_LINES_MAX), k->pending), n = 0;

	/* The newest want entries of the ring, oldest first; those the store
	 * dropped meanwhile are skipped. */
	for (size_t i = want; i > 0; i--) {
		uint64_t index = k->recent[(k->n_recent - i) % KMSG_BAND_LINES_MAX];

		if (index >= first)
			out[n++] = kmsg_store_get(&k->store, (size_t)(index - first));
	}
	*ret_skipped = k->pending - n;
	k->pending = 0;
	return n;
}

const struct kmsg_store *kmsg_store(const struct kmsg *k)
{
	return &k->store;
}

void kmsg_get_stats(const struct kmsg *k, struct kmsg_stats *ret)
{
	*ret = k->stats;
}
