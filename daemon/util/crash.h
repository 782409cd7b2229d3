/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Leaving the console usable after a crash. A daemon that dies with its VT in
 * KD_GRAPHICS and keyboard mode K_OFF leaves a dead screen and keyboard, so a
 * fatal signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) runs a handler that
 * does what a normal exit does, with async-signal-safe ioctls only: the
 * framebuffer's saved mode (at yoffset 0) and colour map, then KD_TEXT,
 * VT_AUTO and the saved keyboard mode; then it re-raises the signal so the
 * exit status and core dump are the real ones. The handler runs on an
 * alternate signal stack (sigaltstack), so a stack overflow, whose SIGSEGV
 * comes with no stack left, restores the console too.
 *
 * With session restore under systemd (consoled(8), SESSION RESTORE) the
 * handler leaves the display as it is instead: the VT stays in graphics mode
 * with the last frame drawn, the keyboard off, until the consoled systemd
 * starts next takes the screen and the session over (a frozen frame, never
 * the kernel's console in between). If no consoled follows (the start limit,
 * a permanent exit status), consoled-fallback@.service puts the boot mode and
 * the text mode back before getty starts.
 *
 * The registered state is the one piece of mutable global state besides the
 * log level: a signal handler has no other way to reach it.
 */
#include <linux/fb.h>
#include <stdbool.h>
#include <systemd/sd-event.h>

/* Each framebuffer in use (up to CRASH_FBS_MAX, one per screen) is
 * registered by its fd, again when its saved mode changes, and
 * unregistered when it is closed. */
#define CRASH_FBS_MAX 4
void crash_register_fb(int fd, const struct fb_var_screeninfo *var, const struct fb_cmap *cmap);
void crash_unregister_fb(int fd);
void crash_register_vt(int fd, int kbmode);
/* The framebuffer mode is only put back while our VT is the visible one:
 * otherwise fbcon (or another VT's owner) is using the device. */
void crash_set_active(int active);
/* Whether a fatal signal leaves the display for a successor (session
 * restore under a service manager that restarts consoled) instead of
 * restoring the text mode. Off by default. */
void crash_set_keep_display(bool keep);
/* Sets up the alternate signal stack (once) and the handlers. */
void crash_install_handlers(void);

/* Test builds only (meson -Dtest-hooks=true; a no-op otherwise): SIGUSR2
 * stalls the event loop for good, so that a lowered WatchdogSec= has systemd
 * abort consoled (consoled(8), ENVIRONMENT). */
int crash_add_test_hooks(sd_event *event);
