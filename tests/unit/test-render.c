/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The renderer against a framebuffer in RAM: text fed through the real libtsm
 * vte must give the font's pixels in the right colours, and a second frame
 * must draw only what changed.
 */
#include <libtsm.h>

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "../../daemon/terminal/cluster.h"
#include "../../daemon/terminal/image.h"
#include "../../daemon/devices/fbflush.h"
#include "../../daemon/color/palette.h"
#include "../../daemon/options.h"
#include "../../daemon/screen/overlay.h"
#include "../../daemon/screen/render.h"
#include "../../daemon/terminal/stream.h"
#include "../../daemon/terminal/tsmpeek.h"
#include "../../fonts/font.h"
#include "tests.h"

struct fake {
	struct fbdev fb;
	struct font *font;     /* the built-in font, for the expected pixels */
	struct fontset *fonts; /* the same font as the renderer reads it */
	char font_path[64];
	struct palette palette;
	struct cluster_table *table; /* term.c's stream stage and its stand-ins */
	struct stream *stream;
	struct tsm_screen *screen;
	struct tsm_vte *vte;
	struct render *render;
};

static void vte_write(struct tsm_vte *vte, const char *u8, size_t len, void *data)
{
	(void)vte;
	(void)u8;
	(void)len;
	(void)data;
}

/* The device's mode: what fbdev_reacquire() leaves when the driver set
 * another mode than consoled's. */
static void fake_set_mode(struct fake *f, unsigned bpp, unsigned xres, unsigned yres, unsigned pad)
{
	free(f->fb.map);
	memset(&f->fb.var, 0, sizeof(f->fb.var));
	f->fb.fix.type = FB_TYPE_PACKED_PIXELS;
	f->fb.fix.visual = bpp == 1   ? FB_VISUAL_MONO10
			   : bpp == 8 ? FB_VISUAL_PSEUDOCOLOR
				      : FB_VISUAL_TRUECOLOR;
	f->fb.var.xres = f->fb.var.xres_virtual = xres;
	f->fb.var.yres = f->fb.var.yres_virtual = yres;
	f->fb.var.bits_per_pixel = bpp;
	if (bpp == 32 || bpp == 24) {
		f->fb.var.red = (struct fb_bitfield){16, 8, 0};
		f->fb.var.green = (struct fb_bitfield){8, 8, 0};
		f->fb.var.blue = (struct fb_bitfield){0, 8, 0};
	} else if (bpp == 16) {
		f->fb.var.red = (struct fb_bitfield){11, 5, 0};
		f->fb.var.green = (struct fb_bitfield){5, 6, 0};
		f->fb.var.blue = (struct fb_bitfield){0, 5, 0};
	}
	CHECK(pixel_format_from_fb(&f->fb.fix, &f->fb.var, &f->fb.format) == 0);
	/* an odd line length: padding after each line */
	f->fb.line_length = (unsigned)pixel_line_bytes(&f->fb.format, xres) + pad;
	f->fb.map_size = (size_t)f->fb.line_length * yres;
	f->fb.map = calloc(1, f->fb.map_size);
	memset(f->fb.map, 0x5a, f->fb.map_size);
}

/* A terminal and its renderer on a framebuffer in RAM, drawing with the
 * PSF font psf (through a file: what --font-file does). */
static void fake_init_font(struct fake *f, unsigned bpp, unsigned xres, unsigned yres, unsigned pad,
			   const uint8_t *psf, size_t psf_size)
{
	unsigned w, h;

	memset(f, 0, sizeof(*f));
	fake_set_mode(f, bpp, xres, yres, pad);
	palette_init(&f->palette, PALETTE_LINUX, NULL);
	CHECK(font_load_builtin(&f->font) == 0);
	strcpy(f->font_path, "/tmp/test-render-XXXXXX");
	int fd = mkstemp(f->font_path);
	CHECK(fd >= 0);
	CHECK(write(fd, psf, psf_size) == (ssize_t)psf_size);
	close(fd);
	CHECK(fontset_new(&(struct fontset_config){.file = f->font_path, .mono = bpp <= 8},
			  &f->fonts) == 0);
	w = fontset_cell_width(f->fonts);
	h = fontset_cell_height(f->fonts);
	CHECK(tsm_screen_new(&f->screen, NULL, NULL) == 0);
	CHECK(tsm_screen_resize(f->screen, xres / w, yres / h) == 0);
	CHECK(tsm_vte_new(&f->vte, f->screen, vte_write, NULL, NULL, NULL) == 0);
	CHECK(render_new(&f->fb, f->fonts, &f->palette, &f->render) == 0);
	f->table = cluster_table_new();
	f->stream = stream_new(&(struct stream_config){
	    .vte = f->vte, .screen = f->screen, .table = f->table, .palette = &f->palette});
	render_set_clusters(f->render, f->table);
}

/* ... with the built-in font (Lat15-Fixed16, 8x16), as cell_shows() reads it. */
static void fake_init(struct fake *f, unsigned bpp, unsigned xres, unsigned yres, unsigned pad)
{
	fake_init_font(f, bpp, xres, yres, pad, font_builtin_psf, font_builtin_psf_size);
	CHECK(fontset_cell_width(f->fonts) == 8 && fontset_cell_height(f->fonts) == 16);
}

static void fake_fini(struct fake *f)
{
	render_free(f->render);
	stream_free(f->stream);
	tsm_vte_unref(f->vte);
	tsm_screen_clear_sb(f->screen); /* libtsm leaks the scrollback otherwise */
	tsm_screen_unref(f->screen);
	cluster_table_free(f->table);
	fontset_free(f->fonts);
	unlink(f->font_path);
	font_free(f->font);
	free(f->fb.map);
}

static void feed(struct fake *f, const char *s)
{
	stream_feed(f->stream, s, strlen(s));
}

static uint32_t pixel_at(struct fake *f, unsigned x, unsigned y)
{
	uint8_t *p =
	    f->fb.map + (size_t)y * f->fb.line_length + (size_t)x * f->fb.format.bytes_per_pixel;

	if (f->fb.format.bits_per_pixel == 1) {
		uint8_t b = f->fb.map[(size_t)y * f->fb.line_length + x / 8];

		return (b >> (f->fb.format.lsb_first ? x % 8 : 7 - x % 8)) & 1u;
	}
	switch (f->fb.format.bytes_per_pixel) {
	case 1:
		return p[0];
	case 2:
		return *(uint16_t *)p;
	case 3: /* the CPU's byte order (fbdev's) */
		return __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
			   ? (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2]
			   : p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
	default:
		return *(uint32_t *)p;
	}
}

/* Checks that cell (cx, cy) shows glyph for ch in fg on bg. */
static int cell_shows(struct fake *f, unsigned cx, unsigned cy, uint32_t ch, uint32_t fg,
		      uint32_t bg)
{
	const uint8_t *g = font_glyph(f->font, font_lookup(f->font, ch));

	for (unsigned y = 0; y < 16; y++)
		for (unsigned x = 0; x < 8; x++) {
			int on = g[y] & (0x80 >> x);
			uint32_t want = on ? fg : bg;
			if (pixel_at(f, cx * 8 + x, cy * 16 + y) != want) {
				fprintf(stderr, "cell %u,%u pixel %u,%u: %#x != %#x\n", cx, cy, x,
					y, pixel_at(f, cx * 8 + x, cy * 16 + y), want);
				return 0;
			}
		}
	return 1;
}

/* fbcon's colour map order for the 16 console colours (vt.c color_table). */
static uint32_t slot(unsigned ansi)
{
	static const unsigned vga[16] = {0, 4, 2, 6, 1, 5, 3, 7, 8, 12, 10, 14, 9, 13, 11, 15};
	return ansi < 16 ? vga[ansi] : ansi;
}

static void test_colors_8bpp(void)
{
	struct fake f;
	const struct render_stats *st;

	fake_init(&f, 8, 164, 100, 12); /* 20x6 cells, 4+4 pixel margins */
	tsm_screen_set_flags(f.screen, TSM_SCREEN_HIDE_CURSOR);
	feed(&f, "A\033[31mB\033[1mC\033[0;1mD\033[0;7mE\033[0;44;33mF\033[0;93mG"
		 "\033[0;38;5;196mH\033[0;48;5;244mI\033[0;38;2;0;0;255mJ\033[0m");
	render_frame(f.render, f.screen);
	CHECK(cell_shows(&f, 0, 0, 'A', slot(7), slot(0)));
	CHECK(cell_shows(&f, 1, 0, 'B', slot(1), slot(0)));
	CHECK(cell_shows(&f, 2, 0, 'C', slot(9), slot(0))); /* bold red -> bright red */
	CHECK(cell_shows(&f, 3, 0, 'D', slot(15),
			 slot(0))); /* bold default -> white, as the kernel */
	CHECK(cell_shows(&f, 4, 0, 'E', slot(0), slot(7))); /* reverse */
	CHECK(cell_shows(&f, 5, 0, 'F', slot(3), slot(4)));
	CHECK(cell_shows(&f, 6, 0, 'G', slot(11), slot(0))); /* 93 = bright yellow */
	CHECK(cell_shows(&f, 7, 0, 'H', 196, slot(0)));	     /* 256 colours are exact at 8 bpp */
	CHECK(cell_shows(&f, 8, 0, 'I', slot(7), 244));
	CHECK(cell_shows(&f, 9, 0, 'J', 21, slot(0))); /* rgb -> nearest entry (cube blue) */
	CHECK(cell_shows(&f, 10, 0, ' ', slot(7), slot(0)));
	/* margins cleared to colour 0, padding after the line untouched */
	CHECK_EQ_U(pixel_at(&f, 163, 5), 0);
	CHECK_EQ_U(pixel_at(&f, 5, 99), 0);
	CHECK_EQ_U(f.fb.map[(size_t)0 * f.fb.line_length + 164], 0x5a);

	st = render_get_stats(f.render);
	CHECK_EQ_U(st->frames, 1);
	CHECK_EQ_U(st->cells_drawn, 20 * 6);
	CHECK_EQ_U(render_get_counters(f.render, SCROLL_MODE_REDRAW)->vram_bytes_read, 0);
	CHECK_EQ_U(render_get_counters(f.render, SCROLL_MODE_REDRAW)->frames, 1);
	/* a full screen of cells plus the margins */
	CHECK_EQ_U(render_get_counters(f.render, SCROLL_MODE_REDRAW)->vram_bytes_written,
		   164 * 100);
	fake_fini(&f);
}

static void test_damage_only(void)
{
	struct fake f;
	const struct render_stats *st;
	uint64_t drawn;

	fake_init(&f, 32, 320, 64, 0); /* 40x4 */
	tsm_screen_set_flags(f.screen, TSM_SCREEN_HIDE_CURSOR);
	feed(&f, "hello world\r\nsecond line");
	render_frame(f.render, f.screen);
	st = render_get_stats(f.render);
	drawn = st->cells_drawn;
	CHECK_EQ_U(drawn, 40 * 4);
	CHECK(cell_shows(&f, 0, 0, 'h', 0xaaaaaa, 0));
	CHECK(cell_shows(&f, 7, 1, 'l', 0xaaaaaa, 0));

	/* nothing changed: nothing drawn */
	render_frame(f.render, f.screen);
	CHECK_EQ_U(st->cells_drawn, drawn);

	/* one cell changes: one cell drawn */
	feed(&f, "\033[1;1HH");
	render_frame(f.render, f.screen);
	CHECK_EQ_U(st->cells_drawn, drawn + 1);
	CHECK(cell_shows(&f, 0, 0, 'H', 0xaaaaaa, 0));
	CHECK(cell_shows(&f, 1, 0, 'e', 0xaaaaaa, 0));

	/* after invalidate everything is drawn again */
	render_invalidate(f.render);
	render_frame(f.render, f.screen);
	CHECK_EQ_U(st->cells_drawn, drawn + 1 + 40 * 4);

	/* the visible cursor is an inverted cell */
	tsm_screen_reset_flags(f.screen, TSM_SCREEN_HIDE_CURSOR);
	feed(&f, "\033[2;3H");
	render_frame(f.render, f.screen);
	CHECK(cell_shows(&f, 2, 1, 'c', 0, 0xaaaaaa));
	fake_fini(&f);
}

static void test_16bpp(void)
{
	struct fake f;

	fake_init(&f, 16, 160, 32, 6);
	tsm_screen_set_flags(f.screen, TSM_SCREEN_HIDE_CURSOR);
	feed(&f, "\033[32;41mx");
	render_frame(f.render, f.screen);
	/* green aa -> 6 bits 0x2a; red aa -> 5 bits 0x15 */
	CHECK(cell_shows(&f, 0, 0, 'x', 0x2a << 5, 0x15 << 11));
	fake_fini(&f);
}

/* Checks cells [cx, cx + cells) of row cy at 32 bpp against the fontset's
 * coverage for the cluster, blended by the formula pixel.h promises. */
static int cells_show_styled(struct fake *f, unsigned cx, unsigned cy, const uint32_t *ch,
			     size_t len, unsigned cells, unsigned style, uint32_t fg, uint32_t bg)
{
	unsigned w = 8 * cells;
	const uint8_t *cov = fontset_render(f->fonts, ch, len, cells, style);
	unsigned inked = 0;

	for (unsigned y = 0; y < 16; y++)
		for (unsigned x = 0; x < w; x++) {
			unsigned a = cov[y * w + x], want = 0;

			for (unsigned sh = 0; sh < 24; sh += 8) {
				unsigned cf = (fg >> sh) & 0xff, cb = (bg >> sh) & 0xff;
				want |= ((cb * (255 - a) + cf * a + 127) / 255) << sh;
			}
			inked += a != 0;
			if (pixel_at(f, cx * 8 + x, cy * 16 + y) != want) {
				fprintf(stderr, "cluster U+%04X at %u,%u pixel %u,%u: %#x != %#x\n",
					ch[0], cx, cy, x, y, pixel_at(f, cx * 8 + x, cy * 16 + y),
					want);
				return 0;
			}
		}
	return inked > 0;
}

static int cells_show_cluster(struct fake *f, unsigned cx, unsigned cy, const uint32_t *ch,
			      size_t len, unsigned cells, uint32_t fg, uint32_t bg)
{
	return cells_show_styled(f, cx, cy, ch, len, cells, 0, fg, bg);
}

/* With a PSF font, attributes look as fbcon shows them (vt.c build_attr):
 * italic, underline and dim as colours 2, 6 and 8 in place of the
 * foreground, in that order; bold brightens that colour; blink brightens
 * the background; concealed text is background; strikethrough (which fbcon
 * lacks) a line. */
static void test_attributes_psf(void)
{
	struct fake f;

	fake_init(&f, 32, 320, 64, 0); /* 40x4 */
	tsm_screen_set_flags(f.screen, TSM_SCREEN_HIDE_CURSOR);
	feed(&f, "\033[4mU\033[0m\033[3mI\033[0m\033[2mD\033[0m\033[1;4mB\033[0m\033[5mK"
		 "\033[0m\033[9mS\033[0m\033[8mC\033[0m\033[31;4mR\033[0m\033[7;4mV\033[0m"
		 "\033[2;3mW\033[0m\033[2;4mX\033[0m\033[44;5mY\033[0m\033[2;9mZ\033[0mp");
	render_frame(f.render, f.screen);
	CHECK(cell_shows(&f, 0, 0, 'U', 0x00aaaa, 0));
	CHECK(cell_shows(&f, 1, 0, 'I', 0x00aa00, 0));
	CHECK(cell_shows(&f, 2, 0, 'D', 0x555555, 0));
	CHECK(cell_shows(&f, 3, 0, 'B', 0x55ffff, 0));
	CHECK(cell_shows(&f, 4, 0, 'K', 0xaaaaaa, 0x555555));
	CHECK(cells_show_styled(&f, 5, 0, (const uint32_t[]){'S'}, 1, 1, FONT_STYLE_STRIKE,
				0xaaaaaa, 0));
	CHECK(!cell_shows(&f, 5, 0, 'S', 0xaaaaaa, 0)); /* the line is there */
	CHECK(cell_shows(&f, 6, 0, ' ', 0xaaaaaa, 0));
	CHECK(cell_shows(&f, 7, 0, 'R', 0x00aaaa, 0));
	CHECK(cell_shows(&f, 8, 0, 'V', 0, 0x00aaaa));
	CHECK(cell_shows(&f, 9, 0, 'W', 0x00aa00, 0));
	CHECK(cell_shows(&f, 10, 0, 'X', 0x00aaaa, 0));
	CHECK(cell_shows(&f, 11, 0, 'Y', 0xaaaaaa, 0x5555ff));
	CHECK(cells_show_styled(&f, 12, 0, (const uint32_t[]){'Z'}, 1, 1, FONT_STYLE_STRIKE,
				0x555555, 0));
	CHECK(cell_shows(&f, 13, 0, 'p', 0xaaaaaa, 0));
	fake_fini(&f);

	/* at 8 bpp the same colours are the colour map's entries */
	fake_init(&f, 8, 320, 64, 0);
	tsm_screen_set_flags(f.screen, TSM_SCREEN_HIDE_CURSOR);
	feed(&f, "\033[4mU\033[0;2mD\033[0;3mI");
	render_frame(f.render, f.screen);
	CHECK(cell_shows(&f, 0, 0, 'U', slot(6), slot(0)));
	CHECK(cell_shows(&f, 1, 0, 'D', slot(8), slot(0)));
	CHECK(cell_shows(&f, 2, 0, 'I', slot(2), slot(0)));
	fake_fini(&f);
}

/* With a scalable font italic and underline are the font's, and dim is the
 * foreground mixed halfway to the background. */
static void test_resolve_scalable(void)
{
	struct pixel_format pf = {.bits_per_pixel = 32,
				  .bytes_per_pixel = 4,
				  .red = {16, 8, 0},
				  .green = {8, 8, 0},
				  .blue = {0, 8, 0}};
	struct palette pal;
	struct tsm_screen_attr a = {
	    .fccode = 1, .bccode = TSM_COLOR_BACKGROUND, .underline = 1, .italic = 1};
	uint32_t fg, bg;

	palette_init(&pal, PALETTE_LINUX, NULL);
	render_resolve_colors(&pf, &pal, &a, false, false, &fg, &bg);
	CHECK_EQ_U(fg, 0xaa0000);
	CHECK_EQ_U(bg, 0);
	render_resolve_colors(&pf, &pal, &a, false, true, &fg, &bg);
	CHECK_EQ_U(fg, 0x00aa00); /* bitmap: italic's colour */
	a = (struct tsm_screen_attr){.fccode = -1, .fr = 200, .fg = 100, .fb = 50, .bccode = 4};
	render_resolve_colors(&pf, &pal, &a, true, false, &fg, &bg);
	CHECK_EQ_U(fg, 0x64326e);
	CHECK_EQ_U(bg, 0x0000aa);
	a.inverse = 1;
	render_resolve_colors(&pf, &pal, &a, true, false, &fg, &bg);
	CHECK_EQ_U(fg, 0x0000aa);
	CHECK_EQ_U(bg, 0x64326e);
}

/* A wide character covers exactly two cells, a combining mark joins its base
 * cell, and the cells beside them keep their own pixels. */
static void test_wide_and_combining(void)
{
	struct fake f;

	fake_init(&f, 32, 320, 64, 0); /* 40x4 */
	tsm_screen_set_flags(f.screen, TSM_SCREEN_HIDE_CURSOR);
	feed(&f, "a\xe4\xb8\xad\xe6\x96\x87"
		 "b\r\ne\xcc\x81x\r\n\033[1;31m\xe4\xb8\xad");
	render_frame(f.render, f.screen);
	CHECK(cell_shows(&f, 0, 0, 'a', 0xaaaaaa, 0));
	CHECK(cells_show_cluster(&f, 1, 0, (const uint32_t[]){0x4e2d}, 1, 2, 0xaaaaaa, 0));
	CHECK(cells_show_cluster(&f, 3, 0, (const uint32_t[]){0x6587}, 1, 2, 0xaaaaaa, 0));
	CHECK(cell_shows(&f, 5, 0, 'b', 0xaaaaaa, 0));
	CHECK(cells_show_cluster(&f, 0, 1, (const uint32_t[]){'e', 0x301}, 2, 1, 0xaaaaaa, 0));
	CHECK(cell_shows(&f, 1, 1, 'x', 0xaaaaaa, 0));
	/* both halves take the cluster's colours (bold red: bright red) */
	CHECK(cells_show_cluster(&f, 0, 2, (const uint32_t[]){0x4e2d}, 1, 2, 0xff5555, 0));
	CHECK(cell_shows(&f, 2, 2, ' ', 0xaaaaaa, 0));

	/* overwriting the right half's neighbour redraws only that cell */
	uint64_t drawn = render_get_stats(f.render)->cells_drawn;
	feed(&f, "\033[0m\033[1;6HB");
	render_frame(f.render, f.screen);
	CHECK_EQ_U(render_get_stats(f.render)->cells_drawn, drawn + 1);
	CHECK(cells_show_cluster(&f, 3, 0, (const uint32_t[]){0x6587}, 1, 2, 0xaaaaaa, 0));
	CHECK(cell_shows(&f, 5, 0, 'B', 0xaaaaaa, 0));
	fake_fini(&f);
}

/* The VT comes back with the device in another mode (8 bpp 640x480, now 32
 * bpp 800x600 with padded lines): every buffer follows it (under ASan, a
 * renderer that kept its old buffers writes past them), and the text is
 * drawn right in the new format. */
static void test_relayout(void)
{
	struct fake f;

	fake_init(&f, 8, 640, 480, 0);
	tsm_screen_set_flags(f.screen, TSM_SCREEN_HIDE_CURSOR);
	feed(&f, "first mode");
	render_frame(f.render, f.screen);
	CHECK(!render_layout_stale(f.render));
	CHECK(cell_shows(&f, 0, 0, 'f', slot(7), slot(0)));

	fake_set_mode(&f, 32, 800, 600, 64);
	CHECK(render_layout_stale(f.render));
	CHECK(render_relayout(f.render) == 0);
	CHECK(!render_layout_stale(f.render));
	CHECK_EQ_U(render_cols(f.render), 100);
	CHECK_EQ_U(render_rows(f.render), 37);
	CHECK(tsm_screen_resize(f.screen, 100, 37) == 0);
	feed(&f, "\033[36;98Hend");
	render_invalidate(f.render); /* as after every acquire */
	render_frame(f.render, f.screen);
	CHECK(cell_shows(&f, 0, 0, 'f', 0xaaaaaa, 0));
	CHECK(cell_shows(&f, 97, 35, 'e', 0xaaaaaa, 0));
	CHECK(cell_shows(&f, 99, 35, 'd', 0xaaaaaa, 0));
	/* the margin right of the grid and below it are background */
	CHECK_EQ_U(pixel_at(&f, 799, 599), 0);

	/* a cell that no longer fits: refused, the layout stays */
	fake_set_mode(&f, 32, 4, 4, 0);
	CHECK(render_relayout(f.render) == -ERANGE);
	/* nor at a start, too narrow or too low by a pixel: -ERANGE, which
	 * main.c makes the permanent exit status EXIT_FONT_TOO_LARGE */
	struct render *r = NULL;
	fake_set_mode(&f, 32, 7, 100, 0);
	CHECK(render_new(&f.fb, f.fonts, &f.palette, &r) == -ERANGE);
	fake_set_mode(&f, 8, 100, 15, 0);
	CHECK(render_new(&f.fb, f.fonts, &f.palette, &r) == -ERANGE);
	CHECK(r == NULL);
	fake_set_mode(&f, 32, 8, 16, 0);
	CHECK(render_new(&f.fb, f.fonts, &f.palette, &r) == 0);
	render_free(r);
	fake_fini(&f);
}

/* After a new session reset the cluster table, the first stand-in means
 * another cluster: the renderer must not draw the old one's cached pixels. */
static void test_cluster_reset(void)
{
	struct fake f;

	fake_init(&f, 32, 320, 64, 0);
	tsm_screen_set_flags(f.screen, TSM_SCREEN_HIDE_CURSOR);
	feed(&f, "e\xcc\x81");
	render_frame(f.render, f.screen);
	CHECK(cells_show_cluster(&f, 0, 0, (const uint32_t[]){'e', 0x301}, 2, 1, 0xaaaaaa, 0));

	/* what term_restart() and the respawn do */
	tsm_vte_hard_reset(f.vte);
	tsm_screen_erase_screen(f.screen, false);
	cluster_table_reset(f.table);
	stream_reset(f.stream);
	render_set_clusters(f.render, f.table);
	render_frame(f.render, f.screen);
	tsm_screen_set_flags(f.screen, TSM_SCREEN_HIDE_CURSOR);
	feed(&f, "a\xcc\x80");
	render_frame(f.render, f.screen);
	CHECK(cells_show_cluster(&f, 0, 0, (const uint32_t[]){'a', 0x300}, 2, 1, 0xaaaaaa, 0));
	fake_fini(&f);
}

/* Shadow mode (rows moved in RAM, changed rows written out) must leave the
 * very same pixels as redrawing, frame after frame, through scrolls of the
 * screen and of regions, inserts, deletes and edits. */
static void test_shadow_equals_redraw(void)
{
	struct fake a, b;
	struct scroller *s = NULL;
	struct scroller_config cfg = {.mode = SCROLL_MODE_SHADOW, .font_height = 16};
	char buf[128];
	unsigned seed = 42;

	fake_init(&a, 32, 320, 160, 8); /* 40x10 */
	fake_init(&b, 32, 320, 160, 8);
	cfg.text_rows = render_rows(b.render);
	CHECK(scroller_new(&b.fb, &cfg, &s) == 0);
	CHECK(render_set_scroller(b.render, s) == 0);
	for (unsigned i = 0; i < 400; i++) {
		unsigned op = (unsigned)rand_r(&seed) % 10;

		if (op < 6)
			snprintf(buf, sizeof(buf), "line %u %.*s\r\n", i, (int)(rand_r(&seed) % 30),
				 "abcdefghijklmnopqrstuvwxyz0123456789");
		else if (op == 6)
			snprintf(buf, sizeof(buf),
				 "\033[3;8r\033[8;1H\033D\033[1;31mregion %u\033[0m\033[r", i);
		else if (op == 7)
			snprintf(buf, sizeof(buf),
				 "\033[3;8r\033[3;1H\033M\033[44mrev %u\033[0m\033[r", i);
		else if (op == 8)
			snprintf(buf, sizeof(buf), "\033[%u;1H\033[%uL\033[%u;1H\033[2M", 1 + i % 9,
				 1 + i % 3, 1 + (i * 7) % 9);
		else
			snprintf(buf, sizeof(buf), "\033[%u;%uHX\033[10;1H", 1 + i % 10,
				 1 + i % 40);
		feed(&a, buf);
		feed(&b, buf);
		if (rand_r(&seed) % 3 == 0) {
			render_frame(a.render, a.screen);
			render_frame(b.render, b.screen);
			if (memcmp(a.fb.map, b.fb.map, a.fb.map_size) != 0) {
				fprintf(stderr, "shadow differs from redraw after step %u\n", i);
				CHECK(0);
				break;
			}
		}
	}
	CHECK(render_get_counters(b.render, SCROLL_MODE_SHADOW)->rows_scrolled > 0);
	CHECK_EQ_U(render_get_counters(b.render, SCROLL_MODE_SHADOW)->vram_bytes_read, 0);
	render_set_scroller(b.render, NULL);
	scroller_free(s);
	fake_fini(&a);
	fake_fini(&b);
}

/* With --fb-flush=write, a pwrite() that fails (the device refused it) must
 * not lose the rows: render_frame() asks for another frame, and that frame
 * writes them, though the text did not change in between. The device is a
 * file here: first opened read-only (EBADF), then writable. */
static void test_write_flush_retry(void)
{
	struct fake a, b;
	struct scroller *s = NULL;
	struct scroller_config cfg = {
	    .mode = SCROLL_MODE_SHADOW, .font_height = 16, .flush = FB_FLUSH_WRITE};
	char path[] = "/tmp/test-render-fb-XXXXXX";
	int rw = mkstemp(path), ro;
	uint8_t *file;

	CHECK(rw >= 0);
	fake_init(&a, 32, 320, 160, 8);
	fake_init(&b, 32, 320, 160, 8);
	CHECK(ftruncate(rw, (off_t)b.fb.map_size) == 0);
	ro = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(ro >= 0);
	b.fb.fd = ro;
	cfg.text_rows = render_rows(b.render);
	CHECK(scroller_new(&b.fb, &cfg, &s) == 0);
	CHECK(render_set_scroller(b.render, s) == 0);
	feed(&a, "\033[1;33mfirst\r\nsecond line\033[0m");
	feed(&b, "\033[1;33mfirst\r\nsecond line\033[0m");
	render_frame(a.render, a.screen);
	CHECK(render_frame(b.render, b.screen)); /* failed: another frame */
	b.fb.fd = rw;
	CHECK(!render_frame(b.render, b.screen)); /* written: no more */
	file = malloc(b.fb.map_size);
	CHECK(pread(rw, file, b.fb.map_size, 0) == (ssize_t)b.fb.map_size);
	/* the file's lines against the redraw's, padding left out */
	for (unsigned y = 0; y < 160; y++)
		if (memcmp(file + (size_t)y * b.fb.line_length,
			   a.fb.map + (size_t)y * a.fb.line_length, 320 * 4) != 0) {
			fprintf(stderr, "line %u was not written again after the failure\n", y);
			CHECK(0);
			break;
		}
	free(file);
	render_set_scroller(b.render, NULL);
	scroller_free(s);
	close(ro);
	close(rw);
	unlink(path);
	fake_fini(&a);
	fake_fini(&b);
}

/* A turned screen must show the upright picture of the same bytes turned
 * (fbcon's placement, written out here pixel by pixel: rotate.h), margins
 * included, frame after frame, drawn by redraw and by shadow (rows moved in
 * RAM: columns of the glass when turned sideways). The grid leaves margins
 * on both sides (330x170 with an 8x16 cell). */
static void ref_place(enum rotation rot, unsigned xres, unsigned yres, unsigned x, unsigned y,
		      unsigned *px, unsigned *py)
{
	*px = rot == ROTATE_CW ? xres - 1 - y : rot == ROTATE_UD ? xres - 1 - x : rot ? y : x;
	*py = rot == ROTATE_CW ? x : rot == ROTATE_UD ? yres - 1 - y : rot ? yres - 1 - x : y;
}

static int turned_equals(struct fake *up, struct fake *t, enum rotation rot)
{
	for (unsigned y = 0; y < up->fb.var.yres; y++)
		for (unsigned x = 0; x < up->fb.var.xres; x++) {
			unsigned px, py;

			ref_place(rot, t->fb.var.xres, t->fb.var.yres, x, y, &px, &py);
			if (pixel_at(up, x, y) != pixel_at(t, px, py)) {
				fprintf(stderr,
					"rotation %d: logical %u,%u (%#x) at %u,%u is %#x\n", rot,
					x, y, pixel_at(up, x, y), px, py, pixel_at(t, px, py));
				return 0;
			}
		}
	return 1;
}

static void test_rotation(void)
{
	const unsigned lw = 330, lh = 170;

	for (int rot = 1; rot < _ROTATE_MAX; rot++)
		for (int shadow = 0; shadow < 2; shadow++) {
			struct fake a, b;
			struct scroller *s = NULL;
			struct scroller_config cfg = {
			    .mode = SCROLL_MODE_SHADOW, .font_height = 16, .rotation = rot};
			char buf[128];
			unsigned seed = 7, frames = 0;
			bool side = rotate_sideways(rot);

			fake_init(&a, 32, lw, lh, 8);
			fake_init(&b, 32, side ? lh : lw, side ? lw : lh, 4);
			render_set_rotation(b.render, rot);
			CHECK(render_relayout(b.render) == 0);
			CHECK_EQ_U(render_cols(b.render), render_cols(a.render));
			CHECK_EQ_U(render_rows(b.render), render_rows(a.render));
			CHECK(tsm_screen_resize(b.screen, render_cols(b.render),
						render_rows(b.render)) == 0);
			if (shadow) {
				cfg.text_rows = render_rows(b.render);
				CHECK(scroller_new(&b.fb, &cfg, &s) == 0);
				CHECK(render_set_scroller(b.render, s) == 0);
			}
			for (unsigned i = 0; i < 120; i++) {
				unsigned op = (unsigned)rand_r(&seed) % 8;

				if (op < 4)
					snprintf(buf, sizeof(buf), "\033[3%um%u %.*s\r\n", i % 8, i,
						 (int)(rand_r(&seed) % 40),
						 "abcdefghijklmnopqrstuvwxyz0123456789@#$%&*()");
				else if (op == 4)
					snprintf(buf, sizeof(buf),
						 "\033[3;8r\033[8;1H\033D\033[1;31mregion %u\033[0m"
						 "\033[r",
						 i);
				else if (op == 5)
					snprintf(
					    buf, sizeof(buf),
					    "\033[3;8r\033[3;1H\033M\033[44mrev %u\033[0m\033[r",
					    i);
				else if (op == 6)
					snprintf(buf, sizeof(buf),
						 "\033[%u;1H\033[2L\033[%u;1H\033[M", 1 + i % 9,
						 1 + (i * 7) % 9);
				else
					snprintf(buf, sizeof(buf), "\033[%u;%uHX\033[10;1H",
						 1 + i % 10, 1 + i % 40);
				feed(&a, buf);
				feed(&b, buf);
				if (rand_r(&seed) % 3 == 0 || i == 119) {
					render_frame(a.render, a.screen);
					render_frame(b.render, b.screen);
					frames++;
					if (!turned_equals(&a, &b, rot)) {
						fprintf(stderr, "%s, after step %u\n",
							shadow ? "shadow" : "redraw", i);
						CHECK(0);
						break;
					}
				}
			}
			CHECK(frames > 10);
			if (shadow) {
				CHECK(render_get_counters(b.render, SCROLL_MODE_SHADOW)
					  ->rows_scrolled > 0);
				render_set_scroller(b.render, NULL);
				scroller_free(s);
			}
			fake_fini(&a);
			fake_fini(&b);
		}
}

/* What a pixel shows: through the colour map at 8 bpp, as it is at 32. */
static uint32_t pixel_rgb(struct fake *f, unsigned x, unsigned y)
{
	uint32_t v = pixel_at(f, x, y);
	struct rgb c;

	if (!f->fb.format.indexed)
		return v;
	c = f->palette.cmap[v & 0xff];
	return (uint32_t)c.r << 16 | (uint32_t)c.g << 8 | c.b;
}

/* Checks that cell (cx, cy) shows the glyph for ch in the colours fg on bg
 * (0xrrggbb). */
static int cell_shows_rgb(struct fake *f, unsigned cx, unsigned cy, uint32_t ch, uint32_t fg,
			  uint32_t bg)
{
	const uint8_t *g = font_glyph(f->font, font_lookup(f->font, ch));

	for (unsigned y = 0; y < 16; y++)
		for (unsigned x = 0; x < 8; x++) {
			uint32_t want = g[y] & (0x80 >> x) ? fg : bg;
			uint32_t got = pixel_rgb(f, cx * 8 + x, cy * 16 + y);

			if (got != want) {
				fprintf(stderr, "cell %u,%u pixel %u,%u: #%06x != #%06x\n", cx, cy,
					x, y, got, want);
				return 0;
			}
		}
	return 1;
}

/* A named palette with colour keys over it, at 8 and 32 bpp: SGR colours,
 * the default colours (the background one of its own: at 8 bpp in cube 16's
 * slot) and the margins show exactly the configured colours. */
static void test_palette_pixels(void)
{
	static const unsigned depths[] = {8, 32};

	for (unsigned d = 0; d < 2; d++) {
		struct options o = {.palette = PALETTE_SOLARIZED};
		struct fake f;

		o.colors[2] = 0x123456;
		o.colors[OPTIONS_COLOR_BACKGROUND] = 0x102030;
		o.colors_set = 1u << 2 | 1u << OPTIONS_COLOR_BACKGROUND;
		fake_init(&f, depths[d], 164, 100, 12);
		palette_from_options(&f.palette, &o, NULL);
		tsm_screen_set_flags(f.screen, TSM_SCREEN_HIDE_CURSOR);
		feed(&f, "A\033[31mB\033[32mC\033[0;44mD\033[0;7mE\033[0;38;5;231mF"
			 "\033[0;38;5;196mG\033[0m");
		render_frame(f.render, f.screen);
		CHECK(cell_shows_rgb(&f, 0, 0, 'A', 0x839496, 0x102030)); /* base0 */
		CHECK(cell_shows_rgb(&f, 1, 0, 'B', 0xdc322f, 0x102030)); /* red */
		CHECK(cell_shows_rgb(&f, 2, 0, 'C', 0x123456, 0x102030)); /* color2= */
		CHECK(cell_shows_rgb(&f, 3, 0, 'D', 0x839496, 0x268bd2)); /* blue */
		CHECK(cell_shows_rgb(&f, 4, 0, 'E', 0x102030, 0x839496)); /* reverse */
		CHECK(cell_shows_rgb(&f, 5, 0, 'F', 0xffffff, 0x102030)); /* cube white */
		CHECK(cell_shows_rgb(&f, 6, 0, 'G', 0xff0000, 0x102030));
		CHECK(cell_shows_rgb(&f, 7, 0, ' ', 0x839496, 0x102030));
		/* margins in the default background */
		CHECK_EQ_U(pixel_rgb(&f, 163, 5), 0x102030);
		CHECK_EQ_U(pixel_rgb(&f, 5, 99), 0x102030);
		if (f.fb.format.indexed)
			CHECK_EQ_U(pixel_at(&f, 5, 99), PALETTE_BG_SLOT);
		fake_fini(&f);
	}
}

/* The kernel messages' band (overlay.h) over a session that keeps going
 * under it: at every rotation, at 8, 32 and 1 bpp, redrawn and with rows
 * moved in RAM (shadow), the band's cells show its text in its colours,
 * every other pixel is the picture of a renderer that never had a band,
 * and once the band is gone the whole framebuffer is that picture. */

/* Cell (cx, cy) of the logical grid, on a screen turned rot, shows ch in
 * fg on bg. */
static int cell_shows_turned(struct fake *f, enum rotation rot, unsigned cx, unsigned cy,
			     uint32_t ch, uint32_t fg, uint32_t bg)
{
	const uint8_t *g = font_glyph(f->font, font_lookup(f->font, ch));

	for (unsigned y = 0; y < 16; y++)
		for (unsigned x = 0; x < 8; x++) {
			uint32_t want = g[y] & (0x80 >> x) ? fg : bg;
			unsigned px, py;

			ref_place(rot, f->fb.var.xres, f->fb.var.yres, cx * 8 + x, cy * 16 + y, &px,
				  &py);
			if (pixel_at(f, px, py) != want) {
				fprintf(stderr, "cell %u,%u (U+%04x) pixel %u,%u: %#x != %#x\n", cx,
					cy, ch, x, y, pixel_at(f, px, py), want);
				return 0;
			}
		}
	return 1;
}

/* What a band cell's colours are: reverse video of the colours given
 * swapped (overlay.h), so fg is its background code. */
static void band_pixels(struct fake *f, const struct overlay_cell *c, uint32_t *fg, uint32_t *bg)
{
	const struct pixel_format *pf = &f->fb.format;

	CHECK(c->attr.inverse);
	if (pf->mono) {
		*fg = pf->mono_bg;
		*bg = pf->mono_fg;
		return;
	}
	*fg = pixel_from_index(pf, &f->palette, (unsigned)c->attr.bccode);
	*bg = pixel_from_index(pf, &f->palette, (unsigned)c->attr.fccode);
}

/* The band's cells on a, and every pixel outside them as on b. */
static int band_over(struct fake *a, struct fake *b, const struct overlay *o, enum rotation rot)
{
	struct rotate_rect br =
	    rotate_rect_to_physical(rot, a->fb.var.xres, a->fb.var.yres,
				    (struct rotate_rect){0, o->top * 16, o->cols * 8, o->n * 16});

	for (unsigned i = 0; i < o->n; i++)
		for (unsigned x = 0; x < o->cols; x++) {
			const struct overlay_cell *c = &o->cells[(size_t)i * o->cols + x];
			uint32_t fg, bg;

			band_pixels(a, c, &fg, &bg);
			if (!cell_shows_turned(a, rot, x, o->top + i, c->ch, fg, bg))
				return 0;
		}
	for (unsigned y = 0; y < a->fb.var.yres; y++)
		for (unsigned x = 0; x < a->fb.var.xres; x++) {
			if (x >= br.x && x < br.x + br.w && y >= br.y && y < br.y + br.h)
				continue;
			if (pixel_at(a, x, y) != pixel_at(b, x, y)) {
				fprintf(stderr, "outside the band, pixel %u,%u: %#x != %#x\n", x, y,
					pixel_at(a, x, y), pixel_at(b, x, y));
				return 0;
			}
		}
	return 1;
}

/* a and b on the same screen, turned rot, redrawn or in shadow mode. */
static void band_fakes(struct fake *a, struct fake *b, struct scroller **s, unsigned bpp,
		       enum rotation rot, bool shadow)
{
	const unsigned lw = 330, lh = 170;
	bool side = rotate_sideways(rot);
	struct fake *f[2] = {a, b};

	for (unsigned i = 0; i < 2; i++) {
		fake_init(f[i], bpp, side ? lh : lw, side ? lw : lh, 4);
		render_set_rotation(f[i]->render, rot);
		CHECK(render_relayout(f[i]->render) == 0);
		CHECK(tsm_screen_resize(f[i]->screen, render_cols(f[i]->render),
					render_rows(f[i]->render)) == 0);
		tsm_screen_set_flags(f[i]->screen, TSM_SCREEN_HIDE_CURSOR);
		s[i] = NULL;
		if (shadow) {
			struct scroller_config cfg = {.mode = SCROLL_MODE_SHADOW,
						      .font_height = 16,
						      .rotation = rot,
						      .text_rows = render_rows(f[i]->render)};

			CHECK(scroller_new(&f[i]->fb, &cfg, &s[i]) == 0);
			CHECK(render_set_scroller(f[i]->render, s[i]) == 0);
		}
	}
}

static void band_fakes_fini(struct fake *a, struct fake *b, struct scroller **s)
{
	render_set_scroller(a->render, NULL);
	render_set_scroller(b->render, NULL);
	scroller_free(s[0]);
	scroller_free(s[1]);
	fake_fini(a);
	fake_fini(b);
}

/* The session's output: lines, region scrolls both ways, inserts and
 * deletes, single cells. */
static void session_step(unsigned i, unsigned *seed, char *buf, size_t size)
{
	unsigned op = (unsigned)rand_r(seed) % 8;

	if (op < 4)
		snprintf(buf, size, "\033[3%um%u %.*s\033[0m\r\n", i % 8, i,
			 (int)(rand_r(seed) % 40), "abcdefghijklmnopqrstuvwxyz0123456789@#$%&*()");
	else if (op == 4)
		snprintf(buf, size, "\033[3;8r\033[8;1H\033D\033[1;31mregion %u\033[0m\033[r", i);
	else if (op == 5)
		snprintf(buf, size, "\033[3;8r\033[3;1H\033M\033[44mrev %u\033[0m\033[r", i);
	else if (op == 6)
		snprintf(buf, size, "\033[%u;1H\033[2L\033[%u;1H\033[M", 1 + i % 9,
			 1 + (i * 7) % 9);
	else
		snprintf(buf, size, "\033[%u;%uHX\033[10;1H", 1 + i % 10, 1 + i % 40);
}

/* A redraw (a) beside shadow mode with fb-flush write (b) whose device is
 * a file of pad bytes of padding a line, 40x10 cells each; file holds room
 * for b's device read back. */
struct write_pair {
	struct fake a, b;
	struct scroller *s;
	char path[32];
	int fd;
	uint8_t *file;
};

static void write_pair_init_mode(struct write_pair *w, unsigned pad, enum scroll_mode mode)
{
	struct scroller_config cfg = {.mode = mode, .font_height = 16, .flush = FB_FLUSH_WRITE};

	snprintf(w->path, sizeof(w->path), "/tmp/test-render-fb-XXXXXX");
	w->fd = mkstemp(w->path);
	w->s = NULL;
	CHECK(w->fd >= 0);
	fake_init(&w->a, 32, 320, 160, pad);
	fake_init(&w->b, 32, 320, 160, pad);
	CHECK(ftruncate(w->fd, (off_t)w->b.fb.map_size) == 0);
	w->b.fb.fd = w->fd;
	cfg.text_rows = render_rows(w->b.render);
	CHECK(scroller_new(&w->b.fb, &cfg, &w->s) == 0);
	CHECK(render_set_scroller(w->b.render, w->s) == 0);
	w->file = malloc(w->b.fb.map_size);
	CHECK(w->file != NULL);
}

static void write_pair_init(struct write_pair *w, unsigned pad)
{
	write_pair_init_mode(w, pad, SCROLL_MODE_SHADOW);
}

static void write_pair_fini(struct write_pair *w)
{
	free(w->file);
	render_set_scroller(w->b.render, NULL);
	scroller_free(w->s);
	close(w->fd);
	unlink(w->path);
	fake_fini(&w->a);
	fake_fini(&w->b);
}

/* fb-flush write on a device whose lines are padded (8 bytes here): the
 * device (a file) must hold what a redraw draws after every frame of
 * echoes, lines, region scrolls, inserts and deletes. */
static void test_write_flush_narrow(void)
{
	struct write_pair w;
	struct fake *a = &w.a, *b = &w.b;
	char buf[128];
	unsigned seed = 5;

	write_pair_init(&w, 8); /* 8 bytes of padding a line */
	for (unsigned i = 0; i < 300; i++) {
		const struct scroll_counters *sc =
		    render_get_counters(b->render, SCROLL_MODE_SHADOW);
		uint64_t written = sc->vram_bytes_written;
		bool echo = i % 3 != 0;

		if (echo)
			snprintf(buf, sizeof(buf), "%c", 'a' + (char)(i % 26));
		else
			session_step(i, &seed, buf, sizeof(buf));
		feed(a, buf);
		feed(b, buf);
		render_frame(a->render, a->screen);
		render_frame(b->render, b->screen);
		/* the visible lines, where the window is (var.yoffset) */
		CHECK(pread(w.fd, w.file, 160 * b->fb.line_length,
			    (off_t)b->fb.var.yoffset * b->fb.line_length) ==
		      (ssize_t)(160 * b->fb.line_length));
		for (unsigned y = 0; y < 160; y++)
			if (memcmp(w.file + (size_t)y * b->fb.line_length,
				   a->fb.map + (size_t)y * a->fb.line_length, 320 * 4) != 0) {
				fprintf(stderr, "narrow flush: step %u, line %u differs\n", i, y);
				CHECK(0);
				i = 300;
				break;
			}
		(void)written;
	}
	write_pair_fini(&w);
}

/* A region that scrolls while a row below it changes, in one frame
 * (a status line under a flood): the row outside the region is drawn and
 * written out ahead of the region's move (rows_before_move), and the device
 * holds what a redraw draws, frame after frame; a scroll of the whole
 * screen has no row outside it. */
static void test_rows_before_move(void)
{
	struct write_pair w;
	struct fake *a = &w.a, *b = &w.b;
	char buf[160];
	uint64_t before = 0;

	write_pair_init(&w, 0);
	for (unsigned i = 0; i < 40; i++) {
		const struct render_stats *st = render_get_stats(b->render);

		if (i == 0)
			snprintf(buf, sizeof(buf),
				 "\033[?25l\033[H\033[2J\033[1;9r1\r\n2\r\n3\r\n4\r\n5\r\n6"
				 "\r\n7\r\n8\r\n9");
		else if (i % 8 == 7)
			/* the whole screen scrolls: nothing outside it */
			snprintf(buf, sizeof(buf), "\033[r\033[10;1H\r\n\033[1;9r");
		else
			/* three lines into rows 1-9, a key's echo on row 10 */
			snprintf(buf, sizeof(buf),
				 "\0337\033[9;1H\r\nline %u a\r\nline %u b\r\nline %u c"
				 "\033[10;%uH%c\0338",
				 i, i, i, i, 'a' + (char)(i % 26));
		before = st->rows_before_move;
		feed(a, buf);
		feed(b, buf);
		render_frame(a->render, a->screen);
		render_frame(b->render, b->screen);
		if (i > 0 && i % 8 != 7)
			CHECK_EQ_U(st->rows_before_move - before, 1);
		else
			CHECK_EQ_U(st->rows_before_move - before, 0);
		CHECK(pread(w.fd, w.file, b->fb.map_size, 0) == (ssize_t)b->fb.map_size);
		if (memcmp(w.file, a->fb.map, 160 * a->fb.line_length) != 0) {
			fprintf(stderr, "rows before the move: step %u differs\n", i);
			CHECK(0);
			break;
		}
	}
	CHECK(render_get_counters(b->render, SCROLL_MODE_SHADOW)->rows_scrolled > 0);
	write_pair_fini(&w);
}

/* render_defer_region(): a frame asked to defer, where a region scrolls
 * and the row below it changes, draws that row alone (the region's pixels
 * stay the last frame's), several such frames in a row too; a frame that
 * scrolls the whole screen is drawn whole; and the next frame not asked to
 * defer leaves what a redraw draws. The damage from the marked rows agrees
 * with a whole detection throughout (render_set_check_damage()). */
static void defer_region(enum scroll_mode mode)
{
	struct write_pair w;
	struct fake *a = &w.a, *b = &w.b;
	const struct render_stats *st;
	size_t line, region;
	uint8_t *before;
	char buf[512];
	unsigned deferred = 0;

	write_pair_init_mode(&w, 0, mode);
	line = b->fb.line_length;
	region = 144 * line; /* rows 1-9 of 16 lines */
	before = malloc(b->fb.map_size);
	CHECK(before != NULL);
	st = render_get_stats(b->render);
	render_set_check_damage(b->render, true);
	for (unsigned i = 0; i < 60; i++) {
		bool full = i % 8 == 4, defer = i > 0 && i % 4 != 0;

		if (i == 0)
			snprintf(buf, sizeof(buf),
				 "\033[?25l\033[H\033[2J\033[1;9r1\r\n2\r\n3\r\n4\r\n5\r\n6"
				 "\r\n7\r\n8\r\n9");
		else if (full)
			snprintf(buf, sizeof(buf), "\033[r\033[10;1H\r\n\033[1;9r");
		else if (!defer)
			/* a key alone: what the region has to show is what the
			 * frames before left */
			snprintf(buf, sizeof(buf), "\0337\033[10;%uH%c\0338", 1 + i % 40,
				 'A' + (char)(i % 26));
		else {
			/* two lines into rows 1-9, or twelve (more than the
			 * region holds: no move is found, the region is the
			 * session's scroll region), and a key's echo on row 10 */
			int n = snprintf(buf, sizeof(buf), "\033[9;1H");

			for (unsigned k = 0; k < (i % 4 == 3 ? 12u : 2u); k++)
				n += snprintf(buf + n, sizeof(buf) - (size_t)n, "\r\nline %u %u", i,
					      k);
			snprintf(buf + n, sizeof(buf) - (size_t)n, "\033[10;%uH%c", 1 + i % 40,
				 'a' + (char)(i % 26));
		}
		CHECK(pread(w.fd, before, b->fb.map_size, 0) == (ssize_t)b->fb.map_size);
		feed(a, buf);
		feed(b, buf);
		if (defer)
			render_defer_region(b->render);
		render_frame(a->render, a->screen);
		render_frame(b->render, b->screen);
		CHECK(pread(w.fd, w.file, b->fb.map_size, 0) == (ssize_t)b->fb.map_size);
		if (defer && !full) {
			CHECK(st->last.deferred);
			deferred += st->last.deferred;
			/* the region as it was, the row below it drawn */
			if (memcmp(w.file, before, region) != 0 ||
			    memcmp(w.file + region, a->fb.map + region, 16 * line) != 0) {
				fprintf(stderr, "defer: step %u shows the wrong rows\n", i);
				CHECK(0);
				break;
			}
			continue;
		}
		CHECK(!st->last.deferred);
		if (memcmp(w.file, a->fb.map, 160 * line) != 0) {
			fprintf(stderr, "defer: step %u differs from a redraw\n", i);
			CHECK(0);
			break;
		}
	}
	CHECK(deferred >= 20);
	CHECK_EQ_U(st->frames_deferred, deferred);
	CHECK_EQ_U(st->damage_mismatches, 0);
	free(before);
	write_pair_fini(&w);
}

static void test_defer_region(void)
{
	/* the region moved in the RAM copy, or redrawn (fb-flush write keeps
	 * a RAM copy either way: bochs-drm's auto mode) */
	defer_region(SCROLL_MODE_SHADOW);
	defer_region(SCROLL_MODE_REDRAW);
}

static const struct overlay_msg band_msgs[] = {
    {1234567, 6, "usb 1-1: new high-speed USB device number 2 using xhci_hcd"},
    {2000001, 3, "EXT4-fs error (device sda1): ext4_lookup: deleted inode referenced"},
    {98765432101, 2,
     "Out of memory: Killed process 4242 (stress) total-vm:123456kB, "
     "anon-rss:654321kB, file-rss:0kB, shmem-rss:0kB"},
    {98765432102, 4, "short"},
};

static void test_overlay_band(void)
{
	static const unsigned depths[] = {8, 32, 1};

	for (int rot = 0; rot < _ROTATE_MAX; rot++)
		for (unsigned d = 0; d < 3; d++)
			for (int shadow = 0; shadow < 2; shadow++) {
				struct fake a, b;
				struct scroller *s[2];
				struct overlay o;
				char buf[160];
				unsigned seed = 11, cols, rows;
				uint64_t drawn;
				bool ok = true;

				band_fakes(&a, &b, s, depths[d], rot, shadow);
				/* the moves' rows too: damage from the marked rows
				 * against a full compare */
				render_set_check_damage(a.render, true);
				render_set_check_damage(b.render, true);
				cols = render_cols(a.render);
				rows = render_rows(a.render);
				overlay_init(&o);
				for (unsigned i = 0; i < 60; i++) {
					session_step(i, &seed, buf, sizeof(buf));
					feed(&a, buf);
					feed(&b, buf);
					render_frame(a.render, a.screen);
					render_frame(b.render, b.screen);
					if (i == 10) {
						/* it comes: only its rows are drawn */
						overlay_band(&o, cols, rows, 3, OVERLAY_BOTTOM,
							     band_msgs, 2, 0);
						render_set_overlay(a.render, &o);
						drawn = render_get_stats(a.render)->cells_drawn;
						render_frame(a.render, a.screen);
						CHECK_EQ_U(render_get_stats(a.render)->cells_drawn -
							       drawn,
							   2 * cols);
					} else if (i == 30) {
						/* a flood: the newest, and how many not */
						overlay_band(&o, cols, rows, 3, OVERLAY_BOTTOM,
							     band_msgs, 4, 5000);
						render_frame(a.render, a.screen);
					} else if (i == 40) {
						overlay_band(&o, cols, rows, 4, OVERLAY_TOP,
							     band_msgs, 4, 0);
						render_frame(a.render, a.screen);
					} else if (i == 50) {
						/* it goes: only its rows are drawn */
						render_set_overlay(a.render, NULL);
						drawn = render_get_stats(a.render)->cells_drawn;
						render_frame(a.render, a.screen);
						CHECK_EQ_U(render_get_stats(a.render)->cells_drawn -
							       drawn,
							   4 * cols);
					}
					if (i >= 10 && i < 50)
						ok = band_over(&a, &b, &o, rot);
					else
						ok = memcmp(a.fb.map, b.fb.map, a.fb.map_size) == 0;
					if (!ok) {
						fprintf(stderr,
							"band: rotation %d, %u bpp, %s, step %u\n",
							rot, depths[d],
							shadow ? "shadow" : "redraw", i);
						CHECK(0);
						break;
					}
				}
				/* the session scrolled under the band by moves of its
				 * own rows in RAM, not by redrawing */
				if (shadow)
					CHECK(render_get_counters(a.render, SCROLL_MODE_SHADOW)
						  ->rows_scrolled > 0);
				CHECK_EQ_U(render_get_stats(a.render)->damage_mismatches, 0);
				CHECK_EQ_U(render_get_stats(b.render)->damage_mismatches, 0);
				overlay_fini(&o);
				band_fakes_fini(&a, &b, s);
			}
}

/* A move found over a row libtsm did not change: lines rewritten in place
 * to look scrolled up by one around a blank row that stays (row 3; no
 * scroll of libtsm's, so its ages mark only the rewritten rows). The best
 * move takes rows 0-7 with the blank row inside: the move changes prev
 * there, so that row is compared, drawn, and prev made this frame's again.
 * The marked rows' damage (render_set_check_damage()) is checked against a
 * full compare, the pixels against a renderer that draws everything. */
static void test_incremental_moves(void)
{
	struct fake a, b;
	struct scroller *s[2];
	char buf[64];

	band_fakes(&a, &b, s, 32, ROTATE_UPRIGHT, true);
	render_set_check_damage(a.render, true);
	for (unsigned round = 0; round < 5; round++) {
		for (unsigned y = 0; y < 8; y++) {
			if (y == 3)
				continue;
			snprintf(buf, sizeof(buf), "\033[%u;1Hline %3u", y + 1, round + y);
			feed(&a, buf);
			feed(&b, buf);
		}
		render_frame(a.render, a.screen);
		render_invalidate(b.render);
		render_frame(b.render, b.screen);
		if (memcmp(a.fb.map, b.fb.map, a.fb.map_size) != 0) {
			fprintf(stderr, "moves: round %u differs from a full frame\n", round);
			CHECK(0);
		}
	}
	CHECK(render_get_counters(a.render, SCROLL_MODE_SHADOW)->rows_scrolled > 0);
	CHECK_EQ_U(render_get_stats(a.render)->damage_mismatches, 0);
	band_fakes_fini(&a, &b, s);
}

/* ---- the cursor's shapes ---------------------------------------------------- */

/* Every pixel of the screen, as pixel_at() reads it. */
static uint32_t *screen_pixels(struct fake *f)
{
	uint32_t *p = calloc((size_t)f->fb.var.xres * f->fb.var.yres, sizeof(uint32_t));

	CHECK(p != NULL);

	for (unsigned y = 0; y < f->fb.var.yres; y++)
		for (unsigned x = 0; x < f->fb.var.xres; x++)
			p[(size_t)y * f->fb.var.xres + x] = pixel_at(f, x, y);
	return p;
}

/* The default colours' pixel values. */
static void default_pixels(struct fake *f, uint32_t *ret_fg, uint32_t *ret_bg)
{
	struct tsm_screen_attr a = {.fccode = TSM_COLOR_FOREGROUND, .bccode = TSM_COLOR_BACKGROUND};

	render_resolve_colors(&f->fb.format, &f->palette, &a, false, true, ret_fg, ret_bg);
}

/* Whether the screen is `before` (the same screen without a cursor) with
 * the cursor drawn on cells [cx, cx + cells) of row cy: a block swaps the
 * cells' two colours fg and bg, an underline sets their last `ul` lines, a
 * bar the first cell's first `bar` columns, to fg; every other pixel as it
 * was. */
static int shows_cursor(struct fake *f, const uint32_t *before, unsigned cx, unsigned cy,
			unsigned cells, enum stream_cursor_shape shape, unsigned ul, unsigned bar,
			uint32_t fg, uint32_t bg)
{
	unsigned w = fontset_cell_width(f->fonts), h = fontset_cell_height(f->fonts);

	for (unsigned y = 0; y < f->fb.var.yres; y++)
		for (unsigned x = 0; x < f->fb.var.xres; x++) {
			uint32_t want = before[(size_t)y * f->fb.var.xres + x];

			if (x >= cx * w && x < (cx + cells) * w && y >= cy * h &&
			    y < (cy + 1) * h) {
				unsigned ix = x - cx * w, iy = y - cy * h;

				if (shape == STREAM_CURSOR_BLOCK)
					want = want == fg ? bg : fg;
				else if (shape == STREAM_CURSOR_UNDERLINE && iy >= h - ul)
					want = fg;
				else if (shape == STREAM_CURSOR_BAR && ix < bar)
					want = fg;
			}
			if (pixel_at(f, x, y) != want) {
				fprintf(stderr,
					"%u bpp, shape %d on cell %u,%u: pixel %u,%u is %#x, "
					"expected %#x\n",
					f->fb.format.bits_per_pixel, shape, cx, cy, x, y,
					pixel_at(f, x, y), want);
				return 0;
			}
		}
	return 1;
}

static const enum stream_cursor_shape all_shapes[] = {STREAM_CURSOR_UNDERLINE, STREAM_CURSOR_BAR,
						      STREAM_CURSOR_BLOCK};

/* Each shape at every depth on the cursor's cell, over a character: drawn
 * as damage of that one cell; a blinking cursor's off phase and a hidden
 * cursor leave the cell as without one. */
static void test_cursor_shapes(void)
{
	static const unsigned depths[] = {1, 8, 16, 24, 32};

	for (unsigned d = 0; d < sizeof(depths) / sizeof(depths[0]); d++) {
		struct fake f;
		uint32_t fg, bg, *before;
		uint64_t drawn;

		fake_init(&f, depths[d], 164, 100, 12); /* 20x6 cells */
		default_pixels(&f, &fg, &bg);
		feed(&f, "\033[?25l\033[2;1HaXb\033[2;2H");
		render_frame(f.render, f.screen);
		CHECK(!render_cursor_visible(f.render));
		before = screen_pixels(&f);
		feed(&f, "\033[?25h");
		for (unsigned i = 0; i < 3; i++) {
			render_set_cursor(f.render, all_shapes[i], true);
			drawn = render_get_stats(f.render)->cells_drawn;
			render_frame(f.render, f.screen);
			CHECK_EQ_U(render_get_stats(f.render)->cells_drawn - drawn, 1);
			CHECK(render_cursor_visible(f.render));
			/* fbcon's underline: the last two lines of a 16-line cell;
			 * the bar: 8 / 8 columns */
			CHECK(shows_cursor(&f, before, 1, 1, 1, all_shapes[i], 2, 1, fg, bg));
		}
		/* the off phase of a blinking cursor: the cell without it, and
		 * still the cursor the timer is for */
		for (unsigned i = 0; i < 3; i++) {
			render_set_cursor(f.render, all_shapes[i], false);
			render_frame(f.render, f.screen);
			CHECK(render_cursor_visible(f.render));
			CHECK(shows_cursor(&f, before, 1, 1, 0, STREAM_CURSOR_BAR, 0, 0, fg, bg));
		}
		/* moved: the old cell as it was, the new one with the bar */
		render_set_cursor(f.render, STREAM_CURSOR_BAR, true);
		feed(&f, "\033[2;3H");
		drawn = render_get_stats(f.render)->cells_drawn;
		render_frame(f.render, f.screen);
		CHECK_EQ_U(render_get_stats(f.render)->cells_drawn - drawn, 1);
		CHECK(shows_cursor(&f, before, 2, 1, 1, STREAM_CURSOR_BAR, 2, 1, fg, bg));
		/* hidden (DECTCEM) */
		feed(&f, "\033[?25l");
		render_frame(f.render, f.screen);
		CHECK(!render_cursor_visible(f.render));
		CHECK(shows_cursor(&f, before, 2, 1, 1, STREAM_CURSOR_BAR, 0, 0, fg, bg));
		free(before);
		fake_fini(&f);
	}
}

/* A cell of 16x8 (a PSF2 font made here): the underline is one line (a
 * cell shorter than 10), the bar two columns. */
static void test_cursor_cell_size(void)
{
	uint8_t psf[32 + 256 * 16] = {0};
	static const uint32_t hdr[8] = {0x864ab572u, 0, 32, 0, 256, 16, 8, 16};
	struct fake f;
	uint32_t fg, bg, *before;

	for (unsigned i = 0; i < 8; i++)
		for (unsigned b = 0; b < 4; b++)
			psf[i * 4 + b] = (uint8_t)(hdr[i] >> (8 * b));
	for (unsigned g = 0; g < 256; g++)
		for (unsigned y = 0; y < 16; y++)
			psf[32 + g * 16 + y] = (uint8_t)(g * 7 + y * 13);
	fake_init_font(&f, 32, 170, 50, 0, psf, sizeof(psf));
	CHECK(fontset_cell_width(f.fonts) == 16 && fontset_cell_height(f.fonts) == 8);
	default_pixels(&f, &fg, &bg);
	feed(&f, "\033[?25l\033[3;2HQRS\033[3;3H");
	render_frame(f.render, f.screen);
	before = screen_pixels(&f);
	feed(&f, "\033[?25h");
	for (unsigned i = 0; i < 3; i++) {
		render_set_cursor(f.render, all_shapes[i], true);
		render_frame(f.render, f.screen);
		CHECK(shows_cursor(&f, before, 2, 2, 1, all_shapes[i], 1, 2, fg, bg));
	}
	free(before);
	fake_fini(&f);
}

/* The cursor on its line in the scrollback view (libtsm's place for it),
 * none when its line is out of the view; on a wide character the underline
 * spans both halves, the bar is left of the first. */
static void test_cursor_view_and_wide(void)
{
	struct fake f;
	uint32_t fg, bg, *before;

	fake_init(&f, 32, 160, 96, 0); /* 20x6 */
	tsm_screen_set_max_sb(f.screen, 100);
	default_pixels(&f, &fg, &bg);
	feed(&f, "\033[?25l");
	for (unsigned i = 0; i < 10; i++)
		feed(&f, i % 2 ? "odd line\r\n" : "even line\r\n");
	feed(&f, "\033[3;2H");
	tsm_screen_sb_up(f.screen, 2);
	render_frame(f.render, f.screen);
	before = screen_pixels(&f);
	feed(&f, "\033[?25h");
	render_set_cursor(f.render, STREAM_CURSOR_UNDERLINE, true);
	render_frame(f.render, f.screen);
	CHECK(render_cursor_visible(f.render));
	CHECK(shows_cursor(&f, before, 1, 4, 1, STREAM_CURSOR_UNDERLINE, 2, 1, fg, bg));
	free(before);
	/* its line below the view: no cursor */
	tsm_screen_sb_up(f.screen, 3);
	feed(&f, "\033[?25l");
	render_frame(f.render, f.screen);
	before = screen_pixels(&f);
	feed(&f, "\033[?25h");
	render_frame(f.render, f.screen);
	CHECK(!render_cursor_visible(f.render));
	CHECK(shows_cursor(&f, before, 0, 0, 0, STREAM_CURSOR_UNDERLINE, 0, 0, fg, bg));
	free(before);
	tsm_screen_sb_reset(f.screen);

	/* a wide character */
	feed(&f, "\033[?25l\033[H\033[2J\033[2;3H\xe4\xb8\xad\033[2;3H");
	render_frame(f.render, f.screen);
	before = screen_pixels(&f);
	feed(&f, "\033[?25h");
	render_set_cursor(f.render, STREAM_CURSOR_UNDERLINE, true);
	render_frame(f.render, f.screen);
	CHECK(shows_cursor(&f, before, 2, 1, 2, STREAM_CURSOR_UNDERLINE, 2, 1, fg, bg));
	render_set_cursor(f.render, STREAM_CURSOR_BAR, true);
	render_frame(f.render, f.screen);
	CHECK(shows_cursor(&f, before, 2, 1, 2, STREAM_CURSOR_BAR, 2, 1, fg, bg));
	free(before);
	fake_fini(&f);
}

/* Every shape at every rotation: the upright picture turned. */
static void test_cursor_rotation(void)
{
	const unsigned lw = 330, lh = 170;

	for (int rot = 1; rot < _ROTATE_MAX; rot++)
		for (unsigned i = 0; i < 3; i++) {
			struct fake a, b;
			bool side = rotate_sideways(rot);

			fake_init(&a, 32, lw, lh, 8);
			fake_init(&b, 32, side ? lh : lw, side ? lw : lh, 4);
			render_set_rotation(b.render, rot);
			CHECK(render_relayout(b.render) == 0);
			CHECK(tsm_screen_resize(b.screen, render_cols(b.render),
						render_rows(b.render)) == 0);
			feed(&a, "\033[3;5Hcursor\033[3;7H");
			feed(&b, "\033[3;5Hcursor\033[3;7H");
			render_set_cursor(a.render, all_shapes[i], true);
			render_set_cursor(b.render, all_shapes[i], true);
			render_frame(a.render, a.screen);
			render_frame(b.render, b.screen);
			CHECK(turned_equals(&a, &b, rot));
			fake_fini(&a);
			fake_fini(&b);
		}
}

/* The tile test's picture, 16x16 (two cells): a colour per pixel, the
 * pixels with x == y transparent. */
static uint32_t tile_argb(unsigned x, unsigned y)
{
	if (x == y)
		return 0;
	return 0xff000000u | (x * 16u) << 16 | (y * 16u) << 8 | (x * 7u + y * 3u);
}

/* What a tile pixel must become at the fake's depth (render.c's mapping, as
 * consoled(8) documents it): packed RGB; 8 bpp the nearest palette entry's
 * slot; 1 bpp lit where luma exceeds the 4x4 Bayer threshold. */
static uint32_t tile_want(struct fake *f, uint32_t argb, uint32_t bg, unsigned x, unsigned y)
{
	static const uint8_t bayer[4][4] = {
	    {0, 8, 2, 10}, {12, 4, 14, 6}, {3, 11, 1, 9}, {15, 7, 13, 5}};
	const struct pixel_format *pf = &f->fb.format;
	struct rgb c = {(uint8_t)(argb >> 16), (uint8_t)(argb >> 8), (uint8_t)argb};

	if ((argb >> 24) == 0)
		return bg;
	if (pf->mono)
		return (299u * c.r + 587u * c.g + 114u * c.b) / 1000u >
			       16u * bayer[y % 4][x % 4] + 8
			   ? pf->mono_fg
			   : pf->mono_bg;
	if (pf->indexed)
		return pixel_from_index(pf, &f->palette, palette_nearest(&f->palette, c));
	return pixel_pack_rgb(pf, c);
}

/* Cell cx, cy shows tile column `col` of the picture over bg, or (col < 0)
 * only bg: the placeholder. */
static int tile_shows(struct fake *f, unsigned cx, unsigned cy, int col, uint32_t bg)
{
	for (unsigned y = 0; y < 16; y++)
		for (unsigned x = 0; x < 8; x++) {
			uint32_t want =
			    col < 0 ? bg
				    : tile_want(f, tile_argb((unsigned)col * 8 + x, y), bg, x, y);
			uint32_t got = pixel_at(f, cx * 8 + x, cy * 16 + y);

			if (got != want) {
				fprintf(stderr, "%u bpp: tile cell %u,%u pixel %u,%u: %#x != %#x\n",
					f->fb.format.bits_per_pixel, cx, cy, x, y, got, want);
				return 0;
			}
		}
	return 1;
}

/* Image tiles at every depth: each pixel converted to the framebuffer's
 * format, transparent ones the cell's background (also a coloured one), the
 * cells around untouched; once the store drops the image (its generation
 * changes, libtsm's cells do not), the next frame draws the placeholder, not
 * the cached tile. */
static void test_tiles(void)
{
	static const unsigned depths[] = {32, 16, 8, 1};

	for (size_t d = 0; d < sizeof(depths) / sizeof(depths[0]); d++) {
		struct tsm_screen_attr plain = {.fccode = TSM_COLOR_FOREGROUND,
						.bccode = TSM_COLOR_BACKGROUND};
		struct tsm_screen_attr blue = plain;
		struct image_store *store = image_store_new(1u << 20);
		uint32_t *px = malloc(16 * 16 * sizeof(uint32_t)), first;
		uint32_t bg, bg_blue, fg;
		struct fake f;

		CHECK(px != NULL);
		for (unsigned y = 0; y < 16; y++)
			for (unsigned x = 0; x < 16; x++)
				px[y * 16 + x] = tile_argb(x, y);
		fake_init(&f, depths[d], 64, 48, 0); /* 8x3 cells */
		tsm_screen_set_flags(f.screen, TSM_SCREEN_HIDE_CURSOR);
		CHECK(image_store_add(store, px, 16, 16, 8, 16, 2, 1, f.screen, &first) == 0);
		render_set_images(f.render, store);
		blue.bccode = 4;
		render_resolve_colors(&f.fb.format, &f.palette, &plain, false, true, &fg, &bg);
		render_resolve_colors(&f.fb.format, &f.palette, &blue, false, true, &fg, &bg_blue);
		/* row 0: the picture at cells 1-2; row 1: the same over blue */
		tsm_screen_move_to(f.screen, 1, 0);
		tsm_screen_write(f.screen, first, &plain);
		tsm_screen_write(f.screen, first + 1, &plain);
		tsm_screen_move_to(f.screen, 1, 1);
		tsm_screen_write(f.screen, first, &blue);
		tsm_screen_write(f.screen, first + 1, &blue);
		feed(&f, "\033[3;1HA");
		render_frame(f.render, f.screen);
		CHECK(tile_shows(&f, 1, 0, 0, bg));
		CHECK(tile_shows(&f, 2, 0, 1, bg));
		CHECK(tile_shows(&f, 1, 1, 0, bg_blue));
		CHECK(tile_shows(&f, 2, 1, 1, bg_blue));
		CHECK(tile_shows(&f, 0, 0, -1, bg));
		CHECK(tile_shows(&f, 3, 1, -1, bg));
		CHECK(cell_shows(&f, 0, 2, 'A', fg, bg));

		/* the image dropped: the same cells now draw the placeholder */
		CHECK(image_store_make_room(store, 1u << 20));
		CHECK_EQ_U(image_store_count(store), 0);
		render_frame(f.render, f.screen);
		CHECK(tile_shows(&f, 1, 0, -1, bg));
		CHECK(tile_shows(&f, 2, 0, -1, bg));
		CHECK(tile_shows(&f, 1, 1, -1, bg_blue));
		CHECK(tile_shows(&f, 2, 1, -1, bg_blue));
		CHECK(cell_shows(&f, 0, 2, 'A', fg, bg));
		fake_fini(&f);
		image_store_free(store);
	}
}

/* The incremental snapshot (render_snapshot_take()): a renderer that keeps
 * the cells libtsm did not change since its last frame draws what one that
 * resolves every cell draws (`full`, a second renderer on its own
 * framebuffer over the same screen, invalidated before each frame), after
 * each kind of change. Its damage, from the rows the frame marked, is
 * checked against every row hashed and compared at each frame
 * (render_set_check_damage()). */
struct incr {
	struct fake f;
	struct fbdev fb; /* full's */
	struct render *full;
	struct image_store *store;
	const char *step;
	bool ok;
};

static int draw_nothing(struct tsm_screen *con, uint64_t id, const uint32_t *ch, size_t len,
			unsigned width, unsigned posx, unsigned posy,
			const struct tsm_screen_attr *attr, tsm_age_t age, void *data)
{
	(void)con, (void)id, (void)ch, (void)len, (void)width, (void)posx, (void)posy;
	(void)attr, (void)age, (void)data;
	return 0;
}

/* A frame of both; the framebuffers must be equal. Returns the libtsm cells
 * the incremental renderer resolved. */
static uint64_t incr_frame(struct incr *t, const char *step)
{
	uint64_t resolved = render_get_stats(t->f.render)->cells_resolved;
	uint64_t mismatches = render_get_stats(t->f.render)->damage_mismatches;

	t->step = step;
	render_frame(t->f.render, t->f.screen);
	if (render_get_stats(t->f.render)->damage_mismatches != mismatches) {
		fprintf(stderr, "%s: the damage of the marked rows differs from a full compare\n",
			step);
		t->ok = false;
	}
	/* every cell resolved and drawn: the cluster table set again drops
	 * the snapshot (by a path of its own, not render_invalidate()'s) */
	render_set_clusters(t->full, t->f.table);
	render_invalidate(t->full);
	render_frame(t->full, t->f.screen);
	if (memcmp(t->f.fb.map, t->fb.map, t->fb.map_size) != 0) {
		for (size_t i = 0; i < t->fb.map_size; i++)
			if (t->f.fb.map[i] != t->fb.map[i]) {
				size_t y = i / t->fb.line_length;

				fprintf(stderr,
					"%s: the incremental frame differs from a full one "
					"at pixel line %zu (cell row %zu), byte %zu\n",
					step, y, y / 16, i % t->fb.line_length);
				break;
			}
		t->ok = false;
	}
	return render_get_stats(t->f.render)->cells_resolved - resolved;
}

/* ... after feeding bytes to the terminal. */
static uint64_t incr_feed(struct incr *t, const char *bytes, const char *step)
{
	feed(&t->f, bytes);
	return incr_frame(t, step);
}

static void both_cursor(struct incr *t, enum stream_cursor_shape shape, bool on)
{
	render_set_cursor(t->f.render, shape, on);
	render_set_cursor(t->full, shape, on);
}

static void test_incremental_snapshot(void)
{
	static const unsigned depths[] = {32, 8};

	for (size_t d = 0; d < sizeof(depths) / sizeof(depths[0]); d++) {
		struct tsm_screen_attr plain = {.fccode = TSM_COLOR_FOREGROUND,
						.bccode = TSM_COLOR_BACKGROUND};
		uint32_t *px = malloc(16 * 16 * sizeof(uint32_t)), first;
		struct tsmpeek_screen *peek;
		struct incr t = {.ok = true};
		struct overlay o;
		uint64_t n, hashed;

		CHECK(px != NULL);
		fake_init(&t.f, depths[d], 320, 160, 0); /* 40x10 */
		t.fb = t.f.fb;
		t.fb.map = malloc(t.fb.map_size);
		CHECK(t.fb.map != NULL);
		CHECK(render_new(&t.fb, t.f.fonts, &t.f.palette, &t.full) == 0);
		render_set_clusters(t.full, t.f.table);
		render_set_check_damage(t.f.render, true);
		t.store = image_store_new(1u << 20);
		render_set_images(t.f.render, t.store);
		render_set_images(t.full, t.store);
		peek = (struct tsmpeek_screen *)(void *)t.f.screen;

		incr_feed(&t,
			  "\033[31mred \033[42mon green\033[m plain \033[1mbold\033[m\r\n"
			  "wide \xe4\xb8\xad\xe6\x96\x87 e\xcc\x81 \033[2mdim\033[m "
			  "\033[9mstruck\033[m\r\n"
			  "\033[7mreverse\033[m \033[4munder line\033[m\r\n$ ",
			  "first frame");

		/* an echo: the character and the cursor's two cells, one row
		 * hashed for damage */
		hashed = render_get_stats(t.f.render)->rows_hashed;
		n = incr_feed(&t, "x", "echo");
		CHECK(n > 0 && n <= 4);
		CHECK_EQ_U(render_get_stats(t.f.render)->rows_hashed - hashed, 1);
		n = incr_frame(&t, "nothing changed");
		CHECK(n <= 2);
		incr_feed(&t, "\033[38;5;200my\033[48;2;10;200;30mz\033[m", "colours");
		incr_feed(&t, "\033[2;6H\xe4\xb8\x80", "a wide character over a wide one");
		incr_feed(&t, "\033[2;6Hq", "its left half overwritten");
		/* a wide cell's left half overwritten away from the cursor (hidden
		 * meanwhile, so libtsm marks neither place): its right half,
		 * unchanged in libtsm, is a cell of its own again */
		incr_feed(&t, "\033[2;10H\xe4\xba\x8c", "another wide character");
		incr_feed(&t, "\033[?25l\033[2;10Hr\033[5;1H\033[?25h",
			  "a wide cell's left half overwritten");
		incr_feed(&t, "\033[5;30H", "the cursor moved");

		/* the cursor as consoled shows it: shape, blink phase, hidden */
		both_cursor(&t, STREAM_CURSOR_UNDERLINE, true);
		incr_frame(&t, "underline cursor");
		both_cursor(&t, STREAM_CURSOR_UNDERLINE, false);
		incr_frame(&t, "blink off");
		both_cursor(&t, STREAM_CURSOR_BLOCK, true);
		incr_frame(&t, "blink on");
		incr_feed(&t, "\033[?25l", "cursor hidden");
		incr_feed(&t, "\033[?25h\033[2;7H", "cursor shown on a right half");

		/* the palette changed under the same cells */
		t.f.palette.colors[1] = (struct rgb){10, 200, 250};
		palette_update_cmap(&t.f.palette);
		incr_frame(&t, "palette entry 1");

		/* the pointer and the bell's flash */
		render_set_pointer(t.f.render, 3, 7);
		render_set_pointer(t.full, 3, 7);
		incr_frame(&t, "pointer");
		render_set_pointer(t.f.render, 7, 4);
		render_set_pointer(t.full, 7, 4);
		incr_frame(&t, "pointer moved to another row");
		incr_feed(&t, "\033[5;8Hp", "a write under the pointer");
		render_set_flash(t.f.render, true);
		render_set_flash(t.full, true);
		incr_frame(&t, "flash");
		incr_feed(&t, "w", "echo in the flash");
		render_set_flash(t.f.render, false);
		render_set_flash(t.full, false);
		render_set_pointer(t.f.render, -1, -1);
		render_set_pointer(t.full, -1, -1);
		incr_frame(&t, "flash and pointer gone");

		/* the kernel messages' band over the session: shown, changed,
		 * moved to the top, gone */
		overlay_init(&o);
		overlay_band(&o, 40, 10, 2, OVERLAY_BOTTOM, band_msgs, 2, 0);
		render_set_overlay(t.f.render, &o);
		render_set_overlay(t.full, &o);
		incr_frame(&t, "band shown");
		incr_feed(&t, "\033[9;3Hunder", "a write under the band");
		incr_feed(&t, "\033[3;3Hbeside", "a write beside the band");
		overlay_band(&o, 40, 10, 3, OVERLAY_BOTTOM, band_msgs, 4, 0);
		incr_frame(&t, "band grown");
		overlay_band(&o, 40, 10, 1, OVERLAY_TOP, band_msgs, 1, 0);
		incr_frame(&t, "band at the top");
		render_set_overlay(t.f.render, NULL);
		render_set_overlay(t.full, NULL);
		incr_frame(&t, "band gone");
		overlay_fini(&o);

		/* libtsm's selection, the screen's inverse mode */
		tsm_screen_selection_start(t.f.screen, 2, 0);
		tsm_screen_selection_target(t.f.screen, 10, 1);
		incr_frame(&t, "selection");
		incr_feed(&t, "\033[1;5Hs", "a write inside the selection");
		both_cursor(&t, STREAM_CURSOR_BAR, true);
		incr_frame(&t, "bar cursor under a selection");
		incr_feed(&t, "\033[2;8H", "cursor on a wide cell's left half under a selection");
		both_cursor(&t, STREAM_CURSOR_BLOCK, true);
		incr_frame(&t, "block cursor under a selection");
		tsm_screen_selection_reset(t.f.screen);
		incr_frame(&t, "selection gone");
		incr_feed(&t, "\033[?5h", "inverse screen");
		incr_feed(&t, "v", "echo on the inverse screen");
		incr_feed(&t, "\033[?5l", "inverse off");

		/* an image's tiles, then the image dropped */
		for (unsigned y = 0; y < 16; y++)
			for (unsigned x = 0; x < 16; x++)
				px[y * 16 + x] = tile_argb(x, y);
		CHECK(image_store_add(t.store, px, 16, 16, 8, 16, 2, 1, t.f.screen, &first) == 0);
		tsm_screen_move_to(t.f.screen, 20, 3);
		tsm_screen_write(t.f.screen, first, &plain);
		tsm_screen_write(t.f.screen, first + 1, &plain);
		incr_frame(&t, "tiles");
		CHECK(image_store_make_room(t.store, 1u << 20));
		incr_frame(&t, "tiles dropped");

		/* the scrollback and the alternate screen */
		incr_feed(&t, "\033[10;1Hone\r\ntwo\r\nthree\r\n", "scrolled");
		tsm_screen_sb_up(t.f.screen, 2);
		incr_frame(&t, "view in the scrollback");
		incr_feed(&t, "k", "echo under the scrolled view");
		tsm_screen_sb_reset(t.f.screen);
		incr_frame(&t, "view back");
		incr_feed(&t, "\033[?1049h\033[3;3Halt", "alternate screen");
		incr_feed(&t, "\033[?1049l", "main screen");
		incr_feed(&t, "\033[2J", "erased");
		incr_feed(&t, "\033[4;4Hafter", "text after the erase");

		/* a full redraw (screen_redraw()) resolves every cell again, even
		 * one libtsm did not age (written here behind its back, as a new
		 * screen at the old one's address would show), then the same
		 * screen after it */
		peek->lines[0]->cells[0].ch = 'Z';
		render_invalidate(t.f.render);
		incr_frame(&t, "invalidated");
		n = incr_feed(&t, "3", "echo after a full redraw");
		CHECK(n > 0 && n <= 4);

		/* libtsm's age counter goes round: its reset flag taken by another
		 * tsm_screen_draw() caller (the vcs mirror) first, and with it */
		peek->age_cnt = (tsm_age_t)-3;
		feed(&t.f, "\033[6;1Hwrap");
		tsm_screen_draw(t.f.screen, draw_nothing, NULL);
		CHECK(peek->age_cnt < 10);
		incr_frame(&t, "ages gone round, reset taken");
		incr_feed(&t, "1", "echo after the wrap");
		peek->age_cnt = (tsm_age_t)-3;
		feed(&t.f, "\033[7;1Hround");
		CHECK(peek->age_reset);
		incr_frame(&t, "ages gone round");
		incr_feed(&t, "2", "echo after the reset");
		/* (the cells written before it are older than the counter now: they
		 * are resolved at every frame until written again) */

		if (!t.ok)
			fprintf(stderr, "at %u bpp\n", depths[d]);
		CHECK(t.ok);
		render_free(t.full);
		free(t.fb.map);
		fake_fini(&t.f);
		image_store_free(t.store); /* px is the store's */
	}
}

int main(void)
{
	RUN(test_colors_8bpp);
	RUN(test_damage_only);
	RUN(test_16bpp);
	RUN(test_wide_and_combining);
	RUN(test_shadow_equals_redraw);
	RUN(test_write_flush_retry);
	RUN(test_write_flush_narrow);
	RUN(test_rows_before_move);
	RUN(test_defer_region);
	RUN(test_rotation);
	RUN(test_cluster_reset);
	RUN(test_relayout);
	RUN(test_attributes_psf);
	RUN(test_resolve_scalable);
	RUN(test_palette_pixels);
	RUN(test_overlay_band);
	RUN(test_tiles);
	RUN(test_incremental_snapshot);
	RUN(test_incremental_moves);
	RUN(test_cursor_shapes);
	RUN(test_cursor_cell_size);
	RUN(test_cursor_view_and_wide);
	RUN(test_cursor_rotation);
	return TESTS_RESULT();
}
