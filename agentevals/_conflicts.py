"""Fail at import when another distribution shares the ``agentevals`` package directory.

Our distribution is ``agentevals-core``. Two unrelated projects also install an ``agentevals`` import
package: ``agentevals`` on the package index (LangChain's trajectory evaluators) and ``agentevals-cli``.
Installed into the same environment, the last one installed overwrites the other's files, so whichever
``__init__.py`` runs, the package is a mixture. This module looks for their metadata directories next
to our package (one ``os.listdir``, tens of microseconds: no scan of every installed distribution)
and raises an :class:`ImportError` that names them and the fix. It runs when ``agentevals`` is
imported, and again when an integration imports it (which also works after the other project's
``__init__.py`` replaced ours).
"""

import os

CONFLICTING = ("agentevals", "agentevals-cli")
FIX = "pip uninstall agentevals agentevals-cli && pip install --force-reinstall agentevals-core"
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def conflicting_distributions(site_dir: str) -> list[str]:
    """``"name version"`` of each conflicting distribution installed in ``site_dir`` that ships files
    of the ``agentevals`` package."""
    found = []
    try:
        entries = os.listdir(site_dir)
    except OSError:
        return []
    for entry in entries:
        lowered = entry.lower()
        if not lowered.startswith("agentevals") or not lowered.endswith((".dist-info", ".egg-info")):
            continue
        stem = entry[: entry.rindex(".")]  # "agentevals-0.0.9" or "agentevals_cli-1.0" or "agentevals"
        raw_name, _, version = stem.partition("-")
        name = raw_name.lower().replace("_", "-").replace(".", "-")
        if name in CONFLICTING and _ships_package(os.path.join(site_dir, entry)):
            found.append(f"{name} {version.split('-')[0]}".strip())
    return sorted(found)


def _ships_package(meta_dir: str) -> bool:
    """Whether a ``.dist-info`` (its RECORD) or ``.egg-info`` (its top_level.txt) lists the
    ``agentevals`` package; without either file, assume it does."""
    try:
        with open(os.path.join(meta_dir, "RECORD"), encoding="utf-8") as f:
            return any(line.startswith("agentevals/") for line in f)
    except OSError:
        pass
    try:
        with open(os.path.join(meta_dir, "top_level.txt"), encoding="utf-8") as f:
            return any(line.strip() == "agentevals" for line in f)
    except OSError:
        return True


def conflict_message(distributions: list[str], site_dir: str) -> str:
    names = ", ".join(distributions)
    return (
        f"The 'agentevals' package in {site_dir} belongs to agentevals-core (this library) but is also "
        f"installed by {names}, another project: one overwrites the other's files. Fix: {FIX}"
    )


def check() -> None:
    """Raise :class:`ImportError` if another distribution shares our package directory or our
    ``__init__.py`` is gone (uninstalling that distribution removes it)."""
    site_dir = os.path.dirname(_PACKAGE_DIR)
    if found := conflicting_distributions(site_dir):
        raise ImportError(conflict_message(found, site_dir))
    if not os.path.exists(os.path.join(_PACKAGE_DIR, "__init__.py")):
        raise ImportError(
            f"The 'agentevals' package in {site_dir} has no __init__.py: another distribution that "
            f"shared it was uninstalled and removed this library's files. Fix: {FIX}"
        )


check()
