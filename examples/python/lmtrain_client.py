#!/usr/bin/python3
"""lmtrain from Python: submit a job file, list and get jobs, watch a job's events, cancel.

Uses grpcio (Debian: python3-grpcio, python3-protobuf) and stubs generated from proto/ at
build time (build/python/lmtrain/v1/jobs_pb2*.py; the build runs protoc --python_out and
grpc_python_plugin). Run it with the system Python:

  /usr/bin/python3 examples/python/lmtrain_client.py --stubs build/python list
  /usr/bin/python3 examples/python/lmtrain_client.py --stubs build/python submit examples/tiny-gpt2/job.yaml
  /usr/bin/python3 examples/python/lmtrain_client.py --stubs build/python watch 1

--json prints JSON (proto3 JSON mapping) instead of lines. The server address comes from
--server or $LMCTL_SERVER (default 127.0.0.1:50051). Exit status: 0 on success, 1 when the
server reports an error (printed as "error: CODE: message"), 2 on bad usage.
"""

import argparse
import json
import os
import sys


def load_stubs(stubs_dir):
    """Imports the generated modules from stubs_dir (the build's python/ folder)."""
    sys.path.insert(0, os.path.abspath(stubs_dir))
    from lmtrain.v1 import jobs_pb2, jobs_pb2_grpc  # noqa: E402 (generated at build time)
    return jobs_pb2, jobs_pb2_grpc


def to_json(message):
    from google.protobuf import json_format
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


def submit(stub, pb, args):
    with open(args.file, encoding="utf-8") as f:
        text = f.read()
    request = pb.SubmitJobRequest(
        spec_yaml=text,
        source_name=os.path.basename(args.file),
        base_dir=os.path.dirname(os.path.abspath(args.file)),
    )
    response = stub.SubmitJob(request, timeout=10)
    return {"job_id": response.job_id} if args.json else response.job_id


def list_jobs(stub, pb, args):
    response = stub.ListJobs(pb.ListJobsRequest(limit=args.limit), timeout=10)
    if args.json:
        return [to_json(job) for job in response.jobs]
    return "\n".join(
        f"{job.id:>5}  {job.name:<24}  {job.task:<14}  {pb.JobState.Name(job.state)}"
        for job in response.jobs)


def get_job(stub, pb, args):
    job = stub.GetJob(pb.GetJobRequest(job_id=args.id), timeout=10)
    if args.json:
        return to_json(job)
    return f"{job.id}  {job.name}  {pb.JobState.Name(job.state)}"


def cancel_job(stub, pb, args):
    response = stub.CancelJob(pb.CancelJobRequest(job_id=args.id), timeout=10)
    state = pb.JobState.Name(response.state)
    return {"job_id": args.id, "state": state} if args.json else f"job {args.id} {state}"


def describe(pb, event):
    kind = event.WhichOneof("kind")
    if kind == "state_changed":
        return f"{pb.JobState.Name(event.state_changed.state)} {event.state_changed.reason}"
    if kind == "metrics":
        m = event.metrics
        return f"step {m.step}/{m.max_steps} loss {m.loss:.4f}"
    if kind == "checkpoint":
        return f"checkpoint step {event.checkpoint.step} -> {event.checkpoint.path}"
    return f"[{event.log.stream}] {event.log.text}"


def watch(stub, pb, args):
    """Streams events until the job ends; prints each as it arrives."""
    for event in stub.WatchJob(pb.WatchJobRequest(job_id=args.id)):
        if args.json:
            print(json.dumps(to_json(event)), flush=True)
        else:
            print(f"{event.seq:>4}  {describe(pb, event)}", flush=True)
    return None


COMMANDS = {"submit": submit, "list": list_jobs, "get": get_job, "cancel": cancel_job,
            "watch": watch}


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default=os.environ.get("LMCTL_SERVER", "127.0.0.1:50051"))
    parser.add_argument("--stubs", default=os.environ.get("LMTRAIN_PY_STUBS", "build/python"),
                        help="folder with the generated lmtrain/v1/*_pb2*.py")
    parser.add_argument("--json", action="store_true", help="print JSON")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("submit").add_argument("file")
    sub.add_parser("list").add_argument("--limit", type=int, default=100)
    for name in ("get", "cancel", "watch"):
        sub.add_parser(name).add_argument("id")
    return parser.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    import grpc
    pb, pb_grpc = load_stubs(args.stubs)
    with grpc.insecure_channel(args.server) as channel:
        stub = pb_grpc.JobServiceStub(channel)
        try:
            result = COMMANDS[args.command](stub, pb, args)
        except grpc.RpcError as e:
            print(f"error: {e.code().name}: {e.details()}", file=sys.stderr)
            return 1
        except OSError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
    if result is not None:
        print(json.dumps(result, indent=2) if args.json else result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
