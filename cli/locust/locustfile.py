"""Runs a strobe plan (plan.json, `strobe-artifact plan`) on Locust's workers and records every
stream read, for `strobe-artifact import-locust` to turn into rows with strobe's own core
(docs/operate/locust.md). Shipped with strobe and versioned with it; nothing in it depends on the plan.

Environment:
  STROBE_PLAN     path to plan.json (required)
  STROBE_RECORDS  folder for the records, one JSON-lines file per worker process (required)
  STROBE_WORKERS  how many worker processes run the plan in all (default 1)
  STROBE_API_KEY  sent as a Bearer header when set; never written anywhere

Run one user per worker process: `-u N -r N` with N = STROBE_WORKERS. Worker w of N takes the
requests whose index i has i % N == w (a workload's: whose session s has s % N == w, so a
session's turns stay on one worker); a closed loop gives it the slots k with k % N == w, each
slot sending the next of its requests (or playing the next of its sessions, turn after turn)
when free (slot k to endpoint k % len(endpoints)); a rate load sends each of its requests at its
arrival time after the run's start.

Before sending, each worker measures its wall clock's offset to the master's (the best of
SYNC_PINGS round trips) and the master names one start instant for all of them, so that the
workers' timelines line up and a rate load's arrivals follow the plan across workers.
"""

import base64
import gc
import http.client
import json
import os
import platform
import socket
import time
import urllib.parse

import gevent
import locust
from gevent.event import AsyncResult
from gevent.lock import Semaphore
from gevent.queue import Empty, Queue
from locust import User, events, task
from locust.exception import StopUser
from locust.runners import MasterRunner, WorkerRunner

PLAN_SCHEMA = "strobe.plan/v1"
READ_BYTES = 65536
SYNC_PINGS = 16
SYNC_TIMEOUT_S = 10
START_TIMEOUT_S = 300
START_DELAY_NS = 500_000_000

# This process's side of the clock agreement with the master (filled by the message handlers).
PONGS = Queue()
START = AsyncResult()


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


def session_of(request):
    """What splits the plan across workers: a workload request's session, else its index."""
    return request.get("session", request["index"])


def with_own(headers, request):
    """The plan's headers with the request's own (a workload's session header), if any."""
    own = request.get("headers")
    return {**headers, **own} if own else headers


def with_history(parts, replies):
    """A live turn's body: the plan's parts with each earlier reply between them as a JSON
    string, written as strobe writes one (docs/operate/locust.md, *A plan of your own traffic*)."""
    body = [parts[0]]
    for reply, part in zip(replies, parts[1:]):
        body.append(json.dumps(reply, ensure_ascii=False))
        body.append(part)
    return "".join(body)


def streamed_reply(record):
    """The content the server streamed (choices[0].delta.content of every event), or None when
    the turn failed: no response, a status outside 2xx, or no [DONE]."""
    if "error" in record or not 200 <= record.get("status", 0) < 300:
        return None
    data = b"".join(base64.b64decode(data) for _, data in record["reads"]).decode("utf-8", "replace")
    pieces = []
    for line in data.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if not line.startswith("data:"):
            continue
        payload = line[6:] if line.startswith("data: ") else line[5:]
        if payload.strip() == "[DONE]":
            return "".join(pieces)
        try:
            event = json.loads(payload)
        except ValueError:
            return None
        choices = event.get("choices") if isinstance(event, dict) else None
        if choices and isinstance(choices[0], dict):
            piece = (choices[0].get("delta") or {}).get("content")
            if isinstance(piece, str):
                pieces.append(piece)
    return None


def not_sent(request, endpoint, slot, reason):
    """The record of a turn its session could not send (its live history broke), as the page
    records one: a SessionError that says why."""
    now_ns = time.perf_counter_ns()
    return {
        "index": request["index"],
        "endpoint": endpoint,
        "start_ns": now_ns,
        "start_wall_ns": time.time_ns(),
        "reads": [],
        "end_ns": now_ns,
        "error": f"SessionError: {reason}",
        "slot": slot,
    }


def redacted(data, secret):
    """`data` with every occurrence of `secret` (the API key) replaced."""
    return data.replace(secret.encode("utf-8"), b"[redacted]") if secret else data


def send(connection, endpoint, request, headers, secret=None):
    """Sends one request and reads its stream, stamping every read (perf_counter_ns). An error
    response's body is kept as one read with the key taken out, in case the server echoes it:
    the key never reaches the records."""
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
        body = request["body"].encode("utf-8")
        reused = connection.sock is not None
        try:
            connection.request("POST", path, body=body, headers=headers)
            response = connection.getresponse()
        except (ConnectionResetError, BrokenPipeError) as error:
            # The server closed the kept-alive connection while it sat idle: send again on a
            # fresh one, as a browser does; the time from the first attempt counts.
            if not reused:
                raise
            connection.close()
            record["retried"] = f"{type(error).__name__}: {error}"
            connection.request("POST", path, body=body, headers=headers)
            response = connection.getresponse()
        record["status"] = response.status
        record["content_type"] = response.getheader("Content-Type")
        while True:
            data = response.read1(READ_BYTES)
            stamp = time.perf_counter_ns()
            if not data:
                break
            record["reads"].append([stamp, base64.b64encode(data).decode("ascii")])
        record["end_ns"] = time.perf_counter_ns()
        if secret and not 200 <= response.status < 300 and record["reads"]:
            body = b"".join(base64.b64decode(data) for _, data in record["reads"])
            last_stamp = record["reads"][-1][0]
            record["reads"] = [[last_stamp, base64.b64encode(redacted(body, secret)).decode("ascii")]]
    except (OSError, http.client.HTTPException) as error:
        record["end_ns"] = time.perf_counter_ns()
        record["error"] = redacted(f"{type(error).__name__}: {error}".encode("utf-8"), secret).decode("utf-8")
        connection.close()
    return record


def sleep_until(due_ns, clock_ns):
    """Sleeps until `clock_ns()` reaches `due_ns`, never less: the event loop's timers may wake
    early by the age of its cached time, so what is left is slept again."""
    while (left_ns := due_ns - clock_ns()) > 0:
        gevent.sleep(left_ns / 1e9)


def sync_clock(runner):
    """The master's wall clock minus this worker's, from the ping with the shortest round trip
    (its midpoint is when the master most likely read its clock)."""
    best = None
    for _ in range(SYNC_PINGS):
        sent_ns = time.time_ns()
        runner.send_message("strobe_ping", {"sent_ns": sent_ns})
        try:
            reply = PONGS.get(timeout=SYNC_TIMEOUT_S)
            while reply["sent_ns"] != sent_ns:  # a late reply to an earlier ping
                reply = PONGS.get(timeout=SYNC_TIMEOUT_S)
        except Empty:
            raise SystemExit(
                f"no clock reply from the master in {SYNC_TIMEOUT_S} s: run the master with this locustfile"
            ) from None
        back_ns = time.time_ns()
        round_trip = back_ns - sent_ns
        if best is None or round_trip < best[1]:
            best = (reply["master_ns"] - (sent_ns + back_ns) // 2, round_trip)
    return {"offset_to_master_ns": best[0], "round_trip_ns": best[1], "pings": SYNC_PINGS}


def wait_for_start(runner, worker, clock):
    """Tells the master this worker is ready and sleeps until the start instant it names."""
    runner.send_message("strobe_ready", {"worker": worker})
    try:
        start_on_master_ns = START.get(timeout=START_TIMEOUT_S)
    except gevent.Timeout:
        raise SystemExit(
            f"the master named no start in {START_TIMEOUT_S} s: are all STROBE_WORKERS workers running?"
        ) from None
    sleep_until(start_on_master_ns - clock["offset_to_master_ns"], time.time_ns)
    return start_on_master_ns


def run_share(plan, worker, workers, records_dir, key=None, before_start=None):
    """Sends worker `worker` of `workers`'s share of `plan` once and writes its records file
    into `records_dir`; returns the file's path. The connections are opened first (as many as
    the share can have open at once), so that no request's time includes a connection set up
    in the start's burst; then `before_start()` runs (clock agreement and the wait for the
    master's start: it returns the clock the header records, or None) and the sends begin."""
    os.makedirs(records_dir, exist_ok=True)
    headers = dict(plan["headers"])
    if key:
        headers["Authorization"] = f"Bearer {key}"
    endpoints = plan["endpoints"]
    mine = [request for request in plan["requests"] if session_of(request) % workers == worker]
    timeout = plan.get("timeout_s", 900)
    records = []
    lock = Semaphore()
    load = plan["load"]

    def connection_for(endpoint):
        target = urllib.parse.urlsplit(endpoint)
        kind = http.client.HTTPSConnection if target.scheme == "https" else http.client.HTTPConnection
        return kind(target.hostname, target.port, timeout=timeout)

    def opened(endpoint):
        connection = connection_for(endpoint)
        try:
            connection.connect()
        except OSError:
            pass  # the request itself will fail and say why
        return connection

    if load["mode"] == "concurrency":
        slots = [slot for slot in range(load["concurrency"]) if slot % workers == worker]
        connections = {slot: opened(endpoints[slot % len(endpoints)]) for slot in slots}
    else:
        # Idle kept-alive connections per endpoint, as a browser keeps them: as many as the
        # share can have in flight, spread as its requests are.
        idle = {endpoint: [] for endpoint in endpoints}
        open_at_once = min(load.get("max_in_flight") or len(mine), len(mine))
        for request in mine[:open_at_once]:
            endpoint = endpoints[request["index"] % len(endpoints)]
            idle[endpoint].append(opened(endpoint))
    clock = before_start() if before_start else None
    # The cyclic collector stops the process for tens of ms once the records hold enough
    # objects, and every stream's reads wait meanwhile; reference counting frees what the run
    # drops, so it is off until the sends end (docs/operate/locust.md, *What a worker costs*).
    gc.disable()
    started_ns = time.perf_counter_ns()
    started_wall_ns = time.time_ns()

    if load["mode"] == "concurrency":
        # A session's turns in order (a synthetic plan's or a single-turn workload's request is
        # a session of one); turn k goes out once turn k-1's response has ended and its delay
        # has passed, and a timed session no earlier than its arrival.
        queue = []
        for request in mine:
            if queue and session_of(queue[-1][-1]) == session_of(request):
                queue[-1].append(request)
            else:
                queue.append([request])
        session_arrivals = load.get("session_arrival_ms")
        live = plan.get("live_history")

        def slot_loop(slot):
            endpoint = endpoints[slot % len(endpoints)]
            connection = connections[slot]
            while True:
                with lock:
                    if not queue:
                        return
                    session = queue.pop(0)
                ended_ns = None
                replies = []
                broken = None
                for request in session:
                    if broken is not None:
                        records.append(not_sent(request, endpoint, slot, broken))
                        continue
                    if ended_ns is None and session_arrivals is not None:
                        due_ns = started_ns + int(session_arrivals[session_of(request)] * 1e6)
                        sleep_until(due_ns, time.perf_counter_ns)
                    elif ended_ns is not None:
                        due_ns = ended_ns + int(request.get("delay_ms", 0) * 1e6)
                        sleep_until(due_ns, time.perf_counter_ns)
                    if request.get("body") is None:
                        request = {**request, "body": with_history(request["body_parts"], replies)}
                    record = send(connection, endpoint, request, with_own(headers, request), key)
                    record["slot"] = slot
                    records.append(record)
                    ended_ns = record["end_ns"]
                    if live is not None:
                        reply = streamed_reply(record)
                        turn = str(request["turn"] + 1)
                        if reply is None:
                            broken = live["failed_turn"].replace("{turn}", turn)
                        elif len(reply) > live["reply_limit_chars"]:
                            broken = live["long_reply"].replace("{turn}", turn)
                        else:
                            replies.append(reply)

        gevent.joinall([gevent.spawn(slot_loop, slot) for slot in slots])
    else:
        arrivals = load["arrival_ms"]
        cap = Semaphore(load.get("max_in_flight") or len(mine) or 1)

        def timed(request):
            due_ns = started_ns + int(arrivals[request["index"]] * 1e6)
            sleep_until(due_ns, time.perf_counter_ns)
            woke_ns = time.perf_counter_ns()
            with cap:
                endpoint = endpoints[request["index"] % len(endpoints)]
                pool = idle[endpoint]
                connection = pool.pop() if pool else connection_for(endpoint)
                record = send(connection, endpoint, request, with_own(headers, request), key)
                if "error" not in record:
                    pool.append(connection)
                record["scheduled_ms"] = arrivals[request["index"]]
                record["woke_ns"] = woke_ns
                records.append(record)

        gevent.joinall([gevent.spawn(timed, request) for request in mine])

    gc.enable()
    path = os.path.join(records_dir, f"worker-{worker}-{os.getpid()}.jsonl")
    header = {
        "kind": "strobe-locust-worker",
        "plan_link": plan.get("link"),
        "plan_strobe_version": plan.get("strobe_version"),
        "locust_version": locust.__version__,
        "python_version": platform.python_version(),
        "clock": clock,
        "clock_resolution_ns": max(1, round(time.get_clock_info("perf_counter").resolution * 1e9)),
        "worker": worker,
        "workers": workers,
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "started_ns": started_ns,
        "started_wall_ns": started_wall_ns,
        "requests": len(mine),
        # The workload's shape (no prompt): what the import needs to place each row in the file.
        "plan_workload": plan.get("workload"),
    }
    with open(path, "w", encoding="utf-8") as file:
        file.write(json.dumps(header) + "\n")
        for record in sorted(records, key=lambda record: record["index"]):
            file.write(json.dumps(record) + "\n")
    return path


class PlanRunner(User):
    """One per worker process: runs the worker's share of the plan once, then stops."""

    @task
    def run_plan(self):
        plan = load_plan()
        workers = worker_count()
        runner = self.environment.runner
        worker = runner.worker_index if isinstance(runner, WorkerRunner) else 0
        records_dir = os.environ.get("STROBE_RECORDS")
        if not records_dir:
            raise SystemExit("STROBE_RECORDS is not set: name a folder for the records")
        def before_start():
            if not isinstance(runner, WorkerRunner):
                return None
            clock = sync_clock(runner)
            wait_for_start(runner, worker, clock)
            return clock

        path = run_share(plan, worker, workers, records_dir, os.environ.get("STROBE_API_KEY"), before_start)
        if isinstance(runner, WorkerRunner):
            runner.send_message("strobe_done", {"worker": worker, "path": path})
        else:
            runner.quit()
        raise StopUser()


@events.init.add_listener
def on_init(environment, **_kwargs):
    """The master answers clock pings, names the start once every worker is ready, and ends the
    run once every worker has written its records; a worker takes the replies."""
    runner = environment.runner
    if isinstance(runner, WorkerRunner):
        runner.register_message("strobe_pong", lambda environment, msg, **_: PONGS.put(msg.data))
        runner.register_message("strobe_start", lambda environment, msg, **_: START.set(msg.data["start_ns"]))
        return
    if not isinstance(runner, MasterRunner):
        return
    done = set()
    ready = {}
    expected = worker_count()

    def on_ping(environment, msg, **_kwargs):
        reply = {"sent_ns": msg.data["sent_ns"], "master_ns": time.time_ns()}
        environment.runner.send_message("strobe_pong", reply, client_id=msg.node_id)

    def on_ready(environment, msg, **_kwargs):
        ready[msg.data["worker"]] = msg.node_id
        if len(ready) == expected:
            start_ns = time.time_ns() + START_DELAY_NS
            for node in ready.values():
                environment.runner.send_message("strobe_start", {"start_ns": start_ns}, client_id=node)

    def on_done(environment, msg, **_kwargs):
        done.add(msg.data["worker"])
        if len(done) >= expected:
            environment.runner.quit()

    runner.register_message("strobe_ping", on_ping)
    runner.register_message("strobe_ready", on_ready)
    runner.register_message("strobe_done", on_done)
