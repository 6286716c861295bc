"""``git``: Qwen Code 0.24.4's read-only subcommands, each with its whole option table, and the repository's own configuration judged.

The subcommands are 0.24.4's ``READ_ONLY_GIT_SUBCOMMANDS`` (``blame``,
``branch`` listing, ``cat-file``, ``describe``, ``diff``, ``grep``, ``log``,
``ls-files``, ``remote`` listing, ``rev-parse``, ``show``, ``status``); its
``WRITE_GIT_SUBCOMMAND`` ones are writes (plan mode refuses them); anything
else asks. Options before the subcommand (``-c``, ``-C``, ``--git-dir``,
``--exec-path``…) ask, as in 0.24.4; after it, each option is looked up in
the subcommand's table (``options.py``), so ``--output``, ``--ext-diff``,
``--textconv``, ``--show-signature``, ``--no-index``, ``-O`` and their
abbreviations ask, and so does a ``%G`` format (it runs gpg).

A read-only subcommand can still run programs the repository configures:
``core.fsmonitor`` (status, diff), ``diff.external`` and
``diff.<driver>.textconv`` (diff, log -p, show, blame), filter drivers
(status), ``gpg.program`` with ``log.showSignature``, ``core.worktree``
pointing elsewhere, ``include.path`` pulling any of those in. 0.24.4 asks
when the local config sets ``diff.external`` or ``core.fsmonitor``; we
allow what is known instead: when the repository's own configuration
(``local`` and ``worktree`` scopes, includes followed, read by git as data
with the system and global files switched off) holds any key outside
:data:`_HARMLESS`, every git command asks.
"""

from __future__ import annotations

import fnmatch
import os
import subprocess
from functools import lru_cache

from .options import Refusal, parse, table

_LOG_DIFF_LONG = (
    "oneline stat[=] numstat shortstat name-only name-status summary patch no-patch patch-with-stat patch-with-raw raw graph "
    "all branches[=] tags[=] remotes[=] decorate[=] no-decorate abbrev-commit no-abbrev-commit abbrev[=] no-abbrev full-index "
    "binary reverse first-parent merges no-merges no-walk[=] topo-order date-order author-date-order relative-date date= "
    "since= until= after= before= author= committer= grep= all-match invert-grep regexp-ignore-case basic-regexp "
    "extended-regexp fixed-strings perl-regexp max-count= skip= follow full-history simplify-by-decoration left-right "
    "cherry-pick cherry-mark cherry boundary format= pretty[=] color[=] no-color word-diff[=] word-diff-regex= color-words[=] "
    "color-moved[=] no-color-moved unified= ignore-space-change ignore-all-space ignore-blank-lines ignore-space-at-eol "
    "ignore-cr-at-eol ignore-submodules[=] minimal patience histogram diff-algorithm= find-renames[=] find-copies[=] "
    "find-copies-harder no-renames diff-filter= check exit-code quiet cached staged merge-base no-prefix src-prefix= "
    "dst-prefix= relative[=] no-relative text compact-summary dirstat[=] cumulative inter-hunk-context= function-context "
    "parents children notes[=] no-notes mailmap use-mailmap no-mailmap log-size encoding= expand-tabs[=] no-expand-tabs "
    "ancestry-path[=] not no-ext-diff no-textconv no-color-moved-ws ignore-matching-lines= anchored= line-prefix= "
    "output!w ext-diff!w textconv!w show-signature!w filters!w no-index!a open-files-in-pager!w exec!w"
)
_LOG_DIFF = table("pusazRwbWtMCDmcr", "nUSGLl", paths="O", numeric_short=True, long=_LOG_DIFF_LONG)

_SUBCOMMANDS = {
    "log": _LOG_DIFF,
    "show": _LOG_DIFF,
    "diff": _LOG_DIFF,
    "status": table(
        "sbvz", optional="u",
        long="short branch porcelain[=] long verbose untracked-files[=] ignored[=] ignore-submodules[=] column[=] no-column "
        "ahead-behind no-ahead-behind renames no-renames find-renames[=] null show-stash",
    ),
    "branch": table(
        "arvlq", writes="dDmMcCuf",
        long="list all remotes verbose show-current contains= no-contains= merged[=] no-merged[=] points-at= sort= format= "
        "color[=] no-color column[=] no-column abbrev= no-abbrev ignore-case omit-empty quiet delete!w move!w copy!w "
        "set-upstream-to!w unset-upstream!w edit-description!w create-reflog!w force!w track!w no-track!w recurse-submodules!w",
    ),
    "ls-files": table(
        "cdmoiskuvtfz", "x", paths="X",
        long="cached deleted modified others ignored stage killed unmerged directory no-empty-directory eol full-name "
        "recurse-submodules!a abbrev[=] exclude= exclude-from=path exclude-per-directory= exclude-standard error-unmatch "
        "with-tree= debug deduplicate sparse format= resolve-undo",
    ),
    "rev-parse": table(
        "q",
        long="git-dir show-toplevel abbrev-ref[=] short[=] verify quiet symbolic symbolic-full-name is-inside-work-tree "
        "is-inside-git-dir is-bare-repository is-shallow-repository show-cdup show-prefix git-common-dir absolute-git-dir "
        "show-superproject-working-tree shared-index-path all branches[=] tags[=] remotes[=] glob= default= since= until= "
        "revs-only no-revs flags no-flags show-object-format[=] show-ref-format path-format= git-path= sq not",
    ),
    "describe": table(
        "",
        long="all tags contains abbrev= candidates= exact-match debug long match= exclude= always first-parent dirty[=] broken[=]",
    ),
    "cat-file": table(
        "tspeZ",
        long="batch[=] batch-check[=] allow-unknown-type buffer unordered mailmap use-mailmap no-mailmap "
        "batch-all-objects textconv!w filters!w follow-symlinks!l batch-command!a",
    ),
    "grep": table(
        "iIvwcLlnhHzEFGParoqWp", "ABCme", paths="f", writes="O", numeric_short=True,
        long="cached untracked no-index!a recurse-submodules!a textconv!w no-textconv ignore-case word-regexp invert-match "
        "full-name extended-regexp basic-regexp fixed-strings perl-regexp line-number column name-only files-with-matches "
        "files-without-match count null break heading show-function function-context context= after-context= "
        "before-context= threads= max-depth= max-count= and or not all-match quiet only-matching exclude-standard "
        "no-exclude-standard color[=] no-color open-files-in-pager!w",
    ),
    "blame": table(
        "bcflnpsetwMC", "L", paths="S",
        long="incremental porcelain line-porcelain root show-stats score-debug show-name show-number show-email date= "
        "progress no-progress encoding= contents=path reverse= first-parent ignore-rev= ignore-revs-file=path color-lines "
        "color-by-age minimal abbrev=",
    ),
}

WRITE_SUBCOMMANDS = frozenset(
    "add am checkout cherry-pick clean clone commit fetch gc init merge mv pull push rebase reset restore revert rm stash switch".split()
)


def judge_git(args: list[str]) -> tuple[Refusal | None, list[str]]:
    """The refusal, if any, and the operands that may name files (checked by the caller when they exist)."""
    if not args or args in (["--version"], ["--help"]):
        return None, []
    first = args[0]
    if first.startswith("-"):
        return Refusal(f"'git {first}' before a subcommand changes how git runs"), []
    sub = first
    if sub in WRITE_SUBCOMMANDS:
        return Refusal(f"'git {sub}' changes the repository", writes=True), []
    if sub == "remote":
        return _remote(args[1:]), []
    options = _SUBCOMMANDS.get(sub)
    if options is None:
        return Refusal(f"'git {sub}' is not a read-only git subcommand"), []
    rest = args[1:]
    parsed = parse(f"git {sub}", rest, options)
    if parsed.refusal is not None:
        return parsed.refusal, []
    if any("%G" in arg for arg in rest):
        return Refusal("a '%G' format runs gpg to check signatures"), []
    if sub == "branch" and parsed.operands and not {"list", "l"} & set(parsed.options):
        return Refusal("'git branch NAME' creates a branch", writes=True), []
    return None, [*parsed.paths, *parsed.operands]


def _remote(args: list[str]) -> Refusal | None:
    """``git remote [-v]``, ``git remote get-url NAME``, ``git remote show -n NAME``: no network, no change."""
    words = [a for a in args if a not in ("-v", "--verbose")]
    if not words or (words[0] == "get-url" and len(words) == 2 and not words[1].startswith("-")):
        return None
    if words[0] == "show" and "-n" in words[1:] and all(w == "-n" or not w.startswith("-") for w in words[1:]):
        return None
    if words[0] in ("add", "remove", "rm", "rename", "set-branches", "set-head", "set-url", "update", "prune"):
        return Refusal(f"'git remote {words[0]}' changes the repository's remotes", writes=True)
    return Refusal(f"'git remote {' '.join(words[:1])}' may contact the network or change remotes")


_HARMLESS = (
    "core.repositoryformatversion", "core.filemode", "core.bare", "core.logallrefupdates", "core.ignorecase",
    "core.precomposeunicode", "core.symlinks", "core.autocrlf", "core.eol", "core.safecrlf", "core.quotepath",
    "core.abbrev", "core.sparsecheckout", "core.sparsecheckoutcone", "core.commitgraph", "core.multipackindex",
    "core.untrackedcache", "core.checkstat", "core.trustctime", "core.protecthfs", "core.protectntfs", "core.longpaths",
    "remote.*.url", "remote.*.pushurl", "remote.*.fetch", "remote.*.push", "remote.*.tagopt", "remote.*.prune",
    "remote.*.mirror", "remote.*.promisor", "remote.*.partialclonefilter", "branch.*",
    "user.name", "user.email", "init.defaultbranch", "pull.rebase", "pull.ff", "push.default", "push.autosetupremote",
    "fetch.prune", "merge.ff", "merge.conflictstyle", "rebase.autostash", "rebase.autosquash", "gc.auto",
    "extensions.objectformat", "extensions.worktreeconfig", "extensions.refstorage", "extensions.partialclone",
    "lfs.repositoryformatversion", "color.*", "diff.renames", "diff.algorithm", "diff.mnemonicprefix", "diff.noprefix",
    "diff.renamelimit", "diff.colormoved", "diff.indentheuristic", "diff.context", "status.showuntrackedfiles",
    "status.short", "status.branch", "log.date", "log.decorate", "log.abbrevcommit", "log.follow",
)
"""Local configuration keys that name no program and no other place to read: everything else makes git ask."""

CONFIG_TIMEOUT = 5.0


def risky_config(cwd: str) -> str | None:
    """The first key of the repository's own configuration at ``cwd`` outside :data:`_HARMLESS`, or None (blocking)."""
    return _risky_config(cwd, _config_stamp(cwd))


def _config_stamp(cwd: str) -> tuple[float, ...]:
    """Changes when a ``.git/config`` above ``cwd`` changes, so the cached answer is not stale."""
    stamps = []
    path = cwd
    for _ in range(64):
        for name in (".git/config", ".git"):
            try:
                stamps.append(os.stat(os.path.join(path, name)).st_mtime)
            except OSError:
                stamps.append(0.0)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return tuple(stamps)


@lru_cache(maxsize=32)
def _risky_config(cwd: str, _stamp: tuple[float, ...]) -> str | None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    try:
        done = subprocess.run(
            ["git", "config", "--list", "--show-scope", "--includes", "-z"],
            cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=CONFIG_TIMEOUT, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "the repository's configuration could not be read"
    if done.returncode not in (0, 1):  # 1: no configuration at all
        return "the repository's configuration could not be read"
    fields = done.stdout.decode("utf-8", errors="replace").split("\0")
    for scope, entry in zip(fields[0::2], fields[1::2]):
        if scope not in ("local", "worktree"):
            continue
        key = entry.split("\n", 1)[0].lower()
        if not any(fnmatch.fnmatchcase(key, pattern) for pattern in _HARMLESS):
            return key
    return None
