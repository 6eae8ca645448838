"""``self.<attr>`` a base class of another module stores from its ``__init__`` parameters,
bound by the subclass's ``super().__init__(...)`` call: the optimizer a mixed precision
trainer hands its base, and the flags that decide whether an inherited helper clips."""

import shutil

from helpers import ROOT, reported, run_cli

PROJECT = ROOT / "fixtures" / "projects" / "inherited_trainers"


def _findings(folder, *args):
    result = run_cli("check", "--exit-zero", "--select", "MP208", *args, ".", cwd=folder)
    assert result.returncode == 0, result.stderr
    return reported(result.stdout)


def test_a_change_of_the_base_module_changes_the_subclass_cached_result(tmp_path):
    project = tmp_path / "inherited_trainers"
    shutil.copytree(PROJECT, project)
    cached = _findings(project)
    assert ("trainers/amp.py", 19, "MP208") in cached and ("trainers/amp.py", 80, "MP208") in cached
    assert _findings(project) == cached == _findings(project, "--no-cache")
    base = project / "trainers" / "base.py"
    text = base.read_text(encoding="utf-8")
    # the base no longer clips on its flag's default: the subclass leaving it alone is silent
    base.write_text(text.replace("self.clip_gradients = clip_gradients", "self.clip_gradients = False"),
                    encoding="utf-8")
    after_flag = _findings(project)
    assert after_flag == _findings(project, "--no-cache")
    assert ("trainers/amp.py", 80, "MP208") not in after_flag and ("trainers/amp.py", 19, "MP208") in after_flag
    # the base stores an optimizer of its own making, not the one handed in: nothing is followed
    # (Keras 2's clip before get_unscaled_gradients needs no optimizer to be known)
    base.write_text(text.replace("self.optimizer = optimizer", "self.optimizer = build(optimizer)"),
                    encoding="utf-8")
    assert _findings(project) == _findings(project, "--no-cache") == [("trainers/legacy.py", 18, "MP208")]


def test_the_value_a_subclass_hands_on_is_its_own_not_other_constructions(tmp_path):
    """One file: the base is constructed elsewhere with a plain optimizer; the subclass's
    ``super().__init__`` decides what its own instances hold."""
    source = (ROOT / "fixtures" / "loss_scaling" / "keras3_inherited_trainer.py").read_text(encoding="utf-8")
    (tmp_path / "train.py").write_text(source + "plain = BaseTrainer(model, keras.optimizers.Adam(1e-3))\n",
                                       encoding="utf-8")
    assert _findings(tmp_path, "--no-cache") == [("train.py", 16, "MP208")]
