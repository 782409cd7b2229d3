/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "fbwait"
#include <errno.h>
#include <libudev.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>

#include "fbseat.h"
#include "fbwait.h"
#include "udevseat.h"
#include "../util/log.h"
#include "../util/util.h"

/* A node announced by its uevent that devtmpfs has not made yet is looked
 * for again this often, this many times (a second in all). */
#define NODE_RETRY_USEC (50 * USEC_PER_MSEC)
#define NODE_RETRY_MAX 20

struct fbwait {
	const char *path; /* --fbdev, or NULL: the first framebuffer */
	const char *seat; /* without path: the first on this seat (NULL: any) */
	sd_event *event;
	struct udev *udev;
	struct udev_monitor *monitor;
	struct udev_queue *queue; /* with udevd only */
	sd_event_source *monitor_source;
	sd_event_source *queue_source;
	sd_event_source *settle_source;
	sd_event_source *deadline_source;
	char *found;
	bool coldplug_done;
};

bool fbwait_sysname(const char *sysname, unsigned *ret_n)
{
	unsigned n;

	if (!sysname || strncmp(sysname, "fb", 2) != 0 || parse_uint(sysname + 2, 0, 1000, &n) < 0)
		return false;
	if (ret_n)
		*ret_n = n;
	return true;
}

char *fbwait_first_node(struct udev *udev)
{
	return fbwait_first_node_on(udev, NULL);
}

char *fbwait_first_node_on(struct udev *udev, const char *seat)
{
	struct fbseat_entry *e;
	size_t n = fbseat_list(udev, &e);
	const char *best = NULL;
	unsigned best_n = ~0u;
	char *ret;

	for (size_t i = 0; i < n; i++)
		if (e[i].n < best_n && (!seat || strcmp(e[i].seat, seat) == 0)) {
			best = e[i].node;
			best_n = e[i].n;
		}
	ret = best ? xstrdup(best) : NULL;
	fbseat_list_free(e, n);
	return ret;
}

/* The node to open: path if it exists; without a path, that of the first
 * framebuffer (on seat, if given), as fbdev_find_default() (which logs an
 * error when there is none). NULL: none yet. */
static char *fbwait_lookup(struct udev *udev, const char *path, const char *seat)
{
	if (path)
		return access(path, F_OK) == 0 ? xstrdup(path) : NULL;
	return fbwait_first_node_on(udev, seat);
}

/* Found: the wait ends. announced is the node of a framebuffer that an
 * "add" event just announced (it may not exist yet: fbwait_open_node()
 * gives it time). */
static void fbwait_check(struct fbwait *w, const char *announced)
{
	char *node = fbwait_lookup(w->udev, w->path, w->seat);

	if (!node && announced && (!w->path || strcmp(announced, w->path) == 0))
		node = xstrdup(announced);
	if (!node)
		return;
	w->found = node;
	sd_event_exit(w->event, 0);
}

static int fbwait_on_monitor(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct fbwait *w = userdata;
	struct udev_device *dev;
	const char *action, *node;

	(void)s;
	(void)fd;
	(void)revents;
	dev = udev_monitor_receive_device(w->monitor);
	if (!dev)
		return 0;
	action = udev_device_get_action(dev);
	node = udev_device_get_devnode(dev);
	log_debug("uevent: %s %s (%s)", action ? action : "?", udev_device_get_sysname(dev),
		  node ? node : "no node");
	if (!action || strcmp(action, "add") != 0 ||
	    !fbwait_sysname(udev_device_get_sysname(dev), NULL) ||
	    (w->seat && !udevseat_is(dev, w->seat)))
		node = NULL;
	fbwait_check(w, node);
	udev_device_unref(dev);
	return 0;
}

/* udev's queue emptied (or something else went from /run/udev): coldplug
 * counts as done FBWAIT_SETTLE_USEC from now if it stays empty. */
static void fbwait_queue_changed(struct fbwait *w)
{
	if (udev_queue_get_queue_is_empty(w->queue) > 0) {
		sd_event_source_set_time(w->settle_source, now_usec() + FBWAIT_SETTLE_USEC);
		sd_event_source_set_enabled(w->settle_source, SD_EVENT_ONESHOT);
	} else
		/* The file's removal (inotify) arms the timer again. */
		sd_event_source_set_enabled(w->settle_source, SD_EVENT_OFF);
}

static int fbwait_on_queue(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct fbwait *w = userdata;

	(void)s;
	(void)fd;
	(void)revents;
	udev_queue_flush(w->queue);
	fbwait_queue_changed(w);
	return 0;
}

static int fbwait_on_settle(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct fbwait *w = userdata;

	(void)s;
	(void)usec;
	/* Not empty: events came meanwhile; their end arms the timer again. */
	if (udev_queue_get_queue_is_empty(w->queue) <= 0)
		return 0;
	fbwait_check(w, NULL);
	if (!w->found) {
		w->coldplug_done = true;
		sd_event_exit(w->event, 0);
	}
	return 0;
}

static int fbwait_on_deadline(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct fbwait *w = userdata;

	(void)s;
	(void)usec;
	fbwait_check(w, NULL);
	sd_event_exit(w->event, 0);
	return 0;
}

static void fbwait_free(struct fbwait *w)
{
	sd_event_source_unref(w->monitor_source);
	sd_event_source_unref(w->queue_source);
	sd_event_source_unref(w->settle_source);
	sd_event_source_unref(w->deadline_source);
	udev_monitor_unref(w->monitor);
	udev_queue_unref(w->queue);
	udev_unref(w->udev);
	sd_event_unref(w->event);
	free(w->found);
}

/* The monitor, enabled before the enumeration that follows it; with udevd
 * the watch of its queue. Returns 0 or a negative errno (logged). */
static int fbwait_setup(struct fbwait *w, unsigned wait_sec)
{
	/* The "udev" events come once udevd has made the node and applied its
	 * rules; without udevd there are only the kernel's. */
	bool udevd = access("/run/udev/control", F_OK) == 0;
	int r, fd;

	r = sd_event_new(&w->event);
	if (r < 0)
		return log_error_errno(r, "Failed to create an event loop: %m");
	/* Under systemd with WatchdogSec=: the watchdog is pinged meanwhile. */
	(void)sd_event_set_watchdog(w->event, true);
	w->monitor = udev_monitor_new_from_netlink(w->udev, udevd ? "udev" : "kernel");
	if (!w->monitor)
		return log_error_errno(errno ? errno : ENOMEM,
				       "Failed to create a udev monitor: %m");
	r = udev_monitor_filter_add_match_subsystem_devtype(w->monitor, "graphics", NULL);
	if (r >= 0)
		r = udev_monitor_enable_receiving(w->monitor);
	if (r < 0)
		return log_error_errno(r, "Failed to watch the graphics subsystem: %m");
	r = sd_event_add_io(w->event, &w->monitor_source, udev_monitor_get_fd(w->monitor), EPOLLIN,
			    fbwait_on_monitor, w);
	if (r < 0)
		return log_error_errno(r, "Failed to watch the udev monitor: %m");
	r = sd_event_add_time(w->event, &w->deadline_source, CLOCK_MONOTONIC,
			      now_usec() + (uint64_t)wait_sec * USEC_PER_SEC, 10 * USEC_PER_MSEC,
			      fbwait_on_deadline, w);
	if (r < 0)
		return log_error_errno(r, "Failed to create the wait's timer: %m");
	if (!udevd)
		return 0;

	w->queue = udev_queue_new(w->udev);
	fd = w->queue ? udev_queue_get_fd(w->queue) : -ENOMEM;
	if (fd < 0) {
		/* The wait is bounded all the same. */
		log_warning_errno(fd, "Cannot watch udev's queue, waiting the whole time: %m");
		w->queue = udev_queue_unref(w->queue);
		return 0;
	}
	r = sd_event_add_io(w->event, &w->queue_source, fd, EPOLLIN, fbwait_on_queue, w);
	if (r >= 0)
		r = sd_event_add_time(w->event, &w->settle_source, CLOCK_MONOTONIC, 0,
				      10 * USEC_PER_MSEC, fbwait_on_settle, w);
	if (r < 0) {
		log_warning_errno(r, "Cannot watch udev's queue, waiting the whole time: %m");
		w->queue_source = sd_event_source_unref(w->queue_source);
		w->queue = udev_queue_unref(w->queue);
		return 0;
	}
	fbwait_queue_changed(w);
	return 0;
}

/* devtmpfs may make the node a moment after the uevent. */
static int fbwait_open_node(const char *node, const struct palette *palette, struct fbdev **ret)
{
	for (unsigned i = 0; i < NODE_RETRY_MAX && access(node, F_OK) < 0 && errno == ENOENT; i++)
		(void)nanosleep(&(struct timespec){.tv_nsec = NODE_RETRY_USEC * NSEC_PER_USEC},
				NULL);
	return fbdev_open(node, palette, ret);
}

int fbwait_open(const char *path, const char *seat, unsigned wait_sec,
		const struct palette *palette, struct fbdev **ret)
{
	struct fbwait w = {.path = path, .seat = path ? NULL : seat};
	_cleanup_(freep) char *node = NULL;
	char on_seat[96];
	const char *what = path ? path : "any /dev/fbN";
	uint64_t start = now_usec();
	int r;

	if (w.seat) {
		snprintf(on_seat, sizeof(on_seat), "any /dev/fbN on %s", w.seat);
		what = on_seat;
	}
	w.udev = udev_new();
	if (w.udev)
		node = fbwait_lookup(w.udev, path, w.seat);
	if (node || wait_sec == 0 || !w.udev)
		goto open;
	if (fbwait_setup(&w, wait_sec) < 0) {
		log_warning("Not waiting for a framebuffer");
		goto open;
	}
	/* One registered before the monitor listened has no event to come. */
	node = fbwait_lookup(w.udev, path, w.seat);
	if (node)
		goto open;

	log_notice("Waiting up to %u s for a framebuffer (%s)%s", wait_sec, what,
		   w.queue ? ", less if udev's coldplug ends without one"
			   : "; without udevd nothing ends the wait earlier");
	sd_notifyf(0, "STATUS=Waiting up to %u s for a framebuffer (%s)", wait_sec, what);
	r = sd_event_loop(w.event);
	if (r < 0)
		log_error_errno(r, "The wait for a framebuffer failed: %m");
	node = w.found;
	w.found = NULL;
	if (node)
		log_info("%s appeared after %.1f s", node,
			 (double)(now_usec() - start) / USEC_PER_SEC);
	else if (w.coldplug_done)
		log_error("No framebuffer (%s) appeared and udev's coldplug is done (udev's queue "
			  "has been empty for %u s): not waiting any longer",
			  what, (unsigned)(FBWAIT_SETTLE_USEC / USEC_PER_SEC));
	else
		log_error("No framebuffer (%s) appeared within %u s", what, wait_sec);
	if (!node)
		sd_notifyf(0, "STATUS=No framebuffer (%s)", what);

open:
	fbwait_free(&w);
	if (node)
		return fbwait_open_node(node, palette, ret);
	/* None: what a start without waiting says and returns (a framebuffer
	 * that came just now is taken all the same). */
	if (path)
		return fbdev_open(path, palette, ret);
	if (w.seat) {
		/* never another seat's */
		log_error("No framebuffer on %s", w.seat);
		return -ENODEV;
	}
	r = fbdev_find_default(&node);
	if (r < 0)
		return r;
	return fbwait_open_node(node, palette, ret);
}
