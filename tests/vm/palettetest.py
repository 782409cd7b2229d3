#!/usr/bin/python3
"""consoled's palettes and colour keys, run by vmtest.py in
the cirrus guest (8 bpp pseudocolour) and the bochs guest (32 bpp).

  palette  consoled starts with --palette=solarized, --background=#102030 (a
           default colour that is none of the 16) and a file of colour keys
           (--config) with color2=#123456, a bad color5= (logged, ignored)
           and color6=#2AA199. The session fills cells with background
           colours: the default background, SGR 41 (Solarized's red), 42
           (the key's colour), 46 (the file's colour 6), 44 (blue), 100
           (base03), reverse video (the default foreground, Solarized's
           base0 #839496), 48;5;196 (cube red) and 48;5;16 (cube black, whose
           8 bpp slot the default background took: there the nearest remaining
           entry, grey 232 #080808, as Solarized has no black). tests/vm/fbcmap
           reads what the device shows at the middle of each cell and in the
           right margin: the pixel from video memory and, at 8 bpp, the
           colour map entry it indexes (FBIOGETCMAP): every colour must be
           exactly the configured #rrggbb (16-bit entries v * 0x101 at 8
           bpp; the default background in cube 16's slot). The screendump
           (what QEMU's card scans out) must agree: exact at 32 bpp, at 8
           bpp the same colours through the VGA DAC's 6 bits per channel.
           The session's COLORFGBG is 12;8 (base0 on base03: the nearest of
           the 16 to #102030), and the log names the bad key.
"""

import os
import time

CARDS = ("cirrus", "bochs")
CHECKS = ["palette"]

CONF = b"color2=#123456\ncolor5=#12345\ncolor6=#2AA199\n"
CONF_PATH = "/tmp/palette.conf"
SCRIPT_PATH = "/tmp/palette-session.sh"
READY = "/tmp/palette.ready"

# (what, SGR, expected colour) for cells 0, 2, 4, ... of row 1
CELLS = [
    ("default background", "0", 0x102030),
    ("SGR 41 (red)", "41", 0xdc322f),
    ("SGR 42 (color2= from the file)", "42", 0x123456),
    ("SGR 46 (color6= from the file)", "46", 0x2aa199),
    ("SGR 44 (blue)", "44", 0x268bd2),
    ("SGR 100 (base03)", "100", 0x002b36),
    ("reverse video (default foreground)", "7", 0x839496),
    ("SGR 48;5;196 (cube red)", "48;5;196", 0xff0000),
    ("SGR 48;5;16 (cube black)", "48;5;16", 0x000000),
]
# At 8 bpp cube 16's colour map entry holds the default background.
CUBE_BLACK_8BPP = 0x080808


def guest_elves(consoled):
    """fbcmap from the build tree (vmtest's extra_elves)."""
    path = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(consoled)), "..",
                                         "tests", "vm", "fbcmap"))
    return {"/usr/bin/fbcmap": path} if os.path.exists(path) else {}


def dac(v):
    """An 8-bit channel through the VGA DAC's 6 bits, as QEMU scans it out."""
    v >>= 2
    return (v << 2) | ((v & 1) << 1) | (v & 1)


class PaletteChecks:
    def __init__(self, runner, load_font, font):
        self.r = runner
        self.vm = runner.vm
        self.font = font
        self.cell_w = load_font(font).width
        self.cell_h = load_font(font).height
        self.checks = {"palette": self.check_palette}

    def points(self):
        """(what, x, y, colour): the middle of every other cell of row 1, and
        a pixel of the right margin (if any) and of row 3's last cell."""
        pts = [(what, (2 * i) * self.cell_w + self.cell_w // 2, self.cell_h + self.cell_h // 2,
                CUBE_BLACK_8BPP if sgr == "48;5;16" and self.r.vm_bpp == 8 else colour)
               for i, (what, sgr, colour) in enumerate(CELLS)]
        xres, yres = self.r.vm_xres, self.r.vm_yres
        cols = xres // self.cell_w
        pts.append(("the last cell of row 3", (cols - 1) * self.cell_w + 1, 3 * self.cell_h + 1,
                    0x102030))
        if xres % self.cell_w:
            pts.append(("the right margin", xres - 1, 5, 0x102030))
        if yres % self.cell_h:
            pts.append(("the bottom margin", 3, yres - 1, 0x102030))
        return pts

    def read(self, pts):
        out = self.r.sh("fbcmap /dev/fb0 " + " ".join("%d,%d" % (x, y) for _, x, y, _ in pts))
        return [line.split() for line in out.splitlines() if line.strip()]

    def check_palette(self):
        if self.vm.run("test -x /usr/bin/fbcmap")[1] != 0:
            self.r.fail("no fbcmap in the guest (build tests/vm/fbcmap)")
        cells = "".join("\033[%sm  \033[0m" % sgr for _, sgr, _ in CELLS)
        script = ("printf '\\033[?25l\\033[H\\033[2Jpalette\\n%s\\n'\n"
                  "printf '%%s' \"$COLORFGBG\" >/tmp/palette.fgbg\n"
                  ": >%s\nexec sleep 100000\n" % (cells.replace("\033", "\\033"), READY))
        self.r.put_file(CONF_PATH, CONF)
        self.r.put_file(SCRIPT_PATH, script.encode())
        self.r.sh("rm -f %s /tmp/palette.fgbg" % READY)
        self.r.start_consoled(self.font, "/bin/sh %s" % SCRIPT_PATH,
                              extra="--config=%s --palette=solarized --background=#102030"
                              % CONF_PATH)
        deadline = time.monotonic() + 30
        while self.vm.run("test -e %s" % READY)[1] != 0:
            if time.monotonic() > deadline:
                self.r.fail("the session did not start; log:\n%s" % self.r.consoled_log())
            time.sleep(0.3)

        pts = self.points()
        bpp = self.r.vm_bpp
        want = ["#%06x" % c for _, _, _, c in pts]
        deadline = time.monotonic() + 20
        while True:
            got = self.read(pts)
            if [g[2] for g in got] == want or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        wrong = ["%s at %d,%d: %s (%s), expected %s" % (what, x, y, g[2], g[1], w)
                 for (what, x, y, _), g, w in zip(pts, got, want) if g[2] != w]
        if bpp == 8 and got[0][1] != "pixel=16":
            wrong.append("the default background is %s, expected cube 16's slot (pixel=16)"
                         % got[0][1])

        # what the card scans out
        img = self.r.stable_grab()
        for what, x, y, c in pts:
            rgb = ((c >> 16) & 0xff, (c >> 8) & 0xff, c & 0xff)
            if bpp == 8:
                rgb = tuple(dac(v) for v in rgb)
            if img.pixel(x, y) != rgb:
                wrong.append("screendump: %s at %d,%d is #%02x%02x%02x, expected #%02x%02x%02x"
                             % ((what, x, y) + img.pixel(x, y) + rgb))

        fgbg = self.r.sh("cat /tmp/palette.fgbg").strip()
        if fgbg != "12;8":
            wrong.append("the session's COLORFGBG is %r, expected '12;8'" % fgbg)
        log = self.r.consoled_log()
        if "palette.conf:2: color5: invalid value '#12345': expected #rrggbb" not in log:
            wrong.append("the log does not name the bad color5= line")
        if wrong:
            path = self.vm.save_png(img, "%s-%d-palette.png" % (self.r.card, self.r.n))
            self.r.fail("%d wrong at %d bpp:\n%s\n(picture: %s; log:\n%s)"
                        % (len(wrong), bpp, "\n".join(wrong), path, log))
        print("# palette: %d points exact at %d bpp: %s" % (len(pts), bpp, " ".join(want)),
              flush=True)
        self.r.stop_consoled()
