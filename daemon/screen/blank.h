/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Blanking: the idle timer. After `timeout` without a key (or, later, a
 * pointer event: blank_poke() is the one entry point for every kind of
 * input) the blank callback runs; the next poke says the screen must wake.
 * What blanking and waking do to the screen is the caller's (screen.c:
 * FBIOBLANK, else black drawn and no frames until woken).
 *
 * The timer runs only while the VT is ours (blank_set_active()): another
 * VT's console blanks itself, and a VT that comes back starts a new idle
 * period, unblanked.
 */
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

struct blank;

/* The default timeout: the kernel console's own (consoleblank=, in seconds,
 * 0 = never), read from `path`
 * (/sys/module/kernel/parameters/consoleblank); 0 if it cannot be read. */
#define BLANK_KERNEL_SETTING "/sys/module/kernel/parameters/consoleblank"
unsigned blank_kernel_timeout(const char *path);

/* timeout_sec 0: never blanks (no timer at all). Starts inactive. */
int blank_new(sd_event *event, unsigned timeout_sec, void (*on_blank)(void *userdata),
	      void *userdata, struct blank **ret);
void blank_free(struct blank *b);

/* Input happened: a new idle period starts. Returns true if the screen was
 * blanked (and is not any more: the caller wakes it). */
bool blank_poke(struct blank *b);

/* The VT is ours (true) or not. Either way a new idle period starts and the
 * screen counts as unblanked; returns whether it was blanked. */
bool blank_set_active(struct blank *b, bool active);

bool blank_is_blanked(const struct blank *b);
