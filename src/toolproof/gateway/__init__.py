"""What every tool call passes through."""

from toolproof.gateway.core import Gateway

__all__ = ["Gateway"]
