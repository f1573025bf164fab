"""The runtime tasks of the checks, served by the C++ runner on a target.

``TargetRuntime`` stands in for the vendor process for the tasks the runtime
checks call (``load_runtime``, ``try_load``, ``execute``,
``execute_repeatedly``): each call becomes a bundle with one entry, copied to
the target, run by the runner, and its results copied back, in the shapes the
vendor process returns (``conformance.vendor.core_tasks``). Faults are reported as
the vendor process reports them:

- the runner died of a signal: ``VendorCrashed`` ("crashed with SIGSEGV in
  execute of sample 'mlp'; the runtime logged: ...");
- the runner's timeout passed (it stops itself with SIGALRM) or the target
  stopped answering: ``VendorTimedOut``;
- the connection was lost, the disk is full, the runner cannot start:
  ``TargetUnavailable``, naming the target and what failed.

The runner directory (the binary, ``lib/``, ``executorch/``) is copied once
per run, into a directory named by the hash of its content.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import itertools
import math
import secrets
import shutil
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.outcomes import (
    CheckFailed,
    SuiteCannotRun,
    TargetUnavailable,
    VendorCrashed,
    VendorTimedOut,
)
from conformance.targets.bundle import Bundle, BundleError, decode_tensors, read_result
from conformance.targets.concurrent_entry import add_concurrent_entry
from conformance.targets.transport import (
    COPY_FAILED,
    TargetError,
    TargetTimeout,
    Transport,
    disk_full,
    disk_full_line,
    last_line,
    quote,
    untar_bytes,
)
from conformance.vendor.process import quote_log, read_runner_log, signal_name
from conformance.vendor.records import RuntimeLoad, pack, unpack
from conformance.vendor.task_registry import LOAD_RUNTIME, TARGET_TASKS

#: The tasks a target serves (those ``conformance.vendor.task_registry`` marks on_target); every other task stays
#: in the vendor process.
TASKS = TARGET_TASKS
RUNNER_NAME = "conformance_runner"
#: How much longer than the runner's own timeout the host waits before it gives the target up (at most).
GRACE_S = 20.0
#: Bound of each copy to or from the target.
COPY_TIMEOUT_S = 120.0
#: What a one-trip exchange (ssh) may take beyond the runner's time, for copying the bundle and the results.
EXCHANGE_SLACK_S = 30.0
RUNNER_MARKER = "[executorch-conformance runner]"
STATUS_PREFIX = "runner-exit-status "
#: The runner's exit codes (conformance/device_runner/main.cpp).
EXIT_USAGE, EXIT_BUNDLE, EXIT_IO, EXIT_TIMEOUT = 64, 65, 74, 124


def runner_files(runner: Path) -> list[Path]:
    """The files of the runner directory that go to the target: the binary, lib/ and executorch/."""
    root = runner.parent
    files = [runner]
    for sub in ("lib", "executorch"):
        files += sorted(p for p in (root / sub).rglob("*") if p.is_file()) if (root / sub).is_dir() else []
    return files


def check_runner(path: str | Path, transport: Transport | None = None) -> Path:
    """The runner executable at ``path``; TargetError saying how to build it if it is not there, or, for a
    transport that knows its machine (an emulator), if it is built for another one."""
    runner = Path(path)
    if runner.is_dir():
        runner = runner / RUNNER_NAME
    if not runner.is_file():
        raise TargetError(
            f"no runner at {path}: build it with `cmake -S conformance/device_runner -B build/runner -DRUNNER_BACKEND_PACKAGE=<package> "
            f"-DRUNNER_BACKEND_TARGET=<package>::<target> && cmake --build build/runner` (docs/device-runner.md) "
            f"and pass --runner build/runner/{RUNNER_NAME}"
        )
    if transport is not None and transport.machine:
        built_for = runner_machine(runner)
        if built_for and built_for != transport.machine:
            raise TargetError(
                f"the runner at {path} is built for {built_for}, but --target {transport.url} runs "
                f"{transport.machine} programs: build it for {transport.machine} "
                f"(python scripts/cross_build_runner.py --arch {transport.machine}, docs/device-runner.md)"
            )
    return runner.resolve()


#: ELF e_machine -> the machine as `uname -m` names it (conformance/device_runner/main.cpp prints the same names).
ELF_MACHINES = {"EM_AARCH64": "aarch64", "EM_X86_64": "x86_64", "EM_ARM": "arm", "EM_386": "i686"}


def runner_machine(path: Path) -> str | None:
    """The machine the executable at ``path`` is built for (from its ELF header), None if it is no ELF file
    or of a machine not named here."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            machine = elf.header["e_machine"]
            if machine == "EM_RISCV":
                return "riscv64" if elf.elfclass == 64 else "riscv32"
            return ELF_MACHINES.get(machine)
    except (OSError, ELFError):
        return None


class TargetRuntime:
    """The runtime of one run on one target; the ``call``/``call_with_log`` interface of VendorProcess."""

    def __init__(
        self,
        transport: Transport,
        runner: Path,
        scratch: Path,
        backend_id: str,
        runtime_libraries: Callable[[], tuple[tuple[str, ...], str | None]],
    ) -> None:
        """``runtime_libraries``: () -> (the descriptor's runtime_libraries() on the host, or the error it raised)."""
        try:
            self.runner = check_runner(runner, transport)
        except TargetError:
            transport.close()
            raise
        self.transport = transport
        self.backend_id = backend_id
        self.scratch = scratch
        self._runtime_libraries = runtime_libraries
        self._counter = itertools.count()
        #: names this run's bundles on the target (several runs, or xdist workers, may share a workspace)
        self._token = secrets.token_hex(4)
        self._remote_runner: str | None = None
        self._previous: str | None = None
        #: what the report records about the target (set by the first call)
        self.info: dict[str, Any] | None = None

    # ----------------------------------------------------------------- the VendorProcess interface

    def call(self, task: str, *args: Any, what: str, timeout: float) -> Any:
        return self._serve(task, args, what, timeout)[0]

    def call_with_log(self, task: str, *args: Any, what: str, timeout: float) -> tuple[Any, str]:
        result, lines = self._serve(task, args, what, timeout)
        return result, "\n".join(lines)

    def close(self) -> None:
        """Removes this run's files from the target (best effort) and closes the transport."""
        try:
            if self._previous:
                self.transport.run(f"rm -rf {quote(self._previous)}", 30, "cleaning up")
        except TargetError:
            pass
        self.transport.close()

    # ----------------------------------------------------------------- deployment

    def deploy(self, timeout: float) -> str:
        """The runner's path on the target, copied there first if needed; fills ``info``."""
        if self._remote_runner is not None:
            return self._remote_runner
        t = self.transport
        files = runner_files(self.runner)
        digest = hashlib.sha256()
        for f in files:
            digest.update(str(f.relative_to(self.runner.parent)).encode() + b"\0" + f.read_bytes())
        remote = f"{t.workspace}/runner-{digest.hexdigest()[:16]}"
        binary = f"{remote}/{RUNNER_NAME}"
        try:
            present = t.run(f"test -x {quote(binary)} && echo present", timeout, "looking for the runner")
            if t.lost(present):
                t.check(present, "looking for the runner")
            if "present" not in present.stdout:
                stage = self.scratch / "runner-stage"
                shutil.rmtree(stage, ignore_errors=True)
                for f in files:
                    dest = stage / f.relative_to(self.runner.parent)
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(f, dest)
                # Copied aside, then moved into place: another run copying the same runner at the same time
                # never overwrites a binary that is running.
                aside = f"{remote}.{self._token}"
                t.put(stage, aside, COPY_TIMEOUT_S)
                shutil.rmtree(stage, ignore_errors=True)
                what = "moving the runner into place"
                t.check(
                    t.run(
                        f"test -d {quote(remote)} || mv {quote(aside)} {quote(remote)}; rm -rf {quote(aside)}",
                        timeout,
                        what,
                    ),
                    what,
                )
            self.info = self._describe(remote, files, timeout)
        except TargetError as exc:
            raise TargetUnavailable(f"cannot set up the runner on {t.url}: {exc}") from None
        self._remote_runner = binary
        return binary

    def _describe(self, remote: str, files: list[Path], timeout: float) -> dict[str, Any]:
        t = self.transport
        rel = [str(f.relative_to(self.runner.parent)) for f in files]
        command = (
            f"uname -a; echo '--'; uname -m; echo '--'; "
            f"{self._env(remote)} {t.launch(remote + '/' + RUNNER_NAME)} --version; "
            f"echo '--'; cd {quote(remote)} && sha256sum {' '.join(quote(r) for r in rel)}"
        )
        done = t.check(t.run(command, timeout, "describing the target"), "describing the target")
        parts = (done.stdout.split("--\n") + ["", "", "", ""])[:4]
        hashes = []
        for line in parts[3].splitlines():
            sha, _, name = line.strip().partition("  ")
            if sha and name:
                hashes.append({"path": f"{remote}/{name.strip()}", "sha256": sha})
        version = [line.strip() for line in parts[2].splitlines() if line.strip()]
        # The runner names the machine it runs as (under an emulator, the emulated one); an older runner
        # does not, and then the transport's machine or `uname -m` there says.
        said = {k: v.strip() for k, _, v in (line.partition(" ") for line in version[1:])}
        return {
            "url": t.url,
            "transport": t.scheme,
            "uname": parts[0].strip(),
            "machine": said.get("machine") or t.machine or parts[1].strip(),
            "runner_version": version[0] if version else "",
            "runner_dir": remote,
            "libraries": hashes,
            **t.details(),
        }

    @staticmethod
    def _env(remote: str) -> str:
        return f"LD_LIBRARY_PATH={quote(remote + '/lib')}:{quote(remote + '/executorch/lib')}"

    # ----------------------------------------------------------------- one task

    def _serve(self, task: str, args: tuple, what: str, timeout: float) -> tuple[Any, list[str]]:
        if task not in TASKS:
            raise CheckFailed(
                f"the target serves only the runtime tasks, not {task!r} (a defect of the suite)"
            )
        binary = self.deploy(timeout)
        if task == LOAD_RUNTIME:
            return self._load_runtime(binary, timeout)
        local = self.scratch / f"bundle-{next(self._counter)}"
        bundle = Bundle(local)
        try:
            handle = getattr(self, f"_bundle_{task}")(bundle, *args)
        except BundleError as exc:
            raise CheckFailed(f"cannot send {what} to the runner: {exc}") from None
        bundle.close()
        results, lines = self._run(binary, local, what, timeout)
        try:
            return handle(results), lines
        except BundleError as exc:
            raise TargetUnavailable(
                f"the runner on {self.transport.url} returned unreadable results for {what}: {exc}"
            ) from None
        finally:
            shutil.rmtree(local, ignore_errors=True)

    def _run(self, binary: str, local: Path, what: str, timeout: float) -> tuple[Path, list[str]]:
        """Copies the bundle, runs the runner, copies its results back; (local results dir, log lines)."""
        t = self.transport
        remote = f"{t.workspace}/{local.name}-{self._token}"
        seconds = max(1, math.ceil(timeout))
        previous, self._previous = self._previous, remote
        cleanup = f"rm -rf {quote(previous)}; " if previous else ""
        command = (
            f"cd {quote(remote)} || exit 90; mkdir -p results; "
            f"{self._env(binary.rsplit('/', 1)[0])} {t.launch(binary)} --timeout {seconds} {quote(remote)} "
            "> results/stdout.txt 2> results/log.txt & echo $! > pid; wait $!; "
            f's=$?; echo "{STATUS_PREFIX}$s" > results/status.txt; echo "{STATUS_PREFIX}$s"'
        )
        waited = seconds + grace(seconds)
        results = local / "results"
        shutil.rmtree(results, ignore_errors=True)
        single = t.one_trip  # one round trip: the bundle in, the runner run, the results out
        if single:
            waited += EXCHANGE_SLACK_S
        try:
            if single:
                status = self._exchange(remote, local, cleanup, command, results, waited, what)
            else:
                status = self._stepwise(remote, local, cleanup + command, results, waited, what)
        except TargetTimeout:
            self._stop(remote)
            raise VendorTimedOut(
                f"timed out after {timeout:.3g} s in {what}: {t.url} did not answer for {waited:.3g} s "
                "(the runner did not stop at its timeout, or the connection is lost)"
            ) from None
        step, lines = read_runner_log(results)
        lines = [line for line in lines if not line.startswith(RUNNER_MARKER)]
        if status == EXIT_TIMEOUT:
            raise VendorTimedOut(f"timed out after {timeout:.3g} s in {step or what}{quote_log(lines)}")
        if status > 128:
            raise VendorCrashed(
                f"crashed with {signal_name(128 - status)} in {step or what}{quote_log(lines)}"
            )
        if status == EXIT_IO and disk_full("\n".join(lines)):
            raise TargetUnavailable(
                f"the disk of {t.url} is full: the runner could not write the results of {what} "
                f"({disk_full_line(chr(10).join(lines))})"
            )
        if status in (126, 127):
            raise TargetUnavailable(
                f"the runner cannot start on {t.url}: {last_line(chr(10).join(lines))} "
                "(are its libraries there? build it for this target)"
            )
        if status != 0:
            raise TargetUnavailable(
                f"the runner on {t.url} failed with exit status {status} running {what}: "
                f"{last_line(chr(10).join(lines))}"
            )
        return results, lines

    def _not_run(self, done, what: str, text_out: bool = True) -> TargetUnavailable:
        """Why the runner gave no exit status: the connection, a full disk, or what the shell said."""
        url = self.transport.url
        said = done.stderr + (done.stdout if text_out else "")
        lost = self.transport.lost(done)
        if lost:
            return TargetUnavailable(f"lost the connection to {url}: {lost} (running {what})")
        if disk_full(said):
            return TargetUnavailable(
                f"the disk of {url} is full while running {what}: {disk_full_line(said)}"
            )
        return TargetUnavailable(
            f"the runner did not run on {url} (exit status {done.status}): {last_line(said)} (running {what})"
        )

    def _stepwise(
        self, remote: str, local: Path, command: str, results: Path, waited: float, what: str
    ) -> int:
        """put, run, get: three commands (local, adb); the runner's exit status."""
        t = self.transport
        try:
            t.put(local, remote, COPY_TIMEOUT_S)
        except TargetTimeout:
            raise
        except TargetError as exc:
            raise TargetUnavailable(f"cannot copy {what} to the target: {exc}") from None
        try:
            done = t.run(command, waited, f"running {what}")
        except TargetTimeout:
            raise
        except TargetError as exc:
            raise TargetUnavailable(f"cannot run {what}: {exc}") from None
        status = _exit_status(done.stdout)
        if status is None:
            raise self._not_run(done, what)
        try:
            t.get(f"{remote}/results", results, COPY_TIMEOUT_S)
        except TargetTimeout:
            raise
        except TargetError as exc:
            raise TargetUnavailable(f"cannot copy the results of {what} back: {exc}") from None
        return status

    def _exchange(
        self, remote: str, local: Path, cleanup: str, command: str, results: Path, waited: float, what: str
    ) -> int:
        """One command that takes the bundle in and gives the results back (ssh); the runner's exit status."""
        t = self.transport
        try:
            done = t.exchange(local, remote, cleanup, command, waited, f"running {what}")
        except TargetTimeout:
            raise
        except TargetError as exc:
            raise TargetUnavailable(f"cannot run {what}: {exc}") from None
        if done.status == COPY_FAILED:
            try:
                t.check(dataclasses.replace(done, status=1), f"copying {what} to the target")
            except TargetError as exc:
                raise TargetUnavailable(f"cannot copy {what} to the target: {exc}") from None
        if done.status != 0 or not done.data:
            raise self._not_run(done, what, text_out=False)
        try:
            untar_bytes(done.data, results)
        except (OSError, tarfile.TarError) as exc:
            raise TargetUnavailable(
                f"the results of {what} from {t.url} are not a tar stream: {exc}"
            ) from None
        try:
            status = _exit_status((results / "status.txt").read_text())
        except OSError:
            status = None
        if status is None:
            raise self._not_run(done, what, text_out=False)
        return status

    def _stop(self, remote: str) -> None:
        """Kills the runner of a bundle whose command line overran (by the pid it wrote), best effort."""
        with contextlib.suppress(TargetError):
            self.transport.run(f"kill -9 $(cat {quote(remote)}/pid) 2>/dev/null", 15, "stopping the runner")

    # ----------------------------------------------------------------- the tasks

    def _load_runtime(self, binary: str, timeout: float) -> tuple[RuntimeLoad, list[str]]:
        local = self.scratch / f"bundle-{next(self._counter)}"
        bundle = Bundle(local)
        bundle.entry("describe", "describe", "the registered backends")
        bundle.close()
        results, lines = self._run(
            binary, local, "load_runtime() (the runner's registered backends)", timeout
        )
        try:
            found = read_result(results / "describe.txt")
        except BundleError as exc:
            raise TargetUnavailable(
                f"the runner on {self.transport.url} returned no description: {exc}"
            ) from None
        finally:
            shutil.rmtree(local, ignore_errors=True)
        names = tuple(name for name, _ in found.registered)
        libraries, libraries_error = self._runtime_libraries()
        mapped_names = {m.rsplit("/", 1)[-1] for m in found.mapped}
        mapped = tuple(p for p in libraries if Path(p).name in mapped_names)
        # The runner registers the backend before main() (it is linked in): nothing is registered "before".
        available = dict(found.registered).get(self.backend_id)
        return RuntimeLoad((), names, tuple(libraries), libraries_error, mapped, None, available), lines

    def _bundle_execute(self, bundle: Bundle, pte, data_path, what, inputs) -> Callable[[Path], dict]:
        program = bundle.add_file(pte, ".pte")
        data = bundle.add_file(data_path, ".ptd") if data_path else None
        bundle.entry(
            "e",
            "execute",
            what,
            program=[("p", program)],
            data=data,
            inputs=bundle.add_tensors(list(unpack(inputs))),
        )

        def handle(results: Path) -> dict:
            r = read_result(results / "e.txt")
            if not r.ok:
                return {"error": r.error or "", "step": r.step or f"execute of {what}"}
            return {"outputs": pack(decode_tensors((results / "e.bin").read_bytes(), "the outputs"))}

        return handle

    def _bundle_try_load(self, bundle: Bundle, pte, data_path, what, inputs) -> Callable[[Path], dict]:
        program = bundle.add_file(pte, ".pte")
        data = bundle.add_file(data_path, ".ptd") if data_path else None
        tensors = bundle.add_tensors(list(unpack(inputs))) if inputs is not None else None
        bundle.entry("e", "try_load", what, program=[("p", program)], data=data, inputs=tensors)

        def handle(results: Path) -> dict:
            r = read_result(results / "e.txt")
            if not r.ok:
                return {"error": r.error or "", "outputs": None}
            return {"error": None, "outputs": int(r.outputs) if r.outputs and r.outputs.isdigit() else None}

        return handle

    def _bundle_execute_repeatedly(self, bundle: Bundle, programs, rounds, copies) -> Callable[[Path], dict]:
        listed = bundle.add_programs(programs)
        names = {key: name for (key, _), (name, _) in zip(listed, programs)}
        by_name = {name: key for key, name in names.items()}
        planned = [
            (r, by_name[name], bundle.add_tensors(list(unpack(packed))))
            for r, inputs in enumerate(rounds)
            for name, packed in inputs.items()
        ]
        bundle.entry(
            "e", "repeat", "repeated execution of the samples", program=listed, copies=copies, rounds=planned
        )

        def handle(results: Path) -> dict:
            r = read_result(results / "e.txt")
            if not r.ok:
                return {"error": r.error or "", "step": r.step or "repeated execution"}
            return {
                "outputs": {
                    (names[name], copy, round_): pack(decode_tensors((results / file).read_bytes(), file))
                    for name, copy, round_, file in r.output_files
                }
            }

        return handle

    def _bundle_run_methods(self, bundle: Bundle, pte, data_path, what, inputs) -> Callable[[Path], dict]:
        """The methods of one program (``method_tasks.run_methods``): each loaded alone, executed with its
        first round's inputs; then all loaded from one program, sharing its arenas as ExecuTorch's Python
        runtime does, executed in turn for each round."""
        program = bundle.add_file(pte, ".pte")
        data = bundle.add_file(data_path, ".ptd") if data_path else None
        methods = list(inputs)
        for i, method in enumerate(methods):
            first = bundle.add_tensors(list(unpack(inputs[method][0])))
            bundle.entry(
                f"a{i}",
                "methods",
                f"{what} (loaded alone)",
                program=[("p", program)],
                data=data,
                rounds=[(0, method, first)],
            )
        rounds = max(len(v) for v in inputs.values())
        calls = [
            (k * len(methods) + j, method, bundle.add_tensors(list(unpack(inputs[method][k]))))
            for k in range(rounds)
            for j, method in enumerate(methods)
            if k < len(inputs[method])
        ]
        together = f"{what} (the methods {', '.join(methods)} loaded from one program, executed in turn)"
        bundle.entry(
            "t", "methods", together, program=[("p", program)], data=data, rounds=calls, share_arenas=True
        )

        def handle(results: Path) -> dict:
            alone: dict[str, bytes] = {}
            for i, method in enumerate(methods):
                r = _methods_result(results / f"a{i}.txt")
                if not r.ok:
                    return {
                        "error": r.error or "",
                        "step": r.step or f"method {method!r} of {what} (loaded alone)",
                    }
                alone[method] = _call_outputs(results, r)[0]
            r = _methods_result(results / "t.txt")
            if not r.ok:
                return {"error": r.error or "", "step": r.step or together}
            outputs = _call_outputs(results, r)
            return {"alone": alone, "together": {(m, c // len(methods)): outputs[c] for c, m, _ in calls}}

        return handle

    def _bundle_run_llm(self, bundle: Bundle, pte, prompt, what, forced=None) -> Callable[[Path], dict]:
        """The decoder's prefill and decode methods (``llm_tasks.run_llm``), teacher-forced: the runner cannot
        take each step's token from the logits, so decode call k is fed ``forced[k - 1]`` (eager PyTorch's
        tokens), which is greedy decoding up to the first step whose token differs."""
        import torch

        from conformance.models import decoder

        if not forced:
            raise BundleError(
                "the LLM decoder runs on a target only teacher-forced, with eager PyTorch's tokens"
            )
        program = bundle.add_file(pte, ".pte")
        calls = [(0, "prefill", bundle.add_tensors([unpack(prompt)[0], torch.tensor([0])]))]
        for k in range(1, len(forced)):
            token, position = torch.tensor([[forced[k - 1]]]), torch.tensor([decoder.PROMPT + k - 1])
            calls.append((k, "decode", bundle.add_tensors([token, position])))
        bundle.entry("l", "methods", what, program=[("p", program)], rounds=calls, share_arenas=True)

        def handle(results: Path) -> dict:
            r = _methods_result(results / "l.txt")
            if not r.ok:
                return {"error": r.error or "", "step": r.step or f"execute of {what}"}
            logits = [unpack(packed)[0] for packed in _call_outputs(results, r)]
            return {
                "tokens": [int(torch.argmax(t[0])) for t in logits],
                "logits": pack(logits),
                "seconds": [r.seconds.get(k, 0.0) for k in range(len(logits))],
            }

        return handle

    def _bundle_concurrent_methods(
        self, bundle: Bundle, programs, input_sets, threads, iterations, cmake=None, ninja=None
    ) -> Callable[[Path], dict]:
        return add_concurrent_entry(bundle, programs, input_sets, threads, iterations)


def _methods_result(path: Path) -> Any:
    """The result of a methods entry; SuiteCannotRun if the runner predates that entry kind."""
    r = read_result(path)
    if not r.ok and "unknown entry kind 'methods'" in (r.error or ""):
        raise SuiteCannotRun(
            "the runner on the target does not know the entry kind 'methods', which runs methods other than "
            "'forward' (it was built before runner 0.3.0, suite 0.6.0): rebuild it from conformance/device_runner "
            "(docs/device-runner.md)"
        )
    return r


def _call_outputs(results: Path, r: Any) -> list[bytes]:
    """The packed outputs of each call of a methods entry, in call order; BundleError if one is missing."""
    files = {call: file for _name, _zero, call, file in r.output_files}
    if sorted(files) != list(range(len(files))):
        raise BundleError(f"the runner wrote the outputs of calls {sorted(files)}")
    return [pack(decode_tensors((results / files[c]).read_bytes(), files[c])) for c in range(len(files))]


def grace(seconds: float) -> float:
    """How long after the runner's own timeout the host still waits for the target: 2 s plus a quarter of the
    timeout, at most GRACE_S (20 s for the default 120 s)."""
    return min(GRACE_S, 2.0 + seconds / 4)


def _exit_status(stdout: str) -> int | None:
    for line in reversed(stdout.splitlines()):
        if line.startswith(STATUS_PREFIX):
            try:
                return int(line[len(STATUS_PREFIX) :])
            except ValueError:
                return None
    return None


__all__ = ["TASKS", "TargetRuntime", "check_runner", "runner_files", "runner_machine"]
