"""`kernlint server`, driven over stdio by a real LSP client (pytest-lsp)."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")

from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

# One server for the module (each test in a project directory of its own): starting one takes
# about a second.
lsp = pytest.mark.asyncio(loop_scope="module")
pytestmark = pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning")

SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "kernlint", "server"])
TIMEOUT = 30  # seconds: only catches a hang

KERNEL = (
    "__global__ void k(float* out, const float* a, const float* b) {\n  out[0] = a[0] + b[0];\n}\n"
)
KERNEL_FIXED = KERNEL.replace("float* a", "float* __restrict__ a").replace(
    "float* b", "float* __restrict__ b"
)
# JIT sources, checked by a few rules (the tests do not depend on the others).
CONFIG = 'jit-roots = ["**"]\nselect = ["CU001", "CU003", "PY005", "KL003"]\n'

PYTHON = (
    "import functools\n\nfrom sglang.jit_kernel.utils import load_jit\n\n\n"
    "@functools.lru_cache(maxsize=None)\ndef a(dtype):\n"
    '    return load_jit("a", dtype, cuda_files=["a.cuh"])\n'
)


def _capabilities(pull: bool) -> types.ClientCapabilities:
    text = types.TextDocumentClientCapabilities(
        synchronization=types.TextDocumentSyncClientCapabilities(did_save=True),
        publish_diagnostics=types.PublishDiagnosticsClientCapabilities(
            version_support=True, code_description_support=True, data_support=True
        ),
        code_action=types.CodeActionClientCapabilities(
            code_action_literal_support=types.ClientCodeActionLiteralOptions(
                code_action_kind=types.ClientCodeActionKindOptions(
                    value_set=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll]
                )
            ),
            is_preferred_support=True,
        ),
        diagnostic=types.DiagnosticClientCapabilities() if pull else None,
    )
    workspace = types.WorkspaceClientCapabilities(
        did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
            dynamic_registration=True
        ),
        workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
        diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
        if pull
        else None,
    )
    return types.ClientCapabilities(text_document=text, workspace=workspace)


async def _start(client: LanguageClient, root, pull: bool) -> None:
    # Every publication is recorded (the client keeps only the last one of each document).
    features = client.protocol.fm.features
    handler = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]
    client.published = []

    def record(params):
        client.published.append(params)
        return handler(params)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record
    client.registrations = []

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)

    await client.initialize_session(
        types.InitializeParams(
            capabilities=_capabilities(pull),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="project")],
        )
    )


@pytest.fixture
def project(tmp_path):
    (tmp_path / "kernlint.toml").write_text(CONFIG)
    return tmp_path


@pytest_lsp.fixture(config=SERVER, scope="module")
async def client(lsp_client: LanguageClient, tmp_path_factory):
    await _start(lsp_client, tmp_path_factory.mktemp("workspace"), pull=False)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER, scope="module")
async def pull_client(lsp_client: LanguageClient, tmp_path_factory):
    await _start(lsp_client, tmp_path_factory.mktemp("workspace"), pull=True)
    yield
    await lsp_client.shutdown_session()


class Doc:
    """An open document: its text and version, kept in step with the server."""

    def __init__(self, client: LanguageClient, path, text: str, language: str) -> None:
        self.client, self.uri, self.text, self.version = client, path.as_uri(), text, 1
        self.seen = len(client.published)  # (the publications read so far)
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(self.uri, language, self.version, text)
            )
        )

    def change(self, text: str) -> None:
        self.version += 1
        self.text = text
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(self.version, self.uri),
                [types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    async def diagnostics(self, version: bool = True) -> list[types.Diagnostic]:
        """The next diagnostics the server publishes for this document (for its current
        version, unless `version=False`)."""

        async def wait():
            published = self.client.published
            while True:
                while self.seen < len(published):
                    params = published[self.seen]
                    self.seen += 1
                    if params.uri == self.uri and (not version or params.version == self.version):
                        return list(params.diagnostics)
                await asyncio.sleep(0.01)

        return await asyncio.wait_for(wait(), TIMEOUT)

    async def actions(self, line: int) -> list[types.CodeAction]:
        whole_line = types.Range(types.Position(line, 0), types.Position(line + 1, 0))
        return await self.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(self.uri),
                range=whole_line,
                context=types.CodeActionContext(diagnostics=[]),
            )
        )

    def apply(self, action: types.CodeAction) -> None:
        """Apply a code action's edit to the text and send it (BMP text: a UTF-16 unit is a `str` index)."""
        (change,) = action.edit.document_changes
        assert change.text_document.uri == self.uri
        assert change.text_document.version == self.version
        starts = [0]
        for line in self.text.splitlines(keepends=True):
            starts.append(starts[-1] + len(line))
        text = self.text
        for e in sorted(change.edits, key=lambda e: (e.range.start.line, e.range.start.character))[
            ::-1
        ]:
            a = starts[e.range.start.line] + e.range.start.character
            b = starts[e.range.end.line] + e.range.end.character
            text = text[:a] + e.new_text + text[b:]
        self.change(text)


def _severity(code: str) -> types.DiagnosticSeverity:
    from kernlint.registry import load_registry

    severity = load_registry().get(code).severity
    return {
        "error": types.DiagnosticSeverity.Error,
        "warning": types.DiagnosticSeverity.Warning,
        "info": types.DiagnosticSeverity.Information,
    }[severity]


def _codes(diagnostics) -> list[str]:
    return sorted(str(d.code) for d in diagnostics)


@lsp
async def test_open_change_close_cuda(client: LanguageClient, project):
    path = project / "kernel.cuh"
    path.write_text(KERNEL_FIXED)  # (the file on disk is clean: the buffer is what is linted)
    doc = Doc(client, path, KERNEL, "cuda-cpp")
    diagnostics = await doc.diagnostics()
    assert _codes(diagnostics) == ["CU003", "CU003"]
    first = min(diagnostics, key=lambda d: d.range.start.character)
    assert first.range == types.Range(types.Position(0, 30), types.Position(0, 44))
    assert first.severity == _severity("CU003")
    assert first.source == "kernlint"
    assert first.data == {"name": "kernel-pointer-not-restrict"}
    assert "`a`" in first.message
    href = first.code_description.href
    assert href.startswith("file://") and href.endswith("kernel_pointer_not_restrict.py")

    doc.change(KERNEL.replace("float* a", "float* __restrict__ a"))
    diagnostics = await doc.diagnostics()
    assert [d.range.start.character for d in diagnostics] == [59]  # (`b` only)

    doc.change(KERNEL_FIXED)
    assert await doc.diagnostics() == []
    doc.change(KERNEL)
    assert len(await doc.diagnostics()) == 2

    client.text_document_did_close(
        types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(doc.uri))
    )
    assert await doc.diagnostics(version=False) == []


@lsp
async def test_code_actions_fix_and_suppress(client: LanguageClient, project):
    text = "// a \u2014 b\n" + KERNEL
    doc = Doc(client, project / "kernel.cuh", text, "cuda-cpp")
    assert _codes(await doc.diagnostics()) == ["CU001", "CU003", "CU003"]
    # A non-ASCII character: columns count UTF-16 units (the client's default encoding).
    (cu001,) = [d for d in client.diagnostics[doc.uri] if d.code == "CU001"]
    assert cu001.range == types.Range(types.Position(0, 5), types.Position(0, 6))

    actions = await doc.actions(0)
    (fix,) = [a for a in actions if a.is_preferred]
    assert fix.kind == types.CodeActionKind.QuickFix
    assert [d.code for d in fix.diagnostics] == ["CU001"]
    assert "(unsafe)" not in fix.title
    assert any(a.kind == "source.fixAll.kernlint" for a in actions)
    doc.apply(fix)
    assert doc.text.startswith("// a -- b\n")
    assert _codes(await doc.diagnostics()) == ["CU003", "CU003"]

    actions = await doc.actions(1)
    unsafe = [a for a in actions if a.title.endswith("(unsafe)")]
    assert len(unsafe) == 2 and not any(a.is_preferred for a in unsafe)
    doc.apply(unsafe[0])
    assert "__restrict__" in doc.text
    assert _codes(await doc.diagnostics()) == ["CU003"]

    (suppress,) = [a for a in await doc.actions(1) if "Suppress" in a.title]
    doc.apply(suppress)
    assert doc.text.splitlines()[1].endswith("{  // kernlint: ignore[CU003]")
    assert await doc.diagnostics() == []


@lsp
async def test_suppression_joins_an_existing_one(client: LanguageClient, project):
    text = KERNEL.replace("{\n", "{  // kernlint: ignore[CU001]\n", 1).replace("k(", "k\u00e9(")
    doc = Doc(client, project / "k.cu", text, "cuda-cpp")
    assert _codes(await doc.diagnostics()) == ["CU003", "CU003"]
    (suppress,) = [a for a in await doc.actions(0) if "Suppress" in a.title]
    doc.apply(suppress)
    assert doc.text.splitlines()[0].endswith("// kernlint: ignore[CU001, CU003]")
    assert await doc.diagnostics() == []


@lsp
async def test_python_buffer_and_syntax_error_mid_edit(client: LanguageClient, project):
    (project / "kernlint.toml").write_text(CONFIG + "preview = true\n")
    doc = Doc(client, project / "factory.py", PYTHON, "python")
    (d,) = await doc.diagnostics()
    assert d.code == "PY005" and d.range.start == types.Position(5, 1)
    assert d.code_description.href.endswith("lru_cache_on_jit_module.py")

    doc.change(PYTHON.replace("def a(dtype):", "def a(dtype:"))  # typing, half-way
    assert _codes(await doc.diagnostics()) == ["KL003"]

    doc.change(PYTHON)
    assert _codes(await doc.diagnostics()) == ["PY005"]
    (suppress,) = [a for a in await doc.actions(5) if "Suppress" in a.title]
    doc.apply(suppress)
    assert "@functools.lru_cache(maxsize=None)  # kernlint: ignore[PY005]" in doc.text
    assert await doc.diagnostics() == []


@lsp
async def test_config_change_reloads(client: LanguageClient, project):
    # The server asked the client to watch the config files.
    (registration,) = client.registrations
    assert registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
    globs = [w["globPattern"] for w in registration.register_options["watchers"]]
    assert globs == ["**/kernlint.toml", "**/pyproject.toml", "**/*.py"]
    config = project / "kernlint.toml"
    doc = Doc(client, project / "kernel.cuh", KERNEL, "cuda-cpp")
    assert _codes(await doc.diagnostics()) == ["CU003", "CU003"]

    config.write_text(CONFIG + 'ignore = ["CU003"]\n')
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            [types.FileEvent(config.as_uri(), types.FileChangeType.Changed)]
        )
    )
    assert await doc.diagnostics() == []

    # Without a notification, the config file's new modification time is seen at the next lint.
    config.write_text('jit-roots = ["**"]\nselect = ["CU003"]\n')
    st = os.stat(config)
    os.utime(config, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    doc.change(KERNEL)
    assert _codes(await doc.diagnostics()) == ["CU003", "CU003"]

    config.write_text('jit-roots = ["**"]\nselect = ["XX999"]\n')
    st = os.stat(config)
    os.utime(config, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))
    doc.change(KERNEL)
    (error,) = await doc.diagnostics()
    assert "kernlint.toml" in error.message and "XX999" in error.message
    assert error.severity == types.DiagnosticSeverity.Error


FFI_HEADER = "#pragma once\nnamespace sglang {\nvoid run_it(int n) {}\n}  // namespace sglang\n"
FFI_MODULE = (
    "from sglang.jit_kernel.utils import load_jit\n\n\ndef f():\n"
    '    return load_jit("m", cuda_files=["k.cuh"], cuda_wrappers=[("run", "&run_it")])\n'
)


@lsp
async def test_cross_file_facts_from_the_project_scan(client: LanguageClient, tmp_path):
    # `run_it` is an FFI entry point only because a Python file of the project names it: the
    # one file alone gives no finding (as `kernlint check k.cuh`), the project's scan does.
    (tmp_path / "kernlint.toml").write_text('jit-roots = ["**"]\nselect = ["CU005"]\n')
    header = tmp_path / "k.cuh"
    header.write_text(FFI_HEADER)
    doc = Doc(client, header, FFI_HEADER, "cuda-cpp")
    assert await doc.diagnostics() == []  # (no Python file names it yet)

    module = tmp_path / "mod.py"
    module.write_text(FFI_MODULE)
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            [types.FileEvent(module.as_uri(), types.FileChangeType.Created)]
        )
    )
    (found,) = await doc.diagnostics()
    assert found.code == "CU005" and "`run_it`" in found.message

    # The last scan holds until a Python file changes: the header's own edits keep it.
    doc.change(FFI_HEADER.replace("int n", "int n, long m"))
    assert _codes(await doc.diagnostics()) == ["CU005", "CU005"]

    # A Python file saved in the editor starts a new scan.
    module.write_text(FFI_MODULE.replace("&run_it", "&other"))
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(module.as_uri()))
    )
    assert await doc.diagnostics() == []


@lsp
async def test_did_change_configuration_reloads(client: LanguageClient, project):
    config = project / "kernlint.toml"
    doc = Doc(client, project / "kernel.cuh", KERNEL, "cuda-cpp")
    assert _codes(await doc.diagnostics()) == ["CU003", "CU003"]
    # The same size and modification time: only the notification tells the server.
    st = os.stat(config)
    config.write_text(CONFIG.replace('"CU003"', '"CU004"'))
    os.utime(config, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(config).st_size == st.st_size
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))
    assert await doc.diagnostics() == []


@lsp
async def test_pull_diagnostics(pull_client: LanguageClient, project):
    client = pull_client
    doc = Doc(client, project / "kernel.cuh", KERNEL, "cuda-cpp")

    async def pull():
        report = await asyncio.wait_for(
            client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(types.TextDocumentIdentifier(doc.uri))
            ),
            TIMEOUT,
        )
        return list(report.items)

    assert _codes(await pull()) == ["CU003", "CU003"]
    doc.change(KERNEL_FIXED)
    assert await pull() == []

    (project / "kernlint.toml").write_text('jit-roots = ["**"]\nselect = ["CU001"]\n')
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            [types.FileEvent((project / "kernlint.toml").as_uri(), types.FileChangeType.Changed)]
        )
    )
    doc.change(KERNEL)
    assert await pull() == []  # (CU003 is no longer selected)
    # The server asked the client to pull again (before it answered the pull: one pipe, in order).
    assert client.diagnostic_refresh_count == 1
    assert doc.uri not in client.diagnostics  # (a pull client gets no pushed diagnostics)


@lsp
async def test_file_kernlint_does_not_lint(client: LanguageClient, project):
    doc = Doc(client, project / "notes.txt", "caf\u00e9 __global__\n", "plaintext")
    assert await doc.diagnostics() == []


def _run(code: str):
    import subprocess

    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT
    )


def test_without_pygls_one_line_and_exit_2():
    run = _run(
        "import sys; sys.modules['pygls'] = None\n"
        "from kernlint.cli import main; sys.exit(main(['server']))"
    )
    assert run.returncode == 2
    assert (
        run.stderr == "kernlint: error: `kernlint server` needs pygls: install kernlint[server]\n"
    )


def test_other_commands_do_not_import_pygls():
    run = _run(
        "import sys; from kernlint.cli import main; main(['rules'])\n"
        "assert 'pygls' not in sys.modules and 'lsprotocol' not in sys.modules"
    )
    assert run.returncode == 0, run.stderr


def test_suppression_before_a_line_continuation(tmp_path):
    from kernlint.config import ConfigResolver, Overrides
    from kernlint.registry import load_registry
    from kernlint.server import lint_buffer, suppression_edit

    (tmp_path / "kernlint.toml").write_text(CONFIG)
    path = str(tmp_path / "macro.cuh")
    registry = load_registry()
    text = "#define TWICE(x) \\\n  ((x) + (x)) /* \u2014 */ \\\n  + 0\n"
    source, (finding,) = lint_buffer(
        path, text.encode(), ConfigResolver(registry, Overrides()), registry
    )
    assert (finding.code, finding.line) == ("CU001", 2)
    edit = suppression_edit(source, finding, registry, "utf-16")
    lines = text.splitlines(keepends=True)
    line = lines[1]
    at = edit.range.start.character
    assert edit.range.start == edit.range.end and edit.range.start.line == 1
    lines[1] = line[:at] + edit.new_text + line[at:]
    assert lines[1] == "  ((x) + (x)) /* \u2014 */ /* kernlint: ignore[CU001] */ \\\n"
    _, findings = lint_buffer(
        path, "".join(lines).encode(), ConfigResolver(registry, Overrides()), registry
    )
    assert findings == []
