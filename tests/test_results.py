"""Typed results: a solver says whether it is exact and whether a time limit stopped it as fields
of its SolverOutput, its warnings become notes, and the pipeline reports each once.

Real text: the bundled slice of the KOS blog posts (data_samples/, see its README)."""

from __future__ import annotations

from pathlib import Path

import pytest

from spca_cli.corpus import load_input
from spca_cli.matrix import Gram
from spca_cli.report import to_dict
from spca_cli.solvers.registry import REGISTRY
from spca_cli.spectrum import top_eigenpairs
from spca_cli.topics import TotalBound, run_topics

KOS = Path(__file__).resolve().parent.parent / "data_samples" / "docword.kos-sample.txt.gz"


@pytest.fixture(scope="module")
def kos():
    return load_input(str(KOS))


@pytest.fixture(scope="module")
def gram(kos):
    A = Gram.from_documents(kos.S)
    return A, top_eigenpairs(A, 3, random_state=0)


def test_a_time_limited_solver_says_so_in_fields_and_notes(gram):
    A, eigen = gram
    available = {"eigen": eigen, "rank": 2, "random_state": 0, "time_limit": 1e-9}
    out = REGISTRY["tpower"].run(A, 8, available)
    assert out.time_limited is True and out.exact is None
    assert "time_limited" not in out.info and "seconds" not in out.info
    assert len(out.notes) == 1 and out.notes[0].startswith("TPower stopped at the time limit after 1 of")


def test_an_exact_solver_says_so(gram):
    A, eigen = gram
    available = {"eigen": eigen, "rank": 2, "random_state": 0}
    out = REGISTRY["spannogram"].run(A, 8, available)
    assert out.exact is True and out.time_limited is False and out.notes == []
    assert out.bounds[0][1] == "rank-2 spannogram + lambda_3" and out.value <= out.bounds[0][0]


def test_the_pipeline_reports_each_note_once_and_the_fields_in_json(kos):
    result = run_topics(kos, solver="tpower", k=8, n_components=2, time_limit=1e-9)
    stopped = [n for n in result.notes if "stopped at" in n]
    # each component's own note, and no generic "stopped at the time limit" note on top of it
    assert len(stopped) == 1 and stopped[0].startswith("TPower stopped at the time limit after")
    doc = to_dict(result)
    for component in doc["components"]:
        assert component["solver_info"]["time_limited"] is True
        assert "exact" not in component["solver_info"]  # a heuristic claims nothing


def test_a_silent_time_limit_gets_the_generic_note(kos):
    result = run_topics(kos, solver="spannogram", k=8, n_components=1, rank=3, time_limit=1e-9)
    topic = result.components[0]
    assert topic.time_limited is True and topic.exact is False
    assert result.notes == ["component 1: spannogram stopped at the time limit; the result is the "
                            "best found so far and not certified exact on A_d"]


def test_total_bound_is_typed_and_above_the_total(kos):
    result = run_topics(kos, solver="spannogram", k=8, n_components=3)
    total = result.total_bound
    assert isinstance(total, TotalBound)
    assert total.value >= result.total_explained_variance
    assert total.certified_ratio == pytest.approx(result.total_explained_variance / total.value)
    doc = to_dict(result)
    assert doc["total_upper_bound"] == total.value
    assert doc["total_bound_source"] == total.source
    for component in doc["components"]:
        assert component["solver_info"]["exact"] is True
