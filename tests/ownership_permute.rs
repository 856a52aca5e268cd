//! The analysis must not depend on the order of functions in the file:
//! shuffling the items of corpus programs leaves every function's summary
//! (owning versions included), its body with drops, its reason table and
//! the version each of its calls runs unchanged.

use std::collections::BTreeMap;
use std::fs;

use ownership::reason::{DropReason, Reader};
use proptest::prelude::*;

/// Programs with more than one function, from every corpus directory.
fn corpus() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for dir in ["tests/ownership", "tests/programs", "examples"] {
        let Ok(entries) = fs::read_dir(dir) else {
            continue;
        };
        let mut paths: Vec<_> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "ssp"))
            .collect();
        paths.sort();
        for p in paths {
            let text = fs::read_to_string(&p).unwrap_or_default();
            if check::check_source(&text).is_ok() {
                out.push((p.display().to_string(), text));
            }
        }
    }
    out
}

/// The items of a program, each as its own text.
fn items(text: &str) -> Vec<String> {
    let (file, _) = syntax::parse(text);
    file.items
        .iter()
        .map(|i| {
            let s = i.span();
            text[s.start as usize..s.end as usize].to_string()
        })
        .collect()
}

/// Per function name: summary facts, the printed body with drops, reasons.
fn fingerprint(text: &str) -> BTreeMap<String, String> {
    let program = check::check_source(text).expect("a permutation still checks");
    let a = ownership::analyze(&program);
    let cx = ownership::reason::Cx {
        program: &a.program,
        summaries: &a.summaries,
    };
    let mut out = BTreeMap::new();
    for (f, sig) in a.program.items.fns.iter() {
        let i = f.into_raw().into_u32() as usize;
        let s = &a.summaries[i];
        // The version each call of this function runs, in source order
        // (callees by name: their ids move with the items).
        let calls: Vec<String> = a
            .calls
            .iter()
            .filter(|c| c.1 == f)
            .map(|(_, _, g, choice)| {
                let kind = match choice {
                    ownership::CallChoice::Owning => "owning".to_string(),
                    // The reason's kind: its offsets move with the items.
                    ownership::CallChoice::Sharing { param, arg, why } => {
                        let why = format!("{why:?}");
                        let kind = why.split(['(', ' ']).next().unwrap_or("");
                        format!("sharing({param}, {arg:?}, {kind})")
                    }
                };
                format!("{}:{kind}", cx.fn_name(*g))
            })
            .collect();
        // `#token` versions of one function differ by their token's type.
        let name = match sig.params.last() {
            Some((_, ty)) if sig.takes_token => {
                format!(
                    "{}: {}",
                    ir::pretty::fn_name(sig),
                    ir::pretty::ty_to_string(&a.program.items, ty)
                )
            }
            _ => ir::pretty::fn_name(sig),
        };
        out.insert(
            name,
            format!(
                "fresh={} deep={} borrowed={:?} owned_deep={} cell_borrowed={:?} owning={:?} owning_result={} calls={calls:?}\n{}\n{:?}",
                s.fresh_result,
                s.deep_result,
                s.borrowed,
                s.owned_deep_result,
                s.cell_borrowed,
                s.owning,
                s.owning_result,
                ir::pretty::body(&a.program, f),
                a.reasons[i]
                    .iter()
                    .map(|r| stable(&cx, *r))
                    .collect::<Vec<_>>()
            ),
        );
    }
    out
}

/// A drop reason as data that does not depend on item order: local and
/// expression ids are the function's own; a callee's id is replaced by its
/// name. (The rendered text names source positions, which move with the
/// function.)
fn stable(cx: &ownership::reason::Cx, r: DropReason) -> String {
    let reader = |x: Reader| match x {
        Reader::Call(g) => format!("Call({})", cx.fn_name(g)),
        other => format!("{other:?}"),
    };
    match r {
        DropReason::Temp { reader: x, deep } => format!("Temp({}, deep={deep})", reader(x)),
        DropReason::CellTemp(x) => format!("CellTemp({})", reader(x)),
        DropReason::CellTempShallow(x) => format!("CellTempShallow({})", reader(x)),
        // The offset a read after the constructor names moves with the
        // function: its kind only.
        DropReason::UpdateFreed { local, deep, why } => {
            let why = format!("{why:?}");
            let kind = why.split('(').next().unwrap_or("");
            format!("UpdateFreed({local:?}, deep={deep}, {kind})")
        }
        // No variant below holds an id from outside the function.
        DropReason::LastUse { .. }
        | DropReason::BuilderPiece(_)
        | DropReason::CellLastUse(_)
        | DropReason::CellShallow(_)
        | DropReason::ClosureLastUse(_)
        | DropReason::CellOtherPath(_)
        | DropReason::TokenFreed(_)
        | DropReason::TokenFreedOnPath(_)
        | DropReason::Cleared(_)
        | DropReason::DeadValue(_)
        | DropReason::DeadField(_)
        | DropReason::Reused { .. }
        | DropReason::UpdateReused { .. }
        | DropReason::TokenPassed { .. }
        | DropReason::HandedTokenFreed(_)
        | DropReason::SetInPlace(_) => format!("{r:?}"),
    }
}

fn permuted(parts: &[String], order: &[usize]) -> String {
    order
        .iter()
        .map(|&i| parts[i].as_str())
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[test]
fn reversed_order_gives_the_same_analysis() {
    let corpus = corpus();
    assert!(corpus.len() >= 40, "corpus too small: {}", corpus.len());
    for (path, text) in &corpus {
        let parts = items(text);
        let forward: Vec<usize> = (0..parts.len()).collect();
        let backward: Vec<usize> = forward.iter().rev().copied().collect();
        assert_eq!(
            fingerprint(&permuted(&parts, &forward)),
            fingerprint(&permuted(&parts, &backward)),
            "{path}: reversing the items changed the analysis"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn shuffled_order_gives_the_same_analysis(pick in any::<prop::sample::Index>(), seed in any::<u64>()) {
        let corpus = corpus_cached();
        let (path, text) = &corpus[pick.index(corpus.len())];
        let parts = items(text);
        let mut order: Vec<usize> = (0..parts.len()).collect();
        // Fisher-Yates with a small xorshift generator seeded by proptest.
        let mut x = seed | 1;
        for i in (1..order.len()).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            order.swap(i, (x % (i as u64 + 1)) as usize);
        }
        let base: Vec<usize> = (0..parts.len()).collect();
        prop_assert_eq!(
            fingerprint(&permuted(&parts, &base)),
            fingerprint(&permuted(&parts, &order)),
            "{}: order {:?} changed the analysis", path, order
        );
    }
}

fn corpus_cached() -> &'static [(String, String)] {
    static CORPUS: std::sync::OnceLock<Vec<(String, String)>> = std::sync::OnceLock::new();
    CORPUS.get_or_init(corpus)
}
