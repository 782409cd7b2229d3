/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "render"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "move.h"
#include "overlay.h"
#include "plan.h"
#include "render.h"
#include "rotate.h"
#include "scroll.h"
#include "../devices/backend.h"
#include "../terminal/cluster.h"
#include "../terminal/tsmpeek.h"
#include "../terminal/image.h"
#include "../util/log.h"
#include "../util/util.h"

/* Direct-mapped cache of expanded glyphs; a console screen uses far fewer
 * (glyph, fg, bg) triples than this at a time. */
#define GLYPH_CACHE_SLOTS 2048u

/* Shorter blank stretches are cheaper to draw than to hand to a blitter. */
#define FILL_MIN_CELLS 8u

/*
 * A cell's attr: the font style (enum font_style bits: bold, italic and
 * underline only for scalable fonts, as a PSF font keeps fbcon's look, where
 * they are colours; strikethrough for both) and how the cell shows its
 * cluster.
 * A wide cluster covers two cells: the first is CELL_WIDE, the second
 * CELL_RIGHT, both with the cluster's glyph and colours, each drawing its
 * half. A glyph that is a stand-in for a base character with combining
 * marks (cluster.h) is drawn as that sequence.
 */
#define CELL_STYLE_MASK 0xffu
#define CELL_WIDE (1u << 8)
#define CELL_RIGHT (1u << 9)
/* fbcon's attributes at depth 1 (bitblit.c update_attr()): a bitmap glyph
 * smeared one pixel to the right (bold, and italic, which vt.c's
 * build_attr() stores in the same bit without colours), and underlined in
 * its last rows. */
#define CELL_MONO_BOLD (1u << 10)
#define CELL_MONO_UNDERLINE (1u << 11)
/* The cursor drawn over the cell (render_set_cursor()); a block is the
 * cell's colours swapped, as libtsm gives it. */
#define CELL_CURSOR_UNDERLINE (1u << 12)
#define CELL_CURSOR_BAR (1u << 13)
/* A tile of an image (image.h): its pixels come from the image store,
 * converted to the framebuffer's format; transparent ones show bg. */
#define CELL_TILE (1u << 14)

/* 8 bpp: RGB colours already mapped to a colour map slot in this frame
 * (direct-mapped; a sixel image has at most 1024 colours). */
#define NEAREST_MEMO_SLOTS 1024u

struct glyph_slot {
	bool used;
	/* Its pixels in glyph_pixels, given out in the order slots are first
	 * used: the glyphs on screen lie together and touch as few pages as
	 * they fill, not one page each wherever the hash put their slot. */
	uint16_t block;
	struct cell key;
};

/* What the renderer's buffers were laid out for: when the device's mode
 * differs (a driver that adjusted consoled's mode on re-acquire, later a
 * handover or rotation), everything is laid out again. */
struct render_layout {
	unsigned xres, yres, line_length;
	enum rotation rotation;
	unsigned cell_w, cell_h;
	unsigned max_cols, max_rows; /* render_set_grid_max() */
	struct pixel_format format;
};

struct render {
	struct fbdev *fb;
	struct render_layout layout;
	struct fontset *fonts;
	const struct palette *palette;
	struct scroller *scroller; /* NULL: redraw only */
	enum rotation rotation;	   /* rotate.h: what is drawn is logical, turned on writing */
	unsigned lw, lh;	   /* the logical screen in pixels */
	unsigned cols, rows;
	unsigned max_cols, max_rows; /* the grid's cap (render_set_grid_max()); 0: none */
	unsigned cell_w, cell_h;     /* pixels */
	unsigned cell_bytes;	     /* bytes of one glyph line: cell_w * bytes per pixel */
	bool scalable;		     /* FreeType: styles are drawn by the font */
	bool space_blank;	     /* a space draws no pixel: blank runs can be filled */
	const struct cluster_table *clusters;	  /* NULL: no stand-ins */
	const struct image_store *images;	  /* NULL: tiles draw as their background */
	uint64_t images_generation;		  /* the store's when tiles were last cached */
	uint32_t *tile;				  /* one tile's pixels, cell_w * cell_h */
	uint32_t nearest_key[NEAREST_MEMO_SLOTS]; /* 8 bpp: 1 << 24 | RGB, 0 unused */
	uint8_t nearest_slot[NEAREST_MEMO_SLOTS];

	/* The last attribute resolved in this frame's cell snapshot and its
	 * pixel values: most cells share their neighbour's attribute, and
	 * resolving was 60% of tsm_screen_draw()'s instructions (floor,
	 * callgrind). Forgotten at every frame (the palette may change). */
	struct {
		bool valid, dim;
		struct tsm_screen_attr attr;
		uint32_t fg, bg;
	} memo;

	/* libtsm's cells resolved (the cursor's included; the overlay, the
	 * pointer and the flash are put over cur, a copy), kept from frame to
	 * frame: a frame resolves again only the cells libtsm changed since
	 * the last one, by their age (render_snapshot_take()). An echo
	 * resolved all 8000 cells of 160x50 (1.5M instructions, callgrind). */
	struct cell *snap;
	struct cell *fill;  /* where render_snapshot_cell() writes: snap, or cur */
	bool snap_valid;    /* snap shows snap_screen at snap_age */
	bool snap_filter;   /* this draw: cells not newer than snap_age are kept */
	bool snap_resolved; /* the cell before was resolved (a right half follows it) */
	unsigned snap_skip_top, snap_skip_bottom; /* this draw: rows left out */
	const struct tsm_screen *snap_screen;
	tsm_age_t snap_age;		  /* tsm_screen_draw()'s, when snap was taken */
	unsigned snap_width, snap_height; /* libtsm's screen then */
	size_t snap_cursor;		  /* the cursor cell then (SIZE_MAX: none) */
	struct palette snap_palette;	  /* the colours the cells were resolved in */

	/* What is on the glass (prev) and what should be (cur). */
	struct cell *prev, *cur;
	bool prev_valid;
	uint64_t *prev_hash, *cur_hash;
	struct damage_run *runs;

	/* Damage without the whole grid: the rows of cur that may differ from
	 * prev, marked as the frame's cells are put in (row_changed: a cell
	 * resolved into snap, the overlay's, the pointer's and the last
	 * frame's). They are all that can differ when the cells were taken
	 * incrementally and prev is the last frame's cur, untouched since,
	 * with its row hashes in prev_hash (damage_known); then the frame
	 * hashes only those rows and compares only them and the rows its move
	 * changed in prev ([moved_top, moved_bottom)). An echo at 160x50
	 * hashed both grids and compared every row (0.49M instructions of
	 * 0.71M, callgrind). Otherwise (rows_known false) every row is
	 * hashed and compared. */
	bool *row_changed;
	bool damage_known; /* prev is the last frame's cur, prev_hash its hashes */
	bool rows_known;   /* this frame: only the rows in row_changed may differ */
	unsigned moved_top, moved_bottom;
	unsigned last_overlay_top, last_overlay_end; /* the overlay's rows in the last frame */
	int last_pointer_row;			     /* -1: none */
	bool last_flash;
	bool cur_is_last; /* cur holds the last frame's cells (prev's, as drawn) */
	/* render_defer_region(): the next frame may leave a region's move to
	 * the frame after it; the rows it left (changed in cur, prev's old
	 * cells and hashes kept), marked changed again in that frame */
	bool defer_next;
	bool *row_pending;
	bool check_damage; /* render_set_check_damage() */

	/* After a pan or wrap: the text rows [exposed_top, exposed_bottom)
	 * came into view with stale pixels, margins included. */
	unsigned exposed_top, exposed_bottom;

	/* shadow mode, every mode below 8 bpp (packed on flush) and every
	 * mode with fb-flush write: the visible screen in RAM (one byte a
	 * pixel below 8 bpp) and the text rows that differ from VRAM */
	bool shadow_mode;
	bool write_flush;  /* dirty rows go out with pwrite() (fbflush.h) */
	bool flush_failed; /* a pwrite() failed: its rows stay dirty for the next frame */
	uint8_t *shadow;
	size_t shadow_stride;
	bool *dirty;

	struct glyph_slot *slots;
	uint8_t *glyph_pixels; /* GLYPH_CACHE_SLOTS blocks of cell_bytes * height */
	unsigned blocks_used;  /* blocks given to slots */
	uint8_t *line;	       /* one pixel line of the screen */
	uint8_t *rowbuf;       /* the pixels of one text row */
	uint8_t *rotbuf;       /* ... turned for the glass (rotated screens) */

	/* With a blitter: blank runs are filled by the engine after the CPU
	 * has drawn the frame (queued here), and a space glyph that is blank. */
	struct fill_job {
		unsigned row;
		struct damage_run run;
	} * fills;
	size_t n_fills;
	bool redraw_next;	 /* the blitter failed: what it touched is unknown */
	struct backend *blitter; /* this frame's: render_backend(), NULL once it failed */

	struct render_stats stats;
	struct scroll_counters counters[_SCROLL_MODE_MAX];

	int pointer_col, pointer_row;  /* col < 0: no pointer */
	bool flash;		       /* the visual bell: every cell inverted */
	const struct overlay *overlay; /* rows over the session's; NULL: none */

	/* The cursor: its shape, a blinking cursor's off phase, this frame's
	 * cursor cell in cur (SIZE_MAX: none) and whether it shows there
	 * (render_cursor_visible()). */
	enum stream_cursor_shape cursor_shape;
	bool cursor_off;
	size_t cursor_cell;
	bool cursor_visible;
};

/* Frees what depends on the cell size. */
static void render_free_grid(struct render *r)
{
	free(r->prev);
	free(r->cur);
	free(r->snap);
	free(r->prev_hash);
	free(r->cur_hash);
	free(r->row_changed);
	free(r->row_pending);
	free(r->runs);
	free(r->fills);
	free(r->dirty);
	free(r->slots);
	free(r->glyph_pixels);
	free(r->rowbuf);
	free(r->rotbuf);
	free(r->tile);
	r->tile = NULL;
	r->prev = r->cur = r->snap = NULL;
	r->snap_valid = false;
	r->prev_hash = r->cur_hash = NULL;
	r->row_changed = r->row_pending = NULL;
	r->damage_known = false;
	r->cur_is_last = false;
	r->runs = NULL;
	r->fills = NULL;
	r->dirty = NULL;
	r->slots = NULL;
	r->glyph_pixels = r->rowbuf = r->rotbuf = NULL;
}

static struct render_layout render_layout_of(const struct render *r)
{
	return (struct render_layout){
	    .xres = r->fb->var.xres,
	    .yres = r->fb->var.yres,
	    .line_length = r->fb->line_length,
	    .rotation = r->rotation,
	    .cell_w = fontset_cell_width(r->fonts),
	    .cell_h = fontset_cell_height(r->fonts),
	    .max_cols = r->max_cols,
	    .max_rows = r->max_rows,
	    .format = r->fb->format,
	};
}

static bool render_layout_equal(const struct render_layout *a, const struct render_layout *b)
{
	const struct pixel_format *fa = &a->format, *fb = &b->format;

	return a->xres == b->xres && a->yres == b->yres && a->line_length == b->line_length &&
	       a->rotation == b->rotation && a->cell_w == b->cell_w && a->cell_h == b->cell_h &&
	       a->max_cols == b->max_cols && a->max_rows == b->max_rows &&
	       fa->bits_per_pixel == fb->bits_per_pixel &&
	       fa->bytes_per_pixel == fb->bytes_per_pixel && fa->indexed == fb->indexed &&
	       fa->mono == fb->mono && fa->lsb_first == fb->lsb_first &&
	       fa->mono_fg == fb->mono_fg && memcmp(&fa->red, &fb->red, sizeof(fa->red)) == 0 &&
	       memcmp(&fa->green, &fb->green, sizeof(fa->green)) == 0 &&
	       memcmp(&fa->blue, &fb->blue, sizeof(fa->blue)) == 0;
}

/* Lays the text grid, the glyph cache and the pixel line out for the
 * device's mode and the fontset's current cell size. On failure the old
 * layout stays. */
static int render_setup_grid(struct render *r)
{
	struct fbdev *fb = r->fb;
	unsigned w = fontset_cell_width(r->fonts), h = fontset_cell_height(r->fonts);
	const uint8_t *space;
	uint8_t *line;
	unsigned lw, lh;
	size_t cache_bytes;

	rotate_logical_size(r->rotation, fb->var.xres, fb->var.yres, &lw, &lh);
	if (lw < w || lh < h)
		return log_error_errno(
		    ERANGE, "The font's cell (%ux%u) is larger than the screen (%ux%u%s)", w, h, lw,
		    lh, r->rotation ? ", turned" : "");
	/* fills compose one byte a pixel below 8 bpp: a line of xres bytes,
	 * longer than the device's packed line */
	line = realloc(r->line, MAX((size_t)fb->line_length,
				    (size_t)fb->var.xres * fb->format.bytes_per_pixel));
	if (!line)
		return log_error_errno(ENOMEM, "Failed to allocate a pixel line: %m");
	r->line = line;
	render_free_grid(r);
	r->layout = render_layout_of(r);
	r->cell_w = w;
	r->cell_h = h;
	r->lw = lw;
	r->lh = lh;
	r->cols = lw / w;
	r->rows = lh / h;
	if (r->max_cols && r->max_cols < r->cols)
		r->cols = r->max_cols;
	if (r->max_rows && r->max_rows < r->rows)
		r->rows = r->max_rows;
	r->cell_bytes = w * fb->format.bytes_per_pixel;
	r->scalable = fontset_scalable(r->fonts);
	r->prev = xcalloc((size_t)r->cols * r->rows, sizeof(struct cell));
	r->cur = xcalloc((size_t)r->cols * r->rows, sizeof(struct cell));
	r->snap = xcalloc((size_t)r->cols * r->rows, sizeof(struct cell));
	r->fill = r->cur;
	r->snap_valid = false;
	r->prev_hash = xcalloc(r->rows, sizeof(uint64_t));
	r->cur_hash = xcalloc(r->rows, sizeof(uint64_t));
	r->row_changed = xcalloc(r->rows, sizeof(bool));
	r->row_pending = xcalloc(r->rows, sizeof(bool));
	r->runs = xcalloc(r->cols / 2 + 1, sizeof(struct damage_run));
	/* at most one fill per FILL_MIN_CELLS cells */
	r->fills =
	    xcalloc((size_t)r->rows * (r->cols / FILL_MIN_CELLS + 1), sizeof(struct fill_job));
	r->n_fills = 0;
	if (r->shadow)
		r->dirty = xcalloc(r->rows, sizeof(bool));
	space = fontset_render(r->fonts, (const uint32_t[]){' '}, 1, 1, 0);
	r->space_blank = true;
	for (size_t i = 0; i < (size_t)w * h; i++)
		if (space[i])
			r->space_blank = false; /* a font with a visible space */
	r->slots = xcalloc(GLYPH_CACHE_SLOTS, sizeof(struct glyph_slot));
	r->blocks_used = 0;
	/* a TrueType cell of 1000x2000 at 32 bpp: 16 GB, past a 32-bit size_t
	 * (the row buffers are at most the screen's bytes) */
	if (!size_mul3(GLYPH_CACHE_SLOTS, r->cell_bytes, h, &cache_bytes))
		return log_error_errno(
		    ENOMEM, "The glyph cache of %u cells of %ux%u does not fit in memory",
		    GLYPH_CACHE_SLOTS, w, h);
	r->glyph_pixels = malloc(cache_bytes);
	r->rowbuf = malloc((size_t)r->cols * r->cell_bytes * h);
	r->tile = xcalloc((size_t)w * h, sizeof(uint32_t));
	r->rotbuf =
	    r->rotation != ROTATE_UPRIGHT ? malloc((size_t)r->cols * r->cell_bytes * h) : NULL;
	if (!r->glyph_pixels || !r->rowbuf || (r->rotation != ROTATE_UPRIGHT && !r->rotbuf))
		return log_error_errno(ENOMEM, "Failed to allocate the glyph cache: %m");
	r->prev_valid = false;
	if (r->rotation != ROTATE_UPRIGHT)
		log_info("Text grid %ux%u with a %ux%u cell, turned %u degrees", r->cols, r->rows,
			 w, h, rotate_degrees(r->rotation));
	else
		log_info("Text grid %ux%u with a %ux%u cell", r->cols, r->rows, w, h);
	/* below 8 bpp every mode draws in RAM: the copy is made here too,
	 * for frames before render_set_scroller() */
	if (!r->shadow && fb->format.bits_per_pixel < 8)
		return render_set_scroller(r, r->scroller);
	return 0;
}

int render_new(struct fbdev *fb, struct fontset *fonts, const struct palette *palette,
	       struct render **ret)
{
	struct render *r;
	int err;

	r = xcalloc(1, sizeof(*r));
	r->pointer_col = -1;
	r->last_pointer_row = -1;
	r->fb = fb;
	r->fonts = fonts;
	r->palette = palette;
	err = render_setup_grid(r);
	if (err < 0) {
		render_free(r);
		return err;
	}
	*ret = r;
	return 0;
}

void render_set_clusters(struct render *r, const struct cluster_table *clusters)
{
	r->clusters = clusters;
	r->prev_valid = false;
	r->snap_valid = false;
	/* A stand-in may mean another cluster now: cached pixels are stale. */
	if (r->slots)
		memset(r->slots, 0, GLYPH_CACHE_SLOTS * sizeof(struct glyph_slot));
	r->blocks_used = 0;
}

/* What the cache and the glass hold of tiles is stale (the store's
 * generation changed): cached tiles are never served again, and every cell
 * that showed one differs from every real cell, so the frame draws it. */
static void render_forget_tiles(struct render *r)
{
	if (r->slots)
		for (unsigned i = 0; i < GLYPH_CACHE_SLOTS; i++)
			if (r->slots[i].used && (r->slots[i].key.attr & CELL_TILE))
				r->slots[i].key.glyph = CELL_GLYPH_UNKNOWN;
	if (r->prev)
		for (size_t i = 0; i < (size_t)r->cols * r->rows; i++)
			if (r->prev[i].attr & CELL_TILE)
				r->prev[i].glyph = CELL_GLYPH_UNKNOWN;
	/* prev's rows changed behind the hashes */
	r->damage_known = false;
	r->images_generation = r->images ? image_store_generation(r->images) : 0;
}

void render_set_images(struct render *r, const struct image_store *images)
{
	r->images = images;
	render_forget_tiles(r);
}

bool render_layout_stale(const struct render *r)
{
	struct render_layout now = render_layout_of(r);

	return !render_layout_equal(&r->layout, &now);
}

void render_set_rotation(struct render *r, enum rotation rot)
{
	r->rotation = rot;
}

enum rotation render_rotation(const struct render *r)
{
	return r->rotation;
}

int render_relayout(struct render *r)
{
	/* the scroller and the shadow copy were made for the old layout */
	render_set_scroller(r, NULL);
	return render_setup_grid(r);
}

int render_set_scroller(struct render *r, struct scroller *s)
{
	r->scroller = s;
	free(r->shadow);
	free(r->dirty);
	r->shadow = NULL;
	r->dirty = NULL;
	r->shadow_mode = s && scroller_full_mode(s) == SCROLL_MODE_SHADOW;
	/* packed depths are packed on the way out: not through pwrite() */
	r->write_flush =
	    s && scroller_flush(s) == FB_FLUSH_WRITE && r->fb->format.bits_per_pixel >= 8;
	if (r->shadow_mode || r->write_flush || (r->fb && r->fb->format.bits_per_pixel < 8)) {
		/* pwrite() takes whole lines of the device's stride */
		r->shadow_stride = r->write_flush
				       ? r->fb->line_length
				       : (size_t)r->fb->var.xres * r->fb->format.bytes_per_pixel;
		r->shadow = calloc(r->fb->var.yres, r->shadow_stride);
		if (!r->shadow)
			return log_error_errno(ENOMEM, "Failed to allocate the shadow screen: %m");
		r->dirty = xcalloc(r->rows, sizeof(bool));
	}
	r->prev_valid = false;
	r->snap_valid = false;
	return 0;
}

void render_set_device(struct render *r, struct fbdev *fb, struct fontset *fonts)
{
	/* the old device may be gone: nothing of it is looked at */
	r->fb = NULL;
	render_set_scroller(r, NULL);
	r->fb = fb;
	r->fonts = fonts;
	r->prev_valid = false;
	r->snap_valid = false;
}

void render_free(struct render *r)
{
	if (!r)
		return;
	render_free_grid(r);
	free(r->shadow);
	free(r->line);
	free(r);
}

void render_set_grid_max(struct render *r, unsigned cols, unsigned rows)
{
	r->max_cols = cols;
	r->max_rows = rows;
}

void render_fit_grid(const struct render *r, unsigned *ret_cols, unsigned *ret_rows)
{
	unsigned lw, lh;

	rotate_logical_size(r->rotation, r->fb->var.xres, r->fb->var.yres, &lw, &lh);
	*ret_cols = lw / fontset_cell_width(r->fonts);
	*ret_rows = lh / fontset_cell_height(r->fonts);
}

unsigned render_cols(const struct render *r)
{
	return r->cols;
}

unsigned render_rows(const struct render *r)
{
	return r->rows;
}

void render_set_pointer(struct render *r, int col, int row)
{
	r->pointer_col = col;
	r->pointer_row = row;
}

/* The pointer's cell in the snapshot: its colours swapped. */
static void render_snapshot_pointer(struct render *r)
{
	struct cell *c;
	uint32_t fg;

	if (r->pointer_col < 0 || r->pointer_row < 0 || (unsigned)r->pointer_col >= r->cols ||
	    (unsigned)r->pointer_row >= r->rows)
		return;
	c = &r->cur[(size_t)r->pointer_row * r->cols + (unsigned)r->pointer_col];
	fg = c->fg;
	c->fg = c->bg;
	c->bg = fg;
}

void render_set_flash(struct render *r, bool on)
{
	r->flash = on;
}

/* The visual bell in the snapshot: every cell's colours swapped (the
 * pointer's back to normal), so the flash and its end are frames like any
 * other, damage-tracked and scrolled the same way. */
static void render_snapshot_flash(struct render *r)
{
	if (!r->flash)
		return;
	for (size_t i = 0; i < (size_t)r->cols * r->rows; i++) {
		struct cell *c = &r->cur[i];
		uint32_t fg = c->fg;

		c->fg = c->bg;
		c->bg = fg;
	}
}

void render_set_cursor(struct render *r, enum stream_cursor_shape shape, bool on)
{
	r->cursor_shape = shape;
	r->cursor_off = !on;
}

bool render_cursor_visible(const struct render *r)
{
	return r->cursor_visible;
}

/* The cell tsm_screen_draw() shows the cursor on, as it finds it: the
 * cursor's (a pending wrap's x at the width: the last column), on its
 * line's row of the view (moved down by the scrollback lines shown above
 * the screen's), unless hidden. Without tsmpeek's view (tsmpeek.h) the
 * scrollback's offset is unknown: then none, and libtsm's block stays as
 * it draws it. */
static void render_find_cursor(struct render *r, struct tsm_screen *screen)
{
	unsigned w = tsm_screen_get_width(screen), h = tsm_screen_get_height(screen);
	unsigned x = tsm_screen_get_cursor_x(screen);
	uint64_t y = tsm_screen_get_cursor_y(screen);

	r->cursor_cell = SIZE_MAX;
	r->cursor_visible = false;
	if ((tsm_screen_get_flags(screen) & TSM_SCREEN_HIDE_CURSOR) || w == 0 || h == 0 ||
	    !tsmpeek_check(screen))
		return;
	x = MIN(x, w - 1);
	y = MIN(y, (uint64_t)h - 1) + tsmpeek_view_offset(tsmpeek(screen));
	if (x < r->cols && y < r->rows)
		r->cursor_cell = (size_t)y * r->cols + x;
}

/* The session's scroll region (DECSTBM: libtsm's margins) when it leaves
 * rows of the screen out, as drawn now: not with an overlay over the
 * session's rows or a view into the scrollback, whose rows are not the
 * screen's. */
static bool render_margins(const struct render *r, struct tsm_screen *screen, unsigned *ret_top,
			   unsigned *ret_bottom)
{
	const struct tsmpeek_screen *p;

	if ((r->overlay && r->overlay->n > 0) || !tsmpeek_check(screen))
		return false;
	p = tsmpeek(screen);
	if (tsmpeek_view_offset(p) != 0 || p->rows != r->rows || p->margin_top > p->margin_bottom ||
	    p->margin_bottom >= p->rows || (p->margin_top == 0 && p->margin_bottom + 1 == p->rows))
		return false;
	*ret_top = p->margin_top;
	*ret_bottom = p->margin_bottom + 1;
	return true;
}

void render_set_overlay(struct render *r, const struct overlay *o)
{
	r->overlay = o;
}

static int render_snapshot_cell(struct tsm_screen *con, uint64_t id, const uint32_t *ch, size_t len,
				unsigned width, unsigned posx, unsigned posy,
				const struct tsm_screen_attr *attr, tsm_age_t age, void *data);

/* The overlay's rows in the snapshot, in place of the session's, each cell
 * resolved as tsm_screen_draw() would give it (a grid that changed under
 * an overlay not laid out again yet: what fits). */
static void render_snapshot_overlay(struct render *r)
{
	const struct overlay *o = r->overlay;
	unsigned cols = MIN(o->cols, r->cols);

	for (unsigned i = 0; i < o->n && o->top + i < r->rows; i++) {
		const struct overlay_cell *row = o->cells + (size_t)i * o->cols;

		for (unsigned x = 0; x < cols; x++)
			render_snapshot_cell(NULL, 0, &row[x].ch, 1, row[x].width, x, o->top + i,
					     &row[x].attr, 0, r);
	}
	/* a cursor under the overlay is not seen (and needs no blinking) */
	if (r->cursor_cell != SIZE_MAX && r->cursor_cell / r->cols >= o->top &&
	    r->cursor_cell / r->cols < (size_t)o->top + o->n && r->cursor_cell % r->cols < cols)
		r->cursor_visible = false;
}

/* The rows a frame may move with an overlay over the screen: the session's
 * rows on the larger side of it (a band is at the top or the bottom, so
 * that is all of them). False when it covers no row. */
static bool render_movable_rows(const struct render *r, unsigned *ret_top, unsigned *ret_bottom)
{
	const struct overlay *o = r->overlay;
	unsigned end;

	if (o->n == 0 || o->top >= r->rows)
		return false;
	end = MIN(o->top + o->n, r->rows);
	if (o->top >= r->rows - end) {
		*ret_top = 0;
		*ret_bottom = o->top;
	} else {
		*ret_top = end;
		*ret_bottom = r->rows;
	}
	return true;
}

void render_invalidate(struct render *r)
{
	r->prev_valid = false;
	r->snap_valid = false;
}

const struct render_stats *render_get_stats(const struct render *r)
{
	return &r->stats;
}

/* A colour before it is packed: a palette entry, or rgb when idx < 0. */
struct colour {
	int idx;
	struct rgb rgb;
};

static struct colour colour_of(const struct palette *palette, int code, uint8_t r, uint8_t g,
			       uint8_t b)
{
	if (code == TSM_COLOR_FOREGROUND)
		return (struct colour){.idx = (int)palette->fg};
	if (code == TSM_COLOR_BACKGROUND)
		return (struct colour){.idx = (int)palette->bg};
	if (code >= 0)
		return (struct colour){.idx = code};
	return (struct colour){.idx = -1, .rgb = {r, g, b}};
}

static struct rgb colour_rgb(const struct palette *palette, struct colour c)
{
	return c.idx >= 0 && c.idx < PALETTE_ENTRIES ? palette->colors[c.idx] : c.rgb;
}

static uint32_t colour_pixel(const struct pixel_format *pf, const struct palette *palette,
			     struct colour c)
{
	if (c.idx >= 0)
		return pixel_from_index(pf, palette, (unsigned)c.idx);
	if (pf->indexed)
		return pixel_from_index(pf, palette, palette_nearest(palette, c.rgb));
	return pixel_pack_rgb(pf, c.rgb);
}

void render_resolve_colors(const struct pixel_format *pf, const struct palette *palette,
			   const struct tsm_screen_attr *attr, bool dim, bool bitmap,
			   uint32_t *ret_fg, uint32_t *ret_bg)
{
	struct colour fg = colour_of(palette, attr->fccode, attr->fr, attr->fg, attr->fb);
	struct colour bg = colour_of(palette, attr->bccode, attr->br, attr->bg, attr->bb);

	/* fbcon at depth 1 (get_color()): one foreground and one background
	 * for every colour, swapped by reverse video; the other attributes
	 * change the glyph (CELL_MONO_*) */
	if (pf->mono) {
		*ret_fg = attr->inverse ? pf->mono_bg : pf->mono_fg;
		*ret_bg = attr->inverse ? pf->mono_fg : pf->mono_bg;
		return;
	}

	/* fbcon (vt.c build_attr) shows these as colours, in this order of
	 * precedence, in place of the foreground; a scalable font draws
	 * italic and underline itself */
	if (bitmap && attr->italic)
		fg = (struct colour){.idx = RENDER_ITALIC_COLOR};
	else if (bitmap && attr->underline)
		fg = (struct colour){.idx = RENDER_UNDERLINE_COLOR};
	else if (bitmap && dim)
		fg = (struct colour){.idx = RENDER_DIM_COLOR};
	if (attr->bold && fg.idx >= 0 && fg.idx < 8)
		fg.idx += 8;
	if (dim && !bitmap) {
		/* faint: halfway to the background */
		struct rgb a = colour_rgb(palette, fg), b = colour_rgb(palette, bg);

		fg = (struct colour){.idx = -1,
				     .rgb = {(uint8_t)((a.r + b.r + 1) / 2),
					     (uint8_t)((a.g + b.g + 1) / 2),
					     (uint8_t)((a.b + b.b + 1) / 2)}};
	}
	if (attr->inverse) {
		struct colour t = fg;
		fg = bg;
		bg = t;
	}
	/* fbcon's blink: the background's intensity bit flips */
	if (attr->blink && bg.idx >= 0 && bg.idx < 16)
		bg.idx ^= 8;
	*ret_fg = colour_pixel(pf, palette, fg);
	*ret_bg = colour_pixel(pf, palette, bg);
}

/* The cursor's cell as libtsm gives it (reverse video: the block): kept
 * for the block, else (another shape, a blinking cursor's off phase) the
 * reverse video taken back in *buf; *ret_bits gets the shape's cell bit. */
static const struct tsm_screen_attr *render_cursor_attr(struct render *r,
							const struct tsm_screen_attr *attr,
							struct tsm_screen_attr *buf,
							unsigned *ret_bits)
{
	r->cursor_visible = true;
	if (!r->cursor_off && r->cursor_shape == STREAM_CURSOR_BLOCK)
		return attr;
	*buf = *attr;
	buf->inverse = !buf->inverse;
	if (!r->cursor_off)
		*ret_bits = r->cursor_shape == STREAM_CURSOR_UNDERLINE ? CELL_CURSOR_UNDERLINE
								       : CELL_CURSOR_BAR;
	return buf;
}

static bool attr_equal(const struct tsm_screen_attr *a, const struct tsm_screen_attr *b)
{
	return a->fccode == b->fccode && a->bccode == b->bccode && a->fr == b->fr &&
	       a->fg == b->fg && a->fb == b->fb && a->br == b->br && a->bg == b->bg &&
	       a->bb == b->bb && a->bold == b->bold && a->italic == b->italic &&
	       a->underline == b->underline && a->inverse == b->inverse && a->blink == b->blink;
}

/* render_resolve_colors() for the snapshot, through the frame's memo. */
static void render_cell_colors(struct render *r, const struct tsm_screen_attr *attr, bool dim,
			       struct cell *c)
{
	if (!r->memo.valid || r->memo.dim != dim || !attr_equal(&r->memo.attr, attr)) {
		render_resolve_colors(&r->fb->format, r->palette, attr, dim, !r->scalable,
				      &r->memo.fg, &r->memo.bg);
		r->memo.valid = true;
		r->memo.dim = dim;
		r->memo.attr = *attr;
	}
	c->fg = r->memo.fg;
	c->bg = r->memo.bg;
}

static int render_snapshot_cell(struct tsm_screen *con, uint64_t id, const uint32_t *ch, size_t len,
				unsigned width, unsigned posx, unsigned posy,
				const struct tsm_screen_attr *attr, tsm_age_t age, void *data)
{
	struct render *r = data;
	unsigned flags = 0, cursor = 0;
	struct tsm_screen_attr cursor_attr;
	struct cell *c;
	size_t n, i;

	(void)id;
	if (posx >= r->cols || posy >= r->rows)
		return 0;
	i = (size_t)posy * r->cols + posx;
	/* Kept from the last frame: a cell libtsm has not changed since (age
	 * 0: it must be drawn), unless the cursor is or was on it (its shape
	 * and blink are consoled's) or it is the right half of a cell just
	 * resolved. */
	if (r->snap_filter && posy >= r->snap_skip_top && posy < r->snap_skip_bottom) {
		r->snap_resolved = false; /* a row left out (render_snapshot_take()) */
		return 0;
	}
	if (r->snap_filter && age != 0 && age <= r->snap_age && i != r->cursor_cell &&
	    i != r->snap_cursor && !(width == 0 && r->snap_resolved)) {
		r->snap_resolved = false;
		return 0;
	}
	r->snap_resolved = true;
	r->row_changed[posy] = true;
	if (con)
		r->stats.cells_resolved++;
	c = &r->fill[i];

	/* The second cell of a wide cluster (libtsm gives it width 0) shows
	 * the right half of the cell before it (a cursor there: its underline,
	 * the bar is left of the first half). */
	if (width == 0 && posx > 0 && (c[-1].attr & CELL_WIDE)) {
		*c = c[-1];
		c->attr = (c->attr & ~(CELL_WIDE | CELL_CURSOR_BAR)) | CELL_RIGHT;
		return 0;
	}
	if (con && i == r->cursor_cell)
		attr = render_cursor_attr(r, attr, &cursor_attr, &cursor);
	c->glyph = len > 0 ? ch[0] : ' ';
	c->attr = 0;
	/* an image's tile: its pixels over the cell's background, no style */
	if (image_is_tile(c->glyph)) {
		c->attr = CELL_TILE | cursor;
		render_cell_colors(r, attr, false, c);
		return 0;
	}
	/* a stand-in may carry attributes libtsm does not keep */
	if (r->clusters && c->glyph >= CLUSTER_FIRST)
		cluster_lookup(r->clusters, c->glyph, &n, &flags);
	/* A wide cluster in the last column has no room for its right half:
	 * it is drawn clipped to one cell. */
	if (width == 2 && posx + 1 < r->cols)
		c->attr |= CELL_WIDE;
	if (r->scalable)
		c->attr |= (attr->bold ? FONT_STYLE_BOLD : 0) |
			   (attr->italic ? FONT_STYLE_ITALIC : 0) |
			   (attr->underline ? FONT_STYLE_UNDERLINE : 0);
	if (flags & CLUSTER_STRIKE)
		c->attr |= FONT_STYLE_STRIKE;
	if (!r->scalable && r->fb->format.mono)
		c->attr |= (attr->bold || attr->italic ? CELL_MONO_BOLD : 0) |
			   (attr->underline ? CELL_MONO_UNDERLINE : 0);
	c->attr |= cursor;
	render_cell_colors(r, attr, flags & CLUSTER_DIM, c);
	return 0;
}

static uint32_t glyph_hash(const struct cell *c)
{
	uint32_t h = c->glyph * 0x9e3779b1u;
	h ^= c->attr * 0x27d4eb2fu;
	h ^= c->fg * 0x85ebca6bu;
	h ^= c->bg * 0xc2b2ae35u;
	return (h ^ (h >> 15)) % GLYPH_CACHE_SLOTS;
}

/* The lines fbcon underlines at the bottom of a cell, text at depth 1
 * (update_attr()) and the underline cursor (bit_cursor(), CUR_UNDERLINE)
 * alike: the last one, the last two from a height of 10. */
static unsigned render_underline_lines(const struct render *r)
{
	return r->cell_h < 10 ? 1 : 2;
}

/* The cursor's underline or bar over a cell's pixels (render_set_cursor()),
 * in its foreground colour. */
static void render_cursor_pixels(const struct render *r, const struct cell *c, uint8_t *px)
{
	unsigned bpp = r->fb->format.bytes_per_pixel;
	unsigned bar = MAX(r->cell_w / 8, 1u);

	if (c->attr & CELL_CURSOR_UNDERLINE)
		for (unsigned y = r->cell_h - render_underline_lines(r); y < r->cell_h; y++)
			for (unsigned x = 0; x < r->cell_w; x++)
				pixel_store(px + (size_t)y * r->cell_bytes + (size_t)x * bpp, bpp,
					    c->fg);
	if (c->attr & CELL_CURSOR_BAR)
		for (unsigned y = 0; y < r->cell_h; y++)
			for (unsigned x = 0; x < bar; x++)
				pixel_store(px + (size_t)y * r->cell_bytes + (size_t)x * bpp, bpp,
					    c->fg);
}

/* fbcon's update_attr() at depth 1 for the pixel x of glyph line y (`line`
 * of the glyph's coverage, from its first cell): the last lines
 * (render_underline_lines()) are set for underline; bold sets a pixel whose
 * left neighbour is set within the same byte of the font's bitmap (c |= c
 * >> 1 per byte). */
static bool render_mono_attr(const struct render *r, uint32_t attr, const uint8_t *line, unsigned x,
			     unsigned y)
{
	unsigned ul = render_underline_lines(r);

	if ((attr & CELL_MONO_UNDERLINE) && y + ul >= r->cell_h)
		return true;
	return line[x] >= 128 || ((attr & CELL_MONO_BOLD) && x % 8 != 0 && line[x - 1] >= 128);
}

/* 8 bpp: the colour map slot of the palette entry nearest to rgb (as an
 * rgb colour of text gets), remembered for the frame. */
static uint32_t render_nearest(struct render *r, uint32_t rgb)
{
	uint32_t key = UINT32_C(1) << 24 | rgb, i = (rgb * 0x9e3779b1u) >> 22;

	if (r->nearest_key[i] != key) {
		struct rgb c = {(uint8_t)(rgb >> 16), (uint8_t)(rgb >> 8), (uint8_t)rgb};

		r->nearest_key[i] = key;
		r->nearest_slot[i] = (uint8_t)pixel_from_index(&r->fb->format, r->palette,
							       palette_nearest(r->palette, c));
	}
	return r->nearest_slot[i];
}

/* The 4x4 Bayer matrix of the 1 bpp ordered dither. */
static const uint8_t bayer4[4][4] = {{0, 8, 2, 10}, {12, 4, 14, 6}, {3, 11, 1, 9}, {15, 7, 13, 5}};

/* One pixel of an image (0xAARRGGBB) at x, y of its cell as a pixel value:
 * transparent ones show the cell's background; 8 bpp takes the nearest
 * palette entry; 1 bpp lights (fbcon's foreground value) a pixel whose
 * luma (BT.601: 299 R + 587 G + 114 B, / 1000) exceeds the ordered
 * dither's threshold 16 * bayer + 8 at the pixel's place in its cell. */
static uint32_t render_tile_pixel(struct render *r, uint32_t argb, uint32_t bg, unsigned x,
				  unsigned y)
{
	const struct pixel_format *pf = &r->fb->format;
	unsigned red = (argb >> 16) & 0xff, green = (argb >> 8) & 0xff, blue = argb & 0xff;

	if ((argb >> 24) == 0)
		return bg;
	if (pf->mono) {
		unsigned luma = (299 * red + 587 * green + 114 * blue) / 1000;

		return luma > 16u * bayer4[y & 3][x & 3] + 8 ? pf->mono_fg : pf->mono_bg;
	}
	if (pf->indexed)
		return render_nearest(r, argb & 0xffffff);
	return pixel_pack_rgb(pf, (struct rgb){(uint8_t)red, (uint8_t)green, (uint8_t)blue});
}

/* A tile cell's pixels into px (cell_h lines of cell_bytes); a tile the
 * store does not hold (or no store) is the placeholder: the background. */
static void render_tile(struct render *r, const struct cell *c, uint8_t *px)
{
	unsigned bpp = r->fb->format.bytes_per_pixel;
	bool known =
	    r->images && image_tile_pixels(r->images, c->glyph, r->cell_w, r->cell_h, r->tile);

	for (unsigned y = 0; y < r->cell_h; y++) {
		uint8_t *dst = px + (size_t)y * r->cell_bytes;

		for (unsigned x = 0; x < r->cell_w; x++)
			pixel_store(
			    dst + (size_t)x * bpp, bpp,
			    known ? render_tile_pixel(r, r->tile[y * r->cell_w + x], c->bg, x, y)
				  : c->bg);
	}
}

/* Returns the cell's pixels: cell_h lines of cell_bytes, the font's coverage
 * blended from the cell's background to its foreground. */
static const uint8_t *render_glyph(struct render *r, const struct cell *c)
{
	struct glyph_slot *slot = &r->slots[glyph_hash(c)];
	size_t block = (size_t)r->cell_bytes * r->cell_h;
	uint8_t *px;
	const struct pixel_format *pf = &r->fb->format;
	unsigned bpp = pf->bytes_per_pixel;
	unsigned cells = c->attr & (CELL_WIDE | CELL_RIGHT) ? 2 : 1;
	unsigned stride = cells * r->cell_w, xoff = c->attr & CELL_RIGHT ? r->cell_w : 0;
	const uint32_t *seq = &c->glyph;
	size_t len = 1;
	const uint8_t *cov;

	if (slot->used && cell_equal(&slot->key, c))
		return r->glyph_pixels + slot->block * block;
	if (!slot->used)
		slot->block = (uint16_t)r->blocks_used++;
	px = r->glyph_pixels + slot->block * block;
	slot->used = true;
	slot->key = *c;
	if (c->attr & CELL_TILE) {
		render_tile(r, c, px);
		render_cursor_pixels(r, c, px);
		return px;
	}

	if (r->clusters && c->glyph >= CLUSTER_FIRST) {
		const uint32_t *joined = cluster_lookup(r->clusters, c->glyph, &len, NULL);

		seq = joined ? joined : seq;
		len = joined ? len : 1;
	}
	cov = fontset_render(r->fonts, seq, len, cells, c->attr & CELL_STYLE_MASK);
	for (unsigned y = 0; y < r->cell_h; y++) {
		const uint8_t *a = cov + (size_t)y * stride + xoff;
		uint8_t *dst = px + (size_t)y * r->cell_bytes;

		for (unsigned x = 0; x < r->cell_w; x++) {
			uint8_t v = a[x];

			if (c->attr & (CELL_MONO_BOLD | CELL_MONO_UNDERLINE))
				v = render_mono_attr(r, c->attr, cov + (size_t)y * stride, xoff + x,
						     y)
					? 255
					: 0;
			pixel_store(dst + (size_t)x * bpp, bpp, pixel_blend(pf, c->fg, c->bg, v));
		}
	}
	render_cursor_pixels(r, c, px);
	return px;
}

/* Where physical pixel line y of the visible screen is drawn: the shadow
 * copy or VRAM. */
static uint8_t *render_target_line(struct render *r, unsigned y)
{
	if (r->shadow)
		return r->shadow + (size_t)y * r->shadow_stride;
	return fbdev_line(r->fb, y);
}

/* shadow: the text rows the logical pixel lines [y, y + h) touch differ from
 * VRAM now. */
static void render_mark_dirty(struct render *r, unsigned y, unsigned h)
{
	if (!r->shadow || h == 0)
		return;
	for (unsigned row = MIN(y / r->cell_h, r->rows - 1);
	     row <= MIN((y + h - 1) / r->cell_h, r->rows - 1); row++)
		r->dirty[row] = true;
}

static struct rotate_rect render_physical(const struct render *r, struct rotate_rect lr)
{
	return rotate_rect_to_physical(r->rotation, r->fb->var.xres, r->fb->var.yres, lr);
}

/* Writes the logical block lr, its pixels at src (lines src_stride apart),
 * turned to where it shows. */
static void render_put(struct render *r, struct rotate_rect lr, const uint8_t *src,
		       size_t src_stride)
{
	unsigned bpp = r->fb->format.bytes_per_pixel;
	struct rotate_rect pr = render_physical(r, lr);
	size_t bytes = (size_t)pr.w * bpp;

	render_mark_dirty(r, lr.y, lr.h);
	if (r->rotation != ROTATE_UPRIGHT) {
		rotate_pixels(r->rotation, src, src_stride, lr.w, lr.h, bpp, r->rotbuf, bytes);
		src = r->rotbuf;
		src_stride = bytes;
	}
	for (unsigned y = 0; y < pr.h; y++)
		memcpy(render_target_line(r, pr.y + y) + (size_t)pr.x * bpp,
		       src + (size_t)y * src_stride, bytes);
}

static void render_run(struct render *r, unsigned row, const struct damage_run *run,
		       struct scroll_counters *c)
{
	const struct cell *cells = r->cur + (size_t)row * r->cols;
	size_t bytes = (size_t)(run->end - run->start) * r->cell_bytes;

	/* Compose the run in RAM (a cache slot may be reused by a later cell of
	 * the same run), then write each pixel line in one piece. */
	for (unsigned x = run->start; x < run->end; x++) {
		const uint8_t *g = render_glyph(r, &cells[x]);
		uint8_t *dst = r->rowbuf + (size_t)(x - run->start) * r->cell_bytes;

		for (unsigned y = 0; y < r->cell_h; y++)
			memcpy(dst + y * bytes, g + (size_t)y * r->cell_bytes, r->cell_bytes);
	}
	render_put(r,
		   (struct rotate_rect){run->start * r->cell_w, row * r->cell_h,
					(run->end - run->start) * r->cell_w, r->cell_h},
		   r->rowbuf, bytes);
	r->stats.cells_drawn += run->end - run->start;
	if (!r->shadow)
		c->vram_bytes_written += bytes * r->cell_h;
}

/* Fills the logical rectangle x, y, w, h. */
static void fill_rect(struct render *r, unsigned x, unsigned y, unsigned w, unsigned h,
		      uint32_t pixel, struct scroll_counters *c)
{
	unsigned bpp = r->fb->format.bytes_per_pixel;
	struct rotate_rect pr = render_physical(r, (struct rotate_rect){x, y, w, h});

	if (w == 0 || h == 0)
		return;
	render_mark_dirty(r, y, h);
	for (unsigned i = 0; i < pr.w; i++)
		pixel_store(r->line + (size_t)i * bpp, bpp, pixel);
	for (unsigned j = 0; j < pr.h; j++)
		memcpy(render_target_line(r, pr.y + j) + (size_t)pr.x * bpp, r->line,
		       (size_t)pr.w * bpp);
	if (!r->shadow)
		c->vram_bytes_written += (uint64_t)w * h * bpp;
}

/* The strips right of text rows [top, bottom) and, with `bottom_strip`, below
 * the text grid (logically: rotate.h says where they show), in the default
 * background as fbcon clears them. */
static void render_clear_margins(struct render *r, unsigned top, unsigned bottom, bool bottom_strip,
				 struct scroll_counters *c)
{
	unsigned fh = r->cell_h;
	unsigned tw = r->cols * r->cell_w, th = r->rows * fh;
	uint32_t bg = pixel_from_index(&r->fb->format, r->palette, r->palette->bg);

	fill_rect(r, tw, top * fh, r->lw - tw, (bottom - top) * fh, bg, c);
	if (bottom_strip)
		fill_rect(r, 0, th, r->lw, r->lh - th, bg, c);
}

/* The base strategy of a frame without a pan, wrap or blit. */
static enum scroll_mode render_base_mode(const struct render *r)
{
	return r->shadow_mode ? SCROLL_MODE_SHADOW : SCROLL_MODE_REDRAW;
}

/* The RAM copy: writes the dirty text rows to VRAM, each stretch of them as
 * one rectangle (a column of the glass when the screen is turned sideways):
 * below 8 bpp whole lines, packed; with fb-flush write, the rectangle's
 * whole lines in one pwrite() (fbflush.h). */
static void render_flush_shadow(struct render *r, struct scroll_counters *c)
{
	const struct pixel_format *pf = &r->fb->format;
	unsigned fh = r->cell_h, bpp = pf->bytes_per_pixel;
	bool failed = false;

	for (unsigned row = 0; row < r->rows; row++) {
		unsigned end = row;

		while (end < r->rows && r->dirty[end])
			r->dirty[end++] = false;
		if (end == row)
			continue;
		/* the last row carries the bottom margin, each row its right margin */
		unsigned bottom = end == r->rows ? r->lh : end * fh;
		struct rotate_rect pr =
		    render_physical(r, (struct rotate_rect){0, row * fh, r->lw, bottom - row * fh});

		if (r->write_flush) {
			int64_t n = fbflush_write_lines(r->fb, r->shadow, pr.y, pr.y + pr.h);

			if (n < 0) {
				/* The rows stay dirty: the next frame (render_frame()
				 * asks for one) writes them again, rather than leaving
				 * them stale until their text changes. Logged once per
				 * failing stretch of frames. */
				if (!failed && !r->flush_failed)
					log_warning_errno((int)n,
							  "Writing rows %u-%u to %s failed, "
							  "retrying at the next frame: %m",
							  row, end - 1, r->fb->path);
				failed = true;
				memset(r->dirty + row, true, end - row);
			} else
				c->vram_bytes_written += (uint64_t)n;
		} else if (pf->bits_per_pixel < 8) {
			size_t bytes = pixel_line_bytes(pf, r->fb->var.xres);

			for (unsigned y = pr.y; y < pr.y + pr.h; y++)
				pixel_pack_line(fbdev_line(r->fb, y),
						r->shadow + (size_t)y * r->shadow_stride,
						r->fb->var.xres, pf->bits_per_pixel, pf->lsb_first);
			c->vram_bytes_written += (uint64_t)pr.h * bytes;
		} else {
			for (unsigned y = pr.y; y < pr.y + pr.h; y++)
				memcpy(fbdev_line(r->fb, y) + (size_t)pr.x * bpp,
				       r->shadow + (size_t)y * r->shadow_stride +
					   (size_t)pr.x * bpp,
				       (size_t)pr.w * bpp);
			c->vram_bytes_written += (uint64_t)pr.w * pr.h * bpp;
		}
		row = end;
	}
	if (r->flush_failed && !failed)
		log_info("Writing to %s works again", r->fb->path);
	r->flush_failed = failed;
}

/* The blitter, when there is one and it works (never with shadow: that
 * draws in RAM). */
static struct backend *render_backend(const struct render *r)
{
	struct backend *b = r->scroller ? scroller_backend(r->scroller) : NULL;

	return !r->shadow && backend_ok(b) ? b : NULL;
}

/* The blitter failed (backend.c has logged it): the scroller drops it, and
 * what is on the glass is forgotten, so that this frame draws everything in
 * software. */
static void render_backend_failed(struct render *r)
{
	if (r->scroller)
		scroller_drop_backend(r->scroller);
	r->blitter = NULL;
	r->prev_valid = false;
	r->redraw_next = true;
}

/* What a frame's plan is made from, but for what changed. */
static struct frame_facts render_facts(const struct render *r)
{
	return (struct frame_facts){
	    .scroller = r->scroller,
	    .base = render_base_mode(r),
	    .blitter = r->blitter != NULL,
	    .follow_shadow = r->shadow && !r->shadow_mode,
	    .rotation = r->rotation,
	    .xres = r->fb->var.xres,
	    .yres = r->fb->var.yres,
	    .lw = r->lw,
	    .rows = r->rows,
	    .cell_h = r->cell_h,
	};
}

/* Where a plan's moves happen: the device, the blitter, the RAM copy. */
static struct move_target render_move_target(const struct render *r)
{
	return (struct move_target){
	    .fb = r->fb,
	    .backend = r->scroller ? scroller_backend(r->scroller) : NULL,
	    .shadow = r->shadow,
	    .shadow_stride = r->shadow_stride,
	    .dirty = r->dirty,
	    .cell_h = r->cell_h,
	};
}

/* After the moves: what failed is told to the scroller (it drops the pan or
 * the blitter for good) and the plan takes its fallback; the move that was
 * made is applied to prev, so that what still differs is what is left to
 * draw. */
static void render_moved(struct render *r, struct frame_plan *p, const struct move_report *rep,
			 enum scroll_mode base)
{
	if (rep->pan_err)
		scroller_pan_failed(r->scroller, rep->pan_err);
	if (rep->blitter_failed)
		render_backend_failed(r);
	frame_plan_fall_back(p, rep, base);

	if (p->redraw_all)
		r->prev_valid = false;
	else if (p->move != FRAME_MOVE_NONE) {
		damage_apply_scroll(r->prev, r->cols, p->top, p->bottom, p->shift);
		r->moved_top = p->top;
		r->moved_bottom = p->bottom;
	}
	r->exposed_top = p->exposed_top;
	r->exposed_bottom = p->exposed_bottom;
	r->counters[p->mode].rows_scrolled += p->rows_scrolled;
}

/* With a blitter, stretches of at least FILL_MIN_CELLS blank cells of one
 * background are left to the engine (filled after the CPU has drawn the rest
 * of the frame); the CPU draws everything else of the run. */

static bool cell_blank(const struct render *r, const struct cell *c, uint32_t bg)
{
	return c->glyph == ' ' && r->space_blank &&
	       !(c->attr & (FONT_STYLE_UNDERLINE | FONT_STYLE_STRIKE | CELL_CURSOR_UNDERLINE |
			    CELL_CURSOR_BAR)) &&
	       c->bg == bg;
}

static void render_run_or_fill(struct render *r, unsigned row, const struct damage_run *run,
			       struct scroll_counters *c)
{
	const struct cell *cells = r->cur + (size_t)row * r->cols;
	unsigned x = run->start, drawn = run->start;

	if (!r->blitter) {
		render_run(r, row, run, c);
		return;
	}
	while (x < run->end) {
		unsigned end = x;

		while (end < run->end && cell_blank(r, &cells[end], cells[x].bg))
			end++;
		if (end - x >= FILL_MIN_CELLS) {
			if (x > drawn)
				render_run(r, row, &(struct damage_run){drawn, x}, c);
			r->fills[r->n_fills++] = (struct fill_job){row, {x, end}};
			drawn = end;
		}
		x = end > x ? end : x + 1;
	}
	if (run->end > drawn)
		render_run(r, row, &(struct damage_run){drawn, run->end}, c);
}

/* Has the blitter fill the queued blank runs; when it fails, draws them (and
 * returns false: the caller drops the blitter). */
static bool render_do_fills(struct render *r, struct scroll_counters *c)
{
	struct backend *b = r->blitter;
	unsigned fw = r->cell_w, fh = r->cell_h, y0 = r->fb->var.yoffset;
	size_t i = 0;

	for (; b && i < r->n_fills; i++) {
		const struct fill_job *j = &r->fills[i];
		uint32_t bg = r->cur[(size_t)j->row * r->cols + j->run.start].bg;

		struct rotate_rect pr =
		    render_physical(r, (struct rotate_rect){j->run.start * fw, j->row * fh,
							    (j->run.end - j->run.start) * fw, fh});

		if (backend_fill(b, pr.x, y0 + pr.y, pr.w, pr.h, bg) < 0)
			break;
		c->fills++;
		r->stats.cells_drawn += j->run.end - j->run.start;
	}
	if (b && i == r->n_fills && backend_sync(b) == 0) {
		r->n_fills = 0;
		return true;
	}
	/* The blitter failed: draw what it was asked to, and the rest. */
	for (i = 0; i < r->n_fills; i++)
		render_run(r, r->fills[i].row, &r->fills[i].run, c);
	r->n_fills = 0;
	return !b;
}

/* With pwrite() flushes (fbflush.h), video memory is wiped the same way,
 * from the shadow copy filled with the background line `line`, never
 * through the mapping: a memcpy() there made every page of the driver's
 * buffer consoled's own (4 MB of RSS at 1280x800x32 on bochs-drm) for one
 * clear, then never used again. False when the device refused: the mapping
 * does it then. */
static bool render_wipe_by_write(struct render *r, const uint8_t *line)
{
	struct fbdev *fb = r->fb;
	size_t screen = (size_t)fb->var.yres * r->shadow_stride, off = 0;

	for (unsigned y = 0; y < fb->var.yres; y++)
		memcpy(r->shadow + (size_t)y * r->shadow_stride, line, r->shadow_stride);
	while (off < fb->map_size) {
		ssize_t n = pwrite(fb->fd, r->shadow, MIN(screen, fb->map_size - off), (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			log_debug_errno(n < 0 ? errno : ENOSPC,
					"Cannot wipe video memory with pwrite(): %m");
			return false;
		}
		off += (size_t)n;
	}
	return true;
}

void render_wipe_vram(struct render *r)
{
	struct fbdev *fb = r->fb;
	struct backend *b = r->scroller ? scroller_backend(r->scroller) : NULL;
	uint32_t bg = pixel_from_index(&fb->format, r->palette, r->palette->bg);
	unsigned bpp = fb->format.bytes_per_pixel;
	size_t line = fb->line_length, done;

	if (!fb->map)
		return;
	if (backend_ok(b))
		backend_sync(b);
	/* one pixel line of background, then every line of the memory */
	if (fb->format.bits_per_pixel < 8) {
		uint8_t px[8];

		memset(px, (int)bg, sizeof(px));
		pixel_pack_line(r->line, px, 8, fb->format.bits_per_pixel, fb->format.lsb_first);
		memset(r->line, r->line[0], line);
	} else {
		for (size_t x = 0; x + bpp <= line; x += bpp)
			pixel_store(r->line + x, bpp, bg);
		for (size_t x = line / bpp * bpp; x < line; x++)
			r->line[x] = 0;
	}
	if (!r->write_flush || !r->shadow || r->shadow_stride != line ||
	    !render_wipe_by_write(r, r->line)) {
		for (done = 0; done + line <= fb->map_size; done += line)
			memcpy(fb->map + done, r->line, line);
		memset(fb->map + done, 0, fb->map_size - done);
	}
	r->counters[SCROLL_MODE_REDRAW].vram_bytes_written += fb->map_size;
	r->prev_valid = false;
	if (r->shadow)
		memset(r->dirty, 1, r->rows * sizeof(bool));
}

/* Step 4: draws the cells that still differ from prev (all of them when
 * prev is not valid), blank stretches by the blitter. False when the
 * blitter failed (the fills are drawn then). */
static bool render_draw_cells(struct render *r, struct scroll_counters *c)
{
	for (unsigned y = 0; y < r->rows; y++) {
		const struct cell *cur = r->cur + (size_t)y * r->cols;
		unsigned n;

		/* a row neither changed nor moved is prev's */
		if (r->prev_valid && r->rows_known && !r->row_changed[y] &&
		    (y < r->moved_top || y >= r->moved_bottom))
			continue;
		if (r->prev_valid)
			n = damage_row_runs(r->prev + (size_t)y * r->cols, cur, r->cols, 2,
					    r->runs);
		else {
			r->runs[0] = (struct damage_run){0, r->cols};
			n = 1;
		}
		for (unsigned i = 0; i < n; i++)
			render_run_or_fill(r, y, &r->runs[i], c);
	}
	return render_do_fills(r, c);
}

/* Before a region's move in the RAM copy or by the blitter: the rows
 * outside the region that changed are drawn and, from the RAM copy, written
 * out first. The move touches none of them, so the order changes no pixel;
 * what it changes is when a row beside a scrolling region shows: a line
 * typed below a region that scrolls a flood (the latency benchmark's echo
 * while the terminal scrolls, a status line, an editor's command line) no
 * longer waits for the move and the region's flush, a whole screen's
 * pixels through DRM fbdev emulation. They are then prev's, so the frame's
 * own pass finds nothing left in them. False when the blitter failed. */
static bool render_draw_outside(struct render *r, unsigned top, unsigned bottom,
				struct scroll_counters *c)
{
	bool ok, any = false;

	for (unsigned y = 0; y < r->rows; y++) {
		struct cell *prev = r->prev + (size_t)y * r->cols;
		const struct cell *cur = r->cur + (size_t)y * r->cols;
		unsigned n;

		if ((y >= top && y < bottom) || (r->rows_known && !r->row_changed[y]))
			continue;
		n = damage_row_runs(prev, cur, r->cols, 2, r->runs);
		for (unsigned i = 0; i < n; i++)
			render_run_or_fill(r, y, &r->runs[i], c);
		if (n) {
			memcpy(prev, cur, r->cols * sizeof(*cur));
			r->stats.rows_before_move++;
			any = true;
		}
	}
	ok = render_do_fills(r, c);
	if (any && r->shadow)
		render_flush_shadow(r, c);
	return ok;
}

/* ... and the margins: all of them when prev is not valid, else those of
 * the rows a pan or wrap brought into view. */
static void render_draw_margins(struct render *r, struct scroll_counters *c)
{
	if (!r->prev_valid)
		render_clear_margins(r, 0, r->rows, true, c);
	else if (r->exposed_bottom > r->exposed_top)
		render_clear_margins(r, r->exposed_top, r->exposed_bottom, true, c);
}

/* Field by field: the struct has padding. */
static bool render_palette_equal(const struct palette *a, const struct palette *b)
{
	return a->fg == b->fg && a->bg == b->bg &&
	       memcmp(a->colors, b->colors, sizeof(a->colors)) == 0 &&
	       memcmp(a->slot, b->slot, sizeof(a->slot)) == 0 &&
	       memcmp(a->cmap, b->cmap, sizeof(a->cmap)) == 0;
}

/* Whether this frame may keep the cells libtsm has not changed since the
 * last one: the same screen at the same size, resolved in the same colours,
 * and libtsm's age counter not gone round (age_reset, or lower than the last
 * frame's age: read through tsmpeek, since another caller of
 * tsm_screen_draw(), the vcs mirror, may have taken the reset). Without
 * tsmpeek every frame resolves every cell. */
static bool render_snapshot_keeps(const struct render *r, struct tsm_screen *screen)
{
	const struct tsmpeek_screen *p;

	if (!r->snap_valid || r->snap_screen != screen || !tsmpeek_check(screen))
		return false;
	p = tsmpeek(screen);
	return !p->age_reset && p->age_cnt >= r->snap_age && p->cols == r->snap_width &&
	       p->rows == r->snap_height && render_palette_equal(&r->snap_palette, r->palette);
}

/* One cell of libtsm's screen row y resolved into snap as tsm_screen_draw()
 * gives it (libtsm 4.0.2's tsm-render.c: the cursor and the screen's
 * inverse flag flip reverse video; a space not underlined and an empty cell
 * have no code point). */
static void render_peek_cell(struct render *r, struct tsm_screen *screen,
			     const struct tsmpeek_screen *p, const struct tsmpeek_cell *cell,
			     unsigned x, unsigned y, tsm_age_t age)
{
	struct tsm_screen_attr attr = cell->attr;
	size_t len;

	if (x == MIN(p->cursor_x, p->cols - 1) && y == MIN(p->cursor_y, p->rows - 1) &&
	    !(p->flags & TSM_SCREEN_HIDE_CURSOR))
		attr.inverse = !attr.inverse;
	if (p->flags & TSM_SCREEN_INVERSE)
		attr.inverse = !attr.inverse;
	len = cell->ch == 0 || (cell->ch == ' ' && !attr.underline) ? 0 : 1;
	render_snapshot_cell(screen, 0, &cell->ch, len, cell->width, x, y, &attr, age, r);
}

/* The cell at i again (the cursor's, this frame's or the last one's), and
 * the right half of a wide one there. */
static void render_peek_again(struct render *r, struct tsm_screen *screen,
			      const struct tsmpeek_screen *p, size_t i)
{
	unsigned x = (unsigned)(i % r->cols), y = (unsigned)(i / r->cols);
	const struct tsmpeek_line *line;

	if (i == SIZE_MAX || y >= p->rows || x >= p->cols)
		return;
	line = p->lines[y];
	render_peek_cell(r, screen, p, &line->cells[x], x, y, line->cells[x].age);
	if (x + 1 < MIN(r->cols, p->cols) && line->cells[x + 1].width == 0)
		render_peek_cell(r, screen, p, &line->cells[x + 1], x + 1, y,
				 line->cells[x + 1].age);
}

/* The first of cells [x, cols) that libtsm changed after `since`, or cols:
 * the peek's walk over unchanged cells, which is most of an echo's frame
 * (all but one or two cells of the grid), four at a time with one branch.
 * Host-side, `floor --echo 32 --runs 1` under callgrind (echo_keys
 * collected), instructions for 32 echoes, a cell at a time -> this:
 * --grid 480x135 --stages d32 25.1M -> 14.8M, 160x50 d32 3.50M -> 2.25M,
 * 80x30 d8 1.31M -> 0.94M. */
static unsigned render_peek_next(const struct tsmpeek_cell *cells, unsigned x, unsigned cols,
				 tsm_age_t since)
{
	for (; x + 4 <= cols; x += 4)
		if ((cells[x].age > since) | (cells[x + 1].age > since) |
		    (cells[x + 2].age > since) | (cells[x + 3].age > since))
			break;
	while (x < cols && cells[x].age <= since)
		x++;
	return x;
}

/* The cells libtsm changed since snap_age, read from its lines (tsmpeek.h)
 * rather than through tsm_screen_draw(), whose walk calls back for every
 * cell (0.66M instructions a frame at 160x50, callgrind): with old cells
 * skipped in the callback an echo took 1.65M, this way 0.71M. Only for
 * the plain case: no selection, the view not in the scrollback, no code
 * point libtsm would look up as a sequence, no line narrower than the
 * screen, and no change to the whole screen (its age) unless rows
 * [skip_top, skip_bottom) are left out (a quick frame beside the scroll
 * region: the rows taken are few, all their cells are taken). False when
 * it does not apply; snap is then unchanged or right as far as it got. */
static bool render_snapshot_peek(struct render *r, struct tsm_screen *screen, unsigned skip_top,
				 unsigned skip_bottom)
{
	const struct tsmpeek_screen *p = tsmpeek(screen);
	unsigned cols = MIN(r->cols, p->cols), rows = MIN(r->rows, p->rows);
	tsm_age_t since = r->snap_age;
	/* a change to the whole screen (a scroll moves libtsm's lines):
	 * every cell changed; with rows left out the others are few */
	bool screen_changed = p->age > since;

	if (p->sel_active || p->sb_pos || (screen_changed && skip_top >= skip_bottom))
		return false;
	for (unsigned y = 0; y < rows; y++) {
		const struct tsmpeek_line *line = p->lines[y];
		const struct tsmpeek_cell *cells = line->cells;
		bool all = screen_changed || line->age > since, resolved = false;

		if (line->size < p->cols)
			return false;
		if (y >= skip_top && y < skip_bottom)
			continue;
		for (unsigned x = 0; x < cols; x++) {
			if (!all && cells[x].age <= since && !(resolved && cells[x].width == 0)) {
				resolved = false;
				/* on to the next changed cell (the loop's x++) */
				x = render_peek_next(cells, x + 1, cols, since) - 1;
				continue;
			}
			if (cells[x].ch > 0x10ffff)
				return false;
			render_peek_cell(r, screen, p, &cells[x], x, y,
					 MAX(cells[x].age, line->age));
			resolved = true;
		}
	}
	for (unsigned i = 0; i < 2; i++) {
		size_t c = i ? r->snap_cursor : r->cursor_cell;

		if ((i && c == r->cursor_cell) ||
		    (c != SIZE_MAX && c / r->cols >= skip_top && c / r->cols < skip_bottom))
			continue;
		render_peek_again(r, screen, p, c);
	}
	return true;
}

/* Step 0: libtsm's cells into snap, those it changed since the last frame
 * (all when it cannot tell), then snap into cur, where the overlay, the
 * pointer and the flash go. tsm_screen_draw() returns 0 when libtsm reset
 * its ages: the next frame resolves every cell. True when the cells were
 * taken incrementally (only the rows marked in row_changed changed in
 * snap). */
static bool render_snapshot_take(struct render *r, struct tsm_screen *screen, unsigned skip_top,
				 unsigned skip_bottom)
{
	bool keeps = render_snapshot_keeps(r, screen);
	tsm_age_t age;

	r->fill = r->snap;
	if (!keeps)
		skip_top = skip_bottom = 0; /* every cell, these rows too */
	if (keeps && render_snapshot_peek(r, screen, skip_top, skip_bottom))
		age = tsmpeek(screen)->age_cnt;
	else {
		r->snap_filter = keeps;
		r->snap_resolved = false;
		r->snap_skip_top = skip_top;
		r->snap_skip_bottom = skip_bottom;
		age = tsm_screen_draw(screen, render_snapshot_cell, r);
		r->snap_skip_top = r->snap_skip_bottom = 0;
	}
	r->fill = r->cur;
	r->snap_filter = false;
	if (skip_top < skip_bottom) {
		/* rows left out: what changed there since snap_age is still to
		 * be taken, so snap stays at that age (the rows taken now are
		 * taken again) and at its cursor; if libtsm's ages went round,
		 * the next frame takes every cell */
		if (age == 0)
			r->snap_valid = false;
		return keeps;
	}
	r->snap_valid = age != 0;
	r->snap_age = age;
	r->snap_screen = screen;
	r->snap_width = tsm_screen_get_width(screen);
	r->snap_height = tsm_screen_get_height(screen);
	r->snap_cursor = r->cursor_cell;
	r->snap_palette = *r->palette;
	return keeps;
}

/* snap into cur: only the rows marked in row_changed when cur still holds
 * the last frame's cells (cur_is_last) and snap changed only there; the
 * rows the last frame's overlay and pointer covered are marked already
 * (render_mark_last_rows()). A copy of the whole grid was 0.13M
 * instructions of an echo at 160x50 (callgrind counts `rep movsb` a byte
 * an instruction). */
static void render_snapshot_to_cur(struct render *r, bool incremental)
{
	if (!incremental || !r->cur_is_last || r->last_flash) {
		memcpy(r->cur, r->snap, (size_t)r->cols * r->rows * sizeof(*r->cur));
		return;
	}
	for (unsigned y = 0; y < r->rows; y++)
		if (r->row_changed[y])
			memcpy(r->cur + (size_t)y * r->cols, r->snap + (size_t)y * r->cols,
			       r->cols * sizeof(*r->cur));
}

/* The rows the last frame's overlay and pointer covered, marked in
 * row_changed (the snapshot marked the cells it changed). */
static void render_mark_last_rows(struct render *r)
{
	for (unsigned y = r->last_overlay_top; y < r->last_overlay_end && y < r->rows; y++)
		r->row_changed[y] = true;
	if (r->last_pointer_row >= 0 && (unsigned)r->last_pointer_row < r->rows)
		r->row_changed[r->last_pointer_row] = true;
}

/* ... and this frame's; whether only the marked rows can differ from prev.
 * Remembers this frame's for the next. */
static bool render_mark_rows(struct render *r, bool incremental)
{
	const struct overlay *o = r->overlay;
	unsigned top = 0, end = 0;
	int pointer = -1;

	if (o && o->n > 0 && o->top < r->rows) {
		top = o->top;
		end = MIN(o->top + o->n, r->rows);
	}
	if (r->pointer_col >= 0 && r->pointer_row >= 0 && (unsigned)r->pointer_col < r->cols &&
	    (unsigned)r->pointer_row < r->rows)
		pointer = r->pointer_row;
	for (unsigned y = top; y < end; y++)
		r->row_changed[y] = true;
	if (pointer >= 0)
		r->row_changed[pointer] = true;
	incremental =
	    incremental && r->prev_valid && r->damage_known && !r->flash && !r->last_flash;
	r->last_overlay_top = top;
	r->last_overlay_end = end;
	r->last_pointer_row = pointer;
	r->last_flash = r->flash;
	return incremental;
}

void render_defer_region(struct render *r)
{
	r->defer_next = true;
}

void render_set_check_damage(struct render *r, bool on)
{
	r->check_damage = on;
}

/* render_set_check_damage(): this frame's damage from the marked rows (the
 * row hashes and the guesses made from them) against every row hashed and
 * compared; each disagreement counted in stats.damage_mismatches. */
static void render_check_damage(struct render *r, const struct frame_facts *f, unsigned top,
				unsigned bottom, bool within)
{
	uint64_t *ph = xcalloc(r->rows * 2, sizeof(uint64_t)), *ch = ph + r->rows;
	struct scroll_guess full, region;
	bool changed;

	if (within)
		changed = damage_detect_within(r->prev, r->cur, r->cols, r->rows, top, bottom, ph,
					       ch, &full, &region);
	else
		changed = damage_detect(r->prev, r->cur, r->cols, r->rows, ph, ch, &full, &region);
	for (unsigned y = 0; y < r->rows; y++) {
		size_t at = (size_t)y * r->cols;

		if (ph[y] != r->prev_hash[y] || ch[y] != r->cur_hash[y])
			r->stats.damage_mismatches++;
		else if (!r->row_changed[y] &&
			 memcmp(r->prev + at, r->cur + at, r->cols * sizeof(*r->cur)) != 0)
			r->stats.damage_mismatches++;
	}
	if (changed != f->changed ||
	    (changed && (memcmp(&full, &f->full, sizeof(full)) != 0 ||
			 memcmp(&region, &f->region, sizeof(region)) != 0)))
		r->stats.damage_mismatches++;
	free(ph);
}

/* The frame path, one way down (ARCHITECTURE.md, "A frame"): the cells;
 * 1. what changed (damage.c); 2. the plan (plan.c); 3. the moves (move.c),
 * what failed coming back as data; 4. what is left drawn (render.c);
 * 5. the RAM copy flushed. */
bool render_frame(struct render *r, struct tsm_screen *screen)
{
	uint64_t start = now_usec();
	enum scroll_mode mode = render_base_mode(r);
	struct scroll_counters *c;
	struct cell *tmp;
	uint64_t *tmp_hash;
	bool incremental, hashed = false, defer, deferred = false, region = false, margins;
	unsigned skip_top = 0, skip_bottom = 0, mtop = 0, mbottom = 0;

	render_find_cursor(r, screen);
	/* what a tile code point shows changed: no cached tile is served */
	if (r->images && image_store_generation(r->images) != r->images_generation)
		render_forget_tiles(r);
	/* the colour map may have changed since the last frame */
	if (r->fb->format.indexed)
		memset(r->nearest_key, 0, sizeof(r->nearest_key));
	r->memo.valid = false;
	memset(r->row_changed, 0, r->rows * sizeof(*r->row_changed));
	/* the rows the last frame left (render_defer_region()) still differ */
	for (unsigned y = 0; y < r->rows; y++)
		if (r->row_pending[y]) {
			r->row_changed[y] = true;
			r->row_pending[y] = false;
		}
	defer = r->defer_next;
	r->defer_next = false;
	margins = render_margins(r, screen, &mtop, &mbottom);
	/* a frame that may leave the session's scroll region does not take
	 * its cells either: a quick frame beside a flooded region of 49x160
	 * cells took 6-7 ms resolving them under TCG */
	if (defer && margins) {
		skip_top = mtop;
		skip_bottom = mbottom;
	}
	incremental = render_snapshot_take(r, screen, skip_top, skip_bottom);
	render_mark_last_rows(r);
	render_snapshot_to_cur(r, incremental);
	if (r->overlay)
		render_snapshot_overlay(r);
	render_snapshot_pointer(r);
	render_snapshot_flash(r);
	r->rows_known = render_mark_rows(r, incremental);
	r->moved_top = r->moved_bottom = 0;
	uint64_t cells_done = now_usec();

	r->blitter = render_backend(r);
	r->exposed_top = r->exposed_bottom = 0;
	if (r->prev_valid) {
		struct frame_facts f = render_facts(r);
		struct move_target t = render_move_target(r);
		struct move_report rep;
		struct frame_plan p;
		unsigned top = 0, bottom = 0, rtop = r->rows, rbottom = 0;
		/* with an overlay, the session's rows move beside it, never it */
		bool within = r->overlay && render_movable_rows(r, &top, &bottom);

		if (r->rows_known) {
			damage_hash_changed_rows(r->cur, r->cols, r->rows, r->row_changed,
						 r->prev_hash, r->cur_hash);
			for (unsigned y = 0; y < r->rows; y++)
				r->stats.rows_hashed += r->row_changed[y];
		} else {
			damage_hash_rows(r->prev, r->cols, r->rows, r->prev_hash);
			damage_hash_rows(r->cur, r->cols, r->rows, r->cur_hash);
			r->stats.rows_hashed += 2 * r->rows;
		}
		hashed = true;
		if (within)
			f.changed = damage_guess_within(r->prev_hash, r->cur_hash, r->rows, top,
							bottom, &f.full, &f.region);
		else
			f.changed =
			    damage_guess(r->prev_hash, r->cur_hash, r->rows, &f.full, &f.region);
		if (r->check_damage && r->rows_known)
			render_check_damage(r, &f, top, bottom, within);
		frame_plan_build(&f, &p);
		/* A region that scrolls beside still rows: the rows a move
		 * takes (copy, shadow) and the session's scroll region
		 * (margins) with them; without a move (redrawn: the rows may be
		 * drawn in any order) the scroll region, which a flood of more
		 * lines than it has rows scrolls past any guess, or the guessed
		 * region if it is as good as the whole screen's. */
		if (margins) {
			rtop = mtop;
			rbottom = mbottom;
		}
		if (p.move == FRAME_MOVE_SHADOW || p.move == FRAME_MOVE_COPY) {
			rtop = MIN(rtop, p.top);
			rbottom = MAX(rbottom, p.bottom);
		} else if (rtop >= rbottom && p.move == FRAME_MOVE_NONE && f.region.shift &&
			   f.region.gain >= f.full.gain) {
			rtop = f.region.top;
			rbottom = f.region.bottom;
		}
		region = p.move != FRAME_MOVE_WINDOW && rtop < rbottom &&
			 (rtop > 0 || rbottom < r->rows);
		if (region && !render_draw_outside(r, rtop, rbottom, &r->counters[p.mode]))
			/* the blitter failed filling (only a copy's frame has one):
			 * no copy, the frame falls back as after a failed one */
			rep = (struct move_report){.blitter_failed = true, .copy_failed = true};
		else if (region && defer && r->rows_known) {
			/* the region, its move and its rows, left to the next
			 * frame: what differs there stays marked */
			for (unsigned y = rtop; y < rbottom; y++)
				if (r->row_changed[y]) {
					r->row_pending[y] = true;
					r->cur_hash[y] = r->prev_hash[y];
					r->row_changed[y] = false;
				}
			deferred = true;
			rep = (struct move_report){0};
			p.move = FRAME_MOVE_NONE;
			p.rows_scrolled = 0;
			p.exposed_top = p.exposed_bottom = 0;
		} else {
			if (region && defer)
				log_debug("A frame that could leave its region draws it: the "
					  "cells were not taken incrementally");
			move_run(&t, &p, &r->counters[p.mode], &rep);
		}
		render_moved(r, &p, &rep, f.base);
		mode = p.mode;
	} else {
		/* the next frame's prev: its hashes */
		damage_hash_rows(r->cur, r->cols, r->rows, r->cur_hash);
		r->stats.rows_hashed += r->rows;
		hashed = true;
	}
	c = &r->counters[mode];
	uint64_t detect_done = now_usec();
	if (!render_draw_cells(r, c))
		render_backend_failed(r);
	render_draw_margins(r, c);
	uint64_t draw_done = now_usec();
	if (r->shadow)
		render_flush_shadow(r, c);
	uint64_t end = now_usec();
	r->stats.last = (struct render_frame_times){
	    .cells_usec = cells_done - start,
	    .detect_usec = detect_done - cells_done,
	    .draw_usec = draw_done - detect_done,
	    .flush_usec = end - draw_done,
	    .region_move = region,
	    .deferred = deferred,
	};
	r->stats.frames_deferred += deferred;

	/* prev becomes this frame's cells: the rows that changed or moved
	 * copied when the others are equal, else the buffers swapped (cur is
	 * then no longer the last frame's) */
	if (r->rows_known) {
		for (unsigned y = 0; y < r->rows; y++)
			if (r->row_changed[y] || (y >= r->moved_top && y < r->moved_bottom))
				memcpy(r->prev + (size_t)y * r->cols, r->cur + (size_t)y * r->cols,
				       r->cols * sizeof(*r->cur));
		r->cur_is_last = true;
	} else {
		tmp = r->prev;
		r->prev = r->cur;
		r->cur = tmp;
		r->cur_is_last = false;
	}
	tmp_hash = r->prev_hash;
	r->prev_hash = r->cur_hash;
	r->cur_hash = tmp_hash;
	r->damage_known = hashed;
	/* After a blitter failure the next frame draws everything again,
	 * whatever the engine may have done late. */
	r->prev_valid = !r->redraw_next;
	r->redraw_next = false;
	c->frames++;
	c->render_usec += end - start;
	r->stats.frames++;
	r->stats.render_usec += end - start;
	return !r->prev_valid || r->flush_failed;
}

const struct scroll_counters *render_get_counters(const struct render *r, enum scroll_mode m)
{
	return &r->counters[m];
}
