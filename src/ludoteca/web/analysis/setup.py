"""The analysis service of a server: made for its lobby, told of every table's end."""

from __future__ import annotations

from typing import Any

from ludoteca.web.analysis.gate import QUIET, Gate
from ludoteca.web.analysis.service import DEFAULT_MODE, AnalysisService


def for_lobby(lobby: Any, worker: str, mode: str = DEFAULT_MODE, processes: int = 1,
              iterations: int | None = None, quiet: float = QUIET) -> AnalysisService:
    """The service of ``lobby`` (web/lobby/lobby.py): records read through the lobby (a finished
    table's, built in its build thread), storage calls in its storage thread, and a listener of
    every table (every change pauses the analysis for ``quiet`` seconds, gate.py; a game's end queues
    it in mode ``all``); the lobby's AI runner pauses it while a search runs. Start it once the lobby
    has started."""

    async def record(table_id: str) -> dict[str, Any] | None:
        table = await lobby.get(table_id)
        if table is None or not table.is_over():
            return None
        data: dict[str, Any] = await lobby.build(lambda: table.record().to_json())
        return data

    service = AnalysisService(lobby.repo, worker, mode=mode, processes=processes, records=record,
                              db=lobby.db, iterations=iterations, gate=Gate(quiet))
    if service.enabled:
        lobby.table_listeners.append(service)
        lobby.ai.watchers.append(service.gate.searches)
    return service


__all__ = ["for_lobby"]
