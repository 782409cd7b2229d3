/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What keys send, with the terminfo entry of consoled's TERM as the oracle:
 * every key capability of `infocmp -x -1 xterm-256color` (terminfo-keys.h,
 * made from it by tests/vm/terminfokeys.py, which the terminfo-keys test
 * compares with the host's entry) must come out of the key that xterm sends
 * it for, in every terminal mode where it applies, through the path
 * term_handle_key() takes: keys_encode(), else libtsm's encoder. The modes
 * come from real escape sequences fed to the mode follower and to libtsm.
 */
#include <libtsm.h>
#include <stdio.h>
#include <string.h>
#include <xkbcommon/xkbcommon-keysyms.h>

#include "../../daemon/terminal/keys.h"
#include "tests.h"

struct terminfo_key {
	const char *cap;
	const char *seq;
	size_t len;
	uint32_t keysym;
	unsigned mods;
	unsigned modes;
	const char *reason; /* why no key sends it, or NULL */
};

static const struct terminfo_key terminfo_keys[] = {
#include "terminfo-keys.h"
};

/* A terminal as term.c has it: the mode follower and libtsm fed the same
 * output, keys through keys_encode() and then libtsm. */
struct terminal {
	struct tsm_screen *screen;
	struct tsm_vte *vte;
	struct keys_modes modes;
	char out[64];
	size_t out_len;
};

static void terminal_write(struct tsm_vte *vte, const char *u8, size_t len, void *data)
{
	struct terminal *t = data;

	(void)vte;
	if (t->out_len + len <= sizeof(t->out)) {
		memcpy(t->out + t->out_len, u8, len);
		t->out_len += len;
	}
}

static void terminal_init(struct terminal *t)
{
	memset(t, 0, sizeof(*t));
	CHECK(tsm_screen_new(&t->screen, NULL, NULL) == 0);
	CHECK(tsm_screen_resize(t->screen, 80, 24) == 0);
	CHECK(tsm_vte_new(&t->vte, t->screen, terminal_write, t, NULL, NULL) == 0);
	keys_modes_init(&t->modes);
}

static void terminal_fini(struct terminal *t)
{
	tsm_vte_unref(t->vte);
	tsm_screen_unref(t->screen);
}

static void terminal_output(struct terminal *t, const char *s)
{
	keys_modes_feed(&t->modes, s, strlen(s));
	tsm_vte_input(t->vte, s, strlen(s));
}

/* Sets exactly these KEYS_MODE_CURSOR_APP | KEYS_MODE_KEYPAD_APP modes, as
 * a program does: smkx/rmkx. */
static void terminal_set_modes(struct terminal *t, unsigned modes)
{
	terminal_output(t, modes & KEYS_MODE_CURSOR_APP ? "\033[?1h" : "\033[?1l");
	terminal_output(t, modes & KEYS_MODE_KEYPAD_APP ? "\033=" : "\033>");
	CHECK_EQ_U(t->modes.modes & (KEYS_MODE_CURSOR_APP | KEYS_MODE_KEYPAD_APP), modes);
}

/* term_handle_key()'s path; returns the bytes sent (in t->out). */
static size_t terminal_key(struct terminal *t, uint32_t keysym, unsigned mods)
{
	char seq[KEYS_MAX];
	size_t n = keys_encode(keysym, mods, t->modes.modes, seq);
	uint32_t unicode = keysym < 128 ? keysym : TSM_VTE_INVALID;

	t->out_len = 0;
	if (n > 0)
		terminal_write(t->vte, seq, n, t);
	else
		tsm_vte_handle_keyboard(t->vte, keysym, keysym < 128 ? keysym : TSM_VTE_INVALID,
					mods, unicode);
	return t->out_len;
}

static bool terminal_sends(struct terminal *t, uint32_t keysym, unsigned mods, const char *want,
			   size_t want_len, const char *what)
{
	size_t n = terminal_key(t, keysym, mods);

	if (n == want_len && memcmp(t->out, want, n) == 0)
		return true;
	fprintf(stderr, "%s (keysym 0x%x, mods 0x%x, modes 0x%x): sent \"", what, keysym, mods,
		t->modes.modes);
	print_bytes(stderr, t->out, n);
	fputs("\", terminfo says \"", stderr);
	print_bytes(stderr, want, want_len);
	fputs("\"\n", stderr);
	tests_failed = 1;
	return false;
}

static bool sends(struct terminal *t, uint32_t keysym, unsigned mods, const char *want)
{
	return terminal_sends(t, keysym, mods, want, strlen(want), "key");
}

/* Every key capability, in every mode combination it holds in, also with
 * Num Lock, Caps Lock or Logo down where those change nothing. */
static void test_terminfo(void)
{
	struct terminal t;
	unsigned producible = 0, unproducible = 0, cases = 0;

	terminal_init(&t);
	for (size_t i = 0; i < sizeof(terminfo_keys) / sizeof(terminfo_keys[0]); i++) {
		const struct terminfo_key *k = &terminfo_keys[i];
		bool ok = true;

		if (k->reason) {
			fprintf(stderr, "  %-6s ", k->cap);
			print_bytes(stderr, k->seq, k->len);
			fprintf(stderr, ": not sent: %s\n", k->reason);
			unproducible++;
			continue;
		}
		producible++;
		for (unsigned modes = 0; modes < 4; modes++) {
			static const unsigned extra[] = {0, TSM_LOCK_MASK, TSM_LOGO_MASK,
							 KEYS_NUM_LOCK_MASK};

			if ((modes & k->modes) != k->modes)
				continue;
			terminal_set_modes(&t, modes);
			for (size_t e = 0; e < sizeof(extra) / sizeof(extra[0]); e++) {
				/* Num Lock makes the keypad type */
				if (extra[e] == KEYS_NUM_LOCK_MASK &&
				    (k->modes & KEYS_MODE_KEYPAD_APP))
					continue;
				ok &= terminal_sends(&t, k->keysym, k->mods | extra[e], k->seq,
						     k->len, k->cap);
				cases++;
			}
		}
		fprintf(stderr, "  %-6s ", k->cap);
		print_bytes(stderr, k->seq, k->len);
		fprintf(stderr, ": %s\n", ok ? "ok" : "WRONG");
	}
	fprintf(stderr, "%u key capabilities sent right (%u cases), %u not sent by any key\n",
		producible, cases, unproducible);
	/* every function key of the entry, kf1..kf63, is sent */
	for (unsigned f = 1; f <= 63; f++) {
		char name[8];
		bool found = false;

		snprintf(name, sizeof(name), "kf%u", f);
		for (size_t i = 0; i < sizeof(terminfo_keys) / sizeof(terminfo_keys[0]); i++)
			if (strcmp(terminfo_keys[i].cap, name) == 0 && !terminfo_keys[i].reason)
				found = true;
		CHECK(found);
	}
	terminal_fini(&t);
}

/* The forms the entry does not hold: normal cursor mode, Ctrl+Alt+Shift,
 * BackSpace's modifiers, the keypad by mode and Num Lock, and the keys left
 * to libtsm. */
static void test_beyond_terminfo(void)
{
	const unsigned S = TSM_SHIFT_MASK, A = TSM_ALT_MASK, C = TSM_CONTROL_MASK;
	struct terminal t;
	char seq[KEYS_MAX];

	terminal_init(&t);
	terminal_set_modes(&t, 0);
	CHECK(sends(&t, XKB_KEY_Up, 0, "\033[A"));
	CHECK(sends(&t, XKB_KEY_Left, 0, "\033[D"));
	CHECK(sends(&t, XKB_KEY_Home, 0, "\033[H"));
	CHECK(sends(&t, XKB_KEY_End, 0, "\033[F"));
	CHECK(sends(&t, XKB_KEY_KP_Begin, 0, "\033[E"));
	CHECK(sends(&t, XKB_KEY_KP_Up, 0, "\033[A"));
	CHECK(sends(&t, XKB_KEY_KP_Home, C, "\033[1;5H"));
	CHECK(sends(&t, XKB_KEY_Up, S | A | C, "\033[1;8A"));
	CHECK(sends(&t, XKB_KEY_F1, S | A | C, "\033[1;8P"));
	CHECK(sends(&t, XKB_KEY_F5, S | A | C, "\033[15;8~"));
	CHECK(sends(&t, XKB_KEY_F12, 0, "\033[24~"));
	CHECK(sends(&t, XKB_KEY_KP_Delete, 0, "\033[3~"));
	CHECK(sends(&t, XKB_KEY_KP_Insert, S, "\033[2;2~"));
	CHECK(sends(&t, XKB_KEY_KP_Prior, 0, "\033[5~"));
	CHECK(sends(&t, XKB_KEY_KP_Next, A, "\033[6;3~"));
	/* keyboards with F13..F20 keys get the VT220's codes, as in xterm */
	CHECK(sends(&t, XKB_KEY_F13, 0, "\033[25~"));
	CHECK(sends(&t, XKB_KEY_F20, S, "\033[34;2~"));
	CHECK(sends(&t, XKB_KEY_KP_F1, 0, "\033OP"));
	CHECK(sends(&t, XKB_KEY_KP_F4, C, "\033O5S"));

	/* BackSpace: DEL, Ctrl gives BS, Alt puts ESC before, Shift nothing */
	CHECK(sends(&t, XKB_KEY_BackSpace, 0, "\177"));
	CHECK(sends(&t, XKB_KEY_BackSpace, S, "\177"));
	CHECK(sends(&t, XKB_KEY_BackSpace, C, "\b"));
	CHECK(sends(&t, XKB_KEY_BackSpace, A, "\033\177"));
	CHECK(sends(&t, XKB_KEY_BackSpace, A | C, "\033\b"));

	/* the keypad in numeric mode types, without modifiers as in xterm */
	CHECK(sends(&t, XKB_KEY_KP_1, KEYS_NUM_LOCK_MASK, "1"));
	CHECK(sends(&t, XKB_KEY_KP_Add, 0, "+"));
	CHECK(sends(&t, XKB_KEY_KP_Multiply, A, "*"));
	CHECK(sends(&t, XKB_KEY_KP_Divide, 0, "/"));
	CHECK(sends(&t, XKB_KEY_KP_Equal, 0, "="));
	CHECK(sends(&t, XKB_KEY_KP_Decimal, KEYS_NUM_LOCK_MASK, "."));
	CHECK(sends(&t, XKB_KEY_KP_Enter, 0, "\r"));
	terminal_output(&t, "\033[20h"); /* LNM */
	CHECK(sends(&t, XKB_KEY_KP_Enter, 0, "\r\n"));
	CHECK(sends(&t, XKB_KEY_Return, 0, "\r\n")); /* libtsm follows LNM too */
	terminal_output(&t, "\033[20l");
	CHECK(sends(&t, XKB_KEY_Return, 0, "\r"));

	/* application keypad mode: SS3 with Num Lock off, typing with it on */
	terminal_set_modes(&t, KEYS_MODE_KEYPAD_APP);
	CHECK(sends(&t, XKB_KEY_KP_Add, 0, "\033Ok"));
	CHECK(sends(&t, XKB_KEY_KP_Add, C, "\033O5k"));
	CHECK(sends(&t, XKB_KEY_KP_Equal, 0, "\033OX"));
	CHECK(sends(&t, XKB_KEY_KP_7, 0, "\033Ow"));
	CHECK(sends(&t, XKB_KEY_KP_Separator, 0, "\033Ol"));
	CHECK(sends(&t, XKB_KEY_KP_Add, KEYS_NUM_LOCK_MASK, "+"));
	CHECK(sends(&t, XKB_KEY_KP_7, KEYS_NUM_LOCK_MASK, "7"));
	CHECK(sends(&t, XKB_KEY_KP_Enter, KEYS_NUM_LOCK_MASK, "\r"));
	/* with Num Lock off xkb gives the keypad's cursor keysyms */
	CHECK(sends(&t, XKB_KEY_KP_Home, 0, "\033[H"));
	CHECK(sends(&t, XKB_KEY_KP_Delete, 0, "\033[3~"));

	/* what libtsm sends: keys_encode() leaves these alone */
	CHECK_EQ_U(keys_encode(XKB_KEY_a, 0, 0, seq), 0);
	CHECK_EQ_U(keys_encode(XKB_KEY_Tab, S, 0, seq), 0);
	CHECK_EQ_U(keys_encode(XKB_KEY_ISO_Left_Tab, S, 0, seq), 0);
	CHECK_EQ_U(keys_encode(XKB_KEY_Return, A, 0, seq), 0);
	CHECK_EQ_U(keys_encode(XKB_KEY_Escape, 0, 0, seq), 0);
	CHECK_EQ_U(keys_encode(XKB_KEY_Shift_L, S, 0, seq), 0);
	CHECK(sends(&t, XKB_KEY_a, A, "\033a"));
	CHECK(sends(&t, XKB_KEY_c, C, "\003"));
	CHECK(sends(&t, XKB_KEY_Tab, 0, "\t"));
	terminal_fini(&t);
}

static unsigned feed(struct keys_modes *m, const char *s)
{
	keys_modes_feed(m, s, strlen(s));
	return m->modes;
}

static void test_modes(void)
{
	const unsigned CKM = KEYS_MODE_CURSOR_APP, KPAM = KEYS_MODE_KEYPAD_APP,
		       LNM = KEYS_MODE_NEWLINE;
	struct keys_modes m;
	const char *smkx = "\033[?1h\033=";

	keys_modes_init(&m);
	CHECK_EQ_U(m.modes, 0);
	CHECK_EQ_U(feed(&m, smkx), CKM | KPAM);
	CHECK_EQ_U(feed(&m, "\033[?1l\033>"), 0); /* rmkx */
	CHECK_EQ_U(feed(&m, "\033[?1049;1h"), CKM);
	CHECK_EQ_U(feed(&m, "\033[?1;1049l"), 0);
	CHECK_EQ_U(feed(&m, "\033[?66h"), KPAM); /* DECNKM */
	CHECK_EQ_U(feed(&m, "\033[?66l"), 0);
	CHECK_EQ_U(feed(&m, "\033[20h"), LNM);
	CHECK_EQ_U(feed(&m, "\033[20l"), 0);
	CHECK_EQ_U(feed(&m, "\033[?20h\033[1h"), 0); /* not LNM, not DECCKM */

	/* a byte at a time, with text and controls around and inside */
	keys_modes_init(&m);
	const char *split = "ab\r\n\033[?\n1;6\b6h\xc3\xa9";
	for (const char *p = split; *p; p++)
		keys_modes_feed(&m, p, 1);
	CHECK_EQ_U(m.modes, CKM | KPAM);

	/* the fast paths' edges (text skipped to the next ESC, ESC [ at
	 * once, CSIs without h, l or p passed over): ESC or ESC [ at the end
	 * of a read, a CSI cut before its final, controls inside */
	keys_modes_init(&m);
	CHECK_EQ_U(feed(&m, "text\033"), 0);
	CHECK_EQ_U(feed(&m, "[?1h"), CKM);
	CHECK_EQ_U(feed(&m, "\033["), CKM);
	CHECK_EQ_U(feed(&m, "?1l\033[?66"), 0);
	CHECK_EQ_U(feed(&m, "h"), KPAM);
	CHECK_EQ_U(feed(&m, "\033[?66;31m\033[?66\r\nl"), 0);
	CHECK_EQ_U(feed(&m, "\033[31m\033[?1\033[?66h"), KPAM);
	CHECK_EQ_U(feed(&m, "\033[?66\030l\033[?1;66$p\033[?1;66m"), KPAM);

	/* DECSTR resets the keys' modes, not LNM; RIS resets all */
	CHECK_EQ_U(feed(&m, "\033[20h\033[!p"), LNM);
	CHECK_EQ_U(feed(&m, smkx), CKM | KPAM | LNM);
	CHECK_EQ_U(feed(&m, "\033c"), 0);

	/* sequences that are not these modes leave them */
	CHECK_EQ_U(feed(&m, smkx), CKM | KPAM);
	CHECK_EQ_U(feed(&m, "\033[?12$p"), CKM | KPAM); /* DECRQM: vim's query */
	CHECK_EQ_U(feed(&m, "\033[?1$p"), CKM | KPAM);
	CHECK_EQ_U(feed(&m, "\033[>4;2m"), CKM | KPAM); /* modifyOtherKeys */
	CHECK_EQ_U(feed(&m, "\033[>1l"), CKM | KPAM);
	CHECK_EQ_U(feed(&m, "\033[?1;2:3l"), CKM | KPAM);   /* malformed */
	CHECK_EQ_U(feed(&m, "\033[?1\030l"), CKM | KPAM);   /* CAN aborts */
	CHECK_EQ_U(feed(&m, "\033(>\033#>"), CKM | KPAM);   /* ESC with intermediates */
	CHECK_EQ_U(feed(&m, "\033]0;a>b\007"), CKM | KPAM); /* a title */
	CHECK_EQ_U(feed(&m, "\033[1;1l"), CKM | KPAM);
	CHECK_EQ_U(feed(&m, "\033[? 1l"), CKM | KPAM); /* intermediate before the parameter */
	CHECK_EQ_U(feed(&m, "\033[?1$l"), CKM | KPAM); /* an intermediate: another function */
	/* ESC starts over anywhere */
	CHECK_EQ_U(feed(&m, "\033[?1\033>"), CKM);
	CHECK_EQ_U(feed(&m, "\033P$q\033[?1l"), 0);
}

int main(void)
{
	RUN(test_terminfo);
	RUN(test_beyond_terminfo);
	RUN(test_modes);
	return TESTS_RESULT();
}
