/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "cluster"
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "../util/log.h"
#include "../util/util.h"

#define CLUSTER_COUNT (CLUSTER_LAST - CLUSTER_FIRST + 1)

struct cluster {
	uint32_t len;
	uint32_t flags;
	uint32_t ch[CLUSTER_MAX_LEN];
};

/* What the index compares: the cluster's first three code points (0 past
 * its length), its length and its flags, in two words. A slot holds the key
 * and the stand-in, so that finding a base with one or two marks (nearly
 * every cluster) reads one slot of 16 bytes and not the cluster array: with
 * a few thousand distinct clusters, each lookup would otherwise touch two
 * places far apart (the cache misses the floor's combining stream showed). */
struct cluster_key {
	uint64_t lo; /* ch[0] | ch[1] << 32 */
	uint64_t hi; /* ch[2] | (len | flags << 4) << 32; the slot adds i + 1 << 40 */
};

#define KEY_SHORT 3	    /* code points a key holds */
#define SLOT_INDEX_SHIFT 40 /* in a slot's hi: i + 1 (0: empty) */
static_assert(CLUSTER_MAX_LEN < 16 && (CLUSTER_DIM | CLUSTER_STRIKE) < 16,
	      "len and flags fit in 4 bits each");
static_assert(CLUSTER_COUNT < 1u << 24, "i + 1 fits above the key");

struct cluster_table {
	struct cluster *clusters; /* stand-in CLUSTER_FIRST + i is clusters[i] */
	size_t n, cap;
	struct cluster_key *index; /* open addressing over clusters, a power of two */
	unsigned index_bits;	   /* 0: no index yet */
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

/* The key of ch[0..len) (1 <= len <= CLUSTER_MAX_LEN) with flags, without
 * branches on len: ch[1] and ch[2] are read only when there (else ch[0],
 * masked out), so that clusters of two and three code points mixed at
 * random cost no mispredicted branches. */
static inline struct cluster_key cluster_key_make(const uint32_t *ch, size_t len, unsigned flags)
{
	uint64_t has1 = len > 1, has2 = len > 2;
	uint64_t c1 = ch[has1] & -has1, c2 = ch[has2 * 2] & -has2;

	return (struct cluster_key){
	    .lo = ch[0] | c1 << 32,
	    .hi = c2 | (uint64_t)(len | flags << 4) << 32,
	};
}

/* Slot of a key (and of ch[KEY_SHORT..len) beyond it): two multiplies
 * whose top bits depend on every bit of the key. */
static inline size_t cluster_key_slot(const struct cluster_table *t, struct cluster_key k,
				      const uint32_t *ch, size_t len)
{
	uint64_t x = (k.lo * 0x9e3779b97f4a7c15ull ^ k.hi) * 0xc2b2ae3d27d4eb4full;

	for (size_t i = KEY_SHORT; i < len; i++)
		x = (x ^ ch[i]) * 0xc2b2ae3d27d4eb4full;
	return (size_t)(x >> (64 - t->index_bits));
}

/* a[0..len) == b[0..len): the code points a key does not hold, of the few
 * clusters longer than KEY_SHORT (no memcmp() call) */
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
	struct cluster_key k = cluster_key_make(c->ch, c->len, c->flags);
	size_t mask = ((size_t)1 << t->index_bits) - 1;
	size_t slot = cluster_key_slot(t, k, c->ch, c->len);

	while (t->index[slot].hi)
		slot = (slot + 1) & mask;
	k.hi |= (uint64_t)(i + 1) << SLOT_INDEX_SHIFT;
	t->index[slot] = k;
}

/* A new cluster, ch[0..len) with the len and flags k holds: the next
 * stand-in, or 0 when the area is used up. Apart from cluster_intern(), and
 * given only the key and ch, so that the lookup, which nearly every call
 * ends in, keeps fewer values live for it (gcc 12 saves four registers
 * there instead of six). */
static __attribute__((noinline)) uint32_t cluster_add(struct cluster_table *t, const uint32_t *ch,
						      struct cluster_key k)
{
	size_t len = (k.hi >> 32) & 0xf;
	unsigned flags = (unsigned)(k.hi >> 36) & 0xf;

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
	t->clusters[t->n] = (struct cluster){.len = (uint32_t)len, .flags = flags};
	memcpy(t->clusters[t->n].ch, ch, len * sizeof(uint32_t));
	t->n++;
	/* the index stays at most three quarters full: a slot is 16 bytes, and
	 * what the index takes of the caches is taken from the cluster array
	 * that drawing reads (cluster_lookup()) */
	if (t->n * 4 > ((size_t)3 << t->index_bits)) {
		free(t->index);
		t->index_bits = t->index_bits ? t->index_bits + 1 : 7;
		t->index = xcalloc((size_t)1 << t->index_bits, sizeof(struct cluster_key));
		for (uint32_t i = 0; i < t->n; i++)
			cluster_index_insert(t, i);
	} else
		cluster_index_insert(t, (uint32_t)(t->n - 1));
	return CLUSTER_FIRST + (uint32_t)(t->n - 1);
}

uint32_t cluster_intern(struct cluster_table *t, const uint32_t *ch, size_t len, unsigned flags)
{
	struct cluster_key k;

	len = MIN(len, CLUSTER_MAX_LEN);
	k = cluster_key_make(ch, len, flags);
	if (t->index_bits) {
		size_t mask = ((size_t)1 << t->index_bits) - 1;

		/* an empty slot's hi is 0; a cluster's never is (len >= 1) */
		for (size_t slot = cluster_key_slot(t, k, ch, len); t->index[slot].hi;
		     slot = (slot + 1) & mask) {
			const struct cluster_key *e = &t->index[slot];

			/* the same key: lo, and hi but for the stand-in on top */
			if (e->lo == k.lo && (e->hi ^ k.hi) << (64 - SLOT_INDEX_SHIFT) == 0) {
				uint32_t i = (uint32_t)(e->hi >> SLOT_INDEX_SHIFT) - 1;

				if (len <= KEY_SHORT ||
				    cluster_same(t->clusters[i].ch + KEY_SHORT, ch + KEY_SHORT,
						 len - KEY_SHORT))
					return CLUSTER_FIRST + i;
			}
		}
	}
	return cluster_add(t, ch, k);
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
