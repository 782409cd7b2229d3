/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Which seat a device is on, as logind sees it: the ID_SEAT property that
 * udev's seat rules set (`loginctl attach` writes a rule that sets it on a
 * device, and 73-seat-late.rules hands it down to the device's children),
 * found on the device or the nearest parent that has it; a device with
 * none is seat0's.
 */
#include <stdbool.h>

struct udev;
struct udev_device;

#define UDEVSEAT_DEFAULT "seat0"

/* The seat of d (UDEVSEAT_DEFAULT without ID_SEAT): a string that lives
 * as long as d or its parent that has it. */
const char *udevseat_of(struct udev_device *d);
/* Whether d is on seat (NULL: seat0). */
bool udevseat_is(struct udev_device *d, const char *seat);
/* Whether the device node at path (a character device) is on seat; one
 * that cannot be looked up is not. */
bool udevseat_node_is(struct udev *udev, const char *path, const char *seat);
