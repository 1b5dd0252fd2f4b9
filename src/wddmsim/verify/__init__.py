"""``wddmsim verify``: the conformance suite a driver engineer runs against a driver.

:mod:`.suite` holds the cases (scenarios by area with their expectations, built from :mod:`.kit`
in :mod:`.cases_work`, :mod:`.cases_display` and :mod:`.cases_recovery`), :mod:`.runner` runs them
and judges, :mod:`.blame` names the driver's entry point that broke a rule and where its code is,
:mod:`.output` prints the table, JSON and JUnit XML.
"""

from .runner import NOT_APPLICABLE, CaseResult, Failure, Report, probe, run_case, select, verify
from .suite import AREAS, CASES, Case, Declared, Outcome

__all__ = ["AREAS", "CASES", "NOT_APPLICABLE", "Case", "CaseResult", "Declared", "Failure", "Outcome", "Report",
           "probe", "run_case", "select", "verify"]
