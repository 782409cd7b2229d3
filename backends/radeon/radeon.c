/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * radeon: the 2D engine of ATI's first Radeon generation (R100: Radeon
 * 7200/DDR/SDR, RV100: Radeon VE/7000 and Mobility M6, RN50/ES1000, RS100
 * IGP 320), driven through the registers that radeonfb exposes after the
 * framebuffer in /dev/fbN (16 KiB of MMIO).
 *
 * The 2D block is the Rage128's (see ../ati-common.h): 64 command FIFO
 * slots counted in RBBM_STATUS bits 0-6, "busy" in bit 31, a blit started
 * by writing DST_HEIGHT_WIDTH, solid fills as pattern copies with a solid
 * brush. What differs from the Rage128: source and destination pitch and
 * offset are one register each (pitch in 64-byte units in bits 22-31, offset
 * in KiB in bits 0-21), offsets are in the card's own address space (VRAM
 * starts at MC_FB_LOCATION << 16, not at 0), and writes go through a 2D
 * destination cache that must be flushed.
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

/* A bounded wait in create(), reset() and destroy(). */
#define RADEON_SETTLE_TIMEOUT_USEC 100000u

#define PCI_VENDOR_ATI 0x1002

struct radeon {
	struct consoled_backend base; /* first: consoled's handle is this struct */
	struct ati_engine engine;
	uint32_t fb_location; /* where VRAM starts in the card's address space */
	uint32_t pitch_field; /* pitch / 64, at bit 22 of the pitch/offset registers */
};

/* The R100-family device ids radeonfb drives. */
static const uint16_t radeon_r100_ids[] = {
    0x5144, 0x5145, 0x5146, 0x5147, /* R100 "QD".."QG": Radeon 7200, DDR, SDR */
    0x5159, 0x515a,		    /* RV100 "QY", "QZ": Radeon VE/7000 (QEMU's rv100) */
    0x4c59, 0x4c5a,		    /* RV100 "LY", "LZ": Mobility M6 */
    0x515e, 0x5969,		    /* RN50: ES1000 */
    0x4136, 0x4336,		    /* RS100: IGP 320, 320M */
};

static struct radeon *to_radeon(struct consoled_backend *b)
{
	return (struct radeon *)b;
}

static bool radeon_known_id(uint16_t vendor, uint16_t device)
{
	if (vendor != PCI_VENDOR_ATI)
		return false;
	for (size_t i = 0; i < sizeof(radeon_r100_ids) / sizeof(radeon_r100_ids[0]); i++)
		if (radeon_r100_ids[i] == device)
			return true;
	return false;
}

static int radeon_probe(const struct consoled_fb_info *fb)
{
	if (radeon_known_id(fb->pci_vendor, fb->pci_device))
		return 100;
	if (strncmp(fb->id, "ATI Radeon", strlen("ATI Radeon")) == 0)
		return 50;
	return 0;
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

/* radeonfb_engine_reset() for the R100 family. */
static void radeon_soft_reset(struct ati_engine *e)
{
	uint32_t clock_index, mclk, host_path, rbbm;

	(void)radeon_flush_cache(e, ati_now_usec() + RADEON_SETTLE_TIMEOUT_USEC);
	clock_index = ati_read(e, RADEON_CLOCK_CNTL_INDEX);
	mclk = radeon_pll_read(e, RADEON_PLL_MCLK_CNTL);
	radeon_pll_write(e, RADEON_PLL_MCLK_CNTL, mclk | RADEON_MCLK_FORCE_ON);

	host_path = ati_read(e, RADEON_HOST_PATH_CNTL);
	rbbm = ati_read(e, RADEON_RBBM_SOFT_RESET);
	ati_write(e, RADEON_RBBM_SOFT_RESET, rbbm | RADEON_SOFT_RESET_ENGINE);
	(void)ati_read(e, RADEON_RBBM_SOFT_RESET);
	ati_write(e, RADEON_RBBM_SOFT_RESET, rbbm & ~RADEON_SOFT_RESET_ENGINE);
	(void)ati_read(e, RADEON_RBBM_SOFT_RESET);

	ati_write(e, RADEON_HOST_PATH_CNTL, host_path | RADEON_HDP_SOFT_RESET);
	(void)ati_read(e, RADEON_HOST_PATH_CNTL);
	ati_write(e, RADEON_HOST_PATH_CNTL, host_path);
	ati_write(e, RADEON_RBBM_SOFT_RESET, rbbm);

	ati_write(e, RADEON_CLOCK_CNTL_INDEX, clock_index);
	radeon_pll_write(e, RADEON_PLL_MCLK_CNTL, mclk);
	/* The FIFO was emptied; count its slots again on the next write. */
	e->fifo_free = 0;
}

/* radeonfb_engine_init() without the pitch: 3D off, soft reset, the R100
 * destination cache mode, and where VRAM lies for the engine. Waits
 * (bounded, ignoring the test switch) until the engine answers as idle. */
static int radeon_engine_init(struct radeon *r)
{
	struct ati_engine *e = &r->engine;
	int ret;

	(void)ati_wait_idle(e, ati_now_usec() + RADEON_SETTLE_TIMEOUT_USEC, false);
	ati_write(e, RADEON_RB3D_CNTL, 0);
	radeon_soft_reset(e);
	ret = ati_fifo_reserve(e, 1);
	if (ret < 0)
		return ret;
	ati_write(e, RADEON_RB2D_DSTCACHE_MODE, 0);
	r->fb_location = ati_read(e, RADEON_MC_FB_LOCATION) << 16;
	ret = ati_wait_idle(e, ati_now_usec() + RADEON_SETTLE_TIMEOUT_USEC, false);
	if (ret < 0)
		ati_log(e, LOG_ERR, "The engine is still busy after a reset (RBBM_STATUS %#x)",
			ati_read(e, RADEON_RBBM_STATUS));
	return ret;
}

static int radeon_set_mode(struct radeon *r, const struct consoled_fb_info *fb)
{
	struct ati_engine *e = &r->engine;
	int ret;

	ret = ati_mode_init(e, fb);
	if (ret < 0)
		return ret;
	if (e->pitch % RADEON_PITCH_UNIT != 0 || e->pitch / RADEON_PITCH_UNIT > RADEON_PITCH_MAX) {
		ati_log(e, LOG_INFO,
			"Lines of %u bytes are not a pitch the engine takes (multiples of %u "
			"bytes, at most %u)",
			e->pitch, RADEON_PITCH_UNIT, RADEON_PITCH_MAX * RADEON_PITCH_UNIT);
		return -ENOTSUP;
	}
	r->pitch_field = e->pitch / RADEON_PITCH_UNIT;
	return 0;
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
	ati_write(e, ATI_DP_GUI_MASTER_CNTL,
		  gmc | ATI_GMC_SRC_PITCH_OFFSET_CNTL | ATI_GMC_DST_PITCH_OFFSET_CNTL |
		      ATI_GMC_DST_DATATYPE(e->datatype) | ATI_GMC_SRC_DATATYPE_COLOR |
		      ATI_GMC_SRC_SOURCE_MEMORY | ATI_GMC_CLR_CMP_CNTL_DIS | ATI_GMC_AUX_CLIP_DIS |
		      ATI_GMC_WR_MSK_DIS);
	ati_write(e, ATI_DP_WRITE_MASK, 0xffffffff);
	ati_write(e, RADEON_DEFAULT_SC_TOP_LEFT, 0);
	ati_write(e, ATI_DEFAULT_SC_BOTTOM_RIGHT, ATI_SCISSOR_MAX);
	ati_write(e, ATI_DP_CNTL, b->dp_cntl);
}

static int radeon_emit_copy(struct ati_engine *e, const struct ati_blit *b)
{
	struct radeon *r = ati_container_of(e, struct radeon, engine);
	int ret;

	ret = ati_fifo_reserve(e, 12);
	if (ret < 0)
		return ret;
	radeon_emit_state(e, b, ATI_GMC_BRUSH_NONE | ATI_GMC_ROP3_SRCCOPY);
	ati_write(e, RADEON_SRC_PITCH_OFFSET, radeon_pitch_offset(r, b->src_offset));
	ati_write(e, RADEON_DST_PITCH_OFFSET, radeon_pitch_offset(r, b->dst_offset));
	ati_write(e, ATI_SRC_Y_X, b->src_y << 16 | b->src_x);
	ati_write(e, ATI_DST_Y_X, b->dst_y << 16 | b->dst_x);
	ati_write(e, ATI_DST_HEIGHT_WIDTH, b->h << 16 | b->w);
	return 0;
}

/* A solid fill is a pattern copy (ROP 0xf0) with a solid brush: no source. */
static int radeon_emit_fill(struct ati_engine *e, const struct ati_blit *b)
{
	struct radeon *r = ati_container_of(e, struct radeon, engine);
	int ret;

	ret = ati_fifo_reserve(e, 11);
	if (ret < 0)
		return ret;
	radeon_emit_state(e, b, ATI_GMC_BRUSH_SOLID_COLOR | ATI_GMC_ROP3_PATCOPY);
	ati_write(e, ATI_DP_BRUSH_FRGD_CLR, b->pixel);
	ati_write(e, RADEON_DST_PITCH_OFFSET, radeon_pitch_offset(r, b->dst_offset));
	ati_write(e, ATI_DST_Y_X, b->dst_y << 16 | b->dst_x);
	ati_write(e, ATI_DST_HEIGHT_WIDTH, b->h << 16 | b->w);
	return 0;
}

static int radeon_copy(struct consoled_backend *b, uint32_t sx, uint32_t sy, uint32_t dx,
		       uint32_t dy, uint32_t w, uint32_t h)
{
	return ati_copy(&to_radeon(b)->engine, sx, sy, dx, dy, w, h, radeon_emit_copy);
}

static int radeon_fill(struct consoled_backend *b, uint32_t x, uint32_t y, uint32_t w, uint32_t h,
		       uint32_t pixel)
{
	return ati_fill(&to_radeon(b)->engine, x, y, w, h, pixel, radeon_emit_fill);
}

/* Idle as radeonfb's _radeon_engine_idle(): FIFO drained, RBBM_STATUS
 * bit 31 clear, then the destination cache flushed, within one deadline. */
static int radeon_wait_done(struct ati_engine *e, uint32_t timeout_usec, bool hang)
{
	return ati_wait_done(e, timeout_usec, hang, "RBBM_STATUS", "destination cache",
			     radeon_flush_cache);
}

static int radeon_sync(struct consoled_backend *b, uint32_t timeout_usec)
{
	struct ati_engine *e = &to_radeon(b)->engine;

	return radeon_wait_done(e, timeout_usec, e->hang);
}

static int radeon_reset(struct consoled_backend *b)
{
	struct radeon *r = to_radeon(b);

	ati_log(&r->engine, LOG_NOTICE, "Resetting the 2D engine");
	return radeon_engine_init(r);
}

static int radeon_mode_changed(struct consoled_backend *b, const struct consoled_fb_info *fb)
{
	struct radeon *r = to_radeon(b);
	int ret;

	if (!ati_fb_info_complete(fb))
		return -EINVAL;
	ret = radeon_set_mode(r, fb);
	if (ret < 0)
		return ret;
	/* Whoever had the VT meanwhile may have used the engine or moved
	 * VRAM in the card's address space. */
	return radeon_engine_init(r);
}

static void radeon_destroy(struct consoled_backend *b)
{
	struct radeon *r = to_radeon(b);
	struct ati_engine *e = &r->engine;

	/* consoled unmaps the registers next: nothing may still be drawing. */
	if (radeon_wait_done(e, RADEON_SETTLE_TIMEOUT_USEC, e->hang) < 0)
		ati_log(e, LOG_WARNING, "Leaving the engine busy");
	free(r);
}

static void radeon_forget(struct consoled_backend *b)
{
	free(to_radeon(b));
}

static const struct consoled_backend_ops radeon_ops = {
    .struct_size = sizeof(struct consoled_backend_ops),
    .copy = radeon_copy,
    .fill = radeon_fill,
    .sync = radeon_sync,
    .destroy = radeon_destroy,
    .reset = radeon_reset,
    .mode_changed = radeon_mode_changed,
    .forget = radeon_forget,
};

static int radeon_create(const struct consoled_fb_info *fb, const struct consoled_host *host,
			 struct consoled_backend **ret)
{
	struct radeon *r;
	struct ati_engine *e;
	volatile void *regs;
	size_t len = 0;
	int err;

	if (!ati_fb_info_complete(fb) || !host->log || !host->map_mmio)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->base.ops = &radeon_ops;
	e = &r->engine;
	e->qemu_model = ati_fb_is_qemu_model(fb);
	e->host = host;
	e->hang = ati_host_test_flags(host) & CONSOLED_BACKEND_TEST_HANG;
	e->status_reg = RADEON_RBBM_STATUS;
	e->fifo_mask = RADEON_RBBM_FIFO_MASK;
	e->offset_align = RADEON_OFFSET_ALIGN;

	if (!radeon_known_id(fb->pci_vendor, fb->pci_device))
		ati_log(e, LOG_NOTICE,
			"%s (PCI %04x:%04x) is not a known R100-family chip; driving it as one",
			fb->id, fb->pci_vendor, fb->pci_device);
	err = radeon_set_mode(r, fb);
	if (err < 0)
		goto err_free;

	regs = host->map_mmio(host->userdata, &len);
	if (!regs) {
		err = errno ? -errno : -ENODEV;
		ati_log(e, LOG_ERR, "Cannot map the registers of %s: %s", fb->path, strerror(-err));
		goto err_free;
	}
	if (len < RADEON_REGS_END) {
		ati_log(e, LOG_ERR,
			"The register window of %s is %zu bytes, too small for the 2D engine",
			fb->path, len);
		err = -ENODEV;
		goto err_free;
	}
	e->regs = (volatile uint8_t *)regs;

	/* A card that fell off the bus reads all ones. */
	if (ati_read(e, RADEON_RBBM_STATUS) == 0xffffffff) {
		ati_log(e, LOG_ERR, "The registers of %s read all ones", fb->path);
		err = -ENODEV;
		goto err_free;
	}
	err = radeon_engine_init(r);
	if (err < 0)
		goto err_free;

	ati_log(e, LOG_INFO,
		"Radeon 2D engine (%04x:%04x%s), %u bpp, %u bytes per line, %u lines, VRAM at %#x",
		fb->pci_vendor, fb->pci_device, e->qemu_model ? ", QEMU's model" : "",
		fb->bits_per_pixel, e->pitch, e->lines, r->fb_location);
	*ret = &r->base;
	return 0;

err_free:
	free(r);
	return err;
}

const struct consoled_backend_plugin consoled_backend_plugin = {
    .abi_major = CONSOLED_BACKEND_ABI_MAJOR,
    .abi_minor = CONSOLED_BACKEND_ABI_MINOR,
    .struct_size = sizeof(struct consoled_backend_plugin),
    .name = "radeon",
    .version = "1",
    .description = "ATI Radeon R100 2D engine (radeonfb): copies and solid fills through MMIO",
    .probe = radeon_probe,
    .create = radeon_create,
};
