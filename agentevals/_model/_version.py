"""A scorer's version: a short digest of a canonical description of its configuration.

The description must be the same in every process and Python run that holds the same configuration:
no ``id()``, no ``hash()`` of text (randomized per process), no ``repr`` that may show an address. A
function is described by its module, qualified name, bytecode, constants and names (not its line
numbers: moving code does not change it), its defaults, the plain values its closure holds (an
options dataclass, a pattern) and the functions of its own package it calls by a global name (a
formula a step calls), so a prebuilt scorer's version follows its options and its formula.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import re
import types
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

#: Hex digits of a computed version.
VERSION_DIGITS = 12
_MAX_DEPTH = 12
_PLAIN = (str, int, float, bool, bytes, type(None))
_FUNCTIONS = (types.FunctionType, types.MethodType, functools.partial, types.BuiltinFunctionType)


def config_digest(description: Any) -> str:
    """The first ``VERSION_DIGITS`` hex digits of the sha256 of ``description``'s canonical text."""
    text = repr(canonical(description))
    return hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest()[:VERSION_DIGITS]


def canonical(value: Any, depth: int = 0, seen: frozenset[int] = frozenset()) -> Any:
    """``value`` as nested tuples of plain values, stable across processes (sets sorted, objects named
    by their type unless they are plain data)."""
    if isinstance(value, _PLAIN):
        return value
    if depth > _MAX_DEPTH or id(value) in seen:
        return "<deep>"
    seen = seen | {id(value)}
    nested = functools.partial(canonical, depth=depth + 1, seen=seen)
    if isinstance(value, enum.Enum):
        return ("enum", _name(type(value)), value.name)
    if isinstance(value, list | tuple):
        return (type(value).__name__, *map(nested, value))
    if isinstance(value, set | frozenset):
        return ("set", *sorted(map(repr, map(nested, value))))
    if isinstance(value, Mapping):
        return ("map", *sorted((repr(nested(k)), nested(v)) for k, v in value.items()))
    if isinstance(value, re.Pattern):
        return ("re", value.pattern, value.flags)
    if isinstance(value, _FUNCTIONS):
        return function_description(value, depth + 1, seen)
    if isinstance(value, type):
        if issubclass(value, BaseModel):
            return ("model", _name(value), nested(value.model_json_schema()))
        return ("type", _name(value))
    if isinstance(value, BaseModel):
        return ("model", _name(type(value)), nested(value.model_dump(mode="python")))
    if dataclasses.is_dataclass(value):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value) if f.repr}
        return ("dataclass", _name(type(value)), nested(fields))
    describe = getattr(value, "_version_description", None)  # a Scorer, a Judge
    if callable(describe):
        return nested(describe())
    call = type(value).__dict__.get("__call__") if callable(value) else None
    if isinstance(call, types.FunctionType):
        return ("callable", _name(type(value)), function_description(call, depth + 1, seen))
    return ("object", _name(type(value)))


def function_description(fn: Any, depth: int = 0, seen: frozenset[int] = frozenset()) -> Any:
    """The identity of ``fn``: module, qualified name, a digest of its code, its defaults and the plain
    values of its closure (functions in it described the same way)."""
    nested = functools.partial(canonical, depth=depth + 1, seen=seen)
    if isinstance(fn, functools.partial):
        return ("partial", nested(fn.func), nested(fn.args), nested(fn.keywords))
    if isinstance(fn, types.MethodType):
        return ("method", nested(fn.__self__), function_description(fn.__func__, depth + 1, seen))
    code = getattr(fn, "__code__", None)
    if not isinstance(code, types.CodeType):
        return ("builtin", getattr(fn, "__module__", None), getattr(fn, "__qualname__", repr(type(fn))))
    cells = []
    for cell in fn.__closure__ or ():
        try:
            cells.append(nested(cell.cell_contents))
        except ValueError:  # an empty cell (a name assigned after the function was made)
            cells.append("<empty>")
    seen = seen | {id(fn)}
    calls = tuple(
        (
            name,
            "<deep>"
            if depth > _MAX_DEPTH or id(called) in seen
            else function_description(called, depth + 1, seen),
        )
        for name, called in _called_functions(fn, code)
    )
    return (
        "function",
        fn.__module__,
        fn.__qualname__,
        code_digest(code),
        nested(fn.__defaults__),
        nested(fn.__kwdefaults__),
        tuple(cells),
        calls,
    )


def _called_functions(fn: Any, code: types.CodeType) -> list[tuple[str, types.FunctionType]]:
    """The functions of ``fn``'s own package that its code names as globals, by name."""
    package = str(fn.__module__).partition(".")[0]
    scope = getattr(fn, "__globals__", {})
    found = []
    for name in sorted(_global_names(code)):
        value = scope.get(name)
        if (
            isinstance(value, types.FunctionType)
            and value is not fn
            and str(value.__module__).partition(".")[0] == package
        ):
            found.append((name, value))
    return found


def _global_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def code_digest(code: types.CodeType) -> str:
    """sha256 of the bytecode, constants (nested code included) and names of ``code``."""
    digest = hashlib.sha256()
    _feed(digest, code)
    return digest.hexdigest()[:16]


def _feed(digest: Any, code: types.CodeType) -> None:
    digest.update(code.co_code)
    digest.update(repr((code.co_names, code.co_varnames, code.co_freevars)).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _feed(digest, const)
        else:
            digest.update(repr(canonical(const)).encode("utf-8", "backslashreplace"))


def _name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"
