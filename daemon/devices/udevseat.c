/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "udevseat.h"

#include <libudev.h>
#include <string.h>

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
