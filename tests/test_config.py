"""Settings precedence (README.md, "Editor settings"): defaults < user file < project file < environment < editor."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qwen_lsp.settings.config import DASHSCOPE_BASE_URL, load_settings, strip_json_comments


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    home = tmp_path / "home"
    (home / ".qwen").mkdir(parents=True)
    project = tmp_path / "proj"
    (project / ".qwen").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("QWEN_HOME", raising=False)
    return home, project


def write(path: Path, data: object) -> None:
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)


def test_defaults_without_any_layer(layout):
    _, project = layout
    loaded = load_settings(project, None, env={})
    s = loaded.settings
    assert s.model.name is None and s.model.context_window is None
    assert s.skills.enabled and s.tools.approval_mode == "default"
    assert loaded.sources == {} and loaded.problems == []


def test_each_layer_overrides_the_one_below_and_sources_are_named(layout):
    home, project = layout
    write(home / ".qwen" / "settings.json", {"model": {"name": "user-m", "contextWindow": 1000, "baseUrl": "http://user/v1"}, "skills": {"enabled": False}})
    write(project / ".qwen" / "settings.json", {"model": {"name": "proj-m", "contextWindow": 2000}})
    env = {"OPENAI_MODEL": "env-m", "OPENAI_API_KEY": "k"}
    loaded = load_settings(project, {"model": {"contextWindow": 4000}}, env=env)
    s = loaded.settings
    assert s.model.name == "proj-m"  # a settings file's model.name beats OPENAI_MODEL, as in Qwen Code 0.24.4
    assert s.model.context_window == 4000
    assert s.model.base_url == "http://user/v1"
    assert s.skills.enabled is False
    assert s.api_key() == "k"
    assert loaded.origin("model.name") == f"project: {project / '.qwen' / 'settings.json'}"
    assert loaded.sources["model.contextWindow"] == "editor"
    assert loaded.sources["model.baseUrl"].endswith("home/.qwen/settings.json")
    assert loaded.sources["skills.enabled"].endswith("home/.qwen/settings.json")


def settings_file(path, data) -> str:
    write(path, data)
    return str(path)


def test_model_name_follows_qwen_code_0_24_4_across_all_six_layers(layout, tmp_path):
    """0.24.4 (``resolveCliGenerationConfig``): a settings file's model.name, then OPENAI_MODEL, then QWEN_MODEL;
    the files merge system defaults < user < project < system. The editor stands where ``--model`` does."""
    home, project = layout
    system = tmp_path / "etc" / "settings.json"
    defaults = tmp_path / "etc" / "defaults.json"
    system.parent.mkdir()
    env = {"QWEN_CODE_SYSTEM_SETTINGS_PATH": str(system), "QWEN_CODE_SYSTEM_DEFAULTS_PATH": str(defaults)}

    def name(extra_env=None, client=None):
        loaded = load_settings(project, client, env={**env, **(extra_env or {})})
        return loaded.settings.model.name, loaded.origin("model.name")

    assert name() == (None, "default")
    assert name({"QWEN_MODEL": "q"}) == ("q", "environment: QWEN_MODEL")
    assert name({"QWEN_MODEL": "q", "OPENAI_MODEL": "o"}) == ("o", "environment: OPENAI_MODEL")
    assert name({"OPENAI_MODEL": "  ", "QWEN_MODEL": "q"}) == ("q", "environment: QWEN_MODEL")
    d = settings_file(defaults, {"model": {"name": "from-defaults"}})
    assert name({"OPENAI_MODEL": "o"}) == ("from-defaults", f"system defaults: {d}")
    u = settings_file(home / ".qwen" / "settings.json", {"model": {"name": "from-user"}})
    assert name({"OPENAI_MODEL": "o"}) == ("from-user", f"user: {u}")
    p = settings_file(project / ".qwen" / "settings.json", {"model": {"name": "from-project"}})
    assert name({"OPENAI_MODEL": "o"}) == ("from-project", f"project: {p}")
    sy = settings_file(system, {"model": {"name": "from-system"}})
    assert name({"OPENAI_MODEL": "o"}) == ("from-system", f"system: {sy}")
    assert name({"OPENAI_MODEL": "o"}, {"model": {"name": "from-editor"}}) == ("from-editor", "editor")
    # A blank or invalid name in a file does not count: the environment's applies.
    for f in (defaults, home / ".qwen" / "settings.json", project / ".qwen" / "settings.json", system):
        write(f, {"model": {"name": "   "}} if f != system else {"model": {"name": ["x"]}})
    assert name({"OPENAI_MODEL": "o"}) == ("o", "environment: OPENAI_MODEL")


def test_an_untrusted_projects_model_name_does_not_displace_the_environments(layout):
    home, project = layout
    write(home / ".qwen" / "settings.json", {"folderTrust": False})
    write(project / ".qwen" / "settings.json", {"model": {"name": "proj-m"}})
    loaded = load_settings(project, None, env={"OPENAI_MODEL": "env-m"})
    assert loaded.settings.model.name == "env-m"


def test_sampling_params_are_read_bounded_and_reported(layout):
    home, project = layout
    write(home / ".qwen" / "settings.json", {"model": {"generationConfig": {"samplingParams": {"temperature": 0.3, "top_p": 0.9, "max_tokens": 1234}}}})
    loaded = load_settings(project, None, env={})
    sp = loaded.settings.model.generation_config.sampling_params
    assert (sp.temperature, sp.top_p, sp.max_tokens) == (0.3, 0.9, 1234)
    assert sp.body() == {"temperature": 0.3, "top_p": 0.9}
    write(project / ".qwen" / "settings.json", {"model": {"generationConfig": {"samplingParams": {"temperature": 99, "topP": 0.5, "stream": False}}}})
    loaded = load_settings(project, None, env={})
    sp = loaded.settings.model.generation_config.sampling_params
    assert sp.temperature == 0.3 and sp.top_p == 0.9  # out of range / misspelt: the user's values stay
    assert "stream" not in sp.body()
    assert any("temperature" in p for p in loaded.problems) and any("topP" in p for p in loaded.problems)


def test_editor_beats_environment(layout):
    _, project = layout
    loaded = load_settings(project, {"model": {"name": "editor-m"}}, env={"OPENAI_MODEL": "env-m"})
    assert loaded.settings.model.name == "editor-m"


def test_dashscope_key_sets_its_compatible_base_url(layout):
    _, project = layout
    s = load_settings(project, None, env={"DASHSCOPE_API_KEY": "dk"}).settings
    assert s.api_key() == "dk" and s.model.base_url == DASHSCOPE_BASE_URL
    s = load_settings(project, None, env={"DASHSCOPE_API_KEY": "dk", "OPENAI_API_KEY": "ok", "OPENAI_BASE_URL": "http://x/v1"}).settings
    assert s.api_key() == "ok" and s.model.base_url == "http://x/v1"


def test_broken_settings_file_is_reported_and_other_layers_apply(layout):
    home, project = layout
    write(home / ".qwen" / "settings.json", "{ not json")
    write(project / ".qwen" / "settings.json", {"model": {"name": "proj-m"}})
    loaded = load_settings(project, None, env={})
    assert loaded.settings.model.name == "proj-m"
    assert any("invalid JSON" in p and "settings.json" in p for p in loaded.problems)


def test_bad_value_falls_back_to_default_and_names_key_and_source(layout):
    _, project = layout
    loaded = load_settings(project, {"model": {"contextWindow": "huge"}, "tools": {"approvalMode": "sometimes"}}, env={})
    assert loaded.settings.model.context_window is None
    assert loaded.settings.tools.approval_mode == "default"
    assert any(p.startswith("model.contextWindow") and "(from editor)" in p for p in loaded.problems)
    assert any(p.startswith("tools.approvalMode") for p in loaded.problems)


def test_qwen_code_auth_section_and_comments_are_understood(layout):
    home, project = layout
    write(
        home / ".qwen" / "settings.json",
        '{\n  // Qwen Code allows comments\n  "security": {"auth": {"baseUrl": "http://auth/v1", "apiKey": "sk-x"}},\n  /* block */ "model": {"name": "qwen3-coder"}\n}',
    )
    s = load_settings(project, None, env={}).settings
    assert s.model.base_url == "http://auth/v1" and s.api_key() == "sk-x" and s.model.name == "qwen3-coder"


def test_qwen_home_moves_the_user_settings_file(layout, tmp_path, monkeypatch):
    _, project = layout
    alt = tmp_path / "alt" / ".qwen"
    alt.mkdir(parents=True)
    write(alt / "settings.json", {"model": {"name": "from-qwen-home"}})
    monkeypatch.setenv("QWEN_HOME", str(alt))
    assert load_settings(project, None, env={}).settings.model.name == "from-qwen-home"


def test_strip_json_comments_keeps_strings_intact():
    text = '{"url": "http://a//b", "s": "/* not a comment */"} // tail'
    assert json.loads(strip_json_comments(text)) == {"url": "http://a//b", "s": "/* not a comment */"}


def test_context_file_names_are_trimmed_and_defaulted(layout):
    _, project = layout
    s = load_settings(project, {"context": {"fileName": ["  ", "RULES.md "]}}, env={}).settings
    assert s.context.filenames() == ("RULES.md",)
    s = load_settings(project, {"context": {"fileName": "   "}}, env={}).settings
    assert s.context.filenames() == ("QWEN.md", "AGENTS.md")


def test_qwen_code_general_and_context_keys_reach_the_context_core(layout):
    home, project = layout
    write(home / ".qwen" / "settings.json", {"general": {"outputLanguage": "Chinese"}, "context": {"ruleExcludes": ["**/draft-*.md"]}})
    from qwen_lsp.workspace import Workspace
    from qwen_lsp.llm.tokens import TokenCounter

    rules = project / ".qwen" / "rules"
    rules.mkdir(parents=True)
    (rules / "keep.md").write_text("Keep this rule.\n")
    (rules / "draft-x.md").write_text("Drafted rule.\n")
    engine = Workspace(project, counter=TokenCounter(), env={})
    prompt = engine.context.system_prompt()
    assert "Keep this rule." in prompt and "Drafted rule." not in prompt
    assert "Chinese" in (home / ".qwen" / "output-language.md").read_text()


def test_an_invalid_value_in_one_layer_lets_the_layer_below_show_through(layout):
    home, project = layout
    write(home / ".qwen" / "settings.json", {"model": {"name": "from-user-file", "timeouts": {"firstByte": 300}}})
    write(project / ".qwen" / "settings.json", {"context": {"fileName": "RULES.md"}})
    editor = {"model": {"name": ["x"], "timeouts": {"firstByte": -5}}, "context": {"fileName": [1, 2]}}
    loaded = load_settings(project, editor, env={})
    s = loaded.settings
    assert s.model.name == "from-user-file" and s.model.timeouts.first_byte == 300
    assert s.context.filenames() == ("RULES.md",)
    assert loaded.sources["model.name"] == str(home / ".qwen" / "settings.json")
    assert loaded.sources["context.fileName"] == str(project / ".qwen" / "settings.json")
    reported = {p.split(":", 1)[0] for p in loaded.problems}
    assert reported == {"model.name", "model.timeouts.firstByte", "context.fileName"}  # each once, with its key
    assert all("(from editor)" in p for p in loaded.problems)


# ------------------------------------------------- Qwen Code 0.24.4's setting names


def test_the_clis_keys_in_the_users_file_set_what_ours_would(layout):
    """With only ~/.qwen/settings.json written the CLI's way, every CLI key takes effect with its meaning."""
    home, project = layout
    write(
        home / ".qwen" / "settings.json",
        {
            "model": {"generationConfig": {"contextWindowSize": 500_000}},
            "context": {"autoCompactThreshold": 0.5},
            "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False, "enableAutoSkill": True, "enableTeamMemory": True},
            "ui": {"enableSpeculation": True, "enableFollowupSuggestions": False},
            "tools": {"approvalMode": "auto"},
        },
    )
    loaded = load_settings(project, None, env={})
    s = loaded.settings
    assert loaded.problems == []
    assert (s.model.context_window, s.compression.threshold) == (500_000, 0.5)
    assert (s.memory.enabled, s.memory.auto_dream, s.skills.review.enabled, s.memory.enable_team_memory) == (False, False, True, True)
    assert (s.followup.speculate, s.followup.enabled) == (True, False)
    assert s.tools.approval_mode == "auto"
    user_file = str(home / ".qwen" / "settings.json")
    assert loaded.sources["memory.enableManagedAutoMemory"] == user_file
    assert loaded.sources["memory.enabled"] == user_file


def test_defaults_that_cost_tokens_are_the_clis(layout):
    """Skill review (enableAutoSkill) and speculation (enableSpeculation) are off unless turned on, as in 0.24.4."""
    _, project = layout
    s = load_settings(project, None, env={}).settings
    assert s.skills.review.enabled is False and s.followup.speculate is False
    assert s.followup.enabled is True and s.memory.enabled is True and s.memory.auto_dream is True
    assert s.memory.enable_team_memory is False


def test_in_one_file_the_clis_spelling_wins_across_files_the_higher_layer(layout):
    home, project = layout
    write(home / ".qwen" / "settings.json", {"memory": {"enableManagedAutoDream": False, "autoDream": True}, "compression": {"threshold": 0.6}})
    write(project / ".qwen" / "settings.json", {"context": {"autoCompactThreshold": 0.9}})
    loaded = load_settings(project, {"compression": {"threshold": 0.4}}, env={})
    assert loaded.settings.memory.auto_dream is False
    assert loaded.settings.compression.threshold == 0.4
    assert loaded.sources["compression.threshold"] == "editor"


def test_an_out_of_range_auto_compact_threshold_is_reported_and_the_default_applies(layout):
    home, project = layout
    write(home / ".qwen" / "settings.json", {"context": {"autoCompactThreshold": 5}})
    loaded = load_settings(project, None, env={})
    assert loaded.settings.compression.threshold is None
    assert any(p.startswith("context.autoCompactThreshold") for p in loaded.problems)
