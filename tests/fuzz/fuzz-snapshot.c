/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the snapshot reader (daemon/terminal/snapshot.c): the input is
 * a memfd's content, restored into a fresh terminal (libtsm behind the
 * stream stage) as consoled does at adoption. Nothing may crash; a refusal
 * is -EBADMSG or -EPROTONOSUPPORT; what is accepted must be a terminal that
 * works: every stand-in on it is one the restored table holds, and a
 * snapshot of it restores to the same picture, also after more output.
 */
#include <errno.h>
#include <libtsm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../daemon/terminal/cluster.h"
#include "../../daemon/util/log.h"
#include "../../daemon/terminal/snapshot.h"
#include "../../daemon/terminal/stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct term {
	struct tsm_screen *screen;
	struct tsm_vte *vte;
	struct cluster_table *table;
	struct stream *stream;
	uint64_t hash;
};

static void reply(const char *bytes, size_t len, void *data)
{
	(void)bytes;
	(void)len;
	(void)data;
}

static void vte_write(struct tsm_vte *vte, const char *u8, size_t len, void *data)
{
	(void)vte;
	reply(u8, len, data);
}

static void term_init(struct term *t)
{
	memset(t, 0, sizeof(*t));
	if (tsm_screen_new(&t->screen, NULL, NULL) < 0 || tsm_screen_resize(t->screen, 20, 6) < 0 ||
	    tsm_vte_new(&t->vte, t->screen, vte_write, t, NULL, NULL) < 0)
		abort();
	tsm_screen_set_max_sb(t->screen, 10);
	t->table = cluster_table_new();
	t->stream = stream_new(&(struct stream_config){
	    .vte = t->vte, .screen = t->screen, .table = t->table, .reply = reply, .userdata = t});
}

static void term_fini(struct term *t)
{
	stream_free(t->stream);
	tsm_vte_unref(t->vte);
	tsm_screen_clear_sb(t->screen);
	tsm_screen_unref(t->screen);
	cluster_table_free(t->table);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x100000001b3ull;
}

/* The picture, hashed; a stand-in nobody handed out traps. */
static int hash_cell(struct tsm_screen *con, uint64_t id, const uint32_t *ch, size_t len,
		     unsigned width, unsigned posx, unsigned posy,
		     const struct tsm_screen_attr *attr, tsm_age_t age, void *data)
{
	struct term *t = data;
	uint32_t c = len ? ch[0] : 0;
	size_t n;

	(void)con;
	(void)id;
	(void)age;
	if (c >= CLUSTER_FIRST && c <= CLUSTER_LAST && !cluster_lookup(t->table, c, &n, NULL))
		__builtin_trap();
	t->hash = mix(t->hash, c);
	t->hash = mix(t->hash, (uint64_t)width << 32 | posx << 16 | posy);
	t->hash = mix(t->hash, (uint64_t)(uint8_t)attr->fccode << 8 | (uint8_t)attr->bccode);
	t->hash = mix(t->hash, (uint64_t)attr->fr << 16 | attr->fg << 8 | attr->fb);
	t->hash = mix(t->hash, (uint64_t)attr->br << 16 | attr->bg << 8 | attr->bb);
	t->hash = mix(t->hash, attr->bold | attr->italic << 1 | attr->underline << 2 |
				   attr->inverse << 3 | attr->blink << 4 | attr->protect << 5);
	return 0;
}

static uint64_t picture(struct term *t)
{
	t->hash = 14695981039346656037ull;
	tsm_screen_draw(t->screen, hash_cell, t);
	t->hash = mix(t->hash, tsm_screen_get_cursor_x(t->screen) << 16 |
				   tsm_screen_get_cursor_y(t->screen));
	t->hash = mix(t->hash, tsm_screen_get_flags(t->screen));
	return t->hash;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char more[] = "x\033[2;3H\xe4\xb8\xad\033[?1049l\r\n\033[1mq\033[b\0338y";
	struct term a, b;
	struct snapshot *s;
	int fd, r;

	log_set_max_level(LOG_ERR);
	fd = memfd_create("fuzz-snapshot", MFD_CLOEXEC);
	if (fd < 0 || (size > 0 && write(fd, data, size) != (ssize_t)size))
		abort();
	term_init(&a);
	r = snapshot_restore(fd, a.screen, a.vte, a.stream, a.table, NULL, NULL);
	close(fd);
	if (getenv("FUZZ_SNAPSHOT_VERBOSE"))
		fprintf(stderr, "restore: %s\n", r ? strerror(-r) : "accepted");
	if (r != 0) {
		if (r != -EBADMSG && r != -EPROTONOSUPPORT)
			__builtin_trap();
		term_fini(&a);
		return 0;
	}
	/* what was accepted snapshots and restores to the same picture */
	if (!snapshot_supported(a.screen) || snapshot_new(10, &s) < 0 ||
	    snapshot_update(s, a.screen, a.stream, a.table) < 0)
		__builtin_trap();
	term_init(&b);
	if (snapshot_restore(snapshot_fd(s), b.screen, b.vte, b.stream, b.table, NULL, NULL) < 0 ||
	    picture(&a) != picture(&b))
		__builtin_trap();
	stream_feed(a.stream, more, sizeof(more) - 1);
	stream_feed(b.stream, more, sizeof(more) - 1);
	if (picture(&a) != picture(&b))
		__builtin_trap();
	snapshot_free(s);
	term_fini(&a);
	term_fini(&b);
	return 0;
}
