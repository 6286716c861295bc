"""Run ``git`` commands that fetch, commit and push, still with none of the repository's programs (docs/security.md, "Git as data").

Team memory sync (``features/memory/team_sync.py``) must pull, commit and push, so git needs the
repository's remotes and its branches' upstreams, which live in the repository's config — the
same file that can name hooks, filters, ``core.sshCommand``, ``remote.<name>.uploadpack`` or a
``transport::`` helper. It runs as the snapshot does (``git_as_data.py``: our own config in a
shadow common directory, hooks at ``/dev/null``, the system and global files off, every
inherited ``GIT_*`` dropped), and only these keys are carried over from the repository, each
checked against the shape it may have (allowed when known, dropped otherwise):

* ``remote.<name>.url`` / ``.pushurl``: ``https``, ``http``, ``ssh``, ``git`` and ``file`` URLs,
  ``user@host:path``, or a local path outside the checkout (a push runs the remote repository's
  hooks); never ``<transport>::…``, never an option (``-…``), and ``protocol.allow=never`` lets
  no other transport run;
* ``remote.<name>.fetch``: a plain ``[+]refs/…:refs/…`` refspec;
* ``branch.<name>.remote`` and ``branch.<name>.merge``: a remote name and a ``refs/…`` ref.

From the user (trusted, as Qwen Code 0.24.4 runs git with the user's whole environment): the
commit identity (``user.name``, ``user.email`` of the global config, ``GIT_AUTHOR_*`` /
``GIT_COMMITTER_*``), ``credential.helper`` of the global config, and ``GIT_SSH_COMMAND`` with
0.24.4's ``-oBatchMode=yes -oConnectTimeout=5`` appended. ``GIT_TERMINAL_PROMPT=0``: a missing
credential fails instead of waiting. Every command has 0.24.4's 15 s limit.

What this does not carry, against 0.24.4: ``url.<base>.insteadOf``, ``http.*`` (proxies, CA
files), ``core.sshCommand`` and the repository's own ``user.*``; a remote that needs them fails
to sync and the user is told once.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .git_as_data import _shadow_for, clean_env, git_env, located_repository

GIT_TIMEOUT = 15.0
"""Seconds per git command, as 0.24.4's ``GIT_TIMEOUT_MS``."""
_MAX_CONFIG_OUTPUT = 1 << 20
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/+-]{0,199}")
_REF = re.compile(r"refs/[A-Za-z0-9._/+-]{1,400}")
_REFSPEC = re.compile(r"\+?refs/[A-Za-z0-9._/*+-]{1,400}:refs/[A-Za-z0-9._/*+-]{1,400}")
_URL = re.compile(r"(?:https?|ssh|git|file)://[^\s\x00-\x1f\x7f]{1,2000}")
_SCP = re.compile(r"(?:[A-Za-z0-9._~+-]{1,100}@)?[A-Za-z0-9][A-Za-z0-9.-]{0,253}:[^\s\x00-\x1f\x7f:][^\s\x00-\x1f\x7f]{0,2000}")
_LOCAL = re.compile(r"(?:/|\./|\.\./)[^\x00-\x1f\x7f]{0,4000}")
_PROTOCOLS = "[protocol]\n\tallow = never\n" + "".join(f'[protocol "{p}"]\n\tallow = always\n' for p in ("https", "http", "ssh", "git", "file"))


def safe_remote_url(url: str, worktree: Path) -> bool:
    """A URL git may fetch from or push to without running anything the repository chose.

    A local remote (a path, ``file://``) must lie outside the checkout: git runs that
    repository's hooks on a push, and a remote planted in the checkout would bring its own."""
    if "::" in url or url.startswith("-"):
        return False
    local = url[len("file://"):] if url.startswith("file://") else url if _LOCAL.fullmatch(url) else None
    if local is not None:
        if "%" in local:  # file:// URLs are percent-decoded by git: one spelling only
            return False
        real = Path(os.path.realpath(worktree / local))
        return not (real == worktree or worktree in real.parents)
    if _URL.fullmatch(url):
        host = url.split("://", 1)[1].split("@")[-1]
        return not host.startswith("-")
    return bool(_SCP.fullmatch(url))


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def carried_config(entries: Sequence[tuple[str, str]], worktree: Path) -> str:
    """Our config text for the repository's ``key value`` entries that pass (see the module docstring)."""
    out: list[str] = []
    for key, value in entries:
        if "\n" in value or "\x00" in value:
            continue
        section, _, rest = key.partition(".")
        sub, _, var = rest.rpartition(".")
        section, var = section.lower(), var.lower()
        if not _NAME.fullmatch(sub):
            continue
        if section == "remote" and var in ("url", "pushurl") and safe_remote_url(value, worktree):
            pass
        elif section == "remote" and var == "fetch" and _REFSPEC.fullmatch(value):
            pass
        elif section == "branch" and var == "remote" and (value == "." or _NAME.fullmatch(value)):
            pass
        elif section == "branch" and var == "merge" and _REF.fullmatch(value):
            pass
        else:
            continue
        out.append(f"[{section} {_quote(sub)}]\n\t{var} = {_quote(value)}\n")
    return "".join(out)


def _config_entries(args: Sequence[str], env: Mapping[str, str], cwd: str) -> list[tuple[str, str]]:
    """``git config … --list -z`` as (key, value) pairs; none when git fails."""
    try:
        done = subprocess.run(
            ["git", "config", *args, "--list", "-z"], cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL,
            capture_output=True, timeout=GIT_TIMEOUT, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if done.returncode or len(done.stdout) > _MAX_CONFIG_OUTPUT:
        return []
    pairs = []
    for item in done.stdout.decode("utf-8", errors="replace").split("\x00"):
        key, _, value = item.partition("\n")
        if key:
            pairs.append((key, value))
    return pairs


def repository_entries(common: Path) -> list[tuple[str, str]]:
    """The repository's own config file, parsed by git as data: no includes, no system or global file."""
    env = {**clean_env(), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    return _config_entries(["--file", str(common / "config"), "--no-includes"], env, str(common))


def user_config() -> str:
    """The user's identity and credential helpers from their global config (the user's own file, trusted)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k == "GIT_CONFIG_GLOBAL"}
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    entries = _config_entries(["--global"], env, os.path.expanduser("~") if os.path.isdir(os.path.expanduser("~")) else "/")
    user = [(k.split(".", 1)[1], v) for k, v in entries if k in ("user.name", "user.email") and "\n" not in v]
    helpers = [v for k, v in entries if k == "credential.helper" and "\n" not in v]
    text = "[user]\n" + "".join(f"\t{k} = {_quote(v)}\n" for k, v in user) if user else ""
    if helpers:
        text += "[credential]\n" + "".join(f"\thelper = {_quote(v)}\n" for v in helpers)
    return text


@dataclass(frozen=True)
class GitResult:
    ok: bool
    out: str
    err: str


class GitRunner:
    """Runs one command at a time in the repository, with the carried config (:func:`git_runner`)."""

    def __init__(self, cwd: str, env: Mapping[str, str]) -> None:
        self._cwd = cwd
        self._env = dict(env)

    def __call__(self, *args: str) -> GitResult:
        try:
            done = subprocess.run(
                ["git", "--no-pager", *args], cwd=self._cwd, env=self._env, stdin=subprocess.DEVNULL,
                capture_output=True, timeout=GIT_TIMEOUT, check=False,
            )
        except subprocess.TimeoutExpired:
            return GitResult(False, "", f"git {args[0] if args else ''} took longer than {GIT_TIMEOUT:.0f} s")
        except OSError as exc:
            return GitResult(False, "", str(exc))
        return GitResult(done.returncode == 0, done.stdout.decode("utf-8", errors="replace"), done.stderr.decode("utf-8", errors="replace"))


@contextlib.contextmanager
def git_runner(cwd: str) -> Iterator[GitRunner]:
    """A runner for the repository holding ``cwd``; raises ``ValueError``/``OSError`` when there is none."""
    worktree, gitdir, common = located_repository(cwd)
    extra = carried_config(repository_entries(common), Path(os.path.realpath(worktree))) + _PROTOCOLS + user_config()
    with _shadow_for(common, "sync").synced(extra) as scratch:
        env = git_env(worktree, gitdir, scratch)
        for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
            if name in os.environ:
                env[name] = os.environ[name]
        ssh = os.environ.get("GIT_SSH_COMMAND")
        env.update(
            GIT_SSH_COMMAND=f"{ssh} -oBatchMode=yes -oConnectTimeout=5" if ssh else "ssh -oBatchMode=yes -oConnectTimeout=5",
            LC_ALL="C",
        )
        yield GitRunner(str(worktree), env)
