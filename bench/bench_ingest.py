"""Ingest speed and memory on a generated million-tweet JSON-lines file.

Run with ``python -m bench.bench_ingest [--tweets N] [--seed S]``. A seeded file of N tweets
(~15 words each from a Zipf vocabulary of 50,000 words, plus @mentions, URLs and hashtags, with
Twitter-format ``created_at``) is written to a temporary folder; a child process then ingests it
(``read_corpus`` with the default recipe, then ``save_corpus``) so that its peak resident memory
is the ingest's alone. Targets: >= 100,000 tweets/s and < 2 GB peak. CPU time is printed
beside wall time: on a shared machine wall time also counts waiting for a CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]


def _words(rng, n_words):
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    lengths = rng.integers(3, 10, size=n_words)
    words = {"".join(rng.choice(letters, size=k)) for k in lengths}
    return sorted(words)


def generate(path, n_tweets, seed=0, n_words=50_000, words_per_tweet=15):
    """Write ``n_tweets`` JSON lines to ``path`` (seeded, so every run reads the same file)."""
    rng = np.random.default_rng(seed)
    vocab = np.array(_words(rng, n_words))
    start = 1_420_070_400  # 2015-01-01 UTC
    block = 100_000
    with open(path, "w", encoding="utf-8") as f:
        for first in range(0, n_tweets, block):
            n = min(block, n_tweets - first)
            lengths = rng.poisson(words_per_tweet, size=n).clip(1, 40)
            ids = (rng.zipf(1.3, size=int(lengths.sum())) - 1) % len(vocab)
            tokens = vocab[ids].tolist()
            stamps = np.sort(rng.integers(start, start + 30 * 86400, size=n))
            extras = rng.random(n)
            out = []
            pos = 0
            for i in range(n):
                text = " ".join(tokens[pos:pos + lengths[i]])
                pos += lengths[i]
                if extras[i] < 0.3:
                    text = "@user" + str(i % 997) + " " + text
                if extras[i] > 0.9:
                    text += " http://t.co/x" + str(i)
                if 0.5 < extras[i] < 0.6:
                    text += " #" + tokens[pos - 1]
                t = time.gmtime(int(stamps[i]))
                created = (f"{DAYS[t.tm_wday]} {MONTHS[t.tm_mon - 1]} {t.tm_mday:02d} "
                           f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d} +0000 {t.tm_year}")
                out.append(json.dumps({"id": first + i, "created_at": created, "text": text,
                                       "lang": "en"}))
            f.write("\n".join(out) + "\n")


def child(path, out):
    """Ingest ``path`` and report timings as JSON on stdout (run in its own process)."""
    from spca_cli.corpus import read_corpus, save_corpus

    t0, c0 = time.perf_counter(), time.process_time()
    corpus = read_corpus(path)
    t1, c1 = time.perf_counter(), time.process_time()
    save_corpus(corpus, out)
    t2 = time.perf_counter()
    print(json.dumps({"read": t1 - t0, "read_cpu": c1 - c0, "save": t2 - t1,
                      "documents": corpus.n_documents, "words": corpus.n_words,
                      "nnz": corpus.nnz}))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tweets", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", nargs=2, metavar=("INPUT", "OUTPUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child)
        return
    with tempfile.TemporaryDirectory(prefix="spca-bench-") as tmp:
        path = os.path.join(tmp, "tweets.jsonl")
        t0 = time.perf_counter()
        generate(path, args.tweets, seed=args.seed)
        gen = time.perf_counter() - t0
        size = os.path.getsize(path)
        proc = subprocess.run([sys.executable, "-m", "bench.bench_ingest", "--child", path,
                               os.path.join(tmp, "tweets.npz")],
                              capture_output=True, text=True, check=True)
        result = json.loads(proc.stdout)
        peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
    rows = [
        ("load average (1 min)", f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs "
                                 "(wall times stretch when it exceeds the CPUs)"),
        ("tweets", f"{result['documents']:,}"),
        ("input size", f"{size / 1e6:,.0f} MB (generated in {gen:.1f} s)"),
        ("words kept / nonzeros", f"{result['words']:,} / {result['nnz']:,}"),
        ("read_corpus (wall)", f"{result['read']:.2f} s = "
                               f"{result['documents'] / result['read']:,.0f} tweets/s"),
        ("read_corpus (CPU)", f"{result['read_cpu']:.2f} s = "
                              f"{result['documents'] / result['read_cpu']:,.0f} tweets/s"),
        ("save_corpus", f"{result['save']:.2f} s"),
        ("peak resident memory", f"{peak_kb / 1024:,.0f} MB"),
    ]
    width = max(len(r[0]) for r in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    main()
