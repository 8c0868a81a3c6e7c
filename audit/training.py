"""One call that audits a user's training function ``train(X, y, seed) -> model``.

:func:`audit_training` wraps the function as a :class:`mechanisms.training.UserTraining` (dpaudit
adds the canary row and reads the view), pairs "your data" with "your data and the canary"
(add/remove), and runs an anytime audit (:mod:`audit.anytime`) of at most ``trainings``
trainings per side: it stops at the first round whose confidence-sequence bound refutes the
claim, so a clear fault costs a few dozen to a few hundred trainings, and a correct trainer costs
the whole budget (the futility rule starts at 4,096 betting draws, above the default budget).
What a budget can certify is in docs/training.md.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from mechanisms.training import UserTraining
from mechanisms.validation import check_int
from scenarios import from_pairs

from .engine import run_audit
from .report import AuditReport

__all__ = ["audit_training", "TRAININGS", "training_pair"]

#: The default budget: trainings per side (with and without the canary) of :func:`audit_training`.
TRAININGS = 1000


def training_pair():
    """The scenario of a training audit: the user's data, and the user's data with the canary."""
    return from_pairs([(np.zeros((0, 1)), np.ones((1, 1)), "add the canary")])


def audit_training(train: Callable, X: Any, y: Any, *, trainings: int = TRAININGS, anytime: bool = True,
                   seed: Optional[int] = None, n_jobs: int = 1, confidence: float = 0.95, progress: bool = True,
                   graybox: bool = False, **options: Any) -> AuditReport:
    """Audit ``train(X, y, seed) -> model`` on the user's data against the user's claim.

    Parameters
    ----------
    train, X, y : the training function and the data (numpy arrays or torch tensors).
    trainings : the most trainings per side (default :data:`TRAININGS`).
    anytime : stop as soon as the claim is refuted (default); False spends the whole budget in the
        fixed design, which also certifies the ε(δ) curve.
    seed, n_jobs, confidence, progress : as for :func:`audit.run_audit`.
    graybox : first record the trainer's random calls (torch, numpy, Python, Opacus) on D and
        replay them on D′ (docs/graybox.md); a finding names its line and the audit is aimed at
        it, the report's ``graybox`` holding the findings.  With ``view="updates"`` the audit
        that certifies it reads the per-step updates.
    **options : the claim and the view, keywords of :class:`mechanisms.training.UserTraining`:
        ``epsilon`` and ``delta``, or ``mu`` (your claim), or ``noise_multiplier``, ``steps``,
        ``delta`` with ``sample_rate`` or ``batch_size`` and ``accountant`` (an accountant's
        claim); ``view`` ("margin", "logit", "loss", "updates", "energy", "shuffled", "virtual"),
        ``score``, ``canary``, ``canary_scale``, ``label``, ``crafted`` (rows dpaudit builds
        against the canary), ``noise_columns``, ``physical_steps`` (of ``view="virtual"``).

    Returns
    -------
    AuditReport
    """
    trainings = check_int("trainings", trainings, minimum=16)
    mechanism = UserTraining(train, X, y, **options)
    return run_audit(mechanism, training_pair(), samples=trainings, anytime=bool(anytime), seed=seed,
                     n_jobs=n_jobs, confidence=confidence, progress=progress, statistic="linear", accuracy=False,
                     graybox=graybox)  # AuditSettings owns its validation
