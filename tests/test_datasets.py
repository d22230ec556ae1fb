"""Named data sets (``spca datasets``, ``data.dataset`` in configs): fetched from a local HTTP
server on 127.0.0.1 serving a tiny fake UCI data set (the registry's URLs and checksums are
monkeypatched), never from the network."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import http.server
import json
import socket
import threading
import time

import numpy as np
import pytest
import yaml

from spca_cli import datasets
from spca_cli.datasets import DataFile, Dataset, DatasetError

from _cli import assert_error, spca

# ---------------------------------------------------------------------------------- fixtures

D, W = 40, 12
WORDS = [f"word{i:02d}" for i in range(W)]


def docword_text(documents=D, words=W, nnz_header=None):
    """A UCI docword file of ``documents`` x ``words`` with seeded counts (every word used)."""
    rng = np.random.RandomState(0)
    entries = []
    for doc in range(1, documents + 1):
        picked = sorted(set(rng.choice(words, 4, replace=False).tolist()) | {doc % words})
        entries += [f"{doc} {w + 1} {rng.randint(1, 4)}" for w in picked]
    nnz = len(entries) if nnz_header is None else nnz_header
    return f"{documents}\n{words}\n{nnz}\n" + "\n".join(entries) + "\n"


DOCWORD = gzip.compress(docword_text().encode(), mtime=0)
VOCAB = "".join(f"{w}\n" for w in WORDS).encode()


class Server:
    """Serves ``files`` (URL path -> bytes) on 127.0.0.1; ``cut`` paths send half of their body
    and close; ``slow`` paths answer after ``delay`` seconds. ``hits`` counts the requests."""

    def __init__(self):
        self.files, self.cut, self.slow, self.hits, self.delay = {}, set(), set(), {}, 2.0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                outer.hits[self.path] = outer.hits.get(self.path, 0) + 1
                if self.path in outer.slow:
                    time.sleep(outer.delay)
                body = outer.files.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.path in outer.cut:
                    self.wfile.write(body[:len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.block_on_close = False
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = Server()
    yield s
    s.close()


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """An empty data folder, as SPCA_DATA."""
    path = tmp_path / "data"
    monkeypatch.setenv("SPCA_DATA", str(path))
    return path


def closed_port_url():
    """A URL on 127.0.0.1 where nothing listens (connection refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def fake_uci(monkeypatch, name, base_url, *, pinned=False, docword=DOCWORD, vocab=VOCAB,
             documents=D, words=W):
    """Register ``name`` as a tiny UCI data set served from ``base_url`` (sha256 pinned to the
    served bytes when ``pinned``)."""
    def sha(data):
        return hashlib.sha256(data).hexdigest() if pinned else None

    ds = Dataset(name=name, title="fake", source="a test server", licence="none",
                 documents=documents, words=words,
                 files=(DataFile(f"docword.{name}.txt.gz", f"{base_url}/docword.{name}.txt.gz",
                                 sha(docword), len(docword), "docword"),
                        DataFile(f"vocab.{name}.txt", f"{base_url}/vocab.{name}.txt",
                                 sha(vocab), len(vocab), "vocab")))
    monkeypatch.setitem(datasets.REGISTRY, name, ds)
    return ds


def serve_uci(server, name, docword=DOCWORD, vocab=VOCAB):
    server.files[f"/docword.{name}.txt.gz"] = docword
    server.files[f"/vocab.{name}.txt"] = vocab


def leftovers(path):
    return sorted(p.name for p in path.rglob("*")) if path.exists() else []


# ---------------------------------------------------------------------------------- fetch


def test_fetch_downloads_an_unpinned_data_set_and_records_its_sha256(server, folder, monkeypatch):
    fake_uci(monkeypatch, "nips", server.url)
    serve_uci(server, "nips")
    result = spca("datasets", "fetch", "nips")
    assert result.exit_code == 0, result.output
    docword, vocab = folder / "docword.nips.txt.gz", folder / "vocab.nips.txt"
    assert result.stdout.splitlines() == [str(docword), str(vocab)]
    assert docword.read_bytes() == DOCWORD and vocab.read_bytes() == VOCAB
    record = json.loads((folder / "docword.nips.txt.gz.download.json").read_text())
    assert record["sha256"] == hashlib.sha256(DOCWORD).hexdigest()
    assert record["bytes"] == len(DOCWORD)
    assert record["url"] == f"{server.url}/docword.nips.txt.gz"
    assert leftovers(folder) == ["docword.nips.txt.gz", "docword.nips.txt.gz.download.json",
                                 "vocab.nips.txt", "vocab.nips.txt.download.json"]
    listed = json.loads(spca("datasets", "list", "--format", "json").stdout)
    (nips,) = [d for d in listed["datasets"] if d["name"] == "nips"]
    assert nips["present"] and listed["folder"] == str(folder)
    assert [f["checksum"] for f in nips["files"]] == ["recorded at its first download"] * 2
    assert spca("datasets", "path", "nips").stdout == f"{docword}\n"


def test_a_second_fetch_downloads_nothing(server, folder, monkeypatch):
    fake_uci(monkeypatch, "nips", server.url)
    serve_uci(server, "nips")
    assert spca("datasets", "fetch", "nips").exit_code == 0
    hits = dict(server.hits)
    again = spca("datasets", "fetch", "nips")
    assert again.exit_code == 0
    assert server.hits == hits == {"/docword.nips.txt.gz": 1, "/vocab.nips.txt": 1}
    assert f"present: {folder / 'docword.nips.txt.gz'}" in again.stderr


def test_a_pinned_data_set_downloads_when_its_sha256_matches(server, folder, monkeypatch):
    fake_uci(monkeypatch, "kos", server.url, pinned=True)
    serve_uci(server, "kos")
    assert spca("datasets", "fetch", "kos").exit_code == 0
    assert (folder / "docword.kos.txt.gz").read_bytes() == DOCWORD
    assert not (folder / "docword.kos.txt.gz.download.json").exists()  # the code pins it


def test_a_checksum_mismatch_leaves_no_file_and_one_error_line(server, folder, monkeypatch):
    fake_uci(monkeypatch, "kos", server.url, pinned=True)
    other = gzip.compress(docword_text().encode(), mtime=1)  # same text, other bytes
    serve_uci(server, "kos", docword=other)
    result = spca("datasets", "fetch", "kos")
    url, path = f"{server.url}/docword.kos.txt.gz", folder / "docword.kos.txt.gz"
    assert_error(result, f"cannot download kos from {url}: sha256 "
                         f"{hashlib.sha256(other).hexdigest()} does not match the registered "
                         f"{hashlib.sha256(DOCWORD).hexdigest()}; put the file at {path}")
    assert leftovers(folder) == []


def test_a_cut_download_leaves_no_partial_file(server, folder, monkeypatch):
    fake_uci(monkeypatch, "nips", server.url)
    serve_uci(server, "nips")
    server.cut.add("/docword.nips.txt.gz")
    result = spca("datasets", "fetch", "nips")
    url, path = f"{server.url}/docword.nips.txt.gz", folder / "docword.nips.txt.gz"
    assert_error(result, f"cannot download nips from {url}: the connection closed after "
                         f"{len(DOCWORD) // 2:,} of {len(DOCWORD):,} bytes; put the file at "
                         f"{path}")
    assert leftovers(folder) == []


def test_no_network_is_one_error_line_naming_the_url_and_where_to_put_the_file(folder,
                                                                                monkeypatch):
    base = closed_port_url()
    fake_uci(monkeypatch, "nips", base)
    result = spca("datasets", "fetch", "nips")
    assert_error(result, f"cannot download nips from {base}/docword.nips.txt.gz: Connection "
                         f"refused; put the file at {folder / 'docword.nips.txt.gz'}")
    assert not folder.exists()  # the data folder it made for the download is removed again


def test_a_server_that_does_not_answer_times_out(server, folder, monkeypatch):
    fake_uci(monkeypatch, "nips", server.url)
    serve_uci(server, "nips")
    server.slow.add("/docword.nips.txt.gz")
    with pytest.raises(DatasetError, match=r"^cannot download nips from .*: no answer within "
                                           r"0\.3 s; put the file at "):
        datasets.fetch("nips", timeout=0.3)
    assert leftovers(folder) == []


def test_an_http_error_names_its_status(server, folder, monkeypatch):
    fake_uci(monkeypatch, "nips", server.url)  # nothing served: 404
    result = spca("datasets", "fetch", "nips")
    assert_error(result, f"cannot download nips from {server.url}/docword.nips.txt.gz: HTTP 404 "
                         f"Not Found; put the file at {folder / 'docword.nips.txt.gz'}")


@pytest.mark.parametrize("docword, vocab, reason", [
    (docword_text().encode(), VOCAB, "not a gzip file (a UCI docword file is gzip-compressed)"),
    (gzip.compress(docword_text(documents=D + 1).encode()), VOCAB,
     f"its header says {D + 1} documents x {W} words, expected {D} x {W}"),
    (gzip.compress(docword_text(nnz_header=7).encode()), VOCAB,
     f"{docword_text().count(chr(10)) - 3} entries after the header, which says NNZ = 7"),
    (gzip.compress(docword_text().encode())[:-12], VOCAB,
     "the gzip stream ends early (the file is cut)"),
    (DOCWORD, VOCAB + b"extra\n", f"{W + 1} lines, expected one word per line for {W} words"),
], ids=["not gzip", "other shape", "wrong NNZ", "cut gzip", "vocabulary"])
def test_an_unpinned_file_of_the_wrong_format_is_refused(server, folder, monkeypatch, docword,
                                                         vocab, reason):
    fake_uci(monkeypatch, "nips", server.url)
    serve_uci(server, "nips", docword=docword, vocab=vocab)
    name = "vocab.nips.txt" if vocab != VOCAB else "docword.nips.txt.gz"
    result = spca("datasets", "fetch", "nips")
    assert_error(result, f"cannot download nips from {server.url}/{name}: {reason}; put the "
                         f"file at {folder / name}")
    assert name not in leftovers(folder)
    assert not any(n.startswith(".tmp-spca-") for n in leftovers(folder))


def test_files_already_in_spca_data_are_used_without_downloading(folder, monkeypatch):
    fake_uci(monkeypatch, "nips", closed_port_url())  # any download would fail
    folder.mkdir()
    (folder / "docword.nips.txt.gz").write_bytes(DOCWORD)
    (folder / "vocab.nips.txt").write_bytes(VOCAB)
    result = spca("datasets", "fetch", "nips")
    assert result.exit_code == 0, result.output
    assert spca("datasets", "path", "nips").stdout == f"{folder / 'docword.nips.txt.gz'}\n"
    listed = json.loads(spca("datasets", "list", "--format", "json").stdout)
    (nips,) = [d for d in listed["datasets"] if d["name"] == "nips"]
    assert nips["present"]
    assert nips["files"][0]["checksum"].startswith("not recorded")


def test_a_damaged_file_is_reported_and_fetched_again(server, folder, monkeypatch):
    fake_uci(monkeypatch, "kos", server.url, pinned=True)
    serve_uci(server, "kos")
    folder.mkdir()
    damaged = folder / "docword.kos.txt.gz"
    damaged.write_bytes(DOCWORD[:-1] + b"x")
    bad = hashlib.sha256(DOCWORD[:-1] + b"x").hexdigest()
    assert_error(spca("datasets", "path", "kos"),
                 f"{damaged}: sha256 {bad} does not match the registered "
                 f"{hashlib.sha256(DOCWORD).hexdigest()}; run `spca datasets fetch kos` to "
                 f"download it again")
    result = spca("datasets", "fetch", "kos")
    assert result.exit_code == 0, result.output
    assert f"Warning: {damaged}: sha256 {bad} does not match" in result.stderr
    assert damaged.read_bytes() == DOCWORD


def test_path_of_an_absent_data_set_says_how_to_fetch_it(folder, monkeypatch):
    fake_uci(monkeypatch, "nips", closed_port_url())
    assert_error(spca("datasets", "path", "nips"),
                 f"data set nips is not in {folder} (missing docword.nips.txt.gz and "
                 f"vocab.nips.txt); run `spca datasets fetch nips` or set SPCA_DATA to a folder "
                 f"that holds them")


def test_an_unknown_name_is_a_usage_error():
    result = spca("datasets", "fetch", "kos2")
    assert result.exit_code == 2
    assert ("unknown data set 'kos2'; expected one of airline, airline-matrix, enron, kos, "
            "kos-matrix, nips, nytimes") in result.output


def test_the_data_folder_is_spca_data_then_xdg_cache_home_then_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SPCA_DATA", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert datasets.data_folder() == tmp_path / "home" / ".cache" / "spca"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # not absolute: ignored (XDG spec)
    assert datasets.data_folder() == tmp_path / "home" / ".cache" / "spca"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert datasets.data_folder() == tmp_path / "xdg" / "spca"
    monkeypatch.setenv("SPCA_DATA", str(tmp_path / "mine"))
    assert datasets.data_folder() == tmp_path / "mine"
    assert datasets.folder_origin() == "SPCA_DATA"


def test_every_registered_file_has_a_source_and_the_uci_ones_their_shape():
    for ds in datasets.REGISTRY.values():
        assert ds.files and ds.source and ds.licence
        for f in ds.files:
            assert (f.url is not None) != (ds.derived_from is not None), f.name
            assert f.sha256 is not None or f.kind in ("docword", "vocab"), f.name
        if ds.files[0].kind == "docword":
            assert ds.documents and ds.words
    assert (datasets.REGISTRY["nytimes"].documents, datasets.REGISTRY["nytimes"].words) == (
        300_000, 102_660)


# ---------------------------------------------------------------------------------- configs


def tiny_config(tmp_path, name="cfg.yaml"):
    raw = {"title": "tiny", "reproduces": "nothing (a test)", "measure": "components",
           "data": {"dataset": "nips"},
           "runs": [{"label": "T", "solver": "threshold", "k": 3, "components": 2}]}
    path = tmp_path / name
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return path


def test_a_config_naming_an_absent_data_set_is_one_line_saying_how_to_get_it(tmp_path, folder,
                                                                              monkeypatch):
    base = closed_port_url()
    fake_uci(monkeypatch, "nips", base)
    config = tiny_config(tmp_path)
    result = spca("reproduce", config, "-o", tmp_path / "out")
    assert_error(result, f"{config}: data.dataset: nips is not in {folder} and could not be "
                         f"downloaded (cannot download nips from {base}/docword.nips.txt.gz: "
                         f"Connection refused); run `spca datasets fetch nips` where the network "
                         f"allows, or put docword.nips.txt.gz and vocab.nips.txt in {folder}, or "
                         f"set SPCA_DATA to a folder holding them")
    assert leftovers(folder) == [] and not (tmp_path / "out").exists()


def test_a_config_fetches_its_data_set_on_first_use(tmp_path, server, folder, monkeypatch):
    fake_uci(monkeypatch, "nips", server.url)
    serve_uci(server, "nips")
    config = tiny_config(tmp_path)
    result = spca("reproduce", config, "--format", "json", "--quiet")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["data"]["source"] == "data set nips (docword.nips.txt.gz)"
    assert doc["data"]["documents"] == D and doc["data"]["words"] == W
    assert (folder / "docword.nips.txt.gz").read_bytes() == DOCWORD
    hits = dict(server.hits)
    assert spca("reproduce", config, "--format", "json", "--quiet").exit_code == 0
    assert server.hits == hits  # the second run finds it


# ---------------------------------------------------------------------------------- real data


def test_the_published_matrices_are_built_byte_for_byte_from_their_sources(tmp_path,
                                                                           monkeypatch):
    from conftest import dataset_paths

    sources = dataset_paths("kos") + dataset_paths("airline")
    monkeypatch.setenv("SPCA_DATA", str(tmp_path))
    for path in sources:
        (tmp_path / path.name).write_bytes(path.read_bytes())
    built = datasets.fetch("kos-matrix") + datasets.fetch("airline-matrix")
    assert [p.relative_to(tmp_path).as_posix() for p in built] == [
        "matrices/kos.mtx", "matrices/kos.vocab.txt", "matrices/airline.mtx",
        "matrices/airline.vocab.txt"]
    pinned = {f.name: f.sha256 for name in ("kos-matrix", "airline-matrix")
              for f in datasets.REGISTRY[name].files}
    for path in built:
        rel = path.relative_to(tmp_path).as_posix()
        assert hashlib.sha256(path.read_bytes()).hexdigest() == pinned[rel]


def test_a_broken_build_leaves_no_matrix_and_says_where_to_put_the_published_one(
        tmp_path, monkeypatch):
    from conftest import dataset_paths

    sources = dataset_paths("kos")
    monkeypatch.setenv("SPCA_DATA", str(tmp_path))
    for path in sources:
        (tmp_path / path.name).write_bytes(path.read_bytes())
    wrong = dataclasses.replace(datasets.REGISTRY["kos-matrix"].files[0], sha256="0" * 64)
    monkeypatch.setitem(datasets.REGISTRY, "kos-matrix", dataclasses.replace(
        datasets.REGISTRY["kos-matrix"], files=(wrong, datasets.REGISTRY["kos-matrix"].files[1])))
    with pytest.raises(DatasetError) as info:
        datasets.fetch("kos-matrix")
    assert str(info.value).startswith("cannot build kos-matrix from kos: the built "
                                      "matrices/kos.mtx differs from the published one (sha256 ")
    assert str(info.value).endswith(f"expected {'0' * 64}); put the published files at "
                                    f"{tmp_path / 'matrices/kos.mtx'} and "
                                    f"{tmp_path / 'matrices/kos.vocab.txt'}")
    assert not (tmp_path / "matrices").exists() or leftovers(tmp_path / "matrices") == []
