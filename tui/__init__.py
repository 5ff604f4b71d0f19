"""assistant-tui's Textual app (process-wide tuning lives in :mod:`tui.runtime`, applied by :mod:`tui.cli`)."""
