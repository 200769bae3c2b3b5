"""Rated tables and the players' ratings: who may sit, and the update when a table ends.

A table is **rated** when its creator, logged in, asks for it (``"rated": true``, a table setting:
life.py); every human seat must then be taken by a logged-in player (:func:`check_seat`), AI seats
play at their ladder rating (``ludoteca.agents.ladder.level_rating``), fixed: only accounts' ratings
change.

When a rated table ends (:func:`table_changed`, called by the table after every committed change),
every account seat's rating for (game, player count) is updated with :func:`ludoteca.core.rating.rate`
(openskill's Plackett-Luce): the ranks come from the game's returns (a shared win is a tie), and a
player who resigned (or whose abandoned seat ended the table) ranks last. One transaction
(:func:`rate_table`) inserts one ``ludo_rating_history`` row per account seat — unique on
(account, table) — and updates the ``ludo_ratings`` rows: a second attempt (another worker, a restart,
the same end seen twice) finds the history rows and changes nothing; two tables ending at once for
the same player never lose an update (each rating row is updated only if it is still the one read,
otherwise the transaction is tried again). At start-up the lobby rates the rated tables that ended
while no server was there to rate them (:func:`catch_up`).

**A real game between people** (no rating farming): a rated table needs at least :data:`MIN_ACCOUNTS`
open seats when it is created (400 ``bad_seats`` otherwise: a rated table of AIs, or of one person
against AIs, is refused), and its result is rated only when at least :data:`MIN_ACCOUNTS` accounts
played it and every account seat made at least :func:`min_own_moves` moves of its own (timeouts and
the moves an AI made for the seat after its player resigned or left do not count). A table that
falls short ends as usual and changes no rating.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import case, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from ludoteca.core.rating import PROVISIONAL_GAMES, PROVISIONAL_SIGMA, Rating, display, rate
from ludoteca.web.errors import Code, WebError
from ludoteca.web.repository.store import Repository, actions_t, notes_t, rating_history_t, ratings_t, seats_t, tables_t

log = logging.getLogger("ludoteca.web")

OVER = "over"
HUMAN, AI = "human", "ai"
CLOSED_BY_MODERATOR = "closed"
"""The ``reason`` of a table a moderator closed (moderation.py): never rated."""
MIN_ACCOUNTS = 2
"""Accounts a rated result needs (and open seats a rated table needs at its creation)."""
MIN_OWN_MOVES = 3
"""Moves each account seat must make itself for the table to be rated, unless the game's class says
otherwise with a ``rated_min_moves`` class attribute (its facts)."""
RETRIES = 5
"""Transactions tried when another table's update of the same player's rating came first."""
CATCH_UP_LIMIT = 200
"""Rated tables looked at, at most, by :func:`catch_up` at start-up (the most recently ended)."""
CATCH_UP_WINDOW = 7 * 24 * 3600.0
"""... among those that ended within this many seconds."""
_started: set[str] = set()
"""Tables whose rating this process has started (a table's later changes do not start it again)."""
_tasks: set[asyncio.Task[Any]] = set()


def is_rated(settings: dict[str, Any] | None) -> bool:
    return bool(settings and settings.get("rated") is True)


# --- who may sit ----------------------------------------------------------------------------------------
def check_creation(body: Any, account: Any) -> None:
    """A table creation asking for ``rated`` needs a logged-in creator (``account``: None when not)
    and at least :data:`MIN_ACCOUNTS` open seats (people, not AIs: 400 ``bad_seats``)."""
    if not isinstance(body, dict) or body.get("rated") is not True:
        return
    if account is None:
        raise WebError(Code.RATED_NEEDS_ACCOUNT, "log in to create a rated table")
    seats = body.get("seats")
    if isinstance(seats, list):
        people = sum(1 for s in seats if isinstance(s, dict) and s.get("kind") == "open")
        if people < MIN_ACCOUNTS:
            raise WebError(Code.BAD_SEATS, "a rated table is played by at least {n} people with accounts: "
                                           "leave at least {n} seats open", n=MIN_ACCOUNTS)


def min_own_moves(game: str) -> int:
    """The moves each account seat must make itself for ``game``'s table to be rated
    (:data:`MIN_OWN_MOVES`, or the game class's ``rated_min_moves``)."""
    try:
        from ludoteca.registry import game_class

        value = getattr(game_class(game), "rated_min_moves", MIN_OWN_MOVES)
    except (KeyError, ValueError, ImportError):
        return MIN_OWN_MOVES
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else MIN_OWN_MOVES


def kept_account(settings: dict[str, Any] | None, seat: Any) -> int | None:
    """The account a seat keeps when its player resigns or leaves it to an AI for good: at a rated table
    the account is still rated for it (ranked last; with no token, the account cannot take it back)."""
    account: int | None = seat.account_id if is_rated(settings) else None
    return account


def check_seat(settings: dict[str, Any] | None, account: Any, seats: Sequence[Any] = ()) -> None:
    """A human seat of a rated table is taken by a logged-in player only, one seat per account (a
    table where one account plays two seats is not rated: :func:`rate_table`)."""
    if not is_rated(settings):
        return
    if account is None:
        raise WebError(Code.RATED_NEEDS_ACCOUNT, "this table is rated: log in to take a seat")
    if any(getattr(s, "account_id", None) == account.id for s in seats):
        raise WebError(Code.SEAT_TAKEN, "you already have a seat at this rated table")


# --- the update when a rated table ends ---------------------------------------------------------------
@dataclass(frozen=True)
class Update:
    """One account's rating after a rated table."""

    account_id: int
    seat: int
    rank: int
    before: Rating
    after: Rating
    win: bool


LevelRating = Callable[[str, str, int], Rating | None]


def ladder_rating(game: str, level: str, players: int) -> Rating | None:
    """An AI level's measured rating (the AI ladder), None when the ladder has none."""
    try:
        ladder = importlib.import_module("ludoteca.agents.ladder")  # the AI ladder (its own engineer)
    except ImportError:
        return None
    try:
        found = ladder.level_rating(game, level, players)
    except (ValueError, KeyError, OSError):
        return None
    return found if isinstance(found, Rating) else None


def ranks_of(result: dict[str, Any], players: int, resigned: Sequence[int] = ()) -> tuple[list[float], list[int]]:
    """The returns each seat is ranked by, and the ranks (0 = first, equal = tie): the game's returns,
    except that the seats in ``resigned`` (in the order they resigned or left) rank last, the first to go
    lowest; a table that ended because a seat was abandoned ranks that seat last too."""
    raw = result.get("returns")
    if not isinstance(raw, list) or len(raw) != players or not all(isinstance(r, int | float) for r in raw):
        raise ValueError("the table's result has no returns for every seat")
    returns = [float(r) for r in raw]
    gone = list(dict.fromkeys(s for s in resigned if 0 <= s < players))
    seat = result.get("seat")
    if result.get("reason") in ("resigned", "abandoned") and isinstance(seat, int) and 0 <= seat < players \
            and seat not in gone:
        gone.append(seat)
    floor = min(returns) - 1.0
    for k, s in enumerate(reversed(gone)):  # the last to go just below the others, the first lowest
        returns[s] = floor - k
    order = sorted(set(returns), reverse=True)
    return returns, [order.index(r) for r in returns]


def rate_table(repo: Repository, table_id: str, level_rating: LevelRating = ladder_rating) -> list[Update]:
    """Rate the ended rated table ``table_id`` once: the updates made, or ``[]`` when there is nothing
    to do (not rated, not over, no account seat, or rated already)."""
    for _ in range(RETRIES):
        try:
            with repo.engine.begin() as conn:
                return _rate(conn, table_id, level_rating)
        except IntegrityError:
            with repo.engine.connect() as conn:
                if _rated_already(conn, table_id):
                    return []  # another worker rated it first
        except _Moved:
            pass  # another table changed one of these ratings meanwhile: read them again
    raise RuntimeError(f"table {table_id}: the ratings kept changing; not rated")


class _Moved(Exception):
    """A rating row changed between its read and its update."""


def _rated_already(conn: Connection, table_id: str) -> bool:
    q = select(rating_history_t.c.id).where(rating_history_t.c.table_id == table_id).limit(1)
    return conn.execute(q).first() is not None


def _rate(conn: Connection, table_id: str, level_rating: LevelRating) -> list[Update]:
    row = conn.execute(select(tables_t.c.game, tables_t.c.status, tables_t.c.result, tables_t.c.settings)
                       .where(tables_t.c.id == table_id)).first()
    if row is None or row.status != OVER or not row.result or not row.settings:
        return []
    if not is_rated(json.loads(row.settings)) or _rated_already(conn, table_id):
        return []
    if json.loads(row.result).get("reason") == CLOSED_BY_MODERATOR:
        return []  # a moderator closed it: no result to rate (moderation.py)
    seats = list(conn.execute(select(seats_t.c.seat, seats_t.c.kind, seats_t.c.level, seats_t.c.account_id)
                              .where(seats_t.c.table_id == table_id).order_by(seats_t.c.seat)))
    accounts = [s.account_id for s in seats if s.account_id is not None]
    if not accounts or len(set(accounts)) != len(accounts):
        return []  # nobody to rate, or one account in two seats: not a rating
    if len(accounts) < MIN_ACCOUNTS:
        log.info("table %s: rated, but fewer than %d accounts played it: not rated", table_id, MIN_ACCOUNTS)
        return []
    if any(s.kind == HUMAN and s.account_id is None for s in seats):
        log.warning("table %s: rated, but a human seat has no account: not rated", table_id)
        return []
    game, players = row.game, len(seats)
    resigned = _gone(conn, table_id)
    moves, need = _own_moves(conn, table_id), min_own_moves(game)
    if any(moves.get(s.seat, 0) < need for s in seats if s.account_id is not None):
        log.info("table %s: rated, but a player made fewer than %d moves: not rated", table_id, need)
        return []
    result = json.loads(row.result)
    try:
        returns, ranks = ranks_of(result, players, resigned)
    except ValueError:
        log.warning("table %s: its result cannot be rated", table_id)
        return []
    stored = {r.account_id: r for r in conn.execute(
        select(ratings_t).where(ratings_t.c.account_id.in_(accounts), ratings_t.c.game == game,
                                ratings_t.c.players == players))}
    before: list[Rating] = []
    for s in seats:
        if s.account_id is not None:
            r = stored.get(s.account_id)
            before.append(Rating(r.mu, r.sigma, r.games) if r is not None else Rating())
        else:  # an AI seat: its ladder rating, fixed
            before.append(level_rating(game, s.level or "", players) or Rating())
    after = rate(before, returns)
    winners = set(result.get("winners") or [])
    now = time.time()
    updates: list[Update] = []
    for s, old, new, rank in zip(seats, before, after, ranks, strict=True):
        if s.account_id is None:
            continue
        win = s.seat in winners and s.seat not in resigned and rank == 0
        updates.append(Update(int(s.account_id), int(s.seat), rank, old, new, win))
    conn.execute(insert(rating_history_t), [
        {"account_id": u.account_id, "table_id": table_id, "game": game, "players": players, "mu": u.after.mu,
         "sigma": u.after.sigma, "display": u.after.display, "rank": u.rank, "at": now} for u in updates])
    for u in updates:
        values = {"mu": u.after.mu, "sigma": u.after.sigma, "games": u.after.games, "updated_at": now}
        old_row = stored.get(u.account_id)
        if old_row is None:
            conn.execute(insert(ratings_t).values(account_id=u.account_id, game=game, players=players,
                                                  wins=int(u.win), **values))
            continue
        done = conn.execute(update(ratings_t).where(
            ratings_t.c.account_id == u.account_id, ratings_t.c.game == game, ratings_t.c.players == players,
            ratings_t.c.games == old_row.games,
        ).values(wins=ratings_t.c.wins + int(u.win), **values))
        if done.rowcount != 1:
            raise _Moved()
    return updates


def _own_moves(conn: Connection, table_id: str) -> dict[int, int]:
    """The moves each seat made itself: its actions but timeouts, before its player resigned or left
    (an AI played the seat from then on)."""
    until: dict[int, int] = {}
    for n in conn.execute(select(notes_t.c.kind, notes_t.c.data, notes_t.c.at_seq).where(
            notes_t.c.table_id == table_id, notes_t.c.kind.in_(("resigned", "ai_took_over"))).order_by(notes_t.c.id)):
        data = json.loads(n.data)
        seat = data.get("seat")
        if isinstance(seat, int) and (n.kind == "resigned" or data.get("why") == "left"):
            until.setdefault(seat, int(n.at_seq))
    counts: dict[int, int] = {}
    for a in conn.execute(select(actions_t.c.seq, actions_t.c.seat, actions_t.c.action).where(
            actions_t.c.table_id == table_id, actions_t.c.seat.is_not(None))):
        if a.seq >= until.get(a.seat, a.seq + 1):
            continue
        try:
            action = json.loads(a.action)
        except ValueError:
            continue
        if isinstance(action, dict) and action.get("timeout") is True:
            continue
        counts[a.seat] = counts.get(a.seat, 0) + 1
    return counts


def _gone(conn: Connection, table_id: str) -> list[int]:
    """The seats whose players resigned or left the game for good (an AI played on), in that order."""
    out = []
    for n in conn.execute(select(notes_t.c.kind, notes_t.c.data).where(
            notes_t.c.table_id == table_id, notes_t.c.kind.in_(("resigned", "ai_took_over"))).order_by(notes_t.c.id)):
        data = json.loads(n.data)
        seat = data.get("seat")
        if isinstance(seat, int) and (n.kind == "resigned" or data.get("why") == "left"):
            out.append(seat)
    return out


def table_changed(table: Any) -> None:
    """A table committed a change (tables.py, after the master's commit): when a rated table has
    just ended, rate it in the storage thread (once per process; :func:`rate_table` makes it once
    across processes)."""
    if table.status != OVER or not is_rated(table.settings) or table.id in _started:
        return
    if len(_started) > 100_000:
        _started.clear()
    _started.add(table.id)
    task = asyncio.ensure_future(_rate_later(table.host, table.id))
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)


async def _rate_later(host: Any, table_id: str) -> None:
    try:
        await host.db(rate_table, host.repo, table_id)
    except WebError:  # the server is shutting down: the next start-up catches up
        _started.discard(table_id)
    except Exception:
        _started.discard(table_id)
        log.exception("table %s: the ratings could not be updated", table_id)


def pending_tables(repo: Repository, since: float, limit: int = CATCH_UP_LIMIT) -> list[str]:
    """Rated tables that ended after ``since`` and have no rating history yet (at most ``limit``)."""
    rated_already = select(rating_history_t.c.table_id)
    q = (select(tables_t.c.id).where(tables_t.c.status == OVER, tables_t.c.updated_at >= since,
                                     tables_t.c.settings.like('%"rated":true%'),
                                     tables_t.c.id.not_in(rated_already))
         .order_by(tables_t.c.updated_at.desc()).limit(limit))
    with repo.engine.connect() as conn:
        return [r.id for r in conn.execute(q)]


async def catch_up(host: Any) -> None:
    """At start-up: rate the rated tables that ended recently but were never rated (a server stopped
    between a table's end and its rating)."""
    done = 0
    try:
        ids = await host.db(pending_tables, host.repo, time.time() - CATCH_UP_WINDOW)
        for table_id in ids:
            if await host.db(rate_table, host.repo, table_id):
                done += 1
    except Exception:
        log.exception("rated tables not caught up")
    if done:
        log.info("%d rated tables rated at start-up", done)


# --- reading ------------------------------------------------------------------------------------------
def provisional_clause() -> Any:
    """SQL: the rating row is provisional (:attr:`Rating.provisional`)."""
    return case((ratings_t.c.games < PROVISIONAL_GAMES, 1), (ratings_t.c.sigma > PROVISIONAL_SIGMA, 1), else_=0)


def conservative(mu: float, sigma: float) -> int:
    """The displayed conservative rating (mu - 3 sigma), the leaderboards' order."""
    return display(mu - 3 * sigma)


