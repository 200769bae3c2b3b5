"""The lab's part of the application: its routes always (they say when the lab is off), its settings
and its pool when the server owner started it (``create_app(lab=…)``, ``ludoteca serve --lab``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ludoteca.web.labs.pool import LabPool
from ludoteca.web.labs.routes import router
from ludoteca.web.labs.settings import LabSettings


def install(app: Any, lab: LabSettings | Mapping[str, Any] | None, data_dir: str | Path | None) -> None:
    app.state.lab = LabSettings.of(lab, data_dir)
    app.state.lab_pool = None
    app.include_router(router)


async def start(app: Any) -> None:
    """Start the pool (after the lobby: it reaches the database through it)."""
    settings: LabSettings | None = app.state.lab
    if settings is None:
        return
    lobby = app.state.lobby
    pool = LabPool(settings, lobby.repo.engine, lobby.db, str(app.state.worker_id))
    app.state.lab_pool = pool
    await pool.start()


async def stop(app: Any) -> None:
    """Stop the pool (before the lobby): the run being played is queued again."""
    pool: LabPool | None = getattr(app.state, "lab_pool", None)
    if pool is not None:
        app.state.lab_pool = None
        await pool.stop()
