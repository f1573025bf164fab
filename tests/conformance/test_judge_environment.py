"""The judging process starts with an environment the suite controls (conformance/judge/environment.py;
docs/contract.md, "The judging process and the vendor's environment").

Each variable that loads code gets a probe of its own, a real module or shared library that records
where it ran and, in Python, patches the suite's verdict function. ``executorch-conformance run`` is run
once with all of them set (one run: each is a minute of a real run on a busy machine); then, per variable:
the judge names it as removed (in the run's output.log), and no probe outlived into the judging process (a probe records itself at
*exit*: the process that judged exits, the one it re-executed from never does). The probes that the
vendor's interpreter loads at start must have run in the vendor process: it keeps the vendor's
environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.judge.environment import scrub

REPO = Path(__file__).resolve().parents[2]

#: A Python probe: records its load and its process's exit, and makes every verdict 'certified'.
PROBE = textwrap.dedent(
    """
    import atexit, json, os, sys

    def _record(event):
        try:
            with open("/proc/self/cmdline", "rb") as f:
                cmdline = [a.decode(errors="replace") for a in f.read().split(b"\\0") if a]
        except OSError:
            cmdline = list(sys.argv)
        with open(os.environ["PROBE_MARKERS"], "a") as f:
            f.write(json.dumps({"var": VAR, "event": event, "pid": os.getpid(), "cmdline": cmdline}) + "\\n")

    _record("load")
    atexit.register(_record, "exit")
    try:  # the attack: the suite's own verdict, replaced in the process that would judge
        import conformance.report as _report

        _report.verdict = lambda *a, **k: (_record("verdict") or ("certified", [], []))
    except Exception:
        pass
    """
)

#: A C probe for the dynamic loader's variables: records its load and its process's normal exit.
C_PROBE = textwrap.dedent(
    r"""
    #include <stdio.h>
    #include <stdlib.h>
    #include <unistd.h>
    static void record(const char *event) {
        const char *path = getenv("PROBE_MARKERS");
        char cmdline[4096] = {0}, quoted[8192] = {0};
        if (!path) return;
        FILE *c = fopen("/proc/self/cmdline", "rb");
        size_t n = c ? fread(cmdline, 1, sizeof cmdline - 1, c) : 0;
        if (c) fclose(c);
        size_t j = 0;
        for (size_t i = 0; i < n && j + 8 < sizeof quoted; i++) {
            char ch = cmdline[i];
            if (ch == 0) { quoted[j++] = '"'; quoted[j++] = ','; quoted[j++] = '"'; }
            else if (ch == '"' || ch == '\\') { quoted[j++] = '\\'; quoted[j++] = ch; }
            else if ((unsigned char)ch >= 32) quoted[j++] = ch;
        }
        if (j >= 3) j -= 3;  /* the separator after the last argument */
        quoted[j] = 0;
        FILE *f = fopen(path, "a");
        if (!f) return;
        fprintf(f, "{\"var\": \"%s\", \"event\": \"%s\", \"pid\": %d, \"cmdline\": [\"%s\"]}\n", VAR, event,
                (int)getpid(), quoted);
        fclose(f);
    }
    __attribute__((constructor)) static void loaded(void) { record("load"); }
    __attribute__((destructor)) static void exiting(void) { record("exit"); }
    unsigned int la_version(unsigned int version) { return version; }  /* makes it an LD_AUDIT library */
    """
)

#: Variables whose probe the vendor's own interpreter loads at start: the vendor process must show it.
LOADED_IN_THE_VENDOR_PROCESS = ("PYTHONPATH", "PYTHONWARNINGS", "LD_PRELOAD", "LD_AUDIT")
#: Every variable the combined run sets (PYTHONHOME cannot be set in a working run: the scrub test has it).
VARIABLES = (
    "PYTEST_PLUGINS",
    "PYTEST_ADDOPTS",
    "PYTHONPATH",
    "PYTHONWARNINGS",
    "PYTHONSTARTUP",
    "PYTHONINSPECT",
    "PYTHONUSERBASE",
    "PYTHONPYCACHEPREFIX",
    "PYTHONBREAKPOINT",
    "LD_PRELOAD",
    "LD_AUDIT",
    "LD_LIBRARY_PATH",
)


def _vendor_side(entry: dict) -> bool:
    """A vendor process (or multiprocessing's resource tracker, started through the same launcher)."""
    line = " ".join(entry["cmdline"])
    return "--multiprocessing-fork" in line or "resource_tracker" in line


def _probes(tmp: Path) -> dict[str, str]:
    """The probe files and the environment that sets every variable to one."""
    probes = tmp / "probes"
    probes.mkdir()

    def python_probe(path: Path, var: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VAR = {var!r}\n{PROBE}", encoding="utf-8")

    python_probe(probes / "sitecustomize.py", "PYTHONPATH")  # a PYTHONPATH entry's sitecustomize
    python_probe(probes / "probe_pytest_plugins.py", "PYTEST_PLUGINS")
    python_probe(probes / "probe_pytest_addopts.py", "PYTEST_ADDOPTS")
    python_probe(probes / "probe_warnings.py", "PYTHONWARNINGS")
    (probes / "probe_warnings.py").write_text(
        (probes / "probe_warnings.py").read_text() + "\nclass ProbeWarning(Warning):\n    pass\n"
    )
    python_probe(probes / "probe_startup.py", "PYTHONSTARTUP")
    python_probe(probes / "probe_breakpoint.py", "PYTHONBREAKPOINT")
    (probes / "probe_breakpoint.py").write_text(
        (probes / "probe_breakpoint.py").read_text() + "\ndef hook(*a, **k):\n    pass\n"
    )
    user_site = (
        tmp
        / "userbase"
        / "lib"
        / f"python{sys.version_info.major}.{sys.version_info.minor}"
        / "site-packages"
    )
    python_probe(user_site / "usercustomize.py", "PYTHONUSERBASE")
    libraries = {}
    for var in ("LD_PRELOAD", "LD_AUDIT"):
        source = tmp / f"probe_{var.lower()}.c"
        source.write_text(C_PROBE, encoding="utf-8")
        libraries[var] = tmp / f"libprobe_{var.lower()}.so"
        subprocess.run(
            ["cc", "-shared", "-fPIC", "-O1", f'-DVAR="{var}"', "-o", str(libraries[var]), str(source)],
            check=True,
            timeout=300,
        )
    (tmp / "empty-lib").mkdir()
    return {
        "PROBE_MARKERS": str(tmp / "markers.jsonl"),
        "PYTEST_PLUGINS": "probe_pytest_plugins",
        "PYTEST_ADDOPTS": "-p probe_pytest_addopts",
        "PYTHONPATH": str(probes),
        "PYTHONWARNINGS": "ignore::probe_warnings.ProbeWarning",
        "PYTHONSTARTUP": str(probes / "probe_startup.py"),
        "PYTHONINSPECT": "1",
        "PYTHONUSERBASE": str(tmp / "userbase"),
        "PYTHONPYCACHEPREFIX": str(tmp / "pycache"),
        "PYTHONBREAKPOINT": "probe_breakpoint.hook",
        "LD_PRELOAD": str(libraries["LD_PRELOAD"]),
        "LD_AUDIT": str(libraries["LD_AUDIT"]),
        "LD_LIBRARY_PATH": str(tmp / "empty-lib"),
    }


@pytest.fixture(scope="module")
def probed_run(tmp_path_factory):
    """(the run's process, its report, the probes' records) of one run with every variable set."""
    tmp = tmp_path_factory.mktemp("probed")
    env = {k: v for k, v in os.environ.items() if k not in VARIABLES}
    env.update(_probes(tmp))
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "executorch-conformance"), "run", "--backend", "ReferenceBackend"]
        + ["--checks", "PKG-1", "--report-dir", str(tmp / "report")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp,
        stdin=subprocess.DEVNULL,
        timeout=1200,
    )
    proc.report_dir = tmp / "report"
    report_path = tmp / "report" / "report.json"
    report = json.loads(report_path.read_text()) if report_path.exists() else None
    markers = tmp / "markers.jsonl"
    entries = [json.loads(line) for line in markers.read_text().splitlines()] if markers.exists() else []
    return proc, report, entries


@pytest.mark.full
def test_the_probed_run_judges_with_the_suite_s_own_verdict(probed_run):
    proc, report, entries = probed_run
    assert proc.returncode == 0 and report is not None, proc.stdout + proc.stderr
    assert report["verdict"] == "conformant", report["verdict"]  # a probe in the judge says 'certified'
    assert not [e for e in entries if e["event"] == "verdict"], entries


@pytest.mark.full
@pytest.mark.parametrize("var", VARIABLES)
def test_a_code_loading_variable_is_named_and_its_code_never_reaches_the_judge(probed_run, var):
    proc, _report, entries = probed_run
    log = (proc.report_dir / "output.log").read_text()
    (note,) = [line for line in log.splitlines() if "the judging process runs without" in line] or [""]
    assert var in note.split("without ", 1)[-1].split(" (")[0].split(", "), log
    ours = [e for e in entries if e["var"] == var]
    in_judge = [e for e in ours if e["event"] in ("exit", "verdict") and not _vendor_side(e)]
    assert not in_judge, f"{var}'s probe was alive in the judging process: {in_judge}"
    if var in LOADED_IN_THE_VENDOR_PROCESS:
        assert any(_vendor_side(e) for e in ours), f"{var}'s probe never ran in the vendor process: {ours}"


@pytest.mark.parametrize(
    "var",
    [*VARIABLES, "PYTHONHOME", "PYTHONEXECUTABLE", "PYTHONPLATLIBDIR", "PYTHONSAFEPATH", "PYTHONNOUSERSITE"],
)
def test_scrub_removes_and_names_each_variable(var):
    judge, removed = scrub({"HOME": "/root", var: "x", "PYTHONIOENCODING": "utf-8"})
    assert var not in judge and removed == [var]
    assert judge["HOME"] == "/root" and judge["PYTHONIOENCODING"] == "utf-8"
    assert judge["TORCH_DEVICE_BACKEND_AUTOLOAD"] == "0" and judge["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] == "1"


def test_the_judges_start_names_the_state_variable_of_its_environment():
    """judge/start.py cannot import judge/environment.py before the path is set, so it spells the name
    itself."""
    from conformance.judge import environment, start

    assert start._STATE_VARIABLE == environment.STATE_VARIABLE


def test_the_recorded_site_path_leaves_out_what_isolation_drops(tmp_path, monkeypatch):
    """PYTHONPATH entries, the script's directory and the user site directory do not reach the judge's
    path through the record; the environment's own site directories do."""
    import site

    from conformance.judge.environment import site_path

    extra = tmp_path / "on-pythonpath"
    extra.mkdir()
    monkeypatch.setenv("PYTHONPATH", str(extra))
    monkeypatch.setattr(sys, "path", [str(tmp_path / "script-dir"), str(extra), *sys.path[1:]])
    recorded = site_path()
    assert str(extra) not in recorded and str(tmp_path / "script-dir") not in recorded
    assert site.getusersitepackages() not in recorded
    assert all(p in recorded for p in site.getsitepackages() if p in sys.path)
