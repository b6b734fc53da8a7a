#!/usr/bin/python3
"""A tiny Sendmail milter (protocol version 6) that edits every message it
sees, so that Postfix's cleanup(8) writes queue files with pointer records:
a changed sender, an added header, a changed header, an added recipient, a
deleted recipient and a replaced body each go through cleanup's heap.

Usage: edit-milter.py PORT   (listens on 127.0.0.1:PORT until killed; with
PORT 0 the kernel picks one; the port is printed on the first line of stdout)

Only messages with a header named X-Edit-Me are edited; the others are
accepted unchanged.  The edits are fixed so that the golden tests know what
to expect:
  * sender becomes milter-sender@test.example
  * header "X-Milter-Added: yes" is appended
  * the first "Subject" header becomes "milter changed subject"
  * recipient milter-added@test.example is added
  * recipient <del@test.example> is deleted (when present)
  * the body becomes "body replaced by the milter\r\n"
"""
import socket
import struct
import sys
import threading

SMFIF_ADDHDRS, SMFIF_CHGBODY, SMFIF_ADDRCPT, SMFIF_DELRCPT = 0x01, 0x02, 0x04, 0x08
SMFIF_CHGHDRS, SMFIF_CHGFROM = 0x10, 0x40


def read_exact(conn, n):
    """Reads exactly n bytes or raises EOFError."""
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def send(conn, cmd, payload=b""):
    """Sends one milter packet: 4-byte length, command byte, payload."""
    conn.sendall(struct.pack(">I", len(payload) + 1) + cmd + payload)


def serve(conn):
    """Answers one MTA connection until it closes."""
    edit = False
    try:
        while True:
            (length,) = struct.unpack(">I", read_exact(conn, 4))
            if length < 1 or length > 1 << 20:
                return
            packet = read_exact(conn, length)
            cmd, data = packet[:1], packet[1:]
            if cmd == b"O":
                actions = (SMFIF_ADDHDRS | SMFIF_CHGBODY | SMFIF_ADDRCPT | SMFIF_DELRCPT
                           | SMFIF_CHGHDRS | SMFIF_CHGFROM)
                send(conn, b"O", struct.pack(">III", 6, actions, 0))
            elif cmd in (b"D", b"A"):
                continue  # macros and abort need no answer
            elif cmd == b"Q":
                return
            elif cmd == b"M":
                edit = False
                send(conn, b"c")
            elif cmd == b"L":
                edit = edit or data.split(b"\0", 1)[0].lower() == b"x-edit-me"
                send(conn, b"c")
            elif cmd == b"E" and not edit:
                send(conn, b"a")
            elif cmd == b"E":
                send(conn, b"e", b"<milter-sender@test.example>\0")
                send(conn, b"h", b"X-Milter-Added\0yes\0")
                send(conn, b"m", struct.pack(">I", 1) + b"Subject\0milter changed subject\0")
                send(conn, b"+", b"<milter-added@test.example>\0")
                send(conn, b"-", b"<del@test.example>\0")
                send(conn, b"b", b"body replaced by the milter\r\n")
                send(conn, b"a")
            else:
                send(conn, b"c")
    except (EOFError, ConnectionError):
        return
    finally:
        conn.close()


def main():
    """Listens on the given port and serves each connection in a thread."""
    port = int(sys.argv[1])
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(16)
    print(srv.getsockname()[1], flush=True)
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
