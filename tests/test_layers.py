"""The layer order of DESIGN.md section 2 holds: the import-linter contracts in
pyproject.toml are checked here, so the test run (and CI) fails on an import across them."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import chronolog

ROOT = Path(__file__).resolve().parents[1]
LINT = ("import sys; from importlinter.cli import lint_imports; "
        "sys.exit(lint_imports(config_filename=sys.argv[1], no_cache=True, no_logo=True))")


def lint(config: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` over the chronolog package this test run imports."""
    package_root = str(Path(chronolog.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-c", LINT, str(config)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_import_contracts_are_kept() -> None:
    result = lint(ROOT / "pyproject.toml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_a_broken_contract_fails_the_check(tmp_path: Path) -> None:
    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.importlinter]\nroot_package = "chronolog"\n\n'
                      '[[tool.importlinter.contracts]]\nname = "upside down"\ntype = "layers"\n'
                      'containers = ["chronolog"]\nlayers = ["errors", "cli"]\n')
    result = lint(config)
    assert result.returncode == 1
    assert "chronolog.cli is not allowed to import chronolog.errors" in result.stdout
