#!/usr/bin/python3
"""Turns between guests that run at the same time.

meson runs the VM tests two at a time on two cores (tests/vm/meson.build).
Most checks do not mind a second TCG guest beside them; the ones whose
verdict is a wall-clock bound (an echo's latency, key repeats counted in a
window, a blink period, frames' lateness) do. Every check and every boot
takes a turn: a shared one for most, an exclusive one for the timed checks,
so that a timed check runs while the other guest only idles between two of
its checks.

The turns are file locks (flock) on the path in $CONSOLED_VM_TURNS (meson
sets it for the vm suite); without it, a guest runs alone and every turn is
free. A second lock, the gate, keeps a timed check from waiting forever:
a shared turn passes the gate on the way in, an exclusive one holds it
while it waits for the shared ones to end and while it runs, so the other
guest's next check waits at the gate.
"""
import contextlib
import fcntl
import os

ENV = "CONSOLED_VM_TURNS"


@contextlib.contextmanager
def turn(exclusive=False):
    path = os.environ.get(ENV)
    if not path:
        yield
        return
    with open(path + ".gate", "a") as gate, open(path, "a") as main:
        fcntl.flock(gate, fcntl.LOCK_EX)
        try:
            fcntl.flock(main, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        finally:
            if not exclusive:
                fcntl.flock(gate, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(main, fcntl.LOCK_UN)
            if exclusive:
                fcntl.flock(gate, fcntl.LOCK_UN)


def main(argv):
    """turns.py COMMAND [ARG...]: runs the command in a shared turn (a
    step of tests/cross/run in the vm suite's pool); its exit status."""
    import subprocess
    with turn():
        return subprocess.call(argv)


if __name__ == "__main__":
    import sys
    sys.exit(main(sys.argv[1:]))
