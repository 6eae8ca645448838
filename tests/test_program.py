"""The program model: which code a policy set elsewhere in the project reaches."""

import json
from pathlib import Path

from mplint.api import make_linter
from mplint.run.project import build_project
from mplint.run.summaries import METHOD, ModuleSummary, summarize

POLICY = "import tensorflow as tf\n"


def _write(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _governed(root, name):
    """{function: policies} of the functions of ``name`` that a policy reaches."""
    linter = make_linter()
    project = build_project([str(root / name)], linter.settings)
    governance = project.program.governance(str((root / name).resolve()))
    return {function: set(routes) for function, routes in governance.by_function.items()}


def test_summaries_record_calls_sets_classes_and_scripts():
    summary = summarize(
        "import tensorflow as tf\nfrom pkg import trainers as tr\n\n"
        "class Net(Base):\n    def __init__(self):\n        self.head = Head()\n"
        "    def call(self, x):\n        return self.head.project(x)\n\n"
        "def main():\n    tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
        "    t = tr.Trainer()\n    t.fit()\n    super().fit()\n\n"
        "if __name__ == '__main__':\n    main()\n")
    assert summary.script
    assert summary.imports == {"tf": "tensorflow", "tr": "pkg.trainers"}
    assert summary.classes["Net"].bases == ["Base"] and summary.classes["Net"].attributes == {"head": "Head"}
    main = summary.functions["main"]
    assert main.sets == [(11, "mixed_float16")]
    assert (13, "tr.Trainer" + METHOD + "fit") in main.calls and (14, "super" + METHOD + "fit") in main.calls
    assert ModuleSummary.from_json(json.loads(json.dumps(summary.to_json()))) == summary
    assert ModuleSummary.from_json([999, False, {}, {}, {}]) is None  # another version: a miss
    assert summarize("def f(:\n").functions == {}


def test_a_closure_s_returns_are_not_the_outer_function_s():
    summary = summarize(
        "def make_block(units):\n"
        "    def block(x):\n"
        "        return Dense(units)(x)\n"
        "    class Head:\n"
        "        def call(self, x):\n"
        "            return Softmax()(x)\n"
        "    return block\n\n"
        "def build():\n"
        "    def helper():\n"
        "        return Other()\n"
        "    return Net()\n")
    # the closure and the nested class's method return their own results
    assert summary.functions["make_block"].returns == ["?"]
    assert summary.functions["build"].returns == ["Net"]
    # their calls still run when the outer function does (a closure called inside it)
    assert any(callee == "Dense" for _, callee in summary.functions["make_block"].calls)


def test_only_code_called_after_the_set_is_governed(tmp_path):
    _write(tmp_path, {
        "setup.py": "",
        "train.py": POLICY + "import models\nmodels.before()\n"
                    "tf.keras.mixed_precision.set_global_policy('mixed_float16')\nmodels.after()\n",
        "models.py": "def before():\n    helper()\ndef after():\n    helper()\ndef helper():\n    pass\n"
                     "def unused():\n    pass\n",
    })
    # before() runs before the set; helper() is reached through after()
    assert _governed(tmp_path, "models.py") == {"after": {"mixed_float16"}, "helper": {"mixed_float16"}}


def test_a_package_reexport_cycle_does_not_hang_or_crash(tmp_path):
    _write(tmp_path, {
        "setup.py": "",
        "pkg/__init__.py": "from pkg.a import build\nfrom pkg import build as again\n",
        "pkg/a.py": "from pkg import build\n",
        "main.py": POLICY + "import pkg\ntf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
                   "pkg.build()\npkg.again()\n",
    })
    assert _governed(tmp_path, "pkg/a.py") == {}


def test_methods_through_bases_in_other_modules_and_self_attributes(tmp_path):
    _write(tmp_path, {
        "setup.py": "",
        "base.py": "class Base:\n    def fit(self):\n        return self.net.forward()\n"
                   "    def __init__(self):\n        self.net = Net()\n\n"
                   "from nets import Net\n",
        "nets.py": "class Net:\n    def forward(self):\n        return 1\n    def export(self):\n        return 2\n",
        "trainer.py": POLICY + "from base import Base\n\nclass Trainer(Base):\n    def run(self):\n"
                      "        tf.keras.mixed_precision.set_global_policy('mixed_bfloat16')\n"
                      "        return super().fit()\n",
    })
    governed = _governed(tmp_path, "nets.py")
    # constructing Net governs its methods only where the constructing code is governed;
    # here Base.fit() is reached, and it calls self.net.forward()
    assert governed == {"Net.forward": {"mixed_bfloat16"}}
    assert _governed(tmp_path, "base.py") == {"Base.fit": {"mixed_bfloat16"}}


def test_a_notebook_that_sets_the_policy_governs_the_project_code_it_calls(tmp_path):
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
            "source": ["import tensorflow as tf\n", "import heads\n",
                       "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n",
                       "model = heads.classifier(10)\n"]}
    _write(tmp_path, {
        "pyproject.toml": "",
        "analysis.ipynb": json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}),
        "heads.py": "import tensorflow as tf\n\ndef classifier(n):\n"
                    "    return tf.keras.Sequential([tf.keras.layers.Dense(n, activation='softmax')])\n",
    })
    from mplint import cli
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert cli.main(["check", "--no-cache", "--output-format", "json", "heads.py"]) == 1
    finally:
        os.chdir(cwd)


def test_the_route_names_the_file_line_and_calls(tmp_path, capsys):
    _write(tmp_path, {
        "pyproject.toml": "",
        "src/app/precision.py": POLICY + "def enable():\n    tf.keras.mixed_precision.set_global_policy('mixed_float16')\n",
        "src/app/model.py": "import tensorflow as tf\n\ndef build():\n"
                            "    return tf.keras.Sequential([tf.keras.layers.Dense(4, activation='softmax')])\n",
        "scripts/train.py": "from app.precision import enable\nfrom app.model import build\n\n"
                            "def main():\n    enable()\n    return build()\n",
    })
    from mplint import cli
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert cli.main(["check", "--no-cache", "src/app/model.py"]) == 1
    finally:
        os.chdir(cwd)
    out = capsys.readouterr().out
    assert "src/app/model.py:4:33: MP101" in out
    assert "(the mixed policy is set in src/app/precision.py:3, reached through main() -> build())" in out


def test_the_result_is_reused_until_a_file_it_depends_on_changes(tmp_path, monkeypatch):
    import mplint.run.project as project_module
    from mplint.run.cache import Cache

    _write(tmp_path, {
        "setup.py": "",
        "train.py": POLICY + "import models\ntf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
                    "models.build()\n",
        "models.py": "def build():\n    pass\n",
        "other.py": "import json\n",
    })
    builds = []
    real = project_module._program
    monkeypatch.setattr(project_module, "_program", lambda *a: builds.append(1) or real(*a))
    settings = make_linter().settings

    def run():
        cache = Cache(tmp_path / ".mplint_cache")
        found = build_project([str(tmp_path / "models.py")], settings, cache)
        cache.save()
        return found.program.governance(str(tmp_path / "models.py")).policies

    assert run() == {"mixed_float16"} and len(builds) == 1
    assert run() == {"mixed_float16"} and len(builds) == 1  # nothing changed
    (tmp_path / "other.py").write_text("import json\nx = 1\n")  # depends on nothing read
    assert run() == {"mixed_float16"} and len(builds) == 1
    (tmp_path / "other.py").write_text("import models\nmodels.build()\n")  # calls, but sets nothing
    assert run() == {"mixed_float16"} and len(builds) == 1
    (tmp_path / "other.py").write_text("import train\n")  # imports a module that sets a policy
    assert run() == {"mixed_float16"} and len(builds) == 2
    # a file the result read, edited where the model cannot see (early cut-off): reused
    (tmp_path / "models.py").write_text("def build():\n    pass\n\n# a comment\n")
    assert run() == {"mixed_float16"} and len(builds) == 2
    (tmp_path / "models.py").write_text("def build():\n    helper()\n")  # what the model reads changed
    assert run() == {"mixed_float16"} and len(builds) == 3
    (tmp_path / "train.py").write_text(POLICY + "import models\nmodels.build()\n")  # the policy goes
    assert run() == set() and len(builds) == 4


def test_a_pre_commit_result_outlives_a_whole_project_run_and_an_edit_it_did_not_read(tmp_path, monkeypatch):
    """pre-commit names files; a run over the whole tree in between stores the whole
    project's result, which an edit to a module only it read makes stale. The named
    files' own result is still good and is used."""
    import mplint.run.project as project_module
    from mplint.run.cache import Cache

    _write(tmp_path, {
        "setup.py": "",
        "train.py": POLICY + "import models, helpers\ntf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
                    "models.build()\nhelpers.log()\n",
        "models.py": "def build():\n    pass\n",
        "helpers.py": "def log():\n    pass\n",
    })
    builds = []
    real = project_module._program
    monkeypatch.setattr(project_module, "_program", lambda *a: builds.append(a[-1]) or real(*a))
    settings = make_linter().settings
    models = str(tmp_path / "models.py")

    def run(named):
        cache = Cache(tmp_path / ".mplint_cache")
        found = build_project([str(tmp_path)] if named is None else [models], settings, cache,
                              extra=[] if named is None else [models])
        cache.save()
        return found.program.governance(models).policies

    assert run(models) == {"mixed_float16"} and len(builds) == 1 and builds[-1] is not None
    assert run(None) == {"mixed_float16"} and len(builds) == 2 and builds[-1] is None  # the whole tree
    (tmp_path / "helpers.py").write_text("def log():\n    return 1\n")  # read by the whole run only
    assert run(models) == {"mixed_float16"} and len(builds) == 2  # its own result: not rebuilt
    (tmp_path / "models.py").write_text("def build():\n    return 1\n")  # a file it read
    assert run(models) == {"mixed_float16"} and len(builds) == 3


def test_one_named_file_sees_a_policy_through_a_chain_of_modules(tmp_path, capsys):
    """pre-commit names one file: the model still follows the chain to it, and only it."""
    import os
    import shutil

    from mplint import cli

    project = tmp_path / "src_trainer"
    shutil.copytree(Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "src_trainer", project)
    cwd = os.getcwd()
    os.chdir(project)
    try:
        assert cli.main(["check", "--no-cache", "src/vision/models/classifier.py"]) == 1
        out = capsys.readouterr().out
        assert out.startswith("src/vision/models/classifier.py:9:15: MP101 ")
        assert "reached through MixedTrainer.fit() -> BaseTrainer.fit() -> BaseTrainer.build_model() " \
               "-> build_classifier()" in out
        assert cli.main(["check", "src/vision/models/classifier.py"]) == 1  # cached, one file
        assert cli.main(["check", "."]) == 1  # the whole project: the one-file answer is not reused
        assert "Found 1 problem" in capsys.readouterr().out
    finally:
        os.chdir(cwd)


def _trained(root, name):
    linter = make_linter()
    project = build_project([str(root / name)], linter.settings)
    return set(project.program.governance(str((root / name).resolve())).trained)


def test_models_trained_elsewhere_are_followed_through_returns_parameters_and_attributes(tmp_path):
    _write(tmp_path, {
        "setup.py": "",
        "train.py": POLICY + "from nets import build, Head, make_head, Probe\nfrom loop import fit, Loop\n\n"
                    "def main():\n    tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
                    "    fit(build())\n    Loop(make_head()).run()\n    Probe().summary()\n",
        "loop.py": "def fit(model):\n    model.fit(None)\n\n"
                   "class Loop:\n    def __init__(self, net):\n        self.net = net\n"
                   "    def run(self):\n        return self.net.trainable_variables\n",
        "nets.py": "def build():\n    return _inner()\n\ndef _inner():\n    return Model()\n\n"
                   "class Head:\n    pass\n\ndef make_head():\n    head = Head()\n    return head\n\n"
                   "class Probe:\n    pass\n",
    })
    # build() and the _inner() it returns; Head through make_head() and Loop's self.net;
    # Probe only prints a summary
    assert _trained(tmp_path, "nets.py") == {"build", "_inner", "make_head", "Head"}


def test_a_model_trained_nowhere_is_not_trained(tmp_path):
    _write(tmp_path, {
        "setup.py": "",
        "train.py": POLICY + "from nets import build\n\n"
                    "def main():\n    tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
                    "    model = build()\n    model.summary()\n    other = build()\n    other.save('x')\n",
        "nets.py": "def build():\n    return Model()\n",
    })
    assert _trained(tmp_path, "nets.py") == set()


def test_optimizer_kinds_are_the_training_analysis_kinds():
    from mplint.analysis import training
    from mplint.run import optimizer_values

    assert (optimizer_values.PLAIN, optimizer_values.LSO, optimizer_values.API) == \
        (training.PLAIN, training.LSO, training.API)


def _optimizers(root, name):
    linter = make_linter()
    project = build_project([str(root / name)], linter.settings)
    governance = project.program.governance(str((root / name).resolve()))
    return governance.factories, governance.optimizer_params


def test_optimizer_factories_and_parameters_across_modules(tmp_path):
    _write(tmp_path, {
        "setup.py": "",
        "opts.py": "import tensorflow as tf\nfrom tensorflow.keras import optimizers\n\n"
                   "def plain_opt():\n    return optimizers.Adam()\n\n"
                   "def scaled_opt():\n    return tf.keras.mixed_precision.LossScaleOptimizer(plain_opt())\n\n"
                   "def either_opt(flag):\n    opt = plain_opt()\n    if flag:\n        opt = scaled_opt()\n    return opt\n\n"
                   "def given_opt(opt):\n    return opt\n\n"
                   "def v1_opt():\n    return tf.compat.v1.train.AdamOptimizer()\n",
        "loop.py": "def fit(model, optimizer, data):\n    optimizer.apply_gradients([])\n\n"
                   "def fit_any(optimizer):\n    optimizer.apply_gradients([])\n\n"
                   "def fit_star(optimizer):\n    optimizer.apply_gradients([])\n",
        "train.py": POLICY + "from opts import plain_opt, scaled_opt, either_opt, given_opt, v1_opt\nfrom loop import fit, fit_any, fit_star\n\n"
                    "def main(args):\n    tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
                    "    a, b, c, d, e = plain_opt(), scaled_opt(), either_opt(1), given_opt(plain_opt()), v1_opt()\n"
                    "    fit(None, plain_opt(), None)\n    fit(None, optimizer=plain_opt(), data=None)\n"
                    "    fit_any(plain_opt())\n    fit_any(args.opt)\n    fit_star(*args)\n    a.apply_gradients([])\n",
    })
    factories, _ = _optimizers(tmp_path, "train.py")
    # given_opt() hands back what it is given (plain_opt() here); v1_opt() makes a TF1
    # optimizer: unknown, left out; only optimizer-named factories are followed
    assert factories == {"plain_opt": ("plain",), "scaled_opt": ("lso",), "either_opt": ("lso", "plain"),
                         "given_opt": ("plain",)}
    _, params = _optimizers(tmp_path, "loop.py")
    # fit_any() is also passed something unknown, fit_star() *args: left out
    assert params == {"fit": {"optimizer": ("plain",)}}


def test_wrappers_of_horovod_and_custom_optimizer_classes_across_modules(tmp_path):
    """A project function that hands its arguments to horovod's wrapper and returns it
    stands for horovod's (an "api:" kind); one that may hand back its argument does not.
    A project class is an optimizer when its bases reach a Keras optimizer."""
    _write(tmp_path, {
        "setup.py": "",
        "par.py": "import horovod.tensorflow as hvd\nimport horovod.tensorflow.keras as hvd_keras\n\n"
                  "def WrapTape(*args, **kwargs):\n    def _inner(x):\n        return x\n"
                  "    tape = hvd.DistributedGradientTape(*args, **kwargs)\n    return tape\n\n"
                  "def WrapOptimizer(optimizer):\n    return hvd_keras.DistributedOptimizer(optimizer)\n\n"
                  "def MaybeOptimizer(optimizer, flag):\n    if flag:\n        return hvd_keras.DistributedOptimizer(optimizer)\n"
                  "    return optimizer\n\n"
                  "def OtherOptimizer(optimizer, lr):\n    return hvd_keras.DistributedOptimizer(lr)\n",
        "opts.py": "import tensorflow as tf\nfrom extlib import Wrapper\n\nclass Noisy(tf.keras.optimizers.Optimizer):\n    pass\n\n"
                   "class NoisyAdam(Noisy):\n    pass\n\n"
                   "class Scaled(tf.keras.mixed_precision.LossScaleOptimizer):\n    pass\n\n"
                   "class Mixed(Wrapper, Noisy):\n    pass\n\n"
                   "class NotOne:\n    pass\n\n"
                   "def noisy_opt():\n    return NoisyAdam()\n\ndef scaled_opt():\n    return Scaled(Noisy())\n\n"
                   "def mixed_opt():\n    return Mixed()\n\ndef other_opt():\n    return NotOne()\n",
        "train.py": POLICY + "import par\nfrom opts import noisy_opt, scaled_opt, mixed_opt, other_opt\n\n"
                    "def main(model):\n    tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
                    "    with tf.GradientTape() as tape:\n        loss = model(1)\n"
                    "    tape = par.WrapTape(tape)\n    a = par.WrapOptimizer(tf.keras.optimizers.Adam())\n"
                    "    b = par.MaybeOptimizer(tf.keras.optimizers.Adam(), True)\n"
                    "    c = par.OtherOptimizer(tf.keras.optimizers.Adam(), 0.1)\n"
                    "    d, e, f, g = noisy_opt(), scaled_opt(), mixed_opt(), other_opt()\n"
                    "    a.apply_gradients(tape.gradient(loss, []))\n",
    })
    factories, _ = _optimizers(tmp_path, "train.py")
    assert factories == {"par.WrapTape": ("api:horovod.tensorflow.DistributedGradientTape",),
                         "par.WrapOptimizer": ("api:horovod.tensorflow.keras.DistributedOptimizer",),
                         "noisy_opt": ("plain",), "scaled_opt": ("lso",)}


def test_an_override_that_drops_the_base_scaling_is_found_file_by_file_and_when_it_changes(tmp_path):
    """The pre-commit way: one file named, the program model cached between runs; an
    edit that drops (or restores) the scaling changes the answer."""
    import shutil
    import subprocess

    from helpers import FIXTURES, run_cli

    project = tmp_path / "tasks"
    shutil.copytree(FIXTURES / "projects" / "task_hierarchy", project)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    found = run_cli("check", "--output-format", "json", "src/tasks/pretrain.py", cwd=project)
    assert [(f["line"], f["rule"]) for f in json.loads(found.stdout)] == [(12, "MP202")]
    assert "Task.train_step()" in found.stdout and "src/tasks/base.py:15" in found.stdout
    others = project / "src" / "tasks" / "others.py"
    assert run_cli("check", "-q", str(others), cwd=project).returncode == 0
    assert run_cli("check", "-q", ".", cwd=project).returncode == 1  # caches the whole program's model
    # ScaledTask stops scaling: found with the cached program model, one file named
    others.write_text(others.read_text().replace("loss = optimizer.get_scaled_loss(loss)", "pass")
                      .replace("grads = optimizer.get_unscaled_gradients(grads)", "pass"))
    again = run_cli("check", "--output-format", "json", str(others), cwd=project)
    assert [f["rule"] for f in json.loads(again.stdout)] == ["MP202"]


def test_a_notebook_that_imports_project_modules_governs_them_and_is_named_by_cell(tmp_path):
    from helpers import run_cli

    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Train\n"]},
        {"cell_type": "code", "metadata": {}, "execution_count": 1, "outputs": [],
         "source": ["import tensorflow as tf\n", "from proj.models import build\n"]},
        {"cell_type": "code", "metadata": {}, "execution_count": 2, "outputs": [],
         "source": ["tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"]},
        {"cell_type": "code", "metadata": {}, "execution_count": 3, "outputs": [],
         "source": ["model = build(10)\n", "model.compile(optimizer='adam', loss='mse')\n"]},
    ]
    _write(tmp_path, {
        "pyproject.toml": "[project]\nname = 'proj'\n",
        "src/proj/__init__.py": "",
        "src/proj/models.py": "import tensorflow as tf\n\n\ndef build(n):\n    x = tf.keras.Input((32,))\n"
                              "    y = tf.keras.layers.Dense(n, activation='softmax')(x)\n"
                              "    return tf.keras.Model(x, y)\n",
        "src/proj/unused.py": "import tensorflow as tf\n\n\ndef build(n):\n    x = tf.keras.Input((32,))\n"
                              "    return tf.keras.Model(x, tf.keras.layers.Dense(n, activation='softmax')(x))\n",
        "notebooks/train.ipynb": json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}),
    })
    result = run_cli("check", "--no-cache", "--output-format", "json", "src/", cwd=tmp_path)
    found = json.loads(result.stdout)
    assert [(f["path"], f["line"], f["rule"]) for f in found] == [("src/proj/models.py", 6, "MP101")]
    assert "notebooks/train.ipynb:cell 3:1, reached through train.ipynb top level -> build()" in found[0]["message"]


def test_module_paths_of_a_relative_path_follow_the_current_folder(tmp_path, monkeypatch):
    """An editor or the API may check ``model.py`` in one project, then another: the
    cached answers are by absolute path."""
    from mplint.run.module_paths import folders_above, importable

    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        monkeypatch.chdir(tmp_path / name)
        assert (tmp_path / name).resolve() in folders_above("model.py")
        assert importable("model.py", tmp_path / name) == (("model", (tmp_path / name).resolve()),)


def test_the_answer_does_not_depend_on_the_order_setters_are_taken_in(tmp_path):
    """A script that sets float32 itself and calls a helper that sets a mixed policy
    through a module found only later: each order of the setters finds both."""
    from mplint.run.program import ProgramModel

    _write(tmp_path, {
        "setup.py": "",
        "perf.py": POLICY + "def set_policy(dtype):\n    if dtype == 'fp16':\n"
                   "        tf.keras.mixed_precision.set_global_policy('mixed_float16')\n",
        "helper.py": "import perf\ndef configure(flags):\n    perf.set_policy(flags.dtype)\n",
        "run.py": POLICY + "import helper, lib\ndef main(flags):\n"
                  "    tf.keras.mixed_precision.set_global_policy('float32')\n"
                  "    helper.configure(flags)\n    lib.build()\n",
        "lib.py": "def build():\n    pass\n",
    })
    files = sorted(str(p) for p in tmp_path.glob("*.py"))
    lib = str(tmp_path / "lib.py")

    def governed(setters):
        model = ProgramModel(tmp_path, files, lambda k: summarize(Path(k).read_text()),
                             lambda k: Path(k).read_bytes(), lambda k: frozenset())
        return model.build(setters).governance(lib).policies

    perf, run = str(tmp_path / "perf.py"), str(tmp_path / "run.py")
    assert governed([perf, run]) == governed([run, perf]) == {"float32", "mixed_float16"}


def test_a_named_file_parses_only_the_setters_whose_policy_may_reach_it(tmp_path, monkeypatch):
    """pre-commit: a script whose policy never reaches the named file is not parsed
    with libcst; one that reaches it is; and a call that only looks like a policy
    setter (a logger's ``set_policy``) is found out by the index and left out."""
    import mplint.run.project as project_module

    _write(tmp_path, {
        "setup.py": "",
        "train.py": POLICY + "import models\ntf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
                    "models.build()\n",
        "other.py": POLICY + "import tools\ntf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
                    "tools.run()\n",
        "audit.py": "import logger, lonely\nlogger.set_policy('mixed_float16')\nlonely.work()\n",
        "models.py": "def build():\n    pass\n",
        "tools.py": "def run():\n    pass\n",
        "lonely.py": "def work():\n    pass\n",
    })
    parsed = []
    real = project_module.index_source
    monkeypatch.setattr(project_module, "index_source", lambda path, *a: parsed.append(Path(path).name) or real(path, *a))
    settings = make_linter().settings

    def named(name):
        parsed.clear()
        path = str(tmp_path / name)
        return build_project([path], settings, extra=[path]).program.governance(path).policies

    assert named("models.py") == {"mixed_float16"} and parsed == ["train.py"]
    assert named("tools.py") == {"mixed_float16"} and parsed == ["other.py"]
    assert named("lonely.py") == set() and parsed == ["audit.py"]  # parsed, and no policy there
    parsed.clear()
    whole = build_project([str(tmp_path)], settings)
    assert whole.program.governance(str(tmp_path / "lonely.py")).policies == set()
    assert sorted(parsed) == ["audit.py", "other.py", "train.py"]  # the whole project parses every one


def test_a_trainer_class_in_the_package_that_scales_the_loss_silences_mp407(tmp_path):
    """The scripts switch on the grappler option and hand training to the package's
    trainer, which wraps the optimizer and scales the loss: not "no loss scaling
    anywhere". A script with its own unscaled loop is still found, whole or named."""
    import shutil
    import subprocess

    from helpers import FIXTURES, run_cli

    project = tmp_path / "speech"
    shutil.copytree(FIXTURES / "projects" / "trainer_package", project)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    for named in (["."], ["examples/tts/train_tts.py", "examples/vocoder/train_vocoder.py"]):
        found = run_cli("check", "--no-cache", "--output-format", "json", "--select", "MP407", *named, cwd=project)
        assert [(f["path"], f["line"]) for f in json.loads(found.stdout)] == [("examples/vocoder/train_vocoder.py", 14)]
    # The trainer stops scaling: the script is found again.
    base = project / "src" / "speech" / "trainers" / "base.py"
    base.write_text(base.read_text().replace("tf.keras.mixed_precision.LossScaleOptimizer(optimizer)", "optimizer")
                    .replace("self._optimizer.get_scaled_loss(loss)", "loss")
                    .replace("self._optimizer.get_unscaled_gradients(grads)", "grads"))
    found = run_cli("check", "--output-format", "json", "--select", "MP407", "examples/tts/train_tts.py", cwd=project)
    assert [f["line"] for f in json.loads(found.stdout)] == [19]


def test_a_module_on_the_plaidml_backend_is_not_reached_by_a_tensorflow_policy(tmp_path):
    """faceswap's AMD losses import plaidml and its Keras 2.2: no dtype policies there,
    so the mixed policy the trainer sets for tf.keras does not reach them. The same
    loss on TensorFlow is reported."""
    from helpers import run_cli

    loss = ("import keras.backend as K\nfrom keras.layers import Layer\n\n\nclass Norm(Layer):\n"
            "    def __init__(self, epsilon=1e-10):\n        super().__init__()\n        self._epsilon = epsilon\n\n"
            "    def call(self, inputs):\n"
            "        norm = K.sqrt(K.sum(K.square(inputs), axis=-1, keepdims=True))\n"
            "        return inputs / (norm + self._epsilon)\n")
    _write(tmp_path, {
        "setup.py": "",
        "train.py": POLICY + "import loss_tf, loss_plaid\n"
                    "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
                    "loss_tf.Norm()(tf.ones([2]))\nloss_plaid.Norm()(tf.ones([2]))\n",
        "loss_tf.py": "import tensorflow as tf\n" + loss,
        "loss_plaid.py": "import plaidml\n" + loss,
    })
    found = run_cli("check", "--no-cache", "--output-format", "json", "--select", "MP502", ".", cwd=tmp_path)
    assert [(f["path"], f["rule"]) for f in json.loads(found.stdout)] == [("loss_tf.py", "MP502")]


def test_a_project_reached_through_a_symlinked_folder_keeps_its_module_names(tmp_path):
    """Paths are taken as written, like the project root: a resolved path under a
    symlinked folder would not be inside the root, and its module would lose its package."""
    real = tmp_path / "real"
    _write(real, {
        "setup.py": "",
        "scripts/train.py": POLICY + "from pkg import models\n"
                            "tf.keras.mixed_precision.set_global_policy('mixed_float16')\nmodels.build()\n",
        "pkg/__init__.py": "",
        "pkg/models.py": "def build():\n    pass\n",
    })
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    models = str(tmp_path / "link" / "pkg" / "models.py")
    project = build_project([models], make_linter().settings, extra=[models])
    assert project.program.governance(models).policies == {"mixed_float16"}


def test_a_model_whose_outputs_the_training_step_casts_to_float32_is_not_reported(tmp_path):
    """google/uncertainty-baselines: ``logits = model(x); logits = tf.cast(logits,
    tf.float32)`` before the loss, the mixed precision guide's own remedy."""
    from helpers import run_cli

    step = ("    with tf.GradientTape() as tape:\n        logits = model(x, training=True)\n"
            "        logits = tf.cast(logits, tf.float32)\n"
            "        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(y, logits))\n"
            "    grads = tape.gradient(loss, model.trainable_variables)\n"
            "    opt.apply_gradients(zip(grads, model.trainable_variables))\n")
    _write(tmp_path, {
        "setup.py": "",
        "textcnn.py": "import tensorflow as tf\n\n\ndef textcnn(num_classes):\n"
                      "    inputs = tf.keras.Input((16,))\n"
                      "    outputs = tf.keras.layers.Dense(num_classes)(inputs)\n"
                      "    return tf.keras.Model(inputs, outputs)\n",
        "train.py": POLICY + "import textcnn\n\n\ndef step(model, opt, x, y):\n" + step + "\n\n"
                    "def main():\n    tf.keras.mixed_precision.set_global_policy('mixed_bfloat16')\n"
                    "    model = textcnn.textcnn(10)\n    opt = tf.keras.optimizers.Adam()\n"
                    "    step(model, opt, tf.ones([2, 16]), tf.ones([2, 10]))\n",
    })

    def reported():
        found = run_cli("check", "--no-cache", "--output-format", "json", "--select", "MP102", ".", cwd=tmp_path)
        return [(f["path"], f["line"]) for f in json.loads(found.stdout)]

    assert reported() == []
    train = tmp_path / "train.py"
    train.write_text(train.read_text().replace("        logits = tf.cast(logits, tf.float32)\n", ""))
    assert reported() == [("textcnn.py", 6)]


def test_importing_a_submodule_runs_each_enclosing_package_init_first(tmp_path):
    # ``from proj.nets import mlp`` runs proj/__init__.py, then proj/nets/__init__.py,
    # then proj/nets/mlp.py: a policy set by a package's __init__ at import time
    # governs what the importer runs after the import.
    _write(tmp_path, {
        "setup.py": "",
        "proj/__init__.py": POLICY + "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n",
        "proj/nets/__init__.py": "",
        "proj/nets/mlp.py": "def build():\n    pass\n",
        "train.py": "from proj.nets import mlp\nmlp.build()\n",
        "other/__init__.py": "",
        "other/tools.py": "def build():\n    pass\n",
        "export.py": "from other import tools\ntools.build()\n",
    })
    assert _governed(tmp_path, "proj/nets/mlp.py") == {"build": {"mixed_float16"}}
    assert _governed(tmp_path, "other/tools.py") == {}  # a package that sets nothing


def test_a_package_init_importing_its_own_submodule_is_not_its_own_importer(tmp_path):
    _write(tmp_path, {
        "setup.py": "",
        "proj/__init__.py": "from .nets import build\n",
        "proj/nets.py": POLICY + "def build():\n    helper()\n"
                        "def helper():\n    pass\n",
        "train.py": POLICY + "import proj\ntf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
                    "proj.build()\n",
    })
    assert _governed(tmp_path, "proj/nets.py") == {"build": {"mixed_float16"}, "helper": {"mixed_float16"}}


def test_names_bound_by_star_imports_are_followed_the_last_star_first(tmp_path):
    summary = summarize("from heads import *\nfrom .layers import *\n")
    assert summary.imports == {"*heads": "heads", "*.layers": ".layers"}
    assert ModuleSummary.from_json(json.loads(json.dumps(summary.to_json()))) == summary
    _write(tmp_path, {
        "setup.py": "",
        "heads.py": "def classifier():\n    pass\ndef shadowed():\n    pass\n",
        "blocks.py": "def shadowed():\n    pass\n",
        "zoo/__init__.py": "from .models import *\n",
        "zoo/models.py": "def resnet():\n    pass\n",
        "train.py": POLICY + "from heads import *\nfrom blocks import *\nfrom zoo import resnet\n"
                    "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
                    "classifier()\nshadowed()\nresnet()\n",
    })
    assert _governed(tmp_path, "heads.py") == {"classifier": {"mixed_float16"}}  # blocks' shadows it
    assert _governed(tmp_path, "blocks.py") == {"shadowed": {"mixed_float16"}}
    assert _governed(tmp_path, "zoo/models.py") == {"resnet": {"mixed_float16"}}  # re-exported by a star


def test_a_setter_that_puts_back_the_policy_read_before_sets_nothing(tmp_path):
    # ``previous = global_policy().name`` ... ``set_global_policy(previous)`` restores:
    # it is no policy chosen at run time for the code the helper's callers run after it.
    summary = summarize(
        "import keras\n\ndef reference():\n    previous = keras.mixed_precision.global_policy().name\n"
        "    keras.mixed_precision.set_global_policy('float32')\n"
        "    keras.mixed_precision.set_global_policy(previous)\n"
        "    keras.config.set_dtype_policy(keras.config.dtype_policy())\n\n"
        "def chosen(name):\n    old = name\n    keras.mixed_precision.set_global_policy(old)\n")
    assert summary.functions["reference"].sets == [(5, "float32")]
    assert summary.functions["chosen"].sets == [(11, None)]  # a parameter: chosen at run time
    _write(tmp_path, {
        "setup.py": "",
        "probe.py": "import keras\nimport models\n\ndef reference():\n"
                         "    previous = keras.mixed_precision.global_policy()\n"
                         "    keras.mixed_precision.set_global_policy('float32')\n"
                         "    try:\n        models.build()\n"
                         "    finally:\n        keras.mixed_precision.set_global_policy(previous)\n\n"
                         "reference()\nmodels.head()\n",
        "models.py": "def build():\n    pass\ndef head():\n    pass\n",
    })
    governed = _governed(tmp_path, "models.py")
    # after reference() returns, nothing chosen at run time governs head()
    assert governed["build"] == {"float32"} and governed.get("head", set()) <= {"float32"}


SETUP_HELPER = (
    "import keras\n\n\ndef setup_mixed_precision(enabled, policy='mixed_float16'):\n"
    "    if enabled:\n        keras.mixed_precision.set_global_policy(policy)\n        return True\n"
    "    keras.mixed_precision.set_global_policy('float32')\n    return False\n")


def _trainer(call, build):
    return (f"import sys\nfrom pkg.gpu import setup_mixed_precision\nfrom pkg.heads import {build}\n\n\n"
            f"def main():\n    {call}\n    model = {build}()\n    model.fit()\n\n\n"
            "if __name__ == '__main__':\n    main()\n")


def test_a_policy_helper_is_judged_per_call_site(tmp_path):
    """One helper, called with False, with True and a policy, and with a flag: each
    caller's modules get the policy its own arguments choose, not every caller's."""
    _write(tmp_path, {
        "setup.py": "", "pkg/__init__.py": "", "pkg/gpu.py": SETUP_HELPER,
        "pkg/heads.py": "".join(f"def build_{name}():\n    pass\n" for name in "abcde"),
        "scripts/a.py": _trainer("setup_mixed_precision(False)", "build_a"),
        "scripts/b.py": _trainer("setup_mixed_precision(True, policy='mixed_bfloat16')", "build_b"),
        "scripts/c.py": _trainer("setup_mixed_precision('--amp' in sys.argv)", "build_c"),
        "scripts/d.py": _trainer("setup_mixed_precision(enabled=True)", "build_d"),
        "scripts/e.py": _trainer("setup_mixed_precision(*sys.argv)", "build_e"),
    })
    governed = _governed(tmp_path, "pkg/heads.py")
    assert governed["build_a"] == {"float32"}
    assert governed["build_b"] == {"mixed_bfloat16"}
    assert governed["build_c"] == {"float32", "mixed_float16"}  # a value that cannot be followed: both
    assert governed["build_d"] == {"mixed_float16"}  # the default
    assert "float32" in governed["build_e"] and len(governed["build_e"]) > 1  # unread: every caller's


def test_a_script_imported_does_not_run_its_main_guard(tmp_path):
    """``from train import build`` runs train.py's top level, not its ``__main__`` guard:
    the policy its program sets does not govern the importer."""
    _write(tmp_path, {
        "setup.py": "",
        "train.py": POLICY + "def build():\n    pass\n\ndef main():\n"
                    "    tf.keras.mixed_precision.set_global_policy('mixed_float16')\n    build()\n\n"
                    "if __name__ == '__main__':\n    main()\n",
        "probe.py": "from train import build\n\ndef run():\n    build()\n\nrun()\n",
        "program.py": POLICY + "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
                      "def build():\n    pass\n\nif __name__ == '__main__':\n    build()\n",
    })
    assert _governed(tmp_path, "probe.py") == {}
    assert _governed(tmp_path, "train.py") == {"<module>": {"mixed_float16"}, "build": {"mixed_float16"}}
    # the program's own top level still governs its guard
    assert _governed(tmp_path, "program.py")["build"] == {"mixed_float16"}


def test_a_library_switch_governs_its_own_package_only(tmp_path):
    """An uncalled switch in ``src/train/common`` (a src layout): the training entry points of
    ``src/train`` may run under it, not those of ``src/lib`` beside it, nor a program's own."""
    _write(tmp_path, {
        "setup.py": "", "src/train/__init__.py": "", "src/train/common/__init__.py": "",
        "src/train/common/gpu.py": SETUP_HELPER,
        "src/train/common/loops.py": "def fit(model):\n    pass\n",
        "src/train/run_x.py": "def train():\n    pass\n\nif __name__ == '__main__':\n    train()\n",
        "src/lib/__init__.py": "", "src/lib/models.py": "def train_step():\n    pass\n",
    })
    assert _governed(tmp_path, "src/train/common/loops.py")["fit"] >= {"mixed_float16"}
    assert _governed(tmp_path, "src/train/run_x.py") == {}
    assert _governed(tmp_path, "src/lib/models.py") == {}


def test_a_policy_set_again_by_the_next_statement_is_no_set_of_the_summary():
    set_ = "tf.keras.mixed_precision.set_global_policy"
    summary = summarize(f"import tensorflow as tf\n{set_}('mixed_float16')\n{set_}('float32')\nbuild()\n"
                        f"def main(debug):\n    {set_}('mixed_float16')\n    if debug:\n        {set_}('float32')\n")
    assert summary.functions["<module>"].sets == [(3, "float32")]
    # an `if` arm may not run: both stand
    assert summary.functions["main"].sets == [(6, "mixed_float16"), (8, "float32")]


def test_a_module_whose_import_sets_the_policy_has_its_own_functions_under_it(tmp_path):
    # ``import amp`` runs amp/__init__.py, which sets the policy: the importer's functions
    # run after it, as if the importer had set it at its own top level
    _write(tmp_path, {
        "setup.py": "",
        "amp/__init__.py": POLICY + "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n",
        "amp/tools.py": "def scale(x):\n    return x\n",
        "quiet/__init__.py": "",
        "quiet/setup_policy.py": POLICY + "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n",
        "train.py": "import amp\n\ndef step(x):\n    return x\n\nclass Trainer:\n    def fit(self):\n        pass\n",
        "eval.py": "import quiet\n\ndef step(x):\n    return x\n",
        "lazy.py": "def load():\n    import amp\n\ndef step(x):\n    return x\n",
    })
    assert _governed(tmp_path, "train.py") == {"<module>": {"mixed_float16"}, "step": {"mixed_float16"},
                                               "Trainer.fit": {"mixed_float16"}}
    # a package whose __init__ does not import the module that sets the policy
    assert _governed(tmp_path, "eval.py") == {}
    # imported inside a function: the rest of the module does not run after it
    assert "step" not in _governed(tmp_path, "lazy.py")


def test_mp406_sees_the_layers_of_the_builders_the_policy_reaches_in_other_modules(tmp_path):
    from helpers import outcome, run_cli

    model = ("import tf_keras\n\n\ndef build():\n    return tf_keras.Sequential([\n"
             "        tf_keras.layers.Dense(64),\n        tf_keras.layers.Dense(1, dtype='float32')])\n")
    train = ("import keras\nfrom model import build\n\n"
             "keras.mixed_precision.set_global_policy('mixed_float16')\nmodel = build()\nmodel.fit(x, y)\n")
    _write(tmp_path, {"setup.py": "", "model.py": model, "train.py": train})
    assert outcome(run_cli("check", "--no-cache", "--select", "MP406", ".", cwd=tmp_path)) == (
        1, [("train.py", 4, "MP406")])
    # the builder uses the package the policy is set through
    _write(tmp_path, {"model.py": model.replace("tf_keras", "keras")})
    assert outcome(run_cli("check", "--no-cache", "--select", "MP406", ".", cwd=tmp_path)) == (0, [])
    # built before the policy is set: it does not reach the builder
    _write(tmp_path, {"model.py": model, "train.py": train.replace("model = build()\n", "").replace(
        "keras.mixed_precision", "model = build()\nkeras.mixed_precision")})
    assert outcome(run_cli("check", "--no-cache", "--select", "MP406", ".", cwd=tmp_path)) == (0, [])
    # set through tf_keras itself
    _write(tmp_path, {"train.py": train.replace("import keras\n", "import tf_keras as keras\n")})
    assert outcome(run_cli("check", "--no-cache", "--select", "MP406", ".", cwd=tmp_path)) == (0, [])


_TRAINER_WITH_PRIVATE_SWITCH = (
    POLICY
    + "class Trainer:\n"
    "    def __init__(self, model):\n"
    "        self.model = model\n{init}"
    "    def fit(self, x, y):\n"
    "        self.model.fit(x, y)\n"
    "    def _setup_amp(self):\n"
    "        tf.keras.mixed_precision.set_global_policy('mixed_float16')\n")
_BUILT_AFTER_THE_TRAINER = (
    POLICY + "from trainer import Trainer\n\n"
    "def main():\n"
    "    trainer = Trainer(None)\n"
    "    model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation='softmax')])\n"
    "    trainer.fit(model, None)\n")


def test_building_an_object_does_not_run_a_private_method_nothing_names(tmp_path):
    """``Trainer._setup_amp`` (its call commented out in ``__init__``) runs nowhere:
    building a Trainer sets no policy, so the model built after it is not mixed."""
    _write(tmp_path, {"pyproject.toml": "", "trainer.py": _TRAINER_WITH_PRIVATE_SWITCH.format(init=""),
                      "train.py": _BUILT_AFTER_THE_TRAINER})
    assert _governed(tmp_path, "train.py") == {}


def test_a_private_method_the_constructor_calls_still_sets_the_policy(tmp_path):
    _write(tmp_path, {"pyproject.toml": "",
                      "trainer.py": _TRAINER_WITH_PRIVATE_SWITCH.format(init="        self._setup_amp()\n"),
                      "train.py": _BUILT_AFTER_THE_TRAINER})
    assert "mixed_float16" in _governed(tmp_path, "train.py").get("main", set())


def test_a_plain_class_s_methods_run_where_governed_code_calls_them(tmp_path):
    _write(tmp_path, {
        "setup.py": "",
        "iface.py": "import abc\nimport tensorflow as tf\n\n"
                    "class Base(abc.ABC):\n    def shared(self):\n        pass\n\n"
                    "class Interface(Base):\n    def __init__(self):\n        self.setup()\n"
                    "    def setup(self):\n        pass\n    def fit(self):\n        pass\n"
                    "    def export(self):\n        pass\n    def __call__(self, x):\n        return x\n\n"
                    "class Net(tf.keras.Model):\n    def export(self):\n        pass\n\n"
                    "def make():\n    Net()\n    return Interface()\n",
        "train.py": POLICY + "from iface import make\n\ndef main():\n"
                    "    tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
                    "    interface = make()\n    interface.fit()\n\nmain()\n",
        "predict.py": "from iface import make\nmake().export()\n",
    })
    governed = set(_governed(tmp_path, "iface.py"))
    # built under the policy: __init__ and what it calls, and what Python calls by
    # itself (__call__); fit() because train.py calls it; export() only in predict.py,
    # which sets no policy; a Keras model's methods all run under the policy it captured
    assert governed == {"make", "Interface.__init__", "Interface.setup",
                        "Interface.__call__", "Interface.fit", "Net.export"}


def test_a_method_called_before_the_plain_class_is_built_is_governed_too(tmp_path):
    _write(tmp_path, {
        "setup.py": "",
        "tools.py": "class Exporter:\n    def export(self):\n        pass\n\n"
                    "class Other:\n    def export(self):\n        pass\n    def fit(self):\n        pass\n",
        "train.py": POLICY + "import tools\n\ndef run(obj):\n    obj.export()\n\ndef main():\n"
                    "    tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
                    "    run(None)\n    tools.Exporter()\n    tools.Other()\n\nmain()\n",
    })
    # export() is called on an unknown receiver before either class is built
    assert set(_governed(tmp_path, "tools.py")) == {"Exporter.export", "Other.export"}


def test_a_base_s_self_call_runs_the_override_of_the_subclass_built_under_the_policy(tmp_path):
    """Virtual dispatch: ``self.build_model()`` in ``BaseModel.__init__`` (a plain class of
    another module) runs ``SegNet.build_model`` when ``SegNet`` is what the governed code
    builds; ``OtherNet``'s override runs only where ``predict.py`` builds it, with no policy,
    and a plain class outside the hierarchy keeps its method waiting."""
    _write(tmp_path, {
        "setup.py": "",
        "base.py": "class BaseModel(object):\n    def __init__(self, config):\n        self.config = config\n"
                   "        self.model = self.build_model()\n    def build_model(self):\n"
                   "        raise NotImplementedError\n",
        "nets.py": "from base import BaseModel\n\n"
                   "class SegNet(BaseModel):\n    def __init__(self, config):\n"
                   "        super(SegNet, self).__init__(config)\n    def build_model(self):\n        return self.head()\n"
                   "    def head(self):\n        pass\n\n"
                   "class OtherNet(BaseModel):\n    def build_model(self):\n        pass\n\n"
                   "class Unrelated(object):\n    def build_model(self):\n        pass\n",
        "train.py": POLICY + "from nets import SegNet, Unrelated\n\ndef main():\n"
                    "    tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
                    "    Unrelated()\n    SegNet({})\n\nmain()\n",
        "predict.py": "from nets import OtherNet\nOtherNet({})\n",
    })
    assert set(_governed(tmp_path, "nets.py")) == {"SegNet.__init__", "SegNet.build_model", "SegNet.head"}
    assert set(_governed(tmp_path, "base.py")) == {"BaseModel.__init__", "BaseModel.build_model"}


def test_optimizers_returned_in_tuples_are_followed_to_each_part(tmp_path):
    """``g_opt, d_opt = make_optimizers()`` and a resume helper that hands the
    optimizers back (or rebuilds them with ``from_config``) inside a tuple: each part
    is the element of every ``return`` at its position."""
    _write(tmp_path, {
        "setup.py": "",
        "opts.py": "import keras\n\n"
                   "def make_optimizers():\n"
                   "    return keras.mixed_precision.LossScaleOptimizer(keras.optimizers.Adam()), keras.optimizers.Adam()\n\n"
                   "def uneven_optimizers(deep):\n"
                   "    if deep:\n        return keras.optimizers.Adam(), keras.optimizers.Adam(), None\n"
                   "    return keras.optimizers.Adam(), keras.mixed_precision.LossScaleOptimizer(keras.optimizers.Adam())\n",
        "loop.py": "import pickle\n\n"
                   "def load_state(model, optimizer, path):\n"
                   "    if path:\n        optimizer = optimizer.from_config(pickle.load(path))\n"
                   "        return model, optimizer, 1\n"
                   "    return model, optimizer, 0\n\n"
                   "def step(optimizer):\n    optimizer.apply_gradients([])\n\n"
                   "def step_plain(optimizer):\n    optimizer.apply_gradients([])\n\n"
                   "def step_uneven(optimizer):\n    optimizer.apply_gradients([])\n\n"
                   "def step_rest(optimizer):\n    optimizer.apply_gradients([])\n\n"
                   "def step_item(optimizer):\n    optimizer.apply_gradients([])\n\n"
                   "def train(model, optimizer, resume, path):\n"
                   "    if resume:\n        model, optimizer, start = load_state(model, optimizer, path)\n"
                   "    step(optimizer)\n",
        "train.py": "import keras\nfrom opts import make_optimizers, uneven_optimizers\n"
                    "from loop import train, step_plain, step_uneven, step_rest, step_item\n\n"
                    "def main(args):\n    keras.mixed_precision.set_global_policy('mixed_float16')\n"
                    "    g_opt, d_opt = make_optimizers()\n"
                    "    train(None, g_opt, args.resume, args.path)\n"
                    "    step_plain(d_opt)\n"
                    "    _, odd = uneven_optimizers(args.deep)\n"
                    "    step_uneven(odd)\n"
                    "    *rest, last = make_optimizers()\n"
                    "    step_rest(last)\n"
                    "    pair = make_optimizers()\n"
                    "    first = pair[0]\n"
                    "    step_item(first)\n",
    })
    _, params = _optimizers(tmp_path, "loop.py")
    # step(): the LossScaleOptimizer passed to train(), or the one load_state() rebuilds
    # from its config; step_uneven(): returns of different lengths, unknown; step_rest():
    # a name after a starred target, unknown
    assert params == {"train": {"optimizer": ("lso",)}, "load_state": {"optimizer": ("lso",)},
                      "step": {"optimizer": ("lso",)}, "step_plain": {"optimizer": ("plain",)},
                      "step_item": {"optimizer": ("lso",)}}


def test_models_returned_in_tuples_are_trained_only_at_the_part_trained(tmp_path):
    _write(tmp_path, {
        "setup.py": "",
        "train.py": POLICY + "from nets import build_gan\n\n"
                    "def main():\n    tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
                    "    generator, probe = build_gan()\n    generator.fit(None)\n    probe.summary()\n",
        "nets.py": "def build_gan():\n    return make_generator(), make_probe()\n\n"
                   "def make_generator():\n    return Model()\n\n"
                   "def make_probe():\n    return Model()\n",
    })
    # the generator's builder, not build_gan() as a whole nor the probe it also returns
    assert _trained(tmp_path, "nets.py") == {"make_generator"}


def _governance(root, name):
    project = build_project([str(root / name)], make_linter().settings)
    return project.program.governance(str((root / name).resolve()))


def test_a_policy_set_in_one_arm_does_not_reach_the_calls_of_the_other_arm(tmp_path):
    _write(tmp_path, {
        "setup.py": "",
        "train.py": POLICY + "import models\nimport sys\n"
                    "if sys.argv[1] == 'keras':\n    tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
                    "    models.keras_path()\nelse:\n    models.graph_path()\nmodels.both()\n",
        "models.py": "def keras_path():\n    pass\ndef graph_path():\n    pass\ndef both():\n    pass\n",
    })
    assert _governed(tmp_path, "models.py") == {"keras_path": {"mixed_float16"}, "both": {"mixed_float16"}}


def test_the_rewrite_switch_knows_the_policy_of_its_program_in_any_order(tmp_path):
    _write(tmp_path, {
        "setup.py": "",
        "train.py": POLICY + "import runtime\nruntime.configure()\n"
                    "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n",
        "runtime.py": POLICY + "def configure():\n"
                      "    tf.config.optimizer.set_experimental_options({'auto_mixed_precision': True})\n"
                      "def unused():\n    tf.config.optimizer.set_experimental_options({'auto_mixed_precision': True})\n",
    })
    governance = _governance(tmp_path, "runtime.py")
    # configure() and the module's top level (the import runs it), never unused()
    assert set(governance.rewrite_programs) == {"configure", "<module>"}
    assert governance.rewrite_programs["configure"][0] == "mixed_float16"
    assert governance.by_function == {}  # the order-dependent spread: configure() ran first


def test_the_calls_made_under_a_mixed_policy_bind_the_parameters_with_defaults(tmp_path):
    _write(tmp_path, {
        "setup.py": "",
        "train.py": POLICY + "import trainer\nimport sys\n"
                    "def main(amp):\n"
                    "    if amp:\n        tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
                    "    trainer.Trainer({})\n"
                    "    if amp:\n        trainer.Trainer({}, loss_scale=True)\n"
                    "    else:\n        trainer.Trainer({}, loss_scale=False)\n"
                    "main(True)\n",
        "trainer.py": "class Trainer:\n    def __init__(self, params, loss_scale=False):\n"
                      "        self.loss_scale = loss_scale\n    def fit(self):\n        pass\n",
    })
    governance = _governance(tmp_path, "trainer.py")
    bound = [site[2] for site in governance.mixed_calls["Trainer.__init__"]]
    # the call under ``else:`` of the ``if amp:`` that sets the policy runs without it
    assert bound == [{"params": "?", "loss_scale": "false"}, {"params": "?", "loss_scale": "true"}]
