"""Library mode per module: in a packaged project whose programs set a policy, a package
module that no policy-setting path reaches is its users' (martinsbruveris/
tensorflow-image-models: the trainer's registry never imports segment_anything, whose
public SAM layers users build under their own policy).

fixtures/projects/unreached_library: vision/train/trainer.py sets mixed_float16 under
--amp and builds backbones/resnet.py; scripts/export.py sets float32 and builds
backbones/export.py; backbones/sam.py is built by no program, only by a test.
"""

import shutil

from helpers import PROJECTS, outcome, run_cli

RESNET = ("vision/backbones/resnet.py", 9, "MP504")
SAM = ("vision/backbones/sam.py", 15, "MP504")
LIBRARY = "a library's code: its users may run it under a mixed policy"


def _copy(tmp_path):
    target = tmp_path / "vision-main"
    shutil.copytree(PROJECTS / "unreached_library", target)
    return target


def test_a_module_no_policy_reaches_is_its_users(tmp_path):
    tree = _copy(tmp_path)
    result = run_cli("check", ".", cwd=tree)
    # export.py runs only under the export script's float32: that program chose its policy
    assert outcome(result) == (1, [RESNET, SAM]), result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert LIBRARY in lines[1] and "vision/train/trainer.py:14" in lines[0] and LIBRARY not in lines[0]
    # pre-commit names one file: the same answers
    assert outcome(run_cli("check", "vision/backbones/sam.py", cwd=tree)) == (1, [SAM])
    assert outcome(run_cli("check", "vision/backbones/export.py", cwd=tree)) == (0, [])


def test_a_module_a_program_reaches_is_the_programs(tmp_path):
    tree = _copy(tmp_path)
    assert outcome(run_cli("check", "vision/backbones/sam.py", cwd=tree)) == (1, [SAM])
    trainer = tree / "vision" / "train" / "trainer.py"
    trainer.write_text(trainer.read_text().replace(
        "    model = build_resnet(10)\n",
        "    model = build_resnet(10)\n    from vision.backbones.sam import SafeAttention\n    SafeAttention(8)\n"))
    # the trainer builds SafeAttention (whose base's methods run too): the module is the
    # trainer's, judged under its policy, no longer as a library's
    result = run_cli("check", "vision/backbones/sam.py", cwd=tree)
    assert outcome(result) == (1, [SAM])
    assert LIBRARY not in result.stdout and "vision/train/trainer.py:14" in result.stdout
    # and once the trainer sets float32 only, nothing of the module runs under a mixed policy
    trainer.write_text(trainer.read_text().replace('"mixed_float16"', '"float32"'))
    assert outcome(run_cli("check", "vision/backbones/sam.py", cwd=tree)) == (0, [])


def test_an_application_that_is_not_packaged_keeps_its_modules(tmp_path):
    tree = _copy(tmp_path)
    (tree / "pyproject.toml").unlink()  # a folder of scripts and their models: nobody else's users
    assert outcome(run_cli("check", ".", cwd=tree)) == (1, [RESNET])


def test_the_configuration_decides(tmp_path):
    tree = _copy(tmp_path)
    (tree / "pyproject.toml").write_text('[project]\nname = "vision"\n\n[tool.mplint]\nlibrary = false\n')
    assert outcome(run_cli("check", ".", cwd=tree)) == (1, [RESNET])
