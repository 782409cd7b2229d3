/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Waiting for a framebuffer at start (--fb-wait, consoled(8) "WAITING FOR A
 * FRAMEBUFFER"). At boot the fbdev or DRM driver may register its
 * framebuffer after consoled@ttyN.service started; consoled waits for it
 * before it reports READY=1, so the wait delays getty.target and is bounded.
 *
 * How: a udev monitor on the "graphics" subsystem ("udev" events when udevd
 * runs, so the node exists with its permissions; the kernel's uevents
 * without udevd), then an enumeration, so a framebuffer registered between
 * the first look and the monitor is not missed. Any event of the subsystem
 * looks again: for --fbdev=PATH, whether PATH exists; without it, the first
 * framebuffer (lowest N) of the subsystem, fbdev_find_default()'s rule.
 *
 * "udev's coldplug is done" ends the wait early: udevd runs
 * (/run/udev/control), consoled was started after
 * systemd-udev-trigger.service had queued an "add" for every device present
 * at boot (consoled@.service is ordered after it; started by hand, the system
 * booted long ago), and udev's queue has been empty (no /run/udev/queue) for
 * FBWAIT_SETTLE_USEC: every driver that coldplug loads has probed, and a
 * framebuffer registered in a probe came through the queue before it
 * emptied; the grace covers drivers that probe asynchronously. Without udevd
 * (an initramfs, a container) nothing tells when drivers are done: the wait
 * takes its full time.
 */
#include <stdbool.h>
#include <stdint.h>

#include "fbdev.h"
#include "../color/pixel.h"

struct udev;

/* "fbN" with N a number: a framebuffer of the graphics subsystem (not
 * "fbcon"); *ret_n (may be NULL) gets N. */
bool fbwait_sysname(const char *sysname, unsigned *ret_n);
/* The device node of the lowest fbN the graphics subsystem lists now, or
 * NULL (quiet: callers log). */
char *fbwait_first_node(struct udev *udev);
/* The same among the framebuffers on seat (udevseat.h; NULL: any seat). */
char *fbwait_first_node_on(struct udev *udev, const char *seat);

/* udev's queue must stay empty this long before the wait gives up. */
#define FBWAIT_SETTLE_USEC (2 * UINT64_C(1000000))

/* Opens (fbdev_open()) path, or without one (NULL) the first framebuffer
 * (on seat, udevseat.h, unless that is NULL; without path a framebuffer of
 * another seat is never taken).
 * If there is none, waits up to wait_sec seconds for it (0: not at all), as
 * above, saying so in the log (once) and in sd_notify's STATUS=. A device
 * node that appears a moment after its uevent (devtmpfs) is given up to a
 * second. Returns 0 with *ret set, or the negative errno of the last
 * attempt, logged with why the wait ended (timeout, coldplug done). */
int fbwait_open(const char *path, const char *seat, unsigned wait_sec,
		const struct palette *palette, struct fbdev **ret);
