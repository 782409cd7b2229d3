/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "palette.h"
#include "../util/util.h"

const struct rgb palette_linux_default[16] = {
    {0x00, 0x00, 0x00}, {0xaa, 0x00, 0x00}, {0x00, 0xaa, 0x00}, {0xaa, 0x55, 0x00},
    {0x00, 0x00, 0xaa}, {0xaa, 0x00, 0xaa}, {0x00, 0xaa, 0xaa}, {0xaa, 0xaa, 0xaa},
    {0x55, 0x55, 0x55}, {0xff, 0x55, 0x55}, {0x55, 0xff, 0x55}, {0xff, 0xff, 0x55},
    {0x55, 0x55, 0xff}, {0xff, 0x55, 0xff}, {0x55, 0xff, 0xff}, {0xff, 0xff, 0xff},
};

/* xterm's defaults (XTerm-col.ad). */
static const struct rgb palette_xterm_default[16] = {
    {0x00, 0x00, 0x00}, {0xcd, 0x00, 0x00}, {0x00, 0xcd, 0x00}, {0xcd, 0xcd, 0x00},
    {0x00, 0x00, 0xee}, {0xcd, 0x00, 0xcd}, {0x00, 0xcd, 0xcd}, {0xe5, 0xe5, 0xe5},
    {0x7f, 0x7f, 0x7f}, {0xff, 0x00, 0x00}, {0x00, 0xff, 0x00}, {0xff, 0xff, 0x00},
    {0x5c, 0x5c, 0xff}, {0xff, 0x00, 0xff}, {0x00, 0xff, 0xff}, {0xff, 0xff, 0xff},
};

/* The cube levels libtsm and xterm use for SGR 38;5;16..231. */
static const uint8_t cube_levels[6] = {0x00, 0x5f, 0x87, 0xaf, 0xd7, 0xff};

int palette_parse_channel(const char *s, uint8_t ret[16])
{
	uint8_t v[16];
	unsigned n = 0;
	const char *p = s;

	for (;;) {
		char *end;
		long x;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		x = strtol(p, &end, 10);
		if (x < 0 || x > 255 || n == 16)
			return -EINVAL;
		v[n++] = (uint8_t)x;
		p = end;
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p == '\n')
			p++;
		if (*p != '\0')
			return -EINVAL;
		break;
	}
	if (n != 16)
		return -EINVAL;
	memcpy(ret, v, 16);
	return 0;
}

static bool palette_load_sysfs(struct rgb out[16], const char *dir)
{
	static const char *const names[3] = {"default_red", "default_grn", "default_blu"};
	uint8_t ch[3][16];

	for (unsigned i = 0; i < 3; i++) {
		char path[512], buf[256];

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (read_small_file(path, buf, sizeof(buf)) < 0 ||
		    palette_parse_channel(buf, ch[i]) < 0)
			return false;
	}
	for (unsigned i = 0; i < 16; i++)
		out[i] = (struct rgb){ch[0][i], ch[1][i], ch[2][i]};
	return true;
}

bool palette_init(struct palette *p, enum palette_kind kind, const char *sysfs_dir)
{
	bool from_sysfs = false;

	p->fg = 7;
	p->bg = 0;
	if (kind == PALETTE_XTERM)
		memcpy(p->colors, palette_xterm_default, sizeof(palette_xterm_default));
	else if (kind == PALETTE_LINUX) {
		memcpy(p->colors, palette_linux_default, sizeof(palette_linux_default));
		if (sysfs_dir)
			from_sysfs = palette_load_sysfs(p->colors, sysfs_dir);
	} else
		palette_named(p, kind);

	for (unsigned i = 16; i < 232; i++) {
		unsigned c = i - 16;
		p->colors[i] =
		    (struct rgb){cube_levels[c / 36], cube_levels[(c / 6) % 6], cube_levels[c % 6]};
	}
	for (unsigned i = 232; i < 256; i++) {
		uint8_t g = (uint8_t)(8 + (i - 232) * 10);
		p->colors[i] = (struct rgb){g, g, g};
	}
	p->colors[PALETTE_FG] = p->colors[p->fg];
	p->colors[PALETTE_BG] = p->colors[p->bg];
	palette_update_cmap(p);
	return from_sysfs;
}

unsigned palette_nearest(const struct palette *p, struct rgb c)
{
	unsigned best = 0;
	long best_d = -1;

	for (unsigned i = 0; i < 256; i++) {
		long dr = (long)p->colors[i].r - c.r;
		long dg = (long)p->colors[i].g - c.g;
		long db = (long)p->colors[i].b - c.b;
		long d = dr * dr + dg * dg + db * db;

		/* Prefer the cube and ramp on ties: they are stable across
		 * palettes, the 16 console colours are not. */
		if (best_d < 0 || d < best_d || (d == best_d && best < 16)) {
			best = i;
			best_d = d;
			if (d == 0 && i >= 16)
				break;
		}
	}
	return best;
}

unsigned palette_cmap_slot(unsigned index)
{
	/* drivers/tty/vt/vt.c color_table[]: ANSI order -> VGA order. */
	static const uint8_t vga_order[16] = {0, 4, 2, 6, 1, 5, 3, 7, 8, 12, 10, 14, 9, 13, 11, 15};

	index &= 0xff;
	return index < 16 ? vga_order[index] : index;
}

struct named_palette {
	uint32_t colors[16]; /* 0xrrggbb */
	unsigned fg, bg;
};

static const struct named_palette named[] = {
    /* The VGA's text mode colours (the DAC values of the IBM VGA BIOS),
     * which the kernel console also uses unless vt.default_* say
     * otherwise. */
    [PALETTE_VGA] = {{0x000000, 0xaa0000, 0x00aa00, 0xaa5500, 0x0000aa, 0xaa00aa, 0x00aaaa,
		      0xaaaaaa, 0x555555, 0xff5555, 0x55ff55, 0xffff55, 0x5555ff, 0xff55ff,
		      0x55ffff, 0xffffff},
		     7,
		     0},
    /* GNOME Terminal's Tango palette; its "Tango dark" scheme is colour 7
     * on colour 0. */
    [PALETTE_TANGO] = {{0x2e3436, 0xcc0000, 0x4e9a06, 0xc4a000, 0x3465a4, 0x75507b, 0x06989a,
			0xd3d7cf, 0x555753, 0xef2929, 0x8ae234, 0xfce94f, 0x729fcf, 0xad7fa8,
			0x34e2e2, 0xeeeeec},
		       7,
		       0},
    /* Solarized (ethanschoonover.com/solarized, its Xresources): base02,
     * red, green, yellow, blue, magenta, cyan, base2, base03, orange,
     * base01, base00, base0, violet, base1, base3; dark is base0 on
     * base03, light base00 on base3. */
    [PALETTE_SOLARIZED] = {{0x073642, 0xdc322f, 0x859900, 0xb58900, 0x268bd2, 0xd33682, 0x2aa198,
			    0xeee8d5, 0x002b36, 0xcb4b16, 0x586e75, 0x657b83, 0x839496, 0x6c71c4,
			    0x93a1a1, 0xfdf6e3},
			   12,
			   8},
    [PALETTE_SOLARIZED_LIGHT] = {{0x073642, 0xdc322f, 0x859900, 0xb58900, 0x268bd2, 0xd33682,
				  0x2aa198, 0xeee8d5, 0x002b36, 0xcb4b16, 0x586e75, 0x657b83,
				  0x839496, 0x6c71c4, 0x93a1a1, 0xfdf6e3},
				 11,
				 15},
};

static struct rgb rgb_from_u32(uint32_t v)
{
	return (struct rgb){(uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
}

void palette_named(struct palette *p, enum palette_kind kind)
{
	const struct named_palette *n = &named[kind];

	for (unsigned i = 0; i < 16; i++)
		p->colors[i] = rgb_from_u32(n->colors[i]);
	p->fg = n->fg;
	p->bg = n->bg;
}

void palette_set_colors(struct palette *p, const uint32_t colors[PALETTE_N_KEYS], uint32_t set)
{
	for (unsigned i = 0; i < 16; i++)
		if (set & (UINT32_C(1) << i))
			p->colors[i] = rgb_from_u32(colors[i]);
	if (set & (UINT32_C(1) << PALETTE_KEY_FG)) {
		p->colors[PALETTE_FG] = rgb_from_u32(colors[PALETTE_KEY_FG]);
		p->fg = PALETTE_FG;
	} else
		p->colors[PALETTE_FG] = p->colors[p->fg];
	if (set & (UINT32_C(1) << PALETTE_KEY_BG)) {
		p->colors[PALETTE_BG] = rgb_from_u32(colors[PALETTE_KEY_BG]);
		p->bg = PALETTE_BG;
	} else
		p->colors[PALETTE_BG] = p->colors[p->bg];
	palette_update_cmap(p);
}

static bool rgb_eq(struct rgb a, struct rgb b)
{
	return a.r == b.r && a.g == b.g && a.b == b.b;
}

static long rgb_dist(struct rgb a, struct rgb b)
{
	long dr = (long)a.r - b.r, dg = (long)a.g - b.g, db = (long)a.b - b.b;

	return dr * dr + dg * dg + db * db;
}

/* The entry below `n` nearest to c, skipping the two slots default colours
 * may take; the first on ties. */
static unsigned nearest_below(const struct palette *p, struct rgb c, unsigned n)
{
	unsigned best = 0;
	long best_d = -1;

	for (unsigned i = 0; i < n; i++) {
		long d;

		if (i == PALETTE_FG_SLOT || i == PALETTE_BG_SLOT)
			continue;
		d = rgb_dist(p->colors[i], c);
		if (best_d < 0 || d < best_d) {
			best = i;
			best_d = d;
		}
	}
	return best;
}

void palette_update_cmap(struct palette *p)
{
	static const unsigned extra[2] = {PALETTE_FG, PALETTE_BG};
	static const unsigned victim[2] = {PALETTE_FG_SLOT, PALETTE_BG_SLOT};

	for (unsigned i = 0; i < 256; i++) {
		p->slot[i] = (uint8_t)palette_cmap_slot(i);
		p->cmap[p->slot[i]] = p->colors[i];
	}
	for (unsigned k = 0; k < 2; k++) {
		unsigned e = extra[k], j;
		bool used = p->fg == e || p->bg == e;

		/* an entry with the same colour, but none whose slot a
		 * default colour may take */
		j = nearest_below(p, p->colors[e], 256);
		if (!used || rgb_eq(p->colors[j], p->colors[e])) {
			p->slot[e] = p->slot[j];
			continue;
		}
		p->slot[e] = (uint8_t)victim[k];
		p->cmap[victim[k]] = p->colors[e];
		/* the cube entry whose slot it took shows its nearest, or
		 * its own slot when the default colour is its very colour */
		if (rgb_eq(p->colors[victim[k]], p->colors[e]))
			p->slot[victim[k]] = (uint8_t)victim[k];
		else
			p->slot[victim[k]] = p->slot[nearest_below(p, p->colors[victim[k]], 256)];
	}
}

void palette_colorfgbg(const struct palette *p, unsigned *ret_fg, unsigned *ret_bg)
{
	*ret_fg = p->fg < 16 ? p->fg : nearest_below(p, p->colors[p->fg], 16);
	*ret_bg = p->bg < 16 ? p->bg : nearest_below(p, p->colors[p->bg], 16);
}
