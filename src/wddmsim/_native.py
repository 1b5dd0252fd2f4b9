"""Which modules run compiled, and the switch back to the interpreted sources.

Where a C compiler is present, the build (``hatch_build.py``, run by ``uv sync`` or any wheel
build) compiles the modules of :data:`COMPILED` with mypyc into extension modules beside their
sources (or into the wheel), plus one shared library, ``wddmsim/_compiled__mypyc``, holding their
code. Python prefers an extension module over a ``.py`` of the same name, so nothing else changes:
the same names, the same behaviour, the same event logs, faster.

The interpreted sources are used instead, for all of :data:`COMPILED` together:

- when ``WDDMSIM_PURE`` is set in the environment to anything but ``""`` or ``0``
  (``WDDMSIM_PURE=1 uv run wddmsim ...``);
- when the build compiled nothing (no compiler, no mypyc: the build says so and succeeds);
- when a compiled module is stale: its source no longer has the SHA-256 recorded when it was
  compiled (``_compiled.sums`` beside this file), e.g. after an edit before the next ``uv sync``
  (``uv run`` rebuilds by itself when one of these sources changes: ``[tool.uv] cache-keys``).

:func:`install` (called by ``wddmsim/__init__.py``) puts a finder at the front of
``sys.meta_path`` that answers for the names of :data:`COMPILED` only, and only the first time one
of them is imported; it costs nothing to an import of anything else. :func:`status` says which way
each module went.

A compiled class cannot be subclassed by interpreted code, so only internals nobody subclasses
are listed here (driver and policy authors subclass ``wddmsim.policies.Policy`` and friends,
never these); ``Timer`` and ``StopSimulation``, which the kernel exports, live interpreted in
``sim/timer.py`` for that reason, as ``EngineFault`` (subclassed by ``gpu.mmu.PageFault``) and
``PreemptState`` (a ``tuple``), which ``gpu.engine`` exports, live in ``gpu/engineparts.py``.
"""

from __future__ import annotations

import os
import sys

__all__ = ["COMPILED", "GROUP", "install", "pure_requested", "status"]

#: The modules compiled with mypyc, as one group (their code is in one shared library, GROUP).
#: ``hatch_build.py`` reads this tuple from here.
COMPILED = (
    "wddmsim.sim.kernel",
    "wddmsim.gpu.memory",
    "wddmsim.gpu.engine_state",
    "wddmsim.gpu.engine_execute",
    "wddmsim.gpu.engine_preempt",
    "wddmsim.gpu.engine",
)

#: The mypyc group: its shared library is the extension module ``GROUP + "__mypyc"``.
GROUP = "wddmsim._compiled"

#: The file, beside this one, where the build records ``<module> <sha256 of its source>`` per line.
SUMS = "_compiled.sums"

_HERE = os.path.dirname(os.path.abspath(__file__))


def pure_requested() -> bool:
    """True when ``WDDMSIM_PURE`` asks for the interpreted sources."""
    return os.environ.get("WDDMSIM_PURE", "") not in ("", "0")


def source_path(name: str) -> str:
    """The ``.py`` file of module ``name`` (one of :data:`COMPILED`)."""
    return os.path.join(_HERE, *name.split(".")[1:]) + ".py"


def _recorded() -> dict[str, str]:
    try:
        with open(os.path.join(_HERE, SUMS), encoding="ascii") as f:
            lines = f.read().split("\n")
    except OSError:
        return {}
    out = {}
    for line in lines:
        name, _, digest = line.partition(" ")
        if digest:
            out[name] = digest
    return out


def _fresh() -> bool:
    """True when every module of :data:`COMPILED` was compiled from the source it has now."""
    import hashlib

    recorded = _recorded()
    for name in COMPILED:
        try:
            with open(source_path(name), "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
        except OSError:
            return False
        if recorded.get(name) != digest:
            return False
    return True


class _SourceFinder:
    """A meta path finder for the names of :data:`COMPILED`: the ``.py`` source when the
    interpreted modules are wanted, else nothing (the normal import finds the extension)."""

    def __init__(self) -> None:
        self.names = frozenset(COMPILED)
        self.reason: str | None = None  # decided on the first import of one of the names

    def decide(self) -> str:
        if self.reason is None:
            if pure_requested():
                self.reason = "pure: WDDMSIM_PURE is set"
            elif not os.path.exists(os.path.join(_HERE, SUMS)):
                self.reason = "pure: not compiled by this build"
            elif not _fresh():
                self.reason = "pure: a compiled module is older than its source (run uv sync)"
            else:
                self.reason = "compiled"
        return self.reason

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.names or self.decide() == "compiled":
            return None
        from importlib.util import spec_from_file_location

        return spec_from_file_location(fullname, source_path(fullname))


_finder = _SourceFinder()


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)


def status() -> dict[str, str]:
    """Each module of :data:`COMPILED` and how it runs in this process: ``"compiled"`` (an
    extension module), or ``"pure: <why>"`` for the interpreted source, or ``"not imported"``."""
    out = {}
    for name in COMPILED:
        module = sys.modules.get(name)
        if module is None:
            out[name] = "not imported"
        elif (getattr(module, "__file__", None) or "").endswith(".py"):
            out[name] = _finder.reason or "pure"
        else:
            out[name] = "compiled"
    return out
