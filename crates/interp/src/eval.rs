//! The tree-walking evaluator: expressions, statements, patterns, calls and
//! the ownership pass's drop forms.
//!
//! Frames keep their locals on the heap and every non-trivial case of
//! [`Interp::eval`] lives in its own function, so each Sspur call costs a
//! few small Rust frames and a million-deep recursion fits the interpreter
//! thread's stack.

use rt::helpers::io::io_reason;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use ir::{
    BinOp, Body, BodySourceMap, Builtin, Callee, Ctor, ExprId, ExprKind, FnId, InterpPart, Lit,
    LocalId, LocalKind, Method, OldValue, PatId, PatKind, Program, StmtId, StmtKind, Ty, UnOp,
};

use crate::show::{show, show_inner};
use crate::value::{
    BuilderObj, Closure, Key, ListBuf, ListVal, MapObj, Meta, RecVal, Site, StrBlock, StrVal,
    SumVal, Value,
};
use crate::Kind;

/// Why evaluation stopped early.
pub(crate) enum Ctrl {
    Break,
    Continue,
    Return(Value),
    /// A Sspur trap: message and the byte offset it points at.
    Trap(String, u32),
    /// A drop-check violation or an interpreter invariant broken by the IR.
    Fatal(String),
    /// `exit(code)` with a valid code: the program ends here.
    Exit(i32),
}

pub(crate) type R<T> = Result<T, Box<Ctrl>>;

/// Output of the interpreter thread.
pub(crate) enum Msg {
    Out(Vec<u8>),
    Err(Vec<u8>),
}

pub(crate) struct Frame<'p> {
    pub(crate) f: FnId,
    pub(crate) body: &'p Body,
    pub(crate) smap: &'p BodySourceMap,
    pub(crate) locals: Vec<Value>,
    /// Per local, with the oracle on: what was copied out of its value
    /// (see [`Lent`]).
    pub(crate) lent: Vec<Option<Lent>>,
    /// Per local, with the oracle on: pattern bindings not read yet, with
    /// the place they were read from and how often each local that place
    /// reads had been read or set then: a binding never read copies
    /// nothing (see [`Interp::copy_out`]).
    pending: Vec<Option<Pending>>,
    /// Per local, with the oracle on: how often it was read or set.
    reads: Vec<u32>,
}

/// A pattern binding's copy, made at its first read.
type Pending = (ExprId, Value, Vec<(LocalId, u32)>);

#[cold]
fn no_body(prog: &Program, f: FnId) -> Box<Ctrl> {
    Box::new(Ctrl::Fatal(format!(
        "internal error: function `{}` has no body",
        prog.items.fns[f].name
    )))
}

impl<'p> Frame<'p> {
    /// With the oracle on: hands each argument's lent list to its
    /// parameter. Out of line: it is off the path of an ordinary call.
    #[inline(never)]
    fn lend_params(&mut self, lent: Vec<Option<Lent>>) {
        self.lent.resize(self.locals.len(), None);
        for (p, l) in self.body.params.iter().zip(lent) {
            self.lent[idx(*p)] = l;
        }
    }

    /// A closure's frame with captures and arguments bound, and the
    /// lambda's body.
    #[inline(never)]
    fn for_closure(
        prog: &'p Program,
        c: &Closure,
        args: Vec<Value>,
    ) -> Option<(Frame<'p>, ExprId)> {
        let mut fr = Frame::new(prog, c.fn_id);
        let ExprKind::Lambda { params, body, .. } = &fr.body[c.lambda].kind else {
            return None;
        };
        for (l, v) in c.captures.iter() {
            fr.set(*l, v.clone());
        }
        for (p, a) in params.iter().zip(args) {
            fr.set(*p, a);
        }
        Some((fr, *body))
    }

    #[inline(never)]
    fn with_args(prog: &'p Program, f: FnId, args: Vec<Value>) -> Frame<'p> {
        let mut fr = Frame::new(prog, f);
        for (p, a) in fr.body.params.iter().zip(args) {
            fr.locals[idx(*p)] = a;
        }
        fr
    }
    fn new(prog: &'p Program, f: FnId) -> Frame<'p> {
        let body = prog.body(f);
        Frame {
            f,
            body,
            smap: prog.source_map(f),
            locals: vec![Value::Unit; body.locals.len()],
            lent: Vec::new(),
            pending: Vec::new(),
            reads: Vec::new(),
        }
    }
    fn set(&mut self, l: LocalId, v: Value) {
        self.locals[l.into_raw().into_u32() as usize] = v;
        // A new value: nothing has been copied out of it yet.
        if let Some(x) = self.lent.get_mut(idx(l)) {
            *x = None;
        }
        if let Some(x) = self.pending.get_mut(idx(l)) {
            *x = None;
        }
        if let Some(x) = self.reads.get_mut(idx(l)) {
            *x += 1;
        }
    }

    /// How often local `l` was read or set (with the oracle on).
    fn read_count(&mut self, l: LocalId) -> &mut u32 {
        if self.reads.len() < self.locals.len() {
            self.reads.resize(self.locals.len(), 0);
        }
        &mut self.reads[idx(l)]
    }

    /// The list of what was copied out of local `l`'s value.
    fn lent_of(&mut self, l: LocalId) -> Lent {
        if self.lent.len() < self.locals.len() {
            self.lent.resize(self.locals.len(), None);
        }
        self.lent[idx(l)]
            .get_or_insert_with(Default::default)
            .clone()
    }
    fn get(&self, l: LocalId) -> &Value {
        &self.locals[l.into_raw().into_u32() as usize]
    }
}

/// What an active call runs, for trap call chains.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Active {
    Fn(FnId),
    /// A lambda: the function it is written in and its expression.
    Lambda(FnId, ExprId),
}

/// The call offset of `main`'s entry, which no Sspur call made.
pub(crate) const NO_CALL_SITE: u32 = u32::MAX;

/// The message of the trap of too deep a call nesting.
pub(crate) const STACK_OVERFLOW: &str = "stack overflow";

/// Stack kept free below the budget for the work between two calls.
const STACK_MARGIN: usize = 1 << 20;

pub(crate) struct Interp<'p> {
    pub(crate) prog: &'p Program,
    pub(crate) path: &'p str,
    pub(crate) args: &'p [String],
    pub(crate) stdin: Option<&'p str>,
    pub(crate) stdin_taken: bool,
    pub(crate) check: bool,
    pub(crate) out: Vec<u8>,
    pub(crate) tx: std::sync::mpsc::Sender<Msg>,
    pub(crate) depth: usize,
    /// The active Sspur calls, outermost first: what was called and the
    /// byte offset of the call ([`NO_CALL_SITE`] for `main`). A trap leaves
    /// it as it was at the trap, for the call chain.
    pub(crate) calls: Vec<(Active, u32)>,
    pub(crate) stack_base: usize,
    pub(crate) stack_size: usize,
    /// Calls deeper than this trap with `stack overflow` whatever the
    /// stack left (see [`crate::Options::max_depth`]).
    pub(crate) max_depth: usize,
    /// Per [`Kind`]: blocks made, shared, freed by drops, reused in place.
    pub(crate) counts: [Counts; 4],
    /// Whether copies of cells and closures are tracked for the oracle
    /// (see [`Frame::lent`]).
    pub(crate) lending: bool,
    /// The constructor a `reuse` is evaluating, its token and the reuse's
    /// position: the constructor ends the token after its arguments, as
    /// natively (an argument that traps leaves the token unreused).
    pub(crate) reuse: Option<(ExprId, Value, Site)>,
    /// The program's effects (made when first needed) and, per function,
    /// the `enumerate`/`zip` stages whose tuples the native backend never
    /// builds (`ir::fusion::Plan::unbuilt_tuples`): here they are no heap
    /// blocks either, so both backends count the same blocks.
    pub(crate) effects: Option<ir::effects::Effects>,
    pub(crate) unbuilt_tuples: HashMap<FnId, HashSet<ExprId>>,
}

/// The oracle's and the drop counters' figures for one kind of block.
#[derive(Clone, Copy, Default)]
pub(crate) struct Counts {
    pub(crate) allocated: u64,
    pub(crate) shared: u64,
    pub(crate) freed: u64,
    pub(crate) reused: u64,
}

/// Cells and closures copied out of a local's value (bound, stored,
/// returned from it) while that value stays in the local: if the local is
/// read again, the copy and the original were both used, and the blocks
/// are shared. A parameter's list is its argument's, so a read in the
/// caller after the call counts too.
pub(crate) type Lent = Rc<RefCell<Vec<Value>>>;

/// The address of a local: how deep the native stack is right now.
#[inline(never)]
pub(crate) fn stack_pointer() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

fn idx(l: LocalId) -> usize {
    l.into_raw().into_u32() as usize
}

impl<'p> Interp<'p> {
    // ------------------------------------------------------------ helpers

    /// Whether the tuples `enumerate`/`zip` call `e` of function `f` makes
    /// are never built natively (see `unbuilt_tuples`).
    pub(crate) fn tuples_unbuilt(&mut self, f: FnId, e: ExprId) -> bool {
        if !self.unbuilt_tuples.contains_key(&f) {
            let prog = self.prog;
            let effects = self
                .effects
                .get_or_insert_with(|| ir::effects::Effects::of(prog));
            let plan = ir::fusion::Plan::of(prog, effects, f);
            let set = prog
                .body(f)
                .exprs
                .iter()
                .map(|(x, _)| x)
                .filter(|&x| plan.unbuilt_tuples(x).is_some())
                .collect();
            self.unbuilt_tuples.insert(f, set);
        }
        self.unbuilt_tuples[&f].contains(&e)
    }

    pub(crate) fn trap<T>(&self, fr: &Frame, e: ExprId, msg: String) -> R<T> {
        Err(Box::new(Ctrl::Trap(msg, fr.smap.expr(e).start)))
    }

    /// `r`, or the `out of memory` trap at `e` when an allocation made
    /// while evaluating `e` passed a heap limit (limit.rs). Every
    /// expression that allocates passes its result through here, so the
    /// trap names the allocating expression, as natively.
    #[inline]
    pub(crate) fn checked(&self, fr: &Frame, e: ExprId, r: R<Value>) -> R<Value> {
        if r.is_ok() && crate::limit::over() {
            return self.trap(fr, e, "out of memory".into());
        }
        r
    }

    pub(crate) fn pos(&self, offset: u32) -> String {
        let (l, c) = self.prog.line_col(offset);
        format!("{}:{}:{}", self.path, l, c)
    }

    pub(crate) fn site(&self, fr: &Frame, e: ExprId) -> Site {
        Site {
            offset: fr.smap.expr(e).start,
        }
    }

    fn heap_meta(&mut self, site: Site, kind: Kind) -> Meta {
        self.counts[kind.index()].allocated += 1;
        Meta {
            heap: true,
            site,
            shared: std::cell::Cell::new(false),
            dropped: std::cell::Cell::new(None),
        }
    }

    /// A fresh string: a new block unless empty.
    pub(crate) fn new_str(&mut self, text: String, site: Site) -> StrVal {
        if text.is_empty() {
            return StrVal::unowned("");
        }
        let meta = self.heap_meta(site, Kind::Str);
        StrVal {
            view: false,
            len: text.len(),
            blk: Rc::new(StrBlock::new(text.into_boxed_str(), meta)),
            start: 0,
        }
    }

    /// A view of `s` (bytes `a..b`): shares its block, or none if empty.
    pub(crate) fn view(&mut self, s: &StrVal, a: usize, b: usize) -> StrVal {
        if a == b {
            return StrVal::unowned("");
        }
        // A view is not a second reference while it is only bound and
        // read (a view may die before its owner); storing it anywhere is.
        StrVal {
            blk: s.blk.clone(),
            start: s.start + a,
            len: b - a,
            view: true,
        }
    }

    /// A fresh list with capacity equal to its length.
    pub(crate) fn new_list(&mut self, items: Vec<Value>, site: Site) -> ListVal {
        let cap = items.len();
        self.new_list_cap(items, cap, site)
    }

    pub(crate) fn new_list_cap(&mut self, items: Vec<Value>, cap: usize, site: Site) -> ListVal {
        if items.is_empty() {
            return ListVal::empty();
        }
        let len = items.len();
        let meta = self.heap_meta(site, Kind::List);
        ListVal {
            view: false,
            buf: Some(Rc::new(ListBuf::new(items, cap, meta))),
            start: 0,
            len,
            version: 0,
        }
    }

    pub(crate) fn share_meta(&mut self, m: &Meta, kind: Kind) {
        if m.heap && !m.shared.get() {
            m.shared.set(true);
            self.counts[kind.index()].shared += 1;
        }
    }

    /// A second reference to `v`'s block is being made.
    pub(crate) fn share(&mut self, v: &Value) {
        if let Some(m) = v.meta() {
            let kind = match v {
                Value::List(_) => Kind::List,
                _ => Kind::Str,
            };
            self.share_meta(m, kind);
        } else if let Some(m) = v.cell_meta() {
            self.share_flag(&m.shared, m.heap, Kind::Cell);
        } else if let Value::Closure(c) = v {
            self.share_flag(&c.shared, c.heap, Kind::Closure);
        }
    }

    fn share_flag(&mut self, shared: &std::cell::Cell<bool>, heap: bool, kind: Kind) {
        if heap && !shared.get() {
            shared.set(true);
            self.counts[kind.index()].shared += 1;
        }
    }

    /// `v`, read from place `from`, is being bound, stored or returned: a
    /// second reference to its block. A cell or closure, or any value
    /// read out of a cell, is shared only once a local the place reads
    /// from is read again (until then the copy is a move: see [`Lent`]);
    /// a list or string read out of a list or string is shared now.
    pub(crate) fn copy_out(&mut self, fr: &mut Frame<'p>, from: ExprId, v: &Value) {
        let mut roots = Vec::new();
        if !self.lending || !place_roots(fr.body, from, &mut roots) {
            return self.share(v);
        }
        let is_cell = |x: &Value| x.cell_meta().is_some() || matches!(x, Value::Closure(_));
        if !is_cell(v) && !roots.iter().any(|l| is_cell(fr.get(*l))) {
            return self.share(v);
        }
        for l in roots {
            fr.lent_of(l).borrow_mut().push(v.clone());
        }
    }

    /// Pattern binding `l` is read for the first time: its copy is made
    /// now, a second reference already if a local its place reads was
    /// read or set since the binding.
    fn read_pending(&mut self, fr: &mut Frame<'p>, l: LocalId) {
        let Some(Some((place, v, seen))) = fr.pending.get_mut(idx(l)).map(Option::take) else {
            return;
        };
        if seen.iter().any(|&(r, n)| *fr.read_count(r) != n) {
            self.share(&v);
        } else {
            self.copy_out(fr, place, &v);
        }
    }

    /// Binds pattern local `l` to `v`, read from `place`: with the oracle
    /// on, the copy waits for the binding's first read.
    fn bind_from(&mut self, fr: &mut Frame<'p>, l: LocalId, place: ExprId, v: &Value) {
        if !self.lending {
            self.copy_out(fr, place, v);
            fr.set(l, v.clone());
            return;
        }
        fr.set(l, v.clone());
        let mut roots = Vec::new();
        place_roots(fr.body, place, &mut roots);
        let seen = roots.iter().map(|r| (*r, *fr.read_count(*r))).collect();
        if fr.pending.len() < fr.locals.len() {
            fr.pending.resize(fr.locals.len(), None);
        }
        fr.pending[idx(l)] = Some((place, v.clone(), seen));
    }

    /// Local `l` is read: what was copied out of its value is now shared.
    fn read_lent(&mut self, fr: &Frame<'p>, l: LocalId) {
        let Some(Some(lent)) = fr.lent.get(idx(l)) else {
            return;
        };
        let copied = std::mem::take(&mut *lent.borrow_mut());
        for v in &copied {
            self.share(v);
        }
    }

    fn kind_name(v: &Value) -> &'static str {
        match v {
            Value::List(_) => "list buffer",
            _ => "string block",
        }
    }

    /// Frees a cell: its own block, or (`deep`) every block it owns, with
    /// a work list (a long chain does not recurse). Each block counts as
    /// freed by drops. Sharing is not an error here (a borrow ended before
    /// the drop); a later use of any freed block is.
    fn free_cell(&mut self, v: &Value, deep: bool, at: Site) -> R<()> {
        if !deep {
            return self.end_cell(v, at, false);
        }
        let mut work = vec![v.clone()];
        while let Some(x) = work.pop() {
            match &x {
                Value::Str(s) if s.blk.meta.heap && s.len > 0 => {
                    self.end_block(&s.blk.meta, Kind::Str, at)?
                }
                Value::List(l) => {
                    if let Some(m) = l.meta() {
                        self.end_block(m, Kind::List, at)?;
                        work.extend(l.items());
                    }
                }
                _ if x.cell_meta().is_some() => {
                    self.end_cell(&x, at, false)?;
                    work.extend(x.cell_fields().iter().cloned());
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Frees a closure's block (a static one has none); what it captured
    /// is left alone.
    fn free_closure(&mut self, c: &Closure, at: Site) -> R<()> {
        if !c.heap {
            return Ok(());
        }
        if self.check {
            if let Some(d) = c.dropped.get() {
                return Err(Box::new(Ctrl::Fatal(format!(
                    "drop check: second drop at {} of a closure, already dropped at {}",
                    self.pos(at.offset),
                    self.pos(d.offset)
                ))));
            }
        }
        c.dropped.set(Some(at));
        self.counts[Kind::Closure.index()].freed += 1;
        Ok(())
    }

    /// A list buffer or string block a deep drop frees.
    fn end_block(&mut self, m: &Meta, kind: Kind, at: Site) -> R<()> {
        let what = match kind {
            Kind::List => "list buffer",
            _ => "string block",
        };
        if self.check {
            if let Some(d) = m.dropped.get() {
                return Err(Box::new(Ctrl::Fatal(format!(
                    "drop check: second drop at {} of a {what} allocated at {}, already dropped at {}",
                    self.pos(at.offset),
                    self.pos(m.site.offset),
                    self.pos(d.offset)
                ))));
            }
        }
        m.dropped.set(Some(at));
        self.counts[kind.index()].freed += 1;
        Ok(())
    }

    /// Ends a cell's block: freed, or (`reuse`) taken by a constructor.
    pub(crate) fn end_cell(&mut self, v: &Value, at: Site, reuse: bool) -> R<()> {
        let Some(m) = v.cell_meta() else {
            return Ok(());
        };
        if !m.heap {
            return Ok(());
        }
        if self.check {
            if let Some((d, was_reuse)) = m.ended.get() {
                return Err(Box::new(Ctrl::Fatal(format!(
                    "drop check: {} at {} of a cell allocated at {}, already {} at {}",
                    if reuse { "reuse" } else { "second drop" },
                    self.pos(at.offset),
                    self.pos(m.site.offset),
                    if was_reuse { "reused" } else { "dropped" },
                    self.pos(d.offset)
                ))));
            }
        }
        m.ended.set(Some((at, reuse)));
        let c = &mut self.counts[Kind::Cell.index()];
        if reuse {
            c.reused += 1;
        } else {
            c.freed += 1;
        }
        Ok(())
    }

    /// With drops checked: a use of a value that reads all of it (print,
    /// interpolation, comparison) must find every block it reaches live,
    /// not only its outermost one.
    fn check_live_deep(&self, v: &Value) -> R<()> {
        if !self.check {
            return Ok(());
        }
        let mut work = vec![v.clone()];
        while let Some(x) = work.pop() {
            self.check_live(&x)?;
            match &x {
                Value::List(l) => work.extend(l.items()),
                _ => work.extend(x.cell_fields().iter().cloned()),
            }
        }
        Ok(())
    }

    /// With drops checked: a use of a block that a drop form freed.
    fn check_live(&self, v: &Value) -> R<()> {
        if let Some(m) = v.cell_meta() {
            if let Some((d, reuse)) = m.ended.get() {
                return Err(Box::new(Ctrl::Fatal(format!(
                    "drop check: use of a cell allocated at {} after its {} at {}",
                    self.pos(m.site.offset),
                    if reuse { "reuse" } else { "drop" },
                    self.pos(d.offset)
                ))));
            }
        }
        if let Some(m) = v.meta() {
            if let Some(d) = m.dropped.get() {
                return Err(Box::new(Ctrl::Fatal(format!(
                    "drop check: use of a {} allocated at {} after its drop at {}",
                    Self::kind_name(v),
                    self.pos(m.site.offset),
                    self.pos(d.offset)
                ))));
            }
        }
        if let Value::List(l) = v {
            if let Some(at) = l.stale() {
                let alloc = l.meta().map(|m| m.site.offset).unwrap_or(0);
                return Err(Box::new(Ctrl::Fatal(format!(
                    "drop check: use of a list (buffer allocated at {}) after the set in place at {} wrote into its buffer",
                    self.pos(alloc),
                    self.pos(at.offset)
                ))));
            }
        }
        Ok(())
    }

    /// With drops checked: a `set` in place at `at` may only write into a
    /// live, whole list buffer that no second reference was ever made to
    /// (the ownership pass's claim); the old value is consumed.
    pub(crate) fn check_set_in_place(&self, l: &ListVal, at: Site) -> R<()> {
        if !self.check {
            return Ok(());
        }
        let v = Value::List(l.clone());
        self.check_live(&v)?;
        let Some(m) = l.meta() else { return Ok(()) };
        let here = self.pos(at.offset);
        let alloc = self.pos(m.site.offset);
        let why = if v.is_view() {
            "a view into"
        } else if m.shared.get() {
            "a shared"
        } else {
            return Ok(());
        };
        Err(Box::new(Ctrl::Fatal(format!(
            "drop check: set in place at {here} writes into {why} list buffer allocated at {alloc}"
        ))))
    }

    /// Frees the block `v` refers to (a drop form at `at`); with `deep`, a
    /// list's heap strings too. Counts what it frees.
    pub(crate) fn free(&mut self, v: &Value, deep: bool, at: Site) -> R<()> {
        if v.cell_meta().is_some() {
            return self.free_cell(v, deep, at);
        }
        if let Value::Closure(c) = v {
            return self.free_closure(c, at);
        }
        let whole = match v {
            Value::Str(s) => s.is_whole(),
            Value::List(l) => l.is_whole(),
            _ => true,
        };
        let Some(m) = v.meta() else { return Ok(()) };
        if self.check {
            let what = Self::kind_name(v);
            let alloc = self.pos(m.site.offset);
            let here = self.pos(at.offset);
            if let Some(d) = m.dropped.get() {
                return Err(Box::new(Ctrl::Fatal(format!(
                    "drop check: second drop at {here} of a {what} allocated at {alloc}, already dropped at {}",
                    self.pos(d.offset)
                ))));
            }
            if !whole {
                return Err(Box::new(Ctrl::Fatal(format!(
                    "drop check: drop at {here} of a view into a {what} allocated at {alloc}"
                ))));
            }
            if m.shared.get() {
                return Err(Box::new(Ctrl::Fatal(format!(
                    "drop check: drop at {here} of a shared {what} allocated at {alloc}"
                ))));
            }
        }
        m.dropped.set(Some(at));
        let kind = match v {
            Value::List(_) => Kind::List,
            _ => Kind::Str,
        };
        self.counts[kind.index()].freed += 1;
        if deep {
            if let Value::List(l) = v {
                for x in l.items() {
                    if matches!(x, Value::Str(_)) {
                        self.free(&x, false, at)?;
                    }
                }
            }
        }
        Ok(())
    }

    pub(crate) fn flush_out(&mut self) {
        if !self.out.is_empty() {
            let _ = self.tx.send(Msg::Out(std::mem::take(&mut self.out)));
        }
    }

    pub(crate) fn write_err(&mut self, text: String) {
        let _ = self.tx.send(Msg::Err(text.into_bytes()));
    }

    // ------------------------------------------------------------ calls

    /// Counts a call; `Some(trap)` when it would nest too deep.
    #[inline(never)]
    fn enter(&mut self, offset: u32) -> Option<Box<Ctrl>> {
        let used = self.stack_base.saturating_sub(stack_pointer());
        if self.depth >= self.max_depth || used + STACK_MARGIN > self.stack_size {
            return Some(Box::new(Ctrl::Trap(STACK_OVERFLOW.into(), offset)));
        }
        self.depth += 1;
        None
    }

    /// Calls top-level function `f` from the call at byte offset `at`.
    /// Kept lean: it is on the native stack once per Sspur call. The call
    /// stays on `calls` when it ends in an error (a trap's call chain).
    #[inline(never)]
    pub(crate) fn call_fn(&mut self, f: FnId, args: Vec<Value>, at: u32) -> R<Value> {
        self.call_fn_lent(f, args, at, Vec::new())
    }

    /// The arguments of a direct call of `f` and their lent lists. The
    /// reuse token a `#token` version takes last is a block whose fields
    /// were moved out: handing it on reads none of them (no lent list).
    fn eval_fn_args(
        &mut self,
        fr: &mut Frame<'p>,
        f: FnId,
        args: &[ExprId],
    ) -> R<(Vec<Value>, Vec<Option<Lent>>)> {
        let token = match args.split_last() {
            Some((&last, _)) if self.prog.items.fns[f].takes_token => match fr.body[last].kind {
                ExprKind::Local(l) => Some(l),
                _ => None,
            },
            _ => None,
        };
        let Some(tok) = token else {
            let vals = self.eval_args(fr, args)?;
            let lent = self.args_lent(fr, args);
            return Ok((vals, lent));
        };
        let front = &args[..args.len() - 1];
        let mut vals = self.eval_args(fr, front)?;
        let v = fr.get(tok).clone();
        if self.check {
            self.check_live(&v)?;
        }
        vals.push(v);
        let mut lent = self.args_lent(fr, front);
        if !lent.is_empty() {
            lent.push(None);
        }
        Ok((vals, lent))
    }

    /// With the oracle on, per argument: the lent list of the local it
    /// reads from, which becomes its parameter's (see [`Lent`]).
    fn args_lent(&mut self, fr: &mut Frame<'p>, args: &[ExprId]) -> Vec<Option<Lent>> {
        if !self.lending {
            return Vec::new();
        }
        args.iter()
            .map(|a| {
                let mut roots = Vec::new();
                place_roots(fr.body, *a, &mut roots);
                roots.first().map(|l| fr.lent_of(*l))
            })
            .collect()
    }

    fn call_fn_lent(
        &mut self,
        f: FnId,
        args: Vec<Value>,
        at: u32,
        lent: Vec<Option<Lent>>,
    ) -> R<Value> {
        self.calls.push((Active::Fn(f), at));
        if let Some(c) = self.enter(self.prog.fn_span(f).start) {
            return Err(c);
        }
        let mut fr = Frame::with_args(self.prog, f, args);
        if !lent.is_empty() {
            fr.lend_params(lent);
        }
        let Some(root) = fr.body.root else {
            return Err(no_body(self.prog, f));
        };
        let r = self.eval(&mut fr, root);
        let r = self.finish_call(&mut fr, root, r);
        self.depth -= 1;
        if r.is_ok() {
            self.calls.pop();
        }
        r
    }

    /// Turns the body's result into the call's: `return` ends here, and a
    /// parameter or element handed back is a second reference.
    #[inline(never)]
    fn finish_call(&mut self, fr: &mut Frame<'p>, root: ExprId, r: R<Value>) -> R<Value> {
        match r {
            Ok(v) => {
                self.returned(fr, root, &v);
                Ok(v)
            }
            Err(c) => match *c {
                Ctrl::Return(v) => Ok(v),
                Ctrl::Break | Ctrl::Continue => Err(Box::new(Ctrl::Fatal(
                    "internal error: break or continue outside a loop".into(),
                ))),
                other => Err(Box::new(other)),
            },
        }
    }

    /// Calls a function value (a top-level function or a closure).
    #[inline(never)]
    pub(crate) fn call_value(&mut self, f: &Value, args: Vec<Value>, at: u32) -> R<Value> {
        match f {
            Value::Func(id) => self.call_fn(*id, args, at),
            Value::Closure(c) => self.call_closure(c.clone(), args, at),
            _ => Err(Box::new(Ctrl::Fatal(
                "internal error: call of a value that is not a function".into(),
            ))),
        }
    }

    #[inline(never)]
    fn call_closure(&mut self, c: Rc<Closure>, args: Vec<Value>, at: u32) -> R<Value> {
        let (mut fr, body) = match Frame::for_closure(self.prog, &c, args) {
            Some(x) => x,
            None => return Err(type_error("closure without a lambda")),
        };
        if self.check {
            if let Some(d) = c.dropped.get() {
                return Err(Box::new(Ctrl::Fatal(format!(
                    "drop check: call of a closure made at {} after its drop at {}",
                    self.pos(fr.smap.expr(c.lambda).start),
                    self.pos(d.offset)
                ))));
            }
        }
        self.calls.push((Active::Lambda(c.fn_id, c.lambda), at));
        if let Some(c) = self.enter(fr.smap.expr(c.lambda).start) {
            return Err(c);
        }
        let r = self.eval(&mut fr, body);
        let r = self.finish_call(&mut fr, body, r);
        self.depth -= 1;
        if r.is_ok() {
            self.calls.pop();
        }
        r
    }

    // ------------------------------------------------------------ expressions

    /// Evaluates `e`. Tails of `if` and blocks loop here instead of
    /// recursing, and every other case is one call, so this frame stays
    /// small.
    // Explicit matches instead of `?`: they keep this frame smaller in
    // unoptimised builds, where it decides how deep programs can recurse.
    #[allow(clippy::question_mark)]
    pub(crate) fn eval(&mut self, fr: &mut Frame<'p>, mut e: ExprId) -> R<Value> {
        let body = fr.body;
        loop {
            match &body[e].kind {
                ExprKind::If { cond, then, else_ } => {
                    let c = match self.eval_cond(fr, *cond) {
                        Ok(c) => c,
                        Err(c) => return Err(c),
                    };
                    if c {
                        e = *then;
                    } else {
                        match else_ {
                            Some(x) => e = *x,
                            None => return Ok(Value::Unit),
                        }
                    }
                }
                ExprKind::Block { stmts, tail } => {
                    if let Some(c) = self.exec_stmts(fr, stmts) {
                        return Err(c);
                    }
                    match tail {
                        Some(t) => e = *t,
                        None => return Ok(Value::Unit),
                    }
                }
                ExprKind::Match { scrutinee, arms } => {
                    e = match self.select_arm(fr, *scrutinee, arms) {
                        Ok(b) => b,
                        Err(c) => return Err(c),
                    };
                }
                ExprKind::Call { callee, args } => return self.eval_call(fr, e, callee, args),
                ExprKind::Binary {
                    op: op @ (BinOp::And | BinOp::Or),
                    lhs,
                    rhs,
                } => {
                    let l = match self.eval_cond(fr, *lhs) {
                        Ok(l) => l,
                        Err(c) => return Err(c),
                    };
                    if l == (*op == BinOp::Or) {
                        return Ok(Value::Bool(l));
                    }
                    e = *rhs;
                }
                ExprKind::Binary { op, lhs, rhs } => {
                    return self.eval_binary(fr, e, *op, *lhs, *rhs)
                }
                ExprKind::Method {
                    method,
                    receiver,
                    args,
                } => return crate::methods::eval_method(self, fr, e, *method, *receiver, args),
                ExprKind::Local(l) => return self.eval_local(fr, *l),
                _ => return self.eval_other(fr, e),
            }
        }
    }

    #[inline(never)]
    fn eval_cond(&mut self, fr: &mut Frame<'p>, c: ExprId) -> R<bool> {
        Ok(self.eval(fr, c)?.as_bool())
    }

    #[inline(never)]
    fn eval_local(&mut self, fr: &mut Frame<'p>, l: LocalId) -> R<Value> {
        if self.lending {
            *fr.read_count(l) += 1;
            self.read_lent(fr, l);
            self.read_pending(fr, l);
        }
        let v = fr.get(l).clone();
        if self.check {
            self.check_live(&v)?;
        }
        Ok(v)
    }

    #[inline(never)]
    fn exec_stmts(&mut self, fr: &mut Frame<'p>, stmts: &[StmtId]) -> Option<Box<Ctrl>> {
        for s in stmts {
            if let Err(c) = self.exec(fr, *s) {
                return Some(c);
            }
        }
        None
    }

    /// Every case without a tail. Each case that evaluates subexpressions
    /// has its own function, so deep recursion through records,
    /// constructors or `return` only carries that case's frame.
    #[inline(never)]
    fn eval_other(&mut self, fr: &mut Frame<'p>, e: ExprId) -> R<Value> {
        let body = fr.body;
        let r = match &body[e].kind {
            ExprKind::Missing => Err(Box::new(Ctrl::Fatal(
                "internal error: evaluating an expression that failed to check".into(),
            ))),
            ExprKind::Lit(l) => Ok(lit_value(l)),
            ExprKind::Func(f) => Ok(Value::Func(*f)),
            ExprKind::Break => Err(Box::new(Ctrl::Break)),
            ExprKind::Continue => Err(Box::new(Ctrl::Continue)),
            ExprKind::Interp(parts) => self.eval_interp(fr, e, parts),
            ExprKind::Unary { op, operand } => self.eval_unary(fr, *op, *operand),
            ExprKind::Index { base, index } => self.eval_index(fr, e, *base, *index),
            ExprKind::Field { base, index } => self.eval_field(fr, *base, *index),
            ExprKind::Record { ty, fields } => self.eval_record(fr, e, *ty, fields),
            ExprKind::Tuple(xs) => self.eval_tuple(fr, e, xs),
            ExprKind::Ctor { ctor, args } => self.eval_ctor(fr, e, *ctor, args),
            ExprKind::Reuse { token, value, .. } => self.eval_reuse(fr, e, *token, *value),
            ExprKind::List(xs) => self.eval_list(fr, e, xs),
            ExprKind::Range { lo, hi } => self.eval_range(fr, e, *lo, *hi),
            ExprKind::Lambda { captures, .. } => self.eval_lambda(fr, e, captures, true),
            ExprKind::Return(x) => self.eval_return(fr, *x),
            ExprKind::PutOwnedKey { map, key, value } => {
                self.eval_put_owned(fr, e, *map, *key, *value)
            }
            ExprKind::SetInPlace {
                list, index, value, ..
            } => {
                let l = self.eval(fr, *list)?;
                let i = self.eval(fr, *index)?;
                let v = self.eval(fr, *value)?;
                crate::methods::set_in_place(self, fr, e, *value, l, i, v)
            }
            ExprKind::BuilderNew { .. }
            | ExprKind::BuilderPush { .. }
            | ExprKind::BuilderFinish { .. } => self.eval_builder(fr, e),
            // Handled in `eval`.
            ExprKind::Local(_)
            | ExprKind::Call { .. }
            | ExprKind::Method { .. }
            | ExprKind::Binary { .. }
            | ExprKind::If { .. }
            | ExprKind::Match { .. }
            | ExprKind::Block { .. } => self.eval(fr, e),
        };
        self.checked(fr, e, r)
    }

    #[inline(never)]
    fn eval_interp(&mut self, fr: &mut Frame<'p>, e: ExprId, parts: &[InterpPart]) -> R<Value> {
        let mut text = String::new();
        for p in parts {
            let before = text.len();
            match p {
                InterpPart::Text(t) => text.push_str(t),
                InterpPart::Expr(x) => {
                    let v = self.eval(fr, *x)?;
                    self.check_live_deep(&v)?;
                    show(&self.prog.items, &v, &mut text);
                }
            }
            // The native builder checks the limit as it grows.
            if text.len() > before && !crate::limit::str_fits(text.len() as u128) {
                return self.trap(fr, e, "out of memory".into());
            }
        }
        let site = self.site(fr, e);
        Ok(Value::Str(self.new_str(text, site)))
    }

    #[inline(never)]
    fn eval_unary(&mut self, fr: &mut Frame<'p>, op: UnOp, operand: ExprId) -> R<Value> {
        let v = self.eval(fr, operand)?;
        Ok(match (op, v) {
            (UnOp::Neg, Value::Int(i)) => Value::Int(i.wrapping_neg()),
            (UnOp::Neg, Value::F64(f)) => Value::F64(-f),
            (UnOp::Not, Value::Bool(b)) => Value::Bool(!b),
            _ => return Err(type_error("unary operator")),
        })
    }

    #[inline(never)]
    fn eval_field(&mut self, fr: &mut Frame<'p>, base: ExprId, index: u32) -> R<Value> {
        let v = self.eval(fr, base)?;
        if self.check {
            self.check_live(&v)?;
        }
        let i = index as usize;
        match &v {
            Value::Record(r) => r.fields.get(i).cloned(),
            Value::Tuple(t) => t.get(i).cloned(),
            _ => None,
        }
        .ok_or_else(|| type_error("field access"))
    }

    #[inline(never)]
    fn eval_record(
        &mut self,
        fr: &mut Frame<'p>,
        e: ExprId,
        ty: ir::TypeId,
        fields: &[(u32, ExprId)],
    ) -> R<Value> {
        let n = match &self.prog.items.types[ty].kind {
            ir::TypeDefKind::Record { fields } => fields.len(),
            ir::TypeDefKind::Sum { .. } => 0,
        };
        let mut vals = vec![Value::Unit; n.max(fields.len())];
        for (i, x) in fields {
            let v = self.eval_stored(fr, *x)?;
            if let Some(slot) = vals.get_mut(*i as usize) {
                *slot = v;
            }
        }
        self.take_reuse(e)?;
        let site = self.site(fr, e);
        Ok(Value::Record(Rc::new(RecVal::new(ty, vals.into(), site))))
    }

    #[inline(never)]
    fn eval_tuple(&mut self, fr: &mut Frame<'p>, e: ExprId, xs: &[ExprId]) -> R<Value> {
        let vals = self.eval_all_stored(fr, xs)?;
        self.take_reuse(e)?;
        Ok(Value::tuple(vals, self.site(fr, e)))
    }

    #[inline(never)]
    fn eval_ctor(
        &mut self,
        fr: &mut Frame<'p>,
        e: ExprId,
        ctor: Ctor,
        args: &[ExprId],
    ) -> R<Value> {
        let mut vals = self.eval_all_stored(fr, args)?;
        self.take_reuse(e)?;
        let site = self.site(fr, e);
        Ok(match ctor {
            Ctor::Some => Value::some(vals.pop().unwrap_or(Value::Unit), site),
            Ctor::None => Value::None,
            Ctor::User(ty, variant) => {
                Value::Sum(Rc::new(SumVal::new(ty, variant, vals.into(), site)))
            }
        })
    }

    /// A constructor built in the block of `token`, a cell a destructive
    /// match took apart: with drops checked, the token must still be live
    /// and is marked reused (any later use of it is an error).
    #[inline(never)]
    fn eval_reuse(
        &mut self,
        fr: &mut Frame<'p>,
        e: ExprId,
        token: LocalId,
        value: ExprId,
    ) -> R<Value> {
        let tok = fr.get(token).clone();
        let at = self.site(fr, e);
        // Saved and restored: an argument of the constructor may itself be
        // built in another token's block.
        let outer = self.reuse.replace((value, tok, at));
        let r = self.eval(fr, value);
        self.reuse = outer;
        r
    }

    /// Called by constructor `e` once its arguments are evaluated: when `e`
    /// is the value of the `reuse` being evaluated, its token is reused.
    fn take_reuse(&mut self, e: ExprId) -> R<()> {
        match self.reuse.take() {
            Some((ce, tok, at)) if ce == e => self.end_cell(&tok, at, true),
            other => {
                self.reuse = other;
                Ok(())
            }
        }
    }

    #[inline(never)]
    fn eval_list(&mut self, fr: &mut Frame<'p>, e: ExprId, xs: &[ExprId]) -> R<Value> {
        let vals = self.eval_all_stored(fr, xs)?;
        let site = self.site(fr, e);
        Ok(Value::List(self.new_list(vals, site)))
    }

    #[inline(never)]
    fn eval_range(&mut self, fr: &mut Frame<'p>, e: ExprId, lo: ExprId, hi: ExprId) -> R<Value> {
        let lo = self.eval(fr, lo)?.as_int();
        let hi = self.eval(fr, hi)?.as_int();
        let n = (hi as i128 - lo as i128).max(0);
        if n > (1 << 32) || !crate::limit::list_fits(n as u128, 8) {
            return self.trap(fr, e, "out of memory".into());
        }
        let mut vals: Vec<Value> = Vec::new();
        if !crate::limit::reserve(&mut vals, n as usize) {
            return self.trap(fr, e, "out of memory".into());
        }
        vals.extend((lo..hi).map(Value::Int));
        let site = self.site(fr, e);
        Ok(Value::List(self.new_list(vals, site)))
    }

    #[inline(never)]
    /// A closure value; `heap` is false for one that lives in the caller's
    /// frame natively (see `eval_method_args`).
    fn eval_lambda(
        &mut self,
        fr: &mut Frame<'p>,
        e: ExprId,
        captures: &[LocalId],
        heap: bool,
    ) -> R<Value> {
        let mut caps = Vec::with_capacity(captures.len());
        for l in captures {
            let v = fr.get(*l).clone();
            if self.check {
                self.check_live(&v)?;
            }
            self.share(&v);
            caps.push((*l, v));
        }
        Ok(Value::Closure(Rc::new(Closure::new(
            fr.f,
            e,
            caps.into(),
            heap,
        ))))
    }

    /// Evaluates the scrutinee and picks the arm whose pattern matches
    /// (binding it); `eval` then continues with the arm's body.
    #[inline(never)]
    fn select_arm(
        &mut self,
        fr: &mut Frame<'p>,
        scrutinee: ExprId,
        arms: &[ir::MatchArm],
    ) -> R<ExprId> {
        let v = self.eval(fr, scrutinee)?;
        if self.check {
            self.check_live(&v)?;
        }
        let share = if is_place(fr.body, scrutinee) {
            Binding::From(scrutinee)
        } else {
            Binding::Move
        };
        for arm in arms {
            if self.match_pat(fr, arm.pat, &v, share) {
                return Ok(arm.body);
            }
        }
        Err(Box::new(Ctrl::Fatal(
            "internal error: no match arm matched".into(),
        )))
    }

    #[inline(never)]
    fn eval_return(&mut self, fr: &mut Frame<'p>, x: Option<ExprId>) -> R<Value> {
        let v = match x {
            Some(x) => {
                let v = self.eval(fr, x)?;
                self.returned(fr, x, &v);
                v
            }
            None => Value::Unit,
        };
        Err(Box::new(Ctrl::Return(v)))
    }

    #[inline(never)]
    fn eval_put_owned(
        &mut self,
        fr: &mut Frame<'p>,
        e: ExprId,
        map: ExprId,
        key: ExprId,
        value: ExprId,
    ) -> R<Value> {
        let m = self.eval(fr, map)?;
        let k = self.eval(fr, key)?;
        let v = self.eval_stored(fr, value)?;
        let Value::Map(mm) = &m else {
            return Err(type_error("put on a non-map"));
        };
        let key_of = Key::of(&k).ok_or_else(|| type_error("map key"))?;
        let present = mm.borrow_mut().put(key_of, k.clone(), v);
        if present {
            let site = self.site(fr, e);
            self.free(&k, false, site)?;
        }
        Ok(m)
    }

    #[inline(never)]
    fn eval_builder(&mut self, fr: &mut Frame<'p>, e: ExprId) -> R<Value> {
        let body = fr.body;
        match &body[e].kind {
            ExprKind::BuilderNew { sep } => Ok(Value::Builder(Rc::new(RefCell::new(BuilderObj {
                text: String::new(),
                sep: sep.as_str().into(),
                pieces: 0,
                // The native builder block: eight words.
                charge: crate::limit::Charge::new(64, crate::limit::real(64)),
            })))),
            ExprKind::BuilderPush { builder, value } => {
                let v = self.eval(fr, *value)?;
                let Value::Builder(b) = fr.get(*builder).clone() else {
                    return Err(type_error("builder_push on a non-builder"));
                };
                {
                    let mut b = b.borrow_mut();
                    let b = &mut *b;
                    let before = b.text.capacity();
                    if b.pieces > 0 {
                        b.text.push_str(&b.sep);
                    }
                    b.pieces += 1;
                    if let Value::Str(s) = &v {
                        b.text.push_str(s.as_str());
                    }
                    let grown = b.text.capacity() - before;
                    b.charge.grow(grown, grown);
                }
                Ok(Value::Builder(b))
            }
            ExprKind::BuilderFinish { builder } => {
                let Value::Builder(b) = fr.get(*builder).clone() else {
                    return Err(type_error("builder_finish on a non-builder"));
                };
                let text = b.borrow().text.clone();
                let site = self.site(fr, e);
                Ok(Value::Str(self.new_str(text, site)))
            }
            _ => Err(type_error("builder form")),
        }
    }

    /// `v`, the value of `x`, is returned from a function or lambda: a
    /// parameter, field or element handed back is a second reference.
    fn returned(&mut self, fr: &mut Frame<'p>, x: ExprId, v: &Value) {
        if v.is_view() {
            self.share(v);
        } else if escapes_on_return(fr.body, x) {
            self.copy_out(fr, x, v);
        }
    }

    /// Evaluates a value about to be stored into a container: one read
    /// from a place makes a second reference.
    pub(crate) fn eval_stored(&mut self, fr: &mut Frame<'p>, x: ExprId) -> R<Value> {
        let v = self.eval(fr, x)?;
        self.stored(fr, x, &v);
        Ok(v)
    }

    /// `v`, the value of `x`, is bound or stored: a view, or a value read
    /// from a place, makes a second reference.
    pub(crate) fn stored(&mut self, fr: &mut Frame<'p>, x: ExprId, v: &Value) {
        if v.is_view() {
            self.share(v);
        } else if is_place(fr.body, x) {
            self.copy_out(fr, x, v);
        }
    }

    fn eval_all_stored(&mut self, fr: &mut Frame<'p>, xs: &[ExprId]) -> R<Vec<Value>> {
        let mut vals = Vec::with_capacity(xs.len());
        for x in xs {
            vals.push(self.eval_stored(fr, *x)?);
        }
        Ok(vals)
    }

    /// A method's arguments: a capturing lambda passed as a function
    /// parameter lives in the caller's frame natively, so its closure is
    /// not a heap block here either.
    pub(crate) fn eval_method_args(
        &mut self,
        fr: &mut Frame<'p>,
        m: ir::Method,
        xs: &[ExprId],
    ) -> R<Vec<Value>> {
        let mut vals = Vec::with_capacity(xs.len());
        for (i, &x) in xs.iter().enumerate() {
            let v = match &fr.body[x].kind {
                ExprKind::Lambda { captures, .. }
                    if ir::fusion::frame_lambda_arg(fr.body, m, i, x) =>
                {
                    self.eval_lambda(fr, x, captures, false)?
                }
                _ => self.eval(fr, x)?,
            };
            vals.push(v);
        }
        Ok(vals)
    }

    pub(crate) fn eval_args(&mut self, fr: &mut Frame<'p>, xs: &[ExprId]) -> R<Vec<Value>> {
        let mut vals = Vec::with_capacity(xs.len());
        for x in xs {
            vals.push(self.eval(fr, *x)?);
        }
        Ok(vals)
    }

    #[inline(never)]
    fn eval_call(
        &mut self,
        fr: &mut Frame<'p>,
        e: ExprId,
        callee: &Callee,
        args: &[ExprId],
    ) -> R<Value> {
        match callee {
            Callee::Fn(f) => match self.eval_fn_args(fr, *f, args) {
                Ok((vals, lent)) => self.call_fn_lent(*f, vals, fr.smap.expr(e).start, lent),
                Err(c) => Err(c),
            },
            _ => self.eval_call_other(fr, e, callee, args),
        }
    }

    #[inline(never)]
    fn eval_call_indirect(
        &mut self,
        fr: &mut Frame<'p>,
        e: ExprId,
        c: ExprId,
        args: &[ExprId],
    ) -> R<Value> {
        let f = self.eval(fr, c)?;
        let vals = self.eval_args(fr, args)?;
        self.call_value(&f, vals, fr.smap.expr(e).start)
    }

    #[inline(never)]
    fn eval_call_other(
        &mut self,
        fr: &mut Frame<'p>,
        e: ExprId,
        callee: &Callee,
        args: &[ExprId],
    ) -> R<Value> {
        match callee {
            Callee::Fn(f) => {
                let (vals, lent) = self.eval_fn_args(fr, *f, args)?;
                self.call_fn_lent(*f, vals, fr.smap.expr(e).start, lent)
            }
            Callee::Value(c) => self.eval_call_indirect(fr, e, *c, args),
            Callee::Builtin(b) => {
                let vals = self.eval_args(fr, args)?;
                let r = self.eval_builtin(fr, e, *b, vals);
                self.checked(fr, e, r)
            }
        }
    }

    fn eval_builtin(
        &mut self,
        fr: &Frame<'p>,
        e: ExprId,
        b: Builtin,
        vals: Vec<Value>,
    ) -> R<Value> {
        let mut vals = vals.into_iter();
        let arg = vals.next().unwrap_or(Value::Unit);
        match b {
            Builtin::Print => {
                self.check_live_deep(&arg)?;
                let mut s = String::new();
                show(&self.prog.items, &arg, &mut s);
                s.push('\n');
                self.out.extend_from_slice(s.as_bytes());
                if self.out.len() >= 1 << 16 {
                    self.flush_out();
                }
                Ok(Value::Unit)
            }
            Builtin::Log | Builtin::Eprint => {
                let mut s = String::new();
                show(&self.prog.items, &arg, &mut s);
                s.push('\n');
                if b == Builtin::Eprint {
                    self.flush_out();
                }
                self.write_err(s);
                Ok(Value::Unit)
            }
            Builtin::Exit => {
                let code = match arg {
                    Value::Int(c) => c,
                    _ => return Err(type_error("exit code")),
                };
                match rt::helpers::io::exit_code(code) {
                    Ok(c) => Err(Box::new(Ctrl::Exit(c))),
                    Err(msg) => self.trap(fr, e, msg),
                }
            }
            Builtin::WriteFile | Builtin::AppendFile => {
                let (Value::Str(path), Some(Value::Str(text))) = (&arg, vals.next()) else {
                    return Err(type_error("write_file arguments"));
                };
                let append = b == Builtin::AppendFile;
                match rt::helpers::io::write_text(path.as_str(), text.as_str().as_bytes(), append) {
                    Ok(()) => Ok(Value::None),
                    Err(msg) => {
                        let site = self.site(fr, e);
                        let s = Value::Str(self.new_str(msg, site));
                        Ok(Value::some(s, site))
                    }
                }
            }
            Builtin::ReadLines => {
                let text = self.stdin_text(fr, e)?;
                let site = self.site(fr, e);
                let lines: Vec<Value> = text
                    .lines()
                    .map(|l| Value::Str(self.new_str(l.to_string(), site)))
                    .collect();
                Ok(Value::List(self.new_list(lines, site)))
            }
            Builtin::EmptyMap => Ok(Value::Map(Rc::new(RefCell::new(MapObj::default())))),
            Builtin::Trap => {
                let msg = match &arg {
                    Value::Str(s) => s.as_str().to_string(),
                    _ => String::new(),
                };
                self.trap(fr, e, msg)
            }
            Builtin::Args => {
                let vals: Vec<Value> = self
                    .args
                    .iter()
                    .map(|a| Value::Str(StrVal::unowned(a)))
                    .collect();
                let site = self.site(fr, e);
                Ok(Value::List(self.new_list(vals, site)))
            }
            Builtin::ReadFile => {
                let path = match &arg {
                    Value::Str(s) => s.as_str().to_string(),
                    _ => String::new(),
                };
                let bytes = match std::fs::read(&path) {
                    Ok(b) => b,
                    Err(err) => {
                        return self.trap(
                            fr,
                            e,
                            format!("cannot read file {path:?}: {}", io_reason(&err)),
                        )
                    }
                };
                match String::from_utf8(bytes) {
                    Ok(text) => {
                        let site = self.site(fr, e);
                        Ok(Value::Str(self.new_str(text, site)))
                    }
                    Err(_) => self.trap(fr, e, format!("not valid UTF-8: {path}")),
                }
            }
            Builtin::ReadStdin => {
                let text = self.stdin_text(fr, e)?;
                let site = self.site(fr, e);
                Ok(Value::Str(self.new_str(text, site)))
            }
        }
    }

    /// The rest of stdin (all of it the first time, then nothing); traps
    /// when it cannot be read or is not UTF-8.
    fn stdin_text(&mut self, fr: &Frame<'p>, e: ExprId) -> R<String> {
        {
            {
                let bytes = if self.stdin_taken {
                    Vec::new()
                } else {
                    self.stdin_taken = true;
                    match self.stdin {
                        Some(s) => s.as_bytes().to_vec(),
                        None => {
                            let mut buf = Vec::new();
                            use std::io::Read;
                            if let Err(err) = std::io::stdin().lock().read_to_end(&mut buf) {
                                return self.trap(
                                    fr,
                                    e,
                                    format!("cannot read file \"stdin\": {}", io_reason(&err)),
                                );
                            }
                            buf
                        }
                    }
                };
                match String::from_utf8(bytes) {
                    Ok(text) => Ok(text),
                    Err(_) => self.trap(fr, e, "not valid UTF-8: stdin".into()),
                }
            }
        }
    }

    #[inline(never)]
    #[allow(clippy::question_mark)] // see `eval`
    fn eval_binary(
        &mut self,
        fr: &mut Frame<'p>,
        e: ExprId,
        op: BinOp,
        lhs: ExprId,
        rhs: ExprId,
    ) -> R<Value> {
        let l = match self.eval(fr, lhs) {
            Ok(v) => v,
            Err(c) => return Err(c),
        };
        match self.eval(fr, rhs) {
            Ok(r) => self.binop_checked(fr, e, op, l, r),
            Err(c) => Err(c),
        }
    }

    /// Out of line so that `eval_binary`, which is on the native stack
    /// while its right operand (often a call) runs, keeps a small frame.
    #[inline(never)]
    fn binop_checked(
        &mut self,
        fr: &Frame<'p>,
        e: ExprId,
        op: BinOp,
        l: Value,
        r: Value,
    ) -> R<Value> {
        let v = self.binop(fr, e, op, l, r);
        self.checked(fr, e, v)
    }

    #[inline(never)]
    fn binop(&mut self, fr: &Frame<'p>, e: ExprId, op: BinOp, l: Value, r: Value) -> R<Value> {
        if l.cell_meta().is_some() || matches!(l, Value::List(_)) {
            // A comparison reads both values whole.
            self.check_live_deep(&l)?;
            self.check_live_deep(&r)?;
        }
        let v = match (&l, &r) {
            (Value::Int(a), Value::Int(b)) => {
                let (a, b) = (*a, *b);
                match op {
                    BinOp::Add => Value::Int(a.wrapping_add(b)),
                    BinOp::Sub => Value::Int(a.wrapping_sub(b)),
                    BinOp::Mul => Value::Int(a.wrapping_mul(b)),
                    BinOp::Div | BinOp::Rem if b == 0 => {
                        return self.trap(fr, e, "division by zero".into())
                    }
                    BinOp::Div => Value::Int(a.wrapping_div(b)),
                    BinOp::Rem => Value::Int(a.wrapping_rem(b)),
                    _ => Value::Bool(compare(op, a.cmp(&b))),
                }
            }
            (Value::F64(a), Value::F64(b)) => {
                let (a, b) = (*a, *b);
                match op {
                    BinOp::Add => Value::F64(a + b),
                    BinOp::Sub => Value::F64(a - b),
                    BinOp::Mul => Value::F64(a * b),
                    BinOp::Div => Value::F64(a / b),
                    BinOp::Rem => Value::F64(a % b),
                    BinOp::Eq => Value::Bool(a == b),
                    BinOp::Ne => Value::Bool(a != b),
                    BinOp::Lt => Value::Bool(a < b),
                    BinOp::Le => Value::Bool(a <= b),
                    BinOp::Gt => Value::Bool(a > b),
                    BinOp::Ge => Value::Bool(a >= b),
                    BinOp::And | BinOp::Or => return Err(type_error("binary operator")),
                }
            }
            (Value::Str(a), Value::Str(b)) => match op {
                BinOp::Add => {
                    let bytes = a.len + b.len;
                    let room = if crate::limit::str_fits(bytes as u128) {
                        crate::limit::string_with(bytes)
                    } else {
                        None
                    };
                    let Some(mut t) = room else {
                        return self.trap(fr, e, "out of memory".into());
                    };
                    t.push_str(a.as_str());
                    t.push_str(b.as_str());
                    let site = self.site(fr, e);
                    Value::Str(self.new_str(t, site))
                }
                _ => Value::Bool(compare(
                    op,
                    a.as_str().as_bytes().cmp(b.as_str().as_bytes()),
                )),
            },
            _ => match op {
                BinOp::Eq => Value::Bool(values_eq(&l, &r)),
                BinOp::Ne => Value::Bool(!values_eq(&l, &r)),
                _ => Value::Bool(compare(op, cmp_values(&l, &r))),
            },
        };
        Ok(v)
    }

    #[inline(never)]
    fn eval_index(
        &mut self,
        fr: &mut Frame<'p>,
        e: ExprId,
        base: ExprId,
        index: ExprId,
    ) -> R<Value> {
        let b = self.eval(fr, base)?;
        let i = self.eval(fr, index)?;
        match &b {
            Value::List(l) => {
                let n = i.as_int();
                match usize::try_from(n).ok().and_then(|k| l.get(k)) {
                    Some(v) => Ok(v),
                    None => self.trap(
                        fr,
                        e,
                        format!(
                            "index out of bounds: the len is {} but the index is {n}",
                            l.len
                        ),
                    ),
                }
            }
            Value::Map(m) => {
                let key = Key::of(&i).ok_or_else(|| type_error("map key"))?;
                let found = m.borrow().get(&key).map(|(_, v)| v.clone());
                match found {
                    Some(v) => Ok(v),
                    None => {
                        let mut k = String::new();
                        show_inner(&self.prog.items, &i, &mut k);
                        self.trap(fr, e, format!("key not found: {k}"))
                    }
                }
            }
            _ => Err(type_error("indexing")),
        }
    }

    // ------------------------------------------------------------ statements

    #[inline(never)]
    fn exec(&mut self, fr: &mut Frame<'p>, s: StmtId) -> R<()> {
        let body = fr.body;
        match &body[s].kind {
            StmtKind::Expr(e) => match self.eval(fr, *e) {
                Ok(_) => Ok(()),
                Err(c) => Err(c),
            },
            StmtKind::Let { pat, init } => self.exec_let(fr, *pat, *init),
            StmtKind::Var { local, init } => self.exec_var(fr, *local, *init),
            StmtKind::Assign { local, value, old } => self.exec_assign(fr, s, *local, *value, *old),
            StmtKind::For { pat, iter, body: b } => self.exec_for(fr, *pat, *iter, *b),
            StmtKind::While { cond, body: b } => self.exec_while(fr, *cond, *b),
            StmtKind::Drop(d) => {
                let v = fr.get(d.local).clone();
                let at = Site {
                    offset: fr.smap.stmt(s).start,
                };
                self.free(&v, d.deep, at)
            }
            // Values are not blocks here: nothing points at a field.
            StmtKind::Clear { .. } => Ok(()),
        }
    }

    #[inline(never)]
    fn exec_let(&mut self, fr: &mut Frame<'p>, pat: PatId, init: ExprId) -> R<()> {
        let v = self.eval(fr, init)?;
        // Binding a temporary moves the value; its uses decide sharing.
        let temp = matches!(fr.body[pat].kind,
            PatKind::Bind(t) if fr.body.locals[t].kind == LocalKind::Temp);
        let share = if !temp && is_place(fr.body, init) {
            Binding::From(init)
        } else {
            Binding::Move
        };
        if !self.match_pat(fr, pat, &v, share) {
            return Err(Box::new(Ctrl::Fatal(
                "internal error: a let pattern did not match".into(),
            )));
        }
        Ok(())
    }

    #[inline(never)]
    fn exec_var(&mut self, fr: &mut Frame<'p>, local: LocalId, init: ExprId) -> R<()> {
        let v = self.eval(fr, init)?;
        if is_place(fr.body, init) {
            self.copy_out(fr, init, &v);
        }
        fr.set(local, v);
        Ok(())
    }

    #[inline(never)]
    fn exec_while(&mut self, fr: &mut Frame<'p>, cond: ExprId, b: ExprId) -> R<()> {
        loop {
            if !self.eval_cond(fr, cond)? {
                return Ok(());
            }
            if let Err(c) = self.eval(fr, b) {
                match *c {
                    Ctrl::Break => return Ok(()),
                    Ctrl::Continue => {}
                    other => return Err(Box::new(other)),
                }
            }
        }
    }

    #[inline(never)]
    fn exec_assign(
        &mut self,
        fr: &mut Frame<'p>,
        s: StmtId,
        local: LocalId,
        value: ExprId,
        old: OldValue,
    ) -> R<()> {
        let body = fr.body;
        // `x := x.push(..)` / `x := x.concat(..)`: the old x is replaced, so
        // growing its buffer in place makes no second reference.
        let consume = match &body[value].kind {
            ExprKind::Method {
                method: m @ (Method::ListPush | Method::ListConcat),
                receiver,
                args,
            } if matches!(body[*receiver].kind, ExprKind::Local(l) if l == local) => {
                Some((*m, *receiver, args))
            }
            _ => None,
        };
        let new = match consume {
            Some((m, receiver, args)) => {
                let r = crate::methods::eval_grow(self, fr, value, m, receiver, args, true);
                self.checked(fr, value, r)?
            }
            None => {
                let v = self.eval(fr, value)?;
                if is_place(body, value) {
                    self.copy_out(fr, value, &v);
                }
                v
            }
        };
        let old_v = std::mem::replace(&mut fr.locals[idx(local)], new);
        // A new value: nothing has been copied out of it yet.
        if let Some(x) = fr.lent.get_mut(idx(local)) {
            *x = None;
        }
        let at = Site {
            offset: fr.smap.stmt(s).start,
        };
        match old {
            OldValue::Keep => {}
            OldValue::Free { deep } | OldValue::FreeCell { deep, .. } => {
                self.free(&old_v, deep, at)?
            }
            OldValue::FreeIfMoved => {
                let moved = match (&old_v, fr.get(local)) {
                    (Value::List(a), Value::List(b)) => match (&a.buf, &b.buf) {
                        (Some(x), Some(y)) => !Rc::ptr_eq(x, y),
                        (Some(_), None) => true,
                        _ => false,
                    },
                    _ => false,
                };
                if moved {
                    self.free(&old_v, false, at)?;
                }
            }
        }
        Ok(())
    }

    #[inline(never)]
    fn exec_for(&mut self, fr: &mut Frame<'p>, pat: PatId, iter: ExprId, b: ExprId) -> R<()> {
        match fr.body[iter].kind {
            ExprKind::Range { lo, hi } => self.exec_for_range(fr, pat, lo, hi, b),
            _ => self.exec_for_list(fr, pat, iter, b),
        }
    }

    /// `for i in lo..hi` without building the list.
    #[inline(never)]
    fn exec_for_range(
        &mut self,
        fr: &mut Frame<'p>,
        pat: PatId,
        lo: ExprId,
        hi: ExprId,
        b: ExprId,
    ) -> R<()> {
        let lo = self.eval(fr, lo)?.as_int();
        let hi = self.eval(fr, hi)?.as_int();
        let mut i = lo;
        while i < hi {
            self.match_pat(fr, pat, &Value::Int(i), Binding::Move);
            if self.loop_body(fr, b)? {
                break;
            }
            i += 1;
        }
        Ok(())
    }

    #[inline(never)]
    fn exec_for_list(&mut self, fr: &mut Frame<'p>, pat: PatId, iter: ExprId, b: ExprId) -> R<()> {
        let v = self.eval(fr, iter)?;
        let items = for_items(&v)?;
        for x in items {
            // The loop reads the list on every iteration: a drop inside
            // the body is a use after free from the next one on.
            if self.check {
                self.check_live(&v)?;
            }
            self.match_pat(fr, pat, &x, Binding::Copy);
            if self.loop_body(fr, b)? {
                break;
            }
        }
        Ok(())
    }

    /// Runs a loop body once; `Ok(true)` on `break`.
    #[inline(never)]
    fn loop_body(&mut self, fr: &mut Frame<'p>, b: ExprId) -> R<bool> {
        match self.eval(fr, b) {
            Ok(_) => Ok(false),
            Err(c) => match *c {
                Ctrl::Break => Ok(true),
                Ctrl::Continue => Ok(false),
                other => Err(Box::new(other)),
            },
        }
    }

    /// Tests `v` against `pat`, binding as it goes; `share` says `v` is read
    /// from a place, so each binding is a second reference.
    pub(crate) fn match_pat(
        &mut self,
        fr: &mut Frame<'p>,
        pat: PatId,
        v: &Value,
        share: Binding,
    ) -> bool {
        let body = fr.body;
        match &body[pat].kind {
            PatKind::Missing => false,
            PatKind::Wild => true,
            PatKind::Bind(l) => {
                // Binding a view to a name (a `for` over pieces) is not a
                // second reference; a use after its block's drop still is
                // caught, as every read is checked.
                if !v.is_view() {
                    match share {
                        Binding::Move => {}
                        Binding::From(place) => {
                            self.bind_from(fr, *l, place, v);
                            return true;
                        }
                        Binding::Copy => self.share(v),
                    }
                }
                fr.set(*l, v.clone());
                true
            }
            PatKind::At { local, pat } => {
                if !self.match_pat(fr, *pat, v, share) {
                    return false;
                }
                fr.set(*local, v.clone());
                true
            }
            PatKind::Lit(l) => match (l, v) {
                (Lit::Int(a), Value::Int(b)) => a == b,
                (Lit::Bool(a), Value::Bool(b)) => a == b,
                (Lit::Str(a), Value::Str(b)) => a.as_str() == b.as_str(),
                (Lit::F64(a), Value::F64(b)) => a == b,
                (Lit::Unit, Value::Unit) => true,
                _ => false,
            },
            PatKind::Tuple(ps) => match v {
                Value::Tuple(xs) if xs.len() == ps.len() => ps
                    .iter()
                    .zip(xs.iter())
                    .all(|(p, x)| self.match_pat(fr, *p, x, share)),
                _ => false,
            },
            PatKind::Ctor { ctor, args } => match (ctor, v) {
                (Ctor::None, Value::None) => true,
                (Ctor::Some, Value::Some(x)) => match args.first() {
                    Some(p) => self.match_pat(fr, *p, x, share),
                    None => true,
                },
                (Ctor::User(ty, variant), Value::Sum(s)) => {
                    s.ty == *ty
                        && s.variant == *variant
                        && args
                            .iter()
                            .zip(s.fields.iter())
                            .all(|(p, x)| self.match_pat(fr, *p, x, share))
                }
                _ => false,
            },
        }
    }
}

/// What binding a pattern's names to parts of a value does.
#[derive(Clone, Copy)]
pub(crate) enum Binding {
    /// The value is new: the names own it.
    Move,
    /// The value was read from this place expression (see
    /// [`Interp::copy_out`]).
    From(ExprId),
    /// Every binding is a second reference (a `for` over a list's
    /// elements, which the list keeps).
    Copy,
}

/// What a `for` over a list or map visits, copied out first.
fn for_items(v: &Value) -> R<Vec<Value>> {
    match v {
        Value::List(l) => Ok(l.items()),
        Value::Map(m) => Ok(m
            .borrow()
            .iter()
            .map(|(k, x)| Value::tuple(vec![k.clone(), x.clone()], Site { offset: 0 }))
            .collect()),
        _ => Err(type_error("for over a non-list")),
    }
}

fn lit_value(l: &Lit) -> Value {
    match l {
        Lit::Int(i) => Value::Int(*i),
        Lit::F64(f) => Value::F64(*f),
        Lit::Bool(b) => Value::Bool(*b),
        Lit::Str(s) => Value::Str(StrVal::unowned(s)),
        Lit::Unit => Value::Unit,
    }
}

pub(crate) fn type_error(what: &str) -> Box<Ctrl> {
    Box::new(Ctrl::Fatal(format!(
        "internal error: ill-typed {what} in the IR"
    )))
}

/// The reason part of an I/O error, without Rust's "(os error N)" suffix.
fn compare(op: BinOp, o: std::cmp::Ordering) -> bool {
    use std::cmp::Ordering::*;
    match op {
        BinOp::Eq => o == Equal,
        BinOp::Ne => o != Equal,
        BinOp::Lt => o == Less,
        BinOp::Le => o != Greater,
        BinOp::Gt => o == Greater,
        BinOp::Ge => o != Less,
        _ => false,
    }
}

/// Structural equality (`==`); F64 compares as IEEE.
pub(crate) fn values_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Unit, Value::Unit) | (Value::None, Value::None) => true,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::F64(x), Value::F64(y)) => x == y,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Str(x), Value::Str(y)) => x.as_str() == y.as_str(),
        (Value::List(x), Value::List(y)) => {
            x.len == y.len
                && x.items()
                    .iter()
                    .zip(y.items().iter())
                    .all(|(a, b)| values_eq(a, b))
        }
        (Value::Tuple(x), Value::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(a, b)| values_eq(a, b))
        }
        (Value::Record(x), Value::Record(y)) => {
            x.ty == y.ty
                && x.fields
                    .iter()
                    .zip(y.fields.iter())
                    .all(|(a, b)| values_eq(a, b))
        }
        (Value::Sum(x), Value::Sum(y)) => {
            x.ty == y.ty
                && x.variant == y.variant
                && x.fields
                    .iter()
                    .zip(y.fields.iter())
                    .all(|(a, b)| values_eq(a, b))
        }
        (Value::Some(x), Value::Some(y)) => values_eq(x, y),
        (Value::Map(x), Value::Map(y)) => Rc::ptr_eq(x, y),
        _ => false,
    }
}

/// The order `sort`, `sort_by` and comparisons use: Int, F64 (total
/// order), Str (bytewise), Bool; tuples lexicographically.
pub(crate) fn cmp_values(a: &Value, b: &Value) -> std::cmp::Ordering {
    use std::cmp::Ordering::Equal;
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.cmp(y),
        (Value::F64(x), Value::F64(y)) => x.total_cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Str(x), Value::Str(y)) => x.as_str().as_bytes().cmp(y.as_str().as_bytes()),
        (Value::Tuple(x), Value::Tuple(y)) => {
            for (p, q) in x.iter().zip(y.iter()) {
                let o = cmp_values(p, q);
                if o != Equal {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        _ => Equal,
    }
}

/// Whether `e` yields a value read from a place (a local, a field, an
/// element) rather than a new value: binding or storing it makes a second
/// reference.
pub(crate) fn is_place(body: &Body, e: ExprId) -> bool {
    is_place_in(body, e, &mut Vec::new())
}

/// [`is_place`] for an `e` that is the value of the blocks `scopes` (their
/// statements, innermost last): a local one of them declares dies with its
/// block, so yielding it moves its value, however many `if` and `match`
/// arms lie between the block and the local.
fn is_place_in<'b>(body: &'b Body, e: ExprId, scopes: &mut Vec<&'b [StmtId]>) -> bool {
    match &body[e].kind {
        // A temporary of the ownership pass is its value moved, not a copy.
        ExprKind::Local(l) if body.locals[*l].kind == LocalKind::Temp => {
            body.temp_init(*l).is_some_and(|i| is_place(body, i))
        }
        ExprKind::Local(l) => !scopes.iter().any(|stmts| declared_in(body, stmts, *l)),
        ExprKind::Field { .. } | ExprKind::Index { .. } => true,
        // `get` and `find` make a new `Some` block (their payload, read out
        // of the receiver, is a second reference they count themselves).
        ExprKind::Method { method, .. } => matches!(
            method,
            Method::ListFirst
                | Method::ListLast
                | Method::ListMin
                | Method::ListMax
                | Method::MapGetOr
                | Method::OptUnwrap
                | Method::OptUnwrapOr
        ),
        ExprKind::If { then, else_, .. } => {
            is_place_in(body, *then, scopes) || else_.is_some_and(|x| is_place_in(body, x, scopes))
        }
        ExprKind::Match { arms, .. } => arms.iter().any(|a| is_place_in(body, a.body, scopes)),
        ExprKind::Block {
            stmts,
            tail: Some(t),
        } => {
            scopes.push(stmts);
            let place = is_place_in(body, *t, scopes);
            scopes.pop();
            place
        }
        _ => false,
    }
}

/// The locals whose values place expression `e` may read from (every
/// branch of an `if`, `match` or block yielding one); false when it reads
/// from none (an element of a new list, say).
pub(crate) fn place_roots(body: &Body, e: ExprId, out: &mut Vec<LocalId>) -> bool {
    match &body[e].kind {
        ExprKind::Local(l) if body.locals[*l].kind == LocalKind::Temp => body
            .temp_init(*l)
            .is_some_and(|i| place_roots(body, i, out)),
        ExprKind::Local(l) => {
            out.push(*l);
            true
        }
        ExprKind::Field { base, .. } | ExprKind::Index { base, .. } => {
            place_roots(body, *base, out)
        }
        ExprKind::Method { receiver, .. } if is_place(body, e) => place_roots(body, *receiver, out),
        ExprKind::If { then, else_, .. } => {
            let a = place_roots(body, *then, out);
            else_.is_some_and(|x| place_roots(body, x, out)) || a
        }
        ExprKind::Match { arms, .. } => {
            // Every arm's roots (no short circuit).
            let mut any = false;
            for a in arms {
                any |= place_roots(body, a.body, out);
            }
            any
        }
        ExprKind::Block { tail: Some(t), .. } => place_roots(body, *t, out),
        _ => false,
    }
}

/// Whether returning `e` from a function hands out a second reference: a
/// parameter, a field or an element does; a local of the function moves.
pub(crate) fn escapes_on_return(body: &Body, e: ExprId) -> bool {
    match &body[e].kind {
        ExprKind::Local(l) if body[*l].kind == LocalKind::Temp => body
            .temp_init(*l)
            .is_some_and(|i| escapes_on_return(body, i)),
        ExprKind::Local(l) => body[*l].kind == LocalKind::Param,
        ExprKind::If { then, else_, .. } => {
            escapes_on_return(body, *then) || else_.is_some_and(|x| escapes_on_return(body, x))
        }
        ExprKind::Match { arms, .. } => arms.iter().any(|a| escapes_on_return(body, a.body)),
        ExprKind::Block { tail, .. } => tail.is_some_and(|t| escapes_on_return(body, t)),
        _ => is_place(body, e),
    }
}

fn declared_in(body: &Body, stmts: &[StmtId], l: LocalId) -> bool {
    stmts.iter().any(|s| match &body[*s].kind {
        StmtKind::Var { local, .. } => *local == l,
        StmtKind::Let { pat, .. } => binds(body, *pat, l),
        _ => false,
    })
}

fn binds(body: &Body, p: PatId, l: LocalId) -> bool {
    match &body[p].kind {
        PatKind::Bind(x) => *x == l,
        PatKind::At { local, pat } => *local == l || binds(body, *pat, l),
        PatKind::Tuple(ps) | PatKind::Ctor { args: ps, .. } => {
            ps.iter().any(|q| binds(body, *q, l))
        }
        _ => false,
    }
}

/// The element type of a list type (for `sum` of an empty list).
pub(crate) fn elem_ty(t: &Ty) -> Option<&Ty> {
    match t {
        Ty::List(e) => Some(e),
        _ => None,
    }
}
