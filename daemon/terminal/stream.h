/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * The pty stream stage: every byte a session writes passes here on its way
 * to libtsm's vte. It is one parser that follows libtsm 4.0.2's own state
 * machine (ground, ESC, CSI, strings; C0 controls executed inside sequences;
 * ESC, CAN, SUB and C1 controls ending them) with state across reads, so a
 * sequence split over any number of reads is seen whole. It hands libtsm
 * only text and complete, well-formed sequences that libtsm handles as xterm
 * does, so libtsm is back in its ground state after every piece it gets and
 * cannot read a byte differently than this stage did. Everything else is
 * rewritten, answered here or dropped:
 *
 *  - text: a base character and the combining marks that follow it in the
 *    same read, a character printed dim or crossed out (SGR 2, 9, which
 *    libtsm does not keep) and code points of the stand-in area and of the
 *    image tiles' area (U+F0000..U+FFFFD, image.h) become stand-ins
 *    (cluster.h), so every tile code point libtsm holds is an image's;
 *    concealed text (SGR 8) becomes spaces of its width; malformed UTF-8
 *    becomes U+FFFD (one per maximal subpart). A UTF-8 sequence cut by the
 *    end of a read waits for its rest.
 *  - REP (CSI n b) repeats the last graphic character here.
 *  - CNL/CPL (CSI E, F) become CR + CUD/CUU, HPA (CSI `) CHA, HPR (CSI a)
 *    CUF, SCOSC/SCORC (CSI s, u) DECSC/DECRC, DECSCL a soft reset (DECSTR:
 *    libtsm's DECSCL would leave UTF-8), CSI 3 J clears libtsm's scrollback.
 *  - SGR is written again in semicolon form, at most 16 parameters a
 *    sequence (libtsm's limit): colon sub-parameters (38:5:n, 38:2::r:g:b,
 *    4:3) become what libtsm knows, malformed colours and SGR 58 (underline
 *    colour) are dropped with their arguments, 21 is underline.
 *  - DECRQM (CSI ? Ps $ p, CSI Ps $ p), which libtsm takes for a soft reset,
 *    is answered as xterm does (CSI ? Ps ; Pm $ y) from libtsm's screen
 *    flags and the modes this stage follows (DECCKM, LNM, the mouse modes,
 *    synchronized output: 2026).
 *  - The mouse modes (DECSET/DECRST 9, 1000, 1002, 1003, 1004, 1005, 1006,
 *    1015) and bracketed paste (2004), which libtsm 4.0.2 ignores (no mouse
 *    API: its DEC mode switch has no case for them), are followed here
 *    (stream_mouse_modes()) and still handed on in their CSI ? h / l.
 *  - OSC 10, 11 and 4 queries get the palette's colours in xterm's
 *    rgb:RRRR/GGGG/BBBB form, with the query's terminator (BEL or ST).
 *  - OSC 52 goes to stream_config's osc52, when set.
 *  - Sixel (DCS P1 ; P2 ; P3 q ... ST, with stream_config's images): the
 *    data goes to a decoder (sixel.h) as it comes, in one piece per read,
 *    its memory counted against the image budget (older images dropped for
 *    it); at the end (ST, or cut by CAN, SUB, ESC or a C1 control: what
 *    was decoded is shown, as in xterm) the image's tile code points are
 *    written into libtsm's screen from the cursor, as xterm places it
 *    (DECSET 80 sixel display mode, 8452 the cursor to its right; 1070
 *    private colour registers, set by default). DA1 then reports sixel (4),
 *    XTSMGRAPHICS (CSI ? Pi ; Pa ; Pv S) the 1024 colour registers and the
 *    largest image (the text area), DECRQM modes 80, 1070 and 8452. RIS
 *    resets the three modes, DECSTR leaves them (as xterm's soft reset).
 *  - Queries answered as xterm does: XTVERSION (CSI > q: DCS > | consoled
 *    VERSION ST), XTWINOPS' size reports (CSI 18 t, 19 t: characters; 14 t,
 *    15 t: pixels of the text area; 16 t: a cell's pixels), XTGETTCAP (DCS
 *    + q names in hex ST: TN/name, Co/colors, RGB of the terminfo entry;
 *    others 0 + r) and DECRQSS (DCS $ q m, r, SP q ST: the SGR pen,
 *    DECSTBM's margins, the cursor's shape; others 0 $ r). A DCS of more
 *    than 64 bytes is no query.
 *  - The cursor's shape (DECSCUSR, CSI Ps SP q), which libtsm ignores, is
 *    followed here (stream_cursor()) and not handed on.
 *  - Dropped: strings (OSC, DCS, SOS, PM, APC: libtsm shows none), CSI with
 *    a private marker libtsm would misread as another sequence (CSI > 4;2 m
 *    as SGR, CSI ? r as DECSTBM, ...), CSI with intermediates other than
 *    DECSTR, DECSCL, DECRQM and DECSCUSR, SRM (local echo would let keys bypass this
 *    stage), ESC sequences with intermediates libtsm does not collect
 *    (ESC # 8 would be DECRC), and malformed CSI (libtsm ignores them too).
 *
 * The stage costs little beside libtsm (tests/bench/floor measures it): text
 * that needs none of this (printable ASCII, well-formed UTF-8 without marks,
 * C0 controls that change nothing here) is handed on in runs as it came, an
 * SGR libtsm reads as xterm does is handed on as it came once followed, and
 * libtsm's character widths are looked up once per code point. Printable
 * ASCII, CR and LF of such runs do not even go through libtsm's vte: with
 * the palette known (stream_config's palette, which the caller also gave
 * libtsm: stream_vte_set_palette()) and GL mapping ASCII to itself, the stage
 * makes the screen calls the vte would make (tsm_screen_write() with the
 * pen in colour, tsm_screen_move_line_home(), tsm_screen_move_down() or,
 * under LNM, tsm_screen_newline()), skipping the vte's UTF-8 decoder and
 * state machine, about 40% of libtsm's time on plain text.
 *
 * To know what libtsm will print, the stage follows libtsm's character set
 * state (G0-G3, GL, GR, single shifts): a character that libtsm maps to
 * another one is never made a stand-in, so line drawing stays line drawing
 * (such characters lose dim and strikethrough). It also follows the state
 * libtsm's vte hides (struct stream_state: its SGR pen, what DECSC saves,
 * the cursor ? 1048/1049 h saves, its key modes), at a cost only on SGR,
 * DECSC (the output before it is handed on, to read the cursor) and mode
 * sequences.
 */
#include <libtsm.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cluster_table;
struct palette;

/* The cursor's shapes (DECSCUSR: 1-2 block, 3-4 underline, 5-6 bar). */
enum stream_cursor_shape {
	STREAM_CURSOR_BLOCK,
	STREAM_CURSOR_UNDERLINE,
	STREAM_CURSOR_BAR,
};

struct stream_cursor {
	enum stream_cursor_shape shape;
	bool blink;
};

struct stream_config {
	struct tsm_vte *vte;	   /* what the stage feeds */
	struct tsm_screen *screen; /* the vte's screen: modes, size, scrollback */
	struct cluster_table *table;
	/* The colours OSC 4, 10 and 11 report (the default colours are
	 * entries 7 and 0); NULL: the Linux console's. The caller keeps it.
	 * Given, it must be libtsm's palette too (stream_vte_set_palette(),
	 * before any output): text is then printed on the screen directly.
	 * NULL: libtsm's own palette, and all text goes through the vte. */
	const struct palette *palette;
	/* Answers for the session, written where libtsm's own answers go. */
	void (*reply)(const char *bytes, size_t len, void *userdata);
	/* Optional: every byte libtsm gets, in order: those its vte gets as
	 * they go to it, text printed on the screen directly (not through the
	 * vte) once printed (tests follow the key encoder's modes in it with
	 * keys_modes_feed(), the reference for stream_key_modes()). */
	void (*seen)(const char *bytes, size_t len, void *userdata);
	/* Optional: an OSC 52 (set or query the selection) terminated by BEL
	 * or ST, what follows "52;" ("Pc;Pd"); longer than STREAM_OSC52_MAX,
	 * or with bytes outside ASCII, it is dropped. Nothing is answered
	 * here. */
	void (*osc52)(const char *args, size_t len, void *userdata);
	/* Optional: how many BELs (0x07) a stream_feed() rang, at its end,
	 * if any. Only a BEL libtsm executes counts: not the one that ends an
	 * OSC string, nor one inside DCS, SOS, PM or APC. */
	void (*bell)(unsigned count, void *userdata);
	/* Optional: where sixel images go (image.h; DCS q ... ST placed at the
	 * cursor, DA1 reports 4, XTSMGRAPHICS answers); NULL: sixel data is
	 * dropped as any other DCS. stream_wipe() wipes it. The caller keeps it. */
	struct image_store *images;
	/* The terminfo entry the session's TERM names, for XTGETTCAP's TN;
	 * NULL: xterm-256color. The caller keeps it. */
	const char *term_name;
	/* The cursor of a new terminal (cursor-shape=, cursor-blink=), which
	 * DECSCUSR 0, RIS and DECSTR go back to; zero: a steady block. With
	 * blink false no cursor blinks: a program's blinking shape (DECSCUSR 1,
	 * 3, 5) is its steady one. */
	struct stream_cursor cursor;
	void *userdata;
};

#define STREAM_OSC52_MAX (360 * 1024) /* base64 of the selection's SELECTION_MAX, and more */

struct stream;

struct stream *stream_new(const struct stream_config *cfg);
void stream_free(struct stream *s);

/* Takes len bytes from the pty: libtsm gets what they mean before this
 * returns (except a UTF-8 sequence cut at the end, which waits). */
void stream_feed(struct stream *s, const char *in, size_t len);

/* A new session, after tsm_vte_hard_reset(): the stage's state goes back to
 * a fresh terminal's and nothing held back from the last one stays (the
 * stand-in table is reset on its own: cluster_table_reset()). */
void stream_reset(struct stream *s);

/* A new session starts from nothing (term_restart()): what a fresh terminal
 * holds and nothing of the last session, in libtsm as in this stage: both
 * screens' rows (libtsm's resets leave the alternate screen's), the
 * scrollback, the cursors DECSC and CSI ? 1048 h saved, modes, margins, tab
 * stops, the pen, pending sequences and strings, libtsm's selection and the
 * stand-in table. */
void stream_wipe(struct stream *s);

/* Whether sixel data is being decoded (a DCS q not ended yet): each of its
 * bytes may paint a band of the image (a repeat to the right edge after a
 * graphics carriage return paints width x 6 pixels for 7 bytes), about 14 ms
 * per 8 KiB at 1920 pixels wide, 8 times the cost of text; the caller reads
 * less at a time meanwhile (term.c). Images that end within one read are
 * bounded apart: one stream_feed() places at most 4 screens of pixels (a
 * few bytes of raster attributes or repeats make a screenful), the further
 * ones are dropped (logged once a session). */
bool stream_in_sixel(const struct stream *s);

/* The bytes of strings (OSC, DCS, ...) the stage holds in memory now: what
 * it collected of one not ended yet (the first 64 bytes of any OSC, all of
 * an OSC 52); 0 once it ended, was cut (ESC but ST's, CAN, SUB, a C1
 * control) or dropped, or after stream_reset(). Counted as the bytes of its
 * buffers that are not zero, so tests see that what an OSC 52 carried (text
 * the user copied, maybe a password) is wiped, not only forgotten. */
size_t stream_string_held(const struct stream *s);

/* The terminal state libtsm 4.0.2 keeps inside its vte and does not show
 * (snapshot.h saves it for session restore), followed here in the stream
 * libtsm gets, and what this stage keeps itself. Screen contents, cursor,
 * margins, tab stops and the screen's flags (tsm_screen_get_flags()) are
 * read from the screen, not kept here. What libtsm 4.0.2's vte also keeps
 * but never acts on is left out: S7C1T/S8C1T, KAM, DECARM, DECNRCM (set,
 * never read), and its 7-bit and 8-bit modes and SRM, which this stage
 * never lets libtsm set (DECSCL becomes DECSTR, SRM is dropped). */
#define STREAM_MODE_DECCKM (1u << 0)  /* CSI ? 1 h: application cursor keys */
#define STREAM_MODE_DECKPAM (1u << 1) /* ESC =: libtsm's application keypad */
#define STREAM_MODE_LNM (1u << 2)     /* CSI 20 h: libtsm's newline mode */
/* The key encoder's own view (stream_key_modes(); keys.h's struct keys_modes
 * would follow the same in what libtsm gets), which differs in two points: */
#define STREAM_MODE_KEYS_KEYPAD (1u << 3) /* DECKPAM, or CSI ? 66 h (DECNKM, libtsm ignores it) */
#define STREAM_MODE_KEYS_LNM (1u << 4)	  /* LNM, which DECSTR leaves set for the encoder */
#define STREAM_MODES_ALL 0x1fu

/* The mouse modes a program set (stream_mouse_modes(), mouse.h), as xterm
 * keeps them: one tracking mode at a time (setting one replaces the other;
 * resetting any of 9, 1000, 1002, 1003 turns tracking off), one coordinate
 * encoding at a time (setting one replaces the other; a reset only undoes
 * the encoding it names), focus events and bracketed paste on their own.
 * All are cleared by RIS, by DECSTR (and DECSCL, a soft reset here: unlike
 * xterm, which keeps them over a soft reset, so that `tput init` or `reset`
 * brings a console, which has no menu to turn reporting off, back to local
 * selection) and by a new session (stream_reset()). */
#define STREAM_MOUSE_X10 (1u << 0)	       /* 9: X10, presses only */
#define STREAM_MOUSE_NORMAL (1u << 1)	       /* 1000: presses and releases */
#define STREAM_MOUSE_BUTTON (1u << 2)	       /* 1002: and motion with a button down */
#define STREAM_MOUSE_ANY (1u << 3)	       /* 1003: and any motion */
#define STREAM_MOUSE_FOCUS (1u << 4)	       /* 1004: focus in/out events */
#define STREAM_MOUSE_UTF8 (1u << 5)	       /* 1005: coordinates UTF-8 encoded */
#define STREAM_MOUSE_SGR (1u << 6)	       /* 1006: CSI < b ; x ; y M/m */
#define STREAM_MOUSE_URXVT (1u << 7)	       /* 1015: CSI b ; x ; y M */
#define STREAM_MOUSE_BRACKETED_PASTE (1u << 8) /* 2004 */
#define STREAM_MOUSE_TRACKING                                                                      \
	(STREAM_MOUSE_X10 | STREAM_MOUSE_NORMAL | STREAM_MOUSE_BUTTON | STREAM_MOUSE_ANY)
#define STREAM_MOUSE_ENCODING (STREAM_MOUSE_UTF8 | STREAM_MOUSE_SGR | STREAM_MOUSE_URXVT)
#define STREAM_MOUSE_ALL 0x1ffu

/* libtsm's four character sets, as designated to G0-G3 (ESC ( F, ...). */
enum stream_charset {
	STREAM_CHARSET_ASCII,		 /* B: as it is */
	STREAM_CHARSET_UPPER,		 /* A 4 C 5 R Q K Y E 6 Z H 7 =: libtsm's "unicode upper" */
	STREAM_CHARSET_DEC_SPECIAL,	 /* 0: DEC special graphics (line drawing) */
	STREAM_CHARSET_DEC_SUPPLEMENTAL, /* < */
};

/* Beside enum cluster_flags in stream_pen.extra: SGR 8, printed as spaces. */
#define STREAM_PEN_CONCEAL (1u << 8)

struct stream_pen {
	/* As libtsm's vte holds it (its SGR): fccode -1 (then fr, fg, fb are
	 * the colour), 0-15 or 16 (TSM_COLOR_FOREGROUND, the default); bccode
	 * -1 (br, bg, bb), 0-15 or 17 (TSM_COLOR_BACKGROUND). The rgb fields of
	 * a colour given by code are 0 here (libtsm takes them from its
	 * palette, lighter with bold). protect is always 0. */
	struct tsm_screen_attr attr;
	unsigned extra; /* what this stage adds: CLUSTER_DIM, CLUSTER_STRIKE, STREAM_PEN_CONCEAL */
};

/* The kitty keyboard protocol's progressive enhancement flags
 * (https://sw.kovidgoyal.net/kitty/keyboard-protocol/): the program
 * pushes them (CSI > flags u), pops them (CSI < n u, n default 1; popping
 * more than the stack holds empties it, which means flags 0), changes
 * those on top (CSI = flags ; mode u: mode 1 sets them, 2 adds the bits,
 * 3 clears the bits; on an empty stack the change becomes its only entry)
 * and asks for them (CSI ? u, answered CSI ? flags u). The main and the
 * alternate screen have a stack each, STREAM_KITTY_DEPTH deep: a push
 * onto a full one drops its oldest entry. Bits beyond STREAM_KITTY_ALL
 * are dropped. RIS and a new session (stream_reset()) empty both stacks;
 * DECSTR leaves them. None of these sequences reaches libtsm; session
 * restore keeps them (stream_state). */
#define STREAM_KITTY_DISAMBIGUATE (1u << 0)
#define STREAM_KITTY_EVENT_TYPES (1u << 1)
#define STREAM_KITTY_ALTERNATE_KEYS (1u << 2)
#define STREAM_KITTY_ALL_KEYS (1u << 3)
#define STREAM_KITTY_TEXT (1u << 4)
#define STREAM_KITTY_ALL 0x1fu
#define STREAM_KITTY_DEPTH 16
/* The flags on top of the stack of the screen shown now (0: legacy keys);
 * what came before reaches libtsm first. */
unsigned stream_kitty_flags(struct stream *s);

#define STREAM_REP_MAX 8 /* CLUSTER_MAX_LEN */

struct stream_state {
	struct stream_pen pen; /* the current SGR pen */
	uint8_t g[4], gl, gr;  /* G0-G3 (enum stream_charset); GL 0-3, GR 1-3 */
	int8_t glt;	       /* a pending single shift's set (2, 3), or -1 */
	unsigned modes;	       /* STREAM_MODE_* */
	/* What DECSC (ESC 7, CSI s) saved: */
	struct {
		/* libtsm's cursor then (x may be the width or one more: a wrap
		 * was pending; both may lie outside a screen made smaller since) */
		unsigned x, y;
		struct stream_pen pen;
		uint8_t gl, gr;
		bool wrap, origin; /* DECAWM, DECOM then */
	} saved;
	/* The cursor CSI ? 1048 h and CSI ? 1049 h saved (libtsm keeps it apart
	 * from DECSC's, and only the position); ? 1048 l and ? 1049 l go back
	 * there. Neither RIS nor DECSTR resets it. */
	struct {
		unsigned x, y;
	} alt;
	/* What REP (CSI b) repeats: the last graphic character and its marks
	 * (rep_len 0: nothing yet). */
	uint32_t rep[STREAM_REP_MAX];
	uint8_t rep_len;
	unsigned mouse; /* STREAM_MOUSE_* (snapshot.c keeps it in a record of its own) */
	/* The kitty keyboard protocol's stacks, [0] the main screen's and [1]
	 * the alternate screen's: kitty_n entries each, flags up to
	 * STREAM_KITTY_ALL (snapshot.c keeps them in a record of their own). */
	uint8_t kitty[2][STREAM_KITTY_DEPTH];
	uint8_t kitty_n[2];
};

/* The state now (every byte fed so far has reached libtsm; a UTF-8 sequence
 * or an escape sequence cut by the end of the last read is not part of it). */
void stream_get_state(struct stream *s, struct stream_state *ret);

/* Session restore: after tsm_vte_hard_reset() and with the screen's cells,
 * cursor, margins, tab stops and flags already rebuilt (the view not
 * scrolled back), brings libtsm's vte and this stage to `st` by feeding the
 * vte a synthesized escape sequence stream, which stream_config's seen gets
 * too (so a keys_modes_feed() there follows; it alone may also get a CSI
 * 20 h, see STREAM_MODE_KEYS_LNM), and stream_key_modes() gives st's. The screen's cells, cursor
 * (also a pending wrap: the last character before it is written again) and flags are left as they
 * were found; libtsm's default attribute for erasing becomes the pen, as after any SGR. A saved or
 * alternate cursor outside the screen is kept as the nearest cell (libtsm's DECRC would go there
 * too). Returns 0, or -EINVAL if st holds values out of range (then nothing is changed). */
int stream_set_state(struct stream *s, const struct stream_state *st);

/* The bytes libtsm got so far, through its vte or printed on its screen
 * directly (what stream_config's seen gets): the output that can change
 * what is shown, without strings (an OSC 52 shows nothing) and what the
 * stage dropped. */
uint64_t stream_bytes_out(const struct stream *s);

/* Synchronized output (DECSET 2026, as kitty, foot and contour define
 * it): set by CSI ? 2026 h, reset by CSI ? 2026 l, RIS and DECSTR; DECRQM
 * answers it. The stage only follows it (and hands the sequence on, which
 * libtsm ignores); term.c holds frames while it is set. */
bool stream_synchronized(const struct stream *s);

/* The cursor as it is drawn: the shape the session set with DECSCUSR (CSI
 * Ps SP q: 1 blinking block, 2 steady block, 3 blinking underline, 4 steady
 * underline, 5 blinking bar, 6 steady bar, as xterm), or stream_config's
 * for 0, no parameter, and after RIS, DECSTR (and DECSCL, a soft reset
 * here) and stream_reset() (a new session); Ps above 6 changes nothing, as
 * in xterm. blink only if stream_config's cursor blinks. DECRQSS (DCS $ q
 * SP q ST) answers it; DECRQM 12 (the blinking cursor) answers whether it
 * blinks (1 or 2), or 4 (permanently reset) when stream_config's cursor
 * does not blink. DECSET/DECRST 12 are not followed (libtsm ignores them
 * too): xterm-256color's cnorm sends CSI ? 12 l, which would stop the
 * blinking a user asked for at the end of every curses program (xterm XORs
 * it with its cursorBlink resource for that reason). Session restore does
 * not keep the shape: a restored session has stream_config's until its
 * program sets one again. */
struct stream_cursor stream_cursor(const struct stream *s);

/* A cell's size in pixels, for the pixel reports of XTWINOPS (CSI 14 t,
 * 16 t); 0: unknown (no report). */
void stream_set_cell_size(struct stream *s, unsigned width, unsigned height);

/* The mouse modes now (STREAM_MOUSE_*): at most one tracking and one
 * encoding bit. */
unsigned stream_mouse_modes(const struct stream *s);

/* The modes the key encoder needs (keys.h, KEYS_MODE_*), as this stage
 * followed them in what libtsm got: DECCKM, DECKPAM or DECNKM (the last of
 * ESC =, ESC >, CSI ? 66 h/l) and LNM, which DECSTR leaves set for the
 * encoder (STREAM_MODE_KEYS_*). They equal what keys_modes_feed() makes of
 * every byte libtsm gets (stream_config's seen), which the unit tests check;
 * reading them here spares the daemon that second pass over the stream. */
unsigned stream_key_modes(const struct stream *s);

/* What the mouse dispatcher (mouse.h) needs besides the mouse modes: the
 * screen (alternate or not) and DECCKM (wheel keys). */
struct tsm_screen *stream_screen(const struct stream *s);
bool stream_cursor_keys_app(const struct stream *s);

/* Gives vte the palette p (its 16 colours and default colours, as a custom
 * palette): what a stream_config's palette needs, before any output (libtsm
 * erases its screen on a palette change). 0, or libtsm's negative errno. */
int stream_vte_set_palette(struct tsm_vte *vte, const struct palette *p);

/* Whether text may be printed on the screen without the vte (on by default
 * when stream_config has a palette; tests compare both ways). */
void stream_set_direct(struct stream *s, bool on);

/* The most characters one REP repeats on a cols x rows screen: more give the
 * same screen (the last row as with the full count), so a few bytes cannot
 * keep libtsm busy for long. */
unsigned stream_rep_limit(unsigned count, unsigned cols, unsigned rows);
