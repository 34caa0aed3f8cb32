"""The peer side of scripts/bench-peers: the Python `eventsourcing` library (9.5.x) with its
SQLite persistence, running the workload Sources/TallyBench/PeerBenchmarks.swift runs through
Tally — 20,000 expenses created, then each updated 4 times (100,000 events) — row for row.
Reads Tally's rows (lines `peer-row {json}`) from the file named by argv[1] and prints both side
by side with the ratio Tally/peer, then one JSON line per row."""
import json
import os
import sqlite3
import sys
import tempfile
import time

from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event

EXPENSES, UPDATES, BATCH = 20_000, 4, 1_000
EVENTS = EXPENSES * (1 + UPDATES)


class Expense(Aggregate):
    @event("Created")
    def __init__(self, amount, memo):
        self.amount, self.memo = amount, memo

    @event("Updated")
    def update(self, amount, memo):
        self.amount, self.memo = amount, memo


def app(path, compress):
    env = {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": path}
    if compress:
        env["COMPRESSOR_TOPIC"] = "eventsourcing.compressor:ZlibCompressor"
    return Application(env=env)


def events_in_order(application):
    """Every stored event in log order, in pages (their notification log)."""
    start = 1
    while True:
        page = application.recorder.select_notifications(start=start, limit=10_000)
        if not page:
            return
        yield from page
        start = page[-1].id + 1


def db_bytes(path):
    return sum(os.path.getsize(path + suffix) for suffix in ("", "-wal") if os.path.exists(path + suffix))


def append_in_batches(application):
    """Every expense created, then updated UPDATES times, saved BATCH aggregates at a time."""
    expenses = []
    for first in range(0, EXPENSES, BATCH):
        batch = [Expense(amount=1_000 + i, memo=f"lunch {i % 31}") for i in range(first, first + BATCH)]
        application.save(*batch)
        expenses += batch
    for round_ in range(1, UPDATES + 1):
        for first in range(0, EXPENSES, BATCH):
            batch = expenses[first:first + BATCH]
            for i, expense in enumerate(batch):
                expense.update(amount=1_000 + first + i + round_, memo=f"edit {round_}")
            application.save(*batch)


def main():
    work = tempfile.mkdtemp(prefix="tally-peers-")
    rows = {}

    # 1. Appended in batches of 1,000 events (one save of many aggregates' pending events).
    leader_path = os.path.join(work, "leader.db")
    leader = app(leader_path, compress=True)
    start = time.perf_counter()
    append_in_batches(leader)
    rows["append_batched"] = EVENTS / (time.perf_counter() - start)
    rows["bytes_per_event"] = db_bytes(leader_path) / EVENTS

    # 1b. The same with the compressor off, for bytes per event.
    plain_path = os.path.join(work, "plain.db")
    append_in_batches(app(plain_path, compress=False))
    rows["bytes_per_event_uncompressed"] = db_bytes(plain_path) / EVENTS

    # 2. One aggregate's change at a time: a save per event.
    single = app(os.path.join(work, "single.db"), compress=True)
    start = time.perf_counter()
    one_by_one = []
    for i in range(EXPENSES):
        expense = Expense(amount=1_000 + i, memo=f"lunch {i % 31}")
        single.save(expense)
        one_by_one.append(expense)
    for round_ in range(1, UPDATES + 1):
        for i, expense in enumerate(one_by_one):
            expense.update(amount=1_000 + i + round_, memo=f"edit {round_}")
            single.save(expense)
    rows["append_one_at_a_time"] = EVENTS / (time.perf_counter() - start)

    # 3. Every event read back in order and decoded to a domain event.
    start = time.perf_counter()
    count = sum(1 for notification in events_in_order(leader) if leader.mapper.to_domain_event(notification))
    rows["read_all_in_order"] = count / (time.perf_counter() - start)

    # 4. A SQLite view of the expenses rebuilt from the log.
    start = time.perf_counter()
    view = sqlite3.connect(os.path.join(work, "view.db"))
    view.execute("CREATE TABLE expenses (id TEXT PRIMARY KEY, amount INTEGER, memo TEXT)")
    for notification in events_in_order(leader):
        domain_event = leader.mapper.to_domain_event(notification)
        if isinstance(domain_event, Expense.Created):
            view.execute("INSERT INTO expenses VALUES (?, ?, ?)", (str(domain_event.originator_id), domain_event.amount, domain_event.memo))
        else:
            view.execute("UPDATE expenses SET amount = ?, memo = ? WHERE id = ?", (domain_event.amount, domain_event.memo, str(domain_event.originator_id)))
    view.commit()
    rows["rebuild_sqlite_view"] = EVENTS / (time.perf_counter() - start)

    # 5. A follower pulling the leader's whole log through the notification log.
    follower = app(os.path.join(work, "follower.db"), compress=True)
    start = time.perf_counter()
    page = []
    for notification in events_in_order(leader):
        page.append(notification)
        if len(page) == 10_000:
            follower.recorder.insert_events(page)
            page = []
    if page:
        follower.recorder.insert_events(page)
    rows["follower_pull"] = EVENTS / (time.perf_counter() - start)

    tally = {}
    with open(sys.argv[1]) as output:
        for line in output:
            if line.startswith("peer-row "):
                row = json.loads(line[len("peer-row "):])
                tally[row["bench"]] = row["value"]

    print(f"{'row':34} {'Tally':>14} {'eventsourcing':>14} {'Tally/peer':>11}")
    results = []
    for name, unit in [("append_batched", "events/s"), ("append_one_at_a_time", "events/s"), ("read_all_in_order", "events/s"),
                       ("rebuild_sqlite_view", "events/s"), ("follower_pull", "events/s"), ("bytes_per_event", "bytes"),
                       ("bytes_per_event_uncompressed", "bytes")]:
        ours = tally.get(name if name != "bytes_per_event_uncompressed" else "bytes_per_event")
        theirs = rows[name]
        ratio = ours / theirs if ours is not None and theirs else None
        print(f"{name:34} {ours:>14.1f} {theirs:>14.1f} {ratio:>11.2f}  {unit}")
        results.append({"bench": "peer_" + name, "value": ours, "unit": unit, "baseline": theirs, "ratio": ratio})
    print()
    for result in results:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
