"""A whole run's limit (--run-timeout): RunStalled when no case finishes for so long, whatever
the harness waits on (conformance.session.run's Session.run re-arms it at every result)."""

from __future__ import annotations

import signal
import threading


class RunStalled(KeyboardInterrupt):
    """No case finished within the run timeout. A KeyboardInterrupt, so that every part of a
    run stops as it does on Ctrl-C (the workers killed, the journal kept); Session.run then
    ends the run with what it has."""


class Watchdog:
    """Raises RunStalled in the main thread when `seconds` pass without progress() (a
    process-wide timer, SIGALRM): whatever the harness is blocked on, a system call included,
    is interrupted. Does nothing off the main thread or where there are no interval timers."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds or 0.0
        self.armed = (self.seconds > 0 and hasattr(signal, "setitimer")
                      and threading.current_thread() is threading.main_thread())

    def _fire(self, signum: int, frame: object) -> None:
        raise RunStalled(f"no case finished in {self.seconds:g} s (--run-timeout)")

    def progress(self) -> None:
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def __enter__(self) -> Watchdog:
        if self.armed:
            self.previous = signal.signal(signal.SIGALRM, self._fire)
            self.progress()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)
