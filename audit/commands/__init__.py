"""The sub-commands of the ``dpaudit`` command line, one module each: its parser and its body.

- :mod:`.common`: what they share: exit statuses, :class:`~.common.UsageError`, the parser class,
  each sub-command's line in ``dpaudit --help``;
- :mod:`.run`: ``dpaudit run`` (the audits themselves run in :mod:`audit.suite`, its output folder
  is :mod:`audit.run_folder`);
- :mod:`.listing`: ``dpaudit list``;
- :mod:`.theory`: ``dpaudit theory``;
- :mod:`.plot`: ``dpaudit plot``.

``dpaudit sweep`` lives with the sweep (:mod:`audit.sweep.command`).  :mod:`audit.cli` builds the
parser from these modules and dispatches to them; it imports each only when its sub-command is
used, so nothing is imported here.
"""

__all__: list[str] = []
