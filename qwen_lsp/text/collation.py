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
"""

from __future__ import annotations

from functools import cache, lru_cache

from pyuca import Collator


@cache
def _collator() -> Collator:
    """Built on first use: loading the collation table takes a noticeable fraction of a second."""
    return Collator()


@lru_cache(maxsize=16384)
def locale_key(name: str) -> tuple[tuple[int, ...], str]:
    """Sort key equal in order to ``localeCompare``; the string itself breaks exact ties.

    ICU reports canonically equivalent names as equal and JavaScript's stable
    sort then keeps directory order, which is not reproducible; ordering such
    ties by code point keeps our output deterministic.
    """
    return (_collator().sort_key(name), name)
