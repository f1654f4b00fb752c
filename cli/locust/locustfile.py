"""Runs a strobe plan (plan.json, `strobe-artifact plan`) on Locust's workers and records every
stream read, for `strobe-artifact import-locust` to turn into rows with strobe's own core
(docs/locust.md). Shipped with strobe and versioned with it; nothing in it depends on the plan.

Environment:
  STROBE_PLAN     path to plan.json (required)
  STROBE_RECORDS  folder for the records, one JSON-lines file per worker process (required)
  STROBE_WORKERS  how many worker processes run the plan in all (default 1)
  STROBE_API_KEY  sent as a Bearer header when set; never written anywhere

Run one user per worker process: `-u N -r N` with N = STROBE_WORKERS. Worker w of N takes the
requests whose index i has i % N == w; a closed loop gives it the slots k with k % N == w, each
slot sending the next of its requests when free (slot k to endpoint k % len(endpoints)); a rate
load sends each of its requests at its arrival time after the worker starts.
"""

import base64
import http.client
import json
import os
import socket
import time
import urllib.parse

import gevent
from gevent.lock import Semaphore
from locust import User, events, task
from locust.exception import StopUser
from locust.runners import MasterRunner, WorkerRunner

PLAN_SCHEMA = "strobe.plan/v1"
READ_BYTES = 65536


def load_plan():
    path = os.environ.get("STROBE_PLAN")
    if not path:
        raise SystemExit("STROBE_PLAN is not set: point it at the plan.json strobe wrote")
    with open(path, encoding="utf-8") as file:
        plan = json.load(file)
    if plan.get("schema") != PLAN_SCHEMA:
        raise SystemExit(f"{path} is not a {PLAN_SCHEMA} plan (schema {plan.get('schema')!r})")
    return plan


def worker_count():
    text = os.environ.get("STROBE_WORKERS", "1")
    try:
        count = int(text)
    except ValueError:
        raise SystemExit(f"STROBE_WORKERS must be a whole number, found {text!r}") from None
    if count < 1:
        raise SystemExit("STROBE_WORKERS must be at least 1")
    return count


def send(connection, endpoint, request, headers):
    """Sends one request and reads its stream, stamping every read (perf_counter_ns)."""
    record = {
        "index": request["index"],
        "endpoint": endpoint,
        "start_ns": time.perf_counter_ns(),
        "start_wall_ns": time.time_ns(),
        "reads": [],
    }
    try:
        target = urllib.parse.urlsplit(endpoint)
        path = target.path + (f"?{target.query}" if target.query else "")
        connection.request("POST", path, body=request["body"].encode("utf-8"), headers=headers)
        response = connection.getresponse()
        record["status"] = response.status
        while True:
            data = response.read1(READ_BYTES)
            stamp = time.perf_counter_ns()
            if not data:
                break
            record["reads"].append([stamp, base64.b64encode(data).decode("ascii")])
        record["end_ns"] = time.perf_counter_ns()
    except (OSError, http.client.HTTPException) as error:
        record["end_ns"] = time.perf_counter_ns()
        record["error"] = f"{type(error).__name__}: {error}"
        connection.close()
    return record


class PlanRunner(User):
    """One per worker process: runs the worker's share of the plan once, then stops."""

    @task
    def run_share(self):
        plan = load_plan()
        workers = worker_count()
        runner = self.environment.runner
        worker = runner.worker_index if isinstance(runner, WorkerRunner) else 0
        records_dir = os.environ.get("STROBE_RECORDS")
        if not records_dir:
            raise SystemExit("STROBE_RECORDS is not set: name a folder for the records")
        os.makedirs(records_dir, exist_ok=True)
        headers = dict(plan["headers"])
        key = os.environ.get("STROBE_API_KEY")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        endpoints = plan["endpoints"]
        mine = [request for request in plan["requests"] if request["index"] % workers == worker]
        timeout = plan.get("timeout_s", 900)
        records = []
        lock = Semaphore()
        load = plan["load"]
        started_ns = time.perf_counter_ns()
        started_wall_ns = time.time_ns()

        def connection_for(endpoint):
            target = urllib.parse.urlsplit(endpoint)
            kind = http.client.HTTPSConnection if target.scheme == "https" else http.client.HTTPConnection
            return kind(target.hostname, target.port, timeout=timeout)

        if load["mode"] == "concurrency":
            slots = [slot for slot in range(load["concurrency"]) if slot % workers == worker]
            queue = list(mine)

            def slot_loop(slot):
                endpoint = endpoints[slot % len(endpoints)]
                connection = connection_for(endpoint)
                while True:
                    with lock:
                        if not queue:
                            return
                        request = queue.pop(0)
                    record = send(connection, endpoint, request, headers)
                    record["slot"] = slot
                    records.append(record)

            gevent.joinall([gevent.spawn(slot_loop, slot) for slot in slots])
        else:
            arrivals = load["arrival_ms"]
            cap = Semaphore(load.get("max_in_flight") or len(mine) or 1)

            def timed(request):
                due_ns = started_ns + int(arrivals[request["index"]] * 1e6)
                gevent.sleep(max(0.0, (due_ns - time.perf_counter_ns()) / 1e9))
                with cap:
                    endpoint = endpoints[request["index"] % len(endpoints)]
                    record = send(connection_for(endpoint), endpoint, request, headers)
                    record["scheduled_ms"] = arrivals[request["index"]]
                    records.append(record)

            gevent.joinall([gevent.spawn(timed, request) for request in mine])

        path = os.path.join(records_dir, f"worker-{worker}-{os.getpid()}.jsonl")
        header = {
            "kind": "strobe-locust-worker",
            "plan_link": plan.get("link"),
            "worker": worker,
            "workers": workers,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "started_ns": started_ns,
            "started_wall_ns": started_wall_ns,
            "requests": len(mine),
        }
        with open(path, "w", encoding="utf-8") as file:
            file.write(json.dumps(header) + "\n")
            for record in sorted(records, key=lambda record: record["index"]):
                file.write(json.dumps(record) + "\n")
        if isinstance(runner, WorkerRunner):
            runner.send_message("strobe_done", {"worker": worker, "records": len(records)})
        else:
            runner.quit()
        raise StopUser()


@events.init.add_listener
def on_init(environment, **_kwargs):
    """The master ends the run once every worker has written its records."""
    if not isinstance(environment.runner, MasterRunner):
        return
    done = set()
    expected = worker_count()

    def on_done(environment, msg, **_kwargs):
        done.add(msg.data["worker"])
        if len(done) >= expected:
            environment.runner.quit()

    environment.runner.register_message("strobe_done", on_done)
