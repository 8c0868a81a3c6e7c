"""What a scenario file says about itself, read without building, probing or running its mechanism.

``dpaudit list`` shows every bundled file with its name, claim, expected verdict and sample count.
:func:`scenarios.files.read` builds the mechanism and draws one output to check that it fits the
scenario, which for a trainer means importing its library and training a model; :func:`outline` reads
the TOML and runs no mechanism.  The claim it gives is the file's ``[claim]`` table when that needs no
module of the user's, else a reference mechanism's own claim (built from the file's parameters, which
draws nothing), else None: only the mechanism's own code knows it, and loading the file says.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

from mechanisms.claims import Claim

from .files import ScenarioFileError, _build_claim, _Context, _relation_or_default, _show, load_toml

__all__ = ["Outline", "outline"]


@dataclass(frozen=True)
class Outline:
    """A scenario file as written.

    Attributes
    ----------
    name : str
        The file's ``name``, else its stem.
    path : pathlib.Path
    mechanism : str
        The ``[mechanism]`` table as a call: the reference mechanism's name or the user's
        ``package.module:attribute``, with the parameters as written (sub-tables nested).
    claim : Claim or None
        The ``[claim]`` table's; None when the claim is the mechanism's own, or names user code.
    expected : {"holds", "violated"} or None
    audit : dict
        The ``[audit]`` table as written.
    """

    name: str
    path: Path
    mechanism: str
    claim: Optional[Claim]
    expected: Optional[str]
    audit: dict = field(default_factory=dict)
    claim_table: dict = field(default_factory=dict)

    @property
    def claim_text(self) -> str:
        """The claim in words: the claim itself, a ``[claim]`` table that names user code as written,
        or "the mechanism's own claim"."""
        if self.claim is not None:
            return str(self.claim)
        if self.claim_table:
            return f"{self.claim_table.get('type', '?')} claim of {self.claim_table.get('callable', 'the file')}"
        return "the mechanism's own claim"


def _names_user_code(table: Any) -> bool:
    """Whether a table (or one nested in it) names user code: ``callable = "module:attribute"``."""
    return isinstance(table, dict) and ("callable" in table or any(map(_names_user_code, table.values())))


def _call_text(table: dict) -> str:
    """A ``[mechanism]`` table as written, in call notation."""
    target = str(table.get("name", table.get("callable", "?")))
    arguments = [f"{key}={_call_text(value) if isinstance(value, dict) else _show(value)}"
                 for key, value in table.items() if key not in ("name", "callable")]
    return f"{target}({', '.join(arguments)})" if arguments else target


def outline(path: Union[str, Path]) -> Outline:
    """Read scenario file ``path`` without running anything (see the module docstring).

    Raises
    ------
    ScenarioFileError
        The file cannot be read or is not valid TOML.  Other mistakes are left to
        :func:`scenarios.files.read`, which checks every key.
    """
    file = Path(path)
    data = load_toml(path)
    ctx = _Context(str(path), file.resolve().parent)
    table = lambda key: data.get(key) if isinstance(data.get(key), dict) else {}  # noqa: E731
    mechanism, claim_table = table("mechanism"), table("claim")
    relation = _relation_or_default(table("scenario"))
    claim = None
    if claim_table and not _names_user_code(claim_table):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                claim = _build_claim(ctx, claim_table, relation)
            except ScenarioFileError:  # a mistake that loading the file reports in full
                claim = None
    name = data.get("name") if isinstance(data.get("name"), str) else file.stem
    expected = data.get("expected") if isinstance(data.get("expected"), str) else None
    return Outline(name=name, path=file, mechanism=_call_text(mechanism),
                   claim=claim, expected=expected, audit=table("audit"), claim_table=claim_table)
