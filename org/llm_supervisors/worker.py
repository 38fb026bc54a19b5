"""The background thread the supervisors run in, beside the agent and never in its way.

Runs go one at a time, in the order they were due. A run's time budget starts when the
worker takes it, not when it was queued, so the agent waits (:meth:`Worker.wait`) only
for the run that is going. A run still going long after its deadline is given up: its
thread is left to end on its own and a new thread takes over the queue.
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
    """One supervisor run at a time in a background thread; ``run`` does the run itself."""

    def __init__(self, run: Callable[[Request, SupervisorsConfig], Outcome]):
        self._run = run
        self._lock = threading.Lock()
        self._flights: dict[str, Flight] = {}
        self._queue: list[Flight] = []
        self._generation = 0  # of the worker thread that may take from the queue
        self._working = False

    def in_flight(self) -> list[Flight]:
        """Runs queued or going, whose results have not been taken yet."""
        with self._lock:
            return list(self._flights.values())

    def launch(self, request: Request, config: SupervisorsConfig) -> None:
        """Queue a run; a worker thread starts when none is working."""
        flight = Flight(request, config)
        with self._lock:
            self._flights[request.supervisor] = flight
            self._queue.append(flight)
        self._start()

    def wait(self) -> None:
        """Block until the runs going now are done, never past the end of their time budgets.

        Runs still queued behind them have not started their budgets and are not waited for.
        """
        for flight in [f for f in self.in_flight() if f.running]:
            remaining = flight.request.deadline - time.monotonic()
            if remaining > 0:
                flight.done.wait(remaining)

    def take_ended(self, now: float) -> tuple[list[Flight], list[Flight]]:
        """The runs that finished and those given up (far past their deadline), out of the worker's hands."""
        finished, abandoned = [], []
        with self._lock:
            for name, flight in list(self._flights.items()):
                if flight.done.is_set():
                    finished.append(self._flights.pop(name))
                elif flight.running and now > flight.request.deadline + ABANDON_AFTER_SECONDS:
                    abandoned.append(self._flights.pop(name))
            if abandoned:  # the stuck thread keeps running; a new one takes over the queue
                self._generation += 1
                self._working = False
        if abandoned:
            self._start()
        return finished, abandoned

    def _start(self) -> None:
        with self._lock:
            if self._working or not self._queue:
                return
            self._working = True
            generation = self._generation
            _begin(self._queue[0])  # the new worker takes it first: it is going from now on
        threading.Thread(target=self._work, args=(generation,), name="a0org-supervisors", daemon=True).start()

    def _work(self, generation: int) -> None:
        while True:
            with self._lock:
                if generation != self._generation or not self._queue:
                    if generation == self._generation:
                        self._working = False
                    return
                flight = self._queue.pop(0)
                if not flight.running:
                    _begin(flight)
            try:
                flight.outcome = self._run(flight.request, flight.config)
            finally:
                flight.done.set()


def _begin(flight: Flight) -> None:
    """A run is going: its time budget starts now (the worker's lock is held)."""
    flight.request.restart_clock()
    flight.running = True


__all__ = ["ABANDON_AFTER_SECONDS", "Flight", "Worker"]
