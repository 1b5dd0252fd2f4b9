"""Write src/wddmsim/ddi/rules/tests.json: for each DDI rule, the tests marked ``@pytest.mark.rule(n)``.

The marker says the test breaks rule n in a run (runtime, ground_truth) or shows on a run that the
OS model guarantees it (construction); the catalogue (``wddmsim rules``) lists them. Only
collection runs, no test. tests/test_rules_catalog.py regenerates the map and fails when the
committed file differs.

Usage: uv run python tools/rule_tests.py [--check] [--out PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "wddmsim" / "ddi" / "rules" / "tests.json"


class _Collector:
    """A pytest plugin that records each collected item's ``rule`` marks."""

    def __init__(self) -> None:
        self.map: dict[int, set[str]] = {}
        self.errors: list[str] = []

    def pytest_collection_modifyitems(self, items) -> None:
        for item in items:
            for mark in item.iter_markers("rule"):
                if not mark.args or not all(type(n) is int and 1 <= n <= 127 for n in mark.args):
                    self.errors.append(f"{item.nodeid}: rule marks take rule numbers 1..127, got {mark.args!r}")
                    continue
                for n in mark.args:
                    self.map.setdefault(n, set()).add(item.nodeid)

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self.errors.append(f"{report.nodeid}: collection failed")


def collect() -> dict[str, list[str]]:
    """Collect the suite (tests/) and return the map as tests.json holds it."""
    plugin = _Collector()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "--rootdir", str(ROOT),
                            str(ROOT / "tests")], plugins=[plugin])
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED) or plugin.errors:
        raise SystemExit("rule_tests: " + ("; ".join(plugin.errors) or f"pytest exited {code}\n{out.getvalue()}"))
    return {str(n): sorted(ids) for n, ids in sorted(plugin.map.items())}


def render(data: dict[str, list[str]]) -> str:
    return json.dumps(data, indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT, help="where to write the map [default: %(default)s]")
    ap.add_argument("--check", action="store_true", help="only compare with the file; exit 1 if it differs")
    args = ap.parse_args(argv)
    text = render(collect())
    if args.check:
        same = args.out.exists() and args.out.read_text() == text
        print("tests.json is up to date" if same else f"{args.out} is out of date: run uv run python tools/rule_tests.py",
              file=sys.stderr)
        return 0 if same else 1
    args.out.write_text(text)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
