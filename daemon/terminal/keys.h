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
