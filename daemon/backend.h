/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * The backend plugin loader: finds, checks, probes and creates blitter
 * plugins (backends/include/consoled/backend.h is their ABI), and wraps their
 * operations with the daemon's rules: every error or timeout drops the
 * plugin for good, logs why, and the caller goes on in software and
 * redraws (libtsm holds the truth, so nothing is lost).
 *
 * Plugins load from BACKEND_DIR ($libdir/consoled/backends); the test suite
 * points CONSOLED_BACKEND_DIR at the build tree instead. A plugin file must
 * be a regular file owned by root and not writable by group or others, and
 * must be built for this ABI major; anything else is skipped with a log line.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fbdev.h"

struct backend;

struct backend_config {
	const char *name;    /* NULL or "auto": best probe; "none": no backend */
	uint32_t test_flags; /* CONSOLED_BACKEND_TEST_* */
};

/* The plugin directory: CONSOLED_BACKEND_DIR if set, else BACKEND_DIR. */
const char *backend_dir(void);

/* Loads the backend for fb. *ret is NULL (and 0 returned) when none
 * matches or is wanted; an error only for a named plugin that cannot be
 * used. */
int backend_load(struct fbdev *fb, const struct backend_config *cfg, struct backend **ret);
void backend_free(struct backend *b);

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
/* After fbdev_reacquire(): the mode may be set again. */
int backend_mode_changed(struct backend *b, struct fbdev *fb);
bool backend_ok(const struct backend *b);
