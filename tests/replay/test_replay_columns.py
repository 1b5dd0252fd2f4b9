"""Writing frames in PresentMon's column sets: round trips on the gold files, PresentMon's own text,
cross-set writes, and a model's frames."""

import pytest
from replay_data import DATA, FILES, gold

from wddmsim.replay.capture import COLUMN_SETS, FRAME_FIELDS, Frame, read_capture
from wddmsim.replay.columns import complete_frames, write_capture, write_capture_csv

CASES = [(case, s) for case in (0, 4) for s in ("current", "v1", "v2")]


@pytest.mark.parametrize("case, column_set", CASES)
def test_round_trip_gives_the_same_frames(tmp_path, case, column_set):
    capture = gold(case, column_set)
    path = write_capture_csv(capture.frames, tmp_path / "out.csv", column_set,
                             qpc_frequency=capture.qpc_frequency, qpc_origin=capture.qpc_origin)
    again = read_capture(path)
    assert again.column_set == column_set
    assert again.qpc_origin == capture.qpc_origin
    assert again.frames == capture.frames


@pytest.mark.parametrize("name", FILES)
def test_writing_reproduces_presentmons_text(tmp_path, name):
    """Every row PresentMon wrote comes back character for character (rows in present order)."""
    original = (DATA / name).read_bytes()
    written = write_capture(read_capture(DATA / name), tmp_path / name).read_bytes()
    assert written.startswith(b"\xef\xbb\xbf")
    original_lines, written_lines = original.split(b"\n"), written.split(b"\n")
    assert written_lines[0] == original_lines[0]
    assert sorted(written_lines) == sorted(original_lines)


def test_number_formats():
    text = (DATA / "test_case_4.csv").read_text(encoding="utf-8-sig").splitlines()
    first = dict(zip(text[0].split(","), text[1].split(",")))
    assert (first["MsBetweenPresents"], first["MsUntilDisplayed"]) == ("50.14450000000000", "16.1080")


@pytest.mark.parametrize("source", ["current", "v1", "v2"])
@pytest.mark.parametrize("target", ["current", "v1", "v2"])
@pytest.mark.parametrize("case", [0, 4])
def test_another_set_keeps_the_shared_fields(tmp_path, case, source, target):
    capture = gold(case, source)
    path = write_capture(capture, tmp_path / "out.csv", target)
    assert path.read_text(encoding="utf-8-sig").split("\n", 1)[0] == ",".join(COLUMN_SETS[target].columns)
    again = read_capture(path, qpc_origin=capture.qpc_origin)
    assert again.column_set == target
    before = {(f.pid, f.present_start): f for f in capture.frames}
    after = {(f.pid, f.present_start): f for f in again.frames}
    if source == "v1" and target == "v2":  # v2 places a frame by its CPU start: not the chains' first
        assert set(before) - set(after) == {(fr[0].pid, fr[0].present_start) for fr in capture.chains().values()}
    else:
        assert set(after) == set(before)
    shared = (COLUMN_SETS[source].carries & COLUMN_SETS[target].carries) - {"swap_chain"}
    for key, f in after.items():
        assert f.swap_chain_address == before[key].swap_chain_address
        assert {n: getattr(f, n) for n in shared} == {n: getattr(before[key], n) for n in shared}


def _model_frames():
    """Frames as a model might make them: ns times off the 100 ns grid, only the basic fields."""
    frames = []
    for i in range(6):
        start = 1_000_003 + i * 16_666_667
        shown = None if i == 3 else start + 20_000_011
        frames.append(Frame(application="game.exe", pid=42, swap_chain="0xABC", runtime="DXGI",
                            sync_interval=1, present_mode="Hardware: Independent Flip",
                            present_start=start, in_present=150_001, displayed=shown, gpu_busy=5_000_007))
    return frames


def test_complete_frames_derives_what_presentmon_would():
    frames = complete_frames(_model_frames())
    second, fifth = frames[1], frames[4]
    assert second.cpu_start == frames[0].present_start + frames[0].in_present
    assert second.cpu_busy == second.present_start - second.cpu_start
    assert second.cpu_wait == 150_001
    assert second.between_presents == 16_666_667
    assert second.until_displayed == 20_000_011
    assert second.between_display_change == 16_666_667 and second.displayed_time == 16_666_667
    assert second.gpu_latency == 0 and second.gpu_time == 5_000_007  # no GPU start known
    assert frames[0].cpu_start is None and frames[0].between_presents is None
    assert frames[3].dropped and frames[3].until_displayed is None
    assert fifth.between_display_change == 2 * 16_666_667  # from the last displayed frame
    assert frames[2].displayed_time == 2 * 16_666_667


def test_model_frames_round_trip_to_the_tick(tmp_path):
    """A model's nanoseconds come back to within 100 ns: a QPC tick (100 ns at 10 MHz) and the
    %.4f ms columns (0.1 us) round; at 1 GHz the QPC columns themselves are exact."""
    frames = complete_frames(_model_frames())
    for frequency in (10**9, 10_000_000):
        for column_set in ("current", "v1", "v2"):
            path = write_capture_csv(frames, tmp_path / f"{column_set}.csv", column_set,
                                     qpc_frequency=frequency, qpc_origin=5_000)
            again = read_capture(path, qpc_origin=5_000)
            assert again.qpc_frequency == frequency
            expected = frames if column_set != "v2" else frames[1:]  # the first has no CPU start
            carried = COLUMN_SETS[column_set].carries
            for a, b in zip(again.frames, expected, strict=True):
                assert a.swap_chain_address == b.swap_chain_address and a.present_mode == b.present_mode
                if frequency == 10**9 and column_set != "v2":
                    assert a.present_start == b.present_start
                for name in sorted(carried & TIMES):
                    va, vb = getattr(a, name), getattr(b, name)
                    assert (va is None) == (vb is None), (column_set, name)
                    assert va is None or abs(va - vb) <= 100, (column_set, name, va, vb)


TIMES = {"present_start", "in_present", "cpu_start", "cpu_busy", "cpu_wait", "gpu_latency", "gpu_time",
         "gpu_busy", "displayed", "until_displayed", "between_presents", "between_display_change",
         "displayed_time", "render_present_latency", "until_render_start"}


def test_another_qpc_frequency_is_inferred(tmp_path):
    capture = gold(4, "current")
    for column_set in ("current", "v1", "v2"):
        path = write_capture_csv(capture.frames, tmp_path / f"{column_set}.csv", column_set,
                                 qpc_frequency=3_579_545, qpc_origin=123_456_789)
        assert read_capture(path).qpc_frequency == 3_579_545


def test_dropped_frames_as_presentmon_writes_them(tmp_path):
    dropped = [f for f in gold(4, "current").frames if f.dropped][0]
    cells = {}
    for column_set in ("current", "v1", "v2"):
        text = write_capture_csv([dropped], tmp_path / "d.csv", column_set).read_text(encoding="utf-8-sig")
        header, row = text.splitlines()
        cells[column_set] = dict(zip(header.split(","), row.split(",")))
    assert cells["current"]["MsUntilDisplayed"] == "NA"
    assert (cells["v1"]["Dropped"], cells["v1"]["msUntilDisplayed"]) == ("1", "0.00000000000000")
    assert (cells["v2"]["DisplayLatency"], cells["v2"]["DisplayedTime"]) == ("NA", "NA")
    assert cells["current"]["MsPCLatency"] == "NA" and cells["v1"]["msSinceInput"] == "0.00000000000000"


def test_given_columns_are_written_in_that_order(tmp_path):
    frames = gold(4, "current").frames[:2]
    path = write_capture_csv(frames, tmp_path / "c.csv", "current",
                             columns=["TimeInQPC", "Application", "Unknown"])
    assert path.read_text(encoding="utf-8-sig").splitlines() == [
        "TimeInQPC,Application,Unknown", "500105,dwm.exe,NA", "665331,dwm.exe,NA"]


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown column set 'v3': one of current, v1, v2"):
        write_capture_csv([], "x.csv", "v3")
    with pytest.raises(ValueError, match="qpc_frequency must be positive"):
        write_capture_csv([], "x.csv", "v1", qpc_frequency=0)


def test_every_frame_field_is_documented():
    import inspect

    source = inspect.getsource(Frame)
    assert all(f"    {name}:" in source and "#:" in source.split(f"    {name}:")[1].split("\n")[0]
               for name in FRAME_FIELDS)
