"""Versions from evidence: one answer per file for the TensorFlow version and the Keras
generation (pins nearest the file, a notebook's pip install, APIs only one generation
has, the installed packages), read by MP207 and MP402, whose messages say where it
came from."""

import json
import textwrap

import pytest

from helpers import outcome, run_cli, write_files
from mplint.run.dependency_pins import pins_in_text, project_pins, shell_pins
from mplint.semantic.keras_version import api_uses, versions_of
from mplint.semantic.versions import LOSS_SCALING, VersionRange, version

pytestmark = pytest.mark.usefixtures("no_installed_keras")


# -- reading pins ------------------------------------------------------------------------
@pytest.mark.parametrize("line, package, lower, upper, upper_inclusive", [
    ("tensorflow==2.2.0", "tensorflow", (2, 2, 0), (2, 2, 0), True),
    ("tensorflow-gpu==2.0.0-rc0", "tensorflow", (2, 0, 0), (2, 0, 0), True),
    ("tensorflow>=2.2,<2.5", "tensorflow", (2, 2, 0), (2, 5, 0), False),
    ("tensorflow==2.15.*", "tensorflow", (2, 15, 0), (2, 16, 0), False),
    ("tensorflow-cpu~=2.13.0", "tensorflow", (2, 13, 0), (2, 14, 0), False),
    ("tensorflow>=2.16", "tensorflow", (2, 16, 0), None, True),
    ("keras<3", "keras", None, (3, 0, 0), False),
])
def test_a_requirement_is_a_range_of_versions(line, package, lower, upper, upper_inclusive):
    [pin] = pins_in_text(line + "\n", "requirements.txt")
    assert (pin.package, pin.range.lower, pin.range.upper, pin.range.upper_inclusive) == (
        package, lower, upper, upper_inclusive)


@pytest.mark.parametrize("text", [
    "tensorflow-addons==0.13\n", "tensorflow_hub>=0.12\n", "keras-tuner>=1.4\n", "tensorflow\n",
    "# tensorflow==2.2\n", "tensorflow-datasets==4.0  # for tensorflow==2.2 users\n",
])
def test_other_packages_and_unpinned_requirements_are_no_pins(text):
    assert pins_in_text(text, "requirements.txt") == []


def test_conda_poetry_and_setup_py_pins():
    conda = pins_in_text("dependencies:\n  - python=3.8\n  - tensorflow=2.4\n", "environment.yml", conda=True)
    assert [(p.spec, p.range.upper, p.line) for p in conda] == [("=2.4", (2, 5, 0), 3)]
    poetry = pins_in_text('[tool.poetry.dependencies]\ntensorflow = "^2.3"\n', "pyproject.toml")
    assert [(p.range.lower, p.range.upper) for p in poetry] == [((2, 3, 0), (3, 0, 0))]
    setup = pins_in_text('setup(install_requires=["tensorflow>=2.2,<2.5", "keras==2.3.1"])\n', "setup.py")
    assert [(p.package, p.spec) for p in setup] == [("tensorflow", ">=2.2,<2.5"), ("keras", "==2.3.1")]


def test_a_notebooks_pip_install_lines_are_its_pins():
    pins = shell_pins(["!pip install -q tensorflow-gpu==2.0.0-alpha0 absl-py", "!ls", "%pip install -U pandas"])
    assert [(p.package, p.range.exact, p.describe()) for p in pins] == [
        ("tensorflow", (2, 0, 0), "TensorFlow 2.0.0 pinned by this notebook's pip install")]
    assert shell_pins(["!pip uninstall -y tensorflow==2.0", "!pip install -r requirements.txt"]) == ()


def test_ranges_say_whether_a_version_is_reached():
    assert version("2.0.0rc0") == (2, 0, 0) and version("2.15") == (2, 15, 0)
    below = VersionRange(upper=(2, 9, 0), upper_inclusive=False)
    assert not below.reaches((2, 9, 0)) and below.reaches((2, 8, 0))
    assert VersionRange(upper=(2, 9, 0)).reaches((2, 9, 0))
    assert VersionRange(lower=(2, 2, 0)).reaches((2, 99, 0))  # unbounded: the latest
    assert VersionRange((2, 2, 0), True, (2, 2, 0), True).intersect(VersionRange(lower=(2, 4, 0))).empty()


# -- which pins decide for which file -----------------------------------------------------
def test_a_file_is_judged_by_the_nearest_pins_above_it(tmp_path):
    write_files(tmp_path, {
        "setup.py": "setup(install_requires=['tensorflow>=2.16'])\n",
        "requirements/base.txt": "numpy\ntensorflow==2.12.0\n",  # a folder without code: the root's
        "old/requirements.txt": "tensorflow-gpu==2.2.0\n",
        "old/train.py": "", "old/deep/model.py": "", "new/train.py": "", "top.py": "",
        "keras_only/requirements.txt": "keras==2.3.1\n", "keras_only/a.py": "",
    })
    pins = project_pins(tmp_path, [str(tmp_path / f) for f in
                                   ("old/train.py", "old/deep/model.py", "new/train.py", "top.py", "keras_only/a.py")])

    def decided(path):
        return sorted((p.package, p.spec, p.file, p.line) for p in pins.for_file(str(tmp_path / path)))

    root = [("tensorflow", "==2.12.0", "requirements/base.txt", 2), ("tensorflow", ">=2.16", "setup.py", 1)]
    assert decided("top.py") == decided("new/train.py") == root
    assert decided("old/deep/model.py") == [("tensorflow", "==2.2.0", "old/requirements.txt", 1)]
    # a folder pinning only Keras still takes TensorFlow from above
    assert decided("keras_only/a.py") == sorted([("keras", "==2.3.1", "keras_only/requirements.txt", 1), *root])


# -- the per-file answer ---------------------------------------------------------------
KERAS3_FILE_WITH_KERAS2_SCALING = """\
import keras
import tensorflow as tf

keras.config.set_dtype_policy("mixed_float16")
optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam())


def train_step(model, x, y):
    with tf.GradientTape() as tape:
        loss = keras.ops.mean(model(x) - y)
        scaled = optimizer.get_scaled_loss(loss)
    grads = tape.gradient(scaled, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


def test_the_calls_a_rule_judges_are_no_evidence_for_it():
    versions = versions_of(None, KERAS3_FILE_WITH_KERAS2_SCALING, use_installed=False)
    assert versions.keras_generation is None  # keras.config says 3, get_scaled_loss 2
    answer = versions.keras(ignoring=frozenset({LOSS_SCALING}))
    assert answer is not None and (answer.generation, answer.why) == (3, "the file uses keras.config")


def test_comments_and_keras_core_are_no_evidence():
    assert api_uses("# keras.ops.mean is the Keras 3 spelling\nimport tensorflow as tf\n") == ()
    text = "import keras_core as keras\nx = keras.ops.mean(y)\nl = opt.get_scaled_loss(x)\n"
    assert [u.api for u in api_uses(text)] == ["get_scaled_loss()"]


def test_the_installed_packages_never_overrule_what_the_file_spells():
    text = "import tensorflow as tf\nscaled = opt.get_scaled_loss(loss)\n"
    versions = versions_of(None, text, installed=3)
    assert versions.keras(ignoring=frozenset({LOSS_SCALING})) is None
    answer = versions_of(None, "import tensorflow as tf\n", installed=3).keras()
    assert answer is not None and answer.why == "Keras 3 is installed here"


def test_pins_come_before_apis_and_a_tf_keras_pin_leaves_the_generation_open():
    [tf216] = pins_in_text("tensorflow>=2.16\n", "requirements.txt")
    [tfk] = pins_in_text("tf-keras~=2.16\n", "requirements.txt")
    text = "import tensorflow as tf\nopt = tf.keras.optimizers.legacy.Adam()\n"
    answer = versions_of(None, text, use_installed=False, project_pins=(tf216,)).keras()
    assert answer is not None and (answer.generation, answer.why) == (3, "tensorflow>=2.16 in requirements.txt:1")
    # With tf-keras pinned, TF_USE_LEGACY_KERAS may be set outside the code: the spelling decides.
    assert versions_of(None, text, use_installed=False, project_pins=(tf216, tfk)).keras_generation == 2


# -- MP402 judged by the pinned TensorFlow ---------------------------------------------
EXPERIMENTAL = """\
import tensorflow as tf

tf.keras.mixed_precision.experimental.set_policy("mixed_float16")
"""


def _check(tmp_path, *paths, select="MP402", cache=False):
    args = ["check", "--select", select, "--output-format", "json", *([] if cache else ["--no-cache"]), *paths]
    result = run_cli(*args, cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    return [(f["path"].replace("\\", "/") + (f":cell {f['cell']}" if f.get("cell") else ""), f["line"],
             f["rule"], f["message"]) for f in json.loads(result.stdout)]


def _rows(found):
    return [(path, row, code) for path, row, code, _ in found]


def test_a_project_pinned_to_an_old_tensorflow_gets_no_removed_in_error(tmp_path):
    write_files(tmp_path, {"setup.py": "", "requirements/base.txt": "numpy\nabsl-py\ntensorflow==2.2.0\n",
                           "train.py": EXPERIMENTAL})
    assert _check(tmp_path, ".") == []  # TF 2.2 has only the experimental API
    # TF 2.5 still has it: the code runs as written on what the project installs
    (tmp_path / "requirements" / "base.txt").write_text("numpy\nabsl-py\ntensorflow==2.5.0\n")
    assert _check(tmp_path, ".") == []
    (tmp_path / "requirements" / "base.txt").write_text("numpy\nabsl-py\ntensorflow==2.10.0\n")
    [(path, row, code, message)] = _check(tmp_path, ".")
    assert (path, row, code) == ("train.py", 3, "MP402")
    assert ("was removed in TF 2.9 (AttributeError; TensorFlow 2.10.0 pinned in "
            "requirements/base.txt:3); use `tf.keras.mixed_precision.set_global_policy`") in message
    (tmp_path / "requirements" / "base.txt").write_text("tensorflow>=2.2\n")  # the latest may install
    [(_, _, _, message)] = _check(tmp_path, ".")
    assert "was removed in TF 2.9 (AttributeError; tensorflow>=2.2 in requirements/base.txt:1)" in message


def test_pins_in_a_subfolder_cover_that_folder_only(tmp_path):
    write_files(tmp_path, {".git/HEAD": "", "legacy/requirements.txt": "tensorflow-gpu==2.3.1\n",
                           "legacy/train.py": EXPERIMENTAL, "current/train.py": EXPERIMENTAL,
                           "setup.cfg": "[options]\ninstall_requires =\n    tensorflow>=2.10,<2.12\n"})
    found = _check(tmp_path, ".")
    assert _rows(found) == [("current/train.py", 3, "MP402")]
    assert "tensorflow>=2.10,<2.12 in setup.cfg:3" in found[0][3]


def test_the_setting_and_the_option_still_come_first(tmp_path):
    write_files(tmp_path, {"requirements.txt": "tensorflow==2.2\n", "train.py": EXPERIMENTAL,
                           "pyproject.toml": '[tool.mplint]\ntarget-tf-version = "2.10"\n'})
    assert _rows(_check(tmp_path, ".")) == [("train.py", 3, "MP402")]


def test_a_notebook_that_installs_an_old_tensorflow_is_judged_by_it(tmp_path):
    def book(*cells):
        return json.dumps({"cells": [{"cell_type": "code", "source": c, "metadata": {}, "outputs": [],
                                      "execution_count": None} for c in cells],
                           "metadata": {}, "nbformat": 4, "nbformat_minor": 5})

    write_files(tmp_path, {"setup.py": "",
                           "old.ipynb": book("!pip install -q tensorflow-gpu==2.0.0\n", EXPERIMENTAL),
                           "new.ipynb": book("!pip install -q pandas\n", EXPERIMENTAL)})
    assert _rows(_check(tmp_path, ".")) == [("new.ipynb:cell 2", 3, "MP402")]


def test_editing_a_requirements_file_changes_the_next_cached_run(tmp_path):
    write_files(tmp_path, {"setup.py": "", "requirements.txt": "tensorflow==2.3.0\n", "train.py": EXPERIMENTAL})
    assert _check(tmp_path, ".", cache=True) == []
    (tmp_path / "requirements.txt").write_text("tensorflow==2.12.0\n")
    cached = _check(tmp_path, ".", cache=True)
    assert _rows(cached) == [("train.py", 3, "MP402")] and "TensorFlow 2.12.0 pinned in requirements.txt:1" in cached[0][3]
    assert cached == _check(tmp_path, ".")  # what an uncached run says
    # and for one named file (pre-commit)
    (tmp_path / "requirements.txt").write_text("tensorflow==2.3.0\n")
    assert _check(tmp_path, "train.py", cache=True) == []


# -- MP207 ------------------------------------------------------------------------------
def test_mp207_reports_keras2_scaling_in_a_keras3_file_and_says_why(tmp_path):
    write_files(tmp_path, {"setup.py": "", "train.py": KERAS3_FILE_WITH_KERAS2_SCALING})
    found = _check(tmp_path, ".", select="MP207")
    assert _rows(found) == [("train.py", 11, "MP207")]
    assert found[0][3].endswith("use scale_loss() (Keras 3: the file uses keras.config)")


def test_mp207_reads_the_keras_generation_the_project_pins(tmp_path):
    loop = textwrap.dedent("""\
        import tensorflow as tf

        opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam())


        def step(model, x):
            with tf.GradientTape() as tape:
                scaled = opt.scale_loss(tf.reduce_mean(model(x)))
            opt.apply(tape.gradient(scaled, model.trainable_variables), model.trainable_variables)
        """)
    write_files(tmp_path, {"setup.py": "", "train.py": loop})
    assert _check(tmp_path, ".", select="MP207") == []  # spelled for Keras 3 and nothing says otherwise
    (tmp_path / "requirements-gpu.txt").write_text("tensorflow[and-cuda]==2.15.1\n")
    found = _check(tmp_path, ".", select="MP207")
    assert _rows(found) == [("train.py", 8, "MP207"), ("train.py", 9, "MP207")]
    assert all(m.endswith("(Keras 2: TensorFlow 2.15.1 pinned in requirements-gpu.txt:1)") for *_, m in found)


def test_mp207_stays_silent_when_only_the_judged_calls_say_keras_2(tmp_path):
    write_files(tmp_path, {"setup.py": "", "train.py": KERAS3_FILE_WITH_KERAS2_SCALING.replace(
        "keras.config.set_dtype_policy", "tf.keras.mixed_precision.set_global_policy").replace(
        "keras.optimizers.LossScaleOptimizer", "tf.keras.mixed_precision.LossScaleOptimizer").replace(
        "keras.ops.mean", "tf.reduce_mean")})
    assert _check(tmp_path, ".", select="MP207") == []


def test_pins_of_several_files_are_alternatives_judged_by_the_newest(tmp_path):
    write_files(tmp_path, {"setup.py": "setup(\n    name='tts',\n    install_requires=['tensorflow-gpu==2.7.0'],\n)\n",
                           "docker/Dockerfile": "FROM tensorflow/tensorflow:2.6.0-gpu\nRUN pip install .\n",
                           "train.py": EXPERIMENTAL})
    assert _check(tmp_path, ".") == []  # TF 2.7 and 2.6 both still have the experimental API
    (tmp_path / "docker" / "Dockerfile").write_text("FROM tensorflow/tensorflow:2.10.1-gpu\n")
    [(_, _, _, message)] = _check(tmp_path, ".")
    assert "was removed in TF 2.9 (AttributeError; TensorFlow 2.10.1 pinned in docker/Dockerfile:1)" in message


def test_a_module_named_setup_py_is_no_declaration(tmp_path):
    write_files(tmp_path, {".git/HEAD": "", "utils/setup.py": 'TF = "tensorflow==2.2.0"\n', "utils/train.py": EXPERIMENTAL})
    assert _rows(_check(tmp_path, ".")) == [("utils/train.py", 3, "MP402")]
    (tmp_path / "utils" / "setup.py").write_text('setup(install_requires=["tensorflow==2.2.0"])\n')
    assert _check(tmp_path, ".") == []


@pytest.mark.parametrize("line, said", [
    ("ARG FROM_IMAGE_NAME=nvcr.io/nvidia/tensorflow:21.02-tf2-py3", "TensorFlow 2.4 or older in "
     "nvcr.io/nvidia/tensorflow:21.02-tf2-py3 (Dockerfile:1)"),
    ("FROM nvcr.io/nvidia/tensorflow:20.10-tf1-py3", "TensorFlow 1.x in nvcr.io/nvidia/tensorflow:20.10-tf1-py3 "
     "(Dockerfile:1)"),
    ("FROM tensorflow/tensorflow:2.4.1-gpu-jupyter", "TensorFlow 2.4.1 pinned in Dockerfile:1"),
    ("FROM nvcr.io/nvidia/tensorflow:${RELEASE}-tf2-py3", None),
    ("FROM tensorflow/tensorflow:latest-gpu", None),
    # -py3 tags stopped at TF 2.1 (latest) and a 2.3 nightly: an unnumbered one still says that much
    ("FROM tensorflow/tensorflow:latest-gpu-py3", "TensorFlow 2.1 or older in "
     "tensorflow/tensorflow:latest-gpu-py3 (Dockerfile:1)"),
    ("FROM tensorflow/tensorflow:latest-py3-jupyter AS base", "TensorFlow 2.1 or older in "
     "tensorflow/tensorflow:latest-py3-jupyter (Dockerfile:1)"),
    ("FROM tensorflow/tensorflow:nightly-gpu-py3", "TensorFlow 2.3 or older in "
     "tensorflow/tensorflow:nightly-gpu-py3 (Dockerfile:1)"),
    ("FROM tensorflow/tensorflow:2.1.0-gpu-py3", "TensorFlow 2.1.0 pinned in Dockerfile:1"),  # numbered: one pin
    ("FROM someone/tensorflow:latest-gpu-py3", None),  # not the official image
    ("FROM 763104351884.dkr.ecr.us-east-1.amazonaws.com/tensorflow-training:2.2.0-gpu-py37-cu102-ubuntu18.04",
     "TensorFlow 2.2.0 pinned in Dockerfile:1"),
    ("FROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/tensorflow-training:latest", None),
    ("FROM myregistry.example.com/tensorflow-training:2.2.0", None),  # not the AWS containers
    ("FROM gcr.io/deeplearning-platform-release/tf2-gpu.2-4", "tensorflow==2.4.* in Dockerfile:1"),
    ("FROM nvcr.io/nvidia/tensorflow:25.01-tf2-py3", None),  # past the table of releases: any
])
def test_a_container_image_pins_the_tensorflow_it_holds(line, said):
    pins = shell_pins([line], "Dockerfile")
    assert [p.describe() for p in pins] == ([said] if said else [])


def test_an_ngc_image_from_before_tf_2_9_keeps_the_experimental_api(tmp_path):
    write_files(tmp_path, {".git/HEAD": "", "bert/train.py": EXPERIMENTAL, "electra/train.py": EXPERIMENTAL,
                           "bert/Dockerfile": "ARG FROM_IMAGE_NAME=nvcr.io/nvidia/tensorflow:21.02-tf2-py3\n"
                                              "FROM ${FROM_IMAGE_NAME}\n",
                           "electra/Dockerfile": "FROM nvcr.io/nvidia/tensorflow:20.07-tf2-py3\n"})
    # TF 2.4 or older (21.02) still has it; 20.07 holds TF 2.2 or older, before the new API
    assert _check(tmp_path, ".") == []
    (tmp_path / "bert" / "Dockerfile").write_text("FROM nvcr.io/nvidia/tensorflow:22.12-tf2-py3\n")
    [(path, _, _, message)] = _check(tmp_path, ".")
    assert path == "bert/train.py" and "was removed in TF 2.9" in message


def test_an_unnumbered_py3_image_keeps_the_experimental_api(tmp_path):
    # chychen/tf_rlib: the only environment evidence is FROM tensorflow/tensorflow:latest-gpu-py3
    write_files(tmp_path, {".git/HEAD": "", "train.py": EXPERIMENTAL,
                           "Dockerfile": "FROM tensorflow/tensorflow:latest-gpu-py3\nRUN pip install tqdm\n"})
    assert _check(tmp_path, ".") == []
    # chychen/tf_rlib keeps it in a folder named Dockerfile (Dockerfile/Dockerfile)
    (tmp_path / "Dockerfile").unlink()
    write_files(tmp_path, {"Dockerfile/Dockerfile": "FROM tensorflow/tensorflow:latest-gpu-py3\n"})
    assert _check(tmp_path, ".") == []
    (tmp_path / "Dockerfile" / "Dockerfile").unlink()
    (tmp_path / "Dockerfile").rmdir()
    # the current latest (no -py3) says nothing of the version: reported as with no pin at all
    (tmp_path / "Dockerfile").write_text("FROM tensorflow/tensorflow:latest-gpu\n")
    [(path, _, _, message)] = _check(tmp_path, ".")
    assert path == "train.py" and "was removed in TF 2.9 (AttributeError)" in message
    # a pip install in the image that upgrades TensorFlow is nearer evidence than the tag
    (tmp_path / "Dockerfile").write_text("FROM tensorflow/tensorflow:latest-gpu-py3\n"
                                         "RUN pip install tensorflow-gpu==2.10.0\n")
    [(_, _, _, message)] = _check(tmp_path, ".")
    assert "TensorFlow 2.10.0 pinned in Dockerfile:2" in message


def test_a_shell_script_s_pip_install_is_a_pin(tmp_path):
    # CalciumGAN's setup.sh: `python3 -m pip install tensorflow==2.3.1`, where the experimental
    # API is the only one
    write_files(tmp_path, {"setup.py": "", "train.py": EXPERIMENTAL})
    assert _rows(_check(tmp_path, ".")) == [("train.py", 3, "MP402")]
    (tmp_path / "setup.sh").write_text("#!/bin/sh\nif [ gpu ]; then\n  python3 -m pip install tensorflow==2.3.1\nfi\n")
    assert _check(tmp_path, ".") == []
    (tmp_path / "setup.sh").write_text("#!/bin/sh\npip install tensorflow==2.10.1\n")
    [(_, _, _, message)] = _check(tmp_path, ".")
    assert "(AttributeError; TensorFlow 2.10.1 pinned in setup.sh:2)" in message


def test_a_readme_s_install_instructions_are_pins(tmp_path):
    # mlcommons' resnet-tf2: "docker image tensorflow/tensorflow:2.4.0-gpu" in the README
    write_files(tmp_path, {"setup.py": "", "bench/train.py": EXPERIMENTAL})
    [(_, _, _, message)] = _check(tmp_path, ".")
    assert "pinned" not in message
    (tmp_path / "bench" / "README.md").write_text("# Bench\n\n- docker image tensorflow/tensorflow:2.4.0-gpu\n")
    assert _check(tmp_path, ".") == []  # TF 2.4 has the experimental API
    (tmp_path / "bench" / "README.md").write_text("```sh\npip install tensorflow==2.11.0\n```\n")
    [(_, _, _, message)] = _check(tmp_path, ".")
    assert "TensorFlow 2.11.0 pinned in bench/README.md:2" in message


POETRY_LOCK = """\
[[package]]
category = "main"
description = "TensorFlow is an open source machine learning framework for everyone."
name = "tensorflow"
optional = false
python-versions = "*"
version = "{version}"

[[package]]
name = "tensorflow-estimator"
version = "2.15.0"
"""


def test_a_lock_file_s_version_replaces_the_range_its_declaration_wrote(tmp_path):
    # jkyl/biggan: pyproject says tensorflow = "^2.2" (up to 3.0); poetry.lock holds 2.3.0
    write_files(tmp_path, {"pyproject.toml": '[tool.poetry.dependencies]\ntensorflow = "^2.2"\n',
                           "train.py": EXPERIMENTAL})
    assert _rows(_check(tmp_path, ".")) == [("train.py", 3, "MP402")]
    (tmp_path / "poetry.lock").write_text(POETRY_LOCK.format(version="2.3.0"))
    assert _check(tmp_path, ".") == []  # 2.3 has only the experimental API
    (tmp_path / "poetry.lock").write_text(POETRY_LOCK.format(version="2.12.0"))
    [(_, _, _, message)] = _check(tmp_path, ".")
    assert "TensorFlow 2.12.0 pinned in poetry.lock:7" in message


def test_a_pipfile_lock_is_read(tmp_path):
    write_files(tmp_path, {"Pipfile": '[packages]\ntensorflow-gpu = "*"\n', "train.py": EXPERIMENTAL,
                           "Pipfile.lock": '{"default": {"tensorflow-gpu": {"hashes": [], "version": "==2.3.1"}}}'})
    assert _check(tmp_path, ".") == []


@pytest.mark.parametrize("readme, found", [
    ("We used **Python 3.7** with **Tensorflow 2.2**. Install the dependencies with:", False),
    ("The project is written in Keras and Tensorflow 2.1.", False),
    ("Tested on TF version: 2.3.1 and tensorflow-gpu v2.4", False),
    ("Requires TensorFlow 2.4 or later.", True),  # a lowest version: 2.9 and later allowed
    ("Requires TensorFlow >= 2.4", True),
    ("Any TensorFlow 2.x works.", True),  # no version
    ("pip install tensorflow", True),  # an install command without a version
    ("This is the tf2.0 version of efficientdet.", True),  # TF 2.0 names the generation
    ("Mixed precision training in `tf.keras` (TensorFlow 2.0).", True),
    # beside a TensorFlow 1 release, 2.0 is the release (smallsunsun1/yolov3's README)
    ("代码需要在tensorflow2.0上运行或者1.14上运行", False),
    ("Runs on TensorFlow 1.15 and TensorFlow 2.0.", False),
    ("The tf2.0 version; the tf1.x code is on another branch.", True),  # 1.x: no release
    ("Ported to TensorFlow 2.0 and Python 3.7.", True),  # 3.7: no TensorFlow release
    ("Ported to TensorFlow 2.0 (see issue 1.2k).", True),
])
def test_a_readme_that_states_the_version_in_prose_decides_it(tmp_path, readme, found):
    # Barchid/Indoor_Segmentation: "We used Python 3.7 with Tensorflow 2.2", conda install unpinned
    write_files(tmp_path, {".git/HEAD": "", "README.md": "# Project\n\n" + readme + "\n", "train.py": EXPERIMENTAL})
    rows = _check(tmp_path, ".")
    assert bool(rows) == found
    if found and "or later" in readme:
        assert "TensorFlow >=2.4 stated in README.md:3" in rows[0][3]


def test_a_stated_version_gives_way_to_a_pin_of_its_folder(tmp_path):
    write_files(tmp_path, {".git/HEAD": "", "README.md": "Built with TensorFlow 2.2\n", "train.py": EXPERIMENTAL,
                           "requirements.txt": "tensorflow>=2.10\n"})
    [(_, _, _, message)] = _check(tmp_path, ".")
    assert "requirements.txt:1" in message


@pytest.mark.parametrize("lines, said", [
    (["ENV TENSORFLOW_PIP=tensorflow", "ENV TENSORFLOW_VERSION=2.4.0",
      "RUN pip install ${TENSORFLOW_PIP}==${TENSORFLOW_VERSION}"], "TensorFlow 2.4.0 pinned in Dockerfile:3"),
    (["ARG TF_VERSION 2.3.1", "RUN pip install tensorflow-gpu==$TF_VERSION"], "TensorFlow 2.3.1 pinned in Dockerfile:2"),
    (["export TF=2.2", 'pip install "tensorflow==$TF"'], "TensorFlow 2.2 pinned in Dockerfile:2"),
    (["RUN pip install tensorflow==$UNSET"], None),  # a variable set nowhere: no pin
    (["RUN pip install tensorflow==${TF}", "ENV TF=2.4.0"], None),  # set after its use
])
def test_variables_a_dockerfile_or_script_sets_are_put_into_its_pip_lines(lines, said):
    assert [p.describe() for p in shell_pins(lines, "Dockerfile")] == ([said] if said else [])


#: a second project of the same repository, with the container its code runs in
DETECTION = {"detection/docker/Dockerfile.ec2": "FROM 763104351884.dkr.ecr.us-east-1.amazonaws.com/"
                                                "tensorflow-training:2.2.0-gpu-py37-cu101-ubuntu18.04\n",
             "detection/awsdet/__init__.py": "", "detection/awsdet/apis.py": EXPERIMENTAL}


@pytest.mark.parametrize("link", [
    "[here](../detection/docker/Dockerfile.ec2)",
    "[here](https://github.com/someone/models/blob/master/detection/docker/Dockerfile.ec2)",
    "<https://github.com/someone/models/blob/main/detection/docker/Dockerfile.ec2>",
])
def test_a_readme_that_links_to_the_repository_s_dockerfile_is_run_in_it(tmp_path, link):
    # aws-samples' classification README: "A sample Dockerfile is available [here](…/detection/docker/Dockerfile.ec2)"
    write_files(tmp_path, {".git/HEAD": "", **DETECTION, "classification/train.py": EXPERIMENTAL})
    assert _rows(_check(tmp_path, ".")) == [("classification/train.py", 3, "MP402")]
    (tmp_path / "classification" / "README.md").write_text(f"### Docker Image\n\nA sample Dockerfile is available {link}\n")
    assert _check(tmp_path, ".") == []  # TF 2.2 has only the experimental API


@pytest.mark.parametrize("readme", [
    "See [the guide](../detection/docker/NOTES.md)",  # not a file that pins anything
    "A Dockerfile is [here](../detection/docker/Dockerfile.gpu)",  # no such file here
    "Requirements: [here](../../elsewhere/requirements.txt)",  # outside the tree
    "The official [Dockerfile](https://hub.docker.com/r/x/y/blob/master/detection/docker/Dockerfile.ec2)",  # not GitHub
    "Mentions detection/docker/Dockerfile.ec2 without linking it",
])
def test_a_readme_link_that_leads_to_no_pinning_file_of_the_tree_pins_nothing(tmp_path, readme):
    write_files(tmp_path, {".git/HEAD": "", **DETECTION, "classification/train.py": EXPERIMENTAL,
                           "classification/README.md": readme + "\n", "detection/docker/NOTES.md": "tensorflow==2.2\n"})
    assert _rows(_check(tmp_path, ".")) == [("classification/train.py", 3, "MP402")]


@pytest.mark.parametrize("added", [
    "sys.path.append('/opt/ml/code/detection')",  # where the container copies the repository
    'sys.path.insert(0, "../../detection")',
])
def test_a_script_that_puts_a_pinned_project_on_sys_path_runs_in_its_environment(tmp_path, added):
    # aws-samples' ci/frcnn/train_sagemaker.py: sys.path.append('/opt/ml/code/models/vision/detection'),
    # then `from awsdet... import ...`: the detection container's TensorFlow 2.2
    write_files(tmp_path, {".git/HEAD": "", **DETECTION,
                           "ci/frcnn/train.py": f"import sys\n{added}\n" + EXPERIMENTAL})
    assert _check(tmp_path, ".") == []


@pytest.mark.parametrize("added", [
    "sys.path.append('/opt/ml/code/segmentation')",  # no such folder in the project
    "sys.path.append(os.path.join(here, 'detection'))",  # not a literal: not followed
    "print('sys.path.append(\"/opt/detection\")')",  # a string that only says it
    "sys.path.append('/opt/ml/code/ci')",  # a folder pinning nothing
])
def test_a_sys_path_entry_that_names_no_pinned_project_folder_changes_nothing(tmp_path, added):
    write_files(tmp_path, {".git/HEAD": "", **DETECTION,
                           "ci/frcnn/train.py": f"import os, sys\n{added}\n" + EXPERIMENTAL})
    assert _rows(_check(tmp_path, ".")) == [("ci/frcnn/train.py", 5, "MP402")]


def test_the_file_s_own_pins_come_before_a_sys_path_folder_s(tmp_path):
    write_files(tmp_path, {".git/HEAD": "", **DETECTION, "ci/requirements.txt": "tensorflow==2.11.0\n",
                           "ci/frcnn/train.py": "import sys\nsys.path.append('/opt/ml/code/detection')\n" + EXPERIMENTAL})
    [(path, row, _, message)] = _check(tmp_path, ".")
    assert (path, row) == ("ci/frcnn/train.py", 5) and "TensorFlow 2.11.0 pinned in ci/requirements.txt:1" in message


@pytest.mark.parametrize("line, sets", [
    ('os.environ["TF_USE_LEGACY_KERAS"] = "1"', True),
    ('os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")', True),
    ('os.environ.update(TF_USE_LEGACY_KERAS="1")', True),
    ("%env TF_USE_LEGACY_KERAS=1", True),
    # reads test the generation; they switch nothing
    ('KERAS_3 = os.environ.get("TF_USE_LEGACY_KERAS", "0") not in ("1", "true")', False),
    ('legacy = os.getenv("TF_USE_LEGACY_KERAS") == "1"', False),
    ('if os.environ["TF_USE_LEGACY_KERAS"] == "1": pass', False),
    ('legacy = "TF_USE_LEGACY_KERAS" in os.environ', False),
    ('"""Runs on Keras 3, or on tf_keras with TF_USE_LEGACY_KERAS."""', False),
    ('# os.environ["TF_USE_LEGACY_KERAS"] = "1"', False),
])
def test_only_setting_tf_use_legacy_keras_makes_a_file_keras_2(line, sets):
    assert (versions_of(None, line + "\n", installed=3).legacy_keras != "") is sets
