/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * uinput-ptr: a touchscreen or a touchpad made with uinput that plays a
 * script of steps given on the command line, for the pointer checks that
 * need a device QEMU does not emulate (pointertest.py, pointer-touch).
 *
 *     uinput-ptr KIND STEP...
 *
 *     KIND  touchscreen  ABS_X 100..4195, ABS_Y 50..2099, BTN_TOUCH,
 *                        INPUT_PROP_DIRECT (no mouse button)
 *           touchpad     ABS_X 0..999, ABS_Y 0..499 (10 units a mm),
 *                        BTN_TOUCH, BTN_TOOL_FINGER, BTN_LEFT,
 *                        INPUT_PROP_POINTER (a click pad's button)
 *
 *     wait-open PID   wait until process PID has the device's event node open
 *     touch X,Y       a finger down at X,Y (one report)
 *     move X,Y        the finger moves to X,Y
 *     lift            the finger goes up
 *     click           BTN_LEFT pressed and released (two reports)
 *     sleep MS        wait MS milliseconds
 *     hold            wait until killed (the device stays plugged in)
 *
 * Each step prints its name to stdout when done.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/uinput.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "uinput-common.h"

static int fd = -1;
static char node[PATH_MAX];

static void die(const char *what)
{
	fprintf(stderr, "uinput-ptr: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(const char *why)
{
	fprintf(stderr, "uinput-ptr: %s\n", why);
	exit(2);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void emit(unsigned type, unsigned code, int value)
{
	struct input_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = (unsigned short)type;
	ev.code = (unsigned short)code;
	ev.value = value;
	if (write(fd, &ev, sizeof(ev)) != (ssize_t)sizeof(ev))
		die("write");
}

static void report(void)
{
	emit(EV_SYN, SYN_REPORT, 0);
}

static long parse_num(const char *s, char **end)
{
	long n;

	errno = 0;
	n = strtol(s, end, 10);
	if (errno || *end == s || n < 0)
		usage("bad number");
	return n;
}

static void parse_xy(const char *s, int *x, int *y)
{
	char *end;

	*x = (int)parse_num(s, &end);
	if (*end != ',')
		usage("expected X,Y");
	*y = (int)parse_num(end + 1, &end);
	if (*end)
		usage("expected X,Y");
}

static void set_abs(unsigned code, int min, int max, int resolution)
{
	struct uinput_abs_setup a;

	memset(&a, 0, sizeof(a));
	a.code = (unsigned short)code;
	a.absinfo.minimum = min;
	a.absinfo.maximum = max;
	a.absinfo.resolution = resolution;
	if (ioctl(fd, UI_ABS_SETUP, &a) < 0)
		die("UI_ABS_SETUP");
}

static void create(const char *kind)
{
	bool pad = strcmp(kind, "touchpad") == 0;
	char name[UINPUT_MAX_NAME_SIZE];

	if (!pad && strcmp(kind, "touchscreen") != 0)
		usage("KIND is touchscreen or touchpad");
	fd = open("/dev/uinput", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		die("/dev/uinput");
	if (ioctl(fd, UI_SET_EVBIT, EV_KEY) < 0 || ioctl(fd, UI_SET_EVBIT, EV_SYN) < 0 ||
	    ioctl(fd, UI_SET_EVBIT, EV_ABS) < 0 || ioctl(fd, UI_SET_KEYBIT, BTN_TOUCH) < 0)
		die("UI_SET_*BIT");
	if (pad) {
		if (ioctl(fd, UI_SET_KEYBIT, BTN_TOOL_FINGER) < 0 ||
		    ioctl(fd, UI_SET_KEYBIT, BTN_LEFT) < 0 ||
		    ioctl(fd, UI_SET_PROPBIT, INPUT_PROP_POINTER) < 0)
			die("UI_SET_*BIT");
		set_abs(ABS_X, 0, 999, 10);
		set_abs(ABS_Y, 0, 499, 10);
	} else {
		if (ioctl(fd, UI_SET_PROPBIT, INPUT_PROP_DIRECT) < 0)
			die("UI_SET_PROPBIT");
		set_abs(ABS_X, 100, 4195, 0);
		set_abs(ABS_Y, 50, 2099, 0);
	}
	snprintf(name, sizeof(name), "consoled-test uinput %s", kind);
	uinput_create(fd, "uinput-ptr", name, pad ? 0x5679 : 0x567a, node);
}

int main(int argc, char **argv)
{
	bool pad;

	if (argc < 2)
		usage("usage: uinput-ptr KIND STEP...");
	pad = strcmp(argv[1], "touchpad") == 0;
	create(argv[1]);
	for (int i = 2; i < argc; i++) {
		const char *verb = argv[i];
		const char *arg = NULL;
		bool takes_arg = strcmp(verb, "wait-open") == 0 || strcmp(verb, "touch") == 0 ||
				 strcmp(verb, "move") == 0 || strcmp(verb, "sleep") == 0;
		char *end;
		int x, y;

		if (takes_arg) {
			if (i + 1 >= argc)
				usage("a step needs its argument");
			arg = argv[++i];
		}
		if (strcmp(verb, "wait-open") == 0) {
			long pid = parse_num(arg, &end);

			for (int tries = 0; !uinput_has_open(pid, node); tries++) {
				if (tries > 600) {
					fprintf(stderr, "uinput-ptr: process %ld did not open %s\n",
						pid, node);
					return 1;
				}
				sleep_ms(50);
			}
		} else if (strcmp(verb, "touch") == 0 || strcmp(verb, "move") == 0) {
			parse_xy(arg, &x, &y);
			emit(EV_ABS, ABS_X, x);
			emit(EV_ABS, ABS_Y, y);
			if (verb[0] == 't') {
				emit(EV_KEY, BTN_TOUCH, 1);
				if (pad)
					emit(EV_KEY, BTN_TOOL_FINGER, 1);
			}
			report();
		} else if (strcmp(verb, "lift") == 0) {
			emit(EV_KEY, BTN_TOUCH, 0);
			if (pad)
				emit(EV_KEY, BTN_TOOL_FINGER, 0);
			report();
		} else if (strcmp(verb, "click") == 0) {
			emit(EV_KEY, BTN_LEFT, 1);
			report();
			emit(EV_KEY, BTN_LEFT, 0);
			report();
		} else if (strcmp(verb, "sleep") == 0)
			sleep_ms(parse_num(arg, &end));
		else if (strcmp(verb, "hold") == 0)
			for (;;)
				pause();
		else
			usage("unknown step");
		printf("uinput-ptr: %s%s%s\n", verb, arg ? " " : "", arg ? arg : "");
		fflush(stdout);
	}
	ioctl(fd, UI_DEV_DESTROY);
	close(fd);
	return 0;
}
