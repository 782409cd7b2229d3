/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "blank"
#include <errno.h>
#include <string.h>

#include "blank.h"
#include "../util/log.h"
#include "../util/util.h"

struct blank {
	sd_event_source *timer;
	uint64_t timeout_usec;
	uint64_t last_input_usec;
	bool active;
	bool blanked;
	void (*on_blank)(void *userdata);
	void *userdata;
};

unsigned blank_kernel_timeout(const char *path)
{
	char buf[32];
	unsigned v;

	if (read_small_file(path, buf, sizeof(buf)) < 0)
		return 0;
	buf[strcspn(buf, "\n")] = '\0';
	if (parse_uint(buf, 0, ~0u, &v) < 0)
		return 0;
	return v;
}

/* Keys do not move the timer (one poke is a store); when it fires early it
 * is set again for the end of the idle period. */
static int blank_on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct blank *b = userdata;
	uint64_t due = b->last_input_usec + b->timeout_usec;

	(void)usec;
	if (!b->active || b->blanked)
		return 0;
	if (now_usec() < due) {
		sd_event_source_set_time(s, due);
		sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
		return 0;
	}
	b->blanked = true;
	b->on_blank(b->userdata);
	return 0;
}

static void blank_arm(struct blank *b)
{
	if (!b->timer)
		return;
	b->last_input_usec = now_usec();
	if (!b->active) {
		sd_event_source_set_enabled(b->timer, SD_EVENT_OFF);
		return;
	}
	sd_event_source_set_time(b->timer, b->last_input_usec + b->timeout_usec);
	sd_event_source_set_enabled(b->timer, SD_EVENT_ONESHOT);
}

int blank_new(sd_event *event, unsigned timeout_sec, void (*on_blank)(void *userdata),
	      void *userdata, struct blank **ret)
{
	struct blank *b = xcalloc(1, sizeof(*b));
	int r;

	b->timeout_usec = timeout_sec * USEC_PER_SEC;
	b->on_blank = on_blank;
	b->userdata = userdata;
	if (timeout_sec > 0) {
		/* to the 100 ms: blanking need not be punctual */
		r = sd_event_add_time(event, &b->timer, CLOCK_MONOTONIC, 0, 100 * USEC_PER_MSEC,
				      blank_on_timer, b);
		if (r < 0) {
			free(b);
			return log_error_errno(r, "Failed to create the blank timer: %m");
		}
		sd_event_source_set_enabled(b->timer, SD_EVENT_OFF);
		log_info("The screen blanks after %u seconds without input", timeout_sec);
	}
	*ret = b;
	return 0;
}

void blank_free(struct blank *b)
{
	if (!b)
		return;
	sd_event_source_disable_unref(b->timer);
	free(b);
}

bool blank_poke(struct blank *b)
{
	bool was;

	if (!b || !b->timer)
		return false;
	was = b->blanked;
	b->blanked = false;
	b->last_input_usec = now_usec();
	/* the timer is only set again when it was spent */
	if (was)
		blank_arm(b);
	return was;
}

bool blank_set_active(struct blank *b, bool active)
{
	bool was;

	if (!b)
		return false;
	was = b->blanked;
	b->active = active;
	b->blanked = false;
	blank_arm(b);
	return was;
}

bool blank_is_blanked(const struct blank *b)
{
	return b && b->blanked;
}
