#!/usr/bin/python3
"""consoled's scrolling benchmark: consoled's scroll strategies against the kernel's fbcon.

    bench.py [--lines N] [--ticks M] [--cards cirrus,ati,...] [--modes pan,redraw,...]
             [--ttf-modes auto,...] [--rotations 1,2,3] [--out DIR] [--consoled PATH]
             [--ftref PATH]

One QEMU boot per card (tests/vm/vmlib.py).  In it:

  fbcon     the kernel's console: `cat` of N lines to /dev/tty1 with the
            benchmark font, timed in the guest.
  MODE      consoled --scroll-mode=MODE --no-calibrate --stats with the same
            font; its session (session.sh) times `cat` of the same N lines
            until consoled has parsed them (a cursor position request answers
            after everything before it), then prints M lines one every ~0.03 s
            (one scrolled row per frame).  consoled's counters (SIGUSR1 and
            exit dumps of --stats) give frames, VRAM bytes written and read,
            blits and pans of each phase.
  MODE ttf  the same run with a TrueType font, DejaVu Sans Mono, at the
            point size whose cell is nearest the PSF font's (8x16): ftref,
            the host's FreeType reference renderer (tests/vm/ftref.c),
            measures the cells of candidate sizes.  By default only for
            auto (--ttf-modes).
  auto rotN on cirrus (ROTATE_CARDS), for each rotation of --rotations
            (fbcon's numbers, default 1,2,3): fbcon again with
            /sys/class/graphics/fbcon/rotate_all = N, then consoled
            --rotate=N in auto, both with --rotate-lines lines (default
            min(N, 2000): fbcon turned is slow); its row compares with that
            fbcon run.
  kmsg      consoled auto's cat alone and beside a burst of --kmsg (default N)
            records written to /dev/kmsg by kmsgflood (kmsgflood.c), with
            --kernel-messages=8, --kmsg-rounds times in turn.

Figures are printed as a table per card and written to OUT/bench-results.txt
and OUT/bench-results.json.  Speed targets are reported (PASS/MISS), never
enforced; the exit status is 1 only when a run broke (VM did not boot,
consoled crashed or refused a mode it lists, a run timed out, stats missing).
See README.md for the method and the columns.
"""

import argparse
import collections
import json
import os
import re
import signal
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "vm"))
import fonttest  # noqa: E402
import footprint  # noqa: E402 -- tests/bench/footprint.py
import latency  # noqa: E402 -- this directory (--latency)
import resolutions  # noqa: E402 -- this directory (--resolutions)
import initramfs  # noqa: E402
import screen  # noqa: E402
from tools import tool_path  # noqa: E402 -- this directory
import vmlib  # noqa: E402
import vmtest  # noqa: E402

# The default cards; virtio, qxl (DRM, like bochs), bochs-overalloc and the
# boot framebuffers vesa (vesafb, 800x600x16) and efi (efifb under OVMF,
# 1280x800x32) on request (--cards), which spares CI's smoke run (.ci/run)
# boots of 1.5-3 minutes each.  vesa and efi boot as the VM suite's cards of
# those names (tests/vm/vmlib.py) with no module loaded: the benchmark
# measures on vesafb and efifb themselves, never after a handover.
CARDS = ["cirrus", "ati", "rv100", "bochs", "vfb"]
MORE_CARDS = ["virtio", "qxl", "bochs-overalloc", "vesa", "efi", "vexpress"]
# vexpress is the ARM guest (tests/vm/vmlib.py: QEMU's vexpress-a9, PL111
# under amba-clcd, 640x480 RGB565): measured with the armhf build of
# tests/cross/run (--armhf-consoled) and its tools; the peers are the
# host's amd64 packages, so it has none.
# Card variants: (QEMU card, extra kernel command line).  bochs-overalloc is
# bochs booted with a fbdev buffer three screens tall, the boot parameter
# that gives DRM fbdev emulation room to pan (docs/HARDWARE.md).
CARD_BOOT = {"bochs-overalloc": ("bochs", "drm_kms_helper.drm_fbdev_overalloc=300")}
ALL_MODES = ["auto", "pan", "wrap", "copy", "redraw", "shadow"]

# What each card can do (docs/HARDWARE.md): cirrus pans (a virtual screen as
# tall as video memory) but cannot wrap; ati/rv100 accept the pan ioctl but QEMU does not move the
# picture, so consoled quirks pan off there; bochs (DRM fbdev emulation)
# neither pans nor wraps, nor do virtio-gpu and qxl (DRM too); vesafb pans
# only with its ypan option, not given here, and efifb never; vfb does both.  `copy` is added when a blitter
# plugin for the card is present (see copy_plugin()).
CARD_MODES = {
    "cirrus": ["pan", "redraw", "shadow"],
    "ati": ["redraw", "shadow"],
    "rv100": ["redraw", "shadow"],
    "bochs": ["redraw", "shadow"],
    "virtio": ["redraw", "shadow"],
    "qxl": ["redraw", "shadow"],
    # Pan is listed to show that consoled refuses it (the picture does not move).
    "bochs-overalloc": ["pan", "redraw", "shadow"],
    "vesa": ["redraw", "shadow"],
    "efi": ["redraw", "shadow"],
    "vfb": ["pan", "wrap", "redraw", "shadow"],
    # amba-clcd neither pans nor wraps (a virtual screen of one screen)
    "vexpress": ["redraw", "shadow"],
}
# The cards that get a row per rotation (--rotations).
ROTATE_CARDS = ["cirrus"]
# The cards that get the footprint section by default (--footprint): the
# issue's 640x480x8 and 1280x800x32.
FOOTPRINT_CARDS = ["cirrus", "bochs"]
# Names a blitter plugin for the card may go by in `consoled --list-backends`.
COPY_PLUGINS = {
    "cirrus": ["cirrus"],
    "ati": ["aty128", "rage128", "ati"],
    "rv100": ["radeon", "rv100"],
    "bochs": [],
    "virtio": [],
    "qxl": [],
    "bochs-overalloc": [],
    "vesa": [],
    "efi": [],
    "vfb": [],
    "vexpress": [],
}

# The other terminals measured beside consoled (--peers): Debian's packages,
# installed on the host (tests/deps.sh) and copied with their libraries into
# the benchmark's initramfs only.  kmscon draws with its unifont font module
# (8x16 glyphs built into the module, no pango), on fbdev and, where the
# card has a DRM device, on DRM (drm2d: dumb buffers, no 3D).  fbterm needs
# a fontconfig font: DejaVu Sans Mono forced into 8x16 cells.
PEERS = ["fbterm", "kmscon"]
KMSCON_BIN = "/usr/libexec/kmscon/kmscon"
KMSCON_MODS = "/usr/lib/x86_64-linux-gnu/kmscon"
PEER_ELVES = {
    "fbterm": ["/usr/bin/fbterm"],
    "kmscon": [KMSCON_BIN] + ["%s/mod-%s.so" % (KMSCON_MODS, m) for m in ("unifont", "bbulk", "pixman")],
}
G_PEER_LOG = "/tmp/peer.log"
G_PEER_SESSION = "/tmp/peer-session.sh"


FONT_NAME = "Lat15-Fixed16.psf.gz"
GUEST_FONT = "/fonts/" + FONT_NAME
HOST_FONT = "/usr/share/consolefonts/" + FONT_NAME
# The TrueType rows: this font at the size whose cell is nearest the PSF's.
TTF_NAME = "DejaVuSansMono.ttf"
TTF_DPI = 96
TTF_SIZES = [s / 4 for s in range(6 * 4, 16 * 4 + 1)]  # 6 to 16 points, in quarters

G_LINES = "/bench/lines"
G_ROT_LINES = "/bench/lines-rotated"  # the rotation rows' (--rotate-lines)
G_FBCON_LINES = "/bench/lines-fbcon"  # fbcon's own run (--fbcon-lines)
G_PEER_RC = "/tmp/peer.rc"
G_KMSGFLOOD = "/usr/bin/kmsgflood"  # the kmsg row's writer (kmsgflood.c)
G_PTYFLOOR = "/usr/bin/ptyfloor"  # the pty floor row's reader (ptyfloor.c)
PTYFLOOR_SLEEP_US = 1000
# --compare: another consoled binary (e.g. the one before a change), named
# consoled too (the session and the harness find it by that name)
G_COMPARE = "/opt/compare/consoled"
G_SESSION = "/bench/session.sh"
G_FBCON = "/bench/fbcon.sh"
G_LOG = "/tmp/consoled.log"
G_STATUS = "/tmp/consoled.status"
G_RESULT = "/tmp/bench.result"

# Targets (README.md): reported, never enforced.
PAN_ROW_FACTOR = 1.1
FBCON_SPEEDUP = 10.0
TARGET_LINES = 20000

STATS_RE = re.compile(r"stats: (.*)$")
MARK_RE = re.compile(r"^@@(?:snap (\S+)|(final))\s*$")
DREW_RE = re.compile(r"Drew (\d+) frames, (\d+) cells; VRAM bytes written (\d+), read (\d+); "
                     r"(\d+) ms")
COUNTERS = ["frames", "rows_scrolled", "vram_bytes_written", "vram_bytes_read", "blits",
            "fills", "pans", "render_usec"]


class RunError(Exception):
    pass


# --- consoled's interface ---------------------------------------------------

def probe_consoled(path):
    """What this consoled binary offers, from its --help (run on the host)."""
    try:
        p = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=30)
        text = p.stdout + p.stderr
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SystemExit("bench: cannot run %s --help: %s" % (path, e))
    caps = {
        "scroll_mode": "--scroll-mode" in text,
        "stats": "--stats" in text,
        "no_calibrate": "--no-calibrate" in text,
        "list_backends": "--list-backends" in text,
        "font_size": "--font-size" in text,
        "session_restore": "--session-restore" in text,
    }
    m = re.search(r"--scroll-mode=([a-z-]+(?:\|[a-z-]+)+)", text)
    if m:
        caps["modes"] = m.group(1).split("|")
    else:
        caps["modes"] = list(ALL_MODES) if caps["scroll_mode"] else []
    return caps


def parse_stats(text):
    """Group --stats lines of a consoled log by the marker line before them.

    Returns {step: {"strategies": {name: {counter: int}}, "mode": str|None}};
    lines before any marker belong to step "start".
    """
    groups = {}
    step = "start"
    for line in text.splitlines():
        m = MARK_RE.match(line.strip())
        if m:
            step = m.group(1) or m.group(2)
            groups.setdefault(step, {"strategies": {}, "mode": None})
            continue
        m = STATS_RE.search(line)
        if not m:
            continue
        g = groups.setdefault(step, {"strategies": {}, "mode": None})
        fields = dict(re.findall(r"([a-z_-]+)=(\S+)", m.group(1)))
        if "strategy" in fields:
            name = fields.pop("strategy")
            g["strategies"][name] = {k: int(v) for k, v in fields.items() if v.isdigit()}
        elif "mode" in fields:
            g["mode"] = m.group(1).strip()
        elif m.group(1).startswith(("cpu ", "vcs ")):
            # where the time went (cpu), the mirror's share (vcs usec)
            key = m.group(1)[:3]
            g.setdefault("cpu", {}).update(
                {(k if key == "cpu" else "vcs_" + k): int(v) for k, v in fields.items()
                 if v.isdigit()})
    return groups


def totals(strategies):
    out = {k: 0 for k in COUNTERS}
    for counters in strategies.values():
        for k, v in counters.items():
            out[k] = out.get(k, 0) + v
    return out


def delta(before, after):
    """Counters of the interval between two dumps (cumulative counters).

    If some counter went down, the dumps are per interval (counters reset at
    each dump): the later dump is the interval itself.
    """
    d = {k: after.get(k, 0) - before.get(k, 0) for k in set(before) | set(after)}
    if any(v < 0 for v in d.values()):
        return dict(after)
    return d


def strategy_delta(before, after):
    out = {}
    for name in set(before) | set(after):
        d = delta(before.get(name, {}), after.get(name, {}))
        if any(d.values()):
            out[name] = d
    return out


# --- the guest --------------------------------------------------------------

class CardBench:
    def __init__(self, vm, card, args, caps, log):
        self.vm = vm
        self.card = card
        self.args = args
        self.caps = caps
        self.log = log
        font = screen.load_font(HOST_FONT)
        self.font_w, self.font_h = font.width, font.height
        fb = vm.check("cd /sys/class/graphics/fb0 && cat bits_per_pixel virtual_size name").split()
        self.bpp, self.virtual_size, self.fb_name = int(fb[0]), fb[1], " ".join(fb[2:])
        # The text grid comes from the tty's window size (fbcon's after
        # setfont, then consoled's pty): sysfs has no visible resolution.
        self.rows = self.cols = None
        self.row_bytes = None
        self.ttf = None  # {"size", "cell": (w, h)} when the TrueType rows run
        self.rotate = 0  # --rotate= of the consoled runs (the rotation rows)
        # the lines file of the runs and its length (the rotation rows use
        # their own: fbcon turned is several times slower)
        self.lines_file, self.lines = G_LINES, args.lines

    def set_grid(self, rows, cols):
        self.rows, self.cols = rows, cols
        self.row_bytes = cols * self.font_w * self.font_h * ((self.bpp + 7) // 8)

    def timeout_for(self, lines, ticks=0):
        # fbcon on cirrus takes ~24 ms a line under TCG; consoled far less.
        return 120 + lines * 0.05 + ticks * 0.5

    def fbcon(self, rotate=0, lines_file=None, lines=None):
        # fbcon takes ~24 ms a line on cirrus under TCG, several times that
        # on a host busy with other guests; turned, it draws a glyph at a
        # time through its rotated font: up to ~0.7 s a line
        lines_file, lines = lines_file or self.lines_file, lines or self.lines
        out = self.vm.check("sh %s %s %s %d" % (G_FBCON, lines_file, GUEST_FONT, rotate),
                            timeout=(120 + lines * 0.2) * (4 if rotate else 1))
        m = re.search(r"fbcon (\d+\.\d+) (\d+\.\d+)", out)
        size = re.search(r"size (\d+) (\d+)", out)
        if not m or not size:
            raise RunError("fbcon run printed no times: %r" % out)
        self.set_grid(int(size.group(1)), int(size.group(2)))
        return float(m.group(2)) - float(m.group(1))

    def list_backends(self):
        if not self.caps["list_backends"]:
            return None
        out, status = self.vm.run("CONSOLED_BACKEND_DIR=%s consoled --list-backends --fbdev=/dev/fb0 2>&1"
                                  % vmtest.GUEST_BACKEND_DIR, timeout=60)
        return out if status == 0 else None

    def copy_plugin(self, backends):
        if backends is None:
            return None
        low = backends.lower()
        for name in COPY_PLUGINS[self.card]:
            if re.search(r"\b%s" % re.escape(name), low):
                return name
        return None

    def font_flags(self, ttf):
        if not ttf:
            return ["--font-file=" + GUEST_FONT]
        return ["--font-file=%s/%s" % (initramfs.TTF_DIR, TTF_NAME),
                "--font-size=%g" % self.ttf["size"], "--font-dpi=%d" % TTF_DPI]

    def consoled_flags(self, mode, ttf=False, restore=True):
        flags = ["--vt=1", "--fbdev=/dev/fb0"] + self.font_flags(ttf)
        if self.rotate:
            flags.append("--rotate=%d" % self.rotate)
        if self.caps["session_restore"]:
            # The snapshot of session restore is kept without systemd too, so
            # its cost shows here; the "auto -restore" row runs without it.
            flags.append("--session-restore=" + ("yes" if restore else "no"))
        if mode != "default":
            flags.append("--scroll-mode=" + mode)
        if self.args.fb_flush:
            flags.append("--fb-flush=" + self.args.fb_flush)
        if self.caps["no_calibrate"]:
            flags.append("--no-calibrate")
        flags.append("--stats" if self.caps["stats"] else "--verbose")
        return flags

    def cleanup(self):
        try:
            self.vm.run("pkill -x consoled; sleep 1; pkill -9 -x consoled; chvt 1", timeout=30)
        except Exception:  # noqa: BLE001 -- best effort after a failure
            pass

    def run_consoled(self, mode, phases, snapshots, ttf=False, restore=True, binary="consoled",
                     flags=(), kmsg=0):
        """One consoled run (flags added to consoled's; kmsg: the records of
        the kcat phase); returns (results by step, consoled log excerpt)."""
        vm = self.vm
        vm.check("rm -f %s %s %s %s.done" % (G_LOG, G_STATUS, G_RESULT, G_RESULT))
        session = "/bin/sh %s %s %s %d %d %s %s %d" % (
            G_SESSION, self.lines_file, phases, self.args.ticks, 1 if snapshots else 0,
            G_LOG, G_RESULT, kmsg)
        # The log is opened O_APPEND: session.sh appends its markers to it.
        vm.check("(CONSOLED_BACKEND_DIR=" + vmtest.GUEST_BACKEND_DIR + " %s %s --login -- %s </dev/null >>%s 2>&1; echo $? >%s)"
                 " </dev/null >/dev/null 2>&1 &"
                 % (binary, " ".join(self.consoled_flags(mode, ttf, restore) + list(flags)),
                    session, G_LOG, G_STATUS))
        lines = self.lines if "cat" in phases else 0  # kcat too
        ticks = self.args.ticks if "tick" in phases else 0
        limit = int(self.timeout_for(lines, ticks))
        # Wait inside the guest (test builtins and one sleep a second), so
        # the host's polling does not load the guest during the measurement.
        out = vm.check("i=0; while [ ! -e %s.done ] && [ ! -s %s ] && [ $i -lt %d ]; do"
                       " sleep 1; i=$((i + 1)); done; [ -e %s.done ] && echo finished;"
                       " cat %s 2>/dev/null; true"
                       % (G_RESULT, G_STATUS, limit, G_RESULT, G_STATUS), timeout=limit + 60)
        if "finished" not in out:
            tail = self.log_tail()
            status = out.strip()
            self.cleanup()
            if status:
                raise RunError("consoled exited with status %s before the session finished; "
                               "log:\n%s" % (status, tail))
            raise RunError("the session did not finish within %ds; log:\n%s" % (limit, tail))

        vm.check("echo @@final >>%s; kill $(pidof consoled)" % G_LOG)
        status = vm.check("i=0; while [ ! -s %s ] && [ $i -lt 100 ]; do sleep 0.2;"
                          " i=$((i + 1)); done; cat %s 2>/dev/null; true"
                          % (G_STATUS, G_STATUS), timeout=60).strip()
        if status != "0":
            tail = self.log_tail()
            self.cleanup()
            raise RunError("consoled %s after SIGTERM; log:\n%s"
                           % ("did not exit" if not status else "exited with status " + status,
                              tail))
        results = self.session_results()
        log = vm.check("grep -E 'stats:|^@@|Drew [0-9]+ frames' %s; true" % G_LOG, timeout=60)
        notes = vm.check("grep -iE 'warn|fall|ignor|quirk' %s | grep -v 'stats:' | head -n 5;"
                         " true" % G_LOG)
        return results, log, [n.strip() for n in notes.splitlines() if n.strip()]

    def log_tail(self):
        try:
            return self.vm.run("tail -n 20 %s" % G_LOG, timeout=20)[0]
        except Exception:  # noqa: BLE001 -- best effort
            return "(log unavailable)"

    def session_results(self):
        """session.sh's result file: its lines by their first word."""
        results = {}
        for line in self.vm.check("cat %s" % G_RESULT).splitlines():
            f = line.split()
            if f:
                results[f[0]] = f[1:]
        return results

    def phase_time(self, results, phase):
        f = results.get(phase)
        if not f or len(f) < 3:
            raise RunError("the session recorded no %s phase: %r" % (phase, results))
        if f[2] == "timeout":
            raise RunError("consoled did not answer the cursor position request after %s" % phase)
        return float(f[1]) - float(f[0]), f[2]

    def mode(self, mode, ttf=False, restore=True):
        """Measure one mode (with the PSF font, or the TrueType one; with the
        session restore snapshot or without); returns a dict of figures (see
        README.md)."""
        r = {"mode": mode if restore else mode + " -restore",
             "font": "ttf %dx%d" % self.ttf["cell"] if ttf else
             "psf %dx%d" % (self.font_w, self.font_h)}
        if self.caps["stats"]:
            results, log, notes = self.run_consoled(mode, "cat,tick", snapshots=True, ttf=ttf,
                                                    restore=restore)
            groups = parse_stats(log)
            for step in ("prefill", "cat", "tick", "final"):
                if not groups.get(step, {}).get("strategies"):
                    raise RunError("no stats lines after step %s in the log:\n%s" % (step, log))
            pre = groups["prefill"]["strategies"]
            cat = groups["cat"]["strategies"]
            tick = groups["tick"]["strategies"]
            r["cat_stats"] = totals(strategy_delta(pre, cat))
            r["cat_by_strategy"] = strategy_delta(pre, cat)
            r["tick_stats"] = totals(strategy_delta(cat, tick))
            r["tick_by_strategy"] = strategy_delta(cat, tick)
            r["run_stats"] = totals(groups["final"]["strategies"])
            r["auto_choice"] = groups["final"]["mode"] or groups["tick"]["mode"]
            if "cpu" in groups["prefill"] and "cpu" in groups["cat"]:
                r["cat_cpu"] = delta(groups["prefill"]["cpu"], groups["cat"]["cpu"])
            r["approximate"] = False
        else:
            # Before --stats: the --verbose exit line, one run per phase; the
            # prefill is included and rows scrolled are taken as lines written.
            r["approximate"] = True
            res_cat, log_cat, notes = self.run_consoled(mode, "cat", snapshots=False, ttf=ttf)
            res_tick, log_tick, notes_tick = self.run_consoled(mode, "tick", snapshots=False, ttf=ttf)
            notes += notes_tick
            r["cat_stats"] = self.drew_stats(log_cat, self.lines)
            r["tick_stats"] = self.drew_stats(log_tick, self.args.ticks)
            r["run_stats"] = {k: (None if v is None else v + r["tick_stats"][k])
                              for k, v in r["cat_stats"].items()}
            r["auto_choice"] = None
            results = dict(res_cat)
            results["tick"] = res_tick.get("tick")
        r["notes"] = notes
        size = results.get("size")
        if ttf:
            # One text row of the TrueType grid (the session's window size).
            if not size:
                raise RunError("the session recorded no window size")
            w, h = self.ttf["cell"]
            r["row_bytes"] = int(size[1]) * w * h * ((self.bpp + 7) // 8)
            r["grid"] = "%sx%s" % (size[1], size[0])
        elif size and [int(v) for v in size] != [self.rows, self.cols]:
            r["notes"].append("consoled's grid is %sx%s rows x cols, fbcon's %dx%d"
                              % (size[0], size[1], self.rows, self.cols))
        r["cat_s"], r["cat_reply"] = self.phase_time(results, "cat")
        r["tick_s"], r["tick_reply"] = self.phase_time(results, "tick")
        return r

    def peer_runs(self):
        """(label, backend) of each peer run on this card, in boot order:
        fbterm before kmscon, which leaves the card in its own mode (24 bpp
        on cirrus)."""
        runs = []
        for peer in self.args.peers.split(","):
            if peer == "fbterm":
                runs.append(("fbterm", None))
            elif peer == "kmscon":
                runs.append(("kmscon fbdev", "--no-drm"))
                if self.vm.run("test -e /dev/dri/card0")[1] == 0:
                    runs.append(("kmscon drm", "--drm"))
        return runs

    def peer(self, label, backend, trace=False):
        """One peer's `cat` of the same lines through the same session.sh,
        until it answers the cursor position request after them.  Returns a
        row of the table (mode = the peer, time, grid and a log line).
        With trace, under strace (the --trace-peers diagnosis: its time is
        not one to compare)."""
        vm = self.vm
        vm.check("rm -f %s %s %s.done %s" % (G_PEER_LOG, G_RESULT, G_RESULT, G_PEER_RC))
        # Give the terminal a second to size its pty before session.sh reads it.
        vm.check("echo 'sleep 1; exec /bin/sh %s %s cat 0 0 %s %s' >%s"
                 % (G_SESSION, G_LINES, G_PEER_LOG, G_RESULT, G_PEER_SESSION))
        session = "/bin/sh " + G_PEER_SESSION
        if label == "fbterm":
            # fbterm runs on the VT on its stdin, tty1, which must be its
            # controlling tty (-c) as it is in a login shell: a session leader
            # without one acquires the first tty it opens, its /dev/tty0 or
            # its session's pts, racing its child's TIOCSCTTY on that pts; the
            # child lost about half the time, fbterm then exited 0 at once
            # and never ran its session (seen without -c; never under strace,
            # which slows the parent down).
            cmd = ("FONTCONFIG_FILE=%s setsid -c %sfbterm -v -n 'DejaVu Sans Mono' -s 13"
                   " --font-width=%d --font-height=%d -- %s </dev/tty1 >%s 2>&1"
                   % (initramfs.FONTS_CONF, "strace -f -tt -o /tmp/peer.strace " if trace else "",
                      self.font_w, self.font_h, session, G_PEER_LOG))
            proc = "fbterm"
        else:
            cmd = ("%s --vt=1 %s --font-engine=unifont --verbose --login -- %s >%s 2>&1"
                   % (KMSCON_BIN, backend, session, G_PEER_LOG))
            proc = "kmscon"
        limit = int(self.timeout_for(self.args.lines)) + 60  # fontconfig's first scan
        # A peer that exits at once with status 0, no word and its session
        # never run (fbterm did so before setsid -c, above) is started
        # again, up to twice, 3 s later, and the row's notes say so.
        retried = None
        for attempt in (1, 2, 3):
            vm.check("rm -f %s %s" % (G_PEER_RC, G_RESULT))
            # its exit status, for a peer that gives up without a word
            vm.check("(sh -c '%s; echo $? >%s' &) </dev/null >/dev/null 2>&1"
                     % (cmd.replace("'", "'\\''"), G_PEER_RC))
            # Until the session is done, the peer is gone (given 10 s to
            # start: it is launched in the background) or the time is up.
            out = vm.check("i=0; while [ ! -e %s.done ] && [ ! -e %s ] &&"
                           " { [ $i -lt 10 ] || pidof %s >/dev/null; }"
                           " && [ $i -lt %d ]; do sleep 1; i=$((i + 1)); done;"
                           " [ -e %s.done ] && echo finished; echo \"after $i s\"; true"
                           % (G_RESULT, G_PEER_RC, proc, limit, G_RESULT), timeout=limit + 60)
            early = vm.run("grep -q '^size' %s 2>/dev/null || { [ -s %s ] && cat %s; }"
                           % (G_RESULT, G_PEER_RC, G_PEER_RC), timeout=30)[0].strip()
            if "finished" in out or attempt == 3 or label != "fbterm" or not early:
                break
            alive = vm.run("pidof %s; ps -o pid,ppid,pgid,sid,args 2>/dev/null | grep -E"
                           " 'fbterm|setsid' | grep -v grep" % proc, timeout=30)[0]
            print("# %s %s start %d: status %s, then: %s" % (self.card, label, attempt, early,
                                                              alive.strip()), flush=True)
            retried = ("%d start(s) exited with status %s %s, the session never run,"
                       " no output; started again" % (attempt, early,
                                                      out.strip().splitlines()[-1]))
            vm.run("sleep 3", timeout=30)
        # Did it draw? The card's picture right after the session (the peer
        # still runs): the share of pixels not in the commonest colour. A
        # peer that parses but shows nothing (kmscon "does not support
        # true-color" on some cards) has a time that is not comparable.
        ink = None
        if "finished" in out:
            try:
                img = vm.grab()
                ink = screen_ink(img)
                vm.save_png(img, "peer-%s.png" % label.replace(" ", "-"))
            except Exception as e:  # noqa: BLE001 -- reported, not fatal
                print("# %s: no picture of %s: %s" % (self.card, label, e), flush=True)
        log = vm.run("grep -iE 'error|fail|refus|activating display|render|font|bpp' %s |"
                     " grep -iv compose | tail -n 4" % G_PEER_LOG, timeout=30)[0]
        vm.run("pkill -x %s; sleep 1; pkill -9 -x %s; chvt 1" % (proc, proc), timeout=30)
        self.restore_fb_mode()
        if "finished" not in out:
            tail = vm.run("tail -n 15 %s; echo \"exit status: $(cat %s 2>/dev/null)\";"
                          " echo \"session: $(cat %s 2>/dev/null)\"; dmesg | tail -n 3;"
                          " ps -o pid,stat,args | grep -v ' \\[' | tail -n 12"
                          % (G_PEER_LOG, G_PEER_RC, G_RESULT), timeout=30)[0]
            if trace:
                tail += vm.run("grep -vE 'mmap|mprotect|brk|fstat|newfstatat|openat.*ENOENT|"
                               "close|read\\(|pread64|lseek|getdents|access' /tmp/peer.strace"
                               " | tail -n 60", timeout=60)[0]
            raise RunError("%s did not finish the session; its log:\n%s" % (label, tail))
        results = self.session_results()
        r = {"mode": label, "peer": True,
             "font": "unifont 8x16" if proc == "kmscon" else "dejavu %dx%d" % (self.font_w,
                                                                                self.font_h)}
        r["cat_s"], r["cat_reply"] = self.phase_time(results, "cat")
        size = results.get("size")
        r["grid"] = "%sx%s" % (size[1], size[0]) if size else None
        r["notes"] = [n.strip() for n in log.splitlines() if n.strip()]
        if retried:
            r["notes"].append(retried)
            r["retried"] = True
        if ink is not None:
            r["ink"] = ink
            if ink < INK_MIN:
                r["notes"].append(
                    "the screen after its cat showed no text (%.2f%% of pixels off the"
                    " commonest colour): it may not draw on this card" % (100 * ink))
        return r

    def pty_floor(self):
        """The pty floor row (README.md, The pty floor): session.sh's cat
        through a pty that ptyfloor only drains (the DSR answered, 1 ms of
        sleep after each read), on the card's grid."""
        vm = self.vm
        vm.check("rm -f %s %s.done %s" % (G_RESULT, G_RESULT, G_PEER_LOG))
        out = vm.check("%s %d %d %d %s.done -- /bin/sh %s %s cat 0 0 %s %s" % (
            G_PTYFLOOR, self.cols, self.rows, PTYFLOOR_SLEEP_US, G_RESULT, G_SESSION, G_LINES,
            G_PEER_LOG, G_RESULT), timeout=int(self.timeout_for(self.args.lines)))
        results = self.session_results()
        r = {"mode": "pty floor", "peer": True, "floor": True, "font": "-"}
        r["cat_s"], r["cat_reply"] = self.phase_time(results, "cat")
        r["notes"] = [l.strip() for l in out.splitlines() if l.startswith("ptyfloor:")]
        return r

    def restore_fb_mode(self):
        """Put fb0's depth back as the boot left it: kmscon sets its own (24
        bpp on cirrus) and leaves it so, which would change the runs after
        it (--repeat interleaves them)."""
        want = "%d %s" % (self.bpp, self.virtual_size)
        cmd = "cd /sys/class/graphics/fb0 && echo $(cat bits_per_pixel virtual_size)"
        if self.vm.run(cmd, timeout=30)[0].strip() == want:
            return
        self.vm.run("echo %d >/sys/class/graphics/fb0/bits_per_pixel" % self.bpp, timeout=30)
        got = self.vm.run(cmd, timeout=30)[0].strip()
        if got != want:
            raise RunError("fb0 is %s after the peer, and stays so (boot: %s)" % (got, want))

    def cat_only(self, binary="consoled"):
        """consoled auto's `cat` alone (no ticks, no counters dumps): a round
        of --repeat.  Returns the cat time."""
        results, _, _ = self.run_consoled("auto", "cat", snapshots=False, binary=binary)
        return self.phase_time(results, "cat")[0]

    def kmsg_flood(self, messages, rounds):
        """consoled auto's `cat` alone and with a concurrent burst of kernel
        messages (kmsgflood), in turn, `rounds` times, all with
        --kernel-messages=8: the records (<6>) are shown in the band, the
        serial console (the boot's loglevel=4) prints none.  Returns the
        figures."""
        flags = ["--kernel-messages=8"]
        plain, flood, writer_s = [], [], []
        for _ in range(rounds):
            results, _, _ = self.run_consoled("auto", "cat", snapshots=False, flags=flags)
            plain.append(self.phase_time(results, "cat")[0])
            results, _, _ = self.run_consoled("auto", "kcat", snapshots=False, flags=flags,
                                              kmsg=messages)
            flood.append(self.phase_time(results, "kcat")[0])
            writer = results.get("kmsgflood:")
            if not writer or len(writer) < 6 or writer[5] != "0":
                raise RunError("kmsgflood failed during the cat: %r" % (writer,))
            writer_s.append(int(writer[3]) / 1e6)
        return {"messages": messages, "plain": plain, "flood": flood, "writer": writer_s,
                "plain_s": median(plain), "flood_s": median(flood)}

    def drew_stats(self, log, rows):
        m = DREW_RE.search(log)
        if not m:
            raise RunError("no 'Drew N frames' line in the log (--verbose):\n%s" % log)
        return {"frames": int(m.group(1)), "cells": int(m.group(2)),
                "vram_bytes_written": int(m.group(3)), "vram_bytes_read": int(m.group(4)),
                "render_usec": int(m.group(5)) * 1000, "rows_scrolled": rows,
                "blits": None, "fills": None, "pans": None}


def derive(r, fbcon_s, row_bytes, lines, ticks):
    """Per-row figures and target checks of one mode's measurements.

    A scrolled row is a line written after the screen is full (the prefill
    sees to that): consoled's own rows_scrolled counts scroll operations, and
    a frame that jumps more than a screenful is a redraw that scrolls nothing,
    so it would make a meaningless divisor for `cat`.
    """
    cat, tick, run = r["cat_stats"], r["tick_stats"], r["run_stats"]
    cat_rows = lines
    tick_rows = ticks
    r["speedup"] = fbcon_s / r["cat_s"] if r["cat_s"] > 0 else None
    r["bytes_per_row"] = cat["vram_bytes_written"] / cat_rows
    r["row_ratio"] = r["bytes_per_row"] / row_bytes
    r["tick_bytes_per_row"] = tick["vram_bytes_written"] / tick_rows
    r["tick_row_ratio"] = r["tick_bytes_per_row"] / row_bytes
    r["tick_usec_per_frame"] = (tick["render_usec"] / tick["frames"]) if tick.get("frames") else None
    r["read_bytes"] = run.get("vram_bytes_read", 0)

    targets = []
    full = r["mode"]
    if r["mode"].startswith("auto") and r.get("auto_choice"):
        m = re.search(r"full-screen=(\S+)", r["auto_choice"])
        full = m.group(1) if m else "auto"
    if full in ("pan", "wrap"):
        ok = r["row_ratio"] <= PAN_ROW_FACTOR and r["tick_row_ratio"] <= PAN_ROW_FACTOR
        targets.append(("pan/wrap<=%.1f rows" % PAN_ROW_FACTOR, ok,
                        "cat %.2f rows, 1-row %.2f rows" % (r["row_ratio"], r["tick_row_ratio"])))
    targets.append(("no VRAM read", r["read_bytes"] == 0, "%d B" % r["read_bytes"]))
    if r["speedup"] is not None:
        targets.append((">=%gx fbcon" % FBCON_SPEEDUP, r["speedup"] >= FBCON_SPEEDUP,
                        "%.1fx" % r["speedup"]))
    r["targets"] = [{"target": t, "pass": ok, "value": v} for t, ok, v in targets]
    return r


# --- output -----------------------------------------------------------------

COLUMNS = [
    ("mode", "mode", "%s"),
    ("font", "font", "%s"),
    ("cat s", "cat_s", "%.3f"),
    ("vs fbcon", "speedup", "%.1fx"),
    ("/auto", "vs_auto", "%.2f"),
    ("frames", "frames", "%d"),
    ("rows", "rows", "%d"),
    ("B/row", "bytes_per_row", "%.0f"),
    ("x row", "row_ratio", "%.2f"),
    ("read B", "read_bytes", "%d"),
    ("blits", "blits", "%d"),
    ("pans", "pans", "%d"),
    ("1-row frames", "tick_frames", "%d"),
    ("1-row B/row", "tick_bytes_per_row", "%.0f"),
    ("1-row x row", "tick_row_ratio", "%.2f"),
    ("1-row us/frame", "tick_usec_per_frame", "%.0f"),
    ("targets", "targets", "%s"),
]


def cell(fmt, v):
    if v is None:
        return "-"
    if fmt == "%d" and isinstance(v, float):
        v = int(round(v))
    return fmt % v


def format_card(card):
    out = []
    if card.get("error") and not card.get("geometry"):
        return "== %s: FAILED before measuring: %s\n" % (card["card"], card["error"])
    g = card["geometry"]
    if g.get("row_bytes") is None:
        return "== %s: FAILED before measuring: %s\n" % (card["card"], card.get("error"))
    out.append("== %s: fb0 %s, %d bpp, %dx%d cells of %dx%d; one text row = %d bytes"
               % (card["card"], g["fb0"], g["bpp"], g["cols"], g["rows"],
                  g["font_w"], g["font_h"], g["row_bytes"]))
    if card.get("fbcon_lines_s") is not None:
        out.append("   fbcon: cat of %d lines to /dev/tty1 in %.3f s, %.3f s scaled to %d lines"
                   % (card["fbcon_lines"], card["fbcon_lines_s"], card["fbcon_s"],
                      card["lines"]))
    elif card.get("fbcon_s") is not None:
        out.append("   fbcon: cat of %d lines to /dev/tty1 in %.3f s"
                   % (card["lines"], card["fbcon_s"]))
    ttf = g.get("ttf")
    if ttf:
        grids = sorted({r["grid"] for r in card["modes"] if r.get("grid")})
        out.append("   ttf: %s %g pt at %d dpi (%s), cells of %dx%d%s"
                   % (TTF_NAME, ttf["size"], TTF_DPI, "mono" if g["bpp"] == 8 else "8-bit coverage",
                      ttf["cell"][0], ttf["cell"][1],
                      "; grid " + ", ".join(grids) if grids else ""))
    rows = []
    auto = [r for r in card["modes"] if r["mode"] == "auto" and r.get("font", "").startswith("psf")
            and "cat_s" in r]
    auto_s = auto[0]["cat_s"] if auto else None
    for r in card["modes"]:
        if "error" in r:
            rows.append([r["mode"], "FAILED: " + r["error"].splitlines()[0]])
            continue
        if "skipped" in r:
            rows.append([r["mode"], "skipped: " + r["skipped"]])
            continue
        vals = dict(r)
        if auto_s and r.get("cat_s"):
            vals["vs_auto"] = r["cat_s"] / auto_s
        if r.get("peer"):
            vals["targets"] = ""
            rows.append([cell(fmt, vals.get(key)) for _, key, fmt in COLUMNS])
            continue
        cat = r["cat_stats"]
        vals["frames"] = cat.get("frames")
        vals["rows"] = cat.get("rows_scrolled")
        vals["blits"] = cat.get("blits")
        vals["pans"] = cat.get("pans")
        vals["tick_frames"] = r["tick_stats"].get("frames")
        vals["targets"] = " ".join("%s:%s" % (short_target(t["target"]),
                                              "PASS" if t["pass"] else "MISS")
                                   for t in r["targets"])
        rows.append([cell(fmt, vals.get(key)) for _, key, fmt in COLUMNS])
    header = [c[0] for c in COLUMNS]
    full_rows = [r for r in rows if len(r) == len(header)]
    widths = [max(len(x) for x in col) for col in zip(header, *full_rows)] if full_rows \
        else [len(h) for h in header]
    out.append("   " + "  ".join(h.rjust(w) if i else h.ljust(w)
                                 for i, (h, w) in enumerate(zip(header, widths))))
    for row in rows:
        if len(row) == len(header):
            out.append("   " + "  ".join(x.rjust(w) if 0 < i < len(row) - 1 else x.ljust(w)
                                         for i, (x, w) in enumerate(zip(row, widths))))
        else:
            out.append("   %s  %s" % (row[0].ljust(widths[0]), row[1]))
    floor = [r for r in card["modes"] if r.get("floor") and r.get("cat_s")]
    if floor and auto_s:
        out.append("   pty floor: consoled auto's cat %.3f s / the pty's own %.3f s (ptyfloor: a"
                   " reader that only drains the master, answers DSR and sleeps %d us after each"
                   " read) = %.2fx" % (auto_s, floor[0]["cat_s"], PTYFLOOR_SLEEP_US,
                                       auto_s / floor[0]["cat_s"]))
    for r in card["modes"]:
        label = r["mode"] + (" ttf" if r.get("font", "").startswith("ttf") else "")
        if r.get("auto_choice") and r["mode"].startswith("auto"):
            out.append("   %s chose: %s" % (label, r["auto_choice"]))
        cpu = r.get("cat_cpu")
        if cpu and "user_usec" in cpu:
            out.append("   %s cat CPU: %.0f ms (user %.0f, sys %.0f): parsing %.0f, drawing %.0f"
                       " (%s frames), snapshots %.0f, mirror %.0f; the rest is the event loop,"
                       " reads and replies" % (
                           label, (cpu["user_usec"] + cpu["sys_usec"]) / 1000,
                           cpu["user_usec"] / 1000, cpu["sys_usec"] / 1000,
                           cpu.get("parse_usec", 0) / 1000,
                           r["cat_stats"].get("render_usec", 0) / 1000,
                           r["cat_stats"].get("frames"), cpu.get("snapshot_usec", 0) / 1000,
                           cpu.get("vcs_usec", 0) / 1000))
        if "tick_s" in r:
            out.append("   %s 1-row: %d lines in %.2f s (%.0f ms a line), %s frames"
                       % (label, card["ticks"], r["tick_s"], 1000 * r["tick_s"] / card["ticks"],
                          r["tick_stats"].get("frames")))
        if r.get("approximate"):
            out.append("   %s: approximate (no --stats: totals of the --verbose exit line, prefill"
                       " included, rows scrolled = lines written)" % label)
        if r.get("peer") and r.get("grid"):
            out.append("   %s: grid %s (its pty's window size)%s"
                       % (label, r["grid"], "; cat s: the median of %d rounds (the ranking)"
                          % r["median_of"] if r.get("median_of") else ""))
        for n in r.get("notes", []):
            out.append("   %s: log: %s" % (label, n))
        if r.get("peer") and "error" in r:
            out.extend("   %s: %s" % (label, line) for line in r["error"].splitlines()[1:])
    if card.get("footprint"):
        out.extend(footprint.format_section(card["footprint"]))
    out.extend(format_rounds(card))
    cost = snapshot_cost(card)
    if cost:
        out.append("   " + cost)
    kline = kmsg_line(card)
    if kline:
        out.append("   " + kline)
    for n in card.get("notes", []):
        out.append("   note: " + n)
    if card.get("error"):
        out.append("   FAILED: " + card["error"])
    return "\n".join(out) + "\n"


def snapshot_cost(card):
    """The session restore snapshot's cost: auto's cat with it and without."""
    by = {r["mode"]: r for r in card["modes"]
          if "cat_s" in r and not r.get("font", "").startswith("ttf")}
    on, off = by.get("auto"), by.get("auto -restore")
    if not on or not off or not off["cat_s"]:
        return None
    return ("session restore snapshot: auto cat %.3f s with it, %.3f s without: %+.1f%%"
            " (the issue's bound: +5%%; one run each, TCG noise included)"
            % (on["cat_s"], off["cat_s"], 100 * (on["cat_s"] / off["cat_s"] - 1)))


def short_target(t):
    if t.startswith("pan"):
        return "row"
    if t.startswith("no VRAM"):
        return "read"
    return "10x"


FOOTER = """\
cat s: guest time ($EPOCHREALTIME) from the start of `cat` until consoled answered a cursor
  position request sent after it (it answers after parsing everything before); its last
  frame is drawn at most one frame interval (16 ms) later.  fbcon: `cat >/dev/tty1` (drawn
  in the write path; bochs copies its shadow buffer to VRAM later, from a worker).
  Peers (fbterm, kmscon fbdev, kmscon drm) run the same session and end the same way:
  their reply to the request.
/auto: this row's cat s / consoled auto's (psf): above 1, consoled auto is faster.
frames, rows, B/row, x row, blits, pans: the cat phase (counters of --stats, SIGUSR1 dumps
  subtracted); rows = consoled's rows_scrolled; B/row = VRAM bytes written / lines written
  (each scrolls one text row); x row = B/row / one text row.
read B: VRAM bytes read over the whole run.  1-row: %d lines, one every ~0.03 s.
targets: row = pan/wrap write <= %.1f text rows per scrolled row (cat and 1-row); read = no
  VRAM reads;
  10x = cat at least %g times faster than fbcon (the target is for %d lines).
"""


# --- main -------------------------------------------------------------------

def bench_card(card, args, caps, lines_path, rot_lines_path, out_dir, fbcon_lines_path=None):
    result = {"card": card, "lines": args.lines, "ticks": args.ticks, "modes": [], "notes": [],
              "fbcon_lines": args.fbcon_lines}
    card_dir = os.path.join(out_dir, card)
    os.makedirs(card_dir, exist_ok=True)
    extra = {G_LINES: lines_path,
             G_ROT_LINES: rot_lines_path,
             G_FBCON_LINES: fbcon_lines_path or lines_path,
             G_SESSION: os.path.join(HERE, "session.sh"),
             G_FBCON: os.path.join(HERE, "fbcon.sh")}
    t0 = time.monotonic()
    # The ARM guest runs the armhf build and its tools; the host's own
    # programs (the peers, strace) cannot run there.
    foreign = card in initramfs.CARD_ARCH
    consoled = args.armhf_consoled if foreign else args.consoled
    try:
        if not os.access(consoled, os.X_OK):
            raise RunError("no consoled binary at %s (tests/cross/run armhf builds it)" % consoled)
        # The blitter plugins built next to consoled, where vmtest puts them.
        plugins = {vmtest.GUEST_BACKEND_DIR + "/" + n + ".so": p
                   for n, p in vmtest.find_plugins(consoled).items()}
        for peer in (p for p in args.peers.split(",") if p and not foreign):
            plugins.update({path: path for path in PEER_ELVES[peer]})
        if card in args.footprint.split(","):
            files, elves = footprint.guest_files(consoled)
            extra.update(files)
            plugins.update(elves)
        if args.compare:
            plugins[G_COMPARE] = os.path.abspath(args.compare)
        if args.trace_peers and os.path.exists("/usr/bin/strace") and not foreign:
            plugins["/usr/bin/strace"] = "/usr/bin/strace"
        if args.kmsg:
            plugins[G_KMSGFLOOD] = tool_path(consoled, "kmsgflood", "--kmsg", "--kmsg 0")
        plugins[G_PTYFLOOR] = tool_path(consoled, "ptyfloor")
        lat_files, lat_elves = latency.guest_files(args, consoled)
        extra.update(lat_files)
        plugins.update(lat_elves)
        qemu_card, append = CARD_BOOT.get(card, (card, ""))
        with vmlib.VM(qemu_card, consoled=os.path.abspath(consoled), initramfs_extra=extra,
                      extra_elves=plugins, append=append, out_dir=card_dir) as vm:
            print("# %s booted in %.1fs, fb0 %s" % (card, vm.boot_seconds, vm.fb_info), flush=True)
            b = CardBench(vm, card, args, caps, print)
            result["geometry"] = {"fb0": "%s, virtual %s" % (b.fb_name, b.virtual_size),
                                  "bpp": b.bpp, "font_w": b.font_w,
                                  "font_h": b.font_h}
            result["fbcon_s"] = b.fbcon(0, G_FBCON_LINES, args.fbcon_lines)
            if args.fbcon_lines != args.lines:
                # fbcon's time per line is steady (every line scrolls one
                # row in the write path): scaled to the runs' lines
                result["fbcon_lines_s"] = result["fbcon_s"]
                result["fbcon_s"] *= args.lines / args.fbcon_lines
            result["geometry"].update(cols=b.cols, rows=b.rows, row_bytes=b.row_bytes)
            print("# %s fbcon: %.3f s" % (card, result["fbcon_s"]), flush=True)

            modes = card_modes(card, args, caps, b, result["notes"])
            runs = [(m, False, True) for m in modes]
            if caps["session_restore"] and "auto" in modes:
                # The snapshot's cost: auto again without it, right after.
                runs.insert(modes.index("auto") + 1, ("auto", False, False))
            ttf = ttf_setup(b, args, caps, result["notes"])
            if ttf:
                result["geometry"]["ttf"] = ttf
                runs += [(m, True, True) for m in modes if m in args.ttf_modes.split(",")]
            for mode, with_ttf, restore in runs:
                t1 = time.monotonic()
                try:
                    r = b.mode(mode, with_ttf, restore)
                    derive(r, result["fbcon_s"], r.get("row_bytes", b.row_bytes), args.lines,
                           args.ticks)
                    print("# %s %s %s: cat %.3f s (%.1fx fbcon) in %.1fs" %
                          (card, mode, r["font"], r["cat_s"], r["speedup"] or 0,
                           time.monotonic() - t1), flush=True)
                except Exception as e:  # noqa: BLE001 -- the next mode still runs
                    if not isinstance(e, (RunError, vmlib.VMError)):
                        traceback.print_exc()
                    print("# %s %s%s: FAILED: %s" % (card, mode, " ttf" if with_ttf else "", e),
                          flush=True)
                    r = {"mode": mode if restore else mode + " -restore",
                         "font": "ttf" if with_ttf else "psf",
                         "error": "%s: %s" % (type(e).__name__, e)}
                    if vm.proc.poll() is not None:
                        result["modes"].append(r)
                        raise RunError("QEMU exited (status %s); see %s"
                                       % (vm.proc.returncode, vm.qemu_log)) from None
                    b.cleanup()
                result["modes"].append(r)
            try:
                r = b.pty_floor()
                print("# %s pty floor: cat %.3f s" % (card, r["cat_s"]), flush=True)
            except Exception as e:  # noqa: BLE001 -- a row, not a broken run
                print("# %s pty floor: FAILED: %s" % (card, e), flush=True)
                r = {"mode": "pty floor", "peer": True, "floor": True, "font": "-",
                     "error": str(e)}
            result["modes"].append(r)
            if args.kmsg:
                bench_kmsg(b, args, result)
            if card in ROTATE_CARDS:
                bench_rotations(b, args, result)
            peer_runs = [] if foreign else b.peer_runs()
            for label, backend in (peer_runs if args.repeat <= 1 else []):
                t1 = time.monotonic()
                try:
                    r = b.peer(label, backend)
                    r["speedup"] = result["fbcon_s"] / r["cat_s"] if r["cat_s"] > 0 else None
                    print("# %s %s: cat %.3f s in %.1fs" % (card, label, r["cat_s"],
                                                           time.monotonic() - t1), flush=True)
                except Exception as e:  # noqa: BLE001 -- a peer that cannot run is a row
                    if not isinstance(e, (RunError, vmlib.VMError)):
                        traceback.print_exc()
                    print("# %s %s: FAILED: %s" % (card, label, e), flush=True)
                    r = {"mode": label, "peer": True, "font": "-", "error": str(e)}
                    if vm.proc.poll() is not None:
                        result["modes"].append(r)
                        raise RunError("QEMU exited (status %s); see %s"
                                       % (vm.proc.returncode, vm.qemu_log)) from None
                result["modes"].append(r)
            if args.repeat > 1:
                bench_rounds(b, args, result, peer_runs)
            if card in args.footprint.split(","):
                if b.ttf is None and args.ftref and caps["font_size"]:
                    b.ttf = ttf_size(args.ftref, b.bpp == 8)
                result["footprint"] = footprint.Footprint(b, KMSCON_BIN, G_LINES, card_dir).run(
                    args.peers.split(","))
            if latency.terminals(args):
                latency.run(b, args, result, GUEST_FONT, KMSCON_BIN)
    except Exception as e:  # noqa: BLE001 -- a card that breaks must not stop the others
        traceback.print_exc()
        result["error"] = "%s: %s" % (type(e).__name__, e)
    result["seconds"] = time.monotonic() - t0
    return result


# A screen of text has several percent of its pixels in ink; one below
# this (a cursor, a frame left by another) shows none.
INK_MIN = 0.005


def screen_ink(img):
    """The share of img's pixels not in its commonest colour."""
    d = img.data
    counts = collections.Counter(d[i:i + 3] for i in range(0, len(d), 3))
    return 1 - counts.most_common(1)[0][1] / (img.width * img.height)


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def bench_rounds(b, args, result, peer_runs):
    """--repeat N: N rounds of consoled auto's `cat` and each peer's, one
    after the other in every round (the load of the moment weighs on all of
    them alike), and each terminal's median and spread.  The rows of the
    peers in the card's table are their medians."""
    compare = args.compare or args.compare_args
    names = ["consoled auto"] + (["consoled compare"] if compare else []) + \
        [label for label, _ in peer_runs]
    times = {n: [] for n in names}
    errors = {}
    shown = set()
    retries = {}
    loads = [os.getloadavg()[0]]
    for i in range(args.repeat):
        # Each round starts with the next terminal, so that none always
        # follows the same one (the one before may leave the kernel work:
        # fbcon redraws its console when a terminal leaves the VT, through
        # bochs' deferred I/O worker), and each run starts 2 s after the
        # one before it ended.
        for name in names[i % len(names):] + names[:i % len(names)]:
            b.vm.run("sleep 2", timeout=30)
            t1 = time.monotonic()
            try:
                if name == "consoled auto":
                    t = b.cat_only()
                    r = None
                elif name == "consoled compare":
                    t = b.cat_only(" ".join(
                        [G_COMPARE if args.compare else "consoled", args.compare_args]))
                    r = None
                else:
                    r = b.peer(*[p for p in peer_runs if p[0] == name][0])
                    t = r["cat_s"]
                times[name].append(t)
                if r and r.get("retried"):
                    retries[name] = retries.get(name, 0) + 1
                if r and name not in shown:
                    shown.add(name)
                    result["modes"].append(r)  # its grid and log lines
                print("# %s round %d %s: cat %.3f s in %.1fs, host load %.1f"
                      % (b.card, i + 1, name, t, time.monotonic() - t1, os.getloadavg()[0]),
                      flush=True)
            except Exception as e:  # noqa: BLE001 -- a terminal that fails is reported
                if not isinstance(e, (RunError, vmlib.VMError)):
                    traceback.print_exc()
                print("# %s round %d %s: FAILED: %s" % (b.card, i + 1, name, e), flush=True)
                errors.setdefault(name, str(e))
                if b.vm.proc.poll() is not None:
                    raise RunError("QEMU exited (status %s); see %s"
                                   % (b.vm.proc.returncode, b.vm.qemu_log)) from None
                if name.startswith("consoled"):
                    b.cleanup()
                elif args.trace_peers:
                    # once more under strace, for the cause (its time is not kept)
                    try:
                        r = b.peer(*[p for p in peer_runs if p[0] == name][0], trace=True)
                        print("# %s round %d %s under strace: finished (%.3f s)"
                              % (b.card, i + 1, name, r["cat_s"]), flush=True)
                    except Exception as e2:  # noqa: BLE001 -- diagnosis only
                        print("# %s round %d %s under strace: FAILED: %s"
                              % (b.card, i + 1, name, e2), flush=True)
        loads.append(os.getloadavg()[0])
    rank = []
    for name in names:
        t = times[name]
        row = {"name": name, "runs": len(t), "times": t}
        if t:
            row.update(median=median(t), min=min(t), max=max(t))
        if name in errors:
            row["error"] = errors[name]
        if name in retries:
            row["retried"] = retries[name]
        rank.append(row)
    # the peers' table rows: their median (error rows when no run finished)
    for r in result["modes"]:
        if r.get("peer") and not r.get("floor"):
            row = [x for x in rank if x["name"] == r["mode"]][0]
            if row.get("median") is not None:
                r["cat_s"] = row["median"]
                r["speedup"] = result["fbcon_s"] / r["cat_s"] if r["cat_s"] > 0 else None
                r["median_of"] = row["runs"]
    for name in names[1:]:
        if any(r.get("mode") == name for r in result["modes"]):
            continue
        row = [x for x in rank if x["name"] == name][0]
        if row.get("median") is not None:
            # consoled compare: no peer run result, its median alone
            result["modes"].append({"mode": name, "peer": True, "font": "-",
                                    "cat_s": row["median"], "median_of": row["runs"],
                                    "speedup": result["fbcon_s"] / row["median"]})
        else:
            result["modes"].append({"mode": name, "peer": True, "font": "-",
                                    "error": errors.get(name, "no run")})
    result["rounds"] = {"repeat": args.repeat, "rank": rank, "host_load": loads,
                        "compare": " ".join([args.compare or "the same consoled",
                                             args.compare_args]).strip() if compare else None}


def format_rounds(card):
    """The --repeat table: median, spread and consoled's ratio to each."""
    rounds = card.get("rounds")
    if not rounds:
        return []
    rank = rounds["rank"]
    loads = rounds["host_load"]
    out = ["   ranking, %d rounds (each terminal in turn, each round starting with the next),"
           " host load (1 min)"
           " %.1f-%.1f on %d cores:" % (rounds["repeat"], min(loads), max(loads),
                                         os.cpu_count() or 0),
           "   %-14s %4s %8s %8s %8s %7s %13s" % ("terminal", "runs", "median", "min", "max",
                                                  "spread", "consoled/it")]
    ref = rank[0].get("median")
    for row in rank:
        if row.get("median") is None:
            out.append("   %-14s %4d  FAILED: %s" % (row["name"], 0,
                                                     row.get("error", "").splitlines()[0]))
            continue
        ratio = "%.2f" % (ref / row["median"]) if ref and row["name"] != rank[0]["name"] else "-"
        out.append("   %-14s %4d %8.3f %8.3f %8.3f %6.0f%% %13s"
                   % (row["name"], row["runs"], row["median"], row["min"], row["max"],
                      100 * (row["max"] - row["min"]) / row["median"], ratio))
        if row.get("retried"):
            out.append("   %-14s      (started again in %d of %d rounds: a start exited at"
                       " once, see the notes)" % ("", row["retried"], rounds["repeat"]))
        if row.get("error"):
            out.append("   %-14s      (%d of %d rounds failed: %s)"
                       % ("", rounds["repeat"] - row["runs"], rounds["repeat"],
                          row["error"].splitlines()[0]))
    out.append("   (seconds of `cat` to the cursor position reply; spread = (max - min) / median;"
               " consoled/it below 1: consoled is faster)")
    if rounds.get("compare"):
        out.append("   consoled compare: %s" % rounds["compare"])
    return out


def bench_kmsg(b, args, result):
    """The kmsg row: auto's cat alone and beside a burst of --kmsg kernel
    messages."""
    t1 = time.monotonic()
    try:
        result["kmsg"] = b.kmsg_flood(args.kmsg, args.kmsg_rounds)
        k = result["kmsg"]
        print("# %s kmsg: cat %.3f s alone, %.3f s with %d kernel messages in %.1fs"
              % (b.card, k["plain_s"], k["flood_s"], args.kmsg, time.monotonic() - t1),
              flush=True)
    except Exception as e:  # noqa: BLE001 -- the runs after it still run
        if not isinstance(e, (RunError, vmlib.VMError)):
            traceback.print_exc()
        print("# %s kmsg: FAILED: %s" % (b.card, e), flush=True)
        result["kmsg"] = {"error": "%s: %s" % (type(e).__name__, e)}
        b.cleanup()


def kmsg_line(card):
    """The kmsg row's line under the card's table."""
    k = card.get("kmsg")
    if not k:
        return None
    if "error" in k:
        return "kmsg flood: FAILED: " + k["error"].splitlines()[0]
    rounds = len(k["plain"])
    return ("kmsg flood: auto cat %.3f s alone, %.3f s beside a burst of %d kernel messages"
            " (kmsgflood wrote them in %s s): %+.1f%%, %+.1f%% less the writer's time on"
            " the guest's one CPU (target: within 10%%; %s, --kernel-messages=8, TCG noise"
            " included)"
            % (k["plain_s"], k["flood_s"], k["messages"],
               ", ".join("%.3f" % t for t in k["writer"]),
               100 * (k["flood_s"] / k["plain_s"] - 1),
               100 * ((k["flood_s"] - median(k["writer"])) / k["plain_s"] - 1),
               "one run each" if rounds == 1 else "medians of %d rounds, alone %s, flooded %s"
               % (rounds, ", ".join("%.3f" % t for t in k["plain"]),
                  ", ".join("%.3f" % t for t in k["flood"]))))


def bench_rotations(b, args, result):
    """A row per rotation: fbcon turned the same way, then consoled --rotate=N
    in auto, compared with that fbcon run."""
    grid = (b.rows, b.cols)
    b.lines_file, b.lines = G_ROT_LINES, args.rotate_lines
    for rot in (int(v) for v in args.rotations.split(",") if v):
        t1 = time.monotonic()
        label = "auto rot%d" % (rot * 90)
        try:
            fbcon_s = b.fbcon(rot)
            print("# %s fbcon turned %d degrees: %.3f s" % (b.card, rot * 90, fbcon_s), flush=True)
            b.rotate = rot
            r = b.mode("auto")
            r["mode"] = label
            r["fbcon_s"] = fbcon_s
            r["notes"].append("%d lines; fbcon turned %d degrees: cat in %.3f s, grid %dx%d"
                              % (args.rotate_lines, rot * 90, fbcon_s, b.rows, b.cols))
            derive(r, fbcon_s, b.row_bytes, args.rotate_lines, args.ticks)
            print("# %s %s: cat %.3f s (%.1fx fbcon turned) in %.1fs"
                  % (b.card, label, r["cat_s"], r["speedup"] or 0, time.monotonic() - t1),
                  flush=True)
        except Exception as e:  # noqa: BLE001 -- the next rotation still runs
            if not isinstance(e, (RunError, vmlib.VMError)):
                traceback.print_exc()
            print("# %s %s: FAILED: %s" % (b.card, label, e), flush=True)
            r = {"mode": label, "font": "psf", "error": "%s: %s" % (type(e).__name__, e)}
            b.cleanup()
        finally:
            b.rotate = 0
            b.vm.run("echo 0 > /sys/class/graphics/fbcon/rotate_all")
        result["modes"].append(r)
    b.set_grid(*grid)
    b.lines_file, b.lines = G_LINES, args.lines


_ttf_sizes = {}


def ttf_size(ftref, mono):
    """The TTF_SIZES size whose cell is nearest the PSF font's (8x16), by
    ftref's metrics: the least |dw| + |dh|, then the bigger cell (it must not
    flatter the TrueType rows), then whole points, then the smaller size.
    Returns {"size": points, "cell": (w, h)}."""
    if mono not in _ttf_sizes:
        font = screen.load_font(HOST_FONT)
        best = None
        for size in TTF_SIZES:
            out = subprocess.run([ftref, "--font=" + initramfs.TTF_FONTS[TTF_NAME],
                                  "--size=%g" % size, "--dpi=%d" % TTF_DPI, "--metrics"]
                                 + (["--mono"] if mono else []),
                                 capture_output=True, text=True, check=True).stdout
            w, h = (int(v) for v in re.match(r"cell (\d+) (\d+)", out).groups())
            key = (abs(w - font.width) + abs(h - font.height), -w * h, size != int(size), size)
            if best is None or key < best[0]:
                best = (key, {"size": size, "cell": (w, h)})
        _ttf_sizes[mono] = best[1]
    return _ttf_sizes[mono]


def ttf_setup(b, args, caps, notes):
    """The TrueType font's size and cell for this card, or None (with a note)."""
    if not args.ttf_modes:
        return None
    if not caps["font_size"]:
        notes.append("ttf skipped: this consoled has no --font-size")
        return None
    if not args.ftref:
        notes.append("ttf skipped: no ftref (build tests/vm/ftref, or pass --ftref)")
        return None
    b.ttf = ttf_size(args.ftref, b.bpp == 8)
    return b.ttf


def card_modes(card, args, caps, b, notes):
    """The modes to measure on this card, in table order, with notes on the rest."""
    if not caps["scroll_mode"]:
        notes.append("this consoled has no --scroll-mode: measured its default only")
        return ["default"]
    supported = list(CARD_MODES[card])
    backends = b.list_backends()
    plugin = b.copy_plugin(backends)
    if plugin:
        supported.insert(0, "copy")
    elif not caps["list_backends"]:
        notes.append("copy skipped: this consoled has no --list-backends")
    else:
        notes.append("copy skipped: no blitter plugin for %s in --list-backends" % card)
    wanted = ["auto"] + supported
    if args.modes:
        asked = [m for m in args.modes.split(",") if m]
        for m in asked:
            if m not in wanted and m in ALL_MODES:
                notes.append("%s skipped: not supported on %s" % (m, card))
        wanted = [m for m in wanted if m in asked]
    out = []
    for m in wanted:
        if m not in caps["modes"]:
            notes.append("%s skipped: this consoled's --scroll-mode does not list it" % m)
            continue
        out.append(m)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=TARGET_LINES, help="lines to cat (default 20000)")
    ap.add_argument("--ticks", type=int, default=None,
                    help="lines of the one-row-per-frame test (default min(200, max(50, lines/10)))")
    ap.add_argument("--cards", default=",".join(CARDS),
                    help="comma-separated (default: cirrus,ati,rv100,bochs,vfb; also virtio, qxl,"
                         " bochs-overalloc, vesa, efi)")
    ap.add_argument("--modes", default="",
                    help="comma-separated subset of auto,pan,wrap,copy,redraw,shadow "
                         "(default: each card's supported modes plus auto)")
    ap.add_argument("--out", default="bench-out", help="directory for results and logs")
    ap.add_argument("--ttf-modes", default="auto",
                    help="modes also measured with the TrueType font (default auto; '' for none)")
    ap.add_argument("--rotations", default="1,2,3",
                    help="rotations (fbcon's numbers) that get an auto row on %s, each against"
                         " fbcon turned the same way (default 1,2,3; '' for none)"
                         % ", ".join(ROTATE_CARDS))
    ap.add_argument("--rotate-lines", type=int, default=None,
                    help="lines of the rotation rows (default min(lines, 2000): fbcon turned"
                         " takes up to ~0.7 s a line under TCG)")
    ap.add_argument("--fb-flush", default="",
                    help="consoled's --fb-flush in every run (map, write; default: none given)")
    ap.add_argument("--peers", default=",".join(PEERS),
                    help="other terminals measured in each boot: kmscon,fbterm (default both;"
                         " '' for none)")
    footprint.add_args(ap, FOOTPRINT_CARDS)
    ap.add_argument("--repeat", type=int, default=1,
                    help="rounds of consoled auto's cat and each peer's, interleaved; the table"
                         " gives each one's median and spread (default 1: one run each)")
    ap.add_argument("--fbcon-lines", type=int, default=None,
                    help="lines of fbcon's run, its time scaled to --lines (default: --lines)")
    ap.add_argument("--compare", default=None,
                    help="another consoled binary (e.g. built before a change) that gets its"
                         " own row, 'consoled compare', in every --repeat round")
    ap.add_argument("--compare-args", default="",
                    help="options added to the 'consoled compare' runs (e.g. '--vcs=no');"
                         " without --compare that row runs the same consoled with them")
    ap.add_argument("--trace-peers", action="store_true",
                    help="a peer run that fails in a --repeat round runs once more under the"
                         " host's strace, whose trace tail is printed (diagnosis)")
    ap.add_argument("--kmsg", type=int, default=None,
                    help="kernel messages of the kmsg row, written to /dev/kmsg in a burst"
                         " during auto's cat (default: --lines; 0 for no row)")
    ap.add_argument("--kmsg-rounds", type=int, default=1,
                    help="rounds of the kmsg row, each a cat alone and one flooded (default 1)")
    latency.add_args(ap)
    resolutions.add_args(ap)
    ap.add_argument("--consoled", default="build/daemon/consoled")
    ap.add_argument("--armhf-consoled", default="build-tests/cross-armhf/daemon/consoled",
                    help="the armhf build for the ARM guest, card vexpress (tests/cross/run armhf)")
    ap.add_argument("--ftref", default=None,
                    help="the host's FreeType reference renderer (default: next to consoled)")
    args = ap.parse_args()
    args.ftref = args.ftref or fonttest.find_ftref(args.consoled)
    # meson's timeout sends SIGTERM: unwind, so every VM context kills its QEMU.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.ticks is None:
        args.ticks = min(200, max(50, args.lines // 10))
    if args.rotate_lines is None:
        args.rotate_lines = min(args.lines, 2000)
    if args.fbcon_lines is None:
        args.fbcon_lines = args.lines
    if args.kmsg is None:
        args.kmsg = args.lines
    cards = [c for c in args.cards.split(",") if c]
    for c in cards:
        if c not in CARD_MODES:
            ap.error("unknown card %r (one of %s)" % (c, ", ".join(CARDS + MORE_CARDS)))
    for v in (v for v in args.rotations.split(",") if v):
        if v not in ("1", "2", "3"):
            ap.error("unknown rotation %r (1, 2 or 3)" % v)
    for p in (p for p in args.peers.split(",") if p):
        if p not in PEERS:
            ap.error("unknown peer %r (one of %s)" % (p, ", ".join(PEERS)))
        missing = [f for f in PEER_ELVES[p] if not os.path.exists(f)]
        if missing:
            ap.error("peer %s: %s missing (apt-get install %s, or --peers '')"
                     % (p, ", ".join(missing), p))
    for m in (m for m in args.modes.split(",") if m):
        if m not in ALL_MODES:
            ap.error("unknown mode %r (one of %s)" % (m, ", ".join(ALL_MODES)))
    if not os.access(args.consoled, os.X_OK):
        ap.error("no consoled binary at %s (build first, or pass --consoled)" % args.consoled)

    out_dir = os.path.abspath(args.out)
    os.makedirs(out_dir, exist_ok=True)
    caps = probe_consoled(args.consoled)
    paths = []
    for n in (args.lines, args.rotate_lines, args.fbcon_lines):
        paths.append(os.path.join(out_dir, "lines-%d.txt" % n))
        with open(paths[-1], "wb") as f:
            subprocess.run([sys.executable, os.path.join(HERE, "gen-lines.py"), "--lines",
                            str(n)], stdout=f, check=True)
    lines_path, rot_lines_path, fbcon_lines_path = paths

    head = ("consoled scrolling benchmark: %d lines, %d one-row ticks, font %s (and %s in %s),"
            " consoled %s\n"
            "consoled offers: %s\n"
            % (args.lines, args.ticks, FONT_NAME, TTF_NAME, args.ttf_modes or "no mode",
               os.path.abspath(args.consoled),
               ", ".join(sorted(k for k, v in caps.items() if v is True))
               + ("; modes " + ",".join(caps["modes"]) if caps["modes"] else "")))
    if args.fb_flush:
        head += "every consoled run with --fb-flush=%s\n" % args.fb_flush
    print(head, flush=True)
    results = []
    text = head + "\n"
    for card in cards:
        res = bench_card(card, args, caps, lines_path, rot_lines_path, out_dir, fbcon_lines_path)
        results.append(res)
        block = format_card(res) + latency.format_card(res)
        print(block, flush=True)
        text += block + "\n"
    res = None
    if resolutions.modes(args):
        res = resolutions.run(sys.modules[__name__], args, caps, lines_path, out_dir)
        block = resolutions.format_section(res)
        print(block, flush=True)
        text += block + "\n"
    footer = FOOTER % (args.ticks, PAN_ROW_FACTOR, FBCON_SPEEDUP, TARGET_LINES)
    if args.lines != TARGET_LINES:
        footer += "This run used %d lines: the speed figures are not comparable to the target.\n" \
            % args.lines
    broken = [r["card"] for r in results if r.get("error")] + \
        ["%s/%s" % (r["card"], m["mode"]) for r in results for m in r["modes"]
         if "error" in m and not m.get("peer")]
    broken += ["%s/kmsg" % r["card"] for r in results if "error" in r.get("kmsg", {})]
    broken += latency.broken(results)
    broken += resolutions.broken(res)
    # A peer that cannot run on a card is a row with its log, not a broken run.
    peers_failed = ["%s/%s" % (r["card"], m["mode"]) for r in results for m in r["modes"]
                    if "error" in m and m.get("peer")]
    if peers_failed:
        footer += "peers that did not finish: %s\n" % ", ".join(peers_failed)
    footer += ("runs: all completed\n" if not broken else
               "runs: FAILED: %s\n" % ", ".join(broken))
    print(footer, flush=True)
    text += footer
    with open(os.path.join(out_dir, "bench-results.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(out_dir, "bench-results.json"), "w") as f:
        json.dump({"lines": args.lines, "ticks": args.ticks, "font": FONT_NAME,
                   "consoled": os.path.abspath(args.consoled), "capabilities": caps,
                   "cards": results, "resolutions": res}, f, indent=1, sort_keys=True)
    print("results: %s" % os.path.join(out_dir, "bench-results.txt"))
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
