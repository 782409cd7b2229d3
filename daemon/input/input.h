/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Keyboards. consoled reads every evdev keyboard itself (the VT's kernel
 * keyboard is K_OFF): devices are found with libudev and followed with a
 * hotplug monitor, and a device counts as a keyboard by its EVIOCGBIT
 * capabilities (letters and Enter), so it works without udevd's database.
 * Devices are never grabbed: other VTs keep their keyboard.
 *
 * xkbcommon turns key codes into keysyms from the RMLVO names; key repeat is
 * done here in software; Caps/Num/Scroll Lock LEDs follow the xkb state.
 * Ctrl+Alt+F1..F12 switch VTs, Shift+PageUp/PageDown walk the scrollback,
 * Ctrl+Alt+Del does what the kernel console does.
 *
 * Each device remembers the keys it has pressed into the xkb state. When
 * that can be wrong, the keys down are read back from the device
 * (EVIOCGKEY): a key the state has down and the device has up is released
 * in the state, one down on the device and not in the state is pressed in
 * it; silently both ways (no character: a held key only counts as a
 * modifier; a key whose press the key callback got gets its release), and
 * key repeat stops when its key is up. That happens
 *  - after SYN_DROPPED: the kernel's queue for consoled overflowed (consoled
 *    was stopped or starved) and events were lost, a release among them
 *    maybe. As the evdev protocol says, the events up to the next SYN_REPORT
 *    are dropped, and so is the rest of that read (older than the state read
 *    back); then the device is asked.
 *  - on acquire. While the VT is released (input_set_active(false)) every
 *    key is dropped, so nothing typed on another VT reaches consoled's
 *    session; input_set_active(true) reads and drops what is still queued,
 *    reads the keys back, and takes Caps and Num Lock from the LEDs of the
 *    keyboards that have them (another VT may have changed them).
 *
 * Pointer devices come from the same enumeration and monitor, by their
 * capabilities too: relative mice (REL_X/REL_Y and a button), absolute
 * pointers (ABS_X/ABS_Y and BTN_LEFT or BTN_TOUCH: tablets, touchscreens,
 * QEMU's usb-tablet; the axis range is scaled to the pointer area, BTN_TOUCH
 * counts as the left button), touchpads (absolute, with a finger tool, no
 * pen, not a screen: the finger's motion moves the pointer, 8 pixels a mm
 * times the speed, and a touch alone does not click) and their wheels
 * (REL_WHEEL, or REL_WHEEL_HI_RES where the device has it: its 120ths are
 * added up into notches, the low-resolution twin is then ignored; a turn
 * the other way starts from a whole notch). They are never grabbed
 * either. One pointer position is shared by all of them, in the pixels of
 * the pointer area (input_set_pointer_area()); relative motion is
 * multiplied by the configured speed. Events reach the pointer callback at
 * the end of each report (SYN_REPORT): the motion first, then each button
 * that changed, then the wheel. While the VT is released every pointer event
 * is dropped like a key, and so is what is still queued on acquire; the
 * buttons then held count as down without a press, and those released while
 * away as up without a release (the dispatcher ends a drag when the VT goes:
 * mouse_focus()). After SYN_DROPPED the
 * buttons are read back (EVIOCGKEY): a release that was lost is reported,
 * a lost press is only taken into the state.
 *
 * Speakers (EV_SND: the PC speaker, a keyboard's beeper) come from the same
 * enumeration and monitor when input_config.sound is set (--bell=sound):
 * they are only written to, the bell's tones (input_sound()).
 */
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

struct input;
struct keys_event;

struct input_config {
	const char *model, *layout, *variant, *options; /* NULL = xkb defaults */
	unsigned repeat_delay_ms;
	unsigned repeat_rate_hz;  /* 0 = no repeat */
	bool pointer;		  /* open pointer devices (--mouse=) */
	double pointer_speed;	  /* relative motion factor (--mouse-speed=), > 0 */
	const char *compose_file; /* --compose-file=; NULL = the locale's table (compose.h) */
	bool sound;		  /* open speakers too: EV_SND devices (--bell=sound) */
	/* Only the devices of this seat (udevseat.h: ID_SEAT, none is seat0);
	 * NULL = seat0. */
	const char *seat;
};

enum input_pointer_kind { INPUT_POINTER_MOTION, INPUT_POINTER_BUTTON, INPUT_POINTER_WHEEL };

struct input_pointer_event {
	enum input_pointer_kind kind;
	/* the pointer's position after the event, screen pixels: 0..width-1,
	 * 0..height-1 of the pointer area */
	int x, y;
	unsigned button; /* BUTTON: 1 left (also BTN_TOUCH), 2 middle, 3 right */
	bool pressed;	 /* BUTTON */
	/* WHEEL: whole notches, > 0 = away from the user (up); hi-res wheels
	 * are added up to 120ths first */
	int wheel;
	/* TSM_SHIFT_MASK | TSM_CONTROL_MASK | TSM_ALT_MASK ... (and
	 * KEYS_NUM_LOCK_MASK) from the keyboards' xkb state */
	unsigned mods;
};

struct input_callbacks {
	/* keysym/ascii/unicode as tsm_vte_handle_keyboard() takes them, mods TSM_*_MASK
	 * and KEYS_NUM_LOCK_MASK (keys.h); ev (keys.h) the event's type (press,
	 * the software repeat, release), the key's unshifted keysym and its
	 * keysym in the US layout, or NULL for the characters of a Compose
	 * result (presses). A release comes only for a key whose press came
	 * here (not consoled's own keys, nor one that went into a Compose
	 * sequence), with the modifiers after it. */
	void (*key)(uint32_t keysym, uint32_t ascii, unsigned mods, uint32_t unicode,
		    const struct keys_event *ev, void *userdata);
	void (*switch_vt)(unsigned vt, void *userdata);
	void (*scroll_page)(int dir, void *userdata);
	/* Ctrl+Plus (1), Ctrl+Minus (-1), Ctrl+0 (0: the configured size);
	 * returns whether it zoomed, else the key goes to the session (a
	 * bitmap font has one size, and Ctrl+Minus is ^_ to programs) */
	bool (*zoom)(int step, void *userdata);
	/* Any key event (press, release, the kernel's repeat) while the VT is
	 * ours, before the key itself is acted on: the blank timer's input
	 * (and every pointer report). May be NULL. */
	void (*activity)(void *userdata);
	/* A pointer event while the VT is ours (input_pointer_event). May be
	 * NULL. */
	void (*pointer)(const struct input_pointer_event *ev, void *userdata);
	/* Ctrl+Logo+Right (1: a quarter turn clockwise), Ctrl+Logo+Left (-1),
	 * Ctrl+Logo+Up (0: upright); see input_rotate_key(). May be NULL: the
	 * key goes to the session. */
	void (*rotate)(int step, void *userdata);
	/* Ctrl+Logo+K (input_view_key()): the kernel messages' view opens or
	 * closes; returns whether it did (false: the key goes on to the
	 * session). It acts whatever Compose sequence is pending (and ends
	 * it) and does not repeat: held down, it toggles once. May be NULL. */
	bool (*view)(void *userdata);
};

int input_new(sd_event *event, const struct input_config *cfg, const struct input_callbacks *cb,
	      void *userdata, struct input **ret);
void input_free(struct input *in);

void input_set_active(struct input *in, bool active);

/* The bell (bell.h): every speaker found (input_config.sound) gets SND_TONE
 * hz (or SND_BELL on/off where it has no pitch); hz 0 silences them. Returns
 * how many were written to, or -ENODEV for none. */
int input_sound(struct input *in, unsigned hz);

/* The area pointer positions live in (the visible screen in pixels); set by
 * the seat on every layout. The pointer stays where it was, moved inside
 * the new area; it starts in the middle of the first. While there is no
 * area (0x0) pointer events are dropped. */
void input_set_pointer_area(struct input *in, unsigned width, unsigned height);

/* Pure helper, unit-tested: an absolute axis value in [min, max] -> a pixel
 * in [0, size): the range is cut into size equal parts. */
int input_scale_abs(int value, int min, int max, unsigned size);

/* Pure helper, unit-tested: a touchpad axis' units per mm: its resolution,
 * else its range (max - min + 1, which may not fit an int) taken as 100 mm
 * wide; 0 without either (no resolution, a range empty or reversed). */
double input_touchpad_units_per_mm(int min, int max, int resolution);

/* Pure helper, unit-tested: the pixels a finger moved from `from` to `to`
 * on an axis of units_per_mm moves the pointer at `speed` (8 a mm at 1);
 * 0 when units_per_mm is not positive or the result is not finite. */
double input_touchpad_pixels(int from, int to, double units_per_mm, double speed);

/* The most wheel notches one report of a pointer moves. */
#define INPUT_WHEEL_NOTCHES_MAX 100

/* Pure helper, unit-tested: a report's wheel motion (120ths of a notch) ->
 * whole notches, up to INPUT_WHEEL_NOTCHES_MAX either way; *rest keeps the
 * part short of a notch for the next report (a turn the other way starts
 * from a whole notch; past the most, the excess and the rest are dropped). */
int input_wheel_notches(int *rest, int64_t wheel);

/* Pure helper, unit-tested: whether keysym + modifiers is a zoom key, and
 * which (see input_callbacks.zoom). */
bool input_zoom_key(uint32_t keysym, unsigned mods, int *ret_step);

/* Pure helper, unit-tested: whether keysym + modifiers is a rotation key
 * (Ctrl and Logo, Shift and Alt not: nothing a terminal sends, and clear of
 * Ctrl+Alt's VT and desktop keys), and which (see input_callbacks.rotate). */
bool input_rotate_key(uint32_t keysym, unsigned mods, int *ret_step);

/* Pure helper, unit-tested: whether keysym + modifiers is the kernel
 * messages' view key, Ctrl+Logo+K (as the rotation keys: Shift and Alt
 * not). */
bool input_view_key(uint32_t keysym, unsigned mods);

/* Pure helper, unit-tested: keysym + modifiers -> the VT to switch to, or 0. */
unsigned input_vt_switch_target(uint32_t keysym, unsigned mods);
