"""Strict spec parsing shared by the families: unknown or mistyped fields are refusals."""


class SpecError(ValueError):
    """A spec the family refuses; the message is the refusal reason (part of the contract)."""


def json_kind(value):
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def parse_fields(family, raw, fields):
    """fields: (name, kind, default) with kind "int", "str" or "bool". Returns a full spec dict.

    Checks run in a fixed order so both engines refuse with the same text: the spec's shape,
    unknown fields (sorted), then each field's type in declaration order.
    """
    if not isinstance(raw, dict):
        raise SpecError("{family} spec must be a JSON object (got {kind})".format(family=family, kind=json_kind(raw)))
    known = sorted(name for name, _, _ in fields)
    for key in sorted(raw):
        if key not in known:
            raise SpecError("unknown field '{key}' in {family} spec (known: {known})".format(
                key=key, family=family, known=", ".join(known)))
    spec = {}
    for name, kind, default in fields:
        value = raw.get(name, default)
        spec[name] = check_kind(name, kind, value)
    return spec


def check_kind(name, kind, value):
    got = json_kind(value)
    if kind == "int":
        if got != "number" or isinstance(value, float):
            raise SpecError("field '{name}' must be an integer (got {got})".format(
                name=name, got=got if got != "number" else "a fraction"))
        if not -(1 << 31) <= value < (1 << 31):
            raise SpecError("field '{name}' must fit in 32 bits".format(name=name))
    elif kind == "str" and got != "string":
        raise SpecError("field '{name}' must be a string (got {got})".format(name=name, got=got))
    elif kind == "bool" and got != "boolean":
        raise SpecError("field '{name}' must be a boolean (got {got})".format(name=name, got=got))
    return value


def one_of(name, value, allowed):
    """"" when value is allowed, else the refusal text."""
    if value in allowed:
        return ""
    shown = "'{value}'".format(value=value) if isinstance(value, str) else str(value)
    return "{name} must be one of {allowed} (got {shown})".format(
        name=name, allowed=", ".join(str(a) for a in allowed), shown=shown)


def first_reason(checks):
    """The first non-empty reason of the ordered checks (each a function returning "" or a reason)."""
    for check in checks:
        reason = check()
        if reason:
            return reason
    return ""
