/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * What a key sends. consoled sets TERM=xterm-256color, so the session's
 * programs read keys with xterm's terminfo entry; libtsm 4.0.2's encoder
 * sends ^H for BackSpace (the pty's erase is ^?), the Linux console's
 * sequences for Shift+F1..F10 and no modifier at all on the cursor and
 * editing keys. keys_encode() therefore encodes, before libtsm is asked,
 * every key whose bytes depend on a modifier or a terminal mode, the way
 * xterm does by default (modifyCursorKeys and modifyFunctionKeys 2, the
 * PC-style function keys, Delete sends CSI 3 ~, BackSpace sends DEL,
 * numLock true); what is left (characters, Ctrl+letter, Tab, Return,
 * Escape) libtsm sends as xterm does, Alt putting ESC before it.
 *
 *   BackSpace               DEL; Ctrl: BS; Alt: ESC before it
 *   F1..F4                  SS3 P..S; modified: CSI 1 ; m P..S
 *   F5..F20                 CSI 15 ~, 17, 18, 19, 20, 21, 23, 24, 25, 26,
 *                           28, 29, 31, 32, 33, 34 ~; modified CSI n ; m ~
 *   Up Down Right Left      CSI A..D (DECCKM set: SS3 A..D);
 *   Home End, keypad 5      modified: CSI 1 ; m A..D H F E
 *   Insert Delete PgUp PgDn CSI 2 ~, 3 ~, 5 ~, 6 ~; modified CSI n ; m ~
 *   keypad (DECKPAM set and Num Lock off): SS3 with xterm's final (KP_Add
 *                           SS3 k, KP_Enter SS3 M, ...); modified SS3 m k
 *   keypad otherwise        its character (KP_Enter: CR, CR LF under LNM)
 *
 * m = 1 + Shift 1 + Alt 2 + Ctrl 4. With Num Lock off the keypad's digit
 * keys are cursor and editing keys (the keysyms xkb gives them); with Num
 * Lock on they type digits whatever the keypad mode, as in xterm.
 *
 * The modes are the terminal's: the stream stage (stream_key_modes()) and
 * struct keys_modes follow DECCKM
 * (CSI ? 1 h/l), DECKPAM/DECKPNM (ESC =, ESC >, and CSI ? 66 h/l) and LNM
 * (CSI 20 h/l) in the byte stream the session writes, resets them on RIS
 * (ESC c) and DECSTR (CSI ! p, not LNM), and nothing else changes them;
 * libtsm keeps the same modes to itself.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Num Lock is on: a bit beside libtsm's TSM_*_MASK, which libtsm ignores. */
#define KEYS_NUM_LOCK_MASK (1u << 16)

/* The terminal's modes keys depend on. */
#define KEYS_MODE_CURSOR_APP (1u << 0) /* DECCKM */
#define KEYS_MODE_KEYPAD_APP (1u << 1) /* DECKPAM */
#define KEYS_MODE_NEWLINE (1u << 2)    /* LNM: the keypad's Enter sends CR LF */

/* The longest sequence keys_encode() writes (ESC [ 3 4 ; 8 ~ is 7). */
#define KEYS_MAX 16

/* The bytes for keysym (an xkbcommon keysym) with mods (TSM_*_MASK and
 * KEYS_NUM_LOCK_MASK) in modes (KEYS_MODE_*), written to out; returns their
 * count, or 0 for a key it leaves to tsm_vte_handle_keyboard(). */
size_t keys_encode(uint32_t keysym, unsigned mods, unsigned modes, char out[static KEYS_MAX]);

/* The kitty keyboard protocol (https://sw.kovidgoyal.net/kitty/keyboard-protocol/):
 * what a key event sends under the progressive enhancement flags a program
 * set (stream_kitty_flags(), STREAM_KITTY_*: 1 disambiguate, 2 event types,
 * 4 alternate keys, 8 all keys as escape codes, 16 associated text).
 *
 *   CSI code[:shifted[:base]] [; mods[:event]] [; text] u
 *   CSI [1 ; mods[:event]] A..D H F P Q S, CSI n [; mods[:event]] ~
 *
 * code is the key's unshifted code point or the specification's number
 * (Escape 27, Enter 13, Tab 9, Backspace 127, F13..F35 57376.., the keypad
 * 57399.., media keys 57428.., the modifier keys 57441..; F3 is CSI 13 ~
 * as kitty sends it, CSI R being a cursor position report); mods is 1 +
 * shift 1, alt 2, ctrl 4, super (Logo) 8, caps_lock 64, num_lock 128
 * (the locks only for keys that type no text, or all keys under flag 8;
 * hyper 16 and meta 32 are never set: xkbcommon's Linux keymaps have
 * neither apart from Alt and Logo); event 1 press (left out), 2 repeat,
 * 3 release. What stays legacy, as the specification and kitty have it:
 * without flag 8, keys that type text with no modifier but Shift (and the
 * locks) send their text; Enter, Tab and Backspace without modifiers send
 * CR, HT and DEL, and none of them sends a release; without flag 1 every
 * press (and a repeat without flag 2) is sent as before the protocol. The
 * modifier and lock keys themselves are reported only under flag 8. */
enum keys_event_type {
	KEYS_PRESS = 1,
	KEYS_REPEAT = 2,
	KEYS_RELEASE = 3,
};

/* What input knows of a key event beyond its keysym (all optional). */
struct keys_event {
	enum keys_event_type type;
	uint32_t unshifted; /* the key's keysym at its first shift level, 0: unknown */
	uint32_t base;	    /* the key's keysym in the US PC-101 layout, 0: unknown */
	/* the kernel's time of its evdev event (CLOCK_MONOTONIC, us), 0:
	 * none (a software repeat) or unknown */
	uint64_t event_usec;
	uint64_t read_usec; /* when consoled began to read it (the same clock), 0: unknown */
};

/* The longest sequence keys_kitty_encode() writes: a code with two alternate
 * keys, modifiers and event, and a character of text (7 + 3 * 8 + 10). */
#define KEYS_KITTY_MAX 48

/* The bytes of a key event (keysym, text the Unicode character it types or
 * 0, mods TSM_*_MASK and KEYS_NUM_LOCK_MASK) under kitty flags; returns
 * their count (0: nothing is sent, e.g. a release the flags do not ask
 * for), or -1 for a key sent as without the protocol (keys_encode(), then
 * libtsm). Flags 0 gives -1 for presses and repeats and 0 for releases. */
int keys_kitty_encode(uint32_t keysym, uint32_t text, unsigned mods, const struct keys_event *ev,
		      unsigned flags, char out[static KEYS_KITTY_MAX]);

/* Whether keysym is a modifier or lock key (Shift, Ctrl, Alt, Logo, the
 * ISO level and group keys, Num Lock): typing one does not hide the
 * pointer nor bring the view back from the scrollback. */
bool keys_is_modifier(uint32_t keysym);

/* A follower of the session's output that keeps the modes: the reference
 * the stream stage's own view (stream_key_modes(), which the daemon reads)
 * is checked against in the unit tests, fed what libtsm gets. */
struct keys_modes {
	unsigned modes; /* KEYS_MODE_* */
	/* where in a sequence the stream is, kept across calls */
	int state;
	unsigned param;	   /* the parameter being read */
	unsigned seen;	   /* modes named by the sequence's parameters so far */
	bool params;	   /* a digit or ; came */
	bool private_mode; /* CSI ? */
	bool intermediate; /* an intermediate byte after ESC or in the CSI */
	bool bang;	   /* CSI ! */
	bool ignore;	   /* the CSI is malformed: no action */
};

void keys_modes_init(struct keys_modes *m);
/* Follows len bytes the session wrote (any split across calls). */
void keys_modes_feed(struct keys_modes *m, const char *buf, size_t len);
