//! Compile-fail tests: markup that breaks a content model, an attribute rule or the
//! link rule does not compile, and the error names the element, the child and what
//! the parent accepts. One file per rule class in `tests/ui/`, each with its expected
//! message; regenerate with `TRYBUILD=overwrite cargo test -p kiln-html --test compile_fail`.

#[test]
fn wrong_markup_does_not_compile() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
