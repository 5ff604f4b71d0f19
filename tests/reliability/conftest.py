"""Fixtures of the reliability battery: canaries, the exfiltration listener, file logging."""

from tests.core.conftest import assert_history_valid  # noqa: F401 - re-exported for the tests
from tests.reliability.support import app_log, canary_key, canary_project, close_what_was_opened, listener  # noqa: F401 - fixtures
