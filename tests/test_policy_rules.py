"""MP401-MP407 beyond the catalog examples: facts, target versions, import tidying, precision."""

import json
import textwrap

import pytest

import helpers
from helpers import fired, fix, lint, outcome

# Judged as on a machine without TensorFlow: the installed Keras would change MP402.
pytestmark = pytest.mark.usefixtures("no_installed_keras")


POLICY = 'import os\nimport tensorflow as tf\ntf.keras.mixed_precision.set_global_policy("mixed_float16")\n'


# -- facts: every way the graph rewrite is switched on -----------------------------------
@pytest.mark.parametrize("line", [
    'os.environ["TF_ENABLE_AUTO_MIXED_PRECISION"] = "1"',
    'os.environ.setdefault("TF_ENABLE_AUTO_MIXED_PRECISION", "true")',
    'os.environ.update({"TF_ENABLE_AUTO_MIXED_PRECISION": "1"})',
    'os.environ.update(TF_ENABLE_AUTO_MIXED_PRECISION="1")',
    'os.putenv("TF_ENABLE_AUTO_MIXED_PRECISION", "1")',
    'tf.config.optimizer.set_experimental_options({"auto_mixed_precision": True})',
    'opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)',
])
def test_mp401_sees_every_switch(line):
    assert fired(POLICY + line + "\n", "MP401") == [(4, "MP401")]


@pytest.mark.parametrize("line", [
    'os.environ["TF_ENABLE_AUTO_MIXED_PRECISION"] = "0"',
    'os.environ["TF_ENABLE_AUTO_MIXED_PRECISION"] = flag',
    'os.environ["OTHER"] = "1"',
    'tf.config.optimizer.set_experimental_options({"auto_mixed_precision": False})',
    'tf.config.optimizer.set_experimental_options({"layout_optimizer": True})',
])
def test_mp401_silent_without_a_rewrite(line):
    assert lint(POLICY + line + "\n", "MP401") == []


def test_mp401_silent_for_float32_and_run_time_policies():
    code = """
        import tensorflow as tf
        tf.keras.mixed_precision.set_global_policy("float32")
        tf.keras.mixed_precision.set_global_policy(args.policy)
        opt = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(opt)
    """
    assert lint(code, "MP401") == []


def test_mp401_else_branch_is_exclusive_but_a_nested_if_is_not():
    exclusive = """
        import tensorflow as tf
        if use_keras:
            tf.keras.mixed_precision.set_global_policy("mixed_float16")
        else:
            if graph:
                opt = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(opt)
    """
    assert lint(exclusive, "MP401") == []
    both = """
        import tensorflow as tf
        if use_keras:
            tf.keras.mixed_precision.set_global_policy("mixed_float16")
            if graph:
                opt = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(opt)
    """
    assert fired(both, "MP401") == [(6, "MP401")]


def test_mp401_config_policy_and_fix_drops_the_line_and_its_comment():
    code = """
        import tensorflow as tf
        opt = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(opt)  # amp
        model.compile(optimizer=opt)
    """
    assert lint(code, "MP401") == []
    assert fired(code, "MP401", assume_policy="mixed_float16") == [(3, "MP401")]
    # not ``opt = opt  # amp``: the comment described the rewrite
    assert fix(code, "MP401", assume_policy="mixed_float16") == "\nimport tensorflow as tf\nmodel.compile(optimizer=opt)\n"


# -- MP402: target version, import rewriting, tidy imports ----------------------------------
OLD = 'import tensorflow as tf\ntf.keras.mixed_precision.experimental.set_policy("mixed_float16")\n'


@pytest.mark.parametrize("target,severity", [
    ("", "error"), ("2.9", "error"), ("2.12.1", "error"), ("2.8", "warning"), ("2.4", "warning"),
    ("2.3", None), ("not a version", "error"),
])
def test_mp402_severity_follows_target_version(target, severity):
    findings = lint(OLD, "MP402", **{"target-tf-version": target})
    assert [f.severity for f in findings] == ([severity] if severity else [])


def test_mp402_keras_3_is_always_an_error():
    findings = lint(OLD, "MP402", keras_version=3, **{"target-tf-version": "2.5"})
    assert [f.severity for f in findings] == ["error"]


def test_mp402_graph_rewrite_was_removed_earlier():
    code = "import tensorflow as tf\nopt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)\n"
    assert [f.severity for f in lint(code, "MP402", **{"target-tf-version": "2.7"})] == ["error"]


def test_mp402_rewrites_imports_and_leaf_names():
    code = """
        import tensorflow.keras.mixed_precision.experimental as mp
        from tensorflow.keras.mixed_precision.experimental import set_policy, Policy as P

        set_policy(P("mixed_float16"))
        mp.set_policy("mixed_float16")
        print(mp.get_layer_policy(model.layers[0]).name)
    """
    assert fix(code, "MP402") == textwrap.dedent("""
        import tensorflow.keras.mixed_precision as mp
        from tensorflow.keras.mixed_precision import set_global_policy, Policy as P

        set_global_policy(P("mixed_float16"))
        mp.set_global_policy("mixed_float16")
        print(model.layers[0].dtype_policy.name)
    """)


def test_mp402_adds_the_import_it_needs_and_drops_the_unused_one():
    code = """
        from tensorflow.train import experimental as tte

        opt = tte.enable_mixed_precision_graph_rewrite(opt)
    """
    assert fix(code, "MP402") == textwrap.dedent("""
        import tensorflow as tf

        opt = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(opt)
    """)


def test_mp402_keeps_an_import_still_in_use():
    code = """
        from tensorflow.train import experimental as tte

        opt = tte.enable_mixed_precision_graph_rewrite(opt)
        state = tte.PythonState()
    """
    assert "from tensorflow.train import experimental as tte" in fix(code, "MP402")


def test_mp402_fixed_loss_scale_has_no_keras_3_equivalent():
    code = """
        import tensorflow as tf
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 128)
    """
    findings = lint(code, "MP402", keras_version=3)
    assert len(findings) == 1 and findings[0].fix is None
    assert fix(code, "MP402").strip().endswith(
        "LossScaleOptimizer(opt, dynamic=False, initial_scale=128)")


def test_mp402_dynamic_loss_scale_is_a_safe_drop():
    code = """
        import tensorflow as tf
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, loss_scale="dynamic")
    """
    findings = lint(code, "MP402")
    assert [f.fix for f in findings] == ["safe"]
    assert "LossScaleOptimizer(opt)" in fix(code, "MP402")


@pytest.mark.parametrize("code", [
    # a variable that shadows the import
    """
    from tensorflow.keras.mixed_precision.experimental import set_policy  # noqa: MP402
    def f(set_policy):
        return set_policy(1)
    """,
    # current spellings and unrelated `experimental` names
    """
    import tensorflow as tf
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    tf.config.experimental.set_memory_growth(gpu, True)
    state = tf.train.experimental.PythonState()
    opt = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(opt)
    """,
])
def test_mp402_silent(code):
    assert lint(code, "MP402") == []


def test_fixed_files_parse_and_settle():
    code = """
        from tensorflow.keras.mixed_precision import experimental as mixed_precision
        from tensorflow.mixed_precision.experimental import DynamicLossScale
        mixed_precision.set_policy("mixed_float16")
        opt = mixed_precision.LossScaleOptimizer(opt, DynamicLossScale(increment_period=10))
    """
    fixed = fix(code, "MP402")
    assert "experimental" not in fixed and "DynamicLossScale" not in fixed
    assert fix(fixed, "MP402") == fixed


# -- MP403-MP407 ----------------------------------------------------------------------------
def test_mp403_silent_when_policy_is_a_run_time_value():
    code = """
        import tensorflow as tf
        strategy = tf.distribute.TPUStrategy(tf.distribute.cluster_resolver.TPUClusterResolver())
        tf.keras.mixed_precision.set_global_policy(FLAGS.policy)
    """
    assert lint(code, "MP403") == []


def test_mp404_keeps_backend_import_still_used():
    code = """
        from tensorflow.keras import backend as K
        K.set_floatx("float16")
        K.clear_session()
    """
    fixed = fix(code, "MP404")
    assert "from tensorflow.keras import backend as K" in fixed
    assert 'tf.keras.mixed_precision.set_global_policy("mixed_float16")' in fixed
    assert "import tensorflow as tf" in fixed


def test_mp404_silent_when_a_mixed_policy_is_set_too():
    code = """
        import tensorflow as tf
        tf.keras.backend.set_floatx("float16")
        tf.keras.mixed_precision.set_global_policy("mixed_float16")
    """
    assert lint(code, "MP404") == []


def test_mp405_layer_called_after_the_policy():
    code = """
        from tensorflow import keras
        dense = keras.layers.Dense(64)
        keras.mixed_precision.set_global_policy("mixed_float16")
        y = dense(x)
    """
    assert [f.line for f in lint(code, "MP405")] == [4]


def test_mp405_silent_across_scopes_and_for_unknown_builders():
    code = """
        from tensorflow import keras
        from mypackage import build_model
        model = build_model()
        keras.mixed_precision.set_global_policy("mixed_float16")
        model.fit(x, y)

        def other():
            layer = keras.layers.Dense(8)
            return layer
    """
    assert lint(code, "MP405") == []


def test_mp406_mixed_layer_packages_including_the_policy_one_are_left_alone():
    code = """
        import keras
        import tf_keras
        keras.mixed_precision.set_global_policy("mixed_float16")
        a = keras.layers.Dense(8)
        b = tf_keras.layers.Dense(8)
    """
    assert lint(code, "MP406") == []


def test_mp407_result_used_or_original_never_used():
    code = """
        import tensorflow as tf
        def a(opt, loss):
            amp = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(opt)
            return amp.minimize(loss)
        def b(opt):
            amp = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(opt)
    """
    assert lint(code, "MP407") == []


def test_mp402_silent_in_tf1_code():
    code = """
        import tensorflow as tf
        tf.logging.set_verbosity(tf.logging.INFO)
        opt = tf.train.AdamOptimizer(1e-3)
        opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)
    """
    assert lint(code, "MP402") == []


def test_mp402_graph_rewrite_with_a_keras_optimizer():
    code = """
        import tensorflow as tf
        opt = tf.keras.optimizers.Adam(1e-3)
        opt = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(opt)
        legacy = tf.keras.optimizers.legacy.Adam(1e-3)
        legacy = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(legacy)
        v1 = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(tf.compat.v1.train.AdamOptimizer())
    """
    assert [(f.line, f.severity) for f in lint(code, "MP402")] == [(4, "error")]
    assert lint(code, "MP402", **{"target-tf-version": "2.10"}) == []


def test_target_tf_version_from_pyproject(tmp_path, cli):
    import json

    (tmp_path / "pyproject.toml").write_text('[tool.mplint]\ntarget-tf-version = "2.8"\n', encoding="utf-8")
    (tmp_path / "train.py").write_text(OLD, encoding="utf-8")
    result = cli("check", "--output-format", "json", "train.py", cwd=tmp_path)
    findings = json.loads(result.stdout)
    assert [(f["rule"], f["severity"]) for f in findings] == [("MP402", "warning")]
    (tmp_path / "pyproject.toml").write_text('[tool.mplint]\ntarget-tf-version = 2.8\n', encoding="utf-8")
    result = cli("check", "train.py", cwd=tmp_path)
    assert outcome(result) == (2, []) and "target-tf-version" in result.stderr  # a string is required


def test_mp401_silent_across_separate_test_functions():
    code = """
        import tensorflow as tf

        class MixedPrecisionTest(tf.test.TestCase):
            def test_keras_policy(self):
                tf.keras.mixed_precision.set_global_policy("mixed_float16")

            def test_graph_rewrite(self):
                opt = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(self.opt)
    """
    assert lint(code, "MP401") == []
    both = code.replace("(self.opt)", "(self.opt)\n                tf.keras.mixed_precision.set_global_policy('mixed_float16')")
    assert fired(both, "MP401") == [(9, "MP401")]  # the rewrite call


def test_mp402_one_finding_when_only_the_import_changes():
    code = """
        from tensorflow.keras.mixed_precision import experimental as mixed_precision
        policy = mixed_precision.Policy("mixed_float16")
        opt = mixed_precision.LossScaleOptimizer(opt)
    """
    assert [f.line for f in lint(code, "MP402")] == [2]
    assert fix(code, "MP402").startswith("\nfrom tensorflow.keras import mixed_precision\n")


def test_mp405_a_rebuilt_model_is_not_a_late_use():
    code = """
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(8)])
        tf.keras.mixed_precision.set_global_policy("mixed_float16")
        model = tf.keras.Sequential([tf.keras.layers.Dense(8)])
        model.fit(x, y)
    """
    assert lint(code, "MP405") == []
    late = code.replace("model = tf.keras.Sequential([tf.keras.layers.Dense(8)])\n        model.fit", "model.fit")
    assert fired(late, "MP405") == [(5, "MP405")]  # the policy call


def test_mp405_knows_a_project_model_class_by_its_keras_only_attributes():
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "fixtures" / "policy" / "bad_policy_after_imported_model.py"
    code = path.read_text(encoding="utf-8")
    [finding] = lint(code, "MP405")
    assert "`student`" in finding.message
    # without the student: the teacher is only asked to predict after the policy, the
    # scikit-learn model is not Keras, and a classmethod's result says nothing
    rest = "\n".join(line for line in code.splitlines() if "student" not in line)
    assert lint(rest, "MP405") == []
    # an attribute that is not Keras-only proves nothing
    unknown = code.replace("student.trainable_weights", "student.weights_list").replace(
        "student(tf.zeros([4, 128, 128, 3]))\n", "")
    assert lint(unknown, "MP405") == []


MP405_IN_A_METHOD = """
    import keras

    class Experiment:
        def build(self):
            return keras.Sequential([keras.Input(shape=(16,)), keras.layers.Dense(8)])

        def run(self, x, y):
            self.model = self.build()
            keras.mixed_precision.set_global_policy("mixed_float16")
            self.model.compile("adam", "mse")
            self.model.fit(x, y)
"""


def test_mp405_follows_a_model_held_on_self():
    """``self.model = self.build()`` (a method of the class that builds one) or a Keras
    constructor, then the policy, then ``self.model.fit()``: the model keeps float32."""
    [finding] = lint(MP405_IN_A_METHOD, "MP405")
    assert finding.line == 10 and "`self.model`" in finding.message
    direct = MP405_IN_A_METHOD.replace("self.model = self.build()", "self.model = keras.Sequential([keras.layers.Dense(8)])")
    assert fired(direct, "MP405") == [(10, "MP405")]


@pytest.mark.parametrize("change", [
    # only asked to predict after the policy
    ("self.model.compile(\"adam\", \"mse\")\n            self.model.fit(x, y)", "self.model.predict(x)"),
    # rebuilt after the policy, before it is trained
    ("self.model.compile(", "self.model = self.build()\n            self.model.compile("),
    # built by a method that builds nothing Keras
    ("return keras.Sequential([keras.Input(shape=(16,)), keras.layers.Dense(8)])", "return load(self)"),
    # the attribute built is not the one trained
    ("self.model = self.build()", "self.other = self.build()"),
])
def test_mp405_silent_on_self_attributes_it_cannot_convict(change):
    assert lint(MP405_IN_A_METHOD.replace(*change), "MP405") == []


MP407_ON_SELF = """
    import tensorflow as tf

    class Trainer:
        def __init__(self, model):
            self.model = model
            self.opt = tf.compat.v1.train.MomentumOptimizer(0.1, 0.9)
            self.amp_opt = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(self.opt)

        def build_train_op(self, loss):
            return self.opt.minimize(loss)
"""


def test_mp407_follows_the_rewrite_result_kept_on_self():
    [finding] = lint(MP407_ON_SELF, "MP407")
    assert finding.line == 8 and "`self.amp_opt`" in finding.message and "`self.opt`" in finding.message


@pytest.mark.parametrize("change", [
    ("return self.opt.minimize(loss)", "return self.amp_opt.minimize(loss)"),  # the result trains
    ("return self.opt.minimize(loss)", "return loss"),  # nothing here trains with self.opt
    ("return self.opt.minimize(loss)", "return self.opt.minimize(loss), trainer.amp_opt"),  # read elsewhere
    ("self.amp_opt = ", "self.opt = "),  # assigned back
])
def test_mp407_silent_when_the_result_on_self_may_be_used(change):
    assert lint(MP407_ON_SELF.replace(*change), "MP407") == []


MP403_CONFIG = """
    import types
    import keras
    import tensorflow as tf

    cfg = types.SimpleNamespace(precision="mixed_float16", tpu="")
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=cfg.tpu)
    strategy = tf.distribute.TPUStrategy(resolver)
    keras.mixed_precision.set_global_policy(cfg.precision)
"""


def test_mp403_reads_the_policy_from_a_config_object():
    assert fired(MP403_CONFIG, "MP403") == [(9, "MP403")]
    namespace = MP403_CONFIG.replace("types.SimpleNamespace(", "argparse.Namespace(").replace(
        "import types", "import argparse")
    assert fired(namespace, "MP403") == [(9, "MP403")]


@pytest.mark.parametrize("change", [
    ('precision="mixed_float16"', 'precision="mixed_bfloat16"'),
    ("resolver = ", "cfg.precision = choose()\n    resolver = "),  # changed after it is made
    ("resolver = ", "configure(cfg)\n    resolver = "),  # handed to a call that may change it
    ('precision="mixed_float16", ', ""),  # no such keyword: unknown
    ("types.SimpleNamespace(", "make_config("),  # not a known config object
])
def test_mp403_silent_when_the_config_value_cannot_be_followed(change):
    assert fired(MP403_CONFIG.replace(*change), "MP403") == []


MP403_HELPER = """
    import keras
    import tensorflow as tf

    def setup_precision(name, verbose=False):
        keras.mixed_precision.set_global_policy(name)

    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu="")
    strategy = tf.distribute.TPUStrategy(resolver)
    setup_precision("mixed_float16")  # the call to change
"""


def test_mp403_reports_the_call_that_gives_a_policy_helper_mixed_float16():
    assert fired(MP403_HELPER, "MP403") == [(10, "MP403")]
    assert 'setup_precision("mixed_bfloat16")' in fix(MP403_HELPER, "MP403")
    assert 'set_global_policy(name)' in fix(MP403_HELPER, "MP403")
    # by keyword, and through the default
    assert fired(MP403_HELPER.replace('("mixed_float16")', '(name="mixed_float16")'), "MP403") == [(10, "MP403")]
    defaulted = MP403_HELPER.replace("name, verbose", 'name="mixed_float16", verbose').replace(
        'setup_precision("mixed_float16")', "setup_precision()")
    assert fired(defaulted, "MP403") == [(10, "MP403")]


MP403_HELPER_ARMS = """
    import keras
    import tensorflow as tf

    def setup_precision(name):
        keras.mixed_precision.set_global_policy(name)

    if use_tpu:
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu="")
        strategy = tf.distribute.TPUStrategy(resolver)
        setup_precision("mixed_bfloat16")
    else:
        setup_precision("mixed_float16")
"""


@pytest.mark.parametrize("code", [
    MP403_HELPER.replace('setup_precision("mixed_float16")', 'setup_precision("mixed_bfloat16")'),
    MP403_HELPER_ARMS,  # the TPU in one arm, float16 in the other
    MP403_HELPER.replace('setup_precision("mixed_float16")', 'setup_precision(*args)'),  # unreadable
])
def test_mp403_silent_when_no_call_gives_the_helper_float16_beside_the_tpu(code):
    assert fired(code, "MP403") == []


MP404_PREDICT = """
    import keras

    def run_inference(model, images):
        keras.backend.set_floatx("float16")
        return model.predict(images)
"""


def test_mp404_silent_in_a_predict_entry_point_that_trains_nothing():
    assert fired(MP404_PREDICT, "MP404") == []
    # a helper it calls that trains, the name that does not say so, a name that only
    # contains the word: reported
    assert fired(MP404_PREDICT.replace("return model.predict(images)", "fit_all(model)\n\n"
                                       "    def fit_all(model):\n        model.fit(x, y)"), "MP404") == [(5, "MP404")]
    assert fired(MP404_PREDICT.replace("run_inference", "run"), "MP404") == [(5, "MP404")]
    assert fired(MP404_PREDICT.replace("run_inference", "predictor_setup"), "MP404") == [(5, "MP404")]
    # at module level: the program may train after it
    assert fired("import keras\nkeras.backend.set_floatx('float16')\n", "MP404") == [(2, "MP404")]


MP405_RECEIVED = """
    import tensorflow as tf

    class Trainer:
        def __init__(self, model, optimizer, mixed_precision=False):
            self.model = model
            self.optimizer = optimizer
            if mixed_precision:
                tf.keras.mixed_precision.set_global_policy("mixed_float16")

        def step(self, x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(self.model(x, training=True) - y)
            grads = tape.gradient(loss, self.model.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))

    def main(model, opt):
        Trainer(model, opt, mixed_precision=True)
"""


def test_mp405_a_model_received_as_an_argument_was_built_before_the_policy():
    """A trainer that turns mixed precision on in its constructor, for the model it is
    handed (kept on ``self`` and trained by another method), or a function that sets the
    policy and then compiles the model it was given: the caller built it under float32."""
    [finding] = lint(MP405_RECEIVED, "MP405")
    assert finding.line == 9 and "`model`, a model this function receives as an argument" in finding.message
    function = ("import tensorflow as tf\n\ndef train(model, data, amp):\n    if amp:\n"
                "        tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
                "    model.compile('adam', 'mse')\n    model.fit(data)\n")
    assert fired(function, "MP405") == [(5, "MP405")]


@pytest.mark.parametrize("change", [
    # a builder handed in, called after the policy: the model is built under it
    ("self.model = model\n", "self.model = model()\n"),
    # the received object is never used as a model (a name, a config)
    ("self.model.trainable_variables", "self.model.variables_of(self)"),
    # kept under another attribute than the one trained
    ("self.model = model\n", "self.spec = model\n"),
    # every call of this script's trainer leaves the flag off: the set never runs
    ("mixed_precision=True)", "mixed_precision=False)\n\n    if __name__ == '__main__':\n        main(None, None)"),
])
def test_mp405_silent_on_received_objects_it_cannot_convict(change):
    assert lint(MP405_RECEIVED.replace(*change), "MP405") == []


def test_mp404_set_floatx_with_a_value_another_module_decides(tmp_path):
    """``set_floatx(hparams.COMPUTE_DTYPE)`` with ``COMPUTE_DTYPE = "float16"`` in
    hparams.py: pure float16, though the file never spells float16; the value is
    decided there, so nothing is rewritten here. Another value stays silent."""
    def check(folder, value):
        helpers.write_files(folder, {
            "pyproject.toml": "[project]\nname = 'reg'\n",
            "hparams.py": f'COMPUTE_DTYPE = "{value}"\n',
            "train.py": "import keras\n\nimport hparams\n\nkeras.config.set_floatx(hparams.COMPUTE_DTYPE)\n"
                        "model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])\n"
                        "model.compile('adam', 'mse')\n",
        })
        result = helpers.run_cli("check", "--select", "MP404", "--output-format", "json", "--no-cache", ".",
                                 cwd=folder)
        return [(f["path"], f["line"], f["message"], f["fix"]) for f in json.loads(result.stdout)]

    [(path, line, message, fix)] = check(tmp_path / "a", "float16")
    assert (path, line, fix) == ("train.py", 5, None)
    assert message.startswith("set_floatx(hparams.COMPUTE_DTYPE), 'float16' here, makes every layer pure float16")
    assert check(tmp_path / "b", "float32") == []


def test_mp407_silent_where_a_policy_set_in_another_module_reaches_the_program(tmp_path):
    """``configure_precision()`` of settings.py sets mixed_float16, then the script
    switches on the grappler option: compile() adds the loss scale (MP401 reports the
    pair), so "no loss scaling anywhere" would be wrong. Without the call it is right."""
    train = ("import keras\nimport tensorflow as tf\n\nfrom settings import configure_precision\n\n"
             "{call}\ntf.config.optimizer.set_experimental_options({{'auto_mixed_precision': True}})\n"
             "net = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, dtype='float32')])\n"
             "net.compile(optimizer='adam', loss='mse')\nnet.fit([[0.0] * 4], [0.0])\n")

    def check(folder, call):
        helpers.write_files(folder, {
            "pyproject.toml": "[project]\nname = 'cls'\n",
            "settings.py": "import keras\n\n\ndef configure_precision():\n"
                           "    keras.mixed_precision.set_global_policy('mixed_float16')\n",
            "train.py": train.format(call=call),
        })
        result = helpers.run_cli("check", "--select", "MP401,MP407", "--output-format", "json", "--no-cache", ".",
                                 cwd=folder)
        return sorted((f["rule"], f["line"]) for f in json.loads(result.stdout))

    assert check(tmp_path / "a", "configure_precision()") == [("MP401", 7)]
    assert check(tmp_path / "b", "pass") == [("MP407", 7)]
