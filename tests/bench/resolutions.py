"""The benchmark's screen size section (README.md, Cost as the screen
grows): bochs booted at each mode of --resolutions, one boot per mode, with
fbcon's `cat`, consoled auto's (its render time per frame from --stats),
kmscon's (fbdev and DRM, when --peers names it) and the idle echo of fbcon
and consoled; the table gives consoled's render time per frame over the
pixels of the screen.

bench.py calls add_args() and run() and appends format_section() to its
results; the figures go to the "resolutions" entry of bench-results.json.
"""

import argparse
import os
import re
import subprocess
import sys
import time
import traceback

import latency  # this directory
import vmlib  # tests/vm, on bench.py's path

# QEMU's standard VGA (bochs-drm) has 16 MiB of video memory by default:
# 3840x2160x32 needs 31.6 MiB.
VGAMEM_MB = 64
# The guest's RAM: the fbdev emulation's shadow buffer and consoled's RAM
# copy of the screen (deferred I/O) are each a screen, 31.6 MiB at 4K, and
# kmscon keeps its own.
MEMORY_MB = 1024
# The connector of bochs-drm; `video=` names it so that DRM's fbdev
# emulation (and so fbcon and fb0) starts at that mode.
CONNECTOR = "Virtual-1"
# The idle echo's keys and Ctrl+C rounds per terminal (the latency section's
# run, shortened: the section is about the echo, not the flood) and the
# window of consoled's wake-up count.
KEYS = 100
INT_ROUNDS = 2
IDLE_SECONDS = 10


def add_args(ap):
    ap.add_argument("--resolutions", default="",
                    help="modes of the bochs card (WxH,...; e.g. 1280x800,1920x1080,3840x2160),"
                         " each booted with %d MiB of video memory and video=%s:WxH: fbcon,"
                         " consoled auto and kmscon's cat, consoled's render time per frame and"
                         " pixel, the idle echo of fbcon and consoled (default '': none)"
                         % (VGAMEM_MB, CONNECTOR))
    ap.add_argument("--res-fbcon-lines", type=int, default=100,
                    help="lines of fbcon's cat in the --resolutions boots, its time scaled to"
                         " --lines (default 100)")


def modes(args):
    out = []
    for m in (m for m in args.resolutions.split(",") if m):
        f = re.fullmatch(r"(\d+)x(\d+)", m)
        if not f:
            raise SystemExit("bench: --resolutions: %r is not WxH" % m)
        out.append((int(f.group(1)), int(f.group(2))))
    return out


def run(bench, args, caps, lines_path, out_dir):
    """One boot per mode of --resolutions; returns the section's results."""
    fbcon_lines_path = os.path.join(out_dir, "lines-%d.txt" % args.res_fbcon_lines)
    with open(fbcon_lines_path, "wb") as f:
        subprocess.run([sys.executable, os.path.join(bench.HERE, "gen-lines.py"), "--lines",
                        str(args.res_fbcon_lines)], stdout=f, check=True)
    rows = []
    for w, h in modes(args):
        rows.append(bench_mode(bench, args, caps, w, h, lines_path, fbcon_lines_path, out_dir))
    return {"lines": args.lines, "ticks": args.ticks, "fbcon_lines": args.res_fbcon_lines,
            "rows": rows}


def bench_mode(bench, args, caps, w, h, lines_path, fbcon_lines_path, out_dir):
    name = "bochs-%dx%d" % (w, h)
    lines = args.lines
    r = {"mode": "%dx%d" % (w, h), "pixels": w * h, "load": [os.getloadavg()[0]]}
    card_dir = os.path.join(out_dir, name)
    os.makedirs(card_dir, exist_ok=True)
    extra = {bench.G_LINES: lines_path, bench.G_FBCON_LINES: fbcon_lines_path,
             bench.G_SESSION: os.path.join(bench.HERE, "session.sh"),
             bench.G_FBCON: os.path.join(bench.HERE, "fbcon.sh")}
    elves = {}
    kmscon = "kmscon" in args.peers.split(",")
    if kmscon:
        elves.update({p: p for p in bench.PEER_ELVES["kmscon"]})
    # the idle echo: the latency section's files, for fbcon and consoled
    lat_args = argparse.Namespace(**vars(args))
    lat_args.latency, lat_args.latency_keys, lat_args.int_rounds = "fbcon,consoled", KEYS, \
        INT_ROUNDS
    lat_files, lat_elves = latency.guest_files(lat_args, args.consoled)
    extra.update(lat_files)
    elves.update(lat_elves)
    t0 = time.monotonic()
    try:
        with vmlib.VM("bochs", consoled=os.path.abspath(args.consoled), initramfs_extra=extra,
                      extra_elves=elves, append="video=%s:%dx%d" % (CONNECTOR, w, h),
                      memory=MEMORY_MB, qemu_args=["-global", "VGA.vgamem_mb=%d" % VGAMEM_MB],
                      out_dir=card_dir) as vm:
            print("# %s booted in %.1fs, fb0 %s" % (name, vm.boot_seconds, vm.fb_info),
                  flush=True)
            b = bench.CardBench(vm, name, args, caps, print)
            if b.virtual_size != "%d,%d" % (w, h):
                raise bench.RunError("fb0 is %s, not %dx%d: the mode was not set"
                                     % (b.virtual_size, w, h))
            r["bpp"] = b.bpp
            fbcon_s = b.fbcon(0, bench.G_FBCON_LINES, args.res_fbcon_lines)
            r["fbcon_lines_s"] = fbcon_s
            r["fbcon_s"] = fbcon_s * lines / args.res_fbcon_lines
            r["grid"] = "%dx%d" % (b.cols, b.rows)
            print("# %s fbcon: %.3f s for %d lines" % (name, fbcon_s, args.res_fbcon_lines),
                  flush=True)
            step(r, "consoled", lambda: consoled_run(bench, b, r["fbcon_s"], lines, args), name)
            if kmscon:
                for label, backend in (("kmscon fbdev", "--no-drm"), ("kmscon drm", "--drm")):
                    step(r, label, lambda: b.peer(label, backend), name)
            saved = latency.IDLE_SECONDS
            latency.IDLE_SECONDS = IDLE_SECONDS  # a shorter window than the latency section's
            try:
                for term in ("fbcon", "consoled"):
                    step(r, "echo " + term,
                         lambda: latency.run_terminal(b, lat_args, term, bench.GUEST_FONT,
                                                      bench.KMSCON_BIN), name)
            finally:
                latency.IDLE_SECONDS = saved
    except Exception as e:  # noqa: BLE001 -- the next mode still runs
        if not isinstance(e, (bench.RunError, vmlib.VMError)):
            traceback.print_exc()
        print("# %s: FAILED: %s" % (name, e), flush=True)
        r["error"] = "%s: %s" % (type(e).__name__, e)
    r["load"].append(os.getloadavg()[0])
    r["seconds"] = time.monotonic() - t0
    return r


def step(r, key, fn, name):
    """One run of the boot; a failure is recorded and the next one runs."""
    t1 = time.monotonic()
    try:
        r[key] = fn()
        print("# %s %s done in %.1fs" % (name, key, time.monotonic() - t1), flush=True)
    except Exception as e:  # noqa: BLE001 -- recorded in the row
        if not isinstance(e, (RuntimeError, vmlib.VMError)):
            traceback.print_exc()
        print("# %s %s: FAILED: %s" % (name, key, e), flush=True)
        r[key] = {"error": str(e)}


def consoled_run(bench, b, fbcon_s, lines, args):
    """consoled auto's cat and one-row ticks with --stats: its cat time and
    render time per frame in both phases."""
    try:
        m = b.mode("auto")
    except Exception:
        b.cleanup()
        raise
    bench.derive(m, fbcon_s, b.row_bytes, lines, args.ticks)
    cat = m["cat_stats"]
    out = {"cat_s": m["cat_s"], "frames": cat.get("frames"), "render_usec": cat.get("render_usec"),
           "tick_frames": m["tick_stats"].get("frames"), "tick_s": m.get("tick_s"),
           "tick_usec_per_frame": m.get("tick_usec_per_frame"), "choice": m.get("auto_choice"),
           "cat_cpu": m.get("cat_cpu")}
    if cat.get("frames"):
        out["cat_usec_per_frame"] = cat["render_usec"] / cat["frames"]
    return out


def broken(section):
    """The section's broken runs (a boot, consoled, fbcon's echo), as bench.py
    reports them; kmscon's are rows only."""
    out = []
    for r in (section or {}).get("rows", []):
        if "error" in r:
            out.append("bochs-%s" % r["mode"])
        for key in ("consoled", "echo fbcon", "echo consoled"):
            if "error" in r.get(key, {}):
                out.append("bochs-%s/%s" % (r["mode"], key))
    return out


def args_ticks(section):
    return section.get("ticks") or 1


def fmt(v, f):
    return "-" if v is None else f % v


def format_section(section):
    if not section or not section.get("rows"):
        return ""
    out = ["== cost as the screen grows: bochs (bochs-drm, %d MiB of video memory, video=%s:WxH),"
           " %d lines (fbcon: %d, scaled)" % (VGAMEM_MB, CONNECTOR, section["lines"],
                                              section["fbcon_lines"]),
           "   %-9s %6s %8s %8s %9s %9s %6s %6s %8s %6s %6s %8s %6s %6s %11s %11s"
           % ("mode", "Mpx", "fbcon s", "cons s", "kms fb s", "kms drm", "frames", "fps",
              "us/frame", "ns/px", "1-row", "us/frame", "ns/px", "ms/ln", "echo fbcon",
              "echo cons")]
    for r in section["rows"]:
        if "error" in r:
            out.append("   %-9s FAILED: %s" % (r["mode"], r["error"].splitlines()[0]))
            continue
        c = r.get("consoled", {})
        px = r["pixels"]

        def cat(key):
            v = r.get(key, {}).get("cat_s")
            if v is None or not key.startswith("kmscon"):
                return fmt(v, "%.3f")
            # kmscon's DRM backend takes the connector's preferred mode, not
            # video=: its log's "activating display ... to WxH" says which
            shown = any(re.search(r"activating display .* to %s\b" % r["mode"], n)
                        for n in r[key].get("notes", []))
            return "%.3f%s" % (v, "" if shown else "*")

        def echo(key):
            e = r.get(key, {}).get("idle")
            return "%.1f/%.1f" % (e["median_ms"], e["p99_ms"]) if e else "-"
        upf, tick = c.get("cat_usec_per_frame"), c.get("tick_usec_per_frame")
        fps = c["frames"] / c["cat_s"] if c.get("frames") and c.get("cat_s") else None
        ticks = c.get("tick_s") and 1000 * c["tick_s"] / args_ticks(section)
        out.append("   %-9s %6.2f %8s %8s %9s %9s %6s %6s %8s %6s %6s %8s %6s %6s %11s %11s"
                   % (r["mode"], px / 1e6, fmt(r.get("fbcon_s"), "%.2f"), cat("consoled"),
                      cat("kmscon fbdev"), cat("kmscon drm"),
                      fmt(c.get("frames"), "%d"), fmt(fps, "%.1f"), fmt(upf, "%.0f"),
                      fmt(upf and 1000 * upf / px, "%.2f"), fmt(c.get("tick_frames"), "%d"),
                      fmt(tick, "%.0f"), fmt(tick and 1000 * tick / px, "%.2f"),
                      fmt(ticks, "%.0f"), echo("echo fbcon"),
                      echo("echo consoled")))
    out.append("   (s: cat to the cursor position reply; frames, us/frame: consoled's frames of"
               " the cat phase and its render time per frame (--stats render_usec / frames),"
               " ns/px: that over the screen's pixels; fps: frames / cat s; 1-row: %d lines one every"
               " ~0.03 s, the frames drawn, render time per frame and pixel, ms a line (above"
               " ~30: the terminal lags the output); echo: idle echo median/p99 ms over %d keys;"
               " *: kmscon ran at another mode, its log's)" % (args_ticks(section), KEYS))
    for r in section["rows"]:
        if "error" in r:
            continue
        c = r.get("consoled", {})
        out.append("   %s: grid %s, %s bpp, host load %.1f-%.1f, %.0f s; fbcon %d lines in %.3f s"
                   % (r["mode"], r.get("grid"), r.get("bpp"), min(r["load"]), max(r["load"]),
                      r["seconds"], section["fbcon_lines"], r.get("fbcon_lines_s", 0)))
        if c.get("choice"):
            out.append("   %s consoled auto chose: %s" % (r["mode"], c["choice"]))
        cpu = c.get("cat_cpu")
        if cpu and "user_usec" in cpu:
            out.append("   %s consoled cat CPU: %.0f ms: parsing %.0f, drawing %.0f, snapshots"
                       " %.0f, mirror %.0f" % (r["mode"], (cpu["user_usec"] + cpu["sys_usec"])
                                               / 1000, cpu.get("parse_usec", 0) / 1000,
                                               (c.get("render_usec") or 0) / 1000,
                                               cpu.get("snapshot_usec", 0) / 1000,
                                               cpu.get("vcs_usec", 0) / 1000))
        e = r.get("echo consoled", {})
        if e.get("stages"):
            st = e["stages"]
            out.append("   %s consoled idle echo, median us per stage: %s; %s wake-ups in %d s idle"
                       % (r["mode"], ", ".join("%s %d" % (k, st[k]) for k in latency.KEY_STAGES),
                          e.get("idle_wakeups"), IDLE_SECONDS))
        for key in ("consoled", "kmscon fbdev", "kmscon drm", "echo fbcon", "echo consoled"):
            if "error" in r.get(key, {}):
                out.append("   %s %s: FAILED: %s" % (r["mode"], key,
                                                     r[key]["error"].splitlines()[0]))
            for n in r.get(key, {}).get("notes", []) if key.startswith("kmscon") else []:
                out.append("   %s %s: log: %s" % (r["mode"], key, n))
    return "\n".join(out) + "\n"
