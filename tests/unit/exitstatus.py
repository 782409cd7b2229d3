#!/usr/bin/python3
"""consoled's exit statuses for what it answers without a framebuffer or a VT
(consoled(8), EXIT STATUS): the built binary run as a user would run it.

  --help, --version                0, the answer on stdout
  usage errors                     2: an ambiguous abbreviation, a value for
                                   an option that takes none, a --config
                                   that cannot be read
  --list-backends --fbdev=X        3 when X cannot be opened (logged as an
                                   error), the plugins listed all the same
  --list-backends, no framebuffer  0, nothing logged at error priority
                                   (skipped on a host with a framebuffer)

stderr is a pipe, so every log line carries its "<N>" priority (log.h).
Usage: exitstatus.py CONSOLED
"""

import glob
import os
import shlex
import subprocess
import sys


def run(consoled, args):
    # A cross build's binary runs under meson's exe_wrapper (qemu-user).
    wrapper = shlex.split(os.environ.get("MESON_EXE_WRAPPER", ""))
    proc = subprocess.run(wrapper + [consoled] + args, stdin=subprocess.DEVNULL, capture_output=True,
                          timeout=30, env={"PATH": "/usr/bin:/bin"})
    return proc.returncode, proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")


# Given with every usage error: should one be accepted after all, consoled
# gives up at once (status 3) instead of waiting for or taking this host's
# framebuffer and VT.
HARMLESS = ["--fbdev=/nonexistent/fb0", "--fb-wait=0", "--vt=63"]


def main():
    consoled = sys.argv[1]
    cases = [
        (["--help"], 0, "stdout", "Usage: consoled"),
        (["--version"], 0, "stdout", "consoled "),
        (HARMLESS + ["--xkb=de"], 2, "stderr",
         "option '--xkb' is ambiguous; possibilities: '--xkb-model'"),
        (HARMLESS + ["--login=/bin/bash"], 2, "stderr", "option '--login' takes no value"),
        (HARMLESS + ["--help=yes"], 2, "stderr", "option '--help' takes no value"),
        (HARMLESS + ["--config=/nonexistent/consoled.conf"], 2, "stderr",
         "--config=/nonexistent/consoled.conf: cannot read it: No such file or directory"),
        (["--list-backends", "--fbdev=/nonexistent/fb0"], 3, "stderr",
         "<3>fbdev: Failed to open framebuffer /nonexistent/fb0"),
        (["--list-backends", "--fbdev=/nonexistent/fb0"], 3, "stdout", "Backend directory: "),
    ]
    failed = 0
    for args, want, stream, needle in cases:
        status, out, err = run(consoled, args)
        text = out if stream == "stdout" else err
        if status != want or needle not in text:
            print("not ok: consoled %s: status %d (want %d), %s without %r:\nstdout: %s\nstderr: %s"
                  % (" ".join(args), status, want, stream, needle, out, err))
            failed = 1
        else:
            print("ok: consoled %s: %d" % (" ".join(args), status))

    if glob.glob("/sys/class/graphics/fb[0-9]*"):
        print("skip: --list-backends without a framebuffer (this machine has one)")
    else:
        status, out, err = run(consoled, ["--list-backends"])
        errors = [l for l in err.splitlines() if l[:3] in ("<0>", "<1>", "<2>", "<3>")]
        if status != 0 or errors or "Backend directory: " not in out:
            print("not ok: consoled --list-backends without a framebuffer: status %d (want 0),"
                  " error lines %r:\nstdout: %s\nstderr: %s" % (status, errors, out, err))
            failed = 1
        else:
            print("ok: consoled --list-backends without a framebuffer: 0, %s"
                  % (err.strip() or "nothing logged"))
    return failed


if __name__ == "__main__":
    sys.exit(main())
