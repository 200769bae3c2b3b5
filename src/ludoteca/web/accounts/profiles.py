"""Players' profiles and the leaderboards: pages and their JSON.

- ``GET /players/{name}`` (static/profile.html; 404 with the same page when there is no such account)
  and ``GET /api/players/{name}``: per game and player count the games played, wins, the current
  rating (with its interval and whether it is provisional) and its history (after each rated game;
  ``start``, a newcomer's rating, when the history goes back to the first one); the player's finished
  tables (rated or not), newest first, with links to their replays;
- ``GET /leaderboard`` (static/leaderboard.html) and ``GET /api/leaderboard?game=&players=&limit=``:
  the accounts rated in a game at a player count, established ratings first, then provisional ones,
  each group ordered by the conservative rating (mu − 3σ).

Every answer is bounded: :data:`HISTORY_POINTS` points per rating, :data:`TABLES_SHOWN` tables,
at most :data:`MAX_LIMIT` leaderboard rows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse
from sqlalchemy import select

from ludoteca.core.rating import Rating, display
from ludoteca.registry import GAMES, game_class
from ludoteca.web.accounts.ratings import OVER, is_rated, provisional_clause
from ludoteca.web.errors import Code, WebError
from ludoteca.web.limits import shown_id
from ludoteca.web.repository.store import Repository, accounts_t, rating_history_t, ratings_t, seats_t, tables_t

STATIC = Path(__file__).parent.parent / "static"
HISTORY_POINTS = 200
"""Points of a rating's history sent (the most recent)."""
TABLES_SHOWN = 50
"""Finished tables listed on a profile (the most recent)."""
DEFAULT_LIMIT = 50
MAX_LIMIT = 100
MAX_NAME = 64

router = APIRouter(include_in_schema=False)


def _title(game: str) -> str:
    try:
        return game_class(game).title
    except ValueError:
        return game


def _rating_json(mu: float, sigma: float, games: int) -> dict[str, Any]:
    out = Rating(mu, sigma, games).to_json()
    out["conservative"] = display(mu - 3 * sigma)
    return out


def profile(repo: Repository, name: str) -> dict[str, Any] | None:
    """A player's profile (None: no such account)."""
    account = repo.account_by_name(name)
    if account is None:
        return None
    with repo.engine.connect() as conn:
        rows = list(conn.execute(select(ratings_t).where(ratings_t.c.account_id == account.id)
                                 .order_by(ratings_t.c.game, ratings_t.c.players)))
        ratings = []
        for r in rows:
            points = list(conn.execute(
                select(rating_history_t.c.table_id, rating_history_t.c.mu, rating_history_t.c.sigma,
                       rating_history_t.c.display, rating_history_t.c.rank, rating_history_t.c.at)
                .where(rating_history_t.c.account_id == account.id, rating_history_t.c.game == r.game,
                       rating_history_t.c.players == r.players)
                .order_by(rating_history_t.c.at.desc(), rating_history_t.c.id.desc()).limit(HISTORY_POINTS)))
            ratings.append({
                "game": r.game, "title": _title(r.game), "players": r.players, "games": r.games, "wins": r.wins,
                "rating": _rating_json(r.mu, r.sigma, r.games),
                "history": [{"table": p.table_id, "at": round(p.at, 3), "display": p.display, "rank": p.rank,
                             "low": display(p.mu - 1.96 * p.sigma), "high": display(p.mu + 1.96 * p.sigma)}
                            for p in reversed(points)],
                "start": Rating().to_json() if len(points) == r.games else None,
            })
        mine = list(conn.execute(
            select(seats_t.c.table_id, seats_t.c.seat).join(tables_t, tables_t.c.id == seats_t.c.table_id)
            .where(seats_t.c.account_id == account.id, tables_t.c.status == OVER)
            .order_by(tables_t.c.updated_at.desc()).limit(TABLES_SHOWN)))
        ids = [m.table_id for m in mine]
        tables = {t.id: t for t in conn.execute(select(tables_t).where(tables_t.c.id.in_(ids)))} if ids else {}
        names: dict[str, list[Any]] = {i: [] for i in ids}
        if ids:
            for s in conn.execute(select(seats_t.c.table_id, seats_t.c.name, seats_t.c.kind)
                                  .where(seats_t.c.table_id.in_(ids)).order_by(seats_t.c.seat)):
                names[s.table_id].append(s.name)
        after = {h.table_id: h for h in conn.execute(
            select(rating_history_t.c.table_id, rating_history_t.c.display, rating_history_t.c.rank)
            .where(rating_history_t.c.account_id == account.id, rating_history_t.c.table_id.in_(ids)))} if ids else {}
    finished = []
    for m in mine:
        t = tables[m.table_id]
        result = json.loads(t.result) if t.result else {}
        winners = result.get("winners") or []
        rated = after.get(t.id)
        finished.append({
            "id": t.id, "game": t.game, "title": _title(t.game), "players": len(names[t.id]), "seat": m.seat,
            "names": names[t.id], "ended_at": round(t.updated_at, 3), "won": m.seat in winners,
            "shared": m.seat in winners and len(winners) > 1, "reason": result.get("reason"),
            "rated": is_rated(json.loads(t.settings) if t.settings else None),
            "rating_after": rated.display if rated is not None else None, "replay": f"/replay/{t.id}",
        })
    return {"name": account.name, "created_at": round(account.created_at, 3), "ratings": ratings,
            "tables": finished}


def leaderboard(repo: Repository, game: str, players: int, limit: int) -> list[dict[str, Any]]:
    """The leaderboard of ``game`` at ``players``: established ratings first, then provisional ones,
    each by the conservative rating (mu − 3σ), best first."""
    provisional = provisional_clause()
    q = (select(accounts_t.c.name, ratings_t.c.mu, ratings_t.c.sigma, ratings_t.c.games, ratings_t.c.wins)
         .join(accounts_t, accounts_t.c.id == ratings_t.c.account_id)
         .where(ratings_t.c.game == game, ratings_t.c.players == players)
         .order_by(provisional, (ratings_t.c.mu - 3 * ratings_t.c.sigma).desc(), accounts_t.c.name)
         .limit(limit))
    with repo.engine.connect() as conn:
        rows = list(conn.execute(q))
    return [{"place": k + 1, "name": r.name, "games": r.games, "wins": r.wins,
             "rating": _rating_json(r.mu, r.sigma, r.games)} for k, r in enumerate(rows)]


def _games() -> list[dict[str, Any]]:
    return [{"name": g, "title": _title(g), "min_players": game_class(g).min_players,
             "max_players": game_class(g).max_players} for g in GAMES]


def _lobby(request: Request) -> Any:
    return request.app.state.lobby


def _valid_name(name: str) -> bool:
    return 0 < len(name) <= MAX_NAME


@router.get("/players/{name}")
async def profile_page(request: Request, name: str) -> FileResponse:
    """The profile page; its status is 404 when there is no such player (the page says so)."""
    lobby = _lobby(request)
    found = _valid_name(name) and await lobby.db(lobby.repo.account_by_name, name) is not None
    return FileResponse(STATIC / "profile.html", status_code=200 if found else 404)


@router.get("/leaderboard")
async def leaderboard_page() -> FileResponse:
    return FileResponse(STATIC / "leaderboard.html")


@router.get("/api/players/{name}")
async def player(request: Request, name: str) -> dict[str, Any]:
    lobby = _lobby(request)
    data = await lobby.db(profile, lobby.repo, name) if _valid_name(name) else None
    if data is None:
        raise WebError(Code.NOT_FOUND, "there is no player {name}", name=shown_id(name))
    result: dict[str, Any] = data
    return result


@router.get("/api/leaderboard")
async def leaderboard_api(request: Request, game: str | None = None, players: str | None = None,
                          limit: str | None = None) -> dict[str, Any]:
    name = (game or GAMES[0]).lower()
    if name not in GAMES:
        raise WebError(Code.BAD_GAME, "unknown game {game}; the games are: {games}", game=shown_id(game),
                       games=", ".join(GAMES))
    cls = game_class(name)
    n = _whole(players, cls.min_players)
    if n is None or not cls.min_players <= n <= cls.max_players:
        raise WebError(Code.BAD_PLAYERS, "{game} is played by {min} to {max} players", game=name,
                       min=cls.min_players, max=cls.max_players)
    size = _whole(limit, DEFAULT_LIMIT)
    if size is None or not 1 <= size <= MAX_LIMIT:
        raise WebError(Code.BAD_REQUEST, "'limit' is a whole number from 1 to {max}", max=MAX_LIMIT)
    lobby = _lobby(request)
    rows = await lobby.db(leaderboard, lobby.repo, name, n, size)
    return {"game": name, "title": cls.title, "players": n, "limit": size, "entries": rows, "games": _games()}


def _whole(text: str | None, default: int) -> int | None:
    if text is None or text == "":
        return default
    if len(text) > 6 or not text.isdigit():
        return None
    return int(text)
