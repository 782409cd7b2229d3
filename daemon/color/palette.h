/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Colours. consoled works with a 256-entry palette: entries 0-15 are the 16
 * console colours (the kernel console's, or xterm's), 16-231 xterm's 6x6x6
 * colour cube and 232-255 its grey ramp. At 8 bpp pseudocolour the palette
 * *is* the colour map (pixel.h), so 256-colour programs are exact; rgb
 * colours (SGR 38;2) take the nearest entry.
 *
 * Two more entries hold the default foreground and background when they are
 * colours of their own (foreground=, background=); otherwise the defaults
 * are entries of the 16 (7 on 0 for most palettes). At 8 bpp such a colour
 * shares the slot of an entry with exactly its colour, or takes the colour
 * map slot of cube entry 231 (foreground) or 16 (background), both
 * duplicates of white and black in most palettes; that entry then shows the
 * nearest remaining one. slot[] says which colour map slot shows an entry.
 *
 * Named palettes and the colour keys. A palette starts from --palette=: the
 * kernel console's colours (linux, from vt.default_red= and friends),
 * xterm's, or one of the fixed tables here, each with its own default
 * colours (Solarized's are entries of its 16, as its authors' own terminal
 * files give them). color0..color15 then replace single colours, and
 * foreground=/background= make the default colours colours of their own
 * (PALETTE_FG, PALETTE_BG), so they may differ from all 16.
 *
 * Every colour reaches the screen unchanged: packed at 15 bpp and deeper,
 * through the colour map at 8 bpp (palette_update_cmap()). The session's
 * COLORFGBG names the defaults by the nearest of the 16 (palette_colorfgbg()).
 */
#include <stdbool.h>
#include <stdint.h>

enum palette_kind {
	PALETTE_LINUX, /* the kernel console's 16 colours (vt.default_{red,grn,blu}) */
	PALETTE_XTERM, /* xterm's 16 colours */
	/* named palettes with fixed colours (palette.h) */
	PALETTE_VGA,		 /* the VGA text mode's, whatever vt.default_* say */
	PALETTE_TANGO,		 /* GNOME Terminal's Tango */
	PALETTE_SOLARIZED,	 /* Solarized, dark */
	PALETTE_SOLARIZED_LIGHT, /* Solarized, light */
};

/* The colour keys of the settings: color0..color15, then foreground and
 * background. */
#define PALETTE_KEY_FG 16
#define PALETTE_KEY_BG 17
#define PALETTE_N_KEYS 18

struct rgb {
	uint8_t r, g, b;
};

#define PALETTE_FG 256 /* the default foreground as a colour of its own */
#define PALETTE_BG 257 /* the default background as a colour of its own */
#define PALETTE_ENTRIES 258
/* The cube entries whose colour map slots PALETTE_FG and PALETTE_BG take at
 * 8 bpp when no entry has their colour. */
#define PALETTE_FG_SLOT 231
#define PALETTE_BG_SLOT 16

struct palette {
	struct rgb colors[PALETTE_ENTRIES];
	unsigned fg, bg;	       /* entries of the default colours */
	uint8_t slot[PALETTE_ENTRIES]; /* 8 bpp: the colour map slot showing each entry */
	struct rgb cmap[256];	       /* 8 bpp: the colour map */
};

/* The kernel console's default colours (drivers/tty/vt/vt.c). */
extern const struct rgb palette_linux_default[16];

/* Fills the 16 console colours and the default colours from the kind, and
 * the xterm cube and ramp; then the colour map (palette_update_cmap()).
 * For PALETTE_LINUX the colours come from the vt module's parameters in
 * `sysfs_dir` (normally /sys/module/vt/parameters), so vt.default_red= and
 * friends on the kernel command line are honoured; a missing or malformed
 * file leaves the built-in table. Returns true when sysfs was used. */
bool palette_init(struct palette *p, enum palette_kind kind, const char *sysfs_dir);

/* Parses "170,0,...": exactly 16 comma-separated values 0-255. */
int palette_parse_channel(const char *s, uint8_t ret[16]);

/* The palette entry for an rgb colour: exact for the cube and grey ramp. */
unsigned palette_nearest(const struct palette *p, struct rgb c);

/* The colour map slot of console colour (or cube entry) `index` at 8 bpp
 * pseudocolour as fbcon orders them (VGA order for 0-15), before any slot is
 * taken for PALETTE_FG or PALETTE_BG. */
unsigned palette_cmap_slot(unsigned index);

/* Fills the 16 colours and the default entries (p->fg, p->bg) of a named,
 * fixed palette: PALETTE_VGA, _TANGO, _SOLARIZED or _SOLARIZED_LIGHT. */
void palette_named(struct palette *p, enum palette_kind kind);

/* Applies the colour keys (options.h: colors[], bit i of `set` for
 * colors[i]) over the palette and updates its colour map. */
void palette_set_colors(struct palette *p, const uint32_t colors[PALETTE_N_KEYS], uint32_t set);

/* Computes p->slot[] and p->cmap[] from the colours. */
void palette_update_cmap(struct palette *p);

/* The default colours as entries of the 16 for COLORFGBG: themselves when
 * they are, else the one of the 16 with their colour or the nearest. */
void palette_colorfgbg(const struct palette *p, unsigned *ret_fg, unsigned *ret_bg);
