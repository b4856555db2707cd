"""``projector.torch.ProbeLogger`` in a small training loop, followed live by the server, and
``projector.add_embedding`` as the one public writer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.event_stream import EventStream

torch = pytest.importorskip("torch")


def _digits() -> tuple[torch.Tensor, torch.Tensor]:
    from sklearn.datasets import load_digits

    digits = load_digits()
    return (torch.tensor(digits.data / 16.0, dtype=torch.float32),
            torch.tensor(digits.target, dtype=torch.long))


@pytest.mark.slow
def test_a_layer_is_logged_every_n_steps_while_the_server_follows(tmp_path: Path, serve):
    import projector
    from projector.torch import ProbeLogger

    torch.manual_seed(0)
    x, y = _digits()
    model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Dropout(0.2),
                                torch.nn.Linear(32, 10))
    model[2].eval()  # a submodule the user set apart stays as it was
    optimiser = torch.optim.SGD(model.parameters(), lr=0.5)
    logdir = tmp_path / "logs"
    logdir.mkdir()
    url = serve(logdir)
    probe = projector.torch.ProbeLogger(model, "1", x[:150], logdir / "mlp", every=10,
                                        metadata=[str(int(v)) for v in y[:150]])
    assert isinstance(probe, ProbeLogger) and probe.tag == "1"
    with EventStream(url) as stream:
        for step in range(25):
            batch = torch.randint(0, len(x), (64,))
            loss = torch.nn.functional.cross_entropy(model(x[batch]), y[batch])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            probe.step(step)
        final = probe.log(25)  # once more at the end, whatever the step
        assert probe.logged == [0, 10, 20, 25]
        assert model.training and not model[2].training  # each module's mode put back
        assert not model[1]._forward_hooks  # the hook is gone between probes
        for step in probe.logged:
            ready = stream.wait_for(lambda m, step=step: m.event == "step" and
                                    m.data["step"] == step and m.data["state"] == "ready")
            assert (ready.data["run"], ready.data["tag"]) == ("mlp", "1")
            assert (ready.data["rows"], ready.data["dims"]) == (150, 32)
    from projector_core.data.catalog import Catalog

    catalog = Catalog(logdir, cache_dir=tmp_path / "cache")
    catalog.refresh()
    last = catalog.embedding("mlp", "1:00025")
    assert last.metadata().column("label")[:3] == [str(int(v)) for v in y[:3]]
    np.testing.assert_array_equal(last.vectors(), final)
    assert not np.allclose(catalog.embedding("mlp", "1:00000").vectors(), last.vectors())


def test_the_probe_refuses_a_layer_of_another_model(tmp_path: Path):
    from projector.torch import ProbeLogger

    model = torch.nn.Sequential(torch.nn.Linear(4, 3))
    with pytest.raises(ValueError, match="not a layer of this model"):
        ProbeLogger(model, torch.nn.Linear(4, 3), torch.zeros(2, 4), tmp_path)
    with pytest.raises(ValueError, match="every"):
        ProbeLogger(model, "0", torch.zeros(2, 4), tmp_path, every=0)


def test_importing_projector_and_its_writer_imports_no_torch():
    script = ("import sys, projector; projector.add_embedding; "
              "assert 'torch' not in sys.modules, 'torch imported'")
    subprocess.run([sys.executable, "-c", script], check=True)
