"""``todos.agents.mcp.client_config``: the configuration shown when an endpoint is vended."""

from __future__ import annotations

import pytest

from todos.agents.mcp import client_config, mcp_url


@pytest.mark.parametrize(
    "base", ["https://board.example.com", "https://board.example.com/", " https://board.example.com "]
)
def test_client_config_is_the_common_mcp_servers_shape(base):
    assert client_config(base, "brd_secret") == {
        "mcpServers": {
            "board": {
                "type": "http",
                "url": "https://board.example.com/mcp/",
                "headers": {"Authorization": "Bearer brd_secret"},
            }
        }
    }


def test_the_server_key_and_a_path_prefix_are_kept():
    config = client_config("http://127.0.0.1:8000/board", "t", name="board-staging")
    assert config["mcpServers"]["board-staging"]["url"] == "http://127.0.0.1:8000/board/mcp/"
    assert mcp_url("http://localhost:8000") == "http://localhost:8000/mcp/"


@pytest.mark.parametrize(
    ("base", "token"), [("", "t"), ("   ", "t"), ("https://b.example", ""), ("https://b.example", "  ")]
)
def test_a_config_needs_a_url_and_a_token(base, token):
    with pytest.raises(ValueError):
        client_config(base, token)
