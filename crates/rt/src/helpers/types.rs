//! Type descriptors: how the helpers learn the shape of a value they must
//! show, compare or hash. The native backend installs one table per run;
//! compiled code passes an index into it.
//!
//! Value layout in memory (shared with crates/codegen): a value of type T
//! occupies [`words`]`(T)` 8-byte words. Int, F64 (bits), Bool (0/1), Unit
//! (0) and every pointer-like value (records, tuples, sums, options,
//! closures, maps) take one word; Str and List take two, `(ptr, len)`.
//! Records and tuples point to a pointer block of their fields' words in
//! declaration order; sums and options point to `[tag, fields...]` (nullary
//! constructors point to static `[tag]` words; `None` is tag 0, `Some` tag
//! 1); closures point to `[code, captures...]`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::RwLock;

/// One type of the installed table; children are indices into the table.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TyDesc {
    Int,
    F64,
    Bool,
    Str,
    Unit,
    Fn,
    StrBuilder,
    List(u32),
    Map(u32, u32),
    Option(u32),
    Tuple(Vec<u32>),
    Record {
        name: String,
        fields: Vec<(String, u32)>,
    },
    Sum {
        name: String,
        variants: Vec<(String, Vec<u32>)>,
    },
}

static TABLE: RwLock<Vec<TyDesc>> = RwLock::new(Vec::new());

/// Counts installs, so state derived from the table (the deep free's drop
/// plans) knows when to rebuild without taking the lock on every call.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// Installs the type table compiled code refers to (once per run).
pub fn install(table: Vec<TyDesc>) {
    *TABLE.write().unwrap_or_else(|e| e.into_inner()) = table;
    GENERATION.fetch_add(1, Ordering::Release);
}

/// The number of tables installed so far (0: none).
#[inline(always)]
pub(crate) fn generation() -> u64 {
    GENERATION.load(Ordering::Acquire)
}

/// Runs `f` with the installed table.
pub(crate) fn with_table<R>(f: impl FnOnce(&[TyDesc]) -> R) -> R {
    let guard = TABLE.read().unwrap_or_else(|e| e.into_inner());
    f(&guard)
}

/// Words a value of this type occupies.
pub fn words(d: &TyDesc) -> usize {
    match d {
        TyDesc::Str | TyDesc::List(_) => 2,
        _ => 1,
    }
}

/// Whether a value of this type may hold a heap pointer (decides pointer
/// versus data blocks for lists of it).
pub fn has_pointers(d: &TyDesc) -> bool {
    !matches!(d, TyDesc::Int | TyDesc::F64 | TyDesc::Bool | TyDesc::Unit)
}

/// Reads word `i` at `p`.
///
/// # Safety
/// `p` must point to at least `i + 1` readable words.
#[inline]
pub(crate) unsafe fn word(p: *const u64, i: usize) -> u64 {
    // SAFETY: the caller guarantees `i + 1` readable words at `p`, so word
    // `i` is in bounds; values are stored as aligned 8-byte words.
    unsafe { p.add(i).read() }
}

/// The bytes of a `(ptr, len)` string.
///
/// # Safety
/// `(p, len)` must describe a live string.
#[inline]
pub(crate) unsafe fn bytes<'a>(p: u64, len: u64) -> &'a [u8] {
    if len == 0 {
        &[]
    } else {
        // SAFETY: a live string with `len > 0` has a non-null `p` to `len`
        // readable bytes (a heap block or static data) that nothing mutates
        // while a helper runs: the caller's contract.
        unsafe { std::slice::from_raw_parts(p as *const u8, len as usize) }
    }
}

/// Structural equality of two values of type `t` stored at `a` and `b`.
///
/// # Safety
/// Both must point at live values of type `t`.
pub(crate) unsafe fn eq(table: &[TyDesc], t: u32, a: *const u64, b: *const u64) -> bool {
    let d = &table[t as usize];
    // SAFETY: `a` and `b` point at live values of type `t` (the contract),
    // laid out as the module doc says: one word, or two for Str and List,
    // read with `word` within that size. A List's `(ptr, len)` has `len`
    // elements of `w` words each, and `add` stays below `len * w`; an
    // Option or Sum points at `[tag, fields...]` whose fields exist for the
    // tag read, a Tuple or Record at its fields' words. Each recursive call
    // therefore gets a pointer at a live value of the child type.
    unsafe {
        match d {
            TyDesc::Int | TyDesc::Bool | TyDesc::Unit | TyDesc::Fn | TyDesc::StrBuilder => {
                word(a, 0) == word(b, 0)
            }
            TyDesc::F64 => f64::from_bits(word(a, 0)) == f64::from_bits(word(b, 0)),
            TyDesc::Str => bytes(word(a, 0), word(a, 1)) == bytes(word(b, 0), word(b, 1)),
            TyDesc::List(e) => {
                let (la, lb) = (word(a, 1), word(b, 1));
                if la != lb {
                    return false;
                }
                let w = words(&table[*e as usize]);
                let (pa, pb) = (word(a, 0) as *const u64, word(b, 0) as *const u64);
                (0..la as usize).all(|i| eq(table, *e, pa.add(i * w), pb.add(i * w)))
            }
            TyDesc::Map(..) => word(a, 0) == word(b, 0),
            TyDesc::Option(e) => {
                let (pa, pb) = (word(a, 0) as *const u64, word(b, 0) as *const u64);
                let (ta, tb) = (word(pa, 0), word(pb, 0));
                ta == tb && (ta == 0 || eq(table, *e, pa.add(1), pb.add(1)))
            }
            TyDesc::Tuple(fs) => fields_eq(table, fs.iter().copied(), a, b),
            TyDesc::Record { fields, .. } => fields_eq(table, fields.iter().map(|(_, t)| *t), a, b),
            TyDesc::Sum { variants, .. } => {
                let (pa, pb) = (word(a, 0) as *const u64, word(b, 0) as *const u64);
                let (ta, tb) = (word(pa, 0), word(pb, 0));
                if ta != tb {
                    return false;
                }
                let fs = &variants[ta as usize].1;
                fields_at_eq(table, fs.iter().copied(), pa.add(1), pb.add(1))
            }
        }
    }
}

unsafe fn fields_eq(
    table: &[TyDesc],
    fs: impl Iterator<Item = u32>,
    a: *const u64,
    b: *const u64,
) -> bool {
    // SAFETY: `a` and `b` hold live Tuple or Record values (the caller's
    // contract): one word each, a pointer to the fields' words, which is
    // what `fields_at_eq` needs.
    unsafe {
        let (pa, pb) = (word(a, 0) as *const u64, word(b, 0) as *const u64);
        fields_at_eq(table, fs, pa, pb)
    }
}

unsafe fn fields_at_eq(
    table: &[TyDesc],
    fs: impl Iterator<Item = u32>,
    pa: *const u64,
    pb: *const u64,
) -> bool {
    let mut off = 0;
    for f in fs {
        // SAFETY: `pa` and `pb` point at the words of fields of types `fs`
        // laid out in order (the caller's contract); `off` is the sum of the
        // earlier fields' sizes, so each pointer is at a live field.
        unsafe {
            if !eq(table, f, pa.add(off), pb.add(off)) {
                return false;
            }
        }
        off += words(&table[f as usize]);
    }
    true
}

/// A hash consistent with [`eq`] (FNV-1a over the value's contents).
///
/// # Safety
/// `a` must point at a live value of type `t`.
pub(crate) unsafe fn hash(table: &[TyDesc], t: u32, a: *const u64) -> u64 {
    let mut h = Fnv::new();
    // SAFETY: `a` points at a live value of type `t` (the contract).
    unsafe { hash_into(table, t, a, &mut h) };
    h.0
}

pub(crate) struct Fnv(pub u64);

impl Fnv {
    pub fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    pub fn bytes(&mut self, bs: &[u8]) {
        for &b in bs {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
    pub fn word(&mut self, w: u64) {
        self.bytes(&w.to_le_bytes());
    }
}

unsafe fn hash_into(table: &[TyDesc], t: u32, a: *const u64, h: &mut Fnv) {
    // SAFETY: as in `eq`: `a` is a live value of type `t`, every read stays
    // within its words, and each child pointer (list element `i < len`, an
    // Option's payload after a non-zero tag, the fields of a tuple, record
    // or the variant named by the tag) is a live value of the child type.
    unsafe {
        match &table[t as usize] {
            TyDesc::F64 => {
                let f = f64::from_bits(word(a, 0));
                // 0.0 == -0.0, so they must hash alike.
                h.word(if f == 0.0 { 0 } else { f.to_bits() })
            }
            TyDesc::Str => h.bytes(bytes(word(a, 0), word(a, 1))),
            TyDesc::List(e) => {
                let w = words(&table[*e as usize]);
                let p = word(a, 0) as *const u64;
                h.word(word(a, 1));
                for i in 0..word(a, 1) as usize {
                    hash_into(table, *e, p.add(i * w), h);
                }
            }
            TyDesc::Option(e) => {
                let p = word(a, 0) as *const u64;
                h.word(word(p, 0));
                if word(p, 0) != 0 {
                    hash_into(table, *e, p.add(1), h);
                }
            }
            TyDesc::Tuple(fs) => {
                let p = word(a, 0) as *const u64;
                let mut off = 0;
                for f in fs {
                    hash_into(table, *f, p.add(off), h);
                    off += words(&table[*f as usize]);
                }
            }
            TyDesc::Record { fields, .. } => {
                let p = word(a, 0) as *const u64;
                let mut off = 0;
                for (_, f) in fields {
                    hash_into(table, *f, p.add(off), h);
                    off += words(&table[*f as usize]);
                }
            }
            TyDesc::Sum { variants, .. } => {
                let p = word(a, 0) as *const u64;
                let tag = word(p, 0);
                h.word(tag);
                let mut off = 1;
                for f in &variants[tag as usize].1 {
                    hash_into(table, *f, p.add(off), h);
                    off += words(&table[*f as usize]);
                }
            }
            _ => h.word(word(a, 0)),
        }
    }
}

/// Total order used by `sort`, `min`, `max` on Int, F64 (total order),
/// Bool and Str (bytewise).
///
/// # Safety
/// Both must point at live values of type `t`.
pub(crate) unsafe fn cmp(
    table: &[TyDesc],
    t: u32,
    a: *const u64,
    b: *const u64,
) -> std::cmp::Ordering {
    // SAFETY: `a` and `b` are live values of type `t` (the contract): one
    // word each, or a live `(ptr, len)` string for Str.
    unsafe {
        match &table[t as usize] {
            TyDesc::Int => (word(a, 0) as i64).cmp(&(word(b, 0) as i64)),
            TyDesc::F64 => f64::from_bits(word(a, 0)).total_cmp(&f64::from_bits(word(b, 0))),
            TyDesc::Str => bytes(word(a, 0), word(a, 1)).cmp(bytes(word(b, 0), word(b, 1))),
            _ => word(a, 0).cmp(&word(b, 0)),
        }
    }
}

/// Appends the display of a value, as interpolation shows it (`top`) or as
/// it appears inside a container (strings quoted).
///
/// # Safety
/// `a` must point at a live value of type `t`.
pub(crate) unsafe fn show(table: &[TyDesc], t: u32, a: *const u64, top: bool, out: &mut Vec<u8>) {
    use std::io::Write;
    // SAFETY: as in `eq`: `a` is a live value of type `t`; every read stays
    // within its words and each child pointer is a live value of the child
    // type. A Map's word is a live map, which `for_each` walks, handing out
    // pointers at live keys and values.
    unsafe {
        match &table[t as usize] {
            TyDesc::Int => {
                let _ = write!(out, "{}", word(a, 0) as i64);
            }
            TyDesc::F64 => {
                let _ = write!(out, "{}", f64::from_bits(word(a, 0)));
            }
            TyDesc::Bool => out.extend_from_slice(if word(a, 0) != 0 { b"true" } else { b"false" }),
            TyDesc::Unit => out.extend_from_slice(b"()"),
            TyDesc::Fn => out.extend_from_slice(b"<fn>"),
            TyDesc::StrBuilder => out.extend_from_slice(b"<builder>"),
            TyDesc::Str => {
                let b = bytes(word(a, 0), word(a, 1));
                if top {
                    out.extend_from_slice(b);
                } else {
                    let s = String::from_utf8_lossy(b);
                    let _ = write!(out, "{:?}", s);
                }
            }
            TyDesc::List(e) => {
                let w = words(&table[*e as usize]);
                let p = word(a, 0) as *const u64;
                out.push(b'[');
                for i in 0..word(a, 1) as usize {
                    if i > 0 {
                        out.extend_from_slice(b", ");
                    }
                    show(table, *e, p.add(i * w), false, out);
                }
                out.push(b']');
            }
            TyDesc::Map(k, v) => {
                let m = word(a, 0) as *const u64;
                out.push(b'{');
                let mut first = true;
                crate::helpers::map::for_each(m, |kp, vp| {
                    if !first {
                        out.extend_from_slice(b", ");
                    }
                    first = false;
                    show(table, *k, kp, false, out);
                    out.extend_from_slice(b": ");
                    show(table, *v, vp, false, out);
                });
                out.push(b'}');
            }
            TyDesc::Option(e) => {
                let p = word(a, 0) as *const u64;
                if word(p, 0) == 0 {
                    out.extend_from_slice(b"None");
                } else {
                    out.extend_from_slice(b"Some(");
                    show(table, *e, p.add(1), false, out);
                    out.push(b')');
                }
            }
            TyDesc::Tuple(fs) => {
                let p = word(a, 0) as *const u64;
                out.push(b'(');
                let mut off = 0;
                for (i, f) in fs.iter().enumerate() {
                    if i > 0 {
                        out.extend_from_slice(b", ");
                    }
                    show(table, *f, p.add(off), false, out);
                    off += words(&table[*f as usize]);
                }
                if fs.len() == 1 {
                    out.push(b',');
                }
                out.push(b')');
            }
            TyDesc::Record { name, fields } => {
                let p = word(a, 0) as *const u64;
                out.extend_from_slice(name.as_bytes());
                out.extend_from_slice(b" { ");
                let mut off = 0;
                for (i, (fname, f)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.extend_from_slice(b", ");
                    }
                    out.extend_from_slice(fname.as_bytes());
                    out.extend_from_slice(b": ");
                    show(table, *f, p.add(off), false, out);
                    off += words(&table[*f as usize]);
                }
                out.extend_from_slice(if fields.is_empty() { b"}" } else { b" }" });
            }
            TyDesc::Sum { variants, .. } => {
                let p = word(a, 0) as *const u64;
                let tag = word(p, 0) as usize;
                let (vname, fs) = &variants[tag];
                out.extend_from_slice(vname.as_bytes());
                if !fs.is_empty() {
                    out.push(b'(');
                    let mut off = 1;
                    for (i, f) in fs.iter().enumerate() {
                        if i > 0 {
                            out.extend_from_slice(b", ");
                        }
                        show(table, *f, p.add(off), false, out);
                        off += words(&table[*f as usize]);
                    }
                    out.push(b')');
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(table: &[TyDesc], t: u32, words: &[u64], top: bool) -> String {
        let mut out = Vec::new();
        // SAFETY: the tests build `words` as a value of type `t`, with every
        // pointer at a local array or string that outlives this call.
        unsafe { show(table, t, words.as_ptr(), top, &mut out) };
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn shows_scalars_and_strings() {
        let _lock = crate::helpers::test_lock();
        let table = vec![
            TyDesc::Int,
            TyDesc::F64,
            TyDesc::Bool,
            TyDesc::Str,
            TyDesc::Unit,
        ];
        let s = "a\"b\n";
        let cases: Vec<(u32, Vec<u64>, bool, &str)> = vec![
            (0, vec![(-42i64) as u64], true, "-42"),
            (1, vec![0.1f64.to_bits()], true, "0.1"),
            (1, vec![3.0f64.to_bits()], true, "3"),
            (1, vec![f64::NAN.to_bits()], true, "NaN"),
            (1, vec![f64::INFINITY.to_bits()], true, "inf"),
            (2, vec![1], true, "true"),
            (3, vec![s.as_ptr() as u64, s.len() as u64], true, "a\"b\n"),
            (
                3,
                vec![s.as_ptr() as u64, s.len() as u64],
                false,
                "\"a\\\"b\\n\"",
            ),
            (4, vec![0], true, "()"),
        ];
        for (t, w, top, want) in cases {
            assert_eq!(shown(&table, t, &w, top), want);
        }
    }

    #[test]
    fn shows_containers() {
        let _lock = crate::helpers::test_lock();
        let table = vec![
            TyDesc::Int,
            TyDesc::Str,
            TyDesc::List(1),
            TyDesc::Tuple(vec![0, 1]),
            TyDesc::Option(0),
            TyDesc::Sum {
                name: "Tree".into(),
                variants: vec![("Leaf".into(), vec![]), ("Node".into(), vec![5, 0, 5])],
            },
            TyDesc::Record {
                name: "Sale".into(),
                fields: vec![("region".into(), 1), ("amount".into(), 0)],
            },
        ];
        let a = "x";
        let strs = [a.as_ptr() as u64, 1, a.as_ptr() as u64, 1];
        assert_eq!(
            shown(&table, 2, &[strs.as_ptr() as u64, 2], true),
            "[\"x\", \"x\"]"
        );
        let tup = [7u64, a.as_ptr() as u64, 1];
        assert_eq!(shown(&table, 3, &[tup.as_ptr() as u64], true), "(7, \"x\")");
        let some = [1u64, 5];
        let none = [0u64];
        assert_eq!(shown(&table, 4, &[some.as_ptr() as u64], true), "Some(5)");
        assert_eq!(shown(&table, 4, &[none.as_ptr() as u64], true), "None");
        let leaf = [0u64];
        let node = [1u64, leaf.as_ptr() as u64, 1, leaf.as_ptr() as u64];
        assert_eq!(
            shown(&table, 5, &[node.as_ptr() as u64], true),
            "Node(Leaf, 1, Leaf)"
        );
        let sale = [a.as_ptr() as u64, 1, 3];
        assert_eq!(
            shown(&table, 6, &[sale.as_ptr() as u64], true),
            "Sale { region: \"x\", amount: 3 }"
        );
    }

    #[test]
    fn equality_and_hash_agree() {
        let _lock = crate::helpers::test_lock();
        let table = vec![TyDesc::Str, TyDesc::F64];
        let (x, y) = ("abc".to_string(), "abc".to_string());
        let a = [x.as_ptr() as u64, 3];
        let b = [y.as_ptr() as u64, 3];
        // SAFETY: `a` and `b` are Str values pointing at live 3-byte strings;
        // `z` and `nz` are one-word F64 values.
        unsafe {
            assert!(eq(&table, 0, a.as_ptr(), b.as_ptr()));
            assert_eq!(hash(&table, 0, a.as_ptr()), hash(&table, 0, b.as_ptr()));
            let z = [0.0f64.to_bits()];
            let nz = [(-0.0f64).to_bits()];
            assert!(eq(&table, 1, z.as_ptr(), nz.as_ptr()));
            assert_eq!(hash(&table, 1, z.as_ptr()), hash(&table, 1, nz.as_ptr()));
        }
    }
}
