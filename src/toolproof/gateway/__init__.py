"""What every tool call passes through."""

from toolproof.gateway.core import Conditions, Gateway

__all__ = ["Conditions", "Gateway"]
