"""The agent API: the verb table (``verbs.py``) and its HTTP transport (``http.py``).

Layout:

* ``verbs.py`` – the one verb table: name, input and output JSON schemas, the scope verbs that
  grant it, and the handler. A second transport (MCP) reuses it as it is;
* ``handlers.py`` – one small async function per verb, over the store and the selectors;
* ``schemas.py`` – the JSON schemas; ``validation.py`` – the small validator that checks inputs
  against them with messages naming the field;
* ``serialize.py`` – todo rows and attempts as JSON; ``auth.py`` – bearer tokens and scopes;
* ``longpoll.py`` – ``claim_next``'s wait for work; ``openapi.py`` – the OpenAPI 3.1 document;
* ``http.py`` and ``urls.py`` – the Django views; ``asgi.py`` – the ASGI guard in front of them
  (body limit before buffering, client disconnects).
"""
