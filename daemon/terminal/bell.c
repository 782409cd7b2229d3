/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "bell"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bell.h"
#include "../util/log.h"
#include "../util/util.h"

static const char *const bell_mode_names[_BELL_MODE_MAX] = {
    [BELL_VISUAL] = "visual",
    [BELL_SOUND] = "sound",
    [BELL_NONE] = "none",
};

struct bell {
	enum bell_mode mode;
	struct bell_callbacks cb;
	void *userdata;
	uint64_t flash_usec;	      /* how long a flash shows */
	uint64_t flash_interval_usec; /* between two flashes' starts, at least */
	struct bell_limit flash_limit, tone_limit;
	sd_event_source *flash_end; /* armed while a flash shows */
	sd_event_source *tone_end;  /* armed while a tone sounds */
	bool flashing, sounding;
	bool tone_failed_logged;
	struct bell_stats stats;
};

int bell_mode_from_string(const char *s)
{
	return string_table_lookup(bell_mode_names, _BELL_MODE_MAX, s);
}

const char *bell_mode_to_string(enum bell_mode m)
{
	return m < _BELL_MODE_MAX ? bell_mode_names[m] : "unknown";
}

bool bell_limit_take(struct bell_limit *l, uint64_t now, uint64_t interval)
{
	/* a clock that went back counts as no time passed */
	if (l->any && (now < l->last_usec || now - l->last_usec < interval))
		return false;
	l->any = true;
	l->last_usec = now;
	return true;
}

static void bell_flash_off(struct bell *b)
{
	if (!b->flashing)
		return;
	b->flashing = false;
	sd_event_source_set_enabled(b->flash_end, SD_EVENT_OFF);
	b->cb.flash(false, b->userdata);
}

static void bell_tone_off(struct bell *b)
{
	if (!b->sounding)
		return;
	b->sounding = false;
	sd_event_source_set_enabled(b->tone_end, SD_EVENT_OFF);
	(void)b->cb.tone(0, 0, b->userdata);
}

static int bell_on_flash_end(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)s;
	(void)usec;
	bell_flash_off(userdata);
	return 0;
}

static int bell_on_tone_end(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)s;
	(void)usec;
	bell_tone_off(userdata);
	return 0;
}

/* Test builds: a flash long enough for a screendump to catch it. */
static uint64_t bell_flash_usec(void)
{
#ifdef CONSOLED_TEST_HOOKS
	const char *e = getenv("CONSOLED_TEST_BELL_FLASH_MS");
	unsigned ms;

	if (e && parse_uint(e, 1, 10000, &ms) >= 0) {
		log_info("Test hook: a flash lasts %u ms", ms);
		return ms * USEC_PER_MSEC;
	}
#endif
	return BELL_FLASH_MS * USEC_PER_MSEC;
}

int bell_new(sd_event *event, enum bell_mode mode, const struct bell_callbacks *cb, void *userdata,
	     struct bell **ret)
{
	struct bell *b;
	int r;

	if (mode >= _BELL_MODE_MAX || (mode == BELL_VISUAL && !cb->flash) ||
	    (mode == BELL_SOUND && !cb->tone))
		return -EINVAL;
	b = xcalloc(1, sizeof(*b));
	b->mode = mode;
	b->cb = *cb;
	b->userdata = userdata;
	b->flash_usec = bell_flash_usec();
	b->flash_interval_usec = MAX(BELL_FLASH_INTERVAL_MS * USEC_PER_MSEC,
				     b->flash_usec + BELL_FLASH_GAP_MS * USEC_PER_MSEC);
	/* to the millisecond: sd-event's default accuracy is 250 ms */
	r = sd_event_add_time(event, &b->flash_end, CLOCK_MONOTONIC, 0, USEC_PER_MSEC,
			      bell_on_flash_end, b);
	if (r >= 0)
		r = sd_event_add_time(event, &b->tone_end, CLOCK_MONOTONIC, 0, USEC_PER_MSEC,
				      bell_on_tone_end, b);
	if (r < 0) {
		bell_free(b);
		return log_error_errno(r, "Failed to create the bell's timers: %m");
	}
	sd_event_source_set_enabled(b->flash_end, SD_EVENT_OFF);
	sd_event_source_set_enabled(b->tone_end, SD_EVENT_OFF);
	*ret = b;
	return 0;
}

void bell_free(struct bell *b)
{
	if (!b)
		return;
	sd_event_source_unref(b->flash_end);
	sd_event_source_unref(b->tone_end);
	free(b);
}

static void bell_start_flash(struct bell *b, uint64_t now)
{
	/* a flash showing still is not made longer: the limiter's interval
	 * is longer than a flash */
	if (b->flashing || !bell_limit_take(&b->flash_limit, now, b->flash_interval_usec))
		return;
	b->flashing = true;
	b->stats.flashes++;
	b->cb.flash(true, b->userdata);
	sd_event_source_set_time(b->flash_end, now + b->flash_usec);
	sd_event_source_set_enabled(b->flash_end, SD_EVENT_ONESHOT);
}

static void bell_start_tone(struct bell *b, uint64_t now)
{
	int r;

	if (b->sounding ||
	    !bell_limit_take(&b->tone_limit, now, BELL_TONE_INTERVAL_MS * USEC_PER_MSEC))
		return;
	r = b->cb.tone(BELL_TONE_HZ, BELL_TONE_MS, b->userdata);
	if (r < 0) {
		if (!b->tone_failed_logged)
			log_warning_errno(r, "No bell sound (no EV_SND device, KDMKTONE failed), "
					     "ignoring: %m");
		b->tone_failed_logged = true;
		return;
	}
	b->sounding = true;
	b->stats.tones++;
	sd_event_source_set_time(b->tone_end, now + BELL_TONE_MS * USEC_PER_MSEC);
	sd_event_source_set_enabled(b->tone_end, SD_EVENT_ONESHOT);
}

void bell_ring(struct bell *b, unsigned count, bool visible)
{
	if (!b || count == 0)
		return;
	b->stats.bells += count;
	if (!visible || b->mode == BELL_NONE)
		return;
	if (b->mode == BELL_VISUAL)
		bell_start_flash(b, now_usec());
	else
		bell_start_tone(b, now_usec());
}

void bell_stop(struct bell *b)
{
	if (!b)
		return;
	bell_flash_off(b);
	bell_tone_off(b);
}

enum bell_mode bell_get_mode(const struct bell *b)
{
	return b->mode;
}

const struct bell_stats *bell_get_stats(const struct bell *b)
{
	return &b->stats;
}

bool bell_flashing(const struct bell *b)
{
	return b && b->flashing;
}
