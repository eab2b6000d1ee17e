"""The candidate pipe's transport: what the judge (judge/) and a candidate process speak.
protocol/candidate_pipe.json is the one definition (its version, channels, message kinds and
fields; docs/architecture.md "Candidate protocol" summarises it), read by protocol/pipe_schema.py;
this module is its one implementation, imported by both sides (inside the sandbox as
`palladium_candidate.protocol`, where the schema module is mounted as `palladium_pipe_schema`).

    CONTROL.message("spawn", spare=1)   # a map of the control channel (judge <-> parent)
    JOB.check(msg, "result")            # msg, or ProtocolError (another version, another kind)

Two channels, both streams of MessagePack maps, each map with "type" and "version":
  control (judge <-> warm-spare parent, an AF_UNIX SOCK_SEQPACKET socket on fd 3; one map per
  packet, file descriptors ride along as SCM_RIGHTS): ready, spawn (+ 2 fds: the spare's request
  read end and response write end), spawned, reap, reaped, shutdown;
  job (judge <-> one spare, two pipes): ready, job (stages.py: run), stage, result (exactly one,
  then the spare exits).

Arrays travel as {"dtype": str, "shape": [int], "data": bytes} (C order). Everything a spare
sends is untrusted: decode() bounds the size of a message, decode_array() accepts only known
dtypes and data of exactly the declared size, and nothing here ever unpickles or evaluates.
"""
import os
import select
import socket
import time

import msgpack
import numpy as np

if __package__ == "palladium_candidate":  # in the sandbox (judge/candidate_pool.py mounts it)
    import palladium_pipe_schema as pipe_schema
else:
    from protocol import pipe_schema

PIPE = pipe_schema.load("candidate_pipe")
VERSION = PIPE.version
CONTROL = PIPE.channel("control")
JOB = PIPE.channel("job")
MAX_MESSAGE_BYTES = PIPE.limits["max_message_bytes"]
MAX_CONTROL_BYTES = PIPE.limits["max_control_bytes"]
DTYPES = tuple(PIPE.data["arrays"]["dtypes"])
ProtocolError = pipe_schema.ProtocolError


def _dtype(name):
    if name == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def encode_array(array):
    # Not np.ascontiguousarray, which makes a 0-d array 1-d: a scalar output must keep shape ().
    array = np.asarray(array, order="C")
    name = str(array.dtype)
    if name not in DTYPES:
        raise ValueError(f"arrays of dtype {name} cannot be sent")
    return {"dtype": name, "shape": list(array.shape), "data": array.tobytes()}


def decode_array(obj, what="array"):
    """The numpy array an encoded map describes, or ProtocolError naming what is wrong."""
    if not isinstance(obj, dict) or set(obj) != {"dtype", "shape", "data"}:
        raise ProtocolError(f"{what} is not an encoded array")
    name, shape, data = obj["dtype"], obj["shape"], obj["data"]
    if name not in DTYPES:
        raise ProtocolError(f"{what} has dtype {name!r}, not one of {', '.join(DTYPES)}")
    if (not isinstance(shape, list) or len(shape) > 16
            or not all(isinstance(d, int) and 0 <= d < (1 << 40) for d in shape)):
        raise ProtocolError(f"{what} has an invalid shape {shape!r}")
    if not isinstance(data, bytes):
        raise ProtocolError(f"{what} data is not bytes")
    dtype = _dtype(name)
    want = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if want != len(data):
        raise ProtocolError(f"{what} declares {shape} {name} ({want} bytes) but carries "
                            f"{len(data)} bytes")
    return np.frombuffer(data, dtype=dtype).reshape(shape).copy()


class Stream:
    """MessagePack maps over a pair of pipe fds. read() returns None at EOF."""

    def __init__(self, read_fd, write_fd, max_bytes=MAX_MESSAGE_BYTES):
        self.read_fd, self.write_fd = read_fd, write_fd
        self._max = max_bytes
        self._unpacker = msgpack.Unpacker(raw=False, strict_map_key=True,
                                          max_buffer_size=max_bytes)

    def write(self, msg):
        view = memoryview(msgpack.packb(msg, use_bin_type=True))
        while view:
            view = view[os.write(self.write_fd, view):]

    def read(self, deadline=None):
        """The next map; None at EOF; TimeoutError once `deadline` (time.monotonic()) passes."""
        while True:
            try:
                return next(self._unpacker)
            except StopIteration:
                pass
            except (msgpack.ExtraData, msgpack.FormatError, msgpack.StackError, ValueError) as exc:
                raise ProtocolError(f"malformed message: {exc}") from None
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.read_fd], [], [], left)[0]:
                    raise TimeoutError("no message before the deadline")
            data = os.read(self.read_fd, 1 << 20)
            if not data:
                return None
            try:
                self._unpacker.feed(data)
            except msgpack.BufferFull:
                raise ProtocolError(f"a message exceeds {self._max} bytes") from None

    def close(self):
        for fd in (self.read_fd, self.write_fd):
            try:
                os.close(fd)
            except OSError:
                pass


def send_control(sock, msg, fds=()):
    payload = msgpack.packb(msg, use_bin_type=True)
    if fds:
        socket.send_fds(sock, [payload], list(fds))
    else:
        sock.sendall(payload)


def receive_control(sock, maxfds=0):
    """(message, fds) of the next packet; (None, []) at EOF."""
    if maxfds:
        payload, fds, _, _ = socket.recv_fds(sock, MAX_CONTROL_BYTES, maxfds)
    else:
        payload, fds = sock.recv(MAX_CONTROL_BYTES), []
    if not payload:
        for fd in fds:
            os.close(fd)
        return None, []
    try:
        return msgpack.unpackb(payload, raw=False, strict_map_key=True), list(fds)
    except Exception as exc:
        for fd in fds:
            os.close(fd)
        raise ProtocolError(f"malformed control packet: {exc}") from None
