/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * The backend plugin loader: finds, checks, probes and creates blitter
 * plugins (backends/include/consoled/backend.h is their ABI), and wraps their
 * operations with the daemon's rules: every error or timeout drops the
 * plugin for good, logs why, and the caller goes on in software and
 * redraws (libtsm holds the truth, so nothing is lost).
 *
 * Plugins load from BACKEND_DIR ($libdir/consoled/backends). Only a test
 * build (meson -Dtest-hooks=true, CONSOLED_TEST_HOOKS) lets the test suite
 * point CONSOLED_BACKEND_DIR at the build tree and switch the fault
 * CONSOLED_TEST_BACKEND_HANG on; other builds never read them.
 *
 * The directory must be a real directory (not a symbolic link) owned by root
 * and not writable by group or others; it is opened once and every plugin is
 * opened relative to that fd. A plugin file must be a regular file (not a
 * symbolic link) owned by root and not writable by group or others, checked
 * on the open fd, and it is dlopen()ed through /proc/self/fd/N, so the file
 * checked is the file loaded; it must be built for this ABI major. Anything
 * else is skipped with a log line.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fbdev.h"

struct backend;

struct backend_config {
	const char *name;    /* NULL or "auto": best probe; "none": no backend */
	uint32_t test_flags; /* CONSOLED_BACKEND_TEST_* (test tools; the daemon leaves it 0) */
	const char *dir;     /* NULL: backend_dir(); tests load from elsewhere */
};

/* The plugin directory: BACKEND_DIR; in a test build CONSOLED_BACKEND_DIR
 * when set. */
const char *backend_dir(void);

/* The loader's checks, for the unit tests. backend_open_dir(): an fd of the
 * directory if it passes (not a symbolic link, owned by root, not writable
 * by group or others), else a negative errno (-EPERM for the ownership and
 * mode), logged. backend_open_file(): an fd of plugin `name` in dir_fd (dir
 * is its path, for the log) if it is a regular file, not a symbolic link,
 * owned by root and not writable by group or others; else a negative errno,
 * logged. */
int backend_open_dir(const char *path);
int backend_open_file(int dir_fd, const char *dir, const char *name);

/* Loads the backend for fb. *ret is NULL (and 0 returned) when none
 * matches or is wanted; an error only for a named plugin that cannot be
 * used. */
/* Whether fb is a DRM driver's fbdev emulation (its id ends in "drmfb", or
 * its device has a DRM card): backend_load() gives it no blitter. */
bool backend_fb_is_drm(const struct fbdev *fb);
int backend_load(struct fbdev *fb, const struct backend_config *cfg, struct backend **ret);
void backend_free(struct backend *b);
/* The device is gone (its driver unregistered the framebuffer, fbwatch.h):
 * no sync() or destroy(), which wait for the engine and so would read
 * registers that now belong to no driver or to the next one; the plugin's
 * forget() (ABI 1.1) frees its state without touching the hardware, then the
 * register mapping is unmapped. A plugin without forget() is left as it is
 * (its state never freed, its library loaded). */
void backend_abandon(struct backend *b);

/* --list-backends: each plugin, its version, and whether it matches fb (or
 * "no framebuffer" when fb is NULL). */
void backend_list(struct fbdev *fb, FILE *out);

const char *backend_name(const struct backend *b);

/* The operations; any failure marks the backend broken (backend_ok()
 * false afterwards) and returns the error. */
int backend_copy(struct backend *b, uint32_t sx, uint32_t sy, uint32_t dx, uint32_t dy, uint32_t w,
		 uint32_t h);
int backend_fill(struct backend *b, uint32_t x, uint32_t y, uint32_t w, uint32_t h, uint32_t pixel);
/* Waits for the engine before the CPU touches VRAM (no-op when idle). */
int backend_sync(struct backend *b);
/* After every change of the framebuffer's geometry: fbdev_reacquire() (the
 * mode may have been set again) and every fbdev_set_virtual() (a taller or
 * shorter virtual screen). The plugin re-reads what depends on it, such as
 * the lines it may touch. */
int backend_mode_changed(struct backend *b, struct fbdev *fb);
bool backend_ok(const struct backend *b);
