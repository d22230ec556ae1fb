"""``spca reproduce``: config validation (exact messages), every shipped config on small
settings, the measures on a seeded Zipf corpus, the generators and the written files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from spca_cli import reproduce
from spca_cli.errors import SpcaInputError, SpcaParameterError
from spca_cli.generate import (empirical_covariance, spiked_covariance, spiked_samples,
                               zipf_corpus)
from spca_cli.reproduce import load_config, run_config
from spca_cli.solvers import JOINT_SOLVERS, SOLVERS

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
CONFIG_NAMES = sorted(p.name for p in CONFIGS.glob("*.yaml"))


# ---------------------------------------------------------------------------------- helpers


def registered():
    return set(SOLVERS) | set(JOINT_SOLVERS)


def config_solvers(raw):
    names = {run["solver"] for run in raw["runs"] if "solver" in run}
    if "solver" in raw.get("defaults", {}):
        names.add(raw["defaults"]["solver"])
    return names


def require_solvers(raw):
    """Skip, naming the solvers, only while some solver of the config is not registered yet."""
    missing = sorted(config_solvers(raw) - registered())
    if missing:
        pytest.skip(f"solver not registered yet: {', '.join(missing)}")


def shipped(name):
    """A shipped config as a dict, with its relative data path made absolute."""
    raw = yaml.safe_load((CONFIGS / name).read_text(encoding="utf-8"))
    data = raw["data"]
    if "path" in data:
        data["path"] = str((CONFIGS / data["path"]).resolve())
    return raw


def write(tmp_path, raw, name="config.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return path


def table(doc, title_start):
    for t in doc["tables"]:
        if t["title"].startswith(title_start):
            return t
    raise AssertionError(f"no table titled {title_start!r}: {[t['title'] for t in doc['tables']]}")


def run_json(path, **kwargs):
    text, files = run_config(path, fmt="json", **kwargs)
    return json.loads(text), files


def zipf_raw(measure, runs, **extra):
    raw = {"title": "Zipf test", "reproduces": "nothing (a test)", "measure": measure,
           "data": {"generator": "zipf_corpus", "documents": 600, "words": 300, "topics": 3,
                    "topic_words": 6, "topic_rate": 0.5, "days": 3, "seed": 1},
           "runs": runs}
    raw.update(extra)
    return raw


@pytest.fixture
def stub_solvers(monkeypatch):
    """Register stand-ins for solvers that are not registered yet, for validation-only tests."""

    def stub(A, k, *, eigen=None, init=None, max_iter=None, **_ignored):
        raise AssertionError("validation tests must not run solvers")

    for name in ("spannogram", "tpower", "greedy", "nonneg"):
        if name not in SOLVERS:
            monkeypatch.setitem(SOLVERS, name, stub)


# ---------------------------------------------------------------------------------- configs


@pytest.mark.parametrize("name", CONFIG_NAMES)
def test_shipped_config_header_and_schema(name, stub_solvers):
    text = (CONFIGS / name).read_text(encoding="utf-8")
    header = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        header.append(line)
    header = "\n".join(header)
    assert header.startswith("# Reproduces"), name
    assert "Substituted:" in header and "Expected running time:" in header, name
    data_path = (yaml.safe_load(text).get("data") or {}).get("path")
    if data_path is not None and not (CONFIGS / data_path).exists():
        pytest.skip(f"{CONFIGS / data_path} not present (the real corpora live in ../shared/data)")
    config = load_config(CONFIGS / name)  # relative data paths resolve against configs/
    assert config.runs and config.title


def test_shipped_configs_cover_the_brief():
    measures = {yaml.safe_load((CONFIGS / n).read_text())["measure"] for n in CONFIG_NAMES}
    assert measures == {"recovery", "components", "daily", "total_variance", "sparsity_sweep"}


# ---------------------------------------------------------------------------------- validation


VALID = {"title": "t", "reproduces": "r", "measure": "components",
         "data": {"generator": "zipf_corpus", "documents": 50, "words": 40},
         "runs": [{"solver": "threshold", "k": 3}, {"label": "b", "solver": "threshold"},
                  {"label": "c", "solver": "threshold"}]}


def bad_config(tmp_path, monkeypatch, edit, name="table1.yaml"):
    raw = json.loads(json.dumps(VALID))
    edit(raw)
    monkeypatch.chdir(tmp_path)
    write(tmp_path, raw, name)
    with pytest.raises(SpcaInputError) as info:
        load_config(name)
    return str(info.value)


@pytest.mark.parametrize("edit, message", [
    (lambda r: r["runs"][2].update(k="ten"), "runs[2].k: must be an int >= 1, got 'ten'"),
    (lambda r: r["runs"][0].update(k=0), "runs[0].k: must be an int >= 1, got 0"),
    (lambda r: r["runs"][0].update(k=True), "runs[0].k: must be an int >= 1, got True"),
    (lambda r: r["runs"][1].update(solvr="x"),
     "runs[1].solvr: unknown key; expected one of components, deflation, k, label, options, "
     "rank, seed, solver, time_limit"),
    (lambda r: r["runs"][1].update(deflation="hotelling"),
     "runs[1].deflation: must be one of joint, remove, projection, got 'hotelling'"),
    (lambda r: r["runs"][1].update(time_limit=-1), "runs[1].time_limit: must be a number > 0, "
                                                   "got -1"),
    (lambda r: r["runs"][1].update(label="threshold"),
     "runs[1].label: duplicate label 'threshold' (also runs[0]); give each run its own label"),
    (lambda r: r["runs"][0].pop("solver"), "runs[0].solver: required key is missing"),
    (lambda r: r.update(runs=[]), "runs: must be a non-empty list of runs, got a list"),
    (lambda r: r.update(runs="threshold"), "runs: must be a non-empty list of runs, got "
                                           "'threshold'"),
    (lambda r: r.pop("title"), "title: required key is missing"),
    (lambda r: r.update(colour="red"),
     "colour: unknown key; expected one of data, days, defaults, k_values, measure, output, "
     "plot, published, reproduces, runs, seed, substitution, title, trials"),
    (lambda r: r.update(measure="table"),
     "measure: must be one of recovery, components, daily, total_variance, sparsity_sweep, "
     "got 'table'"),
    (lambda r: r.update(trials=5), "trials: applies only to measure recovery, not 'components'"),
    (lambda r: r.update(defaults={"k": 2.5}), "defaults.k: must be an int >= 1, got 2.5"),
    (lambda r: r["data"].update(documents="many"),
     "data.documents: must be an int >= 1, got 'many'"),
    (lambda r: r["data"].update(samples=[50]),
     "data.samples: not a parameter of generator 'zipf_corpus'; expected one of days, "
     "documents, exponent, seed, start, topic_rate, topic_words, topics, utc_offset_minutes, "
     "words, words_per_document"),
    (lambda r: r.update(data={"path": "missing.mtx", "generator": "zipf_corpus"}),
     "data: give exactly one of data.path, data.dataset and data.generator"),
    (lambda r: r.update(data={"dataset": "kos2"}),
     "data.dataset: unknown data set 'kos2'; expected one of airline, airline-matrix, enron, "
     "kos, kos-matrix, nips, nytimes"),
    (lambda r: r.update(data={"dataset": "kos", "words": 40}),
     "data.words: is a generator parameter; data.dataset takes only ingest"),
    (lambda r: r.update(data={"dataset": "kos", "ingest": {"keep_duplicates": "false"}}),
     "data.ingest.keep_duplicates: must be true or false, got 'false'"),
    (lambda r: r.update(data={"dataset": "kos", "ingest": {"near_duplicates": 1.5}}),
     "data.ingest.near_duplicates: must be true, false or a Jaccard index in (0, 1], got 1.5"),
    (lambda r: r.update(published={"values": {"nobody": 1.0}}),
     "published.values.nobody: no run has this label"),
    (lambda r: r.update(published={"values": {"b": [0.5, "x"]}}),
     "published.values.b[1]: must be a number, got 'x'"),
    (lambda r: r.update(plot="fig.png"), "plot: applies only to measure sparsity_sweep, not "
                                         "'components'"),
    (lambda r: r["runs"][0].update(options={"rank": 3}),
     "runs[0].options.rank: is set by the run itself, not as a solver option"),
    (lambda r: r["runs"][0].update(options={"max_iter": 3}),
     "runs[0].options.max_iter: not an option of solver 'threshold' (its options: none)"),
])
def test_validation_messages(tmp_path, monkeypatch, edit, message):
    assert bad_config(tmp_path, monkeypatch, edit) == f"table1.yaml: {message}"


def test_unknown_solver_lists_the_registered_ones(tmp_path, monkeypatch):
    got = bad_config(tmp_path, monkeypatch, lambda r: r["runs"][1].update(solver="spanogram"))
    known = ", ".join(sorted(registered()))
    assert got == f"table1.yaml: runs[1].solver: must be one of {known}, got 'spanogram'"


def test_missing_data_file_names_the_key_and_the_file(tmp_path, monkeypatch):
    got = bad_config(tmp_path, monkeypatch, lambda r: r.update(data={"path": "missing.mtx"}))
    assert got == (f"table1.yaml: data.path: file not found: missing.mtx "
                   f"(looked for {(tmp_path / 'missing.mtx').resolve()})")


def test_yaml_syntax_error_names_file_and_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("broken.yaml").write_text("title: t\nruns:\n  - {solver: threshold\nmeasure: x\n")
    with pytest.raises(SpcaInputError) as info:
        load_config("broken.yaml")
    assert str(info.value).startswith("broken.yaml: line 4: invalid YAML: ")


def test_duplicate_key_names_file_and_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("dup.yaml").write_text("title: t\nruns:\n  - solver: threshold\n    k: 3\n    k: 4\n")
    with pytest.raises(SpcaInputError) as info:
        load_config("dup.yaml")
    assert str(info.value) == "dup.yaml: line 5: invalid YAML: duplicate key 'k'"


def test_an_impossible_date_names_file_and_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("feb.yaml").write_text("title: t\ndays:\n  first: 2015-02-30\n")
    with pytest.raises(SpcaInputError) as info:
        load_config("feb.yaml")
    assert str(info.value) == ("feb.yaml: line 3: invalid YAML: 2015-02-30 is not a valid date "
                               "(day is out of range for month)")


def test_config_must_be_a_mapping(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("list.yaml").write_text("- 1\n- 2\n")
    with pytest.raises(SpcaInputError, match=r"^list\.yaml: must be a YAML mapping"):
        load_config("list.yaml")
    with pytest.raises(SpcaInputError, match=r"^nothere\.yaml: file not found$"):
        load_config("nothere.yaml")


def test_relation_to_the_data_is_checked_before_running(tmp_path, monkeypatch):
    raw = zipf_raw("components", [{"solver": "threshold", "k": 100, "components": 4}])
    monkeypatch.chdir(tmp_path)
    write(tmp_path, raw, "big.yaml")
    with pytest.raises(SpcaInputError) as info:
        run_config("big.yaml")
    # the sentence run_topics says (spca_cli.params.check_fit), at the run's key
    assert str(info.value) == ("big.yaml: runs[0].components: components * k must be <= the "
                               "number of words for disjoint topics; got 4 * 100 = 400 > 300")


def test_trials_and_format_are_checked(tmp_path):
    path = write(tmp_path, zipf_raw("components", [{"solver": "threshold", "k": 3}]))
    with pytest.raises(SpcaParameterError, match="^trials applies only to measure 'recovery'"):
        run_config(path, trials=3)
    with pytest.raises(SpcaParameterError, match="format must be one of markdown, json"):
        run_config(path, fmt="csv")


# ---------------------------------------------------------------------------------- measures on
# a seeded Zipf corpus (always run: only threshold and bipartite are needed)


def test_components_measure_on_zipf(tmp_path):
    runs = [{"label": "T", "solver": "threshold"}]
    raw = zipf_raw("components", runs, defaults={"k": 6, "components": 3},
                   published={"values": {"T": [0.5, None, 0.7]}, "best_first": 10.0})
    doc, files = run_json(write(tmp_path, raw), outdir=tmp_path / "out")
    ratios = table(doc, "Cumulative performance ratio")
    assert ratios["columns"] == ["PC", "T"]
    assert [row[0] for row in ratios["rows"]] == ["PC1", "PC2", "PC3"]
    assert ratios["rows"][0][1].endswith("(paper 0.5000)")
    comps = doc["results"]["runs"]["T"]["components"]
    assert all(0 < c["cumulative_ratio"] <= 1 for c in comps)
    # the most frequent background words come first, then a planted topic shows up
    assert any(max(sum(w.startswith(f"topic{t}_") for w in c["words"]) for t in (1, 2, 3)) >= 4
               for c in comps)
    assert [f.name for f in files] == ["config.json"]
    assert json.loads(files[0].read_text()) == doc


def test_daily_measure_on_zipf_times(tmp_path):
    raw = zipf_raw("daily", [{"solver": "threshold", "k": 5, "components": 2}],
                   days={"first": "2015-02-17", "last": "2015-02-20", "utc_offset": "-08:00"})
    doc, _ = run_json(write(tmp_path, raw))
    t = table(doc, "threshold: one column per day")
    assert t["columns"] == ["", "2015-02-17", "2015-02-18", "2015-02-19", "2015-02-20"]
    counts = [int(c) for c in t["rows"][0][1:]]
    assert counts[-1] == 0 and sum(counts) == 600  # the corpus spans exactly 3 local days
    assert "2015-02-20: no documents" in doc["notes"]


def test_total_variance_measure_on_zipf(tmp_path):
    runs = [{"label": "rank-1", "solver": "threshold"},
            {"label": "joint", "solver": "bipartite", "rank": 3, "options": {"samples": 50}}]
    raw = zipf_raw("total_variance", runs, defaults={"k": 5, "components": 3},
                   published={"gain_percent": 44.57, "values": {"joint": 61.4}})
    doc, _ = run_json(write(tmp_path, raw))
    res = {r["label"]: r for r in doc["results"]["runs"]}
    assert res["rank-1"]["gain_percent"] == 0.0
    assert res["joint"]["total_explained_variance"] >= res["rank-1"]["total_explained_variance"]
    rows = table(doc, "Total explained variance")["rows"]
    assert rows[1][-1] == "+44.57%" and rows[1][-2] == "61.4"


def test_sparsity_sweep_on_zipf_writes_table_and_png(tmp_path):
    raw = zipf_raw("sparsity_sweep", [{"solver": "threshold"}], k_values=[2, 4, 6],
                   plot="sweep.png")
    text, files = run_config(write(tmp_path, raw), outdir=tmp_path / "out")
    assert "| k | x^T A x | ÷ λ1 | upper bound |" in text
    names = sorted(f.name for f in files)
    assert names == ["config.md", "sweep.png"]
    assert (tmp_path / "out" / "sweep.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list((tmp_path / "out").glob(".tmp-spca-*"))  # atomic writes left no temp files


def test_sweep_without_matplotlib_still_writes_the_table(tmp_path, monkeypatch):
    def no_matplotlib(config, doc):
        raise ImportError("No module named 'matplotlib'")

    monkeypatch.setattr(reproduce, "_plot_png", no_matplotlib)
    raw = zipf_raw("sparsity_sweep", [{"solver": "threshold"}], k_values=[3])
    text, files = run_config(write(tmp_path, raw), outdir=tmp_path / "out")
    assert "plot skipped: matplotlib is not installed" in text
    assert [f.name for f in files] == ["config.md"]


# ---------------------------------------------------------------------------------- generators


def test_spiked_covariance_matches_the_paper():
    model = spiked_covariance()
    vals = np.linalg.eigvalsh(model.covariance())[::-1]
    np.testing.assert_allclose(vals[:3], [400, 300, 1])
    np.testing.assert_allclose(vals[-1], 1)
    assert model.supports == [frozenset(range(10)), frozenset(range(10, 20))]
    X = spiked_samples(model, 4000, random_state=0)
    A = empirical_covariance(X)
    assert abs(A[0, 0] - model.covariance()[0, 0]) < 0.1 * model.covariance()[0, 0]


def test_zipf_corpus_is_seeded():
    a, b = zipf_corpus(100, 60, random_state=3), zipf_corpus(100, 60, random_state=3)
    assert (a.S != b.S).nnz == 0 and a.vocabulary == b.vocabulary
    assert np.all(np.diff(a.times) >= 0)


# ---------------------------------------------------------------------------------- the shipped
# configs on small settings (skip only while one of their solvers is not registered yet)


def test_config_2013_table1_spiked(tmp_path):
    raw = shipped("2013-table1-spiked.yaml")
    require_solvers(raw)
    doc, _ = run_json(write(tmp_path, raw), trials=4)
    t = table(doc, "Probability of recovering both supports")
    assert [row[0] for row in t["rows"]] == [r["label"] for r in raw["runs"]]
    assert len(t["columns"]) == 3 + 2 * 2
    by = {r["label"]: {s["samples"]: s for s in r["by_samples"]} for r in doc["results"]}
    assert by["TPower"][50]["probability"] == 1.0
    assert by["Rank-2 approx."][50]["probability"] == 1.0
    assert by["TPower"][50]["published"] == 1
    for row in by.values():
        for s in row.values():
            assert 0.0 <= s["probability"] <= 1.0 and s["trials"] == 4


def test_config_2013_tables2_3_airline(tmp_path, airline_mtx):
    raw = shipped("2013-tables2-3-airline.yaml")
    require_solvers(raw)
    # two PCs: the certificate of a third costs five times those of the first two, in each run
    raw["defaults"]["components"] = 2
    doc, _ = run_json(write(tmp_path, raw))
    labels = [r["label"] for r in raw["runs"]]
    ratios = table(doc, "Cumulative performance ratio")
    assert ratios["columns"] == ["PC"] + labels
    assert [row[0] for row in ratios["rows"]] == ["PC1", "PC2"]
    runs = doc["results"]["runs"]
    for label in labels:
        comps = runs[label]["components"]
        assert len(comps) == 2
        assert all(0 < c["cumulative_ratio"] <= 1 for c in comps)
        assert all(len(set(c["words"])) == 10 for c in comps)
        # no method may beat the certified bound, and none is far from the best published
        assert comps[0]["explained_variance"] <= comps[0]["upper_bound"] * (1 + 1e-9)
        assert comps[0]["explained_variance"] >= 0.95 * 3821.31
    assert table(doc, "PC2 words")["columns"] == ["#"] + labels


def test_config_2013_daily_airline(tmp_path, airline_csv):
    raw = shipped("2013-daily-airline.yaml")
    require_solvers(raw)
    raw["days"]["last"] = "2015-02-18"
    raw["runs"][0]["components"] = 2
    doc, _ = run_json(write(tmp_path, raw))
    t = table(doc, "Rank-2: one column per day")
    assert t["columns"] == ["", "2015-02-17", "2015-02-18"]
    assert t["rows"][0] == ["documents", "1408", "1344"]  # PROVENANCE's tweets per local day
    for day in ("2015-02-17", "2015-02-18"):
        comps = doc["results"]["days"][day]["topics"]["components"]
        assert all(0 < c["cumulative_ratio"] <= 1 for c in comps)


def test_config_2015_tables2_3_kos(tmp_path, kos_mtx):
    raw = shipped("2015-tables2-3-kos.yaml")
    require_solvers(raw)
    raw["defaults"]["components"] = 4
    for run in raw["runs"]:
        if run["solver"] == "bipartite":
            run["options"] = {"samples": 200}
    doc, _ = run_json(write(tmp_path, raw))
    res = {r["label"]: r for r in doc["results"]["runs"]}
    total = {label: r["total_explained_variance"] for label, r in res.items()}
    assert total["SPCABiPart"] >= max(total["TPower"], total["SpanSPCA"])
    assert res["SPCABiPart"]["gain_percent"] >= 0.0
    assert max(res["TPower"]["gain_percent"], res["SpanSPCA"]["gain_percent"]) == 0.0
    words = table(doc, "SPCABiPart topics")
    assert words["columns"] == ["#"] + [f"Topic {i}" for i in range(1, 5)]
    assert len(words["rows"]) == 10


def test_config_2014_fig_nonneg(tmp_path, kos_mtx):
    raw = shipped("2014-fig-nonneg.yaml")
    require_solvers(raw)
    raw["k_values"] = [2, 6]
    doc, files = run_json(write(tmp_path, raw), outdir=tmp_path / "out")
    (label,) = doc["results"]["curves"]
    points = doc["results"]["curves"][label]
    assert [p["k"] for p in points] == [2, 6]
    for p in points:
        assert p["nonnegative"]
        assert 0 < p["variance_ratio"] <= p["upper_bound_ratio"] * (1 + 1e-9)
        assert 0 < p["certified_ratio"] <= 1
    assert sorted(f.name for f in files) == ["2014-fig-nonneg.png", "config.json"]
