"""``/lab`` and its API (only when the server owner started the lab: ``ludoteca serve --lab``).

Who may do what: any logged-in account may queue a run or a balance search, at most one of its own
queued or running at a time, while the server holds at most ``max_active`` runs not over and plays
at most ``max_games`` games a run; every logged-in account sees every run of the server's lab (the
club shares its findings), its report and its downloads; only a run's owner cancels it.

- ``GET /api/lab``: the lab's limits and the agents it offers (``"on": false`` when it is off);
- ``GET /api/lab/runs``: the recent runs; ``POST /api/lab/runs``: queue one (web/labs/orders.py);
- ``GET /api/lab/runs/{id}``: a run, its progress, its results once done;
  ``POST /api/lab/runs/{id}/cancel``;
- ``GET /api/lab/compare?a=ID&b=ID``: two runs side by side, with the difference of their first
  player's win rates;
- ``GET /lab/runs/{id}/report`` (the lab's HTML report), ``…/games.csv``, ``…/summary.json``.
"""

from __future__ import annotations

import functools
import re
import secrets
import shutil
import time
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, Response

from ludoteca.core.i18n import N_
from ludoteca.i18n import web_text
from ludoteca.web.accounts.sessions import Account, current_account
from ludoteca.web.errors import Code, WebError
from ludoteca.web.labs import views
from ludoteca.web.labs.orders import AGENTS, check_order, check_with_lab
from ludoteca.web.labs.pool import LabPool, out_folder, run_folder
from ludoteca.web.labs.settings import LabSettings
from ludoteca.web.languages import request_language
from ludoteca.web.lobby.lobby import Lobby, lobby_of, read_json
from ludoteca.web.master.ai import available_levels
from ludoteca.web.repository import lab_runs

router = APIRouter()

STATIC = Path(__file__).resolve().parent.parent / "static"
RUN_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")
REPORT_CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; "
              "frame-ancestors 'none'")
"""The lab's report is one self-contained page (its style inline, its plots as data: images), no script."""
LIST_LIMIT = 50
LAB_OFF = N_("the lab is off on this server: its owner starts it with ludoteca serve --lab")


def lab_of(request: Request) -> LabSettings:
    settings: LabSettings | None = getattr(request.app.state, "lab", None)
    if settings is None:
        raise WebError(Code.NOT_FOUND, LAB_OFF)
    return settings


def pool_of(request: Request) -> LabPool | None:
    return getattr(request.app.state, "lab_pool", None)


async def _account(request: Request) -> Account:
    account = await current_account(request)
    if account is None:
        raise WebError(Code.NOT_LOGGED_IN, "log in to use the lab")
    return account


async def _run(request: Request, lobby: Lobby, run_id: str) -> dict[str, Any]:
    row = await lobby.db(lab_runs.get_run, lobby.repo.engine, run_id) if RUN_ID.fullmatch(run_id) else None
    if row is None:
        raise WebError(Code.NOT_FOUND, "there is no lab run {run}", run=run_id[:32])
    return row  # type: ignore[no-any-return]


@router.get("/lab", include_in_schema=False)
async def lab_page() -> FileResponse:
    return FileResponse(STATIC / "lab.html")


@router.get("/api/lab")
async def lab_info(request: Request) -> dict[str, Any]:
    """The lab's limits and agents; ``{"on": false, "message"}`` when it is off (the lobby asks it to show
    its link; every other address of the lab answers 404 then)."""
    settings: LabSettings | None = getattr(request.app.state, "lab", None)
    if settings is None:
        return {"on": False, "message": web_text(request_language(request), LAB_OFF)}
    account = await current_account(request)
    return {"on": True, "account": account.name if account else None, "agents": list(AGENTS),
            "levels": available_levels(),
            "max_games": settings.max_games, "max_active": settings.max_active,
            "max_variants": settings.max_variants, "backend": "ray" if settings.ray else "local",
            "jobs": settings.jobs}


@router.get("/api/lab/runs")
async def list_runs(request: Request) -> dict[str, Any]:
    lab_of(request)
    account = await _account(request)
    lobby = lobby_of(request)
    rows = await lobby.db(lab_runs.list_runs, lobby.repo.engine, LIST_LIMIT)
    lang = request_language(request)
    return {"runs": [views.run_view(r, lang, account.id) for r in rows]}


@router.post("/api/lab/runs", status_code=201)
async def create_run(request: Request) -> dict[str, Any]:
    settings = lab_of(request)
    account = await _account(request)
    lobby = lobby_of(request)
    order = check_order(await read_json(request), settings)
    engine = lobby.repo.engine
    if await lobby.db(lab_runs.active_count, engine, account.id):
        raise WebError(Code.CONFLICT, "you already have a lab run queued or running: wait for it or cancel it")
    if await lobby.db(lab_runs.active_count, engine) >= settings.max_active:
        raise WebError(Code.BUSY, "the lab's queue is full ({n} runs): try again later", n=settings.max_active)
    lang = request_language(request)
    run_id = secrets.token_urlsafe(9)
    folder = run_folder(settings, run_id)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        await lobby.build(functools.partial(check_with_lab, order, folder, lang))
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    now = time.time()
    await lobby.db(lab_runs.create_run, engine, {
        "id": run_id, "account_id": account.id, "owner": account.name, "kind": order.kind, "game": order.game,
        "request": order.to_json(), "lang": lang, "total": order.total, "created_at": now})
    pool = pool_of(request)
    if pool is not None:
        pool.nudge()
    row = await lobby.db(lab_runs.get_run, engine, run_id)
    return views.run_view(row, lang, account.id)


@router.get("/api/lab/runs/{run_id}")
async def get_run(request: Request, run_id: str) -> dict[str, Any]:
    settings = lab_of(request)
    account = await _account(request)
    lobby = lobby_of(request)
    row = await _run(request, lobby, run_id)
    return views.run_view(row, request_language(request), account.id, out_folder(settings, run_id))


@router.post("/api/lab/runs/{run_id}/cancel")
async def cancel_run(request: Request, run_id: str) -> dict[str, Any]:
    lab_of(request)
    account = await _account(request)
    lobby = lobby_of(request)
    row = await _run(request, lobby, run_id)
    if row["account_id"] != account.id:
        raise WebError(Code.NOT_SEATED, "only the account that started a lab run can cancel it")
    if row["status"] not in lab_runs.ACTIVE:
        raise WebError(Code.CONFLICT, "this lab run is over already")
    status = await lobby.db(lab_runs.cancel, lobby.repo.engine, run_id, time.time())
    pool = pool_of(request)
    if pool is not None:
        pool.nudge()
    return {"id": run_id, "status": status}


@router.get("/api/lab/compare")
async def compare(request: Request, a: str, b: str) -> dict[str, Any]:
    settings = lab_of(request)
    account = await _account(request)
    lobby = lobby_of(request)
    lang = request_language(request)
    rows = [await _run(request, lobby, run_id) for run_id in (a, b)]
    shown = [views.run_view(r, lang, account.id, out_folder(settings, r["id"])) for r in rows]
    answer: dict[str, Any] = {"a": shown[0], "b": shown[1], "difference": None}
    if all(r["status"] == lab_runs.DONE and r["kind"] == "run" for r in rows):
        returns = [await lobby.build(views.first_player_returns, out_folder(settings, r["id"])) for r in rows]
        answer["difference"] = views.difference(returns[0], returns[1])
    return answer


def _file(settings: LabSettings, row: dict[str, Any], name: str) -> Path:
    path = out_folder(settings, row["id"]) / name
    if row["status"] != lab_runs.DONE or not path.is_file():
        raise WebError(Code.NOT_FOUND, "this lab run has no such file yet")
    return path


@router.get("/lab/runs/{run_id}/report", include_in_schema=False)
async def report(request: Request, run_id: str) -> Response:
    settings = lab_of(request)
    await _account(request)
    row = await _run(request, lobby_of(request), run_id)
    path = _file(settings, row, "report.html")
    return FileResponse(path, media_type="text/html; charset=utf-8",
                        headers={"Content-Security-Policy": REPORT_CSP, "Cache-Control": "no-cache"})


@router.get("/lab/runs/{run_id}/games.csv", include_in_schema=False)
async def games_csv(request: Request, run_id: str) -> Response:
    settings = lab_of(request)
    await _account(request)
    row = await _run(request, lobby_of(request), run_id)
    return FileResponse(_file(settings, row, "games.csv"), media_type="text/csv; charset=utf-8",
                        filename=f"lab-{run_id}-games.csv")


@router.get("/lab/runs/{run_id}/summary.json", include_in_schema=False)
async def summary_json(request: Request, run_id: str) -> Response:
    settings = lab_of(request)
    await _account(request)
    row = await _run(request, lobby_of(request), run_id)
    name = "balance.json" if row["kind"] == "balance" else "summary.json"
    return FileResponse(_file(settings, row, name), media_type="application/json",
                        filename=f"lab-{run_id}-{name}")
