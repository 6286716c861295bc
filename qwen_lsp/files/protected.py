"""Files whose contents change what git, the tools or the editor do: writing one always asks (docs/security.md, "Approvals").

An ordinary edit changes code the user reads and runs on purpose. These
files act by themselves: ``.git/config`` names programs git runs and
``.git/hooks/*`` are programs, ``.gitattributes`` picks the filter drivers,
``.gitmodules`` where submodules come from; ``.qwen/`` holds the settings,
rules, skills and memory that steer the model and its tools;
``.vscode/``, ``.idea/``, ``.devcontainer/``, ``*.code-workspace`` set the
editor's tasks, launch commands and extension settings; ``.envrc``,
``.husky/``, ``.pre-commit-config.yaml`` run commands on ``cd`` or commit.
A prompt-injected model in ``auto-edit`` could plant any of them without a
question, and "Allow always" on one edit would let it plant them all. So a
write to one of them asks in every approval mode but ``yolo`` and is never
remembered by "Allow always" (``ApprovalPolicy``).

Names are compared as the file systems that will open them do, after
git's own ``is_hfs_dotgit``/``is_ntfs_dotgit``: without case (on macOS and
Windows ``.GIT/config`` is ``.git/config``), without the code points HFS+
ignores (``.g\u200cit``), without Windows' trailing dots and spaces
(``.git. ``), and with the NTFS short name ``git~1``. The path given is the
one the write will reach (symlinks already followed), relative to the
workspace root.
"""

from __future__ import annotations

_DIRECTORIES = {
    ".git": "files under .git/ are git's own configuration and hooks, which git runs",
    ".qwen": "files under .qwen/ are settings, rules, skills and memory that steer the model and its tools",
    ".vscode": "files under .vscode/ set the editor's tasks, launch commands and settings",
    ".idea": "files under .idea/ set the IDE's run configurations and settings",
    ".devcontainer": "files under .devcontainer/ choose the commands a dev container runs",
    ".husky": "files under .husky/ are git hooks",
}
_FILES = {
    ".gitattributes": ".gitattributes chooses the filter and diff programs git runs on files",
    ".gitmodules": ".gitmodules chooses where submodules are fetched from and how they update",
    ".gitconfig": "a .gitconfig is git configuration",
    ".lfsconfig": ".lfsconfig is git LFS configuration",
    ".qwenignore": ".qwenignore decides which files the tools see",
    ".envrc": ".envrc is run by direnv on entering the folder",
    ".pre-commit-config.yaml": ".pre-commit-config.yaml names programs run on every commit",
}


def protected_reason(relative: str) -> str | None:
    """Why a write to ``relative`` (posix, inside the workspace) must always ask, or ``None`` for an ordinary file."""
    parts = [_as_opened(p) for p in relative.replace("\\", "/").split("/") if p not in ("", ".")]
    for part in parts[:-1]:
        if part in _DIRECTORIES:
            return _DIRECTORIES[part]
    if not parts:
        return None
    name = parts[-1]
    if name in _DIRECTORIES:  # the directory's own name as a file (a .git file of a worktree)
        return _DIRECTORIES[name]
    if name.endswith(".code-workspace"):
        return "a .code-workspace file holds the editor's workspace settings and tasks"
    return _FILES.get(name)


_HFS_IGNORED = dict.fromkeys([*range(0x200C, 0x2010), *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF])
"""Code points HFS+ leaves out of a name when it compares them (git's ``next_hfs_char``)."""
_SHORT_NAMES = {"git~1": ".git"}


def _as_opened(name: str) -> str:
    """``name`` as a case-insensitive, HFS+ or NTFS volume would match it."""
    folded = name.translate(_HFS_IGNORED).casefold().rstrip(". ")
    return _SHORT_NAMES.get(folded, folded)
