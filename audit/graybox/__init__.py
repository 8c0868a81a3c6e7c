"""Gray-box auditing: record every random call on D, replay it on D′, name the line.

The public names: :func:`graybox_audit` (a scenario's pairs, findings certified by the engine),
:func:`check_pairs` / :func:`check_pair` (one's own pairs, no certification),
:class:`GrayboxReport`, :class:`Finding`, :class:`FindingKind`, :class:`PairCheck`,
:class:`ReplayError`, and :func:`intercepting` with :class:`Tape` for a record of one's own.
See docs/graybox.md.
"""

from .audit import DEFAULT_ROWS, GrayboxReport, check_pair, check_pairs, graybox_audit
from .findings import Certification, Finding, FindingKind, PairCheck, ReplayError
from .intercept import InterceptedGenerator, intercepting
from .tape import Tape
from .trace import CallSite, RandomCall, Trace

__all__ = ["graybox_audit", "check_pairs", "check_pair", "GrayboxReport", "Finding", "FindingKind", "PairCheck",
           "Certification", "ReplayError", "intercepting", "Tape", "InterceptedGenerator", "CallSite", "RandomCall",
           "Trace", "DEFAULT_ROWS"]
