//! Unique cells: records, tuples, sum values and `Some` that the analysis
//! proves *owned deep* (the value and every block reachable from it have
//! one reference, the owner's), freed whole at the owner's last use or
//! taken apart by a destructive `match` whose block a constructor in the
//! arm reuses. Static only: no count, no runtime test.
//!
//! Rules (each decision carries its reason, rendered by `explain`):
//! - An expression is owned deep when it is a constructor whose non-scalar
//!   fields are owned deep (strings: fresh and not a name; lists: fresh, of
//!   scalars, not a name), a nullary constructor or `None` (static), a call
//!   of a function whose result is owned deep, an `if`/`match`/block whose
//!   every value is, or the consuming use of an owned-deep local.
//! - A `let` local holding an owned-deep value stays owned while its uses
//!   are borrows (below) followed by at most one consuming use (stored in a
//!   constructor, returned or given as the block's value, or matched), in a
//!   later statement of its block than every borrow and outside any loop.
//! - A borrow keeps nothing of the value: a field read whose result is a
//!   scalar or is itself only borrowed, an argument of a parameter that
//!   borrows deep (summary), comparison, interpolation, print, a `match`
//!   whose bindings are only borrowed, a `let` alias only borrowed. The
//!   owner lives until the last use of anything borrowed from it.
//! - With no consuming use the local is dropped deep after its last use
//!   (or the last use of a borrow of it).
//! - A `match` that consumes an owned-deep local takes it apart: the arm's
//!   bindings get its fields, fields bound to `_` are dropped deep at the
//!   start of the arm, and the block is a reuse token: the first
//!   constructor of the same size class on the arm's straight-line path
//!   (not under a loop or lambda) is built in it; where there is none and
//!   the arm's value is an `if` or a `match` (through block tails), the
//!   first one on each branch's path is, at most one per path, and a
//!   branch with none frees the token at its start (`Takers`). A path
//!   with no constructor whose value is a direct call of a version that
//!   takes a token of the class (`TokenTable`) hands the token to it: the
//!   call runs that version's `#token` variant, whose last parameter is
//!   the token, given to the first constructor of its class each path
//!   leaves after the variant's own tokens, or handed on again, or freed
//!   at the start of the paths with none (`hand_token`). With no
//!   constructor on any path the token is freed at the start of the arm.
//!   An arm whose pattern is `_` drops the whole value deep; an arm
//!   binding the whole value keeps it.
//! - Parameters: a cell parameter *borrows deep* when every use of it is
//!   a borrow; a function's result is *owned deep* when every value it
//!   returns is. Both join today's summaries in the same greatest fixpoint.
//! - Owning versions: a cell parameter that the body does not borrow deep
//!   but could consume (treated as an owned-deep local from the body's
//!   start, it passes the rules above) is *owned* by the function's owning
//!   version, which takes it apart, reuses its blocks and drops it. The
//!   summary says which parameters the owning version owns and whether its
//!   result is owned deep, from the same fixpoint. A direct call runs the
//!   owning version when the argument of every owned parameter is owned
//!   deep and dies at the call (`CallChoice::Owning`), the sharing version
//!   otherwise (with the argument and the reason); a use given to an owned
//!   parameter is a consuming use. The versions are separate functions of
//!   the analysed program (`ins#owning`), made only where some call runs
//!   them. Calls through function values run the sharing version.
//! - Var updates: an update that moves the old value into the new one
//!   (`l := Cons(i, l)`, `t := ins(t, k)`) consumes it. One that only
//!   reads it (borrows whose loans end within the update) or moves some of
//!   its fields into the new value (`s := R { f: s.f, .. }`, stored through
//!   constructors) leaves it dead once the new value exists: the first
//!   constructor of its size class on the update's straight-line path is
//!   built in its block when the var's values are all blocks of that class
//!   (with no field holding a block, unless fields move), everything lent
//!   is done before it and nothing can leave the update; else the old
//!   value is freed (deep, or its block alone when fields moved) after the
//!   assignment (`OldEnd`, per update). What a borrow lends is done before
//!   an update frees or consumes the value it read, else that update
//!   leaves the value to the collector; a loop around the update and the
//!   loan's use that the borrow was made before runs the use again after
//!   it. The last value lives until the last update too.
//! - Consuming uses may be several when they are on different paths (the
//!   branches of an `if`, the arms of a `match`); a read is done before a
//!   consuming use when evaluation finishes it first (an earlier statement,
//!   an earlier operand, an `if`'s condition, a `match`'s scrutinee). A
//!   destructive match may hand the value on whole in an arm that binds
//!   nothing (`_ => t`): that arm leaves the block alone.
//! - Nested patterns: a cell a nested pattern takes apart is named
//!   (`cell @ Node(..)`, made before the analysis) and is a token too,
//!   given constructors after the match's own token. A token's block points
//!   at its fields until its constructor overwrites it: when the arm may
//!   free or reuse one of them first (a nested token, a field given to an
//!   owning version, taken apart or returned early), the arm clears the
//!   reused tokens' fields at its start (`StmtKind::Clear`), so no block
//!   the program can reach points at a freed one.
//! - Values captured by closures, stored in maps or lists, passed through
//!   function values or to parameters that keep them are shared: the
//!   collector's.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use ir::{
    BinOp, Builtin, Callee, Ctor, ExprId, ExprKind, ItemTree, LocalId, PatId, PatKind, Ty,
    TypeDefKind,
};

use crate::decide::Decider;
use crate::reason::{Escape, Reader};
use crate::walk::{Ctx, Use};

/// Why a value is not owned deep or a use is not a borrow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shared {
    /// The type holds a map, closure or builder (no descriptor walk).
    TypeNotDeep,
    /// Not a constructor, owned-deep call or owned local.
    NotNew,
    /// A string or list field that is a name, a view or not fresh.
    FieldNotOwned,
    /// Calls a function whose result is not owned deep.
    FnResult(ir::FnId),
    /// A parameter: only borrowed by this function.
    Param,
    /// A pattern binding of a match that does not take its value apart.
    PartOf,
    /// Used twice where one use consumes (the two offsets).
    UsedTwice(u32, u32),
    /// Consumed inside a loop.
    ConsumedInLoop(u32),
    /// Used inside a closure.
    InClosure(u32),
    /// Kept by what is named, at an offset.
    Escapes(Escape, u32),
    /// Passed to parameter `param` of `f`, which does not borrow it deep.
    PassedTo { f: ir::FnId, param: u32, at: u32 },
    /// Read by something whose result may hold a part of it.
    PartEscapes(u32),
    /// A `var` (its updates are not followed yet).
    Var,
    /// Its decision depends on itself.
    Cycle,
    /// A field taken apart (at the offset) before the block it came from
    /// is reused.
    BeforeReuse(u32),
    /// Handed on (at the offset) as the value of its block or arm.
    HandedOn(u32),
    /// A binding of a match whose arm hands the matched value on whole
    /// (at the offset) on another path: never dropped by itself.
    KeptWhole(u32),
    /// A var's last value, shared (at the offset) after every update:
    /// each update still consumes the value before it.
    SharedAfterUpdates(u32),
    /// Lent (the borrow ends at the first offset) across an update that
    /// consumes the value (at the second).
    LentAcrossUpdate(u32, u32),
    /// Matched by an arm that names the whole value (at the offset): a
    /// second reference to its block.
    NamedWhole(u32),
    /// A var whose update consumes it may be left (a `break` or
    /// `continue` at the offset) with the var still naming the value.
    LeftEarly(u32),
}

/// How an owned-deep local ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellEnd {
    /// Dropped deep after statement `index` of its block; `at` is the last use.
    DropDeep { index: usize, at: u32 },
    /// Consumed by the use at `at` (stored, returned, moved out).
    Moved { at: u32 },
    /// Taken apart by the match given.
    Matched { m: ExprId, at: u32 },
    /// Shared by the use at `at` (stored where nothing frees it) on some
    /// paths, and dropped deep on the paths that reach no such use.
    SharedOnPath { at: u32 },
    /// A var whose updates each consume the value before it (`t :=
    /// ins(t, k)`), and whose last value is shared by the use at `at`
    /// after every update: left for the collector.
    Kept { at: u32 },
}

/// What an update `x := v` of an owned-deep var does with the value it
/// replaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OldEnd {
    /// Moved into the new value (`x := Cons(.., x)`, `x := f(x)`).
    MovedIn,
    /// Read only within the update (`moved`: but for fields moved into
    /// the new value): the constructor given is built in its block.
    Reused { by: ExprId, moved: bool },
    /// Read only within the update: freed deep once the new value exists
    /// (and why its block is not reused).
    Freed(NoReuse),
    /// Some of its fields move into the new value, the others are only
    /// read within the update: its block alone is freed once the new value
    /// exists (and why it is not reused).
    FreedBlock(NoReuse),
    /// Left to the collector: what it lent is used after the update.
    Kept(Shared),
}

/// Why the old value of a var, read only within its update, is freed
/// rather than built into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NoReuse {
    /// Its type's values differ in size (variants) or may be static data.
    Sizes,
    /// Its fields may hold blocks, which a reuse would leave to the
    /// collector.
    FieldsHoldBlocks,
    /// No constructor of its size class on the update's straight-line path.
    NoCtor,
    /// Read (at the offset) once the constructor of its class is built.
    ReadAfterCtor(u32),
    /// That constructor builds in another token's block.
    CtorTaken,
    /// The update may be left before it assigns (a `return`, `break` or
    /// `continue` at the offset).
    MayLeave(u32),
}

/// One update of an owned-deep var and what it does with the old value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Update {
    pub stmt: ir::StmtId,
    pub value: ExprId,
    /// The assignment's offset.
    pub at: u32,
    pub old: OldEnd,
}

/// Where a reuse token goes in an arm: the constructors of its size class
/// built in its block, at most one on each path through the arm, and the
/// branches (an `if`'s or a nested `match`'s) at whose start it is freed,
/// on the paths where no constructor takes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Takers {
    pub ctors: Vec<ExprId>,
    pub frees: Vec<ExprId>,
    /// The token's size class.
    pub class: usize,
}

/// Where a local handed on or shared on some paths only is dropped deep
/// on the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathDrop {
    /// At the start of this branch (of an `if` or `match`), which uses
    /// nothing of it.
    Start(ExprId),
    /// In an `else` added to this `if`, which has none.
    Else(ExprId),
    /// After statement `index` of this branch's block (its last use there).
    After(ExprId, usize),
    /// Once this branch (not a block) has made its value.
    End(ExprId),
}

/// One arm of a destructive match.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArmPlan {
    /// The constructors built in the token's block.
    pub reuse: Option<Takers>,
    /// The token is freed at the start of the arm (no constructor took it).
    pub free_token: bool,
    /// The whole value dies at the start of the arm (pattern `_`).
    pub drop_whole: bool,
    /// Field patterns `_` whose values die at the start of the arm.
    pub dead_fields: Vec<PatId>,
    /// Field bindings the arm never uses: they die at its start too.
    pub dead_binds: Vec<LocalId>,
    /// Cells a nested pattern takes apart (`cell @ Node(..)`): each is
    /// reused by the constructors given or freed at the start of the arm.
    pub nested: Vec<(LocalId, Option<Takers>)>,
    /// Tokens of the arm that a constructor reuses and whose fields are
    /// cleared at the start of the arm (with the pattern that took each
    /// apart): a field may be freed or reused (given to an owning call,
    /// taken apart, a nested token) before the token's constructor
    /// overwrites the block, which must not point at it meanwhile.
    pub clear: Vec<(LocalId, PatId)>,
    /// The arm hands the value on whole on some paths: it takes it apart
    /// on the others only, where its tokens' fields are cleared.
    pub kept: bool,
    /// In a kept arm, per token: the starts of the paths (branches) that
    /// do not hand the value on and build in the token.
    pub roots: Vec<(LocalId, Vec<ExprId>)>,
}

/// A destructive match of an owned-deep local.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchPlan {
    pub token: LocalId,
    pub arms: Vec<ArmPlan>,
}

pub fn is_scalar(ty: &Ty) -> bool {
    matches!(ty, Ty::Int | Ty::F64 | Ty::Bool | Ty::Unit | Ty::Never)
}

/// A record, tuple, sum value or option: one word pointing at a block (or
/// at static data for nullary constructors and `None`).
pub fn is_cell(ty: &Ty) -> bool {
    matches!(ty, Ty::Adt(_) | Ty::Tuple(_) | Ty::Option(_))
}

/// A sum type whose constructors all take no fields (`Red | Black`): its
/// values are static data, never a block, so there is nothing to drop.
pub fn never_block(items: &ItemTree, ty: &Ty) -> bool {
    match ty {
        Ty::Adt(t) => match &items.types[*t].kind {
            TypeDefKind::Sum { variants } => variants.iter().all(|v| v.fields.is_empty()),
            TypeDefKind::Record { .. } => false,
        },
        _ => false,
    }
}

/// Whether the runtime can free a value of `ty` through the type table:
/// scalars, strings, lists and cells of those (no map, closure, builder).
pub fn deep_type(items: &ItemTree, ty: &Ty) -> bool {
    fn go(items: &ItemTree, ty: &Ty, seen: &mut HashSet<ir::TypeId>) -> bool {
        match ty {
            Ty::Int | Ty::F64 | Ty::Bool | Ty::Unit | Ty::Never | Ty::Str => true,
            Ty::List(e) | Ty::Option(e) => go(items, e, seen),
            Ty::Tuple(es) => es.iter().all(|e| go(items, e, seen)),
            Ty::Adt(t) => {
                if !seen.insert(*t) {
                    return true;
                }
                match &items.types[*t].kind {
                    TypeDefKind::Record { fields } => fields.iter().all(|f| go(items, &f.1, seen)),
                    TypeDefKind::Sum { variants } => variants
                        .iter()
                        .all(|v| v.fields.iter().all(|f| go(items, f, seen))),
                }
            }
            _ => false,
        }
    }
    go(items, ty, &mut HashSet::new())
}

/// Words of one field of type `ty` in a block (as the backends lay it out).
fn field_words(ty: &Ty) -> usize {
    match ty {
        Ty::Str | Ty::List(_) => 2,
        _ => 1,
    }
}

/// Words of a tuple block of elements of the types given.
fn tuple_words<'t>(tys: impl Iterator<Item = &'t Ty>) -> usize {
    tys.map(field_words).sum::<usize>().max(1)
}

/// The runtime's size class of a block of `words` words: small classes are
/// 16-byte steps up to 128 bytes (rt's heap), bigger cells get their own
/// class per exact size here.
pub fn size_class(words: usize) -> usize {
    if words <= 16 {
        words.div_ceil(2)
    } else {
        words
    }
}

/// The analysis of one body's cells, over the use walk.
pub struct Cells<'a, 'd> {
    pub d: &'a Decider<'d>,
    pub items: &'a ItemTree,
    /// Statement position of every statement-level expression: (block, index).
    tops: HashMap<ExprId, (ExprId, usize)>,
    /// Locals bound directly by a field pattern of a match on a local:
    /// (the match, the arm's index, the scrutinee local).
    binders: HashMap<LocalId, (ExprId, usize, LocalId)>,
    own_memo: RefCell<HashMap<LocalId, Option<Result<CellEnd, Shared>>>>,
    /// The parameters this body owns (its owning version), each an owned
    /// local from the function's start; empty for the sharing version.
    owned_params: HashSet<LocalId>,
    /// The consuming uses of each owned local that has some.
    consumed_at: RefCell<HashMap<LocalId, Vec<ExprId>>>,
    /// Where each local handed on or shared on some paths only is dropped
    /// on the others.
    path_drops: RefCell<HashMap<LocalId, Vec<PathDrop>>>,
    /// Per owned-deep var, what each update does with the old value.
    olds: RefCell<HashMap<LocalId, Vec<Update>>>,
    /// Which versions take a reuse token of which size classes (none
    /// while the table is being made).
    tokens: Option<&'a TokenTable>,
}

/// Per function version (the function, whether the owning version), the
/// size classes of reuse tokens its `#token` version builds in: those
/// for which some path through its body, after its own tokens took their
/// constructors, has a constructor of that class.
pub type TokenTable = HashMap<(ir::FnId, bool), Vec<usize>>;

/// How evaluation orders two expressions of one body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Order {
    /// The first is done before the second starts.
    Before,
    After,
    /// Never both: different branches of an `if` or arms of a `match`.
    Exclusive,
    /// Neither (one inside the other, or in one loop statement).
    Overlap,
}

/// Which version of a function with an owning version a call runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CallChoice {
    /// Every argument of a parameter the owning version owns is owned
    /// deep and dies at the call: the owning version.
    Owning,
    /// The sharing version: the argument of parameter `param` (the local
    /// given, when it is a name) is not owned deep here, for the reason
    /// given.
    Sharing {
        param: u32,
        arg: Option<LocalId>,
        why: Shared,
    },
}

impl<'a, 'd> Cells<'a, 'd> {
    pub fn new(d: &'a Decider<'d>, items: &'a ItemTree) -> Self {
        Self::owning(d, items, HashSet::new())
    }

    /// The cells of a body that owns the parameters given (the owning
    /// version of its function).
    pub fn owning(d: &'a Decider<'d>, items: &'a ItemTree, owned_params: HashSet<LocalId>) -> Self {
        let body = d.body;
        let mut tops = HashMap::new();
        for (b, e) in body.exprs.iter() {
            let ExprKind::Block { stmts, tail } = &e.kind else {
                continue;
            };
            for (i, s) in stmts.iter().enumerate() {
                for x in ir::visit::stmt_children(&body[*s].kind) {
                    tops.insert(x, (b, i));
                }
            }
            if let Some(t) = tail {
                tops.insert(*t, (b, stmts.len()));
            }
        }
        let mut binders = HashMap::new();
        for (m, e) in body.exprs.iter() {
            let ExprKind::Match { scrutinee, arms } = &e.kind else {
                continue;
            };
            let ExprKind::Local(s) = body[*scrutinee].kind else {
                continue;
            };
            for (i, arm) in arms.iter().enumerate() {
                // A name for the whole value (`other => ..`) owns it in its
                // arm as the scrutinee did.
                if let PatKind::Bind(y) = body[arm.pat].kind {
                    binders.insert(y, (m, i, s));
                }
                let (PatKind::Ctor { args, .. } | PatKind::Tuple(args)) = &body[arm.pat].kind
                else {
                    continue;
                };
                // Fields, and fields of cells a nested pattern takes apart
                // (whose own blocks are left to the collector).
                let mut stack: Vec<PatId> = args.clone();
                while let Some(p) = stack.pop() {
                    match &body[p].kind {
                        PatKind::Bind(y) => {
                            binders.insert(*y, (m, i, s));
                        }
                        PatKind::At { local, pat } => {
                            binders.insert(*local, (m, i, s));
                            stack.push(*pat);
                        }
                        PatKind::Ctor { args, .. } | PatKind::Tuple(args) => {
                            stack.extend(args.iter().copied())
                        }
                        _ => {}
                    }
                }
            }
        }
        Cells {
            d,
            items,
            tops,
            binders,
            own_memo: RefCell::default(),
            owned_params,
            consumed_at: RefCell::default(),
            path_drops: RefCell::default(),
            olds: RefCell::default(),
            tokens: None,
        }
    }

    /// The same analysis, handing reuse tokens to the calls whose version
    /// takes one (by the table).
    pub fn with_tokens(mut self, tokens: &'a TokenTable) -> Self {
        self.tokens = Some(tokens);
        self
    }

    /// Whether `e` is a direct call whose version (the one the call runs)
    /// takes a reuse token of size class `class`.
    fn takes_token(&self, e: ExprId, class: usize) -> bool {
        let Some(table) = self.tokens else {
            return false;
        };
        let ExprKind::Call {
            callee: Callee::Fn(g),
            ..
        } = &self.d.body[e].kind
        else {
            return false;
        };
        let owning = self.call_choice(e) == Some(CallChoice::Owning);
        table
            .get(&(*g, owning))
            .is_some_and(|cs| cs.contains(&class))
    }

    fn at(&self, e: ExprId) -> u32 {
        self.d.sm.expr(e).start
    }

    fn parent(&self, e: ExprId) -> Option<ExprId> {
        self.d.facts.exprs.get(e).and_then(|f| f.parent)
    }

    /// The non-transparent parent that consumes `e`'s value, and the child
    /// of it on the way (the operand).
    fn consumer(&self, e: ExprId) -> Option<(ExprId, ExprId)> {
        let mut cur = e;
        for _ in 0..64 {
            let f = self.d.facts.exprs.get(cur)?;
            let p = f.parent?;
            if !f.transparent {
                return Some((p, cur));
            }
            cur = p;
        }
        None
    }

    /// Index of the statement of `block` that holds `e`.
    fn index_in(&self, block: ExprId, e: ExprId) -> Option<usize> {
        let mut cur = e;
        for _ in 0..4096 {
            if let Some(&(b, i)) = self.tops.get(&cur) {
                if b == block {
                    return Some(i);
                }
            }
            cur = self.parent(cur)?;
        }
        None
    }

    pub fn fn_summary(&self, f: ir::FnId) -> Option<&crate::Summary> {
        self.d.summaries.get(f.into_raw().into_u32() as usize)
    }

    /// Whether `e`'s value is owned deep.
    pub fn owned_deep(&self, e: ExprId) -> Result<(), Shared> {
        let body = self.d.body;
        let ty = &body[e].ty;
        if *ty == Ty::Never {
            return Ok(());
        }
        if !deep_type(self.items, ty) {
            return Err(Shared::TypeNotDeep);
        }
        // A field of an owned var's old value moving into its new one:
        // owned while the var is (assumed so while its own decision is
        // made).
        if let ExprKind::Field { base, .. } = &body[e].kind {
            if let ExprKind::Local(x) = body[*base].kind {
                if self.moves_field(x, *base) {
                    if matches!(self.own_memo.borrow().get(&x), Some(None)) {
                        return Ok(());
                    }
                    return self.own(x).map(|_| ());
                }
            }
        }
        match ty {
            Ty::Str => {
                return if self.d.owned_string(e) {
                    Ok(())
                } else {
                    Err(Shared::FieldNotOwned)
                };
            }
            Ty::List(el) => {
                // A list of scalars, or of strings it owns (as a string
                // list local does): the deep free takes its elements too.
                let ok = (is_scalar(el) || (**el == Ty::Str && self.d.owns_strings(e)))
                    && !matches!(body[e].kind, ExprKind::Local(_))
                    && self.d.fresh(e).is_yes();
                return if ok {
                    Ok(())
                } else {
                    Err(Shared::FieldNotOwned)
                };
            }
            t if is_scalar(t) => return Ok(()),
            _ => {}
        }
        match &body[e].kind {
            ExprKind::Ctor { args, .. } | ExprKind::Tuple(args) => {
                args.iter().try_for_each(|a| self.owned_deep(*a))
            }
            ExprKind::Record { fields, .. } => {
                fields.iter().try_for_each(|(_, a)| self.owned_deep(*a))
            }
            ExprKind::Call {
                callee: Callee::Fn(f),
                ..
            } => {
                let owning = self.call_choice(e) == Some(CallChoice::Owning);
                match self.fn_summary(*f) {
                    Some(s) if owning && s.owning_result => Ok(()),
                    Some(s) if !owning && s.owned_deep_result => Ok(()),
                    _ => Err(Shared::FnResult(*f)),
                }
            }
            ExprKind::If {
                then,
                else_: Some(x),
                ..
            } => {
                self.owned_deep(*then)?;
                self.owned_deep(*x)
            }
            ExprKind::Match { arms, .. } => arms.iter().try_for_each(|a| self.owned_deep(a.body)),
            ExprKind::Block { tail: Some(t), .. } => self.owned_deep(*t),
            // The old value of an owned var moving into its new one: owned
            // while the var is (assumed so while its own decision is made).
            ExprKind::Local(x) if self.in_own_update(*x, e) => {
                if matches!(self.own_memo.borrow().get(x), Some(None)) {
                    return Ok(());
                }
                self.own(*x).map(|_| ())
            }
            ExprKind::Local(x) => match self.own(*x)? {
                CellEnd::Moved { .. } | CellEnd::Matched { .. } if self.consumes_here(*x, e) => {
                    Ok(())
                }
                CellEnd::Kept { at } => Err(Shared::SharedAfterUpdates(at)),
                _ => Err(Shared::NotNew),
            },
            _ => Err(Shared::NotNew),
        }
    }

    /// How owned-deep local `x` ends, or why it is not owned deep.
    pub fn own(&self, x: LocalId) -> Result<CellEnd, Shared> {
        if let Some(o) = self.own_memo.borrow().get(&x) {
            return (*o).unwrap_or(Err(Shared::Cycle));
        }
        self.own_memo.borrow_mut().insert(x, None);
        let o = self.own_uncached(x);
        self.own_memo.borrow_mut().insert(x, Some(o));
        o
    }

    fn own_uncached(&self, x: LocalId) -> Result<CellEnd, Shared> {
        let body = self.d.body;
        let ty = &body.locals[x].ty;
        if !is_cell(ty) || !deep_type(self.items, ty) {
            return Err(Shared::TypeNotDeep);
        }
        let l = self.d.facts.local(x).ok_or(Shared::NotNew)?;
        // Where the owner lives: a `let`/`var`'s block, or (an owned
        // parameter of an owning version) the function's body from its start.
        let (block, var, start) = match &l.decl {
            Some(decl) => {
                self.owned_deep(decl.init)?;
                (
                    Some(decl.block),
                    decl.var,
                    (decl.index, self.d.sm.stmt(decl.stmt).start),
                )
            }
            None if self.owned_params.contains(&x) => {
                let root = body.root.ok_or(Shared::Param)?;
                let block = matches!(body[root].kind, ExprKind::Block { .. }).then_some(root);
                (block, false, (0, self.at(root)))
            }
            None => {
                return match body.locals[x].kind {
                    ir::LocalKind::Param => Err(Shared::Param),
                    _ => self.own_binding(x),
                };
            }
        };
        let index_of = |u: &Use| -> Option<usize> {
            match (&l.decl, block) {
                (Some(_), _) => u.index,
                (None, Some(b)) => self.index_in(b, u.expr),
                (None, None) => Some(0),
            }
        };
        if l.for_assigned.is_some() {
            return Err(Shared::Var);
        }
        for a in &l.assigns {
            if a.nested || a.index.is_none() {
                return Err(Shared::Var);
            }
            self.owned_deep(a.value)?;
        }
        let mut consumes: Vec<&Use> = Vec::new();
        let mut ends: Vec<(ExprId, u32)> = Vec::new();
        let mut last: Option<(usize, u32)> = None;
        let mut note = |i: Option<usize>, at: u32| {
            if let Some(i) = i {
                if last.is_none_or(|(j, _)| i >= j) {
                    last = Some((i, at));
                }
            }
        };
        // A var's updates that move its old value into the new one: each
        // consumes the value before it, at the call or constructor the old
        // value goes to (with the assigned value around it).
        let mut updates: Vec<(ExprId, ExprId)> = Vec::new();
        // Every update either consumes the value before it or frees it
        // (when it only reads it), as decided per update below.
        let has_updates = var && !l.assigns.is_empty();
        // A use in a later statement of the var's block than every
        // assignment sees only its last value, which no update replaces.
        let after_updates = |u: &Use| {
            has_updates
                && u.index
                    .is_some_and(|ci| l.assigns.iter().all(|a| a.index.is_some_and(|ai| ai < ci)))
        };
        // The first use sharing the last value, and the borrows (each use
        // with what was borrowed from it), checked against the updates.
        let mut kept: Option<(u32, Shared)> = None;
        // Uses that share the value (a `let` or owned parameter's), each
        // on its own path: it is dropped on the paths reaching none.
        let mut shares: Vec<(&Use, Shared)> = Vec::new();
        let mut lends: Vec<(ExprId, Vec<ExprId>)> = Vec::new();
        // Fields of the old value moved into the new one: (the update's
        // value, the field's index, the use).
        let mut moves: Vec<(ExprId, u32, &Use)> = Vec::new();
        for u in &l.uses {
            if u.foreign {
                return Err(Shared::InClosure(u.at));
            }
            // The value handed out of its block as the block's value is
            // not a borrow, whatever reads it there (even a `let` whose
            // name is never used): the block's value is the same cell.
            let borrowed = if u.moved_out {
                Err(Shared::HandedOn(u.at))
            } else if self.matched_then_used(l, u) {
                // A match whose arm uses `x` again is no borrow: the arm
                // would use it while the match still lends it.
                Err(Shared::UsedTwice(u.at, u.at))
            } else {
                self.borrow(u.expr, &u.ctx, 0)
            };
            match borrowed {
                Ok(derived) => {
                    note(index_of(u), u.at);
                    ends.push((u.expr, u.at));
                    if has_updates {
                        let mut lent = derived.clone();
                        lent.push(u.expr);
                        lends.push((u.expr, lent));
                    }
                    for e in derived {
                        let i = match block {
                            Some(b) => self.index_in(b, e),
                            None => Some(0),
                        };
                        match i {
                            Some(i) => note(Some(i), self.at(e)),
                            None => return Err(Shared::PartEscapes(self.at(e))),
                        }
                        ends.push((e, self.at(e)));
                    }
                }
                Err(why) => {
                    if !self.consuming(u) {
                        if after_updates(u) {
                            kept.get_or_insert((u.at, why));
                            continue;
                        }
                        if !var && !u.in_loop && index_of(u).is_some() {
                            shares.push((u, why));
                            continue;
                        }
                        // `x := R { f: x.f, .. }`: a field of the old value
                        // moves into the new one (read before a constructor
                        // builds in the old block, as a borrow is).
                        if let Some((value, field)) = self.field_move(x, u) {
                            moves.push((value, field, u));
                            note(index_of(u), u.at);
                            lends.push((u.expr, vec![u.expr]));
                            continue;
                        }
                        return Err(why);
                    }
                    // `x := Cons(.., x)`: the old value moves into the new.
                    if self.in_own_update(x, u.expr) {
                        let twice = l.uses.iter().find(|v| {
                            v.at != u.at
                                && self.consuming(v)
                                && l.assigns.iter().any(|a| {
                                    self.d.is_within(u.expr, a.value)
                                        && self.d.is_within(v.expr, a.value)
                                })
                        });
                        if let Some(v) = twice {
                            return Err(Shared::UsedTwice(u.at.min(v.at), u.at.max(v.at)));
                        }
                        if let Some(a) =
                            l.assigns.iter().find(|a| self.d.is_within(u.expr, a.value))
                        {
                            // A `break` or `continue` out of the update
                            // would leave the var naming the value it took.
                            if let Some(at) = self.leaves(a.value, false) {
                                return Err(Shared::LeftEarly(at));
                            }
                            let c = self.consumer(u.expr).map_or(u.expr, |p| p.0);
                            updates.push((c, a.value));
                        }
                        note(u.index, u.at);
                        continue;
                    }
                    // A var may hand its last value on only as the
                    // function's or block's value, after every update.
                    if var {
                        let out = matches!(u.ctx, Ctx::Out) || u.moved_out;
                        let after = u.index.is_some_and(|ci| {
                            l.assigns.iter().all(|a| a.index.is_some_and(|ai| ai < ci))
                        });
                        if !(out && after) {
                            if after_updates(u) {
                                kept.get_or_insert((u.at, why));
                                continue;
                            }
                            return Err(why);
                        }
                    }
                    if u.in_loop {
                        return Err(Shared::ConsumedInLoop(u.at));
                    }
                    if index_of(u).is_none() && !u.moved_out {
                        return Err(Shared::PartEscapes(u.at));
                    }
                    consumes.push(u);
                }
            }
        }
        // Everything lent by a value an update consumes is done before the
        // update runs.
        for (u, lent) in &lends {
            for &c in &updates {
                if let Some(&e) = lent.iter().find(|e| !self.lent_before(*u, **e, c)) {
                    return Err(Shared::LentAcrossUpdate(self.at(e), self.at(c.0)));
                }
            }
        }
        // A field moves once into the new value, which the old value
        // itself does not move into.
        for (i, &(value, field, u)) in moves.iter().enumerate() {
            let again = moves[i + 1..].iter().find(|(v, f, w)| {
                *v == value && *f == field && self.order(u.expr, w.expr) != Order::Exclusive
            });
            if let Some(w) = again {
                return Err(Shared::UsedTwice(u.at.min(w.2.at), u.at.max(w.2.at)));
            }
            let whole = l.uses.iter().find(|w| {
                self.d.is_within(w.expr, value)
                    && self.consuming(w)
                    && self.in_own_update(x, w.expr)
            });
            if let Some(w) = whole {
                return Err(Shared::UsedTwice(u.at.min(w.at), u.at.max(w.at)));
            }
        }
        // The updates that only read the value they replace, or move some
        // of its fields into the new one, free it.
        let olds = if var {
            let moved: Vec<ExprId> = moves.iter().map(|m| m.0).collect();
            self.old_ends(x, &lends, &moved)
        } else {
            Vec::new()
        };
        let frees = olds.iter().any(|u| {
            matches!(
                u.old,
                OldEnd::Reused { .. } | OldEnd::Freed(_) | OldEnd::FreedBlock(_)
            )
        });
        // The last value lives until the last update too: a drop before it
        // would free the value the update replaces.
        for a in &l.assigns {
            if let Some(i) = a.index {
                if last.is_none_or(|(j, _)| i > j) {
                    last = Some((i, a.at));
                }
            }
        }
        if let Some((at, why)) = kept {
            if updates.is_empty() && !frees {
                return Err(why);
            }
            self.olds.borrow_mut().insert(x, olds);
            return Ok(CellEnd::Kept { at });
        }
        if var {
            self.olds.borrow_mut().insert(x, olds);
        }
        if let Some(&(first, why)) = shares.first() {
            // Shared on some paths, handed on on others (each on its own
            // path, after every borrow), dropped where none is reached.
            let takers: Vec<&Use> = consumes
                .iter()
                .copied()
                .chain(shares.iter().map(|s| s.0))
                .collect();
            if self.consumed(x, &takers, &ends).is_err() {
                return Err(why);
            }
            let handed: Vec<ExprId> = consumes.iter().map(|c| c.expr).collect();
            self.consumed_at.borrow_mut().insert(x, handed);
            let drops = self.path_drops(block, &takers, &ends);
            if drops.is_empty() {
                return Err(why);
            }
            self.path_drops.borrow_mut().insert(x, drops);
            return Ok(CellEnd::SharedOnPath { at: first.at });
        }
        if !consumes.is_empty() {
            let end = self.consumed(x, &consumes, &ends)?;
            if !var && matches!(end, CellEnd::Moved { .. }) {
                let drops = self.path_drops(block, &consumes, &ends);
                if !drops.is_empty() {
                    self.path_drops.borrow_mut().insert(x, drops);
                }
            }
            return Ok(end);
        }
        let (index, at) = last.unwrap_or(start);
        Ok(CellEnd::DropDeep { index, at })
    }

    /// Whether local `x` is dropped on the paths that do not hand it on.
    pub fn has_path_drops(&self, x: LocalId) -> bool {
        self.path_drops.borrow().contains_key(&x)
    }

    /// Where a local whose uses `takers` (handing it on or sharing it)
    /// are each on its own path is dropped deep on the paths that reach
    /// none of them: at the start of each branch (of the `if`s and
    /// `match`es between its block and the takers) holding no taker and
    /// nothing lent (`ends`), in an `else` added to an `if` with none, or
    /// after the last statement of such a branch's block that uses it (or
    /// once such a branch that is no block has made its value). A
    /// path that leaves otherwise (`return`, `break`, `&&`) keeps it for
    /// the collector.
    fn path_drops(
        &self,
        block: Option<ExprId>,
        takers: &[&Use],
        ends: &[(ExprId, u32)],
    ) -> Vec<PathDrop> {
        let mut out = Vec::new();
        let Some(&first) = takers.first() else {
            return out;
        };
        // The statement of the local's block that holds the takers.
        let mut root = first.expr;
        for _ in 0..4096 {
            if self.tops.get(&root).is_some_and(|t| Some(t.0) == block) {
                break;
            }
            match self.parent(root) {
                Some(p) => root = p,
                None => return out,
            }
        }
        if !takers.iter().all(|t| self.d.is_within(t.expr, root)) {
            return out;
        }
        let taker_in = |e: ExprId| takers.iter().any(|t| self.d.is_within(t.expr, e));
        let used_in = |e: ExprId| ends.iter().any(|(x, _)| self.d.is_within(*x, e));
        let body = self.d.body;
        let mut todo = vec![root];
        let mut branches: Vec<ExprId> = Vec::new();
        let mut guard = 0;
        while let Some(e) = todo.pop() {
            guard += 1;
            if guard > 4096 || takers.iter().any(|t| t.expr == e) {
                continue;
            }
            match &body[e].kind {
                ExprKind::If { cond, then, else_ } => {
                    if taker_in(*cond) {
                        todo.push(*cond);
                        continue;
                    }
                    branches.push(*then);
                    match else_ {
                        Some(x) => branches.push(*x),
                        None => out.push(PathDrop::Else(e)),
                    }
                }
                ExprKind::Match { scrutinee, arms } => {
                    if taker_in(*scrutinee) {
                        todo.push(*scrutinee);
                        continue;
                    }
                    branches.extend(arms.iter().map(|a| a.body));
                }
                ExprKind::Lambda { .. } => {}
                ExprKind::Block { stmts, tail } => {
                    let mut kids: Vec<ExprId> = stmts
                        .iter()
                        .flat_map(|s| ir::visit::stmt_children(&body[*s].kind))
                        .collect();
                    kids.extend(tail.iter().copied());
                    // A taker in a loop statement is never on one path.
                    if let Some(&k) = kids.iter().find(|k| taker_in(**k)) {
                        if !self.loop_between(k, e) {
                            todo.push(k);
                        }
                    }
                }
                k => {
                    if let Some(c) = ir::visit::children(k).into_iter().find(|c| taker_in(*c)) {
                        todo.push(c);
                    }
                }
            }
            for b in branches.drain(..) {
                if taker_in(b) {
                    todo.push(b);
                } else if !used_in(b) {
                    out.push(PathDrop::Start(b));
                } else if matches!(body[b].kind, ExprKind::Block { .. }) {
                    let last = ends
                        .iter()
                        .filter(|(x, _)| self.d.is_within(*x, b))
                        .map(|(x, _)| self.index_in(b, *x))
                        .try_fold(0usize, |m, i| i.map(|i| m.max(i)));
                    if let Some(i) = last {
                        out.push(PathDrop::After(b, i));
                    }
                } else {
                    out.push(PathDrop::End(b));
                }
            }
        }
        out
    }

    /// Whether `e`, which uses what a borrow of a var at `u` lent, is done
    /// before the update consuming at `c` could consume the value `u`
    /// read: both before `c` (or on another path), both after it in a
    /// later statement of the block around it (`u` reads a newer value),
    /// both in the operands `c` evaluates before it runs, or both in the
    /// condition of a `while` whose body holds `c`.
    fn lent_before(&self, u: ExprId, e: ExprId, (c, update): (ExprId, ExprId)) -> bool {
        // A loop around `e` and `c` that reads the value at `u` before it
        // starts runs `e` again after `c`.
        if self.loop_apart(u, e, c) {
            return false;
        }
        let inside = |x: ExprId| x != c && self.d.is_within(x, c);
        if inside(u) && inside(e) {
            return true;
        }
        if self.in_while_cond(u, c) && self.in_while_cond(e, c) {
            return true;
        }
        // What a borrow lends flows up the tree and through `let` aliases
        // only, never out of a loop's body: after the statement holding
        // the update, it is done before that statement runs again.
        let outside = |x: ExprId| !self.d.is_within(x, update);
        match (self.order(u, c), self.order(e, c)) {
            (Order::Before, Order::Before) | (Order::Exclusive, Order::Exclusive) => true,
            (Order::After, Order::After) => outside(u) && outside(e),
            _ => false,
        }
    }

    /// Whether a loop (a `while`'s condition and body, a `for`'s body)
    /// holds `e` and `c` but not `u`.
    fn loop_apart(&self, u: ExprId, e: ExprId, c: ExprId) -> bool {
        self.stmts_around(e).into_iter().any(|(s, cur)| {
            let parts = match s {
                ir::StmtKind::While { cond, body: wb } => vec![*cond, *wb],
                ir::StmtKind::For { body: fb, .. } if *fb == cur => vec![*fb],
                _ => return false,
            };
            let within = |x: ExprId| parts.iter().any(|p| self.d.is_within(x, *p));
            within(c) && !within(u)
        })
    }

    /// What each update of owned var `x` that does not move the value it
    /// replaces into the new one does with it, given the borrows of `x`
    /// (each use with what it lent): the update only reads it, so it is
    /// dead once the new value exists. The first constructor of its size
    /// class on the update's straight-line path is built in its block when
    /// everything lent is done before that constructor (and its fields
    /// hold no blocks); else it is freed deep after the update when
    /// everything lent is done by then; else it is left to the collector.
    fn old_ends(
        &self,
        x: LocalId,
        lends: &[(ExprId, Vec<ExprId>)],
        moved: &[ExprId],
    ) -> Vec<Update> {
        let Some(l) = self.d.facts.local(x) else {
            return Vec::new();
        };
        let lent_past = |point: ExprId, value: ExprId| {
            lends.iter().find_map(|(u, lent)| {
                lent.iter()
                    .copied()
                    .find(|e| !self.lent_before(*u, *e, (point, value)))
            })
        };
        let ty = &self.d.body.locals[x].ty;
        let mut out = Vec::new();
        for a in &l.assigns {
            let moved_in = l.uses.iter().any(|u| {
                self.d.is_within(u.expr, a.value)
                    && self.consuming(u)
                    && self.in_own_update(x, u.expr)
            });
            // With fields moved out, the fields left behind are only read:
            // reusing the block or freeing it alone leaves what they hold
            // to the collector.
            let fields_moved = moved.contains(&a.value);
            let class = if fields_moved {
                self.block_class(ty)
            } else {
                self.var_class(ty)
            };
            let old = if moved_in {
                OldEnd::MovedIn
            } else {
                let no_reuse = match (class, self.leaves(a.value, true)) {
                    (Err(w), _) => w,
                    // Left early once the constructor is built, the
                    // update would leave the var holding the new block.
                    (Ok(_), Some(at)) => NoReuse::MayLeave(at),
                    (Ok(k), None) => match self.reuse_candidate(a.value, k, &[]) {
                        None => NoReuse::NoCtor,
                        Some(c) => match lent_past(c, a.value) {
                            None => {
                                out.push(Update {
                                    stmt: a.stmt,
                                    value: a.value,
                                    at: a.at,
                                    old: OldEnd::Reused {
                                        by: c,
                                        moved: fields_moved,
                                    },
                                });
                                continue;
                            }
                            Some(e) => NoReuse::ReadAfterCtor(self.at(e)),
                        },
                    },
                };
                match lent_past(a.value, a.value) {
                    None if fields_moved => OldEnd::FreedBlock(no_reuse),
                    None => OldEnd::Freed(no_reuse),
                    Some(e) => OldEnd::Kept(Shared::LentAcrossUpdate(self.at(e), a.at)),
                }
            };
            out.push(Update {
                stmt: a.stmt,
                value: a.value,
                at: a.at,
                old,
            });
        }
        out
    }

    /// The size class of every value of a var's type, when its values are
    /// all blocks of one class whose fields hold no block (a reuse would
    /// leave those to the collector).
    fn var_class(&self, ty: &Ty) -> Result<usize, NoReuse> {
        let items = self.items;
        let plain = |t: &Ty| is_scalar(t) || never_block(items, t);
        match ty {
            Ty::Tuple(es) if es.iter().all(plain) => Ok(size_class(tuple_words(es.iter()))),
            Ty::Adt(t) => match &items.types[*t].kind {
                TypeDefKind::Record { fields } if fields.iter().all(|f| plain(&f.1)) => {
                    Ok(size_class(
                        fields
                            .iter()
                            .map(|f| field_words(&f.1))
                            .sum::<usize>()
                            .max(1),
                    ))
                }
                TypeDefKind::Sum { variants } => {
                    if variants.iter().any(|v| v.fields.is_empty()) {
                        return Err(NoReuse::Sizes);
                    }
                    let mut classes = (0..variants.len())
                        .map(|i| size_class(variant_words(items, Ctor::User(*t, i as u32), ty)));
                    let first = classes.next().ok_or(NoReuse::Sizes)?;
                    if !classes.all(|k| k == first) {
                        return Err(NoReuse::Sizes);
                    }
                    if !variants.iter().all(|v| v.fields.iter().all(plain)) {
                        return Err(NoReuse::FieldsHoldBlocks);
                    }
                    Ok(first)
                }
                TypeDefKind::Record { .. } => Err(NoReuse::FieldsHoldBlocks),
            },
            Ty::Tuple(_) => Err(NoReuse::FieldsHoldBlocks),
            _ => Err(NoReuse::Sizes),
        }
    }

    /// The first `break` or `continue` (and `return`, with `returns`) in
    /// `e` outside closures, by offset.
    fn leaves(&self, e: ExprId, returns: bool) -> Option<u32> {
        let body = self.d.body;
        let mut todo = vec![e];
        let mut found: Option<u32> = None;
        while let Some(x) = todo.pop() {
            match &body[x].kind {
                ExprKind::Return(_) if !returns => todo.extend(ir::visit::children(&body[x].kind)),
                ExprKind::Return(_) | ExprKind::Break | ExprKind::Continue => {
                    let at = self.at(x);
                    found = Some(found.map_or(at, |f| f.min(at)));
                }
                ExprKind::Lambda { .. } => {}
                ExprKind::Block { stmts, tail } => {
                    for s in stmts {
                        todo.extend(ir::visit::stmt_children(&body[*s].kind));
                    }
                    todo.extend(tail.iter().copied());
                }
                k => todo.extend(ir::visit::children(k)),
            }
        }
        found
    }

    /// The size class of a record's or tuple's block (the only values
    /// whose fields are read by name or position).
    fn block_class(&self, ty: &Ty) -> Result<usize, NoReuse> {
        match ty {
            Ty::Tuple(es) => Ok(size_class(tuple_words(es.iter()))),
            Ty::Adt(t) => match &self.items.types[*t].kind {
                TypeDefKind::Record { fields } => Ok(size_class(
                    fields
                        .iter()
                        .map(|f| field_words(&f.1))
                        .sum::<usize>()
                        .max(1),
                )),
                TypeDefKind::Sum { .. } => Err(NoReuse::Sizes),
            },
            _ => Err(NoReuse::Sizes),
        }
    }

    /// Where use `u` of var `x` is the record or tuple whose field (by
    /// index) a read hands, through constructors only, into the value of
    /// an update of `x`: that update's value and the field.
    fn field_move(&self, x: LocalId, u: &Use) -> Option<(ExprId, u32)> {
        let body = self.d.body;
        if u.ctx != Ctx::Read(Reader::Field) {
            return None;
        }
        let (c, _) = self.consumer(u.expr)?;
        let ExprKind::Field { base, index } = body[c].kind else {
            return None;
        };
        if base != u.expr || is_scalar(&body[c].ty) {
            return None;
        }
        let l = self.d.facts.local(x)?;
        if !l.decl.as_ref().is_some_and(|d| d.var) {
            return None;
        }
        let a = l
            .assigns
            .iter()
            .find(|a| self.d.is_within(u.expr, a.value))?;
        self.stored_until(c, &mut |p| self.flows_out_of(p, a.value))
            .then_some((a.value, index))
    }

    /// Whether `e` is a field read of var `x`'s old value moving into an
    /// update's new value.
    fn moves_field(&self, x: LocalId, base: ExprId) -> bool {
        self.d.facts.local(x).is_some_and(|l| {
            l.uses
                .iter()
                .any(|u| u.expr == base && !u.foreign && self.field_move(x, u).is_some())
        })
    }

    /// What each update of owned-deep var `x` does with the value it
    /// replaces (empty when `x` is not an owned-deep var).
    pub fn updates(&self, x: LocalId) -> Vec<Update> {
        if self.own(x).is_err() {
            return Vec::new();
        }
        self.olds.borrow().get(&x).cloned().unwrap_or_default()
    }

    /// Whether `e` is in the condition of a `while` whose body holds `c`:
    /// the condition is done before the body runs.
    fn in_while_cond(&self, e: ExprId, c: ExprId) -> bool {
        self.stmts_around(e).into_iter().any(|(s, cur)| {
            matches!(s, ir::StmtKind::While { cond, body: wb }
                if *cond == cur && self.d.is_within(c, *wb))
        })
    }

    /// The statements around `e`, innermost first, each with its child on
    /// the way to `e` (a condition, a body, a value).
    fn stmts_around(&self, e: ExprId) -> Vec<(&'d ir::StmtKind, ExprId)> {
        let body: &'d ir::Body = self.d.body;
        let mut out = Vec::new();
        let mut cur = e;
        for _ in 0..4096 {
            if let Some(&(b, i)) = self.tops.get(&cur) {
                if let ExprKind::Block { stmts, .. } = &body[b].kind {
                    if let Some(s) = stmts.get(i) {
                        out.push((&body[*s].kind, cur));
                    }
                }
            }
            match self.parent(cur) {
                Some(p) => cur = p,
                None => break,
            }
        }
        out
    }

    /// The end of owned local `x` whose consuming uses are `consumes` and
    /// whose borrows (and what was borrowed from it) end at `ends`: every
    /// borrow is done before each consuming use starts (or on another path),
    /// and the consuming uses are on different paths (branches of an `if`,
    /// arms of a `match`), except a destructive `match` of `x` and uses of
    /// `x` in its arms that bind nothing (those arms hand `x` on whole).
    fn consumed(
        &self,
        x: LocalId,
        consumes: &[&Use],
        ends: &[(ExprId, u32)],
    ) -> Result<CellEnd, Shared> {
        let body = self.d.body;
        // The destructive match among the consuming uses, if any.
        let mut matched: Option<(ExprId, u32)> = None;
        for c in consumes {
            if let Some((m, _)) = self.consumer(c.expr) {
                if matches!(c.ctx, Ctx::Escape(Escape::Matched))
                    && matches!(&body[m].kind, ExprKind::Match { scrutinee, .. } if *scrutinee == c.expr)
                {
                    if let Some((_, at)) = matched {
                        return Err(Shared::UsedTwice(at, c.at));
                    }
                    matched = Some((m, c.at));
                }
            }
        }
        for (i, a) in consumes.iter().enumerate() {
            for b in &consumes[i + 1..] {
                let ok = match self.order(a.expr, b.expr) {
                    Order::Exclusive => true,
                    // The scrutinee first, then a use in an arm that binds
                    // nothing.
                    Order::Before | Order::After => matched.is_some_and(|(m, _)| {
                        (self.is_scrutinee(a, m) && self.passes_on(m, b.expr))
                            || (self.is_scrutinee(b, m) && self.passes_on(m, a.expr))
                    }),
                    Order::Overlap => false,
                };
                if !ok {
                    return Err(Shared::UsedTwice(a.at.min(b.at), a.at.max(b.at)));
                }
            }
        }
        for &(e, at) in ends {
            for c in consumes {
                if !matches!(self.order(e, c.expr), Order::Before | Order::Exclusive) {
                    return Err(Shared::UsedTwice(at.min(c.at), at.max(c.at)));
                }
            }
        }
        self.consumed_at
            .borrow_mut()
            .insert(x, consumes.iter().map(|c| c.expr).collect());
        let first = consumes.iter().map(|c| c.at).min().unwrap_or(0);
        Ok(match matched {
            Some((m, at)) => CellEnd::Matched { m, at },
            None => CellEnd::Moved { at: first },
        })
    }

    /// Whether use `u` of a local is the scrutinee of a match in whose arms
    /// the local is used again.
    fn matched_then_used(&self, l: &crate::walk::LocalFacts, u: &Use) -> bool {
        let Some((m, _)) = self.consumer(u.expr) else {
            return false;
        };
        self.is_scrutinee(u, m)
            && l.uses
                .iter()
                .any(|v| v.expr != u.expr && self.d.is_within(v.expr, m))
    }

    /// Whether use `u` is the scrutinee of match `m`.
    fn is_scrutinee(&self, u: &Use, m: ExprId) -> bool {
        matches!(u.ctx, Ctx::Escape(Escape::Matched))
            && self.consumer(u.expr).map(|p| p.0) == Some(m)
    }

    /// Whether `e` is in an arm of match `m` that hands the scrutinee on
    /// whole on `e`'s path: on that path the arm's bindings are only read
    /// (borrows done before `e`); they are consumed only on other paths
    /// (branches of an `if` or arms of a `match` that `e` is not on),
    /// where the arm takes the value apart.
    fn passes_on(&self, m: ExprId, e: ExprId) -> bool {
        let body = self.d.body;
        let ExprKind::Match { arms, .. } = &body[m].kind else {
            return false;
        };
        arms.iter().any(|a| {
            self.d.is_within(e, a.body)
                && self.on_value_path(e, a.body)
                && pat_binds(body, a.pat).into_iter().all(|y| {
                    self.d.facts.local(y).is_none_or(|l| {
                        l.uses.iter().all(|u| {
                            !u.foreign
                                && match self.order(u.expr, e) {
                                    Order::Exclusive => true,
                                    // A read done before the value is handed on.
                                    Order::Before => {
                                        self.borrow(u.expr, &u.ctx, 0).is_ok_and(|d| {
                                            d.iter().all(|x| self.order(*x, e) == Order::Before)
                                        })
                                    }
                                    _ => false,
                                }
                        })
                    })
                })
        })
    }

    /// Whether `e` is on the way to `arm`'s value: inside (calls,
    /// constructors) an expression reached from `arm` through block tails
    /// and the branches of `if`s and `match`es only, so every path through
    /// `arm` either reaches `e` or leaves it on another branch.
    fn on_value_path(&self, e: ExprId, arm: ExprId) -> bool {
        let body = self.d.body;
        let mut cur = e;
        let mut branched = false;
        for _ in 0..4096 {
            if cur == arm {
                return true;
            }
            let Some(p) = self.parent(cur) else {
                return false;
            };
            let ok = match &body[p].kind {
                ExprKind::Block { tail, .. } => *tail == Some(cur),
                ExprKind::If { then, else_, .. } => *then == cur || *else_ == Some(cur),
                ExprKind::Match { arms, .. } => arms.iter().any(|a| a.body == cur),
                ExprKind::Lambda { .. } => false,
                _ => !branched,
            };
            if !ok {
                return false;
            }
            branched |= matches!(
                body[p].kind,
                ExprKind::Block { .. } | ExprKind::If { .. } | ExprKind::Match { .. }
            );
            cur = p;
        }
        false
    }

    /// The takers of a token in an arm that hands the scrutinee on whole
    /// at `kept` (on the paths through them): on the other paths, the
    /// token's constructors or frees as [`Cells::takers`] finds them
    /// (`ctors`, `frees`), and the starts of those paths that build in the
    /// token (where its fields are cleared when they must be). Nothing is
    /// taken or freed on the paths that hand the value on.
    fn kept_takers(
        &self,
        e: ExprId,
        class: usize,
        taken: &[ExprId],
        kept: &[ExprId],
    ) -> (Takers, Vec<ExprId>) {
        let body = self.d.body;
        let mut out = Takers {
            class,
            ..Takers::default()
        };
        let mut roots = Vec::new();
        if !kept.iter().any(|k| self.d.is_within(*k, e)) {
            match self.takers(e, class, taken) {
                Some(t) => {
                    roots.push(e);
                    out.ctors = t.ctors;
                    out.frees = t.frees;
                }
                None => out.frees.push(e),
            }
            return (out, roots);
        }
        let branches: Vec<ExprId> = match &body[e].kind {
            ExprKind::Block { tail: Some(t), .. } => vec![*t],
            ExprKind::If {
                then,
                else_: Some(el),
                ..
            } => vec![*then, *el],
            ExprKind::Match { arms, .. } => arms.iter().map(|a| a.body).collect(),
            _ => Vec::new(),
        };
        for b in branches {
            let (t, r) = self.kept_takers(b, class, taken, kept);
            out.ctors.extend(t.ctors);
            out.frees.extend(t.frees);
            roots.extend(r);
        }
        (out, roots)
    }

    /// The uses of `x` in `arm`'s body, where `x` is the scrutinee of a
    /// destructive match: the paths that hand it on whole.
    fn kept_in(&self, x: LocalId, arm: ExprId) -> Vec<ExprId> {
        self.d
            .facts
            .local(x)
            .map(|l| {
                l.uses
                    .iter()
                    .filter(|u| self.d.is_within(u.expr, arm))
                    .map(|u| u.expr)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether `e` (a use of owned local `x`) is one of its consuming uses.
    fn consumes_here(&self, x: LocalId, e: ExprId) -> bool {
        self.consumed_at
            .borrow()
            .get(&x)
            .is_some_and(|v| v.contains(&e))
    }

    /// How evaluation orders `a` and `b`: `a` done before `b` starts (or
    /// after), on different paths, or neither (one inside the other, or in
    /// one statement of a loop).
    fn order(&self, a: ExprId, b: ExprId) -> Order {
        let mut up = vec![a];
        let mut cur = a;
        for _ in 0..4096 {
            match self.parent(cur) {
                Some(p) => {
                    up.push(p);
                    cur = p;
                }
                None => break,
            }
        }
        let pos: HashMap<ExprId, usize> = up.iter().enumerate().map(|(i, e)| (*e, i)).collect();
        let mut prev: Option<ExprId> = None;
        let mut cur = b;
        let mut found = None;
        for _ in 0..4096 {
            if let Some(&i) = pos.get(&cur) {
                found = Some((cur, i));
                break;
            }
            prev = Some(cur);
            match self.parent(cur) {
                Some(p) => cur = p,
                None => break,
            }
        }
        let Some((lca, i)) = found else {
            return Order::Overlap;
        };
        let (Some(ca), Some(cb)) = (i.checked_sub(1).map(|j| up[j]), prev) else {
            return Order::Overlap;
        };
        let cmp = |x: usize, y: usize| match x.cmp(&y) {
            std::cmp::Ordering::Less => Order::Before,
            std::cmp::Ordering::Greater => Order::After,
            std::cmp::Ordering::Equal => Order::Overlap,
        };
        match &self.d.body[lca].kind {
            ExprKind::Block { .. } => match (self.tops.get(&ca), self.tops.get(&cb)) {
                (Some(&(b1, i)), Some(&(b2, j))) if b1 == lca && b2 == lca => cmp(i, j),
                _ => Order::Overlap,
            },
            // The head first, then one of the branches.
            ExprKind::If { cond: head, .. }
            | ExprKind::Match {
                scrutinee: head, ..
            } => {
                if ca == *head {
                    Order::Before
                } else if cb == *head {
                    Order::After
                } else {
                    Order::Exclusive
                }
            }
            ExprKind::Lambda { .. } => Order::Overlap,
            k => {
                let ch = ir::visit::children(k);
                match (
                    ch.iter().position(|c| *c == ca),
                    ch.iter().position(|c| *c == cb),
                ) {
                    (Some(i), Some(j)) => cmp(i, j),
                    _ => Order::Overlap,
                }
            }
        }
    }

    /// A field bound by a destructive match of an owned-deep value owns its
    /// part (moved out, owned deep), inside its arm: reads first, then at
    /// most one consuming use on each path (stored, returned, the arm's
    /// value, matched, given to an owning version), everything borrowed
    /// from it done within the arm. With no consuming use it is dropped
    /// deep when the arm's value is made. In an arm whose constructor
    /// reuses the scrutinee's block, a field is not taken apart itself: the
    /// token's block, still allocated until the reuse, points at it.
    fn own_binding(&self, x: LocalId) -> Result<CellEnd, Shared> {
        let body = self.d.body;
        let &(m, arm_i, s) = self.binders.get(&x).ok_or(Shared::PartOf)?;
        match self.own(s) {
            Ok(CellEnd::Matched { m: m2, .. }) if m2 == m => {}
            _ => return Err(Shared::PartOf),
        }
        let ExprKind::Match { arms, .. } = &body[m].kind else {
            return Err(Shared::PartOf);
        };
        let arm = arms.get(arm_i).ok_or(Shared::PartOf)?.body;
        let l = self.d.facts.local(x).ok_or(Shared::PartOf)?;
        let is_block = matches!(body[arm].kind, ExprKind::Block { .. });
        let index = |e: ExprId| -> Option<usize> {
            if is_block {
                self.index_in(arm, e)
            } else {
                self.d.is_within(e, arm).then_some(0)
            }
        };
        let mut consumes: Vec<&Use> = Vec::new();
        let mut ends: Vec<(ExprId, u32)> = Vec::new();
        let mut last: Option<(usize, u32)> = None;
        let mut note = |i: usize, at: u32| {
            if last.is_none_or(|(j, _)| i >= j) {
                last = Some((i, at));
            }
        };
        for u in &l.uses {
            if u.foreign {
                return Err(Shared::InClosure(u.at));
            }
            let i = index(u.expr).ok_or(Shared::PartEscapes(u.at))?;
            // A borrow counts only when all it lends is done in the arm;
            // the value handed out as the arm's value is never a borrow.
            let borrowed = if self.flows_out_of(u.expr, arm) {
                Err(Shared::HandedOn(u.at))
            } else {
                self.borrow(u.expr, &u.ctx, 0)
            };
            let borrowed = borrowed.map(|derived| {
                derived
                    .iter()
                    .map(|e| index(*e).map(|j| (j, *e, self.at(*e))))
                    .collect::<Option<Vec<_>>>()
            });
            match borrowed {
                Ok(Some(derived)) => {
                    note(i, u.at);
                    ends.push((u.expr, u.at));
                    for (j, e, at) in derived {
                        note(j, at);
                        ends.push((e, at));
                    }
                }
                other => {
                    let why = match other {
                        Err(why) => why,
                        _ => Shared::PartEscapes(u.at),
                    };
                    if !self.consuming(u) && !self.flows_out_of(u.expr, arm) {
                        return Err(why);
                    }
                    if self.loop_between(u.expr, arm) {
                        return Err(Shared::ConsumedInLoop(u.at));
                    }
                    consumes.push(u);
                }
            }
        }
        if consumes.is_empty() {
            // An arm that hands the scrutinee on whole on some path would
            // drop the field there too, inside the value handed on.
            if let Some(&k) = self.kept_in(s, arm).first() {
                return Err(Shared::KeptWhole(self.at(k)));
            }
            let (index, at) = last.unwrap_or((0, self.at(arm)));
            return Ok(CellEnd::DropDeep { index, at });
        }
        // In an arm that reuses the token's block, the block points at
        // this field until the constructor overwrites it: the field may
        // only go into that constructor or out as the arm's value, never
        // to something that could free it first (an early return, a
        // temporary, a match taking it apart).
        // An arm that clears its tokens' fields at its start has nothing
        // pointing at the field any more.
        let plan = self
            .match_plan(s, m)
            .and_then(|p| p.arms.get(arm_i).cloned());
        let cleared = plan.as_ref().is_some_and(|a| !a.clear.is_empty());
        let kept = plan.as_ref().is_some_and(|a| a.kept) || !self.kept_in(s, arm).is_empty();
        let reuses: Vec<ExprId> = plan
            .map(|a| {
                a.reuse
                    .into_iter()
                    .chain(a.nested.into_iter().filter_map(|n| n.1))
                    .flat_map(|t| t.ctors)
                    .collect()
            })
            .unwrap_or_default();
        if !reuses.is_empty() && !cleared {
            for c in &consumes {
                if !self.flows_out_of(c.expr, arm)
                    && !reuses.iter().any(|r| self.stored_into(c.expr, *r))
                    && !self.stored_out_of(c.expr, arm)
                {
                    return Err(Shared::BeforeReuse(c.at));
                }
            }
        }
        let end = self.consumed(x, &consumes, &ends)?;
        // Handed on on some paths of a block arm: dropped deep on the
        // others, when no token of the arm still points at it there (the
        // arm reuses none, or clears their fields at its start) and the
        // arm never hands the whole value on (the field is inside it).
        if is_block
            && !kept
            && (reuses.is_empty() || cleared)
            && matches!(end, CellEnd::Moved { .. })
        {
            let drops = self.path_drops(Some(arm), &consumes, &ends);
            if !drops.is_empty() {
                self.path_drops.borrow_mut().insert(x, drops);
            }
        }
        Ok(end)
    }

    /// Whether `e`'s value is stored, through constructors only, into the
    /// constructor `target`.
    fn stored_into(&self, e: ExprId, target: ExprId) -> bool {
        self.stored_until(e, &mut |p| p == target)
    }

    /// Whether `e`'s value is stored, through constructors only, into a
    /// constructor that becomes the value of `arm` (nothing frees it on the
    /// way).
    fn stored_out_of(&self, e: ExprId, arm: ExprId) -> bool {
        self.stored_until(e, &mut |p| self.flows_out_of(p, arm))
    }

    /// Whether `e`'s value is stored, through constructors only, into a
    /// constructor for which `stop` holds.
    fn stored_until(&self, e: ExprId, stop: &mut dyn FnMut(ExprId) -> bool) -> bool {
        let mut cur = e;
        for _ in 0..4096 {
            let Some((p, child)) = self.consumer(cur) else {
                return false;
            };
            let stored = matches!(
                self.d.facts.ctx(child),
                Some(Ctx::Escape(
                    Escape::StoredInCtor(_) | Escape::StoredInTuple | Escape::StoredInField { .. }
                ))
            );
            if !stored {
                return false;
            }
            if stop(p) {
                return true;
            }
            cur = p;
        }
        false
    }

    /// Whether `e`'s value becomes the value of `arm` (through transparent
    /// edges only: a tail, an `if`/`match` branch).
    fn flows_out_of(&self, e: ExprId, arm: ExprId) -> bool {
        let mut cur = e;
        for _ in 0..4096 {
            if cur == arm {
                return true;
            }
            match self.d.facts.exprs.get(cur) {
                Some(f) if f.transparent => match f.parent {
                    Some(p) => cur = p,
                    None => return false,
                },
                _ => return false,
            }
        }
        false
    }

    /// Whether `e` is in a loop (a `while`'s condition or body, a `for`'s
    /// body) nested inside `top`.
    fn loop_between(&self, e: ExprId, top: ExprId) -> bool {
        let body = self.d.body;
        let mut cur = e;
        for _ in 0..4096 {
            if cur == top {
                return false;
            }
            if let Some(&(b, i)) = self.tops.get(&cur) {
                if let ExprKind::Block { stmts, .. } = &body[b].kind {
                    if let Some(s) = stmts.get(i) {
                        match &body[*s].kind {
                            ir::StmtKind::While { .. } => return true,
                            ir::StmtKind::For { body: fb, .. } if *fb == cur => return true,
                            _ => {}
                        }
                    }
                }
            }
            match self.parent(cur) {
                Some(p) => cur = p,
                None => return true,
            }
        }
        true
    }

    /// Whether `e` (a use of var `x`) is inside the value of an update of
    /// `x` (`x := Cons(.., x)`): it moves the old value into the new one,
    /// which `own` checks is owned deep.
    fn in_own_update(&self, x: LocalId, e: ExprId) -> bool {
        let Some(l) = self.d.facts.local(x) else {
            return false;
        };
        let var = l.decl.as_ref().is_some_and(|d| d.var);
        var && l.assigns.iter().any(|a| self.d.is_within(e, a.value))
    }

    /// Whether use `u` may consume the value: stored in a constructor that
    /// is itself owned deep, returned, moved out, matched, or given to a
    /// parameter an owning version owns.
    fn consuming(&self, u: &Use) -> bool {
        if u.moved_out || self.owning_arg(u.expr).is_some() {
            return true;
        }
        matches!(
            &u.ctx,
            Ctx::Out
                | Ctx::Escape(
                    Escape::Matched
                        | Escape::StoredInCtor(_)
                        | Escape::StoredInTuple
                        | Escape::StoredInField { .. }
                )
        )
    }

    /// The call and the parameter when `e`'s value is the argument of a
    /// direct call at a parameter the callee's owning version owns.
    fn owning_arg(&self, e: ExprId) -> Option<(ExprId, usize)> {
        let (c, arg) = self.consumer(e)?;
        let (s, args) = self.direct_call(c)?;
        let i = args.iter().position(|a| *a == arg)?;
        s.owns(i).then_some((c, i))
    }

    /// The callee's summary and the arguments of `c`, a direct call.
    fn direct_call(&self, c: ExprId) -> Option<(&crate::Summary, &[ExprId])> {
        match &self.d.body[c].kind {
            ExprKind::Call {
                callee: Callee::Fn(g),
                args,
            } => Some((self.fn_summary(*g)?, args)),
            _ => None,
        }
    }

    /// Which version call `c` runs (None: not a direct call of a function
    /// with an owning version).
    pub fn call_choice(&self, c: ExprId) -> Option<CallChoice> {
        let (s, args) = self.direct_call(c)?;
        if !s.has_owning() {
            return None;
        }
        for (i, a) in args.iter().enumerate() {
            if s.owns(i) {
                if let Err(why) = self.owned_deep(*a) {
                    let arg = match self.d.body[*a].kind {
                        ExprKind::Local(l) => Some(l),
                        _ => None,
                    };
                    return Some(CallChoice::Sharing {
                        param: i as u32,
                        arg,
                        why,
                    });
                }
            }
        }
        Some(CallChoice::Owning)
    }

    /// Whether the use of a value at `e` (with context `ctx`) is a borrow:
    /// gives the expressions that use what was borrowed from it (the owner
    /// must live until they are done), or why it is not a borrow.
    fn borrow(&self, e: ExprId, ctx: &Ctx, depth: u32) -> Result<Vec<ExprId>, Shared> {
        let body = self.d.body;
        let at = self.at(e);
        if depth > 16 {
            return Err(Shared::PartEscapes(at));
        }
        if is_scalar(&body[e].ty) {
            return Ok(Vec::new());
        }
        let consumer = self.consumer(e);
        let derived = |c: ExprId| -> Result<Vec<ExprId>, Shared> {
            if is_scalar(&body[c].ty) {
                return Ok(vec![c]);
            }
            let ctx = self
                .d
                .facts
                .ctx(c)
                .cloned()
                .ok_or(Shared::PartEscapes(at))?;
            let mut v = self.borrow(c, &ctx, depth + 1)?;
            v.push(c);
            Ok(v)
        };
        match ctx {
            Ctx::Read(Reader::Field | Reader::Indexing) => {
                let (c, _) = consumer.ok_or(Shared::PartEscapes(at))?;
                derived(c)
            }
            Ctx::Read(Reader::Call(f)) => {
                let (c, arg) = consumer.ok_or(Shared::PartEscapes(at))?;
                let ExprKind::Call { args, .. } = &body[c].kind else {
                    return Err(Shared::PartEscapes(at));
                };
                let i = args.iter().position(|a| *a == arg).unwrap_or(usize::MAX);
                let ty = &body[e].ty;
                let ok = if is_cell(ty) {
                    self.fn_summary(*f)
                        .and_then(|s| s.cell_borrowed.get(i))
                        .copied()
                        .unwrap_or(false)
                } else {
                    match ty {
                        Ty::Str => true,
                        Ty::List(el) => is_scalar(el) || **el == Ty::Str,
                        _ => false,
                    }
                };
                if ok {
                    Ok(vec![c])
                } else {
                    Err(Shared::PassedTo {
                        f: *f,
                        param: i as u32,
                        at,
                    })
                }
            }
            Ctx::Read(Reader::Method(_)) => {
                let (c, _) = consumer.ok_or(Shared::PartEscapes(at))?;
                let cty = &body[c].ty;
                let copies = is_scalar(cty)
                    || (*cty == Ty::Str && self.d.fresh(c).is_yes())
                    || matches!(cty, Ty::List(el) if is_scalar(el) && self.d.fresh(c).is_yes());
                if copies {
                    Ok(vec![c])
                } else {
                    Err(Shared::PartEscapes(at))
                }
            }
            // A statement's value thrown away: the use itself is the last.
            Ctx::Read(Reader::DiscardedLet | Reader::DiscardedValue) => Ok(Vec::new()),
            Ctx::Read(
                Reader::Interpolation
                | Reader::Binary(_)
                | Reader::Unary
                | Reader::Builder
                | Reader::Builtin(Builtin::Print | Builtin::Log),
            ) => Ok(consumer.map(|(c, _)| vec![c]).unwrap_or_default()),
            Ctx::Escape(Escape::Matched) => {
                let (m, _) = consumer.ok_or(Shared::PartEscapes(at))?;
                let ExprKind::Match { arms, .. } = &body[m].kind else {
                    return Err(Shared::PartEscapes(at));
                };
                let mut out = vec![m];
                for arm in arms {
                    for y in pat_binds(body, arm.pat) {
                        out.extend(self.alias_borrow(y, depth)?);
                    }
                }
                Ok(out)
            }
            Ctx::Bind(y) => {
                let decl_var = self
                    .d
                    .facts
                    .local(*y)
                    .and_then(|l| l.decl.as_ref())
                    .is_none_or(|d| d.var);
                if decl_var {
                    return Err(Shared::PartEscapes(at));
                }
                // The `let` statement is the use's own position (its
                // "consumer" is the enclosing block).
                self.alias_borrow(*y, depth)
            }
            Ctx::Escape(why) => Err(Shared::Escapes(*why, at)),
            _ => Err(Shared::PartEscapes(at)),
        }
    }

    /// A local bound to a borrowed value (a `let` alias or a pattern
    /// binding): every use of it must be a borrow.
    fn alias_borrow(&self, y: LocalId, depth: u32) -> Result<Vec<ExprId>, Shared> {
        let Some(l) = self.d.facts.local(y) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for u in &l.uses {
            if u.foreign {
                return Err(Shared::InClosure(u.at));
            }
            out.extend(self.borrow(u.expr, &u.ctx, depth + 1)?);
            out.push(u.expr);
        }
        Ok(out)
    }

    /// Whether every use of parameter `p` is a borrow, or its first use
    /// that is not.
    pub fn param_borrowed(&self, p: LocalId) -> Result<(), Shared> {
        let Some(l) = self.d.facts.local(p) else {
            return Ok(());
        };
        for u in &l.uses {
            if u.foreign {
                return Err(Shared::InClosure(u.at));
            }
            self.borrow(u.expr, &u.ctx, 0)?;
        }
        Ok(())
    }

    /// The destructive match of `x` at `m`: tokens, reuses, dead fields.
    pub fn match_plan(&self, x: LocalId, m: ExprId) -> Option<MatchPlan> {
        let body = self.d.body;
        let ExprKind::Match { arms, .. } = &body[m].kind else {
            return None;
        };
        let mut out = Vec::new();
        for arm in arms {
            let mut a = ArmPlan::default();
            // An arm that hands the value on whole (it binds nothing and
            // uses `x` again) leaves it alone.
            let kept = self.kept_in(x, arm.body);
            if !kept.is_empty() && pat_binds(body, arm.pat).is_empty() {
                out.push(a);
                continue;
            }
            let args = match &body[arm.pat].kind {
                PatKind::Wild => {
                    a.drop_whole = true;
                    out.push(a);
                    continue;
                }
                PatKind::Ctor { args, .. } | PatKind::Tuple(args) => args,
                _ => {
                    out.push(a);
                    continue;
                }
            };
            let Some(words) = self.pat_words(arm.pat) else {
                out.push(a);
                continue;
            };
            let nested = self.nested_tokens(args);
            // An arm that hands the value on whole on some paths takes it
            // apart on the others only: its dead fields stay (the value
            // handed on holds them) and its tokens are built in or freed
            // on the other paths alone.
            a.kept = !kept.is_empty();
            if !a.kept {
                self.dead_parts(args, &mut a);
                for (_, inner) in &nested {
                    if let PatKind::Ctor { args, .. } | PatKind::Tuple(args) = &body[*inner].kind {
                        self.dead_parts(args, &mut a);
                    }
                }
            }
            let mut tk = |l: LocalId, class: usize, taken: &[ExprId]| {
                if kept.is_empty() {
                    return self.takers(arm.body, class, taken);
                }
                let (t, roots) = self.kept_takers(arm.body, class, taken, &kept);
                a.roots.push((l, roots));
                (!t.ctors.is_empty() || !t.frees.is_empty()).then_some(t)
            };
            let mut taken = Vec::new();
            let reuse = tk(x, size_class(words), &taken);
            taken.extend(reuse.iter().flat_map(|t| t.ctors.iter().copied()));
            let mut nested_takers = Vec::new();
            for &(l, inner) in &nested {
                let r = self
                    .pat_words(inner)
                    .and_then(|w| tk(l, size_class(w), &taken));
                taken.extend(r.iter().flat_map(|t| t.ctors.iter().copied()));
                nested_takers.push((l, r));
            }
            a.reuse = reuse;
            a.nested = nested_takers;
            // A token reused by a constructor points at its fields until
            // the constructor overwrites it: when the arm may free one of
            // them first (a nested token, a field given to an owning call
            // or taken apart), the reused tokens' fields are cleared at the
            // start of the arm.
            // A token handed to a call is built into after the callee
            // ran, which may free any field: its fields are cleared too.
            let handed = taken
                .iter()
                .any(|c| matches!(body[*c].kind, ExprKind::Call { .. }));
            if !taken.is_empty() && (handed || !nested.is_empty() || self.frees_field(arm, &taken))
            {
                if a.reuse.is_some() {
                    a.clear.push((x, arm.pat));
                }
                for (&(l, inner), (_, r)) in nested.iter().zip(&a.nested) {
                    if r.is_some() {
                        a.clear.push((l, inner));
                    }
                }
            }
            a.free_token = a.reuse.is_none() && !a.kept;
            out.push(a);
        }
        Some(MatchPlan {
            token: x,
            arms: out,
        })
    }

    /// Whether a cell bound by `arm`'s pattern may be freed or reused
    /// before the constructors `taken` are built: a use that may consume it
    /// other than by storing it into one of them or handing it out as the
    /// arm's value.
    fn frees_field(&self, arm: &ir::MatchArm, taken: &[ExprId]) -> bool {
        pat_binds(self.d.body, arm.pat).into_iter().any(|y| {
            is_cell(&self.d.body.locals[y].ty)
                && self.d.facts.local(y).is_some_and(|l| {
                    l.uses.iter().any(|u| {
                        self.consuming(u)
                            && !self.flows_out_of(u.expr, arm.body)
                            && !taken.iter().any(|r| self.stored_into(u.expr, *r))
                            && !self.stored_out_of(u.expr, arm.body)
                    })
                })
        })
    }

    /// The constructors of size class `class` (none of `taken`) that may
    /// be built in a token's block when `e` is evaluated: the first one on
    /// `e`'s straight-line path, or else, where `e`'s value is an `if` or
    /// a `match` (through block tails), one on each branch that has one,
    /// the others freeing the token at their start. None when no path
    /// has one. A path without a constructor whose value is a call of a
    /// version that takes a token of the class hands the token to it.
    fn takers(&self, e: ExprId, class: usize, taken: &[ExprId]) -> Option<Takers> {
        let body = self.d.body;
        if let Some(c) = self.reuse_candidate(e, class, taken) {
            return Some(Takers {
                ctors: vec![c],
                frees: Vec::new(),
                class,
            });
        }
        if !taken.contains(&e) && self.takes_token(e, class) {
            return Some(Takers {
                ctors: vec![e],
                frees: Vec::new(),
                class,
            });
        }
        let branches: Vec<ExprId> = match &body[e].kind {
            ExprKind::Block { tail: Some(t), .. } => return self.takers(*t, class, taken),
            ExprKind::If {
                then,
                else_: Some(el),
                ..
            } => vec![*then, *el],
            ExprKind::Match { arms, .. } => arms.iter().map(|a| a.body).collect(),
            _ => return None,
        };
        let mut out = Takers {
            class,
            ..Takers::default()
        };
        let mut any = false;
        for b in branches {
            match self.takers(b, class, taken) {
                Some(t) => {
                    any = true;
                    out.ctors.extend(t.ctors);
                    out.frees.extend(t.frees);
                }
                None => out.frees.push(b),
            }
        }
        any.then_some(out)
    }

    /// The cells nested patterns among `args` take apart (named by
    /// `cell @ ..`), outermost first: (the name, its pattern).
    fn nested_tokens(&self, args: &[PatId]) -> Vec<(LocalId, PatId)> {
        let body = self.d.body;
        let mut out = Vec::new();
        let mut stack: Vec<PatId> = args.iter().rev().copied().collect();
        while let Some(p) = stack.pop() {
            match &body[p].kind {
                PatKind::At { local, pat } => {
                    let inner: Vec<PatId> = match &body[*pat].kind {
                        PatKind::Ctor { args, .. } | PatKind::Tuple(args) => args.clone(),
                        _ => Vec::new(),
                    };
                    out.push((*local, *pat));
                    stack.extend(inner.into_iter().rev());
                }
                PatKind::Ctor { args, .. } | PatKind::Tuple(args) => {
                    stack.extend(args.iter().rev().copied())
                }
                _ => {}
            }
        }
        out
    }

    /// Words of the block a constructor or tuple pattern matches.
    fn pat_words(&self, p: PatId) -> Option<usize> {
        let body = self.d.body;
        match &body[p].kind {
            PatKind::Ctor { ctor, args } if !args.is_empty() => {
                Some(self.variant_words(*ctor, &body[p].ty))
            }
            PatKind::Tuple(args) => Some(tuple_words(args.iter().map(|q| &body[*q].ty))),
            _ => None,
        }
    }

    /// Words of a block of constructor `c` of a value of type `ty`: the
    /// tag, then its fields.
    fn variant_words(&self, c: Ctor, ty: &Ty) -> usize {
        variant_words(self.items, c, ty)
    }

    /// The fields of a taken-apart cell that die at the start of the arm:
    /// `_` patterns and bindings never used, of a type a drop can free.
    fn dead_parts(&self, args: &[PatId], a: &mut ArmPlan) {
        let body = self.d.body;
        for p in args {
            if field_drop(&body[*p].ty).is_none() || never_block(self.items, &body[*p].ty) {
                continue;
            }
            match &body[*p].kind {
                PatKind::Wild => a.dead_fields.push(*p),
                PatKind::Bind(y) if self.d.facts.local(*y).is_none_or(|l| l.uses.is_empty()) => {
                    a.dead_binds.push(*y)
                }
                _ => {}
            }
        }
    }

    /// Words of the block a constructor expression allocates (None: it
    /// allocates nothing).
    pub fn ctor_words(&self, e: ExprId) -> Option<usize> {
        ctor_words(self.d.body, self.items, e)
    }

    /// The first constructor of size class `class` on the straight-line
    /// path of `e` (evaluated exactly once whenever `e` completes).
    fn reuse_candidate(&self, e: ExprId, class: usize, taken: &[ExprId]) -> Option<ExprId> {
        let body = self.d.body;
        let mut found = None;
        self.spine(e, &mut |x| {
            if found.is_none()
                && !taken.contains(&x)
                && self.ctor_words(x).map(size_class) == Some(class)
            {
                found = Some(x);
            }
        });
        let _ = body;
        found
    }

    /// Visits the expressions evaluated exactly once when `e` completes, in
    /// evaluation order (children before parents).
    fn spine(&self, e: ExprId, f: &mut dyn FnMut(ExprId)) {
        let body = self.d.body;
        match &body[e].kind {
            ExprKind::If { cond, .. } => self.spine(*cond, f),
            ExprKind::Match { scrutinee, .. } => self.spine(*scrutinee, f),
            ExprKind::Lambda { .. } => {}
            ExprKind::Binary {
                op: BinOp::And | BinOp::Or,
                lhs,
                ..
            } => self.spine(*lhs, f),
            ExprKind::Block { stmts, tail } => {
                for s in stmts {
                    match &body[*s].kind {
                        ir::StmtKind::Let { init, .. } | ir::StmtKind::Var { init, .. } => {
                            self.spine(*init, f)
                        }
                        ir::StmtKind::Assign { value, .. } => self.spine(*value, f),
                        ir::StmtKind::Expr(x) => self.spine(*x, f),
                        ir::StmtKind::For { iter, .. } => self.spine(*iter, f),
                        ir::StmtKind::While { .. }
                        | ir::StmtKind::Drop(_)
                        | ir::StmtKind::Clear { .. } => {}
                    }
                }
                if let Some(t) = tail {
                    self.spine(*t, f);
                }
            }
            k => {
                for c in ir::visit::children(k) {
                    self.spine(c, f);
                }
                f(e);
            }
        }
    }
}

/// Field types of constructor `c` of a value of type `ty`.
fn ctor_fields(items: &ItemTree, c: Ctor, ty: &Ty) -> Vec<Ty> {
    match (c, ty) {
        (Ctor::Some, Ty::Option(e)) => vec![(**e).clone()],
        (Ctor::User(t, i), _) => match &items.types[t].kind {
            TypeDefKind::Sum { variants } => variants
                .get(i as usize)
                .map(|v| v.fields.clone())
                .unwrap_or_default(),
            TypeDefKind::Record { fields } => fields.iter().map(|f| f.1.clone()).collect(),
        },
        _ => Vec::new(),
    }
}

/// Words of a block of constructor `c` of a value of type `ty`: the tag,
/// then its fields.
fn variant_words(items: &ItemTree, c: Ctor, ty: &Ty) -> usize {
    1 + ctor_fields(items, c, ty)
        .iter()
        .map(field_words)
        .sum::<usize>()
}

/// Words of the block a constructor expression allocates (None: it
/// allocates nothing).
fn ctor_words(body: &ir::Body, items: &ItemTree, e: ExprId) -> Option<usize> {
    match &body[e].kind {
        ExprKind::Ctor { ctor, args } if !args.is_empty() => {
            Some(variant_words(items, *ctor, &body[e].ty))
        }
        ExprKind::Tuple(xs) => Some(tuple_words(xs.iter().map(|x| &body[*x].ty))),
        ExprKind::Record { ty, .. } => match &items.types[*ty].kind {
            TypeDefKind::Record { fields } => Some(
                fields
                    .iter()
                    .map(|f| field_words(&f.1))
                    .sum::<usize>()
                    .max(1),
            ),
            TypeDefKind::Sum { .. } => None,
        },
        _ => None,
    }
}

/// The size class of the block a constructor expression allocates.
pub fn ctor_class(body: &ir::Body, items: &ItemTree, e: ExprId) -> Option<usize> {
    ctor_words(body, items, e).map(size_class)
}

/// How a drop frees a dead field of type `ty` (the `deep` flag of its
/// drop), or None when it is left to the collector: cells are dropped deep
/// through the type descriptors. A string or list field stays (its drop
/// form would be the list/string one, which treats a block read out of a
/// cell as a second reference).
pub fn field_drop(ty: &Ty) -> Option<bool> {
    is_cell(ty).then_some(true)
}

/// Writes the cell decisions of one body into the plan: deep drops of
/// owned-deep locals, and destructive matches with their reuses.
pub fn plan(c: &Cells, plan: &mut crate::rewrite::Plan, why: &mut Vec<crate::DropReason>) {
    use crate::DropReason as R;
    let body = c.d.body;
    let mut locals: Vec<LocalId> = c.d.facts.locals.keys().copied().collect();
    locals.sort_by_key(|l| l.into_raw().into_u32());
    let reason = |why: &mut Vec<R>, r: R| {
        why.push(r);
        (why.len() - 1) as u32
    };
    let mut exprs: Vec<ExprId> = c.d.facts.exprs.iter().map(|(e, _)| e).collect();
    exprs.sort_by_key(|e| e.into_raw().into_u32());
    for e in exprs {
        if let Some(reader) = temp_read(c, e) {
            let r = reason(why, R::CellTemp(reader));
            plan.temps.insert(e, r);
            plan.deep_temps.insert(e);
        }
        if let (
            Some(CallChoice::Owning),
            ExprKind::Call {
                callee: Callee::Fn(g),
                ..
            },
        ) = (c.call_choice(e), &body[e].kind)
        {
            plan.owning_calls.insert(e, *g);
        }
    }
    let mut vars = Vec::new();
    for x in locals {
        if !is_cell(&body.locals[x].ty) || never_block(c.items, &body.locals[x].ty) {
            continue;
        }
        let Some(lf) = c.d.facts.local(x) else {
            continue;
        };
        let decl = lf.decl.clone();
        let param = c.owned_params.contains(&x);
        if decl.is_none() && !c.binders.contains_key(&x) && !param {
            continue;
        }
        let own = c.own(x);
        if own.is_ok() && decl.as_ref().is_some_and(|d| d.var) {
            vars.push(x);
        }
        let path_drops = c.path_drops.borrow().get(&x).cloned().unwrap_or_default();
        for d in path_drops {
            let r = reason(why, R::CellOtherPath(x));
            match d {
                PathDrop::Start(b) => plan.branch_drops.entry(b).or_default().push((x, r)),
                PathDrop::Else(i) => plan.else_drops.entry(i).or_default().push((x, r)),
                PathDrop::After(b, i) => plan.drops.entry(b).or_default().push((i, x, true, r)),
                PathDrop::End(b) => plan.branch_ends.entry(b).or_default().push((x, r)),
            }
        }
        match own {
            Ok(CellEnd::DropDeep { index, .. }) => match (&decl, c.binders.get(&x)) {
                (Some(decl), _) => {
                    let r = reason(why, R::CellLastUse(x));
                    plan.drops
                        .entry(decl.block)
                        .or_default()
                        .push((index, x, true, r));
                }
                // An owned parameter lives in the body's outer block.
                (None, _) if param => {
                    if let Some(root) = body.root {
                        if matches!(body[root].kind, ExprKind::Block { .. }) {
                            let r = reason(why, R::CellLastUse(x));
                            plan.drops
                                .entry(root)
                                .or_default()
                                .push((index, x, true, r));
                        }
                    }
                }
                // A field never used is dropped by its match (dead_binds).
                (None, Some(&(m, arm, _))) if !lf.uses.is_empty() => {
                    let r = reason(why, R::CellLastUse(x));
                    plan.arm_ends.entry((m, arm)).or_default().push((x, r));
                }
                _ => {}
            },
            Ok(CellEnd::Matched { m, .. }) => {
                let Some(mp) = c.match_plan(x, m) else {
                    continue;
                };
                let mut starts = Vec::new();
                for a in mp.arms {
                    if a.kept {
                        kept_arm(body, plan, why, x, &a);
                        starts.push(crate::rewrite::ArmStart::default());
                        continue;
                    }
                    let mut st = crate::rewrite::ArmStart {
                        // The token's block points at its dead fields until
                        // the constructor overwrites it: free them after.
                        at_end: a.reuse.is_some() || a.nested.iter().any(|n| n.1.is_some()),
                        ..Default::default()
                    };
                    let mut reused = Vec::new();
                    for (l, r) in &a.nested {
                        if take_token(body, plan, why, *l, r.as_ref()) {
                            reused.push(*l);
                        } else {
                            let r = reason(why, R::TokenFreed(*l));
                            st.tokens.push((*l, r));
                        }
                    }
                    for p in a.dead_fields {
                        let r = reason(why, R::DeadField(x));
                        st.fields.push((p, r));
                    }
                    for y in a.dead_binds {
                        let r = reason(why, R::DeadField(x));
                        st.binds.push((y, r));
                    }
                    match &a.reuse {
                        Some(t) if take_token(body, plan, why, x, Some(t)) => reused.push(x),
                        _ if a.drop_whole => {
                            st.token = Some((x, true, reason(why, R::DeadValue(x))));
                        }
                        _ if a.free_token || a.reuse.is_some() => {
                            st.token = Some((x, false, reason(why, R::TokenFreed(x))));
                        }
                        _ => {}
                    }
                    for (l, p) in a.clear {
                        if reused.contains(&l) {
                            let r = reason(why, R::Cleared(l));
                            st.clears.push((l, p, r));
                        }
                    }
                    starts.push(st);
                }
                plan.matches.insert(m, starts);
            }
            _ => {}
        }
    }
    // Var updates last: a constructor a match's token took already is
    // not built in the old value's block too.
    for x in vars {
        update_plan(c, plan, why, x);
    }
}

/// The updates of owned-deep var `x` that only read the value they
/// replace: its block given to the update's constructor, or freed deep
/// after the update (the constructor taken by another token already).
fn update_plan(
    c: &Cells,
    plan: &mut crate::rewrite::Plan,
    why: &mut Vec<crate::DropReason>,
    x: LocalId,
) {
    use crate::DropReason as R;
    let mut done = Vec::new();
    for mut u in c.updates(x) {
        if let OldEnd::Reused { by, moved } = u.old {
            if plan.reuses.contains_key(&by) || plan.token_calls.contains_key(&by) {
                u.old = if moved {
                    OldEnd::FreedBlock(NoReuse::CtorTaken)
                } else {
                    OldEnd::Freed(NoReuse::CtorTaken)
                };
            } else {
                why.push(R::UpdateReused {
                    local: x,
                    by,
                    moved,
                });
                plan.reuses.insert(by, (x, (why.len() - 1) as u32));
            }
        }
        if let OldEnd::Freed(w) | OldEnd::FreedBlock(w) = u.old {
            let deep = matches!(u.old, OldEnd::Freed(_));
            why.push(R::UpdateFreed {
                local: x,
                deep,
                why: w,
            });
            let reason = (why.len() - 1) as u32;
            plan.assigns
                .insert(u.stmt, ir::OldValue::FreeCell { deep, reason });
        }
        done.push(u);
    }
    if !done.is_empty() {
        plan.updates.insert(x, done);
    }
}

/// The tokens of an arm that hands the value on whole on some paths:
/// each is built in or freed on the other paths (where the reused ones'
/// fields are cleared first, when the plan says so), or, when another
/// token took its constructors, freed at the start of each of them.
fn kept_arm(
    body: &ir::Body,
    plan: &mut crate::rewrite::Plan,
    why: &mut Vec<crate::DropReason>,
    x: LocalId,
    a: &ArmPlan,
) {
    use crate::DropReason as R;
    let tokens = a
        .nested
        .iter()
        .map(|(l, r)| (*l, r.as_ref()))
        .chain(std::iter::once((x, a.reuse.as_ref())));
    let roots = |l: LocalId| {
        a.roots
            .iter()
            .filter(|r| r.0 == l)
            .flat_map(|r| r.1.iter().copied())
            .collect::<Vec<_>>()
    };
    let mut reused = Vec::new();
    for (l, t) in tokens {
        let Some(t) = t else { continue };
        if take_token(body, plan, why, l, Some(t)) {
            if !t.ctors.is_empty() {
                reused.push(l);
            }
            continue;
        }
        for b in t.frees.iter().copied().chain(roots(l)) {
            why.push(R::TokenFreedOnPath(l));
            let r = (why.len() - 1) as u32;
            plan.branch_frees.entry(b).or_default().push((l, r));
        }
    }
    for &(l, p) in &a.clear {
        if reused.contains(&l) {
            for b in roots(l) {
                why.push(R::Cleared(l));
                let r = (why.len() - 1) as u32;
                plan.branch_clears.entry(b).or_default().push((l, p, r));
            }
        }
    }
}

/// Gives token `tok` to its constructors (and calls handed it), freeing
/// it at the start of the branches none of them is on (with no
/// constructor: at the start of each branch given). False (nothing
/// planned) when there are none, or another token took one of them
/// already.
fn take_token(
    body: &ir::Body,
    plan: &mut crate::rewrite::Plan,
    why: &mut Vec<crate::DropReason>,
    tok: LocalId,
    takers: Option<&Takers>,
) -> bool {
    use crate::DropReason as R;
    let Some(t) = takers else {
        return false;
    };
    if (t.ctors.is_empty() && t.frees.is_empty())
        || t.ctors
            .iter()
            .any(|c| plan.reuses.contains_key(c) || plan.token_calls.contains_key(c))
    {
        return false;
    }
    let handed = plan.handed_token == Some(tok);
    for &c in &t.ctors {
        if matches!(body[c].kind, ExprKind::Call { .. }) {
            why.push(R::TokenPassed {
                local: tok,
                call: c,
            });
            plan.token_calls
                .insert(c, (tok, t.class, (why.len() - 1) as u32));
        } else {
            why.push(R::Reused { local: tok, by: c });
            plan.reuses.insert(c, (tok, (why.len() - 1) as u32));
        }
    }
    for &b in &t.frees {
        why.push(if handed {
            R::HandedTokenFreed(tok)
        } else {
            R::TokenFreedOnPath(tok)
        });
        let r = (why.len() - 1) as u32;
        plan.branch_frees.entry(b).or_default().push((tok, r));
    }
    true
}

/// The constructors and calls the plan already gave a token to.
fn planned_takers(plan: &crate::rewrite::Plan) -> Vec<ExprId> {
    let mut taken: Vec<ExprId> = plan
        .reuses
        .keys()
        .chain(plan.token_calls.keys())
        .copied()
        .collect();
    taken.sort_by_key(|e| e.into_raw().into_u32());
    taken
}

/// The `#token` version's own token: its last parameter `tok`, a block
/// of size class `class` its caller took apart, given to the first
/// constructor of that class on each path its own tokens left (or handed
/// on to a call), freed at the start of the others.
pub fn hand_token(
    c: &Cells,
    plan: &mut crate::rewrite::Plan,
    why: &mut Vec<crate::DropReason>,
    tok: LocalId,
    class: usize,
) {
    let body = c.d.body;
    let Some(root) = body.root else {
        return;
    };
    plan.handed_token = Some(tok);
    let taken = planned_takers(plan);
    let t = c.takers(root, class, &taken);
    if !take_token(body, plan, why, tok, t.as_ref()) {
        why.push(crate::DropReason::HandedTokenFreed(tok));
        let r = (why.len() - 1) as u32;
        plan.branch_frees.entry(root).or_default().push((tok, r));
    }
}

/// The size classes of tokens the version `c` analyses (with its plan)
/// could build in: of its constructors', those some path through its body
/// has a constructor of that its own tokens did not take (or a call it
/// could hand the token to).
pub fn token_classes(c: &Cells, plan: &crate::rewrite::Plan) -> Vec<usize> {
    let body = c.d.body;
    let Some(root) = body.root else {
        return Vec::new();
    };
    let taken = planned_takers(plan);
    let mut classes: Vec<usize> = body
        .exprs
        .iter()
        .filter_map(|(e, _)| c.ctor_words(e))
        .map(size_class)
        .collect();
    // A call may hand on a token of a class the body never builds.
    classes.extend(c.tokens.iter().flat_map(|t| t.values().flatten().copied()));
    classes.sort_unstable();
    classes.dedup();
    classes.retain(|&k| c.takers(root, k, &taken).is_some());
    classes
}

/// Whether an owned-deep cell `e` that nobody names can be freed whole
/// after its read: the reader keeps nothing of it (a parameter that
/// borrows deep, print, interpolation, a comparison), and `e` allocates.
pub fn temp_read(c: &Cells, e: ExprId) -> Option<Reader> {
    let d = c.d;
    let body = d.body;
    let f = d.facts.exprs.get(e)?;
    if f.transparent || !is_cell(&body[e].ty) || matches!(body[e].kind, ExprKind::Local(_)) {
        return None;
    }
    let Ctx::Read(reader) = &f.ctx else {
        return None;
    };
    let reads = match reader {
        Reader::Call(g) => {
            let p = f.parent?;
            let ExprKind::Call { args, .. } = &body[p].kind else {
                return None;
            };
            let i = args.iter().position(|a| *a == e)?;
            c.fn_summary(*g)
                .and_then(|s| s.cell_borrowed.get(i))
                .copied()
                .unwrap_or(false)
        }
        Reader::Builtin(Builtin::Print | Builtin::Log) | Reader::Interpolation => true,
        Reader::Binary(_) => true,
        _ => false,
    };
    // A value that never allocates (a nullary constructor, `None`) has
    // nothing to free; a reader on a path that does not return never
    // reaches the drop.
    let allocates = !matches!(&body[e].kind, ExprKind::Ctor { args, .. } if args.is_empty());
    let diverges = f.parent.is_some_and(|p| body[p].ty == Ty::Never);
    (reads && allocates && !diverges && c.owned_deep(e).is_ok()).then_some(*reader)
}

/// The locals a pattern binds (`cell @ ..` names included).
pub fn pat_binds(body: &ir::Body, p: PatId) -> Vec<LocalId> {
    let mut out = Vec::new();
    let mut stack = vec![p];
    while let Some(p) = stack.pop() {
        match &body[p].kind {
            PatKind::Bind(x) => out.push(*x),
            PatKind::At { local, pat } => {
                out.push(*local);
                stack.push(*pat);
            }
            PatKind::Tuple(ps) | PatKind::Ctor { args: ps, .. } => stack.extend(ps.iter().copied()),
            _ => {}
        }
    }
    out
}

/// The cell facts of one function's summary.
pub struct CellSummary {
    pub owned_deep_result: bool,
    pub why_not_owned_deep: Option<Shared>,
    pub cell_borrowed: Vec<bool>,
    pub why_not_cell_borrowed: Vec<Option<Shared>>,
    pub owning: Vec<bool>,
    pub why_not_owning: Vec<Option<Shared>>,
    pub owning_result: bool,
    pub why_not_owning_result: Option<Shared>,
}

/// The parameters the owning version of the function `d` analyses owns,
/// by the summaries `d` reads (the function's own included).
pub fn owned_params(f: ir::FnId, d: &Decider) -> HashSet<LocalId> {
    let Some(s) = d.summaries.get(f.into_raw().into_u32() as usize) else {
        return HashSet::new();
    };
    d.body
        .params
        .iter()
        .enumerate()
        .filter(|(i, _)| s.owns(*i))
        .map(|(_, p)| *p)
        .collect()
}

/// Why one of `values` (a function's results) is not owned deep.
fn result_not_owned(c: &Cells, sig: &ir::FnSig) -> Option<Shared> {
    let d = c.d;
    let body = d.body;
    if !is_cell(&sig.ret) || !deep_type(c.items, &sig.ret) {
        return Some(Shared::TypeNotDeep);
    }
    let mut values: Vec<ExprId> = body.root.into_iter().collect();
    for &r in &d.facts.returns {
        if let ExprKind::Return(Some(v)) = &body[r].kind {
            values.push(*v);
        }
    }
    values.into_iter().find_map(|v| c.owned_deep(v).err())
}

/// The cell facts of one function's summary: result owned deep (or why
/// not), per parameter whether the body borrows it deep (or why not), and
/// the owning version's: which parameters it can own and whether its
/// result is owned deep. The owning version is analysed with the
/// parameters the current summaries give it (candidates: cell parameters
/// of a type a deep drop can free, not borrowed deep, not yet refused).
pub fn summarize(items: &ItemTree, f: ir::FnId, d: &Decider) -> CellSummary {
    let sig = &items.fns[f];
    let body = d.body;
    let c = Cells::new(d, items);
    let why_result = result_not_owned(&c, sig);
    let mut borrowed = Vec::new();
    let mut why_not = Vec::new();
    for &p in &body.params {
        let why = if is_cell(&body.locals[p].ty) {
            c.param_borrowed(p).err()
        } else {
            None
        };
        borrowed.push(why.is_none());
        why_not.push(why);
    }
    let prev = d.summaries.get(f.into_raw().into_u32() as usize);
    let candidate = |i: usize, p: LocalId| {
        let ty = &body.locals[p].ty;
        is_cell(ty)
            && deep_type(items, ty)
            && !borrowed[i]
            && prev.is_none_or(|s| s.owning.get(i).copied().unwrap_or(true))
    };
    let owned: HashSet<LocalId> = body
        .params
        .iter()
        .enumerate()
        .filter(|(i, p)| candidate(*i, **p))
        .map(|(_, p)| *p)
        .collect();
    let oc = Cells::owning(d, items, owned.clone());
    let mut owning = Vec::new();
    let mut why_not_owning = Vec::new();
    for (i, &p) in body.params.iter().enumerate() {
        let ty = &body.locals[p].ty;
        let why = if !is_cell(ty) {
            Some(Shared::NotNew)
        } else if !deep_type(items, ty) {
            Some(Shared::TypeNotDeep)
        } else if borrowed[i] {
            // Borrowed deep: the sharing version is as good; whether the
            // owning version could own it is left as it was.
            prev.and_then(|s| s.why_not_owning.get(i).copied().flatten())
        } else if !owned.contains(&p) {
            prev.and_then(|s| s.why_not_owning.get(i).copied().flatten())
                .or(Some(Shared::Cycle))
        } else {
            oc.own(p).err()
        };
        let keep = borrowed[i] && is_cell(ty) && deep_type(items, ty);
        owning.push(if keep {
            prev.is_none_or(|s| s.owning.get(i).copied().unwrap_or(true))
        } else {
            why.is_none()
        });
        why_not_owning.push(why);
    }
    let why_owning_result = if owned.is_empty() {
        why_result
    } else {
        result_not_owned(&oc, sig)
    };
    CellSummary {
        owned_deep_result: why_result.is_none(),
        why_not_owned_deep: why_result,
        cell_borrowed: borrowed,
        why_not_cell_borrowed: why_not,
        owning,
        why_not_owning,
        owning_result: why_owning_result.is_none(),
        why_not_owning_result: why_owning_result,
    }
}
