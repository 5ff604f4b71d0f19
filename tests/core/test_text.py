"""Control characters from untrusted text are shown, never sent to the terminal."""

from core.text import has_controls, visible_controls


def test_controls_become_visible_and_text_survives():
    osc52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
    shown = visible_controls(f"copy {osc52} then \x1b[2J clear \x9b31m and \x7f")
    assert not has_controls(shown)
    assert shown == "copy ␛]52;c;ZWNobyBwd25lZA==␇ then ␛[2J clear \\x9b31m and ␡"


def test_newlines_tabs_and_unicode_are_untouched():
    text = "line one\n\tindented — café 🚀\r\nnext"
    assert visible_controls(text) == "line one\n\tindented — café 🚀\nnext"
    assert visible_controls("plain") == "plain"
    assert visible_controls("a\rb") == "a␍b"
