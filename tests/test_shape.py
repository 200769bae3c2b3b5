"""The shared reader of declarative position shapes (core/shape.py)."""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal, NotRequired, Required, TypedDict

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ludoteca.core.shape import Between, ShapeError, describe, read


class Rolloff(TypedDict):
    seats: list[int]
    rolls: list[int | Literal["?"]]


class Position(TypedDict):
    game: Literal["toy"]
    phase: Literal["roll", "move", "over"]
    hands: list[list[int]]
    bank: dict[str, Annotated[int, Between(0, 10)]]
    roll: int | Literal["?"] | None
    rolloff: Rolloff | None
    clock: float
    done: bool
    note: NotRequired[str]


class Loose(TypedDict, total=False):
    name: Required[str]
    size: int


class Child(Loose):
    colour: str


def good() -> dict[str, Any]:
    return {"game": "toy", "phase": "roll", "hands": [[1, 2], [3]], "bank": {"5": 3, "10": 0}, "roll": None,
            "rolloff": None, "clock": 1.5, "done": False}


def message(data: object, shape: Any = Position, where: str = "position") -> str:
    with pytest.raises(ValueError) as info:
        read(data, shape, where)
    return str(info.value)


def test_a_good_position_is_returned_as_it_is() -> None:
    data = good()
    assert read(data, Position) is data


def test_extra_keys_are_allowed() -> None:
    """RULES.md: implementations may add keys."""
    assert read({**good(), "cache": [1, {"x": None}]}, Position)["game"] == "toy"


@pytest.mark.parametrize(("change", "expected"), [
    ({"hands": [[1], [2, 3, "x"]]}, "hands[1][2]: expected a whole number, got 'x'"),
    ({"hands": [[1], [True]]}, "hands[1][0]: expected a whole number, got true"),
    ({"hands": {"0": [1]}}, "hands: expected a list, got an object"),
    ({"bank": {"5": 11}}, "bank['5']: expected a whole number from 0 to 10, got 11"),
    ({"bank": {"5": -1}}, "bank['5']: expected a whole number from 0 to 10, got -1"),
    ({"phase": "fly"}, "phase: expected one of 'roll', 'move', 'over', got 'fly'"),
    ({"game": "other"}, "game: expected 'toy', got 'other'"),
    ({"roll": "x"}, "roll: expected a whole number or '?' or null, got 'x'"),
    ({"roll": False}, "roll: expected a whole number or '?' or null, got false"),
    ({"roll": 2.0}, "roll: expected a whole number or '?' or null, got 2.0"),
    ({"rolloff": {"seats": [0, "a"], "rolls": []}}, "rolloff.seats[1]: expected a whole number, got 'a'"),
    ({"rolloff": {"seats": [0]}}, "rolloff is missing the key 'rolls'"),
    ({"rolloff": [0]}, "rolloff: expected an object or null, got a list ([0])"),
    ({"clock": float("nan")}, "clock: expected a number, got nan"),
    ({"clock": True}, "clock: expected a number, got true"),
    ({"done": 0}, "done: expected true or false, got 0"),
    ({"note": 3}, "note: expected a string, got 3"),
])
def test_each_mismatch_names_its_key_path(change: dict[str, Any], expected: str) -> None:
    assert message({**good(), **change}) == expected


def test_a_missing_required_key_is_named() -> None:
    data = good()
    del data["roll"]
    assert message(data) == "position is missing the key 'roll'"


def test_a_missing_optional_key_is_fine() -> None:
    assert "note" not in read(good(), Position)


def test_the_value_itself_must_be_an_object() -> None:
    assert message([1, 2]) == "position must be a JSON object, not a list ([1, 2])"
    assert message("x", where="rolloff", shape=Rolloff) == "rolloff must be a JSON object, not 'x'"


def test_a_part_read_alone_is_named_as_in_the_whole() -> None:
    assert message({"seats": [1, None], "rolls": []}, Rolloff, "rolloff") == (
        "rolloff.seats[1]: expected a whole number, got null")


def test_the_error_carries_path_and_problem() -> None:
    with pytest.raises(ShapeError) as info:
        read({**good(), "hands": [[0, "x"]]}, Position)
    assert info.value.path == "hands[0][1]"
    assert info.value.problem == "expected a whole number, got 'x'"


def test_floats_accept_whole_numbers() -> None:
    assert read({**good(), "clock": 3}, Position)["clock"] == 3


def test_total_false_and_required_and_inheritance() -> None:
    assert read({"name": "a"}, Loose) == {"name": "a"}
    assert message({"size": 1}, Loose) == "position is missing the key 'name'"
    assert message({"name": "a", "size": "big"}, Loose) == "size: expected a whole number, got 'big'"
    # Child is total: its own key is required, the inherited ones keep their parent's rule.
    assert message({"name": "a"}, Child) == "position is missing the key 'colour'"
    assert read({"name": "a", "colour": "red"}, Child)["colour"] == "red"


def test_literal_values_keep_their_type() -> None:
    class_ = Literal[1, "1"]
    assert describe(class_) == "one of 1, '1'"

    class One(TypedDict):
        x: Literal[1]

    with pytest.raises(ValueError, match="expected 1, got true"):
        read({"x": True}, One)
    with pytest.raises(ValueError, match=r"expected 1, got \[1\]|expected 1, got a list"):
        read({"x": [1]}, One)


def test_dict_keys_must_be_strings() -> None:
    class Bag(TypedDict):
        bag: dict[str, int]

    with pytest.raises(ValueError, match="bag: expected an object with string keys, got the key 3"):
        read({"bag": {3: 1}}, Bag)


def test_unsupported_annotations_are_refused_when_compiled() -> None:
    class Odd(TypedDict):
        x: set[int]

    with pytest.raises(TypeError, match="cannot use"):
        read({"x": 1}, Odd)


class Open(TypedDict):
    anything: Any | None
    bounded: Annotated[int, Between(1, 6)] | None
    later: NotRequired[Annotated[int, Between(0, None)]]


def test_any_bounds_and_not_required_in_unions() -> None:
    assert read({"anything": True, "bounded": None}, Open)["anything"] is True
    assert read({"anything": [1], "bounded": 6, "later": 0}, Open)["bounded"] == 6
    assert message({"anything": 1, "bounded": 7}, Open) == (
        "bounded: expected a whole number from 1 to 6 or null, got 7")
    assert message({"anything": 1, "bounded": True}, Open) == (
        "bounded: expected a whole number from 1 to 6 or null, got true")
    assert message({"anything": 1, "bounded": 1, "later": -1}, Open) == (
        "later: expected a whole number of at least 0, got -1")


class Tree(TypedDict):
    children: list[Tree]


def test_recursive_shapes_are_refused() -> None:
    with pytest.raises(TypeError, match="cannot refer to itself"):
        read({"children": []}, Tree)


def test_describe() -> None:
    assert describe(int | None) == "a whole number or null"
    assert describe(Annotated[int, Between(0, None)]) == "a whole number of at least 0"
    assert describe(list[int]) == "a list"


_ints = st.integers(-5, 20)
_good_positions = st.fixed_dictionaries(
    {
        "game": st.just("toy"),
        "phase": st.sampled_from(["roll", "move", "over"]),
        "hands": st.lists(st.lists(_ints, max_size=5), max_size=4),
        "bank": st.dictionaries(st.sampled_from(["5", "10", "20", "50"]), st.integers(0, 10)),
        "roll": st.one_of(st.none(), st.just("?"), _ints),
        "rolloff": st.one_of(st.none(), st.fixed_dictionaries(
            {"seats": st.lists(_ints, max_size=3), "rolls": st.lists(st.one_of(_ints, st.just("?")), max_size=3)})),
        "clock": st.one_of(st.integers(0, 100), st.floats(0, 100)),
        "done": st.booleans(),
    },
    optional={"note": st.text(max_size=5), "extra": st.integers()},
)


@settings(max_examples=200, deadline=None)
@given(_good_positions)
def test_property_every_well_shaped_position_is_read(data: dict[str, Any]) -> None:
    assert read(data, Position) is data


_bad_values = st.one_of(st.just(True), st.just("x"), st.just([None]), st.just({"k": 1}), st.floats(0.5, 0.5))


@settings(max_examples=200, deadline=None)
@given(_good_positions, st.sampled_from(["phase", "hands", "roll", "done", "game"]), _bad_values)
def test_property_a_wrong_value_is_refused_naming_its_key(data: dict[str, Any], key: str, bad: object) -> None:
    assume(not (key == "done" and bad is True))
    data[key] = bad
    with pytest.raises(ValueError) as info:
        read(data, Position)
    assert str(info.value).startswith(key)


def test_reading_is_fast() -> None:
    """A position of a few dozen values reads in well under a millisecond (property tests read many)."""
    data = good()
    read(data, Position)  # compile once
    start = time.perf_counter()
    for _ in range(2000):
        read(data, Position)
    per_read = (time.perf_counter() - start) / 2000
    assert per_read < 0.0005
