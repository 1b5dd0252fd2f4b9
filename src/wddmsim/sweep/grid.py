"""What a sweep runs: its settings, its seeds and their cross product.

A setting is one scenario path with one or more values, written on the command line as
``--set PATH=V1,V2,...`` (the path and each value as ``wddmsim run --set`` takes them, see
:mod:`wddmsim.scenario.overrides`; the values are split at commas outside brackets and quotes).
Seeds are written ``1-10``, ``1,3,5`` or a mix (``1-3,7``). The runs are the cross product of the
settings' values in the order given (the first setting varies slowest) with the seeds innermost;
that order is the order of the rows, whatever order the runs finish in.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..scenario.overrides import Override, OverrideError, parse_path, parse_value, split_values

__all__ = ["MAX_RUNS", "Run", "Setting", "SweepError", "grid", "parse_seeds", "parse_setting", "settings_from"]

#: The most runs one sweep takes. Its rows are kept in memory until they are written, at a few
#: KiB each, and at the model's pace of a few runs a second per core a sweep past this size takes
#: days: split such a study into several sweeps (each with its own --seeds range).
MAX_RUNS = 100_000


class SweepError(ValueError):
    """A sweep that cannot start: a malformed setting or seed list, a path the scenario does not
    have. ``str()`` names the option, what was given and why it is wrong, one problem a line."""


@dataclass(frozen=True)
class Setting:
    """One swept scenario path (``column``, its dotted spelling, names the rows' column) and the
    assignment for each of its values, in the order given."""

    column: str
    values: tuple[Override, ...]


@dataclass(frozen=True)
class Run:
    """One run of a sweep: its place in the cross product, its assignments and its seed (None:
    the scenario's own)."""

    index: int
    overrides: tuple[Override, ...]
    seed: int | None

    @property
    def settings(self) -> dict[str, Any]:
        """Each swept column with the value this run gives it."""
        return {ov.dotted: ov.value for ov in self.overrides}


def parse_setting(text: str, option: str = "--set") -> Setting:
    """``PATH=V1,V2,...`` as a :class:`Setting`; raises :class:`SweepError` when the text has no
    ``=``, the path is malformed or a value is empty."""
    key, sep, values = text.partition("=")
    if not sep or not key.strip():
        raise SweepError(f"{option} {text!r}: expected PATH=VALUE[,VALUE...] (e.g. scheduler.quantum=1ms,2ms)")
    try:
        path = parse_path(key, option)
    except OverrideError as e:
        raise SweepError(str(e)) from None
    column = ".".join(str(p) for p in path)
    parts = split_values(values)
    if any(not v for v in parts):
        raise SweepError(f"{option} {text}: an empty value (two commas in a row, or one at an end)")
    try:
        values_read = [parse_value(v, f"{option} {column}=...") for v in parts]
    except OverrideError as e:
        raise SweepError(str(e)) from None
    return Setting(column, tuple(Override(path, value, f"{column}={v}", option) for v, value in zip(parts, values_read)))


def settings_from(sets: Mapping[str, Any] | Iterable[str] | None, option: str = "--set") -> list[Setting]:
    """The settings of a sweep from command-line texts (``["a.b=1,2", ...]``) or from a mapping
    of path to a value or a list of values (``{"scheduler.quantum": ["1ms", "2ms"]}``; values are
    taken as they are, not parsed). A path given twice is a :class:`SweepError`."""
    out: list[Setting] = []
    if sets is None:
        pass
    elif isinstance(sets, Mapping):
        for key, values in sets.items():
            try:
                path = parse_path(str(key), option)
            except OverrideError as e:
                raise SweepError(str(e)) from None
            column = ".".join(str(p) for p in path)
            values = list(values) if isinstance(values, (list, tuple)) else [values]
            if not values:
                raise SweepError(f"{option} {key}: no values")
            out.append(Setting(column, tuple(Override(path, v, f"{column}={v}", option) for v in values)))
    else:
        out = [parse_setting(text, option) for text in sets]
    seen: set[str] = set()
    for s in out:
        if s.column in seen:
            raise SweepError(f"{option} {s.column}: given twice; give every value in one --set (PATH=V1,V2)")
        seen.add(s.column)
    return out


def parse_seeds(text: str | int | Iterable[int], option: str = "--seeds") -> list[int]:
    """Seeds from ``1-10``, ``1,3,5`` or ``1-3,7`` (ranges include both ends), or from ints as
    they are; raises :class:`SweepError` for text that is not such a list, a range that runs
    backwards, a negative seed or a seed given twice."""
    if isinstance(text, int):
        seeds = [text]
    elif not isinstance(text, str):
        seeds = list(text)
        for s in seeds:
            if not isinstance(s, int) or isinstance(s, bool):
                raise SweepError(f"{option}: {s!r} is not a seed (a whole number, 0 or more)")
    else:
        seeds = []
        for part in text.split(","):
            part = part.strip()
            lo, dash, hi = part.partition("-")
            if not (lo.strip().isdigit() and (not dash or hi.strip().isdigit())):
                raise SweepError(f"{option} {text}: {part!r} is not a seed or a range of seeds "
                                 f"(write 1-10, 1,3,5 or 1-3,7)")
            a = int(lo)
            b = int(hi) if dash else a
            if b < a:
                raise SweepError(f"{option} {text}: the range {part} runs backwards")
            if len(seeds) + b - a + 1 > MAX_RUNS:
                raise SweepError(f"{option} {text}: more than {MAX_RUNS:,} seeds; a sweep takes at most "
                                 f"{MAX_RUNS:,} runs (split it into several sweeps)")
            seeds.extend(range(a, b + 1))
    if not seeds:
        raise SweepError(f"{option}: no seeds")
    seen: set[int] = set()
    for s in seeds:
        if s < 0:
            raise SweepError(f"{option}: {s} is negative; a seed is 0 or more")
        if s in seen:
            raise SweepError(f"{option}: seed {s} is given twice")
        seen.add(s)
    return seeds


def grid(settings: Sequence[Setting], seeds: Sequence[int] | None) -> list[Run]:
    """The runs of a sweep: every combination of the settings' values (the first setting varies
    slowest), each with every seed (``None``: once, with the scenario's seed). A grid of more than
    :data:`MAX_RUNS` runs is a :class:`SweepError` saying how many it would have."""
    total = len(seeds) if seeds else 1
    for s in settings:
        total *= len(s.values)
    if total > MAX_RUNS:
        sizes = " x ".join([str(len(s.values)) for s in settings] + ([str(len(seeds))] if seeds else []))
        raise SweepError(f"the sweep has {total:,} runs ({sizes}), more than the {MAX_RUNS:,} one sweep takes: "
                         f"split it into several sweeps")
    runs: list[Run] = []
    for combo in itertools.product(*(s.values for s in settings)):
        for seed in (seeds if seeds else [None]):
            runs.append(Run(len(runs), tuple(combo), seed))
    return runs
