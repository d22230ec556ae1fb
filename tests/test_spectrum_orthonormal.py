"""The block method's orthonormalisation (``spectrum._orthonormal``): one projection pass where
floating point allows it, two where it does not, and the same result to working precision."""

from __future__ import annotations

import numpy as np
import pytest

from spca_cli.spectrum import _orthonormal


def _basis(n, c, seed):
    return np.asfortranarray(np.linalg.qr(np.random.default_rng(seed).standard_normal((n, c)))[0])


def _check(out, Q, W):
    eye = np.eye(out.shape[1])
    assert np.abs(out.T @ out - eye).max() < 1e-13
    if Q is not None:
        assert np.abs(Q.T @ out).max() < 1e-13
    # the span is that of W minus its part in span(Q)
    target = W if Q is None else W - Q @ (Q.T @ W)
    projected = out @ (out.T @ target)
    np.testing.assert_allclose(projected, target, atol=1e-10 * np.abs(target).max())


@pytest.mark.parametrize("seed", range(5))
def test_random_block_against_a_basis(seed):
    Q = _basis(2000, 30, seed)
    W = np.random.default_rng(seed + 10).standard_normal((2000, 7))
    out = _orthonormal(W, Q, 1.0)
    assert out.shape == (2000, 7)
    _check(out, Q, W)


@pytest.mark.parametrize("share", [1e-4, 1e-8, 1e-12])
def test_a_block_almost_inside_the_basis_needs_the_second_pass(share):
    # columns mostly in span(Q): one pass would leave about eps / share of Q in them
    rng = np.random.default_rng(1)
    Q = _basis(3000, 20, 2)
    noise = rng.standard_normal((3000, 5))
    W = Q @ rng.standard_normal((20, 5)) + share * noise
    out = _orthonormal(W, Q, 1.0)
    assert out.shape == (3000, 5)
    assert np.abs(out.T @ out - np.eye(5)).max() < 1e-13
    assert np.abs(Q.T @ out).max() < 1e-13
    # the span is that of the part outside Q, known to what forming W left of it (eps / share)
    outside = noise - Q @ (Q.T @ noise)
    outside /= np.linalg.norm(outside, axis=0)
    missed = np.linalg.norm(outside - out @ (out.T @ outside), axis=0).max()
    assert missed < 1e-13 + 1e-14 / share


def test_nearly_dependent_columns_keep_their_span_and_stay_orthogonal_to_the_basis():
    # the Cholesky factor of such a block is ill-conditioned: its inverse amplifies the rounding
    # of Q left in W, which the last projection removes
    rng = np.random.default_rng(3)
    Q = _basis(2500, 25, 4)
    base = rng.standard_normal((2500, 3))
    near = base @ rng.standard_normal((3, 3)) + 1e-6 * rng.standard_normal((2500, 3))
    W = np.column_stack([base, near])
    out = _orthonormal(W, Q, 1.0)
    assert out.shape == (2500, 6)
    _check(out, Q, W)


def test_dependent_and_vanishing_columns_are_dropped():
    rng = np.random.default_rng(5)
    Q = _basis(1000, 10, 6)
    base = rng.standard_normal((1000, 3))
    W = np.column_stack([base, base[:, :1] + base[:, 1:2], np.zeros(1000), Q[:, :1]])
    out = _orthonormal(W, Q, 1.0)
    assert out.shape == (1000, 3)
    _check(out, Q, base)


def test_without_a_basis():
    W = np.random.default_rng(7).standard_normal((500, 4))
    out = _orthonormal(W, None, 1.0)
    assert out.shape == (500, 4) and out.flags.c_contiguous
    _check(out, None, W)


@pytest.mark.parametrize("spread", [1e-3, 1e-6, 1e-9])
def test_a_block_whose_first_factor_amplifies_is_orthonormal_to_working_precision(monkeypatch,
                                                                                 spread):
    # columns nearly dependent to ``spread``: the first Cholesky factor's condition number is
    # about 1 / spread. Where what the projection after it takes is rounding (the block then
    # orthonormal to 1e-6), one more Cholesky step finishes it; otherwise the whole procedure
    # runs again on the block (a second call). Either way: orthonormal, orthogonal to the basis,
    # the same span.
    import spca_cli.spectrum as spectrum

    calls = []
    inner = spectrum._orthonormal

    def counted(*args, **kwargs):
        calls.append(kwargs.get("again", True))
        return inner(*args, **kwargs)

    monkeypatch.setattr(spectrum, "_orthonormal", counted)
    rng = np.random.default_rng(8)
    Q = _basis(3000, 30, 9)
    base = rng.standard_normal((3000, 4))
    near = base @ rng.standard_normal((4, 4)) + spread * rng.standard_normal((3000, 4))
    W = np.column_stack([base, near]) - Q @ (Q.T @ np.column_stack([base, near])) * 0.5
    out = spectrum._orthonormal(W, Q, 1.0)
    assert out.shape == (3000, 8)
    _check(out, Q, W)
    if spread >= 1e-6:
        assert calls == [True]  # (one Cholesky step, no second call)
