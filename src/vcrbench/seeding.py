"""Deterministic seeds: every random draw in VCR-Bench is derived from the config seed and names.

``derive_seed(seed, "manifest", "gaussian_noise")`` always gives the same 63-bit integer for the
same arguments, in any process and on any machine (it hashes the names with BLAKE2b rather than
using Python's salted ``hash``), so stages never share or depend on global random state.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np


def derive_seed(seed: int, *names: object) -> int:
    """A 63-bit seed derived from ``seed`` and any number of names (str/int)."""
    h = hashlib.blake2b(digest_size=8)
    h.update(str(int(seed)).encode())
    for name in names:
        h.update(b"\x1f")
        h.update(str(name).encode())
    return int.from_bytes(h.digest(), "little") >> 1


def rng(seed: int, *names: object) -> np.random.Generator:
    """A numpy Generator (PCG64) seeded by :func:`derive_seed`."""
    return np.random.Generator(np.random.PCG64(derive_seed(seed, *names)))


def image_sequence(clean_set, n: int, seed: int) -> np.ndarray:
    """Row positions of the clean set (anything with a length) for samples 0..n−1 of a test set
    (concatenated random permutations; :mod:`vcrbench.testsets.sampling`). It depends on the seed
    and the clean set's size only, so the plan can count a set's images before it is drawn."""
    m = len(clean_set)
    if m == 0:
        raise ValueError("the clean set holds no images")
    gen = rng(seed, "manifest", "images")
    reps = math.ceil(n / m)
    return np.concatenate([gen.permutation(m) for _ in range(reps)])[:n]
