import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args, cwd=None, input=None, env=None):
    """Run the real console entry point in a subprocess, as a user would."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "mplint", *map(str, args)],
        cwd=cwd, input=input, capture_output=True, text=True, env=full_env, timeout=300,
    )


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def no_installed_keras(monkeypatch):
    """Judge code as on a machine without TensorFlow (what `pip install mplint` gives).

    The Keras generation otherwise comes from the installed packages, which differ
    between CI (TensorFlow installed for the runtime tests) and a bare machine.
    """
    import mplint.semantic.keras_version as kv

    monkeypatch.setattr(kv, "installed_generation", lambda: None)
