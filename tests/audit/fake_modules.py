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
