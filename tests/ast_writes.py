"""What an AST statement writes: shared by the state-ownership scans of core/ and tui/."""

from __future__ import annotations

import ast


def written_targets(node: ast.AST) -> list[ast.AST]:
    """The targets an assignment, augmented or annotated assignment, or ``del`` writes ([] for anything else)."""
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return [node.target]
    if isinstance(node, ast.Delete):
        return list(node.targets)
    return []
