"""What both hosts of a research policy (the OS scheduler's, :mod:`.host`, and the GPU firmware's,
:mod:`.hwhost`) do when the policy breaks its protocol: a :class:`PolicyError` that names the
policy, the call and the virtual instant, and, for a policy that raised, where in its own code.
"""

from __future__ import annotations

import traceback
from pathlib import Path

from .protocol import PolicyError

#: The hosts' own files: a traceback's frames there are the host's, not the researcher's.
_HOST_FILES = {str(Path(__file__).with_name(name)) for name in ("checks.py", "host.py", "hwhost.py")}


class Checks:
    """Mixed into a host: ``label`` names the policy, ``who`` the scheduler it runs in, ``sim``
    gives the instant."""

    who = "scheduling policy"
    label = ""
    sim = None

    def _stop(self, call: str, why: str) -> PolicyError:
        """The error that stops the run: ``{who} {label}: {call} at {now} ns: {why}``."""
        now = self.sim.now if self.sim is not None else 0
        return PolicyError(f"{self.who} {self.label}: {call} at {now} ns: {why}")

    def _guard(self, call: str, fn):
        """``fn()`` (a call into the policy, described as ``call``); an exception it raises stops the
        policy with the place in the researcher's code where it was raised."""
        try:
            return fn()
        except PolicyError:
            raise
        except Exception as e:  # noqa: BLE001 - the researcher's code failed: the policy is stopped
            where = ""
            mine = [f for f in traceback.extract_tb(e.__traceback__) if f.filename not in _HOST_FILES]
            if mine:
                f = mine[-1]
                where = f" (at {f.filename.rsplit('/', 1)[-1]}:{f.lineno} in {f.name})"
            raise self._stop(call, f"raised {type(e).__name__}: {e}{where}") from None


__all__ = ["Checks"]
