#!/usr/bin/python3
"""The key capabilities of consoled's TERM, and the key that sends each.

The terminfo entry is the oracle of what consoled sends for a key: this module
reads it (`infocmp -x -1 xterm-256color`) and names, for every key
capability, the key, modifiers and terminal modes that must send its bytes,
or why consoled cannot send them. The names come from xterm's rules for its
own entry: kf13..kf24 are Shift+F1..F12, kf25.. Ctrl, kf37.. Ctrl+Shift,
kf49.. Alt, kf61.. Alt+Shift; kUP, kDN3, kLFT5, ... carry xterm's modifier
parameter in the suffix (none = 2); the unmodified cursor keys, khome and kend
are the application cursor mode's forms (the mode ncurses sets with smkx), the
keypad's those of application keypad mode. A key capability not covered by
these rules is an error, so that a new one gets a decision.

vmtest.py's keys-terminfo check types the keys in the guest (see KEY_QCODES).
tests/unit/test-keys.c checks daemon/terminal/keys.c against the same table, committed
as tests/unit/terminfo-keys.h:

    terminfokeys.py --header tests/unit/terminfo-keys.h   # write it
    terminfokeys.py --check tests/unit/terminfo-keys.h    # the unit test: equal
                                                         # to the host's entry?
"""

import argparse
import re
import subprocess
import sys

TERM = "xterm-256color"

# xterm's modifier parameter: 1 + Shift 1 + Alt 2 + Ctrl 4.
MOD_BITS = (("shift", 1), ("alt", 2), ("ctrl", 4))

# Cursor and editing keys with modified forms kXXX<m>.
MODIFIED_KEYS = {"kUP": "Up", "kDN": "Down", "kLFT": "Left", "kRIT": "Right",
                 "kHOM": "Home", "kEND": "End", "kDC": "Delete", "kIC": "Insert",
                 "kNXT": "Next", "kPRV": "Prior"}

# Unmodified keys: cap -> (keysym, modes).
PLAIN_KEYS = {
    "kbs": ("BackSpace", ()),
    "kcuu1": ("Up", ("ckm",)), "kcud1": ("Down", ("ckm",)),
    "kcuf1": ("Right", ("ckm",)), "kcub1": ("Left", ("ckm",)),
    "khome": ("Home", ("ckm",)), "kend": ("End", ("ckm",)),
    # the keypad's 5 with Num Lock off (xkb's KP_Begin): xterm's Begin key
    "kbeg": ("KP_Begin", ("ckm",)), "kp5": ("KP_Begin", ("ckm",)),
    "kdch1": ("Delete", ()), "kich1": ("Insert", ()),
    "knp": ("Next", ()), "kpp": ("Prior", ()),
    "kent": ("KP_Enter", ("kpam",)),
    "kpADD": ("KP_Add", ("kpam",)), "kpSUB": ("KP_Subtract", ("kpam",)),
    "kpMUL": ("KP_Multiply", ("kpam",)), "kpDIV": ("KP_Divide", ("kpam",)),
}

# Keys with modifiers that are not in MODIFIED_KEYS: cap -> (keysym, mods).
OTHER_KEYS = {
    "kcbt": ("ISO_Left_Tab", ("shift",)),  # Shift+Tab (xkb's ISO_Left_Tab)
    "kind": ("Down", ("shift",)),
    "kri": ("Up", ("shift",)),
}

_NUMLOCK = ("the keypad's digits and point in application keypad mode: with Num Lock on"
            " they type the digit, with Num Lock off they are the cursor and editing keys,"
            " as in xterm (its numLock resource)")
# Capabilities no key sends: cap -> reason.
UNPRODUCIBLE = {
    "kmous": "the prefix of mouse reports, not a key",
    "ka1": _NUMLOCK, "ka2": _NUMLOCK, "ka3": _NUMLOCK, "kb1": _NUMLOCK, "kb2": _NUMLOCK,
    "kb3": _NUMLOCK, "kc1": _NUMLOCK, "kc2": _NUMLOCK, "kc3": _NUMLOCK,
    "kpZRO": _NUMLOCK, "kpDOT": _NUMLOCK,
    "kpCMA": ("a keypad comma (KP_Separator) with Num Lock off: no such key in the"
              " usual keymaps (xkb's KPPT is KP_Decimal)"),
    "kDC7": "consoled takes Ctrl+Alt+Delete (it does what the kernel console does)",
    "kIC": "consoled takes Shift+Insert: it pastes the selection (as xterm does)",
}
for _cap, _what in (("kPRV", "Shift+PageUp"), ("kNXT", "Shift+PageDown")):
    for _suffix, _mods in (("", ""), ("4", "Alt+"), ("6", "Ctrl+")):
        UNPRODUCIBLE[_cap + _suffix] = ("consoled takes %s%s: the scrollback"
                                        " (with any modifier beside Shift)" % (_mods, _what))


def decode(value):
    """The bytes of a terminfo string capability's value."""
    out = bytearray()
    i = 0
    simple = {"E": 27, "e": 27, "n": 10, "l": 10, "r": 13, "t": 9, "b": 8, "f": 12,
              "s": 32, "^": 94, "\\": 92, ",": 44, ":": 58}
    while i < len(value):
        c = value[i]
        if c == "\\":
            n = value[i + 1]
            if n in simple:
                out.append(simple[n])
                i += 2
            elif n.isdigit():
                digits = re.match(r"[0-7]{1,3}", value[i + 1:]).group(0)
                b = int(digits, 8)
                out.append(0x80 if b == 0 else b)  # \0 is \200 in terminfo
                i += 1 + len(digits)
            else:
                raise ValueError("unknown escape \\%s in %r" % (n, value))
        elif c == "^":
            n = value[i + 1]
            out.append(127 if n == "?" else ord(n.upper()) & 0x1f)
            i += 2
        else:
            out += c.encode()
            i += 1
    return bytes(out)


def infocmp(term=TERM):
    """{cap: bytes} of the entry's string capabilities."""
    text = subprocess.run(["infocmp", "-x", "-1", term], check=True, capture_output=True,
                          text=True).stdout
    caps = {}
    for line in text.splitlines():
        m = re.match(r"^\t([A-Za-z0-9_]+)=(.*),$", line)
        if m:
            caps[m.group(1)] = decode(m.group(2))
    return caps


def mods_of_param(m):
    return tuple(name for name, bit in MOD_BITS if (m - 1) & bit)


def key_of(cap):
    """(keysym, mods, modes) of the key that sends `cap`, or a str: why none does."""
    if cap in UNPRODUCIBLE:
        return UNPRODUCIBLE[cap]
    if cap in PLAIN_KEYS:
        keysym, modes = PLAIN_KEYS[cap]
        return (keysym, (), modes)
    if cap in OTHER_KEYS:
        keysym, mods = OTHER_KEYS[cap]
        return (keysym, mods, ())
    m = re.match(r"^kf(\d+)$", cap)
    if m:
        n = int(m.group(1)) - 1
        group = [(), ("shift",), ("ctrl",), ("shift", "ctrl"), ("alt",), ("shift", "alt")]
        if n // 12 >= len(group):
            raise ValueError("%s: no rule for function keys past kf72" % cap)
        return ("F%d" % (n % 12 + 1), group[n // 12], ())
    m = re.match(r"^(k[A-Z]+)([2-8]?)$", cap)
    if m and m.group(1) in MODIFIED_KEYS:
        return (MODIFIED_KEYS[m.group(1)], mods_of_param(int(m.group(2) or 2)), ())
    raise ValueError("%s: a key capability without a rule in %s" % (cap, __file__))


def key_caps(caps):
    """[(cap, bytes, key_of(cap))] for every key capability, sorted by name."""
    return [(cap, caps[cap], key_of(cap)) for cap in sorted(caps) if cap.startswith("k")]


# QEMU qcodes of the keysyms (US layout; KP_Begin is the keypad's 5 with Num
# Lock off, ISO_Left_Tab is Tab with the Shift the capability's mods hold).
KEY_QCODES = {"BackSpace": "backspace", "Up": "up", "Down": "down", "Left": "left",
              "Right": "right", "Home": "home", "End": "end", "Insert": "insert",
              "Delete": "delete", "Prior": "pgup", "Next": "pgdn", "KP_Begin": "kp_5",
              "KP_Enter": "kp_enter", "KP_Add": "kp_add", "KP_Subtract": "kp_subtract",
              "KP_Multiply": "kp_multiply", "KP_Divide": "kp_divide", "ISO_Left_Tab": "tab"}
KEY_QCODES.update({"F%d" % n: "f%d" % n for n in range(1, 13)})


def qcodes(key):
    keysym, mods, _ = key
    return list(mods) + [KEY_QCODES[keysym]]


def c_string(b):
    return '"' + "".join("\\%03o" % c if c < 0x20 or c >= 0x7f or chr(c) in '"\\?' else chr(c)
                         for c in b) + '"'


def header(term=TERM):
    """The C table test-keys.c reads (a list of lines)."""
    mods_c = {"shift": "TSM_SHIFT_MASK", "alt": "TSM_ALT_MASK", "ctrl": "TSM_CONTROL_MASK"}
    modes_c = {"ckm": "KEYS_MODE_CURSOR_APP", "kpam": "KEYS_MODE_KEYPAD_APP"}
    lines = []
    for cap, seq, key in key_caps(infocmp(term)):
        if isinstance(key, str):
            fields = ["0", "0", "0", c_string(key.encode())]
        else:
            keysym, mods, modes = key
            fields = ["XKB_KEY_" + keysym, " | ".join(mods_c[m] for m in mods) or "0",
                      " | ".join(modes_c[m] for m in modes) or "0", "NULL"]
        lines.append('\t{"%s", %s, %d, %s},' % (cap, c_string(seq), len(seq), ", ".join(fields)))
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--header", help="write the C table to this file")
    g.add_argument("--check", help="exit 1 unless this C table is the host's entry's")
    ap.add_argument("--term", default=TERM)
    args = ap.parse_args()
    try:
        body = header(args.term)
        version = subprocess.run(["infocmp", "-V"], capture_output=True, text=True).stdout.strip()
    except FileNotFoundError:
        print("infocmp is not installed (ncurses-bin): skipped")
        return 77
    if args.header:
        with open(args.header, "w") as f:
            f.write("/* SPDX-License-Identifier: GPL-2.0-or-later */\n"
                    "/* Generated by tests/vm/terminfokeys.py --header from `infocmp -x -1 %s`\n"
                    " * (%s); do not edit. A key capability: its bytes, and the\n"
                    " * keysym, TSM_*_MASK modifiers and KEYS_MODE_* modes that send them,\n"
                    " * or why no key does. */\n" % (args.term, version))
            f.write("\n".join(body) + "\n")
        return 0
    with open(args.check) as f:
        committed = [l for l in f.read().splitlines() if l.startswith("\t{")]
    if committed != body:
        for l in sorted(set(body) - set(committed)):
            print("host's entry: " + l)
        for l in sorted(set(committed) - set(body)):
            print("committed:    " + l)
        print("%s differs from `infocmp -x -1 %s` (%s): regenerate it with --header"
              % (args.check, args.term, version))
        return 1
    print("%d key capabilities of %s (%s) as in %s" % (len(body), args.term, version, args.check))
    return 0


if __name__ == "__main__":
    sys.exit(main())
