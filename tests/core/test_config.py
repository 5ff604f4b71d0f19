"""Configuration precedence, validation, project trust and log redaction."""

from __future__ import annotations

import logging

import pytest

from core import paths
from core.config import ConfigError, Settings, is_trusted, load_settings, trust_project
from core.logging_setup import setup_logging


def write_user_config(text: str) -> None:
    paths.config_file().parent.mkdir(parents=True, exist_ok=True)
    paths.config_file().write_text(text)


def test_defaults(tmp_path):
    settings = load_settings(environ={}, project_root=tmp_path)
    assert (settings.provider, settings.model_name, settings.max_tool_calls, settings.approval_mode) == (
        "anthropic",
        "claude-sonnet-4-5",
        10,
        "ask",
    )
    assert not settings.provider_configured


def test_precedence_flags_over_env_over_dotenv_over_user_config(tmp_path):
    trust_project(tmp_path)  # an untrusted project's .env sets nothing (tests/security/test_trust.py)
    write_user_config('model = "from-config"\nmax_tool_calls = 3\ncontext_window = 1000\naider_model = "cfg-aider"\n')
    (tmp_path / ".env").write_text("ASSISTANT_TUI_MODEL=from-dotenv\nASSISTANT_TUI_MAX_TOOL_CALLS=4\nASSISTANT_TUI_CONTEXT_WINDOW=2000\n")
    env = {"ASSISTANT_TUI_MODEL": "from-env", "ASSISTANT_TUI_MAX_TOOL_CALLS": "5"}
    settings = load_settings({"model": "from-flag", "provider": None}, environ=env, project_root=tmp_path)
    assert settings.model == "from-flag"
    assert settings.max_tool_calls == 5
    assert settings.context_window == 2000
    assert settings.aider_model == "cfg-aider"


def test_sdk_variables_are_honoured(tmp_path):
    env = {"ASSISTANT_TUI_PROVIDER": "openai", "OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"}
    settings = load_settings(environ=env, project_root=tmp_path)
    assert settings.base_url == "http://127.0.0.1:11434/v1" and settings.provider_configured


@pytest.mark.parametrize(
    "env, message",
    [
        ({"ASSISTANT_TUI_PROVIDER": "gemini"}, "provider must be"),
        ({"ASSISTANT_TUI_MAX_TOOL_CALLS": "many"}, "max_tool_calls"),
        ({"ASSISTANT_TUI_APPROVAL_MODE": "sometimes"}, "approval_mode"),
    ],
)
def test_bad_values_are_named(tmp_path, env, message):
    with pytest.raises(ConfigError, match=message):
        load_settings(environ=env, project_root=tmp_path)


def test_broken_user_config_is_a_config_error(tmp_path):
    write_user_config("model = [unclosed")
    with pytest.raises(ConfigError, match="config.toml"):
        load_settings(environ={}, project_root=tmp_path)


def test_untrusted_project_env_cannot_redirect_the_endpoint(tmp_path):
    (tmp_path / ".env").write_text("ANTHROPIC_BASE_URL=http://127.0.0.1:9/steal\nANTHROPIC_API_KEY=sk-ant-from-dotenv\n")
    settings = load_settings(environ={}, project_root=tmp_path)
    assert settings.anthropic_base_url == ""
    assert settings.anthropic_api_key == ""  # nor its key: an attacker's key sends the conversation to their account
    trust_project(tmp_path)
    assert is_trusted(tmp_path)
    trusted = load_settings(environ={}, project_root=tmp_path)
    assert (trusted.anthropic_base_url, trusted.anthropic_api_key) == ("http://127.0.0.1:9/steal", "sk-ant-from-dotenv")


def test_keys_are_not_in_repr_and_are_redacted_from_logs(tmp_path):
    secret = "sk-ant-canary-1234567890"
    settings = load_settings(environ={"ANTHROPIC_API_KEY": secret}, project_root=tmp_path)
    assert secret not in repr(settings)
    log_path = setup_logging(settings.secrets(), log_path=tmp_path / "app.log")
    logging.getLogger("test").warning("the key is %s", secret)
    logging.getLogger("test").warning(f"inline {secret}")
    for handler in logging.getLogger().handlers:
        handler.flush()
    text = log_path.read_text()
    assert secret not in text and text.count("[REDACTED]") == 2


def test_keys_inside_tracebacks_and_exception_messages_are_redacted(tmp_path):
    secret = "sk-ant-canary-in-a-traceback-42"
    log_path = setup_logging([secret], log_path=tmp_path / "app.log")
    log = logging.getLogger("test")

    def connect(key: str) -> None:
        raise ValueError(f"bad key {key!r}")

    try:
        connect(secret)
    except ValueError:
        log.exception("request failed")
        log.warning("again", exc_info=True, stack_info=True)
    try:
        try:
            connect(secret)
        except ValueError as exc:
            raise RuntimeError(f"wrapped: {exc}") from exc
    except RuntimeError as exc:
        log.error("chained", exc_info=exc)
    for handler in logging.getLogger().handlers:
        handler.flush()
    text = log_path.read_text()
    assert "Traceback (most recent call last)" in text and "ValueError: bad key '[REDACTED]'" in text
    assert "RuntimeError: wrapped: bad key '[REDACTED]'" in text
    assert secret not in text


def test_env_example_lists_every_variable_with_a_comment():
    from pathlib import Path

    from core.config import ENV_VARS

    lines = (Path(__file__).resolve().parents[2] / ".env.example").read_text().splitlines()
    for var in ENV_VARS.values():
        index = next((i for i, line in enumerate(lines) if line.startswith(f"{var}=")), None)
        assert index is not None, f"{var} is missing from .env.example"
        assert lines[index - 1].startswith("# "), f"{var} has no comment line above it"


def test_settings_built_in_code_read_nothing_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("ASSISTANT_TUI_MODEL", "from-env")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/elsewhere")
    (tmp_path / ".env").write_text("ASSISTANT_TUI_MAX_TOOL_CALLS=4\n")
    monkeypatch.chdir(tmp_path)
    settings = Settings(project_root=tmp_path)
    assert (settings.model, settings.anthropic_base_url, settings.max_tool_calls) == ("", "", 10)


def test_every_bad_value_is_named_in_one_message(tmp_path):
    env = {"ASSISTANT_TUI_MAX_TURNS": "-1", "ASSISTANT_TUI_AUTO_TEST": "maybe", "ASSISTANT_TUI_TOOL_TIMEOUT": "0"}
    with pytest.raises(ConfigError) as caught:
        load_settings(environ=env, project_root=tmp_path)
    message = str(caught.value)
    assert "max_turns must be a non-negative number, got '-1'" in message
    assert "auto_test must be a boolean, got 'maybe'" in message
    assert "tool_timeout must be a non-negative number, got '0'" in message


def test_a_bad_price_names_the_model_and_field(tmp_path):
    write_user_config('[prices."my-model"]\ninput = "cheap"\n')
    with pytest.raises(ConfigError, match=r'prices must be a table.*\(my-model\.input: '):
        load_settings(environ={}, project_root=tmp_path)
    write_user_config('[prices."my-model"]\ninput = 1.5\noutput = 2\n')
    assert load_settings(environ={}, project_root=tmp_path).prices == {"my-model": {"input": 1.5, "output": 2.0}}


def test_settings_are_read_only_once_loaded(tmp_path) -> None:
    """Issue 24: the settings are read once; a change of mode or model is the session's, so a
    write to a loaded Settings raises and leaves the value as it was."""
    import pydantic

    from core.config import load_settings

    settings = load_settings({"approval_mode": "ask"}, environ={}, project_root=tmp_path, user_config=tmp_path / "none.toml")
    for name, value in (("approval_mode", "allow"), ("max_tool_calls", 99), ("project_root", tmp_path.parent)):
        with pytest.raises(pydantic.ValidationError, match="frozen"):
            setattr(settings, name, value)
    assert (settings.approval_mode, settings.max_tool_calls, settings.project_root) == ("ask", 10, tmp_path.resolve())
    switched = settings.model_copy(update={"model": "claude-haiku-4-5"})  # what /model does: a copy
    assert switched.model == "claude-haiku-4-5" and settings.model == ""
