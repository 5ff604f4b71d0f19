"""Each model's real window: the table, a local server's report, the setting (issue 27)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

import pytest

from core.compaction.probe import probe_window
from core.config import Settings, load_settings
from core.compat import PassthroughHandler  # the engine's, with the SPEC's handle_query
from core.models import limits_for, resolve_window
from core.providers.openai import OpenAICompatibleProvider

# What each server answers, in the shape its documentation gives (core/compaction/probe.py names the sources).
SERVERS: dict[str, dict[tuple[str, str], Any]] = {
    "vllm": {("GET", "/v1/models"): {"object": "list", "data": [{"id": "qwen2.5-coder-7b", "object": "model", "max_model_len": 24576}]}},
    "ollama": {
        ("GET", "/v1/models"): {"object": "list", "data": [{"id": "llama3.1:8b", "object": "model"}]},
        ("POST", "/api/show"): {"parameters": "num_ctx                        8192\nstop \"<|eot_id|>\"", "model_info": {"llama.context_length": 131072}},
    },
    "llama.cpp": {("GET", "/props"): {"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1}},
    "lmstudio": {("GET", "/api/v0/models/qwen3-8b"): {"id": "qwen3-8b", "state": "loaded", "max_context_length": 32768, "loaded_context_length": 12000}},
    "silent": {},
}
EXPECTED = {
    "vllm": ("qwen2.5-coder-7b", (24576, "vLLM /v1/models max_model_len")),
    "ollama": ("llama3.1:8b", (8192, "Ollama /api/show num_ctx")),
    "llama.cpp": ("any", (4096, "llama.cpp /props n_ctx")),
    "lmstudio": ("qwen3-8b", (12000, "LM Studio loaded_context_length")),
    "silent": ("any", None),
}


@pytest.fixture
def window_server(request: pytest.FixtureRequest) -> Iterator[tuple[str, list[str]]]:
    routes = SERVERS[request.param]
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _answer(self, method: str) -> None:
            asked.append(f"{method} {self.path}")
            if method == "POST":
                self.rfile.read(int(self.headers.get("content-length") or 0))
            body = routes.get((method, self.path))
            data = json.dumps(body if body is not None else {"error": "not found"}).encode()
            self.send_response(200 if body is not None else 404)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._answer("GET")

        def do_POST(self) -> None:
            self._answer("POST")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", asked
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("window_server", list(SERVERS), indirect=True)
def test_each_local_server_reports_its_window(window_server: tuple[str, list[str]], request: pytest.FixtureRequest) -> None:
    url, asked = window_server
    model, expected = EXPECTED[request.node.callspec.params["window_server"]]
    assert probe_window(url, model) == expected
    assert asked, "the server was never asked"


def test_public_endpoints_are_not_asked() -> None:
    def refuse(url: str, body: Any = None) -> Any:
        raise AssertionError(f"asked {url}")

    assert probe_window("https://api.openai.com/v1", "gpt-4o", fetch=refuse) is None


@pytest.mark.parametrize(
    ("model", "window", "output"),
    [
        ("claude-sonnet-4-5-20250929", 200_000, 64_000),
        ("claude-3-5-haiku-latest", 200_000, 8_192),
        ("gpt-4o-mini", 128_000, 16_384),
        ("gpt-4o-2024-08-06", 128_000, 16_384),
        ("gpt-4.1", 1_047_576, 32_768),
        ("openrouter/google/gemini-2.5-pro", 1_048_576, 65_536),
        ("deepseek-chat", 131_072, 8_192),
        ("qwen2.5-coder:7b", 32_768, 8_192),
        ("meta-llama/Llama-3.1-8B-Instruct", 131_072, None),
        ("llama3:8b", 8_192, None),
        ("mistral-large-latest", 131_072, None),
    ],
)
def test_the_table_knows_the_common_models(model: str, window: int, output: int | None) -> None:
    limits = limits_for(model)
    assert limits is not None and (limits.window, limits.output) == (window, output)


def test_an_unknown_model_is_not_guessed() -> None:
    assert limits_for("my-finetune") is None
    assert limits_for("gpt-4oops") is None  # a prefix must end at a separator


def test_the_setting_wins_then_the_server_then_the_table(tmp_path: Path) -> None:
    given = load_settings({"context_window": 16000}, environ={}, project_root=tmp_path, user_config=tmp_path / "none.toml")
    default = load_settings({}, environ={}, project_root=tmp_path, user_config=tmp_path / "none.toml")
    assert resolve_window(given, "gpt-4o", (8192, "Ollama")).source == "setting"
    assert resolve_window(default, "gpt-4o", (8192, "Ollama")).tokens == 8192
    assert resolve_window(default, "gpt-4o").tokens == 128_000
    assumed = resolve_window(default, "my-finetune")
    assert (assumed.tokens, assumed.source) == (200_000, "assumed")


@pytest.mark.parametrize("window_server", ["vllm"], indirect=True)
async def test_the_handler_asks_once_and_the_meter_uses_it(window_server: tuple[str, list[str]], tmp_path: Path) -> None:
    url, asked = window_server
    handler = PassthroughHandler(None, None, OpenAICompatibleProvider("qwen2.5-coder-7b", base_url=url, api_key="k"), Settings(project_root=tmp_path))
    assert handler.get_resource_metrics()["context_window"] == 32_768  # the table's, before the server is asked
    await handler.compactor.ensure_window()
    await handler.compactor.ensure_window()
    metrics = handler.get_resource_metrics()
    assert (metrics["context_window"], metrics["context_window_source"]) == (24_576, "server")
    assert asked == ["GET /v1/models"]


async def test_the_output_limit_caps_what_a_request_asks_for(fake_llm: Any, tmp_path: Path) -> None:
    from core.providers.anthropic import ClaudeProvider
    from tests.fake_llm import Reply

    provider = ClaudeProvider("claude-3-haiku-20240307", base_url=fake_llm.anthropic_url, api_key="k", max_retries=0)
    handler = PassthroughHandler(None, None, provider, Settings(project_root=tmp_path, max_retries=0))
    fake_llm.script(Reply(text="ok"))
    assert (await handler.handle_query("hi"))["content"] == "ok"
    assert fake_llm.requests[0].body["max_tokens"] == 4_096  # the default 8,192 is refused by this model


def test_a_server_that_does_not_answer_is_asked_once() -> None:
    asked: list[str] = []

    def slow(url: str, body: Any = None) -> Any:
        asked.append(url)
        raise TimeoutError("timed out")

    assert probe_window("http://10.0.0.9:8000/v1", "some-model", fetch=slow) is None
    assert len(asked) == 1


def test_a_gateway_listing_context_length() -> None:
    listing = {"data": [{"id": "meta-llama/llama-3.1-70b-instruct", "context_length": 131072}]}
    found = probe_window("https://openrouter.ai/api/v1", "meta-llama/llama-3.1-70b-instruct", fetch=lambda url, body=None: listing)
    assert found == (131072, "/v1/models context_length")
