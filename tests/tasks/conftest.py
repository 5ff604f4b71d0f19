"""The task tests share the aider tests' git repository and settings fixtures."""

from tests.aider.conftest import aider_settings, git_repo  # noqa: F401
