"""Topics per group (``spca topics --by``): the real airline tweets and fortunes, groups too small
to solve, every output format, the UCI groups file, and the error messages."""

from __future__ import annotations

import csv
import io
import json
import re

import numpy as np
import pytest

from _cli import assert_error, spca
from spca_cli.corpus.read import read_texts
from spca_cli.groups import NO_GROUP, run_groups

AIRLINES = ["American", "Delta", "Southwest", "US Airways", "United", "Virgin America"]


def _json(*args):
    result = spca("topics", *args, "--format", "json", "--quiet")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def airline_groups():
    from conftest import shared_file

    path = shared_file("twitter_us_airline_sentiment.csv")
    return path, _json(path, "--by", "airline", "-c", "3")


def test_airline_six_groups_each_with_three_certified_topics(airline_groups):
    _, doc = airline_groups
    assert doc["by"] == "airline"
    assert [g["group"] for g in doc["groups"]] == AIRLINES
    assert sum(g["documents"] for g in doc["groups"]) == doc["input"]["documents"]
    for group in doc["groups"]:
        assert group["not_solved"] is None
        assert len(group["components"]) == 3
        for comp in group["components"]:
            assert len(comp["words"]) == 10
            # a proof for each topic: at least 0.9 of the best 10-word topic of the group
            assert 0.9 <= comp["certified_ratio"] <= 1.0
            assert comp["upper_bound"] >= comp["explained_variance"] * (1 - 1e-9)
            assert comp["coverage"]["documents"] <= group["documents"]
    # the groups share one run's proof budget (3 s of work per topic) by their documents
    budgets = {g["group"]: g["budget"] for g in doc["groups"]}
    assert sum(budgets.values()) == pytest.approx(3.0, rel=0.01)
    assert budgets["United"] > budgets["Virgin America"]
    assert any("share the proof budget" in note for note in doc["notes"])


def _word_share(texts, word):
    """Share of ``texts`` holding ``word`` as a token (a direct count on the raw text): not
    inside another word or an @handle; a hashtag is its word, as the tokenizer reads it."""
    pattern = re.compile(rf"(?<![a-z0-9_@]){word}(?![a-z0-9_])")
    return float(np.mean([bool(pattern.search(t.lower())) for t in texts]))


@pytest.mark.parametrize("group,word", [("American", "dfw"), ("Delta", "jetblue"),
                                        ("Virgin America", "virgin"), ("United", "united")])
def test_airline_distinctive_words_against_a_direct_count(airline_groups, group, word):
    """Hubs and names are distinctive: the word is in a far larger share of the group's tweets
    than of the others', by the report and by counting the CSV's texts with pandas."""
    import pandas as pd

    path, doc = airline_groups
    entry = next(g for g in doc["groups"] if g["group"] == group)
    ranked = {e["word"]: e for e in entry["distinctive_words"]}
    assert word in [e["word"] for e in entry["distinctive_words"][:5]]
    e = ranked[word]
    assert e["lift"] > 5 and e["share"] > 5 * e["share_elsewhere"]
    assert e["share"] == pytest.approx(e["documents"] / entry["documents"])
    others = doc["input"]["documents"] - entry["documents"]
    assert e["share_elsewhere"] == pytest.approx(e["documents_elsewhere"] / others)
    # the raw CSV (duplicates included, which the report sets aside) within half a point
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    inside = frame["airline"] == group
    assert e["share"] == pytest.approx(_word_share(frame.text[inside], word), abs=0.005)
    assert e["share_elsewhere"] == pytest.approx(_word_share(frame.text[~inside], word),
                                                 abs=0.005)


def test_airline_table_has_a_section_per_group_and_the_distinctive_words(airline_groups):
    path, _ = airline_groups
    result = spca("topics", path, "--by", "airline", "-c", "3", "--quiet", "--documents", "0",
                  "--solver", "greedy")
    assert result.exit_code == 0, result.output
    out = result.stdout
    for name in AIRLINES:
        assert re.search(rf"^{name}: [\d,]+ documents, [\d,]+ words$", out, re.M)
    assert "Distinctive words of each group's topics" in out
    assert re.search(r"^American\s+dfw\s+\d\s+[\d.]+%\s+[\d.]+%\s+[\d.]+$", out, re.M)


def fortunes_csv():
    """fortunes.csv of the data folder (not a registered data set: a copy in $SPCA_DATA), or
    skip."""
    from spca_cli.datasets import data_folder

    path = data_folder() / "fortunes.csv"
    if not path.exists():
        pytest.skip(f"{path} not present (SPCA_DATA=/path/to/folder)")
    return path


def test_fortunes_forty_groups_with_small_ones_reported():
    doc = _json(fortunes_csv(), "--by", "category", "-c", "1", "--documents", "0")
    groups = {g["group"]: g for g in doc["groups"]}
    assert len(groups) == 40
    assert groups["pratchett"]["not_solved"] == "2 documents, fewer than 20"
    assert groups["ascii-art"]["not_solved"] == "10 documents, fewer than 20"
    assert groups["ascii-art"]["components"] == []
    solved = [g for g in groups.values() if g["not_solved"] is None]
    assert len(solved) >= 35
    for g in solved:
        assert 0.8 <= g["components"][0]["certified_ratio"] <= 1.0
    # the Perl quotes' group: Larry Wall's words
    assert {"larry", "wall"} <= set(groups["perl"]["components"][0]["words"])


def _small_corpus(tmp_path):
    """Two groups of clear topics and one group of three documents."""
    rows = []
    for i in range(40):
        rows.append(("pets", ["cats dogs fur paws vet", "fish tank water pump filter"][i % 2]
                     + f" day{i % 7}"))
        rows.append(("money", ["stocks bonds market trade price", "bank loan rate debt credit"]
                     [i % 2] + f" week{i % 5}"))
    rows += [("tiny", "alpha beta gamma"), ("tiny", "alpha beta delta"), ("tiny", "gamma delta")]
    path = tmp_path / "small.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["kind", "text"])
        writer.writerows(rows)
    return path


def test_small_groups_are_reported_not_solved_in_every_format(tmp_path):
    path = _small_corpus(tmp_path)
    args = (path, "--by", "kind", "-k", "3", "-c", "2", "--keep-duplicates", "--quiet")
    doc = _json(*args)
    groups = {g["group"]: g for g in doc["groups"]}
    assert list(groups) == ["money", "pets", "tiny"]
    assert groups["tiny"]["not_solved"] == "3 documents, fewer than 20"
    money = {w for c in groups["money"]["components"] for w in c["words"]}
    assert money <= {"stocks", "bonds", "market", "trade", "price", "bank", "loan", "rate",
                     "debt", "credit"} | {f"week{i}" for i in range(5)}
    table = spca("topics", *args).stdout
    assert "tiny: 3 documents, 4 words\nnot solved: 3 documents, fewer than 20\n" in table
    rows = list(csv.DictReader(io.StringIO(spca("topics", *args, "--format", "csv").stdout)))
    assert [r for r in rows if r["group"] == "tiny"][0]["not_solved"] == \
        "3 documents, fewer than 20"
    assert all(r["share"] for r in rows if r["group"] == "pets")
    markdown = spca("topics", *args, "--format", "markdown").stdout
    assert "## tiny: 3 documents, 4 words\n\nNot solved: 3 documents, fewer than 20.\n" in \
        markdown
    assert "## Distinctive words" in markdown
    # too few words for the topics asked: reported with the count
    doc = _json(path, "--by", "kind", "-k", "3", "-c", "2", "--min-documents", "2",
                "--keep-duplicates")
    tiny = next(g for g in doc["groups"] if g["group"] == "tiny")
    assert tiny["not_solved"] == "4 words in 2+ documents, fewer than the 6 its topics need"


def test_the_page_of_the_groups_shows_each_group_with_the_json_figures(tmp_path):
    """--format html with --by: a section per group (a hostile name escaped), the topics with
    the JSON's exact figures, the distinctive words, the group not solved with its reason, and
    every link of the list resolving."""
    from _html_pages import network_loads, page_parts, unresolved_anchors

    path = _small_corpus(tmp_path)
    hostile = "<b>pets & co</b>"
    text = path.read_text(encoding="utf-8").replace("pets", hostile).replace("money", " שקל ")
    path.write_text(text, encoding="utf-8")
    args = (path, "--by", "kind", "-k", "3", "-c", "2", "--keep-duplicates", "--quiet")
    doc = _json(*args)
    page_path = tmp_path / "groups.html"
    result = spca("topics", *args, "-o", page_path)
    assert result.exit_code == 0, result.output
    page = page_path.read_text(encoding="utf-8")
    parts = page_parts(page)
    assert hostile not in page and "<bdi>&lt;b&gt;pets &amp; co&lt;/b&gt;</bdi>" in page
    # a right-to-left name is isolated from the counts beside it, its spaces shown in quotes
    assert '<bdi class="padded">&ldquo; שקל &rdquo;</bdi>' in page
    assert unresolved_anchors(page) == [] and network_loads(page) == []
    assert [i for i in parts.ids if re.fullmatch(r"group-\d+", i)] == ["group-1", "group-2",
                                                                       "group-3"]
    solved = [g for g in doc["groups"] if g["not_solved"] is None]
    assert parts.data["certified-ratio"] == [c["certified_ratio"] for g in solved
                                             for c in g["components"]]
    assert parts.data["total-explained-variance"] == [g["total_explained_variance"]
                                                      for g in solved]
    assert "Not solved: 3 documents, fewer than 20" in parts.text
    assert "Distinctive words" in parts.text
    money = next(g for g in solved if g["group"] == " שקל ")
    first = money["distinctive_words"][0]
    assert f"{first['word']} {first['topic']} {first['share']:.1%}" in parts.text


def test_a_value_written_none_a_one_document_group_and_no_group_solved(tmp_path):
    """A group whose value is the text "(none)" is a group like any other (its own rows give
    its distinctive words), a group of one document says "1 document", and a run that solves
    no group says so in a note."""
    rows = [("(none)", ["cats dogs fur paws vet", "fish tank water pump filter"][i % 2])
            for i in range(30)]
    rows += [("money", ["stocks bonds market trade price", "bank loan rate debt credit"][i % 2])
             for i in range(30)]
    rows.append(("alone", "gold silver copper"))
    path = tmp_path / "none.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([("kind", "text"), *rows])
    doc = _json(path, "--by", "kind", "-k", "3", "-c", "2", "--keep-duplicates")
    groups = {g["group"]: g for g in doc["groups"]}
    pets = {w["word"] for w in groups["(none)"]["distinctive_words"]}
    assert pets <= {"cats", "dogs", "fur", "paws", "vet", "fish", "tank", "water", "pump",
                    "filter"} and all(w["share"] == 0.5 for w in
                                      groups["(none)"]["distinctive_words"])
    assert groups["alone"]["not_solved"] == "1 document, fewer than 20"
    assert not any(note.startswith("no group was solved") for note in doc["notes"])
    doc = _json(path, "--by", "kind", "-k", "3", "-c", "2", "--keep-duplicates",
                "--min-documents", "40")
    assert "no group was solved (each group's not_solved says why)" in doc["notes"]


def test_include_and_exclude_apply_to_every_group(tmp_path):
    """--include with --by: each group's topic is the best one holding the word, as a run on
    the group's rows alone finds it (proved optimal with exact); a group without the word is
    not solved, with the word named; an excluded word is left out where a group has it; a
    word the corpus lacks is one error for the run."""
    path = _small_corpus(tmp_path)
    args = ("--by", "kind", "-k", "3", "-c", "1", "--keep-duplicates", "--solver", "exact")
    doc = _json(path, *args, "--include", "bank", "--exclude", "credit")
    groups = {g["group"]: g for g in doc["groups"]}
    assert doc["params"]["include"] == ["bank"] and doc["params"]["exclude"] == ["credit"]
    money = groups["money"]["components"][0]
    assert "bank" in money["words"] and "credit" not in money["words"]
    assert money["certified_ratio"] == 1.0
    assert groups["pets"]["not_solved"] == \
        '"bank" is not among its words (those in 2+ of its documents)'
    # the money group's rows alone, the same topic
    with open(path, newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.reader(fh)]
    alone = tmp_path / "money.csv"
    with open(alone, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([rows[0]] + [r for r in rows[1:] if r[0] == "money"])
    single = _json(alone, "-k", "3", "-c", "1", "--keep-duplicates", "--solver", "exact",
                   "--include", "bank", "--exclude", "credit")["components"][0]
    assert single["words"] == money["words"]
    assert single["explained_variance"] == pytest.approx(money["explained_variance"], rel=1e-12)
    table = spca("topics", path, *args, "--include", "bank", "--quiet").stdout
    assert table.splitlines()[0].endswith(", every topic containing bank")
    typo = spca("topics", path, *args, "--include", "bnak")
    assert typo.exit_code == 2 and typo.output == \
        'Error: --include: "bnak" is not in the vocabulary (did you mean "bank"?)\n'



def test_the_best_topic_holding_refund_for_each_airline_is_proved(airline_groups):
    path, _ = airline_groups
    doc = _json(path, "--by", "airline", "--include", "refund", "-c", "1", "-k", "6",
                "--solver", "exact", "--documents", "0")
    groups = {g["group"]: g for g in doc["groups"]}
    assert groups["Virgin America"]["not_solved"] == \
        '"refund" is not among its words (those in 2+ of its documents)'
    for name in ("American", "Delta", "Southwest", "US Airways", "United"):
        topic = groups[name]["components"][0]
        assert "refund" in topic["words"] and topic["certified_ratio"] >= 1 - 1e-9, name
        assert topic["bound_source"] == "branch and bound: optimal", name


def test_an_empty_or_missing_value_is_the_none_group(tmp_path):
    path = tmp_path / "t.jsonl"
    lines = []
    for i in range(30):
        lines.append({"text": ["red green blue", "cyan magenta yellow"][i % 2], "team": "a"})
        lines.append({"text": ["one two three", "four five six"][i % 2]})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    doc = _json(path, "--by", "team", "-k", "3", "-c", "2", "--keep-duplicates")
    assert [g["group"] for g in doc["groups"]] == ["a", NO_GROUP]
    assert [g["documents"] for g in doc["groups"]] == [30, 30]


def test_uci_takes_a_file_of_one_group_per_document(tmp_path):
    docword = "data_samples/docword.kos-sample.txt.gz"
    labels = tmp_path / "labels.txt"
    labels.write_text("".join(("even\n", "odd\n")[i % 2] for i in range(300)), encoding="utf-8")
    doc = _json(docword, "--by", labels, "-k", "5", "-c", "2", "--documents", "0")
    assert [(g["group"], g["documents"]) for g in doc["groups"]] == [("even", 150),
                                                                     ("odd", 150)]
    assert all(len(g["components"]) == 2 for g in doc["groups"])
    labels.write_text("x\n" * 299, encoding="utf-8")
    assert_error(spca("topics", docword, "--by", labels),
                 f"{labels}: has 299 groups but {docword} has 300 documents (one group per "
                 "line, in document order)")


def test_errors_name_the_problem(tmp_path):
    path = _small_corpus(tmp_path)
    assert_error(spca("topics", path, "--by", "team"),
                 f'{path}: no column "team" (columns: kind, text)')
    text = tmp_path / "lines.txt"
    text.write_text("a b c\n", encoding="utf-8")
    assert_error(spca("topics", text, "--by", "kind"),
                 f"{text}: text input has no columns, so --by cannot apply (give a CSV or JSON "
                 "lines file)")
    usage = spca("topics", path, "--by", "kind", "--assignments", tmp_path / "a.csv")
    assert usage.exit_code == 2 and "--assignments does not apply with --by" in usage.output
    usage = spca("topics", path, "--min-documents", "3")
    assert usage.exit_code == 2 and "--min-documents applies with --by only" in usage.output


def test_library_groups_of_texts_in_memory():
    texts = ["cats dogs fur paws vet", "stocks bonds market trade price"] * 25
    corpus = read_texts(texts, groups=["pets", "money"] * 25, min_count=1,
                        keep_duplicates=True)
    result = run_groups(corpus, by="kind", k=3, n_components=1, min_documents=5)
    assert [(g.name, g.documents) for g in result.groups] == [("money", 25), ("pets", 25)]
    pets = result.groups[1]
    assert set(pets.result.components[0].words) <= {"cats", "dogs", "fur", "paws", "vet"}
    assert pets.distinctive[0]["lift"] is None  # in no document of the other group
    assert pets.distinctive[0]["share"] == 1.0 and pets.distinctive[0]["share_elsewhere"] == 0


def test_estimator_fits_one_model_per_group():
    from spca_cli.estimator import SparseTopics

    texts = ["cats dogs fur paws vet", "stocks bonds market trade price", "a b"] * 25
    model = SparseTopics(k=3, n_components=1, ingest={"min_count": 1, "keep_duplicates": True})
    fits = model.fit_groups(texts, ["pets", "money", None] * 25, min_documents=5)
    assert sorted(fits) == ["money", "pets"]
    assert [g.name for g in model.groups_.groups] == ["money", "pets", NO_GROUP]
    assert model.groups_.groups[2].not_solved.startswith("0 words")
    assert set(fits["pets"].topic_words()[0]) <= {"cats", "dogs", "fur", "paws", "vet"}
    assert fits["pets"].transform(["cats and dogs"])[0, 0] > 0
    assert (fits["money"].certified_ratio_ > 0.9).all()


def test_groups_solved_in_processes_match_one_process():
    """Worker processes give each group the topics, values and bounds one process gives: the
    fortunes' three largest categories (more groups than workers), two topics each."""
    from spca_cli.corpus.read import load_input

    corpus = load_input(fortunes_csv(), groups="category")
    sizes = {name: int(np.sum(corpus.groups == name)) for name in set(corpus.groups)}
    largest = set(sorted(sizes, key=sizes.get)[-3:])
    keep = np.flatnonzero([g in largest for g in corpus.groups])
    import dataclasses

    import scipy.sparse as sp

    corpus = dataclasses.replace(corpus, S=sp.csr_array(corpus.S)[keep],
                                 groups=corpus.groups[keep], texts=None, ids=None,
                                 times=None, tz_offsets=None, rows=None)
    kwargs = dict(by="category", n_components=2)
    here = run_groups(corpus, jobs=1, **kwargs)
    apart = run_groups(corpus, jobs=2, **kwargs)
    assert [g.name for g in here.groups] == [g.name for g in apart.groups]
    assert len([g for g in here.groups if g.result is not None]) == 3
    for a, b in zip(here.groups, apart.groups):
        assert a.budget == b.budget
        for ta, tb in zip(a.result.components, b.result.components):
            assert ta.words == tb.words
            assert tb.explained_variance == pytest.approx(ta.explained_variance, rel=1e-12)
            assert tb.upper_bound == pytest.approx(ta.upper_bound, rel=1e-12)
        assert a.distinctive == b.distinctive


def test_a_worker_reports_a_run_that_does_not_fit_as_one_process_does():
    """A group too small for the run is reported with the same reason; a solver option that
    no group can take is raised, with the same message, from a worker as from this process."""
    from spca_cli.params import FitError

    texts = ["cats dogs fur paws vet", "stocks bonds market trade price", "alpha beta"] * 25
    corpus = read_texts(texts, groups=["pets", "money", "ab"] * 25, min_count=1,
                        keep_duplicates=True)
    kwargs = dict(by="kind", k=2, n_components=1, min_documents=5, rank=3, solver="spannogram")
    here, apart = (run_groups(corpus, jobs=jobs, **kwargs) for jobs in (1, 2))
    refused = {g.name: g.not_solved for g in here.groups}
    assert refused["ab"] == "rank must be <= the number of words; got rank=3 > 2"
    assert {g.name: g.not_solved for g in apart.groups} == refused
    kwargs = dict(by="kind", k=2, n_components=1, min_documents=5, solver="bipartite",
                  solver_options={"samples": 10 ** 12})
    with pytest.raises(FitError) as one:
        run_groups(corpus, jobs=1, **kwargs)
    with pytest.raises(FitError) as two:
        run_groups(corpus, jobs=2, **kwargs)
    assert one.value.param == two.value.param == "solver_options"
    assert str(two.value) == str(one.value)


def test_estimator_fits_groups_in_processes_with_the_same_topics():
    from spca_cli.estimator import SparseTopics
    from spca_cli.errors import SpcaParameterError

    texts = ["cats dogs fur paws vet", "stocks bonds market trade price",
             "rain snow wind storm cloud"] * 25
    labels = ["pets", "money", "weather"] * 25
    model = SparseTopics(k=3, n_components=1, ingest={"min_count": 1, "keep_duplicates": True})
    here = model.fit_groups(texts, labels, min_documents=5)
    apart = model.fit_groups(texts, labels, min_documents=5, n_jobs=2)
    assert sorted(here) == sorted(apart) == ["money", "pets", "weather"]
    for name in here:
        assert here[name].topic_words() == apart[name].topic_words()
    with pytest.raises(SpcaParameterError, match="n_jobs must be None, -1 or an int >= 1"):
        model.fit_groups(texts, labels, n_jobs=0)


def test_a_bad_solver_option_from_a_worker_is_the_option_error_of_one_process():
    """An error raised in a worker process (here a solver option run_topics refuses) reaches
    the caller as itself, with the message one process gives; so does the estimator's."""
    from spca_cli.estimator import SparseTopics
    from spca_cli.params import OptionError

    texts = ["cats dogs fur paws vet", "stocks bonds market trade price",
             "rain snow wind storm cloud"] * 25
    labels = ["pets", "money", "weather"] * 25
    corpus = read_texts(texts, groups=labels, min_count=1, keep_duplicates=True)
    kwargs = dict(by="kind", k=2, n_components=1, min_documents=5, solver="auto",
                  solver_options={"budget": -1.0})
    with pytest.raises(OptionError) as one:
        run_groups(corpus, jobs=1, **kwargs)
    with pytest.raises(OptionError) as two:
        run_groups(corpus, jobs=2, **kwargs)
    assert str(two.value) == str(one.value) and two.value.option == "budget"
    model = SparseTopics(k=3, n_components=1, solver_options={"budget": -1.0},
                         ingest={"min_count": 1, "keep_duplicates": True})
    with pytest.raises(OptionError):
        model.fit_groups(texts, labels, min_documents=5, n_jobs=2)


def test_workers_started_before_the_read_give_the_topics_of_one_process():
    """GroupWorkers made before the corpus is read (as spca topics --by does for a large
    input) solve the groups they are given: the same topics and bounds as one process."""
    from spca_cli.groups import GroupWorkers

    texts = ["cats dogs fur paws vet", "stocks bonds market trade price",
             "rain snow wind storm cloud"] * 25
    corpus = read_texts(texts, groups=["pets", "money", "weather"] * 25, min_count=1,
                        keep_duplicates=True)
    kwargs = dict(by="kind", k=3, n_components=1, min_documents=5)
    here = run_groups(corpus, jobs=1, **kwargs)
    with GroupWorkers(1) as workers:
        apart = run_groups(corpus, jobs=2, workers=workers, **kwargs)
    assert workers.pool is None  # (ended with the block)
    for a, b in zip(here.groups, apart.groups):
        assert a.result.components[0].words == b.result.components[0].words
        assert b.result.components[0].upper_bound == pytest.approx(
            a.result.components[0].upper_bound, rel=1e-12)


@pytest.mark.parametrize("known", [False, True])
def test_a_killed_worker_is_one_error_not_a_traceback(known):
    """A worker that dies (killed by hand or by the system out of memory) ends the run with
    spca's error, which the CLI prints as one line: whether its pool learns of it while the
    groups are handed out or before (then the first hand-out fails, in the thread that hands
    them out)."""
    import os

    from spca_cli.errors import SpcaError
    from spca_cli.groups import GroupWorkers

    texts = ["cats dogs fur paws vet", "stocks bonds market trade price",
             "rain snow wind storm cloud"] * 25
    corpus = read_texts(texts, groups=["pets", "money", "weather"] * 25, min_count=1,
                        keep_duplicates=True)
    with GroupWorkers(1) as workers:
        # (the worker ends without a word, as when killed)
        death = workers.pool.submit(os._exit, 9)
        if known:
            death.exception()  # (waits until the pool knows it is broken)
        with pytest.raises(SpcaError, match="a worker process solving the groups ended "
                                            r"abruptly \(killed, or out of memory\?\)"):
            run_groups(corpus, by="kind", k=3, n_components=1, min_documents=5, jobs=2,
                       workers=workers)


def test_an_error_stops_the_workers_at_once():
    """An error while the workers start (a missing column, found as the input is read) ends
    them at once instead of waiting for their start and warm-up to finish."""
    import signal

    from spca_cli.groups import GroupWorkers

    with pytest.raises(ValueError, match="stop here"):
        with GroupWorkers(1) as workers:
            started = list(workers._started)
            raise ValueError("stop here")
    assert len(started) == 1
    assert started[0].exitcode == -signal.SIGKILL
    assert workers.pool is None
