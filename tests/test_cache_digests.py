"""Input digests reused by stat (cache.KnownDigests): an input is hashed again unless
its size, times, inode and device are as recorded and it was last changed clearly
before the recorded digest was taken (the racy guard)."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import pytest

from reportgen import cache as cache_module
from reportgen.build import build
from reportgen.cache import CACHE_DIR, RACY_NS, KnownDigests, file_digest, input_digest
from reportgen.config import Config
from reportgen.readers import Source

from .conftest import first_fast
from .test_build_safety import tree, write_results

LATER = 10 * RACY_NS


def blake(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def taken_later(path: Path, monkeypatch: pytest.MonkeyPatch) -> KnownDigests:
    """A digest of `path` taken as if well after the file was last changed."""
    clock = time.time_ns
    monkeypatch.setattr(cache_module.time, "time_ns", lambda: clock() + LATER)
    known = KnownDigests()
    assert known.file(path) == blake(path.read_bytes())
    monkeypatch.setattr(cache_module.time, "time_ns", clock)
    return known


def test_digest_is_the_blake2b_of_the_bytes(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"task": "a", "passed": true}\n' * 1000)
    expected = blake(path.read_bytes())
    assert file_digest(path) == expected
    known = KnownDigests()
    assert known.file(path) == expected and known.hashed == 1


def test_unchanged_file_keeps_its_recorded_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"x" * 5000)
    first = taken_later(path, monkeypatch)
    again = KnownDigests(first.taken)
    assert again.file(path) == blake(b"x" * 5000)
    assert again.hashed == 0 and again.taken == first.taken


def test_file_hashed_within_the_racy_window_is_hashed_again(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"a" * 100)
    first = KnownDigests()
    first.file(path)  # right after the write: its time is not clearly older
    again = KnownDigests(first.taken)
    assert again.file(path) == blake(b"a" * 100)
    assert again.hashed == 1


def test_racy_record_is_not_trusted_even_when_the_stat_matches(tmp_path: Path) -> None:
    # A record whose digest was taken in the same tick as the file's last change,
    # then the file changed again with nothing in its stat to show it: the guard
    # alone must send it to be hashed.
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"new bytes")
    info = path.stat()
    stamp = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev)
    recorded = {os.path.abspath(path): (stamp, info.st_mtime_ns + RACY_NS - 1, blake(b"old bytes"))}
    known = KnownDigests(recorded)
    assert known.file(path) == blake(b"new bytes")
    # Once clearly older, the very same record would be trusted: the guard is what differed.
    recorded[os.path.abspath(path)] = (stamp, info.st_ctime_ns + RACY_NS, blake(b"old bytes"))
    assert KnownDigests(recorded).file(path) == blake(b"old bytes")


def test_touched_but_unchanged_file_is_hashed_again_to_the_same_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"same" * 100)
    first = taken_later(path, monkeypatch)
    time.sleep(0.02)
    os.utime(path)  # times move, bytes do not
    again = KnownDigests(first.taken)
    assert again.file(path) == first.taken[os.path.abspath(path)][2]
    assert again.hashed == 1


def test_rewritten_file_with_size_and_mtime_restored_is_hashed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"0123456789")
    before = path.stat()
    first = taken_later(path, monkeypatch)
    time.sleep(0.02)  # the change time moves on (the clock behind it is coarse)
    with path.open("r+b") as handle:  # the same inode, the same size
        handle.write(b"9876543210")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_mtime_ns == before.st_mtime_ns
    again = KnownDigests(first.taken)
    assert again.file(path) == blake(b"9876543210")


def test_replaced_file_with_the_same_size_and_times_is_hashed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"first")
    before = path.stat()
    first = taken_later(path, monkeypatch)
    other = tmp_path / "other"
    other.write_bytes(b"other")
    os.utime(other, ns=(before.st_atime_ns, before.st_mtime_ns))
    keep = tmp_path / "keep"  # hold the old inode so that it is not reused at once
    os.link(path, keep)
    other.replace(path)
    again = KnownDigests(first.taken)
    assert again.file(path) == blake(b"other")


def test_folder_input_reuses_the_digests_of_its_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    for name in ("a.jsonl", "b.jsonl"):
        write_results(folder / name)
    clock = time.time_ns
    monkeypatch.setattr(cache_module.time, "time_ns", lambda: clock() + LATER)
    first = KnownDigests()
    expected = input_digest(folder, first)
    monkeypatch.setattr(cache_module.time, "time_ns", clock)
    assert expected == input_digest(folder) and first.hashed == 2
    again = KnownDigests(first.taken)
    assert input_digest(folder, again) == expected and again.hashed == 0
    write_results(folder / "b.jsonl", tasks=4)
    changed = KnownDigests(first.taken)
    assert input_digest(folder, changed) == input_digest(folder) != expected
    assert changed.hashed == 1


# ---------------------------------------------------------------- through build()


def config_for(results: Path, output: Path) -> Config:
    return Config(result_sets=[Source(path=results)], output=output)


def digests_entry(site: Path) -> Path:
    return site.parent / CACHE_DIR / site.name / "digests-last.json"


def test_build_after_a_same_size_edit_with_mtime_restored_matches_a_clean_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = write_results(tmp_path / "r.jsonl")
    site = tmp_path / "site"
    clock = time.time_ns
    monkeypatch.setattr(cache_module.time, "time_ns", lambda: clock() + LATER)
    build(config_for(results, site))
    monkeypatch.setattr(cache_module.time, "time_ns", clock)
    recorded = json.loads(digests_entry(site).read_bytes())
    assert list(recorded) == [os.path.abspath(results)]

    # Unchanged: nothing is hashed, and nothing is rebuilt.
    again = build(config_for(results, site))
    assert "nothing changed" in again.reused

    # One run flips from pass to fail: the same size, the old modification time.
    before = results.stat()
    time.sleep(0.02)
    text = results.read_text()
    # t0's second run passed; it now fails ("passed":false without the space keeps the size).
    flipped = text.replace('"passed": true', '"passed":false', 1)
    assert len(flipped) == len(text) and flipped != text
    results.write_text(flipped)
    os.utime(results, ns=(before.st_atime_ns, before.st_mtime_ns))
    rebuilt = build(config_for(results, site))
    assert "nothing changed" not in rebuilt.reused
    assert "parsed inputs" not in rebuilt.reused
    clean = tmp_path / "clean"
    build(config_for(results, clean), use_cache=False)
    assert tree(site) == tree(clean)


@pytest.mark.parametrize(
    "damage",
    first_fast(
        [
            b"{",
            b"[]",
            b'{"relative/path": [1, 2, 3, 4, 5, 6, "00000000000000000000000000000000"]}',
            b'{"/x": [1, 2, 3, 4, 5, 6, "not a digest"]}',
            b'{"/x": [1, "2", 3, 4, 5, 6, "00000000000000000000000000000000"]}',
            b'{"/x": [1, 2, 3]}',
        ]
    ),
)
def test_damaged_digest_entry_is_ignored(tmp_path: Path, damage: bytes) -> None:
    results = write_results(tmp_path / "r.jsonl")
    site = tmp_path / "site"
    build(config_for(results, site))
    digests_entry(site).write_bytes(damage)
    assert cache_module.Cache(site).digests.recorded == {}
    write_results(results, tasks=5)
    build(config_for(results, site))
    clean = tmp_path / "clean"
    build(config_for(results, clean), use_cache=False)
    assert tree(site) == tree(clean)
    # The next build records good digests again.
    assert list(json.loads(digests_entry(site).read_bytes())) == [os.path.abspath(results)]


def test_forged_digest_for_a_racy_stamp_is_not_used(tmp_path: Path) -> None:
    # A record claiming old bytes for a file changed just now (its own stamp, a time
    # of hashing inside the racy window) must not stand in for hashing it.
    results = write_results(tmp_path / "r.jsonl")
    site = tmp_path / "site"
    build(config_for(results, site))
    write_results(results, tasks=5)
    info = results.stat()
    stamp = [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev]
    old_key = json.loads(digests_entry(site).read_bytes())[os.path.abspath(results)][-1]
    forged = {os.path.abspath(results): [*stamp, info.st_ctime_ns + 1, old_key]}
    digests_entry(site).write_bytes(json.dumps(forged).encode())
    build(config_for(results, site))
    clean = tmp_path / "clean"
    build(config_for(results, clean), use_cache=False)
    assert tree(site) == tree(clean)
