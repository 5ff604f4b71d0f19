"""Sessions that never hit a wall: the model's real window, compaction, and switching models (issue 27).

- :mod:`core.compaction.probe`: asking a local OpenAI-compatible server for its window;
- :mod:`core.compaction.compactor`: when and how the conversation is compacted;
- :mod:`core.compaction.apply`: the change to the model's view (live and on resume);
- :mod:`core.compaction.summary`: the summary request;
- :mod:`core.compaction.commands`: ``/compact`` and ``/model``;
- :mod:`core.compaction.carry`: the conversation carried over to another provider.

The window table itself is :mod:`core.models`, beside the price table.
"""
