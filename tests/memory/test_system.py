"""MemorySystem: lexical relevance, pinned files, input shapes, aider-context ranking, picker search."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.memory.system import MemorySystem
from core.memory.types import AssociativeMatchResult, ContextGenerationInput

PROJECT = {
    "src/auth.py": "def login(user, password):\n    pass\n\nclass SessionToken:\n    pass\n",
    "src/billing/invoice.py": "def create_invoice(order):\n    pass\n",
    "src/billing/tax_rules.py": "RATE = 0.2\n\ndef vat_for(country):\n    pass\n",
    "src/ui/UserProfileCard.tsx": "export function UserProfileCard() {}\nexport const avatarSize = 3\n",
    "docs/guide.md": "# Guide\n",
    "tests/test_auth.py": "def test_login():\n    pass\n",
    "calc.py": "def add(a, b):\n    return a + b\n",
    "server/handlers.go": "package server\n\nfunc HandleWebhook() {}\n",
}


@pytest.fixture
def memory(make_tree) -> MemorySystem:
    root = make_tree(PROJECT, git_tracked=list(PROJECT))
    return MemorySystem(root)


def names(result: AssociativeMatchResult) -> list[str]:
    return [Path(p).name for p, _ in result.matches]


def test_auth_query_finds_auth_py_first(memory: MemorySystem) -> None:
    result = memory.get_relevant_context_for({"taskText": "Find all *.py files about 'auth'", "inheritedContext": ""})
    assert names(result)[0] == "auth.py"
    assert "test_auth.py" in names(result)
    assert all(Path(p).is_absolute() and Path(p).exists() for p, _ in result.matches)
    assert all(0.0 < r <= 1.0 for _, r in result.matches)
    assert [r for _, r in result.matches] == sorted((r for _, r in result.matches), reverse=True)
    assert "auth.py" in result.context


def test_symbols_are_matched(memory: MemorySystem) -> None:
    assert names(memory.get_relevant_context_for({"taskText": "where do we create_invoice?"}))[0] == "invoice.py"
    assert names(memory.get_relevant_context_for("fix the webhook handler"))[0] == "handlers.go"
    assert names(memory.get_relevant_context_for("the vat computation is wrong"))[0] == "tax_rules.py"


def test_camel_case_and_directories(memory: MemorySystem) -> None:
    assert names(memory.get_relevant_context_for("profile card avatar"))[0] == "UserProfileCard.tsx"
    top = names(memory.get_relevant_context_for("billing"))
    assert set(top[:2]) == {"invoice.py", "tax_rules.py"}


def test_exact_file_name_mention_wins(memory: MemorySystem) -> None:
    result = memory.get_relevant_context_for("please add type hints to calc.py and mention auth")
    assert result.matches[0] == (str(memory.project_root / "calc.py"), 1.0)


def test_unrelated_query_returns_no_matches(memory: MemorySystem) -> None:
    result = memory.get_relevant_context_for({"taskText": "what is the weather like on mars", "inheritedContext": ""})
    assert result.matches == [] and result.context
    assert memory.get_relevant_context_for({"taskText": "", "inheritedContext": ""}).matches == []


def test_pinned_files_always_come_first(memory: MemorySystem) -> None:
    guide = str(memory.project_root / "docs/guide.md")
    memory.pinned = [guide, "calc.py"]
    result = memory.get_relevant_context_for({"taskText": "auth", "inheritedContext": ""})
    assert result.matches[:2] == [(guide, 1.0), (str(memory.project_root / "calc.py"), 1.0)]
    assert names(result)[2] == "auth.py"
    assert len({p for p, _ in result.matches}) == len(result.matches)
    override = memory.get_relevant_context_for("auth", pinned=[])
    assert names(override)[0] == "auth.py"


def test_context_generation_input(memory: MemorySystem) -> None:
    request = ContextGenerationInput(
        template_description="Edit code with aider",
        inputs={"prompt": "rename the invoice creator", "file_context": ["src/auth.py"], "verbose": True},
        context_relevance={"file_context": False},
        inherited_context="",
        previous_outputs=["earlier we looked at billing"],
    )
    found = names(memory.get_relevant_context_for(request))
    assert found[0] == "invoice.py" and "auth.py" not in found[:1]


def test_instruction_and_conversation_ranking_for_aider(memory: MemorySystem) -> None:
    conversation = [
        {"role": "user", "content": "Let's look at tests/test_auth.py and calc.py today"},
        {"role": "assistant", "content": "Sure, I read them."},
    ]
    files = [p for p, _ in memory.weighted_query("add a docstring to every function", conversation, limit=5)]
    assert set(files[:2]) == {str(memory.project_root / "tests/test_auth.py"), str(memory.project_root / "calc.py")}
    # The instruction weighs more than older conversation.
    files = [p for p, _ in memory.weighted_query("change the invoice creation", conversation, limit=5)]
    assert Path(files[0]).name == "invoice.py"
    ranked = memory.weighted_query("billing tax", [])
    assert Path(ranked[0][0]).name == "tax_rules.py" and 0 < ranked[0][1] <= 1


def test_index_is_built_in_the_background_and_refreshes(memory: MemorySystem) -> None:
    memory.start_indexing()
    assert set(memory.ensure_index().paths) == set(PROJECT)
    assert [m.path for m in memory.search_files("uprofcard")] == ["src/ui/UserProfileCard.tsx"]
    (memory.project_root / "src/payments.py").write_text("def refund():\n    pass\n")
    added, removed = memory.refresh()
    assert added == ["src/payments.py"] and removed == []
    assert names(memory.get_relevant_context_for("issue a refund"))[0] == "payments.py"
    assert memory.search_files("paym")[0].path == "src/payments.py"


def test_works_outside_git(make_tree) -> None:
    root = make_tree({".gitignore": "secret/\n", "app/auth.py": "def login(): pass\n", "secret/auth_keys.py": ""})
    memory = MemorySystem(root)
    assert names(memory.get_relevant_context_for("auth")) == ["auth.py"]
