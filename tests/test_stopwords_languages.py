"""Stop lists of the languages of the multilingual fixtures, Thai included (the stop-words
package has none: spca ships stopwords-iso's), and a check that with them named no topic word
of the fixture is a stop word of the language it was written in."""

from __future__ import annotations

import json

import pytest

from spca_cli.corpus.scripts import no_space_search
from spca_cli.corpus.stopwords import language_names, resolve_stopwords
from spca_cli.corpus.thai_stopwords import THAI_STOP_WORDS
from spca_cli.corpus.tokenize import make_analyzer

from _cli import spca
from conftest import TEST_DATA

JSONL = TEST_DATA / "multilingual" / "tweets.jsonl"
LANGUAGES = ("en", "es", "th", "ja", "zh", "hi")  # the fixture's `lang` values


def _topic_words(*stopwords):
    result = spca("topics", JSONL, "--min-count", "1", "-k", "6", "-c", "6", "--documents", "0",
                  "--format", "json", "-q", *stopwords)
    assert result.exit_code == 0, result.output
    return {w for c in json.loads(result.stdout)["components"] for w in c["words"]}


def _stop_words_in_their_language(words):
    """(word, language) for each word of ``words`` that is a stop word of a language of a
    tweet it occurs in."""
    tokens = make_analyzer(1, "none")
    tweets = [json.loads(line) for line in JSONL.read_text(encoding="utf-8").splitlines()]
    found = set()
    for tweet in tweets:
        present = set(tokens(tweet["text"])) & words
        stop = resolve_stopwords(tweet["lang"]).words
        found |= {(w, tweet["lang"]) for w in present if w in stop}
    return found


def test_thai_is_a_stop_list_by_name_and_code():
    assert "thai" in language_names()
    thai, th = resolve_stopwords("thai").words, resolve_stopwords("th").words
    assert thai == th == THAI_STOP_WORDS and len(thai) == 115
    assert {"และ", "ที่", "ไม่", "แล้ว", "ทำ"} <= thai  # SARA AM, as Thai text writes it
    assert not any("\u0e4d\u0e32" in w for w in thai)


def test_every_script_the_tokenizer_cuts_has_a_stop_list():
    search = no_space_search().search
    for code, sample in (("th", "เที่ยวบิน"), ("zh", "航班"), ("ja", "空港")):
        assert search(sample)  # a script written without spaces, cut into words
        assert len(resolve_stopwords(code).words) >= 40, code  # Japanese: 44 words


def test_no_topic_word_is_a_stop_word_of_its_language():
    named = _topic_words("--stopwords", ",".join(LANGUAGES))
    assert {"customer", "maleta", "客服", "เที่ยว"} <= named  # every language has its topics
    assert _stop_words_in_their_language(named) == set()
    # the check has teeth: with the English list alone, Spanish stop words reach the topics
    found = _stop_words_in_their_language(_topic_words())
    assert {("que", "es"), ("los", "es")} <= found, found


@pytest.mark.parametrize("word", ["แล้ว", "ด้วย", "อีก", "ไม่"])
def test_thai_stop_words_leave_the_vocabulary(tmp_path, word):
    out = tmp_path / "c.npz"
    assert spca("ingest", JSONL, "-o", out, "-q", "--min-count", "1").exit_code == 0
    from spca_cli.corpus import load_corpus

    assert word in load_corpus(out).vocabulary.tolist()
    assert spca("ingest", JSONL, "-o", out, "-q", "--min-count", "1",
                "--stopwords", "english,thai").exit_code == 0
    assert word not in load_corpus(out).vocabulary.tolist()
