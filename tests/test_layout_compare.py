"""``wddmsim layout NAME --compare A,B`` (src/wddmsim/cli/structures.py, src/wddmsim/ddi/explain_layout.py):
two layouts of one structure side by side, two architectures or two DDI versions, every difference
marked and the size difference explained in sentences; bad values one line and exit status 2."""

import json

import pytest
from click.testing import CliRunner

from wddmsim.cli import main

runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()


def run(*args):
    return runner.invoke(main, list(args), env={"COLUMNS": "100"})


def test_x86_against_x64_says_why_80_bytes_become_96():
    r = run("layout", "DXGKARG_SUBMITCOMMAND", "--compare", "x86,x64")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[:5] == [
        "DXGKARG_SUBMITCOMMAND: x86 and x64 side by side, offsets and sizes in bytes (DDI wddm3_2)",
        "member                                        x86  size     x64  size  bits   differs",
        "hDevice                                    +0x000     4  +0x000     8         size",
        "hContext                                   +0x000     4  +0x000     8         size",
        "DmaBufferSegmentId                         +0x004     4  +0x008     4         offset",
    ]
    assert "pDmaBufferPrivateData                      +0x01c     4  +0x028     8         offset, size" in lines
    assert "  Reserved                                 +0x038     4  +0x048     4  9..31  offset" in lines
    assert lines[-5:] == [
        "DXGKARG_SUBMITCOMMAND is 80 bytes (align 8) on x86 and 96 bytes (align 8) on x64.",
        "Members whose size differs: hDevice, hContext (HANDLE: 4 -> 8 bytes); pDmaBufferPrivateData (PVOID:",
        "  4 -> 8 bytes).",
        "Its top-level members fill 76 bytes on x86 and 84 on x64 (+8); alignment padding fills 4 and 12",
        "  (+8).",
    ]


def test_two_ddi_versions_mark_the_members_only_one_has():
    r = run("layout", "DXGKARG_SUBMITCOMMANDTOHWQUEUE", "--compare", "wddm2_3,wddm2_4")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[:9] == [
        "DXGKARG_SUBMITCOMMANDTOHWQUEUE: wddm2_3 and wddm2_4 side by side, offsets and sizes in bytes (x64)",
        "member                       wddm2_3  size  wddm2_4  size  bits   differs",
        "hHwQueue                      +0x000     8   +0x000     8",
        "HwQueueProgressFenceId        +0x008     8   +0x008     8",
        "DmaBufferVirtualAddress       +0x010     8   +0x010     8",
        "DmaBufferSize                 +0x018     4   +0x018     4",
        "DmaBufferPrivateDataSize      +0x01c     4   +0x01c     4",
        "pDmaBufferPrivateData         +0x020     8   +0x020     8",
        "DmaBufferUmdPrivateDataSize   +0x028     4        -     -         only wddm2_3",
    ]
    assert "  Reserved                         -     -   +0x028     4  9..31  only wddm2_4" in lines
    assert lines[-6:] == [
        "HwQueueProgressFenceCpuVa          -     -   +0x038     8         only wddm2_4",
        "DXGKARG_SUBMITCOMMANDTOHWQUEUE is 48 bytes (align 8) on wddm2_3 and 64 bytes (align 8) on wddm2_4.",
        "Only on wddm2_3: DmaBufferUmdPrivateDataSize.",
        "Only on wddm2_4: Flags, HwQueueProgressFenceGpuVa, HwQueueProgressFenceCpuVa.",
        "Its top-level members fill 44 bytes on wddm2_3 and 60 on wddm2_4 (+16); alignment padding fills 4",
        "  and 4 (+0).",
    ]


def test_a_flag_union_across_versions_shows_the_reserved_range_shrink():
    r = run("layout", "DXGK_SUBMITCOMMANDFLAGS", "--compare", "wddm2_0,wddm3_0", "--arch", "x86")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[-5:] == [
        "VirtualMachineData        -     -   +0x000     4  8               only wddm3_0",
        "Reserved             +0x000     4   +0x000     4  8..31 -> 9..31  bits",
        "Value                +0x000     4   +0x000     4",
        "DXGK_SUBMITCOMMANDFLAGS is 4 bytes (align 4) on wddm2_0 and 4 bytes (align 4) on wddm3_0.",
        "Only on wddm3_0: VirtualMachineData.",
    ]
    same = run("layout", "D3DDDI_PATCHLOCATIONLIST", "--compare", "x86,x64").stdout.splitlines()
    assert same[-1] == "Same layout on both: 24 bytes, align 4."


def test_compare_as_json_agrees_with_each_layout():
    r = run("layout", "DXGKARG_SUBMITCOMMAND", "--compare", "x86,x64", "--ddi-version", "win7", "--json")
    assert r.exit_code == 0
    d = json.loads(r.stdout)
    assert [(s["label"], s["arch"], s["ddi_version"], s["size"]) for s in d["sides"]] == [
        ("x86", "x86", "win7", 72), ("x64", "x64", "win7", 88)]
    for arch in ("x86", "x64"):
        alone = json.loads(run("layout", "DXGKARG_SUBMITCOMMAND", "--arch", arch, "--ddi-version", "win7",
                               "--json").stdout)["members"]
        assert {p: m[arch] for p, m in d["members"].items()} == alone
    assert d["members"]["pDmaBufferPrivateData"]["differs"] == ["offset", "size"]
    assert d["members"]["hDevice"]["x86"] == {"offset": 0, "size": 4, "type": "HANDLE"}
    assert d["why"][0] == "DXGKARG_SUBMITCOMMAND is 72 bytes (align 8) on x86 and 88 bytes (align 8) on x64."


@pytest.mark.parametrize("args, message", [
    (["--compare", "x86"], "--compare: 'x86': give two values separated by a comma, two architectures (x86,x64) "
                           "or two DDI versions (wddm2_0,wddm3_0)"),
    (["--compare", "x86,x64,x86"], "--compare: 'x86,x64,x86': give two values separated by a comma"),
    (["--compare", "x86,arm64"], "--compare: 'arm64' is neither an architecture (x64, x86) nor a DDI version "
                                 "(vista, vista_sp1, win7"),
    (["--compare", "x86,win8"], "--compare: 'x86,win8': give two architectures (x86,x64) or two DDI versions "
                                "(wddm2_0,wddm3_0), not one of each"),
    (["--compare", "x64,x64"], "--compare: 'x64,x64' names the same layout twice"),
    (["--compare", "wddm3_2,latest"], "--compare: 'wddm3_2,latest' names the same layout twice"),
    (["--compare", "x86,x64", "--arch", "x86"], "--arch: --compare x86,x64 already names the architectures"),
    (["--compare", "win7,win8", "--ddi-version", "win8"],
     "--ddi-version: --compare win7,win8 already names the DDI versions"),
])
def test_bad_compare_values_are_one_line_and_exit_2(args, message):
    r = run("layout", "DXGKARG_SUBMITCOMMAND", *args)
    assert r.exit_code == 2
    assert r.stderr.startswith(f"wddmsim: error: {message}") and r.stderr.count("\n") == 1


def test_compare_needs_a_record_that_exists_on_both_sides():
    r = run("layout", "DXGKARG_SUBMITCOMMANDTOHWQUEUE", "--compare", "win8,wddm2_4")
    assert (r.exit_code, r.stderr) == (2, "wddmsim: error: DXGKARG_SUBMITCOMMANDTOHWQUEUE does not exist at DDI "
                                          "version win8; it appeared in wddm2_2\n")
    r = run("layout", "D3DDDI_FLIPINTERVAL_TYPE", "--compare", "x86,x64")
    assert (r.exit_code, r.stderr) == (2, "wddmsim: error: --compare: D3DDDI_FLIPINTERVAL_TYPE is an enumeration, "
                                          "the same 4 bytes on every layout; compare a structure or union\n")
    r = run("layout", "--list", "--compare", "x86,x64")
    assert (r.exit_code, r.stderr) == (2, "wddmsim: error: --list goes alone, not with --explain or --compare\n")
