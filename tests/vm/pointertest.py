#!/usr/bin/python3
"""consoled's pointer checks, run by vmtest.py in the
bochs guest (32 bpp).  The pointer devices are QEMU's own: the PS/2 mouse
(psmouse in the guest, relative) and a usb-tablet plugged in by the check
(absolute), driven through QMP (vmlib.VM's pointer helpers).

  pointer-oracle   consoled shows fbcon's oracle picture; a usb-tablet is
                   plugged in while it runs (the hotplug monitor finds it)
                   and put on a cell with text: exactly that cell shows in
                   inverted colours; Shift alone leaves it, a letter (the
                   session does not echo) hides it well before the idle
                   timeout.
                   The PS/2 mouse then moves it by a number of cells
                   (relative): the cell under the new position is inverted;
                   it is still shown 1.5 s later and hidden by the 3 s
                   timeout.  After each hide the screen equals fbcon's
                   rendering again (no trace).
  pointer-events   what each device's motion, buttons and wheel become (the
                   --verbose log of the pointer callback's events): the
                   tablet's position is the injected pixel, the PS/2 mouse
                   moves it by the injected counts; left, middle and right
                   are buttons 1, 2 and 3, pressed then released; the
                   tablet's wheel (high resolution, 120ths) and the PS/2
                   wheel (notches) give exactly the notches turned, up > 0;
                   a click alone (no motion) shows the pointer again after
                   a key hid it.
  pointer-zoom     a TrueType font (DejaVu Sans Mono, 12 points at 96 dpi):
                   the tablet puts the pointer on a blank cell, inverted (a
                   cell of the foreground colour); after Ctrl+Plus (13
                   points) it is on the cell of the new grid under the same
                   pixel, and once it hid, the screen is the one it showed
                   with that cell put back.
  pointer-scroll   (bochs: redraw, shadow; cirrus: pan, copy with the plugin;
                   vfb: wrap) while 400 lines scroll under it, paced, the
                   pointer is kept shown and moved by the tablet; once it
                   hid, the screen equals fbcon's picture of the same text,
                   and the log says the strategy served the full-screen
                   scrolls.
  pointer-vt-away  with another VT in front, tablet motion, clicks, the wheel
                   and PS/2 motion and clicks never reach consoled (its debug
                   log counts no pointer event, the screen of the other VT
                   stays), and on the way back consoled's screen is as it
                   was, with no pointer; the next tablet motion shows it.
  pointer-syn-dropped
                   the tablet's left button pressed, consoled stopped
                   (SIGSTOP), the button released and 200 motions sent: the
                   kernel's queue for consoled overflows and the release is
                   lost (SYN_DROPPED). Continued, consoled reads the buttons
                   back and reports the release (a drag must not stick), and
                   no press comes with it.
  pointer-touch    devices QEMU does not have, made with uinput (uinput-ptr),
                   and --mouse-speed=2.5: a touchscreen (ABS_X 100..4195,
                   ABS_Y 50..2099, BTN_TOUCH) puts the pointer on the pixel
                   its range maps to, whatever the speed, and a touch is
                   button 1; a touchpad (10 units a mm) moves it by 8 pixels
                   a mm of finger motion times the speed, a touch alone
                   neither clicks nor jumps, its button clicks; the PS/2
                   mouse moves it by its counts times the speed.
  pointer-blank    --blank=2: once the screen blanked, a tablet motion wakes
                   it: fbcon's picture comes back with the pointer's cell
                   inverted.
  pointer-off      --mouse=no: consoled logs so, opens neither the tablet's
                   nor the PS/2 mouse's event node (its /proc/PID/fd), and
                   a tablet motion changes nothing on the screen.

Helpers S and R may use PointerChecks.wait_pointer_devices() (tablet plugged
and seen by consoled) and cell_center() for their own checks.
"""

import re
import time

import screen

CARDS = ("bochs",)
CHECKS = ["pointer-oracle", "pointer-events", "pointer-zoom", "pointer-scroll", "pointer-vt-away",
          "pointer-syn-dropped", "pointer-touch", "pointer-blank", "pointer-off"]
# pointer-scroll runs on these cards too, in the strategies they have
SCROLL_CARDS = ("bochs", "cirrus", "vfb")
SCROLL_MODES = {"bochs": ["redraw", "shadow"], "cirrus": ["pan", "copy"], "vfb": ["wrap"]}
SCROLL_TEXT = "/tmp/pointer-scroll.txt"

TABLET_NAME = "QEMU QEMU USB Tablet"
# The pointer hides this long after its last event (daemon/screen/screen.c).
HIDE_SECONDS = 3.0


class PointerChecks:
    def __init__(self, runner, oracle_text, load_font, font, scroll_modes=None):
        """scroll_modes: vmtest.scroll_modes() of the card (mode -> (warning,
        full-screen strategy))."""
        self.scroll_modes = scroll_modes or {}
        self.r = runner
        self.vm = runner.vm
        self.oracle_text = oracle_text
        self.load_font = load_font
        self.font = font
        self.checks = {
            "pointer-oracle": self.check_oracle,
            "pointer-events": self.check_events,
            "pointer-zoom": self.check_zoom,
            "pointer-scroll": self.check_scroll,
            "pointer-vt-away": self.check_vt_away,
            "pointer-syn-dropped": self.check_syn_dropped,
            "pointer-touch": self.check_touch,
            "pointer-blank": self.check_blank,
            "pointer-off": self.check_off,
        }

    # -- helpers --

    def cell_size(self):
        f = self.load_font(self.font)
        return f.width, f.height

    def cell_center(self, col, row):
        cw, ch = self.cell_size()
        return col * cw + cw // 2, row * ch + ch // 2

    def log(self):
        return self.r.consoled_log()

    def wait_log(self, pattern, what, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            log = self.log()
            m = re.search(pattern, log)
            if m:
                return m
            if time.monotonic() > deadline:
                self.r.fail("%s; consoled's log:\n%s" % (what, log))
            time.sleep(0.3)

    def wait_pointer_devices(self):
        """Plug the usb-tablet in (consoled running) and wait until consoled
        has opened it; the PS/2 mouse is there from the start. Returns the
        event nodes (tablet, ps2)."""
        self.vm.plug_tablet()
        tablet = self.wait_log(r"Pointer (/dev/input/event\d+): %s \(absolute" % TABLET_NAME,
                               "consoled did not pick up the plugged-in usb-tablet")
        ps2 = self.wait_log(r"Pointer (/dev/input/event\d+): \S*PS/2[^\n]*\(relative",
                            "consoled did not open the PS/2 mouse")
        # the guest's HID driver has talked to the tablet (QEMU routes
        # buttons to it from then on): give it a moment
        time.sleep(0.5)
        return tablet.group(1), ps2.group(1)

    def unplug_tablet(self):
        try:
            self.vm.unplug_tablet()
        except Exception:  # noqa: BLE001 -- gone already
            pass
        deadline = time.monotonic() + 20
        while "QEMU USB Tablet" in self.r.sh("cat /proc/bus/input/devices"):
            if time.monotonic() > deadline:
                self.r.fail("the usb-tablet did not go away")
            time.sleep(0.3)

    def guarded(self, fn):
        def run():
            try:
                fn()
            finally:
                self.unplug_tablet()
        return run

    def inverted_cell_problem(self, expected, actual, col, row, cell=None):
        """None if `actual` is `expected` with cell col,row (of cell=(w, h),
        by default the PSF font's) in swapped colours and nothing else
        changed; else what differs. A cell of a glyph (two colours in
        `expected`) must show each pixel in the other colour; a blank cell
        (one colour) must be one other colour all over (the foreground)."""
        cw, ch = cell or self.cell_size()
        x0, y0 = col * cw, row * ch
        exp_cell = expected.crop(x0, y0, cw, ch)
        colours = sorted(tuple(c) for c in exp_cell.colors())
        if len(colours) == 2:
            a, b = colours
            swap = {a: b, b: a}
        elif len(colours) == 1:
            fg = actual.pixel(x0, y0)
            if fg == colours[0]:
                return "blank cell %d,%d is not inverted (%r)" % (col, row, fg)
            swap = {colours[0]: fg}
        else:
            raise ValueError("cell %d,%d has %d colours in the reference, not a glyph's two"
                             % (col, row, len(colours)))
        for y in range(ch):
            for x in range(cw):
                want = swap[expected.pixel(x0 + x, y0 + y)]
                got = actual.pixel(x0 + x, y0 + y)
                if got != want:
                    return ("pixel %d,%d of cell %d,%d is %r, inverted it would be %r"
                            % (x, y, col, row, got, want))
        # the rest: the actual picture with the cell put back equals expected
        rest = bytearray(actual.data)
        for y in range(ch):
            i = ((y0 + y) * actual.width + x0) * 3
            rest[i:i + cw * 3] = expected.data[i:i + cw * 3]
        diff = screen.compare(expected, screen.Image(actual.width, actual.height, rest))
        if diff:
            return "%d pixels outside cell %d,%d differ in %r" % (diff.count, col, row, diff.bbox)
        return None

    def wait_inverted(self, expected, col, row, what, timeout=10, cell=None):
        deadline = time.monotonic() + timeout
        while True:
            img = self.vm.grab()
            problem = self.inverted_cell_problem(expected, img, col, row, cell)
            if problem is None:
                return img
            if time.monotonic() > deadline:
                self.r.fail("%s: %s" % (what, problem), expected, img, tag="pointer")
            time.sleep(0.2)

    def start_oracle(self, extra=""):
        """fbcon's oracle picture, then consoled showing the same text; returns
        the picture."""
        font = self.font
        cols = self.r.vm_xres // self.load_font(font).width
        text, _ = self.oracle_text(font, cols)
        path = self.r.fbcon_show(font, text)
        expected = self.r.stable_grab()
        self.r.sh("printf '\\033[H\\033[2J' > /dev/tty1")
        # no echo: a key typed to hide the pointer leaves the picture
        self.r.start_consoled(font, "/bin/sh -c 'stty -echo; cat %s; exec sleep 100000'" % path,
                              extra=extra)
        self.r.wait_equal(expected, "consoled differs from fbcon before the pointer")
        return expected

    def pointer_events_logged(self):
        return len(re.findall(r"Pointer (motion|button|wheel) at", self.log()))

    # -- checks --

    def check_oracle(self):
        # --verbose: the pointer events in the log tell when one has arrived
        expected = self.start_oracle(extra="--verbose")
        self.wait_pointer_devices()
        w, h = self.r.vm_xres, self.r.vm_yres

        # The tablet: absolute, on "n" of "consoled" in the first line.
        col, row = 3, 0
        x, y = self.cell_center(col, row)
        self.vm.tablet_move(x, y, w, h)
        self.wait_inverted(expected, col, row, "the tablet's pointer at cell %d,%d" % (col, row))
        # A modifier alone leaves it (Shift+click must show where it is)
        self.vm.send_keys(["shift"])
        time.sleep(0.5)
        img = self.vm.grab()
        if self.inverted_cell_problem(expected, img, col, row) is not None:
            self.r.fail("Shift alone hid the pointer", expected, img, tag="shift")
        # A key hides it, long before the idle timeout: a pixel's nudge
        # within the cell restarts that first (and has arrived: the USB
        # tablet's report may come after a PS/2 key sent later).
        n = len(self.events_since(0))
        self.vm.tablet_move(x + 1, y, w, h)
        t0 = time.monotonic()
        self.wait_events(n, [("motion", x + 1, y, "")], "the tablet's nudge")
        self.vm.send_keys(["x"])
        self.r.wait_equal(expected, "after a key hid the tablet's pointer", timeout=10)
        if time.monotonic() - t0 >= HIDE_SECONDS - 0.2:
            self.r.fail("the pointer went only after %.1f s: the idle timeout, not the key"
                        % (time.monotonic() - t0))

        # The PS/2 mouse: relative, from x+1,y by whole cells to "k" of
        # the alphabet line (row 9).
        cw, ch = self.cell_size()
        col2, row2 = 10, 9
        self.vm.mouse_move_rel((col2 - col) * cw, (row2 - row) * ch)
        t1 = time.monotonic()
        shown = self.wait_inverted(expected, col2, row2,
                                   "the PS/2 mouse's pointer at cell %d,%d" % (col2, row2))
        # still there before the timeout, gone after it
        time.sleep(max(0, t1 + 1.5 - time.monotonic()))
        img = self.vm.grab()
        if self.inverted_cell_problem(expected, img, col2, row2) is not None:
            self.r.fail("the pointer hid within 1.5 s without a key", shown, img, tag="early")
        self.r.wait_equal(expected, "after the idle timeout hid the PS/2 pointer", timeout=10)
        if time.monotonic() - t1 < HIDE_SECONDS - 0.5:
            self.r.fail("the pointer hid after %.1f s, before the timeout"
                        % (time.monotonic() - t1))
        self.r.stop_consoled()

    def events_since(self, n):
        """The pointer callback's events logged after the first n: a list of
        (kind, x, y, detail)."""
        found = re.findall(r"Pointer (motion|button|wheel) at (\d+),(\d+)(?:: ([^\n]*))?",
                           self.log())
        return [(k, int(x), int(y), d) for k, x, y, d in found[n:]]

    def wait_events(self, n, want, what, timeout=10):
        """Wait until the events after the first n are `want`; returns the new count."""
        deadline = time.monotonic() + timeout
        while True:
            got = self.events_since(n)
            if got == want:
                return n + len(got)
            if len(got) > len(want) or time.monotonic() > deadline:
                self.r.fail("%s: pointer events\n  %r\nexpected\n  %r" % (what, got, want))
            time.sleep(0.2)

    def wait_wheel(self, n, x, y, notches, what, timeout=10):
        """Wheel events at x,y after the first n adding up to `notches`, each
        one way."""
        deadline = time.monotonic() + timeout
        while True:
            got = self.events_since(n)
            total = sum(int(d) for k, _, _, d in got if k == "wheel")
            ok = all(k == "wheel" and (ex, ey) == (x, y) and (int(d) > 0) == (notches > 0)
                     for k, ex, ey, d in got)
            if not ok or abs(total) > abs(notches):
                self.r.fail("%s: pointer events %r, expected wheel notches adding up to %d "
                            "at %d,%d" % (what, got, notches, x, y))
            if total == notches:
                time.sleep(0.3)  # and nothing more comes
                if self.events_since(n) == got:
                    return n + len(got)
                continue
            if time.monotonic() > deadline:
                self.r.fail("%s: pointer events %r, expected wheel notches adding up to %d"
                            % (what, got, notches))
            time.sleep(0.2)

    def check_events(self):
        expected = self.start_oracle(extra="--verbose")
        tablet, ps2 = self.wait_pointer_devices()
        log = self.log()
        if not re.search(r"Pointer %s: [^\n]*Tablet \(absolute, high-resolution wheel\)"
                         % tablet, log):
            self.r.fail("the tablet is not logged with a high-resolution wheel:\n" + log)
        if not re.search(r"Pointer %s: [^\n]*PS/2[^\n]*\(relative\)" % ps2, log):
            self.r.fail("the PS/2 mouse is not logged as relative (without hi-res):\n" + log)
        w, h = self.r.vm_xres, self.r.vm_yres
        n = len(self.events_since(0))

        x, y = self.cell_center(3, 0)
        self.vm.tablet_move(x, y, w, h)
        n = self.wait_events(n, [("motion", x, y, "")], "tablet motion")
        for name, number in (("left", 1), ("middle", 2), ("right", 3)):
            self.vm.pointer_click(name, "tablet")
            n = self.wait_events(n, [("button", x, y, "%d pressed" % number),
                                     ("button", x, y, "%d released" % number)],
                                 "tablet %s click" % name)
        self.vm.pointer_wheel(2, "tablet")
        n = self.wait_wheel(n, x, y, 2, "tablet wheel up 2")
        self.vm.pointer_wheel(-3, "tablet")
        n = self.wait_wheel(n, x, y, -3, "tablet wheel down 3")

        dx, dy = 37, 45
        self.vm.mouse_move_rel(dx, dy)
        x, y = x + dx, y + dy
        deadline = time.monotonic() + 10
        while True:
            got = self.events_since(n)
            if got and got[-1][:3] == ("motion", x, y):
                break
            if (got and got[-1][0] != "motion") or time.monotonic() > deadline:
                self.r.fail("PS/2 motion by %d,%d: pointer events %r, expected motion ending "
                            "at %d,%d" % (dx, dy, got, x, y))
            time.sleep(0.2)
        n += len(got)
        for name, number in (("left", 1), ("middle", 2), ("right", 3)):
            self.vm.pointer_click(name, "ps2")
            n = self.wait_events(n, [("button", x, y, "%d pressed" % number),
                                     ("button", x, y, "%d released" % number)],
                                 "PS/2 %s click" % name)
        self.vm.pointer_wheel(1, "ps2")
        n = self.wait_wheel(n, x, y, 1, "PS/2 wheel up 1")
        self.vm.pointer_wheel(-2, "ps2")
        n = self.wait_wheel(n, x, y, -2, "PS/2 wheel down 2")

        # a key hides the pointer, a click alone shows it again
        cw, ch = self.cell_size()
        col, row = x // cw, y // ch
        self.wait_inverted(expected, col, row, "the pointer after the PS/2 wheel")
        self.vm.send_keys(["x"])
        self.r.wait_equal(expected, "after a key hid the pointer", timeout=10)
        self.vm.pointer_click("left", "tablet")
        self.wait_inverted(expected, col, row, "the pointer after a click without motion")
        self.r.stop_consoled()

    def check_zoom(self):
        import fonttest  # noqa: PLC0415 -- only this check needs it
        r = self.r
        script = ("printf '\\033[?25l\\033[H\\033[2J'\n"
                  # a full screen at both sizes: libtsm drops rows from
                  # the top when the grid gets shorter
                  + "".join("echo 'pointer zoom line %d'\n" % i for i in range(60))
                  + "exec sleep 100000\n")
        r.put_file("/tmp/pointer-zoom.sh", script.encode())
        r.start_consoled(fonttest.GUEST_MAIN_NAME, "/bin/sh /tmp/pointer-zoom.sh",
                         extra="--font-dpi=%d" % fonttest.DEFAULT_DPI)
        grid = self.wait_log(r"Text grid \d+x\d+ with a (\d+)x(\d+) cell", "no text grid logged")
        cell1 = int(grid.group(1)), int(grid.group(2))
        self.wait_pointer_devices()
        before = r.stable_grab()
        w, h = r.vm_xres, r.vm_yres
        px, py = w // 2 + 3, h // 2 + 5  # blank at both sizes
        self.vm.tablet_move(px, py, w, h)
        self.wait_inverted(before, px // cell1[0], py // cell1[1],
                           "the pointer at %d points" % fonttest.DEFAULT_SIZE, cell=cell1)
        # the idle timeout starts again, then the zoom
        self.vm.tablet_move(px + 1, py, w, h)
        self.vm.tablet_move(px, py, w, h)
        t0 = time.monotonic()
        self.vm.send_combo(["ctrl", "shift", "equal"])
        zoom = self.wait_log(r"Font size 13 points: \d+x\d+ cells of (\d+)x(\d+)",
                             "Ctrl+Plus did not zoom")
        cell2 = int(zoom.group(1)), int(zoom.group(2))
        if cell2 == cell1:
            r.fail("the cell is %dx%d at 12 and 13 points" % cell1)
        shown = r.stable_grab(settle=0.3)
        if time.monotonic() - t0 > HIDE_SECONDS - 0.3:
            r.fail("the zoomed screen took %.1f s to settle: the pointer may have hidden"
                   % (time.monotonic() - t0))
        time.sleep(max(0, t0 + HIDE_SECONDS + 0.5 - time.monotonic()))
        hidden = r.stable_grab()
        col, row = px // cell2[0], py // cell2[1]
        problem = self.inverted_cell_problem(hidden, shown, col, row, cell2)
        if problem:
            r.fail("after the zoom (cell %dx%d) the pointer is not (only) on cell %d,%d under "
                   "pixel %d,%d: %s" % (cell2 + (col, row, px, py, problem)), hidden, shown,
                   tag="zoom")
        r.stop_consoled()

    def scroll_reference(self):
        """The scroll text and fbcon's picture of it."""
        r = self.r
        lines = ["\033[0m\033[?25l\033[H\033[2J"]
        words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod"
        for i in range(400):
            n = 12 + (i * 37) % 60
            t = "%d:" % i
            j = i
            while len(t) < n:
                t += " " + words[(j * 7) % 60:(j * 7) % 60 + 2 + j % 9]
                j += 3
            lines.append(t[:n] + "\n")
        lines.append("end of the pointer scroll")
        text = "".join(lines).encode()
        r.put_file(SCROLL_TEXT, text)
        paced = ("stty -echo\nwhile [ ! -e /tmp/pointer-go ]; do sleep 0.1; done\n"
                 "i=0\nwhile IFS= read -r l; do printf '%%s\\n' \"$l\"; i=$((i + 1));"
                 " [ $((i %% 8)) = 0 ] && sleep 0.02; done < %s\n"
                 "printf 'end of the pointer scroll'\ntouch /tmp/pointer-done\n"
                 "exec sleep 100000\n" % SCROLL_TEXT)
        r.put_file(SCROLL_TEXT + ".sh", paced.encode())
        r.sh("setfont /fonts/%s -C /dev/tty1" % self.font)
        # The final screen depends only on the last screenful: fbcon,
        # which redraws the whole screen per line on cirrus, is given the
        # clear, the last 100 lines and the end.
        r.sh("(printf '\\033[0m\\033[?25l\\033[H\\033[2J'; tail -n 101 %s) > /dev/tty1"
             % SCROLL_TEXT, timeout=120)
        ref = r.stable_grab()
        if "end of the pointer scroll" not in screen.read_screen(ref, self.load_font(self.font)):
            r.fail("fbcon's reference does not show the end of the scroll text")
        return ref

    def check_scroll(self):
        r = self.r
        modes = [m for m in SCROLL_MODES.get(r.card, []) if m in self.scroll_modes]
        if not modes:
            r.fail("no scroll mode for the pointer on %s" % r.card)
        expected = self.scroll_reference()
        w, h = r.vm_xres, r.vm_yres
        cw, ch = self.cell_size()
        for i, mode in enumerate(modes):
            full = self.scroll_modes[mode][1]
            r.sh("rm -f /tmp/pointer-go /tmp/pointer-done; printf '\\033[H\\033[2J' > /dev/tty1")
            r.start_consoled(self.font, "/bin/sh %s.sh" % SCROLL_TEXT,
                             extra="--scroll-mode=%s --no-calibrate" % mode)
            self.wait_log(r"Scrolling: mode", "consoled did not start")
            if i == 0:
                self.wait_pointer_devices()
            self.vm.tablet_move(*self.cell_center(5, 3), w, h)
            time.sleep(0.3)
            r.sh("touch /tmp/pointer-go")
            # the pointer goes round a few cells while the text scrolls
            k = 0
            deadline = time.monotonic() + 120
            while r.vm.run("test -e /tmp/pointer-done")[1] != 0:
                if time.monotonic() > deadline:
                    r.fail("--scroll-mode=%s: the session did not finish its output" % mode)
                col, row = 5 + 7 * (k % 5), 3 + 4 * (k % 7)
                self.vm.tablet_move(col * cw + k % cw, row * ch + k % ch, w, h)
                k += 1
                time.sleep(0.1)
            # shown at the end, then hidden: fbcon's picture
            col, row = 20, 10
            self.vm.tablet_move(*self.cell_center(col, row), w, h)
            t0 = time.monotonic()
            deadline = time.monotonic() + 20
            while True:
                img = r.vm.grab()
                if self.inverted_cell_problem(expected, img, col, row) is None:
                    break
                if time.monotonic() - t0 > HIDE_SECONDS - 0.5 or time.monotonic() > deadline:
                    r.fail("--scroll-mode=%s: the end of the scroll with the pointer on cell "
                           "%d,%d is not fbcon's picture with that cell inverted" % (mode, col, row),
                           expected, img, tag="scroll-" + mode)
                time.sleep(0.2)
            r.wait_equal(expected, "--scroll-mode=%s: the screen once the pointer hid" % mode,
                         timeout=10)
            log = self.log()
            if ("full-screen scrolls by %s," % full) not in log:
                r.fail("--scroll-mode=%s does not scroll by %s; log:\n%s" % (mode, full, log))
            r.stop_consoled()

    def check_vt_away(self):
        font = self.font
        text2 = b"\033[0m\033[?25l\033[H\033[2J\033[36mthis is tty2, drawn by fbcon\033[0m\n"
        self.r.fbcon_show(font, text2, tty=2)
        expected = self.start_oracle(extra="--verbose")
        self.wait_pointer_devices()
        w, h = self.r.vm_xres, self.r.vm_yres
        before = self.pointer_events_logged()

        self.r.sh("chvt 2")
        ref2 = self.r.stable_grab()
        if "this is tty2" not in screen.read_screen(ref2, self.load_font(font)):
            self.r.fail("tty2's picture does not show its text")
        # everything the two devices can do, on tty2
        for col, row in ((3, 0), (10, 9), (20, 4)):
            self.vm.tablet_move(*self.cell_center(col, row), w, h)
            time.sleep(0.1)
        self.vm.pointer_click("left", "tablet")
        self.vm.pointer_click("right", "tablet")
        self.vm.pointer_wheel(2, "tablet")
        self.vm.mouse_move_rel(40, 30)
        self.vm.pointer_click("left", "ps2")
        self.vm.pointer_wheel(-2, "ps2")
        # the last one stays queued until the switch back
        self.vm.tablet_move(*self.cell_center(5, 6), w, h)
        time.sleep(0.5)
        img = self.vm.grab()
        if screen.compare(ref2, img):
            self.r.fail("tty2's screen changed under pointer events", ref2, img, tag="tty2")
        after = self.pointer_events_logged()
        if after != before:
            self.r.fail("%d pointer events reached consoled while tty2 was shown:\n%s"
                        % (after - before, self.log()))

        self.r.sh("chvt 1")
        self.r.wait_equal(expected, "consoled's screen after switching back")
        # and it stays so: no pointer shows up late
        time.sleep(1.0)
        img = self.vm.grab()
        if screen.compare(expected, img):
            self.r.fail("a pointer (or something) appeared after the switch back",
                        expected, img, tag="back")
        if self.pointer_events_logged() != before:
            self.r.fail("pointer events from tty2 reached consoled on the way back:\n"
                        + self.log())
        # pointer events work again
        self.vm.tablet_move(*self.cell_center(3, 0), w, h)
        self.wait_inverted(expected, 3, 0, "the pointer after the switch back")
        self.r.stop_consoled()

    def check_syn_dropped(self):
        r = self.r
        self.start_oracle(extra="--verbose")
        tablet, _ = self.wait_pointer_devices()
        w, h = r.vm_xres, r.vm_yres
        x, y = self.cell_center(3, 0)
        n = len(self.events_since(0))
        self.vm.tablet_move(x, y, w, h)
        n = self.wait_events(n, [("motion", x, y, "")], "tablet motion")
        self.vm.pointer_button("left", True, "tablet")
        n = self.wait_events(n, [("button", x, y, "1 pressed")], "tablet press")
        pid = r.consoled_pid()
        r.sh("kill -STOP %s" % pid)
        try:
            self.vm.pointer_button("left", False, "tablet")
            for i in range(200):
                self.vm.tablet_move(100 + i * 5, 100 + i * 3, w, h)
                time.sleep(0.005)
            time.sleep(0.5)
        finally:
            r.sh("kill -CONT %s" % pid)
        self.wait_log(r"Pointer %s: the kernel dropped input events" % tablet,
                      "consoled saw no SYN_DROPPED from the tablet; the check proves nothing")
        deadline = time.monotonic() + 10
        while True:
            got = self.events_since(n)
            buttons = [e for e in got if e[0] == "button"]
            if buttons:
                break
            if time.monotonic() > deadline:
                r.fail("the release lost in the overflow was never reported: the button "
                       "sticks; events since the press: %r" % got)
            time.sleep(0.2)
        time.sleep(0.5)
        buttons = [e[3] for e in self.events_since(n) if e[0] == "button"]
        if buttons != ["1 released"]:
            r.fail("after SYN_DROPPED the buttons went %r, expected one release" % buttons)
        # the pointer is where the last motion put it
        last = self.events_since(n)[-1]
        want = (100 + 199 * 5, 100 + 199 * 3)
        if last[:3] != ("motion",) + want:
            r.fail("the last event after the overflow is %r, expected motion to %r" % (last, want))
        r.stop_consoled()

    @staticmethod
    def scale_abs(value, lo, hi, size):
        """daemon/input/input.c input_scale_abs()."""
        return (min(max(value, lo), hi) - lo) * size // (hi - lo + 1)

    def play_uinput(self, kind, steps, until):
        """uinput-ptr KIND with `steps` (PID: consoled's) in the background, the
        device staying until killed; waits until it has done `until`. Returns
        the tool's pid."""
        r = self.r
        if r.vm.run("test -x /usr/bin/uinput-ptr")[1] != 0:
            r.fail("no uinput-ptr in the guest (build tests/vm/uinput-ptr)")
        logf = "/tmp/uptr-%s.log" % kind
        tool = r.sh("uinput-ptr %s %s hold </dev/null >%s 2>&1 & echo $!"
                    % (kind, steps.replace("PID", r.consoled_pid()), logf)).strip()
        deadline = time.monotonic() + 30
        while "uinput-ptr: " + until not in r.sh("cat %s" % logf):
            if time.monotonic() > deadline:
                r.fail("uinput-ptr did not play its steps:\n" + r.sh("cat %s" % logf))
            time.sleep(0.3)
        return tool

    def check_touch(self):
        r = self.r
        self.start_oracle(extra="--verbose --mouse-speed=2.5")
        w, h = r.vm_xres, r.vm_yres
        tools = []
        try:
            n = len(self.events_since(0))
            tools.append(self.play_uinput(
                "touchscreen", "wait-open PID sleep 300 touch 1200,900 sleep 200 lift", "lift"))
            self.wait_log(r"Pointer /dev/input/event\d+: consoled-test uinput touchscreen "
                          r"\(absolute\)", "the touchscreen is not logged as absolute")
            x, y = self.scale_abs(1200, 100, 4195, w), self.scale_abs(900, 50, 2099, h)
            n = self.wait_events(n, [("motion", x, y, ""), ("button", x, y, "1 pressed"),
                                     ("button", x, y, "1 released")], "a touch on the touchscreen")
            # 10 units a mm, 8 pixels a mm, 2.5 times: 150,120 is 100,40
            # pixels from 100,100
            tools.append(self.play_uinput(
                "touchpad", "wait-open PID sleep 300 touch 100,100 sleep 100 move 150,120 "
                "sleep 100 move 130,140 sleep 100 lift sleep 100 click sleep 100 "
                "touch 900,450 sleep 100 lift", "lift"))
            self.wait_log(r"Pointer /dev/input/event\d+: consoled-test uinput touchpad "
                          r"\(touchpad\)", "the touchpad is not logged as one")
            x1, y1 = x + 100, y + 40
            x2, y2 = x1 - 40, y1 + 40
            n = self.wait_events(n, [("motion", x1, y1, ""), ("motion", x2, y2, ""),
                                     ("button", x2, y2, "1 pressed"),
                                     ("button", x2, y2, "1 released")],
                                 "finger moves and a click on the touchpad")
            time.sleep(0.5)
            if self.events_since(n):
                r.fail("a touch on the touchpad did something: %r" % self.events_since(n))
            # the PS/2 mouse: 12,8 counts are 30,20 pixels
            self.vm.mouse_move_rel(12, 8)
            deadline = time.monotonic() + 10
            while True:
                got = self.events_since(n)
                if got and got[-1][:3] == ("motion", x2 + 30, y2 + 20):
                    break
                if time.monotonic() > deadline:
                    r.fail("PS/2 motion by 12,8 at --mouse-speed=2.5: pointer events %r, "
                           "expected motion ending at %d,%d" % (got, x2 + 30, y2 + 20))
                time.sleep(0.2)
        finally:
            for tool in tools:
                r.vm.run("kill %s" % tool)
        r.stop_consoled()

    def check_blank(self):
        r = self.r
        expected = self.start_oracle(extra="--blank=2")
        self.wait_pointer_devices()
        self.wait_log(r"No input for a while: screen blanked", "the screen did not blank")
        img = self.vm.grab()
        if len(img.colors()) != 1:
            r.fail("the blanked screen is not black all over", expected, img, tag="blank")
        col, row = 3, 0
        self.vm.tablet_move(*self.cell_center(col, row), r.vm_xres, r.vm_yres)
        self.wait_log(r"Input: waking the screen", "a tablet motion did not wake the screen")
        self.wait_inverted(expected, col, row, "the woken screen with the pointer")
        r.stop_consoled()

    def check_off(self):
        font = self.font
        expected = self.start_oracle(extra="--mouse=no")
        self.vm.plug_tablet()
        deadline = time.monotonic() + 20
        while True:
            devices = self.r.sh("cat /proc/bus/input/devices")
            if "QEMU USB Tablet" in devices:
                break
            if time.monotonic() > deadline:
                self.r.fail("the usb-tablet did not show up in the guest")
            time.sleep(0.3)
        time.sleep(1.0)  # consoled's monitor has seen it too
        nodes = {}
        for block in devices.split("\n\n"):
            name = re.search(r'N: Name="([^"]*)"', block)
            ev = re.search(r"H: Handlers=.*\b(event\d+)", block)
            if name and ev:
                nodes[name.group(1)] = "/dev/input/" + ev.group(1)
        tablet = [n for k, n in nodes.items() if "Tablet" in k]
        ps2 = [n for k, n in nodes.items() if "PS/2" in k and "Mouse" in k]
        kbd = [n for k, n in nodes.items() if "AT Translated" in k]
        if not tablet or not ps2 or not kbd:
            self.r.fail("input devices not found in the guest: %r" % nodes)
        pid = self.r.consoled_pid()
        fds = self.r.sh("ls -l /proc/%s/fd" % pid)
        opened = set(re.findall(r"/dev/input/event\d+", fds))
        if kbd[0] not in opened:
            self.r.fail("consoled has not even the keyboard %s open:\n%s" % (kbd[0], fds))
        for node in tablet + ps2:
            if node in opened:
                self.r.fail("with --mouse=no consoled has %s open:\n%s" % (node, fds))
        log = self.log()
        if "Pointer devices are not used (--mouse=no)" not in log or "Pointer /dev" in log:
            self.r.fail("consoled's log does not say --mouse=no, or names a pointer:\n" + log)
        self.vm.tablet_move(*self.cell_center(3, 0), self.r.vm_xres, self.r.vm_yres)
        self.vm.mouse_move_rel(30, 30)
        time.sleep(1.0)
        img = self.vm.grab()
        if screen.compare(expected, img):
            self.r.fail("the screen changed under pointer events with --mouse=no",
                        expected, img, tag="off")
        self.r.stop_consoled()
