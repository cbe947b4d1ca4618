"""The Faust side of the streamcount benchmark: a table counting the records of
bench-src1 per key, with its changelog, the seed's Python reference for the
count scenario. It prints the same "BENCH first/progress/done" lines as the Go
probe (bench/internal/probe) and the Kafka Streams program, which
bench/harness times.

Usage: python count.py --brokers HOST:PORT --app-id ID --guarantee G
       --commit-interval-ms N --partitions N --state-dir DIR
"""

import argparse
import os
import sys
import time

import faust

ap = argparse.ArgumentParser()
ap.add_argument("--brokers", required=True)
ap.add_argument("--app-id", required=True)
ap.add_argument("--guarantee", default="at_least_once")
ap.add_argument("--commit-interval-ms", type=int, default=30000)
ap.add_argument("--partitions", type=int, default=4)
ap.add_argument("--state-dir", required=True)
args = ap.parse_args()

EXPECT = int(os.environ.get("STREAMGEN_BENCH_EXPECT", "0"))
STEP = max(EXPECT // 10, 1)


def store_url():
    # RocksDB (through rocksdict) when it installed, so the state is on disk like
    # the other systems'; memory otherwise (the harness reports which).
    try:
        import rocksdict  # noqa: F401

        return "rocksdb://"
    except ImportError:
        return "memory://"


app = faust.App(
    args.app_id,
    broker="kafka://" + args.brokers,
    store=store_url(),
    processing_guarantee="exactly_once" if args.guarantee == "exactly_once_v2" else "at_least_once",
    broker_commit_interval=args.commit_interval_ms / 1000.0,
    datadir=args.state_dir,
    web_enabled=False,
    topic_partitions=args.partitions,
    topic_replication_factor=1,
    consumer_auto_offset_reset="earliest",
)
source = app.topic(
    "bench-src1",
    key_type=bytes,
    value_type=bytes,
    key_serializer="raw",
    value_serializer="raw",
    partitions=args.partitions,
)
counts = app.Table(
    "counts",
    default=int,
    partitions=args.partitions,
    key_type=bytes,
    value_type=int,
)

seen = 0


def say(line):
    # The worker replaces sys.stdout with a logger; the harness reads fd 1.
    os.write(1, (line + "\n").encode())


@app.agent(source)
async def count(stream):
    global seen
    async for key, _ in stream.items():
        seen += 1
        now = int(time.time() * 1_000_000)
        if seen == 1:
            say("BENCH first %d" % now)
        if seen == EXPECT:
            say("BENCH done %d %d" % (seen, now))
        elif seen % STEP == 0 and seen < EXPECT:
            say("BENCH progress %d %d" % (seen, now))
        counts[key] += 1


if __name__ == "__main__":
    sys.argv = [sys.argv[0], "worker", "-l", "warn"]
    app.main()
