"""Every SQLite connection the service opens is set up for several writer processes."""

from __future__ import annotations

from pathlib import Path

from service.db.session import WAL_CHECKPOINT_PAGES, make_engine


def test_a_connection_is_in_wal_mode_with_a_larger_checkpoint_interval(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'log.db'}")
    try:
        with engine.connect() as connection:

            def pragma(name: str) -> object:
                return connection.exec_driver_sql(f"PRAGMA {name}").scalar()

            assert pragma("journal_mode") == "wal"
            assert pragma("synchronous") == 1  # NORMAL
            assert pragma("busy_timeout") == 30000
            assert pragma("foreign_keys") == 1
            assert pragma("wal_autocheckpoint") == WAL_CHECKPOINT_PAGES > 1000
    finally:
        engine.dispose()
