/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * The virtual terminal consoled draws on. The VT is put in VT_PROCESS mode,
 * so the kernel asks before switching away (release signal) and tells us when
 * we are back (acquire signal); in KD_GRAPHICS mode, so the kernel's fbcon
 * stops drawing on it; and in keyboard mode K_OFF, so the kernel's keyboard
 * handler feeds nothing into the tty (consoled reads evdev itself).
 *
 * On release the owner stops drawing and key repeat, then vt acks; on
 * acquire vt acks first, then the owner restores the framebuffer and redraws.
 * vt_free() undoes everything in order: KD_TEXT, VT_AUTO, keyboard mode.
 * The framebuffer must be restored before that (see main.c).
 */
#include <stdbool.h>
#include <systemd/sd-event.h>

struct vt;

struct vt_callbacks {
	void (*release)(void *userdata);
	void (*acquire)(void *userdata);
};

/* num 0 = the first free VT. With `activate`, switch to it. */
int vt_open(sd_event *event, unsigned num, bool activate, const struct vt_callbacks *cb,
	    void *userdata, struct vt **ret);
void vt_free(struct vt *vt);

bool vt_is_active(const struct vt *vt);
unsigned vt_number(const struct vt *vt);

/* Asks the kernel to switch to VT `target` (Ctrl+Alt+Fn). */
int vt_activate(struct vt *vt, unsigned target);
