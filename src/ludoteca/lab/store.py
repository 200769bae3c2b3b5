"""A run's directory: ``run.json`` (what is simulated) and ``games.jsonl`` (one row per game).

Rows are appended as games finish: each batch of rows is written (one line per game), flushed
and fsynced as soon as it comes back from a worker, so a run killed at any moment keeps every
row it reported. Reading ignores a truncated last line (a row being
written when the process died) and cuts it off before appending again. Running the same
command again continues where the run stopped; a larger ``--games`` extends it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ludoteca.core.i18n import _
from ludoteca.lab.runner import Row, RunSpec

FORMAT = "ludoteca-lab"
VERSION = 1
MANIFEST = "run.json"
RESULTS = "games.jsonl"


class StoreError(ValueError):
    """The output directory cannot be used (another run's results, unreadable files)."""


def row_key(row: Row) -> tuple[str, int]:
    return (row["variant"], int(row["game"]))


def read_rows(path: str | Path) -> tuple[list[Row], int]:
    """Rows of a results file and the byte length of its complete lines (a truncated last
    line is ignored)."""
    p = Path(path)
    if not p.exists():
        return [], 0
    data = p.read_bytes()
    end = data.rfind(b"\n") + 1  # complete lines only
    rows: list[Row] = []
    for n, line in enumerate(data[:end].splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            raise StoreError(_("{file}: line {line} is not a JSON row; the file is damaged").format(
                file=p, line=n)) from None
    return rows, end


def _describe_difference(old: dict[str, Any], new: dict[str, Any]) -> str:
    for key in ("game", "players", "seed", "lineup", "rotate"):
        if old.get(key) != new.get(key):
            return _("{setting} {old}, not {new}").format(setting=key, old=json.dumps(old.get(key)),
                                                          new=json.dumps(new.get(key)))
    old_v = [v["key"] for v in old.get("variants", [])]
    new_v = [v["key"] for v in new.get("variants", [])]
    if old_v != new_v:
        return _("variants {old}, not {new}").format(old=", ".join(old_v), new=", ".join(new_v))
    for ov, nv in zip(old["variants"], new["variants"], strict=True):
        if ov != nv:
            return _("other options for {variant} (a game option or a designer file changed)").format(
                variant=ov["key"])
    return _("other settings")


class ResultStore:
    """The rows of one run, on disk."""

    def __init__(self, directory: str | Path) -> None:
        self.dir = Path(directory)
        self.results = self.dir / RESULTS
        self.manifest = self.dir / MANIFEST
        self._fh: Any = None
        self.provenance: dict[str, Any] = {}
        """What plays the run (lab/provenance.py), set by :meth:`open`."""

    def open(self, spec: RunSpec, games: int) -> dict[tuple[str, int], Row]:
        """Check the directory holds this run (or nothing), record ``games`` and return the
        rows already done, by ``(variant, game)``."""
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(_("cannot create {dir}: {error}").format(dir=self.dir, error=exc.strerror)) from None
        if not self.dir.is_dir():
            raise StoreError(_("{dir} is not a directory").format(dir=self.dir))
        new = spec.to_json()
        from ludoteca.lab.provenance import changes, provenance

        self.provenance = provenance(spec)
        if self.manifest.exists():
            try:
                old = json.loads(self.manifest.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError, UnicodeDecodeError):
                raise StoreError(_("{file} is unreadable; use another --out").format(file=self.manifest)) from None
            if old.get("format") != FORMAT:
                raise StoreError(_("{dir} holds something else than a lab run; use another --out").format(
                    dir=self.dir))
            if old.get("spec") != new:
                raise StoreError(_("{dir} holds another run ({difference}); use another --out or delete it").format(
                    dir=self.dir, difference=_describe_difference(old.get("spec", {}), new)))
            changed = changes(old.get("provenance") or {}, self.provenance)
            if changed:
                raise StoreError(_("{dir} holds games played otherwise: {difference}. Resuming would mix two kinds "
                                   "of game under one label; use another --out").format(dir=self.dir,
                                                                                       difference=changed))
        elif self.results.exists():
            raise StoreError(_("{file} exists without {manifest}; use another --out").format(
                file=self.results, manifest=MANIFEST))
        self._write_manifest({"format": FORMAT, "version": VERSION, "games": games, "spec": new,
                              "provenance": self.provenance})
        rows, end = read_rows(self.results)
        if self.results.exists() and end < self.results.stat().st_size:
            with open(self.results, "r+b") as fh:  # cut a row the last run died writing
                fh.truncate(end)
        done: dict[tuple[str, int], Row] = {}
        for row in rows:
            done[row_key(row)] = row
        self._fh = open(self.results, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()
        return done

    def _write_manifest(self, data: dict[str, Any]) -> None:
        tmp = self.manifest.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, self.manifest)

    def append(self, lines: list[str]) -> None:
        """Append a batch of rows (JSON lines, without newlines) in one write; flush, fsync."""
        fh = self._fh
        fh.write("\n".join(lines) + "\n")
        fh.flush()
        os.fsync(fh.fileno())

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def load_run(directory: str | Path) -> tuple[RunSpec, int, list[Row]]:
    """A finished or partial run read back: its spec, ``games`` and rows."""
    d = Path(directory)
    try:
        manifest = json.loads((d / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise StoreError(_("cannot read {file}: {error}").format(file=d / MANIFEST, error=exc)) from None
    rows, _end = read_rows(d / RESULTS)
    return RunSpec.from_json(manifest["spec"]), int(manifest["games"]), rows
