"""Ranks for tests/scripts/test_netns.sh, run under symcomm-run --netns:
    python3 netns_ranks.py ROLE DIR
DIR is shared by the ranks (the launcher's files are visible in every network
namespace); they find each other through files in it. Roles:
  tcp-listen    (a rank of host 1) listens on its own address, checks the 1 MiB
                it receives byte by byte and that it came from the address the
                sender announced, and replies
  tcp-connect   (a rank of host 0) connects, announces its address, sends
  link-listen   answers one ping, then takes its host's link down when asked
  link-connect  pings once, asks for the link to go down, connects again: that
                must fail
Traffic goes only to addresses of the job's own namespaces."""
import os
import socket
import subprocess
import sys
import time

role, d = sys.argv[1], sys.argv[2]
rank = int(os.environ["SYMCOMM_RANK"])
ifname = os.environ["SYMCOMM_SOCKET_IFNAME"]
out = subprocess.check_output(["ip", "-4", "-o", "addr", "show", "dev", ifname], text=True)
me = out.split()[3].split("/")[0]
N = 1 << 20


def wait_file(name):
    deadline = time.time() + 30
    while not os.path.exists(os.path.join(d, name)):
        if time.time() > deadline:
            sys.exit("rank %d: no %s after 30 s" % (rank, name))
        time.sleep(0.05)


def touch(name):
    open(os.path.join(d, name), "w").close()


def listen_announced(name):
    """A listener on this rank's address; "address port" goes to file `name`."""
    ls = socket.socket()
    ls.bind((me, 0))
    ls.listen(4)
    ls.settimeout(30)
    with open(os.path.join(d, name + ".tmp"), "w") as f:
        f.write("%s %d\n" % (me, ls.getsockname()[1]))
    os.rename(os.path.join(d, name + ".tmp"), os.path.join(d, name))
    return ls


def announced(name):
    wait_file(name)
    host, port = open(os.path.join(d, name)).read().split()
    return host, int(port)


def recv_all(s, n):
    b = bytearray()
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            break
        b += c
    return bytes(b)


def expected(sender, i):
    return (i * 131 + sender * 17) % 251


def tcp_listen():
    c, peer = listen_announced("tcp").accept()
    c.settimeout(30)
    head = recv_all(c, 64).decode().split()
    sender, sender_addr = int(head[0]), head[1]
    data = recv_all(c, N)
    bad = [i for i in range(len(data)) if data[i] != expected(sender, i)][:3]
    if len(data) != N or bad:
        sys.exit("rank %d: got %d bytes from rank %d, wrong at %s" % (rank, len(data), sender, bad))
    if peer[0] != sender_addr or peer[0] == me:
        sys.exit("rank %d (%s): connection from %s, but rank %d said %s"
                 % (rank, me, peer[0], sender, sender_addr))
    c.sendall(b"ok %d bytes from %s" % (N, peer[0].encode()))
    c.close()
    print("rank %d at %s: %d bytes from rank %d at %s checked" % (rank, me, N, sender, peer[0]))


def tcp_connect():
    host, port = announced("tcp")
    s = socket.create_connection((host, port), timeout=30)
    s.sendall(("%d %s" % (rank, me)).ljust(64).encode())
    s.sendall(bytes(expected(rank, i) for i in range(N)))
    s.shutdown(socket.SHUT_WR)
    reply = recv_all(s, 200).decode()
    if not reply.startswith("ok %d bytes from %s" % (N, me)):
        sys.exit("rank %d: reply %r" % (rank, reply))
    print("rank %d at %s -> %s:%s: %s" % (rank, me, host, port, reply))


def link_listen():
    c, _ = listen_announced("link").accept()
    c.settimeout(30)
    c.sendall(b"pong " + c.recv(64))
    c.close()
    wait_file("take_it_down")
    subprocess.check_call(["ip", "link", "set", ifname, "down"])
    touch("is_down")
    wait_file("done")
    print("listener: took %s down" % ifname)


def link_connect():
    host, port = announced("link")
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(b"ping %d" % rank)
    reply = s.recv(64)
    s.close()
    if reply != b"pong ping %d" % rank:
        sys.exit("before: reply %r" % reply)
    touch("take_it_down")
    wait_file("is_down")
    try:
        socket.create_connection((host, port), timeout=3)
        sys.exit("after the link went down, a connection to %s:%s still succeeded" % (host, port))
    except OSError as e:
        print("connector: before: %r; after host 1's link went down: %s"
              % (reply, e or type(e).__name__))
    finally:
        touch("done")


{"tcp-listen": tcp_listen, "tcp-connect": tcp_connect,
 "link-listen": link_listen, "link-connect": link_connect}[role]()
