"""The checks a run must pass against its data are stated once (spca_cli.params.check_fit):
run_topics and ``spca reproduce`` (before its first run) say the same sentence."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from spca_cli.corpus import MatrixInput
from spca_cli.errors import SpcaInputError, SpcaParameterError
from spca_cli.params import FitError, check_fit
from spca_cli.reproduce import run_config
from spca_cli.topics import run_topics

RUN = {"k": 5, "n_components": 2, "rank": 2, "deflation": "remove", "time_limit": None,
       "solver_options": {}}


@pytest.mark.parametrize("solver, change, param, message", [
    ("tpower", {"k": 30}, "k", "k must be <= the number of words; got k=30 > 20"),
    ("spannogram", {"rank": 25}, "rank", "rank must be <= the number of words; got rank=25 > 20"),
    ("tpower", {"n_components": 5}, "n_components",
     "components * k must be <= the number of words for disjoint topics; got 5 * 5 = 25 > 20"),
    # a joint solver's topics are disjoint whatever the deflation
    ("bipartite", {"n_components": 5, "deflation": "projection"}, "n_components",
     "components * k must be <= the number of words for disjoint topics; got 5 * 5 = 25 > 20"),
    ("bipartite", {"solver_options": {"samples": 10 ** 12}}, "solver_options",
     "bipartite with 1,000,000,000,000 samples would take about 9.92e+04 hours (at the ~2,800 "
     "samples/s measured on KOS); the limit without time_limit is 10,000,000: give fewer "
     "samples or a time_limit"),
])
def test_check_fit_names_the_parameter_at_fault(solver, change, param, message):
    with pytest.raises(FitError) as caught:
        check_fit(solver, 20, **{**RUN, **change})
    assert (caught.value.param, str(caught.value)) == (param, message)


def test_projection_lets_topics_share_words():
    assert check_fit("tpower", 20, **{**RUN, "n_components": 5, "deflation": "projection"}) \
        is None


def test_run_topics_and_reproduce_say_the_same(tmp_path, monkeypatch):
    data = MatrixInput(A=np.eye(300), labels=np.array([f"w{i}" for i in range(300)]),
                       path="eye.npy")
    with pytest.raises(SpcaParameterError) as direct:
        run_topics(data, solver="threshold", k=400, n_components=1)
    raw = {"title": "Zipf test", "reproduces": "nothing (a test)", "measure": "components",
           "data": {"generator": "zipf_corpus", "documents": 600, "words": 300, "topics": 3,
                    "topic_words": 6, "topic_rate": 0.5, "days": 3, "seed": 1},
           "runs": [{"solver": "threshold", "k": 400, "components": 1}]}
    monkeypatch.chdir(tmp_path)
    (tmp_path / "big.yaml").write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    with pytest.raises(SpcaInputError) as config:
        run_config("big.yaml")
    assert str(direct.value) == "k must be <= the number of words; got k=400 > 300"
    assert str(config.value) == f"big.yaml: runs[0].k: {direct.value}"
