"""The lab report, the arena and ``serve`` in Italian and English: the real command line,
``--lang`` and the locale variables, numbers written for the language, plots labelled in it."""

from __future__ import annotations

import base64
import html
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ludoteca.core import i18n as hook
from ludoteca.lab import report

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts" / "lab-report"
RUN = ["lab", "tohm", "--players", "2", "--games", "20", "--seed", "1", "--jobs", "1", "--no-progress"]
ENGLISH_WORDS = {"the", "and", "of", "with", "by", "from", "against", "games", "game", "players", "player", "wins",
                 "win", "rate", "seat", "seats", "share", "mean", "turns", "rounds", "significant", "not", "fair",
                 "interval", "every", "each", "shared", "figures", "length", "order"}
"""Words of the English report that no Italian sentence uses."""


@pytest.fixture(autouse=True)
def english_after() -> Iterator[None]:
    yield
    hook.install(None)
    report.set_language("en")


def ludoteca(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
             ) -> subprocess.CompletedProcess[str]:
    """The real command line, in a fresh process, with the locale variables of ``env`` only."""
    base = {k: v for k, v in os.environ.items() if k not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")}
    return subprocess.run([sys.executable, "-m", "ludoteca.cli", *args], capture_output=True, text=True,
                          env={**base, "COLUMNS": "200", **(env or {})}, cwd=cwd, timeout=120)


def lab_run(out: Path, *extra: str, env: dict[str, str] | None = None) -> tuple[str, str]:
    """``ludoteca lab tohm ...``: its terminal output and its report.html."""
    done = ludoteca(*RUN, "--out", str(out), *extra, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout, (out / "report.html").read_text(encoding="utf-8")


def prose(page: str) -> str:
    """The text a person reads in a report, without the code, the command line, the options as JSON and
    the names of files."""
    page = re.sub(r"<style>.*?</style>|<code>.*?</code>|src='[^']*'", " ", page, flags=re.S)
    page = re.sub(r"\{[^{}]*\}", " ", page)  # the options of each variant, as JSON
    page = re.sub(r"[\w.]+\.(jsonl|json|html|md)\b", " ", page)  # file names
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def images(page: str) -> list[bytes]:
    return [base64.b64decode(b) for b in re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", page)]


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, str]]:
    """The same run reported in each language (the second run only reads the games back)."""
    out = tmp_path_factory.mktemp("lab") / "tohm"
    return {"en": lab_run(out, "--lang", "en"), "it": lab_run(out, "--lang", "it")}


def test_the_italian_report_reads_in_italian(reports: dict[str, tuple[str, str]]) -> None:
    stdout, page = reports["it"]
    text = prose(page)
    assert "<html lang='it'>" in page
    for phrase in ("Laboratorio dell'equilibrio: TOHM, 2 giocatori", "Percentuale di vittorie per posto e per ordine "
                   "di gioco", "intervalli di confidenza di Wilson al 95%", "1º giocatore", "2º giocatore",
                   "non significativo al 5%", "contro una quota equa del 50,0%", "Durata delle partite",
                   "Vittorie condivise e limite di turni", "Dati di TOHM",
                   "partite finite per tutti i trofei assegnati", "Metriche di valutazione",
                   "Fattore di ramificazione", "unità di campionamento", "mediana",
                   "ogni 8ª partita (3 partite per variante)", "tris per altri", "definizione"):
        assert phrase in text, phrase
    words = {w.lower() for w in re.findall(r"[A-Za-z]+", text)}
    assert not words & ENGLISH_WORDS, sorted(words & ENGLISH_WORDS)
    # numbers with the decimal comma, intervals with a semicolon
    assert re.search(r"\b\d{1,3},\d%", text) and not re.search(r"\b\d+\.\d+%", text)
    assert re.search(r"\[\d+,\d;\s\d+,\d\]", text) and not re.search(r"\[\d+\.\d+, \d+\.\d+\]", text)
    assert re.search(r"p = 0,\d{4}", text)
    # and the terminal too
    assert "20 partite" in stdout or "Tutte le 20 partite erano già state giocate" in stdout
    assert "TOHM, 2 giocatori — percentuale di vittorie per posto (intervallo di Wilson al 95%)" in stdout
    assert "Primo giocatore: il posto 0 vince il 45,0% [27,5; 63,8]" in stdout
    assert "Rapporto:" in stdout
    assert not re.search(r"\b(games|players|seat|Report)\b", re.sub(r"\S+\.(jsonl|json|html)\b", " ", stdout))


def test_the_english_report_is_unchanged(reports: dict[str, tuple[str, str]]) -> None:
    stdout, page = reports["en"]
    text = prose(page)
    assert "<html lang='en'>" in page
    for phrase in ("Balance lab: TOHM, 2 players", "Win rate by seat and by play order", "1st player", "2nd player",
                   "seat 0 wins 45.0% [27.5, 63.8] against a fair 50.0% (advantage -5.0 points, p = 0.6149, not "
                   "significant at 5%)", "games ended by all_trophies_given", "every 8th game (3 games per variant)",
                   "Evaluation metrics (after Ludii)", "tris for others"):
        assert phrase in text, phrase
    assert not re.search(r"\b\d+,\d%", text)
    assert "First player: seat 0 wins 45.0% [27.5, 63.8]" in stdout and "Report:" in stdout


def test_both_languages_report_the_same_figures(reports: dict[str, tuple[str, str]]) -> None:
    """Every percentage of the English report is in the Italian one, with a decimal comma."""
    english = re.findall(r"\d+\.\d%", prose(reports["en"][1]))
    italian = re.findall(r"\d+,\d%", prose(reports["it"][1]))
    assert english and [x.replace(".", ",") for x in english] == italian


def test_the_plots_are_labelled_in_the_language(reports: dict[str, tuple[str, str]]) -> None:
    en, it = images(reports["en"][1]), images(reports["it"][1])
    assert len(en) == len(it) >= 3
    assert all(png.startswith(b"\x89PNG") for png in en + it)
    assert all(a != b for a, b in zip(en, it, strict=True))  # axis labels, legends, tick numbers
    assert "alt='percentuale di vittorie per ordine di gioco'" in reports["it"][1]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for lang, pngs in (("en", en), ("it", it)):
        for i, png in enumerate(pngs):
            (ARTIFACTS / f"tohm-{lang}-{i}.png").write_bytes(png)


def test_the_summary_stays_data_in_english(reports: dict[str, tuple[str, str]], tmp_path: Path) -> None:
    """summary.json is read by programs: the same keys and English names whatever the report's language."""
    out = tmp_path / "it"
    assert ludoteca(*RUN, "--out", str(out), "--lang", "it", "--no-report").returncode == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["definitions"]["advantage"].startswith("Win rate of the player who took the first turn")
    assert summary["variants"][0]["figures"][0]["name"] == "games ended by all_trophies_given"


def test_a_sweep_with_agents_reads_in_italian(tmp_path: Path) -> None:
    """The sections a single run lacks: the agents' table and the variants compared."""
    out = tmp_path / "sweep"
    done = ludoteca("lab", "exactly", "--players", "3", "--games", "6", "--seed", "3", "--agents",
                    "random,random,heuristic", "--sweep", "turn_limit=default,30", "--jobs", "1", "--no-progress",
                    "--out", str(out), "--lang", "it")
    assert done.returncode == 0, done.stderr
    text = prose((out / "report.html").read_text(encoding="utf-8"))
    for phrase in ("Percentuale di vittorie per agente", "Varianti a confronto", "Confronti multipli.",
                   "turn_limit=30 contro turn_limit=default", "percentuale di vittorie del posto 0",
                   "correzione di Holm", "t di Welch", "z per due proporzioni", "partite finite per tre euro",
                   "blocchi del tetto", "punti"):
        assert phrase in text, phrase
    words = {w.lower() for w in re.findall(r"[A-Za-z]+", text)}
    assert not words & (ENGLISH_WORDS | {"vs", "pts", "adjustment", "measure", "difference"}), words & ENGLISH_WORDS
    assert "Varianti contro turn_limit=default" in done.stdout and "Confronti multipli:" in done.stdout


@pytest.mark.parametrize(("env", "extra", "lang"), [
    ({"LANG": "it_IT.UTF-8"}, [], "it"), ({"LANGUAGE": "it", "LANG": "en_US.UTF-8"}, [], "it"),
    ({"LANG": "it_IT.UTF-8"}, ["--lang", "en"], "en"), ({"LANG": "C.UTF-8"}, [], "en"),
])
def test_the_language_follows_lang_then_the_locale(env: dict[str, str], extra: list[str], lang: str,
                                                   tmp_path: Path) -> None:
    done = ludoteca("lab", "tohm", "--players", "2", "--games", "2", "--jobs", "1", "--no-progress", "--no-report",
                    "--out", str(tmp_path / "run"), *extra, env=env)
    assert done.returncode == 0, done.stderr
    assert ("Rapporto: (saltato)" in done.stdout) == (lang == "it")
    assert ("Report: (skipped)" in done.stdout) == (lang == "en")


def test_the_arena_speaks_italian() -> None:
    done = ludoteca("arena", "tohm", "--players", "2", "--agents", "random,heuristic", "--games", "3", "--seed", "1",
                    "--jobs", "1", "--no-progress", "--lang", "it")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "(si giocano 4 partite, un multiplo di 2" in out
    assert "Arena: TOHM con 2 giocatori, 4 partite, seme 1 (posti a rotazione; formazione random, heuristic)" in out
    for phrase in ("percentuale di vittorie", "IC 95%", "quota equa", "per posto", "durata media di una partita",
                   "valore p del test contro la quota equa", "partite/s"):
        assert phrase in out, phrase
    assert re.search(r"\d+,\d%", out) and re.search(r"\[\d+,\d; \d+,\d\]", out)
    english = ludoteca("arena", "tohm", "--players", "2", "--agents", "random,heuristic", "--games", "3",
                       "--seed", "1", "--jobs", "1", "--no-progress", "--lang", "en").stdout
    assert "Arena: TOHM with 2 players, 4 games, seed 1" in english and "95% CI" in english


def test_bad_input_is_refused_in_italian(tmp_path: Path) -> None:
    done = ludoteca("lab", "tohm", "--players", "2", "--agents", "random,random,random", "--out",
                    str(tmp_path / "x"), "--lang", "it")
    assert done.returncode == 2
    assert done.stderr.strip() == ("ludoteca: error: --agents elenca 3 agenti ma la partita ha 2 giocatori (uno per "
                                   "posto, oppure uno per tutti i posti)")
    assert not (tmp_path / "x").exists()
    done = ludoteca("lab", "tohm", "--players", "2", "--out", str(tmp_path / "y"), "--sweep", "turn_limit=5,5",
                    "--lang", "it")
    assert done.returncode == 2 and "--sweep 'turn_limit=5,5' elenca un valore due volte" in done.stderr
    done = ludoteca("arena", "tohm", "--players", "9", "--agents", "random,nope", "--lang", "it")
    assert done.returncode == 2 and done.stderr.strip() == "ludoteca: error: TOHM si gioca da 2 a 5 giocatori, non 9"
    done = ludoteca("arena", "tohm", "--agents", "random,nope", "--option", "turn_limit=0", "--lang", "it")
    assert done.returncode == 2 and "opzione turn_limit: atteso 1 o più, ricevuto 0" in done.stderr
    done = ludoteca("arena", "tohm", "--agents", "random,nope", "--lang", "it")
    assert done.returncode == 2 and "agente sconosciuto 'nope'; gli agenti sono:" in done.stderr
    done = ludoteca("serve", "--port", "70000", "--data-dir", str(tmp_path / "data"), "--lang", "it")
    assert done.returncode == 2 and "--port deve essere tra 0 e 65535, non 70000" in done.stderr


def test_serve_announces_itself_in_italian(tmp_path: Path) -> None:
    import httpx

    base = {k: v for k, v in os.environ.items() if k not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")}
    cmd = [sys.executable, "-m", "ludoteca.cli", "serve", "--host", "127.0.0.1", "--port", "0", "--data-dir",
           str(tmp_path), "--lang", "it"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=base)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.match(r"ludoteca è in servizio su (http://127\.0\.0\.1:\d+)/  \(database: sqlite", line)
        assert found, line
        # then the server runs as usual (each browser gets its own language from the web catalogs)
        answer = httpx.get(found.group(1) + "/api/games", timeout=10)
        assert answer.status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_numbers_and_counted_words_in_each_language() -> None:
    assert (report.pct(0.508), report.plural(1500, "game"), report.ci_text([0.5, 0.516])) == (
        "50.8%", "1,500 games", "[50.0, 51.6]")
    from ludoteca.i18n import use_language

    report.set_language(use_language("it"))
    assert report.pct(0.508) == "50,8%" and report.pct(1.0) == "100,0%"
    assert report.plural(1500, "game") == "1.500 partite" and report.plural(1, "game") == "1 partita"
    assert report.plural(0, "tile") == "0 tessere" and report.plural(2, "job") == "2 processi"
    assert report.ci_text([0.5, 0.516]) == "[50,0; 51,6]" and report.ci_num([1.0001, 1.0065], 4) == "[1,0001; 1,0065]"
    assert report.pval(0.00001) == "< 0,0001" and report.p_is(0.0386) == "p = 0,0386"
    assert report.dec(0.8, 1, sign=True) == "+0,8" and report.dec(-367.3, 1, sign=True) == "-367,3"
    assert report.every_kth_game(1) == "ogni partita" and report.every_kth_game(8) == "ogni 8ª partita"
    assert report.player_in_order(0) == "1º giocatore"
    assert report.reason_text("all_trophies_given") == "tutti i trofei assegnati"
    assert report.reason_text("a_reason_nobody_translated") == "a_reason_nobody_translated"
