"""Scale: seconds, throughput and peak memory per stage on generated corpora up to NYTimes size.

Run with ``python -m bench.bench_scale [--quick] [--cache DIR]``. Corpora are written once by
:func:`spca_cli.generate.write_corpus` into ``--cache`` (default /tmp/spca-bench, outside the
repository) and reused while their parameters stay the same:

* ``tweets-100k``, ``tweets-1M``: JSON lines, ~15 words each from a Zipf vocabulary of 50,000
  words, 5 planted topics, @mentions, URLs, hashtags and Twitter ``created_at``; rank-2
  spannogram (target: 1M tweets -> 5 topics of 10 words in < 20 s, < 1.5 GB);
* ``uci-nyt``: a UCI docword of 300,000 documents x 100,000 words, ~70 million nonzeros (the
  NYTimes shape, ~1 GB of text), Zipf-Mandelbrot background and bursty planted topics (see
  ``write_corpus``); rank-3 spannogram (targets: ingest < 30 s, eigen + solve < 30 s, < 4 GB).
  ``--quick`` uses 30,000 documents instead, and only the 100k tweets.

Every measurement runs in a fresh child process, so each peak resident memory (ru_maxrss, which
counts numpy's allocations, unlike tracemalloc) belongs to that run alone:

* ``end to end``: the real ``spca topics FILE -k 10 -c 5 --rank R --format json`` command (imports,
  parallel ingest, eigenpairs, solver, JSON), with its wall time and peak RSS from ``wait4``;
* the stages of the same pipeline, timed one by one in one child: ``ingest`` (``read_corpus``,
  as the CLI runs it), ``eigen`` (all ``top_eigenpairs`` calls, with the sparse products with
  S each used, and the first call again on ARPACK for comparison), ``eliminate + solve``
  (the spannogram: its elimination passes are its enumeration, so they cannot be timed apart;
  the surviving words are shown) and ``report`` (the JSON document);
  peak RSS is the high-water mark of that child up to the end of the stage;
* ``read`` / ``tokenise`` / ``build S``: a second child reads the same file serially with a
  stopwatch around each step (the real ingest overlaps them in two worker processes);
* the solvers (spannogram rank 2 and 3, tpower, threshold), each from the saved corpus in its own
  child: eigen and solve seconds and the total explained variance of the 5 topics;
* numba: the kernels compiled in a child with an empty cache, then loaded from the cache in
  another child, then called warm.

Wall time on a shared 2-core machine also counts waiting for a CPU: the load average is printed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

START = time.perf_counter()

K, COMPONENTS = 10, 5
TWEETS = dict(kind="jsonl", words=50_000, words_per_document=15, topics=5, seed=0)
# the NYTimes shape: ~233 distinct words per document after repeats become counts
NYT = dict(kind="uci", words=100_000, words_per_document=248, exponent=1.0, offset=20.0,
           topics=5, topic_repeat=2.0, seed=0)
# the second tweet generator: 20 planted topics of equal strength (each in 3% of the tweets), so
# the spectra after the Zipf head hold a cluster of near-equal eigenvalues (bench_targets)
CLUSTERED = dict(kind="jsonl", words=50_000, words_per_document=15, topics=20, topic_rate=0.6,
                 seed=1)
# the third tweet generator, shaped unlike both: a long Zipf tail (200,000 words, exponent 1),
# 12 topics of unequal strength (topic t in proportion to 1/t) and 30% reposts of earlier tweets
DUPES = dict(kind="jsonl", words=200_000, words_per_document=15, exponent=1.0, topics=12,
             topic_skew=1.0, topic_rate=0.4, duplicates=0.3, seed=2)
SIZES = {
    "tweets-100k": dict(TWEETS, documents=100_000),
    "tweets-1M": dict(TWEETS, documents=1_000_000),
    "clustered-200k": dict(CLUSTERED, documents=200_000),
    "clustered-1M": dict(CLUSTERED, documents=1_000_000),
    "dupes-200k": dict(DUPES, documents=200_000),
    "dupes-1M": dict(DUPES, documents=1_000_000),
    "uci-30k": dict(NYT, documents=30_000),
    "uci-nyt": dict(NYT, documents=300_000),
}
DEFAULT = ["tweets-100k", "tweets-1M", "uci-nyt"]
QUICK = ["tweets-100k", "uci-30k"]
RANK = {"jsonl": 2, "uci": 3}
SOLVERS = [("spannogram", 2), ("spannogram", 3), ("tpower", None), ("threshold", None)]


def _peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


# ---------------------------------------------------------------------- corpora (cached)
def corpus_file(name, cache):
    """The generated file of size ``name`` in ``cache``, written now unless already there."""
    from spca_cli.generate import write_corpus

    params = SIZES[name]
    key = hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:10]
    folder = os.path.join(cache, f"{name}-{key}")
    manifest = os.path.join(folder, "manifest.json")
    if os.path.exists(manifest):
        with open(manifest, encoding="utf-8") as f:
            info = json.load(f)
        if info["params"] == params and os.path.getsize(info["path"]) == info["bytes"]:
            return info
    os.makedirs(folder, exist_ok=True)
    kwargs = dict(params)
    kind = kwargs.pop("kind")
    path = os.path.join(folder, "tweets.jsonl" if kind == "jsonl" else "docword.bench.txt")
    t = time.perf_counter()
    out = write_corpus(path, kind, **kwargs)
    info = {"params": params, "path": out.path, "bytes": out.bytes, "nonzeros": out.nonzeros,
            "documents": out.documents, "topics": out.topics,
            "generate_seconds": round(time.perf_counter() - t, 1)}
    with open(manifest, "w", encoding="utf-8") as f:
        json.dump(info, f)
    return info


# ---------------------------------------------------------------------- child processes
def child_pipeline(path, kind, rank, npz):
    """The stages of ``spca topics`` one by one (run in a fresh process)."""
    import importlib

    import spca_cli.topics as topics_module
    from spca_cli import report
    from spca_cli.corpus import read_corpus, save_corpus
    from spca_cli.spectrum import top_eigenpairs

    # (the package exports the function spannogram under the module's name)
    spannogram_module = importlib.import_module("spca_cli.solvers.spannogram")
    out = {"import": time.perf_counter() - START, "import_mb": _peak_mb()}
    calls = []

    def counted(A, p, **kw):
        t = time.perf_counter()
        e = top_eigenpairs(A, p, **kw)
        calls.append((p, e.products, time.perf_counter() - t,
                      float(e.residuals.max() / max(e.values[0], 1e-300)), e.method,
                      e.sparse_products))
        return e

    spannogram_module.warm_up()  # compile / load the kernels before the clock (reported apart)
    topics_module.top_eigenpairs = counted
    spannogram_module.top_eigenpairs = counted
    t = time.perf_counter()
    corpus = read_corpus(path)
    out["ingest"] = time.perf_counter() - t
    out["ingest_mb"] = _peak_mb()
    out.update(documents=corpus.n_documents, words=corpus.n_words, nnz=corpus.nnz)
    t = time.perf_counter()
    result = topics_module.run_topics(corpus, solver="spannogram", k=K, n_components=COMPONENTS,
                                      rank=rank)
    out["topics_mb"] = _peak_mb()
    out["eigen"] = result.seconds["eigen"]
    out["solve"] = result.seconds["solve"]
    out["eigen_calls"] = calls
    out["surviving"] = [c.info.get("surviving_words") for c in result.components]
    out["words"] = [c.words for c in result.components]
    out["certified"] = [c.certified_ratio for c in result.components]
    t = time.perf_counter()
    report.render_json(report.to_dict(result))
    out["report"] = time.perf_counter() - t
    out["report_mb"] = _peak_mb()
    out["total"] = time.perf_counter() - START
    # the library's Lanczos on the first call, for comparison (not part of the pipeline)
    from spca_cli.matrix import Gram

    t = time.perf_counter()
    e = top_eigenpairs(Gram.from_documents(corpus.S), calls[0][0], method="arpack")
    out["arpack_first"] = (time.perf_counter() - t, e.products,
                           float(e.residuals.max() / e.values[0]))
    save_corpus(corpus, npz)
    return out


def child_breakdown(path, kind):
    """Serial read / tokenise / build S with a stopwatch around each step."""
    import numpy as np

    from spca_cli.corpus.read import _finish, _resolve
    from spca_cli.corpus.tokenize import VocabularyBuilder, make_analyzer, merge_parts
    from spca_cli.corpus.tweets import iter_jsonl

    out = {}
    if kind == "uci":
        from spca_cli.corpus.uci import BLOCK_BYTES, read_uci

        t = time.perf_counter()
        with open(path, "rb") as f:
            while f.read(BLOCK_BYTES):
                pass
        out["read"] = time.perf_counter() - t
        out["read_mb"] = _peak_mb()
        t = time.perf_counter()
        S, _ = read_uci(path)
        out["build"] = time.perf_counter() - t
        out["build_mb"] = _peak_mb()
        out["nnz"] = S.nnz
        return out
    analyzer = make_analyzer(3)
    builder = VocabularyBuilder()
    read = tokenise = build = 0.0
    docs = 0
    chunks = iter_jsonl(path)
    read_mb = tok_mb = 0.0
    while True:
        t = time.perf_counter()
        item = next(chunks, None)
        read += time.perf_counter() - t
        read_mb = max(read_mb, _peak_mb())
        if item is None:
            break
        texts = item[0]
        docs += len(texts)
        t = time.perf_counter()
        tokens = analyzer.tokenize_chunk(texts)
        tokenise += time.perf_counter() - t
        tok_mb = max(tok_mb, _peak_mb())
        t = time.perf_counter()
        builder.add(tokens, len(texts))
        build += time.perf_counter() - t
    t = time.perf_counter()
    S, vocabulary = merge_parts([builder.part()])
    settings = _resolve({}, "raw")
    result, _ = _finish(S, vocabulary, None, None, path=path, contains_ids=np.zeros(0),
                        contains=(), settings=settings, min_length_applied=True)
    build += time.perf_counter() - t
    out.update(read=read, tokenise=tokenise, build=build, documents=docs, nnz=result[0].nnz,
               read_mb=read_mb, tokenise_mb=tok_mb, build_mb=_peak_mb())
    return out


def child_solver(npz, solver, rank):
    from spca_cli.corpus import load_corpus
    from spca_cli.solvers.spannogram import warm_up
    from spca_cli.topics import run_topics

    warm_up()
    corpus = load_corpus(npz)
    t = time.perf_counter()
    result = run_topics(corpus, solver=solver, k=K, n_components=COMPONENTS, rank=rank or 2)
    return {"seconds": time.perf_counter() - t, "eigen": result.seconds["eigen"],
            "solve": result.seconds["solve"], "variance": result.total_explained_variance,
            "lambda_sum": float(sum(result.eigenvalues[:COMPONENTS])),
            "surviving": [c.info.get("surviving_words") for c in result.components],
            "notes": result.notes}


def child_numba():
    """First call (compile, or load from the cache) and warm call of every numba kernel group."""
    import numpy as np

    out = {}
    t = time.perf_counter()
    from spca_cli.kernels.uci import parse_docword
    from spca_cli.solvers.spannogram import warm_up
    from spca_cli.solvers.tpower import tpower
    from spca_cli.matrix import Gram
    from spca_cli.spectrum import top_eigenpairs
    import scipy.sparse as sp

    out["import"] = time.perf_counter() - t
    buf = np.frombuffer(b"1 2 3\n4 5 6\n", dtype=np.uint8)
    arrays = (np.empty(2, np.int32), np.empty(2, np.int32), np.empty(2))
    S = sp.csr_array(np.random.RandomState(0).rand(30, 12) > 0.5, dtype=np.float64)
    A = Gram.from_documents(S)
    eigen = top_eigenpairs(A, 2)

    def groups():
        return {"spannogram": warm_up,
                "tpower": lambda: tpower(A, 3, eigen=eigen),
                "uci parser": lambda: parse_docword(buf, *arrays, 0)}

    for name, fn in groups().items():
        t = time.perf_counter()
        fn()
        first = time.perf_counter() - t
        t = time.perf_counter()
        fn()
        out[name] = (first, time.perf_counter() - t)
    return out


def _spawn(cmd, env=None):
    """Run ``cmd``; (stdout, wall seconds, peak RSS in MB of that process alone, from wait4)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=root, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{err.read().decode()[-3000:]}")
        return out.read().decode(), wall, usage.ru_maxrss / 1024  # KiB on Linux


def _child(args, env=None):
    """A ``--child`` run of this module: (its JSON result, wall seconds, peak MB)."""
    stdout, wall, peak = _spawn([sys.executable, "-m", "bench.bench_scale", "--child", *args],
                                env=env)
    return json.loads(stdout.strip().splitlines()[-1]), wall, peak


# ---------------------------------------------------------------------- the table
def _fmt_rate(value, unit):
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:,.1f}{prefix} {unit}"
    return f"{value:,.0f} {unit}"


def measure(name, cache, rows):
    info = corpus_file(name, cache)
    path, kind = info["path"], info["params"]["kind"]
    rank = RANK[kind]
    size_mb = info["bytes"] / 1e6
    label = f"{name} ({size_mb:,.0f} MB)"
    with tempfile.TemporaryDirectory(prefix="spca-bench-") as tmp:
        npz = os.path.join(tmp, "corpus.npz")
        stdout, wall, peak = _spawn([os.path.join(os.path.dirname(sys.executable), "spca"),
                                     "topics", path, "--solver", "spannogram", "--rank",
                                     str(rank), "-k", str(K), "-c", str(COMPONENTS),
                                     "--format", "json", "--quiet"])
        doc = json.loads(stdout)
        planted = [set(t) for t in info["topics"]]
        found = sum(any(set(c["words"]) == t for c in doc["components"]) for t in planted)
        rows.append((label, f"end to end: spca topics, rank {rank}", wall, "", peak,
                     f"{doc['input']['documents']:,} docs x {doc['input']['words']:,} words, "
                     f"{doc['input']['nonzeros']:,} nnz; planted topics found {found}/"
                     f"{len(planted)} (first topic is the Zipf head)"))
        b, _, _ = _child(["breakdown", path, kind])
        if kind == "jsonl":
            rows.append((label, "read (JSON, times; serial)", b["read"],
                         _fmt_rate(size_mb / b["read"], "MB/s"), b["read_mb"], ""))
            rows.append((label, "tokenise (regex; serial)", b["tokenise"],
                         _fmt_rate(b["documents"] / b["tokenise"], "docs/s"), b["tokenise_mb"],
                         ""))
            rows.append((label, "build S (ids, CSR, filters; serial)", b["build"],
                         _fmt_rate(b["nnz"] / b["build"], "nnz/s"), b["build_mb"], ""))
        else:
            rows.append((label, "read (bytes from page cache)", b["read"],
                         _fmt_rate(size_mb / b["read"], "MB/s"), b["read_mb"], ""))
            rows.append((label, "parse + build S (read_uci)", b["build"],
                         _fmt_rate(b["nnz"] / b["build"], "nnz/s"), b["build_mb"], ""))
        p, _, _ = _child(["pipeline", path, kind, str(rank), npz])
        rows.append((label, "ingest (read_corpus, as the CLI)", p["ingest"],
                     _fmt_rate(size_mb / p["ingest"], "MB/s"), p["ingest_mb"],
                     f"imports {p['import']:.1f} s"))
        calls = p["eigen_calls"]
        worst = max(c[3] for c in calls)
        methods = sorted({c[4] for c in calls})
        rows.append((label, f"eigen ({len(calls)} calls, {'/'.join(methods)})", p["eigen"], "",
                     p["topics_mb"],
                     f"sparse products with S per call {[c[5] for c in calls]} (block products "
                     f"A X {[c[1] for c in calls]}); seconds per call "
                     f"{[round(c[2], 1) for c in calls]}; max residual/lambda_1 {worst:.0e}"))
        a_sec, a_products, a_res = p["arpack_first"]
        rows.append((label, "eigen, first call on ARPACK (comparison)", a_sec, "", None,
                     f"{a_products} single products A x = {2 * a_products} sparse products "
                     f"with S; residual/lambda_1 {a_res:.0e}"))
        rows.append((label, f"eliminate + solve (rank {rank})", p["solve"], "", p["topics_mb"],
                     f"surviving words per topic {p['surviving']}"))
        rows.append((label, "report (JSON)", p["report"], "", p["report_mb"], ""))
        for solver, r in SOLVERS:
            s, _, peak = _child(["solver", npz, solver, str(r or 0)])
            what = f"{solver} rank {r}" if r else solver
            rows.append((label, f"solver: {what}", s["seconds"], "", peak,
                         f"eigen {s['eigen']:.1f} s + solve {s['solve']:.1f} s; explained "
                         f"{s['variance']:,.0f} = {s['variance'] / s['lambda_sum']:.3f} of "
                         f"lambda_1..5" + (f"; surviving {s['surviving']}" if r else "")))


def numba_rows(rows):
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="spca-numba-") as cache:
        env["NUMBA_CACHE_DIR"] = cache
        cold, _, _ = _child(["numba"], env=env)
        cached, _, _ = _child(["numba"], env=env)
    for name in ("spannogram", "tpower", "uci parser"):
        rows.append(("numba", f"{name} kernels", cold[name][0], "", None,
                     f"first call with an empty cache (compile); from the cache "
                     f"{cached[name][0]:.2f} s; warm call {cached[name][1] * 1e3:.1f} ms"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Small sizes only (~1 minute).")
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "spca-bench"),
                        help="Folder for the generated corpora (reused) [default: %(default)s].")
    parser.add_argument("--sizes", nargs="+", choices=sorted(SIZES), help=argparse.SUPPRESS)
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        mode, *rest = args.child
        if mode == "pipeline":
            out = child_pipeline(rest[0], rest[1], int(rest[2]), rest[3])
        elif mode == "breakdown":
            out = child_breakdown(*rest)
        elif mode == "solver":
            out = child_solver(rest[0], rest[1], int(rest[2]) or None)
        else:
            out = child_numba()
        print(json.dumps(out))
        return
    os.makedirs(args.cache, exist_ok=True)
    sizes = args.sizes or (QUICK if args.quick else DEFAULT)
    rows = []
    for name in sizes:
        measure(name, args.cache, rows)
    numba_rows(rows)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; k={K}, "
          f"{COMPONENTS} topics, remove deflation; corpora cached in {args.cache}; "
          f"bench wall {time.perf_counter() - START:.0f} s")
    header = ("corpus", "stage", "seconds", "throughput", "peak RSS MB", "detail")
    table = [header] + [(c, s, f"{sec:.2f}", thr, "-" if mb is None else f"{mb:,.0f}", d)
                        for c, s, sec, thr, mb, d in rows]
    widths = [max(len(r[i]) for r in table) for i in range(5)]
    for r in table:
        print("  ".join(str(v).ljust(w) if i < 2 else str(v).rjust(w)
                        for i, (v, w) in enumerate(zip(r[:5], widths))) + "  " + r[5])


if __name__ == "__main__":
    main()
