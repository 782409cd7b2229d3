/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "fbdev"
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <libudev.h>
#include <string.h>
#include <sys/ioctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "bootmode.h"
#include "fbdev.h"
#include "../util/crash.h"
#include "../util/log.h"
#include "../util/util.h"

int fbdev_find_default(char **ret_path)
{
	struct udev *udev;
	struct udev_enumerate *e;
	struct udev_list_entry *item;
	char *best = NULL;
	unsigned best_n = ~0u;
	int r;

	udev = udev_new();
	if (!udev)
		return log_error_errno(ENOMEM, "Failed to create udev context: %m");
	e = udev_enumerate_new(udev);
	if (!e) {
		udev_unref(udev);
		return log_error_errno(ENOMEM, "Failed to enumerate devices: %m");
	}
	udev_enumerate_add_match_subsystem(e, "graphics");
	r = udev_enumerate_scan_devices(e);
	if (r < 0)
		log_warning_errno(r, "Failed to scan graphics devices: %m");

	udev_list_entry_foreach (item, udev_enumerate_get_list_entry(e)) {
		struct udev_device *d;
		const char *sysname, *node;
		unsigned n;

		d = udev_device_new_from_syspath(udev, udev_list_entry_get_name(item));
		if (!d)
			continue;
		sysname = udev_device_get_sysname(d);
		node = udev_device_get_devnode(d);
		if (sysname && node && strncmp(sysname, "fb", 2) == 0 &&
		    parse_uint(sysname + 2, 0, 1000, &n) == 0 && n < best_n) {
			free(best);
			best = xstrdup(node);
			best_n = n;
		}
		udev_device_unref(d);
	}
	udev_enumerate_unref(e);
	udev_unref(udev);

	if (!best)
		return log_error_errno(ENODEV, "No framebuffer device found (no /dev/fbN in "
					       "the graphics subsystem); use --fbdev=PATH");
	*ret_path = best;
	return 0;
}

static const char *visual_name(unsigned v)
{
	switch (v) {
	case FB_VISUAL_MONO01:
		return "mono01";
	case FB_VISUAL_MONO10:
		return "mono10";
	case FB_VISUAL_TRUECOLOR:
		return "truecolor";
	case FB_VISUAL_PSEUDOCOLOR:
		return "pseudocolor";
	case FB_VISUAL_DIRECTCOLOR:
		return "directcolor";
	case FB_VISUAL_STATIC_PSEUDOCOLOR:
		return "static-pseudocolor";
	case FB_VISUAL_FOURCC:
		return "fourcc";
	default:
		return "unknown";
	}
}

static const char *type_name(unsigned t)
{
	switch (t) {
	case FB_TYPE_PACKED_PIXELS:
		return "packed-pixels";
	case FB_TYPE_PLANES:
		return "planes";
	case FB_TYPE_INTERLEAVED_PLANES:
		return "interleaved-planes";
	case FB_TYPE_TEXT:
		return "text";
	case FB_TYPE_VGA_PLANES:
		return "vga-planes";
	case FB_TYPE_FOURCC:
		return "fourcc";
	default:
		return "unknown";
	}
}

static void cmap_init(struct fb_cmap *c, uint16_t data[4][256], unsigned len)
{
	*c = (struct fb_cmap){
	    .start = 0,
	    .len = len,
	    .red = data[0],
	    .green = data[1],
	    .blue = data[2],
	    .transp = NULL,
	};
}

/* How many colour map entries the visual uses; 0 = it has none. */
static unsigned cmap_length(const struct fbdev *fb)
{
	/* two pixel values, black and white: nothing to program */
	if (fb->format.mono)
		return 0;
	if (fb->format.indexed)
		return 256;
	if (fb->fix.visual == FB_VISUAL_DIRECTCOLOR) {
		unsigned bits = MAX(fb->format.red.length,
				    MAX(fb->format.green.length, fb->format.blue.length));
		return 1u << bits;
	}
	return 0;
}

static void fbdev_build_cmap(struct fbdev *fb, const struct palette *palette)
{
	unsigned len = cmap_length(fb);

	cmap_init(&fb->cmap, fb->cmap_data, len);
	if (fb->format.indexed) {
		/* 16-bit values as fbcon computes them: (v << 8) | v. */
		for (unsigned slot = 0; slot < 256; slot++) {
			fb->cmap_data[0][slot] = (uint16_t)(palette->cmap[slot].r * 0x101);
			fb->cmap_data[1][slot] = (uint16_t)(palette->cmap[slot].g * 0x101);
			fb->cmap_data[2][slot] = (uint16_t)(palette->cmap[slot].b * 0x101);
		}
	} else {
		/* Directcolour: a linear ramp makes it behave as truecolour. */
		for (unsigned i = 0; i < len; i++) {
			uint16_t v = (uint16_t)(len > 1 ? i * 65535u / (len - 1) : 65535u);
			fb->cmap_data[0][i] = fb->cmap_data[1][i] = fb->cmap_data[2][i] = v;
		}
	}
}

static int fbdev_put_cmap(struct fbdev *fb)
{
	if (fb->cmap.len == 0)
		return 0;
	if (ioctl(fb->fd, FBIOPUTCMAP, &fb->cmap) < 0)
		return log_error_errno(errno, "Failed to set the colour map of %s: %m", fb->path);
	return 0;
}

int fbdev_map_layout(uint64_t smem_start, uint32_t smem_len, size_t page_size,
		     struct fbdev_map_layout *ret)
{
	uint64_t offset, length;

	if (smem_len == 0 || page_size == 0 || (page_size & (page_size - 1)) != 0)
		return -EINVAL;
	offset = smem_start & (page_size - 1);
	length = (offset + smem_len + page_size - 1) & ~((uint64_t)page_size - 1);
	if (length > SIZE_MAX)
		return -EINVAL;
	*ret = (struct fbdev_map_layout){.offset = (size_t)offset, .length = (size_t)length};
	return 0;
}

uint64_t fbdev_map_bytes(const struct fbdev *fb)
{
	uint64_t n = (uint64_t)fb->line_length * fb->var.yres_virtual;

	return n && n <= fb->fix.smem_len ? n : fb->fix.smem_len;
}

unsigned fbdev_max_virtual_lines(const struct fbdev *fb)
{
	if (!fb->line_length)
		return 0;
	return (unsigned)(MIN((uint64_t)fb->fix.smem_len, FBDEV_MAP_MAX) / fb->line_length);
}

/* Maps again if the mapping no longer covers what fbdev_map_bytes() says (a
 * mode with another virtual height or line length) or the memory moved. A
 * virtual screen that shrank leaves lines consoled may have drawn in outside
 * the mapping: they are cleared, and the mapping loses its tail (munmap()
 * only, nothing that can fail for want of address space). */
static int fbdev_remap_if_stale(struct fbdev *fb, const struct fb_fix_screeninfo *old_fix)
{
	uint64_t bytes = fbdev_map_bytes(fb);
	bool moved =
	    fb->fix.smem_start != old_fix->smem_start || fb->fix.smem_len != old_fix->smem_len;
	struct fbdev_map_layout layout;

	if (fb->map && !moved && bytes == fb->map_size)
		return 0;
	/* Memory that moved is no longer wiped at exit through the mapping:
	 * what consoled drew there goes now. */
	if (fb->map && moved)
		memset(fb->map, 0, fb->map_size);
	if (fb->map && !moved && bytes < fb->map_size) {
		memset(fb->map + bytes, 0, fb->map_size - (size_t)bytes);
		if (fbdev_map_layout(fb->fix.smem_start, (uint32_t)bytes,
				     (size_t)sysconf(_SC_PAGESIZE), &layout) == 0 &&
		    layout.length <= fb->map_length) {
			if (layout.length < fb->map_length)
				(void)munmap((uint8_t *)fb->map_base + layout.length,
					     fb->map_length - layout.length);
			fb->map_length = layout.length;
			fb->map_size = (size_t)bytes;
			return 0;
		}
	}
	return fbdev_map(fb);
}

int fbdev_map(struct fbdev *fb)
{
	uint64_t bytes = fbdev_map_bytes(fb);
	struct fbdev_map_layout layout;
	void *p;
	int r;

	if (fb->fix.smem_len == 0)
		return log_error_errno(ENODEV, "%s reports no framebuffer memory", fb->path);
	/* bytes <= smem_len */
	r = fbdev_map_layout(fb->fix.smem_start, (uint32_t)bytes, (size_t)sysconf(_SC_PAGESIZE),
			     &layout);
	if (r < 0)
		return log_error_errno(r, "Cannot map %s: %" PRIu64 " bytes at 0x%llx: %m",
				       fb->path, bytes, (unsigned long long)fb->fix.smem_start);
	/* The old mapping stays until the new one exists: on failure the
	 * device is still mapped as before, map_size bytes of it. */
	p = mmap(NULL, layout.length, PROT_WRITE | PROT_READ, MAP_SHARED, fb->fd, 0);
	if (p == MAP_FAILED)
		return log_error_errno(errno, "Failed to map %s (%zu bytes): %m", fb->path,
				       layout.length);
	if (fb->map_base)
		munmap(fb->map_base, fb->map_length);
	fb->map_base = p;
	fb->map_length = layout.length;
	fb->map = (uint8_t *)p + layout.offset;
	fb->map_size = (size_t)bytes;
	return 0;
}

int fbdev_wipe_unmapped(struct fbdev *fb)
{
	static const uint8_t zeros[64 * 1024];
	uint64_t off = fb->map ? fb->map_size : 0, len = fb->fix.smem_len;
	struct fbdev_map_layout layout;
	int r, err = 0;
	void *p;

	while (off < len) {
		ssize_t n = pwrite(fb->fd, zeros, (size_t)MIN((uint64_t)sizeof(zeros), len - off),
				   (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : ENOSPC;
			break;
		}
		off += (uint64_t)n;
	}
	if (off >= len)
		return 0;
	log_debug_errno(err,
			"%s: pwrite() stops at byte %" PRIu64 " of %" PRIu64
			", clearing the rest through a mapping: %m",
			fb->path, off, len);
	r = fbdev_map_layout(fb->fix.smem_start, (uint32_t)len, (size_t)sysconf(_SC_PAGESIZE),
			     &layout);
	if (r < 0)
		return r;
	p = mmap(NULL, layout.length, PROT_WRITE | PROT_READ, MAP_SHARED, fb->fd, 0);
	if (p == MAP_FAILED)
		return log_warning_errno(errno,
					 "Cannot clear %" PRIu64 " bytes of video memory of %s "
					 "past what consoled maps: %m",
					 len - off, fb->path);
	memset((uint8_t *)p + layout.offset + off, 0, (size_t)(len - off));
	munmap(p, layout.length);
	return 0;
}

int fbdev_check_geometry(const struct fb_fix_screeninfo *fix, const struct fb_var_screeninfo *var,
			 unsigned bytes_per_pixel, unsigned *ret_line_length, const char **ret_why)
{
	uint64_t line = fix->line_length;
	const char *why = NULL;

	if (line == 0)
		line = (uint64_t)var->xres_virtual * bytes_per_pixel;
	*ret_line_length = line > UINT32_MAX ? 0 : (unsigned)line;

	if (var->xres == 0 || var->yres == 0 || bytes_per_pixel == 0)
		why = "no visible screen";
	else if (line == 0 || line > UINT32_MAX)
		why = "no line length";
	else if (((uint64_t)var->xoffset + var->xres) * bytes_per_pixel > line)
		why = "the visible width does not fit in a line";
	else if (var->yres_virtual < var->yres)
		why = "the virtual screen is shorter than the visible one";
	else if (var->yoffset >= var->yres_virtual)
		why = "the pan offset is past the virtual screen";
	/* The scroller pans and wraps over the whole virtual screen. No
	 * driver reports one past its memory at boot (efifb and vesafb derive
	 * it from smem_len, DRM's fbdev emulation allocates the buffer for
	 * it; cirrusfb and radeonfb refuse such a mode in check_var): a
	 * driver bug or someone else's mode, refused rather than clamped. */
	else if (line * var->yres_virtual > fix->smem_len)
		why = "the virtual screen does not fit in video memory";
	/* consoled maps the whole virtual screen (fbdev_map_bytes()): a boot
	 * mode or an fbset -vyres past FBDEV_MAP_MAX (a 32-bit machine) is
	 * refused like any mode it cannot draw in. */
	else if (line * var->yres_virtual > FBDEV_MAP_MAX)
		why = "the virtual screen is larger than consoled maps";
	/* Without FB_VMODE_YWRAP the window does not wrap. */
	else if (!(var->vmode & FB_VMODE_YWRAP) &&
		 line * ((uint64_t)var->yoffset + var->yres) > fix->smem_len)
		why = "the visible window does not fit in video memory";

	if (why) {
		*ret_why = why;
		return -EINVAL;
	}
	return 0;
}

/* The drivers consoled's 1 bpp monochrome is verified on against fbcon
 * (tests/vm, check mono-1bpp): only those are drawn at 1 bpp. */
static const char *const mono_verified_ids[] = {"Virtual FB"};

static bool mono_verified(const struct fb_fix_screeninfo *fix)
{
	for (size_t i = 0; i < ELEMENTSOF(mono_verified_ids); i++)
		if (strncmp(fix->id, mono_verified_ids[i], sizeof(fix->id)) == 0)
			return true;
	return false;
}

int fbdev_check(struct fbdev *fb)
{
	struct fb_var_screeninfo geometry = fb->var;
	const char *why;
	int r;

	r = pixel_format_from_fb(&fb->fix, &fb->var, &fb->format);
	if (r == 0 && fb->format.mono && !mono_verified(&fb->fix))
		r = -ENOTSUP;
	if (r < 0)
		return log_error_errno(r,
				       "Unsupported framebuffer %s (%s): fix.type=%u (%s) "
				       "fix.visual=%u (%s) bits_per_pixel=%u; consoled draws "
				       "packed pixels at 8 bpp pseudocolour or 15/16/24/32 bpp "
				       "true/directcolour, and 1 bpp mono01/mono10 on vfb (the "
				       "driver it is verified on)",
				       fb->path, fb->fix.id, fb->fix.type, type_name(fb->fix.type),
				       fb->fix.visual, visual_name(fb->fix.visual),
				       fb->var.bits_per_pixel);

	/* Below 8 bpp the geometry is checked in bytes. */
	if (fb->format.bits_per_pixel < 8) {
		geometry.xres = (unsigned)pixel_line_bytes(&fb->format, fb->var.xres);
		geometry.xres_virtual =
		    (unsigned)pixel_line_bytes(&fb->format, fb->var.xres_virtual);
		geometry.xoffset = (unsigned)pixel_line_bytes(&fb->format, fb->var.xoffset);
	}
	r = fbdev_check_geometry(&fb->fix, &geometry, fb->format.bytes_per_pixel, &fb->line_length,
				 &why);
	if (r < 0)
		return log_error_errno(
		    r,
		    "Framebuffer %s (%s) has an inconsistent geometry, %s: "
		    "%ux%u at +%u+%u, virtual %ux%u%s, %u bytes a pixel, line "
		    "length %u, %u lines need %llu bytes, %u bytes of memory",
		    fb->path, fb->fix.id, why, fb->var.xres, fb->var.yres, fb->var.xoffset,
		    fb->var.yoffset, fb->var.xres_virtual, fb->var.yres_virtual,
		    (fb->var.vmode & FB_VMODE_YWRAP) ? " (ywrap)" : "", fb->format.bytes_per_pixel,
		    fb->line_length, fb->var.yres_virtual,
		    (unsigned long long)fb->line_length * fb->var.yres_virtual, fb->fix.smem_len);
	return 0;
}

int fbdev_open(const char *path, const struct palette *palette, struct fbdev **ret)
{
	struct fbdev *fb;
	int r;

	fb = xcalloc(1, sizeof(*fb));
	fb->path = xstrdup(path);
	fb->palette = palette;
	fb->fd = open(path, O_RDWR | O_CLOEXEC);
	if (fb->fd < 0) {
		r = log_error_errno(errno, "Failed to open framebuffer %s: %m", path);
		goto fail;
	}
	if (ioctl(fb->fd, FBIOGET_FSCREENINFO, &fb->fix) < 0 ||
	    ioctl(fb->fd, FBIOGET_VSCREENINFO, &fb->var) < 0) {
		r = log_error_errno(errno, "%s is not a framebuffer device: %m", path);
		goto fail;
	}
	fb->saved_var = fb->var;

	r = fbdev_check(fb);
	if (r < 0)
		goto fail;
	r = fbdev_map(fb);
	if (r < 0)
		goto fail;

	fbdev_build_cmap(fb, palette);
	if (fb->cmap.len > 0) {
		cmap_init(&fb->saved_cmap, fb->saved_cmap_data, fb->cmap.len);
		fb->saved_cmap_valid = ioctl(fb->fd, FBIOGETCMAP, &fb->saved_cmap) == 0;
		if (!fb->saved_cmap_valid)
			log_warning_errno(errno,
					  "Cannot read the colour map of %s, it will not "
					  "be restored on exit: %m",
					  path);
	}
	crash_register_fb(fb->fd, &fb->saved_var, fb->saved_cmap_valid ? &fb->saved_cmap : NULL);

	log_info("%s: %s, %ux%u (virtual %ux%u) at %u bpp, %s, line length %u, %u KiB", path,
		 fb->fix.id, fb->var.xres, fb->var.yres, fb->var.xres_virtual, fb->var.yres_virtual,
		 fb->var.bits_per_pixel, visual_name(fb->fix.visual), fb->line_length,
		 fb->fix.smem_len / 1024);
	*ret = fb;
	return 0;

fail:
	fbdev_free(fb);
	return r;
}

void fbdev_free(struct fbdev *fb)
{
	if (!fb)
		return;
	crash_unregister_fb(fb->fd);
	if (fb->map_base)
		munmap(fb->map_base, fb->map_length);
	if (fb->fd >= 0)
		close(fb->fd);
	free(fb->path);
	free(fb);
}

static bool var_mode_equal(const struct fb_var_screeninfo *a, const struct fb_var_screeninfo *b)
{
	return a->xres == b->xres && a->yres == b->yres && a->xres_virtual == b->xres_virtual &&
	       a->yres_virtual == b->yres_virtual && a->xoffset == b->xoffset &&
	       a->yoffset == b->yoffset && a->bits_per_pixel == b->bits_per_pixel &&
	       a->vmode == b->vmode && a->accel_flags == b->accel_flags;
}

int fbdev_reacquire(struct fbdev *fb)
{
	struct fb_var_screeninfo cur;
	struct fb_fix_screeninfo old_fix = fb->fix;
	struct pixel_format old_format = fb->format;
	int r;

	if (ioctl(fb->fd, FBIOGET_VSCREENINFO, &cur) < 0)
		return log_error_errno(errno, "Failed to read the mode of %s: %m", fb->path);

	if (!var_mode_equal(&cur, &fb->var)) {
		struct fb_var_screeninfo want = fb->var;

		log_debug("fbcon left %ux%u virtual %ux%u +%u+%u; restoring consoled's mode",
			  cur.xres, cur.yres, cur.xres_virtual, cur.yres_virtual, cur.xoffset,
			  cur.yoffset);
		want.activate = FB_ACTIVATE_NOW | FB_ACTIVATE_FORCE;
		if (ioctl(fb->fd, FBIOPUT_VSCREENINFO, &want) < 0) {
			log_warning_errno(errno,
					  "Failed to restore the mode of %s, keeping the "
					  "current one: %m",
					  fb->path);
			fb->var = cur;
		}
		if (ioctl(fb->fd, FBIOGET_VSCREENINFO, &fb->var) < 0)
			return log_error_errno(errno, "Failed to read the mode of %s: %m",
					       fb->path);
		/* Drivers may ignore the offset in a mode set: pan explicitly. */
		if (fb->var.yoffset != want.yoffset || fb->var.xoffset != want.xoffset) {
			struct fb_var_screeninfo pan = fb->var;
			pan.xoffset = want.xoffset;
			pan.yoffset = want.yoffset;
			if (ioctl(fb->fd, FBIOPAN_DISPLAY, &pan) == 0) {
				fb->var.xoffset = pan.xoffset;
				fb->var.yoffset = pan.yoffset;
			}
		}
	}

	if (ioctl(fb->fd, FBIOGET_FSCREENINFO, &fb->fix) < 0)
		return log_error_errno(errno, "Failed to read %s: %m", fb->path);
	r = fbdev_check(fb);
	if (r < 0)
		return r;
	if (fb->format.indexed != old_format.indexed ||
	    fb->format.bits_per_pixel != old_format.bits_per_pixel ||
	    fb->fix.visual != old_fix.visual) {
		log_warning("%s is now %ux%u at %u bpp %s, not consoled's mode; drawing in it",
			    fb->path, fb->var.xres, fb->var.yres, fb->var.bits_per_pixel,
			    visual_name(fb->fix.visual));
		fbdev_build_cmap(fb, fb->palette);
	}
	r = fbdev_remap_if_stale(fb, &old_fix);
	if (r < 0)
		return r;
	return fbdev_put_cmap(fb);
}

/* What else of a mode consoled's drawing depends on or fbdev_reacquire() puts
 * back: the pixel format and the timings (a refresh rate set with fbset is
 * the user's too). activate, the physical size and the reserved fields are
 * not compared. */
static bool var_rest_equal(const struct fb_var_screeninfo *a, const struct fb_var_screeninfo *b)
{
#define SAME_BITFIELD(f)                                                                           \
	(a->f.offset == b->f.offset && a->f.length == b->f.length &&                               \
	 a->f.msb_right == b->f.msb_right)
	return SAME_BITFIELD(red) && SAME_BITFIELD(green) && SAME_BITFIELD(blue) &&
	       SAME_BITFIELD(transp) && a->grayscale == b->grayscale && a->nonstd == b->nonstd &&
	       a->rotate == b->rotate && a->pixclock == b->pixclock &&
	       a->left_margin == b->left_margin && a->right_margin == b->right_margin &&
	       a->upper_margin == b->upper_margin && a->lower_margin == b->lower_margin &&
	       a->hsync_len == b->hsync_len && a->vsync_len == b->vsync_len && a->sync == b->sync;
#undef SAME_BITFIELD
}

int fbdev_poll(struct fbdev *fb, struct fb_var_screeninfo *ret_cur)
{
	struct fb_var_screeninfo cur;

	if (ioctl(fb->fd, FBIOGET_VSCREENINFO, &cur) < 0)
		return -errno;
	if (var_mode_equal(&cur, &fb->var) && var_rest_equal(&cur, &fb->var))
		return 0;
	log_debug("%s: %ux%u virtual %ux%u +%u+%u at %u bpp, consoled's is %ux%u virtual %ux%u "
		  "+%u+%u at %u bpp",
		  fb->path, cur.xres, cur.yres, cur.xres_virtual, cur.yres_virtual, cur.xoffset,
		  cur.yoffset, cur.bits_per_pixel, fb->var.xres, fb->var.yres, fb->var.xres_virtual,
		  fb->var.yres_virtual, fb->var.xoffset, fb->var.yoffset, fb->var.bits_per_pixel);
	if (ret_cur)
		*ret_cur = cur;
	return 1;
}

int fbdev_adopt(struct fbdev *fb, const struct fb_var_screeninfo *cur)
{
	struct fb_fix_screeninfo old_fix = fb->fix;
	struct fb_var_screeninfo old_var = fb->var;
	struct pixel_format old_format = fb->format;
	unsigned old_line_length = fb->line_length;
	int r;

	fb->var = *cur;
	if (ioctl(fb->fd, FBIOGET_FSCREENINFO, &fb->fix) < 0)
		return log_error_errno(errno, "Failed to read %s: %m", fb->path);
	/* (fbdev_check() and fbdev_map() log what they refuse) */
	r = fbdev_check(fb);
	if (r == 0) {
		fbdev_build_cmap(fb, fb->palette);
		r = fbdev_remap_if_stale(fb, &old_fix);
	}
	if (r < 0) {
		fb->fix = old_fix;
		fb->var = old_var;
		fb->format = old_format;
		fb->line_length = old_line_length;
		fbdev_build_cmap(fb, fb->palette);
		/* consoled's mode back, as after a VT switch; a mapping that
		 * failed left the old one, which covers it */
		r = fbdev_reacquire(fb);
		return r < 0 ? r : 1;
	}
	/* The driver may have reset it with the mode (a new depth always). */
	(void)fbdev_put_cmap(fb);
	return 0;
}

int fbdev_set_mode(struct fbdev *fb, const struct fb_var_screeninfo *var)
{
	fb->var = *var;
	return fbdev_reacquire(fb);
}

int fbdev_blank(struct fbdev *fb, bool blank)
{
	int r;

	r = ioctl(fb->fd, FBIOBLANK, blank ? FB_BLANK_POWERDOWN : FB_BLANK_UNBLANK);
	if (r < 0)
		return -errno;
	/* > 0: the driver wants its console to blank in software (cirrusfb
	 * for FB_BLANK_NORMAL) */
	return r > 0 ? -EOPNOTSUPP : 0;
}

/* The file of fb's boot mode in the boot mode directory: fbN.mode, N its
 * minor number. */
static int fbdev_boot_mode_name(const struct fbdev *fb, char name[static 32])
{
	struct stat st;

	if (fstat(fb->fd, &st) < 0 || !S_ISCHR(st.st_mode))
		return -ENODEV;
	snprintf(name, 32, "fb%u.mode", minor(st.st_rdev));
	return 0;
}

void fbdev_use_boot_mode(struct fbdev *fb, const char *dir)
{
	struct bootmode_identity ident;
	struct bootmode cur = {.var = fb->saved_var}, boot;
	char name[32];
	int r;

	if (fbdev_boot_mode_name(fb, name) < 0)
		return;
	if (fb->saved_cmap_valid) {
		cur.cmap_len = fb->saved_cmap.len;
		for (unsigned c = 0; c < 3; c++)
			memcpy(cur.cmap[c], fb->saved_cmap_data[c],
			       cur.cmap_len * sizeof(uint16_t));
	}
	bootmode_identity_init(&ident, &fb->fix);
	r = bootmode_load_or_save(dir, name, &ident, &cur, &boot);
	if (r < 0) {
		log_warning("%s: restoring the mode found at start on exit", fb->path);
		return;
	}
	if (r == 0)
		return;
	fb->saved_var = boot.var;
	if (fb->saved_cmap_valid && boot.cmap_len == fb->saved_cmap.len)
		for (unsigned c = 0; c < 3; c++)
			memcpy(fb->saved_cmap_data[c], boot.cmap[c],
			       boot.cmap_len * sizeof(uint16_t));
	crash_register_fb(fb->fd, &fb->saved_var, fb->saved_cmap_valid ? &fb->saved_cmap : NULL);
	log_info("%s: the boot mode saved in %s/%s is %ux%u (virtual %ux%u) at %u bpp", fb->path,
		 dir, name, boot.var.xres, boot.var.yres, boot.var.xres_virtual,
		 boot.var.yres_virtual, boot.var.bits_per_pixel);
}

void fbdev_drop_boot_mode(const struct fbdev *fb, const char *dir)
{
	struct bootmode_identity ident;
	char name[32];

	if (fbdev_boot_mode_name(fb, name) < 0)
		return;
	bootmode_identity_init(&ident, &fb->fix);
	if (bootmode_drop(dir, name, &ident) > 0)
		log_info("%s: its saved boot mode %s/%s is dropped", fb->path, dir, name);
}

void fbdev_restore(struct fbdev *fb)
{
	struct fb_var_screeninfo v = fb->saved_var;

	v.xoffset = 0;
	v.yoffset = 0;
	v.activate = FB_ACTIVATE_NOW | FB_ACTIVATE_FORCE;
	if (ioctl(fb->fd, FBIOPUT_VSCREENINFO, &v) < 0)
		log_warning_errno(errno, "Failed to restore the mode of %s: %m", fb->path);
	if (fb->saved_cmap_valid && ioctl(fb->fd, FBIOPUTCMAP, &fb->saved_cmap) < 0)
		log_warning_errno(errno, "Failed to restore the colour map of %s: %m", fb->path);
	log_info("%s: mode %ux%u (virtual %ux%u) at %u bpp restored", fb->path, v.xres, v.yres,
		 v.xres_virtual, v.yres_virtual, v.bits_per_pixel);
}

int fbdev_set_virtual(struct fbdev *fb, unsigned yres_virtual, unsigned vmode)
{
	struct fb_var_screeninfo want = fb->var, old = fb->var;
	struct fb_fix_screeninfo old_fix = fb->fix;
	int r;

	want.yres_virtual = yres_virtual;
	want.yoffset = 0;
	want.xoffset = 0;
	want.vmode = vmode;
	want.activate = FB_ACTIVATE_NOW;
	if (ioctl(fb->fd, FBIOPUT_VSCREENINFO, &want) < 0)
		return -errno;
	if (ioctl(fb->fd, FBIOGET_VSCREENINFO, &fb->var) < 0 ||
	    ioctl(fb->fd, FBIOGET_FSCREENINFO, &fb->fix) < 0) {
		r = -errno;
		goto restore;
	}
	if (fb->var.yres_virtual != yres_virtual || fb->var.xres != old.xres ||
	    fb->var.yres != old.yres || fb->var.bits_per_pixel != old.bits_per_pixel ||
	    (fb->var.vmode & FB_VMODE_YWRAP) != (vmode & FB_VMODE_YWRAP)) {
		r = -EINVAL; /* the driver adjusted what we asked for */
		goto restore;
	}
	r = fbdev_check(fb);
	if (r < 0)
		goto restore;
	r = fbdev_remap_if_stale(fb, &old_fix);
	if (r < 0)
		goto restore; /* the old mode, which the old mapping still covers */
	return 0;

restore:
	old.activate = FB_ACTIVATE_NOW;
	ioctl(fb->fd, FBIOPUT_VSCREENINFO, &old);
	fb->fix = old_fix;
	/* as the driver has it (fbdev_poll() compares every field) */
	if (ioctl(fb->fd, FBIOGET_VSCREENINFO, &fb->var) < 0)
		fb->var = old;
	fbdev_check(fb);
	return r;
}

int fbdev_pan(struct fbdev *fb, unsigned yoffset)
{
	struct fb_var_screeninfo v = fb->var;

	v.yoffset = yoffset;
	if (ioctl(fb->fd, FBIOPAN_DISPLAY, &v) < 0)
		return -errno;
	fb->var.yoffset = yoffset;
	return 0;
}

int fbdev_activate(struct fbdev *fb)
{
	struct fb_var_screeninfo v = fb->var;

	v.activate = FB_ACTIVATE_NOW | FB_ACTIVATE_FORCE;
	if (ioctl(fb->fd, FBIOPUT_VSCREENINFO, &v) < 0)
		return log_warning_errno(errno, "Failed to set the mode of %s: %m", fb->path);
	if (ioctl(fb->fd, FBIOGET_VSCREENINFO, &fb->var) < 0)
		return log_warning_errno(errno, "Failed to read the mode of %s: %m", fb->path);
	return 0;
}

/*
 * QEMU's ati-vga (Rage128 Pro and Radeon R100 models, QEMU 7.2) stores
 * CRTC_OFFSET but keeps scanning out from the start of VRAM, so aty128fb's and
 * radeonfb's pan ioctl succeeds while the picture stays put; its Rage128 also
 * adds the display offset to every blit address. consoled cannot see the
 * scanout, so it recognises the device: the driver's fix.id and QEMU's PCI
 * subsystem id 1af4:1100. Real Rage128 and Radeon cards pan correctly.
 *
 * bochs-drm's fbdev emulation (Linux 6.1) grows the virtual screen when
 * booted with drm_kms_helper.drm_fbdev_overalloc= above 100 and reports
 * ypanstep 1; the pan ioctl succeeds and moves the plane's source y, but
 * the driver programs the scanout from the plane's CRTC position and always
 * shows the top of the buffer (seen with a QMP screendump: docs/HARDWARE.md).
 */
const char *fbdev_pan_quirk(const struct fbdev *fb)
{
	char path[128], vendor[32], device[32];
	struct stat st;

	if (strcmp(fb->fix.id, "bochs-drmdrmfb") == 0)
		return "bochs-drm accepts FBIOPAN_DISPLAY but keeps showing the top of its buffer";
	if (strncmp(fb->fix.id, "ATY Rage128", 11) != 0 &&
	    strncmp(fb->fix.id, "ATI Radeon", 10) != 0)
		return NULL;
	if (fstat(fb->fd, &st) < 0)
		return NULL;
	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/device/subsystem_vendor",
		 major(st.st_rdev), minor(st.st_rdev));
	if (read_small_file(path, vendor, sizeof(vendor)) < 0)
		return NULL;
	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/device/subsystem_device",
		 major(st.st_rdev), minor(st.st_rdev));
	if (read_small_file(path, device, sizeof(device)) < 0)
		return NULL;
	if (strtoul(vendor, NULL, 16) == 0x1af4 && strtoul(device, NULL, 16) == 0x1100)
		return "QEMU's ati-vga accepts FBIOPAN_DISPLAY but does not move the picture";
	return NULL;
}
