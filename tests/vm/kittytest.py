#!/usr/bin/python3
"""The kitty keyboard protocol (daemon/terminal/keys.h), run by vmtest.py in
the cirrus guest.

  keys-kitty  a session in raw mode pushes flags 1 (CSI > 1 u) and records
              every byte it reads (cat); keys come from QEMU's PS/2
              keyboard (QMP send-key, and input-send-event to hold one).
              The stack is driven by writing to the session's tty, and
              CSI ? u's answer lands in the record too. Each phase types
              its keys, then the record must have grown by exactly their
              bytes, in order. Under 1: Ctrl+I, Tab, Shift+Enter, Escape,
              Alt+a, Ctrl+F5 send CSI 105;5u, HT, CSI 13;2u, CSI 27u,
              CSI 97;3u, CSI 15;5~. Pushed 3 (event types): a sends a and
              its release CSI 97;1:3u, Ctrl+I CSI 105;5u and CSI 105;5:3u,
              Enter CR and no release (nor does any modifier key);
              Shift+Insert (a paste) with Shift let go before Insert
              sends nothing, its release neither. Pushed
              11 (all keys as escape codes): Left Shift alone is
              CSI 57441;2u and CSI 57441;1:3u; a held 0.7 s (the repeat
              starts after 250 ms) sends CSI 97u, repeats CSI 97;1:2u and
              CSI 97;1:3u. Two pops bring the answer back to 1, a third to
              0, and then Ctrl+I and Shift+Enter send HT and CR as before.
              Cost: 14 s on cirrus.
"""

import re
import time

CARDS = ("cirrus",)
CHECKS = ["keys-kitty"]

SESSION = (b"stty raw -echo\nprintf '\\033[>1u'\ntty >/tmp/kitty.tty\n"
           b": >/tmp/kitty.ready\nexec cat >/tmp/kitty.raw\n")


def show(b):
    return "".join("\\E" if c == 27 else chr(c) if 32 <= c < 127 else "\\%03o" % c for c in b)


class KittyChecks:
    def __init__(self, runner, font):
        self.r = runner
        self.vm = runner.vm
        self.font = font
        self.checks = {"keys-kitty": self.check_keys_kitty}
        self.done = 0

    def typed(self):
        out = self.r.sh("od -An -tx1 -v /tmp/kitty.raw")
        return bytes(int(h, 16) for h in out.split())

    def expect(self, what, want, send):
        """send() types; the record must grow by exactly `want` (bytes, or a
        compiled pattern with the smallest length it may have)."""
        send()
        size = len(want) if isinstance(want, bytes) else want[1]
        deadline = time.monotonic() + 15
        got = b""
        while time.monotonic() < deadline:
            got = self.typed()[self.done:]
            if len(got) >= size:
                time.sleep(0.4)  # anything more that comes is wrong
                got = self.typed()[self.done:]
                break
            time.sleep(0.3)
        ok = got == want if isinstance(want, bytes) else want[0].fullmatch(got)
        if not ok:
            self.r.fail("%s: sent %s, want %s" % (
                what, show(got), show(want) if isinstance(want, bytes) else want[0].pattern))
        self.done += len(got)
        return got

    def tty_write(self, seq):
        self.r.sh("printf '%s' > $(cat /tmp/kitty.tty)" % seq)
        time.sleep(0.3)

    def key_event(self, qcode, down):
        self.vm.qmp.cmd("input-send-event", events=[
            {"type": "key", "data": {"down": down, "key": {"type": "qcode", "data": qcode}}}])

    def check_keys_kitty(self):
        r, vm = self.r, self.vm
        r.sh("rm -f /tmp/kitty.ready /tmp/kitty.raw /tmp/kitty.tty")
        r.put_file("/tmp/kitty-session.sh", SESSION)
        r.start_consoled(self.font, "/bin/sh /tmp/kitty-session.sh")
        deadline = time.monotonic() + 20
        while vm.run("test -e /tmp/kitty.ready")[1] != 0:
            if time.monotonic() > deadline:
                r.fail("the kitty key session did not start")
            time.sleep(0.3)
        # The session may run before consoled reads the keyboard: type x
        # until one comes through (x is text under flags 1).
        deadline = time.monotonic() + 30
        while b"x" not in self.typed():
            if time.monotonic() > deadline:
                r.fail("no key reaches the session: %r" % self.typed())
            vm.send_text("x")
            time.sleep(1)
        time.sleep(0.5)
        self.done = len(self.typed())
        if self.typed().strip(b"x"):
            r.fail("the probe keys sent %s" % show(self.typed()))

        combo = vm.send_combo
        # Each phase types its keys and then reads the record once: the
        # bytes of all of them, in order, and nothing more.
        self.expect("flags 1: CSI ? u, Ctrl+I, Tab, Shift+Enter, Escape, Alt+a, Ctrl+F5",
                    b"\x1b[?1u\x1b[105;5u\t\x1b[13;2u\x1b[27u\x1b[97;3u\x1b[15;5~",
                    lambda: (self.tty_write("\\033[?u"), combo(["ctrl", "i"]), combo(["tab"]),
                             combo(["shift", "ret"]), combo(["esc"]), combo(["alt", "a"]),
                             combo(["ctrl", "f5"])))
        self.expect("flags 3 pushed: CSI ? u, a, Ctrl+I, Enter (no release)",
                    b"\x1b[?3ua\x1b[97;1:3u\x1b[105;5u\x1b[105;5:3u\r",
                    lambda: (self.tty_write("\\033[>3u\\033[?u"), combo(["a"]),
                             combo(["ctrl", "i"]), combo(["ret"])))

        def paste_shift_first():
            self.key_event("shift", True)
            self.key_event("insert", True)
            self.key_event("shift", False)
            self.key_event("insert", False)
            combo(["a"])
        self.expect("flags 3: Shift+Insert (a paste of nothing), Shift up first, then a",
                    b"a\x1b[97;1:3u", paste_shift_first)
        self.expect("flags 11 pushed: CSI ? u, Left Shift alone",
                    b"\x1b[?11u\x1b[57441;2u\x1b[57441;1:3u",
                    lambda: (self.tty_write("\\033[>11u\\033[?u"), combo(["shift"])))

        def hold():
            self.key_event("a", True)
            time.sleep(0.7)
            self.key_event("a", False)
        got = self.expect("a held 0.7 s (11)",
                          (re.compile(rb"\x1b\[97u(\x1b\[97;1:2u)+\x1b\[97;1:3u"), 26), hold)
        print("# keys-kitty: a held 0.7 s sent %d repeats" % got.count(b";1:2u"), flush=True)

        self.expect("two pops, CSI ? u, one pop, CSI ? u, Ctrl+I, Shift+Enter",
                    b"\x1b[?1u\x1b[?0u\t\r",
                    lambda: (self.tty_write("\\033[<2u\\033[?u"),
                             self.tty_write("\\033[<u\\033[?u"), combo(["ctrl", "i"]),
                             combo(["shift", "ret"])))
        r.stop_consoled()
