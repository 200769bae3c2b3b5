"""A table in play: its master (the position), its hub (the connections), seats and AI seats.

:class:`Table` joins the parts of one table: the :class:`~ludoteca.web.master.master.Master` that owns
the position and commits every change, the :class:`~ludoteca.web.hub.hub.Hub` that sends each
viewer what they may see, the seats with their secret tokens (and the seats a rematch keeps for
the previous players), the hourglass's timer and the AI seats. The lobby (lobby.py) creates,
loads and lists tables.

Its parts are one module each, every class adding one concern to the one below it (the arrows go
one way, downwards; ``Table`` joins the two at the top):

- ``table_core.py`` — :class:`~ludoteca.web.master.table_core.TableCore`: the state every part reads
  (declared once, set by ``Table.__init__``), what a table needs from the server (``Host``,
  ``Shared``), seat tokens and names, stored notices and changes;
- ``table_away.py`` — away players: since when each seat is away, the abandon timer, an abandoned seat;
- ``table_turns.py`` — after every committed change: the viewers told, the hourglass, the AI seats;
- ``table_following.py`` — several workers: the lease (who runs the timers), the other workers' news
  and presence, catching up with the database;
- ``table_seating.py`` — seats: tokens, joining, a seat following its account, rematch seats kept;
- ``table_leaving.py`` — a player resigns, leaves, or takes back a seat an AI played;
- ``table_talk.py`` — what people say: chat lines and rematch offers.

This module builds a table from its stored data and holds what it shows: the viewers' messages
(``hub.Source``), the lobby's summary and the replay.

The table's life around the game (docs/web.md, "Table life"): a player resigns or leaves a seat,
an away player's seat is handed to the easiest AI (or the table ends) after the table's
``abandon_after`` seconds, the players agree on a rematch, everyone chats. Each such change is
stored (seats, status, result and a notice in one transaction) before it is broadcast.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from typing import Any

from ludoteca.core.game import State
from ludoteca.core.records import Record
from ludoteca.registry import load_game
from ludoteca.web.accounts import ratings
from ludoteca.web.hub.hub import Hub, Viewer
from ludoteca.web.limits import SERVER_ONLY_OPTIONS
from ludoteca.web.master import life
from ludoteca.web.master.master import AI, HUMAN, OVER, PLAYING, WAITING, Entry, Master, Seat
from ludoteca.web.master.table_core import MAX_NAME, STALL_AFTER, Host, Shared, clean_name, hash_token
from ludoteca.web.master.table_following import NEWS_QUEUED
from ludoteca.web.master.table_leaving import Leaving
from ludoteca.web.master.table_seating import valid_join_key
from ludoteca.web.master.table_talk import Talk
from ludoteca.web.repository.store import NOTES_LOADED, TableData

__all__ = ["MAX_NAME", "NEWS_QUEUED", "STALL_AFTER", "Host", "Shared", "Table", "clean_name", "hash_token",
           "valid_join_key"]


class Table(Talk, Leaving):
    """A game table: stored data, the master, the hub, seats, the hourglass and AI seats."""

    def __init__(self, host: Host, data: TableData) -> None:
        self.host = host
        self.id = data.id
        self.game_name = data.game
        self.options = data.options
        self.created_at = data.created_at
        self.rematch_id = data.rematch_id
        self.rematch_of = data.rematch_of
        self.unlisted = data.unlisted
        self.holds = {}
        self.game = load_game(data.game, **data.options)
        self._hidden = self.game.has_hidden_information()
        self.hub = Hub(self)
        self._legal = None
        seats = [Seat(s.kind, s.level, s.name, s.token_hash, s.account_id) for s in data.seats]
        shared = host.cluster
        self.master = Master(data.id, self.game, data.seed, seats, data.status, host.committer, self,
                             actions=data.actions, action_seats=data.action_seats,
                             catch_up=self._catch_up if shared is not None else None,
                             fence=(lambda: shared.fence(self.id)) if shared is not None else None)
        self.note_id = data.last_note_id
        if data.result is not None and self.master.result is None:
            self.master.result = data.result
        self.master.last_move_at = data.action_times[-1] if data.action_times else data.updated_at
        self.ai_task = None
        self.bus_handler = None
        self._news = deque()
        self._news_task = None
        self.used_at = time.monotonic()
        self.news_applied = 0
        self.news_read = 0
        self._tasks = set()
        self._replay = None
        # --- the table's life -------------------------------------------------------------------
        self.settings = life.stored_settings(data.settings)
        self.notes = deque(data.notes, maxlen=NOTES_LOADED)
        now = time.time()
        self.playing_since = data.action_times[0] if data.action_times else data.updated_at
        self.away = {i: s.away_since if s.away_since is not None else now
                     for i, s in enumerate(data.seats) if s.kind == HUMAN}
        self._abandon_timer = None
        self._was_playing = data.status == PLAYING
        self.offer = self._offer_of(data.notes)

    # --- what the hub reads (hub.Source) ----------------------------------------------------------
    @property
    def entries(self) -> list[Entry]:
        return self.master.log

    def hidden_information(self) -> bool:
        return self._hidden

    def legal_json(self) -> list[dict[str, Any]]:
        if self._legal is None:
            state = self.master.state
            self._legal = [state.action_to_json(a) for a in state.legal_actions()]
        return self._legal

    def header(self) -> dict[str, Any]:
        return {"table": self.id, "seq": self.master.seq, "status": self.status, "to_move": self.to_move(),
                "seats": self.public_seats(), "clock": self.clock_info(), "result": self.result,
                "rematch": self.rematch_id, "offer": self.offer}

    def legal_for(self, viewer: Viewer) -> list[dict[str, Any]] | None:
        to_move = self.to_move()
        mine = (self.status == PLAYING and viewer is not None and viewer == to_move
                and self.seats[to_move].kind == HUMAN)
        return self.legal_json() if mine else None

    def snapshot_extra(self) -> dict[str, Any]:
        return {"game": {"name": self.game_name, "title": self.game.title, "players": self.n_players,
                         "options": {k: v for k, v in self.options.items() if k not in SERVER_ONLY_OPTIONS}},
                "rematch_of": self.rematch_of, "settings": self.settings}

    def viewer_extra(self, viewer: Viewer) -> dict[str, Any]:
        """What a snapshot adds for ``viewer``: the notices and the last chat lines it may read."""
        visible = [n for n in self.notes if n.channel == life.ALL or viewer is None]
        chat = [n for n in visible if n.kind == "chat"][-life.CHAT_SHOWN:]
        keep = {id(n) for n in chat}
        return {"notes": [n.to_json() for n in visible if n.kind != "chat" or id(n) in keep]}

    def public_seats(self) -> list[dict[str, Any]]:
        connected = self.hub.connected_seats()
        out: list[dict[str, Any]] = [{"seat": i, "kind": s.kind, "level": s.level, "name": s.name,
                "connected": s.kind == AI or i in connected}
               for i, s in enumerate(self.seats)]
        for seat, (_, name, left) in self.active_holds().items():
            out[seat]["held_for"] = name or f"Player {seat + 1}"
            out[seat]["held_seconds"] = round(left, 1)
        for i, s in enumerate(self.seats):
            if s.kind == AI and s.token_hash is not None:
                out[i]["taken_over"] = True  # an AI plays for an away player, who may take the seat back
            if s.account_id is not None:
                out[i]["account"] = True  # the seat's name is a logged-in player's account name
        if self.status == PLAYING:
            now = time.time()
            for i, since in self.away.items():
                if self.seats[i].kind == HUMAN and i not in connected:
                    out[i]["abandon_in"] = round(max(0.0, self._abandon_at(since) - now), 1)
        return out

    def clock_info(self) -> dict[str, Any] | None:
        remaining = self.master.clock.remaining() if self.status == PLAYING else None
        if remaining is None:
            return None
        return {"seat": self.to_move(), "remaining": round(remaining, 3)}

    def message(self, viewer: Viewer, log_from: int = 0, kind: str = "update") -> dict[str, Any]:
        return self.hub.message(viewer, log_from, kind)

    # --- the lobby's view -------------------------------------------------------------------------
    def stall_info(self) -> dict[str, Any]:
        """``waiting_for``: the human to move, if away; ``idle``: seconds since the last move;
        ``stalled``: someone is waiting for an away player for ``stall_after`` seconds or more."""
        if self.status != PLAYING:
            return {"stalled": False, "waiting_for": None, "idle": None}
        idle = max(0.0, time.time() - self.master.last_move_at)
        to_move = self.to_move()
        away = None
        if to_move is not None and self.seats[to_move].kind == HUMAN and to_move not in self.hub.connected_seats():
            away = to_move
        stalled = away is not None and idle >= self.host.stall_after
        return {"stalled": stalled, "waiting_for": away, "idle": round(idle)}

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.id, "game": self.game_name, "title": self.game.title, "players": self.n_players,
            "status": self.status, "seats": self.public_seats(), "n_actions": self.master.seq,
            "spectators": self.hub.spectators(), "result": self.result,
            "rematch": self.rematch_id, "rematch_of": self.rematch_of, "created_at": self.created_at,
            "unlisted": self.unlisted, "rated": ratings.is_rated(self.settings), **self.stall_info(),
        }

    # --- replays ----------------------------------------------------------------------------------------
    def record(self) -> Record:
        rec = Record(game=self.game_name, options=dict(self.options), actions=self.master.actions())
        rec.meta = {"table": self.id, "players": [s.name for s in self.seats], "result": self.result}
        return rec

    def replay_data(self) -> dict[str, Any]:
        """Every position of a finished game, with every action's events (all public now)."""
        if self._replay is None:
            state = self.game.new_initial_state()
            positions = [state.to_json()]
            to_move = [_to_move_of(state)]
            for entry in self.master.log:
                state.apply_json(entry.action)
                positions.append(state.to_json())
                to_move.append(_to_move_of(state))
            self._replay = {
                "table": self.id, "game": {"name": self.game_name, "title": self.game.title,
                                           "players": self.n_players},
                "seats": self.public_seats(), "result": self.result, "actions": self.master.actions(),
                "action_seats": [e.seat for e in self.master.log],
                "events": [[e.view(None, everything=True) for e in entry.events] for entry in self.master.log],
                "positions": positions, "to_move": to_move,
                "notes": [n.to_json() for n in self.notes if n.kind != "chat"],
            }
        return self._replay

    # --- moderation (moderation.py) -------------------------------------------------------------
    async def close_by_moderator(self, moderator: str) -> bool:
        """A moderator ends the table (waiting or in play): no winner, reason ``closed``, never rated;
        stored with its notice, then told. False when there was nothing to close."""
        from ludoteca.web.accounts.moderation import CLOSED, TABLE_CLOSED

        async with self.master.lock:
            if self.status not in (WAITING, PLAYING):
                return False
            result = {"returns": [0.0] * self.n_players, "winners": [], "reason": CLOSED}
            await self._change(status=OVER, result=result, notes=[self._note(TABLE_CLOSED, {"by": moderator})])
            for seat in list(self.away):
                self.away.pop(seat, None)
            return True

    async def tell_removed(self, line: Any) -> None:
        """A moderator erased the chat line ``line`` (moderation.ChatLine) in storage: erase it here
        and tell every viewer and every worker (a stored notice)."""
        from ludoteca.web.accounts.moderation import removal_note

        async with self.master.lock:
            note = removal_note(line, self.master.seq)
            await self._store_notes([note])
            self._told([note])

    async def close(self) -> None:
        self.master.clock.cancel()
        if self._abandon_timer is not None:
            self._abandon_timer.cancel()
        self._news.clear()
        tasks = [t for t in (self.ai_task, self._news_task, *self._tasks) if t is not None and not t.done()]
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        self.hub.close()


def _to_move_of(state: State) -> int | None:
    cp = state.current_player()
    return cp if cp >= 0 else None
