#!/usr/bin/env python3
# Writes the seed corpus of fuzz-psf into corpus/psf/: the built-in font
# (plain and gzip'ed), small hand-made PSF1 and PSF2 fonts, and broken ones
# that each stop the parser at a different check. Run from anywhere; the
# output is committed, so this only needs to run when seeds are added.
import gzip
import os
import re
import struct
import sys

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "corpus", "psf")
src = os.path.join(here, "..", "..", "fonts", "builtin-font.c")

text = open(src).read()
body = text[text.index("font_builtin_psf[] = {"):]
body = body[:body.index("};")]
builtin = bytes(int(x, 16) for x in re.findall(r"0x([0-9a-fA-F]{2})", body))


def psf1(mode, height, glyphs, table=b""):
    return bytes([0x36, 0x04, mode, height]) + glyphs + table


def psf2(glyphs, count, gsize, height, width, flags=0, table=b"", header=32, extra=b""):
    h = struct.pack("<8I", 0x864AB572, 0, header, flags, count, gsize, height, width)
    return h + extra + glyphs + table


def u16(*vals):
    return b"".join(struct.pack("<H", v) for v in vals)


seeds = {}
seeds["builtin.psf"] = builtin
seeds["builtin.psf.gz"] = gzip.compress(builtin, mtime=0)
seeds["psf1-notable-8x1"] = psf1(0, 1, bytes(range(256)))
# 512 glyphs of 8x2 with a table holding sequences (0xFFFE) and U+263A
g512 = bytes(i & 0xFF for i in range(1024))
t512 = b""
for g in range(512):
    if g < 128:
        t512 += u16(g)
    if g == 300:
        t512 += u16(0x263A, 0xFFFE, 0x65, 0x301)
    t512 += u16(0xFFFF)
seeds["psf1-512-table-seq"] = psf1(0x07, 2, g512, t512)
# PSF2 10x3, three glyphs, UTF-8 table with a sequence and an astral code point
g3 = bytes((g * 16 + i) & 0xFF for g in range(3) for i in range(6))
t3 = b"a\xff" + b"\xc3\xa9\xfee\xcc\x81\xff" + b"\xf0\x9f\x98\x80?a\xff"
seeds["psf2-10x3-table"] = psf2(g3, 3, 6, 3, 10, 1, t3)
seeds["psf2-notable-12x4"] = psf2(bytes(range(8 * 8)), 8, 8, 4, 12)
seeds["psf2-header64"] = psf2(g3, 3, 6, 3, 10, 1, t3, header=64, extra=bytes(32))
# broken ones
seeds["bad-psf2-truncated-header"] = psf2(b"", 3, 6, 3, 10)[:20]
seeds["bad-psf1-header-only"] = bytes([0x36, 0x04, 0x02, 0x10])
seeds["bad-psf2-huge-count"] = psf2(g3, 0xFFFFFFFF, 6, 3, 10)
seeds["bad-psf2-count-65536"] = psf2(g3, 65536, 6, 3, 10)
seeds["bad-psf2-gsize-overflow"] = psf2(g3, 0x10000, 0x10000, 128, 64)
seeds["bad-psf2-header-past-end"] = psf2(g3, 3, 6, 3, 10, header=100000)
seeds["bad-psf2-header-small"] = psf2(g3, 3, 6, 3, 10, header=8)
seeds["bad-psf2-gsize-mismatch"] = psf2(g3, 3, 7, 3, 10)
seeds["bad-psf2-width0"] = psf2(g3, 3, 6, 3, 0)
seeds["bad-psf2-width65"] = psf2(bytes(9 * 3 * 3), 3, 27, 3, 65)
seeds["bad-psf2-height129"] = psf2(bytes(2 * 129 * 3), 3, 258, 129, 10)
seeds["bad-psf1-height0"] = psf1(0, 0, b"")
seeds["bad-psf2-short-glyphs"] = psf2(g3[:10], 3, 6, 3, 10)
seeds["bad-psf2-table-utf8"] = psf2(
    g3, 3, 6, 3, 10, 1,
    b"\xc0\xaf\xff\xf4\x90\x80\x80\xed\xa0\x80\xff\xf8\x88\x80\x80\x80\xe2\x82")
seeds["bad-psf2-table-unterminated"] = psf2(g3, 3, 6, 3, 10, 1, b"\xfe\xfe\xfeabc")
seeds["bad-psf1-table-odd"] = psf1(0x02, 1, bytes(256), u16(0x41, 0xFFFE) + b"\x42")
seeds["bad-psf1-table-astral-surrogates"] = psf1(0x02, 1, bytes(256),
                                                 u16(0xD83D, 0xDE00, 0xFFFF) * 3)
seeds["bad-gzip-garbage"] = b"\x1f\x8b\x08\x00" + bytes((i * 37 + 11) & 0xFF for i in range(200))
seeds["bad-gzip-truncated"] = gzip.compress(builtin, mtime=0)[:300]
seeds["bad-gzip-not-psf"] = gzip.compress(b"hello, this is no font at all\n" * 4, mtime=0)
seeds["bad-empty"] = b""
seeds["bad-magic-only"] = struct.pack("<I", 0x864AB572)

os.makedirs(out, exist_ok=True)
for name, data in sorted(seeds.items()):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
print("%d seeds in %s" % (len(seeds), out), file=sys.stderr)
