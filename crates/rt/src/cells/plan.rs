//! Drop plans: the type table compiled once per run into what a deep free
//! needs per block, so the walk does no descriptor interpretation per
//! block (no per-field `words`/`has_pointers` tests, no iterators): a
//! value's shape, and for a cell the word offsets and types of exactly the
//! fields that can own a block.

use crate::helpers::types::{self, TyDesc};

/// How a deep free takes a value of one type apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// Owns no block the walk frees: scalars, and the kinds the table does
    /// not describe (closures, maps, builders), which the analysis never
    /// drops deep.
    Nothing,
    /// A `(ptr, len)` string: its block, when `len > 0`.
    Str,
    /// A `(ptr, len)` list: its buffer, and each element of type `elem`
    /// (`words` words each) when `elem` owns blocks.
    List { elem: u32, words: u8, owning: bool },
    /// A block whose owning fields are `children[first..first + len]`
    /// (records and tuples).
    Cell { first: u32, len: u32 },
    /// A `[tag, fields...]` block (sums and `Some`): variant `tag`'s owning
    /// fields are `variants[first + tag]`, a range of `children`.
    Tagged { first: u32, count: u32 },
    /// A tagged block whose owning fields all hold one-word values of its
    /// own type (a tree or a chain): the deep free takes such a value
    /// apart with a work list of bare pointers and no per-block dispatch.
    Tree { first: u32, count: u32 },
}

/// A field that may own a block: its first word's offset in its cell, its
/// type, whether it takes two words, and for a sum or option the tags
/// below 64 of its variants without fields. Those are static `[tag]`
/// words, never heap blocks (see `helpers::types`), so the walk skips such
/// a field after one read instead of taking it through the work list and
/// the page map: the leaves of a tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Child {
    pub off: u32,
    pub ty: u32,
    pub two: bool,
    pub static_tags: u64,
}

/// The plans of every type of one installed table.
#[derive(Default)]
pub(crate) struct Plans {
    /// Which table these plans were built from (`types::generation`); 0 =
    /// none yet.
    pub generation: u64,
    pub shapes: Vec<Shape>,
    /// Per variant of a tagged type: `(first, len)` into `children`.
    pub variants: Vec<(u32, u32)>,
    pub children: Vec<Child>,
}

impl Plans {
    pub const fn new() -> Plans {
        Plans {
            generation: 0,
            shapes: Vec::new(),
            variants: Vec::new(),
            children: Vec::new(),
        }
    }

    /// Rebuilds the plans from `table` (installed as `generation`).
    pub fn build(&mut self, table: &[TyDesc], generation: u64) {
        self.generation = generation;
        self.shapes.clear();
        self.variants.clear();
        self.children.clear();
        for d in table {
            let shape = match d {
                _ if !owns_blocks(d) => Shape::Nothing,
                TyDesc::Str => Shape::Str,
                TyDesc::List(e) => Shape::List {
                    elem: *e,
                    words: table.get(*e as usize).map_or(1, types::words) as u8,
                    owning: table.get(*e as usize).is_some_and(owns_blocks),
                },
                TyDesc::Tuple(fs) => {
                    let (first, len) = self.fields(table, 0, fs.iter().copied());
                    Shape::Cell { first, len }
                }
                TyDesc::Record { fields, .. } => {
                    let (first, len) = self.fields(table, 0, fields.iter().map(|f| f.1));
                    Shape::Cell { first, len }
                }
                TyDesc::Option(e) => {
                    let first = self.variants.len() as u32;
                    // `None` is static; a heap option is `Some`: `[1, value]`.
                    self.variants.push((self.children.len() as u32, 0));
                    let some = self.fields(table, 1, std::iter::once(*e));
                    self.variants.push(some);
                    Shape::Tagged { first, count: 2 }
                }
                TyDesc::Sum { variants, .. } => {
                    let first = self.variants.len() as u32;
                    for (_, fs) in variants {
                        let v = self.fields(table, 1, fs.iter().copied());
                        self.variants.push(v);
                    }
                    let count = variants.len() as u32;
                    let own = self.shapes.len() as u32;
                    let all = &self.variants[first as usize..];
                    let tree = all.iter().all(|&(f, n)| {
                        self.children[f as usize..(f + n) as usize]
                            .iter()
                            .all(|c| c.ty == own && !c.two)
                    });
                    if tree {
                        Shape::Tree { first, count }
                    } else {
                        Shape::Tagged { first, count }
                    }
                }
                _ => Shape::Nothing,
            };
            self.shapes.push(shape);
        }
    }

    /// Appends the owning fields among `fs`, laid out from word `at`, and
    /// returns their range in `children`.
    fn fields(&mut self, table: &[TyDesc], at: u32, fs: impl Iterator<Item = u32>) -> (u32, u32) {
        let first = self.children.len() as u32;
        let mut off = at;
        for f in fs {
            let Some(d) = table.get(f as usize) else {
                continue;
            };
            let n = types::words(d) as u32;
            if owns_blocks(d) {
                self.children.push(Child {
                    off,
                    ty: f,
                    two: n == 2,
                    static_tags: static_tags(d),
                });
            }
            off += n;
        }
        (first, self.children.len() as u32 - first)
    }

    /// The owning fields of a block of tagged (or tree) type `first..first + count`
    /// whose tag is `tag` (none for a tag out of range).
    #[inline(always)]
    pub fn variant(&self, first: u32, count: u32, tag: u64) -> &[Child] {
        if tag >= count as u64 {
            return &[];
        }
        let (f, n) = self.variants[(first as u64 + tag) as usize];
        &self.children[f as usize..(f + n) as usize]
    }

    /// The owning fields of a record or tuple.
    #[inline(always)]
    pub fn cell(&self, first: u32, len: u32) -> &[Child] {
        &self.children[first as usize..(first + len) as usize]
    }
}

/// The tags below 64 of a sum's or option's variants without fields.
fn static_tags(d: &TyDesc) -> u64 {
    match d {
        TyDesc::Option(_) => 1,
        TyDesc::Sum { variants, .. } => variants
            .iter()
            .take(64)
            .enumerate()
            .filter(|(_, (_, fs))| fs.is_empty())
            .fold(0, |m, (i, _)| m | 1 << i),
        _ => 0,
    }
}

/// Whether a deep free has anything to do for a value of this type: not
/// for scalars, kinds the table does not describe (closures, maps,
/// builders), or a sum whose variants all lack fields (its values are all
/// static, like an enum's).
fn owns_blocks(d: &TyDesc) -> bool {
    match d {
        TyDesc::Int
        | TyDesc::F64
        | TyDesc::Bool
        | TyDesc::Unit
        | TyDesc::Fn
        | TyDesc::Map(..)
        | TyDesc::StrBuilder => false,
        TyDesc::Sum { variants, .. } => variants.iter().any(|(_, fs)| !fs.is_empty()),
        TyDesc::Str
        | TyDesc::List(_)
        | TyDesc::Option(_)
        | TyDesc::Tuple(_)
        | TyDesc::Record { .. } => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_keep_only_the_owning_fields_at_their_offsets() {
        // 0 Int, 1 Str, 2 `T = Leaf | Node(Int, T, Str, T, C)`, 3 Option[T],
        // 4 (Int, Fn, List[Int]), 5 Fn, 6 List[Int], 7 `C = Red | Black`,
        // 8 `U = Tip | Bin(U, Int, U, C)`.
        let table = vec![
            TyDesc::Int,
            TyDesc::Str,
            TyDesc::Sum {
                name: "T".into(),
                variants: vec![
                    ("Leaf".into(), vec![]),
                    ("Node".into(), vec![0, 2, 1, 2, 7]),
                ],
            },
            TyDesc::Option(2),
            TyDesc::Tuple(vec![0, 5, 6]),
            TyDesc::Fn,
            TyDesc::List(0),
            TyDesc::Sum {
                name: "C".into(),
                variants: vec![("Red".into(), vec![]), ("Black".into(), vec![])],
            },
            TyDesc::Sum {
                name: "U".into(),
                variants: vec![("Tip".into(), vec![]), ("Bin".into(), vec![8, 0, 8, 7])],
            },
        ];
        let mut p = Plans::new();
        p.build(&table, 7);
        assert_eq!(p.generation, 7);
        let Shape::Tagged { first, count } = p.shapes[2] else {
            panic!("{:?}", p.shapes[2]);
        };
        assert!(p.variant(first, count, 0).is_empty());
        let node: Vec<_> = p
            .variant(first, count, 1)
            .iter()
            .map(|c| (c.off, c.ty, c.two))
            .collect();
        assert_eq!(node, [(2, 2, false), (3, 1, true), (5, 2, false)]);
        assert_eq!(
            p.variant(first, count, 1)[0].static_tags,
            1,
            "Leaf is tag 0"
        );
        assert_eq!(p.variant(first, count, 1)[1].static_tags, 0);
        assert!(
            p.variant(first, count, 2).is_empty(),
            "a bad tag frees no field"
        );
        let Shape::Tagged { first, count } = p.shapes[3] else {
            panic!("{:?}", p.shapes[3]);
        };
        assert_eq!(
            p.variant(first, count, 1),
            [Child {
                off: 1,
                ty: 2,
                two: false,
                static_tags: 1
            }]
        );
        let Shape::Cell { first, len } = p.shapes[4] else {
            panic!("{:?}", p.shapes[4]);
        };
        assert_eq!(
            p.cell(first, len),
            [Child {
                off: 2,
                ty: 6,
                two: true,
                static_tags: 0
            }]
        );
        assert_eq!(p.shapes[5], Shape::Nothing);
        assert_eq!(p.shapes[7], Shape::Nothing, "an enum's values are static");
        let Shape::Tree { first, count } = p.shapes[8] else {
            panic!("{:?}", p.shapes[8]);
        };
        let bin: Vec<_> = p
            .variant(first, count, 1)
            .iter()
            .map(|c| (c.off, c.ty))
            .collect();
        assert_eq!(bin, [(1, 8), (3, 8)]);
        assert_eq!(
            p.shapes[6],
            Shape::List {
                elem: 0,
                words: 1,
                owning: false
            }
        );
    }
}
