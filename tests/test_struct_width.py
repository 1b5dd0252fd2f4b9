"""``wddmsim layout``, ``decode`` and ``rules`` fit the console (src/wddmsim/cli/structures.py,
src/wddmsim/cli/rules.py, src/wddmsim/ddi/explain_text.py): COLUMNS when it is set, else the terminal,
else 100 columns when stdout is piped; no line is wider, no member, type or rule name is cut (the
prose and long type names wrap instead), and the stop a crash record holds wraps like the rest."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from wddmsim.cli import main
from wddmsim.cli.structures import print_stop, text_width
from wddmsim.ddi import flagbits, layout, registry
from wddmsim.ddi.explain_text import Col, fit_width, plain_table
from wddmsim.ddi.rules.catalog import catalog
from wddmsim.ddi.schema import Record

ROOT = Path(__file__).parents[1]
runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()


def run(*args, columns="100"):
    return runner.invoke(main, list(args), env={"COLUMNS": columns})


def widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


@pytest.fixture(scope="module")
def tdr_record(tmp_path_factory):
    """The crash record of examples/tdr_failure.toml (bug check 0x116, the README's example)."""
    record = tmp_path_factory.mktemp("crash") / "crash.json"
    r = runner.invoke(main, ["run", str(ROOT / "examples" / "tdr_failure.toml"), "--json", "--crash-record",
                             str(record)])
    assert r.exit_code == 3
    return record


def test_every_layout_explanation_and_comparison_fits_100_columns_piped():
    for name in registry.NAMES:
        r = run("layout", name)
        assert r.exit_code == 0 and widest(r.stdout) <= 100, name
        if isinstance(registry.lookup(name), Record):
            r = run("layout", name, "--compare", "x86,x64")
            assert r.exit_code == 0 and widest(r.stdout) <= 100, name
    for name in flagbits.flag_types():
        r = run("layout", name, "--explain")
        assert r.exit_code == 0 and widest(r.stdout) <= 100, name
    assert widest(run("layout", "--list", "--ddi-version", "vista").stdout) <= 100


def test_decode_and_rules_fit_100_columns_piped(tdr_record):
    r = run("decode", "DXGKARG_PREEMPTCOMMAND", "05000000010000000000000000000000")
    assert r.exit_code == 0 and widest(r.stdout) <= 100
    assert r.stdout.splitlines()[-2:] == [
        "No contract rule broken: judged from these bytes alone, DXGKARG_PREEMPTCOMMAND breaks none of the",
        "  rules one structure can show (rules about the calls around it need a run)."]
    r = run("decode", f"@{tdr_record}")
    assert r.exit_code == 1 and widest(r.stdout) == 100
    for args in (["rules"], ["rules", "--status", "not_modelled"]):
        r = run(*args)
        assert r.exit_code == 0 and widest(r.stdout) <= 100, args


def test_piped_output_without_columns_is_100_wide_and_columns_narrows_it(tdr_record):
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    for args in (["rules"], ["decode", f"@{tdr_record}"], ["layout", "DXGK_DRIVERCAPS"]):
        out = subprocess.run([sys.executable, "-m", "wddmsim", *args], capture_output=True, text=True, env=env,
                             timeout=300).stdout
        assert widest(out) == 100, args
    out = subprocess.run([sys.executable, "-m", "wddmsim", "rules"], capture_output=True, text=True,
                         env={**env, "COLUMNS": "80"}, timeout=300).stdout
    assert widest(out) == 80


def test_rule_names_are_never_cut_and_their_words_wrap():
    r = run("rules", "14", "47")
    assert r.stdout.splitlines() == [
        "DDI contract rules",
        " #  name                        status        tests  what it says",
        "14  NullRenderingFenceOnly      ground_truth      7  With NullRendering = 1 the packet still",
        "                                                     produces its completion fence but performs no",
        "                                                     rendering side effects.",
        "47  NoVsyncOnRenderOnlyAdapter  not_modelled      0  A render-only adapter never reports a display",
        "                                                     vsync interrupt; Windows stops with bug check",
        "                                                     0x119 if it does.",
        "2 rules: 0 runtime, 1 ground_truth, 0 construction, 1 not_modelled",
    ]
    # The whole catalogue leaves under 40 columns for the words at 100: they go under each rule.
    lines = run("rules").stdout.splitlines()
    assert lines[1:5] == [
        "  #  name                                       status        tests",
        "  1  SubmitCommandSucceeds                      runtime           4",
        "     DxgkDdiSubmitCommand returns STATUS_SUCCESS; any other status is bug check 0x119 (0x2, status).",
        "  2  SubmitAndPreemptAtDispatch                 construction      1",
    ]
    named = [line.split()[1] for line in lines[2:-1] if line[:3].strip().isdigit()]
    assert named == [r.name for r in catalog()]


def test_member_names_are_never_cut_in_a_narrow_console():
    r = run("layout", "DXGKARG_SUBMITCOMMAND", columns="60")
    shown = [line.split()[1] for line in r.stdout.splitlines()[3:] if line.startswith("+0x")]
    assert shown == [ml.path.rsplit(".", 1)[-1] for ml in layout.members(registry.lookup("DXGKARG_SUBMITCOMMAND"))]
    assert "+0x038  DmaBufferPrivateDataSubmissionEndOffset    UINT         4" in r.stdout.splitlines()


def test_long_type_names_wrap_after_their_underscores():
    lines = run("layout", "DXGK_DRIVERCAPS").stdout.splitlines()
    assert lines[1:4] == [
        "offset  member                                               type           size  bits    mask",
        "+0x000  HighestAcceptableAddress                             PHYSICAL_         8",
        "                                                             ADDRESS",
    ]
    assert plain_table([Col("n"), Col("type", wraps=True)], [["a", "D3DDDI_VIDEO_PRESENT_SOURCE_ID"]], 16) == [
        "n  type", "a  D3DDDI_VIDEO_", "   PRESENT_", "   SOURCE_ID"]


def test_run_prints_only_why_it_stopped_when_its_summary_showed_the_parameters(tdr_record):
    con = Console(width=100, record=True, force_terminal=False)
    with con.capture() as cap:
        print_stop(con, json.loads(tdr_record.read_text()), parameters=False)
    assert cap.get().splitlines() == [
        "Why it stopped: the driver broke contract rule 108 (ResetFromTimeoutSucceeds), which asks:",
        "  DxgkDdiResetFromTimeout and DxgkDdiRestartFromTimeout succeed; a failure is bug check 0x116",
        "  VIDEO_TDR_FAILURE.",
        "  What happened: DxgkDdiResetFromTimeout returned STATUS_UNSUCCESSFUL; it must return STATUS_SUCCESS",
        "    (rule 108)",
    ]


@pytest.mark.parametrize("columns, terminal, width", [
    (None, None, 100), (None, 132, 132), ("80", None, 80), ("80", 132, 80), ("abc", None, 100), ("20", None, 40),
])
def test_the_width_rule(monkeypatch, columns, terminal, width):
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert fit_width(terminal) == width
    if terminal is None:
        assert text_width(Console(force_terminal=False)) == width
