"""Asking an OpenAI-compatible server how large its model's context window is.

Local servers run a model with a window of their own choosing (Ollama's ``num_ctx``,
llama.cpp's ``--ctx-size``, vLLM's ``--max-model-len``, LM Studio's loaded context
length), often far below the model's trained length, so the table cannot know it.
Each server reports it at its own address; they are tried in turn, with a short
timeout, once per model (blocking: call it in a thread, never on the event loop).

SOURCES: Ollama ``POST /api/show`` (github.com/ollama/ollama docs/api.md "Show Model
Information": ``model_info["<arch>.context_length"]`` and ``parameters`` holding
``num_ctx`` when the Modelfile sets it); vLLM ``GET /v1/models`` (``data[].max_model_len``,
vllm/entrypoints/openai/protocol.py ``ModelCard``); llama.cpp ``GET /props``
(``default_generation_settings.n_ctx``, tools/server/README.md); LM Studio
``GET /api/v0/models/{model}`` (``loaded_context_length``, ``max_context_length``;
lmstudio.ai/docs/developer/rest/endpoints); gateways that list ``context_length`` at
``/v1/models`` (OpenRouter: openrouter.ai/docs/api-reference/list-available-models; Together).
A server that does not answer within :data:`TIMEOUT` is not asked further.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable

log = logging.getLogger(__name__)

TIMEOUT = 2.0
"""Seconds each probe may take (a local server answers in milliseconds)."""
PUBLIC_HOSTS = ("api.openai.com",)
"""Endpoints that never report a window (their models are in the table)."""

Fetch = Callable[[str, dict[str, Any] | None], Any]


def _fetch(url: str, body: dict[str, Any] | None = None) -> Any:
    """GET (or POST ``body`` as JSON) ``url`` and decode its JSON; raises on any failure."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json"} if data else {})
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:  # noqa: S310 - the configured endpoint
        return json.loads(response.read(1_000_000) or b"null")


def _positive(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def _ollama(root: str, api: str, model: str, fetch: Fetch) -> tuple[int, str] | None:
    shown = fetch(f"{root}/api/show", {"model": model})
    if not isinstance(shown, dict):
        return None
    for line in str(shown.get("parameters") or "").splitlines():
        key, _, value = line.strip().partition(" ")
        if key == "num_ctx" and value.strip().isdigit():
            return int(value.strip()), "Ollama /api/show num_ctx"
    info = shown.get("model_info") if isinstance(shown.get("model_info"), dict) else {}
    for key, value in info.items():
        if key.endswith(".context_length") and (tokens := _positive(value)):
            return tokens, "Ollama /api/show context_length"
    return None


def _vllm(root: str, api: str, model: str, fetch: Fetch) -> tuple[int, str] | None:
    listed = fetch(f"{api}/models", None)
    for card in (listed or {}).get("data") or [] if isinstance(listed, dict) else []:
        if not isinstance(card, dict) or card.get("id") != model:
            continue
        if tokens := _positive(card.get("max_model_len")):
            return tokens, "vLLM /v1/models max_model_len"
        if tokens := _positive(card.get("context_length")):  # OpenRouter and Together list it so
            return tokens, "/v1/models context_length"
    return None


def _llama_cpp(root: str, api: str, model: str, fetch: Fetch) -> tuple[int, str] | None:
    props = fetch(f"{root}/props", None)
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings") if isinstance(props.get("default_generation_settings"), dict) else {}
    tokens = _positive(settings.get("n_ctx")) or _positive(props.get("n_ctx"))
    return (tokens, "llama.cpp /props n_ctx") if tokens else None


def _lm_studio(root: str, api: str, model: str, fetch: Fetch) -> tuple[int, str] | None:
    card = fetch(f"{root}/api/v0/models/{urllib.parse.quote(model, safe='')}", None)
    if not isinstance(card, dict):
        return None
    if tokens := _positive(card.get("loaded_context_length")):
        return tokens, "LM Studio loaded_context_length"
    if tokens := _positive(card.get("max_context_length")):
        return tokens, "LM Studio max_context_length"
    return None


PROBES = (_vllm, _ollama, _llama_cpp, _lm_studio)


def probe_window(base_url: str, model: str, fetch: Fetch = _fetch) -> tuple[int, str] | None:
    """``(tokens, which report)`` from the server at ``base_url`` for ``model``, or None when none reports one.

    ``base_url`` is the OpenAI-compatible endpoint (``http://localhost:11434/v1``); the
    servers' own APIs live at its root.
    """
    if not base_url or not model:
        return None
    parsed = urllib.parse.urlsplit(base_url)
    if parsed.scheme not in ("http", "https") or parsed.hostname in PUBLIC_HOSTS:
        return None
    api = base_url.rstrip("/")
    root = api[: -len("/v1")] if api.endswith("/v1") else api
    for probe in PROBES:
        try:
            found = probe(root, api, model, fetch)
        except TimeoutError as exc:
            log.info("window probe %s at %s timed out; not asking further: %s", probe.__name__, root, exc)
            return None
        except (OSError, ValueError, urllib.error.URLError) as exc:
            if isinstance(getattr(exc, "reason", None), TimeoutError):
                log.info("window probe %s at %s timed out; not asking further", probe.__name__, root)
                return None
            log.debug("window probe %s at %s: %s", probe.__name__, root, exc)
            continue
        if found is not None:
            log.info("the server at %s reports a window of %d tokens for %s (%s)", root, found[0], model, found[1])
            return found
    return None
