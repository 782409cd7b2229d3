#!/usr/bin/python3
"""Sixel images on the glass, run by vmtest.py: libsixel is the oracle.

On the host, before the boot, three pictures are made (a gradient, sharp
edges of 7-pixel squares and 1-pixel lines, a smoothed noise like a photo),
written as PPM and encoded as sixel streams by img2sixel (libsixel-bin:
gradient, edges) and chafa --format sixel (noise); the initramfs carries the
streams (/sixel). Each stream is decoded on the host by libsixel's
sixel2png: those pixels are what consoled must show. Without img2sixel,
chafa or sixel2png on the host the checks fail.

  sixel        (bochs, 32 bpp; cirrus, 8 bpp) The streams are written to
               the session's terminal (its pty), each after a cursor
               position (row 3, columns 5, 33 and 57): each picture's
               rectangle at its cell must equal the oracle pixel for pixel
               (32 bpp: exact; 8 bpp: each colour mapped to the palette entry
               consoled(8) documents, the nearest of the 256 by squared RGB
               distance, ties to the cube and grey ramp, then through the
               VGA DAC's 6 bits as QEMU scans it out). On bochs also: after
               100 lines the pictures are in the scrollback, and
               Shift+PageUp brings them back (found at any text row) equal;
               text written across the gradient shows the font's glyphs in
               those cells and the picture in the rest; a region scroll
               (DECSTBM, SD 3) moves them three rows down, equal; a VT switch
               away and back draws them again, equal.
  sixel-rotate (bochs) consoled --rotate=1: the same pictures, read from the
               glass turned back to the logical screen, equal.
  sixel-flood  (bochs) a 50 MB sixel stream (one img2sixel noise picture
               repeated) written to the session's terminal: while it flows,
               a typed command runs (the keyboard is live); with
               --image-memory=8 consoled's VmHWM grows by at most 20 MiB
               (FLOOD_HWM_MIB: the budget, the decoder's working set, the
               tile cache and the heap's slack; measured +15 MiB, and
               +244 MiB when each drawn tile leaked); after it a typed echo
               is answered. It takes 33-94 s: the pty path alone moves
               about 0.7-1.5 MB/s under TCG (73 s with --image-memory=0,
               which drops the sixel data, on a loaded host).
"""

import os
import random
import shutil
import subprocess
import time

import screen

CARDS = ("bochs", "cirrus")
CHECKS = {"bochs": ["sixel", "sixel-rotate", "sixel-flood"], "cirrus": ["sixel"]}

FONT = "Lat15-Fixed16.psf.gz"
CELL_W, CELL_H = 8, 16
ROW = 2  # the pictures' text row (0-based)
# (name, encoder, column (0-based))
PICTURES = [("gradient", "img2sixel", 4), ("edges", "img2sixel", 32), ("noise", "chafa", 56)]
FLOOD_BYTES = 50 * 1000 * 1000
FLOOD_BUDGET_MIB = 8  # --image-memory=
FLOOD_HWM_MIB = 20  # --image-memory=8, the decoder's working set, the tile cache, the heap
GUEST_DIR = "/sixel"
TEXT = "SIXEL TEXT"  # written across the gradient at row ROW + 2, column 8
TEXT_ROW, TEXT_COL = ROW + 2, 8
FG, BG = (0xaa, 0xaa, 0xaa), (0, 0, 0)  # the default colours of --palette=linux

# xterm's colour cube levels and grey ramp (palette.c)
CUBE = (0, 95, 135, 175, 215, 255)


def note(msg):
    print("# " + msg, flush=True)


def make_ppm(path, w, h, fn):
    data = bytearray()
    for y in range(h):
        for x in range(w):
            data += bytes(fn(x, y))
    with open(path, "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (w, h) + bytes(data))


def noise_fn(w, h, seed):
    """Smoothed random values over a gradient: a photo's texture."""
    rnd = random.Random(seed)
    gw, gh = w // 8 + 2, h // 8 + 2
    grid = [[tuple(rnd.randrange(256) for _ in range(3)) for _ in range(gw)] for _ in range(gh)]

    def fn(x, y):
        gx, gy = x / 8, y / 8
        ix, iy = int(gx), int(gy)
        fx, fy = gx - ix, gy - iy
        out = []
        for c in range(3):
            a = grid[iy][ix][c] * (1 - fx) + grid[iy][ix + 1][c] * fx
            b = grid[iy + 1][ix][c] * (1 - fx) + grid[iy + 1][ix + 1][c] * fx
            v = a * (1 - fy) + b * fy + rnd.randrange(-24, 25)
            out.append(max(0, min(255, int(v))))
        return out
    return fn


def gradient_fn(x, y):
    return (x * 255 // 191, y * 255 // 119, 255 - x * 255 // 382)


def edges_fn(x, y):
    colours = ((255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255), (0, 0, 0), (255, 255, 0))
    if x % 13 == 0 or y % 11 == 0:
        return (255, 0, 255)
    return colours[(x // 7 + y // 7 * 2) % len(colours)]


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


class Pictures:
    """The streams and their oracle pictures, made on the host."""

    def __init__(self, out_dir):
        self.dir = os.path.join(out_dir, "sixel")
        self.error = None
        self.streams, self.oracle = {}, {}
        missing = [t for t in ("img2sixel", "chafa", "sixel2png") if not shutil.which(t)]
        if missing:
            self.error = ("%s missing on the host (tests/deps.sh: libsixel-bin, chafa)"
                          % ", ".join(missing))
            return
        os.makedirs(self.dir, exist_ok=True)
        specs = {"gradient": (192, 120, gradient_fn), "edges": (160, 96, edges_fn),
                 "noise": (128, 96, noise_fn(128, 96, 33)), "flood": (480, 240, noise_fn(480, 240, 7))}
        try:
            for name, (w, h, fn) in specs.items():
                ppm = os.path.join(self.dir, name + ".ppm")
                make_ppm(ppm, w, h, fn)
                six = os.path.join(self.dir, name + ".six")
                if name == "noise":
                    # chafa sizes in cells of its idea of a sixel cell
                    # (8x8 pixels): 16x12 of them is 128x96
                    out = run(["chafa", "--format", "sixel", "--size", "16x12", "--stretch",
                               "--animate", "off", ppm]).stdout
                else:
                    out = run(["img2sixel", ppm]).stdout
                with open(six, "wb") as f:
                    f.write(out)
                self.streams[name] = out
                if name != "flood":
                    png = os.path.join(self.dir, name + ".png")
                    run(["sixel2png", "-i", six, "-o", png])
                    self.oracle[name] = screen.read_png(png)
        except (subprocess.CalledProcessError, ValueError, OSError) as e:
            self.error = "making the sixel pictures failed: %s %s" % (
                e, getattr(e, "stderr", b"").decode(errors="replace"))

    def guest_files(self):
        return {GUEST_DIR + "/" + n + ".six": d for n, d in self.streams.items()}


def row_diff(got, want, y, first, keep=4):
    """Pixels that differ between two RGB rows of line y; the first `keep`
    of all rows are described in `first`."""
    if got == want:
        return 0
    count = 0
    for x in range(len(want) // 3):
        if got[x * 3:x * 3 + 3] != want[x * 3:x * 3 + 3]:
            count += 1
            if len(first) < keep:
                first.append("%d,%d: #%s, expected #%s" % (
                    x, y, got[x * 3:x * 3 + 3].hex(), want[x * 3:x * 3 + 3].hex()))
    return count


def cube_palette():
    pal = list(screen.LINUX_PALETTE)
    for i in range(216):
        pal.append((CUBE[i // 36], CUBE[(i // 6) % 6], CUBE[i % 6]))
    for i in range(24):
        pal.append((8 + 10 * i,) * 3)
    return pal


def dac(v):
    """An 8-bit channel through the VGA DAC's 6 bits, as QEMU scans it out."""
    v >>= 2
    return (v << 2) | ((v & 1) << 1) | (v & 1)


class Map8:
    """consoled's 8 bpp mapping (consoled(8), IMAGES): the nearest of the 256
    palette entries by squared RGB distance; on a tie the first entry of the
    cube and ramp, else the last of the 16 (palette_nearest())."""

    def __init__(self):
        self.pal = cube_palette()
        self.memo = {}

    def __call__(self, rgb):
        if rgb not in self.memo:
            dists = [sum((a - b) ** 2 for a, b in zip(p, rgb)) for p in self.pal]
            best = min(dists)
            idx = [i for i, d in enumerate(dists) if d == best]
            pick = next((i for i in idx if i >= 16), idx[-1])
            self.memo[rgb] = tuple(dac(v) for v in self.pal[pick])
        return self.memo[rgb]


class SixelChecks:
    def __init__(self, runner, pictures):
        self.r = runner
        self.vm = runner.vm
        self.pics = pictures
        self.font = screen.load_font("/usr/share/consolefonts/" + FONT)
        self.checks = {"sixel": self.check_sixel, "sixel-rotate": self.check_rotate,
                       "sixel-flood": self.check_flood}

    # -- helpers --

    def need(self):
        if self.pics.error:
            self.r.fail(self.pics.error)

    def pty(self):
        return self.r.sh("readlink /proc/%s/fd/0" % self.r.session_pid()).strip()

    def write(self, pts, esc, stream=None):
        """printf's escapes, then (optionally) a stream, to the session's terminal."""
        cmd = "printf '%s' >%s" % (esc, pts)
        if stream:
            cmd += "; cat %s/%s.six >%s" % (GUEST_DIR, stream, pts)
        self.r.sh(cmd)

    def show(self, pts, row=ROW):
        """Clears the screen and draws the three pictures at row `row`."""
        self.write(pts, "\\033[?25l\\033[H\\033[2J")
        for name, _, col in PICTURES:
            self.write(pts, "\\033[%d;%dH" % (row + 1, col + 1), name)

    def expected_row(self, name, y, mapping, text_cells):
        """Line y of picture `name` as the screen must show it (RGB bytes)."""
        pic = self.pics.oracle[name]
        row = pic.data[y * pic.width * 3:(y + 1) * pic.width * 3]
        if mapping:
            row = b"".join(bytes(mapping(tuple(row[i:i + 3]))) for i in range(0, len(row), 3))
        if text_cells:
            row = bytearray(row)
            for (cy, cx), ch in text_cells.items():
                if not cy * CELL_H <= y < (cy + 1) * CELL_H:
                    continue
                bits = self.font.bits(self.font.glyph_for(ch))
                for gx in range(CELL_W):
                    x = cx * CELL_W + gx
                    if x < pic.width:
                        on = bits[(y - cy * CELL_H) * CELL_W + gx]
                        row[x * 3:x * 3 + 3] = bytes(FG if on else BG)
            row = bytes(row)
        return row

    def diff(self, img, name, x0, y0, mapping=None, text_cells=None, turned=False):
        """Pixels of picture `name` at x0, y0 (logical) that differ: (count,
        first few)."""
        pic = self.pics.oracle[name]
        count, first = 0, []
        for y in range(pic.height):
            want = self.expected_row(name, y, mapping, text_cells)
            if turned:
                # --rotate=1: logical x, y shows at glass xres - 1 - y, x
                got = b"".join(bytes(img.pixel(img.width - 1 - (y0 + y), x0 + x))
                               for x in range(pic.width))
            else:
                i = ((y0 + y) * img.width + x0) * 3
                got = img.data[i:i + pic.width * 3]
            count += row_diff(got, want, y, first)
        return count, first

    def shown_at(self, img, row):
        """Whether every picture's first and last line are at text row `row`."""
        for name, _, col in PICTURES:
            pic = self.pics.oracle[name]
            for y in (0, pic.height - 1):
                i = ((row * CELL_H + y) * img.width + col * CELL_W) * 3
                if img.data[i:i + pic.width * 3] != self.expected_row(name, y, None, None):
                    return False
        return True

    def differences(self, img, row, mapping=None, text=False, turned=False):
        out = []
        for name, _, col in PICTURES:
            cells = None
            if text and name == "gradient":
                cells = {(TEXT_ROW - ROW, TEXT_COL - col + i): ch for i, ch in enumerate(TEXT)}
            n, first = self.diff(img, name, col * CELL_W, row * CELL_H, mapping, cells, turned)
            if n:
                out.append("%s: %d pixels differ (%s)" % (name, n, "; ".join(first)))
        return out

    def wait_pictures(self, what, row=ROW, mapping=None, text=False, turned=False, timeout=20):
        deadline = time.monotonic() + timeout
        while True:
            img = self.vm.grab()
            bad = self.differences(img, row, mapping, text, turned)
            if not bad:
                return img
            if time.monotonic() > deadline:
                path = self.vm.save_png(img, "%s-%d-sixel.png" % (self.r.card, self.r.n))
                self.r.fail("%s:\n%s\n(picture: %s, oracle: %s)"
                            % (what, "\n".join(bad), path, self.pics.dir))
            time.sleep(0.3)

    # -- checks --

    def check_sixel(self):
        r = self.r
        self.need()
        r.start_shell(FONT)
        pts = self.pty()
        bpp = r.vm_bpp
        mapping = Map8() if bpp == 8 else None
        t0 = time.monotonic()
        self.show(pts)
        img = self.wait_pictures("the pictures as drawn (%d bpp)" % bpp, mapping=mapping)
        note("sixel: 3 pictures equal to libsixel's at %d bpp (%.1f s; picture: %s)"
             % (bpp, time.monotonic() - t0, self.vm.save_png(img, "%s-sixel.png" % r.card)))
        if bpp == 8:
            r.stop_consoled()
            return

        # 100 lines: the pictures go into the scrollback; Shift+PageUp
        # pages back until they show again (at whatever text row)
        t0 = time.monotonic()
        rows = r.vm_yres // CELL_H
        self.r.sh("printf '\\033[%d;1H' >%s; seq 1 100 >%s" % (rows, pts, pts))
        r.wait_text(FONT, lambda s: s.lines[-2].strip() == "100", "the 100 lines did not show")
        found, presses = None, 0
        while found is None and presses < 8:
            self.vm.send_keys(["shift", "pgup"])
            presses += 1
            img = r.stable_grab(settle=0.3)
            for k in range(rows - 7):
                if self.shown_at(img, k) and not self.differences(img, k):
                    found = k
                    break
        if found is None:
            path = self.vm.save_png(img, "%s-%d-sixel-scrollback.png" % (r.card, r.n))
            r.fail("after 100 lines, %d Shift+PageUp never showed the pictures at a text"
                   " row (picture: %s)" % (presses, path))
        for _ in range(presses):
            self.vm.send_keys(["shift", "pgdn"])
        r.wait_text(FONT, lambda s: s.lines[-2].strip() == "100",
                    "Shift+PageDown did not come back to the 100 lines")
        note("sixel: scrolled back %d pages: the pictures at row %d (%.1f s)"
             % (presses, found, time.monotonic() - t0))

        # text across the gradient
        t0 = time.monotonic()
        self.show(pts)
        self.write(pts, "\\033[%d;%dH%s" % (TEXT_ROW + 1, TEXT_COL + 1, TEXT))
        self.wait_pictures("text written across the gradient", text=True)
        note("sixel: text across the picture (%.1f s)" % (time.monotonic() - t0))

        # a region scroll: DECSTBM rows 2-40, SD 3
        t0 = time.monotonic()
        self.show(pts)
        self.wait_pictures("the pictures before the region scroll")
        self.write(pts, "\\033[2;40r\\033[3T\\033[r")
        img = self.wait_pictures("the pictures after a region scroll (DECSTBM 2-40, SD 3)",
                                 row=ROW + 3)
        note("sixel: region scroll (%.1f s)" % (time.monotonic() - t0))

        # a VT switch away and back: everything drawn again
        t0 = time.monotonic()
        r.sh("chvt 2")
        deadline = time.monotonic() + 10
        while self.shown_at(self.vm.grab(), ROW + 3):
            if time.monotonic() > deadline:
                r.fail("tty2 still shows the pictures after chvt 2")
            time.sleep(0.3)
        r.sh("chvt 1")
        self.wait_pictures("the pictures after a VT switch away and back", row=ROW + 3)
        note("sixel: VT switch (%.1f s)" % (time.monotonic() - t0))
        r.stop_consoled()

    def check_rotate(self):
        r = self.r
        self.need()
        r.start_consoled(FONT, "/bin/sh -c 'exec sleep 100000'", extra="--rotate=1")
        r.wait_log("/tmp/consoled.log", "turned 90 degrees", "consoled did not turn the screen")
        pts = self.pty()
        t0 = time.monotonic()
        self.show(pts)
        self.wait_pictures("the pictures turned 90 degrees (--rotate=1)", turned=True)
        note("sixel-rotate: 3 pictures equal, turned (%.1f s)" % (time.monotonic() - t0))
        r.stop_consoled()

    def check_flood(self):
        r = self.r
        self.need()
        size = len(self.pics.streams["flood"])
        n = (FLOOD_BYTES + size - 1) // size
        script = ("i=0; while [ $i -lt %d ]; do cat %s/flood.six; i=$((i+1)); done >$1\n"
                  ": >/tmp/sixel-flood.done\n" % (n, GUEST_DIR))
        r.put_file("/tmp/sixel-flood.sh", script.encode())
        r.sh("rm -f /tmp/sixel-flood.done /tmp/sixel-alive")
        r.start_shell(FONT, extra="--image-memory=%d" % FLOOD_BUDGET_MIB)
        pid = r.consoled_pid()
        pts = self.pty()
        idle = int(r.sh("grep VmHWM /proc/%s/status" % pid).split()[1])
        t0 = time.monotonic()
        r.sh("(sh /tmp/sixel-flood.sh %s &) >/dev/null 2>&1" % pts)
        time.sleep(1)
        self.vm.send_text("echo alive >/tmp/sixel-alive\n")
        answered = None
        while time.monotonic() - t0 < 120:
            alive = self.vm.run("test -e /tmp/sixel-alive")[1] == 0
            done = self.vm.run("test -e /tmp/sixel-flood.done")[1] == 0
            if alive and answered is None:
                answered = time.monotonic() - t0
                if done:
                    r.fail("the typed command ran only after the flood (%d bytes, %.1f s)"
                           % (n * size, answered))
            if done:
                break
            time.sleep(0.3)
        else:
            r.fail("the %d MB flood did not end within 120 s" % (n * size // 1000000))
        flood_s = time.monotonic() - t0
        if answered is None:
            r.fail("a command typed during the flood never ran")
        hwm = int(r.sh("grep VmHWM /proc/%s/status" % pid).split()[1])
        note("sixel-flood: %d bytes (%d pictures of %d bytes) in %.1f s; a typed command ran"
             " %.1f s after the start; VmHWM idle %d KiB, after %d KiB"
             % (n * size, n, size, flood_s, answered, idle, hwm))
        if hwm - idle > FLOOD_HWM_MIB * 1024:
            r.fail("consoled's VmHWM grew from %d KiB to %d KiB in the flood, more than %d MiB"
                   % (idle, hwm, FLOOD_HWM_MIB))
        self.write(pts, "\\033[H\\033[2J")
        self.vm.send_text("\necho sixel-done\n")
        r.wait_output(FONT, "echo sixel-done", "sixel-done", "after the flood a typed echo was"
                      " not answered")
        r.stop_consoled()
