/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the configuration files: the input is written to a
 * temporary directory as consoled.conf and its drop-ins, and goes through
 * options_parse() as the daemon reads /etc/consoled: config_load(), every
 * key's parser, the command line merged over the files and the keyboard
 * settings. A line "---" splits the input into files: the first part is
 * consoled.conf (absent when the part is empty: the input starts with
 * "---\n"), each further one a drop-in consoled.conf.d/NN.conf; the main
 * file is also read as vconsole.conf and the first drop-in as
 * /etc/default/keyboard, so the shell-style parser sees the same bytes.
 *
 * Whatever the bytes, parsing must succeed (files are never fatal), the
 * command line must win, every stored setting must be one options_set()
 * accepts again, and options_fini() must leave nothing behind (the struct
 * zeroed; LeakSanitizer checks the memory).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../daemon/util/log.h"
#include "../../daemon/options.h"
#include "../../daemon/screen/scroll.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define MAX_PARTS 8

static bool fuzzing;
static char dir[128], conf[160], dropin_dir[192];

static void cleanup_dir(void)
{
	char path[224];

	for (unsigned i = 1; i < MAX_PARTS; i++) {
		snprintf(path, sizeof(path), "%s/%02u.conf", dropin_dir, i - 1);
		unlink(path);
	}
	rmdir(dropin_dir);
	unlink(conf);
}

static void remove_dir(void)
{
	cleanup_dir();
	rmdir(dir);
}

static void setup_dir(void)
{
	const char *tmp = getenv("TMPDIR");

	if (dir[0])
		return;
	snprintf(dir, sizeof(dir), "%s/fuzz-config-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("fuzz-config: mkdtemp");
		abort();
	}
	snprintf(conf, sizeof(conf), "%s/consoled.conf", dir);
	snprintf(dropin_dir, sizeof(dropin_dir), "%s.d", conf);
	atexit(remove_dir);
}

static void write_file(const char *path, const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || write(fd, data, size) != (ssize_t)size || close(fd) < 0) {
		perror(path);
		abort();
	}
}

/* The end of the part that starts at p: the "\n" before the next "---" line,
 * or end. *next is where the following part starts (NULL: none). */
static const uint8_t *part_end(const uint8_t *p, const uint8_t *end, const uint8_t **next)
{
	static const char sep[] = "---\n";
	const size_t n = sizeof(sep) - 1;

	/* A separator line at the very start: this part is empty. */
	if ((size_t)(end - p) >= n && memcmp(p, sep, n) == 0) {
		*next = p + n;
		return p;
	}
	for (const uint8_t *q = p; q < end; q++)
		if (*q == '\n' && (size_t)(end - q - 1) >= n && memcmp(q + 1, sep, n) == 0) {
			*next = q + 1 + n;
			return q + 1;
		}
	*next = NULL;
	return end;
}

/* Writes the files; returns how many drop-ins. */
static unsigned write_files(const uint8_t *data, size_t size, char *keyboard, size_t keyboard_size)
{
	const uint8_t *p = data, *end = data + size, *next;
	unsigned parts = 0;

	keyboard[0] = '\0';
	while (p) {
		const uint8_t *e = parts == MAX_PARTS - 1 ? end : part_end(p, end, &next);

		if (parts == MAX_PARTS - 1)
			next = NULL;
		if (parts == 0) {
			if (e > p || !next)
				write_file(conf, p, (size_t)(e - p));
		} else {
			char path[224];

			if (parts == 1 && mkdir(dropin_dir, 0700) < 0) {
				perror(dropin_dir);
				abort();
			}
			snprintf(path, sizeof(path), "%s/%02u.conf", dropin_dir, parts - 1);
			write_file(path, p, (size_t)(e - p));
			if (parts == 1)
				snprintf(keyboard, keyboard_size, "%s", path);
		}
		parts++;
		p = next;
	}
	return parts - 1;
}

static bool has_edge_space(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && (strchr(" \t\n\v\f\r", s[0]) || strchr(" \t\n\v\f\r", s[n - 1]));
}

/* A string setting from consoled.conf: stripped, one line, and accepted by
 * its key again. */
static void check_string(const char *key, const char *value, bool from_file_only)
{
	struct options scratch = {};
	char err[256];

	if (!value)
		return;
	if (strchr(value, '\n'))
		__builtin_trap();
	if (from_file_only && has_edge_space(value))
		__builtin_trap();
	if (options_set(&scratch, key, value, err, sizeof(err)) < 0)
		__builtin_trap();
	options_fini(&scratch);
}

static void check_uint(const char *key, unsigned value)
{
	struct options scratch = {};
	char buf[16], err[256];

	snprintf(buf, sizeof(buf), "%u", value);
	if (options_set(&scratch, key, buf, err, sizeof(err)) < 0)
		__builtin_trap();
}

static void check_options(const struct options *o)
{
	struct options scratch = {};
	char err[256];

	if (o->action != OPTIONS_RUN || o->font_size != 14)
		__builtin_trap();
	if (o->vt != 0)
		check_uint("vt", o->vt);
	check_uint("font-dpi", o->font_dpi);
	check_uint("xkb-repeat-delay", o->repeat_delay_ms);
	check_uint("xkb-repeat-rate", o->repeat_rate_hz);
	check_uint("sb-size", o->sb_size);
	check_uint("kernel-messages-time", o->kmsg_time_sec);
	check_uint("kernel-messages-lines", o->kmsg_lines);
	if (o->kmsg_level != KMSG_LEVEL_KERNEL)
		check_uint("kernel-messages", (unsigned)o->kmsg_level);
	if (o->palette > PALETTE_SOLARIZED_LIGHT)
		__builtin_trap();
	/* a colour key's value is 24 bits, and a colour not given stays 0 */
	if (o->colors_set >> OPTIONS_N_COLORS)
		__builtin_trap();
	for (unsigned i = 0; i < OPTIONS_N_COLORS; i++)
		if (o->colors[i] > 0xffffff || (!(o->colors_set & (1u << i)) && o->colors[i]))
			__builtin_trap();
	if (o->scroll_mode < 0 || o->scroll_mode >= _SCROLL_MODE_MAX ||
	    options_set(&scratch, "scroll-mode", scroll_mode_to_string(o->scroll_mode), err,
			sizeof(err)) < 0 ||
	    scratch.scroll_mode != o->scroll_mode)
		__builtin_trap();

	if (!o->term)
		__builtin_trap();
	check_string("term", o->term, true);
	check_string("fbdev", o->fbdev, true);
	check_string("session-socket", o->session_socket, true);
	check_string("backend", o->backend, true);
	check_string("font-file", o->font_file, true);
	check_string("font-name", o->font_name, true);
	check_string("compose-file", o->compose_file, true);
	/* The keymap may come from a quoted shell word: blanks allowed. */
	check_string("xkb-model", o->xkb_model, false);
	check_string("xkb-layout", o->xkb_layout, false);
	check_string("xkb-variant", o->xkb_variant, false);
	check_string("xkb-options", o->xkb_options, false);
	if (!o->xkb_model && !o->xkb_layout && !o->xkb_variant && !o->xkb_options)
		__builtin_trap();

	if (!o->login_argv || !o->login_argv[0])
		__builtin_trap();
	for (char **w = o->login_argv; *w; w++)
		if (!**w || strpbrk(*w, " \t\n"))
			__builtin_trap();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzzing = true;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct options zero;
	char keyboard[224];
	struct options_files files = {
	    .config = conf, .vconsole = conf, .kbd_model_map = "/usr/share/systemd/kbd-model-map"};
	char *argv[] = {(char *)"consoled", (char *)"--font-size=14", NULL};
	struct options o;

	/* Quiet under libFuzzer; the replay keeps every message, so that
	 * their formatting runs under the sanitizers too. */
	log_set_max_level(fuzzing ? LOG_CRIT : LOG_DEBUG);
	setup_dir();
	if (write_files(data, size, keyboard, sizeof(keyboard)) > 0)
		files.default_keyboard = keyboard;

	if (options_parse(2, argv, &files, &o) < 0)
		__builtin_trap();
	check_options(&o);
	options_fini(&o);
	if (memcmp(&o, &zero, sizeof(o)) != 0)
		__builtin_trap();

	cleanup_dir();
	return 0;
}
