/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * uinput-kbd: a keyboard made with uinput that plays a script of steps given
 * on the command line, for the VM checks that need events no real keyboard
 * (nor QEMU's send-key) can make: a key held while consoled is stopped, and
 * more events than the kernel keeps for a reader that does not read.
 *
 *     uinput-kbd STEP...
 *
 *     wait-open PID   wait until process PID has the keyboard's event node open
 *     press KEY       a key press (KEY: leftctrl, leftshift, a-z, or a number)
 *     release KEY     its release
 *     flood N         N press/release pairs of Left Shift, each event its own
 *                     report: 4 * N events with the SYN_REPORTs
 *     stop PID        SIGSTOP to PID
 *     cont PID        SIGCONT to PID
 *     sleep MS        wait MS milliseconds
 *     wait-file PATH  wait until PATH exists (a go from the test)
 *     hold            wait until killed (the keyboard stays plugged in)
 *
 * Each step prints its name to stdout when done. The device has no EV_REP,
 * so the kernel sends no autorepeat events of its own.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/uinput.h>
#include <signal.h>
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
	fprintf(stderr, "uinput-kbd: %s: %s\n", what, strerror(errno));
	exit(1);
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

static void key(unsigned code, int value)
{
	emit(EV_KEY, code, value);
	emit(EV_SYN, SYN_REPORT, 0);
}

static unsigned parse_key(const char *s)
{
	static const unsigned letters[26] = {
	    KEY_A, KEY_B, KEY_C, KEY_D, KEY_E, KEY_F, KEY_G, KEY_H, KEY_I,
	    KEY_J, KEY_K, KEY_L, KEY_M, KEY_N, KEY_O, KEY_P, KEY_Q, KEY_R,
	    KEY_S, KEY_T, KEY_U, KEY_V, KEY_W, KEY_X, KEY_Y, KEY_Z,
	};
	char *end;
	unsigned long n;

	if (strcmp(s, "leftctrl") == 0)
		return KEY_LEFTCTRL;
	if (strcmp(s, "leftshift") == 0)
		return KEY_LEFTSHIFT;
	if (s[0] >= 'a' && s[0] <= 'z' && s[1] == '\0')
		return letters[s[0] - 'a'];
	errno = 0;
	n = strtoul(s, &end, 0);
	if (errno || *end || n == 0 || n > 255) {
		fprintf(stderr, "uinput-kbd: unknown key '%s'\n", s);
		exit(2);
	}
	return (unsigned)n;
}

static void create(void)
{
	fd = open("/dev/uinput", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		die("/dev/uinput");
	if (ioctl(fd, UI_SET_EVBIT, EV_KEY) < 0 || ioctl(fd, UI_SET_EVBIT, EV_SYN) < 0)
		die("UI_SET_EVBIT");
	/* The keys of a PC keyboard: enough for consoled to count it as one. */
	for (unsigned k = KEY_ESC; k <= KEY_MICMUTE; k++)
		if (ioctl(fd, UI_SET_KEYBIT, k) < 0)
			die("UI_SET_KEYBIT");
	uinput_create(fd, "uinput-kbd", "consoled-test uinput keyboard", 0x5678, node);
}

static void signal_pid(long pid, int sig)
{
	if (kill((pid_t)pid, sig) < 0)
		die("kill");
}

int main(int argc, char **argv)
{
	create();
	for (int i = 1; i < argc; i++) {
		const char *verb = argv[i];
		const char *arg = NULL;

		if (strcmp(verb, "hold") != 0) {
			if (i + 1 >= argc) {
				fprintf(stderr, "uinput-kbd: %s needs an argument\n", verb);
				return 2;
			}
			arg = argv[++i];
		}
		if (strcmp(verb, "wait-open") == 0) {
			long pid = uinput_parse_num("uinput-kbd", arg);
			int tries = 0;

			while (!uinput_has_open(pid, node)) {
				if (++tries > 600) {
					fprintf(stderr, "uinput-kbd: process %ld did not open %s\n",
						pid, node);
					return 1;
				}
				sleep_ms(50);
			}
		} else if (strcmp(verb, "press") == 0)
			key(parse_key(arg), 1);
		else if (strcmp(verb, "release") == 0)
			key(parse_key(arg), 0);
		else if (strcmp(verb, "flood") == 0)
			for (long n = uinput_parse_num("uinput-kbd", arg); n > 0; n--) {
				key(KEY_LEFTSHIFT, 1);
				key(KEY_LEFTSHIFT, 0);
			}
		else if (strcmp(verb, "stop") == 0)
			signal_pid(uinput_parse_num("uinput-kbd", arg), SIGSTOP);
		else if (strcmp(verb, "cont") == 0)
			signal_pid(uinput_parse_num("uinput-kbd", arg), SIGCONT);
		else if (strcmp(verb, "sleep") == 0)
			sleep_ms(uinput_parse_num("uinput-kbd", arg));
		else if (strcmp(verb, "wait-file") == 0)
			while (access(arg, F_OK) < 0)
				sleep_ms(50);
		else if (strcmp(verb, "hold") == 0)
			for (;;)
				pause();
		else {
			fprintf(stderr, "uinput-kbd: unknown step '%s'\n", verb);
			return 2;
		}
		printf("uinput-kbd: %s%s%s\n", verb, arg ? " " : "", arg ? arg : "");
		fflush(stdout);
	}
	ioctl(fd, UI_DEV_DESTROY);
	close(fd);
	return 0;
}
