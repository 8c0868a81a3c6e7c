"""What the library fakes share: forgetting a module or a registration for one test only."""

from __future__ import annotations


def forget(monkeypatch, mapping, key) -> None:
    """Remove ``mapping[key]`` for the test; at teardown, restore what ``mapping`` held under ``key``
    before, or remove what the test put there since.

    ``monkeypatch.delitem`` of an absent key records nothing, so a catalogue module that a test
    imported on a fake stayed in ``sys.modules`` (and its registration in the registry) for the
    tests after it in the same worker: whether a later test saw the fake's catalogue depended on
    how the tests were scheduled.
    """
    monkeypatch.setitem(mapping, key, mapping.get(key))
    del mapping[key]


def cases_and_absent(entries) -> tuple[list, list]:
    """Every grid point of ``entries`` built: the cases, and ``(entry name, reason)`` for each point
    that raised ``NotInRelease`` (the release lacks it)."""
    from scenarios.libraries import NotInRelease

    cases, absent = [], []
    for entry in entries:
        for point in entry.grid:
            try:
                cases.append(entry.build(point))
            except NotInRelease as exc:
                absent.append((entry.name, str(exc)))
    return cases, absent
