"""``python -m core.acp``: the same as ``assistant-tui acp``."""

from core.acp import main

raise SystemExit(main())
