"""The live pipeline: PostgreSQL NOTIFY → one LISTEN connection per process → in-process subscribers
(Board websockets through the channel layer, agents waiting in a long-poll ``claim_next``)."""
