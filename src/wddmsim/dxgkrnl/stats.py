"""Latency statistics in bounded memory.

A long run must not keep one number per packet, so latencies go into a histogram whose buckets
keep four significant digits (a relative error of at most 0.05%): the count, sum, minimum and
maximum are exact; percentiles are exact to four significant digits. Memory grows with packets in
flight, not with packets run.
"""

from __future__ import annotations


def _bucket(v: int) -> int:
    if v < 10_000:
        return v
    if type(v) is int and v < _FAST_BELOW:
        # Keep the four leading digits: v // 10**k * 10**k, k = digits - 4 (what dividing by
        # ten until under 10,000 gives).
        scale = _TENS[len(str(v)) - 4]
        return v // scale * scale
    scale = 1
    while v >= 10_000:
        v //= 10
        scale *= 10
    return v * scale


_TENS = tuple(10 ** k for k in range(20))
_FAST_BELOW = 10 ** 20


class LatencyStats:
    """Count, sum, min, max and a four-significant-digit histogram of non-negative integers."""

    __slots__ = ("count", "total", "min", "max", "_hist")

    def __init__(self):
        self.count = 0
        self.total = 0
        self.min: int | None = None
        self.max: int | None = None
        self._hist: dict[int, int] = {}

    def add(self, v: int) -> None:
        self.count += 1
        self.total += v
        if self.max is None or v > self.max:
            self.max = v
        if self.min is None or v < self.min:
            self.min = v
        if v >= 10_000:
            if type(v) is int and v < _FAST_BELOW:  # _bucket(v), inline
                scale = _TENS[len(str(v)) - 4]
                v = v // scale * scale
            else:
                v = _bucket(v)
        h = self._hist
        h[v] = h.get(v, 0) + 1

    def percentile(self, q: float) -> int | None:
        """The nearest-rank ``q`` percentile (0 < q <= 100), to four significant digits, never
        outside the exact minimum and maximum (a bucket's value is its lower edge, which can lie
        below the smallest value it holds)."""
        if not self.count:
            return None
        rank = max(1, -(-self.count * q // 100))
        seen = 0
        for b in sorted(self._hist):
            seen += self._hist[b]
            if seen >= rank:
                return max(min(b, self.max), self.min)
        return self.max

    def histogram(self) -> list[tuple[int, int]]:
        """``[(value, count), ...]`` ascending: each bucket's value (its lower edge, four
        significant digits, never outside the exact minimum and maximum) and how many values it
        holds; every value added is counted once."""
        if not self.count:
            return []
        lo, hi = self.min, self.max
        out: list[tuple[int, int]] = []
        for b in sorted(self._hist):
            v = max(min(b, hi), lo)
            if out and out[-1][0] == v:
                out[-1] = (v, out[-1][1] + self._hist[b])
            else:
                out.append((v, self._hist[b]))
        return out

    @property
    def mean(self) -> float | None:
        return self.total / self.count if self.count else None
