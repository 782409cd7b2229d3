/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The part of the rage128 and radeon plugins that does not depend on the
 * chip (ati-common.h says why there is so much): the geometry of an
 * operation (rebasing, bands, direction), the mode, and the plugin around
 * the engine: consoled_backend_ops, create() and probe(). What a chip does
 * its own way comes in its struct ati_chip: the register writes of a copy
 * and a fill, pitch encoding, reset, cache flush. Each plugin compiles this
 * file in (backends/meson.build); nothing here is exported.
 */
#include <consoled/backend.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "ati-common.h"

static uint32_t ati_gcd(uint32_t a, uint32_t b)
{
	while (b) {
		uint32_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* Reads the mode. -ENOTSUP (logged) for what the engine cannot draw. The
 * plugin checks its own pitch encoding afterwards. */
static int ati_mode_init(struct ati_engine *e, const struct consoled_fb_info *fb)
{
	uint32_t bytes, datatype, lines;

	/* Copies and solid fills move raw pixels: 15 and 16 bpp modes (both
	 * 16 bits in memory) use the 16-bit datatype, as fbdev reports both
	 * with bits_per_pixel 16. 24 bpp would need the 8 bpp engine with x
	 * tripled, and a solid fill cannot write a 3-byte colour that way. */
	switch (fb->bits_per_pixel) {
	case 8:
		bytes = 1;
		datatype = ATI_DATATYPE_8BPP;
		break;
	case 15:
		bytes = 2;
		datatype = ATI_DATATYPE_15BPP;
		break;
	case 16:
		bytes = 2;
		datatype = ATI_DATATYPE_16BPP;
		break;
	case 32:
		bytes = 4;
		datatype = ATI_DATATYPE_32BPP;
		break;
	default:
		ati_log(e, LOG_INFO, "The 2D engine is not driven at %u bits per pixel",
			fb->bits_per_pixel);
		return -ENOTSUP;
	}
	if (fb->line_length == 0 || fb->line_length % bytes != 0 ||
	    fb->line_length / bytes > ATI_MAX_COORD + 1) {
		ati_log(e, LOG_INFO, "The 2D engine cannot address lines of %u bytes",
			fb->line_length);
		return -ENOTSUP;
	}
	/* QEMU's model (7.2) silently drops a blit that reaches the last line
	 * of VRAM (it checks offset + (y + h) * pitch + x < VRAM size): keep
	 * that line out of reach, so such an operation is refused instead. */
	lines = fb->smem_len / fb->line_length;
	if (e->qemu_model && lines > 0)
		lines--;
	if (fb->yres_virtual < lines)
		lines = fb->yres_virtual;

	e->bytes_per_pixel = bytes;
	e->datatype = datatype;
	e->pitch = fb->line_length;
	e->width = fb->line_length / bytes;
	e->lines = lines;
	e->base_period = e->offset_align / ati_gcd(e->pitch, e->offset_align);
	return 0;
}

static int ati_check_rect(struct ati_engine *e, const char *what, uint32_t x, uint32_t y,
			  uint32_t w, uint32_t h)
{
	if ((uint64_t)x + w > e->width || (uint64_t)y + h > e->lines) {
		ati_log(e, LOG_ERR, "%s %ux%u at %u,%u lies outside the %ux%u framebuffer", what, w,
			h, x, y, e->width, e->lines);
		return -EINVAL;
	}
	return 0;
}

/* The offset of the nearest addressable line at or above y, and y from it. */
static void ati_rebase(const struct ati_engine *e, uint32_t y, uint32_t *ret_offset,
		       uint32_t *ret_y)
{
	uint32_t base = y - y % e->base_period;

	*ret_offset = base * e->pitch;
	*ret_y = y - base;
}

/* Takes the FIFO slots of one operation, then writes it. */
static int ati_emit(struct ati_engine *e, const struct ati_blit *b, bool copy)
{
	const struct ati_chip *chip = e->chip;
	int r;

	r = ati_fifo_reserve(e, copy ? chip->copy_writes : chip->fill_writes);
	if (r < 0)
		return r;
	if (copy)
		chip->emit_copy(e, b);
	else
		chip->emit_fill(e, b);
	return 0;
}

static int ati_copy(struct ati_engine *e, uint32_t sx, uint32_t sy, uint32_t dx, uint32_t dy,
		    uint32_t w, uint32_t h)
{
	bool bottom_up = dy > sy, right_to_left = dx > sx;
	int r;

	if (w == 0 || h == 0 || (sx == dx && sy == dy))
		return 0;
	r = ati_check_rect(e, "Copy source", sx, sy, w, h);
	if (r < 0)
		return r;
	r = ati_check_rect(e, "Copy destination", dx, dy, w, h);
	if (r < 0)
		return r;

	/* Bands are walked in the same vertical order as the lines inside
	 * them, so that a band never reads lines another band has written. */
	for (uint32_t done = 0; done < h;) {
		uint32_t n = h - done < ATI_BAND_LINES ? h - done : ATI_BAND_LINES;
		uint32_t top = bottom_up ? h - done - n : done;
		uint32_t src_y, dst_y;
		struct ati_blit b = {
		    .w = w,
		    .h = n,
		    .dp_cntl = (right_to_left ? 0 : ATI_DST_X_LEFT_TO_RIGHT) |
			       (bottom_up ? 0 : ATI_DST_Y_TOP_TO_BOTTOM),
		};

		ati_rebase(e, sy + top, &b.src_offset, &src_y);
		ati_rebase(e, dy + top, &b.dst_offset, &dst_y);
		b.src_x = right_to_left ? sx + w - 1 : sx;
		b.dst_x = right_to_left ? dx + w - 1 : dx;
		b.src_y = bottom_up ? src_y + n - 1 : src_y;
		b.dst_y = bottom_up ? dst_y + n - 1 : dst_y;
		r = ati_emit(e, &b, true);
		if (r < 0)
			return r;
		done += n;
	}
	return 0;
}

static int ati_fill(struct ati_engine *e, uint32_t x, uint32_t y, uint32_t w, uint32_t h,
		    uint32_t pixel)
{
	int r;

	if (w == 0 || h == 0)
		return 0;
	r = ati_check_rect(e, "Fill", x, y, w, h);
	if (r < 0)
		return r;
	for (uint32_t done = 0; done < h;) {
		uint32_t n = h - done < ATI_BAND_LINES ? h - done : ATI_BAND_LINES;
		struct ati_blit b = {
		    .dst_x = x,
		    .w = w,
		    .h = n,
		    .dp_cntl = ATI_DST_X_LEFT_TO_RIGHT | ATI_DST_Y_TOP_TO_BOTTOM,
		    .pixel = pixel,
		};

		ati_rebase(e, y + done, &b.dst_offset, &b.dst_y);
		r = ati_emit(e, &b, false);
		if (r < 0)
			return r;
		done += n;
	}
	return 0;
}

/* QEMU's ati-vga (both models) has PCI subsystem id 1af4:1100. */
static bool ati_fb_is_qemu_model(const struct consoled_fb_info *fb)
{
	return fb->pci_subsystem_vendor == 0x1af4 && fb->pci_subsystem_device == 0x1100;
}

/* The host's test switches, where its struct has them. */
static uint32_t ati_host_test_flags(const struct consoled_host *host)
{
	if (host->struct_size <
	    offsetof(struct consoled_host, test_flags) + sizeof(host->test_flags))
		return 0;
	return host->test_flags;
}

/* Does fb_info carry every member up to and including line_length? */
static bool ati_fb_info_complete(const struct consoled_fb_info *fb)
{
	return fb->struct_size >=
	       offsetof(struct consoled_fb_info, line_length) + sizeof(fb->line_length);
}

static struct ati_engine *to_engine(struct consoled_backend *b)
{
	return (struct ati_engine *)b;
}

/* Idle as the drivers define it: FIFO drained, busy bit clear, then the
 * chip's cache written back by its flush(), all within one deadline of
 * timeout_usec. With `hang` (the test switch) the engine behaves as if it
 * never went idle. */
static int ati_wait_done(struct ati_engine *e, uint32_t timeout_usec, bool hang)
{
	uint64_t deadline = ati_now_usec() + timeout_usec;
	int ret;

	ret = ati_wait_idle(e, deadline, hang);
	if (ret < 0) {
		ati_log(e, LOG_ERR, "The engine is still busy after %u ms (%s %#x)%s",
			timeout_usec / 1000, e->chip->status_name, ati_read(e, e->status_reg),
			hang ? " (test switch: simulated hang)" : "");
		return ret;
	}
	ret = e->chip->flush(e, deadline);
	if (ret < 0)
		ati_log(e, LOG_ERR, "The %s did not flush within %u ms", e->chip->cache_name,
			timeout_usec / 1000);
	return ret;
}

/* Resets the engine and sets up the chip's state, then waits (bounded,
 * ignoring the test switch) until it answers as idle. */
static int ati_engine_init(struct ati_engine *e)
{
	int ret;

	(void)ati_wait_idle(e, ati_now_usec() + ATI_SETTLE_TIMEOUT_USEC, false);
	e->chip->engine_reset(e);
	/* The FIFO was emptied; count its slots again on the next write. */
	e->fifo_free = 0;
	ret = ati_fifo_reserve(e, 1);
	if (ret < 0)
		return ret;
	e->chip->setup(e);
	ret = ati_wait_idle(e, ati_now_usec() + ATI_SETTLE_TIMEOUT_USEC, false);
	if (ret < 0)
		ati_log(e, LOG_ERR, "The engine is still busy after a reset (%s %#x)",
			e->chip->status_name, ati_read(e, e->status_reg));
	return ret;
}

static int ati_set_mode(struct ati_engine *e, const struct consoled_fb_info *fb)
{
	int ret;

	ret = ati_mode_init(e, fb);
	if (ret < 0)
		return ret;
	return e->chip->set_pitch(e);
}

static int ati_backend_copy(struct consoled_backend *b, uint32_t sx, uint32_t sy, uint32_t dx,
			    uint32_t dy, uint32_t w, uint32_t h)
{
	struct ati_engine *e = to_engine(b);

	return ati_copy(e, sx, sy, dx, dy, w, h);
}

static int ati_backend_fill(struct consoled_backend *b, uint32_t x, uint32_t y, uint32_t w,
			    uint32_t h, uint32_t pixel)
{
	struct ati_engine *e = to_engine(b);

	return ati_fill(e, x, y, w, h, pixel);
}

static int ati_backend_sync(struct consoled_backend *b, uint32_t timeout_usec)
{
	struct ati_engine *e = to_engine(b);

	return ati_wait_done(e, timeout_usec, e->hang);
}

static int ati_backend_reset(struct consoled_backend *b)
{
	struct ati_engine *e = to_engine(b);

	ati_log(e, LOG_NOTICE, "Resetting the 2D engine");
	return ati_engine_init(e);
}

static int ati_backend_mode_changed(struct consoled_backend *b, const struct consoled_fb_info *fb)
{
	struct ati_engine *e = to_engine(b);
	int ret;

	if (!ati_fb_info_complete(fb))
		return -EINVAL;
	ret = ati_set_mode(e, fb);
	if (ret < 0)
		return ret;
	if (e->chip->check_mode)
		e->chip->check_mode(e);
	/* Whoever had the VT meanwhile may have used the engine (or, on a
	 * Radeon, moved VRAM in the card's address space). */
	return ati_engine_init(e);
}

static void ati_backend_destroy(struct consoled_backend *b)
{
	struct ati_engine *e = to_engine(b);

	/* consoled unmaps the registers next: nothing may still be drawing. */
	if (ati_wait_done(e, ATI_SETTLE_TIMEOUT_USEC, e->hang) < 0)
		ati_log(e, LOG_WARNING, "Leaving the engine busy");
	free(e);
}

static void ati_backend_forget(struct consoled_backend *b)
{
	free(to_engine(b));
}

static const struct consoled_backend_ops ati_backend_ops = {
    .struct_size = sizeof(struct consoled_backend_ops),
    .copy = ati_backend_copy,
    .fill = ati_backend_fill,
    .sync = ati_backend_sync,
    .destroy = ati_backend_destroy,
    .reset = ati_backend_reset,
    .mode_changed = ati_backend_mode_changed,
    .forget = ati_backend_forget,
};

int ati_probe(const struct ati_chip *chip, const struct consoled_fb_info *fb)
{
	if (fb->pci_vendor == ATI_PCI_VENDOR && chip->known_device(fb->pci_device))
		return 100;
	if (chip->known_fb_id(fb->id))
		return 50;
	return 0;
}

/* Maps the registers and checks that the card answers. */
static int ati_map_registers(struct ati_engine *e, const struct consoled_fb_info *fb)
{
	volatile void *regs;
	size_t len = 0;
	int err;

	regs = e->host->map_mmio(e->host->userdata, &len);
	if (!regs) {
		err = errno ? -errno : -ENODEV;
		ati_log(e, LOG_ERR, "Cannot map the registers of %s: %s", fb->path, strerror(-err));
		return err;
	}
	if (len < e->chip->regs_end) {
		ati_log(e, LOG_ERR,
			"The register window of %s is %zu bytes, too small for the 2D engine",
			fb->path, len);
		return -ENODEV;
	}
	e->regs = (volatile uint8_t *)regs;

	/* A card that fell off the bus reads all ones. */
	if (ati_read(e, e->status_reg) == 0xffffffff) {
		ati_log(e, LOG_ERR, "The registers of %s read all ones", fb->path);
		return -ENODEV;
	}
	return 0;
}

int ati_create(const struct ati_chip *chip, const struct consoled_fb_info *fb,
	       const struct consoled_host *host, struct consoled_backend **ret)
{
	struct ati_engine *e;
	char more[64] = "";
	int err;

	if (!ati_fb_info_complete(fb) || !host->log || !host->map_mmio)
		return -EINVAL;
	e = calloc(1, chip->size);
	if (!e)
		return -ENOMEM;
	e->base.ops = &ati_backend_ops;
	e->chip = chip;
	e->qemu_model = ati_fb_is_qemu_model(fb);
	e->host = host;
	e->hang = ati_host_test_flags(host) & CONSOLED_BACKEND_TEST_HANG;
	e->status_reg = chip->status_reg;
	e->fifo_mask = chip->fifo_mask;
	e->offset_align = chip->offset_align;

	if (chip->check_device)
		chip->check_device(e, fb);
	err = ati_set_mode(e, fb);
	if (err < 0)
		goto err_free;
	err = ati_map_registers(e, fb);
	if (err < 0)
		goto err_free;
	err = ati_engine_init(e);
	if (err < 0)
		goto err_free;
	if (chip->check_mode)
		chip->check_mode(e);

	if (chip->describe)
		chip->describe(e, more, sizeof(more));
	ati_log(e, LOG_INFO, "%s 2D engine (%04x:%04x%s), %u bpp, %u bytes per line, %u lines%s",
		chip->name, fb->pci_vendor, fb->pci_device, e->qemu_model ? ", QEMU's model" : "",
		fb->bits_per_pixel, e->pitch, e->lines, more);
	*ret = &e->base;
	return 0;

err_free:
	free(e);
	return err;
}
