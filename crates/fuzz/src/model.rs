//! The generator's own program model: small enough to edit (the minimizer
//! removes statements, arms, functions and expressions from it) and
//! rendered to Sspur source text.

use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ty {
    Int,
    Bool,
    Str,
    F64,
    Unit,
    List(Box<Ty>),
    Map(Box<Ty>, Box<Ty>),
    Opt(Box<Ty>),
    Tuple(Vec<Ty>),
    /// A user type, by index into [`Program::types`].
    User(usize),
    Fn(Vec<Ty>, Box<Ty>),
}

impl Ty {
    pub fn list(t: Ty) -> Ty {
        Ty::List(Box::new(t))
    }
    pub fn opt(t: Ty) -> Ty {
        Ty::Opt(Box::new(t))
    }
    pub fn map(k: Ty, v: Ty) -> Ty {
        Ty::Map(Box::new(k), Box::new(v))
    }
    pub fn func(params: Vec<Ty>, ret: Ty) -> Ty {
        Ty::Fn(params, Box::new(ret))
    }
    /// Int, F64, Bool and Str: what `==`, `contains`, `unique` and `sort`
    /// accept.
    pub fn is_scalar(&self) -> bool {
        matches!(self, Ty::Int | Ty::Bool | Ty::Str | Ty::F64)
    }
    pub fn elem(&self) -> Option<&Ty> {
        match self {
            Ty::List(t) => Some(t),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TypeKind {
    Record(Vec<(String, Ty)>),
    /// Variants with their field types.
    Sum(Vec<(String, Vec<Ty>)>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeDef {
    pub name: String,
    pub kind: TypeKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FnDef {
    pub name: String,
    pub params: Vec<(String, Ty)>,
    pub ret: Ty,
    pub body: Block,
    /// A recursive function whose first parameter `fuel: Int` bounds its
    /// depth: the body is `if fuel <= 0 { base } else { body }` and every
    /// self call passes `fuel - 1` (fixed by rendering, so no edit can make
    /// it unbounded).
    pub fuel: Option<Box<Expr>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    pub types: Vec<TypeDef>,
    /// `main` is the last one.
    pub fns: Vec<FnDef>,
}

#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub tail: Option<Box<Expr>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stmt {
    Let {
        name: String,
        ty: Ty,
        mutable: bool,
        init: Expr,
    },
    /// `let (a, b) = init`.
    LetTuple {
        names: Vec<String>,
        init: Expr,
    },
    Assign {
        name: String,
        value: Expr,
    },
    Expr(Expr),
    /// `for PAT in iter { body }`; the pattern is rendered text.
    For {
        pat: String,
        iter: Expr,
        body: Block,
    },
    /// `var counter = 0` then `while counter < bound { counter := counter + 1 ... }`:
    /// bounded by construction.
    While {
        counter: String,
        bound: i64,
        cond: Option<Expr>,
        body: Block,
    },
    If {
        cond: Expr,
        then: Block,
        else_: Option<Block>,
    },
    /// `let Some(name) = init else { diverge }`: the else block ends in
    /// `return`, `break`, `continue` or a trap.
    LetElse {
        name: String,
        ty: Ty,
        init: Expr,
        diverge: Block,
    },
    Return(Option<Expr>),
    Break,
    Continue,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expr {
    pub ty: Ty,
    pub kind: Kind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    Text(String),
    Hole(Expr),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arm {
    /// The pattern as text.
    pub pat: String,
    pub body: Expr,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Literal text (`3`, `"a"`, `true`, `None`, `[]`, `empty_map()`).
    Lit(String),
    Var(String),
    /// A top-level function or builtin called by name.
    Call(String, Vec<Expr>),
    /// A function value called: `f(x)` for a local, `(e)(x)` otherwise.
    CallValue(Box<Expr>, Vec<Expr>),
    /// `name(fuel - 1, args)` inside a fuel function.
    RecCall(String, Vec<Expr>),
    /// `recv.name(args)`; no parentheses without arguments.
    Method(Box<Expr>, &'static str, Vec<Expr>),
    Bin(&'static str, Box<Expr>, Box<Expr>),
    Unary(&'static str, Box<Expr>),
    Field(Box<Expr>, String),
    Index(Box<Expr>, Box<Expr>),
    List(Vec<Expr>),
    Tuple(Vec<Expr>),
    Record(String, Vec<(String, Expr)>),
    Ctor(String, Vec<Expr>),
    Interp(Vec<Part>),
    Lambda(Vec<(String, Ty)>, Box<Block>),
    If(Box<Expr>, Box<Block>, Box<Block>),
    /// `if let PAT = scrut { a } else { b }`; the pattern is rendered text.
    IfLet(String, Box<Expr>, Box<Block>, Box<Block>),
    Match(Box<Expr>, Vec<Arm>),
    Block(Box<Block>),
    Range(Box<Expr>, Box<Expr>),
}

impl Expr {
    pub fn new(ty: Ty, kind: Kind) -> Expr {
        Expr { ty, kind }
    }
    pub fn lit(ty: Ty, text: impl Into<String>) -> Expr {
        Expr::new(ty, Kind::Lit(text.into()))
    }
    pub fn int(n: i64) -> Expr {
        Expr::lit(Ty::Int, n.to_string())
    }
    pub fn var(ty: Ty, name: &str) -> Expr {
        Expr::new(ty, Kind::Var(name.to_string()))
    }
    pub fn method(ty: Ty, recv: Expr, name: &'static str, args: Vec<Expr>) -> Expr {
        Expr::new(ty, Kind::Method(Box::new(recv), name, args))
    }
    pub fn bin(ty: Ty, op: &'static str, a: Expr, b: Expr) -> Expr {
        Expr::new(ty, Kind::Bin(op, Box::new(a), Box::new(b)))
    }
    pub fn call(ty: Ty, name: &str, args: Vec<Expr>) -> Expr {
        Expr::new(ty, Kind::Call(name.to_string(), args))
    }
}

/// Quotes `s` as a Sspur string literal.
pub fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '{' => out.push_str("\\{"),
            '}' => out.push_str("\\}"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

// ---- rendering ----

impl Program {
    pub fn type_name(&self, i: usize) -> &str {
        &self.types[i].name
    }

    pub fn ty(&self, t: &Ty) -> String {
        match t {
            Ty::Int => "Int".into(),
            Ty::Bool => "Bool".into(),
            Ty::Str => "Str".into(),
            Ty::F64 => "F64".into(),
            Ty::Unit => "Unit".into(),
            Ty::List(e) => format!("List[{}]", self.ty(e)),
            Ty::Map(k, v) => format!("Map[{}, {}]", self.ty(k), self.ty(v)),
            Ty::Opt(e) => format!("Option[{}]", self.ty(e)),
            Ty::Tuple(ts) => {
                let parts: Vec<String> = ts.iter().map(|t| self.ty(t)).collect();
                format!("({})", parts.join(", "))
            }
            Ty::User(i) => self.type_name(*i).to_string(),
            Ty::Fn(ps, r) => {
                let parts: Vec<String> = ps.iter().map(|t| self.ty(t)).collect();
                format!("fn({}) -> {}", parts.join(", "), self.ty(r))
            }
        }
    }

    /// The program as Sspur source text.
    pub fn render(&self) -> String {
        let mut r = Renderer {
            prog: self,
            out: String::new(),
            indent: 0,
        };
        for t in &self.types {
            match &t.kind {
                TypeKind::Record(fields) => {
                    let fs: Vec<String> = fields
                        .iter()
                        .map(|(n, t)| format!("{n}: {}", self.ty(t)))
                        .collect();
                    let _ = writeln!(r.out, "type {} = {{ {} }}", t.name, fs.join(", "));
                }
                TypeKind::Sum(vs) => {
                    let vs: Vec<String> = vs
                        .iter()
                        .map(|(n, fs)| {
                            if fs.is_empty() {
                                n.clone()
                            } else {
                                let fs: Vec<String> = fs.iter().map(|t| self.ty(t)).collect();
                                format!("{n}({})", fs.join(", "))
                            }
                        })
                        .collect();
                    let _ = writeln!(r.out, "type {} = {}", t.name, vs.join(" | "));
                }
            }
        }
        for f in &self.fns {
            r.out.push('\n');
            r.function(f);
        }
        r.out
    }
}

struct Renderer<'a> {
    prog: &'a Program,
    out: String,
    indent: usize,
}

impl Renderer<'_> {
    fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn function(&mut self, f: &FnDef) {
        let params: Vec<String> = f
            .params
            .iter()
            .map(|(n, t)| format!("{n}: {}", self.prog.ty(t)))
            .collect();
        let ret = if f.ret == Ty::Unit {
            String::new()
        } else {
            format!(" -> {}", self.prog.ty(&f.ret))
        };
        self.line(&format!("fn {}({}){ret} {{", f.name, params.join(", ")));
        self.indent += 1;
        if let Some(base) = &f.fuel {
            let base = self.expr(base);
            self.line(&format!("if fuel <= 0 {{ return {base} }}"));
        }
        self.block_body(&f.body);
        self.indent -= 1;
        self.line("}");
    }

    fn block_body(&mut self, b: &Block) {
        for s in &b.stmts {
            self.stmt(s);
        }
        if let Some(t) = &b.tail {
            let mut t = self.expr(t);
            // A line starting with `|` would continue the line before.
            if t.starts_with('|') {
                t = format!("({t})");
            }
            self.line(&t);
        }
    }

    /// `{`, the block's lines one level deeper, and `}` (without a newline
    /// after it), as text to embed in an expression.
    fn block_text(&mut self, b: &Block) -> String {
        if b.stmts.is_empty() {
            if let Some(t) = &b.tail {
                if !matches!(t.kind, Kind::Block(_)) {
                    let t = self.expr(t);
                    if !t.contains('\n') {
                        return format!("{{ {t} }}");
                    }
                }
            } else {
                return "{}".into();
            }
        }
        let saved = std::mem::take(&mut self.out);
        self.indent += 1;
        self.block_body(b);
        self.indent -= 1;
        let inner = std::mem::replace(&mut self.out, saved);
        let mut close = String::new();
        for _ in 0..self.indent {
            close.push_str("    ");
        }
        format!("{{\n{inner}{close}}}")
    }

    /// A head (of if, while, match, for): parenthesised when it holds a
    /// brace.
    fn head(&mut self, e: &Expr) -> String {
        let t = self.expr(e);
        if t.contains('{') {
            format!("({t})")
        } else {
            t
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Let {
                name,
                ty,
                mutable,
                init,
            } => {
                let kw = if *mutable { "var" } else { "let" };
                let init = self.expr(init);
                let ty = self.prog.ty(ty);
                self.line(&format!("{kw} {name}: {ty} = {init}"));
            }
            Stmt::LetTuple { names, init } => {
                let init = self.expr(init);
                self.line(&format!("let ({}) = {init}", names.join(", ")));
            }
            Stmt::Assign { name, value } => {
                let v = self.expr(value);
                self.line(&format!("{name} := {v}"));
            }
            Stmt::Expr(e) => {
                let e = self.expr(e);
                self.line(&e);
            }
            Stmt::For { pat, iter, body } => {
                let it = self.head(iter);
                let b = self.block_text(body);
                self.line(&format!("for {pat} in {it} {b}"));
            }
            Stmt::While {
                counter,
                bound,
                cond,
                body,
            } => {
                self.line(&format!("var {counter} = 0"));
                let c = match cond {
                    Some(c) => format!(" && {}", self.paren(c)),
                    None => String::new(),
                };
                let mut b = body.clone();
                b.stmts.insert(
                    0,
                    Stmt::Assign {
                        name: counter.clone(),
                        value: Expr::bin(Ty::Int, "+", Expr::var(Ty::Int, counter), Expr::int(1)),
                    },
                );
                let b = self.block_text(&b);
                self.line(&format!("while {counter} < {bound}{c} {b}"));
            }
            Stmt::If { cond, then, else_ } => {
                let c = self.head(cond);
                let t = self.block_text(then);
                match else_ {
                    Some(e) => {
                        let e = self.block_text(e);
                        self.line(&format!("if {c} {t} else {e}"));
                    }
                    None => self.line(&format!("if {c} {t}")),
                }
            }
            Stmt::LetElse {
                name,
                init,
                diverge,
                ..
            } => {
                let init = self.head(init);
                let d = self.block_text(diverge);
                self.line(&format!("let Some({name}) = {init} else {d}"));
            }
            Stmt::Return(None) => self.line("return"),
            Stmt::Return(Some(e)) => {
                let e = self.expr(e);
                self.line(&format!("return {e}"));
            }
            Stmt::Break => self.line("break"),
            Stmt::Continue => self.line("continue"),
        }
    }

    /// An operand: wrapped in parentheses unless it is atomic.
    fn paren(&mut self, e: &Expr) -> String {
        let t = self.expr(e);
        let atomic = match &e.kind {
            Kind::Lit(l) => !l.starts_with('-'),
            Kind::Var(_)
            | Kind::Call(..)
            | Kind::CallValue(..)
            | Kind::RecCall(..)
            | Kind::Method(..)
            | Kind::Field(..)
            | Kind::Index(..)
            | Kind::List(_)
            | Kind::Tuple(_)
            | Kind::Ctor(..)
            | Kind::Interp(_)
            | Kind::Bin(..) => true,
            _ => false,
        };
        if atomic {
            t
        } else {
            format!("({t})")
        }
    }

    /// A receiver of a method, field or index: atomic, and never a bare
    /// number (`3.abs` would lex as a float).
    fn receiver(&mut self, e: &Expr) -> String {
        match &e.kind {
            Kind::Lit(l) if l.starts_with(|c: char| c.is_ascii_digit() || c == '-') => {
                format!("({l})")
            }
            _ => self.paren(e),
        }
    }

    fn args(&mut self, args: &[Expr]) -> String {
        let parts: Vec<String> = args.iter().map(|a| self.expr(a)).collect();
        parts.join(", ")
    }

    fn expr(&mut self, e: &Expr) -> String {
        match &e.kind {
            Kind::Lit(l) => l.clone(),
            Kind::Var(v) => v.clone(),
            Kind::Call(f, args) => format!("{f}({})", self.args(args)),
            Kind::CallValue(f, args) => {
                let callee = match &f.kind {
                    Kind::Var(v) => v.clone(),
                    _ => format!("({})", self.expr(f)),
                };
                format!("{callee}({})", self.args(args))
            }
            Kind::RecCall(f, args) => {
                if args.is_empty() {
                    format!("{f}(fuel - 1)")
                } else {
                    format!("{f}(fuel - 1, {})", self.args(args))
                }
            }
            Kind::Method(r, m, args) => {
                let r = self.receiver(r);
                if args.is_empty() {
                    format!("{r}.{m}")
                } else {
                    format!("{r}.{m}({})", self.args(args))
                }
            }
            Kind::Bin(op, a, b) => {
                let a = self.paren(a);
                let b = self.paren(b);
                format!("({a} {op} {b})")
            }
            Kind::Unary(op, a) => {
                let a = self.paren(a);
                format!("{op}{a}")
            }
            Kind::Field(r, f) => {
                let r = self.receiver(r);
                format!("{r}.{f}")
            }
            Kind::Index(r, i) => {
                let r = self.receiver(r);
                let i = self.expr(i);
                format!("{r}[{i}]")
            }
            Kind::List(xs) => format!("[{}]", self.args(xs)),
            Kind::Tuple(xs) => {
                if xs.len() == 1 {
                    format!("({},)", self.args(xs))
                } else {
                    format!("({})", self.args(xs))
                }
            }
            Kind::Record(name, fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(n, v)| format!("{n}: {}", self.expr(v)))
                    .collect();
                format!("{name} {{ {} }}", parts.join(", "))
            }
            Kind::Ctor(name, args) => {
                if args.is_empty() {
                    name.clone()
                } else {
                    format!("{name}({})", self.args(args))
                }
            }
            Kind::Interp(parts) => {
                let mut s = String::from("\"");
                for p in parts {
                    match p {
                        Part::Text(t) => {
                            let q = quote(t);
                            s.push_str(&q[1..q.len() - 1]);
                        }
                        Part::Hole(h) => {
                            let h = self.expr(h);
                            s.push('{');
                            s.push_str(&h);
                            s.push('}');
                        }
                    }
                }
                s.push('"');
                s
            }
            Kind::Lambda(params, body) => {
                let ps: Vec<String> = params
                    .iter()
                    .map(|(n, t)| format!("{n}: {}", self.prog.ty(t)))
                    .collect();
                let b = self.block_text(body);
                format!("|{}| {b}", ps.join(", "))
            }
            Kind::If(c, t, f) => {
                let c = self.head(c);
                let t = self.block_text(t);
                let f = self.block_text(f);
                format!("if {c} {t} else {f}")
            }
            Kind::IfLet(pat, s, t, f) => {
                let s = self.head(s);
                let t = self.block_text(t);
                let f = self.block_text(f);
                format!("if let {pat} = {s} {t} else {f}")
            }
            Kind::Match(s, arms) => {
                let s = self.head(s);
                let saved = std::mem::take(&mut self.out);
                self.indent += 1;
                for a in arms {
                    let body = match &a.body.kind {
                        Kind::Block(b) => self.block_text(b),
                        _ => self.expr(&a.body),
                    };
                    self.line(&format!("{} => {body}", a.pat));
                }
                self.indent -= 1;
                let inner = std::mem::replace(&mut self.out, saved);
                let mut close = String::new();
                for _ in 0..self.indent {
                    close.push_str("    ");
                }
                format!("match {s} {{\n{inner}{close}}}")
            }
            Kind::Block(b) => self.block_text(b),
            Kind::Range(a, b) => {
                let a = self.paren(a);
                let b = self.paren(b);
                format!("({a}..{b})")
            }
        }
    }
}
