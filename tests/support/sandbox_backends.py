"""Backends that attack the harness through the operating system from their worker: TEST
DOUBLES ONLY, for tests/session/test_session_sandbox.py (issue 24). Each is the NumPy reference
but for its DEPTH_TO_SPACE calls (one case of the documented ones), where it attacks (the
Prober then raises RuntimeError whose message is what it saw, as JSON: the case's ERROR message
carries it out of the sandbox):

- Prober   reports its uid, whether $DMLCONF_TEST_TARGET (a pid of a process of the harness's
           user) is in its /proc, what kill(SIGKILL) and ptrace(PTRACE_ATTACH) of it did, and
           what writing $DMLCONF_TEST_WRITE (a file beside the results) and
           $DMLCONF_TEST_WRITE_CASES (a file among the case files) did
- Escapes  double-forks a child into a session of its own that execs `sleep $DMLCONF_TEST_MARK`
           (a number no other process has in its command line), then computes
- SharedHog  maps 1 GiB MAP_SHARED and touches every page (a cap that counts private memory
           only, RLIMIT_DATA, grants it)
"""

from __future__ import annotations

import ctypes
import errno
import json
import mmap
import os
from collections.abc import Mapping

import numpy as np

from backends.numpy_reference import NumpyReferenceBackend
from conformance.ops import OperatorCall

PTRACE_ATTACH = 16


class _Once(NumpyReferenceBackend):
    native = True

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        if call.operator == "DEPTH_TO_SPACE":
            self.attack()
        super().execute(call, bindings)

    def attack(self) -> None:
        raise NotImplementedError


def _try(action: object) -> str:
    try:
        action()  # type: ignore[operator]
    except OSError as exc:
        return errno.errorcode.get(exc.errno or 0, str(exc.errno))
    return "done"


class Prober(_Once):
    name = "sandbox-prober"

    def attack(self) -> None:
        target = int(os.environ["DMLCONF_TEST_TARGET"])
        libc = ctypes.CDLL(None, use_errno=True)

        def ptrace() -> None:
            if libc.ptrace(PTRACE_ATTACH, target, None, None) != 0:
                raise OSError(ctypes.get_errno(), "ptrace")

        def write(variable: str) -> None:
            if variable in os.environ:
                with open(os.environ[variable], "w") as f:
                    f.write("forged")

        seen = {"uid": os.getuid(), "visible": os.path.exists(f"/proc/{target}"),
                "ptrace": _try(ptrace), "write": _try(lambda: write("DMLCONF_TEST_WRITE")),
                "write_cases": _try(lambda: write("DMLCONF_TEST_WRITE_CASES")),
                "kill": _try(lambda: os.kill(target, 9))}
        raise RuntimeError(json.dumps(seen))


class Escapes(_Once):
    name = "sandbox-escapes"

    def attack(self) -> None:
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv("/bin/sleep", ["sleep", os.environ["DMLCONF_TEST_MARK"]])
            os._exit(0)
        os.wait()


class SharedHog(_Once):
    name = "sandbox-shared-hog"

    def attack(self) -> None:
        block = mmap.mmap(-1, 1 << 30, flags=mmap.MAP_SHARED)
        for i in range(0, 1 << 30, mmap.PAGESIZE):
            block[i] = 1
