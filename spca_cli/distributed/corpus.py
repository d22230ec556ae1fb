"""A corpus whose rows live on the workers of a Dask cluster, and what commands ask of it.

The client holds the vocabulary, the number of rows of each block and a few totals; the row
blocks (each an ordinary block-sized :class:`~spca_cli.corpus.core.Corpus`: S, times, texts,
ids) stay in worker memory. Products with A = S^T S go through
:class:`~spca_cli.distributed.backend.DaskBackend`; a topic's coverage and top documents are
found block by block on the workers (only the best few documents of each block travel).

Saved, it is a folder of row blocks (``block-00000.npz``, ... each a corpus file of
:mod:`spca_cli.corpus.store`) and ``spca-corpus.json`` naming them in order; the workers write
and read the blocks, so the folder must be on storage they share with the client.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile

import numpy as np
import scipy.sparse as sp

from spca_cli.corpus.core import Corpus
from spca_cli.corpus.texts import Strings
from spca_cli.corpus.times import format_time
from spca_cli.distributed import gather
from spca_cli.distributed.backend import DaskBackend, make_shards
from spca_cli.errors import SpcaInputError, SpcaOutputError

__all__ = ["DistributedCorpus", "is_corpus_folder", "MANIFEST", "load_corpus_folder"]

#: The file that makes a folder a saved corpus of row blocks.
MANIFEST = "spca-corpus.json"
_FORMAT = "spca-corpus-blocks"
#: the temporary folders beside a saved folder: the blocks being written, the corpus replaced
_BLOCKS_PREFIX, _OLD_PREFIX = ".spca-blocks-", ".spca-old-"


def is_corpus_folder(path):
    """True when ``path`` is a folder written by :meth:`DistributedCorpus.save`."""
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, MANIFEST))


def _block_facts(block):
    """Worker -> client: nnz, and the rows of the first and last time, of one block."""
    times = block.times
    first = last = None
    if times is not None and len(times):
        i, j = int(np.argmin(times)), int(np.argmax(times))
        first = (int(times[i]), int(block.tz_offsets[i]))
        last = (int(times[j]), int(block.tz_offsets[j]))
    return {"nnz": int(block.S.nnz), "first": first, "last": last}


def _block_documents(block, first_row, components, n_documents):
    """Worker: per topic, the coverage count of the block and its ``n_documents`` best
    documents as records (global row numbers)."""
    from spca_cli.documents import (coverage_counts, distinct_top_rows, document_record,
                                    topic_scores)

    counts = coverage_counts(block.S, components)
    best = []
    if n_documents > 0:
        scores = topic_scores(block.S, components)
        for j in range(len(components)):
            records = []
            for row in distinct_top_rows(scores[:, j], n_documents, block.texts):
                record = document_record(block, row, scores[row, j])
                if block.rows is None:  # (with rows, the record holds the position read)
                    record["row"] = int(first_row + row)
                records.append(record)
            best.append(records)
    return counts, best


def _block_assignments(block, first_row, components):
    """Worker: the CSV lines of ``spca topics --assignments`` for the rows of one block, as
    :func:`spca_cli.documents.write_assignments` writes them."""
    import csv
    import io

    from spca_cli.documents import best_topics, topic_scores

    scores = topic_scores(block.S, components)
    best = best_topics(scores)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for r in range(scores.shape[0]):
        time = "" if block.times is None else format_time(block.times[r], block.tz_offsets[r])
        row = first_row + r if block.rows is None else int(block.rows[r])
        writer.writerow([row, "" if block.ids is None else block.ids[r], time,
                         best[r] or "", *map(repr, scores[r].tolist())])
    return out.getvalue()


def _block_document_frequency(block):
    S = block.S
    return np.bincount(S.indices[S.data != 0], minlength=S.shape[1]).astype(np.int64)


def _save_block(block, path):
    from spca_cli.corpus.store import save_corpus

    save_corpus(block, path)
    return os.path.getsize(path)


def _load_block(path, vocabulary):
    from spca_cli.corpus.store import load_corpus

    block = load_corpus(path)
    if not np.array_equal(block.vocabulary, vocabulary):
        raise SpcaInputError(path, "its vocabulary is not the one of the other blocks of "
                                   f"the folder ({MANIFEST})")
    block.vocabulary = vocabulary
    return block


class DistributedCorpus:
    """A corpus as row blocks on a cluster (see the module); made by
    :func:`~spca_cli.distributed.ingest.read_distributed` or :func:`load_corpus_folder`.

    Attributes
    ----------
    vocabulary, kind, path, options, paths
        As on :class:`~spca_cli.corpus.core.Corpus`.
    backend : DaskBackend
        The products with A = S^T S (``Gram.from_backend(corpus.backend)``).
    rows : list of int
        Documents in each block, in input order.
    """

    S = None  # never on the client

    def __init__(self, client, blocks, vocabulary, *, rows, kind, path, options, paths,
                 timed, has_texts, has_ids):
        self.client = client
        self.blocks = list(blocks)
        self.vocabulary = vocabulary
        self.rows = [int(r) for r in rows]
        self.kind, self.path, self.options, self.paths = kind, path, options, list(paths)
        self.timed, self.has_texts, self.has_ids = timed, has_texts, has_ids
        facts = gather(client, [client.submit(_block_facts, b, pure=False) for b in self.blocks])
        self.nnz = sum(f["nnz"] for f in facts)
        firsts = [f["first"] for f in facts if f["first"] is not None]
        lasts = [f["last"] for f in facts if f["last"] is not None]
        # the first of equal earliest (latest) times in row order, as argmin/argmax give
        self.first_time = min(firsts, key=lambda t: t[0]) if firsts else None
        self.last_time = max(reversed(lasts), key=lambda t: t[0]) if lasts else None
        self.backend = DaskBackend(client, make_shards(client, self.blocks), len(vocabulary))

    @classmethod
    def from_blocks(cls, client, blocks, vocabulary, **kwargs):
        return cls(client, blocks, vocabulary, **kwargs)

    @property
    def n_documents(self):
        return sum(self.rows)

    @property
    def duplicates(self):
        """As :attr:`Corpus.duplicates <spca_cli.corpus.core.Corpus.duplicates>`."""
        return self.options.get("duplicates_set_aside")

    @property
    def n_words(self):
        return len(self.vocabulary)

    def time_span(self):
        """(first, last) document time as text, or (None, None) without times."""
        if self.first_time is None:
            return None, None
        return format_time(*self.first_time), format_time(*self.last_time)

    # ------------------------------------------------------------------ gathering
    def to_corpus(self):
        """All blocks gathered into one in-memory :class:`Corpus` (small corpora, tests)."""
        blocks = gather(self.client, self.blocks)
        S = sp.csr_array(sp.vstack([b.S for b in blocks], format="csr"), dtype=np.float64)
        times = tz = None
        if self.timed and all(b.times is not None for b in blocks):
            times = np.concatenate([b.times for b in blocks])
            tz = np.concatenate([b.tz_offsets for b in blocks])
        texts = ids = None
        if self.has_texts:
            texts = Strings.concat([b.texts if b.texts is not None else Strings([""] * b.S.shape[0])
                                    for b in blocks])
        if self.has_ids:
            ids = Strings.concat([b.ids if b.ids is not None else Strings([""] * b.S.shape[0])
                                  for b in blocks])
        return Corpus(S=S, vocabulary=self.vocabulary, times=times, tz_offsets=tz,
                      kind=self.kind, path=self.path, options=dict(self.options),
                      paths=list(self.paths), texts=texts, ids=ids, rows=_joined_rows(blocks))

    def document_frequency(self):
        """Documents each word occurs in, summed over the blocks."""
        parts = gather(self.client, [self.client.submit(_block_document_frequency, b,
                                                       pure=False) for b in self.blocks])
        return np.sum(parts, axis=0)

    def add_documents(self, doc, n_documents):
        """:func:`spca_cli.documents.add_documents` for this corpus: each block's coverage and
        best documents on its worker, then merged (score descending, then row ascending)."""
        from spca_cli.corpus.duplicates import normalise
        from spca_cli.documents import top_rows

        comps = doc.get("components", [])
        if not comps:
            return doc
        plain = [{"indices": list(c["indices"]), "weights": list(c["weights"])} for c in comps]
        starts = np.concatenate([[0], np.cumsum(self.rows)[:-1]]).tolist()
        answers = gather(self.client, [
            self.client.submit(_block_documents, b, start, plain, n_documents, pure=False)
            for b, start in zip(self.blocks, starts)])
        m = self.n_documents
        counts = np.sum([a[0] for a in answers], axis=0)
        for j, comp in enumerate(comps):
            comp["coverage"] = {"documents": int(counts[j]),
                                "share": float(counts[j] / m) if m else 0.0}
            if n_documents > 0:
                records = [r for a in answers for r in a[1][j]]
                scores = np.array([r["score"] for r in records])
                rows = np.array([r["row"] for r in records], dtype=np.int64)
                # top_rows orders by score, then by position: positions sorted by row first
                order = np.argsort(rows, kind="stable")
                picked, seen = [], set()
                # each block listed distinct texts; one text may top two blocks
                for i in top_rows(scores[order], len(records)):
                    record = records[order[i]]
                    key = None if record["text"] is None else normalise(record["text"])
                    if key is None or key not in seen:
                        seen.add(key)
                        picked.append(record)
                comp["top_documents"] = picked[:n_documents]
        return doc

    def write_assignments(self, path, components):
        """:func:`spca_cli.documents.write_assignments` for this corpus: each block's lines made
        on its worker, fetched and written one block at a time (in row order)."""
        from spca_cli.files import atomic_output

        plain = [{"indices": list(_support(c)[0]), "weights": list(_support(c)[1])}
                 for c in components]
        header = ["row", "id", "time", "best_topic"] + [f"score_{j}" for j in
                                                        range(1, len(plain) + 1)]
        starts = np.concatenate([[0], np.cumsum(self.rows)[:-1]]).tolist()
        with atomic_output(path, "w") as fh:
            fh.write(",".join(header) + "\n")
            futures = [self.client.submit(_block_assignments, b, s, plain, pure=False)
                       for b, s in zip(self.blocks, starts)]
            for future in futures:
                fh.write(gather(self.client, future))
                future.release()
        return self.n_documents

    # ------------------------------------------------------------------ saving
    def save(self, folder):
        """Write the folder of row blocks (see the module). The blocks are written by the
        workers into a new folder beside ``folder``, which then takes its place, so a reader
        never sees half a corpus and an earlier one stays whole if this fails."""
        from spca_cli.files import own_prefix, remove_stale

        folder = os.path.abspath(os.fspath(folder))
        parent = os.path.dirname(folder)
        check_blocks_output(folder)
        for prefix in (_BLOCKS_PREFIX, _OLD_PREFIX):
            remove_stale(parent, prefix)  # what a killed run left beside the output
        try:
            work = tempfile.mkdtemp(prefix=own_prefix(_BLOCKS_PREFIX), dir=parent)
        except OSError as exc:
            raise SpcaOutputError(folder, exc.strerror or str(exc)) from None
        try:
            os.chmod(work, 0o777 & ~_umask())
            names = [f"block-{i:05d}.npz" for i in range(len(self.blocks))]
            sizes = gather(self.client, [
                self.client.submit(_save_block, b, os.path.join(work, name), pure=False)
                for b, name in zip(self.blocks, names)])
            manifest = {"format": _FORMAT, "version": 1, "blocks": names, "rows": self.rows,
                        "bytes": sizes, "words": self.n_words, "nonzeros": self.nnz,
                        "kind": self.kind, "path": str(self.path), "paths": self.paths,
                        "timed": self.timed, "has_texts": self.has_texts,
                        "has_ids": self.has_ids, "options": self.options}
            with open(os.path.join(work, MANIFEST), "w", encoding="utf-8") as fh:
                json.dump(manifest, fh, indent=1, sort_keys=True)
            old = None
            if os.path.exists(folder):
                old = tempfile.mkdtemp(prefix=own_prefix(_OLD_PREFIX), dir=parent)
                os.replace(folder, os.path.join(old, "corpus"))
            os.replace(work, folder)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise


def _support(component):
    if isinstance(component, dict):
        return component["indices"], component["weights"]
    return component.indices, component.weights


def check_blocks_output(folder):
    """Refuse, before any work, an output that is neither new, nor an empty folder, nor a saved
    corpus folder (which is then replaced whole)."""
    folder = os.fspath(folder)
    if os.path.exists(folder) and not (is_corpus_folder(folder) or (
            os.path.isdir(folder) and not os.listdir(folder))):
        raise SpcaOutputError(folder, "exists and is not an empty folder or a saved corpus "
                                      "folder; give a new name")


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def read_manifest(folder):
    """The checked manifest of a saved corpus folder."""
    path = os.path.join(folder, MANIFEST)
    try:
        with open(path, encoding="utf-8") as fh:
            manifest = json.load(fh)
    except (OSError, ValueError) as exc:
        raise SpcaInputError(path, f"cannot be read as a corpus manifest ({exc})") from None
    keys = ("blocks", "rows", "kind", "path", "paths", "timed", "has_texts", "has_ids",
            "options")
    if not isinstance(manifest, dict) or manifest.get("format") != _FORMAT or any(
            k not in manifest for k in keys):
        raise SpcaInputError(path, "is not a manifest written by spca ingest with a scheduler")
    blocks = manifest["blocks"]
    if (not isinstance(blocks, list) or not blocks or len(blocks) != len(manifest["rows"])
            or any(not isinstance(b, str) or os.path.basename(b) != b for b in blocks)):
        raise SpcaInputError(path, "its list of blocks is damaged")
    for name in blocks:
        if not os.path.isfile(os.path.join(folder, name)):
            raise SpcaInputError(os.path.join(folder, name), "block named in the manifest is "
                                                             "missing")
    return manifest


def load_corpus_folder(client, folder):
    """A folder written by :meth:`DistributedCorpus.save`, its blocks read by the workers."""
    from spca_cli.corpus.store import load_corpus

    manifest = read_manifest(folder)
    paths = [os.path.abspath(os.path.join(folder, name)) for name in manifest["blocks"]]
    vocabulary = load_corpus(paths[0]).vocabulary  # every block holds it; checked on load
    shared = client.scatter(vocabulary, broadcast=True, hash=False)
    blocks = [client.submit(_load_block, p, shared, pure=False) for p in paths]
    rows = gather(client, [client.submit(lambda b: int(b.S.shape[0]), b, pure=False)
                          for b in blocks])
    return DistributedCorpus(client, blocks, vocabulary, rows=rows, kind="corpus",
                             path=str(folder), options=manifest["options"],
                             paths=[str(folder)], timed=manifest["timed"],
                             has_texts=manifest["has_texts"], has_ids=manifest["has_ids"])


def gather_corpus_folder(folder):
    """A saved folder of row blocks read in this process, as one :class:`Corpus` (the
    single-process path: no cluster needed to use what a cluster saved)."""
    from spca_cli.corpus.store import load_corpus

    manifest = read_manifest(folder)
    blocks = [load_corpus(os.path.join(folder, name)) for name in manifest["blocks"]]
    for name, block in zip(manifest["blocks"][1:], blocks[1:]):
        if not np.array_equal(block.vocabulary, blocks[0].vocabulary):
            raise SpcaInputError(os.path.join(folder, name), "its vocabulary is not the one of "
                                                             "the other blocks of the folder")
    S = sp.csr_array(sp.vstack([b.S for b in blocks], format="csr"), dtype=np.float64)
    times = tz = None
    if manifest["timed"] and all(b.times is not None for b in blocks):
        times = np.concatenate([b.times for b in blocks])
        tz = np.concatenate([b.tz_offsets for b in blocks])

    def joined(name):
        if not manifest[f"has_{name}"]:
            return None
        return Strings.concat([getattr(b, name) if getattr(b, name) is not None
                               else Strings([""] * b.S.shape[0]) for b in blocks])

    return Corpus(S=S, vocabulary=blocks[0].vocabulary, times=times, tz_offsets=tz,
                  kind="corpus", path=str(folder), options=manifest["options"],
                  paths=[str(folder)], texts=joined("texts"), ids=joined("ids"),
                  rows=_joined_rows(blocks))


def _joined_rows(blocks):
    """The blocks' positions among the documents read, or None when they kept every one."""
    if all(b.rows is None for b in blocks):
        return None
    first = 0
    rows = []
    for b in blocks:  # (a block without them holds the positions after the last one's)
        rows.append(b.rows if b.rows is not None
                    else first + np.arange(b.S.shape[0], dtype=np.int64))
        first = int(rows[-1][-1]) + 1 if len(rows[-1]) else first
    return np.concatenate(rows).astype(np.int64)
