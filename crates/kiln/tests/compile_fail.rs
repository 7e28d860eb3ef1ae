//! Compile-fail tests: a wrong link or a malformed route does not compile, and the
//! error names the problem. The expected messages are in `tests/ui/*.stderr`;
//! regenerate them with `TRYBUILD=overwrite cargo test -p kiln --test compile_fail`.

#[test]
fn wrong_links_and_routes_do_not_compile() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
