/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <libtsm.h>
#include <stdio.h>
#include <xkbcommon/xkbcommon.h>

#include "keys.h"
#include "stream.h"

/* The modifier bits of the protocol. */
#define KITTY_SHIFT 1u
#define KITTY_ALT 2u
#define KITTY_CTRL 4u
#define KITTY_SUPER 8u
#define KITTY_CAPS_LOCK 64u
#define KITTY_NUM_LOCK 128u
#define KITTY_LOCKS (KITTY_CAPS_LOCK | KITTY_NUM_LOCK)

static unsigned kitty_mods(unsigned mods)
{
	return (mods & TSM_SHIFT_MASK ? KITTY_SHIFT : 0) | (mods & TSM_ALT_MASK ? KITTY_ALT : 0) |
	       (mods & TSM_CONTROL_MASK ? KITTY_CTRL : 0) |
	       (mods & TSM_LOGO_MASK ? KITTY_SUPER : 0) |
	       (mods & TSM_LOCK_MASK ? KITTY_CAPS_LOCK : 0) |
	       (mods & KEYS_NUM_LOCK_MASK ? KITTY_NUM_LOCK : 0);
}

enum kitty_kind {
	KITTY_TEXT,	/* a key that types text: code is its code point */
	KITTY_C0,	/* Enter, Tab, Backspace: legacy unless modified */
	KITTY_ESCAPE,	/* Escape */
	KITTY_FUNC,	/* other functional keys */
	KITTY_MODIFIER, /* modifier and lock keys: only under flag 8 */
};

struct kitty_key {
	uint32_t keysym;
	unsigned code;
	char final; /* 'u', '~' or the letter of CSI 1 ; m letter */
	enum kitty_kind kind;
};

/* The functional keys (the specification's table). */
static const struct kitty_key kitty_keys[] = {
    {XKB_KEY_Escape, 27, 'u', KITTY_ESCAPE},
    {XKB_KEY_Return, 13, 'u', KITTY_C0},
    {XKB_KEY_Tab, 9, 'u', KITTY_C0},
    {XKB_KEY_ISO_Left_Tab, 9, 'u', KITTY_C0},
    {XKB_KEY_BackSpace, 127, 'u', KITTY_C0},
    {XKB_KEY_Insert, 2, '~', KITTY_FUNC},
    {XKB_KEY_Delete, 3, '~', KITTY_FUNC},
    {XKB_KEY_Left, 1, 'D', KITTY_FUNC},
    {XKB_KEY_Right, 1, 'C', KITTY_FUNC},
    {XKB_KEY_Up, 1, 'A', KITTY_FUNC},
    {XKB_KEY_Down, 1, 'B', KITTY_FUNC},
    {XKB_KEY_Prior, 5, '~', KITTY_FUNC},
    {XKB_KEY_Next, 6, '~', KITTY_FUNC},
    {XKB_KEY_Home, 1, 'H', KITTY_FUNC},
    {XKB_KEY_End, 1, 'F', KITTY_FUNC},
    {XKB_KEY_Caps_Lock, 57358, 'u', KITTY_MODIFIER},
    {XKB_KEY_Scroll_Lock, 57359, 'u', KITTY_MODIFIER},
    {XKB_KEY_Num_Lock, 57360, 'u', KITTY_MODIFIER},
    {XKB_KEY_Print, 57361, 'u', KITTY_FUNC},
    {XKB_KEY_Pause, 57362, 'u', KITTY_FUNC},
    {XKB_KEY_Menu, 57363, 'u', KITTY_FUNC},
    {XKB_KEY_F1, 1, 'P', KITTY_FUNC},
    {XKB_KEY_F2, 1, 'Q', KITTY_FUNC},
    {XKB_KEY_F3, 13, '~', KITTY_FUNC},
    {XKB_KEY_F4, 1, 'S', KITTY_FUNC},
    {XKB_KEY_F5, 15, '~', KITTY_FUNC},
    {XKB_KEY_F6, 17, '~', KITTY_FUNC},
    {XKB_KEY_F7, 18, '~', KITTY_FUNC},
    {XKB_KEY_F8, 19, '~', KITTY_FUNC},
    {XKB_KEY_F9, 20, '~', KITTY_FUNC},
    {XKB_KEY_F10, 21, '~', KITTY_FUNC},
    {XKB_KEY_F11, 23, '~', KITTY_FUNC},
    {XKB_KEY_F12, 24, '~', KITTY_FUNC},
    {XKB_KEY_KP_Decimal, 57409, 'u', KITTY_FUNC},
    {XKB_KEY_KP_Divide, 57410, 'u', KITTY_FUNC},
    {XKB_KEY_KP_Multiply, 57411, 'u', KITTY_FUNC},
    {XKB_KEY_KP_Subtract, 57412, 'u', KITTY_FUNC},
    {XKB_KEY_KP_Add, 57413, 'u', KITTY_FUNC},
    {XKB_KEY_KP_Enter, 57414, 'u', KITTY_FUNC},
    {XKB_KEY_KP_Equal, 57415, 'u', KITTY_FUNC},
    {XKB_KEY_KP_Separator, 57416, 'u', KITTY_FUNC},
    {XKB_KEY_KP_Left, 57417, 'u', KITTY_FUNC},
    {XKB_KEY_KP_Right, 57418, 'u', KITTY_FUNC},
    {XKB_KEY_KP_Up, 57419, 'u', KITTY_FUNC},
    {XKB_KEY_KP_Down, 57420, 'u', KITTY_FUNC},
    {XKB_KEY_KP_Prior, 57421, 'u', KITTY_FUNC},
    {XKB_KEY_KP_Next, 57422, 'u', KITTY_FUNC},
    {XKB_KEY_KP_Home, 57423, 'u', KITTY_FUNC},
    {XKB_KEY_KP_End, 57424, 'u', KITTY_FUNC},
    {XKB_KEY_KP_Insert, 57425, 'u', KITTY_FUNC},
    {XKB_KEY_KP_Delete, 57426, 'u', KITTY_FUNC},
    {XKB_KEY_KP_Begin, 57427, 'u', KITTY_FUNC},
    {XKB_KEY_XF86AudioPlay, 57428, 'u', KITTY_FUNC},
    {XKB_KEY_XF86AudioPause, 57429, 'u', KITTY_FUNC},
    {XKB_KEY_XF86AudioStop, 57432, 'u', KITTY_FUNC},
    {XKB_KEY_XF86AudioForward, 57433, 'u', KITTY_FUNC},
    {XKB_KEY_XF86AudioRewind, 57434, 'u', KITTY_FUNC},
    {XKB_KEY_XF86AudioNext, 57435, 'u', KITTY_FUNC},
    {XKB_KEY_XF86AudioPrev, 57436, 'u', KITTY_FUNC},
    {XKB_KEY_XF86AudioRecord, 57437, 'u', KITTY_FUNC},
    {XKB_KEY_XF86AudioLowerVolume, 57438, 'u', KITTY_FUNC},
    {XKB_KEY_XF86AudioRaiseVolume, 57439, 'u', KITTY_FUNC},
    {XKB_KEY_XF86AudioMute, 57440, 'u', KITTY_FUNC},
    {XKB_KEY_Shift_L, 57441, 'u', KITTY_MODIFIER},
    {XKB_KEY_Control_L, 57442, 'u', KITTY_MODIFIER},
    {XKB_KEY_Alt_L, 57443, 'u', KITTY_MODIFIER},
    {XKB_KEY_Super_L, 57444, 'u', KITTY_MODIFIER},
    {XKB_KEY_Hyper_L, 57445, 'u', KITTY_MODIFIER},
    {XKB_KEY_Meta_L, 57446, 'u', KITTY_MODIFIER},
    {XKB_KEY_Shift_R, 57447, 'u', KITTY_MODIFIER},
    {XKB_KEY_Control_R, 57448, 'u', KITTY_MODIFIER},
    {XKB_KEY_Alt_R, 57449, 'u', KITTY_MODIFIER},
    {XKB_KEY_Super_R, 57450, 'u', KITTY_MODIFIER},
    {XKB_KEY_Hyper_R, 57451, 'u', KITTY_MODIFIER},
    {XKB_KEY_Meta_R, 57452, 'u', KITTY_MODIFIER},
    {XKB_KEY_ISO_Level3_Shift, 57453, 'u', KITTY_MODIFIER},
    {XKB_KEY_ISO_Level5_Shift, 57454, 'u', KITTY_MODIFIER},
};

/* keysym as the protocol sees it; false for a key it has nothing for. */
static bool kitty_lookup(uint32_t keysym, uint32_t text, const struct keys_event *ev,
			 struct kitty_key *ret)
{
	uint32_t cp;

	if (keysym >= XKB_KEY_F13 && keysym <= XKB_KEY_F35) {
		*ret = (struct kitty_key){keysym, 57376 + (keysym - XKB_KEY_F13), 'u', KITTY_FUNC};
		return true;
	}
	if (keysym >= XKB_KEY_KP_0 && keysym <= XKB_KEY_KP_9) {
		*ret = (struct kitty_key){keysym, 57399 + (keysym - XKB_KEY_KP_0), 'u', KITTY_FUNC};
		return true;
	}
	for (size_t i = 0; i < sizeof(kitty_keys) / sizeof(kitty_keys[0]); i++)
		if (kitty_keys[i].keysym == keysym) {
			*ret = kitty_keys[i];
			return true;
		}
	/* a text key: the code point of its unshifted keysym (Ctrl+Shift+A
	 * is 97, never 65) */
	cp = xkb_keysym_to_utf32(ev && ev->unshifted ? ev->unshifted : xkb_keysym_to_lower(keysym));
	if (!cp)
		cp = text;
	if (!cp || cp < 0x20 || cp == 0x7f)
		return false;
	*ret = (struct kitty_key){keysym, cp, 'u', KITTY_TEXT};
	return true;
}

int keys_kitty_encode(uint32_t keysym, uint32_t text, unsigned mods, const struct keys_event *ev,
		      unsigned flags, char out[static KEYS_KITTY_MAX])
{
	enum keys_event_type type = ev ? ev->type : KEYS_PRESS;
	unsigned m = kitty_mods(mods), shown = m & ~KITTY_LOCKS;
	bool all = flags & STREAM_KITTY_ALL_KEYS, dis = flags & STREAM_KITTY_DISAMBIGUATE;
	uint32_t shifted = 0, base = 0;
	struct kitty_key k;
	size_t n;

	if (!(flags & STREAM_KITTY_EVENT_TYPES)) {
		if (type == KEYS_RELEASE)
			return 0;
		type = KEYS_PRESS; /* a repeat is a press */
	}
	if (!flags)
		return -1;
	if (text < 0x20 || text == 0x7f || text == TSM_VTE_INVALID || text > 0x10ffff)
		text = 0;
	if (!kitty_lookup(keysym, text, ev, &k))
		return type == KEYS_RELEASE ? 0 : -1;

	if (!all) {
		switch (k.kind) {
		case KITTY_TEXT:
			/* text typed with Shift or nothing (a repeat too) is
			 * text; Ctrl and Alt combinations are CSI u with
			 * disambiguate, legacy without */
			if (type != KEYS_RELEASE && (!(shown & ~KITTY_SHIFT) || !dis))
				return -1;
			break;
		case KITTY_C0:
			/* typing `reset` works whatever a crashed program left */
			if (type == KEYS_RELEASE)
				return 0;
			if (!shown || !dis)
				return -1;
			break;
		case KITTY_ESCAPE:
		case KITTY_FUNC:
			if (type == KEYS_PRESS && !dis)
				return -1;
			break;
		case KITTY_MODIFIER:
			return type == KEYS_RELEASE ? 0 : -1;
		}
	}

	/* the locks are not reported for text keys but under 8, so that
	 * legacy programs can use them */
	if (k.kind == KITTY_TEXT && !all)
		m &= ~KITTY_LOCKS;
	if (k.kind == KITTY_TEXT && (flags & STREAM_KITTY_ALTERNATE_KEYS)) {
		if (m & KITTY_SHIFT) {
			shifted = xkb_keysym_to_utf32(keysym);
			if (shifted == k.code)
				shifted = 0;
		}
		if (ev && ev->base) {
			base = xkb_keysym_to_utf32(ev->base);
			if (base == k.code)
				base = 0;
		}
	}
	/* associated text: what the key types, not what Ctrl or Alt make of it */
	if (!(flags & STREAM_KITTY_TEXT) || !all || type == KEYS_RELEASE ||
	    (shown & ~KITTY_SHIFT) || k.kind != KITTY_TEXT)
		text = 0;

	if (k.final != 'u' && k.final != '~' && !m && type == KEYS_PRESS)
		return snprintf(out, KEYS_KITTY_MAX, "\033[%c", k.final);
	n = (size_t)snprintf(out, KEYS_KITTY_MAX, "\033[%u", k.code);
	if (shifted || base)
		n += (size_t)snprintf(out + n, KEYS_KITTY_MAX - n, ":%.0u", shifted);
	if (base)
		n += (size_t)snprintf(out + n, KEYS_KITTY_MAX - n, ":%u", base);
	if (m || type != KEYS_PRESS || text) {
		out[n++] = ';';
		if (m || type != KEYS_PRESS)
			n += (size_t)snprintf(out + n, KEYS_KITTY_MAX - n, "%u", 1 + m);
		if (type != KEYS_PRESS)
			n += (size_t)snprintf(out + n, KEYS_KITTY_MAX - n, ":%u", (unsigned)type);
	}
	if (text)
		n += (size_t)snprintf(out + n, KEYS_KITTY_MAX - n, ";%u", text);
	out[n++] = k.final;
	return (int)n;
}
