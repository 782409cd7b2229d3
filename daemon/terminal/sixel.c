/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sixel.h"
#include "../util/util.h"

/* A parameter saturates here: far above any size or colour that matters,
 * far below where `p * 10 + 9` could overflow an unsigned. */
#define PARAM_MAX 100000000u
#define PARAMS 5 /* # Pc;Pu;Px;Py;Pz has the most */

/* The pixel buffer starts this wide (or max_width if smaller) and doubles. */
#define START_WIDTH 64u

#define OPAQUE 0xff000000u

enum sixel_state {
	SIXEL_DATA,   /* sixel bytes, $ - and the introducers */
	SIXEL_REPEAT, /* ! Pn, waiting for the sixel to repeat */
	SIXEL_COLOR,  /* # Pc;Pu;Px;Py;Pz */
	SIXEL_RASTER, /* " Pan;Pad;Ph;Pv */
};

struct sixel_decoder {
	struct sixel_palette *palette; /* the caller's or `own` */
	struct sixel_palette own;
	bool transparent; /* P2 = 1 */
	uint32_t background;
	unsigned max_w, max_h;

	enum sixel_state state;
	unsigned params[PARAMS];
	unsigned nparams; /* parameters begun, the one being read included */

	unsigned reg;	 /* the selected register */
	uint32_t color;	 /* its colour as drawn: OPAQUE | rgb, taken when selected or defined */
	unsigned col;	 /* <= max_w: anything further right is clipped alike */
	unsigned row;	 /* the band's top pixel row, <= max_h likewise */
	unsigned used_w; /* columns and rows that hold a drawn pixel, from 0 */
	unsigned used_h;
	unsigned decl_w, decl_h; /* raster attributes' Ph, Pv, clipped */
	bool data;		 /* a sixel byte came (declared sizes count from then on) */
	bool nomem;

	/* Pixels drawn so far, cap_w x cap_h with a stride of cap_w: OPAQUE |
	 * rgb where drawn, 0 where not. It only ever covers what was drawn
	 * (rounded up to the next doubling), never a declared size. */
	uint32_t *px;
	unsigned cap_w, cap_h;
};

static uint32_t percent_to_rgb(unsigned r, unsigned g, unsigned b)
{
	/* 0..100 to 0..255, rounded, as xterm and libsixel convert them */
	r = (r * 255 + 50) / 100;
	g = (g * 255 + 50) / 100;
	b = (b * 255 + 50) / 100;
	return r << 16 | g << 8 | b;
}

void sixel_palette_init(struct sixel_palette *p)
{
	/* The VT340's registers after a reset, in percent (xterm's table). */
	static const unsigned char vt340[16][3] = {
	    {0, 0, 0},	  {20, 20, 80}, {80, 13, 13}, {20, 80, 20}, {80, 20, 80}, {20, 80, 80},
	    {80, 80, 20}, {53, 53, 53}, {26, 26, 26}, {33, 33, 60}, {60, 26, 26}, {33, 60, 33},
	    {60, 33, 60}, {33, 60, 60}, {60, 60, 33}, {80, 80, 80},
	};

	memset(p, 0, sizeof(*p));
	for (unsigned i = 0; i < 16; i++)
		p->rgb[i] = percent_to_rgb(vt340[i][0], vt340[i][1], vt340[i][2]);
}

/* HLS as the VT340 defines it: the hue circle turned so that 0 degrees is
 * blue, 120 red and 240 green; lightness and saturation in percent. The
 * conversion is the usual continuous one (xterm's own rounds every hue to
 * the nearest of six), rounded to whole percent as the registers hold them. */
static uint32_t hls_to_rgb(unsigned h, unsigned l, unsigned s)
{
	double lv = l / 100.0, sv = s / 100.0;
	double c = (1.0 - (2.0 * lv > 1.0 ? 2.0 * lv - 1.0 : 1.0 - 2.0 * lv)) * sv;
	double hh = ((h + 240) % 360) / 60.0; /* the usual hue (red 0), in sixths */
	int sector = (int)hh;
	double frac = hh - sector;
	double x = c * (sector & 1 ? 1.0 - frac : frac);
	double m = lv - c / 2.0, rgb[3];

	switch (sector) {
	case 0:
		rgb[0] = c, rgb[1] = x, rgb[2] = 0;
		break;
	case 1:
		rgb[0] = x, rgb[1] = c, rgb[2] = 0;
		break;
	case 2:
		rgb[0] = 0, rgb[1] = c, rgb[2] = x;
		break;
	case 3:
		rgb[0] = 0, rgb[1] = x, rgb[2] = c;
		break;
	case 4:
		rgb[0] = x, rgb[1] = 0, rgb[2] = c;
		break;
	default:
		rgb[0] = c, rgb[1] = 0, rgb[2] = x;
		break;
	}
	unsigned pct[3];
	for (int i = 0; i < 3; i++) {
		double v = (rgb[i] + m) * 100.0 + 0.5;
		pct[i] = v < 0 ? 0 : v > 100 ? 100 : (unsigned)v;
	}
	return percent_to_rgb(pct[0], pct[1], pct[2]);
}

struct sixel_decoder *sixel_decoder_new(unsigned p1, unsigned p2, uint32_t background,
					unsigned max_width, unsigned max_height,
					struct sixel_palette *palette)
{
	struct sixel_decoder *d = xcalloc(1, sizeof(*d));

	(void)p1; /* the aspect ratio: pixels are drawn square, as encoders mean them */
	d->transparent = p2 == 1;
	d->background = background & 0xffffffu;
	d->max_w = max_width;
	d->max_h = max_height;
	if (palette) {
		d->palette = palette;
	} else {
		sixel_palette_init(&d->own);
		d->palette = &d->own;
	}
	/* xterm starts with register 3 selected (the VT340's green) */
	d->reg = 3;
	d->color = OPAQUE | d->palette->rgb[d->reg];
	d->state = SIXEL_DATA;
	return d;
}

void sixel_decoder_free(struct sixel_decoder *d)
{
	if (!d)
		return;
	free(d->px);
	free(d);
}

size_t sixel_decoder_memory(const struct sixel_decoder *d)
{
	/* cap_w * cap_h * 4 fit in size_t: grow() checked it */
	return sizeof(*d) + (size_t)d->cap_w * d->cap_h * sizeof(uint32_t);
}

/* Makes the buffer hold column x and row y (both inside max_w x max_h):
 * each dimension at least doubles when it grows, so the copies add up to a
 * small multiple of the final size. false: out of memory (remembered). */
static bool grow(struct sixel_decoder *d, unsigned x, unsigned y)
{
	unsigned w = d->cap_w, h = d->cap_h;
	size_t bytes;
	uint32_t *px;

	if (d->nomem)
		return false;
	if (x >= w) {
		w = w ? w : (START_WIDTH < d->max_w ? START_WIDTH : d->max_w);
		while (w <= x)
			w = w > d->max_w / 2 ? d->max_w : w * 2;
	}
	if (y >= h) {
		h = h ? h : 6;
		while (h <= y)
			h = h > d->max_h / 2 ? d->max_h : h * 2;
		if (h > d->max_h)
			h = d->max_h;
	}
	if (__builtin_mul_overflow((size_t)w, (size_t)h, &bytes) ||
	    __builtin_mul_overflow(bytes, sizeof(uint32_t), &bytes))
		goto nomem;
	if (w == d->cap_w) {
		/* same stride: the new rows go below */
		px = realloc(d->px, bytes);
		if (!px)
			goto nomem;
		memset(px + (size_t)w * d->cap_h, 0, (size_t)w * (h - d->cap_h) * sizeof(uint32_t));
	} else {
		px = calloc((size_t)w * h, sizeof(uint32_t));
		if (!px)
			goto nomem;
		for (unsigned r = 0; r < d->cap_h; r++)
			memcpy(px + (size_t)r * w, d->px + (size_t)r * d->cap_w,
			       (size_t)d->cap_w * sizeof(uint32_t));
		free(d->px);
	}
	d->px = px;
	d->cap_w = w;
	d->cap_h = h;
	return true;
nomem:
	d->nomem = true;
	free(d->px);
	d->px = NULL;
	d->cap_w = d->cap_h = 0;
	return false;
}

/* Draws `bits` (a sixel, not 0) in `n` columns from d->col, clipped. */
static void draw(struct sixel_decoder *d, unsigned bits, unsigned n)
{
	unsigned x = d->col, y = d->row, last_y = 0;
	bool any = false;

	d->data = true;
	if (x >= d->max_w || y >= d->max_h)
		return;
	if (n > d->max_w - x)
		n = d->max_w - x;
	for (unsigned i = 0; i < 6; i++)
		if (bits & 1u << i && y + i < d->max_h)
			last_y = y + i, any = true;
	if (!any) /* every set bit below max_h */
		return;
	if ((x + n > d->cap_w || last_y >= d->cap_h) && !grow(d, x + n - 1, last_y))
		return;

	uint32_t *p = d->px + (size_t)y * d->cap_w + x;
	for (unsigned i = 0; i < 6 && y + i <= last_y; i++, p += d->cap_w) {
		if (!(bits & 1u << i))
			continue;
		for (unsigned k = 0; k < n; k++)
			p[k] = d->color;
	}
	if (x + n > d->used_w)
		d->used_w = x + n;
	if (last_y + 1 > d->used_h)
		d->used_h = last_y + 1;
}

/* Moves right by n columns; anything past max_w is the same clipped column. */
static void advance(struct sixel_decoder *d, unsigned n)
{
	d->col = n > d->max_w - d->col ? d->max_w : d->col + n;
}

static void select_register(struct sixel_decoder *d, unsigned reg)
{
	/* xterm (and the VT340) wrap register numbers past the last */
	d->reg = reg % SIXEL_REGISTERS;
	d->color = OPAQUE | d->palette->rgb[d->reg];
}

/* The end of a # introducer: select, or define and select. */
static void color_end(struct sixel_decoder *d)
{
	const unsigned *p = d->params;

	select_register(d, p[0]);
	if (d->nparams < PARAMS)
		return; /* # Pc alone selects; fewer than five define nothing */
	if (p[1] == 1) {
		if (p[2] > 360 || p[3] > 100 || p[4] > 100)
			return; /* out of range: xterm defines nothing */
		d->palette->rgb[d->reg] = hls_to_rgb(p[2], p[3], p[4]);
	} else if (p[1] == 2) {
		if (p[2] > 100 || p[3] > 100 || p[4] > 100)
			return;
		d->palette->rgb[d->reg] = percent_to_rgb(p[2], p[3], p[4]);
	} else {
		return; /* no such colour space */
	}
	d->color = OPAQUE | d->palette->rgb[d->reg];
}

/* The end of a " introducer: only the sizes matter, kept clipped (the pixel
 * aspect ratio Pan;Pad is not applied: pixels are square). Nothing is
 * allocated from them: they only pad the image at the end, once data came. */
static void raster_end(struct sixel_decoder *d)
{
	unsigned ph = d->params[2], pv = d->params[3];

	if (d->nparams < 4)
		return;
	if (ph > d->max_w)
		ph = d->max_w;
	if (pv > d->max_h)
		pv = d->max_h;
	if (ph > d->decl_w)
		d->decl_w = ph;
	if (pv > d->decl_h)
		d->decl_h = pv;
}

static void params_start(struct sixel_decoder *d, enum sixel_state state)
{
	d->state = state;
	memset(d->params, 0, sizeof(d->params));
	d->nparams = 1;
}

/* One byte in the data state. */
static void data_byte(struct sixel_decoder *d, unsigned char c)
{
	if (c >= 0x3f && c <= 0x7e) {
		if (c > 0x3f)
			draw(d, c - 0x3fu, 1);
		else
			d->data = true;
		advance(d, 1);
		return;
	}
	switch (c) {
	case '$':
		d->col = 0;
		break;
	case '-':
		d->col = 0;
		d->row = d->row + 6 > d->max_h ? d->max_h : d->row + 6;
		break;
	case '!':
		params_start(d, SIXEL_REPEAT);
		break;
	case '#':
		params_start(d, SIXEL_COLOR);
		break;
	case '"':
		params_start(d, SIXEL_RASTER);
		break;
	default:
		break; /* anything else is skipped */
	}
}

/* One byte after an introducer. false: it ended the introducer and is
 * itself data (the caller processes it as such). */
static bool param_byte(struct sixel_decoder *d, unsigned char c)
{
	if (c >= '0' && c <= '9') {
		unsigned *p = &d->params[d->nparams - 1];
		if (d->nparams <= PARAMS)
			*p = *p >= PARAM_MAX ? PARAM_MAX : *p * 10 + (c - '0');
		return true;
	}
	if (c == ' ' || c == '\r' || c == '\n')
		return true; /* xterm skips these inside parameters */
	if (c == ';' && d->state != SIXEL_REPEAT) {
		if (d->nparams < PARAMS + 1)
			d->nparams++;
		return true;
	}
	switch (d->state) {
	case SIXEL_REPEAT:
		d->state = SIXEL_DATA;
		if (c >= 0x3f && c <= 0x7e) {
			/* a count of 0 or none is 1, as on the VT340 */
			unsigned n = d->params[0] ? d->params[0] : 1;
			if (c > 0x3f)
				draw(d, c - 0x3fu, n);
			else
				d->data = true;
			advance(d, n);
			return true;
		}
		return false; /* the repeat is dropped; the byte counts */
	case SIXEL_COLOR:
		color_end(d); /* "#" with no digits selects register 0, as in xterm */
		break;
	case SIXEL_RASTER:
		raster_end(d);
		break;
	case SIXEL_DATA:
		break;
	}
	d->state = SIXEL_DATA;
	return false;
}

/* A run of sixels wholly inside the buffer (not clipped, no growth): the
 * common case, kept short. Returns the bytes taken (0: the first is no
 * sixel, or does not fit). */
static size_t draw_run(struct sixel_decoder *d, const unsigned char *s, size_t len)
{
	size_t stride = d->cap_w, k, last = 0;
	uint32_t *p, color = d->color;
	unsigned all = 0;

	if (d->row + 6 > d->cap_h || d->col >= d->cap_w)
		return 0;
	p = d->px + (size_t)d->row * stride + d->col;
	if (len > d->cap_w - d->col)
		len = d->cap_w - d->col;
	for (k = 0; k < len; k++, p++) {
		unsigned bits = s[k] - 0x3fu;
		if (bits > 0x3f)
			break; /* not 0x3f..0x7e */
		if (!bits)
			continue;
		all |= bits;
		last = k + 1;
		if (bits & 1)
			p[0] = color;
		if (bits & 2)
			p[stride] = color;
		if (bits & 4)
			p[2 * stride] = color;
		if (bits & 8)
			p[3 * stride] = color;
		if (bits & 16)
			p[4 * stride] = color;
		if (bits & 32)
			p[5 * stride] = color;
	}
	if (!k)
		return 0;
	d->data = true;
	if (all) {
		unsigned bottom = d->row + 32 - (unsigned)__builtin_clz(all);
		if (d->col + last > d->used_w)
			d->used_w = d->col + (unsigned)last;
		if (bottom > d->used_h)
			d->used_h = bottom;
	}
	d->col += (unsigned)k;
	return k;
}

void sixel_decoder_feed(struct sixel_decoder *d, const char *data, size_t len)
{
	const unsigned char *s = (const unsigned char *)data, *end = s + len;

	while (s < end) {
		if (d->state != SIXEL_DATA) {
			if (param_byte(d, *s))
				s++;
			continue;
		}
		size_t n = draw_run(d, s, (size_t)(end - s));
		if (n)
			s += n;
		else
			data_byte(d, *s++);
	}
}

int sixel_decoder_finish(struct sixel_decoder *d, struct sixel_image *ret)
{
	unsigned w = d->used_w, h = d->used_h;
	uint32_t fill = d->transparent ? 0 : OPAQUE | d->background;
	uint32_t *out;

	if (d->nomem)
		return -ENOMEM;
	if (d->data) {
		/* declared sizes pad the image (clipped when declared) */
		if (d->decl_w > w)
			w = d->decl_w;
		if (d->decl_h > h)
			h = d->decl_h;
	}
	if (!w || !h)
		return -ENODATA;
	/* w <= max_w, h <= max_h; the product is checked all the same */
	size_t n;
	if (__builtin_mul_overflow((size_t)w, (size_t)h, &n) || n > SIZE_MAX / sizeof(uint32_t))
		return -ENOMEM;
	if (d->px && d->cap_w == w) {
		/* the buffer has the image's stride: turned into it in place */
		out = realloc(d->px, n * sizeof(uint32_t));
		if (!out)
			return -ENOMEM;
		d->px = NULL;
		unsigned rows = h < d->cap_h ? h : d->cap_h;
		for (size_t i = 0; i < (size_t)w * rows; i++)
			if (!out[i])
				out[i] = fill;
		for (size_t i = (size_t)w * rows; i < n; i++)
			out[i] = fill;
	} else {
		out = malloc(n * sizeof(uint32_t));
		if (!out)
			return -ENOMEM;
		for (unsigned y = 0; y < h; y++) {
			uint32_t *o = out + (size_t)y * w;
			unsigned have = 0;
			if (y < d->cap_h) {
				const uint32_t *p = d->px + (size_t)y * d->cap_w;
				have = w < d->cap_w ? w : d->cap_w;
				for (unsigned x = 0; x < have; x++)
					o[x] = p[x] ? p[x] : fill;
			}
			for (unsigned x = have; x < w; x++)
				o[x] = fill;
		}
	}
	free(d->px);
	d->px = NULL;
	d->cap_w = d->cap_h = 0;
	d->nomem = true; /* spent */
	ret->width = w;
	ret->height = h;
	ret->pixels = out;
	return 0;
}

void sixel_image_free(struct sixel_image *img)
{
	if (!img)
		return;
	free(img->pixels);
	memset(img, 0, sizeof(*img));
}
