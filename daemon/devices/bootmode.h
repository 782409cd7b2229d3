/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * The boot mode: the framebuffer's mode and colour map as they were before
 * any consoled touched the device, kept in one root-only file per device so
 * that every consoled puts back the same mode on exit.
 *
 * Without it, a consoled restarted after SIGKILL (no crash handler runs) would
 * take the tall virtual screen, FB_VMODE_YWRAP or pan offset its predecessor
 * left for "the original", and so would a second consoled@ttyN sharing the
 * device with a running one; the kernel's console would then come back in
 * consoled's mode. The first consoled that opens the device writes the file
 * (created under a temporary name and linked into place, so of two racing
 * instances one wins and both read the winner's); every later one reads it.
 *
 * The file lives in /run/consoled (BOOTMODE_DIR): a tmpfs that is empty after
 * a reboot, kept across restarts of consoled@.service (RuntimeDirectory= with
 * RuntimeDirectoryPreserve=yes, or made here). It is removed when the device
 * goes away (the udev rule 60-consoled.rules), and it is not trusted when it
 * does not describe this device (the driver's id, the memory's address and
 * size, the boot's id) or when anyone but root could have written it: then
 * the device's current mode is taken and the file written again.
 */
#include <linux/fb.h>
#include <stdbool.h>
#include <stdint.h>

#define BOOTMODE_DIR "/run/consoled"

/* What must match for a saved mode to be this device's. */
struct bootmode_identity {
	char id[16];	     /* fix.id */
	uint64_t smem_start; /* fix.smem_start */
	uint32_t smem_len;
	char boot_id[40]; /* /proc/sys/kernel/random/boot_id */
};

struct bootmode {
	struct fb_var_screeninfo var;
	uint32_t cmap_len; /* 0: none saved */
	uint16_t cmap[3][256];
};

/* Fills the identity of a device from its fix (and the running boot). */
void bootmode_identity_init(struct bootmode_identity *ident, const struct fb_fix_screeninfo *fix);

/* In dir (created mode 0700 if missing; refused unless root's and closed to
 * others), the file `name` (e.g. "fb0.mode"): returns 1 and the saved mode in
 * *ret when it exists and is this device's; else saves `current` as the boot
 * mode and returns 0 with *ret = *current (also when another instance saved
 * one first: then *ret is theirs, and 1). A negative errno when the
 * directory or file cannot be used: the caller goes on with `current`. */
int bootmode_load_or_save(const char *dir, const char *name, const struct bootmode_identity *ident,
			  const struct bootmode *current, struct bootmode *ret);

/* Only reads: 1 and the saved mode in *ret when the file exists and is this
 * device's, 0 when not, a negative errno when the directory cannot be used
 * (consoled-fallback, which must not take a mode consoled left for the boot
 * mode). */
int bootmode_load(const char *dir, const char *name, const struct bootmode_identity *ident,
		  struct bootmode *ret);

/* The device is gone: removes the file `name` in dir if it is this
 * device's (ident), so the next device with that name starts afresh.
 * Returns 1 if removed, 0 if there was none or it is another device's, a
 * negative errno when the directory or file cannot be used. */
int bootmode_drop(const char *dir, const char *name, const struct bootmode_identity *ident);
