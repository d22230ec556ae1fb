"""``spca reproduce`` from the command line: a quick run of a shipped config, and a bad one."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from spca_cli.cli import cli

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def test_spiked_table_through_the_cli(tmp_path):
    result = CliRunner().invoke(cli, ["reproduce", str(CONFIGS / "2013-table1-spiked.yaml"),
                                      "--trials", "3", "-o", str(tmp_path), "--quiet"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    table = result.stdout
    assert "| PCA+thresh." in table or "PCA+thresh" in table
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written and all(not name.startswith(".") for name in written)
    assert (tmp_path / written[0]).read_text(encoding="utf-8").strip() == table.strip()


def test_json_format_parses(tmp_path):
    result = CliRunner().invoke(cli, ["reproduce", str(CONFIGS / "2013-table1-spiked.yaml"),
                                      "--trials", "2", "--format", "json", "--quiet"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["tables"] and doc["published"]


def test_a_bad_config_is_one_line_naming_the_key(tmp_path):
    bad = tmp_path / "table1.yaml"
    text = (CONFIGS / "2013-table1-spiked.yaml").read_text(encoding="utf-8")
    bad.write_text(text.replace("k: 10", "k: ten", 1), encoding="utf-8")
    result = CliRunner().invoke(cli, ["reproduce", str(bad), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1
    line = result.output.strip()
    assert len(line.splitlines()) == 1
    assert line.startswith(f"Error: {bad.name}: ") or line.startswith(f"Error: {bad}: ")
    assert "k: must be an int >= 1, got 'ten'" in line
    assert not (tmp_path / "out").exists()


def _rows_without_seconds(lines):
    """Table rows of the markdown, with the (machine-dependent) seconds column dropped."""
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in lines if line.startswith("| ")]
    col = rows[0].index("seconds")
    return [row[:col] + row[col + 1:] for row in rows]


def test_readme_table_is_the_tools_output(kos_mtx):
    """The README's reproduced table was printed by the tool, not typed: regenerate and compare."""
    readme = (CONFIGS.parent / "README.md").read_text(encoding="utf-8").splitlines()
    start = readme.index("**Total explained variance of disjoint components (x^T A x on the "
                         "original A)**")
    ours = _rows_without_seconds(readme[start + 2:start + 8])
    result = CliRunner().invoke(cli, ["reproduce", str(CONFIGS / "2015-tables2-3-kos.yaml"),
                                      "--quiet"], catch_exceptions=False)
    lines = result.stdout.splitlines()
    begin = lines.index(readme[start])
    assert _rows_without_seconds(lines[begin + 2:begin + 8]) == ours
