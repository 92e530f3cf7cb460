"""The language registry (DESIGN.md sections 2-3): every front end is one package under
``chronolog.lang`` whose ``__init__`` defines ``LANGUAGE``, a :class:`Language`. The
command line and both runners find languages here, by ``--lang NAME`` or by a program's
file extension, so adding a language edits none of them.
"""
from __future__ import annotations

import importlib
import os
import pkgutil
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Callable

from chronolog.errors import ChronologError
from chronolog.program.contract import Options, Program, ProgramSpec
from chronolog.terms import TermDictionary


@dataclass(frozen=True)
class Language:
    """One front end: its name, extensions, and how it compiles a spec to a program.

    ``parse(text, filename)`` returns the language's syntax tree (positioned errors);
    ``compile(spec, dictionary)`` the program (``dictionary`` None: a new one);
    ``options`` names the :class:`Options` fields it reads besides ``time_unit``.
    """

    name: str
    title: str
    extensions: tuple[str, ...]
    parse: Callable[[str, str | None], object]
    compile: Callable[[ProgramSpec, TermDictionary | None], Program]
    options: frozenset[str] = frozenset()


# Languages of DESIGN.md section 3 whose package is not built yet: (title, extension).
PLANNED = {
}


class UnknownLanguageError(ChronologError):
    """A --lang or an extension no language has."""


@lru_cache(maxsize=1)
def languages() -> dict[str, Language]:
    """Every language package under chronolog.lang, by name."""
    import chronolog.lang as package

    found: dict[str, Language] = {}
    for module in pkgutil.iter_modules(package.__path__):
        if module.ispkg:
            language = getattr(importlib.import_module(f"{package.__name__}.{module.name}"), "LANGUAGE", None)
            if isinstance(language, Language):
                found[language.name] = language
    return found


def _known() -> str:
    names = sorted(set(languages()) | set(PLANNED))
    extensions = sorted({e for lang in languages().values() for e in lang.extensions}
                        | {ext for name, (_, ext) in PLANNED.items() if name not in languages()})
    return f"known languages: {', '.join(names)}; extensions: {', '.join(extensions)}"


def language_named(name: str) -> Language:
    """The language called ``name`` (a clear error for an unknown or unbuilt one)."""
    found = languages().get(name)
    if found is not None:
        return found
    if name in PLANNED:
        title, ext = PLANNED[name]
        raise UnknownLanguageError(f"the {title} language (--lang {name}, {ext}) is not built yet in this chronolog")
    raise UnknownLanguageError(f"unknown language {name!r} ({_known()})")


def language_for(path: str | None, name: str | None = None) -> Language:
    """The language of a program: ``name`` when given, else from ``path``'s extension."""
    if name is not None:
        return language_named(name)
    ext = os.path.splitext(path or "")[1].lower()
    for language in languages().values():
        if ext in language.extensions:
            return language
    for planned, (_, planned_ext) in PLANNED.items():
        if ext == planned_ext:
            return language_named(planned)
    shown = ext or "no extension"
    raise UnknownLanguageError(f"{path}: cannot tell the language from {shown} (give --lang; {_known()})")


def check_options(language: Language, options: Options) -> None:
    """Refuse options the language has no use for, rather than ignore them."""
    defaults = Options()
    for f in fields(Options):
        if f.name == "time_unit" or f.name in language.options:
            continue
        if getattr(options, f.name) != getattr(defaults, f.name):
            flag = "--" + f.name.replace("_", "-")
            raise ChronologError(f"{flag} does not apply to {language.title} programs")


def compile_program(spec: ProgramSpec, dictionary: TermDictionary | None = None) -> Program:
    """The program of ``spec``, compiled by its language."""
    language = language_named(spec.language)
    check_options(language, spec.options)
    program = language.compile(spec, dictionary)
    program.dictionary.pin()  # its constants and background stay; the stream's terms may be reclaimed
    return program


def load_spec(path: str, language: str | None = None, options: Options | None = None) -> ProgramSpec:
    """The spec of a program file (its language from ``language`` or its extension)."""
    lang = language_for(path, language)
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except FileNotFoundError:
        raise ChronologError(f"{path}: no such program file") from None
    except IsADirectoryError:
        raise ChronologError(f"{path}: is a directory, not a program file") from None
    except UnicodeDecodeError as exc:
        raise ChronologError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ChronologError(f"{path}: cannot read the program: {exc.strerror}") from None
    return ProgramSpec(lang.name, text, path, options or Options())
