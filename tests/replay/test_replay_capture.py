"""Reading PresentMon captures: the three column sets of the gold files, their frames, and every
way a file can be unreadable."""

import dataclasses

import pytest
from replay_data import DATA, gold, gold_path

from wddmsim.replay.capture import COLUMN_SETS, FRAME_FIELDS, CaptureError, Frame, read_capture

TC4_CHAINS = {
    ("dwm.exe", 10376, "0x1BF098B1ED0"): 114,
    ("Presenter.exe", 9620, "0x19E52815138"): 18,
    ("Presenter.exe", 8536, "0x197B10BAB70"): 18,
    ("Presenter.exe", 5236, "0x285B4C0D1B0"): 18,
    ("Presenter.exe", 5192, "0x0"): 18,
}
TC0_CHAINS = {
    ("dwm.exe", 1268, "0x224B280A1C0"): 197,
    ("Presenter.exe", 10792, "0x20979A6D5F8"): 18,
    ("Presenter.exe", 8320, "0x15EFD8424E0"): 18,
    ("Presenter.exe", 11648, "0x1B95496E4B0"): 18,
    ("Presenter.exe", 3976, "0x0"): 18,
    ("Presenter.exe", 11112, "0x0"): 17,
    ("Presenter.exe", 2032, "0x29A5884FF18"): 18,
    ("Presenter.exe", 5988, "0x224CBFFD9D8"): 18,
    ("Presenter.exe", 12268, "0x20DBB4358B0"): 18,
    ("Presenter.exe", 11100, "0x0"): 17,
}


def v1_key(key):
    app, pid, chain = key
    return (app, pid, "0x%016X" % int(chain, 16))


@pytest.mark.parametrize("case", [0, 4])
@pytest.mark.parametrize("column_set", ["current", "v1", "v2"])
def test_detects_each_column_set(case, column_set):
    capture = gold(case, column_set)
    assert capture.column_set == column_set
    assert capture.columns == COLUMN_SETS[column_set].columns  # the gold files have every column
    assert capture.qpc_frequency == 10_000_000


@pytest.mark.parametrize("case, chains", [(0, TC0_CHAINS), (4, TC4_CHAINS)])
def test_presents_per_chain(case, chains):
    for column_set in ("current", "v2"):
        assert {k: len(v) for k, v in gold(case, column_set).chains().items()} == chains
    # v1 also has each chain's last present, which the 2.x sets hold back for its DisplayedTime
    assert {k: len(v) for k, v in gold(case, "v1").chains().items()} == {
        v1_key(k): n + (2 if k[0] == "dwm.exe" else 1) for k, n in chains.items()}


def test_chains_come_in_first_seen_order_and_frames_in_present_order():
    capture = gold(4, "current")
    assert list(capture.chains()) == list(TC4_CHAINS)
    starts = [f.present_start for f in capture.frames]
    assert starts == sorted(starts)


@pytest.mark.parametrize("column_set, origin, present_start, displayed", [
    ("current", 55436501505, 50_010_500, 66_118_500),
    ("v2", 55436501505, 50_010_500, 66_118_500),
    ("v1", 55437001610, 0, 16_108_000),
])
def test_first_dwm_frame_of_test_case_4(column_set, origin, present_start, displayed):
    capture = gold(4, column_set)
    assert capture.qpc_origin == origin
    assert capture.session_start_qpc == 55431485741
    first = capture.frames[0]
    assert (first.application, first.pid, first.swap_chain_address) == ("dwm.exe", 10376, 0x1BF098B1ED0)
    assert first.present_start == present_start
    assert origin + first.present_start // 100 == 55437001610  # TimeInQPC / QPCTime in the files
    assert first.in_present == 100_300  # 0.1003 ms
    assert first.gpu_busy == 769_500  # 0.7695 ms
    assert first.displayed == displayed
    assert first.until_displayed == 16_108_000  # 16.1080 ms
    assert first.render_present_latency == 664_300
    assert first.until_render_start == -49_976_600  # the GPU started before the present call
    assert first.gpu_time == 50_640_900
    # v2 has no MsBetweenDisplayChange: derived from the previous displayed frame, which is not in it
    assert first.between_display_change == (None if column_set == "v2" else 49_996_600)
    assert first.present_mode == "Hardware: Legacy Flip"
    assert first.frame_type == "Application"


def test_first_dwm_frame_cpu_metrics():
    current, v2, v1 = gold(4, "current").frames[0], gold(4, "v2").frames[0], gold(4, "v1").frames[0]
    for f in (current, v2):
        assert (f.cpu_start, f.cpu_busy, f.cpu_wait, f.gpu_latency) == (0, 50_010_500, 100_300, 33_900)
        assert f.animation_time == 501_576_400
    assert v2.displayed_time == 16_716_700 and current.displayed_time == 16_716_700  # derived here
    assert v1.cpu_start is None  # the previous present is not in the file
    assert gold(4, "v1").frames[1].cpu_start is not None


def test_v1_pads_the_swap_chain_address():
    assert gold(4, "v1").frames[0].swap_chain == "0x000001BF098B1ED0"
    assert gold(4, "current").frames[0].swap_chain == "0x1BF098B1ED0"


def test_other_mode_rows_with_na():
    other = [f for f in gold(4, "current").frames if f.present_mode == "Other"]
    assert len(other) == 1
    assert (other[0].application, other[0].displayed, other[0].until_displayed) == ("dwm.exe", None, None)
    assert other[0].dropped


def test_refresh_period_from_dwm():
    assert gold(4, "current").refresh_period_ns() == 16_683_400
    assert gold(0, "current").refresh_period_ns() == 16_680_000
    assert gold(4, "current").refresh_period_ns(("Presenter.exe", 9620, "0x19E52815138")) == 16_678_700


def _on_one_clock(case):
    origin = gold(case, "current").qpc_origin
    return {s: read_capture(gold_path(case, s), qpc_origin=origin) for s in ("current", "v1", "v2")}


@pytest.mark.parametrize("case", [0, 4])
def test_the_three_sets_give_the_same_frames(case):
    caps = _on_one_clock(case)
    by_start = {s: {(f.pid, f.present_start): f for f in c.frames} for s, c in caps.items()}
    assert by_start["current"].keys() == by_start["v2"].keys()
    assert by_start["current"].keys() < by_start["v1"].keys()
    differences = []
    for a, b in (("current", "v1"), ("current", "v2"), ("v1", "v2")):
        shared = (COLUMN_SETS[a].carries & COLUMN_SETS[b].carries) - {"swap_chain"}
        for key in by_start[a].keys() & by_start[b].keys():
            fa, fb = by_start[a][key], by_start[b][key]
            assert fa.swap_chain_address == fb.swap_chain_address
            for name in FRAME_FIELDS:
                va, vb = getattr(fa, name), getattr(fb, name)
                derived_both = va is not None and vb is not None
                if name != "swap_chain" and (name in shared or derived_both) and va != vb:
                    differences.append((a, b, key, name))
    if case == 0:
        assert differences == []
    else:
        # one present of pid 5236 was displayed after the next one was: its DisplayedTime would be
        # negative, so v2 prints NA for both display columns where the others have its screen time
        frame = (5236, 1_779_831_500)
        assert sorted(differences) == sorted(
            (a, "v2", frame, name) for a in ("current", "v1") for name in ("displayed", "until_displayed"))
        assert by_start["v2"][frame].displayed is None
        assert by_start["current"][frame].until_displayed == 22_444_200


@pytest.mark.parametrize("case", [0, 4])
def test_v1_extra_frames_are_each_chains_last(case):
    caps = _on_one_clock(case)
    current = {k[:2]: v for k, v in caps["current"].chains().items()}
    for key, frames in caps["v1"].chains().items():
        kept = current[key[:2]]
        assert [f.present_start for f in frames[:len(kept)]] == [f.present_start for f in kept]
        tail = frames[len(kept):]
        if key[0] == "dwm.exe":  # a displayed present, then a dropped one after the capture's end
            assert [f.dropped for f in tail] == [False, True]
        else:
            assert len(tail) == 1


def test_bom_and_extra_columns_are_tolerated(tmp_path):
    text = (DATA / "test_case_4.csv").read_text(encoding="utf-8-sig").splitlines()
    text = [text[0] + ",Extra"] + [line + ",x" for line in text[1:]]
    path = tmp_path / "nobom.csv"
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    capture = read_capture(path)
    assert capture.frames == gold(4, "current").frames
    assert capture.columns[-1] == "Extra"


def test_ties_keep_file_order(tmp_path):
    header = ",".join(COLUMN_SETS["current"].columns)
    lines = (DATA / "test_case_4.csv").read_text(encoding="utf-8-sig").splitlines()
    row = lines[1].split(",")
    second = list(row)
    second[0] = "other.exe"
    path = tmp_path / "ties.csv"
    path.write_text("\n".join([header, ",".join(row), ",".join(second)]) + "\n")
    assert [f.application for f in read_capture(path).frames] == ["dwm.exe", "other.exe"]


def test_overrides_of_origin_and_frequency():
    capture = read_capture(gold_path(4, "current"), qpc_origin=55437001610, qpc_frequency=10_000_000)
    assert capture.frames[0].present_start == 0
    assert capture.frames[0].cpu_start == -50_010_500


def test_frame_needs_keywords():
    f = Frame(application="a.exe", pid=1, swap_chain="0x10", runtime="DXGI", sync_interval=1,
              present_mode="Hardware: Legacy Flip", present_start=5, in_present=1)
    assert (f.key, f.swap_chain_address, f.dropped, f.frame_type) == (("a.exe", 1, "0x10"), 16, True,
                                                                     "Application")
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.pid = 2  # type: ignore[misc]


# --- unreadable captures ----------------------------------------------------------------------------

def _gold_lines():
    return (DATA / "test_case_4.csv").read_text(encoding="utf-8-sig").splitlines()


def _error(tmp_path, content, name="capture.csv") -> str:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(CaptureError) as caught:
        read_capture(path)
    # The message names the file as it was given (here a full path); the folder is cut for the
    # comparisons below.
    message = str(caught.value)
    assert message.startswith(str(path))
    return message.replace(f"{tmp_path}/", "", 1)


def test_error_empty_file(tmp_path):
    assert _error(tmp_path, "") == "capture.csv: empty file: no header line"
    assert _error(tmp_path, "\ufeff\n\n") == "capture.csv: empty file: no header line"


def test_error_header_only(tmp_path):
    assert _error(tmp_path, _gold_lines()[0] + "\n") == \
        "capture.csv: no frames: the file has a header but no rows"


def test_error_unknown_header(tmp_path):
    assert _error(tmp_path, "Application,ProcessID,Time\nx,1,2\n") == (
        "capture.csv: not a PresentMon capture: the header has none of the three known column sets "
        "(missing column 'MsBetweenPresents' and 17 more of the current set, missing column "
        "'msBetweenPresents' and 11 more of the v1 set, missing column 'FrameTime' and 14 more of "
        "the v2 set)")


def test_error_names_the_one_missing_column(tmp_path):
    lines = _gold_lines()
    header = lines[0].replace(",MsGPUBusy,", ",GPUBusyness,")
    message = _error(tmp_path, "\n".join([header] + lines[1:]) + "\n")
    assert message.startswith("capture.csv: not a PresentMon capture: the header has none of the three "
                              "known column sets (missing column 'MsGPUBusy' of the current set, ")


def test_error_bad_number_names_line_and_column(tmp_path):
    lines = _gold_lines()
    column = lines[0].split(",").index("MsGPUBusy")
    row = lines[16].split(",")
    row[column] = "abc"
    lines[16] = ",".join(row)
    assert _error(tmp_path, "\n".join(lines) + "\n") == \
        "capture.csv line 17: column MsGPUBusy: 'abc' is not a number"


@pytest.mark.parametrize("column, value, reason", [
    ("ProcessID", "12x", "'12x' is not an integer"),
    ("SwapChainAddress", "zz", "'zz' is not a hexadecimal address"),
    ("TimeInQPC", "NA", "a value is required, got 'NA'"),
    ("TimeInQPC", "-5", "'-5' is not a QPC value (negative)"),
    ("MsInPresentAPI", "nan", "'nan' is not a number"),
    ("MsInPresentAPI", "1_000", "'1_000' is not a number"),
])
def test_error_bad_values(tmp_path, column, value, reason):
    lines = _gold_lines()
    row = lines[3].split(",")
    row[lines[0].split(",").index(column)] = value
    lines[3] = ",".join(row)
    assert _error(tmp_path, "\n".join(lines) + "\n") == f"capture.csv line 4: column {column}: {reason}"


def test_error_v1_dropped_must_be_0_or_1(tmp_path):
    lines = (DATA / "test_case_4_v1.csv").read_text(encoding="utf-8-sig").splitlines()
    lines[2] = lines[2].replace(",DXGI,1,0,0,", ",DXGI,1,0,2,", 1)
    assert _error(tmp_path, "\n".join(lines) + "\n") == \
        "capture.csv line 3: column Dropped: '2' is not 0 or 1"


def test_error_short_row(tmp_path):
    lines = _gold_lines()
    lines[5] = ",".join(lines[5].split(",")[:12])
    assert _error(tmp_path, "\n".join(lines) + "\n") == "capture.csv line 6: 12 fields, the header has 32"


def test_error_binary_garbage(tmp_path):
    assert _error(tmp_path, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR") == \
        "capture.csv: not a text file: a NUL byte at offset 8"
    assert _error(tmp_path, b"Application,\xff\xfe\n") == \
        "capture.csv: not a text file: byte 0xFF at offset 12 is not UTF-8"


def test_error_unreadable(tmp_path):
    with pytest.raises(CaptureError) as e:
        read_capture(tmp_path / "missing.csv")
    assert str(e.value) == f"{tmp_path}/missing.csv: cannot read the file: No such file or directory"
    (tmp_path / "dir").mkdir()
    with pytest.raises(CaptureError) as e:
        read_capture(tmp_path / "dir")
    assert str(e.value) == f"{tmp_path}/dir: cannot read the file: Is a directory"


def test_error_duplicate_column(tmp_path):
    assert _error(tmp_path, "Application,Application\nx,y\n") == \
        "capture.csv: column 'Application' appears twice in the header"


def test_error_bad_quoting(tmp_path):
    lines = _gold_lines()
    lines[2] = lines[2].replace("dwm.exe,10376,", 'dwm.exe,"10376"x,', 1)
    assert _error(tmp_path, "\n".join(lines) + "\n") == \
        "capture.csv line 3: not CSV: ',' expected after '\"'"


def test_mangled_files_raise_only_capture_errors(tmp_path):
    """Gold files cut, spliced and overwritten at random (seeded): each reads or says why it cannot."""
    import random

    rng = random.Random(20240611)
    sources = [(DATA / name).read_bytes() for name in sorted(p.name for p in DATA.glob("*.csv"))]
    tokens = [b"NA", b"", b",", b"\n", b'"', b"0x", b"-1", b"1e99", b"nan", b"\x00", b"\xff", b"9" * 30, b"\r"]
    path = tmp_path / "mangled.csv"
    outcomes = set()
    for _ in range(400):
        data = bytearray(rng.choice(sources))
        for _ in range(rng.randint(1, 5)):
            pos, k = rng.randrange(len(data)), rng.random()
            if k < 0.3:
                del data[pos:pos + rng.randint(1, 20)]
            elif k < 0.6:
                data[pos:pos] = rng.choice(tokens)
            elif k < 0.8:
                data[pos] = rng.randrange(256)
            else:
                del data[pos:]
        path.write_bytes(bytes(data))
        try:
            read_capture(path)
            outcomes.add("read")
        except CaptureError as e:
            assert str(e).startswith(str(path))
            outcomes.add("error")
    assert outcomes == {"read", "error"}
