"""The policy study of examples/research (every shipped policy on three workloads, seeds 1-10, 300
runs of 2 s of virtual time, about 30 s on two workers): docs/policies.md holds the table it makes,
its findings as the page states them hold, and the script writes its rows, figures and findings."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


def _study():
    spec = importlib.util.spec_from_file_location("research_study", ROOT / "examples" / "research" / "study.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    module = _study()
    out = tmp_path_factory.mktemp("research")
    result = module.study("1-10", workers=2, out=out)
    return module, result, out


def test_every_shipped_policy_ran_every_workload_without_a_failure(study):
    module, result, _ = study
    assert module.POLICIES == ("windows", "strict_priority", "fifo", "round_robin", "priority", "fair", "edf", "llf",
                               "partition", "mlfq")
    for workload in module.WORKLOADS:
        rows = result["rows"][workload]
        assert len(rows) == 100
        assert [r["error"] for r in rows] == [None] * 100


def test_only_the_deadline_policies_meet_every_deadline(study):
    _, result, _ = study
    found = result["findings"]
    for workload in ("interactive_batch", "mixed_deadlines"):
        table = found[workload]
        assert table["edf"]["misses"] == 0 and table["llf"]["misses"] == 0, workload
        for policy in ("windows", "strict_priority", "fifo", "round_robin", "priority", "fair", "partition", "mlfq"):
            assert table[policy]["misses"] >= 10, (workload, policy)
    # The game beside the batch job: the Windows-like quantum preempts the batch buffer within 2 ms,
    # so it misses far less than the policies that wait for a 10 ms buffer to end.
    ib = found["interactive_batch"]
    assert ib["windows"]["misses"] < ib["fifo"]["misses"] / 2
    assert ib["edf"]["p99_ms"] < 8 < ib["fifo"]["p99_ms"]


def test_only_fair_share_divides_the_gpu_by_weight(study):
    _, result, _ = study
    table = result["findings"]["equal_clients"]
    shares = table["fair"]["shares"]
    assert [round(s, 2) for s in shares] == [0.17, 0.33, 0.50]
    assert table["fair"]["worst_share_error"] < 0.01
    for policy in ("windows", "strict_priority", "fifo", "round_robin", "priority", "edf", "llf", "partition",
                   "mlfq"):
        assert table[policy]["worst_share_error"] > 0.15, policy
        assert all(0.28 < s < 0.40 for s in table[policy]["shares"]), policy
    assert table["fair"]["misses"] is None  # no context of this workload has a deadline


def test_the_study_writes_its_rows_figures_and_findings(study):
    module, result, out = study
    names = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert names == sorted(
        [f"{w}.csv" for w in module.WORKLOADS]
        + [f"{w}/policy_comparison.png" for w in module.WORKLOADS]
        + [f"{w}-{m}.png" for w in module.WORKLOADS for m in module.PLOTS[w]]
        + ["findings.md"])
    text = (out / "findings.md").read_text()
    assert text == module.markdown(result["findings"])
    assert "| `edf` | 0.0 |" in text
    header = (out / "mixed_deadlines.csv").read_text().splitlines()[0].split(",")
    assert header[:3] == ["scheduler.policy", "seed", "error"]
    assert "contexts.0.deadline_misses" in header


def test_docs_policies_md_holds_the_table_the_study_makes(study):
    module, result, _ = study
    text = (ROOT / "docs" / "policies.md").read_text()
    begin = "<!-- study: examples/research/study.py --seeds 1-10 -->\n"
    table = text[text.index(begin) + len(begin):text.index("<!-- end of study -->")]
    assert table == module.markdown(result["findings"]).replace("### ", "#### ").rstrip("\n") + "\n"
    # What the README's `uv run python examples/research/study.py` prints fits a 100-column terminal.
    assert max(len(line) for line in module.markdown(result["findings"]).splitlines()) <= 100
