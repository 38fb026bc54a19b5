"""The background threads the supervisors run in, beside the agent and never in its way.

Every run due at a task's end starts at once in a thread of its own, so the code style,
design and internaliser runs of a milestone go at the same time and all their results
can be there at the next task's start. A run's time budget starts when it starts. The
agent waits (:meth:`Worker.wait`) at most a bounded time for the runs still going; a run
still going long after its deadline is given up and its thread left to end on its own.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from org.contracts.supervisors import SupervisorsConfig

from .runs import Outcome, Request

#: A run still going this long after its deadline is given up (its thread is left to end on its own).
ABANDON_AFTER_SECONDS = 60.0


@dataclass
class Flight:
    """A run from the moment it is due until its result is applied."""

    request: Request
    config: SupervisorsConfig
    running: bool = False
    done: threading.Event = field(default_factory=threading.Event)
    outcome: Outcome | None = None


class Worker:
    """Supervisor runs in background threads, one per run; ``run`` does the run itself."""

    def __init__(self, run: Callable[[Request, SupervisorsConfig], Outcome]):
        self._run = run
        self._lock = threading.Lock()
        self._flights: dict[str, Flight] = {}

    def in_flight(self) -> list[Flight]:
        """Runs going, or ended, whose results have not been taken yet."""
        with self._lock:
            return list(self._flights.values())

    def running(self) -> list[Flight]:
        """Runs still going."""
        return [f for f in self.in_flight() if not f.done.is_set()]

    def launch(self, request: Request, config: SupervisorsConfig) -> Flight:
        """Start a run now, in a thread of its own; its time budget starts now."""
        flight = Flight(request, config)
        request.restart_clock()
        flight.running = True
        with self._lock:
            self._flights[request.supervisor] = flight
        threading.Thread(target=self._work, args=(flight,), name=f"a0org-supervisor-{request.supervisor}", daemon=True).start()
        return flight

    def wait(self, limit_seconds: float | None = None) -> None:
        """Block until every run going now is done, never past its deadline nor ``limit_seconds`` from now."""
        until = None if limit_seconds is None else time.monotonic() + max(0.0, limit_seconds)
        for flight in self.running():
            end = flight.request.deadline if until is None else min(flight.request.deadline, until)
            remaining = end - time.monotonic()
            if remaining > 0:
                flight.done.wait(remaining)

    def take_ended(self, now: float) -> tuple[list[Flight], list[Flight]]:
        """The runs that finished and those given up (far past their deadline), out of the worker's hands."""
        finished, abandoned = [], []
        with self._lock:
            for name, flight in list(self._flights.items()):
                if flight.done.is_set():
                    finished.append(self._flights.pop(name))
                elif now > flight.request.deadline + ABANDON_AFTER_SECONDS:
                    abandoned.append(self._flights.pop(name))  # its thread keeps running; its result is ignored
        return finished, abandoned

    def _work(self, flight: Flight) -> None:
        try:
            flight.outcome = self._run(flight.request, flight.config)
        finally:
            flight.done.set()


__all__ = ["ABANDON_AFTER_SECONDS", "Flight", "Worker"]
