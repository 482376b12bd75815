"""One exception type per error, whichever engine reported it."""


class HarnessError(Exception):
    """Base of the errors the harness raises about an engine or a request."""


class UnknownFamily(HarnessError, ValueError):
    """A family that an engine does not serve (its hello's `families`)."""


class UnknownFlavor(HarnessError, ValueError):
    """A flavor name that an engine cannot resolve (the protocol's `resolve_flavor` op)."""


class EngineError(HarnessError, RuntimeError):
    """An engine's worker answered `error`, crashed, or broke the protocol: a bug or a bad request."""


class EngineMismatch(HarnessError, AssertionError):
    """The two engines disagreed; the message names the first differing field and line."""
