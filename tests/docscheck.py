#!/usr/bin/python3
"""Checks of the documentation, run by the unit suite (tests/meson.build).

    docscheck.py man PAGE...      each page formats without a groff warning
                                  (groff -ww -man -Tutf8 -z)
    docscheck.py architecture     every code name docs/ARCHITECTURE.md cites
                                  in backticks exists in the tree: file paths
                                  and names, functions (`name()`), structs,
                                  and identifiers with an underscore
    docscheck.py layers           daemon/'s folders are the layers
                                  docs/ARCHITECTURE.md lists (its "#### `daemon/...`"
                                  headings, top first): every `#include "..."`
                                  of a file under daemon/ names a header of
                                  the file's own folder or of one listed
                                  below it, and every folder is listed
    docscheck.py recipes          the install recipes of README.md (its
                                  `<!-- pkgcheck: NAME -->` blocks, which the
                                  package check runs in the systemd guest)
                                  appear, line for line and in order, in
                                  consoled(8), consoled-session(8) and the
                                  header comment of consoled@.service; and
                                  the README's test command is what .ci/run
                                  runs

Exit status 0 when everything holds, 1 with one line per problem.
"""

import os
import re
import subprocess
import sys

TOP = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SKIP_DIRS = {".git", "subprojects"}
SOURCE_EXT = (".c", ".h", ".py", ".sh", ".in", ".build", ".rules", ".socket", ".txt")
# Functions and names of libtsm, which ARCHITECTURE.md cites beside the
# tree's own (in a build that has its headers: libtsm-dev).
HEADERS = ["/usr/include/libtsm.h"]
# Files that are not the tree's, cited as the model consoled follows: the
# kernel's fbcon rotation (drivers/video/fbdev/core/).
EXTERNAL_FILES = {"fbcon_cw.c", "fbcon_ud.c", "fbcon_ccw.c"}


def tree_files():
    for d, dirs, names in os.walk(TOP):
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith("build")
                   and not x.startswith("obj-")]
        for n in names:
            yield os.path.relpath(os.path.join(d, n), TOP)


def check_man(pages):
    problems = []
    for page in pages:
        proc = subprocess.run(["groff", "-ww", "-man", "-Tutf8", "-z", page],
                              capture_output=True, text=True,
                              env=dict(os.environ, LC_ALL="C.UTF-8"))
        for line in (proc.stderr.splitlines() or ([] if proc.returncode == 0 else
                                                  ["groff exited %d" % proc.returncode])):
            problems.append("%s: %s" % (page, line))
    return problems


def check_architecture(doc=os.path.join(TOP, "docs", "ARCHITECTURE.md")):
    files = list(tree_files())
    basenames = {os.path.basename(f) for f in files}
    dirs = {os.path.dirname(f) for f in files}
    dirs |= {d.split("/")[-1] for d in dirs if d}
    corpus = []
    for f in files:
        if f.endswith(SOURCE_EXT) and f != os.path.join("tests", "docscheck.py"):
            try:
                with open(os.path.join(TOP, f), errors="replace") as fh:
                    corpus.append(fh.read())
            except OSError:
                pass
    for h in HEADERS:
        if os.path.exists(h):
            with open(h, errors="replace") as fh:
                corpus.append(fh.read())
    corpus = "\n".join(corpus)
    meson_text = ""
    for f in files:
        if os.path.basename(f) == "meson.build":
            with open(os.path.join(TOP, f)) as fh:
                meson_text += fh.read()
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", corpus))

    with open(doc) as f:
        text = f.read()
    # the diagrams' names too: code blocks are checked like backticks
    cited = re.findall(r"`([^`\n]+)`", text)
    for block in re.findall(r"```\n(.*?)```", text, re.S):
        cited += re.findall(r"\b([a-z_][a-z0-9_]*\(\))", block)
        cited += re.findall(r"\b([a-z_][a-z0-9_-]*\.[ch])\b", block)
    problems = []
    for name in sorted(set(cited)):
        what = None
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)\(.*\)", name)
        if m:
            what = ("function", [m.group(1)])
        elif re.fullmatch(r"struct [a-z_][a-z0-9_]*", name):
            what = ("struct", [name.split()[1]])
        elif re.fullmatch(r"[A-Za-z0-9_.@/-]+\.(c|h|py|sh|7|8|5|rules|pc|service|socket)",
                          name) and "ttyN" not in name:
            path = name
            if name in EXTERNAL_FILES:
                continue
            # a pkg-config file meson generates (pkg.generate(name : ...))
            if name.endswith(".pc") and re.search(r"name : '%s'" % re.escape(name[:-3]),
                                                   meson_text):
                continue
            if not (os.path.exists(os.path.join(TOP, path))
                    or os.path.exists(os.path.join(TOP, path + ".in"))
                    or os.path.basename(path) in basenames
                    or os.path.basename(path) + ".in" in basenames):
                problems.append("docs/ARCHITECTURE.md cites file `%s`, not in the tree" % name)
            continue
        elif re.fullmatch(r"[a-z0-9_-]+/", name):
            if name.rstrip("/") not in dirs:
                problems.append("docs/ARCHITECTURE.md cites directory `%s`, not in the tree"
                                % name)
            continue
        elif re.fullmatch(r"[A-Za-z][A-Za-z0-9]*(_[A-Za-z0-9]+)+(\.[a-z_]+)*", name):
            what = ("name", name.split("."))
        if what is None:
            continue
        for word in what[1]:
            if word not in words:
                problems.append("docs/ARCHITECTURE.md cites %s `%s`: `%s` is nowhere in the"
                                " tree's sources" % (what[0], name, word))
    return problems


def unman(line):
    """A man page's .nf line as typed."""
    return line.replace("\\-", "-").replace("\\e", "\\").strip()


def readme_blocks(path):
    with open(path) as f:
        text = f.read()
    return {name: [l[4:] for l in body.split("\n") if l.startswith("    ") and l.strip()]
            for name, body in re.findall(r"<!-- pkgcheck: (\w+) -->\n(.*?)<!-- /pkgcheck -->",
                                         text, re.S)}


def check_layers(doc=os.path.join(TOP, "docs", "ARCHITECTURE.md")):
    with open(doc) as f:
        order = re.findall(r"^#### `daemon/([\w-]*)/?`$", f.read(), flags=re.M)
    problems = []
    if not order:
        return ["%s: no '#### `daemon/...`' headings" % doc]
    daemon = os.path.join(TOP, "daemon")
    for d, dirs, names in os.walk(daemon):
        folder = os.path.relpath(d, daemon).replace(os.sep, "/")
        folder = "" if folder == "." else folder
        if folder not in order:
            problems.append("daemon/%s: a folder ARCHITECTURE.md does not list as a layer" % folder)
            continue
        for n in sorted(names):
            if not n.endswith((".c", ".h")):
                continue
            path = os.path.join(d, n)
            with open(path, errors="replace") as fh:
                for lineno, line in enumerate(fh, 1):
                    m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                    if not m:
                        continue
                    target = os.path.normpath(os.path.join(d, m.group(1)))
                    rel = os.path.relpath(target, daemon)
                    if rel.startswith(".."):
                        continue  # fonts/, backends/: not daemon/'s layers
                    to = os.path.dirname(rel).replace(os.sep, "/")
                    if to not in order:
                        problems.append("%s:%d: includes %s, in no listed layer"
                                        % (os.path.relpath(path, TOP), lineno, m.group(1)))
                    elif order.index(to) < order.index(folder):
                        problems.append("%s:%d: includes %s: daemon/%s is above daemon/%s"
                                        % (os.path.relpath(path, TOP), lineno, m.group(1),
                                           to or "", folder))
    return problems


def check_recipes():
    blocks = readme_blocks(os.path.join(TOP, "README.md"))
    problems = []
    for name in ("build", "try", "replace", "getty", "remove"):
        if not blocks.get(name):
            problems.append("README.md: no commands in <!-- pkgcheck: %s -->" % name)
    places = {}
    for page in ("man/consoled.8", "man/consoled-session.8"):
        with open(os.path.join(TOP, page)) as f:
            places[page] = [unman(l) for l in f.read().split("\n")]
    with open(os.path.join(TOP, "systemd", "consoled@.service.in")) as f:
        head = []
        for l in f:
            if not l.startswith("#"):
                break
            head.append(l[1:].strip())
        places["systemd/consoled@.service.in (header comment)"] = head
    problems += check_ci()
    for name in ("try", "replace", "getty", "remove"):
        cmds = blocks.get(name, [])
        for place, lines in places.items():
            # the block's lines in a row, as the README has them
            n = len(cmds)
            if not any(lines[i:i + n] == cmds for i in range(len(lines) - n + 1)):
                problems.append("%s lacks README.md's %r recipe as it is:\n    %s"
                                % (place, name, "\n    ".join(cmds)))
    return problems


def check_ci():
    """The README's test command (the code block before "CI (`.ci/run`) runs
    exactly this command") is a line of .ci/run."""
    with open(os.path.join(TOP, "README.md")) as f:
        text = f.read()
    said = text.find("CI (`.ci/run`) runs exactly this command")
    if said < 0:
        return ["README.md no longer says which command CI (`.ci/run`) runs"]
    code = [l[4:] for l in text[:said].split("\n") if l.startswith("    ") and l.strip()]
    with open(os.path.join(TOP, ".ci", "run")) as f:
        ci = [l.strip() for l in f]
    if not code or code[-1] not in ci:
        return ["README.md's test command %r is not a line of .ci/run"
                % (code[-1] if code else None)]
    return []


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    what = sys.argv[1]
    if what == "man":
        problems = check_man(sys.argv[2:])
    elif what == "architecture":
        problems = check_architecture()
    elif what == "layers":
        problems = check_layers()
    elif what == "recipes":
        problems = check_recipes()
    else:
        sys.exit(__doc__)
    for p in problems:
        print(p)
    print("docscheck %s: %d problem(s)" % (what, len(problems)))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
