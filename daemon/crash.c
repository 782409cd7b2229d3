/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <linux/kd.h>
#include <linux/vt.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "crash.h"

static struct {
	int fb_fd;
	struct fb_var_screeninfo var;
	struct fb_cmap cmap;
	int have_cmap;
	int vt_fd;
	int kbmode;
	volatile int active;
} crash_state = {.fb_fd = -1, .vt_fd = -1};

void crash_register_fb(int fd, const struct fb_var_screeninfo *var, const struct fb_cmap *cmap)
{
	crash_state.fb_fd = fd;
	if (var)
		crash_state.var = *var;
	crash_state.have_cmap = cmap != NULL;
	if (cmap)
		crash_state.cmap = *cmap; /* the data arrays live in struct fbdev */
}

void crash_set_active(int active)
{
	crash_state.active = active;
}

void crash_register_vt(int fd, int kbmode)
{
	crash_state.vt_fd = fd;
	crash_state.kbmode = kbmode;
}

static void crash_handler(int sig)
{
	static const char msg[] = "consoled: fatal signal, restoring the console\n";
	ssize_t n;

	n = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	(void)n;

	if (crash_state.fb_fd >= 0 && crash_state.active) {
		struct fb_var_screeninfo v = crash_state.var;

		v.xoffset = 0;
		v.yoffset = 0;
		v.activate = FB_ACTIVATE_NOW | FB_ACTIVATE_FORCE;
		ioctl(crash_state.fb_fd, FBIOPUT_VSCREENINFO, &v);
		if (crash_state.have_cmap)
			ioctl(crash_state.fb_fd, FBIOPUTCMAP, &crash_state.cmap);
	}
	if (crash_state.vt_fd >= 0) {
		struct vt_mode mode = {.mode = VT_AUTO};

		ioctl(crash_state.vt_fd, KDSETMODE, KD_TEXT);
		ioctl(crash_state.vt_fd, VT_SETMODE, &mode);
		ioctl(crash_state.vt_fd, KDSKBMODE, crash_state.kbmode);
	}

	/* SA_RESETHAND has put the default action back: die for real. */
	raise(sig);
}

void crash_install_handlers(void)
{
	static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = crash_handler;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}
