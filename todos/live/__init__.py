"""The live pipeline: the store's change log → the relay (``relay.py``, one per installation) →
NOTIFY → one LISTEN connection per process (``listener.py``) → in-process subscribers (Board
websockets through the channel layer, agents waiting in a long-poll ``claim_next``)."""
