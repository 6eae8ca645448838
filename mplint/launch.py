"""The command's entry point. It imports nothing before it can catch Ctrl-C, so an
interrupt while mplint is still loading is the same one line and exit code as an
interrupt during a run (a traceback otherwise, on a slow or loaded machine)."""

import sys

from mplint.interrupts import EXIT_INTERRUPTED, INTERRUPTED


def main() -> int:
    try:
        from mplint.cli import main as cli_main
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return EXIT_INTERRUPTED
    return cli_main()
