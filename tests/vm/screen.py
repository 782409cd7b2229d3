#!/usr/bin/python3
"""Pictures of the guest's screen: images, PSF fonts and a screen text reader.

Everything the VM tests assert about pixels goes through this module:

* `Image`: width, height and packed RGB bytes (what QMP `screendump` gives);
  PPM/PNG reading and PNG writing with the standard library only.
* `compare()`: count differing pixels and their bounding box, and
  `save_diff()` to leave a picture of the difference next to a failed test.
* `Font`: a PSF1/PSF2 parser (gzip aware) keeping the Unicode table.
* `read_text()`: the screen text reader.  The Linux console draws every cell
  in exactly two colours, glyph pixels in the foreground colour, the rest in
  the background colour; the reader splits the image into font-sized cells
  from the top-left corner and looks each cell's two-colour bitmap up in the
  font, trying both colours as the foreground (so reverse video decodes
  too).  A uniform cell is a space; a cell that matches no glyph is '?'.
  Character colours are reported as indices into the console palette, so a
  test can check SGR handling as well as text.
"""

import gzip
import os
import struct
import zlib

# The Linux console's default palette (drivers/tty/vt/vt.c default_red/grn/blu).
LINUX_PALETTE = [
    (0x00, 0x00, 0x00), (0xaa, 0x00, 0x00), (0x00, 0xaa, 0x00), (0xaa, 0x55, 0x00),
    (0x00, 0x00, 0xaa), (0xaa, 0x00, 0xaa), (0x00, 0xaa, 0xaa), (0xaa, 0xaa, 0xaa),
    (0x55, 0x55, 0x55), (0xff, 0x55, 0x55), (0x55, 0xff, 0x55), (0xff, 0xff, 0x55),
    (0x55, 0x55, 0xff), (0xff, 0x55, 0xff), (0x55, 0xff, 0xff), (0xff, 0xff, 0xff),
]

# What fbcon loads into an 8 bpp pseudocolour colour map: console colour i
# goes to hardware index color_table[i] (vt.c: 0,4,2,6,1,5,3,7,...), i.e. the
# VGA order in which index 1 is blue and 4 is red.  Needed to turn raw 8 bpp
# memory (vfb) back into RGB.
VT_COLOR_TABLE = [0, 4, 2, 6, 1, 5, 3, 7, 8, 12, 10, 14, 9, 13, 11, 15]
FBCON_8BPP_CMAP = [LINUX_PALETTE[VT_COLOR_TABLE.index(k)] for k in range(16)]


class Image:
    """An RGB picture: `data` holds width * height * 3 bytes, rows top to bottom."""

    def __init__(self, width, height, data):
        if len(data) != width * height * 3:
            raise ValueError("image data is %d bytes, expected %d" % (len(data), width * height * 3))
        self.width, self.height, self.data = width, height, bytes(data)

    def pixel(self, x, y):
        i = (y * self.width + x) * 3
        return tuple(self.data[i:i + 3])

    def crop(self, x, y, w, h):
        rows = [self.data[((y + r) * self.width + x) * 3:((y + r) * self.width + x + w) * 3]
                for r in range(h)]
        return Image(w, h, b"".join(rows))

    def colors(self):
        """Set of distinct RGB tuples (for quick sanity checks)."""
        d = self.data
        return {d[i:i + 3] for i in range(0, len(d), 3)}

    def __eq__(self, other):
        return (isinstance(other, Image) and self.width == other.width
                and self.height == other.height and self.data == other.data)

    def __repr__(self):
        return "Image(%dx%d)" % (self.width, self.height)


def read_ppm(path):
    """Parse a binary PPM (P6, maxval 255) as written by QEMU's screendump."""
    with open(path, "rb") as f:
        raw = f.read()
    fields, pos = [], 0
    while len(fields) < 4:
        while raw[pos:pos + 1].isspace():
            pos += 1
        if raw[pos:pos + 1] == b"#":
            pos = raw.index(b"\n", pos) + 1
            continue
        end = pos
        while not raw[end:end + 1].isspace():
            end += 1
        fields.append(raw[pos:end])
        pos = end
    if fields[0] != b"P6" or int(fields[3]) != 255:
        raise ValueError("%s: not an 8-bit P6 PPM" % path)
    width, height = int(fields[1]), int(fields[2])
    pos += 1  # exactly one whitespace byte after maxval
    return Image(width, height, raw[pos:pos + width * height * 3])


def _png_chunk(kind, data):
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff))


def save_png(img, path):
    """Write an RGB PNG (for humans debugging a failure; tests compare Images)."""
    stride = img.width * 3
    raw = b"".join(b"\0" + img.data[y * stride:(y + 1) * stride] for y in range(img.height))
    png = (b"\x89PNG\r\n\x1a\n"
           + _png_chunk(b"IHDR", struct.pack(">IIBBBBB", img.width, img.height, 8, 2, 0, 0, 0))
           + _png_chunk(b"IDAT", zlib.compress(raw, 6)) + _png_chunk(b"IEND", b""))
    with open(path, "wb") as f:
        f.write(png)
    return path


def read_png(path):
    """Read an 8-bit RGB/RGBA non-interlaced PNG (the kind save_png writes)."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(path + ": not a PNG")
    pos, idat = 8, b""
    while pos < len(raw):
        (length,) = struct.unpack(">I", raw[pos:pos + 4])
        kind, body = raw[pos + 4:pos + 8], raw[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError(path + ": only 8-bit RGB(A) non-interlaced PNGs are supported")
    bpp = 3 if ctype == 2 else 4
    data = zlib.decompress(idat)
    stride = width * bpp
    out, prev = bytearray(), bytearray(stride)
    for y in range(height):
        ftype = data[y * (stride + 1)]
        line = bytearray(data[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 0xff
            elif ftype == 2:
                line[i] = (line[i] + b) & 0xff
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xff
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xff
        prev = line
        if bpp == 4:
            out += b"".join(line[i:i + 3] for i in range(0, stride, 4))
        else:
            out += line
    return Image(width, height, bytes(out))


# --- comparison -------------------------------------------------------------

class Diff:
    """Result of compare(): number of differing pixels and their bounding box."""

    def __init__(self, count, bbox):
        self.count = count
        self.bbox = bbox  # (x0, y0, x1, y1) inclusive, or None

    def __bool__(self):
        return self.count != 0

    def __repr__(self):
        return "Diff(count=%d, bbox=%r)" % (self.count, self.bbox)


def compare(a, b):
    """Compare two same-sized images pixel by pixel.

    Rows are compared as byte strings first, so identical screens (the common
    case) cost one pass of memcmp.
    """
    if (a.width, a.height) != (b.width, b.height):
        raise ValueError("size mismatch: %r vs %r" % (a, b))
    stride = a.width * 3
    count, x0, y0, x1, y1 = 0, a.width, a.height, -1, -1
    for y in range(a.height):
        ra, rb = a.data[y * stride:(y + 1) * stride], b.data[y * stride:(y + 1) * stride]
        if ra == rb:
            continue
        for x in range(a.width):
            if ra[x * 3:x * 3 + 3] != rb[x * 3:x * 3 + 3]:
                count += 1
                x0, x1 = min(x0, x), max(x1, x)
                y0, y1 = min(y0, y), max(y1, y)
    return Diff(count, (x0, y0, x1, y1) if count else None)


def diff_image(a, b):
    """A picture of the difference: equal pixels dimmed, differing ones magenta."""
    out = bytearray(len(a.data))
    for i in range(0, len(a.data), 3):
        if a.data[i:i + 3] == b.data[i:i + 3]:
            out[i:i + 3] = bytes(v // 4 for v in a.data[i:i + 3])
        else:
            out[i:i + 3] = b"\xff\x00\xff"
    return Image(a.width, a.height, bytes(out))


def save_diff(a, b, out_dir, name):
    """Save expected, actual and diff PNGs as <out_dir>/<name>-{expected,actual,diff}.png."""
    os.makedirs(out_dir, exist_ok=True)
    paths = [save_png(a, os.path.join(out_dir, name + "-expected.png")),
             save_png(b, os.path.join(out_dir, name + "-actual.png"))]
    if (a.width, a.height) == (b.width, b.height):
        paths.append(save_png(diff_image(a, b), os.path.join(out_dir, name + "-diff.png")))
    return paths


# --- PSF fonts --------------------------------------------------------------

PSF1_MAGIC = b"\x36\x04"
PSF2_MAGIC = b"\x72\xb5\x4a\x86"


class Font:
    """A PSF1 or PSF2 console font.

    glyphs:  list of bitmaps, each `height` rows of `(width + 7) // 8` bytes, MSB first.
    unicode: list (per glyph) of lists of code point sequences (tuples); single
             code points are 1-tuples.  Empty when the font has no table, in which
             case glyph i stands for code point i (as the kernel assumes).
    """

    def __init__(self, width, height, glyphs, unicode):
        self.width, self.height, self.glyphs, self.unicode = width, height, glyphs, unicode
        self._lookup = None

    @property
    def row_bytes(self):
        return (self.width + 7) // 8

    def glyph_chars(self, index):
        """Single characters that map to glyph `index` (sequences are skipped)."""
        if not self.unicode:
            return [chr(index)]
        return [chr(seq[0]) for seq in self.unicode[index] if len(seq) == 1]

    def glyph_for(self, ch):
        """Index of the glyph drawing character `ch`, or None."""
        for i in range(len(self.glyphs)):
            if ch in self.glyph_chars(i):
                return i
        return None

    def bits(self, index):
        """Glyph as a bytes object of width*height 0/1 values, row-major."""
        g, rb = self.glyphs[index], self.row_bytes
        out = bytearray(self.width * self.height)
        for y in range(self.height):
            row = int.from_bytes(g[y * rb:(y + 1) * rb], "big")
            for x in range(self.width):
                out[y * self.width + x] = (row >> (rb * 8 - 1 - x)) & 1
        return bytes(out)

    def lookup(self):
        """Map glyph bit pattern -> the character it most plausibly shows.

        Several glyphs and code points can share a bitmap (Latin A and
        Cyrillic A); the lowest code point wins, which prefers ASCII.
        """
        if self._lookup is None:
            table = {}
            for i in range(len(self.glyphs)):
                chars = self.glyph_chars(i)
                if not chars:
                    continue
                key = self.bits(i)
                best = min(chars)
                if key not in table or best < table[key]:
                    table[key] = best
            self._lookup = table
        return self._lookup


def load_font(path):
    """Parse a .psf or .psf.gz file."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    if raw[:2] == PSF1_MAGIC:
        return _parse_psf1(raw)
    if raw[:4] == PSF2_MAGIC:
        return _parse_psf2(raw)
    raise ValueError(path + ": not a PSF font")


def _parse_psf1(raw):
    mode, charsize = raw[2], raw[3]
    count = 512 if mode & 0x01 else 256
    glyphs = [raw[4 + i * charsize:4 + (i + 1) * charsize] for i in range(count)]
    unicode = []
    if mode & 0x06:
        pos = 4 + count * charsize
        for _ in range(count):
            entries, seq, in_seq = [], [], False
            while True:
                (v,) = struct.unpack("<H", raw[pos:pos + 2])
                pos += 2
                if v == 0xffff:
                    break
                if v == 0xfffe:
                    in_seq = True
                    seq = []
                    entries.append(seq)
                    continue
                if in_seq:
                    seq.append(v)
                else:
                    entries.append([v])
            unicode.append([tuple(e) for e in entries if e])
    return Font(8, charsize, glyphs, unicode)


def _parse_psf2(raw):
    (_, version, headersize, flags, length, charsize, height,
     width) = struct.unpack("<IIIIIIII", raw[:32])
    glyphs = [raw[headersize + i * charsize:headersize + (i + 1) * charsize]
              for i in range(length)]
    unicode = []
    if flags & 0x01:
        pos = headersize + length * charsize
        for _ in range(length):
            end = raw.index(b"\xff", pos)
            desc, pos = raw[pos:end], end + 1
            parts = desc.split(b"\xfe")
            entries = [(ord(c),) for c in parts[0].decode("utf-8")]
            entries += [tuple(ord(c) for c in p.decode("utf-8")) for p in parts[1:] if p]
            unicode.append(entries)
    return Font(width, height, glyphs, unicode)


# --- the screen text reader -------------------------------------------------

class Screen:
    """Decoded screen: `lines` (text), `fg`/`bg` (per-row lists of palette indices,
    -1 where a colour is not in the palette) and the cell grid size."""

    def __init__(self, lines, fg, bg, cols, rows):
        self.lines, self.fg, self.bg, self.cols, self.rows = lines, fg, bg, cols, rows

    def text(self):
        return "\n".join(line.rstrip() for line in self.lines).rstrip("\n")

    def find(self, needle):
        """(row, col) of the first occurrence of `needle`, or None."""
        for r, line in enumerate(self.lines):
            c = line.find(needle)
            if c >= 0:
                return r, c
        return None

    def __contains__(self, needle):
        return self.find(needle) is not None


def read_screen(img, font, palette=LINUX_PALETTE, origin=(0, 0)):
    """Decode every cell of `img` to a character using `font` (see module docstring)."""
    fw, fh = font.width, font.height
    ox, oy = origin
    cols, rows = (img.width - ox) // fw, (img.height - oy) // fh
    table = font.lookup()
    pal_index = _PaletteIndex(palette)
    stride, data = img.width * 3, img.data
    lines, fgs, bgs = [], [], []
    for r in range(rows):
        line, fgl, bgl = [], [], []
        for c in range(cols):
            cell = []
            for y in range(fh):
                base = (oy + r * fh + y) * stride + (ox + c * fw) * 3
                row = data[base:base + fw * 3]
                cell.extend(row[i:i + 3] for i in range(0, fw * 3, 3))
            ch, fg, bg = _decode_cell(cell, table)
            line.append(ch)
            fgl.append(pal_index.get(fg) if fg is not None else -1)
            bgl.append(pal_index.get(bg))
        lines.append("".join(line))
        fgs.append(fgl)
        bgs.append(bgl)
    return Screen(lines, fgs, bgs, cols, rows)


class _PaletteIndex:
    """Map an RGB pixel to the nearest palette index, -1 if none is close.

    Cards with a 6-bit DAC (cirrus, 8 bpp pseudocolour) show 0xaa as 0xa8 and
    0x55 as 0x57, so exact matching would fail; a per-channel tolerance of 12
    still keeps the 16 console colours apart (they differ by >= 0x55).
    """

    TOLERANCE = 12

    def __init__(self, palette):
        self.palette = [tuple(c) for c in palette]
        self.cache = {}

    def get(self, rgb):
        if rgb not in self.cache:
            best = -1
            for i, c in enumerate(self.palette):
                if max(abs(a - b) for a, b in zip(rgb, c)) <= self.TOLERANCE:
                    best = i
                    break
            self.cache[rgb] = best
        return self.cache[rgb]


def _decode_cell(cell, table):
    """Return (char, fg colour or None, bg colour) of one cell's pixel list."""
    first = cell[0]
    colours = set(cell)
    if len(colours) == 1:
        return " ", None, first
    if len(colours) > 2:
        counts = {}
        for p in cell:
            counts[p] = counts.get(p, 0) + 1
        return "?", None, max(counts, key=counts.get)
    a, b = sorted(colours)
    for fg, bg in ((a, b), (b, a)):
        key = bytes(1 if p == fg else 0 for p in cell)
        ch = table.get(key)
        if ch is not None and ch != " ":
            return ch, fg, bg
    # Unknown pattern: call the rarer colour the foreground.
    fg = a if cell.count(a) < cell.count(b) else b
    return "?", fg, (b if fg == a else a)


def read_text(img, font, palette=LINUX_PALETTE):
    """The screen's text as a list of lines (trailing spaces kept; cols wide)."""
    return read_screen(img, font, palette).lines


if __name__ == "__main__":
    import sys
    if len(sys.argv) != 3:
        sys.exit("usage: screen.py IMAGE.ppm|png FONT.psf[.gz]  -- print the decoded text")
    path = sys.argv[1]
    image = read_png(path) if path.endswith(".png") else read_ppm(path)
    print(read_screen(image, load_font(sys.argv[2])).text())
