"""`kernlint check --show-files` and `--show-settings`: what a run would check, and with what."""

from __future__ import annotations

import json
import os

from . import config as cfg

# key -> its value when no config file sets it
DEFAULTS: dict = {
    "select": ["ALL"],
    "extend-select": [],
    "ignore": [],
    "per-file-ignores": {},
    "exclude": cfg.DEFAULT_EXCLUDE,
    "extend-exclude": [],
    "jit-roots": cfg.DEFAULT_JIT_ROOTS,
    "extend-jit-roots": [],
    "jit-benchmark-roots": cfg.DEFAULT_JIT_BENCHMARK_ROOTS,
    "extend-jit-benchmark-roots": [],
    "registered-tests-roots": cfg.DEFAULT_REGISTERED_TESTS_ROOTS,
    "extend-registered-tests-roots": [],
    "sglang-package-roots": cfg.DEFAULT_SGLANG_PACKAGE_ROOTS,
    "extend-sglang-package-roots": [],
    "preview": False,
    "respect-gitignore": True,
    "aiter-import-policy": "reachable",
    "semantic": False,
    "include-paths": [],
    "jit-source-root": None,
    "defines": [],
    "max-file-size": cfg.DEFAULT_MAX_FILE_SIZE,
    "jit-exempt-markers": True,
    "generated-markers": True,
}

# key -> (Overrides attribute, option, whether the option replaces the value or adds to it)
COMMAND_LINE = {
    "select": ("select", "--select", "replace"),
    "extend-select": ("extend_select", "--extend-select", "add"),
    "ignore": ("ignore", "--ignore", "add"),
    "preview": ("preview", "--preview", "replace"),
    "semantic": ("semantic", "--semantic", "replace"),
    "exclude": ("exclude", "--exclude", "replace"),
    "extend-exclude": ("extend_exclude", "--extend-exclude", "add"),
    "defines": ("defines", "--define", "add"),
}


def _display(path: str) -> str:
    from .config import PRESET_DIR
    from .engine import relpath_for_display

    if os.path.dirname(path) == PRESET_DIR and path.endswith(".toml"):
        return f"preset {os.path.basename(path)[:-5]}"  # (a shipped preset)
    return relpath_for_display(path)


def _value(value) -> str:
    """A value as TOML writes it (one line)."""
    if value is None:
        return "(not set)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        inner = ", ".join(f"{json.dumps(k)} = {_value(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    return json.dumps(value, ensure_ascii=False)


def provenance(settings, overrides) -> list[tuple[str, object, str]]:
    """(key, value, where it came from) for every config key: `default`, the config file that
    set it, `command line (--option)`, or a config file and the command line together."""
    raw = settings.raw
    rows = []
    for key in cfg.KNOWN_KEYS:
        if key == "extend":
            continue
        if key in raw.values:
            value, where = raw.values[key], _display(raw.key_files.get(key) or raw.path)
        else:
            value, where = DEFAULTS.get(key), "default"
        if key in COMMAND_LINE:
            attr, option, mode = COMMAND_LINE[key]
            given = getattr(overrides, attr)
            if mode == "replace" and given is not None:
                value, where = given, f"command line ({option})"
            elif mode == "add" and given:
                value = list(value) + list(given)
                shown = f"command line ({option})"
                where = shown if where == "default" else f"{where} + {shown}"
        rows.append((key, value, where))
    return rows


def jit_reason(settings, abspath: str) -> str | None:
    """The `jit-roots` pattern that decides whether `abspath` is a JIT source (the last one
    matching it, as in a .gitignore): a positive pattern when it is one, a `!` pattern that
    takes it out, or None when no pattern matches it."""
    jit = settings.is_jit(abspath)
    forms = [abspath.replace(os.sep, "/").lstrip("/")]
    rel = cfg._relative(abspath, settings.jit_root_base)
    if rel is not None:
        forms.insert(0, rel)
    negated = None
    for path in forms:
        deciding = None
        for pattern in settings.jit_roots:
            bare = pattern[1:] if pattern.startswith("!") else pattern
            if cfg._spec([bare]).match_file(path):
                deciding = pattern
        if deciding is None:
            continue
        if jit and not deciding.startswith("!"):
            return deciding
        if not jit and deciding.startswith("!") and negated is None:
            negated = deciding
    return "jit-roots" if jit else negated  # (a JIT path no single pattern decides: the key)


def jit_status(settings, cand) -> str | None:
    """Why `cand` is a JIT source (`JIT: jit-roots `PATTERN` (where set)`), or is not one although
    a pattern matches it (`not JIT: REASON ...`); None when no `jit-roots` pattern matches."""
    pattern = jit_reason(settings, cand.abspath)
    if pattern is None:
        return None
    raw = settings.raw
    key = "extend-jit-roots" if pattern in raw.values.get("extend-jit-roots", ()) else "jit-roots"
    where = _display(raw.key_files[key]) if key in raw.key_files else "default"
    why = f"{key} `{pattern}` ({where})"
    if pattern.startswith("!"):
        return f"not JIT: taken out by {why}"
    exempt = _exemption(settings, cand)
    return f"not JIT: {exempt}; under {why}" if exempt else f"JIT: {why}"


def _exemption(settings, cand) -> str | None:
    """Why a C++/CUDA file under the JIT roots is no JIT source after all (its bytes), or None."""
    if cand.language != "cpp":
        return None
    from .engine import read_source
    from .jitscope import jit_exemption

    source, _ = read_source(cand.abspath, cand.display, cand.language, settings.max_file_size)
    return None if source is None else jit_exemption(settings, source.data)


def show_files(args, resolver) -> int:
    """One line per file that `kernlint check` would check; a JIT source is marked with the
    `jit-roots` pattern that makes it one."""
    from .discovery import discover
    from .output import write_report
    from .runner import _warn

    paths = args.paths or ["."]
    lines = []
    for cand in discover(paths, resolver, force_exclude=args.force_exclude, warn=_warn):
        settings = resolver.for_file(cand.abspath)
        status = jit_status(settings, cand)
        lines.append(cand.display + (f"  [{status}]" if status else "") + "\n")
    write_report(lines)
    return 0


def show_settings(args, registry, resolver, overrides) -> int:
    """The resolved settings of one file, each with where it came from."""
    from .discovery import PathError
    from .output import write_report
    from .source import language_of

    if len(args.paths) != 1:
        raise PathError("--show-settings takes exactly one PATH (the file whose settings to show)")
    path = args.paths[0]
    if os.path.isdir(path):
        raise PathError(f"{path}: --show-settings takes a file, not a directory")
    abspath = os.path.abspath(path)
    settings = resolver.for_file(abspath)
    language = language_of(path)
    from .discovery import Candidate

    cand = Candidate(path, abspath, language or "", True)
    raw = settings.raw
    lines = [f"Settings for: {path}\n"]
    if raw.path is None:
        lines.append("config file: none (defaults)\n")
    else:
        fixed = " (--config)" if resolver.fixed is not None else ""
        lines.append(f"config file: {_display(raw.path)}{fixed}\n")
    lines.append(f"language: {({'cpp': 'c/c++/cuda'}).get(language, language) or 'none'}\n")
    status = jit_status(settings, cand)
    if status is None:
        status = "no (under no jit-roots pattern)"
    elif status.startswith("JIT: "):
        status = "yes: " + status[len("JIT: ") :]
    else:
        status = "no: " + status[len("not JIT: ") :]
    lines.append(f"JIT source: {status}\n")
    from .discovery import _excluded_parents

    excluded = settings.is_excluded(abspath) or _excluded_parents(abspath, settings)
    lines.append(f"excluded: {'yes' if excluded else 'no'}\n")
    if os.path.isfile(abspath) and language is not None:
        from .engine import generated_of, read_source

        source, _ = read_source(abspath, path, language, settings.max_file_size)
        reason = generated_of(source, settings) if source is not None else None
        lines.append(f"generated: {'yes: ' + reason if reason else 'no'}\n")
    rules = settings.rules_for(abspath)
    ignored = [r.code for r in settings.enabled if r not in rules]
    lines.append(f"rules enabled: {len(rules)}: {', '.join(r.code for r in rules) or '(none)'}\n")
    if ignored:
        lines.append(f"ignored here by per-file-ignores: {', '.join(ignored)}\n")
    lines.append("\n")
    rows = provenance(settings, overrides)
    width = max(len(k) for k, _, _ in rows)
    for key, value, where in rows:
        lines.append(f"{key:<{width}} = {_value(value)}  # {where}\n")
    write_report(lines)
    return 0
