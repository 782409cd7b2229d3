"""Keyboard checks of the systemd guest, run by
systemdtest.py in its boot, before weston (CHECKS):

  compose   A drop-in sets layout us, variant intl and option compose:ralt;
            after a restart consoled's journal names the keymap and the
            Compose table (the guest has no locale: C.UTF-8's).  The test
            user logs in and types into `od -An -tx1`: apostrophe (dead_acute
            on us(intl)) then e, and Right Alt (Multi_key) then o then /:
            the shell's echo shows "éø" and od prints c3 a9 c3 b8 0a; then
            apostrophe, a VT switch away and back (chvt 2; chvt 1) and e:
            the pending sequence was dropped, od prints 65 0a (a plain e).
  keymap    /etc/vconsole.conf with KEYMAP=de-latin1 and no XKB* (and no
            /etc/default/keyboard): after a restart the journal says layout
            'de' came from KEYMAP=de-latin1, and the keys labelled y and z
            type "zy" into the login prompt.  The guest's files are put back
            and consoled restarted.
"""

import time

CHECKS = ["compose", "keymap"]

# What the keymap check moves aside and puts back.
VCONSOLE = "/etc/vconsole.conf"
KEYBOARD = "/etc/default/keyboard"
SAVED = "/run/kbdchecks-saved"


def _sd():
    # systemdtest imports this module; its constants are read at run time.
    import systemdtest
    return systemdtest


def _wait_log(r, needle, what, timeout=15):
    """Wait until the running consoled@tty1's journal has needle."""
    deadline = time.monotonic() + timeout
    while True:
        log = r.invocation_log()
        if needle in log:
            return log
        if time.monotonic() > deadline:
            r.fail("%s: no %r in consoled's journal:\n%s" % (what, needle, log[-3000:]))
        time.sleep(0.5)


def _od_lines(s):
    """The hex lines od -An -tx1 printed on screen s."""
    return [l.strip() for l in s.lines if l.startswith(" ") and l.strip()
            and all(len(w) == 2 for w in l.split())]


def check_compose(r):
    sd = _sd()
    try:
        r.restart_with(["xkb-layout=us", "xkb-variant=intl", "xkb-options=compose:ralt"])
        r.wait_prompt("no login prompt with layout us(intl)")
        log = _wait_log(r, "Compose sequences of locale C.UTF-8", "the Compose table")
        if "No Compose table" in log:
            r.fail("consoled found no Compose table:\n" + log[-2000:])
        r.login("echo KBD-$((6*7))", "KBD-42")
        r.vm.send_text("clear; echo OD-START; od -An -tx1\n")
        r.wait_text(sd.FONT, lambda s: s.lines[0].rstrip() == "OD-START", "od did not start")
        keys = r.vm.send_keys
        keys(["apostrophe"])            # dead_acute
        keys(["e"])
        keys(["alt_r"])                 # Multi_key (compose:ralt)
        keys(["o"])
        keys(["slash"])
        keys(["ret"])
        r.wait_text(sd.FONT, lambda s: any(l.rstrip() == "\u00e9\u00f8" for l in s.lines),
                    "the dead key and the Compose key did not type \u00e9\u00f8")
        # A sequence pending over a VT switch is dropped: the e is an e.
        keys(["apostrophe"])
        r.sh("chvt 2; sleep 1; chvt 1")
        time.sleep(1)
        keys(["e"])
        keys(["ret"])
        keys(["ctrl", "d"])
        _, decoded = r.wait_text(
            sd.FONT, lambda s: any(l.rstrip().startswith(sd.SHELL_PROMPT) for l in s.lines[3:]),
            "od did not end")
        got = " ".join(_od_lines(decoded))
        if got != "c3 a9 c3 b8 0a 65 0a":
            r.fail("od read %r, expected 'c3 a9 c3 b8 0a 65 0a' (\u00e9 \u00f8 newline, "
                   "then a plain e after the VT switch):\n%s" % (got, decoded.text()))
        if not any(l.rstrip() == "e" for l in decoded.lines):
            r.fail("the e after the VT switch is not on screen:\n" + decoded.text())
        r.vm.send_text("exit\n")
        r.wait_prompt("no login prompt after the logout")
    finally:
        # After a failure the test user's shell may still run: end it, so
        # that the next check starts at a login prompt.
        r.vm.run("loginctl terminate-user {u}; pkill -KILL -u {u}; true".format(u=sd.USER),
                 check=False)
        r.restart_with(None, check=False)


def check_keymap(r):
    sd = _sd()
    r.sh("rm -rf %s; mkdir -p %s; for f in %s %s; do [ -e $f ] && mv $f %s/; done; true"
         % (SAVED, SAVED, VCONSOLE, KEYBOARD, SAVED))
    try:
        r.sh("printf 'KEYMAP=de-latin1\\n' > %s" % VCONSOLE)
        r.restart_with(None)
        r.wait_prompt("no login prompt with KEYMAP=de-latin1")
        _wait_log(r, "Keymap from %s: KEYMAP=de-latin1: model 'pc105' layout 'de'" % VCONSOLE,
                  "the layout of KEYMAP=de-latin1")
        r.vm.send_keys(["y"])
        r.vm.send_keys(["z"])
        r.wait_text(sd.FONT, lambda s: any(l.rstrip() == sd.PROMPT + " zy" for l in s.lines),
                    "the keys labelled y and z did not type 'zy' with KEYMAP=de-latin1")
        r.vm.send_keys(["backspace"])
        r.vm.send_keys(["backspace"])
        r.wait_prompt("the login prompt did not take the backspaces",
                      lambda s: all("zy" not in l for l in s.lines))
    finally:
        r.vm.run("rm -f {v}; for f in {v} {k}; do b={s}/$(basename $f);"
                 " [ -e $b ] && mv $b $f; done; rmdir {s}; true"
                 .format(v=VCONSOLE, k=KEYBOARD, s=SAVED), check=False)
        r.vm.run("systemctl restart " + sd.UNIT, timeout=60, check=False)
