"""Helpers for values read from YAML, whose type is never guaranteed.

The checks treat a value the way the manifests' readers do: a present but empty map or list still
counts as present (truthy), a field of something that is not a map is simply absent, and
comparisons never confuse true with 1 or "1" with 1.
"""
import math


def get(obj, *keys):
    """obj[k1][k2]..., or None where a level is missing or not a map (or, for ints, a list)."""
    for k in keys:
        if isinstance(obj, dict):
            obj = obj.get(k)
        elif isinstance(obj, list) and isinstance(k, int) and -len(obj) <= k < len(obj):
            obj = obj[k]
        else:
            return None
    return obj


def truthy(v):
    """Truth of a YAML value: maps and lists are true even when empty; None, false, 0, NaN and
    "" are false."""
    if v is None or v is False:
        return False
    if isinstance(v, (dict, list)):
        return True
    if isinstance(v, float) and math.isnan(v):
        return False
    return bool(v)


def same(a, b):
    """Equality without Python's coercions: True is not 1, "1" is not 1 (1 is 1.0)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    num = (int, float)
    if isinstance(a, num) and isinstance(b, num):
        return a == b
    return type(a) is type(b) and a == b


def text(v):
    """A value as it reads in a message or an argument list."""
    if v is None:
        return "undefined"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, (dict, list)):
        import json
        return json.dumps(v, separators=(",", ":"))
    return str(v)


def number(v):
    """A quantity-like value as a number: missing, empty, 0 or false count as 0; text that is not
    a plain number is NaN (so it satisfies no comparison)."""
    if not truthy(v):
        return 0.0
    if v is True:
        return 1.0
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        s = v.strip()
        if s == "":
            return 0.0
        if "_" in s:
            return math.nan
        try:
            if s.lower().startswith(("0x", "0o", "0b")):
                return float(int(s, 0))
            if s.lower() in ("infinity", "+infinity", "-infinity"):
                return float(s.lower().replace("infinity", "inf"))
            if s.lower() in ("inf", "+inf", "-inf", "nan", "+nan", "-nan"):
                return math.nan
            return float(s)
        except ValueError:
            return math.nan
    return math.nan


def dicts(v):
    """The map entries of a list (a missing list is empty; entries that are not maps are skipped
    as items without any field)."""
    return [x if isinstance(x, dict) else {} for x in (v if isinstance(v, list) else [])]
