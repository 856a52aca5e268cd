//! Method signatures, instantiated from the method table (`ir::methods`)
//! for a receiver type.

use ir::methods::{self, Need as TableNeed, Recv, Sig};
use ir::Method;

use crate::body::Need;
use crate::infer::{Table, T};

/// A method resolved against a receiver type.
pub(crate) struct MethodSig {
    pub(crate) method: Method,
    pub(crate) params: Vec<T>,
    pub(crate) ret: T,
    /// Constraints on types checked once the body is solved.
    pub(crate) needs: Vec<(T, Need)>,
    /// `join`: the element type that must be Str.
    pub(crate) must_be_str_list: Option<T>,
}

/// The receiver kind of a (shallow-resolved) type, and its type
/// parameters: a list's element, or a map's key and value.
fn recv_of(recv: &T) -> Option<(Recv, Option<T>, Option<T>)> {
    Some(match recv {
        T::List(t) => (Recv::List, Some((**t).clone()), None),
        T::Str => (Recv::Str, None, None),
        T::Map(k, v) => (Recv::Map, Some((**k).clone()), Some((**v).clone())),
        T::Int => (Recv::Int, None, None),
        T::F64 => (Recv::F64, None, None),
        T::Option(t) => (Recv::Option, Some((**t).clone()), None),
        _ => return None,
    })
}

/// Turns a table type into a checker type.
struct Inst<'a> {
    recv: &'a T,
    /// A list's element or a map's key.
    first: Option<T>,
    /// A map's value.
    second: Option<T>,
    vars: Vec<T>,
}

impl Inst<'_> {
    fn ty(&mut self, table: &mut Table, s: &Sig) -> T {
        match s {
            Sig::Int => T::Int,
            Sig::F64 => T::F64,
            Sig::Bool => T::Bool,
            Sig::Str => T::Str,
            Sig::Elem | Sig::Key => self.first.clone().unwrap_or(T::Error),
            Sig::Val => self.second.clone().unwrap_or(T::Error),
            Sig::Recv => self.recv.clone(),
            Sig::Var(i) => {
                let i = *i as usize;
                while self.vars.len() <= i {
                    self.vars.push(table.fresh());
                }
                self.vars[i].clone()
            }
            Sig::List(e) => T::list(self.ty(table, e)),
            Sig::Option(e) => T::option(self.ty(table, e)),
            Sig::Map(k, v) => {
                let k = self.ty(table, k);
                T::map(k, self.ty(table, v))
            }
            Sig::Tuple(xs) => T::Tuple(xs.iter().map(|x| self.ty(table, x)).collect()),
            Sig::Fn(ps, r) => {
                let ps = ps.iter().map(|p| self.ty(table, p)).collect();
                T::func(ps, self.ty(table, r))
            }
        }
    }
}

/// Resolves `name` on a receiver of type `recv` (already shallow-resolved).
pub(crate) fn lookup(table: &mut Table, recv: &T, name: &str) -> Option<MethodSig> {
    let (kind, first, second) = recv_of(recv)?;
    let d = methods::lookup(kind, name)?;
    let mut inst = Inst {
        recv,
        first,
        second,
        vars: Vec::new(),
    };
    let params = d.params.iter().map(|p| inst.ty(table, p)).collect();
    let ret = inst.ty(table, &d.ret);
    let mut needs = Vec::new();
    let mut must_be_str_list = None;
    for (s, need) in d.needs {
        let t = inst.ty(table, s);
        match need {
            TableNeed::Numeric => needs.push((t, Need::Numeric)),
            TableNeed::Compare => needs.push((t, Need::Compare)),
            TableNeed::Sort => needs.push((t, Need::Sort)),
            TableNeed::MapKey => needs.push((t, Need::MapKey)),
            TableNeed::Str => must_be_str_list = Some(t),
        }
    }
    Some(MethodSig {
        method: d.method,
        params,
        ret,
        needs,
        must_be_str_list,
    })
}

/// The method names a receiver type has (for "did you mean" hints).
pub(crate) fn names(recv: &T) -> Vec<&'static str> {
    match recv_of(recv) {
        Some((kind, _, _)) => methods::names(kind).collect(),
        None => Vec::new(),
    }
}
