"""Rule documentation as pages: one Markdown page per rule (why, the fix and its
safety, bad and good examples, references), the same text SARIF carries as
``help.markdown``, and a site mkdocs builds in strict mode."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from helpers import BAD, ROOT, run_cli, write_files
from mplint.rule.catalog import load_catalog
from mplint.rule_pages import rule_markdown, write_pages


def test_each_rule_page_holds_its_whole_entry():
    for entry in load_catalog().values():
        page = rule_markdown(entry)
        assert page.startswith(f"# {entry.id}: {entry.name}\n")
        assert entry.why.strip() in page and f"Severity: **{entry.severity}**" in page
        for example in entry.examples:
            assert example.code.rstrip("\n") in page
            if example.fixed:
                assert example.fixed.rstrip("\n") in page
        assert all(f"<{reference}>" in page for reference in entry.references)
        if entry.fixable:
            assert ("Safe:" if entry.fix_safety.value == "safe" else "Unsafe:") in page


def test_sarif_help_is_the_rule_page_and_docs_url_gives_help_uri(tmp_path):
    write_files(tmp_path, {"pyproject.toml": '[tool.mplint]\ndocs-url = "https://docs.example.org/rules/{rule}/"\n',
                           "m.py": BAD})
    log = json.loads(run_cli("check", "--output-format", "sarif", ".", cwd=tmp_path).stdout)
    rules = {r["id"]: r for r in log["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["MP101"]["help"]["markdown"] == rule_markdown(load_catalog()["MP101"])
    assert rules["MP101"]["helpUri"] == "https://docs.example.org/rules/MP101/"
    bad = run_cli("check", "--config", "docs-url = 'https://x.org/{rule}/{code}'", ".", cwd=tmp_path)
    assert bad.returncode == 2 and "'docs-url' may hold only {rule} and {name}" in bad.stderr


@pytest.mark.skipif(shutil.which("mkdocs", path=str(__import__("pathlib").Path(sys.executable).parent))
                    is None and shutil.which("mkdocs") is None, reason="mkdocs is not installed (the docs extra)")
def test_the_site_builds_strictly(tmp_path):
    site = tmp_path / "site"
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    written = write_pages(tmp_path / "docs")
    assert len(written) == len(load_catalog()) + 1
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(tmp_path / "mkdocs.yml"),
                           "-d", str(site)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    page = (site / "rules" / "MP101" / "index.html").read_text(encoding="utf-8")
    assert "float16-final-softmax" in page and "Use instead" in page
    assert 'href="rules/MP101/"' in (site / "index.html").read_text(encoding="utf-8")
