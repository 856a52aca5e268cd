//! Inference types and the unifier used inside one body.
//!
//! Signatures are explicit, so unknowns only come from `let`/`var`
//! initialisers, lambda parameters, `[]`, `None` and `empty_map()`; they are
//! solved by plain first-order unification with an occurs check.

use ir::{ItemTree, TypeId};

/// A type that may still contain unknowns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum T {
    Var(u32),
    Int,
    F64,
    Bool,
    Str,
    Unit,
    Never,
    Error,
    List(Box<T>),
    Map(Box<T>, Box<T>),
    Option(Box<T>),
    Tuple(Vec<T>),
    Fn(Vec<T>, Box<T>),
    Adt(TypeId),
}

impl T {
    pub(crate) fn list(t: T) -> T {
        T::List(Box::new(t))
    }
    pub(crate) fn map(k: T, v: T) -> T {
        T::Map(Box::new(k), Box::new(v))
    }
    pub(crate) fn option(t: T) -> T {
        T::Option(Box::new(t))
    }
    pub(crate) fn func(ps: Vec<T>, r: T) -> T {
        T::Fn(ps, Box::new(r))
    }

    pub(crate) fn from_ir(ty: &ir::Ty) -> T {
        match ty {
            ir::Ty::Int => T::Int,
            ir::Ty::F64 => T::F64,
            ir::Ty::Bool => T::Bool,
            ir::Ty::Str => T::Str,
            ir::Ty::Unit => T::Unit,
            ir::Ty::Never => T::Never,
            ir::Ty::Error | ir::Ty::StrBuilder => T::Error,
            ir::Ty::List(t) => T::list(T::from_ir(t)),
            ir::Ty::Map(k, v) => T::map(T::from_ir(k), T::from_ir(v)),
            ir::Ty::Option(t) => T::option(T::from_ir(t)),
            ir::Ty::Tuple(ts) => T::Tuple(ts.iter().map(T::from_ir).collect()),
            ir::Ty::Fn(ps, r) => T::func(ps.iter().map(T::from_ir).collect(), T::from_ir(r)),
            ir::Ty::Adt(id) => T::Adt(*id),
        }
    }
}

/// Why two types could not be unified.
pub(crate) enum Mismatch {
    Different,
    Infinite,
}

/// The substitution of one body.
#[derive(Default)]
pub(crate) struct Table {
    vars: Vec<Option<T>>,
}

impl Table {
    pub(crate) fn fresh(&mut self) -> T {
        self.vars.push(None);
        T::Var(self.vars.len() as u32 - 1)
    }

    /// Binds every unknown inside `t` to `Error`.
    pub(crate) fn poison_all(&mut self, t: &T) {
        match self.shallow(t) {
            T::Var(v) => self.vars[v as usize] = Some(T::Error),
            T::List(e) | T::Option(e) => self.poison_all(&e),
            T::Map(k, v) => {
                self.poison_all(&k);
                self.poison_all(&v);
            }
            T::Tuple(ts) => ts.iter().for_each(|t| self.poison_all(t)),
            T::Fn(ps, r) => {
                ps.iter().for_each(|t| self.poison_all(t));
                self.poison_all(&r);
            }
            _ => {}
        }
    }

    /// Follows bound variables at the top only.
    pub(crate) fn shallow(&self, t: &T) -> T {
        let mut cur = t.clone();
        while let T::Var(v) = cur {
            match self.vars.get(v as usize).and_then(|b| b.clone()) {
                Some(next) => cur = next,
                None => return T::Var(v),
            }
        }
        cur
    }

    /// Substitutes every bound variable (unknowns stay `Var`).
    pub(crate) fn resolve(&self, t: &T) -> T {
        match self.shallow(t) {
            T::List(e) => T::list(self.resolve(&e)),
            T::Map(k, v) => T::map(self.resolve(&k), self.resolve(&v)),
            T::Option(e) => T::option(self.resolve(&e)),
            T::Tuple(ts) => T::Tuple(ts.iter().map(|t| self.resolve(t)).collect()),
            T::Fn(ps, r) => T::func(
                ps.iter().map(|t| self.resolve(t)).collect(),
                self.resolve(&r),
            ),
            other => other,
        }
    }

    /// The IR type, or None if an unknown remains (the unknowns are
    /// collected into `unknown`).
    pub(crate) fn to_ir(&self, t: &T, unknown: &mut Vec<u32>) -> ir::Ty {
        match self.shallow(t) {
            T::Var(v) => {
                unknown.push(v);
                ir::Ty::Error
            }
            T::Int => ir::Ty::Int,
            T::F64 => ir::Ty::F64,
            T::Bool => ir::Ty::Bool,
            T::Str => ir::Ty::Str,
            T::Unit => ir::Ty::Unit,
            T::Never => ir::Ty::Never,
            T::Error => ir::Ty::Error,
            T::List(e) => ir::Ty::list(self.to_ir(&e, unknown)),
            T::Map(k, v) => ir::Ty::map(self.to_ir(&k, unknown), self.to_ir(&v, unknown)),
            T::Option(e) => ir::Ty::option(self.to_ir(&e, unknown)),
            T::Tuple(ts) => ir::Ty::tuple(ts.iter().map(|t| self.to_ir(t, unknown)).collect()),
            T::Fn(ps, r) => ir::Ty::func(
                ps.iter().map(|t| self.to_ir(t, unknown)).collect(),
                self.to_ir(&r, unknown),
            ),
            T::Adt(id) => ir::Ty::Adt(id),
        }
    }

    fn occurs(&self, v: u32, t: &T) -> bool {
        match self.shallow(t) {
            T::Var(w) => w == v,
            T::List(e) | T::Option(e) => self.occurs(v, &e),
            T::Map(k, x) => self.occurs(v, &k) || self.occurs(v, &x),
            T::Tuple(ts) => ts.iter().any(|t| self.occurs(v, t)),
            T::Fn(ps, r) => ps.iter().any(|t| self.occurs(v, t)) || self.occurs(v, &r),
            _ => false,
        }
    }

    /// True if the type mentions `Error` anywhere (then no error about it
    /// is reported: it would only repeat an earlier one).
    pub(crate) fn has_error(&self, t: &T) -> bool {
        match self.shallow(t) {
            T::Error => true,
            T::List(e) | T::Option(e) => self.has_error(&e),
            T::Map(k, x) => self.has_error(&k) || self.has_error(&x),
            T::Tuple(ts) => ts.iter().any(|t| self.has_error(t)),
            T::Fn(ps, r) => ps.iter().any(|t| self.has_error(t)) || self.has_error(&r),
            _ => false,
        }
    }

    /// Makes `a` and `b` equal. `Error` unifies with anything.
    pub(crate) fn unify(&mut self, a: &T, b: &T) -> Result<(), Mismatch> {
        let a = self.shallow(a);
        let b = self.shallow(b);
        match (&a, &b) {
            (T::Error, other) | (other, T::Error) => {
                // Unknowns meeting an error become errors: nothing more
                // is said about them.
                self.poison_all(&other.clone());
                Ok(())
            }
            (T::Var(x), T::Var(y)) if x == y => Ok(()),
            (T::Var(x), other) | (other, T::Var(x)) => {
                if self.occurs(*x, other) {
                    return Err(Mismatch::Infinite);
                }
                self.vars[*x as usize] = Some(other.clone());
                Ok(())
            }
            (T::List(x), T::List(y)) | (T::Option(x), T::Option(y)) => self.unify(x, y),
            (T::Map(k1, v1), T::Map(k2, v2)) => {
                let r1 = self.unify(k1, k2);
                let r2 = self.unify(v1, v2);
                r1.and(r2)
            }
            (T::Tuple(xs), T::Tuple(ys)) if xs.len() == ys.len() => {
                let mut res = Ok(());
                for (x, y) in xs.iter().zip(ys) {
                    let r = self.unify(x, y);
                    if res.is_ok() {
                        res = r;
                    }
                }
                res
            }
            (T::Fn(p1, r1), T::Fn(p2, r2)) if p1.len() == p2.len() => {
                let mut res = Ok(());
                for (x, y) in p1.iter().zip(p2) {
                    let r = self.unify(x, y);
                    if res.is_ok() {
                        res = r;
                    }
                }
                let r = self.unify(r1, r2);
                res.and(r)
            }
            (T::Adt(x), T::Adt(y)) if x == y => Ok(()),
            (x, y) if x == y && !matches!(x, T::List(_)) => Ok(()),
            _ => Err(Mismatch::Different),
        }
    }

    /// Shows a type as in source, unknowns as `_`.
    pub(crate) fn show(&self, items: &ItemTree, t: &T) -> String {
        let mut s = String::new();
        self.write(items, &mut s, t);
        s
    }

    fn write(&self, items: &ItemTree, s: &mut String, t: &T) {
        let list = |me: &Table, s: &mut String, ts: &[T]| {
            for (i, t) in ts.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                me.write(items, s, t);
            }
        };
        match self.shallow(t) {
            T::Var(_) => s.push('_'),
            T::Int => s.push_str("Int"),
            T::F64 => s.push_str("F64"),
            T::Bool => s.push_str("Bool"),
            T::Str => s.push_str("Str"),
            T::Unit => s.push_str("Unit"),
            T::Never => s.push_str("Never"),
            T::Error => s.push_str("{error}"),
            T::List(e) => {
                s.push_str("List[");
                self.write(items, s, &e);
                s.push(']');
            }
            T::Option(e) => {
                s.push_str("Option[");
                self.write(items, s, &e);
                s.push(']');
            }
            T::Map(k, v) => {
                s.push_str("Map[");
                self.write(items, s, &k);
                s.push_str(", ");
                self.write(items, s, &v);
                s.push(']');
            }
            T::Tuple(ts) => {
                s.push('(');
                list(self, s, &ts);
                s.push(')');
            }
            T::Fn(ps, r) => {
                s.push_str("fn(");
                list(self, s, &ps);
                s.push_str(") -> ");
                self.write(items, s, &r);
            }
            T::Adt(id) => s.push_str(&items.types[id].name),
        }
    }
}
