"""exp, log, powers and sums of products whose last bit does not depend on the CPU.

numpy chooses its exp and log at run time by the CPU: on one with AVX-512 its
own vectorised code, elsewhere the C library's. Both are accurate to about one
unit in the last place, but they do not agree bit for bit, and a reliability
figure that differs in its 16th digit still changes report.json, tasks.csv and
every chart drawn from it. The example site built on a machine with AVX-512
differed so in 9 files from the same build on one without. Python's math module
calls the C library whatever the CPU, so the figures here come from it.

Matrix products go to BLAS, which also picks its code, and so its order of
summation, by the CPU: dot and matmul here sum in numpy's own fixed order.
(The C library itself may differ between systems: the same bits are promised
for machines with the same one, whatever their vector units.)

The arrays power gets hold few distinct values (a task's counts take at most
n + 1 values, a suite's tasks share their run counts), so each distinct value
is computed once and spread back: a Python call per distinct value, not per
element. exp gets matrices of distinct values and is computed in numpy.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


def _exp(value: float) -> float:
    try:
        return math.exp(value)
    except OverflowError:  # numpy's exp gives inf there
        return math.inf


def _log_fraction(p: float, q: float) -> float:
    """log p for p in [0, 1] given with its complement q = 1 - p.

    Near 1 the log comes from log1p(-q), with q known to full relative precision
    (computed from integers, or as a complement in its own right), so that
    (1 - 1e-6)**1e6 keeps every digit; below 1/2 log p itself is exact enough.
    """
    if p >= 0.5:
        return math.log1p(-q)
    if p > 0.0:
        return math.log(p)
    return -math.inf if p == 0.0 else math.nan


#: ln 2 in two parts (as in fdlibm's exp): k * _LN2_HIGH is exact for |k| < 2**20.
_LN2_HIGH = 6.93147180369123816490e-01
_LN2_LOW = 1.90821492927058770002e-10
#: Beyond these exp overflows to inf, or underflows below the smallest subnormal.
_EXP_MAX = 709.782712893384
_EXP_MIN = -745.1332191019412
#: 1/j! for j = 13 down to 2: Taylor's series of e**r, |r| <= ln(2)/2, to within
#: 4e-18 of its sum.
_EXP_TERMS = [1.0 / math.factorial(j) for j in range(13, 1, -1)]


def exp(values: npt.ArrayLike) -> FloatArray:
    """e**x elementwise, within 2 units in the last place.

    For arrays of many distinct values (a matrix of binomial probabilities), so
    the C library's exp once per value would be slow: built from numpy's
    additions and multiplications alone, which are exact to the last bit on every
    CPU. x = k ln 2 + r with |r| <= ln(2)/2, e**r by its Taylor series, then
    scaled by 2**k.
    """
    x = np.asarray(values, dtype=np.float64)
    nan = np.isnan(x)
    inside = np.clip(np.where(nan, 0.0, x), _EXP_MIN, _EXP_MAX)
    k = np.rint(inside / _LN2_HIGH)
    r = (inside - k * _LN2_HIGH) - k * _LN2_LOW
    series = np.full_like(r, _EXP_TERMS[0])
    for term in _EXP_TERMS[1:]:
        series = series * r + term
    series = (series * r + 1.0) * r + 1.0
    scaled = np.ldexp(series, k.astype(np.int64))
    ends = np.where(x > _EXP_MAX, math.inf, np.where(x < _EXP_MIN, 0.0, scaled))
    result: FloatArray = np.asarray(np.where(nan, math.nan, ends), dtype=np.float64)
    return result


class Powers:
    """p**k elementwise for one array p in [0, 1] (with q = 1 - p, see _log_fraction)
    and any k; the logs are taken once. 0**k is 0 and NaN stays NaN."""

    def __init__(self, p: npt.ArrayLike, q: npt.ArrayLike) -> None:
        p_arr, q_arr = np.broadcast_arrays(np.asarray(p, np.float64), np.asarray(q, np.float64))
        # (p, q) pairs as complex numbers: one sort finds the distinct pairs.
        pairs = np.empty(p_arr.shape, dtype=np.complex128)
        pairs.real, pairs.imag = p_arr, q_arr
        distinct, inverse = np.unique(pairs.ravel(), return_inverse=True)
        logs = [_log_fraction(z.real, z.imag) for z in distinct.tolist()]
        self._logs = np.array(logs, dtype=np.float64)
        self._inverse = inverse.reshape(-1)
        self._shape = p_arr.shape

    def __call__(self, k: int) -> FloatArray:
        exponents = k * self._logs
        # Below -746 exp is 0 in any C library: only the rest need a call each,
        # which keeps a large k (most powers 0) as cheap as a small one.
        out = np.where(np.isnan(exponents), math.nan, 0.0)
        needed = exponents >= -746.0
        out[needed] = [_exp(x) for x in exponents[needed].tolist()]
        result: FloatArray = out[self._inverse].reshape(self._shape)
        return result


def power(p: npt.ArrayLike, q: npt.ArrayLike, k: int) -> FloatArray:
    """p**k elementwise for p in [0, 1], with q = 1 - p given (see _log_fraction)."""
    return Powers(p, q)(k)


def dot(a: npt.ArrayLike, v: npt.ArrayLike) -> FloatArray:
    """a @ v over a's last axis, for a vector v."""
    result: FloatArray = np.multiply(a, v, dtype=np.float64).sum(axis=-1)
    return result


def matmul(a: FloatArray, b: FloatArray) -> FloatArray:
    """a @ b for 2-D arrays, row by row of b (as many passes as a has columns)."""
    out = np.zeros((a.shape[0], b.shape[1]), dtype=np.float64)
    for j in range(a.shape[1]):
        out += a[:, j, None] * b[j]
    return out
