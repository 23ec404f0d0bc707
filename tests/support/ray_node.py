"""`ray start ...` for the two-node test, keeping 127.0.0.1 as the node's address.

Ray replaces a loopback `--node-ip-address` with the machine's network address
(`ray._private.services.resolve_ip_for_localhost`) unless multi-node clusters are switched off, which a
worker node refuses. Here the address stays what the test passed, so every Ray server of the test binds
and advertises 127.0.0.1 only. Test support, not part of the package.
"""

import sys

import ray._private.services as services
from ray.scripts.scripts import main

services.resolve_ip_for_localhost = lambda host: host

if __name__ == "__main__":
    sys.exit(main())
