/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * How drawn pixels reach a framebuffer whose driver copies them to the
 * glass later (deferred I/O: the fbdev emulation of DRM drivers such as
 * bochs-drm, virtio-gpu and qxl keeps the mapping in RAM, tracks the pages
 * written through it and flushes them from a worker).
 *
 *   map    writes through the mapping, as on any framebuffer; the kernel's
 *          page tracking finds them. Linux 6.1 (Debian 12) drops a flush
 *          batch that is one page inside one scanline ending at the line's
 *          end (its damage clip gets x2 = 0), so pixels written late in a
 *          frame can stay off the glass.
 *   write  draws into a copy in RAM and writes the changed rows with
 *          pwrite(): each write is one damage clip of whole scanlines,
 *          flushed at once, with no page faults. A clip of one scanline
 *          hits the same bug, so every write covers two or more.
 */
#include <stdint.h>

#include "fbdev.h"

enum fb_flush {
	FB_FLUSH_AUTO,
	FB_FLUSH_MAP,
	FB_FLUSH_WRITE,
	_FB_FLUSH_MAX,
};

const char *fb_flush_to_string(enum fb_flush f);
/* Returns the mode or -EINVAL. */
int fb_flush_from_string(const char *s);

/* What `auto` means on fb: write on a DRM driver's fbdev emulation (deferred
 * I/O), map elsewhere. Logs the choice and why. */
enum fb_flush fb_flush_resolve(const struct fbdev *fb, enum fb_flush requested);

/* Writes visible pixel lines [y0, y1) of `screen` (a copy of the whole
 * visible screen, fb->line_length bytes a line) to the device with
 * pwrite(). A range of one line is widened to two. Returns the bytes
 * written or a negative errno. */
int64_t fbflush_write_lines(struct fbdev *fb, const uint8_t *screen, unsigned y0, unsigned y1);
