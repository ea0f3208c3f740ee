"""Action inputs: both env spellings, defaults, strict parsing, one aggregated error, masking."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from evolve_action.errors import ConfigError
from evolve_action.github import INPUT_DEFAULTS, read_inputs


def env(**inputs: str) -> dict[str, str]:
    return {f"INPUT_{k.upper()}": v for k, v in inputs.items()}


def test_defaults(tmp_path: Path) -> None:
    got = read_inputs({}, workspace=tmp_path)
    assert got.mode == "pr"
    assert got.tiers == ("checks", "triggers", "evals")
    assert got.commit is True and got.allow_fork_target is False
    assert got.comment == "always" and got.fail_on == "regression"
    assert got.runs is None and got.jobs is None and got.timeout is None
    assert got.working_directory == tmp_path.resolve() or got.working_directory == tmp_path
    assert got.models == () and got.skills == () and not got.all_skills
    assert got.commit_message == INPUT_DEFAULTS["commit_message"]
    assert got.github_token == ""


def test_runner_defaults_as_set_by_the_runner(tmp_path: Path) -> None:
    # The runner sets every declared input, with its default; an unexpanded expression never
    # arrives, but an empty value must mean "default".
    values = {k: ("" if v.startswith("${{") else v) for k, v in INPUT_DEFAULTS.items()}
    got = read_inputs(env(**values), workspace=tmp_path)
    assert got.tiers == ("checks", "triggers", "evals")


def test_hyphen_spelling_is_read(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    got = read_inputs(
        {"INPUT_WORKING-DIRECTORY": "sub", "INPUT_FAIL-ON": "never", "INPUT_MAX-TURNS": "7"},
        workspace=tmp_path,
    )
    assert got.working_directory == tmp_path / "sub"
    assert got.fail_on == "never" and got.max_turns == 7


def test_both_spellings_disagreeing_is_a_problem(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="set twice"):
        read_inputs({"INPUT_FAIL_ON": "never", "INPUT_FAIL-ON": "error"}, workspace=tmp_path)


def test_values_parsed(tmp_path: Path) -> None:
    got = read_inputs(
        env(
            mode="gate",
            models="anthropic/claude-sonnet-5, anthropic\nall",
            tiers="evals, checks",
            runs="5",
            jobs="2",
            timeout="300",
            judge_model="anthropic/claude-haiku-4",
            commit="False",
            comment="failures",
            comment_author="evolve-app[bot]",
            min_triggers_pass_rate="80%",
            min_evals_pass_rate="0.5",
            skills="plug/one,\ntwo",
            allow_fork_target="TRUE",
        ),
        workspace=tmp_path,
    )
    assert got.mode == "gate"
    assert got.models == ("anthropic/claude-sonnet-5", "anthropic", "all")
    assert got.tiers == ("checks", "evals")
    assert (got.runs, got.jobs, got.timeout) == (5, 2, 300)
    assert got.commit is False and got.allow_fork_target is True
    assert got.min_triggers_pass_rate == pytest.approx(0.8)
    assert got.min_evals_pass_rate == 0.5
    assert got.skills == ("plug/one", "two") and got.explicit_skills
    assert got.comment_author == "evolve-app[bot]"


def test_skills_all_and_tiers_all(tmp_path: Path) -> None:
    got = read_inputs(env(skills="all", tiers="all"), workspace=tmp_path)
    assert got.all_skills and got.skills == ()
    assert got.tiers == ("checks", "triggers", "evals")


def test_every_problem_reported_at_once(tmp_path: Path) -> None:
    bad = env(
        mode="deploy",
        runs="three",
        jobs="0",
        max_turns="-1",
        timeout="99999999",
        commit="yes",
        comment="sometimes",
        comment_author="::error::me",
        fail_on="always",
        min_triggers_pass_rate="80",
        min_evals_pass_rate="abc",
        tiers="checks,lint",
        models="anthropic/claude;rm -rf /",
        skills="../etc",
        working_directory="../outside",
        allow_fork_target="1",
        judge_model="bad model",
    )
    with pytest.raises(ConfigError) as caught:
        read_inputs(bad, workspace=tmp_path)
    text = caught.value.render()
    for name in (
        "mode:",
        "runs:",
        "jobs:",
        "max_turns:",
        "timeout:",
        "commit:",
        "comment:",
        "comment_author:",
        "fail_on:",
        "min_triggers_pass_rate:",
        "min_evals_pass_rate:",
        "tiers:",
        "models:",
        "skills:",
        "working_directory:",
        "allow_fork_target:",
        "judge_model:",
    ):
        assert f"  - {name}" in text, name
    assert text.startswith("17 action inputs are not usable")
    # Each line says what is allowed.
    assert "want one of pr, gate, run" in text
    assert "want true or false" in text
    assert "write 80% for a percentage" in text
    assert '"lint"' in text
    assert "hint:" in text


def test_huge_and_control_values_are_shortened_and_cleaned(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        read_inputs(env(mode="x" * 100_000 + "\x1b[31m\n::error::boom"), workspace=tmp_path)
    text = caught.value.message
    assert len(text) < 500
    assert "\x1b" not in text and "\n::error" not in text
    assert "100" in text  # the length is stated


def test_secrets_masked_and_never_shown(tmp_path: Path) -> None:
    log = io.StringIO()
    secret = "sk-ant-abc\ndef"
    with pytest.raises(ConfigError) as caught:
        read_inputs(
            env(anthropic_api_key=secret, github_token="ghs_tok"), workspace=tmp_path, log=log
        )
    assert "sk-ant" not in caught.value.render()
    assert "anthropic_api_key:" in caught.value.render()
    masks = log.getvalue().splitlines()
    assert "::add-mask::sk-ant-abc" in masks and "::add-mask::def" in masks
    assert "::add-mask::ghs_tok" in masks


def test_secrets_hidden_from_repr(tmp_path: Path) -> None:
    got = read_inputs(env(anthropic_api_key="sk-secret", github_token="ghs_x"), workspace=tmp_path)
    assert "sk-secret" not in repr(got) and "ghs_x" not in repr(got)
    assert got.secrets == ("sk-secret", "ghs_x")


def test_working_directory_symlink_escape(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "link").symlink_to(outside)
    with pytest.raises(ConfigError, match="outside the workspace"):
        read_inputs(env(working_directory="link"), workspace=ws)


def test_working_directory_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a directory"):
        read_inputs(env(working_directory="missing"), workspace=tmp_path)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("runs", "1e3"),
        ("runs", "٣"),
        ("jobs", "65"),
        ("min_evals_pass_rate", "101%"),
        ("min_evals_pass_rate", "NaN"),
        ("tiers", ","),
        ("skills", "all,one"),
        ("skills", "a/b/c"),
        ("commit_message", "x" * 10_001),
    ],
)
def test_rejected_values(tmp_path: Path, name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=f"  - {name}:"):
        read_inputs(env(**{name: value}), workspace=tmp_path)


def test_openai_key_is_a_secret_and_extra_harnesses_name_codex(tmp_path: Path) -> None:
    log = io.StringIO()
    got = read_inputs(
        env(openai_api_key="sk-oai", extra_harnesses="codex, codex"), workspace=tmp_path, log=log
    )
    assert got.openai_api_key == "sk-oai" and got.extra_harnesses == ("codex",)
    assert "::add-mask::sk-oai" in log.getvalue().splitlines()
    assert "sk-oai" not in repr(got) and "sk-oai" in got.secrets
    assert read_inputs({}, workspace=tmp_path).extra_harnesses == ()
    with pytest.raises(ConfigError) as caught:
        read_inputs(env(extra_harnesses="codex,gemini"), workspace=tmp_path)
    text = caught.value.render()
    assert 'extra_harnesses: "codex,gemini" names gemini: want codex' in text


def test_base_and_max_runs(tmp_path: Path) -> None:
    got = read_inputs({}, workspace=tmp_path)
    assert got.base is None and got.max_runs is None  # the config decides
    got = read_inputs(env(base="rerun", max_runs="12"), workspace=tmp_path)
    assert got.base == "rerun" and got.max_runs == 12
    with pytest.raises(ConfigError) as err:
        read_inputs(env(base="always", max_runs="0"), workspace=tmp_path)
    assert "base" in str(err.value) and "max_runs" in str(err.value)
