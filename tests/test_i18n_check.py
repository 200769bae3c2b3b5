"""``scripts/i18n.py --check``: a catalog out of date with the sources is reported before the tests run.

A catalog is up to date when running ``scripts/i18n.py`` would change nothing in it but its ``#:``
source lines and its creation date. A message that moved to another source file moves its entry (the
catalog follows the order of extraction), so the catalog is out of date until the script is run: the
check names the catalog, shows the change and says to run ``scripts/i18n.py``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from babel.messages.catalog import Catalog

from ludoteca import i18n


@pytest.fixture(scope="module")
def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("i18n_script", Path(__file__).parents[1] / "scripts" / "i18n.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def extracted(*places: tuple[str, str, int]) -> Catalog:
    """What the extractor finds: (msgid, file, line) in the order of the sorted source files."""
    template = Catalog(project="ludoteca", domain=i18n.WEB_DOMAIN)
    for msgid, path, line in sorted(places, key=lambda place: place[1:]):
        template.add(msgid, locations=[(path, line)])
    return template


def written(script: ModuleType, po: Path, template: Catalog) -> list[tuple[Path, bytes]]:
    """The file scripts/i18n.py would write at ``po`` for ``template`` (what ``main`` hands ``check``)."""
    return [(po, script.rendered(script.merged(po, i18n.WEB_DOMAIN, template), ignore_obsolete=True))]


BEFORE = extracted(("Sit here", "js/a.js", 3), ("Leave the table", "js/b.js", 8), ("Rematch", "js/c.js", 5))


@pytest.fixture
def po(script: ModuleType, tmp_path: Path) -> Path:
    """A translated catalog, as scripts/i18n.py wrote it for :data:`BEFORE`."""
    path = tmp_path / "it.po"
    ((_path, text),) = written(script, path, BEFORE)
    for msgid, italian in (("Sit here", "Siediti qui"), ("Leave the table", "Lascia il tavolo"),
                           ("Rematch", "Rivincita")):
        text = text.replace(f'msgid "{msgid}"\nmsgstr ""'.encode(), f'msgid "{msgid}"\nmsgstr "{italian}"'.encode())
    path.write_bytes(text)
    return path


def test_an_up_to_date_catalog_is_not_reported(script: ModuleType, po: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    shifted = extracted(("Sit here", "js/a.js", 40), ("Leave the table", "js/b.js", 8), ("Rematch", "js/c.js", 5))
    for template in (BEFORE, shifted):  # lines added above a message move its "#:" line only
        assert script.out_of_date(po, written(script, po, template)[0][1]) == []
        assert script.check("web", po, [], written(script, po, template)) == 0
    assert capsys.readouterr().out == ""


def test_a_catalog_whose_message_moved_to_another_file_is_reported(script: ModuleType, po: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    before = po.read_bytes()
    moved = extracted(("Sit here", "js/a.js", 3), ("Leave the table", "js/d.js", 2), ("Rematch", "js/c.js", 5))
    changes = script.out_of_date(po, written(script, po, moved)[0][1])
    # "Leave the table" now comes after "Rematch": one of them leaves its place for the other's, with
    # its translation
    removed = [line[1:] for line in changes if line.startswith("-")]
    added = [line[1:] for line in changes if line.startswith("+")]
    assert sorted(removed) == sorted(added)  # the same lines, elsewhere
    assert removed in (['msgid "Leave the table"', 'msgstr "Lascia il tavolo"', ""],
                       ['msgid "Rematch"', 'msgstr "Rivincita"', ""])
    assert script.check("web", po, [], written(script, po, moved)) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"web: out of date with the sources, run scripts/i18n.py to update it ({po}):"
    assert out[1:] == [f"    {line}" for line in changes]
    assert po.read_bytes() == before  # the check changes nothing


def test_a_new_message_is_reported_untranslated_and_out_of_date(script: ModuleType, po: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    grown = extracted(*((str(m.id), *m.locations[0]) for m in BEFORE if m.id), ("Resign", "js/c.js", 9))
    files = written(script, po, grown)
    catalog = script.merged(po, i18n.WEB_DOMAIN, grown)
    assert script.check("web", po, script.untranslated(catalog), files) == 2
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"web: untranslated: 'Resign' ({po})"
    assert lines[1].startswith("web: out of date") and '    +msgid "Resign"' in lines


def test_a_missing_catalog_and_a_long_change_are_reported_briefly(script: ModuleType, tmp_path: Path,
                                                                 po: Path) -> None:
    assert script.out_of_date(tmp_path / "nowhere.po", b"") == ["(the file does not exist)"]
    many = extracted(*((f"Text {k}", "js/z.js", k) for k in range(1, 30)))
    changes = script.out_of_date(po, written(script, po, many)[0][1])
    assert len(changes) == script.SHOWN + 1 and changes[-1].startswith("(and ")
