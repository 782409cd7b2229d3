/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Driver handover and removal: the framebuffer consoled draws on can be
 * unregistered by its driver while consoled runs. On a PC the boot
 * framebuffer (vesafb, efifb, simplefb) is kicked out when the real driver
 * loads, which registers its own fbdev emulation in its place; a driver can
 * be unbound from its device or its module removed. The old device's fd then
 * answers every ioctl with ENODEV, and its mapping may alias the video memory
 * the next driver uses, so nothing may be drawn through it any more. The
 * kernel decides that by identity, not by name: an fd's ioctls fail once its
 * minor holds another framebuffer, also a successor registered at the same
 * /dev/fbN before consoled reads the udev events.
 *
 * fbwatch notices the loss two ways: a udev monitor on the "graphics"
 * subsystem (a `remove` or `add` event makes it ask the device with one
 * FBIOGET_VSCREENINFO), and the caller's own check before every frame
 * (fbdev_poll(), then fbwatch_lost()). The caller then drops everything tied
 * to the device (gone()); the terminal and the session are not. fbwatch looks
 * for the successor at once and after every `add` event: the path given with
 * --fbdev, or without it the first framebuffer (lowest fbN) there is; with
 * a seat (udevseat.h) only one on that seat. A `change` uevent that says
 * the device is on another seat now (`loginctl attach` of its card) is a
 * loss too: the device lives on, but it is that seat's. A
 * device node appears before its framebuffer is registered (device_create()
 * comes first in register_framebuffer()), so an `add` whose device cannot be
 * opened yet is tried again a few times, briefly. With no successor it waits,
 * logging that once.
 *
 * Without udevd (an initramfs) the monitor listens to the kernel's uevents;
 * devtmpfs has made the node by then.
 */
#include <systemd/sd-event.h>

#include "fbdev.h"

struct fbwatch;

struct fbwatch_callbacks {
	/* The device in use is gone: stop using it, drop what depends on it
	 * without touching the hardware, and free it (fbdev_free()). usable:
	 * it is still registered, moved to another seat: the caller leaves it
	 * first as at its exit (nothing of the session's screen stays on a
	 * card another seat's user gets, the mode found is back). */
	void (*gone)(bool usable, void *userdata);
	/* A successor, opened and checked: 0 if the caller took it (and owns
	 * it from now on), a negative errno if it cannot use it (fbwatch frees
	 * it and waits for another). */
	int (*found)(struct fbdev *fb, void *userdata);
};

/* Watches fb (the caller's; NULL: none yet) for its removal. path: the
 * device the user named (--fbdev), or NULL for the first one found. seat:
 * fb and a successor must be on it (NULL: any seat). palette: for
 * fbdev_open() of a successor, kept by the caller. */
int fbwatch_new(sd_event *event, struct fbdev *fb, const char *path, const char *seat,
		const struct palette *palette, const struct fbwatch_callbacks *cb, void *userdata,
		struct fbwatch **ret);
void fbwatch_free(struct fbwatch *w);

/* The caller found its device gone (fbdev_poll() or another ioctl failed
 * with ENODEV): gone(), then a successor is looked for. */
void fbwatch_lost(struct fbwatch *w);

struct udev;
struct udev_monitor;
/* A udev monitor on the "graphics" subsystem (udevd's events, the kernel's
 * without udevd), its fd read by handler on event: 0, or a negative errno
 * (not logged). */
int fbwatch_monitor_new(sd_event *event, struct udev *udev, sd_event_io_handler_t handler,
			void *userdata, struct udev_monitor **ret, sd_event_source **ret_source);

/* Whether a framebuffer is registered at path now, asked quietly: false
 * while the node is missing or not registered yet (ENOENT, ENODEV: a node
 * exists a moment before its framebuffer), true otherwise (also when
 * opening it fails for another reason, which fbdev_open() reports). */
bool fbwatch_probe(const char *path);
