//! The generator's own tests: programs type-check, every construct shows
//! up, and a seed always gives the same text.

use std::collections::BTreeMap;

const PROGRAMS: u64 = 1000;

/// Every generated program type-checks; failures are listed with their
/// diagnostics.
#[test]
fn thousand_programs_type_check() {
    let mut failures = Vec::new();
    for seed in 0..PROGRAMS {
        let text = fuzz::program_text(seed);
        if let Err(diags) = check::check_source(&text) {
            let msg = check::render_diagnostics("gen.ssp", &text, &diags);
            failures.push(format!("seed {seed}:\n{msg}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {PROGRAMS} generated programs do not type-check; the first:\n{}",
        failures.len(),
        failures
            .iter()
            .take(3)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The kind of an IR expression, statement or pattern, for counting.
fn expr_kind(e: &ir::ExprKind) -> String {
    use ir::ExprKind::*;
    match e {
        Method { method, .. } => format!("{method:?}"),
        Call {
            callee: ir::Callee::Builtin(b),
            ..
        } => format!("builtin {b:?}"),
        Call {
            callee: ir::Callee::Fn(_),
            ..
        } => "call fn".into(),
        Call {
            callee: ir::Callee::Value(_),
            ..
        } => "call value".into(),
        Binary { op, .. } => format!("binary {op:?}"),
        Unary { op, .. } => format!("unary {op:?}"),
        Lambda { captures, .. } if !captures.is_empty() => "lambda capturing".into(),
        other => {
            let d = format!("{other:?}");
            d.split([' ', '(', '{']).next().unwrap_or("").to_string()
        }
    }
}

/// Every construct of the language and every shape the generator is
/// weighted toward appears in the 1,000 programs; the counts are printed.
#[test]
fn every_construct_appears() {
    let mut shapes: BTreeMap<&str, usize> = BTreeMap::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for seed in 0..PROGRAMS {
        let g = fuzz::gen::generate(seed);
        for (k, n) in &g.shapes {
            *shapes.entry(k).or_insert(0) += n;
        }
        let text = g.program.render();
        let Ok(p) = check::check_source(&text) else {
            continue;
        };
        for t in p.items.types.iter() {
            let kind = match t.1.kind {
                ir::TypeDefKind::Record { .. } => "type record",
                ir::TypeDefKind::Sum { .. } => "type sum",
            };
            *seen.entry(kind.into()).or_insert(0) += 1;
        }
        for body in &p.bodies {
            for (_, e) in body.exprs.iter() {
                *seen.entry(expr_kind(&e.kind)).or_insert(0) += 1;
            }
            for (_, s) in body.stmts.iter() {
                let d = format!("{:?}", s.kind);
                let k = d.split([' ', '(', '{']).next().unwrap_or("").to_string();
                *seen.entry(format!("stmt {k}")).or_insert(0) += 1;
            }
            for (_, pat) in body.pats.iter() {
                let k = match &pat.kind {
                    ir::PatKind::Ctor { args, .. }
                        if args
                            .iter()
                            .any(|a| matches!(body.pats[*a].kind, ir::PatKind::Ctor { .. })) =>
                    {
                        "pattern nested ctor".to_string()
                    }
                    other => {
                        let d = format!("{other:?}");
                        format!("pattern {}", d.split([' ', '(', '{']).next().unwrap_or(""))
                    }
                };
                *seen.entry(k).or_insert(0) += 1;
            }
        }
    }
    let methods = "ListLen ListIsEmpty ListGet ListFirst ListLast ListContains ListSum ListMin \
        ListMax ListPush ListConcat ListTake ListDrop ListReverse ListSet ListSort ListSortBy ListUnique \
        ListEnumerate ListZip ListMap ListFilter ListFlatMap ListFold ListAny ListAll ListFind \
        ListCounts ListJoin StrLen StrByte StrChars StrSplit StrWords StrLines StrTrim StrLower \
        StrUpper StrReplace StrRepeat StrContains StrStartsWith StrEndsWith StrFind StrTake \
        StrDrop StrSlice StrToInt StrToF64 StrIsEmpty MapPut MapUpdate MapGet MapGetOr MapHas MapRemove \
        MapLen MapKeys MapValues MapEntries IntToF64 IntAbs F64ToInt F64Abs F64Sqrt F64Floor \
        StrParseInt StrParseF64 OptIsSome OptIsNone OptUnwrap OptUnwrapOr OptMap OptAndThen";
    // Every builtin but read_file (generated programs do no file I/O).
    let builtins = ["Print", "Log", "EmptyMap", "ReadStdin", "Args", "Trap"];
    let ops = [
        "Add", "Sub", "Mul", "Div", "Rem", "Eq", "Ne", "Lt", "Le", "Gt", "Ge", "And", "Or",
    ];
    let mut want: Vec<String> = methods.split_whitespace().map(String::from).collect();
    want.extend(builtins.iter().map(|b| format!("builtin {b}")));
    want.extend(ops.iter().map(|o| format!("binary {o}")));
    want.extend(
        [
            "unary Neg",
            "unary Not",
            "call fn",
            "call value",
            "lambda capturing",
            "Lambda",
            "Lit",
            "Local",
            "Func",
            "Interp",
            "Index",
            "Field",
            "Record",
            "Tuple",
            "Ctor",
            "List",
            "Range",
            "If",
            "Match",
            "Block",
            "Return",
            "Break",
            "Continue",
            "stmt Let",
            "stmt Var",
            "stmt Assign",
            "stmt Expr",
            "stmt For",
            "stmt While",
            "pattern Wild",
            "pattern Bind",
            "pattern Lit",
            "pattern Tuple",
            "pattern Ctor",
            "pattern nested ctor",
            "type record",
            "type sum",
        ]
        .map(String::from),
    );
    let missing: Vec<&String> = want.iter().filter(|w| !seen.contains_key(*w)).collect();
    let missing_shapes: Vec<&&str> = fuzz::gen::SHAPES
        .iter()
        .filter(|s| !shapes.contains_key(**s))
        .collect();
    eprintln!("constructs in {PROGRAMS} programs: {seen:?}");
    eprintln!("shapes in {PROGRAMS} programs: {shapes:?}");
    assert!(
        missing.is_empty() && missing_shapes.is_empty(),
        "never generated: {missing:?}; shapes never generated: {missing_shapes:?}"
    );
}

/// A seed always makes the same program, here and on every machine: the
/// generator uses its own SplitMix64 and no hash-ordered collection. The
/// fingerprint changes whenever the generator does (update it then).
#[test]
fn same_seed_same_text() {
    for seed in [0, 1, 42, 20_260_000, u64::MAX] {
        assert_eq!(fuzz::program_text(seed), fuzz::program_text(seed));
    }
    assert_ne!(fuzz::program_text(1), fuzz::program_text(2));
    // FNV-1a of the text of seed 12345.
    let text = fuzz::program_text(12345);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    assert_eq!(
        (text.len(), h),
        (6676, 7065356857130514446),
        "the fingerprint of seed 12345 changed:\n{text}"
    );
}
