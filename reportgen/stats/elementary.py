"""exp, log and powers whose last bit does not depend on the CPU's vector units.

numpy chooses its exp and log at run time by the CPU: on one with AVX-512 its
own vectorised code, elsewhere the C library's. Both are accurate to about one
unit in the last place, but they do not agree bit for bit, and a reliability
figure that differs in its 16th digit still changes report.json, tasks.csv and
every chart drawn from it. The example site built on a machine with AVX-512
differed so in 9 files from the same build on one without. Python's math module
calls the C library whatever the CPU, so the figures here come from it.

The arrays these functions get hold few distinct values (a task's counts take
at most n + 1 values, a suite's tasks share their run counts), so each distinct
value is computed once and spread back: a Python call per distinct value, not
per element.
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


def exp(values: npt.ArrayLike) -> FloatArray:
    """e**x elementwise."""
    x = np.asarray(values, dtype=np.float64)
    distinct, inverse = np.unique(x, return_inverse=True)
    out = np.array([_exp(v) for v in distinct.tolist()], dtype=np.float64)
    result: FloatArray = out[inverse].reshape(x.shape)
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
        self._logs = [_log_fraction(z.real, z.imag) for z in distinct.tolist()]
        self._inverse = inverse.reshape(-1)
        self._shape = p_arr.shape

    def __call__(self, k: int) -> FloatArray:
        out = np.array([_exp(k * log) for log in self._logs], dtype=np.float64)
        result: FloatArray = out[self._inverse].reshape(self._shape)
        return result


def power(p: npt.ArrayLike, q: npt.ArrayLike, k: int) -> FloatArray:
    """p**k elementwise for p in [0, 1], with q = 1 - p given (see _log_fraction)."""
    return Powers(p, q)(k)
