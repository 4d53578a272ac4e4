"""Random name parts and uids (``kplane.core.meta.rand``): drawn from a pool of the system's
randomness, so they must stay uniform, unique, and unique across a fork (``serve --workers``)."""

from __future__ import annotations

import collections
import os
import uuid

from kplane.core.meta.rand import SAFE_ALPHABET, new_uid, random_string


def test_generated_name_parts_use_every_safe_character_about_equally() -> None:
    counts = collections.Counter("".join(random_string(5) for _ in range(20_000)))
    assert set(counts) == set(SAFE_ALPHABET)
    expected = 100_000 / len(SAFE_ALPHABET)
    assert all(abs(n - expected) < expected * 0.1 for n in counts.values())  # 10% of ~3,700: many sigmas


def test_uids_are_version_4_and_unique_even_across_a_fork() -> None:
    mine = [new_uid() for _ in range(1000)]
    assert len(set(mine)) == 1000 and all(uuid.UUID(u).version == 4 for u in mine)
    new_uid()  # the pool is now partly drawn: a child that kept it would repeat the parent's next ones
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        os.write(write, "\n".join(new_uid() for _ in range(300)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        theirs = pipe.read().split("\n")
    os.waitpid(child, 0)
    ours = [new_uid() for _ in range(300)]
    assert len(theirs) == 300 and not set(theirs) & set(ours)
