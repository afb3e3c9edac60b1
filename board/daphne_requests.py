"""Twisted's request parsing, trimmed to what daphne uses.

``twisted.web.http.Request`` parses the body of every POST that declares a ``Content-Type`` into
``request.args`` (form fields), and to find the type it builds a whole ``email.message.Message``
per request. Daphne never reads ``request.args``: it hands the raw body to the ASGI application,
and Django (or the agent API) parses it there. Measured under the agent load, that unused parse
was 7 % of the server's CPU (docs/architecture.md, "Admission" and after). Twisted offers the
switch (``parsePOSTFormSubmission``) but daphne does not pass it, so it is set on every request
daphne makes.
"""

from __future__ import annotations

from daphne.http_protocol import WebRequest

_original_init = WebRequest.__init__


def _init_without_form_parsing(self, *args, **kwargs):
    _original_init(self, *args, **kwargs)
    self._parsePOSTFormSubmission = False


def skip_form_parsing() -> None:
    """Make daphne's requests skip Twisted's form parsing (idempotent)."""
    if WebRequest.__init__ is not _init_without_form_parsing:
        WebRequest.__init__ = _init_without_form_parsing
