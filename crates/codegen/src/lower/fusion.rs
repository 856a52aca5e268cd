//! Fused chains (`ir::fusion`): a source read in place (a range: lo,
//! lo + 1, ...; the pieces of a string, each cut by `sspur_piece_next` as
//! the loop asks for it; or a list's elements), then the stages (map,
//! filter, enumerate, zip, take, drop) applied to one element at a time,
//! then the consumer, all in one loop with no list between them. The
//! consumer's own code runs unchanged: its `each` runs the stream.
//! Which chains are fused is the plan's verdict (the ownership pass plans
//! no free for the lists never built from the same plan).

use super::{Lowerer, Next, Vals};
use crate::layout::{elem_of, offsets, words};
use crate::rtfns::F;
use ::ir::fusion::{Chain, SourceKind};
use ::ir::{ExprId, ExprKind, Method, Ty};
use cranelift_codegen::ir::{condcodes::FloatCC, condcodes::IntCC, types::I64, InstBuilder, Value};
use cranelift_frontend::Variable;

/// A fused chain's source and stages, evaluated: what `each` runs over.
pub(super) struct Stream {
    src: Src,
    stages: Vec<Stage>,
}

/// Where the elements come from.
enum Src {
    /// A range: its first value and its length.
    Range(Value, Value),
    /// The pieces of a string.
    Pieces(Pieces),
    /// A list's elements.
    List(Value, Value, Ty),
}

/// A stage, its arguments evaluated; `e` is its expression (closure calls
/// are marked with it, for trap call chains).
enum Stage {
    Map {
        e: ExprId,
        lam: ExprId,
        f: Value,
        fty: Ty,
        out: Ty,
    },
    Filter {
        e: ExprId,
        lam: ExprId,
        f: Value,
        fty: Ty,
    },
    /// Pairs the element with a count of the elements so far. `site`:
    /// None when the tuple is never built (`Plan::unbuilt_tuples`): the
    /// two components go on as the element.
    Enumerate {
        n: Variable,
        site: Option<Value>,
        tys: [Ty; 2],
    },
    /// Pairs the element with the other side's element at the same place
    /// (`lo + k` of a range, or a list's); stops at the other's length.
    Zip {
        n: Variable,
        lo: Value,
        list: Option<Ty>,
        len: Value,
        site: Option<Value>,
        tys: [Ty; 2],
    },
    Take {
        n: Variable,
        limit: Value,
    },
    Drop {
        n: Variable,
        count: Value,
    },
}

impl Stream {
    /// A list's elements, as `each` runs over them.
    pub(super) fn list(p: Value, len: Value, ety: Ty) -> Stream {
        Stream {
            src: Src::List(p, len, ety),
            stages: Vec::new(),
        }
    }

    /// The first value and length of a range read with no stage between.
    pub(super) fn direct_range(&self) -> Option<(Value, Value)> {
        match (&self.src, self.stages.is_empty()) {
            (Src::Range(lo, n), true) => Some((*lo, *n)),
            _ => None,
        }
    }

    /// The pieces of a piece source read with no stage between.
    pub(super) fn direct_pieces(&self) -> Option<&Pieces> {
        match (&self.src, self.stages.is_empty()) {
            (Src::Pieces(p), true) => Some(p),
            _ => None,
        }
    }
}

/// A string and how to cut it: `kind` is one of rt's `pieces::CHARS`,
/// `WORDS`, `LINES`, `SPLIT`; `sep` is the separator of a split.
#[derive(Clone)]
pub(super) struct Pieces {
    kind: Value,
    s: Vals,
    sep: Vals,
}

impl Lowerer<'_, '_, '_> {
    /// Evaluates a piece source's string and separator (None: unreachable).
    pub(super) fn pieces(
        &mut self,
        (m, s, sep): (Method, ExprId, Option<ExprId>),
    ) -> Option<Pieces> {
        use rt::helpers::pieces::{CHARS, LINES, SPLIT, WORDS};
        let s = self.expr(s)?;
        let sep = match sep {
            Some(x) => self.expr(x)?,
            None => vec![self.iconst(0), self.iconst(0)],
        };
        let kind = match m {
            Method::StrChars => CHARS,
            Method::StrWords => WORDS,
            Method::StrLines => LINES,
            _ => SPLIT,
        };
        Some(Pieces {
            kind: self.iconst(kind as i64),
            s,
            sep,
        })
    }

    fn piece_args(&self, p: &Pieces) -> Vec<Value> {
        vec![p.kind, p.s[0], p.s[1], p.sep[0], p.sep[1]]
    }

    /// `len`, `is_empty` and `counts` of a piece source: one runtime call
    /// that cuts and counts without a list.
    pub(super) fn pieces_direct(&mut self, e: ExprId, m: Method, p: &Pieces) -> Vals {
        let args = self.piece_args(p);
        match m {
            Method::ListCounts => {
                let site = self.site(e);
                let mut args = args;
                args.push(site);
                vec![self.rt1(F::sspur_piece_counts, &args)]
            }
            _ => {
                let n = self.rt1(F::sspur_piece_count, &args);
                if m == Method::ListIsEmpty {
                    let c = self.b.ins().icmp_imm_s(IntCC::Equal, n, 0);
                    vec![self.bool_val(c)]
                } else {
                    vec![n]
                }
            }
        }
    }

    /// Evaluates a fused chain's source and its stages' arguments, in the
    /// unfused order (None: unreachable). A negative `take`/`drop` count
    /// traps here, at its stage.
    pub(super) fn stream(&mut self, c: &Chain) -> Option<Stream> {
        let src = match (c.kind, &self.body[c.source].kind) {
            (SourceKind::Range, ExprKind::Range { lo, hi }) => {
                let (lo, hi) = (*lo, *hi);
                let lo = self.expr(lo)?[0];
                Src::Range(lo, self.range_len(c.source, lo, hi)?)
            }
            (SourceKind::Pieces(m), ExprKind::Method { receiver, args, .. }) => {
                let src = (m, *receiver, args.first().copied());
                Src::Pieces(self.pieces(src)?)
            }
            _ => {
                let v = self.expr(c.source)?;
                Src::List(v[0], v[1], elem_of(&self.body[c.source].ty))
            }
        };
        let mut stages = Vec::new();
        let mut ety = match &src {
            Src::Range(..) => Ty::Int,
            Src::Pieces(_) => Ty::Str,
            Src::List(_, _, t) => t.clone(),
        };
        for &e in &c.stages {
            let ExprKind::Method { method, args, .. } = &self.body[e].kind else {
                continue;
            };
            let (m, args) = (*method, args.clone());
            let out = elem_of(&self.body[e].ty);
            let counter = |s: &mut Self| {
                let n = s.new_temp();
                let z = s.iconst(0);
                s.b.def_var(n, z);
                n
            };
            let stage = match m {
                Method::ListMap | Method::ListFilter => {
                    let (lam, f) = (args[0], self.method_arg(args[0])?[0]);
                    let fty = self.body[lam].ty.clone();
                    if m == Method::ListMap {
                        Stage::Map {
                            e,
                            lam,
                            f,
                            fty,
                            out: out.clone(),
                        }
                    } else {
                        Stage::Filter { e, lam, f, fty }
                    }
                }
                Method::ListEnumerate => Stage::Enumerate {
                    n: counter(self),
                    site: self.pair_site(e),
                    tys: [Ty::Int, ety.clone()],
                },
                Method::ListZip => {
                    let other = args[0];
                    let (lo, len, list) = match &self.body[other].kind {
                        ExprKind::Range { lo, hi } => {
                            let (lo, hi) = (*lo, *hi);
                            let l = self.expr(lo)?[0];
                            (l, self.range_len(other, l, hi)?, None)
                        }
                        _ => {
                            let v = self.expr(other)?;
                            (v[0], v[1], Some(elem_of(&self.body[other].ty)))
                        }
                    };
                    let bty = list.clone().unwrap_or(Ty::Int);
                    Stage::Zip {
                        n: counter(self),
                        lo,
                        list,
                        len,
                        site: self.pair_site(e),
                        tys: [ety.clone(), bty],
                    }
                }
                _ => {
                    let k = self.expr(args[0])?[0];
                    let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, k, 0);
                    self.trap_if(neg, |s| {
                        let (l, ll) = s.loc(e);
                        s.rt(F::sspur_trap_count, &[k, l, ll]);
                    });
                    if m == Method::ListTake {
                        Stage::Take {
                            n: counter(self),
                            limit: k,
                        }
                    } else {
                        Stage::Drop {
                            n: counter(self),
                            count: k,
                        }
                    }
                }
            };
            stages.push(stage);
            ety = out;
        }
        Some(Stream { src, stages })
    }

    /// The length of range `lo..hi` (`e`), `lo` evaluated already: traps
    /// `out of memory` where building it would not fit, as building does.
    pub(super) fn range_len(&mut self, e: ExprId, lo: Value, hi: ExprId) -> Option<Value> {
        let hi = self.expr(hi)?[0];
        let site = self.site(e);
        Some(self.rt1(F::sspur_range_len, &[lo, hi, site]))
    }

    /// Runs `body(self, i, elem, next)` for each element of `st` that
    /// passes its stages: one loop, elements taken one at a time; the same
    /// contract as `counted_loop`'s body.
    pub(super) fn run_stream(
        &mut self,
        st: Stream,
        body: impl FnOnce(&mut Self, Value, Vals, Next) -> bool,
    ) {
        let Stream { src, stages } = st;
        let zero = self.iconst(0);
        let cursor = match &src {
            Src::Pieces(p) => {
                let c = self.spill(&[zero]);
                let mut args = self.piece_args(p);
                args.push(c);
                Some(args)
            }
            _ => None,
        };
        self.counted_loop(
            zero,
            |s, iv, exit| {
                // A take or zip that has all it needs stops the loop
                // before the next element is taken.
                for st in &stages {
                    if let Stage::Take { n, limit: len } | Stage::Zip { n, len, .. } = st {
                        let k = s.b.use_var(*n);
                        s.leave_unless(IntCC::SignedLessThan, k, *len, exit);
                    }
                }
                match &src {
                    Src::Range(lo, n) => {
                        s.leave_unless(IntCC::SignedLessThan, iv, *n, exit);
                        vec![s.b.ins().iadd(*lo, iv)]
                    }
                    Src::List(p, len, ety) => {
                        s.leave_unless(IntCC::SignedLessThan, iv, *len, exit);
                        s.elem_at(*p, iv, ety)
                    }
                    Src::Pieces(_) => {
                        let args = cursor.as_deref().unwrap_or_default();
                        let piece = s.rt(F::sspur_piece_next, args);
                        // No piece left: the helper answers a pointer no
                        // string has.
                        let none = s.iconst(-1);
                        s.leave_unless(IntCC::NotEqual, piece[0], none, exit);
                        piece
                    }
                }
            },
            |s, iv, mut v, next| {
                for st in &stages {
                    v = s.stage(st, v, next);
                }
                body(s, iv, v, next)
            },
        );
    }

    /// One element through one stage (a filter or drop that rejects it
    /// goes on with the next element).
    fn stage(&mut self, st: &Stage, v: Vals, next: Next) -> Vals {
        let bump = |s: &mut Self, n: Variable| {
            let k = s.b.use_var(n);
            let k1 = s.b.ins().iadd_imm_s(k, 1);
            s.b.def_var(n, k1);
            k
        };
        match st {
            Stage::Map {
                e,
                lam,
                f,
                fty,
                out,
            } => {
                let x = self.stage_call(*e, *lam, *f, fty, v);
                self.fit(x, words(out))
            }
            Stage::Filter { e, lam, f, fty } => {
                let keep = self.stage_call(*e, *lam, *f, fty, v.clone())[0];
                let go_on = self.b.create_block();
                self.b.ins().brif(keep, go_on, &[], next.latch, &[]);
                self.b.switch_to_block(go_on);
                v
            }
            Stage::Enumerate { n, site, tys } => {
                let k = bump(self, *n);
                let site = *site;
                self.tuple_of(tys, &[vec![k], v], site)
            }
            Stage::Zip {
                n,
                lo,
                list,
                site,
                tys,
                ..
            } => {
                let k = bump(self, *n);
                let b = match list {
                    Some(bty) => self.elem_at(*lo, k, bty),
                    None => vec![self.b.ins().iadd(*lo, k)],
                };
                let site = *site;
                self.tuple_of(tys, &[v, b], site)
            }
            Stage::Take { n, .. } => {
                bump(self, *n);
                v
            }
            Stage::Drop { n, count } => {
                let k = self.b.use_var(*n);
                let skip = self.b.ins().icmp(IntCC::SignedLessThan, k, *count);
                let skip_b = self.b.create_block();
                let go_on = self.b.create_block();
                self.b.ins().brif(skip, skip_b, &[], go_on, &[]);
                self.b.switch_to_block(skip_b);
                let k1 = self.b.ins().iadd_imm_s(k, 1);
                self.b.def_var(*n, k1);
                self.b.ins().jump(next.latch, &[]);
                self.b.switch_to_block(go_on);
                v
            }
        }
    }

    /// A stage's call of its function: marked as a call at the stage
    /// (`e`) for trap call chains, unless the lambda is lowered in place.
    fn stage_call(&mut self, e: ExprId, lam: ExprId, f: Value, fty: &Ty, v: Vals) -> Vals {
        if self.inlined.contains_key(&lam) {
            return self.apply(lam, f, fty, v);
        }
        self.at_call(e, None, |s| s.apply(lam, f, fty, v))
    }

    /// `map` or `filter` (`m`, expression `e`) ending a fused chain whose
    /// length is not known before the loop (stages, pieces, a list): a
    /// buffer of the source's length, which bounds the chain's (no stage
    /// adds elements), filled as the stream runs and sealed at the count
    /// kept (freed when nothing was). `f` is the consumer's lambda, its
    /// value and type; `oty` the result's element type.
    pub(super) fn stream_collect(
        &mut self,
        e: ExprId,
        m: Method,
        (lam, f, fty): (ExprId, Value, &Ty),
        oty: &Ty,
    ) -> Vals {
        let st = self.fused.take().expect("a fused stream");
        let bound = match &st.src {
            Src::Range(_, n) => *n,
            Src::List(_, len, _) => *len,
            Src::Pieces(p) => {
                let args = self.piece_args(p);
                self.rt1(F::sspur_piece_count, &args)
            }
        };
        let out = self.list_alloc(e, bound, oty);
        let n = self.new_temp();
        let z = self.iconst(0);
        self.b.def_var(n, z);
        let w = words(oty);
        self.run_stream(st, |s, _, v, next| {
            let x = if m == Method::ListMap {
                let x = s.apply(lam, f, fty, v);
                s.fit(x, w)
            } else {
                let keep = s.apply(lam, f, fty, v.clone())[0];
                let go_on = s.b.create_block();
                s.b.ins().brif(keep, go_on, &[], next.latch, &[]);
                s.b.switch_to_block(go_on);
                s.fit(v, w)
            };
            let k = s.b.use_var(n);
            let at = s.elem_addr(out, k, oty);
            s.store_words(at, 0, &x);
            let k1 = s.b.ins().iadd_imm_s(k, 1);
            s.b.def_var(n, k1);
            true
        });
        let k = self.b.use_var(n);
        let q = self.rt1(F::sspur_list_finish, &[out, k]);
        vec![q, k]
    }

    /// The site of the tuples `enumerate`/`zip` stage `e` makes (None:
    /// never built, see `Plan::unbuilt_tuples`).
    fn pair_site(&mut self, e: ExprId) -> Option<Value> {
        if self.plan.unbuilt_tuples(e).is_some() {
            return None;
        }
        Some(self.tuple_site(e))
    }

    /// A new tuple of two values (at `site`), as `enumerate` and `zip`
    /// make them; with no site, the two values' words one after the other
    /// (a tuple never built, bound by `apply` to its reader's parameter).
    fn tuple_of(&mut self, tys: &[Ty; 2], vals: &[Vals; 2], site: Option<Value>) -> Vals {
        let Some(site) = site else {
            let mut out = self.fit(vals[0].clone(), words(&tys[0]));
            out.extend(self.fit(vals[1].clone(), words(&tys[1])));
            return out;
        };
        let (offs, total) = offsets(tys.iter());
        let p = self.alloc(total, site);
        for (i, v) in vals.iter().enumerate() {
            let v = self.fit(v.clone(), words(&tys[i]));
            self.store_words(p, offs[i], &v);
        }
        vec![p]
    }

    /// The consumers that read no element list of their own, over a fused
    /// stream (`len`, `is_empty`, `min`, `max`, `contains`, `counts`,
    /// `join`): each element as the stream gives it.
    pub(super) fn stream_consume(&mut self, e: ExprId, m: Method, ety: &Ty, a: &[Vals]) -> Vals {
        let st = self.fused.take().expect("a fused stream");
        match m {
            Method::ListLen | Method::ListIsEmpty => {
                let n = self.new_temp();
                let z = self.iconst(0);
                self.b.def_var(n, z);
                self.run_stream(st, |s, _, _, _| {
                    let k = s.b.use_var(n);
                    let k1 = s.b.ins().iadd_imm_s(k, 1);
                    s.b.def_var(n, k1);
                    true
                });
                let n = self.b.use_var(n);
                if m == Method::ListLen {
                    vec![n]
                } else {
                    let c = self.b.ins().icmp_imm_s(IntCC::Equal, n, 0);
                    vec![self.bool_val(c)]
                }
            }
            Method::ListMin | Method::ListMax => {
                // The first element, then each one strictly better (the
                // first of equal ones stays; a NaN never wins).
                let best = self.new_temp();
                let seen = self.new_temp();
                let z = self.iconst(0);
                self.b.def_var(best, z);
                self.b.def_var(seen, z);
                let is_f = *ety == Ty::F64;
                let want_max = m == Method::ListMax;
                self.run_stream(st, |s, _, v, _| {
                    let x = v[0];
                    let b = s.b.use_var(best);
                    let better = if is_f {
                        let (xf, bf) = (s.as_float(x), s.as_float(b));
                        let cc = if want_max {
                            FloatCC::GreaterThan
                        } else {
                            FloatCC::LessThan
                        };
                        s.b.ins().fcmp(cc, xf, bf)
                    } else {
                        let cc = if want_max {
                            IntCC::SignedGreaterThan
                        } else {
                            IntCC::SignedLessThan
                        };
                        s.b.ins().icmp(cc, x, b)
                    };
                    let first = s.b.use_var(seen);
                    let first = s.b.ins().icmp_imm_s(IntCC::Equal, first, 0);
                    let take = s.b.ins().bor(better, first);
                    let nb = s.b.ins().select(take, x, b);
                    s.b.def_var(best, nb);
                    let one = s.iconst(1);
                    s.b.def_var(seen, one);
                    true
                });
                let seen = self.b.use_var(seen);
                let empty = self.b.ins().icmp_imm_s(IntCC::Equal, seen, 0);
                let msg = format!("{} of an empty list", m.name());
                self.trap_if(empty, |s| s.trap_msg(e, &msg));
                vec![self.b.use_var(best)]
            }
            Method::ListContains => {
                let x = self.spill(&a[0]);
                let t = self.ty_id(ety);
                let w = words(ety);
                let done = self.b.create_block();
                self.b.append_block_param(done, I64);
                self.run_stream(st, |s, _, v, next| {
                    // The runtime's comparison, on a one-element list.
                    let v = s.fit(v, w);
                    let one = s.spill(&v);
                    let n1 = s.iconst(1);
                    let hit = s.rt1(F::sspur_list_contains, &[one, n1, x, t]);
                    let yes = s.iconst(1);
                    let go_on = s.b.create_block();
                    s.b.ins().brif(hit, done, &super::ba(&[yes]), go_on, &[]);
                    s.b.switch_to_block(go_on);
                    let _ = next;
                    true
                });
                let no = self.iconst(0);
                self.b.ins().jump(done, &super::ba(&[no]));
                self.b.switch_to_block(done);
                vec![self.b.block_params(done)[0]]
            }
            Method::ListCounts => {
                use rt::helpers::map::{KEY_STR, KEY_WORD};
                let kind = self.iconst(if *ety == Ty::Str { KEY_STR } else { KEY_WORD } as i64);
                let site = self.site(e);
                let map = self.rt1(F::sspur_map_new, &[kind, site]);
                self.run_stream(st, |s, _, v, _| {
                    let k = s.fit(v, 2);
                    s.rt(F::sspur_counts_add, &[map, k[0], k[1], site]);
                    true
                });
                vec![map]
            }
            Method::ListJoin => {
                // The builder's growth traps at the join, as its string does.
                let site = self.site(e);
                let sb = self.rt1(F::sspur_sb_new_sep, &[a[0][0], a[0][1], site]);
                self.run_stream(st, |s, _, v, _| {
                    s.rt(F::sspur_sb_piece, &[sb, v[0], v[1], site]);
                    true
                });
                self.rt(F::sspur_sb_finish, &[sb, site])
            }
            _ => unreachable!("{m:?} runs over a stream through each"),
        }
    }
}
