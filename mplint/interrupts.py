"""What a run stopped by Ctrl-C says and exits with, the same wherever it stops: while
mplint loads (:mod:`mplint.launch`) or during a check or fix (:mod:`mplint.cli`).
``mplint runtime`` says the same, from its own constants: the runtime checker imports
nothing else of mplint (tests/test_runtime.py holds it)."""

#: the exit code of a run stopped by Ctrl-C (128 + SIGINT, as shells and ruff use)
EXIT_INTERRUPTED = 130
INTERRUPTED = "mplint: interrupted"
