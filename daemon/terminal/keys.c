/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <libtsm.h>
#include <stdio.h>
#include <string.h>
#include <xkbcommon/xkbcommon-keysyms.h>

#include "keys.h"

#define ESC "\033"

/* xterm's modifier parameter: 0 for none, else 1 + Shift 1 + Alt 2 + Ctrl 4.
 * Logo, Caps Lock and Num Lock are not part of it, as in xterm. */
static unsigned keys_modifier(unsigned mods)
{
	unsigned m = 0;

	if (mods & TSM_SHIFT_MASK)
		m |= 1;
	if (mods & TSM_ALT_MASK)
		m |= 2;
	if (mods & TSM_CONTROL_MASK)
		m |= 4;
	return m ? 1 + m : 0;
}

/* The VT220 code of a function or editing key sent as CSI code ~, or 0. */
static unsigned keys_tilde_code(uint32_t keysym)
{
	/* F5..F20: 15 and 17..21, 23..26, 28..29, 31..34 (the gaps are the
	 * VT220's; F1..F4 are SS3 P..S, not here). */
	static const unsigned fkeys[] = {15, 17, 18, 19, 20, 21, 23, 24,
					 25, 26, 28, 29, 31, 32, 33, 34};

	if (keysym >= XKB_KEY_F5 && keysym <= XKB_KEY_F20)
		return fkeys[keysym - XKB_KEY_F5];
	/* xterm numbers the function keys past the VT220's from 42 on */
	if (keysym >= XKB_KEY_F21 && keysym <= XKB_KEY_F35)
		return 42 + (keysym - XKB_KEY_F21);
	switch (keysym) {
	case XKB_KEY_Find:
		return 1;
	case XKB_KEY_Insert:
	case XKB_KEY_KP_Insert:
		return 2;
	case XKB_KEY_Delete:
	case XKB_KEY_KP_Delete:
		return 3;
	case XKB_KEY_Select:
		return 4;
	case XKB_KEY_Prior:
	case XKB_KEY_KP_Prior:
		return 5;
	case XKB_KEY_Next:
	case XKB_KEY_KP_Next:
		return 6;
	default:
		return 0;
	}
}

/* The final byte of a cursor key (the keypad's too: xterm takes KP_Home..
 * KP_Begin, which xkb gives with Num Lock off, for Home..Begin), or 0. */
static char keys_cursor_final(uint32_t keysym)
{
	switch (keysym) {
	case XKB_KEY_Up:
	case XKB_KEY_KP_Up:
		return 'A';
	case XKB_KEY_Down:
	case XKB_KEY_KP_Down:
		return 'B';
	case XKB_KEY_Right:
	case XKB_KEY_KP_Right:
		return 'C';
	case XKB_KEY_Left:
	case XKB_KEY_KP_Left:
		return 'D';
	case XKB_KEY_Begin:
	case XKB_KEY_KP_Begin:
		return 'E';
	case XKB_KEY_End:
	case XKB_KEY_KP_End:
		return 'F';
	case XKB_KEY_Home:
	case XKB_KEY_KP_Home:
		return 'H';
	default:
		return 0;
	}
}

/* A keypad key that types a character: its character, and the final of its
 * SS3 sequence in application keypad mode (xterm's table: the keysym's
 * offset from KP_Space picks the letter). */
static bool keys_keypad(uint32_t keysym, char *ret_char, char *ret_final)
{
	static const struct {
		uint32_t keysym;
		char ch, final;
	} keypad[] = {
	    {XKB_KEY_KP_Space, ' ', ' '},    {XKB_KEY_KP_Tab, '\t', 'I'},
	    {XKB_KEY_KP_Enter, '\r', 'M'},   {XKB_KEY_KP_Multiply, '*', 'j'},
	    {XKB_KEY_KP_Add, '+', 'k'},	     {XKB_KEY_KP_Separator, ',', 'l'},
	    {XKB_KEY_KP_Subtract, '-', 'm'}, {XKB_KEY_KP_Decimal, '.', 'n'},
	    {XKB_KEY_KP_Divide, '/', 'o'},   {XKB_KEY_KP_Equal, '=', 'X'},
	};

	if (keysym >= XKB_KEY_KP_0 && keysym <= XKB_KEY_KP_9) {
		*ret_char = (char)('0' + (keysym - XKB_KEY_KP_0));
		*ret_final = (char)('p' + (keysym - XKB_KEY_KP_0));
		return true;
	}
	for (size_t i = 0; i < sizeof(keypad) / sizeof(keypad[0]); i++)
		if (keypad[i].keysym == keysym) {
			*ret_char = keypad[i].ch;
			*ret_final = keypad[i].final;
			return true;
		}
	return false;
}

static size_t keys_put(char *out, const char *s)
{
	size_t n = strlen(s);

	memcpy(out, s, n);
	return n;
}

/* CSI [1 ;] m final, or the unmodified form: SS3 final when ss3, else CSI final. */
static size_t keys_letter(char *out, char final, unsigned m, bool ss3)
{
	if (m)
		return (size_t)snprintf(out, KEYS_MAX, ESC "[1;%u%c", m, final);
	return (size_t)snprintf(out, KEYS_MAX, ESC "%c%c", ss3 ? 'O' : '[', final);
}

size_t keys_encode(uint32_t keysym, unsigned mods, unsigned modes, char out[static KEYS_MAX])
{
	unsigned m = keys_modifier(mods), code;
	char final, ch;

	if (keysym == XKB_KEY_BackSpace) {
		size_t n = 0;

		/* xterm's backarrow key: DEL, and BS with Ctrl; Shift adds nothing */
		if (mods & TSM_ALT_MASK)
			out[n++] = '\033';
		out[n++] = (mods & TSM_CONTROL_MASK) ? '\b' : '\177';
		return n;
	}

	if (keysym >= XKB_KEY_F1 && keysym <= XKB_KEY_F4)
		return keys_letter(out, (char)('P' + (keysym - XKB_KEY_F1)), m, true);
	/* PF1..PF4 keep SS3 with a modifier, as xterm sends them */
	if (keysym >= XKB_KEY_KP_F1 && keysym <= XKB_KEY_KP_F4) {
		final = (char)('P' + (keysym - XKB_KEY_KP_F1));
		if (m)
			return (size_t)snprintf(out, KEYS_MAX, ESC "O%u%c", m, final);
		return keys_letter(out, final, 0, true);
	}

	code = keys_tilde_code(keysym);
	if (code) {
		if (m)
			return (size_t)snprintf(out, KEYS_MAX, ESC "[%u;%u~", code, m);
		return (size_t)snprintf(out, KEYS_MAX, ESC "[%u~", code);
	}

	final = keys_cursor_final(keysym);
	if (final)
		return keys_letter(out, final, m, modes & KEYS_MODE_CURSOR_APP);

	if (keys_keypad(keysym, &ch, &final)) {
		/* xterm's numLock: with Num Lock on the keypad types, whatever
		 * the application asked for */
		if ((modes & KEYS_MODE_KEYPAD_APP) && !(mods & KEYS_NUM_LOCK_MASK)) {
			if (m)
				return (size_t)snprintf(out, KEYS_MAX, ESC "O%u%c", m, final);
			return keys_letter(out, final, 0, true);
		}
		if (ch == '\r' && (modes & KEYS_MODE_NEWLINE))
			return keys_put(out, "\r\n");
		out[0] = ch;
		return 1;
	}
	return 0;
}

bool keys_is_modifier(uint32_t keysym)
{
	return (keysym >= XKB_KEY_Shift_L && keysym <= XKB_KEY_Hyper_R) ||
	       (keysym >= XKB_KEY_ISO_Lock && keysym <= XKB_KEY_ISO_Last_Group_Lock) ||
	       keysym == XKB_KEY_Mode_switch || keysym == XKB_KEY_Num_Lock;
}

/* The follower of the session's output: a small VT500 parser (Paul
 * Williams's, as libtsm's) that acts on the few sequences above and passes
 * over the rest. ESC starts a new sequence anywhere, CAN and SUB end one, so
 * strings (OSC, DCS, ...) need no state of their own: their text is ignored
 * as ground text is. */
enum {
	KEYS_GROUND,
	KEYS_ESC,
	KEYS_CSI,
};

void keys_modes_init(struct keys_modes *m)
{
	*m = (struct keys_modes){0};
}

/* The modes a parameter of SM/RM (private or not) names. */
static unsigned keys_mode_of(unsigned param, bool private_mode)
{
	if (private_mode)
		return param == 1 ? KEYS_MODE_CURSOR_APP : param == 66 ? KEYS_MODE_KEYPAD_APP : 0;
	return param == 20 ? KEYS_MODE_NEWLINE : 0;
}

static void keys_modes_csi_start(struct keys_modes *m)
{
	m->state = KEYS_CSI;
	m->param = 0;
	m->seen = 0;
	m->params = false;
	m->private_mode = false;
	m->intermediate = false;
	m->bang = false;
	m->ignore = false;
}

static void keys_modes_csi_dispatch(struct keys_modes *m, unsigned char final)
{
	m->seen |= keys_mode_of(m->param, m->private_mode);
	if (m->ignore)
		return;
	if ((final == 'h' || final == 'l') && !m->intermediate) {
		if (final == 'h')
			m->modes |= m->seen;
		else
			m->modes &= ~m->seen;
	} else if (final == 'p' && m->bang && !m->private_mode) {
		/* DECSTR: cursor keys and keypad back to normal */
		m->modes &= ~(KEYS_MODE_CURSOR_APP | KEYS_MODE_KEYPAD_APP);
	}
}

void keys_modes_feed(struct keys_modes *m, const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (m->state == KEYS_GROUND && c != 0x1b) {
			/* outside a sequence only ESC starts something: text,
			 * most of the stream, is passed over at memchr's pace */
			const char *esc = memchr(buf + i, 0x1b, len - i);

			if (!esc)
				return;
			i = (size_t)(esc - buf);
			c = 0x1b;
		}
		if (c == 0x1b && i + 1 < len && buf[i + 1] == '[') {
			/* ESC [, as the ESC state below takes the '[' */
			keys_modes_csi_start(m);
			i++;
			continue;
		}
		if (c == 0x1b) {
			m->state = KEYS_ESC;
			m->intermediate = false;
			continue;
		}
		if (c == 0x18 || c == 0x1a) {
			m->state = KEYS_GROUND;
			continue;
		}
		if (c < 0x20 || c >= 0x7f)
			continue; /* C0 controls are executed inside sequences too */

		if (m->state == KEYS_CSI) {
			/* a sequence that ends in another final than h, l or p
			 * does nothing here (keys_modes_csi_dispatch()): its
			 * parameters are passed over */
			size_t j = i;

			while (j < len && buf[j] >= 0x20 && buf[j] <= 0x3f)
				j++;
			if (j < len && buf[j] >= 0x40 && buf[j] <= 0x7e && buf[j] != 'h' &&
			    buf[j] != 'l' && buf[j] != 'p') {
				m->state = KEYS_GROUND;
				i = j;
				continue;
			}
		}
		switch (m->state) {
		case KEYS_ESC:
			if (c < 0x30) {
				m->intermediate = true; /* ESC ( B and the like */
				break;
			}
			m->state = KEYS_GROUND;
			if (m->intermediate)
				break;
			if (c == '[')
				keys_modes_csi_start(m);
			else if (c == '=')
				m->modes |= KEYS_MODE_KEYPAD_APP;
			else if (c == '>')
				m->modes &= ~KEYS_MODE_KEYPAD_APP;
			else if (c == 'c')
				m->modes = 0;
			break;
		case KEYS_CSI:
			if (c >= '0' && c <= '9') {
				m->params = true;
				if (m->intermediate)
					m->ignore = true;
				else if (m->param < 100000)
					m->param = m->param * 10 + (c - '0');
			} else if (c == ';') {
				m->params = true;
				if (m->intermediate)
					m->ignore = true;
				m->seen |= keys_mode_of(m->param, m->private_mode);
				m->param = 0;
			} else if (c == ':') {
				m->ignore = true;
			} else if (c >= 0x3c && c <= 0x3f) {
				/* a private marker only opens the sequence */
				if (m->params || m->private_mode || m->intermediate)
					m->ignore = true;
				else if (c == '?')
					m->private_mode = true;
				else
					m->ignore = true; /* CSI > and the like: not ours */
			} else if (c < 0x30) {
				m->intermediate = true;
				if (c == '!')
					m->bang = true;
			} else {
				keys_modes_csi_dispatch(m, c);
				m->state = KEYS_GROUND;
			}
			break;
		default:
			break;
		}
	}
}
