/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * The bell: what a BEL (0x07) from the session does. The stream stage
 * (stream.h) counts the real ones (not the BEL that ends an OSC string) and
 * hands them here once per read of the pty, so a flood costs one call per
 * read, not one per byte.
 *
 *  - visual (the default): the whole text grid is shown inverted for
 *    BELL_FLASH_MS, then as it was (render_set_flash(): the inversion is
 *    part of the renderer's cell snapshot, so both frames are ordinary
 *    frames that every scroll strategy draws exactly, and nothing of the
 *    flash stays on the glass).
 *  - sound: a tone of BELL_TONE_HZ for BELL_TONE_MS, through the tone
 *    callback (seat.c: every evdev device with EV_SND, such as the PC
 *    speaker, else the VT's KDMKTONE).
 *  - none: counted only.
 *
 * Rate limit: a flash starts at most once every BELL_FLASH_INTERVAL_MS
 * (and not before the last one ended plus a gap), so a flood of BELs
 * (`yes $'\a'`) flashes at most three times a second, below WCAG 2.3.1's
 * threshold; a tone likewise. BELs in between are counted and dropped, not
 * queued. While the VT is not in front (or the screen is blanked) a BEL is
 * counted and nothing else happens.
 *
 * The counters (bells, flashes, tones) are what --stats prints.
 */
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

enum bell_mode {
	BELL_VISUAL,
	BELL_SOUND,
	BELL_NONE,
	_BELL_MODE_MAX,
};

#define BELL_FLASH_MS 100
#define BELL_FLASH_INTERVAL_MS 350 /* at most 3 flashes in any second */
#define BELL_FLASH_GAP_MS 250	   /* at least this much unflashed between two */
#define BELL_TONE_HZ 750	   /* the kernel console's pitch and duration */
#define BELL_TONE_MS 125
#define BELL_TONE_INTERVAL_MS 350

/* "visual", "sound", "none" -> enum bell_mode, or -EINVAL. */
int bell_mode_from_string(const char *s);
const char *bell_mode_to_string(enum bell_mode m);

/* The rate limiter (pure, unit-tested): an event at `now` (microseconds)
 * is let through when none was, or the last one let through was at least
 * `interval` earlier; then it becomes the last one. */
struct bell_limit {
	bool any;
	uint64_t last_usec;
};
bool bell_limit_take(struct bell_limit *l, uint64_t now, uint64_t interval);

struct bell_callbacks {
	/* Required for BELL_VISUAL: show the screen inverted (true) or as it
	 * is (false); the caller draws a frame for it. */
	void (*flash)(bool on, void *userdata);
	/* Required for BELL_SOUND: start a tone of hz for ms milliseconds, or
	 * stop it (hz 0, ms 0; called when the tone's time is up). Returns 0,
	 * or a negative errno when no tone could be made. */
	int (*tone)(unsigned hz, unsigned ms, void *userdata);
};

struct bell_stats {
	uint64_t bells;	  /* every BEL the session sent */
	uint64_t flashes; /* flashes started */
	uint64_t tones;	  /* tones started */
};

struct bell;

/* With CONSOLED_TEST_HOOKS, CONSOLED_TEST_BELL_FLASH_MS (1..10000) makes
 * the flash that long, so that a screendump can catch it. */
int bell_new(sd_event *event, enum bell_mode mode, const struct bell_callbacks *cb, void *userdata,
	     struct bell **ret);
void bell_free(struct bell *b);

/* `count` BELs arrived; `visible`: the VT is in front and drawn. */
void bell_ring(struct bell *b, unsigned count, bool visible);

/* The VT goes away: a flash in progress ends now (the caller redraws
 * everything when it comes back anyway), a tone is stopped. */
void bell_stop(struct bell *b);

enum bell_mode bell_get_mode(const struct bell *b);
const struct bell_stats *bell_get_stats(const struct bell *b);
bool bell_flashing(const struct bell *b);
