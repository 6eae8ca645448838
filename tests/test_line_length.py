"""Fixes keep to the project's line length (ruff's or black's ``line-length``): a call
a fix makes too long is wrapped as those formatters wrap it; a call already spread over
lines keeps its layout, its closing parenthesis included."""

from __future__ import annotations

import textwrap

import pytest

from helpers import run_cli, write_files

HEAD = 'import tensorflow as tf\n\ntf.keras.mixed_precision.set_global_policy("mixed_float16")\n'


def _fixed(tmp_path, config: str, body: str, name: str = "pyproject.toml") -> str:
    write_files(tmp_path, {name: config, "m.py": HEAD + textwrap.dedent(body)})
    result = run_cli("fix", "m.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    fixed = (tmp_path / "m.py").read_text()
    again = run_cli("fix", "--diff", "m.py", cwd=tmp_path)
    assert again.stdout == "", again.stdout  # a second fix changes nothing
    return fixed[len(HEAD):]


@pytest.mark.parametrize("name, config", [
    ("pyproject.toml", "[tool.ruff]\nline-length = 80\n"),
    ("pyproject.toml", "[tool.black]\nline-length = 80\n"),
    ("ruff.toml", "line-length = 80\n"),
    ("pyproject.toml", "[tool.mplint]\nline-length = 80\n\n[tool.black]\nline-length = 120\n"),
])
def test_arguments_move_to_their_own_line_when_the_fixed_call_is_too_long(tmp_path, name, config):
    body = '''\
        def build():
            return tf.keras.Sequential([
                tf.keras.layers.Dense(10, activation="softmax", name="head_layer"),  # the head
            ])
    '''
    assert _fixed(tmp_path, config, body, name) == textwrap.dedent('''\
        def build():
            return tf.keras.Sequential([
                tf.keras.layers.Dense(
                    10, activation="softmax", name="head_layer", dtype="float32"
                ),  # the head
            ])
    ''')


def test_one_argument_a_line_when_they_do_not_fit_on_one(tmp_path):
    body = 'model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax", name="head")])\n'
    assert _fixed(tmp_path, "[tool.black]\nline-length = 40\n", body) == textwrap.dedent('''\
        model = tf.keras.Sequential([tf.keras.layers.Dense(
            10,
            activation="softmax",
            name="head",
            dtype="float32",
        )])
    ''')


def test_without_a_formatter_setting_or_within_it_the_line_is_kept(tmp_path):
    body = 'model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax", name="head")])\n'
    fixed = body.replace('name="head"', 'name="head", dtype="float32"')
    assert _fixed(tmp_path, "", body) == fixed
    assert _fixed(tmp_path, "[tool.ruff]\nline-length = 120\n", body) == fixed


def test_a_closing_parenthesis_on_its_own_line_stays_there(tmp_path):
    body = '''\
        model = tf.keras.Sequential([
            tf.keras.layers.Dense(
                10, activation="softmax"
            )
        ])
        head = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax"
        )])
    '''
    assert _fixed(tmp_path, "[tool.ruff]\nline-length = 60\n", body) == textwrap.dedent(body).replace(
        '10, activation="softmax"\n', '10, activation="softmax", dtype="float32"\n').replace(
        'Dense(10, activation="softmax"\n)', 'Dense(10, activation="softmax", dtype="float32"\n)')


def test_arguments_on_a_line_of_their_own_go_one_a_line_when_it_grows_too_long(tmp_path):
    body = '''\
        model = tf.keras.Sequential([
            tf.keras.layers.Dense(
                10, activation="softmax", name="head"
            )
        ])
    '''
    assert _fixed(tmp_path, "[tool.ruff]\nline-length = 50\n", body) == textwrap.dedent('''\
        model = tf.keras.Sequential([
            tf.keras.layers.Dense(
                10,
                activation="softmax",
                name="head",
                dtype="float32",
            )
        ])
    ''')


def test_a_bad_line_length_is_an_error_naming_the_key(tmp_path):
    write_files(tmp_path, {"pyproject.toml": "[tool.mplint]\nline-length = 0\n", "m.py": HEAD})
    result = run_cli("check", ".", cwd=tmp_path)
    assert result.returncode == 2 and "'line-length' must be a whole number" in result.stderr


def test_show_settings_names_the_line_length_fixes_keep_to(tmp_path):
    write_files(tmp_path, {"pyproject.toml": "[tool.black]\nline-length = 99\n", "m.py": HEAD})
    assert "line-length = 99\n" in run_cli("check", "--show-settings", "m.py", cwd=tmp_path).stdout
