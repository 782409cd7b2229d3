/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * The image store: the pixels of the sixel images a session placed, and the
 * tile code points their cells hold.
 *
 * An image belongs to the cells it covers. Each cell of a placed image holds
 * a tile code point from Unicode's Supplementary Private Use Area-A
 * (U+F0000..U+FFFFD), written into libtsm's screen like a narrow character,
 * so that libtsm moves, scrolls, erases, overwrites and keeps these cells in
 * the scrollback as it does text. An image gets one code point per cell it
 * covers, consecutive and row by row (the cell in tile row r, tile column c
 * holds first + r * cols + c); the store maps a tile code point back to its
 * image and the part of it the cell shows. The stream stage (stream.h) turns
 * programs' own code points of that area into cluster stand-ins, so every
 * tile code point libtsm holds is one the store handed out.
 *
 * Memory: every image's pixels (4 bytes each) count against the session's
 * budget (image-memory=, consoled.conf(5)); an image that would go over it
 * drops the oldest images first. A dropped image's cells stay on the screen,
 * its code points stay reserved while any cell holds them, and they draw as
 * the placeholder: the cell's background, never another image's pixels.
 *
 * Code points are handed out in order until the area is used up; then a
 * sweep over libtsm's lines (tsmpeek.h, read only: both screens and the
 * scrollback) finds which are still held. Images none of whose cells are held
 * any more are freed; only code points no cell holds are handed out again.
 * A new store, and a wiped one (a new session, or one restored from a
 * snapshot whose cells may hold tile code points the store knows nothing
 * of), sweeps before it hands out its first code point.
 */
#include <libtsm.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IMAGE_FIRST 0xf0000u
#define IMAGE_LAST 0xffffdu
#define IMAGE_TILES (IMAGE_LAST - IMAGE_FIRST + 1) /* 65534 */

static inline bool image_is_tile(uint32_t cp)
{
	return cp >= IMAGE_FIRST && cp <= IMAGE_LAST;
}

struct image_store;

/* Fills out (cell_w * cell_h values, 0xAARRGGBB as in sixel.h) with what the
 * tile code point cp shows in a cell of cell_w x cell_h pixels (the
 * renderer's cell now; an image placed with another cell size is scaled to
 * it, nearest neighbour). false: cp is no tile of an image the store holds
 * (dropped, or from before a restore): the caller draws the placeholder, the
 * cell's background. */
bool image_tile_pixels(const struct image_store *s, uint32_t cp, unsigned cell_w, unsigned cell_h,
		       uint32_t *out);
/* Changes whenever what some tile code point shows changes (an image
 * dropped, a code point handed out again, the store wiped): a renderer that
 * caches tiles forgets them and redraws tile cells. */
uint64_t image_store_generation(const struct image_store *s);

/* budget: the bytes all images' pixels may take (image-memory=). */
struct image_store *image_store_new(size_t budget);
void image_store_free(struct image_store *s);
/* Drops every image and forgets which code points were handed out; the next
 * placement sweeps first (a new session: nothing of one user's images
 * reaches the next). */
void image_store_wipe(struct image_store *s);

size_t image_store_budget(const struct image_store *s);
/* Bytes the images' pixels take now. */
size_t image_store_memory(const struct image_store *s);
/* Drops the oldest images until their memory plus `extra` fits the budget.
 * Returns whether it fits (false: even an empty store would not hold
 * `extra`). */
bool image_store_make_room(struct image_store *s, size_t extra);

/* Places an image of width x height pixels (0xAARRGGBB, row-major; the store
 * takes `pixels`, freed with free(), also on failure), drawn for cells of
 * cell_w x cell_h pixels, covering cols x rows cells (cols may be fewer than
 * the image spans: the columns clipped at the screen's right edge get no code
 * point and their pixels are dropped). `screen` is swept when the code points
 * run out (NULL: no sweep). Drops the oldest images to keep the budget.
 * Returns 0 and the first of cols * rows consecutive code points; -ENOSPC:
 * no run of that many free code points even after a sweep; -E2BIG: the
 * image alone is over the budget; -EINVAL. */
int image_store_add(struct image_store *s, uint32_t *pixels, unsigned width, unsigned height,
		    unsigned cell_w, unsigned cell_h, unsigned cols, unsigned rows,
		    struct tsm_screen *screen, uint32_t *ret_first);

/* Images held, and code points reserved (held by some cell at the last sweep
 * or handed out since): for the tests and the log. */
size_t image_store_count(const struct image_store *s);
size_t image_store_reserved(const struct image_store *s);
