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
 * The registered state is the one piece of mutable global state besides the
 * log level: a signal handler has no other way to reach it.
 */
#include <linux/fb.h>

void crash_register_fb(int fd, const struct fb_var_screeninfo *var, const struct fb_cmap *cmap);
void crash_register_vt(int fd, int kbmode);
/* The framebuffer mode is only put back while our VT is the visible one:
 * otherwise fbcon (or another VT's owner) is using the device. */
void crash_set_active(int active);
/* Sets up the alternate signal stack (once) and the handlers. */
void crash_install_handlers(void);
