#!/usr/bin/python3
"""consoled's VM tests: one QEMU boot per card, many checks in it.

    vmtest.py --consoled BUILD/daemon/consoled --card cirrus [--only CHECK,...]

Checks (each prints a TAP line; any failure makes the exit status 1):

  oracle-<font>   The pixel oracle (docs/TESTING.md): the kernel's fbcon
                  draws a text with the font (kbd's setfont) on tty1, then
                  consoled draws the same bytes with the same font and
                  --palette=linux; the two screendumps must be identical.
                  Fonts: 256 glyphs 8x16, 512 glyphs 8x16, 10x20 (not 8 wide).
  keyboard        Keys typed with QEMU's send-key reach a shell started by
                  consoled: `echo hello` shows `hello` (read back with the
                  screen text reader).
  session         The session process: its own session with the pty as
                  controlling tty, only fds 0-2 open (all the pty), the
                  window size of the text grid, and an environment of TERM,
                  PATH, the seat and the locale only, though consoled was
                  started with NOTIFY_SOCKET, WATCHDOG_USEC, CONSOLED_*, ...
  boot-mode       (cirrus) a second consoled on tty2 (started while the
                  first runs in its tall virtual screen) and a consoled that
                  follows one killed with SIGKILL both restore the boot mode
                  the first one saved in /run/consoled (0700, file 0600); the
                  kernel keyboard works on tty1 again.
  session-ioports (cirrus) after a logout, the next session cannot read a
                  VGA port (the plugin's ioperm() is not inherited): `inb`
                  dies of SIGSEGV.
  terminal-output (cirrus) What a session prints, through consoled's pty stream stage
                 , read off the screen and from the session: CSI 3 J
                  empties the scrollback (Shift+PageUp shows nothing older);
                  REP, CNL, CPL, HPA, SCOSC/SCORC and colon SGR colours work;
                  CSI > 4;2 m and CSI > 1;2 m are no SGR; concealed text is
                  background, crossed-out text is not plain; DECRQM
                  (CSI ? 12 $ p) is answered and leaves the alternate screen
                  alone; OSC 10/11 are answered with the palette's colours;
                  the session has COLORFGBG=7;0. (Underline, dim, italic
                  and blink against fbcon: the oracle checks' text.)
  caps-terminfo   (cirrus) The terminfo entry of TERM (xterm-256color) is the oracle
                  of what output means: every string capability of
                  `infocmp -x -1 xterm-256color` is tested, not applicable
                  (keys, answer formats) or one consoled cannot honour
                  (terminfocaps.py gives the reason; consoled(8) lists them).
                  The tested ones, expanded by ncurses (curses.tparm), are
                  written in four screens of scenarios (a known screen of
                  letters, the capability, a marker where the cursor is
                  after it) and read back cell by cell, glyph and colours,
                  against a reference model of xterm's effect: motion,
                  erase, insert/delete, REP, tabs, DECSC/DECRC, insert mode,
                  autowrap, scroll regions, index and reverse index, the
                  alternate screen, the attributes as the renderer's PSF
                  colours, setaf/setab 0-255 and 24-bit, the line drawing
                  set, civis/cnorm/cvvis (the cursor's cell), RIS and DECSTR;
                  E3 with Shift+PageUp; u7 and u9 by their answers. Prints
                  the table of every capability and its verdict.
  keys            Caps Lock (the LED follows, letters come out capital),
                  Shift+PageUp/PageDown walk the scrollback.
  keys-terminfo   (cirrus) The terminfo entry of TERM (xterm-256color) is the oracle
                  of what keys send: every key capability of
                  `infocmp -x -1 xterm-256color` on the host (terminfokeys.py
                  names the key, modifiers and modes for each, or why no key
                  sends it) is typed with QEMU's send-key into a session that
                  set the modes ncurses sets (smkx) and writes what it reads
                  raw to a file; the bytes must be the entry's. Then the
                  forms it does not hold: normal cursor mode after rmkx,
                  BackSpace's modifiers, the keypad with Num Lock on. And
                  Backspace at a canonical-mode `read` erases (abcx, BS, d).
  syn-dropped     Events the kernel drops for consoled (its evdev queue
                  overflows while consoled is stopped) leave no key stuck: a
                  uinput keyboard (uinput-kbd) holds Left Ctrl, then a letter,
                  and releases it under a flood; typed text is plain again and
                  the letter's repeat stops. Ctrl released while the VT is
                  away is found up when the VT comes back. A letter held
                  2 s repeats at the rate set (30 a second after 250 ms:
                  42-62 letters; a repeat timer left at sd-event's default
                  accuracy of 250 ms gave 28-35).
  frames          `cat` of 20000 lines is drawn in far fewer frames than lines
                  (output is coalesced), at most one per 100 ms of the cat
                  (flood pacing) and 4, each on time (median at most 50 ms
                  after it was due), and the final screen is right. Then 5
                  keys typed 0.3 s apart into a looping cat of the same
                  lines: each key's --stats Key: line has a frame at most
                  80 ms after the read that followed the key (the flood's
                  frames keep the 16 ms pace for 100 ms after a key; the
                  gap alone gave 39-226 ms), and at least 3 such lines.
  idle            (cirrus, bochs) consoled with a shell prompt and a steady
                  cursor, nothing written and no key: over 10 s its context
                  switches (/proc/PID/status, voluntary and not) grow by at
                  most 1, so nothing wakes it periodically (no timer, poll or
                  snapshot write); printed as wake-ups per minute. Then a
                  key nobody echoes (stty -echo) after Shift+PageUp brings
                  the view back from the scrollback.
  vt-switch       consoled on tty1, text on tty2: Ctrl+Alt+F2 shows tty2's
                  fbcon text unchanged; keys typed there reach tty2 and never
                  consoled's session; `chvt 1` shows consoled's screen exactly
                  as before, and typing works again.
  vt-grab         A program takes consoled's VT as logind does for a compositor
                  (vtgrab: VT_PROCESS with logind's signals, KD_GRAPHICS,
                  K_OFF, eight stripes drawn into fb0), run from consoled's
                  shell like a compositor: keys typed meanwhile never reach
                  the pty (nothing echoed or queued: TIOCINQ 0, the shell
                  never runs them), output meanwhile (and a VT switch away and
                  back) draws nothing over the stripes; once vtgrab gives the
                  VT back (logind's restore: KD_TEXT, keyboard, VT_AUTO)
                  consoled's screen is back with that output, the same
                  picture a VT switch away and back draws, and typing works.
                  Then, with vtgrab holding the VT from outside the session:
                  SIGTERM leaves vtgrab's VT mode and picture alone, a
                  consoled started meanwhile waits without touching them,
                  takes the VT when it is given back behind another VT, and
                  draws when it comes to the front.
  exit-sigterm    consoled, showing its own screen, gets SIGTERM: it exits 0
                  (with a blitter: released before the mode is restored),
  exit-sigsegv    (or dies of SIGSEGV through its crash handler); the mode is
                  as before, fbcon's picture of tty1 is back pixel for pixel
                  (its mode and colour map restored; after SIGTERM the VT's
                  text was cleared, so the text is written again first) and
                  fbcon draws new text.
  depth-<N>bpp    (vfb; vexpress at 8 and 16: the PL111 takes no more than
                  one 16 bpp screen of memory) the oracle with the 8x16 font
                  at 8, 16, 24 and 32 bpp,
                  set through sysfs; vfb has no display, so its pictures are
                  its memory at the pan offset (VM.read_fb()), vexpress's the
                  PL111's screendump (8 bpp through its palette); at 8 bpp
                  consoled must put the console colours in the colour map
                  slots fbcon uses.
  scroll-overalloc (bochs) bochs-drm loaded again with drm_kms_helper's
                  drm_fbdev_overalloc=300 (a buffer three screens tall): its
                  pan ioctl succeeds but the picture stays put, so
                  --scroll-mode=pan --fb-flush=map must warn and redraw,
                  with fbcon's picture (as scroll-<mode>); then reloaded
                  with 100.
  sync-output     (bochs) synchronized output: a script writes text
                  between CSI ? 2026 h and l with a 0.8 s sleep inside;
                  screendumps polled all along never show the first half
                  without the second; then a set never reset shows after
                  the 1 s hold, while the script still sleeps.
  scroll-<mode>   For each scroll mode the card supports, and the forced
                  modes it does not (which must warn and fall back): 2000
                  lines of varied length (crossing the pan window's end more
                  than twice), then region scrolls both ways (DECSTBM with
                  IND/RI, as less and vim do) and IL/DL; the final screen must
                  equal fbcon's drawing of the same bytes. Then a VT switch
                  away and back shows the same picture, SIGTERM (and, in a
                  second run, SIGSEGV) leaves yoffset 0, the mode as before and
                  fbcon drawing again.
  mode-change     (cirrus) fbset run in consoled's session: first to 1 bpp,
                  which consoled cannot draw (it puts its mode back, logs it
                  and draws on), then to 800x600 (with -vyres 600: consoled's
                  tall virtual screen would not fit in video memory at 800
                  wide): `stty size` shows the new grid, 37x100, and the
                  oracle text then equals fbcon's drawing of it at 800x600
                  pixel for pixel; on exit the boot mode is back.
  blank           (cirrus, vfb) --blank=3: the screendump goes black (consoled
                  draws black; cirrusfb also takes FBIOBLANK powerdown, which
                  QEMU does not show; vfb has no FBIOBLANK), output written
                  meanwhile does not wake it, the
                  waking key reaches the shell (`echo woken` runs whole) and
                  the output is there; the picture equals consoled's full
                  redraw after a VT switch. Blanked again, a switch to tty2
                  shows fbcon's text, and SIGTERM gives fbcon a visible
                  screen.
  refusal         (vfb) bad flags, devices and fonts give clear errors or
                  fallbacks (a format consoled refuses: mode-change, cirrus
                  at 1 bpp); a font whose cell is larger than the screen
                  (16x32 on a 640x24 mode set with fbset) exits with status
                  6, the boot mode back afterwards.
  mono-1bpp-<mode> (vfb at 1 bpp, monotest.py) consoled's memory against a
                  model of fbcon's depth-1 drawing of fbcon's own cells,
                  which is checked against fbcon's memory first.
  font-*          (cirrus, bochs) TrueType fonts against ftref, a reference
                  renderer on the host: see fonttest.py.
  fb-wait-none    (late: the Cirrus card, no driver loaded) consoled
                  --fb-wait=4 without --fbdev and with no framebuffer says
                  once that it waits, waits 4 s (no udevd: nothing ends the
                  wait earlier; the guest's clock, 4 to 7 s) and exits 3 with
                  the reason logged.
  fb-wait-all     (late, after fb-wait-none) consoled --fbdev=all
                  --fb-wait=2 with no framebuffer waits for the seat's
                  first ("any /dev/fbN on seat0"), 2 to 5 s, and exits 3
                  with "No framebuffer on seat0".
  fb-wait-late    (late, after fb-wait-none) consoled --fb-wait=30 waits;
                  3 s later the test inserts cirrusfb: consoled takes
                  /dev/fb0 at once (the kernel's uevent), draws its session
                  and a command typed runs.
  drm-no-blitter  (late, after fb-wait-late) fbcon unbound, cirrusfb
                  unloaded, the DRM cirrus driver loaded: on its fbdev
                  emulation (fb0 cirrusdrmfb) consoled loads no blitter
                  (the cirrus plugin matches the PCI id) and 400 scrolled
                  lines equal their full redraw after a VT switch.
  oracle-lat15-8x16 (vesa, efi) also on the boot framebuffer, before:
  handover        (vesa, efi) consoled runs a shell on the boot framebuffer
                  (vesafb at 800x600x16; efifb under OVMF at 1280x800x32); the
                  bochs DRM modules are loaded and bochs-drm's fbdev
                  emulation replaces it as fb0 (1280x800x32):
                  consoled logs the handover and draws on the new fb0 the same
                  screen (read back: every line, a colour), `stty size` typed
                  there shows the new grid, and /run/consoled/fb0.mode is the
                  new device's boot mode, not the boot framebuffer's.
  fb-removal      (vesa, efi) bochs-drm is unbound from its PCI device while
                  consoled draws on its fb0: consoled logs once and keeps the
                  session (a command typed meanwhile runs); the rebind comes
                  while tty2 is shown: consoled takes the new fb0 without
                  drawing on it, and back on tty1 shows the exact screen,
                  that command's output included.
  fb-rebind       (vesa, efi) bochs-drm is unbound and bound again while
                  consoled is stopped (SIGSTOP): a new fb0 at the same minor
                  and sysfs path (another sysfs inode); after SIGCONT
                  consoled logs the loss and the takeover once each, and
                  draws the session's screen and a command typed there on
                  the new fb0.
  bell-*          (bochs; bell-scroll also cirrus) the bell: the flash's
                  exact inversion and no trace of it, a BEL flood, a uinput
                  speaker: see belltest.py.
  cursor-*        (cirrus, bochs) the cursor's shapes (DECSCUSR): the
                  screen with the cursor hidden, its cell changed by each
                  shape's rule (block swapped, underline's last two lines,
                  a bar of width / 8 columns), pixel for pixel; blinking
                  with --cursor-blink=yes, steady without: see
                  cursortest.py.
  rotate-N        (cirrus, bochs) the oracle of fbcon's rotate_all=N (1, 2,
                  3) against consoled --rotate=N in every scroll mode the
                  rotation allows, after scrolling too: see rotatetest.py.
  kmsg-*          (cirrus, bochs) kernel messages: the band over the
                  session (text, colours, its rows only, the vcs mirror, the
                  console log level, gone after its time with the screen as
                  before), the view key, (bochs) nothing drawn while tty2 is
                  shown and the band on return, and (cirrus) blanking: a
                  message does not wake the screen, an oops does; a real
                  kernel message (drop_caches); a burst of 20000 messages
                  during a cat of 20000 lines: see kmsgtest.py.
  pstore          (bochs, the boot's last check: it reboots the guest) a
                  panic kept by ramoops across a reset in the same QEMU
                  process: consoled's login screen says the last boot ended
                  in a panic, and the view shows the panic's log before this
                  boot's messages: see pstoretest.py.
  deferred-*      (bochs, virtio, qxl: DRM fbdev emulation with deferred
                  I/O) no pixel lost at line ends under flushes that fall
                  inside frames, and text shown promptly after it is
                  written: see deferredtest.py. The virtio (virtio-vga,
                  virtio_gpudrmfb) and qxl (qxldrmfb) boots run the oracle
                  with the three fonts and these checks only.
  sixel*          (bochs; sixel also cirrus) sixel pictures made on the
                  host, encoded by img2sixel and chafa and written to the
                  session's terminal, equal pixel for pixel to libsixel's
                  decoding (sixel2png; 8 bpp: the documented nearest-entry
                  mapping), also after 100 lines and Shift+PageUp, under
                  text, after a region scroll and a VT switch; turned
                  (--rotate=1); a 50 MB stream with a live keyboard and a
                  bounded VmHWM: see sixeltest.py.
  screens-*       (cirrus, the boot's last checks; the guest has a second
                  display, secondary-vga, that bochs-drm takes as fb1 when
                  the first of them loads it) two framebuffers: mirrored
                  (fb0 against fbcon's oracle, fb1 the same grid),
                  separate sessions and the focus key, fb1's driver
                  unbound and bound again, one screen turned, fb1 bound
                  while --fbdev=all runs becomes a screen (mirror, and
                  a session of its own with separate): see
                  screenstest.py.

The ARM guest, --card vexpress (QEMU's vexpress-a9, its PL111 under the
fbdev driver amba-clcd at 640x480 RGB565; pass the armhf build of
tests/cross/run as --consoled, which tests/cross/run does): the three
oracle fonts, depth-8bpp and depth-16bpp (the PL111's palette, then
RGB565 again), keyboard (through the PL050 port), exit-sigterm,
exit-sigsegv and scroll-auto (redraw).

Pictures of failures (expected, actual, diff) go to --out.
"""

import argparse
import os
import re
import shutil
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import belltest  # noqa: E402
import cursortest  # noqa: E402
import deferredtest  # noqa: E402
import fonttest  # noqa: E402
import initramfs  # noqa: E402
import kmsgtest  # noqa: E402
import monotest  # noqa: E402
import mousetest  # noqa: E402
import palettetest  # noqa: E402
import pointertest  # noqa: E402
import pstoretest  # noqa: E402
import rotatetest  # noqa: E402
import selecttest  # noqa: E402
import screenstest  # noqa: E402
import sixeltest  # noqa: E402
import screen  # noqa: E402
import terminfocaps  # noqa: E402
import terminfokeys  # noqa: E402
import turns  # noqa: E402
import vcstest  # noqa: E402
import kittytest  # noqa: E402
import vmlib  # noqa: E402

FONT_DIR = "/usr/share/consolefonts"
ORACLE_FONTS = {
    "lat15-8x16": "Lat15-Fixed16.psf.gz",    # 256 glyphs
    "uni2-8x16": "Uni2-Fixed16.psf.gz",      # 512 glyphs
    "terminus-10x20": "Lat15-Terminus20x10.psf.gz",  # not 8 pixels wide
}
KEYBOARD_FONT = "Lat15-Fixed16.psf.gz"

# Characters beyond ASCII to show when the font has them (through its
# Unicode table, in both the kernel and consoled).
NON_ASCII = "éüßñ£½«»©ÆØÅ€ΩΣπ─│┌┐└┘├┤═║▒░█♥♦"

# Scroll modes per card: mode -> (warning a forced mode must log, or None;
# the strategy that must then serve full-screen scrolls).
_QUIRK = "QEMU's ati-vga accepts FBIOPAN_DISPLAY but does not move the picture"
BOCHS_QUIRK = "bochs-drm accepts FBIOPAN_DISPLAY but keeps showing the top of its buffer"
SCROLL_MODES = {
    "cirrus": {"auto": (None, "pan"), "pan": (None, "pan"), "redraw": (None, "redraw"),
               "shadow": (None, "shadow"), "wrap": ("--scroll-mode=wrap: the driver cannot wrap", "pan"),
               "copy": ("--scroll-mode=copy: no blitter backend", "pan")},
    "ati": {"auto": (None, "redraw"), "redraw": (None, "redraw"), "shadow": (None, "shadow"),
            "pan": ("--scroll-mode=pan: " + _QUIRK, "redraw")},
    "rv100": {"auto": (None, "redraw"), "redraw": (None, "redraw"), "shadow": (None, "shadow"),
              "pan": ("--scroll-mode=pan: " + _QUIRK, "redraw")},
    # DRM fbdev emulation (deferred I/O): every mode draws in RAM, auto
    # moves rows there (daemon/devices/fbflush.h).
    "bochs": {"auto": (None, "shadow"), "redraw": (None, "redraw"), "shadow": (None, "shadow"),
              "pan": ("--scroll-mode=pan: drawing goes through a copy in RAM", "shadow")},
    "virtio": {"auto": (None, "shadow")},
    "qxl": {"auto": (None, "shadow")},
    "vfb": {"auto": (None, "wrap"), "wrap": (None, "wrap"), "pan": (None, "pan"),
            "redraw": (None, "redraw"), "shadow": (None, "shadow")},
    "vexpress": {"auto": (None, None)},
}

# The card's blitter plugin (built in BUILD/backends/NAME/NAME.so).
CARD_PLUGIN = {"cirrus": "cirrus", "ati": "rage128", "rv100": "radeon"}
GUEST_BACKEND_DIR = "/usr/lib/consoled/backends"


def find_plugins(consoled):
    """Plugins built next to the consoled binary: {name: path}."""
    root = os.path.join(os.path.dirname(os.path.abspath(consoled)), "..", "backends")
    found = {}
    for name in set(CARD_PLUGIN.values()):
        path = os.path.join(root, name, name + ".so")
        if os.path.exists(path):
            found[name] = os.path.normpath(path)
    return found


def scroll_modes(card, plugins):
    """SCROLL_MODES for the card, adjusted to whether its plugin was built."""
    modes = dict(SCROLL_MODES[card])
    plugin = CARD_PLUGIN.get(card)
    if plugin and plugin in plugins:
        modes["copy"] = (None, "copy")
        if card in ("ati", "rv100"):
            modes["auto"] = (None, "copy")
            modes["pan"] = ("--scroll-mode=pan: " + _QUIRK, "copy")
    return modes


# The boot framebuffer of the handover guests (fix.id), replaced by bochs-drm.
BOOT_FB = {"vesa": "VESA VGA", "efi": "EFI VGA"}

CONSOLED_LOG = "/tmp/consoled.log"
# The session's PATH (daemon/session/session.h SESSION_PATH).
SESSION_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
CONSOLED_STATUS = "/tmp/consoled.status"


def tap_note(msg):
    """A TAP comment."""
    print("# " + msg, flush=True)


class CheckFailed(Exception):
    pass


def oracle_text(font, cols):
    """The oracle's bytes: only what the kernel console and consoled agree on
    (docs/TESTING.md, the oracle's known differences): SGR 30-37, 40-47, 90-97, bold (bright), reverse
    without bold, default colours, a wrapped line, non-ASCII characters from
    the font, and with a PSF font underline, dim and italic as fbcon's
    colours (vt.c build_attr), and blink as a bright background with fonts
    of 256 glyphs (with 512 the kernel has 8 background colours). Every line
    ends with SGR 0 before the newline, and nothing scrolls, so erase colours
    never matter."""
    names = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"]
    t = "\033[0m\033[?25l\033[H\033[2J"
    t += "consoled pixel oracle: %s\033[0m\n" % font
    t += "".join("\033[3%dm%s " % (i, n) for i, n in enumerate(names)) + "\033[0m\n"
    t += "".join("\033[1;3%dm%s " % (i, n) for i, n in enumerate(names)) + "\033[0m\n"
    t += "".join("\033[9%dm%s " % (i, n) for i, n in enumerate(names)) + "\033[0m\n"
    t += "".join("\033[4%d;3%dm bg%d \033[0m" % (i, 7 if i == 0 else 0, i) for i in range(8)) + "\n"
    t += "".join("\033[4%d;1;3%dm B%d \033[0m" % (i, (i + 3) % 8, i) for i in range(8)) + "\n"
    t += "plain \033[1mbold\033[0m \033[7mreverse\033[0m \033[7;31;42mreverse red on green\033[0m"
    t += " \033[34;47mblue on white\033[0;39;49m default\033[0m\n"
    t += ("\033[4munderline\033[0m \033[2mdim\033[0m \033[3mitalic\033[0m \033[1;4mbold-ul\033[0m"
          " \033[31;4mred-ul\033[0m \033[34;2mdim-blue\033[0m\n")
    t += "\033[4;7mul-rev\033[0m \033[3;4mit-ul\033[0m \033[2;4;42mdim-ul-green\033[0m"
    if len(load_font(font).glyphs) <= 256:
        t += " \033[5mblink\033[0m \033[5;44;33mblink-blue\033[0m"
    t += "\033[0m\n"
    t += "".join(chr(ord("a") + i % 26) for i in range(cols + cols // 2)) + "\033[0m\n"
    t += "wrap at the edge: " + "x" * (cols - len("wrap at the edge: ")) + "\033[0m\n"
    present = [c for c in NON_ASCII if font_has(font, c)]
    t += "non-ASCII: " + " ".join(present) + "\033[0m\n"
    t += "\033[33mlast line\033[0m"
    return t.encode("utf-8"), len(present)


_font_cache = {}


def load_font(name):
    if name not in _font_cache:
        _font_cache[name] = screen.load_font(os.path.join(FONT_DIR, name))
    return _font_cache[name]


def font_has(name, ch):
    return load_font(name).glyph_for(ch) is not None


class Runner:
    def __init__(self, vm, card, out_dir):
        self.vm = vm
        self.card = card
        self.out_dir = out_dir
        self.n = 0
        self.failed = []

    # -- reporting --

    # Checks whose verdict is a wall-clock bound: each runs while a guest
    # beside it idles (turns.py). The names are the same on every card.
    # Medians, counts and lateness in a window: frames, syn-dropped,
    # osc52-flood, bell-flood, keys-kitty (a repeat in 0.7 s); a state
    # caught on the host's clock before a timer ends it: sync-output (a 1 s
    # hold), blank, pointer-* (the pointer hides after 3 s), cursor-blink,
    # bell-flash, bell-scroll, kmsg-* (the band's 2 s), deferred-prompt
    # (1 s), respawn-clean (the 10 s respawn pause), fb-wait-none (4-7 s),
    # fb-wait-all (2-5 s);
    # events kept in order by 0.1-0.4 s gaps: mouse-report, select-paste,
    # paste-keys (a double click's 400 ms).
    TIMED = {"frames", "syn-dropped", "osc52-flood", "bell-flood", "keys-kitty", "sync-output",
             "blank", "pointer-oracle", "pointer-events", "pointer-zoom", "pointer-scroll",
             "pointer-vt-away", "pointer-blank", "cursor-blink", "bell-flash", "bell-scroll",
             "kmsg-band", "kmsg-view", "kmsg-blank", "kmsg-real", "kmsg-flood",
             "deferred-prompt", "respawn-clean", "fb-wait-none", "fb-wait-all", "mouse-report",
             "select-paste", "paste-keys"}

    def check(self, name, fn):
        self.n += 1
        with turns.turn(exclusive=name in self.TIMED):
            self._check(name, fn)

    def _check(self, name, fn):
        t0 = time.monotonic()
        try:
            fn()
        except Exception as e:  # noqa: BLE001 -- every failure is reported, then the next check runs
            self.failed.append(name)
            # TAP: one line for the verdict, the details as comments.
            lines = str(e).splitlines() or [""]
            print("not ok %d - %s: %s (%.1fs)" % (self.n, name, lines[0], time.monotonic() - t0))
            for line in lines[1:]:
                print("# " + line)
            if not isinstance(e, CheckFailed):
                for line in traceback.format_exc().splitlines():
                    print("# " + line)
            sys.stdout.flush()
            self.dump_log()
            self.cleanup()
            return
        print("ok %d - %s (%.1fs)" % (self.n, name, time.monotonic() - t0), flush=True)

    def dump_log(self):
        try:
            out, _ = self.vm.run("cat %s 2>/dev/null | tail -n 30" % CONSOLED_LOG, timeout=20)
            print("# consoled log:\n" + "".join("#   " + l + "\n" for l in out.splitlines()), flush=True)
        except Exception:  # noqa: BLE001 -- best effort only
            pass

    def fail(self, msg, expected=None, actual=None, tag="diff"):
        if expected is not None and actual is not None:
            name = "%s-%s-%d" % (self.card, tag, self.n)
            try:
                paths = screen.save_diff(expected, actual, self.out_dir, name)
                msg += " (pictures: %s)" % ", ".join(paths)
            except ValueError:
                pass
        raise CheckFailed(msg)

    # -- guest helpers --

    def sh(self, cmd, timeout=30):
        return self.vm.check(cmd, timeout)

    def stable_grab(self, settle=0.4, timeout=15, grab=None):
        """A screendump once two grabs `settle` seconds apart agree (grab:
        another picture than the card's, as VM.wait_screen())."""
        grab = grab or self.vm.grab
        deadline = time.monotonic() + timeout
        prev = grab()
        while True:
            time.sleep(settle)
            cur = grab()
            if not screen.compare(prev, cur):
                return cur
            if time.monotonic() > deadline:
                self.fail("the screen did not settle within %ds" % timeout)
            prev = cur

    def wait_equal(self, expected, what, timeout=20, grab=None):
        """Poll until the screen (or grab()'s picture) equals `expected`;
        fail with pictures otherwise."""
        deadline = time.monotonic() + timeout
        while True:
            img = grab() if grab else self.vm.grab()
            diff = screen.compare(expected, img)
            if not diff:
                return img
            if time.monotonic() > deadline:
                self.fail("%s: %d pixels differ in %r" % (what, diff.count, diff.bbox),
                          expected, img)
            time.sleep(0.3)

    def wait_text(self, font, predicate, what, timeout=20):
        img, decoded = self.vm.wait_screen(load_font(font), predicate, timeout=timeout)
        if not predicate(decoded):
            path = self.vm.save_png(img, "%s-%d-screen.png" % (self.card, self.n))
            self.fail("%s; screen shows:\n%s\n(picture: %s)" % (what, decoded.text(), path))
        return img, decoded

    def fb_state(self):
        return self.sh("cd /sys/class/graphics/fb0 && cat virtual_size bits_per_pixel pan mode 2>/dev/null; true")

    def start_consoled(self, font, session, extra="", env=""):
        """Start consoled on tty1 in the background; its exit status lands in a file.
        `font` is a file under /fonts, or None for no --font-file. Plugins come
        from the build tree, copied to GUEST_BACKEND_DIR."""
        # The log exists before this returns: the background shell below
        # may open it only later, and a check reads it at once.
        self.sh("rm -f %s %s && : >%s" % (CONSOLED_LOG, CONSOLED_STATUS, CONSOLED_LOG))
        cmd = ("%s CONSOLED_BACKEND_DIR=%s consoled --vt=1 --fbdev=/dev/fb0 %s"
               " --palette=linux %s --login -- %s"
               % (env, GUEST_BACKEND_DIR, "--font-file=/fonts/" + font if font else "", extra,
                  session))
        self.sh("(%s >%s 2>&1; echo $? >%s) </dev/null >/dev/null 2>&1 &"
                % (cmd, CONSOLED_LOG, CONSOLED_STATUS))

    def consoled_log(self):
        return self.sh("cat %s" % CONSOLED_LOG)

    def consoled_pid(self):
        out, status = self.vm.run("pidof consoled")
        return out.split()[0] if status == 0 and out.split() else None

    def consoled_exited(self):
        """True once the consoled of start_consoled has exited (its status
        file is written). Not `pidof`: right after the start the background
        shell may not have run consoled yet."""
        out, status = self.vm.run("cat %s" % CONSOLED_STATUS)
        return status == 0 and bool(out.strip())

    def wait_consoled_exit(self, timeout=15):
        deadline = time.monotonic() + timeout
        while True:
            out, status = self.vm.run("cat %s" % CONSOLED_STATUS)
            if status == 0 and out.strip():
                self.no_false_mode_change()
                return int(out.strip())
            if time.monotonic() > deadline:
                self.fail("consoled did not exit within %ds" % timeout)
            time.sleep(0.3)

    # Only a check that sets a mode itself may see consoled follow one: anywhere
    # else it is a false positive of the poll before every frame (consoled's
    # own pans and virtual sizes taken for another program's mode).
    mode_change_expected = False

    def no_false_mode_change(self):
        log = self.vm.run("cat %s" % CONSOLED_LOG)[0]
        if not self.mode_change_expected and "another program set" in log:
            self.fail("consoled followed a mode change nobody made:\n" + log)

    def stop_consoled(self):
        pid = self.consoled_pid()
        if pid:
            self.sh("kill %s" % pid)
            self.wait_consoled_exit()

    def cleanup(self):
        """After a failed check: no consoled left, tty1 in front."""
        self.mode_change_expected = False
        try:
            # A vtgrab left holding tty1 gives it back on SIGTERM; one that
            # died holding it (SIGKILL) left the VT in its mode: reset.
            self.vm.run("pkill -x vtgrab && sleep 1; pkill -9 -x vtgrab; pkill consoled; sleep 1;"
                        " pkill -9 consoled; test -x /usr/bin/vtgrab && vtgrab reset 1; chvt 1",
                        timeout=20)
        except Exception:  # noqa: BLE001 -- best effort only
            pass

    def fbcon_show(self, font, text, tty=1):
        """Load the font into fbcon for ttyN and write the text there."""
        self.sh("setfont /fonts/%s -C /dev/tty%d" % (font, tty))
        path = "/tmp/text-tty%d" % tty
        self.put_file(path, text)
        self.sh("cat %s > /dev/tty%d" % (path, tty))
        return path

    def put_file(self, path, data):
        """Write bytes to a guest file through the serial shell (printf with octal escapes)."""
        self.sh(": > %s" % path)
        for i in range(0, len(data), 200):
            chunk = "".join("\\%03o" % b for b in data[i:i + 200])
            self.sh("printf '%s' >> %s" % (chunk, path))

    # -- checks --

    def check_oracle(self, font):
        cols = self.vm_xres // load_font(font).width
        text, n_non_ascii = oracle_text(font, cols)
        if n_non_ascii < 5:
            self.fail("font %s has only %d of the non-ASCII test characters" % (font, n_non_ascii))
        path = self.fbcon_show(font, text)
        expected = self.stable_grab()
        decoded = screen.read_screen(expected, load_font(font))
        if "consoled pixel oracle" not in decoded:
            self.fail("fbcon's reference picture does not show the text:\n" + decoded.text())

        # Blank tty1 first: consoled must draw every pixel of the picture,
        # not inherit fbcon's.
        self.sh("printf '\\033[H\\033[2J' > /dev/tty1")
        blank = self.stable_grab()
        if not screen.compare(expected, blank):
            self.fail("clearing tty1 did not change the picture")
        before = self.fb_state()
        self.start_consoled(font, "/bin/sh -c 'cat %s; exec sleep 100000'" % path)
        self.wait_equal(expected, "consoled differs from fbcon with %s" % font)
        # what auto chose on this card (the README's table of drivers)
        for line in self.consoled_log().splitlines():
            if "Scrolling: mode" in line or "Flush: " in line:
                tap_note(line)
        self.stop_consoled()
        if self.fb_state() != before:
            self.fail("framebuffer mode after exit %r, before %r" % (self.fb_state(), before))

    def check_exit(self, sig, want_status):
        font = KEYBOARD_FONT
        text = b"\033[0m\033[?25l\033[H\033[2J\033[32mfbcon text before consoled\033[0m\n"
        self.fbcon_show(font, text)
        expected = self.stable_grab()
        before = self.fb_state()

        self.start_consoled(font, "/bin/sh -c 'printf \"\\033[?25l\\033[44;33mconsoled session\"; exec sleep 100000'")
        self.wait_text(font, lambda s: "consoled session" in s, "consoled did not draw its session")
        pid = self.consoled_pid()
        if not pid:
            self.fail("consoled is not running")
        self.sh("kill -%s %s" % (sig, pid))
        status = self.wait_consoled_exit()
        if status != want_status:
            self.fail("consoled exited with %d after SIG%s, expected %d" % (status, sig, want_status))
        log = self.sh("cat %s" % CONSOLED_LOG)
        if sig == "SEGV" and "fatal signal, restoring the console" not in log:
            self.fail("the crash handler did not run; log:\n" + log)
        if sig == "TERM" and "Blitter backend " in log:
            # The plugin is idle and gone before the mode (and with it the
            # kernel's acceleration) and the VGA ports go back to the kernel.
            released = re.search(r"Blitter backend \S+ released", log)
            restored = re.search(r"at \d+ bpp restored", log)
            if not released or not restored or released.start() > restored.start():
                self.fail("the blitter was not released before the mode was restored; log:\n" + log)

        after = self.fb_state()
        if after != before:
            self.fail("framebuffer mode after SIG%s: %r, before: %r" % (sig, after, before))
        # A clean exit clears the VT's text (what TTYVTDisallocate= did at
        # exit, consoled(8)), and so does the crash handler (the buffer held
        # the mirror of the session's screen, vcs.h): the old text and the
        # session's are gone; written again, the text gives fbcon's picture
        # from before pixel for pixel, so the mode and the colour map are
        # fbcon's again.
        self.wait_text(font, lambda s: "fbcon text before consoled" not in s
                       and "consoled session" not in s,
                       "text from before consoled or of its session is on tty1 after SIG%s"
                       " (consoled clears the VT at exit)" % sig)
        self.fbcon_show(font, text)
        # fbcon redraws tty1 with its own mode and colour map: the very picture
        # it showed before consoled started.
        self.wait_equal(expected, "fbcon's picture after SIG%s" % sig)
        # ... and it draws new text (KD_TEXT is back).
        self.sh("printf '\\033[31mfbcon draws again\\033[0m' > /dev/tty1")
        self.wait_text(font, lambda s: "fbcon draws again" in s, "fbcon does not draw after exit")

    def start_shell(self, font, extra=""):
        """consoled with an interactive shell whose prompt is '$ '."""
        self.start_consoled(font, "/usr/bin/env PS1='$ ' /bin/sh", extra)
        self.wait_text(font, lambda s: any(l.startswith("$ ") for l in s.lines), "no shell prompt")

    def wait_output(self, font, command, output, what):
        """Wait until the screen shows the line '$ command' followed by 'output'."""
        def shows(s):
            lines = [l.rstrip() for l in s.lines]
            return any(lines[i] == "$ " + command and lines[i + 1] == output
                       for i in range(len(lines) - 1))
        return self.wait_text(font, shows, what)

    def check_keyboard(self):
        font = KEYBOARD_FONT
        self.start_shell(font)
        self.vm.send_text("echo hello\n")
        self.wait_output(font, "echo hello", "hello", "typed `echo hello` did not print hello")
        # Shift and symbols through xkb: a quoted string with capitals.
        self.vm.send_text("echo \"A-Z_ok\"\n")
        self.wait_output(font, "echo \"A-Z_ok\"", "A-Z_ok", "shifted keys came out wrong")
        self.stop_consoled()

    TERM_SCRIPT = "/tmp/term-output.sh"

    def check_terminal_output(self):
        """The output half, through a real session (see the docstring)."""
        font = KEYBOARD_FONT
        # The session script: fills the scrollback, waits, clears it with
        # CSI 3 J, waits, then prints each sequence at a row of its own and
        # asks consoled what a program would ask (answers read in raw mode,
        # shown without their ESC).
        script = r"""
BEL=$(printf '\a')
ask() { stty raw -echo; printf "$1" >/dev/tty; read -r -t 2 -d "$2" ans; stty sane; printf '%s' "$ans" | tr -d '\033'; }
seq 1 120 | sed 's/^/scrollback /'
printf 'screen bottom\n'
while [ ! -e /tmp/go1 ]; do sleep 0.2; done
printf '\033[H\033[2J\033[3Jcleared'
while [ ! -e /tmp/go2 ]; do sleep 0.2; done
printf '\033[?25l\033[H\033[2J'
printf '\033[1;1Hrep:x\033[4bZ'
printf '\033[2;1Hhpa:\033[20`H'
printf '\033[3;10Hcnl\033[Enext'
printf '\033[6;1Hcpl\033[Fprev'
printf '\033[7;1Hsco:\033[s\033[1;70Hfar\033[uU'
printf '\033[8;1H\033[38:5:1mred\033[0m \033[38:2::0:170:0mgreen\033[0m'
printf '\033[9;1H\033[>4;2m\033[>1;2mplain\033[0m'
printf '\033[10;1Hpw:\033[8msecret\033[28m:end'
printf '\033[11;1Hst:\033[9mst\033[29m:end'
printf '\033[12;1Hbefore-alt'
printf '\033[?1049h\033[H\033[2Jon-alt\033[2;5r'
rq=$(ask '\033[?12$p' y)
printf '\033[3;1Hafter-query\033[r\033[?1049l'
printf '\033[13;1Hdecrqm=%s' "$rq"
printf '\033[14;1Hosc11=%s' "$(ask '\033]11;?\007' "$BEL")"
printf '\033[15;1Hosc10=%s' "$(ask '\033]10;?\033\\' '\\')"
printf '\033[16;1Hfgbg=%s' "$COLORFGBG"
printf '\033[17;1Hdone'
exec sleep 100000
"""
        self.sh("rm -f /tmp/go1 /tmp/go2")
        self.put_file(self.TERM_SCRIPT, script.encode())
        self.start_consoled(font, "/bin/sh %s" % self.TERM_SCRIPT)

        # CSI 3 J: Shift+PageUp shows older lines before it, nothing after.
        self.wait_text(font, lambda s: "screen bottom" in s, "the session did not print")
        bottom = self.stable_grab()
        self.vm.send_keys(["shift", "pgup"])
        self.wait_text(font, lambda s: "screen bottom" not in s and "scrollback" in s,
                       "Shift+PageUp did not show the scrollback before CSI 3 J")
        self.vm.send_keys(["shift", "pgdn"])
        self.wait_equal(bottom, "Shift+PageDown did not come back")
        self.sh("touch /tmp/go1")
        self.wait_text(font, lambda s: "cleared" in s, "the session did not clear")
        cleared = self.stable_grab()
        self.vm.send_keys(["shift", "pgup"])
        time.sleep(1.5)
        after = self.stable_grab()
        # (every part is checked before the check fails, so that a failure
        # shows all that is wrong)
        wrong = []
        if screen.compare(cleared, after):
            paths = screen.save_diff(cleared, after, self.out_dir, "%s-e3-%d" % (self.card, self.n))
            wrong.append("Shift+PageUp after CSI 3 J still shows a scrollback (pictures: %s)"
                         % ", ".join(paths))
        self.vm.send_keys(["shift", "pgdn"])

        # The sequences, row by row (0-based rows, as printed with CSI row;1 H).
        self.sh("touch /tmp/go2")
        img, decoded = self.wait_text(font, lambda s: len(s.lines) > 16 and
                                      s.lines[16].startswith("done"),
                                      "the session did not finish", timeout=40)
        lines = [l.rstrip() for l in decoded.lines]
        want = {
            0: "rep:xxxxxZ".ljust(69) + "far",
            1: "hpa:".ljust(19) + "H",
            2: " " * 9 + "cnl",
            3: "next",
            4: "prev",
            5: "cpl",
            6: "sco:U",
            7: "red green",
            8: "plain",
            9: "pw:      :end",
            11: "before-alt",
            12: "decrqm=[?12;4$",
            13: "osc11=]11;rgb:0000/0000/0000",
            14: "osc10=]10;rgb:aaaa/aaaa/aaaa",
            15: "fgbg=7;0",
            16: "done",
        }
        wrong += ["row %d: %r, expected %r" % (r, lines[r], w) for r, w in sorted(want.items())
                  if lines[r] != w]
        if lines[10][:3] != "st:" or lines[10][5:] != ":end" or lines[10][3:5] == "st":
            wrong.append("row 10: %r, expected crossed-out 'st' (no plain glyphs)" % lines[10])
        if any("after-query" in l or "on-alt" in l for l in lines):
            wrong.append("text of the alternate screen is on the shell's screen")
        colours = [(7, 0, 1, "red"), (7, 4, 2, "green"), (8, 0, 7, "plain")]
        for row, col, fg, what in colours:
            if decoded.fg[row][col] != fg:
                wrong.append("%s drawn in colour %d, expected %d" % (what, decoded.fg[row][col], fg))
        if wrong:
            path = self.vm.save_png(img, "%s-%d-screen.png" % (self.card, self.n))
            self.fail("%d wrong:\n%s\nscreen:\n%s\n(picture: %s)"
                      % (len(wrong), "\n".join(wrong), decoded.text(), path))
        self.stop_consoled()

    def session_pid(self):
        """The session process: consoled's only child."""
        pid = self.consoled_pid()
        out = self.sh("cat /proc/%s/task/%s/children" % (pid, pid)).split()
        if len(out) != 1:
            self.fail("consoled has children %r, expected one session" % out)
        return out[0]

    def check_session(self):
        font = KEYBOARD_FONT
        self.start_consoled(font, "/bin/sh -c 'printf \"\\033[?25lsession up\"; exec sleep 100000'",
                            env="NOTIFY_SOCKET=/run/nothing WATCHDOG_USEC=1 JOURNAL_STREAM=1:2"
                                " CONSOLED_SECRET=1 LD_LIBRARY_PATH=/tmp LANG=C.UTF-8")
        self.wait_text(font, lambda s: "session up" in s, "the session did not start")
        pid = self.session_pid()
        fds = self.sh("ls /proc/%s/fd" % pid).split()
        if sorted(fds) != ["0", "1", "2"]:
            self.fail("the session has fds %r open, expected only 0, 1, 2" % fds)
        links = self.sh("for fd in 0 1 2; do readlink /proc/%s/fd/$fd; done" % pid).split()
        if len(set(links)) != 1 or not links[0].startswith("/dev/pts/"):
            self.fail("the session's fds 0-2 are %r, expected one pty" % links)
        stat = self.sh("cat /proc/%s/stat" % pid)
        fields = stat[stat.rindex(")") + 2:].split()
        # fields[3] is the session id, fields[4] the controlling tty.
        if fields[3] != pid:
            self.fail("the session process is not a session leader: %s" % stat)
        pts = int(links[0].rsplit("/", 1)[1])
        if int(fields[4]) != (136 << 8 | pts):
            self.fail("the controlling tty of the session is %s, expected %s" % (fields[4], links[0]))
        env = self.sh("tr '\\0' '\\n' < /proc/%s/environ" % pid).split("\n")
        # (PWD and SHLVL are the shell's own, set before it exec'd sleep)
        env = sorted(e for e in env if e and not e.startswith(("PWD=", "SHLVL=")))
        # Built from nothing: the daemon's notify socket, watchdog, journal
        # stream and test switches stay behind; the locale passes.
        want = sorted(["TERM=xterm-256color", "COLORFGBG=7;0", "PATH=" + SESSION_PATH,
                       "XDG_SEAT=seat0", "XDG_VTNR=1", "LANG=C.UTF-8"] + (["COLORTERM=truecolor"] if self.vm_bpp > 8 else []))
        if env != want:
            self.fail("the session's environment is %r, expected %r" % (env, want))
        size = self.sh("stty -F %s size" % links[0]).split()
        font_obj = load_font(font)
        want = [str(self.vm_yres // font_obj.height), str(self.vm_xres // font_obj.width)]
        if size != want:
            self.fail("window size %r, expected %r" % (size, want))
        self.stop_consoled()

    def check_keys(self):
        font = KEYBOARD_FONT
        self.start_shell(font)
        self.vm.send_text("echo ")
        self.vm.send_keys(["caps_lock"])
        self.vm.send_text("abc")
        led = "cat /sys/class/leds/input*::capslock/brightness"
        deadline = time.monotonic() + 10
        while self.sh(led).split() != ["1"]:
            if time.monotonic() > deadline:
                self.fail("the Caps Lock LED did not light: %r" % self.sh(led))
            time.sleep(0.2)
        self.vm.send_keys(["caps_lock"])
        self.vm.send_text("d\n")
        self.wait_output(font, "echo ABCd", "ABCd", "Caps Lock did not give capitals")
        if self.sh(led).split() != ["0"]:
            self.fail("the Caps Lock LED stayed on: %r" % self.sh(led))

        # Scrollback: 200 numbered lines, then a page up shows earlier ones.
        self.vm.send_text("seq 1 200\n")
        self.wait_text(font, lambda s: any(l.rstrip() == "200" for l in s.lines), "seq did not run")
        self.vm.send_keys(["shift", "pgup"])
        _, decoded = self.wait_text(font, lambda s: "200" not in [l.rstrip() for l in s.lines],
                                    "Shift+PageUp did not scroll back")
        numbers = [int(l) for l in (l.strip() for l in decoded.lines) if l.isdigit()]
        if not numbers or max(numbers) > 190 or max(numbers) < 100:
            self.fail("Shift+PageUp shows lines %r" % numbers)
        self.vm.send_keys(["shift", "pgdn"])
        self.wait_text(font, lambda s: any(l.rstrip() == "200" for l in s.lines),
                       "Shift+PageDown did not come back")
        self.stop_consoled()

    def check_keys_terminfo(self):
        font = KEYBOARD_FONT
        caps = terminfokeys.key_caps(terminfokeys.infocmp())
        # What to type and the bytes it must send: (label, qcodes, bytes).
        walk = [(cap, terminfokeys.qcodes(key), seq) for cap, seq, key in caps
                if not isinstance(key, str)]
        skipped = [(cap, seq, key) for cap, seq, key in caps if isinstance(key, str)]
        walk += [("Ctrl+BackSpace", ["ctrl", "backspace"], b"\x08"),
                 ("Alt+BackSpace", ["alt", "backspace"], b"\x1b\x7f"),
                 ("Ctrl+Alt+Shift+Up", ["ctrl", "alt", "shift", "up"], b"\x1b[1;8A"),
                 ("Num Lock on", ["num_lock"], b""),
                 # xterm's numLock: the keypad types whatever the keypad mode
                 ("kp_1 (Num Lock)", ["kp_1"], b"1"),
                 ("kp_add (Num Lock)", ["kp_add"], b"+"),
                 ("Num Lock off", ["num_lock"], b"")]
        # After rmkx (written to the pty below): normal cursor and keypad mode.
        normal = [("Up (rmkx)", ["up"], b"\x1b[A"), ("Home (rmkx)", ["home"], b"\x1b[H"),
                  ("End (rmkx)", ["end"], b"\x1b[F"), ("kp_5 (rmkx)", ["kp_5"], b"\x1b[E"),
                  ("kp_add (rmkx)", ["kp_add"], b"+"),
                  ("Shift+Left (rmkx)", ["shift", "left"], b"\x1b[1;2D")]

        # The session: raw mode, smkx (DECCKM and DECKPAM, as ncurses
        # programs set them), then every byte it reads into a file.
        self.put_file("/tmp/keys-session.sh",
                      b"stty raw -echo\nprintf '\\033[?1h\\033='\ntty >/tmp/keys.tty\n"
                      b": >/tmp/keys.ready\nexec cat >/tmp/keys.raw\n")
        self.sh("rm -f /tmp/keys.ready /tmp/keys.raw /tmp/keys.tty")
        self.start_consoled(font, "/bin/sh /tmp/keys-session.sh")
        deadline = time.monotonic() + 20
        while self.vm.run("test -e /tmp/keys.ready")[1] != 0:
            if time.monotonic() > deadline:
                self.fail("the key session did not start")
            time.sleep(0.3)

        def typed():
            out = self.sh("od -An -tx1 -v /tmp/keys.raw")
            return bytes(int(h, 16) for h in out.split())[start:]

        # The session may run before consoled reads the keyboard: type x
        # until one comes through, then walk from what is there.
        start = 0
        deadline = time.monotonic() + 30
        while b"x\r" not in typed():
            if time.monotonic() > deadline:
                self.fail("no key reaches the session: %r" % typed())
            self.vm.send_text("x\n")
            time.sleep(1)
        time.sleep(0.5)
        probes = typed()
        if probes.strip(b"x\r"):  # (the first may come in part)
            self.fail("the probe keys sent %r" % probes)
        start = len(probes)

        def walk_keys(keys, done):
            """Type the keys, Ctrl+\\ (FS, in no key's sequence) after each;
            wait until the file holds as many bytes as all keys so far."""
            for _, q, _ in keys:
                self.vm.send_combo(q)
                if q != ["num_lock"]:
                    self.vm.send_keys(["ctrl", "backslash"])
            want = done + sum(len(seq) + 1 for _, q, seq in keys if q != ["num_lock"])
            deadline = time.monotonic() + 30
            while len(typed()) < want and time.monotonic() < deadline:
                time.sleep(0.5)
            return want

        done = walk_keys(walk, 0)
        # rmkx, as if the session wrote it
        self.sh("printf '\\033[?1l\\033>' > $(cat /tmp/keys.tty)")
        time.sleep(0.5)
        walk_keys(normal, done)
        got = typed().split(b"\x1c")
        keys = [k for k in walk + normal if k[1] != ["num_lock"]]

        def show(b):
            return "".join("\\E" if c == 27 else chr(c) if 32 <= c < 127 else "\\%03o" % c
                           for c in b)
        rows, bad = [], []
        for i, (label, q, seq) in enumerate(keys):
            actual = got[i] if i < len(got) else None
            ok = actual == seq
            rows.append("%-20s %-26s %-12s %s" % (label, "+".join(q), show(seq),
                                                  "ok" if ok else "WRONG: " +
                                                  ("nothing" if actual is None else show(actual))))
            if not ok:
                bad.append(label)
        for cap, seq, reason in skipped:
            rows.append("%-20s %-26s %-12s not sent: %s" % (cap, "-", show(seq), reason))
        print("# keys-terminfo: %d keys typed, %d right, %d capabilities no key sends"
              % (len(keys), len(keys) - len(bad), len(skipped)))
        for row in rows:
            print("#   " + row)
        if len(got) != len(keys) + 1 or got[-1] != b"":
            bad.append("%d key reads for %d keys" % (len(got) - 1, len(keys)))
        self.stop_consoled()
        if bad:
            self.fail("%d keys sent other bytes than the terminfo entry: %s"
                      % (len(bad), ", ".join(bad)))

        # Backspace at a canonical-mode read: the pty's erase character
        # (^?) must come, or the line keeps the x and a ^H (6 characters).
        self.start_shell(font)
        self.wait_log(CONSOLED_LOG, "input: Keyboard /dev/input/", "consoled found no keyboard")
        self.vm.send_text("read v; echo \"[$v] ${#v}\"\n")
        time.sleep(0.5)
        self.vm.send_text("abcx")
        self.vm.send_keys(["backspace"])
        self.vm.send_text("d\n")
        self.wait_text(font, lambda s: any(l.rstrip() == "[abcd] 4" for l in s.lines),
                       "Backspace at `read` did not erase")
        self.stop_consoled()

    def put_bytes(self, path, data):
        """put_file with printable bytes as they are (fewer, longer printf lines)."""
        self.sh(": > %s" % path)
        chunk = ""
        for i, b in enumerate(data):
            chunk += chr(b) if 32 <= b < 127 and chr(b) not in "'\\%-" else "\\%03o" % b
            if len(chunk) > 700 or i == len(data) - 1:
                self.sh("printf '%s' >> %s" % (chunk, path))
                chunk = ""

    def check_caps_terminfo(self):
        """The output capabilities of xterm-256color's entry against a reference
        model of xterm's effect (tests/vm/terminfocaps.py), read off the screen."""
        font = load_font(KEYBOARD_FONT)
        cols, rows = self.vm_xres // font.width, self.vm_yres // font.height
        walk = terminfocaps.Walk(rows, cols)
        phases = walk.phases()
        names = terminfocaps.infocmp_strings()
        e3 = walk.t("E3")
        # phase 0: a scrollback; 1: clear and E3; 2..: the screens
        blobs = [b"".join(b"scrollback %d\n" % i for i in range(rows * 2)) + b"before-e3",
                 walk.t("clear") + e3 + b"after-e3"] + [bytes(p.data) for p in phases]
        for i, b in enumerate(blobs):
            self.put_bytes("/tmp/caps%d.bin" % i, b)
        # The session writes each phase when told; ONLCR off as ncurses has
        # it, so LF is a bare index. Then u7 (CPR at row 5, column 9) and u9
        # (DA), whose answers go to files.
        script = ("stty -opost -echo\n"
                  "for i in %s; do\n"
                  "  while [ ! -e /tmp/caps.go$i ]; do sleep 0.1; done\n"
                  "  cat /tmp/caps$i.bin; : > /tmp/caps.done$i\n"
                  "done\n"
                  "while [ ! -e /tmp/caps.goask ]; do sleep 0.1; done\n"
                  "stty raw -echo\n"
                  "printf '\\033[5;9H%s'; read -r -t 3 -d R a; printf '%%s' \"$a\" >/tmp/caps.u7\n"
                  "printf '%s'; read -r -t 3 -d c a; printf '%%s' \"$a\" >/tmp/caps.u9\n"
                  "stty sane; : > /tmp/caps.answered\n"
                  "exec sleep 100000\n"
                  % (" ".join(str(i) for i in range(len(blobs))),
                     "".join("\\%03o" % b for b in walk.t("u7")),
                     "".join("\\%03o" % b for b in walk.t("u9"))))
        self.put_file("/tmp/caps.sh", script.encode())
        self.sh("rm -f /tmp/caps.go* /tmp/caps.done* /tmp/caps.u7 /tmp/caps.u9 /tmp/caps.answered")
        self.start_consoled(KEYBOARD_FONT, "/bin/sh /tmp/caps.sh")
        verdict = {}  # cap -> "ok" or "WRONG: ..."

        def go(i):
            self.sh("touch /tmp/caps.go%d" % i)
            deadline = time.monotonic() + 30
            while self.vm.run("test -e /tmp/caps.done%d" % i)[1] != 0:
                if time.monotonic() > deadline:
                    self.fail("the session did not write phase %d" % i)
                time.sleep(0.2)

        # E3: Shift+PageUp shows the scrollback before it (the control),
        # nothing after it.
        go(0)
        self.wait_text(KEYBOARD_FONT, lambda s: "before-e3" in s, "the session did not print")
        before = self.stable_grab()
        self.vm.send_keys(["shift", "pgup"])
        self.wait_text(KEYBOARD_FONT, lambda s: "before-e3" not in s,
                       "Shift+PageUp shows no scrollback (the control for E3)")
        self.vm.send_keys(["shift", "pgdn"])
        self.wait_equal(before, "Shift+PageDown did not come back")
        go(1)
        self.wait_text(KEYBOARD_FONT, lambda s: "after-e3" in s, "the session did not clear")
        cleared = self.stable_grab()
        self.vm.send_keys(["shift", "pgup"])
        time.sleep(1.5)
        up = self.stable_grab()
        verdict["E3"] = "ok" if not screen.compare(cleared, up) else \
            "WRONG: Shift+PageUp after it still shows a scrollback"
        if verdict["E3"] != "ok":
            self.vm.send_keys(["shift", "pgdn"])
            self.wait_equal(cleared, "Shift+PageDown did not come back")

        checker = terminfocaps.Checker(font, self.vm_bpp)
        for i, p in enumerate(phases, start=2):
            go(i)
            cursor = (p.m.y, p.m.x)
            deadline = time.monotonic() + 12
            while True:
                img = self.vm.grab()
                bad = checker.wrong_cells(img, p, cursor)
                cur_ok = checker.cell_ok(img, *cursor, p.m.grid[cursor[0]][cursor[1]])
                if (not bad and cur_ok is (p.cursor == "hidden")) or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            if bad or cur_ok is not (p.cursor == "hidden"):
                img = self.stable_grab()
                bad = checker.wrong_cells(img, p, cursor)
                cur_ok = checker.cell_ok(img, *cursor, p.m.grid[cursor[0]][cursor[1]])
                path = self.vm.save_png(img, "%s-%d-caps-%s.png" % (self.card, self.n, p.name))
                decoded = screen.read_screen(img, font)
                print("# caps-terminfo phase %s wrong (picture: %s); screen:" % (p.name, path))
                for r in range(rows):
                    print("#   %2d %s" % (r, decoded.lines[r].rstrip()))
            caps_here = set().union(*p.owners.values())
            rows_bad = {}
            for r, c in bad:
                rows_bad.setdefault(r, []).append(c)
            for cap in sorted(caps_here):
                mine = [r for r in sorted(rows_bad) if cap in p.owners.get(r, ())]
                if mine:
                    r = mine[0]
                    want = "".join(ch for ch, _ in p.m.grid[r]).rstrip()
                    verdict[cap] = ("WRONG: row %d cells %s; expected %r"
                                    % (r, ",".join(map(str, rows_bad[r][:8])), want))
                else:
                    verdict.setdefault(cap, "ok")
            for r in sorted(rows_bad):
                if r not in p.owners:
                    verdict["(%s: row %d)" % (p.name, r)] = "WRONG: a row no capability owns"
            cur_cap = p.cursor_cap
            if cur_ok is not (p.cursor == "hidden"):
                verdict[cur_cap] = "WRONG: the cursor is %s" % ("drawn" if p.cursor == "hidden"
                                                               else "not drawn")
            else:
                verdict.setdefault(cur_cap, "ok")

        # the answers
        self.sh("touch /tmp/caps.goask")
        deadline = time.monotonic() + 15
        while self.vm.run("test -e /tmp/caps.answered")[1] != 0:
            if time.monotonic() > deadline:
                self.fail("the session did not read the answers")
            time.sleep(0.3)
        u7 = self.sh("cat /tmp/caps.u7")
        u9 = self.sh("cat /tmp/caps.u9")
        verdict["u7"] = "ok" if u7 == "\033[5;9" else "WRONG: answered %r" % u7
        verdict["u9"] = "ok" if re.fullmatch("\033\\[\\?[0-9;]*", u9) else \
            "WRONG: answered %r" % u9
        self.stop_consoled()

        bytes_of = dict(walk.tested, E3=e3, u7=walk.t("u7"), u9=walk.t("u9"))
        table = []
        for cap, why in terminfocaps.decisions(names, set(bytes_of)):
            table.append((cap, why or verdict.get(cap, "WRONG: not checked")))
        table += [(c, v) for c, v in sorted(verdict.items()) if c not in names]
        bad = [c for c, v in table if v.startswith("WRONG")]
        print("# caps-terminfo: %d string capabilities, %d tested, %d wrong; missing glyphs: %s"
              % (len(names), sum(1 for c, v in table if c in names and
                                  (v == "ok" or v.startswith("WRONG"))),
                 len(bad), "".join(sorted(checker.missing)) or "none"))
        for cap, v in table:
            b = bytes_of.get(cap) or (walk.t.raw(cap) if cap in names else None)
            print("#   %-16s %-28s %s" % (cap, terminfocaps.show(b)[:28] if b else "-", v))
        if bad:
            self.fail("%d output capabilities wrong: %s" % (len(bad), ", ".join(bad)))

    def check_frames(self):
        font = KEYBOARD_FONT
        lines = 20000
        # Long lines (about 1.2 MB), so the session writes far more than one
        # read of the pty takes, for long enough to be drawn several times.
        self.sh("awk 'BEGIN { for (i = 1; i <= %d; i++) printf \"%%05d the quick brown fox "
                "jumps over the lazy dog %%d\\n\", i, i * i }' > /tmp/lines" % lines)
        self.start_consoled(font, "/bin/sh -c 't0=$EPOCHREALTIME; cat /tmp/lines;"
                            " echo $t0 $EPOCHREALTIME >/tmp/frames-time;"
                            " printf \"\\033[?25ldone\"; exec sleep 100000'",
                            extra="--stats --verbose")
        last = "%05d the quick brown fox jumps over the lazy dog %d" % (lines, lines * lines)
        self.wait_text(font, lambda s: "done" in s and any(l.rstrip() == last for l in s.lines),
                       "the output did not end on screen", timeout=60)
        self.stop_consoled()
        log = self.sh("cat %s" % CONSOLED_LOG)
        m = re.findall(r"stats: strategy=\w+ frames=(\d+) rows_scrolled=\d+ "
                       r"vram_bytes_written=\d+ vram_bytes_read=(\d+)", log)
        if not m:
            self.fail("no statistics in the log:\n" + log)
        frames = sum(int(f) for f, _ in m)
        read = sum(int(r) for _, r in m)
        print("# %d lines drawn in %d frames" % (lines, frames), flush=True)
        if frames > lines // 10:
            self.fail("%d lines took %d frames: output is not coalesced" % (lines, frames))
        if read != 0:
            self.fail("the renderer read %d bytes of VRAM" % read)
        # During a flood frames come at least FLOOD_GAP_MIN (100 ms) apart
        # (daemon/screen/frame.c): over the cat's time (the guest's clock, so a slow host
        # stretches both), the first read's frame, the end's, and one per
        # 100 ms between, and the start's and the last text's (50 ms before:
        # twice as many).
        t0, t1 = (float(v) for v in self.sh("cat /tmp/frames-time").split())
        bound = 4 + int((t1 - t0) / 0.1)
        print("# cat wrote for %.2f s: at most %d frames" % (t1 - t0, bound), flush=True)
        if frames > bound:
            self.fail("%d lines took %d frames in %.2f s: during a flood frames come more"
                      " often than every 100 ms" % (lines, frames, t1 - t0))
        # ... and when they are due: the pty's reads must not hold a due
        # frame back (the debug line of each flood frame says how late it came;
        # those after more than 100 KB are the flood's)
        late = [int(ms) for ms, nbytes in re.findall(
            r"Frame: \d+ us to draw, (\d+) ms after it was due, after (\d+) bytes", log)
            if int(nbytes) > 100000]
        print("# the flood's frames came %s ms after they were due" % late, flush=True)
        if not late:
            self.fail("no frame was drawn during the flood (--verbose 'Frame:' lines):\n" + log)
        if sorted(late)[len(late) // 2] > 50:
            self.fail("the flood's frames came %s ms after they were due: reading the pty"
                      " holds them back" % late)
        # A key typed into a flood: for 100 ms after it the flood's frames
        # keep the 16 ms pace (frame.c FLOOD_KEY_USEC), so its echo is not
        # held for the flood's 100-250 ms gap. The session cats the lines
        # until the keys are typed; each key's --stats "Key:" line says how
        # long after the first read that followed it a frame began.
        self.sh("rm -f /tmp/frames-keys")
        self.start_consoled(font, "/bin/sh -c 'while [ ! -e /tmp/frames-keys ]; do"
                            " cat /tmp/lines; done; printf \"\\033[2Jdone\";"
                            " exec sleep 100000'", extra="--stats")
        self.wait_text(font, lambda s: "the quick brown fox" in s.text(),
                       "the looping cat did not start", timeout=60)
        time.sleep(1)
        for _ in range(5):
            self.vm.send_text("x")
            time.sleep(0.3)
        self.sh("touch /tmp/frames-keys")
        self.wait_text(font, lambda s: "done" in s.text(), "the looping cat did not end",
                       timeout=60)
        self.stop_consoled()
        waits = [int(us) // 1000 for us in re.findall(
            r"Key: .* frame (\d+) us after the parse", self.sh("cat %s" % CONSOLED_LOG))]
        print("# keys typed into the flood: frames %s ms after the read that followed"
              % waits, flush=True)
        if len(waits) < 3:
            self.fail("%d of 5 keys typed into the flood got a Key: line" % len(waits))
        if max(waits) > 80:
            self.fail("a key typed into the flood waited %s ms for a frame after its read:"
                      " the flood's gap held it" % waits)

    IDLE_SECONDS = 10

    def context_switches(self, pid):
        out = self.sh("cat /proc/%s/status" % pid)
        m = dict(re.findall(r"^(\w+_ctxt_switches):\s+(\d+)$", out, re.M))
        if len(m) != 2:
            self.fail("no context switch counts in /proc/%s/status:\n%s" % (pid, out))
        return int(m["voluntary_ctxt_switches"]) + int(m["nonvoluntary_ctxt_switches"])

    def check_idle(self):
        font = KEYBOARD_FONT
        self.start_shell(font)
        # The prompt's frame, its snapshot update (32 ms after the output)
        # and the VT watch's follow-ups (1 s after the start) are over.
        time.sleep(2)
        pid = self.consoled_pid()
        before = self.context_switches(pid)
        time.sleep(self.IDLE_SECONDS)
        woke = self.context_switches(pid) - before
        print("# idle consoled: %d wake-ups in %d s (%.0f a minute)"
              % (woke, self.IDLE_SECONDS, woke * 60.0 / self.IDLE_SECONDS), flush=True)
        if woke > 1:
            self.fail("an idle consoled woke up %d times in %d s: something polls or runs a"
                      " periodic timer\n%s" % (woke, self.IDLE_SECONDS, self.consoled_log()))
        self.vm.send_text("echo still-here\n")
        self.wait_output(font, "echo still-here", "still-here", "typing after the idle time failed")
        self.stop_consoled()
        # A key calls for a frame only when it brings the view back from the
        # scrollback: one that the session does not echo must still do that.
        self.start_consoled(font, "/bin/sh -c 'seq 1 200; stty -echo; exec cat >/dev/null'")
        bottom = lambda s: "200" in [l.rstrip() for l in s.lines]
        self.wait_text(font, bottom, "the session's output is not on screen")
        self.vm.send_keys(["shift", "pgup"])
        self.wait_text(font, lambda s: not bottom(s), "Shift+PageUp did not page the view back")
        self.vm.send_text("x")
        self.wait_text(font, bottom, "a key that was not echoed did not bring the view back"
                       " from the scrollback", timeout=5)
        self.stop_consoled()

    SCROLL_SCRIPT = "/tmp/scroll-text"

    def make_scroll_text(self):
        """2000 lines of varied length (awk, fixed seed) and a region part."""
        self.sh(("awk 'BEGIN { srand(7); w = \"lorem ipsum dolor sit amet consectetur adipiscing elit "
                 "sed do eiusmod tempor incididunt ut labore\"; for (i = 1; i <= 2000; i++) {"
                 " n = 10 + int(rand() * 68); s = i \":\"; while (length(s) < n)"
                 " s = s \" \" substr(w, 1 + int(rand() * 80), 2 + int(rand() * 9));"
                 " print substr(s, 1, n) } }' > %s" % self.SCROLL_SCRIPT), timeout=60)
        region = ("\033[5;20r\033[20;1H"  # region rows 5-20, cursor on its last row
                  + "".join("\033Dregion up %d" % i for i in range(3))  # IND: region scrolls up
                  + "\033[5;1H"
                  + "".join("\033Mregion down %d\r" % i for i in range(2))  # RI: region scrolls down
                  + "\033[r\033[10;1H\033[2Linserted two\033[16;1H\033[3Mdeleted three"
                  + "\033[?25l\033[30;1Hend of scroll test")
        self.put_file(self.SCROLL_SCRIPT + ".region", region.encode())
        # The session paces its output: a burst of 8 lines every 20 ms. A
        # plain cat is so fast under TCG that consoled's frames (at most one
        # per 16 ms) see whole screens go by and nothing to scroll; paced,
        # every frame scrolls and the pan window crosses its end.
        paced = ("i=0\nwhile IFS= read -r l; do printf '%%s\\n' \"$l\"; i=$((i + 1));"
                 " [ $((i %% 8)) = 0 ] && sleep 0.02; done < %s\ncat %s.region\n")
        self.put_file(self.SCROLL_SCRIPT + ".sh", (paced % (self.SCROLL_SCRIPT, self.SCROLL_SCRIPT)).encode())
        # The last 400 lines: the same final screen (it depends only on the
        # last screenful and the region part), for the runs that end in a
        # crash, where the scrolling only has to leave the device panned.
        self.sh("tail -n 400 %s > %s.tail" % (self.SCROLL_SCRIPT, self.SCROLL_SCRIPT))
        self.put_file(self.SCROLL_SCRIPT + ".tail.sh",
                      (paced % (self.SCROLL_SCRIPT + ".tail", self.SCROLL_SCRIPT)).encode())

    def scroll_reference(self):
        """fbcon's picture of the scroll text (computed once per boot)."""
        if getattr(self, "_scroll_ref", None) is None:
            self.make_scroll_text()
            self.sh("setfont /fonts/%s -C /dev/tty1" % KEYBOARD_FONT)
            # The final screen depends only on the last screenful of lines
            # (none wraps) and the region part, so fbcon, which redraws the
            # whole screen per line, is spared the first 1900.
            self.sh("printf '\\033[0m\\033[H\\033[2J' > /dev/tty1; (tail -n 100 %s; cat %s.region)"
                    " > /dev/tty1" % (self.SCROLL_SCRIPT, self.SCROLL_SCRIPT), timeout=300)
            self._scroll_ref = self.stable_grab()
            if "end of scroll test" not in screen.read_screen(self._scroll_ref, load_font(KEYBOARD_FONT)):
                self.fail("fbcon's reference does not show the end of the scroll test")
        return self._scroll_ref

    def check_scroll(self, mode, expect_warning=None, expect_full=None, env=""):
        font = KEYBOARD_FONT
        expected = self.scroll_reference()
        before = self.fb_state()
        for sig, status in (("TERM", 0), ("SEGV", 139)):
            self.sh("printf '\\033[H\\033[2J' > /dev/tty1")
            script = self.SCROLL_SCRIPT + (".sh" if sig == "TERM" else ".tail.sh")
            self.start_consoled(font, "/bin/sh -c 'sh %s; exec sleep 100000'" % script,
                                extra="--scroll-mode=%s --no-calibrate --stats" % mode, env=env)
            self.wait_equal(expected, "consoled --scroll-mode=%s after %s lines and region "
                            "scrolls" % (mode, 2000 if sig == "TERM" else 400), timeout=120)
            log = self.sh("cat %s" % CONSOLED_LOG)
            if expect_warning and expect_warning not in log:
                self.fail("no warning %r for --scroll-mode=%s; log:\n%s" % (expect_warning, mode, log))
            if expect_full and ("full-screen scrolls by %s," % expect_full) not in log:
                self.fail("--scroll-mode=%s does not scroll by %s; log:\n%s" % (mode, expect_full, log))
            if sig == "TERM":
                # A VT switch away and back: the same picture again.
                self.sh("chvt 2")
                self.sh("chvt 1")
                self.wait_equal(expected, "--scroll-mode=%s after a VT switch" % mode)
            self.sh("kill -%s %s" % (sig, self.consoled_pid()))
            got = self.wait_consoled_exit()
            if got != status:
                self.fail("consoled exited with %d after SIG%s, expected %d" % (got, sig, status))
            after = self.fb_state()
            if after != before:
                self.fail("mode after SIG%s in %s mode: %r, before: %r" % (sig, mode, after, before))
            self.sh("printf '\\033[H\\033[2J\\033[32mfbcon after %s\\033[0m' > /dev/tty1" % sig)
            self.wait_text(font, lambda s: ("fbcon after " + sig) in s,
                           "fbcon does not draw after SIG%s in %s mode" % (sig, mode))
            if sig == "TERM":
                m = re.findall(r"stats: strategy=(\w+) frames=(\d+) rows_scrolled=(\d+) "
                               r"vram_bytes_written=(\d+) vram_bytes_read=(\d+)", self.sh("cat %s" % CONSOLED_LOG))
                if not m:
                    self.fail("no statistics in the log")
                for strat, frames, rows, written, read in m:
                    print("# %s: strategy %s: %s frames, %s rows scrolled, %s bytes written, %s read"
                          % (mode, strat, frames, rows, written, read), flush=True)
                    if int(read):
                        self.fail("%s read %s bytes of VRAM" % (strat, read))
                blits = re.findall(r"stats: strategy=copy .* blits=(\d+)", self.sh("cat %s" % CONSOLED_LOG))
                if expect_full == "copy" and "HANG" not in env and not (blits and int(blits[0]) > 0):
                    self.fail("--scroll-mode=%s: no blits in the statistics" % mode)
                if "HANG" in env and "dropping it" not in self.sh("cat %s" % CONSOLED_LOG):
                    self.fail("the hung blitter was not dropped")

    def reload_bochs(self, overalloc):
        """Load bochs-drm again with drm_kms_helper's drm_fbdev_overalloc
        (a module parameter read only at load: the boot parameter of
        README.md); returns fb0's virtual height."""
        pci = self.sh("basename $(readlink -f /sys/class/graphics/fb0/device)").strip()
        self.sh("echo %s > /sys/bus/pci/drivers/bochs-drm/unbind" % pci)
        mods = self.sh("cat /etc/vm/modules/bochs").split()
        kms = mods.index("drm_kms_helper")
        for m in reversed(mods[kms:]):
            self.sh("rmmod %s" % m)
        for m in mods[kms:]:
            self.sh("insmod /lib/modules/%s.ko%s" % (
                m, " drm_fbdev_overalloc=%d" % overalloc if m == "drm_kms_helper" else ""),
                timeout=120)
        deadline = time.monotonic() + 60
        while self.vm.run("test -e /sys/class/graphics/fb0/virtual_size")[1] != 0:
            if time.monotonic() > deadline:
                self.fail("no fb0 after loading bochs-drm again")
            time.sleep(0.5)
        # fbcon takes the new fb0 with its default font: the checks' font again.
        self.sh("setfont /fonts/%s -C /dev/tty1" % KEYBOARD_FONT)
        return int(self.sh("cat /sys/class/graphics/fb0/virtual_size").split(",")[1])

    def check_scroll_overalloc(self):
        """bochs-drm with a buffer three screens tall: the pan ioctl works
        but the picture stays put (docs/HARDWARE.md), so consoled must not
        pan: forced pan redraws, and the picture is fbcon's. Drawing through
        the mapping (--fb-flush=map): with auto's pwrite() flush every mode
        draws in a RAM copy, which refuses pan before the driver is asked
        (scroll-auto covers that)."""
        self.scroll_reference()  # fbcon's picture on the usual buffer
        try:
            height = self.reload_bochs(300)
            if height < 3 * 800:
                self.fail("virtual height %d with drm_fbdev_overalloc=300" % height)
            self.check_scroll("pan --fb-flush=map", "--scroll-mode=pan: " + BOCHS_QUIRK, "redraw")
        finally:
            self.reload_bochs(100)

    def check_backend(self):
        """The card's plugin on the real device, the fault switch, listing and
        the loader's refusals."""
        name = CARD_PLUGIN[self.card]
        env = "CONSOLED_BACKEND_DIR=%s" % GUEST_BACKEND_DIR
        # As tall a virtual screen as the driver gives, so that copies and
        # fills taller than the engine's limits are split and checked too.
        size = self.sh("cat /sys/class/graphics/fb0/virtual_size").strip()
        xres = size.split(",")[0]
        for lines in (6500, 4000, 2200):
            if self.vm.run("echo %s,%d > /sys/class/graphics/fb0/virtual_size" % (xres, lines))[1] == 0:
                break
        out, status = self.vm.run("%s blitcheck --backend=%s /dev/fb0 2>&1" % (env, name), timeout=300)
        self.vm.run("echo %s > /sys/class/graphics/fb0/virtual_size" % size)
        print("".join("# " + l + "\n" for l in out.splitlines() if not l.startswith("ok ")), end="")
        if status != 0 or ", 0 failed" not in out:
            self.fail("blitcheck failed (status %d):\n%s" % (status, out))
        out, status = self.vm.run("%s blitcheck --backend=%s --hang /dev/fb0 2>&1" % (env, name), timeout=60)
        if status != 0 or "dropped" not in out:
            self.fail("the fault switch did not end in a dropped backend (status %d):\n%s" % (status, out))

        out = self.sh("%s consoled --list-backends --fbdev=/dev/fb0 2>&1" % env)
        if not re.search(r"^%s\s+\S+\s+ABI 1\.\d+\s+matches" % name, out, re.M):
            self.fail("--list-backends does not show %s matching:\n%s" % (name, out))

        # A plugin built for another ABI major is refused.
        self.sh("mkdir -p /tmp/badabi && cp /usr/lib/bad-abi-plugin.so /tmp/badabi/")
        out = self.sh("CONSOLED_BACKEND_DIR=/tmp/badabi consoled --list-backends --fbdev=/dev/fb0 2>&1")
        if "built for backend ABI 99, consoled has ABI 1" not in out or "skipped" not in out:
            self.fail("a plugin with ABI major 99 was not refused:\n" + out)
        # A plugin file others may write is refused.
        self.sh("mkdir -p /tmp/wplug && cp %s/%s.so /tmp/wplug/ && chmod 666 /tmp/wplug/%s.so"
                % (GUEST_BACKEND_DIR, name, name))
        out = self.sh("CONSOLED_BACKEND_DIR=/tmp/wplug consoled --list-backends --fbdev=/dev/fb0 2>&1")
        if "must be owned by root and not writable by group or others" not in out:
            self.fail("a world-writable plugin was not refused:\n" + out)

    def check_respawn(self):
        """The session exits (a logout): the screen and scrollback are wiped
        and a new session starts; so is all of video memory, the bytes past
        the virtual screen consoled maps included (written through
        /dev/fb0 here, as a killed consoled's taller virtual screen or
        another program leaves them)."""
        font = KEYBOARD_FONT
        self.start_shell(font)
        self.vm.send_text("echo private-words\n")
        self.wait_output(font, "echo private-words", "private-words", "typing failed")
        # scroll it off the screen (into the pan area, where the card pans)
        self.vm.send_text("seq 1 100\n")
        self.wait_text(font, lambda s: any(l.strip() == "100" for l in s.lines), "seq did not run")
        # the last 64 bytes of smem_len (fb_read() stops there): past the
        # mapping, which ends on a whole line (640 x 6553 of 4 MiB on cirrus)
        self.sh("n=$(wc -c < /dev/fb0); printf private-bytes-past-the-map |"
                " dd of=/dev/fb0 bs=1 seek=$((n - 64)) conv=notrunc 2>/dev/null")
        self.vm.send_text("exit\n")
        self.wait_text(font, lambda s: any(l.startswith("$ ") for l in s.lines)
                       and "private-words" not in s and "exit" not in s and "100" not in s,
                       "no fresh session after the shell exited")
        self.vm.send_keys(["shift", "pgup"])
        time.sleep(1)
        img, decoded = self.wait_text(font, lambda s: True, "")
        if "private-words" in decoded:
            self.fail("the previous session is readable in the scrollback")
        self.vm.send_keys(["shift", "pgdn"])
        # Nor in video memory: every byte off the visible window (the pan
        # area the last session's text scrolled into) is background (0).
        time.sleep(1)
        off = self.sh("cd /sys/class/graphics/fb0; y=$(cut -d, -f2 pan); s=$(cat stride);"
                      " all=$(tr -d '\\000' < /dev/fb0 | wc -c);"
                      " vis=$(dd if=/dev/fb0 bs=$s skip=$y count=%d 2>/dev/null | tr -d '\\000' | wc -c);"
                      " echo $((all - vis)) $all $vis $y" % self.vm_yres).split()
        if off[0] != "0":
            self.fail("%s bytes of video memory off the screen are not background after the"
                      " logout (all %s, visible %s, window at line %s)" % tuple(off))
        if "Session process" not in self.sh("cat %s" % CONSOLED_LOG):
            self.fail("the session's exit was not logged")
        self.stop_consoled()

    def check_session_ioports(self):
        """The cirrus plugin takes the VGA ports (ioperm) once the VT is ours,
        after the first session started; the session that follows a logout
        must not inherit them: a program reading a port without asking dies
        of SIGSEGV."""
        font = KEYBOARD_FONT
        self.start_shell(font)
        if "GD54xx BitBLT through VGA ports 0x3ce/0x3cf" not in self.sh("cat %s" % CONSOLED_LOG):
            self.fail("the plugin did not take the VGA ports; the check would prove nothing:\n"
                      + self.sh("cat %s" % CONSOLED_LOG))
        self.vm.send_text("exit\n")
        self.wait_text(font, lambda s: any(l.startswith("$ ") for l in s.lines) and "exit" not in s,
                       "no fresh session after the shell exited")
        self.vm.send_text("inb; echo inb-status=$?\n")
        self.wait_text(font, lambda s: "inb-status=" in s, "inb did not run")
        img, decoded = self.wait_text(font, lambda s: "inb-status=139" in s,
                                      "the new session could read the VGA ports (inb did not die of SIGSEGV)")
        if "port 0x3cc =" in decoded:
            self.fail("the new session read a VGA port:\n" + decoded.text())
        self.stop_consoled()

    def wait_log(self, path, text, what, timeout=20):
        deadline = time.monotonic() + timeout
        while text not in self.vm.run("cat %s" % path)[0]:
            if time.monotonic() > deadline:
                self.fail("%s:\n%s" % (what, self.vm.run("cat %s" % path)[0]))
            time.sleep(0.3)

    def check_boot_mode(self):
        """Every consoled gives the kernel's console back the boot mode, which
        the first one saved in /run/consoled/fb0.mode (root's alone): (1) a
        second consoled on tty2, started while the first runs on tty1 in its
        tall virtual screen, restores the boot mode on exit, not the tall one
        it found; (2) after a consoled killed with SIGKILL (tall screen and
        K_OFF left), the next one restores the boot mode and the kernel's
        keyboard works on tty1 again."""
        font = KEYBOARD_FONT
        log2, status2 = "/tmp/consoled2.log", "/tmp/consoled2.status"
        self.sh("rm -rf /run/consoled; rm -f %s %s" % (log2, status2))
        before = self.fb_state()
        self.start_shell(font)
        self.wait_log(CONSOLED_LOG, "Scrolling: ", "the first consoled did not come up")
        tall = self.fb_state()
        if tall == before:
            self.fail("consoled runs in the boot mode; the check would prove nothing")
        pid1 = self.consoled_pid()
        self.sh("(CONSOLED_BACKEND_DIR=%s consoled --vt=2 --fbdev=/dev/fb0 --font-file=/fonts/%s"
                " --login -- /bin/sh -c 'exec sleep 100000' >%s 2>&1; echo $? >%s)"
                " </dev/null >/dev/null 2>&1 &" % (GUEST_BACKEND_DIR, font, log2, status2))
        self.wait_log(log2, "Running on VT 2", "the second consoled did not start")
        self.sh("kill %s" % pid1)
        self.wait_consoled_exit()
        self.sh("chvt 2")
        self.wait_log(log2, "Scrolling: ", "the second consoled did not take its VT")
        self.sh("kill %s" % self.consoled_pid())
        self.wait_log(status2, "0", "the second consoled did not exit")
        after2 = self.fb_state()
        self.sh("chvt 1")

        # (2) SIGKILL, then a new consoled on tty1
        self.start_shell(font)
        self.wait_log(CONSOLED_LOG, "Scrolling: ", "consoled did not come up")
        self.sh("kill -9 %s" % self.consoled_pid())
        self.wait_consoled_exit()
        left = self.fb_state()
        # (the dead one's prompt is still on the screen: wait for the log)
        self.start_shell(font)
        self.wait_log(CONSOLED_LOG, "Scrolling: ", "consoled after SIGKILL did not come up")
        self.stop_consoled()
        after = self.fb_state()
        print("# boot mode %r, while running %r, after the second instance %r; left by SIGKILL %r,"
              " after the next %r" % (before.split(), tall.split(), after2.split(), left.split(),
                                      after.split()), flush=True)
        # What consoled itself put back (fbcon then shows each VT in the
        # mode it recorded for it, which hides a wrong restore on tty1).
        vx, vy = before.split()[0].split(",")
        want = "(virtual %sx%s) at %s bpp restored" % (vx, vy, before.split()[1])
        if want not in self.sh("cat %s" % log2):
            self.fail("a second consoled did not restore the boot mode %r (%r); its log:\n%s"
                      % (before, want, self.sh("cat %s" % log2)))
        if want not in self.consoled_log() or after != before:
            self.fail("after a SIGKILL and a restart, consoled restored %r, not the boot mode %r"
                      " (%r; the killed one left %r); log:\n%s"
                      % (after, before, want, left, self.consoled_log()))
        perms = self.vm.run("stat -c '%a %u' /run/consoled /run/consoled/fb0.mode")[0].split()
        if perms != ["700", "0", "600", "0"]:
            self.fail("/run/consoled and fb0.mode are %r, expected 700 and 600, root's" % perms)
        # The kernel's keyboard works on tty1 again (not K_OFF).
        self.sh("(timeout 10 head -n 1 /dev/tty1 > /tmp/typed 2>&1 &); sleep 0.5")
        self.vm.send_text("kbdok\n")
        deadline = time.monotonic() + 10
        while "kbdok" not in self.vm.run("cat /tmp/typed")[0]:
            if time.monotonic() > deadline:
                self.fail("keys typed on tty1 after consoled's exit do not arrive (keyboard off)")
            time.sleep(0.3)

    def check_bad_font(self):
        """A file that is no font: a warning, and the built-in font draws
        (it is Lat15-Fixed16, so the screen reader's font reads it)."""
        self.sh("rm -f %s %s" % (CONSOLED_LOG, CONSOLED_STATUS))
        self.sh("(CONSOLED_BACKEND_DIR=%s consoled --vt=1 --fbdev=/dev/fb0 --font-file=/etc/passwd"
                " --login -- /bin/sh -c 'printf \"\\033[?25lbuilt-in font\"; exec sleep 100000'"
                " >%s 2>&1; echo $? >%s) </dev/null >/dev/null 2>&1 &"
                % (GUEST_BACKEND_DIR, CONSOLED_LOG, CONSOLED_STATUS))
        self.wait_text(KEYBOARD_FONT, lambda s: "built-in font" in s, "nothing drawn with the built-in font")
        log = self.sh("cat %s" % CONSOLED_LOG)
        # The file, then the default font by name (none: the guest has no
        # fontconfig configuration), then the built-in font.
        for warning in ("Cannot use font file /etc/passwd: not a font FreeType can read, or a damaged"
                        " one; falling back to font 'monospace'.",
                        "No usable font found by name; falling back to the built-in font."):
            if warning not in log:
                self.fail("no warning %r about the bad font:\n%s" % (warning, log))
        self.stop_consoled()

    def check_ctrl_alt_del(self):
        """Ctrl+Alt+Del does what the kernel console does: with
        kernel.ctrl-alt-del = 0, SIGINT to kernel.cad_pid. The stand-in for
        init is consoled's own session (its signals start at their defaults,
        unlike a background job's), which records the signal."""
        font = KEYBOARD_FONT
        self.sh("rm -f /tmp/cad")
        self.start_consoled(font, "/bin/sh -c 'trap \"echo SIGINT > /tmp/cad\" INT;"
                            " printf \"\\033[?25lcad ready\"; while :; do sleep 0.2; done'")
        self.wait_text(font, lambda s: "cad ready" in s, "the session did not start")
        pid = self.session_pid()
        old_cad = self.sh("cat /proc/sys/kernel/ctrl-alt-del").strip()
        self.sh("echo 0 > /proc/sys/kernel/ctrl-alt-del; echo %s > /proc/sys/kernel/cad_pid" % pid)
        try:
            self.vm.send_combo(["ctrl", "alt", "delete"])
            deadline = time.monotonic() + 10
            while "SIGINT" not in self.vm.run("cat /tmp/cad 2>/dev/null")[0]:
                if time.monotonic() > deadline:
                    self.fail("Ctrl+Alt+Del did not send SIGINT to cad_pid; log:\n"
                              + self.sh("cat %s" % CONSOLED_LOG))
                time.sleep(0.3)
            if "Ctrl+Alt+Del: sending SIGINT to process %s" % pid not in self.sh("cat %s" % CONSOLED_LOG):
                self.fail("Ctrl+Alt+Del was not logged")
        finally:
            self.vm.run("echo 1 > /proc/sys/kernel/cad_pid; echo %s > /proc/sys/kernel/ctrl-alt-del"
                        % old_cad)
        self.stop_consoled()

    def check_hotplug(self):
        """A USB keyboard plugged in while consoled runs is found by the
        hotplug monitor and types into the session; unplugged, it is dropped."""
        font = KEYBOARD_FONT
        self.start_shell(font)
        self.vm.qmp.cmd("device_add", driver="usb-kbd", id="usbkbd", bus="xhci.0")
        deadline = time.monotonic() + 20
        while "USB Keyboard" not in self.sh("cat %s" % CONSOLED_LOG):
            if time.monotonic() > deadline:
                self.fail("consoled did not pick up the plugged-in USB keyboard; log:\n"
                          + self.sh("cat %s" % CONSOLED_LOG))
            time.sleep(0.3)
        # QEMU sends keys to the keyboard plugged in last; a reader on its
        # event node shows that they went that way.
        node = re.search(r"Keyboard (/dev/input/event\d+): QEMU QEMU USB Keyboard",
                         self.sh("cat %s" % CONSOLED_LOG)).group(1)
        self.sh("(cat %s > /tmp/usb.ev &) ; sleep 0.3" % node)
        self.vm.send_text("echo usb\n")
        self.wait_output(font, "echo usb", "usb", "keys from the USB keyboard did not arrive")
        if int(self.sh("wc -c < /tmp/usb.ev").strip() or 0) == 0:
            self.fail("the keys did not come from the USB keyboard")
        self.sh("pkill -x cat || true")
        self.vm.qmp.cmd("device_del", id="usbkbd")
        deadline = time.monotonic() + 20
        while "removed" not in self.sh("cat %s" % CONSOLED_LOG):
            if time.monotonic() > deadline:
                self.fail("consoled did not notice the USB keyboard going away")
            time.sleep(0.3)
        self.stop_consoled()

    def check_syn_dropped(self):
        """A key released while consoled does not read its keyboard, under
        more events than the kernel queues for a reader (64 for a keyboard):
        the release is lost and consoled reads SYN_DROPPED, then must read
        the keys back from the device. uinput-kbd holds the key, stops
        consoled, releases the key, floods 1200 events and continues it.
        Last, a key released while the VT is away: the acquire reads the
        keys back too."""
        font = KEYBOARD_FONT
        if self.vm.run("test -x /usr/bin/uinput-kbd")[1] != 0:
            self.fail("no uinput-kbd in the guest (build tests/vm/uinput-kbd)")
        self.start_shell(font)
        pid = self.consoled_pid()
        log_line = "the kernel dropped input events"
        tools = []

        def play(steps, until):
            """Run uinput-kbd with `steps` (PID stands for consoled's) on a new
            keyboard that stays plugged in; wait until it has done `until`."""
            tools.append(self.sh("uinput-kbd %s hold </dev/null >/tmp/ukbd.log 2>&1 & echo $!"
                                 % steps.replace("PID", pid)).strip())
            deadline = time.monotonic() + 30
            while "uinput-kbd: " + until not in self.sh("cat /tmp/ukbd.log"):
                if time.monotonic() > deadline:
                    self.fail("uinput-kbd did not play its steps:\n" + self.sh("cat /tmp/ukbd.log"))
                time.sleep(0.3)

        # After wait-open a press waits 300 ms: consoled reads a new
        # keyboard's keys down (EVIOCGKEY) after it opens it, and a key
        # down by then is a key held while it was plugged in, which types
        # nothing (under a loaded host the press came in between: 0 x).
        def lose_release(key):
            play("wait-open PID sleep 300 press %s sleep 1500 stop PID release %s flood 300 cont PID"
                 % (key, key), "cont")

        def count_x():
            _, decoded = self.wait_text(font, lambda s: True, "")
            return sum(l.count("x") for l in decoded.lines)

        def settled_x(what):
            """The count of x once two counts 0.5 s apart agree (all drawn)."""
            n, deadline = count_x(), time.monotonic() + 15
            while True:
                time.sleep(0.5)
                prev, n = n, count_x()
                if n == prev:
                    return n
                if time.monotonic() > deadline:
                    self.fail("%s: %d x and counting" % (what, n))

        try:
            # (a) Left Ctrl: with its release lost and believed, typed text
            # would come out as ^E^C^H^O... and never run.
            lose_release("leftctrl")
            time.sleep(0.5)
            self.vm.send_text("echo nostuck\n")
            self.wait_output(font, "echo nostuck", "nostuck",
                             "Left Ctrl stuck down after its release was dropped")
            if self.consoled_log().count(log_line) < 1:
                self.fail("consoled never saw SYN_DROPPED; the check proves nothing:\n"
                          + self.consoled_log())

            # (b) A letter: its software repeat must stop once consoled
            # runs again (at 30 per second it would go on for ever). Once the
            # letters typed before the stop are all drawn (two counts agree),
            # no more may come.
            lose_release("x")
            first = settled_x("the letter kept repeating after its release was dropped")
            time.sleep(2)
            second = count_x()
            print("# x on screen: %d, 2 s later %d" % (first, second), flush=True)
            if first < 1:
                self.fail("the held letter never reached the session; the check proves nothing")
            if second != first:
                self.fail("the letter kept repeating after its release was dropped: %d, then %d x"
                          % (first, second))
            if self.consoled_log().count(log_line) < 2:
                self.fail("consoled saw no SYN_DROPPED for the letter's keyboard:\n"
                          + self.consoled_log())
            self.vm.send_text("\x15echo fine\n")
            self.wait_output(font, "echo fine", "fine", "typing after the lost releases failed")

            # (c) Left Ctrl held on consoled's VT, released on tty2: consoled
            # drops the release (the VT is not its own), and must find the
            # key up when the VT comes back.
            self.sh("rm -f /tmp/ukbd.go")
            play("wait-open PID sleep 300 press leftctrl wait-file /tmp/ukbd.go release leftctrl",
                 "press leftctrl")
            time.sleep(0.5)
            self.sh("chvt 2; touch /tmp/ukbd.go")
            play_log = ""
            deadline = time.monotonic() + 30
            while "uinput-kbd: release leftctrl" not in play_log:
                if time.monotonic() > deadline:
                    self.fail("uinput-kbd did not release Ctrl:\n" + play_log)
                time.sleep(0.3)
                play_log = self.sh("cat /tmp/ukbd.log")
            self.sh("chvt 1")
            # Drawn again: the VT is consoled's and its keyboards are read.
            self.wait_output(font, "echo fine", "fine", "consoled's screen did not come back")
            self.vm.send_text("echo back\n")
            self.wait_output(font, "echo back", "back",
                             "Left Ctrl stuck down after its release on another VT")

            # (d) The repeat's pace: a letter held 2 s (timed in the guest)
            # at the default delay and rate, 250 ms and 30 a second, gives
            # 1 + 1.75 * 30 = 53 letters; a timer on a coarse grid gives far
            # fewer. Counted once all are drawn (two counts agree).
            self.vm.send_text("\x15clear\n")
            self.wait_text(font, lambda s: not any("x" in l for l in s.lines),
                           "the screen was not cleared for the repeat count")
            play("wait-open PID sleep 300 press x sleep 2000 release x", "release x")
            # the first letters on the glass before the counts are compared
            # (a guest slowed down shows them late: two early counts of 0
            # agree too)
            deadline = time.monotonic() + 10
            while count_x() == 0 and time.monotonic() < deadline:
                time.sleep(0.3)
            held = settled_x("a letter held 2 s kept repeating")
            print("# a letter held 2 s: %d x (53 expected)" % held, flush=True)
            if not 42 <= held <= 62:
                self.fail("a letter held 2 s with --xkb-repeat-delay=250 and"
                          " --xkb-repeat-rate=30 came %d times, not 42-62" % held)
            self.vm.send_text("\x15echo fine2\n")
            self.wait_output(font, "echo fine2", "fine2", "typing after the held letter failed")
        finally:
            for tool in tools:
                self.vm.run("kill %s" % tool)
        self.stop_consoled()

    def check_sync_output(self):
        """Synchronized output (DECSET 2026): what a program writes between
        CSI ? 2026 h and l shows at once at the reset, never half; a set
        never reset shows after the 1 s hold."""
        font = KEYBOARD_FONT
        self.put_file("/tmp/sync.sh", (
            b"printf 'start\\n'; sleep 1\n"
            b"printf '\\033[?2026hHELD-A'; sleep 0.8; printf ' DONE-A\\033[?2026l\\n'\n"
            b"printf '\\033[?2026hLATE-B'; sleep 3; touch /tmp/sync-b; printf '\\033[?2026l\\n'\n"))
        self.sh("rm -f /tmp/sync-b")
        self.start_shell(font)
        self.vm.send_text("sh /tmp/sync.sh\n")
        self.wait_text(font, lambda s: any(l.rstrip() == "start" for l in s.lines),
                       "the script did not start")
        # every picture until DONE-A shows (each new one decoded once)
        psf = load_font(font)
        seen, deadline = {}, time.monotonic() + 8
        while time.monotonic() < deadline:
            img = self.vm.grab()
            key = hash(bytes(img.data))
            if key not in seen:
                seen[key] = screen.read_screen(img, psf)
                s = seen[key]
                if "HELD-A" in s and "DONE-A" not in s:
                    path = self.vm.save_png(img, "%s-%d-sync.png" % (self.card, self.n))
                    self.fail("the text written after CSI ? 2026 h shows before its reset"
                              " (picture: %s):\n%s" % (path, s.text()))
                if "DONE-A" in s:
                    break
        else:
            self.fail("DONE-A never showed")
        # never reset: shown after the hold, while the program still sleeps
        self.wait_text(font, lambda s: "LATE-B" in s, "a set never reset was not shown after"
                       " the 1 s hold", timeout=2.5)
        if self.vm.run("test -e /tmp/sync-b")[1] == 0:
            self.fail("LATE-B showed only after the reset: the hold has no timeout")
        def prompt_after(s):
            rows = [i for i, l in enumerate(s.lines) if "LATE-B" in l]
            return rows and any(l.startswith("$") for l in s.lines[rows[-1] + 1:])
        self.wait_text(font, prompt_after, "no prompt after the script", timeout=10)
        self.stop_consoled()

    def check_vt_switch(self):
        font = KEYBOARD_FONT
        text2 = b"\033[0m\033[?25l\033[H\033[2J\033[36mthis is tty2, drawn by fbcon\033[0m\n"
        self.fbcon_show(font, text2, tty=2)
        self.sh("chvt 2")
        ref2 = self.stable_grab()
        if "this is tty2" not in screen.read_screen(ref2, load_font(font)):
            self.fail("tty2's reference picture does not show its text")
        self.sh("chvt 1")

        self.start_shell(font)
        self.vm.send_text("echo one\n")
        self.wait_output(font, "echo one", "one", "typing before the switch failed")
        shot1 = self.stable_grab()

        # A reader on tty2 proves where keys typed there go.
        self.sh("rm -f /tmp/tty2.in; (setsid sh -c 'exec cat </dev/tty2 >/tmp/tty2.in' &) ; sleep 0.5")
        self.vm.send_combo(["ctrl", "alt", "f2"])
        self.wait_equal(ref2, "tty2 after Ctrl+Alt+F2 (consoled must not touch it)")
        active = self.sh("cat /sys/class/tty/tty0/active").strip()
        if active != "tty2":
            self.fail("active VT is %s after Ctrl+Alt+F2" % active)

        self.vm.send_text("secret\n")
        deadline = time.monotonic() + 10
        while "secret" not in self.sh("cat /tmp/tty2.in"):
            if time.monotonic() > deadline:
                self.fail("keys typed on tty2 did not reach tty2")
            time.sleep(0.3)

        self.sh("chvt 1")
        self.wait_equal(shot1, "consoled's screen after switching back")
        # Nothing typed on tty2 reached consoled's session: its screen above
        # is unchanged, and the session never ran `secret`.
        self.vm.send_text("echo two\n")
        img, decoded = self.wait_output(font, "echo two", "two",
                                        "typing after the switch back failed")
        if "secret" in decoded:
            self.fail("keys typed on tty2 reached consoled's session")
        self.sh("pkill -x cat || true")
        self.stop_consoled()

    VTGRAB_STATE = "mode=process relsig=34 acqsig=35 kd=graphics kb=off"

    def stripes_shown(self, img):
        """Whether the picture is vtgrab's eight uniform vertical stripes,
        each another colour than the next (nothing drawn over them)."""
        w = img.width
        cols = []
        for i in range(8):
            x0 = -(-i * w // 8)
            x1 = -(-(i + 1) * w // 8)
            c = img.crop(x0, 0, x1 - x0, img.height).colors()
            if len(c) != 1:
                return False
            cols.append(next(iter(c)))
        return all(cols[i] != cols[i + 1] for i in range(7))

    def wait_stripes(self, what, timeout=20):
        deadline = time.monotonic() + timeout
        while True:
            img = self.stable_grab()
            if self.stripes_shown(img):
                return img
            if time.monotonic() > deadline:
                path = self.vm.save_png(img, "%s-%d-vtgrab.png" % (self.card, self.n))
                self.fail("%s (picture: %s)" % (what, path))
            time.sleep(0.3)

    def vt_state(self):
        return self.sh("vtgrab state 1").strip()

    def check_vt_grab(self):
        font = KEYBOARD_FONT
        if self.vm.run("test -x /usr/bin/vtgrab")[1] != 0:
            self.fail("no vtgrab in the guest (build tests/vm/vtgrab)")
        text2 = b"\033[0m\033[?25l\033[H\033[2J\033[36mthis is tty2, drawn by fbcon\033[0m\n"
        self.fbcon_show(font, text2, tty=2)
        self.sh("rm -f /tmp/vtgrab.*")

        # 1. vtgrab runs in consoled's shell, in the foreground, as a
        # compositor started from the login would.
        self.start_shell(font)
        pts = self.sh("readlink /proc/%s/fd/0" % self.session_pid()).strip()
        self.vm.send_text("vtgrab take 1 /tmp/vtgrab.log /tmp/vtgrab.go; echo vtgrab-done\n")
        self.wait_log("/tmp/vtgrab.log", "took", "vtgrab did not take the VT")
        self.wait_log(CONSOLED_LOG, "was taken by another program",
                      "consoled did not notice that vtgrab took its VT")
        ref = self.wait_stripes("consoled drew over vtgrab's picture after it took the VT")
        # Keys typed into the "compositor" (a whole line: the pty is in
        # canonical mode, TIOCINQ counts whole lines), output from the
        # session, and a VT switch away and back: vtgrab's picture stays.
        self.vm.send_text("echo leaked\n")
        self.sh("printf 'output during the grab\\n' > %s; seq 1 20 > %s" % (pts, pts))
        self.sh("chvt 2")
        self.wait_text(font, lambda s: "this is tty2" in s, "chvt 2 did not show tty2")
        self.sh("chvt 1")
        self.wait_log("/tmp/vtgrab.log", "redrawn", "vtgrab did not get the VT back")
        time.sleep(2.5)  # two polls of consoled
        self.wait_equal(ref, "vtgrab's picture after keys, output and a VT switch")
        if self.vt_state() != self.VTGRAB_STATE:
            self.fail("the VT's mode changed under vtgrab: %s" % self.vt_state())
        if "handed back" in self.consoled_log():
            self.fail("consoled took the VT back while vtgrab held it:\n" + self.consoled_log())

        self.sh("touch /tmp/vtgrab.go")
        self.wait_log("/tmp/vtgrab.log", "restored", "vtgrab did not give the VT back")
        self.wait_log(CONSOLED_LOG, "was handed back: taking it again (in front)",
                      "consoled did not take its VT back")
        inq = re.search(r"^inq (-?\d+)$", self.sh("cat /tmp/vtgrab.log"), re.M)
        if not inq or inq.group(1) != "0":
            self.fail("keys typed while vtgrab held the VT reached the session's pty: %s"
                      " bytes in its input queue" % (inq.group(1) if inq else "?"))
        def back(s):
            lines = [l.rstrip() for l in s.lines]
            return "vtgrab-done" in lines and any(
                l.startswith("$") for l in lines[lines.index("vtgrab-done") + 1:])
        _, decoded = self.wait_text(font, back,
                                    "consoled's screen did not come back after the handback")
        lines = [l.rstrip() for l in decoded.lines]
        for want in ("vtgrab: took tty1", "output during the grab", "20", "vtgrab: gave tty1 back",
                     "vtgrab-done"):
            if want not in lines:
                self.fail("the output from the grab is not on screen (%r missing):\n%s"
                          % (want, decoded.text()))
        if "leaked" in decoded:
            self.fail("keys typed while vtgrab held the VT reached the shell:\n" + decoded.text())
        if self.vt_state() != "mode=process relsig=35 acqsig=36 kd=graphics kb=off":
            self.fail("consoled did not set its VT mode again: %s" % self.vt_state())
        # Exact: the picture equals a full redraw through a VT switch.
        back = self.stable_grab()
        self.sh("chvt 2")
        self.wait_text(font, lambda s: "this is tty2" in s, "chvt 2 did not show tty2")
        self.sh("chvt 1")
        self.wait_equal(back, "consoled's picture after the handback against a VT switch's redraw")
        self.vm.send_text("echo typed\n")
        _, decoded = self.wait_output(font, "echo typed", "typed", "typing after the handback failed")
        if "leaked" in decoded:
            self.fail("keys typed while vtgrab held the VT reached the shell:\n" + decoded.text())

        # 2. vtgrab holds the VT from outside the session (logind's part):
        # consoled exits and starts meanwhile without touching the VT.
        self.sh("rm -f /tmp/vtgrab.*; (setsid vtgrab take 1 /tmp/vtgrab.log /tmp/vtgrab.go"
                " </dev/null >/dev/null 2>&1 &)")
        self.wait_log("/tmp/vtgrab.log", "took", "vtgrab did not take the VT")
        self.wait_log(CONSOLED_LOG, "was taken by another program",
                      "consoled did not notice that vtgrab took its VT")
        ref = self.wait_stripes("consoled drew over vtgrab's picture after it took the VT")
        self.sh("kill %s" % self.consoled_pid())
        status = self.wait_consoled_exit()
        if status != 0:
            self.fail("consoled exited with %d after SIGTERM while vtgrab held its VT" % status)
        if "held by another program: leaving its mode alone" not in self.consoled_log():
            self.fail("consoled's exit did not leave the VT alone:\n" + self.consoled_log())
        if self.vt_state() != self.VTGRAB_STATE:
            self.fail("consoled's exit changed vtgrab's VT mode: %s" % self.vt_state())
        self.wait_equal(ref, "vtgrab's picture after consoled's exit")

        self.start_consoled(font, "/usr/bin/env PS1='$ ' /bin/sh")
        self.wait_log(CONSOLED_LOG, "is held by another program",
                      "consoled started while vtgrab held the VT did not wait for it")
        time.sleep(2.5)
        if self.vt_state() != self.VTGRAB_STATE:
            self.fail("consoled's start changed vtgrab's VT mode: %s" % self.vt_state())
        self.wait_equal(ref, "vtgrab's picture after consoled's start")
        # Given back while another VT is shown: consoled takes it, but draws
        # only once it comes to the front.
        self.sh("chvt 2")
        ref2 = self.wait_text(font, lambda s: "this is tty2" in s, "chvt 2 did not show tty2")[0]
        self.sh("touch /tmp/vtgrab.go")
        self.wait_log("/tmp/vtgrab.log", "restored", "vtgrab did not give the VT back")
        self.wait_log(CONSOLED_LOG, "was handed back: taking it again (in the background)",
                      "consoled did not take its VT back behind tty2")
        time.sleep(1)
        self.wait_equal(ref2, "tty2 after consoled took its VT back behind it")
        self.sh("chvt 1")
        self.wait_text(font, lambda s: any(l.startswith("$ ") for l in s.lines),
                       "consoled's shell did not show when its VT came to the front")
        self.vm.send_text("echo again\n")
        self.wait_output(font, "echo again", "again", "typing after the second handback failed")
        self.stop_consoled()
        for line in self.consoled_log().splitlines():
            if "another program" in line or "handed back" in line:
                print("# " + line, flush=True)

    def set_depth(self, bpp):
        self.sh("echo %d > /sys/class/graphics/fb0/bits_per_pixel" % bpp)
        got = self.sh("cat /sys/class/graphics/fb0/bits_per_pixel").strip()
        if got != str(bpp):
            self.fail("fb0 did not take %d bpp (it reports %s)" % (bpp, got))

    def wait_black(self, what, timeout=20):
        deadline = time.monotonic() + timeout
        while True:
            img = self.vm.grab()
            if not any(img.data):
                return img
            if time.monotonic() > deadline:
                path = self.vm.save_png(img, "%s-%d-not-black.png" % (self.card, self.n))
                self.fail("%s (picture: %s)" % (what, path))
            time.sleep(0.3)

    def check_mode_change(self):
        """A mode set by another program on consoled's
        framebuffer (fbset in its session) is followed as fbcon does."""
        font = KEYBOARD_FONT
        fobj = load_font(font)
        if self.vm.run("test -x /usr/bin/fbset")[1] != 0:
            self.fail("no fbset in the guest (apt-get install fbset on the host)")
        xres, yres = 800, 600
        boot = self.fb_state()
        back = "fbset -xres %d -yres %d -vxres %d -vyres %d" % (self.vm_xres, self.vm_yres,
                                                                self.vm_xres, self.vm_yres)
        # fbcon's picture of the oracle text at 800x600: the reference.
        text, _ = oracle_text(font, xres // fobj.width)
        self.sh("fbset -xres %d -yres %d -vxres %d -vyres %d" % (xres, yres, xres, yres))
        try:
            path = self.fbcon_show(font, text)
            expected = self.stable_grab()
        finally:
            self.sh(back)
        if (expected.width, expected.height) != (xres, yres):
            self.fail("fbcon's reference is %dx%d, not %dx%d"
                      % (expected.width, expected.height, xres, yres))
        if "consoled pixel oracle" not in screen.read_screen(expected, fobj):
            self.fail("fbcon's reference picture at %dx%d does not show the text" % (xres, yres))
        if self.fb_state() != boot:
            self.fail("fbset did not give the boot mode back: %r, not %r" % (self.fb_state(), boot))
        self.sh("printf '\\033[H\\033[2J' > /dev/tty1")

        self.start_shell(font)
        self.mode_change_expected = True
        # A mode consoled cannot draw in: its own comes back, and it draws on.
        self.vm.send_text("fbset -depth 1; echo depth-rc=$?\n")
        self.wait_output(font, "fbset -depth 1; echo depth-rc=$?", "depth-rc=0",
                         "after fbset -depth 1 consoled does not draw its screen")
        bpp = self.sh("cat /sys/class/graphics/fb0/bits_per_pixel").strip()
        if bpp != "8":
            self.fail("fb0 is at %s bpp after consoled refused 1 bpp" % bpp)
        if "consoled cannot draw in %dx%d at 1 bpp" % (self.vm_xres, self.vm_yres) \
                not in self.consoled_log():
            self.fail("the refused mode was not logged:\n" + self.consoled_log())
        # 800x600: the grid follows, the session gets the new size.
        cmd = "fbset -xres %d -yres %d -vyres %d" % (xres, yres, yres)
        self.vm.send_text(cmd + "\n")
        self.wait_text(font, lambda s: any(l.startswith("$ " + cmd) for l in s.lines)
                       and len(s.lines) == yres // fobj.height,
                       "the screen is not %dx%d after %s" % (xres, yres, cmd))
        self.vm.send_text("stty size\n")
        self.wait_output(font, "stty size", "%d %d" % (yres // fobj.height, xres // fobj.width),
                         "stty size does not show the new grid")
        if "another program set %dx%d" % (xres, yres) not in self.consoled_log():
            self.fail("the mode change was not logged:\n" + self.consoled_log())
        # The screen in the new mode: fbcon's picture of the same text.
        self.vm.send_text("cat %s; exec sleep 100000\n" % path)
        self.wait_equal(expected, "consoled at %dx%d differs from fbcon" % (xres, yres))
        self.stop_consoled()
        self.mode_change_expected = False
        # What goes back on exit is the mode found at start.
        if self.fb_state() != boot:
            self.fail("after exit the mode is %r, not the boot mode %r" % (self.fb_state(), boot))

    def check_blank(self):
        """Blanking after --blank=3 seconds without input."""
        font = KEYBOARD_FONT
        # (cirrusfb takes FBIOBLANK; vfb has none: black drawn alone)
        how = ("drawn black, FBIOBLANK powerdown" if self.card == "cirrus"
               else "drawn black; the driver does not blank")
        text2 = b"\033[0m\033[?25l\033[H\033[2J\033[36mthis is tty2, drawn by fbcon\033[0m\n"
        self.fbcon_show(font, text2, tty=2)
        self.start_consoled(font, "/usr/bin/env PS1='$ ' /bin/sh", extra="--blank=3")
        self.wait_text(font, lambda s: any(l.startswith("$ ") for l in s.lines), "no shell prompt")
        self.vm.send_text("echo awake\n")
        self.wait_output(font, "echo awake", "awake", "typing failed")
        self.wait_black("the screen did not go black after 3 s without input")
        if "screen blanked (%s)" % how not in self.consoled_log():
            self.fail("the log does not say the screen was blanked by %r:\n%s"
                      % (how, self.consoled_log()))
        # Output does not wake the screen; the terminal takes it all the same.
        pts = self.sh("readlink /proc/%s/fd/1" % self.session_pid()).strip()
        self.sh("printf 'written while blanked\\n' > %s" % pts)
        time.sleep(1.5)
        if any(self.vm.grab().data):
            self.fail("output woke the screen")
        # A key wakes it and reaches the shell: without the first letter it
        # would run `cho woken`.
        self.vm.send_text("echo woken\n")
        def woken(s):
            lines = [l.rstrip() for l in s.lines]
            first = [i for i, l in enumerate(lines) if "written while blanked" in l]
            return bool(first) and any(lines[j].endswith("echo woken") and lines[j + 1] == "woken"
                                       and lines[j + 2] == "$"
                                       for j in range(first[0], len(lines) - 2))
        woke, _ = self.wait_text(font, woken, "the waking key or the output written while"
                                 " blanked is missing")
        # Blanked again: a VT switch shows fbcon's tty2, not a black screen ...
        self.wait_black("the screen did not blank again")
        self.sh("chvt 2")
        self.wait_text(font, lambda s: "this is tty2" in s, "tty2 is not shown after a switch from"
                       " consoled's blanked screen")
        # ... and back, consoled draws everything: the picture after waking.
        self.sh("chvt 1")
        self.wait_equal(woke, "consoled's redraw after a VT switch differs from its screen after"
                        " waking", timeout=10)
        # Exit while blanked: the kernel's console is seen.
        self.wait_black("the screen did not blank after the VT switch")
        self.stop_consoled()
        self.fbcon_show(font, b"\033[H\033[2J\033[32mfbcon after blank\033[0m")
        self.wait_text(font, lambda s: "fbcon after blank" in s,
                       "fbcon's text is not seen after consoled exited blanked")

    def check_depth(self, bpp):
        self.set_depth(bpp)
        self.check_oracle(KEYBOARD_FONT)

    def fb_count(self):
        return len([n for n in self.sh("ls /sys/class/graphics").split()
                    if re.fullmatch(r"fb\d+", n)])

    def fb_wait_exit(self, args):
        """consoled on a guest without a framebuffer, with args: its exit
        status, the guest's uptime at its start and after its exit, its log."""
        if self.fb_count():
            self.fail("the guest has a framebuffer: %s" % self.sh("ls /sys/class/graphics"))
        self.sh("rm -f %s %s" % (CONSOLED_LOG, CONSOLED_STATUS))
        self.sh("(cut -d' ' -f1 /proc/uptime > /tmp/fbw.t0; consoled --vt=1 %s"
                " --login -- /bin/sh >%s 2>&1; echo $? >%s.tmp;"
                " cut -d' ' -f1 /proc/uptime > /tmp/fbw.t1; mv %s.tmp %s)"
                " </dev/null >/dev/null 2>&1 &"
                % (args, CONSOLED_LOG, CONSOLED_STATUS, CONSOLED_STATUS, CONSOLED_STATUS))
        status = self.wait_consoled_exit(timeout=30)
        t0, t1 = (float(self.sh("cat /tmp/fbw.t%d" % i)) for i in (0, 1))
        return status, t0, t1, self.consoled_log()

    def check_fb_wait_none(self):
        """No framebuffer at all: --fb-wait=4 waits its 4 s, then exit 3."""
        status, t0, t1, log = self.fb_wait_exit("--fb-wait=4")
        if status != 3:
            self.fail("consoled exited with %d, expected 3; log:\n%s" % (status, log))
        if not 3.95 <= t1 - t0 <= 7:
            self.fail("consoled --fb-wait=4 exited after %.2f s, expected 4 to 7; log:\n%s"
                      % (t1 - t0, log))
        waiting = ("Waiting up to 4 s for a framebuffer (any /dev/fbN); without udevd nothing"
                   " ends the wait earlier")
        for needle in (waiting, "No framebuffer (any /dev/fbN) appeared within 4 s",
                       "No framebuffer device found"):
            if needle not in log:
                self.fail("the log lacks %r:\n%s" % (needle, log))
        if log.count("Waiting up to") != 1:
            self.fail("the wait is logged %d times:\n%s" % (log.count("Waiting up to"), log))
        tap_note("consoled exited 3 after %.2f s" % (t1 - t0))

    def check_fb_wait_all(self):
        """--fbdev=all and no framebuffer: the seat's first is waited for
        (fb-wait=2), then exit 3."""
        status, t0, t1, log = self.fb_wait_exit("--fbdev=all --fb-wait=2")
        if status != 3:
            self.fail("consoled exited with %d, expected 3; log:\n%s" % (status, log))
        if not 1.95 <= t1 - t0 <= 5:
            self.fail("consoled --fbdev=all --fb-wait=2 exited after %.2f s, expected 2 to 5;"
                      " log:\n%s" % (t1 - t0, log))
        for needle in ("Waiting up to 2 s for a framebuffer (any /dev/fbN on seat0)",
                       "No framebuffer on seat0"):
            if needle not in log:
                self.fail("the log lacks %r:\n%s" % (needle, log))
        tap_note("consoled exited 3 after %.2f s" % (t1 - t0))

    def check_fb_wait_late(self):
        """The driver comes 3 s after consoled: consoled takes its framebuffer."""
        font = KEYBOARD_FONT
        if self.fb_count():
            self.fail("the guest has a framebuffer already (run fb-wait-late once, after"
                      " fb-wait-none): %s" % self.sh("ls /sys/class/graphics"))
        self.sh("rm -f %s %s" % (CONSOLED_LOG, CONSOLED_STATUS))
        self.sh("(consoled --vt=1 --fb-wait=30 --font-file=/fonts/%s --palette=linux"
                " --login -- /usr/bin/env PS1='$ ' /bin/sh -c 'echo late fb session; exec sh'"
                " >%s 2>&1; echo $? >%s) </dev/null >/dev/null 2>&1 &"
                % (font, CONSOLED_LOG, CONSOLED_STATUS))
        self.wait_log(CONSOLED_LOG, "Waiting up to 30 s for a framebuffer (any /dev/fbN)",
                      "consoled does not say that it waits")
        time.sleep(3)
        if self.consoled_exited():
            self.fail("consoled did not wait:\n" + self.consoled_log())
        t0 = float(self.sh("cut -d' ' -f1 /proc/uptime"))
        self.sh("for m in $(cat /etc/vm/modules/late.later); do"
                " insmod /lib/modules/$m.ko || exit 1; done")
        self.wait_text(font, lambda s: "late fb session" in s and
                       any(l.startswith("$ ") for l in s.lines),
                       "consoled did not draw its session on the late framebuffer")
        took = float(self.sh("cut -d' ' -f1 /proc/uptime")) - t0
        log = self.consoled_log()
        found = re.search(r"/dev/fb0 appeared after ([\d.]+) s", log)
        if not found or "/dev/fb0: CL Picasso4" not in log:
            self.fail("consoled did not log the framebuffer that came:\n" + log)
        # Taken at its event, not at the end of the wait (30 s).
        if float(found.group(1)) > 12:
            self.fail("consoled took /dev/fb0 %s s after its start, the driver came after"
                      " about 3 s:\n%s" % (found.group(1), log))
        tap_note("the session was on screen %.1f s after insmod; consoled logged: %s"
                 % (took, found.group(0)))
        self.vm.send_text("echo typed-$((6*7))\n")
        self.wait_text(font, lambda s: any(l.rstrip() == "typed-42" for l in s.lines),
                       "a command typed on the late framebuffer's session did not run")
        self.stop_consoled()

    def check_drm_no_blitter(self):
        """The same card under the DRM cirrus driver: its fbdev emulation gets
        no blitter (the cirrus plugin's probe matches the PCI id, but its copies
        would land in the scanout, not in the buffer the driver copies from)
        and scrolled text is exact: the screen equals a full redraw of it."""
        font = KEYBOARD_FONT
        if self.fb_count() != 1 or "CL " not in self.sh("cat /sys/class/graphics/fb0/name"):
            self.fail("run after fb-wait-late (cirrusfb as the only fb): %s"
                      % self.sh("cat /sys/class/graphics/fb*/name; true"))
        # fbcon lets go of cirrusfb, which is then unloaded; the DRM driver
        # takes the card and registers its fbdev emulation as fb0.
        self.sh("for c in /sys/class/vtconsole/vtcon*; do grep -q 'frame buffer' $c/name"
                " && echo 0 > $c/bind; done; rmmod cirrusfb")
        self.sh("for m in $(cat /etc/vm/modules/late-drm.later); do grep -q \"^$m \" /proc/modules"
                " || insmod /lib/modules/$m.ko || exit 1; done", timeout=120)
        self.sh("i=0; while [ ! -e /dev/fb0 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done")
        name = self.sh("cat /sys/class/graphics/fb0/name").strip()
        if not name.endswith("drmfb"):
            self.fail("fb0 is %r, not the DRM driver's fbdev emulation" % name)
        # After the scrolling, one cell changes: the driver flushes the whole
        # pixel lines of the pages written, from its buffer, which a
        # blitter's copies left behind.
        self.start_consoled(font, "/bin/sh -c 'seq 1 400; printf \"\\033[?25l\"; sleep 1;"
                            " printf \"\\033[5;3HX\"; exec sleep 100000'")

        def scrolled(s):
            lines = [l.rstrip() for l in s.lines]
            while lines and not lines[-1]:
                lines.pop()
            want = [str(400 - len(lines) + 1 + i) for i in range(len(lines))]
            if len(want) > 10:
                want[4] = want[4][:2] + "X" + want[4][3:]
            return len(lines) > 10 and lines[-1] == "400" and lines == want
        self.wait_text(font, scrolled, "seq's last lines (and an X on row 5) are not exactly"
                       " on the screen")
        log = self.consoled_log()
        if "a DRM driver's fbdev emulation" not in log or "Blitter backend cirrus" in log:
            self.fail("consoled did not refuse a blitter on %s:\n%s" % (name, log))
        before = self.stable_grab()
        self.sh("chvt 2")
        self.sh("chvt 1")
        self.wait_equal(before, "the scrolled screen differs from its full redraw on %s" % name)
        tap_note("fb0 %s: no blitter, the scrolled screen equals its redraw" % name)
        self.stop_consoled()

    def check_refusal(self):
        # (vfb at 1 bpp is drawn now, monotest.py; a format consoled refuses
        # is refused in mode-change, cirrus at 1 bpp)
        for args, want, needle in (
                ("--fbdev=/dev/null", 3, "is not a framebuffer device"),
                ("--fb-wait=0 --fbdev=/dev/nonexistent", 3,
                 "Failed to open framebuffer /dev/nonexistent"),
                ("--bogus-flag", 2, "unknown option '--bogus-flag'"),
                ("--vt=0", 2, "--vt: invalid value '0': expected N, ttyN or /dev/ttyN"),
                ("--palette=pink", 2, "--palette: invalid value 'pink': expected linux, xterm, "
                 "vga, tango, solarized or solarized-light"),
                ("--xkb-repeat-rate=fast", 2, "--xkb-repeat-rate: invalid value 'fast'")):
            out, status = self.vm.run("consoled --vt=1 %s 2>&1" % args, timeout=30)
            if status != want or needle not in out:
                self.fail("consoled %s: status %d (want %d), output:\n%s" % (args, status, want, out))
        # A font whose cell is larger than the screen: status 6, which the
        # unit lists in RestartPreventExitStatus= (a restart meets the same
        # mode). Terminus 16x32 on a 640x24 mode, where fbcon's 8x16 keeps a
        # row; the boot mode back afterwards.
        if self.vm.run("test -x /usr/bin/fbset")[1] != 0:
            self.fail("no fbset in the guest (apt-get install fbset on the host)")
        boot = self.fb_state()
        # consoled saves the mode it finds as the boot mode (bootmode.h) if
        # none is saved yet: 640x24 must not be what later checks restore.
        saved = self.vm.run("test -e /run/consoled/fb0.mode")[1] == 0
        self.sh("fbset -xres 640 -yres 24 -vxres 640 -vyres 24")
        try:
            args = "--fbdev=/dev/fb0 --font-file=/fonts/Uni2-Terminus32x16.psf.gz"
            out, status = self.vm.run("consoled --vt=1 %s 2>&1" % args, timeout=30)
        finally:
            if not saved:
                self.sh("rm -f /run/consoled/fb0.mode")
            self.sh("fbset -xres %d -yres %d -vxres %d -vyres %d"
                    % (self.vm_xres, self.vm_yres, self.vm_xres, self.vm_yres))
        needle = "The font's cell (16x32) is larger than the screen (640x24)"
        if status != 6 or needle not in out:
            self.fail("consoled %s on 640x24: status %d (want 6), output:\n%s" % (args, status, out))
        if self.fb_state() != boot:
            self.fail("fbset did not give the boot mode back: %r, not %r" % (self.fb_state(), boot))

    # -- driver handover and removal (the vesa guest) --

    def load_bochs(self):
        """Load the bochs DRM driver (the bochs card's module list), unless loaded."""
        self.sh("for m in $(cat /etc/vm/modules/bochs); do grep -q \"^$m \" /proc/modules"
                " || insmod /lib/modules/$m.ko || exit 1; done", timeout=120)

    def fb_name(self):
        return self.vm.run("cat /sys/class/graphics/fb0/name")[0].strip()

    def log_count(self, text):
        return self.consoled_log().count(text)

    def expect_screen(self, font, lines, what, timeout=30):
        """Wait until the decoded screen's text is exactly `lines` (then blank)."""
        want = "\n".join(lines)
        return self.wait_text(font, lambda s: s.text() == want,
                              "%s; expected exactly:\n%s" % (what, want), timeout=timeout)

    def check_handover(self):
        font = KEYBOARD_FONT
        fw, fh = load_font(font).width, load_font(font).height
        boot_fb = BOOT_FB[self.card]
        bw, bh = self.vm_xres, self.vm_yres
        if self.fb_name() != boot_fb:
            self.fail("fb0 is %r, not %r (vesa: is vga=0x314 on the command line?)"
                      % (self.fb_name(), boot_fb))
        self.sh("rm -rf /run/consoled")
        self.start_shell(font)
        self.vm.send_text("echo before-handover\n")
        self.wait_output(font, "echo before-handover", "before-handover", "typing on vesafb failed")
        green = "printf '\\033[32mgreen-text\\033[0m\\n'"
        self.vm.send_text(green + "\n")
        self.wait_output(font, green, "green-text", "printf on vesafb failed")
        self.vm.send_text("stty size\n")
        size = "%d %d" % (bh // fh, bw // fw)

        def answered(s):
            # the answer and the prompt after it: the picture compared
            # after the handover must not miss a prompt still on its way
            lines = [l.rstrip() for l in s.lines]
            return any(lines[i:i + 3] == ["$ stty size", size, "$"]
                       for i in range(len(lines) - 2))
        _, decoded = self.wait_text(font, answered, "the grid on %s is not %dx%d's"
                                    % (boot_fb, bw, bh))
        # what the boot framebuffer shows: the shell's banner, the commands,
        # the prompt
        screen_before = decoded.text().split("\n")
        if boot_fb not in self.sh("cat /run/consoled/fb0.mode"):
            self.fail("no boot mode of %s saved in /run/consoled/fb0.mode" % boot_fb)

        self.load_bochs()
        if self.fb_name() != "bochs-drmdrmfb":
            self.fail("fb0 is %r after loading bochs" % self.fb_name())
        self.wait_log(CONSOLED_LOG, "Took over /dev/fb0 (bochs-drmdrmfb)",
                      "consoled did not take over bochs-drm's fb0")
        log = self.consoled_log()
        if "/dev/fb0 (%s) was unregistered by its driver" % boot_fb not in log:
            self.fail("the log does not name the loss of %s:\n%s" % (boot_fb, log))
        img = self.vm.grab()
        cols, rows = img.width // fw, img.height // fh
        new = self.sh("cat /sys/class/graphics/fb0/virtual_size").strip()
        if (img.width, img.height) != tuple(int(v) for v in new.split(",")):
            self.fail("the display is %dx%d, not bochs-drm's %s" % (img.width, img.height, new))
        # The whole screen, drawn on the new device (nothing of it was there).
        self.expect_screen(font, screen_before,
                           "the screen after the handover is not the one from before")
        self.vm.send_text("stty size\n")
        _, decoded = self.expect_screen(font, screen_before[:-1] + ["$ stty size",
                                                                    "%d %d" % (rows, cols), "$"],
                                        "the session does not answer on the new fb0 with its"
                                        " new grid")
        row = [l.rstrip() for l in decoded.lines].index("green-text")  # printf's output
        if set(decoded.fg[row][:len("green-text")]) != {2}:
            self.fail("green-text is drawn in colours %r on the new fb0, not 2 (green)"
                      % decoded.fg[row][:len("green-text")])
        mode = self.sh("cat /run/consoled/fb0.mode")
        if boot_fb in mode or "bochs-drmdrmfb" not in mode:
            self.fail("/run/consoled/fb0.mode is not the new device's boot mode")
        print("# handover: %s" % " / ".join(
            l for l in log.splitlines() if "unregistered" in l or "Took over" in l), flush=True)
        self.stop_consoled()
        status = self.wait_consoled_exit()
        if status != 0:
            self.fail("consoled exited with %d after the handover" % status)

    def shell_on_bochs(self, font, extra=""):
        """consoled's shell on bochs-drm's fb0 after `echo one`: bochs-drm's
        PCI device and the screen's lines up to the prompt."""
        self.load_bochs()
        if self.fb_name() != "bochs-drmdrmfb":
            self.fail("fb0 is %r, not bochs-drm's" % self.fb_name())
        pci = self.sh("basename $(readlink -f /sys/class/graphics/fb0/device)").strip()
        self.start_shell(font, extra)
        self.vm.send_text("echo one\n")
        # the prompt after the output too: it is written apart from it and
        # may come a frame later, and the screen compared later has it
        _, decoded = self.wait_text(
            font, lambda s: s.text().split("\n")[-3:] == ["$ echo one", "one", "$"],
            "typing on bochs-drm failed")
        return pci, decoded.text().split("\n")[:-1]

    def check_fb_removal(self):
        font = KEYBOARD_FONT
        pci, screen_before = self.shell_on_bochs(font)

        self.sh("echo %s > /sys/bus/pci/drivers/bochs-drm/unbind" % pci)
        try:
            self.wait_log(CONSOLED_LOG, "No framebuffer to draw on",
                          "consoled did not notice the removal")
            if self.vm.run("test -e /sys/class/graphics/fb0")[1] == 0:
                self.fail("fb0 is still registered after the unbind")
            # The session goes on: a command typed now runs, its output is kept.
            cmd = "echo during-removal > /tmp/during; echo printed-while-away"
            self.sh("rm -f /tmp/during")
            self.vm.send_text(cmd + "\n")
            deadline = time.monotonic() + 20
            while "during-removal" not in self.vm.run("cat /tmp/during")[0]:
                if time.monotonic() > deadline:
                    self.fail("a command typed while no framebuffer was there did not run")
                time.sleep(0.3)
            time.sleep(3)  # past the search's retries: still logged once
            if self.consoled_exited():
                self.fail("consoled exited without a framebuffer:\n" + self.consoled_log())
            for text in ("was unregistered by its driver", "No framebuffer to draw on"):
                if self.log_count(text) != 1:
                    self.fail("%r logged %d times, not once:\n%s"
                              % (text, self.log_count(text), self.consoled_log()))
            # The successor comes while another VT is shown: consoled takes
            # it, draws nothing there, and lays out and draws when its VT
            # comes back.
            self.sh("chvt 2")
        finally:
            self.vm.run("echo %s > /sys/bus/pci/drivers/bochs-drm/bind" % pci)
        self.wait_log(CONSOLED_LOG, "Took over /dev/fb0 (bochs-drmdrmfb)",
                      "consoled did not take the framebuffer back after the rebind")
        time.sleep(1)
        shown = screen.read_screen(self.stable_grab(), load_font(font))
        if "printed-while-away" in shown:
            self.fail("consoled drew on the new fb0 while tty2 was shown:\n" + shown.text())
        # ... and keys typed there go to tty2, not to consoled's session
        self.sh("rm -f /tmp/tty2.in; (setsid sh -c 'exec cat </dev/tty2 >/tmp/tty2.in' &);"
                " sleep 0.5")
        self.vm.send_text("typed-on-tty2\n")
        deadline = time.monotonic() + 10
        while "typed-on-tty2" not in self.vm.run("cat /tmp/tty2.in")[0]:
            if time.monotonic() > deadline:
                self.vm.run("pkill -x cat")
                self.fail("keys typed on tty2 after the rebind did not reach tty2")
            time.sleep(0.3)
        self.vm.run("pkill -x cat")
        self.sh("chvt 1")
        self.expect_screen(font, screen_before + ["$ " + cmd, "printed-while-away", "$"],
                           "the screen after the rebind is not the session's")
        self.vm.send_text("echo back\n")
        self.expect_screen(font, screen_before + ["$ " + cmd, "printed-while-away",
                                                  "$ echo back", "back", "$"],
                           "the session does not answer after the rebind")
        self.stop_consoled()
        status = self.wait_consoled_exit()
        if status != 0:
            self.fail("consoled exited with %d after the removal and the rebind" % status)

    def check_fb_rebind(self):
        """bochs-drm unbound and bound again while consoled is stopped: when
        it reads the udev events, /dev/fb0 and its sysfs device are there
        again, a new framebuffer at the same minor, and only the fd
        consoled holds tells the two apart (docs/HARDWARE.md)."""
        font = KEYBOARD_FONT
        # --verbose: the udev events in the log a failure prints
        pci, screen_before = self.shell_on_bochs(font, "--verbose")
        pid = self.consoled_pid()
        if not pid:
            self.fail("no consoled running")
        # the sysfs device of fb0 (its kernfs inode): the same path, a new
        # device after the rebind
        sysfs = "stat -L -c %i /sys/dev/char/29:0"
        ino = self.sh(sysfs).strip()
        self.sh("kill -STOP %s" % pid)
        try:
            self.sh("echo %s > /sys/bus/pci/drivers/bochs-drm/unbind;"
                    " echo %s > /sys/bus/pci/drivers/bochs-drm/bind" % (pci, pci), timeout=60)
            names = self.sh("cat /sys/class/graphics/fb*/name").split()
            if names != ["bochs-drmdrmfb"]:
                self.fail("after the rebind the framebuffers are %r, not bochs-drm's fb0 alone"
                          % names)
            new_ino = self.sh(sysfs).strip()
            if new_ino == ino:
                self.fail("fb0's sysfs device is the same (inode %s) after the rebind" % ino)
        finally:
            self.vm.run("kill -CONT %s" % pid)
        self.wait_log(CONSOLED_LOG, "Took over /dev/fb0 (bochs-drmdrmfb)",
                      "consoled did not notice that its framebuffer was replaced at the same"
                      " minor")
        for text in ("was unregistered by its driver", "Took over /dev/fb0"):
            if self.log_count(text) != 1:
                self.fail("%r logged %d times, not once:\n%s"
                          % (text, self.log_count(text), self.consoled_log()))
        # The whole screen on the new device, and the session answers there.
        self.expect_screen(font, screen_before + ["$"],
                           "the screen after the rebind is not the session's")
        self.vm.send_text("echo back\n")
        self.expect_screen(font, screen_before + ["$ echo back", "back", "$"],
                           "the session does not answer on the new fb0")
        print("# fb-rebind: fb0's sysfs device inode %s, then %s" % (ino, new_ino), flush=True)
        self.stop_consoled()
        status = self.wait_consoled_exit()
        if status != 0:
            self.fail("consoled exited with %d after the rebind" % status)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--consoled", required=True, help="the consoled binary to test")
    ap.add_argument("--card", required=True, choices=sorted(vmlib.CARD_QEMU_ARGS))
    ap.add_argument("--only", default="", help="comma-separated checks (default: all for the card)")
    ap.add_argument("--append", default="", help="extra kernel command line")
    ap.add_argument("--out", default=None, help="directory for logs and failure pictures")
    ap.add_argument("--ftref", default=None,
                    help="the host's reference renderer (default: BUILD/tests/vm/ftref)")
    args = ap.parse_args()
    ftref = args.ftref or fonttest.find_ftref(args.consoled)

    out_dir = os.path.abspath(args.out or os.path.join(os.getcwd(), "vm-" + args.card))
    os.makedirs(out_dir, exist_ok=True)
    plugins = find_plugins(args.consoled)

    if args.card in BOOT_FB:
        # the boot framebuffer against fbcon first (vesafb 800x600x16,
        # efifb 1280x800x32), then its replacement
        checks = ["oracle-lat15-8x16", "handover", "fb-removal", "fb-rebind"]
    elif args.card == "vfb":
        # refusal last: its 640x24 mode stays at the head of fb0's sysfs
        # `modes`, where VM.read_fb() takes the visible size from
        checks = (["depth-%dbpp" % b for b in (8, 16, 24, 32)]
                  + ["scroll-" + m for m in SCROLL_MODES["vfb"]] + ["blank", "pointer-scroll"]
                  + monotest.CHECKS + ["refusal"])
    elif args.card in ("virtio", "qxl"):
        # the other checks do not depend on the card: bochs has them (and
        # the scrolls through the same pwrite() path, 2-3 minutes here)
        checks = ["oracle-" + f for f in ORACLE_FONTS] + deferredtest.CHECKS[args.card]
    elif args.card == "vexpress":
        # The ARM board (armhf consoled, tests/cross/run): the pixel oracle
        # with every font at 16 bpp (RGB565), then at 8 bpp through the
        # PL111's palette and back at 16, keys through the PL050 port,
        # scrolling and the exits that must give fbcon its screen back.
        checks = (["oracle-" + f for f in ORACLE_FONTS] + ["depth-8bpp", "depth-16bpp"]
                  + ["keyboard", "exit-sigterm", "exit-sigsegv"]
                  + ["scroll-" + m for m in SCROLL_MODES[args.card]])
    elif args.card == "late":
        # In this order: the second loads the driver.
        checks = ["fb-wait-none", "fb-wait-all", "fb-wait-late", "drm-no-blitter"]
    else:
        checks = (["oracle-" + f for f in ORACLE_FONTS]
                  + ["keyboard", "session", "keys", "syn-dropped", "respawn", "bad-font",
                     "ctrl-alt-del", "hotplug", "frames", "vt-switch", "vt-grab",
                     "exit-sigterm", "exit-sigsegv"]
                  + ["scroll-" + m for m in scroll_modes(args.card, plugins)])
        if CARD_PLUGIN.get(args.card) in plugins:
            checks += ["backend", "scroll-copy-hang"]
        if args.card == "cirrus":
            # what keys send and what the session's output means do not
            # depend on the card
            checks += ["keys-terminfo", "terminal-output", "caps-terminfo", "mode-change",
                       "blank"]
        if args.card == "cirrus" and "cirrus" in plugins:
            checks += ["session-ioports", "boot-mode"]
        if args.card in fonttest.CARDS:
            checks += fonttest.CHECKS
        if args.card in pointertest.CARDS:
            checks += pointertest.CHECKS
        elif args.card in pointertest.SCROLL_CARDS:
            checks += ["pointer-scroll"]
        if args.card == "bochs":
            checks += selecttest.PASTE_CHECKS + ["scroll-overalloc", "sync-output"]
        if args.card in ("bochs", "cirrus"):
            checks += selecttest.SHOT_CHECKS + ["idle"]
        if args.card in mousetest.CARDS:
            checks += mousetest.CHECKS
        if args.card in palettetest.CARDS:
            checks += palettetest.CHECKS
        if args.card in cursortest.CARDS:
            checks += cursortest.CHECKS
        if args.card in vcstest.CARDS:
            checks += vcstest.CHECKS
        if args.card in kittytest.CARDS:
            checks += kittytest.CHECKS
        if args.card in kmsgtest.CARDS:
            checks += kmsgtest.CHECKS[args.card]
        if args.card in belltest.CARDS:
            checks += belltest.CHECKS[args.card]
        if args.card in rotatetest.CARDS:
            checks += rotatetest.CHECKS
        if args.card in deferredtest.CARDS:
            checks += deferredtest.CHECKS[args.card]
        if args.card in sixeltest.CARDS:
            checks += sixeltest.CHECKS[args.card]
        if args.card in screenstest.CARDS:
            checks += screenstest.CHECKS
        # last: it reboots the guest
        if args.card in pstoretest.CARDS:
            checks += pstoretest.CHECKS[args.card]
    if args.only:
        checks = [c for c in args.only.split(",") if c]

    append = args.append
    firmware = vmlib.CARD_FIRMWARE.get(args.card, ())
    if any(not os.path.exists(f) for f in firmware):
        print("1..0 # SKIP no UEFI firmware (%s): install ovmf" % ", ".join(firmware))
        return 0

    print("1..%d" % len(checks), flush=True)
    elves = {GUEST_BACKEND_DIR + "/" + n + ".so": p for n, p in plugins.items()}
    blitcheck = os.path.join(os.path.dirname(os.path.abspath(args.consoled)), "..", "tests", "vm",
                             "blitcheck")
    # the guest tools of tests/vm (con2fb: fbcon's own picture of fb1 for
    # screens-mirror)
    for tool in ("blitcheck", "inb", "uinput-kbd", "uinput-ptr", "vtgrab", "fbsync", "uinput-snd",
                 "con2fb"):
        path = os.path.join(os.path.dirname(blitcheck), tool)
        if os.path.exists(path):
            elves["/usr/bin/" + tool] = os.path.normpath(path)
    keylat = os.path.join(os.path.dirname(blitcheck), "..", "bench", "keylat")
    if os.path.exists(keylat):
        elves["/usr/bin/keylat"] = os.path.normpath(keylat)  # osc52-flood's key timing
    foreign = args.card in initramfs.CARD_ARCH  # the host's own programs do not run there
    if not foreign:
        elves.update(mousetest.guest_elves())  # less, for the wheel check
    elves.update(palettetest.guest_elves(args.consoled))  # fbcmap
    if shutil.which("fbset") and not foreign:
        elves["/usr/bin/fbset"] = shutil.which("fbset")  # Debian's fbset (tests/deps.sh)
    bad = os.path.join(os.path.dirname(blitcheck), "bad-abi-plugin.so")
    if os.path.exists(bad):
        elves["/usr/lib/bad-abi-plugin.so"] = os.path.normpath(bad)
    extra = {}
    if args.card in kmsgtest.CARDS and any(c == "kmsg-flood" for c in checks):
        files, more = kmsgtest.guest_files(args.consoled)  # the lines, kmsgflood
        extra.update(files)
        elves.update(more)
    pictures = None
    if any(c.startswith("sixel") for c in checks):
        pictures = sixeltest.Pictures(out_dir)  # the streams and libsixel's decoding
        extra.update(pictures.guest_files())
    # the second display (no driver at boot) for the screens checks
    qemu_args = screenstest.QEMU_ARGS if any(c.startswith("screens-") for c in checks) else []
    with vmlib.VM(args.card, consoled=os.path.abspath(args.consoled), append=append.strip(),
                  out_dir=out_dir, extra_elves=elves, initramfs_extra=extra, qemu_args=qemu_args,
                  boot_timeout=400 if firmware else 180) as vm:
        print("# %s booted in %.1fs, fb0 %s" % (args.card, vm.boot_seconds, vm.fb_info), flush=True)
        r = Runner(vm, args.card, out_dir)
        if vm.fb_info and vm.fb_info[0].isdigit():
            r.vm_xres, r.vm_yres = (int(v) for v in vm.fb_info.split(",")[:2])
            r.vm_bpp = int(vm.fb_info.split(",")[2]) if vm.fb_info.count(",") >= 2 else 8
        simple = {
            "keyboard": r.check_keyboard,
            "session": r.check_session,
            "session-ioports": r.check_session_ioports,
            "boot-mode": r.check_boot_mode,
            "keys": r.check_keys,
            "keys-terminfo": r.check_keys_terminfo,
            "terminal-output": r.check_terminal_output,
            "caps-terminfo": r.check_caps_terminfo,
            "syn-dropped": r.check_syn_dropped,
            "respawn": r.check_respawn,
            "bad-font": r.check_bad_font,
            "ctrl-alt-del": r.check_ctrl_alt_del,
            "hotplug": r.check_hotplug,
            "frames": r.check_frames,
            "idle": r.check_idle,
            "vt-switch": r.check_vt_switch,
            "sync-output": r.check_sync_output,
            "vt-grab": r.check_vt_grab,
            "exit-sigterm": lambda: r.check_exit("TERM", 0),
            "exit-sigsegv": lambda: r.check_exit("SEGV", 139),
            "backend": r.check_backend,
            # The fault switch: the engine hangs, consoled drops the plugin
            # and the screen still ends right.
            "scroll-overalloc": r.check_scroll_overalloc,
            "scroll-copy-hang": lambda: r.check_scroll("copy", None, "copy",
                                                       env="CONSOLED_TEST_BACKEND_HANG=1"),
            "refusal": r.check_refusal,
            "fb-wait-none": r.check_fb_wait_none,
            "fb-wait-all": r.check_fb_wait_all,
            "fb-wait-late": r.check_fb_wait_late,
            "drm-no-blitter": r.check_drm_no_blitter,
            "handover": r.check_handover,
            "fb-removal": r.check_fb_removal,
            "fb-rebind": r.check_fb_rebind,
            "mode-change": r.check_mode_change,
            "blank": r.check_blank,
        }
        if args.card in fonttest.CARDS and ftref:
            simple.update(fonttest.FontChecks(r, ftref).checks)
        elif args.card in fonttest.CARDS:
            simple.update({c: lambda: r.fail("no ftref (build it, or pass --ftref)")
                           for c in fonttest.CHECKS})
        if args.card in pointertest.SCROLL_CARDS:
            pc = pointertest.PointerChecks(r, oracle_text, load_font, KEYBOARD_FONT,
                                           scroll_modes(args.card, plugins))
            simple.update({n: pc.guarded(f) for n, f in pc.checks.items()})
        if args.card in ("bochs", "cirrus"):
            simple.update(selecttest.SelectChecks(r, oracle_text, load_font,
                                                  KEYBOARD_FONT).checks)
        if args.card in mousetest.CARDS:
            mc = mousetest.MouseChecks(r, oracle_text, load_font, KEYBOARD_FONT)
            simple.update({n: mc.guarded(f) for n, f in mc.checks.items()})
        if args.card in palettetest.CARDS:
            simple.update(palettetest.PaletteChecks(r, load_font, KEYBOARD_FONT).checks)
        if args.card in cursortest.CARDS:
            simple.update(cursortest.CursorChecks(r, load_font).checks)
        if args.card in vcstest.CARDS:
            simple.update(vcstest.VcsChecks(r, KEYBOARD_FONT).checks)
        if args.card in kittytest.CARDS:
            simple.update(kittytest.KittyChecks(r, KEYBOARD_FONT).checks)
        if args.card in kmsgtest.CARDS:
            simple.update(kmsgtest.KmsgChecks(r, load_font, KEYBOARD_FONT).checks)
        if args.card in deferredtest.CARDS:
            simple.update(deferredtest.DeferredChecks(r, load_font, KEYBOARD_FONT).checks)
        if args.card == "vfb":
            simple.update(monotest.MonoChecks(r, load_font).checks)
        if args.card in belltest.CARDS:
            bc = belltest.BellChecks(r, load_font, KEYBOARD_FONT)
            simple.update({n: bc.guarded(f) for n, f in bc.checks.items()})
        if args.card in pstoretest.CARDS:
            simple.update(pstoretest.PstoreChecks(r, load_font, KEYBOARD_FONT, CONSOLED_LOG,
                                                  CONSOLED_STATUS).checks)
        if args.card in rotatetest.CARDS:
            simple.update(rotatetest.RotateChecks(r, oracle_text, load_font,
                                                  scroll_modes(args.card, plugins)).checks)
        if pictures:
            simple.update(sixeltest.SixelChecks(r, pictures).checks)
        if args.card in screenstest.CARDS:
            simple.update(screenstest.ScreensChecks(r, oracle_text, load_font,
                                                    KEYBOARD_FONT).checks)
        for name in checks:
            if name in simple:
                r.check(name, simple[name])
            elif name.startswith("oracle-"):
                font = ORACLE_FONTS[name[len("oracle-"):]]
                r.check(name, lambda f=font: r.check_oracle(f))
            elif name.startswith("scroll-"):
                mode = name[len("scroll-"):]
                warn, full = scroll_modes(args.card, plugins)[mode]
                r.check(name, lambda m=mode, w=warn, f=full: r.check_scroll(m, w, f))
            elif name.startswith("depth-"):
                r.check(name, lambda b=int(name[6:-3]): r.check_depth(b))
            else:
                ap.error("unknown check " + name)
    print("# %s: %d passed, %d failed%s" % (args.card, r.n - len(r.failed), len(r.failed),
                                          (": " + ", ".join(r.failed)) if r.failed else ""))
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
