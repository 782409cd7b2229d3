/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "cluster"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "log.h"
#include "util/util.h"

#define CLUSTER_COUNT (CLUSTER_LAST - CLUSTER_FIRST + 1)

struct cluster {
	uint32_t len;
	uint32_t flags;
	uint32_t ch[CLUSTER_MAX_LEN];
};

struct cluster_table {
	struct cluster *clusters; /* stand-in CLUSTER_FIRST + i is clusters[i] */
	size_t n, cap;
	uint32_t *index; /* open addressing over clusters: i + 1, 0 = empty */
	size_t index_cap;
	bool full_logged;
};

struct cluster_table *cluster_table_new(void)
{
	return xcalloc(1, sizeof(struct cluster_table));
}

void cluster_table_free(struct cluster_table *t)
{
	if (!t)
		return;
	free(t->clusters);
	free(t->index);
	free(t);
}

void cluster_table_reset(struct cluster_table *t)
{
	free(t->clusters);
	free(t->index);
	*t = (struct cluster_table){0};
}

static uint32_t cluster_hash(const uint32_t *ch, size_t len, unsigned flags)
{
	uint32_t h = (2166136261u ^ flags) * 16777619u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ ch[i]) * 16777619u;
	return h;
}

/* a[0..len) == b[0..len): clusters are a few code points, compared on
 * every character with marks the stream stage prints (no memcmp() call) */
static inline bool cluster_same(const uint32_t *a, const uint32_t *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

static void cluster_index_insert(struct cluster_table *t, uint32_t i)
{
	const struct cluster *c = &t->clusters[i];
	size_t slot = cluster_hash(c->ch, c->len, c->flags) & (t->index_cap - 1);

	while (t->index[slot])
		slot = (slot + 1) & (t->index_cap - 1);
	t->index[slot] = i + 1;
}

uint32_t cluster_intern(struct cluster_table *t, const uint32_t *ch, size_t len, unsigned flags)
{
	size_t slot;

	len = MIN(len, CLUSTER_MAX_LEN);
	if (t->index_cap) {
		slot = cluster_hash(ch, len, flags) & (t->index_cap - 1);
		for (; t->index[slot]; slot = (slot + 1) & (t->index_cap - 1)) {
			const struct cluster *c = &t->clusters[t->index[slot] - 1];

			if (c->len == len && c->flags == flags && cluster_same(c->ch, ch, len))
				return CLUSTER_FIRST + t->index[slot] - 1;
		}
	}
	if (t->n == CLUSTER_COUNT) {
		if (!t->full_logged)
			log_warning("%u distinct combining sequences and dim or struck-out "
				    "characters seen: further marks and those attributes are "
				    "dropped",
				    CLUSTER_COUNT);
		t->full_logged = true;
		return 0;
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->clusters = xrealloc(t->clusters, t->cap * sizeof(struct cluster));
	}
	t->clusters[t->n].len = (uint32_t)len;
	t->clusters[t->n].flags = flags;
	memcpy(t->clusters[t->n].ch, ch, len * sizeof(uint32_t));
	t->n++;
	/* the index stays at most half full */
	if (t->n * 2 > t->index_cap) {
		free(t->index);
		t->index_cap = t->index_cap ? t->index_cap * 2 : 128;
		t->index = xcalloc(t->index_cap, sizeof(uint32_t));
		for (uint32_t i = 0; i < t->n; i++)
			cluster_index_insert(t, i);
	} else
		cluster_index_insert(t, (uint32_t)(t->n - 1));
	return CLUSTER_FIRST + (uint32_t)(t->n - 1);
}

const uint32_t *cluster_lookup(const struct cluster_table *t, uint32_t cp, size_t *ret_len,
			       unsigned *ret_flags)
{
	const struct cluster *c;

	if (cp < CLUSTER_FIRST || cp - CLUSTER_FIRST >= t->n)
		return NULL;
	c = &t->clusters[cp - CLUSTER_FIRST];
	*ret_len = c->len;
	if (ret_flags)
		*ret_flags = c->flags;
	return c->ch;
}

size_t cluster_table_count(const struct cluster_table *t)
{
	return t->n;
}

int cluster_table_restore(struct cluster_table *t, uint32_t cp, const uint32_t *ch, size_t len,
			  unsigned flags)
{
	size_t n = t->n;

	if (cp != CLUSTER_FIRST + n || n >= CLUSTER_COUNT || len < 1 || len > CLUSTER_MAX_LEN ||
	    (flags & ~(unsigned)(CLUSTER_DIM | CLUSTER_STRIKE)))
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (ch[i] > 0x10ffff)
			return -EINVAL;
	/* a new cluster gets exactly the next stand-in; one already in the
	 * table gets its own again (and nothing changes) */
	return cluster_intern(t, ch, len, flags) == cp ? 0 : -EINVAL;
}
