//! Methods: the receiver and arguments are evaluated, then each receiver
//! family (lists, lists with a closure, strings, maps, numbers) lowers its
//! own.

use super::fusion::Stream;
use super::{ba, flags, Lowerer, Vals};
use crate::layout::{elem_of, elem_size, has_pointers, words};
use crate::rtfns::F;
use ::ir::{ExprId, Method, Ty};
use cranelift_codegen::ir::{condcodes::IntCC, types::F64, types::I64, InstBuilder, Value};
use cranelift_frontend::Variable;

/// A method call with its receiver (`r`, of type `rty` with elements `ety`
/// of `es` bytes) and arguments (`a`) evaluated.
struct MethodCall<'c> {
    e: ExprId,
    m: Method,
    args: &'c [ExprId],
    ty: &'c Ty,
    rty: Ty,
    ety: Ty,
    es: i64,
    r: Vals,
    a: Vec<Vals>,
}

impl<'a, 'm, 'f> Lowerer<'a, 'm, 'f> {
    /// Runs `body(self, i, elem)` for each element of `(p, len)`; `body`
    /// may branch out of the loop but must leave the builder in a block
    /// that continues with the next element. Under a fused chain
    /// (`self.fused`) the elements come from its stream instead.
    pub(super) fn each(
        &mut self,
        p: Value,
        len: Value,
        ety: &Ty,
        body: impl FnOnce(&mut Self, Value, Vals),
    ) {
        let st = match self.fused.take() {
            Some(st) => st,
            None => Stream::list(p, len, ety.clone()),
        };
        self.run_stream(st, |s, i, v, _| {
            body(s, i, v);
            true
        });
    }

    pub(super) fn fn_ret(fty: &Ty) -> Ty {
        match fty {
            Ty::Fn(_, r) => (**r).clone(),
            _ => Ty::Unit,
        }
    }

    pub(super) fn method(
        &mut self,
        e: ExprId,
        m: Method,
        recv: ExprId,
        args: &[ExprId],
        ty: &Ty,
    ) -> Option<Vals> {
        use Method::*;
        let rty = self.body[recv].ty.clone();
        // A fused chain's lists are never built: its source and stages
        // become a stream the method's loop runs over (`each`).
        let stream = match self.plan.fused_consumer(e).cloned() {
            Some(c) => Some(self.stream(&c)?),
            None => None,
        };
        let r = match &stream {
            Some(st) => match st.direct_range() {
                Some((lo, n)) => vec![lo, n],
                None => vec![self.iconst(0), self.iconst(0)],
            },
            None => self.expr(recv)?,
        };
        let probe = match m {
            MapPut => self.upsert_begin(e),
            _ => None,
        };
        let mut a = Vec::new();
        for (x, param) in args.iter().zip(m.def().params) {
            let v = match param {
                ::ir::methods::Sig::Fn(..) => self.method_arg(*x)?,
                _ => self.expr(*x)?,
            };
            a.push(v);
        }
        if let Some(probe) = probe {
            let v = a.pop()?;
            let k = a.pop()?;
            self.upsert_put(e, probe, r[0], (k, v), false);
            return Some(vec![r[0]]);
        }
        let ety = elem_of(&rty);
        let es = elem_size(&ety);
        let one = |v: Value| Some(vec![v]);
        let call = MethodCall {
            e,
            m,
            args,
            ty,
            rty,
            ety,
            es,
            r,
            a,
        };
        let pieces = stream.as_ref().and_then(|s| s.direct_pieces()).cloned();
        let range_len = stream.as_ref().is_some_and(|s| s.direct_range().is_some())
            && matches!(m, ListLen | ListIsEmpty);
        let streamed = stream.is_some() && !range_len;
        let collected = stream.as_ref().is_some_and(|s| s.direct_range().is_none());
        self.fused = stream;
        let out = match m {
            ListLen | ListIsEmpty | ListCounts if pieces.is_some() => {
                Some(self.pieces_direct(e, m, pieces.as_ref()?))
            }
            ListLen | ListIsEmpty | ListMin | ListMax | ListContains | ListCounts | ListJoin
                if streamed =>
            {
                Some(self.stream_consume(e, m, &call.ety, &call.a))
            }
            ListMap | ListFilter if collected => {
                let fty = self.body[args[0]].ty.clone();
                let f = call.a[0][0];
                Some(self.stream_collect(e, m, (args[0], f, &fty), &elem_of(ty)))
            }
            ListLen | StrLen => one(call.r[1]),
            ListIsEmpty | StrIsEmpty => {
                let c = self.b.ins().icmp_imm_s(IntCC::Equal, call.r[1], 0);
                one(self.bool_val(c))
            }
            ListGet | ListFirst | ListLast | ListMin | ListMax | ListContains | ListSum
            | ListPush | ListConcat | ListTake | ListDrop | ListReverse | ListSet | ListSort
            | ListUnique | ListEnumerate | ListZip | ListCounts | ListJoin => {
                self.list_method(call)
            }
            ListSortBy | ListMap | ListFilter | ListFlatMap | ListFold | ListAny | ListAll
            | ListFind => self.list_closure_method(call),
            StrByte | StrChars | StrWords | StrLines | StrSplit | StrTrim | StrLower | StrUpper
            | StrReplace | StrRepeat | StrContains | StrStartsWith | StrEndsWith | StrFind
            | StrTake | StrDrop | StrSlice | StrToInt | StrToF64 | StrParseInt | StrParseF64 => {
                self.str_method(call)
            }
            MapPut | MapUpdate | MapGet | MapRemove | MapGetOr | MapHas | MapLen | MapKeys
            | MapValues | MapEntries => self.map_method(call),
            IntToF64 | IntAbs | F64ToInt | F64Abs | F64Sqrt | F64Floor => self.num_method(call),
            OptIsSome | OptIsNone | OptUnwrap | OptUnwrapOr | OptMap | OptAndThen => {
                self.option_method(call)
            }
        };
        self.fused = None;
        out
    }

    /// The methods of `List[T]` that take no closure.
    fn list_method(&mut self, call: MethodCall<'_>) -> Option<Vals> {
        use Method::*;
        let MethodCall {
            e,
            m,
            args,
            ety,
            es,
            r,
            a,
            ..
        } = call;
        let aty = |s: &Self, i: usize| s.body[args[i]].ty.clone();
        let one = |v: Value| Some(vec![v]);
        match m {
            ListGet => {
                let bad = self
                    .b
                    .ins()
                    .icmp(IntCC::UnsignedGreaterThanOrEqual, a[0][0], r[1]);
                let okb = self.b.create_block();
                let merge = self.b.create_block();
                self.b.append_block_param(merge, I64);
                let none = self.none();
                self.b.ins().brif(bad, merge, &ba(&[none]), okb, &[]);
                self.b.switch_to_block(okb);
                let v = self.elem_at(r[0], a[0][0], &ety);
                let s = self.some(e, &v);
                self.b.ins().jump(merge, &ba(&[s]));
                self.b.switch_to_block(merge);
                one(self.b.block_params(merge)[0])
            }
            ListFirst | ListLast | ListMin | ListMax => {
                let empty = self.b.ins().icmp_imm_s(IntCC::Equal, r[1], 0);
                let msg = format!("{} of an empty list", m.name());
                self.trap_if(empty, |s| s.trap_msg(e, &msg));
                let i = match m {
                    ListFirst => self.iconst(0),
                    ListLast => self.b.ins().iadd_imm_s(r[1], -1),
                    _ => {
                        let t = self.ty_id(&ety);
                        let want_max = self.iconst((m == ListMax) as i64);
                        self.rt1(F::sspur_list_extreme, &[r[0], r[1], t, want_max])
                    }
                };
                Some(self.elem_at(r[0], i, &ety))
            }
            ListContains => {
                let x = self.spill(&a[0]);
                let t = self.ty_id(&ety);
                one(self.rt1(F::sspur_list_contains, &[r[0], r[1], x, t]))
            }
            ListSum => {
                let acc = self.new_temp();
                let z = self.iconst(0);
                self.b.def_var(acc, z);
                let is_f = ety == Ty::F64;
                self.each(r[0], r[1], &ety, |s, _, v| {
                    let cur = s.b.use_var(acc);
                    let n = if is_f {
                        let (x, y) = (s.as_float(cur), s.as_float(v[0]));
                        let f = s.b.ins().fadd(x, y);
                        s.as_word(f)
                    } else {
                        s.b.ins().iadd(cur, v[0])
                    };
                    s.b.def_var(acc, n);
                });
                one(self.b.use_var(acc))
            }
            ListPush => {
                let one_ = self.iconst(1);
                let esv = self.iconst(es);
                let ptrs = self.iconst(has_pointers(&ety) as i64);
                let site = self.site(e);
                let q = self.rt1(F::sspur_list_grow, &[r[0], r[1], one_, esv, ptrs, site]);
                let at = self.elem_addr(q, r[1], &ety);
                let v = self.fit(a[0].clone(), words(&ety));
                self.store_words(at, 0, &v);
                let n = self.b.ins().iadd_imm_s(r[1], 1);
                Some(vec![q, n])
            }
            ListConcat => {
                let esv = self.iconst(es);
                let ptrs = self.iconst(has_pointers(&ety) as i64);
                let site = self.site(e);
                let q = self.rt1(
                    F::sspur_list_concat,
                    &[r[0], r[1], a[0][0], a[0][1], esv, ptrs, site],
                );
                let n = self.b.ins().iadd(r[1], a[0][1]);
                Some(vec![q, n])
            }
            ListTake | ListDrop => {
                let n = a[0][0];
                let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, n, 0);
                self.trap_if(neg, |s| {
                    let (l, ll) = s.loc(e);
                    s.rt(F::sspur_trap_count, &[n, l, ll]);
                });
                let k = self.b.ins().smin(n, r[1]);
                let (p, len) = if m == ListTake {
                    (r[0], k)
                } else {
                    let off = self.b.ins().imul_imm_s(k, es);
                    let p = self.b.ins().iadd(r[0], off);
                    (p, self.b.ins().isub(r[1], k))
                };
                let empty = self.b.ins().icmp_imm_s(IntCC::Equal, len, 0);
                let z = self.iconst(0);
                let p = self.b.ins().select(empty, z, p);
                Some(vec![p, len])
            }
            ListReverse => {
                let esv = self.iconst(es);
                let ptrs = self.iconst(has_pointers(&ety) as i64);
                let site = self.site(e);
                let q = self.rt1(F::sspur_list_reverse, &[r[0], r[1], esv, ptrs, site]);
                Some(vec![q, r[1]])
            }
            ListSet => {
                // A copy with element `i` replaced; the index is checked
                // first, as `xs[i]` checks it.
                self.bounds_check(e, a[0][0], r[1]);
                let esv = self.iconst(es);
                let ptrs = self.iconst(has_pointers(&ety) as i64);
                let site = self.site(e);
                let q = self.rt1(F::sspur_list_copy, &[r[0], r[1], esv, ptrs, site]);
                let at = self.elem_addr(q, a[0][0], &ety);
                let v = self.fit(a[1].clone(), words(&ety));
                self.store_words(at, 0, &v);
                Some(vec![q, r[1]])
            }
            ListSort => {
                let t = self.ty_id(&ety);
                let site = self.site(e);
                let q = self.rt1(F::sspur_list_sort, &[r[0], r[1], t, site]);
                Some(vec![q, r[1]])
            }
            ListUnique => {
                let t = self.ty_id(&ety);
                let site = self.site(e);
                Some(self.rt(F::sspur_list_unique, &[r[0], r[1], t, site]))
            }
            ListEnumerate => {
                let w = self.iconst(words(&ety) as i64);
                let site = self.site_with_tuples(e);
                let q = self.rt1(F::sspur_list_enumerate, &[r[0], r[1], w, site]);
                Some(vec![q, r[1]])
            }
            ListZip => {
                let bty = elem_of(&aty(self, 0));
                let aw = self.iconst(words(&ety) as i64);
                let bw = self.iconst(words(&bty) as i64);
                let site = self.site_with_tuples(e);
                Some(self.rt(
                    F::sspur_list_zip,
                    &[r[0], r[1], aw, a[0][0], a[0][1], bw, site],
                ))
            }
            ListCounts => {
                let t = self.ty_id(&ety);
                let site = self.site(e);
                one(self.rt1(F::sspur_list_counts, &[r[0], r[1], t, site]))
            }
            ListJoin => {
                let site = self.site(e);
                Some(self.rt(F::sspur_list_join, &[r[0], r[1], a[0][0], a[0][1], site]))
            }
            _ => unreachable!("{m:?} is not a list method without a closure"),
        }
    }

    /// The methods of `List[T]` that call a closure on the elements: `sort_by`,
    /// `map`, `filter`, `flat_map`, `fold`, `any`, `all` and `find`.
    fn list_closure_method(&mut self, call: MethodCall<'_>) -> Option<Vals> {
        use Method::*;
        let MethodCall {
            e,
            m,
            args,
            ty,
            ety,
            es,
            r,
            a,
            ..
        } = call;
        let aty = |s: &Self, i: usize| s.body[args[i]].ty.clone();
        let one = |v: Value| Some(vec![v]);
        match m {
            ListSortBy => {
                let fty = aty(self, 0);
                let kty = Self::fn_ret(&fty);
                let keys = self.list_alloc(e, r[1], &kty);
                let f = a[0][0];
                self.each(r[0], r[1], &ety, |s, i, v| {
                    let k = s.apply(args[0], f, &fty, v);
                    let k = s.fit(k, words(&kty));
                    let at = s.elem_addr(keys, i, &kty);
                    s.store_words(at, 0, &k);
                });
                let esv = self.iconst(es);
                let ptrs = self.iconst(has_pointers(&ety) as i64);
                let kt = self.ty_id(&kty);
                let site = self.site(e);
                let q = self.rt1(
                    F::sspur_list_sort_by,
                    &[r[0], r[1], esv, ptrs, keys, kt, site],
                );
                Some(vec![q, r[1]])
            }
            ListMap => {
                let fty = aty(self, 0);
                let oty = elem_of(ty);
                let out = self.list_alloc(e, r[1], &oty);
                let f = a[0][0];
                self.each(r[0], r[1], &ety, |s, i, v| {
                    let x = s.apply(args[0], f, &fty, v);
                    let x = s.fit(x, words(&oty));
                    let at = s.elem_addr(out, i, &oty);
                    s.store_words(at, 0, &x);
                });
                Some(vec![out, r[1]])
            }
            ListFilter => {
                let fty = aty(self, 0);
                let out = self.list_alloc(e, r[1], &ety);
                let n = self.new_temp();
                let z = self.iconst(0);
                self.b.def_var(n, z);
                let f = a[0][0];
                self.each(r[0], r[1], &ety, |s, _, v| {
                    let keep = s.apply(args[0], f, &fty, v.clone())[0];
                    let yes = s.b.create_block();
                    let cont = s.b.create_block();
                    s.b.ins().brif(keep, yes, &[], cont, &[]);
                    s.b.switch_to_block(yes);
                    let k = s.b.use_var(n);
                    let at = s.elem_addr(out, k, &ety);
                    s.store_words(at, 0, &v);
                    let k1 = s.b.ins().iadd_imm_s(k, 1);
                    s.b.def_var(n, k1);
                    s.b.ins().jump(cont, &[]);
                    s.b.switch_to_block(cont);
                });
                let k = self.b.use_var(n);
                let q = self.rt1(F::sspur_list_finish, &[out, k]);
                Some(vec![q, k])
            }
            ListFlatMap => {
                let fty = aty(self, 0);
                let oty = elem_of(ty);
                let acc_p = self.new_temp();
                let acc_n = self.new_temp();
                let z = self.iconst(0);
                self.b.def_var(acc_p, z);
                self.b.def_var(acc_n, z);
                let f = a[0][0];
                let esv = self.iconst(elem_size(&oty));
                let ptrs = self.iconst(has_pointers(&oty) as i64);
                let site = self.site(e);
                self.each(r[0], r[1], &ety, |s, _, v| {
                    let x = s.apply(args[0], f, &fty, v);
                    let (p, n) = (s.b.use_var(acc_p), s.b.use_var(acc_n));
                    let q = s.rt1(
                        F::sspur_list_append_tmp,
                        &[p, n, x[0], x[1], esv, ptrs, site],
                    );
                    let n2 = s.b.ins().iadd(n, x[1]);
                    s.b.def_var(acc_p, q);
                    s.b.def_var(acc_n, n2);
                });
                let (p, n) = (self.b.use_var(acc_p), self.b.use_var(acc_n));
                let q = self.rt1(F::sspur_list_finish, &[p, n]);
                Some(vec![q, n])
            }
            ListFold => {
                let fty = aty(self, 1);
                let w = words(ty);
                let accs: Vec<Variable> = (0..w).map(|_| self.new_temp()).collect();
                let init = self.fit(a[0].clone(), w);
                for (v, x) in accs.iter().zip(&init) {
                    self.b.def_var(*v, *x);
                }
                let (f, lam) = (a[1][0], args[1]);
                self.each(r[0], r[1], &ety, |s, _, v| {
                    let mut args: Vals = accs.iter().map(|x| s.b.use_var(*x)).collect();
                    args.extend(v);
                    let n = s.apply(lam, f, &fty, args);
                    let n = s.fit(n, w);
                    for (var, x) in accs.iter().zip(n) {
                        s.b.def_var(*var, x);
                    }
                });
                Some(accs.iter().map(|x| self.b.use_var(*x)).collect())
            }
            ListAny | ListAll | ListFind => {
                let fty = aty(self, 0);
                let f = a[0][0];
                // `found` gets the element that decided (find's result).
                let w = if m == ListFind { words(&ety) } else { 0 };
                let found = self.b.create_block();
                for _ in 0..w {
                    self.b.append_block_param(found, I64);
                }
                let done = self.b.create_block();
                self.b.append_block_param(done, I64);
                self.each(r[0], r[1], &ety, |s, _, v| {
                    let hit = if m == ListFind {
                        s.fit(v.clone(), w)
                    } else {
                        Vec::new()
                    };
                    let c = s.apply(args[0], f, &fty, v)[0];
                    let cont = s.b.create_block();
                    if m == ListAll {
                        s.b.ins().brif(c, cont, &[], found, &[]);
                    } else {
                        s.b.ins().brif(c, found, &ba(&hit), cont, &[]);
                    }
                    s.b.switch_to_block(cont);
                });
                // Fell off the end: any false, all true, find None.
                let end = match m {
                    ListAny => self.iconst(0),
                    ListAll => self.iconst(1),
                    _ => self.none(),
                };
                self.b.ins().jump(done, &ba(&[end]));
                self.b.switch_to_block(found);
                let hit = match m {
                    ListAny => self.iconst(1),
                    ListAll => self.iconst(0),
                    _ => {
                        let v = self.b.block_params(found).to_vec();
                        self.some(e, &v)
                    }
                };
                self.b.ins().jump(done, &ba(&[hit]));
                self.b.switch_to_block(done);
                one(self.b.block_params(done)[0])
            }
            _ => unreachable!("{m:?} is not a list method with a closure"),
        }
    }

    /// The methods of `Str`.
    fn str_method(&mut self, call: MethodCall<'_>) -> Option<Vals> {
        use Method::*;
        let MethodCall { e, m, r, a, .. } = call;
        let one = |v: Value| Some(vec![v]);
        match m {
            StrByte => {
                self.bounds_check(e, a[0][0], r[1]);
                let addr = self.b.ins().iadd(r[0], a[0][0]);
                let v = self.b.ins().uload8(I64, flags(), addr, 0);
                one(v)
            }
            StrChars | StrWords | StrLines => {
                let site = self.site(e);
                let f = match m {
                    StrChars => F::sspur_str_chars,
                    StrWords => F::sspur_str_words,
                    _ => F::sspur_str_lines,
                };
                Some(self.rt(f, &[r[0], r[1], site]))
            }
            StrSplit => {
                let site = self.site(e);
                Some(self.rt(F::sspur_str_split, &[r[0], r[1], a[0][0], a[0][1], site]))
            }
            StrTrim => Some(self.rt(F::sspur_str_trim, &[r[0], r[1]])),
            StrLower | StrUpper => {
                let up = self.iconst((m == StrUpper) as i64);
                let site = self.site(e);
                Some(self.rt(F::sspur_str_case, &[r[0], r[1], up, site]))
            }
            StrReplace => {
                let site = self.site(e);
                Some(self.rt(
                    F::sspur_str_replace,
                    &[r[0], r[1], a[0][0], a[0][1], a[1][0], a[1][1], site],
                ))
            }
            StrRepeat => {
                let site = self.site(e);
                let (l, ll) = self.loc(e);
                Some(self.rt(F::sspur_str_repeat, &[r[0], r[1], a[0][0], site, l, ll]))
            }
            StrContains | StrStartsWith | StrEndsWith => {
                let which = self.iconst(match m {
                    StrContains => 0,
                    StrStartsWith => 1,
                    _ => 2,
                });
                one(self.rt1(F::sspur_str_test, &[r[0], r[1], a[0][0], a[0][1], which]))
            }
            StrFind => {
                let i = self.rt1(F::sspur_str_find, &[r[0], r[1], a[0][0], a[0][1]]);
                let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, i, 0);
                let yes = self.b.create_block();
                let merge = self.b.create_block();
                self.b.append_block_param(merge, I64);
                let none = self.none();
                self.b.ins().brif(neg, merge, &ba(&[none]), yes, &[]);
                self.b.switch_to_block(yes);
                let s = self.some(e, &[i]);
                self.b.ins().jump(merge, &ba(&[s]));
                self.b.switch_to_block(merge);
                one(self.b.block_params(merge)[0])
            }
            StrTake | StrDrop => {
                let which = self.iconst((m == StrDrop) as i64);
                let (l, ll) = self.loc(e);
                Some(self.rt(F::sspur_str_take_drop, &[r[0], r[1], a[0][0], which, l, ll]))
            }
            StrSlice => {
                let (l, ll) = self.loc(e);
                Some(self.rt(F::sspur_str_slice, &[r[0], r[1], a[0][0], a[1][0], l, ll]))
            }
            StrToInt => {
                let (l, ll) = self.loc(e);
                one(self.rt1(F::sspur_str_to_int, &[r[0], r[1], l, ll]))
            }
            StrToF64 => {
                let (l, ll) = self.loc(e);
                one(self.rt1(F::sspur_str_to_f64, &[r[0], r[1], l, ll]))
            }
            StrParseInt | StrParseF64 => {
                let which = self.iconst((m == StrParseF64) as i64);
                let ok = self.rt(F::sspur_str_parse, &[r[0], r[1], which]);
                one(self.option_if(e, ok[0], &[ok[1]]))
            }
            _ => unreachable!("{m:?} is not a Str method"),
        }
    }

    /// The methods of `Option[T]`: the receiver points at `[tag,
    /// payload..]`, tag 0 for `None` (a static word) and 1 for `Some`.
    fn option_method(&mut self, call: MethodCall<'_>) -> Option<Vals> {
        use Method::*;
        let MethodCall {
            e,
            m,
            args,
            ty,
            rty,
            r,
            a,
            ..
        } = call;
        let ety = match rty {
            Ty::Option(t) => (*t).clone(),
            _ => Ty::Error,
        };
        let one = |v: Value| Some(vec![v]);
        let tag = self.b.ins().load(I64, flags(), r[0], 0);
        match m {
            OptIsSome | OptIsNone => {
                let cc = if m == OptIsSome {
                    IntCC::NotEqual
                } else {
                    IntCC::Equal
                };
                let c = self.b.ins().icmp_imm_s(cc, tag, 0);
                one(self.bool_val(c))
            }
            OptUnwrap => {
                let none = self.b.ins().icmp_imm_s(IntCC::Equal, tag, 0);
                self.trap_if(none, |s| s.trap_msg(e, "unwrap of None"));
                Some(self.load_words(r[0], 1, words(&ety)))
            }
            OptUnwrapOr | OptMap | OptAndThen => {
                // Both paths meet with the result's words.
                let w = words(ty);
                let yes = self.b.create_block();
                let merge = self.b.create_block();
                for _ in 0..w {
                    self.b.append_block_param(merge, I64);
                }
                let otherwise = match m {
                    OptUnwrapOr => self.fit(a[0].clone(), w),
                    _ => vec![self.none()],
                };
                self.b.ins().brif(tag, yes, &[], merge, &ba(&otherwise));
                self.b.switch_to_block(yes);
                let x = self.load_words(r[0], 1, words(&ety));
                let v = match m {
                    OptUnwrapOr => x,
                    _ => {
                        let fty = self.body[args[0]].ty.clone();
                        let out = self.apply(args[0], a[0][0], &fty, x);
                        let out = self.fit(out, words(&Self::fn_ret(&fty)));
                        if m == OptMap {
                            vec![self.some(e, &out)]
                        } else {
                            out
                        }
                    }
                };
                let v = self.fit(v, w);
                self.b.ins().jump(merge, &ba(&v));
                self.b.switch_to_block(merge);
                Some(self.b.block_params(merge).to_vec())
            }
            _ => unreachable!("{m:?} is not an Option method"),
        }
    }

    /// The methods of `Map[K, V]`.
    fn map_method(&mut self, call: MethodCall<'_>) -> Option<Vals> {
        use Method::*;
        let MethodCall {
            e,
            m,
            args,
            ty,
            rty,
            r,
            a,
            ..
        } = call;
        let one = |v: Value| Some(vec![v]);
        match m {
            MapPut => {
                let k = self.fit(a[0].clone(), 2);
                let v = self.fit(a[1].clone(), 2);
                let site = self.site(e);
                self.rt(F::sspur_map_put, &[r[0], k[0], k[1], v[0], v[1], site]);
                one(r[0])
            }
            MapUpdate => {
                let (kty, vty) = match &rty {
                    Ty::Map(k, v) => ((**k).clone(), (**v).clone()),
                    _ => (Ty::Error, Ty::Error),
                };
                // Find (or trap), call `f`, then put: `f` may change the
                // map, so no address into it is kept across the call.
                let p = self.map_find_or_trap(e, r[0], &a[0], &kty);
                let old = self.load_words(p, 0, words(&vty));
                let fty = self.body[args[1]].ty.clone();
                let new = self.apply(args[1], a[1][0], &fty, old);
                let k = self.fit(a[0].clone(), 2);
                let v = self.fit(new, 2);
                let site = self.site(e);
                self.rt(F::sspur_map_put, &[r[0], k[0], k[1], v[0], v[1], site]);
                one(r[0])
            }
            MapGet | MapRemove => {
                let p = if m == MapGet {
                    self.map_lookup(e, r[0], &a[0])
                } else {
                    let k = self.fit(a[0].clone(), 2);
                    self.rt1(F::sspur_map_remove, &[r[0], k[0], k[1]])
                };
                let vty = match &rty {
                    Ty::Map(_, v) => (**v).clone(),
                    _ => Ty::Error,
                };
                one(self.option_from_ptr(e, p, &vty))
            }
            MapGetOr => {
                let p = self.map_lookup(e, r[0], &a[0]);
                let w = words(ty);
                let found = self.b.create_block();
                let merge = self.b.create_block();
                for _ in 0..w {
                    self.b.append_block_param(merge, I64);
                }
                let d = self.fit(a[1].clone(), w);
                self.b.ins().brif(p, found, &[], merge, &ba(&d));
                self.b.switch_to_block(found);
                let v = self.load_words(p, 0, w);
                self.b.ins().jump(merge, &ba(&v));
                self.b.switch_to_block(merge);
                Some(self.b.block_params(merge).to_vec())
            }
            MapHas => {
                let p = self.map_lookup(e, r[0], &a[0]);
                let c = self.b.ins().icmp_imm_s(IntCC::NotEqual, p, 0);
                one(self.bool_val(c))
            }
            MapLen => one(self.rt1(F::sspur_map_len, &[r[0]])),
            MapKeys | MapValues => {
                let part_ty = match (&rty, m) {
                    (Ty::Map(k, _), MapKeys) => (**k).clone(),
                    (Ty::Map(_, v), _) => (**v).clone(),
                    _ => Ty::Error,
                };
                let part = self.iconst((m == MapValues) as i64);
                let w = self.iconst(words(&part_ty).max(1) as i64);
                let ptrs = self.iconst(has_pointers(&part_ty) as i64);
                let site = self.site(e);
                Some(self.rt(F::sspur_map_part, &[r[0], part, w, ptrs, site]))
            }
            MapEntries => {
                let (kw, vw) = match &rty {
                    Ty::Map(k, v) => (words(k), words(v)),
                    _ => (1, 1),
                };
                let kw = self.iconst(kw as i64);
                let vw = self.iconst(vw as i64);
                let site = self.site_with_tuples(e);
                Some(self.rt(F::sspur_map_entries, &[r[0], kw, vw, site]))
            }
            _ => unreachable!("{m:?} is not a Map method"),
        }
    }

    /// The methods of `Int` and `F64`.
    fn num_method(&mut self, call: MethodCall<'_>) -> Option<Vals> {
        use Method::*;
        let MethodCall { e, m, r, .. } = call;
        let one = |v: Value| Some(vec![v]);
        match m {
            IntToF64 => {
                let f = self.b.ins().fcvt_from_sint(F64, r[0]);
                one(self.as_word(f))
            }
            IntAbs => one(self.b.ins().iabs(r[0])),
            F64ToInt => {
                let (l, ll) = self.loc(e);
                one(self.rt1(F::sspur_f64_to_int, &[r[0], l, ll]))
            }
            F64Abs | F64Sqrt | F64Floor => {
                let x = self.as_float(r[0]);
                let y = match m {
                    F64Abs => self.b.ins().fabs(x),
                    F64Sqrt => self.b.ins().sqrt(x),
                    _ => self.b.ins().floor(x),
                };
                one(self.as_word(y))
            }
            _ => unreachable!("{m:?} is not an Int or F64 method"),
        }
    }
}
