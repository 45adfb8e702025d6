"""Importing the LiteLLM integration makes no network attempt (LiteLLM's own import fetches a price list)."""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = """
import socket
attempts = []
real_connect = socket.socket.connect
def connect(self, address):
    attempts.append(address)
    raise OSError("network blocked by the test")
socket.socket.connect = connect
real_getaddrinfo = socket.getaddrinfo
def getaddrinfo(host, *args, **kwargs):
    attempts.append(host)
    raise socket.gaierror("name resolution blocked by the test")
socket.getaddrinfo = getaddrinfo
import agentevals_litellm
print(attempts)
"""


def test_import_makes_no_network_attempt() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LITELLM")}
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True)
    assert proc.stdout.strip() == "[]", proc.stderr[-2000:]
