"""MP301/MP302 judge a size taken from a parameter's default only where some call in
the program may leave the default in place (issue #24): a constructor whose every
caller in the project's other modules passes the size never builds a layer of its
default's size; a caller's literal is judged instead, and a caller's unread value
(a config entry, a variable) leaves the size unknown, so silent."""

import pytest

from helpers import reported, run_cli, write_files

MODEL = (
    "import tensorflow as tf\n"
    "from tensorflow.keras import layers\n"
    "\n"
    "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
    "\n"
    "\n"
    "class Net(tf.keras.Model):\n"
    "    def __init__(self, num_filters=62, depth=2):\n"
    "        super().__init__()\n"
    "        self.conv = layers.Conv2D(filters=num_filters, kernel_size=3)\n"
    "        self.head = layers.Dense(10, dtype='float32')\n"
    "\n"
    "    def call(self, x):\n"
    "        return self.head(self.conv(x))\n"
)
CONV_LINE = 10


def _check(tmp_path, train):
    write_files(tmp_path, {"pyproject.toml": '[project]\nname = "p"\n', "models/__init__.py": "",
                           "models/net.py": MODEL,
                           "train.py": "import yaml\nfrom models.net import Net\n\n" + train})
    result = run_cli("check", "--exit-zero", "--no-cache", "--select", "MP301,MP302", ".", cwd=tmp_path)
    return reported(result.stdout), result.stdout


@pytest.mark.parametrize("train", [
    # every caller passes a value read from a config file mplint does not follow
    "cfg = yaml.safe_load(open('config.yaml'))\nmodel = Net(num_filters=cfg['num_filters'])\n",
    # by position, from a variable
    "def main(width):\n    return Net(width)\n\n\nmain(64)\n",
    # every caller passes an aligned literal
    "model = Net(num_filters=64)\nother = Net(96, depth=3)\n",
    # one leaves it out, but another passes an unread value: unknown
    "cfg = yaml.safe_load(open('config.yaml'))\nmodel = Net()\nother = Net(num_filters=cfg['n'])\n",
])
def test_a_default_every_caller_overrides_is_silent(tmp_path, train):
    assert _check(tmp_path, train)[0] == []


def test_a_default_a_caller_leaves_in_place_is_judged(tmp_path):
    found, out = _check(tmp_path, "model = Net(depth=3)\nother = Net(num_filters=64)\n")
    assert found == [("models/net.py", CONV_LINE, "MP302")]
    assert "filters=62 (default of 'num_filters')" in out


def test_a_default_left_in_place_elsewhere_is_judged_beside_local_calls(tmp_path):
    files = {"pyproject.toml": '[project]\nname = "p"\n', "models/__init__.py": "",
             "models/net.py": MODEL + "\n\nsmall = Net(num_filters=64)\n",
             "train.py": "from models.net import Net\n\nmodel = Net(depth=3)\n"}
    write_files(tmp_path, files)
    out = run_cli("check", "--exit-zero", "--no-cache", "--select", "MP301,MP302", ".", cwd=tmp_path).stdout
    assert reported(out) == [("models/net.py", CONV_LINE, "MP302")]
    assert "filters=62 (default of 'num_filters')" in out


def test_an_unaligned_literal_a_caller_passes_is_judged(tmp_path):
    found, out = _check(tmp_path, "model = Net(num_filters=100)\n")
    assert found == [("models/net.py", CONV_LINE, "MP302")]
    assert "filters=100 (passed to Net() in another module)" in out
    assert "62" not in out


def test_a_default_nothing_calls_is_still_judged(tmp_path):
    found, _ = _check(tmp_path, "print('no model here')\n")
    assert found == [("models/net.py", CONV_LINE, "MP302")]
