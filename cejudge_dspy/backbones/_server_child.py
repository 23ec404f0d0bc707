"""The child process that runs llama.cpp's own server (`llama-server`, from the prebuilt xllamacpp wheel).

Started by `_local_server.LocalServer` as `python <this file> '<config JSON>'`: run by path, so it imports
neither DSPy nor this package, only xllamacpp. It binds 127.0.0.1 on the port the OS picks, prints one
JSON line with the address it listens on (or the error that stopped it), and serves until SIGTERM, or until
its parent is gone (a parent killed outright leaves no orphaned model in memory). It ignores SIGINT: a
Ctrl-C in the terminal is the parent's to handle, which then stops this server itself.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading


def _params(config: dict) -> object:
    import xllamacpp

    p = xllamacpp.CommonParams()
    p.model.path = config["model"]
    p.model_alias = {config["alias"]}
    p.hostnames = ["127.0.0.1"]
    p.port = config["port"]  # 0: the OS picks a free port; the address is reported on stdout
    p.n_parallel = config["slots"]
    p.n_ctx = config["n_ctx"]
    p.kv_unified = config["kv_unified"]
    p.cache_ram_mib = config["cache_ram_mib"]
    p.n_cache_reuse = config["n_cache_reuse"]
    p.cpuparams.n_threads = config["threads"]
    p.cpuparams_batch.n_threads = config["threads"]
    poll = 50 if config["spin"] else 0  # llama.cpp's default busy-wait level, or none
    p.cpuparams.poll = poll
    p.cpuparams_batch.poll = poll
    p.n_threads_http = max(2, config["slots"] + 1)
    p.sampling.penalty_repeat = config["repeat_penalty"]
    p.use_jinja = True  # the chat template the GGUF carries
    p.endpoint_slots = False
    p.endpoint_metrics = config["metrics"]
    if config["states"]:  # llama.cpp joins this and a file name as strings: it must end with a separator
        p.slot_save_path = os.path.join(config["states"], "")
    return p


def main() -> int:
    config = json.loads(sys.argv[1])
    parent = os.getppid()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        import xllamacpp

        server = xllamacpp.Server(_params(config))
        address = server.listening_address
    except Exception as exc:  # reported to the parent in one line, which says it as a BackboneError
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}), flush=True)
        return 1
    print(json.dumps({"address": address}), flush=True)
    while not stop.wait(1.0):
        if os.getppid() != parent:  # the parent died without stopping us
            break
    # The server's threads are llama.cpp's; leaving without tearing them down is safe and immediate.
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
