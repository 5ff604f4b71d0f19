"""The SPEC's public names that nothing in the app itself calls (SPEC.md sections 3, 5 and 7).

SPEC.md names an interface for embedders: ``handle_query``, ``registerDirectTool``,
``prime_data_context``, ``determine_relevant_files``, ``PROGRAMMATIC_EXECUTORS``... The
app drives the engine through ``stream_query`` and its own tool registrations, so these
names live here, mixed into the classes the SPEC puts them on, and tested by
``tests/core/test_handler_api.py``, ``tests/memory/test_selection.py`` and
``tests/tasks/test_task_system.py``. ``tests/test_surface.py`` exempts this package from
its "every function has a caller" rule and nothing else.
"""
