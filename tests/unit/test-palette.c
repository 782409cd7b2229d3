/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Named palettes and colour keys: the option parser, the colours of each
 * palette, the default colours as entries of their own, the 8 bpp colour map
 * (exact colours, the slots the defaults take) and the packed pixels at 16
 * and 32 bpp, and COLORFGBG.
 */
#include <errno.h>
#include <libtsm.h>
#include <string.h>

#include "../../daemon/options.h"
#include "../../daemon/color/palette.h"
#include "../../daemon/color/pixel.h"
#include "../../daemon/screen/render.h"
#include "tests.h"

static const struct pixel_format pf8 = {.bits_per_pixel = 8, .bytes_per_pixel = 1, .indexed = true};
static const struct pixel_format pf16 = {.bits_per_pixel = 16,
					 .bytes_per_pixel = 2,
					 .red = {11, 5, 0},
					 .green = {5, 6, 0},
					 .blue = {0, 5, 0}};
static const struct pixel_format pf32 = {.bits_per_pixel = 32,
					 .bytes_per_pixel = 4,
					 .red = {16, 8, 0},
					 .green = {8, 8, 0},
					 .blue = {0, 8, 0}};

static uint32_t u32(struct rgb c)
{
	return (uint32_t)c.r << 16 | (uint32_t)c.g << 8 | c.b;
}

/* The colour an entry shows at 8 bpp: its slot's colour map entry. */
static uint32_t shown8(const struct palette *p, unsigned index)
{
	return u32(p->cmap[pixel_from_index(&pf8, p, index)]);
}

static void test_parse(void)
{
	struct options o = {0};
	char err[256];
	uint32_t v;

	CHECK(options_parse_color("#002b36", &v) == 0 && v == 0x002b36);
	CHECK(options_parse_color("#FDF6E3", &v) == 0 && v == 0xfdf6e3);
	CHECK(options_parse_color("#000000", &v) == 0 && v == 0);
	v = 7;
	CHECK(options_parse_color("002b36", &v) == -EINVAL);
	CHECK(options_parse_color("#02b36", &v) == -EINVAL);
	CHECK(options_parse_color("#002b360", &v) == -EINVAL);
	CHECK(options_parse_color("#00 b36", &v) == -EINVAL);
	CHECK(options_parse_color("#-02b36", &v) == -EINVAL);
	CHECK(options_parse_color("#0x2b36", &v) == -EINVAL);
	CHECK(options_parse_color("", &v) == -EINVAL);
	CHECK(v == 7);

	CHECK(palette_kind_from_string("linux") == PALETTE_LINUX);
	CHECK(palette_kind_from_string("xterm") == PALETTE_XTERM);
	CHECK(palette_kind_from_string("vga") == PALETTE_VGA);
	CHECK(palette_kind_from_string("tango") == PALETTE_TANGO);
	CHECK(palette_kind_from_string("solarized") == PALETTE_SOLARIZED);
	CHECK(palette_kind_from_string("solarized-light") == PALETTE_SOLARIZED_LIGHT);
	CHECK(palette_kind_from_string("solarized-dark") == -EINVAL);
	CHECK(palette_kind_from_string("") == -EINVAL);

	CHECK(options_set(&o, "color12", "#123456", err, sizeof(err)) == 0);
	CHECK(o.colors[12] == 0x123456 && o.colors_set == 1u << 12);
	CHECK(options_set(&o, "background", "#abcdef", err, sizeof(err)) == 0);
	CHECK(o.colors[OPTIONS_COLOR_BACKGROUND] == 0xabcdef);
	CHECK(o.colors_set == (1u << 12 | 1u << OPTIONS_COLOR_BACKGROUND));
	/* a bad value changes nothing and says what it expected */
	CHECK(options_set(&o, "color12", "blue", err, sizeof(err)) == -EINVAL);
	CHECK(strcmp(err, "color12: invalid value 'blue': expected #rrggbb") == 0);
	CHECK(o.colors[12] == 0x123456);
	CHECK(options_set(&o, "foreground", NULL, err, sizeof(err)) == -EINVAL);
	CHECK(strcmp(err, "foreground: needs a value") == 0);
	CHECK(!(o.colors_set & 1u << OPTIONS_COLOR_FOREGROUND));
	CHECK(options_set(&o, "color16", "#000000", err, sizeof(err)) == -ENOENT);
	CHECK(options_set(&o, "palette", "solarised", err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "expected linux, xterm, vga, tango, solarized or solarized-light"));
	CHECK(options_set(&o, "palette", "tango", err, sizeof(err)) == 0);
	CHECK(o.palette == PALETTE_TANGO);
	options_fini(&o);
}

static void test_named(void)
{
	struct palette p;

	CHECK(!palette_init(&p, PALETTE_VGA, "/nonexistent"));
	CHECK_EQ_U(u32(p.colors[3]), 0xaa5500);
	CHECK_EQ_U(u32(p.colors[12]), 0x5555ff);
	CHECK(p.fg == 7 && p.bg == 0);
	/* fixed, whatever the kernel's vt.default_* are */
	for (unsigned i = 0; i < 16; i++)
		CHECK(memcmp(&p.colors[i], &palette_linux_default[i], sizeof(struct rgb)) == 0);

	CHECK(!palette_init(&p, PALETTE_TANGO, NULL));
	CHECK_EQ_U(u32(p.colors[0]), 0x2e3436);
	CHECK_EQ_U(u32(p.colors[4]), 0x3465a4);
	CHECK_EQ_U(u32(p.colors[15]), 0xeeeeec);
	CHECK(p.fg == 7 && p.bg == 0);

	CHECK(!palette_init(&p, PALETTE_SOLARIZED, NULL));
	CHECK_EQ_U(u32(p.colors[0]), 0x073642);
	CHECK_EQ_U(u32(p.colors[1]), 0xdc322f);
	CHECK_EQ_U(u32(p.colors[9]), 0xcb4b16);
	CHECK_EQ_U(u32(p.colors[13]), 0x6c71c4);
	CHECK_EQ_U(p.fg, 12);
	CHECK_EQ_U(p.bg, 8);
	CHECK_EQ_U(u32(p.colors[p.fg]), 0x839496);
	CHECK_EQ_U(u32(p.colors[p.bg]), 0x002b36);
	/* the cube and ramp are the same in every palette */
	CHECK_EQ_U(u32(p.colors[196]), 0xff0000);
	CHECK_EQ_U(u32(p.colors[244]), 0x808080);

	CHECK(!palette_init(&p, PALETTE_SOLARIZED_LIGHT, NULL));
	CHECK_EQ_U(u32(p.colors[p.fg]), 0x657b83);
	CHECK_EQ_U(u32(p.colors[p.bg]), 0xfdf6e3);
}

/* Default colours that are entries of the 16 take their slots: nothing of the
 * cube is given up. */
static void test_cmap_named(void)
{
	struct palette p;
	struct tsm_screen_attr a = {.fccode = TSM_COLOR_FOREGROUND, .bccode = TSM_COLOR_BACKGROUND};
	uint32_t fg, bg;

	palette_init(&p, PALETTE_SOLARIZED, NULL);
	for (unsigned i = 0; i < 256; i++)
		CHECK_EQ_U(shown8(&p, i), u32(p.colors[i]));
	/* VGA order for the 16 (fbcon's), identity above */
	CHECK_EQ_U(pixel_from_index(&pf8, &p, 1), 4);
	CHECK_EQ_U(pixel_from_index(&pf8, &p, 12), 9);
	CHECK_EQ_U(pixel_from_index(&pf8, &p, 231), 231);

	render_resolve_colors(&pf8, &p, &a, false, true, &fg, &bg);
	CHECK_EQ_U(fg, 9); /* colour 12 in VGA order */
	CHECK_EQ_U(bg, 8);
	CHECK_EQ_U(u32(p.cmap[fg]), 0x839496);
	CHECK_EQ_U(u32(p.cmap[bg]), 0x002b36);
	render_resolve_colors(&pf32, &p, &a, false, true, &fg, &bg);
	CHECK_EQ_U(fg, 0x839496);
	CHECK_EQ_U(bg, 0x002b36);
	render_resolve_colors(&pf16, &p, &a, false, true, &fg, &bg);
	CHECK_EQ_U(fg, (0x83u >> 3) << 11 | (0x94u >> 2) << 5 | 0x96u >> 3);
	CHECK_EQ_U(bg, (0x00u >> 3) << 11 | (0x2bu >> 2) << 5 | 0x36u >> 3);
	/* bold does not brighten a default foreground that is not colour 7 */
	a.bold = 1;
	render_resolve_colors(&pf32, &p, &a, false, true, &fg, &bg);
	CHECK_EQ_U(fg, 0x839496);
	/* SGR 31 is Solarized's red */
	a = (struct tsm_screen_attr){.fccode = 1, .bccode = TSM_COLOR_BACKGROUND};
	render_resolve_colors(&pf32, &p, &a, false, true, &fg, &bg);
	CHECK_EQ_U(fg, 0xdc322f);
	render_resolve_colors(&pf8, &p, &a, false, true, &fg, &bg);
	CHECK_EQ_U(u32(p.cmap[fg]), 0xdc322f);
}

/* Colour keys over a palette; default colours of their own take the slots of
 * cube entries 231 and 16 at 8 bpp, which then show their nearest. */
static void test_keys_and_cmap(void)
{
	struct options o = {0};
	struct palette p;
	struct tsm_screen_attr a = {.fccode = TSM_COLOR_FOREGROUND, .bccode = TSM_COLOR_BACKGROUND};
	char err[256];
	uint32_t fg, bg;

	CHECK(options_set(&o, "palette", "vga", err, sizeof(err)) == 0);
	CHECK(options_set(&o, "color1", "#123456", err, sizeof(err)) == 0);
	CHECK(options_set(&o, "foreground", "#fedcba", err, sizeof(err)) == 0);
	CHECK(options_set(&o, "background", "#102030", err, sizeof(err)) == 0);
	palette_from_options(&p, &o, NULL);
	CHECK_EQ_U(u32(p.colors[1]), 0x123456);
	CHECK_EQ_U(u32(p.colors[2]), 0x00aa00); /* the rest of the palette stays */
	CHECK(p.fg == PALETTE_FG && p.bg == PALETTE_BG);

	render_resolve_colors(&pf32, &p, &a, false, true, &fg, &bg);
	CHECK_EQ_U(fg, 0xfedcba);
	CHECK_EQ_U(bg, 0x102030);
	render_resolve_colors(&pf8, &p, &a, false, true, &fg, &bg);
	CHECK_EQ_U(fg, PALETTE_FG_SLOT);
	CHECK_EQ_U(bg, PALETTE_BG_SLOT);
	CHECK_EQ_U(u32(p.cmap[PALETTE_FG_SLOT]), 0xfedcba);
	CHECK_EQ_U(u32(p.cmap[PALETTE_BG_SLOT]), 0x102030);
	/* cube 231 (white) and 16 (black) show white and black still */
	CHECK_EQ_U(shown8(&p, 231), 0xffffff);
	CHECK_EQ_U(shown8(&p, 16), 0x000000);
	CHECK(pixel_from_index(&pf8, &p, 231) != PALETTE_FG_SLOT);
	CHECK(pixel_from_index(&pf8, &p, 16) != PALETTE_BG_SLOT);
	/* every other entry shows exactly its colour */
	for (unsigned i = 0; i < 256; i++)
		if (i != 16 && i != 231)
			CHECK_EQ_U(shown8(&p, i), u32(p.colors[i]));
	/* colour 1 from the key, at every depth */
	a.fccode = 1;
	render_resolve_colors(&pf8, &p, &a, false, true, &fg, &bg);
	CHECK_EQ_U(u32(p.cmap[fg]), 0x123456);
	CHECK_EQ_U(u32(p.cmap[bg]), 0x102030);
	render_resolve_colors(&pf16, &p, &a, false, true, &fg, &bg);
	CHECK_EQ_U(fg, (0x12u >> 3) << 11 | (0x34u >> 2) << 5 | 0x56u >> 3);
	/* reverse video swaps the defaults of their own */
	a = (struct tsm_screen_attr){
	    .fccode = TSM_COLOR_FOREGROUND, .bccode = TSM_COLOR_BACKGROUND, .inverse = 1};
	render_resolve_colors(&pf32, &p, &a, false, true, &fg, &bg);
	CHECK_EQ_U(fg, 0x102030);
	CHECK_EQ_U(bg, 0xfedcba);

	/* a default colour equal to an entry shares its slot: no cube slot
	 * is taken */
	CHECK(options_set(&o, "foreground", "#55ff55", err, sizeof(err)) == 0);
	CHECK(options_set(&o, "background", "#ffffff", err, sizeof(err)) == 0);
	palette_from_options(&p, &o, NULL);
	CHECK_EQ_U(pixel_from_index(&pf8, &p, PALETTE_FG), 10); /* colour 10 */
	CHECK_EQ_U(pixel_from_index(&pf8, &p, PALETTE_BG), 15); /* not cube 231 */
	for (unsigned i = 0; i < 256; i++)
		CHECK_EQ_U(shown8(&p, i), u32(p.colors[i]));

	/* a default colour none of the 16 has but the cube entry whose slot
	 * it takes: that entry keeps its slot, which shows its very colour */
	CHECK(options_set(&o, "color15", "#eeeeee", err, sizeof(err)) == 0);
	CHECK(options_set(&o, "foreground", "#ffffff", err, sizeof(err)) == 0);
	CHECK(options_set(&o, "background", "#000000", err, sizeof(err)) == 0);
	palette_from_options(&p, &o, NULL);
	CHECK_EQ_U(pixel_from_index(&pf8, &p, 231), 231);
	for (unsigned i = 0; i < 256; i++)
		CHECK_EQ_U(shown8(&p, i), u32(p.colors[i]));

	/* colour keys change the default colours that are entries */
	options_fini(&o);
	o = (struct options){0};
	CHECK(options_set(&o, "palette", "solarized", err, sizeof(err)) == 0);
	CHECK(options_set(&o, "color8", "#000010", err, sizeof(err)) == 0);
	palette_from_options(&p, &o, NULL);
	CHECK_EQ_U(p.bg, 8);
	CHECK_EQ_U(shown8(&p, p.bg), 0x000010);
	options_fini(&o);
}

static void test_colorfgbg(void)
{
	struct options o = {0};
	struct palette p;
	char err[256];
	unsigned fg, bg;

	palette_init(&p, PALETTE_LINUX, NULL);
	palette_colorfgbg(&p, &fg, &bg);
	CHECK(fg == 7 && bg == 0);
	palette_init(&p, PALETTE_SOLARIZED, NULL);
	palette_colorfgbg(&p, &fg, &bg);
	CHECK(fg == 12 && bg == 8);
	palette_init(&p, PALETTE_SOLARIZED_LIGHT, NULL);
	palette_colorfgbg(&p, &fg, &bg);
	CHECK(fg == 11 && bg == 15);
	/* colours of their own: the nearest of the 16 */
	CHECK(options_set(&o, "foreground", "#101010", err, sizeof(err)) == 0);
	CHECK(options_set(&o, "background", "#f0f0f0", err, sizeof(err)) == 0);
	palette_from_options(&p, &o, NULL);
	palette_colorfgbg(&p, &fg, &bg);
	CHECK(fg == 0 && bg == 15);
	options_fini(&o);
}

int main(void)
{
	RUN(test_parse);
	RUN(test_named);
	RUN(test_cmap_named);
	RUN(test_keys_and_cmap);
	RUN(test_colorfgbg);
	return TESTS_RESULT();
}
