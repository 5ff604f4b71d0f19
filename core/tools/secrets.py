"""Moved to :mod:`core.secrets` (the bottom floor every room may use); kept for the importers not yet moved."""

from core.secrets import (  # noqa: F401
    SEARCH_EXCLUDE_GLOBS,
    SECRET_DIRS,
    contains_private_key,
    env_file_values,
    is_secret_name,
    is_secret_path,
    looks_like_private_key,
    mask_git_config,
    redact,
    scrubbed_env,
    stat_has_private_key,
    withhold_secret_lines,
)
