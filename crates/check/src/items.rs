//! Item lowering: user types and function signatures.
//!
//! `items.types[i]` is the i-th `type` item and `items.fns[i]` the i-th `fn`
//! item in source order, duplicates included (they are reported, and name
//! lookups find the first), so callers can pair AST functions with `FnId`s
//! by position.

use std::collections::HashMap;

use ir::{FnId, FnSig, ItemTree, Ty, TypeDefKind, TypeId, Variant};
use syntax::ast::{self, TypeRef, TypeRefKind};
use syntax::{Diagnostic, Span};

/// Names a program may not define as functions.
pub(crate) const BUILTIN_FNS: &[&str] = &[
    "print",
    "log",
    "empty_map",
    "read_file",
    "read_stdin",
    "args",
    "trap",
    "exit",
    "eprint",
    "write_file",
    "append_file",
    "read_lines",
];

const BUILTIN_TYPES: &[&str] = &["Int", "F64", "Bool", "Str", "Unit", "List", "Map", "Option"];

/// Lowers the program's types and signatures. Returns the item tree, the
/// span of each function's name (indexed like `items.fns`) and diagnostics.
pub fn lower_items(file: &ast::SourceFile) -> (ItemTree, Vec<Span>, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let mut items = ItemTree::default();

    // Pass 1: type names, so fields and signatures can refer to any type.
    let mut type_names: HashMap<&str, (TypeId, Span)> = HashMap::new();
    let mut type_defs = Vec::new();
    for item in &file.items {
        if let ast::Item::Type(def) = item {
            let id = items.types.alloc(ir::TypeDef {
                name: def.name.text.clone(),
                kind: match def.kind {
                    ast::TypeDefKind::Record(_) => TypeDefKind::Record { fields: Vec::new() },
                    ast::TypeDefKind::Sum(_) => TypeDefKind::Sum {
                        variants: Vec::new(),
                    },
                },
            });
            let name = def.name.text.as_str();
            if BUILTIN_TYPES.contains(&name) {
                diags.push(Diagnostic::error(
                    def.name.span,
                    format!("`{name}` is a built-in type and cannot be redefined"),
                ));
            } else if let Some((_, first)) = type_names.get(name) {
                diags.push(
                    Diagnostic::error(def.name.span, format!("type `{name}` is defined twice"))
                        .with_label(*first, "first defined here"),
                );
            } else {
                type_names.insert(name, (id, def.name.span));
            }
            type_defs.push((id, def));
        }
    }
    let names = type_names
        .iter()
        .map(|(k, v)| (k.to_string(), v.0))
        .collect();
    let resolver = TypeResolver { names: &names };

    // Pass 2: fields and variants.
    let mut ctors: HashMap<String, Span> = HashMap::new();
    for (id, def) in type_defs {
        let kind = match &def.kind {
            ast::TypeDefKind::Record(fields) => {
                let mut seen: HashMap<&str, Span> = HashMap::new();
                let mut out = Vec::new();
                for f in fields {
                    if let Some(first) = seen.get(f.name.text.as_str()) {
                        diags.push(
                            Diagnostic::error(
                                f.name.span,
                                format!("field `{}` is declared twice", f.name.text),
                            )
                            .with_label(*first, "first declared here"),
                        );
                    }
                    seen.insert(&f.name.text, f.name.span);
                    out.push((f.name.text.clone(), resolver.lower(&f.ty, &mut diags)));
                }
                TypeDefKind::Record { fields: out }
            }
            ast::TypeDefKind::Sum(variants) => {
                let mut out = Vec::new();
                for v in variants {
                    let name = v.name.text.clone();
                    if name == "Some" || name == "None" {
                        diags.push(Diagnostic::error(
                            v.name.span,
                            format!("`{name}` is a built-in constructor of Option"),
                        ));
                    } else if let Some(first) = ctors.get(&name) {
                        diags.push(
                            Diagnostic::error(
                                v.name.span,
                                format!("constructor `{name}` is defined twice"),
                            )
                            .with_label(*first, "first defined here"),
                        );
                    } else {
                        ctors.insert(name.clone(), v.name.span);
                    }
                    let fields = v
                        .fields
                        .iter()
                        .map(|t| resolver.lower(t, &mut diags))
                        .collect();
                    out.push(Variant { name, fields });
                }
                TypeDefKind::Sum { variants: out }
            }
        };
        items.types[id].kind = kind;
    }

    // Pass 3: signatures.
    let mut fn_spans = Vec::new();
    let mut fn_names: HashMap<&str, Span> = HashMap::new();
    for item in &file.items {
        let ast::Item::Fn(f) = item else { continue };
        let name = f.name.text.as_str();
        if BUILTIN_FNS.contains(&name) {
            diags.push(Diagnostic::error(
                f.name.span,
                format!("`{name}` is a built-in function and cannot be redefined"),
            ));
        } else if let Some(first) = fn_names.get(name) {
            diags.push(
                Diagnostic::error(f.name.span, format!("function `{name}` is defined twice"))
                    .with_label(*first, "first defined here"),
            );
        } else {
            fn_names.insert(name, f.name.span);
        }
        let mut seen: HashMap<&str, Span> = HashMap::new();
        let mut params = Vec::new();
        for p in &f.params {
            if let Some(first) = seen.get(p.name.text.as_str()) {
                diags.push(
                    Diagnostic::error(
                        p.name.span,
                        format!("parameter `{}` is declared twice", p.name.text),
                    )
                    .with_label(*first, "first declared here"),
                );
            }
            seen.insert(&p.name.text, p.name.span);
            params.push((p.name.text.clone(), resolver.lower(&p.ty, &mut diags)));
        }
        let ret = match &f.ret {
            Some(t) => resolver.lower(t, &mut diags),
            None => Ty::Unit,
        };
        if name == "main" && fn_names.get(name) == Some(&f.name.span) {
            if !f.params.is_empty() {
                diags.push(Diagnostic::error(
                    f.name.span,
                    "`main` must take no parameters",
                ));
            }
            if ret != Ty::Unit && ret != Ty::Error {
                let span = f.ret.as_ref().map_or(f.name.span, |t| t.span);
                diags.push(Diagnostic::error(span, "`main` must return Unit"));
            }
        }
        items.fns.alloc(FnSig {
            name: f.name.text.clone(),
            params,
            ret,
            owning_of: None,
            takes_token: false,
        });
        fn_spans.push(f.name.span);
    }
    // Pass 4: constants, folded now. A constant's name is a value name
    // (lower-case) or stands where a constructor could (upper-case), so it
    // may be neither a function's nor a constructor's.
    items.consts = crate::consts::lower_consts(file, &resolver, &mut diags);
    let mut const_names: HashMap<&str, Span> = HashMap::new();
    for item in &file.items {
        let ast::Item::Const(c) = item else { continue };
        let name = c.name.text.as_str();
        let ctor = name == "Some"
            || name == "None"
            || items.types.iter().any(|(_, t)| match &t.kind {
                TypeDefKind::Sum { variants } => variants.iter().any(|v| v.name == name),
                TypeDefKind::Record { .. } => false,
            });
        let clash = if BUILTIN_FNS.contains(&name) {
            Some(format!(
                "`{name}` is a built-in function and cannot be redefined"
            ))
        } else if let Some(first) = const_names.get(name).or(fn_names.get(name)) {
            diags.push(
                Diagnostic::error(c.name.span, format!("`{name}` is defined twice"))
                    .with_label(*first, "first defined here"),
            );
            None
        } else if ctor {
            Some(format!(
                "`{name}` is a constructor and cannot name a constant"
            ))
        } else {
            None
        };
        if let Some(msg) = clash {
            diags.push(Diagnostic::error(c.name.span, msg));
        }
        const_names.entry(name).or_insert(c.name.span);
    }

    if !fn_names.contains_key("main") {
        let end = file.items.last().map_or(0, |i| i.span().end);
        diags.push(
            Diagnostic::error(Span::new(0, 0), "the program has no `main` function").with_note(
                format!(
                    "add `fn main() {{ ... }}`{}",
                    if end > 0 {
                        "; execution starts there"
                    } else {
                        ""
                    }
                ),
            ),
        );
    }
    (items, fn_spans, diags)
}

/// The item tree's names, looked up by every body: built once per tree,
/// since a scan of the tree per lookup (or a table per body) makes
/// checking quadratic in the number of items. The first definition of a
/// name wins, as in `ItemTree::fn_by_name`.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ItemIndex {
    pub(crate) types: HashMap<String, TypeId>,
    pub(crate) fns: HashMap<String, FnId>,
    /// Constants: the index into `ItemTree::consts`.
    pub(crate) consts: HashMap<String, usize>,
    /// Constructors of sum types: the type and the variant's index.
    pub(crate) ctors: HashMap<String, (TypeId, u32)>,
}

impl ItemIndex {
    pub fn new(items: &ItemTree) -> ItemIndex {
        let mut index = ItemIndex::default();
        for (id, def) in items.types.iter() {
            index.types.entry(def.name.clone()).or_insert(id);
            if let TypeDefKind::Sum { variants } = &def.kind {
                for (i, v) in variants.iter().enumerate() {
                    index.ctors.entry(v.name.clone()).or_insert((id, i as u32));
                }
            }
        }
        for (id, f) in items.fns.iter() {
            index.fns.entry(f.name.clone()).or_insert(id);
        }
        for (i, c) in items.consts.iter().enumerate() {
            index.consts.entry(c.name.clone()).or_insert(i);
        }
        index
    }
}

/// Resolves written types against the program's type names.
pub(crate) struct TypeResolver<'a> {
    pub(crate) names: &'a HashMap<String, TypeId>,
}

impl TypeResolver<'_> {
    /// Lowers a written type; unknown names become `Ty::Error` with a
    /// diagnostic.
    pub(crate) fn lower(&self, t: &TypeRef, diags: &mut Vec<Diagnostic>) -> Ty {
        match &t.kind {
            TypeRefKind::Tuple(elems) => match elems.len() {
                0 => Ty::Unit,
                1 => self.lower(&elems[0], diags),
                _ => Ty::tuple(elems.iter().map(|e| self.lower(e, diags)).collect()),
            },
            TypeRefKind::Fn { params, ret } => {
                let ps = params.iter().map(|p| self.lower(p, diags)).collect();
                let r = match ret {
                    Some(r) => self.lower(r, diags),
                    None => Ty::Unit,
                };
                Ty::func(ps, r)
            }
            TypeRefKind::Named { name, args } => {
                let want = match name.text.as_str() {
                    "Int" | "F64" | "Bool" | "Str" | "Unit" => 0,
                    "List" | "Option" => 1,
                    "Map" => 2,
                    other => {
                        return match self.names.get(other) {
                            Some(id) => {
                                if !args.is_empty() {
                                    diags.push(Diagnostic::error(
                                        t.span,
                                        format!("type `{other}` takes no type arguments"),
                                    ));
                                }
                                Ty::Adt(*id)
                            }
                            None => {
                                let d =
                                    Diagnostic::error(name.span, format!("unknown type `{other}`"));
                                let candidates = self
                                    .names
                                    .keys()
                                    .map(String::as_str)
                                    .chain(BUILTIN_TYPES.iter().copied());
                                diags.push(crate::suggest::did_you_mean(d, other, candidates));
                                Ty::Error
                            }
                        };
                    }
                };
                if args.len() != want {
                    diags.push(Diagnostic::error(
                        t.span,
                        format!(
                            "`{}` takes {want} type argument{}, but {} {} given",
                            name.text,
                            if want == 1 { "" } else { "s" },
                            args.len(),
                            if args.len() == 1 { "was" } else { "were" }
                        ),
                    ));
                    return Ty::Error;
                }
                let a: Vec<Ty> = args.iter().map(|a| self.lower(a, diags)).collect();
                match name.text.as_str() {
                    "Int" => Ty::Int,
                    "F64" => Ty::F64,
                    "Bool" => Ty::Bool,
                    "Str" => Ty::Str,
                    "Unit" => Ty::Unit,
                    "List" => Ty::list(a[0].clone()),
                    "Option" => Ty::option(a[0].clone()),
                    _ => {
                        if !matches!(a[0], Ty::Int | Ty::Str | Ty::Bool | Ty::Error) {
                            diags.push(key_error(args[0].span, &a[0], self));
                            // Reported once: uses of the map say nothing more.
                            return Ty::map(Ty::Error, a[1].clone());
                        }
                        Ty::map(a[0].clone(), a[1].clone())
                    }
                }
            }
        }
    }
}

fn key_error(span: Span, ty: &Ty, _r: &TypeResolver) -> Diagnostic {
    let shown = match ty {
        Ty::Adt(_) => "a user type".to_string(),
        Ty::F64 => "`F64`".to_string(),
        Ty::List(_) => "a list".to_string(),
        Ty::Map(..) => "a map".to_string(),
        Ty::Option(_) => "an option".to_string(),
        Ty::Tuple(_) => "a tuple".to_string(),
        Ty::Fn(..) => "a function".to_string(),
        Ty::Unit => "`Unit`".to_string(),
        _ => "this type".to_string(),
    };
    Diagnostic::error(span, format!("a map key cannot be {shown}"))
        .with_note("map keys are Int, Str or Bool")
}
