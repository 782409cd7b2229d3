/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * What the uinput test tools (uinput-kbd, uinput-ptr, uinput-snd) share:
 * creating the device once its capabilities are set, finding its event
 * node, waiting for a process to open that node, and reading a number
 * argument (keylat, the latency benchmark's keyboard, uses them too). A failure prints
 * "TOOL: what: error" and exits with status 1, as each tool's own die().
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <linux/uinput.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static inline void uinput_fail(const char *tool, const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", tool, what, strerror(errno));
	exit(1);
}

/* A decimal number >= 0 from a tool's argument; anything else prints
 * "TOOL: bad number 'S'" and exits with status 2 (a usage error). */
static inline long uinput_parse_num(const char *tool, const char *s)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(s, &end, 10);
	if (errno || *end || n < 0) {
		fprintf(stderr, "%s: bad number '%s'\n", tool, s);
		exit(2);
	}
	return n;
}

/* Creates the device whose capabilities fd has been given, named "NAME"
 * with the test vendor id and `product`, and stores its event node
 * (/dev/input/eventN) in node[PATH_MAX]; prints "TOOL: created NODE". */
static inline void uinput_create(int fd, const char *tool, const char *name, unsigned product,
				 char node[PATH_MAX])
{
	struct uinput_setup setup;
	char sysname[64], dir[128];
	struct dirent *de;
	DIR *d;

	memset(&setup, 0, sizeof(setup));
	setup.id.bustype = BUS_VIRTUAL;
	setup.id.vendor = 0x1234;
	setup.id.product = (unsigned short)product;
	snprintf(setup.name, sizeof(setup.name), "%s", name);
	if (ioctl(fd, UI_DEV_SETUP, &setup) < 0 || ioctl(fd, UI_DEV_CREATE) < 0)
		uinput_fail(tool, "creating the device");

	/* The event node, from the input device's sysfs directory. */
	if (ioctl(fd, UI_GET_SYSNAME(sizeof(sysname)), sysname) < 0)
		uinput_fail(tool, "UI_GET_SYSNAME");
	snprintf(dir, sizeof(dir), "/sys/devices/virtual/input/%s", sysname);
	d = opendir(dir);
	if (!d)
		uinput_fail(tool, dir);
	node[0] = '\0';
	while ((de = readdir(d)))
		if (strncmp(de->d_name, "event", 5) == 0)
			snprintf(node, PATH_MAX, "/dev/input/%s", de->d_name);
	closedir(d);
	if (!node[0]) {
		fprintf(stderr, "%s: no event node in %s (is evdev loaded?)\n", tool, dir);
		exit(1);
	}
	printf("%s: created %s\n", tool, node);
	fflush(stdout);
}

/* Whether process pid has `node` open. */
static inline bool uinput_has_open(long pid, const char *node)
{
	char path[64], link[PATH_MAX], p[PATH_MAX + 80];
	struct dirent *de;
	bool found = false;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%ld/fd", pid);
	d = opendir(path);
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		ssize_t n;

		snprintf(p, sizeof(p), "%s/%s", path, de->d_name);
		n = readlink(p, link, sizeof(link) - 1);
		if (n < 0)
			continue;
		link[n] = '\0';
		found = strcmp(link, node) == 0;
	}
	closedir(d);
	return found;
}
