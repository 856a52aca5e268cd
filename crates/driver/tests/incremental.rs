//! Editing one function's body must not re-lower the other functions.

use driver::{Database, SourceFile};
use salsa::Setter;

const BEFORE: &str = "\
fn helper(x: Int) -> Int {
    x + 1
}

fn twice(x: Int) -> Int {
    helper(helper(x))
}

fn main() {
    print(twice(1))
}
";

#[test]
fn editing_one_body_relowers_only_that_function() {
    let mut db = Database::default();
    let file = SourceFile::new(&db, "t.ssp".to_string(), BEFORE.to_string());
    assert!(driver::diagnostics(&db, file).is_empty());
    assert!(driver::program(&db, file).is_some());
    let mut first = db.take_lowering_log();
    first.sort();
    assert_eq!(first, ["helper", "main", "twice"]);

    // Edit the first function's body so that every later function moves.
    let after = BEFORE.replace("x + 1", "(x * 10) + 1000");
    file.set_text(&mut db).to(after.clone());
    let program = driver::program(&db, file).clone().expect("still checks");
    assert_eq!(db.take_lowering_log(), ["helper"]);

    // Positions of the functions that were not relowered are still right.
    let main = program.main().expect("main");
    let root = program.body(main).root();
    let span = program.source_map(main).expr(root);
    assert_eq!(&after[span.start as usize..span.start as usize + 1], "{");
}

#[test]
fn whitespace_before_a_function_relowers_nothing() {
    let mut db = Database::default();
    let file = SourceFile::new(&db, "t.ssp".to_string(), BEFORE.to_string());
    assert!(driver::program(&db, file).is_some());
    db.take_lowering_log();
    file.set_text(&mut db)
        .to(format!("\n\n// a comment\n{BEFORE}"));
    assert!(driver::program(&db, file).is_some());
    assert!(db.take_lowering_log().is_empty());
}
