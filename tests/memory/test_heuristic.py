"""The heuristic scorer's details (``recall.ts`` v2): tokens, NFKC, CJK bigrams, weights, order, bounds."""

from __future__ import annotations

from qwen_lsp.memory.heuristic import MAX_QUERY_CHARS, rank, score, tokenize

from .recall_helpers import doc


def test_ascii_tokens_are_runs_of_three_or_more_deduplicated() -> None:
    assert tokenize("Go to the DB, db again; x1 abc123 the") == ["the", "again", "abc123"]
    assert tokenize("a-b_c ok") == []


def test_nfkc_and_lower_case() -> None:
    assert tokenize("ＡＰＩ ｔｅｓｔ") == ["api", "test"]
    assert tokenize("ﬁle") == ["file"]  # the ligature decomposes under NFKC


def test_cjk_runs_become_code_point_bigrams() -> None:
    assert tokenize("数据库") == ["数据", "据库"]
    assert tokenize("部") == []
    assert tokenize("日本語のテスト") == ["日本", "本語", "語の", "のテ", "テス", "スト"]
    assert tokenize("한국어 배") == ["한국", "국어"]
    # Script extensions: the ideographic full stop and the prolonged sound mark join the run.
    assert tokenize("测试。数据") == ["测试", "试。", "。数", "数据"]
    assert tokenize("サーバー") == ["サー", "ーバ", "バー"]
    # A run outside the BMP is split by code point, not by UTF-16 unit.
    assert tokenize("𠀀𠀁") == ["𠀀𠀁"]


def test_ascii_and_cjk_split_where_the_script_changes() -> None:
    assert tokenize("API文档") == ["api", "文档"]


def test_accented_letters_split_ascii_runs() -> None:
    assert tokenize("café naïve résumé") == ["caf", "sum"]


def test_the_token_cap_keeps_the_first_32_and_the_latest_32() -> None:
    words = [f"w{i:03d}" for i in range(100)]
    tokens = tokenize(" ".join(words))
    assert tokens == words[:32] + words[-32:]
    # Seeing a tail token again makes it the newest, so it survives the next eviction.
    query = " ".join(words[:40]) + " w032 " + " ".join(words[40:71])
    kept = tokenize(query)
    assert len(kept) == 64 and "w032" in kept and "w033" not in kept and kept[-1] == "w070"


def test_a_huge_query_is_tokenized_from_its_head_and_tail() -> None:
    query = "alpha " + "x " * MAX_QUERY_CHARS + "omega"
    assert tokenize(query) == ["alpha", "omega"]


def test_field_weights_title_4_description_3_body_1() -> None:
    tokens = ["widget"]
    assert score(tokens, doc("a", title="widget", type="user")) == 4
    assert score(tokens, doc("a", title="x", description="widget", type="user")) == 3
    assert score(tokens, doc("a", title="x", body="a widget", type="user")) == 1
    assert score(tokens, doc("a", title="widget", description="widget", body="widget", type="user")) == 8


def test_matching_is_by_substring_after_normalisation() -> None:
    assert score(["owner"], doc("a", title="Ownership", type="user")) == 4
    assert score(["api"], doc("a", title="ＡＰＩ gateway", type="user")) == 4


def test_type_keywords_add_at_most_two_and_only_with_a_lexical_hit() -> None:
    tokens = ["rule", "style", "avoid", "tabs"]
    assert score(tokens, doc("a", type="feedback", title="x", body="")) == 0
    hit = doc("a", type="feedback", title="tabs")
    assert score(tokens, hit) == 4 + 2
    assert score(["tabs", "rule"], hit) == 4 + 1
    assert score(["tabs", "rule"], doc("a", type="user", title="tabs")) == 4


def test_body_is_scored_on_its_first_1200_units_only() -> None:
    body = "x" * 1199 + " needle"
    assert score(["needle"], doc("a", body=body, type="user")) == 0
    assert score(["needle"], doc("a", body="needle " + "x" * 5000, type="user")) == 1


def test_empty_topic_marker_is_no_body() -> None:
    assert score(["entries"], doc("a", body="  _No entries yet._ ", type="user")) == 0


def test_order_is_score_then_newest_then_input_order() -> None:
    old = doc("old", title="deploy", age_days=10)
    new = doc("new", title="deploy", age_days=1)
    first = doc("first", title="deploy", age_days=1)
    best = doc("best", title="deploy", description="deploy", age_days=30)
    assert [d.title for d in rank("deploy", [old, new, first, best], 5)] == ["deploy"] * 4
    assert [d.path.stem for d in rank("deploy", [old, new, first, best], 5)] == ["best", "new", "first", "old"]


def test_project_shadows_user_on_a_full_tie() -> None:
    project = doc("role", type="user", scope="project", title="role notes")
    user = doc("role", type="user", scope="user", title="role notes", root="/mem/user")
    assert rank("role notes", [project, user], 1) == [project]


def test_no_hit_no_result_and_the_limit() -> None:
    docs = [doc(f"d{i}", title=f"deploy {i}", body="something") for i in range(8)]
    assert rank("kubernetes", docs, 5) == []
    assert rank("", docs, 5) == []
    assert len(rank("deploy", docs, 5)) == 5
    assert rank("deploy", docs, 0) == []


def test_cjk_query_against_cjk_fields() -> None:
    zh = doc("zh", title="数据库迁移计划", description="订单表拆分")
    other = doc("en", title="database migration")
    assert rank("数据库", [other, zh], 5) == [zh]
    assert rank("database", [other, zh], 5) == [other]
