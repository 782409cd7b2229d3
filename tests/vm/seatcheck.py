"""A seat without VTs, checks of systemdtest.py's guest, run in its boot
(CHECKS, in this order, before weston).  The guest has two more cards,
bochs-displays (QEMU ids seat1vga and seat1vgb, their bochs DRM driver
blacklisted at boot so fb0 stays cirrusfb's), and a second USB keyboard
(kbd2) bound to seat1vga, so QMP input-send-event with device=seat1vga
types on kbd2 only while send-key types on the PS/2 keyboard (QEMU's
qemu_input_find_handler(): an event without a console never goes to a
bound handler).  Each card's framebuffer is found by its PCI address
(QMP query-pci, the guest's /sys/bus/pci/devices/*/graphics; seat_fb()),
not by its number (seat1vga's was fb1 and seat1vgb's fb2 so far).

  seat-start   bochs is loaded (a framebuffer for each card); fbcon
               draws the oracle text (vmtest.oracle_text(), the guest's
               Lat15-Fixed16 and the Linux palette, as the card guests'
               oracle checks) on seat1vga's: VT 9 mapped to it with
               FBIOPUT_CON2FBMAP (con2fb.c), shown, the text written, a
               screendump of seat1vga kept, VT 9 mapped back to fb0 and
               tty1 shown.  Then that card's DRM device, its framebuffer and
               kbd2 are attached to seat-b (loginctl attach): udev's rule
               (74-consoled-seat.rules) starts consoled-seat@seat\x2db by
               itself; its STATUS= names seat-b and that framebuffer, it
               opened no VT, the login prompt is on seat-b's screen
               (screendump of seat1vga), /etc/issue's \\l there names the
               session's pty, and tty1 still shows its own.  seat1vgb
               stays on seat0 (no consoled there) until seat-screens.
  seat-login   the test user logs in with keys typed on kbd2: the command's
               output shows on seat-b, not on tty1; logind has a session of
               the user with Seat=seat-b, no VT (VTNr=0), active; keys typed
               on the PS/2 keyboard (seat0) show on tty1's prompt, not on
               seat-b (then erased).
  seat-oracle  the shell on seat-b cats the same oracle text (the cursor
               hidden): seat-b's screendump equals fbcon's picture on the
               same card pixel for pixel.
  seat-terminals  Ctrl+Alt+F2 on kbd2 shows a second terminal with a login
               prompt of its own (a second consoled-session started); the
               user logs in there (logind makes that session the seat's
               ActiveSession); Ctrl+Alt+F1 shows the first again with the
               session's output and makes its session the ActiveSession
               again, Ctrl+Alt+F2 the second's; after the second's logout
               Ctrl+Alt+F1 makes the first's active; consoled never lets
               go of the seat meanwhile.  The screendump goes to
               <out>/systemd-seat-b.png.
  seat-restore a login on terminal 2 too, then kill -SEGV of
               consoled-seat@seat-b: systemd restarts it, the new consoled
               adopts both terminals' sessions from the fd store (journal),
               each terminal's screen (Ctrl+Alt+F1, F2) shows its session's
               output and typing on kbd2 reaches the same shell; the keys
               make each adopted session the seat's active one (F2, F1, F2:
               the helper's connection came back from the store); terminal
               2's logout, terminal 1 in front and active again.
  seat-options what works on a VT, on seat-b: a drop-in of the unit gives
               consoled --scroll-mode=redraw --rotate=1 (and the test
               build's 2 s bell flash); after a restart (the first
               terminal's session adopted) the journal says it scrolls by
               redraw, the screen is turned a quarter clockwise (its dump
               turned back shows a command's output), 300 lines scrolled
               equal a full redraw (Ctrl+Alt+F2, F1), a BEL written to the
               session's pty (after a text in the default colours alone)
               flashes the screen inverted pixel for pixel and the picture
               is back after it; without the drop-in, restarted
               again, the screen is upright.
  seat-grab    consoled restarted with fs.inotify.max_user_watches at 1 (no
               watch left for root): it adopts the session and says it
               reads logind's files every second; then the test user's
               program on seat-b takes its session's devices
               from logind (vtgrab logind: TakeControl, what a compositor
               does): consoled lets go (journal), keys typed on kbd2 reach
               no shell; after ReleaseControl consoled draws again and typing
               works; then the user logs out.
  seat-screens seat1vgb's DRM device and framebuffer are attached to
               seat-b too: the running consoled (fbdev=all, a seat's
               default) adds the framebuffer as a screen (journal), the
               login prompt is on both cards (screendumps of seat1vga and
               seat1vgb); the user logs in on kbd2 and a command's output
               shows on both.  Then seat1vga's card (seat-b's first, whose
               framebuffer registered first) goes back to seat0 (loginctl
               attach seat0): logind keeps seat-b (seat1vgb's card), and
               after consoled's grace for a seat's removal (2 s) and a
               second the unit is still active with the same MainPID and
               no restart since before the attach; consoled let the first
               card go (journal) and wiped it black; a command typed on
               kbd2 shows on seat1vgb below the first one's output (the
               same shell), seat-b has the same sessions; the user logs
               out.
  seat-stop    loginctl flush-devices gives the cards back to seat0:
               logind removes seat-b, consoled logs "logind removed the
               seat ... exiting with status 7" and exits; 2 s later the
               unit is inactive (Result success), not failed and not
               restarted.
  seat-wait    seat1vgb's framebuffer alone is attached to seat-c: udev's
               rule starts consoled-seat@seat\x2dc, but logind makes no
               seat of a device that is no master-of-seat
               (/run/systemd/seats/seat-c never comes): 10 s after its
               start consoled logs "logind has no such seat after 10 s:
               exiting with status 7"; the unit is inactive, not failed.
               Then loginctl flush-devices.
"""

import re
import time

import belltest
import screen
import screenstest
import vmlib

CHECKS = ["seat-start", "seat-login", "seat-oracle", "seat-terminals", "seat-restore",
          "seat-options", "seat-grab", "seat-screens", "seat-stop", "seat-wait"]

# A dash, as in logind's automatic seats (seat-PATH): the unit's instance
# is escaped (consoled-seat@seat\x2db.service) and %I gives the name back.
SEAT = "seat-b"
DISPLAY = "seat1vga"
# seat-screens: a second card for seat-b, kept on seat0 until then.
DISPLAY2 = "seat1vgb"
# (quoted for the guest's shell, which the harness hands unit names to)
# consoled's seat follows logind's files with inotify; seat-grab takes the
# watches away
INOTIFY_WATCHES = "/proc/sys/fs/inotify/max_user_watches"
SEAT_UNIT = "'consoled-seat@%s.service'" % SEAT.replace("-", "\\x2d")
# The second card and keyboard on the guest's QEMU command line.
QEMU_ARGS = ["-device", "bochs-display,id=%s" % DISPLAY,
             "-device", "bochs-display,id=%s" % DISPLAY2,
             "-device", "usb-kbd,id=kbd2,bus=xhci.0,display=%s" % DISPLAY]
# Modules: the cards' DRM driver (blacklisted at boot: loaded by seat-start).
MODULES = ["bochs"]
BLACKLIST = "blacklist bochs\n"
# The test tool that maps a VT to a framebuffer for fbcon (con2fb.c).
CON2FB = "/usr/local/libexec/consoled-test/con2fb"
# The VT fbcon draws the oracle on, mapped to seat-b's card meanwhile: above
# logind's NAutoVTs (6), so no getty starts there when it is shown.
ORACLE_VT = 9
# The oracle text (vmtest.oracle_text() at the card's width), readable by the
# test user's session on seat-b, and the script that shows it there.
ORACLE_TEXT = "/tmp/seat-oracle"
ORACLE_SCRIPT = "/tmp/seat-oracle.sh"
# seat-options: a drop-in of the seat's unit and the bell's flash (the test
# build's hook) long enough for a screendump.
OPTIONS_DROPIN = "'/run/systemd/system/%s.d/50-seatcheck.conf'" % SEAT_UNIT.strip("'")
FLASH_MS = 2000
# seat-screens: the drop-in that names both of seat-b's framebuffers.
# How long consoled waits for a seat's state file that went, and for one
# not there at its start (seat.h, SEAT_GONE_GRACE_SEC, SEAT_WAIT_SEC), before
# it exits with status 7.
SEAT_GONE_GRACE_SEC = 2
SEAT_WAIT_SEC = 10
# seat-wait: a seat of a framebuffer alone, which logind never makes.
WAIT_SEAT = "seat-c"
WAIT_UNIT = "'consoled-seat@%s.service'" % WAIT_SEAT.replace("-", "\\x2d")


def seat_fb(self, display):
    """The framebuffer (fbN) of the QEMU display device of that id, by
    its PCI address (QMP query-pci) and the guest's sysfs, not its number
    (the order the framebuffers registered in); None while it has none."""
    cache = self.__dict__.setdefault("seat_fbs", {})
    if display not in cache:
        path = None
        for bus in self.vm.qmp.cmd("query-pci"):
            for dev in bus["devices"]:
                if dev.get("qdev_id") == display:
                    path = "/sys/bus/pci/devices/0000:%02x:%02x.%x" % (
                        dev["bus"], dev["slot"], dev["function"])
        if path is None:
            self.fail("QEMU has no PCI device %s" % display)
        out, rc = self.vm.run("ls %s/graphics" % path)
        if rc != 0 or not re.fullmatch(r"fb\d+", out.strip()):
            return None
        cache[display] = out.strip()
    return cache[display]


def seat_wait_fbs(self, timeout=20):
    """After modprobe bochs: both cards' framebuffers (fbN of DISPLAY,
    DISPLAY2), logged."""
    deadline = time.monotonic() + timeout
    while not (seat_fb(self, DISPLAY) and seat_fb(self, DISPLAY2)):
        if time.monotonic() > deadline:
            self.fail("bochs made no framebuffer for %s and %s: %s" % (
                DISPLAY, DISPLAY2, self.sh("ls /sys/class/graphics; dmesg | tail -5")))
        time.sleep(0.5)
    self.sysd.log("framebuffers: %s %s, %s %s" % (DISPLAY, seat_fb(self, DISPLAY), DISPLAY2,
                                                  seat_fb(self, DISPLAY2)))
    return seat_fb(self, DISPLAY), seat_fb(self, DISPLAY2)


def seat_grab(self, display=DISPLAY):
    """seat-b's card (or the card of that QEMU id) as QEMU shows it."""
    return self.vm.screendump(device=display)


def seat_grab_turned(self):
    """seat-b's card turned back from rotate=1 (upright text)."""
    return screenstest.turn_back(seat_grab(self))


def seat_wait(self, predicate, what, timeout=30, turned=False, display=DISPLAY):
    """Wait until seat-b's decoded screen (turned: turned back from
    rotate=1; display: the card of that QEMU id) satisfies predicate; fail
    with it."""
    img, decoded = self.vm.wait_screen(self.sysd.vmtest.load_font(self.sysd.FONT), predicate,
                                       timeout=timeout, interval=0.5,
                                       grab=lambda: (seat_grab_turned(self) if turned
                                                     else seat_grab(self, display)))
    if not predicate(decoded):
        path = self.vm.save_png(img, "systemd-%d-%s.png" % (self.n, display))
        self.fail("%s; seat-b shows:\n%s\n(picture: %s)" % (what, decoded.text(), path))
    return img, decoded


def seat_type(self, text):
    """Type text on kbd2 (seat-b's keyboard).

    QEMU's usb-kbd queues at most 16 key events and the guest's HID driver
    takes one per poll of the interrupt endpoint: a guest that stalls longer
    than the queue lasts loses keys (seen once at a host load of 8: "AFTER"
    typed, "AFER" shown).  A character's events go two per command, a pause
    after each: the queue rides out a stall of 0.2 s (shifted letters) to
    0.4 s."""
    for ch in text:
        qcodes = vmlib.char_to_qcodes(ch)
        for down, order in ((True, qcodes), (False, list(reversed(qcodes)))):
            self.vm.qmp.cmd("input-send-event", device=DISPLAY, events=[
                {"type": "key", "data": {"down": down, "key": {"type": "qcode", "data": q}}}
                for q in order])
            time.sleep(0.025)


def seat_combo(self, qcodes):
    ev = [{"type": "key", "data": {"down": True, "key": {"type": "qcode", "data": q}}}
          for q in qcodes]
    ev += [{"type": "key", "data": {"down": False, "key": {"type": "qcode", "data": q}}}
           for q in reversed(qcodes)]
    self.vm.qmp.cmd("input-send-event", device=DISPLAY, events=ev)


def seat_login(self, where):
    """The test user logs in at the login prompt in front on seat-b."""
    sysd = self.sysd
    seat_type(self, sysd.USER + "\n")
    seat_wait(self, lambda s: any(l.rstrip() == "Password:" for l in s.lines),
              "no password prompt on %s after the user name typed on kbd2" % where,
              sysd.LOGIN_WAIT)
    seat_type(self, sysd.PASSWORD + "\n")
    seat_wait(self, lambda s: any(l.startswith(sysd.SHELL_PROMPT) for l in s.lines),
              "no shell prompt on %s after the password" % where, sysd.LOGIN_WAIT)


def lines_with(decoded, text):
    return [l for l in decoded.lines if text in l]


def fbcon_oracle(self):
    """fbcon's picture of the oracle text on seat-b's card, before the card
    is seat-b's: VT ORACLE_VT mapped to its fb (FBIOPUT_CON2FBMAP), shown,
    the font loaded and the text written there; then the VT back on fb0
    (fbcon lets the card go) and tty1 again.  Kept as self.seat_fbcon for
    seat-oracle."""
    sysd = self.sysd
    vmtest = sysd.vmtest
    self.seat_fbcon = None
    fb = seat_fb(self, DISPLAY)
    xres = int(self.sh("cat /sys/class/graphics/%s/virtual_size" % fb).split(",")[0])
    text, _ = vmtest.oracle_text(sysd.FONT, xres // vmtest.load_font(sysd.FONT).width)
    self.put_file(ORACLE_TEXT, text)
    self.put_file(ORACLE_SCRIPT, ("cat %s; read x; printf '\\033[?25h\\033[H\\033[2J';"
                                  " echo SEAT1-42\n" % ORACLE_TEXT).encode())
    self.sh("chmod 644 %s %s" % (ORACLE_TEXT, ORACLE_SCRIPT))
    try:
        mapped = self.sh("%s /dev/%s %d %s && chvt %d && setfont -C /dev/tty%d %s && cat %s >"
                         " /dev/tty%d" % (CON2FB, fb, ORACLE_VT, fb[2:], ORACLE_VT, ORACLE_VT,
                                          sysd.GUEST_FONT, ORACLE_TEXT, ORACLE_VT)).strip()
        if mapped != fb[2:]:
            self.fail("VT %d is on fb%s, not %s" % (ORACLE_VT, mapped, fb))
        img = self.stable_grab(grab=lambda: seat_grab(self))
    finally:
        # back to fb0 while VT 9 is in front: a mapping changed behind
        # consoled@tty1's back resets fb0's mode under it
        self.sh("%s /dev/%s %d 0; chvt 1" % (CON2FB, fb, ORACLE_VT))
    decoded = screen.read_screen(img, vmtest.load_font(sysd.FONT))
    if not lines_with(decoded, "consoled pixel oracle") or not lines_with(decoded, "last line"):
        path = self.vm.save_png(img, "systemd-%d-seat-fbcon.png" % self.n)
        self.fail("fbcon's picture on %s does not show the oracle text:\n%s\n(picture: %s)"
                  % (fb, decoded.text(), path))
    self.seat_fbcon = img


def seat_card(self, fbname):
    """The sysfs paths of the framebuffer fbname and of its card's DRM
    device."""
    card = self.sh("ls -d /sys/class/graphics/%s/device/drm/card*" % fbname).split()
    if len(card) != 1:
        self.fail("the DRM device of %s's card not found: %r" % (fbname, card))
    return (self.sh("readlink -f /sys/class/graphics/%s" % fbname).strip(),
            self.sh("readlink -f %s" % card[0]).strip())


def check_seat_start(self):
    sysd = self.sysd
    self.sh("modprobe bochs")
    fbname, _ = seat_wait_fbs(self)
    # the DRM device (logind's master-of-seat, which makes the seat) and
    # the framebuffer (tagged "seat" by 71-seat.rules; a child of the PCI
    # device, not of the DRM device, so it needs its own attach)
    fbcon_oracle(self)
    fb, card = seat_card(self, fbname)
    kbd = self.sh("for i in /sys/class/input/input*; do grep -q 'USB Keyboard' $i/name &&"
                  " readlink -f $i; done").split()
    if len(kbd) != 1:
        self.fail("expected one USB keyboard (kbd2), found %r" % kbd)
    self.sh("loginctl attach %s %s && loginctl attach %s %s && loginctl attach %s %s"
            % (SEAT, card, SEAT, fb, SEAT, kbd[0]))
    # logind's attach writes a rule and asks udev to look at the device
    # again, but udevd reads changed rules files at most every 3 s (systemd
    # 252, udev_rules_should_reload()): the events of three attaches in a
    # row may find the old rules. Once more after a reload, as logind asks.
    self.sh("udevadm control --reload && udevadm trigger --action=change %s %s %s &&"
            " udevadm settle -t 20" % (card, fb, kbd[0]), timeout=30)
    sysd.log("attached %s, %s and %s to %s; %s: %s" % (
        card, fb, kbd[0], SEAT, fbname, self.sh("udevadm info -q property %s |"
                                                " grep -E 'ID_SEAT|TAGS|SYSTEMD'"
                                                % fb).replace("\n", " ")))
    try:
        self.wait_unit(SEAT_UNIT, "the start by udev's rule",
                       lambda p: p["ActiveState"] == "active", timeout=30)
    except Exception:  # noqa: BLE001 -- CheckFailed, logged and raised again
        # what udev, logind and systemd made of it
        sysd.log(self.vm.run("cat /etc/udev/rules.d/72-seat*; loginctl seat-status %s"
                             " --no-pager" % SEAT, timeout=60)[0])
        raise
    state = self.unit(SEAT_UNIT, "MainPID")
    status = self.unit(SEAT_UNIT, "StatusText")["StatusText"]
    if not status.startswith("Running on %s, /dev/%s" % (SEAT, fbname)):
        self.fail("%s's STATUS= is %r" % (SEAT_UNIT, status))
    fds = self.sh("ls -l /proc/%s/fd" % state["MainPID"])
    if re.search(r"/dev/tty\d", fds):
        self.fail("consoled on %s holds a VT:\n%s" % (SEAT, fds))
    # /etc/issue's \\l names the session's pty there, not a VT
    seat_wait(self, lambda s: any(l.rstrip() == sysd.PROMPT for l in s.lines)
              and any(re.search(r" pts/\d+$", l.rstrip()) for l in s.lines),
              "no login prompt with the issue's line naming a pty on seat-b")
    self.wait_prompt("tty1 lost its login prompt")


def check_seat_login(self):
    sysd = self.sysd
    seat_wait(self, lambda s: any(l.rstrip() == sysd.PROMPT for l in s.lines),
              "no login prompt on seat-b")
    cursor = self.journal_cursor()
    seat_login(self, "seat-b")
    seat_type(self, "echo SEAT1-$((6*7))\n")
    seat_wait(self, lambda s: any(l.rstrip() == "SEAT1-42" for l in s.lines),
              "the command typed on kbd2 did not run on seat-b")
    # logind names the new session active before it writes the session's
    # file: consoled must not take that moment for another session's
    log = self.journal_since(cursor, "-o cat -u " + SEAT_UNIT)
    if "letting go" in log:
        self.fail("consoled let go of seat-b at a login on its own terminal:\n" + log[-3000:])
    out = self.sh("loginctl list-sessions --no-legend")
    ids = [l.split()[0] for l in out.splitlines() if SEAT in l.split()]
    if len(ids) != 1:
        self.fail("expected one logind session on %s:\n%s" % (SEAT, out))
    props = self.sh("loginctl show-session %s -p Seat -p VTNr -p Active -p TTY -p Name" % ids[0])
    sysd.log("the session on %s: %s" % (SEAT, props.replace("\n", " ")))
    want = {"Seat": SEAT, "VTNr": "0", "Active": "yes", "Name": sysd.USER}
    got = dict(l.split("=", 1) for l in props.splitlines() if "=" in l)
    if any(got.get(k) != v for k, v in want.items()) or not got.get("TTY", "").startswith("pts/"):
        self.fail("the session on %s is %r, expected %r and a pty" % (SEAT, got, want))
    # kbd2's keys never reached seat0: tty1 shows its prompt alone
    _, decoded = self.vm.wait_screen(sysd.vmtest.load_font(sysd.FONT), lambda s: True)
    if any("SEAT1" in l or sysd.USER in l or "Password" in l for l in decoded.lines):
        self.fail("keys typed on kbd2 reached tty1:\n" + decoded.text())
    self.wait_prompt("tty1 lost its login prompt")
    # the PS/2 keyboard's keys reach seat0 only
    self.vm.send_text("seatzero")
    self.wait_text(sysd.FONT, lambda s: any(l.rstrip() == sysd.PROMPT + " seatzero"
                                            for l in s.lines),
                   "keys typed on the PS/2 keyboard did not reach tty1")
    img, decoded = seat_wait(self, lambda s: True, "")
    if lines_with(decoded, "seatzero"):
        self.fail("keys typed on seat0's keyboard reached seat-b:\n" + decoded.text())
    for _ in "seatzero":
        self.vm.send_keys(["backspace"], 10)
    self.wait_prompt("the typed text did not go from tty1's prompt",
                     lambda s: "seatzero" not in s.text())


def check_seat_oracle(self):
    sysd = self.sysd
    if getattr(self, "seat_fbcon", None) is None:
        self.fail("no picture of fbcon's on fb1 (seat-start)")
    seat_type(self, "sh %s\n" % ORACLE_SCRIPT)
    try:
        self.wait_equal(self.seat_fbcon, "consoled's oracle text on seat-b differs from fbcon's"
                        " on the same card", grab=lambda: seat_grab(self))
    finally:
        # the script's read: the shell comes back for the next checks
        seat_type(self, "\n")
    seat_wait(self, lambda s: any(l.rstrip() == "SEAT1-42" for l in s.lines)
              and any(l.startswith(sysd.SHELL_PROMPT) for l in s.lines)
              and not lines_with(s, "consoled pixel oracle"),
              "the shell did not come back after the oracle text on seat-b")


def seat_sessions(self):
    out = self.sh("loginctl list-sessions --no-legend")
    return [l.split()[0] for l in out.splitlines() if SEAT in l.split()]


def seat_wait_active(self, want, what, timeout=15):
    """Wait until seat-b's ActiveSession is want; fail with what."""
    deadline = time.monotonic() + timeout
    while True:
        got = self.sh("loginctl show-seat %s -p ActiveSession --value" % SEAT).strip()
        if got == want:
            return
        if time.monotonic() > deadline:
            self.fail("%s: seat-b's ActiveSession is %r, expected %r" % (what, got, want))
        time.sleep(0.5)


def check_seat_terminals(self):
    sysd = self.sysd
    first = seat_sessions(self)
    if len(first) != 1:
        self.fail("expected terminal 1's session alone on %s, found %r" % (SEAT, first))
    seat_combo(self, ["ctrl", "alt", "f2"])
    seat_wait(self, lambda s: any(l.rstrip() == sysd.PROMPT for l in s.lines)
              and not lines_with(s, "SEAT1-42"),
              "Ctrl+Alt+F2 on kbd2 did not show a second terminal with a login prompt")
    # a login on terminal 2: logind makes the new session the seat's active one
    seat_login(self, "terminal 2 of seat-b")
    second = [i for i in seat_sessions(self) if i not in first]
    if len(second) != 1:
        self.fail("expected one new session on %s, found %r" % (SEAT, second))
    seat_wait_active(self, second[0], "after the login on terminal 2")
    # (the login itself may let go for a moment: logind writes the seat's
    # ACTIVE= before the new session's file)
    cursor = self.journal_cursor()
    # the terminal in front is the seat's active session, both ways
    seat_combo(self, ["ctrl", "alt", "f1"])
    seat_wait(self, lambda s: any(l.rstrip() == "SEAT1-42" for l in s.lines),
              "Ctrl+Alt+F1 on kbd2 did not bring the first terminal back")
    seat_wait_active(self, first[0], "Ctrl+Alt+F1 did not make terminal 1's session active")
    seat_combo(self, ["ctrl", "alt", "f2"])
    seat_wait(self, lambda s: any(l.startswith(sysd.SHELL_PROMPT) for l in s.lines)
              and not lines_with(s, "SEAT1-42"),
              "Ctrl+Alt+F2 on kbd2 did not bring terminal 2's shell back")
    seat_wait_active(self, second[0], "Ctrl+Alt+F2 did not make terminal 2's session active")
    # its logout leaves the seat's active session to the next key
    seat_type(self, "exit\n")
    seat_wait(self, lambda s: any(l.rstrip() == sysd.PROMPT for l in s.lines)
              and not any(l.startswith(sysd.SHELL_PROMPT) for l in s.lines),
              "no login prompt on terminal 2 after its logout", sysd.LOGIN_WAIT)
    seat_combo(self, ["ctrl", "alt", "f1"])
    img, _ = seat_wait(self, lambda s: any(l.rstrip() == "SEAT1-42" for l in s.lines),
                       "Ctrl+Alt+F1 on kbd2 did not bring the first terminal back")
    seat_wait_active(self, first[0], "Ctrl+Alt+F1 after terminal 2's logout did not make "
                     "terminal 1's session active")
    path = self.vm.save_png(img, "systemd-seat-b.png")
    sysd.log("seat-b's screen: %s" % path)
    # switching between its own terminals never gave the seat away
    log = self.journal_since(cursor, "-o cat -u " + SEAT_UNIT)
    if "letting go" in log:
        self.fail("consoled let go of seat-b while switching its terminals:\n" + log[-3000:])
    sysd.log("consoled-session: " + " / ".join(
        l for l in self.journal_since(cursor, "-o cat -u 'consoled-session@*'").splitlines()
        if "ctivat" in l)[-600:])
    # a session of its own: a second consoled-session instance ran
    out = self.sh("journalctl --no-pager -o cat -u 'consoled-session@*' | grep -c 'on %s for'"
                  % SEAT)
    if int(out.strip() or 0) < 2:
        self.fail("consoled-session started %s session(s) on %s, expected 2" % (out.strip(), SEAT))


def check_seat_restore(self):
    sysd = self.sysd
    seat_wait(self, lambda s: any(l.rstrip() == "SEAT1-42" for l in s.lines),
              "the first terminal's session is not on seat-b before the crash")
    first = self.sh("loginctl show-seat %s -p ActiveSession --value" % SEAT).strip()
    # terminal 2 with a shell of its own: kept too, under fd names of its own
    seat_combo(self, ["ctrl", "alt", "f2"])
    seat_wait(self, lambda s: any(l.rstrip() == sysd.PROMPT for l in s.lines)
              and not lines_with(s, "SEAT1-42"),
              "Ctrl+Alt+F2 on kbd2 did not show terminal 2's login prompt")
    seat_login(self, "terminal 2 of seat-b")
    second = [i for i in seat_sessions(self) if i != first]
    if len(second) != 1:
        self.fail("expected one session on terminal 2 of %s, found %r" % (SEAT, second))
    seat_wait_active(self, second[0], "after the login on terminal 2")
    seat_type(self, "echo TERM2-$((6*7))\n")
    seat_wait(self, lambda s: any(l.rstrip() == "TERM2-42" for l in s.lines),
              "terminal 2's shell did not answer before the crash")
    seat_combo(self, ["ctrl", "alt", "f1"])
    seat_wait(self, lambda s: any(l.rstrip() == "SEAT1-42" for l in s.lines),
              "Ctrl+Alt+F1 on kbd2 did not bring the first terminal back before the crash")
    before = self.unit(SEAT_UNIT, "MainPID", "NRestarts")
    cursor = self.journal_cursor()
    self.sh("kill -SEGV %s" % before["MainPID"])
    self.wait_unit(SEAT_UNIT, "the restart after SIGSEGV",
                   lambda p: p["ActiveState"] == "active" and p["MainPID"] != before["MainPID"]
                   and p["MainPID"] != "0", timeout=30)
    deadline = time.monotonic() + 20
    # both terminals' sessions adopted at start (terminal 2 behind terminal 1)
    while self.journal_since(cursor, "-o cat -u " + SEAT_UNIT).count("Adopted the session") < 2:
        if time.monotonic() > deadline:
            self.fail("the restarted consoled did not adopt both terminals' sessions; it "
                      "logged:\n" + self.journal_since(cursor, "-o cat -u " + SEAT_UNIT)[-3000:])
        time.sleep(0.5)
    seat_wait(self, lambda s: any(l.rstrip() == "SEAT1-42" for l in s.lines),
              "the session's screen is not back on seat-b after the restart")
    seat_type(self, "echo AFTER-$((6*7))\n")
    seat_wait(self, lambda s: any(l.rstrip() == "AFTER-42" for l in s.lines)
              and any(l.rstrip() == "SEAT1-42" for l in s.lines),
              "typing on kbd2 after the restart did not reach the same shell")
    seat_combo(self, ["ctrl", "alt", "f2"])
    seat_wait(self, lambda s: any(l.rstrip() == "TERM2-42" for l in s.lines)
              and not lines_with(s, "SEAT1-42"),
              "Ctrl+Alt+F2 after the restart did not bring terminal 2's screen back")
    # the adopted sessions are activated by the keys as before the crash
    # (their helpers' connections came back from the fd store)
    seat_wait_active(self, second[0], "Ctrl+Alt+F2 after the restart did not make terminal "
                     "2's adopted session active")
    seat_type(self, "echo TERM2-AFTER-$((6*7))\n")
    seat_wait(self, lambda s: any(l.rstrip() == "TERM2-AFTER-42" for l in s.lines)
              and any(l.rstrip() == "TERM2-42" for l in s.lines),
              "typing on terminal 2 after the restart did not reach the same shell")
    seat_combo(self, ["ctrl", "alt", "f1"])
    seat_wait(self, lambda s: any(l.rstrip() == "AFTER-42" for l in s.lines),
              "Ctrl+Alt+F1 after the restart did not bring terminal 1 back")
    seat_wait_active(self, first, "Ctrl+Alt+F1 after the restart did not make terminal 1's "
                     "adopted session active")
    seat_combo(self, ["ctrl", "alt", "f2"])
    seat_wait(self, lambda s: any(l.rstrip() == "TERM2-AFTER-42" for l in s.lines),
              "Ctrl+Alt+F2 did not bring terminal 2 back")
    # its logout, and terminal 1 in front again for the checks that follow
    seat_type(self, "exit\n")
    seat_wait(self, lambda s: any(l.rstrip() == sysd.PROMPT for l in s.lines)
              and not any(l.startswith(sysd.SHELL_PROMPT) for l in s.lines),
              "no login prompt on terminal 2 after its logout", sysd.LOGIN_WAIT)
    seat_combo(self, ["ctrl", "alt", "f1"])
    seat_wait(self, lambda s: any(l.rstrip() == "SEAT1-42" for l in s.lines),
              "Ctrl+Alt+F1 on kbd2 did not bring the first terminal back after the restart")
    seat_wait_active(self, first, "Ctrl+Alt+F1 after the restart did not make terminal 1's "
                     "session active")


def seat_restart(self, what):
    """Restart seat-b's unit; wait until the first terminal's session is
    adopted; the journal's cursor from before."""
    cursor = self.journal_cursor()
    self.sh("systemctl daemon-reload && systemctl restart " + SEAT_UNIT, timeout=60)
    deadline = time.monotonic() + 30
    while "Adopted the session" not in self.journal_since(cursor, "-o cat -u " + SEAT_UNIT):
        if time.monotonic() > deadline:
            self.fail("%s: the first terminal's session was not adopted; it logged:\n%s"
                      % (what, self.journal_since(cursor, "-o cat -u " + SEAT_UNIT)[-3000:]))
        time.sleep(0.5)
    return cursor


def check_seat_options(self):
    sysd = self.sysd
    consoled = self.sh("command -v consoled").strip()
    self.sh("mkdir -p %s" % OPTIONS_DROPIN.rsplit("/", 1)[0] + "'")
    self.put_file(OPTIONS_DROPIN, (
        "[Service]\nEnvironment=CONSOLED_TEST_BELL_FLASH_MS=%d\nExecStart=\n"
        "ExecStart=%s --seat=%%I --session-socket=/run/consoled-session.sock"
        " --scroll-mode=redraw --rotate=1\n" % (FLASH_MS, consoled)).encode())
    try:
        cursor = seat_restart(self, "the restart with --scroll-mode=redraw --rotate=1")
        log = self.journal_since(cursor, "-o cat -u " + SEAT_UNIT)
        if "Scrolling: mode redraw, full-screen scrolls by redraw" not in log:
            self.fail("consoled on seat-b does not scroll by redraw:\n" + log[-3000:])
        # rotate=1: the text reads upright on the glass turned back
        seat_type(self, "echo turned-$((6*7))\n")
        seat_wait(self, lambda s: any(l.rstrip() == "turned-42" for l in s.lines),
                  "seat-b's screen is not turned a quarter (rotate=1)", turned=True)
        # a forced strategy: 300 lines scrolled equal a full redraw
        # (Ctrl+Alt+F2 and F1: the first terminal drawn again)
        seat_type(self, "seq -f 'scrolled %g' 1 300\n")
        seat_wait(self, lambda s: any(l.rstrip() == "scrolled 300" for l in s.lines)
                  and any(l.startswith(sysd.SHELL_PROMPT) for l in s.lines[-5:]),
                  "300 lines did not scroll on seat-b", turned=True)
        scrolled = self.stable_grab(grab=lambda: seat_grab(self))
        seat_combo(self, ["ctrl", "alt", "f2"])
        seat_wait(self, lambda s: any(l.rstrip() == sysd.PROMPT for l in s.lines)
                  and not lines_with(s, "scrolled"),
                  "Ctrl+Alt+F2 did not show the second terminal (turned)", turned=True)
        seat_combo(self, ["ctrl", "alt", "f1"])
        self.wait_equal(scrolled, "the lines scrolled by redraw on seat-b differ from a full"
                        " redraw", grab=lambda: seat_grab(self))
        # the bell: a BEL written to the session's pty flashes seat-b's
        # screen (inverted), then the screen is as before; on a screen of
        # the default colours alone (the prompt is coloured), written there too
        tty = self.sh("loginctl show-session $(loginctl list-sessions --no-legend | awk"
                      " '$4 == \"%s\" {print $1}' | head -n 1) -p TTY --value" % SEAT).strip()
        self.sh("printf '\\033[0m\\033[H\\033[2Jthe bell on seat-b\\n' > /dev/%s" % tty)
        seat_wait(self, lambda s: s.lines and s.lines[0].rstrip() == "the bell on seat-b",
                  "the text written to the session's pty is not on seat-b", turned=True)
        before = self.stable_grab(grab=lambda: seat_grab(self))
        self.sh("printf '\\a' > /dev/%s" % tty)
        want = belltest.BellChecks(self, sysd.vmtest.load_font, sysd.FONT).inverted(before)
        deadline = time.monotonic() + FLASH_MS / 1000.0
        while True:
            img = seat_grab(self)
            if img == want or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        if img != want:
            d = screen.compare(want, img)
            self.fail("no flash of the screen inverted on seat-b after a BEL: %s"
                      % ("%d pixels differ in %r" % (d.count, d.bbox) if d else "?"),
                      want, img, tag="seat-flash")
        self.wait_equal(before, "seat-b after the flash", grab=lambda: seat_grab(self))
    finally:
        self.sh("rm -rf %s" % OPTIONS_DROPIN.rsplit("/", 1)[0] + "'")
        seat_restart(self, "the restart without the drop-in")
    seat_type(self, "echo upright-$((6*7))\n")
    seat_wait(self, lambda s: any(l.rstrip() == "upright-42" for l in s.lines),
              "seat-b is not upright after the drop-in went")


def check_seat_grab(self):
    # consoled started with no inotify watch left for root: it reads
    # logind's files every second instead, and the grab below is followed
    # that way; the limit is back at the end
    limit = self.sh("cat %s" % INOTIFY_WATCHES).strip()
    self.sh("systemctl daemon-reload")
    self.sh("echo 1 > %s" % INOTIFY_WATCHES)
    try:
        seat_grab_polled(self)
    finally:
        self.vm.run("echo %s > %s" % (limit, INOTIFY_WATCHES))


def seat_grab_polled(self):
    sysd = self.sysd
    cursor = self.journal_cursor()
    self.sh("systemctl restart " + SEAT_UNIT, timeout=60)
    deadline = time.monotonic() + 30
    while True:
        log = self.journal_since(cursor, "-o cat -u " + SEAT_UNIT)
        if "Adopted the session" in log and "reading it every second" in log:
            break
        if time.monotonic() > deadline:
            self.fail("consoled restarted without inotify watches did not adopt the session "
                      "and say it reads logind's files every second:\n" + log[-3000:])
        time.sleep(0.5)
    self.sh("rm -f /tmp/vtgrab.log /tmp/vtgrab.go /tmp/seat-leaked")
    seat_type(self, "%s logind /tmp/vtgrab.log /tmp/vtgrab.go; echo grab-$((6*7))\n" % sysd.VTGRAB)

    def wait_for(what, needle, read, timeout=30):
        deadline = time.monotonic() + timeout
        while needle not in read():
            if time.monotonic() > deadline:
                self.fail("%s:\n%s" % (what, read()[-3000:]))
            time.sleep(0.5)
    grab_log = lambda: self.vm.run("cat /tmp/vtgrab.log")[0]  # noqa: E731
    unit_log = lambda: self.journal_since(cursor, "-o cat -u " + SEAT_UNIT)  # noqa: E731
    wait_for("TakeControl on seat-b's session failed", "taken", grab_log)
    sysd.log("the session file: " + self.sh("cat /run/systemd/sessions/$(loginctl"
                                            " list-sessions --no-legend | awk '$4 == \"%s\""
                                            " {print $1}') | grep -E 'CONTROLLER|TTY|TYPE'"
                                            % SEAT).replace("\n", " "))
    wait_for("consoled did not let go of seat-b", "letting go", unit_log)
    seat_type(self, "touch /tmp/seat-leaked\n")
    time.sleep(2)
    self.sh("touch /tmp/vtgrab.go")
    wait_for("ReleaseControl failed", "released", grab_log)
    wait_for("consoled did not draw again", "drawing", unit_log)
    seat_wait(self, lambda s: any(l.rstrip() == "grab-42" for l in s.lines),
              "no grab-42 on seat-b after the release")
    if self.vm.run("test -e /tmp/seat-leaked")[1] == 0:
        self.fail("keys typed while the session was taken reached the shell")
    seat_type(self, "echo back-$((6*7))\n")
    seat_wait(self, lambda s: any(l.rstrip() == "back-42" for l in s.lines),
              "typing on seat-b after the release failed")
    seat_type(self, "exit\n")
    seat_wait(self, lambda s: any(l.rstrip() == sysd.PROMPT for l in s.lines)
              and not lines_with(s, "back-42"), "no login prompt after the logout")


def seat_attach(self, seat, paths):
    """loginctl attach of every path to seat, and the udev events again
    after a reload of the rules (see seat-start)."""
    self.sh(" && ".join("loginctl attach %s %s" % (seat, p) for p in paths))
    self.sh("udevadm control --reload && udevadm trigger --action=change %s &&"
            " udevadm settle -t 20" % " ".join(paths), timeout=30)


def check_seat_screens(self):
    sysd = self.sysd
    fbs = seat_wait_fbs(self)
    first, second = (seat_card(self, fb) for fb in fbs)
    cursor = self.journal_cursor()
    before = self.unit(SEAT_UNIT, "MainPID", "NRestarts")
    unit_log = lambda: self.journal_since(cursor, "-o cat -u " + SEAT_UNIT)  # noqa: E731
    # the second card on seat-b: the running consoled (fbdev=all, the
    # default on a seat) makes a screen of its framebuffer, mirrored
    seat_attach(self, SEAT, [second[1], second[0]])
    deadline = time.monotonic() + 20
    while "/dev/%s came on %s: a screen for it" % (fbs[1], SEAT) not in unit_log():
        if time.monotonic() > deadline:
            self.fail("consoled on seat-b did not add /dev/%s when its card came:\n%s"
                      % (fbs[1], unit_log()[-3000:]))
        time.sleep(0.5)
    for display in (DISPLAY, DISPLAY2):
        seat_wait(self, lambda s: any(l.rstrip() == sysd.PROMPT for l in s.lines),
                  "no login prompt on %s's card" % display, display=display)
    seat_login(self, "seat-b with two screens")
    seat_type(self, "echo SCREENS-$((6*7))\n")
    for display in (DISPLAY, DISPLAY2):
        seat_wait(self, lambda s: any(l.rstrip() == "SCREENS-42" for l in s.lines),
                  "the command typed on kbd2 is not on %s's card" % display,
                  display=display)
    sessions = seat_sessions(self)
    # the first card (seat-b's since seat-start) back to seat0: seat-b
    # keeps the second one, logind keeps the seat, consoled lets the first
    # go, wiped
    seat_attach(self, "seat0", [first[1], first[0]])
    sysd.log("seat-b after the first card went: " + self.sh(
        "loginctl seat-status %s --no-pager | grep -E 'drm|graphics'" % SEAT).replace(
            "\n", " "))
    # past the grace consoled gives a seat's state file: still running
    time.sleep(SEAT_GONE_GRACE_SEC + 1)
    after = self.unit(SEAT_UNIT, "ActiveState", "MainPID", "NRestarts")
    if (after["ActiveState"], after["MainPID"], after["NRestarts"]) != (
            "active", before["MainPID"], before["NRestarts"]):
        self.fail("%s is %r after the first card went back to seat0, was %r; it logged:\n%s"
                  % (SEAT_UNIT, after, before, unit_log()[-3000:]))
    if "/dev/%s (" % fbs[0] not in unit_log() or "is on seat0 now" not in unit_log():
        self.fail("consoled did not let /dev/%s go when its card went to seat0:\n%s"
                  % (fbs[0], unit_log()[-3000:]))
    seat_type(self, "echo STILL-$((6*7))\n")
    seat_wait(self, lambda s: any(l.rstrip() == "STILL-42" for l in s.lines)
              and any(l.rstrip() == "SCREENS-42" for l in s.lines),
              "the session on the second card did not go on after the first went back to"
              " seat0", display=DISPLAY2)
    # nothing of seat-b's session on the card seat0 has now
    img = seat_grab(self, DISPLAY)
    if img.data.count(0) != len(img.data):
        path = self.vm.save_png(img, "systemd-seat-moved.png")
        self.fail("the card given back to seat0 still shows seat-b's session (%s)" % path)
    if seat_sessions(self) != sessions:
        self.fail("seat-b's sessions were %r, are %r" % (sessions, seat_sessions(self)))
    seat_type(self, "exit\n")
    seat_wait(self, lambda s: any(l.rstrip() == sysd.PROMPT for l in s.lines)
              and not lines_with(s, "STILL-42"), "no login prompt after the logout",
              sysd.LOGIN_WAIT, display=DISPLAY2)


def check_seat_stop(self):
    cursor = self.journal_cursor()
    self.sh("loginctl flush-devices")
    self.wait_unit(SEAT_UNIT, "the stop when its card went back to seat0",
                   lambda p: p["ActiveState"] in ("inactive", "failed"),
                   timeout=30 + SEAT_GONE_GRACE_SEC)
    # no restart (RestartSec=1) after status 7, and no failure; systemd
    # may have unloaded the dead unit already (ExecMainStatus says 0 then)
    time.sleep(2)
    state = self.unit(SEAT_UNIT, "ActiveState", "Result")
    log = self.journal_since(cursor, "-o cat -u " + SEAT_UNIT)
    if "logind removed the seat (its last graphics card went): exiting with status 7" not in log \
            or "Scheduled restart" in log or state != {"ActiveState": "inactive",
                                                       "Result": "success"}:
        self.fail("%s did not end by the seat's removal (status 7, inactive, no restart): %r;"
                  " it logged:\n%s" % (SEAT_UNIT, state, log[-3000:]))


def check_seat_wait(self):
    """A seat logind never makes: seat1vgb's framebuffer alone on seat-c
    (no master device, so no /run/systemd/seats/seat-c)."""
    fb, _ = seat_card(self, seat_wait_fbs(self)[1])
    cursor = self.journal_cursor()
    try:
        seat_attach(self, WAIT_SEAT, [fb])
        # consoled started by udev's rule, waiting for the seat
        deadline = time.monotonic() + 30
        while "logind has no such seat yet" not in self.journal_since(
                cursor, "-o cat -u " + WAIT_UNIT):
            if time.monotonic() > deadline:
                self.fail("%s did not start waiting for %s; it logged:\n%s" % (
                    WAIT_UNIT, WAIT_SEAT,
                    self.journal_since(cursor, "-o cat -u " + WAIT_UNIT)[-3000:]))
            time.sleep(0.5)
        if self.vm.run("test -e /run/systemd/seats/" + WAIT_SEAT)[1] == 0:
            self.fail("logind made %s of a framebuffer alone" % WAIT_SEAT)
        self.wait_unit(WAIT_UNIT, "the exit %d s after the start" % SEAT_WAIT_SEC,
                       lambda p: p["ActiveState"] in ("inactive", "failed"),
                       timeout=SEAT_WAIT_SEC + 20)
        # (no restart after status 7: seat-stop waits for one)
        state = self.unit(WAIT_UNIT, "ActiveState", "Result")
        log = self.journal_since(cursor, "-o cat -u " + WAIT_UNIT)
        if ("logind has no such seat after %d s: exiting with status 7" % SEAT_WAIT_SEC) \
                not in log or "Scheduled restart" in log or state != {
                    "ActiveState": "inactive", "Result": "success"}:
            self.fail("%s did not end %d s after its start without logind's seat (status 7,"
                      " inactive): %r; it logged:\n%s"
                      % (WAIT_UNIT, SEAT_WAIT_SEC, state, log[-3000:]))
    finally:
        self.sh("loginctl flush-devices && udevadm settle -t 20", timeout=30)


def install(runner_class, sysd):
    """Adds the checks to systemdtest's Runner; sysd is systemdtest itself."""
    runner_class.sysd = sysd
    for name in CHECKS:
        setattr(runner_class, "check_" + name.replace("-", "_"),
                globals()["check_" + name.replace("-", "_")])
