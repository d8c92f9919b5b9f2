"""The results store."""

from toolproof.store.journal import DEFAULT_URL, Store, store_url

__all__ = ["DEFAULT_URL", "Store", "store_url"]
