/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "udevseat.h"

#include <libudev.h>
#include <string.h>
#include <sys/stat.h>

const char *udevseat_of(struct udev_device *d)
{
	for (; d; d = udev_device_get_parent(d)) {
		const char *seat = udev_device_get_property_value(d, "ID_SEAT");

		if (seat && *seat)
			return seat;
	}
	return UDEVSEAT_DEFAULT;
}

bool udevseat_is(struct udev_device *d, const char *seat)
{
	return strcmp(udevseat_of(d), seat ? seat : UDEVSEAT_DEFAULT) == 0;
}

bool udevseat_node_is(struct udev *udev, const char *path, const char *seat)
{
	struct udev_device *d = NULL;
	struct stat st;
	bool on = false;

	if (udev && stat(path, &st) == 0 && S_ISCHR(st.st_mode))
		d = udev_device_new_from_devnum(udev, 'c', st.st_rdev);
	if (d)
		on = udevseat_is(d, seat);
	udev_device_unref(d);
	return on;
}
