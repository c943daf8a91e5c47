"""`preset = "NAME"`: a shipped config under the user's, and the convention keys' validation."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kernlint.config import CONVENTION_KEYS, PRESET_DIR, PRESETS, ConfigResolver, Overrides
from kernlint.registry import load_registry


def settings_for(root, rel="a.cuh"):
    resolver = ConfigResolver(load_registry(), Overrides())
    return resolver.for_file(str(root / rel))


def kernlint(cwd, *args):
    return subprocess.run(
        [sys.executable, "-m", "kernlint", "check", "--no-cache", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("name", PRESETS)
def test_every_preset_ships_and_loads(tmp_path, name):
    assert os.path.isfile(os.path.join(PRESET_DIR, f"{name}.toml"))
    (tmp_path / "kernlint.toml").write_text(f'preset = "{name}"\n')
    settings = settings_for(tmp_path)
    assert settings.preset == name
    assert settings.enabled  # (every preset enables some rules)


def test_the_sglang_preset_is_the_default(tmp_path):
    (tmp_path / "kernlint.toml").write_text('preset = "sglang"\n')
    preset = settings_for(tmp_path)
    (tmp_path / "kernlint.toml").write_text("")
    default = settings_for(tmp_path)
    assert [r.code for r in preset.enabled] == [r.code for r in default.enabled]
    assert preset.jit_roots == default.jit_roots
    for key in CONVENTION_KEYS:
        attr = key.replace("-", "_")
        assert getattr(preset, attr) is None and getattr(default, attr) is None


def test_the_users_keys_override_the_preset(tmp_path):
    (tmp_path / "kernlint.toml").write_text('preset = "generic"\nextend-select = ["CU002"]\n')
    codes = [r.code for r in settings_for(tmp_path).enabled]
    assert "CU002" in codes and "KL002" in codes and "PY001" not in codes
    (tmp_path / "kernlint.toml").write_text('preset = "generic"\nselect = ["CU001"]\n')
    assert [r.code for r in settings_for(tmp_path).enabled] == ["CU001"]


def test_preset_paths_are_relative_to_the_file_that_names_it(tmp_path):
    base = tmp_path / "shared"
    base.mkdir()
    (base / "kernlint.toml").write_text('preset = "flashinfer"\n')
    project = tmp_path / "project"
    project.mkdir()
    (project / "kernlint.toml").write_text('extend = "../shared/kernlint.toml"\n')
    settings = settings_for(project, "csrc/a.cuh")
    assert settings.preset == "flashinfer" and settings.namespaces == ["flashinfer"]
    assert settings.jit_root_base == str(base)  # (the file that named the preset)
    # The nearest file naming a preset wins.
    (project / "kernlint.toml").write_text('extend = "../shared/kernlint.toml"\npreset = "vllm"\n')
    assert settings_for(project, "csrc/a.cuh").namespaces == ["vllm"]


def test_show_settings_names_the_preset(tmp_path):
    (tmp_path / "kernlint.toml").write_text('preset = "generic"\n')
    (tmp_path / "a.cuh").write_text("int x;\n")
    p = kernlint(tmp_path, "--show-settings", "a.cuh")
    assert p.returncode == 0, p.stderr
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("select "))
    assert line.endswith("# preset generic")


@pytest.mark.parametrize(
    "content,says",
    [
        ('preset = "nope"\n', '`preset` must be one of "sglang", "flashinfer", "vllm", "generic"'),
        ('namespaces = ["my ns"]\n', "`namespaces`: 'my ns' is not a C++ or Python name"),
        ('third-party-namespaces = ["cutlass-3"]\n', "`third-party-namespaces`: 'cutlass-3'"),
        ('drop-primitives = ["no-such-entry"]\n', "`drop-primitives`: "),
        (
            'launch-wrappers = ["host::"]\n',
            "`launch-wrappers`: 'host::' is not a C++ or Python name",
        ),
        ('launch-check = "CHECK()"\n', "`launch-check`: 'CHECK()' is not a macro or function name"),
        ('ffi-boundaries = ["ctypes"]\n', "`ffi-boundaries`: 'ctypes' is not one of"),
        ("primitives = [1]\n", "`primitives` item 1 must be a table"),
        (
            'primitives = [{ name = "x", pattern = "a" }]\n',
            "`primitives` item 1: `replacement` is missing",
        ),
        (
            'primitives = [{ name = "x", pattern = "(", replacement = "y" }]\n',
            "`primitives` item 1: `pattern` is not a regular expression",
        ),
        (
            'primitives = [{ name = "x", pattern = "a", replacement = "y", why = "z" }]\n',
            "`primitives` item 1: unknown key `why`",
        ),
        ('primitives-implementation = ["[z-a]"]\n', "`primitives-implementation`: invalid glob"),
        ('aiter-gates = ["1x"]\n', "`aiter-gates`: '1x' is not a C++ or Python name"),
    ],
)
def test_bad_convention_values(tmp_path, content, says):
    (tmp_path / "kernlint.toml").write_text(content)
    (tmp_path / "a.cuh").write_text("int x;\n")
    p = kernlint(tmp_path, "a.cuh")
    assert p.returncode == 2 and "kernlint.toml" in p.stderr and says in p.stderr, p.stderr


def test_conventions_are_part_of_the_cache_key(tmp_path):
    from kernlint.cache import settings_key

    (tmp_path / "kernlint.toml").write_text("")
    plain = settings_for(tmp_path)
    (tmp_path / "kernlint.toml").write_text('namespaces = ["flashinfer"]\n')
    other = settings_for(tmp_path)
    rules = plain.enabled
    assert settings_key(plain, rules, True) != settings_key(other, rules, True)


def test_the_readme_configuration_example_is_valid_and_names_every_key():
    # The README's Configuration block: valid TOML whose every table passes validation, and
    # every key kernlint knows appears in it with an example.
    import re

    from kernlint.config import KNOWN_KEYS, _tomllib, _validate

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "README.md"), encoding="utf-8") as fh:
        text = fh.read()
    section = text[text.index("## Configuration") :]
    block = re.search(r"```toml\n(.*?)```", section, re.S).group(1)
    table = _tomllib().loads(block)["tool"]["kernlint"]
    _validate("README.md", table)
    missing = sorted(k for k in KNOWN_KEYS if k not in table)
    assert not missing, f"README's Configuration example lacks {missing}"


def test_star_star_per_file_ignores_match_outside_the_config_directory(tmp_path):
    # A preset's (or any kept-apart config's) `**/` per-file-ignores apply to the tree it checks.
    conf = tmp_path / "conf" / "kernlint.toml"
    conf.parent.mkdir()
    conf.write_text(
        'select = ["CU003"]\n[per-file-ignores]\n"**/quiet/**" = ["CU003"]\n"loud/**" = ["CU003"]\n'
    )
    kernel = "__global__ void k(float* a, const float* b) { a[0] = b[0]; }\n"
    for d in ("quiet", "loud"):
        (tmp_path / "tree" / d).mkdir(parents=True)
        (tmp_path / "tree" / d / "k.cu").write_text(kernel)
    p = kernlint(tmp_path / "tree", "--config", str(conf), "--output-format", "concise", ".")
    assert "quiet" not in p.stdout  # (`**/` matches anywhere)
    assert "loud/k.cu" in p.stdout  # (a relative pattern names conf/loud/, not this tree)
