"""Registry objects filled by decorators (mplint.run.registries): ``@BACKBONES.register``
classes are reached by whatever looks the registry up (``BACKBONES[name]()``,
``build_from_cfg(cfg, NECKS)``), and by nothing else.

fixtures/projects/registries: train.py sets mixed_float16, then builds a backbone and a
neck by a name from its arguments; zoo/extra_heads.py registers a head in a registry
nothing looks up.
"""

import shutil

from helpers import PROJECTS, outcome, run_cli

BACKBONE = ("zoo/backbones.py", 9, "MP504")
NECK = ("zoo/backbones.py", 31, "MP504")


def _copy(tmp_path):
    target = tmp_path / "registries"
    shutil.copytree(PROJECTS / "registries", target)
    return target


def _registry_findings(project, *paths):
    found = outcome(run_cli("check", *(paths or (".",)), cwd=project))[1]
    return [f for f in found if f[0] in ("zoo/backbones.py", "zoo/extra_heads.py")]


def test_a_looked_up_registry_reaches_its_entries_and_only_those(tmp_path):
    project = _copy(tmp_path)
    assert _registry_findings(project) == [BACKBONE, NECK]
    # pre-commit names one file: the same answer, and none for the registry never looked up
    assert _registry_findings(project, "zoo/backbones.py") == [BACKBONE, NECK]
    assert _registry_findings(project, "zoo/extra_heads.py") == []


def test_a_lookup_taken_out_changes_the_next_cached_run(tmp_path):
    project = _copy(tmp_path)
    assert _registry_findings(project, "zoo/backbones.py") == [BACKBONE, NECK]
    train = project / "train.py"
    text = train.read_text()
    train.write_text(text.replace("    backbone = build_backbone(args.backbone)\n", "    backbone = None\n")
                     .replace('    neck = build_from_cfg({"type": args.neck}, NECKS)\n', "    neck = None\n"))
    # (train.py still imports zoo.backbones, whose decorators register every class)
    assert _registry_findings(project, "zoo/backbones.py") == []
    train.write_text(text)
    assert _registry_findings(project, "zoo/backbones.py") == [BACKBONE, NECK]


def test_a_one_file_run_follows_the_lookup_into_the_registry_module(tmp_path):
    # train.py reaches the backbones only through builder.py's BACKBONES[name](), a module
    # that imports neither train.py nor backbones.py: naming backbones.py alone must still
    # summarise it. With the neck no longer built, only the backbone's layer runs under
    # the policy: a class is governed where a program builds it, not where it is defined.
    project = _copy(tmp_path)
    train = project / "train.py"
    train.write_text(train.read_text().replace('    neck = build_from_cfg({"type": args.neck}, NECKS)\n', "    neck = None\n"))
    assert _registry_findings(project, "zoo/backbones.py") == [BACKBONE]
    assert _registry_findings(project) == [BACKBONE]
