/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The loader of a production build has no test hooks. This program is built
 * from daemon/devices/backend.c itself, without CONSOLED_TEST_HOOKS whatever
 * -Dtest-hooks says (tests/unit/meson.build), and checks that
 * CONSOLED_BACKEND_DIR does not move the plugin directory, that
 * CONSOLED_TEST_BACKEND_HANG does not make the engine hang, and that neither
 * variable is even read: getenv() is interposed here and notes every
 * CONSOLED_* name asked for.
 *
 * Runs as root (the loader wants root-owned plugins); skipped otherwise.
 */
#include <errno.h>
#include <stdbool.h>
#include <unistd.h>

#include "../../daemon/devices/backend.h"
#include "test-backend-fake.h"
#include "tests.h"

#ifdef CONSOLED_TEST_HOOKS
#error "test-backend-production must be built without CONSOLED_TEST_HOOKS"
#endif

extern char **environ;

static char asked[8][64];
static unsigned n_asked;

/* The C library's getenv(), noting what consoled's code asks for. */
char *getenv(const char *name)
{
	size_t len = strlen(name);

	if (strncmp(name, "CONSOLED_", 9) == 0 && n_asked < sizeof(asked) / sizeof(asked[0]))
		snprintf(asked[n_asked++], sizeof(asked[0]), "%s", name);
	for (char **e = environ; e && *e; e++)
		if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
			return *e + len + 1;
	return NULL;
}

static bool was_asked(const char *name)
{
	for (unsigned i = 0; i < n_asked; i++)
		if (strcmp(asked[i], name) == 0)
			return true;
	return false;
}

static char dir_tmpl[] = "/tmp/consoled-test-productionXXXXXX";
static const char *dir;

/* The directory stays BACKEND_DIR; the plugin in CONSOLED_BACKEND_DIR is
 * neither listed nor loaded. */
static void test_backend_dir(void)
{
	struct backend_config cfg = {.name = "rage128"};
	struct backend *b = NULL;
	struct fake_fb f;
	char *out = NULL;
	size_t len = 0;
	FILE *mem;

	CHECK(strcmp(backend_dir(), BACKEND_DIR) == 0);

	mem = open_memstream(&out, &len);
	CHECK(mem != NULL);
	if (!mem)
		return;
	backend_list(NULL, mem);
	fclose(mem);
	fprintf(stderr, "%s", out);
	CHECK(strstr(out, "Backend directory: " BACKEND_DIR) != NULL);
	CHECK(strstr(out, dir) == NULL);
	free(out);

	CHECK(fake_fb_init(&f, "ATY Rage128") == 0);
	(void)backend_load(&f.fb, &cfg, &b);
	/* Unless this machine has a rage128 installed in BACKEND_DIR, nothing
	 * loads: the one in CONSOLED_BACKEND_DIR is not looked at. */
	if (access(BACKEND_DIR "/rage128.so", F_OK) != 0)
		CHECK(b == NULL);
	backend_free(b);
	fake_fb_done(&f);
}

/* Loaded from the test's directory (backend_config.dir), the plugin's
 * engine answers: the fault switch in the environment is not passed on. */
static void test_no_hang(void)
{
	struct backend_config cfg = {.name = "rage128", .dir = dir};
	struct backend *b = NULL;
	struct fake_fb f;

	CHECK(fake_fb_init(&f, "ATY Rage128") == 0);
	CHECK(backend_load(&f.fb, &cfg, &b) == 0 && b);
	if (b) {
		CHECK(backend_copy(b, 0, 16, 0, 0, FAKE_XRES, 64) == 0);
		CHECK(backend_sync(b) == 0); /* -ETIMEDOUT if the switch were on */
		CHECK(backend_ok(b));
	}
	backend_free(b);
	fake_fb_done(&f);
}

int main(void)
{
	if (geteuid() != 0) {
		fprintf(stderr,
			"test-backend-production: needs root (root-owned plugins); skipped\n");
		return 77;
	}
	dir = make_dir(dir_tmpl);
	if (install_plugin(dir, "rage128", "rage128.so") < 0)
		return 1;
	setenv("CONSOLED_BACKEND_DIR", dir, 1);
	setenv("CONSOLED_TEST_BACKEND_HANG", "1", 1);

	RUN(test_backend_dir);
	RUN(test_no_hang);
	CHECK(!was_asked("CONSOLED_BACKEND_DIR"));
	CHECK(!was_asked("CONSOLED_TEST_BACKEND_HANG"));

	remove_dir(dir);
	return TESTS_RESULT();
}
