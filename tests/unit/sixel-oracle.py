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
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib


def png_write(path, w, h, rgb):
    raw = b"".join(b"\0" + bytes(rgb[y * w * 3:(y + 1) * w * 3]) for y in range(h))

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def png_read(path):
    """8-bit PNG, colour types 0, 2, 3, 4, 6, not interlaced: (w, h, [(r, g, b, a)])."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    i, idat, plte, trns = 8, b"", None, None
    while i < len(data):
        n, t = struct.unpack(">I4s", data[i:i + 8])
        body = data[i + 8:i + 8 + n]
        if t == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif t == b"PLTE":
            plte = body
        elif t == b"tRNS":
            trns = body
        elif t == b"IDAT":
            idat += body
        i += 12 + n
    assert depth == 8 and interlace == 0, "%s: depth %d interlace %d" % (path, depth, interlace)
    bpp = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[ctype]
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    out = []
    pos = 0
    for _ in range(h):
        f = raw[pos]
        line = bytearray(raw[pos + 1:pos + 1 + stride])
        pos += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        for x in range(w):
            px = line[x * bpp:(x + 1) * bpp]
            if ctype == 0:
                out.append((px[0], px[0], px[0], 255))
            elif ctype == 2:
                out.append((px[0], px[1], px[2], 255))
            elif ctype == 3:
                k = px[0]
                alpha = trns[k] if trns and k < len(trns) else 255
                out.append((plte[3 * k], plte[3 * k + 1], plte[3 * k + 2], alpha))
            elif ctype == 4:
                out.append((px[0], px[0], px[0], px[1]))
            else:
                out.append(tuple(px))
        prev = line
    return w, h, out


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
            png_write(png, w, h, px)
            for enc, cmd in encoders:
                six = os.path.join(tmp, "%s-%s.six" % (name, enc))
                with open(six, "wb") as f:
                    subprocess.run(cmd + [png], stdout=f, check=True)
                out = os.path.join(tmp, "%s-%s.png" % (name, enc))
                subprocess.run([tools["sixel2png"], "-i", six, "-o", out], check=True)
                lw, lh, lpx = png_read(out)
                with open(six, "rb") as f:
                    r = subprocess.run([dump], stdin=f, stdout=subprocess.PIPE, check=True)
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
