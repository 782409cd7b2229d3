/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "vt"
#include <errno.h>
#include <fcntl.h>
#include <linux/kd.h>
#include <linux/vt.h>
#include <signal.h>
#include <stdio.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "vt.h"
#include "../util/crash.h"
#include "../util/log.h"
#include "../util/util.h"

/* SIGUSR1/2 stay free for the daemon's own use (statistics); real-time
 * signals are valid VT_PROCESS signals. */
#define VT_SIG_RELEASE (SIGRTMIN + 1)
#define VT_SIG_ACQUIRE (SIGRTMIN + 2)

/* After something touched the VT (an open or close of /dev/ttyN, a VT
 * switch) its mode is checked at once and again this long after, then once
 * more VT_RECHECK_LAST_USEC after that: an opener sets its mode after the
 * open that woke us. Without the watches (no inotify), the mode is polled
 * every VT_POLL_USEC instead. */
#define VT_RECHECK_USEC (50 * USEC_PER_MSEC)
#define VT_RECHECK_LAST_USEC USEC_PER_SEC
#define VT_POLL_USEC USEC_PER_SEC
#define VT_ACTIVE_PATH "/sys/class/tty/tty0/active"

struct vt {
	int fd;
	unsigned num;
	char name[64]; /* vt_name() */
	bool active;
	/* Another program has set its own VT_PROCESS mode on the VT. */
	bool grabbed;
	int saved_kbmode;
	bool graphics_set, mode_set, kbmode_set;
	sd_event_source *release_source, *acquire_source, *poll_source;
	/* inotify on /dev/ttyN (opens and closes) and the kernel's VT switch
	 * notification (POLLPRI on tty0's `active`): -1 when not watched,
	 * then poll_source polls. */
	int watch_fd, active_fd;
	sd_event_source *watch_source, *active_source;
	/* follow-up checks left after the last watch event */
	unsigned rechecks_left;
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

static bool vt_check(struct vt *vt);

static int on_release(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct vt *vt = userdata;

	(void)s;
	(void)si;
	/* Sent before another program took the VT: the kernel asks that one
	 * now, and an acknowledgement from us would answer for it. */
	if (!vt_check(vt))
		return 0;
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
	if (!vt_check(vt))
		return 0;
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

static bool vt_mode_is_ours(const struct vt_mode *mode)
{
	return mode->mode == VT_PROCESS && mode->relsig == (short)VT_SIG_RELEASE &&
	       mode->acqsig == (short)VT_SIG_ACQUIRE;
}

/* VT_PROCESS with signals that are not consoled's: logind for a compositor
 * (SIGRTMIN, SIGRTMIN + 1), an X server (SIGUSR1), ... */
static bool vt_mode_is_foreign(const struct vt_mode *mode)
{
	return mode->mode == VT_PROCESS && !vt_mode_is_ours(mode);
}

/* VT_PROCESS with our signals (the kernel sends them to the process that
 * set the mode: us), KD_GRAPHICS, K_OFF. */
static int vt_take(struct vt *vt)
{
	struct vt_mode mode = {
	    .mode = VT_PROCESS,
	    .relsig = (short)VT_SIG_RELEASE,
	    .acqsig = (short)VT_SIG_ACQUIRE,
	};

	if (ioctl(vt->fd, VT_SETMODE, &mode) < 0)
		return log_error_errno(errno, "Failed to take VT %u (VT_SETMODE): %m", vt->num);
	vt->mode_set = true;
	crash_register_vt(vt->fd, vt->saved_kbmode);

	if (ioctl(vt->fd, KDSETMODE, KD_GRAPHICS) < 0)
		return log_error_errno(errno, "Failed to put VT %u in graphics mode: %m", vt->num);
	vt->graphics_set = true;
	if (ioctl(vt->fd, KDSKBMODE, K_OFF) < 0)
		return log_error_errno(errno, "Failed to turn off the kernel keyboard on VT %u: %m",
				       vt->num);
	vt->kbmode_set = true;
	return 0;
}

static void vt_on_grabbed(struct vt *vt, const struct vt_mode *mode)
{
	vt->grabbed = true;
	/* A crash must not reset a mode that is not ours. */
	crash_register_vt(-1, 0);
	log_info("VT %u was taken by another program (VT_PROCESS, signals %d/%d): not drawing, "
		 "keys dropped until it hands the VT back",
		 vt->num, mode->relsig, mode->acqsig);
	if (vt->active) {
		vt->active = false;
		if (vt->cb.release)
			vt->cb.release(vt->userdata);
	}
}

/* The mode is VT_AUTO: handed back (logind's restore: KD_TEXT, the keyboard
 * mode, VT_AUTO), or reset by the kernel (the VT_PROCESS owner was gone at a
 * switch) or by someone else; or consoled's own mode again, set by another
 * process (the kernel then signals that one). Either way the VT is taken
 * anew. fbcon has drawn its text and may have set its mode meanwhile: the
 * acquire callback puts consoled's back and redraws everything. */
static void vt_take_back(struct vt *vt)
{
	bool was_grabbed = vt->grabbed;

	if (vt->active) {
		/* taken and handed back between two checks: the screen was
		 * not ours meanwhile */
		vt->active = false;
		if (vt->cb.release)
			vt->cb.release(vt->userdata);
	}
	if (vt_take(vt) < 0) {
		/* again at the next check (a watch event, a frame, a key) */
		vt->grabbed = true;
		crash_register_vt(-1, 0);
		return;
	}
	vt->grabbed = false;
	/* keys the kernel's keyboard queued on the VT before K_OFF */
	tcflush(vt->fd, TCIFLUSH);
	vt->active = vt_query_active(vt);
	log_info("VT %u %s: taking it again (%s)", vt->num,
		 was_grabbed ? "was handed back" : "was reset to VT_AUTO by another program",
		 vt->active ? "in front" : "in the background");
	if (vt->active && vt->cb.acquire)
		vt->cb.acquire(vt->userdata);
}

/* Returns true if the VT is in consoled's mode and nothing changed; else
 * acts on what did. */
static bool vt_check(struct vt *vt)
{
	struct vt_mode mode;

	if (ioctl(vt->fd, VT_GETMODE, &mode) < 0) {
		log_debug_errno(errno, "VT_GETMODE on VT %u: %m", vt->num);
		return !vt->grabbed;
	}
	if (vt_mode_is_foreign(&mode)) {
		if (!vt->grabbed)
			vt_on_grabbed(vt, &mode);
		return false;
	}
	if (vt_mode_is_ours(&mode) && !vt->grabbed)
		return true;
	vt_take_back(vt);
	return false;
}

void vt_poll(struct vt *vt)
{
	if (vt->fd < 0)
		return; /* no kernel VT: vt_set_active() tells */
	(void)vt_check(vt);
}

static int on_poll(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct vt *vt = userdata;

	(void)usec;
	vt_poll(vt);
	if (vt->watch_fd < 0) {
		sd_event_source_set_time_relative(s, VT_POLL_USEC);
		sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	} else if (vt->rechecks_left > 0) {
		vt->rechecks_left--;
		sd_event_source_set_time_relative(s, VT_RECHECK_LAST_USEC);
		sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	}
	return 0;
}

/* Something touched the VT: its mode now, and twice more shortly. */
static void vt_touched(struct vt *vt)
{
	vt_poll(vt);
	vt->rechecks_left = 1;
	sd_event_source_set_time_relative(vt->poll_source, VT_RECHECK_USEC);
	sd_event_source_set_enabled(vt->poll_source, SD_EVENT_ONESHOT);
}

static int on_watch(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	(void)s;
	(void)revents;
	inotify_drain(fd);
	vt_touched(userdata);
	return 0;
}

static int on_active(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	char buf[16];

	(void)s;
	(void)revents;
	/* sysfs re-arms POLLPRI once the attribute is read again */
	if (lseek(fd, 0, SEEK_SET) == 0 && read(fd, buf, sizeof(buf)) < 0)
		log_debug_errno(errno, "Failed to read " VT_ACTIVE_PATH ": %m");
	vt_touched(userdata);
	return 0;
}

static void vt_unwatch(struct vt *vt)
{
	vt->watch_source = sd_event_source_unref(vt->watch_source);
	vt->active_source = sd_event_source_unref(vt->active_source);
	if (vt->watch_fd >= 0)
		close(vt->watch_fd);
	if (vt->active_fd >= 0)
		close(vt->active_fd);
	vt->watch_fd = vt->active_fd = -1;
}

/* What may change the VT's mode behind consoled's back: a program opening
 * /dev/ttyN (logind's TakeControl for a compositor opens it, then sets its
 * mode), closing it (logind's restore closes its fd after VT_AUTO), and a
 * VT switch (the kernel resets VT_PROCESS to VT_AUTO when the mode's owner
 * is gone). Every frame and key asks too (vt_poll()), so nothing is polled
 * while nobody touches the VT. Returns false if the watches cannot be set
 * up (the caller polls then). */
static bool vt_watch(sd_event *event, struct vt *vt, const char *path)
{
	char buf[16];
	int r;

	vt->watch_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (vt->watch_fd < 0 ||
	    inotify_add_watch(vt->watch_fd, path, IN_OPEN | IN_CLOSE_WRITE | IN_CLOSE_NOWRITE) <
		0) {
		log_warning_errno(errno, "Failed to watch %s, polling its mode every second: %m",
				  path);
		goto fail;
	}
	r = sd_event_add_io(event, &vt->watch_source, vt->watch_fd, EPOLLIN, on_watch, vt);
	if (r < 0) {
		log_warning_errno(r, "Failed to watch %s, polling its mode every second: %m", path);
		goto fail;
	}
	vt->active_fd = open(VT_ACTIVE_PATH, O_RDONLY | O_CLOEXEC);
	if (vt->active_fd >= 0 && read(vt->active_fd, buf, sizeof(buf)) >= 0 &&
	    sd_event_add_io(event, &vt->active_source, vt->active_fd, EPOLLPRI, on_active, vt) >= 0)
		return true;
	log_warning_errno(errno, "Failed to watch " VT_ACTIVE_PATH
				 ", polling the VT's mode every second: %m");
fail:
	vt_unwatch(vt);
	return false;
}

int vt_open(sd_event *event, unsigned num, bool activate, const struct vt_callbacks *cb,
	    void *userdata, struct vt **ret)
{
	struct vt *vt;
	struct vt_mode mode;
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
	snprintf(vt->name, sizeof(vt->name), "tty%u", num);
	vt->cb = *cb;
	vt->userdata = userdata;
	vt->watch_fd = vt->active_fd = -1;
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

	/* Watched whether or not the VT is in front: a program may take it
	 * while another VT is shown, and then the acquire signal goes to it.
	 * The follow-ups after a watch event are felt by nobody: the default
	 * accuracy. */
	r = sd_event_add_time_relative(event, &vt->poll_source, CLOCK_MONOTONIC, VT_POLL_USEC, 0,
				       on_poll, vt);
	if (r < 0) {
		log_error_errno(r, "Failed to set up the VT poll timer: %m");
		goto fail;
	}
	if (vt_watch(event, vt, path))
		sd_event_source_set_enabled(vt->poll_source, SD_EVENT_OFF);

	if (ioctl(vt->fd, VT_GETMODE, &mode) == 0 && vt_mode_is_foreign(&mode)) {
		/* consoled restarted while a compositor runs in its session:
		 * the VT is taken once it is handed back. */
		vt->grabbed = true;
		log_info("VT %u is held by another program (VT_PROCESS, signals %d/%d): waiting "
			 "until it hands the VT back",
			 num, mode.relsig, mode.acqsig);
		*ret = vt;
		return 0;
	}
	r = vt_take(vt);
	if (r < 0)
		goto fail;

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
	struct vt_mode cur;

	if (!vt)
		return;
	vt_unwatch(vt);
	/* Asked now, not at the last poll: a compositor may have taken the VT
	 * within the last second. Its mode, graphics mode and keyboard stay;
	 * its logind puts the text mode back when it is done. */
	if (vt->fd >= 0 && ioctl(vt->fd, VT_GETMODE, &cur) == 0 && vt_mode_is_foreign(&cur)) {
		log_info("VT %u is held by another program: leaving its mode alone", vt->num);
		crash_register_vt(-1, 0);
		vt->graphics_set = vt->mode_set = vt->kbmode_set = false;
	}
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
	sd_event_source_unref(vt->poll_source);
	free(vt);
}

int vt_new_none(const struct vt_callbacks *cb, void *userdata, const char *name, struct vt **ret)
{
	struct vt *vt = xcalloc(1, sizeof(*vt));

	vt->fd = -1;
	snprintf(vt->name, sizeof(vt->name), "%s", name);
	vt->cb = *cb;
	vt->userdata = userdata;
	*ret = vt;
	return 0;
}

void vt_set_active(struct vt *vt, bool active)
{
	if (vt->fd >= 0 || vt->active == active)
		return;
	vt->active = active;
	if (active)
		vt->cb.acquire(vt->userdata);
	else
		vt->cb.release(vt->userdata);
}

bool vt_is_active(const struct vt *vt)
{
	return vt->active;
}

unsigned vt_number(const struct vt *vt)
{
	return vt->num;
}

const char *vt_name(const struct vt *vt)
{
	return vt->name;
}

int vt_activate(struct vt *vt, unsigned target)
{
	if (target == vt->num || vt->fd < 0)
		return 0;
	if (ioctl(vt->fd, VT_ACTIVATE, (int)target) < 0)
		return log_warning_errno(errno, "Failed to switch to VT %u: %m", target);
	return 0;
}

int vt_tone(struct vt *vt, unsigned hz, unsigned ms)
{
	/* KDMKTONE: the period in PIT ticks (1193182 Hz) in the low 16 bits,
	 * the duration in ms in the high 16; 0 silences. The kernel rings
	 * every EV_SND device its keyboard handler is attached to. */
	unsigned long period = hz ? 1193182ul / hz : 0;

	if (vt->fd < 0)
		return -ENODEV;
	if (period > 0xffff || ms > 0xffff)
		return -EINVAL;
	if (ioctl(vt->fd, KDMKTONE, (unsigned long)ms << 16 | period) < 0)
		return -errno;
	return 0;
}
