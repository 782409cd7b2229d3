"""Terminal protocol checks of the systemd guest, run by systemdtest.py
among its program checks (they share the test user's login on tty1):

  queries   The user's bash asks consoled what programs ask a terminal
            (a script in raw mode writes each query to /dev/tty and reads
            the answer up to its final byte, with a 3 s timeout): DA1 (with
            4, sixel, in its list), XTVERSION, XTWINOPS 18 t, 14 t and 16 t,
            XTGETTCAP TN, Co and RGB, DECRQSS for SGR (after SGR 1;31),
            DECSTBM and DECSCUSR, and DECRQM 2026. Each answer must be xterm's form with consoled's
            values: its version, the grid the screen shows, the cell of the
            font (8x16), TERM's name.
  vim-cursor
            vim with the usual vimrc lines for a bar in insert mode
            (t_SI = CSI 6 SP q, t_EI = CSI 2 SP q): after i the cursor's
            cell shows the glyph under it as text is drawn, with its first
            pixel column (an 8-wide font: 1 column) in the foreground
            colour; after Esc the cell is a block again (its colours
            swapped); :q.
  images    img2sixel and chafa --format sixel, run by the user on weston's
            pictures (its photo-like background scaled to 128 pixels wide,
            a 256x256 icon as 6x5 of chafa's cells), show their image: the bytes each wrote (kept
            with tee) are decoded on the host by libsixel's sixel2png, and
            that picture must be on the glass at the top left (where
            `clear` left the cursor) pixel for pixel, at 8 bpp through the
            mapping consoled-terminal(7) IMAGES documents (sixeltest.Map8).
"""

import base64
import binascii
import os
import re
import subprocess
import tempfile
import time

import screen
import sixeltest

CHECKS = ["queries", "vim-cursor", "images"]

# Each query: a name, what is written (printf %b), the answer's final byte.
QUERIES = [
    ("da1", r"\033[c", "c"),
    ("xtversion", r"\033[>q", "\\"),
    ("chars", r"\033[18t", "t"),
    ("pixels", r"\033[14t", "t"),
    ("cell", r"\033[16t", "t"),
    ("tn", r"\033P+q544e\033\\", "\\"),
    ("co", r"\033P+q436f\033\\", "\\"),
    ("rgb", r"\033P+q524742\033\\", "\\"),
    ("sgr", r"\033[1;31m\033P$qm\033\\", "\\"),
    ("stbm", r"\033P$qr\033\\", "\\"),
    ("decscusr", r"\033P$q q\033\\", "\\"),
    ("decrqm2026", r"\033[?2026$p", "y"),
]

# The script the user runs: raw mode on the tty, each answer to /tmp/q.out
# as "name hex-bytes" (empty after the timeout).
SCRIPT = r"""#!/bin/bash
old=$(stty -g </dev/tty)
stty raw -echo </dev/tty
: > /tmp/q.out
q() {
	printf '%b' "$2" > /dev/tty
	ans=
	IFS= read -r -d "$3" -t 3 ans </dev/tty && ans="$ans$3"
	printf '%s %s\n' "$1" "$(printf '%s' "$ans" | od -An -tx1 | tr -d ' \n')" >> /tmp/q.out
}
""" + "".join("q %s '%s' '%s'\n" % (n, w, f) for n, w, f in QUERIES) + r"""printf '\033[m' > /dev/tty
stty "$old" </dev/tty
echo QUERIES-DONE
"""


def _sd():
    import systemdtest
    return systemdtest


def check_queries(r):
    sd = _sd()
    r.prog_shell("C.UTF-8")
    r.sh("cat > /tmp/q.sh <<'EOF'\n%sEOF\nchmod 755 /tmp/q.sh; rm -f /tmp/q.out" % SCRIPT)
    r.vm.send_text("clear; /tmp/q.sh\n")
    decoded = r.prog_wait(lambda s: any(l.rstrip() == "QUERIES-DONE" for l in s.lines),
                          "the query script did not finish", timeout=60)
    got = {}
    for line in r.sh("cat /tmp/q.out").splitlines():
        name, _, hexbytes = line.partition(" ")
        got[name] = binascii.unhexlify(hexbytes.strip()).decode("latin-1")
    version = r.sh("consoled --version").split()[-1]
    rows, cols = decoded.rows, decoded.cols
    cw, ch = 8, 16  # the guest's font (systemdtest's FONT)
    want = {
        "xtversion": "\033P>|consoled %s\033\\" % version,
        "chars": "\033[8;%d;%dt" % (rows, cols),
        "pixels": "\033[4;%d;%dt" % (rows * ch, cols * cw),
        "cell": "\033[6;%d;%dt" % (ch, cw),
        "tn": "\033P1+r544e=%s\033\\" % binascii.hexlify(b"xterm-256color").decode().upper(),
        "co": "\033P1+r436f=%s\033\\" % binascii.hexlify(b"256").decode().upper(),
        "rgb": "\033P1+r524742=%s\033\\" % binascii.hexlify(b"8/8/8").decode().upper(),
        "sgr": "\033P1$r0;1;31m\033\\",
        "stbm": "\033P1$r1;%dr\033\\" % rows,
        "decscusr": "\033P1$r2 q\033\\",
        "decrqm2026": "\033[?2026;2$y",
    }
    bad = ["%s: got %r, expected %r" % (k, got.get(k), v) for k, v in want.items()
           if got.get(k) != v]
    # DA1: a VT-class answer (CSI ? 6x ; features c) that lists 4, sixel.
    if not re.fullmatch(r"\033\[\?6[0-9](;\d+)*c", got.get("da1", "")) or \
            "4" not in got["da1"][3:-1].split(";")[1:]:
        bad.append("da1: got %r, expected CSI ? 6x ; ... 4 ... c" % got.get("da1"))
    if bad:
        r.fail("the terminal's answers differ from xterm's form with consoled's values:\n  "
               + "\n  ".join(bad))
    print("# %d queries answered as expected" % len(got))
    r.vm.send_text("clear\n")
    r.prog_wait(lambda s: s.lines[0].startswith(sd.SHELL_PROMPT), "no prompt after clear")


def _cell(img, col, row, cw=8, ch=16):
    return [[img.pixel(col * cw + x, row * ch + y) for x in range(cw)] for y in range(ch)]


def _cursor_look(img, col, row):
    """What the cursor draws on cell col,row (an 8x16 cell, grey on black
    text): "bar" (the first column all the foreground, the rest mostly
    black), "block" (mostly the foreground: the colours swapped) or
    None."""
    cell = _cell(img, col, row)
    fg = cell[0][0]
    lit = sum(1 for line in cell for p in line if p == fg)
    if all(line[0] == fg for line in cell) and fg != (0, 0, 0) and lit < 64:
        return "bar"
    if fg != (0, 0, 0) and lit > 64:
        return "block"
    return None


def check_vim_cursor(r):
    sd = _sd()
    r.prog_shell("C.UTF-8")
    home = "/home/%s" % sd.USER
    r.sh("printf '%%s\\n' 'let &t_SI = \"\\e[6 q\"' 'let &t_EI = \"\\e[2 q\"' > %s/.vimrc"
         " && printf 'hello cursor\\n' > /tmp/cursor.txt && chown %s: %s/.vimrc /tmp/cursor.txt"
         % (home, sd.USER, home))
    before, row, width = r.prog_start("vim /tmp/cursor.txt")
    r.prog_wait(lambda s: s.lines[0].rstrip() == "hello cursor" and "cursor.txt" in s.lines[-1],
                "vim did not open the file")
    looks = []
    for key, want in (("i", "bar"), ("esc", "block")):
        r.vm.send_keys([key])
        deadline = time.monotonic() + 10
        while True:
            img = r.vm.grab()
            look = _cursor_look(img, 0, 0)
            if look == want or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        looks.append(look)
        if look != want:
            path = r.vm.save_png(img, "systemd-vim-cursor.png")
            r.fail("after %s in vim the cursor on 'h' is %s, not a %s (picture: %s)"
                   % (key, look, want, path))
    r.sh("rm -f %s/.vimrc" % home)
    r.vm.send_text(":q\n")
    r.prog_back(before, row, width, "vim's :q")
    print("# vim's cursor: %s in insert mode, %s after Esc" % tuple(looks))


def check_images(r):
    r.prog_shell("C.UTF-8")
    bpp = int(r.sh("cat /sys/class/graphics/fb0/bits_per_pixel").strip())
    mapping = sixeltest.Map8() if bpp == 8 else None
    # pictures every guest has (weston's, RGB without alpha): a photo-like
    # background scaled by img2sixel, a 256x256 icon by chafa (small: the
    # stream goes back to the host over the serial line)
    programs = [
        ("img2sixel", "img2sixel -w 128 /usr/share/weston/background.png"),
        ("chafa", "chafa --format sixel --size 6x5 --stretch --animate off"
         " /usr/share/weston/icon_ivi_clickdot.png"),
    ]
    for name, command in programs:
        # the marker is computed by the shell: the typed line cannot match
        r.vm.send_text("clear; %s | tee /tmp/%s.six; echo; echo %s-DONE-$((6*7))\n"
                       % (command, name, name))
        r.prog_wait(lambda s, n=name: any(l.rstrip() == n + "-DONE-42" for l in s.lines),
                    "%s did not finish" % name, timeout=60)
        size = r.sh("stat -c %%s /tmp/%s.six 2>/dev/null || echo 0" % name).strip()
        print("# %s wrote %s bytes" % (name, size), flush=True)
        # the serial line moves about 1 KB/s under TCG: small pictures
        out, status = r.vm.run("base64 -w0 /tmp/%s.six" % name, timeout=90)
        six = base64.b64decode(out.strip()) if status == 0 else b""
        if len(six) < 100:
            img = r.vm.grab()
            r.fail("%s wrote %d bytes (picture: %s); the screen shows:\n%s"
                   % (name, len(six), r.vm.save_png(img, "systemd-%s.png" % name),
                      r.prog_screen(img).text()))
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "s.six"), "wb") as f:
                f.write(six)
            subprocess.run(["sixel2png", "-i", os.path.join(tmp, "s.six"), "-o",
                            os.path.join(tmp, "s.png")], check=True, capture_output=True)
            pic = screen.read_png(os.path.join(tmp, "s.png"))
        # `clear` put the cursor at the top left: the picture starts there
        deadline = time.monotonic() + 10
        while True:
            img = r.vm.grab()
            bad, first = 0, []
            for y in range(pic.height):
                want = pic.data[y * pic.width * 3:(y + 1) * pic.width * 3]
                if mapping:
                    want = b"".join(bytes(mapping(tuple(want[i:i + 3])))
                                    for i in range(0, len(want), 3))
                i = y * img.width * 3
                bad += sixeltest.row_diff(img.data[i:i + pic.width * 3], want, y, first, 3)
            if not bad or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        path = r.vm.save_png(img, "systemd-%s.png" % name)
        if bad:
            r.fail("%s's %dx%d picture (%d bytes of sixel) is not on the glass at the top "
                   "left at %d bpp: %d pixels differ (%s; picture: %s)"
                   % (name, pic.width, pic.height, len(six), bpp, bad, "; ".join(first), path))
        print("# %s: %dx%d from %d bytes of sixel, equal to sixel2png's at %d bpp (%s)"
              % (name, pic.width, pic.height, len(six), bpp, path))
    r.vm.send_text("clear\n")


def install(runner_cls, sd_module):
    for name in CHECKS:
        setattr(runner_cls, "check_" + name.replace("-", "_"),
                globals()["check_" + name.replace("-", "_")])
