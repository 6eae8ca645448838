"""One vocabulary, one detector: the project index and the per-file facts agree.

The project index (what other files learn about a file: the policies it sets, whether
it switches the graph rewrite on) and the module facts the rules read in that file
come from one detector. Each spelling in the table below is run through both paths,
the index's byte gate included, and both must give the expected answer.
"""

import ast
from pathlib import Path

import pytest

from mplint.api import make_linter
from mplint.core.source import parse
from mplint.core.source_kinds import load_source
from mplint.rule.check import Check
from mplint.run.project import INDEX_TOKENS, FileFacts, index_source, may_set_facts
from mplint.semantic import vocabulary
from mplint.semantic.names import _SYNONYMS, canonical
from mplint.semantic.vocabulary import MAYBE_MIXED, UNKNOWN_POLICY

MIXED = frozenset({"mixed_float16"})

#: spelling -> (code, policies set, graph rewrite on)
SPELLINGS = {
    # -- the policy -------------------------------------------------------------------
    "tf.keras set_global_policy": (
        "import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy('mixed_float16')\n",
        MIXED, False),
    "keras set_global_policy": (
        "import keras\nkeras.mixed_precision.set_global_policy('mixed_float16')\n", MIXED, False),
    "keras.config.set_dtype_policy": (
        "import keras\nkeras.config.set_dtype_policy('mixed_bfloat16')\n",
        frozenset({"mixed_bfloat16"}), False),
    "mixed_precision.set_dtype_policy": (
        "from keras import mixed_precision\nmixed_precision.set_dtype_policy('mixed_float16')\n", MIXED, False),
    "experimental.set_policy": (
        "import tensorflow as tf\ntf.keras.mixed_precision.experimental.set_policy('mixed_float16')\n",
        MIXED, False),
    "from-import alias": (
        "from tensorflow.keras.mixed_precision import set_global_policy as sgp\nsgp('mixed_float16')\n",
        MIXED, False),
    "module alias": (
        "from tensorflow.keras import mixed_precision as mp\nmp.set_global_policy('mixed_float16')\n",
        MIXED, False),
    "tf_keras": (
        "import tf_keras\ntf_keras.mixed_precision.set_global_policy('mixed_float16')\n", MIXED, False),
    "a Policy object": (
        "import keras\nkeras.mixed_precision.set_global_policy(keras.mixed_precision.Policy('mixed_float16'))\n",
        MIXED, False),
    "a DTypePolicy object": (
        "import keras\nkeras.config.set_dtype_policy(keras.DTypePolicy('mixed_float16'))\n", MIXED, False),
    "the name in a constant": (
        "import keras\nPOLICY = 'mixed_float16'\nkeras.mixed_precision.set_global_policy(POLICY)\n",
        MIXED, False),
    "chosen at run time": (
        "import sys\nimport keras\nkeras.mixed_precision.set_global_policy(sys.argv[1])\n",
        frozenset({UNKNOWN_POLICY}), False),
    "float32": (
        "import keras\nkeras.mixed_precision.set_global_policy('float32')\n", frozenset({"float32"}), False),
    "inside a function": (
        "import keras\ndef main():\n    keras.mixed_precision.set_global_policy('mixed_float16')\n",
        MIXED, False),
    # -- the graph rewrite -----------------------------------------------------------------
    "train.experimental rewrite": (
        "import tensorflow as tf\nopt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)\n",
        frozenset(), True),
    "compat.v1 rewrite": (
        "import tensorflow as tf\n"
        "opt = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(opt)\n",
        frozenset(), True),
    "rewrite imported by name": (
        "from tensorflow.compat.v1.mixed_precision import enable_mixed_precision_graph_rewrite\n"
        "opt = enable_mixed_precision_graph_rewrite(opt)\n", frozenset(), True),
    "grappler option literal": (
        "import tensorflow as tf\ntf.config.optimizer.set_experimental_options({'auto_mixed_precision': True})\n",
        frozenset(), True),
    "grappler options in a variable": (
        "import tensorflow as tf\nOPTIONS = {'auto_mixed_precision': True, 'layout_optimizer': False}\n"
        "tf.config.optimizer.set_experimental_options(OPTIONS)\n", frozenset(), True),
    "grappler options annotated": (
        "import tensorflow as tf\noptions: dict = {'auto_mixed_precision': True}\n"
        "tf.config.optimizer.set_experimental_options(options)\n", frozenset(), True),
    "grappler option off": (
        "import tensorflow as tf\ntf.config.optimizer.set_experimental_options({'auto_mixed_precision': False})\n",
        frozenset(), False),
    "environ item": (
        "import os\nimport tensorflow as tf\nos.environ['TF_ENABLE_AUTO_MIXED_PRECISION'] = '1'\n",
        frozenset(), True),
    "environ item, 'True'": (
        "import os\nimport tensorflow as tf\nos.environ['TF_ENABLE_AUTO_MIXED_PRECISION'] = 'TRUE'\n",
        frozenset(), True),
    "environ item off": (
        "import os\nimport tensorflow as tf\nos.environ['TF_ENABLE_AUTO_MIXED_PRECISION'] = '0'\n",
        frozenset(), False),
    "environ.setdefault": (
        "import os\nimport tensorflow as tf\nos.environ.setdefault('TF_ENABLE_AUTO_MIXED_PRECISION', 'true')\n",
        frozenset(), True),
    "os.putenv": (
        "import os\nimport tensorflow as tf\nos.putenv('TF_ENABLE_AUTO_MIXED_PRECISION', '1')\n",
        frozenset(), True),
    "environ.update with a dict": (
        "import os\nimport tensorflow as tf\nos.environ.update({'TF_ENABLE_AUTO_MIXED_PRECISION': '1'})\n",
        frozenset(), True),
    "environ.update with keywords": (
        "import os\nimport tensorflow as tf\nos.environ.update(TF_ENABLE_AUTO_MIXED_PRECISION='1')\n",
        frozenset(), True),
    "environ key in a constant": (
        "import os\nimport tensorflow as tf\nKEY = 'TF_ENABLE_AUTO_MIXED_PRECISION'\nos.environ[KEY] = '1'\n",
        frozenset(), True),
    "another variable": (
        "import os\nimport tensorflow as tf\nos.environ['TF_CPP_MIN_LOG_LEVEL'] = '1'\n", frozenset(), False),
    "disable only": (
        "import tensorflow as tf\ntf.train.experimental.disable_mixed_precision_graph_rewrite()\n",
        frozenset(), False),
    # -- both ------------------------------------------------------------------------------
    "policy and rewrite": (
        "import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
        "opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)\n", MIXED, True),
}


def _index(path: Path, raw: bytes) -> FileFacts:
    """What the project index records for a file (its byte gate, then the parse)."""
    return index_source(str(path), raw) if may_set_facts(raw) else FileFacts()


def _module_facts(path: Path, raw: bytes):
    """The module facts exactly as the rules of the file see them, in ``finish()``."""
    seen = []

    class Probe(Check):
        rule_id = "MP999"

        def finish(self) -> None:
            seen.append(self.facts)

    linter = make_linter()
    source = load_source(str(path), raw).program()
    linter.analyze(source, parse(source), classes=[Probe])
    (facts,) = seen
    return facts


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_the_project_index_and_the_module_facts_agree(spelling, tmp_path):
    code, policies, rewrite = SPELLINGS[spelling]
    path = tmp_path / "train.py"
    raw = code.encode()
    path.write_bytes(raw)
    indexed = _index(path, raw)
    facts = _module_facts(path, raw)
    assert (frozenset(indexed.policies), indexed.rewrite) == (policies, rewrite)
    assert (facts.policy_values(), facts.enables_rewrite) == (policies, rewrite)


def test_a_notebook_is_indexed_as_its_cells(tmp_path):
    import json

    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": ["import os\n", "os.environ.update(TF_ENABLE_AUTO_MIXED_PRECISION='1')\n"]}]
    raw = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()
    path = tmp_path / "train.ipynb"
    path.write_bytes(raw)
    assert _index(path, raw).rewrite and _module_facts(path, raw).enables_rewrite


# -- the vocabulary itself -------------------------------------------------------------------
def _name_sets():
    for name, value in vars(vocabulary).items():
        if name.isupper() and isinstance(value, (frozenset, dict)):
            yield name, value


def test_every_name_in_the_vocabulary_is_canonical():
    """A name that is not canonical could never match a resolved call: a dead entry."""
    stale = [(set_name, name) for set_name, names in _name_sets() for name in names
             if isinstance(name, str) and "." in name and canonical(name) != name]
    assert stale == []


def test_the_byte_words_cover_every_spelling_of_the_policy_and_the_rewrite():
    """The prefilter, the index and the program model skip files without these words:
    every spelling of a setter (its synonyms too) must hold one."""
    setters = set(vocabulary.SET_POLICY_FUNCTIONS)
    setters |= {alias for alias, name in _SYNONYMS.items() if name in vocabulary.SET_POLICY_FUNCTIONS}
    for name in setters:
        assert name.rsplit(".", 1)[1] in vocabulary.POLICY_SETTER_WORDS, name
    for name in vocabulary.GRAPH_REWRITE_FUNCTIONS | vocabulary.DISABLE_REWRITE_FUNCTIONS:
        assert any(word in name for word in vocabulary.REWRITE_WORDS), name
    assert all(word.encode() in INDEX_TOKENS for word in vocabulary.REWRITE_WORDS + vocabulary.POLICY_SETTER_WORDS)
    assert UNKNOWN_POLICY in MAYBE_MIXED


@pytest.mark.parametrize("value, amp, legacy", [
    ("1", True, True), ("true", True, True), ("True", True, True), ("TRUE", True, False),
    ("0", False, False), ("false", False, False), ("yes", False, False),
])
def test_environment_switches_read_as_tensorflow_reads_them(value, amp, legacy):
    """TF_ENABLE_AUTO_MIXED_PRECISION goes through C++ ReadBoolFromEnvVar (any case);
    TF_USE_LEGACY_KERAS is compared in Python with ("true", "True", "1")."""
    assert vocabulary.amp_env_enabled(value) is amp
    assert vocabulary.legacy_keras_env_enabled(value) is legacy


#: module-level names that hold API spellings but are no set of canonical names: the
#: spelling tables of the name resolver, the package paths a fix writes, a migration
_SPELLINGS = {
    ("mplint/semantic/names.py", "_PREFIXES"), ("mplint/semantic/names.py", "_LAYER_SUBMODULE_PREFIX"),
    ("mplint/analysis/custom_layers.py", "_KERAS_PACKAGES"),
    ("mplint/checks/mp402_removed_mixed_precision_api.py", "_KERAS_OPTIMIZERS_REJECTED"),
    # text patterns (and how messages show them) of APIs only one Keras generation has:
    # version evidence read from the bytes before any name is resolved
    ("mplint/semantic/keras_version.py", "_SPELLINGS"),
}
#: the packages whose dotted names the rules compare
_API_PACKAGES = ("keras", "tensorflow", "tf_keras", "tensorflow_addons", "tensorflow_datasets", "horovod",
                 "byteps", "numpy", "jax", "os")


def test_no_module_but_the_vocabulary_defines_a_set_of_api_names():
    """Sets (and tuples) of canonical API names live in the vocabulary only, so a
    spelling added there reaches every rule: no second, drifting copy."""
    root = Path(__file__).resolve().parent.parent
    found = []
    for path in sorted((root / "mplint").rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative.startswith("mplint/runtime/") or relative in (
                "mplint/semantic/vocabulary.py",  # the one place
                "mplint/semantic/migrations.py",  # the history of renamed and removed APIs
        ):
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if not isinstance(target, ast.Name) or (relative, target.id) in _SPELLINGS:
                    continue
                if isinstance(node.value, ast.Dict):
                    continue  # a table of how one analysis reads an API's arguments
                names = [n.value for n in ast.walk(node.value) if isinstance(n, ast.Constant)
                         and isinstance(n.value, str) and n.value.split(".", 1)[0] in _API_PACKAGES
                         and "." in n.value]
                if names:
                    found.append(f"{relative}: {target.id}")
    assert found == []


def test_the_table_switches_the_rewrite_on_by_every_mechanism():
    """The spellings above that turn the rewrite on use every mechanism there is: the
    rewrite call, the grappler option and the environment switch."""
    code = "".join(code for code, _, rewrite in SPELLINGS.values() if rewrite)
    assert all(word in code for word in vocabulary.REWRITE_WORDS)


def test_keras_3_public_api_package_is_keras_itself():
    # ``from keras.api import mixed_precision`` (Keras 3 re-exports keras.api as keras)
    from mplint.semantic.names import canonical

    assert canonical("keras.api.mixed_precision.LossScaleOptimizer") == "keras.mixed_precision.LossScaleOptimizer"
    assert canonical("keras.api.layers.Dense") == "keras.layers.Dense"
    assert canonical("keras.api._v2.keras.layers.Dense") == "keras.layers.Dense"
