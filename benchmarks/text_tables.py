"""The summary tables the benchmarks print: a label column, then the figures right-aligned in columns."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def table(head: Sequence[str] | None, rows: Iterable[Sequence[object]], widths: Sequence[int],
          digits: int | None = None) -> str:
    """A plain-text table: the header ``head`` (None: none) and the ``rows``, each line's first cell
    left-aligned in ``widths[0]`` characters and the others right-aligned in the next widths (the last
    width serves for any further column); a float with ``digits`` decimals (None: as ``str`` writes it)."""
    def line(cells: Sequence[object]) -> str:
        out = []
        for k, cell in enumerate(cells):
            text = f"{cell:.{digits}f}" if digits is not None and isinstance(cell, float) else str(cell)
            width = widths[min(k, len(widths) - 1)]
            out.append(f"{text:<{width}}" if k == 0 else f"{text:>{width}}")
        return "".join(out)

    return "\n".join(line(cells) for cells in ([head] if head is not None else []) + [list(r) for r in rows])
