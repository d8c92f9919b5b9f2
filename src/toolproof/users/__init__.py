"""The user side of a trial."""

from toolproof.users.scripted import ScriptedUser, User

__all__ = ["ScriptedUser", "User"]
