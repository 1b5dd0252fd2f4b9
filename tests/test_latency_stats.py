"""LatencyStats: the four-significant-digit buckets, exact count/sum/min/max."""

from hypothesis import given
from hypothesis import strategies as st

from wddmsim.dxgkrnl.stats import LatencyStats, _bucket


def _by_division(v: int) -> int:
    scale = 1
    while v >= 10_000:
        v //= 10
        scale *= 10
    return v * scale


@given(st.integers(0, 10**30))
def test_bucket_keeps_four_leading_digits(v):
    assert _bucket(v) == _by_division(v)


def test_bucket_edges():
    assert [_bucket(v) for v in (0, 9999, 10_000, 12_345, 99_999, 123_456_789)] == \
        [0, 9999, 10_000, 12_340, 99_990, 123_400_000]
    assert _bucket(10**20 + 5) == 10**20
    assert _bucket(10**19 - 1) == 9999 * 10**15


@given(st.lists(st.integers(0, 10**22), min_size=1, max_size=50))
def test_add_counts_into_the_buckets(values):
    s = LatencyStats()
    for v in values:
        s.add(v)
    assert (s.count, s.total, s.min, s.max) == (len(values), sum(values), min(values), max(values))
    hist: dict[int, int] = {}
    for v in values:
        hist[_by_division(v)] = hist.get(_by_division(v), 0) + 1
    assert s._hist == hist


def test_a_percentile_never_lies_below_the_exact_minimum():
    # 69,840 and 69,845 share the bucket 69,840; 69,845 alone has its bucket's edge 69,840 below it.
    from wddmsim.dxgkrnl.stats import LatencyStats

    s = LatencyStats()
    for v in (69_845, 69_849, 70_000):
        s.add(v)
    assert (s.min, s.percentile(50), s.percentile(1), s.percentile(100)) == (69_845, 69_845, 69_845, 70_000)
