"""Submission fence ids on the DDI (ddi/fenceid.py): 32-bit ids handed out from the OS's count,
read back past the wrap, compared as serial numbers."""

from __future__ import annotations

from wddmsim.ddi.fenceid import U32, after, from_ddi, to_ddi

TOP = 1 << 32


def test_the_ddi_carries_the_low_32_bits():
    assert [to_ddi(f) for f in (1, U32, TOP, TOP + 5)] == [1, U32, 0, 5]


def test_a_reported_id_is_read_relative_to_the_last_completed_one():
    # Ahead of the last completed fence, across the wrap.
    assert from_ddi(0, U32) == TOP
    assert from_ddi(3, TOP - 2) == TOP + 3
    assert from_ddi(U32, TOP - 20) == U32
    # Behind it (a report going backwards stays behind, for rule 33 to see).
    assert from_ddi(U32 - 1, TOP + 2) == TOP - 2
    assert from_ddi(5, 10) == 5
    # Without a wrap nothing changes.
    assert all(from_ddi(f, 100) == f for f in range(90, 200))


def test_serial_number_order():
    assert after(0, U32) and after(5, U32 - 5) and after(2, 1)
    assert not after(U32, 0) and not after(7, 7) and not after(1, 2)
