"""Gray-box auditing: record every random call on D, replay it on D′, name the line.

The public names: :func:`check_pairs` / :func:`check_pair` (one's own pairs, no certification),
:class:`GrayboxReport`, :class:`Finding`, :class:`FindingKind`, :class:`PairCheck`,
:class:`ReplayError`, and :func:`intercepting` with :class:`Tape` for a record of one's own.
The audit that also certifies each finding, :func:`audit.graybox.certified.graybox_audit`, is
exported as ``audit.graybox_audit`` (it imports the engine, which imports this package).
See docs/graybox.md.
"""

from .audit import DEFAULT_ROWS, GrayboxReport, check_case, check_pair, check_pairs, pair_of
from .findings import Certification, Finding, FindingKind, PairCheck, ReplayError
from .intercept import InterceptedGenerator, intercepting
from .tape import Tape
from .trace import CallSite, RandomCall, Trace

__all__ = ["check_pairs", "check_case", "pair_of", "check_pair", "GrayboxReport", "Finding", "FindingKind", "PairCheck",
           "Certification", "ReplayError", "intercepting", "Tape", "InterceptedGenerator", "CallSite", "RandomCall",
           "Trace", "DEFAULT_ROWS"]
