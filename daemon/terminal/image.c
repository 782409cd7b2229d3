/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "image"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "tsmpeek.h"
#include "../util/log.h"
#include "../util/util.h"

#define BITMAP_WORDS ((IMAGE_TILES + 63) / 64)
/* A sweep that leaves fewer code points free than this ... */
#define SWEEP_STARVED (IMAGE_TILES / 16)
/* ... allows the next one only this much later: a sweep reads every cell of
 * the scrollback (100000 lines of 240 columns: 24 million cells, tens of
 * ms), and a flood of small images while cells hold nearly every code point
 * would otherwise sweep once per image. Meanwhile images are not placed. */
#define SWEEP_STARVED_USEC (100 * 1000)

struct image {
	uint64_t serial; /* placement order: the budget drops the lowest first */
	uint32_t first;	 /* its code points: first .. first + cols * rows - 1 */
	unsigned cols, rows;
	unsigned width, height;	 /* pixels kept (clipped columns dropped) */
	unsigned cell_w, cell_h; /* the cell it was placed for */
	uint32_t *pixels;	 /* width * height, 0xAARRGGBB */
};

struct image_store {
	/* sorted by first, so a code point finds its image by bisection */
	struct image *images;
	size_t n, cap;
	size_t budget, memory;
	uint64_t serial, generation;
	/* code points handed out since the last sweep, or held by some cell
	 * at it: never handed out until a sweep finds them free */
	uint64_t *reserved;
	size_t n_reserved;
	uint32_t next;	 /* where the next search for free code points starts */
	bool need_sweep; /* wiped or new: cells may hold code points unknown here */
	bool sweep_warned;
	uint64_t sweep_after; /* no sweep before (now_usec()): the last one starved */
};

static size_t image_bytes(const struct image *im)
{
	return (size_t)im->width * im->height * sizeof(uint32_t);
}

struct image_store *image_store_new(size_t budget)
{
	struct image_store *s = xcalloc(1, sizeof(*s));

	s->budget = budget;
	s->next = IMAGE_FIRST;
	s->need_sweep = true;
	return s;
}

/* Frees an image's pixels (its entry is the caller's to remove). */
static void image_release(struct image_store *s, struct image *im)
{
	s->memory -= image_bytes(im);
	free(im->pixels);
}

static void image_drop(struct image_store *s, size_t i)
{
	image_release(s, &s->images[i]);
	memmove(s->images + i, s->images + i + 1, (s->n - i - 1) * sizeof(*s->images));
	s->n--;
	s->generation++;
}

void image_store_wipe(struct image_store *s)
{
	while (s->n)
		image_drop(s, s->n - 1);
	free(s->reserved);
	s->reserved = NULL;
	s->n_reserved = 0;
	s->next = IMAGE_FIRST;
	s->need_sweep = true;
	s->sweep_after = 0;
	s->generation++;
}

void image_store_free(struct image_store *s)
{
	if (!s)
		return;
	image_store_wipe(s);
	free(s->images);
	free(s);
}

uint64_t image_store_generation(const struct image_store *s)
{
	return s ? s->generation : 0;
}

size_t image_store_budget(const struct image_store *s)
{
	return s->budget;
}

size_t image_store_memory(const struct image_store *s)
{
	return s->memory;
}

size_t image_store_count(const struct image_store *s)
{
	return s->n;
}

size_t image_store_reserved(const struct image_store *s)
{
	return s->n_reserved;
}

struct age {
	uint64_t serial;
	size_t bytes;
};

static int age_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct age *)a)->serial, y = ((const struct age *)b)->serial;

	return x < y ? -1 : x > y;
}

bool image_store_make_room(struct image_store *s, size_t extra)
{
	struct age *ages;
	uint64_t cut = 0;
	size_t need, freed = 0, kept = 0;

	if (extra > s->budget)
		return false;
	if (s->memory + extra <= s->budget || !s->n)
		return s->memory + extra <= s->budget;
	/* the oldest images that free enough, found once and dropped in one
	 * pass (one at a time, many small images would cost n^2) */
	need = s->memory + extra - s->budget;
	ages = xmalloc(s->n * sizeof(*ages));
	for (size_t i = 0; i < s->n; i++)
		ages[i] = (struct age){s->images[i].serial, image_bytes(&s->images[i])};
	qsort(ages, s->n, sizeof(*ages), age_cmp);
	for (size_t k = 0; k < s->n && freed < need; k++) {
		freed += ages[k].bytes;
		cut = ages[k].serial;
	}
	free(ages);
	/* their code points stay reserved while cells hold them */
	for (size_t i = 0; i < s->n; i++) {
		struct image *im = &s->images[i];

		if (im->serial > cut)
			s->images[kept++] = *im;
		else
			image_release(s, im);
	}
	s->n = kept;
	s->generation++;
	return s->memory + extra <= s->budget;
}

/* The image whose code points hold cp, or NULL. */
static const struct image *image_find(const struct image_store *s, uint32_t cp)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct image *im = &s->images[mid];

		if (cp < im->first)
			hi = mid;
		else if (cp - im->first >= (uint32_t)im->cols * im->rows)
			lo = mid + 1;
		else
			return im;
	}
	return NULL;
}

bool image_tile_pixels(const struct image_store *s, uint32_t cp, unsigned cell_w, unsigned cell_h,
		       uint32_t *out)
{
	const struct image *im;
	unsigned idx, tx, ty;

	if (!s || !image_is_tile(cp) || !cell_w || !cell_h)
		return false;
	im = image_find(s, cp);
	if (!im)
		return false;
	idx = cp - im->first;
	tx = idx % im->cols * im->cell_w;
	ty = idx / im->cols * im->cell_h;
	for (unsigned y = 0; y < cell_h; y++) {
		/* nearest neighbour from the cell it was placed for */
		unsigned sy = ty + (unsigned)((uint64_t)y * im->cell_h / cell_h);
		uint32_t *o = out + (size_t)y * cell_w;

		if (sy >= im->height) {
			memset(o, 0, cell_w * sizeof(*o));
			continue;
		}
		for (unsigned x = 0; x < cell_w; x++) {
			unsigned sx = tx + (unsigned)((uint64_t)x * im->cell_w / cell_w);

			o[x] = sx < im->width ? im->pixels[(size_t)sy * im->width + sx] : 0;
		}
	}
	return true;
}

static bool bit_get(const uint64_t *b, uint32_t cp)
{
	uint32_t i = cp - IMAGE_FIRST;

	return b[i / 64] >> (i % 64) & 1;
}

static void bit_set(uint64_t *b, uint32_t cp)
{
	uint32_t i = cp - IMAGE_FIRST;

	b[i / 64] |= 1ull << (i % 64);
}

static void mark_line(uint64_t *held, const struct tsmpeek_line *line)
{
	for (unsigned x = 0; x < line->size; x++) {
		uint32_t cp = line->cells[x].ch;

		if (image_is_tile(cp))
			bit_set(held, cp);
	}
}

/* Which code points cells hold now, on both screens and in the scrollback:
 * false if libtsm's layout is not the one tsmpeek.h reads. */
static bool image_sweep_screen(struct tsm_screen *screen, uint64_t *held)
{
	const struct tsmpeek_screen *p = (const struct tsmpeek_screen *)screen;

	if (!screen || !tsmpeek_check(screen))
		return false;
	for (unsigned y = 0; y < p->line_num; y++) {
		if (p->main_lines && p->main_lines[y])
			mark_line(held, p->main_lines[y]);
		if (p->alt_lines && p->alt_lines[y])
			mark_line(held, p->alt_lines[y]);
	}
	for (const struct tsmpeek_line *l = p->sb_first; l; l = l->next)
		mark_line(held, l);
	return true;
}

/* The sweep: what cells hold becomes what is reserved; images none of whose
 * code points a cell holds are freed (nothing can show them again). */
static bool image_sweep(struct image_store *s, struct tsm_screen *screen)
{
	uint64_t *held = xcalloc(BITMAP_WORDS, sizeof(*held));

	if (!image_sweep_screen(screen, held)) {
		free(held);
		if (!s->sweep_warned)
			log_warning("Cannot see which image tiles the screen holds: no image "
				    "code point is handed out again this session.");
		s->sweep_warned = true;
		return false;
	}
	/* in one pass: many images may go at once */
	size_t kept = 0;

	for (size_t i = 0; i < s->n; i++) {
		struct image *im = &s->images[i];
		bool any = false;

		for (uint32_t k = 0; k < (uint32_t)im->cols * im->rows && !any; k++)
			any = bit_get(held, im->first + k);
		if (any)
			s->images[kept++] = *im;
		else
			image_release(s, im);
	}
	s->n = kept;
	free(s->reserved);
	s->reserved = held;
	s->n_reserved = 0;
	for (size_t w = 0; w < BITMAP_WORDS; w++)
		s->n_reserved += (size_t)__builtin_popcountll(held[w]);
	s->need_sweep = false;
	s->sweep_after =
	    IMAGE_TILES - s->n_reserved < SWEEP_STARVED ? now_usec() + SWEEP_STARVED_USEC : 0;
	/* a renderer may cache what freed code points showed */
	s->generation++;
	return true;
}

/* A run of n free code points from `from` up to IMAGE_LAST, or 0. */
static uint32_t image_find_run(const struct image_store *s, uint32_t from, uint32_t n)
{
	uint32_t run = 0;

	for (uint32_t cp = from; cp <= IMAGE_LAST; cp++) {
		run = bit_get(s->reserved, cp) ? 0 : run + 1;
		if (run == n)
			return cp - n + 1;
	}
	return 0;
}

/* n consecutive code points no cell holds: in order from the last ones
 * handed out, then from the start after a sweep. 0: none. */
static uint32_t image_alloc(struct image_store *s, uint32_t n, struct tsm_screen *screen)
{
	uint32_t first = 0;

	if (n == 0 || n > IMAGE_TILES)
		return 0;
	if (s->need_sweep && !image_sweep(s, screen))
		return 0;
	if (!s->reserved)
		s->reserved = xcalloc(BITMAP_WORDS, sizeof(*s->reserved));
	/* from the last ones handed out on, then below them: everything handed
	 * out since the last sweep is reserved */
	first = image_find_run(s, s->next, n);
	if (!first)
		first = image_find_run(s, IMAGE_FIRST, n);
	if (!first && now_usec() >= s->sweep_after && image_sweep(s, screen)) {
		first = image_find_run(s, IMAGE_FIRST, n);
		/* cells hold too much, or what is free is in pieces too short:
		 * the next sweep waits too (each reads every line) */
		if (!first)
			s->sweep_after = now_usec() + SWEEP_STARVED_USEC;
	}
	if (!first)
		return 0;
	for (uint32_t k = 0; k < n; k++)
		bit_set(s->reserved, first + k);
	s->n_reserved += n;
	s->next = first + n > IMAGE_LAST ? IMAGE_FIRST : first + n;
	return first;
}

int image_store_add(struct image_store *s, uint32_t *pixels, unsigned width, unsigned height,
		    unsigned cell_w, unsigned cell_h, unsigned cols, unsigned rows,
		    struct tsm_screen *screen, uint32_t *ret_first)
{
	struct image im = {0};
	size_t at, bytes;
	uint32_t first;

	if (!pixels || !width || !height || !cell_w || !cell_h || !cols || !rows ||
	    (uint64_t)cols * rows > IMAGE_TILES) {
		free(pixels);
		return -EINVAL;
	}
	/* columns clipped at the right edge: their pixels are dropped */
	if ((uint64_t)cols * cell_w < width) {
		unsigned kept = cols * cell_w;

		for (unsigned y = 1; y < height; y++)
			memmove(pixels + (size_t)y * kept, pixels + (size_t)y * width,
				kept * sizeof(*pixels));
		width = kept;
	}
	if ((uint64_t)rows * cell_h < height)
		height = rows * cell_h;
	bytes = (size_t)width * height * sizeof(*pixels);
	{
		/* what was cut goes back, so that the budget counts what is kept */
		uint32_t *kept = realloc(pixels, bytes);

		if (kept)
			pixels = kept;
	}
	if (!image_store_make_room(s, bytes)) {
		free(pixels);
		return -E2BIG;
	}
	first = image_alloc(s, cols * rows, screen);
	if (!first) {
		free(pixels);
		return -ENOSPC;
	}
	im = (struct image){
	    .serial = ++s->serial,
	    .first = first,
	    .cols = cols,
	    .rows = rows,
	    .width = width,
	    .height = height,
	    .cell_w = cell_w,
	    .cell_h = cell_h,
	    .pixels = pixels,
	};
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		s->images = xrealloc(s->images, s->cap * sizeof(*s->images));
	}
	for (at = s->n; at > 0 && s->images[at - 1].first > first; at--)
		;
	memmove(s->images + at + 1, s->images + at, (s->n - at) * sizeof(*s->images));
	s->images[at] = im;
	s->n++;
	s->memory += bytes;
	*ret_first = first;
	return 0;
}
