"""SGLang's CI layout settings (`registered-tests-roots`, `sglang-package-roots`) as the
CI-registration rules (PY012, PY013, PY014) read them."""

from __future__ import annotations

import subprocess
import sys

from kernlint.ci_layout import in_sglang_package, is_collected_test, project_key
from kernlint.runner import lint_paths

UNREGISTERED = "def test_x():\n    pass\n"
REGISTERED = (
    "from sglang.test.ci.ci_register import register_cpu_ci\n\n"
    'register_cpu_ci(est_time=5, suite="base-a-test-cpu")\n'
)


def _codes(path, select):
    results = lint_paths([str(path)], select=select, preview=True, warn=lambda m: None)
    return sorted(d.code for r in results for d in r.diagnostics)


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_default_root_is_test_registered(tmp_path):
    assert _codes(_write(tmp_path / "test/registered/unit/test_x.py", UNREGISTERED), ["PY014"]) == [
        "PY014"
    ]
    assert _codes(_write(tmp_path / "test/manual/test_x.py", UNREGISTERED), ["PY014"]) == []


def test_registered_tests_roots_replace_the_default(tmp_path):
    (tmp_path / "kernlint.toml").write_text('registered-tests-roots = ["ci/**"]\n')
    assert _codes(_write(tmp_path / "ci/unit/test_x.py", UNREGISTERED), ["PY014"]) == ["PY014"]
    assert _codes(_write(tmp_path / "test/registered/test_y.py", UNREGISTERED), ["PY014"]) == []


def test_extend_registered_tests_roots_keeps_the_default(tmp_path):
    (tmp_path / "kernlint.toml").write_text('extend-registered-tests-roots = ["ci/**"]\n')
    assert _codes(_write(tmp_path / "ci/test_x.py", UNREGISTERED), ["PY014"]) == ["PY014"]
    assert _codes(_write(tmp_path / "test/registered/test_y.py", UNREGISTERED), ["PY014"]) == [
        "PY014"
    ]
    # a registered file with a registration but no main block: the collector's other check
    assert _codes(_write(tmp_path / "ci/test_z.py", REGISTERED), ["PY013", "PY014"]) == ["PY013"]


def test_unpacked_wheel_is_detected_by_its_init(tmp_path):
    _write(tmp_path / "site/sglang/__init__.py", "")
    path = _write(tmp_path / "site/sglang/jit_kernel/tests/test_x.py", REGISTERED)
    assert _codes(path, ["PY012"]) == ["PY012"]
    loose = _write(tmp_path / "other/sglang/test_x.py", REGISTERED)  # (no __init__.py)
    assert _codes(loose, ["PY012"]) == []


def test_sglang_package_roots_replace_detection(tmp_path):
    (tmp_path / "kernlint.toml").write_text('sglang-package-roots = ["pkg/**"]\n')
    assert _codes(_write(tmp_path / "pkg/mod.py", REGISTERED), ["PY012"]) == ["PY012"]
    _write(tmp_path / "site/sglang/__init__.py", "")
    assert _codes(_write(tmp_path / "site/sglang/test_x.py", REGISTERED), ["PY012"]) == []
    assert _codes(_write(tmp_path / "python/sglang/test_x.py", REGISTERED), ["PY012"]) == []


def test_package_files_are_not_collected_tests(tmp_path):
    path = tmp_path / "python/sglang/test/registered/test_x.py"
    assert in_sglang_package(str(path))
    assert not is_collected_test(str(path))
    assert project_key(str(path), None) == "|sglang-package"
    assert project_key(str(tmp_path / "test/registered/test_x.py"), None) == "|registered-test"
    assert project_key(str(tmp_path / "test/registered/conftest.py"), None) == ""
    assert project_key(str(tmp_path / "src/mod.py"), None) == ""


def test_wrong_type_is_a_one_line_config_error(tmp_path):
    (tmp_path / "kernlint.toml").write_text('registered-tests-roots = "test/registered"\n')
    _write(tmp_path / "test/registered/test_x.py", UNREGISTERED)
    proc = subprocess.run(
        [sys.executable, "-m", "kernlint", "check", "--no-cache", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "registered-tests-roots" in lines[0] and "kernlint.toml" in lines[0]


def test_warm_cache_follows_the_layout_settings(tmp_path, monkeypatch, capsys):
    """The cached result of a file follows where the settings say registered tests live (the
    file's bytes alone do not decide it)."""
    import json

    from kernlint.cli import main

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "ci/unit/test_x.py", UNREGISTERED)

    def check():
        capsys.readouterr()
        rc = main(["check", "ci", "--select", "PY014", "--output-format", "json"])
        out, err = capsys.readouterr()
        assert rc in (0, 1) and "Traceback" not in err, err
        return [d["code"] for d in json.loads(out)]

    assert check() == []  # (not under the default root)
    (tmp_path / "kernlint.toml").write_text('registered-tests-roots = ["ci/**"]\n')
    assert check() == ["PY014"]
    (tmp_path / "kernlint.toml").write_text('registered-tests-roots = ["elsewhere/**"]\n')
    assert check() == []
