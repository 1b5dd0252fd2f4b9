"""The ``[scheduler]`` table: which policy the OS's GPU scheduler runs, and the policy's settings.

``policy`` names a shipped policy or a researcher's class; ``quantum`` and every other key of the
table are the policy's settings. A shipped policy's settings are checked here, with the rest of
the file (:mod:`wddmsim.policies.load`); a researcher's class is loaded, and its settings checked
by its own ``Settings`` model, when the run is built. A key a shipped policy does not take is an
unknown field, with the closest key it does take suggested when one is close (``scheduler.quantun:
unknown field; did you mean 'quantum'?``). docs/policies.md describes the policies.
"""

from __future__ import annotations

from pydantic import ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from ..policies.names import check_policy_name
from .fields import Period, ScenarioModel, ns
from .problems import UNKNOWN_SETTING, unknown_field

__all__ = ["UNKNOWN_SETTING", "Scheduler"]


class Scheduler(ScenarioModel):
    """The OS GPU scheduler's policy for choosing among contexts that have work on a node:
    ``policy`` names a shipped policy (``wddmsim policies`` lists them) or a researcher's class
    (``"package.module:Class"`` or ``"path/to/file.py:Class"``, a relative path found next to the
    scenario file when it is there, else from the current folder); every other key of the table is the policy's setting, which its own
    ``Settings`` model checks when the run is built (docs/policies.md)."""

    model_config = ConfigDict(extra="allow")

    policy: str = Field(default="priority_quantum", min_length=1)
    #: longest time a context runs before a context of equal priority gets its turn
    quantum: Period = ns("2ms")

    @field_validator("policy")
    @classmethod
    def _policy_name(cls, value: str) -> str:
        problem = check_policy_name(value)
        if problem:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _shipped_settings(self) -> Scheduler:
        from ..policies.load import settings_problems, unknown_settings

        unknown = unknown_settings(self.policy, self.model_extra or {})
        if unknown:
            known = _keys_taken(self.policy)
            unknown = [(key, unknown_field(key, known, why)) for key, why in unknown]
            # Located at the key, and told apart from a bad value as a mistyped field is
            # (``--set scheduler.quantun=1ms`` names a path the scenario does not have).
            raise PydanticCustomError(UNKNOWN_SETTING, "{reason}", {"problems": unknown})
        problems = settings_problems(self.policy, self.settings)
        if problems:
            raise ValueError("; ".join(why if field.removeprefix("scheduler.") in why
                                       else f"{field.removeprefix('scheduler.')}: {why}" for field, why in problems))
        return self

    @property
    def settings(self) -> dict:
        """The policy's settings: every key of the table but ``policy`` (``quantum`` included
        when written)."""
        out = dict(self.model_extra or {})
        if "quantum" in self.model_fields_set:
            out["quantum"] = self.quantum
        return out


def _keys_taken(policy: str) -> list[str]:
    """The keys a ``[scheduler]`` table for the shipped policy ``policy`` may hold, to suggest the
    closest for one it does not take: ``policy`` and, of the OS's own policies' settings
    (``quantum``, ``starvation``) and the fields of the policy class's ``Settings`` model (in either
    scheduling mode), those :func:`~wddmsim.policies.load.unknown_settings` lets it take."""
    from ..policies import load
    from ..policies.load import PolicyLoadError, hw_policy_class, policy_class, unknown_settings

    # The OS's own policies' settings are their settings model's fields (policies/load.py).
    pool = ["quantum", *getattr(getattr(load, "_BuiltinSettings", None), "model_fields", {})]
    for find in (policy_class, hw_policy_class):
        try:
            pool += list(getattr(getattr(find(policy), "Settings", None), "model_fields", {}))
        except PolicyLoadError:  # no class of that name in this mode (or the OS's own policy)
            pass
    return ["policy"] + [key for key in dict.fromkeys(pool) if not unknown_settings(policy, {key: None})]
