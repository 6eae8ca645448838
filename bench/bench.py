#!/usr/bin/env python3
"""Time mplint against raw libcst parsing of the same files, in one run; ratios last.

    python bench/bench.py FOLDER [--runs 3] [--jobs 2]
    python bench/bench.py --synthetic 600 [--seed 1] [--runs 3]

Every figure times a whole process from outside (start-up, imports and discovery
included; CPU time and peak memory come from ``os.wait4``, so reaped workers
count). The timed commands, run in turn A B C D E once per round so a noisy
machine's drift spreads over all of them:

- ``libcst-parse j1`` / ``j2``: ``libcst.parse_module`` on every ``.py`` file
  mplint discovers, in one process and with a fork pool of two;
- ``mplint cold``: ``mplint check --no-cache``;
- ``mplint warm``: ``mplint check`` with its cache filled by an untimed run;
- ``mplint cold, all mixed``: ``--no-cache --assume-policy mixed_float16``, the
  worst case: every rule applies to every file, so the prescan parses every
  TensorFlow file (it shows what the rules themselves cost).

``--only`` times some rows (``--only parse-j2,pre-commit-cached,pre-commit-cold``), and
``--mplint DIR`` times the mplint whose source is in ``DIR`` (another checkout: the
figures before a change), with its own cache folder.

The goals are set on tensorflow/models' ``official/`` tree as the tf-models-official
2.20.0 wheel ships it (``pip download --no-deps tf-models-official==2.20.0``, then
``python -m zipfile -e WHEEL DIR``; 1,216 files). The synthetic corpus mixes mixed-precision-heavy Keras files (models, custom
training loops, policy setup) with plain Python utility modules, about three to
one like tensorflow/models. The cache folder the warm runs create is removed
afterwards unless it was there before.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# -- the parse baseline (run as a child process of this script) -----------------------
def _parse_one(path: str) -> int:
    import libcst

    with open(path, "rb") as handle:
        data = handle.read()
    try:
        libcst.parse_module(data)
    except Exception:  # a file libcst cannot parse costs its attempt, like mplint's
        return 1
    return 0


def parse_main(list_file: str, jobs: int) -> int:
    import libcst  # noqa: F401 (imported before forking, as mplint does)

    with open(list_file, encoding="utf-8") as handle:
        files = handle.read().splitlines()
    if jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            failed = sum(pool.imap_unordered(_parse_one, files, chunksize=4))
    else:
        failed = sum(map(_parse_one, files))
    print(f"parsed {len(files)} files, {failed} failed")
    return 0


# -- the synthetic corpus -----------------------------------------------------------------
_MODEL = '''\
"""Model {n}: a {kind} network trained under a mixed precision policy."""
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers

UNITS = {units}


def build_{n}(num_classes={classes}):
    inputs = keras.Input(shape=({width},))
    x = inputs
    for i in range({depth}):
        x = layers.Dense(UNITS, activation="relu", name=f"dense_{{i}}")(x)
        x = layers.Dropout(0.1)(x)
    x = layers.Dense(num_classes)(x)
    outputs = layers.Activation("softmax", dtype="float32")(x)
    return keras.Model(inputs, outputs)
'''

_LOOP = '''\


class Trainer{n}:
    """A custom training loop with loss scaling."""

    def __init__(self, model, learning_rate={lr}):
        self.model = model
        optimizer = keras.optimizers.Adam(learning_rate)
        self.optimizer = keras.mixed_precision.LossScaleOptimizer(optimizer)
        self.loss_fn = keras.losses.SparseCategoricalCrossentropy()

    @tf.function
    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            logits = self.model(x, training=True)
            loss = self.loss_fn(y, logits)
            scaled = self.optimizer.get_scaled_loss(loss)
        grads = tape.gradient(scaled, self.model.trainable_variables)
        grads = self.optimizer.get_unscaled_gradients(grads)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        return loss

    def fit(self, dataset, epochs={epochs}):
        history = []
        for epoch in range(epochs):
            total = 0.0
            for step, (x, y) in enumerate(dataset):
                total += float(self.train_step(x, y))
                if step % 100 == 0:
                    print(f"epoch {{epoch}} step {{step}} loss {{total / (step + 1):.4f}}")
            history.append(total)
        return history
'''

_PLAIN = '''\
"""Utility module {n}: configuration and text helpers (no TensorFlow here)."""
from __future__ import annotations

import argparse
import dataclasses
import json
import re
from typing import Dict, List, Optional


@dataclasses.dataclass
class Config{n}:
    name: str = "run-{n}"
    steps: int = {steps}
    tags: List[str] = dataclasses.field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)


def parse_args{n}(argv: Optional[List[str]] = None) -> Config{n}:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="run-{n}")
    parser.add_argument("--steps", type=int, default={steps})
    args = parser.parse_args(argv)
    return Config{n}(args.name, args.steps)
'''

_PLAIN_FN = '''\


def helper_{n}_{i}(text: str, table: Dict[str, int]) -> List[str]:
    """Split, normalise and count words; returns the ones seen {i} times or more."""
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", text)]
    for word in words:
        table[word] = table.get(word, 0) + 1
    result = sorted(w for w, c in table.items() if c >= {i})
    if len(result) > {steps}:
        result = result[:{steps}]
    return result
'''

_TRAIN = '''\
"""Entry point: the policy is a command-line choice."""
import argparse

import tensorflow as tf


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--amp", action="store_true")
    args = parser.parse_args(argv)
    policy = "mixed_float16" if args.amp else "float32"
    tf.keras.mixed_precision.set_global_policy(policy)
'''


def synthesize(folder: str, count: int, seed: int) -> None:
    """Write ``count`` files: about 3 in 4 Keras-heavy, averaging ~200 lines."""
    rng = random.Random(seed)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "setup.cfg"), "w", encoding="utf-8") as handle:
        handle.write("[metadata]\nname = synthetic\n")
    # The loops use the Keras 2 loss-scaling API: declare it, or a machine with
    # Keras 3 installed would find every loop broken (MP207) and time the reporting.
    with open(os.path.join(folder, "requirements.txt"), "w", encoding="utf-8") as handle:
        handle.write("tensorflow>=2.12,<2.16\n")
    with open(os.path.join(folder, "train.py"), "w", encoding="utf-8") as handle:
        handle.write(_TRAIN)
    for n in range(count):
        package = os.path.join(folder, f"pkg{n % 12}")
        os.makedirs(package, exist_ok=True)
        if rng.random() < 0.74:
            parts = [_MODEL.format(n=n, kind=rng.choice(["dense", "wide", "deep"]),
                                   units=rng.choice([64, 128, 256, 512]), classes=rng.randint(2, 1000),
                                   width=rng.choice([32, 784, 1024]), depth=rng.randint(1, 6))]
            parts += [_LOOP.format(n=f"{n}_{k}", lr=rng.choice([1e-3, 3e-4]), epochs=rng.randint(1, 50))
                      for k in range(rng.randint(2, 6))]
        else:
            steps = rng.randint(10, 1000)
            parts = [_PLAIN.format(n=n, steps=steps)]
            parts += [_PLAIN_FN.format(n=n, i=i, steps=steps) for i in range(rng.randint(6, 16))]
        with open(os.path.join(package, f"module_{n}.py"), "w", encoding="utf-8") as handle:
            handle.write("".join(parts))


# -- timing ---------------------------------------------------------------------------------
@dataclass
class Tool:
    key: str
    name: str
    argv: List[str]
    runs: List[tuple] = field(default_factory=list)  # (wall, cpu, peak MB, rc)
    #: run before each timed run, untimed (an edit to another file, for pre-commit)
    prepare: Optional[Callable[[], None]] = None

    def median(self, index: int = 0) -> float:
        return statistics.median(r[index] for r in self.runs)


def run_once(argv: List[str], cwd: str, env: dict) -> tuple:
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    rc = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
    if rc not in (0, 1):
        print(f"  {' '.join(argv[:4])}... exited {rc}: {err.strip()[-300:]}", file=sys.stderr)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0, rc


def discover_files(folder: str) -> List[str]:
    """The .py files ``mplint check FOLDER`` looks at (its own discovery, default settings)."""
    sys.path.insert(0, ROOT)
    from mplint.rule.catalog import load_catalog
    from mplint.run.config import find_config, load_settings
    from mplint.run.discovery import discover

    settings = load_settings(find_config(Path(folder)), load_catalog(), root=Path(folder))
    found = discover([folder], settings.root, settings.exclude, settings.respect_gitignore)
    return [os.path.abspath(p) for p in found.files if p.endswith(".py")]


def rate(x: float) -> str:
    return f"{x / 1e6:.2f}M" if x >= 1e6 else f"{x / 1e3:.1f}k" if x >= 1e3 else f"{x:.0f}"


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", help="any folder of Python code")
    ap.add_argument("--synthetic", type=int, metavar="N", help="generate N files and time on them")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2, help="mplint's --jobs (the parse runs j1 and j2)")
    ap.add_argument("--only", metavar="ROWS", help="comma-separated rows: " + ", ".join(ROWS))
    ap.add_argument("--mplint", metavar="DIR", default=ROOT, help="the mplint source to time (default: this checkout)")
    ap.add_argument("--parse", metavar="LIST", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.parse:
        return parse_main(args.parse, args.jobs)
    if bool(args.folder) == bool(args.synthetic):
        ap.error("give a FOLDER or --synthetic N")
    scratch = tempfile.mkdtemp(prefix="mplint-bench-")
    try:
        folder = os.path.abspath(args.folder) if args.folder else os.path.join(scratch, "corpus")
        if args.synthetic:
            synthesize(folder, args.synthetic, args.seed)
        return _bench(folder, scratch, args)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _bench(folder: str, scratch: str, args: argparse.Namespace) -> int:
    files = discover_files(folder)
    lines = 0
    for path in files:
        with open(path, "rb") as handle:
            lines += handle.read().count(b"\n")
    list_file = os.path.join(scratch, "files.txt")
    with open(list_file, "w", encoding="utf-8") as handle:
        handle.write("\n".join(files))
    source = os.path.abspath(args.mplint)
    env = dict(os.environ, PYTHONPATH=source + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if source != ROOT:  # another mplint's results and program model must not meet this one's
        env["MPLINT_CACHE_DIR"] = os.path.join(scratch, "mplint-cache")
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed mplint has its .pyc files
    py = sys.executable
    mplint = [py, "-m", "mplint", "check", "--exit-zero", "-q", "--jobs", str(args.jobs), "."]
    one, other = _pre_commit_files(files)
    edits = [0]

    def edit_other() -> None:  # another file of the project changed since the last run
        edits[0] += 1
        with open(other, "ab") as handle:
            handle.write(f"\n# mplint bench edit {edits[0]}\n".encode())

    with open(other, "rb") as handle:
        other_original = handle.read()
    single = [py, "-m", "mplint", "check", "--exit-zero", "-q", os.path.relpath(one, folder)]
    parse = [py, os.path.abspath(__file__), "--parse", list_file, "--jobs"]
    tools = [
        Tool("parse-j1", "libcst-parse j1", parse + ["1"]),
        Tool("parse-j2", "libcst-parse j2", parse + ["2"]),
        Tool("cold", "mplint cold (--no-cache)", mplint[:4] + ["--no-cache"] + mplint[4:]),
        Tool("warm", "mplint warm", mplint, prepare=lambda: run_once(mplint, folder, env) and None),
        Tool("mixed", "mplint cold, all mixed",
             mplint[:4] + ["--no-cache", "--assume-policy", "mixed_float16"] + mplint[4:]),
        # Each round: a one-file run fills the cache (untimed, as the ``warm`` row's full
        # run does), then another file of the tree is edited, then the timed run.
        Tool("pre-commit-cached", "pre-commit 1 file, cached", single,
             prepare=lambda: (run_once(single, folder, env), edit_other()) and None),
        Tool("pre-commit-cold", "pre-commit 1 file, no cache", single[:4] + ["--no-cache"] + single[4:]),
    ]
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - set(ROWS)
        if unknown:
            raise SystemExit(f"bench: unknown rows {', '.join(sorted(unknown))}; the rows are {', '.join(ROWS)}")
        tools = [tool for tool in tools if tool.key in wanted]
    cache = os.path.join(folder, ".mplint_cache")
    had_cache = os.path.exists(cache)
    print(f"corpus: {folder}: {len(files)} files, {lines} lines; {args.runs} rounds", file=sys.stderr)
    try:
        for tool in tools:  # warm-up: .pyc files, page cache, and the filled mplint cache
            run_once(tool.argv, folder, env)
        for round_no in range(args.runs):
            for tool in tools:
                if tool.prepare is not None:
                    tool.prepare()
                tool.runs.append(run_once(tool.argv, folder, env))
                wall, cpu, peak, _ = tool.runs[-1]
                print(f"  round {round_no + 1} {tool.name}: {wall:.2f}s cpu {cpu:.2f}s peak {peak:.0f} MB",
                      file=sys.stderr)
    finally:
        with open(other, "wb") as handle:
            handle.write(other_original)
        if not had_cache:
            shutil.rmtree(cache, ignore_errors=True)
    print(f"corpus: {folder}: {len(files)} files, {lines} lines; median of {args.runs} rounds; mplint from {source}")
    print(f"{'command':28} {'wall s':>8} {'cpu s':>8} {'peak MB':>8} {'files/s':>9} {'lines/s':>9}")
    for tool in tools:
        wall = tool.median(0)
        print(f"{tool.name:28} {wall:8.2f} {tool.median(1):8.2f} {max(r[2] for r in tool.runs):8.0f} "
              f"{rate(len(files) / wall):>9} {rate(lines / wall):>9}")
    row = {tool.key: tool for tool in tools}
    j1, j2 = row.get("parse-j1"), row.get("parse-j2")

    def ratio(a: Tool, b: Tool) -> float:  # pairwise per round, then the median
        return statistics.median(x[0] / y[0] for x, y in zip(a.runs, b.runs))

    cold, warm, mixed = row.get("cold"), row.get("warm"), row.get("mixed")
    if cold and j2:
        cpu = statistics.median(x[1] / y[1] for x, y in zip(cold.runs, j2.runs))
        print(f"RATIO (cpu time, steadier on a busy machine) cold / libcst-parse j2 = {cpu:.2f}")
        print(f"RATIO cold / libcst-parse j2 = {ratio(cold, j2):.2f}   (goal <= 0.8 on tensorflow/models' official/)")
    if cold and j1:
        print(f"RATIO cold / libcst-parse j1 = {ratio(cold, j1):.2f}   (goal <= 0.2, i.e. 5x faster, "
              f"on a tree that mostly never touches TensorFlow)")
    if warm and cold:
        print(f"RATIO warm / cold = {ratio(warm, cold):.3f}   (goal < 0.05); warm = {warm.median(0):.2f} s "
              f"(goal < 0.5 s)")
    if mixed and j2:
        print(f"RATIO cold, all mixed / libcst-parse j2 = {ratio(mixed, j2):.2f}   (goal <= 1.2: every rule on every file)")
    one_cached, one_cold = row.get("pre-commit-cached"), row.get("pre-commit-cold")
    where = f"pre-commit on {os.path.relpath(one, folder)} after an edit to {os.path.relpath(other, folder)}:"
    if one_cached:
        print(f"{where} cached {one_cached.median(0):.2f} s, cpu {one_cached.median(1):.2f} s (goal <= 0.3 s)")
    if one_cold:
        print(f"{where} no cache {one_cold.median(0):.2f} s, cpu {one_cold.median(1):.2f} s (goal <= 1.0 s)"
              + (f"; RATIO no cache / libcst-parse j2 = {ratio(one_cold, j2):.3f}" if j2 else ""))
    mplint_runs = [r for tool in tools if not tool.key.startswith("parse") for r in tool.runs]
    if mplint_runs:
        print(f"peak memory {max(r[2] for r in mplint_runs):.0f} MB (goal <= 300 MB)")
    return 0


#: the rows ``--only`` names
ROWS = ("parse-j1", "parse-j2", "cold", "warm", "mixed", "pre-commit-cached", "pre-commit-cold")


def _pre_commit_files(files: List[str]) -> Tuple[str, str]:
    """The file a pre-commit run checks (a TensorFlow file of median size) and another
    one that changed (the largest other TensorFlow file)."""
    tf_files = []
    for path in files:
        with open(path, "rb") as handle:
            data = handle.read()
        if b"tensorflow" in data or b"keras" in data:
            tf_files.append((len(data), path))
    tf_files.sort()
    if len(tf_files) < 2:
        raise SystemExit("bench: the corpus needs two TensorFlow files for the pre-commit runs")
    one = tf_files[len(tf_files) // 2][1]
    other = next(path for _, path in reversed(tf_files) if path != one)
    return one, other


if __name__ == "__main__":
    sys.exit(main())
