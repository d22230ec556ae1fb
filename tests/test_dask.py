"""The Dask engine (``--scheduler``): the same corpus and topics as one process.

One LocalCluster with worker processes (2 workers, 1 thread each) serves the whole module, so
every task and result crosses a pickle boundary as on a real cluster; the CLI reaches it by its
``tcp://`` address. The corpus is the Twitter US Airline Sentiment CSV (../shared/data,
PROVENANCE.md), rewritten as JSON lines and split unevenly into four files, one gzipped.
"""

from __future__ import annotations

import csv
import gzip
import json
import math
import os
import sys

import numpy as np
import pytest

pytest.importorskip("distributed")  # a guard only: `make test` installs the dask extra

from _cli import assert_error, spca  # noqa: E402

from spca_cli.corpus import load_input  # noqa: E402
from spca_cli.distributed.corpus import MANIFEST  # noqa: E402
from spca_cli.distributed.ingest import plan_partitions, read_distributed  # noqa: E402
from spca_cli.matrix import Gram  # noqa: E402

# documents per file: uneven, and the second file is gzipped (one partition, never split)
_CUTS = (6000, 2000, 5000)
_NAMES = ("part-a.jsonl", "part-b.jsonl.gz", "part-c.jsonl", "part-d.jsonl")
# plain files above this many bytes are split into byte ranges (the default is 64 MB)
_SPLIT = 300_000


@pytest.fixture(scope="module")
def cluster():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as local, Client(local) as client:
        yield client


@pytest.fixture(scope="module")
def parts(tmp_path_factory, request):
    """The airline tweets as four JSON-lines files; returns the glob that reads them."""
    from conftest import shared_file

    source = shared_file("twitter_us_airline_sentiment.csv")
    folder = tmp_path_factory.mktemp("airline-parts")
    with open(source, encoding="utf-8", newline="") as fh:
        lines = [json.dumps({"id_str": row["tweet_id"], "text": row["text"],
                             "created_at": row["tweet_created"]}) + "\n"
                 for row in csv.DictReader(fh)]
    bounds = np.cumsum((0, *_CUTS, len(lines) - sum(_CUTS)))
    for name, lo, hi in zip(_NAMES, bounds, bounds[1:]):
        data = "".join(lines[lo:hi]).encode("utf-8")
        with (gzip.open if name.endswith(".gz") else open)(folder / name, "wb") as fh:
            fh.write(data)
    return str(folder / "part-*")


@pytest.fixture(scope="module")
def one_process(parts):
    """The parts read by the single-process ingest."""
    return load_input(parts)


@pytest.fixture(scope="module")
def remote(cluster, parts):
    """The parts read on the cluster, plain files in several byte ranges each."""
    return read_distributed(cluster, parts, split_bytes=_SPLIT)


@pytest.fixture
def small_ranges(monkeypatch):
    """Split the plain files into several byte ranges, as big files are."""
    monkeypatch.setattr("spca_cli.distributed.ingest.SPLIT_BYTES", _SPLIT)
    monkeypatch.setattr("spca_cli.distributed.ingest.MIN_SPLIT_BYTES", _SPLIT)


@pytest.fixture(autouse=True)
def no_scheduler_variable(monkeypatch):
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)


def _address(client):
    return client.scheduler.address


def test_split_size_gives_each_worker_two_ranges(tmp_path):
    from spca_cli.distributed.ingest import MIN_SPLIT_BYTES, SPLIT_BYTES, split_size

    path = tmp_path / "lines.txt"
    path.write_bytes(b"a line of text\n" * 1_000_000)  # 15 MB
    assert split_size([str(path)], "text", 2) == 15_000_000 // 4
    assert split_size([str(path)], "text", 100) == MIN_SPLIT_BYTES
    assert split_size([str(path)], "text", 1) == 15_000_000 // 2
    assert split_size([str(path)], "csv", 2) == SPLIT_BYTES  # CSV files are never split


def test_partitions_split_plain_files_only(parts, small_ranges):
    plan = plan_partitions(sorted(__import__("glob").glob(parts)), "jsonl")
    by_file = {}
    for part in plan:
        by_file.setdefault(os.path.basename(part.path), []).append(part.byte_range)
    assert list(by_file) == list(_NAMES)  # input order
    assert by_file["part-b.jsonl.gz"] == [None]  # a gzip stream is one partition
    for name in ("part-a.jsonl", "part-c.jsonl", "part-d.jsonl"):
        ranges = by_file[name]
        size = os.path.getsize(os.path.join(os.path.dirname(parts), name))
        assert len(ranges) == math.ceil(size / _SPLIT) >= 2
        assert ranges[0][0] == 0 and ranges[-1][1] == size
        assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))


def test_same_corpus_as_one_process(one_process, remote):
    one, distributed = one_process, remote
    assert len(distributed.blocks) > len(_NAMES)  # byte ranges were read as partitions
    got = distributed.to_corpus()
    # the tweets repeating one read before them (364) set aside on the cluster as here
    assert got.S.shape == one.S.shape == (14276, 5177)
    assert distributed.duplicates == one.duplicates == {"exact": 364, "near": 0}
    assert np.array_equal(got.rows, one.rows)
    for name in ("indptr", "indices", "data"):
        assert np.array_equal(getattr(got.S, name), getattr(one.S, name)), name
    assert np.array_equal(got.vocabulary, one.vocabulary)
    assert np.array_equal(got.times, one.times)
    assert np.array_equal(got.tz_offsets, one.tz_offsets)
    assert list(got.texts) == list(one.texts)
    assert list(got.ids) == list(one.ids)
    assert distributed.nnz == one.nnz and distributed.n_documents == one.n_documents


def test_filters_run_on_the_workers(cluster, parts, small_ranges):
    options = dict(since="2015-02-20", until="2015-02-22", contains=("delayed", "cancelled"),
                   min_count=3, weighting="tfidf")
    one = load_input(parts, **options)
    got = read_distributed(cluster, parts, **options).to_corpus()
    assert 0 < got.n_documents < 14640
    assert np.array_equal(got.vocabulary, one.vocabulary)
    assert np.array_equal(got.S.indptr, one.S.indptr)
    assert np.array_equal(got.S.indices, one.S.indices)
    assert np.allclose(got.S.data, one.S.data, rtol=1e-12, atol=0)  # tf-idf: to rounding
    assert list(got.ids) == list(one.ids)


def test_near_duplicates_and_kept_duplicates_as_one_process(cluster, parts, small_ranges):
    for options, documents in ((dict(near_duplicates=True), 14262),
                               (dict(keep_duplicates=True), 14640)):
        one = load_input(parts, **options)
        remote = read_distributed(cluster, parts, **options)
        got = remote.to_corpus()
        assert got.n_documents == one.n_documents == documents
        assert remote.duplicates == one.duplicates
        assert (got.rows is None) == (one.rows is None)
        if one.rows is not None:
            assert np.array_equal(got.rows, one.rows)
        assert (got.S != one.S).nnz == 0 and list(got.ids) == list(one.ids)


def test_backend_answers_as_local(one_process, remote):
    one = one_process
    local, remote = Gram.from_documents(one.S), Gram.from_backend(remote.backend)
    X = np.random.default_rng(0).standard_normal((one.n_words, 8))
    assert np.allclose(remote.matmat(X), local.matmat(X), rtol=1e-12, atol=1e-9)
    idx = np.array([0, 17, 4000, one.n_words - 1])
    assert np.array_equal(remote.submatrix(idx), local.submatrix(idx))
    assert np.array_equal(remote.base_columns(idx), local.base_columns(idx))
    assert np.array_equal(remote.diagonal(), local.diagonal())
    w = np.array([0.5, -1.0, 2.0, 0.25])
    assert np.allclose(remote.backend.sparse_matvec(idx, w), local.backend.sparse_matvec(idx, w),
                       rtol=1e-12, atol=1e-12)
    assert remote.is_nonnegative() and local.is_nonnegative()
    # a deflated view goes through the same Gram code on either backend
    view_l, view_r = local.remove(idx[:2]), remote.remove(idx[:2])
    assert np.array_equal(view_r.diagonal(), view_l.diagonal())


def test_a_shard_sent_to_another_worker_answers_as_on_its_own(cluster, remote):
    """Dask may run a task on another worker than its shard's, or spill the shard to disk: the
    shard pickles (its backend's lock stays behind) with the columns it formed and answers the
    same there; and the scheduler weighs moving it by the bytes of its rows."""
    from dask.sizeof import sizeof
    from distributed import wait

    from spca_cli.distributed.backend import _ask

    shard = remote.backend.shards[0]
    wait([shard], timeout=60)  # (made on its worker, where it stays)
    idx = np.array([0, 17, 400])
    (home, *_) = cluster.who_has([shard])[shard.key]
    own = cluster.submit(_ask, shard, "columns", idx, workers=[home], pure=False)
    here = own.result(timeout=60)
    other = next(w for w in cluster.scheduler_info()["workers"] if w != home)
    moved = cluster.submit(_ask, shard, "columns", idx, workers=[other],
                           allow_other_workers=False, pure=False)
    assert np.array_equal(moved.result(timeout=60), here)
    size, nnz = cluster.submit(lambda s: (sizeof(s), s.local.S.nnz), shard, workers=[home],
                               pure=False).result(timeout=60)
    assert nnz > 1000 and size >= 12 * nnz  # (8-byte values and 4-byte word ids at least)


def _without_seconds(doc):
    if isinstance(doc, dict):
        return {k: _without_seconds(v) for k, v in doc.items() if k != "seconds"}
    if isinstance(doc, list):
        return [_without_seconds(v) for v in doc]
    return doc


def _assert_same(a, b, where="$"):
    """Equal JSON documents, floats to rounding (sums over the workers' blocks add in another
    order)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and sorted(a) == sorted(b), where
        for key in a:
            _assert_same(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and not isinstance(b, bool):
        assert b == pytest.approx(a, rel=1e-7, abs=1e-9), where
    else:
        assert a == b, where


def test_topics_json_as_one_process(cluster, parts, tmp_path):
    args = ["topics", parts, "--solver", "tpower", "-k", "5", "-c", "2", "--format", "json",
            "--documents", "3", "-q"]
    one = spca(*args, "--assignments", tmp_path / "one.csv")
    assert one.exit_code == 0, one.output
    remote = spca(*args, "--assignments", tmp_path / "remote.csv",
                  "--scheduler", _address(cluster))
    assert remote.exit_code == 0, remote.output
    a, b = json.loads(one.stdout), json.loads(remote.stdout)
    assert [c["words"] for c in a["components"]] == [c["words"] for c in b["components"]]
    assert a["components"][0]["top_documents"][0]["text"]  # the texts came from the workers
    _assert_same(_without_seconds(a), _without_seconds(b))
    with open(tmp_path / "one.csv") as f1, open(tmp_path / "remote.csv") as f2:
        rows1, rows2 = list(csv.reader(f1)), list(csv.reader(f2))
    assert len(rows1) == len(rows2) == 14277  # a row per tweet kept, numbered as read
    for r1, r2 in zip(rows1, rows2):
        assert r1[:4] == r2[:4]
        if r1[0] != "row":
            assert np.allclose([float(v) for v in r2[4:]], [float(v) for v in r1[4:]],
                               rtol=1e-12, atol=1e-12)


def test_ingest_folder_of_row_blocks(cluster, parts, tmp_path, small_ranges):
    folder = tmp_path / "airline-blocks"
    saved = spca("ingest", parts, "-o", folder, "--scheduler", _address(cluster))
    assert saved.exit_code == 0, saved.output
    assert "14,276 documents x 5,177 words" in saved.output
    manifest = json.loads((folder / MANIFEST).read_text())
    assert sum(manifest["rows"]) == 14276 and len(manifest["blocks"]) > len(_NAMES)
    # read back in one process, and on the cluster: the same as the raw input's
    raw = json.loads(spca("info", parts, "--format", "json", "-q").stdout)
    here = json.loads(spca("info", folder, "--format", "json", "-q").stdout)
    there = json.loads(spca("info", folder, "--format", "json", "-q",
                            "--scheduler", _address(cluster)).stdout)
    for got in (here, there):
        assert got["kind"] == "corpus" and got["path"] == str(folder)
        for key in ("documents", "words", "nonzeros", "first_time", "last_time", "top_words",
                    "duplicates_set_aside"):
            assert got[key] == raw[key], key
        assert got["eigenvalues"] == pytest.approx(raw["eigenvalues"], rel=1e-9)


def test_spectrum_on_the_cluster(cluster, parts):
    one = json.loads(spca("spectrum", parts, "--top", "4", "--format", "json", "-q").stdout)
    remote = spca("spectrum", parts, "--top", "4", "--format", "json", "-q",
                  "--scheduler", _address(cluster))
    got = json.loads(remote.stdout)
    assert got["eigenvalues"] == pytest.approx(one["eigenvalues"], rel=1e-9)
    assert got["trace"] == one["trace"] == 98014.0  # binary weighting: trace = nonzeros


def test_daily_on_the_cluster(cluster, parts, tmp_path):
    args = ["daily", parts, "--date", "2015-02-22", "--timezone", "America/Los_Angeles",
            "--solver", "tpower", "-k", "5", "-c", "2", "--quiet"]
    assert spca(*args, "--out", tmp_path / "one").exit_code == 0
    remote = spca(*args, "--out", tmp_path / "remote", "--scheduler", _address(cluster))
    assert remote.exit_code == 0, remote.output
    a = json.loads((tmp_path / "one" / "2015-02-22.json").read_text())
    b = json.loads((tmp_path / "remote" / "2015-02-22.json").read_text())
    assert a["documents"] == b["documents"] > 0
    _assert_same(_without_seconds(a), _without_seconds(b))


def test_bad_line_in_a_byte_range_names_the_file_line(cluster, tmp_path, small_ranges):
    path = tmp_path / "tweets.jsonl"
    good = json.dumps({"text": "delayed flight again", "created_at": "2015-02-20 10:00:00"})
    lines = [good] * 20000 + ["{not json"] + [good] * 10
    path.write_text("\n".join(lines) + "\n")
    assert os.path.getsize(path) > 2 * _SPLIT  # the bad line is in a later range
    one = spca("topics", path, "-q")
    remote = spca("topics", path, "-q", "--scheduler", _address(cluster))
    assert one.exit_code == remote.exit_code == 1
    assert "line 20001" in one.output
    assert remote.output == one.output


def test_scheduler_errors(cluster, parts, monkeypatch):
    assert_error(spca("info", "-", "--input-format", "text", "--scheduler",
                      _address(cluster)),
                 "standard input (-) cannot be read by a cluster's workers; save it to a "
                 "file they can read")
    assert_error(spca("info", parts, "--scheduler", "localhost"),
                 "--scheduler must be local:N (N workers) or a scheduler address such as "
                 "tcp://HOST:8786, got 'localhost'")
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", "local:0")
    assert_error(spca("info", parts), "--scheduler local:N needs N >= 1, got local:0")


def test_ingest_refuses_a_folder_it_would_overwrite(cluster, parts, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "todo.txt").write_text("keep me\n")
    assert_error(spca("ingest", parts, "-o", folder, "--scheduler", _address(cluster)),
                 f"{folder}: exists and is not an empty folder or a saved corpus folder; give "
                 "a new name")
    assert sorted(os.listdir(folder)) == ["todo.txt"]
    assert (folder / "todo.txt").read_text() == "keep me\n"


def test_without_the_extra_scheduler_says_how_to_install(parts, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    assert_error(spca("info", parts, "--scheduler", "local:2"),
                 "--scheduler needs Dask distributed, which is not installed: "
                 "pip install 'spca-cli[dask]'")
    # and without --scheduler nothing needs it
    assert spca("info", parts, "--format", "json", "-q").exit_code == 0


def test_a_lost_worker_is_one_error_line():
    from types import SimpleNamespace

    from distributed.scheduler import KilledWorker

    from spca_cli.distributed import gather
    from spca_cli.errors import SpcaError

    class LostWorkers:
        def gather(self, futures):
            raise KilledWorker("matmat-1", SimpleNamespace(address="tcp://10.0.0.7:4000"), 3)

    with pytest.raises(SpcaError) as caught:
        gather(LostWorkers(), [])
    message = str(caught.value)
    assert message.startswith("the cluster lost the workers running a task, too often to "
                              "retry (out of memory?): ")
    assert "tcp://10.0.0.7:4000" in message and "\n" not in message
