"""Reliability, mechanisms 3 and 4: parameters are checked where they enter (click types, the
API's own checks, the reproduce schema), and work that cannot finish is refused up front with
its estimate. Corpora: the tests' tiny tweets and the bundled real KOS sample."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest


from _cli import assert_error, spca
from spca_cli.corpus import Corpus, load_input, save_corpus
from spca_cli.errors import SpcaParameterError
from spca_cli.generate import zipf_corpus
from spca_cli.topics import run_topics

REPO = Path(__file__).resolve().parent.parent
TINY = REPO / "tests" / "data" / "tiny.csv"
KOS_SAMPLE = REPO / "data_samples" / "docword.kos-sample.txt.gz"




@pytest.fixture(scope="module")
def kos():
    return load_input(str(KOS_SAMPLE))


@pytest.mark.parametrize("seed", ["-1", "4294967296"])
def test_seed_outside_numpys_range_is_a_usage_error(seed):
    result = spca("topics", TINY, "--seed", seed)
    assert result.exit_code == 2
    assert (f"Error: Invalid value for '--seed': {seed} is not in the range "
            "0<=x<=4294967295.") in result.output


def _float_options():
    """(command, option) of every float option of the CLI."""
    import click

    from spca_cli.cli import cli

    return [(name, param.opts[0]) for name, command in sorted(cli.commands.items())
            for param in command.params
            if isinstance(param.type, click.types.FloatParamType)]


def test_every_float_option_is_checked():
    found = set(_float_options())
    assert {("topics", "--time-limit"), ("topics", "--budget"), ("daily", "--time-limit"),
            ("generate", "--topic-rate")} <= found


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e400"])
@pytest.mark.parametrize("command, option", _float_options())
def test_float_options_refuse_inf_and_nan_naming_the_option(command, option, value, tmp_path,
                                                            monkeypatch):
    monkeypatch.chdir(tmp_path)
    needs = {"topics": [TINY], "daily": [TINY, "--out", "never-written"], "info": [TINY],
             "spectrum": [TINY], "ingest": [TINY, "-o", "never-written.npz"],
             "generate": ["--documents", "2", "--words", "4", "-o", "never-written.jsonl"]}
    result = spca(command, *needs[command], option, value)
    if value.startswith("-") and option == "--near-duplicates":
        # its value may be left out, so click reads "-inf" as options of their own
        assert result.exit_code == 2 and "Error: No such option '-i'." in result.output
        return
    assert result.exit_code == 2
    assert result.output.endswith(f"Error: Invalid value for '{option}': {value} is not a "
                                  "finite number.\n")
    assert list(tmp_path.iterdir()) == []


def test_a_tiny_epsilon_is_refused_with_its_estimate(tmp_path):
    result = spca("topics", KOS_SAMPLE, "--solver", "nonneg", "--epsilon", "1e-300", "-d", "3",
                  "-k", "5", "-c", "1")
    assert result.exit_code == 1
    assert result.output.startswith("Error: nonneg: --epsilon 1e-300 needs 1.")
    assert "epsilon-net samples at rank 3, which needs about" in result.output
    result = spca("topics", KOS_SAMPLE, "--solver", "nonneg", "--epsilon", "1e-6", "-d", "3",
                  "-k", "5", "-c", "1")
    assert_error(result, "nonneg: --epsilon 1e-06 needs 17,680,283 epsilon-net samples at rank "
                         "3, more than the 10,000,000 allowed without --time-limit (each is a "
                         "pass over the 6,906 words); give a larger --epsilon, fewer --samples "
                         "or a --time-limit")


def test_bipartite_samples_beyond_the_budget_need_a_time_limit():
    assert_error(spca("topics", KOS_SAMPLE, "--solver", "bipartite", "--samples",
                      "1000000000000", "-k", "5", "-c", "2"),
                 "bipartite with 1,000,000,000,000 samples would take about 9.92e+04 hours (at "
                 "the ~2,800 samples/s measured on KOS); the limit without --time-limit is "
                 "10,000,000: give fewer --samples or a --time-limit")


def test_top_and_eigenvalues_beyond_the_words_are_clamped(tmp_path):
    # more than 1,500 words, where these commands use ARPACK, which cannot give n pairs
    made = zipf_corpus(600, 1600, topics=2, random_state=0)  # generated: only for its size
    path = tmp_path / "z.npz"
    save_corpus(Corpus(S=made.S, vocabulary=np.asarray(made.vocabulary, dtype=str),
                       kind="text", path="zipf"), path)
    words = load_input(str(path)).n_words
    result = spca("spectrum", path, "--top", "5000", "--format", "json")
    assert result.exit_code == 0
    assert result.stderr == (f"Note: --top 5,000 is more than the {words:,} words; showing all "
                             f"{words:,} eigenvalues\n")
    values = json.loads(result.stdout)["eigenvalues"]
    assert len(values) == words and values == sorted(values, reverse=True)
    info = spca("info", path, "--eigenvalues", "99999", "--format", "json")
    assert info.exit_code == 0 and len(json.loads(info.output)["eigenvalues"]) == words


def test_daily_dates_at_the_edge_of_the_calendar(tmp_path):
    result = spca("daily", TINY, "--out", tmp_path / "r", "--date", "9999-12-31")
    assert_error(result, "--date 9999-12-31 is out of range: its day must lie between "
                         "0001-01-02 and 9999-12-30")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("kwargs, message", [
    ({"random_state": -1}, "random_state must be None, an int in [0, 4294967295] or a "
                           "numpy.random.RandomState, got -1"),
    ({"random_state": "seven"}, "random_state must be None, an int in [0, 4294967295] or a "
                                "numpy.random.RandomState, got 'seven'"),
    ({"eigensolver": "fast"}, "eigensolver must be one of auto, dense, krylov, arpack, got "
                              "'fast'"),
    ({"solver": "spannogram", "solver_options": {"sample": 3}},
     "solver_options: 'sample': not an option of solver 'spannogram' (its options: eliminate, "
     "max_candidates, nonnegative)"),
    ({"solver_options": {"sample": 3}}, "solver_options: 'sample': not an option of solver "
                                        "'auto' (its options: budget)"),
    ({"solver": "tpower", "solver_options": {"max_iter": "ten"}},
     "solver_options: 'max_iter': must be an int >= 1, got 'ten'"),
    ({"solver": "tpower", "solver_options": {"rank": 3}},
     "solver_options: 'rank': is set by the run itself, not as a solver option"),
    ({"time_limit": float("nan")}, "time_limit must be None or a number of seconds > 0, got nan"),
])
def test_the_python_api_names_the_bad_parameter(kos, kwargs, message):
    with pytest.raises(SpcaParameterError) as caught:
        run_topics(kos, k=3, n_components=1, **kwargs)
    assert str(caught.value) == message


def test_the_api_accepts_a_randomstate(kos):
    result = run_topics(kos, k=3, n_components=1, random_state=np.random.RandomState(0))
    assert len(result.components[0].words) == 3


# ---------------------------------------------------------------------- reproduce configs
def write_config(tmp_path, body):
    (tmp_path / "tiny.csv").write_bytes(TINY.read_bytes())
    path = tmp_path / "c.yaml"
    path.write_text("title: t\nreproduces: r\n" + body)
    return path


@pytest.mark.parametrize("ingest, message", [
    ("{min_count: abc}", "data.ingest.min_count: must be an int >= 1, got 'abc'"),
    ("{contains: 5}", "data.ingest.contains: must be a list of words, got 5"),
    ("{stopwords: {a: 1}}", "data.ingest.stopwords: must be english, none or a file name, got "
                            "a mapping"),
    ("{min_cnt: 2}", "data.ingest.min_cnt: unknown ingest option; expected one of contains, "
                     "format, keep_duplicates, labels, lang, min_count, min_length, "
                     "near_duplicates, ngrams, since, stopwords, text_column, time_column, "
                     "titles, until, vocab, weighting"),
    ("{lang: en}", "data.ingest.lang: must be a list of language codes, got 'en'"),
])
def test_reproduce_ingest_values_of_the_wrong_type(tmp_path, ingest, message):
    config = write_config(tmp_path, f"measure: components\ndata: {{path: tiny.csv, ingest: "
                                    f"{ingest}}}\nruns:\n  - {{solver: threshold, k: 1}}\n")
    assert_error(spca("reproduce", config), f"{config}: {message}")


def test_reproduce_checks_every_run_before_the_first(tmp_path):
    runs = "".join(f"  - {{solver: threshold, k: 2, components: 2, label: r{i}}}\n"
                   for i in range(4))
    config = write_config(
        tmp_path, "measure: recovery\ndata: {generator: spiked_covariance, n: 50, samples: [5]}\n"
                  "trials: 2\nruns:\n" + runs +
                  "  - {solver: bipartite, k: 2, components: 2, options: {samples: 1000000000000}}\n")
    # a config names the run's keys (time_limit, options.samples), not the CLI's flags
    assert_error(spca("reproduce", config),
                 f"{config}: runs[4].options: bipartite with 1,000,000,000,000 samples would "
                 "take about 9.92e+04 hours (at the ~2,800 samples/s measured on KOS); the "
                 "limit without time_limit is 10,000,000: give fewer samples or a "
                 "time_limit")
    config.write_text(config.read_text().replace("samples: 1000000000000", "refine: -1"))
    assert_error(spca("reproduce", config),
                 f"{config}: runs[4].options.refine: must be an int >= 0, got -1")
    config.write_text(config.read_text().replace("{refine: -1}", "{}").replace(
        "trials: 2", "seed: 4294967296"))
    assert_error(spca("reproduce", config),
                 f"{config}: seed: must be an int in [0, 4294967295], got 4294967296")


@pytest.mark.parametrize("data, extra, message", [
    ("{generator: spiked_covariance, n: 10000000, samples: [5]}", "",
     "data.n: n = 10,000,000 with 5 samples needs about 2.4 PB of memory, more than this "
     "machine's"),
    ("{generator: spiked_covariance, n: 50, samples: [5], sparsity: 30}", "",
     "data.sparsity: spikes * sparsity must be <= n; got 2 * 30 > 50"),
    ("{generator: spiked_covariance, n: 50, samples: [5, 50]}", "trials: 1000000000000\n",
     "trials: 1,000,000,000,000 trials x 2 sample sizes x 1 runs make 2,000,000,000,000 solver "
     "runs, more than the 200,000 a config may make"),
])
def test_reproduce_recovery_sizes_are_checked_first(tmp_path, data, extra, message):
    config = write_config(tmp_path, f"measure: recovery\ndata: {data}\n{extra}"
                                    "runs:\n  - {solver: threshold, k: 10, components: 2}\n")
    result = spca("reproduce", config)
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {config}: {message}")


def test_reproduce_trials_override_is_checked_too(tmp_path):
    config = write_config(tmp_path, "measure: recovery\ndata: {generator: spiked_covariance, "
                                    "n: 50, samples: [5]}\nruns:\n  - {solver: threshold, k: 5, "
                                    "components: 2}\n")
    assert_error(spca("reproduce", config, "--trials", "1000000000000"),
                 "--trials 1000000000000: 1,000,000,000,000 trials x 1 sample sizes x 1 runs "
                 "make 1,000,000,000,000 solver runs, more than the 200,000 a config may make")


def test_reproduce_generator_and_days_limits(tmp_path):
    config = write_config(tmp_path, "measure: components\ndata: {generator: zipf_corpus, "
                                    "documents: 1000000000000, words: 30, topics: 2}\n"
                                    "runs:\n  - {solver: threshold, k: 3}\n")
    result = spca("reproduce", config)
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {config}: data.documents: 1,000,000,000,000 "
                                    "documents needs about 536.0 TB of memory")
    config = write_config(tmp_path, "measure: components\ndata: {generator: zipf_corpus, "
                                    "words: 30}\nruns:\n  - {solver: threshold, k: 3}\n")
    assert_error(spca("reproduce", config), f"{config}: data.topics: topics * topic_words must "
                                            "be < words; got 5 * 10 >= 30")
    config = write_config(tmp_path, "measure: daily\ndata: {path: tiny.csv}\n"
                                    "days: {first: 0001-01-01, last: 9999-12-31}\n"
                                    "runs:\n  - {solver: threshold, k: 1}\n")
    assert_error(spca("reproduce", config),
                 f"{config}: days.last: 0001-01-01 .. 9999-12-31 is 3,652,059 days, more than "
                 "the 3,660 a config may cover")
