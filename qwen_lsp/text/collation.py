"""Sorting names the way Qwen Code does: JavaScript's ``localeCompare``.

Qwen Code sorts folder listings (the environment prelude) and the skills
listing with ``a.localeCompare(b)``, i.e. ICU collation for the default
locale: ``_`` < ``-`` < ``.`` < digits < letters, an accented letter right
after its base letter, and case only as a late tie-break — so
``load_batch.rs`` comes before ``load.rs``. A hand-made key only
approximates that and differed on real repositories, so we use ``pyuca``
(the Unicode Collation Algorithm with the default table, which ICU's root
collation tailors only for scripts file names rarely use). It matched Node's
``localeCompare`` on thousands of generated names (tests/data/collation).

Keys are cached: the same names are sorted again on every rebuild of the
prelude, and a pure-Python UCA key costs tens of microseconds.

Loading pyuca's table takes about half a second, and most names (skill
names, source files) are ASCII. In the default table every ASCII character
is one collation element and no contraction is made of ASCII characters
only, so an ASCII name's key is built from :data:`_ASCII_WEIGHTS` (pyuca's
own weights for code points 0–127, checked against it by
``tests/test_collation.py``) and equals the key pyuca would give; the table
is loaded only for the first name outside ASCII.
"""

from __future__ import annotations

from functools import cache, lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyuca import Collator

_ASCII_WEIGHTS: tuple[tuple[int, int, int], ...] = (
    (0x0000, 0x00, 0), (0x0000, 0x00, 0), (0x0000, 0x00, 0), (0x0000, 0x00, 0), (0x0000, 0x00, 0), (0x0000, 0x00, 0),
    (0x0000, 0x00, 0), (0x0000, 0x00, 0), (0x0000, 0x00, 0), (0x0201, 0x20, 2), (0x0202, 0x20, 2), (0x0203, 0x20, 2),
    (0x0204, 0x20, 2), (0x0205, 0x20, 2), (0x0000, 0x00, 0), (0x0000, 0x00, 0), (0x0000, 0x00, 0), (0x0000, 0x00, 0),
    (0x0000, 0x00, 0), (0x0000, 0x00, 0), (0x0000, 0x00, 0), (0x0000, 0x00, 0), (0x0000, 0x00, 0), (0x0000, 0x00, 0),
    (0x0000, 0x00, 0), (0x0000, 0x00, 0), (0x0000, 0x00, 0), (0x0000, 0x00, 0), (0x0000, 0x00, 0), (0x0000, 0x00, 0),
    (0x0000, 0x00, 0), (0x0000, 0x00, 0), (0x0209, 0x20, 2), (0x0260, 0x20, 2), (0x030C, 0x20, 2), (0x0398, 0x20, 2),
    (0x1C12, 0x20, 2), (0x0399, 0x20, 2), (0x0396, 0x20, 2), (0x0305, 0x20, 2), (0x0317, 0x20, 2), (0x0318, 0x20, 2),
    (0x038F, 0x20, 2), (0x0616, 0x20, 2), (0x0222, 0x20, 2), (0x020D, 0x20, 2), (0x0277, 0x20, 2), (0x0394, 0x20, 2),
    (0x1C3D, 0x20, 2), (0x1C3E, 0x20, 2), (0x1C3F, 0x20, 2), (0x1C40, 0x20, 2), (0x1C41, 0x20, 2), (0x1C42, 0x20, 2),
    (0x1C43, 0x20, 2), (0x1C44, 0x20, 2), (0x1C45, 0x20, 2), (0x1C46, 0x20, 2), (0x0239, 0x20, 2), (0x0234, 0x20, 2),
    (0x061A, 0x20, 2), (0x061B, 0x20, 2), (0x061C, 0x20, 2), (0x0266, 0x20, 2), (0x038E, 0x20, 2), (0x1C47, 0x20, 8),
    (0x1C60, 0x20, 8), (0x1C7A, 0x20, 8), (0x1C8F, 0x20, 8), (0x1CAA, 0x20, 8), (0x1CE5, 0x20, 8), (0x1CF4, 0x20, 8),
    (0x1D18, 0x20, 8), (0x1D32, 0x20, 8), (0x1D4C, 0x20, 8), (0x1D65, 0x20, 8), (0x1D77, 0x20, 8), (0x1DAA, 0x20, 8),
    (0x1DB9, 0x20, 8), (0x1DDD, 0x20, 8), (0x1E0C, 0x20, 8), (0x1E21, 0x20, 8), (0x1E33, 0x20, 8), (0x1E71, 0x20, 8),
    (0x1E95, 0x20, 8), (0x1EB5, 0x20, 8), (0x1EE3, 0x20, 8), (0x1EF5, 0x20, 8), (0x1EFF, 0x20, 8), (0x1F0B, 0x20, 8),
    (0x1F21, 0x20, 8), (0x0319, 0x20, 2), (0x0395, 0x20, 2), (0x031A, 0x20, 2), (0x0485, 0x20, 2), (0x020B, 0x20, 2),
    (0x0482, 0x20, 2), (0x1C47, 0x20, 2), (0x1C60, 0x20, 2), (0x1C7A, 0x20, 2), (0x1C8F, 0x20, 2), (0x1CAA, 0x20, 2),
    (0x1CE5, 0x20, 2), (0x1CF4, 0x20, 2), (0x1D18, 0x20, 2), (0x1D32, 0x20, 2), (0x1D4C, 0x20, 2), (0x1D65, 0x20, 2),
    (0x1D77, 0x20, 2), (0x1DAA, 0x20, 2), (0x1DB9, 0x20, 2), (0x1DDD, 0x20, 2), (0x1E0C, 0x20, 2), (0x1E21, 0x20, 2),
    (0x1E33, 0x20, 2), (0x1E71, 0x20, 2), (0x1E95, 0x20, 2), (0x1EB5, 0x20, 2), (0x1EE3, 0x20, 2), (0x1EF5, 0x20, 2),
    (0x1EFF, 0x20, 2), (0x1F0B, 0x20, 2), (0x1F21, 0x20, 2), (0x031B, 0x20, 2), (0x061E, 0x20, 2), (0x031C, 0x20, 2),
    (0x0620, 0x20, 2), (0x0000, 0x00, 0),
)
"""(primary, secondary, tertiary) of code points 0–127 in pyuca's default table (UCA 9.0.0); 0 = ignorable."""


@cache
def _collator() -> Collator:
    """Built on first use: loading the collation table takes a noticeable fraction of a second."""
    from pyuca import Collator

    return Collator()


def _ascii_sort_key(name: str) -> tuple[int, ...]:
    """pyuca's ``sort_key`` for an ASCII name: each level's non-zero weights, a 0 after each of the three levels."""
    weights = [_ASCII_WEIGHTS[ord(ch)] for ch in name]
    key: list[int] = []
    for level in range(3):
        key.extend(w[level] for w in weights if w[level])
        key.append(0)
    return tuple(key)


@lru_cache(maxsize=16384)
def locale_key(name: str) -> tuple[tuple[int, ...], str]:
    """Sort key equal in order to ``localeCompare``; the string itself breaks exact ties.

    ICU reports canonically equivalent names as equal and JavaScript's stable
    sort then keeps directory order, which is not reproducible; ordering such
    ties by code point keeps our output deterministic.
    """
    return (_ascii_sort_key(name) if name.isascii() else _collator().sort_key(name), name)
