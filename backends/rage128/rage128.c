/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rage128: the 2D engine of ATI's Rage128 family (Rage128, Rage128 Pro,
 * Rage128 Ultra, Rage Mobility M3/M4), driven through the registers that
 * aty128fb exposes after the framebuffer in /dev/fbN (8 KiB of MMIO).
 *
 * The engine takes its commands through a FIFO of 64 register writes;
 * GUI_STAT tells how many slots are free (bits 0-11) and whether the engine
 * is still drawing (bit 31). A blit is a handful of state writes and then
 * DST_HEIGHT_WIDTH, whose write starts it; a solid fill is the same with ROP
 * "pattern copy" and a solid brush of DP_BRUSH_FRGD_CLR. The common parts
 * (geometry, directions, polling, the plugin's ops) are in ../ati-common.h
 * and ../ati-common.c; this file describes the chip (rage128_chip).
 *
 * Trade-offs:
 * - aty128fb never initialises the 2D engine (it has no acceleration), and
 *   other users (X, another tool) may leave any state behind. So every
 *   operation writes the whole state it depends on: datatype, ROP, source,
 *   pitch and offset of source and destination, scissor, write mask and
 *   direction. That is 9 to 11 register writes for each blit, cheap next to
 *   the pixels moved, and nothing can go stale (QEMU, for one, never resets
 *   DP_CNTL).
 * - create() and reset() soft-reset the engine the way aty128fb's
 *   aty128_reset_engine() does, which also puts the command processor back
 *   into register (non-PM4) mode in case a DRI driver left it in ring mode.
 * - Source and destination get their own pitch/offset registers
 *   (GMC_SRC/DST_PITCH_OFFSET_CNTL), rebased per operation so y stays small.
 *   Pitch registers are never read back: QEMU's model returns garbage.
 * - sync() waits for the FIFO to drain, GUI_STAT bit 31 to clear, and then
 *   flushes the pixel cache, as aty128fb's wait_for_idle() does, so the CPU
 *   sees what the engine wrote.
 * - 24 bpp is refused (the engine would have to run at 8 bpp with tripled x,
 *   which cannot fill with a 3-byte colour); consoled then draws in software.
 * - The lines the engine may touch follow the virtual screen, which
 *   consoled grows for panning after create(): mode_changed() re-reads
 *   them (consoled calls it after every geometry change), or copies below
 *   the old height would be refused.
 *
 * QEMU's ati-vga model (QEMU 7.2) adds CRTC_OFFSET, the display start, to
 * every blit address on this chip; real chips do not. consoled keeps the
 * display start at 0 on this model (see fbdev_pan_quirk()), and create()
 * warns if it finds it elsewhere.
 */
#include <consoled/backend.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "../ati-common.h"

/* Registers (include/video/aty128.h). Below 0x1000 they act at once;
 * from 0x1000 on they go through the command FIFO. */
#define R128_CLOCK_CNTL_INDEX 0x0008
#define R128_CLOCK_CNTL_DATA 0x000c
#define R128_GEN_RESET_CNTL 0x00f0
#define R128_PC_NGUI_CTLSTAT 0x0184
#define R128_CRTC_OFFSET 0x0224
#define R128_PM4_BUFFER_CNTL 0x0704
#define R128_DST_OFFSET 0x1404
#define R128_DST_PITCH 0x1408
#define R128_SRC_OFFSET 0x15ac
#define R128_SRC_PITCH 0x15b0
#define R128_GUI_STAT 0x1740
#define R128_SCALE_3D_CNTL 0x1a00
#define R128_REGS_END 0x1a04 /* the window must reach past the last register used */

#define R128_GUI_STAT_FIFO_MASK 0x0fff
#define R128_SOFT_RESET_GUI (1u << 0)
#define R128_PC_FLUSH_ALL 0x00ff
#define R128_PC_BUSY (1u << 31)
#define R128_PM4_BUFFER_CNTL_NONPM4 0
#define R128_PLL_WR_EN 0x80
#define R128_PLL_MCLK_CNTL 0x0f
#define R128_MCLK_FORCE_ON 0x00030000 /* keep the memory clocks on across the reset */

/* Offsets address 16-byte units; pitches count 8 pixels. */
#define R128_OFFSET_ALIGN 16
#define R128_PITCH_UNIT_PIXELS 8
#define R128_PITCH_MAX 0x3ff

struct rage128 {
	struct ati_engine engine; /* first: consoled's handle is this struct */
	uint32_t pitch_units;	  /* pitch in 8-pixel units, for SRC/DST_PITCH */
};

/*
 * The Rage128 chips aty128fb drives. ATI's PCI device ids spell the chip's
 * two-letter code in ASCII: 0x5046 is "PF", the Rage128 Pro QEMU models.
 */
static const char *const rage128_chip_codes[] = {
    "RE RF RG RK RL SE SF SG SH SK SL SM SN",				       /* Rage128 */
    "PA PB PC PD PE PF PG PH PI PJ PK PL PM PN PO PP PQ PR PS PT PU PV PW PX", /* Pro */
    "TF TL TR TS TT TU",						       /* Ultra */
    "LE LF MF ML",							       /* Mobility M3, M4 */
};

static struct rage128 *to_rage128(struct ati_engine *e)
{
	return ati_container_of(e, struct rage128, engine);
}

static bool rage128_known_device(uint16_t device)
{
	for (size_t i = 0; i < sizeof(rage128_chip_codes) / sizeof(rage128_chip_codes[0]); i++)
		for (const char *c = rage128_chip_codes[i]; c[0] && c[1]; c += c[2] ? 3 : 2)
			if (((unsigned)c[0] << 8 | (unsigned)c[1]) == device)
				return true;
	return false;
}

static bool rage128_known_fb_id(const char *id)
{
	return strcmp(id, "ATY Rage128") == 0;
}

/* PLL registers sit behind an index/data pair; the index is one byte. */
static uint32_t rage128_pll_read(struct ati_engine *e, uint8_t index)
{
	ati_write8(e, R128_CLOCK_CNTL_INDEX, index & 0x3f);
	return ati_read(e, R128_CLOCK_CNTL_DATA);
}

static void rage128_pll_write(struct ati_engine *e, uint8_t index, uint32_t value)
{
	ati_write8(e, R128_CLOCK_CNTL_INDEX, (uint8_t)((index & 0x3f) | R128_PLL_WR_EN));
	ati_write(e, R128_CLOCK_CNTL_DATA, value);
}

/* Writes back what the engine holds in its pixel cache. */
static int rage128_flush_pixel_cache(struct ati_engine *e, uint64_t deadline)
{
	ati_write(e, R128_PC_NGUI_CTLSTAT, ati_read(e, R128_PC_NGUI_CTLSTAT) | R128_PC_FLUSH_ALL);
	return ati_wait_clear(e, R128_PC_NGUI_CTLSTAT, R128_PC_BUSY, deadline);
}

/* The soft reset of aty128_reset_engine(): GUI block reset with the memory
 * clocks forced on, then register (non-PM4) command mode. */
static void rage128_soft_reset(struct ati_engine *e)
{
	uint32_t clock_index, mclk, gen_reset;

	(void)rage128_flush_pixel_cache(e, ati_now_usec() + ATI_SETTLE_TIMEOUT_USEC);
	clock_index = ati_read(e, R128_CLOCK_CNTL_INDEX);
	mclk = rage128_pll_read(e, R128_PLL_MCLK_CNTL);
	rage128_pll_write(e, R128_PLL_MCLK_CNTL, mclk | R128_MCLK_FORCE_ON);

	gen_reset = ati_read(e, R128_GEN_RESET_CNTL);
	ati_pulse(e, R128_GEN_RESET_CNTL, gen_reset, R128_SOFT_RESET_GUI);

	rage128_pll_write(e, R128_PLL_MCLK_CNTL, mclk);
	ati_write(e, R128_CLOCK_CNTL_INDEX, clock_index);
	ati_write(e, R128_GEN_RESET_CNTL, gen_reset);
	ati_write(e, R128_PM4_BUFFER_CNTL, R128_PM4_BUFFER_CNTL_NONPM4);
}

/* After the reset: the 3D scaler shares the pipeline; aty128fb switches it
 * off too. */
static void rage128_setup(struct ati_engine *e)
{
	ati_write(e, R128_SCALE_3D_CNTL, 0);
}

/* On QEMU's model, CRTC_OFFSET moves every blit (not the picture). */
static void rage128_check_display_start(struct ati_engine *e)
{
	uint32_t start;

	if (!e->qemu_model)
		return;
	start = ati_read(e, R128_CRTC_OFFSET) & 0x07ffffff;
	if (start != 0)
		ati_log(e, LOG_WARNING,
			"The display starts at byte %u: QEMU's Rage128 model adds this to every "
			"blit address, so blits will land %u bytes too far",
			start, start);
}

static int rage128_set_pitch(struct ati_engine *e)
{
	return ati_pitch_units(e, R128_PITCH_UNIT_PIXELS * e->bytes_per_pixel, R128_PITCH_MAX,
			       &to_rage128(e)->pitch_units);
}

/* The state common to copies and fills: datatype, brush and ROP (gmc),
 * write mask, scissor and direction. A fill's colour comes between the
 * first and the rest. */
static void rage128_emit_state(struct ati_engine *e, const struct ati_blit *b, uint32_t gmc,
			       bool fill)
{
	ati_write(e, ATI_DP_GUI_MASTER_CNTL, ati_gmc(e, gmc));
	if (fill)
		ati_write(e, ATI_DP_BRUSH_FRGD_CLR, b->pixel);
	ati_write(e, ATI_DP_WRITE_MASK, 0xffffffff);
	ati_write(e, ATI_DEFAULT_SC_BOTTOM_RIGHT, ATI_SCISSOR_MAX);
	ati_write(e, ATI_DP_CNTL, b->dp_cntl);
}

static void rage128_emit_copy(struct ati_engine *e, const struct ati_blit *b)
{
	struct rage128 *r = to_rage128(e);

	rage128_emit_state(e, b, ATI_GMC_BRUSH_NONE | ATI_GMC_ROP3_SRCCOPY, false);
	ati_write(e, R128_SRC_OFFSET, b->src_offset);
	ati_write(e, R128_SRC_PITCH, r->pitch_units);
	ati_write(e, R128_DST_OFFSET, b->dst_offset);
	ati_write(e, R128_DST_PITCH, r->pitch_units);
	ati_emit_start(e, b, true);
}

/* A solid fill is a pattern copy (ROP 0xf0) with a solid brush: no source. */
static void rage128_emit_fill(struct ati_engine *e, const struct ati_blit *b)
{
	struct rage128 *r = to_rage128(e);

	rage128_emit_state(e, b, ATI_GMC_BRUSH_SOLID_COLOR | ATI_GMC_ROP3_PATCOPY, true);
	ati_write(e, R128_DST_OFFSET, b->dst_offset);
	ati_write(e, R128_DST_PITCH, r->pitch_units);
	ati_emit_start(e, b, false);
}

static const struct ati_chip rage128_chip = {
    .size = sizeof(struct rage128),
    .status_reg = R128_GUI_STAT,
    .status_name = "GUI_STAT",
    .fifo_mask = R128_GUI_STAT_FIFO_MASK,
    .offset_align = R128_OFFSET_ALIGN,
    .regs_end = R128_REGS_END,
    .cache_name = "pixel cache",
    .known_device = rage128_known_device,
    .known_fb_id = rage128_known_fb_id,
    .set_pitch = rage128_set_pitch,
    .check_mode = rage128_check_display_start,
    .engine_reset = rage128_soft_reset,
    .setup = rage128_setup,
    /* Idle as aty128fb's wait_for_idle(): FIFO drained, GUI_STAT bit 31
     * clear, then the pixel cache written back. */
    .flush = rage128_flush_pixel_cache,
    .emit_copy = rage128_emit_copy,
    .copy_writes = 11, /* 4 of state, 2 offsets, 2 pitches, 3 to start */
    .emit_fill = rage128_emit_fill,
    .fill_writes = 9, /* 4 of state, colour, offset, pitch, 2 to start */
    .name = "Rage128",
};

ATI_BACKEND_PLUGIN(rage128_chip, "rage128",
		   "ATI Rage128 2D engine (aty128fb): copies and solid fills through MMIO");
