"""The queue's core: connections, errors, SQL composition, the store (every write) and the
selectors (every read). It imports nothing from the layers above it (docs/architecture.md)."""
