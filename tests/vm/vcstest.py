#!/usr/bin/python3
"""The mirror into the VT's own screen buffer (daemon/terminal/vcs.h),
run by vmtest.py in the bochs and cirrus guests.

  vcs  a session prints ASCII, é and a CJK character (which the kernel's
       font lacks) and puts the cursor at row 5, column 7: /dev/vcsa1's
       header holds that cursor and the VT's size (stty's), /dev/vcsu1
       holds the code points (the CJK one followed by the blank of its
       second column), /dev/vcs1 the very glyph numbers the kernel gives
       the same text written to tty1 after consoled is gone (its own font
       mapping, read back as the reference); the stats line counts the
       writes. Text written to tty1 while VT 2 is in front is gone once
       VT 1 is back. When the session ends (the next one prints nothing) and
       when consoled exits, nothing of the text is left in /dev/vcsu1.
"""

import time

CARDS = ("bochs", "cirrus")
CHECKS = ["vcs"]

TEXT = "vcs line one\r\nh\u00e9llo \u65e5x\r\n"
ROW0 = "vcs line one"
ROW1 = ["h", "\u00e9", "l", "l", "o", " ", "\u65e5", " ", "x"]
CURSOR = (6, 4)  # 0-based column and row of CSI 5;7H

SESSION = (b"if [ -e /tmp/vcs-once ]; then exec sleep 100000; fi\n"
           b"touch /tmp/vcs-once\n"
           b"printf '" + "".join("\\%03o" % b for b in TEXT.encode()).encode() +
           b"\\033[5;7H'\n"
           b"exec sleep 100000\n")


class VcsChecks:
    def __init__(self, runner, font):
        self.r = runner
        self.vm = runner.vm
        self.font = font
        self.checks = {"vcs": self.check_vcs}

    def guarded(self, fn):
        return fn

    def header(self):
        """lines, columns, cursor x, cursor y of /dev/vcsa1."""
        out = self.r.sh("head -c 4 /dev/vcsa1 | od -An -tu1")
        return [int(v) for v in out.split()]

    def vcsu(self, cells):
        out = self.r.sh("dd if=/dev/vcsu1 bs=%d count=1 2>/dev/null | od -An -tx4 -v"
                        % (4 * cells))
        return [int(v, 16) for v in out.split()]

    def vcs(self, cells):
        out = self.r.sh("dd if=/dev/vcs1 bs=%d count=1 2>/dev/null | od -An -tu1 -v" % cells)
        return [int(v) for v in out.split()]

    def all_blank(self):
        """The distinct code points of the whole of /dev/vcsu1."""
        out = self.r.sh("od -An -tx4 -v /dev/vcsu1 | tr -s ' ' '\\n' | sort -u")
        return sorted(int(v, 16) for v in out.split())

    def check_vcs(self):
        r = self.r
        r.sh("rm -f /tmp/vcs-once")
        r.put_file("/tmp/vcs-session", SESSION)
        # what an earlier check left there does not count
        r.sh("printf '\\033[H\\033[2J' > /dev/tty1")
        size = [int(v) for v in r.sh("stty -F /dev/tty1 size").split()]
        # The kernel keeps the code points from the first read of vcsu on
        # (before, it has none: that read maps the glyphs back): made here,
        # so that the check does not depend on when its first poll comes.
        self.vcsu(1)
        r.start_consoled(self.font, "/bin/sh /tmp/vcs-session", extra="--stats")
        lines, cols = size
        want0 = [ord(c) for c in ROW0.ljust(cols)]
        want1 = [ord(c) for c in ROW1] + [0x20] * (cols - len(ROW1))
        deadline = time.monotonic() + 30
        while True:
            cells = self.vcsu(2 * cols)
            head = self.header()
            if cells == want0 + want1 and head[2:] == list(CURSOR):
                break
            if time.monotonic() > deadline:
                r.fail("/dev/vcsu1 rows 1-2 are %r, expected %r; vcsa1 header %r, expected"
                       " %d lines %d columns, cursor %r"
                       % ("".join(chr(c) if 0x20 <= c < 0x110000 else "<%x>" % c
                                  for c in cells),
                          ROW0.ljust(cols) + "".join(ROW1), head, lines, cols, CURSOR))
            time.sleep(0.5)
        if head[:2] != [lines, cols]:
            r.fail("/dev/vcsa1 says %d lines %d columns, stty %r" % (head[0], head[1], size))
        glyphs = self.vcs(2 * cols)

        # Text written to tty1 while another VT is in front is gone when
        # consoled has its VT again: a mirror then is whole (the others
        # carry only the rows that changed, and none did here).
        r.sh("chvt 2; printf '\\033[1;1HSTALE' > /dev/tty1; chvt 1")
        deadline = time.monotonic() + 20
        while self.vcsu(2 * cols) != want0 + want1:
            if time.monotonic() > deadline:
                r.fail("after a VT switch /dev/vcsu1 rows 1-2 are %r, expected %r (what was"
                       " written to tty1 meanwhile stayed)"
                       % ("".join(chr(c) if 0x20 <= c < 0x110000 else "<%x>" % c
                                  for c in self.vcsu(2 * cols)),
                          ROW0.ljust(cols) + "".join(ROW1)))
            time.sleep(0.5)

        # the session ends; the next one prints nothing: the text is gone
        pid = r.session_pid()
        r.sh("kill -9 %s" % pid)
        deadline = time.monotonic() + 20
        while self.all_blank() != [0x20]:
            if time.monotonic() > deadline:
                r.fail("after the session ended /dev/vcsu1 still holds %r"
                       % self.vcsu(2 * cols)[:40])
            time.sleep(0.5)
        r.stop_consoled()
        if self.all_blank() != [0x20]:
            r.fail("after consoled exited /dev/vcsu1 holds %r" % self.vcsu(2 * cols)[:40])
        log = r.consoled_log()
        stats = [l for l in log.splitlines() if "stats: vcs writes=" in l]
        if not stats or " writes=0 " in stats[0] or " failed=0" not in stats[0]:
            r.fail("no (or a bad) stats line for the mirror:\n" + log)

        # The reference: the kernel's own glyph numbers for the same text,
        # written to tty1 in text mode with the same font.
        r.sh("printf '\\033[H\\033[2J' > /dev/tty1")
        r.put_file("/tmp/vcs-text", TEXT.encode())
        r.sh("cat /tmp/vcs-text > /dev/tty1")
        ref = self.vcs(2 * cols)
        r.sh("printf '\\033[H\\033[2J' > /dev/tty1")
        if glyphs != ref:
            r.fail("/dev/vcs1's glyphs under consoled %r differ from the kernel's for the same"
                   " text %r" % (glyphs[:cols + 10], ref[:cols + 10]))
        print("# vcs: %dx%d, row 2 glyphs %r, %s" % (cols, lines, glyphs[cols:cols + 9],
                                                   stats[0].split("stats: ")[-1]), flush=True)
