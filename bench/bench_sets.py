"""The set of five topics, against what other methods' top words explain, on real corpora.

Run with ``python -m bench.bench_sets [NAME ...]``. For each corpus (the same as
``bench_defaults``), spca reads it once and every method gets the same document-word matrix S:

* ``spca default``: ``run_topics`` with every default (auto, k = 10, 5 topics: the joint set);
* ``spca remove``: the same, one topic at a time (``deflation="remove"``);
* ``bipartite``: the 2015 paper's solver with its defaults;
* ``NMF(5)``, ``LDA(5)``: scikit-learn's, each topic reduced to its 10 heaviest words;
* ``gensim LDA(5)``: gensim's ``LdaModel`` (seeded, 5 passes) on the same counts, when gensim is
  installed (``pip install -e '.[bench]'``, which ``make bench`` does); else the row says so.

Every method's topics are scored on spca's objective, the variance their words explain
together: sum_j lambda_max(A[T_j, T_j]), the topics made disjoint first (a word shared by two
topics stays with the one whose lambda_max is larger). Totals are shown relative to spca's
default (1.000 = its total); ``cert`` is spca's ``total_certified_ratio``; ``NPMI`` the mean
coherence over the documents (spca_cli.coherence); ``diversity`` the unique words over all top
words (1 = no word in two topics); ``coverage`` the share of documents holding at least one
topic word; seconds are in-process, after reading.
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np

from bench.bench_defaults import corpora

TOP = 10
K = 5


def _lambda(S, words):
    if len(words) == 0:
        return 0.0
    sub = S[:, words]
    return float(np.linalg.eigvalsh((sub.T @ sub).toarray())[-1])


def made_disjoint(S, topics):
    """Each word kept by the topic (of those holding it) whose lambda_max is larger."""
    order = sorted(range(len(topics)), key=lambda j: -_lambda(S, topics[j]))
    taken, out = set(), [None] * len(topics)
    for j in order:
        out[j] = [w for w in topics[j] if w not in taken]
        taken.update(out[j])
    return out


def score(S, topics):
    """(total, mean NPMI, diversity, coverage) of the topics' words."""
    from spca_cli.coherence import topic_coherence

    disjoint = made_disjoint(S, [list(map(int, t)) for t in topics])
    total = sum(_lambda(S, t) for t in disjoint)
    npmi = float(np.mean([topic_coherence(S, np.asarray(t, dtype=np.int64)) for t in topics]))
    every = np.concatenate([np.asarray(t, dtype=np.int64) for t in topics])
    diversity = np.unique(every).size / every.size
    coverage = float(np.mean(np.asarray((S[:, np.unique(every)] != 0).sum(axis=1)).ravel() > 0))
    return total, npmi, diversity, coverage


def _spca(corpus, **kwargs):
    from spca_cli.topics import run_topics

    t = time.perf_counter()
    result = run_topics(corpus, **kwargs)
    seconds = time.perf_counter() - t
    topics = [c.indices for c in result.components]
    certified = None if result.total_bound is None else result.total_bound.certified_ratio
    return topics, seconds, certified


def _sklearn(model, S):
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(S)
    seconds = time.perf_counter() - t
    return [np.argsort(-c)[:TOP] for c in model.components_], seconds


def _gensim_lda(S):
    """gensim's LdaModel on the rows of S as bags of words: (topics, seconds) or None."""
    try:
        from gensim.matutils import Sparse2Corpus
        from gensim.models import LdaModel
    except ImportError:
        return None
    t = time.perf_counter()
    corpus = Sparse2Corpus(S.T.tocsc(), documents_columns=True)
    model = LdaModel(corpus, num_topics=K, id2word=None, passes=5, random_state=0)
    seconds = time.perf_counter() - t
    return [np.argsort(-row)[:TOP] for row in model.get_topics()], seconds


def measure(name, path):
    from sklearn.decomposition import NMF, LatentDirichletAllocation

    from spca_cli.corpus import load_input

    corpus = load_input(path)
    S = corpus.S.tocsc()
    rows = {}
    topics, seconds, certified = _spca(corpus)
    rows["spca default"] = (topics, seconds, certified)
    topics, seconds, certified = _spca(corpus, deflation="remove")
    rows["spca remove"] = (topics, seconds, certified)
    topics, seconds, certified = _spca(corpus, solver="bipartite")
    rows["bipartite"] = (topics, seconds, certified)
    X = corpus.S.astype(np.float64)
    topics, seconds = _sklearn(NMF(n_components=K, init="nndsvd"), X)
    rows["NMF(5)"] = (topics, seconds, None)
    topics, seconds = _sklearn(LatentDirichletAllocation(n_components=K, random_state=0), X)
    rows["LDA(5)"] = (topics, seconds, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gensim = _gensim_lda(corpus.S.tocsr())
    if gensim is not None:
        rows["gensim LDA(5)"] = (*gensim, None)
    scored = {method: (*score(S, topics), seconds, certified)
              for method, (topics, seconds, certified) in rows.items()}
    return name, scored


def table(results, missing):
    lines = [f"{'corpus':16} {'method':15} {'total':>8} {'relative':>9} {'cert':>6} {'NPMI':>7} "
             f"{'diversity':>9} {'coverage':>8} {'seconds':>8}"]
    for name, scored in results:
        base = scored["spca default"][0]
        for method, (total, npmi, diversity, coverage, seconds, certified) in scored.items():
            cert = "" if certified is None else f"{certified:.3f}"
            lines.append(f"{name:16} {method:15} {total:>8.6g} {total / base:>9.3f} {cert:>6} "
                         f"{npmi:>7.3f} {diversity:>9.2f} {coverage:>8.3f} {seconds:>8.2f}")
    for name, why in missing.items():
        lines.append(f"{name:16} skipped: {why}")
    if results and not any("gensim LDA(5)" in scored for _, scored in results):
        lines.append("gensim LDA(5) skipped: gensim is not installed (pip install -e '.[bench]')")
    lines.append(f"k = {TOP}, {K} topics; total = sum_j lambda_max(A[T_j, T_j]) of the topics' "
                 "words made disjoint; relative to spca's default; cert: spca's "
                 "total_certified_ratio; NPMI: mean coherence; diversity: unique / all top words; "
                 "coverage: documents holding a topic word; seconds in process, after reading.")
    return "\n".join(lines)


def main(argv):
    found, missing = corpora()
    selected = set(argv)
    results = [measure(name, path) for name, (path, _) in found.items()
               if not selected or name in selected]
    print(table(results, missing))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
