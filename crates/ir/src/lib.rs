//! Sspur's typed IR: what the checker produces and every later stage
//! (ownership, interp, codegen) consumes.
//!
//! Shape:
//! - [`ItemTree`]: the program's user types and function signatures, in
//!   arenas ([`TypeId`], [`FnId`]).
//! - [`Body`]: one per function; arenas of [`Expr`], [`Stmt`], [`Pat`],
//!   [`Local`] with typed `Idx` handles. Every expression carries its type.
//!   Lambdas live inside the body of the function that contains them.
//! - [`BodySourceMap`]: the side table of spans, kept apart from the body so
//!   that moving a function in the file does not change its body.
//! - [`Program`]: the item tree plus all bodies and source maps.
//!
//! The ownership pass returns a new `Program` whose bodies contain its
//! decisions as explicit forms: [`StmtKind::Drop`], [`OldValue`] on
//! assignments, [`ExprKind::PutOwnedKey`], [`ExprKind::SetInPlace`] and
//! the string-builder forms.
//! Temporaries it frees are bound to fresh [`LocalKind::Temp`] locals with
//! ordinary `let` statements inside a block, then dropped. The checker
//! never produces these forms.
//!
//! # List buffer growth (shared by interp and codegen)
//! A list buffer records its capacity and how many elements are in use.
//! `xs.push(x)` / `xs.concat(ys)` write in place when `xs` ends exactly at
//! the buffer's in-use end and the capacity suffices; otherwise they copy
//! into a new buffer of capacity `max(4, 2 * new_len)` ("moved"). Lists made
//! any other way have capacity equal to their length; `[]` allocates
//! nothing. Both backends follow this rule so that "free the old buffer
//! when it moved" frees the same blocks in both.
#![forbid(unsafe_code)]

pub mod effects;
pub mod fusion;
pub mod methods;
pub mod pretty;
pub mod upsert;
pub mod visit;

use std::sync::Arc;

pub use la_arena::{Arena, ArenaMap, Idx, RawIdx};
pub use syntax::Span;

pub type TypeId = Idx<TypeDef>;
pub type FnId = Idx<FnSig>;
pub type ExprId = Idx<Expr>;
pub type StmtId = Idx<Stmt>;
pub type PatId = Idx<Pat>;
pub type LocalId = Idx<Local>;

// ---------------------------------------------------------------- types

/// A fully resolved type. Cheap to clone.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    Int,
    F64,
    Bool,
    Str,
    Unit,
    /// The type of `return`, `break`, `continue` and `trap(..)`: no value.
    Never,
    List(Arc<Ty>),
    Map(Arc<Ty>, Arc<Ty>),
    Option(Arc<Ty>),
    Tuple(Arc<[Ty]>),
    Fn(Arc<[Ty]>, Arc<Ty>),
    Adt(TypeId),
    /// A string builder local made by the push-then-join rewrite.
    StrBuilder,
    /// Only in bodies that failed to check.
    Error,
}

impl Ty {
    pub fn list(elem: Ty) -> Ty {
        Ty::List(Arc::new(elem))
    }
    pub fn map(k: Ty, v: Ty) -> Ty {
        Ty::Map(Arc::new(k), Arc::new(v))
    }
    pub fn option(t: Ty) -> Ty {
        Ty::Option(Arc::new(t))
    }
    pub fn tuple(elems: Vec<Ty>) -> Ty {
        Ty::Tuple(elems.into())
    }
    pub fn func(params: Vec<Ty>, ret: Ty) -> Ty {
        Ty::Fn(params.into(), Arc::new(ret))
    }
    /// List buffers and string blocks: the only blocks the ownership pass frees.
    pub fn is_freeable(&self) -> bool {
        matches!(self, Ty::List(_) | Ty::Str)
    }

    /// A record, tuple, sum value or option: one word pointing at a block
    /// (static for nullary constructors and `None`).
    pub fn is_cell(&self) -> bool {
        matches!(self, Ty::Adt(_) | Ty::Tuple(_) | Ty::Option(_))
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TypeDef {
    pub name: String,
    pub kind: TypeDefKind,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TypeDefKind {
    Record { fields: Vec<(String, Ty)> },
    Sum { variants: Vec<Variant> },
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Variant {
    pub name: String,
    pub fields: Vec<Ty>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FnSig {
    pub name: String,
    pub params: Vec<(String, Ty)>,
    pub ret: Ty,
    /// Set only by the ownership pass: this function is the *owning
    /// version* of the one given (same name, parameters and result; it may
    /// consume the parameters that version owns). Printed `name#owning`;
    /// trap call chains show the plain name.
    pub owning_of: Option<FnId>,
    /// Set only by the ownership pass: a version whose last parameter is a
    /// reuse token (a block its caller took apart and handed on), built
    /// into by a constructor of its size class on each path that has one
    /// and freed on the others. Printed with `#token`.
    pub takes_token: bool,
}

/// Types and signatures of the whole program, in source order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct ItemTree {
    pub types: Arena<TypeDef>,
    pub fns: Arena<FnSig>,
    /// Top-level constants in source order, already evaluated: the checker
    /// writes each use as the value's literal.
    pub consts: Vec<ConstDef>,
}

/// `let NAME = <constant expression>` at the top level, folded.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConstDef {
    pub name: String,
    pub ty: Ty,
    pub value: ConstValue,
}

/// A constant's value: a literal or a list of constant values.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ConstValue {
    Lit(Lit),
    List(Vec<ConstValue>),
}

impl ItemTree {
    pub fn fn_by_name(&self, name: &str) -> Option<FnId> {
        self.fns
            .iter()
            .find(|(_, f)| f.name == name && f.owning_of.is_none() && !f.takes_token)
            .map(|(id, _)| id)
    }
    pub fn type_by_name(&self, name: &str) -> Option<TypeId> {
        self.types
            .iter()
            .find(|(_, t)| t.name == name)
            .map(|(id, _)| id)
    }
}

// ---------------------------------------------------------------- bodies

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LocalKind {
    /// A function or lambda parameter.
    Param,
    /// `let` or a pattern binding (immutable).
    Let,
    /// `var` (rebindable with `:=`).
    Var,
    /// Introduced by the ownership pass to name a temporary it frees.
    Temp,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Local {
    pub name: String,
    pub ty: Ty,
    pub kind: LocalKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Lit {
    Int(i64),
    F64(f64),
    Bool(bool),
    Str(String),
    Unit,
}

impl Eq for Lit {}
impl std::hash::Hash for Lit {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        match self {
            Lit::Int(i) => i.hash(state),
            Lit::F64(f) => f.to_bits().hash(state),
            Lit::Bool(b) => b.hash(state),
            Lit::Str(s) => s.hash(state),
            Lit::Unit => {}
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// Short-circuit.
    And,
    /// Short-circuit.
    Or,
}

impl BinOp {
    /// The operator as written in source.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    Neg,
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    Print,
    Log,
    EmptyMap,
    ReadFile,
    ReadStdin,
    Args,
    Trap,
    /// `exit(code)`: flushes stdout and ends the program (a trap outside
    /// 0..=255).
    Exit,
    /// `eprint(x)`: `print` to stderr, after flushing stdout.
    Eprint,
    /// `write_file(path, text)` and `append_file(path, text)`: `None`, or
    /// `Some(message)` when the file cannot be written.
    WriteFile,
    AppendFile,
    /// `read_lines()`: the rest of stdin as a list of fresh strings.
    ReadLines,
}

impl Builtin {
    pub const ALL: [Builtin; 12] = [
        Builtin::Print,
        Builtin::Log,
        Builtin::EmptyMap,
        Builtin::ReadFile,
        Builtin::ReadStdin,
        Builtin::Args,
        Builtin::Trap,
        Builtin::Exit,
        Builtin::Eprint,
        Builtin::WriteFile,
        Builtin::AppendFile,
        Builtin::ReadLines,
    ];

    /// The name as written in source.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::Print => "print",
            Builtin::Log => "log",
            Builtin::EmptyMap => "empty_map",
            Builtin::ReadFile => "read_file",
            Builtin::ReadStdin => "read_stdin",
            Builtin::Args => "args",
            Builtin::Trap => "trap",
            Builtin::Exit => "exit",
            Builtin::Eprint => "eprint",
            Builtin::WriteFile => "write_file",
            Builtin::AppendFile => "append_file",
            Builtin::ReadLines => "read_lines",
        }
    }

    /// The built-in a source name stands for.
    pub fn from_name(name: &str) -> Option<Builtin> {
        Builtin::ALL.into_iter().find(|b| b.name() == name)
    }
}

/// Every method of the language (docs/language.md), by receiver type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Method {
    // List[T]
    ListLen,
    ListIsEmpty,
    ListGet,
    ListFirst,
    ListLast,
    ListContains,
    ListSum,
    ListMin,
    ListMax,
    ListPush,
    ListConcat,
    ListTake,
    ListDrop,
    ListReverse,
    ListSet,
    ListSort,
    ListSortBy,
    ListUnique,
    ListEnumerate,
    ListZip,
    ListMap,
    ListFilter,
    ListFlatMap,
    ListFold,
    ListAny,
    ListAll,
    ListFind,
    ListCounts,
    ListJoin,
    // Str
    StrLen,
    StrByte,
    StrChars,
    StrSplit,
    StrWords,
    StrLines,
    StrTrim,
    StrLower,
    StrUpper,
    StrReplace,
    StrRepeat,
    StrContains,
    StrStartsWith,
    StrEndsWith,
    StrFind,
    StrTake,
    StrDrop,
    StrSlice,
    StrToInt,
    StrToF64,
    StrIsEmpty,
    // Map[K, V]
    MapPut,
    MapUpdate,
    MapGet,
    MapGetOr,
    MapHas,
    MapRemove,
    MapLen,
    MapKeys,
    MapValues,
    MapEntries,
    // Int
    IntToF64,
    IntAbs,
    // F64
    F64ToInt,
    F64Abs,
    F64Sqrt,
    F64Floor,
    // Str: parses that fail without a trap
    StrParseInt,
    StrParseF64,
    // Option[T]
    OptIsSome,
    OptIsNone,
    OptUnwrap,
    OptUnwrapOr,
    OptMap,
    OptAndThen,
}

impl Method {
    /// The name as written in source (from the method table).
    pub fn name(self) -> &'static str {
        self.def().name
    }
}

/// A constructor of a sum type or of Option.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ctor {
    Some,
    None,
    /// Variant index `1` of user type `0`.
    User(TypeId, u32),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Callee {
    /// A top-level function, called directly.
    Fn(FnId),
    Builtin(Builtin),
    /// Any other function value (a local holding a lambda or function),
    /// called indirectly.
    Value(ExprId),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum InterpPart {
    Text(String),
    Expr(ExprId),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MatchArm {
    pub pat: PatId,
    pub body: ExprId,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: Ty,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ExprKind {
    /// Stands for an expression that failed to check.
    Missing,
    Lit(Lit),
    Local(LocalId),
    /// A top-level function used as a value.
    Func(FnId),
    /// String interpolation; always makes a fresh string.
    Interp(Vec<InterpPart>),
    Unary {
        op: UnOp,
        operand: ExprId,
    },
    Binary {
        op: BinOp,
        lhs: ExprId,
        rhs: ExprId,
    },
    Call {
        callee: Callee,
        args: Vec<ExprId>,
    },
    Method {
        method: Method,
        receiver: ExprId,
        args: Vec<ExprId>,
    },
    /// `xs[i]` on a list or `m[k]` on a map (by the base's type).
    Index {
        base: ExprId,
        index: ExprId,
    },
    /// Field `index` of a record or tuple (by the base's type).
    Field {
        base: ExprId,
        index: u32,
    },
    /// A record literal; `fields` in source (evaluation) order, each with
    /// its index in the type's declaration.
    Record {
        ty: TypeId,
        fields: Vec<(u32, ExprId)>,
    },
    Tuple(Vec<ExprId>),
    Ctor {
        ctor: Ctor,
        args: Vec<ExprId>,
    },
    List(Vec<ExprId>),
    /// `lo..hi`, a list of Int (a `for` over a Range expression iterates
    /// without building the list).
    Range {
        lo: ExprId,
        hi: ExprId,
    },
    /// A closure. `captures` are locals of enclosing scopes that the body
    /// uses (copied by value at creation); inside the body they are referred
    /// to by the same `LocalId`.
    Lambda {
        params: Vec<LocalId>,
        body: ExprId,
        captures: Vec<LocalId>,
    },
    If {
        cond: ExprId,
        then: ExprId,
        else_: Option<ExprId>,
    },
    Match {
        scrutinee: ExprId,
        arms: Vec<MatchArm>,
    },
    Block {
        stmts: Vec<StmtId>,
        tail: Option<ExprId>,
    },
    Return(Option<ExprId>),
    Break,
    Continue,

    // ---- forms only the ownership pass produces ----
    /// `m.put(k, v)` where the key string is owned and consumed: the put
    /// frees `key`'s block if the key was already present, keeps it
    /// otherwise.
    PutOwnedKey {
        map: ExprId,
        key: ExprId,
        value: ExprId,
    },
    /// A new empty string builder that puts `sep` between pieces
    /// (push-then-join rewrite of `var v = []`).
    BuilderNew {
        sep: String,
    },
    /// Appends `value` (a Str, read not consumed) to the builder local.
    BuilderPush {
        builder: LocalId,
        value: ExprId,
    },
    /// The builder's contents as a fresh string (replaces `v.join(sep)`).
    BuilderFinish {
        builder: LocalId,
    },
    /// `value` (a constructor, record or tuple expression) built in the
    /// block of `token`, a cell whose value a destructive `match` just took
    /// apart (its fields were read out; nothing else refers to it). The
    /// backend allocates afresh when it cannot reuse. `reason` indexes the
    /// ownership pass's decision table.
    Reuse {
        token: LocalId,
        value: ExprId,
        reason: u32,
    },
    /// `list.set(index, value)` written into `list`'s own buffer: the
    /// ownership pass proved `list` a whole list nothing else refers to,
    /// at its last use (or the old value of `x := x.set(..)`), so the
    /// result is that same block. Traps on a bad index exactly as the
    /// copying `set` does. `reason` indexes the ownership pass's decision
    /// table.
    SetInPlace {
        list: ExprId,
        index: ExprId,
        value: ExprId,
        reason: u32,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Stmt {
    pub kind: StmtKind,
}

/// What an assignment does with the value it replaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OldValue {
    /// Leave it (to the collector or to other owners).
    Keep,
    /// Free it after the new value exists (`x := <fresh>`).
    Free { deep: bool },
    /// Free the old buffer only if `x := x.push(..)` / `x.concat(..)` moved.
    FreeIfMoved,
    /// Free the old cell after the new value exists: an owned-deep var
    /// whose old value the right side only read (`deep`: every block it
    /// owns too), or moved some fields of into the new value (its block
    /// only). `reason` indexes the ownership pass's decision table.
    FreeCell { deep: bool, reason: u32 },
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum StmtKind {
    /// `let pat = init` (pat binds locals, `_`, or destructures a tuple).
    Let {
        pat: PatId,
        init: ExprId,
    },
    /// `var local = init`.
    Var {
        local: LocalId,
        init: ExprId,
    },
    /// `local := value`.
    Assign {
        local: LocalId,
        value: ExprId,
        old: OldValue,
    },
    Expr(ExprId),
    /// `for pat in iter { body }`; iter is a list, a Range expression (no
    /// list is built) or a map's entries.
    For {
        pat: PatId,
        iter: ExprId,
        body: ExprId,
    },
    While {
        cond: ExprId,
        body: ExprId,
    },
    /// Frees the local's block (ownership pass only).
    Drop(Drop),
    /// Zeroes the fields of reuse token `local` that pattern `pat` (the
    /// destructive match's, which took it apart) binds to values holding
    /// blocks (ownership pass only): the token's block waits for its
    /// constructor, and the arm may free or reuse those fields first. The
    /// interpreter, whose values are not blocks, does nothing.
    Clear {
        local: LocalId,
        pat: PatId,
        /// Index into the ownership pass's decision table for this body.
        reason: u32,
    },
}

/// An explicit free of a local's block: a list buffer or string block, or
/// a cell (record, tuple, sum value, `Some`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Drop {
    pub local: LocalId,
    /// A list of strings that owns its strings: free them too. A cell:
    /// free every block it owns (through the type descriptors); without
    /// `deep`, only the cell's own block (its fields were moved out).
    pub deep: bool,
    /// Index into the ownership pass's decision table for this body (what
    /// `explain` prints for this drop).
    pub reason: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Pat {
    pub kind: PatKind,
    pub ty: Ty,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PatKind {
    Missing,
    Wild,
    Bind(LocalId),
    Lit(Lit),
    Tuple(Vec<PatId>),
    Ctor {
        ctor: Ctor,
        args: Vec<PatId>,
    },
    /// `local @ pat`: binds the whole value to `local` when `pat` matches.
    /// Only the ownership pass makes it (a cell a nested pattern takes
    /// apart, named so its block can be freed or reused).
    At {
        local: LocalId,
        pat: PatId,
    },
}

/// One function's code. `root` is the body block.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Body {
    pub params: Vec<LocalId>,
    pub root: Option<ExprId>,
    pub exprs: Arena<Expr>,
    pub stmts: Arena<Stmt>,
    pub pats: Arena<Pat>,
    pub locals: Arena<Local>,
    /// The expression each [`LocalKind::Temp`] is bound to. A temporary
    /// stands for that value (binding it moves, never copies), so whoever
    /// asks whether a value is a second reference looks through it.
    pub temp_inits: ArenaMap<LocalId, ExprId>,
}

impl Body {
    pub fn root(&self) -> ExprId {
        self.root.expect("body has a root")
    }

    /// The value a temporary of the ownership pass stands for.
    pub fn temp_init(&self, l: LocalId) -> Option<ExprId> {
        self.temp_inits.get(l).copied()
    }
}

impl std::ops::Index<ExprId> for Body {
    type Output = Expr;
    fn index(&self, id: ExprId) -> &Expr {
        &self.exprs[id]
    }
}
impl std::ops::Index<StmtId> for Body {
    type Output = Stmt;
    fn index(&self, id: StmtId) -> &Stmt {
        &self.stmts[id]
    }
}
impl std::ops::Index<PatId> for Body {
    type Output = Pat;
    fn index(&self, id: PatId) -> &Pat {
        &self.pats[id]
    }
}
impl std::ops::Index<LocalId> for Body {
    type Output = Local;
    fn index(&self, id: LocalId) -> &Local {
        &self.locals[id]
    }
}

/// Spans of a body's nodes (absolute byte offsets in the file once the
/// driver has placed the function).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct BodySourceMap {
    pub exprs: ArenaMap<ExprId, Span>,
    pub stmts: ArenaMap<StmtId, Span>,
    pub pats: ArenaMap<PatId, Span>,
    pub locals: ArenaMap<LocalId, Span>,
}

impl BodySourceMap {
    pub fn expr(&self, id: ExprId) -> Span {
        self.exprs.get(id).copied().unwrap_or_default()
    }
    pub fn stmt(&self, id: StmtId) -> Span {
        self.stmts.get(id).copied().unwrap_or_default()
    }
    pub fn pat(&self, id: PatId) -> Span {
        self.pats.get(id).copied().unwrap_or_default()
    }
    pub fn local(&self, id: LocalId) -> Span {
        self.locals.get(id).copied().unwrap_or_default()
    }

    /// Moves every span by `delta` bytes.
    pub fn shift(&self, delta: i64) -> BodySourceMap {
        fn shift_map<T>(m: &ArenaMap<Idx<T>, Span>, delta: i64) -> ArenaMap<Idx<T>, Span> {
            let mut out = ArenaMap::default();
            for (id, span) in m.iter() {
                out.insert(id, span.shift(delta));
            }
            out
        }
        BodySourceMap {
            exprs: shift_map(&self.exprs, delta),
            stmts: shift_map(&self.stmts, delta),
            pats: shift_map(&self.pats, delta),
            locals: shift_map(&self.locals, delta),
        }
    }
}

/// A checked program: items, then one body and source map per function
/// (indexed like `items.fns`).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Program {
    pub items: Arc<ItemTree>,
    pub bodies: Vec<Arc<Body>>,
    pub source_maps: Vec<Arc<BodySourceMap>>,
    /// Span of each function's name in its definition (indexed like
    /// `items.fns`); where a `stack overflow` trap points.
    pub fn_spans: Vec<Span>,
    /// Byte offsets of the start of each line, to turn spans into line:col.
    pub line_starts: Arc<Vec<u32>>,
}

impl Program {
    pub fn body(&self, f: FnId) -> &Body {
        &self.bodies[f.into_raw().into_u32() as usize]
    }
    pub fn source_map(&self, f: FnId) -> &BodySourceMap {
        &self.source_maps[f.into_raw().into_u32() as usize]
    }
    pub fn fn_span(&self, f: FnId) -> Span {
        self.fn_spans
            .get(f.into_raw().into_u32() as usize)
            .copied()
            .unwrap_or_default()
    }
    pub fn main(&self) -> Option<FnId> {
        self.items.fn_by_name("main")
    }
    /// 1-based (line, column) of a byte offset; the column counts bytes.
    pub fn line_col(&self, offset: u32) -> (u32, u32) {
        line_col(&self.line_starts, offset)
    }
}

/// Byte offsets where each line starts.
pub fn line_starts(text: &str) -> Vec<u32> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i as u32 + 1))
        .collect()
}

/// 1-based (line, column) of a byte offset given [`line_starts`].
pub fn line_col(line_starts: &[u32], offset: u32) -> (u32, u32) {
    let line = match line_starts.binary_search(&offset) {
        Ok(i) => i,
        Err(i) => i.saturating_sub(1),
    };
    let start = line_starts.get(line).copied().unwrap_or(0);
    (line as u32 + 1, offset.saturating_sub(start) + 1)
}
