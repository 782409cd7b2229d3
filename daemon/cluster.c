/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "cluster"
#include <libtsm.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "log.h"
#include "util/util.h"

#define CLUSTER_COUNT (CLUSTER_LAST - CLUSTER_FIRST + 1)

struct cluster {
	uint32_t len;
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

static uint32_t cluster_hash(const uint32_t *ch, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ ch[i]) * 16777619u;
	return h;
}

static void cluster_index_insert(struct cluster_table *t, uint32_t i)
{
	const struct cluster *c = &t->clusters[i];
	size_t slot = cluster_hash(c->ch, c->len) & (t->index_cap - 1);

	while (t->index[slot])
		slot = (slot + 1) & (t->index_cap - 1);
	t->index[slot] = i + 1;
}

/* The stand-in for ch[0..len), handed out on first use; 0 when the area is
 * used up. */
static uint32_t cluster_intern(struct cluster_table *t, const uint32_t *ch, size_t len)
{
	size_t slot;

	len = MIN(len, CLUSTER_MAX_LEN);
	if (t->index_cap) {
		slot = cluster_hash(ch, len) & (t->index_cap - 1);
		for (; t->index[slot]; slot = (slot + 1) & (t->index_cap - 1)) {
			const struct cluster *c = &t->clusters[t->index[slot] - 1];

			if (c->len == len && memcmp(c->ch, ch, len * sizeof(uint32_t)) == 0)
				return CLUSTER_FIRST + t->index[slot] - 1;
		}
	}
	if (t->n == CLUSTER_COUNT) {
		if (!t->full_logged)
			log_warning("%u distinct combining sequences seen: further combining "
				    "marks are dropped",
				    CLUSTER_COUNT);
		t->full_logged = true;
		return 0;
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->clusters = xrealloc(t->clusters, t->cap * sizeof(struct cluster));
	}
	t->clusters[t->n].len = (uint32_t)len;
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

const uint32_t *cluster_lookup(const struct cluster_table *t, uint32_t cp, size_t *ret_len)
{
	if (cp < CLUSTER_FIRST || cp - CLUSTER_FIRST >= t->n)
		return NULL;
	*ret_len = t->clusters[cp - CLUSTER_FIRST].len;
	return t->clusters[cp - CLUSTER_FIRST].ch;
}

/* Decodes one complete UTF-8 sequence at s[0..len); returns its length, or 0
 * when it is cut off or malformed (such bytes are passed on for libtsm). */
static size_t utf8_decode(const unsigned char *s, size_t len, uint32_t *ret)
{
	size_t n;
	uint32_t cp;

	if (s[0] < 0x80) {
		*ret = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else
		return 0;
	if (n > len)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates and beyond U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	*ret = cp;
	return n;
}

/* Whether s[0..len) is the start of a UTF-8 sequence that needs more bytes. */
static bool utf8_cut(const unsigned char *s, size_t len)
{
	size_t need = s[0] >= 0xf0 && s[0] <= 0xf4   ? 4
		      : s[0] >= 0xe0 && s[0] <= 0xef ? 3
		      : s[0] >= 0xc2 && s[0] <= 0xdf ? 2
						     : 0;

	if (len >= need)
		return false;
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return false;
	return true;
}

static size_t utf8_encode(uint32_t cp, char *out)
{
	/* only stand-ins are encoded here: 4 bytes */
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

static bool is_mark(uint32_t cp)
{
	return cp >= 0xa0 && tsm_ucs4_get_width(cp) == 0;
}

static bool is_base(uint32_t cp)
{
	return cp >= 0x20 && cp != 0x7f && !(cp >= 0x80 && cp < 0xa0) &&
	       tsm_ucs4_get_width(cp) == 1;
}

enum {
	STREAM_GROUND,
	STREAM_ESC,
	STREAM_CSI,
	STREAM_STRING,	   /* OSC, DCS, SOS, PM, APC: up to BEL or ST */
	STREAM_STRING_ESC, /* ESC inside a string: ST if '\' follows */
};

/* Follows escape sequences, so that their bytes are never taken for text. */
static void stream_step(struct cluster_filter *f, unsigned char b)
{
	switch (f->state) {
	case STREAM_GROUND:
		if (b == 0x1b)
			f->state = STREAM_ESC;
		break;
	case STREAM_ESC:
		if (b == '[')
			f->state = STREAM_CSI;
		else if (b == ']' || b == 'P' || b == 'X' || b == '^' || b == '_')
			f->state = STREAM_STRING;
		else if (b < 0x20 || b > 0x2f) /* intermediates keep the sequence going */
			f->state = b == 0x1b ? STREAM_ESC : STREAM_GROUND;
		break;
	case STREAM_CSI:
		if (b == 0x1b)
			f->state = STREAM_ESC;
		else if ((b >= 0x40 && b <= 0x7e) || b == 0x18 || b == 0x1a)
			f->state = STREAM_GROUND;
		break;
	case STREAM_STRING:
		if (b == 0x07 || b == 0x18 || b == 0x1a)
			f->state = STREAM_GROUND;
		else if (b == 0x1b)
			f->state = STREAM_STRING_ESC;
		break;
	case STREAM_STRING_ESC:
		f->state = STREAM_ESC;
		if (b == '\\')
			f->state = STREAM_GROUND;
		else
			stream_step(f, b);
		break;
	}
}

size_t cluster_filter_feed(struct cluster_filter *f, const char *in, size_t len, char *out)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t i = 0, o = 0;

	if (f->n_pending) {
		if (f->n_pending + len > f->scratch_cap) {
			f->scratch_cap = f->n_pending + len;
			f->scratch = xrealloc(f->scratch, f->scratch_cap);
		}
		memcpy(f->scratch, f->pending, f->n_pending);
		memcpy(f->scratch + f->n_pending, in, len);
		s = (const unsigned char *)f->scratch;
		len += f->n_pending;
		f->n_pending = 0;
	}
	while (i < len) {
		uint32_t seq[CLUSTER_MAX_LEN], cp;
		size_t n, nseq = 1, j;

		bool text = f->state == STREAM_GROUND;

		/* ASCII: an escape sequence's byte, or a base (joined below like
		 * any other when a non-ASCII code point follows) */
		if (s[i] < 0x80 && (!text || !is_base(s[i]) || i + 1 == len || s[i + 1] < 0x80)) {
			stream_step(f, s[i]);
			out[o++] = (char)s[i++];
			continue;
		}
		n = utf8_decode(s + i, len - i, &cp);
		if (n == 0 && utf8_cut(s + i, len - i)) {
			f->n_pending = len - i;
			memcpy(f->pending, s + i, f->n_pending);
			break;
		}
		/* Code points of the area get a stand-in wherever they are (the
		 * escape sequence this filter follows may not be the one libtsm
		 * sees); marks are only joined in text. */
		if (n == 0 || !((text && is_base(cp)) || cp >= CLUSTER_FIRST)) {
			/* not a base: malformed, wide, a lone mark, or in a sequence */
			n = n ? n : 1;
			memcpy(out + o, s + i, n);
			o += n;
			i += n;
			continue;
		}
		seq[0] = cp;
		j = i + n;
		while (text && j < len) {
			uint32_t mark;
			size_t m = utf8_decode(s + j, len - j, &mark);

			if (m == 0 || !is_mark(mark))
				break;
			if (nseq < CLUSTER_MAX_LEN)
				seq[nseq++] = mark;
			j += m;
		}
		if (nseq == 1 && cp < CLUSTER_FIRST) {
			memcpy(out + o, s + i, n);
			o += n;
			i += n;
			continue;
		}
		cp = cluster_intern(f->table, seq, nseq);
		if (cp)
			o += utf8_encode(cp, out + o);
		else if (seq[0] < CLUSTER_FIRST) {
			/* the area is used up: the base alone */
			memcpy(out + o, s + i, n);
			o += n;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3); /* U+FFFD */
			o += 3;
		}
		i = j;
	}
	return o;
}

void cluster_filter_reset(struct cluster_filter *f)
{
	f->state = STREAM_GROUND;
	f->n_pending = 0;
}

void cluster_filter_fini(struct cluster_filter *f)
{
	free(f->scratch);
	f->scratch = NULL;
	f->scratch_cap = 0;
	f->n_pending = 0;
}
