"""``mplint runtime TARGET``: the runtime checker's command line (parsed here, not in cli.py,
so that nothing of it loads unless the subcommand runs).

Exit codes as for ``mplint check``: 0 no findings, 1 findings, 2 error (TensorFlow
missing, a target that cannot be loaded, a model that cannot be built or run, a wrong
option or configuration), 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any, Iterator, List, Optional, Sequence, Tuple

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mplint runtime",
        description="Build a Keras model under a dtype policy, run it on this machine, and "
                    "report mixed-precision problems with the static rules' ids.")
    parser.add_argument("target", help="pkg.module:factory, path/to/file.py:factory (a zero-argument "
                                       "function returning a Keras model), or a saved .keras file")
    parser.add_argument("--policy", choices=("mixed_float16", "mixed_bfloat16"),
                        help="check under this policy only (default: both, whatever the hardware; a "
                             "built model's own mixed policy)")
    parser.add_argument("--input-shape", action="append", type=_shape, metavar="D1,D2,...",
                        help="input shape without the batch dimension (repeat for several inputs); "
                             "default: the model's own inputs")
    parser.add_argument("--input-dtype", help="dtype of synthetic inputs given by --input-shape "
                                              "(default float32; int32 for token ids)")
    parser.add_argument("--batch-size", type=int, help="batch of the synthetic inputs (default: the "
                                                        "model's fixed batch, else 8)")
    parser.add_argument("--alignment", type=int,
                        help="dimension multiple for matrix units (default 8, or [tool.mplint] "
                             "alignment; 128 suits TPUs)")
    parser.add_argument("--train-step", action="store_true",
                        help="also run the model's own train_step under the policy and in float32 "
                             "and compare the weight updates")
    parser.add_argument("--measure", action="store_true",
                        help="time float32 against each mixed policy this hardware supports, and each "
                             "alignment finding's layer against its aligned size")
    parser.add_argument("--seed", type=int, default=None, metavar="N",
                        help="start the random generators (initial weights, synthetic data) here, so "
                             "every run gives the same verdict (default 0; a TensorFlow seed the "
                             "target's own code sets is kept)")
    parser.add_argument("--time-budget", type=float, metavar="SECONDS",
                        help="skip the optional stages (the second policy, the float32 comparison, the "
                             "training step) once this many seconds are spent")
    parser.add_argument("--select", help="comma-separated rule ids or prefixes to report (replaces "
                                         "[tool.mplint] select)")
    parser.add_argument("--ignore", help="comma-separated rule ids or prefixes not to report (added to "
                                         "[tool.mplint] ignore)")
    parser.add_argument("--config", type=Path, help="pyproject.toml to read [tool.mplint] from "
                                                    "(default: the nearest one above the target)")
    parser.add_argument("--output-format", choices=("text", "json"), default="text")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    return parser


def _shape(text: str) -> Tuple[int, ...]:
    try:
        dims = tuple(int(part) for part in text.replace("x", ",").split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected comma-separated integers, e.g. 28,28,1")
    if not dims or any(d <= 0 for d in dims):
        raise argparse.ArgumentTypeError(f"{text!r}: expected positive integers, e.g. 28,28,1")
    return dims


def _error(message: str) -> int:
    print(f"mplint: error: {message}", file=sys.stderr)
    return EXIT_ERROR


# TensorFlow's native log lines (absl/glog format) and its start-up banners: the CUDA
# initialisation error on a machine without a GPU, oneDNN and CPU-feature notices.
_NATIVE_LOG = re.compile(
    r"^(?:[IWEF]\d{4} \d\d:\d\d:\d+\.\d+\s+\d+ [\w.\-/]+:\d+\]"
    r"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWEF] [\w./\-]+:\d+\]"
    r"|WARNING: All log messages before absl::InitializeLog\(\) is called"
    r"|To enable the following instructions:"
    r"|Could not find cuda drivers on your machine"
    r")")


@contextlib.contextmanager
def native_lines_hidden() -> Iterator[None]:
    """Keep TensorFlow's native log lines off the user's stderr: file descriptor 2 is sent
    to a temporary file while the check runs, and afterwards every line that is not a
    native log line is written back (progress lines go to a copy of the real stderr)."""
    try:
        fd = sys.__stderr__.fileno() if sys.__stderr__ is not None else 2
        saved = os.dup(fd)
    except (AttributeError, OSError, ValueError):
        yield
        return
    with tempfile.TemporaryFile() as sink:
        sys.stderr.flush()
        os.dup2(sink.fileno(), fd)
        try:
            yield
        finally:
            try:
                sys.stderr.flush()
            except (OSError, ValueError):
                pass
            os.dup2(saved, fd)
            os.close(saved)
            sink.seek(0)
            text = sink.read().decode("utf-8", errors="replace")
            kept = [line for line in text.splitlines() if line.strip() and not _NATIVE_LOG.match(line)]
            if kept:
                sys.stderr.write("\n".join(kept) + "\n")


class StderrProgress:
    """Stage lines on stderr, only for a check that runs longer than ``delay`` seconds."""

    def __init__(self, delay: float = 2.0) -> None:
        self.started = time.perf_counter()
        self.current: Optional[str] = None
        self.live = False
        self.lock = threading.Lock()
        self.stream = self._open_stream()
        self.timer = threading.Timer(delay, self._go_live)
        self.timer.daemon = True
        self.timer.start()

    @staticmethod
    def _open_stream() -> IO[str]:
        # A copy of the real stderr: lines stay visible while fd 2 is redirected above.
        try:
            if sys.stderr is sys.__stderr__ and sys.__stderr__ is not None:
                return open(os.dup(sys.__stderr__.fileno()), "w", buffering=1, encoding="utf-8")
        except (AttributeError, OSError, ValueError):
            pass
        return sys.stderr

    def __call__(self, message: str) -> None:
        with self.lock:
            self.current = message
            if self.live:
                self._write(message)

    def _go_live(self) -> None:
        with self.lock:
            self.live = True
            if self.current:
                self._write(self.current)

    def _write(self, message: str) -> None:
        try:
            self.stream.write(f"mplint runtime: {message} ({time.perf_counter() - self.started:.0f} s)\n")
            self.stream.flush()
        except (OSError, ValueError):
            pass

    def close(self) -> None:
        self.timer.cancel()
        with self.lock:
            self.live = False
        if self.stream is not sys.stderr:
            try:
                self.stream.close()
            except OSError:
                pass


def _no_progress(message: str) -> None:
    pass


INPUT_DTYPES = ("float32", "float16", "bfloat16", "float64", "int32", "int64", "int16", "int8", "uint8",
                "bool")


def main(argv: Optional[Sequence[str]] = None) -> int:
    started = time.perf_counter()
    args = build_parser().parse_args(argv)
    args.started = started
    if args.input_dtype is not None and args.input_dtype not in INPUT_DTYPES:
        return _error(f"--input-dtype {args.input_dtype!r}: expected one of {', '.join(INPUT_DTYPES)}")
    if args.batch_size is not None and args.batch_size <= 0:
        return _error("--batch-size must be positive")
    if args.time_budget is not None and args.time_budget <= 0:
        return _error("--time-budget must be a positive number of seconds")
    if args.alignment is not None and args.alignment <= 0:
        return _error("--alignment must be positive")
    from mplint.runtime import config as runtime_config

    try:
        select = runtime_config.split_codes(args.select)
        ignore = runtime_config.split_codes(args.ignore)
        for codes, what in ((select, "--select"), (ignore, "--ignore")):
            runtime_config.check_codes(codes or [], what)
        if args.config is not None and not args.config.is_file():
            return _error(f"{args.config}: no such file")
        start = _target_folder(args.target)
        settings = runtime_config.load(args.config, start)
        runtime_config.check_codes(settings.select + settings.ignore, str(settings.path))
    except runtime_config.ConfigError as exc:
        return _error(str(exc))
    select = select if select is not None else (settings.select or None)
    ignore = settings.ignore + (ignore or [])
    alignment = args.alignment or settings.alignment or 8

    progress = _no_progress if args.quiet else StderrProgress()
    # TensorFlow's native log lines (start-up banners, the CUDA initialisation error on a
    # machine without a GPU, oneDNN notices) stay off stderr unless the user asked for
    # them with TF_CPP_MIN_LOG_LEVEL; everything else written there is kept.
    user_log_level = "TF_CPP_MIN_LOG_LEVEL" in os.environ
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    hide = contextlib.nullcontext() if user_log_level else native_lines_hidden()
    try:
        with hide:
            return _run(args, progress, select, ignore, alignment, settings.vocabulary_threshold)
    except KeyboardInterrupt:
        print("mplint: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        if isinstance(progress, StderrProgress):
            progress.close()


def _target_folder(target: str) -> Path:
    path_part = target.rpartition(":")[0] if ":" in os.path.basename(target) else target
    if path_part.endswith((".py", ".keras", ".h5", ".hdf5")) or "/" in path_part or os.sep in path_part:
        return Path(path_part).resolve().parent
    return Path.cwd()


def _run(args: argparse.Namespace, progress: Any, select: Optional[List[str]], ignore: List[str],
         alignment: int, vocabulary_threshold: Optional[int]) -> int:
    from mplint.runtime.requirements import INSTALL_HINT, MissingTensorFlow, require_tensorflow

    progress("importing TensorFlow")
    try:
        require_tensorflow()
    except MissingTensorFlow:
        return _error(INSTALL_HINT)
    from mplint.runtime.check import CheckError, check_model
    from mplint.runtime.probe import InputShapeError, first_line
    from mplint.runtime.rules import VOCAB_MIN
    from mplint.runtime.seeding import DEFAULT_SEED
    from mplint.runtime.target import TargetError, load_target

    try:
        progress(f"loading {args.target}")
        target = load_target(args.target)
        model_or_factory = target.factory() if target.saved_file else target.factory
        report = check_model(model_or_factory, args.policy, input_shape=args.input_shape,
                             input_dtype=args.input_dtype, batch_size=args.batch_size,
                             alignment=alignment, train_step=args.train_step,
                             target=args.target, saved_file=target.saved_file, select=select,
                             ignore=ignore, time_budget=args.time_budget, progress=progress,
                             measure=args.measure, seed=DEFAULT_SEED if args.seed is None else args.seed,
                             vocabulary_threshold=vocabulary_threshold or VOCAB_MIN)
    except MissingTensorFlow:
        return _error(INSTALL_HINT)
    except (TargetError, CheckError, InputShapeError) as exc:
        return _error(str(exc))
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # the user's factory or module raised: say what, in one line
        return _error(f"{args.target}: {type(exc).__name__}: {first_line(exc)}")
    if isinstance(progress, StderrProgress):
        progress.close()
    report.elapsed_s = time.perf_counter() - args.started  # the whole command, TensorFlow's import included
    sys.stdout.write(report.to_json() if args.output_format == "json" else report.to_text())
    sections = report.train_step or []
    skipped = [s for s in sections if s.get("skipped") and "time budget" not in s["skipped"]]
    # --train-step asked for a check that did not run: not a pass, unless the other policy
    # of the default pair ran it (a Keras 2 step that calls get_scaled_loss has no
    # LossScaleOptimizer under mixed_bfloat16).
    failed = bool(skipped) and (report.policy_source != "default" or len(skipped) == len(sections))
    for section in skipped:
        print(f"mplint: {'error' if failed else 'warning'}: --train-step was not checked under "
              f"{section.get('policy')}: {section['skipped']}", file=sys.stderr)
    if failed:
        return EXIT_ERROR
    return EXIT_FINDINGS if report.findings and not args.exit_zero else EXIT_OK
