//! The abstract syntax tree. Every node carries the byte span it came from.
//!
//! The AST is plain owned data (Clone + Eq + Hash) so the driver can store a
//! function's AST in a salsa query and compare it to the previous revision.
//! Floats are stored as bits for that reason.

use crate::Span;

#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct SourceFile {
    pub items: Vec<Item>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Item {
    Fn(FnDef),
    Type(TypeDef),
    Const(ConstDef),
}

impl Item {
    pub fn span(&self) -> Span {
        match self {
            Item::Fn(f) => f.span,
            Item::Type(t) => t.span,
            Item::Const(c) => c.span,
        }
    }
}

/// `let NAME = init` or `let NAME: T = init` at the top level; `NAME` may
/// be lower- or upper-case. The checker evaluates `init`, which must be a
/// constant expression.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConstDef {
    pub name: Name,
    pub ty: Option<TypeRef>,
    pub init: Expr,
    pub span: Span,
}

/// An identifier with its position.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Name {
    pub text: String,
    pub span: Span,
}

/// `fn name(a: Int, b: Str) -> R { body }`; `ret` is None when `-> R` is
/// omitted (meaning Unit).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FnDef {
    pub name: Name,
    pub params: Vec<Param>,
    pub ret: Option<TypeRef>,
    pub body: Block,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Param {
    pub name: Name,
    pub ty: TypeRef,
}

/// `type Sale = { region: Str }` or `type Tree = Leaf | Node(Tree, Int, Tree)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TypeDef {
    pub name: Name,
    pub kind: TypeDefKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TypeDefKind {
    Record(Vec<FieldDef>),
    Sum(Vec<VariantDef>),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FieldDef {
    pub name: Name,
    pub ty: TypeRef,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VariantDef {
    pub name: Name,
    pub fields: Vec<TypeRef>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TypeRef {
    pub kind: TypeRefKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TypeRefKind {
    /// `Int`, `Str`, `Sale`, `List[Int]`, `Map[Str, Int]`, `Option[T]`:
    /// the checker decides what the name means.
    Named { name: Name, args: Vec<TypeRef> },
    /// `(A, B)`; `()` is the empty tuple and means Unit.
    Tuple(Vec<TypeRef>),
    /// `fn(A, B) -> R` (R defaults to Unit when omitted).
    Fn {
        params: Vec<TypeRef>,
        ret: Option<Box<TypeRef>>,
    },
}

/// `{ s1; s2; tail }`. `tail` is the final expression without `;`, the
/// block's value (Unit when None).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub tail: Option<Box<Expr>>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum StmtKind {
    /// `let pat: T = init`, or `let pat = init else { .. }` where the
    /// `else` block runs (and must leave) when `pat` does not match.
    /// Without `else`, the checker wants a pattern that cannot fail.
    Let {
        pat: Pat,
        ty: Option<TypeRef>,
        init: Expr,
        else_: Option<Block>,
    },
    /// `var name: T = init`.
    Var {
        name: Name,
        ty: Option<TypeRef>,
        init: Expr,
    },
    /// `name := value`.
    Assign { name: Name, value: Expr },
    /// `for pat in iter { body }`.
    For { pat: Pat, iter: Expr, body: Block },
    /// `while cond { body }`.
    While { cond: Expr, body: Block },
    /// An expression used as a statement.
    Expr(Expr),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
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
    And,
    Or,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    Neg,
    Not,
}

/// A piece of a string literal: literal text (escapes already decoded) or
/// an interpolation hole parsed as an expression with its own spans.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum StrPart {
    Text(String),
    Hole(Expr),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ExprKind {
    Int(i64),
    /// An F64 literal as `f64::to_bits`.
    Float(u64),
    Bool(bool),
    /// `"text {hole} text"`; a literal without holes is one Text part (or
    /// none when empty).
    Str(Vec<StrPart>),
    /// `()`.
    Unit,
    /// A lower-case name: a local, a top-level function or a builtin.
    Name(Name),
    /// An upper-case name, possibly applied: `Leaf`, `None`, `Some(x)`,
    /// `Node(l, v, r)`. `args` is None without parentheses.
    Ctor {
        name: Name,
        args: Option<Vec<Expr>>,
    },
    /// `Sale { region: r, amount: 3 }` (fields in source order).
    Record {
        name: Name,
        fields: Vec<(Name, Expr)>,
    },
    /// `(a, b, ...)` with at least two elements.
    Tuple(Vec<Expr>),
    /// `[a, b, c]`.
    List(Vec<Expr>),
    /// `lo..hi`.
    Range {
        lo: Box<Expr>,
        hi: Box<Expr>,
    },
    Binary {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    Unary {
        op: UnOp,
        operand: Box<Expr>,
    },
    /// `callee(args)`.
    Call {
        callee: Box<Expr>,
        args: Vec<Expr>,
    },
    /// `receiver.name(args)` or `receiver.name` (then `args` is empty and
    /// `parens` false).
    Method {
        receiver: Box<Expr>,
        name: Name,
        args: Vec<Expr>,
        parens: bool,
    },
    /// `base.name` where `name` is a record field. The parser cannot tell
    /// a field from a method without parentheses, so it produces `Method`
    /// with `parens: false` for both; the checker decides. `Field` is only
    /// produced for tuple fields `t.0` (name text is the digits).
    Field {
        base: Box<Expr>,
        name: Name,
    },
    /// `base[index]`.
    Index {
        base: Box<Expr>,
        index: Box<Expr>,
    },
    /// `|a, b: Int| body`.
    Lambda {
        params: Vec<LambdaParam>,
        body: Box<Expr>,
    },
    /// `if cond { then } else ...`, boxed: it is the largest expression,
    /// and every other one would pay its size.
    If(Box<IfExpr>),
    Match {
        scrutinee: Box<Expr>,
        arms: Vec<MatchArm>,
    },
    Block(Block),
    Return(Option<Box<Expr>>),
    Break,
    Continue,
    /// Placeholder after a syntax error; never reaches a valid program.
    Error,
}

/// `if cond { then } else ...`; `else_` is a Block or another If. With
/// `pat`, `if let pat = cond { .. }`: `then` runs with the pattern's
/// bindings when `cond`'s value matches.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IfExpr {
    pub pat: Option<Pat>,
    pub cond: Box<Expr>,
    pub then: Block,
    pub else_: Option<Box<Expr>>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LambdaParam {
    pub name: Name,
    pub ty: Option<TypeRef>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MatchArm {
    pub pat: Pat,
    pub body: Expr,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Pat {
    pub kind: PatKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PatKind {
    /// `_`
    Wild,
    /// a lower-case name binds the value
    Bind(Name),
    /// `42`, `-1`
    Int(i64),
    /// `"text"` (no holes allowed)
    Str(String),
    Bool(bool),
    /// `(p, q, ...)`
    Tuple(Vec<Pat>),
    /// `Leaf`, `None`, `Some(p)`, `Node(l, v, r)`
    Ctor {
        name: Name,
        args: Vec<Pat>,
    },
}
