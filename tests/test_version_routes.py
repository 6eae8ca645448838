"""Version evidence from the import route: a module imported only under a version guard
runs under the version the guard states, before the project's pins (issue 24, item 6)."""

import json
import os

import pytest

from helpers import run_cli, write_files
from mplint.run.version_routes import guarded_modules

#: a TensorFlow 1 trainer: the experimental API, removed in TF 2.9, exists there
TF1_TRAINER = """\
import tensorflow as tf
from tensorflow.keras.mixed_precision import experimental as mixed_precision


def configure():
    mixed_precision.set_policy("mixed_float16")
"""


def _guarded(root):
    files = [os.path.join(folder, name) for folder, _, names in os.walk(root) for name in names]
    found = guarded_modules(files, lambda path: open(path, "rb").read(), root)
    return {os.path.relpath(path, root): (pins[0].package, pins[0].spec) for path, pins in found.items()}


def _project(root, guard, body, orelse):
    write_files(root, {
        "requirements.txt": "tensorflow>=2.4.0\n",
        "src/__init__.py": "", "src/tf1/__init__.py": "", "src/tf2/__init__.py": "",
        "src/tf1/trainer.py": TF1_TRAINER + "from . import helpers\n",
        "src/tf1/helpers.py": "SCALE = 1\n",
        "src/tf2/trainer.py": TF1_TRAINER,
        "bin/exec.py": f"import tensorflow as tf\nfrom packaging import version\n\n\ndef run():\n"
                       f"    if {guard}:\n        from src.{body} import trainer\n"
                       f"    else:\n        from src.{orelse} import trainer\n    trainer.configure()\n\n\n"
                       f"if __name__ == '__main__':\n    run()\n",
    })


@pytest.mark.parametrize("guard, body, orelse", [
    ("tf.__version__.startswith('2')", "tf2", "tf1"),
    ("tf.__version__.startswith('1')", "tf1", "tf2"),
    ("int(tf.__version__[0]) < 2", "tf1", "tf2"),
    ("int(tf.__version__.split('.')[0]) >= 2", "tf2", "tf1"),
    ("tf.__version__[0] == '1'", "tf1", "tf2"),
    ("version.parse(tf.__version__) < version.parse('2.0')", "tf1", "tf2"),
    ("not tf.__version__.startswith('2')", "tf1", "tf2"),
])
def test_a_module_imported_only_under_a_tf1_guard_runs_on_tf1(tmp_path, guard, body, orelse):
    _project(tmp_path, guard, body, orelse)
    guarded = _guarded(tmp_path)
    package, spec = guarded["src/tf1/trainer.py"]
    assert package == "tensorflow" and spec in ("<2", ">=1,<2")
    assert guarded["src/tf1/helpers.py"] == (package, spec)  # imported only by the guarded trainer
    assert guarded["src/tf2/trainer.py"][1].startswith(">=2")
    found = json.loads(run_cli("check", "--no-cache", "--select", "MP402", "--output-format", "json", ".",
                               cwd=tmp_path).stdout)
    # the TF 2 trainer runs on requirements.txt's TensorFlow (2.9 and later: removed); the TF 1 one does not
    assert {f["path"] for f in found} == {"src/tf2/trainer.py"}
    assert "bin/exec.py" in next(f["message"] for f in found)


def test_a_module_also_imported_without_a_guard_gets_no_route_evidence(tmp_path):
    _project(tmp_path, "tf.__version__.startswith('2')", "tf2", "tf1")
    write_files(tmp_path, {"tools/export.py": "from src.tf1 import trainer\n"})
    assert "src/tf1/trainer.py" not in _guarded(tmp_path)
    found = json.loads(run_cli("check", "--no-cache", "--select", "MP402", "--output-format", "json", ".",
                               cwd=tmp_path).stdout)
    assert {f["path"] for f in found} == {"src/tf1/trainer.py", "src/tf2/trainer.py"}


def test_a_test_of_something_else_is_no_version_guard(tmp_path):
    _project(tmp_path, "tf.__version__ == tf.__version__", "tf2", "tf1")  # compares no constant
    assert _guarded(tmp_path) == {}
    _project(tmp_path, "hasattr(tf, 'function')", "tf2", "tf1")
    assert _guarded(tmp_path) == {}


def test_a_pin_open_to_both_generations_keeps_the_installed_keras_out_of_mp207():
    """``tensorflow>=2.5`` in a 2022 Keras 2 project: Keras 3 installed where mplint runs
    is no evidence that its ``minimize(loss, var_list, tape=tape)`` crashes."""
    from mplint.run.dependency_pins import pins_in_text
    from mplint.semantic.keras_version import versions_of
    from mplint.semantic.versions import LOSS_SCALING

    text = "import tensorflow as tf\nopt.minimize(loss, var_list, tape=tape)\n"
    open_pin = tuple(pins_in_text("tensorflow>=2.5\n", "setup.py"))
    assert versions_of(None, text, installed=3, project_pins=open_pin).keras(
        ignoring=frozenset({LOSS_SCALING})) is None
    # the generation the other rules read still comes from the machine
    assert versions_of(None, text, installed=3, project_pins=open_pin).keras_generation == 3
    # a pin that decides stays the answer; no pin at all leaves the installed packages
    keras3 = tuple(pins_in_text("tensorflow>=2.16\n", "setup.py"))
    answer = versions_of(None, text, installed=2, project_pins=keras3).keras(ignoring=frozenset({LOSS_SCALING}))
    assert answer is not None and answer.generation == 3
    answer = versions_of(None, text, installed=3).keras(ignoring=frozenset({LOSS_SCALING}))
    assert answer is not None and answer.why == "Keras 3 is installed here"
