#!/usr/bin/python3
"""consoled's selection and paste checks, run by
vmtest.py: select-paste and paste-keys in the bochs guest, select-shot in
both the cirrus (8 bpp) and the bochs (32 bpp) guest.  The pointer is QEMU's
usb-tablet, plugged in by the check (pointertest.PointerChecks), driven
through QMP.

  select-paste  a session shows three known lines (one with a wide CJK
                character and a combining sequence), then runs
                `cat > /tmp/selN` for each of: a double-click on a word, a
                triple-click on a line, a drag across two lines starting on
                the right half of the wide character; each pasted with the
                middle button and ended with Ctrl+D.  Each file holds exactly
                the selected text (the combining sequence as base + mark, the
                triple-clicked line with its newline).
  paste-keys    Shift+Insert pastes a double-clicked word into cat; a
                program that enabled bracketed paste (`printf '\\e[?2004h';
                cat -v`) reads it between ESC [ 200 ~ and ESC [ 201 ~; a
                buffer set through OSC 52 to a text holding ESC [ 201 ~, ^C,
                BEL and CR LF arrives neutralised (no ESC but the bracket's,
                no ^C: cat is not interrupted, newline as one line end); an
                OSC 52 query gets no answer (an OSC 11 query sent with it is
                answered: the capture works).  Then the session exits:
                in the one consoled starts next, neither the middle button
                nor Shift+Insert pastes anything.
  osc52-flood   while the session floods OSC 52 (93 of "\e]52;;QQ==\a" a
                write, a write every 20 ms and more: ~4000 a second), the
                copy shared as for a logged-in user (logind's files for the
                session's pty as sd-login reads them, since the guest has no
                logind, and /run/consoled), a key's echo comes within two
                frame intervals (2 x 16 ms) of an idle one: keylat
                (tests/bench/keylat.c) times 12 keys idle, 12 under the
                flood, 12 idle and 12 under the flood again, each from the
                key's uinput write to the first framebuffer poll that shows
                it; the mean of the two flooding medians must not exceed the
                mean of the two idle ones + 32 ms (medians, and phases in
                turn: TCG on a loaded host is noisy and its speed drifts).
                Then the flood ends with one last OSC 52, which must be the
                copy stored (/run/consoled/selection-0) and pasted by
                Shift+Insert.
  select-shot   a drag selection over coloured text is shown in reverse
                video: every selected cell of the screendump is the cell of
                the picture before with its two colours swapped, nothing
                else changed (the pointer hidden by a Shift press); the
                picture is saved as <out>/<card>-select-shot.png and its path
                printed.
  respawn-clean (cirrus, bochs) five sessions exit at once, a sixth leaves
                secrets on the alternate screen (dim and combined text:
                stand-ins), saved cursors (?1048, DECSC) and the main screen,
                and exits: the respawn is throttled, and during the pause a
                word of the old screen is double-clicked and a kernel
                message's band damages the vcs mirror, which must not show
                the old screen again (/dev/vcsu1).  In the next
                session neither the middle button nor Shift+Insert pastes
                it; modes 47 and 1047 (which do not erase) show an empty
                alternate screen with a marker at the home position (the
                ?1048 cursor of a new terminal); consoled's snapshot memfd
                (read through /proc, before: it holds the secrets) holds none
                of them, as text or as cells.
"""

import base64
import gzip
import re
import time

import pointertest
import screen

PASTE_CHECKS = ["select-paste", "paste-keys", "osc52-flood"]
SHOT_CHECKS = ["select-shot", "respawn-clean"]

# respawn-clean's session command: five sessions that exit at once when told (so that
# the respawn after the sixth is throttled), a sixth that leaves secrets on
# the alternate screen (dim and combined text: stand-ins), saved cursors and
# the main screen and exits when told, then a shell.
RESPAWN_SCRIPT = b"""n=$(cat /tmp/rc-n 2>/dev/null || echo 0); n=$((n + 1)); echo $n > /tmp/rc-n
if [ $n -eq 1 ]; then while [ ! -e /tmp/rc-start ]; do sleep 0.1; done; fi
if [ $n -le 5 ]; then exit 0; fi
if [ $n -eq 6 ]; then
printf '\\033[?1049h\\033[3;1H\\033[2mDIMSECRET\\033[0m e\\314\\201\\033[4;1HALTSECRET'
printf '\\033[5;20H\\033[?1048h\\0337\\033[?1049l\\033[?25lMAINSECRET words'
while [ ! -e /tmp/rc-go ]; do sleep 0.1; done
exit 0
fi
exec /usr/bin/env PS1='$ ' /bin/sh
"""
# What the snapshot and the screen must not hold after the respawn.
SECRETS = ("SECRET", "DIMS", "ALTS", "MAINS")

# The session's text: row 0..2, then the prompt on row 3.
LINES = ["alpha beta-gamma delta",
         "line two: \u4e2d\u6587 e\u0301x end",
         "third line here"]
PROMPT_ROW = len(LINES)

SHOT_TEXT = ("\033[0m\033[?25l\033[H\033[2J"
             "plain text on the first line\n"
             # (no blanks in colours: a blank cell shows only its background)
             "\033[31mred\033[0m and \033[1;34mbright-blue\033[0m and \033[42;30mblack-on-green\033[0m\n"
             "\033[33myellow\033[0m third line, selected up to here; not beyond\n"
             "last line, not selected")

# osc52-flood: the session (busybox sh on consoled's pty) and the bound.
OSC52_DIR = "/tmp/o52f"
OSC52_SESSION = r"""d=@DIR@
# logind's record of this session on this pty, as sd-login reads it
printf 'UID=0\nSTATE=active\nTTY=%s\n' "$(tty | sed 's|^/dev/||')" >/run/systemd/sessions/c1
stty icanon echo
printf '\033[0m\033[H\033[2J\033[?25l'
# cat in the background reads the keys (the line discipline echoes them).
# An echo goes out at once if the pty has room, else before the next
# write(): if consoled fell behind and the pty filled up, the kernel would
# take a write in pieces and an echo could fall into an OSC 52, which would
# swallow it. So the flood is 93 whole OSC 52 a write (1023 bytes: one
# write of the shell's printf, whose buffer on a tty is 1 KiB), then 20 ms
# of sleep (read -t, no process started): ~40 writes, ~4000 OSC 52 a second
# under TCG, which consoled parses in ~10% of its time (~25 us each, one
# share in 100 ms) and, sharing each one (~10 ms each), could not.
exec 3<&0
cat <&3 >/dev/null &
cat=$!
o=$(cat $d/flood)
mkfifo $d/tick
# flood STOP [LAST]: the flood until $d/STOP exists, then LAST's OSC 52
flood() {
	(exec 4<>$d/tick; n=0
	 while [ ! -e $d/$1 ]; do printf %s "$o"; read -t 0.02 x <&4; n=$((n + 1)); done
	 [ -z "$2" ] || printf '\033]52;c;%s\007' "$2"
	 echo $n >>$d/writes; touch $d/$1.done) &
}
touch $d/ready
# keylat: idle, flood, idle, flood (a slower or faster host shows in both)
while [ ! -e $d/e1 ]; do sleep 0.1; done
flood e2; touch $d/g1
while [ ! -e $d/e2.done ]; do sleep 0.1; done
touch $d/g2
while [ ! -e $d/e3 ]; do sleep 0.1; done
flood e4 @LAST@; touch $d/g3
while [ ! -e $d/e4.done ]; do sleep 0.1; done
kill $cat
printf '\033[?25h'
exec /usr/bin/env PS1='$ ' /bin/sh
""".replace("@DIR@", OSC52_DIR)
# Two frame intervals (FRAME_INTERVAL_USEC, daemon/screen/frame.h).
OSC52_ECHO_BOUND_MS = 2 * 16


class SelectChecks:
    def __init__(self, runner, oracle_text, load_font, font):
        self.r = runner
        self.vm = runner.vm
        self.font = font
        self.load_font = load_font
        self.pc = pointertest.PointerChecks(runner, oracle_text, load_font, font)
        self.checks = {
            "select-paste": self.pc.guarded(self.check_select_paste),
            "paste-keys": self.pc.guarded(self.check_paste_keys),
            "select-shot": self.pc.guarded(self.check_select_shot),
            "respawn-clean": self.pc.guarded(self.check_respawn_clean),
            "osc52-flood": self.check_osc52_flood,
        }

    # -- helpers --

    def move(self, col, row):
        x, y = self.pc.cell_center(col, row)
        self.vm.tablet_move(x, y, self.r.vm_xres, self.r.vm_yres)
        time.sleep(0.05)

    def click(self, col, row, count=1, button="left"):
        self.move(col, row)
        self.vm.pointer_click(button, "tablet", count=count, pause=0.03)
        time.sleep(0.2)

    def drag(self, c0, r0, c1, r1):
        self.move(c0, r0)
        self.vm.pointer_button("left", True)
        time.sleep(0.05)
        # through the cells in between, as a hand would
        self.move((c0 + c1) // 2, (r0 + r1) // 2)
        self.move(c1, r1)
        self.vm.pointer_button("left", False)
        time.sleep(0.2)

    def read_bytes(self, path):
        out, status = self.vm.run("od -An -tx1 -v %s" % path)
        if status != 0:
            return None
        return bytes(int(h, 16) for h in out.split())

    def wait_file(self, path, want, what, timeout=10):
        """Poll the guest file until it holds `want`; fail with what it holds."""
        deadline = time.monotonic() + timeout
        while True:
            got = self.read_bytes(path)
            if got == want:
                return
            if time.monotonic() > deadline:
                img = self.vm.grab()
                shown = screen.read_screen(img, self.load_font(self.font)).text()
                self.r.fail("%s: %s holds %r, not %r; the screen shows:\n%s\n(picture: %s)"
                            % (what, path, got, want, shown,
                               self.vm.save_png(img, "%s-select-fail.png" % self.r.card)))
            time.sleep(0.3)

    def type_line(self, text):
        self.vm.send_text(text + "\n")

    def ctrl_d(self):
        self.vm.send_combo(["ctrl", "d"])

    def wait_prompts(self, n, what, timeout=20):
        """Wait until the screen shows n lines starting with the prompt."""
        font = self.load_font(self.font)
        img, decoded = self.vm.wait_screen(
            font, lambda s: sum(1 for l in s.lines if l.startswith("$ ")) >= n,
            timeout=timeout)
        if sum(1 for l in decoded.lines if l.startswith("$ ")) < n:
            self.r.fail("%s; the screen shows:\n%s" % (what, decoded.text()))

    def start_session(self):
        self.r.sh("rm -f /tmp/sel1 /tmp/sel2 /tmp/sel3 /tmp/sel4 /tmp/bp /tmp/o52 /tmp/q")
        self.r.put_file("/tmp/seltext", "\n".join(LINES).encode("utf-8") + b"\n")
        self.r.start_consoled(
            self.font, "/bin/sh -c 'cat /tmp/seltext; exec /usr/bin/env PS1=\"$ \" /bin/sh'",
            extra="--verbose")
        self.wait_prompts(1, "no shell prompt")
        self.pc.wait_pointer_devices()

    def next_prompt(self, what, timeout=15):
        """Wait until the command reading the tty (cat, sh) has exited."""
        deadline = time.monotonic() + timeout
        while self.vm.run("pidof cat")[1] == 0:
            if time.monotonic() > deadline:
                self.r.fail("%s: cat still runs; consoled's log:\n%s"
                            % (what, self.r.consoled_log()))
            time.sleep(0.3)
        time.sleep(0.3)

    def paste_into(self, path, paste, want, what):
        """`cat > path`, paste, end with Ctrl+D (twice unless the text ends
        a line), and compare the file."""
        self.type_line("cat > %s" % path)
        time.sleep(0.5)
        paste()
        time.sleep(0.3)
        self.ctrl_d()
        if not want.endswith(b"\n"):
            time.sleep(0.2)
            self.ctrl_d()
        self.wait_file(path, want, what)
        self.next_prompt("no prompt after " + what)

    # -- checks --

    def check_select_paste(self):
        self.start_session()
        middle = lambda: self.click(40, PROMPT_ROW + 2, button="middle")  # noqa: E731

        # a word: "beta-gamma" (columns 6..15 of row 0)
        self.click(9, 0, count=2)
        self.paste_into("/tmp/sel1", middle, b"beta-gamma", "double-click on a word")
        # a line: row 1 with its newline
        self.click(3, 1, count=3)
        self.paste_into("/tmp/sel2", middle, LINES[1].encode("utf-8") + b"\n",
                        "triple-click on a line")
        # a drag from the right half of the wide character (column 11) to
        # the end of "third" on row 2
        self.drag(11, 1, 4, 2)
        self.paste_into("/tmp/sel3", middle,
                        ("\u4e2d\u6587 e\u0301x end\nthird").encode("utf-8"),
                        "drag across two lines")
        self.r.stop_consoled()

    def check_paste_keys(self):
        self.start_session()
        # Shift+Insert pastes what a double-click copied: "delta"
        self.click(19, 0, count=2)
        shift_insert = lambda: self.vm.send_combo(["shift", "insert"])  # noqa: E731
        self.paste_into("/tmp/sel1", shift_insert, b"delta", "Shift+Insert")

        # bracketed paste, seen by a program that enabled it
        self.r.put_file("/tmp/bp.sh", b"printf '\\033[?2004h'\ncat -v > $1\n"
                        b"printf '\\033[?2004l'\n")
        self.type_line("sh /tmp/bp.sh /tmp/bp")
        time.sleep(0.5)
        self.click(40, PROMPT_ROW + 6, button="middle")
        time.sleep(0.3)
        self.ctrl_d()
        time.sleep(0.2)
        self.ctrl_d()
        self.wait_file("/tmp/bp", b"^[[200~delta^[[201~", "bracketed paste")
        self.next_prompt("no prompt after the bracketed paste")

        # OSC 52 sets the buffer to "A ESC [201~ B ^C BEL C CR LF D"
        evil = b"A\x1b[201~B\x03\x07C\r\nD"
        self.r.put_file("/tmp/o52.sh",
                        b"printf '\\033]52;c;%s\\007'\n" % base64.b64encode(evil)
                        + b"printf '\\033[?2004h'\ncat -v > /tmp/o52\nprintf '\\033[?2004l'\n")
        self.type_line("sh /tmp/o52.sh")
        time.sleep(0.5)
        self.click(40, PROMPT_ROW + 8, button="middle")
        time.sleep(0.3)
        self.ctrl_d()
        time.sleep(0.2)
        self.ctrl_d()
        # no ESC but the bracket's, ^C and BEL gone (cat survived to write
        # the end of the bracket), CR LF one line end
        self.wait_file("/tmp/o52", b"^[[200~A[201~BC\nD^[[201~", "an OSC 52 text pasted")
        self.next_prompt("no prompt after the OSC 52 paste")

        # an OSC 52 query is not answered; the OSC 11 query after it is
        self.r.put_file("/tmp/q.sh",
                        b"stty -icanon -echo min 0 time 20\n"
                        b"printf '\\033]52;c;?\\007\\033]11;?\\007'\n"
                        b"cat -v > /tmp/q\nstty sane\n")
        self.type_line("sh /tmp/q.sh")
        self.wait_file("/tmp/q", b"^[]11;rgb:0000/0000/0000^G", "the answers to OSC 52 and 11 "
                       "queries")
        self.next_prompt("no prompt after the queries")

        # the session ends: the next one (consoled starts it again) pastes
        # nothing of what the last one copied
        self.type_line("exit")
        font = self.load_font(self.font)
        img, decoded = self.vm.wait_screen(
            font, lambda s: s.lines[0].startswith(LINES[0]) and
            not any("q.sh" in line for line in s.lines) and
            any(line.startswith("$ ") for line in s.lines), timeout=20)
        if any("q.sh" in line for line in decoded.lines):
            self.r.fail("no new session after exit; the screen shows:\n" + decoded.text())
        self.type_line("cat > /tmp/sel4")
        time.sleep(0.5)
        self.click(40, PROMPT_ROW + 2, button="middle")
        self.vm.send_combo(["shift", "insert"])
        time.sleep(0.3)
        self.ctrl_d()
        # (cat ends at the Ctrl+D only if nothing came before it)
        self.next_prompt("a paste in the next session")
        self.wait_file("/tmp/sel4", b"", "a paste in the next session", timeout=1)
        self.r.stop_consoled()

    def snapshot_bytes(self):
        """consoled's session-restore snapshot (its memfd), read through
        /proc, as bytes."""
        pid = self.r.consoled_pid()
        fds = self.r.sh("cd /proc/%s/fd && for f in *; do echo \"$f $(readlink $f)\"; done"
                        % pid).splitlines()
        memfds = [l.split()[0] for l in fds if "memfd:consoled-snapshot" in l]
        if len(memfds) != 1:
            self.r.fail("consoled holds %d snapshots, not one: %r" % (len(memfds), fds))
        out = self.r.sh("gzip -c /proc/%s/fd/%s | base64" % (pid, memfds[0]), timeout=60)
        return gzip.decompress(base64.b64decode("".join(out.split())))

    @staticmethod
    def holds(data, word):
        """`word` in data as text (the scrollback's records) or as the code
        points of consecutive 12-byte cells (the rows: the code point's low
        byte, then 0)."""
        want = word.encode()
        if want in data:
            return True
        for phase in range(12):
            firsts = bytes(data[i] if data[i + 1:i + 2] == b"\0" else 0xff
                           for i in range(phase, len(data), 12))
            if want in firsts:
                return True
        return False

    def check_respawn_clean(self):
        """A logout, then the throttled respawn's pause: the next session
        starts from nothing of the last one (its alternate screen shown
        with modes 47 and 1047, which do not erase, its ?1048 cursor, what
        was selected on its screen during the pause, the snapshot)."""
        font = self.load_font(self.font)
        self.r.sh("rm -f /tmp/rc-n /tmp/rc-start /tmp/rc-go /tmp/rc-paste")
        self.r.put_file("/tmp/rc.sh", RESPAWN_SCRIPT)
        self.r.start_consoled(self.font, "/bin/sh /tmp/rc.sh",
                              extra="--verbose --kernel-messages-time=1")
        self.pc.wait_pointer_devices()
        self.r.sh("touch /tmp/rc-start")
        img, decoded = self.r.wait_text(self.font, lambda s: "MAINSECRET words" in s,
                                        "the sixth session did not show its text")
        row = next(y for y, l in enumerate(decoded.lines) if "MAINSECRET" in l)
        col = decoded.lines[row].index("MAINSECRET") + 3
        # its snapshot holds the secrets (the check below can see them)
        snap = self.snapshot_bytes()
        if not self.holds(snap, "ALTSECRET") or not self.holds(snap, "MAINSECRET"):
            self.r.fail("the live session's snapshot does not hold its text")
        self.r.sh("touch /tmp/rc-go")
        deadline = time.monotonic() + 10
        while "waiting" not in self.r.consoled_log():
            if time.monotonic() > deadline:
                self.r.fail("the respawn was not throttled:\n" + self.r.consoled_log())
            time.sleep(0.2)
        # During the pause the old screen is still shown: a word of it is
        # selected (copied) there.
        self.click(col, row, count=2)
        img, decoded = self.vm.wait_screen(font, lambda s: True, timeout=1)
        if "MAINSECRET" not in decoded:
            self.r.fail("the pause ended before the selection was made (a slow host?); the"
                        " screen shows:\n" + decoded.text())
        # Nor does the VT's buffer (the vcs mirror) get the old screen back
        # during the pause: a kernel message's band damages the mirror.
        self.r.sh("echo '<2>respawn-pause' > /dev/kmsg")
        time.sleep(0.6)
        # (UTF-32: ASCII with three NULs after each character)
        if self.r.sh("tr -d '\\000' </dev/vcsu1 | grep -c SECRET; true").strip() != "0":
            self.r.fail("during the pause /dev/vcsu1 mirrors the ended session's screen again")
        self.r.wait_text(self.font, lambda s: any(l.startswith("$ ") for l in s.lines)
                         and "SECRET" not in s, "no fresh session after the pause", timeout=20)
        # Neither the middle button nor Shift+Insert pastes the word into
        # cat (once it reads the tty), before the line's end.
        self.type_line("cat > /tmp/rc-paste")
        deadline = time.monotonic() + 10
        while self.vm.run("pidof cat")[1] != 0:
            if time.monotonic() > deadline:
                self.r.fail("cat did not start")
            time.sleep(0.2)
        time.sleep(0.3)
        self.click(40, 8, button="middle")
        self.vm.send_combo(["shift", "insert"])
        time.sleep(0.3)
        self.type_line("")
        self.ctrl_d()
        self.next_prompt("a paste of the word selected during the pause")
        self.wait_file("/tmp/rc-paste", b"\n", "a paste of the word selected during the pause",
                       timeout=1)
        # The alternate screen as modes 47 and 1047 show it (without
        # erasing), written at the ?1048 cursor: a new terminal's, empty,
        # the cursor at home.
        for mode in (47, 1047):
            # (the marker written as AL\124: the command line does not show it)
            self.type_line("printf '\\033[?%dh\\033[?1048lAL\\124%d'; read x; printf '\\033[?%dl'"
                           % (mode, mode, mode))
            img, decoded = self.r.wait_text(
                self.font, lambda s: "ALT%d" % mode in s, "mode %d did not show" % mode)
            lines = [l.strip() for l in decoded.lines if l.strip()]
            if lines != ["ALT%d" % mode] or not decoded.lines[0].startswith("ALT%d" % mode):
                self.r.fail("mode %d shows the last session's alternate screen or cursor:\n%s"
                            % (mode, decoded.text()))
            self.type_line("")
            self.wait_prompts(1, "no prompt after mode %d" % mode)
        # Nor does the snapshot hold anything of it.
        snap = self.snapshot_bytes()
        for word in SECRETS:
            if self.holds(snap, word):
                self.r.fail("the new session's snapshot holds %r of the last one" % word)
        self.r.stop_consoled()

    def check_osc52_flood(self):
        d = OSC52_DIR
        last = b"the last copy, 52"
        # logind's files as sd-login reads them: root (the owner of the
        # session's pty) has session c1, whose record the session writes
        # with its pty's name; consoled shares through /run/consoled (which
        # it makes itself, mode 0700)
        self.r.sh("pkill -x keylat; rm -rf %s /run/systemd /run/consoled/selection-*;"
                  " mkdir -p %s /run/systemd/sessions /run/systemd/users &&"
                  " mkdir -p -m 0700 /run/consoled &&"
                  " printf 'ONLINE_SESSIONS=c1\\nACTIVE_SESSIONS=c1\\nSESSIONS=c1\\n'"
                  " >/run/systemd/users/0" % (d, d))
        # 93 OSC 52 (the session writes them over and over)
        self.r.sh("cd %s && for i in $(seq 93); do printf '\\033]52;;QQ==\\007'; done >flood"
                  % d)
        session = OSC52_SESSION.replace("@LAST@", base64.b64encode(last).decode())
        self.r.put_file(d + "/flood.sh", session.encode())
        if self.vm.run("test -x /usr/bin/keylat")[1] != 0:
            self.r.fail("no keylat in the guest (build tests/bench/keylat)")
        steps = ("wait-file {d}/ready sleep 500 echo 12 touch {d}/e1 wait-file {d}/g1 sleep 300"
                 " echo 12 touch {d}/e2 wait-file {d}/g2 sleep 300 echo 12 touch {d}/e3"
                 " wait-file {d}/g3 sleep 300 echo 12 touch {d}/e4".format(d=d))
        # (polls every millisecond: keylat shares the guest's CPU)
        self.r.sh("(keylat --poll-us=1000 %s >%s/keylat.log 2>&1; echo $? >%s/status)"
                  " </dev/null >/dev/null 2>&1 &" % (steps, d, d))
        try:
            # the keyboard exists before consoled starts
            self.r.sh("i=0; until grep -q created %s/keylat.log || [ $i -gt 100 ]; do"
                      " sleep 0.1; i=$((i + 1)); done" % d)
            self.r.start_consoled(self.font, "/bin/sh %s/flood.sh" % d)
            deadline = time.monotonic() + 600
            while self.vm.run("test -s %s/status" % d)[1] != 0:
                if time.monotonic() > deadline:
                    self.r.fail("keylat did not finish:\n" + self.r.sh("cat %s/keylat.log" % d))
                time.sleep(1)
            log = self.r.sh("cat %s/keylat.log; echo status $(cat %s/status)" % (d, d))
            found = re.findall(r"^echo n=(\d+) median_us=(\d+) p99_us=(\d+) max_us=(\d+)"
                               r" min_us=(\d+)$", log, re.M)
            if "status 0" not in log or len(found) != 4:
                self.r.fail("keylat failed (a key's echo did not show in time?):\n%s\n"
                            "consoled's log:\n%s"
                            % (log, self.r.consoled_log()))
            med = [int(f[1]) / 1000 for f in found]
            idle, flood = (med[0] + med[2]) / 2, (med[1] + med[3]) / 2
            figures = ("echo medians idle %.1f, %.1f ms, under the OSC 52 flood %.1f, %.1f ms"
                       " (max %.1f ms); %s writes of 93 OSC 52"
                       % (med[0], med[2], med[1], med[3], int(found[3][3]) / 1000,
                          " and ".join(self.r.sh("cat %s/writes" % d).split())))
            print("# osc52-flood: " + figures, flush=True)
            if flood > idle + OSC52_ECHO_BOUND_MS:
                self.r.fail("the echo under an OSC 52 flood is more than two frames (%d ms)"
                            " slower than idle: %s" % (OSC52_ECHO_BOUND_MS, figures))
            # the last copy is the one stored, and the one pasted
            self.wait_file("/run/consoled/selection-0", last, "the shared buffer after the"
                           " OSC 52 flood", timeout=5)
            self.wait_prompts(1, "no prompt after the OSC 52 flood")
            shift_insert = lambda: self.vm.send_combo(["shift", "insert"])  # noqa: E731
            self.paste_into(d + "/pasted", shift_insert, last, "Shift+Insert after the OSC 52"
                            " flood")
            self.r.stop_consoled()
        finally:
            self.vm.run("pkill -x keylat; touch %s/e2 %s/e4; rm -rf /run/systemd"
                        " /run/consoled/selection-*" % (d, d))

    def check_select_shot(self):
        path = "/tmp/shot-text"
        self.r.put_file(path, SHOT_TEXT.encode())
        self.r.sh("printf '\\033[H\\033[2J' > /dev/tty1")
        self.r.start_consoled(self.font, "/bin/sh -c 'cat %s; exec sleep 100000'" % path)
        self.pc.wait_pointer_devices()
        before = self.r.stable_grab()
        font = self.load_font(self.font)
        if "plain text on the first line" not in screen.read_screen(before, font).text():
            self.r.fail("consoled does not show the text: %s"
                        % screen.read_screen(before, font).text())
        # from column 6 of row 0 to the ';' of row 2 (column 32)
        c0, r0, c1, r1 = 6, 0, 32, 2
        self.drag(c0, r0, c1, r1)
        self.vm.send_keys(["shift"])  # hides the pointer, sends nothing
        cols = self.r.vm_xres // font.width
        cells = [(c, r) for r in range(r0, r1 + 1) for c in range(cols)
                 if (r, c) >= (r0, c0) and (r, c) <= (r1, c1)]
        deadline = time.monotonic() + 15
        while True:
            img = self.vm.grab()
            problem = self.inverted_problem(before, img, cells)
            if problem is None:
                break
            if time.monotonic() > deadline:
                self.r.fail("the selection is not shown in reverse video: " + problem,
                            before, img, tag="select")
            time.sleep(0.3)
        shot = self.vm.save_png(img, "%s-select-shot.png" % self.r.card)
        print("# selection screendump (%s, %d bpp): %s" % (self.r.card, self.r.vm_bpp, shot),
              flush=True)
        self.r.stop_consoled()

    def inverted_problem(self, before, img, cells):
        """None if img is `before` with exactly `cells` in swapped colours."""
        cw, ch = self.pc.cell_size()
        # the default colours as this card shows them: the 'p' at 0,0
        first = sorted(set(tuple(c) for c in before.crop(0, 0, cw, ch).colors()))
        if len(first) != 2:
            raise ValueError("the first cell has colours %r" % first)
        bg = before.pixel(0, 0)
        fg = first[0] if tuple(first[1]) == tuple(bg) else first[1]
        want = bytearray(before.data)
        for col, row in cells:
            x0, y0 = col * cw, row * ch
            colours = set(before.crop(x0, y0, cw, ch).colors())
            if len(colours) == 1:  # a blank: its background becomes the foreground
                (c,) = colours
                swap = {tuple(c): tuple(fg) if tuple(c) == tuple(bg) else tuple(bg)}
            elif len(colours) == 2:
                a, b = (tuple(c) for c in colours)
                swap = {a: b, b: a}
            else:
                raise ValueError("cell %d,%d has %d colours" % (col, row, len(colours)))
            for y in range(ch):
                for x in range(cw):
                    i = ((y0 + y) * before.width + x0 + x) * 3
                    want[i:i + 3] = bytes(swap[tuple(before.data[i:i + 3])])
        diff = screen.compare(screen.Image(before.width, before.height, want), img)
        if diff:
            return "%d pixels differ from the inverted cells in %r" % (diff.count, diff.bbox)
        return None
