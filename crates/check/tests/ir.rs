//! Good programs: each `tests/good/*.ssp` checks, and its IR prints as an
//! insta snapshot. Plus targeted facts about the lowering that a printed
//! snapshot would not make obvious (callee kinds, captures, shared locals),
//! and the printer on the ownership pass's forms.

use std::path::Path;
use std::sync::Arc;

use ir::{
    Body, Callee, Drop, ExprKind, FnSig, ItemTree, Lit, Local, LocalKind, OldValue, Program, Stmt,
    StmtKind, Ty,
};

fn check_ok(text: &str) -> Program {
    match check::check_source(text) {
        Ok(p) => p,
        Err(d) => panic!("{}", check::render_diagnostics("test.ssp", text, &d)),
    }
}

#[test]
fn good_programs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/good");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    paths.sort();
    for p in paths {
        if p.extension().is_none_or(|x| x != "ssp") {
            continue;
        }
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&p).unwrap();
        let program = check_ok(&text);
        insta::assert_snapshot!(name, ir::pretty::program(&program));
    }
}

/// Every expression of a body, for searching.
fn exprs(b: &Body) -> impl Iterator<Item = &ir::Expr> {
    b.exprs.iter().map(|(_, e)| e)
}

#[test]
fn callee_kinds() {
    let p = check_ok(
        "fn inc(x: Int) -> Int { x + 1 }\n\
         fn main() {\n let f = inc\n print(inc(1))\n print(f(2))\n print([1].map(inc))\n}\n",
    );
    let main = p.body(p.main().unwrap());
    let calls: Vec<&Callee> = exprs(main)
        .filter_map(|e| match &e.kind {
            ExprKind::Call { callee, .. } => Some(callee),
            _ => None,
        })
        .collect();
    assert!(calls.iter().any(|c| matches!(c, Callee::Fn(_))));
    assert!(calls.iter().any(|c| matches!(c, Callee::Value(_))));
    assert!(calls
        .iter()
        .any(|c| matches!(c, Callee::Builtin(ir::Builtin::Print))));
    assert_eq!(
        exprs(main)
            .filter(|e| matches!(e.kind, ExprKind::Func(_)))
            .count(),
        2
    );
}

#[test]
fn lambda_captures_share_local_ids() {
    let p = check_ok("fn main() {\n let k = 2\n let n = 3\n print([1].map(|x| x * k + n))\n}\n");
    let main = p.body(p.main().unwrap());
    let (params, captures) = exprs(main)
        .find_map(|e| match &e.kind {
            ExprKind::Lambda {
                params, captures, ..
            } => Some((params.clone(), captures.clone())),
            _ => None,
        })
        .unwrap();
    assert_eq!(params.len(), 1);
    let names: Vec<&str> = captures.iter().map(|c| main[*c].name.as_str()).collect();
    assert_eq!(names, ["k", "n"]);
    // The body refers to the captured locals by the same ids.
    for c in &captures {
        assert!(exprs(main).any(|e| e.kind == ExprKind::Local(*c)));
    }
    assert_eq!(main[params[0]].ty, Ty::Int);
}

#[test]
fn inference_from_later_use() {
    let p = check_ok(
        "fn main() {\n var lines = []\n lines := lines.push(\"a\")\n let m = empty_map()\n m.put(1, true)\n print(\"{lines} {m}\")\n}\n",
    );
    let main = p.body(p.main().unwrap());
    let ty = |name: &str| {
        main.locals
            .iter()
            .find(|(_, l)| l.name == name)
            .unwrap()
            .1
            .ty
            .clone()
    };
    assert_eq!(ty("lines"), Ty::list(Ty::Str));
    assert_eq!(ty("m"), Ty::map(Ty::Int, Ty::Bool));
}

#[test]
fn every_expression_is_typed_and_spanned() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/good/language_example.ssp"),
    )
    .unwrap();
    let p = check_ok(&text);
    for (i, (_, body)) in p.items.fns.iter().enumerate() {
        let b = &p.bodies[i];
        let map = &p.source_maps[i];
        for (id, e) in b.exprs.iter() {
            assert_ne!(e.ty, Ty::Error, "{}: {:?}", body.name, e.kind);
            let span = map.expr(id);
            assert!(span.end as usize <= text.len() && span.start <= span.end);
        }
        // The function's name span covers its name.
        let s = p.fn_spans[i];
        assert_eq!(&text[s.start as usize..s.end as usize], body.name);
    }
    assert_eq!(p.line_col(p.fn_spans[0].start).0, 3);
}

/// The printer on the forms only the ownership pass produces.
#[test]
fn printer_shows_ownership_forms() {
    let mut items = ItemTree::default();
    let f = items.fns.alloc(FnSig {
        name: "main".into(),
        params: vec![],
        ret: Ty::Unit,
        owning_of: None,
        takes_token: false,
    });
    let mut b = Body::default();
    let list_str = Ty::list(Ty::Str);
    let lines = b.locals.alloc(Local {
        name: "lines".into(),
        ty: list_str.clone(),
        kind: LocalKind::Var,
    });
    let tmp = b.locals.alloc(Local {
        name: "t".into(),
        ty: Ty::Str,
        kind: LocalKind::Temp,
    });
    let sb = b.locals.alloc(Local {
        name: "v".into(),
        ty: Ty::StrBuilder,
        kind: LocalKind::Var,
    });
    let m = b.locals.alloc(Local {
        name: "m".into(),
        ty: Ty::map(Ty::Str, Ty::Int),
        kind: LocalKind::Let,
    });
    let e = |b: &mut Body, kind, ty| b.exprs.alloc(ir::Expr { kind, ty });
    let empty = e(&mut b, ExprKind::List(vec![]), list_str.clone());
    let s1 = b.stmts.alloc(Stmt {
        kind: StmtKind::Var {
            local: lines,
            init: empty,
        },
    });
    let lit = e(&mut b, ExprKind::Lit(Lit::Str("x".into())), Ty::Str);
    let recv = e(&mut b, ExprKind::Local(lines), list_str.clone());
    let push = e(
        &mut b,
        ExprKind::Method {
            method: ir::Method::ListPush,
            receiver: recv,
            args: vec![lit],
        },
        list_str.clone(),
    );
    let s2 = b.stmts.alloc(Stmt {
        kind: StmtKind::Assign {
            local: lines,
            value: push,
            old: OldValue::FreeIfMoved,
        },
    });
    let lit2 = e(&mut b, ExprKind::Lit(Lit::Str("y".into())), Ty::Str);
    let s3 = b.stmts.alloc(Stmt {
        kind: StmtKind::Assign {
            local: lines,
            value: lit2,
            old: OldValue::Free { deep: true },
        },
    });
    let tmp_init = e(&mut b, ExprKind::Lit(Lit::Str("k".into())), Ty::Str);
    let tmp_pat = b.pats.alloc(ir::Pat {
        kind: ir::PatKind::Bind(tmp),
        ty: Ty::Str,
    });
    let s4 = b.stmts.alloc(Stmt {
        kind: StmtKind::Let {
            pat: tmp_pat,
            init: tmp_init,
        },
    });
    let mref = e(&mut b, ExprKind::Local(m), Ty::map(Ty::Str, Ty::Int));
    let key = e(&mut b, ExprKind::Local(tmp), Ty::Str);
    let one = e(&mut b, ExprKind::Lit(Lit::Int(1)), Ty::Int);
    let put = e(
        &mut b,
        ExprKind::PutOwnedKey {
            map: mref,
            key,
            value: one,
        },
        Ty::map(Ty::Str, Ty::Int),
    );
    let s5 = b.stmts.alloc(Stmt {
        kind: StmtKind::Expr(put),
    });
    let bnew = e(
        &mut b,
        ExprKind::BuilderNew { sep: ", ".into() },
        Ty::StrBuilder,
    );
    let s6 = b.stmts.alloc(Stmt {
        kind: StmtKind::Var {
            local: sb,
            init: bnew,
        },
    });
    let piece = e(&mut b, ExprKind::Lit(Lit::Str("p\n".into())), Ty::Str);
    let bpush = e(
        &mut b,
        ExprKind::BuilderPush {
            builder: sb,
            value: piece,
        },
        Ty::Unit,
    );
    let s7 = b.stmts.alloc(Stmt {
        kind: StmtKind::Expr(bpush),
    });
    let s8 = b.stmts.alloc(Stmt {
        kind: StmtKind::Drop(Drop {
            local: lines,
            deep: true,
            reason: 4,
        }),
    });
    let s9 = b.stmts.alloc(Stmt {
        kind: StmtKind::Drop(Drop {
            local: tmp,
            deep: false,
            reason: 5,
        }),
    });
    let fin = e(&mut b, ExprKind::BuilderFinish { builder: sb }, Ty::Str);
    let root = e(
        &mut b,
        ExprKind::Block {
            stmts: vec![s1, s2, s3, s4, s5, s6, s7, s8, s9],
            tail: Some(fin),
        },
        Ty::Str,
    );
    b.root = Some(root);
    let p = Program {
        items: Arc::new(items),
        bodies: vec![Arc::new(b)],
        ..Program::default()
    };
    insta::assert_snapshot!("ownership_forms", ir::pretty::body(&p, f));
}
