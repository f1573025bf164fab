"""The judging process's first code: run as ``python -I -S conformance/judge/start.py ARGS`` by
``conformance.judge.environment.reexec`` (and by pytest-xdist for its workers: ``--worker -u -c CODE``).

No ``site`` ran (-S), so nothing of the environment has run yet and nothing is on the import path but the
standard library. This file builds the path the way ``site.addsitedir`` would, without running code: the
environment's site directories (sysconfig's purelib and platlib) and the directories their ``.pth``
files name on a line of their own, but never a ``.pth`` line that starts with ``import``; then the
directories the starting interpreter's ``site`` added (``environment.site_path``, read from the state
file: a layered environment's ``site.addsitedir`` reaches the judge as data, not as code); then the directory
this suite is imported from (an editable install's source tree). Only the standard library is imported
before that, so this file must import nothing else at the top.
"""

import json
import os
import sys
import sysconfig

#: environment.STATE_VARIABLE (not imported: nothing but the standard library before the path is set).
_STATE_VARIABLE = "EXECUTORCH_CONFORMANCE_VENDOR_STATE"


def _pth_directories(site_dir: str) -> list[str]:
    """The directories the ``.pth`` files of ``site_dir`` add (``site.addpackage``'s path lines), in
    ``site``'s order; ``import`` lines are skipped: they are code."""
    try:
        names = sorted(n for n in os.listdir(site_dir) if n.endswith(".pth") and not n.startswith("."))
    except OSError:
        return []
    found = []
    for name in names:
        try:
            with open(os.path.join(site_dir, name), encoding="utf-8") as f:
                lines = f.read().splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        for raw in lines:
            line = raw.rstrip()
            if not line or line.startswith(("#", "import ", "import\t")):
                continue
            path = os.path.abspath(os.path.join(site_dir, line))
            if os.path.isdir(path):
                found.append(path)
    return found


def _enter_virtual_environment() -> list[str]:
    """What ``site.venv`` does, which -S skips: a ``pyvenv.cfg`` next to the interpreter (or one level up)
    makes its directory ``sys.prefix``. Returns the prefixes whose site directories are on the path: the
    environment's, and the base interpreter's when ``include-system-site-packages = true``."""
    exe_dir = os.path.dirname(os.path.abspath(sys.executable))
    for conf in (os.path.join(exe_dir, "pyvenv.cfg"), os.path.join(os.path.dirname(exe_dir), "pyvenv.cfg")):
        if not os.path.isfile(conf):
            continue
        system = False
        with open(conf, encoding="utf-8") as f:
            for line in f:
                key, sep, value = line.partition("=")
                if sep and key.strip().lower() == "include-system-site-packages":
                    system = value.strip().lower() == "true"
        sys.prefix = sys.exec_prefix = os.path.dirname(conf)
        return [sys.prefix, *([sys.base_prefix] if system else [])]
    return [sys.prefix]


def _recorded_site_path() -> list[str]:
    """The starting interpreter's site directories (the state file's ``site_path``), existing ones only;
    [] without a readable state file."""
    state = os.environ.get(_STATE_VARIABLE)
    if not state:
        return []
    try:
        with open(state, encoding="ascii") as f:
            recorded = json.load(f).get("site_path", [])
    except (OSError, ValueError, AttributeError):
        return []
    return [p for p in recorded if isinstance(p, str) and os.path.isdir(p)]


def judge_path() -> list[str]:
    """The import path of the judge: the standard library (what -I -S left), the site directories and
    their .pth directories, the directories the starting interpreter's site added, and the suite's own
    root."""
    path = list(sys.path)
    for prefix in _enter_virtual_environment():
        for key in ("purelib", "platlib"):
            site_dir = sysconfig.get_path(key, vars={"base": prefix, "platbase": prefix})
            if site_dir and os.path.isdir(site_dir) and site_dir not in path:
                path += [site_dir, *_pth_directories(site_dir)]
    path += _recorded_site_path()
    path.append(
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    )  # conformance/judge/..
    return list(dict.fromkeys(path))  # in order, each once


def _worker(args: list[str]) -> None:
    """pytest-xdist's popen worker: ``-u -c CODE`` (execnet's bootstrap line), run as python would."""
    while args and args[0] in ("-u", "-B"):
        args = args[1:]
    if len(args) < 2 or args[0] != "-c":
        raise SystemExit(f"judge/start.py --worker: expected -c CODE, got {args!r}")
    sys.argv = ["-c", *args[2:]]
    exec(compile(args[1], "<string>", "exec"), {"__name__": "__main__"})  # noqa: S102  execnet's own line


if __name__ == "__main__":  # never when multiprocessing's spawn re-imports the main module as __mp_main__
    sys.path[:] = judge_path()
    if sys.argv[1:2] == ["--worker"]:
        _worker(sys.argv[2:])
    else:
        from conformance.cli import main

        sys.argv[0] = "executorch-conformance"
        sys.exit(main(sys.argv[1:]))
