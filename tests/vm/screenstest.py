"""Two framebuffers on one seat: the checks vmtest.py runs on cirrus.

The cirrus guest gets a second display device (QEMU's secondary-vga, id
SECOND, see vmtest.py) that no driver takes at boot, so every other check of
the guest sees cirrusfb's fb0 alone. The first of these checks loads bochs-drm
(the bochs card's module list), which takes the secondary-vga as fb1
(bochs-drmdrmfb, 32 bpp, deferred I/O: shadow with fb-flush write) beside
cirrusfb's fb0 (8 bpp, pan): two screens of different depths and scroll
strategies. QMP's screendump takes the device's id for fb1's picture.

  screens-mirror    --fbdev=/dev/fb0,/dev/fb1 (screens=mirror, the default):
                    the oracle text on fb0 equals fbcon's picture of it pixel
                    for pixel (fb0's grid is the smaller: the grid is fb0's);
                    fb1 equals fbcon's own picture of the same text on fb1
                    (fbcon_fb1(): VT 9 mapped to fb1 by con2fb, the same
                    font, its grid cut to fb0's with stty, black right of
                    and below it; fb1's 32 bpp and the palette's 0xaa, where
                    fb0's 6-bit DAC shows 0xa8); a line typed shows on
                    both; output while tty2
                    is in front is drawn on neither, on both once tty1 is
                    back; after exit fb0's mode is back and fb1 is wiped
                    black
  screens-separate  --screens=separate: a shell on each screen; typed text
                    goes to fb0's; Ctrl+Alt+Logo+Right moves the keyboard to
                    fb1's shell (its own session: another pid), Left back;
                    the PS/2 mouse moved past fb0's right edge and clicked
                    moves it to fb1's again;
                    the screendumps of both are saved as
                    <out>/cirrus-separate-fb0.png and -fb1.png
  screens-unbind    separate, focus on fb1: bochs-drm unbound from the
                    secondary-vga: consoled goes on, a line typed runs in
                    fb0's session; bound again, fb1 shows its session again.
                    Then mirrored: fb1 unbound, fb0 draws a typed line, then
                    the oracle text cat to the session (fb0 equals fbcon's
                    picture); bound again, fb1 equals fbcon's own picture of
                    the text on fb1 (fbcon_pictures(): screens-mirror's,
                    taken here if it did not run) and fb0 still fbcon's
  screens-rotate    mirror with --rotate=0,1: fb1 turned a quarter clockwise
                    (its dump turned back shows the text), fb0 upright; fb1
                    of that --fbdev= list moved to seat1 and back as in
                    screens-hotplug (let go, black, taken again); then
                    DejaVu Sans Mono with --font-size=12,36: the session's
                    size is fb1's (the smaller grid), grows to fb0's while
                    fb1 is unbound and is fb1's again once it is bound
  screens-hotplug   --fbdev=all with fb1 absent (bochs-drm unbound): only
                    fb0 is taken (log); bochs-drm bound while tty2 is in
                    front: fb1 is added (log) but not drawn; tty1 back: it
                    equals fb0's picture (palette colours), a line typed
                    shows on both; fb1's card put on seat1 (a udev database
                    entry with ID_SEAT and a change uevent): let go and
                    wiped black, a line typed shows on fb0 only; back on seat0: taken again by
                    its screen, not added twice. Then --fbdev=all --screens=separate with
                    fb1 absent, bound later: fb1 shows a new session (its
                    own shell: another $$) and Ctrl+Alt+Logo+Right moves the
                    keyboard there
"""
import re
import time

import initramfs
import screen

CHECKS = ["screens-mirror", "screens-separate", "screens-unbind", "screens-rotate",
          "screens-hotplug"]
CARDS = ("cirrus",)
SECOND = "second"
# the second display: no driver binds it until load_second() loads bochs-drm
QEMU_ARGS = ["-device", "secondary-vga,id=" + SECOND]
FB1 = "/sys/class/graphics/fb1"
# The VT fbcon draws the oracle text on fb1 with (con2fb), no getty on it.
ORACLE_VT = 9


def prompt(s):
    return any(line.startswith("$") for line in s.lines)


def line_starting(s, text):
    """The first line of s that starts with text (stripped), or None. A key
    typed through QMP may come out twice on a loaded host (its release read
    after the repeat delay): a letter of text may be repeated."""
    pattern = re.compile("".join(re.escape(c) + "+" for c in text))
    for line in s.lines:
        if pattern.match(line):
            return line.strip()
    return None


def turn_back(img):
    """A dump of a glass turned a quarter clockwise (fbcon's rotation 1), turned
    back: logical (x, y) shows at (xres-1-y, x)."""
    w, h = img.height, img.width
    src, out = img.data, bytearray(w * h * 3)
    for y in range(h):
        for x in range(w):
            gx, gy = img.width - 1 - y, x
            i = (gy * img.width + gx) * 3
            o = (y * w + x) * 3
            out[o:o + 3] = src[i:i + 3]
    return screen.Image(w, h, bytes(out))


class ScreensChecks:
    def __init__(self, runner, oracle_text, load_font, font):
        self.r = runner
        self.oracle_text = oracle_text
        self.load_font = load_font
        self.font = font
        self.checks = {
            "screens-mirror": self.check_mirror,
            "screens-separate": self.check_separate,
            "screens-unbind": self.check_unbind,
            "screens-rotate": self.check_rotate,
            "screens-hotplug": self.check_hotplug,
        }

    # -- helpers --

    def load_second(self):
        """bochs-drm for the secondary-vga: fb1 (once)."""
        r = self.r
        r.sh("for m in $(cat /etc/vm/modules/bochs); do grep -q \"^$m \" /proc/modules"
             " || insmod /lib/modules/$m.ko || exit 1; done", timeout=120)
        deadline = time.monotonic() + 20
        while r.vm.run("test -e /dev/fb1")[1] != 0:
            if time.monotonic() > deadline:
                r.fail("no /dev/fb1 after loading bochs-drm: %s"
                       % r.vm.run("ls /sys/class/graphics; dmesg | tail -5")[0])
            time.sleep(0.3)
        name = r.sh("cat %s/name" % FB1).strip()
        if name != "bochs-drmdrmfb":
            r.fail("fb1 is %r, not bochs-drm's" % name)
        return [int(v) for v in r.sh("cat %s/virtual_size" % FB1).strip().split(",")]

    @staticmethod
    def widen(img, width, height):
        """img at the top left of a black width x height picture, each pixel
        the console palette's colour it is nearest to (a 6-bit DAC's 0xa8 is
        0xaa at 32 bpp)."""
        pal = screen._PaletteIndex(screen.LINUX_PALETTE)
        exact = {}
        out = bytearray(width * height * 3)
        for y in range(img.height):
            row = img.data[y * img.width * 3:(y + 1) * img.width * 3]
            line = bytearray()
            for i in range(0, len(row), 3):
                px = row[i:i + 3]
                if px not in exact:
                    k = pal.get(px)
                    exact[px] = bytes(screen.LINUX_PALETTE[k]) if k >= 0 else b"\xff\x00\xff"
                line += exact[px]
            out[y * width * 3:y * width * 3 + len(line)] = line
        return screen.Image(width, height, bytes(out))

    def grab2(self):
        """fb1's picture (QMP screendump of the second device)."""
        return self.r.vm.screendump(device=SECOND)

    def wait2(self, predicate, what, turned=False, timeout=20):
        img, s = self.r.vm.wait_screen(
            self.load_font(self.font), predicate, timeout=timeout,
            grab=(lambda: turn_back(self.grab2())) if turned else self.grab2)
        if not predicate(s):
            path = self.r.vm.save_png(img, "cirrus-%d-fb1.png" % self.r.n)
            self.r.fail("%s; fb1 shows:\n%s\n(picture: %s)" % (what, s.text(), path))
        return img, s

    def fbcon_fb1(self, font, path, cols, rows):
        """fbcon's own picture of the text in file path on fb1, in fb0's
        cols x rows grid (the mirror's): VT ORACLE_VT mapped to fb1 with
        FBIOPUT_CON2FBMAP (con2fb.c), shown, the font loaded, its grid cut to
        cols x rows (fbcon keeps fb1's mode and clears the margins), the
        text written; then mapped back to fb0 while still in front (fbcon
        lets fb1 go) and tty1 in front again."""
        r = self.r
        tty = "/dev/tty%d" % ORACLE_VT
        start = time.monotonic()
        try:
            mapped = r.sh("con2fb /dev/fb1 %d 1 && chvt %d && setfont /fonts/%s -C %s &&"
                          " stty -F %s cols %d rows %d && cat %s > %s"
                          % (ORACLE_VT, ORACLE_VT, font, tty, tty, cols, rows, path, tty)).strip()
            if mapped != "1":
                r.fail("VT %d is on fb%s, not fb1" % (ORACLE_VT, mapped))
            img = r.stable_grab(grab=self.grab2)
        finally:
            r.sh("con2fb /dev/fb1 %d 0; chvt 1" % ORACLE_VT)
        decoded = screen.read_screen(img, self.load_font(font))
        if "consoled pixel oracle" not in decoded.text() or "last line" not in decoded.text():
            path = r.vm.save_png(img, "cirrus-%d-fb1-fbcon.png" % r.n)
            r.fail("fbcon's picture on fb1 does not show the oracle text:\n%s\n(picture: %s)"
                   % (decoded.text(), path))
        print("# fbcon's picture of fb1 (VT %d): %.1fs" % (ORACLE_VT, time.monotonic() - start))
        return img

    # fbcon's pictures of the oracle text, taken once a boot: (font, cols,
    # rows), the text's file, fb0's and fb1's pictures
    mirror_oracle = None
    ORACLE_FILE = "/tmp/screens-oracle"

    def fbcon_pictures(self, font, cols, rows):
        """fbcon's pictures of the oracle text in a cols x rows grid (the
        mirror's, fb0's): fb0's (tty1, then cleared) and fb1's
        (fbcon_fb1()), and the guest file that holds the text
        (ORACLE_FILE, for the session to cat). Taken by the first check that
        asks in a boot (screens-mirror or screens-unbind), the others reuse
        them: fbcon_fb1() costs a VT switch, a font load and a settle."""
        r = self.r
        if not self.mirror_oracle or self.mirror_oracle[:3] != (font, cols, rows):
            text, _ = self.oracle_text(font, cols)
            path = r.fbcon_show(font, text)
            fb0 = r.stable_grab()
            fb1 = self.fbcon_fb1(font, path, cols, rows)
            r.sh("cp %s %s" % (path, self.ORACLE_FILE))
            self.mirror_oracle = (font, cols, rows, fb0, fb1)
        r.sh("printf '\\033[H\\033[2J' > /dev/tty1")
        return (self.ORACLE_FILE,) + self.mirror_oracle[3:]

    # -- checks --

    def check_mirror(self):
        r = self.r
        font = self.font
        f = self.load_font(font)
        w1, h1 = self.load_second()
        cols = min(r.vm_xres, w1) // f.width
        rows = min(r.vm_yres, h1) // f.height
        if r.vm_xres > w1 or r.vm_yres > h1:
            r.fail("fb0 (%dx%d) is not the smaller screen beside fb1 (%dx%d)"
                   % (r.vm_xres, r.vm_yres, w1, h1))
        path, expected, want = self.fbcon_pictures(font, cols, rows)
        before = r.fb_state()
        r.sh("rm -f /tmp/screens-go")
        r.start_consoled(font, "/bin/sh -c 'cat %s; while [ ! -e /tmp/screens-go ]; do sleep 0.2;"
                         " done; exec /usr/bin/env PS1=\"$ \" /bin/sh'" % path,
                         "--fbdev=/dev/fb0,/dev/fb1")
        r.wait_equal(expected, "fb0 (mirror) differs from fbcon's picture")
        # fb1: fbcon's own picture of the text there (its palette at 32 bpp)
        deadline = time.monotonic() + 20
        while True:
            img1 = self.grab2()
            if img1.data == want.data:
                break
            if time.monotonic() > deadline:
                diff = screen.compare(want, img1)
                r.fail("fb1 (mirror) is not fbcon's picture of fb1 in fb0's %dx%d grid: %d "
                       "pixels differ in %r" % (cols, rows, diff.count, diff.bbox), want, img1)
            time.sleep(0.3)
        log = r.consoled_log()
        if "2 screens, one terminal mirrored" not in log:
            r.fail("consoled did not log the mirror:\n" + log)
        for line in log.splitlines():
            if "Scrolling: mode" in line or "Text grid" in line:
                print("# " + line)
        r.sh("touch /tmp/screens-go")
        r.wait_text(font, prompt, "no prompt on fb0")
        r.vm.send_text("echo mirrored-line\n")
        r.wait_text(font, lambda s: line_starting(s, "mirrored-line"),
                    "fb0 does not show the echo")
        self.wait2(lambda s: line_starting(s, "mirrored-line"), "fb1 does not show the echo")
        # another VT in front: neither screen is drawn; back: both
        pts = re.search(r"on (/dev/pts/\d+)", r.consoled_log()).group(1)
        r.sh("chvt 2; sleep 0.5; echo away-text > %s; sleep 1" % pts)
        _, s1 = self.wait2(lambda s: True, "")
        if "away-text" in s1.text():
            r.fail("fb1 was drawn while tty2 was in front:\n" + s1.text())
        r.sh("chvt 1")
        r.wait_text(font, lambda s: "away-text" in s.text(),
                    "fb0 does not show the output made while tty2 was in front")
        self.wait2(lambda s: "away-text" in s.text(),
                   "fb1 does not show the output made while tty2 was in front")
        r.stop_consoled()
        if r.fb_state() != before:
            r.fail("fb0's mode after exit %r, before %r" % (r.fb_state(), before))
        black = self.grab2()
        if black.colors() - {b"\0\0\0"}:
            r.fail("fb1 is not wiped black after exit: %d colours" % len(black.colors()))

    def start_separate(self, extra=""):
        r = self.r
        self.load_second()
        r.start_consoled(self.font, "/usr/bin/env PS1='$ ' /bin/sh",
                         "--fbdev=/dev/fb0,/dev/fb1 --screens=separate " + extra)
        r.wait_text(self.font, prompt, "no prompt on fb0")
        self.wait2(prompt, "no prompt on fb1")

    def check_separate(self):
        r = self.r
        font = self.font
        self.start_separate()
        r.vm.send_text("echo one-$$\n")
        _, s0 = r.wait_text(font, lambda s: line_starting(s, "one-"),
                            "fb0's shell did not answer")
        pid0 = line_starting(s0, "one-").split("-")[-1]
        time.sleep(0.5)
        _, s1 = self.wait2(lambda s: True, "")
        if "one-" in s1.text():
            r.fail("the keys went to fb1's shell too:\n" + s1.text())
        r.vm.send_keys(["ctrl", "alt", "meta_l", "right"], hold_ms=50)
        r.vm.send_text("echo two-$$\n")
        _, s1 = self.wait2(lambda s: line_starting(s, "two-"),
                           "after Ctrl+Alt+Logo+Right the keys do not reach fb1's shell")
        if line_starting(s1, "two-").split("-")[-1] == pid0:
            r.fail("fb1's shell is fb0's (pid %s)" % pid0)
        _, s0 = r.wait_text(font, lambda s: True, "")
        if "two-" in s0.text():
            r.fail("the keys after the focus key reached fb0's shell:\n" + s0.text())
        img0, img1 = r.vm.grab(), self.grab2()
        for name, img in (("fb0", img0), ("fb1", img1)):
            path = r.vm.save_png(img, "cirrus-separate-%s.png" % name)
            print("# %s: %s" % (name, path))
        r.vm.send_keys(["ctrl", "alt", "meta_l", "left"], hold_ms=50)
        r.vm.send_text("echo three\n")
        r.wait_text(font, lambda s: line_starting(s, "three"),
                    "Ctrl+Alt+Logo+Left did not come back")
        if "Keyboard focus on /dev/fb1" not in r.consoled_log():
            r.fail("the focus was not logged:\n" + r.consoled_log())
        # the pointer past fb0's right edge is over fb1; a click there
        # moves the keyboard
        r.vm.select_mouse("ps2")
        r.vm.mouse_move_rel(2 * r.vm_xres, 0)
        r.vm.pointer_click("left", "ps2")
        r.vm.send_text("echo four\n")
        self.wait2(lambda s: line_starting(s, "four"),
                   "a click on fb1 did not move the keyboard there")
        r.stop_consoled()

    def check_unbind(self):
        r = self.r
        font = self.font
        self.start_separate()
        pci = r.sh("basename $(readlink %s/device)" % FB1).strip()
        r.vm.send_keys(["ctrl", "alt", "meta_l", "right"], hold_ms=50)
        r.vm.send_text("echo on-fb1\n")
        self.wait2(lambda s: "on-fb1" in s.text(), "the focus did not move to fb1")
        r.sh("echo %s > /sys/bus/pci/drivers/bochs-drm/unbind" % pci)
        try:
            r.wait_log("/tmp/consoled.log", "No framebuffer to draw on",
                       "consoled did not notice fb1's removal")
            r.vm.send_text("echo after-unbind\n")
            r.wait_text(font, lambda s: "after-unbind" in s.text(),
                        "fb0's session does not get the keys after fb1 went")
            if r.consoled_exited():
                r.fail("consoled exited when fb1 went:\n" + r.consoled_log())
        finally:
            r.vm.run("echo %s > /sys/bus/pci/drivers/bochs-drm/bind" % pci)
        r.wait_log("/tmp/consoled.log", "Took over /dev/fb1",
                   "consoled did not take fb1 back after the rebind")
        self.wait2(lambda s: "on-fb1" in s.text(),
                   "fb1's session is not shown again after the rebind")
        r.stop_consoled()
        # mirrored: fb1 goes, the oracle text comes while it is away, and
        # fb1 back shows it as fbcon does there (its grid, palette and
        # black margins); fb0 as fbcon does throughout
        w1, h1 = self.load_second()
        f = self.load_font(font)
        cols, rows = min(r.vm_xres, w1) // f.width, min(r.vm_yres, h1) // f.height
        path, want0, want1 = self.fbcon_pictures(font, cols, rows)
        # not an interactive shell: its line editing redraws the prompt at
        # the SIGWINCH of fb1's going and coming back (the pty's pixel size
        # changes), over the text's last line
        r.start_consoled(font, "/bin/sh -c 'printf \"$ \"; read line; echo typed-$line;"
                         " exec sleep 100000'", "--fbdev=/dev/fb0,/dev/fb1")
        r.wait_text(font, prompt, "no prompt on fb0")
        r.sh("echo %s > /sys/bus/pci/drivers/bochs-drm/unbind" % pci)
        try:
            r.wait_log("/tmp/consoled.log", "No framebuffer to draw on",
                       "consoled (mirror) did not notice fb1's removal")
            r.vm.send_text("mirror-alone\n")
            r.wait_text(font, lambda s: line_starting(s, "typed-mirror-alone"),
                        "fb0 (mirror) does not draw after fb1 went")
            pts = re.search(r"on (/dev/pts/\d+)", r.consoled_log()).group(1)
            r.sh("cat %s > %s" % (path, pts))
            r.wait_equal(want0, "fb0 (mirror, fb1 unbound) differs from fbcon's picture")
        finally:
            r.vm.run("echo %s > /sys/bus/pci/drivers/bochs-drm/bind" % pci)
        r.wait_log("/tmp/consoled.log", "Took over /dev/fb1",
                   "consoled (mirror) did not take fb1 back after the rebind")
        r.wait_equal(want1, "fb1 back (mirror) is not fbcon's picture of fb1 in fb0's %dx%d grid"
                     % (cols, rows), grab=self.grab2)
        r.wait_equal(want0, "fb0 after fb1's rebind differs from fbcon's picture")
        r.stop_consoled()

    def check_rotate(self):
        r = self.r
        font = self.font
        self.load_second()
        r.start_consoled(font, "/usr/bin/env PS1='$ ' /bin/sh",
                         "--fbdev=/dev/fb0,/dev/fb1 --rotate=0,1")
        r.wait_text(font, prompt, "no prompt on fb0 (upright)")
        r.vm.send_text("echo turned-text\n")
        r.wait_text(font, lambda s: line_starting(s, "turned-text"),
                    "fb0 does not show the echo")
        self.wait2(lambda s: line_starting(s, "turned-text"),
                   "fb1 turned back does not show the echo (not turned a quarter clockwise?)",
                   turned=True)
        # a screen of fbdev='s list lets its framebuffer go too when it
        # moves to another seat (a VT's consoled is seat0's)
        self.move_fb1(r.sh("basename $(readlink %s/device)" % FB1).strip(), turned=True,
                      added=False)
        r.stop_consoled()
        # a font size per screen: 12 points on fb0 (640x480), 36 on fb1
        # (1280x800): fb1's grid is the smaller, the session's size; with
        # fb1 gone the session gets fb0's, with fb1 back fb1's again
        pci = r.sh("basename $(readlink %s/device)" % FB1).strip()
        r.start_consoled(None, "/usr/bin/env PS1='$ ' /bin/sh",
                         "--fbdev=/dev/fb0,/dev/fb1 --font-file=%s/DejaVuSansMono.ttf"
                         " --font-size=12,36" % initramfs.TTF_DIR)
        both = self.session_size()
        r.sh("echo %s > /sys/bus/pci/drivers/bochs-drm/unbind" % pci)
        try:
            alone = self.session_size(lambda size: size != both)
        finally:
            r.vm.run("echo %s > /sys/bus/pci/drivers/bochs-drm/bind" % pci)
        if not (alone[0] > both[0] and alone[1] > both[1]):
            r.fail("the session's size with fb1 at 36 points is %r, with fb0 alone %r: "
                   "not smaller" % (both, alone))
        again = self.session_size(lambda size: size == both)
        print("# session size: both %r, fb0 alone %r, fb1 back %r" % (both, alone, again))
        r.stop_consoled()

    def wait_fb0_in_fb1(self, w1, h1, what):
        """fb1 equals fb0's picture widened to fb1's w1 x h1 (the mirror's
        grid is fb0's; palette colours)."""
        r = self.r
        deadline = time.monotonic() + 20
        while True:
            img0 = r.stable_grab()
            want, img1 = self.widen(img0, w1, h1), self.grab2()
            if img1.data == want.data:
                return
            if time.monotonic() > deadline:
                diff = screen.compare(want, img1)
                r.fail("%s: %d pixels differ in %r" % (what, diff.count, diff.bbox), want, img1)
            time.sleep(0.3)

    def move_fb1(self, pci, turned=False, added=True):
        """fb1's card put on seat1 as `loginctl attach` does (the guest has
        no udevd: the card's udev database entry gets ID_SEAT, which fb1
        inherits as 73-seat-late.rules hands it down, then a `change`
        uevent): consoled lets fb1 go, wiped black (nothing of the session
        on a card another seat gets), and draws a typed line on fb0 only;
        back on seat0 (entry gone, `change`), the screen waiting at
        /dev/fb1 takes it again: no second screen (added: fb1 came as a
        screen of fbdev=all; turned: fb1 is turned a quarter)."""
        r = self.r
        db = "/run/udev/data/+pci:%s" % pci
        r.sh("mkdir -p /run/udev/data && echo E:ID_SEAT=seat1 > %s"
             " && echo change > %s/uevent" % (db, FB1))
        try:
            r.wait_log("/tmp/consoled.log", "is on seat1 now (udev's ID_SEAT), not seat0",
                       "consoled did not let fb1 go when it moved to seat1")
            # nothing of the session stays on a card another seat gets
            deadline = time.monotonic() + 5
            while True:
                img1 = self.grab2()
                if img1.data.count(0) == len(img1.data):
                    break
                if time.monotonic() > deadline:
                    path = r.vm.save_png(img1, "cirrus-moved-fb1.png")
                    r.fail("fb1 still shows the session's screen after it moved to seat1: "
                           "%d of %d bytes are not black (picture: %s)"
                           % (len(img1.data) - img1.data.count(0), len(img1.data), path))
                time.sleep(0.3)
            r.vm.send_text("echo moved-away\n")
            r.wait_text(self.font, lambda s: line_starting(s, "moved-away"),
                        "fb0 does not draw after fb1 moved to seat1")
            time.sleep(0.5)
            _, s1 = self.wait2(lambda s: True, "", turned=turned)
            if "moved-away" in s1.text():
                r.fail("fb1 was drawn on after it moved to seat1:\n" + s1.text())
        finally:
            r.vm.run("rm -f %s; echo change > %s/uevent" % (db, FB1))
        r.wait_log("/tmp/consoled.log", "Took over /dev/fb1",
                   "the screen did not take fb1 back when it came back to seat0")
        self.wait2(lambda s: line_starting(s, "moved-away"),
                   "fb1 back on seat0 does not show the session", turned=turned)
        if added and r.consoled_log().count("/dev/fb1 came on seat0") != 1:
            r.fail("fb1 was added twice:\n" + r.consoled_log())

    def check_hotplug(self):
        """--fbdev=all: fb1 bound while consoled runs becomes a screen."""
        r = self.r
        font = self.font
        log = "/tmp/consoled.log"
        w1, h1 = self.load_second()
        pci = r.sh("basename $(readlink %s/device)" % FB1).strip()
        drv = "/sys/bus/pci/drivers/bochs-drm/"

        def absent():
            r.sh("test -e %s && echo %s > %sunbind; while test -e /dev/fb1; do sleep 0.1;"
                 " done" % (FB1, pci, drv), timeout=20)

        def bind():
            r.vm.run("test -e %s || echo %s > %sbind" % (FB1, pci, drv))

        try:
            absent()
            r.start_shell(font, "--fbdev=all")
            r.wait_log(log, "(fbdev=all): taken: /dev/fb0; left out: none",
                       "consoled did not take fb0 alone")
            # added while tty2 is in front: drawn once tty1 is back
            r.sh("chvt 2")
            bind()
            r.wait_log(log, "/dev/fb1 shows the terminal in front",
                       "fb1 was not added to the mirror when bochs-drm was bound")
            pts = re.search(r"on (/dev/pts/\d+)", r.consoled_log()).group(1)
            r.sh("echo away-text > %s; sleep 1" % pts)
            _, s1 = self.wait2(lambda s: True, "")
            if prompt(s1) or "away-text" in s1.text():
                r.fail("fb1 was drawn while tty2 was in front:\n" + s1.text())
            r.sh("chvt 1")
            r.wait_text(font, lambda s: "away-text" in s.text(),
                        "fb0 does not show the output made while tty2 was in front")
            self.wait_fb0_in_fb1(w1, h1, "fb1 added (mirror) is not fb0's picture")
            for line in r.consoled_log().splitlines():
                if "fbdev=all" in line or "came on" in line or "shows the terminal" in line:
                    print("# " + line)
            r.vm.send_text("echo hotplug-line\n")
            r.wait_text(font, lambda s: line_starting(s, "hotplug-line"),
                        "fb0 does not show the echo")
            self.wait2(lambda s: line_starting(s, "hotplug-line"),
                       "fb1 added does not show the echo")
            self.move_fb1(pci)
            r.stop_consoled()
            # separate: fb1 that comes gets a session of its own
            absent()
            r.start_shell(font, "--fbdev=all --screens=separate")
            r.wait_log(log, "(fbdev=all): taken: /dev/fb0; left out: none",
                       "consoled (separate) did not take fb0 alone")
            bind()
            r.wait_log(log, "/dev/fb1 shows terminal 2, a session of its own",
                       "fb1 was not added with a terminal of its own")
            self.wait2(prompt, "no prompt on fb1 added")
            r.vm.send_text("echo one-$$\n")
            _, s0 = r.wait_text(font, lambda s: line_starting(s, "one-"),
                                "fb0's shell did not answer")
            pid0 = line_starting(s0, "one-").split("-")[-1]
            r.vm.send_keys(["ctrl", "alt", "meta_l", "right"], hold_ms=50)
            r.vm.send_text("echo two-$$\n")
            _, s1 = self.wait2(lambda s: line_starting(s, "two-"),
                               "after Ctrl+Alt+Logo+Right the keys do not reach fb1's shell")
            if line_starting(s1, "two-").split("-")[-1] == pid0:
                r.fail("fb1's shell is fb0's (pid %s)" % pid0)
            r.stop_consoled()
        finally:
            bind()

    def session_size(self, until=lambda size: True, timeout=20):
        """The session's pty size (rows, cols) once until(size) holds."""
        r = self.r
        deadline = time.monotonic() + timeout
        while True:
            m = re.search(r"on (/dev/pts/\d+)", r.consoled_log())
            if m:
                out, status = r.vm.run("stty size < %s" % m.group(1))
                if status == 0 and len(out.split()) == 2:
                    size = tuple(int(v) for v in out.split())
                    if until(size):
                        return size
            if time.monotonic() > deadline:
                r.fail("the session's size did not come as expected: %r\n%s"
                       % (out if m else None, r.consoled_log()))
            time.sleep(0.3)
