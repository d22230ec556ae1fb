"""Leading eigenpairs of A (or of a deflated view) and the low-rank factor V = U L^(1/2).

Three paths, chosen by ``method``:

* ``"dense"``: LAPACK on the dense matrix (exact to rounding), on one BLAS thread; ``"auto"``
  takes it for n <= ``DENSE_LIMIT`` (300) words of a corpus and n <= ``DENSE_MATRIX_LIMIT``
  (1,500) for a matrix given densely (measurements below).
* ``"krylov"``: a block Krylov method on the implicit operator (A is never formed). Each step
  multiplies a block of a few vectors by A at once, which costs one pass over S and one over
  S^T; a Rayleigh-Ritz step on everything gathered so far picks the best approximations and
  gives their residuals without further products. On generated corpora of 1,000,000
  tweets and of the NYTimes shape, 9-10 block products reach residuals of 1e-8 lambda_1 from a
  random start, and a call on a deflated view (the next component) that starts from the
  previous call's Ritz block (``start=eigen.basis``) needs 4-7 (1-4 at ``CANDIDATE_TOL``, the
  accuracy a topics run asks of those calls). On a ``remove`` view the previous call's
  leading Ritz vectors carry over with their images (``previous=``, no product: see
  :meth:`~spca_cli.matrix.Gram.carried`), and one product (their residuals and 3 random
  columns) often ends the call: the later calls of a topics run on 1M generated tweets take
  [2, 2, 2, 2] sparse products where a start from the last Ritz block takes [6, 2, 2, 4], on the
  clustered generator [4, 6, 2, 2] where it takes [6, 8, 16, 8], with the same topics and
  certified ratios. ``"auto"`` takes it for any
  number of pairs, and so do ``spca info`` and ``spca spectrum`` (:func:`single_call_method`).
* ``"arpack"``: SciPy's ``eigsh`` (ARPACK, implicitly restarted Lanczos with one vector), on
  request, and the fallback when the block method has not converged after ``_MAX_PRODUCTS``
  steps. One Lanczos vector holds one direction of each eigenspace, so ARPACK can report fewer
  copies of a repeated eigenvalue than there are (three copies of 998: two reported): its
  pairs past the first are not taken as the leading ones (:attr:`Eigen.ceilings`), and the
  bounds that use them are weaker. In a lone cold call it is about twice as fast as the block
  method, but a wrong leading eigenvalue printed by ``spca info`` costs more than the second.

Multiplicities: a block Krylov space from g Gaussian columns holds min(m, g) independent
directions of every m-dimensional eigenspace, so the block method cannot miss a copy among its
first g pairs. :attr:`Eigen.verified` counts the pairs that fact covers; the bounds take the
rest through :attr:`Eigen.ceilings`.

Why the project keeps a block method of its own although SciPy has eigensolvers: none of SciPy's
or scikit-learn's can be warm-started from a block, and none reaches the accuracy the
certificates want within about 20 passes over S (the eigen step's budget). Measured on generated
corpora of 1,000,000 tweets and of the NYTimes shape (bench/results.md): ARPACK needs 21-44
single products A x per call, i.e. 42-88 passes (it cannot use fewer than its basis size);
LOBPCG 39-80 block products; scikit-learn's ``randomized_svd`` meets the count only with residuals
near 1e-5 lambda_1 and at three to seven times ARPACK's wall time. What is ours is only the choice
of subspace: every dense step (Cholesky QR, pivoted QR, the small symmetric eigenproblem) is
LAPACK's, and ARPACK and LAPACK are the oracles of the tests.

Clusters of near-equal eigenvalues (many equally strong topics) slow a block that ends inside
the cluster; the block method then grows its basis to hold the cluster rather than handing
over to one-vector Lanczos (see ``_CLUSTER_GAP``), and ARPACK is the last resort, reported as
``"krylov+arpack"``. A topics run asks for ``TOPICS_TOL`` on A and ``CANDIDATE_TOL`` on the
deflated views, the accuracy their uses need.

Each eigenpair comes with its residual norm ||A v - theta v||, which the bounds module adds to
any bound that uses an eigenvalue, so the certificates stay honest about the eigensolver's
accuracy whichever path ran.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import NamedTuple

import warnings

import numpy as np
import scipy.linalg
from scipy.sparse.linalg import ArpackError, ArpackNoConvergence, LinearOperator, eigsh

from spca_cli.errors import ConvergenceWarning
from spca_cli.seeds import random_state_of
from spca_cli.threads import one_blas_thread

__all__ = ["Eigen", "top_eigenpairs", "single_call_method", "low_rank_factor", "DENSE_LIMIT",
           "METHODS", "TOPICS_TOL", "CANDIDATE_TOL", "TAIL_TOL",
           "first_call_tolerances"]

# The dense path: LAPACK on A formed densely, on one BLAS thread. Measured on days of 1,300
# generated tweets with 2 busy cores (load 6), 6 pairs, best / worst of 3 (seconds):
#
#   words                300           600           1000          1500
#   LAPACK, 2 threads    0.04 / 1.34   0.20 / 0.29   0.48 / 5.3    2.1 / 3.9
#   LAPACK, 1 thread     0.04 / 0.08   0.07 / 0.14   0.22 / 0.28   0.40 / 0.56
#   block Krylov         0.03 / 0.05   0.03 / 0.03   0.02 / 0.02   0.02 / 0.02
#
# Two BLAS threads on busy cores spin-wait for each other (the 13-46 s days of the issue); one
# thread is steady but still loses to the block method beyond a few hundred words. So ``auto``
# forms a word co-occurrence matrix densely only up to DENSE_LIMIT words; a matrix given densely
# (``.npy`` input, where forming costs nothing) keeps LAPACK, exact to rounding, up to
# DENSE_MATRIX_LIMIT.
DENSE_LIMIT = 300
DENSE_MATRIX_LIMIT = 1500

#: Residual tolerance (relative to theta_1 of the view) of the first eigen step of a topics
#: run, derived from what each use needs:
#:
#: * the solvers (spannogram, nonneg, bipartite, threshold and tpower's start) use the leading
#:   subspace only to generate candidate supports; every candidate is scored on A' itself, so
#:   an eigenvector error never enters a reported value, it can only change which supports are
#:   tried;
#: * the bounds that use eigenvalues add the residuals: lambda_1 + r_1, Ky Fan's sum + its r_i,
#:   rank-1 + lambda_2 + r_2 + 2 r_1, the spannogram's OPT_d + lambda_{d+1} + r_{d+1} + 2 sum r_i;
#:   with r_i <= tol theta_1 each moves by at most (2d + 1) tol theta_1, i.e. 5e-5 theta_1 at
#:   rank 2: below the four digits a certified ratio is shown with;
#: * the weighted row bound, the tightest certificate on co-occurrence matrices, uses no
#:   eigenvalue at all;
#: * the reported eigenvalues are Ritz values, within r^2 / gap of the true ones (1e-10 theta_1
#:   at a 10% gap).
#:
#: ``spca info`` and ``spca spectrum`` report eigenvalues themselves and keep the default 1e-8.
#: On 200,000 tweets with 20 equally strong topics 1e-5 needs 18-34 sparse products per call
#: where 1e-8 needs 26-76 (with a basis of 6 blocks; one grown to hold the cluster needs fewer).
TOPICS_TOL = 1e-5
#: The later eigen steps of a topics run (each deflated view) first serve only the solver's
#: candidates, for which 1e-3 is plenty (a Ritz vector is within r / gap of its eigenvector,
#: and the certificate, not the eigenvalues, proves the topic); their bounds that use the
#: pairs add the larger residuals and stay valid. Only when such a bound could become the
#: tightest of a topic not proven optimal (:func:`~spca_cli.bounds.eigen_bounds_could_tighten`)
#: are the pairs refined to ``TOPICS_TOL`` and the solver run again. Measured on the two 1M
#: generators of ``bench/bench_targets.py``, four later calls with blocks of p + 3 columns:
#: 48 column products against 112 at 1e-5 (tweets), 98 against 336 (clustered spectrum), the
#: same topics and certified ratios; 1e-4 needed 58 and 162. Every one of the rank + 1 pairs
#: is driven to it, the one no candidate comes from included: left unconverged, that pair's
#: theta + r falls below its eigenvalue in 7 of 1,695 warm-started calls of an adversarial
#: search (repeated top eigenvalues, projection deflation), and the bounds add r to theta on the
#: assumption that it does not.
CANDIDATE_TOL = 1e-3
#: The first call's pairs beyond those rank + 1 (a run of K topics asks for K + 1) serve only
#: the total bounds, Ky Fan sums that add their residuals, and the reported eigenvalues, Ritz
#: values that never exceed the true ones and lie within r of them (:func:`first_call_tolerances`).
#: From a random block ``CANDIDATE_TOL`` would save products (the clustered 1M generator's first
#: call: 20 sparse products where 1e-4 takes 26, its total bound 0.03% higher). The call starts
#: from the certificate's exact rows (``coordinates``), where 1e-4 costs no product (6 sparse
#: products at 1e-3 and at 1e-4, 8 at 1e-5; tweets generator 4 at each) and gives the sharper
#: total bounds (clustered 3,154,656 where 1e-3 gives 3,155,731; tweets 3,848,307 where it gives
#: 3,851,101) and the tail's eigenvalues to 1e-4.
TAIL_TOL = 1e-4
METHODS = ("auto", "dense", "krylov", "arpack")
_EXTRA = 3  # block width beyond the p pairs asked for: clusters of eigenvalues converge together
_MAX_BLOCKS = 6  # basis size, in blocks, before a thick restart
_MAX_PRODUCTS = 45  # block products (90 sparse ones) before the block method hands over to ARPACK
# A wanted pair converges at a rate set by the gap between theta_p and the first eigenvalue the
# basis does not hold. When the residuals' rate of decrease says the block will not converge
# within _PATIENCE products, a thick restart keeps twice as many Ritz vectors as there are Ritz
# values within _CLUSTER_GAP (relative) of theta_p plus _EXTRA, up to _MAX_HOLD (memory: the
# basis and its image are 2 x 6 x hold vectors of n words), and the basis grows to 6 times that:
# a cluster then converges as one invariant subspace. The block multiplied stays p + 3 wide:
# every Ritz residual lies in the one next Krylov block, so more residuals add no direction,
# and a block made wider with random columns costs more than it saves: a product costs about
# width times a one-column one (on the clustered 1M generator from a random block, a first call
# of 22 products up to 28 wide takes 8.3 s, one of 26 products 9 wide 5.4 s).
_CLUSTER_GAP = 0.15
_MAX_HOLD = 32
_PATIENCE = 16
_SETTLED = 1e-2  # theta_p must move less than this (relative) in a step before it drives growth
_MIN_NCV = 20  # ARPACK's Lanczos basis size: its default 2p + 1 restarts too often for p <= 6


#: Eigenvalues below this fraction of lambda_1 are zero for every rank-d method (d <= this count).
RANK_RTOL = 1e-10


@dataclass(frozen=True)
class Eigen:
    """The ``p`` leading eigenpairs of a symmetric PSD operator.

    Attributes
    ----------
    values : ndarray of shape (p,)
        Eigenvalues, largest first, clipped at 0 (A is PSD; tiny negatives are rounding).
    vectors : ndarray of shape (n, p)
        Orthonormal eigenvectors, each signed so that its largest-magnitude entry is positive.
    residuals : ndarray of shape (p,)
        ||A v_i - lambda_i v_i||, an error bar on each eigenvalue.
    products : int
        Products of A with a block of vectors (0 for the dense path). On A = S^T S each costs
        one sparse product with S and one with S^T, whatever the block's width; ARPACK's
        products are with single vectors.
    method : str
        The path that produced the pairs: ``"dense"``, ``"krylov"``, ``"arpack"``, or
        ``"krylov+arpack"`` when the block method ran out of products and ARPACK finished
        (``products`` counts both).
    basis : ndarray of shape (n, b) or None
        A few more Ritz vectors than ``vectors``: pass them as ``start`` to the next call on a
        deflated view of the same A.
    block_width : int
        The widest block the block method multiplied by A (p + 3; p + 6 for the first product of
        a warm start); 0 for the dense path and ARPACK alone.
    basis_size : int
        The most vectors the block method's basis held at once: 6 blocks of p + 3, more when it
        grew to hold a cluster of eigenvalues; 0 for the dense path and ARPACK alone.
    carry : (ndarray, ndarray) or None
        The block method's leading Ritz vectors (n x c) and their images under A, for the next
        call on a view with more words removed (``previous`` of :func:`top_eigenpairs`).
    confirmed : bool
        False when the pairs are the Rayleigh-Ritz pairs of a carried basis alone, with no
        product (``confirm=False`` of :func:`top_eigenpairs`): their residuals may be above the
        tolerance asked, and an eigenvector the carried vectors miss may lead them.
    """

    values: np.ndarray
    vectors: np.ndarray
    residuals: np.ndarray
    products: int = 0
    method: str = "dense"
    basis: np.ndarray | None = None
    block_width: int = 0
    basis_size: int = 0
    carry: tuple | None = dataclasses.field(default=None, repr=False, compare=False)
    verified: int | None = None
    outside: float = np.inf
    confirmed: bool = True

    @functools.cached_property
    def ceilings(self):
        """Upper bounds on lambda_1, ..., lambda_p, the leading eigenvalues of the operator
        counted with their multiplicities: what every bound that uses an eigenvalue takes.

        A Ritz value with its residual, theta_i + r_i, bounds lambda_i only if the pairs before
        it are the leading ones, every copy of a repeated eigenvalue included. Two facts say so:

        * ``verified``: the leading pairs the method cannot have missed a copy among (LAPACK:
          all; a block Krylov method from g random columns: min(p, g), since the Krylov space
          then holds min(m, g) independent directions of every eigenspace of dimension m;
          ARPACK's one Lanczos vector: the first only). Past them, lambda_i <= lambda_v.
        * ``outside``: an upper bound on every eigenvalue of A' compressed to the orthogonal
          complement of the Ritz vectors (for PSD A', its trace: trace(A') - sum theta_i). In
          the basis [V, V_perp], A' = [[Theta, R^T], [R, C]] with ||R||_2 <= ||R||_F =
          sqrt(sum r_i^2), so by Weyl lambda_i <= (the i-th largest of theta and the
          eigenvalues of C) + ||R||_F <= max(theta_i, outside) + ||R||_F for every i, verified
          or not.

        Each ceiling is the least of those that apply; eigenvalues decrease, so the running
        minimum is one too."""
        theta = np.asarray(self.values, dtype=np.float64)
        r = np.asarray(self.residuals, dtype=np.float64)
        v = theta.size if self.verified is None else min(int(self.verified), theta.size)
        coupling = float(np.sqrt(np.sum(r ** 2)))
        ceilings = np.maximum(theta, self.outside) + coupling
        ceilings[:v] = np.minimum(ceilings[:v], theta[:v] + r[:v])
        return np.minimum.accumulate(ceilings) if ceilings.size else ceilings

    def ceiling(self, i):
        """An upper bound on lambda_{i+1} (0-based i): :attr:`ceilings`, and past the pairs
        computed the last of them or the bound on what they left out, whichever is smaller."""
        if i < len(self.values):
            return float(self.ceilings[i])
        beyond = self.outside + float(np.sqrt(np.sum(np.asarray(self.residuals) ** 2)))
        return float(min(self.ceilings[-1], beyond)) if len(self.values) else float(beyond)

    @property
    def known(self):
        """How many leading pairs are known to be the leading eigenpairs: the verified ones, or
        the leading run of those above every eigenvalue the pairs may have left out
        (theta_i > ``outside``)."""
        theta = np.asarray(self.values, dtype=np.float64)
        above = theta > self.outside
        above = theta.size if np.all(above) else int(np.argmin(above))
        v = theta.size if self.verified is None else min(int(self.verified), theta.size)
        return max(v, above)

    def tail_ceiling(self, d):
        """An upper bound on lambda_max(A' - A_d), A_d the rank-d part of the first d pairs, up
        to the first-order residual terms its callers add: A' - A_d <= A' - A_j for the j =
        min(d, :attr:`known`) pairs known to be leading (the rest of A_d is PSD), whose largest
        eigenvalue is lambda_{j+1}."""
        return self.ceiling(min(int(d), self.known))

    def ceiling_sum(self, start, count):
        """sum of ceiling(i) for i = start .. start + count - 1 (a Ky Fan sum)."""
        return float(sum(self.ceiling(i) for i in range(int(start), int(start) + int(count))))

    @property
    def unverified(self):
        """True when pairs past the first ``verified`` ones had to take a weaker ceiling than
        their own theta_i + r_i (a note says so)."""
        return self.verified is not None and self.verified < len(self.values)

    def value(self, i):
        """lambda_{i+1} (0-based i), or 0.0 beyond what was computed and beyond n."""
        return float(self.values[i]) if i < len(self.values) else 0.0

    def effective_rank(self, rank):
        """The rank d <= ``rank`` a low-rank solver can use: the eigenvalues above
        ``RANK_RTOL`` lambda_1 (zero eigenvalues add nothing to A_d but make it degenerate)."""
        lam1 = self.value(0)
        if lam1 <= 0:
            return 0
        return int(np.sum(self.values[:min(rank, len(self.values))] > RANK_RTOL * lam1))

    @property
    def sparse_products(self):
        """Sparse products with S or S^T this call made (two per product with A = S^T S)."""
        return 2 * self.products


def _sign_fix(vectors):
    # flip eigenvectors' sign to enforce deterministic output: largest |entry| positive
    idx = np.argmax(np.abs(vectors), axis=0)
    signs = np.sign(vectors[idx, np.arange(vectors.shape[1])])
    signs[signs == 0] = 1.0
    return vectors * signs


def top_eigenpairs(A, p, *, random_state=0, tol=1e-8, start=None, method="auto", previous=None,
                   coordinates=None, confirm=True):
    """The ``p`` largest eigenpairs of the :class:`~spca_cli.matrix.Gram` operator ``A``.

    Parameters
    ----------
    A : Gram
        The (possibly deflated) operator.
    p : int
        How many eigenpairs; ``p`` larger than n returns n of them.
    random_state : int, RandomState or None, default=0
        Seeds the random part of the start block; pass an int for reproducible results.
    tol : float or sequence of p floats, default=1e-8
        The iterative paths stop when every residual ||A v_i - theta_i v_i|| <= tol * theta_1,
        or, given one tolerance per pair, each <= tol[i] * theta_1 (ARPACK, which has one
        tolerance, takes the smallest).
        The bounds add the residuals, so 1e-8 moves a certificate by about 1e-8 lambda_1
        (invisible in any report) while it saves two or three block products over 1e-10.
    start : ndarray of shape (n, b), optional
        Vectors close to the wanted eigenvectors, e.g. ``basis`` of the call on the view this
        one was deflated from; the block method starts from them (masked to this view's
        words) and completes them with random vectors.
    method : {"auto", "dense", "krylov", "arpack"}, default="auto"
        ``"auto"`` is dense LAPACK for n <= ``DENSE_LIMIT``, beyond it the block method.
    previous : (Gram, Eigen), optional
        The view this one was made from by removing words, and the block method's result on
        it: its leading Ritz vectors and their images carry over (:meth:`Gram.carried`), so
        the block method starts from them with no product (the first product still holds
        random columns). Without a carry (another path, or a projection view) ``start`` is
        used instead.
    coordinates : array of int, optional
        Words whose columns A'[:, j] the caller forms anyway and keeps (a topics run: its first
        certificate's exact rows, :func:`~spca_cli.bounds.first_exact_words`). The block
        method then starts from the Rayleigh-Ritz pairs of A' on those words' unit vectors,
        whose matrix A'[J, J] and images A'[:, J] y are read from the columns: a start with no
        product (:func:`_coordinate_start`). Ignored beside a carry and on the other paths.
    confirm : bool, default=True
        With a carried basis (``previous``), multiply random columns at least once, even when
        the carried pairs have converged already: they reveal an eigenvector the carried
        vectors miss (a vocabulary they never touched). False: the call returns the
        Rayleigh-Ritz pairs of the carried vectors as they are, with no product, whatever
        their residuals (reported exactly: the images are carried), and ``Eigen.confirmed``
        False: a first guess for a caller that checks what it makes of them and, when that is
        not enough, asks again (with the same ``previous``, or ``previous=(A, that result)``;
        a topics run: when the topic found on them is not certified 1.0000 on the view).

    Returns
    -------
    Eigen

    Examples
    --------
    >>> import numpy as np
    >>> from spca_cli.matrix import Gram
    >>> A = Gram.from_dense(np.diag([3.0, 2.0, 1.0]))
    >>> top_eigenpairs(A, 2).values.round(12).tolist()
    [3.0, 2.0]
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    n = A.n
    p = int(min(p, n))
    # ARPACK finds at most n - 2 pairs of an n x n matrix: more (every eigenvalue, as
    # ``spca spectrum --top`` beyond the words asks) is LAPACK's job, whatever ``method`` says
    dense = method == "dense" or p >= n - 1 or (method == "auto" and n <= _dense_limit(A))
    S = getattr(A, "S", None)
    _check_eigen_memory(n, p, dense, 0 if S is None else S.shape[0])
    if dense:
        return _dense(A, p)
    if A.psd_margin == 0 and not np.any(A.diagonal()[A.active()] > 0):
        # a PSD view with a zero diagonal is zero (every word removed, a projection that left
        # nothing, a matrix of zeros): its eigenpairs are known, and the iterative methods
        # would start from nothing (ARPACK: "starting vector is zero")
        return _zero(A, p)
    rng = random_state_of(random_state)
    tol = _pair_tolerances(tol, p)
    if method == "arpack":
        pairs = _arpack(A, p, rng, tol)
        if pairs is not None:
            return pairs
    basis = None
    carried = previous is not None and previous[1].carry is not None
    if carried:
        basis = A.carried(previous[0], *previous[1].carry)
    elif coordinates is not None and len(coordinates):
        basis = _coordinate_start(A, coordinates, p)
    if start is not None:
        start = np.asarray(start, dtype=np.float64)
        if start.ndim != 2 or start.shape[0] != n:
            raise ValueError(f"start must have shape (n, b) with n = {n}")
        if A.mask is not None:
            start = start * A.mask[:, None]
    # the small dense steps (Gram-Schmidt, Cholesky, eigh of a 100 x 100 matrix) run on one BLAS
    # thread: two threads gain nothing at this size, and on a busy machine their spin-waits
    # made a 100 x 100 eigh take 0.1 s instead of 1 ms
    with one_blas_thread():
        run = _block_krylov(A.matmat, n, p, rng=rng, tol=tol, start=start, basis=basis,
                            probe=_PROBE_PRODUCTS if basis is not None and not carried else 0,
                            guess=carried and not confirm)
    if not run.converged:
        # the last resort (no gap after lambda_p even with the largest basis): the library's
        # Lanczos takes over, and the method says so ("krylov+arpack")
        fallback = _arpack(A, p, rng, tol)
        if fallback is not None:
            return dataclasses.replace(fallback, products=run.products + fallback.products,
                                       method="krylov+arpack", block_width=run.block_width,
                                       basis_size=run.basis_size)
    residuals, products = run.residuals, run.products
    if carried and basis is not None and previous[1].value(0) > _CARRY_RATIO * abs(run.values[0]):
        # images carried from a view far stronger than this one hold rounding of that view's
        # size, which may exceed this one's own: its residuals come from a product
        residuals = _column_norms(A.matmat(run.vectors) - run.vectors * run.values)
        products += 1
    # a call started from old Ritz vectors (a carried basis, a warm start) may stop after one
    # product, before its random columns are amplified: an eigenvector the old vectors miss is
    # then still faint, and no pair is known to be the leading one (seeds of a brute-force
    # search printed a later topic's lambda_1 of 3.86 beside an optimum of 4.49); only a cold
    # block and the probed coordinate start count their random columns
    verified = 0 if (carried or start is not None) else run.verified
    return Eigen(values=np.maximum(run.values, 0.0), vectors=_sign_fix(run.vectors),
                 confirmed=not (carried and run.products == 0),
                 residuals=residuals, products=products, method="krylov",
                 basis=run.ritz, block_width=run.block_width, basis_size=run.basis_size,
                 carry=run.carry, verified=verified,
                 outside=_outside_bound(A, run.values))


def _outside_bound(A, theta):
    """An upper bound on every eigenvalue of the view ``A`` compressed to the orthogonal
    complement of Rayleigh-Ritz vectors with values ``theta`` (unclipped): that compression is
    PSD up to ``A.psd_margin``, so its largest eigenvalue is at most its trace, trace(A') -
    sum theta_i, plus that margin once per active word. (A' + eps M is PSD, M the mask of the
    active words, and its compression's trace holds eps trace(V_perp^T M V_perp) = eps (n_active
    - ||M V||_F^2): Ritz vectors partly on removed words, as a block Krylov basis of random
    columns has, leave more than n_active - p, up to n_active, of them.) Large on a
    co-occurrence matrix (its trace spreads over thousands of eigenvalues), it decides only on
    low-rank matrices; :attr:`Eigen.ceilings` uses it."""
    diag = A.diagonal()[A.active()]
    trace = float(np.sum(diag))
    theta = np.asarray(theta, dtype=np.float64)
    rest = diag.size
    rounding = 4.0 * (diag.size + theta.size) * np.finfo(float).eps * float(np.sum(np.abs(diag)))
    return max(trace - float(np.sum(theta)), 0.0) + rest * A.psd_margin + rounding


def _coordinate_start(A, words, p):
    """(B, A'B): the leading Ritz vectors of A' on the unit vectors of ``words`` and their
    images, from the columns A'[:, words] alone (no product with S): 2 (p + 3) of them, or as
    many as hold every Ritz value within ``_CLUSTER_GAP`` of the p-th and 3 more (at most
    ``_MAX_HOLD``), so that no Ritz value of these words just below theta_p is left for the
    probe to resolve (:func:`_probe_clear`; 100,000 clustered tweets, 18 Ritz values within 6%
    below the 6th: a start without them takes 16 block products where this one takes 6).

    The words of largest diagonal carry most of a co-occurrence matrix's leading eigenvectors:
    on 1,000,000 clustered tweets (20 equally strong topics) the Ritz values on the 256 first
    exact rows are within 0.2% of the 2nd-6th eigenvalues (11% for the 1st), and the first
    eigen step of a topics run takes 3 block products from there where a random block takes 10
    (0.44 s against 1.4 s), the columns costing nothing more: the certificate forms them anyway.
    The words need not hold the leading eigenvectors: the call stops only on residuals computed
    from exact images, and not before random columns have gone through ``_PROBE_PRODUCTS``
    products of their own and resolved what lies below theta_p off the basis
    (:func:`_probe_clear`)."""
    words = np.asarray(words, dtype=np.int64).ravel()
    # each word once: a repeated one put its column into the images twice but its unit vector
    # into the basis once (Ritz values twice the eigenvalues, reported with zero residuals)
    words = words[np.sort(np.unique(words, return_index=True)[1])]
    # formed here and kept for the certificate, which forms them anyway; A'[J, J] and the
    # images are read from them
    A.keep_columns(words)
    T = A.submatrix(words)
    b = min(A.n, p + _EXTRA)
    top = min(words.size, max(2 * b, _MAX_HOLD))
    # one BLAS thread, as for every small dense step here: on a busy machine two threads
    # spin-waiting for each other took this 256 x 256 eigh 0.65 s of CPU (airline tweets, KOS)
    # where one takes 5 ms
    with one_blas_thread():
        theta, Y = _leading_eigh(0.5 * (T + T.T), top)
        theta, Y = theta[::-1], Y[:, ::-1]
        count = min(words.size, max(2 * b, _cluster_width(theta, p, b, A.n)))
        Y = np.ascontiguousarray(Y[:, :count])
        B = np.zeros((A.n, count))
        B[words] = Y
        return B, A.columns_product(words, Y)


def first_call_tolerances(p, sharp):
    """Per-pair tolerances of a topics run's first eigen step: ``TOPICS_TOL`` for the ``sharp``
    leading pairs (rank + 1, what the solvers and the per-topic bounds use), ``TAIL_TOL`` for
    the rest (total bounds and reported eigenvalues only; see ``TAIL_TOL``)."""
    tol = np.full(p, TAIL_TOL)
    tol[:sharp] = TOPICS_TOL
    return tol


def _check_eigen_memory(n, p, dense, documents):
    """Refuse, with the estimate, an eigen step whose arrays cannot fit in memory: A formed
    densely (with LAPACK's copy) or a Lanczos/block basis of about 3p vectors, plus the
    products S X of a block of vectors with S's ``documents`` rows."""
    from spca_cli.limits import check_memory

    block = 3 * max(p, 8) + 10
    products = 8 * documents * block
    if dense:
        check_memory(2 * 8 * n * n + products, f"the {p:,} leading eigenpairs of a "
                                               f"{n:,}-word matrix (dense)")
    else:
        check_memory(8 * n * block + products,
                     f"{p:,} eigenpairs of a {n:,}-word matrix over {documents:,} documents")


def _dense_limit(A):
    """Words up to which ``auto`` takes LAPACK: more for a matrix given densely."""
    return DENSE_LIMIT if getattr(A, "S", None) is not None else DENSE_MATRIX_LIMIT


def single_call_method(A):
    """The ``method`` of a lone call (``spca info``, ``spca spectrum``): LAPACK when small, else the
    block method, whose random block finds every copy of a repeated eigenvalue among the pairs
    asked for (ARPACK, twice as fast cold, may not)."""
    return "dense" if A.n <= _dense_limit(A) else "krylov"


def _zero(A, p):
    """The p leading eigenpairs of a zero view: eigenvalue 0, unit vectors of its words."""
    words = np.concatenate([np.flatnonzero(A.active()), np.flatnonzero(~A.active())])[:p]
    vectors = np.zeros((A.n, p))
    vectors[words, np.arange(p)] = 1.0
    return Eigen(values=np.zeros(p), vectors=vectors, residuals=np.zeros(p), method="zero",
                 basis=vectors, outside=0.0)


def _dense(A, p):
    n = A.n
    # one BLAS thread: two spin-wait for each other on busy cores (table above)
    with one_blas_thread():
        # eigh returns ascending eigenvalues; we keep the top p and reverse them to largest first
        vals, vecs = _leading_eigh(A.to_dense(), p)
    vals, vecs = vals[::-1], _sign_fix(np.ascontiguousarray(vecs[:, ::-1]))
    residuals = np.linalg.norm(A.matmat(vecs) - vecs * vals, axis=0)
    return Eigen(values=np.maximum(vals, 0.0), vectors=vecs, residuals=residuals, products=0,
                 method="dense", basis=vecs)


def _leading_eigh(M, count):
    """The ``count`` largest eigenpairs of the dense symmetric ``M``, ascending: LAPACK's subset
    driver, or the full decomposition when that one returns fewer pairs than asked or fails.
    It can return fewer when the eigenvalue is repeated (I + 0.01 J: 1.3 and 1 29 times gave 2
    of 4), and its MRRR algorithm raised "Internal Error" on a 42-word matrix with entries from
    1e-6 to 2e8 and a repeated eigenvalue (a topics run's coordinate start, ``spca spectrum``);
    the full decomposition does neither."""
    size = M.shape[0]
    try:
        vals, vecs = scipy.linalg.eigh(M, subset_by_index=[size - count, size - 1])
    except np.linalg.LinAlgError:
        vals = vecs = None
    if vals is None or vals.size < count:
        vals, vecs = scipy.linalg.eigh(M, driver="evd")
        vals, vecs = vals[size - count:], vecs[:, size - count:]
    return vals, vecs


def _pair_tolerances(tol, p):
    """``tol`` as one tolerance per pair, shape (p,)."""
    tol = np.asarray(tol, dtype=np.float64)
    if tol.ndim == 0:
        return np.full(p, float(tol))
    if tol.shape != (p,):
        raise ValueError(f"tol must be a float or one per pair ({p}), got shape {tol.shape}")
    return tol


def _arpack(A, p, rng, tol):
    count = [0]

    def matmat(X):
        count[0] += 1 if X.ndim == 1 else X.shape[1]
        return A.matmat(X)

    n = A.n
    op = LinearOperator(A.shape, matvec=matmat, matmat=matmat, dtype=np.float64)
    v0 = rng.uniform(0.5, 1.5, size=n)  # a positive start: A is often entrywise nonnegative
    try:
        vals, vecs = eigsh(op, k=p, which="LA", v0=v0, tol=float(np.min(tol)),
                           ncv=min(n, max(2 * p + 1, _MIN_NCV)))
    except ArpackError:
        # ARPACK refuses an operator that maps its start to zero (a view that is zero up to
        # rounding); the block method, which reports what it reaches, answers instead
        return None
    except ArpackNoConvergence as exc:
        vals, vecs = exc.eigenvalues, exc.eigenvectors
        warnings.warn(f"eigensolver: ARPACK converged for {len(vals)} of {p} eigenpairs; "
                      "the bounds add the residuals, so they stay valid but may be loose",
                      ConvergenceWarning, stacklevel=3)
    # eigsh returns ascending eigenvalues; reverse them to largest first
    order = np.argsort(vals)[::-1]
    vals, vecs = vals[order], _sign_fix(np.ascontiguousarray(vecs[:, order]))
    residuals = np.linalg.norm(A.matmat(vecs) - vecs * vals, axis=0)
    # one Lanczos vector holds one direction of each eigenspace: a second copy of a repeated
    # eigenvalue appears only through rounding, if at all (three copies of 998 gave two), and
    # a start orthogonal to the leading eigenvector (the same start after projection deflation
    # took out its own Ritz vector) misses lambda_1 itself: no pair is known to be leading
    return Eigen(values=np.maximum(vals, 0.0), vectors=vecs, residuals=residuals,
                 products=count[0], method="arpack", basis=vecs, verified=0,
                 outside=_outside_bound(A, vals))


def _orthonormal(W, Q, scale, *, again=True):
    """Orthonormal columns spanning W minus its part in span(Q) (Q orthonormal, may be None);
    columns that vanish (relative to ``scale``) are dropped.

    Block Gram-Schmidt against Q, then Cholesky QR twice (CholQR2: a tall thin QR in two small
    Gram matrices, several times faster than Householder here); a Gram matrix that is not
    numerically positive definite falls back to LAPACK's pivoted Householder QR.

    Each pass over Q (n x c) costs about as much as the whole small algebra, so passes are
    spent only where floating point needs them: the projection is repeated only when it
    removed more than 1 - 1/sqrt(2) of a column's norm (the "twice is enough" criterion of
    Daniel, Gragg, Kaufman and Stewart: otherwise one pass already leaves the column orthogonal
    to working precision, as for the residual blocks of Lanczos, orthogonal to Q in exact
    arithmetic), and the Cholesky steps are projected once more only when the block was
    ill-conditioned enough to amplify the rounding left in it. Column norms come from the Gram
    matrix's diagonal and each Cholesky step multiplies by the small inverse factor (one GEMM)
    instead of a triangular solve over n rows.
    """
    W = np.array(W, dtype=np.float64, order="F")  # our own copy, updated in place
    has_q = Q is not None and Q.shape[1] > 0
    if has_q:
        before = _column_norms(W)
        W -= Q @ (Q.T @ W)
        if np.any(_column_norms(W) < _TWICE * before):
            W -= Q @ (Q.T @ W)
    norms = _column_norms(W)
    keep = norms > 1e-12 * scale
    if not np.all(keep):
        W, norms = W[:, keep], norms[keep]
    if W.shape[1] == 0:
        return np.ascontiguousarray(W)
    try:
        conds = []
        for _ in range(2):
            inv_norms = 1.0 / norms
            # the Gram matrix of the unit columns, whose Cholesky factor stays well scaled
            L = np.linalg.cholesky((W.T @ W) * np.outer(inv_norms, inv_norms))
            W = W @ (inv_norms[:, None] * _inverse_lower(L).T)
            conds.append(np.linalg.cond(L))
            norms = _column_norms(W)
        if conds[1] > 1e4:  # second pass still far from orthonormal
            raise np.linalg.LinAlgError
        first_cond = conds[0]
    except np.linalg.LinAlgError:
        W, R, _ = scipy.linalg.qr(W / _column_norms(W), mode="economic", pivoting=True,
                                  check_finite=False)
        diag = np.abs(np.diag(R))
        W = np.asfortranarray(W[:, diag > 1e-10 * diag[0]])
        first_cond = np.inf
    if has_q and W.shape[1] and first_cond > _AMPLIFIED:
        # the factor's inverse multiplied what rounding left of Q in W by up to its condition
        # number: project once more. A column that loses most of its length there was that
        # rounding (dropped); the others are made orthonormal again, against Q too (only
        # renormalised, a block with dependent columns came back 4e-4 from orthonormal, and
        # normalised among themselves without Q, 0.76 from orthogonal to Q: Ritz values above
        # the eigenvalues)
        W -= Q @ (Q.T @ W)
        W = W[:, _column_norms(W) > 0.5]
        gram = W.T @ W if W.shape[1] and again else None
        if gram is not None and np.max(np.abs(gram - np.eye(W.shape[1]))) <= _NEAR_UNIT:
            # what the projection took was rounding: the block is orthonormal to 1e-6, and one
            # Cholesky step, whose factor is then conditioned within 1e-5 of 1, makes it
            # orthonormal without amplifying what is left of Q (a second projection and
            # CholQR2 cost 60 ms a block of 15 columns at 197,316 words)
            W = W @ _inverse_lower(np.linalg.cholesky(0.5 * (gram + gram.T))).T
        elif gram is not None:
            W = _orthonormal(W, Q, 1.0, again=False)
        elif W.shape[1]:  # (once is enough: the columns were orthonormal to Q's rounding)
            W /= _column_norms(W)
    return np.ascontiguousarray(W)


# a block whose Gram matrix is within this of the identity (entrywise) after the projection
# that follows an amplifying Cholesky step gets one more Cholesky step instead of the whole
# procedure (_orthonormal)
_NEAR_UNIT = 1e-6
# Daniel-Gragg-Kaufman-Stewart: one projection pass suffices for a column that kept at least
# this share of its norm
_TWICE = 1.0 / np.sqrt(2.0)
# a first Cholesky factor better conditioned than this multiplies the rounding of Q left in the
# block by at most this much (1e-14 from 1e-16): no further projection
_AMPLIFIED = 1e2
# A call started from vectors it did not find itself (a topics run's first call, from the
# certificate's exact rows) multiplies at least this many blocks, the random columns of the first
# carried on as their own Krylov sequence. Those vectors can span an (almost) invariant subspace
# that misses a leading eigenvector: with its residuals at zero after one product, the call
# stopped with the random columns' Rayleigh quotients still below theta_p (a 60-word matrix whose
# leading eigenvalues 27, 12, 8, 5 lie on 8 words and the start on the other 52: 3.7, 3.4, 3.2,
# 3.0 reported; tests/test_coordinate_start.py). Three products amplify the probe as a cold start's
# first three do; on the 1M generators the first call took 3 block products anyway.
_PROBE_PRODUCTS = 3
# ... and carries it on until its leading Ritz vector below theta_p holds at most this share of
# any eigenvector above theta_p (:func:`_probe_clear`). Three products alone left a leading
# eigenvector outside the start's words unfound whenever the words spanned an invariant subspace
# and the rest of the spectrum was spread below theta_p (a 3-word block of eigenvalue 10 among
# 300 of up to 8.5, the start's pairs 9.9 ... 9.3: reported 9.9, 9.7, 9.5, 9.3, and the run
# certified a topic of 9.9 optimal beside one of 10). After the 3 products the ratio was
# 0.09-0.20 on KOS, the airline tweets and 100,000 generated tweets (no further product); on
# 100,000 clustered tweets (20 equally strong topics) 0.35: 3 block products more, 12 sparse
# products where e949117 took 8 and a random block 26.
_PROBE_GAP = 0.25
# ... or until it has gone through this many products (a cold start's patience): below theta_p a
# dense spectrum (300 eigenvalues up to 8.5, theta_p the top one) can keep it from resolving,
# where 16 products of a random block amplify an eigenvalue 5% above the rest some 700 times.
_PROBE_LIMIT = 16
# a view whose theta_1 is below the carrying view's by more than this factor gets its residuals
# from a product: the carried images' rounding is of the larger view's size (text: 4-6)
_CARRY_RATIO = 1e3
# a carried direction that kept less of its squared norm than this (1% of its length) lies
# nearly all on removed words: it would add little and multiply its image's rounding by > 100
_CARRY_KEPT = 1e-4


def _orthonormal_pair(B, AB, room=None):
    """Orthonormal columns spanning ``B`` and their images, given AB: both multiplied by the
    same small transform (the Gram matrix's inverse square root on the directions that kept
    at least ``_CARRY_KEPT`` of their squared norm, then one Cholesky QR pass), so no product
    is needed.

    B is an orthonormal Ritz block with the removed words masked out (B^T B <= I): a direction
    that kept a share s of its norm has its image's rounding (the cancellation in
    :meth:`~spca_cli.matrix.Gram.carried`, of the size of A's entries on the removed words)
    multiplied by 1/sqrt(s) when it is normalised. A cut at s > 1e-10 s_max would report
    residuals 1e-7 theta_1 below the true ones on a dense matrix with a strong removed word
    (lambda_1 1e9 times the next view's; tests/test_carried_residuals.py).

    ``room(c)``, given, returns the two (n, c) arrays the pair is written to (the block
    method's buffers, into which a copy of a 16-column pair costs 0.1 s at 197,316 words).

    Both transforms are composed in the small space: the Cholesky step's Gram matrix
    G^T (B^T B) G comes from B^T B, so each of B and AB is multiplied once (at 197,316 words
    and 18 columns 26 ms for the pair against 56 ms with B G formed first; the columns come out
    orthonormal to 1e-15 either way)."""
    gram = B.T @ B
    gram = 0.5 * (gram + gram.T)
    s, U = np.linalg.eigh(gram)
    keep = s > _CARRY_KEPT
    if not np.any(keep):
        return B[:, :0], AB[:, :0]
    G = U[:, keep] / np.sqrt(s[keep])
    whitened = G.T @ gram @ G
    G = G @ _inverse_lower(np.linalg.cholesky(0.5 * (whitened + whitened.T))).T
    if room is None:
        return B @ G, AB @ G
    Q, AQ = room(G.shape[1])
    np.matmul(B, G, out=Q)
    np.matmul(AB, G, out=AQ)
    return Q, AQ


def _inverse_lower(L):
    """L^-1 of a small lower-triangular factor: one GEMM with it replaces a triangular solve
    over all n rows."""
    return scipy.linalg.solve_triangular(L, np.eye(L.shape[0]), lower=True, check_finite=False)


def _column_norms(W):
    return np.sqrt(np.einsum("ij,ij->j", W, W))


def _block_krylov(matmat, n, p, *, rng, tol, start=None, basis=None, probe=0, guess=False):
    """Thick-restart block Lanczos with full reorthogonalisation.

    The basis Q (n x c, orthonormal) and AQ are kept together, so the Rayleigh-Ritz matrix
    T = Q^T A Q, the Ritz pairs (theta, Q y) and their residuals A Q y - theta Q y cost no
    extra products. Each step adds the orthonormalised residuals of the top b Ritz vectors (in
    exact arithmetic the same span as the next block of the block Krylov space) and multiplies
    them by A once. When the basis reaches ``_MAX_BLOCKS`` blocks it is cut back to the top 2b
    Ritz vectors (a thick restart, which keeps them exact: A Q y is kept along with Q y); over
    a cluster of eigenvalues that would stall, both numbers grow to hold the cluster.

    ``basis``, vectors and their images under A carried from the last call
    (:meth:`~spca_cli.matrix.Gram.carried`), starts the basis with no product; the first
    block is then their leading residuals and max(p, ``_EXTRA``) random columns, and the call ends
    only after that product (the random columns reach every eigenvector, see below).

    ``guess``: with a basis, the call ends at once, with the Rayleigh-Ritz pairs of the basis
    and no product (``confirm=False`` of :func:`top_eigenpairs`).

    ``probe``: with a basis, the call ends only after this many products, and until then each
    block carries on the images of the last block's random-born columns (a Krylov
    sequence of their own, orthogonalised against the basis), so that an eigenvector the basis
    misses is amplified as in a cold start instead of resting at its random Rayleigh quotient
    (see ``_PROBE_PRODUCTS``).

    Returns a :class:`_KrylovRun`.
    """
    # a few more than asked: clusters converge together. A warm start takes the leading p + 3
    # Ritz vectors of the last call and 3 random columns: on the clustered 1M generator they
    # reached TOPICS_TOL in 228 column products over four deflated views where starting from
    # 31 old vectors took 336 (and at CANDIDATE_TOL 98, where that first product alone has 31
    # columns)
    tol = _pair_tolerances(tol, p)
    b = min(n, p + _EXTRA)
    # random columns beside a start or a carried basis: at least one per wanted pair, so that no
    # copy of a repeated eigenvalue among them can be missed (Eigen.verified); a cold block is
    # random through and through
    spare = min(n, max(_EXTRA, p))
    hold = b  # a thick restart keeps 2 * hold Ritz vectors (more over a cluster)
    buffers = []  # (Qbuf, AQbuf) once made

    def make_buffers(carried):
        """The basis's and its image's buffers in Fortran order (the first c columns are then
        one contiguous block for BLAS), with room for ``carried`` columns and two blocks (a
        probed start: its ``probe`` blocks of up to b + spare columns, which growing would
        copy the basis for, 0.3 s at 197,316 words); they grow by half when a block would not
        fit (up to max_cols + b): a warm call that converges in two products never holds the
        room of six blocks (dupes-1M, 197,316 words: its second call peaked 80 MB lower).
        A thick restart keeps the carried columns whole."""
        nonlocal hold
        hold = max(hold, -(-carried // 2))
        shape = (n, min(_basis_limit(n, hold) + b, carried + max(2 * b, probe * (b + spare))))
        buffers[:] = [np.empty(shape, order="F"), np.empty(shape, order="F")]
        return buffers[0][:, :carried], buffers[1][:, :carried]

    if basis is not None:
        basis = _orthonormal_pair(*basis, room=make_buffers)
        if basis[0].shape[1] == 0:
            basis = None  # (no direction kept: no buffers made for it)
    max_cols = _basis_limit(n, hold)
    # Gaussian columns among the Krylov sequence's generators: its space then holds
    # min(m, random) independent directions of every m-dimensional eigenspace, so no copy of a
    # repeated eigenvalue among the first ``random`` pairs can be missed (Eigen.ceilings)
    random = b
    if basis is not None:
        W = None  # the carried basis is the first "block"
        random = 0  # (its random columns come with the first product)
    else:
        W = rng.standard_normal((n, b))
    if W is not None and start is not None and start.shape[1]:
        # the warm block always gets ``spare`` random columns on top: old Ritz vectors alone
        # can be (numerically) orthogonal to an eigenvector of the deflated view, which the
        # Krylov space then never finds while the others' residuals look converged (seen on
        # two disjoint vocabularies); random columns reach every eigenvector.
        warm = start[:, :b]
        random = max(spare, b - warm.shape[1])
        W = np.column_stack([warm, W[:, :random]])
    if W is not None:
        W = _orthonormal(W, None, 1.0)
    if not buffers:
        make_buffers(0)
    Qbuf, AQbuf = buffers
    c = 0
    T = np.empty((0, 0))
    if basis is not None:
        c = basis[0].shape[1]  # (already in the buffers)
        T = basis[0].T @ basis[1]
        T = 0.5 * (T + T.T)
    products = 0
    # the probe (a basis given, not carried): on until its own Ritz pairs show nothing the basis
    # misses above theta_p (:func:`_probe_clear`); ``probed``: its columns in the basis since
    # the last thick restart
    probing, probed = probe > 0, []
    scale = 0.0
    done = False
    last_theta_p = None
    # the widest block multiplied (a warm start's first has 3 random columns more), the largest
    # basis held
    widest = largest = 0
    history = []  # after each product, the largest residual / (its tolerance), of the wanted
    while True:
        if W is not None:
            j = W.shape[1]
            if c + j > Qbuf.shape[1]:
                room = max(c + j, min((3 * Qbuf.shape[1]) // 2, max_cols + b))
                Qbuf, AQbuf = _grown(Qbuf, c, room), _grown(AQbuf, c, room)
            # (the product written straight into the image's buffer: no copy of it)
            Z = matmat(W, out=AQbuf[:, c:c + j])
            products += 1
            widest = max(widest, j)
            Qbuf[:, c:c + j] = W
            top = Qbuf[:, :c].T @ Z  # (c, j) new columns of T
            corner = W.T @ Z
            T = np.block([[T, top], [top.T, 0.5 * (corner + corner.T)]])
            c += j
            if probing:
                probed.extend(range(c - min(spare, j), c))
                # (the images the probe multiplies next, kept apart: a thick restart below
                # writes over the buffer that holds Z)
                born = Z[:, -spare:].copy()
        largest = max(largest, c)
        Q, AQ = Qbuf[:, :c], AQbuf[:, :c]
        # eigh returns ascending eigenvalues; reverse them to largest first
        theta, Y = scipy.linalg.eigh(T, check_finite=False)
        theta, Y = theta[::-1], Y[:, ::-1]
        scale = max(scale, abs(theta[0]), 1e-300)
        q = min(b, len(theta))
        Yb = np.ascontiguousarray(Y[:, :q])
        V = Q @ Yb
        R = AQ @ Yb - V * theta[:q]
        res = _column_norms(R)
        # (fewer than p Ritz pairs while the basis is narrower than p)
        wanted_res, wanted_tol = res[:p], tol[:min(p, q)]
        converged = bool(np.all(wanted_res <= wanted_tol * scale))
        if probing and converged and products >= probe:
            probing = (products < _PROBE_LIMIT
                       and not _probe_clear(T, Q, AQ, probed, theta[min(p, len(theta)) - 1]))
        done = products >= max(probe, 1) and converged and not probing
        if guess and basis is not None:
            done = True  # (the basis's own pairs, whatever their residuals: no fallback)
            break
        if done or products >= _MAX_PRODUCTS:
            break
        theta_p = theta[min(p, len(theta)) - 1]
        settled = last_theta_p is not None and abs(theta_p - last_theta_p) <= _SETTLED * scale
        last_theta_p = theta_p
        # the wanted residual furthest from its tolerance, in units of theta_1
        history.append(float(np.max(wanted_res / wanted_tol)))
        slow = settled and _projected_products(history, scale) > _PATIENCE
        wide = _cluster_width(theta, p, hold, n) if slow else hold
        if wide > hold:
            # the wanted pairs sit in a cluster: from now on the basis holds all of it
            hold = wide
            max_cols = _basis_limit(n, hold)
            if max_cols + b > Qbuf.shape[1]:
                # at least half as wide again: a cluster's count grows a little at a time, and
                # each growth copies the basis (14 copies in one clustered 1M-tweet call)
                room = min(max(max_cols + b, (3 * Qbuf.shape[1]) // 2),
                           _basis_limit(n, min(n, _MAX_HOLD)) + b)
                Qbuf, AQbuf = _grown(Qbuf, c, room), _grown(AQbuf, c, room)
                Q, AQ = Qbuf[:, :c], AQbuf[:, :c]
        if c + b > max_cols:
            keep = min(2 * hold, len(theta))
            Yk = np.ascontiguousarray(Y[:, :keep])
            Qbuf[:, :keep], AQbuf[:, :keep] = Q @ Yk, AQ @ Yk
            c = keep
            Q, AQ = Qbuf[:, :c], AQbuf[:, :c]
            T = np.diag(theta[:keep])
            # the Ritz vectors are now the basis itself: a call that ends below (an invariant
            # basis) carries them over in this basis, not in the one before the restart
            theta, Y = theta[:keep], np.eye(keep)
            probed = []
        # converged wanted pairs are locked: their residuals would only add noise and width
        live = np.ones(q, dtype=bool)
        live[:p] = wanted_res > wanted_tol * scale
        # every Ritz residual lies in the span of A times the last block minus its part in the
        # basis (block Krylov), so j of them span what more would: a wider set only adds
        # rounding for the QR to sort out
        extra = 0  # random-born columns at the end of fresh
        if W is None:
            # a carried basis: its residuals span no single block; the leading ones, and random
            # columns as in a warm start
            fresh = np.column_stack([R[:, live], rng.standard_normal((n, spare))])
            j, extra = fresh.shape[1], spare
        elif probing:
            # the probe: the last block's random-born columns (last in it: the orthonormal
            # factor is triangular) multiplied once more
            fresh = np.column_stack([R[:, live], born])
            j, extra = fresh.shape[1], born.shape[1]
        else:
            fresh = R[:, live][:, :j]
        if q < b:  # a basis narrower than the block (columns dropped): random ones for the rest
            fresh = np.column_stack([fresh, rng.standard_normal((n, b - q))])
            extra += b - q
        # no more columns than the n - c dimensions outside the basis (a small matrix, or a
        # thick restart that kept 2 * hold of them): orthogonalised against Q, more would be
        # rounding noise, and the basis no longer orthonormal (Ritz values above lambda_1)
        room = max(n - c, 0)
        if extra and fresh.shape[1] > room:
            # the random-born columns first: cut, they left a basis that is not a Krylov space
            # (a carried or a coordinate start) looking invariant when only the residuals of
            # its leading Ritz vectors vanished (a 12-word matrix, 5 three times, lost one 5)
            fresh = np.column_stack([fresh[:, -extra:], fresh[:, :-extra]])
        if products == 0:  # a basis start's first block: its random columns
            random = min(extra, room)
        W = _orthonormal(fresh[:, :room], Q, scale)
        if W.shape[1] == 0 or c >= n:
            # the basis holds an invariant subspace: the Ritz pairs are exact up to their
            # residuals, which are reported whatever they are
            done = True
            break
    # the leading 2b Ritz vectors and their images, for a next call on fewer words; a guess
    # passes on every direction it was given (cut to 2b, fewer pairs than the call that
    # carried them asked for, a call started from it took 14 sparse products where one
    # started from all of them took 2)
    Yc = np.ascontiguousarray(Y if guess else Y[:, :min(2 * b, len(theta))])
    carry = (Q @ Yc, AQ @ Yc)
    # a basis of every dimension holds every eigenvector
    verified = min(p, n if c >= n else random)
    return _KrylovRun(values=theta[:p], vectors=np.ascontiguousarray(V[:, :p]),
                      residuals=res[:p], products=products, ritz=V, converged=done,
                      block_width=widest, basis_size=largest, carry=carry, verified=verified)


def _probe_clear(T, Q, AQ, probed, theta_p):
    """Whether the probe's columns (positions ``probed`` of the basis) show that no eigenvalue
    above ``theta_p`` is missing: the leading Ritz pair (mu, r) of A on them below theta_p has
    r <= ``_PROBE_GAP`` (theta_p - mu).

    For a unit vector u with Rayleigh quotient mu and residual r, any eigenvector v of A with
    eigenvalue lambda has |v^T u| (lambda - mu) <= r: the probe's best vector below theta_p
    holds at most ``_PROBE_GAP`` of any eigenvector above theta_p, i.e. the probe's Krylov
    sequence (random-born, reaching every eigenvector) resolved the top of what the basis lacks
    below theta_p. Ritz pairs of the probe at or above theta_p lie in the span of the basis,
    whose leading pairs have converged."""
    if not probed:
        return False
    idx = np.asarray(probed)
    Tp = T[np.ix_(idx, idx)]
    mu, Y = scipy.linalg.eigh(0.5 * (Tp + Tp.T), check_finite=False)
    below = np.flatnonzero(mu < theta_p)
    if not below.size:
        return False
    i = below[-1]  # (ascending)
    y = Y[:, i]
    r = float(np.linalg.norm(AQ[:, idx] @ y - mu[i] * (Q[:, idx] @ y)))
    return r <= _PROBE_GAP * (theta_p - mu[i])


class _KrylovRun(NamedTuple):
    values: np.ndarray  # (p,) Ritz values, largest first
    vectors: np.ndarray  # (n, p) their Ritz vectors
    residuals: np.ndarray  # (p,) ||A v - theta v||
    products: int  # block products with A
    ritz: np.ndarray  # (n, b) the leading Ritz block, to start the next call from
    converged: bool
    block_width: int  # the widest block multiplied
    basis_size: int  # the most basis vectors held at once
    carry: tuple  # (leading Ritz vectors, their images) for the next call
    verified: int  # leading pairs no copy of a repeated eigenvalue can be missing among


def _basis_limit(n, b):
    return min(n, max(_MAX_BLOCKS * b, 4 * b))


def _grown(buf, used, width):
    """A wider Fortran-order copy of ``buf`` holding its first ``used`` columns."""
    out = np.empty((buf.shape[0], width), order="F")
    out[:, :used] = buf[:, :used]
    return out


def _projected_products(history, target, steps=3):
    """Block products in all to bring the last residual of ``history`` (one per product) down to
    ``target``, at the mean rate of decrease over the last ``steps`` products (inf if none)."""
    if len(history) <= steps:
        return 0.0
    now, before = history[-1], history[-1 - steps]
    if now <= target:
        return float(len(history))
    if now >= before or now <= 0:
        return np.inf
    rate = np.log(now / before) / steps  # < 0
    return len(history) + np.log(target / now) / rate


def _cluster_width(theta, p, b, n):
    """How many Ritz vectors hold every Ritz value within ``_CLUSTER_GAP`` of theta_p, plus
    ``_EXTRA`` (never less than ``b``, at most ``_MAX_HOLD`` and n).

    When the whole basis lies within the gap the cluster's end is not in sight yet: the count
    is then the basis size plus ``_EXTRA``, judged again after the next product.
    """
    if len(theta) < p or theta[p - 1] <= 0:
        return b
    inside = int(np.count_nonzero(theta >= (1.0 - _CLUSTER_GAP) * theta[p - 1]))
    return int(min(n, _MAX_HOLD, max(b, inside + _EXTRA)))


def low_rank_factor(eigen, d):
    """V = U_d L_d^(1/2) of shape (n, d), so that A_d = V V^T."""
    d = min(d, len(eigen.values))
    return np.ascontiguousarray(eigen.vectors[:, :d] * np.sqrt(eigen.values[:d]))


#: ``spca spectrum`` takes every eigenvalue from one LAPACK call when it is asked for more than
#: this share of them, or when the dense problem (A, or S S^T when the documents are fewer than
#: the words) has at most ``ALL_EIGENVALUES_WORDS`` rows
ALL_EIGENVALUES_SHARE = 0.25
ALL_EIGENVALUES_WORDS = 2000


def leading_eigenvalues(A, top):
    """The ``top`` largest eigenvalues of the :class:`~spca_cli.matrix.Gram` operator ``A``,
    largest first (all n of them when ``top`` >= n): ``spca spectrum``'s, which needs no
    eigenvectors.

    Asked for more than ``ALL_EIGENVALUES_SHARE`` of them, or when the dense problem has at most
    ``ALL_EIGENVALUES_WORDS`` rows, they come from one dense LAPACK call for every eigenvalue
    (``scipy.linalg.eigvalsh``), when it fits in memory: its cost does not grow with ``top``,
    while the iterative methods' grows with its square. For A = S^T S with fewer documents m
    than words the call is on the m x m matrix S S^T, which has the same nonzero eigenvalues
    (the other n - m are 0) at a fraction of the cost (KOS, 3,430 documents x 6,906 words, on
    one busy core: 600 pairs by the block method 55 s, every eigenvalue of A by LAPACK 30 s,
    of S S^T 5 s). Otherwise :func:`top_eigenpairs` finds them as for any single call; the
    topics solvers' eigen step is :func:`top_eigenpairs` itself, untouched by this.
    """
    from spca_cli.limits import dense_matrix_bytes, memory_exceeded

    n = A.n
    top = min(int(top), n)
    S = None if A.is_deflated else A.S
    order = n if S is None else min(n, S.shape[0])
    # the dense matrix, LAPACK's copy, and for S S^T the sparse product it is made from
    if ((top > ALL_EIGENVALUES_SHARE * n or order <= ALL_EIGENVALUES_WORDS)
            and memory_exceeded(dense_matrix_bytes(order, 3)) is None):
        # one BLAS thread: two spin-wait for each other on busy cores (see _dense)
        with one_blas_thread():
            dense = A.to_dense() if order == n else (S @ S.T).toarray()
            values = scipy.linalg.eigvalsh(dense, overwrite_a=True, check_finite=False)
        values = np.concatenate([values[::-1], np.zeros(n - order)])
        return np.maximum(values[:top], 0.0)
    return top_eigenpairs(A, top, method=single_call_method(A)).values
