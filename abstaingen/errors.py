"""Errors a user can cause. The CLI turns them into one clear line and a non-zero exit."""


class AbstaingenError(Exception):
    """A problem with the user's input or machine, explained in the message."""
