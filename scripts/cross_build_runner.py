"""Builds a backend's runtime and the conformance runner for aarch64 Linux against the aarch64
executorch wheel, in one command (docs/device-runner.md, "Another instruction set"):

    python scripts/cross_build_runner.py                      # the reference backend, into build/cross/aarch64
    python -m conformance.cli run --backend ReferenceBackend \\
        --target qemu-aarch64 --runner build/cross/aarch64/runner/conformance_runner

Steps: get the executorch SDK for the target (pip downloads the installed executorch's release for
manylinux_2_28_aarch64 into build/cross/wheels and its SDK part, include/ lib/ share/ version.py, is
unpacked as the sysroot's ExecuTorch; --wheel FILE gives the wheel, --sdk DIR an executorch package
already there), build the backend's CMake project with conformance/device_runner/toolchains/aarch64-linux-gnu.cmake and
install it, build conformance/device_runner/ against both. Needs Debian's cross compiler (apt-get install
g++-aarch64-linux-gnu); running the result needs qemu-user or an aarch64 machine. ``--arch x86_64``
on an x86-64 host builds the same way with this host's compiler (the matrix's x86-64 runner).

The output directory then holds sdk/ (the unpacked wheel), backend/ (its build), backend-install/
(its CMake package), runner/ (the deployable runner: conformance_runner, lib/, executorch/) and
cross-build.json: what was built from what, and the glibc the target needs.

Exit codes: 0 built; 2 a tool, the wheel or an option is wrong (one line saying what to do); 1 a
build step failed (its output is shown).
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: Per architecture: the GNU triple (compilers, Debian's sysroot), the wheel's platform tag, its ELF machine.
ARCHES = {
    "aarch64": ("aarch64-linux-gnu", "manylinux_2_28_aarch64", "EM_AARCH64"),
    "x86_64": ("x86_64-linux-gnu", "manylinux_2_28_x86_64", "EM_X86_64"),
}
#: The parts of the executorch wheel a C++ build needs: headers, libraries, CMake package, version.
SDK_PARTS = ("executorch/include/", "executorch/lib/", "executorch/share/", "executorch/version.py")
REFERENCE = {
    "source": REPO / "reference_backend" / "runtime",
    "package": "ReferenceBackend",
    "target": "ReferenceBackend::Backend",
}


class Refused(Exception):
    """A tool, the wheel or an option is wrong; the message says what to do."""


def tool(name: str) -> str:
    """The venv's copy of a build tool (cmake, ninja from PyPI) when there is one, else PATH's."""
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else name


def run(argv: list[str], what: str) -> str:
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        print(
            f"cross_build_runner: {what} failed:\n$ {' '.join(argv)}\n{proc.stdout[-6000:]}{proc.stderr[-6000:]}"
        )
        raise SystemExit(1)
    return proc.stdout


def fetch_wheel(out: Path, version: str, platform: str) -> Path:
    """The executorch wheel for ``platform`` in ``out``, downloaded by pip unless it is there."""
    py = f"{sys.version_info.major}{sys.version_info.minor}"
    found = sorted(out.glob(f"executorch-{version}-cp{py}-cp{py}-{platform}.whl"))
    if found:
        return found[0]
    argv = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--only-binary=:all:"]
    argv += [
        "--platform",
        platform,
        "--python-version",
        py,
        "--no-deps",
        f"executorch=={version}",
        "-d",
        str(out),
    ]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    found = sorted(out.glob(f"executorch-{version}-*-{platform}.whl"))
    if proc.returncode != 0 or not found:
        said = [line for line in (proc.stderr + proc.stdout).splitlines() if line.strip()]
        raise Refused(
            f"pip could not download executorch=={version} for {platform} "
            f"({said[-1] if said else 'no message'}); give the wheel with --wheel FILE"
        )
    return found[0]


def unpack_sdk(wheel: Path, sdk: Path, elf_machine: str) -> str:
    """The SDK part of ``wheel`` unpacked into ``sdk`` (again only if the wheel changed); its sha256."""
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    stamp = sdk / "wheel.sha256"
    if not (stamp.is_file() and stamp.read_text().strip() == digest):
        shutil.rmtree(sdk, ignore_errors=True)
        try:
            with zipfile.ZipFile(wheel) as z:
                names = [n for n in z.namelist() if n.startswith(SDK_PARTS)]
                if not any(n.endswith("share/cmake/executorch-config.cmake") for n in names):
                    raise Refused(
                        f"{wheel.name} has no CMake package (executorch/share/cmake): the executorch wheels "
                        "are an SDK from 1.5 on; give a 1.5.x wheel"
                    )
                z.extractall(sdk, members=names)
        except zipfile.BadZipFile:
            raise Refused(f"{wheel} is not a wheel (not a zip file)") from None
        stamp.write_text(digest + "\n")
    check_machine(sdk / "executorch" / "lib" / "libexecutorch.so", elf_machine, wheel.name)
    return digest


def elf_machine_of(path: Path) -> str | None:
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    try:
        with open(path, "rb") as f:
            return str(ELFFile(f).header["e_machine"])
    except (OSError, ELFError):
        return None


def glibc_needed(paths: list[Path]) -> tuple[str, list[str]]:
    """The newest GLIBC_x.y version the ELF files need and the symbols that need it."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.gnuversions import GNUVerNeedSection, GNUVerSymSection
    from packaging.version import Version

    newest, symbols = "2.0", set()
    for path in paths:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            names: dict[int, str] = {}
            for section in elf.iter_sections():
                if isinstance(section, GNUVerNeedSection):
                    for _, auxes in section.iter_versions():
                        for aux in auxes:
                            names[aux["vna_other"]] = aux.name
            versym = next((s for s in elf.iter_sections() if isinstance(s, GNUVerSymSection)), None)
            dynsym = elf.get_section_by_name(".dynsym")
            if versym is None or dynsym is None:
                continue
            for i, sym in enumerate(dynsym.iter_symbols()):
                if sym["st_shndx"] != "SHN_UNDEF":
                    continue
                name = names.get(versym.get_symbol(i)["ndx"] if i < versym.num_symbols() else 0, "")
                if not name.startswith("GLIBC_2."):
                    continue
                version = name[len("GLIBC_") :]
                if Version(version) > Version(newest):
                    newest, symbols = version, set()
                if version == newest:
                    symbols.add(sym.name)
    return newest, sorted(symbols)


def configure_and_build(source: Path, build: Path, defines: list[str], target: str | None = None) -> None:
    configure = [tool("cmake"), "-S", str(source), "-B", str(build), "-G", "Ninja"]
    configure += [f"-DCMAKE_MAKE_PROGRAM={tool('ninja')}", "-DCMAKE_BUILD_TYPE=Release", *defines]
    run(configure, f"configuring {source.relative_to(REPO) if source.is_relative_to(REPO) else source}")
    run(
        [tool("cmake"), "--build", str(build), *(["--target", target] if target else [])],
        f"building {build.name}",
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default="aarch64", help=f"the target architecture ({', '.join(ARCHES)})")
    parser.add_argument("--out", type=Path, help="the output directory (default build/cross/<arch>)")
    sdk = parser.add_mutually_exclusive_group()
    sdk.add_argument("--wheel", type=Path, help="the executorch wheel for the target (default: pip download)")
    sdk.add_argument(
        "--sdk", type=Path, help="or an executorch package already there (<site-packages>/executorch)"
    )
    parser.add_argument(
        "--wheels", type=Path, default=REPO / "build" / "cross" / "wheels", help="where pip downloads it to"
    )
    parser.add_argument(
        "--executorch", help="the executorch release to download (default: the installed one)"
    )
    parser.add_argument(
        "--backend-source", type=Path, default=REFERENCE["source"], help="the backend's CMake project"
    )
    parser.add_argument(
        "--backend-package", default=REFERENCE["package"], help="its CMake package (find_package)"
    )
    parser.add_argument(
        "--backend-target", default=REFERENCE["target"], help="the package's registering target"
    )
    parser.add_argument(
        "--backend-library",
        help="instead of a package: the shared library the project builds (lib<name>.so) that registers the backend",
    )
    parser.add_argument("--cmake-arg", action="append", default=[], help="one more -D... for both builds")
    parser.add_argument("--no-runner", action="store_true", help="build and install the backend only")
    return parser.parse_args(argv)


def prepare(args: argparse.Namespace) -> tuple[list[str], str, Path, str, str]:
    """(the toolchain's CMake defines, the compiler, the SDK's executorch dir, where it came from, its
    sha256 or ""); Refused naming what is missing."""
    if args.arch not in ARCHES:
        raise Refused(f"--arch {args.arch}: this script builds for {', '.join(ARCHES)}")
    triple, platform, elf_machine = ARCHES[args.arch]
    if args.arch == os.uname().machine:
        toolchain: list[str] = []  # this host's own compilers
        compiler = shutil.which(f"{triple}-g++") or shutil.which("c++")
    else:
        toolchain_file = REPO / "conformance" / "device_runner" / "toolchains" / f"{triple}.cmake"
        if not toolchain_file.is_file():
            raise Refused(
                f"--arch {args.arch} on this {os.uname().machine} host: no toolchain file {toolchain_file}"
            )
        toolchain = [f"-DCMAKE_TOOLCHAIN_FILE={toolchain_file}"]
        compiler = shutil.which(f"{triple}-g++")
        if compiler is None:
            raise Refused(
                f"{triple}-g++ is not installed: apt-get install g++-{triple} (Debian's cross compiler)"
            )
    if compiler is None:
        raise Refused("no C++ compiler on PATH: apt-get install g++")
    out = args.out
    if args.sdk is not None:
        sdk = args.sdk.resolve()
        if not (sdk / "share" / "cmake" / "executorch-config.cmake").is_file():
            raise Refused(
                f"--sdk {args.sdk}: no executorch CMake package there (share/cmake/executorch-config.cmake)"
            )
        check_machine(sdk / "lib" / "libexecutorch.so", elf_machine, f"--sdk {args.sdk}")
        return toolchain, compiler, sdk, f"the executorch package at {sdk}", ""
    if args.wheel is not None:
        if not args.wheel.is_file():
            raise Refused(f"--wheel {args.wheel}: no such file")
        wheel = args.wheel
    else:
        version = args.executorch or metadata.version("executorch").split("+")[0]
        args.wheels.mkdir(parents=True, exist_ok=True)
        wheel = fetch_wheel(args.wheels, version, platform)
    digest = unpack_sdk(wheel, out / "sdk", elf_machine)
    return toolchain, compiler, out / "sdk" / "executorch", wheel.name, digest


def check_machine(library: Path, elf_machine: str, what: str) -> None:
    machine = elf_machine_of(library)
    if machine != elf_machine:
        raise Refused(
            f"{what}: its libexecutorch.so is for {machine or 'no known machine'}, not {elf_machine}; "
            "give the executorch of the target's platform"
        )


def build_backend(args: argparse.Namespace, common: list[str], sdk: Path) -> tuple[list[str], str]:
    """Builds the backend's project (and installs its package); (the runner's backend defines, its prefix)."""
    import backend_kit

    out = args.out
    build, install = out / "backend", out / "backend-install"
    defines = [*common, f"-DCMAKE_PREFIX_PATH={sdk}", f"-DBackendKit_DIR={backend_kit.cmake_dir()}"]
    if args.backend_library:
        name = args.backend_library.removeprefix("lib").removesuffix(".so")
        configure_and_build(args.backend_source.resolve(), build, defines, target=name)
        return [f"-DRUNNER_BACKEND_LIBRARIES={build / f'lib{name}.so'}"], str(sdk)
    configure_and_build(args.backend_source.resolve(), build, [*defines, f"-DCMAKE_INSTALL_PREFIX={install}"])
    run([tool("cmake"), "--install", str(build)], "installing the backend")
    package = [
        f"-DRUNNER_BACKEND_PACKAGE={args.backend_package}",
        f"-DRUNNER_BACKEND_TARGET={args.backend_target}",
    ]
    return package, f"{sdk};{install}"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    args.out = (args.out or REPO / "build" / "cross" / args.arch).resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        toolchain, compiler, sdk, source, digest = prepare(args)
    except Refused as exc:
        print(f"cross_build_runner: {exc}", file=sys.stderr)
        return 2
    fetched = time.monotonic()
    common = [*toolchain, *args.cmake_arg]
    runner_backend, prefix = build_backend(args, common, sdk)
    backend_done = time.monotonic()
    if args.no_runner:
        print(
            f"cross_build_runner: the backend for {args.arch} ({source}) is in {args.out / 'backend-install'}"
        )
        return 0
    runner_dir = args.out / "runner"
    configure_and_build(
        REPO / "conformance" / "device_runner",
        runner_dir,
        [*common, f"-DCMAKE_PREFIX_PATH={prefix}", *runner_backend],
    )
    runner = runner_dir / "conformance_runner"
    shipped = [runner, *sorted((runner_dir / "lib").glob("*.so*"))]
    ours, ours_symbols = glibc_needed(shipped)
    theirs, _ = glibc_needed(sorted((runner_dir / "executorch" / "lib").glob("*.so*")))
    info = {
        "arch": args.arch,
        "created": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
        "executorch": source,
        "executorch_sha256": digest,
        "toolchain": toolchain[0].split("=", 1)[1].replace(f"{REPO}/", "")
        if toolchain
        else "this host's compiler",
        "compiler": run([compiler, "--version"], "asking the compiler its version").splitlines()[0],
        "runner": str(runner),
        "glibc_needed": ours,
        "glibc_needed_by": ours_symbols,
        "executorch_glibc_needed": theirs,
        "seconds": {
            "executorch": round(fetched - started, 1),
            "backend": round(backend_done - fetched, 1),
            "runner": round(time.monotonic() - backend_done, 1),
            "total": round(time.monotonic() - started, 1),
        },
    }
    (args.out / "cross-build.json").write_text(json.dumps(info, indent=1) + "\n")
    print(
        f"cross_build_runner: {runner} for {args.arch} ({source}) in {info['seconds']['total']} s; the target "
        f"needs glibc >= {ours} ({', '.join(ours_symbols[:4])}; executorch's own libraries: >= {theirs})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
