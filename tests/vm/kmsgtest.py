#!/usr/bin/python3
"""Kernel messages over the session (daemon/seat.c, daemon/screen/overlay.h),
run by vmtest.py in the bochs and cirrus guests, with consoled started with
--kernel-messages-time=2 over an idle shell. The guest boots with
loglevel=4: levels 0-3 are shown.

  kmsg-band  `echo '<2>consoled-band-test' > /dev/kmsg` (the serial shell,
             root): a screendump 200 ms after the write returned shows the
             line in the band at the bottom, read with the screen text
             reader: "[ seconds.micros] consoled-band-test", blue behind
             every cell, the time bright green, the text bright yellow (an
             error level); the pixels that differ from the screen before
             are all in the band's rows; /dev/vcsu1 holds the line on the
             same row (the mirror). `<5>` and `<6>` messages do not show at
             the boot's level; after `dmesg -n 8` a `<6>` one does. Once
             the time is up the screen equals the screen before, pixel for
             pixel. Four <2> messages 0.3 s apart (each drawn before the
             next): the band shows the newest three (--kernel-messages-lines'
             default) and no "not shown" notice, for none was skipped.
  kmsg-view  Ctrl+Logo+K opens the view of every message since boot: its
             status line, and a `<6>` line written before (stored though
             not shown in the band) on the last row; Shift+PageUp pages
             back (the line leaves the screen); a typed key does not reach
             the session; Escape closes it and the screen equals the
             screen before, pixel for pixel; Ctrl+Logo+K opens and closes
             it again the same way. `/linux version` is typed into the
             status line and Enter brings the boot's first message to the
             top; `n` says none is before it. Held for 0.7 s (past the
             key repeat's delay) Ctrl+Logo+K opens the view once, and held
             again closes it: the log (--verbose) counts one opening.
             After a `cat` of 300 lines, with the
             usb-tablet plugged in: the view open, three wheel notches up,
             Escape: the screen equals the screen before (the wheel did not
             scroll the session's scrollback under the view).
  kmsg-vt    (bochs) --kernel-messages=3 and the kernel's level at 1 (so
             the kernel's own console on tty2 does not print it): a <2>
             message while tty2 is shown leaves tty2's screen as it was
             (consoled draws nothing while away); back on tty1 the band
             shows it.
  kmsg-blank (cirrus) --blank=3 --kernel-messages=3 (a fixed level, which
             does not hide the kernel's own): once the screen is black a <2> message
             does not wake it (the kernel's console never unblanks for a
             message); the console log level set to 15, as the kernel's
             console_verbose() does at an oops, and a message: the screen
             wakes (console_unblank()) and the band shows both messages.
  kmsg-real  a message the kernel prints itself, not one written to
             /dev/kmsg: after `dmesg -n 8`, `echo 1 >
             /proc/sys/vm/drop_caches` from a shell makes fs/drop_caches.c
             print "sh (PID): drop_caches: 1" at KERN_INFO (every time, until
             someone writes 4 there); `dmesg -r` holds it as the kernel's
             own (<6>, facility 0), and the band shows it with its time, in
             the band's text colour (white: not an error). The level set
             back, the band goes and the screen equals the screen before.
             SysRq's header ("sysrq: HELP : ...", KERN_INFO) is the
             kernel's too, but the kernel raises the console log level to
             7 only while it prints it and consoled reads the level after:
             at the boot's level 4 the serial console prints it and the band
             does not show it (logged, not asserted).
  kmsg-flood (bochs, cirrus) the session's `cat` of the benchmark's 20000
             lines (tests/bench/gen-lines.py) alone, then again while
             kmsgflood (tests/bench/kmsgflood.c) writes 20000 records of
             240 characters (4.8 MB) to /dev/kmsg in a burst (printk_devkmsg on for its writes, so the
             kernel's limit of 10 a writer does not drop them); consoled
             runs with --kernel-messages=8, so the <6> records are shown in
             the band but the kernel's serial console, at loglevel=4, prints
             none of them. During the flood a screendump shows the band's
             "-- N kernel messages not shown --" notice, and later the
             last record, "kmsg-flood 20000"; once the band is gone the
             screen holds the file's last lines and the prompt, each line
             exact. consoled's VmHWM after the flooded cat exceeds its
             figure after the plain cat by at most 2 MiB (the store is capped
             at 1 MiB; the other MiB for the allocator's slack and the band);
             a typed `echo` is answered. Both cat times go to the log (speed
             is measured by tests/bench/bench.py --kmsg, not asserted here).
"""

import importlib.util
import os
import re
import time

import pointertest
import screen

CARDS = ("bochs", "cirrus")
# kmsg-blank where blanking is checked (vmtest.py's blank: cirrus)
CHECKS = {"bochs": ["kmsg-band", "kmsg-view", "kmsg-vt", "kmsg-real", "kmsg-flood"],
          "cirrus": ["kmsg-band", "kmsg-view", "kmsg-blank", "kmsg-real", "kmsg-flood"]}

TIME = 2  # --kernel-messages-time
BOOT_LEVEL = 4  # vmlib.BASE_APPEND's loglevel=

# kmsg-flood: the benchmark's lines and burst (tests/bench/README.md, kmsg)
FLOOD = 20000
FLOOD_TEXT = "kmsg-flood"
# each record's text, padded with dots: 20000 of them are 4.8 MB, which the
# store's 1 MiB must cap (the kernel's own ring of 128 KiB loses some first)
FLOOD_SIZE = 240
# VmHWM after the flooded cat over the plain cat's (which has the
# scrollback full): the store's 1 MiB budget (kmsg.h; it counts each line's
# text, struct and slot) and a MiB for what it does not count: malloc's
# header and rounding of each small line, the slot array's doubling (old
# and new at once), the band. Measured: +1.4 MiB on bochs, +1.5 on cirrus;
# with the budget at 8 MiB, +4.2 MiB on bochs.
FLOOD_HWM_KIB = 2048
G_LINES = "/kmsg/lines"
G_FLOOD_SH = "/tmp/kflood.sh"
G_FLOOD_RES = "/tmp/kflood.result"
BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench")
# The session's side: the plain cat, consoled's VmHWM, the cat under the
# burst; each cat timed until consoled answers a cursor position request
# sent after it (it answers after parsing everything before, as in
# tests/bench/session.sh).
FLOOD_SH = r"""
n=$1 res=%(res)s
cpid=$(pidof consoled)
sync_term() {
	stty -icanon -echo min 1 time 0
	printf '\033[6n'
	reply=timeout
	if read -r -t 120 -d R r; then reply=${r#??}; fi
	stty icanon echo
}
t0=$EPOCHREALTIME
cat %(lines)s
sync_term
t1=$EPOCHREALTIME
echo "plain $t0 $t1 $reply" >$res.tmp
grep VmHWM /proc/$cpid/status >>$res.tmp
kmsgflood --text=%(text)s --size=%(size)d $n >$res.flood 2>&1 &
fl=$!
t0=$EPOCHREALTIME
cat %(lines)s
sync_term
t1=$EPOCHREALTIME
wait $fl
st=$?
echo "flood $t0 $t1 $reply $st" >>$res.tmp
mv $res.tmp $res
""" % {"res": G_FLOOD_RES, "lines": G_LINES, "text": FLOOD_TEXT, "size": FLOOD_SIZE}


def note(msg):
    """A TAP comment (vmtest.tap_note)."""
    print("# " + msg, flush=True)


def flood_lines():
    """The benchmark's input (tests/bench/gen-lines.py), FLOOD lines."""
    spec = importlib.util.spec_from_file_location("gen_lines", os.path.join(BENCH,
                                                                             "gen-lines.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.generate(FLOOD)


def guest_files(consoled):
    """({guest: data} files, {guest: host} binaries) kmsg-flood needs."""
    files, elves = {G_LINES: flood_lines().encode()}, {}
    tool = os.path.join(os.path.dirname(os.path.abspath(consoled)), "..", "tests", "bench",
                        "kmsgflood")
    if os.path.exists(tool):
        elves["/usr/bin/kmsgflood"] = os.path.normpath(tool)
    return files, elves


class KmsgChecks:
    def __init__(self, runner, load_font, font):
        self.r = runner
        self.vm = runner.vm
        self.font = font
        self.psf = load_font(font)
        self.pc = pointertest.PointerChecks(runner, None, load_font, font)
        self.checks = {"kmsg-band": self.check_band, "kmsg-view": self.check_view,
                       "kmsg-vt": self.check_vt,
                       "kmsg-blank": self.check_blank, "kmsg-real": self.check_real,
                       "kmsg-flood": self.check_flood}

    def start(self, extra=""):
        r = self.r
        r.sh("dmesg -n %d" % BOOT_LEVEL)  # whatever an earlier check left
        r.start_shell(self.font, extra="--kernel-messages-time=%d %s" % (TIME, extra))
        return r.stable_grab()

    def decode(self, img):
        return screen.read_screen(img, self.psf)

    def check_band(self):
        r = self.r
        before = self.start()
        fh = self.psf.height
        r.sh("echo '<2>consoled-band-test' > /dev/kmsg")
        time.sleep(0.2)
        img = self.vm.grab()
        s = self.decode(img)
        at = s.find("consoled-band-test")
        if at is None:
            path = self.vm.save_png(img, "%s-%d-band.png" % (r.card, r.n))
            r.fail("200 ms after a <2> message the screen does not show it:\n%s\n(picture: %s)"
                   % (s.text(), path))
        row, col = at
        line = s.lines[row].rstrip()
        if not re.fullmatch(r"\[ *\d+\.\d{6}\] consoled-band-test", line):
            r.fail("the band's line reads %r, expected \"[ seconds.micros] consoled-band-test\""
                   % line)
        if row < s.rows - 3:
            r.fail("the band's line is on row %d of %d, not at the bottom" % (row, s.rows))
        if set(s.bg[row]) != {4}:
            r.fail("the band's row has backgrounds %r, expected blue (4) only"
                   % sorted(set(s.bg[row])))
        text_fg = set(s.fg[row][col:col + len("consoled-band-test")])
        time_fg = set(f for ch, f in zip(line, s.fg[row]) if ch.isdigit())
        if text_fg != {11} or time_fg != {10}:
            r.fail("the band's text is drawn in %r and its time in %r, expected bright yellow"
                   " (11) and bright green (10)" % (sorted(text_fg), sorted(time_fg)))
        diff = screen.compare(before, img)
        if not diff or diff.bbox[1] < row * fh or diff.bbox[3] >= (row + 1) * fh:
            r.fail("with the band shown the screen differs from before in %r, not only in the"
                   " band's row (pixels %d-%d)" % (diff.bbox, row * fh, (row + 1) * fh - 1),
                   before, img)
        # the vcs mirror: the same row
        cols = int(r.sh("stty -F /dev/tty1 size").split()[1])
        deadline = time.monotonic() + 3
        while True:
            out = r.sh("dd if=/dev/vcsu1 bs=%d skip=%d count=1 2>/dev/null | od -An -tx4 -v"
                       % (4 * cols, row))
            mirrored = "".join(chr(int(v, 16)) for v in out.split()).rstrip()
            if mirrored == line:
                break
            if time.monotonic() > deadline:
                r.fail("/dev/vcsu1's row %d reads %r, the screen %r" % (row, mirrored, line))
            time.sleep(0.3)
        # below the console log level: not shown
        r.sh("echo '<5>consoled-band-notice' > /dev/kmsg; echo '<6>consoled-band-info' >"
             " /dev/kmsg")
        time.sleep(0.5)
        s = self.decode(self.vm.grab())
        if "consoled-band-notice" in s or "consoled-band-info" in s:
            r.fail("a <5> or <6> message shows at the console log level %d:\n%s"
                   % (BOOT_LEVEL, s.text()))
        # the kernel's level read live: dmesg -n 8 shows <6>
        r.sh("dmesg -n 8; echo '<6>consoled-band-info8' > /dev/kmsg")
        try:
            r.wait_text(self.font, lambda s: "consoled-band-info8" in s,
                        "a <6> message does not show after dmesg -n 8", timeout=3)
        finally:
            r.sh("dmesg -n %d" % BOOT_LEVEL)
        # the band goes: the session's pixels come back exactly
        r.wait_equal(before, "%d s after the last message the screen differs from before the"
                     " band" % TIME, timeout=TIME + 8)
        # a trickle: each message drawn before the next, none skipped
        for i in range(1, 5):
            r.sh("echo '<2>consoled-trickle-%d' > /dev/kmsg" % i)
            time.sleep(0.3)
        s = self.decode(self.vm.grab())
        shown = [i for i in range(1, 5) if "consoled-trickle-%d" % i in s]
        if shown != [2, 3, 4] or "not shown" in s:
            r.fail("after four messages 0.3 s apart the band shows %r, expected the newest"
                   " three and no notice:\n%s" % (shown, "\n".join(s.lines[-4:])))
        r.wait_equal(before, "the band of the trickle did not go", timeout=TIME + 8)
        r.stop_consoled()

    def view_open(self, s):
        return any(l.lstrip().startswith("Kernel messages ") for l in s.lines[:1])

    def check_view(self):
        r = self.r
        before = self.start("--verbose")
        r.sh("echo '<6>consoled-view-test' > /dev/kmsg")
        time.sleep(0.5)
        self.vm.send_keys(["ctrl", "meta_l", "k"])
        img, s = r.wait_text(self.font, lambda s: self.view_open(s) and any(
            l.rstrip().endswith("] consoled-view-test") for l in s.lines[-3:]),
            "Ctrl+Logo+K did not open the view with the newest message last", timeout=10)
        self.vm.send_keys(["shift", "pgup"])
        r.wait_text(self.font, lambda s: self.view_open(s) and "consoled-view-test" not in s,
                    "Shift+PageUp did not page the view back", timeout=10)
        # not for the session while the view is open
        self.vm.send_text("x")
        self.vm.send_keys(["esc"])
        r.wait_equal(before, "after Escape closed the view the screen differs from before",
                     timeout=10)
        self.vm.send_keys(["ctrl", "meta_l", "k"])
        r.wait_text(self.font, self.view_open, "Ctrl+Logo+K did not open the view again",
                    timeout=10)
        # a search, typed after `/` into the status line, back to the boot's
        # first message; `n` again finds none before it
        self.vm.send_text("/linux version")
        r.wait_text(self.font, lambda s: "find: linux version_" in s.lines[0],
                    "the search typed after / is not on the status line", timeout=10)
        self.vm.send_keys(["ret"])
        r.wait_text(self.font, lambda s: self.view_open(s) and "Linux version" in s.lines[1],
                    "Enter did not bring the boot's first message (Linux version) to the top",
                    timeout=10)
        self.vm.send_text("n")
        r.wait_text(self.font, lambda s: "not found before: linux version" in s.lines[0],
                    "n found a message before the first", timeout=10)
        self.vm.send_keys(["ctrl", "meta_l", "k"])
        r.wait_equal(before, "after Ctrl+Logo+K closed the view the screen differs from before",
                     timeout=10)
        # held down for 0.7 s (past the repeat's 250 ms delay, 30 a second
        # after it), the key opens the view once, and once more closes it:
        # it does not repeat
        log = r.consoled_log().count("view opens")
        for what in ("open", "close"):
            self.vm.qmp.cmd("send-key", keys=[{"type": "qcode", "data": q}
                                              for q in ("ctrl", "meta_l", "k")],
                            **{"hold-time": 700})
            time.sleep(1)
            if what == "open":
                r.wait_text(self.font, self.view_open, "Ctrl+Logo+K held for 0.7 s left the"
                            " view closed", timeout=10)
        r.wait_equal(before, "Ctrl+Logo+K held for 0.7 s did not close the view", timeout=10)
        opened = r.consoled_log().count("view opens") - log
        if opened != 1:
            r.fail("Ctrl+Logo+K held twice for 0.7 s opened the view %d times, not once (key"
                   " repeat)" % opened)
        # nor the pointer: the wheel would scroll the shell's scrollback
        r.put_file("/tmp/kmsg-long", b"".join(b"line %d\n" % i for i in range(1, 301)))
        self.vm.send_text("cat /tmp/kmsg-long\n")
        r.wait_text(self.font, lambda s: "line 300" in s, "cat did not show the file's end",
                    timeout=10)
        try:
            self.pc.wait_pointer_devices()
            time.sleep(3.5)  # the pointer's sprite hides 3 s after its last event
            before = r.stable_grab()
            self.vm.send_keys(["ctrl", "meta_l", "k"])
            r.wait_text(self.font, self.view_open, "Ctrl+Logo+K did not open the view over"
                        " the cat", timeout=10)
            self.vm.pointer_wheel(3, "tablet")
            time.sleep(0.5)
            self.vm.send_keys(["esc"])
            r.wait_equal(before, "with the view open three wheel notches up reached the"
                         " session: after Escape the screen differs from before", timeout=10)
        finally:
            self.pc.unplug_tablet()
        r.stop_consoled()

    def check_vt(self):
        r = self.r
        # a fixed level 3 and the kernel's at 1: consoled shows a <2>
        # message, the kernel's own console on tty2 does not print it
        r.start_shell(self.font, extra="--kernel-messages=3 --kernel-messages-time=60")
        before = r.stable_grab()
        try:
            # (fbcon's blinking cursor off: tty2's screen stays still)
            r.sh("printf '\\033[?25l' >/dev/tty2; dmesg -n 1; chvt 2")
            away = r.stable_grab()
            r.sh("echo '<2>consoled-while-away' > /dev/kmsg")
            time.sleep(1)
            if self.vm.grab().data != away.data:
                r.fail("a kernel message changed tty2's screen while consoled's VT was away",
                       away, self.vm.grab())
            r.sh("chvt 1")
            img, s = r.wait_text(self.font, lambda s: any(
                l.rstrip().endswith("] consoled-while-away") for l in s.lines[-3:]),
                "back on tty1 the band does not show the message that came while away",
                timeout=10)
        finally:
            r.sh("dmesg -n %d; chvt 1" % BOOT_LEVEL)
        if img.data == before.data:
            r.fail("back on tty1 the screen is as before the message")
        r.stop_consoled()

    def check_blank(self):
        r = self.r
        r.sh("dmesg -n %d" % BOOT_LEVEL)
        # a fixed level (<2> shows at 3): the kernel's own level is still
        # read, and its 15 at an oops still wakes the screen
        r.start_shell(self.font, extra="--blank=3 --kernel-messages-time=60 --kernel-messages=3")
        r.wait_black("the screen did not go black after 3 s without input")
        r.sh("echo '<2>consoled-blank-test' > /dev/kmsg")
        time.sleep(1.5)
        if any(self.vm.grab().data):
            r.fail("a kernel message woke the blanked screen")
        try:
            r.sh("echo 15 > /proc/sys/kernel/printk; echo '<2>consoled-oops-test' > /dev/kmsg")
            r.wait_text(self.font, lambda s: "consoled-blank-test" in s and
                        "consoled-oops-test" in s, "the console log level 15 (an oops) did"
                        " not wake the screen with both messages in the band", timeout=5)
        finally:
            r.sh("dmesg -n %d" % BOOT_LEVEL)
        if "an oops or a panic" not in r.consoled_log():
            r.fail("the log does not say why the screen woke:\n" + r.consoled_log())
        r.stop_consoled()

    def check_real(self):
        r = self.r
        before = self.start()
        try:
            # the shell that writes is the one named: "sh (its pid)"
            out = r.sh("dmesg -n 8; sh -c 'echo $$; echo 1 > /proc/sys/vm/drop_caches'")
            want = "sh (%s): drop_caches: 1" % out.split()[-1]
            img, s = r.wait_text(self.font, lambda s: want in s, "after dmesg -n 8 and a write"
                                 " to drop_caches the band does not show %r" % want, timeout=5)
        finally:
            r.sh("dmesg -n %d" % BOOT_LEVEL)
        raw = r.sh("dmesg -r | grep -F '%s' | tail -n 1" % want).strip()
        if not raw.startswith("<6>"):
            r.fail("the kernel's record reads %r, expected <6> (KERN_INFO, facility kernel)"
                   % raw)
        row, col = s.find(want)
        line = s.lines[row].rstrip()
        if not re.fullmatch(r"\[ *\d+\.\d{6}\] " + re.escape(want), line):
            r.fail("the band's line reads %r, expected \"[ seconds.micros] %s\"" % (line, want))
        fg = set(f for ch, f in zip(want, s.fg[row][col:]) if ch != " ")
        if row < s.rows - 3 or set(s.bg[row]) != {4} or fg != {15}:
            r.fail("the line is on row %d of %d with backgrounds %r and text colours %r,"
                   " expected the band at the bottom, blue (4), bright white (15)"
                   % (row, s.rows, sorted(set(s.bg[row])), sorted(fg)))
        r.wait_equal(before, "%d s after the message the screen differs from before the band"
                     % TIME, timeout=TIME + 8)
        # SysRq raises the console log level to 7 around its header and puts
        # it back before consoled reads /proc/sys/kernel/printk: at the
        # boot's level the kernel's console prints "sysrq: HELP", consoled
        # does not show it (a record does not say it was printed).
        r.sh("echo h > /proc/sysrq-trigger")
        time.sleep(1)
        note("sysrq h at level %d: the band %s" % (
            BOOT_LEVEL, "shows it" if "sysrq" in self.decode(self.vm.grab()).text().lower()
            else "does not show it"))
        r.stop_consoled()

    def hwm_kib(self, pid):
        out = self.r.sh("grep VmHWM /proc/%s/status" % pid)
        return int(out.split()[1])

    def check_flood(self):
        r = self.r
        if self.vm.run("test -x /usr/bin/kmsgflood && test -s %s" % G_LINES)[1] != 0:
            r.fail("no kmsgflood or %s in the guest (build tests/bench/kmsgflood)" % G_LINES)
        r.put_file(G_FLOOD_SH, FLOOD_SH.encode())
        r.sh("rm -f %s %s.tmp %s.flood" % ((G_FLOOD_RES,) * 3))
        lines = flood_lines().splitlines()
        self.start(extra="--kernel-messages=8")
        pid = r.consoled_pid()
        idle = self.hwm_kib(pid)
        self.vm.send_text("sh %s %d\n" % (G_FLOOD_SH, FLOOD))
        # the band's notice during the flood, then its last record
        last = "%s %d" % (FLOOD_TEXT, FLOOD)
        notice_re = re.compile(r"-- (\d+) kernel messages? not shown --")
        skipped, seen_last, deadline = [], False, time.monotonic() + 60
        while True:
            s = self.decode(self.vm.grab())
            m = notice_re.search(s.text())
            if m:
                skipped.append(int(m.group(1)))
            seen_last = seen_last or last in s
            if skipped and seen_last:
                break
            if time.monotonic() > deadline:
                path = self.vm.save_png(self.vm.grab(), "%s-%d-flood.png" % (r.card, r.n))
                r.fail("within 60 s the band showed %s, and %s its last record %r; the screen"
                       " now:\n%s\n(picture: %s)\nthe session's results:\n%s"
                       % ("the notice %r" % skipped if skipped else "no \"-- N kernel"
                          " messages not shown --\" notice", "" if seen_last else "not",
                          last, "\n".join(s.lines[-5:]), path,
                          self.vm.run("cat %s %s.tmp %s.flood; dmesg | tail -n 3"
                                      % ((G_FLOOD_RES,) * 3))[0]))
            time.sleep(0.1)
        out = r.sh("i=0; while [ ! -e %s ] && [ $i -lt 120 ]; do sleep 0.5; i=$((i+1)); done;"
                   " cat %s %s.flood" % (G_FLOOD_RES, G_FLOOD_RES, G_FLOOD_RES), timeout=90)
        res = {f[0]: f[1:] for f in (l.split() for l in out.splitlines()) if f}
        if "flood" not in res or "plain" not in res:
            r.fail("the session's script did not finish:\n" + out)
        plain_s = float(res["plain"][1]) - float(res["plain"][0])
        flood_s = float(res["flood"][1]) - float(res["flood"][0])
        if "timeout" in (res["plain"][2], res["flood"][2]) or res["flood"][3] != "0":
            r.fail("a cat got no cursor position reply, or kmsgflood failed:\n" + out)
        hwm_plain, hwm_flood = int(res["VmHWM:"][0]), self.hwm_kib(pid)
        note("cat of %d lines: %.3f s alone, %.3f s with %d kernel messages (%+.0f%%); %s"
             % (FLOOD, plain_s, flood_s, FLOOD, 100 * (flood_s / plain_s - 1),
                " ".join(res.get("kmsgflood:", []))))
        note("the band's notice counts seen: %s" % skipped)
        note("consoled VmHWM: idle %d KiB, after the cat %d KiB, after the flood %d KiB"
             % (idle, hwm_plain, hwm_flood))
        if hwm_flood > hwm_plain + FLOOD_HWM_KIB:
            r.fail("consoled's VmHWM went from %d KiB after the plain cat to %d KiB after the"
                   " flood, more than %d KiB" % (hwm_plain, hwm_flood, FLOOD_HWM_KIB))
        # the band gone: the cat's last lines and the prompt, exact

        def complete(s):
            rows = [l.rstrip() for l in s.lines]
            k = len(rows) - 1
            return s.lines[-1].startswith("$ ") and rows[:k] == lines[-k:]
        r.wait_text(self.font, complete, "after the band went the screen does not show the"
                    " file's last lines and the prompt", timeout=TIME + 10)
        self.vm.send_text("echo kflood-alive\n")
        r.wait_output(self.font, "echo kflood-alive", "kflood-alive",
                      "after the flood a typed echo was not answered")
        r.stop_consoled()
