#!/usr/bin/python3
"""Fetch and cache the Debian kernel the VM tests boot.

The tests must exercise the same kernel drivers users run (cirrusfb, aty128fb,
radeonfb, vfb, bochs), so we boot Debian's own kernel image rather than a
custom build.  The package is resolved through the `linux-image-amd64`
metapackage, downloaded once with `apt-get download` and unpacked with
`dpkg-deb -x` into a cache directory outside the source tree:

    ${CONSOLED_TEST_CACHE:-/var/cache/consoled-test}/kernel/<package>_<version>/

The directory is keyed by package name and version, so a kernel update in the
archive gives a new directory and an old tree is never half-reused.  An
unpacked tree is only considered valid once the `.complete` stamp exists,
which we write last; an interrupted download therefore cannot poison the
cache.

Run as a script it prints the kernel release and the cache directory.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

METAPACKAGE = "linux-image-amd64"
# The ARM guest (card vexpress) boots linux-image-armmp:armhf the same way
# (initramfs.ARCHES); its files land beside, keyed by package and version.


def cache_root():
    """Root of every cached artefact; overridable so CI can point it at a cache volume."""
    return os.environ.get("CONSOLED_TEST_CACHE", "/var/cache/consoled-test")


def _run(argv, cwd=None):
    """Run a host command and return its stdout, failing loudly with its stderr."""
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(argv), proc.returncode,
                                                  proc.stderr.strip()))
    return proc.stdout


def resolve_package(metapackage=METAPACKAGE):
    """Return (package, version) of the image the metapackage depends on.

    `apt-cache depends` names the versioned image package; its candidate
    version is what `apt-get download` will fetch.
    """
    out = _run(["apt-cache", "depends", metapackage])
    match = re.search(r"Depends:\s*(linux-image-\S+)", out)
    if not match:
        raise RuntimeError("cannot find the image package in: " + out)
    package = match.group(1)
    policy = _run(["apt-cache", "policy", package])
    vmatch = re.search(r"Candidate:\s*(\S+)", policy)
    if not vmatch or vmatch.group(1) == "(none)":
        raise RuntimeError("no candidate version for %s (run apt-get update?)" % package)
    return package, vmatch.group(1)


class Kernel:
    """An unpacked kernel package: vmlinuz path, release and modules directory."""

    def __init__(self, root):
        self.root = root
        boot = os.path.join(root, "boot")
        images = sorted(f for f in os.listdir(boot) if f.startswith("vmlinuz-"))
        if not images:
            raise RuntimeError("no vmlinuz in " + boot)
        self.release = images[-1][len("vmlinuz-"):]
        self.vmlinuz = os.path.join(boot, images[-1])
        self.config = os.path.join(boot, "config-" + self.release)
        self.modules_dir = os.path.join(root, "lib", "modules", self.release)

    def __repr__(self):
        return "Kernel(%r, release=%r)" % (self.root, self.release)


def fetch_kernel(metapackage=METAPACKAGE):
    """Return a Kernel, downloading and unpacking it on first use.

    Without network access a previously cached kernel is still used, so the
    test suite keeps working offline once the cache is warm.
    """
    kdir = os.path.join(cache_root(), "kernel")
    try:
        package, version = resolve_package(metapackage)
    except RuntimeError:
        cached = _newest_cached(kdir, metapackage)
        if cached:
            return Kernel(cached)
        raise
    dest = os.path.join(kdir, "%s_%s" % (package, version.replace(":", "%3a")))
    if os.path.exists(os.path.join(dest, ".complete")):
        return Kernel(dest)
    os.makedirs(kdir, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=kdir, prefix=".download-") as tmp:
        # `apt-get download` drops privileges to _apt; a root-only temp dir
        # makes it warn and fall back to root, which is harmless.
        os.chmod(tmp, 0o755)
        _run(["apt-get", "download", "%s=%s" % (package, version)], cwd=tmp)
        debs = [f for f in os.listdir(tmp) if f.endswith(".deb")]
        if len(debs) != 1:
            raise RuntimeError("apt-get download produced %r" % debs)
        unpack = os.path.join(tmp, "root")
        _run(["dpkg-deb", "-x", os.path.join(tmp, debs[0]), unpack])
        if os.path.exists(dest):
            shutil.rmtree(dest)
        os.rename(unpack, dest)
    with open(os.path.join(dest, ".complete"), "w") as stamp:
        stamp.write("%s %s\n" % (package, version))
    return Kernel(dest)


def _newest_cached(kdir, metapackage=METAPACKAGE):
    """The most recently completed kernel of the metapackage's flavour (and
    architecture) in the cache, or None: linux-image-amd64 has the
    directories linux-image-*-amd64_*, linux-image-armmp:armhf the
    linux-image-*-armmp:armhf_* ones."""
    if not os.path.isdir(kdir):
        return None
    tail = "-" + metapackage[len("linux-image-"):] + "_"
    done = [os.path.join(kdir, d) for d in os.listdir(kdir)
            if tail in d and os.path.exists(os.path.join(kdir, d, ".complete"))]
    return max(done, key=os.path.getmtime) if done else None


if __name__ == "__main__":
    k = fetch_kernel()
    print(k.release, k.root)
    sys.exit(0)
