# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ICMP echo with DF set, from one source address, stdlib only (run inside a host namespace:
the twin's machine has no ping binary).

    probe.py mesh  --src A --size 8972 --to DST...           -> {"DST": rtt_ms or null}
    probe.py watch --src A --dst B --seconds S --interval 0.01 [--until FILE] [--losses]
                                                        -> {"sent", "lost", "longest_gap_ms",
                                                            "first_lost_at", "last_lost_at", "recovered_at"}
                                                           (+ "lost_at": send times of lost probes)
    probe.py udp   --src A --dst B --sports 49152[-50175] [--count N] [--dport 4791]
                   RoCEv2-shaped datagrams (UDP to 4791), N per source port, no reply expected -> {"sent"}
``--until``: stop once FILE exists (``--seconds`` stays the upper bound). ``--reply-timeout``: a probe is lost
only when no answer came within it (a loaded machine delays answers; the gap figure keeps the resolution).
``--size`` is the ICMP payload: IP MTU 9000 = 20 (IP) + 8 (ICMP) + 8972.
"""

import argparse
import json
import os
import select
import socket
import struct
import time

IP_MTU_DISCOVER, IP_PMTUDISC_DO = 10, 2   # linux/in.h: never fragment, DF set


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def open_socket(src):
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    sock.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
    sock.bind((src, 0))
    return sock


def echo(sock, dst, ident, seq, size, timeout):
    payload = bytes((seq + i) & 0xFF for i in range(size))
    header = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
    packet = struct.pack("!BBHHH", 8, 0, checksum(header + payload), ident, seq) + payload
    start = time.monotonic()
    try:
        sock.sendto(packet, (dst, 0))
    except OSError:          # EMSGSIZE: the path MTU is below the packet (DF)
        return None
    deadline = start + timeout
    while True:
        # past the deadline, still read what the kernel already holds: a reply that came while this process
        # waited for the CPU is an answer (the probe measures the network, not its own scheduling)
        left = max(0.0, deadline - time.monotonic())
        if not select.select([sock], [], [], left)[0]:
            return None
        data, addr = sock.recvfrom(65535)
        ihl = (data[0] & 0x0F) * 4
        kind, _code, _sum, rid, rseq = struct.unpack("!BBHHH", data[ihl:ihl + 8])
        if kind == 0 and rid == ident and rseq == seq and addr[0] == dst and len(data) - ihl - 8 == size:
            return (time.monotonic() - start) * 1000.0


def udp(args):
    """Datagrams from SRC:sport to DST:dport for every source port of the range, ``count`` each (one socket per
    port: the kernel routes each as its own flow). Nothing listens at the far end; the counters tell the path."""
    first, _sep, last = args.sports.partition("-")
    sent = 0
    payload = b"\0" * 64
    for sport in range(int(first), int(last or first) + 1):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((args.src, sport))
        for _n in range(args.count):
            sock.sendto(payload, (args.dst, args.dport))
            sent += 1
        sock.close()
    return sent


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["mesh", "watch", "udp"])
    parser.add_argument("--src", required=True)
    parser.add_argument("--size", type=int, default=8972)
    parser.add_argument("--timeout", type=float, default=1.0)
    parser.add_argument("--dst")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--interval", type=float, default=0.01)
    parser.add_argument("--to", dest="targets", nargs="*", default=[])
    parser.add_argument("--until")
    parser.add_argument("--reply-timeout", type=float, help="watch: seconds to wait for each answer (default 5 intervals)")
    parser.add_argument("--losses", action="store_true")
    parser.add_argument("--sports", default="49152", help="source port or range FIRST-LAST (udp)")
    parser.add_argument("--dport", type=int, default=4791)
    parser.add_argument("--count", type=int, default=1, help="datagrams per source port (udp)")
    args = parser.parse_args()
    if args.mode == "udp":
        print(json.dumps({"sent": udp(args)}))
        return
    sock = open_socket(args.src)
    ident = os.getpid() & 0xFFFF
    if args.mode == "mesh":
        out = {}
        for seq, dst in enumerate(args.targets):
            rtt = echo(sock, dst, ident, seq & 0xFFFF, args.size, args.timeout)
            if rtt is None:   # one retry: the first packet may wait for ARP
                rtt = echo(sock, dst, ident, (seq + 30000) & 0xFFFF, args.size, args.timeout)
            out[dst] = None if rtt is None else round(rtt, 3)
        print(json.dumps(out))
        return
    sent = lost = 0
    last_ok = time.monotonic()
    gap = 0.0
    # wall-clock marks (time.time(), comparable with the caller's failure time): the send time of the
    # first and last lost probe, and of the first probe answered after the last loss
    first_lost = last_lost = recovered = None
    lost_at = []
    end = time.monotonic() + args.seconds
    while time.monotonic() < end and not (args.until and os.path.exists(args.until)):
        sent += 1
        wall = time.time()
        rtt = echo(sock, args.dst, ident, sent & 0xFFFF, args.size, args.reply_timeout or args.interval * 5)
        now = time.monotonic()
        if rtt is None:
            lost += 1
            lost_at.append(round(wall, 3))
            first_lost = first_lost or wall
            last_lost, recovered = wall, None
        else:
            if last_lost is not None and recovered is None:
                recovered = wall
            gap = max(gap, now - last_ok)
            last_ok = now
            time.sleep(max(0.0, args.interval - rtt / 1000.0))
    gap = max(gap, time.monotonic() - last_ok)
    out = {"sent": sent, "lost": lost, "longest_gap_ms": round(gap * 1000.0, 1),
           "first_lost_at": first_lost, "last_lost_at": last_lost, "recovered_at": recovered}
    if args.losses:
        out["lost_at"] = lost_at
    print(json.dumps(out))


if __name__ == "__main__":
    main()
