"""A value read from a configuration file a module of the project loads (``cfg =
EasyDict(yaml.safe_load(open("configs/train.yaml")))``, then ``cfg.model.epsilon``) is
the file's value where it is read; a file that cannot be found, a key it lacks or a
path chosen at run time leave it unknown, and the rules stay silent."""

from __future__ import annotations

import json

import pytest

import helpers

YAML = "model:\n  epsilon: {epsilon}\n  units: 64\npolicy: {policy}\n"

BLOCKS = """import tensorflow as tf
from config import cfg


def l2normalize(v, epsilon={read}):
    return v / (tf.reduce_sum(v ** 2) ** 0.5 + epsilon)


class Norm(tf.keras.layers.Layer):
    def call(self, x):
        return l2normalize(x)
"""

TRAIN = """import tensorflow as tf
from blocks import Norm
tf.keras.mixed_precision.set_global_policy("mixed_float16")
inputs = tf.keras.Input((16,))
model = tf.keras.Model(inputs, tf.keras.layers.Activation("linear", dtype="float32")(Norm()(inputs)))
"""

LOADS = {
    "yaml-beside-module": 'import os\nimport yaml\nfrom easydict import EasyDict\n\n'
                          'with open(os.path.join(os.path.dirname(__file__), "configs/train.yaml")) as f:\n'
                          '    cfg = EasyDict(yaml.safe_load(f))\n',
    "yaml-from-root": 'import yaml\nfrom easydict import EasyDict as edict\n\n'
                      'cfg = edict(yaml.safe_load(open("configs/train.yaml", "r")))\n',
    "pathlib": 'from pathlib import Path\nimport yaml\nfrom dotmap import DotMap\n\n'
               'cfg = DotMap(yaml.load(open(Path(__file__).parent / "configs/train.yaml"), Loader=yaml.SafeLoader))\n',
    "omegaconf": 'from omegaconf import OmegaConf\n\ncfg = OmegaConf.load("configs/train.yaml")\n',
    "json": 'import json\nfrom munch import munchify\n\nwith open("configs/train.json") as f:\n'
            '    cfg = munchify(json.load(f))\n',
    "loader-function": 'import os\nimport yaml\nfrom easydict import EasyDict\n\n\n'
                       'def _get_config(name):\n    here = os.path.dirname(__file__)\n'
                       '    with open(os.path.join(os.path.dirname(__file__), "configs/train.yaml")) as f:\n'
                       '        return EasyDict(yaml.safe_load(f))\n\n\ncfg = _get_config("train")\n',
}


def _project(tmp_path, load, read="cfg.model.epsilon", epsilon="1.0E-8", extra=None):
    files = {".git/HEAD": "", "config.py": LOADS[load], "blocks.py": BLOCKS.format(read=read), "train.py": TRAIN,
             "configs/train.yaml": YAML.format(epsilon=epsilon, policy="mixed_float16"),
             "configs/train.json": json.dumps({"model": {"epsilon": float(epsilon), "units": 64}})}
    files.update(extra or {})
    return helpers.write_files(tmp_path, files)


def _check(folder, cache=False):
    args = ["check", "--select", "MP502", "--output-format", "json", *([] if cache else ["--no-cache"]), "."]
    result = helpers.run_cli(*args, cwd=folder)
    assert result.returncode in (0, 1), result.stderr
    return [(f["path"], f["line"], f["message"]) for f in json.loads(result.stdout)]


@pytest.mark.parametrize("load", sorted(LOADS))
def test_an_epsilon_read_from_a_loaded_config_file(tmp_path, load):
    [(path, line, message)] = _check(_project(tmp_path, load))
    assert (path, line) == ("blocks.py", 6)
    assert "1e-08" in message


@pytest.mark.parametrize("read", ['cfg["model"]["epsilon"]', 'cfg.model["epsilon"]'])
def test_subscripts_read_the_same_keys(tmp_path, read):
    assert len(_check(_project(tmp_path, "yaml-from-root", read=read))) == 1


def test_an_epsilon_within_float16_s_range_is_silent(tmp_path):
    assert _check(_project(tmp_path, "yaml-from-root", epsilon="1.0E-3")) == []


@pytest.mark.parametrize("case", ["missing-key", "missing-file", "path-from-a-flag", "bound-twice",
                                  "whole-container", "written-here"])
def test_what_cannot_be_followed_stays_silent(tmp_path, case):
    read, extra, load = "cfg.model.epsilon", {}, "yaml-from-root"
    if case == "missing-key":
        read = "cfg.model.eps"
    elif case == "missing-file":
        extra = {"configs/train.yaml": None}
    elif case == "path-from-a-flag":
        extra = {"config.py": 'import sys\nimport yaml\nfrom easydict import EasyDict\n\n'
                              'cfg = EasyDict(yaml.safe_load(open(sys.argv[1])))\n'}
    elif case == "bound-twice":
        extra = {"config.py": LOADS[load] + 'cfg = EasyDict(yaml.safe_load(open("configs/other.yaml")))\n'}
    elif case == "whole-container":
        read = "cfg.model"
    elif case == "written-here":  # the checked file sets the key: a run-time value
        extra = {"blocks.py": BLOCKS.format(read=read).replace("\n\n\ndef", "\ncfg.model.epsilon = 1e-3\n\n\ndef")}
    folder = _project(tmp_path, load, read=read, extra={k: v for k, v in extra.items() if v is not None})
    if extra.get("configs/train.yaml", "") is None:
        (folder / "configs/train.yaml").unlink()
    assert _check(folder) == []


def test_files_that_disagree_leave_the_value_unknown(tmp_path):
    """``open("configs/train.yaml")`` runs from the project's root or the module's folder:
    two files that may be it with different values are no one value."""
    extra = {"pkg/__init__.py": "", "pkg/config.py": LOADS["yaml-from-root"],
             "pkg/configs/train.yaml": YAML.format(epsilon="1.0E-3", policy="float32"),
             "blocks.py": BLOCKS.format(read="cfg.model.epsilon").replace("from config", "from pkg.config")}
    assert _check(_project(tmp_path, "yaml-from-root", extra=extra)) == []


def test_editing_the_config_file_changes_the_cached_result(tmp_path):
    folder = _project(tmp_path, "yaml-from-root")
    assert len(_check(folder, cache=True)) == 1
    (folder / "configs/train.yaml").write_text(YAML.format(epsilon="1.0E-3", policy="mixed_float16"))
    assert _check(folder, cache=True) == []
    (folder / "configs/train.yaml").unlink()
    assert _check(folder, cache=True) == []
    (folder / "configs/train.yaml").write_text(YAML.format(epsilon="1.0E-8", policy="mixed_float16"))
    assert len(_check(folder, cache=True)) == 1


def test_the_loader_shapes():
    import libcst as cst

    from mplint.semantic.config_loads import Written, by_imports, loaded

    imports = {"yaml": "yaml", "os": "os", "EasyDict": "easydict.EasyDict", "json": "json"}

    def load(code):
        return loaded(cst.parse_expression(code), by_imports(imports))

    assert load('EasyDict(yaml.safe_load(open("a.yaml")))') == Written("a.yaml", False)
    assert load('yaml.safe_load(open(os.path.join(os.path.dirname(__file__), "c", "a.yml")))') \
        == Written("c/a.yml", True)
    assert load('yaml.safe_load(open("a.yaml", "w"))') is None  # written, not read
    assert load('yaml.safe_load(open(path))') is None
    assert load('yaml.safe_load(open(f"{name}.yaml"))') is None
    assert load('json.loads(text)') is None
    assert load('EasyDict(yaml.safe_load(open("a.yaml")), extra=1)') is None


SCRIPT = """import tensorflow as tf
import yaml
from easydict import EasyDict

{load}
{change}

tf.keras.mixed_precision.set_global_policy({policy})


class Norm(tf.keras.layers.Layer):
    def call(self, x):
        eps = {epsilon}
        return x / (tf.reduce_sum(x ** 2) ** 0.5 + eps)


inputs = tf.keras.Input((16,))
model = tf.keras.Model(inputs, tf.keras.layers.Activation("linear", dtype="float32")(Norm()(inputs)))
"""

IN_FILE = {
    "assign": 'cfg = EasyDict(yaml.safe_load(open("configs/train.yaml")))',
    "with": 'with open("configs/train.yaml") as f:\n    cfg = yaml.safe_load(f)',
}


def _script(tmp_path, load="assign", change="", policy='"mixed_float16"', epsilon='cfg["model"]["epsilon"]',
            yaml_epsilon="1.0E-8", yaml_policy="mixed_float16"):
    files = {".git/HEAD": "", "train.py": SCRIPT.format(load=IN_FILE[load], change=change, policy=policy,
                                                        epsilon=epsilon),
             "configs/train.yaml": YAML.format(epsilon=yaml_epsilon, policy=yaml_policy)}
    return helpers.write_files(tmp_path, files)


def _rules(folder, select="MP502,MP201"):
    result = helpers.run_cli("check", "--no-cache", "--select", select, "--output-format", "json", ".", cwd=folder)
    assert result.returncode in (0, 1), result.stderr
    return [(f["rule"], f["line"], f["message"]) for f in json.loads(result.stdout)]


@pytest.mark.parametrize("load", sorted(IN_FILE))
@pytest.mark.parametrize("epsilon", ['cfg["model"]["epsilon"]', "cfg.model.epsilon", 'cfg.model["epsilon"]'])
def test_a_config_the_checked_file_loads(tmp_path, load, epsilon):
    if load == "with" and "." in epsilon.split("[")[0]:
        pytest.skip("a plain dict has no attributes")
    [(code, _, message)] = _rules(_script(tmp_path, load, epsilon=epsilon))
    assert code == "MP502" and "1e-08" in message


@pytest.mark.parametrize("yaml_policy, found", [("mixed_float16", True), ("mixed_bfloat16", False)])
def test_the_policy_a_config_file_names(tmp_path, yaml_policy, found):
    folder = _script(tmp_path, policy='cfg["policy"]', epsilon="1e-3", yaml_policy=yaml_policy)
    assert [code for code, _, _ in _rules(folder, "MP502")] == []
    (tmp_path / "train.py").write_text((tmp_path / "train.py").read_text() + LOOP_TAIL)
    rows = _rules(folder, "MP201")
    assert bool(rows) == found
    assert not any("chosen at run time" in m for _, _, m in rows)


LOOP_TAIL = """
optimizer = tf.keras.optimizers.Adam(1e-3)


@tf.function
def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


@pytest.mark.parametrize("change", [
    "cfg.model.epsilon = float(sys.argv[1])",  # overridden by a flag whose value is unknown
    'cfg["model"]["epsilon"] = 1e-3',
    "cfg.model.update(vars(args))",
    "cfg = merge(cfg, sys.argv)",  # rebound
    "override(cfg)",  # handed whole to a call that may change it
])
def test_a_config_changed_in_the_file_is_unknown(tmp_path, change):
    assert _rules(_script(tmp_path, change="import sys\n" + change, epsilon="cfg.model.epsilon")) == []


def test_a_key_the_file_lacks_is_unknown(tmp_path):
    assert _rules(_script(tmp_path, epsilon='cfg["model"]["eps"]')) == []


FLAGGED = ('import argparse\nparser = argparse.ArgumentParser()\nparser.add_argument("--config"{default})\n'
           'args = parser.parse_args()\ncfg = EasyDict(yaml.safe_load(open(args.config)))')


@pytest.mark.parametrize("default, found", [
    (', default="configs/train.yaml"', True),  # what a run given no --config loads
    ('', False),  # no default: the file is the user's choice
    (', default="configs/absent.yaml"', False),  # a file that does not exist
    (', required=True', False),
])
def test_a_config_path_from_a_flag_s_default(tmp_path, default, found):
    IN_FILE["flag"] = FLAGGED.format(default=default)
    try:
        rows = _rules(_script(tmp_path, "flag"))
    finally:
        del IN_FILE["flag"]
    assert bool(rows) == found


def test_a_config_path_bound_to_a_name(tmp_path):
    IN_FILE["named"] = 'CONFIG = "configs/train.yaml"\ncfg = EasyDict(yaml.safe_load(open(CONFIG)))'
    try:
        assert len(_rules(_script(tmp_path, "named"))) == 1
    finally:
        del IN_FILE["named"]


LOADER = '''def load_config(path{default}):
    """Read the run's settings."""
    with open(path) as handle:
        config = yaml.safe_load(handle)
    return EasyDict(config)


cfg = load_config({argument})'''


@pytest.mark.parametrize("default, argument, found", [
    ("", '"configs/train.yaml"', True),
    ('="configs/train.yaml"', "", True),  # the parameter's default
    ("", "path=sys.argv[1]", False),  # chosen at run time
    ("", '"configs/other.yaml"', False),  # no such file
])
def test_a_loader_function_of_the_file(tmp_path, default, argument, found):
    IN_FILE["loader"] = "import sys\n\n\n" + LOADER.format(default=default, argument=argument)
    try:
        rows = _rules(_script(tmp_path, "loader"))
    finally:
        del IN_FILE["loader"]
    assert bool(rows) == found


def test_a_loader_with_branches_is_not_followed():
    import libcst as cst

    from mplint.semantic.config_loads import by_imports, returned

    code = ('def load(path):\n    if path.endswith(".json"):\n        return json.load(open(path))\n'
            '    return yaml.safe_load(open(path))\n')
    function = cst.parse_module(code).body[0]
    assert isinstance(function, cst.FunctionDef)
    assert returned(function, by_imports({"yaml": "yaml", "json": "json"}), {"path": "a.yaml"}) is None
    plain = cst.parse_module('def load(path):\n    return yaml.safe_load(open(path))\n').body[0]
    assert isinstance(plain, cst.FunctionDef)
    assert returned(plain, by_imports({"yaml": "yaml"}), {"path": "a.yaml"}) is not None


@pytest.mark.parametrize("call, found", [
    ('load_config("configs/train.yaml")', True),
    ('utils.load_config("configs/train.yaml")', True),
    ("load_config(sys.argv[1])", False),
    ('load_config("configs/other.yaml")', False),
])
def test_a_loader_function_of_another_module(tmp_path, call, found):
    IN_FILE["imported"] = f"import sys\nimport utils\nfrom utils import load_config\n\ncfg = {call}"
    extra = {"utils.py": "import yaml\nfrom easydict import EasyDict\n\n\n" + LOADER.split("\n\n\ncfg")[0]
             .format(default="") + "\n"}
    try:
        folder = _script(tmp_path, "imported")
        helpers.write_files(folder, extra)
        rows = _rules(folder)
    finally:
        del IN_FILE["imported"]
    assert bool(rows) == found
