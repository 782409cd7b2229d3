#!/usr/bin/python3
"""consoled's mouse reporting and wheel checks, run
by vmtest.py in the bochs guest (32 bpp), with QEMU's usb-tablet plugged in
by the check and driven through QMP (pointertest.PointerChecks' helpers).

  mouse-report  a program in consoled's session enables 1000 + 1006 (SGR)
                and reads its input raw into a file: left, right and middle
                clicks on three cells arrive as exactly the SGR press and
                release reports of those cells and buttons (the tablet's
                motion in between reports nothing in 1000); a Shift+click
                reports nothing (a local selection), the click after it
                does; with 1006 reset by the program the default encoding
                (CSI M and three bytes) arrives for the next click.
  wheel         the normal screen: `cat` of a 300-line file, two notches up
                show the view 6 lines back in the scrollback (the decoded
                screen's rows moved down by 6), two notches down bring back
                the very same picture; the alternate screen: `less` (the
                host's, with the xterm-256color terminfo entry) on the same
                file scrolls 6 lines down for two notches down and 3 back up
                for one notch up (the wheel sends its cursor keys).
"""

import re
import shutil
import time

import pointertest

CARDS = ("bochs",)
CHECKS = ["mouse-report", "wheel"]

TERMINFO_HOST = "/lib/terminfo/x/xterm-256color"
TERMINFO_GUEST = "/usr/share/terminfo/x/xterm-256color"


def guest_elves():
    """Binaries the wheel check needs in the guest (vmtest's extra_elves)."""
    less = shutil.which("less")
    return {"/usr/bin/less": less} if less else {}


def cat_v(data):
    """bytes as `cat -v` shows them."""
    out = []
    for b in data:
        if b >= 128:
            out.append("M-")
            b -= 128
        if b < 32:
            out.append("^" + chr(b + 64))
        elif b == 127:
            out.append("^?")
        else:
            out.append(chr(b))
    return "".join(out)


def sgr(button, col, row):
    """SGR press and release of button code `button` on cell col,row (0-based)."""
    return (b"\033[<%d;%d;%dM" % (button, col + 1, row + 1) +
            b"\033[<%d;%d;%dm" % (button, col + 1, row + 1))


class MouseChecks:
    def __init__(self, runner, oracle_text, load_font, font):
        self.r = runner
        self.vm = runner.vm
        self.load_font = load_font
        self.font = font
        self.pc = pointertest.PointerChecks(runner, oracle_text, load_font, font)
        self.checks = {
            "mouse-report": self.check_report,
            "wheel": self.check_wheel,
        }

    def guarded(self, fn):
        return self.pc.guarded(fn)

    def move_to(self, col, row):
        x, y = self.pc.cell_center(col, row)
        self.vm.tablet_move(x, y, self.r.vm_xres, self.r.vm_yres)
        time.sleep(0.1)

    def shift(self, down):
        self.vm._input_events([{"type": "key", "data": {
            "down": down, "key": {"type": "qcode", "data": "shift"}}}])
        time.sleep(0.1)

    def wait_file(self, path, what, timeout=20):
        deadline = time.monotonic() + timeout
        while self.vm.run("test -e %s" % path)[1] != 0:
            if time.monotonic() > deadline:
                self.r.fail(what)
            time.sleep(0.3)

    # -- mouse-report --

    def received(self):
        out = self.r.sh("od -An -tx1 -v /tmp/mouse.raw")
        return bytes(int(h, 16) for h in out.split())

    def wait_received(self, want, what, timeout=10):
        deadline = time.monotonic() + timeout
        while True:
            got = self.received()
            if got == want:
                return
            if time.monotonic() > deadline or not want.startswith(got):
                self.r.fail("%s: the program read (cat -v)\n  %s\nnot\n  %s"
                            % (what, cat_v(got), cat_v(want)))
            time.sleep(0.3)

    def check_report(self):
        # The program: raw mode, mouse reporting 1000 with SGR coordinates,
        # then every byte it reads into a file.
        self.r.put_file("/tmp/mouse-session.sh",
                        b"stty raw -echo\nprintf '\\033[?1000;1006h'\ntty >/tmp/mouse.tty\n"
                        b": >/tmp/mouse.ready\nexec cat >/tmp/mouse.raw\n")
        self.r.sh("rm -f /tmp/mouse.ready /tmp/mouse.raw /tmp/mouse.tty")
        self.r.start_consoled(self.font, "/bin/sh /tmp/mouse-session.sh", extra="--verbose")
        self.wait_file("/tmp/mouse.ready", "the reporting program did not start")
        self.pc.wait_pointer_devices()
        time.sleep(0.5)  # the printf has reached consoled's stream stage

        want = b""
        # left (0), right (2), middle (1) on three cells; motion in between
        for col, row, button, code in ((3, 2, "left", 0), (41, 17, "right", 2),
                                       (70, 5, "middle", 1)):
            self.move_to(col, row)
            self.vm.pointer_click(button, "tablet")
            want += sgr(code, col, row)
            self.wait_received(want, "after a %s click on cell %d,%d" % (button, col, row))

        # Shift+click: a local selection, nothing for the program
        self.move_to(10, 8)
        self.shift(True)
        self.vm.pointer_click("left", "tablet")
        self.shift(False)
        time.sleep(1.0)
        got = self.received()
        if got != want:
            self.r.fail("a Shift+click reached the program (cat -v): %s" % cat_v(got[len(want):]))
        # and a click without Shift is reported again
        self.vm.pointer_click("left", "tablet")
        want += sgr(0, 10, 8)
        self.wait_received(want, "the click after the Shift+click")

        # the program resets 1006: the default encoding, CSI M Cb Cx Cy + 32
        tty = self.r.sh("cat /tmp/mouse.tty").strip()
        self.r.sh("printf '\\033[?1006l' > %s" % tty)
        time.sleep(0.5)
        self.move_to(5, 3)
        self.vm.pointer_click("left", "tablet")
        want += b"\033[M" + bytes([32, 32 + 6, 32 + 4]) + b"\033[M" + bytes([35, 32 + 6, 32 + 4])
        self.wait_received(want, "a click in the default encoding")
        print("# mouse-report: the program read (cat -v) %s" % cat_v(want), flush=True)
        self.r.stop_consoled()

    # -- wheel --

    def screen_lines(self):
        img, decoded = self.vm.wait_screen(self.load_font(self.font), lambda s: True, timeout=1)
        return img, [l.rstrip() for l in decoded.lines]

    def wait_lines(self, predicate, what, timeout=15):
        return self.r.wait_text(self.font, lambda s: predicate([l.rstrip() for l in s.lines]),
                                what, timeout=timeout)

    @staticmethod
    def first_number(lines):
        for l in lines:
            m = re.fullmatch(r"line (\d+)", l)
            if m:
                return int(m.group(1))
        return None

    def check_wheel(self):
        self.r.put_file("/tmp/long", b"".join(b"line %d\n" % i for i in range(1, 301)))
        # the normal screen: the scrollback
        self.r.start_consoled(self.font, "/bin/sh -c 'cat /tmp/long; exec sleep 100000'")
        self.wait_lines(lambda ls: "line 300" in ls, "cat did not show the file's end")
        before = self.r.stable_grab()
        _, lines = self.screen_lines()
        top = self.first_number(lines)
        if top is None or lines[0] != "line %d" % top or top < 10:
            self.r.fail("the screen does not start with a line of the file: %r" % lines[:3])
        self.pc.wait_pointer_devices()
        self.move_to(20, 10)
        self.vm.pointer_wheel(2, "tablet")

        def moved_back(ls):
            return ls[0] == "line %d" % (top - 6) and ls[6:] == lines[:len(ls) - 6]
        self.wait_lines(moved_back, "two notches up did not show the view 6 lines back "
                        "(top was line %d)" % top)
        self.vm.pointer_wheel(-2, "tablet")
        self.r.wait_equal(before, "two notches down did not bring the screen back")
        self.r.stop_consoled()

        # the alternate screen: less gets cursor keys
        if self.vm.run("test -x /usr/bin/less")[1] != 0:
            self.r.fail("no /usr/bin/less in the guest (the host's less is needed)")
        with open(TERMINFO_HOST, "rb") as f:
            entry = f.read()
        self.r.sh("mkdir -p %s" % TERMINFO_GUEST.rsplit("/", 1)[0])
        self.r.put_file(TERMINFO_GUEST, entry)
        self.r.start_consoled(self.font, "/usr/bin/less /tmp/long")
        self.wait_lines(lambda ls: ls[0] == "line 1" and "line 2" in ls,
                        "less did not show the file's start")
        self.move_to(20, 10)
        self.vm.pointer_wheel(-2, "tablet")
        self.wait_lines(lambda ls: ls[0] == "line 7" and ls[1] == "line 8",
                        "less did not scroll 6 lines down for two notches down")
        self.vm.pointer_wheel(1, "tablet")
        self.wait_lines(lambda ls: ls[0] == "line 4" and ls[1] == "line 5",
                        "less did not scroll 3 lines up for a notch up")
        self.r.stop_consoled()
