#!/usr/bin/python3
"""ctest `python_client_test`: examples/python/lmtrain_client.py against a real lm-server.

Starts lm-server on a free loopback port with a temp data dir (no worker: jobs stay QUEUED),
then runs the example with this interpreter (Debian's /usr/bin/python3): list (empty), submit
a tiny CLM job file, list and get it, cancel it, watch its events to the end, and a get of an
unknown id (must fail with NOT_FOUND). Exits 77 (ctest SKIP_RETURN_CODE) only when grpcio or
protobuf is not installed.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import grpc  # noqa: F401
    import google.protobuf  # noqa: F401
except ImportError as e:
    print(f"SKIP: {e} (install python3-grpcio and python3-protobuf)")
    sys.exit(77)

JOB = """name: from-python
task: clm
model:
  config: {model_type: gpt2, n_layer: 1, n_head: 2, n_embd: 8, n_positions: 32}
tokenizer:
  train: {type: bpe, vocab_size: 50}
data:
  train_file: train.txt
  block_size: 8
"""


class Failure(Exception):
    pass


def check(condition, what):
    if not condition:
        raise Failure(what)


def start_server(server_bin, data_dir):
    proc = subprocess.Popen([server_bin, "--listen", "127.0.0.1:0", "--data-dir", data_dir],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in proc.stdout:
        m = re.search(r"listening on [0-9.]+:([0-9]+)", line)
        if m:
            return proc, f"127.0.0.1:{m.group(1)}"
    raise Failure("lm-server exited before listening")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server-bin", required=True)
    parser.add_argument("--stubs", required=True)
    parser.add_argument("--example", required=True)
    args = parser.parse_args()
    check(os.path.exists(os.path.join(args.stubs, "lmtrain/v1/jobs_pb2_grpc.py")),
          f"no generated stubs in {args.stubs} (build the lmtrain_python_stubs target)")
    tmp = tempfile.mkdtemp(prefix="lmtrain-py-")
    proc = None
    try:
        proc, address = start_server(args.server_bin, os.path.join(tmp, "data"))

        def client(*cli, ok=True):
            r = subprocess.run([sys.executable, args.example, "--server", address, "--stubs",
                                args.stubs, "--json", *cli], capture_output=True, text=True,
                               timeout=60)
            if ok and r.returncode != 0:
                raise Failure(f"{cli} exited {r.returncode}: {r.stderr}")
            return r

        check(json.loads(client("list").stdout) == [], "a new server lists no jobs")
        with open(os.path.join(tmp, "train.txt"), "w") as f:
            f.write("hello world\nthe quick brown fox\n")
        job_file = os.path.join(tmp, "job.yaml")
        with open(job_file, "w") as f:
            f.write(JOB)
        job_id = json.loads(client("submit", job_file).stdout)["job_id"]
        check(job_id, "submit returns an id")

        jobs = json.loads(client("list").stdout)
        check([j["id"] for j in jobs] == [job_id], f"list shows the job: {jobs}")
        job = json.loads(client("get", job_id).stdout)
        check(job["name"] == "from-python" and job["task"] == "clm", f"get: {job}")
        check(job["state"] == "QUEUED", f"no worker, so QUEUED: {job}")
        check(os.path.join(tmp, "train.txt") in job["spec_yaml"], "paths resolved on the client side")

        check(json.loads(client("cancel", job_id).stdout)["state"] == "CANCELLED", "cancel")
        events = [json.loads(line) for line in client("watch", job_id).stdout.splitlines()]
        states = [e["state_changed"]["state"] for e in events if "state_changed" in e]
        check(states == ["QUEUED", "CANCELLED"], f"watch replays the events to the end: {events}")
        check([str(e["seq"]) for e in events] == ["1", "2"], f"seq: {events}")

        bad = client("get", "424242", ok=False)
        check(bad.returncode == 1 and "NOT_FOUND" in bad.stderr, f"unknown id: {bad.stderr}")
        bad_file = client("submit", os.path.join(tmp, "nope.yaml"), ok=False)
        check(bad_file.returncode == 1 and "nope.yaml" in bad_file.stderr, bad_file.stderr)
        print(f"python client OK against {address} (job {job_id})")
        return 0
    except Failure as e:
        print(f"FAIL: {e}")
        return 1
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=20)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
