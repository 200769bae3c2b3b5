"""The lobby: the games on offer, creating, joining, rematching and listing tables.

:class:`Lobby` keeps the tables in memory (loading one from storage when someone opens it),
creates them from a request, makes rematches and lists recent tables; its HTTP routes are in
routes.py (:data:`router`, re-exported here, an ``APIRouter`` included by ``create_app``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import secrets
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ludoteca.core.game import Game
from ludoteca.core.i18n import N_
from ludoteca.core.options import OptionError
from ludoteca.i18n import Message, web_text
from ludoteca.registry import GAMES, game_class, load_game
from ludoteca.web.accounts import ratings
from ludoteca.web.accounts.sessions import Account
from ludoteca.web.errors import Code, WebError
from ludoteca.web.hub.cluster import Cluster
from ludoteca.web.limits import (
    MAX_SPECTATORS,
    RESUME_LIMIT,
    SERVER_ONLY_OPTIONS,
    WAITING_TTL,
    BadInput,
    check_options,
    check_stored_options,
    shown_id,
    valid_table_id,
)
from ludoteca.web.lobby.levels import check_levels
from ludoteca.web.lobby.option_words import in_language
from ludoteca.web.lobby.routes import (  # noqa: F401 - re-exported: the lobby's routes lived here
    MAX_BODY,
    MAX_IDS,
    game_catalog,
    lobby_of,
    read_json,
    router,
    table_or_404,
)
from ludoteca.web.master import pace
from ludoteca.web.master.ai import AIRunner, is_level, offered_levels
from ludoteca.web.master.deadlines import Deadlines
from ludoteca.web.master.life import check_settings
from ludoteca.web.master.listeners import Listener
from ludoteca.web.master.master import AI, BROKEN, EXPIRED, HUMAN, OPEN, OVER, PLAYING, WAITING, Seat
from ludoteca.web.master.tables import STALL_AFTER, Table, clean_name, hash_token
from ludoteca.web.notices.events import Notifier, NullNotifier
from ludoteca.web.repository.store import GroupCommit, Repository, TableData

log = logging.getLogger("ludoteca.web")

REMATCH_HOLD = 120.0
"""Seconds a rematch keeps each previous player's seat for the holder of that player's token."""
LIST_STALLED = 30 * 60.0
"""Seconds without a move after which a game in play leaves the lobby's public list."""


def new_table_id() -> str:
    """A short random table id, letters and digits only (it goes into links)."""
    alphabet = "abcdefghijkmnopqrstuvwxyz23456789"
    return "".join(secrets.choice(alphabet) for _ in range(10))


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
        self.table_listeners: list[Listener] = []
        """Told of every committed change of every table loaded or created from now on (listeners.py)."""
        self.deadlines = Deadlines(self)
        """Turn-based tables' deadlines and every table's notices (web/master/deadlines.py): its
        notices go to ``notifier``; its ``clock`` is injectable (tests)."""
        self.table_listeners.append(self.deadlines)
        self.notifier: Notifier = NullNotifier()
        """Where the tables' notices go (web/notices/: set by the notices service at start-up)."""
        self._loading: dict[str, asyncio.Future[Table | None]] = {}
        self._db = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ludoteca-db")
        self._builder = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ludoteca-build")
        """Builds games and tables (replaying their actions) off the event loop."""
        self._background: list[asyncio.Future[None]] = []
        self._levels: list[str] | None = None
        self.closing = False
        self.inline_storage = repo.dialect == "sqlite"
        self.committer = GroupCommit(repo, self.db, inline=self.inline_storage)
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
            self._levels = offered_levels()
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
        self.deadlines.start()  # turn-based tables' deadlines: read from the database, never resumed here
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
        await self.deadlines.close()
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
        name, players, game = await self.requested_game(request, lang)
        seats = self._seats(request.get("seats"), players, lang)
        await check_levels(self, game, seats, lang)  # a solved game's perfect AI: only where it can play
        unlisted = request.get("unlisted", False)
        if not isinstance(unlisted, bool):
            raise WebError(Code.BAD_UNLISTED,
                           "'unlisted' is true (only people with the link find the table) or false")
        settings = check_settings(request)  # abandoned seats, chat channels (life.py), pace (pace.py)
        pace.check_players(settings, players)
        hook = await self.deadlines.hook_of(request, lang) if pace.turn_based(settings) else None
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
        if pace.turn_based(settings):
            await self.db(self.deadlines.store.create, data.id, players, now, hook, rematch_of,
                          (account.id if account is not None else None, sit))
        table = await self.build(Table, self, data)
        self.tables[table.id] = table
        if self.cluster is not None:
            await self.cluster.watch(table)
        if all(s.kind != OPEN for s in table.seats):
            await table.start()
        return table, sit, token

    async def requested_game(self, request: Any, lang: str | None = None) -> tuple[str, int, Game]:
        """The game, player count and built game of a table request (``game``, ``players``,
        ``options``), each checked with a clear error in ``lang``."""
        if not isinstance(request, dict):
            raise WebError(Code.BAD_REQUEST, "a table request is a JSON object")
        name, cls = self._game_of(request.get("game"))
        players = request.get("players", cls.min_players)
        if isinstance(players, bool) or not isinstance(players, int):
            raise WebError(Code.BAD_PLAYERS, "players is a whole number")
        if not cls.min_players <= players <= cls.max_players:
            raise WebError(Code.BAD_PLAYERS, "{game} is played by {min} to {max} players", game=name,
                           min=cls.min_players, max=cls.max_players)
        return name, players, await self._build_game(name, cls, players, request.get("options") or {}, lang)

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
                out.append({**live.summary(), "pace": row.get("pace", pace.LIVE), "move_time": row.get("move_time")})
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
        if row.get("status") != PLAYING or row.get("pace") == pace.TURN_BASED:
            return {"stalled": False, "waiting_for": None, "idle": None}
        idle = max(0.0, time.time() - float(row.get("updated_at") or 0.0))
        return {"stalled": idle >= self.stall_after, "waiting_for": None, "idle": round(idle)}
