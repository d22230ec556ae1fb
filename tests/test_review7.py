"""Checks from the adversarial review of session 7 (threaded products, the cached submatrix,
``converge=`` of the block method, the tokenizer's piece cache)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

import spca_cli.backend as backend_module
from spca_cli.backend import LocalBackend
from spca_cli.corpus.tokenize import Tokenizer
from spca_cli.matrix import Gram
from spca_cli.spectrum import top_eigenpairs


def test_long_pieces_are_not_kept_by_the_piece_cache():
    """Documents made of long unique pieces (base64 blobs, minified text) would otherwise be
    held whole by the cache, up to PIECE_CACHE_MAX of them: 4,000 documents of one 5,000-character
    piece kept 20 MB of text (about 80 MB of memory) after they were tokenised."""
    rng = np.random.default_rng(0)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/+"))
    blobs = ["".join(rng.choice(letters, 5000)) for _ in range(40)]
    texts = [f"Delayed flight {blob} again" for blob in blobs]
    tokenizer = Tokenizer(3, "english")
    got = tokenizer.tokenize_chunk(texts)
    assert [t for t in got if t] == [t for t in tokenizer._tokens_by_pattern(texts) if t]
    assert sum(map(len, tokenizer._pieces)) < 1000  # 'delayed', 'flight', 'again', the mark
