/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "fbwatch"
#include <errno.h>
#include <fcntl.h>
#include <libudev.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fbwait.h"
#include "fbwatch.h"
#include "udevseat.h"
#include "../util/log.h"
#include "../util/util.h"

/* After a loss or an `add` whose device cannot be opened yet, the search is
 * repeated this often, this far apart (a node exists a moment before its
 * framebuffer is registered); after that only udev events start it. */
#define FBWATCH_RETRIES 10
#define FBWATCH_RETRY_USEC (200 * USEC_PER_MSEC)

struct fbwatch {
	sd_event *event;
	struct fbdev *fb; /* the caller's; NULL while there is none */
	char *path;	  /* --fbdev, or NULL: the first framebuffer */
	char *seat;	  /* only a framebuffer on this seat (udevseat.h); NULL: any */
	const struct palette *palette;
	struct fbwatch_callbacks cb;
	void *userdata;

	struct udev *udev;
	struct udev_monitor *monitor;
	sd_event_source *monitor_source;
	sd_event_source *retry_source;
	unsigned retries_left;
	bool wait_logged; /* "waiting for a framebuffer" said since the loss */
	ino_t sys_ino;	  /* fb's sysfs device when it was taken (fbwatch_sysfs_ino()) */
};

/* The sysfs device that fd's minor names now (/sys/dev/char/M:m), by its
 * kernfs inode: a framebuffer registered again at the same minor gets a new
 * device at the same path, with another inode. 0 when there is none. */
static ino_t fbwatch_sysfs_ino(int fd)
{
	char sys[64];
	struct stat st;

	if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode))
		return 0;
	snprintf(sys, sizeof(sys), "/sys/dev/char/%u:%u", major(st.st_rdev), minor(st.st_rdev));
	if (stat(sys, &st) < 0)
		return 0;
	return st.st_ino;
}

/* Whether fd is a framebuffer still registered: its sysfs device is there,
 * the one it was taken on (ino, when known: not a successor's at the same
 * path), and its ioctls work. The ioctl identifies the device too: the kernel
 * answers an fd's ioctls with ENODEV as soon as its minor's slot holds
 * another framebuffer or none (file_fb_info() compares the fd's fb_info with
 * the slot's), so a successor registered at the same minor, with a new sysfs
 * device at the same path, is never taken for the device fd was opened on.
 * The path covers the time before that: the kernel removes the sysfs
 * device (and sends udev's `remove`) before it frees the slot, and ioctls and
 * open() work until then, so a node opened right after the event can be the
 * dying framebuffer, which nothing would report again. Checked after
 * opening, so an fd that passes was registered when it was opened (a later
 * loss sends its own event). */
static bool fbwatch_registered(int fd, ino_t ino)
{
	struct fb_fix_screeninfo fix;
	ino_t now = fbwatch_sysfs_ino(fd);

	if (!now || (ino && now != ino))
		return false;
	return ioctl(fd, FBIOGET_FSCREENINFO, &fix) == 0;
}

bool fbwatch_probe(const char *path)
{
	struct fb_var_screeninfo var;
	int fd, r;

	/* The node may be there before its framebuffer is registered
	 * (ENODEV), or gone with the old one (ENOENT). */
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 && (errno == ENOENT || errno == ENODEV || errno == ENXIO))
		return false;
	if (fd >= 0) {
		r = ioctl(fd, FBIOGET_VSCREENINFO, &var) < 0 ? -errno : 0;
		if (r == 0 && !fbwatch_registered(fd, 0))
			r = -ENODEV;
		close(fd);
		if (r == -ENODEV)
			return false;
	}
	return true;
}

/* 1: a successor was taken; 0: none there (yet); a negative errno: there is
 * one, but it cannot be used (fbdev_open() or the caller said why). */
static int fbwatch_try(struct fbwatch *w)
{
	_cleanup_(freep) char *path =
	    w->path ? xstrdup(w->path) : fbwait_first_node_on(w->udev, w->seat);
	struct fbdev *fb;
	ino_t ino;
	int r;

	/* a quiet look first */
	if (!path || !fbwatch_probe(path))
		return 0;
	if (w->seat && !udevseat_node_is(w->udev, path, w->seat)) {
		log_debug("%s is not on %s: not taken", path, w->seat);
		return 0;
	}
	r = fbdev_open(path, w->palette, &fb);
	if (r < 0)
		return r;
	ino = fbwatch_sysfs_ino(fb->fd);
	if (!fbwatch_registered(fb->fd, ino)) {
		log_debug("%s went away while it was opened", path);
		fbdev_free(fb);
		return 0;
	}
	r = w->cb.found(fb, w->userdata);
	if (r < 0) {
		log_warning_errno(r, "Cannot use %s (%s), waiting for another framebuffer: %m",
				  path, fb->fix.id);
		fbdev_free(fb);
		return r;
	}
	w->fb = fb;
	w->sys_ino = ino;
	log_info("Took over %s (%s): %ux%u at %u bpp", fb->path, fb->fix.id, fb->var.xres,
		 fb->var.yres, fb->var.bits_per_pixel);
	return 1;
}

static int fbwatch_on_retry(sd_event_source *s, uint64_t usec, void *userdata);

static void fbwatch_search(struct fbwatch *w)
{
	int r;

	if (w->fb)
		return;
	r = fbwatch_try(w);
	if (r > 0) {
		w->retries_left = 0;
		w->wait_logged = false;
		return;
	}
	if (r == 0 && w->retries_left > 0 && w->retry_source) {
		w->retries_left--;
		sd_event_source_set_time(w->retry_source, now_usec() + FBWATCH_RETRY_USEC);
		sd_event_source_set_enabled(w->retry_source, SD_EVENT_ONESHOT);
	}
	if (!w->wait_logged) {
		log_warning("No framebuffer to draw on (%s): the terminal and the session go on "
			    "unseen until one is registered",
			    w->path ? w->path : "none found");
		w->wait_logged = true;
	}
}

static int fbwatch_on_retry(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)s;
	(void)usec;
	fbwatch_search(userdata);
	return 0;
}

/* The device is not ours any more (why: logged): gone(), then a
 * successor is looked for, retries times more. */
static void fbwatch_let_go(struct fbwatch *w, const char *why, bool usable, unsigned retries)
{
	log_warning("%s (%s) %s: letting it go; the terminal and the session go on", w->fb->path,
		    w->fb->fix.id, why);
	w->fb = NULL;
	w->wait_logged = false;
	w->cb.gone(usable, w->userdata);
	w->retries_left = retries;
	fbwatch_search(w);
}

void fbwatch_lost(struct fbwatch *w)
{
	if (!w || !w->fb)
		return;
	/* Its successor (a handover) may be registering right now. */
	fbwatch_let_go(w, "was unregistered by its driver", false, FBWATCH_RETRIES);
}

/* A `change` uevent of d: loginctl attach moved it (or its card) to another
 * seat than w's? Then it is never drawn on again. */
static bool fbwatch_moved_away(struct fbwatch *w, struct udev_device *d, char *why, size_t size)
{
	struct stat st;

	if (!w->seat || !w->fb || fstat(w->fb->fd, &st) < 0 ||
	    udev_device_get_devnum(d) != st.st_rdev || udevseat_is(d, w->seat))
		return false;
	snprintf(why, size, "is on %s now (udev's ID_SEAT), not %s", udevseat_of(d), w->seat);
	return true;
}

static int fbwatch_on_monitor(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct fbwatch *w = userdata;
	struct udev_device *dev;
	struct fb_var_screeninfo cur;
	const char *action;
	char why[128];
	bool add, away;

	(void)s;
	(void)fd;
	(void)revents;
	dev = udev_monitor_receive_device(w->monitor);
	if (!dev)
		return 0;
	action = udev_device_get_action(dev);
	/* an `add`, or a `change` that may have brought it onto our seat */
	add = action && (strcmp(action, "add") == 0 || strcmp(action, "change") == 0);
	if (!fbwait_sysname(udev_device_get_sysname(dev), NULL) || !action) {
		udev_device_unref(dev);
		return 0;
	}
	log_debug("udev: %s %s", action, udev_device_get_sysname(dev));
	away = strcmp(action, "change") == 0 && fbwatch_moved_away(w, dev, why, sizeof(why));
	udev_device_unref(dev);
	if (away) {
		/* the other seat's consoled or compositor has it now */
		fbwatch_let_go(w, why, true, 0);
		return 0;
	}
	/* Any framebuffer coming or going: is ours still there? (A remove
	 * may also be an old one's, seen after ours replaced it.) */
	if (w->fb) {
		/* The ioctls fail once the slot is freed (or holds a
		 * successor); between the `remove` and that, its sysfs device
		 * being gone says it (bochs-drm's unbind), and a device at the
		 * same path that is not the one it was taken on says a
		 * successor came (also where a driver's fd answered ioctls
		 * after its unbind). */
		if (fbdev_poll(w->fb, &cur) == -ENODEV ||
		    !fbwatch_registered(w->fb->fd, w->sys_ino))
			fbwatch_lost(w);
	} else if (add) {
		w->retries_left = FBWATCH_RETRIES;
		fbwatch_search(w);
	}
	return 0;
}

int fbwatch_monitor_new(sd_event *event, struct udev *udev, sd_event_io_handler_t handler,
			void *userdata, struct udev_monitor **ret, sd_event_source **ret_source)
{
	/* Without udevd (an initramfs, a container) only the kernel's
	 * uevents arrive. */
	struct udev_monitor *mon = udev_monitor_new_from_netlink(
	    udev, access("/run/udev/control", F_OK) == 0 ? "udev" : "kernel");
	int r = mon ? 0 : -ENOMEM;

	if (r >= 0)
		r = udev_monitor_filter_add_match_subsystem_devtype(mon, "graphics", NULL);
	if (r >= 0)
		r = udev_monitor_enable_receiving(mon);
	if (r >= 0)
		r = sd_event_add_io(event, ret_source, udev_monitor_get_fd(mon), EPOLLIN, handler,
				    userdata);
	if (r < 0) {
		udev_monitor_unref(mon);
		return r;
	}
	*ret = mon;
	return 0;
}

int fbwatch_new(sd_event *event, struct fbdev *fb, const char *path, const char *seat,
		const struct palette *palette, const struct fbwatch_callbacks *cb, void *userdata,
		struct fbwatch **ret)
{
	struct fbwatch *w = xcalloc(1, sizeof(*w));
	int r;

	w->event = sd_event_ref(event);
	w->fb = fb;
	w->sys_ino = fb ? fbwatch_sysfs_ino(fb->fd) : 0;
	w->path = path ? xstrdup(path) : NULL;
	w->seat = seat ? xstrdup(seat) : NULL;
	w->palette = palette;
	w->cb = *cb;
	w->userdata = userdata;

	r = sd_event_add_time(event, &w->retry_source, CLOCK_MONOTONIC, 0, 10 * USEC_PER_MSEC,
			      fbwatch_on_retry, w);
	if (r < 0) {
		fbwatch_free(w);
		return log_error_errno(r, "Failed to create the framebuffer retry timer: %m");
	}
	sd_event_source_set_enabled(w->retry_source, SD_EVENT_OFF);

	w->udev = udev_new();
	if (!w->udev) {
		fbwatch_free(w);
		return log_error_errno(ENOMEM, "Failed to create a udev context: %m");
	}
	if (fbwatch_monitor_new(event, w->udev, fbwatch_on_monitor, w, &w->monitor,
				&w->monitor_source) < 0)
		log_warning("Failed to watch the graphics subsystem: a framebuffer that replaces "
			    "a lost one is not seen");
	*ret = w;
	return 0;
}

void fbwatch_free(struct fbwatch *w)
{
	if (!w)
		return;
	sd_event_source_unref(w->monitor_source);
	sd_event_source_unref(w->retry_source);
	udev_monitor_unref(w->monitor);
	udev_unref(w->udev);
	sd_event_unref(w->event);
	free(w->path);
	free(w->seat);
	free(w);
}
