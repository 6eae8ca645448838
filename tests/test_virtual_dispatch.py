"""Virtual dispatch across modules: a model class inheriting ``call`` from a base of another
module is judged through the methods it overrides, and a cached run follows an edit of
either module (the subclass's result is keyed by the base it reads, and the base's answer
is asked again for the subclass's new overrides)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import List, Tuple

from helpers import ROOT, reported, run_cli

PROJECT = ROOT / "fixtures" / "projects" / "virtual_heads"


def _findings(project: Path, *args: str) -> List[Tuple[str, int, str]]:
    result = run_cli("check", "--exit-zero", *args, cwd=project)
    assert result.returncode == 0, result.stderr
    return reported(result.stdout)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_an_edit_of_the_subclass_or_the_base_changes_the_next_cached_run(tmp_path):
    project = tmp_path / "virtual_heads"
    shutil.copytree(PROJECT, project)
    variants, base = project / "taggers" / "variants.py", project / "taggers" / "base.py"
    first = _findings(project, ".")
    assert ("taggers/variants.py", 11, "MP102") in first and ("taggers/variants.py", 33, "MP102") in first
    # the subclass keeps float32 in its override: its output is float32
    _edit(variants, 'name="tags")', 'name="tags", dtype="float32")')
    after_subclass = _findings(project, ".")
    assert ("taggers/variants.py", 11, "MP102") not in after_subclass
    assert after_subclass == _findings(project, "--no-cache", ".")
    # a kept subclass starts overriding the head the base's call returns
    _edit(variants, '    def summary_name(self):\n        return "kept"\n',
          '    def make_head(self, n_tags):\n        return layers.Dense(n_tags, activation="sigmoid")\n')
    overriding = _findings(project, ".")
    assert ("taggers/variants.py", 23, "MP102") in overriding
    assert overriding == _findings(project, "--no-cache", ".")
    # the base casts what its call returns: no subclass's head is an output in float16 any more
    _edit(base, "        return self.head(self.body(x))\n",
          "        return tf.cast(self.head(self.body(x)), tf.float32)\n")
    _edit(base, "        return self.project(self.tower(x), 1)\n",
          "        return tf.cast(self.project(self.tower(x), 1), tf.float32)\n")
    cast = _findings(project, ".")
    # (only SoftmaxStackTagger's head is left: its base, StackTagger, is not edited)
    assert [f for f in cast if f[0] == "taggers/variants.py"] == [("taggers/variants.py", 82, "MP101")]
    assert cast == _findings(project, "--no-cache", ".")


def test_a_named_subclass_module_is_judged_through_the_base_as_in_the_whole_tree(tmp_path):
    project = tmp_path / "virtual_heads"
    shutil.copytree(PROJECT, project)
    whole = [f for f in _findings(project, "--no-cache", ".") if f[0] == "taggers/variants.py"]
    assert whole and _findings(project, "--no-cache", "taggers/variants.py") == whole
