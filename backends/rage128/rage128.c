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
 * (geometry, directions, polling) are in ../ati-common.h.
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

/* A bounded wait in create(), reset() and destroy(). */
#define R128_SETTLE_TIMEOUT_USEC 100000u

#define PCI_VENDOR_ATI 0x1002

struct rage128 {
	struct consoled_backend base; /* first: consoled's handle is this struct */
	struct ati_engine engine;
	uint32_t pitch_units; /* pitch in 8-pixel units, for SRC/DST_PITCH */
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

static struct rage128 *to_rage128(struct consoled_backend *b)
{
	return (struct rage128 *)b;
}

static bool rage128_known_id(uint16_t vendor, uint16_t device)
{
	if (vendor != PCI_VENDOR_ATI)
		return false;
	for (size_t i = 0; i < sizeof(rage128_chip_codes) / sizeof(rage128_chip_codes[0]); i++)
		for (const char *c = rage128_chip_codes[i]; c[0] && c[1]; c += c[2] ? 3 : 2)
			if (((unsigned)c[0] << 8 | (unsigned)c[1]) == device)
				return true;
	return false;
}

static int rage128_probe(const struct consoled_fb_info *fb)
{
	if (rage128_known_id(fb->pci_vendor, fb->pci_device))
		return 100;
	if (strcmp(fb->id, "ATY Rage128") == 0)
		return 50;
	return 0;
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

	(void)rage128_flush_pixel_cache(e, ati_now_usec() + R128_SETTLE_TIMEOUT_USEC);
	clock_index = ati_read(e, R128_CLOCK_CNTL_INDEX);
	mclk = rage128_pll_read(e, R128_PLL_MCLK_CNTL);
	rage128_pll_write(e, R128_PLL_MCLK_CNTL, mclk | R128_MCLK_FORCE_ON);

	gen_reset = ati_read(e, R128_GEN_RESET_CNTL);
	ati_write(e, R128_GEN_RESET_CNTL, gen_reset | R128_SOFT_RESET_GUI);
	(void)ati_read(e, R128_GEN_RESET_CNTL);
	ati_write(e, R128_GEN_RESET_CNTL, gen_reset & ~R128_SOFT_RESET_GUI);
	(void)ati_read(e, R128_GEN_RESET_CNTL);

	rage128_pll_write(e, R128_PLL_MCLK_CNTL, mclk);
	ati_write(e, R128_CLOCK_CNTL_INDEX, clock_index);
	ati_write(e, R128_GEN_RESET_CNTL, gen_reset);
	ati_write(e, R128_PM4_BUFFER_CNTL, R128_PM4_BUFFER_CNTL_NONPM4);
	/* The FIFO was emptied; count its slots again on the next write. */
	e->fifo_free = 0;
}

/* Resets the engine and waits (bounded, ignoring the test switch) until it
 * answers as idle. */
static int rage128_engine_init(struct rage128 *r)
{
	struct ati_engine *e = &r->engine;
	int ret;

	(void)ati_wait_idle(e, ati_now_usec() + R128_SETTLE_TIMEOUT_USEC, false);
	rage128_soft_reset(e);
	ret = ati_fifo_reserve(e, 1);
	if (ret < 0)
		return ret;
	/* The 3D scaler shares the pipeline; aty128fb switches it off too. */
	ati_write(e, R128_SCALE_3D_CNTL, 0);
	ret = ati_wait_idle(e, ati_now_usec() + R128_SETTLE_TIMEOUT_USEC, false);
	if (ret < 0)
		ati_log(e, LOG_ERR, "The engine is still busy after a reset (GUI_STAT %#x)",
			ati_read(e, R128_GUI_STAT));
	return ret;
}

/* On QEMU's model, CRTC_OFFSET moves every blit (not the picture). */
static void rage128_check_display_start(struct rage128 *r)
{
	uint32_t start;

	if (!r->engine.qemu_model)
		return;
	start = ati_read(&r->engine, R128_CRTC_OFFSET) & 0x07ffffff;
	if (start != 0)
		ati_log(&r->engine, LOG_WARNING,
			"The display starts at byte %u: QEMU's Rage128 model adds this to every "
			"blit address, so blits will land %u bytes too far",
			start, start);
}

static int rage128_set_mode(struct rage128 *r, const struct consoled_fb_info *fb)
{
	struct ati_engine *e = &r->engine;
	uint32_t unit;
	int ret;

	ret = ati_mode_init(e, fb);
	if (ret < 0)
		return ret;
	unit = R128_PITCH_UNIT_PIXELS * e->bytes_per_pixel;
	if (e->pitch % unit != 0 || e->pitch / unit > R128_PITCH_MAX) {
		ati_log(e, LOG_INFO,
			"Lines of %u bytes are not a pitch the engine takes (multiples of %u "
			"bytes, at most %u)",
			e->pitch, unit, R128_PITCH_MAX * unit);
		return -ENOTSUP;
	}
	r->pitch_units = e->pitch / unit;
	return 0;
}

static int rage128_emit_copy(struct ati_engine *e, const struct ati_blit *b)
{
	struct rage128 *r = ati_container_of(e, struct rage128, engine);
	int ret;

	ret = ati_fifo_reserve(e, 11);
	if (ret < 0)
		return ret;
	ati_write(e, ATI_DP_GUI_MASTER_CNTL,
		  ATI_GMC_SRC_PITCH_OFFSET_CNTL | ATI_GMC_DST_PITCH_OFFSET_CNTL |
		      ATI_GMC_BRUSH_NONE | ATI_GMC_DST_DATATYPE(e->datatype) |
		      ATI_GMC_SRC_DATATYPE_COLOR | ATI_GMC_ROP3_SRCCOPY |
		      ATI_GMC_SRC_SOURCE_MEMORY | ATI_GMC_CLR_CMP_CNTL_DIS | ATI_GMC_AUX_CLIP_DIS |
		      ATI_GMC_WR_MSK_DIS);
	ati_write(e, ATI_DP_WRITE_MASK, 0xffffffff);
	ati_write(e, ATI_DEFAULT_SC_BOTTOM_RIGHT, ATI_SCISSOR_MAX);
	ati_write(e, ATI_DP_CNTL, b->dp_cntl);
	ati_write(e, R128_SRC_OFFSET, b->src_offset);
	ati_write(e, R128_SRC_PITCH, r->pitch_units);
	ati_write(e, R128_DST_OFFSET, b->dst_offset);
	ati_write(e, R128_DST_PITCH, r->pitch_units);
	ati_write(e, ATI_SRC_Y_X, b->src_y << 16 | b->src_x);
	ati_write(e, ATI_DST_Y_X, b->dst_y << 16 | b->dst_x);
	ati_write(e, ATI_DST_HEIGHT_WIDTH, b->h << 16 | b->w);
	return 0;
}

/* A solid fill is a pattern copy (ROP 0xf0) with a solid brush: no source. */
static int rage128_emit_fill(struct ati_engine *e, const struct ati_blit *b)
{
	struct rage128 *r = ati_container_of(e, struct rage128, engine);
	int ret;

	ret = ati_fifo_reserve(e, 9);
	if (ret < 0)
		return ret;
	ati_write(e, ATI_DP_GUI_MASTER_CNTL,
		  ATI_GMC_SRC_PITCH_OFFSET_CNTL | ATI_GMC_DST_PITCH_OFFSET_CNTL |
		      ATI_GMC_BRUSH_SOLID_COLOR | ATI_GMC_DST_DATATYPE(e->datatype) |
		      ATI_GMC_SRC_DATATYPE_COLOR | ATI_GMC_ROP3_PATCOPY |
		      ATI_GMC_SRC_SOURCE_MEMORY | ATI_GMC_CLR_CMP_CNTL_DIS | ATI_GMC_AUX_CLIP_DIS |
		      ATI_GMC_WR_MSK_DIS);
	ati_write(e, ATI_DP_BRUSH_FRGD_CLR, b->pixel);
	ati_write(e, ATI_DP_WRITE_MASK, 0xffffffff);
	ati_write(e, ATI_DEFAULT_SC_BOTTOM_RIGHT, ATI_SCISSOR_MAX);
	ati_write(e, ATI_DP_CNTL, b->dp_cntl);
	ati_write(e, R128_DST_OFFSET, b->dst_offset);
	ati_write(e, R128_DST_PITCH, r->pitch_units);
	ati_write(e, ATI_DST_Y_X, b->dst_y << 16 | b->dst_x);
	ati_write(e, ATI_DST_HEIGHT_WIDTH, b->h << 16 | b->w);
	return 0;
}

static int rage128_copy(struct consoled_backend *b, uint32_t sx, uint32_t sy, uint32_t dx,
			uint32_t dy, uint32_t w, uint32_t h)
{
	return ati_copy(&to_rage128(b)->engine, sx, sy, dx, dy, w, h, rage128_emit_copy);
}

static int rage128_fill(struct consoled_backend *b, uint32_t x, uint32_t y, uint32_t w, uint32_t h,
			uint32_t pixel)
{
	return ati_fill(&to_rage128(b)->engine, x, y, w, h, pixel, rage128_emit_fill);
}

/* Idle as aty128fb's wait_for_idle(): FIFO drained, GUI_STAT bit 31 clear,
 * then the pixel cache written back, all within one deadline. */
static int rage128_wait_done(struct ati_engine *e, uint32_t timeout_usec, bool hang)
{
	return ati_wait_done(e, timeout_usec, hang, "GUI_STAT", "pixel cache",
			     rage128_flush_pixel_cache);
}

static int rage128_sync(struct consoled_backend *b, uint32_t timeout_usec)
{
	struct ati_engine *e = &to_rage128(b)->engine;

	return rage128_wait_done(e, timeout_usec, e->hang);
}

static int rage128_reset(struct consoled_backend *b)
{
	struct rage128 *r = to_rage128(b);

	ati_log(&r->engine, LOG_NOTICE, "Resetting the 2D engine");
	return rage128_engine_init(r);
}

static int rage128_mode_changed(struct consoled_backend *b, const struct consoled_fb_info *fb)
{
	struct rage128 *r = to_rage128(b);
	int ret;

	if (!ati_fb_info_complete(fb))
		return -EINVAL;
	ret = rage128_set_mode(r, fb);
	if (ret < 0)
		return ret;
	rage128_check_display_start(r);
	/* Whoever had the VT meanwhile may have used the engine. */
	return rage128_engine_init(r);
}

static void rage128_destroy(struct consoled_backend *b)
{
	struct rage128 *r = to_rage128(b);
	struct ati_engine *e = &r->engine;

	/* consoled unmaps the registers next: nothing may still be drawing. */
	if (rage128_wait_done(e, R128_SETTLE_TIMEOUT_USEC, e->hang) < 0)
		ati_log(e, LOG_WARNING, "Leaving the engine busy");
	free(r);
}

static void rage128_forget(struct consoled_backend *b)
{
	free(to_rage128(b));
}

static const struct consoled_backend_ops rage128_ops = {
    .struct_size = sizeof(struct consoled_backend_ops),
    .copy = rage128_copy,
    .fill = rage128_fill,
    .sync = rage128_sync,
    .destroy = rage128_destroy,
    .reset = rage128_reset,
    .mode_changed = rage128_mode_changed,
    .forget = rage128_forget,
};

static int rage128_create(const struct consoled_fb_info *fb, const struct consoled_host *host,
			  struct consoled_backend **ret)
{
	struct rage128 *r;
	struct ati_engine *e;
	volatile void *regs;
	size_t len = 0;
	int err;

	if (!ati_fb_info_complete(fb) || !host->log || !host->map_mmio)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->base.ops = &rage128_ops;
	e = &r->engine;
	e->qemu_model = ati_fb_is_qemu_model(fb);
	e->host = host;
	e->hang = ati_host_test_flags(host) & CONSOLED_BACKEND_TEST_HANG;
	e->status_reg = R128_GUI_STAT;
	e->fifo_mask = R128_GUI_STAT_FIFO_MASK;
	e->offset_align = R128_OFFSET_ALIGN;

	err = rage128_set_mode(r, fb);
	if (err < 0)
		goto err_free;

	regs = host->map_mmio(host->userdata, &len);
	if (!regs) {
		err = errno ? -errno : -ENODEV;
		ati_log(e, LOG_ERR, "Cannot map the registers of %s: %s", fb->path, strerror(-err));
		goto err_free;
	}
	if (len < R128_REGS_END) {
		ati_log(e, LOG_ERR,
			"The register window of %s is %zu bytes, too small for the 2D engine",
			fb->path, len);
		err = -ENODEV;
		goto err_free;
	}
	e->regs = (volatile uint8_t *)regs;

	/* A card that fell off the bus reads all ones. */
	if (ati_read(e, R128_GUI_STAT) == 0xffffffff) {
		ati_log(e, LOG_ERR, "The registers of %s read all ones", fb->path);
		err = -ENODEV;
		goto err_free;
	}
	err = rage128_engine_init(r);
	if (err < 0)
		goto err_free;
	rage128_check_display_start(r);

	ati_log(e, LOG_INFO, "Rage128 2D engine (%04x:%04x%s), %u bpp, %u bytes per line, %u lines",
		fb->pci_vendor, fb->pci_device, e->qemu_model ? ", QEMU's model" : "",
		fb->bits_per_pixel, e->pitch, e->lines);
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
    .name = "rage128",
    .version = "1",
    .description = "ATI Rage128 2D engine (aty128fb): copies and solid fills through MMIO",
    .probe = rage128_probe,
    .create = rage128_create,
};
