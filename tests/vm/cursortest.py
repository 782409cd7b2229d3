#!/usr/bin/python3
"""The cursor's shapes (DECSCUSR) and its blinking, run by vmtest.py in the
cirrus guest (8 bpp, Lat15-Fixed16: an 8x16 cell, a bar of one column) and
the bochs guest (32 bpp, Uni2-Terminus32x16: a 16x32 cell, a bar of two).

The session is `cat` of a FIFO the check writes escape sequences into, so
nothing but what the check sends reaches the terminal. An X is printed at
row 3, column 5 and the cursor put back on it; with the cursor hidden
(DECTCEM) the screen is the baseline, whose X cell holds the default
foreground on the default background. Every expected screen is the
baseline with that one cell changed by the shape's rule, compared pixel for
pixel with the screendump (screen.compare over the whole screen):

  block      the cell's two colours swapped (libtsm's reverse video, as before)
  underline  fbcon's underline cursor (bitblit.c bit_cursor(), CUR_UNDERLINE):
             the cell's last two lines (the font is 10 or more high) in the
             foreground colour
  bar        the cell's first width / 8 columns in the foreground colour

  cursor-shapes  the default options (a steady block, cursor-blink=no):
                 DECTCEM on shows the block; DECSCUSR 4, 6, 2 the steady
                 shapes; 3 (a blinking underline) is a steady underline: four
                 screendumps over 1.2 s are all the same; 0 the default block
                 again; DECTCEM off the baseline again.
  cursor-blink   --cursor-shape=bar --cursor-blink=yes: the default cursor
                 blinks: once the bar shows, screendumps see the baseline,
                 the bar and the baseline again within 5 s, and nothing
                 else (the phases' lengths as seen are printed: 300 and
                 600 ms give or take a screendump) but, never twice in a
                 row, the cell caught part drawn (each of its pixels the
                 bar's or the baseline's: a screendump is not atomic with
                 the guest's stores, nor is bochs's deferred I/O flush,
                 and a CI run saw one); DECSCUSR 4 is a steady
                 underline (four screendumps over 1.2 s the same); 3 blinks
                 again.
"""

import time

import screen

CARDS = ("cirrus", "bochs")
CHECKS = ["cursor-shapes", "cursor-blink"]
FONT = {"cirrus": "Lat15-Fixed16.psf.gz", "bochs": "Uni2-Terminus32x16.psf.gz"}

FIFO = "/tmp/cursor.fifo"
SCRIPT = "/tmp/cursor-session.sh"
READY = "/tmp/cursor.ready"
COL, ROW = 4, 2  # the X's cell, 0-based


class CursorChecks:
    def __init__(self, runner, load_font):
        self.r = runner
        self.vm = runner.vm
        self.font = FONT[runner.card]
        f = load_font(self.font)
        self.w, self.h = f.width, f.height
        self.checks = {"cursor-shapes": self.check_shapes, "cursor-blink": self.check_blink}

    def send(self, seq):
        """Bytes to the session's terminal (escapes as printf takes them)."""
        self.r.sh("printf '%s' > %s" % (seq, FIFO))

    def start(self, extra=""):
        script = ": >%s\nexec cat 0<>%s\n" % (READY, FIFO)
        self.r.sh("rm -f %s %s && mkfifo %s" % (READY, FIFO, FIFO))
        self.r.put_file(SCRIPT, script.encode())
        self.r.start_consoled(self.font, "/bin/sh %s" % SCRIPT, extra=extra)
        deadline = time.monotonic() + 30
        while self.vm.run("test -e %s" % READY)[1] != 0:
            if time.monotonic() > deadline:
                self.r.fail("the session did not start; log:\n%s" % self.r.consoled_log())
            time.sleep(0.3)
        self.send("\\033[?25l\\033[H\\033[2J\\033[%d;%dHX\\033[%d;%dH"
                  % (ROW + 1, COL + 1, ROW + 1, COL + 1))
        self.r.wait_text(self.font, lambda s: s.lines[ROW].rstrip() == " " * COL + "X",
                         "the X at row %d, column %d" % (ROW + 1, COL + 1))
        self.base = self.r.stable_grab()
        # the X cell: the default background (its top-left pixel, above the
        # glyph) and the foreground (the other colour in it)
        cell = {self.base.pixel(COL * self.w + x, ROW * self.h + y)
                for y in range(self.h) for x in range(self.w)}
        self.bg = self.base.pixel(COL * self.w, ROW * self.h)
        fg = cell - {self.bg}
        if len(fg) != 1:
            self.r.fail("the X cell has the colours %s, expected two" % sorted(cell))
        self.fg = fg.pop()

    def expected(self, shape):
        """The baseline with the cursor's shape drawn on the X cell."""
        data = bytearray(self.base.data)
        bar = max(self.w // 8, 1)
        for y in range(self.h):
            for x in range(self.w):
                px, py = COL * self.w + x, ROW * self.h + y
                i = (py * self.base.width + px) * 3
                old = tuple(data[i:i + 3])
                if shape == "block":
                    new = self.bg if old == self.fg else self.fg
                elif shape == "underline" and y >= self.h - 2:
                    new = self.fg
                elif shape == "bar" and x < bar:
                    new = self.fg
                else:
                    new = old
                data[i:i + 3] = bytes(new)
        return screen.Image(self.base.width, self.base.height, data)

    def wait_shape(self, shape, what):
        exp = self.base if shape is None else self.expected(shape)
        self.r.wait_equal(exp, what, timeout=10)
        return exp

    def steady(self, exp, what, n=4, interval=0.3):
        """n screendumps `interval` apart all show exp."""
        for _ in range(n):
            time.sleep(interval)
            img = self.vm.grab()
            diff = screen.compare(exp, img)
            if diff:
                self.r.fail("%s: %d pixels differ in %r (a blink?)" % (what, diff.count,
                                                                      diff.bbox), exp, img)

    def partial(self, exp, img):
        """img is the baseline outside the X cell, and each pixel of the
        cell is the baseline's or exp's: a cursor half drawn or half
        erased."""
        diff = screen.compare(self.base, img)
        x0, y0 = COL * self.w, ROW * self.h
        x1, y1 = x0 + self.w - 1, y0 + self.h - 1
        b = diff.bbox
        if b[0] < x0 or b[1] < y0 or b[2] > x1 or b[3] > y1:
            return False
        return all(img.pixel(x, y) in (self.base.pixel(x, y), exp.pixel(x, y))
                   for y in range(y0, y1 + 1) for x in range(x0, x1 + 1))

    def blinks(self, shape, what, timeout=5.0):
        """The shape shows, then the cell without a cursor, then the shape
        again (a blink, whatever the pictures before), and nothing else,
        within timeout. Returns the screendumps taken and the seconds the
        off and the on phase were seen to last (a screendump's time more
        or less)."""
        exp = self.wait_shape(shape, what)
        want, n, seen, torn = ["off", "on", "off"], 0, [], False
        deadline = time.monotonic() + timeout
        while want:
            if time.monotonic() > deadline:
                self.r.fail("%s: in %d screendumps over %.0f s after the %s showed: %s, no %s"
                            % (what, n, timeout, shape, " ".join(s for s, _ in seen) or "-",
                               want[0]))
            img = self.vm.grab()
            n += 1
            if not screen.compare(exp, img):
                state = "on"
            elif not screen.compare(self.base, img):
                state = "off"
            elif self.partial(exp, img) and not torn:
                # caught while the cell was being written (the screendump
                # is not atomic with the guest's stores, nor is a deferred
                # I/O flush): the next one must be whole
                torn = True
                continue
            else:
                self.r.fail("%s: a screendump that is neither the %s nor the cell without"
                            " a cursor%s" % (what, shape, " (twice in a row part of each)"
                                             if torn else ""), exp, img)
            torn = False
            if state == want[0]:
                seen.append((state, time.monotonic()))
                want.pop(0)
        return n, seen[1][1] - seen[0][1], seen[2][1] - seen[1][1]

    def check_shapes(self):
        self.start()
        self.send("\\033[?25h")
        self.wait_shape("block", "the default cursor (a steady block)")
        for ps, shape in (("4", "underline"), ("6", "bar"), ("2", "block")):
            self.send("\\033[%s q" % ps)
            self.wait_shape(shape, "DECSCUSR %s (a steady %s)" % (ps, shape))
        self.send("\\033[3 q")
        exp = self.wait_shape("underline", "DECSCUSR 3 with cursor-blink=no (a steady underline)")
        self.steady(exp, "DECSCUSR 3 with cursor-blink=no")
        self.send("\\033[0 q")
        self.wait_shape("block", "DECSCUSR 0 (the default block)")
        self.send("\\033[?25l")
        self.wait_shape(None, "DECTCEM off (no cursor)")
        print("# cursor-shapes: %dx%d cell, block, underline (2 lines), bar (%d columns) exact"
              % (self.w, self.h, max(self.w // 8, 1)), flush=True)
        self.r.stop_consoled()

    def check_blink(self):
        self.start("--cursor-shape=bar --cursor-blink=yes")
        self.send("\\033[?25h")
        n = self.blinks("bar", "the default cursor (a blinking bar)")
        self.send("\\033[4 q")
        exp = self.wait_shape("underline", "DECSCUSR 4 (a steady underline)")
        self.steady(exp, "DECSCUSR 4 with cursor-blink=yes")
        self.send("\\033[3 q")
        m = self.blinks("underline", "DECSCUSR 3 (a blinking underline)")
        print("# cursor-blink: off %.2f s, on %.2f s (%d screendumps); after DECSCUSR 3: off"
              " %.2f s, on %.2f s (%d)" % (n[1], n[2], n[0], m[1], m[2], m[0]), flush=True)
        self.r.stop_consoled()
