/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "fbseat"
#include "fbseat.h"

#include <errno.h>
#include <libudev.h>
#include <stdlib.h>
#include <string.h>

#include "fbwait.h"
#include "fbwatch.h"
#include "udevseat.h"
#include "../util/log.h"
#include "../util/util.h"

/* A node announced before its framebuffer is registered: looked for again
 * this often, this far apart (as fbwatch.c's successor). */
#define FBSEAT_RETRIES 10
#define FBSEAT_RETRY_USEC (200 * USEC_PER_MSEC)
/* The nodes whose framebuffer the caller could not use, remembered. */
#define FBSEAT_REFUSED_MAX 8

struct fbseat {
	char *seat;
	unsigned max;
	struct fbseat_callbacks cb;
	void *userdata;

	struct udev *udev;
	struct udev_monitor *monitor;
	sd_event_source *monitor_source;
	sd_event_source *retry_source;
	unsigned retries_left;
	char *refused[FBSEAT_REFUSED_MAX];
	unsigned n_refused;
};

static int fbseat_entry_cmp(const void *a, const void *b)
{
	const struct fbseat_entry *x = a, *y = b;

	return x->n < y->n ? -1 : x->n > y->n;
}

void fbseat_choose(struct fbseat_entry *e, size_t n, const char *seat, const char *const *used,
		   size_t n_used, unsigned max)
{
	size_t screens = n_used;

	if (n)
		qsort(e, n, sizeof(*e), fbseat_entry_cmp);
	for (size_t i = 0; i < n; i++) {
		bool in_use = false;

		for (size_t k = 0; k < n_used && !in_use; k++)
			in_use = used[k] && strcmp(used[k], e[i].node) == 0;
		if (strcmp(e[i].seat, seat) != 0)
			e[i].verdict = FBSEAT_OTHER_SEAT;
		else if (in_use)
			e[i].verdict = FBSEAT_USED;
		else if (screens >= max)
			e[i].verdict = FBSEAT_FULL;
		else {
			e[i].verdict = FBSEAT_TAKE;
			screens++;
		}
	}
}

const char *fbseat_verdict_to_string(int verdict)
{
	switch (verdict) {
	case FBSEAT_TAKE:
		return "taken";
	case FBSEAT_OTHER_SEAT:
		return "another seat's";
	case FBSEAT_USED:
		return "a screen has it";
	case FBSEAT_FULL:
		return "no room for another screen";
	}
	return "?";
}

size_t fbseat_list(struct udev *udev, struct fbseat_entry **ret)
{
	struct udev_enumerate *e = udev_enumerate_new(udev);
	struct udev_list_entry *item;
	struct fbseat_entry *list = NULL;
	size_t n = 0;

	*ret = NULL;
	if (!e)
		return 0;
	udev_enumerate_add_match_subsystem(e, "graphics");
	(void)udev_enumerate_scan_devices(e);
	udev_list_entry_foreach (item, udev_enumerate_get_list_entry(e)) {
		struct udev_device *d =
		    udev_device_new_from_syspath(udev, udev_list_entry_get_name(item));
		const char *node;
		unsigned fbn;

		if (!d)
			continue;
		node = udev_device_get_devnode(d);
		if (node && fbwait_sysname(udev_device_get_sysname(d), &fbn)) {
			list = xrealloc(list, (n + 1) * sizeof(*list));
			list[n++] = (struct fbseat_entry){fbn, xstrdup(node),
							  xstrdup(udevseat_of(d)), FBSEAT_TAKE};
		}
		udev_device_unref(d);
	}
	udev_enumerate_unref(e);
	*ret = list;
	return n;
}

void fbseat_list_free(struct fbseat_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].node);
		free(e[i].seat);
	}
	free(e);
}

static bool fbseat_refused(struct fbseat *f, const char *node, bool forget)
{
	for (unsigned i = 0; i < f->n_refused; i++)
		if (strcmp(f->refused[i], node) == 0) {
			if (forget) {
				free(f->refused[i]);
				f->refused[i] = f->refused[--f->n_refused];
			}
			return true;
		}
	return false;
}

static void fbseat_refuse(struct fbseat *f, const char *node)
{
	if (f->n_refused == FBSEAT_REFUSED_MAX) {
		free(f->refused[0]);
		memmove(f->refused, f->refused + 1, --f->n_refused * sizeof(f->refused[0]));
	}
	f->refused[f->n_refused++] = xstrdup(node);
}

/* Every framebuffer of the seat that no screen has goes to the caller.
 * announced: the node a uevent named (NULL: none), added: by an `add`. */
static void fbseat_scan(struct fbseat *f, const char *announced, bool added)
{
	const char **used = xcalloc(f->max ? f->max : 1, sizeof(*used));
	size_t n_used = f->cb.used(used, f->max, f->userdata);
	struct fbseat_entry *e;
	size_t n = fbseat_list(f->udev, &e);
	bool again = false;

	/* a new device at a node that was refused: offered again */
	if (announced && added)
		(void)fbseat_refused(f, announced, true);
	fbseat_choose(e, n, f->seat, used, n_used, f->max);
	free(used);
	for (size_t i = 0; i < n; i++) {
		bool named = announced && strcmp(e[i].node, announced) == 0;

		if (named && e[i].verdict == FBSEAT_FULL)
			log_warning("%s came on %s: left out, %u screens at most", e[i].node,
				    f->seat, f->max);
		else if (named && e[i].verdict != FBSEAT_TAKE)
			log_debug("%s (%s): not taken, %s", e[i].node, e[i].seat,
				  fbseat_verdict_to_string(e[i].verdict));
		if (e[i].verdict != FBSEAT_TAKE || fbseat_refused(f, e[i].node, false))
			continue;
		if (!fbwatch_probe(e[i].node)) {
			again = true; /* registered in a moment */
			continue;
		}
		log_info("%s came on %s: a screen for it", e[i].node, f->seat);
		if (f->cb.added(e[i].node, f->userdata) < 0)
			fbseat_refuse(f, e[i].node);
	}
	fbseat_list_free(e, n);
	if (again && f->retries_left > 0) {
		f->retries_left--;
		sd_event_source_set_time(f->retry_source, now_usec() + FBSEAT_RETRY_USEC);
		sd_event_source_set_enabled(f->retry_source, SD_EVENT_ONESHOT);
	}
}

static int fbseat_on_retry(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)s;
	(void)usec;
	fbseat_scan(userdata, NULL, false);
	return 0;
}

static int fbseat_on_monitor(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct fbseat *f = userdata;
	struct udev_device *dev;
	const char *action, *node;

	(void)s;
	(void)fd;
	(void)revents;
	dev = udev_monitor_receive_device(f->monitor);
	if (!dev)
		return 0;
	action = udev_device_get_action(dev);
	node = udev_device_get_devnode(dev);
	/* a framebuffer registered, or moved onto a seat (loginctl attach) */
	if (action && node && fbwait_sysname(udev_device_get_sysname(dev), NULL) &&
	    (strcmp(action, "add") == 0 || strcmp(action, "change") == 0)) {
		log_debug("udev: %s %s (%s)", action, node, udevseat_of(dev));
		f->retries_left = FBSEAT_RETRIES;
		fbseat_scan(f, node, strcmp(action, "add") == 0);
	}
	udev_device_unref(dev);
	return 0;
}

int fbseat_new(sd_event *event, const char *seat, unsigned max, const struct fbseat_callbacks *cb,
	       void *userdata, struct fbseat **ret)
{
	struct fbseat *f = xcalloc(1, sizeof(*f));
	int r;

	f->seat = xstrdup(seat);
	f->max = max;
	f->cb = *cb;
	f->userdata = userdata;
	f->udev = udev_new();
	if (!f->udev) {
		fbseat_free(f);
		return log_error_errno(ENOMEM, "Failed to create a udev context: %m");
	}
	r = sd_event_add_time(event, &f->retry_source, CLOCK_MONOTONIC, 0, 10 * USEC_PER_MSEC,
			      fbseat_on_retry, f);
	if (r < 0) {
		fbseat_free(f);
		return log_error_errno(r, "Failed to create the framebuffer retry timer: %m");
	}
	sd_event_source_set_enabled(f->retry_source, SD_EVENT_OFF);
	/* without udevd: no ID_SEAT, every framebuffer is seat0's */
	if (fbwatch_monitor_new(event, f->udev, fbseat_on_monitor, f, &f->monitor,
				&f->monitor_source) < 0)
		log_warning("Failed to watch the graphics subsystem: a framebuffer that comes "
			    "on %s later is not seen",
			    seat);
	/* one registered since the caller's enumeration has had its event */
	f->retries_left = FBSEAT_RETRIES;
	fbseat_scan(f, NULL, false);
	*ret = f;
	return 0;
}

void fbseat_free(struct fbseat *f)
{
	if (!f)
		return;
	sd_event_source_unref(f->monitor_source);
	sd_event_source_unref(f->retry_source);
	udev_monitor_unref(f->monitor);
	udev_unref(f->udev);
	for (unsigned i = 0; i < f->n_refused; i++)
		free(f->refused[i]);
	free(f->seat);
	free(f);
}
