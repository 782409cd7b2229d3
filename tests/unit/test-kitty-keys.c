/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kitty keyboard protocol (https://sw.kovidgoyal.net/kitty/keyboard-protocol/):
 * the bytes keys_kitty_encode() gives under each flag set, from the
 * specification's examples and tables, and the flag stacks the stream stage
 * keeps (push, pop, set, query, one stack per screen, overflow, RIS).
 */
#include <libtsm.h>
#include <stdio.h>
#include <string.h>
#include <xkbcommon/xkbcommon-keysyms.h>

#include "../../daemon/terminal/keys.h"
#include "test-stream-fake.h"
#include "tests.h"

#define NUM TSM_VTE_INVALID /* no text */

/* want: the bytes, "" for nothing sent, NULL for the legacy encoding (-1) */
static void check_key(int line, unsigned flags, uint32_t keysym, uint32_t text, unsigned mods,
		      enum keys_event_type type, uint32_t unshifted, uint32_t base,
		      const char *want)
{
	struct keys_event ev = {.type = type, .unshifted = unshifted, .base = base};
	char out[KEYS_KITTY_MAX];
	int n = keys_kitty_encode(keysym, text, mods, &ev, flags, out);
	bool ok = want ? n >= 0 && (size_t)n == strlen(want) && memcmp(out, want, (size_t)n) == 0
		       : n == -1;

	if (ok)
		return;
	fprintf(stderr, "line %d: flags %u keysym 0x%x mods 0x%x type %d: got ", line, flags,
		keysym, mods, (int)type);
	if (n < 0)
		fputs("(legacy)", stderr);
	else
		print_bytes(stderr, out, (size_t)n);
	fputs(", want ", stderr);
	if (want)
		print_bytes(stderr, want, strlen(want));
	else
		fputs("(legacy)", stderr);
	fputc('\n', stderr);
	tests_failed = 1;
}

#define KEY(flags, sym, text, mods, type, want)                                                    \
	check_key(__LINE__, flags, sym, text, mods, type, 0, 0, want)
#define KEY_ALT(flags, sym, text, mods, unshifted, base, want)                                     \
	check_key(__LINE__, flags, sym, text, mods, KEYS_PRESS, unshifted, base, want)

#define SHIFT TSM_SHIFT_MASK
#define CTRL TSM_CONTROL_MASK
#define ALT TSM_ALT_MASK
#define LOGO TSM_LOGO_MASK
#define P KEYS_PRESS
#define R KEYS_REPEAT
#define U KEYS_RELEASE

/* Without flags: every press and repeat as before (legacy), no release. */
static void test_no_flags(void)
{
	KEY(0, XKB_KEY_Tab, '\t', 0, P, NULL);
	KEY(0, XKB_KEY_i, 'i', CTRL, P, NULL);
	KEY(0, XKB_KEY_Return, '\r', SHIFT, P, NULL);
	KEY(0, XKB_KEY_Escape, 0x1b, 0, R, NULL);
	KEY(0, XKB_KEY_a, 'a', 0, U, "");
	KEY(0, XKB_KEY_Shift_L, NUM, SHIFT, P, NULL);
	KEY(0, XKB_KEY_Shift_L, NUM, 0, U, "");
}

/* 1, disambiguate: Esc, Ctrl and Alt combinations as CSI u; text,
 * Enter, Tab and Backspace unmodified as before. */
static void test_disambiguate(void)
{
	KEY(1, XKB_KEY_Tab, '\t', 0, P, NULL);
	KEY(1, XKB_KEY_i, 'i', CTRL, P, "\033[105;5u");
	KEY(1, XKB_KEY_Return, '\r', 0, P, NULL);
	KEY(1, XKB_KEY_Return, '\r', SHIFT, P, "\033[13;2u");
	KEY(1, XKB_KEY_BackSpace, 0x7f, 0, P, NULL);
	KEY(1, XKB_KEY_BackSpace, 0x7f, CTRL, P, "\033[127;5u");
	KEY(1, XKB_KEY_ISO_Left_Tab, NUM, SHIFT, P, "\033[9;2u");
	KEY(1, XKB_KEY_Escape, 0x1b, 0, P, "\033[27u");
	KEY(1, XKB_KEY_a, 'a', ALT, P, "\033[97;3u");
	KEY(1, XKB_KEY_a, 'a', 0, P, NULL);
	KEY(1, XKB_KEY_A, 'A', SHIFT, P, NULL);
	/* Ctrl+Shift+A is 97, never 65 */
	KEY(1, XKB_KEY_A, 'A', CTRL | SHIFT, P, "\033[97;6u");
	KEY(1, XKB_KEY_c, 'c', CTRL, P, "\033[99;5u");
	KEY(1, XKB_KEY_space, ' ', CTRL, P, "\033[32;5u");
	KEY(1, XKB_KEY_a, 'a', LOGO, P, "\033[97;9u");
	/* the second form: CSI 1 ; m letter, the 1 left out without mods */
	KEY(1, XKB_KEY_Up, NUM, 0, P, "\033[A");
	KEY(1, XKB_KEY_Left, NUM, CTRL, P, "\033[1;5D");
	KEY(1, XKB_KEY_F1, NUM, 0, P, "\033[P");
	KEY(1, XKB_KEY_F3, NUM, 0, P, "\033[13~");
	KEY(1, XKB_KEY_F5, NUM, 0, P, "\033[15~");
	KEY(1, XKB_KEY_F5, NUM, SHIFT | CTRL, P, "\033[15;6~");
	KEY(1, XKB_KEY_F12, NUM, ALT, P, "\033[24;3~");
	KEY(1, XKB_KEY_F13, NUM, 0, P, "\033[57376u");
	KEY(1, XKB_KEY_F35, NUM, 0, P, "\033[57398u");
	KEY(1, XKB_KEY_Delete, NUM, 0, P, "\033[3~");
	/* keypad keys are keys of their own; Num Lock is reported (128) */
	KEY(1, XKB_KEY_KP_1, '1', KEYS_NUM_LOCK_MASK, P, "\033[57400;129u");
	KEY(1, XKB_KEY_KP_0, '0', 0, P, "\033[57399u");
	KEY(1, XKB_KEY_KP_Enter, '\r', 0, P, "\033[57414u");
	KEY(1, XKB_KEY_KP_Add, '+', 0, P, "\033[57413u");
	KEY(1, XKB_KEY_KP_End, NUM, 0, P, "\033[57424u");
	KEY(1, XKB_KEY_KP_Begin, NUM, 0, P, "\033[57427u");
	/* a repeat is a press, a release is dropped */
	KEY(1, XKB_KEY_i, 'i', CTRL, R, "\033[105;5u");
	KEY(1, XKB_KEY_i, 'i', CTRL, U, "");
	/* modifier keys only under 8 */
	KEY(1, XKB_KEY_Shift_L, NUM, SHIFT, P, NULL);
	/* Caps Lock does not turn text into a key event; the locks are not
	 * reported for text keys */
	KEY(1, XKB_KEY_A, 'A', TSM_LOCK_MASK, P, NULL);
	KEY(1, XKB_KEY_i, 'i', CTRL | TSM_LOCK_MASK | KEYS_NUM_LOCK_MASK, P, "\033[105;5u");
	KEY(3, XKB_KEY_a, 'a', KEYS_NUM_LOCK_MASK, U, "\033[97;1:3u");
	KEY(1, XKB_KEY_F5, NUM, TSM_LOCK_MASK, P, "\033[15;65~");
}

/* 2, event types: repeats and releases as :2 and :3. */
static void test_event_types(void)
{
	/* presses of what legacy sends stay legacy without 1 */
	KEY(2, XKB_KEY_a, 'a', 0, P, NULL);
	KEY(2, XKB_KEY_a, 'a', 0, R, NULL);
	KEY(2, XKB_KEY_a, 'a', 0, U, "\033[97;1:3u");
	KEY(2, XKB_KEY_F5, NUM, 0, P, NULL);
	KEY(2, XKB_KEY_F5, NUM, 0, R, "\033[15;1:2~");
	KEY(2, XKB_KEY_F5, NUM, CTRL, U, "\033[15;5:3~");
	KEY(2, XKB_KEY_Up, NUM, 0, U, "\033[1;1:3A");
	KEY(3, XKB_KEY_a, 'a', 0, P, NULL);
	KEY(3, XKB_KEY_a, 'a', 0, R, NULL);
	KEY(3, XKB_KEY_a, 'a', 0, U, "\033[97;1:3u");
	KEY(3, XKB_KEY_i, 'i', CTRL, R, "\033[105;5:2u");
	KEY(3, XKB_KEY_i, 'i', CTRL, U, "\033[105;5:3u");
	KEY(3, XKB_KEY_Escape, 0x1b, 0, U, "\033[27;1:3u");
	KEY(3, XKB_KEY_Up, NUM, SHIFT, R, "\033[1;2:2A");
	KEY(3, XKB_KEY_KP_5, '5', KEYS_NUM_LOCK_MASK, U, "\033[57404;129:3u");
	/* Enter, Tab and Backspace: no release without 8 */
	KEY(3, XKB_KEY_Return, '\r', 0, U, "");
	KEY(3, XKB_KEY_Tab, '\t', 0, U, "");
	KEY(3, XKB_KEY_BackSpace, 0x7f, 0, U, "");
	KEY(3, XKB_KEY_Return, '\r', 0, R, NULL);
	KEY(3, XKB_KEY_Return, '\r', SHIFT, R, "\033[13;2:2u");
	KEY(11, XKB_KEY_Return, '\r', 0, U, "\033[13;1:3u");
}

/* 4, alternate keys: the shifted key with Shift, the base layout key when
 * it differs. */
static void test_alternate_keys(void)
{
	KEY_ALT(5, XKB_KEY_A, 'A', CTRL | SHIFT, XKB_KEY_a, XKB_KEY_a, "\033[97:65;6u");
	KEY_ALT(5, XKB_KEY_a, 'a', CTRL, XKB_KEY_a, XKB_KEY_a, "\033[97;5u");
	/* Cyrillic es on the c key: Ctrl+С is Ctrl+c in the base layout */
	KEY_ALT(5, XKB_KEY_Cyrillic_es, 0x441, CTRL, XKB_KEY_Cyrillic_es, XKB_KEY_c,
		"\033[1089::99;5u");
	KEY_ALT(5, XKB_KEY_Cyrillic_ES, 0x421, CTRL | SHIFT, XKB_KEY_Cyrillic_es, XKB_KEY_c,
		"\033[1089:1057:99;6u");
	/* plus on the equal key: Ctrl+Shift+= */
	KEY_ALT(5, XKB_KEY_plus, '+', CTRL | SHIFT, XKB_KEY_equal, XKB_KEY_equal, "\033[61:43;6u");
	/* no alternates without 4 */
	KEY_ALT(1, XKB_KEY_A, 'A', CTRL | SHIFT, XKB_KEY_a, XKB_KEY_a, "\033[97;6u");
}

/* 8, all keys as escape codes; 16, with the text. */
static void test_all_keys(void)
{
	KEY(8, XKB_KEY_a, 'a', 0, P, "\033[97u");
	KEY(8, XKB_KEY_A, 'A', SHIFT, P, "\033[97;2u");
	KEY(8, XKB_KEY_Return, '\r', 0, P, "\033[13u");
	KEY(8, XKB_KEY_Tab, '\t', 0, P, "\033[9u");
	KEY(8, XKB_KEY_BackSpace, 0x7f, 0, P, "\033[127u");
	KEY(8, XKB_KEY_Escape, 0x1b, 0, P, "\033[27u");
	KEY(8, XKB_KEY_a, 'a', 0, U, "");
	KEY(8, XKB_KEY_A, 'A', TSM_LOCK_MASK, P, "\033[97;65u");
	KEY(10, XKB_KEY_a, 'a', 0, U, "\033[97;1:3u");
	KEY(10, XKB_KEY_a, 'a', 0, R, "\033[97;1:2u");
	/* modifier keys, with the state after the event */
	KEY(8, XKB_KEY_Shift_L, NUM, SHIFT, P, "\033[57441;2u");
	KEY(10, XKB_KEY_Shift_L, NUM, 0, U, "\033[57441;1:3u");
	KEY(8, XKB_KEY_Control_R, NUM, CTRL, P, "\033[57448;5u");
	KEY(8, XKB_KEY_Alt_L, NUM, ALT, P, "\033[57443;3u");
	KEY(8, XKB_KEY_Super_L, NUM, LOGO, P, "\033[57444;9u");
	KEY(8, XKB_KEY_Caps_Lock, NUM, TSM_LOCK_MASK, P, "\033[57358;65u");
	KEY(8, XKB_KEY_Num_Lock, NUM, KEYS_NUM_LOCK_MASK, P, "\033[57360;129u");
	KEY(8, XKB_KEY_ISO_Level3_Shift, NUM, 0, P, "\033[57453u");
	/* text, as the specification's examples */
	KEY(24, XKB_KEY_a, 'a', 0, P, "\033[97;;97u");
	KEY(24, XKB_KEY_A, 'A', SHIFT, P, "\033[97;2;65u");
	KEY(24, XKB_KEY_a, 'a', CTRL, P, "\033[97;5u");
	KEY(26, XKB_KEY_a, 'a', 0, U, "\033[97;1:3u");
	KEY(24, XKB_KEY_Return, '\r', 0, P, "\033[13u");
	KEY(24, XKB_KEY_eacute, 0xe9, 0, P, "\033[233;;233u");
	/* 16 without 8: text keys type their text */
	KEY(16, XKB_KEY_a, 'a', 0, P, NULL);
	/* everything at once */
	KEY_ALT(31, XKB_KEY_A, 'A', SHIFT, XKB_KEY_a, XKB_KEY_a, "\033[97:65;2;65u");
}

/* The keys whose press or release (under flags 8) must not bring the view
 * back from the scrollback. */
static void test_modifier_keys(void)
{
	CHECK(keys_is_modifier(XKB_KEY_Shift_L) && keys_is_modifier(XKB_KEY_Control_R) &&
	      keys_is_modifier(XKB_KEY_Alt_L) && keys_is_modifier(XKB_KEY_Super_L) &&
	      keys_is_modifier(XKB_KEY_Caps_Lock) && keys_is_modifier(XKB_KEY_Num_Lock) &&
	      keys_is_modifier(XKB_KEY_ISO_Level3_Shift));
	CHECK(!keys_is_modifier(XKB_KEY_a) && !keys_is_modifier(XKB_KEY_Prior) &&
	      !keys_is_modifier(XKB_KEY_Escape) && !keys_is_modifier(XKB_KEY_KP_Enter));
}

/* A fake terminal's stream; what it answers is in f->replies. */
static void query(struct fake_term *f, const char *want)
{
	f->n_replies = 0;
	f->replies[0] = '\0';
	fake_feed(f, "\033[?u");
	if (strcmp(f->replies, want) != 0) {
		fprintf(stderr, "CSI ? u answered ");
		print_bytes(stderr, f->replies, f->n_replies);
		fprintf(stderr, ", want ");
		print_bytes(stderr, want, strlen(want));
		fputc('\n', stderr);
		tests_failed = 1;
	}
}

static void test_stack(void)
{
	struct fake_term f;
	char seq[32];

	fake_term_init(&f, 20, 6);
	query(&f, "\033[?0u");
	CHECK_EQ_U(stream_kitty_flags(f.stream), 0);
	fake_feed(&f, "\033[>1u");
	query(&f, "\033[?1u");
	fake_feed(&f, "\033[>5u");
	query(&f, "\033[?5u");
	CHECK_EQ_U(stream_kitty_flags(f.stream), 5);
	fake_feed(&f, "\033[<u");
	query(&f, "\033[?1u");
	/* set: 1 replaces, 2 adds, 3 clears; the mode defaults to 1 */
	fake_feed(&f, "\033[=8;2u");
	query(&f, "\033[?9u");
	fake_feed(&f, "\033[=1;3u");
	query(&f, "\033[?8u");
	fake_feed(&f, "\033[=18u");
	query(&f, "\033[?18u");
	fake_feed(&f, "\033[=4;9u"); /* no such mode: nothing */
	query(&f, "\033[?18u");
	/* bits the protocol does not define are dropped */
	fake_feed(&f, "\033[=255u");
	query(&f, "\033[?31u");
	/* pushing with no flags pushes 0 */
	fake_feed(&f, "\033[>u");
	query(&f, "\033[?0u");
	fake_feed(&f, "\033[<u");
	query(&f, "\033[?31u");
	/* popping more than there is empties the stack: flags 0 */
	fake_feed(&f, "\033[<10u");
	query(&f, "\033[?0u");
	/* set on an empty stack */
	fake_feed(&f, "\033[=3u");
	query(&f, "\033[?3u");
	fake_feed(&f, "\033[<u");
	query(&f, "\033[?0u");

	/* the alternate screen has its own stack */
	fake_feed(&f, "\033[>1u");
	fake_feed(&f, "\033[?1049h");
	query(&f, "\033[?0u");
	fake_feed(&f, "\033[>11u");
	query(&f, "\033[?11u");
	CHECK_EQ_U(stream_kitty_flags(f.stream), 11);
	fake_feed(&f, "\033[?1049l");
	query(&f, "\033[?1u");
	CHECK_EQ_U(stream_kitty_flags(f.stream), 1);
	fake_feed(&f, "\033[?1049h");
	query(&f, "\033[?11u");
	fake_feed(&f, "\033[<u\033[?1049l");
	query(&f, "\033[?1u");

	/* overflow: the oldest entry goes, the newest STREAM_KITTY_DEPTH stay */
	fake_feed(&f, "\033[<99u");
	for (unsigned i = 1; i <= STREAM_KITTY_DEPTH + 3; i++) {
		snprintf(seq, sizeof(seq), "\033[>%uu", i % 32);
		fake_feed(&f, seq);
	}
	for (unsigned i = STREAM_KITTY_DEPTH + 3; i > 3; i--) {
		snprintf(seq, sizeof(seq), "\033[?%uu", i % 32);
		query(&f, seq);
		fake_feed(&f, "\033[<u");
	}
	query(&f, "\033[?0u");

	/* RIS empties both stacks; DECSTR leaves them */
	fake_feed(&f, "\033[>3u\033[?1049h\033[>7u");
	query(&f, "\033[?7u");
	fake_feed(&f, "\033[?1049l\033[!p");
	query(&f, "\033[?3u");
	fake_feed(&f, "\033[?1049h");
	query(&f, "\033[?7u");
	fake_feed(&f, "\033c");
	query(&f, "\033[?0u");
	fake_feed(&f, "\033[?1049h");
	query(&f, "\033[?0u");
	fake_feed(&f, "\033[?1049l\033[>3u");
	/* and so does a new session */
	stream_reset(f.stream);
	query(&f, "\033[?0u");
	fake_term_fini(&f);
}

/* libtsm never sees them: CSI u would be its SCORC, moving the cursor to
 * what DECSC saved. */
static void test_not_for_libtsm(void)
{
	static const char *const seqs[] = {"\033[?u",	 "\033[>1u", "\033[<u",
					   "\033[=1;2u", "\033[>u",  "\033[<5u"};
	struct fake_term f;

	fake_term_init(&f, 20, 6);
	for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++) {
		fake_feed(&f, "\033[1;1H\0337\033[3;5H");
		fake_feed(&f, seqs[i]);
		CHECK_EQ_U(tsm_screen_get_cursor_x(f.screen), 4);
		CHECK_EQ_U(tsm_screen_get_cursor_y(f.screen), 2);
	}
	/* plain CSI u is still SCORC */
	fake_feed(&f, "\033[u");
	CHECK_EQ_U(tsm_screen_get_cursor_x(f.screen), 0);
	fake_term_fini(&f);
}

int main(void)
{
	RUN(test_no_flags);
	RUN(test_disambiguate);
	RUN(test_event_types);
	RUN(test_alternate_keys);
	RUN(test_all_keys);
	RUN(test_modifier_keys);
	RUN(test_stack);
	RUN(test_not_for_libtsm);
	return TESTS_RESULT();
}
