"""What a project's own ``.qwen/settings.json`` may not decide (docs/security.md, "Settings trust").

The repository a user opens is untrusted: people clone strangers' code and
the editor starts this server on it at once. A project settings file sits in
that repository, so it must not be able to choose where the user's prompts
and API key go, nor switch off a protection, nor point the server at files
outside the project. The user's own settings (``~/.qwen/settings.json``),
the environment and the editor are trusted and may set anything.

Compared with Qwen Code: Qwen Code loads a workspace's settings in full once
the folder is trusted (``security.folderTrust`` in the *user's* settings plus
``~/.qwen/trustedFolders.json``; an untrusted folder's settings file is not
loaded at all). We keep the "untrusted means not loaded" half, taking trust
only from the user's settings or the editor (which passes VS Code's
workspace trust), and go further: even a trusted project may not set the
keys in :data:`_FORBIDDEN`, because "trust" here is a one-click dialog that
users accept for every clone, while a leaked key cannot be taken back.

Every layer reaches this screen in one spelling, its keys rewritten to
the aliases by ``settings_spelling`` (``base_url`` is ``baseUrl`` here),
so the keys below are the only names the model layer can read them by. A
project's ``tools.approvalMode`` is taken only when it is at least as
strict as the user's (``yolo`` < ``auto-edit`` < ``default`` < ``plan``).

The boundary, as one rule (docs/security.md, "Settings trust"): only the
user's own settings, the environment and the editor may set anything that
reads outside the project, starts a program, changes where data goes,
turns on background model work or shares memory. The keys that do are
listed once, here: :data:`_FORBIDDEN` (never from a project) and
:data:`_OFF_ONLY` (a project may switch the work off, never on);
``qwen-lsp doctor`` prints them from :func:`boundary_lines`.

``context.fileName`` is checked in *every* layer: each entry is joined to a
directory (``~/.qwen`` first, then the project and its parents up to HOME)
and read into the system prompt. An allowlist shape, not a list of bad
names: a plain ASCII name of letters, digits, ``.``, ``_`` and ``-`` that
starts with a letter or digit and ends in ``.md`` (any case). So
``settings.json``, ``.git-credentials``, ``.npmrc``, ``.env``, ``id_rsa``,
``/proc/self/environ`` and ``../x`` are refused however they are spelled
(confusables, full-width letters and trailing dots or spaces are not ASCII
or do not end in ``.md``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .aliases import get_path

_ELSEWHERE = "set it in ~/.qwen/settings.json, the environment or the editor"
_FORBIDDEN: dict[tuple[str, ...], str] = {
    ("model", "baseUrl"): f"a project may not choose where requests (and the API key) are sent; {_ELSEWHERE}",
    ("model", "apiKey"): f"a project may not choose which credentials are used; {_ELSEWHERE}",
    ("model", "timeouts"): f"a project may not change the limits that stop hung requests; {_ELSEWHERE}",
    ("general", "outputLanguage"): f"it is written to ~/.qwen/output-language.md, shared by every project; {_ELSEWHERE}",
    ("tools", "shell"): f"a project may not let the model run shell commands; {_ELSEWHERE}",
    ("folderTrust",): "only your own ~/.qwen/settings.json or the editor decide whether a folder is trusted",
}
"""Keys a project may never set: each reads outside the project, starts a program or changes where data goes."""

_OFF_ONLY: dict[str, tuple[tuple[tuple[str, ...], ...], bool]] = {
    "team memory": ((("memory", "enableTeamMemory"),), False),
    "team memory sync": ((("memory", "enableTeamMemorySync"),), False),
    "speculation": ((("followup", "speculate"), ("ui", "enableSpeculation")), False),
    "automatic skill review": ((("skills", "review", "enabled"), ("memory", "enableAutoSkill")), False),
    "follow-up suggestions": ((("followup", "enabled"), ("ui", "enableFollowupSuggestions")), True),
    "managed memory": ((("memory", "enabled"), ("memory", "enableManagedAutoMemory")), True),
    "memory extraction": ((("memory", "autoExtract"),), True),
    "memory dream": ((("memory", "autoDream"), ("memory", "enableManagedAutoDream")), True),
}
"""Switches of background model work and shared memory: ``what -> (every spelling of its key, default)``.

A project may set them to ``false`` (less work, less sharing); any other
value is dropped, with a notice when it would have changed what the
user's layers (or the default) say. Both spellings are screened, because
Qwen Code's name is folded onto ours only after this screen."""
_STRICTNESS = {"yolo": 0, "auto": 1, "auto-edit": 1, "default": 2, "plan": 3}
"""Approval modes from loosest to strictest; a mode not listed here (a newer one) is never taken from a project.
``auto`` and ``auto-edit`` share a rank: neither is stricter than the other, so a project may not swap one for the other."""


def _at_least_as_strict(wanted: str, below: str) -> bool:
    """``wanted`` (a project's mode) asks at least whenever ``below`` (the user's) would."""
    if wanted == below:
        return wanted in _STRICTNESS
    return _STRICTNESS.get(wanted, -1) > _STRICTNESS.get(below, len(_STRICTNESS))


_CONTEXT_FILENAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\.[mM][dD]")


def is_context_filename(name: str) -> bool:
    """A name ``context.fileName`` may use: ASCII letters, digits, ``.``, ``_``, ``-``, first a letter or digit, ending ``.md``.

    The allowlist shape of the module doc: no directory part, no dot-file,
    no credential or settings file, nothing whose meaning depends on
    Unicode folding or on a filesystem dropping trailing dots.
    """
    return _CONTEXT_FILENAME.fullmatch(name) is not None


def boundary_lines() -> list[str]:
    """The trust boundary as ``qwen-lsp doctor`` prints it: what a project's settings may not set."""
    lines = [f"{'.'.join(path)}: never from a project ({why.split(';')[0]})" for path, why in _FORBIDDEN.items()]
    lines.append("tools.approvalMode: from a project only when stricter than yours")
    lines.append("context.ruleExcludes: from a project only patterns under the project")
    for what, (paths, _default) in _OFF_ONLY.items():
        lines.append(f"{' / '.join('.'.join(p) for p in paths)}: a project may switch {what} off, not on")
    lines.append("context.fileName (every layer): plain names ending in .md (letters, digits, . _ -), read up to HOME, never above")
    return lines


def screen_layers(
    layers: list[tuple[str, Mapping[str, Any]]],
    project_source: str | None,
    project_root: Path | None,
    problems: list[str],
) -> list[tuple[str, Mapping[str, Any]]]:
    """The settings layers with what their source may not set removed, each removal reported.

    ``project_source`` names the project settings layer (``None`` when there
    is no project). When the trusted layers say the folder is not trusted,
    that layer is dropped whole, as Qwen Code does.
    """
    trusted = _folder_trusted(layer for source, layer in layers if source != project_source)
    screened: list[tuple[str, Mapping[str, Any]]] = []
    for source, layer in layers:
        if source == project_source and layer:
            if not trusted:
                problems.append(f"{source}: not loaded: this folder is not trusted (folderTrust is false)")
                continue
            assert project_root is not None
            below = [l for _, l in screened]
            layer = _project_layer(layer, source, project_root, _approval_mode(below), problems)
            layer = _off_only(layer, source, below, problems)
        screened.append((source, _plain_context_filenames(layer, source, problems)))
    return screened


def _approval_mode(layers_below: Any) -> str:
    """``tools.approvalMode`` as the layers below the project set it (``default`` when none does)."""
    mode = "default"
    for layer in layers_below:
        tools = layer.get("tools")
        if isinstance(tools, Mapping) and isinstance(tools.get("approvalMode"), str):
            mode = tools["approvalMode"]
    return mode


def _folder_trusted(trusted_layers: Any) -> bool:
    """``folderTrust`` from the user's file, the environment or the editor; the last one set wins."""
    trusted = True
    for layer in trusted_layers:
        value = layer.get("folderTrust")
        if isinstance(value, bool):
            trusted = value
    return trusted


def _project_layer(layer: Mapping[str, Any], source: str, root: Path, below: str, problems: list[str]) -> dict[str, Any]:
    """The project layer minus what it may not set; ``below`` is the approval mode it may only make stricter."""
    out = _copy(layer)
    for path, why in _FORBIDDEN.items():
        if _pop(out, path):
            problems.append(f"{source}: {'.'.join(path)} ignored: {why}")
    tools = out.get("tools")
    if isinstance(tools, dict) and "approvalMode" in tools:
        wanted = tools["approvalMode"]
        if not isinstance(wanted, str) or not _at_least_as_strict(wanted, below):
            del tools["approvalMode"]
            problems.append(
                f"{source}: tools.approvalMode {wanted!r} ignored: a project may only make approval stricter "
                f"than {below!r}; {_ELSEWHERE}"
            )
    context = out.get("context")
    if isinstance(context, dict) and isinstance(context.get("ruleExcludes"), list):
        inside = _inside_root_globs(context["ruleExcludes"], root)
        for pattern in context["ruleExcludes"]:
            if pattern not in inside:
                problems.append(
                    f"{source}: context.ruleExcludes entry {pattern!r} ignored: a project may only exclude "
                    f"its own rules (patterns under {root})"
                )
        context["ruleExcludes"] = inside
    return out


def _off_only(layer: dict[str, Any], source: str, below: list[Mapping[str, Any]], problems: list[str]) -> dict[str, Any]:
    """The project layer with every ``_OFF_ONLY`` switch it turns on (or sets to a non-boolean) removed."""
    for what, (paths, default) in _OFF_ONLY.items():
        for path in paths:
            found, value = get_path(layer, path)
            if not found or value is False:
                continue
            _pop(layer, path)
            if value is True and _value_below(below, paths, default) is True:
                continue  # already on in the user's layers: nothing changes, nothing to say
            problems.append(
                f"{source}: {'.'.join(path)} ignored: a project may switch {what} off, not on "
                f"(it runs the model in the background or shares memory); {_ELSEWHERE}"
            )
    return layer


def _value_below(layers: list[Mapping[str, Any]], paths: tuple[tuple[str, ...], ...], default: bool) -> Any:
    """What the trusted layers below say for one switch (the last layer setting any spelling wins; Qwen Code's name first in a layer)."""
    value: Any = default
    for layer in layers:
        for path in reversed(paths):
            found, got = get_path(layer, path)
            if found:
                value = got
                break
    return value


def _inside_root_globs(patterns: list[Any], root: Path) -> list[Any]:
    """The exclude globs that can only match files under ``root`` (absolute, prefixed by it, no ``..``)."""
    prefix = os.path.normpath(os.path.abspath(root)) + os.sep
    return [
        p for p in patterns
        if isinstance(p, str) and p.startswith(prefix) and ".." not in p.replace("\\", "/").split("/")
    ]


def _plain_context_filenames(layer: Mapping[str, Any], source: str, problems: list[str]) -> Mapping[str, Any]:
    context = layer.get("context")
    if not isinstance(context, Mapping):
        return layer
    raw = context.get("fileName")
    names = [raw] if isinstance(raw, str) else raw
    if not isinstance(names, list):
        return layer  # not a string or list: validation reports it
    bad = [n for n in names if isinstance(n, str) and n.strip() and not is_context_filename(n.strip())]
    if not bad:
        return layer
    for name in bad:
        problems.append(
            f"{source}: context.fileName entry {name!r} ignored: context files are plain file names ending in .md "
            "(letters, digits, '.', '_', '-'; like QWEN.md), never settings, credential or dot files"
        )
    kept = [n for n in names if n not in bad]
    out = _copy(layer)
    out["context"]["fileName"] = kept if isinstance(raw, list) else (kept[0] if kept else None)
    return out


def _copy(layer: Mapping[str, Any]) -> dict[str, Any]:
    """Copy the nested objects (the lists and leaves are replaced, never edited in place)."""
    return {k: _copy(v) if isinstance(v, Mapping) else v for k, v in layer.items()}


def _pop(tree: dict[str, Any], path: tuple[str, ...]) -> bool:
    node: Any = tree
    for part in path[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, dict) and path[-1] in node:
        del node[path[-1]]
        return True
    return False
