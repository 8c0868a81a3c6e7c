"""An audit written down: a scenario file read into the mechanism, claim, scenario and settings.

:func:`load_spec` reads a TOML scenario file (its schema: :mod:`scenarios.files`) and its ``[audit]``
table into :class:`~audit.settings.AuditSettings`, reporting every problem of the file at once.
``dpaudit run``, the pytest plugin and :func:`audit.run_audit`'s users load files here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

from mechanisms.claims import Claim
from scenarios import Scenario
from scenarios.files import read

from .settings import AuditSettings, SettingsError

__all__ = ["AuditSpec", "load_spec"]


@dataclass(frozen=True)
class AuditSpec:
    """One audit as a scenario file describes it.

    Attributes
    ----------
    name : str
    path : pathlib.Path
    mechanism : Mechanism
    claim : Claim or None
        The file's ``[claim]``, else the mechanism's own (None if it has none).
    scenario : Scenario
    settings : AuditSettings
        The defaults with the file's ``[audit]`` table applied.
    expected : {"holds", "violated"} or None
        What the exact truth says about the claim, when the file states it.
    note : str
    warnings : tuple of str
        Warnings raised while constructing the mechanism.
    """

    name: str
    path: Path
    mechanism: Any
    claim: Optional[Claim]
    scenario: Scenario
    settings: AuditSettings
    expected: Optional[str] = None
    note: str = ""
    warnings: tuple[str, ...] = ()

    @property
    def samples(self) -> int:
        return self.settings.samples

    @property
    def confidence(self) -> float:
        return self.settings.confidence

    @property
    def seed(self) -> Optional[int]:
        return self.settings.seed

    @property
    def statistic(self) -> Any:
        return self.settings.statistic


def _audit_problems(table: dict) -> list[str]:
    try:
        AuditSettings.from_table(table)
    except SettingsError as exc:
        return exc.errors
    return []


def load_spec(path: Union[str, Path]) -> AuditSpec:
    """Load and validate a scenario file.

    Raises
    ------
    scenarios.ScenarioFileError
        Listing every problem of the file, each naming the file and the key path
        (:func:`scenarios.files.read`), the ``[audit]`` table's included.
    """
    parts = read(path, check_audit=_audit_problems)
    return AuditSpec(name=parts.name, path=parts.path, mechanism=parts.mechanism, claim=parts.claim,
                     scenario=parts.scenario, settings=AuditSettings.from_table(parts.audit),
                     expected=parts.expected, note=parts.note, warnings=parts.warnings)
