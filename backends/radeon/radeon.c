/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * radeon: the 2D engine of ATI's first Radeon generation (R100: Radeon
 * 7200/DDR/SDR, RV100: Radeon VE/7000 and Mobility M6, RN50/ES1000, RS100
 * IGP 320), driven through the registers that radeonfb exposes after the
 * framebuffer in /dev/fbN (16 KiB of MMIO).
 *
 * The 2D block is the Rage128's (see ../ati-common.h; the code both
 * plugins share is in ../ati-common.c, this file describes the chip in
 * radeon_chip): 64 command FIFO slots counted in RBBM_STATUS bits 0-6,
 * "busy" in bit 31, a blit started by writing DST_HEIGHT_WIDTH, solid fills
 * as pattern copies with a solid brush. What differs from the Rage128:
 * source and destination pitch and offset are one register each (pitch in
 * 64-byte units in bits 22-31, offset in KiB in bits 0-21), offsets are in
 * the card's own address space (VRAM starts at MC_FB_LOCATION << 16, not at
 * 0), and writes go through a 2D destination cache that must be flushed.
 *
 * Trade-offs:
 * - Every operation writes the whole state it depends on (datatype, ROP,
 *   source, pitch/offsets, scissor, write mask, direction): radeonfb
 *   programs the engine only when its own acceleration is on, which it is
 *   not while consoled holds the registers (accel_flags 0), and anyone
 *   else may have used the engine since. QEMU never resets DP_CNTL.
 * - Like radeonfb, each operation first flushes the destination cache and
 *   makes the command stream wait for the previous operation to be idle and
 *   clean (WAIT_UNTIL): an overlapping copy then never reads pixels still
 *   sitting in the cache. This serialises operations, which costs little for
 *   the few large blits of a scroll.
 * - sync() waits for the FIFO to drain and RBBM_STATUS bit 31 to clear,
 *   then flushes the destination cache and waits for it, as radeonfb's
 *   _radeon_engine_idle() does, so the CPU sees what the engine wrote.
 * - create() and reset() use radeonfb's R100 soft reset (CP, HI, SE, RE,
 *   PP, E2, RB, then the host data path). Radeons after the R100 family
 *   (R200, R300, ...) keep these registers but R300s reset differently;
 *   they are only driven on a fix.id guess, with a notice.
 * - MC_FB_LOCATION is read at create() and mode changes, not before every
 *   operation as radeonfb does: only a mode-setting X server moves it, and
 *   consoled gets mode_changed() when its VT comes back.
 * - The lines the engine may touch follow the virtual screen, which
 *   consoled grows for panning after create(): mode_changed() re-reads
 *   them (consoled calls it after every geometry change), or copies below
 *   the old height would be refused.
 * - 24 bpp is refused (radeonfb does not offer it either).
 */
#include <consoled/backend.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "../ati-common.h"

/* Registers (include/video/radeon.h). Below 0x1000 they act at once;
 * the GUI registers from 0x1400 on go through the command FIFO. */
#define RADEON_CLOCK_CNTL_INDEX 0x0008
#define RADEON_CLOCK_CNTL_DATA 0x000c
#define RADEON_CRTC_GEN_CNTL 0x0050
#define RADEON_RBBM_SOFT_RESET 0x00f0
#define RADEON_HOST_PATH_CNTL 0x0130
#define RADEON_MC_FB_LOCATION 0x0148
#define RADEON_RBBM_STATUS 0x0e40
#define RADEON_SRC_PITCH_OFFSET 0x1428
#define RADEON_DST_PITCH_OFFSET 0x142c
#define RADEON_DEFAULT_SC_TOP_LEFT 0x16ec
#define RADEON_DSTCACHE_CTLSTAT 0x1714
#define RADEON_WAIT_UNTIL 0x1720
#define RADEON_RB3D_CNTL 0x1c3c
#define RADEON_RB2D_DSTCACHE_MODE 0x3428
#define RADEON_REGS_END 0x342c /* the window must reach past the last register used */

#define RADEON_RBBM_FIFO_MASK 0x7f
#define RADEON_SOFT_RESET_ENGINE 0x7f /* CP, HI, SE, RE, PP, E2, RB */
#define RADEON_HDP_SOFT_RESET (1u << 26)
#define RADEON_DC_FLUSH_ALL 0x5 /* flush and free the 2D destination cache */
#define RADEON_DC_BUSY (1u << 31)
#define RADEON_WAIT_2D_IDLECLEAN (1u << 16)
#define RADEON_WAIT_DMA_GUI_IDLE (1u << 9)
#define RADEON_PLL_WR_EN 0x80
#define RADEON_PLL_MCLK_CNTL 0x12
#define RADEON_MCLK_FORCE_ON 0x003f0000 /* MCLKA/B, YCLKA/B, MC, AIC stay on across a reset */

/* Offsets address 1 KiB units; pitches count 64 bytes, 10 bits. */
#define RADEON_OFFSET_ALIGN 1024
#define RADEON_PITCH_UNIT 64
#define RADEON_PITCH_MAX 0x3ff

struct radeon {
	struct ati_engine engine; /* first: consoled's handle is this struct */
	uint32_t fb_location;	  /* where VRAM starts in the card's address space */
	uint32_t pitch_field;	  /* pitch / 64, at bit 22 of the pitch/offset registers */
};

/* The R100-family device ids radeonfb drives. */
static const uint16_t radeon_r100_ids[] = {
    0x5144, 0x5145, 0x5146, 0x5147, /* R100 "QD".."QG": Radeon 7200, DDR, SDR */
    0x5159, 0x515a,		    /* RV100 "QY", "QZ": Radeon VE/7000 (QEMU's rv100) */
    0x4c59, 0x4c5a,		    /* RV100 "LY", "LZ": Mobility M6 */
    0x515e, 0x5969,		    /* RN50: ES1000 */
    0x4136, 0x4336,		    /* RS100: IGP 320, 320M */
};

static struct radeon *to_radeon(struct ati_engine *e)
{
	return ati_container_of(e, struct radeon, engine);
}

static bool radeon_known_device(uint16_t device)
{
	for (size_t i = 0; i < sizeof(radeon_r100_ids) / sizeof(radeon_r100_ids[0]); i++)
		if (radeon_r100_ids[i] == device)
			return true;
	return false;
}

static bool radeon_known_fb_id(const char *id)
{
	return strncmp(id, "ATI Radeon", strlen("ATI Radeon")) == 0;
}

static void radeon_check_device(struct ati_engine *e, const struct consoled_fb_info *fb)
{
	if (fb->pci_vendor != ATI_PCI_VENDOR || !radeon_known_device(fb->pci_device))
		ati_log(e, LOG_NOTICE,
			"%s (PCI %04x:%04x) is not a known R100-family chip; driving it as one",
			fb->id, fb->pci_vendor, fb->pci_device);
}

/* PLL registers sit behind an index/data pair; the index is one byte.
 * The two reads after it are radeonfb's workaround for chips that need
 * them before the data register is valid; they are harmless elsewhere. */
static void radeon_pll_select(struct ati_engine *e, uint8_t index)
{
	ati_write8(e, RADEON_CLOCK_CNTL_INDEX, index);
	(void)ati_read(e, RADEON_CLOCK_CNTL_DATA);
	(void)ati_read(e, RADEON_CRTC_GEN_CNTL);
}

static uint32_t radeon_pll_read(struct ati_engine *e, uint8_t index)
{
	radeon_pll_select(e, index & 0x3f);
	return ati_read(e, RADEON_CLOCK_CNTL_DATA);
}

static void radeon_pll_write(struct ati_engine *e, uint8_t index, uint32_t value)
{
	radeon_pll_select(e, (uint8_t)((index & 0x3f) | RADEON_PLL_WR_EN));
	ati_write(e, RADEON_CLOCK_CNTL_DATA, value);
}

/* Writes the 2D destination cache back to VRAM and waits for it. */
static int radeon_flush_cache(struct ati_engine *e, uint64_t deadline)
{
	int ret;

	ati_write(e, RADEON_DSTCACHE_CTLSTAT,
		  (ati_read(e, RADEON_DSTCACHE_CTLSTAT) & ~RADEON_DC_FLUSH_ALL) |
		      RADEON_DC_FLUSH_ALL);
	/* The flush travels through the FIFO: let it reach the cache. */
	ret = ati_wait_idle(e, deadline, false);
	if (ret < 0)
		return ret;
	return ati_wait_clear(e, RADEON_DSTCACHE_CTLSTAT, RADEON_DC_BUSY, deadline);
}

/* 3D off, as radeonfb_engine_init() starts, then radeonfb_engine_reset()
 * for the R100 family. */
static void radeon_soft_reset(struct ati_engine *e)
{
	uint32_t clock_index, mclk, host_path, rbbm;

	ati_write(e, RADEON_RB3D_CNTL, 0);
	(void)radeon_flush_cache(e, ati_now_usec() + ATI_SETTLE_TIMEOUT_USEC);
	clock_index = ati_read(e, RADEON_CLOCK_CNTL_INDEX);
	mclk = radeon_pll_read(e, RADEON_PLL_MCLK_CNTL);
	radeon_pll_write(e, RADEON_PLL_MCLK_CNTL, mclk | RADEON_MCLK_FORCE_ON);

	host_path = ati_read(e, RADEON_HOST_PATH_CNTL);
	rbbm = ati_read(e, RADEON_RBBM_SOFT_RESET);
	ati_pulse(e, RADEON_RBBM_SOFT_RESET, rbbm, RADEON_SOFT_RESET_ENGINE);

	ati_write(e, RADEON_HOST_PATH_CNTL, host_path | RADEON_HDP_SOFT_RESET);
	(void)ati_read(e, RADEON_HOST_PATH_CNTL);
	ati_write(e, RADEON_HOST_PATH_CNTL, host_path);
	ati_write(e, RADEON_RBBM_SOFT_RESET, rbbm);

	ati_write(e, RADEON_CLOCK_CNTL_INDEX, clock_index);
	radeon_pll_write(e, RADEON_PLL_MCLK_CNTL, mclk);
}

/* After the reset (radeonfb_engine_init() without the pitch): the R100
 * destination cache mode, and where VRAM lies for the engine. */
static void radeon_setup(struct ati_engine *e)
{
	ati_write(e, RADEON_RB2D_DSTCACHE_MODE, 0);
	to_radeon(e)->fb_location = ati_read(e, RADEON_MC_FB_LOCATION) << 16;
}

static int radeon_set_pitch(struct ati_engine *e)
{
	return ati_pitch_units(e, RADEON_PITCH_UNIT, RADEON_PITCH_MAX, &to_radeon(e)->pitch_field);
}

static uint32_t radeon_pitch_offset(const struct radeon *r, uint32_t offset)
{
	return r->pitch_field << 22 | (r->fb_location + offset) >> 10;
}

/* The state common to copies and fills, after making the command stream
 * wait until the previous operation has left the destination cache. */
static void radeon_emit_state(struct ati_engine *e, const struct ati_blit *b, uint32_t gmc)
{
	ati_write(e, RADEON_DSTCACHE_CTLSTAT, RADEON_DC_FLUSH_ALL);
	ati_write(e, RADEON_WAIT_UNTIL, RADEON_WAIT_2D_IDLECLEAN | RADEON_WAIT_DMA_GUI_IDLE);
	ati_write(e, ATI_DP_GUI_MASTER_CNTL, ati_gmc(e, gmc));
	ati_write(e, ATI_DP_WRITE_MASK, 0xffffffff);
	ati_write(e, RADEON_DEFAULT_SC_TOP_LEFT, 0);
	ati_write(e, ATI_DEFAULT_SC_BOTTOM_RIGHT, ATI_SCISSOR_MAX);
	ati_write(e, ATI_DP_CNTL, b->dp_cntl);
}

static void radeon_emit_copy(struct ati_engine *e, const struct ati_blit *b)
{
	struct radeon *r = to_radeon(e);

	radeon_emit_state(e, b, ATI_GMC_BRUSH_NONE | ATI_GMC_ROP3_SRCCOPY);
	ati_write(e, RADEON_SRC_PITCH_OFFSET, radeon_pitch_offset(r, b->src_offset));
	ati_write(e, RADEON_DST_PITCH_OFFSET, radeon_pitch_offset(r, b->dst_offset));
	ati_emit_start(e, b, true);
}

/* A solid fill is a pattern copy (ROP 0xf0) with a solid brush: no source. */
static void radeon_emit_fill(struct ati_engine *e, const struct ati_blit *b)
{
	struct radeon *r = to_radeon(e);

	radeon_emit_state(e, b, ATI_GMC_BRUSH_SOLID_COLOR | ATI_GMC_ROP3_PATCOPY);
	ati_write(e, ATI_DP_BRUSH_FRGD_CLR, b->pixel);
	ati_write(e, RADEON_DST_PITCH_OFFSET, radeon_pitch_offset(r, b->dst_offset));
	ati_emit_start(e, b, false);
}

static void radeon_describe(struct ati_engine *e, char *buf, size_t size)
{
	snprintf(buf, size, ", VRAM at %#x", to_radeon(e)->fb_location);
}

static const struct ati_chip radeon_chip = {
    .size = sizeof(struct radeon),
    .status_reg = RADEON_RBBM_STATUS,
    .status_name = "RBBM_STATUS",
    .fifo_mask = RADEON_RBBM_FIFO_MASK,
    .offset_align = RADEON_OFFSET_ALIGN,
    .regs_end = RADEON_REGS_END,
    .cache_name = "destination cache",
    .known_device = radeon_known_device,
    .known_fb_id = radeon_known_fb_id,
    .check_device = radeon_check_device,
    .set_pitch = radeon_set_pitch,
    .engine_reset = radeon_soft_reset,
    .setup = radeon_setup,
    /* Idle as radeonfb's _radeon_engine_idle(): FIFO drained, RBBM_STATUS
     * bit 31 clear, then the destination cache flushed. */
    .flush = radeon_flush_cache,
    .emit_copy = radeon_emit_copy,
    .copy_writes = 12, /* 7 of state, 2 pitch/offsets, 3 to start */
    .emit_fill = radeon_emit_fill,
    .fill_writes = 11, /* 7 of state, colour, pitch/offset, 2 to start */
    .name = "Radeon",
    .describe = radeon_describe,
};

ATI_BACKEND_PLUGIN(radeon_chip, "radeon",
		   "ATI Radeon R100 2D engine (radeonfb): copies and solid fills through MMIO");
