"""Build hook for the optional compiled engines (issue 15); everything else is in pyproject.toml.

``pip install -e .`` (``scripts/setup``) compiles every game's ``src/ludoteca/games/<game>/_compiled.pyx``
(found by name: a new game with a compiled engine touches only its own folder) with Cython (a build
requirement) and the system C compiler. The extensions are optional: without a compiler (or without
Cython) ludoteca still installs and uses the Python engines, with one warning (the game's
``compiled.available()`` is then False). See docs/compiled.md.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from setuptools import Extension, setup  # type: ignore[import-untyped]
from setuptools.command.build_ext import build_ext  # type: ignore[import-untyped]


class optional_build_ext(build_ext):  # type: ignore[misc]
    """``build_ext`` where any failure to build an extension skips it instead of failing the
    install (``optional=True`` covers compiler errors only)."""

    def build_extension(self, ext: Any) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:
            print(f"ludoteca: {ext.name} not built ({exc}); the Python engine will be used", flush=True)


SOURCES = {f"ludoteca.games.{path.parent.name}.{path.stem}": path.as_posix()
           for pattern in ("*/_compiled.pyx", "*/_solve.pyx")
           for path in sorted(Path("src/ludoteca/games").glob(pattern))}
"""Every compiled extension: its module name and its Cython source (a game's engine ``_compiled``,
and ``_solve`` where a game has an exact solver: ``LUDOTECA_EXT=ludoteca.games.tohm._solve``)."""


def chosen() -> dict[str, str]:
    """SOURCES, or only those named in ``LUDOTECA_EXT`` (comma-separated module names, or game names),
    so one engine can be rebuilt alone: ``LUDOTECA_EXT=tohm python setup.py build_ext --inplace``
    (or ``ludoteca.games.tohm._compiled``). A name that is neither stops the build with the known ones."""
    names = [name.strip() for name in os.environ.get("LUDOTECA_EXT", "").split(",") if name.strip()]
    if not names:
        return SOURCES
    picked: dict[str, str] = {}
    for name in names:
        module = name if name in SOURCES else f"ludoteca.games.{name}._compiled"
        if module not in SOURCES:
            known = ", ".join(sorted({m.split(".")[2] for m in SOURCES}))
            raise SystemExit(f"LUDOTECA_EXT: no compiled engine is called {name!r}; the engines are: {known}")
        picked[module] = SOURCES[module]
    return picked


def ext_modules() -> list[Extension]:
    sources = chosen()  # first: a misspelled LUDOTECA_EXT stops here, whatever else is missing
    try:
        from Cython.Build import cythonize  # type: ignore[import-not-found]
    except ImportError:  # no Cython: the Python engines only
        print("ludoteca: Cython is not installed; the compiled engines are not built", flush=True)
        return []
    exts = [Extension(name, [src], optional=True, extra_compile_args=["-O3"]) for name, src in sources.items()]
    try:
        # the generated .c files go to build/ (ignored by git), never next to the .pyx
        built = list(cythonize(exts, build_dir="build/cython", quiet=True, language_level=3,
                                include_path=["src"]))  # cimport ludoteca.core._rng (a .pxd)
    except Exception as exc:  # a broken .pyx must not break the install: Python engines only
        print(f"ludoteca: the compiled engines are not built (Cython failed: {exc})", flush=True)
        return []
    for ext in built:
        ext.optional = True  # cythonize() drops the flag: an uncompiled extension is skipped, not copied
    return built


setup(ext_modules=ext_modules(), cmdclass={"build_ext": optional_build_ext})
