#!/usr/bin/env python3
# Writes the seed corpus of fuzz-sixel into corpus/sixel/: each file is the
# 4-byte header fuzz-sixel.c reads (P2 and shared registers, the largest
# width - 1, the largest height - 1, the piece size) and sixel data:
# every command by hand, huge numbers, repeats and sizes, cut introducers,
# and small streams that img2sixel and chafa wrote (their DCS introducer and
# ST taken off; skipped when a tool is missing, the committed files stay).
# The output is committed, so this only needs to run when seeds are added.
import os
import shutil
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "corpus", "sixel")
sys.path.insert(0, os.path.join(here, "..", "vm"))
from screen import Image, save_png  # noqa: E402


def header(p2=0, shared=False, w=64, h=64, piece=3):
    return bytes([p2 | (0x80 if shared else 0), w - 1, h - 1, piece - 1])


seeds = {
    "plain": header() + b"#1~~@@AB$#2!3N-#3??~",
    "transparent": header(p2=1) + b"\"1;1;20;14#1!5A-#2W",
    "raster": header() + b"\"2;1;40;30#0;2;100;0;0#0!10~",
    "hls-rgb": header(shared=True) + b"#5;1;0;50;100~#6;1;120;75;100~#7;2;0;50;100~#8;1;300;50;0~",
    "out-of-range": header() + b"#1;2;101;0;0~#2;1;361;50;50~#3;9;1;1;1~#4;1;1~#5;2;1;2;3;4;5~",
    "wrap": header() + b"#1025;2;100;100;100#1~#2047~#99999999999999999999~",
    "huge-repeat": header(w=256, h=8) + b"!999999999~!4294967296~$!0~!~",
    "huge-raster": header(w=256, h=256) + b"\"1;1;30000;30000~\"0;0;0;0~\"99999999999;5",
    "clip": header(w=4, h=4) + b"!10~-~-~$~~~~~~~",
    "cut": header(piece=1) + b"#1;2;5",
    "cut-repeat": header(piece=1) + b"#1!12",
    "spaces": header() + b"#1 ;\r2;\n100; 0;0 ! 3 ~ \" 1 ; 1 ; 5 ; 5 @",
    "controls": header() + bytes(range(0, 256)) + b"~",
    "bands": header(w=32, h=256) + b"~-" * 60,
}


def encoded():
    tools = [shutil.which(t) for t in ("img2sixel", "chafa")]
    if not all(tools):
        print("gen-sixel-corpus: img2sixel or chafa missing, their streams not written")
        return
    w, h = 24, 20
    px = bytes(v for y in range(h) for x in range(w)
               for v in ((x * 10) % 256, (y * 12) % 256, 255 if (x // 4 + y // 4) % 2 else 0))
    with tempfile.TemporaryDirectory() as tmp:
        png = os.path.join(tmp, "i.png")
        save_png(Image(w, h, px), png)
        for name, cmd in (("img2sixel", [tools[0], png]),
                          ("img2sixel-8", [tools[0], "-p", "8", png]),
                          ("chafa", [tools[1], "--format", "sixel", "--size", "4x2", png])):
            s = subprocess.run(cmd, stdout=subprocess.PIPE, check=True).stdout
            body = s[s.index(b"q") + 1:]
            body = body[:body.index(b"\033")] if b"\033" in body else body
            p2 = 1 if s.startswith(b"\033P0;1") else 0
            seeds["enc-" + name] = header(p2=p2, w=64, h=32, piece=16) + body


encoded()
os.makedirs(out, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
print("wrote %d seeds to %s" % (len(seeds), out))
