"""The interactive elements a phone page may show smaller than 44×44 CSS px (WCAG 2.5.5), each with the
reason it is allowed. Every one of them is still at least :data:`MIN_TARGET` px both ways (WCAG 2.5.8).

test_browser_fit.py reads this list: an element matching one of the selectors is held to the smaller size.
"""

from __future__ import annotations

MIN_CONTROL = 44
"""Every control used in play and in the lobby: at least this many CSS px both ways."""
MIN_TARGET = 24
"""Every target, the exceptions below included."""

SMALL_TARGETS: dict[str, str] = {
    "#board .legal, #board .clickable, #board [role=button]":
        "a part of a drawn board (a triangle, a cell, a tile, a coin stack, a spot): the board scales to the "
        "width of the screen so that nothing is hidden sideways, and the zoom buttons and pinching make every "
        "part as large as the player wants",
    "#log summary, #log a":
        "a line of the game's log that opens to show the moves it groups: text in a list, not a control of play",
    "article.rules a, .rules-page a:not(.rules-link), figcaption a, .guide-before a, .guide-after-text a":
        "a link inside running text (WCAG 2.5.8 excepts targets in a sentence)",
    "footer a":
        "a link of the page's footer, in running text",
}
"""CSS selector → why an element matching it may be under :data:`MIN_CONTROL` px."""

SELECTOR = ", ".join(SMALL_TARGETS)
"""All the exceptions as one CSS selector (for ``Element.matches``)."""
