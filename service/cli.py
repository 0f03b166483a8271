"""The ``rlvr`` command: serve, worker, migrate, keys."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from service.settings import get_settings


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from service.app import create_app
    from service.limits.connections import TimedRequestProtocol

    settings = get_settings()
    host = args.host or settings.host
    port = args.port or settings.port
    mode = "embedded (local pool)" if settings.embedded else "celery"
    logging.getLogger("service").info("serving on %s:%s, executor: %s", host, port, mode)
    uvicorn.run(
        create_app(settings),
        host=host,
        port=port,
        log_level=settings.log_level,
        access_log=args.access_log,
        # Longer than any client's idle expiry (httpx 5 s, aiohttp 15 s): at equal timeouts a
        # client reused a connection as the server closed it, and read a reset (ReadError).
        timeout_keep_alive=settings.keep_alive_s,
        # A last resort only: load is shed by the admission gate with Retry-After long before.
        limit_concurrency=settings.max_connections,
        # Connections that send a request slower than any client would are closed, so they
        # cannot hold the connections above for ever.
        http=TimedRequestProtocol.configured(
            settings.request_head_timeout_s, settings.request_body_timeout_s
        ),
    )
    return 0


def _worker(args: argparse.Namespace) -> int:
    settings = get_settings()
    if settings.broker_url is None:
        print("rlvr worker needs RLVR_BROKER_URL (a Redis URL)", file=sys.stderr)
        return 2
    from service.execution.worker import run_worker

    # One Celery consumer per queue (a child process each when several are named), so
    # sandboxed code never takes the slots cheap checks need.
    queues = [queue.strip() for queue in args.queues.split(",") if queue.strip()]
    return run_worker(queues, args.concurrency, args.hostname, settings)


def _migrate(_: argparse.Namespace) -> int:
    from service.db.migrate import upgrade

    upgrade(get_settings().sqlalchemy_url)
    return 0


def _keys(args: argparse.Namespace) -> int:
    from datetime import timedelta

    from service.auth.service import AuthService
    from service.db.base import utcnow
    from service.db.session import session_scope
    from service.errors import ServiceError

    settings = get_settings()
    try:
        with session_scope(settings) as session:
            auth = AuthService(session)
            if args.keys_command == "create":
                expires = (
                    utcnow() + timedelta(days=args.expires_days) if args.expires_days else None
                )
                scopes = [scope.strip() for scope in args.scopes.split(",") if scope.strip()]
                row, key = auth.create_key(args.tenant, scopes, args.name, expires)
                print(f"key id {row.id} for tenant {row.tenant_id}, scopes {','.join(row.scopes)}")
                print("the key (shown once; only its hash is kept):")
                print(key)
            elif args.keys_command == "list":
                for row in auth.list_keys(args.tenant):
                    state = "revoked" if row.revoked_at else "active"
                    until = row.expires_at.isoformat() if row.expires_at else "never"
                    print(
                        f"{row.id}\t{row.tenant_id}\t{','.join(row.scopes)}\t{state}\t"
                        f"expires {until}\t{row.name}"
                    )
            else:
                auth.revoke(args.key_id)
                print(f"revoked {args.key_id}")
    except ServiceError as exc:
        print(f"rlvr keys: {exc.message}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(
        level=os.environ.get("RLVR_LOG_LEVEL", "info").upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    parser = argparse.ArgumentParser(prog="rlvr", description="RLVR verifier service")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="serve the HTTP API")
    serve.add_argument("--host", default=None, help="default: RLVR_HOST or 127.0.0.1")
    serve.add_argument("--port", type=int, default=None, help="default: RLVR_PORT or 8000")
    serve.add_argument("--access-log", action="store_true", help="log every request")
    serve.set_defaults(handler=_serve)

    worker = commands.add_parser("worker", help="run a Celery worker")
    worker.add_argument(
        "--queues",
        default="cpu,sandbox,shadow,replay",
        help="cpu and sandbox serve rewards; shadow and replay (experiments, replays) share "
        "one niced background consumer",
    )
    worker.add_argument("--concurrency", type=int, default=os.cpu_count() or 1)
    worker.add_argument("--hostname", default=None)
    worker.set_defaults(handler=_worker)

    migrate = commands.add_parser("migrate", help="apply database migrations")
    migrate.set_defaults(handler=_migrate)

    keys = commands.add_parser("keys", help="create, list and revoke API keys")
    keys.set_defaults(handler=_keys)
    key_commands = keys.add_subparsers(dest="keys_command", required=True)
    create = key_commands.add_parser("create", help="a new key, printed once")
    create.add_argument("--tenant", required=True)
    create.add_argument(
        "--scopes",
        required=True,
        help="comma-separated: rewards:write, audit:read, labels:write, verifiers:admin",
    )
    create.add_argument("--name", default="")
    create.add_argument("--expires-days", type=float, default=None)
    listing = key_commands.add_parser("list", help="keys (never the keys themselves)")
    listing.add_argument("--tenant", default=None)
    revoke = key_commands.add_parser("revoke", help="stop a key from working")
    revoke.add_argument("key_id")

    args = parser.parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":
    raise SystemExit(main())
