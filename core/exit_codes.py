"""The exit statuses of the commands (``assistant-tui -p``, ``assistant-tui acp``, ``assistant-tui rewind``).

On the bottom floor, so each front door uses the same numbers without importing another.
"""

EXIT_OK = 0
"""Done."""
EXIT_FAILED = 1
"""The work failed (the message says why)."""
EXIT_USAGE = 2
"""The command line or the configuration was wrong."""
EXIT_INTERRUPTED = 130
"""Interrupted (Ctrl-C), as a shell reports SIGINT."""
