"""One Locust worker's read path, measured: runs a whole plan (plan.json) in this process through
the shipped locustfile's own `run_share` (the same sends, reads and stamps as a worker under
Locust, gevent's monkey-patched sockets included) and prints, as one JSON line, the process's
CPU seconds and the wall seconds the run took, and the records file it wrote. Run with the
Locust virtualenv's python by tests/e2e/bench/locust.mjs.

Usage: python locust-worker.py PLAN.json RECORDS_DIR   (STROBE_API_KEY: sent as a Bearer header)
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "cli", "locust"))

import locustfile  # noqa: E402  (imports Locust, which patches the sockets as in a worker)


def main():
    plan_path, records_dir = sys.argv[1], sys.argv[2]
    with open(plan_path, encoding="utf-8") as file:
        plan = json.load(file)
    cpu_before = time.process_time()
    wall_before = time.perf_counter()
    path = locustfile.run_share(plan, 0, 1, records_dir, os.environ.get("STROBE_API_KEY"))
    print(
        json.dumps(
            {
                "cpu_s": time.process_time() - cpu_before,
                "wall_s": time.perf_counter() - wall_before,
                "records": path,
            }
        )
    )


if __name__ == "__main__":
    main()
