/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "fbflush"
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "fbflush.h"
#include "../util/log.h"
#include "../util/util.h"

static const char *const fb_flush_names[_FB_FLUSH_MAX] = {
    [FB_FLUSH_AUTO] = "auto",
    [FB_FLUSH_MAP] = "map",
    [FB_FLUSH_WRITE] = "write",
};

const char *fb_flush_to_string(enum fb_flush f)
{
	return f < _FB_FLUSH_MAX ? fb_flush_names[f] : "?";
}

int fb_flush_from_string(const char *s)
{
	return string_table_lookup(fb_flush_names, _FB_FLUSH_MAX, s);
}

enum fb_flush fb_flush_resolve(const struct fbdev *fb, enum fb_flush requested)
{
	bool deferred = backend_fb_is_drm(fb);

	if (requested != FB_FLUSH_AUTO) {
		log_info("Flush: %s (--fb-flush=%s)%s", fb_flush_to_string(requested),
			 fb_flush_to_string(requested),
			 deferred ? "" : " on a framebuffer without deferred I/O");
		return requested;
	}
	if (deferred) {
		/* Measured on bochs-drm (consoled(8), DEFERRED I/O): pwrite()
		 * of the changed rows from a RAM copy costs no page faults and
		 * cannot fall into the dropped single-page flush. */
		log_info("Flush: write: %s (%s) is a DRM driver's fbdev emulation with deferred "
			 "I/O; drawing in RAM and writing the changed rows with pwrite()",
			 fb->path, fb->fix.id);
		return FB_FLUSH_WRITE;
	}
	return FB_FLUSH_MAP;
}

int64_t fbflush_write_lines(struct fbdev *fb, const uint8_t *screen, unsigned y0, unsigned y1)
{
	size_t ll = fb->line_length;
	unsigned yres = fb->var.yres;
	int64_t total = 0;

	if (y1 > yres)
		y1 = yres;
	if (y0 >= y1)
		return 0;
	/* One scanline alone would be one clip of one line: widen it. */
	if (y1 - y0 < 2) {
		if (y1 < yres)
			y1++;
		else if (y0 > 0)
			y0--;
	}
	const uint8_t *src = screen + (size_t)y0 * ll;
	size_t len = (size_t)(y1 - y0) * ll;
	off_t off = (off_t)(fb->var.yoffset + y0) * (off_t)ll;

	while (len > 0) {
		ssize_t n = pwrite(fb->fd, src, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENOSPC;
		src += n;
		off += n;
		len -= (size_t)n;
		total += n;
	}
	return total;
}
