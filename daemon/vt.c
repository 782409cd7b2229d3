/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "vt"
#include <errno.h>
#include <fcntl.h>
#include <linux/kd.h>
#include <linux/vt.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "crash.h"
#include "log.h"
#include "util/util.h"
#include "vt.h"

/* SIGUSR1/2 stay free for the daemon's own use (statistics); real-time
 * signals are valid VT_PROCESS signals. */
#define VT_SIG_RELEASE (SIGRTMIN + 1)
#define VT_SIG_ACQUIRE (SIGRTMIN + 2)

struct vt {
	int fd;
	unsigned num;
	bool active;
	int saved_kbmode;
	bool graphics_set, mode_set, kbmode_set;
	sd_event_source *release_source, *acquire_source;
	struct vt_callbacks cb;
	void *userdata;
};

static int vt_find_free(unsigned *ret)
{
	_cleanup_(closep) int fd = -1;
	int n;

	fd = open("/dev/tty0", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return log_error_errno(errno, "Failed to open /dev/tty0 to find a free VT: %m");
	if (ioctl(fd, VT_OPENQRY, &n) < 0 || n <= 0)
		return log_error_errno(errno ? errno : ENOENT, "No free VT: %m");
	*ret = (unsigned)n;
	return 0;
}

static int on_release(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct vt *vt = userdata;

	(void)s;
	(void)si;
	log_debug("VT %u released", vt->num);
	vt->active = false;
	if (vt->cb.release)
		vt->cb.release(vt->userdata);
	if (ioctl(vt->fd, VT_RELDISP, 1) < 0)
		log_warning_errno(errno, "Failed to allow the switch away from VT %u: %m", vt->num);
	return 0;
}

static int on_acquire(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct vt *vt = userdata;

	(void)s;
	(void)si;
	log_debug("VT %u acquired", vt->num);
	if (ioctl(vt->fd, VT_RELDISP, VT_ACKACQ) < 0)
		log_debug_errno(errno, "VT_ACKACQ on VT %u: %m", vt->num);
	vt->active = true;
	if (vt->cb.acquire)
		vt->cb.acquire(vt->userdata);
	return 0;
}

static bool vt_query_active(struct vt *vt)
{
	struct vt_stat st;

	if (ioctl(vt->fd, VT_GETSTATE, &st) < 0)
		return false;
	return st.v_active == vt->num;
}

int vt_open(sd_event *event, unsigned num, bool activate, const struct vt_callbacks *cb,
	    void *userdata, struct vt **ret)
{
	struct vt *vt;
	struct vt_mode mode = {
	    .mode = VT_PROCESS,
	    .waitv = 0,
	};
	sigset_t mask;
	char path[32];
	int r;

	if (num == 0) {
		r = vt_find_free(&num);
		if (r < 0)
			return r;
		activate = true;
	}

	vt = xcalloc(1, sizeof(*vt));
	vt->num = num;
	vt->cb = *cb;
	vt->userdata = userdata;
	snprintf(path, sizeof(path), "/dev/tty%u", num);
	vt->fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (vt->fd < 0) {
		r = log_error_errno(errno, "Failed to open %s: %m", path);
		goto fail;
	}

	if (ioctl(vt->fd, KDGKBMODE, &vt->saved_kbmode) < 0) {
		r = log_error_errno(errno, "%s is not a virtual terminal: %m", path);
		goto fail;
	}
	if (vt->saved_kbmode == K_OFF) {
		/* A consoled killed with SIGKILL left its mode: the VT gets the
		 * kernel's default back (vt.default_utf8), not a dead keyboard. */
		char utf8[8] = "1";

		read_small_file("/sys/module/vt/parameters/default_utf8", utf8, sizeof(utf8));
		vt->saved_kbmode = utf8[0] == '0' ? K_XLATE : K_UNICODE;
		log_info("%s was left with the keyboard off; it gets %s back on exit", path,
			 vt->saved_kbmode == K_UNICODE ? "K_UNICODE" : "K_XLATE");
	}

	sigemptyset(&mask);
	sigaddset(&mask, VT_SIG_RELEASE);
	sigaddset(&mask, VT_SIG_ACQUIRE);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	r = sd_event_add_signal(event, &vt->release_source, VT_SIG_RELEASE, on_release, vt);
	if (r >= 0)
		r = sd_event_add_signal(event, &vt->acquire_source, VT_SIG_ACQUIRE, on_acquire, vt);
	if (r < 0) {
		log_error_errno(r, "Failed to watch VT signals: %m");
		goto fail;
	}

	mode.relsig = (short)VT_SIG_RELEASE;
	mode.acqsig = (short)VT_SIG_ACQUIRE;
	if (ioctl(vt->fd, VT_SETMODE, &mode) < 0) {
		r = log_error_errno(errno, "Failed to take VT %u (VT_SETMODE): %m", num);
		goto fail;
	}
	vt->mode_set = true;
	crash_register_vt(vt->fd, vt->saved_kbmode);

	if (ioctl(vt->fd, KDSETMODE, KD_GRAPHICS) < 0) {
		r = log_error_errno(errno, "Failed to put VT %u in graphics mode: %m", num);
		goto fail;
	}
	vt->graphics_set = true;
	if (ioctl(vt->fd, KDSKBMODE, K_OFF) < 0) {
		r = log_error_errno(errno, "Failed to turn off the kernel keyboard on VT %u: %m",
				    num);
		goto fail;
	}
	vt->kbmode_set = true;

	vt->active = vt_query_active(vt);
	if (activate && !vt->active) {
		/* The acquire signal tells us when the switch is done: a
		 * VT_PROCESS owner of the current VT may take its time. */
		if (ioctl(vt->fd, VT_ACTIVATE, (int)num) < 0)
			log_warning_errno(errno, "Failed to switch to VT %u: %m", num);
	}
	log_info("Running on VT %u (%s)", num, vt->active ? "active" : "in the background");
	*ret = vt;
	return 0;

fail:
	vt_free(vt);
	return r;
}

void vt_free(struct vt *vt)
{
	if (!vt)
		return;
	if (vt->fd >= 0) {
		/* The kernel's console comes back blank, not with text from
		 * before consoled (written while in graphics mode, so never
		 * drawn): what TTYVTDisallocate= did at exit, which
		 * consoled@.service no longer sets. */
		if (vt->graphics_set) {
			static const char clear[] = "\033[H\033[2J\033[3J";
			ssize_t n = write(vt->fd, clear, sizeof(clear) - 1);

			(void)n;
		}
		if (vt->graphics_set && ioctl(vt->fd, KDSETMODE, KD_TEXT) < 0)
			log_warning_errno(errno, "Failed to put VT %u back in text mode: %m",
					  vt->num);
		if (vt->mode_set) {
			struct vt_mode mode = {.mode = VT_AUTO};
			if (ioctl(vt->fd, VT_SETMODE, &mode) < 0)
				log_warning_errno(errno, "Failed to set VT %u to VT_AUTO: %m",
						  vt->num);
		}
		if (vt->kbmode_set && ioctl(vt->fd, KDSKBMODE, vt->saved_kbmode) < 0)
			log_warning_errno(errno, "Failed to restore the keyboard mode of VT %u: %m",
					  vt->num);
		crash_register_vt(-1, 0);
		close(vt->fd);
	}
	sd_event_source_unref(vt->release_source);
	sd_event_source_unref(vt->acquire_source);
	free(vt);
}

bool vt_is_active(const struct vt *vt)
{
	return vt->active;
}

unsigned vt_number(const struct vt *vt)
{
	return vt->num;
}

int vt_activate(struct vt *vt, unsigned target)
{
	if (target == vt->num)
		return 0;
	if (ioctl(vt->fd, VT_ACTIVATE, (int)target) < 0)
		return log_warning_errno(errno, "Failed to switch to VT %u: %m", target);
	return 0;
}
