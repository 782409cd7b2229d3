/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The scrollback's bound on a real terminal (term.c, with a session on a
 * pty): term_new() and term_resize() give libtsm the lines that
 * term_sb_lines_fit() allows at the widest grid the terminal has had
 * (memory_cap() of this machine), and log what they cut and why; an
 * sb-size that fits is kept whole and not logged.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-event.h>

#include "../../daemon/terminal/term.h"
#include "../../daemon/terminal/tsmpeek.h"
#include "../../daemon/util/log.h"
#include "../../daemon/util/util.h"
#include "test-capture.h"
#include "tests.h"

static char dir[] = "/tmp/test-term-XXXXXX";
static char *session[] = {"sleep", "30", NULL};

static void on_damage(void *userdata)
{
	(void)userdata;
}

static void on_exited(int status, void *userdata)
{
	(void)status;
	(void)userdata;
}

static int term_of(sd_event *event, unsigned sb_size, unsigned cols, struct term **ret,
		   const char **ret_log)
{
	int r;

	capture_begin(dir);
	r = term_new(event,
		     &(struct term_config){.cols = cols,
					   .rows = 30,
					   .width_px = cols * 8,
					   .height_px = 480,
					   .argv = session,
					   .term = "xterm",
					   .sb_size = sb_size},
		     &(struct term_callbacks){on_damage, on_exited}, NULL, ret);
	*ret_log = capture_end();
	return r;
}

static unsigned sb_max(struct term *t)
{
	return tsmpeek(term_screen(t))->sb_max;
}

static void test_sb_bound(void)
{
	/* more lines than a quarter of any machine's memory holds */
	const unsigned want = 4000000000u;
	uint64_t cap = memory_cap(memory_physical(), SIZE_MAX);
	unsigned n100 = term_sb_lines_fit(want, 100, cap), n300 = term_sb_lines_fit(want, 300, cap);
	char expect[160];
	const char *log;
	sd_event *event;
	struct term *t;

	CHECK(n300 < n100 && n100 < want);
	CHECK(sd_event_new(&event) >= 0);
	CHECK(term_of(event, want, 100, &t, &log) == 0);
	if (!t)
		return;
	CHECK(tsmpeek_check(term_screen(t)));
	CHECK_EQ_U(sb_max(t), n100);
	snprintf(expect, sizeof(expect),
		 "Scrollback cut to %u of sb-size=%u lines: lines of 100 columns take about ", n100,
		 want);
	CHECK(strstr(log, expect) != NULL);
	CHECK(strstr(log, "an eighth of the address space") != NULL);

	/* wider: fewer lines */
	capture_begin(dir);
	CHECK(term_resize(t, 300, 30, 2400, 480) == 0);
	log = capture_end();
	CHECK_EQ_U(sb_max(t), n300);
	snprintf(expect, sizeof(expect),
		 "Scrollback cut to %u of sb-size=%u lines: lines of 300 columns", n300, want);
	CHECK(strstr(log, expect) != NULL);

	/* narrower: the lines kept are still 300 columns wide, the bound
	 * stays, nothing new is logged */
	capture_begin(dir);
	CHECK(term_resize(t, 50, 30, 400, 480) == 0);
	log = capture_end();
	CHECK_EQ_U(sb_max(t), n300);
	CHECK(strstr(log, "Scrollback cut") == NULL);
	term_free(t);

	/* the default fits: kept whole, nothing said */
	CHECK(term_of(event, 1000, 300, &t, &log) == 0);
	if (t) {
		CHECK_EQ_U(sb_max(t), 1000);
		CHECK(strstr(log, "Scrollback cut") == NULL);
		term_free(t);
	}
	sd_event_unref(event);
}

int main(void)
{
	tests_session_signals();
	if (!mkdtemp(dir))
		return 1;
	log_set_max_level(LOG_INFO);
	RUN(test_sb_bound);
	rmdir(dir);
	return TESTS_RESULT();
}
