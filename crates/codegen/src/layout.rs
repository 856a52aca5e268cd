//! Value layout (see rt::helpers::types for the shared description) and the
//! type table compiled code hands to the runtime's helpers.

use ir::{Ty, TypeDefKind};
use rt::helpers::types::TyDesc;
use std::collections::HashMap;

/// Words a value of `ty` occupies: two for Str and List, none for Never,
/// one for everything else.
pub fn words(ty: &Ty) -> usize {
    match ty {
        Ty::Str | Ty::List(_) => 2,
        Ty::Never => 0,
        _ => 1,
    }
}

/// Bytes of one element of a `List[ty]`.
pub fn elem_size(ty: &Ty) -> i64 {
    (words(ty).max(1) * 8) as i64
}

/// Whether a list of `ty` needs a pointer block.
pub fn has_pointers(ty: &Ty) -> bool {
    !matches!(ty, Ty::Int | Ty::F64 | Ty::Bool | Ty::Unit | Ty::Never)
}

/// The element type of a list type (Error for anything else).
pub fn elem_of(ty: &Ty) -> Ty {
    match ty {
        Ty::List(e) => (**e).clone(),
        _ => Ty::Error,
    }
}

/// Word offsets of each field in a sequence of field types.
pub fn offsets<'a>(fields: impl Iterator<Item = &'a Ty>) -> (Vec<usize>, usize) {
    let mut out = Vec::new();
    let mut at = 0;
    for f in fields {
        out.push(at);
        at += words(f).max(1);
    }
    (out, at)
}

/// Interns types into the runtime's descriptor table.
#[derive(Default)]
pub struct TypeTable {
    pub descs: Vec<TyDesc>,
    ids: HashMap<Ty, u32>,
}

impl TypeTable {
    /// The descriptor index of `ty`, adding it (and its parts) if new.
    pub fn id(&mut self, items: &ir::ItemTree, ty: &Ty) -> u32 {
        if let Some(&id) = self.ids.get(ty) {
            return id;
        }
        let id = self.descs.len() as u32;
        // Reserve first so recursive user types refer back to this slot.
        self.descs.push(TyDesc::Unit);
        self.ids.insert(ty.clone(), id);
        let desc = match ty {
            Ty::Int => TyDesc::Int,
            Ty::F64 => TyDesc::F64,
            Ty::Bool => TyDesc::Bool,
            Ty::Str => TyDesc::Str,
            Ty::Unit | Ty::Never | Ty::Error => TyDesc::Unit,
            Ty::Fn(..) => TyDesc::Fn,
            Ty::StrBuilder => TyDesc::StrBuilder,
            Ty::List(e) => TyDesc::List(self.id(items, e)),
            Ty::Map(k, v) => {
                let k = self.id(items, k);
                TyDesc::Map(k, self.id(items, v))
            }
            Ty::Option(e) => TyDesc::Option(self.id(items, e)),
            Ty::Tuple(es) => TyDesc::Tuple(es.iter().map(|e| self.id(items, e)).collect()),
            Ty::Adt(t) => {
                let def = &items.types[*t];
                match &def.kind {
                    TypeDefKind::Record { fields } => TyDesc::Record {
                        name: def.name.clone(),
                        fields: fields
                            .iter()
                            .map(|(n, t)| (n.clone(), self.id(items, t)))
                            .collect(),
                    },
                    TypeDefKind::Sum { variants } => TyDesc::Sum {
                        name: def.name.clone(),
                        variants: variants
                            .iter()
                            .map(|v| {
                                (
                                    v.name.clone(),
                                    v.fields.iter().map(|t| self.id(items, t)).collect(),
                                )
                            })
                            .collect(),
                    },
                }
            }
        };
        self.descs[id as usize] = desc;
        id
    }
}
