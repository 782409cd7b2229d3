/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Command line. options_parse() fills a struct options from argv and says
 * what to do (run, print help, print version). A bad flag or value is a usage
 * error: the message names the flag and the problem, and the caller exits
 * with status 2. Parsing touches no device, so it is unit-tested directly.
 */
#include <stdbool.h>
#include <stdio.h>

enum palette_kind {
	PALETTE_LINUX, /* the kernel console's 16 colours (vt.default_{red,grn,blu}) */
	PALETTE_XTERM, /* xterm's 16 colours */
};

enum options_action {
	OPTIONS_RUN,
	OPTIONS_HELP,
	OPTIONS_VERSION,
	OPTIONS_LIST_BACKENDS,
};

struct options {
	enum options_action action;
	unsigned vt; /* 1..63; 0 = not given: pick a free VT */
	bool switchvt;
	char *fbdev;	   /* NULL = first framebuffer found with libudev */
	char **login_argv; /* NULL-terminated; default /bin/login -p */
	char *term;
	enum palette_kind palette;
	char *font_file; /* NULL = built-in font */
	char *xkb_model, *xkb_layout, *xkb_variant, *xkb_options;
	unsigned repeat_delay_ms;
	unsigned repeat_rate_hz;
	unsigned sb_size; /* scrollback lines */
	int scroll_mode;  /* enum scroll_mode */
	bool calibrate;
	char *backend; /* NULL = auto, "none", or a plugin name */
	bool stats;
	bool verbose;
};

/* Returns 0, or -EINVAL after printing the problem to stderr. Strings in
 * *ret are allocated; release them with options_fini(). */
int options_parse(int argc, char **argv, struct options *ret);
void options_fini(struct options *o);
void options_help(FILE *f);

/* Accepts "N", "ttyN" and "/dev/ttyN" with 1 <= N <= 63. */
int options_parse_vt(const char *s, unsigned *ret);
