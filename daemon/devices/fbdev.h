/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * The framebuffer device: what the kernel's fbdev driver reports (fix, var),
 * the mapping of its memory, the colour map, and putting the device back as
 * it was. consoled draws only through the mapping returned by fbdev_visible()
 * (the current pan offset respected) and never reads it.
 *
 * Invariants: `var` is what the device is set to while consoled owns the VT;
 * `saved_var` and the saved colour map are what it had when consoled started,
 * and are written back by fbdev_restore() before the VT goes back to text mode
 * (also from the crash handler, see crash.h).
 */
#include <linux/fb.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../color/pixel.h"

struct fbdev {
	int fd;
	char *path;
	struct fb_fix_screeninfo fix;
	struct fb_var_screeninfo var;
	struct fb_var_screeninfo saved_var;
	struct pixel_format format;
	uint8_t *map;	 /* the first pixel (fix.smem_start) */
	size_t map_size; /* bytes from map on: fbdev_map_bytes() */
	unsigned line_length;
	/* The mapping as mmap() made it (whole pages, from the page that
	 * holds smem_start): what munmap() gets. */
	void *map_base;
	size_t map_length;

	/* The colour map consoled programs (pseudo/directcolour), made from
	 * `palette` for the current format, and the one it found. */
	const struct palette *palette;
	struct fb_cmap cmap;
	uint16_t cmap_data[4][256];
	struct fb_cmap saved_cmap;
	uint16_t saved_cmap_data[4][256];
	bool saved_cmap_valid;
};

/* Where mmap() of the device puts the pixels. The kernel maps from the page
 * that holds fix.smem_start (fb_mmap(): smem_start & PAGE_MASK), so the
 * first pixel lies smem_start's offset into its page from the start of the
 * mapping, and smem_len bytes from there need a mapping of that offset plus
 * smem_len, rounded up to whole pages. */
struct fbdev_map_layout {
	size_t offset; /* of the first pixel from the start of the mapping */
	size_t length; /* of the mapping, whole pages */
};

/* Returns 0, or -EINVAL for no memory, a page size that is not a power of
 * two, or a mapping larger than size_t. */
int fbdev_map_layout(uint64_t smem_start, uint32_t smem_len, size_t page_size,
		     struct fbdev_map_layout *ret);

/* The geometry consoled draws in, checked without the device: the visible
 * window (xres x yres at xoffset, yoffset) fits in a line and in memory,
 * and so does the whole virtual screen (line length x yres_virtual <=
 * smem_len: the scroller pans and wraps over all of it), which is also at
 * most FBDEV_MAP_MAX bytes (all of it is mapped). *ret_line_length
 * is fix->line_length, or xres_virtual x bytes_per_pixel for a driver that
 * reports 0 (set on failure too, for the message). Returns 0, or -EINVAL
 * with *ret_why saying which check failed. */
int fbdev_check_geometry(const struct fb_fix_screeninfo *fix, const struct fb_var_screeninfo *var,
			 unsigned bytes_per_pixel, unsigned *ret_line_length, const char **ret_why);

/* Derives fb->format and fb->line_length from fix/var and checks the
 * geometry (fbdev_check_geometry()); a problem is logged with the numbers. */
int fbdev_check(struct fbdev *fb);

/* The most video memory consoled maps of one device: all of it on a 64-bit
 * machine; a sixteenth of a 32-bit address space (256 MiB), where a card's
 * 256 or 512 MiB would take a twelfth to a sixth of the 3 GiB a process has
 * (i386), or more than is left. */
#define FBDEV_MAP_MAX ((uint64_t)SIZE_MAX / 16)

/* The bytes of video memory consoled maps and draws in: the virtual screen,
 * line length x yres_virtual (fbdev_check_geometry() keeps it inside
 * smem_len), or smem_len before a geometry is known. The rest of a large
 * memory is not mapped: it takes no address space. */
uint64_t fbdev_map_bytes(const struct fbdev *fb);

/* The tallest virtual screen the scroller may ask for (pan, wrap): as many
 * lines as video memory holds, at most FBDEV_MAP_MAX bytes of them. */
unsigned fbdev_max_virtual_lines(const struct fbdev *fb);

/* Maps (again) fbdev_map_bytes() of the device's memory through fb->fd as
 * fbdev_map_layout() says: fb->map is the first pixel. */
int fbdev_map(struct fbdev *fb);

/* Zeros the video memory past the mapping (fb->map_size up to smem_len;
 * all of it before the first fbdev_map()): what a taller virtual screen, a
 * mode that moved the memory or a killed predecessor left there. pwrite()
 * on the device (fb_write() reaches smem_len), or where the driver stops
 * short, a mapping of the whole memory for the time of a memset(). Returns
 * 0, or < 0 (logged) if neither reaches it. */
int fbdev_wipe_unmapped(struct fbdev *fb);

/* Finds the first framebuffer (lowest fbN) through libudev. */
int fbdev_find_default(char **ret_path);

/* Opens, checks and maps the device and prepares the colour map from the
 * palette (programmed by fbdev_reacquire(), once the VT is ours). Refuses
 * (with a logged reason naming type, visual and depth) what consoled cannot
 * draw. */
int fbdev_open(const char *path, const struct palette *palette, struct fbdev **ret);
void fbdev_free(struct fbdev *fb);

/* When our VT becomes the visible one (at start and after every switch back:
 * fbcon has set *its* mode meanwhile). Re-reads fix/var, puts consoled's var
 * (and so pan offset) back, re-maps if the memory moved and re-programs the
 * colour map (made again for a new pixel format). The driver may refuse or
 * adjust consoled's mode: then the device's current one is kept, and the
 * caller must lay everything out again (render_layout_stale()). */
int fbdev_reacquire(struct fbdev *fb);

/* Before every frame: one FBIOGET_VSCREENINFO, whether the device is still
 * in consoled's mode (var). Returns 0 if it is, 1 if another program set a
 * mode (or panned) meanwhile, with the device's mode in *ret_cur (may be
 * NULL), or -errno if the ioctl fails (-ENODEV: the driver unregistered the
 * framebuffer). Logs only at debug level. */
int fbdev_poll(struct fbdev *fb, struct fb_var_screeninfo *ret_cur);

/* Takes cur (the device's mode, from fbdev_poll()) as consoled's: re-reads
 * fix, checks the format and geometry, re-maps if the memory moved and makes
 * and programs the colour map again. Returns 0 then; 1 if consoled cannot
 * draw in that mode or map it (logged), after putting consoled's previous
 * mode back
 * (fbdev_reacquire()); -errno if the device cannot be used any more. The
 * caller lays everything out again after 0. */
int fbdev_adopt(struct fbdev *fb, const struct fb_var_screeninfo *cur);

/* Sets var as consoled's mode and puts it on the device (fbdev_reacquire()). */
int fbdev_set_mode(struct fbdev *fb, const struct fb_var_screeninfo *var);

/* FBIOBLANK: FB_BLANK_POWERDOWN, or FB_BLANK_UNBLANK. Returns 0 if the
 * driver did it, -errno (-EOPNOTSUPP: it wants a software blank) if not. */
int fbdev_blank(struct fbdev *fb, bool blank);

/* Makes the boot mode (bootmode.h: the mode the first consoled found on this
 * device, saved in dir) the one fbdev_restore() and the crash handler put
 * back, saving the current one if none is saved. Without a usable directory
 * the mode found at open stays (logged). */
void fbdev_use_boot_mode(struct fbdev *fb, const char *dir);

/* The device is gone (fbwatch.h): its saved boot mode in dir goes with it,
 * if the file still describes this device (another consoled may have saved
 * the successor's there already). Touches only the file. */
void fbdev_drop_boot_mode(const struct fbdev *fb, const char *dir);

/* Puts back the var (at yoffset 0) and colour map found at start (or the
 * boot mode, fbdev_use_boot_mode()). */
void fbdev_restore(struct fbdev *fb);

/* Sets the virtual height and vmode (FB_VMODE_YWRAP or not) at yoffset 0;
 * re-reads and re-maps (the mapping follows the virtual screen). On failure
 * the device keeps its previous mode. */
int fbdev_set_virtual(struct fbdev *fb, unsigned yres_virtual, unsigned vmode);

/* Moves the display window to yoffset (FBIOPAN_DISPLAY, with the current
 * vmode, so with FB_VMODE_YWRAP the window wraps). */
int fbdev_pan(struct fbdev *fb, unsigned yoffset);

/* Sets the device's current mode again (FB_ACTIVATE_FORCE), as fbcon does
 * when it first shows a device. A framebuffer registered while consoled's VT
 * is in graphics mode was never set up: fbcon sets the mode of a visible VT
 * only in text mode, and DRM's fbdev emulation scans its buffer out only
 * once a mode is set (before, the display shows what the previous driver
 * left). Re-reads the mode. */
int fbdev_activate(struct fbdev *fb);

/* Quirks: drivers whose pan ioctl succeeds while the picture does not move.
 * Returns why panning must not be used on this device, or NULL. */
const char *fbdev_pan_quirk(const struct fbdev *fb);

/* The start of pixel line y of the visible screen: the pan offset respected,
 * wrapping around the end of the virtual screen in FB_VMODE_YWRAP. */
static inline uint8_t *fbdev_line(const struct fbdev *fb, unsigned y)
{
	unsigned py = fb->var.yoffset + y;

	if (py >= fb->var.yres_virtual)
		py -= fb->var.yres_virtual;
	return fb->map + (size_t)py * fb->line_length +
	       pixel_line_bytes(&fb->format, fb->var.xoffset);
}
