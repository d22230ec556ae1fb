"""SparseTopics, the scikit-learn style estimator: parameters, fitting on texts and on a
document-word matrix, and the same topics as ``spca topics`` on the same input."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
import sklearn
from click.testing import CliRunner
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import Pipeline
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import check_estimator, parametrize_with_checks

import spca_cli
from spca_cli.cli import cli
from spca_cli.corpus import load_input
from spca_cli.errors import SpcaInputError, SpcaParameterError
from spca_cli.params import FitError

ROOT = Path(__file__).resolve().parent.parent
TEXTS = ROOT / "data_samples" / "titles.kos-sample.txt"  # a line of words per KOS post
KOS = ROOT / "data_samples" / "docword.kos-sample.txt.gz"


def lines():
    return TEXTS.read_text(encoding="utf-8").splitlines()


def test_public_api_and_shared_defaults():
    model = spca_cli.SparseTopics()
    params = model.get_params()
    assert params["k"] == 10 and params["n_components"] == 5 and params["solver"] == "auto"
    import inspect
    run = inspect.signature(spca_cli.run_topics).parameters
    assert run["n_components"].default == 5 and run["k"].default == 10


def test_clone_and_set_params():
    model = spca_cli.SparseTopics(k=4, n_components=2, solver="tpower",
                                  solver_options={"max_iter": 50})
    copy = clone(model)
    assert copy is not model and copy.get_params() == model.get_params()
    copy.set_params(k=3, solver="greedy", solver_options=None)
    assert (copy.k, copy.solver, model.k, model.solver) == (3, "greedy", 4, "tpower")


def test_fit_on_texts_shapes_transform_and_exact_k():
    texts = lines()
    model = spca_cli.SparseTopics(k=3, n_components=2, solver="tpower").fit(texts)
    n_words = len(model.words_)
    assert model.components_.shape == (2, n_words)
    assert ((model.components_ != 0).sum(axis=1) == 3).all()
    np.testing.assert_allclose(np.linalg.norm(model.components_, axis=1), 1.0)
    assert model.explained_variance_.shape == model.upper_bound_.shape == (2,)
    assert ((model.certified_ratio_ > 0) & (model.certified_ratio_ <= 1 + 1e-9)).all()
    assert model.get_feature_names_out().tolist() == ["topic0", "topic1"]
    scores = model.transform(texts)
    assert scores.shape == (len(texts), 2)
    # a document's score is the sum of its topic words' weights (binary weighting)
    corpus = load_input(str(TEXTS))
    np.testing.assert_allclose(scores, corpus.S @ model.components_.T, atol=1e-12)
    np.testing.assert_allclose(model.fit_transform(texts), scores)


def test_fit_on_a_sparse_matrix_with_feature_names():
    corpus = load_input(str(KOS))
    model = spca_cli.SparseTopics(k=8, n_components=2, solver="spannogram")
    model.fit(corpus.S, feature_names=corpus.vocabulary)
    assert model.components_.shape == (2, corpus.S.shape[1])
    assert ((model.components_ != 0).sum(axis=1) == 8).all()
    assert model.topic_words()[0][:3] == ["bush", "november", "kerry"]
    assert model.transform(corpus.S).shape == (corpus.S.shape[0], 2)
    with pytest.raises(SpcaParameterError, match="feature_names must have one name per column"):
        model.fit(corpus.S, feature_names=["a", "b"])


@pytest.mark.parametrize("solver", ["spannogram", "auto"])
def test_the_same_topics_as_spca_topics(solver, tmp_path):
    result = CliRunner().invoke(cli, ["topics", str(TEXTS), "-k", "3", "-c", "2", "--solver",
                                      solver, "--format", "json", "--quiet"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    model = spca_cli.SparseTopics(k=3, n_components=2, solver=solver).fit(lines())
    assert model.topic_words() == [c["words"] for c in doc["components"]]
    np.testing.assert_allclose(model.explained_variance_,
                               [c["explained_variance"] for c in doc["components"]], rtol=1e-12)
    np.testing.assert_allclose(model.upper_bound_,
                               [c["upper_bound"] for c in doc["components"]], rtol=1e-9)


def test_the_same_topics_as_spca_topics_on_the_airline_csv(airline_csv):
    # the texts as a Python user reads them (csv module), the file as the CLI reads it: one text
    # pipeline, so the HTML entities (&amp;) are decoded in both and 'amp' is no word
    with open(airline_csv, encoding="utf-8", newline="") as f:
        texts = [row["text"] for row in csv.DictReader(f)]
    result = CliRunner().invoke(cli, ["topics", str(airline_csv), "-k", "6", "-c", "3",
                                      "--solver", "spannogram", "--seed", "7", "--format",
                                      "json", "--quiet"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    model = spca_cli.SparseTopics(k=6, n_components=3, solver="spannogram",
                                  random_state=7).fit(texts)
    assert len(model.words_) == doc["input"]["words"]  # 5,277 when every tweet is kept
    assert "amp" not in set(model.words_)
    assert model.topic_words() == [c["words"] for c in doc["components"]]
    np.testing.assert_allclose(model.explained_variance_,
                               [c["explained_variance"] for c in doc["components"]], rtol=1e-12)


def test_texts_are_normalised_as_the_csv_reader_does(tmp_path):
    texts = ["fish &amp; chips tonight", "fish &amp; chips again &lt;3", "no fish today"]
    path = tmp_path / "texts.csv"
    with open(path, "w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows([["text"], *[[t] for t in texts]])
    from_file = load_input(str(path))
    model = spca_cli.SparseTopics(k=1, n_components=1, solver="greedy").fit(texts)
    assert model.words_.tolist() == from_file.vocabulary.tolist() == ["chips", "fish"]


def test_a_pipeline_after_count_vectorizer_names_the_topics_words():
    texts = lines()
    pipe = Pipeline([("vec", CountVectorizer(min_df=2)),
                     ("spca", spca_cli.SparseTopics(k=4, n_components=2, solver="spannogram"))])
    scores = pipe.fit(texts).transform(texts)
    assert scores.shape == (len(texts), 2)
    vocabulary = pipe["vec"].get_feature_names_out()
    words = pipe["spca"].topic_words(pipe[:-1])  # the fitted vectorizer names the columns
    assert words == pipe["spca"].topic_words(vocabulary)
    assert all(len(topic) == 4 and set(topic) <= set(vocabulary) for topic in words)
    assert not any(w.startswith("word") and w[4:].isdigit() for topic in words for w in topic)
    # the same topics as the matrix with its words given to fit
    S = CountVectorizer(min_df=2).fit_transform(texts)
    direct = spca_cli.SparseTopics(k=4, n_components=2, solver="spannogram")
    assert direct.fit(S, feature_names=vocabulary).topic_words() == words
    # a fixed vocabulary is known before fitting: the parameter names the words at once
    fixed = Pipeline([("vec", CountVectorizer(vocabulary=vocabulary)),
                      ("spca", spca_cli.SparseTopics(k=4, n_components=2, solver="spannogram",
                                                     feature_names=vocabulary))])
    assert fixed.fit(texts)["spca"].topic_words() == words
    assert clone(fixed).fit(texts)["spca"].topic_words() == words
    with pytest.raises(SpcaParameterError, match="one name per column of X"):
        pipe["spca"].topic_words(vocabulary[:-1])


def test_a_dataframe_names_its_columns_and_feature_names_wins():
    import pandas as pd
    corpus = load_input(str(KOS))
    S = corpus.S[:, :300].toarray()
    names = corpus.vocabulary[:300]
    frame = pd.DataFrame(S, columns=names)
    model = spca_cli.SparseTopics(k=3, n_components=1, solver="greedy").fit(frame)
    assert model.feature_names_in_.tolist() == model.words_.tolist() == names.tolist()
    assert set(model.topic_words()[0]) <= set(names)
    assert model.transform(frame).shape == (S.shape[0], 1)
    upper = [w.upper() for w in names]
    model.fit(frame, feature_names=upper)  # this fit's words over the columns' names
    assert model.topic_words()[0] == [w.upper() for w in
                                      spca_cli.SparseTopics(k=3, n_components=1,
                                                            solver="greedy").fit(frame)
                                      .topic_words()[0]]
    unnamed = spca_cli.SparseTopics(k=3, n_components=1, solver="greedy").fit(S)
    assert not hasattr(unnamed, "feature_names_in_")
    assert all(w.startswith("word") for w in unnamed.topic_words()[0])
    with pytest.raises(SpcaParameterError, match="feature_names applies to a matrix"):
        spca_cli.SparseTopics(feature_names=["a"]).fit(lines())


def test_fit_on_a_pandas_text_column():
    import pandas as pd  # the test extra installs it, so CI always runs this
    texts = lines()
    from_series = spca_cli.SparseTopics(k=3, n_components=2).fit(pd.Series(texts))
    from_list = spca_cli.SparseTopics(k=3, n_components=2).fit(texts)
    np.testing.assert_array_equal(from_series.components_, from_list.components_)


def test_bad_inputs_name_the_parameter():
    with pytest.raises(SpcaParameterError, match="X must be a list of texts"):
        spca_cli.SparseTopics().fit("one string")
    with pytest.raises(NotFittedError):
        spca_cli.SparseTopics().transform(["a text"])
    with pytest.raises(SpcaParameterError, match="'rnak': not an option of solver 'greedy'"):
        spca_cli.SparseTopics(k=2, n_components=1, solver="greedy",
                              solver_options={"rnak": 2}).fit(lines()[:200])


# ---------------------------------------------------------------- scikit-learn's checks
# check_estimator fits matrices of 1 to 10 columns (words). A topic has exactly k words and the
# default deflation keeps topics disjoint, so the defaults (k=10, n_components=5: 50 words) do
# not fit them; one 1-word topic does, and with it every check passes (array API: skipped
# unless SCIPY_ARRAY_API is set).
@parametrize_with_checks([spca_cli.SparseTopics(k=1, n_components=1)])
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


#: the checks SparseTopics() with its defaults fails, each because the check's X has fewer
#: than k=10 columns (or 5 * 10 for disjoint topics): fit refuses with a FitError naming k or
#: n_components and X's n_features (three checks wrap it in their own AssertionError)
DEFAULTS_TOO_NARROW = {
    "check_fit_score_takes_y", "check_estimators_overwrite_params",
    "check_dont_overwrite_parameters", "check_estimators_fit_returns_self",
    "check_readonly_memmap_input", "check_n_features_in_after_fitting",
    "check_positive_only_tag_during_fit", "check_estimators_dtypes", "check_dtype_object",
    "check_pipeline_consistency", "check_estimators_nan_inf", "check_estimator_sparse_tag",
    "check_estimator_sparse_array", "check_estimator_sparse_matrix", "check_estimators_pickle",
    "check_f_contiguous_array_estimator", "check_transformer_data_not_an_array",
    "check_transformer_general", "check_transformer_preserve_dtypes",
    "check_methods_sample_order_invariance", "check_methods_subset_invariance",
    "check_dict_unchanged", "check_fit_idempotent", "check_fit_check_is_fitted",
    "check_n_features_in", "check_fit2d_predict1d",
}


# check_estimator(on_fail=None) and get_tags: scikit-learn 1.6 and later
NEW_SKLEARN = pytest.mark.skipif(tuple(map(int, sklearn.__version__.split(".")[:2])) < (1, 6),
                                 reason="scikit-learn < 1.6: no on_fail, no get_tags")


@NEW_SKLEARN
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.SkipTestWarning")
def test_with_the_defaults_only_checks_on_too_few_words_fail():
    results = check_estimator(spca_cli.SparseTopics(), on_fail=None)
    failed = [r for r in results if r["status"] == "failed"]
    assert {r["check_name"] for r in failed} == DEFAULTS_TOO_NARROW
    for r in failed:
        error = r["exception"]
        cause = error if isinstance(error, FitError) else error.__cause__ or error.__context__
        assert isinstance(cause, FitError) and cause.param in ("k", "n_components"), r
        assert "n_features=" in str(cause), r


@NEW_SKLEARN
def test_tags_say_sparse_matrices_and_texts():
    from sklearn.utils import get_tags

    tags = get_tags(spca_cli.SparseTopics())
    assert tags.input_tags.sparse and tags.input_tags.string and tags.input_tags.two_d_array
    assert not tags.input_tags.one_d_array  # (checks would pass numbers as one column)


def test_unfitted_methods_raise_not_fitted_error():
    model = spca_cli.SparseTopics()
    for call in (lambda: model.transform(["a text"]), model.topic_words,
                 model.get_feature_names_out):
        with pytest.raises(NotFittedError, match="SparseTopics instance is not fitted"):
            call()


def test_empty_texts_are_a_clear_error_naming_no_file():
    for texts in ([""], ["", "  ", "!!"], ["the and of", "a"]):
        with pytest.raises(SpcaInputError) as caught:
            spca_cli.SparseTopics().fit(texts)
        assert str(caught.value) == ("<texts>: no words left after the word filters (min_count "
                                     "2, min_length 3, stopwords english)")
    with pytest.raises(SpcaParameterError, match="^X holds no texts$"):
        spca_cli.SparseTopics().fit([])
    with pytest.raises(SpcaParameterError, match=r"X\[1\] is float nan \(a missing text"):
        spca_cli.SparseTopics().fit(["a text", float("nan")])
    # neither texts nor a matrix: said in spca's words, not scikit-learn's "Expected 2D array"
    for X, what in ((None, "None"), ([1, 2, 3], "a list of int")):
        with pytest.raises(SpcaParameterError, match="^X must be a list of texts, a pandas text "
                                                     f"column or a document-word matrix, got {what}$"):
            spca_cli.SparseTopics().fit(X)
    with pytest.raises(SpcaParameterError, match="^groups must hold one value per text"):
        spca_cli.SparseTopics().fit_groups(["a text", "another text"], None)


def test_transform_gives_a_row_per_text():
    texts = lines()[:300]
    model = spca_cli.SparseTopics(k=3, n_components=2, solver="greedy",
                                  ingest={"contains": ["bush"]}).fit(texts)
    given = [texts[0], texts[0], "", "zzzz qqqq", texts[1]]
    scores = model.transform(given)
    assert scores.shape == (5, 2)
    np.testing.assert_array_equal(scores[0], scores[1])
    np.testing.assert_array_equal(scores[2:4], 0.0)
    assert model.transform(["", "xyzzy"]).tolist() == [[0.0, 0.0], [0.0, 0.0]]


# ---------------------------------------------------------------- parameters
@pytest.mark.parametrize("params, match", [
    ({"k": 0}, r"^The 'k' parameter of SparseTopics must be an int in the range \[1, inf\)\. "
               r"Got 0 instead\.$"),
    ({"n_components": 2.5}, "The 'n_components' parameter of SparseTopics must be an int"),
    ({"rank": "2"}, "The 'rank' parameter of SparseTopics must be an int"),
    ({"solver": "nope"}, "The 'solver' parameter of SparseTopics must be a str among"),
    ({"deflation": "none"}, "The 'deflation' parameter of SparseTopics must be a str among"),
    ({"random_state": -1}, "The 'random_state' parameter of SparseTopics must be"),
    ({"time_limit": 0}, "The 'time_limit' parameter of SparseTopics must be"),
    ({"solver_options": [("init", "auto")]}, "The 'solver_options' parameter of SparseTopics"),
    ({"ingest": "min_count=1"}, "The 'ingest' parameter of SparseTopics must be"),
    ({"feature_names": 3}, "The 'feature_names' parameter of SparseTopics must be"),
])
def test_parameters_are_validated_as_scikit_learn_does(params, match):
    with pytest.raises(InvalidParameterError, match=match):
        spca_cli.SparseTopics(**params).fit([])  # before X is looked at


def test_solvers_and_their_options_come_from_the_registry():
    (names,) = spca_cli.SparseTopics._parameter_constraints["solver"]
    assert names.options == set(spca_cli.REGISTRY)
    # an option's constraint is its registry entry's, checked before X is read
    with pytest.raises(SpcaParameterError, match=r"^solver_options: 'init': must be one of "):
        spca_cli.SparseTopics(solver="tpower", solver_options={"init": "bogus"}).fit([])
    with pytest.raises(SpcaParameterError, match="^solver_options: 'rank': is set by the run"):
        spca_cli.SparseTopics(solver="tpower", solver_options={"rank": 3}).fit([])


def test_random_state_is_kept_and_seeds_the_run():
    texts = lines()
    model = spca_cli.SparseTopics(k=3, n_components=2, solver="nonneg", random_state=5,
                                  solver_options={"samples": 300})
    assert model.get_params()["random_state"] == 5
    first = model.fit(texts).components_
    np.testing.assert_array_equal(clone(model).fit(texts).components_, first)
    assert model.result_.params["seed"] == 5
    other = clone(model).set_params(random_state=np.random.RandomState(5)).fit(texts)
    assert other.components_.shape == first.shape
