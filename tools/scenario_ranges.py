"""Print the table of every scenario field's range, as docs/scenarios.md holds it ("Ranges").

The ranges and their reasons are the schema's own (:class:`wddmsim.scenario.bounds.In` on each
field of :mod:`wddmsim.scenario.schema`); tests/test_scenario_bounds.py checks that the document
holds this table as printed, so a changed range must update the document.

Run: ``uv run python tools/scenario_ranges.py``.
"""

from __future__ import annotations

import types
from typing import Annotated, Any, Iterator, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from wddmsim.scenario.bounds import In
from wddmsim.scenario.schema import WORKLOAD_KINDS, Scenario

__all__ = ["ranges", "table", "unbounded"]


def _kind(model: type[BaseModel]) -> str | None:
    """The workload kind a model is, if it is one (its ``kind`` field's one literal value)."""
    field = model.model_fields.get("kind")
    if field is None or get_origin(field.annotation) is not Literal:
        return None
    values = get_args(field.annotation)
    return values[0] if len(values) == 1 and values[0] in WORKLOAD_KINDS else None


def _walk(annotation: Any, path: str, found: list[tuple[str, In | None]]) -> None:
    """Every range below ``annotation`` (a field's type) as (path, In); a number with none as
    (path, None)."""
    origin = get_origin(annotation)
    if origin is Annotated:
        inner, *metadata = get_args(annotation)
        bounds = [m for m in metadata if isinstance(m, In)]
        for bound in bounds:
            found.append((path, bound))
        if inner in (int, float) and bounds:
            return
        _walk(inner, path, found)
    elif origin in (Union, types.UnionType):
        for arg in get_args(annotation):
            _walk(arg, path, found)
    elif origin is list:
        _walk(get_args(annotation)[0], f"{path}[]", found)
    elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
        kind = _kind(annotation)
        _fields(annotation, f"{path} ({kind})" if kind else path, found)
    elif annotation in (int, float):
        found.append((path, None))


def _fields(model: type[BaseModel], prefix: str, found: list[tuple[str, In | None]]) -> None:
    for name, info in model.model_fields.items():
        if info.exclude:  # a former key, refused whatever its value
            continue
        path = f"{prefix}.{info.alias or name}" if prefix else (info.alias or name)
        own = [m for m in info.metadata if isinstance(m, In)]
        for bound in own:
            found.append((path, bound))
        if own and info.annotation in (int, float):
            continue
        _walk(info.annotation, path, found)


def _all() -> list[tuple[str, In | None]]:
    found: list[tuple[str, In | None]] = []
    _fields(Scenario, "", found)
    return found


def ranges() -> Iterator[tuple[str, In]]:
    """(field path, range) of every bounded quantity of a scenario, in the schema's order."""
    for path, bound in _all():
        if bound is not None:
            yield path, bound


def unbounded() -> list[str]:
    """The paths of numbers that have no range (none, when every quantity is bounded)."""
    return [path for path, bound in _all() if bound is None]


def table() -> str:
    """The markdown table of every range: field, range, reason."""
    lines = ["| Field | Range | Why |", "|---|---|---|"]
    for path, bound in ranges():
        text = f"{bound.text} entries" if bound.unit == "entries" else bound.text
        lines.append(f"| `{path}` | {text} | {bound.why} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
