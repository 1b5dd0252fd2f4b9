"""``wddmsim verify``: the conformance suite a driver engineer runs against a driver.

:mod:`.suite` holds the cases (scenarios by area with their expectations), :mod:`.runner` runs them
and judges, :mod:`.output` prints the table, JSON and JUnit XML.
"""

from .runner import CaseResult, Failure, Report, probe, run_case, select, verify
from .suite import AREAS, CASES, Case, Declared, Outcome

__all__ = ["AREAS", "CASES", "Case", "CaseResult", "Declared", "Failure", "Outcome", "Report", "probe", "run_case",
           "select", "verify"]
