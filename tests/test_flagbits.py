"""What every bit of the DDI's flag types means (src/wddmsim/ddi/flagbits*.py), as ``wddmsim layout NAME
--explain`` prints it and docs/ddi.md "Flag bits" tabulates it: every bit of every flag type the layout
tables know is explained at every DDI version, every rule it cites exists, the docs' tables are the
generated ones, and the command answers exactly (bad input: one line, exit status 2)."""

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.ddi import flagbits, layout, registry, versions
from wddmsim.ddi.rules.catalog import RULE_COUNT, catalog

ROOT = Path(__file__).parents[1]
runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()


def run(*args):
    return runner.invoke(main, list(args), env={"COLUMNS": "100"})


def _own_bits(rec, version):
    return [ml.path for ml in layout.members(rec, "x64", version) if ml.bit_width is not None and ml.depth == 0]


def test_the_flag_types_are_every_record_with_bit_fields_of_its_own():
    expected = sorted(n for n, r in registry.RECORDS.items() if _own_bits(r, versions.LATEST))
    assert list(flagbits.flag_types()) == expected
    assert len(expected) == 51
    assert sorted(flagbits.TEXTS) == expected
    assert {"DXGK_SUBMITCOMMANDFLAGS", "DXGK_VIDMMCAPS", "DXGK_PTE", "D3DDDI_PATCHLOCATIONLIST"} <= set(expected)


@pytest.mark.parametrize("version", versions.VERSIONS, ids=lambda v: v.name)
def test_every_bit_of_every_flag_type_is_explained_at_every_version(version):
    for name in flagbits.flag_types():
        rec = registry.RECORDS[name]
        if not layout.exists(rec, version):
            continue
        explained = flagbits.explain(name, version)
        assert [b.name for b in explained] == _own_bits(rec, version)
        for b in explained:
            assert b.means and b.sets and b.must, (name, b.name)


def test_a_bit_without_text_is_refused_by_name(monkeypatch):
    """A bit added to a declaration without its text here cannot go unexplained: explain names it."""
    text = flagbits.TEXTS["DXGK_SUBMITCOMMANDFLAGS"]
    bits = {k: v for k, v in text.bits.items() if k != "Resubmission"}
    monkeypatch.setitem(flagbits.TEXTS, "DXGK_SUBMITCOMMANDFLAGS", replace(text, bits=bits))
    with pytest.raises(KeyError, match="DXGK_SUBMITCOMMANDFLAGS.Resubmission has no explanation"):
        flagbits.explain("DXGK_SUBMITCOMMANDFLAGS")
    assert [b.name for b in flagbits.explain("DXGK_SUBMITCOMMANDFLAGS", "win8")][-1] == "Reserved"


def test_every_text_is_about_a_bit_the_declaration_has():
    for name, text in flagbits.TEXTS.items():
        assert text.by in ("os", "driver"), name
        stale = set(text.bits) - set(_own_bits(registry.RECORDS[name], versions.LATEST))
        assert not stale, (name, stale)


def test_every_cited_rule_exists():
    cited = {n for t in flagbits.TEXTS.values() for b in t.bits.values() for n in b.rules}
    cited |= {n for t in flagbits.TEXTS.values() for n in t.reserved_rules}
    assert cited and all(1 <= n <= RULE_COUNT for n in cited)
    names = {r.number: r.name for r in catalog()}
    by_bit = {b.name: [names[n] for n in b.rules] for b in flagbits.explain("DXGK_SUBMITCOMMANDFLAGS")}
    assert by_bit == {
        "Paging": ["PrivateDataStartOffsetZero", "ContextSwitchPagingMatchesRunning",
                   "NullHandleOnlyForSystemSubmission", "PartialPagingBufferSubmittedSeparately"],
        "Present": ["HwQueueFlagsMatchOrigin"],
        "RedirectedPresent": [],
        "NullRendering": ["NullRenderingFenceOnly"],
        "Flip": ["FlipMembersValid"],
        "FlipWithNoWait": ["FlipMembersValid", "FlipWithNoWaitNeedsCap"],
        "ContextSwitch": ["ContextSwitchEmptyRange", "ContextSwitchPagingMatchesRunning",
                          "NullHandleOnlyForSystemSubmission"],
        "Resubmission": ["ResubmissionFlagConsistent", "RenderResubmitNewFence"],
        "VirtualMachineData": [],
        "Reserved": ["SubmitFlagsReservedZero"],
    }


def test_the_version_of_a_bit_comes_from_its_declaration():
    since = {(b.flag_type, b.name): b.since for n in ("DXGK_VIDSCHCAPS", "DXGK_NODEMETADATA_FLAGS",
                                                      "DXGK_CREATEPROCESSFLAGS") for b in flagbits.explain(n)}
    assert since[("DXGK_VIDSCHCAPS", "MultiEngineAware")] == "vista"
    assert since[("DXGK_VIDSCHCAPS", "PreemptionAware")] == "win8"
    assert since[("DXGK_VIDSCHCAPS", "HwQueuePacketCap")] == "wddm2_3"
    assert since[("DXGK_NODEMETADATA_FLAGS", "ContextSchedulingSupported")] == "wddm2_2"  # the type's own
    assert since[("DXGK_NODEMETADATA_FLAGS", "MaxInFlightHwQueueBuffers")] == "wddm2_5"
    assert since[("DXGK_CREATEPROCESSFLAGS", "SystemProcess")] == "wddm2_0"
    hw = {b.name: (b.bits, b.mask) for b in flagbits.explain("DXGK_VIDSCHCAPS")}
    assert hw["HwQueuePacketCap"] == ("7..10", "0x00000780")


def test_docs_ddi_md_carries_the_generated_tables():
    doc = (ROOT / "docs" / "ddi.md").read_text()
    head, sep, tail = doc.partition("## Flag bits\n")
    assert sep
    assert tail[tail.index("### "):] == flagbits.markdown(), \
        "docs/ddi.md is out of date: regenerate its Flag bits tables with uv run wddmsim layout --explain --markdown"
    r = run("layout", "--explain", "--markdown")
    assert r.exit_code == 0 and r.stdout == flagbits.markdown()
    assert "| 6 | ContextSwitch | win8 | Switch the node to the null context (zero-length buffer). |" in r.stdout
    one = run("layout", "DXGK_PATCHFLAGS", "--explain", "--markdown").stdout
    assert one == flagbits.markdown(["DXGK_PATCHFLAGS"]) and one.startswith("### DXGK_PATCHFLAGS\n")
    assert "| 4..31 | Reserved | vista | Must be zero. | Nobody: whoever fills the structure leaves it 0 at this " \
           "DDI version. | Ignore it; a later DDI version may give it a meaning. | 31 |" in one


def test_explain_prints_every_bit_at_the_version_asked_for():
    r = run("layout", "DXGK_SUBMITCOMMANDFLAGS", "--explain", "--ddi-version", "win8")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[:6] == [
        "DXGK_SUBMITCOMMANDFLAGS  x64  DDI win8 (0x300E, Windows 8): 8 bit fields in 4 bytes",
        "Filled by: The OS, in the Flags of every DXGKARG_SUBMITCOMMAND and DXGKARG_SUBMITCOMMANDVIRTUAL it",
        "  hands the driver, and of DXGKARG_SUBMITCOMMANDTOHWQUEUE from WDDM 2.4.",
        "Reference:",
        "https://learn.microsoft.com/en-us/windows-hardware/drivers/ddi/",
        "  d3dkmddi/ns-d3dkmddi-_dxgk_submitcommandflags",
    ]
    at = lines.index("bit 6  ContextSwitch  mask 0x00000040  since win8  rules 11, 12, 15")
    assert lines[at + 1:at + 6] == [
        "  means   Switch the node to the null context (zero-length buffer).",
        "  set     The OS (Windows 8 and later), as a zero-length submission before it moves or evicts memory",
        "          of the context running on the node.",
        "  driver  Switch the node from the context it last ran to the null context; the range is empty, and",
        "          Paging is set exactly when a paging operation was running.",
    ]
    assert "bit 7..31  Reserved  mask 0xFFFFFF80  since vista  rules 10" in lines
    assert "bit 2  RedirectedPresent  mask 0x00000004  since vista" in lines  # no rule judges it
    assert lines[-1] == "Later DDI versions add Resubmission, VirtualMachineData (--ddi-version latest explains them)."


def test_explain_as_json():
    r = run("layout", "DXGK_FLIPCAPS", "--explain", "--json", "--arch", "x86")
    assert r.exit_code == 0
    d = json.loads(r.stdout)
    assert (d["struct"], d["arch"], d["ddi_version"], d["later"]) == ("DXGK_FLIPCAPS", "x86", "wddm3_2", [])
    assert d["source"] == ("https://learn.microsoft.com/en-us/windows-hardware/drivers/ddi/d3dkmddi/"
                           "ns-d3dkmddi-_dxgk_flipcaps")
    assert d["filled_by"].startswith("The driver, in DXGK_DRIVERCAPS.FlipCaps, answering DxgkDdiQueryAdapterInfo")
    mmio = next(b for b in d["bits"] if b["name"] == "FlipOnVSyncMmIo")
    assert (mmio["bit_offset"], mmio["bit_width"], mmio["mask"], mmio["since"], mmio["rules"]) == (
        1, 1, "0x00000002", "vista", [64, 84])
    assert mmio["means"] == "Flips by MMIO from DxgkDdiSetVidPnSourceAddress, latched at vsync."
    assert mmio["set"] == "The driver, if it flips by MMIO latched at vsync."
    assert mmio["driver"].startswith("Set it only if the hardware and driver do it: the OS flips through ")
    old = json.loads(run("layout", "DXGK_FLIPCAPS", "--explain", "--json", "--ddi-version", "win7").stdout)
    assert old["later"] == ["FlipIndependent", "DdiPresentForIFlip", "FlipImmediateOnHSync"]


@pytest.mark.parametrize("args, message", [
    (["DXGKARG_SUBMITCOMMAND", "--explain"],
     "--explain: DXGKARG_SUBMITCOMMAND has no bit fields of its own; explain its flag member Flags "
     "(DXGK_SUBMITCOMMANDFLAGS)"),
    (["D3DDDI_FLIPINTERVAL_TYPE", "--explain"], "--explain: D3DDDI_FLIPINTERVAL_TYPE has no bit fields of its own"),
    (["DXGK_PTE", "--explain", "--ddi-version", "win8"],
     "DXGK_PTE does not exist at DDI version win8; it appeared in wddm2_0"),
    (["--explain"], "layout needs a STRUCT (e.g. DXGKARG_SUBMITCOMMAND), or --list for every type"),
    (["DXGK_PTE", "--markdown"], "--markdown goes with --explain (the flag-bit tables of docs/ddi.md)"),
    (["--explain", "--markdown", "--json"], "--markdown and --json: give one of them"),
    (["DXGK_PTE", "--explain", "--compare", "x86,x64"], "--explain and --compare: give one of them"),
    (["--list", "--explain"], "--list goes alone, not with --explain or --compare"),
])
def test_explain_bad_input_is_one_line_and_exit_2(args, message):
    r = run("layout", *args)
    assert r.exit_code == 2
    assert r.stderr == f"wddmsim: error: {message}\n"
