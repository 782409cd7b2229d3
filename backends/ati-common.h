/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef CONSOLED_ATI_COMMON_H
#define CONSOLED_ATI_COMMON_H
/*
 * What the rage128 and radeon plugins share. The Radeon's 2D engine is the
 * Rage128's, moved to a new chip: the same FIFOed GUI registers at the same
 * offsets (DP_GUI_MASTER_CNTL, DP_CNTL, SRC_Y_X, DST_Y_X, DST_HEIGHT_WIDTH,
 * ...), the same "write the size to start" protocol and a status register
 * with the free FIFO slots in its low bits and "busy" in bit 31. What this
 * header holds is therefore chip-independent: register access, polling with
 * a deadline, and the geometry of an operation (direction bits, rebasing,
 * bands). Each plugin keeps its register map for what differs: how pitch and
 * offset are encoded, cache flushes, engine reset.
 *
 * Geometry. The engine addresses a pixel as offset + y * pitch + x * bpp,
 * with coordinates of 13 bits (the default scissor's limit, 8191) and offset
 * registers that only take multiples of 16 bytes (Rage128) or 1 KiB
 * (Radeon). consoled's coordinates run over the whole virtual screen, which
 * on a card with lots of memory is taller than 8191 lines. So every
 * operation is rebased: its offset register points at the nearest line at or
 * above the rectangle that the offset register can express, and y becomes
 * small. Such a line comes every align / gcd(pitch, align) lines (at most 2
 * on a Rage128, 16 on a Radeon). Operations taller than a band (4096 lines)
 * are cut into bands, walked in the order that keeps an overlapping copy
 * correct.
 *
 * Direction. DP_CNTL bit 0 set = left to right, bit 1 set = top to bottom.
 * With a bit clear, the engine walks the other way and X (Y) names the right
 * (bottom) edge of both rectangles. A copy walks away from its destination:
 * bottom-up when it moves pixels down, right-to-left when it moves them
 * right, so no source pixel is overwritten before it is read.
 */
#include <consoled/backend.h>
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <syslog.h>
#include <time.h>

/* GUI registers at the same offset, with the same meaning, on both chips. */
#define ATI_SRC_Y_X 0x1434
#define ATI_DST_Y_X 0x1438
#define ATI_DST_HEIGHT_WIDTH 0x143c /* writing it starts the operation */
#define ATI_DP_GUI_MASTER_CNTL 0x146c
#define ATI_DP_BRUSH_FRGD_CLR 0x147c
#define ATI_DP_CNTL 0x16c0
#define ATI_DP_WRITE_MASK 0x16cc
#define ATI_DEFAULT_SC_BOTTOM_RIGHT 0x16e8

/* DP_GUI_MASTER_CNTL: one write sets the datatype, ROP and source of the
 * next operations (the chip copies them into DP_DATATYPE and DP_MIX). The
 * two PITCH_OFFSET_CNTL bits select the SRC_/DST_ pitch and offset registers
 * rather than the DEFAULT_ ones; both are always set, as QEMU 7.2 takes the
 * source's choice from the destination bit. */
#define ATI_GMC_SRC_PITCH_OFFSET_CNTL (1u << 0)
#define ATI_GMC_DST_PITCH_OFFSET_CNTL (1u << 1)
#define ATI_GMC_BRUSH_SOLID_COLOR (13u << 4)
#define ATI_GMC_BRUSH_NONE (15u << 4)
#define ATI_GMC_DST_DATATYPE(t) ((uint32_t)(t) << 8)
#define ATI_GMC_SRC_DATATYPE_COLOR (3u << 12) /* source pixels are in the destination format */
#define ATI_GMC_ROP3_SRCCOPY (0xccu << 16)
#define ATI_GMC_ROP3_PATCOPY (0xf0u << 16)
#define ATI_GMC_SRC_SOURCE_MEMORY (2u << 24)
#define ATI_GMC_CLR_CMP_CNTL_DIS (1u << 28) /* no colour-key transparency */
#define ATI_GMC_AUX_CLIP_DIS (1u << 29)
#define ATI_GMC_WR_MSK_DIS (1u << 30) /* write all bits */

/* DP_DATATYPE / GMC destination datatypes, shared by both chips. */
#define ATI_DATATYPE_8BPP 2
#define ATI_DATATYPE_15BPP 3
#define ATI_DATATYPE_16BPP 4
#define ATI_DATATYPE_32BPP 6

#define ATI_DST_X_LEFT_TO_RIGHT (1u << 0)
#define ATI_DST_Y_TOP_TO_BOTTOM (1u << 1)

#define ATI_STATUS_BUSY (1u << 31)
#define ATI_FIFO_SLOTS 64 /* command FIFO depth; all free = drained */

#define ATI_MAX_COORD 8191
#define ATI_SCISSOR_MAX ((uint32_t)ATI_MAX_COORD << 16 | ATI_MAX_COORD)
#define ATI_BAND_LINES 4096

/* Room in the FIFO within this time, or the engine is hung. */
#define ATI_FIFO_TIMEOUT_USEC 100000u

/* The state shared by the two plugins. */
struct ati_engine {
	const struct consoled_host *host;
	volatile uint8_t *regs;
	bool hang;	 /* CONSOLED_BACKEND_TEST_HANG: never report idle */
	bool qemu_model; /* QEMU's ati-vga, with its quirks */

	uint32_t status_reg; /* GUI_STAT or RBBM_STATUS */
	uint32_t fifo_mask;  /* its free-slots field */
	uint32_t fifo_free;  /* free slots at the last look, minus what we wrote since */

	/* The mode, from consoled_fb_info: read by create() and again by
	 * mode_changed(), which consoled calls after every geometry change
	 * (the virtual screen grows for panning after create()). */
	uint32_t bytes_per_pixel;
	uint32_t datatype;     /* ATI_DATATYPE_* */
	uint32_t pitch;	       /* bytes per line */
	uint32_t width;	       /* addressable pixels per line (pitch / bytes_per_pixel) */
	uint32_t lines;	       /* lines of the virtual screen the engine may touch */
	uint32_t offset_align; /* bytes; set by the plugin before ati_mode_init() */
	uint32_t base_period;  /* lines between lines that the offset can address */
};

/* One operation in the engine's terms, ready to be written. */
struct ati_blit {
	uint32_t src_offset, dst_offset; /* bytes from the start of the framebuffer */
	uint32_t src_x, src_y, dst_x, dst_y;
	uint32_t w, h;
	uint32_t dp_cntl;
	uint32_t pixel; /* fills: the colour */
};

/* Writes one blit (copy) or solid fill; returns 0 or -ETIMEDOUT. */
typedef int ati_emit_fn(struct ati_engine *e, const struct ati_blit *b);

#define ati_container_of(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

#define ati_log(e, priority, ...) (e)->host->log((e)->host->userdata, (priority), __VA_ARGS__)

/* Registers are little-endian. */
static inline uint32_t ati_read(const struct ati_engine *e, uint32_t reg)
{
	return le32toh(*(const volatile uint32_t *)(e->regs + reg));
}

static inline void ati_write(struct ati_engine *e, uint32_t reg, uint32_t value)
{
	*(volatile uint32_t *)(e->regs + reg) = htole32(value);
}

static inline void ati_write8(struct ati_engine *e, uint32_t reg, uint8_t value)
{
	*(volatile uint8_t *)(e->regs + reg) = value;
}

static inline uint64_t ati_now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* A blit takes from microseconds to a few milliseconds: spin for the first
 * thousand reads, then sleep a little between reads so that a hung engine
 * does not keep a CPU busy for the whole timeout. */
static inline void ati_pause(unsigned spins)
{
	if (spins >= 1000) {
		struct timespec ts = {.tv_sec = 0, .tv_nsec = 10000};

		nanosleep(&ts, NULL);
	}
}

/* Waits until `entries` FIFO slots are free and takes them. A write to a
 * full FIFO holds the bus until a slot frees up, which a wedged engine never
 * does: the CPU would hang instead of timing out here. */
static inline int ati_fifo_reserve(struct ati_engine *e, uint32_t entries)
{
	uint64_t deadline = 0;

	for (unsigned spins = 0; e->fifo_free < entries; spins++) {
		e->fifo_free = ati_read(e, e->status_reg) & e->fifo_mask;
		if (e->fifo_free >= entries)
			break;
		if (deadline == 0)
			deadline = ati_now_usec() + ATI_FIFO_TIMEOUT_USEC;
		else if (ati_now_usec() >= deadline) {
			ati_log(e, LOG_ERR, "Command FIFO still full after %u ms (status %#x)",
				ATI_FIFO_TIMEOUT_USEC / 1000, ati_read(e, e->status_reg));
			return -ETIMEDOUT;
		}
		ati_pause(spins);
	}
	e->fifo_free -= entries;
	/* The CPU's writes to the framebuffer (a write-combined mapping) must
	 * reach VRAM before the engine reads it. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return 0;
}

/* Waits until the FIFO has drained and the engine is not busy. With `hang`
 * (the test switch) it behaves as if the engine never went idle. */
static inline int ati_wait_idle(struct ati_engine *e, uint64_t deadline, bool hang)
{
	for (unsigned spins = 0;; spins++) {
		uint32_t status = ati_read(e, e->status_reg);

		e->fifo_free = status & e->fifo_mask;
		if (!hang && e->fifo_free >= ATI_FIFO_SLOTS && !(status & ATI_STATUS_BUSY))
			return 0;
		if (ati_now_usec() >= deadline)
			return -ETIMEDOUT;
		ati_pause(spins);
	}
}

/* Idle as the drivers define it: FIFO drained, busy bit clear (the status
 * register is named status_name in the log), then the chip's cache written
 * back by flush(), all within one deadline of timeout_usec. */
static inline int ati_wait_done(struct ati_engine *e, uint32_t timeout_usec, bool hang,
				const char *status_name, const char *cache_name,
				int (*flush)(struct ati_engine *e, uint64_t deadline))
{
	uint64_t deadline = ati_now_usec() + timeout_usec;
	int ret;

	ret = ati_wait_idle(e, deadline, hang);
	if (ret < 0) {
		ati_log(e, LOG_ERR, "The engine is still busy after %u ms (%s %#x)%s",
			timeout_usec / 1000, status_name, ati_read(e, e->status_reg),
			hang ? " (test switch: simulated hang)" : "");
		return ret;
	}
	ret = flush(e, deadline);
	if (ret < 0)
		ati_log(e, LOG_ERR, "The %s did not flush within %u ms", cache_name,
			timeout_usec / 1000);
	return ret;
}

/* Waits until `bit` of `reg` reads 0 (a cache flush to finish). */
static inline int ati_wait_clear(struct ati_engine *e, uint32_t reg, uint32_t bit,
				 uint64_t deadline)
{
	for (unsigned spins = 0;; spins++) {
		if (!(ati_read(e, reg) & bit))
			return 0;
		if (ati_now_usec() >= deadline)
			return -ETIMEDOUT;
		ati_pause(spins);
	}
}

static inline uint32_t ati_gcd(uint32_t a, uint32_t b)
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
static inline int ati_mode_init(struct ati_engine *e, const struct consoled_fb_info *fb)
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

static inline int ati_check_rect(struct ati_engine *e, const char *what, uint32_t x, uint32_t y,
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
static inline void ati_rebase(const struct ati_engine *e, uint32_t y, uint32_t *ret_offset,
			      uint32_t *ret_y)
{
	uint32_t base = y - y % e->base_period;

	*ret_offset = base * e->pitch;
	*ret_y = y - base;
}

static inline int ati_copy(struct ati_engine *e, uint32_t sx, uint32_t sy, uint32_t dx, uint32_t dy,
			   uint32_t w, uint32_t h, ati_emit_fn *emit)
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
		r = emit(e, &b);
		if (r < 0)
			return r;
		done += n;
	}
	return 0;
}

static inline int ati_fill(struct ati_engine *e, uint32_t x, uint32_t y, uint32_t w, uint32_t h,
			   uint32_t pixel, ati_emit_fn *emit)
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
		r = emit(e, &b);
		if (r < 0)
			return r;
		done += n;
	}
	return 0;
}

/* QEMU's ati-vga (both models) has PCI subsystem id 1af4:1100. */
static inline bool ati_fb_is_qemu_model(const struct consoled_fb_info *fb)
{
	return fb->pci_subsystem_vendor == 0x1af4 && fb->pci_subsystem_device == 0x1100;
}

/* The host's test switches, where its struct has them. */
static inline uint32_t ati_host_test_flags(const struct consoled_host *host)
{
	if (host->struct_size <
	    offsetof(struct consoled_host, test_flags) + sizeof(host->test_flags))
		return 0;
	return host->test_flags;
}

/* Does fb_info carry every member up to and including line_length? */
static inline bool ati_fb_info_complete(const struct consoled_fb_info *fb)
{
	return fb->struct_size >=
	       offsetof(struct consoled_fb_info, line_length) + sizeof(fb->line_length);
}

#endif
