#!/usr/bin/python3
"""consoled under systemd: one boot of a Debian 12 guest with consoled@tty1
in place of getty@tty1, as README and consoled(8) tell users to set it up.

    systemdtest.py --build BUILD [--only CHECK,...] [--out DIR]

The guest (tests/vm/rootfs.py) is a cached debootstrap tree plus, per run,
the project installed with `meson install --destdir` from BUILD, the test
kernel's modules, a test user, the DRM `cirrus` driver blacklisted and
`cirrusfb` in modules-load.d, getty@tty1 disabled and consoled@tty1 enabled
(with `systemctl` of the guest, run in a chroot), and a consoled.conf naming
Lat15-Fixed16, the font the screen reader knows.  QEMU shows the Cirrus
GD5446; the harness reads the screen with screendump and types with send-key.

Checks (TAP, in this order; a failed check restarts consoled@tty1 and the
next one runs):

  fbdev        fb0 is cirrusfb ("CL Picasso4"): the blacklist kept the DRM
               driver, which is installed, from taking the card.
  units        consoled@tty1 is active (Type=notify: it said READY, and its
               STATUS= names tty1) and enabled, so is consoled-session.socket,
               getty@tty1 is inactive and disabled; the login prompt is on
               screen.
  security     `systemd-analyze security consoled@tty1.service` rates the
               sandbox at an exposure of at most 1.8 (the table's lines that
               count go to the log).
  sandbox      consoled runs with NoNewPrivs, seccomp and a bounding set of
               CAP_SYS_RAWIO and CAP_SYS_TTY_CONFIG only; in its mount
               namespace (nsenter -m) systemctl reaches neither systemd nor
               the system bus, /etc is read-only and /home empty, while the
               notify socket and consoled-session's socket are there.
  kmsg-sandbox Kernel messages under the sandbox (ProtectKernelLogs=yes):
               consoled-session refuses the harness's shell's request for
               /dev/kmsg (session-client kmsg); consoled has no CAP_SYSLOG
               in its bounding set, /dev/kmsg cannot be read in its mount
               namespace (nsenter -m), yet it holds a /dev/kmsg fd
               (consoled-session's) and logged nothing about kernel messages
               missing; `echo '<2>consoled-kmsg-sd-1' > /dev/kmsg` shows in
               the band on the screen. Then consoled is killed (SIGKILL):
               the next one adopts the session from the fd store, does not
               show the last one's band again, asks consoled-session again,
               and a second message shows too.
  plugin       The cirrus plugin runs in the sandbox: this consoled's journal
               has "GD54xx BitBLT through VGA ports" (ioperm) and no line of
               a blitter refused or dropped.
  login        The test user logs in on tty1 with keys, runs a command
               (MARKER-42 on screen), has a logind session on seat0, VT 1,
               is in utmp (who) and has a scrollback (Shift+PageUp); after
               `exit`, a fresh login prompt shows nothing of the session,
               neither does Shift+PageUp, utmp no longer lists the user
               and wtmp (last) has the session.
  session      The session runs outside consoled's unit and sandbox: login's
               parent is the consoled-session@ instance that consoled's
               connection started, login and the shell are in the logind
               session's scope, consoled@tty1's cgroup holds consoled alone;
               the shell has NoNewPrivs 0 and PID 1's bounding set; login's
               environment has only the session's variables (TERM, PATH,
               XDG_SEAT, XDG_VTNR, locale), none of consoled's or the
               helper's (NOTIFY_SOCKET, INVOCATION_ID, LISTEN_FDS, ...).
  logind-control  What a compositor started from the login does first: the
               test user's program (vtgrab logind) calls logind's
               TakeControl on its own session, and logind puts VT 1 in its
               mode (VT_PROCESS with SIGRTMIN and SIGRTMIN + 1, KD_GRAPHICS,
               K_OFF): consoled's journal says the VT was taken, keys typed
               meanwhile reach nothing (the program's input queue is empty,
               the shell never runs them); after ReleaseControl (logind's
               restore: KD_TEXT, keyboard, VT_AUTO) consoled takes the VT
               again (its own signals, K_OFF), its screen is back with the
               program's output and typing works.
  share        The selection buffer shared between one user's VTs,
               with consoled@tty2 and @tty3 started: the test user sets it
               on tty1 with OSC 52 and it is in /run/consoled/selection-UID
               (root's, 0600, one link, tmpfs), consoled logs the shared uid;
               Shift+Insert at tty2's login prompt pastes nothing; logged in
               on tty2, Shift+Insert into `cat > file` gives the text; a
               second user on tty3 pastes nothing and has no file; after
               the logout on tty2 the file stays (tty1's session), after the
               one on tty1 it is gone.
  vim, less, tmux, mc, htop, nano, dialog, htop-c, nano-c, dialog-c
               Real programs driven with keys, one after the
               other in one login of the test user, with LANG=C.UTF-8 and
               (-c) LANG=C, where ncurses writes runs of a character
               (spaces, ACS lines) with rep.  After a program that switches
               to the alternate screen quits, the shell's screen up to the
               command line is back pixel for pixel and the new prompt looks
               like the old one (no attribute left on).
               vim: comments in Cyan (it found a dark background); a real
               kernel message (after dmesg -n 8, drop_caches' pr_info) in
               the band over vim's last row, the rows above unchanged, the
               screendump saved as <out>/systemd-vim-kmsg.png, and vim's
               screen back pixel for pixel when it goes; Ctrl-F scrolls,
               :help, :vsplit's | column, :q three times.
               less: a search's match in reverse video, q.
               tmux: the green status line; Ctrl-b % splits at a vertical
               line, read in the right pane takes a line with a Backspace,
               Ctrl-b Left and one in the left; exit twice: [exited].
               mc -u: its key bar and blue panels; F9 and Down open the
               Left menu, Shift+F4 the editor, Alt+? Find File; F10.
               htop: the header's columns aligned, the list header green to
               the edge; q.  nano: the title bar reverse to both edges, text
               typed, ^G's help, ^X, no save.  dialog: a 7x40 msgbox's
               frame, tee and corners in their cells, grey on blue; Enter.
  queries      The terminal's answers to what programs ask (DA1, XTVERSION,
               XTWINOPS, XTGETTCAP, DECRQSS, DECRQM): see termchecks.py.
  vim-cursor   vim's insert mode shows a bar cursor (DECSCUSR from the
               usual vimrc lines), Esc a block: see termchecks.py.
  images       img2sixel and chafa --format sixel show their pictures,
               equal to libsixel's decoding of what they wrote: see
               termchecks.py.
  config       A drop-in sets palette=xterm and has a bad line: after a
               restart the journal has the error (priority err) with
               file:line, consoled runs, and the prompt is drawn in xterm's
               white; without the drop-in, the Linux console's again.
  colorfgbg    A drop-in sets palette=solarized-light, foreground=#102030
               and color3=; after a stop and start the login prompt is
               #102030 on Solarized's base3, and the login that
               consoled-session started has COLORFGBG=8;15 (the nearest of
               the 16 to #102030, and base3); without the drop-in, back.
  kill         kill -9 of consoled at login's password prompt: systemd
               restarts it, the half-typed login is back (session restore)
               and keys work (the password completes the login).
  stop         `systemctl stop` leaves tty1 in KD_TEXT with a keyboard mode
               other than K_OFF and blank (text written to /dev/tty1 while
               consoled ran is cleared), fbcon draws text written to /dev/tty1, no
               getty is started (a stop is no failure); start brings the
               prompt back.
  hotplug      A USB keyboard plugged in through QMP (usb-kbd on the xhci
               controller) is picked up from udev through the sandbox and
               types the user name into the login prompt (its event node saw
               the keys); unplugged, consoled drops it.
  helper-refuses  A well-formed request with a pty slave from the harness's
               root shell (consoled-test-shell.service, not consoled@ttyN)
               is refused: no session, an error in the helper's journal.
  restore-segv, restore-kill, restore-watchdog, restore-restart
               Session restore, in one login of the test user:
               lines for the scrollback, a background job that stopped
               itself (kill -STOP $$), then vim (segv, watchdog) or less
               (kill, restart) on a file, both on the alternate screen with
               application cursor keys; then consoled gets SIGSEGV, SIGKILL,
               a watchdog abort (a runtime drop-in sets WatchdogSec=3s, the
               test build's SIGUSR2 hook stalls the loop) or `systemctl
               restart`.  The screen after the restart equals the one before
               pixel for pixel, and for the three crashes every picture in
               between is the frozen frame, black or the restored frame being
               drawn (pixel by pixel), and tty1 never left KD_GRAPHICS and
               K_OFF (polled every 10 ms in the guest: no kernel console in
               between).  The shell is the same process in the same logind
               session, Down Down moves vim's cursor or scrolls less by two
               lines, the quit key gives back the shell's screen as it was,
               the job continued by SIGCONT prints on the terminal, and
               Shift+PageUp shows the scrollback from before.
  restore-logout  The restored session (after a restart) leaves stand-ins on
               its alternate screen and logs out: a fresh
               login prompt with nothing of it, neither on screen nor with
               Shift+PageUp, logind's session gone, and the next login's
               Shift+PageUp shows nothing of it either; the login prompt
               after the logout is kept over a restart (no warning about its
               snapshot: it holds no stale stand-in).
  restore-corrupt  consoled's snapshot memfd (/proc/PID/fd) overwritten with
               random bytes from outside, then SIGKILL: a warning about the
               snapshot in the journal, a fresh login prompt whose every
               cell decodes (no garbage) and nothing of the session on it,
               and the session's shell is gone (hung up).
  no-helper    consoled-session.socket masked and stopped, consoled@tty1
               stopped (no session kept) and started: it exits with status 5
               at once, is not restarted, and getty@tty1
               runs; with the socket back, consoled is back.
  no-fb        A drop-in names /dev/fb9: consoled exits with status 3, is not
               restarted, and getty@tty1 runs within seconds (OnFailure=).
  fb-wait      A drop-in names /dev/fb7 with fb-wait=60, while udev's queue
               holds an event (udevadm control --stop-exec-queue, then a
               change event): consoled is activating, its STATUS= says it
               waits up to 60 s for /dev/fb7, and it still waits well past
               the 2 s grace; once the queue runs and empties, consoled
               gives up within seconds, not after 60 (udev's coldplug is
               done: the journal says so), exits with status 3, is not
               restarted and getty@tty1 runs.
  giveup       consoled killed with SIGKILL until systemd gives up (the
               start limit: "Start request repeated too quickly"):
               consoled-fallback@tty1 ran and logged the boot mode consoled
               logged as restored, getty@tty1 runs, fb0 has the boot mode's
               virtual size and depth, tty1 is in KD_TEXT with a keyboard,
               the kernel's console draws getty's prompt in the Linux
               console's white on a screen of the boot mode's size, and the
               user name typed reaches getty (Password:).  A runtime drop-in
               sets TTYReset=no on getty@tty1, whose own reset would set the
               text mode and the keyboard and so hide a fallback that does
               not (fbcon itself sets the mode it recorded for the VT when it
               goes back to text mode, so fb0's mode proves less: the
               fallback's log line is checked for it).  Then consoled again.

  compose, keymap  Dead keys, the Compose key and KEYMAP= of vconsole.conf
              : see kbdchecks.py.
  login-screen, autologin
               The login screen as getty's (tests/vm/logincheck.py).

  package      (run before weston) The Debian package, built on
               the host, installed, upgraded with a user logged in and
               purged in the guest: see pkgcheck.py.

  weston       The last check (it leaves the guest on the DRM driver):
               consoled@tty1 stopped, fbcon unbound, cirrusfb replaced by
               the DRM cirrus driver, logind restarted (it would not hand
               out the late card), consoled started on cirrusdrmfb; tester
               runs weston (DRM backend, pixman) from the login: weston's
               log says its shell launched, consoled's journal that the VT
               was taken; `echo leaked > /tmp/leaked` typed meanwhile never
               reaches the shell; after weston is killed consoled logs the
               hand-back, the shell's screen above the command line is back
               pixel for pixel and a typed command runs.
  vcs          (run before weston) The mirror within consoled@tty1's sandbox
              : while the test user is logged in,
               /dev/vcsu1 shows the output of a printf with é and the prompt
               on its last line, /dev/vcsa1's cursor is right after that
               prompt; after `exit`, /dev/vcsu1 shows the login prompt and
               nothing of the session.

Logs, the guest's console and pictures of failures go to --out.
"""

import argparse
import base64
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import initramfs  # noqa: E402
import kbdchecks  # noqa: E402
import kernel as kernel_mod  # noqa: E402
import logincheck  # noqa: E402
import pkgcheck  # noqa: E402
import rootfs  # noqa: E402
import screen  # noqa: E402
import seatcheck  # noqa: E402
import termchecks  # noqa: E402
import turns  # noqa: E402
import vmlib  # noqa: E402
import vmtest  # noqa: E402

HOSTNAME = "consoled-sd"
USER, PASSWORD = "tester", "Cons0led-sd-test"
# The share check's second user.
USER2, PASSWORD2 = "tester2", "Cons0led-sd-other"
PROMPT = HOSTNAME + " login:"
SHELL_PROMPT = "%s@%s:~$" % (USER, HOSTNAME)
UNIT = "consoled@tty1.service"
GETTY = "getty@tty1.service"
SOCKET = "consoled-session.socket"
HELPER_SOCKET = "/run/consoled-session.sock"
# The test tool asking the helper for a session (tests/vm/session-client.c).
SESSION_CLIENT = "/usr/local/libexec/consoled-test/session-client"
# The test tool taking a VT (tests/vm/vtgrab.c): here through logind.
VTGRAB = "/usr/local/libexec/consoled-test/vtgrab"
# consoled@.service's bounding set: CAP_SYS_RAWIO (17), CAP_SYS_TTY_CONFIG (26).
CONSOLED_CAPS = (1 << 17) | (1 << 26)
CAP_SYSLOG = 34
LOGIN_WAIT = 60  # seconds each step of a login may take (login())
# What `systemd-analyze security` may rate consoled@.service at most: what
# systemd 252 rates it at in the guest.
MAX_EXPOSURE = 1.8
# Variables of consoled's and the helper's own that no session may see.
SERVICE_ENV = ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "INVOCATION_ID",
               "JOURNAL_STREAM", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "MANAGERPID",
               "RUNTIME_DIRECTORY", "SYSTEMD_EXEC_PID", "CONSOLED_")
# What the helper gives login -p (daemon/session/session.c, session_env()).
SESSION_ENV = re.compile(r"^(TERM|COLORTERM|COLORFGBG|PATH|XDG_SEAT|XDG_VTNR|LANG|LANGUAGE"
                         r"|LC_\w+|TZ)=")

FALLBACK = "consoled-fallback@tty1.service"
# Session restore's test drop-in (a runtime one: systemctl daemon-reload).
UNIT_DROPIN = "/run/systemd/system/%s.d/50-systemdtest.conf" % UNIT
GETTY_DROPIN = "/run/systemd/system/%s.d/50-systemdtest.conf" % GETTY
# The restore checks' background job: it stops itself at once and, when
# continued, prints its line on the session's terminal.
JOB = "sh -c 'kill -STOP $$; echo JOB-RESUMED-$((6*7))'"
JOB_LINE = "JOB-RESUMED-42"
# The snapshot consoled keeps for systemd's file descriptor store (snapshot.h).
SNAPSHOT_LINK = "/memfd:consoled-snapshot (deleted)"

FONT = "Lat15-Fixed16.psf.gz"                # in vmtest.FONT_DIR on the host
# How long udev's queue stays empty before consoled's wait for a framebuffer
# ends (daemon/devices/fbwait.h FBWAIT_SETTLE_USEC), in seconds.
FBWAIT_SETTLE = 2
GUEST_FONT = "/usr/local/share/consolefonts/" + FONT
DROPIN = "/etc/consoled/consoled.conf.d/50-systemdtest.conf"

# Modules the guest may load: the card's fbdev driver and the DRM driver
# the blacklist must keep out, keyboards (evdev; xhci and usbhid for the one
# plugged in through QMP), autofs4 (systemd asks).
GUEST_MODULES = ["cirrusfb", "cirrus", "evdev", "xhci_pci", "usbhid", "hid_generic", "autofs4",
                 "drm_shmem_helper"]
# The login-screen check's dummy interface (logincheck.py).
GUEST_MODULES += ["dummy"]
# The seat checks' second card (seatcheck.py; blacklisted at boot).
GUEST_MODULES += seatcheck.MODULES
# The weston check: the compositor from the test user's login, with the DRM
# cirrus driver (weston has no fbdev backend since 10) and no GPU.
WESTON = "weston --backend=drm-backend.so --use-pixman --log=/tmp/weston.log"
WESTON_LOG = "/tmp/weston.log"

# xterm's 16 colours (daemon/color/palette.c); index 7 is the default foreground.
XTERM_PALETTE = [
    (0x00, 0x00, 0x00), (0xcd, 0x00, 0x00), (0x00, 0xcd, 0x00), (0xcd, 0xcd, 0x00),
    (0x00, 0x00, 0xee), (0xcd, 0x00, 0xcd), (0x00, 0xcd, 0xcd), (0xe5, 0xe5, 0xe5),
    (0x7f, 0x7f, 0x7f), (0xff, 0x00, 0x00), (0x00, 0xff, 0x00), (0xff, 0xff, 0x00),
    (0x5c, 0x5c, 0xff), (0xff, 0x00, 0xff), (0x00, 0xff, 0xff), (0xff, 0xff, 0xff),
]

# linux/kd.h
KDGETMODE, KDGKBMODE = 0x4B3B, 0x4B44
KD_TEXT, KD_GRAPHICS, K_OFF = 0, 1, 4


def log(msg):
    """TAP comment lines."""
    print("".join("# %s\n" % line for line in msg.rstrip("\n").split("\n")), end="", flush=True)


# --- the guest's file system ----------------------------------------------------

def check_libraries(build, root):
    """Every library the built consoled loads must be in the tree; a new
    dependency names the package to add to rootfs.PACKAGES."""
    binaries = [os.path.join(build, "daemon", name) for name in ("consoled", "consoled-session")]
    for lib in sorted({lib for binary in binaries for lib in initramfs.ldd_paths(binary)}):
        if not os.path.exists(os.path.join(root, lib.lstrip("/"))):
            owner = subprocess.run(["dpkg", "-S", lib], capture_output=True, text=True).stdout
            raise RuntimeError("the guest lacks %s (%s): add its package to rootfs.PACKAGES"
                               % (lib, owner.split(":")[0] or "package unknown"))


def setup_guest(root, build):
    """Install consoled from the build tree and configure the guest as a user would."""
    rootfs.run_host(["meson", "install", "-C", build, "--destdir", root, "--no-rebuild", "--quiet"])
    check_libraries(build, root)
    font_dir = os.path.join(root, os.path.dirname(GUEST_FONT).lstrip("/"))
    os.makedirs(font_dir, exist_ok=True)
    shutil.copy2(os.path.join(vmtest.FONT_DIR, FONT), font_dir)
    client = os.path.join(root, SESSION_CLIENT.lstrip("/"))
    os.makedirs(os.path.dirname(client), exist_ok=True)
    shutil.copy2(os.path.join(build, "tests", "vm", "session-client"), client)
    shutil.copy2(os.path.join(build, "tests", "vm", "vtgrab"),
                 os.path.join(root, VTGRAB.lstrip("/")))
    shutil.copy2(os.path.join(build, "tests", "vm", "con2fb"),
                 os.path.join(root, seatcheck.CON2FB.lstrip("/")))
    rootfs.write(root, "/etc/consoled/consoled.conf",
                 "# The font the harness's screen reader decodes.\nfont-file=%s\n" % GUEST_FONT)
    # The fbdev driver, not DRM's cirrus, must own the card (docs/HARDWARE.md).
    # Debian's kmod blacklists every fbdev driver in /lib/modprobe.d/
    # fbdev-blacklist.conf, which modules-load.d honours: a file of the same
    # name in /etc replaces it (modprobe.d(5)); keep all but cirrusfb.
    with open(os.path.join(root, "lib/modprobe.d/fbdev-blacklist.conf")) as f:
        blacklist = "".join(l for l in f if l.split() != ["blacklist", "cirrusfb"])
    rootfs.write(root, "/etc/modprobe.d/fbdev-blacklist.conf", blacklist)
    rootfs.write(root, "/etc/modprobe.d/consoled-test.conf",
                 "blacklist cirrus\n" + seatcheck.BLACKLIST)
    rootfs.write(root, "/etc/modules-load.d/consoled-test.conf", "cirrusfb\n")
    rootfs.chroot(root, "useradd", "--create-home", "--shell", "/bin/bash", USER)
    rootfs.chroot(root, "chpasswd", stdin="%s:%s\n" % (USER, PASSWORD))
    rootfs.chroot(root, "useradd", "--create-home", "--shell", "/bin/bash", USER2)
    rootfs.chroot(root, "chpasswd", stdin="%s:%s\n" % (USER2, PASSWORD2))
    # README: systemctl disable getty@tty1.service;
    # systemctl enable consoled-session.socket consoled@tty1.service
    rootfs.chroot(root, "systemctl", "--quiet", "disable", GETTY)
    rootfs.chroot(root, "systemctl", "--quiet", "enable", SOCKET, UNIT)
    # The package check's .debs and the list of what meson installed.
    pkgcheck.setup_guest(root, build)


# --- the checks -------------------------------------------------------------------

class Runner(vmtest.Runner):
    # Checks with wall-clock bounds (turns.py): kmsg-sandbox and vim catch
    # the band's 5 s; restore-watchdog runs under WatchdogSec=3s; giveup
    # needs six starts within StartLimitIntervalSec=30; security's one
    # command takes 24-46 s of its 60.
    TIMED = {"kmsg-sandbox", "vim", "restore-watchdog", "giveup", "security"}

    """vmtest's runner (TAP lines, screen waits, pictures of failures) with
    the journal as the log and systemd restoring the state after a failure."""

    def check(self, name, fn):
        # The test restarts consoled@tty1 more often than StartLimitBurst=
        # allows any user to; every check starts with a fresh count.
        self.vm.run("systemctl reset-failed " + UNIT)
        super().check(name, fn)

    def dump_log(self):
        try:
            out, _ = self.vm.run("journalctl -b --no-pager -o short-monotonic -n 40"
                                 " -u consoled@tty1 -u getty@tty1", timeout=30)
            print("# journal:\n" + "".join("#   " + l + "\n" for l in out.splitlines()), flush=True)
        except Exception:  # noqa: BLE001 -- best effort only
            pass

    def cleanup(self):
        try:
            self.vm.qmp.cmd("device_del", id="usbkbd")
        except Exception:  # noqa: BLE001 -- only there after a failed hotplug
            pass
        try:
            # (the share check's VTs too)
            self.vm.run("systemctl stop consoled@tty2 consoled@tty3; chvt 1;"
                        " rm -f %s %s %s; systemctl daemon-reload;"
                        " systemctl unmask --runtime %s; systemctl start %s;"
                        " systemctl reset-failed %s; systemctl restart %s"
                        % (DROPIN, UNIT_DROPIN, GETTY_DROPIN, SOCKET, SOCKET, UNIT, UNIT),
                        timeout=60)
        except Exception:  # noqa: BLE001 -- best effort only
            pass

    # -- guest helpers --

    def unit(self, unit, *props):
        """{property: value} of a unit (systemctl show)."""
        out = self.sh("systemctl show --property=%s %s" % (",".join(props), unit))
        return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)

    def wait_unit(self, unit, what, predicate, timeout=30):
        """Poll the unit's properties until predicate(props) holds."""
        props = ("ActiveState", "SubState", "Result", "MainPID", "ExecMainStatus", "NRestarts")
        deadline = time.monotonic() + timeout
        while True:
            state = self.unit(unit, *props)
            if predicate(state):
                return state
            if time.monotonic() > deadline:
                self.fail("%s: %s did not happen within %ds; %r" % (unit, what, timeout, state))
            time.sleep(0.5)

    def journal_cursor(self):
        out = self.sh("journalctl -n 0 --show-cursor --no-pager")
        return re.search(r"-- cursor: (\S+)", out).group(1)

    def journal_since(self, cursor, args="-o cat"):
        """The entries after the cursor's that args (a filter, a format)
        select.  journalctl 252's --after-cursor seeks to the cursor and
        steps two entries on (sd_journal_next_skip(j, 2)) whether or not the
        cursor's own entry passes the filter: when it does not (a cursor
        taken from the whole journal, a filter of one unit), the first entry
        the filter selects is dropped, and when it is the only one nothing
        shows.  So --after-cursor only when the filter selects the cursor's
        entry (the first entry of --cursor, inclusive, is it), --cursor
        otherwise."""
        return self.sh("c='%s'; if journalctl --no-pager --cursor=\"$c\" %s -o json"
                       " --output-fields=__CURSOR | head -n 1 | grep -qF \"\\\"$c\\\"\";"
                       " then journalctl --no-pager --after-cursor=\"$c\" %s;"
                       " else journalctl --no-pager --cursor=\"$c\" %s; fi"
                       % (cursor, args, args, args))

    def wait_journal(self, cursor, needle, what, timeout=15, unit=UNIT):
        """Wait for a message of `unit` (a glob: -u) with `needle` at priority
        err or higher after the cursor: journald takes a service's stderr
        asynchronously, so it may come after systemd's own messages.  (The
        priority is checked here, as it was when --after-cursor with -p
        showed nothing: journal_since() says why.)"""
        query = "-u '%s' -o json --output-fields=PRIORITY,MESSAGE" % unit
        deadline = time.monotonic() + timeout
        while True:
            entries = [json.loads(line)
                       for line in self.journal_since(cursor, query).splitlines() if line]
            if any(needle in str(e.get("MESSAGE")) and int(e.get("PRIORITY", 6)) <= 3
                   for e in entries):
                return
            if time.monotonic() > deadline:
                got = "\n".join("<%s>%s" % (e.get("PRIORITY"), e.get("MESSAGE")) for e in entries)
                self.fail("%s: no error %r in the journal; %s logged:\n%s"
                          % (what, needle, unit, got))
            time.sleep(0.5)

    def invocation_log(self):
        """What the running consoled@tty1 logged (this invocation only)."""
        inv = self.unit(UNIT, "InvocationID")["InvocationID"]
        return self.sh("journalctl --no-pager -o cat _SYSTEMD_INVOCATION_ID=%s" % inv)

    def proc_status(self, pid):
        """{field: value} of /proc/PID/status."""
        out = self.sh("cat /proc/%s/status" % pid)
        return dict(l.split(":\t", 1) for l in out.splitlines() if ":\t" in l)

    def vt_modes(self):
        """(KDGETMODE, KDGKBMODE) of tty1, through perl (minbase has perl-base)."""
        out = self.sh("perl -e 'open(my $t, \"<\", \"/dev/tty1\") or die \"$!\";"
                      " for my $req (%d, %d) { my $v = pack(\"L\", 99);"
                      " ioctl($t, $req, $v) or die \"$!\"; print unpack(\"L\", $v), \" \"; }'"
                      % (KDGETMODE, KDGKBMODE))
        mode, kbmode = (int(v) for v in out.split())
        return mode, kbmode

    def wait_prompt(self, what, extra=lambda s: True, palette=screen.LINUX_PALETTE, timeout=30):
        """Wait for the login prompt (and extra(screen)); return the decoded screen."""
        font = vmtest.load_font(FONT)

        def shown(s):
            return any(l.rstrip() == PROMPT for l in s.lines) and extra(s)
        img, decoded = self.vm.wait_screen(font, shown, timeout=timeout)
        if not shown(decoded):
            path = self.vm.save_png(img, "systemd-%d-screen.png" % self.n)
            self.fail("%s; screen shows:\n%s\n(picture: %s)" % (what, decoded.text(), path))
        return screen.read_screen(img, font, palette)

    def prompt_colours(self, decoded):
        """Palette indices of the prompt's glyphs (-1: not a palette colour)."""
        row, col = decoded.find(PROMPT)
        return {decoded.fg[row][c] for c in range(col, col + len(PROMPT)) if PROMPT[c - col] != " "}

    def login(self, command, output, user=USER, password=PASSWORD):
        """Log in on tty1 (the VT in front) with keys, type `command`, wait for
        the line `output`. The waits are long: PAM, logind and the user's
        systemd instance start on a loaded machine (20 s failed twice there)."""
        self.vm.send_text(user + "\n")
        self.wait_text(FONT, lambda s: any(l.rstrip() == "Password:" for l in s.lines),
                       "no password prompt after the user name", timeout=LOGIN_WAIT)
        self.vm.send_text(password + "\n")
        shell_prompt = "%s@%s:~$" % (user, HOSTNAME)
        self.wait_text(FONT, lambda s: any(l.startswith(shell_prompt) for l in s.lines),
                       "no shell prompt after the password", timeout=LOGIN_WAIT)
        self.vm.send_text(command + "\n")
        return self.wait_text(FONT, lambda s: any(l.rstrip() == output for l in s.lines),
                              "%r did not print %r" % (command, output), timeout=LOGIN_WAIT)

    # -- checks --

    def check_fbdev(self):
        name = self.sh("cat /sys/class/graphics/fb0/name").strip()
        if name != "CL Picasso4":
            self.fail("fb0 is %r, expected cirrusfb's 'CL Picasso4'" % name)
        if self.vm.run("test -e /sys/module/cirrus")[1] == 0:
            self.fail("the DRM cirrus driver is loaded")
        if self.sh("ls /sys/class/graphics").split() != ["fb0", "fbcon"]:
            self.fail("framebuffers: %r" % self.sh("ls /sys/class/graphics"))
        path, status = self.vm.run("modinfo -n cirrus")
        if status != 0 or not path.strip().endswith("/cirrus.ko"):
            self.fail("the DRM cirrus module is not installed, so the blacklist proves nothing: "
                      + path)

    def check_units(self):
        active = self.vm.run("systemctl is-active %s %s %s" % (UNIT, SOCKET, GETTY))[0].split()
        enabled = self.vm.run("systemctl is-enabled %s %s %s" % (UNIT, SOCKET, GETTY))[0].split()
        if active != ["active", "active", "inactive"] or \
                enabled != ["enabled", "enabled", "disabled"]:
            self.fail("%s, %s, %s are %r and %r; expected active+enabled twice, then"
                      " inactive+disabled" % (UNIT, SOCKET, GETTY, active, enabled))
        props = self.unit(UNIT, "MainPID", "StatusText")
        comm = self.sh("cat /proc/%s/comm" % props["MainPID"]).strip()
        if comm != "consoled":
            self.fail("the main process of %s is %r" % (UNIT, comm))
        if not props["StatusText"].startswith("Running on tty1"):
            self.fail("consoled's STATUS= is %r" % props["StatusText"])
        decoded = self.wait_prompt("no login prompt on tty1")
        if self.prompt_colours(decoded) != {7}:
            self.fail("the prompt is drawn in colours %r, expected the Linux console's white"
                      % self.prompt_colours(decoded))

    def check_security(self):
        # COLUMNS: the table's names and descriptions uncut in the log.
        out = self.sh("COLUMNS=250 systemd-analyze security --no-pager %s 2>&1" % UNIT,
                      timeout=60)
        match = re.search(r"Overall exposure level for %s: (\d+\.\d+) (\S+)"
                          % re.escape(UNIT), out)
        if not match:
            self.fail("no exposure level in systemd-analyze security's output:\n" + out[-2000:])
        log("exposure %s %s; the lines that count:\n%s" % (match.group(1), match.group(2),
            "\n".join(re.sub(r"\s{2,}", "  ", l) for l in out.splitlines()
                      if l.startswith("\u2717"))))
        if float(match.group(1)) > MAX_EXPOSURE:
            self.fail("systemd-analyze security rates %s at %s %s, more than %.1f"
                      % (UNIT, match.group(1), match.group(2), MAX_EXPOSURE))

    def check_sandbox(self):
        pid = self.unit(UNIT, "MainPID")["MainPID"]
        status = self.proc_status(pid)
        if status.get("NoNewPrivs") != "1" or status.get("Seccomp") != "2" or \
                int(status.get("CapBnd", "0"), 16) != CONSOLED_CAPS:
            self.fail("consoled runs with NoNewPrivs %s, Seccomp %s, CapBnd %s; expected 1, 2"
                      " (filter), %016x" % (status.get("NoNewPrivs"), status.get("Seccomp"),
                                            status.get("CapBnd"), CONSOLED_CAPS))
        # The harness's shell reaches systemd; in consoled's mount namespace
        # (nsenter: only the namespace, with all of root's powers), neither
        # the private socket nor the system bus is there.
        self.sh("systemctl is-system-running >/dev/null")
        out, st = self.vm.run("nsenter -t %s -m -- systemctl is-system-running 2>&1" % pid)
        if st == 0 or "Failed to connect to bus" not in out:
            self.fail("systemctl in consoled's mount namespace reaches systemd (status %d): %s"
                      % (st, out))
        out, st = self.vm.run("nsenter -t %s -m -- busctl --system --no-pager list 2>&1" % pid)
        if st == 0:
            self.fail("the system bus answers in consoled's mount namespace:\n" + out[-500:])
        for path in ("/run/systemd/notify", HELPER_SOCKET):
            if self.vm.run("nsenter -t %s -m -- test -S %s" % (pid, path))[1] != 0:
                self.fail("%s is missing in consoled's mount namespace" % path)
        out, st = self.vm.run("nsenter -t %s -m -- touch /etc/consoled-sandbox 2>&1" % pid)
        if st == 0 or "Read-only file system" not in out:
            self.fail("/etc is writable in consoled's mount namespace: %s" % out)
        if self.sh("nsenter -t %s -m -- ls -A /home" % pid).strip():
            self.fail("/home is visible in consoled's mount namespace")

    def kmsg_shown(self, needle):
        """Write a <2> message to /dev/kmsg (the harness's shell, root) and
        wait for it in the band on the screen."""
        self.sh("echo '<2>%s' > /dev/kmsg" % needle)
        self.wait_text(FONT, lambda s: needle in s,
                       "the kernel message %r is not shown over the session" % needle,
                       timeout=15)

    def kmsg_sandboxed(self, pid, when):
        """consoled (pid) reads /dev/kmsg through a fd it was given, and could
        not open the device itself."""
        capbnd = int(self.proc_status(pid).get("CapBnd", "0"), 16)
        if capbnd & (1 << CAP_SYSLOG):
            self.fail("%s: consoled's bounding set %016x has CAP_SYSLOG" % (when, capbnd))
        out, st = self.vm.run("nsenter -t %s -m -- dd if=/dev/kmsg of=/dev/null bs=8192"
                              " count=1 iflag=nonblock 2>&1" % pid)
        if st == 0:
            self.fail("%s: /dev/kmsg can be read in consoled's mount namespace"
                      " (no ProtectKernelLogs=?): %s" % (when, out))
        fds = self.sh("ls -l /proc/%s/fd" % pid)
        if not re.search(r"-> /dev/kmsg$", fds, re.M):
            self.fail("%s: consoled holds no /dev/kmsg fd:\n%s" % (when, fds))
        missing = [l for l in self.invocation_log().splitlines()
                   if "/dev/kmsg" in l or "kernel messages" in l]
        if missing:
            self.fail("%s: consoled logged:\n%s" % (when, "\n".join(missing)))

    def check_kmsg_sandbox(self):
        self.wait_prompt("no login prompt before the kernel message")
        # Only consoled@ttyN.service gets it: not the harness's shell.
        out = self.sh("%s %s kmsg" % (SESSION_CLIENT, HELPER_SOCKET), timeout=60).strip()
        if out != "refused":
            self.fail("consoled-session answered %r to the harness's shell's request for"
                      " /dev/kmsg, not 'refused'" % out)
        pid = self.unit(UNIT, "MainPID")["MainPID"]
        self.kmsg_sandboxed(pid, "at start")
        self.kmsg_shown("consoled-kmsg-sd-1")
        # A crash: the next consoled adopts the session without consoled-
        # session's START, and asks it for /dev/kmsg all the same.
        self.sh("kill -KILL %s" % pid)
        self.wait_unit(UNIT, "a restart after SIGKILL",
                       lambda p: p["ActiveState"] == "active" and p["MainPID"] not in ("0", pid))
        self.wait_prompt("no login prompt after the restart")
        # the band of the last consoled (shown for 5 s) is not brought back:
        # the snapshot has none, and the backlog of /dev/kmsg is not fresh
        shown = self.prog_screen(self.vm.grab())
        if "consoled-kmsg-sd-1" in shown:
            self.fail("after the restart the last consoled's band shows again:\n" + shown.text())
        pid = self.unit(UNIT, "MainPID")["MainPID"]
        if "Adopted the session" not in self.invocation_log():
            self.fail("the restarted consoled did not adopt the session:\n"
                      + self.invocation_log())
        self.kmsg_sandboxed(pid, "after the restart")
        self.kmsg_shown("consoled-kmsg-sd-2")

    def check_plugin(self):
        text = self.invocation_log()
        if not re.search(r"^cirrus: GD54xx BitBLT through VGA ports", text, re.M):
            self.fail("the cirrus plugin did not take the engine through the VGA ports;"
                      " consoled logged:\n" + text)
        bad = [l for l in text.splitlines()
               if re.search(r"could not take|without a blitter|[Dd]ropp|not permitted", l)]
        if bad:
            self.fail("the blitter had trouble:\n" + "\n".join(bad))

    def login_pids(self):
        """(login, shell) pids of the test user's session on tty1."""
        shells = self.sh("pgrep -u %s -x bash || true" % USER).split()
        if len(shells) != 1:
            self.fail("%d shells of %s: %r" % (len(shells), USER, shells))
        login = self.sh("ps -o ppid= -p %s" % shells[0]).strip()
        if self.sh("cat /proc/%s/comm" % login).strip() != "login":
            self.fail("the shell's parent %s is not login" % login)
        return login, shells[0]

    def check_session(self):
        self.wait_prompt("no login prompt before logging in")
        self.login("echo SESSION-$((6*7))", "SESSION-42")
        login, shell = self.login_pids()
        # login's parent: the helper started for consoled's connection, in
        # the instance systemd names after its peer (N-PID-UID).
        consoled = self.unit(UNIT, "MainPID")["MainPID"]
        helper = self.sh("ps -o ppid= -p %s" % login).strip()
        helper_unit = self.sh("cat /proc/%s/cgroup" % helper).strip().rsplit("/", 1)[-1]
        if not re.fullmatch(r"consoled-session@\d+-%s-0\.service" % consoled, helper_unit) or \
                self.unit(helper_unit, "MainPID")["MainPID"] != helper:
            self.fail("login's parent %s (in %s) is not the main process of the"
                      " consoled-session@ instance of consoled's (%s) connection"
                      % (helper, helper_unit, consoled))
        session = self.sh("loginctl list-sessions --no-legend | awk '$3 == \"%s\" {print $1}'"
                          % USER).strip()
        for pid in (login, shell):
            cgroup = self.sh("cat /proc/%s/cgroup" % pid).strip()
            if not cgroup.endswith("/session-%s.scope" % session):
                self.fail("process %s is in %s, not in logind's session-%s.scope"
                          % (pid, cgroup, session))
        procs = self.sh("cat /sys/fs/cgroup%s/cgroup.procs"
                        % self.unit(UNIT, "ControlGroup")["ControlGroup"]).split()
        if procs != [self.unit(UNIT, "MainPID")["MainPID"]]:
            self.fail("%s's cgroup holds %r, not consoled alone" % (UNIT, procs))
        # Outside the sandbox: a user may gain privileges (sudo, su).
        status, init = self.proc_status(shell), self.proc_status(1)
        if status.get("NoNewPrivs") != "0" or status.get("CapBnd") != init.get("CapBnd"):
            self.fail("the shell runs with NoNewPrivs %s and CapBnd %s (PID 1's: %s)"
                      % (status.get("NoNewPrivs"), status.get("CapBnd"), init.get("CapBnd")))
        for pid in (login, shell):
            env = self.sh("tr '\\0' '\\n' < /proc/%s/environ" % pid).split("\n")
            leaked = [e for e in env if e.startswith(SERVICE_ENV)]
            if leaked:
                self.fail("process %s has service variables: %r" % (pid, leaked))
        env = [e for e in self.sh("tr '\\0' '\\n' < /proc/%s/environ" % login).split("\n") if e]
        foreign = [e for e in env if not SESSION_ENV.match(e)]
        if foreign or "XDG_VTNR=1" not in env or "XDG_SEAT=seat0" not in env:
            self.fail("login got %r (foreign: %r)" % (env, foreign))
        self.vm.send_text("exit\n")
        self.wait_prompt("no login prompt after the logout", lambda s: "SESSION" not in s)

    def check_login(self):
        self.wait_prompt("no login prompt before logging in")
        self.login("seq -f 'secret-%g' 1 60; echo MARKER-$((6*7))", "MARKER-42")
        # XDG_SEAT and XDG_VTNR from consoled: pam_systemd registers a seat session.
        sessions = [l.split() for l in self.sh("loginctl list-sessions --no-legend").splitlines()]
        ids = [f[0] for f in sessions if len(f) > 2 and f[2] == USER]
        if len(ids) != 1:
            self.fail("logind has %d sessions of %s: %r" % (len(ids), USER, sessions))
        props = self.sh("loginctl show-session %s --property=Seat --property=VTNr" % ids[0])
        if sorted(props.split()) != ["Seat=seat0", "VTNr=1"]:
            self.fail("the logind session is not on seat0, VT 1:\n" + props)
        who = self.sh("who")
        if not re.search(r"^%s\s+pts/\d+" % USER, who, re.M):
            self.fail("%s is not in utmp while logged in; who says:\n%s" % (USER, who))
        # The session has a scrollback, so the check after the logout means something.
        self.vm.send_keys(["shift", "pgup"])
        self.wait_text(FONT, lambda s: "secret-" in s and "MARKER-42" not in s,
                       "Shift+PageUp did not show the session's earlier lines")
        self.vm.send_keys(["shift", "pgdn"])
        self.wait_text(FONT, lambda s: "MARKER-42" in s, "Shift+PageDown did not come back")

        self.vm.send_text("exit\n")
        # (Debian's motd; the login screen's issue names Debian too.)
        leftovers = ("secret-", "MARKER", SHELL_PROMPT, "Password", "exit",
                     "programs included with the Debian")
        self.wait_prompt("no clean login prompt after the logout",
                         lambda s: not any(w in s for w in leftovers))
        self.vm.send_keys(["shift", "pgup"])
        time.sleep(1)
        decoded = screen.read_screen(self.vm.screendump(), vmtest.load_font(FONT))
        shown = [w for w in leftovers if w in decoded]
        if shown:
            self.fail("after the logout Shift+PageUp shows %r:\n%s" % (shown, decoded.text()))
        self.vm.send_keys(["shift", "pgdn"])
        who = self.sh("who")
        if USER in who:
            self.fail("%s is still in utmp after the logout:\n%s" % (USER, who))
        last = self.sh("last --fullnames %s" % USER)
        if not re.search(r"^%s\s+pts/\d+" % USER, last, re.M):
            self.fail("the session is not in wtmp; last says:\n" + last)

    def check_logind_control(self):
        self.wait_prompt("no login prompt before logging in")
        self.login("echo LOGIND-$((6*7))", "LOGIND-42")
        before = self.invocation_log()
        self.sh("rm -f /tmp/vtgrab.log /tmp/vtgrab.go")
        self.vm.send_text("%s logind /tmp/vtgrab.log /tmp/vtgrab.go; echo vtgrab-done\n" % VTGRAB)

        def wait_for(what, needle, read, timeout=30):
            deadline = time.monotonic() + timeout
            while needle not in read():
                if time.monotonic() > deadline:
                    self.fail("%s:\n%s" % (what, read()))
                time.sleep(0.5)
        vtgrab_log = lambda: self.vm.run("cat /tmp/vtgrab.log")[0]  # noqa: E731
        consoled_log = lambda: self.invocation_log()[len(before):]  # noqa: E731
        wait_for("TakeControl failed or did not happen", "taken", vtgrab_log)
        wait_for("consoled did not notice logind taking its VT",
                 "was taken by another program (VT_PROCESS, signals 34/35)", consoled_log)
        state = self.sh("%s state 1" % VTGRAB).strip()
        if state != "mode=process relsig=34 acqsig=35 kd=graphics kb=off":
            self.fail("logind's TakeControl left tty1 in %s" % state)
        self.vm.send_text("echo leaked\n")
        time.sleep(2)
        self.sh("touch /tmp/vtgrab.go")
        wait_for("ReleaseControl failed or did not happen", "released", vtgrab_log)
        inq = re.search(r"^inq (-?\d+)$", vtgrab_log(), re.M)
        if not inq or inq.group(1) != "0":
            self.fail("keys typed while logind had the VT reached the session's pty: %s bytes"
                      " in its input queue" % (inq.group(1) if inq else "?"))
        wait_for("consoled did not take its VT back", "was handed back: taking it again (in front)",
                 consoled_log)

        def back(s):
            lines = [l.rstrip() for l in s.lines]
            return "vtgrab-done" in lines and any(
                l.startswith(SHELL_PROMPT) for l in lines[lines.index("vtgrab-done") + 1:])
        _, decoded = self.wait_text(FONT, back, "consoled's screen did not come back")
        if "vtgrab: logind took the VT" not in decoded or "leaked" in decoded:
            self.fail("the screen after ReleaseControl:\n" + decoded.text())
        state = self.sh("%s state 1" % VTGRAB).strip()
        if state != "mode=process relsig=35 acqsig=36 kd=graphics kb=off":
            self.fail("consoled did not set its modes again: %s" % state)
        self.vm.send_text("echo typed-$((6*7))\n")
        self.wait_text(FONT, lambda s: any(l.rstrip() == "typed-42" for l in s.lines),
                       "typing after ReleaseControl failed")
        self.vm.send_text("exit\n")
        self.wait_prompt("no login prompt after the logout", lambda s: "LOGIND" not in s)

    # -- the selection buffer shared between one user's VTs --

    def share_file(self, user):
        return "/run/consoled/selection-" + self.sh("id -u %s" % user).strip()

    def share_paste_into(self, path, what):
        """`cat > path` in the shell in front, Shift+Insert, Ctrl+D: the file's bytes."""
        self.vm.send_text("cat > %s\n" % path)
        time.sleep(1)
        self.vm.send_combo(["shift", "insert"])
        time.sleep(1.5)
        self.vm.send_combo(["ctrl", "d"])
        self.vm.send_text("echo %s-$((6*7))\n" % what)
        self.wait_text(FONT, lambda s: any(l.rstrip() == what + "-42" for l in s.lines),
                       "%s: cat did not end" % what)
        return self.sh("cat %s" % path)

    def check_share(self):
        text = "SHARED-%d" % (4700 + 11)
        b64 = base64.b64encode((text + "\n").encode()).decode()
        a_file, b_file = self.share_file(USER), self.share_file(USER2)
        self.sh("rm -f /tmp/share-a /tmp/share-b; systemctl start consoled@tty2 consoled@tty3")
        self.wait_prompt("no login prompt on tty1")
        # A sets the buffer on tty1 through OSC 52.
        self.login("printf '\\e]52;c;%s\\a'; echo osc-$((6*7))" % b64, "osc-42")
        stat = self.sh("stat -c '%%U %%a %%h %%F' %s && cat %s" % (a_file, a_file))
        if stat != "root 600 1 regular file\n%s\n" % text:
            self.fail("after OSC 52 on tty1 the store is %r" % stat)
        where = self.sh("stat -f -c %T /run/consoled").strip()
        if where != "tmpfs":
            self.fail("/run/consoled is on %s" % where)
        # journald takes the line asynchronously
        uid, deadline = a_file.rsplit("-", 1)[1], time.monotonic() + 10
        while "shared between the sessions of uid %s" % uid not in self.invocation_log():
            if time.monotonic() > deadline:
                self.fail("consoled@tty1 did not log the shared uid %s:\n%s"
                          % (uid, self.invocation_log()))
            time.sleep(0.5)
        # A login prompt (tty2) pastes nothing.
        self.sh("chvt 2")
        self.wait_prompt("no login prompt on tty2")
        self.vm.send_combo(["shift", "insert"])
        time.sleep(2)
        _, decoded = self.wait_text(FONT, lambda s: True, "tty2")
        if text in decoded or "Password" in decoded:
            self.fail("Shift+Insert at tty2's login prompt pasted:\n" + decoded.text())
        # A on tty2 pastes what A copied on tty1.
        self.login("echo a2-$((6*7))", "a2-42")
        got = self.share_paste_into("/tmp/share-a", "a2cat")
        if got != text + "\n":
            self.fail("A's paste on tty2 gave %r, not %r" % (got, text + "\n"))
        # B on tty3 pastes nothing of A's, and has no file.
        self.sh("chvt 3")
        self.wait_prompt("no login prompt on tty3")
        self.login("echo b3-$((6*7))", "b3-42", USER2, PASSWORD2)
        got = self.share_paste_into("/tmp/share-b", "b3cat")
        if got != "":
            self.fail("B's paste on tty3 gave %r" % got)
        if self.sh("ls /run/consoled/ | grep -c '^selection-' || true").strip() != "1":
            self.fail("the store holds %r" % self.sh("ls -la /run/consoled"))
        self.vm.send_text("exit\n")
        self.wait_prompt("no login prompt after B's logout", lambda s: "b3-42" not in s)
        # A logs out of tty2: tty1's session keeps the buffer.
        self.sh("chvt 2")
        self.wait_text(FONT, lambda s: "a2cat-42" in s, "tty2 is not A's shell")
        self.vm.send_text("exit\n")
        self.wait_prompt("no login prompt after A's logout on tty2", lambda s: "a2-42" not in s)
        time.sleep(2)
        kept = self.sh("cat %s 2>&1 || true" % a_file)
        if kept != text + "\n":
            self.fail("A's buffer is gone while A is still logged in on tty1: %r" % kept)
        # ... and of tty1, A's last session: the buffer is wiped.
        self.sh("chvt 1")
        self.wait_text(FONT, lambda s: "osc-42" in s, "tty1 is not A's shell")
        self.vm.send_text("exit\n")
        self.wait_prompt("no login prompt after A's logout on tty1", lambda s: "osc-42" not in s)
        deadline = time.monotonic() + 15
        while self.sh("test -e %s && echo there || true" % a_file).strip() == "there":
            if time.monotonic() > deadline:
                self.fail("%s is still there after A's last logout; loginctl:\n%s"
                          % (a_file, self.sh("loginctl list-sessions --no-legend")))
            time.sleep(0.5)
        self.sh("systemctl stop consoled@tty2 consoled@tty3")

    # -- real programs, driven with keys --

    def prog_screen(self, img):
        return screen.read_screen(img, vmtest.load_font(FONT))

    def prog_wait(self, predicate, what, timeout=30):
        """Poll the screen until predicate(decoded) holds; the decoded screen."""
        img, decoded = self.vm.wait_screen(vmtest.load_font(FONT), predicate, timeout=timeout)
        if not predicate(decoded):
            path = self.vm.save_png(img, "systemd-%d-screen.png" % self.n)
            ps = self.vm.run("ps -u %s -o pid,stat,wchan:20,args" % USER)[0]
            self.fail("%s; screen shows:\n%s\n(picture: %s)\nthe user's processes:\n%s"
                      % (what, decoded.text(), path, ps))
        return decoded

    def prog_start(self, command):
        """Clear the screen, print a few lines, type `command` (no Enter yet)
        and take the screen as it is then; press Enter.  Return (picture,
        row of the command line, length of that line)."""
        self.vm.send_text("clear; seq -f 'before-%g' 1 4\n")
        self.prog_wait(lambda s: s.lines[3].rstrip() == "before-4"
                       and s.lines[4].startswith(SHELL_PROMPT) and not s.lines[5].strip(),
                       "no fresh prompt after clear")
        self.vm.send_text(command)
        line = SHELL_PROMPT + " " + command
        self.prog_wait(lambda s: s.lines[4].rstrip() == line, "%r not typed" % command)
        before = self.stable_grab()
        self.vm.send_keys(["ret"])
        return before, 4, len(line)

    def prog_back(self, before, row, width, what, restored=True, skip=0):
        """After a program quit: the new prompt `skip` + 1 rows under the
        command line; with `restored`, everything up to the command line is
        as before, pixel for pixel (the cursor's cell aside), and the new
        prompt looks like the old one (no attribute left behind)."""
        prompt_row = row + 1 + skip
        decoded = self.prog_wait(lambda s: s.lines[prompt_row].startswith(SHELL_PROMPT),
                                 "no shell prompt after %s" % what)
        after = self.stable_grab()
        decoded = self.prog_screen(after)
        if decoded.lines[prompt_row].rstrip() != SHELL_PROMPT or \
                any(l.strip() for l in decoded.lines[prompt_row + 1:]):
            self.fail("after %s the screen is not the shell's:\n%s" % (what, decoded.text()),
                      before, after, tag="after")
        if not restored:
            return decoded
        font = vmtest.load_font(FONT)
        fw, fh = font.width, font.height
        if before.crop(0, 0, before.width, row * fh) != after.crop(0, 0, after.width, row * fh) \
                or before.crop(0, row * fh, width * fw, fh) != after.crop(0, row * fh,
                                                                          width * fw, fh):
            self.fail("after %s the shell's screen is not back; screen shows:\n%s"
                      % (what, decoded.text()), before, after, tag="restore")
        plen = len(SHELL_PROMPT) + 1
        if before.crop(0, row * fh, plen * fw, fh) != after.crop(0, prompt_row * fh,
                                                                 plen * fw, fh):
            self.fail("after %s the new prompt does not look like the one before it"
                      " (an attribute left on?)" % what, before.crop(0, row * fh, plen * fw, fh),
                      after.crop(0, prompt_row * fh, plen * fw, fh), tag="prompt")
        return decoded

    def cells(self, decoded, row, col, n, attr):
        """The set of fg or bg palette indices of n cells from (row, col)."""
        return set(getattr(decoded, attr)[row][col:col + n])

    def expect_colours(self, decoded, needle, what, fg=None, bg=None):
        """The cells of the first `needle` on screen have foreground fg and background bg."""
        pos = decoded.find(needle)
        if pos is None:
            self.fail("%s: %r is not on screen:\n%s" % (what, needle, decoded.text()))
        r, c = pos
        glyphs = [c + i for i, ch in enumerate(needle) if ch != " "]
        got_fg = {decoded.fg[r][i] for i in glyphs}
        got_bg = set(decoded.bg[r][c:c + len(needle)])
        if (fg is not None and got_fg != {fg}) or (bg is not None and got_bg != {bg}):
            self.fail("%s: %r at row %d, column %d has colours %r on %r, expected %r on %r"
                      % (what, needle, r, c, got_fg, got_bg, fg, bg))

    def vsplit_column(self, decoded, char, last_row):
        """A column drawn with `char` on rows 0..last_row-1, or None."""
        for c in range(1, decoded.cols - 1):
            if all(decoded.lines[r][c] == char for r in range(last_row)):
                return c
        return None

    def prog_vim(self):
        self.sh("(echo '#!/bin/sh'; for i in $(seq 1 150); do echo \"# comment $i\";"
                " echo \"echo code-$i\"; done) > /tmp/prog.sh; chmod 644 /tmp/prog.sh")
        before, row, width = self.prog_start("vim /tmp/prog.sh")
        decoded = self.prog_wait(lambda s: s.lines[0].startswith("#!/bin/sh")
                                 and s.lines[1].rstrip() == "# comment 1"
                                 and '"/tmp/prog.sh"' in s.lines[-1], "vim did not open the file")
        # A dark background: Comment in Cyan (14), not the light one's DarkBlue (4).
        self.expect_colours(decoded, "# comment 1", "vim's comment", fg=14, bg=0)
        # A real kernel message (drop_caches' pr_info(), KERN_INFO: shown
        # after dmesg -n 8) over vim: in the band, vim's screen back as it
        # was when it goes (the screendump is <out>/systemd-vim-kmsg.png).
        vim = self.stable_grab()
        level = self.sh("cut -f1 /proc/sys/kernel/printk").strip()
        try:
            self.sh("dmesg -n 8; echo 1 > /proc/sys/vm/drop_caches")
            img, band = self.vm.wait_screen(vmtest.load_font(FONT),
                                            lambda s: "drop_caches: 1" in s, timeout=10)
        finally:
            self.sh("dmesg -n %s" % level)
        path = self.vm.save_png(img, "systemd-vim-kmsg.png")
        if not re.search(r"^\[ *\d+\.\d{6}\] \S+ \(\d+\): drop_caches: 1", band.lines[-1]):
            self.fail("the kernel's drop_caches message is not in the band over vim (picture:"
                      " %s):\n%s" % (path, band.text()))
        if band.lines[:-1] != decoded.lines[:-1]:
            self.fail("vim's screen changed above the band (picture: %s):\n%s"
                      % (path, band.text()))
        print("# vim with a kernel message: %s" % path)
        deadline = time.monotonic() + 15
        while self.vm.grab().data != vim.data:
            if time.monotonic() > deadline:
                self.fail("the band over vim did not go, or vim's screen is not as before",
                          vim, self.vm.grab())
            time.sleep(0.5)
        self.vm.send_text("\x06")                                # Ctrl-F: a page on
        self.prog_wait(lambda s: re.match(r"(# comment |echo code-)\d\d", s.lines[0])
                       and "#!/bin/sh" not in s, "Ctrl-F did not scroll vim's window")
        self.vm.send_text(":help\n")
        self.prog_wait(lambda s: "VIM - main help file" in s and "For Vim version" in s
                       and "help.txt [Help][RO]" in s, ":help did not show help.txt")
        self.vm.send_text(":q\n")
        self.prog_wait(lambda s: "main help file" not in s and "# comment" in s.lines[0],
                       ":q did not close the help window")
        self.vm.send_text(":vsplit\n")
        decoded = self.prog_wait(lambda s: self.vsplit_column(s, "|", s.rows - 2) is not None
                                 and s.lines[-2].count("prog.sh") == 2,
                                 ":vsplit did not split the window")
        col = self.vsplit_column(decoded, "|", decoded.rows - 2)
        if not (decoded.lines[0][:col].startswith(decoded.lines[0][col + 1:col + 12])):
            self.fail("the two windows of :vsplit differ:\n" + decoded.text())
        self.vm.send_text(":q\n")
        self.prog_wait(lambda s: self.vsplit_column(s, "|", s.rows - 2) is None
                       and s.lines[-2].count("prog.sh") == 0, ":q did not close the split")
        self.vm.send_text(":q\n")
        self.prog_back(before, row, width, "vim's :q")

    def prog_less(self):
        before, row, width = self.prog_start("less /tmp/prog.sh")
        self.prog_wait(lambda s: s.lines[0].startswith("#!/bin/sh")
                       and s.lines[-1].startswith("/tmp/prog.sh"), "less did not show the file")
        self.vm.send_text("/comment 42\n")
        decoded = self.prog_wait(lambda s: s.lines[0].rstrip() == "# comment 42",
                                 "less did not find 'comment 42'")
        # The match in reverse video (smso), the rest of its line not.
        self.expect_colours(decoded, "comment 42", "less's search match", fg=0, bg=7)
        self.expect_colours(decoded, "echo code-42", "the line after the match", fg=7, bg=0)
        self.vm.send_text("q")
        self.prog_back(before, row, width, "less's q")

    def prog_htop(self):
        before, row, width = self.prog_start("htop")
        decoded = self.prog_wait(lambda s: "Load average:" in s and "Tasks:" in s
                                 and "PID USER" in s and "F10Quit" in s.lines[-1],
                                 "htop did not show its meters, list and keys")
        # Under LANG=C ncurses writes runs of a character with rep: the
        # meters lose their bars and the right column of the header, the
        # list header its spacing, if rep is not honoured.
        cols = [decoded.find(label)[1] for label in ("Tasks:", "Load average:", "Uptime:")]
        if len(set(cols)) != 1 or not re.search(r"PID USER {4,}PRI", decoded.text()):
            self.fail("htop's header is misplaced (Tasks:, Load average:, Uptime: at columns"
                      " %r):\n%s" % (cols, decoded.text()))
        # The list header black on green to the right edge (the sort column cyan).
        r, _ = decoded.find("PID USER")
        if decoded.bg[r][0] != 2 or decoded.bg[r][-1] != 2 or set(decoded.bg[r]) - {2, 6}:
            self.fail("htop's list header is not green to the edge: backgrounds %r\n%s"
                      % (decoded.bg[r], decoded.text()))
        self.expect_colours(decoded, "Help", "htop's F1 label", fg=0, bg=6)
        self.vm.send_text("q")
        self.prog_back(before, row, width, "htop's q")

    def prog_tmux(self):
        before, row, width = self.prog_start("tmux")
        decoded = self.prog_wait(lambda s: "[0] 0:bash*" in s.lines[-1]
                                 and s.lines[0].startswith(SHELL_PROMPT), "tmux did not start")
        if set(decoded.bg[-1]) != {2}:
            self.fail("tmux's status line is not green: %r" % decoded.bg[-1])
        self.vm.send_keys(["ctrl", "b"])
        self.vm.send_text("%")
        decoded = self.prog_wait(lambda s: self.vsplit_column(s, "\u2502", s.rows - 1)
                                 is not None, "Ctrl-b % did not split the window")
        col = self.vsplit_column(decoded, "\u2502", decoded.rows - 1)
        # Keys in the new pane, Backspace among them, read by the pty's line
        # discipline (read), whose erase character is DEL, not ^H.
        self.vm.send_text("read -r v; echo PANE-$v\n")
        self.vm.send_text("42x\b\n")
        self.prog_wait(lambda s: "PANE-42" in s and s.find("PANE-42")[1] > col
                       and any(l[col + 1:].rstrip() == "PANE-42" for l in s.lines),
                       "the right pane did not run the command typed")
        self.vm.send_keys(["ctrl", "b"])
        self.vm.send_keys(["left"])
        self.vm.send_text("echo LEFT-$((1+1))\n")
        self.prog_wait(lambda s: any(l[:col].rstrip() == "LEFT-2" for l in s.lines),
                       "the left pane did not run the command typed")
        self.vm.send_text("exit\n")
        self.prog_wait(lambda s: self.vsplit_column(s, "\u2502", s.rows - 1) is None
                       and "PANE-42" in s, "the left pane did not exit")
        self.vm.send_text("exit\n")
        decoded = self.prog_back(before, row, width, "tmux's last exit", skip=1)
        if decoded.lines[row + 1].rstrip() != "[exited]":
            self.fail("tmux did not say [exited]:\n" + decoded.text())

    def prog_mc(self):
        # Debian's mc calls an external editor for F4 and Shift+F4, and 4.8.29
        # crashes on Shift+F4 that way (mc ticket 4650): the internal one.
        self.sh("install -d -o %s -g %s /home/%s/.config /home/%s/.config/mc && printf"
                " '[Midnight-Commander]\\nuse_internal_edit=true\\n' > /home/%s/.config/mc/ini"
                " && chown %s: /home/%s/.config/mc/ini" % ((USER,) * 7))
        before, row, width = self.prog_start("mc -u")
        decoded = self.prog_wait(lambda s: re.match(r"\s*1\s*Help\s*2\s*Menu", s.lines[-1])
                                 and "10Quit" in s.lines[-1].replace(" ", "")
                                 and "Left" in s.lines[0], "mc did not start")
        self.expect_colours(decoded, "Menu", "mc's F2 label", fg=0, bg=6)
        if decoded.bg[2][2] != 4:
            self.fail("mc's panel is not blue (background %d)" % decoded.bg[2][2])
        self.vm.send_keys(["f9"])                               # the menu bar, then Left's menu
        self.prog_wait(lambda s: s.find("Left") == (0, 2) and s.bg[0][2] != 6,
                       "F9 did not take mc's menu bar")
        self.vm.send_keys(["down"])
        self.prog_wait(lambda s: "File" in s.lines[0] and "Command" in s.lines[0]
                       and "Options" in s.lines[0] and "Left" in s.lines[0]
                       and "Listing format" in s, "Down did not open mc's Left menu")
        self.vm.send_keys(["esc"])
        self.vm.send_keys(["esc"])
        self.prog_wait(lambda s: "Listing format" not in s, "Esc Esc did not close the menu")
        self.vm.send_keys(["shift", "f4"])                       # a new file in the editor
        self.prog_wait(lambda s: "2Save" in s.lines[-1].replace(" ", "")
                       and "4Replac" in s.lines[-1].replace(" ", ""),
                       "Shift+F4 did not open mc's editor")
        self.vm.send_keys(["f10"])
        self.prog_wait(lambda s: "2Menu" in s.lines[-1].replace(" ", ""),
                       "F10 did not leave the editor")
        self.vm.send_keys(["alt", "shift", "slash"])             # Alt+?: find file
        self.prog_wait(lambda s: "Find File" in s and "Start at:" in s,
                       "Alt+? did not open mc's Find File dialog")
        self.vm.send_keys(["esc"])
        self.vm.send_keys(["esc"])
        self.prog_wait(lambda s: "Find File" not in s, "Esc Esc did not close Find File")
        self.vm.send_keys(["f10"])
        deadline = time.monotonic() + 20
        while True:
            decoded = self.prog_screen(self.vm.grab())
            if "Do you really want to quit" in decoded:
                self.vm.send_keys(["ret"])
                break
            if any(l.startswith(SHELL_PROMPT) for l in decoded.lines[row + 1:]) or \
                    time.monotonic() > deadline:
                break
            time.sleep(0.3)
        # mc ends its line on the shell's screen: the prompt one row further down.
        decoded = self.prog_back(before, row, width, "mc's F10", skip=1)
        if decoded.lines[row + 1].strip():
            self.fail("mc left %r on the shell's screen" % decoded.lines[row + 1])

    def prog_nano(self, lang):
        before, row, width = self.prog_start("nano /tmp/nano.txt")
        decoded = self.prog_wait(lambda s: "GNU nano" in s.lines[0] and "^G Help" in s
                                 and "^X Exit" in s, "nano did not start")
        # The title bar in reverse video to both edges, the keys' names too.
        if set(decoded.bg[0]) != {7}:
            self.fail("LANG=%s: nano's title bar is not reverse to the edges: %r\n%s"
                      % (lang, decoded.bg[0], decoded.text()))
        self.expect_colours(decoded, "^G", "nano's ^G", fg=0, bg=7)
        self.expect_colours(decoded, " Help", "nano's Help label", fg=7, bg=0)
        self.vm.send_text("hello nano")
        self.prog_wait(lambda s: s.lines[1].rstrip() == "hello nano", "nano did not take the text")
        self.vm.send_text("\x07")                                # ^G
        self.prog_wait(lambda s: "Main nano help text" in s, "^G did not show nano's help")
        self.vm.send_text("\x18")                                # ^X: close the help
        self.prog_wait(lambda s: s.lines[1].rstrip() == "hello nano", "^X did not close the help")
        self.vm.send_text("\x18")
        self.prog_wait(lambda s: "Save modified buffer?" in s, "^X did not ask to save")
        self.vm.send_text("n")
        self.prog_back(before, row, width, "nano's ^X")

    def prog_dialog(self, lang):
        self.vm.send_text("clear; dialog --msgbox 'Hello from dialog' 7 40\n")
        decoded = self.prog_wait(lambda s: "Hello from dialog" in s
                                 and re.search(r"< +OK +>", s.text()),
                                 "dialog did not show its box")
        # The frame: corners, tees and lines where a 7x40 msgbox has them
        # (ncurses writes them with the ACS and, under LANG=C, rep).
        h, w = 7, 40
        pos = decoded.find("\u250c")
        top, left = pos if pos else (0, 0)
        got = [decoded.lines[top + i][left:left + w] for i in range(h)]
        want = ["\u250c" + "\u2500" * (w - 2) + "\u2510"] + \
               ["\u2502" + "." * (w - 2) + "\u2502"] * (h - 4) + \
               ["\u251c" + "\u2500" * (w - 2) + "\u2524"] + \
               ["\u2502" + "." * (w - 2) + "\u2502"] + \
               ["\u2514" + "\u2500" * (w - 2) + "\u2518"]
        bad = pos is None or abs(top - (decoded.rows - h) // 2) > 1 or \
            abs(left - (decoded.cols - w) // 2) > 1
        for g, x in zip(got, want):
            if x[1] == "\u2500" and g != x or (g[0], g[-1]) != (x[0], x[-1]) or \
                    x[1] == "." and "\u2500" in g:
                bad = True
        if bad:
            self.fail("LANG=%s: dialog's frame at row %d, column %d is not right:\n%s\n"
                      "(expected, . for any text:\n%s)\nscreen:\n%s"
                      % (lang, top, left, "\n".join(got), "\n".join(want), decoded.text()))
        if self.cells(decoded, top + 2, left + 1, w - 2, "bg") != {7} or \
                self.cells(decoded, 0, 0, decoded.cols, "bg") != {4}:
            self.fail("LANG=%s: dialog's box is not grey on blue: %r, %r"
                      % (lang, decoded.bg[top + 2][left:left + w], decoded.bg[0]))
        r, c = decoded.find("Hello from dialog")
        if (r, c) != (top + 1, left + 2):
            self.fail("LANG=%s: dialog's text is at row %d, column %d, not in its box at %d, %d"
                      % (lang, r, c, top, left))
        self.vm.send_keys(["ret"])
        # dialog stays on xterm's normal screen (no smcup): its box stays too.
        self.prog_wait(lambda s: any(l.startswith(SHELL_PROMPT) for l in s.lines),
                       "no shell prompt after dialog's OK")
        if self.vm.run("pgrep -u %s -x dialog" % USER)[1] == 0:
            self.fail("dialog still runs after Enter on OK")

    def prog_shell(self, lang):
        """The test user's shell on tty1 with LANG=lang and a clear screen:
        the one the last program check left, or a new login (the first
        check, or after a failed one, whose cleanup ended the session)."""
        decoded = self.prog_screen(self.vm.grab())
        if any(l.rstrip() == PROMPT for l in decoded.lines) or \
                self.vm.run("pgrep -u %s -x bash" % USER)[1] != 0:
            self.wait_prompt("no login prompt before the programs")
            self.login("echo PROGRAMS-$((6*7))", "PROGRAMS-42")
        self.vm.send_text("clear; export LANG=%s; echo LANG-IS-$LANG\n" % lang)
        self.prog_wait(lambda s: s.lines[0].rstrip() == "LANG-IS-" + lang, "LANG=%s not set" % lang)

    def prog_logout(self):
        """After the last program check: back to the login prompt."""
        if self.vm.run("pgrep -u %s -x bash" % USER)[1] == 0:
            self.vm.send_text("exit\n")
            self.wait_prompt("no login prompt after the programs")

    def check_vim(self):
        self.prog_shell("C.UTF-8")
        self.prog_vim()

    def check_less(self):
        self.prog_shell("C.UTF-8")
        self.prog_less()

    def check_tmux(self):
        self.prog_shell("C.UTF-8")
        self.prog_tmux()

    def check_mc(self):
        self.prog_shell("C.UTF-8")
        self.prog_mc()

    def check_htop(self):
        self.prog_shell("C.UTF-8")
        self.prog_htop()

    def check_nano(self):
        self.prog_shell("C.UTF-8")
        self.prog_nano("C.UTF-8")

    def check_dialog(self):
        self.prog_shell("C.UTF-8")
        self.prog_dialog("C.UTF-8")

    def check_htop_c(self):
        self.prog_shell("C")
        self.prog_htop()

    def check_nano_c(self):
        self.prog_shell("C")
        self.prog_nano("C")

    def check_dialog_c(self):
        self.prog_shell("C")
        self.prog_dialog("C")

    def restart_with(self, dropin, check=True):
        """Write (or, with None, remove) the drop-in and restart consoled@tty1;
        return the journal cursor from before the restart."""
        if dropin is None:
            self.sh("rm -f " + DROPIN)
        else:
            self.sh("mkdir -p %s && printf '%%s\\n' %s > %s"
                    % (os.path.dirname(DROPIN), " ".join(shlex.quote(l) for l in dropin), DROPIN))
        cursor = self.journal_cursor()
        self.vm.run("systemctl restart " + UNIT, timeout=60, check=check)
        return cursor

    def check_config(self):
        cursor = self.restart_with(["# consoled's systemd test", "palette=xterm", "no-such-key=1"])
        self.wait_journal(cursor, "%s:3: unknown key 'no-such-key', ignoring." % DROPIN,
                          "the bad line")
        self.wait_unit(UNIT, "running", lambda p: p["ActiveState"] == "active", timeout=10)
        decoded = self.wait_prompt("no login prompt with the drop-in", palette=XTERM_PALETTE)
        if self.prompt_colours(decoded) != {7}:
            self.fail("the prompt is not in xterm's white (0xe5e5e5); colours %r"
                      % self.prompt_colours(decoded))
        self.restart_with(None)
        decoded = self.wait_prompt("no login prompt without the drop-in")
        if self.prompt_colours(decoded) != {7}:
            self.fail("without the drop-in the prompt is not in the Linux console's white")

    def check_colorfgbg(self):
        """palette= and colour keys in consoled.conf: the login prompt is drawn
        in the configured default colours, and consoled-session gives login
        the COLORFGBG they make (consoled.conf(5), COLOURS)."""
        # stop and start, not restart: a restart keeps the session (and its
        # login, with the environment it had) for the new consoled
        self.sh("mkdir -p %s && printf '%%s\\n' palette=solarized-light foreground=#102030"
                " color3=#123456 > %s" % (os.path.dirname(DROPIN), DROPIN))
        self.sh("systemctl stop %s && systemctl start %s" % (UNIT, UNIT), timeout=90)
        self.wait_unit(UNIT, "running", lambda p: p["ActiveState"] == "active", timeout=10)
        # entry 0: the foreground of its own, 1: Solarized's base3 (colour 15)
        decoded = self.wait_prompt("no login prompt with the palette",
                                   palette=[(0x10, 0x20, 0x30), (0xfd, 0xf6, 0xe3)])
        row, col = decoded.find(PROMPT)
        if self.prompt_colours(decoded) != {0} or decoded.bg[row][col] != 1:
            self.fail("the prompt is not #102030 on #fdf6e3: colours %r on %r"
                      % (self.prompt_colours(decoded), decoded.bg[row][col]))
        # The prompt is consoled-session's own (getty.c): login runs once a
        # name is given, and then asks for the password.
        self.vm.send_text(USER + "\n")
        self.wait_text(FONT, lambda s: "Password:" in s, "no password prompt")
        deadline = time.monotonic() + 10
        while True:
            pids = self.sh("pgrep -x login || true").split()
            if len(pids) == 1 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        if len(pids) != 1:
            self.fail("login is not running once the name was typed: pids %r" % pids)
        env = self.sh("tr '\\0' '\\n' < /proc/%s/environ" % pids[0]).split("\n")
        # the nearest of the 16 to #102030 is base03 (8); the background is 15
        if "COLORFGBG=8;15" not in env:
            self.fail("login at the password prompt got %r, expected COLORFGBG=8;15"
                      % [e for e in env if e.startswith("COLORFGBG")])
        self.sh("rm -f %s && systemctl stop %s && systemctl start %s" % (DROPIN, UNIT, UNIT),
                timeout=90)
        self.wait_prompt("no login prompt without the drop-in")

    def check_kill(self):
        self.vm.send_text(USER + "\n")
        self.wait_text(FONT, lambda s: "Password:" in s, "no password prompt")
        before = self.unit(UNIT, "MainPID", "NRestarts")
        self.sh("kill -9 " + before["MainPID"])
        after = self.wait_unit(UNIT, "a restart",
                               lambda p: p["ActiveState"] == "active" and p["MainPID"] != "0"
                               and p["MainPID"] != before["MainPID"])
        if int(after["NRestarts"]) != int(before["NRestarts"]) + 1:
            self.fail("NRestarts went from %s to %s" % (before["NRestarts"], after["NRestarts"]))
        # Session restore: the half-typed login is still there, and the
        # password completes it.
        self.wait_text(FONT, lambda s: any(l.rstrip() == "Password:" for l in s.lines)
                       and any(l.rstrip() == PROMPT + " " + USER for l in s.lines),
                       "the login at its password prompt is not back after the restart")
        self.vm.send_text(PASSWORD + "\n")
        self.wait_text(FONT, lambda s: any(l.startswith(SHELL_PROMPT) for l in s.lines),
                       "no shell prompt after the password typed after the restart",
                       timeout=LOGIN_WAIT)
        self.vm.send_text("echo ALIVE-$((6*7+1))\n")
        self.wait_text(FONT, lambda s: any(l.rstrip() == "ALIVE-43" for l in s.lines),
                       "the shell does not run commands")
        self.vm.send_text("exit\n")
        self.wait_prompt("no login prompt after the logout", lambda s: "ALIVE" not in s)

    def check_stop(self):
        # Text for tty1's own buffer, never drawn while consoled has the VT
        # in graphics mode: consoled clears it on exit, so the kernel's
        # console comes back blank, not with whatever was written there.
        self.sh("printf 'STALE-TEXT\\n' > /dev/tty1")
        self.sh("systemctl stop " + UNIT, timeout=60)
        state = self.unit(UNIT, "ActiveState", "Result")
        if state != {"ActiveState": "inactive", "Result": "success"}:
            self.fail("after systemctl stop the unit is %r" % state)
        mode, kbmode = self.vt_modes()
        if mode != KD_TEXT or kbmode == K_OFF:
            self.fail("after stop tty1 has KDGETMODE %d (want KD_TEXT) and KDGKBMODE %d "
                      "(K_OFF is %d)" % (mode, kbmode, K_OFF))
        img = self.stable_grab()
        # Black but for the cursor in the top left cell (fbcon's 8x16 font).
        if img.crop(0, 16, img.width, img.height - 16).colors() != {b"\0\0\0"} or \
                img.crop(8, 0, img.width - 8, 16).colors() != {b"\0\0\0"}:
            self.fail("after stop the kernel's console is not blank (picture: %s)"
                      % self.vm.save_png(img, "systemd-%d-stop.png" % self.n))
        self.sh("setfont -C /dev/tty1 %s" % GUEST_FONT)
        self.sh("printf '\\033[H\\033[2JFBCON-%d\\n' $((6*7)) > /dev/tty1")
        self.wait_text(FONT, lambda s: any(l.rstrip() == "FBCON-42" for l in s.lines),
                       "fbcon does not draw on tty1 after the stop")
        # A clean stop is no failure: OnFailure= must not start getty.
        if self.vm.run("systemctl is-active " + GETTY)[0].strip() != "inactive":
            self.fail("getty@tty1 started after a clean stop")

        self.sh("systemctl start " + UNIT, timeout=60)
        self.wait_prompt("no login prompt after systemctl start", lambda s: "FBCON" not in s)
        mode, _ = self.vt_modes()
        if mode != KD_GRAPHICS:
            self.fail("consoled runs but tty1 is in mode %d, not KD_GRAPHICS" % mode)

    def check_hotplug(self):
        self.wait_prompt("no login prompt before the hotplug")
        cursor = self.journal_cursor()
        self.vm.qmp.cmd("device_add", driver="usb-kbd", id="usbkbd", bus="xhci.0")
        deadline = time.monotonic() + 20
        while True:
            found = re.search(r"Keyboard (/dev/input/event\d+): QEMU QEMU USB Keyboard",
                              self.journal_since(cursor, "-o cat -u " + UNIT))
            if found:
                break
            if time.monotonic() > deadline:
                self.fail("consoled did not pick up the USB keyboard; it logged:\n"
                          + self.journal_since(cursor, "-o cat -u " + UNIT))
            time.sleep(0.5)
        # QEMU sends keys to the keyboard plugged in last; a reader on its
        # event node shows that they went that way.
        self.sh("rm -f /tmp/usb.ev; (cat %s > /tmp/usb.ev &) ; sleep 0.3" % found.group(1))
        self.vm.send_text(USER + "\n")
        self.wait_text(FONT, lambda s: any(l.rstrip() == "Password:" for l in s.lines),
                       "the user name typed on the USB keyboard did not reach login")
        if int(self.sh("wc -c < /tmp/usb.ev").strip() or 0) == 0:
            self.fail("the keys did not come from the USB keyboard")
        self.sh("pkill -x -f 'cat %s' || true" % found.group(1))
        self.vm.qmp.cmd("device_del", id="usbkbd")
        deadline = time.monotonic() + 20
        gone = "Keyboard %s removed" % found.group(1)
        while gone not in self.journal_since(cursor, "-o cat -u " + UNIT):
            if time.monotonic() > deadline:
                self.fail("consoled did not notice the USB keyboard going away; it logged:\n"
                          + self.journal_since(cursor, "-o cat -u " + UNIT))
            time.sleep(0.5)
        # Away from the password prompt: login ended, a fresh login (a
        # restart would keep it: session restore).
        self.sh("pkill -KILL -x login")
        self.wait_prompt("no login prompt after the hotplug", lambda s: "Password" not in s)

    def check_helper_refuses(self):
        cursor = self.journal_cursor()
        out = self.sh("%s %s" % (SESSION_CLIENT, HELPER_SOCKET), timeout=60).strip()
        if out != "refused":
            self.fail("consoled-session answered %r to the harness's shell, not 'refused'" % out)
        self.wait_journal(cursor, "not consoled@ttyN.service", "the refusal",
                          unit="consoled-session@*")
        if "consoled-test-shell.service" not in self.journal_since(
                cursor, "-o cat -u 'consoled-session@*'"):
            self.fail("the refusal does not name the peer's unit")

    def check_no_helper(self):
        before = self.unit(UNIT, "NRestarts")
        self.sh("systemctl mask --runtime %s && systemctl stop %s" % (SOCKET, SOCKET))
        # A stop drops the session kept for session restore, so the start
        # needs a new one from the helper.
        self.sh("systemctl stop " + UNIT, timeout=60)
        cursor = self.restart_with(None, check=False)
        state = self.wait_unit(UNIT, "the failure", lambda p: p["ActiveState"] == "failed")
        if state["Result"] != "exit-code" or state["ExecMainStatus"] != "5":
            self.fail("consoled failed with %r, expected exit status 5" % state)
        if state["NRestarts"] != before["NRestarts"]:
            self.fail("consoled was restarted despite RestartPreventExitStatus=5")
        self.wait_unit(GETTY, "the fail-over to getty", lambda p: p["SubState"] == "running",
                       timeout=10)
        self.wait_journal(cursor, "Cannot reach the session helper at " + HELPER_SOCKET,
                          "the missing helper")
        self.sh("systemctl unmask --runtime %s && systemctl start %s" % (SOCKET, SOCKET))
        self.restart_with(None)
        self.wait_prompt("no login prompt with the helper back")
        if self.vm.run("systemctl is-active " + GETTY)[0].strip() != "inactive":
            self.fail("getty@tty1 still runs beside consoled")

    def check_no_fb(self):
        before = self.unit(UNIT, "NRestarts")
        t0 = time.monotonic()
        # The start job fails (the unit never gets READY): ignore the status.
        cursor = self.restart_with(["fbdev=/dev/fb9"], check=False)
        state = self.wait_unit(UNIT, "the failure", lambda p: p["ActiveState"] == "failed")
        if state["Result"] != "exit-code" or state["ExecMainStatus"] != "3":
            self.fail("consoled failed with %r, expected exit status 3" % state)
        if state["NRestarts"] != before["NRestarts"]:
            self.fail("consoled was restarted despite RestartPreventExitStatus=3")
        self.wait_unit(GETTY, "the fail-over to getty", lambda p: p["SubState"] == "running",
                       timeout=10)
        log("getty@tty1 ran %.1fs after the restart" % (time.monotonic() - t0))
        self.wait_journal(cursor, "Failed to open framebuffer /dev/fb9", "the missing framebuffer")
        # Back to consoled: starting it stops getty (Conflicts=).
        self.restart_with(None)
        self.wait_prompt("no login prompt after going back to consoled")
        if self.vm.run("systemctl is-active " + GETTY)[0].strip() != "inactive":
            self.fail("getty@tty1 still runs beside consoled")

    def check_fb_wait(self):
        before = self.unit(UNIT, "NRestarts")
        try:
            # An event held in udev's queue: coldplug is not done while it is.
            # udevadm trigger returns once the uevent is written; udevd
            # queues it (and makes /run/udev/queue) a moment later
            self.sh("udevadm control --stop-exec-queue &&"
                    " udevadm trigger --action=change /sys/class/tty/tty9 &&"
                    " for i in 1 2 3 4 5 6 7 8 9 10; do test -e /run/udev/queue && break;"
                    " sleep 0.2; done; true")
            if self.vm.run("test -e /run/udev/queue")[1] != 0:
                self.fail("udev's queue is empty with its execution stopped and an event"
                          " triggered: the check would prove nothing")
            self.sh("mkdir -p %s && printf '%%s\\n' fbdev=/dev/fb7 fb-wait=60 > %s"
                    % (os.path.dirname(DROPIN), DROPIN))
            cursor = self.journal_cursor()
            self.sh("systemctl restart --no-block " + UNIT)
            props = ("ActiveState", "SubState", "StatusText", "ExecMainStatus")
            want = "Waiting up to 60 s for a framebuffer (/dev/fb7)"
            deadline = time.monotonic() + 30
            while True:
                state = self.unit(UNIT, *props)
                if state["StatusText"] == want and state["ActiveState"] == "activating":
                    break
                if time.monotonic() > deadline:
                    self.fail("consoled's STATUS= does not say it waits: %r" % state)
                time.sleep(0.5)
            # Well past the grace: the queue is not empty, consoled waits on.
            time.sleep(FBWAIT_SETTLE + 3)
            state = self.unit(UNIT, *props)
            if state["ActiveState"] != "activating" or state["StatusText"] != want:
                self.fail("consoled stopped waiting while udev's queue held an event: %r"
                          % state)
        finally:
            self.vm.run("udevadm control --start-exec-queue")
        t0 = time.monotonic()
        state = self.wait_unit(UNIT, "the failure", lambda p: p["ActiveState"] == "failed",
                               timeout=50)
        took = time.monotonic() - t0
        log("consoled failed %.1fs after udev's queue ran" % took)
        if state["Result"] != "exit-code" or state["ExecMainStatus"] != "3":
            self.fail("consoled failed with %r, expected exit status 3" % state)
        if state["NRestarts"] != before["NRestarts"]:
            self.fail("consoled was restarted despite RestartPreventExitStatus=3")
        # 2 s of grace after the queue empties; the rest is the guest's pace.
        if took > 20:
            self.fail("consoled gave up %.1fs after udev's queue ran, not within seconds" % took)
        self.wait_journal(cursor, "No framebuffer (/dev/fb7) appeared and udev's coldplug is"
                          " done", "why the wait ended")
        self.wait_journal(cursor, "Failed to open framebuffer /dev/fb7", "the missing framebuffer")
        journal = self.journal_since(cursor, "-o cat -u " + UNIT)
        if journal.count("Waiting up to 60 s for a framebuffer (/dev/fb7)") != 1:
            self.fail("the wait is not logged once:\n" + journal)
        self.wait_unit(GETTY, "the fail-over to getty", lambda p: p["SubState"] == "running",
                       timeout=10)
        self.restart_with(None)
        self.wait_prompt("no login prompt after going back to consoled")

    # -- session restore --

    def user_session(self):
        """The logind session id of the test user (None: none)."""
        ids = [f[0] for f in (l.split() for l in
                              self.sh("loginctl list-sessions --no-legend").splitlines())
               if len(f) > 2 and f[2] == USER]
        if len(ids) > 1:
            self.fail("logind has %d sessions of %s: %r" % (len(ids), USER, ids))
        return ids[0] if ids else None

    def restore_shell(self):
        """The test user's shell at a clear prompt on tty1, nothing else of
        the user's running: the one the last restore check left, else a new
        login (after ending whatever a failed check left).  Returns the
        shell's pid."""
        shells = self.sh("pgrep -u %s -x bash || true" % USER).split()
        others = self.sh("pgrep -u %s -x 'vim.*|less|sh' || true" % USER).split()
        decoded = self.prog_screen(self.vm.grab())
        if len(shells) == 1 and not others and \
                any(l.rstrip() == SHELL_PROMPT for l in decoded.lines):
            # `jobs` takes bash's report of the last check's job, which would
            # come after clear's output otherwise.
            self.vm.send_text("jobs >/dev/null; clear\n")
            self.prog_wait(lambda s: s.lines[0].rstrip() == SHELL_PROMPT
                           and not any(l.strip() for l in s.lines[1:]), "clear did not clear")
            return self.login_pids()[1]
        if shells or others:
            # A failed check's leftovers: end them, consoled starts a new login.
            self.vm.run("loginctl terminate-user %s; pkill -KILL -u %s" % (USER, USER))
            self.wait_unit(UNIT, "consoled running", lambda p: p["ActiveState"] == "active")
        self.wait_prompt("no login prompt before the restore check", timeout=40)
        self.login("clear", SHELL_PROMPT)
        return self.login_pids()[1]

    def restore_prepare(self, program):
        """In the test user's shell: lines for the scrollback, a background
        job that stopped itself, then `program` (vim or less, each on the
        alternate screen with application cursor keys) on a file of numbered
        lines, still.  Returns (picture of the shell before the program, row
        of its command line, its length, the job's pid, picture with the
        program)."""
        self.sh("seq -f 'restore-line-%g' 1 200 > /tmp/restore.txt; chmod 644 /tmp/restore.txt")
        # 40 lines scroll the 30 rows: the first ones are in the scrollback.
        # ED 2 (not clear(1), whose E3 drops the scrollback) then leaves the
        # shell's screen short, so the program's command line is near the top.
        self.vm.send_text("seq -f 'scrollback-%%g' 1 40; printf '\\033[H\\033[2J'; %s &\n" % JOB)
        deadline = time.monotonic() + 20
        while True:
            out = self.sh("ps -u %s -o pid=,stat=,args= | grep -F 'kill -STOP' || true" % USER)
            fields = out.split()
            if fields and fields[1].startswith("T"):
                job = fields[0]
                break
            if time.monotonic() > deadline:
                self.fail("the background job did not stop itself: %r" % out)
            time.sleep(0.3)
        # An empty command line: bash reports the stopped job before its prompt.
        self.vm.send_text("\n")
        decoded = self.prog_wait(lambda s: "Stopped" in s and
                                 [l.rstrip() for l in s.lines if l.strip()][-1] == SHELL_PROMPT,
                                 "bash did not report the stopped job")
        row = max(r for r in range(decoded.rows) if decoded.lines[r].rstrip() == SHELL_PROMPT)
        # vim without viminfo: not at the line the last check left it.
        command = "%s /tmp/restore.txt" % ("vim -i NONE" if program == "vim" else program)
        self.vm.send_text(command)
        line = SHELL_PROMPT + " " + command
        self.prog_wait(lambda s: s.lines[row].rstrip() == line, "%r not typed" % command)
        before = self.stable_grab()
        self.vm.send_keys(["ret"])
        if program == "vim":
            self.prog_wait(lambda s: s.lines[0].rstrip() == "restore-line-1"
                           and "1,1" in s.lines[-1], "vim did not open the file")
        else:
            self.prog_wait(lambda s: s.lines[0].rstrip() == "restore-line-1"
                           and s.lines[-1].startswith("/tmp/restore.txt"),
                           "less did not show the file")
        return before, row, len(line), job, self.stable_grab()

    def kd_watch_start(self, seconds):
        """Poll tty1's KDGETMODE and KDGKBMODE every 10 ms for `seconds` in
        the guest (what the display mode and the keyboard went through while
        consoled was away; a hangup of tty1 makes it open the VT again);
        kd_watch_result() reads it."""
        self.sh("rm -f /tmp/kdwatch; (perl -e 'my (%%m, %%k, $t); my $end = time + %d;"
                " while (time < $end) { $t or open($t, \"<\", \"/dev/tty1\") or die \"$!\";"
                " my $v = pack(\"L\", 99); my $w = pack(\"L\", 99);"
                " if (ioctl($t, %d, $v) and ioctl($t, %d, $w)) {"
                " $m{unpack(\"L\", $v)}++; $k{unpack(\"L\", $w)}++; }"
                " else { close($t); $t = undef; }"
                " select(undef, undef, undef, 0.01); }"
                " print join(\",\", sort keys %%m), \" \", join(\",\", sort keys %%k), \"\\n\"'"
                " > /tmp/kdwatch.tmp 2>&1; mv /tmp/kdwatch.tmp /tmp/kdwatch) </dev/null"
                " >/dev/null 2>&1 &" % (seconds, KDGETMODE, KDGKBMODE))

    def kd_watch_result(self):
        """(set of display modes, set of keyboard modes) kd_watch_start() saw."""
        deadline = time.monotonic() + 20
        while self.vm.run("test -e /tmp/kdwatch")[1] != 0:
            if time.monotonic() > deadline:
                self.fail("the KD mode watcher did not finish")
            time.sleep(0.5)
        out = self.sh("cat /tmp/kdwatch").split()
        if len(out) != 2:
            self.fail("the KD mode watcher failed: %r" % out)
        return ({int(v) for v in out[0].split(",")}, {int(v) for v in out[1].split(",")})

    @staticmethod
    def frozen_or_blank(before, img):
        """Whether every pixel of img is that of `before` or black."""
        if img == before:
            return True
        if (img.width, img.height) != (before.width, before.height):
            return False
        row = img.width * 3
        for y in range(img.height):
            a, b = before.data[y * row:(y + 1) * row], img.data[y * row:(y + 1) * row]
            if a == b or b == bytes(row):
                continue
            for x in range(0, row, 3):
                if b[x:x + 3] != a[x:x + 3] and b[x:x + 3] != b"\0\0\0":
                    return False
        return True

    def restore_kind(self, kind, program):
        """The session survives one kind of restart of consoled: the screen
        after it equals the one before pixel for pixel, the same shell in the
        same logind session, keys reach the program, which quits to the
        shell's screen as it was, the job resumes and prints, the scrollback
        is there; for crashes (no `restart`), the VT never left graphics mode
        nor got its keyboard back in between."""
        shell = self.restore_shell()
        session = self.user_session()
        shell_before, row, width, job, before = self.restore_prepare(program)
        state = self.unit(UNIT, "MainPID", "NRestarts")
        pid = state["MainPID"]
        crash = kind != "restart"
        if kind == "watchdog":
            # WatchdogSec=3s came with the restart of the check's set-up; the
            # hook stalls the loop and systemd aborts consoled (SIGABRT).
            cursor = self.journal_cursor()
        if crash:
            self.kd_watch_start(8 if kind == "watchdog" else 5)
            time.sleep(0.3)
        signal = {"segv": "SEGV", "kill": "KILL", "watchdog": "USR2"}.get(kind)
        t0 = time.monotonic()
        if signal:
            self.sh("kill -%s %s" % (signal, pid))
        else:
            self.sh("systemctl restart " + UNIT, timeout=60)
        # Every picture until the restored screen: the frozen frame, a blank
        # (video memory wiped) or the restored frame being drawn, each pixel
        # that of the frame before or black; the kernel's console, another
        # mode's picture or stale video memory are none of these.
        odd, up, img = None, None, None
        seen = {"frozen": 0, "black": 0, "partly drawn": 0, "other": 0}
        while True:
            img = self.vm.grab()
            if up is not None and img == before:
                break
            if img == before:
                seen["frozen"] += 1
            elif img.data == bytes(len(img.data)):
                seen["black"] += 1
            elif self.frozen_or_blank(before, img):
                seen["partly drawn"] += 1
            else:
                seen["other"] += 1
                if crash and odd is None:
                    odd = img
            if up is None:
                now = self.unit(UNIT, "ActiveState", "MainPID", "NRestarts")
                if now["ActiveState"] == "active" and now["MainPID"] not in ("0", pid):
                    up = time.monotonic() - t0
            if time.monotonic() - t0 > 40:
                if up is None:
                    self.fail("%s: consoled did not come back within 40s: %r" % (kind, now))
                break
            time.sleep(0.1)
        log("%s: consoled %s -> %s after %.1fs%s; pictures in between: %s"
            % (kind, pid, now["MainPID"], up, ", the screen back after %.1fs"
               % (time.monotonic() - t0) if img == before else "",
               ", ".join("%d %s" % (n, k) for k, n in seen.items())))
        # For the record: the screen before and after.
        self.vm.save_png(before, "restore-%s-before.png" % kind)
        self.vm.save_png(img, "restore-%s-after.png" % kind)
        if int(now["NRestarts"]) != int(state["NRestarts"]) + (1 if crash else 0):
            self.fail("%s: NRestarts went from %s to %s" % (kind, state["NRestarts"],
                                                             now["NRestarts"]))
        if kind == "watchdog":
            self.wait_journal(cursor, "Watchdog timeout", "the watchdog's abort", unit=UNIT)
            if "Test hook: SIGUSR2" not in self.journal_since(cursor, "-o cat -u " + UNIT):
                self.fail("the stall hook did not run (not a -Dtest-hooks=true build?)")
        if crash:
            modes, kbmodes = self.kd_watch_result()
            if modes != {KD_GRAPHICS} or kbmodes != {K_OFF}:
                self.fail("%s: while consoled was away tty1 went through display modes %r and"
                          " keyboard modes %r, not KD_GRAPHICS and K_OFF alone (the kernel's"
                          " console came up in between)" % (kind, sorted(modes), sorted(kbmodes)))
        if odd is not None:
            self.fail("%s: between the crash and the restored screen the screen showed"
                      " something else than the frozen frame or a blank" % kind, before, odd,
                      tag="between")
        if img != before:
            self.fail("%s: the screen after the restart is not the one before" % kind,
                      before, img, tag="after")
        if self.login_pids()[1] != shell:
            self.fail("%s: the shell is not the one from before (%s)" % (kind, shell))
        if self.user_session() != session or \
                self.sh("loginctl show-session %s -p State --value" % session).strip() \
                not in ("active", "online"):
            self.fail("%s: logind's session %s is gone or not active: %s" % (
                kind, session, self.sh("loginctl list-sessions --no-legend")))
        # Keys reach the program, cursor keys in its mode: two lines down.
        self.vm.send_keys(["down"])
        self.vm.send_keys(["down"])
        if program == "vim":
            self.prog_wait(lambda s: re.search(r"\b3,1\b", s.lines[-1]),
                           "%s: Down Down did not move vim's cursor to line 3" % kind)
            self.vm.send_text(":q\n")
        else:
            self.prog_wait(lambda s: s.lines[0].rstrip() == "restore-line-3",
                           "%s: Down Down did not scroll less by two lines" % kind)
            self.vm.send_text("q")
        self.prog_back(shell_before, row, width, "%s's quit after the restart (%s)"
                       % (program, kind))
        self.sh("kill -CONT %s" % job)
        self.prog_wait(lambda s: JOB_LINE in s,
                       "%s: the background job did not print after SIGCONT" % kind)
        self.vm.send_keys(["shift", "pgup"])
        self.prog_wait(lambda s: "scrollback-1" in s, "%s: the scrollback from before the"
                       " restart is not there (Shift+PageUp)" % kind)
        self.vm.send_keys(["shift", "pgdn"])
        self.prog_wait(lambda s: JOB_LINE in s, "%s: Shift+PageDown did not come back" % kind)

    def check_restore_segv(self):
        self.restore_kind("segv", "vim")

    def check_restore_kill(self):
        self.restore_kind("kill", "less")

    def check_restore_watchdog(self):
        self.sh("mkdir -p %s && printf '[Service]\\nWatchdogSec=3s\\n' > %s"
                " && systemctl daemon-reload" % (os.path.dirname(UNIT_DROPIN), UNIT_DROPIN))
        self.sh("systemctl restart " + UNIT, timeout=60)
        if self.unit(UNIT, "WatchdogUSec")["WatchdogUSec"] != "3s":
            self.fail("the drop-in did not lower WatchdogSec=: %r"
                      % self.unit(UNIT, "WatchdogUSec"))
        try:
            self.restore_kind("watchdog", "vim")
        finally:
            self.sh("rm -f %s && systemctl daemon-reload" % UNIT_DROPIN)

    def check_restore_restart(self):
        self.restore_kind("restart", "less")

    def check_restore_logout(self):
        """The restored session logs out: a fresh login prompt with nothing
        of it, neither on screen nor in the scrollback, and so for the next
        login."""
        self.restore_shell()
        session = self.user_session()
        self.vm.send_text("seq -f 'secret-%g' 1 60; echo MARKER-$((6*7))\n")
        self.prog_wait(lambda s: "MARKER-42" in s, "no marker")
        self.sh("systemctl restart " + UNIT, timeout=60)
        self.prog_wait(lambda s: "MARKER-42" in s, "the session is not back after a restart")
        # Stand-ins (dim and combined text) left on the alternate screen,
        # where the reset of a new session used not to reach: the next
        # session's snapshot held code points its empty table lacked, and
        # a restart then hung that session up.
        self.vm.send_text("printf '\\033[?1049h\\033[2mDIM\\033[0m e\\314\\201\\033[9mX\\033[0m"
                          "\\033[?1049l'; echo ALT-$((6*7))\n")
        self.prog_wait(lambda s: "ALT-42" in s, "no marker after the alternate screen")
        # Not `exit`: Debian's ~/.bash_logout runs clear_console, which
        # clears the screen and the scrollback (ED 3) itself.
        self.vm.send_text("exec true\n")
        leftovers = ("secret-", "MARKER", SHELL_PROMPT, "exit", "scrollback-", "JOB-", "ALT-")
        self.wait_prompt("no clean login prompt after the restored session's logout",
                         lambda s: not any(w in s for w in leftovers))
        self.vm.send_keys(["shift", "pgup"])
        time.sleep(1)
        decoded = screen.read_screen(self.vm.screendump(), vmtest.load_font(FONT))
        if any(w in decoded for w in leftovers):
            self.fail("after the logout Shift+PageUp shows:\n" + decoded.text())
        self.vm.send_keys(["shift", "pgdn"])
        # Nothing of it is kept for the next consoled either; and the login
        # prompt's session, whose snapshot is the first made after the
        # logout, is adopted: no warning about its snapshot.
        time.sleep(1)
        cursor = self.journal_cursor()
        self.sh("systemctl restart " + UNIT, timeout=60)
        self.wait_prompt("no clean login prompt after a restart after the logout",
                         lambda s: not any(w in s for w in leftovers))
        logged = self.journal_since(cursor, "-u %s -o cat" % UNIT)
        if "Adopted the session" not in logged:
            self.fail("the login prompt's session was not adopted at the restart:\n"
                      + "\n".join(l for l in logged.splitlines()
                                   if re.search(r"snapshot|session", l, re.I)))
        deadline = time.monotonic() + 20
        while self.user_session() == session and session is not None:
            if time.monotonic() > deadline:
                self.fail("logind still has the session %s after the logout" % session)
            time.sleep(0.5)
        self.login("echo NEXT-$((6*7))", "NEXT-42")
        self.vm.send_keys(["shift", "pgup"])
        time.sleep(1)
        decoded = screen.read_screen(self.vm.screendump(), vmtest.load_font(FONT))
        if any(w in decoded for w in leftovers[:2]):
            self.fail("the next login's Shift+PageUp shows the restored session:\n"
                      + decoded.text())
        self.vm.send_keys(["shift", "pgdn"])
        self.vm.send_text("exit\n")
        self.wait_prompt("no login prompt after the next login's exit")

    def check_restore_corrupt(self):
        """A snapshot scribbled over (from outside, as root) and consoled
        killed: a line in the journal, a fresh login prompt with nothing of
        the session (no garbage), the session hung up."""
        shell = self.restore_shell()
        self.vm.send_text("echo CORRUPT-$((6*7))\n")
        self.prog_wait(lambda s: "CORRUPT-42" in s, "no marker")
        time.sleep(1)                       # the snapshot has caught up, the screen is still
        pid = self.unit(UNIT, "MainPID")["MainPID"]
        fds = [l.split(" -> ", 1) for l in self.sh("cd /proc/%s/fd && for f in *; do"
                                                     " echo \"$f -> $(readlink $f)\"; done"
                                                     % pid).splitlines()]
        memfds = [fd for fd, target in fds if target == SNAPSHOT_LINK]
        if len(memfds) != 1:
            self.fail("consoled holds %d snapshots (%r), not one" % (len(memfds), fds))
        cursor = self.journal_cursor()
        size = int(self.sh("stat -L -c %%s /proc/%s/fd/%s" % (pid, memfds[0])).strip())
        if size < 64:
            self.fail("the snapshot is only %d bytes" % size)
        # Random bytes over all of it, then SIGKILL before a frame can mend it.
        self.sh("dd if=/dev/urandom of=/proc/%s/fd/%s bs=%d count=1 conv=notrunc status=none"
                " && kill -9 %s" % (pid, memfds[0], size, pid))
        self.wait_unit(UNIT, "a restart", lambda p: p["ActiveState"] == "active"
                       and p["MainPID"] not in ("0", pid))
        decoded = self.wait_prompt("no fresh login prompt after the corrupt snapshot",
                                   lambda s: "CORRUPT" not in s and SHELL_PROMPT not in s)
        garbage = [l for l in decoded.lines if "?" in l]
        if garbage:
            self.fail("the screen after the corrupt snapshot has cells the reader cannot"
                      " decode:\n" + decoded.text())
        deadline = time.monotonic() + 15
        while True:
            entries = [json.loads(l) for l in self.journal_since(
                cursor, "-u %s -o json --output-fields=PRIORITY,MESSAGE" % UNIT).splitlines()
                if l]
            found = [e for e in entries if re.search(r"snapshot", str(e.get("MESSAGE")), re.I)
                     and int(e.get("PRIORITY", 6)) <= 4]
            if found:
                log("logged: " + found[0]["MESSAGE"])
                break
            if time.monotonic() > deadline:
                self.fail("no warning about the snapshot in the journal; consoled logged:\n"
                          + "\n".join(str(e.get("MESSAGE")) for e in entries))
            time.sleep(0.5)
        deadline = time.monotonic() + 15
        while self.vm.run("test -d /proc/%s" % shell)[1] == 0:
            if time.monotonic() > deadline:
                self.fail("the session's shell %s still runs after its snapshot was refused"
                          % shell)
            time.sleep(0.5)

    def check_giveup(self):
        """consoled killed until systemd gives up (the start limit):
        consoled-fallback@tty1 gives the VT back to the kernel's console and
        getty@tty1 takes over; the kernel's console draws getty's prompt at
        the boot mode and the kernel's keyboard types into it.  Debian's
        getty@.service would set the text mode and the keyboard itself
        (TTYReset=yes), hiding a fallback that does not: a drop-in turns that
        off here.  (Nor does fb0's mode tell the fallback's work from
        fbcon's own: the kernel's console sets the mode it recorded for the
        VT, the boot mode, when the VT goes back to text mode; the fallback's
        log line is checked for it.)"""
        self.sh("mkdir -p %s && printf '[Service]\\nTTYReset=no\\n' > %s"
                " && systemctl daemon-reload" % (os.path.dirname(GETTY_DROPIN), GETTY_DROPIN))
        try:
            self.giveup()
        finally:
            self.sh("rm -f %s && systemctl daemon-reload" % GETTY_DROPIN)
        # Back to consoled: starting it stops getty (Conflicts=).
        self.sh("systemctl reset-failed %s && systemctl start %s" % (UNIT, UNIT), timeout=60)
        self.wait_prompt("no login prompt after going back to consoled",
                         lambda s: "Password" not in s)
        # consoled's login screen shows the issue as getty's does: the VT's
        # modes say who draws it.
        mode, kbmode = self.vt_modes()
        if mode != KD_GRAPHICS or kbmode != K_OFF:
            self.fail("the prompt is not consoled's: tty1 has KDGETMODE %d and KDGKBMODE %d"
                      % (mode, kbmode))
        if self.vm.run("systemctl is-active " + GETTY)[0].strip() != "inactive":
            self.fail("getty@tty1 still runs beside consoled")

    def giveup(self):
        # The boot mode, as every restarted consoled logs it.
        self.sh("systemctl restart " + UNIT, timeout=60)
        self.wait_prompt("no login prompt before the give-up check")
        match = re.search(r"the boot mode saved in /run/consoled/fb0\.mode is (\d+)x(\d+)"
                          r" \(virtual (\d+)x(\d+)\) at (\d+) bpp", self.invocation_log())
        if not match:
            self.fail("consoled did not log the boot mode:\n" + self.invocation_log())
        xres, yres, vx, vy, bpp = match.groups()
        running = self.sh("cat /sys/class/graphics/fb0/virtual_size").strip()
        if running == "%s,%s" % (vx, vy):
            self.fail("consoled runs in the boot mode's virtual size: the check proves nothing")
        cursor = self.journal_cursor()
        kills = 0
        while kills < 12:
            state = self.unit(UNIT, "ActiveState", "MainPID")
            if state["ActiveState"] == "failed":
                break
            if state["ActiveState"] == "active" and state["MainPID"] != "0":
                self.vm.run("kill -9 %s" % state["MainPID"])
                kills += 1
            self.wait_unit(UNIT, "a restart or the give-up",
                           lambda p: p["ActiveState"] == "failed" or p["ActiveState"] == "active"
                           and p["MainPID"] not in ("0", state["MainPID"]), timeout=20)
        state = self.wait_unit(UNIT, "the give-up", lambda p: p["ActiveState"] == "failed")
        # systemd 252 keeps the Result of the last run (signal) when the
        # next start hits the limit; its log says which.
        if "Start request repeated too quickly" not in self.journal_since(cursor,
                                                                          "-o cat -u " + UNIT):
            self.fail("consoled failed (%r), but not at the start limit" % state)
        log("systemd gave up after %d kills" % kills)
        self.wait_unit(GETTY, "getty", lambda p: p["SubState"] == "running", timeout=20)
        fb = self.unit(FALLBACK, "Result", "ExecMainStatus", "ActiveState")
        if fb["Result"] != "success" or fb["ExecMainStatus"] != "0":
            self.fail("%s did not run or failed: %r" % (FALLBACK, fb))
        text = self.journal_since(cursor, "-o cat -u " + FALLBACK)
        want = "boot mode %sx%s (virtual %sx%s) at %s bpp restored" % (xres, yres, vx, vy, bpp)
        if want not in text or "tty1 is a text VT again" not in text:
            self.fail("%s did not restore %r:\n%s" % (FALLBACK, want, text))
        fb_after = self.sh("cd /sys/class/graphics/fb0 && cat virtual_size bits_per_pixel").split()
        if fb_after != ["%s,%s" % (vx, vy), bpp]:
            self.fail("fb0 is %r after the fallback, not the boot mode %s,%s at %s bpp"
                      % (fb_after, vx, vy, bpp))
        mode, kbmode = self.vt_modes()
        if mode != KD_TEXT or kbmode == K_OFF:
            self.fail("tty1 has KDGETMODE %d and KDGKBMODE %d under getty" % (mode, kbmode))
        # fbcon draws getty's prompt: in the font the reader knows, at the
        # boot mode's size, in the Linux console's white.
        self.sh("setfont -C /dev/tty1 %s" % GUEST_FONT)
        decoded = self.wait_prompt("the kernel's console does not show getty's prompt")
        img = self.vm.grab()
        if (img.width, img.height) != (int(xres), int(yres)):
            self.fail("the screen is %dx%d, not the boot mode's %sx%s"
                      % (img.width, img.height, xres, yres))
        if self.prompt_colours(decoded) != {7}:
            self.fail("getty's prompt is drawn in colours %r, not the Linux console's white"
                      % self.prompt_colours(decoded))
        # The kernel's keyboard reaches getty.
        self.vm.send_text(USER + "\n")
        self.wait_text(FONT, lambda s: any(l.rstrip() == "Password:" for l in s.lines),
                       "getty did not get the user name typed")


    # -- a real compositor: the last check --

    def check_weston(self):
        """weston from the test user's login on consoled's VT, on the DRM
        cirrus driver: cirrusfb and consoled make way for it first (the
        guest boots with cirrusfb; this check leaves it with cirrus)."""
        t0 = time.monotonic()
        self.sh("systemctl stop " + UNIT, timeout=60)
        # fbcon lets go of cirrusfb's fb0, so the module can go.
        self.sh("for v in /sys/class/vtconsole/vtcon*; do"
                " grep -q 'frame buffer' $v/name && echo 0 > $v/bind; done; true")
        self.sh("rmmod cirrusfb && rm -f /etc/modprobe.d/consoled-test.conf && modprobe cirrus")
        name = self.sh("udevadm settle; cat /sys/class/graphics/fb0/name").strip()
        if name != "cirrusdrmfb" or self.vm.run("test -e /dev/dri/card0")[1] != 0:
            self.fail("the DRM cirrus driver did not take the card: fb0 is %r" % name)
        # logind 252 refused TakeDevice of the card loaded after its start
        # (ENODEV, "no drm device found") though seat-status lists it; a
        # logind that starts with the card in place hands it out.  (No
        # session is open here: the checks before logged out.)
        self.sh("systemctl restart systemd-logind", timeout=60)
        self.sh("systemctl reset-failed %s; systemctl start %s" % (UNIT, UNIT), timeout=60)
        self.wait_prompt("no login prompt on the DRM driver's fb0")
        log("consoled on cirrusdrmfb after %.1fs" % (time.monotonic() - t0))
        self.login("echo WESTON-$((6*7))", "WESTON-42")
        self.sh("rm -f %s /tmp/leaked" % WESTON_LOG)
        before_log = self.invocation_log()
        command = "%s; echo weston-status=$?" % WESTON
        before, row, width = self.prog_start(command)
        t1 = time.monotonic()

        def wait_for(what, needle, read, timeout=60):
            deadline = time.monotonic() + timeout
            while needle not in read():
                if time.monotonic() > deadline:
                    self.fail("%s:\n%s" % (what, read()[-3000:]))
                time.sleep(1)
        weston_log = lambda: self.vm.run("cat %s" % WESTON_LOG)[0]  # noqa: E731
        consoled_log = lambda: self.invocation_log()[len(before_log):]  # noqa: E731
        # The desktop shell is launched once the outputs and seat are up.
        wait_for("weston did not come up", "launching '/usr/lib/x86_64-linux-gnu/"
                 "weston-desktop-shell'", weston_log)
        wait_for("consoled did not notice weston (logind) taking its VT",
                 "was taken by another program (VT_PROCESS, signals 34/35)", consoled_log)
        log("weston ran after %.1fs" % (time.monotonic() - t1))
        state = self.sh("%s state 1" % VTGRAB).strip()
        if "mode=process" not in state or "kd=graphics" not in state:
            self.fail("tty1 is not weston's: %s" % state)
        self.vm.send_text("echo leaked > /tmp/leaked\n")
        time.sleep(3)
        self.sh("pkill -TERM -x weston")
        wait_for("consoled did not take its VT back after weston",
                 "was handed back: taking it again (in front)", consoled_log)
        # weston's clients print cursor warnings on the terminal; the shell's
        # lines above the command line must be back as they were.
        decoded = self.prog_wait(lambda s: any(l.rstrip() == "weston-status=0" for l in s.lines)
                                 and s.lines[-1].strip() == "" and
                                 any(l.rstrip() == SHELL_PROMPT for l in s.lines),
                                 "no weston-status=0 and prompt after weston quit")
        after = self.stable_grab()
        font = vmtest.load_font(FONT)
        fh = font.height
        if before.crop(0, 0, before.width, row * fh) != after.crop(0, 0, after.width, row * fh):
            self.fail("the shell's screen is not back after weston:\n%s" % decoded.text(),
                      before, after, tag="weston")
        self.vm.send_text("echo typed-$((6*7))\n")
        decoded = self.prog_wait(lambda s: any(l.rstrip() == "typed-42" for l in s.lines),
                                 "typing after weston failed")
        # Keys that had reached the pty would have run before typed-42.
        if self.vm.run("test -e /tmp/leaked")[1] == 0 or "leaked" in decoded.text():
            self.fail("keys typed into weston reached the shell:\n%s" % decoded.text())
        self.vm.send_text("exit\n")
        self.wait_prompt("no login prompt after the logout", lambda s: "WESTON" not in s)


    def vcsu_lines(self):
        """/dev/vcsu1 as text lines (trailing blanks cut) and vcsa1's header."""
        head = [int(v) for v in self.sh("head -c 4 /dev/vcsa1 | od -An -tu1").split()]
        # run-length coded in the guest: the serial line is slow
        rle = self.sh("od -An -tx4 -v /dev/vcsu1 | tr -s ' ' '\\n' | grep . | uniq -c").split()
        cells = []
        for n, v in zip(rle[0::2], rle[1::2]):
            cells += [int(v, 16)] * int(n)
        cols = head[1]
        text = "".join(chr(c) if 0x20 <= c < 0x110000 else "?" for c in cells)
        return [text[i:i + cols].rstrip() for i in range(0, len(text), cols)], head

    def check_vcs(self):
        """The vcs mirror inside consoled@tty1's sandbox: while a user is
        logged in, /dev/vcsu1 holds the screen's text (é included) and
        vcsa1's cursor is after the prompt; after the logout none of it is
        left."""
        self.wait_prompt("no login prompt before logging in")
        self.login("echo VCS-$((6*7))", "VCS-42")
        self.vm.send_text("printf 'VCS-\\303\\251-%s\\n' $((6*7))\n")
        deadline = time.monotonic() + 20
        while True:
            lines, head = self.vcsu_lines()
            last = max((i for i, l in enumerate(lines) if l), default=-1)
            if "VCS-\u00e9-42" in lines and last >= 0 and lines[last] == SHELL_PROMPT and \
                    head[2:] == [len(SHELL_PROMPT) + 1, last]:
                break
            if time.monotonic() > deadline:
                self.fail("/dev/vcsu1 does not show the session (cursor %r, expected after the"
                          " prompt on the last line):\n%s" % (head[2:], "\n".join(lines)))
            time.sleep(0.5)
        self.vm.send_text("exit\n")
        self.wait_prompt("no login prompt after the logout", lambda s: "VCS" not in s)
        deadline = time.monotonic() + 10
        while any("VCS" in l or SHELL_PROMPT in l for l in self.vcsu_lines()[0]):
            if time.monotonic() > deadline:
                self.fail("after the logout /dev/vcsu1 still shows:\n"
                          + "\n".join(self.vcsu_lines()[0]))
            time.sleep(0.5)
        if PROMPT not in [l.rstrip() for l in self.vcsu_lines()[0]]:
            self.fail("the login prompt is not in /dev/vcsu1:\n" + "\n".join(self.vcsu_lines()[0]))


# The real programs, in one login of the test user.
PROGRAM_CHECKS = ["vim", "less", "tmux", "mc", "htop", "nano", "dialog", "htop-c", "nano-c",
                  "dialog-c"] + termchecks.CHECKS
# Session restore: one login of the test user through the kinds
# of restart, then its logout, a corrupt snapshot, and systemd giving up.
RESTORE_CHECKS = ["restore-segv", "restore-kill", "restore-watchdog", "restore-restart",
                  "restore-logout", "restore-corrupt"]
CHECKS = ["fbdev", "units", "security", "sandbox", "plugin", "kmsg-sandbox", "login",
          "session", "logind-control", "share"] + \
    PROGRAM_CHECKS + ["config", "colorfgbg", "kill", "stop", "hotplug", "helper-refuses"] + \
    RESTORE_CHECKS + ["no-helper", "no-fb", "fb-wait", "giveup", "weston"]
# The keyboard checks (kbdchecks.py: compose, keymap), before weston.
CHECKS[-1:-1] = kbdchecks.CHECKS
for _name in kbdchecks.CHECKS:
    setattr(Runner, "check_" + _name, getattr(kbdchecks, "check_" + _name))
# the mirror into the VT's buffer; weston stays last
CHECKS.insert(CHECKS.index("weston"), "vcs")
# The login screen as getty's and autologin: before weston.
logincheck.install(Runner, sys.modules[__name__])
CHECKS[-1:-1] = logincheck.CHECKS
# A seat without VTs (seatcheck.py): before weston and the package.
seatcheck.install(Runner, sys.modules[__name__])
CHECKS[-1:-1] = seatcheck.CHECKS
# The terminal protocol checks (termchecks.py) among the program checks.
termchecks.install(Runner, sys.modules[__name__])
# The Debian package (pkgcheck.py): before weston, last of the
# others (it takes the meson install away and puts it back).
pkgcheck.install(Runner, sys.modules[__name__])
CHECKS[-1:-1] = pkgcheck.CHECKS


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True, help="the meson build directory to install from")
    ap.add_argument("--only", default="", help="comma-separated checks (default: all)")
    ap.add_argument("--out", default=None, help="directory for logs and failure pictures")
    ap.add_argument("--deb", default=None,
                    help="the package check: use the .debs and .changes built in this"
                    " directory (default: build them from the source tree into OUT/deb)")
    args = ap.parse_args()
    checks = [c for c in args.only.split(",") if c] or CHECKS
    for name in checks:
        if name not in CHECKS:
            ap.error("unknown check %r (one of %s)" % (name, ", ".join(CHECKS)))
    if "weston" in checks[:-1]:
        ap.error("weston must be the last check (it leaves the guest on the DRM driver)")

    out_dir = os.path.abspath(args.out or os.path.join(os.getcwd(), "vm-systemd"))
    os.makedirs(out_dir, exist_ok=True)
    print("1..%d" % len(checks), flush=True)
    work = tempfile.mkdtemp(prefix="consoled-sd-")
    try:
        return run(checks, os.path.abspath(args.build), out_dir, work, args.deb)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(checks, build, out_dir, work, deb=None):
    """Make the guest, boot it, run the checks; the exit status."""
    t0 = time.monotonic()
    if "package" in checks:
        # Before the guest: its image carries the packages.  A failure here
        # fails the package check only.
        if deb:
            try:
                pkgcheck.use_prebuilt(os.path.abspath(deb))
            except (RuntimeError, OSError, subprocess.SubprocessError) as e:
                pkgcheck.BUILT["error"] = str(e)
        else:
            # A build on both cores: not while a guest beside this one runs
            # a timed check (turns.py).
            with turns.turn():
                pkgcheck.build(os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(
                    __file__)), "..", "..")), out_dir)
        t0 = time.monotonic()
    try:
        kernel = kernel_mod.fetch_kernel()
        root = rootfs.prepare(work, kernel, GUEST_MODULES, hostname=HOSTNAME, log=log)
        setup_guest(root, build)
        image = rootfs.make_image(root, os.path.join(work, "root.img"))
        shutil.rmtree(root)
    except (RuntimeError, OSError, subprocess.SubprocessError) as e:
        print("Bail out! cannot make the guest: %s" % str(e).splitlines()[0], flush=True)
        log(str(e))
        return 1
    log("guest image ready in %.1fs" % (time.monotonic() - t0))
    try:
        with rootfs.DebianVM(image, kernel, out_dir=out_dir,
                             qemu_args=seatcheck.QEMU_ARGS) as vm:
            t1 = time.monotonic()
            state = vm.wait_booted()
            log("harness shell after %.1fs, systemd %s after %.1fs"
                % (vm.boot_seconds, state, vm.boot_seconds + time.monotonic() - t1))
            if state != "running":
                log("failed units:\n" + vm.run("systemctl --failed --no-pager")[0])
            r = Runner(vm, "systemd", out_dir)
            for i, name in enumerate(checks):
                r.check(name, getattr(r, "check_" + name.replace("-", "_")))
                # The program checks share a login; log out after the last one.
                if name in PROGRAM_CHECKS and (checks[i + 1:] or [""])[0] not in PROGRAM_CHECKS:
                    try:
                        r.prog_logout()
                    except Exception as e:  # noqa: BLE001 -- the next check's problem
                        log("logging out after the programs: %s" % e)
    except vmlib.VMError as e:
        print("Bail out! the guest did not come up: %s" % str(e).splitlines()[0], flush=True)
        log(str(e))
        return 1
    log("systemd: %d passed, %d failed%s" % (r.n - len(r.failed), len(r.failed),
                                           (": " + ", ".join(r.failed)) if r.failed else ""))
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
