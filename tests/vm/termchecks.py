"""Terminal protocol checks of the systemd guest, run by systemdtest.py
among its program checks (they share the test user's login on tty1):

  queries   The user's bash asks consoled what programs ask a terminal
            (a script in raw mode writes each query to /dev/tty and reads
            the answer up to its final byte, with a 3 s timeout): DA1,
            XTVERSION, XTWINOPS 18 t, 14 t and 16 t, XTGETTCAP TN, Co and
            RGB, DECRQSS for SGR (after SGR 1;31), DECSTBM and DECSCUSR, and
            DECRQM 2026. Each answer must be xterm's form with consoled's
            values: its version, the grid the screen shows, the cell of the
            font (8x16), TERM's name.
"""

import binascii
import re

CHECKS = ["queries"]

# Each query: a name, what is written (printf %b), the answer's final byte.
QUERIES = [
    ("da1", r"\033[c", "c"),
    ("xtversion", r"\033[>q", "\\"),
    ("chars", r"\033[18t", "t"),
    ("pixels", r"\033[14t", "t"),
    ("cell", r"\033[16t", "t"),
    ("tn", r"\033P+q544e\033\\", "\\"),
    ("co", r"\033P+q436f\033\\", "\\"),
    ("rgb", r"\033P+q524742\033\\", "\\"),
    ("sgr", r"\033[1;31m\033P$qm\033\\", "\\"),
    ("stbm", r"\033P$qr\033\\", "\\"),
    ("decscusr", r"\033P$q q\033\\", "\\"),
    ("decrqm2026", r"\033[?2026$p", "y"),
]

# The script the user runs: raw mode on the tty, each answer to /tmp/q.out
# as "name hex-bytes" (empty after the timeout).
SCRIPT = r"""#!/bin/bash
old=$(stty -g </dev/tty)
stty raw -echo </dev/tty
: > /tmp/q.out
q() {
	printf '%b' "$2" > /dev/tty
	ans=
	IFS= read -r -d "$3" -t 3 ans </dev/tty && ans="$ans$3"
	printf '%s %s\n' "$1" "$(printf '%s' "$ans" | od -An -tx1 | tr -d ' \n')" >> /tmp/q.out
}
""" + "".join("q %s '%s' '%s'\n" % (n, w, f) for n, w, f in QUERIES) + r"""printf '\033[m' > /dev/tty
stty "$old" </dev/tty
echo QUERIES-DONE
"""


def _sd():
    import systemdtest
    return systemdtest


def check_queries(r):
    sd = _sd()
    r.prog_shell("C.UTF-8")
    r.sh("cat > /tmp/q.sh <<'EOF'\n%sEOF\nchmod 755 /tmp/q.sh; rm -f /tmp/q.out" % SCRIPT)
    r.vm.send_text("clear; /tmp/q.sh\n")
    decoded = r.prog_wait(lambda s: any(l.rstrip() == "QUERIES-DONE" for l in s.lines),
                          "the query script did not finish", timeout=60)
    got = {}
    for line in r.sh("cat /tmp/q.out").splitlines():
        name, _, hexbytes = line.partition(" ")
        got[name] = binascii.unhexlify(hexbytes.strip()).decode("latin-1")
    version = r.sh("consoled --version").split()[-1]
    rows, cols = decoded.rows, decoded.cols
    cw, ch = 8, 16  # the guest's font (systemdtest's FONT)
    want = {
        "xtversion": "\033P>|consoled %s\033\\" % version,
        "chars": "\033[8;%d;%dt" % (rows, cols),
        "pixels": "\033[4;%d;%dt" % (rows * ch, cols * cw),
        "cell": "\033[6;%d;%dt" % (ch, cw),
        "tn": "\033P1+r544e=%s\033\\" % binascii.hexlify(b"xterm-256color").decode().upper(),
        "co": "\033P1+r436f=%s\033\\" % binascii.hexlify(b"256").decode().upper(),
        "rgb": "\033P1+r524742=%s\033\\" % binascii.hexlify(b"8/8/8").decode().upper(),
        "sgr": "\033P1$r0;1;31m\033\\",
        "stbm": "\033P1$r1;%dr\033\\" % rows,
        "decscusr": "\033P1$r2 q\033\\",
        "decrqm2026": "\033[?2026;2$y",
    }
    bad = ["%s: got %r, expected %r" % (k, got.get(k), v) for k, v in want.items()
           if got.get(k) != v]
    # DA1: a VT-class answer (CSI ? 6x ; features c).
    if not re.fullmatch(r"\033\[\?6[0-9](;\d+)*c", got.get("da1", "")):
        bad.append("da1: got %r, expected CSI ? 6x ; ... c" % got.get("da1"))
    if bad:
        r.fail("the terminal's answers differ from xterm's form with consoled's values:\n  "
               + "\n  ".join(bad))
    print("# %d queries answered as expected" % len(got))
    r.vm.send_text("clear\n")
    r.prog_wait(lambda s: s.lines[0].startswith(sd.SHELL_PROMPT), "no prompt after clear")


def install(runner_cls, sd_module):
    for name in CHECKS:
        setattr(runner_cls, "check_" + name.replace("-", "_"),
                globals()["check_" + name.replace("-", "_")])
