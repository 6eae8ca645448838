"""``mplint server``: a language server for editors (the ``lsp`` extra: pygls).

pygls is an optional dependency, imported only when the server starts; without it
the command says so in one line and exits 2.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Optional, Sequence

#: what the ``lsp`` extra adds (pyproject.toml; tests/test_server.py keeps them equal)
PYGLS_REQUIREMENT = "pygls>=2.0,<3"
#: this interpreter's pip, not whichever comes first on PATH: mplint is not on PyPI,
#: so ``pip install "mplint[lsp]"`` works only with the pip of mplint's own environment
INSTALL_HINT = ("the language server needs pygls (mplint's lsp extra): "
                f'{shlex.quote(sys.executable or "python3")} -m pip install "{PYGLS_REQUIREMENT}"')


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mplint server",
        description="Speak the Language Server Protocol over stdio: diagnostics and fixes in the editor.")
    # Editors' LSP clients commonly pass --stdio; it is the only transport.
    parser.add_argument("--stdio", action="store_true", help="communicate over stdin/stdout (the default)")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        from mplint.server.app import make_server
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in ("pygls", "lsprotocol", "cattrs", "attrs"):
            raise
        print(f"mplint: error: {INSTALL_HINT}", file=sys.stderr)
        return 2
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    # The protocol owns stdout: anything printed by mistake goes to stderr instead.
    sys.stdout = sys.stderr
    make_server().start_io(stdin, stdout)
    return 0
