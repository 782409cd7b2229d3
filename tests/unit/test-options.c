/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <unistd.h>

#include <libtsm.h>
#include <xkbcommon/xkbcommon-keysyms.h>

#include "../../daemon/terminal/bell.h"
#include "../../daemon/screen/blank.h"
#include "../../daemon/input/input.h"
#include "../../daemon/terminal/keys.h"
#include "../../daemon/terminal/term.h"
#include "../../daemon/terminal/tsmpeek.h"
#include "../../daemon/options.h"
#include "../../daemon/screen/rotate.h"
#include "../../daemon/screen/scroll.h"
#include "../../daemon/util/util.h"
#include "tests.h"

static int parse(struct options *o, const char *const *args)
{
	char *argv[32];
	int argc = 0;

	argv[argc++] = (char *)"consoled";
	for (; *args; args++)
		argv[argc++] = (char *)*args;
	argv[argc] = NULL;
	return options_parse(argc, argv, NULL, o);
}

static void test_defaults(void)
{
	struct options o;

	CHECK(parse(&o, (const char *const[]){NULL}) == 0);
	CHECK(o.action == OPTIONS_RUN);
	CHECK(o.vt == 0);
	CHECK(!o.switchvt);
	CHECK(o.fbdev == NULL);
	CHECK(strcmp(o.login_argv[0], "/bin/login") == 0);
	CHECK(strcmp(o.login_argv[1], "-p") == 0);
	CHECK(o.login_argv[2] == NULL);
	CHECK(strcmp(o.term, "xterm-256color") == 0);
	CHECK(o.palette == PALETTE_LINUX);
	CHECK(o.font_file == NULL);
	CHECK(o.font_name == NULL);
	CHECK_EQ_U(o.font_size, 12);
	CHECK_EQ_U(o.font_dpi, 0);
	CHECK_EQ_U(o.repeat_delay_ms, 250);
	CHECK_EQ_U(o.repeat_rate_hz, 30);
	CHECK_EQ_U(o.sb_size, 1000);
	CHECK_EQ_U(o.image_memory_mib, 32);
	CHECK_EQ_U(o.fb_wait, 10);
	options_fini(&o);
}

static void test_all_flags(void)
{
	struct options o;

	CHECK(parse(&o, (const char *const[]){"--vt=tty3",
					      "--switchvt",
					      "--fbdev=/dev/fb1",
					      "--term=linux",
					      "--palette=xterm",
					      "--font-file=/x.psf.gz",
					      "--xkb-model=pc105",
					      "--xkb-layout=de",
					      "--xkb-variant=nodeadkeys",
					      "--xkb-options=ctrl:nocaps",
					      "--xkb-repeat-delay=500",
					      "--xkb-repeat-rate=20",
					      "--sb-size=0",
					      "--image-memory=0",
					      "--verbose",
					      "--login",
					      "--",
					      "/bin/sh",
					      "-l",
					      NULL}) == 0);
	CHECK_EQ_U(o.vt, 3);
	CHECK(o.switchvt);
	CHECK(strcmp(o.fbdev, "/dev/fb1") == 0);
	CHECK(strcmp(o.term, "linux") == 0);
	CHECK(o.palette == PALETTE_XTERM);
	CHECK(strcmp(o.font_file, "/x.psf.gz") == 0);
	CHECK(strcmp(o.xkb_model, "pc105") == 0);
	CHECK(strcmp(o.xkb_layout, "de") == 0);
	CHECK(strcmp(o.xkb_variant, "nodeadkeys") == 0);
	CHECK(strcmp(o.xkb_options, "ctrl:nocaps") == 0);
	CHECK_EQ_U(o.repeat_delay_ms, 500);
	CHECK_EQ_U(o.repeat_rate_hz, 20);
	CHECK_EQ_U(o.sb_size, 0);
	CHECK_EQ_U(o.image_memory_mib, 0);
	CHECK(o.verbose);
	CHECK(strcmp(o.login_argv[0], "/bin/sh") == 0);
	CHECK(strcmp(o.login_argv[1], "-l") == 0);
	CHECK(o.login_argv[2] == NULL);
	options_fini(&o);
}

static void test_zoom_keys(void)
{
	int step = 42;

	CHECK(input_zoom_key(XKB_KEY_plus, TSM_CONTROL_MASK | TSM_SHIFT_MASK, &step) && step == 1);
	CHECK(input_zoom_key(XKB_KEY_equal, TSM_CONTROL_MASK, &step) && step == 1);
	CHECK(input_zoom_key(XKB_KEY_KP_Add, TSM_CONTROL_MASK, &step) && step == 1);
	CHECK(input_zoom_key(XKB_KEY_minus, TSM_CONTROL_MASK, &step) && step == -1);
	CHECK(input_zoom_key(XKB_KEY_KP_Subtract, TSM_CONTROL_MASK, &step) && step == -1);
	CHECK(input_zoom_key(XKB_KEY_0, TSM_CONTROL_MASK, &step) && step == 0);
	step = 42;
	CHECK(!input_zoom_key(XKB_KEY_plus, 0, &step));
	CHECK(!input_zoom_key(XKB_KEY_minus, TSM_CONTROL_MASK | TSM_ALT_MASK, &step));
	CHECK(!input_zoom_key(XKB_KEY_a, TSM_CONTROL_MASK, &step));
	CHECK(step == 42);
}

static void test_view_key(void)
{
	const unsigned cl = TSM_CONTROL_MASK | TSM_LOGO_MASK;

	CHECK(input_view_key(XKB_KEY_k, cl));
	CHECK(input_view_key(XKB_KEY_K, cl | KEYS_NUM_LOCK_MASK));
	/* Ctrl+K (kill to the line's end), Ctrl+Alt+K, Ctrl+Shift+K, Logo+K
	 * stay the session's */
	CHECK(!input_view_key(XKB_KEY_k, TSM_CONTROL_MASK));
	CHECK(!input_view_key(XKB_KEY_k, cl | TSM_ALT_MASK));
	CHECK(!input_view_key(XKB_KEY_K, cl | TSM_SHIFT_MASK));
	CHECK(!input_view_key(XKB_KEY_k, TSM_LOGO_MASK));
	CHECK(!input_view_key(XKB_KEY_j, cl));
}

static void test_rotate_keys(void)
{
	const unsigned cl = TSM_CONTROL_MASK | TSM_LOGO_MASK;
	int step = 42;

	CHECK(input_rotate_key(XKB_KEY_Right, cl, &step) && step == 1);
	CHECK(input_rotate_key(XKB_KEY_KP_Right, cl, &step) && step == 1);
	CHECK(input_rotate_key(XKB_KEY_Left, cl, &step) && step == -1);
	CHECK(input_rotate_key(XKB_KEY_Up, cl, &step) && step == 0);
	step = 42;
	/* what terminals send (Ctrl+Right, Ctrl+Alt+Right, Ctrl+Shift+Right)
	 * and Logo with more than Ctrl stays the session's */
	CHECK(!input_rotate_key(XKB_KEY_Right, TSM_CONTROL_MASK, &step));
	CHECK(!input_rotate_key(XKB_KEY_Right, TSM_CONTROL_MASK | TSM_ALT_MASK, &step));
	CHECK(!input_rotate_key(XKB_KEY_Right, TSM_CONTROL_MASK | TSM_SHIFT_MASK, &step));
	CHECK(!input_rotate_key(XKB_KEY_Right, TSM_LOGO_MASK, &step));
	CHECK(!input_rotate_key(XKB_KEY_Right, cl | TSM_ALT_MASK, &step));
	CHECK(!input_rotate_key(XKB_KEY_Right, cl | TSM_SHIFT_MASK, &step));
	CHECK(!input_rotate_key(XKB_KEY_Down, cl, &step));
	CHECK(step == 42);
}

static void test_vt_forms(void)
{
	unsigned v = 0;

	CHECK(options_parse_vt("7", &v) == 0 && v == 7);
	CHECK(options_parse_vt("tty12", &v) == 0 && v == 12);
	CHECK(options_parse_vt("/dev/tty63", &v) == 0 && v == 63);
	CHECK(options_parse_vt("0", &v) < 0);
	CHECK(options_parse_vt("64", &v) < 0);
	CHECK(options_parse_vt("tty", &v) < 0);
	CHECK(options_parse_vt("/dev/ttyS0", &v) < 0);
	CHECK(options_parse_vt("3x", &v) < 0);
	CHECK(options_parse_vt("-1", &v) < 0);
}

static void test_errors(void)
{
	static const char *const bad[][4] = {
	    {"--bogus", NULL},
	    {"--vt=0", NULL},
	    {"--vt=abc", NULL},
	    {"--vt", NULL},
	    {"--palette=solarised", NULL},
	    {"--palette=Solarized", NULL},
	    {"--color1=#12345", NULL},
	    {"--color1=#1234567", NULL},
	    {"--color1=123456", NULL},
	    {"--color1=#12345g", NULL},
	    {"--color16=#123456", NULL},
	    {"--foreground=red", NULL},
	    {"--background=", NULL},
	    {"--background", NULL},
	    {"--xkb-repeat-delay=0", NULL},
	    {"--xkb-repeat-delay=abc", NULL},
	    {"--xkb-repeat-rate=-1", NULL},
	    {"--sb-size=1e3", NULL},
	    {"--sb-size=100001", NULL},
	    {"--sb-size=4294967296", NULL},
	    {"--image-memory=4097", NULL},
	    {"--term=", NULL},
	    {"--fbdev=", NULL},
	    {"--login", NULL},
	    {"stray", NULL},
	    {"-x", NULL},
	    {"--switchvt=maybe", NULL},
	    {"--no-calibrate=2", NULL},
	    {"--config=", NULL},
	    {"--config", NULL},
	    {"--backend=../evil", NULL},
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct options o;
		int r = parse(&o, bad[i]);
		if (r != -EINVAL)
			fprintf(stderr, "accepted: %s\n", bad[i][0]);
		CHECK(r == -EINVAL);
	}
}

static void test_scroll_mode(void)
{
	static const char *const names[] = {"auto", "pan", "wrap", "copy", "redraw", "shadow"};
	struct options o;

	CHECK(parse(&o, (const char *const[]){NULL}) == 0);
	CHECK(o.scroll_mode == SCROLL_MODE_AUTO);
	CHECK(o.calibrate);
	CHECK(!o.stats);
	options_fini(&o);
	for (unsigned i = 0; i < 6; i++) {
		char arg[64];
		snprintf(arg, sizeof(arg), "--scroll-mode=%s", names[i]);
		CHECK(parse(&o, (const char *const[]){arg, "--no-calibrate", "--stats", NULL}) ==
		      0);
		CHECK(strcmp(scroll_mode_to_string(o.scroll_mode), names[i]) == 0);
		CHECK(!o.calibrate);
		CHECK(o.stats);
		options_fini(&o);
	}
	CHECK(parse(&o, (const char *const[]){"--scroll-mode=fast", NULL}) == -EINVAL);
	CHECK(parse(&o, (const char *const[]){"--scroll-mode=", NULL}) == -EINVAL);
	CHECK(parse(&o, (const char *const[]){"--scroll-mode", NULL}) == -EINVAL);
}

static void test_rotate(void)
{
	static const struct {
		const char *arg;
		int want;
	} cases[] = {
	    {"--rotate=0", ROTATE_UPRIGHT}, {"--rotate=1", ROTATE_CW},	{"--rotate=2", ROTATE_UD},
	    {"--rotate=3", ROTATE_CCW},	    {"--rotate=90", ROTATE_CW}, {"--rotate=180", ROTATE_UD},
	    {"--rotate=270", ROTATE_CCW},   {"--rotate=4", -EINVAL},	{"--rotate=45", -EINVAL},
	    {"--rotate=", -EINVAL},	    {"--rotate=cw", -EINVAL},	{"--rotate", -EINVAL},
	};
	struct options o;

	CHECK(parse(&o, (const char *const[]){NULL}) == 0);
	CHECK(o.rotate == ROTATE_UPRIGHT);
	options_fini(&o);
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		int r = parse(&o, (const char *const[]){cases[i].arg, NULL});

		if (cases[i].want < 0) {
			CHECK(r == -EINVAL);
			continue;
		}
		CHECK(r == 0);
		if (o.rotate != cases[i].want)
			fprintf(stderr, "%s gave %d\n", cases[i].arg, o.rotate);
		CHECK(o.rotate == cases[i].want);
		options_fini(&o);
	}
}

/* fbdev=, rotate= and font-size= take one value per screen, separated by
 * commas, at most OPTIONS_SCREENS_MAX; screens= mirror or separate. */
/* --seat: logind's seat names only (they go into /run/systemd/seats/NAME
 * and XDG_SEAT), never seat0 (it has VTs: consoled@ttyN serves it). */
static void test_seat(void)
{
	struct options o;

	CHECK(parse(&o, (const char *const[]){"--seat=seat1", "--terminals=3", NULL}) == 0);
	CHECK(strcmp(o.seat, "seat1") == 0 && o.terminals == 3);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){"--seat=seat-usb-pci-0000_00_14_0-usb-0_2", NULL}) ==
	      0);
	options_fini(&o);
	static const char *const bad[] = {
	    "--seat=seat0", "--seat=..", "--seat=seat/1", "--seat=seat 1", "--seat=seat1\n",
	    "--seat=1",	    "--seat=",	 "--seat=Seat1",  "--terminals=0", "--terminals=13",
	};
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		int r = parse(&o, (const char *const[]){bad[i], NULL});

		if (r != -EINVAL)
			fprintf(stderr, "%s: %d\n", bad[i], r);
		CHECK(r == -EINVAL);
		options_fini(&o);
	}
}

static void test_screens(void)
{
	struct options o;

	CHECK(parse(&o, (const char *const[]){NULL}) == 0);
	CHECK(o.n_fbdevs == 0 && o.fbdev == NULL && o.screens == OPTIONS_SCREENS_MIRROR);
	CHECK(options_rotate(&o, 1) == ROTATE_UPRIGHT && options_font_size(&o, 1) == 12);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){"--fbdev=/dev/fb0,/dev/fb1", "--screens=separate",
					      "--rotate=0,90", "--font-size=10,20,30", NULL}) == 0);
	CHECK(o.n_fbdevs == 2 && strcmp(o.fbdevs[0], "/dev/fb0") == 0 &&
	      strcmp(o.fbdevs[1], "/dev/fb1") == 0 && o.fbdev == o.fbdevs[0]);
	CHECK(o.screens == OPTIONS_SCREENS_SEPARATE);
	CHECK(o.rotate == ROTATE_UPRIGHT && options_rotate(&o, 0) == ROTATE_UPRIGHT &&
	      options_rotate(&o, 1) == ROTATE_CW && options_rotate(&o, 3) == ROTATE_CW);
	CHECK(o.font_size == 10 && options_font_size(&o, 1) == 20 &&
	      options_font_size(&o, 2) == 30 && options_font_size(&o, 3) == 30);
	options_fini(&o);
	/* the last one given wins whole */
	CHECK(parse(&o, (const char *const[]){"--fbdev=/dev/fb0,/dev/fb1", "--fbdev=/dev/fb2",
					      NULL}) == 0);
	CHECK(o.n_fbdevs == 1 && strcmp(o.fbdev, "/dev/fb2") == 0);
	CHECK(!o.fbdev_all && !options_fbdev_all(&o));
	options_fini(&o);
	/* all: the seat's framebuffers, no list; a list after it wins, and
	 * all after a list */
	CHECK(parse(&o, (const char *const[]){"--fbdev=/dev/fb0,/dev/fb1", "--fbdev=all", NULL}) ==
	      0);
	CHECK(o.fbdev_all && o.n_fbdevs == 0 && o.fbdev == NULL && options_fbdev_all(&o));
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){"--fbdev=all", "--fbdev=/dev/fb1", NULL}) == 0);
	CHECK(!options_fbdev_all(&o) && o.n_fbdevs == 1 && strcmp(o.fbdev, "/dev/fb1") == 0);
	options_fini(&o);
	/* a seat's default is all; a VT's is one framebuffer */
	CHECK(parse(&o, (const char *const[]){"--seat=seat1", NULL}) == 0);
	CHECK(!o.fbdev_all && options_fbdev_all(&o));
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){"--seat=seat1", "--fbdev=/dev/fb1", NULL}) == 0);
	CHECK(!options_fbdev_all(&o));
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){NULL}) == 0);
	CHECK(!options_fbdev_all(&o));
	options_fini(&o);
	static const char *const bad[] = {
	    "--fbdev=/dev/fb0,",    "--fbdev=,/dev/fb0",     "--fbdev=a,b,c,d,e",
	    "--fbdev=all,/dev/fb1", "--fbdev=/dev/fb0,all",  "--screens=clone",
	    "--screens=",	    "--rotate=0,,1",	     "--rotate=0,45",
	    "--font-size=12,0",	    "--font-size=1,2,3,4,5", "--font-size=12,x",
	};
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		int r = parse(&o, (const char *const[]){bad[i], NULL});

		if (r != -EINVAL)
			fprintf(stderr, "%s was taken\n", bad[i]);
		CHECK(r == -EINVAL);
	}
}

static void test_help_version(void)
{
	struct options o;

	CHECK(parse(&o, (const char *const[]){"--help", NULL}) == 0);
	CHECK(o.action == OPTIONS_HELP);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){"-h", NULL}) == 0);
	CHECK(o.action == OPTIONS_HELP);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){"--version", NULL}) == 0);
	CHECK(o.action == OPTIONS_VERSION);
	options_fini(&o);
}

static void test_command_without_login_flag(void)
{
	struct options o;

	CHECK(parse(&o, (const char *const[]){"--", "/bin/sh", NULL}) == 0);
	CHECK(strcmp(o.login_argv[0], "/bin/sh") == 0);
	options_fini(&o);
}

static void test_boolean_flags(void)
{
	struct options o;

	CHECK(parse(&o, (const char *const[]){"--switchvt=yes", "--stats=on", "--verbose=1",
					      "--no-calibrate=true", NULL}) == 0);
	CHECK(o.switchvt && o.stats && o.verbose && !o.calibrate);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){"--switchvt", "--switchvt=no", "--stats=off",
					      "--verbose=0", "--no-calibrate=false", NULL}) == 0);
	CHECK(!o.switchvt && !o.stats && !o.verbose && o.calibrate);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){"--no-calibrate", "--calibrate", NULL}) == 0);
	CHECK(o.calibrate);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){"--calibrate=no", NULL}) == 0);
	CHECK(!o.calibrate);
	options_fini(&o);
}

/* options_set() is what both the command line and the files go through: its
 * messages are what users read after "--" or "FILE:LINE: ". */
static void test_set_messages(void)
{
	struct options o;
	char err[256];

	CHECK(parse(&o, (const char *const[]){NULL}) == 0);
	CHECK(options_set(&o, "foo", "1", err, sizeof(err)) == -ENOENT);
	CHECK(strcmp(err, "unknown key 'foo'") == 0);
	CHECK(options_set(&o, "vt", NULL, err, sizeof(err)) == -EINVAL);
	CHECK(strcmp(err, "vt: needs a value") == 0);
	CHECK(options_set(&o, "vt", "99", err, sizeof(err)) == -EINVAL);
	CHECK(strcmp(err, "vt: invalid value '99': expected N, ttyN or /dev/ttyN with N from 1 "
			  "to 63") == 0);
	CHECK(options_set(&o, "sb-size", "-3", err, sizeof(err)) == -EINVAL);
	CHECK(strcmp(err, "sb-size: invalid value '-3': expected a whole number from 0 to "
			  "100000") == 0);
	CHECK(options_set(&o, "stats", "maybe", err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "stats: invalid value 'maybe': expected yes, no") == err);
	CHECK(options_set(&o, "login", " \t ", err, sizeof(err)) == -EINVAL);
	CHECK(strcmp(err, "login: invalid value ' \\t ': expected a command") == 0);
	/* A failed set changes nothing. */
	CHECK(o.vt == 0 && o.sb_size == 1000 && !o.stats);
	CHECK(strcmp(o.login_argv[0], "/bin/login") == 0);
	/* Settings that are not keys: actions and --config. */
	CHECK(options_set(&o, "help", NULL, err, sizeof(err)) == -ENOENT);
	CHECK(options_set(&o, "config", "/x", err, sizeof(err)) == -ENOENT);
	CHECK(options_set(&o, "list-backends", NULL, err, sizeof(err)) == -ENOENT);
	options_fini(&o);
}

/* parse() with what it writes to stderr in log (also echoed to the test's
 * stderr afterwards). */
static int parse_logged(struct options *o, const char *const *args, char *log, size_t size)
{
	FILE *f = tmpfile();
	int saved, r;
	size_t n;

	if (!f)
		abort();
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	if (saved < 0 || dup2(fileno(f), STDERR_FILENO) < 0)
		abort();
	r = parse(o, args);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(f);
	n = fread(log, 1, size - 1, f);
	log[n] = '\0';
	fclose(f);
	fputs(log, stderr);
	return r;
}

/* --fb-wait: seconds, 0 (no wait) to 600, a usage error beyond. */
static void test_fb_wait(void)
{
	static const char *const values[] = {"0", "1", "600"};
	struct options o;
	char log[512];

	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		char arg[32];

		snprintf(arg, sizeof(arg), "--fb-wait=%s", values[i]);
		CHECK(parse(&o, (const char *const[]){arg, NULL}) == 0);
		CHECK_EQ_U(o.fb_wait, (unsigned)atoi(values[i]));
		options_fini(&o);
	}
	CHECK(parse_logged(&o, (const char *const[]){"--fb-wait=601", NULL}, log, sizeof(log)) ==
	      -EINVAL);
	CHECK(strstr(log, "consoled: --fb-wait: invalid value '601': expected a whole number "
			  "from 0 to 600") != NULL);
	CHECK(parse_logged(&o, (const char *const[]){"--fb-wait", NULL}, log, sizeof(log)) ==
	      -EINVAL);
	CHECK(strstr(log, "option '--fb-wait' needs a value") != NULL);
	CHECK(parse(&o, (const char *const[]){"--fb-wait=-1", NULL}) == -EINVAL);
	CHECK(parse(&o, (const char *const[]){"--fb-wait=5s", NULL}) == -EINVAL);
	CHECK(parse(&o, (const char *const[]){"--fb-wait=", NULL}) == -EINVAL);
}

/* Session restore is on unless turned off, on the command line or in a
 * file (options_set() is what config.c calls for a line). */
/* About the lines of `cols` columns that fit `cap` bytes: libtsm's cell
 * (24 bytes on a 32-bit machine, 32 on a 64-bit one: tsm_age_t is
 * uint_fast32_t) and 16 bytes of the snapshot's a cell, and a little per
 * line. */
static bool sb_lines_near(unsigned n, unsigned cols, uint64_t cap)
{
	uint64_t cells = cap / ((uint64_t)cols * (sizeof(struct tsmpeek_cell) + 16));

	if (n <= cells && n >= cells * 95 / 100)
		return true;
	fprintf(stderr, "%u columns, %" PRIu64 " bytes: %u lines kept, about %" PRIu64 " fit\n",
		cols, cap, n, cells);
	return false;
}

/* The bounds that fit the machine (memory_cap()): sb-size='s lines at the
 * grid's width (term_sb_lines_fit()) and image-memory= in bytes
 * (options_image_memory()), for a 32-bit address space and small memories. */
static void test_memory_bounds(void)
{
	const uint64_t mib = 1u << 20, gib = UINT64_C(1) << 30;
	uint64_t cap;

	/* an eighth of the address space, a quarter of the memory */
	CHECK_EQ_U(memory_cap(0, UINT32_MAX), 512 * mib - 1);
	CHECK_EQ_U(memory_cap(64 * gib, UINT32_MAX), 512 * mib - 1);
	CHECK_EQ_U(memory_cap(256 * mib, UINT64_MAX), 64 * mib);
	CHECK_EQ_U(memory_cap(256 * mib, UINT32_MAX), 64 * mib);
	CHECK(memory_cap(0, UINT64_MAX) == UINT64_MAX / 8);
	CHECK(memory_physical() > 0);

	/* 100000 lines at 240 columns (1920 pixels, an 8-pixel font) are
	 * 940 MiB on a 32-bit machine: about 55000 fit its 512 MiB */
	cap = memory_cap(64 * gib, UINT32_MAX);
	CHECK(sb_lines_near(term_sb_lines_fit(100000, 240, cap), 240, cap));
	/* a board with 256 MiB: 64 MiB, about 7000 lines at 240 columns */
	cap = memory_cap(256 * mib, UINT32_MAX);
	CHECK(sb_lines_near(term_sb_lines_fit(100000, 240, cap), 240, cap));
	CHECK(sb_lines_near(term_sb_lines_fit(100000, 80, cap), 80, cap));
	/* what fits is kept whole: the default there, and 100000 lines on a
	 * 64-bit machine with 16 GiB */
	CHECK_EQ_U(term_sb_lines_fit(1000, 240, cap), 1000);
	CHECK_EQ_U(term_sb_lines_fit(100000, 240, memory_cap(16 * gib, UINT64_MAX)), 100000);
	CHECK_EQ_U(term_sb_lines_fit(0, 240, 0), 0);
	CHECK_EQ_U(term_sb_lines_fit(100000, 4096, 1000), 0);

	/* image-memory=4096 is 2^32 bytes: in a 32-bit size_t, 0 (no images
	 * at all); cut to the address space's eighth */
	CHECK_EQ_U(options_image_memory(4096, memory_cap(0, UINT32_MAX)), 512 * mib - 1);
	CHECK_EQ_U(options_image_memory(4096, memory_cap(0, SIZE_MAX)),
		   SIZE_MAX > UINT32_MAX ? 4096 * mib : 512 * mib - 1);
	CHECK_EQ_U(options_image_memory(32, memory_cap(256 * mib, UINT32_MAX)), 32 * mib);
	CHECK_EQ_U(options_image_memory(100, memory_cap(256 * mib, UINT32_MAX)), 64 * mib);
	CHECK_EQ_U(options_image_memory(0, memory_cap(0, SIZE_MAX)), 0);
}

/* size_mul3(): the glyph cache's size (render.c: 2048 cells of a cell's
 * bytes) and the font cache's (fontset.c) for a TrueType cell of 1000x2000
 * pixels at 32 bpp is 16 GB, which a 32-bit size_t wraps to 0. */
static void test_size_mul(void)
{
	size_t n = 7;

	CHECK(size_mul3(2048, 16 * 4, 32, &n));
	CHECK_EQ_U(n, 4u << 20);
	n = 7;
	if (SIZE_MAX <= UINT32_MAX) {
		CHECK(!size_mul3(2048, 1000 * 4, 2000, &n));
		CHECK(!size_mul3(65536, 65536, 1, &n));
		CHECK_EQ_U(n, 7);
		/* the largest that fits */
		CHECK(size_mul3(65535, 65537, 1, &n));
		CHECK_EQ_U(n, UINT32_MAX);
	} else {
		CHECK(size_mul3(2048, 1000 * 4, 2000, &n));
		CHECK_EQ_U(n, UINT64_C(16384000000));
	}
	CHECK(!size_mul3(SIZE_MAX / 2 + 1, 2, 1, &n));
	CHECK(!size_mul3(1, SIZE_MAX, 2, &n));
	CHECK(size_mul3(0, SIZE_MAX, 2, &n) && n == 0);
}

static void test_session_restore(void)
{
	struct options o;
	char err[256];

	CHECK(parse(&o, (const char *const[]){NULL}) == 0);
	CHECK(o.session_restore);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){"--session-restore=no", NULL}) == 0);
	CHECK(!o.session_restore);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){"--session-restore=off", "--session-restore",
					      NULL}) == 0);
	CHECK(o.session_restore);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){"--session-restore=later", NULL}) == -EINVAL);

	CHECK(parse(&o, (const char *const[]){NULL}) == 0);
	CHECK(options_set(&o, "session-restore", "false", err, sizeof(err)) == 0);
	CHECK(!o.session_restore);
	CHECK(options_set(&o, "session-restore", "maybe", err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "session-restore: invalid value 'maybe'") == err);
	CHECK(!o.session_restore);
	options_fini(&o);
}

/* text written to fd (from open() or mkstemp(): -1 fails), which is closed. */
static bool write_close(int fd, const char *text)
{
	size_t n = strlen(text);
	bool ok = fd >= 0 && write(fd, text, n) == (ssize_t)n;

	if (fd >= 0)
		close(fd);
	return ok;
}

/* text in a new file made from the mkstemp() template conf, and
 * "--config=FILE" in config_arg; false (a failed check) if it cannot be. */
static bool write_config(char *conf, const char *text, char *config_arg, size_t size)
{
	bool made = write_close(mkstemp(conf), text);

	CHECK(made);
	if (made)
		snprintf(config_arg, size, "--config=%s", conf);
	return made;
}

/* Scrollback is memory the session can make the daemon hold: the largest
 * sb-size is taken, one more is a usage error on the command line and a
 * skipped line (with file:line) in a configuration file. */
static void test_sb_size_bound(void)
{
	static const char text[] = "term=t\nsb-size=100001\n";
	char conf[] = "/tmp/test-options-XXXXXX", log[4096], config_arg[64];
	struct options o;

	CHECK(parse(&o, (const char *const[]){"--sb-size=100000", NULL}) == 0);
	CHECK_EQ_U(o.sb_size, 100000);
	options_fini(&o);

	CHECK(parse_logged(&o, (const char *const[]){"--sb-size=100001", NULL}, log, sizeof(log)) ==
	      -EINVAL);
	CHECK(strstr(log, "consoled: --sb-size: invalid value '100001': expected a whole number "
			  "from 0 to 100000\n") != NULL);

	if (!write_config(conf, text, config_arg, sizeof(config_arg)))
		return;
	CHECK(parse_logged(&o, (const char *const[]){config_arg, NULL}, log, sizeof(log)) == 0);
	CHECK(strstr(log, ":2: sb-size: invalid value '100001': expected a whole number from 0 "
			  "to 100000, ignoring.") != NULL);
	CHECK_EQ_U(o.sb_size, 1000);
	CHECK(strcmp(o.term, "t") == 0);
	options_fini(&o);
	unlink(conf);
}

/* --blank / blank=: unset means the kernel's setting, which comes from its
 * sysfs file (0 when that cannot be read); a file sets it, the command line
 * wins, 0 is never, past a day is refused. */
static void test_blank(void)
{
	static const char text[] = "blank=600\n";
	char conf[] = "/tmp/test-options-XXXXXX", kernel[] = "/tmp/test-blank-XXXXXX";
	char config_arg[64], log[4096], err[256];
	struct options o;
	bool made;

	CHECK(parse(&o, (const char *const[]){NULL}) == 0);
	CHECK_EQ_U(o.blank_sec, OPTIONS_BLANK_KERNEL);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){"--blank=3", NULL}) == 0);
	CHECK_EQ_U(o.blank_sec, 3);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){"--blank=0", NULL}) == 0);
	CHECK_EQ_U(o.blank_sec, 0);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){"--blank=86400", NULL}) == 0);
	CHECK_EQ_U(o.blank_sec, 86400);
	options_fini(&o);
	CHECK(parse_logged(&o, (const char *const[]){"--blank=86401", NULL}, log, sizeof(log)) ==
	      -EINVAL);
	CHECK(strstr(log,
		     "consoled: --blank: invalid value '86401': expected a whole number from 0 "
		     "to 86400\n") != NULL);
	CHECK(parse(&o, (const char *const[]){"--blank=soon", NULL}) == -EINVAL);
	CHECK(parse(&o, (const char *const[]){"--blank", NULL}) == -EINVAL);

	CHECK(parse(&o, (const char *const[]){NULL}) == 0);
	CHECK(options_set(&o, "blank", "-1", err, sizeof(err)) == -EINVAL);
	CHECK_EQ_U(o.blank_sec, OPTIONS_BLANK_KERNEL);
	CHECK(options_set(&o, "blank", "60", err, sizeof(err)) == 0);
	CHECK_EQ_U(o.blank_sec, 60);
	options_fini(&o);

	if (!write_config(conf, text, config_arg, sizeof(config_arg)))
		return;
	CHECK(parse(&o, (const char *const[]){config_arg, NULL}) == 0);
	CHECK_EQ_U(o.blank_sec, 600);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){config_arg, "--blank=0", NULL}) == 0);
	CHECK_EQ_U(o.blank_sec, 0);
	options_fini(&o);
	unlink(conf);

	/* the kernel's setting, as /sys/module/kernel/parameters/consoleblank
	 * shows it */
	made = write_close(mkstemp(kernel), "600\n");
	CHECK(made);
	if (!made)
		return;
	CHECK_EQ_U(blank_kernel_timeout(kernel), 600);
	CHECK(write_close(open(kernel, O_WRONLY | O_TRUNC | O_CLOEXEC), "0\n"));
	CHECK_EQ_U(blank_kernel_timeout(kernel), 0);
	CHECK(write_close(open(kernel, O_WRONLY | O_TRUNC | O_CLOEXEC), "junk\n"));
	CHECK_EQ_U(blank_kernel_timeout(kernel), 0);
	unlink(kernel);
	CHECK_EQ_U(blank_kernel_timeout(kernel), 0);
}

/* --mouse, --mouse-speed and their keys; input_scale_abs() (the absolute
 * pointer's axis to a pixel). */
/* --word-chars (selection.h): UTF-8 without controls, up to 64 characters */
static void test_word_chars(void)
{
	static const char *const bad[] = {
	    "a\tb",
	    "\xc3",
	    "\xc2\x9b",
	    "\x7f",
	    "\xe0\x80\x80",
	    "\xed\xa0\x80",
	    "0123456789012345678901234567890123456789012345678901234567890123+"};
	struct options o;
	char err[256];

	CHECK(parse(&o, (const char *const[]){NULL}) == 0);
	CHECK(o.word_chars == NULL);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){"--word-chars=-_.=\xc3\xa9\xe2\x82\xac", NULL}) == 0);
	CHECK(o.word_chars && strcmp(o.word_chars, "-_.=\xc3\xa9\xe2\x82\xac") == 0);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){"--word-chars=", NULL}) == 0);
	CHECK(o.word_chars && strcmp(o.word_chars, "") == 0);
	options_fini(&o);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(parse(&o, (const char *const[]){NULL}) == 0);
		CHECK(options_set(&o, "word-chars", bad[i], err, sizeof(err)) == -EINVAL);
		CHECK(strstr(err, "expected up to 64 characters") != NULL);
		CHECK(o.word_chars == NULL);
		options_fini(&o);
	}
}

static void test_mouse(void)
{
	static const char text[] = "mouse=no\nmouse-speed=2.5\n";
	char conf[] = "/tmp/test-options-XXXXXX";
	char config_arg[64], log[4096], err[256];
	struct options o;
	bool made;

	CHECK(parse(&o, (const char *const[]){NULL}) == 0);
	CHECK(o.mouse);
	CHECK(o.mouse_speed == 1.0);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){"--mouse=no", "--mouse-speed=0.5", NULL}) == 0);
	CHECK(!o.mouse);
	CHECK(o.mouse_speed == 0.5);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){"--mouse", "--mouse-speed=20", NULL}) == 0);
	CHECK(o.mouse);
	CHECK(o.mouse_speed == 20.0);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){"--mouse-speed=0.1", NULL}) == 0);
	CHECK(o.mouse_speed > 0.0999 && o.mouse_speed < 0.1001);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){"--mouse-speed=3", NULL}) == 0);
	CHECK(o.mouse_speed == 3.0);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){"--mouse-speed=.25", NULL}) == 0);
	CHECK(o.mouse_speed == 0.25);
	options_fini(&o);
	CHECK(parse_logged(&o, (const char *const[]){"--mouse-speed=1,5", NULL}, log,
			   sizeof(log)) == -EINVAL);
	CHECK(strstr(log, "consoled: --mouse-speed: invalid value '1,5': expected a decimal "
			  "number from 0.1 to 20\n") != NULL);
	static const char *const bad[] = {"0", "0.09", "20.01", "21",  "-1", "",
					  ".", "x",    "1.5x",	"1e1", " 1"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(parse(&o, (const char *const[]){NULL}) == 0);
		CHECK(options_set(&o, "mouse-speed", bad[i], err, sizeof(err)) == -EINVAL);
		CHECK(o.mouse_speed == 1.0);
		options_fini(&o);
	}
	CHECK(parse(&o, (const char *const[]){"--mouse=maybe", NULL}) == -EINVAL);

	made = write_close(mkstemp(conf), text);
	CHECK(made);
	if (made) {
		snprintf(config_arg, sizeof(config_arg), "--config=%s", conf);
		CHECK(parse(&o, (const char *const[]){config_arg, NULL}) == 0);
		CHECK(!o.mouse);
		CHECK(o.mouse_speed == 2.5);
		options_fini(&o);
		CHECK(parse(&o, (const char *const[]){config_arg, "--mouse=yes", NULL}) == 0);
		CHECK(o.mouse);
		CHECK(o.mouse_speed == 2.5);
		options_fini(&o);
		unlink(conf);
	}

	/* QEMU's usb-tablet: 0..32767 over 1280 pixels, 25.6 values each */
	CHECK_EQ_U(input_scale_abs(0, 0, 32767, 1280), 0);
	CHECK_EQ_U(input_scale_abs(25, 0, 32767, 1280), 0);
	CHECK_EQ_U(input_scale_abs(26, 0, 32767, 1280), 1);
	CHECK_EQ_U(input_scale_abs(32767, 0, 32767, 1280), 1279);
	/* out of range: clamped; a range with an offset; a bad range */
	CHECK_EQ_U(input_scale_abs(40000, 0, 32767, 1280), 1279);
	CHECK_EQ_U(input_scale_abs(-5, 0, 32767, 1280), 0);
	CHECK_EQ_U(input_scale_abs(100, 100, 299, 10), 0);
	CHECK_EQ_U(input_scale_abs(299, 100, 299, 10), 9);
	CHECK_EQ_U(input_scale_abs(120, 100, 299, 10), 1);
	CHECK_EQ_U(input_scale_abs(5, 5, 5, 10), 0);
	CHECK_EQ_U(input_scale_abs(5, 0, 10, 0), 0);
	/* the VM harness's value for pixel p (the middle of its share) */
	for (unsigned p = 0; p < 1280; p++)
		CHECK_EQ_U(input_scale_abs((int)((2 * p + 1) * 32768 / (2 * 1280)), 0, 32767, 1280),
			   p);
}

/* A touchpad's axes and a wheel's reports as uinput lets a device declare
 * and send them: ranges and motion past an int, reversed and empty ranges,
 * wheel sums far past a notch (input.h's pure helpers, which
 * pointer_report() computes with). */
static void test_pointer_math(void)
{
	int rest;

	/* units per mm: the resolution, else the range over 100 mm */
	CHECK(input_touchpad_units_per_mm(0, 999, 0) == 10.0);
	CHECK(input_touchpad_units_per_mm(0, 999, 40) == 40.0);
	CHECK(input_touchpad_units_per_mm(INT_MIN, INT_MAX, 0) == (double)(4294967296.0 / 100));
	CHECK(input_touchpad_units_per_mm(5, 5, 0) == (double)0.01);
	/* no measure: reversed or empty ranges (INT_MAX..INT_MIN wrapped
	 * to an int range of 2) */
	CHECK(input_touchpad_units_per_mm(0, -1, 0) == 0);
	CHECK(input_touchpad_units_per_mm(10, 0, 0) == 0);
	CHECK(input_touchpad_units_per_mm(INT_MAX, INT_MIN, 0) == 0);
	CHECK(input_touchpad_units_per_mm(INT_MAX, INT_MIN, -3) == 0);
	CHECK(input_touchpad_units_per_mm(INT_MAX, INT_MIN, 7) == 7.0);

	/* pixels: 8 a mm at speed 1 */
	CHECK(input_touchpad_pixels(0, 10, 10.0, 1.0) == 8.0);
	CHECK(input_touchpad_pixels(10, 0, 10.0, 2.5) == -20.0);
	/* across the whole int range: no wrap to -1 */
	CHECK(input_touchpad_pixels(INT_MIN, INT_MAX, 4294967296.0 / 100, 1.0) > 799.99);
	CHECK(input_touchpad_pixels(INT_MAX, INT_MIN, 4294967296.0 / 100, 1.0) < -799.99);
	CHECK(input_touchpad_pixels(INT_MIN, INT_MAX, 1.0, 20.0) == 4294967295.0 * 160);
	/* no measure, or nonsense: no motion (never a NaN) */
	CHECK(input_touchpad_pixels(0, 100, 0, 1.0) == 0);
	CHECK(input_touchpad_pixels(0, 100, -1.0, 1.0) == 0);
	CHECK(input_touchpad_pixels(0, 100, NAN, 1.0) == 0);
	CHECK(input_touchpad_pixels(0, 100, 1e-320, 1e300) == 0);

	/* the wheel: whole notches, the rest kept */
	rest = 0;
	CHECK(input_wheel_notches(&rest, 0) == 0 && rest == 0);
	CHECK(input_wheel_notches(&rest, 60) == 0 && rest == 60);
	CHECK(input_wheel_notches(&rest, 60) == 1 && rest == 0);
	CHECK(input_wheel_notches(&rest, 3 * 120) == 3 && rest == 0);
	CHECK(input_wheel_notches(&rest, 100) == 0 && rest == 100);
	/* the other way starts from a whole notch */
	CHECK(input_wheel_notches(&rest, -60) == 0 && rest == -60);
	CHECK(input_wheel_notches(&rest, -180) == -2 && rest == 0);
	/* at most 100 notches a report, whatever the sum (and then no rest) */
	CHECK(input_wheel_notches(&rest, 100 * 120) == 100 && rest == 0);
	CHECK(input_wheel_notches(&rest, 100 * 120 + 7) == 100 && rest == 7);
	CHECK(input_wheel_notches(&rest, 101 * 120) == 100 && rest == 0);
	CHECK(input_wheel_notches(&rest, (int64_t)INT_MAX * 120) == 100 && rest == 0);
	CHECK(input_wheel_notches(&rest, INT64_MAX) == 100 && rest == 0);
	CHECK(input_wheel_notches(&rest, (int64_t)INT_MIN * 120) == -100 && rest == 0);
	CHECK(input_wheel_notches(&rest, INT64_MIN) == -100 && rest == 0);
	CHECK(input_wheel_notches(&rest, -119) == 0 && rest == -119);
	CHECK(input_wheel_notches(&rest, INT64_MIN) == -100 && rest == 0);
}

/* --bell / bell= (bell.h): visual by default; a bad value on the command
 * line is a usage error, in a file a warning and the default. */
static void test_bell(void)
{
	static const char text[] = "bell=sound\nbell=loud\n";
	char conf[] = "/tmp/test-options-XXXXXX";
	char config_arg[64], log[4096], err[256];
	struct options o;

	CHECK(parse(&o, (const char *const[]){NULL}) == 0);
	CHECK(o.bell == BELL_VISUAL);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){"--bell=none", NULL}) == 0);
	CHECK(o.bell == BELL_NONE);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){"--bell=sound", "--bell=visual", NULL}) == 0);
	CHECK(o.bell == BELL_VISUAL);
	options_fini(&o);
	CHECK(parse_logged(&o, (const char *const[]){"--bell=beep", NULL}, log, sizeof(log)) ==
	      -EINVAL);
	CHECK(strstr(log, "consoled: --bell: invalid value 'beep': expected visual, sound or "
			  "none\n") != NULL);
	CHECK(parse(&o, (const char *const[]){"--bell", NULL}) == -EINVAL);
	CHECK(parse(&o, (const char *const[]){NULL}) == 0);
	CHECK(options_set(&o, "bell", "", err, sizeof(err)) == -EINVAL);
	CHECK(options_set(&o, "bell", "SOUND", err, sizeof(err)) == -EINVAL);
	CHECK(o.bell == BELL_VISUAL);
	options_fini(&o);

	if (!write_config(conf, text, config_arg, sizeof(config_arg)))
		return;
	CHECK(parse_logged(&o, (const char *const[]){config_arg, NULL}, log, sizeof(log)) == 0);
	CHECK(strstr(log, ":2: bell: invalid value 'loud': expected visual, sound or none, "
			  "ignoring.") != NULL);
	CHECK(o.bell == BELL_SOUND);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){config_arg, "--bell=none", NULL}) == 0);
	CHECK(o.bell == BELL_NONE);
	options_fini(&o);
	unlink(conf);
}

/* cursor-shape= and cursor-blink=: a steady block by default; a bad shape
 * on the command line is a usage error, in a file a warning. */
static void test_cursor(void)
{
	static const char text[] = "cursor-shape=underline\ncursor-shape=beam\ncursor-blink=yes\n";
	char conf[] = "/tmp/test-options-XXXXXX";
	char config_arg[64], log[4096];
	struct options o;

	CHECK(parse(&o, (const char *const[]){NULL}) == 0);
	CHECK(o.cursor_shape == STREAM_CURSOR_BLOCK && !o.cursor_blink);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){"--cursor-shape=bar", "--cursor-blink", NULL}) == 0);
	CHECK(o.cursor_shape == STREAM_CURSOR_BAR && o.cursor_blink);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){"--cursor-shape=underline", "--cursor-blink=no",
					      NULL}) == 0);
	CHECK(o.cursor_shape == STREAM_CURSOR_UNDERLINE && !o.cursor_blink);
	options_fini(&o);
	CHECK(parse_logged(&o, (const char *const[]){"--cursor-shape=Block", NULL}, log,
			   sizeof(log)) == -EINVAL);
	CHECK(strstr(log, "consoled: --cursor-shape: invalid value 'Block': expected block, "
			  "underline or bar\n") != NULL);
	CHECK(parse(&o, (const char *const[]){"--cursor-shape", NULL}) == -EINVAL);

	if (!write_config(conf, text, config_arg, sizeof(config_arg)))
		return;
	CHECK(parse_logged(&o, (const char *const[]){config_arg, NULL}, log, sizeof(log)) == 0);
	CHECK(strstr(log, ":2: cursor-shape: invalid value 'beam': expected block, underline or "
			  "bar, ignoring.") != NULL);
	CHECK(o.cursor_shape == STREAM_CURSOR_UNDERLINE && o.cursor_blink);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){config_arg, "--cursor-shape=block", NULL}) == 0);
	CHECK(o.cursor_shape == STREAM_CURSOR_BLOCK && o.cursor_blink);
	options_fini(&o);
	unlink(conf);
}

/* kernel-messages=: kernel, off or a level; its time and lines, bounded;
 * a bad line in a file is skipped, the good ones apply. */
static void test_kernel_messages(void)
{
	static const char text[] = "kernel-messages=9\nkernel-messages=6\n"
				   "kernel-messages-time=0\nkernel-messages-lines=7\n";
	static const struct {
		const char *arg;
		int level;
	} good[] = {
	    {"--kernel-messages=kernel", KMSG_LEVEL_KERNEL},
	    {"--kernel-messages=off", 0},
	    {"--kernel-messages=0", 0},
	    {"--kernel-messages=1", 1},
	    {"--kernel-messages=4", 4},
	    {"--kernel-messages=8", 8},
	};
	static const char *const bad[] = {"9", "-1", "Kernel", "", "4x", "on", "no", "08x"};
	char conf[] = "/tmp/test-options-XXXXXX";
	char config_arg[64], log[4096], err[256];
	struct options o;

	CHECK(parse(&o, (const char *const[]){NULL}) == 0);
	CHECK(o.kmsg_level == KMSG_LEVEL_KERNEL);
	CHECK_EQ_U(o.kmsg_time_sec, 5);
	CHECK_EQ_U(o.kmsg_lines, 3);
	options_fini(&o);
	for (size_t i = 0; i < ELEMENTSOF(good); i++) {
		CHECK(parse(&o, (const char *const[]){"--kernel-messages=2", good[i].arg, NULL}) ==
		      0);
		if (o.kmsg_level != good[i].level) {
			fprintf(stderr, "%s: level %d, want %d\n", good[i].arg, o.kmsg_level,
				good[i].level);
			tests_failed = 1;
		}
		options_fini(&o);
	}
	CHECK(parse(&o, (const char *const[]){NULL}) == 0);
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		char want[128];

		CHECK(options_set(&o, "kernel-messages", bad[i], err, sizeof(err)) == -EINVAL);
		snprintf(want, sizeof(want),
			 "kernel-messages: invalid value '%s': expected kernel, off or a level "
			 "from 0 to 8",
			 bad[i]);
		if (strcmp(err, want) != 0) {
			fprintf(stderr, "got '%s', want '%s'\n", err, want);
			tests_failed = 1;
		}
	}
	CHECK(o.kmsg_level == KMSG_LEVEL_KERNEL);
	CHECK(options_set(&o, "kernel-messages", NULL, err, sizeof(err)) == -EINVAL);
	CHECK(options_set(&o, "kernel-messages-time", "3600", err, sizeof(err)) == 0);
	CHECK_EQ_U(o.kmsg_time_sec, 3600);
	CHECK(options_set(&o, "kernel-messages-time", "1", err, sizeof(err)) == 0);
	CHECK_EQ_U(o.kmsg_time_sec, 1);
	CHECK(options_set(&o, "kernel-messages-lines", "10", err, sizeof(err)) == 0);
	CHECK_EQ_U(o.kmsg_lines, 10);
	CHECK(options_set(&o, "kernel-messages-lines", "1", err, sizeof(err)) == 0);
	CHECK_EQ_U(o.kmsg_lines, 1);
	options_fini(&o);

	CHECK(parse_logged(&o, (const char *const[]){"--kernel-messages-time=0", NULL}, log,
			   sizeof(log)) == -EINVAL);
	CHECK(strstr(log, "consoled: --kernel-messages-time: invalid value '0': expected a whole "
			  "number from 1 to 3600\n") != NULL);
	CHECK(parse_logged(&o, (const char *const[]){"--kernel-messages-time=3601", NULL}, log,
			   sizeof(log)) == -EINVAL);
	CHECK(parse_logged(&o, (const char *const[]){"--kernel-messages-lines=11", NULL}, log,
			   sizeof(log)) == -EINVAL);
	CHECK(strstr(log, "consoled: --kernel-messages-lines: invalid value '11': expected a "
			  "whole number from 1 to 10\n") != NULL);
	CHECK(parse_logged(&o, (const char *const[]){"--kernel-messages-lines=0", NULL}, log,
			   sizeof(log)) == -EINVAL);
	CHECK(parse_logged(&o, (const char *const[]){"--kernel-messages=debug", NULL}, log,
			   sizeof(log)) == -EINVAL);
	CHECK(strstr(log, "consoled: --kernel-messages: invalid value 'debug': expected kernel, "
			  "off or a level from 0 to 8\n") != NULL);

	if (!write_config(conf, text, config_arg, sizeof(config_arg)))
		return;
	CHECK(parse_logged(&o, (const char *const[]){config_arg, NULL}, log, sizeof(log)) == 0);
	CHECK(strstr(log, ":1: kernel-messages: invalid value '9': expected kernel, off or a "
			  "level from 0 to 8, ignoring.") != NULL);
	CHECK(strstr(log, ":3: kernel-messages-time: invalid value '0'") != NULL);
	CHECK(o.kmsg_level == 6);
	CHECK_EQ_U(o.kmsg_time_sec, 5);
	CHECK_EQ_U(o.kmsg_lines, 7);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){config_arg, "--kernel-messages=off", NULL}) == 0);
	CHECK(o.kmsg_level == 0);
	options_fini(&o);
	unlink(conf);
}

/* Expects args to be refused with a message containing want (and, with
 * not_want, not that). */
static void check_refused(const char *const *args, const char *want, const char *not_want)
{
	struct options o;
	char log[4096];
	int r = parse_logged(&o, args, log, sizeof(log));

	CHECK(r == -EINVAL);
	if (r == 0)
		options_fini(&o);
	if (!strstr(log, want) || (not_want && strstr(log, not_want))) {
		fprintf(stderr, "%s: want '%s'%s%s%s, got: %s\n", args[0], want,
			not_want ? " without '" : "", not_want ? not_want : "", not_want ? "'" : "",
			log);
		tests_failed = 1;
	}
}

/* An abbreviation is taken when one option has it, and refused, naming the
 * options, when several share it (as GNU getopt and systemd's tools do):
 * with one getopt code for all the settings glibc took the first match. */
static void test_abbreviations(void)
{
	struct options o;

	/* --xkb-model was set, and the system's keymap then skipped */
	check_refused((const char *const[]){"--xkb=de", NULL},
		      "consoled: option '--xkb' is ambiguous; possibilities: '--xkb-model' "
		      "'--xkb-layout' '--xkb-variant' '--xkb-options' '--xkb-repeat-delay' "
		      "'--xkb-repeat-rate'\n",
		      NULL);
	/* was "--color0: invalid value 'red'" */
	check_refused((const char *const[]){"--color=red", NULL},
		      "option '--color' is ambiguous; possibilities: '--color0' '--color1' "
		      "'--color2' '--color3' '--color4' '--color5' '--color6' '--color7' "
		      "'--color8' '--color9' '--color10' '--color11' '--color12' '--color13' "
		      "'--color14' '--color15'\n",
		      "invalid value");
	/* was --font-file=--fb-wait=0 */
	check_refused((const char *const[]){"--font", "--fb-wait=0", NULL},
		      "option '--font' is ambiguous; possibilities: '--font-file' '--font-name' "
		      "'--font-size' '--font-dpi'\n",
		      NULL);
	check_refused((const char *const[]){"--fb=1", NULL},
		      "option '--fb' is ambiguous; possibilities: '--fbdev' '--fb-wait' "
		      "'--fb-flush'\n",
		      NULL);
	check_refused((const char *const[]){"--ver", NULL},
		      "option '--ver' is ambiguous; possibilities: '--verbose' '--version'\n",
		      NULL);
	check_refused((const char *const[]){"--bogus=1", NULL}, "unknown option '--bogus'\n", NULL);
	check_refused((const char *const[]){"--=1", NULL}, "unknown option '--'\n", NULL);

	/* One option's prefix is that option. */
	CHECK(parse(&o, (const char *const[]){"--xkb-l=de", "--sw", "--font-n=Mono", "--hel",
					      NULL}) == 0);
	CHECK(o.xkb_layout && strcmp(o.xkb_layout, "de") == 0);
	CHECK(o.xkb_model == NULL);
	CHECK(o.switchvt);
	CHECK(o.font_name && strcmp(o.font_name, "Mono") == 0);
	CHECK(o.action == OPTIONS_HELP);
	options_fini(&o);
	/* A whole name is that option, even where it begins longer ones. */
	CHECK(parse(&o, (const char *const[]){"--color1=#010203", "--mouse=no", "--calibrate=no",
					      NULL}) == 0);
	CHECK((o.colors_set & (1u << 1)) && o.colors_set == 1u << 1);
	CHECK_EQ_U(o.colors[1], 0x010203);
	CHECK(!o.mouse && !o.calibrate);
	options_fini(&o);
}

/* An option that takes no value, given one, says so (not "unknown option");
 * one that needs a value names itself in full. */
static void test_no_value(void)
{
	check_refused((const char *const[]){"--login=/bin/bash", NULL},
		      "consoled: option '--login' takes no value: the command follows '--' "
		      "(--login -- COMMAND [ARGS...])\n",
		      "unknown");
	check_refused((const char *const[]){"--help=yes", NULL},
		      "consoled: option '--help' takes no value\n", "unknown");
	check_refused((const char *const[]){"--hel=yes", NULL},
		      "consoled: option '--help' takes no value\n", "unknown");
	check_refused((const char *const[]){"--version=1", NULL},
		      "consoled: option '--version' takes no value\n", "unknown");
	check_refused((const char *const[]){"--list-backends=x", NULL},
		      "consoled: option '--list-backends' takes no value\n", "unknown");
	check_refused((const char *const[]){"--fbd", NULL},
		      "consoled: option '--fbdev' needs a value\n", NULL);
	check_refused((const char *const[]){"-x", NULL}, "consoled: unknown option '-x'\n", NULL);
}

/* Whatever a value or an option holds, the message shows it escaped: no
 * control byte (C0, DEL, C1 as UTF-8 or alone) or broken UTF-8 reaches the
 * terminal or the journal. */
static void test_escaped_messages(void)
{
	struct options o;
	char log[4096];

	check_refused((const char *const[]){"--vt=\033[2J\a\xc2\x9b"
					    "1m\x9b\xff\\x",
					    NULL},
		      "--vt: invalid value '\\x1b[2J\\x07\\xc2\\x9b1m\\x9b\\xff\\\\x': expected",
		      NULL);
	check_refused((const char *const[]){"--\033]0;title\a=1", NULL},
		      "unknown option '--\\x1b]0;title\\x07'\n", NULL);
	check_refused((const char *const[]){"--sb-size=1\n<3>forged", NULL},
		      "--sb-size: invalid value '1\\n<3>forged'", NULL);
	check_refused((const char *const[]){"\033c", NULL}, "unexpected argument '\\x1bc'", NULL);
	check_refused((const char *const[]){"-\033", NULL}, "unknown option '-\\x1b'", NULL);
	/* printable UTF-8 stays as it is */
	check_refused((const char *const[]){"--vt=\xc3\xa9t\xc3\xa9", NULL},
		      "--vt: invalid value '\xc3\xa9t\xc3\xa9'", NULL);
	for (const char *const *a = (const char *const[]){"--vt=\033[2J\a\xc2\x9b\x9b", "--\033c",
							  "--sb-size=1\r\n", "\033c", NULL};
	     *a; a++) {
		CHECK(parse_logged(&o, (const char *const[]){*a, NULL}, log, sizeof(log)) ==
		      -EINVAL);
		for (const char *p = log; *p; p++)
			if (((unsigned char)*p < 0x20 && *p != '\n') || *p == 0x7f ||
			    ((unsigned char)p[0] == 0xc2 && (unsigned char)p[1] >= 0x80 &&
			     (unsigned char)p[1] < 0xa0) ||
			    ((unsigned char)*p >= 0x80 && (unsigned char)*p < 0xc0)) {
				fprintf(stderr, "raw byte 0x%02x in the message for an argument\n",
					(unsigned char)*p);
				tests_failed = 1;
				break;
			}
	}
}

/* A file of the source tree, read whole (NULL if it cannot be). */
static char *read_source(const char *name)
{
	char path[512], *buf = NULL;
	size_t size = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", SOURCE_ROOT, name);
	f = fopen(path, "re");
	if (!f) {
		perror(path);
		return NULL;
	}
	if (getdelim(&buf, &size, '\0', f) < 0) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* The statuses a unit lists on its line KEY= ("\nKEY="), into listed[];
 * how many. */
static unsigned unit_statuses(const char *unit, const char *key, bool listed[256])
{
	const char *line = strstr(unit, key);
	unsigned n = 0;

	memset(listed, 0, 256 * sizeof(*listed));
	CHECK(line);
	if (!line)
		return 0;
	line += strlen(key);
	for (const char *p = line; *p && *p != '\n';) {
		char *e;
		long v = strtol(p, &e, 10);

		if (e == p) {
			fprintf(stderr, "%s: not a number at '%.10s'\n", key + 1, p);
			tests_failed = 1;
			break;
		}
		if (v > 0 && v < 256 && !listed[v]) {
			listed[v] = true;
			n++;
		}
		p = e + strspn(e, " \t");
	}
	return n;
}

/* The permanent exit statuses (options.h) are exactly those the units list
 * in RestartPreventExitStatus= (else systemd restarts consoled into the
 * same error five times before getty gets the VT); consoled-seat@.service
 * lists the seat's removal (EXIT_SEAT_GONE) there too, and as a success;
 * consoled(8)'s EXIT STATUS describes every status there is. */
static void test_exit_statuses(void)
{
	static const int permanent[] = {EXIT_USAGE, EXIT_NO_FRAMEBUFFER, EXIT_NO_VT,
					EXIT_NO_SESSION_HELPER, EXIT_FONT_TOO_LARGE};
	_cleanup_(freep) char *unit = read_source("systemd/consoled@.service.in");
	_cleanup_(freep) char *seat_unit = read_source("systemd/consoled-seat@.service.in");
	_cleanup_(freep) char *man = read_source("man/consoled.8");
	bool listed[256], seat_listed[256];
	const char *section, *end;
	unsigned n, seat_n;

	CHECK(unit && seat_unit && man);
	if (!unit || !seat_unit || !man)
		return;
	n = unit_statuses(unit, "\nRestartPreventExitStatus=", listed);
	seat_n = unit_statuses(seat_unit, "\nRestartPreventExitStatus=", seat_listed);
	for (size_t i = 0; i < ELEMENTSOF(permanent); i++)
		if (!listed[permanent[i]] || !seat_listed[permanent[i]]) {
			fprintf(stderr,
				"exit status %d is not in RestartPreventExitStatus= of both"
				" units\n",
				permanent[i]);
			tests_failed = 1;
		}
	CHECK_EQ_U(n, ELEMENTSOF(permanent));
	CHECK(seat_listed[EXIT_SEAT_GONE]);
	CHECK_EQ_U(seat_n, ELEMENTSOF(permanent) + 1);
	CHECK_EQ_U(unit_statuses(seat_unit, "\nSuccessExitStatus=", seat_listed), 1);
	CHECK(seat_listed[EXIT_SEAT_GONE]);

	section = strstr(man, "\n.SH EXIT STATUS\n");
	CHECK(section);
	if (!section)
		return;
	end = strstr(section + 1, "\n.SH ");
	for (int status = 0; status <= EXIT_SEAT_GONE; status++) {
		char want[32];
		const char *at;

		snprintf(want, sizeof(want), "\n.TP\n.B %d\n", status);
		at = strstr(section, want);
		if (!at || (end && at > end)) {
			fprintf(stderr, "consoled(8) EXIT STATUS does not describe %d\n", status);
			tests_failed = 1;
		}
	}
}

int main(void)
{
	RUN(test_defaults);
	RUN(test_blank);
	RUN(test_all_flags);
	RUN(test_vt_forms);
	RUN(test_zoom_keys);
	RUN(test_rotate_keys);
	RUN(test_view_key);
	RUN(test_errors);
	RUN(test_scroll_mode);
	RUN(test_rotate);
	RUN(test_screens);
	RUN(test_seat);
	RUN(test_help_version);
	RUN(test_command_without_login_flag);
	RUN(test_boolean_flags);
	RUN(test_fb_wait);
	RUN(test_set_messages);
	RUN(test_sb_size_bound);
	RUN(test_memory_bounds);
	RUN(test_size_mul);
	RUN(test_session_restore);
	RUN(test_mouse);
	RUN(test_pointer_math);
	RUN(test_word_chars);
	RUN(test_bell);
	RUN(test_cursor);
	RUN(test_kernel_messages);
	RUN(test_abbreviations);
	RUN(test_no_value);
	RUN(test_escaped_messages);
	RUN(test_exit_statuses);
	return TESTS_RESULT();
}
