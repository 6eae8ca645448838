"""What a run stopped by Ctrl-C says and exits with, the same wherever it stops: while
mplint loads (:mod:`mplint.launch`), during a check or fix (:mod:`mplint.cli`), or in
``mplint runtime``."""

#: the exit code of a run stopped by Ctrl-C (128 + SIGINT, as shells and ruff use)
EXIT_INTERRUPTED = 130
INTERRUPTED = "mplint: interrupted"
