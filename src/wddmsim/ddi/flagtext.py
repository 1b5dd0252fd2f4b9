"""The form of the flag-bit texts (:mod:`.flagbits`): what the project says of one bit
(:class:`BitText`) and of one flag type (:class:`FlagType`). :mod:`.flagbits_os` and
:mod:`.flagbits_driver` write the texts in this form; :mod:`.flagbits` explains the bits with them
(``wddmsim layout NAME --explain``, docs/ddi.md "Flag bits").
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BitText", "FlagType"]


@dataclass(frozen=True)
class BitText:
    """What the project says of one bit: ``must`` (what the driver does about it), ``rules`` (the
    catalogue's rule numbers that judge it), ``sets`` (who sets it and when, where the flag type's
    own ``sets`` does not say enough) and ``means`` (only where the declaration has no ``doc``)."""

    must: str
    rules: tuple[int, ...] = ()
    sets: str = ""
    means: str = ""


@dataclass(frozen=True)
class FlagType:
    """One flag type: ``by`` fills it (``os``: the OS, VidMm or the runtime hands it to the driver;
    ``driver``: the kernel-mode or user-mode driver fills it in), ``sets`` says where and when,
    ``bits`` holds the text of each named bit and ``reserved_rules`` the rules that keep its
    reserved range zero."""

    by: str
    sets: str
    bits: dict[str, BitText]
    reserved_rules: tuple[int, ...] = ()
