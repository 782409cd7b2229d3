#!/usr/bin/python3
"""consoled on the fbdev emulation of DRM drivers, whose deferred I/O copies
what is written to the glass later (daemon/devices/fbflush.h). Run
by vmtest.py in the boot of the cards in CARDS (the checks of CHECKS).

  deferred-lines   a session prints 300 reverse-video cells, one a frame, in
                   the right part of the screen (every pixel line of such a
                   cell differs from the background, up to its right end),
                   while fbsync flushes the deferred I/O every 300 us at
                   real-time priority: flushes fall anywhere inside frames,
                   so the last page of a cell (the tail of its bottom pixel
                   line, x >= 256 at 1280x800x32) often makes a batch of its
                   own, which Debian 12's kernel drops (one page inside one
                   scanline ending at the line's end: its damage clip gets
                   x2 = 0). The screen must then equal what a full redraw (a
                   VT switch away and back) draws, and the log must say auto
                   chose `Flush: write` and shadow.
  deferred-prompt  a text written to the session's terminal shows within
                   PROMPT_SEC of the write, ten times (from the serial
                   shell's answer, the write done, to the end of the first
                   screendump that shows it).
"""

import random
import time

import screen

CARDS = ("bochs", "virtio", "qxl")
# deferred-lines on bochs (the brief's card, 1280x800x32) and qxl (1024x768x32:
# a scanline is exactly one page there); virtio-gpu has bochs's geometry.
CHECKS = {"bochs": ["deferred-lines", "deferred-prompt"],
          "virtio": ["deferred-prompt"],
          "qxl": ["deferred-lines", "deferred-prompt"]}
SESSION = "/tmp/deferred-session.sh"
DONE = "/tmp/deferred.done"
CELLS = 300
SYNC_USEC = 50  # fbsync's pause between flushes
# A screendump takes about 0.1 s and the serial command's answer as long
# again on a loaded TCG host; the kernel's own deferred flush is 50 ms.
PROMPT_SEC = 1.0


class DeferredChecks:
    def __init__(self, runner, load_font, font):
        self.r = runner
        self.vm = runner.vm
        self.font = font
        self.load_font = load_font
        self.checks = {
            "deferred-lines": self.check_lines,
            "deferred-prompt": self.check_prompt,
        }

    def start(self, script, extra=""):
        self.r.put_file(SESSION, script.encode())
        self.r.sh("rm -f %s" % DONE)
        self.r.start_consoled(self.font, "/bin/sh %s" % SESSION, extra=extra)

    def wait_done(self, timeout=120):
        t0 = time.monotonic()
        while self.vm.run("test -e %s" % DONE)[1] != 0:
            if time.monotonic() - t0 > timeout:
                self.r.fail("the session did not finish within %ds" % timeout)
            time.sleep(0.5)
        return time.monotonic() - t0

    def check_log(self):
        log = self.r.consoled_log()
        if "Flush: write" not in log or "full-screen scrolls by shadow" not in log:
            self.r.fail("auto did not choose fb-flush write and shadow on a DRM fbdev "
                        "emulation:\n" + log)

    def check_lines(self):
        cols = self.r.vm_xres // 8
        rows = self.r.vm_yres // 16
        first = cols // 2
        # Cells in the right half, every one at its own place.
        lines = ["printf '\\033[?25l\\033[H\\033[2J'"]
        places = [(row, col) for row in range(2, rows + 1) for col in range(first + 1, cols + 1)]
        for row, col in random.Random(17).sample(places, CELLS):
            lines.append("printf '\\033[%d;%dH\\033[7m#\\033[0m'; usleep 10000" % (row, col))
        lines += ["printf '\\033[1;1Hcells-done'", "touch %s" % DONE, "exec sleep 100000"]
        self.r.sh("test -x /usr/bin/fbsync")
        self.r.sh("rm -f /tmp/fbsync.out; fbsync %s 120 %d >/tmp/fbsync.out 2>&1 &"
                  % ("/dev/fb0", SYNC_USEC))
        try:
            self.start("\n".join(lines) + "\n")
            took = self.wait_done()
        finally:
            self.vm.run("pkill -x fbsync; sleep 0.5")
        print("# %d cells drawn in %.1fs, %s" % (CELLS, took,
                                                 self.r.sh("cat /tmp/fbsync.out").strip()),
              flush=True)
        self.r.wait_text(self.font, lambda s: s.lines and s.lines[0].startswith("cells-done"),
                         "the session's last text did not show")
        time.sleep(0.5)
        after = self.r.stable_grab()
        self.r.sh("chvt 2")
        self.r.sh("chvt 1")
        self.r.wait_equal(after, "the screen after %d one-cell frames against a full redraw"
                          % CELLS)
        self.check_log()
        self.r.stop_consoled()

    def check_prompt(self):
        self.start("printf '\\033[?25l\\033[H\\033[2Jprompt-ready'\ntouch %s\nexec sleep 100000\n"
                   % DONE)
        self.wait_done(timeout=30)
        font = self.load_font(self.font)
        self.r.wait_text(self.font, lambda s: s.lines and s.lines[0].startswith("prompt-ready"),
                         "the session's text did not show")
        pid = self.r.session_pid()
        times = []
        for k in range(10):
            marker = "mark%d-%s" % (k, "x" * (k * 3))
            row = 3 + k * 2
            before = self.vm.grab()
            self.r.sh("printf '\\033[%d;%dH%s' > /proc/%s/fd/1"
                      % (row, 1 + k * 9, marker, pid))
            # From the shell's answer (the write is done) to the end of the
            # first screendump that shows the text: decoding only a changed
            # picture keeps the loop at the screendump's pace.
            t0 = time.monotonic()
            while True:
                img = self.vm.grab()
                shown = time.monotonic()
                if screen.compare(before, img):
                    decoded = screen.read_screen(img, font)
                    if marker in decoded.lines[row - 1]:
                        break
                if shown - t0 > 10:
                    self.r.fail("%r did not show within 10 s" % marker)
            times.append(shown - t0)
        worst = max(times)
        print("# texts shown %s s after the write was sent" % " ".join("%.2f" % t for t in times),
              flush=True)
        if worst > PROMPT_SEC:
            self.r.fail("a text took %.2fs to show, more than %.1fs" % (worst, PROMPT_SEC))
        self.check_log()
        self.r.stop_consoled()
