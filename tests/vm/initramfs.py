#!/usr/bin/python3
"""Build the test guest's initramfs: busybox, kernel modules, fonts, xkb, consoled.

The archive is two concatenated newc cpio archives (the kernel unpacks them in
sequence):

* a *base* part that depends only on the kernel, this directory's scripts and
  the host's busybox/kbd/fonts/xkb packages.  It is cached under
  ${CONSOLED_TEST_CACHE}/initramfs keyed by a hash of all its inputs, so a
  rebuild of consoled never repacks 4 MB of xkb data;
* an *extra* part with the consoled binary, every shared object it needs
  (found with ldd, loader included) and whatever files a test adds.

Both are uncompressed: QEMU loads the file straight into guest RAM and an
uncompressed archive unpacks much faster under TCG than a gzip one.  Entries
have mtime 0 and sorted names, so equal inputs give byte-identical archives.

Modules: Debian's package ships no modules.dep (depmod runs at install time),
so dependencies are read from each module's `.modinfo` `depends=` string and
resolved here.  The modules land flat in /lib/modules/<name>.ko; the list for
each card, in load order, goes to /etc/vm/modules/<card> for /init.

Guests of another architecture (ARCHES: armhf, the "vexpress" card) get
the same archive made of that architecture's files: Debian's kernel for it,
busybox, kbd's setfont and procps's pgrep from its .debs (apt-get download,
unpacked once into the cache), and consoled's libraries from the sysroot
tests/cross/run unpacks; ELF dependencies are read with readelf instead of
ldd, which cannot run a foreign binary.
"""

import argparse
import hashlib
import lzma
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernel as kernel_mod  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CONSOLEFONTS = "/usr/share/consolefonts"

# Roots per card; dependencies are added automatically.  The DRM cirrus
# (cirrus-qemu) and radeon drivers are deliberately absent: they would grab
# the devices the fbdev drivers under test need.
CARD_MODULES = {
    "cirrus": ["cirrusfb"],
    "ati": ["aty128fb"],
    "rv100": ["radeonfb"],
    "vfb": ["vfb"],
    "bochs": ["bochs"],
    "virtio": ["virtio_pci", "virtio-gpu"],
    "qxl": ["qxl"],
    # vesafb (built in) only: the handover checks insmod the bochs list
    # (/etc/vm/modules/bochs) themselves.
    "vesa": [],
    "efi": [],
    "none": [],
    "late": [],
}
# Cards of a guest architecture other than the host's (ARCHES); the rest are
# amd64. vexpress: QEMU's vexpress-a9 board, its PL111 driven by the built-in
# amba-clcd fbdev driver (vmlib.py), its PL050 keyboard and mouse ports by
# ambakmi (the keyboard's atkbd is built in).
CARD_ARCH = {"vexpress": "armhf"}
CARD_MODULES["vexpress"] = ["ambakmi"]

# What another architecture's guest is made of: the Debian kernel
# (metapackage), the packages of busybox, setfont and pgrep with their
# libraries, and the multiarch triplet of its library directories. The
# libraries consoled links come from tests/cross/run's sysroot.
ARCHES = {
    "armhf": {"kernel": "linux-image-armmp:armhf", "triplet": "arm-linux-gnueabihf",
              "qemu_user": "qemu-arm-static",
              "packages": ["busybox-static", "kbd", "procps", "libproc2-0"],
              # no USB host on the board: evdev, uinput and the PS/2 mouse
              "common_modules": ["evdev", "uinput", "psmouse"]},
}


def cross_sysroot(arch):
    """tests/cross/run's unpacked libraries for `arch`."""
    return os.path.join(os.environ.get("CONSOLED_CROSS_CACHE", "/var/cache/consoled-cross"), arch)


def arch_packages(arch):
    """Directory with ARCHES[arch]'s packages unpacked (apt-get download on
    first use, cached under the test cache keyed by the package list)."""
    spec = ARCHES[arch]
    key = hashlib.sha256(" ".join(spec["packages"]).encode()).hexdigest()[:12]
    root = os.path.join(kernel_mod.cache_root(), "guest-%s-%s" % (arch, key))
    if os.path.exists(os.path.join(root, ".complete")):
        return root
    os.makedirs(os.path.dirname(root), exist_ok=True)
    with tempfile.TemporaryDirectory(dir=os.path.dirname(root), prefix=".download-") as tmp:
        os.chmod(tmp, 0o755)  # apt-get download drops privileges to _apt
        kernel_mod._run(["apt-get", "download", "-qq"]
                        + ["%s:%s" % (p, arch) for p in spec["packages"]], cwd=tmp)
        unpack = os.path.join(tmp, "root")
        for deb in sorted(f for f in os.listdir(tmp) if f.endswith(".deb")):
            kernel_mod._run(["dpkg-deb", "-x", os.path.join(tmp, deb), unpack])
        if os.path.exists(root):
            shutil.rmtree(root)
        os.rename(unpack, root)
    with open(os.path.join(root, ".complete"), "w") as stamp:
        stamp.write(" ".join(spec["packages"]) + "\n")
    return root


def arch_kernel(arch):
    """The Debian kernel a guest of `arch` boots (None: the host's, amd64)."""
    if arch is None:
        return kernel_mod.fetch_kernel()
    return kernel_mod.fetch_kernel(ARCHES[arch]["kernel"])


# Modules in the initramfs that /init does not load: a test loads them
# (/etc/vm/modules/<card>.later, in load order). "late": the framebuffer
# driver comes while consoled waits for one (--fb-wait).
LATER_MODULES = {
    "late": ["cirrusfb"],
    # drm-no-blitter: the DRM driver of the same card, once cirrusfb is gone
    "late-drm": ["cirrus"],
    # the pstore check (pstoretest.py): ramoops in memory the kernel leaves
    # alone (vmlib.CARD_APPEND's memmap=)
    "pstore": ["ramoops"],
}
# evdev for consoled's keyboards; xhci + usbhid so tests can plug a USB
# keyboard in and out (QMP device_add usb-kbd) to check the hotplug monitor
# (and a usb-tablet, the absolute pointer); uinput for uinput-kbd, the
# scripted keyboard; psmouse for the PS/2 mouse on i8042's aux port (the
# relative pointer).
COMMON_MODULES = ["evdev", "xhci_pci", "usbhid", "hid_generic", "uinput", "psmouse"]

# Fonts the tests use: 8x16 with 256 and 512 glyphs, and fonts that are not
# 8 pixels wide (6, 10 and 16 px) to catch packing bugs.
DEFAULT_FONTS = [
    "Lat15-Fixed16.psf.gz",
    "Uni2-Fixed16.psf.gz",
    "Lat2-Terminus12x6.psf.gz",
    "Lat15-Terminus20x10.psf.gz",
    "Uni2-Terminus32x16.psf.gz",
    "Lat15-Terminus22x11.psf.gz",  # rotatetest.py: margins in every rotation
]

# TrueType/OpenType fonts for the FreeType checks (fonttest.py), at
# /fonts/ttf/<name>. Not under /usr/share/fonts: that is the directory
# fontconfig scans when it has no configuration (the guest has no
# /etc/fonts), so only a process started with FONTCONFIG_FILE=FONTS_CONF
# sees them, and everywhere else consoled's default stays the built-in font.
TTF_FONTS = {
    "DejaVuSansMono.ttf": "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",  # fonts-dejavu-core
    "unifont.otf": "/usr/share/fonts/opentype/unifont/unifont.otf",  # fonts-unifont
}
TTF_DIR = "/fonts/ttf"
FONTS_CONF = "/etc/vm/fonts-test.conf"
FONTS_CONF_TEXT = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
  <dir>%s</dir>
  <cachedir>/tmp/fontconfig</cachedir>
</fontconfig>
""" % TTF_DIR

ETC_FILES = {
    "etc/passwd": "root::0:0:root:/root:/bin/sh\n",
    "etc/shadow": "root::19000:0:99999:7:::\n",
    "etc/group": "root:x:0:\ntty:x:5:\ninput:x:101:\nvideo:x:44:\n",
    "etc/shells": "/bin/sh\n",
    "etc/hostname": "consoled-test\n",
    "etc/profile": ("export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=${TERM:-linux}\n"
                    "export PS1='guest# '\n"),
    "etc/securetty": "".join("tty%d\n" % i for i in range(1, 13)) + "ttyS0\nconsole\n",
    "etc/nsswitch.conf": "passwd: files\ngroup: files\nshadow: files\n",
}


class Cpio:
    """A minimal newc ("070701") cpio writer.

    Parent directories are created implicitly, entries are emitted sorted by
    path so output is reproducible, and the same path added twice keeps the
    last definition (the extra archive may override base files).
    """

    def __init__(self):
        self.entries = {}

    def add_dir(self, path, mode=0o755):
        path = path.strip("/")
        while path and path not in self.entries:
            self.entries[path] = (stat.S_IFDIR | mode, b"")
            path = os.path.dirname(path)

    def _parent(self, path):
        parent = os.path.dirname(path)
        if parent:
            self.add_dir(parent)

    def add_data(self, path, data, mode=0o644):
        path = path.strip("/")
        self._parent(path)
        if isinstance(data, str):
            data = data.encode()
        self.entries[path] = (stat.S_IFREG | mode, data)

    def add_file(self, path, host_path, mode=None):
        """Copy a host file (symlinks followed), keeping its permission bits."""
        st = os.stat(host_path)
        with open(host_path, "rb") as f:
            data = f.read()
        self.add_data(path, data, stat.S_IMODE(st.st_mode) if mode is None else mode)

    def add_symlink(self, path, target):
        path = path.strip("/")
        self._parent(path)
        self.entries[path] = (stat.S_IFLNK | 0o777, target.encode())

    def add_tree(self, path, host_dir):
        """Copy a directory tree, keeping symlinks as symlinks."""
        self.add_dir(path)
        for dirpath, dirnames, filenames in os.walk(host_dir):
            rel = os.path.relpath(dirpath, host_dir)
            base = path if rel == "." else os.path.join(path, rel)
            for name in sorted(dirnames + filenames):
                host = os.path.join(dirpath, name)
                guest = os.path.join(base, name)
                if os.path.islink(host):
                    self.add_symlink(guest, os.readlink(host))
                elif os.path.isdir(host):
                    self.add_dir(guest)
                else:
                    self.add_file(guest, host)

    def to_bytes(self):
        out = bytearray()
        for ino, path in enumerate(sorted(self.entries), start=1):
            mode, data = self.entries[path]
            out += self._header(ino, mode, 2 if stat.S_ISDIR(mode) else 1, len(data), path)
            out += data
            out += b"\0" * (-len(out) % 4)
        out += self._header(0, 0, 1, 0, "TRAILER!!!")
        return bytes(out)

    @staticmethod
    def _header(ino, mode, nlink, size, name):
        name_b = name.encode() + b"\0"
        fields = (ino, mode, 0, 0, nlink, 0, size, 0, 0, 0, 0, len(name_b), 0)
        hdr = b"070701" + b"".join(b"%08x" % v for v in fields) + name_b
        return hdr + b"\0" * (-len(hdr) % 4)


# --- kernel modules ---------------------------------------------------------

def _modname(name):
    return name.replace("-", "_")


def module_index(kernel):
    """Map module name -> path of the .ko (possibly compressed) in the tree."""
    index = {}
    with open(os.path.join(kernel.modules_dir, "modules.order")) as f:
        for line in f:
            rel = line.strip()
            if not rel:
                continue
            for suffix in ("", ".xz", ".zst", ".gz"):
                path = os.path.join(kernel.modules_dir, rel + suffix)
                if os.path.exists(path):
                    name = re.sub(r"\.ko(\.\w+)?$", "", os.path.basename(rel))
                    index[_modname(name)] = path
                    break
    return index


def read_module(path):
    """The uncompressed bytes of a module: busybox insmod cannot unpack .ko.xz."""
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".xz"):
        return lzma.decompress(data)
    if path.endswith(".gz"):
        import gzip
        return gzip.decompress(data)
    if path.endswith(".zst"):
        return subprocess.run(["zstd", "-dc", path], check=True, capture_output=True).stdout
    return data


def module_depends(data):
    """Names from the module's .modinfo `depends=` string."""
    match = re.search(rb"\0depends=([^\0]*)\0", data)
    if not match or not match.group(1):
        return []
    return [_modname(n) for n in match.group(1).decode().split(",") if n]


def resolve_modules(roots, index, cache):
    """Return roots and their dependencies, dependencies first (load order)."""
    order = []

    def visit(name, stack):
        if name in order:
            return
        if name in stack:
            raise RuntimeError("module dependency loop: %s" % " -> ".join(stack + [name]))
        if name not in index:
            raise RuntimeError("module %s not in this kernel" % name)
        if name not in cache:
            cache[name] = read_module(index[name])
        for dep in module_depends(cache[name]):
            visit(dep, stack + [name])
        order.append(name)

    for root in roots:
        visit(_modname(root), [])
    return order


# --- ELF binaries and their libraries ---------------------------------------

def ldd_paths(binary):
    """Absolute paths of every shared object `binary` loads, dynamic loader included."""
    proc = subprocess.run(["ldd", binary], capture_output=True, text=True, timeout=60)
    out = proc.stdout
    if proc.returncode != 0:
        if "not a dynamic executable" in proc.stdout + proc.stderr:
            return []
        raise RuntimeError("ldd %s failed: %s" % (binary, proc.stderr.strip()))
    if "not found" in out:
        raise RuntimeError("ldd %s: missing libraries:\n%s" % (binary, out))
    paths = []
    for line in out.splitlines():
        match = re.search(r"=>\s*(/\S+)", line) or re.match(r"\s*(/\S+)", line)
        if match:
            paths.append(match.group(1))
    return paths


def readelf_deps(binary):
    """(NEEDED sonames, program interpreter or None) of an ELF file of any
    architecture."""
    out = subprocess.run(["readelf", "-d", "-l", "-W", binary], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)
    interp = re.search(r"Requesting program interpreter: ([^\]]+)\]", out)
    return needed, interp.group(1) if interp else None


def foreign_paths(binary, arch):
    """What ldd_paths() gives, for a binary of another architecture: its
    libraries (recursively) and loader, found in ARCHES[arch]'s packages
    and the cross sysroot, as (guest path, host path) pairs."""
    triplet = ARCHES[arch]["triplet"]
    roots = [arch_packages(arch), cross_sysroot(arch)]
    dirs = [os.path.join(r, d, triplet) for r in roots for d in ("lib", "usr/lib")]
    found = {}
    todo = [binary]
    while todo:
        needed, interp = readelf_deps(todo.pop())
        if interp and interp not in found:
            host = next((os.path.join(r, interp.lstrip("/")) for r in roots
                         if os.path.exists(os.path.join(r, interp.lstrip("/")))), None)
            if not host:
                raise RuntimeError("%s: no loader %s for %s" % (binary, interp, arch))
            found[interp] = host
        for name in needed:
            guest = "/usr/lib/%s/%s" % (triplet, name)
            if guest in found:
                continue
            host = next((os.path.join(d, name) for d in dirs
                         if os.path.exists(os.path.join(d, name))), None)
            if not host:
                raise RuntimeError("%s: library %s not found in %s" % (binary, name, dirs))
            found[guest] = host
            todo.append(host)
    return sorted(found.items())


def _usr_path(path):
    """Where a path lands in the guest's merged /usr (/lib -> usr/lib etc.)."""
    for top in ("/lib/", "/lib64/", "/lib32/"):
        if path.startswith(top):
            return "/usr" + path
    return path


def add_elf(cpio, guest_path, host_path, arch=None):
    """Add a binary plus its shared libraries at their host paths (for a
    binary of ARCHES[arch], at its Debian multiarch paths)."""
    cpio.add_file(guest_path, host_path)
    if arch:
        for guest, host in foreign_paths(host_path, arch):
            cpio.add_file(_usr_path(guest), host)
        return
    for lib in ldd_paths(host_path):
        real = os.path.realpath(lib)
        cpio.add_file(_usr_path(real), real)
        if _usr_path(lib) != _usr_path(real):
            cpio.add_symlink(_usr_path(lib), _usr_path(real))


# --- the base archive -------------------------------------------------------

def _busybox_applets(busybox, arch=None):
    runner = [ARCHES[arch]["qemu_user"]] if arch else []
    out = subprocess.run(runner + [busybox, "--list-full"], capture_output=True, text=True,
                         check=True).stdout
    return sorted(line.strip() for line in out.splitlines() if line.strip())


def build_base(kernel, fonts=DEFAULT_FONTS, busybox="/bin/busybox", arch=None):
    """Return the base cpio bytes (busybox, /init, modules, setfont, fonts, xkb);
    arch: one of ARCHES (the host's programs otherwise)."""
    tools = {"busybox": busybox, "setfont": "/usr/bin/setfont", "pgrep": "/usr/bin/pgrep"}
    if arch:
        pkgs = arch_packages(arch)
        tools = {"busybox": os.path.join(pkgs, "bin/busybox"),
                 "setfont": os.path.join(pkgs, "bin/setfont"),
                 "pgrep": os.path.join(pkgs, "usr/bin/pgrep")}
    cpio = Cpio()
    for d in ("proc", "sys", "dev", "tmp", "run", "root", "usr/bin", "usr/sbin",
              "usr/lib/x86_64-linux-gnu", "usr/lib64", "bin", "sbin", "etc/vm/rc.d", "mnt"):
        cpio.add_dir(d)
    cpio.add_symlink("lib", "usr/lib")
    cpio.add_symlink("lib64", "usr/lib64")
    cpio.add_file("bin/busybox", tools["busybox"], 0o755)
    for applet in _busybox_applets(tools["busybox"], arch):
        if applet != "bin/busybox":
            cpio.add_symlink(applet, "/bin/busybox")
    cpio.add_file("init", os.path.join(HERE, "init.sh"), 0o755)
    for path, text in ETC_FILES.items():
        cpio.add_data(path, text, 0o600 if path == "etc/shadow" else 0o644)

    index = module_index(kernel)
    blobs = {}
    common = ARCHES[arch]["common_modules"] if arch else COMMON_MODULES
    lists = {"common": resolve_modules(common, index, blobs)}
    for card, roots in CARD_MODULES.items():
        if CARD_ARCH.get(card) == arch:
            lists[card] = resolve_modules(roots, index, blobs)
    for card, roots in LATER_MODULES.items():
        if not arch:
            lists[card + ".later"] = resolve_modules(roots, index, blobs)
    for name, data in blobs.items():
        cpio.add_data("usr/lib/modules/%s.ko" % name, data)
    for card, names in lists.items():
        cpio.add_data("etc/vm/modules/" + card, "".join(n + "\n" for n in names))

    add_elf(cpio, "usr/bin/setfont", tools["setfont"], arch)
    # busybox-static has no pkill/pgrep; tests use them to stop consoled.
    if os.path.exists(tools["pgrep"]):
        add_elf(cpio, "usr/bin/pgrep", tools["pgrep"], arch)
        cpio.add_symlink("usr/bin/pkill", "pgrep")
    for font in fonts:
        cpio.add_file("fonts/" + os.path.basename(font),
                      font if os.path.isabs(font) else os.path.join(CONSOLEFONTS, font), 0o644)
    for name, host in TTF_FONTS.items():
        cpio.add_file(TTF_DIR + "/" + name, host, 0o644)
    cpio.add_data(FONTS_CONF, FONTS_CONF_TEXT)
    cpio.add_tree("usr/share/X11/xkb", "/usr/share/X11/xkb")
    return cpio.to_bytes()


def _base_key(kernel, fonts, busybox, arch=None):
    """Hash of everything the base archive is made from."""
    h = hashlib.sha256()
    h.update(kernel.root.encode())
    if arch:
        h.update(arch_packages(arch).encode())
        busybox = os.path.join(cross_sysroot(arch), ".packages")  # the sysroot's package list
    for path in (__file__, os.path.join(HERE, "init.sh"), busybox, "/usr/bin/setfont"):
        with open(path, "rb") as f:
            h.update(hashlib.sha256(f.read()).digest())
    for font in fonts:
        h.update(font.encode())
    for host in TTF_FONTS.values():
        st = os.stat(host)
        h.update(("%s %d %d" % (host, st.st_size, st.st_mtime_ns)).encode())
    st = os.stat("/usr/share/X11/xkb/symbols")
    h.update(str(st.st_mtime_ns).encode())
    return h.hexdigest()[:16]


def base_archive(kernel, fonts=DEFAULT_FONTS, busybox="/bin/busybox", arch=None):
    """Path of the cached base cpio, building it when its inputs changed."""
    cdir = os.path.join(kernel_mod.cache_root(), "initramfs")
    os.makedirs(cdir, exist_ok=True)
    path = os.path.join(cdir, "base-%s-%s.cpio" % (kernel.release,
                                                   _base_key(kernel, fonts, busybox, arch)))
    if not os.path.exists(path):
        tmp = path + ".tmp%d" % os.getpid()
        with open(tmp, "wb") as f:
            f.write(build_base(kernel, fonts, busybox, arch))
        os.rename(tmp, path)
        # Inputs changed: older bases for this kernel are dead weight.
        prefix = "base-%s-" % kernel.release
        for old in os.listdir(cdir):
            if old.startswith(prefix) and old.endswith(".cpio") and old != os.path.basename(path):
                os.unlink(os.path.join(cdir, old))
    return path


def build(output, consoled=None, extra_files=None, extra_elves=None, kernel=None,
          fonts=DEFAULT_FONTS, arch=None):
    """Write the complete initramfs to `output` and return the Kernel it is for.

    consoled:    host path of the consoled binary (installed as /usr/bin/consoled) or None.
    extra_files: {guest_path: host_path | bytes | str}; str/bytes are file contents,
                 guest paths ending in .sh or under /etc/vm/rc.d are made executable.
    extra_elves: {guest_path: host_path} binaries/plugins whose libraries are added too.
    arch:        one of ARCHES for a guest of that architecture (consoled and the
                 extra binaries built for it), None for the host's.
    """
    kernel = kernel or arch_kernel(arch)
    extra = Cpio()
    if consoled:
        add_elf(extra, "usr/bin/consoled", consoled, arch)
    for guest, host in (extra_elves or {}).items():
        add_elf(extra, guest, host, arch)
    for guest, src in (extra_files or {}).items():
        executable = guest.endswith(".sh") or "/etc/vm/rc.d/" in "/" + guest.strip("/")
        if isinstance(src, (bytes, str)) and not (isinstance(src, str) and os.path.isabs(src)
                                                  and os.path.exists(src)):
            extra.add_data(guest, src, 0o755 if executable else 0o644)
        else:
            extra.add_file(guest, src, 0o755 if executable else None)
    with open(base_archive(kernel, fonts, arch=arch), "rb") as f:
        base = f.read()
    tmp = output + ".tmp"
    with open(tmp, "wb") as f:
        f.write(base)
        f.write(extra.to_bytes())
    os.rename(tmp, output)
    return kernel


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("output")
    parser.add_argument("--consoled", help="consoled binary to include")
    parser.add_argument("--file", action="append", default=[], metavar="GUEST=HOST",
                        help="extra file to include")
    args = parser.parse_args()
    files = dict(item.split("=", 1) for item in args.file)
    k = build(args.output, consoled=args.consoled, extra_files=files)
    print(args.output, k.vmlinuz)


if __name__ == "__main__":
    main()
