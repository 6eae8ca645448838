"""Project facts: a policy or rewrite set in one file governs the rest of the project."""

import os
import shutil
import textwrap
from pathlib import Path

import pytest

from helpers import ROOT, outcome, run_cli
from mplint.api import lint_text, make_linter
from mplint.semantic.vocabulary import GRAPH_REWRITE_FUNCTIONS, SET_POLICY_FUNCTIONS
from mplint.semantic.names import _SYNONYMS
from mplint.run.program import Route
from mplint.run.project import INDEX_TOKENS, FileFacts, ProjectFacts, build_project, find_root, index_source

PROJECTS = ROOT / "fixtures" / "projects"


def _copy(name, tmp_path):
    target = tmp_path / name
    shutil.copytree(PROJECTS / name, target)
    return target


def _write(folder, files):
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return folder


def test_root_is_the_nearest_folder_with_a_marker(tmp_path):
    _write(tmp_path, {"outer/setup.cfg": "", "outer/inner/pyproject.toml": "", "outer/inner/pkg/a.py": "",
                      "outer/b.py": ""})
    (tmp_path / "outer" / "inner" / ".git").mkdir()
    assert find_root([str(tmp_path / "outer/inner/pkg/a.py")]) == tmp_path / "outer" / "inner"
    # Inside a repository, a sub-project's own marker does not cut the program in two.
    _write(tmp_path, {"outer/inner/pkg/pyproject.toml": ""})
    assert find_root([str(tmp_path / "outer/inner/pkg/a.py")]) == tmp_path / "outer" / "inner"
    assert find_root([str(tmp_path / "outer/b.py")]) == tmp_path / "outer"
    # The common folder of both paths decides.
    assert find_root([str(tmp_path / "outer/inner/pkg/a.py"), str(tmp_path / "outer/b.py")]) == tmp_path / "outer"


def test_pre_commit_case_one_named_file_sees_the_policy_set_in_another(tmp_path):
    project = _copy("split_policy", tmp_path)
    result = run_cli("check", "--force-exclude", "model.py", cwd=project)
    assert outcome(result) == (1, [("model.py", 8, "MP101")]), result.stderr
    # where the policy is set, and the calls that lead from there to the model
    assert "(the mixed policy is set in train.py:8, reached through main() -> build_model())" in result.stdout
    assert outcome(run_cli("check", "train.py", cwd=project)) == (0, [])


def test_run_time_policy_choice_counts_as_may_be_mixed(tmp_path):
    project = _copy("runtime_policy", tmp_path)
    result = run_cli("check", "net/heads.py", cwd=project)
    assert outcome(result) == (1, [("net/heads.py", 9, "MP101")])
    assert "the policy is chosen at run time and may be mixed" in result.stdout


def test_a_float32_policy_elsewhere_keeps_the_project_silent(tmp_path):
    project = _copy("float32_policy", tmp_path)
    result = run_cli("check", ".", cwd=project)
    assert outcome(result) == (0, []), result.stdout


def test_fixing_one_file_uses_project_facts(tmp_path):
    project = _copy("split_policy", tmp_path)
    result = run_cli("fix", "model.py", cwd=project)
    assert outcome(result) == (0, []), result.stdout + result.stderr
    assert "Fixed 1 finding in 1 file; 0 remaining." in result.stdout
    text = (project / "model.py").read_text()
    assert 'Dense(num_classes, activation="softmax", dtype="float32")(x)  # expect: MP101' in text


def test_excluded_files_are_not_part_of_the_project(tmp_path):
    project = _copy("split_policy", tmp_path)
    (project / "scripts").mkdir()
    shutil.move(project / "train.py", project / "scripts" / "train.py")
    (project / "pyproject.toml").write_text('[tool.mplint]\nextend-exclude = ["scripts/"]\n')
    assert outcome(run_cli("check", "model.py", cwd=project)) == (0, [])
    (project / "pyproject.toml").write_text('[tool.mplint]\n')
    result = run_cli("check", "model.py", cwd=project)
    assert outcome(result) == (1, [("model.py", 8, "MP101")]) and "set in scripts/train.py" in result.stdout


def test_a_tree_without_a_marker_links_its_files_from_the_current_folder(tmp_path, monkeypatch):
    # A zip download or a Kaggle copy: no .git, pyproject.toml or setup.py anywhere above.
    # As in ruff, the current folder (or the one folder named) is the project root.
    policy = 'import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy("mixed_float16")\n'
    model = ('import tensorflow as tf\ndef build():\n'
             '    return tf.keras.Sequential([tf.keras.layers.Dense(3, activation="softmax")])\n')
    _write(tmp_path, {"a/train.py": "import model\n" + policy + "m = model.build()\n", "a/model.py": model})
    if find_root([str(tmp_path / "a")], markerless=False) is not None:
        pytest.skip("a project marker above the temporary folder")
    result = run_cli("check", "model.py", cwd=tmp_path / "a")
    assert outcome(result) == (1, [("model.py", 3, "MP101")]), result.stdout + result.stderr
    assert "set in train.py:3" in result.stdout
    # the folder named on the command line, from anywhere
    named = run_cli("check", str(tmp_path / "a"), cwd=tmp_path)
    assert [rule for _, _, rule in outcome(named)[1]] == ["MP101"]
    # a file named from outside its folder: no root is guessed (never a whole disk)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert find_root([str(tmp_path / "a" / "model.py")]) is None
    assert find_root([str(tmp_path / "a")], markerless=False) is None


def test_the_home_folder_is_never_a_markerless_root(tmp_path, monkeypatch):
    _write(tmp_path, {"m.py": ""})
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    if find_root([str(tmp_path)], markerless=False) is not None:
        pytest.skip("a project marker above the temporary folder")
    assert find_root(["m.py"]) is None
    assert find_root([str(tmp_path)]) is None


@pytest.mark.parametrize("code, rewrite", [
    ("import tensorflow as tf\nopt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)\n", True),
    ("import tensorflow as tf\ntf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(o)\n", True),
    ("import tensorflow as tf\ntf.config.optimizer.set_experimental_options({'auto_mixed_precision': True})\n", True),
    ("import tensorflow as tf\ntf.config.optimizer.set_experimental_options({'auto_mixed_precision': False})\n",
     False),
    ("import os\nos.environ['TF_ENABLE_AUTO_MIXED_PRECISION'] = '1'\n", True),
    ("import os\nos.environ['TF_ENABLE_AUTO_MIXED_PRECISION'] = '0'\n", False),
    ("from os import environ\nenviron.setdefault('TF_ENABLE_AUTO_MIXED_PRECISION', 'true')\n", True),
    ("import os\nprint(os.environ.get('TF_ENABLE_AUTO_MIXED_PRECISION'))\n", False),
    ("import tensorflow as tf\ntf.train.experimental.disable_mixed_precision_graph_rewrite()\n", False),
])
def test_index_finds_the_graph_rewrite_in_every_form(code, rewrite):
    assert index_source("x.py", code.encode()).rewrite is rewrite


def test_index_reads_policy_values_including_run_time_choices():
    code = ("from tensorflow.keras import mixed_precision as mp\n"
            "def main(amp):\n    mp.set_global_policy('mixed_bfloat16' if amp else 'float32')\n")
    assert index_source("x.py", code.encode()) == FileFacts(
        ("float32", "mixed_bfloat16"), False, ("=tensorflow.keras", "tensorflow.keras.mixed_precision"),
        (("mp", "tensorflow.keras.mixed_precision"),))
    unknown = "import keras\nkeras.config.set_dtype_policy(FLAGS.dtype)\n"
    assert index_source("y.py", unknown.encode()).policies == ("?",)


def test_rewrite_and_policy_files_reach_the_facts_of_other_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # other files are named from where mplint runs
    _write(tmp_path, {
        "setup.py": "",
        "train.py": ("import tensorflow as tf\nimport model, utils\n"
                     "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
                     "opt = utils.make(None)\nnet = model.build()\n"),
        "utils.py": ("import tensorflow as tf\n"
                     "def make(opt):\n    return tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)\n"),
        "model.py": "import tensorflow as tf\ndef build():\n    pass\n",
        "examples/other.py": "import tensorflow as tf\nm = tf.keras.Sequential([tf.keras.layers.Dense(3)])\n",
    })
    linter = make_linter()
    project = build_project([str(tmp_path / "model.py")], linter.settings)
    from mplint.semantic.facts import ModuleFacts

    facts = ModuleFacts()
    project.apply(facts, str(tmp_path / "utils.py"))
    assert facts.project_policy_files == ("train.py:3, reached through train.py top level -> make()",)
    assert facts.project_rewrite_files == ()  # its own call is a module fact
    facts = ModuleFacts()
    project.apply(facts, str(tmp_path / "train.py"))
    assert facts.project_rewrite_files == ("utils.py",) and facts.project_policy_files == ()
    facts = ModuleFacts()
    project.apply(facts, str(tmp_path / "model.py"))
    assert facts.mixed_policy().names == {"mixed_float16"} and facts.mixed_policy().certain
    # a script nobody imports is another program: train.py's policy is not its own
    facts = ModuleFacts()
    project.apply(facts, str(tmp_path / "examples" / "other.py"))
    assert facts.mixed_policy() is None and facts.project_policy_files == ()


def test_a_file_setting_its_own_policy_is_governed_by_it(tmp_path):
    # model.py pins float32 itself; a mixed policy elsewhere leaves it only "may be mixed".
    code = ("import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy('float32')\n"
            "def build():\n"
            "    return tf.keras.Sequential([tf.keras.layers.Dense(3, activation='softmax')])\n")
    _write(tmp_path, {"setup.py": "", "model.py": code, "train.py": (
        "import tensorflow as tf\nimport model\n"
        "tf.keras.mixed_precision.set_global_policy('mixed_float16')\nnet = model.build()\n")})
    linter = make_linter()
    linter.project = build_project([str(tmp_path / "model.py")], linter.settings)
    findings, _ = lint_text(code, path=str(tmp_path / "model.py"), linter=linter)
    assert [f.rule for f in findings] == ["MP101"]
    assert "may be mixed" in findings[0].message
    # built at import time, right after its own float32 call: float32 for certain
    built_now = code.replace("def build():\n    return ", "m = ")
    assert lint_text(built_now, path=str(tmp_path / "model.py"), linter=linter)[0] == []


def test_index_tokens_cover_every_policy_and_rewrite_api():
    """The byte test before indexing is sound: every API it looks for has a token.

    A call can only resolve to one of these canonical names through an import or
    alias that spells the function's own name in the file.
    """
    names = set(SET_POLICY_FUNCTIONS) | set(GRAPH_REWRITE_FUNCTIONS) | {"tensorflow.config.optimizer"
                                                                          ".set_experimental_options"}
    names |= {k for k, v in _SYNONYMS.items() if v in SET_POLICY_FUNCTIONS}
    for name in names:
        last = name.rsplit(".", 1)[1].encode()
        assert any(token in last for token in INDEX_TOKENS) or name.endswith("set_experimental_options"), name
    # the grappler option and the environment switch are found by their key
    assert b"auto_mixed_precision" in INDEX_TOKENS and b"TF_ENABLE_AUTO_MIXED_PRECISION" in INDEX_TOKENS


@pytest.mark.parametrize("name, text, version", [
    ("requirements.txt", "numpy\ntensorflow==2.15.1  # pinned\n", 2),
    ("requirements.txt", "tensorflow[and-cuda]>=2.16\nkeras-tuner>=1.4\n", 3),
    ("pyproject.toml", '[project]\ndependencies = ["keras>=3.2,<4", "numpy"]\n', 3),
    ("setup.py", "setup(install_requires=['tensorflow-cpu~=2.13.0'])\n", 2),
    ("requirements.txt", "tensorflow>=2.12,<2.18\n", None),  # either
    ("requirements.txt", "tensorflow<2.16\nkeras>=3\n", None),  # contradictory: say nothing
    ("requirements.txt", "tf-keras>=2.15\nkeras\n", None),
])
def test_keras_version_comes_from_declared_dependencies(tmp_path, name, text, version):
    from mplint.run.dependency_pins import declared_keras_version

    (tmp_path / name).write_text(text)
    assert declared_keras_version(tmp_path) == version


def test_declared_keras_version_beats_installed_and_loses_to_the_setting(tmp_path):
    _write(tmp_path, {"requirements.txt": "keras>=3\n", "setup.py": "", "a.py": "import keras\n"})
    project = build_project([str(tmp_path / "a.py")], make_linter().settings)
    pins = project.pins.for_file(str(tmp_path / "a.py"))
    assert [(p.package, p.spec, p.file, p.line) for p in pins] == [("keras", ">=3", "requirements.txt", 1)]
    from mplint.semantic.keras_version import detect

    # the declaration beats what happens to be installed; the setting beats both
    assert detect(None, "import keras\n", installed=2, project_pins=pins) == 3
    assert detect(2, "import keras\n", installed=3, project_pins=pins) == 2


def test_mp401_policy_and_rewrite_in_different_files(tmp_path):
    _write(tmp_path, {
        "pyproject.toml": "[project]\nname = 'p'\n",
        "train.py": ("import tensorflow as tf\nfrom utils import make\n"
                     "tf.keras.mixed_precision.set_global_policy('mixed_float16')\nopt = make(None)\n"),
        "utils.py": ("import tensorflow as tf\n\ndef make(opt):\n"
                     "    return tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(opt)\n"),
    })
    result = run_cli("check", "--select", "MP401", "--no-cache", "utils.py", cwd=tmp_path)
    assert outcome(result) == (1, [("utils.py", 4, "MP401")]), result.stderr
    assert "utils.py:4:12: MP401" in result.stdout and "in train.py" in result.stdout
    (tmp_path / "train.py").write_text("import tensorflow as tf\n", encoding="utf-8")
    assert outcome(run_cli("check", "--select", "MP401", "--no-cache", "utils.py", cwd=tmp_path)) == (0, [])


_PRECISION_HELPER = (
    "import tensorflow as tf\n\n"
    "def set_mixed_precision_policy(dtype):\n"
    "    if dtype == tf.float16:\n"
    "        tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
    "    elif dtype == tf.float32:\n"
    "        tf.keras.mixed_precision.set_global_policy('float32')\n"
)
_RUNNABLE = (
    "import tensorflow as tf\n\n"
    "class Runnable:\n"
    "    def __init__(self, flags, dtype):\n"
    "        self.optimizer = tf.keras.optimizers.SGD()\n"
    "        if dtype == tf.float16:\n"
    "            self.optimizer = tf.keras.mixed_precision.LossScaleOptimizer(self.optimizer)\n"
    "        {guard}\n"
    "            self.optimizer = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(\n"
    "                self.optimizer)\n"
)


def _two_options_project(tmp_path, main_sets: str, guard: str = "elif flags.fp16_implementation == 'graph_rewrite':"):
    _write(tmp_path, {
        "pyproject.toml": "[project]\nname = 'p'\n",
        "common/__init__.py": "", "common/performance.py": _PRECISION_HELPER,
        "runnable.py": _RUNNABLE.format(guard=guard),
        "main.py": ("import tensorflow as tf\nfrom common import performance\nimport runnable\n\n"
                    f"def run(flags):\n    dtype = tf.float16 if flags.dtype == 'fp16' else tf.float32\n"
                    f"    {main_sets}\n    return runnable.Runnable(flags, dtype)\n"),
    })
    return run_cli("check", "--select", "MP401", "--no-cache", ".", cwd=tmp_path)


def test_mp401_a_flag_chosen_rewrite_and_a_policy_chosen_at_run_time_are_two_options(tmp_path):
    # mlcommons' ResNet: set_mixed_precision_policy(dtype) in one module, the rewrite under
    # --fp16_implementation=graph_rewrite in another: the user picks one or the other.
    result = _two_options_project(tmp_path, "performance.set_mixed_precision_policy(dtype)")
    assert outcome(result) == (0, []), result.stdout


def test_mp401_a_flag_chosen_rewrite_under_an_unconditional_policy_is_found(tmp_path):
    result = _two_options_project(tmp_path, "tf.keras.mixed_precision.set_global_policy('mixed_float16')")
    assert outcome(result) == (1, [("runnable.py", 9, "MP401")]), result.stdout
    # the setting place is named once, by its route
    assert result.stdout.count("main.py:7") == 1 and "reached through run() -> Runnable.__init__()" in result.stdout


def test_mp401_an_unconditional_rewrite_under_a_policy_chosen_at_run_time_is_found(tmp_path):
    result = _two_options_project(tmp_path, "performance.set_mixed_precision_policy(dtype)", guard="with tf.name_scope('rewrite'):")
    assert outcome(result) == (1, [("runnable.py", 9, "MP401")]), result.stdout
    assert "may set a mixed Keras policy (mixed_float16): the policy is chosen at run time" in result.stdout


def test_a_policy_governs_the_modules_its_file_imports(tmp_path):
    from mplint.run.project import governs

    root = tmp_path
    train = str(root / "src" / "app" / "train.py")
    cases = [
        (("app.models.resnet",), "src/app/models/resnet.py", True),   # absolute, by a suffix
        (("app.models",), "src/app/models/resnet.py", True),          # a package holds it
        ((".models.resnet",), "src/app/models/resnet.py", True),      # relative
        (("..lib",), "src/lib/__init__.py", True),                    # two levels up
        (("app.data",), "src/app/models/resnet.py", False),
        (("=app.models", "app.models.build"), "src/app/models/resnet.py", False),  # from app.models import build
        (("=app.models", "app.models.build"), "src/app/models/__init__.py", True),
        (("=model", "model.build_model"), "src/app/model.py", True),          # from model import build_model
        (("tensorflow",), "src/app/models/resnet.py", False),
        ((), "src/app/models/resnet.py", False),
        # `import utils` finds utils.py beside the script or in a folder above it,
        # never in an unrelated folder of a monorepo (another program's utils)
        (("utils",), "src/app/utils.py", True),
        (("utils",), "src/utils.py", True),
        (("utils",), "utils.py", True),
        (("utils",), "other/runtime/utils.py", False),
        (("app.utils",), "other/app/utils.py", False),
    ]
    for imports, target, expected in cases:
        assert governs(train, FileFacts(("mixed_float16",), False, imports), str(root / target), root) is expected, \
            (imports, target)
    # a src layout: tests/ imports the package from src/
    test = str(root / "tests" / "test_model.py")
    assert governs(test, FileFacts(("mixed_float16",), False, ("app.models",)), str(root / "src/app/models/x.py"), root)


def test_other_files_are_named_from_where_mplint_runs(tmp_path):
    """As the finding's own path: from the project root, from a subfolder, and in full
    for a file outside the folder mplint runs in."""
    from helpers import run_cli

    _write(tmp_path, {
        "setup.py": "",
        "src/proj/train.py": "import tensorflow as tf\nfrom proj import models\n"
                             "tf.keras.mixed_precision.set_global_policy('mixed_float16')\nmodels.build().fit()\n",
        "src/proj/models.py": "import tensorflow as tf\n\ndef build():\n"
                              "    return tf.keras.Sequential([tf.keras.layers.Dense(10, activation='softmax')])\n",
    })
    (tmp_path / "docs").mkdir()
    runs = {tmp_path: "src/proj/models.py", tmp_path / "src": "proj/models.py",
            tmp_path / "docs": str(tmp_path / "src/proj/models.py")}
    for cwd, named in runs.items():
        out = run_cli("check", "--no-cache", "--select", "MP101", named, cwd=cwd).stdout
        where = str(tmp_path / "src/proj/train.py") if cwd.name == "docs" else \
            os.path.relpath(tmp_path / "src/proj/train.py", cwd)
        assert out.startswith(named + ":4:") and f"the mixed policy is set in {where}:3" in out, out


def test_assuming_a_mixed_policy_indexes_only_the_files_that_may_enable_the_rewrite(tmp_path, monkeypatch):
    """Every file is judged as mixed: where policies are set adds nothing. Nothing
    wrong is cached for the files left out: the next run without the assumption
    indexes them."""
    import mplint.run.project as project_module
    from mplint.run.cache import Cache

    _write(tmp_path, {
        "setup.py": "",
        "train.py": "import tensorflow as tf\nimport model\n"
                    "tf.keras.mixed_precision.set_global_policy('mixed_float16')\nmodel.build()\n",
        "rewrite.py": "import tensorflow as tf\n"
                      "tf.config.optimizer.set_experimental_options({'auto_mixed_precision': True})\n",
        "model.py": "import tensorflow as tf\ndef build():\n    pass\n",
    })
    parsed = []
    real = project_module.index_source
    monkeypatch.setattr(project_module, "index_source",
                        lambda path, *a: parsed.append(os.path.basename(path)) or real(path, *a))
    settings = make_linter().settings
    cache = Cache(tmp_path / ".mplint_cache")
    mixed = build_project([str(tmp_path)], settings.with_overrides(assume_policy="mixed_float16"), cache)
    cache.save()
    assert parsed == ["rewrite.py"] and sorted(os.path.basename(k) for k in mixed.files) == ["rewrite.py"]
    parsed.clear()
    plain = build_project([str(tmp_path)], settings, Cache(tmp_path / ".mplint_cache"))
    assert parsed == ["train.py"] and plain.files[str(tmp_path / "train.py")].policies == ("mixed_float16",)


def test_setting_places_are_named_once_calls_before_imports(tmp_path):
    project = ProjectFacts(tmp_path, shown_from=tmp_path)
    imported = Route(str(tmp_path / "a.py"), 5, ("main()", "models.py top level", "layers.py top level"))
    called = Route(str(tmp_path / "b.py"), 9, ("main()", "build()", "Block.call()"))
    shorter = Route(str(tmp_path / "b.py"), 9, ("main()", "Block.call()"))
    assert project._describe_all([imported, called, shorter]) == (
        "b.py:9, reached through main() -> Block.call()",
        "a.py:5, reached through main() -> models.py top level -> layers.py top level",
    )


_BUILD = ("def build_model():\n"
          "    return keras.Sequential([keras.layers.Dense(64), keras.layers.Dense(10, activation='softmax')])\n\n")
_MIXED = "keras.mixed_precision.set_global_policy('mixed_float16')\n"


def _notebook(cells):
    import json

    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                                  "source": cell} for cell in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


@pytest.mark.parametrize("uses, found", [
    # built and trained before the notebook turns to mixed precision: float32 models
    (["m = build_model()\nm.fit(x, y)\n"], False),
    (["def train():\n    build_model().fit(x, y)\n\ntrain()\n"], False),
    # built after the policy, or handed on where it may be called later: mixed
    (["", "m = build_model()\nm.fit(x, y)\n"], True),
    (["zoo = {'mlp': build_model}\n", "zoo['mlp']().fit(x, y)\n"], True),
])
def test_code_that_runs_only_before_a_later_policy_cell_is_float32(tmp_path, uses, found):
    before, after = (uses + [""])[:2]
    cells = ["from tensorflow import keras\n", _BUILD, before, _MIXED, after]
    _write(tmp_path, {"pyproject.toml": "[project]\nname = 'p'\n", "chapter.ipynb": _notebook(cells)})
    result = run_cli("check", "--select", "MP101", "--no-cache", ".", cwd=tmp_path)
    assert outcome(result)[0] == (1 if found else 0), result.stdout


def test_a_model_class_defined_before_the_policy_and_never_used_is_float32(tmp_path):
    code = ("from tensorflow import keras\n\n"
            "class SimpleMLP(keras.Model):\n"
            "    def __init__(self):\n        super().__init__()\n"
            "        self.out = keras.layers.Dense(10, activation='softmax')\n\n"
            "    def call(self, x):\n        return self.out(x)\n\n" + _MIXED)
    _write(tmp_path, {"pyproject.toml": "[project]\nname = 'p'\n", "nb.py": code})
    assert outcome(run_cli("check", "--select", "MP101", "--no-cache", ".", cwd=tmp_path)) == (0, [])
    assert outcome(run_cli("check", "--select", "MP101", "--no-cache", "nb.py", cwd=tmp_path)) == (0, [])
    # defined after the policy: whatever calls it runs it under the policy
    _write(tmp_path, {"nb.py": "from tensorflow import keras\n" + _MIXED + code.split("\n", 1)[1].replace(_MIXED, "")})
    assert outcome(run_cli("check", "--select", "MP101", "--no-cache", ".", cwd=tmp_path))[0] == 1


def test_tensorflow_handed_on_by_a_project_package_is_tensorflow(tmp_path):
    # TensorSpeech/TensorFlowASR: `import keras` and `import tensorflow as tf` in the package's
    # __init__.py, and `from tensorflow_asr import keras, tf` in every module.
    _write(tmp_path, {
        "pyproject.toml": "[project]\nname = 'asr'\n",
        "asr/__init__.py": "import os\nimport keras\nimport tensorflow as tf  # for reference\n",
        "asr/models.py": ("from asr import keras, tf\n\n"
                          "keras.mixed_precision.set_global_policy('mixed_float16')\n\n"
                          "def build():\n"
                          "    return keras.Sequential([keras.layers.Dense(64), keras.layers.Dense(10, activation='softmax')])\n\n"
                          "model = build()\nmodel.compile(optimizer='adam', loss='mse')\n"
                          "model.fit(tf.zeros([8, 4]), tf.zeros([8, 10]))\n"),
    })
    assert outcome(run_cli("check", "--select", "MP101", "--no-cache", ".", cwd=tmp_path)) == (
        1, [("asr/models.py", 6, "MP101")])
    # the cache knows what the package hands on: the next run answers the same
    assert outcome(run_cli("check", "--select", "MP101", ".", cwd=tmp_path))[1] == [("asr/models.py", 6, "MP101")]
    assert outcome(run_cli("check", "--select", "MP101", ".", cwd=tmp_path))[1] == [("asr/models.py", 6, "MP101")]
    # a package that binds another `tf` hands nothing on
    (tmp_path / "asr/__init__.py").write_text("import os\nimport keras\ntf = None\n", encoding="utf-8")
    (tmp_path / "asr/models.py").write_text(
        (tmp_path / "asr/models.py").read_text().replace("keras.", "tf.keras."), encoding="utf-8")
    assert outcome(run_cli("check", "--select", "MP101", ".", cwd=tmp_path)) == (0, [])


def test_exports_are_the_imports_of_tensorflow_and_keras_a_file_makes():
    from mplint.run.reexports import exports_of

    raw = (b"import os\nimport tensorflow as tf  # for reference\nimport keras\n"
           b"from tensorflow.keras import layers as L, models\nfrom tensorflow import keras as tfk\n"
           b"try:\n    import tf_keras as k2\nexcept ImportError:\n    from tensorflow import keras as k2\n"
           b"import numpy as np\nimport torch as tf4\nimport kerastuner, tensorflow_hub as hub\n"
           b"import os, tensorflow.compat.v1 as tf1, tf_keras  # official's spelling\n")
    assert exports_of(raw) == (("L", "tensorflow.keras.layers"), ("k2", "tensorflow.keras"), ("k2", "tf_keras"),
                               ("keras", "keras"), ("models", "tensorflow.keras.models"), ("tf", "tensorflow"),
                               ("tf1", "tensorflow.compat.v1"), ("tf_keras", "tf_keras"), ("tfk", "tensorflow.keras"))


def test_a_compatibility_module_reached_by_a_relative_import_hands_keras_on(tmp_path):
    # `from .compat import keras`, where compat.py picks tf_keras or tf.keras in a try
    _write(tmp_path, {
        "pyproject.toml": "[project]\nname = 'p'\n",
        "pkg/__init__.py": "",
        "pkg/compat.py": ("try:\n    import tf_keras as keras\nexcept ImportError:\n"
                          "    from tensorflow import keras\n"),
        "pkg/model.py": ("from .compat import keras\n\n"
                         "keras.mixed_precision.set_global_policy('mixed_float16')\n"
                         "model = keras.Sequential([keras.layers.Dense(64), keras.layers.Dense(10, activation='softmax')])\n"
                         "model.compile(optimizer='adam', loss='mse')\n"),
    })
    assert outcome(run_cli("check", "--select", "MP101", "--no-cache", ".", cwd=tmp_path)) == (
        1, [("pkg/model.py", 4, "MP101")])
    (tmp_path / "pkg/model.py").write_text(
        (tmp_path / "pkg/model.py").read_text().replace("from .compat", "from .other"), encoding="utf-8")
    assert outcome(run_cli("check", "--select", "MP101", "--no-cache", ".", cwd=tmp_path)) == (0, [])


def test_a_policy_set_through_a_handed_on_keras_reaches_the_modules_it_runs(tmp_path):
    # the index reads the setter's calls with the same names as the check does
    _write(tmp_path, {
        "pyproject.toml": "[project]\nname = 'p'\n",
        "pkg/__init__.py": "import keras\n",
        "pkg/train.py": ("from pkg import keras\nfrom pkg.models import build\n\n\ndef main():\n"
                         "    keras.mixed_precision.set_global_policy('mixed_float16')\n    build().fit(x, y)\n\n\n"
                         "if __name__ == '__main__':\n    main()\n"),
        "pkg/models.py": ("import keras\n\n\ndef build():\n"
                          "    return keras.Sequential([keras.layers.Dense(64), keras.layers.Dense(10, activation='softmax')])\n"),
    })
    found = (1, [("pkg/models.py", 5, "MP101")])
    assert outcome(run_cli("check", "--select", "MP101", ".", cwd=tmp_path)) == found
    assert outcome(run_cli("check", "--select", "MP101", "pkg/models.py", cwd=tmp_path)) == found  # pre-commit
    # the package stops handing keras on: the cached facts of train.py are stale, not reused
    (tmp_path / "pkg/__init__.py").write_text("keras = None\n", encoding="utf-8")
    assert outcome(run_cli("check", "--select", "MP101", "pkg/models.py", cwd=tmp_path)) == (0, [])
    assert outcome(run_cli("check", "--select", "MP101", ".", cwd=tmp_path)) == (0, [])
    (tmp_path / "pkg/__init__.py").write_text("import keras\n", encoding="utf-8")
    assert outcome(run_cli("check", "--select", "MP101", "pkg/models.py", cwd=tmp_path)) == found


def test_an_argument_passed_in_another_module_decides_the_layer_and_its_change_reaches_the_cache(tmp_path):
    # train.py passes classifier_activation="softmax" to zoo/models.py's build(): MP101 there,
    # in a pre-commit run that names only models.py, with the cache on.
    project = _copy("call_site_values", tmp_path)
    first = run_cli("check", "zoo/models.py", cwd=project)
    assert ("zoo/models.py", 8, "MP101") in outcome(first)[1], first.stdout + first.stderr
    train = project / "train.py"
    train.write_text(train.read_text().replace('classifier_activation="softmax"', "classifier_activation=None"))
    second = run_cli("check", "zoo/models.py", cwd=project)
    assert ("zoo/models.py", 8, "MP102") in outcome(second)[1]
    assert ("zoo/models.py", 8, "MP101") not in outcome(second)[1]
    assert outcome(second) == outcome(run_cli("check", "--no-cache", "zoo/models.py", cwd=project))


def test_summaries_write_unknown_as_the_evaluator_reads_it():
    from mplint.run.summaries import UNKNOWN
    from mplint.semantic.values import ELSEWHERE_UNKNOWN

    assert UNKNOWN == ELSEWHERE_UNKNOWN


def test_fixing_an_imported_layer_module_changes_the_next_cached_run(tmp_path):
    # zoo/models.py's MP102 comes from TiedOutput.call in zoo/heads.py: the cached result
    # of models.py is keyed by the content of heads.py too (mplint.core.reads).
    project = _copy("imported_layers", tmp_path)
    models = "src/zoo/models.py"
    first = run_cli("check", models, cwd=project)
    assert (models, 13, "MP102") in outcome(first)[1], first.stdout + first.stderr
    heads = project / "src" / "zoo" / "heads.py"
    heads.write_text(heads.read_text().replace(
        "        return ops.matmul(x, ops.transpose(self.embedding.embeddings))\n",
        '        return ops.cast(ops.matmul(x, ops.transpose(self.embedding.embeddings)), "float32")\n', 1))
    second = run_cli("check", models, cwd=project)
    assert (models, 13, "MP102") not in outcome(second)[1], second.stdout
    assert outcome(second) == outcome(run_cli("check", "--no-cache", models, cwd=project))
    # and back: the cache does not keep the fixed module's answer either
    heads.write_text(heads.read_text().replace(
        '        return ops.cast(ops.matmul(x, ops.transpose(self.embedding.embeddings)), "float32")\n',
        "        return ops.matmul(x, ops.transpose(self.embedding.embeddings))\n", 1))
    assert (models, 13, "MP102") in outcome(run_cli("check", models, cwd=project))[1]


def test_a_library_with_no_program_setting_a_policy_judges_its_public_models_as_may_be_mixed(tmp_path):
    project = _copy("layer_library", tmp_path)
    whole = run_cli("check", ".", cwd=project)
    assert outcome(whole) == (1, [("zoo/layers.py", 8, "MP504"), ("zoo/models.py", 9, "MP101")]), \
        whole.stdout + whole.stderr
    assert "a library's code: its users may run it under a mixed policy" in whole.stdout
    # pre-commit names the one file: the same answer
    assert outcome(run_cli("check", "zoo/models.py", cwd=project)) == (1, [("zoo/models.py", 9, "MP101")])
    # a program of the project that names a policy API: its policies are followed instead
    (project / "train.py").write_text(
        "import tensorflow as tf\nfrom zoo import models\n"
        "tf.keras.mixed_precision.set_global_policy('float32')\nmodels.SmallNet().fit(x, y)\n")
    assert outcome(run_cli("check", ".", cwd=project)) == (0, [])
    (project / "train.py").unlink()
    # the setting decides over the guess, both ways
    (project / "pyproject.toml").write_text('[project]\nname = "zoo"\n[tool.mplint]\nlibrary = false\n')
    assert outcome(run_cli("check", ".", cwd=project)) == (0, [])
    (project / "pyproject.toml").write_text('[tool.mplint]\nlibrary = "yes"\n')
    assert "'library' must be true or false" in run_cli("check", ".", cwd=project).stderr


def test_a_commented_out_policy_call_is_no_program(tmp_path):
    # A library's example keeps "# set_global_policy(...)" as a hint to its users: that
    # is no program setting a policy, so the library's public models stay "may be mixed".
    project = _copy("layer_library", tmp_path)
    example = project / "examples" / "train_hint.py"
    example.write_text("import tensorflow as tf\nfrom zoo import models\n"
                       "# tf.keras.mixed_precision.set_global_policy('float32')\nmodels.SmallNet().fit(x, y)\n")
    expected = (1, [("zoo/layers.py", 8, "MP504"), ("zoo/models.py", 9, "MP101")])
    assert outcome(run_cli("check", ".", cwd=project)) == expected
    assert outcome(run_cli("check", "--no-cache", ".", cwd=project)) == expected
    # the same call in code is a program: its float32 policy is followed, with or without a cache
    example.write_text(example.read_text().replace("# tf.keras", "tf.keras"))
    assert outcome(run_cli("check", ".", cwd=project)) == (0, [])
    assert outcome(run_cli("check", "--no-cache", ".", cwd=project)) == (0, [])


def test_a_project_that_is_not_packaged_is_a_library_only_through_its_packages_surface(tmp_path):
    # No setup.py, setup.cfg or [project]: only the modules code outside the package
    # imports (the test imports zoo.models) or an __init__ exports are the library's;
    # zoo/layers.py, which nothing imports, is the package's own (tests/test_library.py).
    project = _copy("layer_library", tmp_path)
    (project / "pyproject.toml").write_text("[tool.black]\n")
    assert outcome(run_cli("check", ".", cwd=project)) == (1, [("zoo/models.py", 9, "MP101")])


def test_a_library_function_called_below_and_from_a_script_keeps_its_policy_open(tmp_path):
    # tfimm's profile.py: time_model(float_policy) sets the policy and trains without
    # loss scaling; find_max_batch_size (further down, default "float32") and two scripts
    # (a command-line choice, and "float32") call it. Neither the call below nor the default is every
    # value: the policy is chosen at run time, and MP201 holds.
    _write(tmp_path, {
        "setup.py": "",
        "lib/__init__.py": "",
        "lib/profile.py": """\
            import tensorflow as tf


            def time_model(model, float_policy):
                tf.keras.mixed_precision.set_global_policy(float_policy)
                optimizer = tf.optimizers.SGD(learning_rate=0.0001)
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.cast(model(x), "float32"))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))


            def find_max_batch_size(model, float_policy="float32"):
                return time_model(model, float_policy=float_policy)
            """,
        "scripts/profile_gpu.py": """\
            import sys

            from lib.profile import find_max_batch_size

            if __name__ == "__main__":
                find_max_batch_size(None, float_policy=sys.argv[1])
            """,
        "scripts/profile_cpu.py": """\
            from lib.profile import time_model

            if __name__ == "__main__":
                time_model(None, float_policy="float32")
            """,
    })
    result = run_cli("check", "--select", "MP201", ".", cwd=tmp_path)
    assert outcome(result) == (1, [("lib/profile.py", 10, "MP201")]), result.stdout + result.stderr
    assert "the policy is chosen at run time and may be mixed" in result.stdout


def test_a_model_fitted_only_by_a_test_is_not_trained_as_a_whole(tmp_path):
    # VideoSwin: a test fits the backbone to see it run in mixed precision; the program
    # uses it as a part of a model whose head is float32
    _write(tmp_path, {
        "pyproject.toml": '[project]\nname = "vs"\n',
        "vs/__init__.py": "",
        "vs/backbone.py": """\
            import keras


            class Backbone(keras.Model):
                def __init__(self):
                    inputs = keras.Input((8,))
                    outputs = keras.layers.Dense(16)(inputs)
                    super().__init__(inputs, outputs)
            """,
        "tests/test_backbone.py": """\
            import keras
            from vs.backbone import Backbone


            def test_can_run_in_mixed_precision():
                keras.mixed_precision.set_global_policy("mixed_float16")
                model = Backbone()
                model.compile(loss="mse")
                model.fit(x, y)
            """,
        "train.py": """\
            import keras
            from vs.backbone import Backbone

            keras.mixed_precision.set_global_policy("mixed_float16")
            backbone = Backbone()
            inputs = keras.Input((8,))
            outputs = keras.layers.Dense(3, dtype="float32")(backbone(inputs))
            model = keras.Model(inputs, outputs)
            model.compile(loss="mse")
            model.fit(x, y)
            """,
    })
    assert outcome(run_cli("check", ".", cwd=tmp_path)) == (0, [])
    # the program itself training the backbone as a whole: its output is the model's
    (tmp_path / "train.py").write_text((tmp_path / "train.py").read_text() + "backbone.compile(loss='mse')\n"
                                       "backbone.fit(x, y)\n")
    assert outcome(run_cli("check", ".", cwd=tmp_path)) == (1, [("vs/backbone.py", 7, "MP102")])
