"""Runs a test body on several CPU processes joined by a gloo process group
(torch.multiprocessing.spawn): the CPU tests of dash.distributed and of the context-parallel
training example."""
import os
import socket
import sys

import torch.distributed as dist
import torch.multiprocessing as mp


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _entry(rank, world, port, body, args):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        body(rank, world, *args)
        dist.barrier()
    finally:
        dist.destroy_process_group()
    # Passed: leave without the interpreter's teardown, where gloo's threads intermittently
    # abort the process ("terminate called without an active exception") after the test.
    sys.stderr.flush()
    os._exit(0)


def run_on_gloo(body, world: int, *args) -> None:
    """body(rank, world, *args) on `world` processes (body and args picklable: module-level
    functions); an exception or failed assertion in any of them fails the caller."""
    mp.spawn(_entry, args=(world, free_port(), body, args), nprocs=world, join=True)
