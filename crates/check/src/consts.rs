//! Top-level constants, `let NAME = <constant expression>`: evaluated once,
//! here, when the program is checked. A constant expression is a literal
//! (Int, F64, Bool, Str without holes or with holes of Int, Bool and Str
//! constants, Unit), another constant (in any order, without cycles),
//! arithmetic, comparison and logic on those, `+` of strings, or a list
//! literal of constants. Anything else (a call, a method, a local) is an
//! error at the part that is not constant, as is an Int division by zero.

use std::collections::HashMap;

use ir::{ConstDef, ConstValue, Lit, Ty};
use syntax::ast::{self, BinOp, ExprKind, UnOp};
use syntax::{Diagnostic, Span};

use crate::items::TypeResolver;

/// The state of one constant while folding (cycles are errors).
#[derive(Clone)]
enum State {
    Todo,
    Busy,
    Done(Option<(ConstValue, Ty)>),
}

struct Folder<'a> {
    defs: Vec<&'a ast::ConstDef>,
    by_name: HashMap<&'a str, usize>,
    state: Vec<State>,
    resolver: &'a TypeResolver<'a>,
    diags: &'a mut Vec<Diagnostic>,
}

type Folded = Option<(ConstValue, Ty)>;

/// Folds every constant of the file in source order. A constant that
/// failed is still returned (with type `Error`), so its uses report nothing
/// more.
pub(crate) fn lower_consts(
    file: &ast::SourceFile,
    resolver: &TypeResolver<'_>,
    diags: &mut Vec<Diagnostic>,
) -> Vec<ConstDef> {
    let defs: Vec<&ast::ConstDef> = file
        .items
        .iter()
        .filter_map(|i| match i {
            ast::Item::Const(c) => Some(c),
            _ => None,
        })
        .collect();
    let mut by_name = HashMap::new();
    for (i, d) in defs.iter().enumerate() {
        by_name.entry(d.name.text.as_str()).or_insert(i);
    }
    let n = defs.len();
    let mut f = Folder {
        defs,
        by_name,
        state: vec![State::Todo; n],
        resolver,
        diags,
    };
    (0..n)
        .map(|i| {
            let (value, ty) = f
                .constant(i)
                .unwrap_or((ConstValue::Lit(Lit::Unit), Ty::Error));
            ConstDef {
                name: f.defs[i].name.text.clone(),
                ty,
                value,
            }
        })
        .collect()
}

impl Folder<'_> {
    fn constant(&mut self, i: usize) -> Folded {
        match &self.state[i] {
            State::Done(v) => return v.clone(),
            State::Busy => return None,
            State::Todo => {}
        }
        self.state[i] = State::Busy;
        let def = self.defs[i];
        let want = def.ty.as_ref().map(|t| self.resolver.lower(t, self.diags));
        let got = self.fold(&def.init, want.as_ref());
        let got = match (got, want) {
            (Some((_, t)), Some(w)) if t != w && w != Ty::Error => {
                self.diags.push(
                    Diagnostic::error(
                        def.init.span,
                        format!(
                            "mismatched types: expected `{}`, found `{}`",
                            ty_text(&w),
                            ty_text(&t)
                        ),
                    )
                    .with_note("in this constant"),
                );
                None
            }
            (got, _) => got,
        };
        self.state[i] = State::Done(got.clone());
        got
    }

    fn not_constant(&mut self, span: Span, what: &str) -> Folded {
        self.diags.push(
            Diagnostic::error(span, format!("{what} is not a constant expression"))
                .with_note(
                    "a top-level `let` takes literals, other constants, arithmetic on them, and string and list literals of constants; compute other values in `main`",
                ),
        );
        None
    }

    fn fold(&mut self, e: &ast::Expr, want: Option<&Ty>) -> Folded {
        let lit = |l: Lit, t: Ty| Some((ConstValue::Lit(l), t));
        match &e.kind {
            ExprKind::Int(i) => lit(Lit::Int(*i), Ty::Int),
            ExprKind::Float(b) => lit(Lit::F64(f64::from_bits(*b)), Ty::F64),
            ExprKind::Bool(b) => lit(Lit::Bool(*b), Ty::Bool),
            ExprKind::Unit => lit(Lit::Unit, Ty::Unit),
            ExprKind::Str(parts) => {
                let mut out = String::new();
                for p in parts {
                    match p {
                        ast::StrPart::Text(t) => out.push_str(t),
                        ast::StrPart::Hole(h) => match self.fold(h, None)? {
                            (ConstValue::Lit(Lit::Str(s)), _) => out.push_str(&s),
                            (ConstValue::Lit(Lit::Int(i)), _) => out.push_str(&i.to_string()),
                            (ConstValue::Lit(Lit::Bool(b)), _) => out.push_str(&b.to_string()),
                            (_, t) => {
                                return self.not_constant(
                                    h.span,
                                    &format!(
                                        "a hole of type `{}` in a constant string",
                                        ty_text(&t)
                                    ),
                                )
                            }
                        },
                    }
                }
                lit(Lit::Str(out), Ty::Str)
            }
            ExprKind::Name(n) => self.named(n, e.span),
            ExprKind::Ctor { name, args: None }
                if self.by_name.contains_key(name.text.as_str()) =>
            {
                self.named(name, e.span)
            }
            ExprKind::List(es) => {
                let elem_want = match want {
                    Some(Ty::List(t)) => Some((**t).clone()),
                    _ => None,
                };
                let mut elem = elem_want.clone();
                let mut vals = Vec::new();
                for x in es {
                    let (v, t) = self.fold(x, elem.as_ref())?;
                    match &elem {
                        Some(w) if *w != t => {
                            self.diags.push(
                                Diagnostic::error(
                                    x.span,
                                    format!(
                                        "mismatched types: expected `{}`, found `{}`",
                                        ty_text(w),
                                        ty_text(&t)
                                    ),
                                )
                                .with_note("in this list"),
                            );
                            return None;
                        }
                        _ => elem = Some(t),
                    }
                    vals.push(v);
                }
                match elem {
                    Some(t) => Some((ConstValue::List(vals), Ty::list(t))),
                    None => {
                        self.diags.push(
                            Diagnostic::error(
                                e.span,
                                "cannot infer the element type of this constant",
                            )
                            .with_note("annotate it, e.g. `let EMPTY: List[Int] = []`"),
                        );
                        None
                    }
                }
            }
            ExprKind::Unary { op, operand } => {
                let (v, t) = self.fold(operand, None)?;
                match (op, v) {
                    (UnOp::Neg, ConstValue::Lit(Lit::Int(i))) => lit(Lit::Int(i.wrapping_neg()), t),
                    (UnOp::Neg, ConstValue::Lit(Lit::F64(f))) => lit(Lit::F64(-f), t),
                    (UnOp::Not, ConstValue::Lit(Lit::Bool(b))) => lit(Lit::Bool(!b), t),
                    _ => self.bad_operands(
                        e.span,
                        &format!("`{}` of `{}`", unop_text(*op), ty_text(&t)),
                    ),
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let (a, at) = self.fold(lhs, None)?;
                let (b, bt) = self.fold(rhs, None)?;
                let (ConstValue::Lit(a), ConstValue::Lit(b)) = (a, b) else {
                    return self.bad_operands(
                        e.span,
                        &format!("`{}` and `{}`", ty_text(&at), ty_text(&bt)),
                    );
                };
                self.binary(*op, a, b, e.span, (&at, &bt))
            }
            ExprKind::Call { .. } => self.not_constant(e.span, "a call"),
            ExprKind::Method { .. } | ExprKind::Field { .. } => {
                self.not_constant(e.span, "a method call or field")
            }
            ExprKind::Lambda { .. } => self.not_constant(e.span, "a lambda"),
            ExprKind::Range { .. } => self.not_constant(e.span, "a range"),
            _ => self.not_constant(e.span, "this expression"),
        }
    }

    fn named(&mut self, n: &ast::Name, span: Span) -> Folded {
        match self.by_name.get(n.text.as_str()) {
            Some(&j) => {
                if matches!(self.state[j], State::Busy) {
                    self.diags.push(Diagnostic::error(
                        span,
                        format!("the constant `{}` depends on itself", n.text),
                    ));
                    return None;
                }
                self.constant(j)
            }
            None => self.not_constant(span, &format!("`{}`", n.text)),
        }
    }

    fn bad_operands(&mut self, span: Span, what: &str) -> Folded {
        self.diags.push(Diagnostic::error(
            span,
            format!("this operator does not apply to {what}"),
        ));
        None
    }

    fn binary(&mut self, op: BinOp, a: Lit, b: Lit, span: Span, tys: (&Ty, &Ty)) -> Folded {
        use std::cmp::Ordering;
        let cmp = |o: Option<Ordering>| -> Option<bool> {
            let o = o?;
            Some(match op {
                BinOp::Eq => o == Ordering::Equal,
                BinOp::Ne => o != Ordering::Equal,
                BinOp::Lt => o == Ordering::Less,
                BinOp::Le => o != Ordering::Greater,
                BinOp::Gt => o == Ordering::Greater,
                BinOp::Ge => o != Ordering::Less,
                _ => return None,
            })
        };
        let value = match (&a, &b) {
            (Lit::Int(x), Lit::Int(y)) => match op {
                BinOp::Add => Some(Lit::Int(x.wrapping_add(*y))),
                BinOp::Sub => Some(Lit::Int(x.wrapping_sub(*y))),
                BinOp::Mul => Some(Lit::Int(x.wrapping_mul(*y))),
                BinOp::Div | BinOp::Rem if *y == 0 => {
                    self.diags
                        .push(Diagnostic::error(span, "division by zero in a constant"));
                    return None;
                }
                BinOp::Div => Some(Lit::Int(x.wrapping_div(*y))),
                BinOp::Rem => Some(Lit::Int(x.wrapping_rem(*y))),
                _ => cmp(Some(x.cmp(y))).map(Lit::Bool),
            },
            (Lit::F64(x), Lit::F64(y)) => match op {
                BinOp::Add => Some(Lit::F64(x + y)),
                BinOp::Sub => Some(Lit::F64(x - y)),
                BinOp::Mul => Some(Lit::F64(x * y)),
                BinOp::Div => Some(Lit::F64(x / y)),
                BinOp::Rem => Some(Lit::F64(x % y)),
                // NaN is unordered: only `!=` holds.
                _ if x.is_nan() || y.is_nan() => {
                    is_comparison(op).then(|| Lit::Bool(op == BinOp::Ne))
                }
                _ => cmp(x.partial_cmp(y)).map(Lit::Bool),
            },
            (Lit::Str(x), Lit::Str(y)) => match op {
                BinOp::Add => Some(Lit::Str(format!("{x}{y}"))),
                _ => cmp(Some(x.as_bytes().cmp(y.as_bytes()))).map(Lit::Bool),
            },
            (Lit::Bool(x), Lit::Bool(y)) => match op {
                BinOp::And => Some(Lit::Bool(*x && *y)),
                BinOp::Or => Some(Lit::Bool(*x || *y)),
                _ => cmp(Some(x.cmp(y))).map(Lit::Bool),
            },
            _ => None,
        };
        match value {
            Some(l) => {
                let t = match &l {
                    Lit::Bool(_) => Ty::Bool,
                    _ => tys.0.clone(),
                };
                Some((ConstValue::Lit(l), t))
            }
            None => self.bad_operands(
                span,
                &format!("`{}` and `{}`", ty_text(tys.0), ty_text(tys.1)),
            ),
        }
    }
}

fn is_comparison(op: BinOp) -> bool {
    matches!(
        op,
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
    )
}

fn unop_text(op: UnOp) -> &'static str {
    match op {
        UnOp::Neg => "-",
        UnOp::Not => "!",
    }
}

/// A constant's type as written (constants are scalars, strings and lists).
fn ty_text(t: &Ty) -> String {
    match t {
        Ty::Int => "Int".into(),
        Ty::F64 => "F64".into(),
        Ty::Bool => "Bool".into(),
        Ty::Str => "Str".into(),
        Ty::Unit => "Unit".into(),
        Ty::List(e) => format!("List[{}]", ty_text(e)),
        _ => "_".into(),
    }
}
