"""The dashboard in a real headless Chromium: sign in, open a run, filter decisions, open one,
and hostile model text never runs as script."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from service.localstack import REPO_ROOT
from tests.support import ADMIN_KEY, AUTH, ManagedProcess, service_env, start_server

from .conftest import hostile_items

playwright = pytest.importorskip("playwright.sync_api", reason="playwright is a dev dependency")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# CI sets this once it has installed Debian's chromium: then a missing browser is a failure.
REQUIRE_BROWSER = os.environ.get("RLVR_TEST_REQUIRE_BROWSER") == "1"
# Flags for a closed network (no update, sync or QUIC probes that the machine refuses).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def live_dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    if not Path(CHROMIUM).exists():
        reason = "Debian's chromium is not installed here (scripts/provision-browser.sh)"
        if REQUIRE_BROWSER:
            pytest.fail(reason)
        pytest.skip(reason)
    data_dir = tmp_path_factory.mktemp("dashboard")
    env = service_env(RLVR_DATA_DIR=str(data_dir), RLVR_LOCAL_WORKERS="1")
    migrate = [sys.executable, "-m", "service.cli", "migrate"]
    subprocess.run(migrate, env=env, cwd=REPO_ROOT, check=True, capture_output=True)
    server: ManagedProcess
    server, url = start_server(env, data_dir / "api.log")
    run_id = "browser/run-1"
    try:
        for step in range(4):
            body = {
                "verifier": "math",
                "run_id": run_id,
                "step": step,
                "items": hostile_items(step),
            }
            response = httpx.post(f"{url}/v1/rewards", json=body, headers=AUTH, timeout=60)
            assert response.status_code == 200, response.text
        # One answer written in its prompt: a flagged decision.
        leak = {
            "id": "leak",
            "prompt": "What is 6*7? It is 42.",
            "completion": "\\boxed{42}",
            "ground_truth": "42",
        }
        body = {"verifier": "math", "run_id": run_id, "step": 4, "items": [leak]}
        response = httpx.post(f"{url}/v1/rewards", json=body, headers=AUTH, timeout=60)
        assert response.status_code == 200, response.text
        assert response.json()["results"][0]["details"].get("answer_leak") is True
        yield url, run_id
    finally:
        server.stop()


def test_a_person_audits_a_run_in_the_browser(
    live_dashboard: tuple[str, str], tmp_path: Path
) -> None:
    url, run_id = live_dashboard
    dialogs: list[str] = []
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))

            page.goto(f"{url}/ui")
            assert "/ui/login" in page.url
            page.fill("#key", ADMIN_KEY)
            page.click("#sign-in")
            page.wait_for_url("**/ui/runs")
            page.click(f"#runs a:text('{run_id}')")
            page.wait_for_selector("#health")
            assert page.inner_text("#run-id") == run_id
            assert page.locator("figure.chart svg").count() == 4
            page.screenshot(path=str(tmp_path / "run.png"), full_page=True)
            assert (tmp_path / "run.png").stat().st_size > 10_000

            with page.expect_navigation():
                page.click("#run-flagged")
            assert page.locator("#decisions tbody tr").count() == 1
            assert page.inner_text("#decisions tbody tr .flag") == "flagged"
            assert page.input_value("#f-flagged") == "true"

            page.goto(f"{url}/ui/decisions")
            page.fill("input[name=run_id]", run_id)
            page.select_option("select[name=status]", "incorrect")
            with page.expect_navigation():
                page.click("#apply")
            statuses = page.locator("#decisions tbody tr td:nth-child(5)").all_inner_texts()
            assert statuses and set(statuses) == {"incorrect"}

            # The answer's text and the flag narrow the list, and stay in the form.
            page.select_option("select[name=status]", "")
            page.fill("#f-q", "3")
            page.select_option("#f-flagged", "false")
            with page.expect_navigation():
                page.click("#apply")
            extracted = page.locator("#decisions tbody td.extracted").all_inner_texts()
            assert extracted == ["3"] * 4
            assert page.input_value("#f-q") == "3" and page.input_value("#f-flagged") == "false"
            assert page.input_value("#f-run_id") == run_id

            # A hostile filter value stays text in its field; it matches nothing, runs nothing.
            attack = '"><script>alert(1)</script><img src=x onerror=alert(2)>'
            page.fill("#f-q", attack)
            with page.expect_navigation():
                page.click("#apply")
            assert page.locator("#decisions tbody tr").count() == 0
            assert page.input_value("#f-q") == attack
            assert page.locator("main script, main img").count() == 0

            # A value the list cannot take is named on the page, the rest of the form kept.
            answer = page.goto(f"{url}/ui/decisions?run_id=r&step_from=x&min_duration_ms=-1")
            assert answer is not None and answer.status == 422
            named = [
                item.get_attribute("data-field") for item in page.locator("#filter-errors li").all()
            ]
            assert named == ["step_from", "min_duration_ms"]
            assert page.input_value("#f-run_id") == "r"

            page.goto(f"{url}/ui/decisions?run_id={run_id}&flagged=false")
            page.locator("#decisions tbody tr a").first.click()
            page.wait_for_selector("#completion")
            shown = page.inner_text("body")
            assert "so the answer is" in page.inner_text("#completion")
            assert page.locator("#completion mark").count() == 1
            # The hostile strings are on the page as text, and none of them ran.
            assert any(
                attack in shown
                for attack in (
                    "<script>alert('xss')</script>",
                    '"><img src=x onerror=alert(1)>',
                    "</pre><style>body{display:none}</style>",
                    "{{ 7*7 }} {% raw %}",
                    "javascript:alert(1)",
                )
            )
            assert page.locator("main script, main img, main style").count() == 0
            assert page.is_visible("#completion")

            assert page.inner_text("#current-label") == "Not labelled."
            page.fill("input[name=note]", "checked <b>by hand</b>")
            page.click("#label-incorrect")
            # (has-text matches a substring in any case: "Labelled" would match "Not labelled."
            # before the labelled page has loaded.)
            page.wait_for_selector("#current-label:has-text('incorrect')")
            assert "incorrect" in page.inner_text("#current-label")
            assert "checked <b>by hand</b>" in page.inner_text("#current-label")
        finally:
            browser.close()
    assert dialogs == []
