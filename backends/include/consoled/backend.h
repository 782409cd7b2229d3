/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef CONSOLED_BACKEND_H
#define CONSOLED_BACKEND_H
/*
 * consoled backend plugins: the only header a plugin includes.
 *
 * A backend drives one kind of graphics card's 2D engine (its "blitter")
 * from user space, through the card's registers, so that consoled can scroll
 * and clear by asking the card to move pixels instead of writing them with
 * the CPU. This is the acceleration code that used to live in the kernel's
 * fbdev drivers; here a bug costs a dropped plugin and a redraw, not an oops.
 *
 * A plugin is a shared object in consoled's backend directory
 * ($libdir/consoled/backends) that exports one symbol,
 *
 *     const struct consoled_backend_plugin consoled_backend_plugin;
 *
 * consoled dlopen()s every plugin (regular files, not symbolic links, owned
 * by root and not writable by group or others, in a directory owned by root
 * and not writable by group or others), checks
 * abi_major == CONSOLED_BACKEND_ABI_MAJOR,
 * asks each plugin's probe() whether it drives the framebuffer, and calls
 * create() on the best match. Plugins never call symbols of the daemon: what
 * they need from it comes in struct consoled_host.
 *
 * Versioning: abi_major changes when a member changes meaning or moves;
 * abi_minor when members are appended. Every struct starts with its size, so
 * both sides can tell which members the other knows: a member at an offset
 * past struct_size is absent (treat as NULL / 0).
 *
 * Coordinates are pixels in the framebuffer's memory as the kernel maps it:
 * (0, 0) is the first pixel of the framebuffer (fix.smem_start), y counts
 * lines of line_length bytes across the whole virtual screen, independent of
 * the current pan offset. Colours are pixel values in the framebuffer's
 * format (palette index at 8 bpp). All functions returning int return 0 on
 * success or a negative errno; on any error consoled drops the backend,
 * draws in software and redraws the screen.
 *
 * Threading: none. consoled calls a backend from its one thread.
 */
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CONSOLED_BACKEND_ABI_MAJOR 1
#define CONSOLED_BACKEND_ABI_MINOR 1

/* What consoled knows about the framebuffer. Owned by consoled; valid for
 * the call it is passed to (copy what you keep). */
struct consoled_fb_info {
	size_t struct_size; /* sizeof(struct consoled_fb_info) of the daemon */

	const char *path; /* "/dev/fb0" */
	int fd;		  /* the daemon's open fd of it (O_RDWR); do not close */
	char id[16];	  /* fix.id, NUL-terminated */
	uint32_t accel;	  /* fix.accel (FB_ACCEL_*) */

	/* PCI identity of the card (from sysfs); 0 when not a PCI device */
	uint16_t pci_vendor, pci_device;
	uint16_t pci_subsystem_vendor, pci_subsystem_device;

	uint64_t smem_start; /* fix.smem_start: physical address of the framebuffer */
	uint32_t smem_len;   /* fix.smem_len: bytes */
	uint64_t mmio_start; /* fix.mmio_start: physical address of the registers */
	uint32_t mmio_len;   /* fix.mmio_len: bytes, 0 = none exposed */

	uint32_t xres, yres;		 /* visible pixels */
	uint32_t xres_virtual, yres_virtual; /* virtual screen, pixels */
	uint32_t bits_per_pixel;	 /* 8, 15, 16, 24 or 32 */
	uint32_t line_length;		 /* bytes per line */
};

/* Services of the daemon. Owned by consoled, valid until destroy(). */
struct consoled_host {
	size_t struct_size;

	/* Required. Logs a message at a syslog priority (LOG_ERR .. LOG_DEBUG);
	 * the daemon prefixes the plugin's name. */
	void (*log)(void *userdata, int priority, const char *format, ...)
		__attribute__((format(printf, 3, 4)));

	/* Required. Maps the register window that the fbdev driver exposes
	 * after the framebuffer memory (fix.mmio_start, mmio_len bytes): sets
	 * var.accel_flags to 0 (the kernel refuses otherwise), mmaps /dev/fbN
	 * at the page-aligned smem_len and adds mmio_start's offset in its
	 * page. Returns the registers' address or NULL (errno set). consoled
	 * unmaps it after destroy(). */
	volatile void *(*map_mmio)(void *userdata, size_t *ret_len);

	/* Test switches (consoled's test suite only; 0 in normal use). */
	uint32_t test_flags;

	void *userdata; /* passed back to the functions above */
};

/* Test switch: the engine "hangs": every sync() times out. */
#define CONSOLED_BACKEND_TEST_HANG 0x1

struct consoled_backend;

struct consoled_backend_ops {
	size_t struct_size; /* sizeof(struct consoled_backend_ops) of the plugin */

	/* Required. Copies the w x h rectangle at (sx, sy) to (dx, dy); the
	 * rectangles may overlap in any direction. May return before the
	 * engine is done: consoled calls sync() before the CPU touches VRAM. */
	int (*copy)(struct consoled_backend *b, uint32_t sx, uint32_t sy, uint32_t dx, uint32_t dy,
		    uint32_t w, uint32_t h);

	/* Required. Fills the w x h rectangle at (x, y) with a pixel value. */
	int (*fill)(struct consoled_backend *b, uint32_t x, uint32_t y, uint32_t w, uint32_t h,
		    uint32_t pixel);

	/* Required. Waits until the engine is idle, at most timeout_usec
	 * microseconds; -ETIMEDOUT if it is not. */
	int (*sync)(struct consoled_backend *b, uint32_t timeout_usec);

	/* Required. Waits for idle (bounded), releases everything. */
	void (*destroy)(struct consoled_backend *b);

	/* Optional (NULL). Resets a hung engine; called before destroy()
	 * after a sync() timeout. */
	int (*reset)(struct consoled_backend *b);

	/* Optional (NULL). The framebuffer's geometry changed: consoled calls
	 * it after every change, i.e. when its VT came back and the mode was
	 * set again, and whenever it makes the virtual screen taller or
	 * shorter or switches FB_VMODE_YWRAP (for pan and wrap scrolling,
	 * right after create() and after a zoom). Re-read what depends on the
	 * mode, above all yres_virtual where operations are bound-checked
	 * against it. A plugin without it must not keep yres_virtual from
	 * create(): operations would be refused below the old height.
	 * -ENOTSUP if the plugin cannot drive the new mode. */
	int (*mode_changed)(struct consoled_backend *b, const struct consoled_fb_info *fb);

	/* Optional (NULL). Colour expansion: draws a w x h monochrome bitmap
	 * (rows of `stride` bytes, most significant bit leftmost; set bits in
	 * fg, clear bits in bg) at (x, y). */
	int (*expand)(struct consoled_backend *b, uint32_t x, uint32_t y, uint32_t w, uint32_t h,
		      const uint8_t *bits, uint32_t stride, uint32_t fg, uint32_t bg);

	/* Optional (NULL; ABI 1.1). The framebuffer is gone (its driver
	 * unregistered it, see consoled(8), FRAMEBUFFER HANDOVER): release
	 * everything without touching the hardware (no register access, no
	 * wait for the engine: the registers belong to no driver now, or to
	 * the next one). consoled unmaps the register window map_mmio() gave
	 * afterwards. Without it consoled calls nothing and the plugin's state
	 * is never freed. */
	void (*forget)(struct consoled_backend *b);
};

/* Created by the plugin; consoled only reads `ops`. */
struct consoled_backend {
	const struct consoled_backend_ops *ops;
};

/* The plugin's one exported symbol. */
struct consoled_backend_plugin {
	uint16_t abi_major;  /* CONSOLED_BACKEND_ABI_MAJOR the plugin was built with */
	uint16_t abi_minor;  /* CONSOLED_BACKEND_ABI_MINOR */
	uint32_t struct_size; /* sizeof(struct consoled_backend_plugin) */
	const char *name;    /* short, unique: "cirrus" */
	const char *version; /* the plugin's version, for --list-backends */
	const char *description;

	/* Required. Does this plugin drive this framebuffer? Returns a score
	 * > 0 (higher wins: 100 for an exact PCI id, less for a guess from
	 * fix.id), 0 for no. Must not touch the hardware. */
	int (*probe)(const struct consoled_fb_info *fb);

	/* Required. Takes the engine and returns a backend; may touch the
	 * hardware (map registers, ioperm, check that the engine answers). */
	int (*create)(const struct consoled_fb_info *fb, const struct consoled_host *host,
		      struct consoled_backend **ret);
};

#define CONSOLED_BACKEND_PLUGIN_SYMBOL "consoled_backend_plugin"

#ifdef __cplusplus
}
#endif
#endif
