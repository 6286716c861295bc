"""GNU-style option parsing against a command's whole option table, so the next spelling is judged as bash's program sees it.

A program's options are read the way ``getopt_long`` reads them:

* ``--name`` may be abbreviated to any unambiguous prefix of a long option
  (``sort --outp=x`` is ``--output=x``, ``grep --deref`` is
  ``--dereference-recursive``); the prefix is matched against the
  program's **whole** table, the options it refuses included, so an
  abbreviation cannot slip past a refusal; an ambiguous or unknown prefix
  is :data:`UNKNOWN`;
* a value is given as ``--name=value`` or as the next word, and for a short
  option glued to it or as the next word; short options bundle (``-rS1K``
  is ``-r -S 1K``);
* ``--`` ends the options; ``-`` alone is an operand (standard input);
  options and operands may be mixed (GNU permutes them).

Each option has a :class:`Kind`: a flag, a value, a value that names a
file (checked like an operand), or a refusal with the reason. Anything not
in the table is unknown: the command then asks, since a program's options
are only known by listing them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum


class Kind(Enum):
    FLAG = "flag"
    VALUE = "value"
    OPTIONAL = "optional"
    """A value that may only be glued on: ``--color[=WHEN]``, ``-u[MODE]``."""
    PATH = "path"
    """A value naming a file the program reads: it must lie inside the workspace."""
    WRITES = "writes"
    """Writes a file or runs a program: the command is not read-only."""
    LEAVES = "leaves"
    """Follows symbolic links or reads file names from a file: a walk could leave the workspace."""
    ASKS = "asks"
    """Neither known to write nor provably harmless here (``tail -f`` never ends): a person decides."""


@dataclass(frozen=True)
class Refusal:
    """Why an argument makes the command not read-only; ``writes`` separates writing from merely unknown."""

    reason: str
    writes: bool = False


@dataclass(frozen=True)
class Table:
    """One program's options: a short letter or a long name (without ``--``) to its kind."""

    short: Mapping[str, Kind]
    long: Mapping[str, Kind]
    numeric_short: bool = False
    """``-5`` means a count (``head -5``)."""


@dataclass
class Parsed:
    """What the arguments hold: the operands, the values that name files, and the first refusal."""

    operands: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    options: list[str] = field(default_factory=list)
    """The long names and short letters given, expanded (``output``, ``r``)."""
    refusal: Refusal | None = None


_SUFFIXES = (("[=]", Kind.OPTIONAL), ("=path", Kind.PATH), ("=", Kind.VALUE), ("!w", Kind.WRITES), ("!l", Kind.LEAVES), ("!a", Kind.ASKS))


def table(
    flags: str = "",
    values: str = "",
    *,
    paths: str = "",
    optional: str = "",
    writes: str = "",
    leaves: str = "",
    asks: str = "",
    long: str = "",
    numeric_short: bool = False,
) -> Table:
    """A table from a compact spelling: short letters by kind, and ``long`` as space-separated entries,
    each ``name`` (a flag), ``name=`` (a value), ``name[=]`` (an optional ``=value``), ``name=path``,
    ``name!w`` (writes or runs a program), ``name!l`` (leaves the tree) or ``name!a`` (asks). A refused option needs no
    value spelling: reading stops at it."""
    shorts: dict[str, Kind] = {}
    for letters, kind in ((flags, Kind.FLAG), (values, Kind.VALUE), (paths, Kind.PATH), (optional, Kind.OPTIONAL), (writes, Kind.WRITES), (leaves, Kind.LEAVES), (asks, Kind.ASKS)):
        shorts.update(dict.fromkeys(letters, kind))
    longs: dict[str, Kind] = {}
    for entry in long.split():
        for suffix, kind in _SUFFIXES:
            if entry.endswith(suffix):
                longs[entry[: -len(suffix)]] = kind
                break
        else:
            longs[entry] = Kind.FLAG
    return Table(shorts, longs, numeric_short)


_WHY = {
    Kind.WRITES: "writes files or runs another program",
    Kind.LEAVES: "follows symbolic links or reads file names from a file, which can lead outside the workspace",
    Kind.ASKS: "is not known to be harmless here",
}
_REFUSED = frozenset(_WHY)


def parse(program: str, args: list[str], options: Table) -> Parsed:
    """Read ``args`` as ``getopt_long`` would (module doc); stops at the first refusal."""
    parsed = Parsed()
    i = 0
    while i < len(args) and parsed.refusal is None:
        arg = args[i]
        i += 1
        if arg == "--":
            parsed.operands.extend(args[i:])
            break
        if arg.startswith("--"):
            name, eq, glued = arg[2:].partition("=")
            resolved = _resolve_long(name, options.long)
            kind = options.long.get(resolved) if resolved is not None else None
            if kind is Kind.FLAG and eq:
                parsed.refusal = Refusal(f"'{program} --{resolved}' takes no value")
                break
            i = _take(parsed, program, f"--{resolved or name}", resolved, kind, glued if eq else None, args, i)
        elif arg.startswith("-") and arg != "-":
            cluster = arg[1:]
            if options.numeric_short and cluster.isdigit():
                continue
            for j, letter in enumerate(cluster):
                kind = options.short.get(letter)
                if kind in (Kind.VALUE, Kind.PATH, Kind.OPTIONAL):  # the rest of the word is its value, if any
                    i = _take(parsed, program, f"-{letter}", letter, kind, cluster[j + 1:] or None, args, i)
                    break
                i = _take(parsed, program, f"-{letter}", letter, kind, None, args, i)
                if parsed.refusal is not None:
                    break
        else:
            parsed.operands.append(arg)
    return parsed


def _take(parsed: Parsed, program: str, spelled: str, name: str | None, kind: Kind | None, value: str | None, args: list[str], i: int) -> int:
    """Record one option (``value`` glued on, or None); returns the index after any value it consumed."""
    if name is None or kind is None:
        parsed.refusal = Refusal(f"'{program} {spelled}' is not an option known to be read-only")
        return i
    parsed.options.append(name)
    if kind in _REFUSED:
        parsed.refusal = Refusal(f"'{program} {spelled}' {_WHY[kind]}", writes=kind is Kind.WRITES)
    elif kind in (Kind.VALUE, Kind.PATH):
        if value is None:
            if i >= len(args):
                parsed.refusal = Refusal(f"'{program} {spelled}' needs a value")
                return i
            value, i = args[i], i + 1
        if kind is Kind.PATH:
            parsed.paths.append(value)
    return i


def _resolve_long(name: str, longs: Mapping[str, Kind]) -> str | None:
    """``name`` itself, or the one long option it abbreviates; None when unknown or ambiguous."""
    if name in longs:
        return name
    if not name:
        return None
    matches = [full for full in longs if full.startswith(name)]
    return matches[0] if len(matches) == 1 else None
