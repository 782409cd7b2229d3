/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * keylat: key-to-pixel latency and Ctrl+C-under-flood time of whatever
 * terminal draws on a framebuffer, measured in the guest (tests/bench/
 * README.md, Latency). It makes a uinput keyboard (so it reaches consoled
 * and kmscon through evdev and fbcon and fbterm through the kernel's
 * keyboard handler), maps the framebuffer and plays steps:
 *
 *     keylat [--fb=DEV] [--poll-us=N] [--timeout-ms=N] [--quiet-ms=N] [--gap-ms=N] STEP...
 *     keylat --run COMMAND [ARG...]
 *     keylat --echo-at ROW
 *
 *     wait-file PATH  wait (at most 15 x --timeout-ms) until PATH exists
 *     touch PATH      create PATH
 *     sleep MS        wait MS milliseconds
 *     key NAME        press and release a key (enter, ctrl-d, ctrl-c, a-z)
 *     bpp N           set the framebuffer to N bits per pixel if it is not
 *                     (a peer that set its own depth, kmscon, leaves it so)
 *     echo N          N timed keys into a canonical tty with echo: letters
 *                     and, every 20, as many backspaces (each timed too), so
 *                     the echo stays on one text row; after each key's echo
 *                     the next comes --gap-ms (default 20) plus 0-10 ms
 *                     later, jittered; prints
 *                     "echo n=N median_us=M p99_us=P max_us=X"
 *     echo-rows N Y0 Y1
 *                     N timed keys, as echo, with pixel rows Y0 to Y1 (the
 *                     bottom text row) watched from the first key on: the
 *                     rest of the screen scrolls (the session's `--echo-at`
 *                     writes each key there while lines scroll above it);
 *                     prints "scroll n=N median_us=M p99_us=P max_us=X"
 *     cpu NAME        prints "cpu NAME NS ns in P processes, R runs, F faults":
 *                     the time on the CPU and the times it was put on it
 *                     (the first and third fields of /proc/PID/schedstat),
 *                     and the minor page faults (/proc/PID/stat), of the
 *                     processes called NAME (comm), or whose name starts
 *                     with NAME without its last character if that is '*'
 *                     (kworker*), summed: two of them around an echo step
 *                     give what a key cost the terminal and the kernel's
 *                     workers
 *     int N FLOOD_MS  N rounds: Enter (the session starts a flood), wait
 *                     until the prompt is gone, FLOOD_MS of flood, then
 *                     Ctrl+C; the time until the prompt (a solid block of
 *                     reverse-video cells at the left edge) is on screen and
 *                     the left strip has not changed for --quiet-ms; prints
 *                     "int n=N median_us=M p99_us=P max_us=X"
 *
 * --echo-at is the session's side of echo-rows: in a tty set -icanon
 * -echo, it reads keys from stdin and writes each letter at row ROW (from
 * column 1 on; DEL erases the last one), in one write() that saves the
 * cursor, moves there and restores it (DECSC, CUP, DECRC), so the lines a
 * writer scrolls above row ROW (a scroll region that ends before it) go on
 * where they were.
 *
 * --run executes COMMAND with SIGINT and SIGQUIT at their defaults: the
 * fbcon run's session is started in the background by a shell without job
 * control, which ignores them for it, and a non-interactive shell cannot
 * trap a signal ignored on entry, so Ctrl+C would never stop its flood.
 *
 * A key's time runs from just before the write() of its press to the first
 * poll (one every --poll-us, sleeping in between so the terminal keeps the
 * CPU) that sees the watched pixels differ. The first key of an echo step
 * watches the whole screen and finds the text row that changed; the others
 * watch only that band. The visible screen is read at the yoffset of each
 * poll (pan). On DRM drivers' fbdev emulation the mapping is the fbdev
 * shadow buffer, not what a DRM master scans out. Any timeout, or a key
 * that changes nothing, exits with status 1 and a message.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fb.h>
#include <linux/uinput.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../vm/uinput-common.h"

#define TOOL "keylat"
/* Left strip of the int step: the prompt is at column 0. */
#define STRIP_PX 128
/* The prompt's block: this many equal pixels from x=0 on this many rows. */
#define BLOCK_W 40
#define BLOCK_ROWS 10

static int ufd = -1, fbfd = -1;
static uint8_t *fbmem;
static size_t fblen;
static struct fb_fix_screeninfo fix;
static struct fb_var_screeninfo var;
static unsigned bypp;
static long poll_us = 200, timeout_ms = 20000, quiet_ms = 300, gap_ms = 20;

static void die(const char *what)
{
	fprintf(stderr, "keylat: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void fail(const char *msg)
{
	fprintf(stderr, "keylat: %s\n", msg);
	fflush(stdout);
	exit(1);
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void sleep_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void emit2(unsigned code, int value)
{
	struct input_event ev[2];

	memset(ev, 0, sizeof(ev));
	ev[0].type = EV_KEY;
	ev[0].code = (unsigned short)code;
	ev[0].value = value;
	ev[1].type = EV_SYN;
	ev[1].code = SYN_REPORT;
	if (write(ufd, ev, sizeof(ev)) != (ssize_t)sizeof(ev))
		die("write to uinput");
}

static const unsigned letters[26] = {
    KEY_A, KEY_B, KEY_C, KEY_D, KEY_E, KEY_F, KEY_G, KEY_H, KEY_I, KEY_J, KEY_K, KEY_L, KEY_M,
    KEY_N, KEY_O, KEY_P, KEY_Q, KEY_R, KEY_S, KEY_T, KEY_U, KEY_V, KEY_W, KEY_X, KEY_Y, KEY_Z,
};

/* A key by name: presses Ctrl around it for ctrl-X. */
static void key_named(const char *name)
{
	unsigned code;
	int ctrl = strncmp(name, "ctrl-", 5) == 0;
	const char *k = ctrl ? name + 5 : name;

	if (strcmp(k, "enter") == 0)
		code = KEY_ENTER;
	else if (k[0] >= 'a' && k[0] <= 'z' && !k[1])
		code = letters[k[0] - 'a'];
	else {
		fprintf(stderr, "keylat: unknown key '%s'\n", name);
		exit(2);
	}
	if (ctrl)
		emit2(KEY_LEFTCTRL, 1);
	emit2(code, 1);
	emit2(code, 0);
	if (ctrl)
		emit2(KEY_LEFTCTRL, 0);
}

/* The first byte of the visible screen (the pan offset of this moment). */
static const uint8_t *visible(void)
{
	if (ioctl(fbfd, FBIOGET_VSCREENINFO, &var) < 0)
		die("FBIOGET_VSCREENINFO");
	size_t off = (size_t)var.yoffset * fix.line_length + (size_t)var.xoffset * bypp;
	if (off + (size_t)var.yres * fix.line_length > fblen)
		off = 0;
	return fbmem + off;
}

/* Copies rows [y0, y1) of the visible screen, `w` bytes of each, to buf. */
static void grab(uint8_t *buf, unsigned y0, unsigned y1, size_t w)
{
	const uint8_t *v = visible();

	for (unsigned y = y0; y < y1; y++)
		memcpy(buf + (size_t)(y - y0) * w, v + (size_t)y * fix.line_length, w);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *what, uint64_t *t, unsigned n)
{
	qsort(t, n, sizeof(*t), cmp_u64);
	/* p99: the value at rank ceil(0.99 n) */
	unsigned r99 = (unsigned)((99u * n + 99u) / 100u);
	printf("%s n=%u median_us=%llu p99_us=%llu max_us=%llu min_us=%llu\n", what, n,
	       (unsigned long long)t[n / 2], (unsigned long long)t[(r99 ? r99 : 1) - 1],
	       (unsigned long long)t[n - 1], (unsigned long long)t[0]);
	fflush(stdout);
}

/* Presses `code` and polls rows [y0, y1) until they differ from before the
 * press; returns the time in microseconds and stores in *first and *last the
 * rows that changed (relative to the screen). */
static uint64_t timed_key(unsigned code, unsigned y0, unsigned y1, unsigned *first, unsigned *last,
			  uint8_t *before, uint8_t *now)
{
	size_t w = (size_t)var.xres * bypp, len = (size_t)(y1 - y0) * w;
	uint64_t t0, t;

	grab(before, y0, y1, w);
	t0 = now_us();
	emit2(code, 1);
	/* released at once: a key held until its echo shows would repeat
	 * (consoled repeats keys itself) when the echo is slow */
	emit2(code, 0);
	for (;;) {
		sleep_us(poll_us);
		grab(now, y0, y1, w);
		t = now_us();
		if (memcmp(before, now, len) != 0)
			break;
		if (t - t0 > (uint64_t)timeout_ms * 1000u) {
			fprintf(stderr,
				"keylat: key %u: no pixel of rows %u-%u changed within %ld ms\n",
				code, y0, y1 - 1, timeout_ms);
			exit(1);
		}
	}
	*first = UINT_MAX;
	*last = 0;
	for (unsigned y = y0; y < y1; y++)
		if (memcmp(before + (size_t)(y - y0) * w, now + (size_t)(y - y0) * w, w) != 0) {
			if (*first == UINT_MAX)
				*first = y;
			*last = y;
		}
	return t - t0;
}

/* Waits until the whole screen has not changed for 500 ms. */
static void settle(uint8_t *a, uint8_t *b)
{
	size_t len = (size_t)var.xres * bypp * var.yres;
	uint64_t t0 = now_us(), still = t0;

	grab(a, 0, var.yres, (size_t)var.xres * bypp);
	while (now_us() - still < 500000u) {
		sleep_us(20000);
		grab(b, 0, var.yres, (size_t)var.xres * bypp);
		if (memcmp(a, b, len) != 0) {
			memcpy(a, b, len);
			still = now_us();
		}
		if (now_us() - t0 > (uint64_t)timeout_ms * 1000u)
			fail("echo: the screen did not stand still before the first key");
	}
}

static void step_echo(unsigned n)
{
	size_t w = (size_t)var.xres * bypp;
	uint8_t *a = malloc(w * var.yres), *b = malloc(w * var.yres);
	uint64_t *t = calloc(n, sizeof(*t));
	unsigned y0 = 0, y1 = var.yres, first, last, typed = 0, i = 0;

	if (!a || !b || !t)
		fail("out of memory");
	/* Calibration: the screen still for 500 ms (the terminal's first
	 * frame drawn), then a letter watched over the whole screen and
	 * erased; the erase must change rows of the letter's band, else again
	 * (something else changed the screen meanwhile). */
	for (unsigned tries = 0;; tries++) {
		unsigned f2, l2;

		if (tries == 3)
			fail("echo: no stable text row found (the screen kept changing)");
		settle(a, b);
		timed_key(KEY_X, 0, var.yres, &first, &last, a, b);
		/* The band: the cell rows around what changed (a glyph covers
		 * fewer rows than its cell). */
		y0 = first > 24 ? first - 24 : 0;
		y1 = last + 25 < var.yres ? last + 25 : var.yres;
		sleep_us(20000);
		timed_key(KEY_BACKSPACE, 0, var.yres, &f2, &l2, a, b);
		sleep_us(20000);
		if (f2 >= y0 && l2 < y1)
			break;
		printf("echo: calibration again (letter rows %u-%u, erase rows %u-%u)\n", first,
		       last, f2, l2);
	}
	while (i < n) {
		unsigned code = typed < 20 ? letters[i % 26] : KEY_BACKSPACE;

		t[i++] = timed_key(code, y0, y1, &first, &last, a, b);
		typed = typed < 20 ? typed + 1 : (typed == 39 ? 0 : typed + 1);
		/* not at a frame's pace: keys ~20-30 ms apart, jittered */
		sleep_us(gap_ms * 1000 + (long)(i * 7919u % 10000u));
	}
	/* the row left empty, whatever the count */
	for (unsigned left = typed < 20 ? typed : 40 - typed; left; left--) {
		emit2(KEY_BACKSPACE, 1);
		emit2(KEY_BACKSPACE, 0);
		sleep_us(20000);
	}
	printf("mode %ux%u %u bpp\n", var.xres, var.yres, var.bits_per_pixel);
	printf("echo band rows %u-%u\n", y0, y1 - 1);
	report("echo", t, n);
	free(a);
	free(b);
	free(t);
}

/* Keys typed while the screen scrolls: the band is given (the bottom text
 * row, outside the session's scroll region), as the screen never stands
 * still for the echo step's calibration. */
static void step_echo_rows(unsigned n, unsigned y0, unsigned y1)
{
	size_t w = (size_t)var.xres * bypp;
	uint8_t *a, *b;
	uint64_t *t = calloc(n, sizeof(*t));
	unsigned first, last, typed = 0, i = 0;

	if (y1 > var.yres)
		y1 = var.yres;
	if (y0 >= y1)
		fail("echo-rows: an empty band");
	a = malloc(w * (y1 - y0));
	b = malloc(w * (y1 - y0));
	if (!a || !b || !t)
		fail("out of memory");
	while (i < n) {
		unsigned code = typed < 20 ? letters[i % 26] : KEY_BACKSPACE;

		t[i++] = timed_key(code, y0, y1, &first, &last, a, b);
		typed = typed < 20 ? typed + 1 : (typed == 39 ? 0 : typed + 1);
		sleep_us(gap_ms * 1000 + (long)(i * 7919u % 10000u));
	}
	printf("scroll band rows %u-%u\n", y0, y1 - 1);
	report("scroll", t, n);
	free(a);
	free(b);
	free(t);
}

/* The session's side of echo-rows (--echo-at ROW). */
static int echo_at(unsigned row)
{
	unsigned col = 0;
	unsigned char c;

	for (;;) {
		char out[64];
		int len;
		ssize_t r = read(0, &c, 1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return 0;
		if (c == 0x7f || c == 0x08) {
			if (!col)
				continue;
			col--;
			c = ' ';
		} else if (c < 0x20 || c > 0x7e)
			continue;
		len = snprintf(out, sizeof(out), "\0337\033[%u;%uH%c\0338", row, col + 1, c);
		if (c != ' ')
			col++;
		if (write(1, out, (size_t)len) != len)
			return 1;
	}
}

/* Whether the prompt's block is in the strip: BLOCK_ROWS rows in a row whose
 * first BLOCK_W pixels are equal and differ from the row's last pixel
 * (background: the prompt is short). */
static int has_block(const uint8_t *strip, size_t sw, const uint8_t *last_px)
{
	unsigned run = 0;

	for (unsigned y = 0; y < var.yres; y++) {
		const uint8_t *row = strip + (size_t)y * sw;
		int ok = memcmp(row, last_px + (size_t)y * bypp, bypp) != 0;

		for (unsigned x = 1; ok && x < BLOCK_W; x++)
			ok = memcmp(row, row + (size_t)x * bypp, bypp) == 0;
		run = ok ? run + 1 : 0;
		if (run >= BLOCK_ROWS)
			return 1;
	}
	return 0;
}

/* The strip (left STRIP_PX pixels of each row) and each row's last pixel. */
static void grab_strip(uint8_t *strip, size_t sw, uint8_t *last_px)
{
	const uint8_t *v = visible();

	for (unsigned y = 0; y < var.yres; y++) {
		memcpy(strip + (size_t)y * sw, v + (size_t)y * fix.line_length, sw);
		memcpy(last_px + (size_t)y * bypp,
		       v + (size_t)y * fix.line_length + (size_t)(var.xres - 1) * bypp, bypp);
	}
}

static void step_int(unsigned n, long flood_ms)
{
	size_t sw = (size_t)(var.xres < STRIP_PX ? var.xres : STRIP_PX) * bypp;
	size_t len = sw * var.yres;
	uint8_t *prev = malloc(len), *cur = malloc(len), *lp = malloc((size_t)var.yres * bypp);
	uint64_t *t = calloc(n, sizeof(*t));

	if (!prev || !cur || !lp || !t)
		fail("out of memory");
	for (unsigned i = 0; i < n; i++) {
		uint64_t t0, tc, last_change;

		/* the prompt of the last round must be there */
		grab_strip(cur, sw, lp);
		if (!has_block(cur, sw, lp))
			fail("int: no prompt block on screen before a round (is the session's"
			     " prompt drawn?)");
		key_named("enter");
		t0 = now_us();
		for (;;) {
			sleep_us(5000);
			grab_strip(cur, sw, lp);
			if (!has_block(cur, sw, lp))
				break;
			if (now_us() - t0 > (uint64_t)timeout_ms * 1000u)
				fail("int: the prompt stayed on screen after Enter (no flood "
				     "started)");
		}
		sleep_us(flood_ms * 1000);
		grab_strip(prev, sw, lp);
		emit2(KEY_LEFTCTRL, 1);
		tc = now_us();
		emit2(KEY_C, 1);
		emit2(KEY_C, 0);
		emit2(KEY_LEFTCTRL, 0);
		last_change = tc;
		for (;;) {
			uint64_t now;

			sleep_us(poll_us);
			grab_strip(cur, sw, lp);
			now = now_us();
			if (memcmp(prev, cur, len) != 0) {
				uint8_t *x = prev;

				prev = cur;
				cur = x;
				last_change = now;
			} else if (now - last_change >= (uint64_t)quiet_ms * 1000u &&
				   has_block(prev, sw, lp))
				break;
			if (now - tc > (uint64_t)timeout_ms * 1000u) {
				fprintf(stderr,
					"keylat: int round %u: %s within %ld ms of Ctrl+C\n", i,
					has_block(prev, sw, lp) ? "the screen kept changing"
								: "no prompt on screen",
					timeout_ms);
				exit(1);
			}
		}
		t[i] = last_change - tc;
		printf("int round %u: %llu us\n", i, (unsigned long long)t[i]);
		fflush(stdout);
	}
	report("int", t, n);
	free(prev);
	free(cur);
	free(lp);
	free(t);
}

/* The minor faults of process PID (the tenth field of /proc/PID/stat,
 * after the command's parentheses); 0 if it is gone. */
static unsigned long long proc_minflt(const char *pid)
{
	char path[300], buf[1024];
	unsigned long long flt = 0;
	const char *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		/* state ppid pgrp session tty_nr tpgid flags minflt */
		(void)sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %llu", &flt);
	fclose(f);
	return flt;
}

/* The "cpu NAME" step: nanoseconds on the CPU, times put on it and minor
 * faults of the processes NAME matches (a prefix with a trailing '*'),
 * summed. */
static void step_cpu(const char *name)
{
	size_t len = strlen(name);
	bool prefix = len > 0 && name[len - 1] == '*';
	unsigned long long total = 0, runs = 0, faults = 0;
	unsigned procs = 0;
	struct dirent *e;
	DIR *d = opendir("/proc");

	if (!d)
		die("/proc");
	if (prefix)
		len--;
	while ((e = readdir(d))) {
		char path[300], comm[64];
		unsigned long long ns, waited, ran;
		FILE *f;
		bool match;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue; /* gone meanwhile */
		match = fgets(comm, sizeof(comm), f) != NULL;
		fclose(f);
		comm[strcspn(comm, "\n")] = '\0';
		if (!match || (prefix ? strncmp(comm, name, len) != 0 : strcmp(comm, name) != 0))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/schedstat", e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fscanf(f, "%llu %llu %llu", &ns, &waited, &ran) == 3) {
			total += ns;
			runs += ran;
			faults += proc_minflt(e->d_name);
			procs++;
		}
		fclose(f);
	}
	closedir(d);
	printf("cpu %s %llu ns in %u processes, %llu runs, %llu faults\n", name, total, procs, runs,
	       faults);
}

static long num(const char *s)
{
	return uinput_parse_num(TOOL, s);
}

/* The framebuffer's mode of this moment (a peer may have set its own). */
static void fb_read_mode(void)
{
	if (ioctl(fbfd, FBIOGET_VSCREENINFO, &var) < 0 ||
	    ioctl(fbfd, FBIOGET_FSCREENINFO, &fix) < 0)
		die("FBIOGET_*SCREENINFO");
	bypp = (var.bits_per_pixel + 7) / 8;
}

int main(int argc, char **argv)
{
	const char *fbdev = "/dev/fb0";
	char node[PATH_MAX];
	int i = 1;

	if (argc == 3 && strcmp(argv[1], "--echo-at") == 0)
		return echo_at((unsigned)num(argv[2]));
	if (argc > 2 && strcmp(argv[1], "--run") == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		execvp(argv[2], argv + 2);
		die(argv[2]);
	}
	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		if (strncmp(argv[i], "--fb=", 5) == 0)
			fbdev = argv[i] + 5;
		else if (strncmp(argv[i], "--poll-us=", 10) == 0)
			poll_us = num(argv[i] + 10);
		else if (strncmp(argv[i], "--timeout-ms=", 13) == 0)
			timeout_ms = num(argv[i] + 13);
		else if (strncmp(argv[i], "--quiet-ms=", 11) == 0)
			quiet_ms = num(argv[i] + 11);
		else if (strncmp(argv[i], "--gap-ms=", 9) == 0)
			gap_ms = num(argv[i] + 9);
		else {
			fprintf(stderr, "keylat: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	ufd = open("/dev/uinput", O_WRONLY | O_CLOEXEC);
	if (ufd < 0)
		die("/dev/uinput");
	if (ioctl(ufd, UI_SET_EVBIT, EV_KEY) < 0 || ioctl(ufd, UI_SET_EVBIT, EV_SYN) < 0)
		die("UI_SET_EVBIT");
	/* The keys of a PC keyboard: enough for a terminal to count it as one. */
	for (unsigned k = KEY_ESC; k <= KEY_MICMUTE; k++)
		if (ioctl(ufd, UI_SET_KEYBIT, k) < 0)
			die("UI_SET_KEYBIT");
	uinput_create(ufd, TOOL, "consoled-bench keylat keyboard", 0x5679, node);

	fbfd = open(fbdev, O_RDWR | O_CLOEXEC);
	if (fbfd < 0)
		die(fbdev);
	fb_read_mode();
	fblen = fix.smem_len;
	fbmem = mmap(NULL, fblen, PROT_READ, MAP_SHARED, fbfd, 0);
	if (fbmem == MAP_FAILED)
		die("mmap");

	for (; i < argc; i++) {
		const char *verb = argv[i];

		if (i + 1 >= argc) {
			fprintf(stderr, "keylat: %s needs an argument\n", verb);
			return 2;
		}
		const char *arg = argv[++i];
		if (strcmp(verb, "wait-file") == 0) {
			uint64_t t0 = now_us();

			while (access(arg, F_OK) < 0) {
				if (now_us() - t0 > (uint64_t)timeout_ms * 1000u * 15u) {
					fprintf(stderr, "keylat: %s did not appear\n", arg);
					return 1;
				}
				sleep_us(50000);
			}
		} else if (strcmp(verb, "touch") == 0) {
			int fd = open(arg, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

			if (fd < 0)
				die(arg);
			close(fd);
		} else if (strcmp(verb, "sleep") == 0)
			sleep_us(num(arg) * 1000);
		else if (strcmp(verb, "key") == 0)
			key_named(arg);
		else if (strcmp(verb, "cpu") == 0)
			step_cpu(arg);
		else if (strcmp(verb, "bpp") == 0) {
			if (ioctl(fbfd, FBIOGET_VSCREENINFO, &var) < 0)
				die("FBIOGET_VSCREENINFO");
			if (var.bits_per_pixel != (unsigned)num(arg)) {
				var.bits_per_pixel = (unsigned)num(arg);
				var.activate = FB_ACTIVATE_NOW;
				if (ioctl(fbfd, FBIOPUT_VSCREENINFO, &var) < 0)
					die("FBIOPUT_VSCREENINFO");
			}
		} else if (strcmp(verb, "echo") == 0) {
			fb_read_mode();
			step_echo((unsigned)num(arg));
		} else if (strcmp(verb, "echo-rows") == 0) {
			if (i + 2 >= argc)
				fail("echo-rows needs N, Y0 and Y1");
			fb_read_mode();
			unsigned n = (unsigned)num(arg), y0 = (unsigned)num(argv[i + 1]);
			step_echo_rows(n, y0, (unsigned)num(argv[i + 2]) + 1);
			i += 2;
		} else if (strcmp(verb, "int") == 0) {
			if (i + 1 >= argc)
				fail("int needs N and FLOOD_MS");
			fb_read_mode();
			unsigned n = (unsigned)num(arg);
			step_int(n, num(argv[++i]));
		} else {
			fprintf(stderr, "keylat: unknown step '%s'\n", verb);
			return 2;
		}
		printf("keylat: %s %s\n", verb, arg);
		fflush(stdout);
	}
	ioctl(ufd, UI_DEV_DESTROY);
	return 0;
}
