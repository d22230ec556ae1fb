"""``spca spectrum --plot``: the PNG is titled with the input's file name (no folders) and its x
axis, the rank i of lambda_i, has integer ticks only. Read from the matplotlib figure the command
saves, not from pixels."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import spca_cli.cli as cli_module
from spca_cli.cli import cli, spectrum_figure

pytest.importorskip("matplotlib", reason="spca spectrum --plot needs matplotlib "
                                         "(pip install 'spca-cli[plot]')")

SAMPLE = Path(__file__).resolve().parent.parent / "data_samples" / "docword.kos-sample.txt.gz"


@pytest.mark.parametrize("top", [5, 20])  # matplotlib's own ticks: 1.5, 2.5, ... and 2.5, 7.5, ...
def test_the_plot_is_titled_by_the_file_name_with_whole_ranks(top, tmp_path, monkeypatch):
    made = []

    def keep(values, inputs):
        made.append(spectrum_figure(values, inputs))
        return made[-1]

    monkeypatch.setattr(cli_module, "spectrum_figure", keep)
    png = tmp_path / "spectrum.png"
    result = CliRunner().invoke(cli, ["spectrum", str(SAMPLE), "--top", str(top), "--plot",
                                      str(png), "-q"])
    assert result.exit_code == 0, result.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (figure,) = made
    (ax,) = figure.axes
    assert ax.get_title() == "docword.kos-sample.txt.gz"  # the command was given a full path
    assert list(ax.lines[0].get_xdata()) == list(range(1, top + 1))
    low, high = ax.get_xlim()
    ticks = [float(t) for t in ax.get_xticks() if low <= t <= high]
    assert len(ticks) >= 3 and all(t.is_integer() for t in ticks)
    assert set(ticks) <= set(range(1, top + 1))


def test_several_inputs_are_named_in_the_title():
    figure = spectrum_figure([3.0, 2.0, 1.0], ["/data/tweets/one.csv", "two.csv", "day/"])
    assert figure.axes[0].get_title() == "one.csv, two.csv, day"
