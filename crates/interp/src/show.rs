//! Showing values as interpolation and `print` do (docs/language.md,
//! "Showing values"): strings bare at top level and `{:?}`-quoted inside containers,
//! F64 as Rust's `{}` Display.

use std::fmt::Write;

use ir::{ItemTree, TypeDefKind};

use crate::value::Value;

/// Appends `v` as interpolation shows it.
pub(crate) fn show(items: &ItemTree, v: &Value, out: &mut String) {
    match v {
        Value::Str(s) => out.push_str(s.as_str()),
        _ => show_inner(items, v, out),
    }
}

/// Appends `v` as it appears inside a container.
pub(crate) fn show_inner(items: &ItemTree, v: &Value, out: &mut String) {
    match v {
        Value::Unit => out.push_str("()"),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::F64(f) => {
            let _ = write!(out, "{f}");
        }
        Value::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        Value::Str(s) => {
            let _ = write!(out, "{:?}", s.as_str());
        }
        Value::List(l) => {
            out.push('[');
            l.with(|xs| {
                for (i, x) in xs.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    show_inner(items, x, out);
                }
            });
            out.push(']');
        }
        Value::Map(m) => {
            out.push('{');
            for (i, (k, x)) in m.borrow().iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                show_inner(items, k, out);
                out.push_str(": ");
                show_inner(items, x, out);
            }
            out.push('}');
        }
        Value::Tuple(xs) => {
            out.push('(');
            for (i, x) in xs.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                show_inner(items, x, out);
            }
            if xs.len() == 1 {
                out.push(',');
            }
            out.push(')');
        }
        Value::Record(r) => {
            let def = &items.types[r.ty];
            out.push_str(&def.name);
            let names: Vec<&str> = match &def.kind {
                TypeDefKind::Record { fields } => fields.iter().map(|(n, _)| n.as_str()).collect(),
                TypeDefKind::Sum { .. } => Vec::new(),
            };
            if r.fields.is_empty() {
                out.push_str(" {}");
                return;
            }
            out.push_str(" { ");
            for (i, x) in r.fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(names.get(i).copied().unwrap_or("?"));
                out.push_str(": ");
                show_inner(items, x, out);
            }
            out.push_str(" }");
        }
        Value::Sum(s) => {
            let def = &items.types[s.ty];
            let name = match &def.kind {
                TypeDefKind::Sum { variants } => variants
                    .get(s.variant as usize)
                    .map(|v| v.name.as_str())
                    .unwrap_or("?"),
                TypeDefKind::Record { .. } => "?",
            };
            out.push_str(name);
            if !s.fields.is_empty() {
                out.push('(');
                for (i, x) in s.fields.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    show_inner(items, x, out);
                }
                out.push(')');
            }
        }
        Value::Some(x) => {
            out.push_str("Some(");
            show_inner(items, x, out);
            out.push(')');
        }
        Value::None => out.push_str("None"),
        Value::Func(_) | Value::Closure(_) => out.push_str("<fn>"),
        Value::Builder(b) => {
            let _ = write!(out, "{:?}", b.borrow().text);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use super::*;
    use crate::value::{Key, ListBuf, ListVal, MapObj, Meta, StrVal};

    fn s(text: &str) -> Value {
        Value::Str(StrVal::unowned(text))
    }

    fn list(items: Vec<Value>) -> Value {
        let len = items.len();
        Value::List(ListVal {
            view: false,
            buf: Some(Rc::new(ListBuf::new(items, len, Meta::none()))),
            start: 0,
            len,
            version: 0,
        })
    }

    #[test]
    fn shows_values_as_interpolation_does() {
        let mut map = MapObj::default();
        map.put(Key::Str("a".into()), s("a"), Value::Int(1));
        map.put(Key::Str("b\n".into()), s("b\n"), Value::F64(0.5));
        let cases: Vec<(Value, &str)> = vec![
            (Value::Int(-42), "-42"),
            (Value::F64(3.0), "3"),
            (Value::F64(0.1), "0.1"),
            (Value::F64(f64::NAN), "NaN"),
            (Value::F64(f64::NEG_INFINITY), "-inf"),
            (Value::F64(1e21), "1000000000000000000000"),
            (Value::Bool(true), "true"),
            (Value::Unit, "()"),
            (s("top \"level\""), "top \"level\""),
            (list(vec![s("a\"b"), s("é\t")]), "[\"a\\\"b\", \"é\\t\"]"),
            (list(vec![]), "[]"),
            (
                Value::tuple(
                    vec![Value::Int(1), s("a")],
                    crate::value::Site { offset: 0 },
                ),
                "(1, \"a\")",
            ),
            (
                Value::some(s("x"), crate::value::Site { offset: 0 }),
                "Some(\"x\")",
            ),
            (Value::None, "None"),
            (
                Value::Map(Rc::new(RefCell::new(map))),
                "{\"a\": 1, \"b\\n\": 0.5}",
            ),
            (Value::Map(Rc::default()), "{}"),
        ];
        let items = ItemTree::default();
        for (v, want) in cases {
            let mut got = String::new();
            show(&items, &v, &mut got);
            assert_eq!(got, want);
        }
    }
}
