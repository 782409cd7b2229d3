"""The benchmark's latency section (README.md, Latency): key to pixels, idle,
while another VT floods and while the same terminal scrolls, and Ctrl+C
under a flood until the prompt is on screen, for fbcon, consoled, fbterm and kmscon in the card's one boot.

bench.py calls add_args(), guest_files() and run() and appends
format_card() to the card's block; the figures go to the card's "latency"
entry of bench-results.json.  The guest side is keylat (keylat.c: a uinput
keyboard that polls the framebuffer mapping) and lat.sh (the session each
terminal runs).
"""

import os
import re

import initramfs  # tests/vm, on bench.py's path
import screen
import tools
import vmtest

HERE = os.path.dirname(os.path.abspath(__file__))
TERMINALS = ["fbcon", "floor", "consoled", "fbterm", "kmscon"]
# "floor" (echofloor.c): the pty's round trip and a cell filled per echoed
# byte, the least any terminal on a pty does; it has the echo phases only
FLOOR_PHASES = {"idle", "flood"}
G_KEYLAT = "/usr/bin/keylat"
G_ECHOFLOOR = "/usr/bin/echofloor"
G_LAT_SH = "/bench/lat.sh"
G_LAT_RUN = "/bench/lat-run.sh"
G_DIR = "/tmp/lat"
# consoled's wake-ups while idle are counted over this long, after the idle
# echo (the session waits in cat, keylat for the next phase)
IDLE_SECONDS = 60
# the figures of consoled --stats's line per echoed key (screen.c
# screen_log_key()), in order
KEY_STAGES = ["input", "handled", "to pty", "echo read", "parse", "frame wait", "due", "cells",
              "detect", "draw", "flush", "total"]
RESULT_RE = re.compile(r"^(echo|scroll|int) n=(\d+) median_us=(\d+) p99_us=(\d+) max_us=(\d+)"
                       r" min_us=(\d+)$", re.M)


def add_args(ap):
    ap.add_argument("--latency", default=",".join(TERMINALS),
                    help="terminals whose key-to-pixel latency and Ctrl+C-under-flood time are"
                         " measured (default %s; '' for none: CI's smoke run)"
                         % ",".join(TERMINALS))
    ap.add_argument("--latency-keys", type=int, default=300,
                    help="timed keys per latency run (default 300)")
    ap.add_argument("--int-rounds", type=int, default=30,
                    help="Ctrl+C rounds per terminal (default 30)")
    ap.add_argument("--latency-gap-ms", type=int, default=20,
                    help="pause between timed keys, plus 0-10 ms (default 20; a person"
                         " typing leaves 100-300)")


def terminals(args):
    out = [t for t in args.latency.split(",") if t]
    for t in out:
        if t not in TERMINALS:
            raise SystemExit("bench: unknown --latency terminal %r (one of %s)"
                             % (t, ", ".join(TERMINALS)))
    return out


def guest_files(args, consoled):
    """({guest: host} files, {guest: host} binaries) the section needs."""
    if not terminals(args):
        return {}, {}
    elves = {guest: tools.tool_path(consoled, name, "--latency", "--latency ''")
             for guest, name in ((G_KEYLAT, "keylat"), (G_ECHOFLOOR, "echofloor"))}
    return ({G_LAT_SH: os.path.join(HERE, "lat.sh"),
             G_LAT_RUN: "exec keylat --run /bin/sh %s \"$@\"\n" % G_LAT_SH}, elves)


def start_command(b, term, ready, font, kmscon):
    """The shell command that starts `term` with lat.sh as its session."""
    # SIGINT at its default in the session (keylat --run): a terminal started
    # in the background by the harness's shell would hand it down ignored.
    # Through a script: fbterm takes "--run" after its "--" for its own.
    session = "/bin/sh %s %s" % (G_LAT_RUN, ready)
    if term == "fbcon":
        # tty1 as the session's controlling tty: opened after setsid, so
        # Ctrl+C reaches its foreground group (lat.sh and base64).
        return ("setfont %s -C /dev/tty1 && echo 0 >/sys/class/graphics/fbcon/cursor_blink;"
                " chvt 1; setsid sh -c 'exec %s </dev/tty1 >/dev/tty1 2>&1'"
                % (font, session))
    if term == "consoled":
        # --stats: a "Key:" line per echo, where its time went
        return ("CONSOLED_BACKEND_DIR=%s consoled --vt=1 --fbdev=/dev/fb0 --font-file=%s"
                " --verbose --stats --login -- %s >%s/term.log 2>&1"
                % (vmtest.GUEST_BACKEND_DIR, font, session, G_DIR))
    if term == "floor":
        # keylat's keyboard, from its log (keylat starts first)
        return ("echofloor $(sed -n 's/^keylat: created //p' %s/keylat.log) %d %d -- %s"
                " >%s/term.log 2>&1" % (G_DIR, b.font_w, b.font_h, session, G_DIR))
    if term == "fbterm":
        return ("FONTCONFIG_FILE=%s setsid -c fbterm -n 'DejaVu Sans Mono' -s 13 --font-width=%d"
                " --font-height=%d -- %s </dev/tty1 >%s/term.log 2>&1"
                % (initramfs.FONTS_CONF, b.font_w, b.font_h, session, G_DIR))
    return ("%s --vt=1 --no-drm --font-engine=unifont --login -- %s >%s/term.log 2>&1"
            % (kmscon, session, G_DIR))


def wait_file(vm, path, status, limit):
    """Waits in the guest for `path` or keylat's exit; True if path came."""
    out = vm.check("i=0; while [ ! -e %s ] && [ ! -s %s ] && [ $i -lt %d ]; do sleep 1;"
                   " i=$((i + 1)); done; [ -e %s ] && echo arrived; true"
                   % (path, status, limit, path), timeout=limit + 60)
    return "arrived" in out


def run_terminal(b, args, term, font, kmscon):
    vm = b.vm
    keys, rounds = args.latency_keys, args.int_rounds
    d = G_DIR
    vm.check("rm -rf %s; mkdir -p %s; pkill -x yes; true" % (d, d))
    proc = {"fbcon": None, "floor": "echofloor", "consoled": "consoled", "fbterm": "fbterm",
            "kmscon": "kmscon"}[term]
    # the echo while the terminal scrolls: its last text row (lat.sh)
    band = ((b.rows - 1) * b.font_h, b.rows * b.font_h - 1)
    # the CPU time of the terminal's process and of the kernel's workers
    # (fbcon draws in one; a pty's line discipline echoes in one) around
    # the idle echo: what a key cost each (cpu_per_key())
    cpu = "".join(" cpu %s" % n for n in ((proc,) if proc else ()) + ("'kworker*'",))
    steps = ("bpp %d wait-file %s/ready sleep 2000%s echo %d%s touch %s/e1 wait-file %s/g2"
             " echo %d touch %s/e2" % (b.bpp, d, cpu, keys, cpu, d, d, keys, d))
    if term != "floor":
        steps += (" wait-file %s/g3 touch %s/ready.scroll sleep 2000"
                  " echo-rows %d %d %d touch %s/ready.int sleep 1000 int %d 1000"
                  % (d, d, keys, band[0], band[1], d, rounds))
    vm.check("(keylat --gap-ms=%d %s >%s/keylat.log 2>&1; echo $? >%s/status) </dev/null"
             " >/dev/null 2>&1 &" % (args.latency_gap_ms, steps, d, d))
    # The keyboard exists before the terminal starts (kmscon enumerates input
    # devices at start; the guest has no udevd to tell it of new ones).
    vm.check("i=0; until grep -q created %s/keylat.log || [ $i -gt 100 ]; do sleep 0.1;"
             " i=$((i + 1)); done" % d, timeout=60)
    vm.check("(%s &) </dev/null >/dev/null 2>&1" % start_command(b, term, d + "/ready", font, kmscon))
    status = d + "/status"
    # fbterm scans the fonts at start (~20 s under TCG, minutes on a busy
    # host): keylat waits up to 300 s for the session
    per_key = 0.5 + args.latency_gap_ms / 1000
    try:
        if not wait_file(vm, d + "/e1", status, int(330 + keys * per_key)):
            raise RuntimeError("idle echo did not finish")
        if term == "consoled":
            # the idle phase's Key: lines are those written so far (once
            # typing pauses for 250 ms: screen.c KEY_LINES_QUIET); only
            # their figures come over the serial line (the whole log is
            # too slow under TCG)
            idle_keys = vm.check("sleep 1; sed -n 's/.*Key: //p' %s/term.log"
                                 " | tr -cs '0-9\\n-' ' '" % d, timeout=120)
        if term in ("consoled", "fbcon"):
            idle_wakeups, guest_wakeups = count_wakeups(vm, term)
        vm.check("(yes >/dev/tty2 &) </dev/null >/dev/null 2>&1; touch %s/g2" % d)
        if not wait_file(vm, d + "/e2", status, int(60 + keys * per_key * 4)):
            raise RuntimeError("echo under flood did not finish")
        vm.check("pkill -x yes; touch %s/g3" % d)
        wait_file(vm, status, status, int(60 + rounds * 10 + keys * per_key * 2))
        log = vm.check("cat %s/keylat.log; echo status $(cat %s 2>/dev/null)" % (d, status))
        if "status 0" not in log:
            shot = os.path.join(vm.out_dir, "latency-%s-failed.png" % term)
            screen.save_png(vm.screendump(), shot)
            log += "screendump: %s\n" % shot
            # the session's processes: controlling tty, foreground group,
            # ignored signals (for a Ctrl+C that did nothing)
            log += vm.run("for p in $(pidof sh base64); do echo $p $(cat /proc/$p/cmdline | tr '\\0' ' ')"
                          " pgrp,sid,tty,tpgid $(cut -d' ' -f5-8 /proc/$p/stat)"
                          " $(grep SigIgn /proc/$p/status); done", timeout=30)[0]
    except Exception as e:  # noqa: BLE001 -- the log says why
        log = vm.run("tail -n 12 %s/keylat.log; tail -n 6 %s/term.log" % (d, d), timeout=30)[0]
        raise RuntimeError("%s: %s; log:\n%s" % (term, e, log)) from None
    finally:
        # fbcon's session: lat.sh and its base64 (the others' sessions end
        # with their terminal)
        vm.run("pkill -x yes; pkill -x keylat; %s pkill -x base64; chvt 1"
               % ("kill $(cat %s/ready);" % d if term == "fbcon" else
                  "pkill -x %s; sleep 1; pkill -9 -x %s;" % (proc, proc)), timeout=30)
    if "status 0" not in log:
        raise RuntimeError("keylat failed:\n%s" % log)
    found = {}
    for m in RESULT_RE.finditer(log):
        key = {"echo": "flood" if "idle" in found else "idle"}.get(m.group(1), m.group(1))
        found[key] = {"n": int(m.group(2)), "median_ms": int(m.group(3)) / 1000,
                      "p99_ms": int(m.group(4)) / 1000, "max_ms": int(m.group(5)) / 1000,
                      "min_ms": int(m.group(6)) / 1000}
    if set(found) != (FLOOR_PHASES if term == "floor" else {"idle", "flood", "scroll", "int"}):
        raise RuntimeError("keylat printed no figures:\n%s" % log)
    found["cpu_per_key"] = cpu_per_key(log, keys)
    band = re.search(r"echo band rows (\d+)-(\d+)", log)
    mode = re.search(r"mode (\S+) (\d+) bpp", log)
    if term == "consoled":
        found["stages"] = key_stages(idle_keys)
    if term in ("consoled", "fbcon"):
        found["idle_wakeups"] = idle_wakeups
        found["guest_wakeups"] = guest_wakeups
    found["band"] = band.group(0) if band else None
    found["mode"] = mode.group(0) if mode else None
    return found


def count_wakeups(vm, term):
    """Context switches (voluntary and not: each wake-up ends in one) over
    IDLE_SECONDS of nothing to do: consoled's own (None for fbcon, which has
    no process: its cursor blink is a kernel work item) and the whole
    guest's (/proc/stat ctxt: the kernel's workers, fbcon's blink among
    them, the harness's own shell and sleep). fbcon's blink, off for the
    pixel measurements, is on for the count: the wake-ups consoled is held
    against. Returns (own, guest), either None when unreadable."""
    own = ("p=$(pidof consoled); c() { awk '/ctxt_switches/ { n += $2 } END { print n }'"
           " /proc/$p/status; }" if term == "consoled" else "c() { echo -; }")
    blink = "/sys/class/graphics/fbcon/cursor_blink"
    cmd = ("%s; g() { awk '/^ctxt/ { print $2 }' /proc/stat; }; %s a=$(c); b=$(g); sleep %d;"
           " echo $a $(c) $b $(g); %s"
           % (own, "echo 1 >%s;" % blink if term == "fbcon" else "", IDLE_SECONDS,
              "echo 0 >%s" % blink if term == "fbcon" else "true"))
    f = vm.check(cmd, timeout=IDLE_SECONDS + 60).split()
    if len(f) != 4:
        return None, None
    proc = int(f[1]) - int(f[0]) if f[0] != "-" else None
    return proc, int(f[3]) - int(f[2])


def cpu_per_key(log, keys):
    """{name: ms} on the CPU per key of the idle echo, from keylat's two
    "cpu NAME NS ..." lines for each name around it (the terminal's process,
    kworker*); {} if they are not there. With them, {name + " runs": n,
    name + " faults": n} per key: the times put on the CPU and the minor
    page faults."""
    seen = {}
    for m in re.finditer(r"^cpu (\S+) (\d+) ns in \d+ processes(?:, (\d+) runs, (\d+) faults)?$",
                         log, re.M):
        seen.setdefault(m.group(1), []).append(m.groups()[1:])
    out = {}
    for name, v in seen.items():
        if len(v) != 2 or not keys:
            continue
        out[name] = (int(v[1][0]) - int(v[0][0])) / keys / 1e6
        if v[0][1] is not None and v[1][1] is not None:
            out[name + " runs"] = (int(v[1][1]) - int(v[0][1])) / keys
            out[name + " faults"] = (int(v[1][2]) - int(v[0][2])) / keys
    return out


def key_stages(lines):
    """Medians (us) of each stage of consoled's idle echoes: the figures of its
    Key: lines, one line each."""
    rows = [[int(v) for v in l.split()] for l in lines.splitlines()]
    # a daemon older than the input stages (echotrace.py --compare) has none
    rows = [[None, None] + r if len(r) == len(KEY_STAGES) - 2 else r for r in rows]
    rows = [r for r in rows if len(r) == len(KEY_STAGES)]
    if not rows:
        return None
    out = {"n": len(rows)}
    for i, name in enumerate(KEY_STAGES):
        vals = sorted(r[i] for r in rows if r[i] is not None)
        out[name] = vals[len(vals) // 2] if vals else -1
    return out


def figures(r):
    """A row's medians and p99s (ms) of idle, flood, scroll and Ctrl+C, "-"
    for a phase it has not (the floor's scroll and Ctrl+C)."""
    out = []
    for phase in ("idle", "flood", "scroll", "int"):
        for k in ("median_ms", "p99_ms"):
            out.append("%.1f" % r[phase][k] if phase in r else "-")
    return tuple(out)


def run(b, args, result, font, kmscon):
    """The section for one card: a row per terminal in result["latency"]."""
    rows = []
    for term in terminals(args):
        if term in ("fbterm", "kmscon") and term not in args.peers.split(","):
            rows.append({"term": term, "skipped": "not in --peers (its binary is not in the"
                                                  " initramfs)"})
            continue
        try:
            r = run_terminal(b, args, term, font, kmscon)
            r["term"] = term
            f = figures(r)
            print("# %s latency %s: echo idle %s/%s ms, flood %s/%s ms,"
                  " scroll %s/%s ms, Ctrl+C %s/%s ms (median/p99)" % ((b.card, term) + f),
                  flush=True)
        except Exception as e:  # noqa: BLE001 -- the next terminal still runs
            print("# %s latency %s: FAILED: %s" % (b.card, term, e), flush=True)
            r = {"term": term, "error": str(e)}
            if b.vm.proc.poll() is not None:
                rows.append(r)
                break
        rows.append(r)
    result["latency"] = {"keys": args.latency_keys, "rounds": args.int_rounds,
                         "gap_ms": args.latency_gap_ms, "rows": rows}


def broken(results):
    """consoled's, fbcon's and the floor's latency rows that failed ("card/latency
    TERM"): a broken run, as a consoled run that breaks; the peers' are rows
    only."""
    return ["%s/latency %s" % (r["card"], row["term"]) for r in results
            for row in r.get("latency", {}).get("rows", [])
            if "error" in row and row["term"] in ("fbcon", "floor", "consoled")]


def format_card(card):
    lat = card.get("latency")
    if not lat:
        return ""
    gap = lat.get("gap_ms", 20)  # results written before the option: 20
    out = ["   latency (indicative: TCG, the poller shares the guest's one CPU): key to"
           " pixels over %d keys %d-%d ms apart, Ctrl+C under base64 to a still prompt over %d"
           " rounds, ms" % (lat["keys"], gap, gap + 10, lat["rounds"]),
           "   %-9s %9s %9s %10s %10s %11s %11s %9s %9s"
           % ("terminal", "idle med", "idle p99", "flood med", "flood p99", "scroll med",
              "scroll p99", "^C med", "^C p99")]
    for r in lat["rows"]:
        if "error" in r:
            out.append("   %-9s FAILED: %s" % (r["term"], r["error"].splitlines()[0]))
            out.extend("   %-9s   %s" % ("", line) for line in r["error"].splitlines()[1:8])
            continue
        if "skipped" in r:
            out.append("   %-9s skipped: %s" % (r["term"], r["skipped"]))
            continue
        out.append("   %-9s %9s %9s %10s %10s %11s %11s %9s %9s" % ((r["term"],) + figures(r)))
    for r in lat["rows"]:
        if r.get("idle_wakeups") is not None or r.get("guest_wakeups") is not None:
            own = ("%d wake-ups of the process, " % r["idle_wakeups"]
                   if r.get("idle_wakeups") is not None else "")
            guest = r.get("guest_wakeups")
            out.append("   %s idle: %s%s context switches of the whole guest in %d s (after the"
                       " idle echo%s)" % (r["term"], own, "-" if guest is None else guest,
                                          IDLE_SECONDS,
                                          "; its cursor blink on" if r["term"] == "fbcon"
                                          else ""))
    for r in lat["rows"]:
        cpu = r.get("cpu_per_key")
        if cpu:
            names = sorted(n for n in cpu if " " not in n)
            out.append("   %s idle echo, per key: %s" % (r["term"], "; ".join(
                "%s %.2f ms on the CPU%s" % (
                    n, cpu[n], (", %.1f runs, %.1f page faults" % (cpu[n + " runs"],
                                                                    cpu[n + " faults"])
                                if n + " runs" in cpu else "")) for n in names)))
    for r in lat["rows"]:
        st = r.get("stages")
        if st:
            out.append("   %s idle echo, median us per stage over %d keys (--stats Key: lines):"
                       " %s" % (r["term"], st["n"],
                                ", ".join("%s %d" % (k, st[k]) for k in KEY_STAGES)))
    for r in lat["rows"]:
        if r.get("mode") or r.get("band"):
            out.append("   %s: %s; %s" % (r["term"], r.get("mode"), r.get("band")))
    return "\n".join(out) + "\n"
