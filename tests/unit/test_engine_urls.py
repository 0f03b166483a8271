"""One engine per database: the URL a Settings names is worked out once, yet a Settings made
anew, changed, or read from another working directory still gets the engine of its own URL."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.db.session import get_engine
from service.settings import Settings


def _settings(data_dir: Path) -> Settings:
    return Settings(data_dir=data_dir, database_url=None)


def _url(settings: Settings) -> str:
    return get_engine(settings).url.render_as_string(hide_password=False)


def test_each_data_dir_gets_its_own_engine(tmp_path: Path) -> None:
    first, second = _settings(tmp_path / "a"), _settings(tmp_path / "b")
    assert get_engine(first) is not get_engine(second)
    assert get_engine(first) is get_engine(_settings(tmp_path / "a"))
    expected = f"sqlite:///{(tmp_path / 'b' / 'rlvr.db').resolve()}"
    assert _url(second) == second.sqlalchemy_url == expected


def test_a_changed_settings_gets_the_engine_of_its_new_url(tmp_path: Path) -> None:
    settings = _settings(tmp_path / "before")
    before = get_engine(settings)
    settings.data_dir = tmp_path / "after"
    assert get_engine(settings) is not before
    assert _url(settings) == f"sqlite:///{(tmp_path / 'after' / 'rlvr.db').resolve()}"
    settings.database_url = "postgresql+psycopg://rlvr@127.0.0.1:5432/elsewhere"
    assert _url(settings) == "postgresql+psycopg://rlvr@127.0.0.1:5432/elsewhere"


def test_a_relative_data_dir_is_resolved_where_the_process_stands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = _settings(Path("data"))
    for place in ("one", "two"):
        (tmp_path / place).mkdir()
        monkeypatch.chdir(tmp_path / place)
        assert _url(settings) == f"sqlite:///{(tmp_path / place / 'data' / 'rlvr.db').resolve()}"
