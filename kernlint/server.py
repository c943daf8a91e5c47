"""`kernlint server`: a Language Server (LSP over stdio) for editors. Needs `kernlint[server]`.

- Lints the unsaved buffer of every open C/C++/CUDA and Python document: on open, and
  `DEBOUNCE` seconds after the last change. Diagnostics are pushed
  (`textDocument/publishDiagnostics`), or pulled (`textDocument/diagnostic`) when the client
  says it supports pull diagnostics; closing a document clears its diagnostics.
- The buffer is linted as `kernlint check PATH` lints the file at the document's path: the
  same config file (the nearest `kernlint.toml` or `pyproject.toml` with `[tool.kernlint]`),
  `jit-roots`, `per-file-ignores` and generated-file exemptions. Cross-file facts (the FFI
  wrapper targets named by the project's Python files, the aiter import index of its
  packages) come from the last scan of the document's project, as `kernlint check ROOT`
  gathers them from the files on disk: ROOT is the config file's directory, else the
  innermost workspace folder holding the document. The scan runs at the first lint in a
  project and again after a Python file is saved or changes on disk; a document outside
  both gets the facts a check of that one file gathers. Nothing is guessed from the buffer.
- Code actions: each finding's fix (safe fixes as preferred quick fixes, unsafe ones titled
  "(unsafe)"), a suppression comment (`// kernlint: ignore[CODE]`, `#` in Python), and
  "fix all" (`source.fixAll.kernlint`, the safe fixes).
- Settings reload when a `kernlint.toml` or `pyproject.toml` changes: on
  `workspace/didChangeWatchedFiles`, on `workspace/didChangeConfiguration` (kernlint takes no
  editor-side settings: the config files are the one source), and by a check of the config
  files' modification times before each lint.
- Each diagnostic carries the rule's code, its name (`data.name`), the severity, source
  `kernlint`, and `codeDescription.href`: a `file:` URI of the rule's module, whose docstring
  is the documentation `kernlint rule CODE` prints.
"""

from __future__ import annotations

import asyncio
import os
import sys
import traceback

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from . import __version__

DEBOUNCE = 0.2  # seconds after the last change before the buffer is linted
CONFIG_NAMES = ("kernlint.toml", "pyproject.toml")
FIX_ALL = "source.fixAll.kernlint"
_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}
# Meta findings (a suppression's own problems, a file that does not parse): no suppression
# action is offered for them.
_NOT_SUPPRESSIBLE = ("unused-suppression", "invalid-suppression", "syntax-error")


class Linted:
    """One lint of one document version: kernlint's findings and the bytes they refer to."""

    def __init__(self, version, source, findings, diagnostics) -> None:
        self.version = version
        self.source = source  # kernlint.source.SourceFile, or None (nothing linted)
        self.findings = findings  # kernlint.model.Diagnostic, in the order of `diagnostics`
        self.diagnostics = diagnostics  # lsprotocol Diagnostics


class KernlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("kernlint", __version__)
        self._registry = None
        self._resolver = None
        self._stamps: dict[str, tuple] = {}  # directory -> its config files' (mtime, size)
        self.linted: dict[str, Linted] = {}
        self.pending: dict[str, asyncio.Task] = {}
        self._reported_errors: set[str] = set()
        self.scans: dict[str, tuple] = {}  # project root -> its cross-file facts

    # -- settings ---------------------------------------------------------------------------
    @property
    def registry(self):
        if self._registry is None:
            from .registry import load_registry

            self._registry = load_registry()
        return self._registry

    def reload_settings(self) -> None:
        """Forget every resolved setting: the next lint reads the config files again."""
        self._resolver = None
        self._stamps.clear()
        self.scans.clear()

    def project_root(self, path: str, settings) -> str | None:
        """The directory whose scan gives `path` its cross-file facts: that of its config
        file, else the innermost workspace folder holding it (None: outside both)."""
        if getattr(settings.raw, "path", None):
            return settings.root
        best = None
        for folder in self.workspace.folders.values():
            root = to_fs_path(folder.uri)
            if root is None:
                continue
            root = os.path.abspath(root)
            if _inside(path, root) and (best is None or len(root) > len(best)):
                best = root
        if best is None and self.workspace.root_path:
            root = os.path.abspath(self.workspace.root_path)
            if _inside(path, root):
                best = root
        return best

    def facts_for(self, path: str, resolver) -> tuple | None:
        """The cross-file facts of the last scan of `path`'s project (scanned on first use,
        and again after a Python file changed or the settings were reloaded)."""
        settings = resolver.for_file(path)
        root = self.project_root(path, settings)
        if root is None:
            return None
        facts = self.scans.get(root)
        if facts is None:

            def warn(message: str) -> None:
                self.window_log_message(
                    types.LogMessageParams(types.MessageType.Warning, f"kernlint: {message}")
                )

            facts = self.scans[root] = scan_project(root, resolver, warn)
        return facts

    def resolver_for(self, directory: str):
        """The CLI's resolver (no command-line overrides), rebuilt when a config file in
        `directory` or above it changed since the last lint there."""
        stamp = _config_stamp(directory)
        if self._stamps.get(directory) != stamp:
            if directory in self._stamps:
                self._resolver = None
                self._stamps.clear()
            self._stamps[directory] = stamp
        if self._resolver is None:
            from .config import ConfigResolver, Overrides

            self._resolver = ConfigResolver(self.registry, Overrides())
        return self._resolver

    # -- linting ----------------------------------------------------------------------------
    @property
    def pull(self) -> bool:
        """Does the client pull diagnostics (`textDocument/diagnostic`)?"""
        caps = self.client_capabilities.text_document
        return caps is not None and caps.diagnostic is not None

    def lint(self, uri: str) -> Linted:
        doc = self.workspace.get_text_document(uri)
        found = self.linted.get(uri)
        if found is not None and found.version == doc.version and doc.version is not None:
            return found
        try:
            linted = self._lint(doc)
        except Exception:  # a bug must not take the editor's server down
            self.window_log_message(
                types.LogMessageParams(
                    types.MessageType.Error,
                    f"kernlint: linting {doc.uri} failed:\n{traceback.format_exc()}",
                )
            )
            linted = Linted(doc.version, None, [], [])
        self.linted[uri] = linted
        return linted

    def _lint(self, doc) -> Linted:
        from .config import ConfigError
        from .source import language_of

        if not doc.uri.startswith("file:"):
            return Linted(doc.version, None, [], [])
        path = to_fs_path(doc.uri)
        if path is None:
            return Linted(doc.version, None, [], [])
        path = os.path.abspath(path)
        data = doc.source.encode("utf-8", "surrogatepass")
        try:
            resolver = self.resolver_for(os.path.dirname(path))
            facts = self.facts_for(path, resolver) if language_of(path) is not None else None
            result = lint_buffer(path, data, resolver, self.registry, facts)
        except ConfigError as exc:
            message = f"kernlint: {exc}"
            if message not in self._reported_errors:  # (once, not on every keystroke)
                self._reported_errors.add(message)
                self.window_show_message(types.ShowMessageParams(types.MessageType.Error, message))
            origin = types.Position(0, 0)
            diagnostic = types.Diagnostic(
                range=types.Range(origin, origin),
                message=message,
                severity=types.DiagnosticSeverity.Error,
                source="kernlint",
            )
            return Linted(doc.version, None, [], [diagnostic])
        if result is None:
            return Linted(doc.version, None, [], [])
        source, findings = result
        encoding = _encoding(self)
        diagnostics = [self._diagnostic(source, d, encoding) for d in findings]
        return Linted(doc.version, source, findings, diagnostics)

    def _diagnostic(self, source, d, encoding) -> types.Diagnostic:
        href = rule_doc_uri(self.registry, d.code)
        return types.Diagnostic(
            range=_range(source, d.start, d.end, encoding),
            message=d.message,
            severity=_SEVERITY.get(d.severity, types.DiagnosticSeverity.Error),
            code=d.code,
            code_description=types.CodeDescription(href=href) if href else None,
            source="kernlint",
            data={"name": d.name},
        )

    def publish(self, uri: str) -> None:
        if self.pull:
            return
        doc = self.workspace.get_text_document(uri)
        linted = self.lint(uri)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri, diagnostics=linted.diagnostics, version=doc.version
            )
        )

    def relint_all(self, settings: bool = True) -> None:
        """Settings changed (`settings`), or only the files the cross-file facts come from:
        every open document is linted again."""
        if settings:
            self.reload_settings()
            self._reported_errors.clear()
        else:
            self.scans.clear()
        self.linted.clear()
        if self.pull:
            workspace = self.client_capabilities.workspace
            diagnostics = workspace.diagnostics if workspace is not None else None
            if diagnostics is not None and diagnostics.refresh_support:
                self.workspace_diagnostic_refresh(None)
            return
        for uri in list(self.workspace.text_documents):
            self.publish(uri)

    def schedule(self, uri: str) -> None:
        """Lint `uri` once no change has come for `DEBOUNCE` seconds."""
        task = self.pending.pop(uri, None)
        if task is not None:
            task.cancel()
        self.pending[uri] = asyncio.get_running_loop().create_task(self._later(uri))

    async def _later(self, uri: str) -> None:
        await asyncio.sleep(DEBOUNCE)
        self.pending.pop(uri, None)
        if uri in self.workspace.text_documents:
            self.publish(uri)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _config_stamp(directory: str) -> tuple:
    """(path, mtime, size) of every config file name in `directory` and above it."""
    out = []
    d = directory
    while True:
        for name in CONFIG_NAMES:
            path = os.path.join(d, name)
            try:
                st = os.stat(path)
            except OSError:
                continue
            out.append((path, st.st_mtime_ns, st.st_size))
        parent = os.path.dirname(d)
        if parent == d:
            return tuple(out)
        d = parent


def lint_buffer(path: str, data: bytes, resolver, registry, facts=None):
    """Lint `data` as the file at `path` (absolute), as `kernlint check PATH` would lint that
    file. Returns (SourceFile, findings), or None when kernlint does not lint such a file
    (not C/C++/CUDA or Python, binary, larger than `max-file-size`). `facts`: the cross-file
    facts of a scan of the file's project (`scan_project`); without them, those a check of
    the one file gathers."""
    from .discovery import Candidate
    from .engine import lint_source
    from .runner import _collect_project_facts, _jit_matters, restore_project_facts
    from .source import SourceFile, language_of

    language = language_of(path)
    if language is None or b"\0" in data:
        return None
    settings = resolver.for_file(path)  # (a ConfigError propagates)
    if len(data) > getattr(settings, "max_file_size", len(data)):
        return None
    for name in ("kernlint.jitscope", "kernlint.sgl_headers", "kernlint.jit_wiring"):
        if name in sys.modules:  # (headers on disk may have changed since the last lint)
            sys.modules[name].reset()
    if facts is not None:
        restore_project_facts(facts)
    else:
        candidate = Candidate(path, path, language, True)
        _collect_project_facts([candidate], resolver, None, wrappers=True, stats=[None])
    rules = settings.rules_for(path)
    is_jit = _jit_matters(rules, language) and settings.is_jit(path)
    source = SourceFile(path, data, language, abspath=path)
    try:
        result = lint_source(source, settings, is_jit, registry, rules)
    except (RecursionError, MemoryError):  # (too deeply nested: the CLI skips it too)
        return None
    return result.source or source, result.diagnostics


def scan_project(root: str, resolver, warn) -> tuple:
    """The cross-file facts `kernlint check ROOT` gathers (the FFI wrapper targets its Python
    files name, the aiter import index of its packages), read from the files on disk."""
    from .discovery import discover
    from .runner import _collect_project_facts, project_facts_state

    candidates = list(discover([root], resolver, warn=warn))
    for name in ("kernlint.jitscope", "kernlint.sgl_headers", "kernlint.jit_wiring"):
        if name in sys.modules:
            sys.modules[name].reset()
    _collect_project_facts(
        candidates, resolver, None, wrappers=True, stats=[None] * len(candidates)
    )
    return project_facts_state()


_DOC_URIS: dict[str, str | None] = {}


def rule_doc_uri(registry, code: str) -> str | None:
    """A `file:` URI of the module defining rule `code` (its docstring is the rule's docs)."""
    if code not in _DOC_URIS:
        uri = None
        rule = registry.get(code)
        module = sys.modules.get(rule.module) if rule is not None else None
        path = getattr(module, "__file__", None)
        if path:
            from pathlib import Path

            uri = Path(path).resolve().as_uri()
        _DOC_URIS[code] = uri
    return _DOC_URIS[code]


# -- positions ------------------------------------------------------------------------------
def _encoding(server) -> str:
    encoding = server.workspace.position_encoding
    return str(getattr(encoding, "value", encoding) or "utf-16")


def _position(source, offset: int, encoding: str) -> types.Position:
    """The LSP position of a byte offset (columns in the negotiated encoding's units)."""
    data = source.data
    offset = max(0, min(offset, len(data)))
    row = source.line_index(offset)
    prefix = data[source.line_starts[row] : offset]
    if encoding == "utf-8" or prefix.isascii():
        return types.Position(row, len(prefix))
    text = prefix.decode("utf-8", "surrogateescape")
    if encoding == "utf-32":
        return types.Position(row, len(text))
    return types.Position(row, len(text.encode("utf-16-le", "surrogatepass")) // 2)


def _range(source, start: int, end: int, encoding: str) -> types.Range:
    return types.Range(
        _position(source, start, encoding), _position(source, max(start, end), encoding)
    )


def _overlaps(a: types.Range, b: types.Range) -> bool:
    def key(p):
        return (p.line, p.character)

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


# -- code actions ---------------------------------------------------------------------------
def _edits(source, edits, encoding) -> list[types.TextEdit]:
    return [
        types.TextEdit(range=_range(source, e.start, e.end, encoding), new_text=e.content)
        for e in edits
    ]


def _workspace_edit(server, uri: str, version, text_edits) -> types.WorkspaceEdit:
    caps = server.client_capabilities.workspace
    edit_caps = caps.workspace_edit if caps is not None else None
    if edit_caps is not None and edit_caps.document_changes:
        return types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(uri, version),
                    edits=text_edits,
                )
            ]
        )
    return types.WorkspaceEdit(changes={uri: text_edits})


def suppression_edit(source, finding, registry, encoding) -> types.TextEdit | None:
    """The edit that suppresses `finding` on its line: its code added to a `kernlint:
    ignore[...]` already on the line, else a `kernlint: ignore[CODE]` comment at the end of the
    line (before a C/C++ line continuation, as a `/* */` comment). None when no such comment
    would be read as a suppression there (the line ends inside a string, or with a Python line
    continuation)."""
    from .suppressions import find_suppressions

    for s in find_suppressions(source, registry):
        if s.kind == "ignore" and s.target_line == finding.line and s.names:
            close = source.data.rfind(b"]", s.start, s.end)
            if close > 0:
                return _checked(
                    source, close, close, f", {finding.code}", finding, registry, encoding
                )
    row = finding.line - 1
    start, end = source.line_starts[row], source.line_end(row)
    line = source.data[start:end]
    body = line.rstrip(b" \t")
    directive = f"kernlint: ignore[{finding.code}]"
    if body.endswith(b"\\"):  # a line continuation: a `//` or `#` comment would end it
        if source.language != "cpp":
            return None  # (Python has no comment that can stand before it)
        at = start + len(body) - 1
        text = f"/* {directive} */ "
        if at > start and source.data[at - 1 : at] not in (b" ", b"\t"):
            text = " " + text
        return _checked(source, at, at, text, finding, registry, encoding)
    marker = "//" if source.language == "cpp" else "#"
    at = start + len(body)
    text = f"  {marker} {directive}" if body.strip() else f"{marker} {directive}"
    return _checked(source, at, end, text, finding, registry, encoding)


def _checked(source, start, end, text, finding, registry, encoding):
    """The edit replacing bytes [start, end) by `text`, if the edited file then holds a
    suppression of `finding`'s code on its line (else None)."""
    from .source import SourceFile
    from .suppressions import find_suppressions

    data = source.data[:start] + text.encode("utf-8") + source.data[end:]
    edited = SourceFile(source.path, data, source.language, abspath=source.abspath)
    for s in find_suppressions(edited, registry):
        if s.target_line == finding.line and finding.code in s.codes:
            return types.TextEdit(range=_range(source, start, end, encoding), new_text=text)
    return None


def code_actions(server, params: types.CodeActionParams) -> list[types.CodeAction]:
    from .fixes import apply_fixes

    uri = params.text_document.uri
    caps = server.client_capabilities.text_document
    code_action = caps.code_action if caps is not None else None
    if code_action is None or code_action.code_action_literal_support is None:
        return []  # (a client that takes only commands: the actions are edits)
    if uri not in server.workspace.text_documents:
        return []
    doc = server.workspace.get_text_document(uri)
    linted = server.lint(uri)
    source = linted.source
    if source is None:
        return []
    only = params.context.only
    wanted_quickfix = not only or any(
        types.CodeActionKind.QuickFix.value.startswith(str(getattr(k, "value", k))) for k in only
    )
    wanted_fix_all = not only or any(FIX_ALL.startswith(str(getattr(k, "value", k))) for k in only)
    encoding = _encoding(server)
    actions: list[types.CodeAction] = []
    suppressed: set[tuple[int, str]] = set()
    for finding, diagnostic in zip(linted.findings, linted.diagnostics, strict=True):
        if not wanted_quickfix or not _overlaps(diagnostic.range, params.range):
            continue
        fix = finding.fix
        if fix is not None:
            safe = fix.applicability == "safe"
            title = fix.title or f"Fix {finding.code} ({finding.name})"
            actions.append(
                types.CodeAction(
                    title=f"kernlint: {title}" + ("" if safe else " (unsafe)"),
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic],
                    is_preferred=safe,
                    edit=_workspace_edit(
                        server, uri, doc.version, _edits(source, fix.edits, encoding)
                    ),
                )
            )
        key = (finding.line, finding.code)
        if finding.name in _NOT_SUPPRESSIBLE or key in suppressed:
            continue
        suppressed.add(key)
        edit = suppression_edit(source, finding, server.registry, encoding)
        if edit is not None:
            actions.append(
                types.CodeAction(
                    title=f"kernlint: Suppress {finding.code} ({finding.name}) on this line",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic],
                    edit=_workspace_edit(server, uri, doc.version, [edit]),
                )
            )
    if wanted_fix_all and any(
        f.fix is not None and f.fix.applicability == "safe" for f in linted.findings
    ):
        new, fixed, _ = apply_fixes(source.data, linted.findings, unsafe=False)
        if fixed:
            edits = [e for f in fixed for e in f.fix.edits]
            actions.append(
                types.CodeAction(
                    title="kernlint: Fix all safely fixable findings",
                    kind=FIX_ALL,
                    edit=_workspace_edit(server, uri, doc.version, _edits(source, edits, encoding)),
                )
            )
    return actions


def _is_config(uri: str) -> bool:
    return uri.rsplit("/", 1)[-1] in CONFIG_NAMES


def _is_python(uri: str) -> bool:
    return uri.endswith((".py", ".pyi"))


# -- the server -----------------------------------------------------------------------------
def build_server() -> KernlintServer:
    server = KernlintServer()

    @server.feature(types.INITIALIZED)
    def initialized(ls: KernlintServer, params: types.InitializedParams) -> None:
        caps = ls.client_capabilities.workspace
        watched = caps.did_change_watched_files if caps is not None else None
        if watched is not None and watched.dynamic_registration:
            options = types.DidChangeWatchedFilesRegistrationOptions(
                watchers=[
                    types.FileSystemWatcher(glob_pattern=f"**/{n}") for n in (*CONFIG_NAMES, "*.py")
                ]
            )
            ls.client_register_capability(
                types.RegistrationParams(
                    registrations=[
                        types.Registration(
                            id="kernlint-config-files",
                            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                            register_options=options,
                        )
                    ]
                )
            )

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: KernlintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: KernlintServer, params: types.DidChangeTextDocumentParams) -> None:
        if not ls.pull:
            ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: KernlintServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if _is_config(uri):  # (a config file edited in the editor)
            ls.relint_all()
        elif _is_python(uri):  # (the cross-file facts come from the Python files)
            ls.relint_all(settings=False)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: KernlintServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        task = ls.pending.pop(uri, None)
        if task is not None:
            task.cancel()
        ls.linted.pop(uri, None)
        if not ls.pull:
            ls.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
            )

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(
            identifier="kernlint", inter_file_dependencies=False, workspace_diagnostics=False
        ),
    )
    def diagnostic(ls: KernlintServer, params: types.DocumentDiagnosticParams):
        uri = params.text_document.uri
        if uri not in ls.workspace.text_documents:
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        return types.RelatedFullDocumentDiagnosticReport(items=ls.lint(uri).diagnostics)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched_files(ls: KernlintServer, params: types.DidChangeWatchedFilesParams) -> None:
        if any(_is_config(change.uri) for change in params.changes):
            ls.relint_all()
        elif any(_is_python(change.uri) for change in params.changes):
            ls.relint_all(settings=False)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def configuration(ls: KernlintServer, params: types.DidChangeConfigurationParams) -> None:
        # kernlint takes no editor-side settings (the config files are the one source, as for
        # the CLI); an editor that reports a change gets the config files read again.
        ls.relint_all()

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL], resolve_provider=False
        ),
    )
    def code_action(ls: KernlintServer, params: types.CodeActionParams):
        return code_actions(ls, params)

    return server


def serve() -> int:
    """`kernlint server`: serve LSP over stdin/stdout until the client exits."""
    build_server().start_io()
    return 0
