"""The ingest's chunk-wide fast paths give what the per-document code gives: tweet ids from one
comprehension (``tweets._ids_of``), texts and ids stored by one join (``texts._encode``), and
stop words dropped before the vocabulary sees them; and a JSON text holding half an emoji (a
lone surrogate escape, which Python decodes but cannot encode) is read, not a traceback."""

from __future__ import annotations

import csv
import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from spca_cli.corpus import read_corpus
from spca_cli.corpus.texts import Strings
from spca_cli.corpus.tokenize import SEPARATOR, Tokenizer
from spca_cli.corpus.tweets import _id_of, _ids_of

from _cli import spca

EXAMPLES = settings(max_examples=200, deadline=None, derandomize=True, database=None)

ID_VALUES = st.one_of(st.none(), st.text(max_size=4), st.integers(-5, 10 ** 20),
                      st.floats(allow_nan=False), st.booleans())
OBJECT = st.fixed_dictionaries({}, optional={"id_str": ID_VALUES, "id": ID_VALUES,
                                             "text": st.just("delayed flight")})


@EXAMPLES
@given(objs=st.lists(OBJECT, max_size=8))
def test_ids_of_a_chunk_are_the_ids_of_each_object(objs):
    assert _ids_of(objs) == [_id_of(o) for o in objs]


def test_ids_of_common_chunks():
    assert _ids_of([{"id_str": "570306133677760513", "id": 570306133677760513},
                    {"id_str": "570301130888122368", "id": 1}]) == [
        "570306133677760513", "570301130888122368"]
    assert _ids_of([{"id": 0}, {"id": 12}]) == ["0", "12"]
    # one object with id_str among objects with id only: each keeps its own key
    assert _ids_of([{"id": 1}, {"id_str": "x9", "id": 2}, {"id": 3}]) == ["1", "x9", "3"]
    assert _ids_of([{"id_str": None, "id": 7}, {"id_str": "8"}]) == ["7", "8"]
    assert _ids_of([{"text": "no id"}, {"id": 4}]) == ["", "4"]


def per_value(values):
    """Strings as one encode per value (the definition)."""
    encoded = [str(v).encode("utf-8") for v in values]
    offsets = np.concatenate([[0], np.cumsum([len(e) for e in encoded], dtype=np.int64)])
    return b"".join(encoded), offsets


@EXAMPLES
@given(values=st.lists(st.one_of(st.text(st.characters(blacklist_categories=("Cs",))),
                                 st.integers()), max_size=10))
def test_strings_of_a_chunk_are_the_strings_of_each_value(values):
    s = Strings(values)
    blob, offsets = per_value(values)
    assert s.blob.tobytes() == blob
    assert s.offsets.tolist() == offsets.tolist()
    assert list(s) == [str(v) for v in values]


@EXAMPLES
@given(values=st.lists(st.text(st.characters(blacklist_categories=("Cs",))), max_size=12),
       data=st.data())
def test_taking_strings_by_mask_or_rows_in_any_order(values, data):
    """Strings.take gathers the chosen strings' bytes (a kernel, string by string)."""
    s = Strings(values)
    mask = data.draw(st.lists(st.booleans(), min_size=len(values), max_size=len(values)))
    assert list(s.take(np.array(mask, dtype=bool))) == [v for v, m in zip(values, mask) if m]
    rows = data.draw(st.lists(st.integers(0, max(len(values) - 1, 0)),
                              max_size=2 * len(values) if values else 0))
    assert list(s.take(np.array(rows, dtype=np.int64))) == [values[r] for r in rows]


def test_strings_of_ascii_and_other_text():
    s = Strings(["570306133677760513", "", "caf\u00e9 \u2708\ufe0f", "\U0001f600", "ok"])
    assert s.offsets.tolist() == [0, 18, 18, 30, 34, 36]
    assert list(s) == ["570306133677760513", "", "caf\u00e9 \u2708\ufe0f", "\U0001f600", "ok"]
    assert list(Strings(range(3))) == ["0", "1", "2"]
    # a lone surrogate cannot be stored as UTF-8: it becomes '?', the rest is kept
    assert list(Strings(["half \ud83d emoji", "whole \U0001f600"])) == [
        "half ? emoji", "whole \U0001f600"]


def test_a_tweet_with_half_an_emoji_is_read(tmp_path):
    path = tmp_path / "cut.jsonl"
    # "\ud83d" alone: the first half of a surrogate pair, as a text cut in the middle has it
    path.write_text('{"id_str": "1", "text": "delayed flight \\ud83d"}\n'
                    '{"id_str": "2", "text": "delayed flight again \\ud83d\\ude00"}\n')
    corpus = read_corpus(str(path), min_count=2)
    assert corpus.vocabulary.tolist() == ["delayed", "flight"]
    assert list(corpus.texts) == ["delayed flight ?", "delayed flight again \U0001f600"]
    assert list(corpus.ids) == ["1", "2"]
    result = spca("info", path, "--min-count", "2", "--format", "json")
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    assert (info["documents"], info["words"]) == (2, 2)


def test_stop_words_never_reach_the_vocabulary_lookup(airline_csv):
    with open(airline_csv, newline="", encoding="utf-8") as f:
        texts = [row["text"] for row in csv.DictReader(f)][:500]
    tokens = Tokenizer(3, "english").tokenize_chunk(texts)
    assert "" not in tokens and "the" not in tokens and "flight" in tokens
    assert tokens.count(SEPARATOR) == len(texts) - 1
    assert Tokenizer(3, "english")("The flight to Boston @united http://t.co/x") == [
        "flight", "boston"]
