//! The program generator: draws expressions of a wanted type from the
//! language's constructs, weighted toward what the ownership analysis
//! decides (aliasing, values used twice, values stored then read, views of
//! owned values, var updates in loops, functions that return a parameter on
//! one path and a fresh value on another, trees matched and rebuilt, `set`
//! on a list at its last use, read again after or aliased first).
//!
//! Every program it makes type-checks and terminates: loops have constant
//! bounds (`while` loops count), functions call only functions defined
//! before them, recursion is either structural (on a field of a matched
//! sum value) or bounded by a `fuel` parameter, and a var never grows from
//! itself twice in one update.
//!
//! Sizes stay small too, so every run finishes in well under a second:
//! what could grow geometrically (a var updated from other vars in a loop,
//! a fold's string or list accumulator, a `replace` by a long text, a map
//! key spelling out its map) is cut back with `take` ([`clamp`]).

use std::collections::BTreeMap;

use crate::model::*;
use crate::rng::Rng;

/// The ownership-relevant shapes and constructs the generator counts (the
/// tests require each in at least one of 1,000 programs).
pub const SHAPES: &[&str] = &[
    "alias",
    "use_twice",
    "store_record",
    "store_tuple",
    "store_list",
    "store_map",
    "store_ctor",
    "view",
    "var_update_in_loop",
    "param_or_fresh",
    "closure_capture",
    "map_str_keys",
    "interpolation",
    "fuel_recursion",
    "structural_recursion",
    "tree_rebuild",
    "nested_pattern",
    "match_option",
    "if_let",
    "let_else",
    "match_literal",
    "early_return",
    "trap",
    "while",
    "break",
    "continue",
    "let_tuple",
    "fn_value",
    "block_returns_local",
    "for_entries",
    "log",
    "set",
    "set_loop",
    "set_alias",
    "set_then_read",
    "set_reads_itself",
    "map_update",
];

/// A generated program and the shapes it holds.
pub struct Generated {
    pub program: Program,
    pub shapes: BTreeMap<&'static str, usize>,
}

/// The program for `seed`.
pub fn generate(seed: u64) -> Generated {
    let mut g = Gen::new(seed);
    let program = g.program();
    Generated {
        program,
        shapes: g.shapes,
    }
}

#[derive(Clone, Debug)]
struct Var {
    name: String,
    ty: Ty,
    mutable: bool,
    /// A `while` counter: read, never assigned.
    counter: bool,
}

#[derive(Clone, Debug)]
struct Sig {
    name: String,
    params: Vec<Ty>,
    ret: Ty,
    fuel: bool,
}

/// Where an expression's type comes from: `[]`, `None` and `empty_map()`
/// are only drawn where the surrounding code decides their type.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Decided,
    Free,
}

struct Gen {
    rng: Rng,
    types: Vec<TypeDef>,
    fns: Vec<Sig>,
    vars: Vec<Var>,
    /// Vars declared before this index with `var` are invisible (inside a
    /// lambda, which may not capture them).
    lambda_floor: usize,
    /// Loops enclosing this point in the current function or lambda.
    loops: usize,
    /// Loops or lambdas enclosing this point: no fuel call here.
    repeated: usize,
    /// The function being generated: name, params, return type.
    current: Option<Sig>,
    /// In a fuel function: self calls so far.
    rec_calls: usize,
    /// In a structural function: its name and the names bound to smaller
    /// values of its parameter's type.
    structural: Option<(String, Ty)>,
    smaller: Vec<String>,
    /// Each smaller name's scrutinee (`e4` bound by `match t`: `t`).
    parent: BTreeMap<String, String>,
    /// The smaller names recursed on so far on this path. A call on a
    /// value related to one of them (the same, a part, or a whole) could
    /// visit a node twice, and along a spine that is exponential; so each
    /// node is visited at most once per call and the total stays linear.
    recursed: Vec<String>,
    /// Not in a lambda: `return` allowed.
    in_lambda: usize,
    /// A var being assigned: not readable in its own new value (except as
    /// a shape places it), so nothing doubles.
    hidden: Option<String>,
    next_name: usize,
    budget: i64,
    shapes: BTreeMap<&'static str, usize>,
    /// The pool of types values are drawn from, with weights.
    pool: Vec<(Ty, u32)>,
}

const WORDS: &[&str] = &[
    "a", "b,c", "x y", "hello", "k1", "a,b,c", " pad ", "lo\nhi", "zz", "", "one two", "Mix",
];

impl Gen {
    fn new(seed: u64) -> Gen {
        Gen {
            rng: Rng::new(seed),
            types: Vec::new(),
            fns: Vec::new(),
            vars: Vec::new(),
            lambda_floor: 0,
            loops: 0,
            repeated: 0,
            current: None,
            rec_calls: 0,
            structural: None,
            smaller: Vec::new(),
            parent: BTreeMap::new(),
            recursed: Vec::new(),
            in_lambda: 0,
            hidden: None,
            next_name: 0,
            budget: 0,
            shapes: BTreeMap::new(),
            pool: Vec::new(),
        }
    }

    fn tag(&mut self, shape: &'static str) {
        *self.shapes.entry(shape).or_insert(0) += 1;
    }

    fn name(&mut self, prefix: &str) -> String {
        self.next_name += 1;
        format!("{prefix}{}", self.next_name)
    }

    // ---- types ----

    fn program(&mut self) -> Program {
        self.user_types();
        let mut pool = vec![
            (Ty::Int, 5),
            (Ty::Str, 5),
            (Ty::Bool, 2),
            (Ty::list(Ty::Int), 5),
            (Ty::list(Ty::Str), 5),
            (Ty::list(Ty::list(Ty::Int)), 1),
            (Ty::map(Ty::Str, Ty::Int), 2),
            (Ty::map(Ty::Str, Ty::list(Ty::Int)), 1),
            (Ty::opt(Ty::Int), 1),
            (Ty::opt(Ty::Str), 1),
            (Ty::Tuple(vec![Ty::Int, Ty::Str]), 1),
            (Ty::func(vec![Ty::Int], Ty::Int), 1),
            (Ty::func(vec![Ty::Str], Ty::Str), 1),
            (Ty::F64, 1),
        ];
        for i in 0..self.types.len() {
            let w = if self.is_record(i) { 3 } else { 2 };
            pool.push((Ty::User(i), w));
            if self.is_record(i) {
                pool.push((Ty::list(Ty::User(i)), 1));
            }
        }
        self.pool = pool;
        let mut fns = Vec::new();
        // Structural functions over each recursive sum type.
        for i in 0..self.types.len() {
            if self.is_recursive_sum(i) && self.rng.chance(70) {
                let ret = if self.rng.chance(50) {
                    Ty::User(i)
                } else {
                    self.pick_ty(false)
                };
                fns.push(self.structural_fn(i, ret));
            }
        }
        let helpers = self.rng.range(1, 4);
        for _ in 0..helpers {
            let f = if self.rng.chance(30) {
                self.fuel_fn()
            } else {
                self.helper_fn()
            };
            fns.push(f);
        }
        fns.push(self.main_fn());
        Program {
            types: self.types.clone(),
            fns,
        }
    }

    fn user_types(&mut self) {
        let n = self.rng.range(1, 3) as usize;
        for k in 0..n {
            let idx = self.types.len();
            if k == 0 || self.rng.chance(50) {
                // A sum type, recursive most of the time.
                let t = Ty::User(idx);
                let name = format!("S{idx}");
                let mut vs = vec![(format!("Leaf{idx}"), vec![])];
                vs.push((format!("One{idx}"), vec![Ty::Int, Ty::Str]));
                if self.rng.chance(75) {
                    if self.rng.chance(50) {
                        vs.push((format!("Node{idx}"), vec![t.clone(), Ty::Int, t.clone()]));
                    } else {
                        vs.push((format!("Wrap{idx}"), vec![t.clone(), Ty::list(Ty::Int)]));
                    }
                } else {
                    vs.push((format!("Many{idx}"), vec![Ty::list(Ty::Str)]));
                }
                self.types.push(TypeDef {
                    name,
                    kind: TypeKind::Sum(vs),
                });
            } else {
                let mut fields = vec![("label".to_string(), Ty::Str)];
                let extra: &[(&str, Ty)] = &[
                    ("items", Ty::list(Ty::Int)),
                    ("n", Ty::Int),
                    ("tags", Ty::list(Ty::Str)),
                    ("on", Ty::Bool),
                ];
                for (f, t) in extra {
                    if self.rng.chance(55) {
                        fields.push((f.to_string(), t.clone()));
                    }
                }
                self.types.push(TypeDef {
                    name: format!("R{idx}"),
                    kind: TypeKind::Record(fields),
                });
            }
        }
    }

    fn is_record(&self, i: usize) -> bool {
        matches!(self.types[i].kind, TypeKind::Record(_))
    }

    fn variants(&self, i: usize) -> Vec<(String, Vec<Ty>)> {
        match &self.types[i].kind {
            TypeKind::Sum(vs) => vs.clone(),
            TypeKind::Record(_) => Vec::new(),
        }
    }

    fn fields(&self, i: usize) -> Vec<(String, Ty)> {
        match &self.types[i].kind {
            TypeKind::Record(fs) => fs.clone(),
            TypeKind::Sum(_) => Vec::new(),
        }
    }

    fn is_recursive_sum(&self, i: usize) -> bool {
        self.variants(i)
            .iter()
            .any(|(_, fs)| fs.contains(&Ty::User(i)))
    }

    fn pick_ty(&mut self, allow_fn: bool) -> Ty {
        loop {
            let w: Vec<u32> = self.pool.iter().map(|(_, w)| *w).collect();
            let i = self.rng.weighted(&w);
            let t = self.pool[i].0.clone();
            if allow_fn || !matches!(t, Ty::Fn(..)) {
                return t;
            }
        }
    }

    /// A type with a heap block or holding one: what ownership decides on.
    fn pick_heap_ty(&mut self) -> Ty {
        loop {
            let t = self.pick_ty(false);
            if matches!(t, Ty::Str | Ty::List(_) | Ty::Map(..) | Ty::User(_)) {
                return t;
            }
        }
    }

    // ---- functions ----

    fn begin_fn(&mut self, sig: Sig, params: &[(String, Ty)]) {
        self.vars.clear();
        self.lambda_floor = 0;
        self.loops = 0;
        self.repeated = 0;
        self.rec_calls = 0;
        self.in_lambda = 0;
        self.smaller.clear();
        self.parent.clear();
        self.recursed.clear();
        self.hidden = None;
        self.budget = 160;
        for (n, t) in params {
            self.vars.push(Var {
                name: n.clone(),
                ty: t.clone(),
                mutable: false,
                counter: false,
            });
        }
        self.current = Some(sig);
    }

    fn params(&mut self, n: usize) -> Vec<(String, Ty)> {
        (0..n)
            .map(|_| {
                let t = self.pick_ty(true);
                (self.name("p"), t)
            })
            .collect()
    }

    fn helper_fn(&mut self) -> FnDef {
        let name = self.name("f");
        let n = self.rng.range(1, 3) as usize;
        let params = self.params(n);
        // Return a parameter's type often, so one path can return it.
        let ret = if self.rng.chance(50) {
            let (_, t) = self.rng.pick(&params).clone();
            if matches!(t, Ty::Fn(..)) {
                self.pick_ty(false)
            } else {
                t
            }
        } else {
            self.pick_ty(false)
        };
        let sig = Sig {
            name: name.clone(),
            params: params.iter().map(|(_, t)| t.clone()).collect(),
            ret: ret.clone(),
            fuel: false,
        };
        self.begin_fn(sig.clone(), &params);
        let n_stmts = self.rng.range(1, 5) as usize;
        let mut body = self.block(n_stmts, Some(&ret), Ctx::Decided);
        // A parameter on one path, a fresh value on the other.
        let same: Vec<String> = params
            .iter()
            .filter(|(_, t)| *t == ret)
            .map(|(n, _)| n.clone())
            .collect();
        if !same.is_empty() && self.rng.chance(60) {
            self.tag("param_or_fresh");
            let p = self.rng.pick(&same).clone();
            let cond = self.expr(&Ty::Bool, 2, Ctx::Free);
            let fresh = self.fresh_expr(&ret);
            let (a, b) = if self.rng.chance(50) {
                (Expr::var(ret.clone(), &p), fresh)
            } else {
                (fresh, Expr::var(ret.clone(), &p))
            };
            if self.rng.chance(50) {
                body.tail = Some(Box::new(Expr::new(
                    ret.clone(),
                    Kind::If(
                        Box::new(cond),
                        Box::new(tail_block(a)),
                        Box::new(tail_block(b)),
                    ),
                )));
            } else {
                self.tag("early_return");
                body.stmts.push(Stmt::If {
                    cond,
                    then: Block {
                        stmts: vec![Stmt::Return(Some(a))],
                        tail: None,
                    },
                    else_: None,
                });
                body.tail = Some(Box::new(b));
            }
        }
        self.fns.push(sig);
        FnDef {
            name,
            params,
            ret,
            body,
            fuel: None,
        }
    }

    fn fuel_fn(&mut self) -> FnDef {
        self.tag("fuel_recursion");
        let name = self.name("r");
        let n = self.rng.range(0, 2) as usize;
        let mut params = vec![("fuel".to_string(), Ty::Int)];
        params.extend(self.params(n));
        let ret = self.pick_ty(false);
        let sig = Sig {
            name: name.clone(),
            params: params.iter().map(|(_, t)| t.clone()).collect(),
            ret: ret.clone(),
            fuel: true,
        };
        self.begin_fn(sig.clone(), &params);
        // No self call in the base case.
        self.rec_calls = 2;
        let base = self.expr(&ret, 2, Ctx::Decided);
        self.rec_calls = 0;
        let n_stmts = self.rng.range(1, 4) as usize;
        let mut body = self.block(n_stmts, Some(&ret), Ctx::Decided);
        if self.rec_calls == 0 {
            // Make sure it recurses at least once.
            let args = self.call_args(&sig.params[1..]);
            let call = Expr::new(ret.clone(), Kind::RecCall(name.clone(), args));
            let v = self.name("v");
            body.stmts.push(Stmt::Let {
                name: v.clone(),
                ty: ret.clone(),
                mutable: false,
                init: call,
            });
            if self.rng.chance(50) {
                body.stmts.push(print(Expr::var(ret.clone(), &v)));
            } else {
                body.tail = Some(Box::new(Expr::var(ret.clone(), &v)));
            }
        }
        self.fns.push(sig);
        FnDef {
            name,
            params,
            ret,
            body,
            fuel: Some(Box::new(base)),
        }
    }

    /// `fn wN(t: S) -> R { match t { ... } }` recursing on the fields of the
    /// matched value.
    fn structural_fn(&mut self, sum: usize, ret: Ty) -> FnDef {
        self.tag("structural_recursion");
        let name = self.name("w");
        let t = Ty::User(sum);
        let params = vec![("t".to_string(), t.clone())];
        let sig = Sig {
            name: name.clone(),
            params: vec![t.clone()],
            ret: ret.clone(),
            fuel: false,
        };
        self.begin_fn(sig.clone(), &params);
        self.structural = Some((name.clone(), t.clone()));
        if ret == t {
            self.tag("tree_rebuild");
        }
        let scrut = Expr::var(t.clone(), "t");
        let m = self.match_expr(scrut, &ret, Ctx::Decided, 2);
        self.structural = None;
        self.fns.push(sig);
        FnDef {
            name,
            params,
            ret,
            body: tail_block(m),
            fuel: None,
        }
    }

    fn main_fn(&mut self) -> FnDef {
        let sig = Sig {
            name: "main".into(),
            params: vec![],
            ret: Ty::Unit,
            fuel: false,
        };
        self.begin_fn(sig, &[]);
        self.budget = 400;
        let n = self.rng.range(6, 16) as usize;
        let mut body = self.block_stmts(n);
        // Call the helpers, with values of main as arguments.
        for f in self.fns.clone() {
            if self.rng.chance(70) {
                let call = self.call(&f);
                self.declare(&mut body, "v", &f.ret, false, call);
            }
        }
        // Show everything still in scope, so a wrong free shows.
        let shown: Vec<Var> = self.vars.clone();
        for v in shown {
            if self.rng.chance(80) {
                body.push(print(Expr::var(v.ty.clone(), &v.name)));
            }
        }
        self.vars.clear();
        FnDef {
            name: "main".into(),
            params: vec![],
            ret: Ty::Unit,
            body: Block {
                stmts: body,
                tail: None,
            },
            fuel: None,
        }
    }

    // ---- scopes ----

    fn visible(&self) -> impl Iterator<Item = &Var> {
        let floor = self.lambda_floor;
        let hidden = self.hidden.clone();
        self.vars.iter().enumerate().filter_map(move |(i, v)| {
            if (v.mutable && i < floor) || hidden.as_deref() == Some(v.name.as_str()) {
                None
            } else {
                Some(v)
            }
        })
    }

    /// A visible var of type `t`, recent ones more likely.
    fn var_of(&mut self, t: &Ty) -> Option<String> {
        let vs: Vec<String> = self
            .visible()
            .filter(|v| v.ty == *t)
            .map(|v| v.name.clone())
            .collect();
        if vs.is_empty() {
            return None;
        }
        let n = vs.len();
        let i = if self.rng.chance(60) {
            n - 1 - self.rng.below(n.min(3))
        } else {
            self.rng.below(n)
        };
        Some(vs[i].clone())
    }

    fn assignable(&mut self) -> Option<Var> {
        let vs: Vec<Var> = self
            .visible()
            .filter(|v| v.mutable && !v.counter)
            .cloned()
            .collect();
        if vs.is_empty() {
            None
        } else {
            Some(self.rng.pick(&vs).clone())
        }
    }

    fn bind(&mut self, name: &str, ty: Ty, mutable: bool) {
        self.vars.push(Var {
            name: name.to_string(),
            ty,
            mutable,
            counter: false,
        });
    }

    /// Whether `f` may be called here: calls inside a loop or lambda
    /// multiply, so a helper calls others only outside them and main
    /// inside one at most; fuel functions only outside.
    fn calls_ok(&self, f: &Sig) -> bool {
        let main = self.current.as_ref().is_some_and(|c| c.name == "main");
        let limit = if main && !f.fuel { 1 } else { 0 };
        self.repeated <= limit
    }

    /// `let` (or `var`) PREFIXn: ty = init, appended to `out`; the name is
    /// bound from the next statement on.
    fn declare(
        &mut self,
        out: &mut Vec<Stmt>,
        prefix: &str,
        ty: &Ty,
        mutable: bool,
        init: Expr,
    ) -> String {
        let name = self.name(prefix);
        out.push(Stmt::Let {
            name: name.clone(),
            ty: ty.clone(),
            mutable,
            init,
        });
        self.bind(&name, ty.clone(), mutable);
        name
    }

    // ---- statements ----

    fn block(&mut self, n: usize, tail: Option<&Ty>, ctx: Ctx) -> Block {
        let mark = self.vars.len();
        let stmts = self.block_stmts(n);
        let tail = tail.map(|t| Box::new(self.expr(t, 3, ctx)));
        self.vars.truncate(mark);
        Block { stmts, tail }
    }

    fn block_stmts(&mut self, n: usize) -> Vec<Stmt> {
        let mut out = Vec::new();
        for _ in 0..n {
            self.stmt(&mut out);
        }
        out
    }

    fn stmt(&mut self, out: &mut Vec<Stmt>) {
        let in_loop = self.loops > 0;
        // Loops and lambdas multiply what runs inside them: two deep at
        // most, counting both.
        let nested_ok = self.repeated < 2 && self.budget > 0;
        let can_return = self.in_lambda == 0 && self.current.is_some();
        let w = [
            14,                                        // 0 let fresh
            6,                                         // 1 var
            5,                                         // 2 alias
            10,                                        // 3 print
            if nested_ok { 7 } else { 0 },             // 4 for
            if nested_ok { 2 } else { 0 },             // 5 while
            if self.budget > 0 { 4 } else { 0 },       // 6 if
            8,                                         // 7 assign / update
            4,                                         // 8 store
            2,                                         // 9 let tuple
            1,                                         // 10 log
            1,                                         // 11 trap
            3,                                         // 12 call as statement
            if in_loop { 2 } else { 0 },               // 13 break / continue
            if can_return { 1 } else { 0 },            // 14 early return
            if self.budget > 0 { 3 } else { 0 },       // 15 match statement
            3,                                         // 16 map put
            if in_loop || can_return { 2 } else { 0 }, // 17 let ... else
            4,                                         // 18 set
        ];
        match self.rng.weighted(&w) {
            0 => {
                let t = if self.rng.chance(70) {
                    self.pick_heap_ty()
                } else {
                    self.pick_ty(true)
                };
                let init = self.expr(&t, 3, Ctx::Decided);
                let name = self.declare(out, "v", &t, false, init);
                if self.rng.chance(35) {
                    // Use it at once, so a later use is its second.
                    self.tag("use_twice");
                    out.push(self.use_stmt(&name, &t));
                }
            }
            1 => {
                let t = self.pick_heap_ty();
                let init = self.expr(&t, 2, Ctx::Decided);
                self.declare(out, "m", &t, true, init);
            }
            2 => {
                let t = self.pick_heap_ty();
                let Some(src) = self.var_of(&t) else {
                    return self.stmt(out);
                };
                self.tag("alias");
                self.declare(out, "a", &t, false, Expr::var(t.clone(), &src));
                if self.rng.chance(50) {
                    out.push(self.use_stmt(&src, &t));
                }
            }
            3 => {
                let e = if self.rng.chance(50) {
                    let t = self.pick_ty(true);
                    match self.var_of(&t) {
                        Some(v) => Expr::var(t, &v),
                        None => self.expr(&t, 2, Ctx::Free),
                    }
                } else {
                    self.interp(2)
                };
                out.push(print(e));
            }
            4 => self.for_stmt(out),
            5 => self.while_stmt(out),
            6 => {
                let cond = self.expr(&Ty::Bool, 2, Ctx::Free);
                let n = self.rng.range(1, 3) as usize;
                let then = self.block(n, None, Ctx::Free);
                let else_ = if self.rng.chance(40) {
                    let n = self.rng.range(1, 2) as usize;
                    Some(self.block(n, None, Ctx::Free))
                } else {
                    None
                };
                out.push(Stmt::If { cond, then, else_ });
            }
            7 => self.update_stmt(out),
            8 => self.store_stmt(out),
            9 => {
                let t = Ty::Tuple(vec![Ty::Int, Ty::Str]);
                let init = self.expr(&t, 2, Ctx::Free);
                self.tag("let_tuple");
                let a = self.name("n");
                let b = self.name("s");
                out.push(Stmt::LetTuple {
                    names: vec![a.clone(), b.clone()],
                    init,
                });
                self.bind(&a, Ty::Int, false);
                self.bind(&b, Ty::Str, false);
            }
            10 => {
                self.tag("log");
                let e = self.interp(1);
                out.push(Stmt::Expr(Expr::call(Ty::Unit, "log", vec![e])));
            }
            11 => {
                self.tag("trap");
                let cond = self.expr(&Ty::Bool, 2, Ctx::Free);
                let msg = self.interp(1);
                out.push(Stmt::If {
                    cond,
                    then: Block {
                        stmts: vec![Stmt::Expr(Expr::call(Ty::Unit, "trap", vec![msg]))],
                        tail: None,
                    },
                    else_: None,
                });
            }
            12 => {
                let callable: Vec<Sig> = self.fns.clone();
                if callable.is_empty() {
                    return self.stmt(out);
                }
                let f = self.rng.pick(&callable).clone();
                if !self.calls_ok(&f) {
                    return self.stmt(out);
                }
                let e = self.call(&f);
                if self.rng.chance(50) {
                    out.push(print(e));
                } else {
                    out.push(Stmt::Expr(e));
                }
            }
            13 => {
                let cond = self.expr(&Ty::Bool, 1, Ctx::Free);
                let s = if self.rng.chance(50) {
                    self.tag("break");
                    Stmt::Break
                } else {
                    self.tag("continue");
                    Stmt::Continue
                };
                out.push(Stmt::If {
                    cond,
                    then: Block {
                        stmts: vec![s],
                        tail: None,
                    },
                    else_: None,
                });
            }
            14 => {
                let ret = self.current.as_ref().map(|s| s.ret.clone());
                let Some(ret) = ret else { return };
                self.tag("early_return");
                let cond = self.expr(&Ty::Bool, 2, Ctx::Free);
                let value = if ret == Ty::Unit {
                    None
                } else {
                    Some(self.expr(&ret, 2, Ctx::Decided))
                };
                let mut stmts = Vec::new();
                if self.rng.chance(40) {
                    let e = self.interp(1);
                    stmts.push(print(e));
                }
                stmts.push(Stmt::Return(value));
                out.push(Stmt::If {
                    cond,
                    then: Block { stmts, tail: None },
                    else_: None,
                });
            }
            15 => {
                let t = self.matchable_ty();
                let scrut = self.expr(&t, 2, Ctx::Free);
                let m = self.match_expr(scrut, &Ty::Unit, Ctx::Free, 1);
                out.push(Stmt::Expr(m));
            }
            16 => self.map_put_stmt(out),
            17 => self.let_else_stmt(out, in_loop, can_return),
            _ => self.set_stmt(out),
        }
    }

    /// `let Some(x) = opt else { .. }`, the else block leaving the loop
    /// iteration or the function (early, with a value of its own).
    fn let_else_stmt(&mut self, out: &mut Vec<Stmt>, in_loop: bool, can_return: bool) {
        self.tag("let_else");
        let t = self.pick_ty(false);
        let init = self.expr(&Ty::opt(t.clone()), 2, Ctx::Free);
        let ret = self.current.as_ref().map(|s| s.ret.clone());
        let leave = match ret {
            Some(ret) if can_return && (!in_loop || self.rng.chance(30)) => {
                let value = if ret == Ty::Unit {
                    None
                } else {
                    Some(self.expr(&ret, 2, Ctx::Decided))
                };
                Stmt::Return(value)
            }
            _ if self.rng.chance(50) => Stmt::Break,
            _ => Stmt::Continue,
        };
        let mut stmts = Vec::new();
        if self.rng.chance(40) {
            let e = self.interp(1);
            stmts.push(print(e));
        }
        stmts.push(leave);
        let name = self.name("g");
        out.push(Stmt::LetElse {
            name: name.clone(),
            ty: t.clone(),
            init,
            diverge: Block { stmts, tail: None },
        });
        self.bind(&name, t, false);
    }

    /// A statement that reads `name` (a second use when it was used
    /// before).
    fn use_stmt(&mut self, name: &str, t: &Ty) -> Stmt {
        let v = Expr::var(t.clone(), name);
        let e = match t {
            Ty::List(_) if self.rng.chance(50) => Expr::method(Ty::Int, v, "len", vec![]),
            Ty::Str if self.rng.chance(50) => Expr::method(Ty::Str, v, "upper", vec![]),
            _ => {
                let h = Part::Hole(v);
                Expr::new(
                    Ty::Str,
                    Kind::Interp(vec![Part::Text(format!("{name}=")), h]),
                )
            }
        };
        print(e)
    }

    fn for_stmt(&mut self, out: &mut Vec<Stmt>) {
        let mark = self.vars.len();
        let choice = self.rng.below(4);
        let (pat, iter) = match choice {
            0 => {
                let i = self.name("i");
                let hi = self.rng.range(1, if self.loops > 0 { 3 } else { 5 });
                let lo = Expr::int(0);
                let iter = Expr::new(
                    Ty::list(Ty::Int),
                    Kind::Range(Box::new(lo), Box::new(Expr::int(hi))),
                );
                self.bind(&i, Ty::Int, false);
                (i, iter)
            }
            1 => {
                let m = Ty::map(Ty::Str, Ty::Int);
                let src = match self.var_of(&m) {
                    Some(v) => Expr::var(m.clone(), &v),
                    None => self.expr(&m, 2, Ctx::Free),
                };
                self.tag("for_entries");
                let k = self.name("k");
                let v = self.name("c");
                let iter = Expr::method(
                    Ty::list(Ty::Tuple(vec![Ty::Str, Ty::Int])),
                    src,
                    "entries",
                    vec![],
                );
                self.bind(&k, Ty::Str, false);
                self.bind(&v, Ty::Int, false);
                (format!("({k}, {v})"), iter)
            }
            _ => {
                let elem = if self.rng.chance(50) {
                    Ty::Int
                } else {
                    Ty::Str
                };
                let lt = Ty::list(elem.clone());
                let src = match self.var_of(&lt) {
                    Some(v) if self.rng.chance(70) => Expr::var(lt.clone(), &v),
                    _ => self.expr(&lt, 2, Ctx::Free),
                };
                // Keep nested loops short.
                let src = if self.loops > 0 {
                    Expr::method(lt.clone(), src, "take", vec![Expr::int(3)])
                } else {
                    Expr::method(lt.clone(), src, "take", vec![Expr::int(6)])
                };
                let x = self.name("x");
                self.bind(&x, elem, false);
                (x, src)
            }
        };
        self.loops += 1;
        self.repeated += 1;
        let n = self.rng.range(1, 4) as usize;
        let body = self.loop_body(n);
        self.loops -= 1;
        self.repeated -= 1;
        self.vars.truncate(mark);
        out.push(Stmt::For { pat, iter, body });
    }

    /// A loop body: statements, with a var update most of the time.
    fn loop_body(&mut self, n: usize) -> Block {
        let mark = self.vars.len();
        let mut stmts = self.block_stmts(n);
        if self.rng.chance(70) {
            self.update_stmt(&mut stmts);
        }
        self.vars.truncate(mark);
        Block { stmts, tail: None }
    }

    fn while_stmt(&mut self, out: &mut Vec<Stmt>) {
        self.tag("while");
        let counter = self.name("w");
        let bound = self.rng.range(1, if self.loops > 0 { 3 } else { 5 });
        let cond = if self.rng.chance(30) {
            Some(self.expr(&Ty::Bool, 1, Ctx::Free))
        } else {
            None
        };
        self.vars.push(Var {
            name: counter.clone(),
            ty: Ty::Int,
            mutable: true,
            counter: true,
        });
        self.loops += 1;
        self.repeated += 1;
        let n = self.rng.range(1, 3) as usize;
        let body = self.loop_body(n);
        self.loops -= 1;
        self.repeated -= 1;
        // The counter stays in scope after the loop, as rendered.
        out.push(Stmt::While {
            counter,
            bound,
            cond,
            body,
        });
    }

    /// `x := ...` in one of the shapes the analysis treats specially.
    fn update_stmt(&mut self, out: &mut Vec<Stmt>) {
        let Some(v) = self.assignable() else {
            // Nothing to update: declare a var to update later.
            let t = self.pick_heap_ty();
            let init = self.expr(&t, 1, Ctx::Decided);
            self.declare(out, "m", &t, true, init);
            return;
        };
        if self.loops > 0 {
            self.tag("var_update_in_loop");
        }
        let t = v.ty.clone();
        let x = Expr::var(t.clone(), &v.name);
        self.hidden = Some(v.name.clone());
        let value = match &t {
            Ty::List(e) => match self.rng.below(7) {
                0 | 1 => {
                    let a = self.expr(e, 2, Ctx::Decided);
                    Expr::method(t.clone(), x, "push", vec![a])
                }
                2 => {
                    let a = self.expr(&t, 2, Ctx::Decided);
                    let a = Expr::method(t.clone(), a, "take", vec![Expr::int(3)]);
                    Expr::method(t.clone(), x, "concat", vec![a])
                }
                3 => {
                    self.tag("view");
                    let m = if self.rng.chance(50) { "drop" } else { "take" };
                    let k = self.rng.range(0, 3);
                    Expr::method(t.clone(), x, m, vec![Expr::int(k)])
                }
                4 => {
                    let p = self.lambda(&[(**e).clone()], &Ty::Bool);
                    Expr::method(t.clone(), x, "filter", vec![p])
                }
                5 => Expr::method(t.clone(), x, "reverse", vec![]),
                _ => self.expr(&t, 2, Ctx::Decided),
            },
            Ty::Str => match self.rng.below(4) {
                0 => {
                    let a = self.expr(&Ty::Str, 1, Ctx::Free);
                    Expr::bin(Ty::Str, "+", x, a)
                }
                1 => {
                    self.tag("interpolation");
                    let h = self.hole(1);
                    Expr::new(
                        Ty::Str,
                        Kind::Interp(vec![Part::Hole(x), Part::Text("-".into()), Part::Hole(h)]),
                    )
                }
                2 => {
                    self.tag("view");
                    Expr::method(Ty::Str, x, "drop", vec![Expr::int(1)])
                }
                _ => self.expr(&t, 2, Ctx::Decided),
            },
            Ty::Int => {
                let a = self.expr(&Ty::Int, 1, Ctx::Free);
                Expr::bin(Ty::Int, "+", x, a)
            }
            Ty::User(i) if !self.is_record(*i) && self.is_recursive_sum(*i) => {
                self.tag("tree_rebuild");
                let vs = self.variants(*i);
                let (name, fields) = vs
                    .iter()
                    .find(|(_, fs)| fs.contains(&t))
                    .cloned()
                    .expect("a recursive variant");
                let mut args = Vec::new();
                let mut placed = false;
                for f in &fields {
                    if *f == t && !placed {
                        placed = true;
                        args.push(x.clone());
                    } else if *f == t {
                        // Only the updated tree grows.
                        args.push(self.simple(f, Ctx::Decided));
                    } else {
                        args.push(self.expr(f, 1, Ctx::Decided));
                    }
                }
                Expr::new(t.clone(), Kind::Ctor(name, args))
            }
            Ty::Map(..) => {
                self.hidden = None;
                self.map_put_stmt(out);
                return;
            }
            _ => self.expr(&t, 2, Ctx::Decided),
        };
        self.hidden = None;
        out.push(Stmt::Assign {
            name: v.name.clone(),
            value,
        });
        if self.loops > 0 && matches!(t, Ty::Str | Ty::List(_)) {
            // Vars updated from each other in a loop grow like Fibonacci
            // numbers: cut back (`x := x.take(..)` keeps a view of the
            // var's own value, a case of its own for the analysis).
            let x = Expr::var(t.clone(), &v.name);
            let len = Expr::method(Ty::Int, x.clone(), "len", vec![]);
            out.push(Stmt::If {
                cond: Expr::bin(Ty::Bool, ">", len, Expr::int(CLAMP_AT)),
                then: Block {
                    stmts: vec![Stmt::Assign {
                        name: v.name.clone(),
                        value: Expr::method(t.clone(), x, "take", vec![Expr::int(CLAMP_TO)]),
                    }],
                    tail: None,
                },
                else_: None,
            });
        }
    }

    /// `xs.set(k, v)` in the shapes that decide between writing in place
    /// and copying: a var updated by its own set (guarded by its length,
    /// or in a loop over its indices, the new element often read from it),
    /// a new list's set at its last use or read again after, an alias
    /// taken before the set and read after it, and a set on a new list no
    /// name holds. Indices stay in bounds.
    fn set_stmt(&mut self, out: &mut Vec<Stmt>) {
        self.tag("set");
        let mut t = self.pick_heap_ty();
        for _ in 0..4 {
            if matches!(t, Ty::List(_)) {
                break;
            }
            t = self.pick_heap_ty();
        }
        let e = match &t {
            Ty::List(e) => (**e).clone(),
            _ => {
                t = Ty::list(Ty::Str);
                Ty::Str
            }
        };
        let lit = |g: &mut Self, n: usize| {
            let xs = (0..n).map(|_| g.expr(&e, 1, Ctx::Decided)).collect();
            Expr::new(t.clone(), Kind::List(xs))
        };
        let elem = |g: &mut Self, x: &str, k: Expr| {
            if g.rng.chance(30) {
                g.tag("set_reads_itself");
                Expr::new(
                    e.clone(),
                    Kind::Index(Box::new(Expr::var(t.clone(), x)), Box::new(k)),
                )
            } else {
                g.expr(&e, 2, Ctx::Decided)
            }
        };
        match self.rng.below(5) {
            0 | 1 => {
                // A var replaced by its own set.
                let found = self
                    .visible()
                    .filter(|v| v.mutable && !v.counter && v.ty == t)
                    .map(|v| v.name.clone())
                    .next();
                let x = match found {
                    Some(x) => x,
                    None => {
                        let init = lit(self, 3);
                        self.declare(out, "m", &t, true, init)
                    }
                };
                let xv = Expr::var(t.clone(), &x);
                let len = Expr::method(Ty::Int, xv.clone(), "len", vec![]);
                if self.rng.chance(50) && self.repeated < 2 {
                    self.tag("set_loop");
                    let i = self.name("i");
                    let mark = self.vars.len();
                    self.bind(&i, Ty::Int, false);
                    self.loops += 1;
                    self.repeated += 1;
                    let v = elem(self, &x, Expr::var(Ty::Int, &i));
                    self.loops -= 1;
                    self.repeated -= 1;
                    self.vars.truncate(mark);
                    let iter = Expr::new(
                        Ty::list(Ty::Int),
                        Kind::Range(Box::new(Expr::int(0)), Box::new(len)),
                    );
                    let k = Expr::var(Ty::Int, &i);
                    let set = Expr::method(t.clone(), xv, "set", vec![k, v]);
                    out.push(Stmt::For {
                        pat: i,
                        iter,
                        body: Block {
                            stmts: vec![Stmt::Assign {
                                name: x,
                                value: set,
                            }],
                            tail: None,
                        },
                    });
                } else {
                    let k = self.rng.range(0, 3);
                    let v = elem(self, &x, Expr::int(k));
                    let set = Expr::method(t.clone(), xv, "set", vec![Expr::int(k), v]);
                    out.push(Stmt::If {
                        cond: Expr::bin(Ty::Bool, ">", len, Expr::int(k)),
                        then: Block {
                            stmts: vec![Stmt::Assign {
                                name: x,
                                value: set,
                            }],
                            tail: None,
                        },
                        else_: None,
                    });
                }
            }
            2 | 3 => {
                // A new list's set: at its last use, or read again after,
                // or with an alias read after.
                let init = lit(self, 3);
                let s = self.declare(out, "l", &t, false, init);
                let alias = if self.rng.chance(30) {
                    self.tag("set_alias");
                    Some(self.declare(out, "a", &t, false, Expr::var(t.clone(), &s)))
                } else {
                    None
                };
                let k = self.rng.range(0, 2);
                let v = elem(self, &s, Expr::int(k));
                let recv = Expr::var(t.clone(), &s);
                let set = Expr::method(t.clone(), recv, "set", vec![Expr::int(k), v]);
                let y = self.declare(out, "y", &t, false, set);
                if self.rng.chance(40) {
                    self.tag("set_then_read");
                    out.push(print(Expr::var(t.clone(), &s)));
                }
                if let Some(a) = alias {
                    out.push(print(Expr::var(t.clone(), &a)));
                }
                if self.rng.chance(50) {
                    out.push(print(Expr::var(t.clone(), &y)));
                }
            }
            _ => {
                // A new list no name holds.
                let k = self.rng.range(0, 1);
                let v = self.expr(&e, 2, Ctx::Decided);
                let recv = lit(self, 2);
                let set = Expr::method(t.clone(), recv, "set", vec![Expr::int(k), v]);
                out.push(print(set));
            }
        }
    }

    /// A value stored into a container, then the source read again.
    fn store_stmt(&mut self, out: &mut Vec<Stmt>) {
        let t = self.pick_heap_ty();
        let src = match self.var_of(&t) {
            Some(v) => v,
            None => {
                let init = self.expr(&t, 2, Ctx::Decided);
                self.declare(out, "v", &t, false, init)
            }
        };
        let x = Expr::var(t.clone(), &src);
        let src_is_var = self.vars.iter().any(|v| v.name == src && v.mutable);
        let kind = match self.rng.below(5) {
            // A lambda may not capture a `var`.
            4 if src_is_var => 1,
            k => k,
        };
        let (ty, init) = match kind {
            0 => {
                // Into a record when one has a field of this type.
                let recs: Vec<usize> = (0..self.types.len())
                    .filter(|&i| self.fields(i).iter().any(|(_, ft)| *ft == t))
                    .collect();
                if let Some(&r) = recs.first() {
                    self.tag("store_record");
                    let fields = self.fields(r);
                    let mut vals = Vec::new();
                    let mut placed = false;
                    for (f, ft) in fields {
                        if ft == t && !placed {
                            placed = true;
                            vals.push((f, x.clone()));
                        } else {
                            vals.push((f, self.expr(&ft, 1, Ctx::Decided)));
                        }
                    }
                    let name = self.types[r].name.clone();
                    (
                        Ty::User(r),
                        Expr::new(Ty::User(r), Kind::Record(name, vals)),
                    )
                } else {
                    self.tag("store_list");
                    let lt = Ty::list(t.clone());
                    (
                        lt.clone(),
                        Expr::new(lt, Kind::List(vec![x.clone(), x.clone()])),
                    )
                }
            }
            1 => {
                self.tag("store_tuple");
                let tt = Ty::Tuple(vec![t.clone(), Ty::Int]);
                let n = self.expr(&Ty::Int, 1, Ctx::Free);
                (tt.clone(), Expr::new(tt, Kind::Tuple(vec![x.clone(), n])))
            }
            2 => {
                self.tag("store_list");
                let lt = Ty::list(t.clone());
                let other = self.expr(&t, 1, Ctx::Decided);
                (
                    lt.clone(),
                    Expr::new(lt, Kind::List(vec![x.clone(), other])),
                )
            }
            3 => {
                self.tag("store_ctor");
                let ot = Ty::opt(t.clone());
                (
                    ot.clone(),
                    Expr::new(ot, Kind::Ctor("Some".into(), vec![x.clone()])),
                )
            }
            _ => {
                self.tag("closure_capture");
                let ft = Ty::func(vec![Ty::Int], Ty::Str);
                let p = self.name("q");
                let body = Block {
                    stmts: vec![],
                    tail: Some(Box::new(Expr::new(
                        Ty::Str,
                        Kind::Interp(vec![
                            Part::Hole(Expr::var(Ty::Int, &p)),
                            Part::Text(":".into()),
                            Part::Hole(x.clone()),
                        ]),
                    ))),
                };
                (
                    ft.clone(),
                    Expr::new(ft, Kind::Lambda(vec![(p, Ty::Int)], Box::new(body))),
                )
            }
        };
        let name = self.declare(out, "st", &ty, false, init);
        // Read the source again, then what holds it.
        out.push(self.use_stmt(&src, &t));
        if let Ty::Fn(..) = ty {
            let call = Expr::new(
                Ty::Str,
                Kind::CallValue(Box::new(Expr::var(ty.clone(), &name)), vec![Expr::int(7)]),
            );
            out.push(print(call));
        } else {
            out.push(print(Expr::var(ty, &name)));
        }
    }

    /// `m.put(key, value)` on a map with Str keys, the key often built
    /// fresh.
    fn map_put_stmt(&mut self, out: &mut Vec<Stmt>) {
        let vt = if self.rng.chance(70) {
            Ty::Int
        } else {
            Ty::list(Ty::Int)
        };
        let mt = Ty::map(Ty::Str, vt.clone());
        let m = match self.var_of(&mt) {
            Some(m) => m,
            None => self.declare(out, "mp", &mt, false, Expr::lit(mt.clone(), "empty_map()")),
        };
        self.tag("map_str_keys");
        let mut key = self.key_expr();
        // Sometimes the key is named, put, then updated through a function.
        let updated = if self.rng.chance(25) {
            let k = self.declare(out, "k", &Ty::Str, false, key);
            key = Expr::var(Ty::Str, &k);
            Some(k)
        } else {
            None
        };
        // Often a value that is read again after the map holds it.
        let stored = if vt != Ty::Int && self.rng.chance(50) {
            self.var_of(&vt)
        } else {
            None
        };
        let value = match &stored {
            Some(v) => {
                self.tag("store_map");
                Expr::var(vt.clone(), v)
            }
            None => self.expr(&vt, 2, Ctx::Decided),
        };
        let put = Expr::method(
            mt.clone(),
            Expr::var(mt.clone(), &m),
            "put",
            vec![key, value],
        );
        out.push(Stmt::Expr(put));
        if let Some(k) = updated {
            self.tag("map_update");
            let f = self.lambda(std::slice::from_ref(&vt), &vt);
            let m = Expr::var(mt.clone(), &m);
            let update = Expr::method(mt, m, "update", vec![Expr::var(Ty::Str, &k), f]);
            out.push(Stmt::Expr(update));
        }
        if let Some(v) = stored {
            out.push(self.use_stmt(&v, &vt));
        }
    }

    fn key_expr(&mut self) -> Expr {
        match self.rng.below(3) {
            0 => Expr::lit(Ty::Str, quote(self.rng.word(&["k1", "k2", "a", "zz"]))),
            1 => {
                self.tag("interpolation");
                let h = self.hole(1);
                // A key spelling out a container (the map itself, say)
                // doubles the map's text with every put: key by its size.
                let h = match &h.ty {
                    Ty::List(_) | Ty::Str | Ty::Map(..) => Expr::method(Ty::Int, h, "len", vec![]),
                    Ty::Int | Ty::Bool | Ty::F64 => h,
                    _ => Expr::int(self.rng.range(0, 9)),
                };
                Expr::new(
                    Ty::Str,
                    Kind::Interp(vec![Part::Text("k".into()), Part::Hole(h)]),
                )
            }
            _ => clamp(self.expr(&Ty::Str, 1, Ctx::Free)),
        }
    }

    // ---- expressions ----

    fn matchable_ty(&mut self) -> Ty {
        let sums: Vec<usize> = (0..self.types.len())
            .filter(|&i| !self.is_record(i))
            .collect();
        match self.rng.below(6) {
            0 | 1 if !sums.is_empty() => Ty::User(*self.rng.pick(&sums)),
            2 => Ty::opt(if self.rng.chance(50) {
                Ty::Int
            } else {
                Ty::Str
            }),
            3 => Ty::Tuple(vec![Ty::Int, Ty::Str]),
            4 => Ty::Int,
            _ => Ty::Str,
        }
    }

    /// A value of `t` that is certainly fresh (a new block when non-empty).
    fn fresh_expr(&mut self, t: &Ty) -> Expr {
        match t {
            Ty::Str => self.interp(1),
            Ty::List(e) => {
                let a = self.expr(e, 1, Ctx::Decided);
                let b = self.expr(e, 1, Ctx::Decided);
                Expr::new(t.clone(), Kind::List(vec![a, b]))
            }
            _ => self.expr(t, 2, Ctx::Decided),
        }
    }

    fn expr(&mut self, t: &Ty, depth: u32, ctx: Ctx) -> Expr {
        self.budget -= 1;
        if depth == 0 || self.budget <= 0 {
            return self.leaf(t, ctx);
        }
        // Existing values first: aliasing and second uses.
        if self.rng.chance(35) {
            if let Some(v) = self.var_of(t) {
                return Expr::var(t.clone(), &v);
            }
        }
        for _ in 0..4 {
            let generic = self.rng.chance(25);
            let e = if generic {
                self.generic_expr(t, depth, ctx)
            } else {
                self.typed_expr(t, depth, ctx)
            };
            if let Some(e) = e {
                return e;
            }
        }
        self.leaf(t, ctx)
    }

    /// A variable, or the simplest value of `t`.
    fn leaf(&mut self, t: &Ty, ctx: Ctx) -> Expr {
        if self.rng.chance(60) {
            if let Some(v) = self.var_of(t) {
                return Expr::var(t.clone(), &v);
            }
        }
        self.simple(t, ctx)
    }

    fn simple(&mut self, t: &Ty, ctx: Ctx) -> Expr {
        match t {
            Ty::Int => Expr::int(self.rng.range(-3, 12)),
            Ty::Bool => Expr::lit(Ty::Bool, if self.rng.chance(50) { "true" } else { "false" }),
            Ty::Str => Expr::lit(Ty::Str, quote(self.rng.word(WORDS))),
            Ty::F64 => Expr::lit(
                Ty::F64,
                self.rng.word(&["1.5", "0.25", "2.0", "10.75", "3.0e2"]),
            ),
            Ty::Unit => Expr::new(Ty::Unit, Kind::Block(Box::default())),
            Ty::List(e) => {
                if ctx == Ctx::Decided && self.rng.chance(20) {
                    return Expr::lit(t.clone(), "[]");
                }
                let n = self.rng.range(1, 3);
                let xs = (0..n).map(|_| self.simple(e, ctx)).collect();
                Expr::new(t.clone(), Kind::List(xs))
            }
            Ty::Map(k, v) => {
                if ctx == Ctx::Decided {
                    Expr::lit(t.clone(), "empty_map()")
                } else {
                    let k = self.simple(k, Ctx::Free);
                    let v = self.simple(v, Ctx::Free);
                    let m = Expr::lit(t.clone(), "empty_map()");
                    // `empty_map().put(k, v)` decides the type by its use.
                    Expr::method(t.clone(), m, "put", vec![k, v])
                }
            }
            Ty::Opt(e) => {
                if ctx == Ctx::Decided && self.rng.chance(40) {
                    Expr::lit(t.clone(), "None")
                } else {
                    let x = self.simple(e, ctx);
                    Expr::new(t.clone(), Kind::Ctor("Some".into(), vec![x]))
                }
            }
            Ty::Tuple(ts) => {
                let xs = ts.iter().map(|t| self.simple(t, ctx)).collect();
                Expr::new(t.clone(), Kind::Tuple(xs))
            }
            Ty::User(i) => {
                let i = *i;
                if self.is_record(i) {
                    let fs = self
                        .fields(i)
                        .into_iter()
                        .map(|(f, ft)| {
                            let v = self.simple(&ft, Ctx::Decided);
                            (f, v)
                        })
                        .collect();
                    Expr::new(t.clone(), Kind::Record(self.types[i].name.clone(), fs))
                } else {
                    let vs = self.variants(i);
                    let (name, fields) = if self.rng.chance(50) {
                        vs[0].clone()
                    } else {
                        vs[1].clone()
                    };
                    let args = fields
                        .iter()
                        .map(|ft| self.simple(ft, Ctx::Decided))
                        .collect();
                    Expr::new(t.clone(), Kind::Ctor(name, args))
                }
            }
            Ty::Fn(ps, r) => {
                let ps: Vec<Ty> = ps.clone();
                self.lambda(&ps, r)
            }
        }
    }

    fn call_args(&mut self, params: &[Ty]) -> Vec<Expr> {
        params
            .iter()
            .map(|p| {
                if self.rng.chance(50) {
                    if let Some(v) = self.var_of(p) {
                        return Expr::var(p.clone(), &v);
                    }
                }
                self.expr(p, 2, Ctx::Decided)
            })
            .collect()
    }

    fn call(&mut self, f: &Sig) -> Expr {
        if f.fuel {
            let mut args = vec![Expr::int(self.rng.range(0, 3))];
            args.extend(self.call_args(&f.params[1..]));
            Expr::call(f.ret.clone(), &f.name, args)
        } else {
            let args = self.call_args(&f.params);
            Expr::call(f.ret.clone(), &f.name, args)
        }
    }

    /// Forms that produce any type.
    fn generic_expr(&mut self, t: &Ty, depth: u32, ctx: Ctx) -> Option<Expr> {
        match self.rng.below(9) {
            0 => {
                // A call of a function returning t.
                let fs: Vec<Sig> = self
                    .fns
                    .iter()
                    .filter(|f| f.ret == *t && self.calls_ok(f))
                    .cloned()
                    .collect();
                if fs.is_empty() {
                    return None;
                }
                let f = self.rng.pick(&fs).clone();
                Some(self.call(&f))
            }
            1 => {
                let c = self.expr(&Ty::Bool, depth - 1, Ctx::Free);
                let branch = |g: &mut Gen| {
                    if g.budget > 0 && g.rng.chance(30) {
                        g.block(1, Some(t), ctx)
                    } else {
                        tail_block(g.expr(t, depth - 1, ctx))
                    }
                };
                let a = branch(self);
                let b = branch(self);
                Some(Expr::new(
                    t.clone(),
                    Kind::If(Box::new(c), Box::new(a), Box::new(b)),
                ))
            }
            2 => {
                let st = self.matchable_ty();
                let scrut = self.expr(&st, depth - 1, Ctx::Free);
                Some(self.match_expr(scrut, t, ctx, depth - 1))
            }
            3 => {
                // A block that returns its own local.
                self.tag("block_returns_local");
                let mark = self.vars.len();
                // Statements first, var updates among them: assignments
                // inside an expression.
                let mut stmts = Vec::new();
                if self.budget > 0 && self.rng.chance(50) {
                    if self.rng.chance(60) {
                        self.update_stmt(&mut stmts);
                    } else {
                        self.stmt(&mut stmts);
                    }
                }
                let init = self.expr(t, depth - 1, Ctx::Decided);
                let name = self.declare(&mut stmts, "b", t, false, init);
                if self.rng.chance(50) {
                    stmts.push(self.use_stmt(&name, t));
                }
                self.vars.truncate(mark);
                Some(Expr::new(
                    t.clone(),
                    Kind::Block(Box::new(Block {
                        stmts,
                        tail: Some(Box::new(Expr::var(t.clone(), &name))),
                    })),
                ))
            }
            4 => {
                // A field of a record value.
                let recs: Vec<(usize, String)> = (0..self.types.len())
                    .flat_map(|i| {
                        self.fields(i)
                            .into_iter()
                            .filter(|(_, ft)| ft == t)
                            .map(move |(f, _)| (i, f))
                    })
                    .collect();
                if recs.is_empty() {
                    return None;
                }
                let (r, f) = self.rng.pick(&recs).clone();
                let base = self.expr(&Ty::User(r), depth - 1, Ctx::Free);
                Some(Expr::new(t.clone(), Kind::Field(Box::new(base), f)))
            }
            5 => {
                // An element: get and match, or a guarded index.
                let lt = Ty::list(t.clone());
                let xs = self.expr(&lt, depth - 1, Ctx::Free);
                let d = self.expr(t, depth - 1, ctx);
                let i = self.small_int(depth - 1);
                if self.rng.chance(50) {
                    let got = Expr::method(Ty::opt(t.clone()), xs, "get", vec![i]);
                    Some(match self.rng.below(20) {
                        0..=11 => self.unwrap_opt(got, t, d),
                        12..=18 => Expr::method(t.clone(), got, "unwrap_or", vec![d]),
                        _ => {
                            self.tag("trap");
                            Expr::method(t.clone(), got, "unwrap", vec![])
                        }
                    })
                } else if self.rng.chance(4) {
                    self.tag("trap");
                    Some(Expr::new(t.clone(), Kind::Index(Box::new(xs), Box::new(i))))
                } else {
                    let m = self.rng.word(&["first", "last"]);
                    let empty = Expr::method(Ty::Bool, xs.clone(), "is_empty", vec![]);
                    let pick = Expr::method(t.clone(), xs, m, vec![]);
                    Some(Expr::new(
                        t.clone(),
                        Kind::If(
                            Box::new(empty),
                            Box::new(tail_block(d)),
                            Box::new(tail_block(pick)),
                        ),
                    ))
                }
            }
            6 => {
                // A fold into t.
                let et = if self.rng.chance(50) {
                    Ty::Int
                } else {
                    Ty::Str
                };
                let xs = self.expr(&Ty::list(et.clone()), depth - 1, Ctx::Free);
                let init = self.expr(t, depth - 1, Ctx::Decided);
                let f = clamp_result(self.lambda(&[t.clone(), et], t));
                Some(Expr::method(t.clone(), xs, "fold", vec![init, f]))
            }
            7 => {
                // A call of a function value.
                let ps = vec![Ty::Int];
                let ft = Ty::func(ps.clone(), t.clone());
                let f = match self.var_of(&ft) {
                    Some(v) => Expr::var(ft.clone(), &v),
                    None => {
                        let own: Vec<Sig> = self
                            .fns
                            .iter()
                            .filter(|f| !f.fuel && f.params == ps && f.ret == *t)
                            .cloned()
                            .collect();
                        if own.is_empty() || self.rng.chance(50) {
                            self.lambda(&ps, t)
                        } else {
                            self.tag("fn_value");
                            Expr::lit(ft.clone(), self.rng.pick(&own).name.clone())
                        }
                    }
                };
                let a = self.small_int(depth - 1);
                Some(Expr::new(t.clone(), Kind::CallValue(Box::new(f), vec![a])))
            }
            _ => {
                // A map lookup.
                let mt = Ty::map(Ty::Str, t.clone());
                let m = self.var_of(&mt)?;
                let m = Expr::var(mt.clone(), &m);
                let k = self.key_expr();
                if self.rng.chance(70) {
                    let d = self.expr(t, depth - 1, Ctx::Decided);
                    Some(Expr::method(t.clone(), m, "get_or", vec![k, d]))
                } else if self.rng.chance(10) {
                    self.tag("trap");
                    Some(Expr::new(t.clone(), Kind::Index(Box::new(m), Box::new(k))))
                } else {
                    let got = Expr::method(Ty::opt(t.clone()), m, "get", vec![k]);
                    let d = self.expr(t, depth - 1, ctx);
                    Some(self.unwrap_opt(got, t, d))
                }
            }
        }
    }

    fn unwrap_opt(&mut self, o: Expr, t: &Ty, d: Expr) -> Expr {
        let v = self.name("u");
        if self.rng.chance(30) {
            self.tag("if_let");
            return Expr::new(
                t.clone(),
                Kind::IfLet(
                    format!("Some({v})"),
                    Box::new(o),
                    Box::new(tail_block(Expr::var(t.clone(), &v))),
                    Box::new(tail_block(d)),
                ),
            );
        }
        self.tag("match_option");
        let arms = vec![
            Arm {
                pat: format!("Some({v})"),
                body: Expr::var(t.clone(), &v),
            },
            Arm {
                pat: "None".into(),
                body: d,
            },
        ];
        Expr::new(t.clone(), Kind::Match(Box::new(o), arms))
    }

    /// A small non-negative Int (counts for take, drop, repeat, indexes).
    fn small_int(&mut self, depth: u32) -> Expr {
        if depth == 0 || self.rng.chance(60) {
            return Expr::int(self.rng.range(0, 4));
        }
        let e = self.expr(&Ty::Int, depth - 1, Ctx::Free);
        let m = Expr::bin(Ty::Int, "%", e, Expr::int(4));
        Expr::method(Ty::Int, m, "abs", vec![])
    }

    fn interp(&mut self, depth: u32) -> Expr {
        self.tag("interpolation");
        let n = self.rng.range(1, 3);
        let mut parts = Vec::new();
        for i in 0..n {
            let label = if i == 0 { "at " } else { ", " };
            parts.push(Part::Text(label.into()));
            parts.push(Part::Hole(self.hole(depth)));
        }
        Expr::new(Ty::Str, Kind::Interp(parts))
    }

    /// A hole: a variable, or a small expression with no quote or brace.
    fn hole(&mut self, _depth: u32) -> Expr {
        let vs: Vec<Var> = self.visible().cloned().collect();
        if vs.is_empty() {
            return Expr::int(self.rng.range(0, 9));
        }
        let v = if self.rng.chance(60) {
            vs[vs.len() - 1 - self.rng.below(vs.len().min(3))].clone()
        } else {
            self.rng.pick(&vs).clone()
        };
        let x = Expr::var(v.ty.clone(), &v.name);
        match &v.ty {
            Ty::List(_) | Ty::Str if self.rng.chance(30) => Expr::method(Ty::Int, x, "len", vec![]),
            Ty::Int if self.rng.chance(30) => Expr::bin(Ty::Int, "*", x, Expr::int(2)),
            _ => x,
        }
    }

    /// `|params| body` whose body may read captured values.
    fn lambda(&mut self, params: &[Ty], ret: &Ty) -> Expr {
        let saved_floor = self.lambda_floor;
        let saved_loops = self.loops;
        let mark = self.vars.len();
        self.lambda_floor = self.vars.len();
        self.loops = 0;
        self.repeated += 1;
        self.in_lambda += 1;
        let captures_before = self.visible().count();
        let ps: Vec<(String, Ty)> = params.iter().map(|t| (self.name("l"), t.clone())).collect();
        for (n, t) in &ps {
            self.bind(n, t.clone(), false);
        }
        let deep = self.repeated > 2;
        let n = if deep || self.rng.chance(70) { 0 } else { 1 };
        let stmts = self.block_stmts(n);
        let tail = if *ret == Ty::Unit {
            None
        } else {
            Some(Box::new(self.expr(
                ret,
                if deep { 1 } else { 2 },
                Ctx::Free,
            )))
        };
        if captures_before > 0 {
            self.tag("closure_capture");
        }
        self.vars.truncate(mark);
        self.lambda_floor = saved_floor;
        self.loops = saved_loops;
        self.repeated -= 1;
        self.in_lambda -= 1;
        let ft = Ty::func(params.to_vec(), ret.clone());
        Expr::new(ft, Kind::Lambda(ps, Box::new(Block { stmts, tail })))
    }

    /// A match on `scrut` whose arms give `t` (Unit: print statements).
    fn match_expr(&mut self, scrut: Expr, t: &Ty, ctx: Ctx, depth: u32) -> Expr {
        let st = scrut.ty.clone();
        // Pattern fields of the structural parameter (or of a part of it)
        // are smaller values: recursing on them terminates.
        let shrinks = matches!(&scrut.kind, Kind::Var(n) if n == "t" || self.smaller.contains(n));
        let whole = match &scrut.kind {
            Kind::Var(n) if shrinks => Some(n.clone()),
            _ => None,
        };
        // Only one arm runs: each starts from what was recursed on before
        // the match, and after it everything any arm recursed on counts.
        let recursed_before = self.recursed.clone();
        let mut recursed_after = recursed_before.clone();
        let mut arms: Vec<(String, Vec<Var>)> = Vec::new();
        match &st {
            Ty::User(i) => {
                let i = *i;
                let vs = self.variants(i);
                // Specific arms first: nested patterns and literals.
                for (name, fields) in &vs {
                    if fields.is_empty() || !self.rng.chance(40) {
                        continue;
                    }
                    let mut binds = Vec::new();
                    let mut parts = Vec::new();
                    let mut specific = false;
                    for ft in fields {
                        if *ft == st && !specific {
                            specific = true;
                            self.tag("nested_pattern");
                            let (inner, fs) = vs[self.rng.below(vs.len())].clone();
                            if fs.is_empty() {
                                parts.push(inner);
                            } else {
                                let sub: Vec<String> =
                                    fs.iter().map(|t| self.bind_pat(t, &mut binds)).collect();
                                parts.push(format!("{inner}({})", sub.join(", ")));
                            }
                        } else if *ft == Ty::Int && !specific && self.rng.chance(50) {
                            specific = true;
                            self.tag("match_literal");
                            parts.push(self.rng.range(0, 2).to_string());
                        } else {
                            parts.push(self.bind_pat(ft, &mut binds));
                        }
                    }
                    if specific {
                        arms.push((format!("{name}({})", parts.join(", ")), binds));
                    }
                }
                // Then one arm per variant, or a wildcard for the rest.
                let wild_from = if self.rng.chance(30) {
                    self.rng.below(vs.len())
                } else {
                    vs.len()
                };
                for (k, (name, fields)) in vs.iter().enumerate() {
                    if k >= wild_from {
                        let pat = if self.rng.chance(50) {
                            "_".to_string()
                        } else {
                            let n = self.name("o");
                            arms.push((
                                n.clone(),
                                vec![Var {
                                    name: n,
                                    ty: st.clone(),
                                    mutable: false,
                                    counter: false,
                                }],
                            ));
                            break;
                        };
                        arms.push((pat, vec![]));
                        break;
                    }
                    let mut binds = Vec::new();
                    if fields.is_empty() {
                        arms.push((name.clone(), binds));
                    } else {
                        let sub: Vec<String> = fields
                            .iter()
                            .map(|t| self.bind_pat(t, &mut binds))
                            .collect();
                        arms.push((format!("{name}({})", sub.join(", ")), binds));
                    }
                }
            }
            Ty::Opt(e) => {
                self.tag("match_option");
                if matches!(**e, Ty::Int | Ty::Str) && self.rng.chance(40) {
                    self.tag("match_literal");
                    let lit = if **e == Ty::Int {
                        "0".to_string()
                    } else {
                        quote("a")
                    };
                    arms.push((format!("Some({lit})"), vec![]));
                }
                let mut binds = Vec::new();
                let p = self.bind_pat(e, &mut binds);
                let some = (format!("Some({p})"), binds);
                let none = ("None".to_string(), vec![]);
                if self.rng.chance(50) {
                    arms.push(some);
                    arms.push(none);
                } else {
                    arms.push(none);
                    arms.push(some);
                }
            }
            Ty::Tuple(ts) => {
                if ts[0] == Ty::Int && self.rng.chance(50) {
                    self.tag("match_literal");
                    let mut binds = Vec::new();
                    let p = self.bind_pat(&ts[1], &mut binds);
                    arms.push((format!("(0, {p})"), binds));
                }
                let mut binds = Vec::new();
                let ps: Vec<String> = ts.iter().map(|t| self.bind_pat(t, &mut binds)).collect();
                arms.push((format!("({})", ps.join(", ")), binds));
            }
            Ty::Int => {
                self.tag("match_literal");
                for k in 0..self.rng.range(1, 3) {
                    arms.push((k.to_string(), vec![]));
                }
                arms.push(("_".into(), vec![]));
            }
            Ty::Str => {
                self.tag("match_literal");
                arms.push((quote(self.rng.word(WORDS)), vec![]));
                let n = self.name("z");
                arms.push((
                    n.clone(),
                    vec![Var {
                        name: n,
                        ty: Ty::Str,
                        mutable: false,
                        counter: false,
                    }],
                ));
            }
            Ty::Bool => {
                arms.push(("true".into(), vec![]));
                arms.push(("false".into(), vec![]));
            }
            _ => {
                let n = self.name("z");
                arms.push((
                    n.clone(),
                    vec![Var {
                        name: n,
                        ty: st.clone(),
                        mutable: false,
                        counter: false,
                    }],
                ));
            }
        }
        let mut out = Vec::new();
        for (pat, binds) in arms {
            let mark = self.vars.len();
            let smaller_mark = self.smaller.len();
            self.recursed = recursed_before.clone();
            for b in &binds {
                if let Some((_, sty)) = &self.structural {
                    // Field patterns are named `e..`; a name for the whole
                    // value (`o..`) is not smaller.
                    if shrinks && b.ty == *sty && b.name.starts_with('e') {
                        self.smaller.push(b.name.clone());
                        if let Some(w) = &whole {
                            self.parent.insert(b.name.clone(), w.clone());
                        }
                    }
                }
                self.vars.push(b.clone());
            }
            let body = if *t == Ty::Unit {
                let e = if self.rng.chance(60) && !binds.is_empty() {
                    let b = self.rng.pick(&binds).clone();
                    Expr::var(b.ty.clone(), &b.name)
                } else {
                    self.interp(1)
                };
                Expr::call(Ty::Unit, "print", vec![e])
            } else if depth > 1 && self.rng.chance(25) {
                let n = self.rng.range(1, 2) as usize;
                let b = self.block(n, Some(t), ctx);
                Expr::new(t.clone(), Kind::Block(Box::new(b)))
            } else {
                self.expr(t, depth.max(1), ctx)
            };
            // A pattern name that shadows nothing: smaller values stay
            // valid only inside their arm.
            self.smaller.truncate(smaller_mark);
            self.vars.truncate(mark);
            for r in std::mem::take(&mut self.recursed) {
                if !recursed_after.contains(&r) {
                    recursed_after.push(r);
                }
            }
            out.push(Arm { pat, body });
        }
        self.recursed = recursed_after;
        Expr::new(t.clone(), Kind::Match(Box::new(scrut), out))
    }

    /// Whether one of two smaller names is (a part of) the other.
    fn related(&self, a: &str, b: &str) -> bool {
        self.is_within(a, b) || self.is_within(b, a)
    }

    /// Whether `x` is `y` or a part of it.
    fn is_within<'a>(&'a self, mut x: &'a str, y: &str) -> bool {
        loop {
            if x == y {
                return true;
            }
            match self.parent.get(x) {
                Some(p) => x = p,
                None => return false,
            }
        }
    }

    /// A pattern for a field of type `t`: a new name (bound) or `_`.
    fn bind_pat(&mut self, t: &Ty, binds: &mut Vec<Var>) -> String {
        if self.rng.chance(20) {
            return "_".into();
        }
        let n = self.name("e");
        binds.push(Var {
            name: n.clone(),
            ty: t.clone(),
            mutable: false,
            counter: false,
        });
        n
    }

    /// Forms specific to the wanted type.
    fn typed_expr(&mut self, t: &Ty, depth: u32, ctx: Ctx) -> Option<Expr> {
        let d = depth - 1;
        // Structural recursion on a smaller value.
        if let Some((name, _)) = self.structural.clone() {
            let ret = self.current.as_ref().map(|s| s.ret.clone());
            // Not in a loop or lambda either: those may run it many times.
            let free: Vec<String> = self
                .smaller
                .iter()
                .filter(|s| !self.recursed.iter().any(|r| self.related(s, r)))
                .cloned()
                .collect();
            if ret.as_ref() == Some(t)
                && self.repeated == 0
                && !free.is_empty()
                && self.rng.chance(50)
            {
                let s = self.rng.pick(&free).clone();
                self.recursed.push(s.clone());
                let sty = self.structural.as_ref().unwrap().1.clone();
                return Some(Expr::call(t.clone(), &name, vec![Expr::var(sty, &s)]));
            }
        }
        // Fuel recursion.
        if let Some(sig) = self.current.clone() {
            if sig.fuel
                && sig.ret == *t
                && self.repeated == 0
                && self.rec_calls < 2
                && self.rng.chance(30)
            {
                self.rec_calls += 1;
                let args = self.call_args(&sig.params[1..]);
                return Some(Expr::new(t.clone(), Kind::RecCall(sig.name.clone(), args)));
            }
        }
        Some(match t {
            Ty::Int => match self.rng.below(12) {
                0 => Expr::int(self.rng.range(-5, 100)),
                1 | 2 => {
                    let op = self.rng.word(&["+", "-", "*"]);
                    let a = self.expr(&Ty::Int, d, Ctx::Free);
                    let b = self.expr(&Ty::Int, d, Ctx::Free);
                    Expr::bin(Ty::Int, op, a, b)
                }
                3 => {
                    let a = self.expr(&Ty::Int, d, Ctx::Free);
                    let b = self.small_int(d);
                    if self.rng.chance(5) {
                        self.tag("trap");
                        Expr::bin(Ty::Int, "/", a, b)
                    } else {
                        let b = Expr::bin(Ty::Int, "+", b, Expr::int(1));
                        Expr::bin(Ty::Int, self.rng.word(&["/", "%"]), a, b)
                    }
                }
                4 => {
                    let et = self.pick_ty(false);
                    let lt = Ty::list(et);
                    let xs = self.expr(&lt, d, Ctx::Free);
                    Expr::method(Ty::Int, xs, "len", vec![])
                }
                5 => {
                    let s = self.expr(&Ty::Str, d, Ctx::Free);
                    Expr::method(Ty::Int, s, "len", vec![])
                }
                6 => {
                    let xs = self.expr(&Ty::list(Ty::Int), d, Ctx::Free);
                    if self.rng.chance(60) {
                        Expr::method(Ty::Int, xs, "sum", vec![])
                    } else {
                        let m = self.rng.word(&["min", "max"]);
                        let guard = Expr::method(Ty::Bool, xs.clone(), "is_empty", vec![]);
                        let pick = Expr::method(Ty::Int, xs, m, vec![]);
                        Expr::new(
                            Ty::Int,
                            Kind::If(
                                Box::new(guard),
                                Box::new(tail_block(Expr::int(0))),
                                Box::new(tail_block(pick)),
                            ),
                        )
                    }
                }
                7 => {
                    let mt = self.pick_map_ty();
                    let m = self.expr(&mt, d, Ctx::Free);
                    Expr::method(Ty::Int, m, "len", vec![])
                }
                8 => {
                    let a = self.expr(&Ty::Int, d, Ctx::Free);
                    if self.rng.chance(50) {
                        Expr::method(Ty::Int, a, "abs", vec![])
                    } else {
                        Expr::new(Ty::Int, Kind::Unary("-", Box::new(a)))
                    }
                }
                9 => {
                    let s = self.expr(&Ty::Str, d, Ctx::Free);
                    if self.rng.chance(90) {
                        let guard = Expr::method(Ty::Bool, s.clone(), "is_empty", vec![]);
                        let b = Expr::method(Ty::Int, s, "byte", vec![Expr::int(0)]);
                        Expr::new(
                            Ty::Int,
                            Kind::If(
                                Box::new(guard),
                                Box::new(tail_block(Expr::int(-1))),
                                Box::new(tail_block(b)),
                            ),
                        )
                    } else {
                        self.tag("trap");
                        Expr::method(Ty::Int, s, "to_int", vec![])
                    }
                }
                10 => {
                    // A hole holds no quote or brace: a leaf.
                    let a = self.leaf(&Ty::Int, Ctx::Free);
                    let s = Expr::new(Ty::Str, Kind::Interp(vec![Part::Hole(a)]));
                    if self.rng.chance(50) {
                        Expr::method(Ty::Int, s, "to_int", vec![])
                    } else {
                        let f = Expr::method(Ty::F64, s, "to_f64", vec![]);
                        Expr::method(Ty::Int, f, "to_int", vec![])
                    }
                }
                _ => {
                    let f = self.expr(&Ty::F64, d, Ctx::Free);
                    let f = Expr::method(Ty::F64, f, "abs", vec![]);
                    let f = Expr::method(Ty::F64, f, "sqrt", vec![]);
                    let f = Expr::method(Ty::F64, f, "floor", vec![]);
                    Expr::method(Ty::Int, f, "to_int", vec![])
                }
            },
            Ty::Bool => match self.rng.below(10) {
                0 => {
                    let op = self.rng.word(&["<", "<=", ">", ">=", "==", "!="]);
                    let a = self.expr(&Ty::Int, d, Ctx::Free);
                    let b = self.expr(&Ty::Int, d, Ctx::Free);
                    Expr::bin(Ty::Bool, op, a, b)
                }
                1 => {
                    let op = self.rng.word(&["<", "==", "!="]);
                    let a = self.expr(&Ty::Str, d, Ctx::Free);
                    let b = self.expr(&Ty::Str, d, Ctx::Free);
                    Expr::bin(Ty::Bool, op, a, b)
                }
                2 => {
                    let et = if self.rng.chance(50) {
                        Ty::Int
                    } else {
                        Ty::Str
                    };
                    let xs = self.expr(&Ty::list(et.clone()), d, Ctx::Free);
                    let x = self.expr(&et, d, Ctx::Free);
                    Expr::method(Ty::Bool, xs, "contains", vec![x])
                }
                3 => {
                    let s = self.expr(&Ty::Str, d, Ctx::Free);
                    let m = self.rng.word(&["contains", "starts_with", "ends_with"]);
                    let a = self.expr(&Ty::Str, d, Ctx::Free);
                    Expr::method(Ty::Bool, s, m, vec![a])
                }
                4 => {
                    if self.rng.chance(50) {
                        let s = self.expr(&Ty::Str, d, Ctx::Free);
                        Expr::method(Ty::Bool, s, "is_empty", vec![])
                    } else {
                        let lt = Ty::list(self.pick_ty(false));
                        let xs = self.expr(&lt, d, Ctx::Free);
                        Expr::method(Ty::Bool, xs, "is_empty", vec![])
                    }
                }
                5 => {
                    let mt = self.pick_map_ty();
                    let Ty::Map(k, _) = &mt else { unreachable!() };
                    let k = (**k).clone();
                    let m = self.expr(&mt, d, Ctx::Free);
                    let key = self.expr(&k, d, Ctx::Free);
                    Expr::method(Ty::Bool, m, "has", vec![key])
                }
                6 => {
                    let et = if self.rng.chance(50) {
                        Ty::Int
                    } else {
                        Ty::Str
                    };
                    let xs = self.expr(&Ty::list(et.clone()), d, Ctx::Free);
                    let p = self.lambda(&[et], &Ty::Bool);
                    let m = self.rng.word(&["any", "all"]);
                    Expr::method(Ty::Bool, xs, m, vec![p])
                }
                8 => {
                    let x = self.pick_ty(false);
                    let o = self.expr(&Ty::opt(x), d, Ctx::Free);
                    let m = self.rng.word(&["is_some", "is_none"]);
                    Expr::method(Ty::Bool, o, m, vec![])
                }
                7 => {
                    let a = self.expr(&Ty::Bool, d, Ctx::Free);
                    if self.rng.chance(30) {
                        Expr::new(Ty::Bool, Kind::Unary("!", Box::new(a)))
                    } else {
                        let b = self.expr(&Ty::Bool, d, Ctx::Free);
                        Expr::bin(Ty::Bool, self.rng.word(&["&&", "||"]), a, b)
                    }
                }
                _ => {
                    let a = self.expr(&Ty::F64, d, Ctx::Free);
                    let b = self.expr(&Ty::F64, d, Ctx::Free);
                    Expr::bin(Ty::Bool, self.rng.word(&["<", ">="]), a, b)
                }
            },
            Ty::Str => match self.rng.below(13) {
                0 | 1 => self.interp(d),
                2 => {
                    let a = self.expr(&Ty::Str, d, Ctx::Free);
                    let b = self.expr(&Ty::Str, d, Ctx::Free);
                    Expr::bin(Ty::Str, "+", a, b)
                }
                3 => {
                    let s = self.expr(&Ty::Str, d, Ctx::Free);
                    let m = self.rng.word(&["upper", "lower"]);
                    Expr::method(Ty::Str, s, m, vec![])
                }
                4 => {
                    self.tag("view");
                    let s = self.expr(&Ty::Str, d, Ctx::Free);
                    match self.rng.below(4) {
                        0 => Expr::method(Ty::Str, s, "trim", vec![]),
                        1 => {
                            let n = self.small_int(d);
                            Expr::method(Ty::Str, s, "take", vec![n])
                        }
                        2 => {
                            let n = self.small_int(d);
                            Expr::method(Ty::Str, s, "drop", vec![n])
                        }
                        _ => {
                            // slice(0, len / 2): in range for ASCII text.
                            let len = Expr::method(Ty::Int, s.clone(), "len", vec![]);
                            let half = Expr::bin(Ty::Int, "/", len, Expr::int(2));
                            Expr::method(Ty::Str, s, "slice", vec![Expr::int(0), half])
                        }
                    }
                }
                5 => {
                    let s = self.expr(&Ty::Str, d, Ctx::Free);
                    let a = Expr::lit(Ty::Str, quote(self.rng.word(&["a", ",", " ", "l"])));
                    let b = clamp(self.expr(&Ty::Str, d.min(1), Ctx::Free));
                    Expr::method(Ty::Str, s, "replace", vec![a, b])
                }
                6 => {
                    let s = self.expr(&Ty::Str, d, Ctx::Free);
                    let n = Expr::int(self.rng.range(0, 3));
                    Expr::method(Ty::Str, s, "repeat", vec![n])
                }
                7 | 8 => {
                    let xs = self.expr(&Ty::list(Ty::Str), d, Ctx::Free);
                    let sep = Expr::lit(Ty::Str, quote(self.rng.word(&[",", "", " - "])));
                    Expr::method(Ty::Str, xs, "join", vec![sep])
                }
                9 => {
                    // A piece of a split: a view of its source.
                    self.tag("view");
                    let s = self.expr(&Ty::Str, d, Ctx::Free);
                    let parts = Expr::method(
                        Ty::list(Ty::Str),
                        s,
                        "split",
                        vec![Expr::lit(Ty::Str, quote(","))],
                    );
                    let dflt = self.simple(&Ty::Str, Ctx::Free);
                    let got = Expr::method(Ty::opt(Ty::Str), parts, "get", vec![Expr::int(0)]);
                    self.unwrap_opt(got, &Ty::Str, dflt)
                }
                10 => {
                    let f = self.leaf(&Ty::F64, Ctx::Free);
                    Expr::new(
                        Ty::Str,
                        Kind::Interp(vec![Part::Text("f".into()), Part::Hole(f)]),
                    )
                }
                11 => {
                    if self.rng.chance(50) {
                        Expr::call(Ty::Str, "read_stdin", vec![])
                    } else {
                        let a = Expr::call(Ty::list(Ty::Str), "args", vec![]);
                        Expr::method(Ty::Str, a, "join", vec![Expr::lit(Ty::Str, quote(","))])
                    }
                }
                _ => Expr::lit(Ty::Str, quote(self.rng.word(WORDS))),
            },
            Ty::F64 => match self.rng.below(5) {
                0 => self.simple(t, ctx),
                1 => {
                    let n = self.expr(&Ty::Int, d, Ctx::Free);
                    let n = Expr::bin(Ty::Int, "%", n, Expr::int(1000));
                    Expr::method(Ty::F64, n, "to_f64", vec![])
                }
                2 => {
                    let a = self.expr(&Ty::F64, d, Ctx::Free);
                    let b = self.expr(&Ty::F64, d, Ctx::Free);
                    Expr::bin(Ty::F64, self.rng.word(&["+", "-", "*", "/"]), a, b)
                }
                3 => {
                    let a = self.expr(&Ty::F64, d, Ctx::Free);
                    let m = self.rng.word(&["abs", "floor"]);
                    Expr::method(Ty::F64, a, m, vec![])
                }
                _ => {
                    let s = Expr::lit(Ty::Str, quote(self.rng.word(&["2.5", "1e3", "-0.5"])));
                    Expr::method(Ty::F64, s, "to_f64", vec![])
                }
            },
            Ty::List(e) => return self.list_expr(t, e, d, ctx),
            Ty::Map(k, v) => {
                let (k, v) = ((**k).clone(), (**v).clone());
                match self.rng.below(4) {
                    0 if k == Ty::Str && v == Ty::Int => {
                        let xs = self.expr(&Ty::list(Ty::Str), d, Ctx::Free);
                        Expr::method(t.clone(), xs, "counts", vec![])
                    }
                    1 => {
                        self.tag("map_str_keys");
                        let m = self.expr(t, d, Ctx::Free);
                        let key = self.key_expr();
                        let val = self.expr(&v, d, Ctx::Decided);
                        Expr::method(t.clone(), m, "put", vec![key, val])
                    }
                    2 => {
                        // A fold building a map.
                        self.tag("map_str_keys");
                        let xs = self.expr(&Ty::list(Ty::Int), d, Ctx::Free);
                        let acc = self.name("l");
                        let x = self.name("l");
                        let mark = self.vars.len();
                        let saved_loops = std::mem::take(&mut self.loops);
                        let saved_floor = self.lambda_floor;
                        self.lambda_floor = self.vars.len();
                        self.repeated += 1;
                        self.in_lambda += 1;
                        self.bind(&acc, t.clone(), false);
                        self.bind(&x, Ty::Int, false);
                        let key = if k == Ty::Str {
                            Expr::new(
                                Ty::Str,
                                Kind::Interp(vec![
                                    Part::Text("k".into()),
                                    Part::Hole(Expr::var(Ty::Int, &x)),
                                ]),
                            )
                        } else {
                            self.expr(&k, 1, Ctx::Free)
                        };
                        let val = self.expr(&v, 1, Ctx::Decided);
                        self.vars.truncate(mark);
                        self.loops = saved_loops;
                        self.lambda_floor = saved_floor;
                        self.repeated -= 1;
                        self.in_lambda -= 1;
                        let body = Expr::method(
                            t.clone(),
                            Expr::var(t.clone(), &acc),
                            "put",
                            vec![key, val],
                        );
                        let f = Expr::new(
                            Ty::func(vec![t.clone(), Ty::Int], t.clone()),
                            Kind::Lambda(
                                vec![(acc, t.clone()), (x, Ty::Int)],
                                Box::new(tail_block(body)),
                            ),
                        );
                        let init = Expr::lit(t.clone(), "empty_map()");
                        Expr::method(t.clone(), xs, "fold", vec![init, f])
                    }
                    _ => self.simple(t, ctx),
                }
            }
            Ty::Opt(e) => {
                let e = (**e).clone();
                match self.rng.below(9) {
                    0 => {
                        let x = self.expr(&e, d, ctx);
                        Expr::new(t.clone(), Kind::Ctor("Some".into(), vec![x]))
                    }
                    1 => {
                        let xs = self.expr(&Ty::list(e.clone()), d, Ctx::Free);
                        let i = self.small_int(d);
                        Expr::method(t.clone(), xs, "get", vec![i])
                    }
                    2 => {
                        let xs = self.expr(&Ty::list(e.clone()), d, Ctx::Free);
                        let p = self.lambda(std::slice::from_ref(&e), &Ty::Bool);
                        Expr::method(t.clone(), xs, "find", vec![p])
                    }
                    3 => {
                        let mt = Ty::map(Ty::Str, e.clone());
                        let m = self.expr(&mt, d, Ctx::Free);
                        let k = self.key_expr();
                        let m_name = self.rng.word(&["get", "remove"]);
                        Expr::method(t.clone(), m, m_name, vec![k])
                    }
                    4 if e == Ty::Int => {
                        let s = self.expr(&Ty::Str, d, Ctx::Free);
                        let a = self.expr(&Ty::Str, d.min(1), Ctx::Free);
                        Expr::method(t.clone(), s, "find", vec![a])
                    }
                    5 | 6 => {
                        // An option transformed: map, or and_then into another option.
                        let x = if self.rng.chance(50) {
                            Ty::Int
                        } else {
                            Ty::Str
                        };
                        let o = self.expr(&Ty::opt(x.clone()), d, Ctx::Free);
                        if self.rng.chance(50) {
                            let f = self.lambda(std::slice::from_ref(&x), &e);
                            Expr::method(t.clone(), o, "map", vec![f])
                        } else {
                            let f = self.lambda(std::slice::from_ref(&x), t);
                            Expr::method(t.clone(), o, "and_then", vec![f])
                        }
                    }
                    7 if e == Ty::Int || e == Ty::F64 => {
                        // A parse that fails without a trap; half the time of a number's text.
                        let s = if self.rng.chance(50) {
                            let n = self.leaf(&e, Ctx::Free);
                            Expr::new(Ty::Str, Kind::Interp(vec![Part::Hole(n)]))
                        } else {
                            self.expr(&Ty::Str, d, Ctx::Free)
                        };
                        let m = if e == Ty::Int {
                            "parse_int"
                        } else {
                            "parse_f64"
                        };
                        Expr::method(t.clone(), s, m, vec![])
                    }
                    _ => self.simple(t, ctx),
                }
            }
            Ty::Tuple(ts) => {
                let xs = ts.iter().map(|t| self.expr(t, d, ctx)).collect();
                Expr::new(t.clone(), Kind::Tuple(xs))
            }
            Ty::User(i) => {
                let i = *i;
                if self.is_record(i) {
                    let fs = self
                        .fields(i)
                        .into_iter()
                        .map(|(f, ft)| {
                            let v = self.expr(&ft, d, Ctx::Decided);
                            (f, v)
                        })
                        .collect();
                    Expr::new(t.clone(), Kind::Record(self.types[i].name.clone(), fs))
                } else {
                    let vs = self.variants(i);
                    let (name, fields) = self.rng.pick(&vs).clone();
                    let args = fields
                        .iter()
                        .map(|ft| self.expr(ft, d, Ctx::Decided))
                        .collect();
                    Expr::new(t.clone(), Kind::Ctor(name, args))
                }
            }
            Ty::Fn(ps, r) => {
                let own: Vec<Sig> = self
                    .fns
                    .iter()
                    .filter(|f| !f.fuel && f.params == *ps && f.ret == **r)
                    .cloned()
                    .collect();
                if !own.is_empty() && self.rng.chance(30) {
                    self.tag("fn_value");
                    Expr::lit(t.clone(), self.rng.pick(&own).name.clone())
                } else {
                    let ps = ps.clone();
                    self.lambda(&ps, r)
                }
            }
            Ty::Unit => return None,
        })
    }

    fn pick_map_ty(&mut self) -> Ty {
        if self.rng.chance(75) {
            Ty::map(Ty::Str, Ty::Int)
        } else {
            Ty::map(Ty::Str, Ty::list(Ty::Int))
        }
    }

    fn list_expr(&mut self, t: &Ty, e: &Ty, d: u32, ctx: Ctx) -> Option<Expr> {
        let e = e.clone();
        Some(match self.rng.below(16) {
            0 | 1 => {
                let n = self.rng.range(1, 4);
                let xs = (0..n).map(|_| self.expr(&e, d, ctx)).collect();
                Expr::new(t.clone(), Kind::List(xs))
            }
            2 => {
                let xs = self.expr(t, d, Ctx::Free);
                let x = self.expr(&e, d, Ctx::Decided);
                Expr::method(t.clone(), xs, "push", vec![x])
            }
            3 => {
                let xs = self.expr(t, d, Ctx::Free);
                let ys = self.expr(t, d, Ctx::Decided);
                Expr::method(t.clone(), xs, "concat", vec![ys])
            }
            4 => {
                self.tag("view");
                let xs = self.expr(t, d, Ctx::Free);
                let n = self.small_int(d);
                let m = self.rng.word(&["take", "drop"]);
                Expr::method(t.clone(), xs, m, vec![n])
            }
            5 => {
                let xs = self.expr(t, d, Ctx::Free);
                if e.is_scalar() {
                    let m = self.rng.word(&["reverse", "sort", "unique"]);
                    Expr::method(t.clone(), xs, m, vec![])
                } else {
                    Expr::method(t.clone(), xs, "reverse", vec![])
                }
            }
            6 => {
                let xs = self.expr(t, d, Ctx::Free);
                let p = self.lambda(std::slice::from_ref(&e), &Ty::Bool);
                Expr::method(t.clone(), xs, "filter", vec![p])
            }
            7 | 8 => {
                let src = if self.rng.chance(50) {
                    Ty::Int
                } else {
                    Ty::Str
                };
                let xs = self.expr(&Ty::list(src.clone()), d, Ctx::Free);
                let f = self.lambda(&[src], &e);
                Expr::method(t.clone(), xs, "map", vec![f])
            }
            9 => {
                let src = if self.rng.chance(50) {
                    Ty::Int
                } else {
                    Ty::Str
                };
                let xs = self.expr(&Ty::list(src.clone()), d, Ctx::Free);
                let xs = Expr::method(Ty::list(src.clone()), xs, "take", vec![Expr::int(4)]);
                let f = self.lambda(&[src], t);
                Expr::method(t.clone(), xs, "flat_map", vec![f])
            }
            10 => {
                let xs = self.expr(t, d, Ctx::Free);
                let kt = if self.rng.chance(50) {
                    Ty::Int
                } else {
                    Ty::Str
                };
                let f = self.lambda(std::slice::from_ref(&e), &kt);
                Expr::method(t.clone(), xs, "sort_by", vec![f])
            }
            11 if e == Ty::Str => {
                self.tag("view");
                let s = self.expr(&Ty::Str, d, Ctx::Free);
                match self.rng.below(4) {
                    0 => Expr::method(t.clone(), s, "split", vec![Expr::lit(Ty::Str, quote(","))]),
                    1 => Expr::method(t.clone(), s, "chars", vec![]),
                    2 => Expr::method(t.clone(), s, "words", vec![]),
                    _ => Expr::method(t.clone(), s, "lines", vec![]),
                }
            }
            11 | 12 if e == Ty::Int => {
                let hi = self.small_int(d);
                let hi = Expr::bin(Ty::Int, "+", hi, Expr::int(self.rng.range(0, 3)));
                Expr::new(t.clone(), Kind::Range(Box::new(Expr::int(0)), Box::new(hi)))
            }
            12 | 13 => {
                let mt = Ty::map(Ty::Str, e.clone());
                if e == Ty::Int || e == Ty::list(Ty::Int) {
                    let m = self.expr(&mt, d, Ctx::Free);
                    Expr::method(t.clone(), m, "values", vec![])
                } else if e == Ty::Str {
                    let m = self.pick_map_ty();
                    let m = self.expr(&m, d, Ctx::Free);
                    Expr::method(t.clone(), m, "keys", vec![])
                } else {
                    return None;
                }
            }
            14 => {
                // Through enumerate or zip and back.
                let xs = self.expr(t, d, Ctx::Free);
                let pair = self.name("l");
                if self.rng.chance(50) {
                    let en = Ty::list(Ty::Tuple(vec![Ty::Int, e.clone()]));
                    let en_e = Expr::method(en, xs, "enumerate", vec![]);
                    let pt = Ty::Tuple(vec![Ty::Int, e.clone()]);
                    let body = Expr::new(
                        e.clone(),
                        Kind::Field(Box::new(Expr::var(pt.clone(), &pair)), "1".into()),
                    );
                    let f = Expr::new(
                        Ty::func(vec![pt.clone()], e.clone()),
                        Kind::Lambda(vec![(pair, pt)], Box::new(tail_block(body))),
                    );
                    Expr::method(t.clone(), en_e, "map", vec![f])
                } else {
                    let ys = self.expr(&Ty::list(Ty::Str), d, Ctx::Free);
                    let pt = Ty::Tuple(vec![e.clone(), Ty::Str]);
                    let z = Expr::method(Ty::list(pt.clone()), xs, "zip", vec![ys]);
                    let body = Expr::new(
                        e.clone(),
                        Kind::Field(Box::new(Expr::var(pt.clone(), &pair)), "0".into()),
                    );
                    let f = Expr::new(
                        Ty::func(vec![pt.clone()], e.clone()),
                        Kind::Lambda(vec![(pair, pt)], Box::new(tail_block(body))),
                    );
                    Expr::method(t.clone(), z, "map", vec![f])
                }
            }
            _ => {
                if e == Ty::Str && self.rng.chance(50) {
                    // counts' keys.
                    let xs = self.expr(t, d, Ctx::Free);
                    let c = Expr::method(Ty::map(Ty::Str, Ty::Int), xs, "counts", vec![]);
                    Expr::method(t.clone(), c, "keys", vec![])
                } else if e == Ty::Int {
                    let xs = self.expr(t, d, Ctx::Free);
                    let c = Expr::method(Ty::map(Ty::Int, Ty::Int), xs, "counts", vec![]);
                    Expr::method(t.clone(), c, "values", vec![])
                } else {
                    self.simple(t, ctx)
                }
            }
        })
    }
}

/// Lengths past which a growing value is cut back, and to what.
const CLAMP_AT: i64 = 40;
const CLAMP_TO: i64 = 8;

/// `e.take(CLAMP_AT)` when `e` is a string or list (a literal needs none).
fn clamp(e: Expr) -> Expr {
    match (&e.ty, &e.kind) {
        (_, Kind::Lit(_)) => e,
        (Ty::Str | Ty::List(_), _) => {
            let t = e.ty.clone();
            Expr::method(t, e, "take", vec![Expr::int(CLAMP_AT)])
        }
        _ => e,
    }
}

/// A lambda whose result is [`clamp`]ed: a fold's accumulator that grows
/// from itself (`|acc, x| acc + acc`) would grow geometrically.
fn clamp_result(f: Expr) -> Expr {
    match f.kind {
        Kind::Lambda(ps, mut body) => {
            body.tail = body.tail.map(|t| Box::new(clamp(*t)));
            Expr::new(f.ty, Kind::Lambda(ps, body))
        }
        _ => f,
    }
}

fn tail_block(e: Expr) -> Block {
    Block {
        stmts: Vec::new(),
        tail: Some(Box::new(e)),
    }
}

fn print(e: Expr) -> Stmt {
    Stmt::Expr(Expr::call(Ty::Unit, "print", vec![e]))
}
