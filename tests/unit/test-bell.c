/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The bell (bell.h): mode names, the rate limiter on a fake clock, and a
 * bell on a real sd-event loop: a flash that ends by itself, a flood that
 * flashes once, a tone that is stopped, BELs counted while the VT is away.
 */
#include <errno.h>
#include <stdlib.h>

#include "../../daemon/terminal/bell.h"
#include "../../daemon/util/util.h"
#include "tests.h"

static void test_modes(void)
{
	CHECK(bell_mode_from_string("visual") == BELL_VISUAL);
	CHECK(bell_mode_from_string("sound") == BELL_SOUND);
	CHECK(bell_mode_from_string("none") == BELL_NONE);
	CHECK(bell_mode_from_string("Visual") == -EINVAL);
	CHECK(bell_mode_from_string("") == -EINVAL);
	CHECK(bell_mode_from_string("visualx") == -EINVAL);
	CHECK(bell_mode_from_string(NULL) == -EINVAL);
	for (int m = 0; m < _BELL_MODE_MAX; m++)
		CHECK(bell_mode_from_string(bell_mode_to_string(m)) == m);
}

static void test_limit(void)
{
	const uint64_t ms = USEC_PER_MSEC, interval = BELL_FLASH_INTERVAL_MS * USEC_PER_MSEC;
	struct bell_limit l = {0};
	unsigned taken = 0;

	/* the first one at any time, even at 0 */
	CHECK(bell_limit_take(&l, 0, interval));
	CHECK(!bell_limit_take(&l, 0, interval));
	CHECK(!bell_limit_take(&l, interval - 1, interval));
	CHECK(bell_limit_take(&l, interval, interval));
	/* a clock that goes back lets nothing through */
	CHECK(!bell_limit_take(&l, interval - 5 * ms, interval));
	CHECK(!bell_limit_take(&l, 2 * interval - 1, interval));
	CHECK(bell_limit_take(&l, 2 * interval, interval));

	/* a flood: one event a millisecond for ten seconds, no more than
	 * three taken in any second (WCAG 2.3.1) */
	l = (struct bell_limit){0};
	uint64_t times[64];
	for (uint64_t t = 1000 * ms; t < 11000 * ms; t += ms)
		if (bell_limit_take(&l, t, interval)) {
			CHECK(taken < ELEMENTSOF(times));
			if (taken < ELEMENTSOF(times))
				times[taken] = t;
			taken++;
		}
	CHECK(taken >= 28 && taken <= 29);
	for (unsigned i = 3; i < taken && i < ELEMENTSOF(times); i++)
		CHECK(times[i] - times[i - 3] >= USEC_PER_SEC);
}

struct probe {
	unsigned flash_on, flash_off;
	bool shown;
	unsigned tones, silences, last_hz;
	int tone_result;
};

static void probe_flash(bool on, void *userdata)
{
	struct probe *p = userdata;

	CHECK(p->shown != on); /* on and off alternate */
	p->shown = on;
	if (on)
		p->flash_on++;
	else
		p->flash_off++;
}

static int probe_tone(unsigned hz, unsigned ms, void *userdata)
{
	struct probe *p = userdata;

	if (hz) {
		CHECK(ms == BELL_TONE_MS);
		p->tones++;
		p->last_hz = hz;
	} else
		p->silences++;
	return p->tone_result;
}

static const struct bell_callbacks probe_callbacks = {probe_flash, probe_tone};

/* Runs the loop for at least `ms` milliseconds, and what is due then. */
static void run_for(sd_event *e, unsigned ms)
{
	uint64_t end = now_usec() + ms * USEC_PER_MSEC;

	for (uint64_t now; (now = now_usec()) < end;)
		sd_event_run(e, end - now);
	while (sd_event_run(e, 0) > 0)
		;
}

static void test_visual(void)
{
	struct probe p = {0};
	struct bell *b = NULL;
	sd_event *e = NULL;

	unsetenv("CONSOLED_TEST_BELL_FLASH_MS");
	CHECK(sd_event_new(&e) >= 0);
	CHECK(bell_new(e, BELL_VISUAL, &probe_callbacks, &p, &b) == 0);
	uint64_t start = now_usec();
	bell_ring(b, 1, true);
	CHECK(p.flash_on == 1 && p.shown && bell_flashing(b));
	/* a flood right after: counted, no second flash, the first not made
	 * longer */
	for (int i = 0; i < 1000; i++)
		bell_ring(b, 100, true);
	CHECK(p.flash_on == 1);
	run_for(e, BELL_FLASH_MS + 50);
	CHECK(p.flash_off == 1 && !p.shown && !bell_flashing(b));
	/* still inside the interval: nothing (unless this process was held
	 * up for longer than the interval) */
	bell_ring(b, 1, true);
	if (now_usec() - start < BELL_FLASH_INTERVAL_MS * USEC_PER_MSEC)
		CHECK(p.flash_on == 1);
	run_for(e, BELL_FLASH_INTERVAL_MS);
	bell_ring(b, 1, true);
	CHECK(p.flash_on == 2 || p.flash_on == 3);
	/* the VT goes away during the flash: it ends at once */
	unsigned flashes = p.flash_on;
	bell_stop(b);
	CHECK(p.flash_off == flashes && !p.shown);
	run_for(e, BELL_FLASH_INTERVAL_MS + 20);
	CHECK(p.flash_off == flashes);
	/* while away: counted, not shown */
	bell_ring(b, 5, false);
	CHECK(p.flash_on == flashes);
	CHECK_EQ_U(bell_get_stats(b)->bells, 1 + 100000 + 1 + 1 + 5);
	CHECK_EQ_U(bell_get_stats(b)->flashes, flashes);
	CHECK_EQ_U(bell_get_stats(b)->tones, 0);
	CHECK(p.tones == 0 && p.silences == 0);
	bell_free(b);
	sd_event_unref(e);
}

static void test_test_hook(void)
{
	struct probe p = {0};
	struct bell *b = NULL;
	sd_event *e = NULL;

	setenv("CONSOLED_TEST_BELL_FLASH_MS", "400", 1);
	CHECK(sd_event_new(&e) >= 0);
	CHECK(bell_new(e, BELL_VISUAL, &probe_callbacks, &p, &b) == 0);
	bell_ring(b, 1, true);
	run_for(e, BELL_FLASH_MS + 50);
#ifdef CONSOLED_TEST_HOOKS
	CHECK(p.shown); /* longer than a flash */
	run_for(e, 400);
#endif
	CHECK(!p.shown && p.flash_off == 1);
	unsetenv("CONSOLED_TEST_BELL_FLASH_MS");
	bell_free(b);
	sd_event_unref(e);
}

static void test_sound(void)
{
	struct probe p = {0};
	struct bell *b = NULL;
	sd_event *e = NULL;

	CHECK(sd_event_new(&e) >= 0);
	CHECK(bell_new(e, BELL_SOUND, &probe_callbacks, &p, &b) == 0);
	bell_ring(b, 3, true);
	CHECK(p.tones == 1 && p.last_hz == BELL_TONE_HZ && p.silences == 0);
	bell_ring(b, 1, true); /* while it sounds */
	CHECK(p.tones == 1);
	run_for(e, BELL_TONE_MS + 50);
	CHECK(p.silences == 1);
	CHECK(p.flash_on == 0);
	run_for(e, BELL_TONE_INTERVAL_MS);
	/* no speaker at all: not counted as a tone, nothing to silence */
	p.tone_result = -ENODEV;
	bell_ring(b, 1, true);
	CHECK(p.tones == 2);
	run_for(e, BELL_TONE_MS + 50);
	CHECK(p.silences == 1);
	CHECK_EQ_U(bell_get_stats(b)->bells, 5);
	CHECK_EQ_U(bell_get_stats(b)->tones, 1);
	bell_free(b);
	sd_event_unref(e);

	/* none: counted only */
	p = (struct probe){0};
	CHECK(sd_event_new(&e) >= 0);
	CHECK(bell_new(e, BELL_NONE, &probe_callbacks, &p, &b) == 0);
	bell_ring(b, 2, true);
	CHECK(p.tones == 0 && p.flash_on == 0);
	CHECK_EQ_U(bell_get_stats(b)->bells, 2);
	CHECK(bell_new(e, BELL_VISUAL, &(struct bell_callbacks){0}, &p, &(struct bell *){0}) ==
	      -EINVAL);
	bell_free(b);
	sd_event_unref(e);
}

int main(void)
{
	RUN(test_modes);
	RUN(test_limit);
	RUN(test_visual);
	RUN(test_test_hook);
	RUN(test_sound);
	return TESTS_RESULT();
}
