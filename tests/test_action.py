"""The composite GitHub Action (`action.yml`): validated against the GitHub Action schema
(check-jsonschema's builtin `vendor.github-actions`), and its shell steps run here as the runner
runs them: `${{ ... }}` substituted in each step's `env:`, `if:` evaluated, `bash --noprofile
--norc -eo pipefail`, `$GITHUB_PATH` and `$GITHUB_OUTPUT` files read back after each step. The
one `uses:` step (the SARIF upload) cannot run here: its `with:` is checked against the report the
step before it wrote."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys

import pytest
from release_support import ROOT, copy_sources, pip_offline

from kernlint import __version__

yaml = pytest.importorskip("yaml")

ACTION = os.path.join(ROOT, "action.yml")
SARIF_SCHEMA = os.path.join(ROOT, "tests", "data", "sarif-schema-2.1.0.json")
BAD = "kernels/jit/csrc/bad.cuh"  # CU002 (code-outside-sglang-namespace) on line 1


def load_action() -> dict:
    with open(ACTION, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def _check_jsonschema(path):
    if importlib.util.find_spec("check_jsonschema") is None:
        pytest.skip("check-jsonschema is not installed (the test extra has it)")
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-actions"]
        + [str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_action_validates_against_the_github_action_schema(tmp_path):
    ok = _check_jsonschema(ACTION)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    # The schema is really applied: the same action without `runs` is rejected.
    broken = load_action()
    del broken["runs"]
    (tmp_path / "action.yml").write_text(yaml.safe_dump(broken))
    bad = _check_jsonschema(tmp_path / "action.yml")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "runs" in bad.stdout + bad.stderr


def test_action_inputs_are_documented():
    inputs = load_action()["inputs"]
    assert set(inputs) == {"version", "paths", "args", "sarif", "sarif-file"}
    for doc in ("README.md", os.path.join("docs", "github-actions.md")):
        with open(os.path.join(ROOT, doc), encoding="utf-8") as fh:
            text = fh.read()
        for name in inputs:
            assert f"| `{name}` |" in text, f"{doc} does not document the input `{name}`"


# -- the runner, emulated ---------------------------------------------------------------------

_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def _value(expr: str, ctx: dict) -> str:
    if expr == "github.action_path":
        return ctx["action_path"]
    m = re.fullmatch(r"inputs\.([\w-]+)", expr)
    if m:
        return ctx["inputs"][m.group(1)]
    m = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr)
    if m:
        return ctx["outputs"].get(m.group(1), {}).get(m.group(2), "")
    raise AssertionError(f"action.yml uses an expression this test cannot evaluate: {expr}")


def _substitute(text: str, ctx: dict) -> str:
    return _EXPR.sub(lambda m: _value(m.group(1), ctx), str(text))


def _condition(expr, ctx) -> bool:
    if expr is None:
        return True
    m = re.fullmatch(r"\s*inputs\.([\w-]+)\s*==\s*'([^']*)'\s*", expr)
    assert m, f"action.yml uses an `if:` this test cannot evaluate: {expr}"
    return ctx["inputs"][m.group(1)] == m.group(2)


def run_action(workspace, inputs: dict, action_path: str, runner_temp, env=None, steps=None):
    """Runs the action's steps (all, or those named in `steps`) in `workspace`; returns one
    record per step: name, ran, returncode, stdout, with (for `uses:`)."""
    action = load_action()
    given = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    given.update(inputs)
    ctx = {"inputs": given, "action_path": action_path, "outputs": {}}
    path_dirs: list[str] = []
    # A runner's steps do not inherit this test's Python path.
    base_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    base_env.update(env or {})
    records = []
    for i, step in enumerate(action["runs"]["steps"]):
        name = step["name"]
        if steps is not None and name not in steps:
            continue
        if not _condition(step.get("if"), ctx):
            records.append({"name": name, "ran": False})
            continue
        if "uses" in step:
            with_ = {k: _substitute(v, ctx) for k, v in step.get("with", {}).items()}
            records.append({"name": name, "ran": True, "uses": step["uses"], "with": with_})
            continue
        assert step["shell"] == "bash"
        files = {k: runner_temp / f"step{i}-{k}" for k in ("path", "output")}
        for f in files.values():
            f.write_text("")
        script = runner_temp / f"step{i}.sh"
        script.write_text(step["run"])
        step_env = {
            **base_env,
            "PATH": os.pathsep.join([*path_dirs, base_env["PATH"]]),
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_ACTION_PATH": action_path,
            "RUNNER_TEMP": str(runner_temp),
            "GITHUB_PATH": str(files["path"]),
            "GITHUB_OUTPUT": str(files["output"]),
            **{k: _substitute(v, ctx) for k, v in step.get("env", {}).items()},
        }
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=workspace,
            env=step_env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        records.append(
            {
                "name": name,
                "ran": True,
                "returncode": proc.returncode,
                "stdout": proc.stdout,
                "stderr": proc.stderr,
            }
        )
        path_dirs[:0] = reversed(files["path"].read_text().split())
        if "id" in step:
            pairs = (ln.split("=", 1) for ln in files["output"].read_text().splitlines() if ln)
            ctx["outputs"][step["id"]] = dict(pairs)
        if proc.returncode != 0:
            break  # the runner stops at a failed step (no step here has `if: always()`)
    return records


def _by_name(records):
    return {r["name"]: r for r in records}


def _install_or_skip(record):
    assert record["ran"]
    out = record["stdout"] + record["stderr"]
    if record["returncode"] != 0 and pip_offline(out):
        pytest.skip(f"the install step's pip cannot reach a package index: {out[-300:]}")
    assert record["returncode"] == 0, out


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The action's install step, run once with `version` empty: kernlint from the action's own
    checkout (a copy of this tree, as `uses:` would check it out)."""
    base = tmp_path_factory.mktemp("action")
    action_path = copy_sources(base / "action-checkout")
    temp = base / "runner-temp"
    temp.mkdir()
    ws = base / "ws"
    ws.mkdir()
    (rec,) = run_action(ws, {}, action_path, temp, steps={"Install kernlint"})
    _install_or_skip(rec)
    assert rec["stdout"].strip() == f"kernlint {__version__}"
    venv_bin = temp / "kernlint-venv" / "bin"
    assert (venv_bin / "kernlint").exists()
    return {"action_path": action_path, "venv_bin": str(venv_bin), "base": base}


def _workspace(path):
    d = path / "kernels" / "jit" / "csrc"
    d.mkdir(parents=True)
    (path / BAD).write_text("int g = 0;\n")
    (d / "clean.cuh").write_text("namespace sglang {\nint x = 0;\n}  // namespace sglang\n")
    return path


def _run_checks(installed, tmp_path, inputs):
    """The steps after the install, with the installed kernlint on PATH (as `$GITHUB_PATH` put
    it there)."""
    ws = _workspace(tmp_path / "ws")
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    names = {s["name"] for s in load_action()["runs"]["steps"]} - {"Install kernlint"}
    env = {"PATH": installed["venv_bin"] + os.pathsep + os.environ["PATH"]}
    records = run_action(ws, inputs, installed["action_path"], temp, env=env, steps=names)
    return ws, _by_name(records)


def test_action_annotates_and_fails_on_findings(installed, tmp_path):
    ws, steps = _run_checks(installed, tmp_path, {"paths": "kernels"})
    check = steps["Run kernlint"]
    assert check["returncode"] == 0  # the step records the status, the last step fails
    lines = check["stdout"].splitlines()
    assert lines and all(line.startswith("::") for line in lines), check["stdout"]
    assert any(
        line.startswith(f"::error file={BAD},line=1,") and "CU002" in line for line in lines
    ), lines
    assert not any("clean.cuh" in line for line in lines)
    assert steps["Write the SARIF report"]["ran"] is False
    assert steps["Upload the SARIF report"]["ran"] is False
    assert not (ws / "kernlint.sarif").exists()
    assert steps["Fail on findings"]["returncode"] == 1


def test_action_args_and_paths_are_passed(installed, tmp_path):
    _, steps = _run_checks(
        installed,
        tmp_path,
        {"paths": "kernels/jit/csrc/clean.cuh kernels", "args": "--ignore CU002"},
    )
    assert steps["Run kernlint"]["stdout"] == ""
    assert steps["Fail on findings"]["returncode"] == 0


def test_action_sarif_report_and_upload(installed, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    ws, steps = _run_checks(
        installed, tmp_path, {"paths": "kernels", "sarif": "true", "sarif-file": "out/k.sarif"}
    )
    assert steps["Write the SARIF report"]["returncode"] == 0
    upload = steps["Upload the SARIF report"]
    assert upload["ran"] and upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["with"] == {"sarif_file": "out/k.sarif", "category": "kernlint"}
    with open(ws / "out" / "k.sarif", encoding="utf-8") as fh:
        sarif = json.load(fh)
    with open(SARIF_SCHEMA, encoding="utf-8") as fh:
        jsonschema.validate(sarif, json.load(fh))
    results = sarif["runs"][0]["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
            for r in results] == [("CU002", BAD)]  # fmt: skip
    assert steps["Fail on findings"]["returncode"] == 1


def test_action_config_error_fails_the_job(installed, tmp_path):
    _, steps = _run_checks(installed, tmp_path, {"paths": "kernels", "args": "--select XX999"})
    assert steps["Fail on findings"]["returncode"] == 2


def test_action_installs_a_given_version(installed, tmp_path):
    """`version`: `pip install kernlint==VERSION`. A wheel whose version has a local label no
    index holds is offered through PIP_FIND_LINKS, so only it can satisfy the pin."""
    src = copy_sources(tmp_path / "src")
    init = os.path.join(src, "kernlint", "__init__.py")
    with open(init, encoding="utf-8") as fh:
        text = fh.read()
    version = f"{__version__}+actiontest"
    with open(init, "w", encoding="utf-8") as fh:
        fh.write(text.replace(f'"{__version__}"', f'"{version}"'))
    wheels = tmp_path / "wheels"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), src],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if built.returncode != 0 and pip_offline(built.stdout + built.stderr):
        pytest.skip(f"pip cannot reach a package index: {built.stderr[-300:]}")
    assert built.returncode == 0, built.stderr
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    links = " ".join(filter(None, [str(wheels), os.environ.get("PIP_FIND_LINKS", "")]))
    (rec,) = run_action(
        tmp_path,
        {"version": version},
        "/nonexistent-action-path",  # not used when a version is given
        temp,
        env={"PIP_FIND_LINKS": links},
        steps={"Install kernlint"},
    )
    _install_or_skip(rec)
    assert rec["stdout"].strip() == f"kernlint {version}"
