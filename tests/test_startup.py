"""What a CLI start imports: scikit-learn and scipy.optimize stay out of it (1.2-1.6 s and 0.5 s
of every start), while the stop list and the seeds are still scikit-learn's."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
from sklearn.utils import check_random_state

from spca_cli.corpus.stopwords import english_stop_words
from spca_cli.seeds import random_state_of


def test_a_cli_start_and_a_raw_text_read_import_neither_sklearn_nor_scipy_optimize(tmp_path):
    tweets = tmp_path / "tweets.jsonl"
    tweets.write_text('{"text": "The flight was late again @united"}\n'
                      '{"text": "Late flight, lost bags"}\n', encoding="utf-8")
    code = ("import sys, spca_cli.cli\n"
            "from spca_cli.corpus import read_corpus\n"
            f"c = read_corpus({str(tweets)!r}, min_count=1)\n"
            "print(sorted(map(str, c.vocabulary)), 'sklearn' in sys.modules, "
            "'scipy.optimize' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['bags', 'flight', 'late', 'lost'] False False"


def test_the_english_stop_list_is_scikit_learns():
    assert english_stop_words() == ENGLISH_STOP_WORDS
    assert "the" in english_stop_words() and "flight" not in english_stop_words()


@pytest.mark.parametrize("seed", [0, 7, 2 ** 32 - 1])
def test_a_seed_gives_scikit_learns_stream(seed):
    assert np.array_equal(random_state_of(seed).rand(5), check_random_state(seed).rand(5))


def test_a_random_state_is_used_as_is_and_a_float_is_refused():
    rng = np.random.RandomState(3)
    assert random_state_of(rng) is rng
    assert isinstance(random_state_of(None), np.random.RandomState)
    with pytest.raises(ValueError, match="cannot seed"):
        random_state_of(1.5)
