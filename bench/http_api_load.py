#!/usr/bin/env python3
"""Keep-alive GETs against lm-server's HTTP JSON API, one path at a time, as a dashboard polls.

    bench/http_api_load.py HOST:PORT SERVER_PID PATH [PATH...] [--calls N] [--label L]

For each PATH: N calls in a row on one kept-alive connection (after 5 warm-up calls), then one
JSON line with the response size, latency (mean, p50, p99, max, in ms) and lm-server's CPU per
call (user + system from /proc/SERVER_PID/stat, in ms); with --label, one line of text
starting with L instead.
"""
import argparse
import http.client
import json
import os
import time


def server_cpu_s(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(conn, path, calls, pid):
    def get():
        conn.request("GET", path)
        res = conn.getresponse()
        body = res.read()
        if res.status != 200:
            raise SystemExit(f"{path}: HTTP {res.status}: {body[:300]!r}")
        return body

    for _ in range(5):
        get()
    cpu0, t0, lat = server_cpu_s(pid), time.perf_counter(), []
    for _ in range(calls):
        s = time.perf_counter()
        body = get()
        lat.append(time.perf_counter() - s)
    seconds, cpu = time.perf_counter() - t0, server_cpu_s(pid) - cpu0
    lat.sort()
    ms = lambda x: round(1000 * x, 3)
    return {"path": path, "calls": calls, "bytes": len(body), "mean_ms": ms(seconds / calls),
            "p50_ms": ms(lat[calls // 2]), "p99_ms": ms(lat[min(calls - 1, calls * 99 // 100)]),
            "max_ms": ms(lat[-1]), "server_cpu_ms_per_call": ms(cpu / calls)}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("address")
    p.add_argument("server_pid", type=int)
    p.add_argument("paths", nargs="+")
    p.add_argument("--calls", type=int, default=200)
    p.add_argument("--label", default="")
    a = p.parse_args()
    host, port = a.address.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    for path in a.paths:
        r = run(conn, path, a.calls, a.server_pid)
        if not a.label:
            print(json.dumps(r), flush=True)
            continue
        print(f"  {a.label:9s} {r['server_cpu_ms_per_call']:6.2f} ms cpu/call  "
              f"mean {r['mean_ms']:6.2f}  p50 {r['p50_ms']:6.2f}  p99 {r['p99_ms']:6.2f}  "
              f"max {r['max_ms']:6.2f} ms  {r['bytes']:6d} B  {path}", flush=True)


if __name__ == "__main__":
    main()
