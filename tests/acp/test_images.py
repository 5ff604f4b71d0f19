"""Images in an ACP prompt: advertised for models that take them, sent in each SDK's format, refused otherwise."""

from __future__ import annotations

import asyncio
import base64
import json

import pytest
from acp import RequestError, text_block
from acp.schema import ImageContentBlock

from core.sessions import SessionStore, load_session
from tests.acp.conftest import running_agent
from tests.fake_llm import Reply

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 3000).decode()


def image(data: str = PNG, mime: str = "image/png") -> ImageContentBlock:
    return ImageContentBlock(type="image", mime_type=mime, data=data)


def capabilities(messages: list[dict]) -> dict:
    """The ``promptCapabilities`` of the agent's answer to ``initialize``, as the wire had it."""
    [init] = [m for m in messages if "agentCapabilities" in (m.get("result") or {})]
    return init["result"]["agentCapabilities"]["promptCapabilities"]


class Seen:
    def __init__(self) -> None:
        self.messages: list[dict] = []

    def __call__(self, event: object) -> None:
        self.messages.append(event.message)


async def _prompt(conn, session_id: str, blocks: list) -> object:
    return await asyncio.wait_for(conn.prompt(session_id=session_id, prompt=blocks), 60)


async def test_a_claude_model_gets_the_image_as_an_anthropic_block_and_load_shows_its_label(fake_llm, project):
    seen = Seen()
    fake_llm.script(Reply(text="A black square."))
    async with running_agent(project, observers=[seen]) as (conn, _, _):
        assert capabilities(seen.messages)["image"] is True
        session = await conn.new_session(cwd=str(project))
        response = await _prompt(conn, session.session_id, [text_block("what is this?"), image()])
    assert response.stop_reason == "end_turn"
    blocks = fake_llm.requests[0].messages[-1]["content"]
    [sent] = [b for b in blocks if b.get("type") == "image"]
    assert sent == {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    # the transcript holds the label, not the bytes; a load replays the label
    latest = SessionStore().latest(project)
    assert PNG not in latest.path.read_text()
    [user] = [m for m in load_session(latest).messages if m["role"] == "user"]
    assert user["content"] == "what is this? [image: image/png, 3 KB]"
    async with running_agent(project) as (conn, client, _):
        await conn.load_session(cwd=str(project), session_id=session.session_id)
    assert client.text("user_message_chunk") == "what is this? [image: image/png, 3 KB]"


async def test_a_gpt_4o_model_gets_an_image_url_part(fake_llm, project):
    fake_llm.script(Reply(text="A square."))
    async with running_agent(project, ASSISTANT_TUI_PROVIDER="openai", ASSISTANT_TUI_MODEL="gpt-4o") as (conn, _, _):
        session = await conn.new_session(cwd=str(project))
        await _prompt(conn, session.session_id, [text_block("what is this?"), image(mime="image/webp")])
    content = fake_llm.requests[0].messages[-1]["content"]
    assert {"type": "image_url", "image_url": {"url": f"data:image/webp;base64,{PNG}"}} in content


async def test_a_model_without_images_is_not_advertised_and_refuses_one(fake_llm, project):
    seen = Seen()
    async with running_agent(project, observers=[seen], ASSISTANT_TUI_PROVIDER="openai", ASSISTANT_TUI_MODEL="fake-model") as (conn, _, _):
        assert capabilities(seen.messages)["image"] is False
        session = await conn.new_session(cwd=str(project))
        with pytest.raises(RequestError) as refused:
            await _prompt(conn, session.session_id, [text_block("what is this?"), image()])
    assert "openai:fake-model does not take images" in json.dumps(refused.value.data)
    assert fake_llm.requests == []


@pytest.mark.parametrize(
    ("block", "said"),
    [(image(mime="image/tiff"), "image/tiff are not supported; send PNG, JPEG, GIF or WebP"),
     (image(base64.b64encode(b"x" * (5 * 1024 * 1024 + 1)).decode()), "the limit is 5120 KB (5 MB)")],
)
async def test_bad_images_are_refused_with_what_is_wrong(fake_llm, project, block, said):
    async with running_agent(project) as (conn, _, _):
        session = await conn.new_session(cwd=str(project))
        with pytest.raises(RequestError) as refused:
            await _prompt(conn, session.session_id, [text_block("look"), block])
    assert said in json.dumps(refused.value.data)
    assert fake_llm.requests == []


@pytest.mark.parametrize(
    ("provider", "model", "takes"),
    [("anthropic", "claude-sonnet-4-5", True), ("openai", "gpt-4o-mini", True), ("openai", "gpt-4.1-nano", True), ("openai", "gpt-5", True),
     ("openai", "openai/gpt-4o", True), ("openai", "gpt-3.5-turbo", False), ("openai", "gpt-4", False), ("openai", "llama3", False),
     ("openai", "gpt-40", False), ("openai", "gpt-50", False), ("anthropic", "fake-model", False)],
)
def test_which_models_take_images(provider, model, takes):
    from core.images import takes_images

    assert takes_images(provider, model) is takes
