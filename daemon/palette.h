/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Named palettes and the colour keys. A palette (pixel.h) starts from
 * --palette=: the kernel console's colours (linux, from vt.default_red= and
 * friends), xterm's, or one of the fixed tables here, each with its own
 * default colours (Solarized's are entries of its 16, as its authors' own
 * terminal files give them). color0..color15 then replace single colours,
 * and foreground=/background= make the default colours colours of their own
 * (PALETTE_FG, PALETTE_BG), so they may differ from all 16.
 *
 * Every colour reaches the screen unchanged: packed at 15 bpp and deeper,
 * through the colour map at 8 bpp (palette_update_cmap()). The session's
 * COLORFGBG names the defaults by the nearest of the 16 (palette_colorfgbg()).
 */
#include <stdint.h>

#include "options.h"
#include "pixel.h"

/* Fills the 16 colours and the default entries (p->fg, p->bg) of a named,
 * fixed palette: PALETTE_VGA, _TANGO, _SOLARIZED or _SOLARIZED_LIGHT. */
void palette_named(struct palette *p, enum palette_kind kind);

/* Applies the colour keys (options.h: colors[], bit i of `set` for
 * colors[i]) over the palette and updates its colour map. */
void palette_set_colors(struct palette *p, const uint32_t colors[OPTIONS_N_COLORS], uint32_t set);

/* The palette of the options: --palette= (sysfs_dir as palette_init()),
 * then the colour keys. */
void palette_from_options(struct palette *p, const struct options *o, const char *sysfs_dir);

/* Computes p->slot[] and p->cmap[] from the colours (pixel.h). */
void palette_update_cmap(struct palette *p);

/* The default colours as entries of the 16 for COLORFGBG: themselves when
 * they are, else the one of the 16 with their colour or the nearest. */
void palette_colorfgbg(const struct palette *p, unsigned *ret_fg, unsigned *ret_bg);
