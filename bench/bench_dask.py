"""The Dask engine against one process: ingest, eigen step and total on generated tweets.

Run with ``python -m bench.bench_dask [--documents N] [--workers 1,2] [--cache DIR]``
(default 1,000,000 tweets, the ``tweets-1M`` corpus of :mod:`bench.bench_scale`, cached in
/tmp/spca-bench). Needs the dask extra (``pip install 'spca-cli[dask]'``).

Each configuration runs in a fresh child process (one process, then ``--scheduler local:N``
for each N of ``--workers``), which reads the file, computes the eigen step of ``spca topics``
(the leading eigenpairs of A = S^T S, as ``top_eigenpairs`` does it for the spannogram) and then
the whole topics run (``-k 10 -c 5``, spannogram rank 2, as bench_scale's target). The cluster's
start is timed apart. On the cluster it also measures the overhead of one product with an
n x 8 block: the wall time of the product minus the longest time a worker spent computing its
share (timed on the worker), i.e. what scheduling, shipping the block, and gathering and adding
the answers cost; and the memory each worker holds for its row blocks (S, times, texts, ids).

Wall time on a shared 2-core machine also counts waiting for a CPU: the load average is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

K, COMPONENTS, RANK = 10, 5, 2
PRODUCT_BLOCK = 8


def _block_bytes(block):
    """Bytes one row block holds on its worker."""
    S = block.S
    total = S.data.nbytes + S.indices.nbytes + S.indptr.nbytes
    for name in ("times", "tz_offsets"):
        array = getattr(block, name)
        total += 0 if array is None else array.nbytes
    for name in ("texts", "ids"):
        strings = getattr(block, name)
        if strings is not None:
            total += strings.blob.nbytes + strings.offsets.nbytes
    return total


def _timed_share(shard, X):
    """On a worker: seconds its shard takes for its share of A X."""
    start = time.perf_counter()
    shard.matmat(X)
    return time.perf_counter() - start


def child(path, workers):
    """One configuration, in a fresh process; prints one JSON line."""
    import numpy as np

    from spca_cli.matrix import Gram
    from spca_cli.spectrum import single_call_method, top_eigenpairs
    from spca_cli.topics import run_topics

    out = {"workers": workers}
    start = time.perf_counter()
    if workers == 0:
        from spca_cli.corpus import read_corpus

        corpus = read_corpus(path)
        out["ingest"] = time.perf_counter() - start
        gram = Gram.from_documents(corpus.S)
        X = np.random.default_rng(0).standard_normal((gram.n, PRODUCT_BLOCK))
        gram.matmat(X)
        walls = []
        for _ in range(10):
            t = time.perf_counter()
            gram.matmat(X)
            walls.append(time.perf_counter() - t)
        out["product_wall"] = float(np.median(walls))
        out["run"] = _run(gram, corpus, out, top_eigenpairs, single_call_method, run_topics)
        print(json.dumps(out), flush=True)
        return
    from spca_cli.distributed import connect
    from spca_cli.distributed.ingest import read_distributed

    with connect(f"local:{workers}") as client:
        out["cluster_start"] = time.perf_counter() - start
        start = time.perf_counter()
        corpus = read_distributed(client, path)
        out["ingest"] = time.perf_counter() - start
        out["blocks"] = len(corpus.blocks)
        sizes = client.gather([client.submit(_block_bytes, b, pure=False)
                               for b in corpus.blocks])
        held = {}
        for block, size in zip(corpus.blocks, sizes):
            for worker in client.who_has([block])[block.key]:
                held[worker] = held.get(worker, 0) + size
        out["worker_mb"] = max(held.values()) / 1e6
        gram = Gram.from_backend(corpus.backend)
        X = np.random.default_rng(0).standard_normal((gram.n, PRODUCT_BLOCK))
        gram.matmat(X)  # warm: numba and the shards in place
        overheads, walls = [], []
        for _ in range(10):
            t = time.perf_counter()
            gram.matmat(X)
            wall = time.perf_counter() - t
            shares = client.gather([client.submit(_timed_share, s, X, pure=False)
                                    for s in corpus.backend.shards])
            walls.append(wall)
            overheads.append(wall - max(shares))
        out["product_wall"] = float(np.median(walls))
        out["product_overhead"] = float(np.median(overheads))
        trips = []
        ask = corpus.backend._sum

        def counted(method, *args):  # every round trip to the workers of the topics run
            trips.append(method)
            return ask(method, *args)

        corpus.backend._sum = counted
        out["run"] = _run(gram, corpus, out, top_eigenpairs, single_call_method, run_topics)
        out["round_trips"] = {m: trips.count(m) for m in sorted(set(trips))}
    print(json.dumps(out), flush=True)


def _run(gram, corpus, out, top_eigenpairs, single_call_method, run_topics):
    """The eigen step alone, then the whole topics run; returns the topics' seconds."""
    start = time.perf_counter()
    eigen = top_eigenpairs(gram, RANK + 1, method=single_call_method(gram))
    out["eigen"] = time.perf_counter() - start
    out["eigen_products"] = int(eigen.products)
    out["documents"] = int(corpus.n_documents)
    out["words"] = int(corpus.n_words)
    start = time.perf_counter()
    result = run_topics(corpus, solver="spannogram", k=K, n_components=COMPONENTS, rank=RANK)
    out["topics"] = time.perf_counter() - start
    out["words_found"] = [c.words for c in result.components]
    return {k: round(v, 2) for k, v in result.seconds.items()}


def _table(rows):
    base = rows[0]
    lines = [f"| {'configuration':<16} | {'ingest s':>8} | {'eigen s':>7} | {'topics s':>8} | "
             f"{'total s':>7} | {'vs 1 proc':>9} | {'product ms':>10} | {'overhead ms':>11} | "
             f"{'MB/worker':>9} |",
             "|" + "|".join("-" * (w + 2) for w in (16, 8, 7, 8, 7, 9, 10, 11, 9)) + "|"]
    for r in rows:
        name = "one process" if r["workers"] == 0 else f"local:{r['workers']}"
        total = r["ingest"] + r["topics"] + r.get("cluster_start", 0.0)
        r["total"] = total
        ratio = total / (base["ingest"] + base["topics"])
        product = f"{1e3 * r['product_wall']:.0f}" if "product_wall" in r else "-"
        overhead = f"{1e3 * r['product_overhead']:.0f}" if "product_overhead" in r else "-"
        memory = f"{r['worker_mb']:.0f}" if "worker_mb" in r else "-"
        lines.append(f"| {name:<16} | {r['ingest']:>8.1f} | {r['eigen']:>7.2f} | "
                     f"{r['topics']:>8.1f} | {total:>7.1f} | {ratio:>9.2f} | {product:>10} | "
                     f"{overhead:>11} | {memory:>9} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--cache", default="/tmp/spca-bench")
    parser.add_argument("--child", nargs=2, metavar=("PATH", "WORKERS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child[0], int(args.child[1]))
        return 0
    try:
        import distributed  # noqa: F401
    except ImportError:
        print("bench_dask: skipped, the dask extra is not installed "
              "(pip install 'spca-cli[dask]')")
        return 0
    from bench.bench_scale import SIZES, TWEETS, corpus_file

    name = "tweets-1M" if args.documents == 1_000_000 else f"tweets-{args.documents}"
    SIZES.setdefault(name, dict(TWEETS, documents=args.documents))
    info = corpus_file(name, args.cache)
    print(f"{info['documents']:,} generated tweets, {info['bytes'] / 1e6:,.0f} MB "
          f"({info['path']}); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    rows = []
    for workers in [0] + [int(w) for w in args.workers.split(",")]:
        proc = subprocess.run([sys.executable, "-m", "bench.bench_dask", "--child",
                               info["path"], str(workers)], capture_output=True, text=True)
        if proc.returncode != 0:
            print(proc.stderr[-3000:], file=sys.stderr)
            return 1
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    print(_table(rows))
    same = all(r["words_found"] == rows[0]["words_found"] for r in rows)
    print(f"\nsame topics in every configuration: {same}")
    for r in rows:
        print(f"workers={r['workers']}: product with an n x {PRODUCT_BLOCK} block "
              f"{1e3 * r['product_wall']:.0f} ms; eigen step {r['eigen_products']} products; topics "
              f"stages {r['run']}" + (f"; cluster start {r['cluster_start']:.1f} s, "
                                      f"{r['blocks']} row blocks; round trips to the "
                                      f"workers {r.get('round_trips')}" if r["workers"]
                                      else ""))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
