"""Fixtures, and the split between fast and slow tests.

``python -m pytest`` runs the fast tests (meant to stay under a minute on two cores). Tests
marked ``slow`` (a real pre-commit environment, TensorFlow, the fork pool, a
terminal) are left out unless ``--run-slow`` is given, which CI passes; ``-m slow
--run-slow`` runs only them. The runtime checker's test files
(``tests/test_runtime*.py``) are slow as a whole, and without ``--run-slow`` are
not even imported: each imports TensorFlow, which costs seconds and would make
every garbage collection in the test process (one per in-process ``mplint`` run)
walk TensorFlow's objects too.

Property tests (Hypothesis) try 40 generated examples each by default and 150
with ``--run-slow``.
"""

from __future__ import annotations

import sys
from fnmatch import fnmatch
from pathlib import Path
from typing import Callable, Iterator, List, Optional, Set

import pytest
from hypothesis import settings as hypothesis_settings

from helpers import ROOT, CliResult, run_cli  # noqa: F401 (re-exported for test files that import them from here)

#: test files that are slow as a whole, by name
SLOW_FILES = ("test_runtime*.py",)
_DESELECTED = pytest.StashKey[int]()
_NOT_COLLECTED = pytest.StashKey[Set[str]]()


hypothesis_settings.register_profile("quick", max_examples=40)
hypothesis_settings.register_profile("thorough", max_examples=150)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true",
                     help="also run the tests marked slow (TensorFlow, pre-commit, the fork pool), "
                          "and more examples per property test; CI does")


def pytest_configure(config: pytest.Config) -> None:
    hypothesis_settings.load_profile("thorough" if config.getoption("--run-slow") else "quick")


def _slow_file(path: Path) -> bool:
    return any(fnmatch(path.name, pattern) for pattern in SLOW_FILES)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> Optional[bool]:
    if config.getoption("--run-slow") or not _slow_file(collection_path):
        return None
    config.stash.setdefault(_NOT_COLLECTED, set()).add(collection_path.name)
    return True


@pytest.hookimpl(tryfirst=True)  # before -m reads the marks
def pytest_collection_modifyitems(config: pytest.Config, items: List[pytest.Item]) -> None:
    for item in items:
        if _slow_file(item.path):
            item.add_marker(pytest.mark.slow)
    if config.getoption("--run-slow"):
        return
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item.get_closest_marker("slow") is None]
    config.stash[_DESELECTED] = len(slow)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    left_out = config.stash.get(_DESELECTED, 0)
    files = config.stash.get(_NOT_COLLECTED, set())
    if left_out or files:
        terminalreporter.write_line(
            f"Slow tests left out ({left_out} deselected, {len(files)} files of {', '.join(SLOW_FILES)} "
            "not collected); --run-slow runs them, as CI does.")


@pytest.fixture(autouse=True)
def _tensorflow_seed_left_as_found() -> Iterator[None]:
    """A test that seeds TensorFlow's global generator (one fixed start for a numeric
    comparison) leaves it unseeded for the next: the runtime checker keeps a seed the
    user's code set, so a leaked one would change which start later checks judge from."""
    yield
    tf = sys.modules.get("tensorflow")
    if tf is not None and tf.compat.v1.random.get_seed(None)[0] is not None:
        tf.random.set_seed(None)


@pytest.fixture
def cli() -> Callable[..., CliResult]:
    """``mplint`` run in this process (see ``helpers.run_cli``)."""
    return run_cli


@pytest.fixture
def no_installed_keras(monkeypatch: pytest.MonkeyPatch) -> None:
    """Judge code as on a machine without TensorFlow (what `pip install mplint` gives).

    The Keras generation otherwise comes from the installed packages, which differ
    between CI (TensorFlow installed for the runtime tests) and a bare machine.
    """
    import mplint.semantic.keras_version as kv

    monkeypatch.setattr(kv, "installed_generation", lambda: None)


@pytest.fixture
def keras3():
    """Real TensorFlow with Keras 3 (skipped without them); the policy is reset after."""
    tf = pytest.importorskip("tensorflow")
    keras = pytest.importorskip("keras")
    if int(keras.__version__.split(".")[0]) < 3:
        pytest.skip("the fixture is Keras 3 code")
    yield tf, keras
    keras.mixed_precision.set_global_policy("float32")
    keras.backend.clear_session()
