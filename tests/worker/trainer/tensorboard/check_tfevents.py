#!/usr/bin/python3
"""Independent reader check of an lm-train TensorBoard event file.

Usage: check_tfevents.py OUTPUT_DIR [--protoc PROTOC]

Finds the one event file of an lm-train run in OUTPUT_DIR/runs/<Mon DD_HH-MM-SS>_<host>/,
verifies every TFRecord length and CRC with its own CRC-32C, decodes every record with
protobuf's Python runtime (event.proto / summary.proto here, compiled now by protoc
--python_out) and checks the scalars against OUTPUT_DIR/trainer_state.json's log_history:
each logged number under HF TensorBoardCallback's tag at the entry's global step, as a
float32, plus train/tokens_per_second with every training log; nothing else.

Meant for Debian's /usr/bin/python3 with python3-protobuf. Exit status: 0 when every check
passes, 1 when one fails, 77 (skip) when google.protobuf cannot be imported.
"""
import argparse
import json
import math
import os
import re
import socket
import struct
import subprocess
import sys
import tempfile

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))


def crc32c(data):
    """CRC-32C (Castagnoli), bit by bit: slow, short and independent of lm-train's table."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def read_records(path):
    """Yields each record's payload, checking both CRCs of every record."""
    with open(path, "rb") as f:
        data = f.read()
    at = 0
    while at < len(data):
        if len(data) - at < 12:
            raise AssertionError(f"{path}: torn record header at byte {at}")
        header = data[at:at + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[at + 8:at + 12])
        if length_crc != masked(crc32c(header)):
            raise AssertionError(f"{path}: bad length CRC at byte {at}")
        end = at + 12 + length
        if end + 4 > len(data):
            raise AssertionError(f"{path}: torn record at byte {at}")
        payload = data[at + 12:end]
        (data_crc,) = struct.unpack("<I", data[end:end + 4])
        if data_crc != masked(crc32c(payload)):
            raise AssertionError(f"{path}: bad data CRC at byte {at}")
        yield payload
        at = end + 4


def compile_protos(protoc, out_dir):
    subprocess.run([protoc, f"--proto_path={HERE}", f"--python_out={out_dir}", "event.proto",
                    "summary.proto"], check=True)
    sys.path.insert(0, out_dir)
    import event_pb2  # noqa: E402  (generated just now)
    return event_pb2


def find_event_file(output_dir):
    runs = os.path.join(output_dir, "runs")
    dirs = os.listdir(runs)
    if len(dirs) != 1:
        raise AssertionError(f"expected one run folder in {runs}, found {dirs}")
    host = socket.gethostname()
    if not re.fullmatch(r"[A-Z][a-z]{2}\d{2}_\d{2}-\d{2}-\d{2}_" + re.escape(host), dirs[0]):
        raise AssertionError(f"run folder {dirs[0]!r} is not <Mon DD_HH-MM-SS>_{host}")
    run = os.path.join(runs, dirs[0])
    files = os.listdir(run)
    if len(files) != 1 or not re.fullmatch(r"events\.out\.tfevents\.\d{10}\." + re.escape(host),
                                           files[0]):
        raise AssertionError(f"expected one events.out.tfevents.<time>.{host} in {run}: {files}")
    return os.path.join(run, files[0])


def tag_of(key):
    """HF's rewrite_logs, with lm-train's perplexity as an eval metric."""
    if key == "perplexity":
        return "eval/perplexity"
    for prefix, section in (("eval_", "eval/"), ("test_", "test/")):
        if key.startswith(prefix):
            return section + key[len(prefix):]
    return "train/" + key


def f32(value):
    return struct.unpack("<f", struct.pack("<f", value))[0]


def expected_scalars(log_history):
    """(step, tag, float32 value) per logged number, in log order (sorted within an entry)."""
    expected = []
    for entry in log_history:
        for key in sorted(entry):
            value = entry[key]
            if key == "step" or isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            expected.append((entry["step"], tag_of(key), f32(float(value))))
    return expected


def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == b


def read_log_history(output_dir):
    with open(os.path.join(output_dir, "trainer_state.json")) as f:
        return json.load(f)["log_history"]


def match_log_history(scalars, history):
    """Checks (step, tag, value) scalars against trainer_state.json's log_history: exactly its
    numbers under their tags as float32 (in any order), plus a positive train/tokens_per_second
    at every training log, in step order, and the tags every run has. Returns the sorted
    tags."""
    train_steps = [e["step"] for e in history if "loss" in e]
    speeds = [s for s in scalars if s[1] == "train/tokens_per_second"]
    if [s[0] for s in speeds] != train_steps or not all(s[2] > 0 for s in speeds):
        raise AssertionError(f"train/tokens_per_second {speeds} vs training logs at {train_steps}")
    # Within one log the writer's key order is its own; the file's order is checked elsewhere.
    got_sorted = sorted((s for s in scalars if s[1] != "train/tokens_per_second"),
                        key=lambda s: (s[0], s[1]))
    want_sorted = sorted(expected_scalars(history), key=lambda s: (s[0], s[1]))
    if len(got_sorted) != len(want_sorted) or not all(
            g[:2] == w[:2] and same(g[2], w[2]) for g, w in zip(got_sorted, want_sorted)):
        missing = [w for w in want_sorted if w not in got_sorted]
        extra = [g for g in got_sorted if g not in want_sorted]
        raise AssertionError(f"scalars differ from log_history: missing {missing}, extra {extra}")
    tags = sorted({s[1] for s in scalars})
    for needed in ("train/loss", "train/learning_rate", "train/grad_norm", "train/epoch",
                   "eval/loss"):
        if needed not in tags:
            raise AssertionError(f"no {needed} scalar (tags: {tags})")
    return tags


def run_check(check, *args):
    """Runs check(*args): 0 when it passes, 1 (after printing FAIL and why) when it fails."""
    try:
        check(*args)
    except (AssertionError, OSError, ValueError, KeyError) as e:
        print(f"FAIL: {e}")
        return 1
    return 0


def check(output_dir, event_pb2):
    path = find_event_file(output_dir)
    events = []
    for payload in read_records(path):
        event = event_pb2.Event()
        event.ParseFromString(payload)
        if event.SerializeToString() != payload:  # Unknown or misnumbered fields.
            raise AssertionError(f"record does not re-encode to the same bytes: {event}")
        events.append(event)
    if not events or events[0].file_version != "brain.Event:2":
        raise AssertionError(f"first event is not file_version brain.Event:2: {events[:1]}")
    file_time = int(path.split(".")[-2])
    if abs(events[0].wall_time - file_time) > 2:
        raise AssertionError(f"wall_time {events[0].wall_time} far from the name's {file_time}")
    scalars, last_time = [], 0.0
    for event in events[1:]:
        if event.WhichOneof("what") != "summary" or len(event.summary.value) != 1:
            raise AssertionError(f"not a one-value summary event: {event}")
        value = event.summary.value[0]
        if value.WhichOneof("value") != "simple_value":
            raise AssertionError(f"not a simple_value: {event}")
        if event.wall_time < last_time:
            raise AssertionError(f"wall_time goes back: {event}")
        last_time = event.wall_time
        scalars.append((event.step, value.tag, value.simple_value))

    history = read_log_history(output_dir)
    tags = match_log_history(scalars, history)
    got = [s for s in scalars if s[1] != "train/tokens_per_second"]
    if [s[0] for s in got] != [w[0] for w in expected_scalars(history)]:
        raise AssertionError("scalar steps are not in log_history's order")
    print(f"ok: {path}: {len(events)} records, {len(scalars)} scalars, CRCs verified, "
          f"{len(history)} log_history entries matched; tags: {', '.join(tags)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output_dir")
    parser.add_argument("--protoc", default="protoc")
    args = parser.parse_args()
    try:
        import google.protobuf  # noqa: F401
    except ImportError:
        print(f"SKIP: google.protobuf is not importable by {sys.executable} "
              "(Debian: apt-get install python3-protobuf)")
        return SKIP
    with tempfile.TemporaryDirectory() as tmp:
        return run_check(check, args.output_dir, compile_protos(args.protoc, tmp))


if __name__ == "__main__":
    sys.exit(main())
