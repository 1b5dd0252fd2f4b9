"""How an event log ends (wddmsim.trace.ending): complete, partial with a reason, or cut short."""

from wddmsim.trace.ending import COMPLETE_REASONS, PARTIAL_REASONS, log_ending


def test_complete_reasons_are_not_partial():
    for reason in COMPLETE_REASONS:
        ending = log_ending([{"t": 0, "event": "LogStart"}, {"t": 5, "event": "LogEnd", "reason": reason}])
        assert (ending.reason, ending.t, ending.partial) == (reason, 5, False)
    assert log_ending([{"t": 7, "event": "LogEnd", "reason": "time"}]).describe() == \
        "the run reached its end time at 7 ns of virtual time"


def test_partial_reasons_say_so():
    for reason in PARTIAL_REASONS:
        ending = log_ending([{"t": 9, "event": "LogEnd", "reason": reason}])
        assert ending.partial
        assert ending.describe().startswith("partial log: ")
    assert log_ending([{"t": 9, "event": "LogEnd", "reason": "interrupted"}]).describe() == (
        "partial log: the run was interrupted (SIGINT or SIGTERM) before its end time at 9 ns of virtual time; "
        "everything in it covers only what ran until then")


def test_a_log_without_logend_was_cut_short():
    ending = log_ending([{"t": 0, "event": "LogStart"}, {"t": 40, "event": "DmaPacketStart"}])
    assert (ending.reason, ending.t, ending.partial) == (None, 40, True)
    assert ending.describe() == ("the log has no LogEnd line: the run was cut short at 40 ns of virtual time "
                                 "and the log covers only what ran until then")
    assert log_ending([]).partial and log_ending([]).t is None
    odd = log_ending([{"t": 3, "event": "LogEnd", "reason": "sideways"}])
    assert odd.partial and odd.describe() == "the log ends with an unknown reason 'sideways' at 3 ns of virtual time"
