#!/usr/bin/env python3
"""keycost: consoled's own instructions per typed key, counted in the guest.

    python3 tests/bench/keycost.py --consoled BUILD/daemon/consoled [--card cirrus]
        [--keys 200] [--base-keys 40] [--gap-ms 120] [--top 25]

Boots one guest (tests/vm), runs consoled under valgrind's callgrind on tty1
with `cat` in canonical mode with echo as the session (the line discipline
echoes each key), types keys through QEMU's keyboard GAP_MS apart (a
person's pace: each key's echo, and then the mirror and the snapshot that
follow a pause), stops consoled and sums each function's own instructions
from callgrind's output in the guest (a busybox awk script; the 300
largest come over the serial line, which is too slow for all of them). It does this twice in the same
boot, with BASE_KEYS and with BASE_KEYS + KEYS keys: the difference divided
by KEYS is what a key costs, with consoled's start (fonts, keymap, the first
frame) and its end taken out. Instructions, not time: the figure is the same
however busy the host is (README.md, "Instructions per key in the guest").

It needs valgrind on the host (Debian's package): its callgrind tool goes
into the guest. User space only: the kernel's share of a key (the pty, the
fb writes, the wake-ups) is not counted.
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "vm"))

import vmlib  # noqa: E402

VG_LIB = "/usr/libexec/valgrind"
G_AWK = "/usr/share/consoled-keycost.awk"
G_OUT = "/tmp/keycost.out"

# Each function's own cost (the last event column, Ir) from a callgrind
# output file: "fn=" starts a function (compressed names: "(id) name" the
# first time, "(id)" after; cfn= lines name ids too), the line after a
# "calls=" line is the call's inclusive cost and is not the caller's own.
SUM_AWK = r"""
function name(s,   id, rest) {
	if (match(s, /^\([0-9]+\)/)) {
		id = substr(s, 1, RLENGTH); rest = substr(s, RLENGTH + 2)
		if (rest != "") names[id] = rest
		return (id in names) ? names[id] : id
	}
	return s
}
/^fn=/ { fn = name(substr($0, 4)); next }
/^cfn=/ { name(substr($0, 5)); next }
/^calls=/ { skip = 1; next }
/^[0-9+*-]/ {
	if (skip) { skip = 0; next }
	n = split($0, a, " "); own[fn] += a[n]; total += a[n]; next
}
END { for (f in own) printf "%d %s\n", own[f], f; printf "%d TOTAL\n", total }
"""


def run_once(vm, keys, gap):
    """{function: instructions} of one consoled run with `keys` keys typed."""
    vm.check("rm -f %s; (VALGRIND_LIB=%s valgrind.bin --tool=callgrind"
             " --callgrind-out-file=%s consoled --vt=1 --fbdev=/dev/fb0 --login --"
             " /bin/sh -c 'stty echo icanon; exec cat >/dev/null' >/tmp/keycost.log 2>&1 &)"
             " </dev/null >/dev/null 2>&1" % (G_OUT, VG_LIB, G_OUT))
    # consoled's start under callgrind, under TCG: its first frame
    deadline = time.monotonic() + 180
    while "Scrolling:" not in vm.run("cat /tmp/keycost.log")[0]:
        if time.monotonic() > deadline:
            raise SystemExit("keycost: consoled did not start under callgrind:\n%s"
                             % vm.run("tail -n 20 /tmp/keycost.log")[0])
        time.sleep(2)
    time.sleep(5)
    for i in range(keys):
        vm.send_keys(["a" if i % 2 == 0 else "b"], hold_ms=10)
        time.sleep(gap / 1000)
    time.sleep(3)
    vm.run("pkill -TERM -f tool=callgrind; i=0; while pgrep -f tool=callgrind >/dev/null"
           " && [ $i -lt 60 ]; do sleep 1; i=$((i + 1)); done", timeout=90)
    # the largest only (the serial line is slow): the total comes first
    out = vm.check("awk -f %s %s | sort -rn | head -n 300" % (G_AWK, G_OUT), timeout=300)
    costs = {}
    for line in out.splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2 and parts[0].isdigit():
            costs[parts[1].strip()] = int(parts[0])
    if "TOTAL" not in costs:
        raise SystemExit("keycost: no callgrind output:\n%s" % out)
    return costs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--consoled", required=True)
    ap.add_argument("--card", default="cirrus")
    ap.add_argument("--keys", type=int, default=200)
    ap.add_argument("--base-keys", type=int, default=40)
    ap.add_argument("--gap-ms", type=int, default=120)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--out", help="keep the guest's logs here")
    args = ap.parse_args()
    if args.keys <= 0 or args.base_keys < 0:
        raise SystemExit("keycost: --keys must be above 0, --base-keys 0 or more")
    tool = os.path.join(VG_LIB, "callgrind-amd64-linux")
    if not os.path.exists(tool) or not os.path.exists("/usr/bin/valgrind.bin"):
        raise SystemExit("keycost: needs valgrind on the host (apt-get install valgrind)")
    elves = {"/usr/bin/valgrind.bin": "/usr/bin/valgrind.bin", tool: tool,
             os.path.join(VG_LIB, "vgpreload_core-amd64-linux.so"):
             os.path.join(VG_LIB, "vgpreload_core-amd64-linux.so")}
    extra = {os.path.join(VG_LIB, "default.supp"): os.path.join(VG_LIB, "default.supp"),
             G_AWK: SUM_AWK}
    with vmlib.VM(args.card, consoled=args.consoled, extra_elves=elves, initramfs_extra=extra,
                  memory=1024, out_dir=args.out) as vm:
        base = run_once(vm, args.base_keys, args.gap_ms)
        more = run_once(vm, args.base_keys + args.keys, args.gap_ms)
    per_key = {f: (more.get(f, 0) - base.get(f, 0)) / args.keys for f in set(base) | set(more)}
    print("keycost: %s, consoled %s, %d keys %d ms apart (runs of %d and %d keys)"
          % (args.card, args.consoled, args.keys, args.gap_ms, args.base_keys,
             args.base_keys + args.keys))
    print("consoled's own instructions per key (user space): %.0f" % per_key.pop("TOTAL"))
    for f, n in sorted(per_key.items(), key=lambda kv: -kv[1])[:args.top]:
        print("%10.0f  %s" % (n, f))


if __name__ == "__main__":
    main()
