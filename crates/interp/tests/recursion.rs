//! Deep recursion on hand-built IR (independent of the parser and checker):
//! a million nested calls work, and unbounded recursion ends in the trap
//! `stack overflow` pointing at the called function's name.

use std::sync::Arc;

use ir::{
    Arena, BinOp, Body, BodySourceMap, Builtin, Callee, ExprId, ExprKind, FnSig, ItemTree, Lit,
    Local, LocalKind, Program, Span, Ty,
};

/// Appends expressions to a body with spans.
struct Builder {
    body: Body,
    smap: BodySourceMap,
}

impl Builder {
    fn new() -> Builder {
        Builder {
            body: Body::default(),
            smap: BodySourceMap::default(),
        }
    }
    fn e(&mut self, kind: ExprKind, ty: Ty, at: u32) -> ExprId {
        let id = self.body.exprs.alloc(ir::Expr { kind, ty });
        self.smap.exprs.insert(id, Span::new(at, at + 1));
        id
    }
    fn int(&mut self, i: i64) -> ExprId {
        self.e(ExprKind::Lit(Lit::Int(i)), Ty::Int, 0)
    }
    fn finish(mut self, root: ExprId) -> (Body, BodySourceMap) {
        self.body.root = Some(root);
        (self.body, self.smap)
    }
}

/// The source these programs pretend to come from (for line:col).
const SOURCE: &str = "fn down(n: Int) -> Int {\n    if n == 0 { 0 } else { n + down(n - 1) }\n}\nfn main() { print(down(N)) }\n";

/// `fn down(n) -> Int { if n == 0 { 0 } else { n + down(n - 1) } }` (with
/// `bounded == false`, `down(n + 1)` never reaches 0) and
/// `fn main() { print(down(start)) }`.
fn program(start: i64, bounded: bool) -> Program {
    let mut fns = Arena::default();
    let down = fns.alloc(FnSig {
        name: "down".into(),
        params: vec![("n".into(), Ty::Int)],
        ret: Ty::Int,
        owning_of: None,
        takes_token: false,
    });
    let main = fns.alloc(FnSig {
        name: "main".into(),
        params: vec![],
        ret: Ty::Unit,
        owning_of: None,
        takes_token: false,
    });
    let items = Arc::new(ItemTree {
        types: Arena::default(),
        fns,
        consts: Vec::new(),
    });

    let mut b = Builder::new();
    let n = b.body.locals.alloc(Local {
        name: "n".into(),
        ty: Ty::Int,
        kind: LocalKind::Param,
    });
    b.body.params.push(n);
    let n1 = b.e(ExprKind::Local(n), Ty::Int, 32);
    let zero = b.int(0);
    let cond = b.e(
        ExprKind::Binary {
            op: BinOp::Eq,
            lhs: n1,
            rhs: zero,
        },
        Ty::Bool,
        32,
    );
    let then = b.int(0);
    let n2 = b.e(ExprKind::Local(n), Ty::Int, 52);
    let n3 = b.e(ExprKind::Local(n), Ty::Int, 61);
    let one = b.int(1);
    let step = b.e(
        ExprKind::Binary {
            op: if bounded { BinOp::Sub } else { BinOp::Add },
            lhs: n3,
            rhs: one,
        },
        Ty::Int,
        61,
    );
    let call = b.e(
        ExprKind::Call {
            callee: Callee::Fn(down),
            args: vec![step],
        },
        Ty::Int,
        56,
    );
    let sum = b.e(
        ExprKind::Binary {
            op: BinOp::Add,
            lhs: n2,
            rhs: call,
        },
        Ty::Int,
        52,
    );
    let if_ = b.e(
        ExprKind::If {
            cond,
            then,
            else_: Some(sum),
        },
        Ty::Int,
        29,
    );
    let root = b.e(
        ExprKind::Block {
            stmts: vec![],
            tail: Some(if_),
        },
        Ty::Int,
        23,
    );
    let (down_body, down_map) = b.finish(root);

    let mut b = Builder::new();
    let arg = b.int(start);
    let call = b.e(
        ExprKind::Call {
            callee: Callee::Fn(down),
            args: vec![arg],
        },
        Ty::Int,
        94,
    );
    let print = b.e(
        ExprKind::Call {
            callee: Callee::Builtin(Builtin::Print),
            args: vec![call],
        },
        Ty::Unit,
        88,
    );
    let root = b.e(
        ExprKind::Block {
            stmts: vec![],
            tail: Some(print),
        },
        Ty::Unit,
        86,
    );
    let (main_body, main_map) = b.finish(root);
    let _ = main;

    Program {
        items,
        bodies: vec![Arc::new(down_body), Arc::new(main_body)],
        source_maps: vec![Arc::new(down_map), Arc::new(main_map)],
        fn_spans: vec![Span::new(3, 7), Span::new(77, 81)],
        line_starts: Arc::new(ir::line_starts(SOURCE)),
    }
}

fn run(p: &Program) -> (String, String, interp::Outcome) {
    let opts = interp::Options {
        path: "deep.ssp".into(),
        stdin: Some(String::new()),
        // The default, ten million, would touch gigabytes of stack in a
        // debug build before the unbounded case traps.
        max_depth: Some(1_500_000),
        ..Default::default()
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let outcome = interp::run(p, &opts, &mut out, &mut err);
    (
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
        outcome,
    )
}

#[test]
fn a_million_nested_calls_work() {
    let (out, err, outcome) = run(&program(1_000_000, true));
    assert_eq!(err, "");
    assert_eq!(out, "500000500000\n");
    assert_eq!(outcome.exit_code, 0);
}

#[test]
fn unbounded_recursion_traps_at_the_function_name() {
    let (out, err, outcome) = run(&program(1, false));
    assert_eq!(out, "");
    // The first line as before, then the innermost 20 calls of the chain.
    let mut lines = err.lines();
    assert_eq!(lines.next(), Some("trap: stack overflow at deep.ssp:1:4"));
    let chain: Vec<&str> = lines.collect();
    assert_eq!(chain.len(), 21, "{err}");
    assert!(
        chain[..20]
            .iter()
            .all(|l| l.starts_with("  in down (called at deep.ssp:")),
        "{err}"
    );
    assert_eq!(chain[20], "  ... over 10000 more frames");
    assert_eq!(outcome.exit_code, 101);
}
