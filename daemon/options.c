/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/config.h"
#include "devices/fbflush.h"
#include "options.h"
#include "screen/rotate.h"
#include "screen/scroll.h"
#include "terminal/bell.h"
#include "util/util.h"

/* getopt codes: one for each option that is not a setting, then
 * ARG_KEY + i for keys[i]. Every long option has a code of its own, so that
 * getopt_long() takes an abbreviation only when it is one option's ("--xkb-l"
 * is --xkb-layout) and calls one that several share ambiguous ("--xkb" may be
 * any of six): with one code for all of them it took the first match. */
enum {
	ARG_CONFIG = 0x100,
	ARG_LIST_BACKENDS,
	ARG_HELP,
	ARG_VERSION,
	ARG_KEY,
};

/*
 * Scrollback is memory that whoever logs in can make the daemon hold: every
 * line that scrolls off is kept as a whole row of cells, columns x 24 bytes
 * (libtsm 4's struct cell: code point, width, attributes, age). A 1920-pixel
 * wide screen with an 8-pixel font has 240 columns, 5.6 KiB a line, so
 * 100000 lines are about 550 MiB, and twice that at 3840 pixels: more than a
 * console should ever keep, and anything larger is a typo that would end
 * with the OOM killer.
 */
#define SB_SIZE_MAX 100000
#define IMAGE_MEMORY_MAX_MIB 4096

/*
 * The wait for a framebuffer at start comes before READY=1 (fbwait.h), so it
 * must end well before the unit's start timeout (TimeoutStartSec=, 90 s by
 * default): 10 s by default; longer waits need a longer timeout
 * (consoled(8)), and beyond 10 minutes it is a typo.
 */
#define FB_WAIT_DEFAULT 10
#define FB_WAIT_MAX 600

/* --blank: a day at most (the kernel's own setting is taken as it is). */
#define BLANK_MAX_SEC 86400

/*
 * Kernel messages in the band. 5 s: long enough to read two or three lines
 * of 80 columns, short enough that the session underneath is not hidden for
 * long; up to an hour for a screen nobody watches. 3 lines: on an 80x25
 * screen 12% of the rows, most events fbcon would show (a USB device, an
 * OOM kill with its victim, a filesystem turned read-only) are one to three
 * lines, and an oops of 30-50 lines is for the view anyway; up to 10.
 */
#define KMSG_TIME_DEFAULT 5
#define KMSG_TIME_MAX 3600
#define KMSG_LINES_DEFAULT 3

enum key_type {
	KEY_BOOL,     /* bool; given alone means yes */
	KEY_NOT_BOOL, /* bool, inverted: no-calibrate=yes clears calibrate */
	KEY_STRING,   /* char *, any value */
	KEY_PATH,     /* char *, not empty */
	KEY_NAME,     /* char *, not empty, no '/' */
	KEY_SEAT,     /* char *, a logind seat name (seat_name_is_valid()), not seat0 */
	KEY_UINT,     /* unsigned in [min, max] */
	KEY_VT,	      /* unsigned, options_parse_vt() */
	KEY_PALETTE,  /* enum palette_kind */
	KEY_SCROLL_MODE,
	KEY_ROTATE,	/* int, enum rotation: fbcon's 0-3 or degrees */
	KEY_LOGIN,	/* login_argv, split on whitespace */
	KEY_FACTOR,	/* double, a decimal number in [OPTIONS_MOUSE_SPEED_MIN, _MAX] */
	KEY_WORD_CHARS, /* char *, UTF-8 without controls, at most 64 characters */
	KEY_COLOR,	/* uint32_t 0xrrggbb from "#rrggbb"; min: its bit in colors_set */
	KEY_BELL,	/* int, enum bell_mode */
	KEY_FB_FLUSH,	/* int, enum fb_flush */
	KEY_KMSG_LEVEL, /* int: kernel (KMSG_LEVEL_KERNEL), off (0) or 0..KMSG_LEVEL_MAX */
	KEY_CURSOR,	/* enum stream_cursor_shape */
	KEY_FBDEV,	/* fbdev, fbdevs: paths separated by commas */
	KEY_SCREENS,	/* int, enum options_screens */
	KEY_FONT_SIZE,	/* font_size, font_sizes: points [min, max], separated by commas */
};

/* Every setting, once: its name on the command line and in the files, where
 * it goes in struct options and what it accepts. */
static const struct key {
	const char *name;
	enum key_type type;
	size_t offset;
	unsigned min, max;
	const char *expected; /* for the error message; KEY_UINT builds its own */
} keys[] = {
#define FIELD(f) offsetof(struct options, f)
    {"vt", KEY_VT, FIELD(vt), 0, 0, "expected N, ttyN or /dev/ttyN with N from 1 to 63"},
    {"switchvt", KEY_BOOL, FIELD(switchvt), 0, 0, NULL},
    {"seat", KEY_SEAT, FIELD(seat), 0, 0,
     "expected a seat name other than seat0: seat, then letters, digits, - and _"},
    {"terminals", KEY_UINT, FIELD(terminals), 1, OPTIONS_TERMINALS_MAX, NULL},
    {"fbdev", KEY_FBDEV, FIELD(fbdev), 0, 0,
     "expected all, or device paths separated by commas (at most 4)"},
    {"screens", KEY_SCREENS, FIELD(screens), 0, 0, "expected mirror or separate"},
    {"fb-wait", KEY_UINT, FIELD(fb_wait), 0, FB_WAIT_MAX, NULL},
    {"login", KEY_LOGIN, FIELD(login_argv), 0, 0, "expected a command"},
    {"term", KEY_NAME, FIELD(term), 0, 0, "expected a terminal name"},
    {"session-socket", KEY_PATH, FIELD(session_socket), 0, 0, "expected a socket path"},
    {"session-restore", KEY_BOOL, FIELD(session_restore), 0, 0, NULL},
    {"palette", KEY_PALETTE, FIELD(palette), 0, 0,
     "expected linux, xterm, vga, tango, solarized or solarized-light"},
    {"blank", KEY_UINT, FIELD(blank_sec), 0, BLANK_MAX_SEC, NULL},
    {"font-file", KEY_STRING, FIELD(font_file), 0, 0, NULL},
    {"font-name", KEY_STRING, FIELD(font_name), 0, 0, NULL},
    {"font-size", KEY_FONT_SIZE, FIELD(font_size), 1, 500,
     "expected points from 1 to 500, one per screen separated by commas (at most 4)"},
    {"font-dpi", KEY_UINT, FIELD(font_dpi), 0, 2400, NULL},
    {"xkb-model", KEY_STRING, FIELD(xkb_model), 0, 0, NULL},
    {"xkb-layout", KEY_STRING, FIELD(xkb_layout), 0, 0, NULL},
    {"xkb-variant", KEY_STRING, FIELD(xkb_variant), 0, 0, NULL},
    {"xkb-options", KEY_STRING, FIELD(xkb_options), 0, 0, NULL},
    {"xkb-repeat-delay", KEY_UINT, FIELD(repeat_delay_ms), 1, 10000, NULL},
    {"xkb-repeat-rate", KEY_UINT, FIELD(repeat_rate_hz), 0, 1000, NULL},
    {"sb-size", KEY_UINT, FIELD(sb_size), 0, SB_SIZE_MAX, NULL},
    {"image-memory", KEY_UINT, FIELD(image_memory_mib), 0, IMAGE_MEMORY_MAX_MIB, NULL},
    {"scroll-mode", KEY_SCROLL_MODE, FIELD(scroll_mode), 0, 0,
     "expected auto, pan, wrap, copy, redraw or shadow"},
    {"rotate", KEY_ROTATE, FIELD(rotate), 0, 0,
     "expected 0, 1, 2, 3, 90, 180 or 270, one per screen separated by commas (at most 4)"},
    {"fb-flush", KEY_FB_FLUSH, FIELD(fb_flush), 0, 0, "expected auto, map or write"},
    {"calibrate", KEY_BOOL, FIELD(calibrate), 0, 0, NULL},
    {"no-calibrate", KEY_NOT_BOOL, FIELD(calibrate), 0, 0, NULL},
    {"stats", KEY_BOOL, FIELD(stats), 0, 0, NULL},
    {"backend", KEY_NAME, FIELD(backend), 0, 0, "expected auto, none or a plugin name"},
    {"verbose", KEY_BOOL, FIELD(verbose), 0, 0, NULL},
    {"mouse", KEY_BOOL, FIELD(mouse), 0, 0, NULL},
    {"mouse-speed", KEY_FACTOR, FIELD(mouse_speed), 0, 0,
     "expected a decimal number from 0.1 to 20"},
    {"word-chars", KEY_WORD_CHARS, FIELD(word_chars), 0, 0,
     "expected up to 64 characters (UTF-8, no controls)"},
    {"compose-file", KEY_PATH, FIELD(compose_file), 0, 0, "expected a file name"},
    {"color0", KEY_COLOR, FIELD(colors[0]), 0, 0, "expected #rrggbb"},
    {"color1", KEY_COLOR, FIELD(colors[1]), 1, 0, "expected #rrggbb"},
    {"color2", KEY_COLOR, FIELD(colors[2]), 2, 0, "expected #rrggbb"},
    {"color3", KEY_COLOR, FIELD(colors[3]), 3, 0, "expected #rrggbb"},
    {"color4", KEY_COLOR, FIELD(colors[4]), 4, 0, "expected #rrggbb"},
    {"color5", KEY_COLOR, FIELD(colors[5]), 5, 0, "expected #rrggbb"},
    {"color6", KEY_COLOR, FIELD(colors[6]), 6, 0, "expected #rrggbb"},
    {"color7", KEY_COLOR, FIELD(colors[7]), 7, 0, "expected #rrggbb"},
    {"color8", KEY_COLOR, FIELD(colors[8]), 8, 0, "expected #rrggbb"},
    {"color9", KEY_COLOR, FIELD(colors[9]), 9, 0, "expected #rrggbb"},
    {"color10", KEY_COLOR, FIELD(colors[10]), 10, 0, "expected #rrggbb"},
    {"color11", KEY_COLOR, FIELD(colors[11]), 11, 0, "expected #rrggbb"},
    {"color12", KEY_COLOR, FIELD(colors[12]), 12, 0, "expected #rrggbb"},
    {"color13", KEY_COLOR, FIELD(colors[13]), 13, 0, "expected #rrggbb"},
    {"color14", KEY_COLOR, FIELD(colors[14]), 14, 0, "expected #rrggbb"},
    {"color15", KEY_COLOR, FIELD(colors[15]), 15, 0, "expected #rrggbb"},
    {"foreground", KEY_COLOR, FIELD(colors[OPTIONS_COLOR_FOREGROUND]), OPTIONS_COLOR_FOREGROUND, 0,
     "expected #rrggbb"},
    {"background", KEY_COLOR, FIELD(colors[OPTIONS_COLOR_BACKGROUND]), OPTIONS_COLOR_BACKGROUND, 0,
     "expected #rrggbb"},
    {"vcs", KEY_BOOL, FIELD(vcs), 0, 0, NULL},
    {"autologin", KEY_STRING, FIELD(autologin), 0, 0, NULL},
    {"bell", KEY_BELL, FIELD(bell), 0, 0, "expected visual, sound or none"},
    {"kernel-messages", KEY_KMSG_LEVEL, FIELD(kmsg_level), 0, 0,
     "expected kernel, off or a level from 0 to 8"},
    {"kernel-messages-time", KEY_UINT, FIELD(kmsg_time_sec), 1, KMSG_TIME_MAX, NULL},
    {"kernel-messages-lines", KEY_UINT, FIELD(kmsg_lines), 1, KMSG_BAND_LINES_MAX, NULL},
    {"cursor-shape", KEY_CURSOR, FIELD(cursor_shape), 0, 0, "expected block, underline or bar"},
    {"cursor-blink", KEY_BOOL, FIELD(cursor_blink), 0, 0, NULL},
#undef FIELD
};

const struct options_files options_system_files = {
    .config = "/etc/consoled/consoled.conf",
    .vconsole = "/etc/vconsole.conf",
    .default_keyboard = "/etc/default/keyboard",
    .kbd_model_map = "/usr/share/systemd/kbd-model-map",
};

size_t options_image_memory(unsigned mib, uint64_t cap)
{
	return (size_t)MIN((uint64_t)mib << 20, MIN(cap, (uint64_t)SIZE_MAX));
}

void options_help(FILE *f)
{
	fputs("Usage: consoled [OPTIONS] [--login -- COMMAND [ARGS...]]\n"
	      "\n"
	      "A console daemon: draws a terminal on a VT's framebuffer and runs a login\n"
	      "session on a pty.\n"
	      "\n"
	      "  --vt=N|ttyN|/dev/ttyN   VT to run on (default: the first free VT)\n"
	      "      --config=FILE       settings file (default: /etc/consoled/consoled.conf,\n"
	      "                          then its .d/*.conf; see consoled.conf(5))\n"
	      "      --switchvt          switch to that VT at start\n"
	      "      --seat=NAME         serve that seat without a VT (not seat0): its\n"
	      "                          framebuffer and input devices by udev's ID_SEAT\n"
	      "      --terminals=N       terminals on such a seat, Ctrl+Alt+F1..FN\n"
	      "                          (default: 6)\n"
	      "      --fbdev=/dev/fbN[,/dev/fbM...]|all  framebuffers, a screen each, at\n"
	      "                          most 4; all: every one of the seat, also those\n"
	      "                          that come later (default: the first one found;\n"
	      "                          with --seat, all)\n"
	      "      --screens=mirror|separate  several framebuffers show the same terminal,\n"
	      "                          or a terminal each (default: mirror)\n"
	      "      --fb-wait=SECONDS   wait that long for it at start, 0 = not at all;\n"
	      "                          less once udev's coldplug is done (default: 10)\n"
	      "      --login -- CMD ...  session to run (default: /bin/login -p)\n"
	      "      --term=NAME         TERM for the session (default: xterm-256color)\n"
	      "      --session-socket=PATH  start sessions through consoled-session(8)\n"
	      "                          listening there, not as consoled's children\n"
	      "      --session-restore=yes|no  keep the session and the screen over a\n"
	      "                          crash or restart under systemd (default: yes)\n"
	      "      --palette=NAME      the 16 colours and the default ones: linux, xterm,\n"
	      "                          vga, tango, solarized, solarized-light (default: linux)\n"
	      "      --blank=SECONDS     blank the screen after that long without input,\n"
	      "                          0 = never (default: the kernel's consoleblank=)\n"
	      "      --font-file=FILE    PSF1/PSF2 font (may be gzip'ed) or TTF/OTF font\n"
	      "                          (default: found by --font-name)\n"
	      "      --font-name=PATTERN fontconfig pattern (default: monospace; without\n"
	      "                          fonts: the built-in font)\n"
	      "      --font-size=POINTS[,POINTS...]  size of TTF/OTF fonts, per screen\n"
	      "                          (default: 12)\n"
	      "      --font-dpi=DPI      their resolution, 0 = from the screen's size, else\n"
	      "                          96 (default: 0)\n"
	      "      --xkb-model=M --xkb-layout=L --xkb-variant=V --xkb-options=O\n"
	      "                          keymap (default: /etc/vconsole.conf, else\n"
	      "                          /etc/default/keyboard, else vconsole.conf's\n"
	      "                          KEYMAP= converted, else layout us)\n"
	      "      --xkb-repeat-delay=MS  key repeat delay (default: 250)\n"
	      "      --xkb-repeat-rate=HZ   key repeat rate, 0 = off (default: 30)\n"
	      "      --sb-size=LINES     scrollback lines, at most 100000 (default: 1000)\n"
	      "      --image-memory=MIB  sixel images' pixels per session, at most 4096,\n"
	      "                          0 = no images (default: 32)\n"
	      "      --scroll-mode=auto|pan|wrap|copy|redraw|shadow\n"
	      "                          how scrolls reach the screen (default: auto)\n"
	      "      --rotate=0|1|2|3[,...]  turn the screen (a value per screen) as fbcon\n"
	      "                          numbers it: 1 = 90 degrees\n"
	      "                          clockwise, 2 = upside down, 3 = counter-clockwise;\n"
	      "                          or 90, 180, 270 (default: 0; Ctrl+Logo+Right,\n"
	      "                          Left and Up turn it at run time)\n"
	      "      --fb-flush=auto|map|write  how pixels reach a deferred-I/O framebuffer\n"
	      "                          (DRM fbdev emulation; default: auto)\n"
	      "      --no-calibrate      trust the device's capabilities, measure nothing\n"
	      "      --calibrate         measure them (the default)\n"
	      "      --stats             log drawing statistics at exit (always on SIGUSR1)\n"
	      "      --backend=auto|none|NAME  blitter plugin (default: auto)\n"
	      "      --list-backends     list the blitter plugins and exit\n"
	      "      --mouse=yes|no      use mice, tablets and touchscreens (default: yes)\n"
	      "      --mouse-speed=FACTOR  pointer speed of mice and touchpads, 0.1 to 20\n"
	      "                          (default: 1)\n"
	      "      --word-chars=CHARS  characters a double-click selects as part of a word\n"
	      "                          besides letters and digits (default: -_./~:@+%)\n"
	      "      --compose-file=FILE Compose sequences (default: the locale's table)\n"
	      "      --color0=#rrggbb ... --color15=#rrggbb  one of the 16 colours\n"
	      "      --foreground=#rrggbb --background=#rrggbb  the default colours\n"
	      "      --vcs=yes|no        mirror the text and cursor into the VT's screen\n"
	      "                          buffer for braille displays (default: yes)\n"
	      "      --bell=visual|sound|none  what BEL does: flash the screen, beep through\n"
	      "                          the PC speaker or KDMKTONE, nothing (default: visual)\n"
	      "      --kernel-messages=kernel|off|0..8  kernel messages shown over the\n"
	      "                          session: those below the kernel console's log\n"
	      "                          level, none, or those below a level (default:\n"
	      "                          kernel)\n"
	      "      --kernel-messages-time=SECONDS  how long one stays, 1 to 3600\n"
	      "                          (default: 5)\n"
	      "      --kernel-messages-lines=N  lines they take at the bottom, 1 to 10\n"
	      "                          (default: 3)\n"
	      "      --cursor-shape=block|underline|bar  the cursor's shape, which programs\n"
	      "                          may change (default: block)\n"
	      "      --cursor-blink=yes|no  whether it blinks; no also keeps the shapes\n"
	      "                          programs ask to blink steady (default: no)\n"
	      "      --verbose           debug messages\n"
	      "      --autologin=USER[@ttyN]  log USER in without a password, as\n"
	      "                          agetty --autologin (default login only)\n"
	      "  -h, --help              show this help\n"
	      "      --version           show the version\n"
	      "\n"
	      "Flags without a value also take =yes|no (true|false, on|off, 1|0).\n"
	      "A long option may be shortened to a beginning no other option has.\n",
	      f);
}

int options_parse_vt(const char *s, unsigned *ret)
{
	if (strncmp(s, "/dev/", 5) == 0)
		s += 5;
	if (strncmp(s, "tty", 3) == 0)
		s += 3;
	return parse_uint(s, 1, 63, ret);
}

/* A decimal number with a dot ("1", "0.5", "2.25"), whatever the locale. */
static int parse_factor(const char *s, double min, double max, double *ret)
{
	double v = 0, scale = 1;
	bool digits = false;

	for (; *s >= '0' && *s <= '9'; s++, digits = true)
		if (v < 1e6)
			v = v * 10 + (*s - '0');
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++, digits = true)
			v += (*s - '0') * (scale /= 10);
	if (!digits || *s != '\0' || v < min || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

int palette_kind_from_string(const char *s)
{
	static const char *const names[] = {
	    [PALETTE_LINUX] = "linux",
	    [PALETTE_XTERM] = "xterm",
	    [PALETTE_VGA] = "vga",
	    [PALETTE_TANGO] = "tango",
	    [PALETTE_SOLARIZED] = "solarized",
	    [PALETTE_SOLARIZED_LIGHT] = "solarized-light",
	};

	return string_table_lookup(names, ELEMENTSOF(names), s);
}

/* cursor-shape=: enum stream_cursor_shape, or -EINVAL. */
static int cursor_shape_from_string(const char *s)
{
	static const char *const names[] = {
	    [STREAM_CURSOR_BLOCK] = "block",
	    [STREAM_CURSOR_UNDERLINE] = "underline",
	    [STREAM_CURSOR_BAR] = "bar",
	};

	return string_table_lookup(names, ELEMENTSOF(names), s);
}

int options_parse_color(const char *s, uint32_t *ret)
{
	uint32_t v = 0;

	if (s[0] != '#' || strlen(s) != 7)
		return -EINVAL;
	for (unsigned i = 1; i < 7; i++) {
		int d = hex_value(s[i]);

		if (d < 0)
			return -EINVAL;
		v = v << 4 | (unsigned)d;
	}
	*ret = v;
	return 0;
}

static const struct key *key_find(const char *name)
{
	for (size_t i = 0; i < ELEMENTSOF(keys); i++)
		if (strcmp(keys[i].name, name) == 0)
			return &keys[i];
	return NULL;
}

static int parse_bool(const char *s, bool *ret)
{
	static const char *const yes[] = {"yes", "true", "on", "1"};
	static const char *const no[] = {"no", "false", "off", "0"};

	for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
		if (strcmp(s, yes[i]) == 0) {
			*ret = true;
			return 0;
		}
		if (strcmp(s, no[i]) == 0) {
			*ret = false;
			return 0;
		}
	}
	return -EINVAL;
}

static void free_strv(char **v)
{
	if (v)
		for (char **a = v; *a; a++)
			free(*a);
	free(v);
}

static void options_set_login(struct options *o, char *const *argv, size_t n)
{
	free_strv(o->login_argv);
	o->login_argv = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		o->login_argv[i] = xstrdup(argv[i]);
}

/* "login=/bin/login -p": words separated by blanks, no quoting, as kmscon. */
static int options_set_login_line(struct options *o, const char *value)
{
	_cleanup_(freep) char *copy = xstrdup(value);
	_cleanup_(freep) char **words = xcalloc(strlen(value) / 2 + 1, sizeof(char *));
	size_t n = 0;
	char *save = NULL;

	for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
		words[n++] = w;
	if (n == 0)
		return -EINVAL;
	options_set_login(o, words, n);
	return 0;
}

/* selection.h's word characters: UTF-8 (shortest forms), no C0 or C1
 * controls, no DEL, at most 64 characters (selection.c parses them again). */
static bool word_chars_valid(const char *v)
{
	const char *end = v + strlen(v);
	size_t n = 0;

	while (*v) {
		uint32_t cp;
		size_t len = utf8_get((const unsigned char *)v, (size_t)(end - v), &cp);

		if (len == 0 || ++n > 64 || cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
			return false;
		v += len;
	}
	return true;
}

int options_set(struct options *o, const char *key, const char *value, char *err, size_t err_size)
{
	const struct key *k = key_find(key);
	_cleanup_(freep) char *escaped = NULL;
	void *field;
	unsigned u;
	bool b;
	int m;

	if (!k) {
		_cleanup_(freep) char *e = cescape(key);

		snprintf(err, err_size, "unknown key '%s'", e);
		return -ENOENT;
	}
	field = (char *)o + k->offset;
	if (!value && k->type != KEY_BOOL && k->type != KEY_NOT_BOOL) {
		snprintf(err, err_size, "%s: needs a value", key);
		return -EINVAL;
	}

	switch (k->type) {
	case KEY_BOOL:
	case KEY_NOT_BOOL:
		b = true;
		if (value && parse_bool(value, &b) < 0)
			goto invalid;
		*(bool *)field = k->type == KEY_BOOL ? b : !b;
		return 0;
	case KEY_STRING:
	case KEY_PATH:
	case KEY_NAME:
		if (k->type != KEY_STRING && value[0] == '\0')
			goto invalid;
		if (k->type == KEY_NAME && strchr(value, '/'))
			goto invalid;
		free(*(char **)field);
		*(char **)field = xstrdup(value);
		return 0;
	case KEY_SEAT:
		/* logind's rule: "seat", then [A-Za-z0-9_-]; the name goes into
		 * paths under /run/systemd/seats and the sessions' XDG_SEAT */
		if (strncmp(value, "seat", 4) != 0 || strlen(value) > 255 ||
		    value[strspn(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					"0123456789-_")] != '\0' ||
		    strcmp(value, "seat0") == 0)
			goto invalid;
		free(*(char **)field);
		*(char **)field = xstrdup(value);
		return 0;
	case KEY_UINT:
		if (parse_uint(value, k->min, k->max, &u) < 0)
			goto invalid;
		*(unsigned *)field = u;
		return 0;
	case KEY_VT:
		if (options_parse_vt(value, &u) < 0)
			goto invalid;
		*(unsigned *)field = u;
		return 0;
	case KEY_PALETTE:
		m = palette_kind_from_string(value);
		if (m < 0)
			goto invalid;
		*(enum palette_kind *)field = (enum palette_kind)m;
		return 0;
	case KEY_SCROLL_MODE:
		m = scroll_mode_from_string(value);
		if (m < 0)
			goto invalid;
		*(int *)field = m;
		return 0;
	case KEY_ROTATE:
	case KEY_FONT_SIZE:
	case KEY_FBDEV: {
		/* one value per screen, separated by commas */
		_cleanup_(freep) char *copy = xstrdup(value);
		char *items[OPTIONS_SCREENS_MAX];
		unsigned n = 0, nums[OPTIONS_SCREENS_MAX];
		char *p = copy;

		for (;;) {
			char *comma = strchr(p, ',');

			if (comma)
				*comma = '\0';
			if (n == OPTIONS_SCREENS_MAX || *p == '\0')
				goto invalid;
			items[n] = p;
			if (k->type == KEY_ROTATE) {
				m = rotate_from_string(p);
				if (m < 0)
					goto invalid;
				nums[n] = (unsigned)m;
			} else if (k->type == KEY_FONT_SIZE &&
				   parse_uint(p, k->min, k->max, &nums[n]) < 0) {
				goto invalid;
			}
			n++;
			if (!comma)
				break;
			p = comma + 1;
		}
		if (k->type == KEY_FBDEV) {
			/* all: alone, the seat's framebuffers instead of a list */
			bool all = n == 1 && strcmp(items[0], "all") == 0;

			for (unsigned i = 0; i < n; i++)
				if (!all && strcmp(items[i], "all") == 0)
					goto invalid;
			for (unsigned i = 0; i < o->n_fbdevs; i++)
				free(o->fbdevs[i]);
			o->n_fbdevs = all ? 0 : n;
			for (unsigned i = 0; i < o->n_fbdevs; i++)
				o->fbdevs[i] = xstrdup(items[i]);
			o->fbdev = all ? NULL : o->fbdevs[0];
			o->fbdev_all = all;
		} else if (k->type == KEY_ROTATE) {
			for (unsigned i = 0; i < n; i++)
				o->rotates[i] = (int)nums[i];
			o->n_rotates = n;
			o->rotate = o->rotates[0];
		} else {
			for (unsigned i = 0; i < n; i++)
				o->font_sizes[i] = nums[i];
			o->n_font_sizes = n;
			o->font_size = o->font_sizes[0];
		}
		return 0;
	}
	case KEY_SCREENS:
		if (strcmp(value, "mirror") == 0)
			*(int *)field = OPTIONS_SCREENS_MIRROR;
		else if (strcmp(value, "separate") == 0)
			*(int *)field = OPTIONS_SCREENS_SEPARATE;
		else
			goto invalid;
		return 0;
	case KEY_LOGIN:
		if (options_set_login_line(o, value) < 0)
			goto invalid;
		return 0;
	case KEY_FACTOR: {
		double d;

		/* a little below the minimum: 0.1 is not exact in binary */
		if (parse_factor(value, OPTIONS_MOUSE_SPEED_MIN - 1e-9, OPTIONS_MOUSE_SPEED_MAX,
				 &d) < 0)
			goto invalid;
		*(double *)field = d;
		return 0;
	}
	case KEY_WORD_CHARS:
		if (!word_chars_valid(value))
			goto invalid;
		free(*(char **)field);
		*(char **)field = xstrdup(value);
		return 0;
	case KEY_COLOR: {
		uint32_t rgb;

		if (options_parse_color(value, &rgb) < 0)
			goto invalid;
		*(uint32_t *)field = rgb;
		o->colors_set |= UINT32_C(1) << k->min;
		return 0;
	}
	case KEY_BELL:
		m = bell_mode_from_string(value);
		if (m < 0)
			goto invalid;
		*(int *)field = m;
		return 0;
	case KEY_FB_FLUSH:
		m = fb_flush_from_string(value);
		if (m < 0)
			goto invalid;
		*(int *)field = m;
		return 0;
	case KEY_KMSG_LEVEL:
		if (strcmp(value, "kernel") == 0)
			*(int *)field = KMSG_LEVEL_KERNEL;
		else if (strcmp(value, "off") == 0)
			*(int *)field = 0;
		else if (parse_uint(value, 0, KMSG_LEVEL_MAX, &u) == 0)
			*(int *)field = (int)u;
		else
			goto invalid;
		return 0;
	case KEY_CURSOR:
		m = cursor_shape_from_string(value);
		if (m < 0)
			goto invalid;
		*(enum stream_cursor_shape *)field = (enum stream_cursor_shape)m;
		return 0;
	}

invalid:
	/* The value as it was written, but no control byte of it reaches the
	 * terminal or the journal that shows the message. */
	value = escaped = cescape(value);
	if (k->type == KEY_UINT)
		snprintf(err, err_size,
			 "%s: invalid value '%s': expected a whole number from %u to %u", key,
			 value, k->min, k->max);
	else
		snprintf(err, err_size, "%s: invalid value '%s': %s", key, value,
			 k->expected ? k->expected
				     : "expected yes, no, true, false, on, off, 1 or 0");
	return -EINVAL;
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("consoled: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'consoled --help' for more information.\n", stderr);
	return -EINVAL;
}

static const char *long_option_name(const struct option *lo, int val)
{
	for (; lo->name; lo++)
		if (lo->val == val)
			return lo->name;
	return "?";
}

/* What getopt_long() refused in arg (with opterr = 0 it says nothing): an
 * unknown option, an abbreviation that several options share (named as GNU
 * getopt names them), or a value given to an option that takes none. */
static int usage_error_refused(const struct option *lo, const char *arg, int optopt_)
{
	_cleanup_(freep) char *given = NULL, *e = NULL;
	char list[2048] = "";
	const char *name;
	size_t n = 0, len;

	if (optopt_ > 0 && optopt_ < ARG_CONFIG)
		return usage_error("unknown option '-%s'",
				   e = cescape((const char[]){(char)optopt_, '\0'}));
	if (optopt_ > 0) {
		name = long_option_name(lo, optopt_);
		if (strcmp(name, "login") == 0)
			return usage_error("option '--login' takes no value: the command follows "
					   "'--' (--login -- COMMAND [ARGS...])");
		return usage_error("option '--%s' takes no value", name);
	}
	if (strncmp(arg, "--", 2) != 0)
		return usage_error("unknown option '%s'", e = cescape(arg));
	given = xstrdup(arg + 2);
	given[strcspn(given, "=")] = '\0';
	len = strlen(given);
	for (; len > 0 && lo->name; lo++)
		if (strncmp(lo->name, given, len) == 0) {
			size_t used = strlen(list);

			snprintf(list + used, sizeof(list) - used, " '--%s'", lo->name);
			n++;
		}
	e = cescape(given);
	if (n > 1)
		return usage_error("option '--%s' is ambiguous; possibilities:%s", e, list);
	return usage_error("unknown option '--%s'", e);
}

static void options_init(struct options *o, enum options_action action)
{
	*o = (struct options){
	    .action = action,
	    .palette = PALETTE_LINUX,
	    .repeat_delay_ms = 250,
	    .repeat_rate_hz = 30,
	    .sb_size = 1000,
	    .image_memory_mib = IMAGE_MEMORY_DEFAULT_MIB,
	    .fb_wait = FB_WAIT_DEFAULT,
	    .terminals = OPTIONS_TERMINALS_DEFAULT,
	    .font_size = 12,
	    .scroll_mode = SCROLL_MODE_AUTO,
	    .calibrate = true,
	    .session_restore = true,
	    .blank_sec = OPTIONS_BLANK_KERNEL,
	    .mouse = true,
	    .mouse_speed = 1.0,
	    .vcs = true,
	    .bell = BELL_VISUAL,
	    .kmsg_level = KMSG_LEVEL_KERNEL,
	    .kmsg_time_sec = KMSG_TIME_DEFAULT,
	    .kmsg_lines = KMSG_LINES_DEFAULT,
	};
}

void options_fini(struct options *o)
{
	for (unsigned i = 0; i < o->n_fbdevs; i++)
		free(o->fbdevs[i]);
	free(o->seat);
	free(o->term);
	free(o->session_socket);
	free(o->font_file);
	free(o->font_name);
	free(o->backend);
	free(o->word_chars);
	free(o->compose_file);
	free(o->autologin);
	free(o->xkb_model);
	free(o->xkb_layout);
	free(o->xkb_variant);
	free(o->xkb_options);
	free_strv(o->login_argv);
	memset(o, 0, sizeof(*o));
}

/* The getopt table: every key, then the flags that are not settings. */
#define N_LONG_OPTIONS (ELEMENTSOF(keys) + 5)
static void options_fill_getopt(struct option lo[static N_LONG_OPTIONS])
{
	size_t n = 0;

	for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
		bool is_bool = keys[i].type == KEY_BOOL || keys[i].type == KEY_NOT_BOOL;
		/* --login -- COMMAND ARGS: the command is the rest of argv. */
		int has_arg = keys[i].type == KEY_LOGIN ? no_argument
			      : is_bool			? optional_argument
							: required_argument;

		lo[n++] = (struct option){keys[i].name, has_arg, NULL, ARG_KEY + (int)i};
	}
	lo[n++] = (struct option){"config", required_argument, NULL, ARG_CONFIG};
	lo[n++] = (struct option){"list-backends", no_argument, NULL, ARG_LIST_BACKENDS};
	lo[n++] = (struct option){"help", no_argument, NULL, ARG_HELP};
	lo[n++] = (struct option){"version", no_argument, NULL, ARG_VERSION};
	lo[n] = (struct option){};
}

/* config.c hands each setting of a file and of the keyboard settings here. */
static int options_set_from_file(void *userdata, const char *key, const char *value, char *err,
				 size_t err_size)
{
	return options_set(userdata, key, value, err, err_size);
}

/* A setting given on the command line, applied again over the files. */
struct setting {
	const char *key, *value;
};

int options_parse(int argc, char **argv, const struct options_files *files, struct options *ret)
{
	struct option lo[N_LONG_OPTIONS];
	struct options o;
	_cleanup_(freep) struct setting *cmdline = xcalloc((size_t)argc + 1, sizeof(*cmdline));
	const char *config = files ? files->config : NULL;
	size_t n_cmdline = 0;
	bool login = false, config_given = false;
	char err[256];
	int c, r;

	options_init(&o, OPTIONS_RUN);
	options_fill_getopt(lo);
	/* getopt keeps state between calls; tests call us more than once. */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:h", lo, NULL)) >= 0) {
		const struct key *k =
		    c >= ARG_KEY && c < ARG_KEY + (int)ELEMENTSOF(keys) ? &keys[c - ARG_KEY] : NULL;

		if (k && k->type == KEY_LOGIN) {
			login = true;
			continue;
		}
		if (k) {
			/* Applied now to check it, so that a usage error comes
			 * before any file is read. */
			r = options_set(&o, k->name, optarg, err, sizeof(err));
			if (r < 0) {
				r = usage_error("--%s", err);
				goto fail;
			}
			cmdline[n_cmdline++] = (struct setting){k->name, optarg};
			continue;
		}
		switch (c) {
		case ARG_CONFIG:
			if (optarg[0] == '\0') {
				r = usage_error("--config needs a file name");
				goto fail;
			}
			config = optarg;
			config_given = true;
			break;
		case ARG_LIST_BACKENDS:
			o.action = OPTIONS_LIST_BACKENDS;
			break;
		case 'h':
		case ARG_HELP:
			o.action = OPTIONS_HELP;
			break;
		case ARG_VERSION:
			o.action = OPTIONS_VERSION;
			break;
		case ':':
			r = usage_error("option '--%s' needs a value",
					long_option_name(lo, optopt));
			goto fail;
		default:
			r = usage_error_refused(lo, argv[optind - 1], optopt);
			goto fail;
		}
	}

	if (optind < argc) {
		/* "+" stops at the first non-option; only "--login -- CMD" or
		 * "-- CMD" may bring a command. getopt has eaten the "--". */
		if (!login && strcmp(argv[optind - 1], "--") != 0) {
			_cleanup_(freep) char *e = cescape(argv[optind]);

			r = usage_error("unexpected argument '%s' (use --login -- COMMAND)", e);
			goto fail;
		}
	} else if (login) {
		r = usage_error("--login needs a command after '--'");
		goto fail;
	}

	if (o.action == OPTIONS_HELP || o.action == OPTIONS_VERSION) {
		*ret = o;
		return 0;
	}

	if (config) {
		struct options merged;

		/* Files first, then the command line over them. Every setting
		 * was checked above and none depends on another, so none fails
		 * now. */
		options_init(&merged, o.action);
		r = config_load(config, config_given, options_set_from_file, &merged);
		if (r < 0) {
			_cleanup_(freep) char *e = cescape(config);

			fprintf(stderr, "consoled: --config=%s: cannot read it: %s\n", e,
				strerror(-r));
			options_fini(&merged);
			r = -EINVAL;
			goto fail;
		}
		for (size_t i = 0; i < n_cmdline; i++)
			(void)options_set(&merged, cmdline[i].key, cmdline[i].value, err,
					  sizeof(err));
		options_fini(&o);
		o = merged;
	}
	if (optind < argc)
		options_set_login(&o, argv + optind, (size_t)(argc - optind));
	if (files && o.action == OPTIONS_RUN && !o.xkb_model && !o.xkb_layout && !o.xkb_variant &&
	    !o.xkb_options)
		config_load_keyboard(files->vconsole, files->default_keyboard, files->kbd_model_map,
				     options_set_from_file, &o);

	if (!o.login_argv)
		options_set_login(&o, (char *[]){"/bin/login", "-p"}, 2);
	if (!o.term)
		o.term = xstrdup("xterm-256color");

	*ret = o;
	return 0;

fail:
	options_fini(&o);
	return r;
}
