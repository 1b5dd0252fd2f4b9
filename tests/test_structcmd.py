"""``wddmsim layout`` and ``wddmsim decode`` as a learner uses them (src/wddmsim/cli/structures.py), and the
bug-check parameter explanations they print (src/wddmsim/ddi/bugcheck.py): exact answers, exit status
1 when a contract rule is broken, and bad input answered with one clear line and exit status 2."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.ddi import codec, registry, versions
from wddmsim.ddi.bugcheck import BugCheck, BugCheckCode, VidSchError, describe, describe_parameters, meaning
from wddmsim.ddi.rules.catalog import catalog

runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()
ROOT = Path(__file__).parents[1]
TABLES = json.loads((ROOT / "tests" / "data" / "msvc_layouts.json").read_text())


def run(*args):
    """``wddmsim ARGS`` with its output piped, as wide as it is when COLUMNS is 100."""
    return runner.invoke(main, list(args), env={"COLUMNS": "100"})


# -- layout ------------------------------------------------------------------------------------------


def test_layout_json_gives_each_member_its_c_type():
    r = run("layout", "DXGKARG_SUBMITCOMMAND", "--arch", "x86", "--ddi-version", "win7", "--json")
    assert r.exit_code == 0
    d = json.loads(r.stdout)
    assert (d["struct"], d["kind"], d["arch"], d["ddi_version"], d["size"], d["align"]) == (
        "DXGKARG_SUBMITCOMMAND", "struct", "x86", "win7", 72, 8)
    m = d["members"]
    assert m["hDevice"] == {"offset": 0, "size": 4, "type": "HANDLE"}
    assert m["hContext"] == {"offset": 0, "size": 4, "type": "HANDLE"}
    assert m["DmaBufferPhysicalAddress"] == {"offset": 8, "size": 8, "type": "PHYSICAL_ADDRESS"}
    assert m["SubmissionFenceId"] == {"offset": 44, "size": 4, "type": "UINT"}
    assert m["FlipInterval"] == {"offset": 52, "size": 4, "type": "D3DDDI_FLIPINTERVAL_TYPE"}
    assert m["Flags"] == {"offset": 56, "size": 4, "type": "DXGK_SUBMITCOMMANDFLAGS"}
    assert m["Flags.Reserved"] == {"offset": 56, "size": 4, "bit_offset": 6, "bit_width": 26, "type": "UINT"}
    assert m["DmaBufferVirtualAddress"] == {"offset": 64, "size": 8, "type": "D3DGPU_VIRTUAL_ADDRESS"}
    assert "Flags.Resubmission" not in m and "NodeOrdinal" not in m  # WDDM 2.0 and Windows 8 members
    # Without the types, the members are the compiler's reference table for the same layout.
    ref = next(e for e in TABLES["layouts"]["x86"]["DXGKARG_SUBMITCOMMAND"] if "win7" in e["versions"])
    assert {p: {k: v for k, v in x.items() if k != "type"} for p, x in m.items()} == ref["members"]


def test_layout_json_of_an_enumeration_and_a_scalar():
    d = json.loads(run("layout", "D3DDDI_FLIPINTERVAL_TYPE", "--json").stdout)
    assert (d["kind"], d["size"], d["members"], d["values"]["D3DDDI_FLIPINTERVAL_FOUR"]) == ("enum", 4, {}, 4)
    d = json.loads(run("layout", "NTSTATUS", "--arch", "x86", "--json").stdout)
    assert d == {"struct": "NTSTATUS", "kind": "scalar", "arch": "x86", "ddi_version": "wddm3_2", "size": 4,
                 "align": 4, "members": {}, "type": "LONG"}


def test_layout_table_text():
    r = run("layout", "DXGK_SUBMITCOMMANDFLAGS", "--ddi-version", "win8")
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert lines[0] == "DXGK_SUBMITCOMMANDFLAGS  x64  DDI win8 (0x300E, Windows 8)  size 4 (0x4), align 4"
    assert lines[1].split() == ["offset", "member", "type", "size", "bits", "mask"]
    assert any(line.split() == ["+0x000", "ContextSwitch", "UINT", "4", "6", "0x00000040"] for line in lines)
    assert any(line.split() == ["+0x000", "Reserved", "UINT", "4", "7..31", "0xFFFFFF80"] for line in lines)


def test_layout_list_text_gives_sizes_on_both_architectures_and_the_version_a_type_appeared_in():
    r = run("layout", "--list")
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert lines[0] == "DDI types at wddm3_2 (0x11007, Windows 11 24H2): sizes in bytes"
    assert lines[1].split() == ["name", "kind", "x86", "x64", "since"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:-1]}
    assert rows["DXGKARG_SUBMITCOMMAND"] == ["struct", "80", "96", "vista"]
    assert rows["DXGKARG_SUBMITCOMMANDVIRTUAL"][-1] == "wddm2_0"
    assert rows["DXGK_SUBMITCOMMANDFLAGS"] == ["flags", "4", "4", "vista"]
    assert rows["PHYSICAL_ADDRESS"] == ["union", "8", "8", "vista"]
    assert rows["D3DDDI_FLIPINTERVAL_TYPE"] == ["enum", "4", "4", "vista"]
    assert rows["D3DDDI_NATIVEFENCE_TYPE"] == ["enum", "4", "4", "wddm3_1"]
    assert rows["NTSTATUS"] == ["scalar", "4", "4", "vista"]
    assert list(rows) == sorted(registry.NAMES)
    assert lines[-1] == f"{len(registry.NAMES)} types. since: the DDI version the type appeared in."


def test_layout_list_at_an_old_version_leaves_out_what_came_later():
    lines = run("layout", "--list", "--ddi-version", "vista").stdout.splitlines()
    assert lines[0] == "DDI types at vista (0x1052, Windows Vista): sizes in bytes"
    names = [line.split()[0] for line in lines[2:-2]]
    later = [n for n in registry.NAMES if registry.since(registry.lookup(n)) != "vista"]
    assert "DXGKARG_SUBMITCOMMAND" in names and "DXGKARG_SUBMITCOMMANDVIRTUAL" not in names
    assert "DXGK_INTERRUPT_TYPE" in names and "DXGK_ENGINE_STATE" not in names
    assert later and len(names) + len(later) == len(registry.NAMES)
    assert lines[-2:] == [f"{len(names)} types; {len(later)} more appear in later DDI versions (--ddi-version latest "
                          f"lists them). since: the DDI", "  version the type appeared in."]


@pytest.mark.parametrize("version", ["vista", "win8", "wddm2_4", "wddm3_2"])
def test_layout_list_json_agrees_with_the_compiler_tables(version):
    d = json.loads(run("layout", "--list", "--ddi-version", version, "--json").stdout)
    assert d["ddi_version"] == version
    # The compiler tables hold each type at exactly the versions it exists at.
    at_version = sorted(n for n, entries in TABLES["layouts"]["x64"].items()
                        if any(version in e["versions"] for e in entries))
    assert [row["name"] for row in d["types"]] == at_version
    for row in d["types"]:
        for arch in ("x86", "x64"):
            ref = next(e for e in TABLES["layouts"][arch][row["name"]] if version in e["versions"])
            assert row[arch] == {"size": ref["size"], "align": ref["align"]}, (row["name"], arch)
        first = min((v for e in TABLES["layouts"]["x64"][row["name"]] for v in e["versions"]),
                    key=lambda v: versions.ddi_version(v).value)
        assert row["since"] == first, row["name"]


@pytest.mark.parametrize(
    "args,message",
    [
        (("layout",), "layout needs a STRUCT (e.g. DXGKARG_SUBMITCOMMAND), or --list for every type"),
        (("layout", "DXGKARG_SUBMITCOMMAND", "--list"), "give a STRUCT or --list, not both"),
        (("layout", "DXGKARG_SUBMITCOMAND"), "unknown structure 'DXGKARG_SUBMITCOMAND'; did you mean "
                                             "DXGKARG_SUBMITCOMMAND, DXGKARG_SUBMITCOMMANDVIRTUAL, "
                                             "DXGKARG_SUBMITCOMMANDTOHWQUEUE?"),
        (("layout", "DXGK_ENGINE_STATE", "--ddi-version", "wddm3_0"),
         "DXGK_ENGINE_STATE does not exist at DDI version wddm3_0; it appeared in wddm3_1"),
        (("layout", "DXGKARG_SUBMITCOMMANDVIRTUAL", "--ddi-version", "win8"),
         "DXGKARG_SUBMITCOMMANDVIRTUAL does not exist at DDI version win8; it appeared in wddm2_0"),
        (("decode", "DXGKARG_PREEMPTCOMMAND", "00" * 15), "argument: DXGKARG_PREEMPTCOMMAND (x64, wddm3_2) is 16 bytes, got 15"),
        (("decode", "DXGKARG_PREEMPTCOMMAND", "zz" * 16), "argument: not hex: unexpected character 'z'"),
        (("decode", "DXGKARG_PREEMPTCOMMAND", "0" * 31), "argument: odd number of hex digits (31)"),
        (("decode", "DXGKARG_PREEMPTCOMMAND", "@/nonexistent/record.bin"), "/nonexistent/record.bin: no such file"),
        (("decode", "NTSTATUS", "00000000"), "NTSTATUS is a scalar; decode takes a structure"),
        (("decode", "DXGKARG_PREEMPTCOMMAND"), "decode needs STRUCT and DATA (hex or @FILE), or a crash record as @RECORD"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, message):
    r = run(*args)
    assert r.exit_code == 2
    assert r.stderr == f"wddmsim: error: {message}\n"
    assert r.stdout == ""


def test_unknown_version_is_a_usage_error():
    r = run("layout", "DXGKARG_SUBMITCOMMAND", "--ddi-version", "win95")
    assert r.exit_code == 2 and "win95" in r.stderr and "Traceback" not in r.stderr


# -- decode of bytes ---------------------------------------------------------------------------------


def _submit_breaking_rule_4() -> bytes:
    rec = registry.RECORDS["DXGKARG_SUBMITCOMMAND"]
    return codec.to_bytes(codec.new(rec, hContext=0x40, DmaBufferSize=0x1000, DmaBufferSubmissionEndOffset=0x800,
                                    DmaBufferPrivateDataSize=0x80, DmaBufferPrivateDataSubmissionStartOffset=0x10,
                                    DmaBufferPrivateDataSubmissionEndOffset=0x80, SubmissionFenceId=5, Flags=0x2))


def test_decode_names_a_broken_rule_in_sentences_and_exits_1(tmp_path):
    path = tmp_path / "submit.bin"
    path.write_bytes(_submit_breaking_rule_4())
    r = run("decode", "DXGKARG_SUBMITCOMMAND", f"@{path}", "--json")
    assert r.exit_code == 1
    d = json.loads(r.stdout)
    assert d["fields"]["Flags"]["text"] == "0x00000002 (Present)"
    assert d["fields"]["SubmissionFenceId"]["value"] == 5
    assert d["violations"] == [{
        "rule": 4, "name": "PrivateDataStartOffsetZero",
        "message": "DmaBufferPrivateDataSubmissionStartOffset is 16 but must be 0 when Flags.Paging is 0",
        "explained": "rule 4 (PrivateDataStartOffsetZero), which asks: DmaBufferPrivateDataSubmissionStartOffset "
                     "is 0 whenever Flags.Paging is 0.",
        "bugcheck": None,
    }]
    r = run("decode", "DXGKARG_SUBMITCOMMAND", _submit_breaking_rule_4().hex(" "))
    assert r.exit_code == 1
    assert r.stdout.splitlines()[-4:] == [
        "Rules broken: judged from these bytes alone, DXGKARG_SUBMITCOMMAND breaks 1 contract rule:",
        "  - rule 4 (PrivateDataStartOffsetZero), which asks: DmaBufferPrivateDataSubmissionStartOffset is 0",
        "    whenever Flags.Paging is 0.",
        "    Here: DmaBufferPrivateDataSubmissionStartOffset is 16 but must be 0 when Flags.Paging is 0",
    ]


def test_decode_says_which_bug_check_windows_stops_with_for_a_broken_rule():
    rec = registry.RECORDS["DXGKARGCB_NOTIFY_INTERRUPT_DATA"]
    obj = codec.new(rec, InterruptType=9)  # DXGK_INTERRUPT_DMA_PAGE_FAULTED
    obj.DmaPageFaulted.PageFaultFlags = 0x18  # ENGINE_RESET_REQUIRED | FATAL_HARDWARE_ERROR
    r = run("decode", "DXGKARGCB_NOTIFY_INTERRUPT_DATA", codec.to_bytes(obj).hex())
    assert r.exit_code == 1
    assert r.stdout.splitlines()[-7:] == [
        "Rules broken: judged from these bytes alone, DXGKARGCB_NOTIFY_INTERRUPT_DATA breaks 1 contract rule:",
        "  - rule 53 (FatalHardwareErrorBugChecks), which asks: FATAL_HARDWARE_ERROR in PageFaultFlags stops",
        "    the system: bug check 0x119/0xC.",
        "    Here: DmaPageFaulted.PageFaultFlags is 0x18 with FATAL_HARDWARE_ERROR: the system cannot",
        "      continue",
        "    Windows stops for it with bug check 0x119 (VIDEO_SCHEDULER_INTERNAL_ERROR), parameter 1 0xC",
        "      (FATAL_PAGE_FAULT).",
    ]


def test_decode_of_a_clean_structure_says_so_and_exits_0():
    rec = registry.RECORDS["DXGKARG_QUERYCURRENTFENCE"]
    hexbytes = codec.to_bytes(codec.new(rec, CurrentFence=3, NodeOrdinal=1)).hex()
    r = run("decode", "DXGKARG_QUERYCURRENTFENCE", "0x" + hexbytes)
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert lines[0] == "DXGKARG_QUERYCURRENTFENCE  x64  DDI wddm3_2  12 bytes"
    assert [line.split() for line in lines[2:5]] == [
        ["+0x000", "CurrentFence", "3"], ["+0x004", "NodeOrdinal", "1"], ["+0x008", "EngineOrdinal", "0"]]
    assert lines[-2:] == [
        "No contract rule broken: judged from these bytes alone, DXGKARG_QUERYCURRENTFENCE breaks none of the",
        "  rules one structure can show (rules about the calls around it need a run)."]
    assert json.loads(run("decode", "DXGKARG_QUERYCURRENTFENCE", hexbytes, "--json").stdout)["violations"] == []


# -- decode of a crash record ------------------------------------------------------------------------


@pytest.fixture
def submit_failure_record(tmp_path, monkeypatch):
    """A crash record: the driver's DxgkDdiSubmitCommand returns STATUS_NO_MEMORY for fence 2."""
    from wddmsim.cli import execute
    from wddmsim.ddi.ntstatus import NTSTATUS
    from wddmsim.kmd import ReferenceDriver
    from wddmsim.scenario import load_scenario
    import wddmsim.runner.system as system_mod

    class Failing(ReferenceDriver):
        def DxgkDdiSubmitCommand(self, hAdapter, p):
            return int(NTSTATUS.STATUS_NO_MEMORY) if p.SubmissionFenceId == 2 else super().DxgkDdiSubmitCommand(hAdapter, p)

    monkeypatch.setattr(system_mod, "ReferenceDriver", Failing)
    record = tmp_path / "crash.json"
    assert execute(load_scenario(str(ROOT / "examples" / "deep_queue.toml")), as_json=True,
                   crash_record=str(record)) == 3
    return record


def test_a_crash_record_shows_the_stop_every_parameter_the_rule_and_the_structure(submit_failure_record):
    rec = json.loads(submit_failure_record.read_text())
    address = rec["bugcheck"]["p3"]
    assert (rec["bugcheck"]["p1"], rec["bugcheck"]["p2"], rec["bugcheck"]["p4"], rec["address"]) == (
        2, 0xC0000017, 2, address)
    r = run("decode", f"@{submit_failure_record}")
    assert r.exit_code == 1, r.output
    lines = r.stdout.splitlines()
    assert lines[:19] == [
        "*** STOP at t=0 ns of virtual time: BugCheck 0x119 (VIDEO_SCHEDULER_INTERNAL_ERROR) {0x2,",
        f"    0xC0000017, 0x{address:X}, 0x2}}",
        "  VIDEO_SCHEDULER_INTERNAL_ERROR: the video scheduler found a fatal violation; parameter 1 says",
        "    which.",
        "  Arg1 0x2 DRIVER_FAILED_SUBMIT_COMMAND: the driver failed a command submission",
        "    (DxgkDdiSubmitCommand, or a preemption request through DxgkDdiPreemptCommand).",
        "  Arg2 0xC0000017: the NTSTATUS the driver's call returned: STATUS_NO_MEMORY",
        f"  Arg3 0x{address:X}: the address of the call's argument structure: DXGKARG_SUBMITCOMMAND, or",
        "    DXGKARG_PREEMPTCOMMAND for a preemption request (the model: also DXGKARG_SUBMITCOMMANDVIRTUAL or",
        "    DXGKARG_SUBMITCOMMANDTOHWQUEUE)",
        "  Arg4 0x2: the address of an internal scheduler structure (the model: the node's ordinal in the",
        "    high 32 bits and the fence id in the low 32; for a hardware-queue submission, its progress fence",
        "    id)",
        "Why it stopped: the driver broke contract rule 1 (SubmitCommandSucceeds), which asks:",
        "  DxgkDdiSubmitCommand returns STATUS_SUCCESS; any other status is bug check 0x119 (0x2, status).",
        "  What happened: DxgkDdiSubmitCommand returned 0xC0000017 (STATUS_NO_MEMORY) but must return",
        "    STATUS_SUCCESS",
        f"The structure at 0x{address:X} when the model stopped:",
        "DXGKARG_SUBMITCOMMAND  x64  DDI wddm2_0  96 bytes",
    ]
    assert ["+0x03c", "SubmissionFenceId", "2"] in [line.split() for line in lines]
    # One screen never says "rule broken" and "no rule broken" at once: the bytes alone break nothing
    # more, and the line says why the rule that stopped the model does not show in them.
    assert lines[-3:] == [
        "Judged from these bytes alone, DXGKARG_SUBMITCOMMAND breaks no further contract rule: rule 1 is",
        "  about what happened around it (what the driver returned or reported, and what the OS had issued),",
        "  which the bytes do not hold."]
    assert max(len(line) for line in lines) == 100
    assert "Microsoft documents nothing" not in r.stdout


def test_a_crash_record_as_json_carries_the_explanations(submit_failure_record):
    r = run("decode", f"@{submit_failure_record}", "--json")
    assert r.exit_code == 1
    out = json.loads(r.stdout)
    b = out["crash"]["bugcheck"]
    assert out["fields"]["SubmissionFenceId"]["value"] == 2 and b["p1"] == 2
    assert out["crash"]["explained"] == describe(BugCheck(b["code"], b["p1"], b["p2"], b["p3"], b["p4"]))
    assert out["crash"]["rule_explained"] == (
        "rule 1 (SubmitCommandSucceeds), which asks: DxgkDdiSubmitCommand returns STATUS_SUCCESS; any other status "
        "is bug check 0x119 (0x2, status).")
    assert out["violations"] == []


def test_a_crash_record_about_no_structure_still_shows_the_stop(tmp_path):
    """examples/tdr_failure.toml ends in bug check 0x116 with no structure (the README's example)."""
    record = tmp_path / "crash.json"
    r = runner.invoke(main, ["run", str(ROOT / "examples" / "tdr_failure.toml"), "--json", "--crash-record",
                             str(record)])
    assert r.exit_code == 3
    r = run("decode", f"@{record}")
    assert r.exit_code == 1, r.output
    lines = r.stdout.splitlines()
    assert lines[0].startswith("*** STOP at t=") and lines[0].endswith(
        " ns of virtual time: BugCheck 0x116 (VIDEO_TDR_FAILURE) {0x0, 0x0,")
    assert lines[1:] == [
        "    0xC0000001, 0x0}",
        "  VIDEO_TDR_FAILURE: recovering from a GPU timeout failed, or timeouts came too often.",
        "  Arg1 0x0: a pointer to the graphics kernel's internal TDR recovery context (TDR_RECOVERY_CONTEXT),",
        "    if there is one (the model: the address of its recovery record when TdrLevel 1 stops at the",
        "    first timeout; else 0)",
        "  Arg2 0x0: a pointer into the driver module held responsible (for example its owner tag) (the",
        "    model: 0, as the model's driver is no loaded image)",
        "  Arg3 0xC0000001: the error code (NTSTATUS) of the last operation that failed, if there is one:",
        "    STATUS_UNSUCCESSFUL (the model: the status DxgkDdiResetFromTimeout or DxgkDdiRestartFromTimeout",
        "    returned; 0 when no call failed)",
        "  Arg4 0x0: internal data that depends on the context, if there is any (the model: the node that",
        "    timed out when TdrLevel 1 stops at once; how many timeouts fell within TdrLimitTime when there",
        "    were too many; 0 when a recovery call failed)",
        "Why it stopped: the driver broke contract rule 108 (ResetFromTimeoutSucceeds), which asks:",
        "  DxgkDdiResetFromTimeout and DxgkDdiRestartFromTimeout succeed; a failure is bug check 0x116",
        "  VIDEO_TDR_FAILURE.",
        "  What happened: DxgkDdiResetFromTimeout returned STATUS_UNSUCCESSFUL; it must return STATUS_SUCCESS",
        "    (rule 108)",
        "The stop is about no single structure: the crash record holds no bytes to decode.",
    ]
    out = json.loads(run("decode", f"@{record}", "--json").stdout)
    assert (out["struct"], out["fields"], out["size"], out["crash"]["rule"]["number"]) == (None, {}, 0, 108)


def test_the_examples_of_docs_ddi_md_run(tmp_path):
    """Every `uv run wddmsim ...` line of docs/ddi.md runs: exit 0, and 1 for the crash record (its
    driver broke rule 108)."""
    import re
    import shlex

    text = (ROOT / "docs" / "ddi.md").read_text()
    examples = re.findall(r"^uv run wddmsim (.+?)(?:\s+#.*)?$", text, re.M)
    assert len(examples) == 8
    record = tmp_path / "wddmsim-crash.json"
    assert runner.invoke(main, ["run", str(ROOT / "examples" / "tdr_failure.toml"), "--json", "--crash-record",
                                str(record)]).exit_code == 3
    for line in examples:
        args = [f"@{record}" if a == "@wddmsim-crash.json" else a for a in shlex.split(line)]
        r = run(*args)
        assert r.exit_code == (1 if args[-1] == f"@{record}" else 0), (line, r.stderr)


def test_run_prints_the_stop_as_decode_does(tmp_path):
    r = runner.invoke(main, ["run", str(ROOT / "examples" / "tdr_failure.toml"), "--crash-record",
                             str(tmp_path / "crash.json")], env={"COLUMNS": "100"})
    assert r.exit_code == 3
    lines = r.stdout.splitlines()
    assert "  Arg3 0xC0000001: the error code (NTSTATUS) of the last operation that failed, if there is one:" in lines
    why = lines.index("Why it stopped: the driver broke contract rule 108 (ResetFromTimeoutSucceeds), which asks:")
    assert lines[why + 1:why + 5] == [
        "  DxgkDdiResetFromTimeout and DxgkDdiRestartFromTimeout succeed; a failure is bug check 0x116",
        "  VIDEO_TDR_FAILURE.",
        "  What happened: DxgkDdiResetFromTimeout returned STATUS_UNSUCCESSFUL; it must return STATUS_SUCCESS",
        "    (rule 108)"]


@pytest.mark.parametrize("text,message", [
    ('{"format": "other"}', "format: not a wddmsim-crash-record file"),
    ("[1, 2", "not a crash record (line 1: Expecting ',' delimiter); give STRUCT and DATA to decode raw bytes"),
    ('{"format": "wddmsim-crash-record", "struct": "", "arch": "x64", "ddi_version": "", "bytes": "", '
     '"address": 0, "time": 0, "message": "m", "bugcheck": {"code": 278}}',
     "bugcheck: needs the integers code, p1, p2, p3 and p4"),
    ('{"format": "wddmsim-crash-record", "struct": "DXGKARG_PATCH", "arch": "x64", "ddi_version": "", '
     '"bytes": "zz", "address": 0, "time": 0, "message": "m", '
     '"bugcheck": {"code": 278, "p1": 0, "p2": 0, "p3": 0, "p4": 0}}', "bytes: not hex"),
    ('{"format": "wddmsim-crash-record", "struct": "DXGKARG_PATCH", "arch": "x64", "ddi_version": "", '
     '"bytes": "", "time": 0, "message": "m", "bugcheck": {"code": 278, "p1": 0, "p2": 0, "p3": 0, "p4": 0}}',
     "address: missing from the crash record"),
])
def test_decode_rejects_a_file_that_is_not_a_crash_record(tmp_path, text, message):
    f = tmp_path / "x.json"
    f.write_text(text)
    r = run("decode", f"@{f}")
    assert (r.exit_code, r.stderr) == (2, f"wddmsim: error: {f}: {message}\n")


# -- the bug-check parameters ------------------------------------------------------------------------


def test_every_0x119_subcode_has_four_explained_parameters():
    for sub in VidSchError:
        lines = describe_parameters(BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, [sub, 1, 2, 3])
        assert [line.split(" ", 2)[:2] for line in lines] == [
            ["Arg1", f"0x{int(sub):X}"], ["Arg2", "0x1:"], ["Arg3", "0x2:"], ["Arg4", "0x3:"]]
        assert lines[0].startswith(f"Arg1 0x{int(sub):X} {sub.name}: ")
        assert not any("not documented" in line for line in lines)


def test_parameters_microsoft_documents_are_explained_and_the_others_say_microsoft_documents_nothing():
    documented = {VidSchError.DRIVER_FAILED_SUBMIT_COMMAND, VidSchError.DRIVER_FAILED_PATCH_COMMAND,
                  VidSchError.FAILED_CANCEL_COMMAND, VidSchError.REPORTED_INVALID_ABORTED_FENCE}
    for sub in VidSchError:
        lines = describe_parameters(0x119, [sub, 0, 0, 0])[1:]
        silent = [line for line in lines if "Microsoft documents nothing for this parameter of subcode" in line]
        assert len(silent) == (0 if sub in documented else 3), sub.name
    assert describe_parameters(0x119, [0x9, 0xC0000001, 0x5000, 7]) == [
        "Arg1 0x9 FAILED_CANCEL_COMMAND: the driver failed a cancel command (DxgkDdiCancelCommand returned an error).",
        "Arg2 0xC0000001: the NTSTATUS DxgkDdiCancelCommand returned: STATUS_UNSUCCESSFUL",
        "Arg3 0x5000: the address of the DXGKARG_CANCELCOMMAND",
        "Arg4 0x7: the address of an internal scheduler structure (the model: the sequence number of the cancelled "
        "packet)",
    ]
    assert describe_parameters(0x119, [0xA, 12, 10, (1 << 32) | 11]) == [
        "Arg1 0xA REPORTED_INVALID_ABORTED_FENCE: the driver reported an aborted fence id outside the valid range "
        "(LastAbortedFenceId below the last completed or above the last submitted fence id).",
        "Arg2 0xC: the LastAbortedFenceId the driver returned",
        "Arg3 0xA: the last completed fence id",
        "Arg4 0x10000000B: an internal OS value (the model: the node's ordinal in the high 32 bits and its last "
        "submitted fence id in the low 32)",
    ]
    assert describe_parameters(0x119, [0x3, 0x7000, 4, 1]) == [
        "Arg1 0x3 DRIVER_FAILED_PATCH_COMMAND: the driver failed to patch a DMA buffer (DxgkDdiPatch returned an "
        "error).",
        "Arg2 0x7000: the address of an internal scheduler structure (the model: the address of the DXGKARG_PATCH)",
        "Arg3 0x4: the address of an internal scheduler structure (the model: the fence id of the packet)",
        "Arg4 0x1: the address of an internal scheduler structure (the model: the node's ordinal)",
    ]
    assert describe_parameters(0x119, [0x6]) == [
        "Arg1 0x6 DRIVER_INVALID_ADAPTER_MASK: on a GPU made of several physical adapters, the driver reported an "
        "interrupt with a NULL PhysicalAdapterMask.",
        "Arg2 0x0: Microsoft documents nothing for this parameter of subcode 0x6; the model leaves it 0",
        "Arg3 0x0: Microsoft documents nothing for this parameter of subcode 0x6; the model leaves it 0",
        "Arg4 0x0: Microsoft documents nothing for this parameter of subcode 0x6; the model leaves it 0",
    ]
    assert describe_parameters(0x119, [0x5, 0xC01E0001, 0x9000, 1])[1:] == [
        "Arg2 0xC01E0001: Microsoft documents nothing for this parameter of subcode 0x5; the model puts here the "
        "NTSTATUS DxgkDdiBuildPagingBuffer returned: STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER",
        "Arg3 0x9000: Microsoft documents nothing for this parameter of subcode 0x5; the model puts here the address "
        "of the DXGKARG_BUILDPAGINGBUFFER",
        "Arg4 0x1: Microsoft documents nothing for this parameter of subcode 0x5; the model puts here the paging "
        "operation asked for: DXGK_OPERATION_FILL",
    ]


def test_the_os_internal_and_unknown_0x119_subcodes():
    assert describe_parameters(0x119, [0xE00])[0] == (
        "Arg1 0xE00: the OS ran out of the packets it keeps in reserve for passive flip requests.")
    for p1 in (0x400, 0x1000, 0x10000):
        assert describe_parameters(0x119, [p1])[0] == (
            f"Arg1 0x{p1:X}: an internal OS state error, usually memory corruption or failing hardware.")
    assert describe_parameters(0x119, [0x77])[0] == "Arg1 0x77: a subcode Microsoft's 0x119 page does not list"


def test_the_tdr_codes_and_their_live_dumps():
    tdr_context = ("a pointer to the graphics kernel's internal TDR recovery context (TDR_RECOVERY_CONTEXT), if there "
                   "is one")
    owner = "a pointer into the driver module held responsible (for example its owner tag)"
    for code in (0x117, 0x141, 0x142):
        lines = describe_parameters(code, [0, 0, 0, 5])
        assert lines[0].startswith(f"Arg1 0x0: {tdr_context} (the model: ")
        assert lines[1].startswith(f"Arg2 0x0: {owner} (the model: ")
        assert lines[2] == "Arg3 0x0: a secondary bucketing key specific to the driver (the model: 0, as the model " \
                           "keeps none)"
    assert describe_parameters(0x117, [0, 0, 0, 9])[3] == (
        "Arg4 0x9: internal data that depends on the context, if there is any (the model: 9 when an engine timeout "
        "was promoted to an adapter reset, as the TdrReason TdrEngineTimeoutPromotedToAdapterReset; else 0)")
    assert describe_parameters(0x141, [0, 0, 0, 2])[3] == (
        "Arg4 0x2: internal data that depends on the context, if there is any (the model: the ordinal of the node "
        "that timed out)")
    assert describe_parameters(0x142, [0, 0, 0, 4096])[3] == "Arg4 0x1000: the id of the process that is blocked " \
                                                             "from the GPU"
    assert describe_parameters(0x116, [0, 0, 0xC0000001, 0])[2].startswith(
        "Arg3 0xC0000001: the error code (NTSTATUS) of the last operation that failed, if there is one: "
        "STATUS_UNSUCCESSFUL")
    assert meaning(0x117) == ("VIDEO_TDR_TIMEOUT_DETECTED: the display driver did not answer in time and was reset; "
                              "a live dump of a recovered timeout, never a real stop.")


@pytest.mark.parametrize("source,text", [
    (0x1, "the black-screen hotkey"),
    (0x2, "the volume key combination"),
    (0x4, "the graphics kernel itself"),
    (0x8, "a long press of the power button"),
    (0x9, "reserved for Microsoft's internal testing"),
    (0xA, "a monitor that is connected while no mode set could enable a single path (triggered automatically)"),
    (0x3, "a source Microsoft's page does not list"),
])
def test_the_black_screen_live_dump_names_its_source(source, text):
    assert describe_parameters(0x1A8, [source]) == [
        f"Arg1 0x{source:X}: what asked for the black-screen live dump: {text}",
        "Arg2 0x0: reserved", "Arg3 0x0: reserved", "Arg4 0x0: reserved"]


def test_the_other_stop_codes_the_model_uses():
    assert describe_parameters(0x133, [0, 0x501, 0x500, 0]) == [
        "Arg1 0x0: one DPC or ISR ran past its time allotment",
        "Arg2 0x501: the DPC's time count, in clock ticks",
        "Arg3 0x500: the DPC time allotment, in clock ticks",
        "Arg4 0x0: reserved",
    ]
    assert describe_parameters(0x133, [1, 64])[:2] == [
        "Arg1 0x1: the processor spent too long in all at DISPATCH_LEVEL or above",
        "Arg2 0x40: the watchdog period (the model: its limit, DPCs at one instant of virtual time, since it counts "
        "DPCs rather than clock ticks)",
    ]
    assert describe_parameters(0xF2, [0, 0x10, 0, 1])[3] == (
        "Arg4 0x1: 1 when the ISR is not chained, 2 when it is (the model: 1, as the model's interrupt line has one "
        "ISR)")
    assert describe_parameters(0xC4, [4, 0x2000])[:2] == [
        "Arg1 0x4: which kind of violation Driver Verifier found, as the 0xC4 page lists them (the model: the number "
        "of the DDI contract rule the driver broke; `wddmsim rules N` says what the rule asks)",
        "Arg2 0x2000: depends on parameter 1 (the model: the address of the structure that broke the rule)",
    ]
    assert describe_parameters(0x1E, [0xC0000094])[0].startswith(
        "Arg1 0xC0000094: the exception code nobody handled: STATUS_INTEGER_DIVIDE_BY_ZERO (the model: ")
    assert describe_parameters(0x999, [1]) == [
        "Arg1 0x1: the model does not know bug check 0x999", "Arg2 0x0: the model does not know bug check 0x999",
        "Arg3 0x0: the model does not know bug check 0x999", "Arg4 0x0: the model does not know bug check 0x999"]


def test_describe_is_the_stop_its_meaning_and_its_parameters():
    bc = BugCheck(0x119, 0x11, 7, 0x40, 6)
    assert describe(bc) == [
        "BugCheck 0x119 (VIDEO_SCHEDULER_INTERNAL_ERROR) {0x11, 0x7, 0x40, 0x6}",
        "VIDEO_SCHEDULER_INTERNAL_ERROR: the video scheduler found a fatal violation; parameter 1 says which.",
        "Arg1 0x11 INCORRECT_SUSPEND_FENCE: the driver reported a suspend-completed fence the OS has not issued.",
        "Arg2 0x7: Microsoft documents nothing for this parameter of subcode 0x11; the model puts here the "
        "ContextSuspendFence the driver reported",
        "Arg3 0x40: Microsoft documents nothing for this parameter of subcode 0x11; the model puts here the handle "
        "of the context",
        "Arg4 0x6: Microsoft documents nothing for this parameter of subcode 0x11; the model puts here the last "
        "suspend fence the OS issued for it",
    ]
    assert all(meaning(c).startswith(f"{c.name}: ") for c in BugCheckCode)


def test_rule_words_come_from_the_catalogue():
    from wddmsim.cli.structures import rule_sentence

    r = catalog()[107]
    assert rule_sentence(108) == f"rule 108 ({r.name}), which asks: {r.words}"
    assert rule_sentence(999, "Unknown") == "rule 999 (Unknown)"


@pytest.mark.parametrize("change, message", [
    ({"ddi_version": "win95"}, "ddi_version: unknown DDI version 'win95'; known: "),
    ({"ddi_version": 7}, "ddi_version: a DDI version name, not 7"),
    ({"arch": "arm64"}, 'arch: "arm64" is not an architecture; one of x64, x86'),
    ({"arch": 5}, "arch: 5 is not an architecture; one of x64, x86"),
    ({"struct": 7}, 'struct: a structure name or "" (none), not 7'),
    ({"struct": "DXGKARG_NOSUCH"}, "struct: unknown structure 'DXGKARG_NOSUCH'"),
    ({"address": "x"}, 'address: a whole number of at least 0, not "x"'),
    ({"address": -1}, "address: a whole number of at least 0, not -1"),
    ({"address": True}, "address: a whole number of at least 0, not true"),
    ({"time": 1.5}, "time: a whole number of at least 0, not 1.5"),
    ({"message": 5}, "message: text, not 5"),
    ({"traceback": ["x"]}, 'traceback: text or null, not ["x"]'),
    ({"ddi": 5}, "ddi: text or null, not 5"),
    ({"rule": "x"}, 'rule: null, or {"number": N, "name": "..."} with N a whole number'),
    ({"rule": {"number": "108"}}, 'rule: null, or {"number": N, "name": "..."} with N a whole number'),
])
@pytest.mark.parametrize("with_bytes", [True, False])
def test_decode_names_a_crash_record_field_edited_out_of_its_type_or_range(tmp_path, submit_failure_record, change,
                                                                          message, with_bytes):
    # With and without the structure's bytes: a record edited by hand is never half-read (it used to
    # give KeyError, TypeError or AttributeError tracebacks, or exit 1 as if it had been decoded).
    rec = json.loads(submit_failure_record.read_text())
    assert rec["struct"] == "DXGKARG_SUBMITCOMMAND" and rec["bytes"]
    if not with_bytes:
        rec.update(struct="", bytes="")
    if "struct" in change and not with_bytes:
        rec["bytes"] = ""
    rec.update(change)
    f = tmp_path / "edited.json"
    f.write_text(json.dumps(rec))
    r = run("decode", f"@{f}")
    assert r.exit_code == 2
    assert r.stderr.startswith(f"wddmsim: error: {f}: {message}") and r.stderr.count("\n") == 1, r.stderr
