/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "input"
#include <errno.h>
#include <fcntl.h>
#include <libtsm.h>
#include <libudev.h>
#include <linux/input.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/reboot.h>
#include <unistd.h>
#include <xkbcommon/xkbcommon.h>

#include "compose.h"
#include "input.h"
#include "../devices/udevseat.h"
#include "../terminal/keys.h"
#include "../util/log.h"
#include "../util/util.h"

#define BITS_PER_LONG (8 * sizeof(long))
#define NBITS(n) (((n) + BITS_PER_LONG - 1) / BITS_PER_LONG)
#define TEST_BIT(bit, arr) (((arr)[(bit) / BITS_PER_LONG] >> ((bit) % BITS_PER_LONG)) & 1UL)
#define SET_BIT(bit, arr) ((arr)[(bit) / BITS_PER_LONG] |= 1UL << ((bit) % BITS_PER_LONG))
#define CLEAR_BIT(bit, arr) ((arr)[(bit) / BITS_PER_LONG] &= ~(1UL << ((bit) % BITS_PER_LONG)))

/* evdev key codes are xkb key codes minus 8 (the X11 offset). */
#define EVDEV_OFFSET 8

/* What a device is for. A device may be a keyboard and a pointer at once. */
enum pointer_kind {
	POINTER_NONE,
	POINTER_REL,	  /* a mouse: REL_X/REL_Y */
	POINTER_ABS,	  /* a tablet, a touchscreen: ABS_X/ABS_Y scaled to the area */
	POINTER_TOUCHPAD, /* ABS_X/ABS_Y of a pad: moves the pointer by the finger's moves */
};

/* A pointer device's buttons as it reports them (raw) */
#define RAW_LEFT (1u << 0)
#define RAW_MIDDLE (1u << 1)
#define RAW_RIGHT (1u << 2)
#define RAW_TOUCH (1u << 3)

/* A touchpad without a resolution is taken as this wide, in mm; a mm of
 * finger motion moves the pointer by TOUCHPAD_PX_PER_MM pixels (times the
 * speed). */
#define TOUCHPAD_DEFAULT_MM 100
#define TOUCHPAD_PX_PER_MM 8

/* One notch of a high-resolution wheel (linux/input-event-codes.h). */
#define WHEEL_HI_RES_NOTCH 120

struct input_device {
	struct input_device *next;
	struct input *in;
	int fd;
	char *devnode;
	sd_event_source *source;
	bool has_leds;
	/* With input_config.sound: the EV_SND code a bell is written with
	 * (SND_TONE, else SND_BELL), or 0 for a device without sound. */
	unsigned sound;
	bool keyboard;
	enum pointer_kind pointer;
	bool wheel_hi_res; /* REL_WHEEL_HI_RES: REL_WHEEL is ignored */
	struct input_absinfo abs_x, abs_y;
	/* The report being read (up to its SYN_REPORT); sums saturate. */
	int64_t rel_x, rel_y;
	int abs_vx, abs_vy; /* the axes' last values */
	bool abs_moved;
	int64_t wheel;	      /* 120ths of a notch this report */
	int wheel_rest;	      /* 120ths not yet reported as a notch */
	bool touching;	      /* touchpad: a finger was down at the last report */
	int last_vx, last_vy; /* touchpad: where it was */
	unsigned raw;	      /* RAW_* as the device reports them now */
	unsigned reported;    /* buttons 1..3 (bits 0..2) as the callback has them */
	/* Since a SYN_DROPPED, until the SYN_REPORT that ends the broken report. */
	bool dropped;
	/* its events carry CLOCK_MONOTONIC times (EVIOCSCLOCKID), which the
	 * key trace of --stats compares with its own clock */
	bool clock_monotonic;
	/* The keys this device has pressed into the xkb state: what a resync
	 * compares with the keys the device reports down. */
	unsigned long down[NBITS(KEY_MAX + 1)];
};

#define INPUT_MODS 6

struct input {
	sd_event *event;
	struct input_callbacks cb;
	void *userdata;
	struct input_config cfg;
	bool active;
	/* the key event being handled: its kernel time, and when its device's
	 * read began (the key trace of --stats) */
	uint64_t event_usec, read_usec;

	struct udev *udev;
	struct udev_monitor *monitor;
	sd_event_source *monitor_source;
	struct input_device *devices;

	struct xkb_context *ctx;
	struct xkb_keymap *keymap;
	struct xkb_state *state;
	xkb_mod_index_t mod_index[INPUT_MODS]; /* input_mod_map's, in keymap */
	/* the US layout, for the kitty protocol's base layout key: the keymap
	 * when its first layout is it, else one of its own (NULL: none) */
	struct xkb_keymap *us_keymap;
	/* the keys (xkb keycodes) whose last press went to the key callback:
	 * their releases go there too */
	unsigned long sent[(KEY_MAX + EVDEV_OFFSET) / BITS_PER_LONG + 1];
	struct compose *compose; /* compose.h: dead keys and the Compose key */

	sd_event_source *repeat_source;
	uint32_t repeat_key; /* xkb keycode, 0 = none */

	/* The pointer, shared by every pointer device: in pixels of the area. */
	unsigned area_w, area_h; /* 0: no area yet, events are dropped */
	double px, py;
};

int input_scale_abs(int value, int min, int max, unsigned size)
{
	int64_t range = (int64_t)max - min + 1;

	if (size == 0 || range <= 1)
		return 0;
	if (value < min)
		value = min;
	if (value > max)
		value = max;
	return (int)(((int64_t)value - min) * size / range);
}

double input_touchpad_units_per_mm(int min, int max, int resolution)
{
	/* in double: INT_MIN..INT_MAX is 2^32 units */
	double range = (double)max - min + 1.0;

	if (resolution > 0)
		return resolution;
	return range > 0 ? range / TOUCHPAD_DEFAULT_MM : 0;
}

double input_touchpad_pixels(int from, int to, double units_per_mm, double speed)
{
	double v;

	if (!(units_per_mm > 0))
		return 0;
	v = ((double)to - from) / units_per_mm * TOUCHPAD_PX_PER_MM * speed;
	return isfinite(v) ? v : 0;
}

int input_wheel_notches(int *rest, int64_t wheel)
{
	/* more than the most notches reported is as good as any more */
	const int64_t most = (INPUT_WHEEL_NOTCHES_MAX + 1) * (int64_t)WHEEL_HI_RES_NOTCH;
	int r, n;

	if (wheel == 0)
		return 0;
	/* A turn the other way starts from a whole notch. */
	if ((wheel > 0) != (*rest > 0))
		*rest = 0;
	r = *rest + (int)(wheel > most ? most : wheel < -most ? -most : wheel);
	n = r / WHEEL_HI_RES_NOTCH;
	*rest = r - n * WHEEL_HI_RES_NOTCH;
	if (n > INPUT_WHEEL_NOTCHES_MAX || n < -INPUT_WHEEL_NOTCHES_MAX) {
		*rest = 0;
		n = n > 0 ? INPUT_WHEEL_NOTCHES_MAX : -INPUT_WHEEL_NOTCHES_MAX;
	}
	return n;
}

bool input_zoom_key(uint32_t keysym, unsigned mods, int *ret_step)
{
	/* Ctrl alone (Shift allowed: '+' is Shift+'=' on many layouts). */
	if ((mods & (TSM_CONTROL_MASK | TSM_ALT_MASK | TSM_LOGO_MASK)) != TSM_CONTROL_MASK)
		return false;
	switch (keysym) {
	case XKB_KEY_plus:
	case XKB_KEY_equal:
	case XKB_KEY_KP_Add:
		*ret_step = 1;
		return true;
	case XKB_KEY_minus:
	case XKB_KEY_KP_Subtract:
		*ret_step = -1;
		return true;
	case XKB_KEY_0:
	case XKB_KEY_KP_0:
	case XKB_KEY_KP_Insert:
		*ret_step = 0;
		return true;
	default:
		return false;
	}
}

bool input_view_key(uint32_t keysym, unsigned mods)
{
	return (keysym == XKB_KEY_k || keysym == XKB_KEY_K) &&
	       (mods & (TSM_CONTROL_MASK | TSM_ALT_MASK | TSM_LOGO_MASK | TSM_SHIFT_MASK)) ==
		   (TSM_CONTROL_MASK | TSM_LOGO_MASK);
}

bool input_rotate_key(uint32_t keysym, unsigned mods, int *ret_step)
{
	if ((mods & (TSM_CONTROL_MASK | TSM_ALT_MASK | TSM_LOGO_MASK | TSM_SHIFT_MASK)) !=
	    (TSM_CONTROL_MASK | TSM_LOGO_MASK))
		return false;
	switch (keysym) {
	case XKB_KEY_Right:
	case XKB_KEY_KP_Right:
		*ret_step = 1;
		return true;
	case XKB_KEY_Left:
	case XKB_KEY_KP_Left:
		*ret_step = -1;
		return true;
	case XKB_KEY_Up:
	case XKB_KEY_KP_Up:
		*ret_step = 0;
		return true;
	default:
		return false;
	}
}

unsigned input_vt_switch_target(uint32_t keysym, unsigned mods)
{
	if (keysym >= XKB_KEY_XF86Switch_VT_1 && keysym <= XKB_KEY_XF86Switch_VT_12)
		return keysym - XKB_KEY_XF86Switch_VT_1 + 1;
	if ((mods & (TSM_CONTROL_MASK | TSM_ALT_MASK)) == (TSM_CONTROL_MASK | TSM_ALT_MASK) &&
	    keysym >= XKB_KEY_F1 && keysym <= XKB_KEY_F12)
		return keysym - XKB_KEY_F1 + 1;
	return 0;
}

/* The modifiers consoled maps to libtsm's masks, by their xkb names; their
 * indices in the keymap are looked up once (input_setup_mods()), not by
 * name at each key. */
static const struct {
	const char *name;
	unsigned mask;
} input_mod_map[INPUT_MODS] = {
    {XKB_MOD_NAME_SHIFT, TSM_SHIFT_MASK},  {XKB_MOD_NAME_CAPS, TSM_LOCK_MASK},
    {XKB_MOD_NAME_CTRL, TSM_CONTROL_MASK}, {XKB_MOD_NAME_ALT, TSM_ALT_MASK},
    {XKB_MOD_NAME_LOGO, TSM_LOGO_MASK},	   {XKB_MOD_NAME_NUM, KEYS_NUM_LOCK_MASK},
};

static void input_setup_mods(struct input *in)
{
	for (unsigned i = 0; i < INPUT_MODS; i++)
		in->mod_index[i] = xkb_keymap_mod_get_index(in->keymap, input_mod_map[i].name);
}

static unsigned input_mods(struct input *in)
{
	xkb_mod_mask_t active = xkb_state_serialize_mods(in->state, XKB_STATE_MODS_EFFECTIVE);
	unsigned mods = 0;

	for (unsigned i = 0; i < INPUT_MODS; i++)
		if (in->mod_index[i] < 32 && (active & (UINT32_C(1) << in->mod_index[i])))
			mods |= input_mod_map[i].mask;
	return mods;
}

static void input_write_leds(struct input *in)
{
	static const struct {
		const char *name;
		unsigned code;
	} leds[] = {
	    {XKB_LED_NAME_CAPS, LED_CAPSL},
	    {XKB_LED_NAME_NUM, LED_NUML},
	    {XKB_LED_NAME_SCROLL, LED_SCROLLL},
	};
	struct input_event ev[ELEMENTSOF(leds) + 1];

	memset(ev, 0, sizeof(ev));
	for (unsigned i = 0; i < ELEMENTSOF(leds); i++) {
		ev[i].type = EV_LED;
		ev[i].code = (uint16_t)leds[i].code;
		ev[i].value = xkb_state_led_name_is_active(in->state, leds[i].name) > 0;
	}
	ev[ELEMENTSOF(leds)].type = EV_SYN;
	ev[ELEMENTSOF(leds)].code = SYN_REPORT;

	for (struct input_device *d = in->devices; d; d = d->next)
		if (d->keyboard && write(d->fd, ev, sizeof(ev)) < 0)
			log_debug_errno(errno, "Failed to set LEDs on %s: %m", d->devnode);
}

static void input_stop_repeat(struct input *in)
{
	in->repeat_key = 0;
	if (in->repeat_source)
		sd_event_source_set_enabled(in->repeat_source, SD_EVENT_OFF);
}

/* What the kernel's keyboard handler does on Ctrl+Alt+Del: with
 * kernel.ctrl-alt-del = 0 (systemd sets it so) SIGINT to cad_pid (init), else
 * an immediate reboot. */
static void input_ctrl_alt_del(void)
{
	char buf[32];
	unsigned pid = 1;

	if (read_small_file("/proc/sys/kernel/ctrl-alt-del", buf, sizeof(buf)) == 0 &&
	    buf[0] != '0') {
		log_notice("Ctrl+Alt+Del: rebooting (kernel.ctrl-alt-del is set)");
		sync();
		reboot(RB_AUTOBOOT);
		return;
	}
	if (read_small_file("/proc/sys/kernel/cad_pid", buf, sizeof(buf)) == 0) {
		buf[strcspn(buf, "\n")] = '\0';
		if (parse_uint(buf, 1, 1u << 30, &pid) < 0)
			pid = 1;
	}
	log_notice("Ctrl+Alt+Del: sending SIGINT to process %u", pid);
	if (kill((pid_t)pid, SIGINT) < 0)
		log_warning_errno(errno, "Failed to signal process %u: %m", pid);
}

/* A composed text (compose.h): each of its characters as a key of its own,
 * the result's keysym on the first (xkb's for the character on the others),
 * with the modifiers of the key that completed it. */
static void input_send_text(struct input *in, const char *text, uint32_t keysym, unsigned mods)
{
	const unsigned char *p = (const unsigned char *)text;

	while (*p && in->cb.key) {
		unsigned len = *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : *p >= 0xc0 ? 2 : 1;
		uint32_t cp = len == 1 ? *p : *p & (0x7f >> len);

		for (unsigned i = 1; i < len; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return; /* xkbcommon checks its strings; cannot happen */
			cp = cp << 6 | (p[i] & 0x3f);
		}
		p += len;
		if (keysym == XKB_KEY_NoSymbol)
			keysym = xkb_utf32_to_keysym(cp);
		in->cb.key(keysym, cp < 128 ? cp : TSM_VTE_INVALID, mods, cp, NULL, in->userdata);
		keysym = XKB_KEY_NoSymbol;
	}
}

/* What the kitty keyboard protocol needs of key beyond its keysym. */
static struct keys_event input_key_event(struct input *in, uint32_t key, enum keys_event_type type)
{
	struct keys_event ev = {
	    .type = type, .event_usec = in->event_usec, .read_usec = in->read_usec};
	const xkb_keysym_t *syms;
	xkb_layout_index_t layout = xkb_state_key_get_layout(in->state, key);

	if (layout != XKB_LAYOUT_INVALID &&
	    xkb_keymap_key_get_syms_by_level(in->keymap, key, layout, 0, &syms) == 1)
		ev.unshifted = syms[0];
	if (in->us_keymap && xkb_keymap_key_get_syms_by_level(in->us_keymap, key, 0, 0, &syms) == 1)
		ev.base = syms[0];
	return ev;
}

/* A release of a key whose press the key callback got, with the state
 * after it (a modifier key's release no longer has its modifier). */
static void input_release_key(struct input *in, uint32_t key)
{
	xkb_keysym_t sym;
	struct keys_event ev;
	uint32_t unicode;

	if (key >= BITS_PER_LONG * ELEMENTSOF(in->sent) || !TEST_BIT(key, in->sent))
		return;
	CLEAR_BIT(key, in->sent);
	sym = xkb_state_key_get_one_sym(in->state, key);
	if (sym == XKB_KEY_NoSymbol || !in->cb.key)
		return;
	ev = input_key_event(in, key, KEYS_RELEASE);
	unicode = xkb_keysym_to_utf32(sym);
	in->cb.key(sym, sym < 128 ? sym : TSM_VTE_INVALID, input_mods(in),
		   unicode ? unicode : TSM_VTE_INVALID, &ev, in->userdata);
}

/* Acts on one key press (or repeat) of xkb keycode `key`. Returns whether the
 * key may repeat: not when it went into a Compose sequence. */
static bool input_dispatch_key(struct input *in, uint32_t key, enum keys_event_type type)
{
	struct keys_event ev;
	xkb_keysym_t sym = xkb_state_key_get_one_sym(in->state, key);
	unsigned mods = input_mods(in);
	char text[COMPOSE_TEXT_MAX];
	uint32_t unicode, ascii, composed;
	unsigned vt;
	int step;

	if (sym == XKB_KEY_NoSymbol)
		return true;

	/* consoled's own keys act whatever sequence is pending */
	vt = input_vt_switch_target(sym, mods);
	if (vt) {
		if (in->cb.switch_vt)
			in->cb.switch_vt(vt, in->userdata);
		return true;
	}
	if (input_zoom_key(sym, mods, &step) && in->cb.zoom && in->cb.zoom(step, in->userdata))
		return true;
	if (input_rotate_key(sym, mods, &step) && in->cb.rotate) {
		in->cb.rotate(step, in->userdata);
		return true;
	}
	/* once per press: a repeat would open and close the view in turn */
	if (input_view_key(sym, mods) && in->cb.view && in->cb.view(in->userdata)) {
		compose_reset(in->compose);
		return false;
	}
	if ((mods & TSM_SHIFT_MASK) && (sym == XKB_KEY_Prior || sym == XKB_KEY_Next)) {
		if (in->cb.scroll_page)
			in->cb.scroll_page(sym == XKB_KEY_Prior ? -1 : 1, in->userdata);
		return true;
	}
	if ((mods & (TSM_CONTROL_MASK | TSM_ALT_MASK)) == (TSM_CONTROL_MASK | TSM_ALT_MASK) &&
	    (sym == XKB_KEY_Delete || sym == XKB_KEY_KP_Delete)) {
		input_ctrl_alt_del();
		return true;
	}

	switch (compose_feed(in->compose, sym, text, &composed)) {
	case COMPOSE_PASS:
		break;
	case COMPOSE_PENDING:
	case COMPOSE_CANCELLED:
		return false;
	case COMPOSE_DONE:
		input_send_text(in, text, composed, mods);
		return false;
	}

	unicode = xkb_keysym_to_utf32(sym);
	if (unicode == 0)
		unicode = TSM_VTE_INVALID;
	ascii = sym < 128 ? sym : TSM_VTE_INVALID;
	ev = input_key_event(in, key, type);
	if (in->cb.key) {
		if (key < BITS_PER_LONG * ELEMENTSOF(in->sent))
			SET_BIT(key, in->sent);
		in->cb.key(sym, ascii, mods, unicode, &ev, in->userdata);
	}
	return true;
}

static int input_on_repeat(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct input *in = userdata;

	(void)usec;
	if (!in->repeat_key || !in->active)
		return 0;
	input_dispatch_key(in, in->repeat_key, KEYS_REPEAT);
	sd_event_source_set_time_relative(s, USEC_PER_SEC / in->cfg.repeat_rate_hz);
	sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	return 0;
}

static void input_start_repeat(struct input *in, uint32_t key)
{
	int r;

	if (in->cfg.repeat_rate_hz == 0 || !xkb_keymap_key_repeats(in->keymap, key))
		return;
	in->repeat_key = key;
	if (!in->repeat_source) {
		/* to the millisecond: sd-event's default accuracy (250 ms)
		 * let the repeat slip to about half its rate */
		r = sd_event_add_time_relative(in->event, &in->repeat_source, CLOCK_MONOTONIC,
					       in->cfg.repeat_delay_ms * USEC_PER_MSEC,
					       USEC_PER_MSEC, input_on_repeat, in);
		if (r < 0) {
			log_warning_errno(r, "Failed to start key repeat: %m");
			in->repeat_key = 0;
		}
		return;
	}
	sd_event_source_set_time_relative(in->repeat_source,
					  in->cfg.repeat_delay_ms * USEC_PER_MSEC);
	sd_event_source_set_enabled(in->repeat_source, SD_EVENT_ONESHOT);
}

static void input_handle_key(struct input_device *d, unsigned code, int value)
{
	struct input *in = d->in;
	uint32_t key = code + EVDEV_OFFSET;
	enum xkb_state_component changed = 0;

	if (!in->active)
		return; /* dropped: the VT is not ours now; resynced on acquire */
	if (in->cb.activity)
		in->cb.activity(in->userdata);
	if (value == 2)
		return; /* the kernel's own autorepeat: we repeat in software */
	if (code > KEY_MAX)
		return;

	/* The xkb state takes each key of each device once: a press it already
	 * has (a resync found the key down) or a release of a key it does not
	 * have (a resync found it up) would count twice. */
	if (value && !TEST_BIT(code, d->down)) {
		SET_BIT(code, d->down);
		changed = xkb_state_update_key(in->state, key, XKB_KEY_DOWN);
	} else if (!value && TEST_BIT(code, d->down)) {
		CLEAR_BIT(code, d->down);
		changed = xkb_state_update_key(in->state, key, XKB_KEY_UP);
		if (key == in->repeat_key)
			input_stop_repeat(in);
	}
	if (changed & XKB_STATE_LEDS)
		input_write_leds(in);

	if (value == 0) {
		input_release_key(in, key);
		return;
	}
	if (input_dispatch_key(in, key, KEYS_PRESS))
		input_start_repeat(in, key);
	else if (in->repeat_key)
		input_stop_repeat(in); /* a key held before does not type into a sequence */
}

/* Mouse and touch buttons (BTN_MISC up to the first KEY_ after them): never
 * keys for xkb. */
static bool input_code_is_button(unsigned code)
{
	return code >= BTN_MISC && code < KEY_OK;
}

/* Brings the xkb state in line with the keys the device reports down now
 * (EVIOCGKEY), after events from it were lost or while the VT was away. A
 * key no longer down is released in the xkb state and stops repeating; a
 * key down now that the state did not have is pressed in it. Both silently:
 * no character is sent, a key held down only counts as a modifier (but a
 * key whose press went to the key callback gets its release there). The
 * ioctl also flushes the device's queued key events (kernel 3.12 on): they
 * are in the state it returns. */
static enum xkb_state_component input_device_sync_keys(struct input_device *d)
{
	struct input *in = d->in;
	unsigned long keys[NBITS(KEY_MAX + 1)];
	enum xkb_state_component changed = 0;

	if (!d->keyboard)
		return 0;
	memset(keys, 0, sizeof(keys));
	/* A device that cannot say (unplugged) has no key down. */
	if (ioctl(d->fd, EVIOCGKEY(sizeof(keys)), keys) < 0)
		log_debug_errno(errno, "Failed to read the keys down on %s: %m", d->devnode);
	for (unsigned k = 0; k <= KEY_MAX; k++) {
		bool now = TEST_BIT(k, keys) && !input_code_is_button(k);

		if (now == (bool)TEST_BIT(k, d->down))
			continue;
		if (now)
			SET_BIT(k, d->down);
		else
			CLEAR_BIT(k, d->down);
		changed |= xkb_state_update_key(in->state, k + EVDEV_OFFSET,
						now ? XKB_KEY_DOWN : XKB_KEY_UP);
		if (!now && k + EVDEV_OFFSET == in->repeat_key)
			input_stop_repeat(in);
		/* a session that saw the press (kitty protocol, flag 2)
		 * gets the release it missed */
		if (!now)
			input_release_key(in, k + EVDEV_OFFSET);
	}
	return changed;
}

/* Reads and drops what the device has queued: keys typed on another VT. */
static void input_device_drain(struct input_device *d)
{
	struct input_event ev[64];

	/* A short read has emptied the queue; bounded for a device that never
	 * stops sending. */
	for (unsigned i = 0; i < 64; i++)
		if (read(d->fd, ev, sizeof(ev)) < (ssize_t)sizeof(ev))
			break;
	d->dropped = false;
}

/* --- pointer devices --- */

static unsigned raw_bit(unsigned code)
{
	switch (code) {
	case BTN_LEFT:
		return RAW_LEFT;
	case BTN_MIDDLE:
		return RAW_MIDDLE;
	case BTN_RIGHT:
		return RAW_RIGHT;
	case BTN_TOUCH:
		return RAW_TOUCH;
	default:
		return 0;
	}
}

/* Buttons 1..3 as bits 0..2 from the device's raw buttons: a touch is the
 * left button, except on a touchpad (a finger on it moves the pointer). */
static unsigned pointer_buttons(const struct input_device *d, unsigned raw)
{
	unsigned b = 0;

	if (raw & RAW_LEFT || (raw & RAW_TOUCH && d->pointer == POINTER_ABS))
		b |= 1u << 0;
	if (raw & RAW_MIDDLE)
		b |= 1u << 1;
	if (raw & RAW_RIGHT)
		b |= 1u << 2;
	return b;
}

static void pointer_emit(struct input *in, enum input_pointer_kind kind, unsigned button,
			 bool pressed, int wheel)
{
	struct input_pointer_event ev = {
	    .kind = kind,
	    .x = (int)in->px,
	    .y = (int)in->py,
	    .button = button,
	    .pressed = pressed,
	    .wheel = wheel,
	    .mods = input_mods(in),
	};

	if (kind == INPUT_POINTER_MOTION)
		log_debug("Pointer motion at %d,%d", ev.x, ev.y);
	else if (kind == INPUT_POINTER_BUTTON)
		log_debug("Pointer button at %d,%d: %u %s", ev.x, ev.y, button,
			  pressed ? "pressed" : "released");
	else
		log_debug("Pointer wheel at %d,%d: %d", ev.x, ev.y, wheel);
	if (in->cb.pointer)
		in->cb.pointer(&ev, in->userdata);
}

static double clamp_d(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Forgets the report being read (dropped: the VT is away, or it is
 * incomplete). */
static void pointer_forget_report(struct input_device *d)
{
	d->rel_x = d->rel_y = 0;
	d->wheel = 0;
	d->abs_moved = false;
}

/* A finished report (SYN_REPORT) of device d while the VT is ours: the
 * motion, then the buttons that changed, then whole wheel notches. */
static void pointer_report(struct input_device *d)
{
	struct input *in = d->in;
	int old_x = (int)in->px, old_y = (int)in->py;
	unsigned now = pointer_buttons(d, d->raw);
	double w = in->area_w, h = in->area_h;
	int notches = 0;

	if (in->area_w == 0 || in->area_h == 0) {
		pointer_forget_report(d);
		d->reported = now;
		return;
	}
	switch (d->pointer) {
	case POINTER_REL:
		in->px = clamp_d(in->px + d->rel_x * in->cfg.pointer_speed, 0, w - 1);
		in->py = clamp_d(in->py + d->rel_y * in->cfg.pointer_speed, 0, h - 1);
		break;
	case POINTER_ABS:
		if (d->abs_moved) {
			in->px = input_scale_abs(d->abs_vx, d->abs_x.minimum, d->abs_x.maximum,
						 in->area_w);
			in->py = input_scale_abs(d->abs_vy, d->abs_y.minimum, d->abs_y.maximum,
						 in->area_h);
		}
		break;
	case POINTER_TOUCHPAD: {
		bool touching = d->raw & RAW_TOUCH;

		if (touching && d->touching && d->abs_moved) {
			/* units per mm: 0 for a pad without a measure (said when
			 * it was added), which then moves nothing */
			double rx = input_touchpad_units_per_mm(d->abs_x.minimum, d->abs_x.maximum,
								d->abs_x.resolution);
			double ry = d->abs_y.resolution > 0 ? d->abs_y.resolution : rx;
			double x = in->px + input_touchpad_pixels(d->last_vx, d->abs_vx, rx,
								  in->cfg.pointer_speed);
			double y = in->py + input_touchpad_pixels(d->last_vy, d->abs_vy, ry,
								  in->cfg.pointer_speed);

			/* a NaN would stay the pointer's position for good */
			if (isfinite(x) && isfinite(y)) {
				in->px = clamp_d(x, 0, w - 1);
				in->py = clamp_d(y, 0, h - 1);
			}
		}
		d->touching = touching;
		d->last_vx = d->abs_vx;
		d->last_vy = d->abs_vy;
		break;
	}
	case POINTER_NONE:
		break;
	}
	notches = input_wheel_notches(&d->wheel_rest, d->wheel);
	if (((int)in->px != old_x || (int)in->py != old_y) || now != d->reported || notches) {
		if (in->cb.activity)
			in->cb.activity(in->userdata);
	}
	if ((int)in->px != old_x || (int)in->py != old_y)
		pointer_emit(in, INPUT_POINTER_MOTION, 0, false, 0);
	for (unsigned b = 0; b < 3; b++)
		if ((now ^ d->reported) & 1u << b) {
			d->reported ^= 1u << b;
			pointer_emit(in, INPUT_POINTER_BUTTON, b + 1, now & 1u << b, 0);
		}
	if (notches)
		pointer_emit(in, INPUT_POINTER_WHEEL, 0, false, notches);
	pointer_forget_report(d);
}

/* The device's buttons and axes as they are now (EVIOCGKEY, EVIOCGABS):
 * after SYN_DROPPED and on acquire. With `report`, a button no longer down
 * is reported released (a drag must end); a press that was missed is only
 * taken into the state, as is anything on acquire. The ioctls flush the
 * device's queued events (kernel 3.12 on). */
static void pointer_sync(struct input_device *d, bool report)
{
	unsigned long keys[NBITS(KEY_MAX + 1)];
	struct input_absinfo ai;
	unsigned raw = 0, now;

	memset(keys, 0, sizeof(keys));
	if (ioctl(d->fd, EVIOCGKEY(sizeof(keys)), keys) < 0)
		log_debug_errno(errno, "Failed to read the buttons down on %s: %m", d->devnode);
	for (unsigned code = BTN_MISC; code < KEY_OK; code++)
		if (TEST_BIT(code, keys))
			raw |= raw_bit(code);
	d->raw = raw;
	if (d->pointer == POINTER_ABS || d->pointer == POINTER_TOUCHPAD) {
		if (ioctl(d->fd, EVIOCGABS(ABS_X), &ai) >= 0)
			d->abs_vx = ai.value;
		if (ioctl(d->fd, EVIOCGABS(ABS_Y), &ai) >= 0)
			d->abs_vy = ai.value;
		/* a finger down now starts a new move */
		d->touching = false;
	}
	pointer_forget_report(d);
	d->wheel_rest = 0;
	now = pointer_buttons(d, raw);
	if (report && d->in->active && d->in->area_w && d->in->area_h)
		for (unsigned b = 0; b < 3; b++)
			if (d->reported & ~now & 1u << b) {
				d->reported &= ~(1u << b);
				pointer_emit(d->in, INPUT_POINTER_BUTTON, b + 1, false, 0);
			}
	d->reported = now;
}

static int64_t add_sat(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* One event of a pointer device (the VT is ours). */
static void pointer_event(struct input_device *d, const struct input_event *ev)
{
	switch (ev->type) {
	case EV_KEY:
		if (ev->value == 2)
			break;
		if (ev->value)
			d->raw |= raw_bit(ev->code);
		else
			d->raw &= ~raw_bit(ev->code);
		break;
	case EV_REL:
		if (ev->code == REL_X)
			d->rel_x = add_sat(d->rel_x, ev->value);
		else if (ev->code == REL_Y)
			d->rel_y = add_sat(d->rel_y, ev->value);
		else if (ev->code == REL_WHEEL_HI_RES)
			d->wheel = add_sat(d->wheel, ev->value);
		else if (ev->code == REL_WHEEL && !d->wheel_hi_res)
			d->wheel = add_sat(d->wheel, (int64_t)ev->value * WHEEL_HI_RES_NOTCH);
		break;
	case EV_ABS:
		if (ev->code == ABS_X) {
			d->abs_vx = ev->value;
			d->abs_moved = true;
		} else if (ev->code == ABS_Y) {
			d->abs_vy = ev->value;
			d->abs_moved = true;
		}
		break;
	case EV_SYN:
		if (ev->code == SYN_REPORT)
			pointer_report(d);
		break;
	}
}

void input_set_pointer_area(struct input *in, unsigned width, unsigned height)
{
	if (in->area_w == 0 || in->area_h == 0) {
		in->px = width / 2;
		in->py = height / 2;
	}
	in->area_w = width;
	in->area_h = height;
	if (width && height) {
		in->px = clamp_d(in->px, 0, width - 1.0);
		in->py = clamp_d(in->py, 0, height - 1.0);
	}
}

/* What the device can be used for, from its capabilities. */
static enum pointer_kind input_pointer_kind(int fd, bool *ret_hi_res)
{
	unsigned long evbits[NBITS(EV_MAX + 1)] = {0};
	unsigned long keybits[NBITS(KEY_MAX + 1)] = {0};
	unsigned long relbits[NBITS(REL_MAX + 1)] = {0};
	unsigned long absbits[NBITS(ABS_MAX + 1)] = {0};
	unsigned long props[NBITS(INPUT_PROP_MAX + 1)] = {0};
	bool buttons;

	*ret_hi_res = false;
	if (ioctl(fd, EVIOCGBIT(0, sizeof(evbits)), evbits) < 0 || !TEST_BIT(EV_KEY, evbits))
		return POINTER_NONE;
	if (ioctl(fd, EVIOCGBIT(EV_KEY, sizeof(keybits)), keybits) < 0)
		return POINTER_NONE;
	if (TEST_BIT(EV_REL, evbits))
		(void)ioctl(fd, EVIOCGBIT(EV_REL, sizeof(relbits)), relbits);
	if (TEST_BIT(EV_ABS, evbits))
		(void)ioctl(fd, EVIOCGBIT(EV_ABS, sizeof(absbits)), absbits);
	(void)ioctl(fd, EVIOCGPROP(sizeof(props)), props);
	*ret_hi_res = TEST_BIT(REL_WHEEL_HI_RES, relbits);
	/* joysticks and game pads have axes and buttons too */
	if (TEST_BIT(BTN_JOYSTICK, keybits) || TEST_BIT(BTN_GAMEPAD, keybits))
		return POINTER_NONE;
	buttons = TEST_BIT(BTN_LEFT, keybits) || TEST_BIT(BTN_RIGHT, keybits) ||
		  TEST_BIT(BTN_MIDDLE, keybits);
	if (TEST_BIT(ABS_X, absbits) && TEST_BIT(ABS_Y, absbits)) {
		/* a touchpad (a finger tool, not on a screen, no pen: a pen
		 * tablet points where the pen is): its surface is not the
		 * screen */
		if (TEST_BIT(BTN_TOOL_FINGER, keybits) && !TEST_BIT(BTN_TOOL_PEN, keybits) &&
		    !TEST_BIT(INPUT_PROP_DIRECT, props))
			return TEST_BIT(BTN_TOUCH, keybits) ? POINTER_TOUCHPAD : POINTER_NONE;
		if (buttons || TEST_BIT(BTN_TOUCH, keybits))
			return POINTER_ABS;
	}
	if (TEST_BIT(REL_X, relbits) && TEST_BIT(REL_Y, relbits) && buttons)
		return POINTER_REL;
	return POINTER_NONE;
}

static void input_device_free(struct input_device *d)
{
	if (!d)
		return;
	sd_event_source_unref(d->source);
	if (d->fd >= 0)
		close(d->fd);
	free(d->devnode);
	free(d);
}

static void input_remove_device(struct input *in, struct input_device *dev)
{
	for (struct input_device **p = &in->devices; *p; p = &(*p)->next)
		if (*p == dev) {
			*p = dev->next;
			log_info("%s %s removed",
				 dev->keyboard	? "Keyboard"
				 : dev->pointer ? "Pointer"
						: "Speaker",
				 dev->devnode);
			input_device_free(dev);
			return;
		}
}

/* The n events of one read of device d. */
static void input_device_events(struct input_device *d, const struct input_event *ev, size_t n)
{
	struct input *in = d->in;

	for (size_t i = 0; i < n; i++) {
		if (ev[i].type == EV_SYN && ev[i].code == SYN_DROPPED) {
			/* The kernel's queue for us overflowed and events were
			 * lost (a key release among them, maybe). As the evdev
			 * protocol says, the rest of this report is incomplete:
			 * drop it up to its SYN_REPORT, then ask the device. */
			d->dropped = true;
		} else if (d->dropped) {
			if (ev[i].type != EV_SYN || ev[i].code != SYN_REPORT)
				continue;
			d->dropped = false;
			if (!in->active)
				continue; /* resynced on acquire */
			log_info("%s %s: the kernel dropped input events, reading the %s "
				 "down back from the device",
				 d->keyboard ? "Keyboard" : "Pointer", d->devnode,
				 d->keyboard ? "keys" : "buttons");
			/* a key of a pending sequence may be among the lost */
			compose_reset(in->compose);
			if (input_device_sync_keys(d) & XKB_STATE_LEDS)
				input_write_leds(in);
			if (d->pointer)
				pointer_sync(d, true);
			/* What else this read returned is older than the state
			 * just read, which includes it: applied again, a key
			 * press whose release the ioctl flushed would stick. */
			return;
		} else if (d->pointer &&
			   (ev[i].type != EV_KEY || input_code_is_button(ev[i].code))) {
			/* dropped while the VT is away; resynced on acquire */
			if (in->active)
				pointer_event(d, &ev[i]);
		} else if (ev[i].type == EV_KEY && d->keyboard &&
			   !input_code_is_button(ev[i].code)) {
			in->event_usec = d->clock_monotonic
					     ? (uint64_t)ev[i].input_event_sec * USEC_PER_SEC +
						   (uint64_t)ev[i].input_event_usec
					     : 0;
			input_handle_key(d, ev[i].code, ev[i].value);
			in->event_usec = 0;
		}
	}
}

static int input_on_device(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct input_device *d = userdata;
	struct input *in = d->in;
	struct input_event ev[64];
	ssize_t n;

	(void)s;
	(void)revents;
	/* the keys' traces (keys_event.read_usec) start here */
	in->read_usec = now_usec();
	n = read(fd, ev, sizeof(ev));
	if (n >= 0)
		input_device_events(d, ev, (size_t)n / sizeof(ev[0]));
	in->read_usec = 0;
	if (n < 0 && errno != EAGAIN && errno != EINTR)
		/* ENODEV: unplugged. The monitor may tell us too. */
		input_remove_device(in, d);
	return 0;
}

static bool input_is_keyboard(int fd)
{
	unsigned long evbits[NBITS(EV_MAX + 1)] = {0};
	unsigned long keybits[NBITS(KEY_MAX + 1)] = {0};
	static const unsigned needed[] = {KEY_A, KEY_Q, KEY_Z, KEY_ENTER, KEY_SPACE};

	if (ioctl(fd, EVIOCGBIT(0, sizeof(evbits)), evbits) < 0 || !TEST_BIT(EV_KEY, evbits))
		return false;
	if (ioctl(fd, EVIOCGBIT(EV_KEY, sizeof(keybits)), keybits) < 0)
		return false;
	for (unsigned i = 0; i < ELEMENTSOF(needed); i++)
		if (!TEST_BIT(needed[i], keybits))
			return false;
	return true;
}

/* A speaker (the PC speaker's evdev device, a keyboard with a beeper):
 * the EV_SND code to ring it with, SND_TONE where it has a pitch, or 0. */
static unsigned input_sound_code(int fd)
{
	unsigned long evbits[NBITS(EV_MAX + 1)] = {0};
	unsigned long sndbits[NBITS(SND_MAX + 1)] = {0};

	if (ioctl(fd, EVIOCGBIT(0, sizeof(evbits)), evbits) < 0 || !TEST_BIT(EV_SND, evbits) ||
	    ioctl(fd, EVIOCGBIT(EV_SND, sizeof(sndbits)), sndbits) < 0)
		return 0;
	if (TEST_BIT(SND_TONE, sndbits))
		return SND_TONE;
	return TEST_BIT(SND_BELL, sndbits) ? SND_BELL : 0;
}

int input_sound(struct input *in, unsigned hz)
{
	int written = 0;

	for (struct input_device *d = in->devices; d; d = d->next) {
		struct input_event ev[2] = {
		    {.type = EV_SND,
		     .code = (uint16_t)d->sound,
		     .value = d->sound == SND_TONE ? (int)hz : hz > 0},
		    {.type = EV_SYN, .code = SYN_REPORT},
		};

		if (!d->sound)
			continue;
		if (write(d->fd, ev, sizeof(ev)) == (ssize_t)sizeof(ev))
			written++;
		else
			log_debug_errno(errno, "Failed to ring %s: %m", d->devnode);
	}
	return written ? written : -ENODEV;
}

static void input_add_device(struct input *in, const char *devnode)
{
	unsigned long evbits[NBITS(EV_MAX + 1)] = {0};
	struct input_device *d;
	char name[256] = "";
	int fd, r;

	if (!devnode || strncmp(devnode, "/dev/input/event", 16) != 0)
		return;
	for (d = in->devices; d; d = d->next)
		if (strcmp(d->devnode, devnode) == 0)
			return;

	fd = open(devnode, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		fd = open(devnode, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		log_warning_errno(errno, "Failed to open %s, ignoring: %m", devnode);
		return;
	}
	bool keyboard = input_is_keyboard(fd), hi_res = false;
	enum pointer_kind pointer =
	    in->cfg.pointer ? input_pointer_kind(fd, &hi_res) : POINTER_NONE;

	unsigned sound = in->cfg.sound ? input_sound_code(fd) : 0;

	if (!keyboard && !pointer && !sound) {
		close(fd);
		return;
	}
	d = xcalloc(1, sizeof(*d));
	d->in = in;
	d->fd = fd;
	d->devnode = xstrdup(devnode);
	d->keyboard = keyboard;
	d->pointer = pointer;
	d->sound = sound;
	d->wheel_hi_res = pointer && hi_res;
	d->clock_monotonic = keyboard && ioctl(fd, EVIOCSCLOCKID, &(int){CLOCK_MONOTONIC}) >= 0;
	if (pointer == POINTER_ABS || pointer == POINTER_TOUCHPAD) {
		if (ioctl(fd, EVIOCGABS(ABS_X), &d->abs_x) < 0 ||
		    ioctl(fd, EVIOCGABS(ABS_Y), &d->abs_y) < 0) {
			log_warning_errno(errno, "Failed to read the axes of %s, ignoring: %m",
					  devnode);
			input_device_free(d);
			return;
		}
		d->abs_vx = d->abs_x.value;
		d->abs_vy = d->abs_y.value;
		if (pointer == POINTER_TOUCHPAD &&
		    input_touchpad_units_per_mm(d->abs_x.minimum, d->abs_x.maximum,
						d->abs_x.resolution) <= 0)
			log_warning("Touchpad %s: its X axis has no resolution and no range "
				    "(%d..%d): a finger on it will not move the pointer",
				    devnode, d->abs_x.minimum, d->abs_x.maximum);
	}
	d->has_leds =
	    ioctl(fd, EVIOCGBIT(0, sizeof(evbits)), evbits) >= 0 && TEST_BIT(EV_LED, evbits);
	r = sd_event_add_io(in->event, &d->source, fd, EPOLLIN, input_on_device, d);
	if (r < 0) {
		log_warning_errno(r, "Failed to watch %s, ignoring: %m", devnode);
		input_device_free(d);
		return;
	}
	d->next = in->devices;
	in->devices = d;
	ioctl(fd, EVIOCGNAME(sizeof(name) - 1), name);
	if (keyboard)
		log_info("Keyboard %s: %s", devnode, name);
	if (pointer)
		log_info("Pointer %s: %s (%s%s)", devnode, name,
			 pointer == POINTER_REL	  ? "relative"
			 : pointer == POINTER_ABS ? "absolute"
						  : "touchpad",
			 d->wheel_hi_res ? ", high-resolution wheel" : "");
	if (sound)
		log_info("Speaker %s: %s (%s)", devnode, name,
			 sound == SND_TONE ? "SND_TONE" : "SND_BELL");
	/* A modifier held on it while it was plugged in counts; a new keyboard
	 * shows the lock state the others show. Buttons held count as down. */
	if (in->active)
		input_device_sync_keys(d);
	if (pointer)
		pointer_sync(d, false);
	if (in->state && keyboard)
		input_write_leds(in);
}

static int input_on_monitor(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct input *in = userdata;
	struct udev_device *dev;
	const char *action, *node;

	(void)s;
	(void)fd;
	(void)revents;
	dev = udev_monitor_receive_device(in->monitor);
	if (!dev)
		return 0;
	action = udev_device_get_action(dev);
	node = udev_device_get_devnode(dev);
	if (action && node) {
		struct input_device *have = NULL;
		/* another seat's: its own consoled or compositor reads it */
		bool ours = udevseat_is(dev, in->cfg.seat);

		for (struct input_device *d = in->devices; d; d = d->next)
			if (strcmp(d->devnode, node) == 0) {
				have = d;
				break;
			}
		if (strcmp(action, "remove") == 0 && have)
			input_remove_device(in, have);
		/* `loginctl attach` moves a device to a seat with a "change" */
		else if (strcmp(action, "change") == 0 && have && !ours) {
			log_info("%s moved to %s: no longer read", node, udevseat_of(dev));
			input_remove_device(in, have);
		} else if ((strcmp(action, "add") == 0 || strcmp(action, "change") == 0) && ours &&
			   !have)
			input_add_device(in, node);
	}
	udev_device_unref(dev);
	return 0;
}

static int input_setup_udev(struct input *in)
{
	struct udev_enumerate *e;
	struct udev_list_entry *item;
	int r;

	in->udev = udev_new();
	if (!in->udev)
		return log_error_errno(ENOMEM, "Failed to create a udev context: %m");

	/* Without udevd (an initramfs, a container) only the kernel's uevents
	 * arrive; devtmpfs has created the node by then. */
	in->monitor = udev_monitor_new_from_netlink(
	    in->udev, access("/run/udev/control", F_OK) == 0 ? "udev" : "kernel");
	if (in->monitor) {
		udev_monitor_filter_add_match_subsystem_devtype(in->monitor, "input", NULL);
		if (udev_monitor_enable_receiving(in->monitor) >= 0) {
			r = sd_event_add_io(in->event, &in->monitor_source,
					    udev_monitor_get_fd(in->monitor), EPOLLIN,
					    input_on_monitor, in);
			if (r < 0)
				log_warning_errno(r, "Failed to watch for new keyboards: %m");
		}
	} else
		log_warning("Failed to create a udev monitor, keyboards plugged in later are "
			    "not seen");

	e = udev_enumerate_new(in->udev);
	if (!e)
		return log_error_errno(ENOMEM, "Failed to enumerate input devices: %m");
	udev_enumerate_add_match_subsystem(e, "input");
	udev_enumerate_scan_devices(e);
	udev_list_entry_foreach (item, udev_enumerate_get_list_entry(e)) {
		struct udev_device *d =
		    udev_device_new_from_syspath(in->udev, udev_list_entry_get_name(item));
		if (!d)
			continue;
		if (udevseat_is(d, in->cfg.seat))
			input_add_device(in, udev_device_get_devnode(d));
		else if (udev_device_get_devnode(d))
			log_debug("%s is on %s, not ours", udev_device_get_devnode(d),
				  udevseat_of(d));
		udev_device_unref(d);
	}
	udev_enumerate_unref(e);
	bool keyboard = false;
	for (struct input_device *d = in->devices; d; d = d->next)
		keyboard |= d->keyboard;
	if (!keyboard)
		log_warning("No keyboard found yet; waiting for one to be plugged in");
	if (!in->cfg.pointer)
		log_info("Pointer devices are not used (--mouse=no)");
	return 0;
}

/* The kitty protocol's base layout key is the key's in the US layout: the
 * keymap's first layout when it is that, else a keymap of its own (without
 * it, no base layout key is reported). */
static void input_setup_us_keymap(struct input *in)
{
	static const struct xkb_rule_names us = {.layout = "us"};
	const char *first = xkb_keymap_layout_get_name(in->keymap, 0);

	if (first && strcmp(first, "English (US)") == 0) {
		in->us_keymap = xkb_keymap_ref(in->keymap);
		return;
	}
	in->us_keymap = xkb_keymap_new_from_names(in->ctx, &us, XKB_KEYMAP_COMPILE_NO_FLAGS);
	if (!in->us_keymap)
		log_debug("No US keymap: no base layout keys for the kitty keyboard protocol");
}

static int input_setup_keymap(struct input *in)
{
	struct xkb_rule_names names = {
	    .model = in->cfg.model,
	    .layout = in->cfg.layout,
	    .variant = in->cfg.variant,
	    .options = in->cfg.options,
	};

	in->ctx = xkb_context_new(XKB_CONTEXT_NO_FLAGS);
	if (!in->ctx)
		return log_error_errno(ENOMEM, "Failed to create an xkb context: %m");
	in->keymap = xkb_keymap_new_from_names(in->ctx, &names, XKB_KEYMAP_COMPILE_NO_FLAGS);
	if (!in->keymap) {
		log_warning("Failed to compile the keymap (model '%s' layout '%s' variant '%s' "
			    "options '%s'), falling back to the default keymap",
			    names.model ? names.model : "", names.layout ? names.layout : "",
			    names.variant ? names.variant : "", names.options ? names.options : "");
		in->keymap = xkb_keymap_new_from_names(in->ctx, NULL, XKB_KEYMAP_COMPILE_NO_FLAGS);
		if (!in->keymap)
			return log_error_errno(EINVAL, "Failed to compile even the default keymap; "
						       "is xkb-data installed?");
	}
	in->state = xkb_state_new(in->keymap);
	if (!in->state)
		return log_error_errno(ENOMEM, "Failed to create the keyboard state: %m");
	input_setup_mods(in);
	input_setup_us_keymap(in);
	in->compose = compose_new(in->ctx, in->cfg.compose_file, &compose_system_files);
	return 0;
}

/* The lock state another VT left on the keyboards: Caps and Num Lock as
 * their LEDs show, other locks (a layout group) as they were. Keyboards
 * without LEDs cannot say, and change nothing. */
static void input_sync_locks(struct input *in)
{
	unsigned long leds[NBITS(LED_MAX + 1)];
	bool seen = false, caps = false, num = false;
	xkb_mod_mask_t locked;
	xkb_mod_index_t i;

	for (struct input_device *d = in->devices; d; d = d->next) {
		memset(leds, 0, sizeof(leds));
		if (!d->has_leds || ioctl(d->fd, EVIOCGLED(sizeof(leds)), leds) < 0)
			continue;
		seen = true;
		caps |= TEST_BIT(LED_CAPSL, leds);
		num |= TEST_BIT(LED_NUML, leds);
	}
	if (!seen)
		return;

	locked = xkb_state_serialize_mods(in->state, XKB_STATE_MODS_LOCKED);
	i = xkb_keymap_mod_get_index(in->keymap, XKB_MOD_NAME_CAPS);
	if (i != XKB_MOD_INVALID)
		locked = caps ? locked | 1u << i : locked & ~(1u << i);
	i = xkb_keymap_mod_get_index(in->keymap, XKB_MOD_NAME_NUM);
	if (i != XKB_MOD_INVALID)
		locked = num ? locked | 1u << i : locked & ~(1u << i);
	xkb_state_update_mask(in->state,
			      xkb_state_serialize_mods(in->state, XKB_STATE_MODS_DEPRESSED),
			      xkb_state_serialize_mods(in->state, XKB_STATE_MODS_LATCHED), locked,
			      xkb_state_serialize_layout(in->state, XKB_STATE_LAYOUT_DEPRESSED),
			      xkb_state_serialize_layout(in->state, XKB_STATE_LAYOUT_LATCHED),
			      xkb_state_serialize_layout(in->state, XKB_STATE_LAYOUT_LOCKED));
}

int input_new(sd_event *event, const struct input_config *cfg, const struct input_callbacks *cb,
	      void *userdata, struct input **ret)
{
	struct input *in;
	int r;

	in = xcalloc(1, sizeof(*in));
	in->event = sd_event_ref(event);
	in->cb = *cb;
	in->userdata = userdata;
	in->cfg = *cfg;
	if (!(in->cfg.pointer_speed > 0))
		in->cfg.pointer_speed = 1;

	r = input_setup_keymap(in);
	if (r < 0)
		goto fail;
	r = input_setup_udev(in);
	if (r < 0)
		goto fail;
	*ret = in;
	return 0;

fail:
	input_free(in);
	return r;
}

void input_free(struct input *in)
{
	if (!in)
		return;
	while (in->devices) {
		struct input_device *d = in->devices;
		in->devices = d->next;
		input_device_free(d);
	}
	sd_event_source_unref(in->repeat_source);
	sd_event_source_unref(in->monitor_source);
	udev_monitor_unref(in->monitor);
	udev_unref(in->udev);
	compose_free(in->compose);
	xkb_state_unref(in->state);
	xkb_keymap_unref(in->us_keymap);
	xkb_keymap_unref(in->keymap);
	xkb_context_unref(in->ctx);
	sd_event_unref(in->event);
	free(in);
}

void input_set_active(struct input *in, bool active)
{
	in->active = active;
	/* a sequence begun before the switch is not continued after it */
	compose_reset(in->compose);
	if (!active) {
		input_stop_repeat(in);
		return;
	}
	/* What was typed while the VT was away is not ours; what is held down
	 * now (Ctrl+Alt of the switch back) and the locks are. */
	for (struct input_device *d = in->devices; d; d = d->next) {
		input_device_drain(d);
		input_device_sync_keys(d);
		if (d->pointer)
			pointer_sync(d, false);
	}
	input_sync_locks(in);
	input_write_leds(in);
}
