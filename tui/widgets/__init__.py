"""Widgets of the app: chat, context pane, tool trace, status line, prompt."""
