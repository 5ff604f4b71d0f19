"""assistant-tui's Textual app.

Textual paints at most ``TEXTUAL_FPS`` frames a second (60 by default) on a
timer that, once a frame overran its slot, skips to the slot after next: a key
pressed just after a streamed write's frame waited up to two slots (33 ms) for
its own frame, a picker result the same. At 240 that wait is at most 8 ms;
frames are still painted only when something changed (measured: no more CPU
while streaming and typing). Set before Textual is imported; a user's own
setting wins.
"""

import os

os.environ.setdefault("TEXTUAL_FPS", "240")
