"""Small checks for reading canonical JSON, raising ValueError with a clear path.

Types and keys are best declared as a shape and read with :func:`ludoteca.core.shape.read`; the
checks here serve the rule invariants that follow (ranges, one value per seat, choices)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def need(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str = "position") -> Any:
    """``data[key]``, checked to exist and be of ``kind`` (bools are not ints)."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{where} must be a JSON object, not {type(data).__name__}")
    if key not in data:
        raise ValueError(f"{where} is missing the key {key!r}")
    value = data[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        raise ValueError(f"{where}[{key!r}] must be {_names(kinds)}, not {value!r}")
    if not isinstance(value, kinds):
        raise ValueError(f"{where}[{key!r}] must be {_names(kinds)}, not {value!r}")
    return value


def need_int(value: Any, what: str, low: int | None = None, high: int | None = None) -> int:
    """``value`` as an int within ``[low, high]``, or ValueError naming ``what``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} must be a whole number, not {value!r}")
    if (low is not None and value < low) or (high is not None and value > high):
        if high is None:
            raise ValueError(f"{what} must be at least {low}, not {value}")
        if low is None:
            raise ValueError(f"{what} must be at most {high}, not {value}")
        raise ValueError(f"{what} must be between {low} and {high}, not {value}")
    return value


def need_choice(value: Any, what: str, names: Sequence[str]) -> int:
    """The index of ``value`` in ``names`` (a phase, a step), or ValueError listing the choices."""
    if not isinstance(value, str) or value not in names:
        raise ValueError(f"{what} must be one of {', '.join(names)}, not {value!r}")
    return names.index(value)


def need_per_seat(
    data: Mapping[str, Any], key: str, n: int, low: int, high: int, noun: str = "number"
) -> list[int]:
    """``data[key]``: a list of ``n`` whole numbers in ``[low, high]``, one per seat."""
    return per_seat(need(data, key, list), key, n, low, high, noun)


def per_seat(values: Sequence[Any], key: str, n: int, low: int, high: int, noun: str = "number") -> list[int]:
    """``values`` (the list under ``key``, e.g. already read by :func:`ludoteca.core.shape.read`):
    ``n`` whole numbers in ``[low, high]``, one per seat; a new list."""
    if len(values) != n:
        raise ValueError(f"{key} must list one {noun} per player ({n}), not {len(values)}")
    return [need_int(x, f"{key}[{seat}]", low, high) for seat, x in enumerate(values)]


def _names(kinds: tuple[type, ...]) -> str:
    names = {int: "a number", float: "a number", str: "a string", list: "a list",
             dict: "an object", bool: "true or false", type(None): "null"}
    return " or ".join(dict.fromkeys(names.get(k, k.__name__) for k in kinds))
