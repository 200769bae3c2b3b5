"""Golden playthroughs: a rule change must show up as a reviewed diff of these files."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ludoteca.core.playthrough import generate

HERE = Path(__file__).parent / "playthroughs"

# (file stem, game, options, seed, max actions). Most play to the end; the longest games are
# cut after their first 400 actions to keep the files reviewable.
CASES: list[tuple[str, str, dict, int, int]] = [
    ("exactly_2p_seed1", "exactly", {"players": 2}, 1, 800),
    ("exactly_4p_seed2", "exactly", {"players": 4}, 2, 800),
    ("tri_2p_seed1", "tri", {"players": 2}, 1, 800),
    ("tri_3p_seed2", "tri", {"players": 3}, 2, 400),
    ("tohm_2p_seed1", "tohm", {"players": 2}, 1, 800),
    ("tohm_5p_seed2", "tohm", {"players": 5}, 2, 400),
    ("exagon_2p_seed1", "exagon", {"players": 2, "clock": None}, 1, 800),
    ("exagon_3p_seed2", "exagon", {"players": 3, "clock": None}, 2, 800),
]


@pytest.mark.parametrize(("stem", "game", "options", "seed", "limit"), CASES, ids=[c[0] for c in CASES])
def test_playthrough_unchanged(stem: str, game: str, options: dict, seed: int, limit: int) -> None:
    path = HERE / f"{stem}.txt"
    assert path.exists(), f"missing golden file {path}; run python {__file__} --regen"
    expected = path.read_text(encoding="utf-8")
    actual = generate(game, options, seed, limit)
    if actual != expected:
        exp, act = expected.splitlines(), actual.splitlines()
        first = next((i for i, (a, b) in enumerate(zip(exp, act, strict=False)) if a != b), min(len(exp), len(act)))
        pytest.fail(
            f"{stem}: playthrough differs at line {first + 1}:\n"
            f"  expected: {exp[first] if first < len(exp) else '<end>'}\n"
            f"  actual:   {act[first] if first < len(act) else '<end>'}"
        )


def regen(only: str | None = None) -> None:
    for stem, game, options, seed, limit in CASES:
        if only and not stem.startswith(only):
            continue
        (HERE / f"{stem}.txt").write_text(generate(game, options, seed, limit), encoding="utf-8")
        print("wrote", stem)


if __name__ == "__main__":
    if "--regen" in sys.argv:
        regen(sys.argv[sys.argv.index("--regen") + 1] if len(sys.argv) > sys.argv.index("--regen") + 1 else None)
