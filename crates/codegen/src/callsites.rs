//! Call positions for trap call chains (`rt::backtrace`).
//!
//! Lowering gives each Sspur call instruction (a call of a function, of a
//! closure, and the closure calls of a method such as `map`) a Cranelift
//! source location: an index into [`Calls::list`], which holds the call's
//! position and, for a direct call, the function it calls. After each
//! function is compiled, [`call_returns`] reads its call instructions'
//! return addresses (`call_sites`) and the source location of each
//! (`get_srclocs_sorted`); [`Calls::image`] turns them into the runtime's
//! description of the code (functions by index, returns as offsets, which
//! the runtime turns into addresses once the code is loaded), with each
//! function's name (`f`, or `lambda at PATH:LINE:COL` for a lambda, as the
//! interpreter names it).

use crate::lower::Lowerer;
use cranelift_codegen::ir::SourceLoc;
use cranelift_codegen::CompiledCode;
use cranelift_module::FuncId;
use ir::{ExprId, FnId, Program};
use std::collections::HashMap;

/// What a compiled function is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    Fn(FnId),
    /// A lambda: the function it is written in and its expression.
    Lambda(FnId, ExprId),
    /// The wrapper `(env, args..)` of a function used as a value: no Sspur
    /// frame of its own.
    Wrapper,
    /// The trampoline that calls `main`.
    Entry,
}

/// Sspur calls and compiled functions of one compilation.
#[derive(Default)]
pub struct Calls {
    /// Whether lowering marks calls (off for `emit clif`, whose text would
    /// show the marks).
    pub on: bool,
    /// Each marked call: its byte offset in the source and the function a
    /// direct call calls.
    pub list: Vec<(u32, Option<FuncId>)>,
    /// Each compiled function: its id, what it is, its code size, and its
    /// calls' return address offsets with the marked call, if any.
    pub funcs: Vec<(FuncId, Code, u32, Vec<CallRet>)>,
}

/// A call instruction: its return address offset in its function, and the
/// index of the Sspur call it is (`None`: a runtime helper's call).
pub type CallRet = (u32, Option<u32>);

/// The call instructions of a function just compiled into `cc`, whose
/// marks are below `marks` (the calls marked when it was lowered).
pub fn call_returns(cc: &CompiledCode, marks: usize) -> Vec<CallRet> {
    let locs = cc.buffer.get_srclocs_sorted();
    cc.buffer
        .call_sites()
        .map(|s| {
            // The range holding the call instruction (its last byte).
            let at = s.ret_addr.saturating_sub(1);
            let i = locs.partition_point(|l| l.start <= at);
            let mark = i
                .checked_sub(1)
                .map(|i| &locs[i])
                .filter(|l| at < l.end && !l.loc.is_default())
                .map(|l| l.loc.bits())
                .filter(|&b| (b as usize) < marks);
            (s.ret_addr, mark)
        })
        .collect()
}

impl Calls {
    /// The runtime's description of the compiled functions, in the order
    /// they were defined (`owners` gives each one's Sspur function, in the
    /// same order); functions are named by that index.
    pub fn image(
        &self,
        owners: &[(FuncId, FnId, u32)],
        program: &Program,
        path: &str,
    ) -> Vec<rt::image::Func> {
        let pos = |offset: u32| {
            let (l, c) = program.line_col(offset);
            format!("{path}:{l}:{c}")
        };
        let index: HashMap<FuncId, u32> = self
            .funcs
            .iter()
            .enumerate()
            .map(|(i, f)| (f.0, i as u32))
            .collect();
        self.funcs
            .iter()
            .zip(owners)
            .map(|((_, code, size, sites), (_, owner, _))| {
                let def = match code {
                    Code::Fn(f) => Some(pos(program.fn_span(*f).start)),
                    Code::Lambda(owner, e) => Some(pos(program.source_map(*owner).expr(*e).start)),
                    Code::Wrapper | Code::Entry => None,
                };
                let name = match code {
                    Code::Lambda(..) => def.as_ref().map(|d| format!("lambda at {d}")),
                    Code::Fn(f) => Some(program.items.fns[*f].name.to_string()),
                    Code::Wrapper | Code::Entry => None,
                };
                let calls = sites
                    .iter()
                    .map(|&(ret, mark)| {
                        let (at, target) = match mark {
                            Some(m) => {
                                let (offset, target) = self.list[m as usize];
                                (
                                    Some(pos(offset)),
                                    target.and_then(|t| index.get(&t).copied()),
                                )
                            }
                            None => (None, None),
                        };
                        rt::image::Call { ret, at, target }
                    })
                    .collect();
                rt::image::Func {
                    size: *size,
                    loc: pos(program.fn_span(*owner).start),
                    name,
                    def,
                    calls,
                }
            })
            .collect()
    }
}

impl Lowerer<'_, '_, '_> {
    /// Marks the instructions emitted by `f` as the Sspur call at `e`
    /// (calling `target` directly, when known); nested calls mark their own.
    pub(crate) fn at_call<T>(
        &mut self,
        e: ExprId,
        target: Option<FuncId>,
        f: impl FnOnce(&mut Self) -> T,
    ) -> T {
        if !self.sh.calls.on {
            return f(self);
        }
        let offset = self.prog.source_map(self.owner).expr(e).start;
        let prev = self.b.srcloc();
        // Cranelift stores source locations relative to the first one an
        // instruction gets, and a mark below that base wraps to "none":
        // a method call whose receiver is a call (`xs.take(4).map(f)`)
        // would lose its mark. Fix the base at 0, below every mark.
        self.b.func.params.ensure_base_srcloc(SourceLoc::new(0));
        self.sh.calls.list.push((offset, target));
        let mark = SourceLoc::new((self.sh.calls.list.len() - 1) as u32);
        self.b.set_srcloc(mark);
        let out = f(self);
        self.b.set_srcloc(prev);
        out
    }
}
