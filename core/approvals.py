"""Approvals: the one place that decides whether a tool call or a command may run.

An :class:`Approvals` holds the approval mode (``ask``, ``allow``, ``deny``), who
answers (the TUI's dialog, the ACP client; nobody in ``-p``) and what the user
allowed "for the session". Its state is private; it changes only through its
methods (:meth:`Approvals.set_mode`, :meth:`Approvals.set_approver`,
:meth:`Approvals.forget`, and an "always" answer inside :meth:`Approvals.decide`).

The tool loop (a tool whose spec ``requires_approval``, or whose ``approval_policy``
gives a verdict), the file-finding command runner (``core.tools.safe_exec``) and
``/task`` in read-only mode all ask :meth:`Approvals.decide` (or
:meth:`Approvals.confirm_typed`): the order of the rules lives here only.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Literal

from core.types import ApprovalRequest, Approver, Decision

log = logging.getLogger(__name__)

MODES = ("ask", "allow", "deny")

READ_ONLY_TOOLS = frozenset({"readFile", "executeFilePathCommand", "listTasks", "askUser"})
"""Tools that change nothing (executeFilePathCommand: an allowlist of readers, in a read-only sandbox)."""

DENY_MODE_REASON = ("the approval mode is read-only (approval_mode=deny): tools that change files or run "
                    "programs (aider, runCommand, runTests, MCP tools not marked read-only) are refused. Read and "
                    "search files instead, and tell the user what you would change.")


def changes_things(name: str, spec: dict[str, Any]) -> bool:
    """Whether a tool may change anything: every tool not known to be read-only (an allowlist)."""
    if name in READ_ONLY_TOOLS or spec.get("read_only") is True:
        return False
    mcp = spec.get("mcp")
    return not (isinstance(mcp, dict) and mcp.get("read_only") is True and not spec.get("requires_approval"))


@dataclass(frozen=True)
class Need:
    """What one call needs before it runs, as its tool says.

    Attributes:
        keys: What "always for this session" remembers for it (a tool name, a program key,
            command keys, ``editFile:calc.py``); empty when an answer is never remembered.
        project_key: What "always for the project" remembers (``editFile:*``): once allowed, it
            covers every call of the kind, whatever its keys; empty when not offered.
        changes: The call may change things: read-only mode refuses it whatever else holds.
        policy: The tool's own verdict: ``allow`` or ``deny`` settle it, ``ask`` leaves it to the rules.
        policy_reason: Why the tool's policy denies it.
        routine: Approval mode ``allow`` lets it run unasked (a network or unsandboxed run is not routine).
        read_only_reason: Why read-only mode refuses it (to the model).
        nobody_reason: Why it is refused when nobody can be asked (to the model).
        declined_reason: What the model is told when the user says no.
    """

    keys: tuple[str, ...] = ()
    project_key: str = ""
    changes: bool = True
    policy: Literal["allow", "deny", "ask"] = "ask"
    policy_reason: str = ""
    routine: bool = True
    read_only_reason: str = DENY_MODE_REASON
    nobody_reason: str = "nobody can approve this here (headless mode without --yes); tell the user what you wanted to do instead."
    declined_reason: str = "the user denied this tool call."


@dataclass(frozen=True)
class Ruling:
    """How a call's approval went.

    Attributes:
        decision: Allowed once, for the session, or denied.
        automatic: True when nobody was asked (the mode, the tool's policy or an earlier "always" decided).
        reason: Why it was denied ("" when allowed).
        via: What decided: ``read_only`` (the mode refused a change), ``policy``, ``mode``,
            ``session`` (an earlier "always"), ``nobody`` (no one to ask) or ``user``.
    """

    decision: Decision
    automatic: bool
    reason: str = ""
    via: str = "user"

    @property
    def allowed(self) -> bool:
        return self.decision.allowed


Prepare = Callable[[tuple[str, ...]], Awaitable[ApprovalRequest]]
"""Builds the question from the keys still to approve (called only when someone is asked)."""


class Approvals:
    """The approval mode, who answers, and what the user allowed for the session.

    Args:
        mode: ``ask`` (ask the approver), ``allow`` (``--yes``: routine calls run unasked)
            or ``deny`` (read-only: nothing that changes things runs).
        approver: Who answers; None refuses what would need an answer.
    """

    def __init__(self, mode: str = "ask", approver: Approver | None = None) -> None:
        self._mode = _checked(mode)
        self._approver = approver
        self._allowed: set[str] = set()

    # -- what callers read ------------------------------------------------------------
    @property
    def mode(self) -> str:
        """``ask``, ``allow`` or ``deny``."""
        return self._mode

    @property
    def allowed(self) -> frozenset[str]:
        """What the user allowed for the rest of the session (tool names, command keys, ``editFile:`` keys)."""
        return frozenset(self._allowed)

    @property
    def approver(self) -> Approver | None:
        """Who answers (None: nobody can be asked)."""
        return self._approver

    @property
    def can_ask(self) -> bool:
        """Whether someone can be asked."""
        return self._approver is not None

    # -- what changes them ----------------------------------------------------------------
    def set_mode(self, mode: str) -> None:
        """Switch the approval mode; it applies from the next call.

        Raises:
            ValueError: ``mode`` is not ``ask``, ``allow`` or ``deny``.
        """
        self._mode = _checked(mode)

    def set_approver(self, approver: Approver | None) -> None:
        """Who answers from now on (None: nobody)."""
        self._approver = approver

    def forget(self) -> None:
        """Forget every "always for the session" answer (a new or switched conversation)."""
        self._allowed.clear()

    # -- deciding ---------------------------------------------------------------------------
    async def ask(self, request: ApprovalRequest) -> Decision:
        """The approver's answer to ``request``; DENY when nobody can answer or the prompt broke."""
        if self._approver is None:
            return Decision.DENY
        try:
            return Decision(await self._approver(request))
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - a broken prompt must not run anything
            log.exception("approval callback failed; treating as deny")
            return Decision.DENY

    async def decide(self, need: Need, prepare: Prepare, *, ask: Approver | None = None) -> Ruling:
        """Whether a call may run: the rules, in their one order.

        1. read-only mode refuses a call that changes things;
        2. the tool's own policy (``allow``/``deny``) settles it;
        3. read-only mode refuses what still needs approval;
        4. mode ``allow`` runs a routine call unasked;
        5. an earlier "always" for every key, or "always for the project" for its kind, runs it;
        6. nobody to ask refuses it;
        7. else the user is asked (through ``ask``, e.g. a turn that reports the wait; this
           object's :meth:`ask` by default); "always" is remembered under the keys asked about,
           "always for the project" under the request's ``project_key`` (an answer the request
           did not offer counts as "once").
        """
        if self._mode == "deny" and need.changes:
            return Ruling(Decision.DENY, True, need.read_only_reason, via="read_only")
        if need.policy == "deny":
            return Ruling(Decision.DENY, True, need.policy_reason, via="policy")
        if need.policy == "allow":
            return Ruling(Decision.ALLOW_ONCE, True, via="policy")
        if self._mode == "deny":
            return Ruling(Decision.DENY, True, need.read_only_reason, via="read_only")
        if self._mode == "allow" and need.routine:
            return Ruling(Decision.ALLOW_ONCE, True, via="mode")
        keys = tuple(dict.fromkeys(k for k in need.keys if k))
        pending = tuple(k for k in keys if k not in self._allowed)
        if (keys and not pending) or (need.project_key and need.project_key in self._allowed):
            return Ruling(Decision.ALLOW_SESSION, True, via="session")
        if self._approver is None:
            return Ruling(Decision.DENY, True, need.nobody_reason, via="nobody")
        request = await prepare(pending)
        decision = Decision(await (ask or self.ask)(request))
        if decision is Decision.ALLOW_SESSION:
            if request.session_key and pending:
                self._allowed.update(pending)
            else:
                decision = Decision.ALLOW_ONCE  # this kind of call asks every time
        elif decision is Decision.ALLOW_PROJECT:
            if request.project_key:
                self._allowed.add(request.project_key)
            else:
                decision = Decision.ALLOW_ONCE  # not offered: never widened behind the user's back
        return Ruling(decision, False, need.declined_reason if decision is Decision.DENY else "")

    async def confirm_typed(self, request: ApprovalRequest, *, ask: Approver | None = None) -> Ruling | None:
        """A change the user typed (``/task aider:...``): None (no approval needed) unless the mode is read-only.

        In read-only mode the user is asked every time ("always" is not offered or kept).
        """
        if self._mode != "deny":
            return None
        if self._approver is None:
            return Ruling(Decision.DENY, True, "nobody can approve it here", via="nobody")
        decision = Decision(await (ask or self.ask)(request))
        if decision in (Decision.ALLOW_SESSION, Decision.ALLOW_PROJECT):
            decision = Decision.ALLOW_ONCE
        return Ruling(decision, False)


def _checked(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"unknown approval mode {mode!r}; the modes are ask, allow and deny")
    return str(mode)
