"""Screens of the app (modals and full-screen views)."""
