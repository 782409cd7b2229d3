/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Options: the command line, the configuration files and the system's
 * keyboard settings, merged into one struct options.
 *
 * Every setting has one long name ("vt", "xkb-layout", ...) and one parser,
 * options_set(): getopt calls it for --name=value and config.c for a
 * name=value line, so a key means the same thing in both places. Precedence,
 * lowest first: built-in defaults, the configuration file, its drop-ins in
 * lexical order, the command line. The keymap names (xkb-model, -layout,
 * -variant, -options) come from the system's keyboard settings only when
 * none of them is set by either.
 *
 * A bad flag or value on the command line is a usage error: the message
 * names the flag and the problem, and the caller exits with status 2. So is
 * a beginning of a long option that several share (getopt's abbreviations:
 * "--xkb" names six options; the message lists them), a value given to an
 * option that takes none, and a --config=PATH that cannot be read. A bad
 * line in a file is logged with file:line and skipped; the rest still apply,
 * so a typo in a drop-in does not leave the VT without a console. Messages
 * show what they quote with its control bytes escaped (cescape()). Parsing
 * touches no device and takes every path as a parameter, so it is
 * unit-tested directly.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "color/palette.h"
#include "devices/kmsg.h"
#include "terminal/stream.h"

/* The colour keys, as palette.h numbers them. */
#define OPTIONS_COLOR_FOREGROUND PALETTE_KEY_FG
#define OPTIONS_COLOR_BACKGROUND PALETTE_KEY_BG
#define OPTIONS_N_COLORS PALETTE_N_KEYS

enum options_action {
	OPTIONS_RUN,
	OPTIONS_HELP,
	OPTIONS_VERSION,
	OPTIONS_LIST_BACKENDS,
};

/* fbdev= lists at most this many framebuffers, one screen each; rotate=
 * and font-size= as many values (consoled.conf(5), SCREENS). */
#define OPTIONS_SCREENS_MAX 4

/* screens=: what several framebuffers show. */
enum options_screens {
	OPTIONS_SCREENS_MIRROR,	  /* the same terminal on each, the smallest one's grid */
	OPTIONS_SCREENS_SEPARATE, /* a terminal and session each, one with the keyboard */
};

/* image-memory=: what a session's sixel images may take by default, MiB:
 * four images of 1920x1080 pixels. */
#define IMAGE_MEMORY_DEFAULT_MIB 32

/* terminals=: as many as getty's autovt gives seat0 by default (NAutoVTs=6);
 * at most one a function key. */
#define OPTIONS_TERMINALS_DEFAULT 6
#define OPTIONS_TERMINALS_MAX 12

struct options {
	enum options_action action;
	unsigned vt; /* 1..63; 0 = not given: pick a free VT */
	bool switchvt;
	/* A seat without a VT (not seat0): its devices by udev's ID_SEAT, its
	 * own terminals (seat.h); NULL = a VT on seat0. */
	char *seat;
	unsigned terminals; /* the seat's terminals, Ctrl+Alt+F1..Fn */
	/* fbdev=: the framebuffers, one screen each (n_fbdevs; fbdev is the
	 * first, NULL = the first framebuffer found with libudev, or with
	 * fbdev_all every one of the seat's: options_fbdev_all()) */
	char *fbdev;
	char *fbdevs[OPTIONS_SCREENS_MAX];
	unsigned n_fbdevs;
	bool fbdev_all;	   /* fbdev=all */
	int screens;	   /* enum options_screens */
	unsigned fb_wait;  /* seconds to wait for the framebuffer at start (fbwait.h) */
	char **login_argv; /* NULL-terminated; default /bin/login -p */
	char *term;
	char *session_socket; /* consoled-session(8)'s socket; NULL = fork sessions */
	bool session_restore; /* keep the session over restarts (restore.h) */
	enum palette_kind palette;
	unsigned blank_sec; /* idle seconds before blanking, 0 = never; OPTIONS_BLANK_KERNEL */
	char *font_file;    /* NULL = by font_name */
	char *font_name;    /* fontconfig pattern; NULL = "monospace" */
	unsigned font_size; /* points; the first screen's */
	/* font-size= and rotate= per screen: n values, the last for the
	 * screens after them */
	unsigned font_sizes[OPTIONS_SCREENS_MAX], n_font_sizes;
	unsigned font_dpi; /* 0 = from the framebuffer's physical size, else 96 */
	char *xkb_model, *xkb_layout, *xkb_variant, *xkb_options;
	unsigned repeat_delay_ms;
	unsigned repeat_rate_hz;
	unsigned sb_size;	   /* scrollback lines */
	unsigned image_memory_mib; /* sixel images' pixels per session, MiB; 0 = no images */
	int scroll_mode;	   /* enum scroll_mode */
	bool calibrate;
	int rotate; /* enum rotation (rotate.h); the first screen's */
	int rotates[OPTIONS_SCREENS_MAX];
	unsigned n_rotates;
	int fb_flush;  /* enum fb_flush (fbflush.h) */
	char *backend; /* NULL = auto, "none", or a plugin name */
	bool stats;
	bool verbose;
	bool mouse;	    /* pointer devices are used */
	double mouse_speed; /* relative motion factor, OPTIONS_MOUSE_SPEED_MIN..MAX */
	char *word_chars;   /* selection.h; NULL = SELECTION_WORD_CHARS_DEFAULT */
	char *compose_file; /* compose.h; NULL = the locale's Compose table */
	/* color0..color15, foreground, background (OPTIONS_COLOR_*) as
	 * 0xrrggbb; bit i of colors_set says colors[i] was given. */
	uint32_t colors[OPTIONS_N_COLORS];
	uint32_t colors_set;
	bool vcs;	 /* mirror the screen into the VT's own buffer (vcs.h) */
	char *autologin; /* getty.h: USER or USER@ttyN; NULL = none */
	int bell;	 /* enum bell_mode (bell.h) */
	/* kernel-messages=: KMSG_LEVEL_KERNEL or a fixed threshold 0..8
	 * (kmsg.h; off is 0) */
	int kmsg_level;
	unsigned kmsg_time_sec; /* how long a kernel message stays in the band */
	unsigned kmsg_lines;	/* the band's height, 1..KMSG_BAND_LINES_MAX */
	/* the cursor's default shape and whether it blinks (stream.h) */
	enum stream_cursor_shape cursor_shape;
	bool cursor_blink;
};

#define OPTIONS_MOUSE_SPEED_MIN 0.1
#define OPTIONS_MOUSE_SPEED_MAX 20.0

/* blank_sec when neither --blank nor blank= is given: the kernel console's
 * own setting applies (blank.h, blank_kernel_timeout()). */
#define OPTIONS_BLANK_KERNEL (~0u)

/* consoled's exit statuses besides EXIT_SUCCESS and EXIT_FAILURE (consoled(8),
 * EXIT STATUS). 2 to 6 are permanent errors that a restart cannot mend: they
 * are listed in consoled@.service's RestartPreventExitStatus= so that getty
 * takes the VT over at once, not after StartLimitBurst= restarts
 * (test-options checks the unit file and the manual against this list). */
#define EXIT_USAGE 2	      /* the command line: options_parse() failed */
#define EXIT_NO_FRAMEBUFFER 3 /* none (after the wait), or one that cannot be used */
#define EXIT_NO_VT 4
/* With --session-socket: no session could be started through the helper
 * (consoled-session.socket stopped or missing, the helper refused us). The
 * socket stays while helpers come and go, so restarting does not mend it. */
#define EXIT_NO_SESSION_HELPER 5
/* The font's cell is larger than the screen (render_new()'s -ERANGE): the
 * same font meets the same mode at the next start. */
#define EXIT_FONT_TOO_LARGE 6
/* With --seat: logind has no such seat (any more): its last graphics card
 * went, or it never came (seat.h, seat_follow()). Not an error for
 * consoled-seat@.service (SuccessExitStatus=), and no restart: the seat's
 * next card starts the unit again. */
#define EXIT_SEAT_GONE 7

/* The files options_parse() reads. A NULL path is not read. */
struct options_files {
	const char *config;	      /* key=value lines; drop-ins: config + ".d", *.conf files */
	const char *vconsole;	      /* systemd's vconsole.conf (XKBLAYOUT=...) */
	const char *default_keyboard; /* Debian's /etc/default/keyboard, same syntax */
	const char *kbd_model_map;    /* systemd's KEYMAP= -> XKB table (kbdmap.h) */
};

/* What the daemon reads: /etc/consoled/consoled.conf, /etc/vconsole.conf,
 * /etc/default/keyboard and /usr/share/systemd/kbd-model-map. */
extern const struct options_files options_system_files;

/* Returns 0, or -EINVAL after printing a command line problem to stderr.
 * --config=PATH replaces files->config; files == NULL reads no other file
 * (no configuration without --config, no system keyboard settings). No file
 * is read for --help and --version, and the keyboard settings only to run.
 * Problems in files are logged, never fatal, but for a --config=PATH that
 * cannot be read (-EINVAL, said on stderr). Strings in *ret are allocated;
 * release them with options_fini(). */
int options_parse(int argc, char **argv, const struct options_files *files, struct options *ret);
void options_fini(struct options *o);
void options_help(FILE *f);

/* Sets the option called key (a long option's name without "--") from value,
 * as written after "=". value NULL means the key was given alone: "yes" for
 * a boolean, a missing value for anything else. Booleans also take
 * yes/no, true/false, on/off and 1/0. Returns 0, -ENOENT for an unknown key
 * or -EINVAL for a bad value, with a message in err (err_size bytes, at
 * least 1) that the caller prefixes with where the setting came from:
 * "vt: invalid value 'x': expected ...", "unknown key 'x'". On failure *o is
 * unchanged. */
int options_set(struct options *o, const char *key, const char *value, char *err, size_t err_size);

/* Screen i's value of a per-screen list (the last one given for the
 * screens after the list; def without any). */
static inline unsigned options_font_size(const struct options *o, unsigned i)
{
	return o->n_font_sizes ? o->font_sizes[i < o->n_font_sizes ? i : o->n_font_sizes - 1]
			       : o->font_size;
}
static inline int options_rotate(const struct options *o, unsigned i)
{
	return o->n_rotates ? o->rotates[i < o->n_rotates ? i : o->n_rotates - 1] : o->rotate;
}

/* Whether consoled uses every framebuffer of its seat (fbdev=all), also
 * those that come later: the default of a seat without VTs (--seat) that
 * lists none; a VT's consoled takes one without fbdev=. */
static inline bool options_fbdev_all(const struct options *o)
{
	return o->fbdev_all || (o->seat && !o->n_fbdevs);
}

/* image-memory= in bytes: `mib` MiB, or `cap` (memory_cap()) if that is
 * less. 4096 MiB is 2^32 bytes, 0 in a 32-bit size_t. */
size_t options_image_memory(unsigned mib, uint64_t cap);

/* Accepts "N", "ttyN" and "/dev/ttyN" with 1 <= N <= 63. */
int options_parse_vt(const char *s, unsigned *ret);

/* The palette called s (--palette=), as an enum palette_kind, or -EINVAL. */
int palette_kind_from_string(const char *s);

/* "#rrggbb" (hex digits in either case) as 0xrrggbb, or -EINVAL. */
int options_parse_color(const char *s, uint32_t *ret);

/* The palette of the options: --palette= (sysfs_dir as palette_init()),
 * then the colour keys. */
static inline void palette_from_options(struct palette *p, const struct options *o,
					const char *sysfs_dir)
{
	palette_init(p, o->palette, sysfs_dir);
	palette_set_colors(p, o->colors, o->colors_set);
}
