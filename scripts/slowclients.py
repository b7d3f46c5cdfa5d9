#!/usr/bin/env python3
"""Slow-client attack for make load: N connections that send their headers a
byte at a time (slowloris), and N that make one unauthenticated request and
then sit idle on the keep-alive connection. Runs for DURATION seconds and
prints how many connections were refused at connect and how many the server
was seen to close: a slow-header connection counts when a send fails; an
idle one only when its first read after DURATION sees the end (one whose
read returns the 401's bytes is not counted, closed or not)."""
import socket, sys, time

host, port, n, duration = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
slow, idle, refused = [], [], 0
for i in range(n):
    for group in (slow, idle):
        try:
            s = socket.create_connection((host, port), timeout=2)
            s.setblocking(False)
            if group is idle:
                s.sendall(b"GET /v1/whoami HTTP/1.1\r\nHost: x\r\n\r\n")
            else:
                s.sendall(b"GET /v1/whoami HTTP/1.1\r\n")
            group.append(s)
        except OSError:
            refused += 1
closed = 0
end = time.time() + duration
while time.time() < end and slow:
    alive = []
    for s in slow:
        try:
            s.send(b"X")
            alive.append(s)
        except OSError:
            closed += 1
    slow = alive
    time.sleep(1)
for s in idle:
    try:
        if s.recv(65536) == b"":
            closed += 1
    except BlockingIOError:
        pass
    except OSError:
        closed += 1
print(f"SLOW connections={2*n} refused_at_connect={refused} closed_by_server={closed}")
