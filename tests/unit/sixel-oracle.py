#!/usr/bin/env python3
# The sixel decoder against libsixel's: images made here (a gradient, sharp
# edges at sizes that are no multiple of 6, a photo-like noise pattern) are
# encoded by img2sixel (libsixel) and by chafa, each stream is decoded by
# libsixel's sixel2png and by consoled's decoder (sixel-dump, given as the
# first argument), and the two must agree pixel for pixel: the same size and
# the same colour wherever the stream drew (a pixel our decoder leaves
# transparent, P2 = 1, compares with nothing; their count must be 0 where
# the encoder covers the whole image). A missing tool is a failure.
#     sixel-oracle.py build/tests/unit/sixel-dump
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vm"))
from screen import Image, read_png, save_png  # noqa: E402  (PNG in and out, zlib only)


def pam_read(data):
    head, _, body = data.partition(b"ENDHDR\n")
    fields = dict(line.split(b" ", 1) for line in head.split(b"\n")[1:] if b" " in line)
    w, h = int(fields[b"WIDTH"]), int(fields[b"HEIGHT"])
    return w, h, [tuple(body[i:i + 4]) for i in range(0, w * h * 4, 4)]


def images():
    rnd = random.Random(1)
    w, h = 256, 64  # a gradient: every column another red, rows another green
    yield "gradient", w, h, [v for y in range(h) for x in range(w) for v in (x, y * 4, 255 - x)]
    w, h = 97, 53  # sharp edges: stripes and a checkerboard, no multiple of 6
    px = []
    for y in range(h):
        for x in range(w):
            if x < 30:
                px += (255, 0, 0) if (x // 3) % 2 else (0, 0, 255)
            elif y < 20:
                px += (255, 255, 255) if (x // 5 + y // 5) % 2 else (0, 0, 0)
            else:
                px += (0, 200, 0) if x + y < 110 else (250, 250, 0)
    yield "edges", w, h, px
    w, h = 160, 90  # photo-like: smooth shapes under noise
    px = []
    for y in range(h):
        for x in range(w):
            base = ((x * 3 + y) % 256, (y * 5 + x // 2) % 256, (x * y) % 256)
            px += [max(0, min(255, c + rnd.randint(-40, 40))) for c in base]
    yield "noise", w, h, px


def main():
    dump = sys.argv[1]
    # A cross build's binary runs under meson's exe_wrapper (qemu-user).
    wrapper = shlex.split(os.environ.get("MESON_EXE_WRAPPER", ""))
    tools = {t: shutil.which(t) for t in ("img2sixel", "chafa", "sixel2png")}
    missing = [t for t, p in tools.items() if not p]
    if missing:
        print("sixel-oracle: missing %s (tests/deps.sh installs libsixel-bin and chafa)"
              % ", ".join(missing))
        return 1
    encoders = [
        ("img2sixel", [tools["img2sixel"]]),
        ("img2sixel-16", [tools["img2sixel"], "-p", "16"]),
        ("chafa", [tools["chafa"], "--format", "sixel", "--size", "20x8", "--animate", "off"]),
    ]
    failed = 0
    compared = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, w, h, px in images():
            png = os.path.join(tmp, name + ".png")
            save_png(Image(w, h, bytes(px)), png)
            for enc, cmd in encoders:
                six = os.path.join(tmp, "%s-%s.six" % (name, enc))
                with open(six, "wb") as f:
                    subprocess.run(cmd + [png], stdout=f, check=True)
                out = os.path.join(tmp, "%s-%s.png" % (name, enc))
                subprocess.run([tools["sixel2png"], "-i", six, "-o", out], check=True)
                theirs = read_png(out)  # 8-bit RGB, as sixel2png writes it
                lw, lh = theirs.width, theirs.height
                lpx = [theirs.pixel(i % lw, i // lw) for i in range(lw * lh)]
                with open(six, "rb") as f:
                    r = subprocess.run(wrapper + [dump], stdin=f, stdout=subprocess.PIPE, check=True)
                ow, oh, opx = pam_read(r.stdout)
                what = "%s by %s" % (name, enc)
                if (ow, oh) != (lw, lh):
                    print("%s: %dx%d, sixel2png %dx%d" % (what, ow, oh, lw, lh))
                    failed += 1
                    continue
                clear = sum(1 for p in opx if p[3] == 0)
                bad = [i for i in range(ow * oh) if opx[i][3] and opx[i][:3] != lpx[i][:3]]
                if bad:
                    i = bad[0]
                    print("%s: %d of %d pixels differ, first at %d,%d: %s, sixel2png %s"
                          % (what, len(bad), ow * oh, i % ow, i // ow, opx[i], lpx[i]))
                    failed += 1
                elif clear:
                    print("%s: %d pixels left transparent" % (what, clear))
                    failed += 1
                else:
                    print("%s: %dx%d, %d bytes, every pixel as sixel2png's"
                          % (what, ow, oh, os.path.getsize(six)))
                compared += 1
    print("%d passed, %d failed" % (compared - failed, failed))
    return 1 if failed or not compared else 0


if __name__ == "__main__":
    sys.exit(main())
