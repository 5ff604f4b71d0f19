"""Fixtures for the tool tests."""

from __future__ import annotations

import pytest

from tests.tools.support import RepoCache


@pytest.fixture(scope="session")
def repo_cache(tmp_path_factory: pytest.TempPathFactory) -> RepoCache:
    """Committed git repositories, built once per distinct content and copied per test."""
    return RepoCache(tmp_path_factory.mktemp("repo-templates"))
