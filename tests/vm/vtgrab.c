/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vtgrab: does to a VT what logind does for a compositor that calls
 * TakeControl on the VT's session, and what a compositor then does to the
 * screen, for the VM check vt-grab.
 *
 *     vtgrab take N LOG GOFILE
 *         Takes /dev/ttyN as logind's session_prepare_vt() does (KDSKBMODE
 *         K_OFF, KDSETMODE KD_GRAPHICS, VT_SETMODE VT_PROCESS with relsig
 *         SIGRTMIN and acqsig SIGRTMIN + 1, from this process), pans
 *         /dev/fb0 to the top and fills all of its memory with eight
 *         vertical stripes (at 8 bpp in colour map slots 1-8, which it
 *         sets), then prints "vtgrab: took ttyN" to stdout and "took" to
 *         LOG. It acknowledges VT switches as logind does (release:
 *         VT_RELDISP 1; acquire: VT_ACKACQ, and draws the stripes again).
 *         Once GOFILE exists (or on SIGTERM/SIGINT) it writes "inq N" to
 *         LOG, the bytes waiting in its stdin's input queue if stdin is a
 *         terminal (TIOCINQ; in canonical mode whole lines only), then gives
 *         the VT back as logind's vt_restore() does: KD_TEXT, the kernel's
 *         default keyboard mode (vt.default_utf8), VT_AUTO; and prints
 *         "vtgrab: gave ttyN back" and "restored" to LOG.
 *
 *     vtgrab logind LOG GOFILE
 *         What a compositor started from a login does: calls TakeControl on
 *         its own logind session (org.freedesktop.login1 session "self"),
 *         so logind prepares the session's VT, writes "taken" to LOG and
 *         "vtgrab: logind took the VT" to stdout; once GOFILE exists writes
 *         "inq N" as above and calls ReleaseControl (logind restores the
 *         VT), then "released".
 *
 *     vtgrab reset N
 *         Gives /dev/ttyN back as vt_restore() does, whoever holds it (the
 *         VM checks' cleanup after a failure).
 *
 *     vtgrab state N
 *         Prints the VT's mode: "mode=auto|process relsig=S acqsig=S
 *         kd=text|graphics kb=off|unicode|xlate|raw|mediumraw".
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fb.h>
#include <linux/kd.h>
#include <linux/vt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <systemd/sd-bus.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static int vt_fd = -1;
static FILE *log_file;
static volatile sig_atomic_t redraw, stop;

static __attribute__((noreturn)) void die(const char *what)
{
	fprintf(stderr, "vtgrab: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(log_file, fmt, ap);
	va_end(ap);
	fputc('\n', log_file);
	fflush(log_file);
}

static void on_release(int sig)
{
	(void)sig;
	ioctl(vt_fd, VT_RELDISP, 1);
}

static void on_acquire(int sig)
{
	(void)sig;
	ioctl(vt_fd, VT_RELDISP, VT_ACKACQ);
	redraw = 1;
}

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/* A colour in the device's pixel format: truecolour from the bitfields,
 * palette index `index` otherwise. */
static uint32_t pixel(const struct fb_var_screeninfo *var, unsigned r, unsigned g, unsigned b,
		      unsigned index)
{
	if (var->bits_per_pixel <= 8)
		return index;
	return (r >> (8 - var->red.length)) << var->red.offset |
	       (g >> (8 - var->green.length)) << var->green.offset |
	       (b >> (8 - var->blue.length)) << var->blue.offset;
}

static void draw(void)
{
	static const unsigned char colours[8][3] = {
	    {0xff, 0x00, 0x00}, {0x00, 0xff, 0x00}, {0x00, 0x00, 0xff}, {0xff, 0xff, 0x00},
	    {0x00, 0xff, 0xff}, {0xff, 0x00, 0xff}, {0xff, 0xff, 0xff}, {0x80, 0x40, 0x00},
	};
	struct fb_var_screeninfo var;
	struct fb_fix_screeninfo fix;
	unsigned bpp;
	uint8_t *mem;
	size_t len;
	int fd;

	fd = open("/dev/fb0", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die("open /dev/fb0");
	if (ioctl(fd, FBIOGET_VSCREENINFO, &var) < 0 || ioctl(fd, FBIOGET_FSCREENINFO, &fix) < 0)
		die("FBIOGET_*SCREENINFO");
	/* a compositor shows its own buffer: the window at the top */
	var.xoffset = 0;
	var.yoffset = 0;
	if (ioctl(fd, FBIOPAN_DISPLAY, &var) < 0)
		die("FBIOPAN_DISPLAY");
	if (fix.visual == FB_VISUAL_PSEUDOCOLOR) {
		/* its own colours in slots 1-8, as a program at 8 bpp sets them */
		uint16_t r[8], g[8], b[8];
		struct fb_cmap cmap = {.start = 1, .len = 8, .red = r, .green = g, .blue = b};

		for (unsigned i = 0; i < 8; i++) {
			r[i] = (uint16_t)(colours[i][0] * 0x101);
			g[i] = (uint16_t)(colours[i][1] * 0x101);
			b[i] = (uint16_t)(colours[i][2] * 0x101);
		}
		if (ioctl(fd, FBIOPUTCMAP, &cmap) < 0)
			die("FBIOPUTCMAP");
	}
	/*
	 * The picture goes out in one write(), not through a mapping: the
	 * fbdev emulation of DRM drivers (bochs-drm) flushes a mapping's dirty
	 * pages in batches, and Debian 12's kernel (6.1) drops a batch that is
	 * one page inside one scanline ending at the line's end (the damage
	 * clip comes out with x2 = 0; seen in QEMU: 4096 bytes written at
	 * offset 16384 of the 1280x800x32 bochs framebuffer never reach the
	 * screen). A mapping drawn top to bottom lost the end of its last line
	 * that way when a flush fell on the last page. One write() of every
	 * line is one damage clip of every line.
	 */
	mem = malloc(fix.smem_len);
	if (!mem)
		die("malloc");
	bpp = (var.bits_per_pixel + 7) / 8;
	for (size_t y = 0; y < fix.smem_len / fix.line_length; y++) {
		uint8_t *row = mem + y * fix.line_length;

		memset(row, 0, fix.line_length);
		for (unsigned x = 0; x < var.xres_virtual; x++) {
			unsigned i = x * 8 / var.xres;
			const unsigned char *c = colours[i < 8 ? i : 7];
			uint32_t p = pixel(&var, c[0], c[1], c[2], 1 + (i < 8 ? i : 7));

			for (unsigned k = 0; k < bpp; k++)
				row[x * bpp + k] = (uint8_t)(p >> (8 * k));
		}
	}
	len = fix.smem_len / fix.line_length * fix.line_length;
	for (size_t done = 0; done < len;) {
		ssize_t n = pwrite(fd, mem + done, len - done, (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("write /dev/fb0");
		done += (size_t)n;
	}
	free(mem);
	close(fd);
}

static int default_kbmode(void)
{
	char buf[8] = "1";
	FILE *f = fopen("/sys/module/vt/parameters/default_utf8", "re");

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '1';
		fclose(f);
	}
	return buf[0] == '0' ? K_XLATE : K_UNICODE;
}

/* Until GOFILE exists or SIGTERM/SIGINT; draws again after an acquire. */
static void wait_go(const char *go)
{
	while (!stop && access(go, F_OK) < 0) {
		struct timespec ts = {0, 50 * 1000 * 1000};

		if (redraw) {
			redraw = 0;
			draw();
			note("redrawn");
		}
		nanosleep(&ts, NULL);
	}
}

/* The bytes waiting in the input queue of stdin (the session's pty). */
static void note_inq(void)
{
	int inq = -1;

	if (isatty(STDIN_FILENO) && ioctl(STDIN_FILENO, TIOCINQ, &inq) < 0)
		inq = -1;
	note("inq %d", inq);
}

static void catch_stop(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	/* the session's end (its shell hung up) gives the VT back too */
	sigaction(SIGHUP, &sa, NULL);
}

static int session_call(sd_bus *bus, const char *method)
{
	sd_bus_error error = SD_BUS_ERROR_NULL;
	int r;

	r = sd_bus_call_method(bus, "org.freedesktop.login1",
			       "/org/freedesktop/login1/session/self",
			       "org.freedesktop.login1.Session", method, &error, NULL,
			       strcmp(method, "TakeControl") == 0 ? "b" : "", 0);
	if (r < 0) {
		fprintf(stderr, "vtgrab: %s: %s\n", method,
			error.message ? error.message : strerror(-r));
		note("%s failed: %s", method, error.message ? error.message : strerror(-r));
	}
	sd_bus_error_free(&error);
	return r;
}

static int control(const char *log_path, const char *go)
{
	sd_bus *bus = NULL;
	int r;

	log_file = fopen(log_path, "we");
	if (!log_file)
		die("open the log");
	catch_stop();
	r = sd_bus_open_system(&bus);
	if (r < 0) {
		errno = -r;
		die("connect to the system bus");
	}
	if (session_call(bus, "TakeControl") < 0)
		return 1;
	printf("vtgrab: logind took the VT\n");
	fflush(stdout);
	note("taken");
	wait_go(go);
	note_inq();
	if (session_call(bus, "ReleaseControl") < 0)
		return 1;
	note("released");
	sd_bus_flush_close_unref(bus);
	return 0;
}

/* logind's order (vt_restore) */
static void restore_vt(void)
{
	struct vt_mode mode = {.mode = VT_AUTO};

	if (ioctl(vt_fd, KDSETMODE, KD_TEXT) < 0)
		die("KDSETMODE KD_TEXT");
	if (ioctl(vt_fd, KDSKBMODE, default_kbmode()) < 0)
		die("KDSKBMODE");
	if (ioctl(vt_fd, VT_SETMODE, &mode) < 0)
		die("VT_SETMODE VT_AUTO");
}

static int take(const char *num, const char *log_path, const char *go)
{
	struct vt_mode mode = {.mode = VT_PROCESS};
	struct sigaction sa;
	char path[32];

	log_file = fopen(log_path, "we");
	if (!log_file)
		die("open the log");
	snprintf(path, sizeof(path), "/dev/tty%s", num);
	vt_fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (vt_fd < 0)
		die(path);

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_release;
	sigaction(SIGRTMIN, &sa, NULL);
	sa.sa_handler = on_acquire;
	sigaction(SIGRTMIN + 1, &sa, NULL);
	catch_stop();

	/* logind's order (session_prepare_vt) */
	if (ioctl(vt_fd, KDSKBMODE, K_OFF) < 0)
		die("KDSKBMODE K_OFF");
	if (ioctl(vt_fd, KDSETMODE, KD_GRAPHICS) < 0)
		die("KDSETMODE KD_GRAPHICS");
	mode.relsig = (short)SIGRTMIN;
	mode.acqsig = (short)(SIGRTMIN + 1);
	if (ioctl(vt_fd, VT_SETMODE, &mode) < 0)
		die("VT_SETMODE");
	draw();
	printf("vtgrab: took tty%s\n", num);
	fflush(stdout);
	note("took");

	wait_go(go);
	note_inq();

	restore_vt();
	printf("vtgrab: gave tty%s back\n", num);
	fflush(stdout);
	note("restored");
	return 0;
}

/* Gives the VT back as vt_restore() does, whoever holds it: the VM checks'
 * cleanup after a failed check (a vtgrab killed while holding the VT). */
static int reset(const char *num)
{
	char path[32];

	snprintf(path, sizeof(path), "/dev/tty%s", num);
	vt_fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (vt_fd < 0)
		die(path);
	restore_vt();
	return 0;
}

static int state(const char *num)
{
	static const char *const kb[] = {
	    [K_RAW] = "raw",	     [K_XLATE] = "xlate", [K_MEDIUMRAW] = "mediumraw",
	    [K_UNICODE] = "unicode", [K_OFF] = "off",
	};
	struct vt_mode mode;
	char path[32];
	int kd, kbmode;

	snprintf(path, sizeof(path), "/dev/tty%s", num);
	vt_fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (vt_fd < 0)
		die(path);
	if (ioctl(vt_fd, VT_GETMODE, &mode) < 0 || ioctl(vt_fd, KDGETMODE, &kd) < 0 ||
	    ioctl(vt_fd, KDGKBMODE, &kbmode) < 0)
		die("VT_GETMODE/KDGETMODE/KDGKBMODE");
	printf("mode=%s relsig=%d acqsig=%d kd=%s kb=%s\n",
	       mode.mode == VT_PROCESS ? "process"
	       : mode.mode == VT_AUTO  ? "auto"
				       : "other",
	       mode.relsig, mode.acqsig, kd == KD_TEXT ? "text" : "graphics",
	       kbmode >= 0 && kbmode <= K_OFF && kb[kbmode] ? kb[kbmode] : "other");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "take") == 0)
		return take(argv[2], argv[3], argv[4]);
	if (argc == 4 && strcmp(argv[1], "logind") == 0)
		return control(argv[2], argv[3]);
	if (argc == 3 && strcmp(argv[1], "state") == 0)
		return state(argv[2]);
	if (argc == 3 && strcmp(argv[1], "reset") == 0)
		return reset(argv[2]);
	fprintf(stderr,
		"usage: vtgrab take N LOG GOFILE | vtgrab logind LOG GOFILE | vtgrab state N"
		" | vtgrab reset N\n");
	return 2;
}
