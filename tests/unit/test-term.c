/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The session's environment: built from nothing, so nothing of the daemon's
 * own (the notify socket, the watchdog, the journal stream, test switches)
 * reaches the user; only the terminal's, the seat's, PATH and the locale.
 */
#include "../../daemon/term.h"
#include "../../daemon/util/util.h"
#include "tests.h"

static bool env_has(char **env, const char *entry)
{
	for (; *env; env++)
		if (strcmp(*env, entry) == 0)
			return true;
	return false;
}

static void test_session_env(void)
{
	char *daemon_env[] = {
	    "NOTIFY_SOCKET=/run/systemd/notify",
	    "WATCHDOG_USEC=30000000",
	    "WATCHDOG_PID=1",
	    "JOURNAL_STREAM=8:1234",
	    "CONSOLED_BACKEND_DIR=/tmp/evil",
	    "LD_PRELOAD=/tmp/x.so",
	    "HOME=/root",
	    "PATH=/tmp/evil:/bin",
	    "TERM=linux",
	    "LANG=de_DE.UTF-8",
	    "LC_TIME=C",
	    "TZ=Europe/Berlin",
	    "LCX=1",
	    "LANGUAGE=de",
	    NULL,
	};
	struct term_config cfg = {.term = "xterm-256color", .vt = 3, .truecolor = true};
	char scratch[4096], *env[32];
	size_t n;

	n = term_session_env(&cfg, daemon_env, env, ELEMENTSOF(env), scratch, sizeof(scratch));
	CHECK(env[n] == NULL);
	CHECK_EQ_U(n, 10);
	CHECK(env_has(env, "TERM=xterm-256color"));
	CHECK(env_has(env, "COLORTERM=truecolor"));
	/* the default colours, light grey on black: a dark background */
	CHECK(env_has(env, "COLORFGBG=7;0"));
	CHECK(env_has(env, "XDG_SEAT=seat0"));
	CHECK(env_has(env, "XDG_VTNR=3"));
	CHECK(env_has(env, "PATH=" TERM_SESSION_PATH));
	CHECK(env_has(env, "LANG=de_DE.UTF-8"));
	CHECK(env_has(env, "LANGUAGE=de"));
	CHECK(env_has(env, "LC_TIME=C"));
	CHECK(env_has(env, "TZ=Europe/Berlin"));
	for (size_t i = 0; i < n; i++) {
		CHECK(strncmp(env[i], "NOTIFY_SOCKET", 13) != 0);
		CHECK(strncmp(env[i], "CONSOLED_", 9) != 0);
		CHECK(strncmp(env[i], "LD_", 3) != 0);
	}

	/* 8 bpp, no VT: no COLORTERM, no seat */
	cfg.truecolor = false;
	cfg.vt = 0;
	n = term_session_env(&cfg, (char *[]){NULL}, env, ELEMENTSOF(env), scratch,
			     sizeof(scratch));
	CHECK_EQ_U(n, 3);
	CHECK(env_has(env, "TERM=xterm-256color"));
	CHECK(env_has(env, "COLORFGBG=7;0"));
	CHECK(env_has(env, "PATH=" TERM_SESSION_PATH));

	/* Bounded by the array and the scratch space, always terminated. */
	n = term_session_env(&cfg, daemon_env, env, 2, scratch, sizeof(scratch));
	CHECK_EQ_U(n, 1);
	CHECK(env[1] == NULL);
	n = term_session_env(&cfg, daemon_env, env, ELEMENTSOF(env), scratch, 20);
	CHECK_EQ_U(n, 1);
	CHECK(env[1] == NULL);
}

int main(void)
{
	RUN(test_session_env);
	return TESTS_RESULT();
}
