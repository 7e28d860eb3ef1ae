"""The `wiki` workloads and their peers: the page check, the peers' registration, the memory
workload's place in a run, and the peers' seed and schema against the site's own."""

import re
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kilnbench.runner import fresh_server_first  # noqa: E402
from kilnbench.samepage import differences  # noqa: E402
from kilnbench.samepage import main as samepage_main  # noqa: E402
from kilnbench.registry import BY_NAME as SERVERS  # noqa: E402
from kilnbench.servers import WIKI_WORKLOADS, Options, Paths, Unsupported, _locked_version  # noqa: E402
from kilnbench.workloads import BY_NAME as WORKLOADS  # noqa: E402
from kilnbench.workloads import WIKI_COMMENTS, WIKI_VIEWS, WORKLOADS as ALL  # noqa: E402

BENCH = Path(__file__).resolve().parents[1]
ROOT = BENCH.parent
PATHS = Paths(Path("/nonexistent"))
PEERS = ("axum-wiki", "actix-wiki")


def page(comments: int = WIKI_COMMENTS, title: str = "A tour of kiln", extra: str = "") -> bytes:
    items = "".join(f'<li id="c{i}"><p class="text">hi</p></li>' for i in range(1, comments + 1))
    return (
        f"<!DOCTYPE html><html><body><main><article><h1>{title}</h1><table><tr><td>x</td></tr></table>"
        f'<pre><code class="language-rust">fn main() {{}}</code></pre></article>'
        f'<ol class="comments">{items}<li id="c99x">&lt;script&gt;alert(1)&lt;/script&gt;</li></ol>'
        f'<form><input type="hidden" name="csrf_token" value="ab">{extra}</form></main></body></html>'
    ).replace('<li id="c99x">', "<li>").encode()


class WikiCheckTest(unittest.TestCase):
    check = staticmethod(WORKLOADS["wiki"].check)

    def test_the_long_page_with_its_comments_passes(self):
        self.assertIsNone(self.check(page()))

    def test_a_missing_comment_or_another_page_is_refused(self):
        self.assertIn("19 comments", self.check(page(comments=19)))
        self.assertIn("no <h1>", self.check(page(title="Welcome")))

    def test_an_unescaped_script_is_refused(self):
        self.assertIn("unescaped", self.check(page(extra="<script>alert(1)</script>")))

    def test_a_page_without_the_form_token_is_refused(self):
        self.assertIn("csrf_token", self.check(page().replace(b'name="csrf_token"', b'name="x"')))


class WikiWorkloadsTest(unittest.TestCase):
    def test_both_read_the_long_page_and_views_counts_ten_thousand(self):
        self.assertEqual(WORKLOADS["wiki"].path, "/pages/tour")
        self.assertEqual((WORKLOADS["wiki"].tool, WORKLOADS["wiki"].conns), ("wrk", 100))
        views = WORKLOADS["wiki-views"]
        self.assertEqual((views.path, views.tool, views.requests, views.conns), ("/pages/tour", "views", WIKI_VIEWS, 10))
        self.assertEqual(WIKI_VIEWS, 10_000)
        self.assertFalse(views.quick)

    def test_views_run_first_whatever_the_order_asked(self):
        asked = [WORKLOADS[n] for n in ("pong", "wiki", "json", "wiki-views")]
        self.assertEqual([w.name for w in fresh_server_first(asked)], ["wiki-views", "pong", "wiki", "json"])
        self.assertEqual(fresh_server_first(ALL)[0].name, "wiki-views")


class WikiPeersTest(unittest.TestCase):
    def test_they_run_only_the_wiki_workloads_and_need_an_sqlite_url(self):
        for name in PEERS:
            peer = SERVERS[name]
            self.assertEqual(peer.workloads, WIKI_WORKLOADS)
            for url in (None, "postgres://u:p@127.0.0.1:5432/hello_world", "sqlite://"):
                with self.assertRaises(Unsupported):
                    peer.launch(PATHS, 8080, Options(url))
            launch = peer.launch(PATHS, 8080, Options("sqlite://data/kiln.sqlite"))
            self.assertEqual(launch.env["DATABASE_URL"], "sqlite://data/kiln.sqlite")
            self.assertEqual(launch.cwd, PATHS.root)
            self.assertTrue(launch.argv[0].endswith(f"{name}/release/peer-{name}"))

    def test_they_link_the_sqlite_and_pulldown_cmark_kiln_links(self):
        kiln_lock = ROOT / "Cargo.lock"
        for name in PEERS:
            lock = BENCH / "peers" / name / "Cargo.lock"
            for crate in ("libsqlite3-sys", "pulldown-cmark", "maud"):
                self.assertEqual(_locked_version(lock, crate), _locked_version(kiln_lock, crate), f"{name} {crate}")


STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def rust_const(source: str, name: str) -> str:
    """The initialiser of a top-level `const NAME: ... = ...;` in Rust source, as rustfmt
    would not change it: no whitespace outside string literals, no trailing commas."""
    found = re.search(rf"^(?:pub(?:\(crate\))? )?const {name}: [^=]+= (.*?);\n(?=[^ \t]|\Z)", source, re.DOTALL | re.MULTILINE)
    if found is None:
        raise AssertionError(f"no const {name}")
    text, out, at = found.group(1), [], 0
    for literal in STRING.finditer(text):
        out += [re.sub(r"\s+", "", text[at : literal.start()]), literal.group()]
        at = literal.end()
    out.append(re.sub(r"\s+", "", text[at:]))
    return re.sub(r",([\])])", r"\1", "".join(out))


def schema(sql: str) -> list[str]:
    """The CREATE statements of an SQL script, comments dropped, `IF NOT EXISTS` dropped,
    whitespace collapsed: what the tables and indexes are, not how they are guarded."""
    sql = re.sub(r"--[^\n]*", "", sql).replace("IF NOT EXISTS ", "")
    return [" ".join(s.split()).replace("( ", "(").replace(" )", ")") for s in sql.split(";") if s.strip()]


class RustConstTest(unittest.TestCase):
    def test_it_reads_a_multi_line_initialiser(self):
        source = 'const A: [(&str, &str); 2] = [\n    ("x", "y;z"),\n    ("u", "v"),\n];\nconst B: i64 = 3;\n'
        self.assertEqual(rust_const(source, "A"), '[("x","y;z"),("u","v")]')
        self.assertEqual(rust_const(source, "B"), "3")

    def test_layout_outside_strings_does_not_count(self):
        wrapped = 'pub(crate) const A: [(&str, &str); 1] = [(\n    "a b",\n    "c\\" d",\n)];\n'
        self.assertEqual(rust_const(wrapped, "A"), '[("a b","c\\" d")]')

    def test_a_string_initialiser_keeps_its_inner_semicolons(self):
        source = 'const S: &str = "CREATE TABLE a (x);\n     CREATE TABLE b (y);";\nconst T: i64 = 1;\n'
        self.assertEqual(rust_const(source, "S"), '"CREATE TABLE a (x);\n     CREATE TABLE b (y);"')

    def test_schema_ignores_guards_comments_and_layout(self):
        a = "-- the pages\nCREATE TABLE page (\n  id INTEGER PRIMARY KEY\n);\nCREATE INDEX i ON page (id);\n"
        b = "CREATE TABLE IF NOT EXISTS page (id INTEGER PRIMARY KEY); CREATE INDEX IF NOT EXISTS i ON page (id);"
        self.assertEqual(schema(a), schema(b))


class WikiSeedTest(unittest.TestCase):
    """A peer that seeds a new file must write what kiln's site writes."""

    site = ROOT / "app" / "src" / "site" / "seed.rs"
    peer = BENCH / "peers" / "axum-wiki" / "src" / "seed.rs"

    def setUp(self):
        if not self.site.exists():
            self.skipTest("the demo site is not in this checkout")
        self.site_src, self.peer_src = self.site.read_text(), self.peer.read_text()

    def test_the_comments_and_times_are_the_sites(self):
        for name in ("COMMENTS", "FIRST_PAGE_AT", "FIRST_COMMENT_AT", "COMMENT_INTERVAL", "LONG_PAGE"):
            self.assertEqual(rust_const(self.peer_src, name), rust_const(self.site_src, name), name)

    def test_the_pages_are_the_sites_from_the_same_files(self):
        site = rust_const(self.site_src, "PAGES").replace('include_str!("seed/', 'include_str!("../../../../app/src/site/seed/')
        self.assertEqual(rust_const(self.peer_src, "PAGES"), site)

    def test_the_schema_is_the_sites_migration(self):
        migration = (ROOT / "app" / "migrations" / "sqlite" / "0002_site.sql").read_text()
        peer = rust_const(self.peer_src, "SCHEMA").strip('"').replace("\\n", "\n")
        self.assertEqual(schema(peer), schema(migration))


class SamePageTest(unittest.TestCase):
    kiln = (
        b'<link rel="stylesheet" href="/static/site.1f4ad4e0.css"><form>'
        b'<input type="hidden" name="csrf_token" value="4dd3d0872cdb7d2b"><p class="text">&lt;b&gt;</p></form>'
    )

    def test_token_and_stylesheet_hash_do_not_count(self):
        peer = self.kiln.replace(b"site.1f4ad4e0.css", b"site.css").replace(b"4dd3d0872cdb7d2b", b"99aa")
        self.assertEqual(differences(self.kiln, peer), [])

    def test_any_other_byte_does(self):
        peer = self.kiln.replace(b"&lt;b&gt;", b"<b>")
        diff = differences(self.kiln, peer)
        self.assertEqual(diff, ["-&lt;b&gt;</p>", "+<b>", "+</p>"])

    def test_only_loopback_is_fetched(self):
        with self.assertRaises(SystemExit):
            samepage_main(["http://example.com/pages/tour", "http://127.0.0.1:1/pages/tour"])
