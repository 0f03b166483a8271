"""Rendering a dashboard page: the templates, and the security headers every page carries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from service.ui.auth import form_token

HERE = Path(__file__).parent
templates = Jinja2Templates(directory=HERE / "templates")

SECURITY_HEADERS = {
    # No script, no plugin, no framing; styles and images only from this service.
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self' data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def page(request: Request, name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    context.setdefault("form_token", form_token(request))
    response = templates.TemplateResponse(request, name, context, status_code=status_code)
    response.headers.update(SECURITY_HEADERS)
    return response
