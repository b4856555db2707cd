"""A layer's activations on a fixed probe batch, logged every N training steps: the model's
representation as it learns, for the projector to follow while it trains.

    probe = projector.torch.ProbeLogger(model, "encoder.2", x_probe, "runs/exp1", every=100,
                                        metadata=y_probe.tolist())
    for step, (x, y) in enumerate(loader):
        ...  # a training step
        probe.step(step)

The layer's output is caught by a forward hook attached only while the probe batch runs (every
module in eval mode, without gradients, then each put back as it was), so training steps pay
nothing. Each recording is one ``projector.add_embedding`` call (``formats/writer.py``): the
files PyTorch's ``SummaryWriter.add_embedding`` writes, whole, the config last. Importing
``projector`` imports no torch; this module does, being asked for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from projector_core.formats.writer import add_embedding

__all__ = ["ProbeLogger"]


class ProbeLogger:
    """Records ``layer``'s output for ``probe_batch`` every ``every`` steps into ``logdir``.

    ``layer``: a submodule of ``model`` or its dotted name (``model.get_submodule``); its output
    (the first element of a tuple output) is flattened to one row per probe example.
    ``probe_batch``: what ``model`` is called with: a tensor, a tuple of positional arguments or
    a dict of keyword arguments (tensors are moved to the model's device). ``metadata`` and
    ``metadata_header``: one label (or row of cells) per probe example, as in
    ``add_embedding``; ``tag`` defaults to the layer's name; ``format``: ``add_embedding``'s
    (``"npy"`` for large probes in a run only this projector reads: no text to write).
    """

    def __init__(self, model: torch.nn.Module, layer: str | torch.nn.Module, probe_batch: Any,
                 logdir: str | Path, every: int = 100, metadata: Sequence[Any] | None = None,
                 *, metadata_header: Sequence[Any] | None = None, tag: str | None = None,
                 format: str = "tsv") -> None:
        if every < 1:
            raise ValueError(f"every must be a positive number of steps, got {every}")
        self.model = model
        self.layer = model.get_submodule(layer) if isinstance(layer, str) else layer
        names = {id(module): name for name, module in model.named_modules()}
        if id(self.layer) not in names:
            raise ValueError(f"{type(self.layer).__name__} is not a layer of this model")
        self.tag = tag or names[id(self.layer)] or type(model).__name__
        self.probe_batch = probe_batch
        self.logdir = Path(logdir)
        self.every = every
        self.metadata = metadata
        self.metadata_header = metadata_header
        self.format = format
        self.logged: list[int] = []  # the steps recorded so far
        self._next_step = 0

    def step(self, global_step: int | None = None) -> bool:
        """Call once per training step (``global_step``: its number, else counted from 0); the
        probe is recorded at steps 0, ``every``, 2 x ``every``... Whether it was now."""
        step = self._next_step if global_step is None else int(global_step)
        self._next_step = step + 1
        if step % self.every:
            return False
        self.log(step)
        return True

    def log(self, global_step: int) -> np.ndarray:
        """Record the probe's activations now, as step ``global_step``; they are returned."""
        activations = self.activations()
        add_embedding(self.logdir, activations, metadata=self.metadata, global_step=global_step,
                      tag=self.tag, metadata_header=self.metadata_header, format=self.format)
        self.logged.append(global_step)
        return activations

    def activations(self) -> np.ndarray:
        """The layer's output for the probe batch, float32 [examples, features]."""
        caught: list[Any] = []
        hook = self.layer.register_forward_hook(lambda module, inputs, output: caught.append(output))
        modes = {module: module.training for module in self.model.modules()}
        try:
            self.model.eval()
            with torch.no_grad():
                self._call_model()
        finally:
            hook.remove()
            for module, training in modes.items():
                module.training = training
        if not caught:
            raise RuntimeError(f"layer {self.tag!r} was not called when the model ran on the "
                               "probe batch")
        output = caught[0]
        if isinstance(output, (tuple, list)):
            output = output[0]
        return output.detach().float().reshape(output.shape[0], -1).cpu().numpy()

    def _call_model(self) -> None:
        parameter = next(self.model.parameters(), None)
        device = parameter.device if parameter is not None else None

        def moved(value: Any) -> Any:
            return value.to(device) if isinstance(value, torch.Tensor) and device else value

        batch = self.probe_batch
        if isinstance(batch, Mapping):
            self.model(**{key: moved(value) for key, value in batch.items()})
        elif isinstance(batch, (tuple, list)):
            self.model(*(moved(value) for value in batch))
        else:
            self.model(moved(batch))
