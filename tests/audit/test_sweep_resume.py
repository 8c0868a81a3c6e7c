"""``run_sweep(resume=True)`` after dpaudit or the library changed: rows re-audited, old files kept.

A resumed sweep finds saved rows and checkpoints of another audit (here: one written under engine
"7", or under another library version).  Mixing them in would be wrong and refusing them left the
rows ERROR; the sweep instead audits each such row from scratch at its planned seed and Bonferroni
share, moves the other audit's files to ``OUT/superseded/`` and says why per row.  Because a row's
draws depend only on its seed, the re-audited rows equal those of a fresh sweep exactly; the
statistical content is that of the toy sweep (``test_sweep.py``).
"""

from __future__ import annotations

import dataclasses
import json

import pytest

import audit.engine
import audit.sweep.rows
import sweep_toy_library as toy
from audit.cli import main
from audit.engine import ENGINE_VERSION
from audit.sweep import run_sweep
from audit.sweep.resume import fingerprint_changes, set_aside

IGNORED = ("wall_time_s", "reaudited", "superseded")


def _strip(rows):
    return [{k: v for k, v in r.items() if k not in IGNORED} for r in rows]


def _sweep(out, **kwargs):
    return run_sweep(toy.NAME, budget="small", out=out, progress=False, date="2026-01-01", entries=["noise.*"],
                     repro=False, **kwargs)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    return _sweep(tmp_path_factory.mktemp("fresh"))


@pytest.mark.statistical
def test_a_sweep_folder_of_an_older_engine_is_re_audited_not_errored(fresh, tmp_path, monkeypatch, capsys):
    with monkeypatch.context() as patch:  # the first run, by an engine "7"
        patch.setattr(audit.engine, "ENGINE_VERSION", "7")
        patch.setattr(audit.sweep.rows, "ENGINE_VERSION", "7")
        old = _sweep(tmp_path)
    assert [r["verdict"] for r in old["rows"]] == [r["verdict"] for r in fresh["rows"]]
    # As a folder written before checkpoints were marked, one of whose rows was interrupted:
    # its record is gone and only its checkpoint is left.
    for mark in (tmp_path / "checkpoints").glob("*.json"):
        mark.unlink()
    cut = fresh["rows"][0]["slug"]
    (tmp_path / "rows" / f"{cut}.json").unlink()
    checkpoints = sorted(p.name for p in (tmp_path / "checkpoints").glob("*.npz"))
    assert f"{cut}.npz" in checkpoints  # the interrupted row's checkpoint, engine 7's

    status = main(["sweep", toy.NAME, "--budget", "small", "--out", str(tmp_path), "--no-progress",
                   "--entries", "noise.*", "--no-repro", "--resume"])
    err = capsys.readouterr().err
    document = json.loads((tmp_path / "sweep.json").read_text())
    assert status == 1 and document["counts"]["error"] == 0  # the halved row is VIOLATED, nothing ERROR
    assert _strip(document["rows"]) == _strip(fresh["rows"])  # from scratch: as a fresh sweep, bit for bit
    assert document["row_confidence"] == fresh["row_confidence"]
    reasons = {r["slug"]: r["reaudited"] for r in document["rows"]}
    assert reasons[cut] == f"its checkpoint was made by another audit (engine 7 → {ENGINE_VERSION})"
    kept = next(r for r in document["rows"] if r["slug"] != cut)
    assert reasons[kept["slug"]] == f"its saved row was made by another audit (engine 7 → {ENGINE_VERSION})"
    # Nothing is lost: the old record and both old checkpoints are in superseded/, named in the rows.
    assert sorted(p.name for p in (tmp_path / "superseded" / "checkpoints").glob("*.npz")) == checkpoints
    assert (tmp_path / "superseded" / "rows" / f"{kept['slug']}.json").is_file()
    assert all((tmp_path / path).is_file() for r in document["rows"] for path in r["superseded"])
    for row in document["rows"]:
        assert f"{row['key']}: re-audited: {row['reaudited']}" in err
    text = (tmp_path / "sweep.md").read_text()
    assert "## Re-audited on resume" in text and f"engine 7 → {ENGINE_VERSION}" in text

    # Resumed once more, nothing is audited again or moved: the rows are this audit's now.
    stamps = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "rows").glob("*.json")}
    again = _sweep(tmp_path, resume=True)
    assert {p.name: p.stat().st_mtime_ns for p in (tmp_path / "rows").glob("*.json")} == stamps
    assert sorted(p.name for p in (tmp_path / "superseded" / "checkpoints").glob("*.npz")) == checkpoints
    assert _strip(again["rows"]) == _strip(fresh["rows"])


@pytest.mark.statistical
def test_a_checkpoint_of_another_library_version_is_set_aside_though_the_engine_would_resume_it(
        fresh, tmp_path, monkeypatch):
    # The engine's key does not see the library's version; the mark beside the checkpoint does.
    with monkeypatch.context() as patch:
        patch.setattr(type(toy.LIBRARY), "version", lambda self: "0.0.1")
        _sweep(tmp_path)
    cut = fresh["rows"][0]["slug"]
    (tmp_path / "rows" / f"{cut}.json").unlink()  # interrupted: only its checkpoint is left
    document = _sweep(tmp_path, resume=True)
    assert _strip(document["rows"]) == _strip(fresh["rows"])
    reasons = {r["slug"]: r.get("reaudited") for r in document["rows"]}
    version = document["version"]
    assert reasons[cut] == f"its checkpoint was made by another audit (library 0.0.1 → {version})"
    assert all(reason.endswith(f"(library 0.0.1 → {version})") for reason in reasons.values())
    assert (tmp_path / "superseded" / "checkpoints" / f"{cut}.npz").is_file()
    assert (tmp_path / "superseded" / "checkpoints" / f"{cut}.json").is_file()


@pytest.mark.statistical
def test_a_row_that_audited_nothing_and_an_unmarked_checkpoint_of_other_samples_are_audited_again(tmp_path):
    first = _sweep(tmp_path, samples=3000)
    errored, cut = (r["slug"] for r in first["rows"])
    path = tmp_path / "rows" / f"{errored}.json"
    record = json.loads(path.read_text())
    path.write_text(json.dumps(dict(record, status="error", error="MechanismError: the library was down")))
    (tmp_path / "rows" / f"{cut}.json").unlink()  # interrupted, and its checkpoint unmarked (an older sweep)
    (tmp_path / "checkpoints" / f"{cut}.json").unlink()
    assert (tmp_path / "checkpoints" / f"{cut}.npz").is_file()
    document = _sweep(tmp_path, samples=3000, resume=True)
    assert document["counts"]["error"] == 0 and _strip(document["rows"]) == _strip(first["rows"])
    reasons = {r["slug"]: r.get("reaudited") for r in document["rows"]}
    assert reasons[errored] == "its saved row audited nothing (MechanismError: the library was down)"
    assert reasons[cut] is None  # its own audit's checkpoint, unmarked but accepted by the engine: resumed
    # Other samples: the engine refuses the unmarked checkpoint, which is set aside, and the row audited again.
    (tmp_path / "rows" / f"{cut}.json").unlink()
    (tmp_path / "checkpoints" / f"{cut}.json").unlink()
    other = _sweep(tmp_path, samples=4000, resume=True)
    fresh = _sweep(tmp_path / "fresh", samples=4000)
    assert _strip(other["rows"]) == _strip(fresh["rows"])
    reasons = {r["slug"]: r.get("reaudited") for r in other["rows"]}
    assert reasons[cut].startswith("its checkpoint was made by another audit (") and "samples 3000 → 4000" in reasons[cut]
    assert reasons[errored] == "its saved row was made by another audit (samples 3000 → 4000)"


@pytest.mark.statistical
def test_a_gray_box_row_is_kept_by_resume_without_the_graybox_option(tmp_path, monkeypatch):
    from audit.sweep import runner

    plan = runner.plan_rows  # the row's case is gray-box (as synthcity's GAN rows): replayed first
    monkeypatch.setattr(runner, "plan_rows", lambda cases, **kw: plan(
        tuple(dataclasses.replace(case, graybox=True) for case in cases), **kw))
    first = run_sweep(toy.NAME, budget="small", out=tmp_path, progress=False, date="2026-01-01",
                      entries=["noise.laplace"], repro=False)
    assert first["rows"][0]["graybox"]["replays"] == 2
    stamps = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "rows").glob("*.json")}
    again = run_sweep(toy.NAME, budget="small", out=tmp_path, progress=False, date="2026-01-01",
                      entries=["noise.laplace"], repro=False, resume=True)
    assert {p.name: p.stat().st_mtime_ns for p in (tmp_path / "rows").glob("*.json")} == stamps
    assert again["rows"] == first["rows"] and not (tmp_path / "superseded").exists()


def test_set_aside_never_overwrites_an_earlier_file_and_changes_are_named(tmp_path):
    for text in ("first", "second"):
        (tmp_path / "checkpoints").mkdir(exist_ok=True)
        (tmp_path / "checkpoints" / "row.npz").write_text(text)
        set_aside(tmp_path / "checkpoints" / "row.npz", tmp_path)
    kept = tmp_path / "superseded" / "checkpoints"
    assert (kept / "row.npz").read_text() == "first" and (kept / "row.2.npz").read_text() == "second"
    assert set_aside(tmp_path / "checkpoints" / "row.npz", tmp_path) is None
    old = json.dumps({"engine": "7", "samples": 100, "version": "1.0", "claim": {"epsilon": 1}})
    new = json.dumps({"engine": "8", "samples": 200, "version": "1.0", "claim": {"epsilon": 2}})
    assert fingerprint_changes(old, new) == "engine 7 → 8; samples 100 → 200; the claim"
    assert fingerprint_changes(new, new, new_graybox=True) == "gray-box replay False → True"
    assert fingerprint_changes(None, new) == "it was written by another version of dpaudit"


OLD = json.dumps({"engine": "7", "samples": 200})
NEW = json.dumps({"engine": "8", "samples": 200})


def _other_audits_row(out):
    """A row's files as another audit (engine 7) left them, and an unlabelled checkpoint that an
    older sweep set aside: the new pair must take a number of its own for both its files."""
    saved = {"fingerprint": OLD, "repro": {"path": "repro/row.py"}}
    files = {"rows/row.json": json.dumps(saved), "repro/row.py": "old script", "checkpoints/row.npz": "old counts",
             "checkpoints/row.json": json.dumps({"fingerprint": OLD, "graybox": False}),
             "superseded/checkpoints/row.npz": "older counts"}
    for path, text in files.items():
        (out / path).parent.mkdir(parents=True, exist_ok=True)
        (out / path).write_text(text)


def _files(out):
    return {p.relative_to(out).as_posix(): p.read_text() for p in sorted(out.rglob("*")) if p.is_file()}


def _resume(out):
    """What run_sweep does for the row: finish a cut set-aside, read the record, prepare the row."""
    import audit.sweep.resume as resume

    resume.recover(out, "row")
    record = out / "rows" / "row.json"
    return resume.prepare_row(out, "row", NEW, False, json.loads(record.read_text()) if record.is_file() else None)


def test_a_resume_cut_off_at_any_step_of_setting_aside_is_finished_by_the_next_with_every_checkpoint_labelled(
        tmp_path, monkeypatch):
    import audit.sweep.resume as resume

    whole = tmp_path / "whole"
    _other_audits_row(whole)
    steps = []
    move, write = resume._move, resume.write_atomic
    with monkeypatch.context() as patch:  # count the file-system steps of an uncut set-aside
        patch.setattr(resume, "_move", lambda a, b: (steps.append(("move", a.name)), move(a, b))[1])
        patch.setattr(resume, "write_atomic",
                      lambda path, data: (steps.append(("write", path.name)), write(path, data))[1])
        note = _resume(whole)
    expected = _files(whole)
    assert note == {"reason": "its saved row was made by another audit (engine 7 → 8)",
                    "superseded": ["superseded/repro/row.py", "superseded/rows/row.json",
                                   "superseded/checkpoints/row.2.npz", "superseded/checkpoints/row.2.json"]}
    assert expected["superseded/checkpoints/row.2.npz"] == "old counts"  # with its own label, the old mark
    assert json.loads(expected["superseded/checkpoints/row.2.json"]) == {"fingerprint": OLD, "graybox": False}
    assert expected["superseded/checkpoints/row.npz"] == "older counts"
    assert "superseded/checkpoints/row.json" not in expected
    assert json.loads(expected["checkpoints/row.json"]) == {"fingerprint": NEW, "graybox": False, "reaudited": note}
    # the plan, the script, the record, the label, the checkpoint, the final mark
    assert [kind for kind, _ in steps] == ["write", "move", "move", "write", "move", "write"]

    for cut in range(len(steps)):  # the process dies before step `cut` (0: before the plan is written)
        out = tmp_path / f"cut{cut}"
        _other_audits_row(out)
        done = []

        def die(step):
            if len(done) == cut:
                raise KeyboardInterrupt
            done.append(step)

        with monkeypatch.context() as patch:
            patch.setattr(resume, "_move", lambda a, b: (die(a), move(a, b))[1])
            patch.setattr(resume, "write_atomic", lambda path, data: (die(path), write(path, data))[1])
            with pytest.raises(KeyboardInterrupt):
                _resume(out)
        left = _files(out)
        # Cut anywhere: every checkpoint set aside has its label, and one still in place is never this audit's.
        assert all(name.replace(".npz", ".json") in left or name == "superseded/checkpoints/row.npz"
                   for name in left if name.startswith("superseded/checkpoints/") and name.endswith(".npz"))
        if "checkpoints/row.npz" in left:
            assert json.loads(left["checkpoints/row.json"])["fingerprint"] == OLD
        assert _resume(out) == note, cut  # the next resume finishes the set-aside: same files, same note
        assert _files(out) == expected, cut


def test_a_row_that_fails_on_every_resume_keeps_one_copy_of_its_error_and_names_every_file_kept(tmp_path, monkeypatch):
    # The release refuses every input, so its row audits nothing (no draws: not statistical).
    def sweep(**kwargs):
        return run_sweep(toy.BROKEN, budget="small", out=tmp_path, progress=False, date="2026-01-01",
                         entries=["noise.refused"], repro=False, **kwargs)

    with monkeypatch.context() as patch:  # an older dpaudit, under which the row (say) audited fine
        patch.setattr(audit.sweep.rows, "ENGINE_VERSION", "7")
        first = sweep()
    (record,) = first["rows"]
    slug, path = record["slug"], tmp_path / "rows" / f"{record['slug']}.json"
    audited = dict(json.loads(path.read_text()), status="done", verdict="NOT_REFUTED")
    audited.pop("error")
    path.write_text(json.dumps(audited))
    kept = tmp_path / "superseded" / "rows"
    errors = []
    for run in range(3):
        (row,) = sweep(resume=True)["rows"]
        assert row["status"] == "error" and "refuses every input" in row["error"]
        if run == 0:  # the audited record is kept under its own name, as any other audit's
            assert row["reaudited"] == f"its saved row was made by another audit (engine 7 → {ENGINE_VERSION})"
            assert row["superseded"] == [f"superseded/rows/{slug}.json"]
        else:  # the error before it is kept once, replacing the one before that, and the first record stays named
            assert row["reaudited"] == f"its saved row audited nothing ({errors[-1]['error']})"[:200]
            assert row["superseded"] == [f"superseded/rows/{slug}.json", f"superseded/rows/{slug}.error.json"]
            assert json.loads((kept / f"{slug}.error.json").read_text()) == errors[-1]
        assert json.loads((kept / f"{slug}.json").read_text()) == audited
        assert {p.name for p in kept.iterdir()} == {f"{slug}.json"} | ({f"{slug}.error.json"} if run else set())
        errors.append(json.loads(path.read_text()))


@pytest.mark.statistical
def test_a_re_audit_cut_off_before_its_row_finishes_still_says_why_when_it_does(fresh, tmp_path, monkeypatch):
    import audit.stages
    from audit.sweep.runner import SweepInterrupted

    with monkeypatch.context() as patch:  # the first run, by an engine "7"
        patch.setattr(audit.engine, "ENGINE_VERSION", "7")
        patch.setattr(audit.sweep.rows, "ENGINE_VERSION", "7")
        _sweep(tmp_path)
    cut = fresh["rows"][0]["slug"]
    real = audit.stages.save_state

    def stop_after_the_first_save(path, *args, **kwargs):  # Ctrl-C in the middle of the row's re-audit
        real(path, *args, **kwargs)
        if path.stem == cut:
            raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(audit.stages, "save_state", stop_after_the_first_save)
        with pytest.raises(SweepInterrupted):
            _sweep(tmp_path, resume=True)
    assert not (tmp_path / "rows" / f"{cut}.json").exists() and (tmp_path / "checkpoints" / f"{cut}.npz").is_file()
    document = _sweep(tmp_path, resume=True)  # the cut row continues from its own checkpoint
    assert _strip(document["rows"]) == _strip(fresh["rows"])
    kept = tmp_path / "superseded" / "checkpoints"
    assert (kept / f"{cut}.npz").is_file()  # engine 7's, of the cut row (a row refuted by its quick look has none)
    for row in document["rows"]:  # the reason the first resume found, and the files it set aside
        slug = row["slug"]
        assert row["reaudited"] == f"its saved row was made by another audit (engine 7 → {ENGINE_VERSION})"
        pair = [f"superseded/checkpoints/{slug}.npz", f"superseded/checkpoints/{slug}.json"]
        expected = [f"superseded/rows/{slug}.json"] + (pair if (kept / f"{slug}.npz").is_file() else [])
        assert row["superseded"] == expected
    assert f"engine 7 → {ENGINE_VERSION}" in (tmp_path / "sweep.md").read_text()
    # The set-aside checkpoints are engine 7's, the cut row's own one was resumed, not set aside.
    assert not (tmp_path / "superseded" / "checkpoints" / f"{cut}.2.npz").exists()


def test_a_checkpoint_that_cannot_be_checked_is_set_aside_for_that_reason_not_as_another_audits(tmp_path, monkeypatch):
    from audit.sweep import runner
    from mechanisms.adapters.released import LibraryRelease

    log = open(tmp_path / "log.txt", "w")  # a file cannot be pickled: the part of the release that writes it
    # cannot be fingerprinted

    def logged_noise(data, random_state, **params):
        log.write(".")
        return toy.noise(data, random_state, **params)

    plan = runner.plan_rows

    def logged(case):
        release = LibraryRelease(logged_noise, case.mechanism.params, "toy.logged", case.claim, 2)
        return dataclasses.replace(case, mechanism=release)

    monkeypatch.setattr(runner, "plan_rows", lambda cases, **kw: plan(tuple(map(logged, cases)), **kw))
    kwargs = dict(budget="small", out=tmp_path / "out", progress=False, date="2026-01-01", entries=["noise.laplace"],
                  repro=False)
    try:
        first = run_sweep(toy.NAME, **kwargs)
        slug = first["rows"][0]["slug"]
        assert first["rows"][0]["verdict"] == "NOT_REFUTED"  # audited (a seeded run: the same seed, the same report)
        mark = (tmp_path / "out" / "checkpoints" / f"{slug}.json").read_text()
        (tmp_path / "out" / "rows" / f"{slug}.json").unlink()  # interrupted: its checkpoint is left, marked as ours
        (row,) = run_sweep(toy.NAME, resume=True, **kwargs)["rows"]
    finally:
        log.close()
    assert row["reaudited"] == ("its checkpoint could not be checked: part of the mechanism cannot be fingerprinted "
                                "(mechanism: value.release closure[0]: a _io.TextIOWrapper (TypeError: "
                                "cannot pickle '_io.TextIOWrapper' object))")
    assert _strip([row]) == _strip(first["rows"])  # audited again from scratch, at the same seed
    kept = tmp_path / "out" / "superseded" / "checkpoints"  # the refused checkpoint keeps its mark, true of it
    assert row["superseded"] == [f"superseded/checkpoints/{slug}.npz", f"superseded/checkpoints/{slug}.json"]
    assert (kept / f"{slug}.json").read_text() == mark and (kept / f"{slug}.npz").is_file()


@pytest.mark.statistical
def test_a_row_whose_catalogue_changed_its_pairs_is_audited_again_not_reused(fresh, tmp_path, monkeypatch):
    # Same entry, grid point, claim and plan, other neighbouring datasets (a catalogue edit that names
    # nothing new): the saved rows must not be reused, since they certify another pair.
    import scenarios
    from scenarios.libraries.families import value_pairs
    from audit.sweep import runner

    _sweep(tmp_path)
    plan = runner.plan_rows
    moved = scenarios.custom(value_pairs([(0.0, 0.5, "0 vs 1")], 1.0), "replace")
    monkeypatch.setattr(runner, "plan_rows", lambda cases, **kw: plan(
        tuple(dataclasses.replace(case, scenario=moved) for case in cases), **kw))
    document = _sweep(tmp_path, resume=True)
    again = _sweep(tmp_path / "fresh")  # a fresh sweep of the changed catalogue
    assert _strip(document["rows"]) == _strip(again["rows"])
    assert all(r["reaudited"] == "its saved row was made by another audit (the neighbouring pairs)"
               for r in document["rows"])
