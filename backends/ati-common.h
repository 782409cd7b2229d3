/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef CONSOLED_ATI_COMMON_H
#define CONSOLED_ATI_COMMON_H
/*
 * What the rage128 and radeon plugins share. The Radeon's 2D engine is the
 * Rage128's, moved to a new chip: the same FIFOed GUI registers at the same
 * offsets (DP_GUI_MASTER_CNTL, DP_CNTL, SRC_Y_X, DST_Y_X, DST_HEIGHT_WIDTH,
 * ...), the same "write the size to start" protocol and a status register
 * with the free FIFO slots in its low bits and "busy" in bit 31. So most of
 * a plugin does not depend on the chip: this header holds register access
 * and polling with a deadline, ati-common.c (compiled into each plugin) the
 * geometry of an operation (below: direction bits, rebasing, bands) and the
 * plugin itself (its consoled_backend_ops, create() and probe()). Each
 * plugin keeps its register map for what differs and hands it over in a
 * struct ati_chip: how pitch and offset are encoded, the register writes of
 * a copy and a fill, cache flushes, engine reset.
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

/* A bounded wait in create(), reset() and destroy(). */
#define ATI_SETTLE_TIMEOUT_USEC 100000u

#define ATI_PCI_VENDOR 0x1002

/* ati-common.c is compiled into each plugin: its functions stay inside the
 * plugin, which exports consoled_backend_plugin alone. */
#define ATI_HIDDEN __attribute__((visibility("hidden")))

struct ati_chip;

/* The state shared by the two plugins. The plugin's own struct starts with
 * it, and it starts with consoled's handle. */
struct ati_engine {
	struct consoled_backend base; /* first: consoled's handle is this struct */
	const struct ati_chip *chip;
	const struct consoled_host *host;
	volatile uint8_t *regs;
	bool hang;	 /* CONSOLED_BACKEND_TEST_HANG: never report idle */
	bool qemu_model; /* QEMU's ati-vga, with its quirks */

	uint32_t status_reg; /* the chip's, copied here for the loops below */
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
	uint32_t offset_align; /* bytes, the chip's */
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

/* Writes one blit (copy) or solid fill, into FIFO slots already taken. */
typedef void ati_emit_fn(struct ati_engine *e, const struct ati_blit *b);

/* What one chip does its own way, for the plugin ati-common.c builds
 * around it. Every member is required unless it says otherwise. */
struct ati_chip {
	size_t size; /* of the plugin's struct, which starts with struct ati_engine */

	uint32_t status_reg;	 /* FIFO slots and busy bit: GUI_STAT or RBBM_STATUS */
	const char *status_name; /* its name in messages */
	uint32_t fifo_mask;	 /* its free-slots field */
	uint32_t offset_align;	 /* bytes an offset register counts in */
	uint32_t regs_end;	 /* the register window must reach past the last register used */
	const char *cache_name;	 /* what flush() writes back, in messages */

	/* probe(): does the PCI device id (vendor ATI) name one of the
	 * chips, and does fix.id name the driver? */
	bool (*known_device)(uint16_t device);
	bool (*known_fb_id)(const char *id);
	/* Optional. create(), before the mode is read: warns of what is
	 * unusual about the device. */
	void (*check_device)(struct ati_engine *e, const struct consoled_fb_info *fb);
	/* After ati_mode_init(): encodes e->pitch for the pitch registers, or
	 * -ENOTSUP (logged) when they cannot hold it. */
	int (*set_pitch)(struct ati_engine *e);
	/* Optional. With the registers mapped and a mode read: in create()
	 * after engine_reset() and setup(), in mode_changed() before them. */
	void (*check_mode)(struct ati_engine *e);
	/* Resets the engine, which empties the FIFO. */
	void (*engine_reset)(struct ati_engine *e);
	/* After the reset, one FIFO slot taken: the chip's own engine state. */
	void (*setup)(struct ati_engine *e);
	/* Writes the chip's cache back to VRAM and waits for it, within the
	 * deadline. */
	int (*flush)(struct ati_engine *e, uint64_t deadline);
	/* One copy and one solid fill, and the register writes (FIFO
	 * slots) each takes. */
	ati_emit_fn *emit_copy, *emit_fill;
	uint32_t copy_writes, fill_writes;
	/* In create()'s info line: the chip's name ("Radeon", "Rage128"),
	 * and optionally, what the line adds for the chip once the engine is
	 * set up (", VRAM at ..."), written to buf. */
	const char *name;
	void (*describe)(struct ati_engine *e, char *buf, size_t size);
};

/* The plugin's probe() and create() (ati-common.c). */
ATI_HIDDEN int ati_probe(const struct ati_chip *chip, const struct consoled_fb_info *fb);
ATI_HIDDEN int ati_create(const struct ati_chip *chip, const struct consoled_fb_info *fb,
			  const struct consoled_host *host, struct consoled_backend **ret);

/* Defines the plugin's one exported symbol, consoled_backend_plugin, for
 * the struct ati_chip `chip`, with probe() and create() from ati-common.c. */
#define ATI_BACKEND_PLUGIN(chip, plugin_name, plugin_description)                                  \
	static int ati_plugin_probe(const struct consoled_fb_info *fb)                             \
	{                                                                                          \
		return ati_probe(&(chip), fb);                                                     \
	}                                                                                          \
	static int ati_plugin_create(const struct consoled_fb_info *fb,                            \
				     const struct consoled_host *host,                             \
				     struct consoled_backend **ret)                                \
	{                                                                                          \
		return ati_create(&(chip), fb, host, ret);                                         \
	}                                                                                          \
	const struct consoled_backend_plugin consoled_backend_plugin = {                           \
	    .abi_major = CONSOLED_BACKEND_ABI_MAJOR,                                               \
	    .abi_minor = CONSOLED_BACKEND_ABI_MINOR,                                               \
	    .struct_size = sizeof(struct consoled_backend_plugin),                                 \
	    .name = (plugin_name),                                                                 \
	    .version = "1",                                                                        \
	    .description = (plugin_description),                                                   \
	    .probe = ati_plugin_probe,                                                             \
	    .create = ati_plugin_create,                                                           \
	}

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

/* A reset pulse: sets `bits` over `value` (what reg held), then clears
 * them, reading reg back after each write so that it has reached the chip. */
static inline void ati_pulse(struct ati_engine *e, uint32_t reg, uint32_t value, uint32_t bits)
{
	ati_write(e, reg, value | bits);
	(void)ati_read(e, reg);
	ati_write(e, reg, value & ~bits);
	(void)ati_read(e, reg);
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

/* The pitch in units of `unit` bytes, at most `max` of them, or -ENOTSUP
 * (logged). */
static inline int ati_pitch_units(struct ati_engine *e, uint32_t unit, uint32_t max,
				  uint32_t *ret_units)
{
	if (e->pitch % unit != 0 || e->pitch / unit > max) {
		ati_log(e, LOG_INFO,
			"Lines of %u bytes are not a pitch the engine takes (multiples of %u "
			"bytes, at most %u)",
			e->pitch, unit, max * unit);
		return -ENOTSUP;
	}
	*ret_units = e->pitch / unit;
	return 0;
}

/* DP_GUI_MASTER_CNTL for an operation with brush and ROP `gmc`: source and
 * destination through their own pitch/offset registers, in the mode's
 * datatype, from memory, every bit written, no colour key, no clipping. */
static inline uint32_t ati_gmc(const struct ati_engine *e, uint32_t gmc)
{
	return gmc | ATI_GMC_SRC_PITCH_OFFSET_CNTL | ATI_GMC_DST_PITCH_OFFSET_CNTL |
	       ATI_GMC_DST_DATATYPE(e->datatype) | ATI_GMC_SRC_DATATYPE_COLOR |
	       ATI_GMC_SRC_SOURCE_MEMORY | ATI_GMC_CLR_CMP_CNTL_DIS | ATI_GMC_AUX_CLIP_DIS |
	       ATI_GMC_WR_MSK_DIS;
}

/* The last writes of an operation: where (a copy's source too), then the
 * size, whose write starts it. */
static inline void ati_emit_start(struct ati_engine *e, const struct ati_blit *b, bool copy)
{
	if (copy)
		ati_write(e, ATI_SRC_Y_X, b->src_y << 16 | b->src_x);
	ati_write(e, ATI_DST_Y_X, b->dst_y << 16 | b->dst_x);
	ati_write(e, ATI_DST_HEIGHT_WIDTH, b->h << 16 | b->w);
}

#endif
