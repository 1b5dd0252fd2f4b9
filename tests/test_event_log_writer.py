"""The JSON Lines sink's writer process: the file it writes is byte for byte the one the sink writes
in its own process (and the one a sink beside ``--trace`` writes); an error in the writer is raised
in the run's process, never a silently short log; a run stopped part way (an exception, Ctrl-C)
still has every event emitted before its sink was closed; where no child process can start, the
sink writes in process. The gateway hands the sink a DdiCall's structure as raw bytes, which read
into exactly the members a list sink receives."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from wddmsim.scenario import load_scenario
from wddmsim.runner.system import System
from wddmsim.trace import JsonlSink, ListSink, TeeSink, writer
from wddmsim.trace.lines import Lines

ROOT = Path(__file__).parent.parent
UNTIL = 60_000_000


def _scenario(name: str = "game_and_compute"):
    return load_scenario(str(ROOT / "examples" / f"{name}.toml"))


def _log(tmp_path, tag: str, sink_of, name: str = "game_and_compute") -> tuple[bytes, object]:
    path = tmp_path / f"{tag}.jsonl"
    sink = sink_of(str(path))
    System(_scenario(name), trace=sink).run(until=UNTIL)
    sink.close()
    return path.read_bytes(), sink


@pytest.mark.parametrize("name", ["game_and_compute", "hardware_scheduling", "paging"])
def test_the_writer_process_writes_the_bytes_the_sink_writes_in_process(tmp_path, name):
    forked, a = _log(tmp_path, "writer", JsonlSink, name)
    here, b = _log(tmp_path, "here", lambda p: JsonlSink(p, process=False), name)
    beside, c = _log(tmp_path, "tee", lambda p: TeeSink(JsonlSink(p), ListSink()), name)
    assert not a.in_process and b.in_process
    assert forked == here == beside and forked.count(b"\n") == a.count == b.count > 100
    assert b'"event":"DdiCall"' in forked


def test_the_sink_writes_in_process_where_no_child_can_start(tmp_path, monkeypatch):
    class NoChildren:
        def Pipe(self, duplex):  # noqa: N802 - multiprocessing's name
            raise OSError("no pipes here")

    monkeypatch.setattr(writer, "_context", NoChildren)
    fallback, sink = _log(tmp_path, "fallback", JsonlSink)
    monkeypatch.undo()
    forked, _ = _log(tmp_path, "writer", JsonlSink)
    assert sink.in_process and fallback == forked


def test_an_error_in_the_writer_is_raised_with_where_it_happened(tmp_path):
    path = tmp_path / "log.jsonl"
    sink = JsonlSink(str(path))
    sink.emit(0, "Dropped", {"source": 1})
    sink.emit(1, "Dropped", {"source": {2}})
    with pytest.raises(TypeError, match="set is not JSON serializable") as info:
        for t in range(2, 4 * writer.BATCH):  # the error comes back at a later batch
            sink.emit(t, "Dropped", {"source": t})
        sink.close()
    assert any(f"writing {path}" in note for note in info.value.__notes__)
    process = sink._writer._process
    sink.close()  # after its error: only cleans up, raises nothing more, and the writer exits
    assert not process.is_alive() and process.exitcode == 0


def test_a_writer_that_dies_is_an_error_not_a_short_log(tmp_path):
    path = tmp_path / "log.jsonl"
    sink = JsonlSink(str(path))
    sink.emit(0, "Dropped", {"source": 1})
    os.kill(sink._writer._process.pid, signal.SIGKILL)
    sink._writer._process.join()
    with pytest.raises(writer.LogWriterError, match="writer process stopped.*the log is incomplete"):
        sink.close()


class _Interrupt:
    """Passes events to ``sink`` and raises KeyboardInterrupt at the ``at``-th (not passed on)."""

    raw_args = True

    def __init__(self, sink, at: int):
        self.sink, self.at, self.n = sink, at, 0

    def emit(self, t, event, fields):
        self.n += 1
        if self.n == self.at:
            raise KeyboardInterrupt
        self.sink.emit(t, event, fields)


def test_an_interrupted_run_keeps_every_event_emitted(tmp_path, monkeypatch):
    full, _ = _log(tmp_path, "full", lambda p: JsonlSink(p, process=False))
    monkeypatch.setattr(writer, "BATCH", 64)  # several batches sent before the stop
    at = 2 * writer.BATCH + 17
    path = tmp_path / "cut.jsonl"
    sink = JsonlSink(str(path))
    os.kill(sink._writer._process.pid, signal.SIGINT)  # Ctrl-C reaches the writer too: it goes on
    os.kill(sink._writer._process.pid, signal.SIGTERM)  # and so may a SIGTERM to the process group
    with pytest.raises(KeyboardInterrupt):
        try:
            System(_scenario(), trace=_Interrupt(sink, at)).run(until=UNTIL)
        finally:
            sink.close()
    cut = path.read_bytes()
    assert cut.count(b"\n") == at - 1 and full.startswith(cut)


def test_a_raw_structure_reads_into_the_members_a_list_sink_receives():
    class Raw(ListSink):
        raw_args = True

    raw, plain = Raw(), ListSink()
    System(_scenario(), trace=raw).run(until=UNTIL)
    System(_scenario(), trace=plain).run(until=UNTIL)
    lines = Lines()
    calls = [e for e in raw.events if e["event"] == "DdiCall"]
    assert sum(type(e["args"]) is tuple for e in calls) > 100
    for e in calls:
        if type(e["args"]) is tuple:
            key, data = e["args"]
            assert type(data) is bytes and key[1] == "x64"
            e["args"] = dict(lines.members(e["args"]))
    assert raw.events == plain.events and all(type(e["args"]) is dict for e in plain.of("DdiCall"))


def test_a_sink_nobody_closed_still_writes_every_event_at_exit(tmp_path):
    """A program that forgets close() (or dies of an exception before it) loses no event: the
    sink's finalizer hands the last batch to the writer before the interpreter stops it."""
    log = tmp_path / "forgotten.jsonl"
    code = ("from wddmsim.trace import JsonlSink\n"
            f"s = JsonlSink({str(log)!r})\n"
            "assert not s.in_process\n"
            "for i in range(5000):\n"
            "    s.emit(i, 'Tick', {'i': i})\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = log.read_text().splitlines()
    assert len(lines) == 5000 and lines[-1] == '{"t":4999,"event":"Tick","i":4999}'


def test_a_writer_whose_run_died_closes_its_file_with_whole_lines(tmp_path):
    """The run's process gone (its end of the pipe closed without the end message): the writer
    closes the file with every line it was sent, whole, and exits quietly."""
    path = tmp_path / "log.jsonl"
    sink = JsonlSink(str(path))
    for i in range(3):
        sink.emit(i, "Dropped", {"source": 1, "context": 2, "seq": i, "fence": i})
    proc = sink._writer._process
    sink._writer.send()
    sink._finalizer.detach()
    sink._writer._conn.close()
    proc.join(30)
    assert proc.exitcode == 0
    assert path.read_text() == "".join(f'{{"t":{i},"event":"Dropped","source":1,"context":2,"seq":{i},"fence":{i}}}\n'
                                       for i in range(3))
