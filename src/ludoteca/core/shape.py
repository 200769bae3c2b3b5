"""Declarative position shapes: each game declares its JSON as TypedDicts; one shared reader checks them.

A game writes the shape of its position JSON (RULES.md) once, as :class:`typing.TypedDict`
classes, and reads a position with :func:`read`, which checks every key and type and raises
:class:`ValueError` naming the key path of the first thing wrong. The game module then keeps
only its rule invariants (totals, seats, phases, ...), on values whose types are known::

    from typing import Annotated, Literal, NotRequired, TypedDict

    from ludoteca.core.shape import Between, read

    class Pile(TypedDict):
        five: Annotated[int, Between(0, 10)]   # a whole number from 0 to 10

    class Position(TypedDict):
        game: Literal["mygame"]
        phase: Literal["roll", "move", "over"]
        hands: list[list[int]]
        piles: dict[str, Pile]
        roll: int | Literal["?"] | None        # a key that must be present, possibly null
        note: NotRequired[str]                 # a key that may be absent

    pos = read(data, Position)                 # -> Position (the same object, now typed)
    # ValueError("hands[1][3]: expected a whole number, got 'x'")

What a shape may say:

* ``int`` (a whole number; ``true``/``false`` are *not* numbers), ``float`` (a finite number,
  whole or not), ``bool``, ``str``, ``None``; unions of them (``int | None``);
* ``Literal[...]`` (one of the given values, of the same type: ``Literal[1]`` refuses ``true``);
* ``list[X]``, ``dict[str, X]``, a nested TypedDict, ``Any``/``object`` (anything);
* ``Annotated[int, Between(low, high)]`` (a number within bounds, either may be None);
* ``Required[...]``/``NotRequired[...]`` and ``total=False``, as Python defines them;
* keys that are not identifiers with the functional form:
  ``Coins = TypedDict("Coins", {"5": int, "10": int})``.

A shape may not refer to itself (no recursive shapes); anything else raises TypeError when the
shape is first used.

Keys a shape does not name are allowed and ignored (RULES.md: "implementations may add keys").
Nothing is copied: :func:`read` returns ``data`` itself, typed as the shape.

Messages: a key path relative to the value read (``hands[1][3]``, ``bank['5']``,
``rolloff.seats[0]``) then what was expected and what was found. ``where`` names the value read
in messages about the value itself ("position must be a JSON object, not a list", "position is
missing the key 'roll'"); when ``where`` is not ``"position"`` it also prefixes the key paths
(``read(x, Rolloff, where="rolloff")`` -> ``rolloff.seats[0]: ...``), so a part read on its own
is named as in the whole position.

Speed: a shape is compiled once (on first use) into small checking closures; reading a valid
position builds no strings, and lists of plain values are checked by type in one loop (a 5x5
board with its layout reads in a few microseconds), so property tests can read positions freely.
:class:`ShapeError` (a ValueError) carries ``path`` and ``problem`` apart, for callers that
word their own message; :func:`describe` says what a type expects, in words.
Define shapes at module level: their annotations are resolved with
:func:`typing.get_type_hints`, which needs the names they use to be importable from the module.
"""

from __future__ import annotations

import math
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NotRequired, Required, TypeVar, Union, get_args, get_origin, get_type_hints

T = TypeVar("T")

__all__ = ["Between", "ShapeError", "describe", "read"]


@dataclass(frozen=True)
class Between:
    """``Annotated[int, Between(0, 10)]``: a number from ``low`` to ``high`` (inclusive; None: unbounded)."""

    low: float | None = None
    high: float | None = None

    def text(self) -> str:
        if self.low is not None and self.high is not None:
            return f"from {_num(self.low)} to {_num(self.high)}"
        if self.low is not None:
            return f"of at least {_num(self.low)}"
        if self.high is not None:
            return f"of at most {_num(self.high)}"
        return ""


class ShapeError(ValueError):
    """A value does not have its declared shape. ``path`` is the key path (``hands[1][3]``);
    ``problem`` what was expected and found. Also a ValueError, as every reader error is."""

    def __init__(self, path: str, problem: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.problem = problem


def read(data: object, shape: type[T], where: str = "position") -> T:
    """``data`` checked against the TypedDict ``shape`` and returned as it (not copied).

    Raises :class:`ShapeError` (a ValueError) naming the key path of the first mismatch.
    """
    check = _compiled(shape)
    try:
        check(data)
    except _Mismatch as m:
        raise _error(m, where) from None
    return typing.cast(T, data)


def describe(shape: object) -> str:
    """What ``shape`` (a type a shape may use) expects, in words: ``"a whole number or null"``."""
    return _compile(shape).what


# --- compiling shapes -------------------------------------------------------------------------

Check = Callable[[Any], None]
"""Raises :class:`_Mismatch` when the value does not fit; returns None when it does."""


class _Mismatch(Exception):
    """Raised inside the checkers; ``path`` collects the keys from the innermost outwards."""

    def __init__(self, problem: str, missing: str | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.missing = missing
        self.path: list[str | int] = []


@dataclass(frozen=True)
class _Node:
    check: Check
    what: str
    """What it expects, in words ("a whole number", "a list")."""
    kinds: tuple[type, ...]
    """The Python types a value must have at the top level to be worth checking in depth."""
    container: bool = False
    exact: frozenset[type] = frozenset()
    """Types whose values are accepted as they are (``type(x) in exact``: no call needed)."""


_CACHE: dict[object, Check] = {}
_ABSENT = object()
_COMPILING: set[type] = set()
"""The TypedDicts being compiled (a shape referring to itself is refused)."""


def _compiled(shape: object) -> Check:
    check = _CACHE.get(shape)
    if check is None:
        check = _compile(shape).check
        _CACHE[shape] = check
    return check


def _compile(tp: object) -> _Node:
    if tp is Any or tp is object:
        return _Node(_accept, "anything", (object,))
    if tp is None or tp is type(None):
        return _Node(_check_none, "null", (type(None),), exact=frozenset({type(None)}))
    if tp is bool:
        return _Node(_check_bool, "true or false", (bool,), exact=frozenset({bool}))
    if tp is int:
        return _Node(_check_int, "a whole number", (int,), exact=frozenset({int}))
    if tp is float:
        return _Node(_check_float, "a number", (int, float), exact=frozenset({int}))
    if tp is str:
        return _Node(_check_str, "a string", (str,), exact=frozenset({str}))
    if isinstance(tp, type) and typing.is_typeddict(tp):
        return _typeddict(tp)
    origin = get_origin(tp)
    args = get_args(tp)
    if origin is Literal:
        return _literal(args)
    if origin is Union or origin is types.UnionType:
        return _union([_compile(a) for a in args])
    if origin is list:
        return _list(_compile(args[0]) if args else _compile(Any))
    if origin is dict:
        if args and args[0] is not str:
            raise TypeError(f"a shape's dict keys are strings (JSON objects), not {args[0]!r}")
        return _dict(_compile(args[1]) if args else _compile(Any))
    if origin is typing.Annotated:
        return _annotated(tp)
    if origin is Required or origin is NotRequired:
        return _compile(args[0])
    raise TypeError(f"a position shape cannot use {tp!r}")


def _accept(value: object) -> None:
    return None


def _check_none(value: object) -> None:
    if value is not None:
        raise _Mismatch(f"expected null, got {_show(value)}")


def _check_bool(value: object) -> None:
    if value is not True and value is not False:
        raise _Mismatch(f"expected true or false, got {_show(value)}")


def _check_int(value: object) -> None:
    if type(value) is not int and (isinstance(value, bool) or not isinstance(value, int)):
        raise _Mismatch(f"expected a whole number, got {_show(value)}")


def _check_float(value: object) -> None:
    if type(value) is int:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _Mismatch(f"expected a number, got {_show(value)}")


def _check_str(value: object) -> None:
    if not isinstance(value, str):
        raise _Mismatch(f"expected a string, got {_show(value)}")


def _literal(choices: tuple[Any, ...]) -> _Node:
    allowed = frozenset((type(c), c) for c in choices)
    what = "one of " + ", ".join(_show(c) for c in choices) if len(choices) > 1 else _show(choices[0])

    def check(value: object) -> None:
        try:
            ok = (type(value), value) in allowed
        except TypeError:  # unhashable (a list, an object)
            ok = False
        if not ok:
            raise _Mismatch(f"expected {what}, got {_show(value)}")

    return _Node(check, what, tuple({type(c) for c in choices}))


def _union(options: list[_Node]) -> _Node:
    what = " or ".join(dict.fromkeys(o.what for o in options))
    kinds = tuple(k for o in options for k in o.kinds)

    def check(value: object) -> None:
        tried: list[_Node] = []
        for o in options:
            if isinstance(value, o.kinds) and not (type(value) is bool and bool not in o.kinds
                                                   and object not in o.kinds):
                try:
                    o.check(value)
                    return
                except _Mismatch:
                    tried.append(o)
        if len(tried) == 1 and tried[0].container:
            tried[0].check(value)  # the only fitting container: say what is wrong inside it
        raise _Mismatch(f"expected {what}, got {_show(value)}")

    exact = frozenset().union(*(o.exact for o in options)) if all(o.exact for o in options) else frozenset()
    return _Node(check, what, kinds, container=all(o.container for o in options), exact=exact)


def _list(item: _Node) -> _Node:
    item_check = item.check
    exact = item.exact

    def check(value: object) -> None:
        if not isinstance(value, list):
            raise _Mismatch(f"expected a list, got {_show(value)}")
        if exact:
            for x in value:
                if type(x) not in exact:
                    break
            else:
                return  # every item has a type accepted as it is: the common case
        for i, x in enumerate(value):
            try:
                item_check(x)
            except _Mismatch as m:
                m.path.append(i)
                raise

    return _Node(check, "a list", (list,), container=True)


def _dict(item: _Node) -> _Node:
    item_check = item.check

    def check(value: object) -> None:
        if not isinstance(value, Mapping):
            raise _Mismatch(f"expected an object, got {_show(value)}")
        for k, x in value.items():
            if not isinstance(k, str):
                raise _Mismatch(f"expected an object with string keys, got the key {_show(k)}")
            try:
                item_check(x)
            except _Mismatch as m:
                m.path.append(k)
                raise

    return _Node(check, "an object", (Mapping,), container=True)


def _typeddict(td: type) -> _Node:
    hints = get_type_hints(td, include_extras=True)
    required = _required_keys(td, hints)
    if td in _COMPILING:
        raise TypeError(f"a position shape cannot refer to itself ({td.__name__})")
    _COMPILING.add(td)
    try:
        nodes = {k: _compile(tp) for k, tp in hints.items()}
    finally:
        _COMPILING.discard(td)
    fields = [(k, k in required, node.check, node.exact) for k, node in nodes.items()]

    def check(value: object) -> None:
        if not isinstance(value, Mapping):
            raise _Mismatch(f"expected an object, got {_show(value)}")
        for key, needed, key_check, exact in fields:
            x = value.get(key, _ABSENT)
            if x is _ABSENT:
                if needed:
                    raise _Mismatch(f"missing the key {key!r}", missing=key)
            elif type(x) not in exact:
                try:
                    key_check(x)
                except _Mismatch as m:
                    m.path.append(key)
                    raise

    return _Node(check, "an object", (Mapping,), container=True)


def _required_keys(td: type, hints: Mapping[str, Any]) -> set[str]:
    """The keys ``td`` requires. Python 3.11 sets ``__required_keys__`` from each declaring class's
    ``total`` but misses ``Required``/``NotRequired`` written under ``from __future__ import
    annotations`` (still strings when the class is made): the resolved hints settle those."""
    out = set(getattr(td, "__required_keys__", hints))
    for key, tp in hints.items():
        origin = get_origin(tp)
        if origin is Required:
            out.add(key)
        elif origin is NotRequired:
            out.discard(key)
    return out


def _annotated(tp: object) -> _Node:
    inner, *meta = get_args(tp)
    node = _compile(inner)
    bounds = [m for m in meta if isinstance(m, Between)]
    if not bounds:
        return node
    b = bounds[0]
    low, high = b.low, b.high
    what = f"{node.what} {b.text()}"
    inner_check = node.check

    def check(value: Any) -> None:
        inner_check(value)
        if (low is not None and value < low) or (high is not None and value > high):
            raise _Mismatch(f"expected {what}, got {_show(value)}")

    return _Node(check, what, node.kinds)


# --- messages ---------------------------------------------------------------------------------

def _error(m: _Mismatch, where: str) -> ShapeError:
    parts = list(reversed(m.path))
    root = "" if where == "position" else where
    path = root
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part.isidentifier():
            path += f".{part}" if path else part
        else:
            path += f"[{part!r}]"
    if m.missing is not None:
        return ShapeError(path, m.problem, f"{path or where} is {m.problem}")
    if not parts and m.problem.startswith("expected an object, got "):
        return ShapeError(path, m.problem, f"{where} must be a JSON object, not {_kind(m)}")
    if not path:
        return ShapeError(path, m.problem, f"{where}: {m.problem}")
    return ShapeError(path, m.problem, f"{path}: {m.problem}")


def _kind(m: _Mismatch) -> str:
    return m.problem.removeprefix("expected an object, got ")


def _show(value: object) -> str:
    """A value as a message shows it: JSON words for true/false/null, short."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, list):
        text = "a list" if not value else f"a list ({_short(repr(value))})"
        return text
    if isinstance(value, Mapping):
        return "an object"
    return _short(repr(value))


def _short(text: str, most: int = 60) -> str:
    return text if len(text) <= most else text[: most - 3] + "..."


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)
