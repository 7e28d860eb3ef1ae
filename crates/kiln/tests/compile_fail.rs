//! Compile tests: a wrong link, a malformed route, a handler that does not fit or a
//! missing asset does not compile, and the error names the problem; and what must
//! compile with kiln as the only dependency does (`tests/pass/`). The expected messages are in `tests/ui/*.stderr`;
//! regenerate them with `TRYBUILD=overwrite cargo test -p kiln --test compile_fail`.

#[test]
fn wrong_links_and_routes_do_not_compile() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}

#[test]
fn maud_markup_is_a_response_with_the_feature() {
    let t = trybuild::TestCases::new();
    t.pass("tests/pass/*.rs");
}
