"""The errors of the OS's side that are not bug checks.

A failing call returns an NTSTATUS to the user-mode runtime (``STATUS_DEVICE_REMOVED`` after a
device went to error, the status a driver entry point answered, ...); the model raises
:class:`ApiError` carrying it. It is not a bug check: the system goes on. A driver Windows would
not start is an :class:`AdapterStartError`; a research scheduling policy that broke its protocol
(:mod:`wddmsim.policies`) a :class:`PolicyError`, which stops the run without blaming the driver.
"""

from __future__ import annotations

from ..ddi.ntstatus import status_name


class ApiError(Exception):
    """A D3DKMT-style call failed; ``status`` is the NTSTATUS the application sees."""

    def __init__(self, status: int, message: str):
        super().__init__(f"{status_name(status)}: {message}")
        self.status = status


class AdapterStartError(Exception):
    """Windows would not start the adapter with this driver: ``problems`` says why, one line each
    (a missing entry point, a capability combination it refuses, an OS choice the driver does not
    support). Raised before anything runs."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = list(problems)


class PolicyError(Exception):
    """A research scheduling policy broke its protocol (:mod:`wddmsim.policies.protocol`);
    ``str()`` names the policy, the call and the virtual instant."""
