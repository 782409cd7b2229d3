#!/usr/bin/python3
"""Drive a QEMU guest for consoled's VM tests.

A `VM` boots Debian's kernel with the test initramfs (tests/vm/initramfs.py)
under `qemu-system-x86_64 -accel tcg` with one of the emulated cards (the
card "vexpress": Debian's armhf kernel under `qemu-system-arm -M
vexpress-a9`, an armhf initramfs, ttyAMA0/1 for ttyS0/1) and gives the
test three channels:

* two serial ports (unix sockets): ttyS1 carries a root shell that only
  `run()` uses, driven with unique begin/end markers; ttyS0 is the console
  (kernel messages, a second shell for humans, logged to console-<card>.log);
* QMP (a unix socket): `screendump()` for what the emulated card really
  displays, `send_text()`/`send_combo()` for real PS/2 key presses that reach
  the guest's evdev;
* `read_fb()` for vfb, which has no display: the visible part of the guest's
  /dev/fb0, fetched with QMP `memsave` from the vmalloc area vfb draws into.

Pointer devices, driven through QMP `input-send-event`:

* the PS/2 mouse on i8042's aux port is always there (the guest loads
  psmouse): the relative pointer.  `mouse_move_rel(dx, dy)` moves it (pixels
  at consoled's --mouse-speed=1; +y is down);
* `plug_tablet()` / `unplug_tablet()` add and remove a usb-tablet on the
  xhci bus (QMP device_add/device_del): the absolute pointer.
  `tablet_move(x, y, width, height)` puts it on pixel x,y of a width x height
  screen (the axis value in the middle of that pixel's share of 0..32767, so
  any even split of the axis over the pixels lands on it).  Wait for the
  guest to see it (consoled logs "Pointer /dev/input/eventN: QEMU QEMU USB
  Tablet"), or the events go nowhere;
* `pointer_button("left"|"middle"|"right", down, device)`,
  `pointer_click(button, device, count=1)` and `pointer_wheel(notches,
  device)` (> 0 up, away from the user) on device "tablet" or "ps2".

How QEMU routes them (ui/input.c, qemu_input_find_handler()): every event
goes to the first handler in a list that takes its kind: abs events only to
the tablet, rel events only to the PS/2 mouse, but buttons and the wheel to
whichever of the two is first.  A usb-tablet moves itself to the front once,
when the guest's driver first talks to it (hid_pointer_activate()); HMP's
`mouse_set INDEX` (query-mice gives the indexes) moves a handler there.  The
`device` argument of input-send-event names a *display* console, not an
input device, so it does not help.  The button helpers therefore run
`mouse_set` for the device they are given before sending.

Every wait has a timeout, and the context manager kills QEMU whatever happens,
so a hung guest fails a test instead of hanging CI.  The serial log is kept
in the VM's work directory (`vm.serial_log`, `vm.console_log`) for post-mortems.
"""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fdt  # noqa: E402
import initramfs as initramfs_mod  # noqa: E402
import screen  # noqa: E402
import turns  # noqa: E402

# Up to the end of the line: a match on a buffer that ends inside the marker
# would cut fb0's geometry short (the reader thread appends in chunks).
READY_RE = re.compile(rb"CONSOLED-TEST-READY card=(\S+) fb0=(\S*)\r?\n")

# QEMU device arguments per card name (docs/HARDWARE.md has the drivers).
CARD_QEMU_ARGS = {
    "cirrus": ["-vga", "cirrus"],
    "ati": ["-vga", "none", "-device", "ati-vga"],
    "rv100": ["-vga", "none", "-device", "ati-vga,model=rv100"],
    "bochs": ["-vga", "std"],
    # The same card, left to the kernel's built-in vesafb (CARD_APPEND);
    # the handover checks load bochs-drm, which replaces it.
    "vesa": ["-vga", "std"],
    # The same card under UEFI firmware (OVMF, CARD_FIRMWARE): efifb on the
    # firmware's GOP framebuffer, replaced by bochs-drm in the same checks.
    "efi": ["-vga", "std"],
    "vfb": ["-vga", "none"],
    # DRM drivers of today's virtual machines, whose fbdev emulation has
    # deferred I/O (deferredtest.py): virtio-gpu on virtio-vga
    # (virtio_gpudrmfb) and qxl (qxldrmfb, 1024x768x32).
    "virtio": ["-vga", "none", "-device", "virtio-vga"],
    "qxl": ["-vga", "qxl"],
    "none": ["-vga", "none"],
    # The Cirrus card with no driver at boot: the test loads cirrusfb
    # (/etc/vm/modules/late.later) while consoled waits (--fb-wait).
    "late": ["-vga", "cirrus"],
    # The ARM guest (armhf, initramfs.CARD_ARCH): QEMU's Versatile Express
    # board with a Cortex-A9 CoreTile. Its PL111 colour LCD controller is
    # driven by the kernel's built-in fbdev driver amba-clcd (CLCD FB,
    # 640x480 RGB565 with the panel fdt.panel_dtb() adds); the PL050 KMI
    # ports carry the PS/2 keyboard and mouse (ambakmi); the PL011 UARTs
    # are ttyAMA0 and ttyAMA1.
    "vexpress": ["-M", "vexpress-a9"],
}

# The emulator of each guest architecture (initramfs.CARD_ARCH; amd64
# otherwise) and the board's own device tree in the kernel package.
ARCH_QEMU = {"armhf": "qemu-system-arm"}
CARD_DTB = {"vexpress": "vexpress-v2p-ca9.dtb"}

# vfb needs memory for a virtual screen several times the visible one (pan and
# wrap tests); 8 MiB covers 1024x768x32 twice over and 640x480x8 27 times.
VFB_DEFAULT_APPEND = "vfb.vfb_enable=1 vfb.videomemorysize=8388608 vfb.mode_option=640x480-8@60"

# UEFI firmware per card (Debian's ovmf): the code read-only, a copy of the
# variable store per guest. TCG boots it in about a minute.
OVMF_CODE = "/usr/share/OVMF/OVMF_CODE.fd"
OVMF_VARS = "/usr/share/OVMF/OVMF_VARS.fd"
CARD_FIRMWARE = {"efi": (OVMF_CODE, OVMF_VARS)}

# Kernel command line per card: vga=0x314 has the boot code set VESA mode
# 0x114 (800x600, 16 bpp) for vesafb, which Debian's kernel has built in.
# bochs: 1 MiB at 256 MiB kept from the kernel, for ramoops (the pstore
# check, pstoretest.py: a panic's log survives the guest's reset there).
CARD_APPEND = {"vesa": "vga=0x314", "bochs": "memmap=1M$0x10000000"}

# Kernel command line: printk only to the serial port (never over fbcon's
# picture on tty1), no console blanking, reboot-less panic so QEMU exits.
# no_timer_check: the IO-APIC timer check counts ticks over a busy-wait, and
# under TCG on a loaded host it sometimes saw too few and panicked ("IO-APIC
# + timer doesn't work!"; seen twice); virtual machines skip it.
BASE_APPEND = "console=ttyS0,115200 loglevel=4 consoleblank=0 panic=-1 nokaslr no_timer_check"
# The ARM board: the PL011's console; the x86 options do not apply.
ARM_APPEND = "console=ttyAMA0,115200 loglevel=4 consoleblank=0 panic=-1"


class VMError(Exception):
    pass


class CommandTimeout(VMError):
    pass


class _Serial:
    """Reader thread collecting everything the guest writes to ttyS0.

    Data is appended to a buffer (and a log file); `expect()` waits for a
    regex in the part of the buffer not consumed yet.
    """

    def __init__(self, sock, log_path, echo=False):
        self.sock = sock
        self.buf = bytearray()
        self.pos = 0
        self.cond = threading.Condition()
        self.closed = False
        self.echo = echo
        self.log = open(log_path, "wb")
        self.thread = threading.Thread(target=self._reader, daemon=True)
        self.thread.start()

    def _reader(self):
        while True:
            try:
                data = self.sock.recv(65536)
            except OSError:
                data = b""
            with self.cond:
                if not data:
                    self.closed = True
                    self.cond.notify_all()
                    return
                self.buf += data
                self.log.write(data)
                self.log.flush()
                self.cond.notify_all()
            if self.echo:
                os.write(sys.stdout.fileno(), data)

    def write(self, data):
        if isinstance(data, str):
            data = data.encode()
        self.sock.sendall(data)

    def expect(self, regex, timeout):
        """Wait for `regex` (bytes) after the read position; consume through the match."""
        pattern = re.compile(regex) if isinstance(regex, bytes) else regex
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                match = pattern.search(self.buf, self.pos)
                if match:
                    self.pos = match.end()
                    return match
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.closed:
                    tail = bytes(self.buf[-2000:]).decode(errors="replace")
                    why = "guest serial closed" if self.closed else "timeout (%gs)" % timeout
                    raise CommandTimeout("%s waiting for %r; serial tail:\n%s"
                                         % (why, pattern.pattern, tail))
                self.cond.wait(min(remaining, 1.0))

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass
        self.thread.join(timeout=2)
        self.log.close()


class _QMP:
    """A minimal synchronous QMP client (one command at a time, events skipped)."""

    def __init__(self, path, timeout):
        self.sock = _connect_unix(path, timeout)
        self.sock.settimeout(timeout)
        self.file = self.sock.makefile("rb")
        greeting = self._read()
        if "QMP" not in greeting:
            raise VMError("unexpected QMP greeting %r" % greeting)
        self.cmd("qmp_capabilities")

    def _read(self):
        line = self.file.readline()
        if not line:
            raise VMError("QMP connection closed")
        return json.loads(line)

    def cmd(self, name, **args):
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            reply = self._read()
            if "return" in reply:
                return reply["return"]
            if "error" in reply:
                raise VMError("QMP %s: %s" % (name, reply["error"].get("desc", reply["error"])))

    def close(self):
        try:
            self.file.close()
            self.sock.close()
        except OSError:
            pass


def _connect_unix(path, timeout):
    """Connect to a unix socket QEMU is about to create (retrying until timeout)."""
    deadline = time.monotonic() + timeout
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(path)
            return sock
        except OSError:
            sock.close()
            if time.monotonic() > deadline:
                raise VMError("cannot connect to " + path)
            time.sleep(0.05)


# --- keyboard ---------------------------------------------------------------

_PLAIN_KEYS = {" ": "spc", "\n": "ret", "\t": "tab", "-": "minus", "=": "equal",
               "[": "bracket_left", "]": "bracket_right", "\\": "backslash",
               ";": "semicolon", "'": "apostrophe", "`": "grave_accent", ",": "comma",
               ".": "dot", "/": "slash", "\b": "backspace", "\x1b": "esc"}
_SHIFT_KEYS = {"!": "1", "@": "2", "#": "3", "$": "4", "%": "5", "^": "6", "&": "7",
               "*": "8", "(": "9", ")": "0", "_": "minus", "+": "equal",
               "{": "bracket_left", "}": "bracket_right", "|": "backslash",
               ":": "semicolon", '"': "apostrophe", "~": "grave_accent", "<": "comma",
               ">": "dot", "?": "slash"}


def char_to_qcodes(ch):
    """QEMU qcodes typing `ch` on a US keyboard (the kernel's and xkb's default)."""
    if "a" <= ch <= "z" or "0" <= ch <= "9":
        return [ch]
    if "A" <= ch <= "Z":
        return ["shift", ch.lower()]
    if ch in _PLAIN_KEYS:
        return [_PLAIN_KEYS[ch]]
    if ch in _SHIFT_KEYS:
        return ["shift", _SHIFT_KEYS[ch]]
    if "\x01" <= ch <= "\x1a" and ch not in "\b\t\n":
        return ["ctrl", chr(ord(ch) + 96)]
    raise ValueError("no key for %r" % ch)


# --- the VM -----------------------------------------------------------------

class VM:
    """One QEMU guest.  Use as a context manager:

        with VM("cirrus") as vm:
            out, status = vm.run("cat /sys/class/graphics/fb0/virtual_size")
            img = vm.screendump()

    card:            cirrus | ati | rv100 | bochs | vesa | efi | vfb | none | late
    consoled:        host path of a consoled binary to put in /usr/bin (or None)
    initramfs_extra: {guest_path: host_path | bytes | str} extra files
    extra_elves:     {guest_path: host_path} extra binaries/plugins (with their libraries)
    append:          extra kernel command line (e.g. "iomem=relaxed")
    memory:          guest RAM in MiB
    out_dir:         where logs/screenshots go (default: a temporary work dir,
                     removed on exit unless keep=True)
    qemu_args:       extra QEMU arguments (e.g. a -display for run-demo)
    serial_echo:     copy guest serial output to our stdout (interactive use)
    """

    def __init__(self, card="cirrus", consoled=None, initramfs_extra=None, extra_elves=None,
                 append="", memory=512, out_dir=None, keep=False, boot_timeout=180,
                 qemu_args=(), serial_echo=False, display=("-display", "none")):
        if card not in CARD_QEMU_ARGS:
            raise ValueError("unknown card %r (one of %s)" % (card, ", ".join(CARD_QEMU_ARGS)))
        self.card = card
        self.arch = initramfs_mod.CARD_ARCH.get(card)
        self.consoled = consoled
        self.initramfs_extra = initramfs_extra or {}
        self.extra_elves = extra_elves or {}
        self.append = append
        self.memory = memory
        self.boot_timeout = boot_timeout
        self.qemu_args = list(qemu_args)
        self.display = list(display)
        self.serial_echo = serial_echo
        self.keep = keep or out_dir is not None
        # Unix socket paths must stay under 108 bytes: sockets live in a short
        # temporary directory, logs in out_dir.
        self.sockdir = tempfile.mkdtemp(prefix="cvm-")
        self.out_dir = out_dir or self.sockdir
        os.makedirs(self.out_dir, exist_ok=True)
        self.serial_log = os.path.join(self.out_dir, "serial-%s.log" % card)
        self.console_log = os.path.join(self.out_dir, "console-%s.log" % card)
        self.proc = None
        self.qmp = None
        self.serial = None
        self.console = None
        self.boot_seconds = None
        self.fb_info = None
        self._seq = 0
        self._shot = 0

    # -- lifecycle --

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.kill()
            raise
        return self

    def __exit__(self, *exc):
        self.kill()
        return False

    def kernel_cmdline(self):
        parts = [ARM_APPEND if self.arch else BASE_APPEND, "consoled.card=" + self.card]
        if self.card == "vfb" and "vfb.videomemorysize" not in self.append:
            parts.append(VFB_DEFAULT_APPEND)
        if self.card in CARD_APPEND:
            parts.append(CARD_APPEND[self.card])
        if self.append:
            parts.append(self.append)
        return " ".join(parts)

    def qemu_command(self, kernel, initrd):
        if self.arch:
            machine = CARD_QEMU_ARGS[self.card] + ["-dtb", self.board_dtb(kernel)]
            # no PCI bus, so no USB controller; Debian 12's QEMU lets the
            # board's AC'97 codec try ALSA and warn without this
            return ([ARCH_QEMU[self.arch], "-accel", "tcg", "-m", str(self.memory),
                     "-nodefaults", "-no-user-config", "-no-reboot", "-S"]
                    + machine + self.display + self.serial_args(kernel, initrd)
                    + ["-audiodev", "none,id=snd0"] + self.qemu_args)
        return (["qemu-system-x86_64", "-accel", "tcg", "-m", str(self.memory),
                 "-nodefaults", "-no-user-config", "-no-reboot", "-S"]
                + CARD_QEMU_ARGS[self.card] + self.display + self.serial_args(kernel, initrd)
                # a USB controller, for keyboards plugged in by tests
                + ["-device", "qemu-xhci,id=xhci"]
                + self.firmware_args() + self.qemu_args)

    def serial_args(self, kernel, initrd):
        """The kernel, its initramfs and command line, the two serial ports
        (console, harness) and QMP."""
        return ["-kernel", kernel.vmlinuz, "-initrd", initrd,
                "-append", self.kernel_cmdline(),
                "-chardev", "socket,id=ser0,path=%s,server=on,wait=off"
                % os.path.join(self.sockdir, "console"),
                "-serial", "chardev:ser0",
                "-chardev", "socket,id=ser1,path=%s,server=on,wait=off"
                % os.path.join(self.sockdir, "serial"),
                "-serial", "chardev:ser1",
                "-qmp", "unix:%s,server=on,wait=off" % os.path.join(self.sockdir, "qmp"),
                "-monitor", "none"]

    def board_dtb(self, kernel):
        """The board's device tree from the kernel package with the panel
        fdt.panel_dtb() adds, written to the work directory."""
        src = os.path.join(kernel.root, "usr", "lib", "linux-image-" + kernel.release,
                           CARD_DTB[self.card])
        with open(src, "rb") as f:
            data = fdt.panel_dtb(f.read())
        path = os.path.join(self.sockdir, CARD_DTB[self.card])
        with open(path, "wb") as f:
            f.write(data)
        return path

    def firmware_args(self):
        """pflash drives for a UEFI card (CARD_FIRMWARE), else none (SeaBIOS)."""
        if self.card not in CARD_FIRMWARE:
            return []
        code, vars_template = CARD_FIRMWARE[self.card]
        store = os.path.join(self.sockdir, "efivars.fd")
        shutil.copyfile(vars_template, store)
        return ["-drive", "if=pflash,format=raw,unit=0,readonly=on,file=" + code,
                "-drive", "if=pflash,format=raw,unit=1,file=" + store]

    def build_initrd(self, path):
        """Write the guest's initramfs to `path`; return the kernel.Kernel it is for.
        (rootfs.DebianVM boots a disk image with a smaller one.)"""
        return initramfs_mod.build(path, consoled=self.consoled, extra_files=self.initramfs_extra,
                                   extra_elves=self.extra_elves, arch=self.arch)

    def start(self):
        """Build the initramfs, start QEMU paused, attach, resume and wait for
        the shell (a shared turn: a boot is not timed, turns.py)."""
        with turns.turn():
            self._start()

    def _start(self):
        initrd = os.path.join(self.sockdir, "initramfs.cpio")
        kernel = self.build_initrd(initrd)
        cmd = self.qemu_command(kernel, initrd)
        self.qemu_log = os.path.join(self.out_dir, "qemu-%s.log" % self.card)
        with open(self.qemu_log, "wb") as log:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT)
        try:
            self.qmp = _QMP(os.path.join(self.sockdir, "qmp"), 30)
            console = _connect_unix(os.path.join(self.sockdir, "console"), 30)
            sock = _connect_unix(os.path.join(self.sockdir, "serial"), 30)
        except VMError:
            raise VMError("QEMU did not start: %s" % self._qemu_log_tail())
        self.console = _Serial(console, self.console_log, echo=self.serial_echo)
        self.serial = _Serial(sock, self.serial_log)
        t0 = time.monotonic()
        self.qmp.cmd("cont")
        match = self.serial.expect(READY_RE, self.boot_timeout)
        self.fb_info = match.group(2).decode()
        # Quiet, promptless, echo-free shell: only command output between markers.
        self.serial.write("stty -echo; PS1=''; PS2=''\n")
        self.run("true", timeout=60)
        self.boot_seconds = time.monotonic() - t0

    def reboot(self, trigger, timeout=None):
        """Run `trigger` in the serial shell, which resets the guest (a panic:
        the command line's panic=-1 reboots at once), and wait for the guest's
        shell again. -no-reboot makes QEMU quit at a reset; for this one QEMU
        resets the guest instead (QMP set-action), in the same process, so
        RAM keeps what the kernel left there (ramoops). Returns the seconds
        from the trigger to the shell."""
        t0 = time.monotonic()
        self.qmp.cmd("set-action", reboot="reset")
        try:
            self.serial.write(trigger + "\n")
            match = self.serial.expect(READY_RE, timeout or self.boot_timeout)
            self.fb_info = match.group(2).decode()
            self.serial.write("stty -echo; PS1=''; PS2=''\n")
            self.run("true", timeout=60)
        finally:
            self.qmp.cmd("set-action", reboot="shutdown")
        return time.monotonic() - t0

    def _qemu_log_tail(self):
        try:
            with open(self.qemu_log, "rb") as f:
                return f.read()[-2000:].decode(errors="replace")
        except OSError:
            return ""

    def shutdown(self, timeout=20):
        """Ask QEMU to quit, then make sure it is gone."""
        if self.proc and self.proc.poll() is None and self.qmp:
            try:
                self.qmp.cmd("quit")
            except (VMError, OSError):
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        self.kill()

    def kill(self):
        """Kill QEMU (if running) and release sockets; idempotent."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                pass
        if self.qmp:
            self.qmp.close()
            self.qmp = None
        for port in (self.serial, self.console):
            if port:
                port.close()
        self.serial = self.console = None
        if not self.keep:
            shutil.rmtree(self.sockdir, ignore_errors=True)
        elif self.sockdir != self.out_dir:
            shutil.rmtree(self.sockdir, ignore_errors=True)

    # -- serial shells --

    def console_write(self, data):
        """Type into the console shell on ttyS0 (for humans; tests use run())."""
        self.console.write(data)

    def run(self, cmd, timeout=30, check=False):
        """Run `cmd` in the guest's serial shell; return (output, exit status).

        The command runs in a subshell with stdin from /dev/null, so it cannot
        eat the end marker's line and an `exit` or `cd` in it cannot disturb
        the serial shell (state does not persist between calls: use files).
        Background jobs (`cmd &`) keep running.  On timeout a ^C is sent to
        recover the shell and CommandTimeout is raised.
        """
        self._seq += 1
        n = self._seq
        self.serial.write("printf '\\n@@B%%s@@\\n' %d\n( %s\n) </dev/null\nprintf '\\n@@E%%s@@%%s@@\\n' %d \"$?\"\n"
                          % (n, cmd, n))
        try:
            self.serial.expect(rb"@@B%d@@\r?\n" % n, timeout)
            match = self.serial.expect(rb"(?s)(.*?)\r?\n@@E%d@@(\d+)@@" % n, timeout)
        except CommandTimeout:
            self.serial.write(b"\x03")
            raise
        out = match.group(1).decode(errors="replace").replace("\r\n", "\n")
        status = int(match.group(2))
        if check and status != 0:
            raise VMError("guest command failed (%d): %s\n%s" % (status, cmd, out))
        return out, status

    def check(self, cmd, timeout=30):
        """run() that raises on a non-zero status and returns the output only."""
        return self.run(cmd, timeout, check=True)[0]

    # -- pictures --

    def screendump(self, path=None, device=None):
        """What the emulated card (or the display device of that QEMU id)
        displays now, as a screen.Image (via a PPM file)."""
        self._shot += 1
        path = path or os.path.join(self.sockdir, "shot-%d.ppm" % self._shot)
        if device:
            self.qmp.cmd("screendump", filename=path, device=device)
        else:
            self.qmp.cmd("screendump", filename=path)
        img = screen.read_ppm(path)
        if path.startswith(self.sockdir):
            os.unlink(path)
        return img

    def grab(self):
        """The visible picture: screendump, or read_fb() on the display-less vfb."""
        return self.read_fb() if self.card == "vfb" else self.screendump()

    def wait_screen(self, font, predicate, timeout=10, interval=0.3, grab=None):
        """Grab and decode the screen until predicate(screen.Screen) holds.

        Drawing is not always synchronous with the write that caused it (DRM
        fbdev emulation flushes from a worker; consoled coalesces frames), so
        tests poll, bounded.  Returns (image, decoded screen) of the last grab;
        the caller asserts on them. grab: another picture than grab()'s
        (a second display device).
        """
        deadline = time.monotonic() + timeout
        while True:
            img = grab() if grab else self.grab()
            decoded = screen.read_screen(img, font)
            if predicate(decoded) or time.monotonic() > deadline:
                return img, decoded
            time.sleep(interval)

    def save_png(self, img, name):
        """Save an image in out_dir (for debugging); returns the path."""
        return screen.save_png(img, os.path.join(self.out_dir, name))

    def fb_var(self):
        """Facts about fb0 from sysfs: xres/yres virtual, bpp, stride, pan offsets.

        sysfs has no visible resolution; xres/yres come from the first line
        of `modes` (the boot mode), so callers that change the visible mode
        pass it to read_fb() themselves.
        """
        out = self.check("cd /sys/class/graphics/fb0 && cat virtual_size bits_per_pixel stride pan"
                         " && cat modes | head -n 1")
        lines = out.split()
        vx, vy = (int(v) for v in lines[0].split(","))
        xoff, yoff = (int(v) for v in lines[3].split(","))
        mode = re.search(r"(\d+)x(\d+)", lines[4]) if len(lines) > 4 else None
        return {"xres_virtual": vx, "yres_virtual": vy, "bits_per_pixel": int(lines[1]),
                "stride": int(lines[2]), "xoffset": xoff, "yoffset": yoff,
                "xres": int(mode.group(1)) if mode else vx,
                "yres": int(mode.group(2)) if mode else vy}

    def read_fb(self, xres=None, yres=None, cmap=screen.FBCON_8BPP_CMAP):
        """The visible picture of a display-less fb0 (vfb), as a screen.Image.

        vfb's memory is vmalloc'ed in the guest kernel; /proc/vmallocinfo
        gives its address and QMP `memsave` reads guest-virtual memory, so the
        host copies the visible window (at the current pan offset) without
        going through the slow serial line.  8 bpp is pseudocolour: indices
        are mapped through `cmap`, by default what fbcon loads (console
        colours in VGA order, see screen.FBCON_8BPP_CMAP): the colour map
        itself is not readable without an ioctl.  16 bpp is RGB565, 24/32
        bpp xRGB, 1 bpp MONO01.  A window that runs past the end of the
        virtual screen (FB_VMODE_YWRAP) continues at its start, as the
        scanout of a wrapping device does.
        """
        var = self.fb_var()
        xres = xres or var["xres"]
        yres = yres or var["yres"]
        base = self._vfb_address()
        stride, bpp = var["stride"], var["bits_per_pixel"]
        first = min(yres, var["yres_virtual"] - var["yoffset"])
        raw = self._memsave(base + var["yoffset"] * stride, stride * first)
        if first < yres:
            raw += self._memsave(base, stride * (yres - first))
        return fb_to_image(raw, xres, yres, stride, bpp, var["xoffset"], cmap)

    def _memsave(self, address, size):
        """Guest-virtual memory through QMP memsave."""
        path = os.path.join(self.sockdir, "fbmem.bin")
        # QMP integers are signed 64-bit: pass kernel addresses in two's complement.
        val = address - (1 << 64) if address >= 1 << 63 else address
        self.qmp.cmd("memsave", val=val, size=size, filename=path)
        with open(path, "rb") as f:
            raw = f.read()
        os.unlink(path)
        return raw

    def _vfb_address(self):
        """Start of vfb's video memory: its biggest vmalloc area.

        kptr_restrict=1 shows raw addresses to root (0 would hash them).
        """
        out = self.check("echo 1 > /proc/sys/kernel/kptr_restrict; grep vfb_probe /proc/vmallocinfo")
        areas = re.findall(r"0x([0-9a-f]+)-0x[0-9a-f]+\s+(\d+)", out)
        if not areas:
            raise VMError("vfb memory not found in /proc/vmallocinfo: %r" % out)
        start, _ = max(areas, key=lambda a: int(a[1]))
        return int(start, 16)

    # -- pointer devices (see the module docstring) --

    TABLET_ID = "tablet"
    # query-mice names of QEMU's handlers
    MOUSE_NAMES = {"tablet": "QEMU HID Tablet", "ps2": "QEMU PS/2 Mouse"}
    ABS_RANGE = 32768  # usb-tablet's axes are 0..32767

    def plug_tablet(self, dev_id=TABLET_ID):
        self.qmp.cmd("device_add", driver="usb-tablet", id=dev_id, bus="xhci.0")

    def unplug_tablet(self, dev_id=TABLET_ID):
        self.qmp.cmd("device_del", id=dev_id)

    def select_mouse(self, device):
        """Make `device` ("tablet" or "ps2") the one buttons and the wheel go to."""
        name = self.MOUSE_NAMES[device]
        mice = self.qmp.cmd("query-mice")
        match = [m for m in mice if m["name"] == name]
        if not match:
            raise VMError("no %s among QEMU's mice: %r" % (name, mice))
        if not match[0]["current"]:
            self.qmp.cmd("human-monitor-command",
                         **{"command-line": "mouse_set %d" % match[0]["index"]})

    @classmethod
    def abs_value(cls, pixel, size):
        """The tablet axis value in the middle of pixel's share of 0..32767."""
        return (2 * pixel + 1) * cls.ABS_RANGE // (2 * size)

    def _input_events(self, events):
        self.qmp.cmd("input-send-event", events=events)

    def tablet_move(self, x, y, width, height):
        """Put the usb-tablet on pixel x,y of a width x height screen."""
        self._input_events([
            {"type": "abs", "data": {"axis": "x", "value": self.abs_value(x, width)}},
            {"type": "abs", "data": {"axis": "y", "value": self.abs_value(y, height)}}])

    def mouse_move_rel(self, dx, dy):
        """Move the PS/2 mouse by dx, dy (+y down). QEMU sends at most 127 per
        PS/2 packet and the kernel adds them up; large moves are split here
        all the same, one QMP call each, so no packet queue overflows."""
        while dx or dy:
            sx = max(-100, min(100, dx))
            sy = max(-100, min(100, dy))
            events = []
            if sx:
                events.append({"type": "rel", "data": {"axis": "x", "value": sx}})
            if sy:
                events.append({"type": "rel", "data": {"axis": "y", "value": sy}})
            self._input_events(events)
            dx -= sx
            dy -= sy
            time.sleep(0.02)

    def pointer_button(self, button, down, device="tablet"):
        """Press (down=True) or release a button: "left", "middle" or "right"."""
        self.select_mouse(device)
        self._input_events([{"type": "btn", "data": {"button": button, "down": down}}])

    def pointer_click(self, button="left", device="tablet", count=1, pause=0.05):
        """Click `count` times (count=2: a double click; the pause is short)."""
        self.select_mouse(device)
        for _ in range(count):
            for down in (True, False):
                self._input_events([{"type": "btn", "data": {"button": button,
                                                             "down": down}}])
                time.sleep(pause)

    def pointer_wheel(self, notches, device="tablet"):
        """Turn the wheel by `notches` (> 0: up, away from the user)."""
        self.select_mouse(device)
        button = "wheel-up" if notches > 0 else "wheel-down"
        for _ in range(abs(notches)):
            for down in (True, False):
                self._input_events([{"type": "btn", "data": {"button": button,
                                                             "down": down}}])
            time.sleep(0.05)

    # -- keyboard --

    def send_keys(self, qcodes, hold_ms=10):
        """Press the qcodes together (in order) and release them (in reverse)."""
        keys = [{"type": "qcode", "data": q} for q in qcodes]
        self.qmp.cmd("send-key", keys=keys, **{"hold-time": hold_ms})
        # QEMU queues delayed key events (at most 1024); pace ourselves so a
        # long text never overflows the queue.
        time.sleep(2 * len(qcodes) * hold_ms / 1000.0)

    def send_text(self, text, hold_ms=10):
        """Type `text` on the emulated PS/2 keyboard (US layout)."""
        for ch in text:
            self.send_keys(char_to_qcodes(ch), hold_ms)

    def send_combo(self, qcodes, hold_ms=50):
        """Press a key combination such as ["ctrl", "alt", "f2"]."""
        self.send_keys(list(qcodes), hold_ms)


def fb_to_image(raw, xres, yres, stride, bpp, xoffset=0, cmap=screen.FBCON_8BPP_CMAP):
    """Convert raw framebuffer rows to an RGB screen.Image (cmap: 8 bpp colour map)."""
    out = bytearray()
    pal = [bytes(c) for c in cmap] + [b"\0\0\0"] * (256 - len(cmap))
    for y in range(yres):
        row = raw[y * stride:(y + 1) * stride]
        if bpp == 8:
            out += b"".join(pal[v] for v in row[xoffset:xoffset + xres])
        elif bpp == 32:
            px = row[xoffset * 4:(xoffset + xres) * 4]
            for i in range(0, len(px), 4):
                out += bytes((px[i + 2], px[i + 1], px[i]))
        elif bpp == 16:
            for x in range(xoffset, xoffset + xres):
                v = row[2 * x] | row[2 * x + 1] << 8
                r, g, b = v >> 11, (v >> 5) & 0x3f, v & 0x1f
                out += bytes((r << 3 | r >> 2, g << 2 | g >> 4, b << 3 | b >> 2))
        elif bpp == 24:
            px = row[xoffset * 3:(xoffset + xres) * 3]
            for i in range(0, len(px), 3):
                out += bytes((px[i + 2], px[i + 1], px[i]))
        elif bpp == 1:
            for x in range(xoffset, xoffset + xres):
                bit = (row[x >> 3] >> (x & 7)) & 1  # the kernel's order on x86
                # vfb's 1 bpp visual is FB_VISUAL_MONO01: a set bit is black.
                out += b"\0\0\0" if bit else b"\xff\xff\xff"
        else:
            raise VMError("unsupported depth %d" % bpp)
    return screen.Image(xres, yres, bytes(out))
