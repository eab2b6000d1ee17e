"""Framing for the judge pipe protocol (its messages: protocol/judge_pipe.json, read by
protocol/judge_pipe.py; its C++ side: agent/judge_process.cpp over the generated codec).

A stream of MessagePack maps with no extra framing: requests arrive on fd 3, responses leave on
fd 4. `Channel.read()` returns the next decoded message, or None at EOF; `Channel.write()` sends
one map and flushes it, so the agent never waits on a half-buffered reply.
"""
import os

import msgpack

from protocol.judge_pipe import VERSION
REQUEST_FD = 3
RESPONSE_FD = 4


class Channel:
    def __init__(self, request_fd=REQUEST_FD, response_fd=RESPONSE_FD):
        self._request_fd = request_fd
        self._response_fd = response_fd
        # Nothing the judge starts (the candidate sandbox) may hold the protocol pipes open after
        # the judge dies, or the agent would never see EOF.
        for fd in (request_fd, response_fd):
            os.set_inheritable(fd, False)
        self._unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)

    def read(self):
        while True:
            try:
                return next(self._unpacker)
            except StopIteration:
                pass
            data = os.read(self._request_fd, 1 << 16)
            if not data:
                return None
            self._unpacker.feed(data)

    def write(self, message):
        payload = msgpack.packb(message, use_bin_type=True)
        view = memoryview(payload)
        while view:
            written = os.write(self._response_fd, view)
            view = view[written:]
