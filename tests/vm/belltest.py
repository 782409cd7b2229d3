#!/usr/bin/python3
"""consoled's bell checks, run by vmtest.py in the boot of
the cards in CARDS. A test build lengthens the flash
(CONSOLED_TEST_BELL_FLASH_MS) so that a screendump catches it.

  bell-flash   one BEL on a screen of default-coloured text: a screendump
               during the flash is the picture before with the grid's two
               colours swapped, pixel for pixel; once it ends the screen is
               the picture before, pixel-exact; a second BEL while tty2 is
               shown is counted (SIGUSR1's stats) and not flashed: back on
               tty1 the picture before, --stats counts 2 bells, 1 flash.
  bell-scroll  a BEL, then 30 lines scrolled while the (5 s) flash shows
               (bochs: shadow, cirrus: pan), nothing after them: once the
               flash ends the screen is not inverted, shows the last line
               and equals what a full redraw (a VT switch away and back)
               draws; the strategy scrolled rows.
  bell-flood   `cat` of 200,000 BELs, again and again for 3 seconds, with
               the real flash: the session finishes, --stats counts every
               bell and at most one flash per BELL_FLASH_INTERVAL of the
               flood's duration (and at least one).
  bell-sound   --bell=sound with a uinput speaker (uinput-snd: EV_SND with
               SND_TONE): a BEL reaches it as SND_TONE 750, then SND_TONE 0;
               --stats counts 1 tone and no flash.
"""

import re
import time

import screen

CARDS = ("bochs", "cirrus")
CHECKS = {
    "bochs": ["bell-flash", "bell-scroll", "bell-flood", "bell-sound"],
    "cirrus": ["bell-scroll"],
}
SCROLL_MODE = {"bochs": "shadow", "cirrus": "pan"}

FLASH_MS = 3000           # the test hook's flash
SCROLL_FLASH_MS = 5000    # bell-scroll's: the lines scroll under it
FLASH_INTERVAL = 0.35     # daemon/terminal/bell.h BELL_FLASH_INTERVAL_MS
CHUNK = 200000            # BELs a `cat` of the flood writes
FLOOD_SEC = 3             # the flood goes on for at least this long
GO = "/tmp/bell.go"
GO2 = "/tmp/bell.go2"
SESSION = "/tmp/bell-session.sh"

# The Linux palette's default colours (consoled --palette=linux).
BG = b"\x00\x00\x00"
FG = b"\xaa\xaa\xaa"

STATS = re.compile(r"stats: bell=(\w+) bells=(\d+) flashes=(\d+) tones=(\d+)")


def wait_go(path=GO):
    """Shell lines that wait for the test's go (the file appears)."""
    return "while [ ! -e %s ]; do sleep 0.1; done\n" % path


class BellChecks:
    def __init__(self, runner, load_font, font):
        self.r = runner
        self.vm = runner.vm
        self.font = font
        self.load_font = load_font
        self.checks = {
            "bell-flash": self.check_flash,
            "bell-scroll": self.check_scroll,
            "bell-flood": self.check_flood,
            "bell-sound": self.check_sound,
        }

    def guarded(self, fn):
        def run():
            try:
                fn()
            finally:
                self.vm.run("pkill -x uinput-snd; rm -f %s %s" % (GO, GO2))
        return run

    def start(self, script, extra="", flash_ms=FLASH_MS):
        """consoled with the session script; flash_ms None: a real flash."""
        self.r.put_file(SESSION, script.encode())
        self.r.sh("rm -f %s" % GO)
        self.r.start_consoled(self.font, "/bin/sh %s" % SESSION, extra="--stats " + extra,
                              env="CONSOLED_TEST_BELL_FLASH_MS=%d" % flash_ms if flash_ms else "")

    def stats(self):
        """(mode, bells, flashes, tones) of the stats consoled logged at exit."""
        self.r.stop_consoled()
        log = self.r.consoled_log()
        m = STATS.findall(log)
        if not m:
            self.r.fail("no bell statistics in the log:\n" + log)
        mode, bells, flashes, tones = m[-1]
        return mode, int(bells), int(flashes), int(tones)

    def grid(self, img):
        f = self.load_font(self.font)
        return (img.width // f.width) * f.width, (img.height // f.height) * f.height

    def inverted(self, img):
        """img with the grid's two colours swapped (the margins kept)."""
        gw, gh = self.grid(img)
        out = bytearray(img.data)
        for y in range(gh):
            row = y * img.width * 3
            for i in range(row, row + gw * 3, 3):
                p = img.data[i:i + 3]
                if p == BG:
                    out[i:i + 3] = FG
                elif p == FG:
                    out[i:i + 3] = BG
                else:
                    self.r.fail("pixel %d,%d is %s: the text is not in the default colours"
                                % ((i - row) // 3, y, p.hex()))
        return type(img)(img.width, img.height, bytes(out))

    def catch_flash(self, before, what, timeout=None):
        """The first screendump that differs from `before` (the flash)."""
        deadline = time.monotonic() + (timeout or FLASH_MS / 1000.0)
        while True:
            img = self.vm.grab()
            if img != before:
                return img
            if time.monotonic() > deadline:
                self.r.fail("%s: no screendump within %.1fs of the BEL differs from the "
                            "screen before" % (what, FLASH_MS / 1000.0))
            time.sleep(0.05)

    # -- bell-flash --

    def check_flash(self):
        text = "".join("bell test line %d: the quick brown fox\\n" % i for i in range(1, 11))
        self.r.sh("rm -f %s" % GO2)
        self.start("printf '%s'\nprintf 'ready'\n%sprintf '\\007'\n%sprintf '\\007'\n"
                   "exec sleep 100000\n" % (text, wait_go(), wait_go(GO2)))
        self.r.wait_text(self.font, lambda s: any(l.startswith("ready") for l in s.lines),
                         "the session's text did not show")
        before = self.r.stable_grab()
        self.r.sh("touch %s" % GO)
        t0 = time.monotonic()
        during = self.catch_flash(before, "bell-flash")
        caught = time.monotonic() - t0
        want = self.inverted(before)
        if during != want:
            # the first may have caught the flash's frame half drawn
            during = self.vm.grab()
        if during != want:
            d = screen.compare(want, during)
            self.r.fail("the flash is not the screen inverted: %d pixels differ in %r"
                        % (d.count, d.bbox), want, during, tag="flash")
        print("# flash caught %.2fs after the go" % caught, flush=True)
        self.r.wait_equal(before, "after the flash", timeout=FLASH_MS / 1000.0 + 10)
        time.sleep(0.5)
        self.r.wait_equal(before, "0.5s after the flash", timeout=1)
        # A BEL while another VT is in front: counted, not flashed.
        self.r.sh("chvt 2")
        self.r.sh("touch %s" % GO2)
        deadline = time.monotonic() + 20
        while True:
            self.r.sh("kill -USR1 %s" % self.r.consoled_pid())
            m = STATS.findall(self.r.consoled_log())
            if m and int(m[-1][1]) == 2:
                break
            if time.monotonic() > deadline:
                self.r.fail("the BEL sent while tty2 was shown was not counted: %r" % m)
            time.sleep(0.3)
        self.r.sh("chvt 1")
        self.r.wait_equal(before, "back on tty1 after a BEL while away")
        mode, bells, flashes, tones = self.stats()
        if (mode, bells, flashes, tones) != ("visual", 2, 1, 0):
            self.r.fail("stats: bell=%s bells=%d flashes=%d tones=%d, expected bell=visual "
                        "bells=2 flashes=1 tones=0 (no flash while away)"
                        % (mode, bells, flashes, tones))

    # -- bell-scroll --

    def check_scroll(self):
        mode = SCROLL_MODE.get(self.r.card, "redraw")
        # 30 lines in three bursts, all while the flash shows: after them
        # nothing but the flash's end changes the screen.
        self.start("printf '\\033[?25l'\ni=1\nwhile [ $i -le 80 ]; do echo \"line $i\"; i=$((i+1));"
                   " done\nprintf 'ready'\n%sprintf '\\007\\n'\n"
                   "while [ $i -le 110 ]; do echo \"scrolled line $i\"; i=$((i+1));"
                   " [ $((i %% 10)) = 1 ] && sleep 0.3; done\n"
                   "printf 'scroll-done'\ntouch /tmp/scroll.done\nexec sleep 100000\n" % wait_go(),
                   extra="--scroll-mode=%s --no-calibrate" % mode, flash_ms=SCROLL_FLASH_MS)
        self.r.sh("rm -f /tmp/scroll.done")
        self.r.wait_text(self.font, lambda s: any(l.startswith("ready") for l in s.lines),
                         "the session's text did not show")
        before = self.r.stable_grab()
        self.r.sh("touch %s" % GO)
        t0 = time.monotonic()
        self.catch_flash(before, "bell-scroll", SCROLL_FLASH_MS / 1000.0)
        while self.vm.run("test -e /tmp/scroll.done")[1] != 0:
            if time.monotonic() - t0 > 60:
                self.r.fail("the session did not finish its lines")
            time.sleep(0.1)
        done = time.monotonic() - t0
        if done > SCROLL_FLASH_MS / 1000.0 - 0.2:
            self.r.fail("the lines took %.1fs, longer than the %.1fs flash: the check cannot "
                        "see what the flash's end leaves" % (done, SCROLL_FLASH_MS / 1000.0))
        print("# lines scrolled within %.1fs of the go, under the flash" % done, flush=True)
        time.sleep(max(0, SCROLL_FLASH_MS / 1000.0 + 0.5 - (time.monotonic() - t0)))
        after = self.r.stable_grab()
        gw, gh = self.grid(after)
        if after.pixel(gw - 1, gh - 1) != tuple(BG):
            self.r.fail("the screen is still inverted after the flash")
        self.r.wait_text(self.font, lambda s: any(l.startswith("scroll-done") for l in s.lines),
                         "the screen after the flash does not show the last line", timeout=5)
        self.r.sh("chvt 2")
        self.r.sh("chvt 1")
        self.r.wait_equal(after, "--scroll-mode=%s: the screen after a flash while scrolling "
                          "against a full redraw" % mode)
        _, bells, flashes, _ = self.stats()
        if bells != 1 or flashes != 1:
            self.r.fail("stats: bells=%d flashes=%d, expected 1 and 1" % (bells, flashes))
        strategies = re.findall(r"stats: strategy=(\w+) frames=\d+ rows_scrolled=(\d+)",
                                self.r.consoled_log())
        if not any(s == mode and int(n) > 0 for s, n in strategies):
            self.r.fail("--scroll-mode=%s scrolled no rows: %r" % (mode, strategies))

    # -- bell-flood --

    def check_flood(self):
        # `cat` of CHUNK BELs again and again for FLOOD_SEC, with the real
        # flash (the test hook's would hide a missing rate limit).
        self.start("head -c %d /dev/zero | tr '\\000' '\\007' >/tmp/bels\n"
                   "printf 'ready'\n%sread s _ </proc/uptime\nn=0\n"
                   # /proc/uptime has centiseconds: 12.34 -> 1234
                   "while :; do cat /tmp/bels; n=$((n+1)); read t _ </proc/uptime;"
                   " [ ${t%%.*}${t#*.} -ge $((${s%%.*}${s#*.} + %d)) ] && break; done\n"
                   "read e _ </proc/uptime\necho \"$s $e $n\" >/tmp/flood.time\n"
                   "printf '\\nflood-done'\nexec sleep 100000\n"
                   % (CHUNK, wait_go(), FLOOD_SEC * 100),
                   flash_ms=None)
        self.r.wait_text(self.font, lambda s: any(l.startswith("ready") for l in s.lines),
                         "the session did not start")
        self.r.sh("touch %s" % GO)
        t0 = time.monotonic()
        self.r.wait_text(self.font, lambda s: any(l.startswith("flood-done") for l in s.lines),
                         "the session did not finish its BEL flood", timeout=120)
        host = time.monotonic() - t0
        s, e, n = (float(v) for v in self.r.sh("cat /tmp/flood.time").split())
        elapsed, sent = e - s, int(n) * CHUNK
        mode, bells, flashes, tones = self.stats()
        # one flash each interval from the first at 0, and two more: consoled
        # may read the last BELs a while after the session timed its end
        bound = int(elapsed / FLASH_INTERVAL) + 3
        print("# %d BELs in %.2fs (guest; %.1fs seen on the host): %d flashes, at most %d"
              % (sent, elapsed, host, flashes, bound), flush=True)
        if bells != sent:
            self.r.fail("stats count %d bells, the session sent %d" % (bells, sent))
        if flashes < 1 or flashes > bound:
            self.r.fail("%d flashes for a flood of %.2fs: expected 1 to %d"
                        % (flashes, elapsed, bound))

    # -- bell-sound --

    def check_sound(self):
        if self.vm.run("test -x /usr/bin/uinput-snd")[1] != 0:
            self.r.fail("no uinput-snd in the guest (build tests/vm/uinput-snd)")
        self.r.sh("(uinput-snd 120 </dev/null >/tmp/snd.log 2>&1 &)")
        deadline = time.monotonic() + 20
        while "created" not in self.r.sh("cat /tmp/snd.log"):
            if time.monotonic() > deadline:
                self.r.fail("uinput-snd did not create its device:\n" + self.r.sh("cat /tmp/snd.log"))
            time.sleep(0.2)
        node = re.search(r"created (\S+)", self.r.sh("cat /tmp/snd.log")).group(1)
        self.start("printf 'ready'\n%sprintf '\\007'\nexec sleep 100000\n" % wait_go(),
                   extra="--bell=sound")
        self.r.wait_text(self.font, lambda s: any(l.startswith("ready") for l in s.lines),
                         "the session did not start")
        deadline = time.monotonic() + 20
        while "Speaker %s" % node not in self.r.consoled_log():
            if time.monotonic() > deadline:
                self.r.fail("consoled did not find the speaker %s:\n%s"
                            % (node, self.r.consoled_log()))
            time.sleep(0.3)
        self.r.sh("touch %s" % GO)
        deadline = time.monotonic() + 20
        while True:
            got = self.r.sh("cat /tmp/snd.log").splitlines()[1:]
            if got[:2] == ["SND_TONE 750", "SND_TONE 0"]:
                break
            if time.monotonic() > deadline:
                self.r.fail("the speaker got %r, expected SND_TONE 750 then SND_TONE 0" % got)
            time.sleep(0.3)
        mode, bells, flashes, tones = self.stats()
        if (mode, bells, flashes, tones) != ("sound", 1, 0, 1):
            self.r.fail("stats: bell=%s bells=%d flashes=%d tones=%d, expected bell=sound "
                        "bells=1 flashes=0 tones=1" % (mode, bells, flashes, tones))
