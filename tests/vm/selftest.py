#!/usr/bin/python3
"""Prove the test bed against the kernel's own fbcon, before consoled exists.

For each card: boot, load the fbdev driver, load a PSF font into fbcon with
kbd's setfont, write known text with colours to tty1 with the cursor hidden,
grab the picture (QMP screendump, or guest memory for vfb) and decode it back
with screen.py.  Then check that typed keys reach a shell on tty1, that
`chvt` switches the picture, and (vfb) that a 1 bpp mode can be set for
consoled's refusal test.

    /usr/bin/python3 tests/vm/selftest.py [--out DIR] [card ...]

Prints one line of facts per card and exits non-zero if any check failed;
screenshots of failures land in DIR (default /tmp/consoled-selftest).
"""

import argparse
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import screen  # noqa: E402
import vmlib  # noqa: E402

CARDS = ["cirrus", "ati", "rv100", "bochs", "vfb"]
FONT = "Lat15-Fixed16.psf.gz"
FONT_HOST = "/usr/share/consolefonts/" + FONT
EXTRA_FONTS = ["Lat2-Terminus12x6.psf.gz", "Uni2-Fixed16.psf.gz", "Uni2-Terminus32x16.psf.gz"]


def printf_octal(data):
    """A printf format producing exactly `data` (every byte escaped, so no quoting issues)."""
    return "".join("\\%03o" % b for b in data.encode())


def tty1_write(vm, text):
    vm.check("printf '%s' >/dev/tty1" % printf_octal(text))


class Checker:
    """Collects named pass/fail results for one card."""

    def __init__(self, card, out_dir):
        self.card, self.out_dir, self.failures = card, out_dir, []

    def expect(self, name, ok, detail="", img=None):
        if not ok:
            self.failures.append("%s: %s" % (name, detail))
            if img is not None:
                screen.save_png(img, os.path.join(self.out_dir, "%s-%s.png" % (self.card, name)))
        return ok


def check_card(card, out_dir):
    font = screen.load_font(FONT_HOST)
    chk = Checker(card, out_dir)
    facts = {"card": card}
    t0 = time.monotonic()
    with vmlib.VM(card, out_dir=out_dir) as vm:
        facts["boot_s"] = round(vm.boot_seconds, 1)
        facts["start_s"] = round(time.monotonic() - t0, 1)
        facts["fb"] = vm.check("cat /sys/class/graphics/fb0/name").strip()
        facts["virtual_size"] = vm.check("cat /sys/class/graphics/fb0/virtual_size").strip()
        facts["bpp"] = vm.check("cat /sys/class/graphics/fb0/bits_per_pixel").strip()
        facts["modules"] = " ".join(sorted(
            line.split()[0] for line in vm.check("lsmod").splitlines()[1:] if line.strip()))

        # 1. fbcon text and colours, decoded back from the picture.
        vm.check("setfont /fonts/%s -C /dev/tty1" % FONT)
        lines = ["consoled selftest " + card, "red green blue-bg",
                 "The quick brown fox 0123456789 !@#$%^&*()_+-=[]{};:'\",.<>/?|~`"]
        tty1_write(vm, "\033[?25l\033[H\033[2J%s\n\033[31mred\033[0m \033[1;32mgreen\033[0m "
                   "\033[37;44mblue-bg\033[0m\n%s\n" % (lines[0], lines[2]))
        img, scr = vm.wait_screen(font, lambda s: s.lines[2].rstrip() == lines[2])
        vm.save_png(img, "%s-fbcon.png" % card)
        facts["screendump"] = "%dx%d" % (img.width, img.height)
        got = [line.rstrip() for line in scr.lines[:3]]
        chk.expect("text", got == lines, "decoded %r" % got, img)
        chk.expect("rest-blank", all(not line.strip() for line in scr.lines[3:]),
                   "junk below the text: %r" % [l for l in scr.lines[3:] if l.strip()][:3], img)
        colours = (scr.fg[1][0], scr.fg[1][4], scr.fg[1][10], scr.bg[1][10], scr.bg[0][0])
        chk.expect("colours", colours == (1, 10, 7, 4, 0),
                   "fg red/green/blue-bg, bg blue-bg/text = %r" % (colours,), img)

        # 2. keyboard: the kernel's keyboard handler types into tty1 for a shell there.
        tty1_write(vm, "\033[H\033[2J")
        vm.check("setsid sh -c 'exec sh -i </dev/tty1 >/dev/tty1 2>&1' >/dev/null 2>&1 &")
        vm.wait_screen(font, lambda s: "#" in s.text(), timeout=10)
        vm.send_text("echo hello\n")
        img, scr = vm.wait_screen(font, lambda s: any(l.strip() == "hello" for l in s.lines))
        chk.expect("keyboard", any(l.strip() == "hello" for l in scr.lines),
                   "no 'hello' line: %r" % scr.text()[:200], img)
        events = vm.check("cat /proc/bus/input/devices | grep -c ^H:.*kbd")
        facts["kbd_devices"] = events.strip()

        # 3. VT switching.
        vm.check("chvt 2")
        active = vm.check("cat /sys/class/tty/tty0/active").strip()
        img, scr = vm.wait_screen(font, lambda s: "hello" not in s.text())
        chk.expect("chvt2", active == "tty2" and "hello" not in scr.text(),
                   "active=%s text=%r" % (active, scr.text()[:100]), img)
        vm.check("chvt 1")
        img, scr = vm.wait_screen(font, lambda s: "hello" in s.text())
        chk.expect("chvt1", "hello" in scr.text(), "tty1 picture not back", img)

        # 4. Other fonts: not 8 px wide, 512 glyphs, non-ASCII through the Unicode table.
        for n, other in enumerate(EXTRA_FONTS):
            ofont = screen.load_font("/usr/share/consolefonts/" + other)
            vm.check("setfont /fonts/%s -C /dev/tty1" % other)
            text = "f%d: Grüße, señor ÀÉÎ ±§" % n  # fits 40 columns, all in Latin-2
            tty1_write(vm, "\033[?25l\033[H\033[2J%s\n" % text)
            img, scr = vm.wait_screen(ofont, lambda s, t=text: s.lines[0].rstrip() == t)
            chk.expect("font-" + other, scr.lines[0].rstrip() == text and scr.cols == img.width
                       // ofont.width, "decoded %r" % scr.lines[0].rstrip(), img)

        # 5. 1 bpp, for consoled's refusal test: fbsysfs lets root set the depth.
        if card == "vfb":
            out, status = vm.run("echo 1 >/sys/class/graphics/fb0/bits_per_pixel &&"
                                 " cat /sys/class/graphics/fb0/bits_per_pixel"
                                 " /sys/class/graphics/fb0/stride")
            facts["1bpp"] = " ".join(out.split()) if status == 0 else "refused"
            chk.expect("1bpp", out.split()[:1] == ["1"], "got %r" % out)
    facts["total_s"] = round(time.monotonic() - t0, 1)
    return facts, chk.failures


def main():
    parser = argparse.ArgumentParser(description="Check the VM test bed with the kernel's fbcon.")
    parser.add_argument("cards", nargs="*", default=CARDS)
    parser.add_argument("--out", default="/tmp/consoled-selftest")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    failed = False
    for card in args.cards:
        try:
            facts, failures = check_card(card, args.out)
        except Exception:
            facts, failures = {"card": card}, ["exception:\n" + traceback.format_exc()]
        failed |= bool(failures)
        print(("PASS " if not failures else "FAIL ")
              + " ".join("%s=%s" % kv for kv in facts.items()), flush=True)
        for f in failures:
            print("    " + f, flush=True)
    print("screenshots and serial logs in", args.out)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
