/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Configuration files and system keyboard settings, in a temporary directory
 * per test: what wins over what, every key, and what a bad line logs.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../daemon/util/config.h"
#include "../../daemon/options.h"
#include "../../daemon/screen/rotate.h"
#include "../../daemon/screen/scroll.h"
#include "../../daemon/util/util.h"
#include "test-capture.h"
#include "tests.h"

static char tmpdir[64];
static char conf_path[128], vconsole_path[128], keyboard_path[128];
/* systemd's real table: what localed uses on the same machine */
#define KBD_MODEL_MAP "/usr/share/systemd/kbd-model-map"
static const struct options_files files = {conf_path, vconsole_path, keyboard_path, KBD_MODEL_MAP};

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void tmp_setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-config-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		exit(EXIT_FAILURE);
	}
	snprintf(conf_path, sizeof(conf_path), "%s/consoled.conf", tmpdir);
	snprintf(vconsole_path, sizeof(vconsole_path), "%s/vconsole.conf", tmpdir);
	snprintf(keyboard_path, sizeof(keyboard_path), "%s/keyboard", tmpdir);
}

static void tmp_cleanup(void)
{
	nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Writes tmpdir/name (made relative to the temporary directory). */
static void write_file(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(path);
		exit(EXIT_FAILURE);
	}
}

static void make_dir(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	if (mkdir(path, 0755) < 0) {
		perror(path);
		exit(EXIT_FAILURE);
	}
}

static int parse_with(struct options *o, const struct options_files *f, const char *const *args)
{
	char *argv[32] = {(char *)"consoled"};
	int argc = 1;

	while (*args)
		argv[argc++] = (char *)*args++;
	return options_parse(argc, argv, f, o);
}

static int parse(struct options *o, const char *const *args)
{
	return parse_with(o, &files, args);
}

/* Parses the files alone, which must succeed, and returns what was logged. */
static const char *parse_logged(struct options *o)
{
	int r;

	capture_begin(tmpdir);
	r = parse(o, (const char *const[]){NULL});
	capture_end();
	CHECK(r == 0);
	return captured;
}

/* Checks that log contains "<conf_path><suffix>". */
static int logged_at(const char *log, const char *path, const char *suffix)
{
	char want[512];

	snprintf(want, sizeof(want), "%s%s", path, suffix);
	if (strstr(log, want))
		return 1;
	fprintf(stderr, "not logged: %s\n", want);
	return 0;
}

static void check_str(const char *got, const char *want)
{
	if (want == NULL ? got != NULL : got == NULL || strcmp(got, want) != 0) {
		fprintf(stderr, "got '%s', want '%s'\n", got ? got : "(null)",
			want ? want : "(null)");
		tests_failed = 1;
	}
}

static void check_keymap(const struct options *o, const char *model, const char *layout,
			 const char *variant, const char *options)
{
	check_str(o->xkb_model, model);
	check_str(o->xkb_layout, layout);
	check_str(o->xkb_variant, variant);
	check_str(o->xkb_options, options);
}

/* Every key, none at its default: the same settings once in a file and once
 * on the command line must give the same options. */
static void test_every_key(void)
{
	static const char *const settings[][2] = {
	    {"vt", "tty5"},
	    {"switchvt", NULL},
	    {"fbdev", "/dev/fb2,/dev/fb3"},
	    {"screens", "separate"},
	    {"fb-wait", "25"},
	    {"term", "linux"},
	    {"palette", "xterm"},
	    {"font-file", "/usr/share/consolefonts/x.psf.gz"},
	    {"font-name", "DejaVu Sans Mono:bold"},
	    {"font-size", "14"},
	    {"font-dpi", "120"},
	    {"xkb-model", "pc104"},
	    {"xkb-layout", "de"},
	    {"xkb-variant", "nodeadkeys"},
	    {"xkb-options", "ctrl:nocaps"},
	    {"xkb-repeat-delay", "400"},
	    {"xkb-repeat-rate", "0"},
	    {"sb-size", "5000"},
	    {"scroll-mode", "shadow"},
	    {"rotate", "270"},
	    {"no-calibrate", NULL},
	    {"stats", NULL},
	    {"backend", "none"},
	    {"verbose", NULL},
	    {"compose-file", "/etc/consoled/Compose"},
	    {"kernel-messages", "2"},
	    {"kernel-messages-time", "30"},
	    {"kernel-messages-lines", "5"},
	};
	char text[2048] = "login=/bin/sh -l\n", args[ELEMENTSOF(settings)][128];
	const char *argv[ELEMENTSOF(settings) + 4];
	struct options file, cmdline;
	size_t n = 0;

	tmp_setup();
	for (size_t i = 0; i < ELEMENTSOF(settings); i++) {
		const char *key = settings[i][0], *value = settings[i][1];
		size_t len = strlen(text);

		snprintf(text + len, sizeof(text) - len, "%s%s%s\n", key, value ? "=" : "",
			 value ? value : "");
		snprintf(args[i], sizeof(args[i]), "--%s%s%s", key, value ? "=" : "",
			 value ? value : "");
		argv[n++] = args[i];
	}
	argv[n++] = "--";
	argv[n++] = "/bin/sh";
	argv[n++] = "-l";
	argv[n] = NULL;
	write_file("consoled.conf", text);

	const char *log = parse_logged(&file);
	CHECK(strstr(log, "gnoring") == NULL);
	CHECK(parse_with(&cmdline, NULL, argv) == 0);

	struct options *opts[] = {&file, &cmdline};
	for (size_t i = 0; i < ELEMENTSOF(opts); i++) {
		struct options *o = opts[i];

		CHECK_EQ_U(o->vt, 5);
		CHECK(o->switchvt);
		check_str(o->fbdev, "/dev/fb2");
		CHECK_EQ_U(o->n_fbdevs, 2);
		check_str(o->fbdevs[1], "/dev/fb3");
		CHECK(o->screens == OPTIONS_SCREENS_SEPARATE);
		CHECK_EQ_U(o->fb_wait, 25);
		check_str(o->login_argv[0], "/bin/sh");
		check_str(o->login_argv[1], "-l");
		CHECK(o->login_argv[2] == NULL);
		check_str(o->term, "linux");
		CHECK(o->palette == PALETTE_XTERM);
		check_str(o->font_file, "/usr/share/consolefonts/x.psf.gz");
		check_str(o->font_name, "DejaVu Sans Mono:bold");
		CHECK_EQ_U(o->font_size, 14);
		CHECK_EQ_U(o->font_dpi, 120);
		check_keymap(o, "pc104", "de", "nodeadkeys", "ctrl:nocaps");
		CHECK_EQ_U(o->repeat_delay_ms, 400);
		CHECK_EQ_U(o->repeat_rate_hz, 0);
		CHECK_EQ_U(o->sb_size, 5000);
		CHECK(o->scroll_mode == SCROLL_MODE_SHADOW);
		CHECK(o->rotate == ROTATE_CCW);
		CHECK(!o->calibrate);
		CHECK(o->stats);
		check_str(o->backend, "none");
		CHECK(o->verbose);
		check_str(o->compose_file, "/etc/consoled/Compose");
		CHECK(o->kmsg_level == 2);
		CHECK_EQ_U(o->kmsg_time_sec, 30);
		CHECK_EQ_U(o->kmsg_lines, 5);
		CHECK(o->action == OPTIONS_RUN);
		options_fini(o);
	}

	/* The inverse forms. */
	write_file("consoled.conf", "calibrate=no\nswitchvt=off\nscroll-mode=pan\n");
	CHECK(parse(&file, (const char *const[]){NULL}) == 0);
	CHECK(!file.calibrate);
	CHECK(!file.switchvt);
	CHECK(file.scroll_mode == SCROLL_MODE_PAN);
	options_fini(&file);
	tmp_cleanup();
}

static void test_booleans(void)
{
	static const struct {
		const char *line;
		bool valid, value;
	} cases[] = {
	    {"switchvt", true, true},	    {"switchvt=yes", true, true},
	    {"switchvt=true", true, true},  {"switchvt=1", true, true},
	    {"switchvt=on", true, true},    {" switchvt = on ", true, true},
	    {"switchvt=no", true, false},   {"switchvt=false", true, false},
	    {"switchvt=0", true, false},    {"switchvt=off", true, false},
	    {"switchvt=YES", false, false}, {"switchvt=2", false, false},
	    {"switchvt=", false, false},
	};
	struct options o;

	tmp_setup();
	/* From either state, so that both "on" and "off" are seen to do
	 * something, and a bad value to do nothing. */
	for (int start = 0; start < 2; start++) {
		for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
			char text[128];
			bool want = cases[i].valid ? cases[i].value : start;

			snprintf(text, sizeof(text), "switchvt=%s\n%s\n", start ? "yes" : "no",
				 cases[i].line);
			write_file("consoled.conf", text);
			const char *log = parse_logged(&o);
			if (o.switchvt != want)
				fprintf(stderr, "wrong from %d: %s\n", start, cases[i].line);
			CHECK(o.switchvt == want);
			CHECK(cases[i].valid == !strstr(log, ":2: switchvt: invalid value"));
			options_fini(&o);
		}
	}
	tmp_cleanup();
}

static void test_precedence(void)
{
	struct options o;

	tmp_setup();
	write_file("consoled.conf", "term=main\npalette=xterm\nsb-size=10\nvt=2\nstats\n");
	make_dir("consoled.conf.d");
	write_file("consoled.conf.d/10-a.conf", "term=ten\nsb-size=20\nvt=3\n");
	write_file("consoled.conf.d/20-b.conf", "term=twenty\n");
	/* strcmp order: "9-" sorts after "20-". */
	write_file("consoled.conf.d/9-late.conf", "term=nine\n");
	write_file("consoled.conf.d/05-early.conf", "vt=5\nterm=five\n");
	/* Not drop-ins: another suffix, a hidden file. */
	write_file("consoled.conf.d/99-z.conf.bak", "term=bak\nfbdev=/dev/bak\n");
	write_file("consoled.conf.d/.hidden.conf", "backend=hidden\n");

	CHECK(parse(&o, (const char *const[]){NULL}) == 0);
	CHECK(strcmp(o.term, "nine") == 0);
	CHECK_EQ_U(o.vt, 3);
	CHECK_EQ_U(o.sb_size, 20);
	CHECK(o.palette == PALETTE_XTERM);
	CHECK(o.stats);
	CHECK(o.fbdev == NULL);
	CHECK(o.backend == NULL);
	options_fini(&o);

	/* The command line over all files, wherever it stands. */
	CHECK(parse(&o, (const char *const[]){"--sb-size=30", "--term=cmdline", "--palette=linux",
					      "--stats=no", NULL}) == 0);
	CHECK(strcmp(o.term, "cmdline") == 0);
	CHECK_EQ_U(o.sb_size, 30);
	CHECK_EQ_U(o.vt, 3);
	CHECK(o.palette == PALETTE_LINUX);
	CHECK(!o.stats);
	options_fini(&o);

	/* No files: the command line alone, defaults for the rest. */
	CHECK(parse_with(&o, NULL, (const char *const[]){"--sb-size=30", NULL}) == 0);
	CHECK(strcmp(o.term, "xterm-256color") == 0);
	CHECK_EQ_U(o.sb_size, 30);
	CHECK_EQ_U(o.vt, 0);
	CHECK(o.xkb_layout == NULL);
	options_fini(&o);
	tmp_cleanup();
}

static void test_config_flag(void)
{
	char arg[256], other[200];
	struct options o;

	tmp_setup();
	write_file("consoled.conf", "term=default\n");
	make_dir("other");
	write_file("other/my.conf", "term=mine\nsb-size=7\n");
	make_dir("other/my.conf.d");
	write_file("other/my.conf.d/a.conf", "sb-size=8\n");
	snprintf(other, sizeof(other), "%s/other/my.conf", tmpdir);
	snprintf(arg, sizeof(arg), "--config=%s", other);
	CHECK(parse(&o, (const char *const[]){arg, NULL}) == 0);
	CHECK(strcmp(o.term, "mine") == 0);
	CHECK_EQ_U(o.sb_size, 8);
	options_fini(&o);

	/* Also without default files (as the tests of test-options run). */
	CHECK(parse_with(&o, NULL, (const char *const[]){"--config", other, NULL}) == 0);
	CHECK(strcmp(o.term, "mine") == 0);
	options_fini(&o);
	tmp_cleanup();
}

/* config_load()'s setter, as options.c has it. */
static int set_option(void *userdata, const char *key, const char *value, char *err,
		      size_t err_size)
{
	return options_set(userdata, key, value, err, err_size);
}

static void test_bad_lines(void)
{
	struct options o;
	char dropin[200];

	tmp_setup();
	write_file("consoled.conf", "# comment\n"
				    "\n"
				    "vt=3\n"
				    "foo=1\n"
				    "sb-size=abc\n"
				    "   term =  linux  \n"
				    "palette\n"
				    "stats\n"
				    "\t# indented comment\n"
				    "=x\n"
				    "help\n"
				    "xkb-repeat-rate=20\n");
	make_dir("consoled.conf.d");
	write_file("consoled.conf.d/50-bad.conf", "scroll-mode=fast\nfbdev=/dev/fb9\n");
	snprintf(dropin, sizeof(dropin), "%s.d/50-bad.conf", conf_path);

	const char *log = parse_logged(&o);
	CHECK(logged_at(log, conf_path, ":4: unknown key 'foo'"));
	CHECK(logged_at(log, conf_path,
			":5: sb-size: invalid value 'abc': expected a whole "
			"number from 0 to 100000"));
	CHECK(logged_at(log, conf_path, ":7: palette: needs a value"));
	CHECK(logged_at(log, conf_path, ":10: unknown key ''"));
	CHECK(logged_at(log, conf_path, ":11: unknown key 'help'"));
	CHECK(logged_at(log, dropin, ":1: scroll-mode: invalid value 'fast'"));
	CHECK(strstr(log, "Ignored 6 bad line(s)") != NULL);
	/* The good lines all count. */
	CHECK_EQ_U(o.vt, 3);
	CHECK(strcmp(o.term, "linux") == 0);
	CHECK(o.stats);
	CHECK_EQ_U(o.repeat_rate_hz, 20);
	CHECK_EQ_U(o.sb_size, 1000);
	CHECK(o.palette == PALETTE_LINUX);
	CHECK(o.scroll_mode == SCROLL_MODE_AUTO);
	CHECK(strcmp(o.fbdev, "/dev/fb9") == 0);
	CHECK(o.action == OPTIONS_RUN);
	options_fini(&o);

	/* config_load() says how much it ignored. */
	struct options p = {0};
	capture_begin(tmpdir);
	CHECK_EQ_U(config_load(conf_path, false, set_option, &p), 6);
	capture_end();
	options_fini(&p);

	/* A bad command line stays a usage error, found before any file is
	 * read: nothing about the files is logged. */
	capture_begin(tmpdir);
	CHECK(parse(&o, (const char *const[]){"--sb-size=abc", NULL}) == -EINVAL);
	log = capture_end();
	CHECK(strstr(log, "consoled: --sb-size: invalid value 'abc'") != NULL);
	CHECK(strstr(log, conf_path) == NULL);

	/* --help and --version read no file either. */
	capture_begin(tmpdir);
	CHECK(parse(&o, (const char *const[]){"--help", NULL}) == 0);
	log = capture_end();
	CHECK(o.action == OPTIONS_HELP);
	CHECK(strstr(log, conf_path) == NULL);
	options_fini(&o);
	tmp_cleanup();
}

static void test_missing_and_unreadable(void)
{
	struct options o;
	char path[200];

	tmp_setup();
	/* Nothing there: no warning, defaults. */
	const char *log = parse_logged(&o);
	CHECK(strstr(log, "ignoring") == NULL);
	CHECK(strstr(log, "Ignored") == NULL);
	CHECK(strcmp(o.term, "xterm-256color") == 0);
	CHECK_EQ_U(o.sb_size, 1000);
	options_fini(&o);

	/* A directory where the file should be cannot be read (even by
	 * root, unlike a mode 000 file); the drop-ins still count. */
	make_dir("consoled.conf");
	make_dir("consoled.conf.d");
	make_dir("consoled.conf.d/10-dir.conf");
	write_file("consoled.conf.d/20-ok.conf", "sb-size=77\n");
	log = parse_logged(&o);
	CHECK(logged_at(log, "Failed to read ", conf_path));
	snprintf(path, sizeof(path), "%s.d/10-dir.conf", conf_path);
	CHECK(logged_at(log, "Failed to read ", path));
	CHECK(strstr(log, "Ignored 2 bad line(s) or file(s)") != NULL);
	CHECK_EQ_U(o.sb_size, 77);
	options_fini(&o);
	tmp_cleanup();
}

static void test_login(void)
{
	struct options o;

	tmp_setup();
	write_file("consoled.conf", "login=  /sbin/agetty\t-o  '-p -- \\u'   --noclear  \n");
	CHECK(parse(&o, (const char *const[]){NULL}) == 0);
	/* Split on blanks only: no quoting. */
	static const char *const want[] = {"/sbin/agetty", "-o", "'-p", "--", "\\u'", "--noclear"};
	for (size_t i = 0; i < ELEMENTSOF(want); i++)
		CHECK(o.login_argv[i] && strcmp(o.login_argv[i], want[i]) == 0);
	CHECK(o.login_argv[ELEMENTSOF(want)] == NULL);
	options_fini(&o);

	/* The command line's command wins, with or without --login. */
	CHECK(parse(&o, (const char *const[]){"--login", "--", "/bin/bash", NULL}) == 0);
	CHECK(strcmp(o.login_argv[0], "/bin/bash") == 0);
	CHECK(o.login_argv[1] == NULL);
	options_fini(&o);
	CHECK(parse(&o, (const char *const[]){"--", "/bin/zsh", "-l", NULL}) == 0);
	CHECK(strcmp(o.login_argv[0], "/bin/zsh") == 0);
	CHECK(strcmp(o.login_argv[1], "-l") == 0);
	options_fini(&o);

	/* An empty command is a bad line; the default stays. */
	write_file("consoled.conf", "login=\nlogin= \t \n");
	const char *log = parse_logged(&o);
	CHECK(logged_at(log, conf_path, ":1: login: invalid value '': expected a command"));
	CHECK(logged_at(log, conf_path, ":2: login: invalid value ''"));
	CHECK(strcmp(o.login_argv[0], "/bin/login") == 0);
	CHECK(strcmp(o.login_argv[1], "-p") == 0);
	options_fini(&o);
	tmp_cleanup();
}

static void test_keyboard(void)
{
	struct options o;
	const char *log;

	tmp_setup();
	/* Nothing anywhere: us. */
	log = parse_logged(&o);
	check_keymap(&o, NULL, "us", NULL, NULL);
	CHECK(strstr(log, "No keyboard settings in ") != NULL);
	CHECK(strstr(log, "using layout 'us'") != NULL);
	options_fini(&o);

	/* Debian's file alone, as Debian writes it. */
	write_file("keyboard", "# KEYBOARD CONFIGURATION FILE\n"
			       "\n"
			       "XKBMODEL=\"pc105\"\n"
			       "XKBLAYOUT=\"fr\"\n"
			       "XKBVARIANT=\"\"\n"
			       "XKBOPTIONS=\"\"\n"
			       "\n"
			       "BACKSPACE=\"guess\"\n");
	log = parse_logged(&o);
	check_keymap(&o, "pc105", "fr", NULL, NULL);
	CHECK(logged_at(log, "Keymap from ", keyboard_path));
	options_fini(&o);

	/* vconsole.conf without XKB* (a console keymap only): still Debian's. */
	write_file("vconsole.conf", "KEYMAP=de-latin1\nFONT=Lat2-Terminus16\n");
	CHECK(parse(&o, (const char *const[]){NULL}) == 0);
	check_str(o.xkb_layout, "fr");
	options_fini(&o);

	/* vconsole.conf with XKB*: it wins, whole (nothing mixed in from
	 * Debian's), in every quoting. */
	write_file("vconsole.conf", "KEYMAP=de-latin1\n"
				    "XKBLAYOUT='de'\n"
				    "  export XKBOPTIONS=\"ctrl:nocaps,compose:ralt\"\n"
				    "XKBVARIANT=nodeadkeys # comment\n");
	log = parse_logged(&o);
	check_keymap(&o, NULL, "de", "nodeadkeys", "ctrl:nocaps,compose:ralt");
	CHECK(logged_at(log, "Keymap from ", vconsole_path));
	CHECK(strstr(log, "layout 'de' variant 'nodeadkeys'") != NULL);
	options_fini(&o);

	/* Any keymap name in a file or on the command line: no system
	 * settings at all. Repeat settings do not count. */
	CHECK(parse(&o, (const char *const[]){"--xkb-options=grp:alt_shift_toggle", NULL}) == 0);
	check_keymap(&o, NULL, NULL, NULL, "grp:alt_shift_toggle");
	options_fini(&o);
	write_file("consoled.conf", "xkb-variant=dvorak\nxkb-repeat-rate=10\n");
	CHECK(parse(&o, (const char *const[]){NULL}) == 0);
	check_keymap(&o, NULL, NULL, "dvorak", NULL);
	options_fini(&o);
	write_file("consoled.conf", "xkb-repeat-rate=10\n");
	CHECK(parse(&o, (const char *const[]){"--xkb-repeat-delay=300", NULL}) == 0);
	check_str(o.xkb_layout, "de");
	options_fini(&o);

	/* An unterminated quote is skipped with a warning; the rest counts. */
	write_file("vconsole.conf", "XKBLAYOUT=\"de\nXKBMODEL=pc104\n");
	log = parse_logged(&o);
	CHECK(logged_at(log, vconsole_path, ":1: unterminated quote"));
	check_keymap(&o, "pc104", NULL, NULL, NULL);
	options_fini(&o);
	tmp_cleanup();
}

/* vconsole.conf's KEYMAP= without XKB* anywhere: systemd's table, as
 * systemd-localed converts it. */
static void test_console_keymap(void)
{
	struct options o;
	const char *log;

	tmp_setup();
	write_file("vconsole.conf", "KEYMAP=de-latin1\nFONT=Lat2-Terminus16\n");
	log = parse_logged(&o);
	check_keymap(&o, "pc105", "de", NULL, "terminate:ctrl_alt_bksp");
	CHECK(logged_at(log, "Keymap from ", vconsole_path));
	CHECK(strstr(log, ": KEYMAP=de-latin1: model 'pc105' layout 'de' variant ''") != NULL);
	options_fini(&o);

	/* a variant, quoted; a name the table lists after a longer one */
	write_file("vconsole.conf", "KEYMAP=\"de-latin1-nodeadkeys\"\n");
	CHECK(parse(&o, (const char *const[]){NULL}) == 0);
	check_keymap(&o, "pc105", "de", "nodeadkeys", "terminate:ctrl_alt_bksp");
	options_fini(&o);
	write_file("vconsole.conf", "KEYMAP=uk\n");
	CHECK(parse(&o, (const char *const[]){NULL}) == 0);
	check_str(o.xkb_layout, "gb");
	options_fini(&o);
	write_file("vconsole.conf", "KEYMAP=fr\n");
	CHECK(parse(&o, (const char *const[]){NULL}) == 0);
	check_str(o.xkb_layout, "fr");
	options_fini(&o);
	/* "dvorak" is listed twice: the first line wins, as in localed */
	write_file("vconsole.conf", "KEYMAP=dvorak\n");
	CHECK(parse(&o, (const char *const[]){NULL}) == 0);
	check_keymap(&o, "pc105", "us", "dvorak", "terminate:ctrl_alt_bksp");
	options_fini(&o);

	/* unknown: us and a warning naming the name and the table */
	write_file("vconsole.conf", "KEYMAP=no-such-keymap\n");
	log = parse_logged(&o);
	check_keymap(&o, NULL, "us", NULL, NULL);
	CHECK(logged_at(log, vconsole_path,
			": KEYMAP=no-such-keymap has no XKB layout in " KBD_MODEL_MAP
			", using layout 'us'"));
	options_fini(&o);
	/* a comment line is no keymap name */
	write_file("vconsole.conf", "KEYMAP=#\n");
	log = parse_logged(&o);
	check_keymap(&o, NULL, "us", NULL, NULL);
	options_fini(&o);

	/* no table: us and a warning */
	{
		const struct options_files nomap = {conf_path, vconsole_path, keyboard_path,
						    "/nonexistent/kbd-model-map"};

		write_file("vconsole.conf", "KEYMAP=de-latin1\n");
		capture_begin(tmpdir);
		CHECK(parse_with(&o, &nomap, (const char *const[]){NULL}) == 0);
		log = capture_end();
		check_keymap(&o, NULL, "us", NULL, NULL);
		CHECK(strstr(log, "KEYMAP=de-latin1: cannot read /nonexistent/kbd-model-map (No "
				  "such file or directory), using layout 'us'") != NULL);
		options_fini(&o);
	}

	/* The order: XKB* of /etc/default/keyboard come before KEYMAP= */
	write_file("keyboard", "XKBLAYOUT=\"fr\"\n");
	log = parse_logged(&o);
	check_keymap(&o, NULL, "fr", NULL, NULL);
	CHECK(logged_at(log, "Keymap from ", keyboard_path));
	options_fini(&o);
	/* and XKB* of vconsole.conf before both */
	write_file("vconsole.conf", "KEYMAP=de-latin1\nXKBLAYOUT=it\n");
	CHECK(parse(&o, (const char *const[]){NULL}) == 0);
	check_keymap(&o, NULL, "it", NULL, NULL);
	options_fini(&o);
	/* KEYMAP= of /etc/default/keyboard is none of systemd's: not read */
	unlink(vconsole_path);
	write_file("keyboard", "KEYMAP=de-latin1\n");
	CHECK(parse(&o, (const char *const[]){NULL}) == 0);
	check_keymap(&o, NULL, "us", NULL, NULL);
	options_fini(&o);
	/* a keymap option anywhere: no system settings at all */
	write_file("vconsole.conf", "KEYMAP=de-latin1\n");
	CHECK(parse(&o, (const char *const[]){"--xkb-layout=ch", NULL}) == 0);
	check_keymap(&o, NULL, "ch", NULL, NULL);
	options_fini(&o);
	tmp_cleanup();
}

/* Palettes and colour keys in the files: a bad value is logged and ignored,
 * the other colours apply, and the command line wins. */
static void test_colors(void)
{
	struct options o;
	const char *log;

	tmp_setup();
	write_file("consoled.conf", "palette=solarized\n"
				    "color1=#DC322F\n"
				    "color2=green\n"
				    "color3=#12345\n"
				    "foreground=#fdf6e3\n"
				    "background=\n"
				    "color16=#000000\n"
				    "palette=solarised\n");
	make_dir("consoled.conf.d");
	write_file("consoled.conf.d/50-colors.conf", "color4=#000080\nbackground=#000000\n");
	log = parse_logged(&o);
	CHECK(logged_at(log, conf_path, ":3: color2: invalid value 'green': expected #rrggbb"));
	CHECK(logged_at(log, conf_path, ":4: color3: invalid value '#12345': expected #rrggbb"));
	CHECK(logged_at(log, conf_path, ":6: background: invalid value '': expected #rrggbb"));
	CHECK(logged_at(log, conf_path, ":7: unknown key 'color16'"));
	CHECK(logged_at(log, conf_path, ":8: palette: invalid value 'solarised'"));
	CHECK(o.palette == PALETTE_SOLARIZED);
	CHECK_EQ_U(o.colors_set, 1u << 1 | 1u << 4 | 1u << OPTIONS_COLOR_FOREGROUND |
				     1u << OPTIONS_COLOR_BACKGROUND);
	CHECK_EQ_U(o.colors[1], 0xdc322f);
	CHECK_EQ_U(o.colors[2], 0);
	CHECK_EQ_U(o.colors[4], 0x000080);
	CHECK_EQ_U(o.colors[OPTIONS_COLOR_FOREGROUND], 0xfdf6e3);
	CHECK_EQ_U(o.colors[OPTIONS_COLOR_BACKGROUND], 0);
	options_fini(&o);

	CHECK(parse(&o, (const char *const[]){"--color4=#0000ff", "--palette=tango", NULL}) == 0);
	CHECK_EQ_U(o.colors[4], 0x0000ff);
	CHECK_EQ_U(o.colors[1], 0xdc322f);
	CHECK(o.palette == PALETTE_TANGO);
	options_fini(&o);
	tmp_cleanup();
}

/* --config=PATH names a file the user wants: one that is not there, is a
 * directory or cannot be read is an error (consoled exits 2), named with the
 * reason, before anything runs; the default file may be missing. */
static void test_config_flag_unreadable(void)
{
	static const struct {
		const char *name, *reason;
	} cases[] = {
	    {"missing.conf", "No such file or directory"},
	    {"dir.conf", "Is a directory"},
	    {"no/such/dir.conf", "No such file or directory"},
	};
	struct options o;

	tmp_setup();
	make_dir("dir.conf");
	/* its drop-ins are not read without it */
	make_dir("missing.conf.d");
	write_file("missing.conf.d/a.conf", "sb-size=9\n");
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		char arg[256], want[512];
		const char *log;
		int r;

		snprintf(arg, sizeof(arg), "--config=%s/%s", tmpdir, cases[i].name);
		snprintf(want, sizeof(want), "consoled: %s: cannot read it: %s\n", arg,
			 cases[i].reason);
		capture_begin(tmpdir);
		r = parse_with(&o, NULL, (const char *const[]){arg, NULL});
		log = capture_end();
		CHECK(r == -EINVAL);
		if (r == 0)
			options_fini(&o);
		if (!strstr(log, want)) {
			fprintf(stderr, "want: %s", want);
			tests_failed = 1;
		}
		/* and not as a default file would be: logged, ignored */
		CHECK(strstr(log, "ignoring") == NULL);
	}
	/* --help still reads no file */
	CHECK(parse_with(&o, NULL,
			 (const char *const[]){"--config=/nonexistent/x.conf", "--help", NULL}) ==
	      0);
	CHECK(o.action == OPTIONS_HELP);
	options_fini(&o);
	tmp_cleanup();
}

/* A line's key and value, and a drop-in's name, reach the log with their
 * control bytes escaped: a file cannot clear the terminal that shows the
 * log, change its title or start a forged journal line. */
static void test_escaped_lines(void)
{
	struct options o;
	const char *log;

	tmp_setup();
	write_file("consoled.conf", "vt=\033[2J\033[31m\n"
				    "\033]0;title\a=1\n"
				    "sb-size=1\r\n"
				    "palette=\xc2\x9b"
				    "1m\xff\n"
				    "term=ok\n");
	make_dir("consoled.conf.d");
	write_file("consoled.conf.d/a\033[1mb.conf", "fb-wait=x\n");
	log = parse_logged(&o);
	CHECK(logged_at(log, conf_path, ":1: vt: invalid value '\\x1b[2J\\x1b[31m': expected"));
	CHECK(logged_at(log, conf_path, ":2: unknown key '\\x1b]0;title\\x07', ignoring."));
	/* blanks (\r is one) around a value do not count */
	CHECK_EQ_U(o.sb_size, 1);
	CHECK(logged_at(log, conf_path, ":4: palette: invalid value '\\xc2\\x9b1m\\xff'"));
	CHECK(logged_at(log, tmpdir, "/consoled.conf.d/a\\x1b[1mb.conf:1: fb-wait: invalid"));
	CHECK(strcmp(o.term, "ok") == 0);
	for (const char *p = log; *p; p++)
		if (((unsigned char)*p < 0x20 && *p != '\n') || *p == 0x7f ||
		    ((unsigned char)*p >= 0x80)) {
			fprintf(stderr, "raw byte 0x%02x in the log\n", (unsigned char)*p);
			tests_failed = 1;
			break;
		}
	options_fini(&o);
	tmp_cleanup();
}

int main(void)
{
	RUN(test_every_key);
	RUN(test_booleans);
	RUN(test_precedence);
	RUN(test_config_flag);
	RUN(test_bad_lines);
	RUN(test_missing_and_unreadable);
	RUN(test_login);
	RUN(test_keyboard);
	RUN(test_console_keymap);
	RUN(test_colors);
	RUN(test_config_flag_unreadable);
	RUN(test_escaped_lines);
	return TESTS_RESULT();
}
