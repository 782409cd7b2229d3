#!/usr/bin/python3
"""A Debian root file system on a virtio disk, booted with systemd as PID 1.

The per-card tests (vmtest.py) run consoled by hand from a busybox
initramfs; the systemd test needs what a user's machine has: systemd, udev,
login and PAM, journald, the unit file.  This module makes that machine.

* The tree: `debootstrap --variant=minbase` of Debian 12 with PACKAGES, from
  the archive apt on the host already uses.  It takes a minute or more, so
  it is made once and cached outside the source tree:

      ${CONSOLED_TEST_CACHE:-/var/cache/consoled-test}/rootfs/<release>-<key>/

  The key hashes what debootstrap is given (release, PACKAGES, RECIPE), so a
  change there builds a new tree; a finished tree is renamed into place with
  a `.complete` stamp, so an interrupted debootstrap never poisons the
  cache.  The per-run setup below is not part of the key: changing it costs
  nothing.
* Per run, `prepare()` copies the tree, installs the modules of the test
  kernel (only those a test names, plus their dependencies, then depmod) and
  the harness's shell service, and a test adds its own files; `make_image()`
  packs the copy into an ext4 image with `mke2fs -d` (no loop mounts, no
  privileges beyond reading the tree).
* `DebianVM` boots it: Debian's kernel, a tiny busybox initramfs
  (rootinit.sh: load virtio and ext4, mount /dev/vda, switch_root to
  systemd), the image as virtio-blk.  Everything else is vmlib.VM: QMP,
  screendump, send-key, and `run()` on ttyS1, where a service of the guest
  (not a getty: tty1 belongs to the test) serves a root shell.

Needs on the host: debootstrap, e2fsprogs (mke2fs), busybox-static, and root
(debootstrap and chroot).  Run as a script, it makes the cached tree (if
missing) and prints its path.
"""

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import initramfs as initramfs_mod  # noqa: E402
import turns  # noqa: E402
import kernel as kernel_mod  # noqa: E402
import vmlib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RELEASE = "bookworm"

# What the guest runs: systemd and udev, login with PAM and logind (dbus,
# libpam-systemd: consoled's sessions register a seat session), kmod for the
# modules, the libraries consoled links and the data it reads (fonts, xkb),
# and tools the checks use (procps, kbd, perl-base is in minbase), and the
# programs systemdtest.py's programs-* checks drive with keys, and weston
# (its weston check; debootstrap installs no Recommends).
PACKAGES = [
    "systemd-sysv", "udev", "kmod", "dbus", "libpam-systemd", "login", "passwd", "procps", "kbd",
    "libtsm4", "libxkbcommon0", "libudev1", "libsystemd0", "zlib1g", "libfreetype6",
    "libfontconfig1", "fonts-dejavu-core", "fonts-unifont", "xkb-data",
    # compose tables (/usr/share/X11/locale) for compose and dead keys
    "libx11-data",
    "vim", "less", "htop", "tmux", "mc", "nano", "dialog", "weston",
]
# Bump when the cached tree must be made differently for the same PACKAGES.
RECIPE = 1
# Installed with the guest's apt on top of the cached debootstrap tree, as a
# layer cached on its own: adding a program here costs a minute once, not a
# new debootstrap (ten minutes). The image programs of the sixel checks:
# img2sixel (libsixel-bin) and chafa.
EXTRA_PACKAGES = ["libsixel-bin", "chafa"]

# Modules the initramfs loads to mount the root file system (dependencies
# are added); crc32c_generic is ext4's soft dependency (its checksums).
ROOT_MODULES = ["virtio_pci", "virtio_blk", "crc32c_generic", "ext4"]

# Units a test guest does not need; masked so boot stays short and quiet
# (under TCG every unit costs a fraction of a second).
MASKED_UNITS = [
    "apt-daily.timer", "apt-daily-upgrade.timer", "dpkg-db-backup.timer", "e2scrub_all.timer",
    "e2scrub_reap.service", "fstrim.timer", "systemd-timesyncd.service",
    "systemd-networkd-wait-online.service", "serial-getty@ttyS0.service",
    "modprobe@configfs.service", "modprobe@dm_mod.service", "modprobe@drm.service",
    "modprobe@efi_pstore.service", "modprobe@fuse.service", "modprobe@loop.service",
    "dev-hugepages.mount", "dev-mqueue.mount", "sys-kernel-debug.mount",
    "sys-kernel-tracing.mount", "systemd-pstore.service", "systemd-journal-flush.service",
]

# ttyS1 belongs to the harness (vmlib.VM.run), as in the initramfs guest; the
# marker is the one vmlib waits for (tests ask sysfs about fb0 themselves).
# TTYPath makes ttyS1 the shell's controlling terminal, so ^C works.
SHELL_UNIT = """\
[Unit]
Description=consoled test harness: root shell on ttyS1

[Service]
ExecStart=/bin/sh -c 'echo CONSOLED-TEST-READY card=%(card)s fb0=; exec /bin/sh -l'
StandardInput=tty
StandardOutput=tty
TTYPath=/dev/ttyS1
TTYReset=yes
Environment=HOME=/root TERM=dumb
WorkingDirectory=/root
Restart=always

[Install]
WantedBy=multi-user.target
"""


def run_host(argv, timeout=600, **kw):
    """Run a host command; raise with its output when it fails."""
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)
    if proc.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s%s" % (" ".join(argv), proc.returncode,
                                                     proc.stdout[-3000:], proc.stderr[-3000:]))
    return proc.stdout


# --- the cached tree ----------------------------------------------------------

def debian_mirror(release=RELEASE):
    """The Debian archive apt uses for `release` main (from `apt-cache policy`),
    so the test reaches the same mirror whatever sources format the host has."""
    out = run_host(["apt-cache", "policy"])
    match = re.search(r"^\s*\d+\s+(\S+)\s+%s/main amd64 Packages" % re.escape(release), out, re.M)
    if not match:
        raise RuntimeError("apt has no %s/main source (apt-cache policy):\n%s" % (release, out))
    return match.group(1)


def tree_key(release=RELEASE, packages=PACKAGES):
    """What the cached tree is made from, hashed."""
    h = hashlib.sha256(("%s %d %s" % (release, RECIPE, " ".join(sorted(packages)))).encode())
    return h.hexdigest()[:16]


def finish_tree(root, dest, stamp_text):
    """Puts a made tree in place: without apt's downloads and indexes (dead
    weight in every image), stamped `.complete`, renamed to dest unless a
    racing run was first."""
    for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for name in os.listdir(os.path.join(root, junk)):
            path = os.path.join(root, junk, name)
            if os.path.isfile(path) and not os.path.islink(path):
                os.unlink(path)
    with open(os.path.join(root, ".complete"), "w") as stamp:
        stamp.write(stamp_text + "\n")
    if not os.path.exists(os.path.join(dest, ".complete")):
        # A leftover without a stamp is from an interrupted run.
        shutil.rmtree(dest, ignore_errors=True)
        os.rename(root, dest)


def cached_tree(release=RELEASE, packages=PACKAGES, log=None):
    """Path of the cached debootstrap tree, made on first use.

    The tree is made in a temporary directory and renamed into place with
    its `.complete` stamp already inside, so a reader never sees half a
    tree; when two runs race, the first rename wins and the other run's
    tree is thrown away.
    """
    cdir = os.path.join(kernel_mod.cache_root(), "rootfs")
    dest = os.path.join(cdir, "%s-%s" % (release, tree_key(release, packages)))
    if os.path.exists(os.path.join(dest, ".complete")):
        return dest
    os.makedirs(cdir, exist_ok=True)
    mirror = debian_mirror(release)
    if log:
        log("debootstrap %s from %s (once; cached in %s)" % (release, mirror, dest))
    t0 = time.monotonic()
    work = tempfile.mkdtemp(dir=cdir, prefix=".debootstrap-")
    try:
        root = os.path.join(work, "root")
        run_host(["debootstrap", "--variant=minbase", "--include=" + ",".join(packages),
                  release, root, mirror], timeout=3600)
        finish_tree(root, dest, "%s %s %.0fs" % (release, mirror, time.monotonic() - t0))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if log:
        log("debootstrap took %.0fs" % (time.monotonic() - t0))
    return dest


def cached_layer(base, packages=EXTRA_PACKAGES, log=None):
    """Path of `base` with `packages` installed by its own apt (no
    Recommends), made on first use next to it as <base>+<key>, and renamed
    into place complete, as cached_tree() does. Older trees and layers of
    the same release are removed."""
    key = hashlib.sha256(" ".join(sorted(packages)).encode()).hexdigest()[:8]
    dest = "%s+%s" % (base, key)
    cdir = os.path.dirname(base)
    if not os.path.exists(os.path.join(dest, ".complete")):
        if log:
            log("installing %s on the cached tree (once; cached in %s)" % (" ".join(packages), dest))
        t0 = time.monotonic()
        work = tempfile.mkdtemp(dir=cdir, prefix=".layer-")
        try:
            root = os.path.join(work, "root")
            run_host(["cp", "-a", "--reflink=auto", base, root])
            os.unlink(os.path.join(root, ".complete"))
            resolv = os.path.join(root, "etc/resolv.conf")
            if os.path.lexists(resolv):
                os.unlink(resolv)
            shutil.copy2("/etc/resolv.conf", resolv)
            env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
            run_host(["chroot", root, "apt-get", "update", "-q"], timeout=1800, env=env)
            run_host(["chroot", root, "apt-get", "install", "-q", "-y", "--no-install-recommends"]
                     + list(packages), timeout=1800, env=env)
            os.unlink(resolv)
            finish_tree(root, dest, "%s %.0fs" % (" ".join(packages), time.monotonic() - t0))
        finally:
            shutil.rmtree(work, ignore_errors=True)
        if log:
            log("the layer took %.0fs" % (time.monotonic() - t0))
    # Other keys for this release are older package lists: dead weight.
    release = os.path.basename(base).split("-")[0]
    for old in os.listdir(cdir):
        path = os.path.join(cdir, old)
        if old.startswith(release + "-") and path not in (base, dest):
            shutil.rmtree(path, ignore_errors=True)
    return dest


# --- one run's copy -----------------------------------------------------------

def chroot(root, *argv, stdin=None):
    """Run a command of the guest's own (depmod, systemctl, useradd) in the tree."""
    return run_host(["chroot", root] + list(argv), input=stdin)


def install_modules(root, kernel, names):
    """Copy `names` and their dependencies from the test kernel into the tree
    at their usual paths and run the guest's depmod: modprobe, udev and
    systemd-modules-load then work as on an installed system.  A subset keeps
    the image small (the whole tree is ~400 MB)."""
    index = initramfs_mod.module_index(kernel)
    moddir = os.path.join(root, "usr/lib/modules", kernel.release)
    for name in initramfs_mod.resolve_modules(names, index, {}):
        dest = os.path.join(moddir, os.path.relpath(index[name], kernel.modules_dir))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copy2(index[name], dest)
    for meta in ("modules.order", "modules.builtin", "modules.builtin.modinfo"):
        shutil.copy2(os.path.join(kernel.modules_dir, meta), os.path.join(moddir, meta))
    chroot(root, "depmod", kernel.release)


def write(root, path, text, mode=0o644):
    """Create a file in the tree (parents too)."""
    dest = os.path.join(root, path.lstrip("/"))
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with open(dest, "w") as f:
        f.write(text)
    os.chmod(dest, mode)


def prepare(workdir, kernel, modules, card="cirrus", hostname="consoled-test", log=None):
    """A fresh copy of the cached tree in workdir/root, set up for the harness.

    modules: kernel modules the guest may load (ROOT_MODULES are added).
    Returns the path of the tree; the caller adds its own files, then
    calls make_image().
    """
    if os.geteuid() != 0:
        raise RuntimeError("the Debian guest is made as root (debootstrap, chroot, file owners)")
    tree = cached_layer(cached_tree(log=log), log=log)
    root = os.path.join(workdir, "root")
    run_host(["cp", "-a", tree, root])
    os.unlink(os.path.join(root, ".complete"))
    install_modules(root, kernel, ROOT_MODULES + list(modules))
    write(root, "/etc/hostname", hostname + "\n")
    write(root, "/etc/hosts", "127.0.0.1 localhost\n127.0.1.1 %s\n" % hostname)
    # Logs in RAM: nothing to flush at boot, and the journal stays readable.
    write(root, "/etc/systemd/journald.conf.d/consoled-test.conf", "[Journal]\nStorage=volatile\n")
    write(root, "/etc/systemd/system/consoled-test-shell.service", SHELL_UNIT % {"card": card})
    chroot(root, "systemctl", "--quiet", "mask", *MASKED_UNITS)
    chroot(root, "systemctl", "--quiet", "enable", "consoled-test-shell.service")
    return root


def make_image(root, image):
    """Pack the tree into an ext4 image file with room to spare for the guest."""
    used = int(run_host(["du", "-s", "--block-size=1M", root]).split()[0])
    if os.path.exists(image):
        os.unlink(image)
    run_host(["mke2fs", "-q", "-F", "-t", "ext4", "-L", "root", "-d", root, image,
              "%dM" % (used + used // 2 + 256)])
    return image


def root_initramfs(kernel, busybox="/bin/busybox"):
    """The initramfs that mounts the image: busybox, rootinit.sh, ROOT_MODULES."""
    cpio = initramfs_mod.Cpio()
    for d in ("dev", "proc", "sys", "newroot", "bin"):
        cpio.add_dir(d)
    cpio.add_file("bin/busybox", busybox, 0o755)
    cpio.add_file("init", os.path.join(HERE, "rootinit.sh"), 0o755)
    blobs = {}
    order = initramfs_mod.resolve_modules(ROOT_MODULES, initramfs_mod.module_index(kernel), blobs)
    for name in order:
        cpio.add_data("modules/%s.ko" % name, blobs[name])
    cpio.add_data("modules/order", "".join(n + "\n" for n in order))
    return cpio.to_bytes()


# --- the VM ---------------------------------------------------------------------

class DebianVM(vmlib.VM):
    """A vmlib.VM that boots `image` (made by make_image()) with systemd as PID 1.

    The guest's ttyS1 shell (SHELL_UNIT) serves run(); ttyS0 carries the
    kernel's and systemd's console output.
    """

    def __init__(self, image, kernel, card="cirrus", **kw):
        super().__init__(card, **kw)
        self.image = image
        self.kernel = kernel

    def build_initrd(self, path):
        with open(path, "wb") as f:
            f.write(root_initramfs(self.kernel))
        return self.kernel

    def kernel_cmdline(self):
        # quiet: systemd shows only failures on the console.  firstboot=off:
        # nothing may wait for a human on the console.
        return super().kernel_cmdline() + " quiet systemd.firstboot=off"

    def qemu_command(self, kernel, initrd):
        return super().qemu_command(kernel, initrd) + [
            "-drive", "file=%s,if=virtio,format=raw,cache=unsafe" % self.image]

    def wait_booted(self, timeout=180):
        """Wait until systemd has finished starting up; return its state
        (running, or degraded when a unit failed)."""
        with turns.turn():  # a boot's: shared (turns.py)
            out, _ = self.run("systemctl is-system-running --wait", timeout=timeout)
        return out.strip()


if __name__ == "__main__":
    print(cached_layer(cached_tree(log=lambda m: print(m, flush=True)),
                       log=lambda m: print(m, flush=True)))
