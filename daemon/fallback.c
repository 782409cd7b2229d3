/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * consoled-fallback: a text VT back for getty after consoled is gone for good.
 *
 * consoled@.service leaves the VT alone when consoled exits (no TTYReset=,
 * TTYVHangup=, TTYVTDisallocate=: systemd 252 applies them at every exit, so
 * a crash restart would flash the kernel's console), and with session restore
 * a crashed consoled leaves its last frame on screen for the next one. When
 * systemd gives up instead (the start limit, a RestartPreventExitStatus=
 * exit), OnFailure= starts consoled-fallback@ttyN.service, ordered before
 * getty@ttyN.service, which runs this once:
 *
 *   - if the VT is the one shown: every framebuffer with a boot mode saved in
 *     /run/consoled (bootmode.h) gets that mode back (at pan offset 0) and its
 *     colour map; a file that does not describe the device is ignored, never
 *     replaced;
 *   - the VT's text is cleared (what the kernel's console would show is from
 *     before consoled), then KD_TEXT, VT_AUTO and, if consoled left it off, the
 *     keyboard mode the kernel starts VTs with.
 *
 * Usage: consoled-fallback ttyN. It reports what it did and exits 0 unless the
 * VT cannot be used; getty starts after it either way.
 */
#define LOG_MODULE "consoled-fallback"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fb.h>
#include <linux/kd.h>
#include <linux/vt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "devices/bootmode.h"
#include "terminal/vcs.h"
#include "util/log.h"
#include "util/util.h"

/* Puts the boot mode saved as `name` (fbN.mode) back on /dev/fbN. */
static void restore_fb(const char *name, unsigned minor)
{
	struct fb_fix_screeninfo fix;
	struct bootmode_identity ident;
	struct bootmode boot;
	struct fb_var_screeninfo v;
	char path[32];
	_cleanup_(closep) int fd = -1;
	int r;

	snprintf(path, sizeof(path), "/dev/fb%u", minor);
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		log_warning_errno(errno, "Cannot open %s for its boot mode: %m", path);
		return;
	}
	if (ioctl(fd, FBIOGET_FSCREENINFO, &fix) < 0) {
		log_warning_errno(errno, "%s is no framebuffer: %m", path);
		return;
	}
	bootmode_identity_init(&ident, &fix);
	r = bootmode_load(BOOTMODE_DIR, name, &ident, &boot);
	if (r <= 0) {
		log_info("%s: no boot mode of it in %s/%s, left as it is", path, BOOTMODE_DIR,
			 name);
		return;
	}
	v = boot.var;
	v.xoffset = 0;
	v.yoffset = 0;
	v.activate = FB_ACTIVATE_NOW | FB_ACTIVATE_FORCE;
	/* a consoled killed while its screen was blanked (FBIOBLANK) */
	(void)ioctl(fd, FBIOBLANK, FB_BLANK_UNBLANK);
	if (ioctl(fd, FBIOPUT_VSCREENINFO, &v) < 0)
		log_warning_errno(errno, "Failed to restore the boot mode of %s: %m", path);
	else
		log_info("%s: boot mode %ux%u (virtual %ux%u) at %u bpp restored", path, v.xres,
			 v.yres, v.xres_virtual, v.yres_virtual, v.bits_per_pixel);
	if (boot.cmap_len > 0) {
		struct fb_cmap cmap = {
		    .start = 0,
		    .len = boot.cmap_len,
		    .red = boot.cmap[0],
		    .green = boot.cmap[1],
		    .blue = boot.cmap[2],
		};

		if (ioctl(fd, FBIOPUTCMAP, &cmap) < 0)
			log_warning_errno(errno, "Failed to restore the colour map of %s: %m",
					  path);
	}
}

static void restore_fbs(void)
{
	DIR *d = opendir(BOOTMODE_DIR);
	struct dirent *de;

	if (!d) {
		log_info("No %s (%m): no framebuffer mode to restore", BOOTMODE_DIR);
		return;
	}
	while ((de = readdir(d))) {
		unsigned long minor;
		char *end;

		/* exactly fbN.mode: not the temporary .fbN.mode.PID files */
		if (strncmp(de->d_name, "fb", 2) != 0 || de->d_name[2] < '0' || de->d_name[2] > '9')
			continue;
		minor = strtoul(de->d_name + 2, &end, 10);
		if (strcmp(end, ".mode") != 0 || minor > 31)
			continue;
		restore_fb(de->d_name, (unsigned)minor);
	}
	closedir(d);
}

int main(int argc, char **argv)
{
	/* also undo what the vcs mirror of a consoled killed by SIGKILL left
	 * set: autowrap off, the cursor hidden, attributes */
	static const char clear[] = VCS_CLEAR_SEQ "\033[3J";
	const char *name;
	char path[32];
	unsigned num;
	struct vt_stat st;
	struct vt_mode mode = {.mode = VT_AUTO};
	int kbmode, fd;
	ssize_t n;

	if (argc != 2) {
		fprintf(stderr, "Usage: %s ttyN\n", argv[0]);
		return 2;
	}
	name = argv[1];
	if (strncmp(name, "/dev/", 5) == 0)
		name += 5;
	if (strncmp(name, "tty", 3) != 0 || parse_uint(name + 3, 1, 63, &num) < 0) {
		log_error("%s is not a VT (tty1 to tty63)", argv[1]);
		return 2;
	}
	snprintf(path, sizeof(path), "/dev/tty%u", num);
	fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		log_error_errno(errno, "Failed to open %s: %m", path);
		return 1;
	}
	if (ioctl(fd, KDGKBMODE, &kbmode) < 0) {
		log_error_errno(errno, "%s is not a virtual terminal: %m", path);
		close(fd);
		return 1;
	}

	/* Only the VT in front owns the framebuffers; another VT's owner (a
	 * consoled, or the kernel's console) has them as it wants them. */
	if (ioctl(fd, VT_GETSTATE, &st) == 0 && st.v_active == num)
		restore_fbs();
	else
		log_info("%s is not the VT shown: framebuffers left as they are", path);

	/* Written while still in graphics mode: the kernel's console keeps the
	 * text but does not draw it, and comes up blank. */
	n = write(fd, clear, sizeof(clear) - 1);
	(void)n;
	if (ioctl(fd, KDSETMODE, KD_TEXT) < 0)
		log_warning_errno(errno, "Failed to put %s in text mode: %m", path);
	if (ioctl(fd, VT_SETMODE, &mode) < 0)
		log_warning_errno(errno, "Failed to set %s to VT_AUTO: %m", path);
	if (kbmode == K_OFF) {
		char utf8[8] = "1";

		read_small_file("/sys/module/vt/parameters/default_utf8", utf8, sizeof(utf8));
		kbmode = utf8[0] == '0' ? K_XLATE : K_UNICODE;
		if (ioctl(fd, KDSKBMODE, kbmode) < 0)
			log_warning_errno(errno, "Failed to turn the keyboard of %s back on: %m",
					  path);
	}
	log_info("%s is a text VT again (keyboard %s), for getty", path,
		 kbmode == K_UNICODE ? "K_UNICODE"
		 : kbmode == K_XLATE ? "K_XLATE"
				     : "as it was");
	close(fd);
	return 0;
}
