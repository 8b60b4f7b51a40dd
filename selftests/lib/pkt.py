# SPDX-License-Identifier: GPL-2.0
"""Packet building for the VM suites' Python snippets: Internet checksums,
CRC32c, and Ethernet, IPv4, IPv6, TCP, UDP and SCTP headers, written with
a packet socket. Used as `python3 -` with PYTHONPATH at selftests/lib
(py_in in lib/devmem.bash)."""

import socket
import struct


def csum(data):
    """The Internet checksum of data (RFC 1071), ready for the header."""
    if len(data) % 2:
        data += b'\0'
    t = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while t >> 16:
        t = (t & 0xffff) + (t >> 16)
    return 0xffff - t


_CRC32C = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ (0x82f63b78 if _c & 1 else 0)
    _CRC32C.append(_c)


def crc32c(data):
    c = 0xffffffff
    for b in data:
        c = _CRC32C[(c ^ b) & 0xff] ^ (c >> 8)
    return c ^ 0xffffffff


def mac(text):
    return bytes.fromhex(text.replace(':', ''))


def eth(dst, src, ethertype):
    return mac(dst) + mac(src) + struct.pack('!H', ethertype)


def ipv4(src, dst, proto, payload, ident=1, df=False, ttl=64):
    hdr = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(payload), ident,
                      0x4000 if df else 0, ttl, proto, 0,
                      socket.inet_aton(src), socket.inet_aton(dst))
    return hdr[:10] + struct.pack('!H', csum(hdr)) + hdr[12:] + payload


def pseudo4(src, dst, proto, length):
    return socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack('!xBH', proto, length)


def pseudo6(src, dst, proto, length):
    return (socket.inet_pton(socket.AF_INET6, src) + socket.inet_pton(socket.AF_INET6, dst) +
            struct.pack('!IxxxB', length, proto))


def ipv6(src, dst, nexthdr, payload, hlim=64):
    return (struct.pack('!IHBB', 6 << 28, len(payload), nexthdr, hlim) +
            socket.inet_pton(socket.AF_INET6, src) + socket.inet_pton(socket.AF_INET6, dst) + payload)


def tcp(pseudo, sport, dport, seq, ack, payload, flags=0x10, window=1024):
    """A TCP segment (no options) with its checksum; pseudo is the pseudo
    header's bytes for its length, from pseudo4() or pseudo6()."""
    hdr = struct.pack('!HHIIBBHHH', sport, dport, seq, ack, 5 << 4, flags, window, 0, 0)
    c = csum(pseudo + hdr + payload)
    return hdr[:16] + struct.pack('!H', c) + hdr[18:] + payload


def sctp(sport, dport, vtag, chunks):
    """An SCTP packet with its CRC32c."""
    hdr = struct.pack('!HHII', sport, dport, vtag, 0)
    return hdr[:8] + struct.pack('<I', crc32c(hdr + chunks)) + chunks


def sctp_data(tsn, payload):
    """A DATA chunk (unordered, first and last fragment) of payload."""
    pad = b'\0' * (-len(payload) % 4)
    return struct.pack('!BBHIHHI', 0, 7, 16 + len(payload), tsn, 0, 0, 0) + payload + pad


def sender(dev):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((dev, 0))
    return s
