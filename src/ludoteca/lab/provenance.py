"""What played a run, recorded in ``run.json`` and shown by its report: the ludoteca version and
commit, and for each variant every agent of the lineup as it really plays — its resolved settings
(its own parameters, else the game's ``agent_defaults``, else the agent's fallbacks) and, for an
agent with a compiled search, the engine (compiled, or the Python fallback and why).

A run resumed on a machine where an agent plays differently (the compiled engine missing or rebuilt
with other defaults, other tuning) would mix two kinds of game under one label: :func:`changes`
says what differs, and the store refuses the resume.
"""

from __future__ import annotations

import subprocess
from functools import cache
from pathlib import Path
from typing import Any

from ludoteca.agents import make_agent
from ludoteca.core.i18n import _
from ludoteca.lab.runner import RunSpec
from ludoteca.registry import load_game


def describe_agent(spec: str, game_name: str, options: dict[str, Any]) -> dict[str, Any]:
    """How the agent ``spec`` plays the game ``game_name`` with ``options``."""
    game = load_game(game_name, **options)
    agent = make_agent(spec, seed=0, game=game_name)
    inner = getattr(agent, "inner", agent)  # a level's pacing wraps the agent that searches
    out: dict[str, Any] = {"spec": spec, "plays": getattr(agent, "spec", spec)}
    settings = getattr(inner, "settings", None)
    if callable(settings):
        out["settings"] = settings(game)
    engine = getattr(inner, "engine", None)
    if callable(engine):
        out.update(engine(game))
    return out


@cache
def commit() -> str | None:
    """The git commit of the source this ludoteca runs from, when it is a checkout (else None)."""
    here = Path(__file__).resolve().parent
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    text = done.stdout.strip()
    return text if done.returncode == 0 and len(text) == 40 else None


def provenance(spec: RunSpec) -> dict[str, Any]:
    """The run's provenance: version, commit, and every distinct agent as it plays each variant."""
    from ludoteca import __version__

    agents = {v.key: [describe_agent(a, spec.game, v.options) for a in dict.fromkeys(spec.lineup)]
              for v in spec.variants}
    return {"ludoteca": __version__, "commit": commit(), "agents": agents}


def changes(old: dict[str, Any], new: dict[str, Any]) -> str:
    """What differs between two provenances in how the agents play (``""``: nothing)."""
    before, after = old.get("agents") or {}, new.get("agents") or {}
    for key, now in after.items():
        then = before.get(key)
        if then is None:
            continue
        for a, b in zip(then, now, strict=False):
            if a != b:
                return f"{b['spec']} ({key}): {summary(a)} → {summary(b)}"
    return ""


def summary(agent: dict[str, Any]) -> str:
    """``strong: iterations=1000, c=0.4, cap=10; compiled engine`` in one line, in the current language."""
    settings = ", ".join(f"{k}={v}" for k, v in (agent.get("settings") or {}).items() if v is not None)
    engine = agent.get("engine")
    text = ""
    if engine == "compiled":
        text = (_("compiled engine; hidden choices by the Python information-set search") if agent.get("hidden")
                else _("compiled engine"))
    elif engine:
        text = _("the Python mcts instead of the compiled engine: {reason}").format(reason=agent.get("reason", ""))
    parts = [p for p in (settings, text) if p]
    return f"{agent['plays']}: {'; '.join(parts)}" if parts else str(agent["plays"])
