"""The guided first game of each game ("Learn to play"): the page and its stateless API.

Each game's guide is its own ``guide.json`` (:mod:`ludoteca.core.guide`, read with :meth:`Game.guide
<ludoteca.core.game.Game.guide>`): scripted positions that teach one rule at a time. The server plays
the learner's move with the real engine (checked ``apply_action``), so a guide never teaches a wrong
rule; nothing is kept between requests — the page sends the step number and its move each time.

- ``GET /learn/{game}``: the page (``static/guide.html``, ``static/js/guide.js``);
- ``GET /api/guide/{game}``: ``{"game", "title", "lang", "players", "learner", "steps": [{"title"}],
  "level"}`` (``level``: the easiest level of the AI ladder the server offers, for the real game the
  last step offers — never the uniformly ``random`` player, which is kept for the lab);
- ``GET /api/guide/{game}/{step}``: the step as it begins (step numbers from 1): ``{"step", "count",
  "title", "before", "hint", "position", "to_move", "moves", "offered", "legal", "log", "clock"}`` —
  ``position`` as the learner sees it, ``moves`` the move(s) asked, ``offered`` the other moves the
  board shows first (see core/guide.py), ``legal`` every legal move of the learner there, ``log`` the
  entries of the step's ``setup`` (e.g. the learner's own roll), as a table's log, ``clock`` the
  hourglass of the seat to move (``{"remaining", "full", "seat"}`` in seconds; null without one);
- ``POST /api/guide/{game}/{step}`` with ``{"action": {...}}``: the asked move gives ``{"asked": true,
  "after", "position", "to_move", "log", "over", "winners", "clock"}`` (``log``: the move and what
  followed, with the engine's events as the learner may see them); another legal move gives ``{"asked": false,
  "message", "hint"}`` and changes nothing; an ill-formed or illegal action, or a step out of range, is
  an error (the shape of errors.py) in the request's language.

The language: ``?lang=en|it``, else the ``ludoteca_lang`` cookie, else ``Accept-Language``
(web/languages.py). The lessons' texts live in the guide files in every language.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse

from ludoteca.agents.levels import LEVELS
from ludoteca.core.constants import TERMINAL
from ludoteca.core.errors import IllegalActionError
from ludoteca.core.events import Event
from ludoteca.core.guide import Guide, moves_json, play_step
from ludoteca.core.i18n import N_
from ludoteca.i18n import web_text
from ludoteca.registry import GAMES, game_class
from ludoteca.web.errors import Code, WebError, error_body
from ludoteca.web.languages import language_of
from ludoteca.web.lobby import notfound
from ludoteca.web.lobby.lobby import lobby_of, read_json
from ludoteca.web.lobby.notfound import not_found
from ludoteca.web.lobby.rules import COOKIE

router = APIRouter(include_in_schema=False)
PAGE = Path(__file__).parent.parent / "static" / "guide.html"
NOT_THIS = N_("Not this one: this lesson asks for another move.")
MAX_STEP_TEXT = 12
"""Characters of a step number the server reads (anything longer is refused, not parsed)."""


def _lang(request: Request) -> str:
    return language_of(request.query_params.get("lang"), request.cookies.get(COOKIE),
                       request.headers.get("accept-language"))


def _error(exc: WebError, lang: str) -> JSONResponse:
    return JSONResponse(exc.to_json(lang=lang), status_code=exc.status, headers=exc.headers)


def _guide(game: str) -> Guide:
    name = game.lower()
    if name not in GAMES:
        raise WebError(Code.NOT_FOUND, "there is no game called {name}", name=game[:40])
    guide = game_class(name).guide()
    if guide is None:
        raise WebError(Code.NOT_FOUND, "{title} has no guided game yet", title=game_class(name).title)
    return guide


def _step(guide: Guide, step: str) -> int:
    """The index of step ``step`` (numbered from 1 in URLs)."""
    count = len(guide.steps)
    if len(step) > MAX_STEP_TEXT or not step.isdigit() or not 1 <= int(step) <= count:
        raise WebError(Code.BAD_REQUEST, "there is no step {step}: the steps are 1 to {count}",
                       step=step[:MAX_STEP_TEXT], count=count)
    return int(step) - 1


def _views(events: tuple[Event, ...], viewer: int) -> tuple[list[dict[str, Any]], bool]:
    """The events as ``viewer`` may see them, and whether the action itself is hidden from them."""
    views = [v for e in events if (v := e.view(viewer)) is not None]
    hidden = bool(events) and not events[0].visible_to(viewer)
    return views, hidden


def _log(applied: tuple[tuple[int | None, Mapping[str, Any], tuple[Event, ...]], ...], viewer: int,
         start: int = 0) -> list[dict[str, Any]]:
    """Log entries as a table sends them (hub.py): ``{"i", "seat", "events"}``, ``"hidden": true`` when
    the action is secret for ``viewer``."""
    out = []
    for i, (seat, _action, events) in enumerate(applied, start):
        views, hidden = _views(events, viewer)
        entry: dict[str, Any] = {"i": i, "seat": seat, "events": views}
        if hidden:
            entry["hidden"] = True
        out.append(entry)
    return out


def _to_move(state: Any) -> int | None:
    player = state.current_player()
    return player if player >= 0 else None


def _clock(guide: Guide, state: Any) -> dict[str, Any] | None:
    """The hourglass of the seat to move, as a table shows it: ``{"remaining", "full", "seat"}``."""
    left = state.time_left()
    if left is None:
        return None
    full = guide.game.clock() or left
    return {"remaining": float(left), "full": float(max(full, left)), "seat": _to_move(state)}


def _easiest(levels: list[str]) -> str | None:
    """The easiest level of the AI ladder among ``levels`` (the uniformly random player is for the lab)."""
    ladder = [level for level in levels if level in LEVELS]
    return ladder[0] if ladder else (levels[0] if levels else None)


@router.get("/learn/{game}", response_model=None)
async def guide_page(request: Request, game: str) -> FileResponse | HTMLResponse:
    if game.lower() not in GAMES or game_class(game.lower()).guide() is None:
        return not_found(request, notfound.GAME, game)  # a page that says so, status 404
    return FileResponse(PAGE)


@router.get("/api/guide/{game}", response_model=None)
async def overview(request: Request, game: str) -> dict[str, Any] | JSONResponse:
    lang = _lang(request)
    try:
        guide = _guide(game)
    except WebError as exc:
        return _error(exc, lang)
    levels = lobby_of(request).levels()
    return {"game": guide.game.name, "title": guide.game.title, "lang": lang, "players": guide.game.num_players,
            "learner": guide.learner, "steps": [{"title": s.text("title", lang)} for s in guide.steps],
            "level": _easiest(levels)}


@router.get("/api/guide/{game}/{step}", response_model=None)
async def begin(request: Request, game: str, step: str) -> dict[str, Any] | JSONResponse:
    lang = _lang(request)
    try:
        guide = _guide(game)
        index = _step(guide, step)
    except WebError as exc:
        return _error(exc, lang)
    the_step = guide.steps[index]
    state, applied = guide.opening(index)
    return {"step": index + 1, "count": len(guide.steps), "title": the_step.text("title", lang),
            "before": the_step.text("before", lang), "hint": the_step.text("hint", lang),
            "position": state.observation(guide.learner), "to_move": _to_move(state),
            "moves": [dict(m) for m in the_step.moves], "offered": [dict(m) for m in the_step.offered],
            "legal": moves_json(state, guide.learner), "log": _log(applied, guide.learner),
            "clock": _clock(guide, state)}


@router.post("/api/guide/{game}/{step}", response_model=None)
async def move(request: Request, game: str, step: str) -> dict[str, Any] | JSONResponse:
    lang = _lang(request)
    try:
        guide = _guide(game)
        index = _step(guide, step)
        body = await read_json(request)
        action = body.get("action") if isinstance(body, dict) else None
        if not isinstance(action, dict):
            raise WebError(Code.BAD_MESSAGE, "send the move as a JSON object: {\"action\": {...}}")
    except WebError as exc:
        return _error(exc, lang)
    try:
        played = play_step(guide, index, action)
    except (IllegalActionError, ValueError) as exc:
        body = error_body(Code.ILLEGAL, "that move is not possible in this position", lang=lang)
        body["detail"] = str(exc)[:300]  # the engine's own words (English)
        return JSONResponse(body, status_code=400)
    the_step = guide.steps[index]
    if not played.asked:
        return {"asked": False, "message": web_text(lang, NOT_THIS), "hint": the_step.text("hint", lang)}
    _opening, setup = guide.opening(index)
    state = played.state
    over = state.current_player() == TERMINAL
    winners = [i for i, r in enumerate(state.returns()) if r > 0] if over else []
    return {"asked": True, "after": the_step.text("after", lang), "position": state.observation(guide.learner),
            "to_move": _to_move(state), "log": _log(played.applied, guide.learner, len(setup)),
            "over": over, "winners": winners, "clock": _clock(guide, state)}
