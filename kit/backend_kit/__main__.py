"""python -m backend_kit cmake-dir | include-dir | template-dir | version"""

from __future__ import annotations

import argparse

import backend_kit


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m backend_kit", description=__doc__)
    parser.add_argument("what", choices=["cmake-dir", "include-dir", "template-dir", "version"])
    args = parser.parse_args(argv)
    if args.what == "cmake-dir":
        print(backend_kit.cmake_dir())
    elif args.what == "include-dir":
        print(backend_kit.include_dir())
    elif args.what == "template-dir":
        print(backend_kit.template_dir())
    else:
        print(backend_kit.__version__)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
