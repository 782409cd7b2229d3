"""The benchmark's guest tools (tests/bench/meson.build): built in the build
tree that consoled is in, found from consoled's path (bench.py, latency.py)."""

import os


def tool_path(consoled, name, option=None, instead=None):
    """tests/bench/NAME next to consoled; if it was not built, exits saying so
    (and, for a tool that OPTION needs, that INSTEAD does without it)."""
    path = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(consoled)), "..",
                                         "tests", "bench", name))
    if not os.path.exists(path):
        raise SystemExit("bench: %s%s next to consoled (%s): build tests/bench/%s%s"
                         % ("%s needs " % option if option else "needs ", name, path, name,
                            ", or %s" % instead if instead else ""))
    return path
