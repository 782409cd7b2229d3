/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * echofloor: the floor of the latency section's echo (README.md, Latency,
 * The echo's floor): the least a terminal on a pty does between a key and
 * its echo's pixels, so that keylat times it as it times the terminals.
 *
 *     echofloor NODE FONT_W FONT_H -- COMMAND [ARG...]
 *
 * It takes tty1 from fbcon (KD_GRAPHICS: fbcon stops drawing), grabs the
 * keyboard NODE (keylat's uinput keyboard: the kernel's keyboard handler
 * no longer sees it), runs COMMAND as the session on a pty (its own
 * session, the slave as its controlling tty and fds 0-2, the window the
 * screen's cells of FONT_W x FONT_H), and then does nothing but:
 *
 * - a key press read from NODE: its byte written to the pty master
 *   (a-z, Ctrl+a-z, Backspace as DEL, Enter as CR, space);
 * - bytes read from the master: a printable one fills its cell with a
 *   solid block (a space blanks it) at the cursor, which moves on;
 *   backspace, CR and LF move the cursor; ESC [ H homes it and ESC [ J
 *   clears the screen; every other escape sequence is skipped. No glyph,
 *   no scrolling, no terminal state: the cells are written straight into
 *   the framebuffer's mapping at its pan offset.
 *
 * So its time is the pty's round trip (the key's byte through the line
 * discipline, its echo back to the master) and two wake-ups of one process
 * (the keyboard's, the echo's), which every terminal on a pty has, and
 * almost nothing else. On DRM drivers' fbdev emulation a store into the
 * mapping lands in the shadow buffer that keylat watches, and reaches the
 * scanout only at the deferred I/O's next flush (50 ms later): there the
 * floor is below what a terminal that shows its echo at once can do (such
 * a terminal writes with write(), as consoled does).
 *
 * It ends when the session does (EIO on the master) or on SIGTERM, and
 * gives tty1 back to fbcon.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fb.h>
#include <linux/input.h>
#include <linux/kd.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "ptysession.h"

static struct fb_var_screeninfo var;
static struct fb_fix_screeninfo fix;
static uint8_t *fb;
static unsigned font_w, font_h, cols, rows, col, row;
static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

/* The cell (c, r) of the visible screen, solid (every bit set) or blank. */
static void fill_cell(unsigned c, unsigned r, int solid)
{
	size_t bypp = (var.bits_per_pixel + 7) / 8;
	size_t x = (size_t)c * font_w * bypp;

	for (unsigned y = 0; y < font_h; y++) {
		size_t line = (size_t)(var.yoffset + r * font_h + y) * fix.line_length;

		memset(fb + line + x, solid ? 0xff : 0, font_w * bypp);
	}
}

static void clear_screen(void)
{
	for (unsigned y = 0; y < var.yres; y++)
		memset(fb + (size_t)(var.yoffset + y) * fix.line_length, 0, fix.line_length);
}

/* The session's output: the cursor, solid cells, a clear. */
static void output(const unsigned char *p, size_t n)
{
	static enum { GROUND, ESC, CSI } state;

	for (size_t i = 0; i < n; i++) {
		unsigned char b = p[i];

		if (state == ESC) {
			state = b == '[' ? CSI : GROUND;
			continue;
		}
		if (state == CSI) {
			if (b >= 0x40 && b <= 0x7e) {
				state = GROUND;
				if (b == 'H')
					col = row = 0;
				else if (b == 'J')
					clear_screen();
			}
			continue;
		}
		if (b == 0x1b)
			state = ESC;
		else if (b == '\b')
			col -= col > 0;
		else if (b == '\r')
			col = 0;
		else if (b == '\n')
			row += row + 1 < rows;
		else if (b >= 0x20 && b < 0x7f) {
			fill_cell(col, row, b != ' ');
			if (++col == cols) {
				col = 0;
				row += row + 1 < rows;
			}
		}
	}
}

/* A key press's byte, or -1. */
static int key_byte(unsigned code, int ctrl)
{
	static const unsigned short letters[26] = {
	    KEY_A, KEY_B, KEY_C, KEY_D, KEY_E, KEY_F, KEY_G, KEY_H, KEY_I,
	    KEY_J, KEY_K, KEY_L, KEY_M, KEY_N, KEY_O, KEY_P, KEY_Q, KEY_R,
	    KEY_S, KEY_T, KEY_U, KEY_V, KEY_W, KEY_X, KEY_Y, KEY_Z,
	};

	for (int i = 0; i < 26; i++)
		if (letters[i] == code)
			return ctrl ? i + 1 : 'a' + i;
	if (code == KEY_BACKSPACE)
		return 0x7f;
	if (code == KEY_ENTER)
		return '\r';
	if (code == KEY_SPACE)
		return ' ';
	return -1;
}

int main(int argc, char **argv)
{
	struct winsize ws = {0};
	unsigned char buf[4096];
	int kbd, fbfd, tty, master, ctrl = 0;
	pid_t child;

	if (argc < 6 || strcmp(argv[4], "--") != 0) {
		fprintf(stderr, "usage: echofloor NODE FONT_W FONT_H -- COMMAND [ARG...]\n");
		return 2;
	}
	font_w = (unsigned)atoi(argv[2]);
	font_h = (unsigned)atoi(argv[3]);
	kbd = open(argv[1], O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	fbfd = open("/dev/fb0", O_RDWR | O_CLOEXEC);
	tty = open("/dev/tty1", O_RDWR | O_CLOEXEC | O_NOCTTY);
	if (kbd < 0 || fbfd < 0 || tty < 0 || font_w == 0 || font_h == 0) {
		perror("echofloor: opening the keyboard, /dev/fb0 or /dev/tty1");
		return 1;
	}
	if (ioctl(fbfd, FBIOGET_VSCREENINFO, &var) < 0 ||
	    ioctl(fbfd, FBIOGET_FSCREENINFO, &fix) < 0) {
		perror("echofloor: the framebuffer's mode");
		return 1;
	}
	fb = mmap(NULL, fix.smem_len, PROT_READ | PROT_WRITE, MAP_SHARED, fbfd, 0);
	if (fb == MAP_FAILED) {
		perror("echofloor: mmap");
		return 1;
	}
	cols = var.xres / font_w;
	rows = var.yres / font_h;
	if (ioctl(tty, KDSETMODE, KD_GRAPHICS) < 0 || ioctl(kbd, EVIOCGRAB, 1) < 0) {
		perror("echofloor: taking tty1 (KD_GRAPHICS) or grabbing the keyboard");
		return 1;
	}
	ws.ws_col = (unsigned short)cols;
	ws.ws_row = (unsigned short)rows;
	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0 ||
	    ioctl(master, TIOCSWINSZ, &ws) < 0) {
		perror("echofloor: the pty");
		return 1;
	}
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	child = pty_session(master, argv + 5, "echofloor");
	if (child < 0)
		return 1;
	clear_screen();
	printf("echofloor: %ux%u cells on fb0 (%ux%u, %u bpp), session %d\n", cols, rows, var.xres,
	       var.yres, var.bits_per_pixel, (int)child);
	fflush(stdout);
	while (!stop) {
		struct pollfd p[2] = {{kbd, POLLIN, 0}, {master, POLLIN, 0}};
		struct input_event ev[16];
		ssize_t n;

		if (poll(p, 2, -1) < 0)
			continue;
		if (p[0].revents & POLLIN) {
			n = read(kbd, ev, sizeof(ev));
			for (ssize_t i = 0; n > 0 && i < n / (ssize_t)sizeof(ev[0]); i++) {
				int b;

				if (ev[i].type != EV_KEY)
					continue;
				if (ev[i].code == KEY_LEFTCTRL || ev[i].code == KEY_RIGHTCTRL)
					ctrl = ev[i].value != 0;
				else if (ev[i].value != 0 &&
					 (b = key_byte(ev[i].code, ctrl)) >= 0) {
					unsigned char c = (unsigned char)b;

					if (write(master, &c, 1) < 0)
						perror("echofloor: write to the pty");
				}
			}
		}
		if (p[1].revents & (POLLIN | POLLHUP)) {
			n = read(master, buf, sizeof(buf));
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0)
				break; /* EIO: the session closed its last slave fd */
			output(buf, (size_t)n);
		}
	}
	kill(-child, SIGTERM);
	waitpid(child, NULL, 0);
	ioctl(kbd, EVIOCGRAB, 0);
	ioctl(tty, KDSETMODE, KD_TEXT);
	printf("echofloor: done\n");
	return 0;
}
