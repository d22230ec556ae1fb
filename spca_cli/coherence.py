"""Topic coherence: how often a topic's words occur together in the corpus's documents.

The measure is the normalised pointwise mutual information (NPMI) of Bouma (2009), averaged over
the pairs of a topic's words, with probabilities estimated from document co-occurrence, as in
the topic-model literature (Lau, Newman and Baldwin 2014; gensim's ``c_npmi`` uses a sliding
window instead of whole documents):

    NPMI(i, j) = log(P(i, j) / (P(i) P(j))) / -log P(i, j),

where P(i) is the share of documents holding word i and P(i, j) the share holding both. It is 1
for words that always occur together, 0 for independent words, and -1 by convention for words
that never occur together. A topic's coherence is the mean over its C(k, 2) pairs of words
(the words a topic reports with weight 0 included: they are part of its k).

Only a corpus has documents: for a matrix given as A (``.npy``) there is no coherence.
"""

from __future__ import annotations

import itertools

import numpy as np

__all__ = ["npmi", "topic_coherence", "coherence_from_counts"]


def npmi(document_counts, pair_counts, n_documents):
    """NPMI of one pair of words from the number of documents holding each and both."""
    if n_documents <= 0 or pair_counts <= 0:
        return -1.0
    p_ij = pair_counts / n_documents
    if p_ij >= 1.0:
        return 1.0
    p_i, p_j = (c / n_documents for c in document_counts)
    return float(np.log(p_ij / (p_i * p_j)) / -np.log(p_ij))


def topic_coherence(S, indices):
    """Mean NPMI over the pairs of the words ``indices`` in the documents (rows) of ``S``, a
    sparse document-word matrix (any weights: a word is in a document when its entry is not
    0); None for fewer than two words or no documents.

    Examples
    --------
    >>> import numpy as np
    >>> S = np.array([[1, 1, 0], [1, 1, 0], [0, 0, 1], [1, 0, 1.0]])
    >>> round(topic_coherence(S, [0, 1]), 4)
    0.415
    >>> topic_coherence(S, [1, 2])  # never together
    -1.0
    """
    import scipy.sparse as sp

    indices = np.asarray(indices, dtype=np.int64)
    n_documents = S.shape[0]
    if indices.size < 2 or n_documents == 0:
        return None
    columns = sp.csc_array(S)[:, indices]
    present = (columns != 0).astype(np.float64)
    together = (present.T @ present).toarray()  # documents holding both words of each pair
    return coherence_from_counts(together, n_documents)


def coherence_from_counts(together, n_documents):
    """Mean NPMI over the pairs of k words from ``together`` (k x k): the documents holding both
    words of each pair, and on its diagonal those holding each word (for a binary S this is
    A[T, T]); None for fewer than two words or no documents."""
    together = np.asarray(together, dtype=np.float64)
    k = together.shape[0]
    if k < 2 or n_documents <= 0:
        return None
    counts = np.diag(together)
    values = [npmi((counts[a], counts[b]), together[a, b], n_documents)
              for a, b in itertools.combinations(range(k), 2)]
    return float(np.mean(values))
