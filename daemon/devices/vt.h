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
 * The framebuffer must be restored before that (see main.c, screen.c).
 *
 * Another program may take the VT over while consoled has it: logind does for
 * a compositor started from consoled's login (TakeControl: VT_SETMODE
 * VT_PROCESS with its own signals, KD_GRAPHICS, K_OFF), and nothing tells
 * consoled. vt checks VT_GETMODE when something touches the VT (an open or
 * close of /dev/ttyN, seen by inotify, and a VT switch, by POLLPRI on
 * /sys/class/tty/tty0/active: at once, 50 ms and about a second later),
 * and vt_poll() asks at once before each frame and key; nothing is polled
 * while nobody touches the VT (without inotify: once a second): while the mode is VT_PROCESS with
 * signals that are not consoled's, the VT counts as released (the release callback runs if it was
 * active; no switch is acknowledged, the kernel asks the other program now). When it is handed back
 * (VT_AUTO, as logind's restore leaves it, or consoled's own mode again) vt takes the VT again
 * (VT_SETMODE, KD_GRAPHICS, K_OFF, the keys the kernel keyboard queued meanwhile flushed) and runs
 * the acquire callback if the VT is in front; if it is not, the acquire signal comes when the user
 * switches to it. A consoled that exits or starts while another program holds the VT leaves its
 * mode alone, and one that crashes does not restore it either.
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

/* A seat without kernel VTs (seat.h, --seat): a stand-in with no device
 * (number 0, no ioctl, no signal, no poll), inactive until vt_set_active()
 * says what logind's seat state does; each change runs the callbacks, as
 * a VT switch does; `name` (the seat's) is what vt_name() gives. */
int vt_new_none(const struct vt_callbacks *cb, void *userdata, const char *name, struct vt **ret);
void vt_set_active(struct vt *vt, bool active);

/* Whether consoled may draw and read keys: the VT is in front and ours. */
bool vt_is_active(const struct vt *vt);
/* Checks the VT's mode now (VT_GETMODE) and acts on a change as the
 * periodic poll does, callbacks included. */
void vt_poll(struct vt *vt);
unsigned vt_number(const struct vt *vt);
/* Where consoled runs, for status and log lines: "ttyN", or the seat's name
 * for a stand-in. */
const char *vt_name(const struct vt *vt);

/* Asks the kernel to switch to VT `target` (Ctrl+Alt+Fn). */
int vt_activate(struct vt *vt, unsigned target);

/* The bell's tone through the VT (KDMKTONE): hz for ms milliseconds, or
 * silence (hz 0). Returns 0 or a negative errno. */
int vt_tone(struct vt *vt, unsigned hz, unsigned ms);
