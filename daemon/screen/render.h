/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * The renderer turns libtsm's screen into pixels. A frame snapshots the
 * screen's cells, each resolved to a glyph and two pixel values (struct
 * cell), kept from frame to frame so that only the cells libtsm changed
 * since (its ages) are resolved again, and compares the snapshot with the
 * last frame drawn: it finds how the screen
 * scrolled (damage.h), moves those rows on the glass with the scroller's
 * strategy (scroll.h: pan, wrap, or rows moved in the shadow copy), then
 * draws every cell that still differs. Glyphs are kept in a cache already
 * expanded to the framebuffer's pixel format, and a run is composed in RAM
 * and written one pixel line at a time: the framebuffer is never read.
 * On a turned screen (rotate.h) all of this happens in the logical screen;
 * a composed run is turned in RAM and written where fbcon would show it,
 * and margins, shadow rows, copies and fills are mapped the same way.
 *
 * The fontset gives each cluster as coverage, which is blended from the
 * cell's background to its foreground (pixel_blend()); a wide cluster is
 * drawn as two cells that each show one half of it, so damage tracking and
 * scrolling stay cell by cell.
 *
 * Colours follow the kernel console where it and xterm agree: the default
 * colours are the palette's (palette.h: 7 on 0 unless the palette or
 * foreground=/background= say otherwise), bold brightens colours 0-7 (also
 * the default foreground when it is colour 7), reverse swaps foreground and
 * background. Blink is fbcon's: the background's intensity flips (0-15).
 * With a bitmap (PSF) font the other attributes are fbcon's colours too
 * (vt.c build_attr): italic, else underline, else dim replace the foreground
 * with colours 2, 6 and 8 (vt.italic=, vt.underline= and the half-bright
 * colour at their defaults); a scalable font draws italic and underline and
 * dims by mixing the foreground halfway to the background. Strikethrough is
 * a line with either (fbcon has none). Dim and strikethrough come from
 * stand-ins (cluster.h).
 *
 * At 1 bpp (pixel.h) the colours are fbcon's two for every cell, swapped by
 * reverse video, and a bitmap glyph is changed as fbcon's update_attr()
 * does: bold and italic smear it one pixel to the right, underline fills
 * its last lines. Every mode then draws one byte a pixel into the RAM copy
 * of shadow mode and packs the changed rows on flush.
 *
 * The cursor is the cell libtsm's tsm_screen_draw() shows it on (its line:
 * the scrollback view moves it down with its line, DECTCEM hides it), in a
 * shape (render_set_cursor()): a block is libtsm's own look, the cell in
 * reverse video; an underline and a bar are drawn over the cell in its
 * foreground colour, on the cell as it shows without a cursor. The shape
 * is part of the cell (struct cell's attr), so moving or changing it is
 * damage like any text, with every scroll strategy and in the logical
 * screen at every rotation.
 */
#include <libtsm.h>
#include <stdbool.h>
#include <stdint.h>

#include "damage.h"
#include "rotate.h"
#include "scroll.h"
#include "../terminal/stream.h"
#include "../devices/fbdev.h"
#include "../../fonts/fontset.h"

struct render;
struct cluster_table;
struct image_store;
struct overlay;

/* Totals over all strategies; the per-strategy figures are in
 * render_get_counters(). */
/* Where the last frame's time went, in microseconds: libtsm's cells taken
 * (the cells libtsm changed, and the overlays), what changed found and moved
 * (damage, plan, moves), the cells drawn (with the margins), the RAM
 * copy flushed (memcpy, packing or pwrite()). */
struct render_frame_times {
	uint64_t cells_usec, detect_usec, draw_usec, flush_usec;
	bool region_move; /* the frame moved (or left) a region smaller than the screen */
	bool deferred;	  /* ... left it to the next frame (render_defer_region()) */
};

struct render_stats {
	uint64_t frames;
	uint64_t cells_drawn;
	uint64_t cells_resolved;    /* libtsm's cells resolved again (the rest kept) */
	uint64_t rows_hashed;	    /* rows hashed for damage (both grids' when not incremental) */
	uint64_t damage_mismatches; /* render_set_check_damage()'s disagreements */
	uint64_t rows_before_move;  /* rows drawn (and flushed) ahead of a region's move */
	uint64_t frames_deferred;   /* frames that left a region to the next */
	uint64_t render_usec;
	struct render_frame_times last;
};

/* Each frame whose damage comes from the rows it marked (render.c,
 * row_changed) also hashes and compares every row and counts in
 * stats.damage_mismatches each row and each guess that disagrees: a check
 * for the tests, a second detection over the whole grid per frame. */
void render_set_check_damage(struct render *r, bool on);

/* The next frame, when a region smaller than the screen scrolls beside
 * still rows (a move of one, or the session's scroll region), draws only
 * the rows outside the region and leaves the region, its move, its rows and
 * their cells, to the frame after it (stats.last.deferred): a key's quick
 * frame draws the line typed under the region, not the region's whole
 * screen of pixels. A frame whose whole screen scrolls, or that was not
 * taken incrementally, is drawn whole. */
void render_defer_region(struct render *r);

/* The renderer draws with `fonts` (which the caller keeps) in its current
 * cell size. -ERANGE (logged) when that cell is larger than the screen. */
int render_new(struct fbdev *fb, struct fontset *fonts, const struct palette *palette,
	       struct render **ret);
void render_free(struct render *r);

/* Stand-ins for combining sequences are drawn as the sequences the table
 * (the terminal's, which outlives the renderer's use of it) says. Call it
 * again after the table was reset: it forgets what it drew of stand-ins. */
void render_set_clusters(struct render *r, const struct cluster_table *clusters);

/* Cells holding an image's tile code point (image.h) show that tile, from
 * `images` (the terminal's store, which outlives the renderer's use of it;
 * NULL: every tile shows the placeholder, the cell's background). Tiles are
 * cached like glyphs and forgotten, their cells drawn again, whenever the
 * store's generation changes. */
void render_set_images(struct render *r, const struct image_store *images);

/* Whether the device's mode (resolution, line length, pixel format) or the
 * fontset's cell size differs from what the renderer's buffers were laid
 * out for. */
bool render_layout_stale(const struct render *r);

/* The rotation (rotate.h) the next render_relayout() lays the screen out
 * for; the grid, damage and the pointer are in the turned (logical) screen,
 * only the writes to the glass are turned. */
void render_set_rotation(struct render *r, enum rotation rot);
enum rotation render_rotation(const struct render *r);

/* The one rebuild path for every change of geometry, pixel format or cell
 * size (zoom, a mode the driver adjusted on re-acquire): lays the grid, the
 * glyph cache and the pixel line out again and forgets the screen and the
 * scroller, which must be set again (render_set_scroller()). On failure
 * (-ERANGE: the cell does not fit the screen) the old layout stays. */
int render_relayout(struct render *r);

/* A handover (fbwatch.h): the renderer draws on fb (NULL while there is
 * none: then nothing of it may be called but render_free(),
 * render_set_clusters() and this) with fonts, both kept by the caller, and
 * forgets the scroller. Before the next frame the caller lays everything out
 * again (render_relayout(), render_set_scroller()). */
void render_set_device(struct render *r, struct fbdev *fb, struct fontset *fonts);

/* Moves are done through the scroller's strategies (NULL: redraw only);
 * in shadow mode this sets up the RAM copy. Invalidates the screen. */
int render_set_scroller(struct render *r, struct scroller *s);

/* The grid at most cols x rows (0: no cap) from the next render_relayout()
 * on: a screen mirroring a terminal on a smaller screen (screens=mirror)
 * draws the same grid, its right and bottom margins wider. A cap makes
 * render_layout_stale() until the relayout. */
void render_set_grid_max(struct render *r, unsigned cols, unsigned rows);
/* The grid the device and the cell would give without a cap. */
void render_fit_grid(const struct render *r, unsigned *ret_cols, unsigned *ret_rows);

unsigned render_cols(const struct render *r);
unsigned render_rows(const struct render *r);

/* For the next user: every byte of the mapped video memory, the pan and wrap
 * area off the screen included, becomes the background (the blitter idle
 * first); the next frame draws everything. Only while the VT is ours. */
void render_wipe_vram(struct render *r);

/* Forget what is on the screen: the next frame draws everything, margins too. */
void render_invalidate(struct render *r);

/* The pointer on the cell col,row of the visible grid (shown as gpm does on
 * the text console: that cell in inverted colours); col < 0 hides it. It is
 * part of the frame's cell snapshot, so moving or hiding it redraws the cell
 * at the next frame (which the caller schedules): no trace, with every
 * scroll strategy. A cell off the grid (after a relayout) shows nothing. */
void render_set_pointer(struct render *r, int col, int row);

/* The visual bell (bell.h): from the next frame on, every cell of the grid
 * shows its colours swapped, until it is set off again; like the pointer,
 * it is part of the frame's cell snapshot, so both changes are drawn as
 * damage (the caller schedules the frames), exactly, with every scroll
 * strategy, and the frame after the flash is the one before it. The
 * margins outside the grid keep the background. */
void render_set_flash(struct render *r, bool on);

/* The cursor's shape from the next frame on (stream.h: DECSCUSR), and
 * whether it shows (false: a blinking cursor's off phase, the cell as
 * without a cursor). A block is libtsm's reverse video; an underline is
 * fbcon's underline cursor (bitblit.c bit_cursor(), CUR_UNDERLINE): the
 * cell's last line, its last two from a height of 10; a bar is the cell's
 * left columns, cell width / 8 of them and at least one (1 for the 8 pixel
 * wide console fonts, 2 for 16: a PSF font zoomed twice draws its strokes
 * twice as wide too). Both in the cell's foreground colour, over what the
 * cell shows: its character stays readable, as under fbcon's cursor. A
 * wide character's cursor underlines both halves and puts the bar left of
 * the first. Until the first call: a steady block. */
void render_set_cursor(struct render *r, enum stream_cursor_shape shape, bool on);

/* Whether the last frame had the cursor on the grid: not hidden (DECTCEM),
 * its line in the view, no overlay row over it. A blinking cursor needs
 * its timer only then. */
bool render_cursor_visible(const struct render *r);

/* Rows drawn over the session's (overlay.h: the kernel messages' band or
 * view; NULL: none), which the caller keeps and lays out for this grid
 * (render_cols(), render_rows()) and must set again (or NULL) before it
 * frees or changes it; it is read at every frame. Its rows replace the
 * session's in the frame's cell snapshot, so that showing, changing and
 * removing it are damage like any other: only its rows are drawn when it
 * comes, the session's cells come back exactly when it goes. While it
 * covers rows, a frame moves no rows across the screen (no full-screen
 * pan, wrap or copy, which would carry the band along): only region moves
 * of the session's rows beside it. The caller schedules the frames. */
void render_set_overlay(struct render *r, const struct overlay *o);

/* Draws what changed in `screen` since the last frame. Returns true when
 * another frame is needed (the blitter failed: everything is drawn again; a
 * pwrite() flush failed: its rows are written again). */
bool render_frame(struct render *r, struct tsm_screen *screen);

const struct render_stats *render_get_stats(const struct render *r);
const struct scroll_counters *render_get_counters(const struct render *r, enum scroll_mode m);

/* fbcon's colours for attributes (vt.c: default_italic_color,
 * default_underline_color, half-bright), as console palette entries. */
#define RENDER_ITALIC_COLOR 2	 /* green */
#define RENDER_UNDERLINE_COLOR 6 /* cyan */
#define RENDER_DIM_COLOR 8	 /* dark grey */

/* Resolves a libtsm attribute, with dim (SGR 2, from a stand-in), to pixel
 * values for a bitmap or a scalable font (exported for unit tests). */
void render_resolve_colors(const struct pixel_format *pf, const struct palette *palette,
			   const struct tsm_screen_attr *attr, bool dim, bool bitmap,
			   uint32_t *ret_fg, uint32_t *ret_bg);
