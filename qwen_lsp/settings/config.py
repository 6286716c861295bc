"""One settings model, filled from the layers Qwen Code 0.24.4 reads, plus the editor (README.md, "Editor settings").

Order, lowest first: defaults < the system defaults file < ``~/.qwen/settings.json``
< ``<project>/.qwen/settings.json`` < the system settings file < environment <
the LSP client (``initializationOptions`` / ``workspace/configuration``). The
four files and their order are 0.24.4's (``settings.ts``, ``mergeSettings``;
the system files are ``/etc/qwen-code/settings.json`` and ``system-defaults.json``
beside it, or ``QWEN_CODE_SYSTEM_SETTINGS_PATH`` / ``QWEN_CODE_SYSTEM_DEFAULTS_PATH``).

One exception, also 0.24.4's (``modelConfigUtils.ts``, ``resolveCliGenerationConfig``):
``model.name`` from any settings file wins over ``OPENAI_MODEL``/``QWEN_MODEL``;
the environment names the model only when no file does. The editor's
``qwen.model.name`` stands where the CLI's ``--model`` flag does, above both.

Every leaf remembers which layer set it so ``qwen-lsp doctor`` can say where
a value came from (:attr:`LoadedSettings.layer_names`). A bad file or a bad
value is reported and skipped — the layer's other keys and all other layers
still apply — because a typo in one settings file must never stop the server
from starting.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from ..text.json_depth import deeper_than, loads_pruned
from ..files.reading import read_bytes
from ..files.paths import global_qwen_dir
from .spelling import canonical_keys
from .aliases import fold_cli_keys
from .trust import is_context_filename, screen_layers

log = logging.getLogger(__name__)

DASHSCOPE_BASE_URL = "https://dashscope.aliyuncs.com/compatible-mode/v1"
MAX_SETTINGS_DEPTH = 64
"""A settings file nested deeper is skipped whole (real ones nest four or five levels)."""


class _Section(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="ignore", frozen=True)


class TimeoutSettings(_Section):
    connect: float = Field(10.0, gt=0, description="Seconds to open the TCP/TLS connection.")
    first_byte: float = Field(120.0, gt=0, alias="firstByte", description="Seconds to wait for the first byte of an answer.")
    stall: float = Field(60.0, gt=0, description="Seconds without any data before a stream counts as stalled.")


class SamplingParams(_Section):
    """Qwen Code 0.24.4's ``model.generationConfig.samplingParams``: sent with every model request.

    0.24.4 (``ContentGenerationPipeline.buildGenerateContentConfig``) spreads
    the whole object into the request body; here only these keys, each a
    bounded number, are read (docs/interop.md says why), and they are sent
    under the same names. ``max_tokens`` also caps each turn's output budget
    (``llm/sampling.py``).
    """

    temperature: float | None = Field(None, ge=0, le=2, description="Sampling temperature sent with every request.")
    top_p: float | None = Field(None, gt=0, le=1, description="Nucleus sampling share sent with every request.")
    top_k: int | None = Field(None, ge=1, le=1_000_000, description="Top-k sampling, for endpoints that accept it.")
    max_tokens: int | None = Field(None, ge=1, le=10_000_000, description="Output tokens per request (default: the model's output limit).")
    presence_penalty: float | None = Field(None, ge=-2, le=2)
    frequency_penalty: float | None = Field(None, ge=-2, le=2)
    repetition_penalty: float | None = Field(None, gt=0, le=10)

    def body(self) -> dict[str, float | int]:
        """The keys that are set, as request-body fields (``max_tokens`` left to the output budget)."""
        return {k: v for k, v in self.model_dump(exclude={"max_tokens"}).items() if v is not None}


class GenerationConfigSettings(_Section):
    """Qwen Code's ``model.generationConfig``: the window and the sampling parameters are read here."""

    sampling_params: SamplingParams = Field(SamplingParams(), alias="samplingParams", description="Qwen Code's sampling parameters, sent with every request.")
    context_window_size: int | None = Field(
        None, alias="contextWindowSize", gt=0, description="Context window in tokens (Qwen Code's key; default: its per-model table)."
    )


class ModelSettings(_Section):
    name: str | None = Field(
        None, description="Model id sent to the endpoint; in a settings file it wins over OPENAI_MODEL, as in Qwen Code 0.24.4."
    )
    base_url: str | None = Field(None, alias="baseUrl", description="OpenAI-compatible base URL, usually ending in /v1.")
    api_key: SecretStr | None = Field(None, alias="apiKey", description="Bearer key; never written to files by us.")
    context_window: int | None = Field(
        None, alias="contextWindow", gt=0, description="Alias of generationConfig.contextWindowSize (default: Qwen Code 0.24.4's per-model table)."
    )
    generation_config: GenerationConfigSettings = Field(GenerationConfigSettings(), alias="generationConfig")
    max_output_tokens: int | None = Field(None, alias="maxOutputTokens", gt=0)
    timeouts: TimeoutSettings = TimeoutSettings()


class CompressionSettings(_Section):
    threshold: float | None = Field(
        None, ge=0, le=1, description="Alias of context.autoCompactThreshold: share of the window that triggers auto-compression (default 0.85)."
    )


class SkillReviewSettings(_Section):
    """Skill review after busy sessions (docs/skills.md); applies from the next turn, no restart."""

    enabled: bool = Field(
        False, description="After 20 tool calls in a chat, a background run may propose a reusable skill (Qwen Code's memory.enableAutoSkill; off by default)."
    )


class SkillsSettings(_Section):
    enabled: bool = True
    review: SkillReviewSettings = SkillReviewSettings()


class MemorySettings(_Section):
    """Auto memory (docs/memory.md); each switch applies from the next turn, no restart."""

    enabled: bool = Field(True, description="Managed memory: recall, the memory block, extraction and dream (Qwen Code's enableManagedAutoMemory).")
    auto_extract: bool = Field(True, alias="autoExtract", description="After each turn, a background run saves what is worth remembering.")
    auto_dream: bool = Field(True, alias="autoDream", description="Now and then (24 h and 5 sessions apart), consolidate project memory.")
    # Qwen Code 0.24.4's names, folded onto ours by fold_cli_keys (the CLI's spelling wins within one file).
    enable_managed_auto_memory: bool | None = Field(None, alias="enableManagedAutoMemory", description="Qwen Code's name for memory.enabled.")
    enable_managed_auto_dream: bool | None = Field(None, alias="enableManagedAutoDream", description="Qwen Code's name for memory.autoDream.")
    enable_auto_skill: bool | None = Field(None, alias="enableAutoSkill", description="Qwen Code's name for skills.review.enabled.")
    enable_team_memory: bool = Field(
        False,
        alias="enableTeamMemory",
        description="Use the repository's committed .qwen/team-memory (trusted folders only); QWEN_CODE_MEMORY_TEAM=1/0 overrides.",
    )
    enable_team_memory_sync: bool = Field(
        False,
        alias="enableTeamMemorySync",
        description="With team memory on: at start, fast-forward-pull, commit and push .qwen/team-memory (Qwen Code 0.24.4); "
        "QWEN_CODE_MEMORY_TEAM_SYNC=1/0 overrides. Only the user's settings may switch it on.",
    )


class ShellSettings(_Section):
    enabled: bool = Field(
        True, description="Offer run_shell_command to the chat (default on, as Qwen Code 0.24.4; read-only commands run, the rest ask)."
    )


class ToolsSettings(_Section):
    approval_mode: Literal["default", "plan", "auto-edit", "auto", "yolo"] = Field("default", alias="approvalMode")
    shell: ShellSettings = ShellSettings()
    core: list[str] = Field([], description="Qwen Code's tools.core: when not empty, only the tools named here are offered.")
    exclude: list[str] = Field([], description="Qwen Code's tools.exclude: tools never offered (e.g. run_shell_command).")


class ClearContextOnIdleSettings(_Section):
    """Microcompaction (Qwen Code's ``context.clearContextOnIdle``); -1 disables a trigger."""

    tool_results_threshold_minutes: float = Field(60, alias="toolResultsThresholdMinutes", description="Idle minutes before old tool results are cleared.")
    tool_results_num_to_keep: int = Field(5, alias="toolResultsNumToKeep", description="Recent results kept per category (at least 1).")
    tool_results_total_chars_threshold: int | None = Field(
        None, alias="toolResultsTotalCharsThreshold", description="Characters of tool results that trigger clearing (default 500000)."
    )


class ContextFileSettings(_Section):
    file_name: str | list[str] | None = Field(None, alias="fileName", description="Context file name(s); default QWEN.md, AGENTS.md.")
    import_format: Literal["tree", "flat"] = Field("tree", alias="importFormat")
    rule_excludes: list[str] = Field([], alias="ruleExcludes", description="Globs (absolute paths) of .qwen/rules files to skip.")
    clear_context_on_idle: ClearContextOnIdleSettings = Field(ClearContextOnIdleSettings(), alias="clearContextOnIdle")
    auto_compact_threshold: float | None = Field(
        None, alias="autoCompactThreshold", gt=0, le=1, description="Qwen Code's name for compression.threshold (default 0.85)."
    )

    def filenames(self) -> tuple[str, ...]:
        """Trimmed names that pass settings.trust.is_context_filename, or Qwen Code's default list."""
        raw = [self.file_name] if isinstance(self.file_name, str) else (self.file_name or [])
        names = tuple(n.strip() for n in raw if n and n.strip() and is_context_filename(n.strip()))
        return names or ("QWEN.md", "AGENTS.md")


class FollowupSettings(_Section):
    enabled: bool = Field(True, description="After a turn, suggest what the user may want to ask next (Qwen Code's ui.enableFollowupSuggestions).")
    speculate: bool = Field(
        False, description="Run an accepted-to-be suggestion in the background first (Qwen Code's ui.enableSpeculation; off by default)."
    )


class EditorContextSettings(_Section):
    """Whether each turn tells the model what the editor shows (``docs/editor-context.md``)."""

    enabled: bool = Field(True, description="Tell the model the open files, the focused file, its cursor and selection.")


class UISettings(_Section):
    """Qwen Code 0.24.4's ``ui`` keys that mean something here, folded onto ``followup`` by fold_cli_keys."""

    enable_followup_suggestions: bool | None = Field(None, alias="enableFollowupSuggestions", description="Qwen Code's name for followup.enabled.")
    enable_speculation: bool | None = Field(None, alias="enableSpeculation", description="Qwen Code's name for followup.speculate.")


class GeneralSettings(_Section):
    output_language: str = Field("auto", alias="outputLanguage", description="Qwen Code's reply language; 'auto' follows the user.")


class Settings(_Section):
    general: GeneralSettings = GeneralSettings()
    model: ModelSettings = ModelSettings()
    compression: CompressionSettings = CompressionSettings()
    skills: SkillsSettings = SkillsSettings()
    memory: MemorySettings = MemorySettings()
    tools: ToolsSettings = ToolsSettings()
    context: ContextFileSettings = ContextFileSettings()
    followup: FollowupSettings = FollowupSettings()
    editor_context: EditorContextSettings = Field(EditorContextSettings(), alias="editorContext")
    ui: UISettings = UISettings()
    folder_trust: bool = Field(True, alias="folderTrust")

    def api_key(self) -> str | None:
        return self.model.api_key.get_secret_value() if self.model.api_key else None


@dataclass
class LoadedSettings:
    """Settings in effect plus where each leaf came from and what was rejected."""

    settings: Settings
    sources: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    layer_names: dict[str, str] = field(default_factory=dict)
    """Source (a file path, ``environment``, ``editor``) → its layer: ``system defaults``, ``user``, ``project``, ``system``, ..."""
    env_vars: dict[str, str] = field(default_factory=dict)
    """Dotted key → the environment variable that set it (``model.name`` → ``OPENAI_MODEL``)."""

    def origin(self, key: str) -> str:
        """Where ``key``'s value came from, layer first: ``user: ~/.qwen/settings.json``, ``environment: OPENAI_MODEL``, ``default``."""
        source = self.sources.get(key)
        if source is None:
            return "default"
        layer = self.layer_names.get(source, source)
        if layer == "environment":
            var = self.env_vars.get(key)
            return f"environment: {var}" if var else layer
        return layer if layer == source else f"{layer}: {source}"


def strip_json_comments(text: str) -> str:
    """Remove ``//`` and ``/* */`` comments outside strings (Qwen Code accepts them)."""
    out: list[str] = []
    i, n = 0, len(text)
    in_str = False
    while i < n:
        ch = text[i]
        if in_str:
            out.append(ch)
            if ch == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if ch == '"':
                in_str = False
            i += 1
        elif ch == '"':
            in_str = True
            out.append(ch)
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def read_settings_file(path: Path, problems: list[str]) -> dict[str, Any]:
    """Our keys from a Qwen Code ``settings.json``; {} (and a problem) when unreadable."""
    try:
        raw = read_bytes(path).decode("utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{path}: cannot read ({exc}); its settings were skipped")
        return {}
    try:
        data = json.loads(strip_json_comments(raw)) if raw.strip() else {}
    except json.JSONDecodeError as exc:
        problems.append(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}; its settings were skipped")
        return {}
    except RecursionError:
        data = None
    if data is None or deeper_than(data, MAX_SETTINGS_DEPTH):
        # A repository's file, so any shape: the merge and validation recurse, and must never see this.
        problems.append(f"{path}: nested deeper than {MAX_SETTINGS_DEPTH} levels; its settings were skipped")
        return {}
    if not isinstance(data, dict):
        problems.append(f"{path}: expected a JSON object; its settings were skipped")
        return {}
    return _from_qwen_settings(canonical_keys(Settings, data, str(path), problems))


def _bounded_editor_layer(client: Mapping[str, Any], problems: list[str]) -> Mapping[str, Any]:
    """The editor's settings with what nests past ``MAX_SETTINGS_DEPTH`` left out, each top-level key so cut reported.

    A settings file that deep is skipped whole (it is one file among several), but
    the editor's object is all its settings: the rest of it still applies.
    """
    if not deeper_than(client, MAX_SETTINGS_DEPTH):
        return client
    cut = [key for key, value in client.items() if deeper_than(value, MAX_SETTINGS_DEPTH - 1)]
    pruned, _ = loads_pruned(json.dumps(client, default=str), MAX_SETTINGS_DEPTH)
    for key in cut:
        problems.append(f"editor: {key} nests deeper than {MAX_SETTINGS_DEPTH} levels; what lies deeper was ignored, the rest applies")
    return pruned


def _from_qwen_settings(data: dict[str, Any]) -> dict[str, Any]:
    """Map a Qwen Code settings.json onto our shape.

    Our own keys pass through; Qwen Code's ``security.auth.{baseUrl,apiKey}``
    fill the model section when ours are absent, so one file serves both tools.
    """
    out = {k: v for k, v in data.items() if k in Settings.model_fields or k in _aliases(Settings)}
    auth = ((data.get("security") or {}).get("auth") or {}) if isinstance(data.get("security"), dict) else {}
    model = dict(out.get("model") or {}) if isinstance(out.get("model"), dict) else {}
    if isinstance(auth, dict):
        if auth.get("baseUrl") and "baseUrl" not in model:
            model["baseUrl"] = auth["baseUrl"]
        if auth.get("apiKey") and "apiKey" not in model:
            model["apiKey"] = auth["apiKey"]
    if model:
        out["model"] = model
    return out


def _aliases(model: type[BaseModel]) -> set[str]:
    return {f.alias for f in model.model_fields.values() if f.alias}


def env_layer(env: Mapping[str, str], env_vars: dict[str, str] | None = None) -> dict[str, Any]:
    """Environment variables with Qwen Code's names; ``env_vars`` collects which variable set which key.

    The model comes from ``OPENAI_MODEL``, else ``QWEN_MODEL`` (0.24.4's
    ``AUTH_ENV_MAPPINGS.openai``); blank values count as unset, as its ``isValuePresent``.
    """
    model: dict[str, Any] = {}
    names = env_vars if env_vars is not None else {}

    def take(key: str, *variables: str) -> None:
        for var in variables:
            if env.get(var, "").strip():
                model[key] = env[var]
                names[f"model.{key}"] = var
                return

    take("name", "OPENAI_MODEL", "QWEN_MODEL")
    take("baseUrl", "OPENAI_BASE_URL")
    take("apiKey", "OPENAI_API_KEY")
    if "apiKey" not in model and env.get("DASHSCOPE_API_KEY", "").strip():
        take("apiKey", "DASHSCOPE_API_KEY")
        if "baseUrl" not in model:
            model["baseUrl"] = DASHSCOPE_BASE_URL
            names["model.baseUrl"] = "DASHSCOPE_API_KEY"
    return {"model": model} if model else {}


def system_settings_path(env: Mapping[str, str]) -> Path:
    """0.24.4's ``getSystemSettingsPath``: ``QWEN_CODE_SYSTEM_SETTINGS_PATH`` or the platform's fixed place."""
    if env.get("QWEN_CODE_SYSTEM_SETTINGS_PATH"):
        return Path(env["QWEN_CODE_SYSTEM_SETTINGS_PATH"])
    if sys.platform == "darwin":
        return Path("/Library/Application Support/QwenCode/settings.json")
    if sys.platform == "win32":
        return Path("C:\\ProgramData\\qwen-code\\settings.json")
    return Path("/etc/qwen-code/settings.json")


def system_defaults_path(env: Mapping[str, str]) -> Path:
    """0.24.4's ``getSystemDefaultsPath``: ``QWEN_CODE_SYSTEM_DEFAULTS_PATH`` or ``system-defaults.json`` beside the system file."""
    if env.get("QWEN_CODE_SYSTEM_DEFAULTS_PATH"):
        return Path(env["QWEN_CODE_SYSTEM_DEFAULTS_PATH"])
    return system_settings_path(env).parent / "system-defaults.json"


def _names_a_model(layer: Mapping[str, Any]) -> bool:
    model = layer.get("model")
    name = model.get("name") if isinstance(model, Mapping) else None
    return isinstance(name, str) and bool(name.strip())


def _without_model_name(layer: Mapping[str, Any]) -> dict[str, Any]:
    model = layer.get("model")
    if not isinstance(model, Mapping) or "name" not in model:
        return dict(layer)
    rest = {k: v for k, v in model.items() if k != "name"}
    out = {k: v for k, v in layer.items() if k != "model"}
    if rest:
        out["model"] = rest
    return out


def _merge(into: dict[str, Any], layer: Mapping[str, Any], source: str, sources: dict[str, str], prefix: str = "") -> None:
    for key, value in layer.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and isinstance(into.get(key), dict):
            _merge(into[key], value, source, sources, dotted + ".")
        elif isinstance(value, Mapping):
            into[key] = {}
            _merge(into[key], value, source, sources, dotted + ".")
        else:
            into[key] = value
            sources[dotted] = source


def overlay(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """``top`` merged over ``base`` key by key (nested objects merged, leaves replaced)."""
    out = {k: dict(v) if isinstance(v, Mapping) else v for k, v in base.items()}
    _merge(out, top, "", {})
    return out


def _user_key(tree: dict[str, Any], loc: tuple[Any, ...]) -> tuple[str, ...]:
    """The part of an error location that exists in ``tree``.

    A union's error locations run past the user's key (``context.fileName.str``),
    so the walk stops where the user's data does.
    """
    path: list[str] = []
    node: Any = tree
    for part in loc:
        if not isinstance(node, dict) or part not in node:
            break
        node = node[part]
        path.append(part)
    return tuple(path)


def _drop(tree: dict[str, Any], loc: tuple[Any, ...]) -> bool:
    path = _user_key(tree, loc)
    if not path:
        return False
    node: Any = tree
    for part in path[:-1]:
        node = node[part]
    del node[path[-1]]
    return True


def _validated_layer(source: str, layer: Mapping[str, Any], problems: list[str]) -> dict[str, Any]:
    """The layer without its invalid values, each reported by layer and key.

    Validating each layer on its own (not the merged result) means a bad
    value — an editor's ``model.name: ["x"]`` — lets the same key from the
    layer below show through instead of resetting it to the default.
    """
    tree = overlay({}, layer)
    for _ in range(50):
        try:
            Settings.model_validate(tree)
            return tree
        except ValidationError as exc:
            bad: dict[tuple[str, ...], str] = {}
            for err in exc.errors():
                bad.setdefault(_user_key(tree, tuple(err["loc"])), err["msg"])
            bad.pop((), None)
            if not bad:
                break
            for key, msg in bad.items():
                _drop(tree, key)
                problems.append(f"{'.'.join(key)}: {msg} (from {source}); ignored, the layer below applies")
    problems.append(f"{source}: its settings could not be validated and were skipped")
    return {}


def load_settings(
    project_root: Path | None,
    client: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> LoadedSettings:
    """Merge all layers and validate once; an invalid leaf is reported and falls back to its default."""
    env = os.environ if env is None else env
    problems: list[str] = []
    sources: dict[str, str] = {}
    merged: dict[str, Any] = {}
    layers: list[tuple[str, Mapping[str, Any]]] = []
    names: dict[str, str] = {}
    env_vars: dict[str, str] = {}
    files = [("system defaults", system_defaults_path(env)), ("user", global_qwen_dir() / "settings.json")]
    project_file = None if project_root is None else Path(project_root) / ".qwen" / "settings.json"
    if project_file is not None:
        files.append(("project", project_file))
    files.append(("system", system_settings_path(env)))
    for layer_name, path in files:
        names.setdefault(str(path), layer_name)
        layers.append((str(path), read_settings_file(path, problems)))
    layers.append(("environment", env_layer(env, env_vars)))
    names["environment"] = "environment"
    if client:
        layers.append(("editor", canonical_keys(Settings, _bounded_editor_layer(client, problems), "editor", problems)))
        names["editor"] = "editor"
    # A project cannot trust itself: see settings_trust for what it may not set.
    project_source = None if project_file is None else str(project_file)
    screened = screen_layers(layers, project_source, project_root, problems)
    file_names_model = any(_names_a_model(layer) for source, layer in screened if source not in ("environment", "editor"))
    for source, layer in screened:
        if source == "environment" and file_names_model:
            layer = _without_model_name(layer)  # a settings file's model.name wins, as in 0.24.4
        _merge(merged, _validated_layer(source, fold_cli_keys(layer), problems), source, sources)
    for _ in range(50):
        try:
            settings = Settings.model_validate(merged)
            break
        except ValidationError as exc:
            dropped = False
            for err in exc.errors():
                loc = tuple(err["loc"])
                dotted = ".".join(str(p) for p in loc)
                origin = sources.pop(dotted, "settings")
                problems.append(f"{dotted}: {err['msg']} (from {origin}); using the default")
                dropped = _drop(merged, loc) or dropped
            if not dropped:
                settings = Settings()
                break
    else:  # pragma: no cover - 50 distinct bad leaves
        settings = Settings()
    for problem in problems:
        log.warning("settings: %s", problem)
    return LoadedSettings(settings=settings, sources=sources, problems=problems, layer_names=names, env_vars=env_vars)
