"""Tests of the Textual app (Pilot flows and SVG snapshots)."""
