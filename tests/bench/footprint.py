"""The benchmark's footprint section (README.md, Footprint): memory and start
time of consoled beside kmscon and fbterm, in the card's boot, after the
scrolling runs.

Runs, each with footprint.sh as its session:

  consoled psf   one instance with the benchmark's PSF font,
  consoled ttf   one with the TrueType font (the scrolling rows' size),
  consoled x6    six instances with the PSF font, on tty1-6,
  fbterm, kmscon fbdev   the peers of --peers, in that order (kmscon last:
                 it leaves the card at its own depth).

For each instance: VmRSS and PSS (/proc/PID/smaps_rollup) once its prompt is
drawn, VmHWM (peak RSS) and PSS again after `cat` of the benchmark's lines;
for single instances also the time from the start to the prompt's pixels on
the screen (firstdraw.c).  Every terminal gets FONTCONFIG_FILE pointing at the
guest's TrueType directory, as fbterm needs it: consoled's fontconfig sees the
same fonts.
"""

import os
import re
import shlex
import time

import initramfs  # noqa: E402 -- tests/vm, on the path through bench.py
import vmtest  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
G_SESSION = "/bench/footprint.sh"
G_FIRSTDRAW = "/usr/bin/firstdraw"
G_DIR = "/tmp/fp"
# Where footprint.sh writes its prompt (0-based cell) and how long it is.
PROMPT_ROW, PROMPT_COL, PROMPT_LEN = 4, 19, len("footprint>")
SIX = 6
ROLLUP_KEYS = ["Rss", "Pss", "Pss_Anon", "Pss_File", "Pss_Shmem"]


def add_args(ap, default_cards):
    ap.add_argument("--footprint", default=",".join(default_cards),
                    help="cards that get the footprint section (memory and start time beside the"
                         " peers; default %s, '' for none)" % ",".join(default_cards))


def guest_files(consoled):
    """(initramfs files, ELF binaries) the section needs in the guest."""
    tool = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(consoled)), "..",
                                         "tests", "bench", "firstdraw"))
    if not os.path.exists(tool):
        raise SystemExit("bench: no %s (build the tests/bench directory, or --footprint '')"
                         % tool)
    return {G_SESSION: os.path.join(HERE, "footprint.sh")}, {G_FIRSTDRAW: tool}


class Footprint:
    def __init__(self, b, kmscon_bin, lines_file, out_dir):
        self.b = b
        self.vm = b.vm
        self.kmscon_bin = kmscon_bin
        self.lines_file = lines_file
        self.out_dir = out_dir

    def consoled_cmd(self, vt, ttf):
        # As a user starts it: no --no-calibrate, no --scroll-mode.
        return ("export CONSOLED_BACKEND_DIR=%s; exec consoled --vt=%d --fbdev=/dev/fb0 %s"
                " --login -- {session}"
                % (vmtest.GUEST_BACKEND_DIR, vt, " ".join(self.b.font_flags(ttf))))

    def launch(self, tag, cmd, cell=None):
        """Starts cmd ({session}: footprint.sh) through a script whose pid is the
        terminal's (exec), under firstdraw when cell (w, h) is given."""
        session = "/bin/sh %s %s %s %s" % (G_SESSION, tag, self.lines_file, G_DIR)
        script = "%s/%s.run" % (G_DIR, tag)
        log = "%s/%s.log" % (G_DIR, tag)
        text = ("echo $$ >%s/%s.pid; export FONTCONFIG_FILE=%s; %s >>%s 2>&1"
                % (G_DIR, tag, initramfs.FONTS_CONF, cmd.format(session=session), log))
        self.vm.check("printf '%%s\\n' %s >%s" % (shlex.quote(text), script))
        if cell:
            w, h = cell
            x0, y0 = PROMPT_COL * w, PROMPT_ROW * h
            run = "%s /dev/fb0 %d %d %d %d 120 -- /bin/sh %s </dev/null >%s/%s.first 2>>%s" % (
                G_FIRSTDRAW, x0, y0, x0 + PROMPT_LEN * w, y0 + h, script, G_DIR, tag, log)
        else:
            run = "/bin/sh %s </dev/null >>%s 2>&1" % (script, log)
        self.vm.check("(%s &) </dev/null >/dev/null 2>&1" % run)

    def wait_for(self, paths, limit, op="-e"):
        test = " && ".join("[ %s %s ]" % (op, p) for p in paths)
        out = self.vm.check("i=0; while ! { %s; } && [ $i -lt %d ]; do sleep 0.5; i=$((i + 1));"
                            " done; { %s; } && echo ready; true" % (test, 2 * limit, test),
                            timeout=limit + 60)
        return "ready" in out

    def memory(self, pid):
        out = self.vm.check("grep -E '^(VmRSS|VmHWM):' /proc/%d/status; cat /proc/%d/smaps_rollup"
                            % (pid, pid))
        kb = {k: int(v) for k, v in re.findall(r"^(\w+):\s+(\d+) kB", out, re.M)}
        missing = [k for k in ["VmRSS", "VmHWM"] + ROLLUP_KEYS if k not in kb]
        if missing:
            raise RuntimeError("no %s for pid %d: %r" % (", ".join(missing), pid, out))
        # Files and shared memory: libraries (the initramfs is in RAM), the
        # session restore snapshot.
        kb["Pss_Other"] = kb["Pss"] - kb["Pss_Anon"]
        return kb

    def pid(self, tag):
        return int(self.vm.check("cat %s/%s.pid" % (G_DIR, tag)).strip())

    def stop(self, pids):
        self.vm.run("kill %s; i=0; while [ $i -lt 50 ] && { %s; }; do sleep 0.2; i=$((i + 1));"
                    " done; kill -9 %s 2>/dev/null; chvt 1; true"
                    % (" ".join(map(str, pids)),
                       " || ".join("[ -e /proc/%d ]" % p for p in pids),
                       " ".join(map(str, pids))), timeout=60)

    def log_tail(self, tag):
        return self.vm.run("tail -n 8 %s/%s.log" % (G_DIR, tag), timeout=20)[0]

    def instances(self, label, font, cmds, cell, comm):
        """Starts cmds [(tag, command line)] (the first under firstdraw when
        cell is given), measures each at its prompt and after cat; returns the
        row of the table."""
        limit = 180
        row = {"terminal": label, "font": font, "instances": len(cmds)}
        tags = [t for t, _ in cmds]
        for i, (tag, cmd) in enumerate(cmds):
            self.launch(tag, cmd, cell if i == len(cmds) - 1 else None)
        pids = []
        try:
            if not self.wait_for(["%s/%s.prompt" % (G_DIR, t) for t in tags]
                                 + ["%s/%s.pid" % (G_DIR, t) for t in tags], limit):
                raise RuntimeError("no prompt within %d s; log:\n%s" % (limit, self.log_tail(tags[-1])))
            pids = [self.pid(t) for t in tags]
            for p in pids:
                name = self.vm.check("cat /proc/%d/comm" % p).strip()
                if name != comm:
                    raise RuntimeError("pid %d is %r, not %s" % (p, name, comm))
            if cell:
                first = "%s/%s.first" % (G_DIR, tags[-1])
                self.wait_for([first], 150, "-s")
                out = self.vm.check("cat %s" % first)
                m = re.search(r"firstdraw (\d+) (\d+|timeout)", out)
                if not m or m.group(2) == "timeout":
                    raise RuntimeError("firstdraw saw no prompt: %r; active VT %s; log:\n%s"
                                       % (out, self.vm.run("cat /sys/class/tty/tty0/active")[0]
                                          .strip(), self.log_tail(tags[-1])))
                row["first_prompt_ms"] = int(m.group(2)) / 1000.0
            row["at_prompt"] = [self.memory(p) for p in pids]
            self.vm.check(" ".join("touch %s/%s.go;" % (G_DIR, t) for t in tags))
            if not self.wait_for(["%s/%s.done" % (G_DIR, t) for t in tags], limit):
                raise RuntimeError("cat not parsed within %d s" % limit)
            row["after_cat"] = [self.memory(p) for p in pids]
            if len(pids) == 1:
                # Where the memory is, mapping by mapping (summed by name:
                # the whole smaps is too long for the serial line).
                smaps = self.vm.check(
                    "awk '/^[0-9a-f]+-[0-9a-f]+ /{n=$6; if (n == \"\") n=\"[anon]\"}"
                    " /^Rss:/{r[n]+=$2} /^Pss:/{p[n]+=$2}"
                    " END{for (k in p) print p[k], r[k], k}' /proc/%d/smaps | sort -rn"
                    % pids[0], timeout=120)
                smaps = "PSS kB, RSS kB, mapping\n" + smaps
                name = "smaps-%s-%s.txt" % (label.replace(" ", "-"), font.split()[0])
                with open(os.path.join(self.out_dir, name), "w") as f:
                    f.write(smaps)
                with open(os.path.join(self.out_dir, name.replace("smaps-", "log-")), "w") as f:
                    f.write(self.vm.run("cat %s/%s.log" % (G_DIR, tags[0]), timeout=30)[0])
        finally:
            if pids:
                self.stop(pids)
            else:
                self.vm.run("pkill -x %s; sleep 1; pkill -9 -x %s; chvt 1" % (comm, comm),
                            timeout=30)
        return row

    def run(self, peers):
        b = self.b
        vm = self.vm
        rows = []
        notes = []
        # The scrolling runs' kmscon left its depth: back to the boot's.
        vm.run("echo %d >/sys/class/graphics/fb0/bits_per_pixel" % b.bpp)
        bpp = int(vm.check("cat /sys/class/graphics/fb0/bits_per_pixel").strip())
        if bpp != b.bpp:
            notes.append("fb0 is at %d bpp, not the boot's %d" % (bpp, b.bpp))
        # fbcon's blinking cursor would draw into the cleared screen.
        vm.run("echo 0 >/sys/class/graphics/fbcon/cursor_blink")
        # A peer of the scrolling runs that died holding tty1 (VT_PROCESS)
        # would keep consoled waiting for it: a switch away resets a VT
        # whose owner is gone.
        vm.run("pkill -9 -x fbterm; pkill -9 -x kmscon; sleep 0.5; chvt 2; chvt 1; true",
               timeout=30)
        psf = (b.font_w, b.font_h)
        runs = [("consoled", "psf %dx%d" % psf, [("c1", self.consoled_cmd(1, False))], psf,
                 "consoled")]
        if b.ttf:
            runs.append(("consoled", "ttf %dx%d" % tuple(b.ttf["cell"]),
                         [("t1", self.consoled_cmd(1, True))], tuple(b.ttf["cell"]), "consoled"))
        # tty1 last: it is the one left on screen.
        runs.append(("consoled x%d" % SIX, "psf %dx%d" % psf,
                     [("s%d" % vt, self.consoled_cmd(vt, False)) for vt in range(SIX, 0, -1)],
                     None, "consoled"))
        if "fbterm" in peers:
            runs.append(("fbterm", "dejavu %dx%d" % psf,
                         [("fbterm", "exec setsid -c fbterm -n 'DejaVu Sans Mono' -s 13"
                           " --font-width=%d --font-height=%d -- {session} </dev/tty1" % psf)],
                         psf, "fbterm"))
        if "kmscon" in peers:
            runs.append(("kmscon fbdev", "unifont 8x16",
                         [("kmscon", "exec %s --vt=1 --no-drm --font-engine=unifont"
                           " --login -- {session}" % self.kmscon_bin)], (8, 16), "kmscon"))
        for label, font, cmds, cell, comm in runs:
            t1 = time.monotonic()
            vm.run("rm -rf %s; mkdir -p %s" % (G_DIR, G_DIR))
            try:
                row = self.instances(label, font, cmds, cell, comm)
            except Exception as e:  # noqa: BLE001 -- a run that fails is a row
                row = {"terminal": label, "font": font, "error": str(e)}
            row["seconds"] = time.monotonic() - t1
            print("# %s footprint %s %s: %s in %.1fs"
                  % (b.card, label, font, summary(row), row["seconds"]), flush=True)
            rows.append(row)
        vm.run("echo 1 >/sys/class/graphics/fbcon/cursor_blink")
        return {"rows": rows, "notes": notes, "lines": b.lines}


def mb(kb):
    return kb / 1024.0


def summary(row):
    if "error" in row:
        return "FAILED: " + row["error"].splitlines()[0]
    pss = sum(m["Pss"] for m in row["after_cat"])
    hwm = max(m["VmHWM"] for m in row["after_cat"])
    return "peak RSS %.1f MB, PSS %.1f MB%s" % (
        mb(hwm), mb(pss), ", first prompt %.0f ms" % row["first_prompt_ms"]
        if "first_prompt_ms" in row else "")


COLUMNS = ["terminal", "font", "first prompt ms", "RSS@prompt", "PSS@prompt", "peak RSS",
           "PSS", "PSS anon", "PSS other"]


def table_rows(row):
    """Table lines of one run: a single instance; six give a line per
    instance (its mean) and their sum."""
    if "error" in row:
        return [[row["terminal"], row["font"], "FAILED: " + row["error"].splitlines()[0]]]
    n = len(row["after_cat"])

    def fig(ms, key, agg):
        return "%.1f" % mb(agg(m[key] for m in ms))

    first = "%.0f" % row["first_prompt_ms"] if "first_prompt_ms" in row else "-"
    out = []
    for label, agg in ([(row["terminal"], sum)] if n == 1 else
                       [(row["terminal"] + " each", lambda v: sum(v) / n),
                        (row["terminal"] + " sum", sum)]):
        out.append([label, row["font"], first,
                    fig(row["at_prompt"], "VmRSS", agg), fig(row["at_prompt"], "Pss", agg),
                    fig(row["after_cat"], "VmHWM", agg), fig(row["after_cat"], "Pss", agg),
                    fig(row["after_cat"], "Pss_Anon", agg), fig(row["after_cat"], "Pss_Other", agg)])
    return out


def format_section(fp):
    """The section's lines under a card's table."""
    out = ["   footprint: MB (1 MB = 1024 kB); RSS@prompt, PSS@prompt once the prompt is"
           " drawn; peak RSS = VmHWM and PSS (anon, other: files and shared memory) after cat of %d lines;"
           " first prompt = start to the prompt's pixels" % fp["lines"]]
    rows = [COLUMNS]
    for r in fp["rows"]:
        rows += table_rows(r)
    full = [r for r in rows if len(r) == len(COLUMNS)]
    widths = [max(len(x) for x in col) for col in zip(*full)]
    for r in rows:
        if len(r) == len(COLUMNS):
            out.append("   " + "  ".join(x.ljust(w) if i < 2 else x.rjust(w)
                                         for i, (x, w) in enumerate(zip(r, widths))))
        else:
            out.append("   %s  %s  %s" % (r[0].ljust(widths[0]), r[1].ljust(widths[1]), r[2]))
    for n in fp["notes"]:
        out.append("   footprint note: " + n)
    return out
