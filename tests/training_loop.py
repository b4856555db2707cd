"""A real PyTorch training loop for the tests that watch one: a small MLP learns the digits
(scikit-learn's 8 x 8 images) and writes its hidden layer's activations on a fixed probe batch
with ``SummaryWriter.add_embedding(..., global_step=)`` every ``--every`` iterations, as a
user's training script does.

    python -m tests.training_loop LOGDIR --steps 6 --every 20

After each step it prints ``wrote STEP`` and, when ``--paced``, waits for a line on stdin
before training on: the test says when it has seen the step, so no step is written while the
page still shows the one before and the test waits on what happened, never on time.
"""

from __future__ import annotations

import argparse
import sys

import torch
from sklearn.datasets import load_digits
from torch import nn
from torch.utils.tensorboard import SummaryWriter

PROBE = 300  # the points shown: the same digits at every step


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("logdir")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--every", type=int, default=20)
    parser.add_argument("--paced", action="store_true")
    args = parser.parse_args()
    torch.manual_seed(0)
    images, labels = load_digits(return_X_y=True)
    x = torch.tensor(images / 16.0, dtype=torch.float32)
    y = torch.tensor(labels)
    hidden = nn.Sequential(nn.Linear(64, 32), nn.ReLU())
    model = nn.Sequential(hidden, nn.Linear(32, 10))
    optimiser = torch.optim.SGD(model.parameters(), lr=0.1)
    writer = SummaryWriter(args.logdir)
    names = [str(int(v)) for v in y[:PROBE]]
    iteration = 0
    for step in range(args.steps):
        if step:
            for _ in range(args.every):
                batch = torch.randint(0, len(x), (64,))
                optimiser.zero_grad()
                nn.functional.cross_entropy(model(x[batch]), y[batch]).backward()
                optimiser.step()
                iteration += 1
        with torch.no_grad():
            writer.add_embedding(hidden(x[:PROBE]), metadata=names, global_step=iteration)
        writer.flush()
        print(f"wrote {iteration}", flush=True)
        if args.paced and step + 1 < args.steps and not sys.stdin.readline():
            break
    writer.close()


if __name__ == "__main__":
    main()
