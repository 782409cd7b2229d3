#!/usr/bin/python3
"""Rotation, run by vmtest.py in the cirrus guest (8 bpp,
the cirrus blitter, pan) and the bochs guest (32 bpp, DRM fbdev emulation:
no blitter, no pan).

  rotate-N  (N = 1, 2, 3: 90 degrees clockwise, upside down, counter-
            clockwise) The oracle of fbcon turned: `echo N >
            /sys/class/graphics/fbcon/rotate_all`, then fbcon draws the
            oracle text with the 11x22 Terminus font (not 8 wide, and the
            grid leaves margins on both sides in every rotation of 640x480
            and 1024x768) and, for the
            second picture, the end of a scroll test (its last 100 lines and
            a region part: DECSTBM with IND and RI, IL and DL). Then for each
            scroll mode the rotation allows on the card (ROTATE_MODES) one
            consoled --rotate=N (or degrees) --scroll-mode=M: its oracle
            text must equal fbcon's picture pixel for pixel; then 250 paced
            lines (more than the pan window holds: it goes back to its other
            end, upside down) and the region part, and the screen must equal
            fbcon's second picture; again after a VT switch away and back
            (a full redraw). The log must name the full-screen strategy
            (forced pan or wrap sideways: the warning and auto's choice),
            the statistics must show that strategy moved rows, with no VRAM
            read; after SIGTERM the mode is as before. One run of each card
            starts at another rotation and gets there with Ctrl+Logo+Right
            (the rebuild path: grid, scroller, pty size). On bochs, in
            auto, the usb-tablet is put on a pixel of the glass near a
            corner: the pointer (the cell under it inverted) must show on
            exactly the glass's rectangle of the turned grid's cell that
            holds that pixel, and leave no trace once it hides.
"""

import re
import time

import screen

CARDS = ("cirrus", "bochs")
CHECKS = ["rotate-1", "rotate-2", "rotate-3"]
FONT = "Lat15-Terminus22x11.psf.gz"
SCROLL_LINES = 250

# rotation -> [(--scroll-mode, the full-screen strategy it must end with,
# the warning a forced mode that cannot run logs)]
_SIDEWAYS = "the screen is turned sideways"
ROTATE_MODES = {
    "cirrus": {
        1: [("auto", "copy", None), ("copy", "copy", None), ("shadow", "shadow", None),
            ("redraw", "redraw", None), ("pan", "copy", "--scroll-mode=pan: " + _SIDEWAYS)],
        2: [("auto", "pan", None), ("pan", "pan", None), ("copy", "copy", None),
            ("shadow", "shadow", None), ("redraw", "redraw", None)],
        3: [("auto", "copy", None), ("copy", "copy", None), ("shadow", "shadow", None),
            ("redraw", "redraw", None), ("wrap", "copy", "--scroll-mode=wrap: " + _SIDEWAYS)],
    },
    # DRM fbdev emulation: every mode draws in a RAM copy flushed with
    # pwrite() (--fb-flush=auto: write), and auto scrolls by shadow there
    "bochs": {
        1: [("auto", "shadow", None), ("redraw", "redraw", None)],
        2: [("auto", "shadow", None), ("redraw", "redraw", None)],
        3: [("auto", "shadow", None), ("redraw", "redraw", None)],
    },
}
# (rotation, mode) whose consoled starts at the rotation given and is turned
# there with Ctrl+Logo+Right presses
TURN_BY_KEYS = {(3, "auto"): (1, 2)}
# (card, mode) whose runs put the usb-tablet on the glass
POINTER_RUNS = {("bochs", "auto")}
TABLET_NAME = "QEMU QEMU USB Tablet"
# --rotate= in degrees for these, fbcon's number for the others
DEGREES = {(2, "shadow"), (3, "copy")}

ROTATE_ALL = "/sys/class/graphics/fbcon/rotate_all"
TEXT = "/tmp/rotate-oracle"
SCROLL = "/tmp/rotate-scroll"
GO = "/tmp/rotate-go"
READY = "/tmp/rotate-ready"
SIZE = "/tmp/rotate-size"
CONSOLED_LOG = "/tmp/consoled.log"  # vmtest.CONSOLED_LOG


class RotateChecks:
    def __init__(self, runner, oracle_text, load_font, scroll_modes_of_card):
        self.r = runner
        self.vm = runner.vm
        self.oracle_text = oracle_text
        self.load_font = load_font
        self.modes = ROTATE_MODES[runner.card]
        self.has_copy = "copy" in scroll_modes_of_card
        if not self.has_copy:
            # no cirrus plugin built: no copy, and what falls back to it redraws
            self.modes = {rot: [(m, "redraw" if f == "copy" else f, w) for m, f, w in ms
                                if m != "copy"] for rot, ms in self.modes.items()}
        self.checks = {"rotate-%d" % rot: (lambda rot=rot: self.check(rot)) for rot in self.modes}
        self.prepared = False

    def prepare(self):
        """The session's scripts (once per boot)."""
        if self.prepared:
            return
        font = self.load_font(FONT)
        self.r.make_scroll_text()
        base = self.r.SCROLL_SCRIPT
        self.r.sh("head -n %d %s > %s" % (SCROLL_LINES, base, SCROLL))
        paced = ("i=0\nwhile IFS= read -r l; do printf '%%s\\n' \"$l\"; i=$((i + 1));"
                 " [ $((i %% 8)) = 0 ] && sleep 0.02; done < %s\ncat %s.region\n"
                 % (SCROLL, base))
        self.r.put_file(SCROLL + ".sh", paced.encode())
        self.r.put_file(SCROLL + ".ref", ("\033[0m\033[H\033[2J").encode())
        # the oracle text for the sideways grid and for the upright one
        for sideways in (False, True):
            width = self.r.vm_yres if sideways else self.r.vm_xres
            text, _ = self.oracle_text(FONT, width // font.width)
            self.r.put_file("%s-%d" % (TEXT, sideways), text)
        self.prepared = True

    def fbcon_pictures(self, rot):
        """fbcon's pictures of the oracle text and of the scroll test's end,
        turned by rot."""
        r = self.r
        text = "%s-%d" % (TEXT, rot in (1, 3))
        r.sh("echo %d > %s" % (rot, ROTATE_ALL))
        r.sh("setfont /fonts/%s -C /dev/tty1" % FONT)
        r.sh("cat %s > /dev/tty1" % text)
        oracle = r.stable_grab()
        r.sh("(cat %s.ref; tail -n 100 %s; cat %s.region) > /dev/tty1"
             % (SCROLL, SCROLL, r.SCROLL_SCRIPT), timeout=120)
        scrolled = r.stable_grab()
        if r.sh("cat /sys/class/graphics/fbcon/rotate").strip() != str(rot):
            r.fail("fbcon did not turn tty1 to rotation %d" % rot)
        return text, oracle, scrolled

    def check(self, rot):
        r = self.r
        self.prepare()
        before = r.fb_state()
        try:
            text, oracle, scrolled = self.fbcon_pictures(rot)
        finally:
            r.vm.run("echo 0 > %s" % ROTATE_ALL)
        for mode, full, warning in self.modes[rot]:
            t0 = time.monotonic()
            self.run_consoled(rot, mode, full, warning, text, oracle, scrolled, before)
            print("# rotate=%d scroll-mode=%s (%s): %.1fs" % (rot, mode, full,
                                                               time.monotonic() - t0), flush=True)

    def run_consoled(self, rot, mode, full, warning, text, oracle, scrolled, before):
        r = self.r
        start, presses = TURN_BY_KEYS.get((rot, mode), (rot, 0))
        arg = str(start * 90) if (rot, mode) in DEGREES else str(start)
        what = "--rotate=%s --scroll-mode=%s%s" % (
            arg, mode, " and %d Ctrl+Logo+Right" % presses if presses else "")
        r.sh("rm -f %s %s %s; printf '\\033[H\\033[2J' > /dev/tty1" % (GO, READY, SIZE))
        # the session draws once the screen is turned (the keys' relayouts
        # keep what fits, not what a narrower grid wrapped), and says its size
        session = ("/bin/sh -c 'while [ ! -e %s ]; do sleep 0.1; done; stty size > %s; cat %s;"
                   " while [ ! -e %s ]; do sleep 0.1; done; sh %s.sh; exec sleep 100000'"
                   % (READY, SIZE, text, GO, SCROLL))
        r.start_consoled(FONT, session, extra="--rotate=%s --scroll-mode=%s --no-calibrate"
                         " --stats" % (arg, mode))
        if presses:
            # keys reach consoled once it has the keyboard and the VT
            r.wait_log(CONSOLED_LOG, "Keyboard /dev/input", "consoled opened no keyboard")
            r.wait_log(CONSOLED_LOG, "Scrolling: mode", "consoled did not set its screen up")
            for i in range(presses):
                self.vm.send_keys(["ctrl", "meta_l", "right"])
                r.wait_log(CONSOLED_LOG, "Screen turned %d degrees" % ((start + i + 1) * 90),
                           "Ctrl+Logo+Right did not turn the screen to %d degrees"
                           % ((start + i + 1) * 90))
        r.sh("touch %s" % READY)
        font = self.load_font(FONT)
        lw, lh = ((r.vm_yres, r.vm_xres) if rot in (1, 3) else (r.vm_xres, r.vm_yres))
        want = "%d %d" % (lh // font.height, lw // font.width)
        r.wait_log(SIZE, want, "%s: the session's window size is not %s" % (what, want))
        r.wait_equal(oracle, "%s: the oracle text differs from fbcon's turned %d degrees"
                     % (what, rot * 90), timeout=30)
        if (r.card, mode) in POINTER_RUNS:
            self.check_pointer(rot, oracle, what)
        r.sh("touch %s" % GO)
        r.wait_equal(scrolled, "%s: after %d lines and region scrolls the screen differs from"
                     " fbcon's" % (what, SCROLL_LINES), timeout=120)
        r.sh("chvt 2")
        r.sh("chvt 1")
        r.wait_equal(scrolled, "%s: after a VT switch away and back" % what)
        log = r.consoled_log()
        if warning and warning not in log:
            r.fail("%s: no warning %r; log:\n%s" % (what, warning, log))
        if ("full-screen scrolls by %s," % full) not in log:
            r.fail("%s does not scroll by %s; log:\n%s" % (what, full, log))
        r.sh("kill -TERM %s" % r.consoled_pid())
        if r.wait_consoled_exit() != 0:
            r.fail("%s: consoled did not exit 0 after SIGTERM" % what)
        log = r.consoled_log()
        stats = re.findall(r"stats: strategy=(\w+) frames=\d+ rows_scrolled=(\d+) "
                           r"vram_bytes_written=\d+ vram_bytes_read=(\d+) blits=(\d+) fills=\d+"
                           r" pans=(\d+)", log)
        moved = {s: (int(rows), int(blits), int(pans)) for s, rows, read, blits, pans in stats}
        if any(int(read) for _, _, read, _, _ in stats):
            r.fail("%s: VRAM was read: %r" % (what, stats))
        rows, blits, pans = moved.get(full, (0, 0, 0))
        if not rows or (full == "copy" and not blits) or (full == "pan" and not pans):
            r.fail("%s: the statistics show no rows moved by %s: %r" % (what, full, stats))
        if full == "pan" and self.has_copy and not blits:
            r.fail("%s: the pan window never went back to its other end (no blit): %r"
                   % (what, stats))
        print("# %s: %s" % (what, ", ".join("%s %d rows %d blits %d pans" % (s, *v)
                                            for s, v in moved.items())), flush=True)
        if r.fb_state() != before:
            r.fail("%s: mode after exit %r, before %r" % (what, r.fb_state(), before))

    def check_pointer(self, rot, oracle, what):
        """The tablet on a pixel of the glass: the inverted cell is the turned
        grid's cell under it, drawn where that cell shows."""
        r = self.r
        xres, yres = r.vm_xres, r.vm_yres
        # left of the middle, near the top of the glass: another corner of
        # the turned grid in every rotation
        self.vm.plug_tablet()
        try:
            r.wait_log(CONSOLED_LOG, "%s (absolute" % TABLET_NAME,
                       "consoled did not open the usb-tablet")
            time.sleep(0.5)
            deadline = time.monotonic() + 20
            for i in range(1000):
                # a pixel apart each time: the tablet reports every move,
                # so the pointer does not hide (3 s without events)
                px, py = xres // 3 + 5 + i % 2, yres // 5 + 3
                col, row, rect = self.pointer_cell(rot, px, py)
                self.vm.tablet_move(px, py, xres, yres)
                time.sleep(0.3)
                img = r.vm.grab()
                diff = screen.compare(oracle, img)
                # every pixel of the cell swaps colours: the difference is
                # the whole rectangle (bbox is inclusive)
                if diff and (diff.bbox[0], diff.bbox[1], diff.bbox[2] + 1 - diff.bbox[0],
                             diff.bbox[3] + 1 - diff.bbox[1]) == rect:
                    break
                if time.monotonic() > deadline:
                    r.fail("%s: the pointer on pixel %d,%d (cell %d,%d of the turned grid) is"
                           " not drawn on %r exactly: %s" % (what, px, py, col, row, rect,
                                                             diff and (diff.count, diff.bbox)),
                           oracle, img, tag="pointer")
            print("# %s: the pointer on %d,%d shows cell %d,%d at %r (%d pixels)"
                  % (what, px, py, col, row, rect, diff.count), flush=True)
        finally:
            self.vm.unplug_tablet()
        # hidden after 3 s without events: no trace
        r.wait_equal(oracle, "%s: the pointer left a trace" % what, timeout=20)

    def pointer_cell(self, rot, px, py):
        """The turned grid's cell under glass pixel px,py and the glass's
        rectangle (x, y, w, h) that shows it."""
        r = self.r
        font = self.load_font(FONT)
        fw, fh = font.width, font.height
        xres, yres = r.vm_xres, r.vm_yres
        if rot == 1:
            lx, ly = py, xres - 1 - px
        elif rot == 2:
            lx, ly = xres - 1 - px, yres - 1 - py
        else:
            lx, ly = yres - 1 - py, px
        lw, lh = (yres, xres) if rot in (1, 3) else (xres, yres)
        col, row = min(lx // fw, lw // fw - 1), min(ly // fh, lh // fh - 1)
        # fbcon's placement of that cell (fbcon_cw.c, fbcon_ud.c, fbcon_ccw.c)
        if rot == 1:
            rect = (xres - (row + 1) * fh, col * fw, fh, fw)
        elif rot == 2:
            rect = (xres - (col + 1) * fw, yres - (row + 1) * fh, fw, fh)
        else:
            rect = (row * fh, yres - (col + 1) * fw, fh, fw)
        return col, row, rect
