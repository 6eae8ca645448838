"""Discovery: the same files whatever folder mplint is started from."""

from helpers import outcome, run_cli

BAD = ('import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy("mixed_float16")\n'
       'model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])\n')


def test_a_gitignore_far_above_a_named_tree_does_not_hide_it(tmp_path):
    (tmp_path / "top").mkdir()
    (tmp_path / "top" / ".gitignore").write_text("*.py\n")  # e.g. ~/.pyenv/.gitignore
    project = tmp_path / "top" / "mid" / "proj"
    project.mkdir(parents=True)
    (project / "a.py").write_text(BAD)
    (tmp_path / "elsewhere").mkdir()
    inside = run_cli("check", ".", cwd=project)
    outside = run_cli("check", "../top/mid/proj", cwd=tmp_path / "elsewhere")
    assert outcome(inside) == (1, [("a.py", 3, "MP101")])
    assert outcome(outside) == (1, [("../top/mid/proj/a.py", 3, "MP101")])


def test_a_gitignore_inside_the_named_tree_still_applies(tmp_path):
    project = tmp_path / "proj"
    (project / "vendored").mkdir(parents=True)
    (project / "vendored" / "bad.py").write_text(BAD)
    (project / ".gitignore").write_text("vendored/\n")
    (tmp_path / "elsewhere").mkdir()
    assert outcome(run_cli("check", "../proj", cwd=tmp_path / "elsewhere")) == (0, [])
    assert outcome(run_cli("check", ".", cwd=project)) == (0, [])
