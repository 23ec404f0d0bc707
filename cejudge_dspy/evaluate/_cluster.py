"""Reaching Ray for `cejudge evaluate --ray`: importing it, connecting to (or starting) a cluster, the
environment the workers get, and the one-line errors when Ray is missing or unreachable.

Kept apart from the driver (_distributed.py), which only schedules and writes: everything here is about
where the run's actors live, not what they do. Ray is optional, so it is imported inside functions only.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from cejudge_dspy.errors import CEJudgeError, InputError

# Environment the workers need to resolve the same program and use the same caches as the driver.
FORWARDED_ENV = ("DSPY_CACHEDIR", "LITELLM_LOCAL_MODEL_COST_MAP", "HF_HOME", "HF_HUB_OFFLINE")
FORWARDED_PREFIXES = ("CEJUDGE_",)
LOCAL = "local"  # `--ray` without an address: a Ray instance of this machine, started for this run


# Where the run's actors come from and how hard their failures are retried (`cejudge evaluate --ray`):
# here, with the cluster, not with the actors (_distributed.py), so that options are made without
# importing the judging machinery.
@dataclass
class RayOptions:
    address: str = LOCAL  # "local", "auto" (RAY_ADDRESS or this machine's cluster), or host:port
    actors: int | None = None  # default: the cluster's CPUs / cpus_per_actor, at most the groups
    cpus_per_actor: float = 1.0
    max_restarts: int = 2  # per actor
    max_attempts: int = 3  # per item: worker deaths before it is recorded as an error


# How long a cluster's address may take to accept a connection. Ray's own connect retries an address where
# nothing listens for minutes; a live head node accepts at once.
CONNECT_TIMEOUT_S = 5.0
# How long stopping the run's Ray may take before its local processes are killed: `ray.shutdown()` waits on
# the cluster's processes and the driver's core worker, which a loaded machine or a wedged raylet can hold
# for a minute, and a Ctrl-C must end the run within seconds.
SHUTDOWN_TIMEOUT_S = 5.0


class RayUnavailableError(CEJudgeError):
    """Ray is not installed, or the cluster cannot be reached or has no worker left."""

    exit_code = 3


def cluster_env() -> dict[str, str]:
    """The driver's environment variables a worker needs (program and cache locations)."""
    return {k: v for k, v in os.environ.items() if k in FORWARDED_ENV or k.startswith(FORWARDED_PREFIXES)}


def check_ray_address(address: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Refuse, within `timeout` seconds and without importing Ray, a cluster address that is malformed or
    where nothing accepts a connection; "local" (start one here) and "auto" without RAY_ADDRESS pass."""
    if address == LOCAL or (address == "auto" and not os.environ.get("RAY_ADDRESS")):
        return
    target = os.environ["RAY_ADDRESS"] if address == "auto" else address
    try:
        parts = urlsplit("//" + target.split("://", 1)[-1])
        host, port = parts.hostname, parts.port
    except ValueError:
        host = port = None
    if not host or port is None:
        raise InputError(
            f"expected a cluster's HOST:PORT (or auto, or no address), got {target!r}", field="--ray"
        )
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as exc:
        reason = "no answer" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
        raise RayUnavailableError(
            f"cannot reach the Ray cluster at {target} ({reason}, waited at most {timeout:g} s); check the "
            "address, or give --ray without one to start Ray on this machine"
        ) from None


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayUnavailableError(
            "--ray needs Ray: pip install 'cejudge-dspy[ray]' (or pip install 'ray[default]')"
        ) from None
    return ray


@contextmanager
def ray_cluster(address: str, *, num_cpus: int | None = None) -> Iterator[Any]:
    """Connect to a Ray cluster for the block, or start one on this machine (`address` "local").

    A local instance binds and advertises 127.0.0.1 only (Ray would otherwise put the machine's network
    address in its place), has no dashboard and sends no usage statistics; it stops with the block. A
    cluster the driver only connected to keeps running; the run's actors end with the driver."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if address == LOCAL or _is_loopback(address):
        # Read by Ray when it is imported: keep 127.0.0.1 as this node's address instead of replacing it
        # with the LAN address (ray._private.services.resolve_ip_for_localhost).
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    check_ray_address(address)
    ray = _import_ray()
    if ray.is_initialized():  # a caller (a test, a notebook) connected already: use that
        yield ray
        return
    options: dict[str, Any] = {"log_to_driver": False, "configure_logging": False}
    if address == LOCAL:
        options.update(
            address="local",
            _node_ip_address="127.0.0.1",
            include_dashboard=False,
            num_cpus=num_cpus or os.cpu_count() or 1,
        )
    else:
        options["address"] = address
    try:
        ray.init(**options)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise RayUnavailableError(f"cannot reach the Ray cluster at {address} ({_first_line(exc)})") from None
    try:
        yield ray
    finally:
        stop_ray(ray)


def stop_ray(ray: Any, timeout: float = SHUTDOWN_TIMEOUT_S) -> None:
    """`ray.shutdown()`, bounded: past `timeout` seconds the Ray processes this driver started (a local
    instance) are killed and the driver goes on; a cluster it only connected to is left as it is."""
    node = getattr(getattr(ray, "_private", None), "worker", None)
    node = getattr(node, "_global_node", None)  # the local instance's processes, None when only connected
    # Ray's own processes, read before shutdown forgets them (Ray has no public handle on them).
    processes = [
        info.process
        for infos in (getattr(node, "all_processes", None) or {}).values()
        for info in infos
        if getattr(info, "process", None) is not None
    ]
    done = threading.Thread(target=ray.shutdown, name="ray-shutdown", daemon=True)
    done.start()
    done.join(timeout)
    if not done.is_alive():
        return
    for process in processes:
        try:
            os.kill(process.pid, signal.SIGKILL)
        except OSError:  # already gone
            pass


def _is_loopback(address: str) -> bool:
    host = address.split("://")[-1].rsplit(":", 1)[0]
    return host in ("127.0.0.1", "localhost")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else type(exc).__name__


def _cause(exc: BaseException) -> str:
    """The exception line inside a Ray error's text (`WorkerMismatchError: worker ...`), else its first."""
    lines = [ln.strip() for ln in str(exc).splitlines() if re.match(r"^\s*[\w.]*(Error|Exception): ", ln)]
    if lines:
        return lines[-1].split(": ", 1)[1]
    return _first_line(exc)
