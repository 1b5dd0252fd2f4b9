"""The rule catalogue (wddmsim.ddi.rules.catalog, ``wddmsim rules``, docs/rules.md): every one of
the 127 DDI rules accounted for exactly once, consistent with the registry and the code it names,
linked to the tests that break or demonstrate it, and kept from drifting."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.ddi.rules import RULES
from wddmsim.ddi.rules.catalog import STATUSES, TESTS_JSON, catalog, counts, markdown_table, resolve
from wddmsim.ddi.rules.catalog import tests_map as read_tests_map
from wddmsim.ddi.rules.catalog_data import ENTRIES

ROOT = Path(__file__).resolve().parent.parent
ENFORCED = ("runtime", "ground_truth", "construction")


def test_every_rule_is_accounted_for_once_with_a_known_status():
    rules = catalog()
    assert [r.number for r in rules] == list(range(1, 128)) == sorted(ENTRIES)
    assert {r.status for r in rules} <= set(STATUSES)
    assert sum(counts().values()) == 127


def test_construction_and_not_modelled_rules_say_why():
    assert [r.number for r in catalog() if r.status in ("construction", "not_modelled") and not r.reason.strip()] == []


def test_every_rule_has_a_camelcase_name_words_and_microsoft_sources():
    for r in catalog():
        assert r.name and r.name[0].isupper() and r.name.isalnum(), r.number
        assert r.words.strip(), r.number
        assert r.source and all(u.startswith("https://learn.microsoft.com/") for u in r.source), r.number


def test_registered_rules_are_read_from_the_registry():
    for r in catalog():
        reg = RULES.get(r.number)
        if reg is None:
            continue
        assert (r.name, r.words) == (reg.name, reg.summary)
        e = ENTRIES[r.number]
        assert (e.name, e.words) == (None, None), f"rule {r.number}: the registry names it"


def test_unregistered_rules_do_not_reuse_a_registered_name():
    registered = {reg.name for reg in RULES.values()}
    names = [r.name for r in catalog()]
    assert len(set(names)) == 127
    assert [r.number for r in catalog() if r.number not in RULES and r.name in registered] == []


def test_every_check_reference_resolves():
    for r in catalog():
        for ref in r.check:
            assert resolve(ref) is not None, (r.number, ref)
        if r.number in RULES and r.status != "not_modelled":
            fn = resolve(r.check[0])  # the registered function, by its module and name
            assert (fn.__module__, fn.__name__) == (RULES[r.number].check.__module__, RULES[r.number].check.__name__)
            assert fn.__doc__ == RULES[r.number].check.__doc__


def test_tests_json_names_only_collected_tests_of_real_rules():
    data = read_tests_map()
    assert set(data) <= set(range(1, 128))
    for n, ids in data.items():
        assert ids == sorted(set(ids)) and all(i.startswith("tests/") and "::" in i for i in ids), n
    assert {r.number: list(r.tests) for r in catalog() if r.tests} == data


def test_tests_json_is_up_to_date_with_the_markers(tmp_path):
    out = tmp_path / "tests.json"
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "rule_tests.py"), "--out", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert out.read_text() == TESTS_JSON.read_text(), \
        "src/wddmsim/ddi/rules/tests.json is out of date: run uv run python tools/rule_tests.py"


def rules_without_tests() -> list[int]:
    return [r.number for r in catalog() if r.status in ENFORCED and not r.tests]


def test_every_enforced_rule_has_a_test_that_breaks_or_shows_it():
    assert rules_without_tests() == []


def test_every_enforced_rule_names_the_code_that_enforces_it():
    assert [r.number for r in catalog() if r.status in ENFORCED and not r.check] == []


# -- the command ---------------------------------------------------------------------------------------------
def test_the_table_ends_with_the_counts_per_status():
    r = CliRunner().invoke(main, ["rules"])
    assert r.exit_code == 0, r.output
    c = counts()
    assert r.output.rstrip().splitlines()[-1] == (
        f"127 rules: {c['runtime']} runtime, {c['ground_truth']} ground_truth, {c['construction']} construction, "
        f"{c['not_modelled']} not_modelled")
    assert c == {"runtime": 45, "ground_truth": 9, "construction": 65, "not_modelled": 8}
    assert "PatchSubmitFenceMatch" in r.output and "IdleBandNeverPreempts" in r.output


def test_json_lists_every_field_of_the_selected_rules():
    r = CliRunner().invoke(main, ["rules", "--json", "14", "47"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert [d["number"] for d in data] == [14, 47]
    assert set(data[0]) == {"number", "name", "words", "source", "status", "check", "reason", "tests"}
    assert (data[0]["name"], data[0]["status"]) == ("NullRenderingFenceOnly", "ground_truth")
    assert data[0]["check"][0] == "wddmsim.ddi.rules.submit.null_rendering"
    assert "tests/test_null_rendering.py::test_a_driver_that_runs_a_null_rendering_buffer_breaks_rule_14" in data[0]["tests"]
    assert (data[1]["status"], data[1]["check"]) == ("not_modelled", [])


def test_status_filters_and_counts_only_that_status():
    r = CliRunner().invoke(main, ["rules", "--status", "not_modelled", "--json"])
    assert r.exit_code == 0
    data = json.loads(r.output)
    assert len(data) == counts()["not_modelled"] and {d["status"] for d in data} == {"not_modelled"}
    r = CliRunner().invoke(main, ["rules", "--status", "ground_truth"])
    assert r.output.rstrip().splitlines()[-1] == "9 rules: 0 runtime, 9 ground_truth, 0 construction, 0 not_modelled"


@pytest.mark.parametrize("args, message", [
    (["0"], "no rule '0': rules are numbered 1 to 127"),
    (["128"], "no rule '128'"),
    (["five"], "no rule 'five'"),
    (["--status", "partial"], "unknown status 'partial'"),
])
def test_an_unknown_rule_or_status_is_exit_2(args, message):
    r = CliRunner().invoke(main, ["rules", *args])
    assert r.exit_code == 2 and message in r.output


def test_the_doc_carries_the_generated_table():
    doc = (ROOT / "docs" / "rules.md").read_text()
    head, sep, table = doc.partition("## The catalogue\n\n")
    assert sep and table == markdown_table(), "docs/rules.md is out of date: regenerate its table with " \
        "uv run wddmsim rules --markdown"
    r = CliRunner().invoke(main, ["rules", "--markdown"])
    assert r.output == markdown_table()
    for status in STATUSES:
        assert f"**{status}**" in head
