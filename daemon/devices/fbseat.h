/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Every framebuffer of a seat (fbdev=all, a seat's default): which of the
 * framebuffers there are consoled takes, and the ones that come later.
 *
 * A framebuffer is the seat's by udev's ID_SEAT (udevseat.h: the device's
 * or the nearest parent's; none is seat0). At start consoled takes the
 * seat's in /dev/fbN order, OPTIONS_SCREENS_MAX at most (fbseat_list(),
 * fbseat_choose()); the rest are left out, and the log says which and why.
 * From then on a udev monitor on the "graphics" subsystem (fbseat_new())
 * hands its caller every framebuffer of the seat that no screen uses: one
 * registered later (an `add`), or one `loginctl attach` moved onto the
 * seat (a `change`, which logind's attach sends to the card's devices). A
 * framebuffer a screen has, or whose path a screen waits at for a successor
 * (fbwatch.h), is not handed over twice: that screen takes it. One moved
 * away from the seat is the screen's fbwatch's to drop.
 *
 * A node may be announced before its framebuffer is registered (as
 * fbwatch.h says): then it is looked for again, FBSEAT_RETRIES times,
 * FBSEAT_RETRY_USEC apart, quietly. A framebuffer the caller could not use
 * is not offered again until an `add` of that node (a new device there).
 */
#include <stdbool.h>
#include <stddef.h>
#include <systemd/sd-event.h>

struct udev;
struct fbseat;

enum fbseat_verdict {
	FBSEAT_TAKE,	   /* the seat's, no screen has it, room for a screen */
	FBSEAT_OTHER_SEAT, /* another seat's */
	FBSEAT_USED,	   /* a screen has it, or waits for a successor at its path */
	FBSEAT_FULL,	   /* as many screens as there may be */
};

/* A framebuffer of the graphics subsystem. */
struct fbseat_entry {
	unsigned n;  /* N of fbN */
	char *node;  /* its device node */
	char *seat;  /* its seat (udevseat_of()) */
	int verdict; /* enum fbseat_verdict: fbseat_choose()'s */
};

/* Sorts e[0..n) by N and decides each for a seat: a framebuffer of another
 * seat is OTHER_SEAT, one whose node is among used[0..n_used) (the paths
 * the screens have or wait at) USED, the seat's others TAKE while the
 * screens (n_used and those taken before) are fewer than max, FULL after. */
void fbseat_choose(struct fbseat_entry *e, size_t n, const char *seat, const char *const *used,
		   size_t n_used, unsigned max);
/* Why a framebuffer was left out, for the log ("taken" for TAKE). */
const char *fbseat_verdict_to_string(int verdict);
/* The framebuffers the graphics subsystem lists now, of any seat, into
 * *ret (fbseat_list_free()); returns how many. */
size_t fbseat_list(struct udev *udev, struct fbseat_entry **ret);
void fbseat_list_free(struct fbseat_entry *e, size_t n);

struct fbseat_callbacks {
	/* The paths the screens have or wait at: at most max into used (the
	 * strings stay the caller's); returns how many. */
	size_t (*used)(const char **used, size_t max, void *userdata);
	/* A framebuffer of the seat at node, registered, that no screen has:
	 * 0 if the caller made a screen of it, a negative errno if not
	 * (logged by the caller). */
	int (*added)(const char *node, void *userdata);
};

/* Watches for framebuffers of seat (max screens at most), and hands over
 * at once those there are now that no screen has (one registered between
 * the caller's enumeration and the monitor). */
int fbseat_new(sd_event *event, const char *seat, unsigned max, const struct fbseat_callbacks *cb,
	       void *userdata, struct fbseat **ret);
void fbseat_free(struct fbseat *f);
