"""The error an application sees when a D3DKMT-style call fails.

A failing call returns an NTSTATUS to the user-mode runtime (``STATUS_DEVICE_REMOVED`` after a
device went to error, the status a driver entry point answered, ...); the model raises
:class:`ApiError` carrying it. It is not a bug check: the system goes on.
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
