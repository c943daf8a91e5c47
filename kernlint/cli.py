"""The `kernlint` command line.

Exit status: 0 no findings remain, 1 findings remain, 2 usage or configuration error.
"""

from __future__ import annotations

import argparse
import os
import sys

from . import __version__

# `text` is the old name of `full` (kept: scripts use it).
OUTPUT_FORMATS = ("full", "concise", "grouped", "json", "github", "sarif", "junit", "text")


def _terminal_columns() -> int:
    """`shutil.get_terminal_size().columns` without importing shutil (about 3 ms, which every
    `argparse` formatter would pay: `add_argument` builds one to check each argument)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class _Formatter(argparse.HelpFormatter):
    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        if width is None:
            width = _terminal_columns() - 2  # (what HelpFormatter does with shutil's width)
        super().__init__(prog, indent_increment, max_help_position, width)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message):  # usage errors exit 2 with a one-line message
        self.print_usage(sys.stderr)
        self.exit(2, f"kernlint: error: {message}\n")


def _split(values):
    out = []
    for v in values or []:
        out += [p.strip() for p in v.split(",") if p.strip()]
    return out


def _empty_selector(args) -> str | None:
    """The first rule-selector option whose value names no rule at all (`--select ""`,
    `--ignore ","`), which would silently select or ignore nothing; None when there is none."""
    for option, values in (
        ("--select", args.select),
        ("--extend-select", args.extend_select),
        ("--ignore", args.ignore),
    ):
        if any(not _split([v]) for v in values or ()):
            return option
    return None


def _unknown_selector(args, registry) -> str | None:
    """The error for the first command-line rule selector that names no rule or prefix: blamed
    on the option, not on a config file it happens to be combined with. None when all do."""
    for option, values in (
        ("--select", args.select),
        ("--extend-select", args.extend_select),
        ("--ignore", args.ignore),
    ):
        for selector in _split(values):
            if registry.select(selector) is None:
                return f"{option}: unknown rule or prefix `{selector}` (see `kernlint rules`)"
    return None


def _bad_glob(args) -> str | None:
    """The error for the first `--exclude`/`--extend-exclude` glob that no pattern expresses
    (`[z-a]`), blamed on the option; None when all compile."""
    if not (args.exclude or args.extend_exclude):
        return None  # (globmatch is not imported by most runs)
    import re

    from .config import _show
    from .globmatch import compile_pattern

    for option, values in (("--exclude", args.exclude), ("--extend-exclude", args.extend_exclude)):
        for pattern in _split(values):
            try:
                compile_pattern(pattern)
            except re.error as exc:
                return f"{option}: invalid glob {_show(pattern)}: {exc}"
    return None


def _stdin_usage(args) -> str | None:
    """None when the files are read from disk; "" (or a warning) when the buffer comes from
    stdin; "error: ..." for an unusable combination."""
    dash = "-" in args.paths
    if args.stdin_filename is None:
        if dash:
            return (
                "error: `-` reads the file from stdin: name it with --stdin-filename PATH "
                "(its language, config and rules come from PATH)"
            )
        return None
    if not args.stdin_filename.strip():
        return "error: --stdin-filename: an empty file name"
    for option in ("write_baseline", "baseline", "show_files", "show_settings"):
        if getattr(args, option):
            flag = "--" + option.replace("_", "-")
            return f"error: --stdin-filename cannot be combined with {flag}"
    others = [p for p in args.paths if p != "-"]
    if others:  # (as ruff: the buffer wins)
        return f"ignoring {', '.join(others)} in favour of standard input (--stdin-filename)"
    return ""


def _read_stdin() -> bytes | None:
    stream = sys.stdin
    if stream is None:
        return None
    try:
        raw = getattr(stream, "buffer", None)
        if raw is not None:
            return raw.read()
        return stream.read().encode("utf-8", "surrogateescape")
    except (OSError, ValueError):  # (closed, or not readable)
        return None


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="kernlint", description="Lint CUDA/C++ and Python GPU kernel sources.")
    p.add_argument("--version", action="version", version=f"kernlint {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    c = sub.add_parser("check", help="lint files and directories")
    c.add_argument("paths", nargs="*", metavar="PATH", help="files or directories (default: .)")
    c.add_argument(
        "--select", action="append", help="rules to enable (codes, names, prefixes, ALL)"
    )
    c.add_argument("--extend-select", action="append", help="rules to enable on top of select")
    c.add_argument("--ignore", action="append", help="rules to disable")
    c.add_argument("--preview", action="store_true", default=None, help="enable preview rules")
    c.add_argument(
        "--semantic",
        action="store_true",
        default=None,
        help="also parse C++/CUDA with libclang (types through headers; needs kernlint[semantic])",
    )
    c.add_argument(
        "--compile",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="also build the kernels with nvcc (and Triton) and report registers and spills "
        "(register-budget-exceeded, register-spill); slow, needs a CUDA toolchain "
        "(kernlint[compile])",
    )
    c.add_argument(
        "--compile-from",
        metavar="BUILD_DIR",
        help="with --compile: also read the registers of the kernels in the binaries a build "
        "left in BUILD_DIR (cubin, fatbin, .so, .o; needs cuobjdump)",
    )
    c.add_argument(
        "-D",
        "--define",
        action="append",
        metavar="NAME[=VALUE]",
        help="a macro for the semantic pass, as the kernel's build defines it (repeatable)",
    )
    c.add_argument(
        "--output-format",
        choices=OUTPUT_FORMATS,
        default="full",
        help="full (default: the source line and the fix), concise (one line a finding), "
        "grouped (by file), json, github, sarif, junit",
    )
    c.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the text report: auto (in a terminal, unless NO_COLOR is set; "
        "FORCE_COLOR forces it), always, never",
    )
    c.add_argument("-o", "--output-file", metavar="FILE", help="write the report to FILE")
    c.add_argument("--fix", action="store_true", help="apply safe fixes")
    c.add_argument("--unsafe-fixes", action="store_true", help="also apply unsafe fixes")
    c.add_argument("--diff", action="store_true", help="show fixes as a diff, change nothing")
    c.add_argument(
        "--fix-only",
        action="store_true",
        help="apply fixes and report nothing else (exit 0 unless --exit-non-zero-on-fix)",
    )
    c.add_argument(
        "--exit-non-zero-on-fix",
        action="store_true",
        help="exit 1 when any file was fixed, even if no findings remain",
    )
    c.add_argument(
        "--stdin-filename",
        metavar="PATH",
        help="read the file from stdin (PATH `-`) and report it as PATH (which need not exist)",
    )
    c.add_argument(
        "--show-files",
        action="store_true",
        help="list the files that would be checked, and why each JIT source is one",
    )
    c.add_argument(
        "--show-settings",
        action="store_true",
        help="print the settings of the one file named as PATH, and where each comes from",
    )
    c.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    c.add_argument(
        "--statistics",
        action="store_true",
        help="print counts per rule, and of the files with unparsed regions",
    )
    c.add_argument(
        "--show-skipped",
        action="store_true",
        help="list the regions no rule could judge (unparsed), on stderr",
    )
    c.add_argument("--config", metavar="FILE", help="use this config file for every file")
    c.add_argument("--exclude", action="append", help="replace the exclude list (globs)")
    c.add_argument("--extend-exclude", action="append", help="more globs to exclude")
    c.add_argument(
        "--force-exclude",
        action="store_true",
        help="apply excludes to files named on the command line too (pre-commit)",
    )
    c.add_argument(
        "--baseline", metavar="FILE", help="report only findings not recorded in this baseline"
    )
    c.add_argument(
        "--write-baseline", metavar="FILE", help="record today's findings in FILE and exit 0"
    )
    c.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    c.add_argument("--cache-dir", metavar="DIR", help="cache directory (default: .kernlint_cache)")
    c.add_argument("--no-show-source", action="store_true", help="no source line and caret")
    c.add_argument("-q", "--quiet", action="store_true", help="print findings only")

    r = sub.add_parser("rules", help="list every rule")
    r.add_argument("--format", choices=("text", "json"), default="text")
    d = sub.add_parser("rule", help="print a rule's documentation")
    d.add_argument("rule", metavar="NAME|CODE")
    i = sub.add_parser("inspect", help="print what kernlint understood of one file")
    i.add_argument("file", metavar="FILE")
    i.add_argument("--format", choices=("text", "json"), default="text")
    i.add_argument("--config", metavar="FILE", help="use this config file")
    i.add_argument(
        "--wrappers-from",
        action="append",
        metavar="PATH",
        help="Python files or directories whose `cuda_wrappers` targets count (repeatable)",
    )
    sub.add_parser(
        "server", help="run the language server (LSP on stdin/stdout; needs kernlint[server])"
    )
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "server":
        return cmd_server()
    from .output import ReportWriteError, flush_stdout, report_error, silence_stdout
    from .registry import RuleLoadError

    try:
        if args.command in ("rules", "rule", "inspect"):
            try:
                if args.command == "inspect":
                    from .inspect import cmd_inspect

                    status = cmd_inspect(args)
                else:
                    status = cmd_rules(args) if args.command == "rules" else cmd_rule(args)
            except BrokenPipeError:
                raise
            except OSError as exc:  # (these commands only print)
                raise report_error(exc) from None
        else:
            status = cmd_check(args)  # (its report's write failures raise as these do)
        flush_stdout()  # here, not at exit: a failed last flush is reported too
        return status
    except BrokenPipeError:  # the reader went away (`| head -1`): a quiet exit, 128 + SIGPIPE
        silence_stdout()
        return 141
    except RuleLoadError as exc:  # (an installed `kernlint.rules` entry point's module)
        print(f"kernlint: error: {exc}", file=sys.stderr)
        return 2
    except ReportWriteError as exc:  # (a full disk: /dev/full)
        silence_stdout()
        print(f"kernlint: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def run() -> None:
    """The `kernlint` command (and `python -m kernlint`): `main`, then an exit that skips
    the interpreter's freeing of every object the run built (after a large run that takes
    longer than the report: 0.3 s of the SGLang wheel's 2.5). The exit handlers still run and
    the output is flushed first; with other threads alive (the server), a normal exit."""
    from .runner import record_runs

    record_runs()  # (a fresh process: its first run may keep a run record)
    status = main()
    code = status if isinstance(status, int) else (0 if status is None else 1)
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        sys.exit(code)
    import atexit

    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # (a closed or broken stream: nothing left to say)
                pass
        os._exit(code)


def cmd_server() -> int:
    try:  # (pygls is imported only here: no other command pays for it)
        from .server import serve
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in ("pygls", "lsprotocol", "cattrs", "attrs"):
            raise
        print(
            "kernlint: error: `kernlint server` needs pygls: install kernlint[server]",
            file=sys.stderr,
        )
        return 2
    return serve()


def _registry():
    from .registry import load_registry

    return load_registry()


def _with_local_rules(reg, config=None, paths=(".",)) -> str | None:
    """Load the local rules (`rules-path`) of the configs that govern `paths` (or of
    `config`) into `reg`; the error line when one cannot be loaded, else None."""
    from .config import ConfigError
    from .registry import load_local_rules_for

    try:
        load_local_rules_for(reg, config, paths)
    except ConfigError as exc:
        return str(exc)
    return None


def cmd_rules(args) -> int:
    reg = _registry()
    error = _with_local_rules(reg)
    if error is not None:
        print(f"kernlint: error: {error}", file=sys.stderr)
        return 2
    if args.format == "json":
        import json

        rows = [
            {
                "code": r.code,
                "name": r.name,
                "summary": r.summary,
                "languages": ["c", "c++", "cuda"]
                if r.language == "cpp"
                else (["python"] if r.language == "python" else ["any"]),
                "scope": r.scope,
                "fixable": r.fixable,
                "fix": r.fix,
                "severity": r.severity,
                "status": r.status,
            }
            for r in reg.rules
        ]
        print(json.dumps(rows, indent=2))
        return 0
    for r in reg.rules:
        lang = {"cpp": "c++/cuda", "python": "python", "any": "any"}[r.language]
        fix = {"safe": "fix", "unsafe": "unsafe-fix", "sometimes": "fix"}.get(r.fix or "", "-")
        print(f"{r.code:<7}{r.name:<34}{lang:<10}{fix:<11}{r.status:<8}{r.summary}")
    return 0


def cmd_rule(args) -> int:
    reg = _registry()
    rule = reg.get(args.rule)
    if rule is None:
        error = _with_local_rules(reg)
        if error is not None:
            print(f"kernlint: error: {error}", file=sys.stderr)
            return 2
        rule = reg.get(args.rule)
    if rule is None:
        print(
            f"kernlint: error: unknown rule `{args.rule}` (see `kernlint rules`)", file=sys.stderr
        )
        return 2
    print(f"# {rule.name} ({rule.code})\n")
    print(
        f"Language: {rule.language}. Scope: {rule.scope}. Status: {rule.status}. "
        f"Severity: {rule.severity}. Fix: {rule.fix or 'none'}.\n"
    )
    print(rule.doc)
    return 0


def cmd_check(args) -> int:
    import gc

    from .config import ConfigError, ConfigResolver, Overrides, check_define
    from .discovery import PathError
    from .forkpool import GC_THRESHOLDS, WorkerLost
    from .runner import run_check

    gc.set_threshold(*GC_THRESHOLDS)  # (a check run's objects hold no reference cycles)
    reg = _registry()
    for d in args.define or ():
        try:
            check_define(d, "--define")
        except ConfigError as exc:
            print(f"kernlint: error: {exc}", file=sys.stderr)
            return 2
    empty = _empty_selector(args)
    if empty is not None:
        print(f"kernlint: error: {empty}: an empty rule selector is not allowed", file=sys.stderr)
        return 2
    unknown = _unknown_selector(args, reg)
    if unknown is not None:  # (maybe a local rule: those of the configs of the paths count)
        paths = [args.stdin_filename] if args.stdin_filename else (args.paths or ["."])
        unknown = _with_local_rules(reg, args.config, paths) or _unknown_selector(args, reg)
    unknown = unknown or _bad_glob(args)
    if unknown is not None:
        print(f"kernlint: error: {unknown}", file=sys.stderr)
        return 2
    overrides = Overrides(
        select=_split(args.select) if args.select else None,
        extend_select=_split(args.extend_select),
        ignore=_split(args.ignore),
        preview=args.preview,
        semantic=args.semantic,
        compile=True if getattr(args, "compile_from", None) else args.compile,
        exclude=_split(args.exclude) if args.exclude else None,
        extend_exclude=_split(args.extend_exclude),
        defines=list(args.define or ()),
    )
    if args.diff and args.fix:
        print("kernlint: error: --diff and --fix cannot be combined", file=sys.stderr)
        return 2
    stdin = _stdin_usage(args)
    if stdin is not None and stdin.startswith("error: "):
        print(f"kernlint: {stdin}", file=sys.stderr)
        return 2
    try:
        resolver = ConfigResolver(reg, overrides, args.config)
        if args.show_files or args.show_settings:
            from .show import show_files, show_settings

            if args.show_settings:
                return show_settings(args, reg, resolver, overrides)
            return show_files(args, resolver)
        if stdin is not None:
            from .runner import run_stdin

            if stdin:
                print(f"warning: {stdin}", file=sys.stderr)
            data = _read_stdin()
            if data is None:
                print("kernlint: error: cannot read the buffer from stdin", file=sys.stderr)
                return 2
            return run_stdin(args, reg, resolver, data)
        return run_check(args, reg, resolver)
    except ConfigError as exc:
        print(f"kernlint: error: {exc}", file=sys.stderr)
        return 2
    except PathError as exc:
        print(f"kernlint: error: {exc}", file=sys.stderr)
        return 2
    except WorkerLost as exc:  # (e.g. the out-of-memory killer): no partial report
        print(f"kernlint: error: {exc}; nothing was reported", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
