#!/usr/bin/python3
"""consoled's FreeType font checks, run by vmtest.py on cirrus (8 bpp: mono
rendering, pseudocolour) and bochs (32 bpp: 8-bit coverage, blended).

The reference is ftref (ftref.c, built on the host by meson): it draws text
with FreeType alone by the rules of fonts/fontset.h, and these checks compare
consoled's screendump with it cell by cell, exactly.  The fonts live in the
guest at /fonts/ttf (initramfs.TTF_FONTS); fontconfig sees them only through
FONTCONFIG_FILE=/etc/vm/fonts-test.conf, which these checks pass where they
need the fallback.

  font-ascii      --font-file=DejaVuSansMono.ttf --font-size=9 --font-dpi=112
                  (14 px: both options matter) and the 95 printable ASCII
                  characters: the rows equal ftref's.
  font-wide       wide characters (中文, from the fallback font) take
                  exactly two cells each; the cells beside them are pure
                  background; the row equals ftref's.
  font-combining  e + U+0301 and other marks (and a zero-advance mark of the
                  fallback font on a fallback base): drawn in the base's
                  cell, no cell of their own; the row equals ftref's.
  font-fallback   characters DejaVu Sans Mono lacks (Thai, Hebrew, Tibetan)
                  come from unifont via fontconfig, a character no font has
                  is the replacement box; the row equals ftref's.
  font-colours    text in SGR 33;44 (blending between two colours at 32 bpp).
  font-zoom       Ctrl+Plus (Ctrl+Shift+=), Ctrl+KP_Add, Ctrl+Minus, Ctrl+0 at
                  the default 12 points: the session's `stty size` and the
                  log follow ftref's cell for 13, 14, 13 and 12 points, and
                  the lines written before the zoom are still on screen,
                  drawn at the new size.
  font-default    no font options and no fontconfig configuration: the
                  built-in font draws (the other VM checks rely on it).
  font-bad-input  a missing file, a truncated TTF, a file that is no font and
                  --font-name=NoSuchFontXYZ: consoled still shows a console
                  in the built-in font and logs a line naming the file or
                  name and the fallback; with fonts visible to fontconfig,
                  the unknown name still gives a console.

The screendumps of the text checks and of each zoom step go to
<out>/../vm-fonts/<card>-*.png (the paths are printed as TAP comments).
"""

import os
import re
import subprocess
import tempfile
import time

import initramfs
import screen

CARDS = ("cirrus", "bochs")
CHECKS = ["font-ascii", "font-wide", "font-combining", "font-fallback", "font-colours",
          "font-zoom", "font-default", "font-bad-input"]

GUEST_MAIN = initramfs.TTF_DIR + "/DejaVuSansMono.ttf"
GUEST_MAIN_NAME = os.path.relpath(GUEST_MAIN, "/fonts")  # for Runner.start_consoled
HOST_MAIN = initramfs.TTF_FONTS["DejaVuSansMono.ttf"]
HOST_FALLBACK = initramfs.TTF_FONTS["unifont.otf"]
FC_ENV = "FONTCONFIG_FILE=" + initramfs.FONTS_CONF

# The text checks' size: 9 points at 112 dpi are 14 pixels, a whole number,
# so "the main font's pixel size" of a fallback (fontset.h) has one meaning.
TEXT_SIZE, TEXT_DPI = 9, 112
# consoled's defaults (fontset.h, options): zoom starts there.
DEFAULT_SIZE, DEFAULT_DPI = 12, 96

# Console colours (--palette=linux) the text uses.
PAL = screen.LINUX_PALETTE
FG, BG = 7, 0

PRINTABLE = "".join(chr(c) for c in range(0x20, 0x7f))
WIDE_ROW = "wide:  中文  end"
# DejaVu Sans Mono's marks advance a full cell (drawn at the base's origin);
# unifont's advance zero (drawn at the base's advance): Thai SARA I on KO KAI.
COMBINING_ROW = "combining: e\u0301 a\u0300 o\u0308 n\u0303 u\u0301x \u0e01\u0e34 end"
FALLBACK_ROW = "fallback: \u0e01 \u05d0 \u0f00 box: \ue000 end"
FALLBACK_CHARS = {0x0e01: "fallback1", 0x05d0: "fallback1", 0x0f00: "fallback1",
                  0x4e2d: "fallback1", 0x6587: "fallback1", 0xe000: "box"}
COLOUR_PREFIX = "colours: "
COLOUR_TEXT = " yellow on blue, 中文 e\u0301 "

# Rows of the text screen: (row, column, text, fg, bg, check).
TEXT_ROWS = [
    (0, 0, "ASCII: " + PRINTABLE[:40], FG, BG, "font-ascii"),
    (1, 0, PRINTABLE[40:], FG, BG, "font-ascii"),
    (3, 0, WIDE_ROW, FG, BG, "font-wide"),
    (5, 0, COMBINING_ROW, FG, BG, "font-combining"),
    (7, 0, FALLBACK_ROW, FG, BG, "font-fallback"),
    (9, 0, COLOUR_PREFIX, FG, BG, "font-colours"),
    (9, len(COLOUR_PREFIX), COLOUR_TEXT, 3, 4, "font-colours"),
]

# Lines the zoom session writes before the keys; the last four are looked for
# after each step (the top ones may scroll into the scrollback when rows go).
ZOOM_LINES = ["line %d" % i for i in range(1, 16)] + ["zoom-marker"]
# (keys, size in points after them)
ZOOM_STEPS = [(["ctrl", "shift", "equal"], 13), (["ctrl", "kp_add"], 14),
              (["ctrl", "minus"], 13), (["ctrl", "0"], 12)]

BUILTIN_FONT = "Lat15-Fixed16.psf.gz"  # what the built-in font is


def c6_to_8(v):
    """QEMU's VGA DAC: 6 bits a channel, widened as vga.c does."""
    return (v << 2) | ((v & 1) << 1) | (v & 1)


def find_ftref(consoled):
    """ftref built next to the consoled binary (BUILD/tests/vm/ftref), or None."""
    path = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(consoled)), "..",
                                         "tests", "vm", "ftref"))
    return path if os.access(path, os.X_OK) else None


class Ref:
    """ftref's picture of some text rows and its cell geometry."""

    def __init__(self, img, cell_w, cell_h, clusters):
        self.img, self.cell_w, self.cell_h, self.clusters = img, cell_w, cell_h, clusters


class FontChecks:
    def __init__(self, runner, ftref):
        self.r = runner
        self.vm = runner.vm
        self.card = runner.card
        self.ftref = ftref
        # fb0 at boot: "xres,yres,bpp" (virtual size, which is the visible
        # one until consoled changes it).
        m = re.match(r"(\d+),(\d+),(\d+)$", self.vm.fb_info or "")
        self.xres, self.yres, self.bpp = (int(v) for v in m.groups()) if m else (0, 0, None)
        self.mono = self.bpp == 8
        self.shots = os.path.join(os.path.dirname(os.path.abspath(runner.out_dir)), "vm-fonts")
        self._text = None
        checks = {
            "font-ascii": lambda: self.check_rows("font-ascii"),
            "font-wide": self.check_wide,
            "font-combining": self.check_combining,
            "font-fallback": self.check_fallback,
            "font-colours": lambda: self.check_rows("font-colours"),
            "font-zoom": self.check_zoom,
            "font-default": self.check_default,
            "font-bad-input": self.check_bad_input,
        }
        self.checks = {name: self.guarded(fn) for name, fn in checks.items()}

    def guarded(self, fn):
        def run():
            if self.bpp is None:
                self.r.fail("no framebuffer geometry from the guest (fb0=%r)" % self.vm.fb_info)
            fn()
        return run

    # -- the reference --

    def rgb(self, index):
        """How the card shows console colour `index`: 8 bpp goes through the
        6-bit DAC of QEMU's VGA (consoled's colour map entry 0xaaaa becomes
        0x2a in cirrusfb, shown as 0xa8)."""
        c = PAL[index]
        if self.bpp == 8:
            return tuple(c6_to_8(v >> 2) for v in c)
        return c

    def ftref_run(self, lines, size, dpi, fg=FG, bg=BG, fallback=True, metrics=False):
        """Run ftref; returns a Ref (or (cell_w, cell_h) with metrics)."""
        args = [self.ftref, "--font=" + HOST_MAIN, "--size=%g" % size, "--dpi=%g" % dpi]
        if fallback:
            args.append("--fallback=" + HOST_FALLBACK)
        if self.mono:
            args.append("--mono")
        if metrics:
            out = subprocess.run(args + ["--metrics"], capture_output=True, text=True,
                                 check=True).stdout
            m = re.match(r"cell (\d+) (\d+)", out)
            return int(m.group(1)), int(m.group(2))
        with tempfile.TemporaryDirectory(prefix="ftref-") as tmp:
            path = os.path.join(tmp, "ref.ppm")
            proc = subprocess.run(args + ["--fg=%02x%02x%02x" % self.rgb(fg),
                                          "--bg=%02x%02x%02x" % self.rgb(bg), "--out=" + path,
                                          "--clusters"] + list(lines),
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                raise RuntimeError("ftref failed: %s" % proc.stderr.strip())
            img = screen.read_ppm(path)
        m = re.search(r"^cell (\d+) (\d+)", proc.stdout, re.M)
        clusters = {}
        for line in proc.stdout.splitlines():
            c = re.match(r"cluster row (\d+) col (\d+) cells (\d+) ((?:U\+[0-9A-F]+ ?)+) font (\w+)",
                         line)
            if c:
                cps = [int(u[2:], 16) for u in c.group(4).split()]
                clusters[(int(c.group(1)), int(c.group(2)))] = (int(c.group(3)), cps, c.group(5))
        return Ref(img, int(m.group(1)), int(m.group(2)), clusters)

    def compose(self, rows, size, dpi):
        """The whole screen as consoled must draw it: background everywhere
        (margins too) and ftref's rows at their cells. Returns (image, cell
        width, cell height, {(row, col): (cells, code points, font)})."""
        bg = bytes(self.rgb(BG))
        data = bytearray(bg * (self.xres * self.yres))
        clusters = {}
        cw = ch = None
        for row, col, text, fg, bgi, _ in rows:
            ref = self.ftref_run([text], size, dpi, fg, bgi)
            cw, ch = ref.cell_w, ref.cell_h
            x0, y0, w = col * cw, row * ch, ref.img.width
            for y in range(ref.img.height):
                src = ref.img.data[y * w * 3:(y + 1) * w * 3]
                at = ((y0 + y) * self.xres + x0) * 3
                data[at:at + len(src)] = src
            for (_, c), v in ref.clusters.items():
                clusters[(row, col + c)] = v
        return screen.Image(self.xres, self.yres, bytes(data)), cw, ch, clusters

    # -- comparing --

    @staticmethod
    def cell_diff(a, b, x, y, w, h):
        """(pixels that differ, largest difference of a channel) in a box."""
        count = worst = 0
        for yy in range(y, y + h):
            i, j = (yy * a.width + x) * 3, (yy * a.width + x + w) * 3
            ra, rb = a.data[i:j], b.data[i:j]
            if ra == rb:
                continue
            for k in range(0, len(ra), 3):
                d = max(abs(ra[k + n] - rb[k + n]) for n in range(3))
                if d:
                    count += 1
                    worst = max(worst, d)
        return count, worst

    def row_diffs(self, expected, actual, cw, ch, rows, clusters):
        """Differing cells of whole text rows, each described."""
        out = []
        for row in rows:
            for col in range(self.xres // cw):
                n, worst = self.cell_diff(expected, actual, col * cw, row * ch, cw, ch)
                if n:
                    what = ""
                    for c in range(col, -1, -1):
                        if (row, c) in clusters and c + clusters[(row, c)][0] > col:
                            cells, cps, font = clusters[(row, c)]
                            what = " (%s from %s%s)" % (" ".join("U+%04X" % u for u in cps), font,
                                                        ", cell %d of 2" % (col - c + 1)
                                                        if cells == 2 else "")
                            break
                    out.append("row %d col %d%s: %d pixels differ, by up to %d a channel"
                               % (row, col, what, n, worst))
        return out

    def is_background(self, img, x, y, w, h):
        bg = bytes(self.rgb(BG))
        return all(img.data[((yy * img.width) + x) * 3:((yy * img.width) + x + w) * 3]
                   == bg * w for yy in range(y, y + h))

    # -- consoled --

    def start(self, session, flags, env="", font=None):
        """consoled on tty1; `font` is a file name under /fonts (None: no --font-file)."""
        self.r.start_consoled(font, session, extra=flags, env=env)

    def log(self):
        return self.r.consoled_log()

    def save(self, img, name):
        os.makedirs(self.shots, exist_ok=True)
        path = screen.save_png(img, os.path.join(self.shots, "%s-%s.png" % (self.card, name)))
        print("# screendump: %s" % path, flush=True)
        return path

    # -- the text screen (shared by the row checks) --

    def text_screen(self):
        """consoled's picture of TEXT_ROWS and ftref's, made once per boot
        (a failure to make it fails every check that needs it, at once)."""
        if isinstance(self._text, Exception):
            raise self._text
        if self._text is None:
            try:
                self._text = self.make_text_screen()
            except Exception as e:  # noqa: BLE001 -- kept for the next row check
                self._text = e
                raise
        return self._text

    def make_text_screen(self):
        r = self.r
        expected, cw, ch, clusters = self.compose(TEXT_ROWS, TEXT_SIZE, TEXT_DPI)
        text = "\033[0m\033[?25l\033[H\033[2J"
        for row, col, t, fg, bg, _ in TEXT_ROWS:
            sgr = "" if (fg, bg) == (FG, BG) else "\033[3%d;4%dm" % (fg, bg)
            text += "\033[%d;%dH%s%s\033[0m" % (row + 1, col + 1, sgr, t)
        r.put_file("/tmp/fonttext", text.encode("utf-8"))
        r.sh("printf '\\033[H\\033[2J' > /dev/tty1")
        self.start("/bin/sh -c 'cat /tmp/fonttext; exec sleep 100000'",
                   "--font-size=%g --font-dpi=%g" % (TEXT_SIZE, TEXT_DPI), env=FC_ENV,
                   font=GUEST_MAIN_NAME)
        # Until the picture is right, or time is up (the first start scans
        # unifont for fontconfig's cache under TCG).
        deadline = time.monotonic() + 60
        while True:
            actual = self.vm.grab()
            if actual == expected or time.monotonic() > deadline:
                break
            if r.consoled_exited():
                r.fail("consoled is not running; log:\n" + self.log())
            time.sleep(0.5)
        if actual != expected:
            actual = r.stable_grab()
        log = self.log()
        r.stop_consoled()
        self.save(actual, "text")
        return expected, actual, cw, ch, clusters, log

    def check_rows(self, name, extra=None):
        expected, actual, cw, ch, clusters, log = self.text_screen()
        rows = sorted({row for row, _, _, _, _, check in TEXT_ROWS if check == name})
        diffs = self.row_diffs(expected, actual, cw, ch, rows, clusters)
        # Nothing outside the rows either (blank rows, margins): one count.
        others = [(0, row * ch, self.xres, ch) for row in range(self.yres // ch)
                  if not any(row == r for r, *_ in TEXT_ROWS)]
        others.append((0, (self.yres // ch) * ch, self.xres, self.yres % ch))
        stray = sum(self.cell_diff(expected, actual, *box)[0] for box in others if box[3])
        if extra:
            diffs += extra(expected, actual, cw, ch, clusters)
        if diffs or (name == "font-ascii" and stray):
            if stray:
                diffs.append("%d pixels differ outside the text rows" % stray)
            self.r.fail("%s: %d differences from ftref (%dx%d cells, %s):\n%s"
                        % (name, len(diffs), cw, ch, "mono" if self.mono else "8-bit coverage",
                           "\n".join(diffs[:20])), expected, actual, tag=name)

    def check_wide(self):
        def beside(expected, actual, cw, ch, clusters):
            row = [r for r, _, t, *_ in TEXT_ROWS if t == WIDE_ROW][0]
            col = WIDE_ROW.index("中")
            out = []
            for c in (col - 1, col + 4):
                if not self.is_background(actual, c * cw, row * ch, cw, ch):
                    out.append("col %d beside the wide pair is not pure background" % c)
            for c, ch_ in ((col, 0x4e2d), (col + 2, 0x6587)):
                got = clusters.get((row, c))
                if not got or got[0] != 2 or got[1] != [ch_]:
                    out.append("ftref does not lay U+%04X over cols %d-%d: %r" % (ch_, c, c + 1, got))
                for half in (0, 1):
                    if self.is_background(actual, (c + half) * cw, row * ch, cw, ch):
                        out.append("U+%04X draws nothing in its cell %d (col %d)"
                                   % (ch_, half + 1, c + half))
            return out
        self.check_rows("font-wide", beside)

    def check_combining(self):
        def marks(expected, actual, cw, ch, clusters):
            row = [r for r, _, t, *_ in TEXT_ROWS if t == COMBINING_ROW][0]
            out = []
            # Each base with its mark is one cell; the space after it is blank.
            for (rr, c), (cells, cps, _) in sorted(clusters.items()):
                if rr != row or len(cps) < 2:
                    continue
                if cells != 1:
                    out.append("ftref gives the cluster at col %d %d cells" % (c, cells))
                if cps[0] != 0x75 and not self.is_background(actual, (c + 1) * cw, row * ch, cw, ch):
                    out.append("col %d after the cluster %s is not blank: the mark took a cell?"
                               % (c + 1, " ".join("U+%04X" % u for u in cps)))
            return out
        self.check_rows("font-combining", marks)

    def check_fallback(self):
        def fonts(expected, actual, cw, ch, clusters):
            out = []
            seen = {cps[0]: font for cells, cps, font in clusters.values()}
            for cp, want in FALLBACK_CHARS.items():
                if seen.get(cp) != want:
                    out.append("ftref draws U+%04X from %s, the check expects %s: the test's premise"
                               " (DejaVu Sans Mono lacks it, unifont has it) is wrong"
                               % (cp, seen.get(cp), want))
            return out
        self.check_rows("font-fallback", fonts)

    # -- zoom --

    def grid(self, size, dpi=DEFAULT_DPI):
        cw, ch = self.ftref_run([], size, dpi, fallback=False, metrics=True)
        return cw, ch, self.xres // cw, self.yres // ch

    def find_block(self, img, size):
        """Row at which the last four ZOOM_LINES are drawn at `size`, or None."""
        ref = self.ftref_run(ZOOM_LINES[-4:], size, DEFAULT_DPI, fallback=False)
        w, h = ref.img.width, ref.img.height
        for row in range(self.yres // ref.cell_h - 3):
            if img.crop(0, row * ref.cell_h, w, h) == ref.img:
                return row + 3
        return None

    def check_zoom(self):
        r = self.r
        script = ("printf '\\033[?25l\\033[H\\033[2J'\n"
                  + "".join("echo '%s'\n" % l for l in ZOOM_LINES)
                  + "while :; do stty size > /tmp/sz.new && mv /tmp/sz.new /tmp/sz; sleep 0.2; done\n")
        r.put_file("/tmp/zoom.sh", script.encode())
        r.sh("rm -f /tmp/sz")
        # The default size; the resolution is given, as bochs reports a
        # physical screen size (consoled then computes its own dpi).
        self.start("/bin/sh /tmp/zoom.sh", "--font-dpi=%d" % DEFAULT_DPI, font=GUEST_MAIN_NAME)

        def wait_size(size, what):
            cw, ch, cols, rows = self.grid(size)
            want = "%d %d" % (rows, cols)
            deadline = time.monotonic() + 30
            while True:
                got = r.vm.run("cat /tmp/sz 2>/dev/null")[0].strip()
                if got == want:
                    break
                if time.monotonic() > deadline:
                    r.fail("%s: stty size says %r, expected %r (%g points: %dx%d cells of %dx%d);"
                           " log:\n%s" % (what, got, want, size, cols, rows, cw, ch, self.log()))
                time.sleep(0.3)
            # The earlier lines, drawn at the new size.
            deadline = time.monotonic() + 15
            while True:
                img = self.vm.grab()
                at = self.find_block(img, size)
                if at is not None or time.monotonic() > deadline:
                    break
                time.sleep(0.3)
            self.save(img, "zoom-%d-%gpt" % (len(shots), size))
            shots.append(size)
            if at is None:
                path = self.vm.save_png(img, "%s-zoom-%gpt-screen.png" % (self.card, size))
                r.fail("%s: the lines written before are not on screen at %g points (%dx%d cells);"
                       " picture: %s" % (what, size, cw, ch, path))
            print("# %s: %g points, %d cols x %d rows, the marker on row %d"
                  % (what, size, cols, rows, at), flush=True)
            return cols, rows

        shots = []
        cols0, rows0 = wait_size(DEFAULT_SIZE, "at start (the default size, 12 points)")
        for keys, size in ZOOM_STEPS:
            what = "after %s" % "+".join(keys)
            self.vm.send_combo(keys)
            cols, rows = wait_size(size, what)
            if size > DEFAULT_SIZE and not (rows < rows0 and cols <= cols0):
                r.fail("%s: the grid did not shrink (%dx%d, was %dx%d)" % (what, cols, rows, cols0, rows0))
            want = "Font size %g points: %dx%d cells of %dx%d" % ((size, cols, rows) + self.grid(size)[:2])
            if want not in self.log():
                r.fail("%s: no log line %r:\n%s" % (what, want, self.log()))
        r.stop_consoled()

    # -- defaults and bad input --

    def builtin_console(self, flags, env, what):
        """consoled with `flags` shows a console in the built-in font; returns its log."""
        r = self.r
        self.start("/bin/sh -c 'printf \"\\033[?25lconsole up\"; exec sleep 100000'", flags, env)
        r.wait_text(BUILTIN_FONT, lambda s: "console up" in s,
                    "%s: no console in the built-in font" % what)
        log = self.log()
        r.stop_consoled()
        return log

    def check_default(self):
        log = self.builtin_console("", "", "no font options, no fontconfig configuration")
        if "DejaVu" in log or "unifont" in log:
            self.r.fail("without FONTCONFIG_FILE consoled found a TrueType font:\n" + log)

    def check_bad_input(self):
        r = self.r
        r.sh("head -c 100000 %s > /tmp/truncated.ttf" % GUEST_MAIN)
        cases = [("a missing file", "--font-file=/fonts/ttf/missing.ttf", "/fonts/ttf/missing.ttf"),
                 ("a truncated TTF", "--font-file=/tmp/truncated.ttf", "/tmp/truncated.ttf"),
                 ("a file that is no font", "--font-file=/etc/profile", "/etc/profile"),
                 ("an unknown font name", "--font-name=NoSuchFontXYZ", "NoSuchFontXYZ")]
        for what, flags, needle in cases:
            log = self.builtin_console(flags, "", what)
            # fontset.h: a line naming the file or name and the fallback
            # taken (the default font by name, then the built-in font).
            named = [l.strip() for l in log.splitlines() if needle in l and "falling back" in l]
            builtin = [l.strip() for l in log.splitlines() if "falling back to the built-in font" in l]
            if not named or not builtin:
                r.fail("%s (%s): no log line naming %s and its fallback, or none saying the"
                       " built-in font is used:\n%s" % (what, flags, needle, log))
            print("# %s: %s" % (what, " / ".join(named + builtin)), flush=True)
        # With fonts to choose from, fontconfig answers any name with its
        # closest match: a console, and a line naming what was asked for.
        r.sh("printf '\\033[H\\033[2J' > /dev/tty1")
        self.start("/bin/sh -c 'printf \"\\033[?25lconsole up\"; exec sleep 100000'",
                   "--font-name=NoSuchFontXYZ", FC_ENV)
        deadline = time.monotonic() + 60
        while "Started session" not in self.log():
            if time.monotonic() > deadline or r.consoled_exited():
                r.fail("--font-name=NoSuchFontXYZ with fonts: no session; log:\n" + self.log())
            time.sleep(0.5)
        img = r.stable_grab()
        log = self.log()
        r.stop_consoled()
        if len(img.crop(0, 0, self.xres, 48).colors()) < 2:
            r.fail("--font-name=NoSuchFontXYZ with fonts: nothing drawn; log:\n" + log)
        if "NoSuchFontXYZ" not in log:
            r.fail("--font-name=NoSuchFontXYZ with fonts: the log does not name it:\n" + log)

