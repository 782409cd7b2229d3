/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * uinput-snd: a speaker made with uinput, for the bell-sound VM check: an
 * input device with EV_SND (SND_TONE and SND_BELL), as the PC speaker's
 * evdev device is. What is written to its event node (consoled's bell)
 * reaches this program through /dev/uinput, and each EV_SND event is
 * printed as it comes:
 *
 *     uinput-snd: created /dev/input/eventN
 *     SND_TONE 750
 *     SND_TONE 0
 *
 *     uinput-snd [SECONDS]   (default 60; then it exits and the device goes)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/uinput.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "uinput-common.h"

static void die(const char *what)
{
	fprintf(stderr, "uinput-snd: %s: %s\n", what, strerror(errno));
	exit(1);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int main(int argc, char **argv)
{
	char node[PATH_MAX];
	long seconds = argc > 1 ? strtol(argv[1], NULL, 10) : 60, end;
	int fd;

	if (seconds <= 0)
		seconds = 60;
	fd = open("/dev/uinput", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die("/dev/uinput");
	if (ioctl(fd, UI_SET_EVBIT, EV_SND) < 0 || ioctl(fd, UI_SET_SNDBIT, SND_TONE) < 0 ||
	    ioctl(fd, UI_SET_SNDBIT, SND_BELL) < 0)
		die("UI_SET_SNDBIT");
	uinput_create(fd, "uinput-snd", "consoled-test uinput speaker", 0x5679, node);

	end = now_ms() + seconds * 1000L;
	for (long left; (left = end - now_ms()) > 0;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		struct input_event ev;

		if (poll(&p, 1, (int)left) <= 0)
			continue;
		if (read(fd, &ev, sizeof(ev)) != (ssize_t)sizeof(ev))
			die("read");
		if (ev.type != EV_SND)
			continue;
		printf("%s %d\n",
		       ev.code == SND_TONE   ? "SND_TONE"
		       : ev.code == SND_BELL ? "SND_BELL"
					     : "SND_OTHER",
		       ev.value);
		fflush(stdout);
	}
	ioctl(fd, UI_DEV_DESTROY);
	return 0;
}
