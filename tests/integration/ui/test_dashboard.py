"""The dashboard over HTTP: sign-in, pages, escaping of hostile model text, headers."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from service.auth.dependencies import Authenticator
from service.auth.service import AuthService
from service.db.session import session_scope
from service.settings import Settings
from tests.support import ADMIN_KEY

from .conftest import DECISION_LINK, HOSTILE


@pytest.fixture
def browser(api: TestClient) -> TestClient:
    """A client of the same app with no key: it signs in like a person would."""
    return TestClient(api.app, follow_redirects=False)


def signed_in(client: TestClient, key: str = ADMIN_KEY) -> TestClient:
    response = client.post("/ui/login", data={"key": key, "next": "/ui/runs"})
    assert response.status_code == 303, response.text
    return client


def test_pages_send_the_browser_to_sign_in(browser: TestClient) -> None:
    response = browser.get("/ui/decisions?status=incorrect")
    assert response.status_code == 303
    assert response.headers["location"].startswith("/ui/login?next=%2Fui%2Fdecisions")


def test_signing_in_sets_a_cookie_scripts_and_other_sites_cannot_use(browser: TestClient) -> None:
    response = browser.post("/ui/login", data={"key": ADMIN_KEY, "next": "/ui/runs"})
    assert response.status_code == 303 and response.headers["location"] == "/ui/runs"
    cookie = response.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and "path=/ui" in cookie


def test_a_bad_key_or_a_key_without_audit_read_is_refused(
    browser: TestClient, ui_settings: Settings
) -> None:
    wrong = browser.post("/ui/login", data={"key": "not-a-key-of-anyone-at-all"})
    assert wrong.status_code == 401 and "set-cookie" not in wrong.headers
    with session_scope(ui_settings) as session:
        _, writer = AuthService(session).create_key("writers", ["rewards:write"])
    refused = browser.post("/ui/login", data={"key": writer})
    assert refused.status_code == 401 and "audit:read" in refused.text


def test_sign_in_never_redirects_to_another_site(browser: TestClient) -> None:
    for target in ("https://evil.example/", "//evil.example/ui/", "/ui//evil.example"):
        response = browser.post("/ui/login", data={"key": ADMIN_KEY, "next": target})
        assert response.headers["location"] == "/ui/runs"


def test_every_page_forbids_scripts(browser: TestClient, hostile_run: str) -> None:
    signed_in(browser)
    for path in (
        "/ui/runs",
        f"/ui/runs/{quote(hostile_run, safe='')}",
        "/ui/decisions",
        "/ui/login",
    ):
        response = browser.get(path)
        assert response.status_code == 200, path
        policy = response.headers["content-security-policy"]
        assert "default-src 'none'" in policy and "script-src" not in policy
        assert response.headers["x-content-type-options"] == "nosniff"
        assert "<script" not in response.text.lower()


def test_hostile_model_text_is_shown_as_text(browser: TestClient, hostile_run: str) -> None:
    signed_in(browser)
    listing = browser.get("/ui/decisions", params={"run_id": hostile_run})
    assert listing.status_code == 200
    assert "<b>" not in listing.text and "&lt;b&gt;" in listing.text
    links = DECISION_LINK.findall(listing.text)
    assert len(links) == 3 * len(HOSTILE)
    pages = []
    for decision_id in links[: len(HOSTILE)]:
        page = browser.get(f"/ui/decisions/{decision_id}").text
        body = page.split("</head>", 1)[1]
        for attack in HOSTILE:
            if attack in body:
                # Only text that carries no markup at all may appear unescaped.
                assert "<" not in attack and '"' not in attack, attack
        assert "<img" not in body and "<style" not in body and "<script" not in body
        assert "<mark>" in body  # the extracted answer is highlighted
        pages.append(body)
    shown = "".join(pages)
    assert "&lt;script&gt;alert(&#39;xss&#39;)&lt;/script&gt;" in shown
    assert "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;" in shown
    assert "&lt;/pre&gt;&lt;style&gt;" in shown


def test_the_run_page_shows_charts_and_health(browser: TestClient, hostile_run: str) -> None:
    signed_in(browser)
    page = browser.get(f"/ui/runs/{quote(hostile_run, safe='')}").text
    assert page.count("<svg") == 4 and "<polyline" in page and "<rect" in page
    assert 'id="health"' in page
    assert "&lt;b&gt;" in page and "<b>" not in page


def test_signing_out_needs_the_pages_own_token(browser: TestClient) -> None:
    signed_in(browser)
    forged = browser.post("/ui/logout", data={"token": "guessed"})
    assert forged.status_code == 403
    page = browser.get("/ui/runs").text
    token = page.split('name="token" value="', 1)[1].split('"', 1)[0]
    assert browser.post("/ui/logout", data={"token": token}).status_code == 303


def test_labelling_from_the_page_needs_its_token(browser: TestClient, hostile_run: str) -> None:
    signed_in(browser)
    listing = browser.get("/ui/decisions", params={"run_id": hostile_run}).text
    decision_path = DECISION_LINK.findall(listing)[0]
    page = browser.get(f"/ui/decisions/{decision_path}").text
    assert "Not labelled." in page
    forged = browser.post(
        f"/ui/decisions/{decision_path}/label", data={"verdict": "correct", "token": "x"}
    )
    assert forged.status_code == 403
    token = page.split('name="token" value="', 1)[1].split('"', 1)[0]
    done = browser.post(
        f"/ui/decisions/{decision_path}/label", data={"verdict": "correct", "token": token}
    )
    assert done.status_code == 303
    assert "Labelled <strong>correct</strong>" in browser.get(f"/ui/decisions/{decision_path}").text


def test_a_sign_in_while_the_keys_checks_back_off_shows_the_form_with_when_to_retry(
    browser: TestClient, ui_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Time stands still, so the back-off cannot lapse between the two sign-ins.
    frozen = Authenticator(ui_settings, clock=lambda: 1000.0)
    monkeypatch.setattr(browser.app.state, "authenticator", frozen)  # type: ignore[attr-defined]
    with session_scope(ui_settings) as session:
        row, key = AuthService(session).create_key("auditors", ["audit:read"])
        key_id = row.id
    guess = f"rlvr_{key_id}_" + "x" * 43  # its id, a wrong secret
    assert browser.post("/ui/login", data={"key": guess}).status_code == 401
    # The id now backs off: the real key, never verified here yet, waits its turn too.
    waiting = browser.post("/ui/login", data={"key": key, "next": "/ui/runs"})
    assert waiting.status_code == 429 and "set-cookie" not in waiting.headers
    assert waiting.headers["content-type"].startswith("text/html")
    assert int(waiting.headers["retry-after"]) >= 1
    assert "failed lately" in waiting.text and key_id in waiting.text
