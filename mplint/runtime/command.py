"""``mplint runtime TARGET``: the runtime checker's command line (parsed here, not in cli.py,
so that nothing of it loads unless the subcommand runs).

Exit codes as for ``mplint check``: 0 no findings, 1 findings, 2 error (TensorFlow
missing, a target that cannot be loaded, a model that cannot be built or run).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Optional, Sequence, Tuple

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mplint runtime",
        description="Build a Keras model under a dtype policy, run it on this machine, and "
                    "report mixed-precision problems with the static rules' ids.")
    parser.add_argument("target", help="pkg.module:factory, path/to/file.py:factory (a zero-argument "
                                       "function returning a Keras model), or a saved .keras file")
    parser.add_argument("--policy", choices=("mixed_float16", "mixed_bfloat16"),
                        help="default: mixed_float16 on NVIDIA GPUs, mixed_bfloat16 on TPUs and CPUs")
    parser.add_argument("--input-shape", action="append", type=_shape, metavar="D1,D2,...",
                        help="input shape without the batch dimension (repeat for several inputs); "
                             "default: the model's own inputs")
    parser.add_argument("--input-dtype", help="dtype of synthetic inputs given by --input-shape "
                                              "(default float32; int32 for token ids)")
    parser.add_argument("--batch-size", type=int, help="batch of the synthetic inputs (default: the "
                                                        "model's fixed batch, else 8)")
    parser.add_argument("--alignment", type=int, default=8,
                        help="dimension multiple for Tensor Cores (default 8; 128 suits TPUs)")
    parser.add_argument("--train-step", action="store_true",
                        help="also run one training step and measure gradient underflow")
    parser.add_argument("--output-format", choices=("text", "json"), default="text")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
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


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    if args.batch_size is not None and args.batch_size <= 0:
        return _error("--batch-size must be positive")
    from mplint.runtime import INSTALL_HINT, MissingTensorFlow, require_tensorflow

    # TensorFlow's C++ INFO/WARNING lines would bury the report; the user's setting wins.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        require_tensorflow()
    except MissingTensorFlow:
        return _error(INSTALL_HINT)
    from mplint.runtime.check import CheckError, check_model
    from mplint.runtime.probe import InputShapeError
    from mplint.runtime.target import TargetError, load_target

    try:
        target = load_target(args.target)
        model_or_factory = target.factory() if target.saved_file else target.factory
        report = check_model(model_or_factory, args.policy, input_shape=args.input_shape,
                             input_dtype=args.input_dtype, batch_size=args.batch_size,
                             alignment=args.alignment, train_step=args.train_step,
                             target=args.target, saved_file=target.saved_file)
    except MissingTensorFlow:
        return _error(INSTALL_HINT)
    except (TargetError, CheckError, InputShapeError) as exc:
        return _error(str(exc))
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # the user's factory or module raised: say what, in one line
        return _error(f"{args.target}: {type(exc).__name__}: {_first_line(exc)}")
    sys.stdout.write(report.to_json() if args.output_format == "json" else report.to_text())
    return EXIT_FINDINGS if report.findings and not args.exit_zero else EXIT_OK


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""

