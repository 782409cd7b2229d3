/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Kernel messages: the reader of /dev/kmsg, the level filter the kernel's
 * console applies, and the store of every line since boot.
 *
 * /dev/kmsg gives one record per read(), as
 * "PRIO,SEQ,TS_USEC,FLAGS[,FIELD...];TEXT\n" followed by dictionary lines
 * (" KEY=value\n"; Documentation/ABI/testing/dev-kmsg). PRIO is
 * facility << 3 | level: the kernel's own printk has facility 0, what
 * userspace writes to /dev/kmsg facility 1 or more; both are shown alike if
 * their level passes, as the kernel's consoles do. TEXT has every byte below
 * 0x20, from 0x7f and the backslash written as "\xNN": the reader undoes
 * that and splits the text at its newlines into lines, each with the
 * record's level, sequence number and timestamp (microseconds of the
 * kernel's local_clock since boot). Unknown comma fields (",caller=T1" with
 * CONFIG_PRINTK_CALLER) and the dictionary are ignored. A record longer than
 * the read buffer (8 KiB, KMSG_RECORD_MAX; the kernel clips records to it)
 * fails its read with EINVAL and is lost; a reader that fell behind the
 * kernel's ring gets EPIPE once and continues at the oldest record: the
 * records lost either way are counted from the gap in SEQ.
 *
 * The filter: a line is shown when its level is below a threshold. By
 * default (KMSG_LEVEL_KERNEL) that is the kernel console's log level, the
 * first field of /proc/sys/kernel/printk (`dmesg -n`, loglevel=, quiet),
 * and everything with /sys/module/printk/parameters/ignore_loglevel = Y, as
 * suppress_message_printing() decides in kernel/printk/printk.c. The kernel
 * says nothing when these change, so both are read again (pread() on fds
 * kept open) at every kmsg_read(): a `dmesg -n 8` applies to the records
 * read after it. A fixed level N (1..8) shows levels below N; 0 shows none.
 * Whether a line is shown is decided when it is read and kept with it.
 *
 * The store keeps every line, shown or not, for a view of all messages,
 * within a byte budget: the oldest lines go first and are counted. A line's
 * position is its index among the lines the store ever held: index i is
 * kmsg_store_get(s, i - kmsg_store_dropped(s)) while it is still there.
 *
 * The backlog: a new fd starts at the oldest record the kernel still holds,
 * so the first reads return the messages since boot. Everything read before
 * the first EAGAIN is the backlog: it goes to the store with fresh = false
 * and never to the band, so a start (or a restart) flashes nothing old. Only
 * lines read after that are fresh. A flood that keeps the reader from ever
 * seeing EAGAIN keeps it in the backlog; the reader drains 128 KiB of ring
 * much faster than the kernel fills it, so that ends at once in practice.
 *
 * Bounded work: kmsg_read() reads at most KMSG_READ_MAX records and says
 * whether more are pending, so the caller reschedules it rather than
 * looping; the band takes only the newest lines it can show and a count of
 * the shown lines it skipped (kmsg_take_new()), so a flood of thousands of
 * messages a second costs their parsing and the store's appends, nothing
 * per line on the screen.
 *
 * Text is the record's bytes unescaped: UTF-8 as the kernel printed it, but
 * control bytes (tab, ESC, ...) and malformed UTF-8 may be there: whoever
 * draws or mirrors a line must not pass them to a terminal as they are.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The threshold of the kernel's console log level (the default). */
#define KMSG_LEVEL_KERNEL (-1)
/* A fixed threshold: levels below it are shown; 0 shows nothing, 8 all. */
#define KMSG_LEVEL_MAX 8
/* The threshold when /proc/sys/kernel/printk cannot be read: the kernel's
 * CONFIG_CONSOLE_LOGLEVEL_DEFAULT (Debian: 7). */
#define KMSG_LEVEL_FALLBACK 7

/* Records read per kmsg_read() at most. */
#define KMSG_READ_MAX 256
/* The read buffer: the kernel's CONSOLE_EXT_LOG_MAX (6.1), more than the
 * 2048-byte PRINTK_MESSAGE_MAX of newer kernels. */
#define KMSG_RECORD_MAX 8192
/* The store's default budget: the kernel's whole ring on Debian is 128 KiB
 * (CONFIG_LOG_BUF_SHIFT=17), so this holds a long boot and hours after. */
#define KMSG_BUDGET_DEFAULT (1024 * 1024)
/* The most lines kmsg_take_new() gives at once: the band's height at most. */
#define KMSG_BAND_LINES_MAX 10

struct kmsg_line {
	uint64_t seq;  /* the record's sequence number */
	uint64_t usec; /* the record's timestamp: microseconds since boot */
	uint8_t level; /* 0 (emerg) .. 7 (debug) */
	uint8_t facility;
	bool shown; /* the level passed the filter when the line was read */
	bool fresh; /* read after the backlog: a candidate for the band */
	uint32_t len;
	char text[]; /* len bytes, no newline, NUL-terminated */
};

/* Every line read, oldest first, within budget bytes (each line costs its
 * text, its header and its slot). The newest line is always kept. */
struct kmsg_store {
	struct kmsg_line **slots; /* ring of cap slots, n used from head */
	size_t cap, head, n;
	size_t bytes, budget;
	uint64_t dropped; /* lines dropped for the budget */
};

void kmsg_store_init(struct kmsg_store *s, size_t budget);
void kmsg_store_fini(struct kmsg_store *s);
/* Appends a copy of text[0..len) (len <= UINT32_MAX) with the other fields
 * from *proto, drops the oldest lines over the budget; O(1) amortized.
 * Returns the new line, valid until a later append drops it. */
const struct kmsg_line *kmsg_store_append(struct kmsg_store *s, const struct kmsg_line *proto,
					  const char *text, size_t len);
/* Lines held now. */
static inline size_t kmsg_store_count(const struct kmsg_store *s)
{
	return s->n;
}
/* Lines dropped so far: the index of the oldest line held. */
static inline uint64_t kmsg_store_dropped(const struct kmsg_store *s)
{
	return s->dropped;
}
/* The i-th line held, 0 = the oldest, or NULL for i >= count. */
const struct kmsg_line *kmsg_store_get(const struct kmsg_store *s, size_t i);

/* One record as parsed: text points into the caller's buffer. */
struct kmsg_record {
	unsigned prio; /* facility << 3 | level */
	uint64_t seq, usec;
	bool cont; /* FLAGS 'c': a continuation the kernel could not merge */
	char *text;
	size_t len;
};

/* Parses one record of len bytes in buf and unescapes its text in place
 * (text never grows). Returns 0, or -EBADMSG with a reason in *ret_error
 * ("no ';' after the header", ...); *ret is untouched then. Does not log. */
int kmsg_parse_record(char *buf, size_t len, struct kmsg_record *ret, const char **ret_error);

/* Whether a line of level passes threshold (a fixed one or the kernel's,
 * kmsg_threshold()): level < threshold. */
static inline bool kmsg_level_shown(unsigned level, int threshold)
{
	return (int)level < threshold;
}

/* Where the reader looks; tests put files of their own there. */
struct kmsg_files {
	const char *printk;	     /* /proc/sys/kernel/printk */
	const char *ignore_loglevel; /* /sys/module/printk/parameters/ignore_loglevel */
};
extern const struct kmsg_files kmsg_system_files;

struct kmsg_stats {
	uint64_t records;  /* records read and parsed */
	uint64_t lines;	   /* lines appended to the store */
	uint64_t lost;	   /* records overwritten or clipped before they were read (SEQ gaps) */
	uint64_t earlier;  /* records gone from the kernel's ring before the first read */
	uint64_t bad;	   /* records that did not parse (dropped) */
	uint64_t overruns; /* EPIPE reads */
};

struct kmsg;

/* Opens /dev/kmsg O_RDONLY|O_NONBLOCK|O_CLOEXEC at its oldest record.
 * Returns the fd or a negative errno (EPERM: kernel.dmesg_restrict=1
 * without CAP_SYSLOG, or printk.devkmsg=off). Does not log. */
int kmsg_open(void);

/* A reader of fd (from kmsg_open(), or any fd that gives one record per
 * read() and EAGAIN when there is none, such as a SOCK_SEQPACKET socket),
 * which it owns from now on, also on failure. level: KMSG_LEVEL_KERNEL or
 * 0..KMSG_LEVEL_MAX; files (NULL: kmsg_system_files) are opened now (the
 * printk file with any level, ignore_loglevel with KMSG_LEVEL_KERNEL) and a
 * file that cannot be read is logged and replaced by KMSG_LEVEL_FALLBACK and
 * ignore_loglevel N. budget: the store's bytes, 0 =
 * KMSG_BUDGET_DEFAULT. Returns 0 or a negative errno. */
int kmsg_new(int fd, int level, const struct kmsg_files *files, size_t budget, struct kmsg **ret);
void kmsg_free(struct kmsg *k);

/* The fd to wait on for input (EPOLLIN; EPOLLPRI|EPOLLERR with EPIPE
 * pending: read then too). */
int kmsg_fd(const struct kmsg *k);

/* Reads up to KMSG_READ_MAX records into the store, with the threshold read
 * once for them. Returns 0 when the fd has no more (EAGAIN), 1 when records
 * may be pending (call again from a later iteration of the event loop), or
 * a negative errno when the fd failed or ended: stop watching it (logged). */
int kmsg_read(struct kmsg *k);

/* Parses one record as kmsg_read() does and stores its lines (buf is
 * changed). Returns 0 or -EBADMSG (counted in stats.bad; logged at debug). */
int kmsg_feed(struct kmsg *k, char *buf, size_t len);

/* The threshold now: 0..KMSG_LEVEL_MAX for a fixed level, else the first
 * field of the printk file (which may exceed 8: 10 with `debug`, 15 after an
 * oops), 16 with ignore_loglevel. */
int kmsg_threshold(struct kmsg *k);

/* The kernel's console log level now (the printk file's first field, read
 * whatever the threshold is: 15 after console_verbose(), at an oops or a
 * panic), or -1 when the file cannot be read. */
int kmsg_console_level(struct kmsg *k);

/* The band's lines: the newest fresh shown lines (at most max, at most
 * KMSG_BAND_LINES_MAX) added since the last call, oldest first, into
 * out[]; *ret_skipped = the fresh shown lines since the last call that are
 * not among them (older, or already dropped from the store). Returns how
 * many were put into out. The pointers are valid until the next
 * kmsg_read() or kmsg_feed(). */
size_t kmsg_take_new(struct kmsg *k, size_t max, const struct kmsg_line **out,
		     uint64_t *ret_skipped);

/* Every line since boot (within the budget), for the view. */
const struct kmsg_store *kmsg_store(const struct kmsg *k);
void kmsg_get_stats(const struct kmsg *k, struct kmsg_stats *ret);
