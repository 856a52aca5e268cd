//! The reasons behind every decision, as data. The analysis decides by
//! matching on these enums; text exists only when `explain`, `emit drops`
//! or `emit summaries` renders them for a reader, so rewording a reason can
//! never change a drop.
//!
//! Locals are named by id within the function whose decision they explain
//! (`in_fn` when rendering); a callee's reasons carry their function.

use ir::{BinOp, Builtin, Ctor, FnId, LocalId, Method, Program, TypeDefKind, TypeId};

use crate::walk::ctor_name;
use crate::Summary;

/// Who reads a value and keeps nothing of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reader {
    Interpolation,
    Binary(BinOp),
    Unary,
    /// A parameter of this function that only reads it.
    Call(FnId),
    Builtin(Builtin),
    /// The callee of a call through a function value.
    CallOfValue,
    Method(Method),
    Indexing,
    Field,
    Range,
    Condition,
    DiscardedLet,
    DiscardedValue,
    For,
    Loop,
    /// The map of a `put` that consumes its key.
    Put,
    /// A string builder's append.
    Builder,
    /// A fused pipeline reading its source list (freed after the
    /// pipeline's consumer, as no stage builds a list of its own).
    Pipeline,
}

pub use ir::methods::{Keep, SharedResult};

/// Why a value escapes: it is kept, shared or handed on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Escape {
    /// Passed to parameter `param` of `f`, which keeps it.
    PassedTo {
        f: FnId,
        param: u32,
    },
    PassedToValue,
    ViewedBy(Method),
    Kept(Keep),
    /// A `push`/`concat` receiver other than `x := x.push(..)`.
    SharedBy(Method),
    StoredInField {
        ty: TypeId,
        field: u32,
    },
    StoredInTuple,
    StoredInCtor(Ctor),
    StoredInList,
    ReturnedFromClosure,
    Matched,
    Destructured,
    ConsumedKey,
    StoredInMap,
    CapturedByClosure,
}

/// How a parameter is used when it is not only read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamUseKind {
    InClosure,
    Returned,
    Escapes(Escape),
    AliasedBy(LocalId),
    AssignedTo(LocalId),
    GrownByPush,
    KeyInMap,
}

/// Why a parameter is not borrowed: its first keeping use, at an offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ParamUse {
    pub kind: ParamUseKind,
    pub at: u32,
}

/// Why an expression's value is not a new block nobody else holds.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum NotFresh {
    NotListOrString,
    /// A method's shared result; `of` is its receiver when that is a name.
    Shared {
        what: SharedResult,
        of: Option<LocalId>,
    },
    FnResult(FnId),
    UnknownFn,
    BuiltinResult(Builtin),
    FnValueResult,
    IfWithoutElse,
    Branch(Box<NotFresh>),
    BlockWithoutValue,
    Param(LocalId),
    /// A local bound by a pattern (a part of another value).
    PartOf(LocalId),
    /// A var whose last value escaped before it flows out.
    LastValueEscaped {
        local: LocalId,
        why: Box<NotOwned>,
        at: u32,
    },
    NotOnlyOwner {
        local: LocalId,
        why: Box<NotOwned>,
        at: u32,
    },
    AnotherName(LocalId),
    NotNew,
}

/// Why a function's result is not fresh.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ResultNotFresh {
    NotListOrString,
    Returns(NotFresh),
}

/// Why a local does not own its block.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum NotOwned {
    Unknown,
    NotLetOrVar,
    NotListOrString,
    Holds(NotFresh),
    AssignedInForOverIt,
    AssignedInExpression,
    AssignedNotFresh(NotFresh),
    InClosure,
    Escapes(Escape),
    AliasedBy(LocalId),
    AssignedTo(LocalId),
    KeyInMap,
    DependsOnItself,
    /// Bound by a `let` a fused pipeline reads through: natively its list
    /// is never built (its init runs where the pipeline does).
    FusedThroughLet,
    /// Viewed by `method` (into the name `view`), and the view escapes
    /// (the offset given with this reason is where the view escapes).
    ViewEscapes {
        method: Method,
        view: Option<LocalId>,
        why: Box<NotOwned>,
    },
}

/// Why a drop form frees what it frees (`emit drops` prints it beside
/// the drop).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropReason {
    LastUse {
        local: LocalId,
        deep: bool,
    },
    Temp {
        reader: Reader,
        deep: bool,
    },
    BuilderPiece(LocalId),
    /// The last use of an owned-deep cell: its whole tree is freed.
    CellLastUse(LocalId),
    /// An owned-deep cell handed on or shared on other paths, none of
    /// which this one reaches: its whole tree is freed here.
    CellOtherPath(LocalId),
    /// A destructive match took the cell apart and no constructor of its
    /// size class in the arm takes its block.
    TokenFreed(LocalId),
    /// A destructive match took the cell apart; constructors on other
    /// paths through the arm take its block, none on this one.
    TokenFreedOnPath(LocalId),
    /// Not a free: the reused cell's fields are cleared, since the arm may
    /// free or reuse them before its constructor overwrites the block.
    Cleared(LocalId),
    /// The arm's pattern is `_`: the owned-deep value dies whole.
    DeadValue(LocalId),
    /// A field of the owned-deep cell given, bound to `_` or never used.
    DeadField(LocalId),
    /// An owned-deep cell never named, freed whole after the read given
    /// (a borrowing parameter, print, interpolation, comparison).
    CellTemp(Reader),
    /// The last use of a unique cell that is not owned deep: its own
    /// block is freed, its fields are left alone.
    CellShallow(LocalId),
    /// A unique cell nobody names, not owned deep, freed (its block only)
    /// after the read given.
    CellTempShallow(Reader),
    /// The last use of a local closure that is only called: its block is
    /// freed, what it captured is left alone.
    ClosureLastUse(LocalId),
    /// The cell's block is reused by the constructor given.
    Reused {
        local: LocalId,
        by: ir::ExprId,
    },
    /// Not a free: the cell's block is handed to the call given, whose
    /// `#token` version builds a constructor of its size class in it.
    TokenPassed {
        local: LocalId,
        call: ir::ExprId,
    },
    /// The reuse token a caller handed on (a `#token` version's last
    /// parameter): no constructor of its size class on this path.
    HandedTokenFreed(LocalId),
    /// Not a free: a `set` writes into its receiver's buffer
    /// ([`ir::ExprKind::SetInPlace`]), for the reason given.
    SetInPlace(InPlace),
    /// Not a free: the old value of an owned-deep var, read only within
    /// its update (`moved`: but for fields moved into the new value),
    /// gives its block to the constructor given.
    UpdateReused {
        local: LocalId,
        by: ir::ExprId,
        moved: bool,
    },
    /// The old value of an owned-deep var, read only within its update,
    /// freed deep once the new value exists (not reused, for the reason
    /// given).
    UpdateFreed {
        local: LocalId,
        /// Its whole tree; else its block only (some fields moved into the
        /// new value).
        deep: bool,
        why: crate::cells::NoReuse,
    },
}

/// How `xs.set(i, v)` makes its result: the decision for one call site.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SetMode {
    InPlace(InPlace),
    Copy(SetCopy),
}

/// Why a `set` may write into its receiver's buffer: the receiver is a
/// whole list nothing else refers to, and nothing reads it afterwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InPlace {
    /// A local that owns its block, at its last use (which is not inside
    /// a loop or a branch of the statement that makes it).
    LastUse(LocalId),
    /// `x := x.set(..)` of an owned var: the old value is replaced.
    Replaced(LocalId),
    /// A new list no name holds (`make().set(0, 1)`).
    Temp,
}

/// Why a `set` copies its receiver.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SetCopy {
    /// The local owns its block, but is used again at the offset given.
    ReadLater { local: LocalId, at: u32 },
    /// A view of the local (`view`, when bound to a name) is read later.
    ViewReadLater {
        local: LocalId,
        view: Option<LocalId>,
        at: u32,
    },
    /// The set runs in a loop and the local (declared at the offset given)
    /// lives outside it: the next iteration reads it again.
    InLoop { local: LocalId, at: u32 },
    /// The set is on one path of the statement at the offset given; the
    /// local is freed after that statement on every path.
    OnOnePath { local: LocalId, at: u32 },
    /// The local is assigned in the statement of the set (at the offset).
    AssignedThere { local: LocalId, at: u32 },
    /// A parameter: the caller keeps the list.
    Borrowed(LocalId),
    /// Bound by a pattern: part of another value.
    PartOf(LocalId),
    /// The local is not the only owner of its block.
    Shared {
        local: LocalId,
        why: NotOwned,
        at: u32,
    },
    /// The receiver is not a name and not a new list.
    NotFresh(NotFresh),
}

/// What renders reasons: names and positions of the analysed program.
#[derive(Clone, Copy)]
pub struct Cx<'a> {
    pub program: &'a Program,
    pub summaries: &'a [Summary],
}

/// How deep a chain of callee reasons is followed when rendered.
const MAX_DEPTH: u32 = 8;

impl Cx<'_> {
    pub fn pos(&self, at: u32) -> String {
        let (l, c) = self.program.line_col(at);
        format!("{l}:{c}")
    }

    fn local_def(&self, f: FnId, l: LocalId) -> Option<&ir::Local> {
        let b = self.program.bodies.get(f.into_raw().into_u32() as usize)?;
        ((l.into_raw().into_u32() as usize) < b.locals.len()).then(|| &b.locals[l])
    }

    pub fn local(&self, f: FnId, l: LocalId) -> &str {
        self.local_def(f, l).map_or("?", |x| x.name.as_str())
    }

    fn local_kind(&self, f: FnId, l: LocalId) -> Option<ir::LocalKind> {
        self.local_def(f, l).map(|x| x.kind)
    }

    pub fn fn_name(&self, f: FnId) -> &str {
        &self.program.items.fns[f].name
    }

    fn summary(&self, f: FnId) -> Option<&Summary> {
        self.summaries.get(f.into_raw().into_u32() as usize)
    }

    pub fn reader(&self, r: Reader) -> String {
        match r {
            Reader::Interpolation => "interpolation".into(),
            Reader::Binary(op) => op.symbol().into(),
            Reader::Unary => "an operator".into(),
            Reader::Call(f) => format!("{}()", self.fn_name(f)),
            Reader::Builtin(b) => format!("{}()", b.name()),
            Reader::CallOfValue => "a call".into(),
            Reader::Method(m) => m.name().into(),
            Reader::Indexing => "indexing".into(),
            Reader::Field => "a field".into(),
            Reader::Range => "a range".into(),
            Reader::Condition => "a condition".into(),
            Reader::DiscardedLet => "a discarded let".into(),
            Reader::DiscardedValue => "a discarded value".into(),
            Reader::For => "for".into(),
            Reader::Loop => "a loop".into(),
            Reader::Put => "put".into(),
            Reader::Builder => "a string builder".into(),
            Reader::Pipeline => "the fused pipeline".into(),
        }
    }

    pub fn escape(&self, e: Escape, depth: u32) -> String {
        match e {
            Escape::PassedTo { f, param } => {
                let pname = self.program.items.fns[f]
                    .params
                    .get(param as usize)
                    .map(|p| p.0.as_str())
                    .unwrap_or("?");
                let head = format!(
                    "passed to {}(), whose parameter {pname} escapes",
                    self.fn_name(f)
                );
                // One level of the callee's reason keeps the chain short.
                if depth > 0 {
                    return head;
                }
                let why = self
                    .summary(f)
                    .and_then(|s| s.why_not_borrowed.get(param as usize).copied().flatten())
                    .map(|u| self.param_use(f, u, depth + 1))
                    .unwrap_or_else(|| "it keeps it".into());
                format!("{head} ({why})")
            }
            Escape::PassedToValue => "passed to a function value".into(),
            Escape::ViewedBy(m) => format!("viewed by {}", m.name()),
            Escape::Kept(k) => match k {
                Keep::PushedElement => "stored in a list by push",
                Keep::SetElement => "stored in a list by set",
                Keep::FoldInit => "the initial accumulator of fold",
                Keep::MapValue => "stored in a map",
                Keep::GetOrDefault => "the default of get_or",
                Keep::UnwrapOrDefault => "the default of unwrap_or",
                Keep::Argument => "an argument",
            }
            .into(),
            Escape::SharedBy(m) => format!("shared by {}", m.name()),
            Escape::StoredInField { ty, field } => {
                let t = &self.program.items.types[ty];
                let fname = match &t.kind {
                    TypeDefKind::Record { fields } => fields
                        .get(field as usize)
                        .map(|f| f.0.as_str())
                        .unwrap_or(""),
                    TypeDefKind::Sum { .. } => "",
                };
                format!("stored into {}.{fname}", t.name)
            }
            Escape::StoredInTuple => "stored in a tuple".into(),
            Escape::StoredInCtor(c) => {
                format!("stored in {}(..)", ctor_name(&self.program.items, c))
            }
            Escape::StoredInList => "stored in a list".into(),
            Escape::ReturnedFromClosure => "returned from a closure".into(),
            Escape::Matched => "matched on".into(),
            Escape::Destructured => "destructured".into(),
            Escape::ConsumedKey => "a consumed key".into(),
            Escape::StoredInMap => "stored in a map".into(),
            Escape::CapturedByClosure => "captured by a closure".into(),
        }
    }

    /// `"<use> at L:C"`, the use inside function `f`.
    pub fn param_use(&self, f: FnId, u: ParamUse, depth: u32) -> String {
        let w = match u.kind {
            ParamUseKind::InClosure => "used inside a closure".into(),
            ParamUseKind::Returned => "returned".into(),
            ParamUseKind::Escapes(e @ Escape::PassedTo { .. }) if depth > 0 => {
                // Nested: the callee's own chain is left out, position too.
                return self.escape(e, depth);
            }
            ParamUseKind::Escapes(e) => self.escape(e, depth),
            ParamUseKind::AliasedBy(y) => format!("aliased by {}", self.local(f, y)),
            ParamUseKind::AssignedTo(y) => format!("assigned to {}", self.local(f, y)),
            ParamUseKind::GrownByPush => "grown by push".into(),
            ParamUseKind::KeyInMap => "stored in a map as a key".into(),
        };
        format!("{w} at {}", self.pos(u.at))
    }

    pub fn shared_result(&self, s: SharedResult) -> String {
        match s {
            SharedResult::ElementOfList => "an element of a list".into(),
            SharedResult::Grown(m) => format!("a list that may share the buffer ({})", m.name()),
            SharedResult::View(m) => format!("a view ({})", m.name()),
            SharedResult::FoldResult => "what fold's function returns".into(),
            SharedResult::MapValue => "a map value".into(),
            SharedResult::OptionPayload => "the payload of an option".into(),
        }
    }

    /// Why the result of `f` is not fresh, or None when it is.
    pub fn result_not_fresh(&self, f: FnId, depth: u32) -> Option<String> {
        let why = self.summary(f)?.why_not_fresh.as_ref()?;
        Some(match why {
            ResultNotFresh::NotListOrString => "does not return a list or string".into(),
            ResultNotFresh::Returns(nf) => format!("returns {}", self.not_fresh(f, nf, depth)),
        })
    }

    pub fn not_fresh(&self, f: FnId, nf: &NotFresh, depth: u32) -> String {
        match nf {
            NotFresh::NotListOrString => "not a list or string".into(),
            NotFresh::Shared { what, of } => {
                let of = match of {
                    Some(l) => {
                        let is_param = self.local_kind(f, *l) == Some(ir::LocalKind::Param);
                        let name = self.local(f, *l);
                        if is_param {
                            format!(" of its parameter {name}")
                        } else {
                            format!(" of {name}")
                        }
                    }
                    None => String::new(),
                };
                format!("{}{of}", self.shared_result(*what))
            }
            NotFresh::FnResult(g) => {
                let why = if depth >= MAX_DEPTH {
                    None
                } else {
                    self.result_not_fresh(*g, depth + 1)
                };
                format!(
                    "the result of {}(), which {}",
                    self.fn_name(*g),
                    why.unwrap_or_else(|| "does not return a fresh value".into())
                )
            }
            NotFresh::UnknownFn => "unknown function".into(),
            NotFresh::BuiltinResult(b) => format!("the result of {}()", b.name()),
            NotFresh::FnValueResult => "the result of a call through a function value".into(),
            NotFresh::IfWithoutElse => "an if without else".into(),
            NotFresh::Branch(inner) => {
                // Nested branches say it once.
                let mut inner = inner.as_ref();
                while let NotFresh::Branch(i) = inner {
                    inner = i;
                }
                format!(
                    "a branch that is not fresh: {}",
                    self.not_fresh(f, inner, depth)
                )
            }
            NotFresh::BlockWithoutValue => "a block without a value".into(),
            NotFresh::Param(l) => format!("its parameter {}", self.local(f, *l)),
            NotFresh::PartOf(l) => format!("{}, a part of another value", self.local(f, *l)),
            NotFresh::LastValueEscaped { local, why, at } => format!(
                "{name}, whose last value {} at {}",
                self.not_owned(f, why, depth),
                self.pos(*at),
                name = self.local(f, *local),
            ),
            NotFresh::NotOnlyOwner { local, why, at } => format!(
                "{}, which is not the only owner ({} at {})",
                self.local(f, *local),
                self.not_owned(f, why, depth),
                self.pos(*at)
            ),
            NotFresh::AnotherName(l) => {
                format!("{}, another name for the value", self.local(f, *l))
            }
            NotFresh::NotNew => "not a new list or string".into(),
        }
    }

    pub fn not_owned(&self, f: FnId, n: &NotOwned, depth: u32) -> String {
        match n {
            NotOwned::Unknown => "unknown".into(),
            NotOwned::NotLetOrVar => "not a let or var".into(),
            NotOwned::NotListOrString => "not a list or string".into(),
            NotOwned::Holds(nf) => format!("holds {}", self.not_fresh(f, nf, depth)),
            NotOwned::AssignedInForOverIt => "is assigned inside a for over it".into(),
            NotOwned::AssignedInExpression => "is assigned inside an expression".into(),
            NotOwned::AssignedNotFresh(nf) => {
                format!("is assigned {}", self.not_fresh(f, nf, depth))
            }
            NotOwned::InClosure => "is used inside a closure".into(),
            NotOwned::Escapes(e) => format!("is {}", self.escape(*e, depth)),
            NotOwned::AliasedBy(y) => format!("is aliased by {}", self.local(f, *y)),
            NotOwned::AssignedTo(y) => format!("is assigned to {}", self.local(f, *y)),
            NotOwned::KeyInMap => "is stored in a map as a key".into(),
            NotOwned::DependsOnItself => "depends on itself".into(),
            NotOwned::FusedThroughLet => {
                "is never built: a fused pipeline reads through its let".into()
            }
            NotOwned::ViewEscapes { method, view, why } => {
                let why = self.not_owned(f, why, depth);
                // "is stored ..." reads as "which is stored ...".
                match view {
                    Some(v) => format!(
                        "is viewed by {} into {}, which {why}",
                        method.name(),
                        self.local(f, *v)
                    ),
                    None => format!("is viewed by {}, which {why}", method.name()),
                }
            }
        }
    }

    pub fn drop_reason(&self, f: FnId, r: DropReason) -> String {
        let owns = |deep: bool| if deep { ", with its strings" } else { "" };
        match r {
            DropReason::LastUse { local, deep } => {
                format!("last use of {}{}", self.local(f, local), owns(deep))
            }
            DropReason::Temp { reader, deep } => {
                format!("temporary read by {}{}", self.reader(reader), owns(deep))
            }
            DropReason::BuilderPiece(l) => {
                format!("temporary appended to the builder {}", self.local(f, l))
            }
            DropReason::CellLastUse(l) => {
                format!(
                    "last use of {}, owned deep: its whole tree",
                    self.local(f, l)
                )
            }
            DropReason::CellOtherPath(l) => format!(
                "{} is handed on or shared on other paths only, owned deep: its whole tree",
                self.local(f, l)
            ),
            DropReason::CellTemp(reader) => format!(
                "temporary read by {}, owned deep: its whole tree",
                self.reader(reader)
            ),
            DropReason::CellShallow(l) => format!(
                "last use of {}, unique: its block only, its fields are shared",
                self.local(f, l)
            ),
            DropReason::CellTempShallow(reader) => format!(
                "temporary read by {}, unique: its block only, its fields are shared",
                self.reader(reader)
            ),
            DropReason::ClosureLastUse(l) => format!(
                "last use of {}, a closure only called: its block only, not what it captured",
                self.local(f, l)
            ),
            DropReason::TokenFreed(l) => format!(
                "{} taken apart by the match; no constructor of its size in this arm",
                self.local(f, l)
            ),
            DropReason::TokenFreedOnPath(l) => format!(
                "{} taken apart by the match; no constructor of its size on this path",
                self.local(f, l)
            ),
            DropReason::Cleared(l) => format!(
                "{} is reused later in the arm; its fields may be freed first",
                self.local(f, l)
            ),
            DropReason::DeadValue(l) => {
                format!("{} dies here: the pattern is _", self.local(f, l))
            }
            DropReason::DeadField(l) => {
                format!("a field of {} that the arm never uses", self.local(f, l))
            }
            DropReason::SetInPlace(w) => self.set_mode(f, &SetMode::InPlace(w)),
            DropReason::Reused { local, by } => format!(
                "{} reused by {} at {}",
                self.local(f, local),
                self.site_name(f, by),
                self.pos(self.program.source_map(f).expr(by).start)
            ),
            DropReason::TokenPassed { local, call } => format!(
                "{} handed to the call at {}, which builds in its block",
                self.local(f, local),
                self.pos(self.program.source_map(f).expr(call).start)
            ),
            DropReason::UpdateReused { local, by, moved } => format!(
                "reused by {} at {}: the old value of {} {}",
                self.site_name(f, by),
                self.pos(self.program.source_map(f).expr(by).start),
                self.local(f, local),
                if moved {
                    "moves fields into the new one and is otherwise read only within its update"
                } else {
                    "is read only within its update"
                }
            ),
            DropReason::UpdateFreed {
                local,
                deep: true,
                why,
            } => format!(
                "the old value of {} is read only within its update, owned deep: its whole tree ({})",
                self.local(f, local),
                self.no_reuse(why)
            ),
            DropReason::UpdateFreed {
                local,
                deep: false,
                why,
            } => format!(
                "the old value of {} moves fields into the new one and is otherwise read only within its update: its block only ({})",
                self.local(f, local),
                self.no_reuse(why)
            ),
            DropReason::HandedTokenFreed(l) => format!(
                "{} (a block the caller handed on): no constructor of its size on this path",
                self.local(f, l)
            ),
        }
    }

    /// `set in place: xs is owned and dies here`, `set copies: xs is read
    /// later at 7:5`, ...
    pub fn set_mode(&self, f: FnId, m: &SetMode) -> String {
        let local = |l: LocalId| self.local(f, l).to_string();
        match m {
            SetMode::InPlace(w) => match w {
                InPlace::LastUse(x) => {
                    format!("set in place: {} is owned and dies here", local(*x))
                }
                InPlace::Replaced(x) => format!(
                    "set in place: {} is owned and its old value is replaced here",
                    local(*x)
                ),
                InPlace::Temp => "set in place: the list is new and nothing else holds it".into(),
            },
            SetMode::Copy(c) => {
                let why = match c {
                    SetCopy::ReadLater { local: x, at } => {
                        format!("{} is read later at {}", local(*x), self.pos(*at))
                    }
                    SetCopy::ViewReadLater { local: x, view, at } => match view {
                        Some(v) => format!(
                            "{} is viewed by {}, which is read later at {}",
                            local(*x),
                            local(*v),
                            self.pos(*at)
                        ),
                        None => format!(
                            "a view of {} is read later at {}",
                            local(*x),
                            self.pos(*at)
                        ),
                    },
                    SetCopy::InLoop { local: x, at } => format!(
                        "{} (declared at {}) lives outside the loop the set runs in: the next iteration reads it again",
                        local(*x),
                        self.pos(*at)
                    ),
                    SetCopy::OnOnePath { local: x, at } => format!(
                        "the set is on one path of the statement at {}, and {} is freed after it on every path",
                        self.pos(*at),
                        local(*x)
                    ),
                    SetCopy::AssignedThere { local: x, at } => format!(
                        "{} is assigned in the same statement at {}",
                        local(*x),
                        self.pos(*at)
                    ),
                    SetCopy::Borrowed(x) => format!(
                        "{} is borrowed (a parameter: the caller keeps the list)",
                        local(*x)
                    ),
                    SetCopy::PartOf(x) => format!(
                        "shared: {} is bound by a pattern, part of another value",
                        local(*x)
                    ),
                    SetCopy::Shared { local: x, why, at } => format!(
                        "shared: {} {} at {}",
                        local(*x),
                        self.not_owned(f, why, 0),
                        self.pos(*at)
                    ),
                    SetCopy::NotFresh(NotFresh::NotNew) => {
                        "shared: the list is read out of another value".into()
                    }
                    SetCopy::NotFresh(nf) => {
                        format!("shared: the list is {}", self.not_fresh(f, nf, 0))
                    }
                };
                format!("set copies: {why}")
            }
        }
    }

    /// What a constructor expression builds: `Node`, `record Sale`, `tuple`.
    pub(crate) fn site_name(&self, f: FnId, e: ir::ExprId) -> String {
        let Some(b) = self.program.bodies.get(f.into_raw().into_u32() as usize) else {
            return "?".into();
        };
        match &b[e].kind {
            ir::ExprKind::Ctor { ctor, .. } => ctor_name(&self.program.items, *ctor),
            ir::ExprKind::Record { ty, .. } => {
                format!("record {}", self.program.items.types[*ty].name)
            }
            _ => "tuple".into(),
        }
    }

    /// `ins#owning: every owned argument is owned deep and dies here`,
    /// `ins (sharing version): argument l is ...`.
    pub fn call_choice(&self, f: FnId, g: FnId, c: &crate::cells::CallChoice) -> String {
        use crate::cells::CallChoice as C;
        match c {
            C::Owning => format!(
                "{}#owning: every argument it owns is owned deep and dies here",
                self.fn_name(g)
            ),
            C::Sharing { param, arg, why } => {
                let p = self.program.items.fns[g]
                    .params
                    .get(*param as usize)
                    .map_or("?", |p| p.0.as_str());
                let name = match arg {
                    Some(l) => self.local(f, *l).to_string(),
                    None => format!("for {p}"),
                };
                format!(
                    "{} (sharing version): argument {name} is not owned deep here: {}",
                    self.fn_name(g),
                    self.shared(*why)
                )
            }
        }
    }

    /// Why a value is not owned deep or a use is not a borrow.
    /// Why an update frees the old value rather than building in it.
    pub fn no_reuse(&self, w: crate::cells::NoReuse) -> String {
        use crate::cells::NoReuse as N;
        match w {
            N::Sizes => "not reused: its values differ in size".into(),
            N::FieldsHoldBlocks => "not reused: its fields may hold blocks".into(),
            N::NoCtor => "not reused: no constructor of its size in the update".into(),
            N::ReadAfterCtor(at) => format!(
                "not reused: read at {} once the constructor of its size is built",
                self.pos(at)
            ),
            N::CtorTaken => "not reused: the constructor of its size reuses another block".into(),
            N::MayLeave(at) => format!(
                "not reused: the update may be left at {} once the constructor is built",
                self.pos(at)
            ),
        }
    }

    pub fn shared(&self, s: crate::cells::Shared) -> String {
        use crate::cells::Shared as S;
        match s {
            S::TypeNotDeep => "its type holds a map, closure or builder".into(),
            S::NotNew => "not a new value".into(),
            S::FieldNotOwned => "a string or list field that is a name, a view or not fresh".into(),
            S::FnResult(g) => format!("{}() does not return an owned-deep value", self.fn_name(g)),
            S::Param => "a parameter (borrowed)".into(),
            S::PartOf => "holds a value bound by a pattern (a binding owns nothing)".into(),
            S::NamedWhole(at) => format!(
                "shared: a match arm names the whole value at {}",
                self.pos(at)
            ),
            S::UsedTwice(a, b) => {
                format!("shared: used twice ({} and {})", self.pos(a), self.pos(b))
            }
            S::ConsumedInLoop(at) => format!("shared: consumed in a loop at {}", self.pos(at)),
            S::InClosure(at) => format!("shared: used in a closure at {}", self.pos(at)),
            S::Escapes(e, at) => format!("shared: {} at {}", self.escape(e, 0), self.pos(at)),
            S::PassedTo { f: g, param, at } => format!(
                "shared: passed to {}() at {}, whose parameter {} keeps a part of it",
                self.fn_name(g),
                self.pos(at),
                param + 1
            ),
            S::PartEscapes(at) => format!("shared: a part of it may be kept at {}", self.pos(at)),
            S::Var => "a var".into(),
            S::Cycle => "its decision depends on itself".into(),
            S::HandedOn(at) => format!("handed on as its block's value at {}", self.pos(at)),
            S::KeptWhole(at) => format!(
                "a part of a value its arm hands on whole at {} (dropped with it)",
                self.pos(at)
            ),
            S::SharedAfterUpdates(at) => format!(
                "its last value is shared at {} (after every update)",
                self.pos(at)
            ),
            S::LentAcrossUpdate(e, c) => format!(
                "shared: what it lends is used at {} after the update at {} consumes it",
                self.pos(e),
                self.pos(c)
            ),
            S::LeftEarly(at) => format!(
                "an update consuming it may be left at {} with the var naming what it consumed",
                self.pos(at)
            ),
            S::BeforeReuse(at) => format!(
                "shared: handed on at {} before the block it came from is reused",
                self.pos(at)
            ),
        }
    }
}
