"""A seccomp filter for every run: shrink the kernel surface a sandboxed program can reach.

Denied (EPERM): new namespaces (unshare, setns, clone with CLONE_NEW*; clone3 answers ENOSYS
so libc falls back to clone, whose flags can be checked), mounts, kernel keyrings (state that
would outlive a run under the same uid), ptrace, perf, bpf, userfaultfd, io_uring, the kernel
log; socket families other than AF_UNIX, AF_INET and AF_INET6 (EAFNOSUPPORT). Other ABIs
(i386, x32) are killed outright so the table cannot be bypassed. Only x86_64 has a table;
elsewhere the run goes without a filter and the probe says so. The docker backend's
supervisor installs the same filter, on top of Docker's own, in every run's child.
"""

from __future__ import annotations

import ctypes
import platform
import struct
from typing import Any

from .rootfs import check, libc

_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_BIT = 0x40000000
_DENIED_X86_64 = {
    "unshare": 272,
    "setns": 308,
    "mount": 165,
    "umount2": 166,
    "pivot_root": 155,
    "chroot": 161,
    "add_key": 248,
    "request_key": 249,
    "keyctl": 250,
    "ptrace": 101,
    "syslog": 103,
    "perf_event_open": 298,
    "bpf": 321,
    "userfaultfd": 323,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsmount": 432,
}
_CLONE, _CLONE3, _SOCKET = 56, 435, 41
# CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWTIME
_CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000
_CLONE_NAMESPACES |= 0x10000000 | 0x20000000 | 0x40000000 | 0x00000080
# The socket families a program may create: AF_UNIX, AF_INET, AF_INET6 (the network
# namespace has nowhere to go). Every other family answers EAFNOSUPPORT: netlink (the kernel's
# routing, audit and uevent interfaces), AF_VSOCK (the hypervisor's host side), AF_ALG,
# AF_PACKET and the rest are kernel surface no solution needs.
_SOCKET_FAMILIES = (1, 2, 10)

_LD_W_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW, _KILL, _ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
_EPERM, _ENOSYS, _EAFNOSUPPORT = 1, 38, 97
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2

Instruction = tuple[int, int, int, int]
# (op, jump if true, jump if false, k) with label names as jump targets, or ("label", name).
Code = list[tuple[Any, ...]]


def _assemble(code: Code) -> list[Instruction]:
    """Resolve labels: ``("label", name)`` marks a place; a jump's targets are label names
    (or 0: the next instruction). Every jump in a filter goes forward."""
    places: dict[str, int] = {}
    at = 0
    for item in code:
        if item[0] == "label":
            places[str(item[1])] = at
        else:
            at += 1
    program: list[Instruction] = []
    for item in code:
        if item[0] == "label":
            continue
        op, jt, jf, k = item
        here = len(program)
        offsets = [0 if t == 0 else places[str(t)] - here - 1 for t in (jt, jf)]
        assert all(0 <= offset < 256 for offset in offsets), (item, offsets)
        program.append((int(op), offsets[0], offsets[1], int(k)))
    return program


def _program() -> list[Instruction]:
    denied = sorted(_DENIED_X86_64.values())
    code: Code = [
        (_LD_W_ABS, 0, 0, 4),
        (_JEQ, "native", 0, _AUDIT_ARCH_X86_64),
        (_RET, 0, 0, _KILL),  # other ABIs (i386, x32 via the arch) cannot bypass the table
        ("label", "native"),
        (_LD_W_ABS, 0, 0, 0),
        (_JGE, "eperm", 0, _X32_BIT),  # x32 numbers
    ]
    code += [(_JEQ, "eperm", 0, number) for number in denied]
    code += [
        (_JEQ, "clone", 0, _CLONE),
        (_JEQ, "enosys", 0, _CLONE3),  # libc falls back to clone, whose flags are checked
        (_JEQ, "socket", 0, _SOCKET),
        (_RET, 0, 0, _ALLOW),
        ("label", "eperm"),
        (_RET, 0, 0, _ERRNO | _EPERM),
        ("label", "enosys"),
        (_RET, 0, 0, _ERRNO | _ENOSYS),
        ("label", "clone"),
        (_LD_W_ABS, 0, 0, 16),  # clone flags: low half of args[0]
        (_JSET, 0, "clone_allow", _CLONE_NAMESPACES),
        (_RET, 0, 0, _ERRNO | _EPERM),
        ("label", "clone_allow"),
        (_RET, 0, 0, _ALLOW),
        ("label", "socket"),
        (_LD_W_ABS, 0, 0, 16),  # the family: low half of args[0]
    ]
    code += [(_JEQ, "allow", 0, family) for family in _SOCKET_FAMILIES]
    code += [
        (_RET, 0, 0, _ERRNO | _EAFNOSUPPORT),
        ("label", "allow"),
        (_RET, 0, 0, _ALLOW),
    ]
    return _assemble(code)


def filter_bytes() -> bytes:
    """The filter as the kernel takes it (``struct sock_filter[]``)."""
    return b"".join(struct.pack("<HBBI", *instruction) for instruction in _program())


def available() -> bool:
    return platform.machine() == "x86_64"


class _Fprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))


_prepared: tuple[ctypes.Array[ctypes.c_char], _Fprog] | None = None


def prepare() -> None:
    """Build the filter once in the server, so each run only has to install it."""
    global _prepared
    if available() and _prepared is None:
        raw = filter_bytes()
        buffer = ctypes.create_string_buffer(raw, len(raw))
        _prepared = (buffer, _Fprog(len(raw) // 8, ctypes.cast(buffer, ctypes.c_void_p)))


def install() -> None:
    """Install the filter on this process (after no_new_privs); inherited across fork/exec."""
    if not available():
        return
    prepare()
    assert _prepared is not None
    check(
        libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(_prepared[1]), 0, 0),
        "seccomp",
    )
