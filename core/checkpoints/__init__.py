"""Checkpoints of the working tree before every change, and rewinding to any turn (issue 26).

- :mod:`core.checkpoints.shadow`: the shadow git repository in the state directory.
- :mod:`core.checkpoints.manager`: ``Checkpoints``, the snapshots around each writer.
- :mod:`core.checkpoints.log`: the transcript's checkpoint and rewind records, and the rewind list.
- :mod:`core.checkpoints.rewind`: planning and applying a rewind (files, conversation, both).
- :mod:`core.checkpoints.hooks`: the few lines the writers call.
- :mod:`core.checkpoints.cli`: ``assistant-tui rewind``.

Nothing is imported here: the transcript loader reads :mod:`core.checkpoints.log` without git.
"""
