"""The analysis API of the replay page.

- ``GET /api/tables/{id}/analysis``: ``{"mode", "status", "analysis"?}``: ``status`` is ``none`` (never
  asked), ``queued``, ``running``, ``ready`` (with ``analysis``: the ``ludoteca-analysis`` JSON of
  docs/analysis.md) or ``failed``; ``mode`` is the server's (``all``, ``request``, ``off``);
- ``POST /api/tables/{id}/analysis``: ask for the analysis of a finished table (queued once,
  whoever asks how often; a failed one is queued again).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from ludoteca.core.i18n import N_
from ludoteca.web.analysis.service import OFF, AnalysisService
from ludoteca.web.errors import Code, WebError
from ludoteca.web.lobby.routes import table_or_404

router = APIRouter(prefix="/api")

TURNED_OFF = N_("this server does not analyse games")
NOT_OVER = N_("a game can be analysed once it is over")


def service_of(request: Request) -> AnalysisService | None:
    service: AnalysisService | None = getattr(request.app.state, "analysis", None)
    return service


async def _answer(service: AnalysisService | None, table_id: str) -> dict[str, Any]:
    if service is None or not service.enabled:
        return {"mode": OFF, "status": "none"}
    row = await service.status(table_id)
    out: dict[str, Any] = {"mode": service.mode, "status": row.status if row else "none"}
    if row is not None and row.result is not None:
        out["analysis"] = row.result
    return out


@router.get("/tables/{table_id}/analysis")
async def get_analysis(request: Request, table_id: str) -> dict[str, Any]:
    await table_or_404(request, table_id)
    return await _answer(service_of(request), table_id)


@router.post("/tables/{table_id}/analysis")
async def request_analysis(request: Request, table_id: str) -> dict[str, Any]:
    table = await table_or_404(request, table_id)
    service = service_of(request)
    if service is None or not service.enabled:
        raise WebError(Code.NOT_FOUND, TURNED_OFF)
    if not table.is_over():
        raise WebError(Code.NOT_OVER, NOT_OVER)
    await service.request(table.id)
    return await _answer(service, table.id)


__all__ = ["router"]
