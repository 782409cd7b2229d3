"""1 bpp monochrome on vfb: consoled's memory against fbcon.

vfb at 1 bpp is FB_VISUAL_MONO01 with 8-bit colour fields, so fbcon's
mono_col() gives 0xff for its background there, and the kernel's
slow_imageblit() ORs that unmasked value across the 7 pixels after each
background pixel of a 32-bit word: fbcon's own pixels on vfb are smeared
(Linux 6.1). The checks therefore go in two steps:

1. The model: fbcon's depth-1 drawing (get_color(): foreground 0,
   background 1; bitblit.c update_attr(): underline sets the glyph's last
   two lines, bold (and italic, the same bit without colours) ORs each font
   byte with itself shifted right by one, reverse inverts; the kernel's bit
   order, the leftmost pixel in a byte's lowest bit on x86) applied to
   fbcon's own cells (/dev/vcsa1: characters, mono attributes, cursor).
   The model, smeared as slow_imageblit() does over the runs fbcon drew,
   must equal fbcon's memory byte for byte: this ties the model to the
   kernel's pixels.
2. consoled's memory, with the same bytes written, must equal the model
   byte for byte (fbcon's cells again: after scrolling, fbcon's own memory
   also holds fillrect's pattern of the same bug, so only its cells count).
"""
import base64
import time

CHECKS = ["mono-1bpp-auto", "mono-1bpp-redraw", "mono-1bpp-shadow", "mono-1bpp-pan"]

FONT = "Lat15-Fixed16.psf.gz"

# vt.c build_attr() without colours: intensity (bold = 2) | italic << 1 |
# underline << 2 | reverse << 3 | blink << 7.
A_BOLD, A_UNDERLINE, A_REVERSE = 0x02, 0x04, 0x08

# Every escape changes the attributes, so that fbcon's runs (con_putcs()
# is flushed at each escape) are the runs of equal attributes.
SCREEN = (b"\033[?25l\033[0m\033[H\033[2J"
          b"plain text: the quick brown fox 0123456789 ~!@#$%^&*()\r\n"
          b"\033[7m reverse \033[0m plain \033[1mbold\033[0m \033[3mitalic\033[0m \033[4munderline"
          b"\033[0m end\r\n"
          b"\033[2mdim\033[0m \033[5mblink\033[0m \033[31;42mred on green\033[0m "
          b"\033[1;4;7mbold underline reverse\033[0m\r\n"
          b"\033[7m                                \033[0m\r\n"
          b"\033[1;7mB\033[0m|\033[4;7mU\033[0m|\033[3;4mIU\033[0m|\033[33;44;1myellow\033[0m\r\n"
          b"\033[1m\xe2\x96\x88\xe2\x96\x92\xe2\x96\x91 \xc3\xa9\xc3\xbc\xc3\x9f "
          b"||||====\033[0m the end\r\n")


# Region scrolls both ways (DECSTBM with IND and RI), line inserts and
# deletes, after the lines: the shadow copy moves rows of a region.
REGION = (b"\033[5;20r\033[20;1H\033Dregion up 1\033Dregion up 2\033[5;1H\033Mregion down"
          b"\033[r\033[10;1H\033[2L\033[7minserted\033[0m\033[16;1H\033[3Mdeleted"
          b"\033[?25l\033[30;1H\033[1;4mend of the mono scroll test\033[0m")

# n lines (awk, no randomness) with reverse, bold and underline words, none
# wider than the screen; paced (a burst of 20 lines, then 20 ms) so that
# consoled's frames see every scroll, and 7000 of them take the pan window
# past the end of vfb's virtual screen at 1 bpp (8 MiB / 80 bytes a line
# = 6553 text rows of 16 lines).
GEN_AWK = r"""BEGIN {
    w = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor"
    for (i = 1; i <= n; i++) {
        s = i ": " substr(w, 1 + i % 23, 3 + (i * 7) % 40)
        if (i % 3 == 0) s = s " \033[7m rev \033[0m"
        if (i % 5 == 0) s = s " \033[1mbold\033[0m \033[4mul\033[0m"
        print s
        if (pace && i % 20 == 0) { fflush(); system("sleep 0.02") }
    }
}
"""

# pan crosses the end of the virtual screen (its return redraws all); auto
# wraps there, which needs as many lines (fbdev_line() wraps as at 8 bpp,
# scroll-wrap): auto is spared them to keep within the CI budget.
SCROLL_LINES = {"auto": 600, "pan": 7000, "redraw": 600, "shadow": 600}


class MonoChecks:
    def __init__(self, runner, load_font):
        self.r = runner
        self.font = load_font(FONT)
        self.refs = {}
        self.checks = {"mono-1bpp-" + m: (lambda m=m: self.check(m))
                       for m in ("auto", "redraw", "shadow", "pan")}

    # -- guest memory and cells --

    def raw(self):
        """The visible window of vfb's memory (at the pan offset, wrapping)."""
        vm = self.r.vm
        var = vm.fb_var()
        stride, yres = var["stride"], var["yres"]
        base = vm._vfb_address()
        first = min(yres, var["yres_virtual"] - var["yoffset"])
        data = vm._memsave(base + var["yoffset"] * stride, stride * first)
        if first < yres:
            data += vm._memsave(base, stride * (yres - first))
        return data, var

    def vcsa(self):
        """fbcon's cells of tty1: rows, cols, cursor x, y and (char, attr) pairs."""
        data = base64.b64decode(self.r.sh("base64 -w0 /dev/vcsa1").strip())
        rows, cols, cx, cy = data[0], data[1], data[2], data[3]
        cells = [(data[4 + 2 * i], data[5 + 2 * i]) for i in range(rows * cols)]
        return rows, cols, cx, cy, cells

    # -- the model --

    def glyph_rows(self, ch, attr):
        """fbcon's update_attr() at depth 1: the glyph's bitmap rows, a set
        bit the foreground (before reverse)."""
        f = self.font
        rb = (f.width + 7) // 8
        g = f.glyphs[ch]
        ul_from = f.height - (1 if f.height < 10 else 2)
        out = []
        for y in range(f.height):
            bs = bytearray(g[y * rb:(y + 1) * rb])
            for i in range(rb):
                c = bs[i]
                if attr & A_UNDERLINE and y >= ul_from:
                    c = 0xff
                if attr & A_BOLD:
                    c |= c >> 1
                if attr & A_REVERSE:
                    c = ~c & 0xff
                bs[i] = c
            out.append([(bs[x // 8] >> (7 - x % 8)) & 1 for x in range(f.width)])
        return out

    def model_pixels(self, vc, var, cursor=False):
        """Per pixel line, per pixel: 1 where fbcon's bit is set (MONO01:
        the background, and the foreground of reversed cells)."""
        rows, cols, cx, cy, cells = vc
        f = self.font
        xres, yres = var["xres"], var["yres"]
        lines = [[1] * xres for _ in range(yres)]
        for row in range(rows):
            for col in range(cols):
                ch, attr = cells[row * cols + col]
                if cursor and (col, row) == (cx, cy):
                    attr ^= A_REVERSE
                g = self.glyph_rows(ch, attr)
                for y in range(f.height):
                    line = lines[row * f.height + y]
                    for x in range(f.width):
                        # foreground 0, background 1
                        line[col * f.width + x] = 0 if g[y][x] else 1
        return lines

    @staticmethod
    def pack(lines, stride):
        out = bytearray()
        for line in lines:
            b = bytearray(stride)
            for x, v in enumerate(line):
                if v:
                    b[x >> 3] |= 1 << (x & 7)  # the leftmost pixel in the lowest bit
            out += b
        return bytes(out)

    def smeared(self, lines, vc, stride):
        """What fbcon's slow_imageblit() leaves of the model on vfb: each run
        of equal attributes on a text row is one image whose background
        (0xff) is ORed over the next 7 pixels of its 32-bit word; drawn left
        to right over the screen cleared the same way (all 1)."""
        rows, cols, _, _, cells = vc
        f = self.font
        out = []
        for row in range(rows):
            runs, start = [], 0
            for col in range(1, cols + 1):
                if col == cols or cells[row * cols + col][1] != cells[row * cols + start][1]:
                    runs.append((start * f.width, col * f.width))
                    start = col
            for y in range(f.height):
                src = lines[row * f.height + y]
                words = [0xffffffff] * (stride // 4)
                for x0, x1 in runs:
                    shift = x0 % 32
                    w = x0 // 32
                    val = words[w] & ((1 << shift) - 1) if shift else 0
                    for x in range(x0, x1):
                        color = 0xff if src[x] else 0
                        val |= (color << shift) & 0xffffffff
                        if shift == 31:
                            words[w] = val
                            w += 1
                            val = 0
                        shift = (shift + 1) % 32
                    if shift:
                        words[w] = (words[w] & ~((1 << shift) - 1) & 0xffffffff) | val
                out.append(b"".join(v.to_bytes(4, "little") for v in words))
        return b"".join(out)

    # -- the check --

    def wait_raw(self, want, what, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            got, _ = self.raw()
            if got == want:
                return
            if time.monotonic() > deadline:
                diff = [i for i in range(len(want)) if got[i] != want[i]]
                stride = self.raw()[1]["stride"]
                first = diff[0]
                self.r.fail("%s: %d bytes differ, the first at line %d byte %d (%02x, want %02x)"
                            % (what, len(diff), first // stride, first % stride, got[first],
                               want[first]))
            time.sleep(0.5)

    def check(self, mode):
        r = self.r
        before = int(r.sh("cat /sys/class/graphics/fb0/bits_per_pixel").strip())
        r.set_depth(1)
        try:
            self.check_at_1bpp(mode)
        finally:
            r.vm.run("pkill consoled; sleep 1")
            r.set_depth(before)

    def fbcon_model(self, name, cursor=False):
        """fbcon draws /tmp/mono-NAME on tty1 (its font loaded); returns its
        cells, its memory and the model's (unsmeared) pixel lines."""
        r = self.r
        r.sh("setfont /fonts/%s -C /dev/tty1; cat /tmp/mono-%s > /dev/tty1" % (FONT, name),
             timeout=120)
        time.sleep(1)
        vc = self.vcsa()
        mem, var = self.raw()
        return vc, mem, var, self.model_pixels(vc, var, cursor)

    def reference(self, name, cursor=False):
        """The model of fbcon's drawing of /tmp/mono-NAME, once per boot."""
        if name not in self.refs:
            self.refs[name] = self.fbcon_model(name, cursor)
        return self.refs[name]

    def setup(self):
        """The texts in the guest (once per boot), and the model checked
        against fbcon's own pixels."""
        r = self.r
        if self.refs:
            return
        r.put_file("/tmp/mono-screen", SCREEN)
        r.put_file("/tmp/mono-cursor", SCREEN.replace(b"\033[?25l", b"") + b"\033[?25h")
        r.put_file("/tmp/mono-region", REGION)
        r.put_file("/tmp/mono-gen.awk", GEN_AWK.encode())
        for n in set(SCROLL_LINES.values()):
            # The final screen depends only on the last screenful of lines
            # (none wraps) and the region part: fbcon gets only those.
            r.sh("(printf '\\033[?25l\\033[0m\\033[H\\033[2J'; awk -v n=%d -v pace=0 -f"
                 " /tmp/mono-gen.awk | tail -n 40; cat /tmp/mono-region) > /tmp/mono-tail%d"
                 % (n, n))
        name = r.sh("cat /sys/class/graphics/fb0/name").strip()
        # The first screen, drawn once with the cursor off: the model,
        # smeared as slow_imageblit() does, is fbcon's memory.
        vc, mem, var, lines = self.reference("screen")
        stride = var["stride"]
        smear = self.smeared(lines, vc, stride)
        if smear != mem:
            diff = [i for i in range(len(mem)) if smear[i] != mem[i]]
            r.fail("the model of fbcon's depth-1 drawing, smeared as slow_imageblit() does, "
                   "differs from fbcon's memory on %s in %d bytes, the first at line %d byte %d "
                   "(%02x, fbcon %02x)" % (name, len(diff), diff[0] // stride, diff[0] % stride,
                                           smear[diff[0]], mem[diff[0]]))
        if self.pack(lines, stride) == mem:
            r.fail("fbcon's memory shows no smear: the kernel is not the one modelled")

    def run_consoled(self, mode, session, ref, what, timeout=30):
        r = self.r
        vc, _, var, lines = ref
        r.sh("printf '\\033[H\\033[2J' > /dev/tty1")
        r.start_consoled(FONT, "/bin/sh -c '%s; exec sleep 100000'" % session,
                         extra="--scroll-mode=%s" % mode)
        self.wait_raw(self.pack(lines, var["stride"]), "consoled --scroll-mode=%s at 1 bpp: %s"
                      % (mode, what), timeout)
        log = r.consoled_log()
        r.stop_consoled()
        return log

    def check_at_1bpp(self, mode):
        self.setup()
        if mode == "auto":
            self.run_consoled(mode, "cat /tmp/mono-screen", self.reference("screen"),
                              "the text screen differs from the model of fbcon's")
            ref = self.reference("cursor", cursor=True)
            # consoled shows the cursor as its cell inverted (fbcon's block
            # cursor), where fbcon's cells say it is
            self.run_consoled(mode, "cat /tmp/mono-cursor", ref,
                              "the cursor at %d,%d is not its cell inverted" % (ref[0][2],
                                                                                ref[0][3]))
        n = SCROLL_LINES[mode]
        log = self.run_consoled(mode, "awk -v n=%d -v pace=1 -f /tmp/mono-gen.awk; cat "
                                "/tmp/mono-region" % n, self.reference("tail%d" % n),
                                "the screen after %d lines and region scrolls differs from the "
                                "model of fbcon's" % n, timeout=180)
        want = {"auto": "wrap", "pan": "pan", "redraw": "redraw", "shadow": "shadow"}[mode]
        if "full-screen scrolls by %s," % want not in log:
            self.r.fail("--scroll-mode=%s does not scroll by %s at 1 bpp:\n%s" % (mode, want, log))
        for line in log.splitlines():
            if "Scrolling:" in line or "Virtual screen" in line:
                print("# " + line.strip(), flush=True)
