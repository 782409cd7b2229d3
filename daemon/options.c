/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "scroll.h"
#include "util/util.h"

enum {
	ARG_VT = 0x100,
	ARG_SWITCHVT,
	ARG_FBDEV,
	ARG_LOGIN,
	ARG_TERM,
	ARG_PALETTE,
	ARG_FONT_FILE,
	ARG_XKB_MODEL,
	ARG_XKB_LAYOUT,
	ARG_XKB_VARIANT,
	ARG_XKB_OPTIONS,
	ARG_XKB_REPEAT_DELAY,
	ARG_XKB_REPEAT_RATE,
	ARG_SB_SIZE,
	ARG_SCROLL_MODE,
	ARG_NO_CALIBRATE,
	ARG_STATS,
	ARG_BACKEND,
	ARG_LIST_BACKENDS,
	ARG_VERBOSE,
	ARG_HELP,
	ARG_VERSION,
};

static const struct option long_options[] = {
    {"vt", required_argument, NULL, ARG_VT},
    {"switchvt", no_argument, NULL, ARG_SWITCHVT},
    {"fbdev", required_argument, NULL, ARG_FBDEV},
    {"login", no_argument, NULL, ARG_LOGIN},
    {"term", required_argument, NULL, ARG_TERM},
    {"palette", required_argument, NULL, ARG_PALETTE},
    {"font-file", required_argument, NULL, ARG_FONT_FILE},
    {"xkb-model", required_argument, NULL, ARG_XKB_MODEL},
    {"xkb-layout", required_argument, NULL, ARG_XKB_LAYOUT},
    {"xkb-variant", required_argument, NULL, ARG_XKB_VARIANT},
    {"xkb-options", required_argument, NULL, ARG_XKB_OPTIONS},
    {"xkb-repeat-delay", required_argument, NULL, ARG_XKB_REPEAT_DELAY},
    {"xkb-repeat-rate", required_argument, NULL, ARG_XKB_REPEAT_RATE},
    {"sb-size", required_argument, NULL, ARG_SB_SIZE},
    {"scroll-mode", required_argument, NULL, ARG_SCROLL_MODE},
    {"no-calibrate", no_argument, NULL, ARG_NO_CALIBRATE},
    {"stats", no_argument, NULL, ARG_STATS},
    {"backend", required_argument, NULL, ARG_BACKEND},
    {"list-backends", no_argument, NULL, ARG_LIST_BACKENDS},
    {"verbose", no_argument, NULL, ARG_VERBOSE},
    {"help", no_argument, NULL, ARG_HELP},
    {"version", no_argument, NULL, ARG_VERSION},
    {}};

void options_help(FILE *f)
{
	fputs("Usage: consoled [OPTIONS] [--login -- COMMAND [ARGS...]]\n"
	      "\n"
	      "A console daemon: draws a terminal on a VT's framebuffer and runs a login\n"
	      "session on a pty.\n"
	      "\n"
	      "  --vt=N|ttyN|/dev/ttyN   VT to run on (default: the first free VT)\n"
	      "      --switchvt          switch to that VT at start\n"
	      "      --fbdev=/dev/fbN    framebuffer (default: the first one found)\n"
	      "      --login -- CMD ...  session to run (default: /bin/login -p)\n"
	      "      --term=NAME         TERM for the session (default: xterm-256color)\n"
	      "      --palette=linux|xterm  the 16 colours (default: linux)\n"
	      "      --font-file=FILE    PSF1/PSF2 font, may be gzip'ed (default: built in)\n"
	      "      --xkb-model=M --xkb-layout=L --xkb-variant=V --xkb-options=O\n"
	      "                          keymap (default: the system's xkb defaults)\n"
	      "      --xkb-repeat-delay=MS  key repeat delay (default: 250)\n"
	      "      --xkb-repeat-rate=HZ   key repeat rate, 0 = off (default: 30)\n"
	      "      --sb-size=LINES     scrollback lines (default: 1000)\n"
	      "      --scroll-mode=auto|pan|wrap|copy|redraw|shadow\n"
	      "                          how scrolls reach the screen (default: auto)\n"
	      "      --no-calibrate      trust the device's capabilities, measure nothing\n"
	      "      --stats             log drawing statistics at exit (always on SIGUSR1)\n"
	      "      --backend=auto|none|NAME  blitter plugin (default: auto)\n"
	      "      --list-backends     list the blitter plugins and exit\n"
	      "      --verbose           debug messages\n"
	      "  -h, --help              show this help\n"
	      "      --version           show the version\n",
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

static void replace_string(char **dst, const char *src)
{
	free(*dst);
	*dst = xstrdup(src);
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

static int parse_uint_option(const char *name, const char *value, unsigned min, unsigned max,
			     unsigned *ret)
{
	if (parse_uint(value, min, max, ret) < 0)
		return usage_error("invalid value '%s' for --%s: expected a whole number from %u "
				   "to %u",
				   value, name, min, max);
	return 0;
}

void options_fini(struct options *o)
{
	free(o->fbdev);
	free(o->term);
	free(o->font_file);
	free(o->backend);
	free(o->xkb_model);
	free(o->xkb_layout);
	free(o->xkb_variant);
	free(o->xkb_options);
	if (o->login_argv)
		for (char **a = o->login_argv; *a; a++)
			free(*a);
	free(o->login_argv);
	memset(o, 0, sizeof(*o));
}

int options_parse(int argc, char **argv, struct options *ret)
{
	struct options o = {
	    .action = OPTIONS_RUN,
	    .palette = PALETTE_LINUX,
	    .repeat_delay_ms = 250,
	    .repeat_rate_hz = 30,
	    .sb_size = 1000,
	    .scroll_mode = SCROLL_MODE_AUTO,
	    .calibrate = true,
	};
	bool login = false;
	int c, r;

	/* getopt keeps state between calls; tests call us more than once. */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:h", long_options, NULL)) >= 0) {
		switch (c) {
		case ARG_VT:
			if (options_parse_vt(optarg, &o.vt) < 0) {
				r = usage_error("invalid value '%s' for --vt: expected N, ttyN or "
						"/dev/ttyN with N from 1 to 63",
						optarg);
				goto fail;
			}
			break;
		case ARG_SWITCHVT:
			o.switchvt = true;
			break;
		case ARG_FBDEV:
			if (optarg[0] == '\0') {
				r = usage_error("--fbdev needs a device path");
				goto fail;
			}
			replace_string(&o.fbdev, optarg);
			break;
		case ARG_LOGIN:
			login = true;
			break;
		case ARG_TERM:
			if (optarg[0] == '\0' || strchr(optarg, '/')) {
				r = usage_error("invalid value '%s' for --term", optarg);
				goto fail;
			}
			replace_string(&o.term, optarg);
			break;
		case ARG_PALETTE:
			if (strcmp(optarg, "linux") == 0)
				o.palette = PALETTE_LINUX;
			else if (strcmp(optarg, "xterm") == 0)
				o.palette = PALETTE_XTERM;
			else {
				r = usage_error("invalid value '%s' for --palette: expected linux "
						"or xterm",
						optarg);
				goto fail;
			}
			break;
		case ARG_FONT_FILE:
			replace_string(&o.font_file, optarg);
			break;
		case ARG_XKB_MODEL:
			replace_string(&o.xkb_model, optarg);
			break;
		case ARG_XKB_LAYOUT:
			replace_string(&o.xkb_layout, optarg);
			break;
		case ARG_XKB_VARIANT:
			replace_string(&o.xkb_variant, optarg);
			break;
		case ARG_XKB_OPTIONS:
			replace_string(&o.xkb_options, optarg);
			break;
		case ARG_XKB_REPEAT_DELAY:
			r = parse_uint_option("xkb-repeat-delay", optarg, 1, 10000,
					      &o.repeat_delay_ms);
			if (r < 0)
				goto fail;
			break;
		case ARG_XKB_REPEAT_RATE:
			r = parse_uint_option("xkb-repeat-rate", optarg, 0, 1000,
					      &o.repeat_rate_hz);
			if (r < 0)
				goto fail;
			break;
		case ARG_SB_SIZE:
			r = parse_uint_option("sb-size", optarg, 0, 1000000, &o.sb_size);
			if (r < 0)
				goto fail;
			break;
		case ARG_SCROLL_MODE:
			o.scroll_mode = scroll_mode_from_string(optarg);
			if (o.scroll_mode < 0) {
				r = usage_error(
				    "invalid value '%s' for --scroll-mode: expected auto, "
				    "pan, wrap, copy, redraw or shadow",
				    optarg);
				goto fail;
			}
			break;
		case ARG_NO_CALIBRATE:
			o.calibrate = false;
			break;
		case ARG_STATS:
			o.stats = true;
			break;
		case ARG_BACKEND:
			if (optarg[0] == '\0' || strchr(optarg, '/')) {
				r = usage_error("invalid value '%s' for --backend: expected auto, "
						"none or a plugin name",
						optarg);
				goto fail;
			}
			replace_string(&o.backend, optarg);
			break;
		case ARG_LIST_BACKENDS:
			o.action = OPTIONS_LIST_BACKENDS;
			break;
		case ARG_VERBOSE:
			o.verbose = true;
			break;
		case 'h':
		case ARG_HELP:
			o.action = OPTIONS_HELP;
			break;
		case ARG_VERSION:
			o.action = OPTIONS_VERSION;
			break;
		case ':':
			r = usage_error("option '%s' needs a value", argv[optind - 1]);
			goto fail;
		default:
			r = usage_error("unknown option '%s'", argv[optind - 1]);
			goto fail;
		}
	}

	if (optind < argc) {
		/* "+" stops at the first non-option; only "--login -- CMD" or
		 * "-- CMD" may bring a command. getopt has eaten the "--". */
		if (!login && strcmp(argv[optind - 1], "--") != 0) {
			r = usage_error("unexpected argument '%s' (use --login -- COMMAND)",
					argv[optind]);
			goto fail;
		}
		o.login_argv = xcalloc((size_t)(argc - optind + 1), sizeof(char *));
		for (int i = optind; i < argc; i++)
			o.login_argv[i - optind] = xstrdup(argv[i]);
	} else if (login) {
		r = usage_error("--login needs a command after '--'");
		goto fail;
	}

	if (!o.login_argv) {
		o.login_argv = xcalloc(3, sizeof(char *));
		o.login_argv[0] = xstrdup("/bin/login");
		o.login_argv[1] = xstrdup("-p");
	}
	if (!o.term)
		o.term = xstrdup("xterm-256color");

	*ret = o;
	return 0;

fail:
	options_fini(&o);
	return r;
}
