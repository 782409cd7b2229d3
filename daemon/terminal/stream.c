/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "stream"
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "image.h"
#include "sixel.h"
#include "stream.h"
#include "keys.h"
#include "tsmpeek.h"
#include "../color/pixel.h"
#include "../util/log.h"
#include "../util/util.h"

#define STREAM_SEQ_MAX 128 /* a CSI's parameter and intermediate bytes; longer: dropped */
#define STREAM_OSC_MAX 64  /* what is kept of an OSC to see whether it is a query */
/* a DCS longer than this is no query consoled answers (it is dropped) */
#define STREAM_DCS_QUERY_MAX STREAM_OSC_MAX
#define STREAM_OUT_SIZE 4096
/* what a sixel decoder holds beside its pixels, at most (its registers) */
#define STREAM_SIXEL_STATE (2 * sizeof(struct sixel_palette))
/* the most pixels of sixel images one stream_feed() places, in screens */
#define STREAM_SIXEL_FEED_SCREENS 4u
#define TSM_ARG_MAX 16	      /* libtsm's CSI_ARG_MAX: it reads no parameter beyond */
#define SGR_CHUNK TSM_ARG_MAX /* SGR is written again in pieces libtsm reads whole */
#define PARAM_MAX 32
#define SUB_MAX 6
#define PARAM_VALUE_MAX 65535
/* libtsm's widths are looked up once per code point below this (planes 0
 * and 1: scripts, CJK, emoji), kept in 2 bits each: 32 KiB, allocated with
 * the first character beyond ASCII. */
#define WIDTH_CACHE_END 0x20000u

/* Beside enum cluster_flags: what this stage does itself. */
#define SGR_CONCEAL STREAM_PEN_CONCEAL
static_assert((SGR_CONCEAL & (CLUSTER_DIM | CLUSTER_STRIKE)) == 0, "pen bits overlap");
static_assert(STREAM_REP_MAX == CLUSTER_MAX_LEN, "REP's character is a cluster");

enum parse_state {
	STATE_GROUND,
	STATE_ESC,    /* after ESC, with seq holding the intermediates */
	STATE_CSI,    /* seq holds the parameter and intermediate bytes */
	STATE_STRING, /* OSC (osc set), DCS, SOS, PM, APC: up to ST */
};

/* libtsm's character sets as far as printing is concerned: "lower" prints
 * 33-126 as they are, "upper" 161-254; every other one maps both. */
enum charset {
	CHARSET_LOWER = STREAM_CHARSET_ASCII,
	CHARSET_UPPER = STREAM_CHARSET_UPPER,
	CHARSET_SPECIAL = STREAM_CHARSET_DEC_SPECIAL, /* DEC special graphics */
	CHARSET_OTHER = STREAM_CHARSET_DEC_SUPPLEMENTAL,
};

/* What DECSC saves (libtsm's save_state), as the stage follows it. */
struct stream_saved {
	struct tsm_screen_attr attr;
	unsigned extra;
	uint8_t gl, gr;
	unsigned x, y;
	bool wrap, origin;
};

struct stream {
	struct stream_config cfg;
	struct palette linux_palette; /* without cfg.palette */

	enum parse_state state;
	bool string_esc; /* ESC ended a string: '\' after it is ST */
	bool osc;	 /* the string is an OSC (kept in osc[] to answer queries) */
	bool dcs;	 /* a DCS, kept in osc[] too: XTGETTCAP and DECRQSS are answered */

	/* a UTF-8 sequence cut by the end of a read */
	uint8_t pending[4];
	size_t n_pending;
	uint8_t *scratch; /* pending + the next read */
	size_t scratch_cap;

	char seq[STREAM_SEQ_MAX];
	size_t seq_len;
	bool seq_bad; /* too long, or a byte libtsm would ignore the sequence for */
	char osc_buf[STREAM_OSC_MAX];
	size_t osc_len;
	bool osc_long;
	/* an OSC 52 beyond osc_buf (with cfg.osc52): the rest, or too long */
	char *osc52;
	size_t osc52_len, osc52_cap;
	bool osc52_bad;

	uint32_t last[CLUSTER_MAX_LEN]; /* the last graphic character, for REP */
	size_t last_len;

	struct tsm_screen_attr attr; /* libtsm's SGR pen (stream_pen) */
	unsigned extra;		     /* CLUSTER_DIM, CLUSTER_STRIKE, SGR_CONCEAL */
	uint8_t g[4], gl, gr;
	int glt; /* a single shift's set for the next character, or -1 */
	struct stream_saved saved;
	unsigned alt_x, alt_y;	  /* the cursor CSI ? 1048 h / 1049 h saved */
	bool ckm, lnm;		  /* DECCKM and LNM (also for DECRQM) */
	bool kpam;		  /* DECKPAM */
	bool keys_kpam, keys_lnm; /* the key encoder's (STREAM_MODE_KEYS_*) */
	unsigned mouse;		  /* STREAM_MOUSE_* */
	bool sync;		  /* DECSET 2026, synchronized output */
	uint8_t decscusr;	  /* the cursor's DECSCUSR Ps, 1-6; 0: the default */
	unsigned cell_w, cell_h;  /* a cell's pixels (CSI 14 t, 16 t; 0: unknown) */

	/* Sixel (DCS Ps q ... ST, with cfg.images): the string is sixel data
	 * (sixel_on), decoded by `sixel` (NULL: dropped, no room or no cell
	 * size); DECSET 80 (display mode: at the top left, no scrolling),
	 * 1070 (private colour registers, set by default: reset, the shared
	 * ones in sixel_shared, allocated when first used) and 8452 (the
	 * cursor to the right of the image). */
	bool sixel_on;
	struct sixel_decoder *sixel;
	bool sixel_sdm, sixel_private, sixel_right;
	struct sixel_palette *sixel_shared;
	/* pixels of the images placed in this stream_feed() (at most
	 * STREAM_SIXEL_FEED_SCREENS screens of them), and whether dropping
	 * more was logged in this session */
	uint64_t sixel_fed_px;
	bool sixel_fed_warned;

	/* the kitty keyboard protocol's flag stacks: [0] the main screen's,
	 * [1] the alternate screen's (stream_kitty_flags()) */
	uint8_t kitty[2][STREAM_KITTY_DEPTH];
	uint8_t kitty_n[2];

	/* char_width() of code points below WIDTH_CACHE_END, 2 bits each: 0
	 * not looked up yet, else the width + 1 (NULL until needed) */
	uint8_t *widths;

	char out[STREAM_OUT_SIZE]; /* for libtsm, in one call where possible */
	size_t out_len;

	unsigned bells;	    /* BELs of this stream_feed(), for cfg.bell */
	uint64_t bytes_out; /* what libtsm got (stream_bytes_out()) */

	/* text printed on the screen without the vte (stream_direct()):
	 * with cfg.palette, libtsm's colours from it */
	bool direct;
	uint8_t tsm_palette[TSM_COLOR_NUM][3];
};

/* A CSI's parameters: v[i] is -1 when empty; sub-parameters (after ':')
 * in sub[i][0..nsub[i]). */
struct csi {
	char marker; /* a private marker '<' '=' '>' '?' in front, or 0 */
	char inter[4];
	size_t n_inter;
	size_t n;
	int v[PARAM_MAX];
	uint8_t nsub[PARAM_MAX];
	int sub[PARAM_MAX][SUB_MAX];
	bool colon;
};

/* libtsm's pen after a reset or SGR 0: the default colours. */
static const struct tsm_screen_attr default_attr = {
    .fccode = TSM_COLOR_FOREGROUND,
    .bccode = TSM_COLOR_BACKGROUND,
};

/* What libtsm's tsm_vte_reset() does to the state followed here (RIS and
 * DECSTR); `soft` (DECSTR) leaves the key encoder's LNM as keys.c does. The
 * alternate screen's saved cursor stays, as in libtsm. The mouse modes go
 * with both (stream.h). */
static void stream_mirror_reset(struct stream *s, bool soft)
{
	s->attr = default_attr;
	s->extra = 0;
	s->g[0] = CHARSET_LOWER;
	s->g[1] = CHARSET_UPPER;
	s->g[2] = CHARSET_LOWER;
	s->g[3] = CHARSET_UPPER;
	s->gl = 0;
	s->gr = 1;
	s->glt = -1;
	s->saved = (struct stream_saved){
	    .attr = default_attr, .gl = 0, .gr = 1, .wrap = true, .origin = false};
	s->ckm = s->lnm = s->kpam = s->keys_kpam = false;
	s->mouse = 0;
	s->sync = false;
	/* xterm's ReallyReset(), for RIS and DECSTR alike */
	s->decscusr = 0;
	if (!soft) {
		s->keys_lnm = false;
		s->kitty_n[0] = s->kitty_n[1] = 0;
		/* xterm's RIS; its soft reset (DECSTR) leaves them */
		s->sixel_sdm = s->sixel_right = false;
		s->sixel_private = true;
		if (s->sixel_shared)
			sixel_palette_init(s->sixel_shared);
	}
}

/* libtsm's palette for p: its 16 colours, then its default foreground and
 * background (TSM_COLOR_FOREGROUND, TSM_COLOR_BACKGROUND). */
static void stream_tsm_palette(const struct palette *p, uint8_t ret[TSM_COLOR_NUM][3])
{
	for (unsigned i = 0; i < TSM_COLOR_NUM; i++) {
		unsigned e = i;

		if (i == TSM_COLOR_FOREGROUND)
			e = p->fg;
		else if (i == TSM_COLOR_BACKGROUND)
			e = p->bg;
		ret[i][0] = p->colors[e].r;
		ret[i][1] = p->colors[e].g;
		ret[i][2] = p->colors[e].b;
	}
}

struct stream *stream_new(const struct stream_config *cfg)
{
	struct stream *s = xcalloc(1, sizeof(*s));

	s->cfg = *cfg;
	palette_init(&s->linux_palette, PALETTE_LINUX, NULL);
	stream_mirror_reset(s, false);
	if (cfg->palette) {
		stream_tsm_palette(cfg->palette, s->tsm_palette);
		s->direct = true;
	}
	return s;
}

int stream_vte_set_palette(struct tsm_vte *vte, const struct palette *p)
{
	uint8_t tp[TSM_COLOR_NUM][3];
	int r;

	stream_tsm_palette(p, tp);
	r = tsm_vte_set_custom_palette(vte, tp);
	if (r >= 0)
		r = tsm_vte_set_palette(vte, "custom");
	return r < 0 ? r : 0;
}

void stream_set_direct(struct stream *s, bool on)
{
	s->direct = on && s->cfg.palette;
}

static void osc52_forget(struct stream *s);
static void stream_sixel_end(struct stream *s);

void stream_free(struct stream *s)
{
	if (!s)
		return;
	free(s->scratch);
	osc52_forget(s);
	free(s->osc52);
	free(s->widths);
	sixel_decoder_free(s->sixel);
	free(s->sixel_shared);
	free(s);
}

static void stream_flush(struct stream *s);
static void emit_mode(struct stream *s, bool dec, int mode, bool set);

void stream_reset(struct stream *s)
{
	s->state = STATE_GROUND;
	s->string_esc = s->osc = false;
	s->n_pending = 0;
	s->seq_len = s->osc_len = 0;
	s->last_len = 0;
	s->out_len = 0;
	osc52_forget(s);
	s->osc52_bad = false;
	sixel_decoder_free(s->sixel);
	s->sixel = NULL;
	s->sixel_on = false;
	s->sixel_fed_warned = false;
	stream_mirror_reset(s, false);
}

void stream_wipe(struct stream *s)
{
	struct tsm_screen *screen = s->cfg.screen;

	stream_reset(s);
	s->alt_x = s->alt_y = 0;
	/* libtsm's modes, pen, character sets and DECSC state, the screen's
	 * flags, margins and tab stops, the main screen and the scrollback */
	tsm_vte_hard_reset(s->cfg.vte);
	/* The alternate screen's rows: no reset of libtsm's touches them, and
	 * CSI ? 47 h and ? 1047 h show them without erasing. */
	tsm_screen_set_flags(screen, TSM_SCREEN_ALTERNATE);
	tsm_screen_erase_screen(screen, false);
	tsm_screen_reset_flags(screen, TSM_SCREEN_ALTERNATE);
	/* Nor does any reset touch the vte's ? 1048 cursor: saved again at the
	 * home position the hard reset moved to. */
	emit_mode(s, true, 1048, true);
	stream_flush(s);
	tsm_screen_selection_reset(screen);
	/* no stand-in is left on either screen or in the scrollback, nor is
	 * any image tile */
	if (s->cfg.table)
		cluster_table_reset(s->cfg.table);
	if (s->cfg.images)
		image_store_wipe(s->cfg.images);
}

unsigned stream_rep_limit(unsigned count, unsigned cols, unsigned rows)
{
	unsigned long screen = (unsigned long)cols * rows;

	if (cols == 0 || count <= screen)
		return count;
	/* Past a screenful every cell the repeats reach shows the character;
	 * what is left differs only in the last row, which the count modulo
	 * the width decides. */
	return (unsigned)(screen + (count - screen) % cols);
}

/* ---- output ------------------------------------------------------------- */

/* libtsm gets the bytes, and whoever follows what libtsm sees. */
static void stream_to_vte(struct stream *s, const char *b, size_t n)
{
	if (s->cfg.seen)
		s->cfg.seen(b, n, s->cfg.userdata);
	s->bytes_out += n;
	tsm_vte_input(s->cfg.vte, b, n);
}

static void stream_flush(struct stream *s)
{
	if (s->out_len) {
		stream_to_vte(s, s->out, s->out_len);
		s->out_len = 0;
	}
}

/* memcpy() for the few bytes most pieces are (the text between two
 * characters with marks, a stand-in, a cluster): fixed-size moves the
 * compiler inlines, over each end, instead of a library call */
static inline void copy_small(void *dst, const void *src, size_t n)
{
	char *d = dst;
	const char *c = src;

	if (n >= 8 && n <= 16) {
		memcpy(d, c, 8);
		memcpy(d + n - 8, c + n - 8, 8);
	} else if (n >= 4 && n < 8) {
		memcpy(d, c, 4);
		memcpy(d + n - 4, c + n - 4, 4);
	} else if (n < 4) {
		for (size_t i = 0; i < n; i++)
			d[i] = c[i];
	} else
		memcpy(d, c, n);
}

static void stream_emit(struct stream *s, const char *b, size_t n)
{
	if (s->out_len + n > sizeof(s->out)) {
		stream_flush(s);
		if (n > sizeof(s->out)) {
			stream_to_vte(s, b, n);
			return;
		}
	}
	copy_small(s->out + s->out_len, b, n);
	s->out_len += n;
}

/* stream_emit() of n bytes of the read at b, where avail bytes from b may
 * be read: a piece of up to 16 bytes (most text between two characters
 * with marks) is moved as 16, whatever its length, so that the random
 * lengths cost no mispredicted branches; the bytes moved beyond n are
 * overwritten by the next piece or never read. */
static inline void stream_emit_text(struct stream *s, const char *b, size_t n, size_t avail)
{
	if (n <= 16 && avail >= 16 && sizeof(s->out) - s->out_len >= 16) {
		memcpy(s->out + s->out_len, b, 16);
		s->out_len += n;
		return;
	}
	stream_emit(s, b, n);
}

static void stream_emit_byte(struct stream *s, uint8_t b)
{
	if (s->out_len == sizeof(s->out))
		stream_flush(s);
	s->out[s->out_len++] = (char)b;
}

static void stream_emit_cp(struct stream *s, uint32_t cp)
{
	char b[4];

	/* straight into out: every stand-in (four bytes) comes here */
	if (cp >= 0x10000 && s->out_len + sizeof(b) <= sizeof(s->out)) {
		char *o = s->out + s->out_len;

		o[0] = (char)(0xf0 | cp >> 18);
		o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[3] = (char)(0x80 | (cp & 0x3f));
		s->out_len += 4;
		return;
	}
	stream_emit(s, b, utf8_put(cp, b));
}

__attribute__((format(printf, 2, 3))) static void stream_emitf(struct stream *s, const char *fmt,
							       ...)
{
	char buf[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < sizeof(buf))
		stream_emit(s, buf, (size_t)n);
}

/* An answer for the session: after what libtsm had to answer before it. */
__attribute__((format(printf, 2, 3))) static void stream_reply(struct stream *s, const char *fmt,
							       ...)
{
	char buf[128];
	va_list ap;
	int n;

	stream_flush(s);
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < sizeof(buf) && s->cfg.reply)
		s->cfg.reply(buf, (size_t)n, s->cfg.userdata);
}

/* ---- text --------------------------------------------------------------- */

/* Decodes the code point at s[0..len): returns its length; a malformed
 * sequence (its maximal subpart) is U+FFFD; 0 when s ends inside a sequence
 * that may still turn out well-formed. */
static size_t utf8_next(const uint8_t *s, size_t len, uint32_t *ret)
{
	uint8_t b = s[0], lo = 0x80, hi = 0xbf;
	size_t need;
	uint32_t cp;

	if (b < 0x80) {
		*ret = b;
		return 1;
	}
	if (b >= 0xc2 && b <= 0xdf) {
		need = 2;
		cp = b & 0x1f;
	} else if (b >= 0xe0 && b <= 0xef) {
		need = 3;
		cp = b & 0x0f;
		lo = b == 0xe0 ? 0xa0 : 0x80; /* no overlong forms */
		hi = b == 0xed ? 0x9f : 0xbf; /* no surrogates */
	} else if (b >= 0xf0 && b <= 0xf4) {
		need = 4;
		cp = b & 0x07;
		lo = b == 0xf0 ? 0x90 : 0x80;
		hi = b == 0xf4 ? 0x8f : 0xbf; /* nothing beyond U+10FFFF */
	} else {
		*ret = 0xfffd;
		return 1;
	}
	for (size_t i = 1; i < need; i++) {
		if (i >= len)
			return 0;
		if (s[i] < lo || s[i] > hi) {
			*ret = 0xfffd;
			return i;
		}
		cp = cp << 6 | (s[i] & 0x3f);
		lo = 0x80;
		hi = 0xbf;
	}
	*ret = cp;
	return need;
}

static bool is_graphic(uint32_t cp)
{
	return cp >= 0x20 && cp != 0x7f && !(cp >= 0x80 && cp < 0xa0);
}

static unsigned char_width(uint32_t cp)
{
	unsigned w = cp >= CLUSTER_FIRST ? 1 : tsm_ucs4_get_width(cp);

	return w > 2 ? 1 : w;
}

/* stream_width() of a code point not in the cache yet. */
static unsigned stream_width_lookup(struct stream *s, uint32_t cp)
{
	unsigned shift = (cp & 3) * 2, v;

	if (cp >= WIDTH_CACHE_END)
		return char_width(cp);
	if (!s->widths)
		s->widths = xcalloc(WIDTH_CACHE_END / 4, 1);
	v = char_width(cp) + 1;
	s->widths[cp >> 2] |= (uint8_t)(v << shift);
	return v - 1;
}

/* char_width(), from the cache: libtsm's lookup is a binary search, and
 * every character of the stream asks (text runs, marks, REP). */
static inline unsigned stream_width(struct stream *s, uint32_t cp)
{
	/* printable ASCII, the base of most clusters, is narrow (libtsm's
	 * table says so: test-stream checks it) */
	if (cp - 0x20 < 0x5f)
		return 1;
	if (cp < WIDTH_CACHE_END && s->widths) {
		unsigned v = (s->widths[cp >> 2] >> ((cp & 3) * 2)) & 3;

		if (v)
			return v - 1;
	}
	return stream_width_lookup(s, cp);
}

static bool is_mark(struct stream *s, uint32_t cp)
{
	return cp >= 0xa0 && cp < CLUSTER_FIRST && stream_width(s, cp) == 0;
}

/* Prints a character (a base and its marks) as libtsm will: a stand-in
 * when it has marks or attributes libtsm does not keep, unless libtsm's
 * character set maps it (a stand-in would escape the mapping). */
static void stream_print_width(struct stream *s, const uint32_t *seq, size_t n, unsigned width)
{
	uint32_t base = seq[0], cp;
	unsigned flags = s->extra & (CLUSTER_DIM | CLUSTER_STRIKE);
	bool gl_char = base >= 33 && base <= 126, gr_char = base >= 161 && base <= 254;
	bool as_is = true; /* libtsm prints the base itself */

	if (s->extra & SGR_CONCEAL) {
		/* shown as background: spaces of its width, which libtsm never
		 * maps (a pending single shift stays pending, as in libtsm) */
		stream_emit(s, "  ", width);
		return;
	}
	if (base == '~' && s->glt < 0 && s->g[s->gl] == CHARSET_SPECIAL) {
		/* xterm's DEC graphics '~' is U+00B7 (middle dot), libtsm's
		 * U+22C5 (dot operator), which console fonts do not have: a
		 * stand-in for the dot, which no character set maps */
		uint32_t dot[CLUSTER_MAX_LEN];
		size_t m = MIN(n, (size_t)CLUSTER_MAX_LEN);

		memcpy(dot, seq, m * sizeof(*seq));
		dot[0] = 0xb7;
		cp = cluster_intern(s->cfg.table, dot, m, flags);
		if (cp) {
			stream_emit_cp(s, cp);
			return;
		}
	}
	if (gl_char) {
		as_is = s->glt < 0 && s->g[s->gl] == CHARSET_LOWER;
		s->glt = -1;
	} else if (gr_char)
		as_is = s->g[s->gr] == CHARSET_UPPER;
	if (width == 1 && as_is && (n > 1 || flags || base >= IMAGE_FIRST)) {
		cp = cluster_intern(s->cfg.table, seq, n, flags);
		if (cp) {
			stream_emit_cp(s, cp);
			return;
		}
		if (base >= IMAGE_FIRST) {
			stream_emit_cp(s, 0xfffd);
			return;
		}
	}
	/* marks of a wide or mapped base are dropped, as libtsm would */
	stream_emit_cp(s, base);
}

static void stream_print(struct stream *s, const uint32_t *seq, size_t n)
{
	stream_print_width(s, seq, n, stream_width(s, seq[0]));
}

/* The graphic character at p[0..len) (decoded: cp, n bytes) with the marks
 * that follow it in this read; returns the bytes taken. */
static size_t stream_text(struct stream *s, const uint8_t *p, size_t len, uint32_t cp, size_t n)
{
	uint32_t seq[CLUSTER_MAX_LEN];
	size_t nseq = 1, j = n;
	unsigned width = stream_width(s, cp); /* is_mark(), once */

	seq[0] = cp;
	if (width == 0 && cp >= 0xa0 && cp < CLUSTER_FIRST) {
		/* no base: libtsm drops it */
		stream_emit_cp(s, cp);
		return n;
	}
	while (j < len && p[j] >= 0x80) {
		uint32_t mark;
		size_t m;

		/* most marks are two bytes (U+0300..U+036F), decoded here */
		if (p[j] >= 0xc2 && p[j] <= 0xdf && j + 1 < len && (p[j + 1] & 0xc0) == 0x80) {
			mark = (uint32_t)(p[j] & 0x1f) << 6 | (p[j + 1] & 0x3f);
			m = 2;
		} else
			m = utf8_next(p + j, len - j, &mark);
		if (m == 0 || !is_mark(s, mark))
			break;
		if (nseq < CLUSTER_MAX_LEN)
			seq[nseq++] = mark;
		j += m;
	}
	stream_print_width(s, seq, nseq, width);
	if (width > 0) {
		copy_small(s->last, seq, nseq * sizeof(uint32_t));
		s->last_len = nseq;
	}
	return j;
}

/* The end of the printable ASCII (0x20..0x7e) from p[i]: the first j >= i
 * with p[j] outside it, or len. Eight bytes at a time where eight are left:
 * a byte loop mispredicts its exit at nearly every run, whose lengths
 * (between the characters with marks of Latin text, say) are random; here
 * most runs end in their first word. */
static inline size_t ascii_run_end(const uint8_t *p, size_t i, size_t len)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;

	for (; len - i >= 8; i += 8) {
		uint64_t w, stop;

		memcpy(&w, p + i, 8);
		/* a byte's top bit: it is >= 0x80, 0x7f (or 0xff), or < 0x20.
		 * The last test borrows from the byte above a byte < 0x20, so
		 * only the lowest byte flagged is sure: the one wanted */
		stop = (w | ((w & ~high) + ones) | ((w - 0x20 * ones) & ~w)) & high;
		if (stop)
			return i + (size_t)__builtin_ctzll(stop) / 8;
	}
#endif
	while (i < len && (uint8_t)(p[i] - 0x20) < 0x5f)
		i++;
	return i;
}

/* Plain text: the longest run at p[0..len) that reaches libtsm as it is and
 * changes nothing here but REP's character, in the ground state with no
 * attribute of this stage's (dim, strikethrough, concealed) and no single
 * shift pending (the caller checks). That is printable ASCII (not '~' while
 * DEC graphics maps it), C0 controls but ESC, SO, SI and BEL, DEL, and
 * well-formed UTF-8 of graphic code points below the stand-in area, each
 * but U+FFFD (which malformed input also decodes to), and marks that follow
 * no character of the run (a control, or the start of the read: libtsm
 * drops them, and they are handed on as they are). A character that marks
 * follow ends the run before it: stream_text() makes the cluster. So does
 * a UTF-8 sequence cut by the end of the read. *ret_base is where the run's
 * last graphic character starts, or len if it has none or the run ended
 * before a cluster; *ret_cluster says whether it did. */
static size_t stream_plain_run(struct stream *s, const uint8_t *p, size_t len, size_t *ret_base,
			       bool *ret_cluster)
{
	bool tilde = s->g[s->gl] != CHARSET_SPECIAL;
	size_t i = 0, base = len;
	bool after_char = false; /* the item before i is a graphic character */

	while (i < len) {
		uint8_t b = p[i];
		uint32_t cp;
		size_t n;

		if (b < 0x80) {
			if (b >= 0x20 && b < 0x7f) {
				size_t j = ascii_run_end(p, i + 1, len);
				const uint8_t *t;

				if (!tilde && (t = memchr(p + i, '~', j - i)))
					j = (size_t)(t - p);
				if (j == i)
					break;
				base = j - 1;
				i = j;
				after_char = true;
				continue;
			}
			if (b == 0x1b || b == 0x0e || b == 0x0f || b == 0x07)
				break;
			i++;
			after_char = false;
			continue;
		}
		/* two and three bytes, well-formed (no overlong form, no
		 * surrogate), decoded here; the rest by utf8_next() */
		if (b >= 0xc2 && b <= 0xdf && i + 1 < len && (p[i + 1] & 0xc0) == 0x80) {
			cp = (uint32_t)(b & 0x1f) << 6 | (p[i + 1] & 0x3f);
			n = 2;
		} else if (b >= 0xe1 && b <= 0xec && i + 2 < len && (p[i + 1] & 0xc0) == 0x80 &&
			   (p[i + 2] & 0xc0) == 0x80) {
			cp = (uint32_t)(b & 0x0f) << 12 | (uint32_t)(p[i + 1] & 0x3f) << 6 |
			     (p[i + 2] & 0x3f);
			n = 3;
		} else
			n = utf8_next(p + i, len - i, &cp);
		/* (from the image tiles' area on: stand-ins, stream_text()) */
		if (n == 0 || cp == 0xfffd || cp < 0xa0 || cp >= IMAGE_FIRST)
			break;
		if (stream_width(s, cp) == 0) {
			if (after_char) {
				/* this character's marks: not plain. REP's
				 * character is that one (set by stream_text()
				 * right after the run) */
				*ret_base = len;
				*ret_cluster = true;
				return base;
			}
			i += n;
			continue;
		}
		base = i;
		i += n;
		after_char = true;
	}
	*ret_base = base;
	*ret_cluster = false;
	return i;
}

/* ---- CSI ---------------------------------------------------------------- */

/* Parses seq: false for what libtsm would ignore (a private marker after
 * the first byte, parameters after intermediates, ...). */
static bool csi_parse(const char *seq, size_t len, struct csi *c)
{
	size_t i = 0;
	int *cur = NULL;

	/* only what the parameters reach is set (v and nsub up to n): the
	 * whole struct is a kilobyte, and every SGR comes here */
	c->marker = 0;
	c->n_inter = 0;
	c->n = 0;
	c->colon = false;
	if (len > 0 && seq[0] >= 0x3c && seq[0] <= 0x3f)
		c->marker = seq[i++];
	for (; i < len && ((seq[i] >= '0' && seq[i] <= '9') || seq[i] == ';' || seq[i] == ':');
	     i++) {
		unsigned d = (unsigned)(seq[i] - '0');

		if (c->n == 0) {
			c->n = 1;
			c->v[0] = -1;
			c->nsub[0] = 0;
			cur = &c->v[0];
		}
		if (d < 10) {
			int v = (*cur < 0 ? 0 : *cur) * 10 + (int)d;

			*cur = MIN(v, PARAM_VALUE_MAX);
		} else if (seq[i] == ';') {
			if (c->n == PARAM_MAX)
				return false;
			c->v[c->n] = -1;
			c->nsub[c->n] = 0;
			cur = &c->v[c->n++];
		} else if (seq[i] == ':') {
			size_t k = c->n - 1;

			c->colon = true;
			if (c->nsub[k] == SUB_MAX)
				return false;
			c->sub[k][c->nsub[k]] = -1;
			cur = &c->sub[k][c->nsub[k]++];
		}
	}
	for (; i < len && seq[i] >= 0x20 && seq[i] <= 0x2f; i++) {
		if (c->n_inter == sizeof(c->inter))
			return false;
		c->inter[c->n_inter++] = seq[i];
	}
	return i == len;
}

/* Parameter i as a count: empty and 0 mean 1. */
static int csi_count(const struct csi *c, size_t i)
{
	return i < c->n && c->v[i] > 0 ? c->v[i] : 1;
}

static void stream_emit_csi(struct stream *s, uint8_t final)
{
	stream_emit(s, "\033[", 2);
	stream_emit(s, s->seq, s->seq_len);
	stream_emit_byte(s, final);
}

/* An extended colour as libtsm 4.0.2 sets it (38;5;n, 38;2;r;g;b): the
 * first 16 of 256 by code, the rest as rgb (code -1). */
static void sgr_set_colour(int8_t *code, uint8_t *r, uint8_t *g, uint8_t *b, const int *a)
{
	static const uint8_t level[6] = {0x00, 0x5f, 0x87, 0xaf, 0xd7, 0xff};

	*r = *g = *b = 0;
	if (a[0] == 5) {
		int n = a[1];

		if (n < 16) {
			*code = (int8_t)n;
			return;
		}
		*code = -1;
		if (n < 232) {
			n -= 16;
			*b = level[n % 6];
			*g = level[n / 6 % 6];
			*r = level[n / 36 % 6];
		} else
			*r = *g = *b = (uint8_t)((n - 232) * 10 + 8);
		return;
	}
	*code = -1;
	*r = (uint8_t)a[1];
	*g = (uint8_t)a[2];
	*b = (uint8_t)a[3];
}

/* libtsm's pen and the attributes this stage keeps, from SGR parameters as
 * libtsm reads them (complete 38/48 colours only: stream_sgr writes no
 * other, and no value above 65535). */
static void stream_track_sgr(struct stream *s, const int *v, size_t n)
{
	struct tsm_screen_attr *a = &s->attr;

	for (size_t i = 0; i < n; i++) {
		int p = v[i];

		/* one switch (a jump table): every SGR of the stream comes here */
		switch (p) {
		case 30 ... 37:
			a->fccode = (int8_t)(p - 30);
			a->fr = a->fg = a->fb = 0;
			break;
		case 90 ... 97:
			a->fccode = (int8_t)(p - 90 + 8);
			a->fr = a->fg = a->fb = 0;
			break;
		case 40 ... 47:
			a->bccode = (int8_t)(p - 40);
			a->br = a->bg = a->bb = 0;
			break;
		case 100 ... 107:
			a->bccode = (int8_t)(p - 100 + 8);
			a->br = a->bg = a->bb = 0;
			break;
		case 0:
			*a = default_attr;
			s->extra = 0;
			break;
		case 1:
			a->bold = 1;
			break;
		case 3:
			a->italic = 1;
			break;
		case 4:
			a->underline = 1;
			break;
		case 5:
			a->blink = 1;
			break;
		case 7:
			a->inverse = 1;
			break;
		case 23:
			a->italic = 0;
			break;
		case 24:
			a->underline = 0;
			break;
		case 25:
			a->blink = 0;
			break;
		case 27:
			a->inverse = 0;
			break;
		case 39:
			a->fccode = TSM_COLOR_FOREGROUND;
			a->fr = a->fg = a->fb = 0;
			break;
		case 49:
			a->bccode = TSM_COLOR_BACKGROUND;
			a->br = a->bg = a->bb = 0;
			break;
		case 2:
			s->extra |= CLUSTER_DIM;
			break;
		case 22:
			a->bold = 0;
			s->extra &= ~(unsigned)CLUSTER_DIM;
			break;
		case 8:
			s->extra |= SGR_CONCEAL;
			break;
		case 28:
			s->extra &= ~SGR_CONCEAL;
			break;
		case 9:
			s->extra |= CLUSTER_STRIKE;
			break;
		case 29:
			s->extra &= ~(unsigned)CLUSTER_STRIKE;
			break;
		case 38:
		case 48: {
			size_t len = i + 1 < n && v[i + 1] == 5 ? 2 : 4;

			if (i + len >= n)
				return; /* not written (sgr_colour) */
			if (p == 38)
				sgr_set_colour(&a->fccode, &a->fr, &a->fg, &a->fb, v + i + 1);
			else
				sgr_set_colour(&a->bccode, &a->br, &a->bg, &a->bb, v + i + 1);
			i += len;
			break;
		}
		}
	}
}

/* Writes SGR parameters out for libtsm in sequences of whole groups of at
 * most SGR_CHUNK parameters. */
struct sgr_out {
	struct stream *s;
	int v[SGR_CHUNK];
	size_t n;
};

static void sgr_flush(struct sgr_out *o)
{
	/* ESC [, then up to SGR_CHUNK values of at most 5 digits (sgr_colour()
	 * and csi_parse() bound them) with their ';', then 'm' */
	char buf[2 + SGR_CHUNK * 6 + 1];
	size_t len = 2;

	if (o->n == 0)
		return;
	stream_track_sgr(o->s, o->v, o->n);
	buf[0] = '\033';
	buf[1] = '[';
	for (size_t i = 0; i < o->n; i++) {
		char digits[5];
		unsigned v = (unsigned)o->v[i], k = 0;

		if (i)
			buf[len++] = ';';
		do {
			digits[k++] = (char)('0' + v % 10);
			v /= 10;
		} while (v && k < sizeof(digits));
		while (k)
			buf[len++] = digits[--k];
	}
	buf[len++] = 'm';
	stream_emit(o->s, buf, len);
	o->n = 0;
}

static void sgr_group(struct sgr_out *o, const int *v, size_t n)
{
	if (o->n + n > SGR_CHUNK)
		sgr_flush(o);
	memcpy(o->v + o->n, v, n * sizeof(int));
	o->n += n;
}

static int nonneg(int v)
{
	return v < 0 ? 0 : v;
}

/* An extended colour (38, 48, 58) from its arguments a[0..n) (the colour
 * space id already skipped): its group in ret, or 0 when malformed. */
static size_t sgr_colour(int which, const int *a, size_t n, int *ret)
{
	if (n >= 2 && a[0] == 5 && a[1] <= 255) {
		ret[0] = which, ret[1] = 5, ret[2] = nonneg(a[1]);
		return 3;
	}
	if (n >= 4 && a[0] == 2 && a[1] <= 255 && a[2] <= 255 && a[3] <= 255) {
		ret[0] = which, ret[1] = 2;
		for (int k = 0; k < 3; k++)
			ret[2 + k] = nonneg(a[1 + k]);
		return 5;
	}
	return 0;
}

/* Whether libtsm reads the SGR as it came just as the rewrite below would
 * give it: one sequence of at most SGR_CHUNK parameters, none empty, none
 * beyond the parser's bound, no colon, none this stage rewrites (21) or
 * drops (58, malformed colours). The common case (ls --color, 256 colours,
 * truecolour), handed on as it is. */
static bool sgr_values_as_is(const int *v, size_t n)
{
	if (n == 0 || n > SGR_CHUNK)
		return false;
	for (size_t i = 0; i < n; i++) {
		int p = v[i];

		if (p < 0 || p >= PARAM_VALUE_MAX || p == 21 || p == 58)
			return false;
		if (p != 38 && p != 48)
			continue;
		if (i + 2 < n && v[i + 1] == 5 && v[i + 2] >= 0 && v[i + 2] <= 255) {
			i += 2;
			continue;
		}
		if (i + 4 >= n || v[i + 1] != 2)
			return false;
		for (size_t k = 2; k <= 4; k++)
			if (v[i + k] < 0 || v[i + k] > 255)
				return false;
		i += 4;
	}
	return true;
}

static bool sgr_as_is(const struct csi *c)
{
	return !c->colon && sgr_values_as_is(c->v, c->n);
}

static void stream_sgr(struct stream *s, const struct csi *c)
{
	struct sgr_out o = {.s = s};
	size_t n = c->n ? c->n : 1;

	if (sgr_as_is(c)) {
		stream_track_sgr(s, c->v, c->n);
		stream_emit_csi(s, 'm');
		return;
	}

	for (size_t i = 0; i < n; i++) {
		int v = i < c->n ? nonneg(c->v[i]) : 0, g[5];
		size_t len = 1;

		g[0] = v;
		if (i < c->n && c->nsub[i] > 0) {
			/* colon form: 38:5:n, 38:2:[id]:r:g:b, 4:n */
			const int *sub = c->sub[i];
			int a[SUB_MAX];
			size_t m = c->nsub[i];

			for (size_t k = 0; k < m; k++)
				a[k] = nonneg(sub[k]);
			if (v == 38 || v == 48 || v == 58) {
				/* with 5 sub-parameters the second is the colour
				 * space id (ITU T.416); xterm also takes 38:2:r:g:b */
				if (m >= 5 && a[0] == 2) {
					a[1] = 2;
					len = sgr_colour(v, a + 1, m - 1, g);
				} else
					len = sgr_colour(v, a, m, g);
				if (v == 58)
					len = 0;
			} else if (v == 4)
				g[0] = a[0] == 0 ? 24 : 4;
		} else if (v == 38 || v == 48 || v == 58) {
			int a[4] = {-1, -1, -1, -1};
			size_t m = 0;

			while (m < 4 && i + 1 + m < c->n && c->nsub[i + 1 + m] == 0) {
				a[m] = c->v[i + 1 + m];
				m++;
			}
			if (m >= 1 && a[0] == 5)
				m = MIN(m, 2u);
			else if (m >= 1 && a[0] == 2)
				m = MIN(m, 4u);
			len = sgr_colour(v, a, m, g);
			/* the arguments go with the colour, even a malformed one
			 * (libtsm would take them for attributes) */
			if (len)
				i += len - 1;
			else if (m >= 1 && (a[0] == 5 || a[0] == 2))
				i += m;
			if (v == 58)
				len = 0;
		} else if (v == 21)
			g[0] = 4; /* doubly underlined: underlined */
		if (len)
			sgr_group(&o, g, len);
	}
	sgr_flush(&o);
}

/* The STREAM_MOUSE_* bit of a DEC private mode, or 0. */
static unsigned mouse_mode_bit(int mode)
{
	switch (mode) {
	case 9:
		return STREAM_MOUSE_X10;
	case 1000:
		return STREAM_MOUSE_NORMAL;
	case 1002:
		return STREAM_MOUSE_BUTTON;
	case 1003:
		return STREAM_MOUSE_ANY;
	case 1004:
		return STREAM_MOUSE_FOCUS;
	case 1005:
		return STREAM_MOUSE_UTF8;
	case 1006:
		return STREAM_MOUSE_SGR;
	case 1015:
		return STREAM_MOUSE_URXVT;
	case 2004:
		return STREAM_MOUSE_BRACKETED_PASTE;
	default:
		return 0;
	}
}

/* DECSET/DECRST of a mouse mode, as xterm keeps them (stream.h). */
static void stream_mouse_mode(struct stream *s, int mode, bool set)
{
	unsigned bit = mouse_mode_bit(mode);

	if (bit & STREAM_MOUSE_TRACKING)
		s->mouse = (s->mouse & ~STREAM_MOUSE_TRACKING) | (set ? bit : 0);
	else if (bit & STREAM_MOUSE_ENCODING) {
		if (set)
			s->mouse = (s->mouse & ~STREAM_MOUSE_ENCODING) | bit;
		else
			s->mouse &= ~bit;
	} else if (bit) {
		if (set)
			s->mouse |= bit;
		else
			s->mouse &= ~bit;
	}
}

/* DECRQM: whether mode is set (1), reset (2), permanently reset (4) or
 * not known (0). */
static int stream_mode(struct stream *s, bool dec, int mode)
{
	unsigned flags;

	stream_flush(s);
	flags = tsm_screen_get_flags(s->cfg.screen);
	if (!dec)
		switch (mode) {
		case 4: /* IRM */
			return flags & TSM_SCREEN_INSERT_MODE ? 1 : 2;
		case 12: /* SRM: never changed (stream.h) */
			return 3;
		case 20: /* LNM */
			return s->lnm ? 1 : 2;
		default:
			return 0;
		}
	switch (mode) {
	case 1: /* DECCKM */
		return s->ckm ? 1 : 2;
	case 5: /* DECSCNM */
		return flags & TSM_SCREEN_INVERSE ? 1 : 2;
	case 6: /* DECOM */
		return flags & TSM_SCREEN_REL_ORIGIN ? 1 : 2;
	case 7: /* DECAWM */
		return flags & TSM_SCREEN_AUTO_WRAP ? 1 : 2;
	case 12: /* a blinking cursor (stream.h: set by DECSCUSR, not here) */
		if (!s->cfg.cursor.blink)
			return 4;
		return stream_cursor(s).blink ? 1 : 2;
	case 25: /* DECTCEM */
		return flags & TSM_SCREEN_HIDE_CURSOR ? 2 : 1;
	case 47:
	case 1047:
	case 1049:
		return flags & TSM_SCREEN_ALTERNATE ? 1 : 2;
	case 2026: /* synchronized output */
		return s->sync ? 1 : 2;
	case 80: /* DECSDM, sixel display mode */
		return s->sixel_sdm ? 1 : 2;
	case 1070: /* private sixel colour registers */
		return s->sixel_private ? 1 : 2;
	case 8452: /* the cursor to the right of a sixel image */
		return s->sixel_right ? 1 : 2;
	default: {
		unsigned bit = mouse_mode_bit(mode);

		if (bit)
			return s->mouse & bit ? 1 : 2;
		return 0;
	}
	}
}

/* XTWINOPS reports: the text area in characters (18) and in pixels (14),
 * a cell in pixels (16); the screen, as in xterm, for 19 and 15 (consoled
 * has no window around its text area). Without a cell size (unknown), no
 * pixel report. */
static void stream_winops(struct stream *s, const struct csi *c)
{
	unsigned cols = tsm_screen_get_width(s->cfg.screen);
	unsigned rows = tsm_screen_get_height(s->cfg.screen);

	switch (c->n ? c->v[0] : 0) {
	case 18:
	case 19:
		stream_reply(s, "\033[%d;%u;%ut", c->v[0] - 10, rows, cols);
		break;
	case 14:
	case 15:
		if (s->cell_w && s->cell_h)
			stream_reply(s, "\033[%d;%u;%ut", c->v[0] - 10, rows * s->cell_h,
				     cols * s->cell_w);
		break;
	case 16:
		if (s->cell_w && s->cell_h)
			stream_reply(s, "\033[6;%u;%ut", s->cell_h, s->cell_w);
		break;
	}
}

/* The largest sixel image kept (the rest is clipped): the text area, as
 * xterm's default, and no more rows than the image memory budget holds at
 * that width, nor than fill IMAGE_TILES cells (a font of 6x12 on a 4K screen
 * has 115200). 0 x 0 without images or a known cell size. */
static void stream_sixel_max(struct stream *s, unsigned *ret_w, unsigned *ret_h)
{
	unsigned cols = tsm_screen_get_width(s->cfg.screen);
	unsigned rows = MIN(tsm_screen_get_height(s->cfg.screen), IMAGE_TILES / MAX(cols, 1u));
	unsigned w = cols * s->cell_w, h = rows * s->cell_h;
	size_t budget = s->cfg.images ? image_store_budget(s->cfg.images) : 0;

	/* the decoder's own state (its registers) counts too */
	budget = budget > STREAM_SIXEL_STATE ? budget - STREAM_SIXEL_STATE : 0;
	if (!w || !h || !budget) {
		*ret_w = *ret_h = 0;
		return;
	}
	*ret_w = w;
	*ret_h = (unsigned)MIN((size_t)h, budget / ((size_t)w * sizeof(uint32_t)));
}

/* XTSMGRAPHICS (CSI ? Pi ; Pa ; Pv S): Pi 1 the colour registers, 2 the
 * sixel geometry; Pa 1 read, 2 reset, 3 set, 4 read the most. Neither can be
 * changed here: a reset or set answers what stays in effect (xterm answers
 * the value it set, at most its most). Answered CSI ? Pi ; Ps ; Pv S, Ps 0
 * done, 1 Pi unknown, 2 Pa unknown, 3 failure. */
static void stream_xtsmgraphics(struct stream *s, const struct csi *c)
{
	int pi = c->n > 0 ? c->v[0] : -1, pa = c->n > 1 ? c->v[1] : -1;
	unsigned w, h;

	if (!s->cfg.images || (pi != 1 && pi != 2)) {
		stream_reply(s, "\033[?%d;1;0S", nonneg(pi));
		return;
	}
	if (pa < 1 || pa > 4) {
		stream_reply(s, "\033[?%d;2;0S", pi);
		return;
	}
	if (pi == 1) {
		/* a reset also gives the shared registers their defaults */
		if (pa == 2 && s->sixel_shared)
			sixel_palette_init(s->sixel_shared);
		stream_reply(s, "\033[?1;0;%uS", (unsigned)SIXEL_REGISTERS);
		return;
	}
	stream_sixel_max(s, &w, &h);
	if (!w || !h)
		stream_reply(s, "\033[?2;3;0S");
	else
		stream_reply(s, "\033[?2;0;%u;%uS", w, h);
}

/* DECSC: libtsm saves its cursor, so what came before must have reached it. */
static void stream_save(struct stream *s)
{
	unsigned flags;

	stream_flush(s);
	flags = tsm_screen_get_flags(s->cfg.screen);
	s->saved = (struct stream_saved){
	    .attr = s->attr,
	    .extra = s->extra,
	    .gl = s->gl,
	    .gr = s->gr,
	    .x = tsm_screen_get_cursor_x(s->cfg.screen),
	    .y = tsm_screen_get_cursor_y(s->cfg.screen),
	    .wrap = flags & TSM_SCREEN_AUTO_WRAP,
	    .origin = flags & TSM_SCREEN_REL_ORIGIN,
	};
}

/* DECRC: the cursor and the modes are the screen's to show. */
static void stream_restore(struct stream *s)
{
	s->attr = s->saved.attr;
	s->extra = s->saved.extra;
	s->gl = s->saved.gl;
	s->gr = s->saved.gr;
}

/* SM/RM without a marker: SRM is dropped, LNM followed. */
static void stream_ansi_mode(struct stream *s, const struct csi *c, uint8_t final)
{
	size_t n = MIN(c->n, (size_t)TSM_ARG_MAX);
	bool srm = false, first = true;

	/* libtsm reads the first TSM_ARG_MAX parameters (and gets no more
	 * below): LNM beyond them would be this stage's alone, and text printed
	 * without the vte would take line feeds as libtsm does not */
	for (size_t i = 0; i < n; i++) {
		if (c->v[i] == 20)
			s->lnm = s->keys_lnm = final == 'h';
		srm |= c->v[i] == 12;
	}
	if (!srm) {
		stream_emit_csi(s, final);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (c->v[i] == 12 || c->v[i] < 0)
			continue;
		stream_emitf(s, first ? "\033[%d" : ";%d", c->v[i]);
		first = false;
	}
	if (!first)
		stream_emit_byte(s, final);
}

/* The stack of the screen shown now (0 main, 1 alternate). */
static unsigned stream_kitty_screen(struct stream *s)
{
	stream_flush(s);
	return tsm_screen_get_flags(s->cfg.screen) & TSM_SCREEN_ALTERNATE ? 1 : 0;
}

/* The kitty keyboard protocol (stream.h): CSI ? u, CSI > flags u,
 * CSI < n u, CSI = flags ; mode u. None of them reaches libtsm, which
 * would take CSI u for SCORC whatever the marker. */
static void stream_kitty(struct stream *s, const struct csi *c)
{
	unsigned scr = stream_kitty_screen(s);
	uint8_t *stack = s->kitty[scr], *n = &s->kitty_n[scr];
	int arg = c->n ? c->v[0] : -1;
	unsigned flags = (unsigned)MAX(arg, 0) & STREAM_KITTY_ALL;

	switch (c->marker) {
	case '?':
		stream_reply(s, "\033[?%uu", stream_kitty_flags(s));
		break;
	case '>':
		if (*n == STREAM_KITTY_DEPTH) {
			/* full: the oldest entry goes */
			memmove(stack, stack + 1, STREAM_KITTY_DEPTH - 1);
			(*n)--;
		}
		stack[(*n)++] = (uint8_t)flags;
		break;
	case '<': {
		unsigned count = arg > 0 ? (unsigned)arg : 1;

		*n = count >= *n ? 0 : (uint8_t)(*n - count);
		break;
	}
	case '=': {
		int mode = c->n > 1 && c->v[1] >= 0 ? c->v[1] : 1;
		unsigned now = *n ? stack[*n - 1] : 0;

		if (mode == 1)
			now = flags;
		else if (mode == 2)
			now |= flags;
		else if (mode == 3)
			now &= ~flags;
		else
			break;
		/* an empty stack gets the entry the flags are set in */
		if (!*n)
			*n = 1;
		stack[*n - 1] = (uint8_t)now;
		break;
	}
	default:
		break;
	}
}

/* DECSCUSR: CSI Ps SP q, the cursor's shape (stream.h); libtsm ignores it. */
static void stream_decscusr(struct stream *s, const struct csi *c)
{
	int ps = c->n ? nonneg(c->v[0]) : 0;

	if (ps <= 6)
		s->decscusr = (uint8_t)ps;
}

static void stream_csi(struct stream *s, uint8_t final)
{
	struct csi c;

	if (!csi_parse(s->seq, s->seq_len, &c))
		return;
	/* libtsm ignores a CSI with ':'; only SGR's are read here */
	if (c.colon && !(final == 'm' && !c.marker && !c.n_inter))
		return;
	if (c.n_inter) {
		if (c.n_inter == 1 && c.inter[0] == ' ' && final == 'q' && !c.marker) {
			stream_decscusr(s, &c);
			return;
		}
		if (c.n_inter != 1 || final != 'p')
			return;
		if (c.inter[0] == '$' && (!c.marker || c.marker == '?')) {
			int mode = c.n ? nonneg(c.v[0]) : 0;

			stream_reply(s, "\033[%s%d;%d$y", c.marker ? "?" : "", mode,
				     stream_mode(s, c.marker == '?', mode));
		} else if (c.inter[0] == '!' && !c.marker) {
			stream_mirror_reset(s, true);
			stream_emit_csi(s, final);
		} else if (c.inter[0] == '"' && !c.marker) {
			/* DECSCL: a soft reset that stays in UTF-8 */
			stream_mirror_reset(s, true);
			stream_emit(s, "\033[!p", 4);
		}
		return;
	}
	if (final == 'u' && c.marker) {
		stream_kitty(s, &c);
		return;
	}
	if (c.marker == '?') {
		if (final == 'S' && !c.n_inter) {
			stream_xtsmgraphics(s, &c);
			return;
		}
		if (!strchr("hlJKn", final))
			return;
		if (final == 'h' || final == 'l') {
			bool alt_save = false;

			for (size_t i = 0; i < c.n; i++) {
				if (c.v[i] == 1)
					s->ckm = final == 'h';
				else if (c.v[i] == 66)
					s->keys_kpam = final == 'h';
				else if (c.v[i] == 2026)
					s->sync = final == 'h';
				else if (c.v[i] == 80)
					s->sixel_sdm = final == 'h';
				else if (c.v[i] == 1070)
					s->sixel_private = final == 'h';
				else if (c.v[i] == 8452)
					s->sixel_right = final == 'h';
				else if (c.v[i] == 1048 || c.v[i] == 1049)
					/* libtsm saves the cursor only for its
					 * first TSM_ARG_MAX parameters */
					alt_save = i < TSM_ARG_MAX ? final == 'h' : alt_save;
				else
					stream_mouse_mode(s, c.v[i], final == 'h');
			}
			if (alt_save) {
				/* no mode of a CSI ? h moves the cursor: libtsm
				 * saves it as it is before the sequence */
				stream_flush(s);
				s->alt_x = tsm_screen_get_cursor_x(s->cfg.screen);
				s->alt_y = tsm_screen_get_cursor_y(s->cfg.screen);
			}
		}
		stream_emit_csi(s, final);
		return;
	}
	if (c.marker) {
		if (c.marker == '>' && final == 'c')
			stream_emit_csi(s, final);
		/* XTVERSION */
		if (c.marker == '>' && final == 'q' && (c.n == 0 || c.v[0] == 0))
			stream_reply(s, "\033P>|consoled %s\033\\", CONSOLED_VERSION);
		return;
	}
	switch (final) {
	case 'm':
		stream_sgr(s, &c);
		return;
	case 'b': { /* REP */
		unsigned count = stream_rep_limit((unsigned)csi_count(&c, 0),
						  tsm_screen_get_width(s->cfg.screen),
						  tsm_screen_get_height(s->cfg.screen));

		for (unsigned i = 0; s->last_len && i < count; i++)
			stream_print(s, s->last, s->last_len);
		return;
	}
	case 'E': /* CNL */
		stream_emitf(s, "\r\033[%dB", csi_count(&c, 0));
		return;
	case 'F': /* CPL */
		stream_emitf(s, "\r\033[%dA", csi_count(&c, 0));
		return;
	case '`': /* HPA */
		stream_emitf(s, "\033[%dG", csi_count(&c, 0));
		return;
	case 'a': /* HPR */
		stream_emitf(s, "\033[%dC", csi_count(&c, 0));
		return;
	case 's': /* SCOSC (there are no left and right margins) */
		stream_save(s);
		stream_emit(s, "\0337", 2);
		return;
	case 'u': /* SCORC */
		stream_restore(s);
		stream_emit(s, "\0338", 2);
		return;
	case 'J':
		if (c.n && c.v[0] == 3) {
			/* ED 3: the scrollback only (xterm's E3) */
			stream_flush(s);
			tsm_screen_clear_sb(s->cfg.screen);
			return;
		}
		stream_emit_csi(s, final);
		return;
	case 'h':
	case 'l':
		stream_ansi_mode(s, &c, final);
		return;
	case 'r': { /* DECSTBM; xterm then homes the cursor (libtsm does not) */
		int rows = (int)tsm_screen_get_height(s->cfg.screen);
		int top = c.n > 0 && c.v[0] > 0 ? c.v[0] : 1;
		int bot = c.n > 1 && c.v[1] > 0 ? MIN(c.v[1], rows) : rows;

		stream_emit_csi(s, final);
		if (bot > top)
			stream_emit(s, "\033[H", 3);
		return;
	}
	case 't': /* XTWINOPS: the reports of sizes; nothing else */
		stream_winops(s, &c);
		return;
	case 'c': /* DA1: libtsm's answer, with sixel (4) when images are kept */
		if (s->cfg.images && (c.n == 0 || c.v[0] <= 0))
			stream_reply(s, "\033[?60;1;4;6;9;15c");
		else
			stream_emit_csi(s, final);
		return;
	default:
		/* what libtsm does as xterm does; not p (libtsm takes a bare
		 * CSI p for DECSCL), t, q, ... (libtsm ignores them anyway) */
		if (strchr("@ABCDGHIKLMPSTXZcdefgn", final))
			stream_emit_csi(s, final);
		return;
	}
}

/* ---- OSC ---------------------------------------------------------------- */

static void stream_reply_colour(struct stream *s, const char *what, struct rgb c, bool bel)
{
	stream_reply(s, "\033]%s;rgb:%04x/%04x/%04x%s", what, c.r * 257u, c.g * 257u, c.b * 257u,
		     bel ? "\a" : "\033\\");
}

/* Reads a decimal number at *p (advancing it); -1 if there is none. */
static int osc_number(const char **p, const char *end)
{
	int v = -1;

	while (*p < end && **p >= '0' && **p <= '9' && v < 100000) {
		v = (v < 0 ? 0 : v * 10) + (**p - '0');
		(*p)++;
	}
	return v;
}

/* The next ';'-separated field at *p: its length; *p moves past the ';'. */
static size_t osc_field(const char **p, const char *end, const char **ret)
{
	const char *f = *p;
	size_t len;

	while (*p < end && **p != ';')
		(*p)++;
	len = (size_t)(*p - f);
	if (*p < end)
		(*p)++;
	*ret = f;
	return len;
}

/* Answers the colour queries of an OSC: 4;c;? (palette entries), 10;? and
 * 11;? (default foreground and background; 10;?;? asks for both). */
/* Whether the OSC being collected is an OSC 52 for cfg.osc52. */
static bool osc_is_52(struct stream *s)
{
	return s->cfg.osc52 && s->osc_len >= 3 && memcmp(s->osc_buf, "52;", 3) == 0;
}

/* A byte of an OSC 52 that osc_buf has no room for. The buffer grows into
 * a new block, the old one wiped (realloc() would leave it in the heap as
 * it was); past osc52_len it holds zeros. */
static void osc52_add(struct stream *s, uint32_t cp)
{
	if (s->osc52_bad || cp >= 0x80 || s->osc_len + s->osc52_len >= STREAM_OSC52_MAX) {
		s->osc52_bad = true;
		return;
	}
	if (s->osc52_len == s->osc52_cap) {
		size_t cap = MAX(s->osc52_cap * 2, 256u);
		char *grown = xmalloc(cap);

		memset(grown + s->osc52_len, 0, cap - s->osc52_len);
		if (s->osc52) {
			memcpy(grown, s->osc52, s->osc52_len);
			explicit_bzero(s->osc52, s->osc52_cap);
			free(s->osc52);
		}
		s->osc52 = grown;
		s->osc52_cap = cap;
	}
	s->osc52[s->osc52_len++] = (char)cp;
}

/* What a string carried (an OSC 52: text the user copied, maybe a
 * password) stays in no buffer once the string was handed on, refused or
 * cut (ESC but ST's, CAN, SUB or a C1 control before its end), and none of
 * it survives stream_reset() or stream_free(). The OSC 52 buffer holds
 * nothing past osc52_len (osc52_add()), so that much is wiped. */
static void osc52_forget(struct stream *s)
{
	explicit_bzero(s->osc_buf, sizeof(s->osc_buf));
	if (s->osc52)
		explicit_bzero(s->osc52, s->osc52_len);
	s->osc_len = s->osc52_len = 0;
}

/* A string cut before its end by what ends any sequence: dropped, and so
 * is what it collected. */
static void stream_string_cut(struct stream *s)
{
	stream_sixel_end(s);
	if (s->state == STATE_STRING || s->string_esc)
		osc52_forget(s);
	s->string_esc = s->osc = false;
}

size_t stream_string_held(const struct stream *s)
{
	size_t n = 0;

	for (size_t i = 0; i < sizeof(s->osc_buf); i++)
		n += s->osc_buf[i] != 0;
	for (size_t i = 0; i < s->osc52_cap; i++)
		n += s->osc52[i] != 0;
	return n;
}

static void osc52_end(struct stream *s)
{
	char *args;
	size_t len = s->osc_len - 3 + s->osc52_len;

	if (s->osc52_bad) {
		osc52_forget(s);
		return;
	}
	args = xmalloc(len + 1);
	memcpy(args, s->osc_buf + 3, s->osc_len - 3);
	if (s->osc52_len)
		memcpy(args + s->osc_len - 3, s->osc52, s->osc52_len);
	args[len] = '\0';
	osc52_forget(s);
	s->cfg.osc52(args, len, s->cfg.userdata);
	explicit_bzero(args, len + 1);
	free(args);
}

static void stream_osc(struct stream *s, bool bel)
{
	const struct palette *pal = s->cfg.palette ? s->cfg.palette : &s->linux_palette;
	const char *p = s->osc_buf, *end = s->osc_buf + s->osc_len, *f;
	char what[16];
	int ps;

	if (osc_is_52(s)) {
		osc52_end(s);
		return;
	}
	if (s->osc_long)
		return;
	ps = osc_number(&p, end);
	if (ps < 0 || p == end || *p != ';')
		return;
	p++;
	if (ps == 4) {
		while (p < end) {
			int idx = osc_number(&p, end);
			size_t len;

			if (idx < 0 || p == end || *p != ';')
				return;
			p++;
			len = osc_field(&p, end, &f);
			if (idx <= 255 && len == 1 && f[0] == '?') {
				snprintf(what, sizeof(what), "4;%d", idx);
				stream_reply_colour(s, what, pal->colors[idx], bel);
			}
		}
		return;
	}
	for (int k = ps; k >= 10 && k <= 19 && p < end; k++) {
		size_t len = osc_field(&p, end, &f);

		if (len != 1 || f[0] != '?' || k > 11)
			continue;
		snprintf(what, sizeof(what), "%d", k);
		stream_reply_colour(s, what, pal->colors[k == 10 ? pal->fg : pal->bg], bel);
	}
}

/* ---- the parser ----------------------------------------------------------- */

/* A C0 control inside or outside a sequence: libtsm executes it. */
static void stream_c0(struct stream *s, uint8_t b)
{
	if (b == 0x0e) /* SO */
		s->gl = 1;
	else if (b == 0x0f) /* SI */
		s->gl = 0;
	else if (b == 0x07 && s->bells < UINT_MAX) /* BEL */
		s->bells++;
	stream_emit_byte(s, b);
}

static void stream_enter(struct stream *s, enum parse_state state)
{
	s->state = state;
	s->seq_len = 0;
	s->seq_bad = false;
	s->string_esc = s->osc = false;
}

static void stream_enter_string(struct stream *s, bool osc)
{
	stream_enter(s, STATE_STRING);
	s->osc = osc;
	s->dcs = false;
	osc52_forget(s); /* (nothing left: every way out of a string forgot it) */
	s->osc_long = false;
	s->osc52_bad = false;
}

static void stream_esc(struct stream *s, uint8_t final)
{
	static const char upper[] = "A4C5RQKYE6ZH7=";

	if (s->seq_bad)
		return;
	if (s->seq_len == 0) {
		switch (final) {
		case 'c': /* RIS */
			stream_mirror_reset(s, false);
			break;
		case '=': /* DECKPAM */
		case '>': /* DECKPNM */
			s->kpam = s->keys_kpam = final == '=';
			break;
		case '7':
			stream_save(s);
			break;
		case '8':
			stream_restore(s);
			break;
		case 'N':
		case 'O':
			s->glt = final == 'N' ? 2 : 3;
			break;
		case 'n':
		case 'o':
			s->gl = final == 'n' ? 2 : 3;
			break;
		case '~':
			s->gr = 1;
			break;
		case '}':
			s->gr = 2;
			break;
		case '|':
			s->gr = 3;
			break;
		}
	} else if (s->seq_len == 1 && strchr("()*+", s->seq[0])) {
		unsigned slot = (unsigned)(strchr("()*+", s->seq[0]) - "()*+");

		if (final == 'B')
			s->g[slot] = CHARSET_LOWER;
		else if (final == '0')
			s->g[slot] = CHARSET_SPECIAL;
		else if (final == '<')
			s->g[slot] = CHARSET_OTHER;
		else if (strchr(upper, final))
			s->g[slot] = CHARSET_UPPER;
	} else if (!(s->seq_len == 1 && s->seq[0] == ' ' && (final == 'F' || final == 'G')))
		return; /* libtsm would misread it (ESC # 8 as DECRC, ...) */
	stream_emit_byte(s, 0x1b);
	stream_emit(s, s->seq, s->seq_len);
	stream_emit_byte(s, final);
}

/* ---- DCS queries ---------------------------------------------------------- */

/* The capabilities XTGETTCAP answers: those of the terminfo entry the
 * session gets (stream_config's term_name; xterm-256color by default) that
 * programs ask for. */
static const char *stream_tcap(struct stream *s, const char *name, char *buf, size_t size)
{
	if (!strcmp(name, "TN") || !strcmp(name, "name"))
		return s->cfg.term_name ? s->cfg.term_name : "xterm-256color";
	if (!strcmp(name, "Co") || !strcmp(name, "colors")) {
		snprintf(buf, size, "%d", 256);
		return buf;
	}
	if (!strcmp(name, "RGB"))
		return "8/8/8";
	return NULL;
}

/* XTGETTCAP: DCS + q Pt ST, Pt names in hex separated by ';': each is
 * answered DCS 1 + r name=value ST (in hex) or DCS 0 + r name ST. */
static void stream_xtgettcap(struct stream *s, const char *p, const char *end)
{
	while (p < end) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		const char *e = semi ? semi : end;
		char name[32], vbuf[32], hex[2 * 64 + 1];
		size_t n = 0, len = (size_t)(e - p);
		const char *value = NULL;
		bool ok = len % 2 == 0 && len / 2 < sizeof(name) && len > 0;

		for (size_t i = 0; ok && i < len; i += 2) {
			int hi = hex_value(p[i]), lo = hex_value(p[i + 1]);

			ok = hi >= 0 && lo >= 0 && (hi || lo);
			name[n++] = (char)(hi << 4 | lo);
		}
		name[n] = '\0';
		if (ok)
			value = stream_tcap(s, name, vbuf, sizeof(vbuf));
		if (value && strlen(value) < 64) {
			for (size_t i = 0; value[i]; i++)
				snprintf(hex + 2 * i, 3, "%02X", (unsigned char)value[i]);
			stream_reply(s, "\033P1+r%.*s=%s\033\\", (int)MIN(len, 64u), p, hex);
		} else
			stream_reply(s, "\033P0+r%.*s\033\\", (int)MIN(len, 64u), p);
		p = semi ? semi + 1 : end;
	}
}

/* SGR parameters for colour code/rgb (fg: 30, 90, 38; bg: 40, 100, 48). */
static int sgr_colour_params(char *buf, size_t size, int8_t code, uint8_t r, uint8_t g, uint8_t b,
			     bool fg)
{
	if (code >= 0 && code < 8)
		return snprintf(buf, size, ";%d", (fg ? 30 : 40) + code);
	if (code >= 8 && code < 16)
		return snprintf(buf, size, ";%d", (fg ? 90 : 100) + code - 8);
	if (code < 0)
		return snprintf(buf, size, ";%d;2;%u;%u;%u", fg ? 38 : 48, r, g, b);
	return 0; /* the default colour */
}

/* DECRQSS: DCS $ q Pt ST for SGR (m), DECSTBM (r) and DECSCUSR (SP q):
 * DCS 1 $ r value Pt ST, or DCS 0 $ r ST for anything else. */
static void stream_decrqss(struct stream *s, const char *p, size_t len)
{
	char v[128];
	size_t n = 0;

	if (len == 1 && p[0] == 'm') {
		const struct tsm_screen_attr *a = &s->attr;
		static const struct {
			unsigned bit;
			int param;
		} extra[] = {{CLUSTER_DIM, 2}, {SGR_CONCEAL, 8}, {CLUSTER_STRIKE, 9}};

		n = (size_t)snprintf(v, sizeof(v), "0%s%s%s%s%s", a->bold ? ";1" : "",
				     a->italic ? ";3" : "", a->underline ? ";4" : "",
				     a->blink ? ";5" : "", a->inverse ? ";7" : "");
		for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++)
			if (s->extra & extra[i].bit)
				n += (size_t)snprintf(v + n, sizeof(v) - n, ";%d", extra[i].param);
		n += (size_t)sgr_colour_params(v + n, sizeof(v) - n, a->fccode, a->fr, a->fg, a->fb,
					       true);
		n += (size_t)sgr_colour_params(v + n, sizeof(v) - n, a->bccode, a->br, a->bg, a->bb,
					       false);
		stream_reply(s, "\033P1$r%sm\033\\", v);
		return;
	}
	if (len == 1 && p[0] == 'r') {
		const struct tsmpeek_screen *ts = tsmpeek(s->cfg.screen);

		stream_flush(s);
		if (ts) {
			stream_reply(s, "\033P1$r%u;%ur\033\\", ts->margin_top + 1,
				     ts->margin_bottom + 1);
			return;
		}
	}
	if (len == 2 && p[0] == ' ' && p[1] == 'q') {
		/* the cursor as it is drawn: DECSCUSR's 1-6 */
		struct stream_cursor cur = stream_cursor(s);

		stream_reply(s, "\033P1$r%d q\033\\", 1 + 2 * (int)cur.shape + !cur.blink);
		return;
	}
	stream_reply(s, "\033P0$r\033\\");
}

/* ---- sixel ---------------------------------------------------------------- */

static void stream_pen_rgb(const struct stream *s, struct tsm_screen_attr *a);

/* Whether the DCS collected so far (its parameters) is the start of sixel
 * data once a 'q' follows: digits and ';' only, no intermediate. */
static bool stream_sixel_intro(const struct stream *s)
{
	if (!s->cfg.images || s->osc_long)
		return false;
	for (size_t i = 0; i < s->osc_len; i++)
		if (!(s->osc_buf[i] == ';' || (s->osc_buf[i] >= '0' && s->osc_buf[i] <= '9')))
			return false;
	return true;
}

/* DCS P1 ; P2 ; P3 q: the sixel data that follows goes to a decoder, up to
 * the largest image kept (stream_sixel_max()), with the private colour
 * registers or the shared ones (DECSET 1070). P2 = 1 leaves the pixels never
 * drawn transparent; else they get register 0, as on the VT340 and xterm. */
static void stream_sixel_start(struct stream *s)
{
	unsigned p[3] = {0, 0, 0}, k = 0, w, h;
	struct sixel_palette *pal = NULL, def;

	for (size_t i = 0; i < s->osc_len && k < 3; i++) {
		if (s->osc_buf[i] == ';')
			k++;
		else if (k < 3)
			p[k] = MIN(p[k] * 10 + (unsigned)(s->osc_buf[i] - '0'), 65535u);
	}
	osc52_forget(s);
	s->dcs = false;
	s->sixel_on = true;
	stream_sixel_max(s, &w, &h);
	if (!w || !h)
		return; /* no cell size known, or no memory for images: dropped */
	/* A few bytes can make a screenful of pixels (raster attributes,
	 * repeats): what one read places is bounded, so that one read cannot
	 * keep the daemon from its keys and other terminals for long. */
	if (s->sixel_fed_px >= (uint64_t)STREAM_SIXEL_FEED_SCREENS * w * h) {
		if (!s->sixel_fed_warned)
			log_warning("A session wrote more than %u screens of sixel images in one "
				    "read: the further ones in such a read are dropped.",
				    STREAM_SIXEL_FEED_SCREENS);
		s->sixel_fed_warned = true;
		return;
	}
	if (!s->sixel_private) {
		if (!s->sixel_shared) {
			s->sixel_shared = xmalloc(sizeof(*s->sixel_shared));
			sixel_palette_init(s->sixel_shared);
		}
		pal = s->sixel_shared;
	} else
		sixel_palette_init(&def);
	s->sixel = sixel_decoder_new(p[0], p[1], (pal ? pal : &def)->rgb[0], w, h, pal);
}

/* Sixel data: decoded as it comes. What the decoder holds counts against the
 * image memory budget with the images kept: older images are dropped for it,
 * and an image that alone would take more than the budget is dropped. */
static void stream_sixel_feed(struct stream *s, const uint8_t *b, size_t n)
{
	if (!s->sixel)
		return;
	sixel_decoder_feed(s->sixel, (const char *)b, n);
	if (!image_store_make_room(s->cfg.images, sixel_decoder_memory(s->sixel))) {
		log_debug("A sixel image is over the image memory budget (%zu bytes), dropped.",
			  image_store_budget(s->cfg.images));
		sixel_decoder_free(s->sixel);
		s->sixel = NULL;
	}
}

/* What libtsm writes tiles with: the pen's colours (a transparent pixel shows
 * the cell's background), none of its other attributes but inverse. */
static void stream_sixel_attr(struct stream *s, struct tsm_screen_attr *ret)
{
	struct tsm_screen_attr a;

	if (s->cfg.palette) {
		a = s->attr;
		stream_pen_rgb(s, &a);
	} else if (tsmpeek_check(s->cfg.screen))
		/* libtsm's vte sets the screen's default attribute to its pen
		 * at every SGR */
		a = ((const struct tsmpeek_screen *)(void *)s->cfg.screen)->def_attr;
	else
		a = (struct tsm_screen_attr){.fccode = TSM_COLOR_FOREGROUND,
					     .bccode = TSM_COLOR_BACKGROUND};
	*ret = (struct tsm_screen_attr){
	    .fccode = a.fccode,
	    .bccode = a.bccode,
	    .fr = a.fr,
	    .fg = a.fg,
	    .fb = a.fb,
	    .br = a.br,
	    .bg = a.bg,
	    .bb = a.bb,
	    .inverse = a.inverse,
	};
}

/* Places an image as xterm does: its tile code points (image.h) written into
 * libtsm's screen row by row from the cursor, clipped at the right edge; a
 * row past the bottom margin scrolls the screen (IND). The cursor is left
 * on the image's last row, at the column it started at, or with DECSET 8452
 * right of the image (past the right edge: at the start of the next line).
 * In sixel display mode (DECSET 80) the image is drawn from the top left
 * corner, clipped at the bottom, and the cursor does not move. */
static void stream_sixel_place(struct stream *s, struct sixel_image *img)
{
	struct tsm_screen *screen = s->cfg.screen;
	unsigned sw = tsm_screen_get_width(screen), sh = tsm_screen_get_height(screen);
	unsigned cols, rows, cx, cy, x0, vcols, vrows, flags, off;
	struct tsm_screen_attr a;
	uint32_t first;
	int r;

	if (!s->cell_w || !s->cell_h || !sw || !sh)
		return; /* the cell size became unknown while it was decoded */
	cols = (img->width + s->cell_w - 1) / s->cell_w;
	rows = (img->height + s->cell_h - 1) / s->cell_h;
	stream_flush(s);
	cx = tsm_screen_get_cursor_x(screen);
	cy = tsm_screen_get_cursor_y(screen);
	x0 = s->sixel_sdm ? 0 : MIN(cx, sw - 1);
	vcols = MIN(cols, sw - x0);
	vrows = s->sixel_sdm ? MIN(rows, sh) : rows;
	r = image_store_add(s->cfg.images, img->pixels, img->width, img->height, s->cell_w,
			    s->cell_h, vcols, vrows, screen, &first);
	img->pixels = NULL; /* the store's, or freed */
	if (r < 0) {
		log_debug_errno(r, "Sixel image of %ux%u not placed: %m", img->width, img->height);
		return;
	}
	stream_sixel_attr(s, &a);
	/* tiles overwrite (no insert mode), and rows count from the screen's
	 * top (no origin mode): both back as they were after */
	flags = tsm_screen_get_flags(screen);
	off = flags & (TSM_SCREEN_INSERT_MODE | TSM_SCREEN_REL_ORIGIN);
	if (off)
		tsm_screen_reset_flags(screen, off);
	for (unsigned y = 0; y < vrows; y++) {
		if (s->sixel_sdm)
			tsm_screen_move_to(screen, 0, y);
		else {
			if (y > 0)
				tsm_screen_move_down(screen, 1, true);
			tsm_screen_move_line_home(screen);
			tsm_screen_move_right(screen, x0);
		}
		for (unsigned x = 0; x < vcols; x++)
			tsm_screen_write(screen, first + y * vcols + x, &a);
	}
	if (s->sixel_sdm)
		tsm_screen_move_to(screen, cx, cy);
	else if (s->sixel_right && x0 + cols > sw - 1) {
		tsm_screen_move_down(screen, 1, true);
		tsm_screen_move_line_home(screen);
	} else {
		tsm_screen_move_line_home(screen);
		tsm_screen_move_right(screen, s->sixel_right ? x0 + cols : x0);
	}
	if (off)
		tsm_screen_set_flags(screen, off);
}

/* The end of sixel data: by ST, or cut by CAN, SUB, ESC or a C1 control.
 * Either way what was decoded is placed, as xterm, which draws sixels as
 * they come, keeps what it drew. */
static void stream_sixel_end(struct stream *s)
{
	struct sixel_decoder *d = s->sixel;
	struct sixel_image img = {0};
	int r;

	if (!s->sixel_on)
		return;
	s->sixel_on = false;
	s->sixel = NULL;
	if (!d)
		return;
	r = sixel_decoder_finish(d, &img);
	sixel_decoder_free(d);
	if (r == 0) {
		s->sixel_fed_px += (uint64_t)img.width * img.height;
		stream_sixel_place(s, &img);
	} else if (r == -ENOMEM)
		log_warning_errno(r, "A sixel image was dropped: %m");
	else
		log_debug_errno(r, "A sixel image showed nothing: %m");
	sixel_image_free(&img);
}

/* A DCS that ended with ST: the queries are answered, the rest dropped
 * (libtsm shows no DCS). */
static void stream_dcs(struct stream *s)
{
	const char *p = s->osc_buf, *end = s->osc_buf + s->osc_len;

	if (s->osc_len >= 2 && p[0] == '+' && p[1] == 'q')
		stream_xtgettcap(s, p + 2, end);
	else if (s->osc_len >= 2 && p[0] == '$' && p[1] == 'q')
		stream_decrqss(s, p + 2, s->osc_len - 2);
}

/* The end of a string; with `terminated` by BEL or ST an OSC is answered. */
static void stream_string_end(struct stream *s, bool terminated, bool bel)
{
	stream_sixel_end(s);
	if (terminated && s->osc)
		stream_osc(s, bel);
	if (terminated && s->dcs && !s->osc_long)
		stream_dcs(s);
	osc52_forget(s);
	s->osc = s->dcs = false;
	s->state = STATE_GROUND;
}

/* One code point that is not text in the ground state. */
static void stream_step(struct stream *s, uint32_t cp)
{
	/* what ends any sequence, as in libtsm */
	if (cp == 0x1b) {
		/* ST, if '\' follows; the OSC is kept for that */
		bool in_string = s->state == STATE_STRING, osc = s->osc;

		if (!in_string)
			stream_string_cut(s); /* a string's ESC, then another: no ST */
		stream_enter(s, STATE_ESC);
		s->string_esc = in_string;
		s->osc = in_string && osc;
		return;
	}
	if (cp == 0x18 || cp == 0x1a) {
		stream_string_cut(s);
		s->state = STATE_GROUND;
		stream_emit_byte(s, (uint8_t)cp);
		return;
	}
	if (cp >= 0x80 && cp <= 0x9f) {
		if (cp == 0x9c && s->state == STATE_STRING)
			stream_string_end(s, true, false);
		else
			stream_string_cut(s);
		s->state = STATE_GROUND;
		switch (cp) {
		case 0x9b:
			stream_enter(s, STATE_CSI);
			return;
		case 0x9d:
			stream_enter_string(s, true);
			return;
		case 0x90:
		case 0x98:
		case 0x9e:
		case 0x9f:
			stream_enter_string(s, false);
			s->dcs = cp == 0x90;
			return;
		case 0x9c:
			return;
		case 0x8e:
		case 0x8f:
			s->glt = cp == 0x8e ? 2 : 3;
			break;
		}
		stream_emit_cp(s, cp); /* libtsm executes it */
		return;
	}

	switch (s->state) {
	case STATE_GROUND:
		if (cp < 0x20)
			stream_c0(s, (uint8_t)cp);
		else
			stream_emit_byte(s, (uint8_t)cp); /* DEL: libtsm ignores it */
		return;
	case STATE_ESC:
		if (cp < 0x20) {
			stream_c0(s, (uint8_t)cp);
			return;
		}
		if (cp == 0x7f)
			return;
		if (s->string_esc && cp == '\\') {
			s->string_esc = false;
			stream_string_end(s, true, false);
			return;
		}
		/* an ESC ended the string, and what follows is an ESC
		 * sequence of its own: the string is dropped */
		if (s->string_esc) {
			stream_sixel_end(s);
			osc52_forget(s);
		}
		s->string_esc = s->osc = false;
		if (cp >= 0x20 && cp <= 0x2f) {
			if (s->seq_len < STREAM_SEQ_MAX)
				s->seq[s->seq_len++] = (char)cp;
			else
				s->seq_bad = true;
			return;
		}
		if (s->seq_len == 0 && !s->seq_bad) {
			switch (cp) {
			case '[':
				stream_enter(s, STATE_CSI);
				return;
			case ']':
				stream_enter_string(s, true);
				return;
			case 'P':
			case 'X':
			case '^':
			case '_':
				stream_enter_string(s, false);
				s->dcs = cp == 'P';
				return;
			}
		}
		if (cp >= 0x30 && cp <= 0x7e) {
			stream_esc(s, (uint8_t)cp);
			s->state = STATE_GROUND;
			return;
		}
		s->seq_bad = true; /* libtsm collects it as an intermediate */
		return;
	case STATE_CSI:
		if (cp < 0x20) {
			stream_c0(s, (uint8_t)cp);
			return;
		}
		if (cp == 0x7f)
			return;
		if (cp <= 0x3f) {
			if (s->seq_len < STREAM_SEQ_MAX)
				s->seq[s->seq_len++] = (char)cp;
			else
				s->seq_bad = true;
			return;
		}
		if (cp <= 0x7e) {
			s->state = STATE_GROUND;
			if (!s->seq_bad)
				stream_csi(s, (uint8_t)cp);
			return;
		}
		s->seq_bad = true; /* libtsm ignores the sequence */
		return;
	case STATE_STRING:
		if (s->sixel_on) {
			uint8_t b = (uint8_t)cp;

			if (cp < 0x80)
				stream_sixel_feed(s, &b, 1);
			return;
		}
		if (cp == 0x07 && s->osc) {
			stream_string_end(s, true, true);
			return;
		}
		if (s->dcs && cp == 'q' && stream_sixel_intro(s)) {
			stream_sixel_start(s);
			return;
		}
		if (s->dcs && cp >= 0x20) {
			/* a query is short: a longer DCS is none (osc_long) */
			if (cp < 0x80 && s->osc_len < STREAM_DCS_QUERY_MAX)
				s->osc_buf[s->osc_len++] = (char)cp;
			else
				s->osc_long = true;
			return;
		}
		if (!s->osc || cp < 0x20)
			return;
		if (cp < 0x80 && s->osc_len < STREAM_OSC_MAX)
			s->osc_buf[s->osc_len++] = (char)cp;
		else if (osc_is_52(s))
			osc52_add(s, cp);
		else
			s->osc_long = true;
		return;
	}
}

/* An SGR at p[0..len) (p starts with ESC [) that stream_sgr() would hand on
 * as it came: digits and ';' only, then 'm', in this read, no longer than a
 * CSI may be (STREAM_SEQ_MAX), sgr_values_as_is(); or ESC [ m. It is
 * followed and handed on without the general path's copy and second parse (the colour-heavy output
 * of ls --color and the like is mostly these), with the same bytes for libtsm; returns the bytes
 * taken, or 0 for anything else, which the general path then takes from the start. */
static size_t stream_sgr_fast(struct stream *s, const uint8_t *p, size_t len)
{
	int v[SGR_CHUNK];
	size_t n = 0, j = 2, end = MIN(len, 2 + (size_t)STREAM_SEQ_MAX);

	if (len > 2 && p[2] == 'm')
		v[n++] = 0; /* ESC [ m: SGR 0 */
	else {
		for (;;) {
			size_t first = j;
			unsigned val = 0, d;

			while (j < end && (d = (unsigned)p[j] - '0') < 10) {
				val = val * 10 + d;
				if (val >= PARAM_VALUE_MAX)
					return 0;
				j++;
			}
			/* an empty parameter, or too many */
			if (j == first || n == SGR_CHUNK || j == end)
				return 0;
			v[n++] = (int)val;
			if (p[j] == 'm')
				break;
			if (p[j] != ';')
				return 0;
			j++;
		}
		if (!sgr_values_as_is(v, n))
			return 0;
	}
	/* the state stream_enter() and the CSI's end leave */
	s->seq_len = 0;
	s->seq_bad = false;
	s->string_esc = s->osc = false;
	stream_track_sgr(s, v, n);
	if (j == 2)
		stream_emit(s, "\033[0m", 4); /* as stream_sgr() writes ESC [ m */
	else
		stream_emit(s, (const char *)p, j + 1);
	return j + 1;
}

/* What libtsm's vte prints with: the pen with its colour codes turned into
 * the palette's colours (libtsm's to_rgb(): bold brightens the first 8). */
static void stream_pen_rgb(const struct stream *s, struct tsm_screen_attr *a)
{
	int code = a->fccode;

	if (code >= 0) {
		if (a->bold && code < 8)
			code += 8;
		if (code >= TSM_COLOR_NUM)
			code = TSM_COLOR_FOREGROUND;
		a->fr = s->tsm_palette[code][0];
		a->fg = s->tsm_palette[code][1];
		a->fb = s->tsm_palette[code][2];
	}
	code = a->bccode;
	if (code >= 0) {
		if (code >= TSM_COLOR_NUM)
			code = TSM_COLOR_BACKGROUND;
		a->br = s->tsm_palette[code][0];
		a->bg = s->tsm_palette[code][1];
		a->bb = s->tsm_palette[code][2];
	}
}

/* The character or control at b[0..n) of a plain run (well-formed UTF-8):
 * its code point, and its length in *ret_len. */
static inline uint32_t run_item(const uint8_t *b, size_t n, size_t *ret_len)
{
	uint32_t cp;

	if (b[0] < 0x80) {
		*ret_len = 1;
		return b[0];
	}
	*ret_len = utf8_next(b, n, &cp);
	return cp;
}

/* Whether libtsm's vte would only hand cp to the screen, as it is: printable
 * ASCII (GL maps it to itself: the caller checks), CR, LF, and code points
 * from U+00A0 that no character set maps (U+00A1..U+00FE are GR's). */
static inline bool direct_item(uint32_t cp, bool gr_as_is)
{
	return cp - 0x20 < 0x5f || cp == '\n' || cp == '\r' || cp >= 0x100 ||
	       (cp >= 0xa0 && (gr_as_is || cp == 0xa0 || cp == 0xff));
}

/* A plain run (stream_plain_run()) with GL mapping ASCII to itself, printed
 * onto the screen as libtsm's vte would print it (in its ground state, its
 * UTF-8 decoder between characters, which is all this stage hands it):
 * what direct_item() takes straight to the screen; the rest (other C0
 * controls, DEL, what GR maps) to the vte, in order. */
static void stream_direct(struct stream *s, const uint8_t *b, size_t n)
{
	struct tsm_screen *screen = s->cfg.screen;
	struct tsm_screen_attr a = s->attr;
	bool gr_as_is = s->g[s->gr] == CHARSET_UPPER;
	size_t i = 0, j, k;
	uint32_t cp;

	stream_pen_rgb(s, &a);
	while (i < n) {
		for (j = i; j < n && !direct_item(run_item(b + j, n - j, &k), gr_as_is); j += k)
			;
		if (j > i) {
			stream_emit(s, (const char *)b + i, j - i);
			i = j;
			continue;
		}
		stream_flush(s);
		for (; j < n; j += k) {
			cp = run_item(b + j, n - j, &k);
			if (cp == '\n') {
				if (s->lnm)
					tsm_screen_newline(screen);
				else
					tsm_screen_move_down(screen, 1, true);
			} else if (cp == '\r')
				tsm_screen_move_line_home(screen);
			else if (direct_item(cp, gr_as_is))
				tsm_screen_write(screen, cp, &a);
			else
				break;
		}
		if (s->cfg.seen)
			s->cfg.seen((const char *)b + i, j - i, s->cfg.userdata);
		s->bytes_out += j - i;
		i = j;
	}
}

void stream_feed(struct stream *s, const char *in, size_t len)
{
	const uint8_t *p = (const uint8_t *)in;
	size_t i = 0;

	s->sixel_fed_px = 0;

	if (s->n_pending) {
		if (s->n_pending + len > s->scratch_cap) {
			s->scratch_cap = s->n_pending + len;
			s->scratch = xrealloc(s->scratch, s->scratch_cap);
		}
		memcpy(s->scratch, s->pending, s->n_pending);
		memcpy(s->scratch + s->n_pending, in, len);
		p = s->scratch;
		len += s->n_pending;
		s->n_pending = 0;
	}
	while (i < len) {
		uint32_t cp = p[i];
		size_t n = 1;

		/* sixel data, to the decoder in one piece up to what may end
		 * it (CAN, SUB, ESC, a C1 control) */
		if (s->sixel_on && s->state == STATE_STRING) {
			size_t j = i;

			while (j < len && p[j] < 0x80 && p[j] != 0x18 && p[j] != 0x1a &&
			       p[j] != 0x1b)
				j++;
			if (j > i) {
				stream_sixel_feed(s, p + i, j - i);
				i = j;
				continue;
			}
		}

		/* ESC [ in the ground state: what stream_step() makes of the
		 * two bytes, at once */
		if (cp == 0x1b && s->state == STATE_GROUND && i + 1 < len && p[i + 1] == '[') {
			n = stream_sgr_fast(s, p + i, len - i);
			if (n) {
				i += n;
				continue;
			}
			n = 1;
			stream_enter(s, STATE_CSI);
			i += 2;
			if (i == len)
				break;
			cp = p[i];
		}
		/* a CSI's parameter and intermediate bytes, taken in one piece
		 * (the final byte and C0 controls go on below) */
		if (s->state == STATE_CSI && cp >= 0x20 && cp <= 0x3f) {
			size_t j = i + 1, room = STREAM_SEQ_MAX - s->seq_len;

			while (j < len && p[j] >= 0x20 && p[j] <= 0x3f)
				j++;
			if (j - i > room)
				s->seq_bad = true;
			memcpy(s->seq + s->seq_len, p + i, MIN(j - i, room));
			s->seq_len += MIN(j - i, room);
			i = j;
			if (i < len && p[i] >= 0x40 && p[i] <= 0x7e) {
				/* the final byte, as stream_step() takes it */
				s->state = STATE_GROUND;
				if (!s->seq_bad)
					stream_csi(s, p[i]);
				i++;
			}
			continue;
		}
		/* plain text: handed on as it is, in one piece */
		if (s->state == STATE_GROUND && !s->extra && s->glt < 0) {
			bool cluster;
			size_t base, run = stream_plain_run(s, p + i, len - i, &base, &cluster);

			/* (a run of 0, a character with marks right after
			 * another, goes through too: no branch on it) */
			if (base < run) {
				utf8_next(p + i + base, run - base, &s->last[0]);
				s->last_len = 1;
			}
			if (s->direct && s->g[s->gl] == CHARSET_LOWER)
				stream_direct(s, p + i, run);
			else
				stream_emit_text(s, (const char *)p + i, run, len - i);
			i += run;
			if (cluster) {
				/* the run ended at a character with marks */
				cp = p[i];
				n = cp < 0x80 ? 1 : utf8_next(p + i, len - i, &cp);
				i += stream_text(s, p + i, len - i, cp, n);
				continue;
			}
			if (run > 0)
				continue;
		}
		if (cp >= 0x80) {
			n = utf8_next(p + i, len - i, &cp);
			if (n == 0) {
				/* cut by the end of the read: wait for the rest */
				s->n_pending = len - i;
				memcpy(s->pending, p + i, s->n_pending);
				break;
			}
		}
		if (s->state == STATE_GROUND && is_graphic(cp)) {
			i += stream_text(s, p + i, len - i, cp, n);
			continue;
		}
		stream_step(s, cp);
		i += n;
	}
	stream_flush(s);
	if (s->bells) {
		unsigned n = s->bells;

		s->bells = 0;
		if (s->cfg.bell)
			s->cfg.bell(n, s->cfg.userdata);
	}
}

/* ---- session restore ---------------------------------------------------- */

void stream_get_state(struct stream *s, struct stream_state *ret)
{
	stream_flush(s);
	*ret = (struct stream_state){
	    .pen = {.attr = s->attr, .extra = s->extra},
	    .gl = s->gl,
	    .gr = s->gr,
	    .glt = (int8_t)s->glt,
	    .modes = (s->ckm ? STREAM_MODE_DECCKM : 0) | (s->kpam ? STREAM_MODE_DECKPAM : 0) |
		     (s->lnm ? STREAM_MODE_LNM : 0) | (s->keys_kpam ? STREAM_MODE_KEYS_KEYPAD : 0) |
		     (s->keys_lnm ? STREAM_MODE_KEYS_LNM : 0),
	    .mouse = s->mouse,
	    .saved = {.x = s->saved.x,
		      .y = s->saved.y,
		      .pen = {.attr = s->saved.attr, .extra = s->saved.extra},
		      .gl = s->saved.gl,
		      .gr = s->saved.gr,
		      .wrap = s->saved.wrap,
		      .origin = s->saved.origin},
	    .alt = {.x = s->alt_x, .y = s->alt_y},
	    .rep_len = (uint8_t)s->last_len,
	};
	memcpy(ret->g, s->g, sizeof(ret->g));
	memcpy(ret->rep, s->last, s->last_len * sizeof(uint32_t));
	memcpy(ret->kitty, s->kitty, sizeof(ret->kitty));
	memcpy(ret->kitty_n, s->kitty_n, sizeof(ret->kitty_n));
}

static bool pen_valid(const struct stream_pen *p)
{
	const struct tsm_screen_attr *a = &p->attr;

	return a->fccode >= -1 && a->fccode <= TSM_COLOR_FOREGROUND && a->bccode >= -1 &&
	       (a->bccode < TSM_COLOR_FOREGROUND || a->bccode == TSM_COLOR_BACKGROUND) &&
	       !a->protect && !(p->extra & ~(unsigned)(CLUSTER_DIM | CLUSTER_STRIKE | SGR_CONCEAL));
}

static bool state_valid(const struct stream_state *st)
{
	if (!pen_valid(&st->pen) || !pen_valid(&st->saved.pen))
		return false;
	for (size_t i = 0; i < 4; i++)
		if (st->g[i] > STREAM_CHARSET_DEC_SUPPLEMENTAL)
			return false;
	if (st->gl > 3 || st->gr < 1 || st->gr > 3 || st->saved.gl > 3 || st->saved.gr < 1 ||
	    st->saved.gr > 3 || (st->glt != -1 && st->glt != 2 && st->glt != 3))
		return false;
	if (st->modes & ~STREAM_MODES_ALL)
		return false;
	/* libtsm's LNM is the encoder's too (only DECSTR tells them apart) */
	if ((st->modes & STREAM_MODE_LNM) && !(st->modes & STREAM_MODE_KEYS_LNM))
		return false;
	if (st->rep_len > STREAM_REP_MAX)
		return false;
	/* one tracking mode, one encoding at most (stream_mouse_mode()) */
	if ((st->mouse & ~STREAM_MOUSE_ALL) ||
	    __builtin_popcount(st->mouse & STREAM_MOUSE_TRACKING) > 1 ||
	    __builtin_popcount(st->mouse & STREAM_MOUSE_ENCODING) > 1)
		return false;
	for (size_t i = 0; i < st->rep_len; i++)
		if (st->rep[i] > 0x10ffff || (st->rep[i] >= 0xd800 && st->rep[i] <= 0xdfff) ||
		    (i == 0 && !is_graphic(st->rep[i])))
			return false;
	for (size_t i = 0; i < 2; i++) {
		if (st->kitty_n[i] > STREAM_KITTY_DEPTH)
			return false;
		for (size_t j = 0; j < st->kitty_n[i]; j++)
			if (st->kitty[i][j] & ~STREAM_KITTY_ALL)
				return false;
	}
	return true;
}

/* SGR for libtsm that gives it the pen `a` (codes as stream_pen holds them). */
static void emit_pen(struct stream *s, const struct tsm_screen_attr *a)
{
	stream_emitf(s, "\033[0%s%s%s%s%sm", a->bold ? ";1" : "", a->italic ? ";3" : "",
		     a->underline ? ";4" : "", a->blink ? ";5" : "", a->inverse ? ";7" : "");
	if (a->fccode < 0)
		stream_emitf(s, "\033[38;2;%u;%u;%um", a->fr, a->fg, a->fb);
	else if (a->fccode < 8)
		stream_emitf(s, "\033[%dm", 30 + a->fccode);
	else if (a->fccode < 16)
		stream_emitf(s, "\033[%dm", 90 + a->fccode - 8);
	if (a->bccode < 0)
		stream_emitf(s, "\033[48;2;%u;%u;%um", a->br, a->bg, a->bb);
	else if (a->bccode < 8)
		stream_emitf(s, "\033[%dm", 40 + a->bccode);
	else if (a->bccode < 16)
		stream_emitf(s, "\033[%dm", 100 + a->bccode - 8);
}

/* LS0, LS1, LS2, LS3 into GL; LS1R, LS2R, LS3R into GR. */
static void emit_shifts(struct stream *s, unsigned gl, unsigned gr)
{
	static const char *const ls[] = {"\017", "\016", "\033n", "\033o"};
	static const char *const lsr[] = {"", "\033~", "\033}", "\033|"};

	stream_emitf(s, "%s%s", ls[gl], lsr[gr]);
}

static void emit_mode(struct stream *s, bool dec, int mode, bool set)
{
	stream_emitf(s, "\033[%s%d%c", dec ? "?" : "", mode, set ? 'h' : 'l');
}

/* The screen's flags to exactly `flags`. */
static void screen_put_flags(struct tsm_screen *screen, unsigned flags)
{
	unsigned now = tsm_screen_get_flags(screen);

	if (flags & ~now)
		tsm_screen_set_flags(screen, flags & ~now);
	if (now & ~flags)
		tsm_screen_reset_flags(screen, now & ~flags);
}

struct last_cell {
	bool empty; /* erased: no character, width 1 */
	struct tsm_screen_attr attr;
};

/* What a pending wrap is made from: the rightmost cell of row y that ends
 * at x, and each row's last cell. */
struct wrap_cells {
	unsigned y, end, width;
	bool found;
	uint32_t ch; /* 0: empty */
	unsigned x;
	struct tsm_screen_attr attr;
	struct last_cell *last; /* [height] */
	unsigned height;
};

static int read_wrap_cells(struct tsm_screen *con, uint64_t id, const uint32_t *ch, size_t len,
			   unsigned width, unsigned posx, unsigned posy,
			   const struct tsm_screen_attr *attr, tsm_age_t age, void *data)
{
	struct wrap_cells *c = data;

	/* the rightmost: a character right of a wide one that ends there too
	 * was written after it */
	if (posy == c->y && width > 0 && posx + width == c->end) {
		c->found = true;
		c->x = posx;
		c->ch = len ? ch[0] : 0;
		c->attr = *attr;
	}
	if (posx + 1 == c->width && posy < c->height)
		c->last[posy] = (struct last_cell){.empty = !len && width == 1, .attr = *attr};
	return 0;
}

/* Writes ch at (x, y), x then left after it; an empty cell (ch 0) as a
 * space, erased again, which leaves the cursor (the erase sets the screen's
 * default attribute: an SGR must follow). */
static void rewrite_cell(struct tsm_screen *screen, unsigned x, unsigned y, uint32_t ch,
			 const struct tsm_screen_attr *attr, bool wide)
{
	tsm_screen_move_to(screen, x, y);
	tsm_screen_write(screen, ch ? ch : wide ? 0x4e2d : ' ', attr);
	if (!ch) {
		tsm_screen_set_def_attr(screen, attr);
		tsm_screen_erase_chars(screen, 1);
	}
}

/* The cursor at (x, y) as libtsm's getters give it. x at the width or one
 * more (a wrap pending) only a write makes: the character of row y that
 * ends there is written again; else a space (a wide character for width +
 * 1) is written into an empty last cell, which is erased again, of row y or
 * of a row from which the cursor goes up or down to y keeping its column.
 * The caller puts the flags back afterwards. */
static void screen_put_cursor(struct tsm_screen *screen, unsigned x, unsigned y)
{
	unsigned width = tsm_screen_get_width(screen), height = tsm_screen_get_height(screen);
	struct wrap_cells c = {.y = y, .end = x, .width = width, .height = height};

	/* absolute, drawn as stored (no cursor, no inverse screen), written
	 * in place */
	tsm_screen_reset_flags(screen,
			       TSM_SCREEN_REL_ORIGIN | TSM_SCREEN_INSERT_MODE | TSM_SCREEN_INVERSE);
	if (x < width || x > width + 1 || y >= height) {
		tsm_screen_move_to(screen, x, y);
		return;
	}
	tsm_screen_set_flags(screen, TSM_SCREEN_HIDE_CURSOR);
	c.last = xcalloc(height, sizeof(*c.last));
	tsm_screen_draw(screen, read_wrap_cells, &c);
	if (c.found) {
		rewrite_cell(screen, c.x, y, c.ch, &c.attr, false);
		goto out;
	}
	for (unsigned k = 0; k <= height; k++) {
		unsigned from = k == 0 ? y : k - 1; /* row y first */

		if (k > 0 && from == y)
			continue;
		if (!c.last[from].empty)
			continue;
		rewrite_cell(screen, width - 1, from, 0, &c.last[from].attr, x > width);
		if (from > y)
			tsm_screen_move_up(screen, from - y, false);
		else if (from < y)
			tsm_screen_move_down(screen, y - from, false);
		if (tsm_screen_get_cursor_x(screen) == x && tsm_screen_get_cursor_y(screen) == y)
			goto out;
	}
	/* none: where the next character goes all the same, but unwrapped */
	tsm_screen_move_to(screen, width - 1, y);
out:
	free(c.last);
}

int stream_set_state(struct stream *s, const struct stream_state *st)
{
	struct tsm_screen *screen = s->cfg.screen;
	unsigned flags, x, y, width, height;

	if (!state_valid(st))
		return -EINVAL;
	stream_flush(s);
	flags = tsm_screen_get_flags(screen);
	x = tsm_screen_get_cursor_x(screen);
	y = tsm_screen_get_cursor_y(screen);
	width = tsm_screen_get_width(screen);
	height = tsm_screen_get_height(screen);

	/* What DECSC saves: libtsm's own DECAWM and DECOM (its vte keeps them
	 * apart from the screen's flags), the cursor (absolute: DECOM off on
	 * the screen), the shifts and the pen. Designations are not saved. */
	emit_mode(s, true, 7, st->saved.wrap);
	emit_mode(s, true, 6, st->saved.origin);
	stream_flush(s);
	tsm_screen_reset_flags(screen, TSM_SCREEN_REL_ORIGIN);
	tsm_screen_move_to(screen, MIN(st->saved.x, width - 1), MIN(st->saved.y, height - 1));
	emit_shifts(s, st->saved.gl, st->saved.gr);
	emit_pen(s, &st->saved.pen.attr);
	stream_emit(s, "\0337", 2);
	stream_flush(s);

	/* the alternate screen's saved cursor */
	tsm_screen_move_to(screen, MIN(st->alt.x, width - 1), MIN(st->alt.y, height - 1));
	emit_mode(s, true, 1048, true);
	stream_flush(s);

	/* the cursor as it was found */
	screen_put_cursor(screen, x, y);

	/* the state now; libtsm's own copies of the screen's modes as the
	 * screen has them */
	for (unsigned i = 0; i < 4; i++)
		stream_emitf(s, "\033%c%c", "()*+"[i], "BA0<"[st->g[i]]);
	emit_shifts(s, st->gl, st->gr);
	emit_pen(s, &st->pen.attr);
	emit_mode(s, true, 1, st->modes & STREAM_MODE_DECCKM);
	stream_emit(s, st->modes & STREAM_MODE_DECKPAM ? "\033=" : "\033>", 2);
	emit_mode(s, true, 66, st->modes & STREAM_MODE_KEYS_KEYPAD);
	emit_mode(s, false, 20, st->modes & STREAM_MODE_LNM);
	emit_mode(s, false, 4, flags & TSM_SCREEN_INSERT_MODE);
	emit_mode(s, true, 5, flags & TSM_SCREEN_INVERSE);
	emit_mode(s, true, 6, flags & TSM_SCREEN_REL_ORIGIN);
	emit_mode(s, true, 7, flags & TSM_SCREEN_AUTO_WRAP);
	emit_mode(s, true, 25, !(flags & TSM_SCREEN_HIDE_CURSOR));
	if (st->glt >= 0)
		stream_emit(s, st->glt == 2 ? "\033N" : "\033O", 2);
	stream_flush(s);
	/* DECSTR reset libtsm's LNM and left the encoder's */
	if ((st->modes & STREAM_MODE_KEYS_LNM) && !(st->modes & STREAM_MODE_LNM) && s->cfg.seen)
		s->cfg.seen("\033[20h", 5, s->cfg.userdata);

	/* the flags as they were found */
	screen_put_flags(screen, flags);

	/* and this stage */
	stream_string_cut(s);
	s->state = STATE_GROUND;
	s->string_esc = s->osc = false;
	s->n_pending = 0;
	s->seq_len = s->osc_len = 0;
	s->attr = st->pen.attr;
	s->extra = st->pen.extra;
	memcpy(s->g, st->g, sizeof(s->g));
	s->gl = st->gl;
	s->gr = st->gr;
	s->glt = st->glt;
	s->saved = (struct stream_saved){
	    .attr = st->saved.pen.attr,
	    .extra = st->saved.pen.extra,
	    .gl = st->saved.gl,
	    .gr = st->saved.gr,
	    .x = st->saved.x,
	    .y = st->saved.y,
	    .wrap = st->saved.wrap,
	    .origin = st->saved.origin,
	};
	s->alt_x = st->alt.x;
	s->alt_y = st->alt.y;
	s->ckm = st->modes & STREAM_MODE_DECCKM;
	s->kpam = st->modes & STREAM_MODE_DECKPAM;
	s->lnm = st->modes & STREAM_MODE_LNM;
	s->keys_kpam = st->modes & STREAM_MODE_KEYS_KEYPAD;
	s->keys_lnm = st->modes & STREAM_MODE_KEYS_LNM;
	/* libtsm 4.0.2 keeps no mouse mode: nothing to feed it */
	s->mouse = st->mouse;
	/* nor the kitty protocol's stacks */
	memcpy(s->kitty, st->kitty, sizeof(s->kitty));
	memcpy(s->kitty_n, st->kitty_n, sizeof(s->kitty_n));
	memcpy(s->last, st->rep, st->rep_len * sizeof(uint32_t));
	s->last_len = st->rep_len;
	return 0;
}

/* ---- the mouse dispatcher's view ------------------------------------------ */

uint64_t stream_bytes_out(const struct stream *s)
{
	return s->bytes_out;
}

bool stream_in_sixel(const struct stream *s)
{
	return s->sixel != NULL;
}

bool stream_synchronized(const struct stream *s)
{
	return s->sync;
}

struct stream_cursor stream_cursor(const struct stream *s)
{
	struct stream_cursor c = s->cfg.cursor;

	if (s->decscusr) {
		c.shape = (enum stream_cursor_shape)((s->decscusr - 1) / 2);
		c.blink = c.blink && s->decscusr % 2 == 1;
	}
	return c;
}

void stream_set_cell_size(struct stream *s, unsigned width, unsigned height)
{
	s->cell_w = width;
	s->cell_h = height;
}

unsigned stream_mouse_modes(const struct stream *s)
{
	return s->mouse;
}

struct tsm_screen *stream_screen(const struct stream *s)
{
	return s->cfg.screen;
}

unsigned stream_key_modes(const struct stream *s)
{
	return (s->ckm ? KEYS_MODE_CURSOR_APP : 0) | (s->keys_kpam ? KEYS_MODE_KEYPAD_APP : 0) |
	       (s->keys_lnm ? KEYS_MODE_NEWLINE : 0);
}

unsigned stream_kitty_flags(struct stream *s)
{
	unsigned scr = stream_kitty_screen(s);

	return s->kitty_n[scr] ? s->kitty[scr][s->kitty_n[scr] - 1] : 0;
}

bool stream_cursor_keys_app(const struct stream *s)
{
	return s->ckm;
}
