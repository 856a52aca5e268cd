//! Runtime values and the block model.
//!
//! Every heap list buffer and string block carries a [`Meta`]: where it was
//! allocated, whether a second reference to it was ever made (the oracle's
//! "shared") and where a drop form freed it. Static literals and
//! zero-length values carry no block (`heap == false`), and views keep a
//! reference to their source's block, exactly as the native runtime lays
//! them out.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use ir::{FnId, LocalId, TypeId};

use crate::limit::{self, Charge};

/// A position in the program: function index and byte offset of a span start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Site {
    pub(crate) offset: u32,
}

/// Bookkeeping of one heap block.
pub(crate) struct Meta {
    /// False for static literals and zero-length values: no block at all.
    pub(crate) heap: bool,
    pub(crate) site: Site,
    pub(crate) shared: Cell<bool>,
    /// Where a drop form freed the block.
    pub(crate) dropped: Cell<Option<Site>>,
}

impl Meta {
    pub(crate) fn none() -> Meta {
        Meta {
            heap: false,
            site: Site { offset: 0 },
            shared: Cell::new(false),
            dropped: Cell::new(None),
        }
    }
}

pub(crate) struct StrBlock {
    pub(crate) text: Box<str>,
    pub(crate) meta: Meta,
    _charge: Charge,
}

impl StrBlock {
    /// A block of `text`; it counts against the heap limit when `meta`
    /// says it is a heap block (a literal has none natively).
    pub(crate) fn new(text: Box<str>, meta: Meta) -> StrBlock {
        let native = if meta.heap { text.len() } else { 0 };
        let real = limit::real(std::mem::size_of::<StrBlock>() + 16) + limit::real(text.len());
        StrBlock {
            _charge: Charge::new(native, real),
            text,
            meta,
        }
    }
}

/// A string value: a byte range of a block (views share the block).
#[derive(Clone)]
pub(crate) struct StrVal {
    pub(crate) blk: Rc<StrBlock>,
    pub(crate) start: usize,
    pub(crate) len: usize,
    /// Made by a view (take, drop, slice, trim, a piece), even one that
    /// happens to cover its whole block.
    pub(crate) view: bool,
}

impl StrVal {
    pub(crate) fn as_str(&self) -> &str {
        &self.blk.text[self.start..self.start + self.len]
    }
    /// A string with no block (a literal or the empty string).
    pub(crate) fn unowned(text: &str) -> StrVal {
        StrVal {
            view: false,
            len: text.len(),
            blk: Rc::new(StrBlock::new(text.into(), Meta::none())),
            start: 0,
        }
    }
    /// True when this value covers its whole block (it is not a view).
    pub(crate) fn is_whole(&self) -> bool {
        self.start == 0 && self.len == self.blk.text.len()
    }
}

pub(crate) struct ListBuf {
    pub(crate) items: RefCell<Vec<Value>>,
    pub(crate) cap: usize,
    pub(crate) meta: Meta,
    /// Counts the `set`s written into this buffer in place; a list value
    /// made before the last one (see [`ListVal::version`]) is stale.
    pub(crate) version: Cell<u32>,
    /// Where the last `set` in place wrote into it.
    pub(crate) set_at: Cell<Option<Site>>,
    _charge: Charge,
}

impl ListBuf {
    /// A buffer of `cap` elements holding `items`, counted against the
    /// heap limit at its native size (a 16-byte header and `cap` elements).
    pub(crate) fn new(items: Vec<Value>, cap: usize, meta: Meta) -> ListBuf {
        let native = 16 + cap.saturating_mul(limit::elem_bytes(items.first()) as usize);
        let real = limit::real(std::mem::size_of::<ListBuf>() + 16)
            + limit::real(
                cap.max(items.capacity())
                    .saturating_mul(std::mem::size_of::<Value>()),
            );
        ListBuf {
            items: RefCell::new(items),
            cap,
            meta,
            version: Cell::new(0),
            set_at: Cell::new(None),
            _charge: Charge::new(native, real),
        }
    }
}

/// A list value: `len` elements of a buffer from `start` (`buf` is `None`
/// for the empty list, which has no block).
#[derive(Clone)]
pub(crate) struct ListVal {
    pub(crate) buf: Option<Rc<ListBuf>>,
    pub(crate) start: usize,
    pub(crate) len: usize,
    /// Made by `take` or `drop`, even when it covers its whole buffer.
    pub(crate) view: bool,
    /// The buffer's [`ListBuf::version`] when this value was made: a `set`
    /// in place consumes its receiver, so the drop checker reports any
    /// later use of a value made before it.
    pub(crate) version: u32,
}

impl ListVal {
    pub(crate) fn empty() -> ListVal {
        ListVal {
            buf: None,
            start: 0,
            len: 0,
            view: false,
            version: 0,
        }
    }

    /// Whether a `set` in place wrote into the buffer after this value
    /// was made (the value was consumed by it).
    pub(crate) fn stale(&self) -> Option<Site> {
        let b = self.buf.as_ref()?;
        if b.version.get() != self.version {
            b.set_at.get()
        } else {
            None
        }
    }
    /// The elements, copied out so callbacks may push onto the same buffer.
    pub(crate) fn items(&self) -> Vec<Value> {
        match &self.buf {
            None => Vec::new(),
            Some(b) => b.items.borrow()[self.start..self.start + self.len].to_vec(),
        }
    }
    /// Reads the elements in place; `f` must not run Sspur code (which
    /// could push onto the same buffer).
    pub(crate) fn with<T>(&self, f: impl FnOnce(&[Value]) -> T) -> T {
        match &self.buf {
            None => f(&[]),
            Some(b) => f(&b.items.borrow()[self.start..self.start + self.len]),
        }
    }
    pub(crate) fn get(&self, i: usize) -> Option<Value> {
        if i >= self.len {
            return None;
        }
        self.buf
            .as_ref()
            .map(|b| b.items.borrow()[self.start + i].clone())
    }
    pub(crate) fn is_whole(&self) -> bool {
        match &self.buf {
            None => true,
            Some(b) => self.start == 0 && self.len == b.items.borrow().len(),
        }
    }
    pub(crate) fn meta(&self) -> Option<&Meta> {
        self.buf.as_ref().map(|b| &b.meta)
    }
}

/// A map key: Int, Str or Bool.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub(crate) enum Key {
    Int(i64),
    Bool(bool),
    Str(Box<str>),
}

impl Key {
    pub(crate) fn of(v: &Value) -> Option<Key> {
        match v {
            Value::Int(i) => Some(Key::Int(*i)),
            Value::Bool(b) => Some(Key::Bool(*b)),
            Value::Str(s) => Some(Key::Str(s.as_str().into())),
            _ => None,
        }
    }
}

/// An insertion-ordered hash map. Removal leaves a hole so the order of the
/// others is kept; holes are compacted when they outnumber the entries.
pub(crate) struct MapObj {
    pub(crate) entries: Vec<Option<(Value, Value)>>,
    pub(crate) index: HashMap<Key, usize>,
    charge: Charge,
}

impl Default for MapObj {
    /// An empty map, counted as the native map's header.
    fn default() -> MapObj {
        MapObj {
            entries: Vec::new(),
            index: HashMap::new(),
            charge: Charge::new(
                limit::words(MAP_HEADER_WORDS),
                limit::real(std::mem::size_of::<MapObj>() + 16),
            ),
        }
    }
}

/// The native map's header words and the words each entry takes (an entry
/// of five words and two index slots; rt `helpers/map.rs`).
const MAP_HEADER_WORDS: usize = 7;
const MAP_ENTRY_WORDS: usize = 7;

impl MapObj {
    pub(crate) fn len(&self) -> usize {
        self.index.len()
    }
    pub(crate) fn get(&self, k: &Key) -> Option<&(Value, Value)> {
        self.index.get(k).and_then(|&i| self.entries[i].as_ref())
    }
    /// Inserts or replaces; returns true if the key was present (the old key
    /// is kept in its place).
    pub(crate) fn put(&mut self, k: Key, key: Value, val: Value) -> bool {
        match self.index.get(&k) {
            Some(&i) => {
                if let Some(e) = self.entries[i].as_mut() {
                    e.1 = val;
                }
                true
            }
            None => {
                // Counted per entry ever added: the native entries block
                // keeps removed entries' room too.
                self.charge.grow(
                    limit::words(MAP_ENTRY_WORDS),
                    2 * std::mem::size_of::<(Key, usize, Option<(Value, Value)>)>(),
                );
                self.index.insert(k, self.entries.len());
                self.entries.push(Some((key, val)));
                false
            }
        }
    }
    pub(crate) fn remove(&mut self, k: &Key) -> Option<Value> {
        let i = self.index.remove(k)?;
        let (_, v) = self.entries[i].take()?;
        if self.entries.len() > 16 && self.entries.len() > 2 * self.index.len() {
            self.compact();
        }
        Some(v)
    }
    fn compact(&mut self) {
        self.entries.retain(|e| e.is_some());
        for (i, e) in self.entries.iter().enumerate() {
            if let Some((k, _)) = e {
                if let Some(key) = Key::of(k) {
                    self.index.insert(key, i);
                }
            }
        }
    }
    pub(crate) fn iter(&self) -> impl Iterator<Item = &(Value, Value)> {
        self.entries.iter().flatten()
    }
}

/// The drop checker's view of a cell (record, tuple, sum value, `Some`):
/// where it was made and where a drop or reuse form ended it. A nullary
/// constructor is static data natively: no block (`heap == false`).
pub(crate) struct CellMeta {
    pub(crate) heap: bool,
    pub(crate) site: Site,
    /// Where it was freed or reused, and whether it was a reuse.
    pub(crate) ended: Cell<Option<(Site, bool)>>,
    /// The oracle's mark: a second reference to the block was used.
    pub(crate) shared: Cell<bool>,
}

impl CellMeta {
    pub(crate) fn new(site: Site) -> CellMeta {
        CellMeta {
            heap: true,
            site,
            ended: Cell::new(None),
            shared: Cell::new(false),
        }
    }
}

thread_local! {
    /// Cell and closure blocks made on this thread (the interpreter runs
    /// each program on a thread of its own), for the oracle.
    static MADE: Cell<[u64; 2]> = const { Cell::new([0; 2]) };
}

/// Counts a cell (`closure == false`) or closure block just made.
fn made(closure: bool) {
    MADE.with(|m| {
        let mut c = m.get();
        c[closure as usize] += 1;
        m.set(c);
    });
}

/// Cell and closure blocks made so far on this thread.
pub(crate) fn blocks_made() -> (u64, u64) {
    let [cells, closures] = MADE.with(Cell::get);
    (cells, closures)
}

pub(crate) struct RecVal {
    pub(crate) ty: TypeId,
    pub(crate) fields: Box<[Value]>,
    pub(crate) meta: CellMeta,
    _charge: Charge,
}

impl RecVal {
    /// A record: natively a block of its fields' words.
    pub(crate) fn new(ty: TypeId, fields: Box<[Value]>, site: Site) -> RecVal {
        let charge = Charge::new(
            limit::fields_bytes(0, &fields),
            limit::rc_with_values::<RecVal>(fields.len()),
        );
        made(false);
        RecVal {
            ty,
            fields,
            meta: CellMeta::new(site),
            _charge: charge,
        }
    }
}

pub(crate) struct SumVal {
    pub(crate) ty: TypeId,
    pub(crate) variant: u32,
    pub(crate) fields: Box<[Value]>,
    pub(crate) meta: CellMeta,
    _charge: Charge,
}

impl SumVal {
    /// A constructed variant: natively `[tag, fields...]`, or a static
    /// word (no block) when it has no fields.
    pub(crate) fn new(ty: TypeId, variant: u32, fields: Box<[Value]>, site: Site) -> SumVal {
        let native = if fields.is_empty() {
            0
        } else {
            limit::fields_bytes(1, &fields)
        };
        let charge = Charge::new(native, limit::rc_with_values::<SumVal>(fields.len()));
        if !fields.is_empty() {
            made(false);
        }
        SumVal {
            ty,
            variant,
            meta: CellMeta {
                // A nullary constructor is static data natively.
                heap: !fields.is_empty(),
                ..CellMeta::new(site)
            },
            fields,
            _charge: charge,
        }
    }
}

/// A tuple's elements (reads go through `Deref` to the slice): natively a
/// block of their words.
pub(crate) struct TupleVal {
    pub(crate) items: Box<[Value]>,
    pub(crate) meta: CellMeta,
    _charge: Charge,
}

impl TupleVal {
    pub(crate) fn new(items: Box<[Value]>, site: Site) -> TupleVal {
        TupleVal::made(items, site, true)
    }

    /// A tuple; with `heap` false, one the native backend never builds
    /// (its components are bound directly): no block, nothing counted.
    fn made(items: Box<[Value]>, site: Site, heap: bool) -> TupleVal {
        let native = if heap {
            limit::fields_bytes(0, &items)
        } else {
            0
        };
        let charge = Charge::new(native, limit::rc_with_values::<TupleVal>(items.len()));
        if heap {
            made(false);
        }
        TupleVal {
            items,
            meta: CellMeta {
                heap,
                ..CellMeta::new(site)
            },
            _charge: charge,
        }
    }
}

impl std::ops::Deref for TupleVal {
    type Target = [Value];
    fn deref(&self) -> &[Value] {
        &self.items
    }
}

/// The value inside a `Some` (reads go through `Deref`): natively
/// `[1, payload]`.
pub(crate) struct SomeVal {
    pub(crate) val: Value,
    pub(crate) meta: CellMeta,
    _charge: Charge,
}

impl SomeVal {
    pub(crate) fn new(val: Value, site: Site) -> SomeVal {
        let charge = Charge::new(
            limit::fields_bytes(1, std::slice::from_ref(&val)),
            limit::real(std::mem::size_of::<SomeVal>() + 16),
        );
        made(false);
        SomeVal {
            val,
            meta: CellMeta::new(site),
            _charge: charge,
        }
    }
}

impl std::ops::Deref for SomeVal {
    type Target = Value;
    fn deref(&self) -> &Value {
        &self.val
    }
}

pub(crate) struct Closure {
    /// The function whose body holds the lambda.
    pub(crate) fn_id: FnId,
    pub(crate) lambda: ir::ExprId,
    pub(crate) captures: Box<[(LocalId, Value)]>,
    /// False for a lambda that captures nothing: a static block natively.
    pub(crate) heap: bool,
    /// The oracle's mark: a second reference to the block was used.
    pub(crate) shared: Cell<bool>,
    /// Where a drop form freed the block.
    pub(crate) dropped: Cell<Option<Site>>,
    _charge: Charge,
}

impl Closure {
    /// A closure: natively `[code, captures...]`.
    pub(crate) fn new(
        fn_id: FnId,
        lambda: ir::ExprId,
        captures: Box<[(LocalId, Value)]>,
        in_heap: bool,
    ) -> Closure {
        // A lambda that captures nothing is a static block natively; one
        // passed straight to a method lives in the caller's frame.
        let heap = in_heap && !captures.is_empty();
        let words = 1 + captures
            .iter()
            .map(|(_, v)| limit::value_words(v))
            .sum::<usize>();
        let charge = Charge::new(
            if heap { limit::words(words) } else { 0 },
            limit::real(
                std::mem::size_of::<Closure>()
                    + 16
                    + captures.len() * std::mem::size_of::<(LocalId, Value)>(),
            ),
        );
        if heap {
            made(true);
        }
        Closure {
            fn_id,
            lambda,
            captures,
            heap,
            shared: Cell::new(false),
            dropped: Cell::new(None),
            _charge: charge,
        }
    }
}

/// The push-then-join rewrite's string builder.
pub(crate) struct BuilderObj {
    pub(crate) text: String,
    pub(crate) sep: Box<str>,
    pub(crate) pieces: usize,
    /// Grows with `text`'s capacity.
    pub(crate) charge: Charge,
}

#[derive(Clone)]
pub(crate) enum Value {
    Unit,
    Int(i64),
    F64(f64),
    Bool(bool),
    Str(StrVal),
    List(ListVal),
    Map(Rc<RefCell<MapObj>>),
    Tuple(Rc<TupleVal>),
    Record(Rc<RecVal>),
    Sum(Rc<SumVal>),
    Some(Rc<SomeVal>),
    None,
    Func(FnId),
    Closure(Rc<Closure>),
    Builder(Rc<RefCell<BuilderObj>>),
}

impl Value {
    /// A view: a string or list value that does not cover its whole block.
    pub(crate) fn is_view(&self) -> bool {
        match self {
            Value::Str(s) => s.blk.meta.heap && (s.view || !s.is_whole()),
            Value::List(l) => l.buf.is_some() && (l.view || !l.is_whole()),
            _ => false,
        }
    }

    /// The block this value itself refers to (a list buffer or string block).
    pub(crate) fn meta(&self) -> Option<&Meta> {
        match self {
            Value::Str(s) if s.blk.meta.heap => Some(&s.blk.meta),
            Value::List(l) => l.meta(),
            _ => None,
        }
    }
    /// A tuple made at `site`.
    pub(crate) fn tuple(items: Vec<Value>, site: Site) -> Value {
        Value::Tuple(Rc::new(TupleVal::new(items.into(), site)))
    }

    /// A pair made at `site` by `enumerate`/`zip`; `heap` false: one the
    /// native backend never builds.
    pub(crate) fn pair(items: [Value; 2], site: Site, heap: bool) -> Value {
        Value::Tuple(Rc::new(TupleVal::made(Box::new(items), site, heap)))
    }

    /// `Some(v)` made at `site`.
    pub(crate) fn some(val: Value, site: Site) -> Value {
        Value::Some(Rc::new(SomeVal::new(val, site)))
    }

    /// The cell block this value refers to (record, tuple, sum, `Some`).
    pub(crate) fn cell_meta(&self) -> Option<&CellMeta> {
        match self {
            Value::Tuple(t) => Some(&t.meta),
            Value::Record(r) => Some(&r.meta),
            Value::Sum(s) => Some(&s.meta),
            Value::Some(x) => Some(&x.meta),
            _ => None,
        }
    }

    /// The fields of a cell, in layout order (empty for other values).
    pub(crate) fn cell_fields(&self) -> &[Value] {
        match self {
            Value::Tuple(t) => &t.items,
            Value::Record(r) => &r.fields,
            Value::Sum(s) => &s.fields,
            Value::Some(x) => std::slice::from_ref(&x.val),
            _ => &[],
        }
    }

    pub(crate) fn as_int(&self) -> i64 {
        match self {
            Value::Int(i) => *i,
            _ => 0,
        }
    }
    pub(crate) fn as_bool(&self) -> bool {
        matches!(self, Value::Bool(true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(m: &MapObj) -> Vec<i64> {
        m.iter().map(|(k, _)| k.as_int()).collect()
    }

    fn put(m: &mut MapObj, k: i64, v: i64) -> bool {
        m.put(Key::Int(k), Value::Int(k), Value::Int(v))
    }

    #[test]
    fn maps_keep_insertion_order() {
        let mut m = MapObj::default();
        for k in [3, 1, 2] {
            assert!(!put(&mut m, k, 0));
        }
        // Replacing keeps the place.
        assert!(put(&mut m, 1, 10));
        assert_eq!(keys(&m), [3, 1, 2]);
        assert_eq!(m.get(&Key::Int(1)).map(|(_, v)| v.as_int()), Some(10));
        // Removing keeps the others' order; putting again goes to the end.
        assert_eq!(m.remove(&Key::Int(3)).map(|v| v.as_int()), Some(0));
        assert!(m.remove(&Key::Int(3)).is_none());
        assert_eq!(keys(&m), [1, 2]);
        put(&mut m, 3, 0);
        assert_eq!(keys(&m), [1, 2, 3]);
        assert_eq!(m.len(), 3);
    }

    #[test]
    fn compaction_after_many_removals_keeps_order_and_lookups() {
        let mut m = MapObj::default();
        for k in 0..100 {
            put(&mut m, k, k * 2);
        }
        for k in (0..100).filter(|k| k % 3 != 0) {
            m.remove(&Key::Int(k));
        }
        let want: Vec<i64> = (0..100).filter(|k| k % 3 == 0).collect();
        assert_eq!(keys(&m), want);
        for k in &want {
            assert_eq!(m.get(&Key::Int(*k)).map(|(_, v)| v.as_int()), Some(k * 2));
        }
        put(&mut m, 1, 5);
        assert_eq!(keys(&m).last(), Some(&1));
    }
}
