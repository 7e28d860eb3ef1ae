"""The upload runner's pieces (issue 25): its body file, curl's report, the summary."""

import email.parser
import email.policy
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kilnbench.parse import ParseError  # noqa: E402
from kilnbench.upload import BOUNDARY, make_body, parse_curl, parse_schedstat, summarise  # noqa: E402


def test_body_is_a_form_with_a_note_and_the_file(tmp_path):
    body = make_body(tmp_path, 2)
    raw = body.path.read_bytes()
    assert body.file_bytes == 2 * 1024 * 1024
    assert body.content_type == f"multipart/form-data; boundary={BOUNDARY}"
    # Parsed back as MIME: exactly two parts, the file's holding every byte.
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {body.content_type}\r\n\r\n".encode() + raw
    )
    parts = list(message.iter_parts())
    assert [p.get_param("name", header="content-disposition") for p in parts] == ["note", "file"]
    assert parts[1].get_filename() == "upload.bin"
    assert len(parts[1].get_payload(decode=True)) == body.file_bytes
    assert raw.count(f"--{BOUNDARY}".encode()) == 3


def test_body_is_made_once_per_size(tmp_path):
    first = make_body(tmp_path, 1)
    stamp = first.path.stat().st_mtime_ns
    assert make_body(tmp_path, 1).path.stat().st_mtime_ns == stamp
    assert make_body(tmp_path, 2).path != first.path


def test_parse_curl_reads_the_answer_and_the_report():
    r = parse_curl("104857600\n200 0.412345 104857842\n")
    assert (r.status, r.seconds, r.uploaded, r.answer) == (200, 0.412345, 104857842, "104857600")


def test_parse_curl_keeps_an_error_answer():
    r = parse_curl("multipart: the body ended inside a part\n400 0.001 12\n")
    assert r.status == 400 and r.answer.startswith("multipart:")


def test_parse_curl_refuses_output_without_a_report():
    with pytest.raises(ParseError):
        parse_curl("")
    with pytest.raises(ParseError):
        parse_curl("just an answer\n")


def test_schedstat_is_the_run_time_in_nanoseconds():
    assert parse_schedstat("123456789 5000 42\n") == 123456789
    with pytest.raises(ParseError):
        parse_schedstat("")


def test_summary_has_medians_and_ratios():
    rows = []
    for server, wall, peak in (("kiln", [0.2, 0.3, 0.4], 8192), ("axum-upload", [0.4, 0.5, 0.9], 16384)):
        for n, w in enumerate(wall):
            rows.append({"server": server, "status": "ok", "wall_s": w, "mib_per_s": 100 / w, "server_cpu_s": w / 2,
                         "server_cpu_sched_s": w / 4, "peak_rss_kb": peak, "rss_before_kb": 4096, "rss_growth_kb": peak - 4096, "upload": n})  # fmt: skip
    rows.append({"server": "kiln", "status": "HTTP 413", "upload": 3})
    text = summarise(rows)
    assert "| kiln | 3/4 | 0.300 | 333 | 0.150 | 0.075 | 8.0 | 4.0 | 4.0 |" in text
    assert "| axum-upload | 3/3 | 0.500 |" in text
    assert "| wall time | 0.60 |" in text
    assert "| peak RSS | 0.50 |" in text
    assert "| peak − before | 0.33 |" in text


def test_summary_without_good_uploads_has_no_ratios():
    text = summarise([{"server": "kiln", "status": "exited", "upload": 0}])
    assert "| kiln | 0/1 |" in text and "ratio" not in text
