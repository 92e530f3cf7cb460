"""Errors of the temporal engine: bad rules at registration, bad events at push time."""
from __future__ import annotations

from chronolog.errors import ChronologError


class RuleError(ChronologError, ValueError):
    """A rule that cannot be registered; the message names the rule and what is wrong."""


class UnknownEventTypeError(RuleError):
    """A rule mentions an event type that is neither declared nor emitted by a rule."""


class UnknownAliasError(RuleError):
    """A scope, condition or clause refers to an event the pattern has not bound yet."""


class UnknownAttributeError(RuleError):
    """A condition, aggregate or output uses an attribute the event type does not have."""


class MissingScopeError(RuleError):
    """A negation, aggregate or selection without the time scope it needs."""


class CyclicRulesError(RuleError):
    """A rule whose output would feed back into its own pattern (directly or not)."""


class PolicyError(ChronologError, ValueError):
    """A policy object built with invalid parameters."""


class EventError(ChronologError, ValueError):
    """A pushed event that is malformed: unknown type, missing attributes, start > end."""
