"""The products with A = S^T S when the rows of S live on the workers of a Dask cluster.

A = sum over row blocks S_b of S_b^T S_b, so every question :class:`~spca_cli.matrix.Gram`
asks of its backend is a sum of the same question asked of each block. The blocks of one
worker are joined into one :class:`Shard` there (a :class:`~spca_cli.backend.LocalBackend` over
its rows, the same numba kernels), and each question is one task per shard whose answers are
added on the client: only the question (an n x b block, a few word ids) goes out and only
n-vectors, n x b blocks or |J| x |J| submatrices come back. One fused task per worker costs a
fixed few tens of milliseconds per product; a task per block plus a tree of additions costs
2-3 times more (docs/dask.md, "Overhead per product").
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from spca_cli.backend import LocalBackend, cache_room, stacked_columns, written_into
from spca_cli.distributed import gather

__all__ = ["DaskBackend", "Shard", "make_shards"]

# Memory for columns A[:, j] kept on the client for every view of one A (as LocalBackend).
_COLUMN_CACHE_BYTES = 256 << 20
# Columns fetched in one round trip when fewer are asked for (see DaskBackend._read_ahead).
_READ_AHEAD = 64


class Shard:
    """The row blocks of S held by one worker, stacked, with the kernels of LocalBackend.

    Lives on a worker; created by :func:`make_shards`, never sent back to the client. Dask
    may still send it to another worker or spill it to disk (it pickles), and weighs such a
    move by its size (:meth:`__sizeof__`).
    """

    def __init__(self, *blocks):
        matrices = [b.S for b in blocks]
        self.n_documents = sum(int(m.shape[0]) for m in matrices)
        n = int(matrices[0].shape[1])
        S = sp.csr_array(sp.vstack(matrices, format="csr"), dtype=np.float64) if len(
            matrices) > 1 else matrices[0]
        self.local = LocalBackend(S=S if S.shape[0] else sp.csr_array((0, n)), threads=1)

    # each method answers the question for this shard's rows only; the client adds them up
    def matmat(self, X):
        return self.local.matmat(X)

    def sparse_matvec(self, idx, w):
        return self.local.sparse_matvec(idx, w)

    def columns(self, idx):
        return self.local.rows(idx).T

    def submatrix(self, idx):
        return self.local.submatrix(idx)

    def diagonal(self):
        return self.local.diagonal()

    def is_nonnegative(self):
        return self.local.is_nonnegative()

    def __sizeof__(self):
        """The bytes of its rows, which Dask's scheduler reads (``dask.sizeof``) to weigh
        running a task on it elsewhere against waiting for its worker: at an object's default
        size, a few dozen bytes, a shard would look cheaper to move than to wait for."""
        S = self.local.S
        return object.__sizeof__(self) + sum(int(a.nbytes) for a in (S.data, S.indices,
                                                                         S.indptr))


def _join(*blocks):
    return Shard(*blocks)


def _ask(shard, method, *args):
    return getattr(shard, method)(*args)


def make_shards(client, blocks):
    """One :class:`Shard` future per worker holding any of ``blocks`` (futures of row blocks
    with an ``S`` attribute), built where the blocks are, so no block moves."""
    where = client.who_has(blocks)
    by_worker = {}
    for block in blocks:
        holders = where.get(block.key) or ()
        worker = sorted(holders)[0] if holders else None
        by_worker.setdefault(worker, []).append(block)
    shards = []
    for worker, own in by_worker.items():
        shards.append(client.submit(_join, *own, workers=None if worker is None else [worker],
                                    allow_other_workers=worker is None, pure=False))
    return shards


class DaskBackend:
    """A = S^T S for S held as row blocks on the workers of a Dask cluster.

    Parameters
    ----------
    client : distributed.Client
    shards : list of Future
        One :class:`Shard` per worker (:func:`make_shards`).
    n : int
        Number of words (columns of S).
    """

    S = None  # S is never on the client

    def __init__(self, client, shards, n):
        self.client = client
        self.shards = list(shards)
        self.n = int(n)
        self.dense = None
        self._diag = None
        self._nonnegative = None
        self._columns = {}

    def _sum(self, method, *args):
        """Ask every shard ``method(*args)`` (one task each) and add the answers."""
        # the arguments travel once, as one scattered piece of data per product, not once per
        # task; keys are not hashed (pure=False) so equal blocks of two steps are not confused
        shipped = [self.client.scatter(a, broadcast=True, hash=False)
                   if isinstance(a, np.ndarray) and a.nbytes > (1 << 16) else a for a in args]
        futures = [self.client.submit(_ask, shard, method, *shipped, pure=False)
                   for shard in self.shards]
        total = None
        for part in gather(self.client, futures):
            total = part.copy() if total is None else total + part
        return total

    def diagonal(self):
        if self._diag is None:
            self._diag = self._sum("diagonal")
        return self._diag

    def matmat(self, X, out=None):
        return written_into(self._sum("matmat", np.ascontiguousarray(X, dtype=np.float64)), out)

    def sparse_matvec(self, idx, w):
        return self._sum("sparse_matvec", np.asarray(idx, dtype=np.int64),
                         np.asarray(w, dtype=np.float64))

    def submatrix(self, idx):
        return self._sum("submatrix", np.asarray(idx, dtype=np.int64))

    def columns(self, idx):
        """A[:, idx], cached on the client for every view of this A (as LocalBackend)."""
        return stacked_columns(self.column_list(idx), self.n)

    def column_list(self, idx, *, beyond_room=False):
        """A[:, j] for each j of ``idx`` as the client's cache holds them (as LocalBackend's,
        ``beyond_room`` too)."""
        idx = np.asarray(idx, dtype=np.int64)
        cache = self._columns
        missing = np.array([j for j in idx.tolist() if j not in cache], dtype=np.int64)
        fresh = {}
        if missing.size:
            room = cache_room(cache, self.n, _COLUMN_CACHE_BYTES)
            if beyond_room:
                room = max(room, missing.size)
            ahead = self._read_ahead(missing, room)
            asked = np.concatenate([missing, ahead])
            block = self._sum("columns", asked)
            fresh = {j: np.ascontiguousarray(block[:, t]) for t, j in enumerate(asked.tolist())}
            if room >= asked.size:
                cache.update(fresh)
                fresh = {}
        return [cache[j] if j in cache else fresh[j] for j in idx.tolist()]

    def column_room(self):
        """How many more columns A[:, j], once fetched, stay in the client's cache."""
        return max(0, cache_room(self._columns, self.n, _COLUMN_CACHE_BYTES))

    def _read_ahead(self, missing, room):
        """Words whose columns to fetch along with ``missing``: the certificate asks for the
        columns of the words of largest diagonal one at a time, and each round trip to the
        workers costs tens of milliseconds, so a small request also brings the next words of
        largest diagonal not cached yet (up to :data:`_READ_AHEAD` columns in all)."""
        count = min(_READ_AHEAD - missing.size, room - missing.size)
        if count <= 0:
            return np.zeros(0, dtype=np.int64)
        order = np.argsort(-self.diagonal(), kind="stable")
        taken = set(self._columns) | set(missing.tolist())
        ahead = [j for j in order[:len(taken) + count].tolist() if j not in taken][:count]
        return np.array(ahead, dtype=np.int64)

    def is_nonnegative(self):
        if self._nonnegative is None:
            futures = [self.client.submit(_ask, shard, "is_nonnegative", pure=False)
                       for shard in self.shards]
            self._nonnegative = all(gather(self.client, futures))
        return self._nonnegative
