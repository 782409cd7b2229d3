#!/usr/bin/python3
"""The output capabilities of consoled's TERM, and what the screen must show.

The terminfo entry is the oracle of what a program may write: this module
takes every string capability of `infocmp -x -1 xterm-256color` and decides
for each one: tested (a scenario below writes it, expanded by ncurses itself
through Python's curses.tparm, into a known screen), not applicable (keys,
answer formats) or cannot (consoled does not honour it; the reason is in
consoled(8)'s TERMINAL section). A capability without a decision is an error,
so that a new one in the entry gets one.

The expected screen comes from `Model`, a small reference terminal written
for exactly the capabilities used here, following xterm's documented effect
of each (ctlseqs: cursor motion, erase, insert/delete, scroll region and
index, REP, the alternate screen, tab stops, DECSC/DECRC, autowrap, insert
mode, character sets). Attributes are turned into colours by consoled's
documented renderer rules for a PSF font (consoled(8), TERMINAL: fbcon's
build_attr), since that is what xterm's attributes become on this screen.

vmtest.py's caps-terminfo check plays the phases in a session and reads the
screen back cell by cell (pixels: glyph and both colours).

    terminfocaps.py            # print the decisions and the phases' sizes
"""

import curses
import os
import re
import subprocess
import sys

TERM = "xterm-256color"

# xterm-direct's colour capabilities (ncurses terminfo.src), for the 24-bit
# colours xterm-256color's entry does not name: expanded with tparm too.
DIRECT_SETAF = (b"\033[%?%p1%{8}%<%t3%p1%d%e38:2::%p1%{65536}%/%d:%p1%{256}%/%{255}%&%d"
                b":%p1%{255}%&%d%;m")
DIRECT_SETAB = (b"\033[%?%p1%{8}%<%t4%p1%d%e48:2::%p1%{65536}%/%d:%p1%{256}%/%{255}%&%d"
                b":%p1%{255}%&%d%;m")

NOT_APPLICABLE = {
    "u6": "the format of u7's answer (checked with u7)",
    "u8": "the format of u9's answer (checked with u9)",
    "xm": "the format of a mouse report, not output",
    "PE": "the end of a paste, sent by the terminal, not output",
    "PS": "the start of a paste, sent by the terminal, not output",
    "smkx": "key modes: the keys-terminfo check",
    "rmkx": "key modes: the keys-terminfo check",
}

# Honoured, but not read off a screendump here.
NOT_CHECKED = {
    "flash": ("DECSCNM on, 100 ms of ncurses' padding, off: a transient picture a"
              " screendump cannot be timed to"),
    "XM": "mouse reporting on or off (DECSET 1000, 1006): no picture; the mouse-report check",
    "bel": "the bell (--bell): a flash of 100 ms, or a tone; the bell-* checks (belltest.py)",
    "BE": "bracketed paste on (DECSET 2004): no picture; the paste-keys check",
    "BD": "bracketed paste off (DECRST 2004): no picture; the paste-keys check",
    "Ms": "OSC 52 sets the selection buffer: no picture; the paste-keys and share checks",
    "Ss": "the cursor's shape (DECSCUSR): the caps check hides the cursor; cursor-shapes",
    "Se": "the steady block (DECSCUSR 2): the caps check hides the cursor; cursor-shapes",
}

CANNOT = {
    "initc": "the palette is fixed (--palette); OSC 4 with a colour is ignored",
    "oc": "the palette is fixed, so there is nothing to reset (OSC 104 is ignored)",
    "mc0": "no printer: media copy is ignored",
    "mc4": "no printer: media copy is ignored",
    "mc5": "no printer: media copy is ignored",
    "meml": "no memory lock (HP): ESC l is ignored",
    "memu": "no memory lock (HP): ESC m is ignored",
    "mgc": "no left and right margins (DECLRMM); the sequence is dropped",
    "smglp": "no left and right margins (DECLRMM, DECSLRM)",
    "smglr": "no left and right margins (DECLRMM, DECSLRM)",
    "smgrp": "no left and right margins (DECLRMM, DECSLRM)",
    "smm": "no meta mode: Alt always sends ESC before the key (UTF-8)",
    "rmm": "no meta mode: Alt always sends ESC before the key (UTF-8)",
    "Cr": "the cursor colour is fixed (OSC 112 is dropped)",
    "Cs": "the cursor colour is fixed (OSC 12 is dropped)",
}

ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

# DEC special graphics (xterm's map for the characters acsc names).
DEC_GRAPHICS = {
    "`": "\u25c6", "a": "\u2592", "f": "\u00b0", "g": "\u00b1", "i": "\u240b",
    "j": "\u2518", "k": "\u2510", "l": "\u250c", "m": "\u2514", "n": "\u253c",
    "o": "\u23ba", "p": "\u23bb", "q": "\u2500", "r": "\u23bc", "s": "\u23bd",
    "t": "\u251c", "u": "\u2524", "v": "\u2534", "w": "\u252c", "x": "\u2502",
    "y": "\u2264", "z": "\u2265", "{": "\u03c0", "|": "\u2260", "}": "\u00a3",
    "~": "\u00b7",
}


def infocmp_strings(term=TERM):
    """Names of the string capabilities of the entry (extended ones too)."""
    out = subprocess.run(["infocmp", "-x", "-1", term], check=True, capture_output=True,
                         text=True).stdout
    names = []
    for line in out.splitlines()[2:]:
        m = re.match(r"\s*([A-Za-z0-9]+)=", line)
        if m:
            names.append(m.group(1))
    return names


class Entry:
    """The entry's strings, expanded by ncurses (curses.tparm)."""

    def __init__(self, term=TERM):
        fd = os.open(os.devnull, os.O_WRONLY)
        try:
            curses.setupterm(term, fd)
        finally:
            os.close(fd)

    def raw(self, cap):
        """The string as the entry holds it (parameters not expanded)."""
        return curses.tigetstr(cap)

    def __call__(self, cap, *params):
        s = curses.tigetstr(cap)
        if s is None:
            raise KeyError("%s has no %s" % (TERM, cap))
        if params or b"%" in s:
            s = curses.tparm(s, *params)
        # padding ($<n>) is ncurses' to do, not the terminal's
        return re.sub(rb"\$<[0-9.*/]+>", b"", s)


# -- the reference model --

class Model:
    """xterm's effect of the capabilities used here, on a grid of
    (character, attributes) cells. Attributes are a sorted tuple of
    (name, value): fg/bg (None: default; int: palette index; (r, g, b)),
    and bold, dim, italic, underline, blink, inverse, invis, strike."""

    def __init__(self, rows, cols):
        self.rows, self.cols = rows, cols
        self.grid = [[(" ", ()) for _ in range(cols)] for _ in range(rows)]
        self.y = self.x = 0
        self.top, self.bot = 0, rows - 1
        self.attrs = {}
        self.tabs = set(range(8, cols, 8))
        self.pending = False
        self.saved = (0, 0, {}, False)
        self.main = None
        self.acs = False
        self.autowrap = True
        self.insert = False

    def blank(self):
        # bce: erased cells take the current background
        a = {"bg": self.attrs["bg"]} if self.attrs.get("bg") is not None else {}
        return (" ", tuple(sorted(a.items())))

    def cell_attr(self):
        return tuple(sorted((k, v) for k, v in self.attrs.items()
                            if v is not None and v is not False))

    # text
    def put(self, ch):
        if self.pending and self.autowrap:
            self.x = 0
            self.ind()
        self.pending = False
        if self.acs:
            ch = DEC_GRAPHICS.get(ch, ch)
        row = self.grid[self.y]
        if self.insert:
            row.insert(self.x, (" ", ()))
            del row[self.cols:]
        row[self.x] = (ch, self.cell_attr())
        if self.x == self.cols - 1:
            self.pending = self.autowrap
        else:
            self.x += 1

    def text(self, s):
        for ch in s:
            self.put(ch)

    # motion
    def cup(self, y, x):
        self.y, self.x, self.pending = min(y, self.rows - 1), min(x, self.cols - 1), False

    def cuu(self, n):
        limit = self.top if self.y >= self.top else 0
        self.cup(max(limit, self.y - n), self.x)

    def cud(self, n):
        limit = self.bot if self.y <= self.bot else self.rows - 1
        self.cup(min(limit, self.y + n), self.x)

    def cuf(self, n):
        self.cup(self.y, min(self.cols - 1, self.x + n))

    def cub(self, n):
        self.cup(self.y, max(0, self.x - n))

    def cr(self):
        self.cup(self.y, 0)

    def ind(self):
        self.pending = False
        if self.y == self.bot:
            self.scroll_up(1)
        elif self.y < self.rows - 1:
            self.y += 1

    def ri(self):
        self.pending = False
        if self.y == self.top:
            self.scroll_down(1)
        elif self.y > 0:
            self.y -= 1

    def scroll_up(self, n):
        for _ in range(n):
            del self.grid[self.top]
            self.grid.insert(self.bot, [self.blank() for _ in range(self.cols)])

    def scroll_down(self, n):
        for _ in range(n):
            del self.grid[self.bot]
            self.grid.insert(self.top, [self.blank() for _ in range(self.cols)])

    def csr(self, top, bot):
        self.top, self.bot = top, bot
        self.cup(0, 0)

    def il(self, n):
        if self.top <= self.y <= self.bot:
            for _ in range(min(n, self.bot - self.y + 1)):
                del self.grid[self.bot]
                self.grid.insert(self.y, [self.blank() for _ in range(self.cols)])
            self.cup(self.y, 0)

    def dl(self, n):
        if self.top <= self.y <= self.bot:
            for _ in range(min(n, self.bot - self.y + 1)):
                del self.grid[self.y]
                self.grid.insert(self.bot, [self.blank() for _ in range(self.cols)])
            self.cup(self.y, 0)

    # characters
    def ich(self, n):
        row = self.grid[self.y]
        for _ in range(n):
            row.insert(self.x, self.blank())
        del row[self.cols:]
        self.pending = False

    def dch(self, n):
        row = self.grid[self.y]
        n = min(n, self.cols - self.x)
        del row[self.x:self.x + n]
        row.extend(self.blank() for _ in range(n))
        self.pending = False

    def erase(self, y, x0, x1):
        for x in range(x0, min(x1, self.cols)):
            self.grid[y][x] = self.blank()

    def ech(self, n):
        self.erase(self.y, self.x, self.x + n)
        self.pending = False

    def el(self):
        self.erase(self.y, self.x, self.cols)

    def el1(self):
        self.erase(self.y, 0, self.x + 1)

    def ed(self):
        self.el()
        for y in range(self.y + 1, self.rows):
            self.erase(y, 0, self.cols)

    def clear(self):
        self.cup(0, 0)
        for y in range(self.rows):
            self.erase(y, 0, self.cols)

    # tabs
    def ht(self):
        stops = [t for t in sorted(self.tabs) if t > self.x]
        self.cup(self.y, stops[0] if stops else self.cols - 1)

    def cbt(self):
        stops = [t for t in sorted(self.tabs) if t < self.x]
        self.cup(self.y, stops[-1] if stops else 0)

    def hts(self):
        self.tabs.add(self.x)

    def tbc(self):
        self.tabs.clear()

    # save/restore, alternate screen
    def sc(self):
        self.saved = (self.y, self.x, dict(self.attrs), self.acs)

    def rc(self):
        y, x, a, acs = self.saved
        self.cup(y, x)
        self.attrs, self.acs = dict(a), acs

    def smcup(self):
        self.sc()
        self.main = self.grid
        self.grid = [[(" ", ()) for _ in range(self.cols)] for _ in range(self.rows)]

    def rmcup(self):
        if self.main is not None:
            self.grid, self.main = self.main, None
        self.rc()

    # attributes
    def sgr0(self):
        self.attrs = {}
        self.acs = False

    def set(self, **kw):
        self.attrs.update(kw)


# -- the scenarios --

class Phase:
    """One screenful: the bytes to write, the model after them, which
    capabilities own each row (a wrong cell in a row makes its owners wrong),
    and the cells whose glyph is not checked exactly (crossed-out text)."""

    def __init__(self, name, rows, cols):
        self.name = name
        self.data = bytearray()
        self.m = Model(rows, cols)
        self.owners = {}
        self.strike_cells = set()
        self.cursor = "hidden"  # or "shown": the cursor cell must differ
        self.cursor_cap = "civis"  # what the cursor's state checks

    def w(self, b):
        self.data += b

    def own(self, cap, *rows):
        for r in rows:
            self.owners.setdefault(r, set()).add(cap)


def letters_row(r, cols):
    return "".join(ALPHABET[(r * 7 + c) % len(ALPHABET)] for c in range(cols))


class Walk:
    """The capabilities' decisions and the phases that test them."""

    def __init__(self, rows, cols, entry=None):
        self.rows, self.cols = rows, cols
        self.t = entry or Entry()
        self.tested = {}  # cap -> bytes (as first written)

    def cap(self, p, name, *params, call=None, args=()):
        b = self.t(name, *params)
        self.tested.setdefault(name, b)
        p.w(b)
        if call is not None:
            call(*args)
        return b

    def fill(self, p, rows=None):
        """Every row a distinct run of letters (CUP before each row)."""
        for r in range(rows or self.rows):
            s = letters_row(r, self.cols if r < self.rows - 1 else self.cols - 1)
            p.w(self.t("cup", r, 0) + s.encode())
            p.m.cup(r, 0)
            p.m.text(s)

    def marker(self, p, ch="@"):
        p.w(ch.encode())
        p.m.text(ch)

    def start(self, name, rows=None):
        p = Phase(name, self.rows, self.cols)
        self.cap(p, "sgr0", call=p.m.sgr0)
        self.cap(p, "clear", call=p.m.clear)
        self.fill(p, rows)
        return p

    def at(self, p, y, x):
        p.w(self.t("cup", y, x))
        p.m.cup(y, x)

    def motion(self):
        """Phase 1: motion and editing within a row, one capability a row;
        tab stops; insert mode and autowrap. Ends with civis."""
        p = self.start("motion")
        m, c = p.m, self.cap
        row = iter(range(self.rows))

        def one(name, x, *params, fn=None, fargs=None):
            y = next(row)
            self.at(p, y, x)
            c(p, name, *params, call=fn or getattr(m, name),
              args=fargs if fargs is not None else params)
            self.marker(p)
            p.own(name, y)

        y = next(row)  # cup itself
        c(p, "cup", y, 33, call=m.cup, args=(y, 33))
        self.marker(p)
        p.own("cup", y)
        one("ech", 10, 5)
        one("el", 30)
        one("el1", 30)
        one("ich", 10, 3)
        one("dch", 10, 4)
        one("dch1", 10, fn=lambda: m.dch(1), fargs=())
        one("rep", 10, ord("Q"), 7, fn=lambda: m.text("Q" * 7), fargs=())
        one("hpa", 12, 47, fn=lambda: m.cup(m.y, 47), fargs=())
        one("cuf", 12, 9)
        one("cuf1", 12, fn=lambda: m.cuf(1), fargs=())
        one("cub", 12, 5)
        one("cub1", 12, fn=lambda: m.cub(1), fargs=())
        one("cr", 12)
        one("ht", 3)
        one("cbt", 20)
        y = next(row)
        self.at(p, y, 22)
        c(p, "sc", call=m.sc)
        self.at(p, 2, 2)
        c(p, "rc", call=m.rc)
        self.marker(p)
        p.own("sc", y)
        p.own("rc", y)
        y = next(row)  # home: the marker at the top left
        self.at(p, y, 50)
        c(p, "home", call=lambda: m.cup(0, 0))
        self.marker(p, "%")
        p.own("home", 0, y)
        y = next(row)  # insert mode
        self.at(p, y, 5)
        c(p, "smir", call=lambda: setattr(m, "insert", True))
        p.w(b"ABC")
        m.text("ABC")
        c(p, "rmir", call=lambda: setattr(m, "insert", False))
        self.marker(p)
        p.own("smir", y)
        p.own("rmir", y)
        y0, y1, y2 = next(row), next(row), next(row)  # autowrap
        self.at(p, y0, self.cols - 3)
        c(p, "rmam", call=lambda: setattr(m, "autowrap", False))
        p.w(b"WXYZ")
        m.text("WXYZ")
        c(p, "smam", call=lambda: setattr(m, "autowrap", True))
        self.at(p, y1, self.cols - 2)
        p.w(b"ABC")
        m.text("ABC")
        p.own("rmam", y0)
        p.own("smam", y1, y2)
        # hts, then tbc (no stops: ht goes to the last column)
        y = next(row)
        self.at(p, y, 13)
        c(p, "hts", call=m.hts)
        self.at(p, y, 9)
        c(p, "ht", call=m.ht)
        self.marker(p)
        p.own("hts", y)
        y = next(row)
        c(p, "tbc", call=m.tbc)
        self.at(p, y, 3)
        c(p, "ht", call=m.ht)
        self.marker(p)
        p.own("tbc", y)
        # xterm's default stops again (what `tabs -8` does)
        for x in range(8, self.cols, 8):
            p.w(self.t("cup", y, x) + self.t("hts"))
            m.tabs.add(x)
        self.at(p, y, 0)
        c(p, "civis")
        p.cursor = "hidden"
        p.own("civis", y)
        return p

    def band(self, p, name, top, h=3):
        """A scroll region of h rows at `top`, the capability at work in it,
        a marker where the cursor is after it; the rows around it checked."""
        m, c = p.m, self.cap
        bot = top + h - 1
        c(p, "csr", top, bot, call=m.csr, args=(top, bot))
        if name == "ind":
            self.at(p, bot, 7)
            c(p, "ind", call=m.ind)
        elif name == "ri":
            self.at(p, top, 7)
            c(p, "ri", call=m.ri)
        elif name in ("indn", "rin"):
            self.at(p, top + 1, 7)
            c(p, name, 2, call=m.scroll_up if name == "indn" else m.scroll_down, args=(2,))
        elif name in ("il", "dl"):
            self.at(p, top + 1, 7)
            c(p, name, 2, call=getattr(m, name), args=(2,))
        else:
            self.at(p, top + 1, 7)
            c(p, name, call=getattr(m, name[:2]), args=(1,))
        self.marker(p)
        p.own(name + " (region)" if name in ("ind", "ri") else name, *range(top, bot + 1))
        p.own("csr", top - 1, *range(top, bot + 2))
        c(p, "csr", 0, self.rows - 1, call=m.csr, args=(0, self.rows - 1))

    def lines(self):
        """Phase 2: motion between rows, a scroll region, the alternate
        screen, ed. Ends with cvvis."""
        p = self.start("lines")
        m, c = p.m, self.cap
        row = iter(range(self.rows))
        # the marker lands on the row the capability moves to; all the rows
        # from there to where it started are the capability's
        for name, n, params, fn in (("cuu", -2, (2,), lambda: m.cuu(2)),
                                    ("cuu1", -1, (), lambda: m.cuu(1)),
                                    ("ri", -1, (), m.ri),
                                    ("cud", 2, (2,), lambda: m.cud(2)),
                                    ("cud1", 1, (), m.ind),
                                    ("ind", 1, (), m.ind),
                                    ("nel", 1, (), lambda: (m.cr(), m.ind()))):
            ys = [next(row) for _ in range(abs(n) + 1)]
            self.at(p, ys[-1] if n < 0 else ys[0], 40 + len(name))
            c(p, name, *params, call=fn)
            self.marker(p)
            p.own(name, *ys)
        y0, y1 = next(row), next(row)
        self.at(p, y1, 25)
        c(p, "vpa", y0, call=lambda: m.cup(y0, 25))
        self.marker(p)
        p.own("vpa", y0, y1)
        y = next(row)
        self.band(p, "dl1", y + 1)
        # the alternate screen: all of it written, then back
        y = self.rows - 2
        self.at(p, y, 30)
        c(p, "smcup", call=m.smcup)
        for r in range(self.rows):
            p.w(self.t("cup", r, 0) + b"alternate screen %d" % r)
        self.at(p, 3, 3)
        c(p, "rmcup", call=m.rmcup)
        self.marker(p)
        for r in range(self.rows):
            p.own("smcup", r)
            p.own("rmcup", r)
        # ed: from the cursor to the end of the screen
        self.at(p, self.rows - 1, 20)
        c(p, "ed", call=m.ed)
        p.own("ed", self.rows - 1)
        c(p, "cvvis")
        p.cursor, p.cursor_cap = "shown", "cvvis"
        p.own("cvvis", self.rows - 1)
        return p

    def regions(self):
        """Phase 3: scroll regions, a band of rows each."""
        # the last row is left as clear leaves it (the previous phase wrote it)
        p = self.start("regions", self.rows - 1)
        p.own("clear", self.rows - 1)
        for i, name in enumerate(("ind", "ri", "indn", "rin", "il", "dl", "il1")):
            self.band(p, name, 1 + i * 4)
        # the last csr left the cursor at the top left, where it is drawn
        # (cvvis of the phase before)
        p.cursor, p.cursor_cap = "shown", "csr (homes the cursor)"
        return p

    def attributes(self):
        """Attributes and colours, a word per attribute; the character set."""
        p = Phase("attributes", self.rows, self.cols)
        m, c = p.m, self.cap
        self.cap(p, "sgr0", call=m.sgr0)
        self.cap(p, "op")
        # RIS: what the previous phase left is gone, the cursor is home
        self.cap(p, "rs1", call=m.clear)
        self.marker(p, "!")
        p.own("rs1", 0)
        self.cap(p, "civis")
        row = iter(range(self.rows))
        next(row)

        def word(name, on, off=None, off_fn=None, params=(), text=None, strike=False):
            y = next(row)
            p.w(self.t("cup", y, 0)); m.cup(y, 0)
            p.w(b"x "); m.text("x ")
            c(p, name, *params, call=lambda: m.set(**on))
            s = text or name
            x0 = m.x
            p.w(s.encode()); m.text(s)
            if strike:
                p.strike_cells |= {(y, x) for x in range(x0, x0 + len(s))}
            if off:
                c(p, off, call=off_fn or (lambda: m.set(**{k: None for k in on})))
            else:
                c(p, "sgr0", call=m.sgr0)
            p.w(b" y"); m.text(" y")
            p.own(name, y)
            if off:
                p.own(off, y)
            return y

        word("bold", {"bold": True})
        word("dim", {"dim": True})
        word("sitm", {"italic": True}, "ritm")
        word("smul", {"underline": True}, "rmul")
        word("blink", {"blink": True})
        word("rev", {"inverse": True})
        word("smso", {"inverse": True}, "rmso")
        word("invis", {"invis": True})
        word("smxx", {"strike": True}, "rmxx", strike=True)
        y = word("setaf", {"fg": 4}, "op", off_fn=lambda: m.set(fg=None, bg=None),
                 params=(4,), text="blue")
        word("setab", {"bg": 2}, "op", off_fn=lambda: m.set(fg=None, bg=None),
             params=(2,), text="on-green")
        # bold brightens 0-7
        p.w(self.t("setaf", 1))
        m.set(fg=1)
        word("bold", {"bold": True}, text="bold-red")
        # sgr: each of its parameters alone, and some together (p8,
        # protect, is no part of this entry's sgr); a word each, 6 a row
        combos = [(1, {"inverse": True}), (2, {"underline": True}), (3, {"inverse": True}),
                  (4, {"blink": True}), (5, {"dim": True}), (6, {"bold": True}),
                  (7, {"invis": True}), ((2, 6), {"underline": True, "bold": True}),
                  ((4, 6), {"blink": True, "bold": True}), ((3, 5), {"inverse": True, "dim": True}),
                  ((1, 2, 4, 6), {"inverse": True, "underline": True, "blink": True,
                                  "bold": True}),
                  ((5, 6), {"dim": True, "bold": True})]
        for i, (ps, on) in enumerate(combos):
            if i % 6 == 0:
                y = next(row)
                p.own("sgr", y)
            ps = ps if isinstance(ps, tuple) else (ps,)
            flags = [1 if k in ps else 0 for k in range(1, 10)]
            p.w(self.t("cup", y, (i % 6) * 13)); m.cup(y, (i % 6) * 13)
            c(p, "sgr", *flags, call=lambda on=on: (m.sgr0(), m.set(**on)))
            s = "p" + "+".join(map(str, ps))
            p.w(s.encode()); m.text(s)
            c(p, "sgr0", call=m.sgr0)
        # sgr with the alternate character set, then smacs/rmacs and acsc
        y = next(row)
        p.w(self.t("cup", y, 0)); m.cup(y, 0)
        c(p, "sgr", 0, 0, 0, 0, 0, 0, 0, 0, 1, call=lambda: (m.sgr0(), setattr(m, "acs", True)))
        p.w(b"lqk"); m.text("lqk")
        c(p, "sgr0", call=m.sgr0)
        p.w(b" lqk"); m.text(" lqk")
        p.own("sgr", y)
        p.own("sgr0", y)
        y = next(row)
        acsc = self.t("acsc").decode()
        self.tested.setdefault("acsc", acsc.encode())
        pairs = [acsc[i:i + 2] for i in range(0, len(acsc), 2)]
        p.w(self.t("cup", y, 0)); m.cup(y, 0)
        c(p, "smacs", call=lambda: setattr(m, "acs", True))
        p.w("".join(v for _, v in pairs).encode()); m.text("".join(v for _, v in pairs))
        c(p, "rmacs", call=lambda: setattr(m, "acs", False))
        p.w(b"q"); m.text("q")
        p.own("smacs", y)
        p.own("rmacs", y)
        p.own("acsc", y)
        # colours: the 256 as backgrounds (cells of spaces), then as
        # foregrounds (a full block would hide nothing: 'M'); the bce erase
        for what in ("setab", "setaf"):
            y = next(row)
            p.w(self.t("cup", y, 0)); m.cup(y, 0)
            for n in range(256):
                if n and n % self.cols == 0:
                    y = next(row)
                    p.w(self.t("cup", y, 0)); m.cup(y, 0)
                c(p, what, n, call=lambda n=n: m.set(**{what[-1] + "g": n}))
                ch = " " if what == "setab" else "M"
                p.w(ch.encode()); m.text(ch)
                p.own(what, y)
            c(p, "sgr0", call=m.sgr0)
        # 24-bit colours, in xterm-direct's form (on a cube colour and off it)
        y = next(row)
        p.w(self.t("cup", y, 0)); m.cup(y, 0)
        for rgb in ((0x87, 0xd7, 0x5f), (0x12, 0x34, 0x56), (0xc0, 0x40, 0x90)):
            v = rgb[0] << 16 | rgb[1] << 8 | rgb[2]
            b = curses.tparm(DIRECT_SETAF, v) + curses.tparm(DIRECT_SETAB, 0xffffff - v)
            self.tested.setdefault("setaf (direct)", curses.tparm(DIRECT_SETAF, v))
            self.tested.setdefault("setab (direct)", curses.tparm(DIRECT_SETAB, 0xffffff - v))
            p.w(b + b"RGB")
            m.set(fg=rgb, bg=tuple(255 - x for x in rgb))
            m.text("RGB")
        c(p, "sgr0", call=m.sgr0)
        p.own("setaf (direct)", y)
        p.own("setab (direct)", y)
        y = next(row)
        p.w(self.t("cup", y, 10)); m.cup(y, 10)
        c(p, "setab", 4, call=lambda: m.set(bg=4))
        c(p, "el", call=m.el)
        c(p, "sgr0", call=m.sgr0)
        p.own("bce", y)
        # DECSTR (rs2, is2): attributes and insert mode off, the cursor stays
        for name in ("rs2", "is2"):
            y = next(row)
            p.w(self.t("cup", y, 0)); m.cup(y, 0)
            p.w(b"0123456789")
            m.text("0123456789")
            p.w(self.t("cup", y, 2) + self.t("setaf", 1) + self.t("rev") + self.t("smir"))
            m.cup(y, 2)
            c(p, name, call=m.sgr0)
            p.w(b"ab"); m.text("ab")
            p.own(name, y)
        c(p, "cnorm")
        p.cursor, p.cursor_cap = "shown", "cnorm"
        p.own("cnorm", y)
        return p

    def phases(self):
        return [self.motion(), self.lines(), self.regions(), self.attributes()]


# The renderer's rules for a PSF font (consoled(8) TERMINAL; render.c
# render_resolve_colors): italic, else underline, else dim are green, cyan
# and dark grey in place of the foreground; bold brightens 0-7; reverse
# swaps; blink brightens the background (0-15); concealed is background.
ITALIC, UNDERLINE, DIM = 2, 6, 8


def palette256(base16):
    pal = list(base16)
    levels = (0x00, 0x5f, 0x87, 0xaf, 0xd7, 0xff)
    for i in range(216):
        pal.append((levels[i // 36], levels[(i // 6) % 6], levels[i % 6]))
    for i in range(24):
        g = 8 + i * 10
        pal.append((g, g, g))
    return pal


def nearest(pal, rgb):
    """daemon/color/palette.c palette_nearest: the cube and ramp win ties."""
    best, best_d = 0, -1
    for i, c in enumerate(pal):
        d = sum((a - b) ** 2 for a, b in zip(c, rgb))
        if best_d < 0 or d < best_d or (d == best_d and best < 16):
            best, best_d = i, d
            if d == 0 and i >= 16:
                break
    return best


def cell_colours(a, pal, indexed):
    """(fg rgb, bg rgb, glyph drawn) of a cell's attributes."""
    a = dict(a)
    fg = 7 if a.get("fg") is None else a["fg"]
    bg = 0 if a.get("bg") is None else a["bg"]
    if a.get("italic"):
        fg = ITALIC
    elif a.get("underline"):
        fg = UNDERLINE
    elif a.get("dim"):
        fg = DIM
    if a.get("bold") and isinstance(fg, int) and fg < 8:
        fg += 8
    if a.get("inverse"):
        fg, bg = bg, fg
    if a.get("blink") and isinstance(bg, int) and bg < 16:
        bg ^= 8

    def rgb(c):
        if isinstance(c, int):
            return pal[c]
        return pal[nearest(pal, c)] if indexed else c
    return rgb(fg), rgb(bg), not a.get("invis")


class Checker:
    """Reads a screendump cell by cell against a phase's model: glyph
    pixels in the foreground colour, the rest in the background colour
    (within the DAC's rounding)."""

    TOLERANCE = 12

    def __init__(self, font, bpp):
        self.font = font
        self.pal = palette256([(0x00, 0x00, 0x00), (0xaa, 0x00, 0x00), (0x00, 0xaa, 0x00),
                               (0xaa, 0x55, 0x00), (0x00, 0x00, 0xaa), (0xaa, 0x00, 0xaa),
                               (0x00, 0xaa, 0xaa), (0xaa, 0xaa, 0xaa), (0x55, 0x55, 0x55),
                               (0xff, 0x55, 0x55), (0x55, 0xff, 0x55), (0xff, 0xff, 0x55),
                               (0x55, 0x55, 0xff), (0xff, 0x55, 0xff), (0x55, 0xff, 0xff),
                               (0xff, 0xff, 0xff)])
        self.indexed = bpp == 8
        self.bits = {}
        self.missing = set()

    def glyph(self, ch):
        if ch not in self.bits:
            i = self.font.glyph_for(ch)
            self.bits[ch] = None if i is None else self.font.bits(i)
        return self.bits[ch]

    def near(self, a, b):
        return max(abs(x - y) for x, y in zip(a, b)) <= self.TOLERANCE

    def cell_pixels(self, img, r, c):
        fw, fh = self.font.width, self.font.height
        stride, out = img.width * 3, []
        for y in range(fh):
            base = (r * fh + y) * stride + c * fw * 3
            row = img.data[base:base + fw * 3]
            out.extend(tuple(row[i:i + 3]) for i in range(0, fw * 3, 3))
        return out

    def cell_ok(self, img, r, c, cell, strike=False):
        """True, False, or None when the font has no glyph for the character."""
        ch, a = cell
        fg, bg, drawn = cell_colours(a, self.pal, self.indexed)
        px = self.cell_pixels(img, r, c)
        if ch == " " or not drawn:
            return all(self.near(p, bg) for p in px)
        bits = self.glyph(ch)
        if bits is None:
            self.missing.add(ch)
            return None
        if strike:
            # a line through the glyph: its pixels, and more, in the foreground
            extra = 0
            for bit, p in zip(bits, px):
                if bit and not self.near(p, fg):
                    return False
                if not bit and self.near(p, fg):
                    extra += 1
                elif not bit and not self.near(p, bg):
                    return False
            return extra > 0
        return all(self.near(p, fg if bit else bg) for bit, p in zip(bits, px))

    def wrong_cells(self, img, phase, cursor=None):
        """[(row, col)] of the cells that differ from the model (the cursor's
        cell `cursor` is left out)."""
        bad = []
        for r in range(phase.m.rows):
            for c in range(phase.m.cols):
                if (r, c) == cursor:
                    continue
                if self.cell_ok(img, r, c, phase.m.grid[r][c], (r, c) in phase.strike_cells) is False:
                    bad.append((r, c))
        return bad


def show(b):
    """Bytes as infocmp writes them."""
    return "".join("\\E" if c == 27 else "^" + chr(c + 64) if c < 32 else
                   chr(c) if c < 127 else "\\%03o" % c for c in b)


def decisions(names, tested):
    """[(cap, verdict or None for tested)] for every string capability."""
    out = []
    for n in names:
        if n in tested:
            out.append((n, None))
        elif n in NOT_APPLICABLE:
            out.append((n, "not applicable: " + NOT_APPLICABLE[n]))
        elif n in NOT_CHECKED:
            out.append((n, "not checked: " + NOT_CHECKED[n]))
        elif n in CANNOT:
            out.append((n, "cannot: " + CANNOT[n]))
        elif n.startswith("k"):
            out.append((n, "not applicable: a key (the keys-terminfo check)"))
        else:
            raise ValueError("no decision for the capability %s" % n)
    return out


def main():
    rows, cols = 30, 80
    names = infocmp_strings()
    w = Walk(rows, cols)
    ph = w.phases()
    for p in ph:
        print("%s: %d bytes" % (p.name, len(p.data)))
        for r in range(rows):
            print("  %-30s %s" % (",".join(sorted(p.owners.get(r, ()))),
                                  "".join(ch for ch, _ in p.m.grid[r])))
    for cap, verdict in decisions(names, set(w.tested) | {"E3", "u7", "u9"}):
        print("%-16s %s" % (cap, verdict or "tested"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
