#!/usr/bin/env python3
"""A fake of cqmgr's control socket for trying cqmgrctl without a daemon.

usage: canned_server.py SOCKET SAMPLES_DIR

Answers each request line with the sample reply of its name from
SAMPLES_DIR (the samples of docs/control-protocol.md), on one line.  Each
summary adds 10 done and 1 deferred delivery and reports the real uptime, so
that `cqmgrctl top` shows rates.  It tests cqmgrctl's terminal handling
only; it knows nothing of a real daemon.
"""
import json
import os
import socket
import sys
import threading
import time

sock_path, samples_dir = sys.argv[1], sys.argv[2]
samples = {}
for name in os.listdir(samples_dir):
    if name.endswith(".json"):
        with open(os.path.join(samples_dir, name)) as f:
            samples[name[:-5]] = json.load(f)
start = time.monotonic()
summaries = 0
lock = threading.Lock()


def reply(request):
    global summaries
    words = request.split()
    name = words[0].lower() if words else ""
    if name == "summary":
        with lock:
            summaries += 1
            n = summaries
        s = json.loads(json.dumps(samples["summary"]))
        s["uptime"] = round(time.monotonic() - start, 3)
        s["counters"]["deliveries"]["done"] += 10 * n
        s["counters"]["deliveries"]["deferred"] += n
        return s
    if name == "message" and words[1:] != ["4F3A2B1C"]:
        return samples["message_error"]
    if name in samples:
        return samples[name]
    return {"ok": False, "error": "unknown request"}


def serve(conn):
    with conn, conn.makefile("rb") as lines:
        for line in lines:
            text = line.decode("ascii", "replace").rstrip("\r\n")
            conn.sendall(json.dumps(reply(text), separators=(",", ":")).encode() + b"\n")


if os.path.exists(sock_path):
    os.unlink(sock_path)
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(sock_path)
server.listen(16)
while True:
    conn, _ = server.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
