#!/usr/bin/python3
"""D-Bus peers for tests/access.sh, on the bus DBUS_SYSTEM_BUS_ADDRESS names,
speaking the wire protocol itself (no D-Bus module for Python is needed).

bus-flood.py black-hole NAME READY-FILE
    Owns NAME and never answers: a polkit that hangs. Writes READY-FILE once
    it owns the name.
bus-flood.py flood RATE SECONDS DEST PATH INTERFACE METHOD
    Calls METHOD (no arguments) RATE times a second for SECONDS without
    waiting for the answers, waits up to 10 s more for them, and prints
    "sent N answered M" and a count of each error's name.
"""
import os
import select
import socket
import struct
import sys
import time
from collections import Counter

FIELD_TYPES = {1: "o", 2: "s", 3: "s", 4: "s", 5: "u", 6: "s", 7: "s", 8: "g", 9: "u"}


def pad(buf, n):
    return buf + b"\0" * (-len(buf) % n)


def message(serial, dest, path, interface, member, sig="", body=b"", flags=0):
    fields = b""
    for code, value in ((1, path), (2, interface), (3, member), (6, dest), (8, sig)):
        if not value:
            continue
        t = FIELD_TYPES[code]
        fields = pad(fields, 8) + bytes([code, 1]) + t.encode() + b"\0"
        if t == "g":
            fields += bytes([len(value)]) + value.encode() + b"\0"
        else:
            fields = pad(fields, 4) + struct.pack("<I", len(value)) + value.encode() + b"\0"
    head = b"l" + bytes([1, flags, 1]) + struct.pack("<III", len(body), serial, len(fields))
    return pad(head + fields, 8) + body


def parse_fields(buf):
    """The header fields of one message: {code: value}."""
    out, i = {}, 16
    end = 16 + struct.unpack_from("<I", buf, 12)[0]
    while i < end:
        i += -i % 8
        code, siglen = buf[i], buf[i + 1]
        sig = buf[i + 2 : i + 2 + siglen].decode()
        i += 3 + siglen
        if sig == "g":
            n = buf[i]
            out[code] = buf[i + 1 : i + 1 + n].decode()
            i += n + 2
        elif sig in ("s", "o"):
            i += -i % 4
            n = struct.unpack_from("<I", buf, i)[0]
            out[code] = buf[i + 4 : i + 4 + n].decode(errors="replace")
            i += n + 5
        else:  # u
            i += -i % 4
            out[code] = struct.unpack_from("<I", buf, i)[0]
            i += 4
    return out


class Bus:
    def __init__(self):
        address = os.environ["DBUS_SYSTEM_BUS_ADDRESS"]
        assert address.startswith("unix:path=")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(address[len("unix:path=") :])
        uid = str(os.getuid()).encode().hex()
        self.sock.sendall(b"\0AUTH EXTERNAL " + uid.encode() + b"\r\n")
        if not self.sock.recv(4096).startswith(b"OK"):
            sys.exit("the bus refused us")
        self.sock.sendall(b"BEGIN\r\n")
        self.buf = b""
        self.serial = 0
        self.send("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "Hello")

    def send(self, dest, path, interface, member, sig="", body=b""):
        self.serial += 1
        self.sock.sendall(message(self.serial, dest, path, interface, member, sig, body))
        return self.serial

    def messages(self, timeout):
        """The whole messages received within timeout: (type, fields, body)."""
        if select.select([self.sock], [], [], timeout)[0]:
            data = self.sock.recv(1 << 20)
            if not data:
                sys.exit("the bus hung up")
            self.buf += data
        while len(self.buf) >= 16:
            body_len, _, fields_len = struct.unpack_from("<III", self.buf, 4)
            start = 16 + fields_len + (-(16 + fields_len) % 8)
            if len(self.buf) < start + body_len:
                break
            msg, self.buf = self.buf[: start + body_len], self.buf[start + body_len :]
            yield msg[1], parse_fields(msg), msg[start:]


def black_hole(name, ready):
    bus = Bus()
    body = struct.pack("<I", len(name)) + name.encode() + b"\0"
    body = pad(body, 4) + struct.pack("<I", 4)  # DBUS_NAME_FLAG_DO_NOT_QUEUE
    serial = bus.send("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                      "RequestName", "su", body)
    while True:
        for kind, fields, body in bus.messages(1):
            if fields.get(5) == serial:
                if kind != 2 or struct.unpack_from("<I", body)[0] != 1:
                    sys.exit(f"cannot own {name}: {fields.get(4)}")
                with open(ready, "w") as f:
                    f.write("owned\n")


def flood(rate, seconds, dest, path, interface, method):
    bus = Bus()
    sent, answered, errors = 0, 0, Counter()
    start = time.monotonic()
    # The Hello's reply and NameAcquired are not answers.
    first = bus.serial + 1

    def take(timeout):
        nonlocal answered
        for kind, fields, _ in bus.messages(timeout):
            if kind in (2, 3) and fields.get(5, 0) >= first:
                answered += 1
                if kind == 3:
                    errors[fields.get(4)] += 1

    while (now := time.monotonic()) < start + seconds:
        due = int((now - start) * rate)
        while sent < due:
            bus.send(dest, path, interface, method)
            sent += 1
        take(0.001)
    deadline = time.monotonic() + 10
    while answered < sent and time.monotonic() < deadline:
        take(0.1)
    print(f"sent {sent} answered {answered}")
    for name, n in errors.most_common():
        print(f"{name} {n}")


if __name__ == "__main__":
    if sys.argv[1] == "black-hole":
        black_hole(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "flood":
        flood(int(sys.argv[2]), float(sys.argv[3]), *sys.argv[4:8])
    else:
        sys.exit(__doc__)
