"""Each file is checked with the closest configuration above it, whatever folder the
run starts in (ruff's hierarchical configuration), and ``extend`` inherits one."""

from __future__ import annotations

import textwrap
from pathlib import Path

from helpers import BAD, reported, run_cli, write_files

#: a model whose policy is set by the repository's training script, in another sub-project
MODEL = textwrap.dedent('''\
    import tensorflow as tf


    def build_model():
        return tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])
''')
TRAIN = textwrap.dedent('''\
    import tensorflow as tf

    from pkg_b.model import build_model

    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    model = build_model()
    model.compile(loss="categorical_crossentropy")
''')


def _monorepo(tmp_path: Path, **extra: str) -> Path:
    """A repository whose root ignores MP303, with two sub-projects: pkg_a turns MP101
    off (extending the root), pkg_b has a pyproject.toml without [tool.mplint]."""
    files = {
        ".git/HEAD": "ref: refs/heads/main\n",
        "pyproject.toml": '[tool.mplint]\nignore = ["MP303"]\n',
        "pkg_a/pyproject.toml": '[project]\nname = "a"\n\n[tool.mplint]\nextend = "../pyproject.toml"\n'
                                'ignore = ["MP101"]\n',
        "pkg_a/m.py": BAD,
        "pkg_b/pyproject.toml": '[project]\nname = "b"\n',
        "pkg_b/m.py": BAD,
    }
    files.update(extra)
    return write_files(tmp_path / "repo", files)


def test_a_sub_project_keeps_its_configuration_when_run_from_the_root(tmp_path):
    repo = _monorepo(tmp_path)
    from_root = run_cli("check", ".", cwd=repo)
    assert reported(from_root.stdout) == [("pkg_b/m.py", 4, "MP101")], from_root.stdout
    # the same from the sub-project, with files named (pre-commit), and through stdin (editors)
    assert reported(run_cli("check", ".", cwd=repo / "pkg_a").stdout) == []
    named = run_cli("check", "--force-exclude", "pkg_a/m.py", "pkg_b/m.py", cwd=repo)
    assert reported(named.stdout) == [("pkg_b/m.py", 4, "MP101")]
    stdin = run_cli("check", "-", "--stdin-filename", "pkg_a/m.py", cwd=repo, input=BAD)
    assert (stdin.returncode, reported(stdin.stdout)) == (0, [])


def test_show_settings_and_check_give_a_file_the_same_configuration(tmp_path):
    repo = _monorepo(tmp_path)
    shown = run_cli("check", "--show-settings", "pkg_a/m.py", cwd=repo).stdout
    assert f'Settings path: "{repo / "pkg_a" / "pyproject.toml"}"' in shown
    assert f'Extends: "{(repo / "pyproject.toml").resolve()}"' in shown
    enabled = shown.split("rules.enabled = [")[1].split("]")[0]
    assert "MP101 (" not in enabled and "MP303 (" not in enabled and "MP102 (" in enabled
    shown_b = run_cli("check", "--show-settings", "pkg_b/m.py", cwd=repo).stdout
    assert f'Settings path: "{repo / "pyproject.toml"}"' in shown_b


def test_fixing_from_the_root_leaves_a_sub_project_s_ignored_rule_alone(tmp_path):
    repo = _monorepo(tmp_path)
    result = run_cli("fix", ".", cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (repo / "pkg_a" / "m.py").read_text() == BAD
    assert 'dtype="float32"' in (repo / "pkg_b" / "m.py").read_text()


def test_extend_inherits_and_a_sub_project_s_select_replaces(tmp_path):
    repo = _monorepo(tmp_path, **{
        "pkg_c/mplint.toml": 'extend = "../pyproject.toml"\nselect = ["MP3"]\n',
        "pkg_c/m.py": BAD,
    })
    shown = run_cli("check", "--show-settings", "pkg_c/m.py", cwd=repo).stdout
    enabled = shown.split("rules.enabled = [")[1].split("]")[0]
    # select replaces the root's selection; the root's ignore of MP303 was in the replaced layer
    assert "MP301 (" in enabled and "MP101 (" not in enabled


def test_a_folder_s_dotted_file_wins_over_its_pyproject(tmp_path):
    repo = _monorepo(tmp_path, **{"pkg_b/.mplint.toml": 'ignore = ["MP1"]\n'})
    assert reported(run_cli("check", ".", cwd=repo).stdout) == []


def test_a_sub_project_s_exclude_holds_from_the_root(tmp_path):
    repo = _monorepo(tmp_path, **{
        "pkg_b/pyproject.toml": '[tool.mplint]\nextend-exclude = ["generated/"]\n',
        "pkg_b/generated/m.py": BAD,
    })
    files = run_cli("check", "--show-files", ".", cwd=repo).stdout.split()
    assert "pkg_b/generated/m.py" not in files and "pkg_b/m.py" in files
    # a file named on the command line is checked, unless force-exclude (pre-commit)
    assert reported(run_cli("check", "pkg_b/generated/m.py", cwd=repo).stdout) == [
        ("pkg_b/generated/m.py", 4, "MP101")]
    assert reported(run_cli("check", "--force-exclude", "pkg_b/generated/m.py", cwd=repo).stdout) == []


def test_force_exclude_in_a_configuration(tmp_path):
    repo = _monorepo(tmp_path, **{"pkg_b/pyproject.toml": '[tool.mplint]\nforce-exclude = true\n'
                                                          'extend-exclude = ["m.py"]\n'})
    assert reported(run_cli("check", "pkg_b/m.py", cwd=repo).stdout) == []
    result = run_cli("check", "pkg_b/m.py", "--config", "force-exclude = false", cwd=repo)
    assert reported(result.stdout) == [("pkg_b/m.py", 4, "MP101")]


def test_per_file_ignores_are_read_from_the_sub_project_s_folder(tmp_path):
    repo = _monorepo(tmp_path, **{"pkg_b/pyproject.toml": '[tool.mplint]\nper-file-ignores = {"m.py" = ["MP101"]}\n',
                                  "pkg_b/sub/m.py": BAD})
    # "m.py" matches at any depth below pkg_b, as in a .gitignore in that folder
    assert reported(run_cli("check", ".", cwd=repo).stdout) == []
    assert reported(run_cli("check", ".", cwd=repo / "pkg_b").stdout) == []


def test_cross_file_facts_span_the_sub_projects_of_a_repository(tmp_path):
    repo = _monorepo(tmp_path, **{"pkg_b/model.py": MODEL, "train.py": TRAIN, "pkg_b/m.py": "x = 1\n"})
    result = run_cli("check", ".", cwd=repo)
    assert reported(result.stdout) == [("pkg_b/model.py", 5, "MP101")], result.stdout
    assert "the mixed policy is set in train.py:5" in result.stdout
    # the same from the sub-project, and for the one file a pre-commit run names
    from_sub = run_cli("check", ".", cwd=repo / "pkg_b")
    assert reported(from_sub.stdout) == [("model.py", 5, "MP101")], from_sub.stdout
    assert "train.py:5, reached through train.py top level -> build_model()" in from_sub.stdout
    named = run_cli("check", "--force-exclude", "pkg_b/model.py", cwd=repo)
    assert reported(named.stdout) == [("pkg_b/model.py", 5, "MP101")], named.stdout


def test_config_names_one_file_for_every_file(tmp_path):
    repo = _monorepo(tmp_path, **{"shared.toml": 'select = ["MP3"]\n'})
    result = run_cli("check", "--config", "shared.toml", ".", cwd=repo)
    assert reported(result.stdout) == []
    result = run_cli("check", "--config", "pyproject.toml", ".", cwd=repo)  # the root's: MP101 everywhere
    assert reported(result.stdout) == [("pkg_a/m.py", 4, "MP101"), ("pkg_b/m.py", 4, "MP101")]


def test_broken_extend_is_one_line_naming_the_file(tmp_path):
    repo = _monorepo(tmp_path, **{"pkg_b/mplint.toml": 'extend = "missing.toml"\n'})
    result = run_cli("check", ".", cwd=repo)
    assert result.returncode == 2
    assert result.stderr.strip() == (f"mplint: error: {repo / 'pkg_b' / 'mplint.toml'}: 'extend' names "
                                     "'missing.toml', which is not a file")
    write_files(repo, {"pkg_b/mplint.toml": 'extend = "other.toml"\n', "pkg_b/other.toml": 'extend = "mplint.toml"\n'})
    result = run_cli("check", ".", cwd=repo)
    assert result.returncode == 2 and "'extend' makes a cycle" in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_the_language_server_gives_each_file_its_closest_configuration(tmp_path):
    from mplint.server.projects import Projects

    repo = _monorepo(tmp_path)
    projects = Projects(use_cache=False)
    found = {name: [(f.rule, f.line) for f in projects.check(str(repo / name), BAD.encode()).findings]
             for name in ("pkg_a/m.py", "pkg_b/m.py")}
    assert found == {"pkg_a/m.py": [], "pkg_b/m.py": [("MP101", 4)]}


def test_a_warm_run_of_a_monorepo_with_many_configurations_is_answered_by_the_cache(tmp_path, monkeypatch):
    import mplint.core.linter

    files = {f"pkg_{n}/mplint.toml": f'extend = "../pyproject.toml"\nalignment = {n + 1}\n' for n in range(12)}
    files.update({f"pkg_{n}/m.py": BAD for n in range(12)})
    repo = _monorepo(tmp_path, **files)
    first = run_cli("check", "--jobs", "1", ".", cwd=repo)
    parsed = []
    real = mplint.core.linter.parse
    monkeypatch.setattr(mplint.core.linter, "parse", lambda source: parsed.append(source.path) or real(source))
    second = run_cli("check", "--jobs", "1", ".", cwd=repo)
    assert second.stdout == first.stdout and len(reported(second.stdout)) == 13
    assert parsed == []  # 14 configurations, one result file: nothing checked again
