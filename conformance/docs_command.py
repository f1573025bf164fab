"""``executorch-conformance docs [NAME]``: the suite's documents, shipped in the package.

    executorch-conformance docs                  # each document: its name and title
    executorch-conformance docs certification    # the text of docs/certification.md
    executorch-conformance docs contract --path  # where it is installed

Help texts and error messages cite documents as ``docs/NAME.md``; this command reads them from the
installed package (``conformance/docs``, the repository's ``docs/`` folder), so a vendor who installed
the wheel needs no checkout.

Exit codes
  docs: 0 shown; 2 no document of that NAME (one line naming the documents there are).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

#: Where the documents are: conformance/docs in the package (in a checkout, a link to docs/).
DOCS_DIR = Path(__file__).resolve().parent / "docs"
EXIT_OK, EXIT_USAGE = 0, 2


def documents() -> dict[str, Path]:
    """Name (the file's stem) -> path of every document shipped."""
    return {p.stem: p for p in sorted(DOCS_DIR.glob("*.md"))}


def title(path: Path) -> str:
    """The document's first heading, without its #s."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return ""


def find(name: str) -> Path:
    """The document called ``name`` (``certification``, ``certification.md`` or ``docs/certification.md``);
    LookupError naming the documents there are."""
    stem = Path(name).name.removesuffix(".md")
    found = documents()
    if stem not in found:
        raise LookupError(f"no document {name!r}; the documents are: {', '.join(found) or 'none'}")
    return found[stem]


def _docs(args: argparse.Namespace) -> int:
    if args.name is None:
        for name, path in documents().items():
            print(f"{name:20} {title(path)}")
        return EXIT_OK
    try:
        path = find(args.name)
    except LookupError as exc:
        print(f"executorch-conformance docs: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.path:
        print(path)
    else:
        sys.stdout.write(path.read_text(encoding="utf-8"))
    return EXIT_OK


def add_subcommand(subparsers) -> None:
    """Adds the ``docs`` command to the executorch-conformance parser."""
    parser = subparsers.add_parser(
        "docs",
        help="read the suite's documents (docs/NAME.md) from the installed package",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("name", nargs="?", metavar="NAME", help="a document, as docs/NAME.md names it")
    parser.add_argument("--path", action="store_true", help="print where the document is, not its text")
    parser.set_defaults(func=_docs)
