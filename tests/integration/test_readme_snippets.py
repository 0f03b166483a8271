"""Every shell and Python snippet of the README runs as written, in README order, against a real
embedded service started as ``make serve`` starts it (``rlvr migrate``, then ``rlvr serve``).

The only rewrites are the port (the README says 8000; the service here listens on a free one)
and the README's placeholders (the key the first start prints, a key id). Each shell block runs
in its own ``bash -euo pipefail`` with ``curl`` failing on any status outside 2xx, so a block
passes only if every command in it succeeded. Blocks run in order on one service because later
ones use what earlier ones made (the version 1.1.0 that experiments and replays compare).

A block that another test runs, or that cannot run here, says so on the line before it:
``<!-- framework-test: name -->`` (run by tests/frameworks/), ``<!-- tested-by: path -->`` or
``<!-- not-run: reason -->``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from service import localstack
from service.localstack import REPO_ROOT, ManagedProcess, free_port
from tests.support import TEST_TIMEOUT_S, wait_until

README = REPO_ROOT / "README.md"
RUN_LANGUAGES = {"bash", "sh", "python"}
MARKER = re.compile(r"^<!--\s*(framework-test|tested-by|not-run):\s*(.+?)\s*-->$")
FENCE = re.compile(r"^```([\w-]*)\s*$")
README_ADDRESS = re.compile(r"\b(localhost|127\.0\.0\.1):8000\b")
# Shell blocks see this first: a curl that gets an answer outside 2xx fails its block.
SHELL_PRELUDE = 'curl() { command curl --fail-with-body --show-error "$@"; }\n'


@dataclass(frozen=True)
class Snippet:
    line: int  # of the opening fence, 1-based
    language: str
    code: str
    marker: tuple[str, str] | None  # (kind, text) of the comment before it

    @property
    def runs_here(self) -> bool:
        return self.language in RUN_LANGUAGES and self.marker is None


def readme_snippets(text: str) -> list[Snippet]:
    """The fenced blocks of ``text`` in order, each with the marker on the line before it."""
    snippets = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        fence = FENCE.match(lines[index])
        if fence is None:
            index += 1
            continue
        end = lines.index("```", index + 1)
        code = "\n".join(lines[index + 1 : end]) + "\n"
        before = next((line for line in reversed(lines[:index]) if line.strip()), "")
        found = MARKER.match(before.strip())
        marker = (found.group(1), found.group(2)) if found else None
        snippets.append(Snippet(index + 1, fence.group(1), code, marker))
        index = end + 1
    return snippets


@dataclass(frozen=True)
class ReadmeService:
    port: int
    key: str
    data_dir: Path
    server: ManagedProcess


@pytest.fixture(scope="module")
def readme_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReadmeService]:
    """A first start on a fresh data directory, as ``make serve`` does it: the admin key is the
    one the service prints in its log."""
    data_dir = tmp_path_factory.mktemp("readme-data")
    port = free_port()
    env = localstack.service_env(
        RLVR_DATA_DIR=str(data_dir),
        RLVR_PORT=str(port),
        RLVR_LOCAL_WORKERS="1",
        RLVR_VERIFY_TIMEOUT_S=str(TEST_TIMEOUT_S),
    )
    rlvr = [sys.executable, "-m", "service.cli"]
    subprocess.run([*rlvr, "migrate"], env=env, cwd=REPO_ROOT, check=True, capture_output=True)
    server = ManagedProcess([*rlvr, "serve"], env, data_dir / "api.log")
    key_in_log = re.compile(r"shown once, keep it\): (rlvr_\S+)")
    base_url = f"http://127.0.0.1:{port}"

    def ready() -> bool:
        if not server.alive():
            return True
        try:
            return httpx.get(f"{base_url}/readyz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_until(ready, 90, "the embedded service to become ready")
        assert server.alive(), server.log_tail()
        keys = key_in_log.findall(server.log_path.read_text(errors="replace"))
        assert len(keys) == 1, f"the first start printed {len(keys)} keys:\n{server.log_tail()}"
        yield ReadmeService(port, keys[0], data_dir, server)
    finally:
        server.stop()


def snippet_env(service: ReadmeService) -> dict[str, str]:
    """A reader's shell after the first start: the key in RLVR_API_KEY, ``rlvr`` on the PATH
    and reaching the service's data directory."""
    return localstack.service_env(
        RLVR_API_KEY=service.key,
        RLVR_DATA_DIR=str(service.data_dir),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    )


def as_run_here(snippet: Snippet, service: ReadmeService) -> str:
    """The snippet with the service's port for 8000 and its placeholders filled in."""
    code = README_ADDRESS.sub(rf"\1:{service.port}", snippet.code)
    placeholders = {
        # The key the first start printed (the environment holds it too).
        "rlvr_...": service.key,
        # The id of the key the block created just before: the only key of its tenant.
        "<key id>": '"$(rlvr keys list --tenant team-a | cut -f1)"',
    }
    for placeholder, value in placeholders.items():
        code = code.replace(placeholder, value)
    return code


def run(
    snippet: Snippet, service: ReadmeService, workdir: Path
) -> subprocess.CompletedProcess[str]:
    code = as_run_here(snippet, service)
    if snippet.language == "python":
        argv = [sys.executable, "-c", code]
    else:
        argv = ["bash", "-euo", "pipefail", "-c", SHELL_PRELUDE + code]
    return subprocess.run(
        argv,
        env=snippet_env(service),
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_block_run_elsewhere_names_a_test_that_reads_it() -> None:
    framework_tests = "".join(
        path.read_text() for path in (REPO_ROOT / "tests" / "frameworks").glob("test_*.py")
    )
    for snippet in readme_snippets(README.read_text()):
        kind, name = snippet.marker or ("", "")
        where = f"the block at README.md line {snippet.line}"
        if kind == "framework-test":
            assert f'"{name}"' in framework_tests, f"{where}: no framework test reads {name!r}"
        elif kind == "tested-by":
            test = REPO_ROOT / name
            assert test.is_file(), f"{where}: {name} does not exist"
            assert "README" in test.read_text(), f"{where}: {name} does not read the README"


def test_the_readme_snippets_run_as_written(readme_service: ReadmeService, tmp_path: Path) -> None:
    snippets = [s for s in readme_snippets(README.read_text()) if s.runs_here]
    assert snippets, "README.md has no shell or Python block to run"
    for snippet in snippets:
        result = run(snippet, readme_service, tmp_path)
        assert result.returncode == 0, (
            f"README.md line {snippet.line} ({snippet.language}) failed with exit status "
            f"{result.returncode}\n--- block as run ---\n{as_run_here(snippet, readme_service)}"
            f"--- stdout ---\n{result.stdout[-3000:]}\n--- stderr ---\n{result.stderr[-3000:]}"
            f"\n--- service log ---\n{readme_service.server.log_tail(2000)}"
        )
