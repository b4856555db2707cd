"""The widget as a new user meets it (issue 33, item 5): a failed constructor says one thing,
integer metadata comes back as int64 (as ``Client.metadata`` gives it), a chosen port is
used, and an unknown embedding is refused."""

from __future__ import annotations

import socket
import subprocess
import sys

import httpx
import numpy as np
import pytest
import traitlets

import projector.script
from projector import Projector, show

WIDGET = "from projector import Projector; import numpy as np\n"


def _vectors(n: int = 20) -> np.ndarray:
    return np.random.default_rng(0).normal(size=(n, 4)).astype("f4")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("call", [
    "Projector(np.ones((4, 3)), ['a', 'b'])",  # data that cannot be used
    "Projector(np.ones((4, 3)), colour='x')",  # an unknown argument
])
def test_a_failed_constructor_says_its_error_alone(call):
    done = subprocess.run([sys.executable, "-c", WIDGET + f"try:\n    {call}\nexcept "
                           "(TypeError, ValueError) as e:\n    print('refused:', e)\n"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "refused:" in done.stdout
    assert "Exception ignored" not in done.stderr and "_server" not in done.stderr, done.stderr


def test_selected_frame_gives_whole_numbers_as_int64():
    widget = Projector(_vectors(), {"size": list(range(20)), "weight": [i / 2 for i in range(20)],
                                    "group": ["a", "b"] * 10})
    try:
        widget.selection = [3, 4]
        frame = widget.selected_frame()
        assert frame["size"].dtype == np.int64 and frame["size"].tolist() == [3, 4]
        assert frame["weight"].dtype == np.float64 and frame["weight"].tolist() == [1.5, 2.0]
        assert frame["group"].tolist() == ["b", "a"]
    finally:
        widget.close()


def test_projector_and_show_listen_on_the_port_asked_for():
    port = _free_port()
    widget = Projector(_vectors(), port=port)
    try:
        assert widget.port == port and widget.url == f"http://127.0.0.1:{port}/"
        assert httpx.get(f"{widget.url}api/runs").status_code == 200
    finally:
        widget.close()
    other = _free_port()
    url = show(_vectors(), port=other)
    projector.script._running.pop().stop()
    assert url.startswith(f"http://127.0.0.1:{other}/")
    with pytest.raises(ValueError, match=r"0\.\.65535"):
        Projector(_vectors(), port=70000)


def test_an_unknown_embedding_is_refused():
    widget = Projector(_vectors())
    try:
        with pytest.raises(traitlets.TraitError, match="nope"):
            widget.embedding = "nope"
        with pytest.raises(traitlets.TraitError, match="nowhere"):
            widget.run = "nowhere"
        widget.run, widget.embedding = "memory", "embedding"
        assert widget.selected_frame().empty
    finally:
        widget.close()
