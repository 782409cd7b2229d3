#!/usr/bin/python3
"""The last boot's crash from pstore (daemon/util/pstore.h), run by vmtest.py
as the last check of the bochs boot, for it reboots the guest.

  pstore     ramoops is loaded (/etc/vm/modules/pstore.later) on the 1 MiB
             the command line keeps from the kernel (vmlib.CARD_APPEND's
             memmap=1M$0x10000000) and pstore is mounted; /sys/fs/pstore is
             empty. `echo c > /proc/sysrq-trigger` panics the guest, which
             resets at once (panic=-1) in the same QEMU process
             (vmlib.VM.reboot(): QMP set-action reboot=reset for this one
             reset), so RAM keeps the dump. After the boot ramoops is
             loaded again: /sys/fs/pstore/dmesg-ramoops-0 starts with
             "Panic#1 Part1". consoled with its login screen (the default
             session, /bin/login -p: the getty) shows "The last boot ended
             in a kernel panic (pstore dmesg-ramoops-0); Ctrl+Logo+K shows
             it." above "consoled-test login:"; its log says where the
             record is. Ctrl+Logo+K opens the view; Home (the oldest)
             shows the heading "--- the last boot's panic (pstore
             dmesg-ramoops-0) ---" on the first row of text; Shift+PageDown
             a page at a time reaches "--- this boot ---" with "sysrq:
             Trigger a crash" and "Kernel panic - not syncing: sysrq
             triggered crash" (with their times) on the way. The reboot
             costs about one boot: 9-27 s under TCG, the check 23-42 s.
"""

import re

import screen

CARDS = ("bochs",)
CHECKS = {"bochs": ["pstore"]}

# vmlib.CARD_APPEND["bochs"]'s reserved memory; records of 32 KiB: one part
# holds the whole 10 KiB (pstore's default kmsg_bytes) of a dump.
RAMOOPS = "mem_address=0x10000000 mem_size=0x100000 record_size=0x8000"
LOGIN_LINE = ("The last boot ended in a kernel panic (pstore dmesg-ramoops-0);"
              " Ctrl+Logo+K shows it.")
HEADING = "--- the last boot's panic (pstore dmesg-ramoops-0) ---"
CLOSING = "--- this boot ---"
PANIC_LINES = (re.compile(r"\] sysrq: Trigger a crash"),
               re.compile(r"\] Kernel panic - not syncing: sysrq triggered crash"))


class PstoreChecks:
    def __init__(self, runner, load_font, font, consoled_log, consoled_status):
        self.r = runner
        self.vm = runner.vm
        self.font = font
        self.psf = load_font(font)
        self.log = consoled_log
        self.status = consoled_status
        self.checks = {"pstore": self.check_pstore}

    def load_ramoops(self):
        """The modules with ramoops' parameters (insmod takes none from the
        command line), then pstore's file system."""
        self.r.sh("for m in $(cat /etc/vm/modules/pstore.later); do"
                  " if [ $m = ramoops ]; then p='%s'; else p=; fi;"
                  " grep -q \"^$m \" /proc/modules || insmod /lib/modules/$m.ko $p; done;"
                  " grep -q ' /sys/fs/pstore ' /proc/mounts ||"
                  " mount -t pstore pstore /sys/fs/pstore" % RAMOOPS)

    def view_open(self, s):
        return any(l.lstrip().startswith("Kernel messages ") for l in s.lines[:1])

    def check_pstore(self):
        r = self.r
        self.load_ramoops()
        left = r.sh("ls /sys/fs/pstore").split()
        if left:
            r.fail("/sys/fs/pstore holds %r before the crash" % left)
        took = self.vm.reboot("echo c > /proc/sysrq-trigger")
        print("# the panic and the boot after it took %.1f s" % took, flush=True)
        self.load_ramoops()
        head = r.sh("ls /sys/fs/pstore; head -n 1 /sys/fs/pstore/dmesg-ramoops-0 2>&1; true")
        if "Panic#1 Part1" not in head:
            r.fail("after the panic /sys/fs/pstore holds:\n%s\nexpected dmesg-ramoops-0"
                   " starting with Panic#1 Part1" % head)
        # consoled with the login screen: the default session (the getty)
        r.sh("rm -f %s %s && : >%s" % (self.log, self.status, self.log))
        r.sh("(consoled --vt=1 --fbdev=/dev/fb0 --font-file=/fonts/%s --palette=linux"
             " >%s 2>&1; echo $? >%s) </dev/null >/dev/null 2>&1 &"
             % (self.font, self.log, self.status))
        img, s = r.wait_text(self.font, lambda s: "login:" in s and LOGIN_LINE in s,
                             "the login screen does not say the last boot ended in a panic",
                             timeout=20)
        self.vm.save_png(img, "%s-pstore-login.png" % r.card)
        rows = [i for i, l in enumerate(s.lines) if LOGIN_LINE in l or "login:" in l]
        if len(rows) != 2 or not s.lines[rows[1]].rstrip().endswith("consoled-test login:"):
            r.fail("the crash's line is not above the prompt:\n%s" % s.text())
        if "The last boot's panic is in pstore dmesg-ramoops-0" not in r.consoled_log():
            r.fail("consoled's log does not say where the record is:\n" + r.consoled_log())
        # the view: the record before this boot's messages
        self.vm.send_keys(["ctrl", "meta_l", "k"])
        r.wait_text(self.font, self.view_open, "Ctrl+Logo+K did not open the view", timeout=10)
        self.vm.send_keys(["home"])
        img, s = r.wait_text(self.font, lambda s: self.view_open(s) and
                             s.lines[1].rstrip() == HEADING,
                             "at the top of the view the first row is not the heading %r"
                             % HEADING, timeout=20)
        img = r.stable_grab()
        self.vm.save_png(img, "%s-pstore-view.png" % r.card)
        s = screen.read_screen(img, self.psf)
        seen = [False] * len(PANIC_LINES)
        for _ in range(30):
            text = s.text()
            for i, pattern in enumerate(PANIC_LINES):
                seen[i] = seen[i] or bool(pattern.search(text))
            if CLOSING in text:
                break
            # (the whole text: rows of the record may repeat, such as the
            # wrapped rows of a flood of equal messages)
            first = s.text()
            self.vm.send_keys(["shift", "pgdn"])
            r.wait_text(self.font, lambda s, f=first: self.view_open(s) and s.text() != f,
                        "Shift+PageDown did not move the view", timeout=10)
            # the whole page: bochs' deferred I/O may show a part of it first
            s = screen.read_screen(r.stable_grab(), self.psf)
        else:
            r.fail("30 pages down from the heading the view shows no %r" % CLOSING)
        if not all(seen):
            r.fail("between the heading and %r the view never showed %r" % (
                CLOSING, [p.pattern for p, ok in zip(PANIC_LINES, seen) if not ok]))
        self.vm.send_keys(["esc"])
        r.wait_text(self.font, lambda s: not self.view_open(s) and LOGIN_LINE in s,
                    "Escape did not close the view over the login screen", timeout=10)
        # the oldest: the login screen's process is a consoled too until
        # it runs login
        r.sh("kill $(pgrep -o -x consoled)")
        r.wait_consoled_exit()
