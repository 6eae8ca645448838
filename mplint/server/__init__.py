"""``mplint server``: a language server for editors (the ``lsp`` extra: pygls).

pygls is an optional dependency, imported only when the server starts; without it
the command says so in one line and exits 2.
"""

from __future__ import annotations

import argparse
import io
import os
import shlex
import sys
from typing import BinaryIO, Optional, Sequence, Tuple, cast

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
    stdin, stdout = _protocol_streams()
    make_server().start_io(stdin, stdout)
    return 0


def _protocol_streams() -> Tuple[BinaryIO, BinaryIO]:
    """stdin and stdout, taken from ``sys`` for the protocol alone.

    Anything printed by mistake goes to stderr instead of corrupting the protocol on
    stdout. And ``sys.stdin`` no longer holds the protocol's reader: pygls reads it in
    a thread, which holds the reader's lock while it waits for the client, and a
    forked process closes ``sys.stdin`` first thing (multiprocessing does), so the
    index's forked workers (the ``file-timeout`` budget, :mod:`mplint.run.pool`)
    would wait for that lock for ever.
    """
    stdout = sys.stdout.buffer
    sys.stdout = sys.stderr
    # detached: the wrapper, dropped, must not close the protocol's reader
    stdin = cast(BinaryIO, cast(io.TextIOWrapper, sys.stdin).detach())
    sys.stdin = open(os.devnull, encoding="utf-8")
    return stdin, stdout
