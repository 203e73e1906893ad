"""A reference trainer that survives spot: the shape a team's own training loop should take.

- On start it resumes from the newest complete checkpoint (a file whose checksum holds); a torn or
  half-written one (the temporary file of a write cut off) is skipped.
- It checkpoints every `--checkpoint-every-seconds` and when told to stop. A checkpoint is written
  atomically: a temporary file in the same directory, flushed and fsync'd, renamed over, the directory
  fsync'd: a reader sees the old checkpoint or the new one, never part of one.
- On SIGTERM (a spot notice, a drain, a preemption) it finishes the step it is in, writes a checkpoint
  and exits 143, so the Job counts a disruption, not a success.
- Its work is deterministic: an interrupted run, resumed, ends exactly where an uninterrupted one does.

The "model" is a line fitted by stochastic gradient descent, in plain Python: replace `train_step` and
the state with the framework's (torch.save of the model and optimizer state, with the same write
discipline). Run: python train.py --checkpoint-dir DIR --steps N
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import sys
import time
from pathlib import Path

KEPT = 3  # checkpoints kept: the newest may be the one a cut-off write left torn


def train_step(state: dict, step: int) -> dict:
    """One SGD step on sample `step % 1000` of y = 3x + 1 (with deterministic noise)."""
    x = (step % 1000) / 1000
    y = 3 * x + 1 + ((step * 7919) % 13 - 6) / 1000
    w, b = state["w"], state["b"]
    error = w * x + b - y
    rate = 0.1
    return {"w": w - rate * error * x, "b": b - rate * error}


def _fsync_directory(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def write_checkpoint(directory: Path, step: int, state: dict) -> Path:
    payload = json.dumps({"step": step, "state": state}, sort_keys=True)
    document = json.dumps({"payload": payload, "sha256": hashlib.sha256(payload.encode()).hexdigest()})
    final = directory / f"checkpoint-{step:012d}.json"
    temporary = directory / f".{final.name}.{os.getpid()}.tmp"
    with temporary.open("w") as handle:
        handle.write(document)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, final)
    _fsync_directory(directory)
    for old in sorted(directory.glob("checkpoint-*.json"))[:-KEPT]:
        old.unlink()
    return final


def latest_checkpoint(directory: Path) -> tuple[int, dict] | None:
    """(step, state) of the newest checkpoint whose checksum holds."""
    for path in sorted(directory.glob("checkpoint-*.json"), reverse=True):
        try:
            document = json.loads(path.read_text())
            payload = document["payload"]
            if hashlib.sha256(payload.encode()).hexdigest() != document["sha256"]:
                continue
            found = json.loads(payload)
            return int(found["step"]), dict(found["state"])
        except (ValueError, KeyError, TypeError, OSError):
            continue
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint-dir", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--checkpoint-every-seconds", type=float, default=900)
    parser.add_argument(
        "--flush-seconds",
        type=float,
        default=60,
        help="what the pod's grace period leaves for the last step and checkpoint after SIGTERM",
    )
    parser.add_argument("--step-seconds", type=float, default=0.0, help="simulated work per step (tests)")
    args = parser.parse_args(argv)
    args.checkpoint_dir.mkdir(parents=True, exist_ok=True)
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(time.monotonic()))
    resumed = latest_checkpoint(args.checkpoint_dir)
    step, state = resumed if resumed else (0, {"w": 0.0, "b": 0.0})
    print(f"{'resuming at step ' + str(step) if resumed else 'starting'} of {args.steps}", flush=True)
    last_write = time.monotonic()
    while step < args.steps:
        state = train_step(state, step)
        step += 1
        if args.step_seconds:
            time.sleep(args.step_seconds)
        if stopping:
            write_checkpoint(args.checkpoint_dir, step, state)
            took = time.monotonic() - stopping[0]
            print(
                f"stopped at step {step}: checkpoint written {took:.1f} s after SIGTERM; exiting for a replacement "
                "pod to resume",
                flush=True,
            )
            if took > args.flush_seconds:  # the next notice may kill it mid-write: shorter steps, or a bigger budget
                print(f"warning: that took longer than --flush-seconds {args.flush_seconds:g}", file=sys.stderr)
            return 143
        if time.monotonic() - last_write >= args.checkpoint_every_seconds:
            write_checkpoint(args.checkpoint_dir, step, state)
            last_write = time.monotonic()
    write_checkpoint(args.checkpoint_dir, step, state)
    print(json.dumps({"done": step, **state}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
