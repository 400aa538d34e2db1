"""The museums' layouts are recognised, their formats read, and bad files named by file and line."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from artcat.loaders.cmoa_formats import cmoa_streams, from_csv
from artcat.loaders.formats import bulk_json_stream, csv_stream, json_files, tree_stream
from artcat.loaders.source import LoadError, Record, Stream, check, jsonl_stream
from artcat.loaders.tate_formats import display_name, tate_streams
from common.load_report import LoadIssue

DATA = Path(__file__).resolve().parents[2] / "data"
TATE, CMOA = DATA / "tate", DATA / "cmoa"


def read_all(stream: Stream) -> tuple[list[tuple[str, int, Record]], list[LoadIssue]]:
    """Read a stream whole; return its records and the problems it reported."""
    issues: list[LoadIssue] = []
    records = list(stream.read(lambda f, n, m: issues.append(LoadIssue(f, n, m)), False))
    return records, issues


def where(issues: list[LoadIssue]) -> list[tuple[str, int]]:
    """Return the (file, line) of each issue."""
    return [(i.file, i.line) for i in issues]


def test_tate_clone_slice_reads_the_per_record_json() -> None:
    artists, artworks = tate_streams(TATE)
    assert artists is not None and artworks is not None
    assert (artists.label, artworks.label) == ("artists/", "artworks/")
    assert artists.complete and artworks.complete
    records, issues = read_all(artworks)
    assert not issues and len(records) == 350
    file, line, record = records[0]
    assert (file, line) == ("artworks/a/000/a00053-1507.json", 1)  # as the repository names it
    assert record["acno"] == "A00053"
    assert len(read_all(artists)[0]) == 275


def test_tate_layouts_richest_first(tmp_path: Path) -> None:
    csv_only = tmp_path / "csv"
    csv_only.mkdir()
    for name in ("artist_data.csv", "artwork_data.csv"):
        shutil.copy(TATE / name, csv_only / name)
    artists, artworks = tate_streams(csv_only)
    assert artists is not None and artworks is not None
    assert (artists.label, artists.complete) == ("artist_data.csv", False)
    assert len(read_all(artworks)[0]) == 50

    bundle = tmp_path / "bundle"
    bundle.mkdir()
    shutil.copy(TATE / "artist_data.csv", bundle / "artist_data.csv")
    (bundle / "artists.jsonl").write_text('{"id": 1}\n', encoding="utf-8")
    artists, artworks = tate_streams(bundle)
    assert artists is not None and artists.label == "artists.jsonl" and artworks is None

    folder_alone = tate_streams(TATE / "artworks")
    assert folder_alone[0] is None and folder_alone[1] is not None
    one_csv = tate_streams(TATE / "artist_data.csv")
    assert one_csv[0] is not None and one_csv[1] is None
    one_file = tate_streams(TATE / "artworks" / "a" / "000" / "a00053-1507.json")
    assert one_file[1] is not None and len(read_all(one_file[1])[0]) == 1

    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="tategallery/collection"):
        tate_streams(tmp_path / "empty")


def test_cmoa_layouts(tmp_path: Path) -> None:
    streams = cmoa_streams(CMOA)
    assert [s.label for s in streams] == ["cmoa/", "teenie/"]
    assert [len(read_all(s)[0]) for s in streams] == [135, 20]

    bulk = tmp_path / "bulk"
    bulk.mkdir()
    shutil.copy(CMOA / "cmoa.csv", bulk / "cmoa.csv")
    shutil.copy(CMOA / "cmoa.json", bulk / "teenie.json")
    assert [s.label for s in cmoa_streams(bulk)] == ["cmoa.csv", "teenie.json"]

    # The clone's per-object folders hold an index.json listing, which is not a record.
    clone = tmp_path / "clone" / "cmoa"
    clone.mkdir(parents=True)
    shutil.copy(json_files(CMOA / "cmoa")[0], clone)
    (clone / "index.json").write_text('[{"id": "x", "title": "y"}]', encoding="utf-8")
    [stream] = cmoa_streams(tmp_path / "clone")
    records, issues = read_all(stream)
    assert len(records) == 1 and not issues
    assert len(read_all(cmoa_streams(clone)[0])[0]) == 1  # the folder itself

    with pytest.raises(FileNotFoundError, match="cmoa/collection"):
        cmoa_streams(tmp_path)  # per-object files, but in no folder named cmoa/ or teenie/


def test_cmoa_csv_and_bulk_json_hold_the_same_objects() -> None:
    [csv_stream_] = cmoa_streams(CMOA / "cmoa.csv")
    [json_stream] = cmoa_streams(CMOA / "cmoa.json")
    rows, csv_issues = read_all(csv_stream_)
    objects, json_issues = read_all(json_stream)
    assert not csv_issues and not json_issues and len(rows) == len(objects) == 50
    per_object = {r["id"]: r for _, _, r in read_all(cmoa_streams(CMOA)[0])[0]}
    for (_, _, row), (_, _, obj) in zip(rows, objects, strict=True):
        expected = obj | {"images": obj["images"] or [], "creator": obj["creator"] or []}
        assert row == expected
        assert obj == per_object[obj["id"]]
    assert any(len(r["creator"]) > 1 for _, _, r in rows)
    assert any(len(r["images"]) > 1 for _, _, r in rows)


def test_tate_csv_rows_carry_the_json_fields_they_have() -> None:
    [artworks] = [s for s in tate_streams(TATE / "artwork_data.csv") if s is not None]
    rows, issues = read_all(artworks)
    assert not issues
    by_id = {r["id"]: r for _, _, r in read_all(tate_streams(TATE)[1])[0]}  # type: ignore[arg-type]
    same = ("acno", "title", "dateText", "medium", "creditLine", "dimensions", "width")
    same += ("height", "depth", "units", "inscription", "thumbnailUrl", "url")
    for _, _, row in rows:
        record = by_id[row["id"]]
        assert {k: row[k] for k in same} == {k: record.get(k) or None for k in same} | {
            k: record.get(k) for k in ("width", "height", "depth", "units")
        }
        first = min(record["contributors"], key=lambda c: c.get("displayOrder") or 0)
        assert (row["contributors"][0]["id"], row["contributors"][0]["mda"]) == (
            first["id"],
            first["mda"],
        )


@pytest.mark.parametrize(
    ("cited", "display"),
    [
        ("Blake, William", "William Blake"),
        ("Millais, Sir John Everett, Bt", "Sir John Everett Millais, Bt"),
        ("British School 18th century", "British School 18th century"),
        (
            "Art & Language (Michael Baldwin, born 1945)",
            "Art & Language (Michael Baldwin, born 1945)",
        ),
        (None, None),
    ],
)
def test_display_name(cited: str | None, display: str | None) -> None:
    assert display_name(cited) == display


def test_csv_problems_name_the_line_a_row_starts_on(tmp_path: Path) -> None:
    path = tmp_path / "cmoa.csv"
    path.write_text(
        '\ufeffid,title,provenance_text\n1,One,"two\nlines"\n2,Two\n3,Three,x\n',
        encoding="utf-8",
    )
    records, issues = read_all(cmoa_streams(path)[0])
    assert [r["id"] for _, _, r in records] == ["1"]
    assert [r["provenance_text"] for _, _, r in records] == ["two\nlines"]
    assert where(issues) == [("cmoa.csv", 4)]
    assert "2 field(s) where the header has 3" in issues[0].message

    path.write_text('id,title\n1,"unclosed\n2,x\n', encoding="utf-8")
    records, issues = read_all(cmoa_streams(path)[0])
    assert not records and where(issues) == [("cmoa.csv", 2)]
    assert "malformed CSV" in issues[0].message

    path.write_text("identifier,title\n1,x\n", encoding="utf-8")
    _, issues = read_all(cmoa_streams(path)[0])
    assert where(issues) == [("cmoa.csv", 1)] and "missing column(s) id" in issues[0].message

    path.write_bytes(b"id,title\n1,\xff\n")
    _, issues = read_all(csv_stream("objects", path, path, required=(), convert=from_csv))
    assert "unreadable" in issues[0].message


def test_bulk_json_records_keep_their_lines(tmp_path: Path) -> None:
    path = tmp_path / "cmoa.json"
    objects = [{"id": "a", "title": "x\ny"}, {"id": "b", "creator": [{"full_name": "z"}]}]
    path.write_text(json.dumps({"things": objects}, indent=2), encoding="utf-8")
    records, issues = read_all(bulk_json_stream("objects", path, path, key="things"))
    assert not issues
    assert [(line, r["id"]) for _, line, r in records] == [(3, "a"), (7, "b")]

    path.write_text(
        '{"meta": {"things": [1]},\n "things": [\n\n {"id": "a"}, {"id": "b"}\n]}', encoding="utf-8"
    )
    records, issues = read_all(bulk_json_stream("objects", path, path, key="things"))
    assert [(line, r["id"]) for _, line, r in records] == [(4, "a"), (4, "b")] and not issues

    path.write_text('[\n{"id": "a"},\n 7,\n{"id": "b"}]', encoding="utf-8")
    records, issues = read_all(bulk_json_stream("objects", path, path, key="things"))
    assert [(line, r["id"]) for _, line, r in records] == [(2, "a"), (4, "b")]
    assert where(issues) == [("cmoa.json", 3)]

    path.write_text('{"things": [\n{"id": "a"},\n{"id": \n]}', encoding="utf-8")
    records, issues = read_all(bulk_json_stream("objects", path, path, key="things"))
    assert not records and where(issues) == [("cmoa.json", 4)]


def test_tree_and_jsonl_problems(tmp_path: Path) -> None:
    folder = tmp_path / "artworks" / "a" / "000"
    folder.mkdir(parents=True)
    (folder / "a00001-1.json").write_text('{\n  "id": 1,\n  "title": nope\n}', encoding="utf-8")
    (folder / "a00002-2.json").write_text('["not", "an object"]', encoding="utf-8")
    (folder / "a00003-3.json").write_text('{"id": 3}', encoding="utf-8")
    records, issues = read_all(tree_stream("artworks", tmp_path / "artworks", tmp_path))
    assert [r["id"] for _, _, r in records] == [3]
    assert where(issues) == [
        ("artworks/a/000/a00001-1.json", 3),
        ("artworks/a/000/a00002-2.json", 1),
    ]

    bundle = tmp_path / "artworks.jsonl.gz"
    bundle.write_bytes(gzip.compress(b'{"id": 1}\n{"id": 2}\n' * 50)[:-12])  # cut short
    records, issues = read_all(jsonl_stream("artworks", bundle, bundle))
    assert issues and "unreadable" in issues[-1].message

    with pytest.raises(LoadError) as caught:
        check("tate", [jsonl_stream("artworks", bundle, bundle)])
    assert "artworks.jsonl.gz:" in str(caught.value) and "nothing was loaded" in str(caught.value)
