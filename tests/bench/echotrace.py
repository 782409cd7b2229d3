#!/usr/bin/env python3
"""What consoled does per echoed key, in one guest (README.md, Latency,
"System calls per echo"): the latency section's idle echo (keylat's
`echo` step into lat.sh's `cat`), run

  - under strace (`strace -tt -T`, consoled's one thread; the session is
    not traced): the system calls from the second key's write to the pty
    to the last one's, counted by name and by name and fd, and the calls
    of a few keys in order, printed and kept in OUT/strace-TAG.txt;
  - plain, ROUNDS times: keylat's figures and the medians of consoled's
    `--stats` `Key:` stages (latency.key_stages()).

With --compare, an older consoled (/opt/compare/consoled in the guest) is
run the same way in the same boot, the plain runs alternating which goes
first, so that both see the same host load.

    python3 tests/bench/echotrace.py --consoled BUILD/daemon/consoled \\
        --compare OLD/consoled --card bochs --gap-ms 150 --rounds 2

--gap-ms is keylat's pause after each echo (20 in the latency section;
150, a typist's pace, lets the vcs mirror's 50 ms pass between keys).
"""
import argparse
import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "vm"))

import latency  # noqa: E402
import vmlib  # noqa: E402
import vmtest  # noqa: E402

FONT = "/fonts/Lat15-Fixed16.psf.gz"
G_DIR = "/tmp/lat"
G_COMPARE = "/opt/compare/consoled"
# in the guest (busybox): the trace's window from the second key's write to
# the pty master (the fd /dev/ptmx gave) to the last one's
ANALYSE = r"""cd %(d)s
pty=$(grep 'ptmx' strace | head -1 | sed 's/.*= \([0-9]*\).*/\1/')
a=$(grep -n "^[0-9:.]* write($pty, " strace | sed -n 2p | cut -d: -f1)
b=$(grep -n "^[0-9:.]* write($pty, " strace | tail -1 | cut -d: -f1)
sed -n "$a,$((b - 1))p" strace > window
k=$(grep -c "^[0-9:.]* write($pty, " window)
echo "pty fd $pty: $(wc -l < window) system calls over $k keys"
cut -d' ' -f2 window | sed 's/(.*//' | sort | uniq -c | sort -rn
echo "--- by fd (without gettid and epoll_wait)"
cut -d' ' -f2 window | sed 's/, .*//; s/(\(.*\)/ \1/' | grep -v "^gettid\|^epoll_wait" |
    sort | uniq -c | sort -rn
n=$(grep -n "^[0-9:.]* write($pty, " window | sed -n '10p' | cut -d: -f1)
echo "--- from the 11th key's write"
sed -n "$n,$((n + 60))p" window | cut -c1-120
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--consoled", required=True, help="consoled binary (keylat next to it)")
    ap.add_argument("--compare", help="an older consoled, run the same way in the same boot")
    ap.add_argument("--card", default="bochs")
    ap.add_argument("--keys", type=int, default=100, help="timed keys per plain run")
    ap.add_argument("--trace-keys", type=int, default=30, help="timed keys under strace (0: none)")
    ap.add_argument("--rounds", type=int, default=1, help="plain runs per binary")
    ap.add_argument("--gap-ms", type=int, default=20, help="keylat's pause after each echo")
    ap.add_argument("--args", default="", help="more consoled options")
    ap.add_argument("--out", default="echotrace-out")
    a = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # the guest is killed on exit
    os.makedirs(a.out, exist_ok=True)
    consoled = os.path.abspath(a.consoled)
    keylat = os.path.normpath(os.path.join(os.path.dirname(consoled), "..", "tests", "bench",
                                           "keylat"))
    elves = {vmtest.GUEST_BACKEND_DIR + "/" + n + ".so": p
             for n, p in vmtest.find_plugins(consoled).items()}
    elves.update({"/usr/bin/strace": "/usr/bin/strace", latency.G_KEYLAT: keylat})
    if a.compare:
        elves[G_COMPARE] = os.path.abspath(a.compare)
    files = {latency.G_LAT_SH: os.path.join(HERE, "lat.sh"),
             latency.G_LAT_RUN: "exec keylat --run /bin/sh %s \"$@\"\n" % latency.G_LAT_SH}
    with vmlib.VM(a.card, consoled=consoled, initramfs_extra=files, extra_elves=elves,
                  out_dir=a.out) as vm:
        print("# %s booted, fb0 %s" % (a.card, vm.fb_info), flush=True)
        bpp = int(vm.check("cat /sys/class/graphics/fb0/bits_per_pixel").strip())

        def one(binary, tag, trace, keys):
            d = G_DIR
            vm.check("rm -rf %s; mkdir -p %s" % (d, d))
            vm.check("(keylat --gap-ms=%d bpp %d wait-file %s/ready sleep 2000 echo %d touch"
                     " %s/e1 >%s/keylat.log 2>&1; echo $? >%s/status) </dev/null >/dev/null"
                     " 2>&1 &" % (a.gap_ms, bpp, d, keys, d, d, d))
            vm.check("i=0; until grep -q created %s/keylat.log || [ $i -gt 100 ]; do sleep 0.1;"
                     " i=$((i + 1)); done" % d, timeout=60)
            vm.check("(CONSOLED_BACKEND_DIR=%s %s%s --vt=1 --fbdev=/dev/fb0 --font-file=%s"
                     " --verbose --stats %s --login -- /bin/sh %s %s/ready >%s/term.log 2>&1 &)"
                     " </dev/null >/dev/null 2>&1"
                     % (vmtest.GUEST_BACKEND_DIR, "strace -tt -T -o %s/strace " % d if trace
                        else "", binary, FONT, a.args, latency.G_LAT_RUN, d, d))
            latency.wait_file(vm, d + "/status", d + "/status", 600)
            log = vm.check("cat %s/keylat.log; echo status $(cat %s/status)" % (d, d))
            vm.run("pkill -x keylat; pkill -x strace; pkill -x consoled; sleep 1;"
                   " pkill -9 -x consoled; chvt 1", timeout=30)
            res = [line for line in log.splitlines() if "median" in line or "status" in line]
            print("# %s %s: %s" % (tag, "strace" if trace else "plain", "; ".join(res)),
                  flush=True)
            if trace:
                txt = vm.check(ANALYSE % {"d": d}, timeout=900)
                with open(os.path.join(a.out, "strace-%s.txt" % tag), "w") as f:
                    f.write(txt)
                print(txt, flush=True)
            else:
                lines = vm.check("sed -n 's/.*Key: //p' %s/term.log | tr -cs '0-9\\n-' ' '" % d,
                                 timeout=120)
                print("# %s Key: medians %s" % (tag, latency.key_stages(lines)), flush=True)

        bins = [("new", "consoled")] + ([("old", G_COMPARE)] if a.compare else [])
        if a.trace_keys:
            for tag, binary in bins:
                one(binary, tag, True, a.trace_keys)
        for r in range(a.rounds):
            for tag, binary in (bins if r % 2 == 0 else bins[::-1]):
                print("# %s host load %s" % (time.strftime("%H:%M:%S"),
                                              open("/proc/loadavg").read().split()[0]), flush=True)
                one(binary, tag, False, a.keys)


if __name__ == "__main__":
    main()
