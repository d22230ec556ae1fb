"""Hostile small matrices and brute-force optima, shared by the tests that check every bound the
pipeline considers (per topic and total) against the best topics of each view.

A case is drawn from a seed: a matrix with nasty structure (exactly repeated eigenvalues,
clusters within 1e-12, a dense matrix PSD only up to -1e-10..-1e-9 of its largest eigenvalue,
zero rows, rank 1 or 2, mixed signs, entries from 1e-8 to 1e8, integer counts with ties), a
solver of the registry, an eigensolver, a deflation, and the certificate's budgets shrunk so
that its rarely taken paths run (tiny row prefixes and their fallback, few exact rows,
escalation steps, every row exact at once, the parallel kernel).
"""

from __future__ import annotations

import contextlib
import itertools
import math
import types

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from spca_cli import bounds
from spca_cli.kernels import rowbound
from spca_cli.matrix import Gram
from spca_cli.solvers.registry import REGISTRY
from spca_cli.topics import run_topics

EIGENSOLVERS = ("auto", "krylov", "arpack", "dense")
KINDS = ("repeated", "cluster", "near_psd", "zero_block", "zeros", "rank1", "rank2", "range",
         "counts", "mixed", "nonnegative")


# ---------------------------------------------------------------------- matrices
def _factor(rng, rows, cols, nonnegative):
    G = rng.random((rows, cols)) if nonnegative else rng.standard_normal((rows, cols))
    return G


def _permuted(rng, A):
    perm = rng.permutation(A.shape[0])
    return A[np.ix_(perm, perm)]


def _near_psd(rng, n):
    """A dense matrix whose smallest eigenvalue is -(1e-10..1e-9) lambda_max: a PSD part and,
    on a few words, c (J - I) (zero diagonal, eigenvalues 4c.. and -c), or a random orthogonal
    basis with several eigenvalues at -c."""
    if rng.random() < 0.5:
        m = int(rng.integers(3, 6))
        B = _factor(rng, n - m + 2, n - m, rng.random() < 0.5)
        P = B.T @ B
        top = float(np.linalg.eigvalsh(P)[-1])
        c = float(10 ** rng.uniform(-10, -9)) * top
        A = np.zeros((n, n))
        A[:n - m, :n - m] = P
        A[n - m:, n - m:] = c * (np.ones((m, m)) - np.eye(m))
        return _permuted(rng, A)
    Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
    lam = np.sort(rng.random(n) * 10.0)[::-1]
    negatives = int(rng.integers(1, max(2, n // 2)))
    lam[n - negatives:] = -float(10 ** rng.uniform(-10, -9)) * lam[0]
    if rng.random() < 0.5:
        lam[1:int(rng.integers(2, 4))] = lam[0]  # a repeated top eigenvalue as well
    A = (Q * lam) @ Q.T
    return 0.5 * (A + A.T)


def hostile_matrix(rng, kind, n):
    """(A, S): a dense symmetric matrix of order n, and a document-word matrix S with
    A = S^T S when the kind has one (else None)."""
    nonnegative = rng.random() < 0.5
    S = None
    if kind in ("repeated", "cluster"):
        size = int(rng.integers(2, 4))
        copies = int(rng.integers(2, max(3, n // size)))
        G = _factor(rng, size + int(rng.integers(0, 3)), size, nonnegative)
        if nonnegative:
            G = np.round(G * 4) / 4
        factors = []
        for i in range(copies):
            factors.append(G * (1.0 + i * 1e-13) if kind == "cluster" else G)
        used = copies * size
        while used < n:
            w = min(n - used, int(rng.integers(1, 4)))
            factors.append(_factor(rng, w + 1, w, nonnegative) * rng.uniform(0.2, 1.5))
            used += w
        S = sp.block_diag(factors).toarray()
        perm = rng.permutation(n)
        S = S[:, perm]
    elif kind == "near_psd":
        return _near_psd(rng, n), None
    elif kind == "zero_block":  # PSD blocks beside a c (J - I) block, as in the near-PSD views
        A = _near_psd(rng, n)
        return A, None
    elif kind == "zeros":
        inner = hostile_matrix(rng, str(rng.choice(["repeated", "mixed", "counts", "rank2"])),
                               n - int(rng.integers(1, 4)))[0]
        m = inner.shape[0]
        A = np.zeros((n, n))
        A[:m, :m] = inner
        return _permuted(rng, A), None
    elif kind in ("rank1", "rank2"):
        r = 1 if kind == "rank1" else 2
        V = _factor(rng, n, r, nonnegative)
        if rng.random() < 0.5:  # sparse factors: exact zeros and ties
            V[rng.random((n, r)) < 0.4] = 0.0
        if r == 2 and rng.random() < 0.5:
            V[:, 1] = V[:, 0][rng.permutation(n)]  # two equal eigenvalues likely near
        S = V.T.copy()
    elif kind == "range":
        B = _factor(rng, n + 2, n, nonnegative)
        D = 10 ** rng.uniform(-4, 4, n)
        S = B * D
    elif kind == "counts":
        S = rng.poisson(rng.uniform(0.3, 1.5), (int(rng.integers(n, 4 * n)), n)).astype(float)
    elif kind == "mixed":
        S = rng.standard_normal((int(rng.integers(1, n + 3)), n))
    else:  # nonnegative
        S = rng.random((int(rng.integers(1, n + 3)), n))
    return S.T @ S, S


def _block(rng, size, nonnegative):
    """One hostile block of ``size`` words: a document-word factor G (A's block is G^T G), or
    None with a dense block for a c (J - I) block (PSD only up to -c)."""
    style = rng.choice(["plain", "rank1", "counts", "range"])
    if style == "rank1":
        G = _factor(rng, 1, size, nonnegative)
    elif style == "counts":
        G = rng.poisson(1.0, (size + 2, size)).astype(float)
    elif style == "range":
        G = _factor(rng, size + 1, size, nonnegative) * 10 ** rng.uniform(-4, 4, size)
    else:
        G = _factor(rng, size + int(rng.integers(0, 3)), size, nonnegative)
    return G * rng.uniform(0.3, 1.5)


def block_matrix(rng, n):
    """(A, S): a shuffled block diagonal matrix of order n whose blocks have 1-5 words: the
    strongest block repeated 2-6 times (exactly, or scaled by 1 + i 1e-13), weaker blocks some
    of them twice, zero words, and (dense only) a c (J - I) block with c 1e-10..1e-9 of the
    largest eigenvalue. S is None when A is only PSD up to rounding."""
    nonnegative = rng.random() < 0.5
    cluster = rng.random() < 0.4
    near_psd = rng.random() < 0.3
    top = _block(rng, int(rng.integers(1, 5)), nonnegative) * 2.0
    factors = [top * (1.0 + i * 1e-13 if cluster else 1.0)
               for i in range(int(rng.integers(2, 7)))]
    used = sum(f.shape[1] for f in factors)
    room = n - (5 if near_psd else 0) - int(rng.integers(0, 3))
    while used < room:
        f = _block(rng, min(room - used, int(rng.integers(1, 6))), nonnegative)
        factors.append(f)
        used += f.shape[1]
        if rng.random() < 0.3 and used + f.shape[1] <= room:
            factors.append(f)
            used += f.shape[1]
    S = sp.block_diag(factors).toarray()
    A = S.T @ S
    m = A.shape[0]
    if near_psd:
        c = float(10 ** rng.uniform(-10, -9)) * float(np.linalg.eigvalsh(A)[-1])
        A = sp.block_diag([A, c * (np.ones((5, 5)) - np.eye(5))]).toarray()
        S = None
        m += 5
    pad = max(n - m, int(rng.integers(0, 3)))
    n = m + pad
    A = np.pad(A, (0, pad))
    S = None if S is None else np.pad(S, ((0, 0), (0, pad)))
    perm = rng.permutation(n)
    A = A[np.ix_(perm, perm)]
    S = None if S is None else S[:, perm]
    return A, S


# ---------------------------------------------------------------------- brute force
def _supports(words, k):
    return np.array(list(itertools.combinations(words.tolist(), k)), dtype=np.int64)


def support_values(D, supports):
    """lambda_max(D[I, I]) for every row I of ``supports``."""
    if supports.size == 0:
        return np.zeros(0)
    sub = D[supports[:, :, None], supports[:, None, :]]
    return np.linalg.eigvalsh(0.5 * (sub + np.swapaxes(sub, 1, 2)))[:, -1]


def components(D, active):
    """The connected components (arrays of words) of the active part of D's nonzero pattern."""
    words = np.flatnonzero(active)
    if words.size == 0:
        return []
    sub = D[np.ix_(words, words)] != 0
    count, labels = connected_components(sp.csr_array(sub), directed=False)
    return [words[labels == c] for c in range(count)]


def best_topic(D, active, k, *, limit=300_000):
    """max lambda_max(D[I, I]) over the supports of min(k, active) active words: the best
    support of min(k, size) words inside one component of D (a principal submatrix's largest
    eigenvalue grows with the submatrix, and on a block diagonal matrix it is the largest of the
    blocks'). None when a component has more than ``limit`` supports."""
    parts = components(D, active)
    if not parts:
        return 0.0
    best = -np.inf
    for words in parts:
        kk = min(k, words.size)
        if math.comb(words.size, kk) > limit:
            return None
        best = max(best, float(support_values(D, _supports(words, kk)).max()))
    return best


def _pieces_totals(D, words, k, K):
    """f[j], j = 0..K: the best total of j disjoint supports of at most k words inside
    ``words`` (-inf where they do not fit)."""
    m = words.size
    masks = np.arange(1 << m)
    pieces, values = [], []
    for size in range(1, min(k, m) + 1):
        sup = _supports(np.arange(m), size)
        pieces.append((1 << sup).sum(axis=1))
        values.append(support_values(D, words[sup]))
    bits, vals = np.concatenate(pieces), np.concatenate(values)
    g = np.zeros(1 << m)
    out = [0.0]
    for _ in range(K):
        h = np.full(1 << m, -np.inf)
        for s, v in zip(bits.tolist(), vals.tolist()):
            inside = (masks & s) == s
            h[inside] = np.maximum(h[inside], v + g[masks[inside] ^ s])
        g = h
        out.append(float(g[-1]))
    return out


def best_total(D, k, K, *, limit=12):
    """max sum_j lambda_max(D[I_j, I_j]) over K disjoint supports of k words (K k <= n).

    Each support's value is that of its best part inside one component of D, and words left
    over fill the supports up to k without lowering them: the best total of K disjoint pieces
    of at most k words, each inside a component (dynamic programming over the subsets of each
    component, then over the components). None when a component has more than ``limit``
    words."""
    parts = components(D, np.ones(D.shape[0], dtype=bool))
    best = np.array([0.0] + [-np.inf] * K)
    for words in parts:
        if words.size > limit:
            return None
        f = _pieces_totals(D, words, k, K)
        new = best.copy()
        for j in range(K + 1):
            for i in range(1, K + 1 - j):
                new[j + i] = max(new[j + i], best[j] + f[i])
        best = new
    return float(np.max(best[K:]))


# ---------------------------------------------------------------------- cases
def corpus_input(S):
    vocabulary = [f"w{i}" for i in range(S.shape[1])]
    return types.SimpleNamespace(S=sp.csr_array(S), vocabulary=vocabulary, path="test.mtx")


def matrix_input(A):
    return types.SimpleNamespace(A=A, labels=[str(i) for i in range(A.shape[0])],
                                 path="test.npy")


def draw_case(seed, *, blocks=False, **overrides):
    """Everything a run needs, drawn from ``seed``: a small matrix of a kind of ``KINDS``
    (6-12 words), or with ``blocks`` a block diagonal one of 14-48 words, where the
    eigensolvers' bases do not fill the space (:func:`block_matrix`). ``overrides`` replace
    what was drawn (solver, eigensolver, deflation, K, options, ...)."""
    rng = np.random.default_rng(seed)
    if blocks:
        kind = "blocks"
        A, S = block_matrix(rng, int(rng.integers(14, 49)))
    else:
        kind = KINDS[seed % len(KINDS)]
        A, S = hostile_matrix(rng, kind, int(rng.integers(6, 13)))
    n = A.shape[0]
    solvers = sorted(REGISTRY)
    solver = solvers[(seed // len(KINDS)) % len(solvers)]
    eigensolver = EIGENSOLVERS[int(rng.integers(0, len(EIGENSOLVERS)))]
    k = int(rng.integers(2, 5))
    deflation = "remove" if rng.random() < 0.6 else "projection"
    K = int(rng.integers(1, 5))
    if deflation == "remove" or REGISTRY[solver].joint:
        K = max(1, min(K, n // k))
    rank = int(rng.integers(1, 4))
    corpus = S is not None and rng.random() < 0.5
    if blocks:
        eigensolver = ("krylov", "arpack", "auto", "krylov")[int(rng.integers(0, 4))]
    patches = {}
    if rng.random() < 0.7:
        patches["PREFIX"] = int(rng.integers(1, 4))
        patches["_PREFIX_ENTRIES"] = 1
    if rng.random() < 0.6:
        patches["EXACT_ROWS"] = int(rng.integers(1, 4))
    if rng.random() < 0.5:
        small = int(rng.integers(n, n * n))
        patches["_EXACT_ENTRIES"] = small
        patches["_ESCALATION_ENTRIES"] = (max(1, small // 4), max(1, small // 2), small)
    if rng.random() < 0.3:
        patches["_PARALLEL_WORK"] = 0
    options = {}
    if solver == "nonneg":
        options = {"exact": False, "samples": 100} if rng.random() < 0.5 else {}
    elif solver == "bipartite":
        options = {"samples": 200}
    case = dict(seed=seed, blocks=blocks, kind=kind, A=A, S=S if corpus else None, n=n,
                solver=solver, eigensolver=eigensolver, k=k, deflation=deflation, K=K, rank=rank,
                patches=patches, options=options)
    case.update(overrides)
    if case["deflation"] == "joint":  # disjoint topics must fit
        case["K"] = max(1, min(case["K"], n // case["k"]))
    return case


@contextlib.contextmanager
def patched(patches):
    """Module constants of the certificate set for the ``with`` block."""
    saved = []
    for name, value in patches.items():
        module = rowbound if name == "_PARALLEL_WORK" else bounds
        saved.append((module, name, getattr(module, name)))
        setattr(module, name, value)
    try:
        yield
    finally:
        for module, name, value in reversed(saved):
            setattr(module, name, value)


@contextlib.contextmanager
def spy_on_trusted():
    """Every bound list the pipeline picks a certificate from, in order."""
    calls = []
    original = bounds.trusted

    def spy(bound_list, attained):
        calls.append(list(bound_list))
        return original(bound_list, attained)

    bounds.trusted = spy
    try:
        yield calls
    finally:
        bounds.trusted = original


def run_case(case):
    data = corpus_input(case["S"]) if case["S"] is not None else matrix_input(case["A"])
    with patched(case["patches"]), spy_on_trusted() as calls:
        result = run_topics(data, solver=case["solver"], k=case["k"],
                            n_components=case["K"], rank=case["rank"],
                            deflation=case["deflation"], eigensolver=case["eigensolver"],
                            solver_options=case["options"])
    return result, calls


def violations(case, result, calls, *, rtol=1e-9):
    """Every bound (considered or printed) below the brute-force optimum of its problem, as
    (where, source, bound, optimum)."""
    A = case["A"]
    k, joint = case["k"], REGISTRY[case["solver"]].joint
    A0 = (Gram.from_documents(sp.csr_array(case["S"])) if case["S"] is not None
          else Gram.from_dense(A))
    dense0 = A0.to_dense()
    scale = float(np.max(np.abs(np.linalg.eigvalsh(dense0)))) if A.size else 0.0
    atol = 1e-12 * scale
    bad = []
    K = len(result.components)
    view = A0
    together = case["deflation"] == "joint" and not joint and K > 1
    for index, (topic, bound_list) in enumerate(zip(result.components, calls[:K])):
        this = A0 if joint else view
        if together:  # the set: each topic's view is A without the OTHER topics' words
            others = [t.indices for i, t in enumerate(result.components) if i != index]
            this = A0.remove(np.concatenate(others))
        D = this.to_dense()
        best = best_topic(D, this.active(), k)
        if best is None:
            continue
        floor = best * (1 - rtol) - atol
        for value, source in bound_list:
            if value < floor:
                bad.append((f"topic {index + 1}", source, value, best))
        if topic.upper_bound < floor:
            bad.append((f"topic {index + 1} printed", topic.bound_source, topic.upper_bound,
                        best))
        if together:
            if index == K - 1 and len(set(np.concatenate(
                    [t.indices for t in result.components]).tolist())) != K * k:
                bad.append(("set", "shared words", [t.indices.tolist()
                                                   for t in result.components], ""))
        elif not joint:
            if case["deflation"] in ("remove", "joint"):
                if not np.all(view.active()[topic.indices]):  # a word an earlier topic took
                    bad.append((f"topic {index + 1}", "removed word", topic.indices.tolist(), ""))
                view = view.remove(topic.indices)
            else:
                x = np.zeros(A0.n)
                x[topic.indices] = topic.weights
                view = view.project_out(x)
    total_lists = calls[K:]
    if total_lists:
        best = best_total(dense0, k, K)
        floor = -np.inf if best is None else best * (1 - rtol) - atol
        for value, source in total_lists[0]:
            if value < floor:
                bad.append(("total", source, value, best))
        if result.total_bound is not None and result.total_bound.value < floor:
            bad.append(("total printed", result.total_bound.source, result.total_bound.value,
                        best))
    return bad
