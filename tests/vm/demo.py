#!/usr/bin/python3
"""Boot a QEMU guest running the freshly built consoled, for humans.

    tests/vm/demo.py [BUILD_DIR] [--card cirrus|ati|rv100|bochs|vfb] [--seconds N]
                      [--font Lat15-Fixed16.psf.gz] [--type TEXT] [--screenshot FILE]
                      [-- EXTRA CONSOLED FLAGS]

tests/vm/run-demo (the README command) installs, builds and calls this.
BUILD_DIR is the meson build directory (default: $CONSOLED_BUILD, else
./build); the binary is looked up as BUILD_DIR/daemon/consoled or
BUILD_DIR/consoled, or given with --consoled.  In the guest /init starts

    consoled --vt=1 --switchvt --font-file=/fonts/FONT EXTRA... --login -- /bin/sh -l

with its log in /tmp/consoled.log.  With $DISPLAY (or $WAYLAND_DISPLAY) and
a QEMU GTK/SDL UI, QEMU opens a window showing the card; otherwise the screen
is saved as PNG every --interval seconds and the folder and last picture are
printed at the end.  The serial console (a root shell, kernel messages) is on
stdio: type there, and press Ctrl-A X to quit (or wait for --seconds).

--type TEXT types TEXT on the emulated keyboard into consoled's session once
consoled runs (a backslash-n is Enter); --screenshot FILE writes the screen
as it is at the end (--seconds) to FILE as PNG.  The README's picture is made
so (README.md, "What it is").
"""

import argparse
import os
import select
import shlex
import subprocess
import sys
import termios
import time
import tty

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import screen  # noqa: E402
import vmlib  # noqa: E402

QUIT_PREFIX = b"\x01"  # Ctrl-A, then x: like QEMU's own stdio mux


def find_consoled(build_dir):
    for rel in ("daemon/consoled", "consoled"):
        path = os.path.join(build_dir, rel)
        if os.access(path, os.X_OK):
            return path
    return None


def find_backends(build_dir):
    """Backend plugins built in BUILD_DIR/backends, shipped to /usr/lib/consoled/backends."""
    found = {}
    root = os.path.join(build_dir, "backends")
    for dirpath, _, files in os.walk(root):
        for name in sorted(files):
            if name.endswith(".so"):
                found["usr/lib/consoled/backends/" + name] = os.path.join(dirpath, name)
    return found


def gui_display():
    """-display arguments for a window, or None when no window can be shown."""
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return None
    out = subprocess.run(["qemu-system-x86_64", "-display", "help"], capture_output=True,
                         text=True, timeout=30).stdout.split()
    for ui in ("gtk", "sdl"):
        if ui in out:
            return ["-display", ui]
    return None


def start_script(font, extra, login):
    """The /etc/vm/rc.d hook that launches consoled in the background."""
    argv = (["consoled", "--vt=1", "--switchvt", "--font-file=/fonts/" + font] + extra
            + ["--login", "--"] + login)
    return ("#!/bin/sh\n"
            "# Written by tests/vm/run-demo.\n"
            "echo 'run-demo: starting %s'\n"
            # the plugins built in the tree, copied there by find_backends()
            "CONSOLED_BACKEND_DIR=/usr/lib/consoled/backends %s >/tmp/consoled.log 2>&1 </dev/null &\n"
            % (" ".join(argv).replace("'", ""), " ".join(shlex.quote(a) for a in argv)))


def parse_args():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    parser = argparse.ArgumentParser(description="Boot consoled in QEMU.")
    parser.add_argument("build_dir", nargs="?",
                        default=os.environ.get("CONSOLED_BUILD", "build"))
    parser.add_argument("--consoled", help="consoled binary (default: found in BUILD_DIR)")
    parser.add_argument("--card", default="cirrus", choices=sorted(vmlib.CARD_QEMU_ARGS))
    parser.add_argument("--font", default="Lat15-Fixed16.psf.gz",
                        help="font in /usr/share/consolefonts (must be in the initramfs list)")
    parser.add_argument("--login", default="/bin/sh -l",
                        help="command consoled runs after --login -- (default: %(default)s)")
    parser.add_argument("--seconds", type=float, default=0,
                        help="quit after N seconds (default: run until Ctrl-A X)")
    parser.add_argument("--interval", type=float, default=3, help="seconds between screenshots")
    parser.add_argument("--out", default="/tmp/consoled-demo", help="screenshots and logs")
    parser.add_argument("--screenshots", action="store_true",
                        help="take screenshots even when a window is shown")
    parser.add_argument("--append", default="", help="extra kernel command line")
    parser.add_argument("--type", default="",
                        help="keys typed into consoled's session once it runs (\\n: Enter)")
    parser.add_argument("--screenshot", metavar="FILE",
                        help="write the screen at the end to FILE (PNG)")
    args = parser.parse_args(argv)
    args.extra = extra
    return args


def interact(vm, args, screenshots):
    """Forward stdin to the guest console; take screenshots; stop on Ctrl-A X or time."""
    os.makedirs(args.out, exist_ok=True)
    stdin = sys.stdin.fileno()
    is_tty = os.isatty(stdin)
    saved = termios.tcgetattr(stdin) if is_tty else None
    if is_tty:
        tty.setraw(stdin)
    start = time.monotonic()
    next_shot = start + 1.0
    pending_prefix, last = False, None
    read_stdin = True
    if args.type:
        type_into_session(vm, args.type.replace("\\n", "\n"))
    try:
        while True:
            now = time.monotonic()
            if args.seconds and now - start >= args.seconds:
                break
            if vm.proc.poll() is not None:
                break
            if screenshots and now >= next_shot:
                last = vm.save_png(vm.grab(), "shot-%04d.png" % int(now - start))
                next_shot = now + args.interval
            timeout = max(0.05, min(next_shot - now if screenshots else 0.5, 0.5))
            ready = select.select([stdin] if read_stdin else [], [], [], timeout)[0]
            if not ready:
                continue
            data = os.read(stdin, 1024)
            if not data:
                read_stdin = False  # stdin closed (e.g. CI): keep running until --seconds
                continue
            if pending_prefix:
                pending_prefix = False
                if data[:1] in (b"x", b"X"):
                    break
            if data.endswith(QUIT_PREFIX):
                pending_prefix = True
                data = data[:-1]
            if data:
                vm.console_write(data)
    finally:
        if saved is not None:
            termios.tcsetattr(stdin, termios.TCSADRAIN, saved)
    if screenshots or args.screenshot:
        img = vm.grab()
        last = vm.save_png(img, "last.png")
        if args.screenshot:
            screen.save_png(img, args.screenshot)
            print("\r\nrun-demo: screen saved as %s\r" % args.screenshot)
    return last


def type_into_session(vm, text):
    """Wait (at most a minute) until consoled has drawn its first frame with
    the shell started, then type text on the emulated keyboard."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        out, status = vm.run("pgrep -x consoled >/dev/null && pgrep -P $(pgrep -x consoled) >/dev/null",
                             timeout=10)
        if status == 0:
            break
        time.sleep(0.5)
    time.sleep(2)  # the shell's first prompt
    vm.send_text(text)


def main():
    args = parse_args()
    consoled = args.consoled or find_consoled(args.build_dir)
    if not consoled or not os.path.exists(consoled):
        sys.exit("run-demo: no consoled binary in %r (build it, or pass --consoled PATH)"
                 % args.build_dir)
    display = gui_display()
    screenshots = args.screenshots or display is None
    files = {"etc/vm/rc.d/50-consoled": start_script(args.font, args.extra,
                                                     shlex.split(args.login))}
    print("run-demo: booting %s with %s (%s); Ctrl-A X quits" % (
        args.card, consoled, "window" if display else "screenshots in " + args.out))
    with vmlib.VM(args.card, consoled=consoled, initramfs_extra=files,
                  extra_elves=find_backends(args.build_dir), append=args.append,
                  out_dir=args.out, serial_echo=True,
                  display=display or ["-display", "none"]) as vm:
        # The harness shell (ttyS1) is ready; give the human a prompt on ttyS0.
        vm.console_write("\n")
        last = interact(vm, args, screenshots)
        log, _ = vm.run("cat /tmp/consoled.log 2>/dev/null | tail -n 20", timeout=10)
    print("\r\nrun-demo: consoled log (tail):\n" + log)
    if screenshots:
        print("run-demo: screenshots in %s, last: %s" % (args.out, last))
    print("run-demo: serial logs in %s" % args.out)


if __name__ == "__main__":
    main()
