"""Engines and sessions. One engine per process; SQLite is tuned for several writer processes."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from service.settings import Settings, get_settings

_engines: dict[tuple[int, str], Engine] = {}
WAL_CHECKPOINT_PAGES = 10_000


def json_text(value: Any) -> str:
    """JSON columns' text on SQLite, written by orjson (a tenth of ``json.dumps``'s time; seven
    values per decision); what orjson refuses (integers beyond 64 bits, lone surrogates) is
    written by ``json`` as before."""
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return json.dumps(value)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # WAL lets the API read while pool processes write; busy_timeout makes writers queue
    # instead of failing with "database is locked".
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA foreign_keys=ON")
    # A checkpoint copies every page in the WAL back to the database file, once per page however
    # often it was rewritten: at 10,000 pages (40 MB) instead of SQLite's 1,000, the index pages
    # that every chunk touches are copied back a tenth as often. A fifth less of a chunk's write
    # (README, "Measured").
    cursor.execute(f"PRAGMA wal_autocheckpoint={WAL_CHECKPOINT_PAGES}")
    cursor.close()


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        path = url.removeprefix("sqlite:///")
        if path and path != ":memory:":
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": 30},
            json_serializer=json_text,
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)


# Settings.sqlalchemy_url resolves data_dir on disk (a relative one against the working
# directory) each time it is read: some 13 us, twice per chunk. It depends on the three parts
# of the key only, so it is worked out once for each: a Settings made anew or changed, or another
# working directory, still gets its own URL.
_urls: dict[tuple[str | None, Path, str], str] = {}


def _url_of(settings: Settings) -> str:
    # Only a relative data_dir in use depends on the working directory, and only it asks for it.
    relative = not settings.database_url and not settings.data_dir.is_absolute()
    key = (settings.database_url, settings.data_dir, os.getcwd() if relative else "")
    url = _urls.get(key)
    if url is None:
        url = _urls[key] = settings.sqlalchemy_url
    return url


def get_engine(settings: Settings | None = None) -> Engine:
    """The engine of this process; a forked child gets its own, never its parent's sockets."""
    url = _url_of(settings or get_settings())
    key = (os.getpid(), url)
    engine = _engines.get(key)
    if engine is None:
        engine = make_engine(url)
        _engines[key] = engine
    return engine


def dispose_engines() -> None:
    for (pid, _url), engine in list(_engines.items()):
        if pid == os.getpid():
            engine.dispose()
    _engines.clear()
    _factories.clear()


_factories: dict[Engine, sessionmaker[Session]] = {}


def session_factory(settings: Settings | None = None) -> sessionmaker[Session]:
    # One per engine: a sessionmaker makes a Session subclass, and setting up its events took
    # a fifth of a millisecond per unit of work (two per chunk).
    engine = get_engine(settings)
    factory = _factories.get(engine)
    if factory is None:
        factory = _factories[engine] = sessionmaker(engine, expire_on_commit=False)
    return factory


@contextmanager
def session_scope(settings: Settings | None = None) -> Iterator[Session]:
    """A unit of work: commits once at the end, rolls back on any error."""
    session = session_factory(settings)()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


@contextmanager
def read_scope(settings: Settings | None = None) -> Iterator[Session]:
    """A session for reads only, outside any transaction (autocommit): on Postgres that saves
    the round trips of BEGIN and COMMIT around them; each read sees what is committed."""
    session = session_factory(settings)()
    try:
        session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})
        yield session
    finally:
        session.close()
