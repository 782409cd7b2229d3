"""The login screen as getty's, checks of systemdtest.py's
guest, run in its boot (CHECKS, before weston):

  login-screen  /etc/issue with agetty's escapes (\\S \\s \\r \\m \\n \\l \\U
               \\d) and an /etc/issue.d snippet with \\l and \\4 (an address
               on a dummy interface that systemd-networkd makes: the guest
               has no network card); a fresh consoled@tty1 session shows
               the text, then getty@tty1 (agetty on the kernel's console)
               shows it: the lines from the issue to the prompt are the
               same on both screens, and they are the text expected from
               the guest's own values (tty1, not the pty's name; the
               dummy's address).  Both pictures are saved in --out
               (login-screen-consoled.png, login-screen-getty.png).
  autologin    autologin=USER@tty1 in a drop-in: a fresh session shows
               "HOST login: USER (automatic login)" and the user's shell
               prompt without a key typed, the user has a logind session on
               seat0 and is in utmp, consoled-session logged the automatic
               login; without the drop-in, `exit` gives the login prompt
               again (the helper reads root's files for every session).
"""

import os
import re
import time

CHECKS = ["login-screen", "autologin"]

# agetty's escapes, in the files a user edits.
ISSUE = "\\S \\s \\r \\m\nHost \\n on \\l, \\U, \\d\n\n"
ISSUE_D = "/etc/issue.d/50-logincheck.issue"
ISSUE_D_TEXT = "VT \\l at \\4\n\n"
ISSUE_SAVED = "/run/logincheck-issue"
# The dummy interface whose address \4 shows (RFC 5737's documentation net).
NETDEV = "/run/systemd/network/50-logincheck.netdev"
NETWORK = "/run/systemd/network/50-logincheck.network"
ADDRESS = "192.0.2.7"


def issue_block(decoded, prompt, n):
    """The n lines before the last prompt line and that line, right-stripped;
    None without a prompt."""
    lines = [l.rstrip() for l in decoded.lines]
    rows = [i for i, l in enumerate(lines) if l == prompt]
    if not rows or rows[-1] < n:
        return None
    return lines[rows[-1] - n:rows[-1] + 1]


def fresh_session(r, unit):
    """consoled@tty1 stopped and started: the store goes with the stop, so
    the old session ends and a new one starts (a restart would adopt it)."""
    r.sh("systemctl stop %s; systemctl reset-failed %s; systemctl start %s"
         % (unit, unit, unit), timeout=90)


def check_login_screen(r):
    s = r.sysd
    r.sh("cp -a /etc/issue %s && printf %s > /etc/issue && mkdir -p /etc/issue.d"
         " && printf %s > %s"
         % (ISSUE_SAVED, printf_format(ISSUE), printf_format(ISSUE_D_TEXT), ISSUE_D))
    try:
        login_screen(r, s)
    finally:
        r.sh("mv -f %s /etc/issue; rm -f %s %s %s; networkctl delete logincheck0 >/dev/null 2>&1;"
             " systemctl stop systemd-networkd.socket systemd-networkd; true"
             % (ISSUE_SAVED, ISSUE_D, NETDEV, NETWORK), timeout=60)
        s_unit = s.UNIT
        r.sh("systemctl reset-failed %s; systemctl start %s" % (s_unit, s_unit), timeout=90)
    r.wait_prompt("no login prompt on consoled after getty")
    if r.vm.run("systemctl is-active " + s.GETTY)[0].strip() != "inactive":
        r.fail("getty@tty1 still runs beside consoled")


def login_screen(r, s):
    t0 = time.monotonic()
    r.sh("mkdir -p /run/systemd/network && printf '[NetDev]\\nName=logincheck0\\nKind=dummy\\n'"
         " > %s && printf '[Match]\\nName=logincheck0\\n[Network]\\nAddress=%s/24\\n' > %s"
         " && systemctl start systemd-networkd" % (NETDEV, ADDRESS, NETWORK), timeout=60)
    deadline = time.monotonic() + 30
    while ADDRESS not in r.vm.run("cat /proc/net/fib_trie")[0]:
        if time.monotonic() > deadline:
            r.fail("systemd-networkd gave logincheck0 no address %s:\n%s"
                   % (ADDRESS, r.vm.run("networkctl --no-pager status logincheck0 2>&1")[0]))
        time.sleep(0.5)
    # What the escapes must show, from the guest itself.  \U counts utmp's
    # USER_PROCESS records with a name, as agetty does (`who` leaves out
    # those of dead processes): read with perl (384-byte records, ut_type
    # first, ut_user at 44).
    values = r.sh(". /etc/os-release; echo \"$PRETTY_NAME\"; uname -s; uname -r; uname -m;"
                  " uname -n; LC_ALL=C date '+%a %b %e  %Y';"
                  " perl -e 'my $n = 0; open(my $f, \"<\", \"/run/utmp\") or $f = undef;"
                  " while ($f && read($f, my $r, 384) == 384) { my ($t) = unpack(\"l\", $r);"
                  " $n++ if $t == 7 && substr($r, 44, 1) ne \"\\0\"; } print \"$n\\n\"'"
                  ).splitlines()
    pretty, sysname, release, machine, node, date, users = values[:7]
    users = int(users)
    expected = ["%s %s %s %s" % (pretty, sysname, release, machine),
                "Host %s on tty1, %d %s, %s" % (node, users, "user" if users == 1 else "users",
                                                date),
                "",
                "VT tty1 at %s" % ADDRESS,
                "",
                s.PROMPT]
    n = len(expected) - 1

    fresh_session(r, s.UNIT)
    decoded = r.wait_prompt("no login prompt in consoled's fresh session",
                            lambda d: ADDRESS in d)
    img = r.vm.grab()
    mine = issue_block(decoded, s.PROMPT, n)
    consoled_png = r.vm.save_png(img, "login-screen-consoled.png")
    mode, kbmode = r.vt_modes()
    if mode != s.KD_GRAPHICS or kbmode != s.K_OFF:
        r.fail("consoled's screen is not consoled's: KDGETMODE %d, KDGKBMODE %d" % (mode, kbmode))

    # getty@tty1 on the kernel's console (starting it stops consoled:
    # Conflicts=), in the font the reader knows.
    r.sh("systemctl start " + s.GETTY, timeout=90)
    r.wait_unit(s.GETTY, "getty", lambda p: p["SubState"] == "running", timeout=30)
    r.sh("setfont -C /dev/tty1 %s" % s.GUEST_FONT)
    decoded_g = r.wait_prompt("getty@tty1 shows no login prompt", lambda d: ADDRESS in d)
    img_g = r.vm.grab()
    getty_png = r.vm.save_png(img_g, "login-screen-getty.png")
    theirs = issue_block(decoded_g, s.PROMPT, n)
    mode, kbmode = r.vt_modes()
    if mode != s.KD_TEXT:
        r.fail("getty's screen is not the kernel console's: KDGETMODE %d" % mode)
    s.log("login screen after %.1fs; pictures %s and %s\nconsoled:\n%s\ngetty:\n%s"
          % (time.monotonic() - t0, consoled_png, getty_png,
             "\n".join("  |" + l for l in mine or ["(no block)"]),
             "\n".join("  |" + l for l in theirs or ["(no block)"])))
    if theirs != expected:
        r.fail("getty's screen does not show the expected issue text:\n%r\nexpected:\n%r"
               % (theirs, expected))
    if mine != theirs:
        r.fail("consoled's login screen differs from getty's:\nconsoled: %r\ngetty:    %r"
               % (mine, theirs))


def check_autologin(r):
    s = r.sysd
    user = s.USER
    shell_prompt = s.SHELL_PROMPT
    cursor = r.journal_cursor()
    r.sh("mkdir -p %s && printf 'autologin=%s@tty1\\n' > %s"
         % (os.path.dirname(s.DROPIN), user, s.DROPIN))
    t0 = time.monotonic()
    try:
        fresh_session(r, s.UNIT)
        auto_line = "%s %s (automatic login)" % (s.PROMPT, user)
        r.wait_text(s.FONT, lambda d: any(l.rstrip() == auto_line for l in d.lines)
                    and any(l.startswith(shell_prompt) for l in d.lines),
                    "no automatic login of %s" % user, timeout=s.LOGIN_WAIT)
        s.log("logged in automatically after %.1fs" % (time.monotonic() - t0))
        sessions = r.sh("loginctl list-sessions --no-legend")
        if not re.search(r"\b%s\b.*\bseat0\b" % user, sessions):
            r.fail("%s has no logind session on seat0:\n%s" % (user, sessions))
        who = r.sh("who")
        if not re.search(r"^%s\s+pts/\d+" % user, who, re.M):
            r.fail("%s is not in utmp; who says:\n%s" % (user, who))
        text = r.journal_since(cursor, "-o cat -u 'consoled-session@*'")
        if "Automatic login of %s on tty1" % user not in text:
            r.fail("consoled-session did not log the automatic login:\n" + text)
    finally:
        r.sh("rm -f %s" % s.DROPIN)
    # The next session reads the files again: the login prompt.
    r.vm.send_text("exit\n")
    r.wait_prompt("no login prompt after the autologin's logout",
                  lambda d: shell_prompt not in d and "automatic login" not in d)


def printf_format(text):
    """text as printf's format in single quotes: one line of shell for the
    harness's serial shell."""
    return "'" + text.replace("\\", "\\\\").replace("\n", "\\n") + "'"


def install(runner_class, sysd):
    """Adds the checks to systemdtest's Runner; sysd is systemdtest itself."""
    runner_class.sysd = sysd
    runner_class.check_login_screen = check_login_screen
    runner_class.check_autologin = check_autologin

