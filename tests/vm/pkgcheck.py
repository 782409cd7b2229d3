"""The Debian package, a check of systemdtest.py's guest, run in its boot
before weston.  It runs the commands of README.md's "Install on Debian"
verbatim: they are read from README.md between the marker comments
`<!-- pkgcheck: NAME -->` and `<!-- /pkgcheck -->` (the indented lines), so
that a change to the README that breaks them fails here.

  package      On the host: README's `dpkg-buildpackage` line (block
               "build") in a copy of the source tree (its unit suite runs in
               dh_auto_test; the block's apt-get lines, which install the
               build dependencies, are tests/deps.sh's job on the host and
               the guest has no network), lintian on
               the result (no error, no warning), and the upgrade's package:
               the consoled .deb unpacked and packed again by dpkg-deb with
               the version 0.1.0+systemdtest1 (the same files; what an
               upgrade does to the running consoled and its session does not
               depend on them being rebuilt, and each upgrade replaces every
               file anyway).  In the guest: the project as installed by
               `meson install` is taken away (files, units) and getty@tty1 is
               back, as on a fresh Debian; README's `apt-get install ../...deb`
               line (block "build", run in a directory below the .deb) leaves
               getty on tty1 (nothing enabled or started) and the default
               configuration is a conffile; block "try" shows consoled's
               login prompt on tty8 with getty on tty1 untouched; block
               "replace" puts consoled@tty1 (the package's /usr/bin/consoled)
               in getty's place and links autovt@.service to it; block
               "getty" puts getty back (consoled@tty1 stopped and disabled,
               getty@tty1 running and enabled, the link gone); "replace"
               again, and the test user logs in; `dpkg -i` of the higher version
               restarts consoled (a new process of the new files) while the
               session lives on: the same shell, the screen pixel for pixel,
               keys reach it; block "remove" (`apt-get purge consoled`) with
               the user still logged in leaves getty@tty1 running and enabled, the kernel's console
               showing getty's prompt in text mode, no consoled process, no
               file that `dpkg -L` listed, no enabled link.  Then the meson
               install is put back for the next check.
"""

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import docscheck  # noqa: E402  (README.md's install blocks, shared with the unit suite)

CHECKS = ["package"]

# The upgrade's version: the built one with this suffix (dpkg --compare-versions
# puts it above).
UPGRADE_SUFFIX = "+systemdtest1"
GUEST_DEB_DIR = "/root/deb"
# The upgrade's package, apart so that README's install line sees one .deb.
GUEST_UPGRADE_DIR = "/root/deb-upgrade"
# README's install line runs here (`apt-get install ../consoled_...deb`).
GUEST_SRC_DIR = GUEST_DEB_DIR + "/consoled"
README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")
# The project's files as `meson install` put them in the guest (setup_guest).
MESON_LIST = "/root/meson-installed.txt"
MESON_TAR = "/root/meson-install.tar"

# Set by build(): {"old": host path, "new": host path, "lintian": text} or
# {"error": text}.
BUILT = {}


def readme_commands(name, path=README):
    """The commands of README block `name`; RuntimeError when it is missing or
    empty (the README lost its markers)."""
    cmds = docscheck.readme_blocks(path).get(name)
    if not cmds:
        raise RuntimeError("README.md has no block <!-- pkgcheck: %s --> with commands" % name)
    return cmds


def readme_run(r, name, select=lambda c: True, cwd=None, timeout=120):
    """Run README block `name`'s commands (those select() takes) verbatim in
    the guest, in order, with "y" on stdin (apt-get's question); fail at the
    first that exits non-zero."""
    try:
        cmds = readme_commands(name)
    except (RuntimeError, OSError) as e:
        r.fail(str(e))
    for cmd in cmds:
        if not select(cmd):
            continue
        # apt-get asks before it removes a package: the answer an admin
        # gives, once, on stdin.
        out, status = r.vm.run(("cd %s && " % cwd if cwd else "") + "printf 'y\\n' | " + cmd
                               + " 2>&1", timeout=timeout)
        out = re.sub(r"\(Reading database \.\.\. [^\n]*?files and directories currently"
                     r" installed\.\)\n?", "", out)
        log("README %s: %s (%d):\n%s" % (name, cmd, status, out))
        if status != 0:
            r.fail("README's %r command `%s` failed (%d):\n%s" % (name, cmd, status, out[-3000:]))


def is_deb_install(cmd):
    return cmd.startswith("apt-get install ../")


def log(msg):
    print("".join("# %s\n" % line for line in msg.rstrip("\n").split("\n")), end="", flush=True)


def run_host(argv, timeout=1800, **kw):
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)
    if proc.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s%s" % (" ".join(argv), proc.returncode,
                                                     proc.stdout[-4000:], proc.stderr[-4000:]))
    return proc.stdout + proc.stderr


def source_files(src):
    """The source tree's files: git's list (tracked and untracked but not
    ignored), else every file but build trees."""
    try:
        out = subprocess.run(["git", "-C", src, "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard"], capture_output=True, check=True).stdout
        return [f for f in out.decode().split("\0") if f and os.path.lexists(os.path.join(src, f))]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, names in os.walk(src):
            dirs[:] = [x for x in dirs if not (x.startswith("build") or x.startswith(".")
                                               or x.startswith("obj-"))]
            files += [os.path.relpath(os.path.join(d, n), src) for n in names]
        return files


def build(src, out_dir):
    """Build the packages from a copy of `src` under out_dir/deb, run lintian,
    make the upgrade's package; fills BUILT."""
    BUILT.clear()
    t0 = time.monotonic()
    deb_dir = os.path.join(out_dir, "deb")
    try:
        shutil.rmtree(deb_dir, ignore_errors=True)
        tree = os.path.join(deb_dir, "consoled")
        for f in source_files(src):
            dest = os.path.join(tree, f)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copy2(os.path.join(src, f), dest, follow_symlinks=False)
        build_cmd = [c for c in readme_commands("build") if c.startswith("dpkg-buildpackage")]
        if len(build_cmd) != 1:
            raise RuntimeError("README.md's build block has %d dpkg-buildpackage lines, not 1"
                               % len(build_cmd))
        with open(os.path.join(deb_dir, "build.log"), "w") as f:
            proc = subprocess.run(build_cmd[0], shell=True, cwd=tree,
                                  stdout=f, stderr=subprocess.STDOUT, timeout=1800)
        if proc.returncode != 0:
            with open(os.path.join(deb_dir, "build.log")) as f:
                text = f.read()
            # CI shows the check's first line and the test's stderr: the
            # cause in the line, the log's end on stderr.
            sys.stderr.write("dpkg-buildpackage's log, its end:\n%s\n" % text[-6000:])
            raise RuntimeError("dpkg-buildpackage failed (%d): %s"
                               % (proc.returncode, build_failure(tree, text)))
        log("%s took %.0fs" % (build_cmd[0], time.monotonic() - t0))
        finish(deb_dir)
    except (RuntimeError, OSError, subprocess.SubprocessError) as e:
        BUILT["error"] = str(e)
        log("the package was not built: %s" % str(e)[:6000])


def build_failure(tree, text):
    """One line on why a package build failed: the unit tests that failed in
    dh_auto_test with the start of their output (meson's testlog.json), else
    the log's error lines."""
    failed = []
    for obj in glob.glob(os.path.join(tree, "obj-*", "meson-logs", "testlog.json")):
        try:
            with open(obj) as f:
                for line in f:
                    r = json.loads(line)
                    if r.get("result") not in ("OK", "SKIP", "EXPECTEDFAIL"):
                        out = " | ".join(l for l in (r.get("stdout") or "").splitlines()
                                         if l.strip())
                        failed.append("%s %s: %s" % (r.get("name"), r.get("result"),
                                                      out[:400]))
        except (OSError, ValueError):
            pass
    if failed:
        return "unit tests failed: " + "; ".join(failed)
    errors = [l.strip() for l in text.splitlines() if re.search(r"error|failed|FAILED", l)]
    return " | ".join(errors[:6])[:800] or "(no error line in its log)"


def use_prebuilt(deb_dir):
    """BUILT from packages built earlier (systemdtest.py --deb DIR, for runs by
    hand)."""
    BUILT.clear()
    finish(deb_dir)


def finish(deb_dir):
    """lintian on the .changes in deb_dir, and the upgrade's package made from
    the consoled .deb there; fills BUILT."""
    # lintian (15 to 50 s) runs while the guest is made and boots; the check
    # reads its output (lintian_output()).
    changes = [n for n in os.listdir(deb_dir) if n.endswith(".changes")]
    BUILT["lintian_file"] = os.path.join(deb_dir, "lintian.txt")
    BUILT["lintian_proc"] = subprocess.Popen(
        ["lintian", "--pedantic", "-I"] + changes, cwd=deb_dir,
        stdout=open(BUILT["lintian_file"], "w"), stderr=subprocess.STDOUT)
    debs = [n for n in os.listdir(deb_dir) if re.match(r"consoled_[^+]*\.deb$", n)]
    if len(debs) != 1:
        raise RuntimeError("expected one consoled_*.deb in %s, found %r" % (deb_dir, debs))
    old = os.path.join(deb_dir, debs[0])
    version = debs[0].split("_")[1]
    unpacked = os.path.join(deb_dir, "upgrade")
    shutil.rmtree(unpacked, ignore_errors=True)
    run_host(["dpkg-deb", "-R", old, unpacked])
    control = os.path.join(unpacked, "DEBIAN", "control")
    with open(control) as f:
        text = f.read()
    if "\nVersion: %s\n" % version not in text:
        raise RuntimeError("%s is not version %s" % (old, version))
    with open(control, "w") as f:
        f.write(text.replace("\nVersion: %s\n" % version,
                             "\nVersion: %s%s\n" % (version, UPGRADE_SUFFIX)))
    new = os.path.join(deb_dir, debs[0].replace("_%s_" % version,
                                                "_%s%s_" % (version, UPGRADE_SUFFIX)))
    run_host(["dpkg-deb", "--root-owner-group", "-b", unpacked, new])
    shutil.rmtree(unpacked)
    BUILT.update(old=old, new=new, version=version)


def setup_guest(root, build_dir):
    """Into the guest's tree: the two packages, and the list of the files
    `meson install` put there (the package check takes them away and puts
    them back)."""
    if "old" in BUILT:
        for key, where in (("old", GUEST_DEB_DIR), ("new", GUEST_UPGRADE_DIR)):
            dest = os.path.join(root, where.lstrip("/"))
            os.makedirs(dest, exist_ok=True)
            shutil.copy2(BUILT[key], dest)
        os.makedirs(os.path.join(root, GUEST_SRC_DIR.lstrip("/")), exist_ok=True)
    files = []
    with open(os.path.join(build_dir, "meson-logs", "install-log.txt")) as f:
        for line in f:
            path = line.strip()
            if not path.startswith(root + "/"):
                continue
            if os.path.isfile(path) or os.path.islink(path):
                files.append(os.path.relpath(path, root))
    # The test's consoled.conf (the font the harness reads): the package
    # brings its own, a conffile.
    files.append("etc/consoled/consoled.conf")
    with open(os.path.join(root, MESON_LIST.lstrip("/")), "w") as f:
        f.write("".join(p + "\n" for p in sorted(files)))


def lintian_output():
    """What lintian said about the packages (it ran in the background)."""
    proc = BUILT.get("lintian_proc")
    if proc is None:
        return ""
    try:
        proc.wait(timeout=600)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    with open(BUILT["lintian_file"]) as f:
        # As root lintian says so first; that is no finding.
        return "".join(l for l in f if "running with root privileges" not in l)


def dpkg(r, args, timeout=240):
    """Run dpkg in the guest; its output without the database progress."""
    t0 = time.monotonic()
    out = r.sh("dpkg %s 2>&1" % args, timeout=timeout)
    out = re.sub(r"\(Reading database \.\.\. [^\n]*?files and directories currently"
                 r" installed\.\)\n?", "", out)
    log("dpkg %s (%.1fs):\n%s" % (args, time.monotonic() - t0, out))
    return out


def guest_deb(key):
    return "%s/%s" % (GUEST_DEB_DIR if key == "old" else GUEST_UPGRADE_DIR,
                      os.path.basename(BUILT[key]))


def check_package(r):
    s = r.sysd
    if "error" in BUILT:
        r.fail("the package was not built: %s" % BUILT["error"].splitlines()[0][:2000])
    if "old" not in BUILT:
        r.fail("no package to install (systemdtest.py builds one when this check runs)")
    meson_removed = False
    try:
        meson_removed = True
        take_meson_install_away(r, s)
        package_lifecycle(r, s)
    finally:
        if meson_removed:
            put_meson_install_back(r, s)
    r.wait_prompt("no login prompt of the meson-installed consoled after the package check",
                  timeout=60)
    output = lintian_output()
    problems = [l for l in output.splitlines() if re.match(r"[EW]: ", l)]
    log("lintian --pedantic -I:\n" + (output or "(nothing)"))
    if problems:
        r.fail("lintian reports errors or warnings:\n" + "\n".join(problems))


def take_meson_install_away(r, s):
    """A fresh Debian's tty1: the meson-installed project gone, getty back."""
    r.sh("cd / && tar -cpf %s -T %s" % (MESON_TAR, MESON_LIST), timeout=60)
    r.sh("systemctl disable --now %s %s" % (s.UNIT, s.SOCKET), timeout=60)
    # /etc/consoled too (the checks' drop-in directory): dpkg makes it, and
    # removes it at the purge only if it is empty.
    r.sh("cd / && xargs rm -f < %s && rm -rf /etc/consoled && systemctl daemon-reload"
         % MESON_LIST, timeout=60)
    r.sh("systemctl enable --now " + s.GETTY, timeout=60)
    r.wait_unit(s.GETTY, "getty running", lambda p: p["SubState"] == "running")
    left = r.sh("cd / && for f in $(cat %s); do [ -e \"$f\" ] && echo \"$f\"; done; true"
                % MESON_LIST).split()
    if left:
        r.fail("the meson-installed files are still there: %r" % left)


def put_meson_install_back(r, s):
    r.vm.run("dpkg --purge consoled >/dev/null 2>&1; rm -rf %s" % os.path.dirname(s.DROPIN),
             timeout=180)
    r.vm.run("cd / && tar -xpf %s && systemctl daemon-reload; systemctl disable %s;"
             " systemctl enable %s %s; systemctl start %s; systemctl reset-failed %s;"
             " systemctl start %s"
             % (MESON_TAR, s.GETTY, s.SOCKET, s.UNIT, s.SOCKET, s.UNIT, s.UNIT), timeout=120)


def login(r, s, timeout=60):
    """The test user logs in on tty1 with keys, as Runner.login, with the
    waits of a loaded machine (PAM and the shell's start under TCG, while
    the package build and lintian ran before)."""
    r.vm.send_text(s.USER + "\n")
    r.wait_text(s.FONT, lambda d: any(l.rstrip() == "Password:" for l in d.lines),
                "no password prompt after the user name", timeout=timeout)
    r.vm.send_text(s.PASSWORD + "\n")
    r.wait_text(s.FONT, lambda d: any(l.startswith(s.SHELL_PROMPT) for l in d.lines),
                "no shell prompt after the password", timeout=timeout)
    r.vm.send_text("echo PKG-$((6*7))\n")
    r.wait_text(s.FONT, lambda d: any(l.rstrip() == "PKG-42" for l in d.lines),
                "the shell did not run a command", timeout=timeout)


def states(r, *units):
    """(is-active, is-enabled) of each unit."""
    active = r.vm.run("systemctl is-active " + " ".join(units))[0].split()
    enabled = r.vm.run("systemctl is-enabled " + " ".join(units) + " 2>&1")[0].split("\n")
    return list(zip(active, [e.strip() for e in enabled if e.strip()]))


def package_lifecycle(r, s):
    t0 = time.monotonic()
    getty_pid = r.unit(s.GETTY, "MainPID")["MainPID"]

    # Install (README's apt-get line, below the .deb): nothing taken over.
    readme_run(r, "build", select=is_deb_install, cwd=GUEST_SRC_DIR, timeout=240)
    status = r.sh("dpkg-query -W -f='${Status} ${Version}' consoled").strip()
    if status != "install ok installed " + BUILT["version"]:
        r.fail("after README's install command, consoled is %r" % status)
    conffiles = r.sh("dpkg-query -W -f='${Conffiles}' consoled")
    if "/etc/consoled/consoled.conf " not in conffiles:
        r.fail("/etc/consoled/consoled.conf is not a conffile: %r" % conffiles)
    got = states(r, s.UNIT, s.SOCKET, s.GETTY)
    if got != [("inactive", "disabled"), ("inactive", "disabled"), ("active", "enabled")]:
        r.fail("after the installation %s, %s, %s are %r: the package took a VT over or enabled"
               " something" % (s.UNIT, s.SOCKET, s.GETTY, got))
    if r.unit(s.GETTY, "MainPID")["MainPID"] != getty_pid:
        r.fail("getty@tty1 was restarted by the installation")
    if r.vt_modes()[0] != s.KD_TEXT:
        r.fail("tty1 left text mode at the installation")
    files = r.sh("dpkg -L consoled | while read f; do if [ ! -d \"$f\" ]; then echo \"$f\";"
                 " else case $f in *consoled*) echo \"$f\";; esac; fi; done").split()
    if "/usr/bin/consoled" not in files or "/lib/systemd/system/consoled@.service" not in files:
        r.fail("dpkg -L consoled lacks the daemon or the unit: %r" % files)
    log("dpkg -L consoled: %d files and directories of its own" % len(files))

    # README, "Install on Debian", in its order (the drop-in names the font
    # the harness reads). Try it on tty8: consoled's prompt there, getty on
    # tty1 untouched.
    r.sh("mkdir -p %s && printf 'font-file=%%s\\n' %s > %s"
         % (os.path.dirname(s.DROPIN), s.GUEST_FONT, s.DROPIN))
    readme_run(r, "try", timeout=90)
    r.wait_prompt("no login prompt of the packaged consoled on the spare VT", timeout=60)
    spare = [c.split()[2] for c in readme_commands("try") if c.startswith("systemctl start ")]
    for unit in spare:
        if r.unit(unit, "ActiveState")["ActiveState"] != "active":
            r.fail("README's try block started %s, which is not active" % unit)
    if r.unit(s.GETTY, "MainPID")["MainPID"] != getty_pid:
        r.fail("trying consoled on a spare VT restarted getty@tty1")
    r.sh("systemctl stop %s && chvt 1" % " ".join(spare), timeout=60)
    log("README try: %s showed its login prompt, getty@tty1 untouched" % " ".join(spare))

    # Replace getty, then back to getty, then replace again.
    replace_getty(r, s)
    readme_run(r, "getty", timeout=90)
    r.wait_unit(s.GETTY, "getty running after README's getty block",
                lambda p: p["SubState"] == "running", timeout=30)
    got = states(r, s.UNIT, s.GETTY)
    if got != [("inactive", "disabled"), ("active", "enabled")]:
        r.fail("after README's getty block %s, %s are %r" % (s.UNIT, s.GETTY, got))
    if r.vm.run("test -e /etc/systemd/system/autovt@.service || test -L"
                " /etc/systemd/system/autovt@.service")[1] == 0:
        r.fail("after README's getty block /etc/systemd/system/autovt@.service is still there")
    log("README getty: getty@tty1 running and enabled, consoled@tty1 disabled, no autovt link")
    pid = replace_getty(r, s)
    login(r, s)
    shell = r.login_pids()[1]
    before = r.stable_grab()

    # Upgrade with the user logged in: consoled restarted, the session kept.
    dpkg(r, "-i " + guest_deb("new"))
    status = r.sh("dpkg-query -W -f='${Status} ${Version}' consoled").strip()
    if status != "install ok installed " + BUILT["version"] + UPGRADE_SUFFIX:
        r.fail("after the upgrade, consoled is %r" % status)
    now = r.wait_unit(s.UNIT, "consoled running again after the upgrade",
                      lambda p: p["ActiveState"] == "active" and p["MainPID"] not in ("0", pid),
                      timeout=60)
    exe = r.sh("readlink /proc/%s/exe" % now["MainPID"]).strip()
    if exe != "/usr/bin/consoled":
        r.fail("after the upgrade consoled@tty1 runs %r, not the new /usr/bin/consoled" % exe)
    after = r.wait_equal(before, "the screen after the upgrade is not the one before",
                         timeout=30)
    r.vm.save_png(before, "package-upgrade-before.png")
    r.vm.save_png(after, "package-upgrade-after.png")
    if r.login_pids()[1] != shell:
        r.fail("the shell is not the one from before the upgrade")
    r.vm.send_text("echo UPGRADED-$((6*7)) $$\n")
    r.wait_text(s.FONT, lambda d: any(l.rstrip() == "UPGRADED-42 " + shell for l in d.lines),
                "the session does not take keys after the upgrade")
    log("upgrade: consoled %s -> %s, shell %s kept, screen equal" % (pid, now["MainPID"], shell))

    # Purge with the user logged in: getty back on tty1, nothing left.
    r.sh("rm -r " + os.path.dirname(s.DROPIN))
    readme_run(r, "remove", timeout=240)
    if r.vm.run("dpkg-query -W -f='${Status}' consoled 2>/dev/null")[0].strip() not in \
            ("", "unknown ok not-installed"):
        r.fail("consoled is still known to dpkg: %r"
               % r.vm.run("dpkg-query -W -f='${Status}' consoled")[0])
    r.wait_unit(s.GETTY, "getty running after the purge", lambda p: p["SubState"] == "running",
                timeout=30)
    enabled = r.vm.run("systemctl is-enabled " + s.GETTY)[0].strip()
    if enabled != "enabled":
        r.fail("after the purge getty@tty1 is %r, so tty1 would be dead at the next boot"
               % enabled)
    mode, kbmode = r.vt_modes()
    if mode != s.KD_TEXT or kbmode == s.K_OFF:
        r.fail("after the purge tty1 has KDGETMODE %d, KDGKBMODE %d" % (mode, kbmode))
    deadline = time.monotonic() + 20
    while True:
        # (comm is cut at 15 characters: consoled-sessio)
        procs = r.sh("pgrep -l -x consoled; pgrep -l -x consoled-sessio; true").strip()
        shells = r.sh("pgrep -u %s -x bash || true" % s.USER).split()
        if not procs and not shells:
            break
        if time.monotonic() > deadline:
            r.fail("after the purge these still run: %r, the user's shells %r" % (procs, shells))
        time.sleep(0.5)
    left = r.sh("for f in %s; do if [ -e \"$f\" ] || [ -L \"$f\" ]; then echo \"$f\"; fi; done;"
                " cd /etc/systemd/system && ls -d consoled@* */consoled@* consoled-session*"
                " */consoled-session* consoled-fallback* */consoled-fallback*"
                " /var/lib/dpkg/info/consoled.* 2>/dev/null; grep -rl consoled"
                " /var/lib/systemd/deb-systemd-helper-enabled"
                " /var/lib/systemd/deb-systemd-helper-masked 2>/dev/null; true"
                % " ".join(files)).split()
    if left:
        r.fail("after the purge these are left: %r" % left)
    # Nor a unit of the package still loaded: consoled-session.socket, which
    # consoled@ pulled in, would go on listening with its files gone (and a
    # later install's daemon-reload leaves it "not functional until
    # restarted").
    units = r.sh("systemctl list-units --all --plain --no-legend --full 'consoled@*'"
                 " 'consoled-session*' 'consoled-fallback*'"
                 " | awk '$3 != \"inactive\" { print $1 }'; true").split()
    if units:
        r.fail("after the purge these units of the package are still active: %r" % units)
    # getty's prompt on the kernel's console, in the font the reader knows.
    r.sh("setfont -C /dev/tty1 %s" % s.GUEST_FONT)
    r.wait_prompt("the kernel's console does not show getty's prompt after the purge")
    log("package: installed, upgraded, purged in %.0fs" % (time.monotonic() - t0))


def replace_getty(r, s):
    """README's replace block: consoled@tty1 (the package's binary) in
    getty's place, enabled, and autovt@.service linked to it."""
    readme_run(r, "replace", timeout=90)
    r.wait_prompt("no login prompt of the packaged consoled on tty1", timeout=60)
    got = states(r, s.UNIT, s.GETTY)
    if got != [("active", "enabled"), ("inactive", "disabled")]:
        r.fail("after README's replace block %s, %s are %r" % (s.UNIT, s.GETTY, got))
    link = r.vm.run("readlink /etc/systemd/system/autovt@.service")[0].strip()
    if os.path.basename(link) != "consoled@.service":
        r.fail("after README's replace block autovt@.service links to %r" % link)
    pid = r.unit(s.UNIT, "MainPID")["MainPID"]
    exe = r.sh("readlink /proc/%s/exe" % pid).strip()
    if exe != "/usr/bin/consoled":
        r.fail("consoled@tty1 runs %r, not the package's /usr/bin/consoled" % exe)
    log("README replace: consoled@tty1 running and enabled (pid %s), getty@tty1 disabled,"
        " autovt@.service -> %s" % (pid, link))
    return pid


def install(runner_class, sysd):
    """Adds the check to systemdtest's Runner; sysd is systemdtest itself."""
    runner_class.sysd = sysd
    runner_class.check_package = check_package
