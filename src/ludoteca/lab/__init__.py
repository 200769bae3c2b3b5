"""The balance lab: many games played deterministically in parallel, and what they say.

* :mod:`~ludoteca.lab.plan` — command-line choices (agents, options, sweeps) to a run spec;
* :mod:`~ludoteca.lab.runner` — derived seeds, one game to one row, batches on local
  processes or Ray;
* :mod:`~ludoteca.lab.probes` — what the lab reads from a position, through the engine contract
  only (scores, turns, end reason, the game's declared counters): the lab names no game;
* :mod:`~ludoteca.lab.store` — the run's directory: ``run.json`` and ``games.jsonl`` (resumable);
* :mod:`~ludoteca.lab.session` — a run with a progress bar (shared by ``lab`` and ``arena``);
* :mod:`~ludoteca.lab.stats` — Wilson intervals, binomial, chi-square, z and t tests, ratio
  estimators with the game as the sampling unit, Holm's adjustment, percentiles;
* :mod:`~ludoteca.lab.metrics` — rows to figures: win rates, lengths, Ludii-style metrics;
* :mod:`~ludoteca.lab.report` — ``summary.json``, the terminal tables and the report's texts;
  :mod:`~ludoteca.lab.report_html` renders ``report.html`` (Jinja2), :mod:`~ludoteca.lab.plots` its plots;
* :mod:`~ludoteca.lab.provenance` — what played a run (version, commit, agents' settings and engines);
* :mod:`~ludoteca.lab.api` — :func:`run` for notebooks and scripts (rows, summary, DataFrame, CSV).
* :mod:`~ludoteca.lab.balance` — ``ludoteca balance``: the fairest setting found by racing (successive
  halving with simultaneous intervals).

See ``docs/lab.md``.
"""

CONNECT_TIMEOUT = 30.0
"""Seconds to wait for a Ray cluster given by address before giving up (``--connect-timeout``)."""


def run(*args: object, **kwargs: object) -> object:
    """``ludoteca.lab.run(game, players=…, agents=…, games=…, …)``: see :func:`ludoteca.lab.api.run`."""
    from ludoteca.lab.api import run as _run

    return _run(*args, **kwargs)  # type: ignore[arg-type]
