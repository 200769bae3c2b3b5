"""The lobby: the games on offer, creating, joining, rematching and listing tables.

:class:`Lobby` keeps the tables in memory (loading one from storage when someone opens it),
creates them from a request, makes rematches and lists recent tables; :data:`router` holds its
HTTP routes (an ``APIRouter`` included by ``create_app``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import math
import secrets
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from ludoteca.core.game import Game
from ludoteca.core.i18n import N_
from ludoteca.core.options import OptionError
from ludoteca.i18n import Message, web_text
from ludoteca.registry import GAMES, game_class, load_game
from ludoteca.web.accounts import ratings
from ludoteca.web.accounts.sessions import Account, current_account
from ludoteca.web.errors import Code, WebError
from ludoteca.web.hub.cluster import Cluster
from ludoteca.web.languages import request_language
from ludoteca.web.limits import (
    MAX_SPECTATORS,
    RESUME_LIMIT,
    SERVER_ONLY_OPTIONS,
    WAITING_TTL,
    BadInput,
    check_options,
    check_stored_options,
    parse_json,
    shown_id,
    valid_table_id,
)
from ludoteca.web.lobby.option_words import catalogue_entry, in_language
from ludoteca.web.master.ai import AIRunner, available_levels, is_level, level_descriptions, level_ratings
from ludoteca.web.master.life import check_settings
from ludoteca.web.master.master import AI, BROKEN, EXPIRED, HUMAN, OPEN, OVER, PLAYING, WAITING, Seat
from ludoteca.web.master.tables import STALL_AFTER, Table, clean_name, hash_token
from ludoteca.web.repository.store import GroupCommit, Repository, TableData
from ludoteca.web.security import stats_allowed

log = logging.getLogger("ludoteca.web")

REMATCH_HOLD = 120.0
"""Seconds a rematch keeps each previous player's seat for the holder of that player's token."""
MAX_BODY = 64 * 1024
"""Largest HTTP request body."""
LIST_STALLED = 30 * 60.0
"""Seconds without a move after which a game in play leaves the lobby's public list."""
MAX_IDS = 50
"""Most table ids one ``GET /api/tables?ids=`` asks about."""


def new_table_id() -> str:
    """A short random table id, letters and digits only (it goes into links)."""
    alphabet = "abcdefghijkmnopqrstuvwxyz23456789"
    return "".join(secrets.choice(alphabet) for _ in range(10))


def _game_entry(name: str, cls: type[Game], lang: str | None = None) -> dict[str, Any]:
    options = [catalogue_entry(cls, opt, lang) for opt in cls.OPTIONS
               if opt.name not in SERVER_ONLY_OPTIONS or opt.kind == "file"]
    defaults = {}
    for n in range(cls.min_players, cls.max_players + 1):
        with contextlib.suppress(ValueError):
            defaults[str(n)] = {k: v for k, v in cls(players=n).record_options().items()
                                if k not in SERVER_ONLY_OPTIONS and k != "players"}
    doc = (cls.__doc__ or "").strip().splitlines()
    return {"name": name, "title": cls.title, "min_players": cls.min_players, "max_players": cls.max_players,
            "options": options, "defaults": defaults, "doc": doc[0] if doc else cls.title}


@functools.cache
def game_catalog(lang: str | None = None) -> list[dict[str, Any]]:
    """The games, with their players and the options the web form may set (their labels and help
    texts in ``lang``: each game's own catalog, games/<name>/locale)."""
    return [_game_entry(name, game_class(name), lang) for name in GAMES]


class Lobby:
    """All tables: creation, loading from storage, listing; the AI runner and the storage thread."""

    def __init__(self, repo: Repository, ai_delay: float = 0.6, ai_workers: int = 1,
                 ai_specs: dict[str, str] | None = None, max_spectators: int = MAX_SPECTATORS,
                 waiting_ttl: float = WAITING_TTL, resume_limit: int = RESUME_LIMIT,
                 rematch_hold: float = REMATCH_HOLD, stall_after: float = STALL_AFTER) -> None:
        self.repo = repo
        self.ai_delay = ai_delay
        self.ai = AIRunner(ai_workers, ai_specs)
        self.max_spectators = max_spectators
        self.waiting_ttl = waiting_ttl
        self.resume_limit = resume_limit
        self.rematch_hold = rematch_hold
        self.stall_after = stall_after
        self.tables: dict[str, Table] = {}
        self.cluster: Cluster | None = None
        """Several workers (cluster.py): the bus and the leases; None with one worker."""
        self._loading: dict[str, asyncio.Future[Table | None]] = {}
        self._db = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ludoteca-db")
        self._builder = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ludoteca-build")
        """Builds games and tables (replaying their actions) off the event loop."""
        self._background: list[asyncio.Future[None]] = []
        self._levels: list[str] | None = None
        self.closing = False
        self.inline_storage = repo.dialect == "sqlite"
        self.committer = GroupCommit(repo, self.db)
        self.timings: deque[float] = deque(maxlen=20_000)
        """Seconds each recent player action took from arrival to broadcast (``/api/stats``)."""

    # --- threads ---------------------------------------------------------------------------------
    async def db(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run a storage call. SQLite calls run inline: a local commit takes a fraction of a
        millisecond, and running it on the event loop avoids handing the GIL back and forth with
        a storage thread (which made tail latencies much worse under load). Other databases
        (PostgreSQL: a network round trip and an fsync) run in the storage thread."""
        if self.closing:
            raise WebError(Code.CLOSING, "the server is shutting down")
        if self.inline_storage:
            return fn(*args)
        return await asyncio.get_running_loop().run_in_executor(self._db, lambda: fn(*args))

    async def build(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run costly work (building a game, replaying a table) in the build thread."""
        if self.closing:
            raise WebError(Code.CLOSING, "the server is shutting down")
        return await asyncio.get_running_loop().run_in_executor(self._builder, lambda: fn(*args))

    def levels(self) -> list[str]:
        if self._levels is None:
            self._levels = available_levels()
        return self._levels

    # --- life ----------------------------------------------------------------------------------------
    async def start(self) -> None:
        """Expire old waiting tables, then rebuild the tables in play (at most ``resume_limit``,
        the most recently active; any other is rebuilt when someone opens it) and the waiting
        tables whose seats are all taken (their start was never stored), and let them go on."""
        if self.repo.dialect == "sqlite":
            self._background.append(asyncio.ensure_future(self._every(2.0, self._checkpoint)))
        if self.cluster is not None:
            await self.cluster.start()
        await self.expire_waiting()
        ids = await self.db(self.repo.table_ids, (PLAYING,), self.resume_limit)
        ids += await self.db(self.repo.full_waiting_ids, self.resume_limit)
        for table_id in ids:
            try:
                table = await self.get(table_id)
                if table is not None and table.status == PLAYING and table.state.is_chance_node():
                    await table.start()
            except WebError as exc:
                log.error("table %s not resumed: %s", table_id, exc.message)
        self._background.append(asyncio.ensure_future(ratings.catch_up(self)))  # rated tables ended unrated
        if self.waiting_ttl > 0:
            every = max(1.0, min(60.0, self.waiting_ttl / 4))
            self._background.append(asyncio.ensure_future(self._every(every, self.expire_waiting)))
        log.info("%d tables resumed", len(ids))

    async def _every(self, seconds: float, job: Callable[[], Any]) -> None:
        while not self.closing:
            await asyncio.sleep(seconds)
            try:
                await job()
            except Exception:  # e.g. a busy database: try again later
                log.debug("background job failed", exc_info=True)

    async def _checkpoint(self) -> None:
        """SQLite: checkpoint the write-ahead log in the storage thread, off the event loop."""
        await asyncio.get_running_loop().run_in_executor(self._db, self.repo.checkpoint)

    async def stop(self) -> None:
        if self.cluster is not None:
            await self.cluster.close()  # the leases released first: another worker takes over at once
        self.closing = True
        for task in self._background:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for table in list(self.tables.values()):
            await table.close()
        self.ai.close()
        self._builder.shutdown(wait=True, cancel_futures=True)
        self._db.shutdown(wait=True)
        with contextlib.suppress(Exception):
            self.repo.checkpoint()
        self.repo.close()

    async def expire_waiting(self) -> list[str]:
        """Mark the waiting tables nobody joined for ``waiting_ttl`` seconds as expired: the lobby
        stops listing them and nobody can join them any more."""
        if self.waiting_ttl <= 0:
            return []
        ids = await self.db(self.repo.expire_waiting, time.time() - self.waiting_ttl, EXPIRED)
        for table_id in ids:
            table = self.tables.get(table_id)
            if table is not None:
                table.expire()
        if ids:
            log.info("%d waiting tables expired", len(ids))
        return ids

    # --- tables ----------------------------------------------------------------------------------------
    async def get(self, table_id: str) -> Table | None:
        """The table ``table_id`` (loaded from storage if need be), or None. An id not of the
        form of a table id is never looked up."""
        if not valid_table_id(table_id):
            return None
        if table_id in self.tables:
            loaded = self.tables[table_id]
            loaded.used_at = time.monotonic()  # several workers: a table in use is kept loaded (cluster.py)
            return loaded
        if table_id in self._loading:
            return await self._loading[table_id]
        fut: asyncio.Future[Table | None] = asyncio.get_running_loop().create_future()
        self._loading[table_id] = fut
        try:
            table = await self._load(table_id)
            fut.set_result(table)
            return table
        except BaseException as exc:
            fut.set_exception(exc)
            raise
        finally:
            self._loading.pop(table_id, None)
            if fut.done() and not fut.cancelled():
                fut.exception()  # retrieved: no "never retrieved" warning

    async def _load(self, table_id: str) -> Table | None:
        data = await self.db(self.repo.load_table, table_id)
        table = await self._rebuild(data) if data is not None else None
        if table is None:
            return None
        await self._restore_holds(table)
        self.tables[table_id] = table
        self._evict()
        if self.cluster is not None:
            await self.cluster.watch(table)
            await table.refresh()  # what another worker stored before the subscription
            if table.status == PLAYING:
                self.cluster.claim(table)
        table.resume()
        if table.status == WAITING and all(s.kind != OPEN for s in table.seats):
            await table.start()  # every seat taken, the start never stored
        return table

    async def _rebuild(self, data: TableData) -> Table | None:
        """A stored table, rebuilt in the build thread; None (and marked broken) when its options
        are out of bounds or its game cannot be built."""
        try:
            check_stored_options(data.options)
            return await self.build(Table, self, data)
        except (BadInput, ValueError, TypeError, KeyError) as exc:
            log.error("table %s cannot be rebuilt: %s", data.id, exc)
            with contextlib.suppress(Exception):
                await self.db(self.repo.set_status, data.id, BROKEN)
            return None

    async def _restore_holds(self, table: Table) -> None:
        """A rematch loaded from storage keeps its previous players' seats as when it was created."""
        until = table.created_at + self.rematch_hold
        if table.rematch_of is None or table.status != WAITING or until <= time.time():
            return
        previous = self.tables.get(table.rematch_of)
        seats = previous.seats if previous is not None else await self.db(self.repo.seats_of, table.rematch_of)
        table.hold_seats(seats, until)

    def _evict(self, keep: int = 500) -> None:
        """Forget finished (or expired) tables nobody watches when too many are in memory."""
        idle = [t for t in self.tables.values() if t.status in (OVER, BROKEN, EXPIRED) and not t.hub.conns]
        for t in idle[:max(0, len(self.tables) - keep)]:
            self.tables.pop(t.id, None)
            if self.cluster is not None:
                self.cluster.forget(t)

    # --- create ----------------------------------------------------------------------------------------
    async def create(self, request: Any, rematch_of: str | None = None,
                     lang: str | None = None, account: Account | None = None) -> tuple[Table, int | None, str | None]:
        """A new table from a lobby request; returns (table, seat, token) — the creator's seat if asked
        (taken under the ``account``'s name and tied to it when the creator is logged in)."""
        if not isinstance(request, dict):
            raise WebError(Code.BAD_REQUEST, "a table request is a JSON object")
        name, cls = self._game_of(request.get("game"))
        players = request.get("players", cls.min_players)
        if isinstance(players, bool) or not isinstance(players, int):
            raise WebError(Code.BAD_PLAYERS, "players is a whole number")
        if not cls.min_players <= players <= cls.max_players:
            raise WebError(Code.BAD_PLAYERS, "{game} is played by {min} to {max} players", game=name,
                           min=cls.min_players, max=cls.max_players)
        game = await self._build_game(name, cls, players, request.get("options") or {}, lang)
        seats = self._seats(request.get("seats"), players, lang)
        unlisted = request.get("unlisted", False)
        if not isinstance(unlisted, bool):
            raise WebError(Code.BAD_UNLISTED,
                           "'unlisted' is true (only people with the link find the table) or false")
        settings = check_settings(request)  # abandoned seats, chat channels (life.py)
        sit, token = request.get("sit"), None
        if sit is not None:
            if isinstance(sit, bool) or not isinstance(sit, int) or not 0 <= sit < players or seats[sit].kind != OPEN:
                raise WebError(Code.BAD_SEAT, "'sit' must name an open seat")
            token = secrets.token_urlsafe(24)
            default = web_text(lang, N_("Player {n}"), n=sit + 1)  # the seats' default names: in the creator's language
            if account is not None:
                seats[sit] = Seat(HUMAN, None, account.name, hash_token(token), account.id)
            else:
                seats[sit] = Seat(HUMAN, None, clean_name(request.get("name"), default), hash_token(token))
        now = time.time()
        data = TableData(id=new_table_id(), game=name, options=game.record_options(),
                         seed=secrets.randbits(62), status=WAITING, created_at=now, updated_at=now,
                         seats=[s.data() for s in seats], rematch_of=rematch_of, unlisted=unlisted,
                         settings=settings)
        try:
            json.dumps(data.options)
        except (TypeError, ValueError):
            raise WebError(Code.BAD_OPTIONS, "these options cannot be stored") from None
        await self.db(self.repo.create_table, data)
        table = await self.build(Table, self, data)
        self.tables[table.id] = table
        if self.cluster is not None:
            await self.cluster.watch(table)
        if all(s.kind != OPEN for s in table.seats):
            await table.start()
        return table, sit, token

    @staticmethod
    def _game_of(name: Any) -> tuple[str, type[Game]]:
        if not isinstance(name, str) or name.lower() not in GAMES:
            raise WebError(Code.BAD_GAME, "unknown game {game}; the games are: {games}", game=shown_id(name),
                           games=", ".join(GAMES))
        return name.lower(), game_class(name.lower())

    async def _build_game(self, name: str, cls: type[Game], players: int, options: Any,
                          lang: str | None = None) -> Game:
        try:  # the web's bounds first: nothing is built from options out of them
            check_options(name, options, {o.name: o.default for o in cls.OPTIONS},
                          files=frozenset(o.name for o in cls.OPTIONS if o.kind == "file"))
        except BadInput as exc:
            raise WebError(Code(exc.code), exc.template, **exc.params) from None
        try:  # the game's own checks, their reasons in the creator's language
            return await self.build(functools.partial(in_language, lang, load_game, name, players=players, **options))
        except OptionError as exc:
            raise WebError(Code.BAD_OPTIONS, "the game refuses these options: {reason}",
                           reason=Message(N_("{option}: {error}"), {"option": Message(exc.option.shown_label),
                                                                     "error": exc.reason})) from None
        except ValueError as exc:
            raise WebError(Code.BAD_OPTIONS, "the game refuses these options: {reason}", reason=str(exc)) from None

    def _seats(self, request: Any, players: int, lang: str | None = None) -> list[Seat]:
        if request is None:
            return [Seat(OPEN) for _ in range(players)]
        if not isinstance(request, list) or len(request) != players:
            raise WebError(Code.BAD_SEATS, "give one seat description per player ({n})", n=players)
        seats: list[Seat] = []
        for i, s in enumerate(request):
            kind = s.get("kind") if isinstance(s, dict) else None
            if kind == OPEN:
                seats.append(Seat(OPEN))
            elif kind == AI:
                level = s.get("level", "random")
                if not isinstance(level, str) or not (level in self.levels() or is_level(level)):
                    raise WebError(Code.BAD_SEATS, "seat {seat}: AI level {level} is not one of {levels}",
                                   seat=i + 1, level=shown_id(level), levels=", ".join(self.levels()))
                seats.append(Seat(AI, level, web_text(lang, N_("AI {n} ({level})"), n=i + 1,
                                                       level=web_text(lang, level))))
            else:
                raise WebError(Code.BAD_SEATS, "seat {seat}: kind is 'open' or 'ai'", seat=i + 1)
        return seats

    # --- rematch ----------------------------------------------------------------------------------------
    async def rematch(self, table: Table, token: Any) -> tuple[Table, int | None, str | None]:
        """The table's rematch (created on first request); a seated player keeps their seat."""
        async with table.master.lock:
            if table.status != OVER:
                raise WebError(Code.NOT_OVER, "a rematch can be asked for once the game is over")
            if table.rematch_id is None:
                files = {o.name for o in game_class(table.game_name).OPTIONS if o.kind == "file"}
                request = {
                    "game": table.game_name, "players": table.n_players,
                    "options": {k: v for k, v in table.options.items()  # a designer's file stays (its content)
                                if k != "players" and (k not in SERVER_ONLY_OPTIONS or k in files)},
                    "seats": [{"kind": AI, "level": s.level} if s.kind == AI else {"kind": OPEN}
                              for s in table.seats],
                    "unlisted": table.unlisted, **table.settings,
                }
                made, _, _ = await self.create(request, rematch_of=table.id)
                made.hold_seats(table.seats, made.created_at + self.rematch_hold)
                table.rematch_id = made.id
                await self.db(self.repo.set_rematch, table.id, made.id)
                table.hub.push_all({"type": "rematch", "table": made.id})
                table.announce()
        new = await self.get(table.rematch_id)
        if new is None:
            raise WebError(Code.NOT_FOUND, "the rematch table is gone")
        seat, digest = None, None
        if isinstance(token, str) and token:
            digest = hash_token(token)
            for i, s in enumerate(table.seats):
                if s.token_hash is not None and secrets.compare_digest(s.token_hash, digest):
                    seat = i
        if seat is not None and new.seats[seat].kind == OPEN:
            return new, seat, await new.join(seat, table.seats[seat].name, claim=digest,
                                             account_id=table.seats[seat].account_id)
        if seat is not None and digest is not None and new.seats[seat].token_hash == digest:
            return new, seat, token  # a rematch the players agreed on: the same token holds the seat
        return new, None, None

    # --- list --------------------------------------------------------------------------------------------
    async def list_tables(self, limit: int = 50) -> list[dict[str, Any]]:
        """The lobby's public list: live tables only (waiting for players, or in play and changed within
        ``LIST_STALLED`` seconds); finished, expired, broken and abandoned tables stay reachable by link."""
        rows = await self.db(self.repo.list_tables, limit, (WAITING, PLAYING), time.time() - LIST_STALLED)
        return self._summaries(rows)

    async def tables_by_id(self, ids: list[str]) -> list[dict[str, Any]]:
        """The tables ``ids`` (any status, listed or not; unknown ids are left out): "your tables"."""
        rows = await self.db(self.repo.list_tables, len(ids), None, None, ids)
        return self._summaries(rows)

    def _summaries(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for row in rows:
            live = self.tables.get(row["id"])
            if live is not None:
                out.append(live.summary())
                continue
            try:
                title = game_class(row["game"]).title
            except ValueError:
                title = row["game"]
            out.append({**row, "title": title, "players": len(row["seats"]), "spectators": 0,
                        "rematch": None, "unlisted": False, **self._stall_of_row(row)})
        return out

    def _stall_of_row(self, row: dict[str, Any]) -> dict[str, Any]:
        """``stall_info`` of a table not in memory: nobody is connected to it, so a game in play is
        stalled once ``stall_after`` seconds passed since it last changed (who is to move is unknown)."""
        if row.get("status") != PLAYING:
            return {"stalled": False, "waiting_for": None, "idle": None}
        idle = max(0.0, time.time() - float(row.get("updated_at") or 0.0))
        return {"stalled": idle >= self.stall_after, "waiting_for": None, "idle": round(idle)}


# --- HTTP routes --------------------------------------------------------------------------------------------
router = APIRouter(prefix="/api")


def lobby_of(request: Request) -> Lobby:
    lobby: Lobby = request.app.state.lobby
    return lobby


async def read_json(request: Request) -> Any:
    """The request body as JSON (at most ``MAX_BODY`` bytes; an empty body is ``{}``)."""
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
        raise WebError(Code.TOO_LARGE, "the request body is limited to {limit} bytes", limit=MAX_BODY)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise WebError(Code.TOO_LARGE, "the request body is limited to {limit} bytes", limit=MAX_BODY)
    if not body:
        return {}
    try:
        return parse_json(bytes(body))
    except BadInput as exc:
        raise WebError(Code(exc.code), "the request body: {reason}", reason=Message(exc.template, exc.params)) from None


async def table_or_404(request: Request, table_id: str) -> Table:
    table = await lobby_of(request).get(table_id)
    if table is None:
        raise WebError(Code.NOT_FOUND, "there is no table {table}", table=shown_id(table_id))
    return table


@router.get("/games")
async def games(request: Request) -> dict[str, Any]:
    levels = lobby_of(request).levels()
    lang = request_language(request)
    return {"games": game_catalog(lang), "levels": levels,
            "level_info": {level: web_text(lang, text) for level, text in level_descriptions(levels).items()},
            # each level's measured rating per game and player count (issue 14, agents/ladder.py)
            "level_ratings": {name: {str(n): r for n in range(cls.min_players, cls.max_players + 1)
                                     if (r := level_ratings(name, n))}
                              for name in GAMES if (cls := game_class(name))}}


@router.get("/stats")
async def stats(request: Request) -> dict[str, Any]:
    """Server-side time to check, store and broadcast the last actions (for operators and load
    tests): only with ``stats_token``, sent as ``Authorization: Bearer TOKEN``."""
    if not stats_allowed(request.headers.get("authorization"), request.app.state.stats_token):
        raise WebError(Code.NOT_FOUND, "there is no such page")
    lobby = lobby_of(request)
    times = sorted(lobby.timings)

    def ms(q: float) -> float | None:
        return round(1000 * times[min(len(times) - 1, int(q * len(times)))], 3) if times else None

    return {"tables_in_memory": len(lobby.tables), "actions_timed": len(times), "p50_ms": ms(0.5),
            "p99_ms": ms(0.99), "max_ms": round(1000 * times[-1], 3) if times else None,
            "ai_searches_waiting": lobby.ai.waiting(), "ai_searches_peak": lobby.ai.peak}


@router.get("/tables")
async def tables(request: Request, ids: str | None = None) -> dict[str, Any]:
    """The live tables; with ``ids=a,b,c`` (at most ``MAX_IDS``) those tables instead, whatever their state."""
    if ids is None:
        return {"tables": await lobby_of(request).list_tables()}
    wanted = list(dict.fromkeys(i for i in ids.split(",") if i))
    if len(ids) > MAX_IDS * 33 or len(wanted) > MAX_IDS or not all(valid_table_id(i) for i in wanted):
        raise WebError(Code.BAD_REQUEST, "ids: at most {n} table ids, separated by commas", n=MAX_IDS)
    return {"tables": await lobby_of(request).tables_by_id(wanted) if wanted else []}


@router.post("/tables")
async def create_table(request: Request) -> JSONResponse:
    wait = request.app.state.creations.take(request.client.host if request.client else "?")
    if wait > 0:
        raise WebError(Code.RATE_LIMITED, "too many tables created from your address: try again in {seconds} s",
                       headers={"Retry-After": str(math.ceil(wait))}, seconds=math.ceil(wait))
    body, account = await read_json(request), await current_account(request)
    ratings.check_creation(body, account)  # a rated table needs a logged-in creator (issue 14)
    table, seat, token = await lobby_of(request).create(body, lang=request_language(request), account=account)
    return JSONResponse({"id": table.id, "url": f"/t/{table.id}", "seat": seat, "token": token,
                         "table": table.summary()}, status_code=201)


@router.get("/tables/{table_id}")
async def get_table(request: Request, table_id: str) -> dict[str, Any]:
    return (await table_or_404(request, table_id)).summary()


@router.post("/tables/{table_id}/join")
async def join(request: Request, table_id: str) -> dict[str, Any]:
    table = await table_or_404(request, table_id)
    body = await read_json(request)
    if not isinstance(body, dict):
        raise WebError(Code.BAD_REQUEST, "send {\"seat\": n, \"name\": \"...\"}")
    account = await current_account(request)  # logged in: the seat takes the account's name and follows it
    ratings.check_seat(table.settings, account, table.seats)  # a rated table: logged-in players only (issue 14)
    token = await table.join(body.get("seat"), account.name if account else body.get("name"), key=body.get("key"),
                             account_id=account.id if account else None)
    return {"id": table.id, "seat": body.get("seat"), "token": token}


@router.post("/tables/{table_id}/rematch")
async def rematch(request: Request, table_id: str) -> dict[str, Any]:
    table = await table_or_404(request, table_id)
    body = await read_json(request)
    token = body.get("token") if isinstance(body, dict) else None
    new, seat, new_token = await lobby_of(request).rematch(table, token)
    return {"id": new.id, "url": f"/t/{new.id}", "seat": seat, "token": new_token}


@router.get("/tables/{table_id}/record")
async def record(request: Request, table_id: str) -> Response:
    table = await table_or_404(request, table_id)
    if table.status != OVER:
        raise WebError(Code.NOT_OVER, "the record can be downloaded once the game is over")
    text = await lobby_of(request).build(lambda: table.record().dumps() + "\n")
    filename = f"ludoteca-{table.game_name}-{table.id}.json"
    return Response(text, media_type="application/json",
                    headers={"Content-Disposition": f'attachment; filename="{filename}"'})


@router.get("/tables/{table_id}/replay")
async def replay(request: Request, table_id: str) -> dict[str, Any]:
    table = await table_or_404(request, table_id)
    if table.status != OVER:
        raise WebError(Code.NOT_OVER, "the replay is available once the game is over")
    data: dict[str, Any] = await lobby_of(request).build(table.replay_data)
    return data
