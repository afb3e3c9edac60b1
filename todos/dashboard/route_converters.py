"""Path converters for the Board's id routes: each matches any one path segment, so a malformed
id reaches its view and gets the Board's own 404 (``views.common.not_found``) rather than
Django's: with DEBUG on that one lists every URL pattern, with it off it is a page of Django's.

A slug route reads the segment as text (the view's lookup finds nothing, and ``board_view``
answers 404 for a control character before it looks); an integer id route reads anything that
is not a positive 32-bit integer (text, a sign, ``%00``, a number past the column's range,
which PostgreSQL would refuse with an error) as :data:`MALFORMED_ID`, for which ``board_view``
answers 404 before the view runs.
"""

from __future__ import annotations

ANY_SEGMENT = "[^/]+"
MAX_ID = 2**31 - 1  # auth_user.id is a 32-bit serial starting at 1


class MalformedId:
    """An id segment no row can have: it names nothing, whatever the route."""

    def __repr__(self) -> str:
        return "MALFORMED_ID"

    def __str__(self) -> str:
        return "malformed"


MALFORMED_ID = MalformedId()


class Segment:
    """Any one path segment, as text (a team's or an endpoint's slug)."""

    regex = ANY_SEGMENT

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: object) -> str:
        return str(value)


class RowId:
    """Any one path segment, as an integer id, or :data:`MALFORMED_ID` unless a row can have it."""

    regex = ANY_SEGMENT

    def to_python(self, value: str) -> int | MalformedId:
        if value.isascii() and value.isdigit() and len(value) <= len(str(MAX_ID)) and 0 < int(value) <= MAX_ID:
            return int(value)
        return MALFORMED_ID

    def to_url(self, value: object) -> str:
        return str(value)
