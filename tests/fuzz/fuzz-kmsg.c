/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the kernel message reader: the input is a series of
 * /dev/kmsg records separated by NUL bytes (a record from the kernel never
 * holds one: it escapes every byte below 0x20). The first half goes in as
 * the backlog, then a kmsg_read() of the empty socket ends it (EAGAIN) and
 * the rest is fresh; the band takes lines every few records. The store has
 * a small budget, so the oldest lines are dropped all the time.
 *
 * Whatever the bytes: every stored line is one line (no newline in its
 * text, NUL-terminated), its level 0..7, the store within its budget unless
 * it holds a single line, no backlog line in the band, every line the band
 * gets is fresh and shown, and the band's lines plus the skipped count are
 * the fresh shown lines added since it last took them.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../daemon/devices/kmsg.h"
#include "../../daemon/util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define BUDGET 2048

static bool fuzzing;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzzing = true;
	return 0;
}

static void check_store(const struct kmsg_store *s)
{
	if (s->bytes > s->budget && kmsg_store_count(s) > 1)
		__builtin_trap();
	for (size_t i = 0; i < kmsg_store_count(s); i++) {
		const struct kmsg_line *l = kmsg_store_get(s, i);

		if (!l || l->level > 7 || l->text[l->len] != '\0' || memchr(l->text, '\n', l->len))
			__builtin_trap();
	}
}

/* Where l is in the store, or SIZE_MAX. */
static size_t position(const struct kmsg_store *s, const struct kmsg_line *l)
{
	for (size_t i = 0; i < kmsg_store_count(s); i++)
		if (kmsg_store_get(s, i) == l)
			return i;
	return SIZE_MAX;
}

/* The band's lines since the last take, in the store's order (SEQ may go
 * anywhere here); fresh_shown counts the fresh shown lines added meanwhile. */
static void take(struct kmsg *k, uint64_t fresh_shown)
{
	const struct kmsg_line *out[KMSG_BAND_LINES_MAX];
	const struct kmsg_store *s = kmsg_store(k);
	uint64_t skipped;
	size_t n = kmsg_take_new(k, 3, out, &skipped), last = 0;

	if (n > 3 || n + skipped != fresh_shown)
		__builtin_trap();
	for (size_t i = 0; i < n; i++) {
		size_t at = position(s, out[i]);

		if (!out[i]->fresh || !out[i]->shown || at == SIZE_MAX || (i > 0 && at <= last))
			__builtin_trap();
		last = at;
	}
	/* the newest fresh shown line is the band's last one */
	if (n > 0)
		for (size_t i = kmsg_store_count(s); i-- > 0;) {
			const struct kmsg_line *l = kmsg_store_get(s, i);

			if (l->fresh && l->shown) {
				if (l != out[n - 1])
					__builtin_trap();
				break;
			}
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size + 1);
	uint64_t fresh_shown = 0;
	struct kmsg *k;
	size_t n_records = 1, record = 0;
	int sv[2];

	log_set_max_level(fuzzing ? LOG_CRIT : LOG_DEBUG);
	if (!copy || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0)
		abort();
	if (kmsg_new(sv[0], 5, NULL, BUDGET, &k) < 0)
		abort();
	memcpy(copy, data, size);
	copy[size] = '\0';
	for (size_t i = 0; i < size; i++)
		n_records += data[i] == '\0';

	for (char *p = copy, *end = copy + size; p <= end; record++) {
		char *nul = memchr(p, '\0', (size_t)(end - p));
		size_t len = nul ? (size_t)(nul - p) : (size_t)(end - p);
		struct kmsg_stats before, after;

		if (record == n_records / 2 && kmsg_read(k) != 0)
			__builtin_trap();
		kmsg_get_stats(k, &before);
		(void)kmsg_feed(k, p, len);
		kmsg_get_stats(k, &after);
		/* a fresh record at level < 5 puts all its lines in the band */
		if (record >= n_records / 2 && after.records > before.records) {
			const struct kmsg_store *s = kmsg_store(k);
			const struct kmsg_line *last = kmsg_store_get(s, kmsg_store_count(s) - 1);

			if (!last->fresh)
				__builtin_trap();
			if (last->shown)
				fresh_shown += after.lines - before.lines;
		}
		check_store(kmsg_store(k));
		if (record % 4 == 3) {
			take(k, fresh_shown);
			fresh_shown = 0;
		}
		p += len + 1;
	}
	take(k, fresh_shown);
	kmsg_free(k);
	close(sv[1]);
	free(copy);
	return 0;
}
