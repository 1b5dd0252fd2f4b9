"""Seeded random streams named by purpose.

Each purpose ("workload.game.jitter", "fault.hang", ...) gets its own ``random.Random`` whose seed
is derived from the run's seed and the purpose's name with SHA-256, so adding a new stream, or
drawing more numbers from one, never changes what another stream draws. Python's ``hash()`` is
salted per process and is not used. Every random choice of the model comes from such a stream.
"""

from __future__ import annotations

import hashlib
import random


def stream_seed(seed: int, name: str) -> int:
    """The 64-bit seed of stream ``name`` in a run seeded with ``seed``."""
    digest = hashlib.sha256(f"{seed}\x00{name}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def make_stream(seed: int, name: str) -> random.Random:
    """A fresh ``random.Random`` for stream ``name``."""
    return random.Random(stream_seed(seed, name))
