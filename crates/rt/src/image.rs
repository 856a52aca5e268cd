//! A compiled program's tables independent of where its code is loaded:
//! functions are indices into a table of code addresses and call returns
//! are offsets in their function. The JIT resolves an [`Image`] with the
//! addresses of its finalized functions; `sspur build` writes the image's
//! bytes ([`Image::encode`]) and the address table (relocated by the
//! linker) into the executable, whose `main` hands both to
//! [`sspur_aot_main`].

use crate::backtrace::{Call as ChainCall, Func as ChainFunc, Table};
use crate::helpers::types::TyDesc;
use crate::launch::Program;

/// The program's tables, with code named by index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Image {
    pub types: Vec<TyDesc>,
    /// `path:line:col` of each allocation site.
    pub site_locs: Vec<String>,
    /// Each allocation site's name for the statistics.
    pub site_names: Vec<String>,
    /// The compiled functions, in the order of the address table.
    pub funcs: Vec<Func>,
    /// The function to run (the entry trampoline, or `main`).
    pub main: u32,
    /// Whether `main` is the entry trampoline: traps then print call
    /// chains, which end at its call.
    pub chains: bool,
    /// Where a stack overflow outside every function traps.
    pub fallback: String,
}

/// A compiled function.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Func {
    /// Its code size in bytes.
    pub size: u32,
    /// Where a stack overflow in it traps (its Sspur function).
    pub loc: String,
    /// The Sspur frame's name and definition (see [`ChainFunc`]).
    pub name: Option<String>,
    pub def: Option<String>,
    pub calls: Vec<Call>,
}

/// A call instruction of a function.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Call {
    /// Its return address's offset in the function.
    pub ret: u32,
    /// The Sspur call's position.
    pub at: Option<String>,
    /// The function a direct call calls.
    pub target: Option<u32>,
}

impl Image {
    /// The program to run with the functions at `addrs` (indexed like
    /// `funcs`) and these arguments. None when an index is out of range.
    pub fn resolve(self, addrs: &[usize], args: Vec<String>) -> Option<Program> {
        if addrs.len() < self.funcs.len() {
            return None;
        }
        let entry = *addrs.get(self.main as usize)?;
        let mut ranges = Vec::with_capacity(self.funcs.len());
        let mut funcs = Vec::new();
        let mut calls = Vec::new();
        let mut entry_ret = 0;
        for (i, f) in self.funcs.into_iter().enumerate() {
            let start = addrs[i];
            let end = start + f.size as usize;
            ranges.push((start, end, f.loc));
            if !self.chains {
                continue;
            }
            funcs.push(ChainFunc {
                start,
                end,
                name: f.name,
                def: f.def,
            });
            for c in f.calls {
                let ret = start + c.ret as usize;
                if i == self.main as usize {
                    entry_ret = ret;
                }
                let target = match c.target {
                    Some(t) => *addrs.get(t as usize)?,
                    None => 0,
                };
                calls.push(ChainCall {
                    ret,
                    at: c.at,
                    target,
                });
            }
        }
        funcs.sort_by_key(|f| f.start);
        calls.sort_by_key(|c| c.ret);
        let chains = self.chains.then(|| {
            Box::new(Table {
                funcs,
                calls,
                entry_ret,
                stack_lo: 0,
                stack_hi: 0,
            })
        });
        Some(Program {
            entry,
            types: self.types,
            site_locs: self.site_locs,
            site_names: self.site_names,
            args,
            ranges,
            fallback: self.fallback,
            chains,
        })
    }

    /// The image as bytes (read back by [`Image::decode`]).
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer(Vec::new());
        w.bytes(MAGIC);
        w.len(self.types.len());
        for t in &self.types {
            w.ty(t);
        }
        w.strs(&self.site_locs);
        w.strs(&self.site_names);
        w.len(self.funcs.len());
        for f in &self.funcs {
            w.u32(f.size);
            w.str(&f.loc);
            w.opt_str(&f.name);
            w.opt_str(&f.def);
            w.len(f.calls.len());
            for c in &f.calls {
                w.u32(c.ret);
                w.opt_str(&c.at);
                match c.target {
                    Some(t) => {
                        w.u8(1);
                        w.u32(t);
                    }
                    None => w.u8(0),
                }
            }
        }
        w.u32(self.main);
        w.u8(self.chains as u8);
        w.str(&self.fallback);
        w.0
    }

    /// Reads an image written by [`Image::encode`]; None if the bytes are
    /// not one.
    pub fn decode(bytes: &[u8]) -> Option<Image> {
        let mut r = Reader(bytes);
        if r.take(MAGIC.len())? != MAGIC {
            return None;
        }
        let types = r.list(Reader::ty)?;
        let site_locs = r.strs()?;
        let site_names = r.strs()?;
        let funcs = r.list(|r| {
            Some(Func {
                size: r.u32()?,
                loc: r.str()?,
                name: r.opt_str()?,
                def: r.opt_str()?,
                calls: r.list(|r| {
                    Some(Call {
                        ret: r.u32()?,
                        at: r.opt_str()?,
                        target: match r.u8()? {
                            0 => None,
                            _ => Some(r.u32()?),
                        },
                    })
                })?,
            })
        })?;
        let main = r.u32()?;
        let chains = r.u8()? != 0;
        let fallback = r.str()?;
        r.0.is_empty().then_some(Image {
            types,
            site_locs,
            site_names,
            funcs,
            main,
            chains,
            fallback,
        })
    }
}

/// The first bytes of an encoded image (and its format's version).
const MAGIC: &[u8] = b"SSPURIMG1";

struct Writer(Vec<u8>);

impl Writer {
    fn bytes(&mut self, b: &[u8]) {
        self.0.extend_from_slice(b);
    }
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.bytes(&v.to_le_bytes());
    }
    fn len(&mut self, n: usize) {
        self.u32(n as u32);
    }
    fn str(&mut self, s: &str) {
        self.len(s.len());
        self.bytes(s.as_bytes());
    }
    fn opt_str(&mut self, s: &Option<String>) {
        match s {
            Some(s) => {
                self.u8(1);
                self.str(s);
            }
            None => self.u8(0),
        }
    }
    fn strs(&mut self, v: &[String]) {
        self.len(v.len());
        for s in v {
            self.str(s);
        }
    }
    fn ids(&mut self, v: &[u32]) {
        self.len(v.len());
        for &x in v {
            self.u32(x);
        }
    }
    fn ty(&mut self, t: &TyDesc) {
        match t {
            TyDesc::Int => self.u8(0),
            TyDesc::F64 => self.u8(1),
            TyDesc::Bool => self.u8(2),
            TyDesc::Str => self.u8(3),
            TyDesc::Unit => self.u8(4),
            TyDesc::Fn => self.u8(5),
            TyDesc::StrBuilder => self.u8(6),
            TyDesc::List(a) => {
                self.u8(7);
                self.u32(*a);
            }
            TyDesc::Map(k, v) => {
                self.u8(8);
                self.u32(*k);
                self.u32(*v);
            }
            TyDesc::Option(a) => {
                self.u8(9);
                self.u32(*a);
            }
            TyDesc::Tuple(xs) => {
                self.u8(10);
                self.ids(xs);
            }
            TyDesc::Record { name, fields } => {
                self.u8(11);
                self.str(name);
                self.len(fields.len());
                for (f, t) in fields {
                    self.str(f);
                    self.u32(*t);
                }
            }
            TyDesc::Sum { name, variants } => {
                self.u8(12);
                self.str(name);
                self.len(variants.len());
                for (v, ts) in variants {
                    self.str(v);
                    self.ids(ts);
                }
            }
        }
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn len(&mut self) -> Option<usize> {
        let n = self.u32()? as usize;
        // Every element takes at least one byte: a larger count is corrupt
        // (and would reserve too much).
        (n <= self.0.len()).then_some(n)
    }
    fn str(&mut self) -> Option<String> {
        let n = self.len()?;
        String::from_utf8(self.take(n)?.to_vec()).ok()
    }
    fn opt_str(&mut self) -> Option<Option<String>> {
        match self.u8()? {
            0 => Some(None),
            _ => Some(Some(self.str()?)),
        }
    }
    /// A count, then that many items read by `item`.
    fn list<T>(&mut self, mut item: impl FnMut(&mut Self) -> Option<T>) -> Option<Vec<T>> {
        let n = self.len()?;
        (0..n).map(|_| item(self)).collect()
    }
    fn strs(&mut self) -> Option<Vec<String>> {
        self.list(Self::str)
    }
    fn ids(&mut self) -> Option<Vec<u32>> {
        self.list(Self::u32)
    }
    fn ty(&mut self) -> Option<TyDesc> {
        Some(match self.u8()? {
            0 => TyDesc::Int,
            1 => TyDesc::F64,
            2 => TyDesc::Bool,
            3 => TyDesc::Str,
            4 => TyDesc::Unit,
            5 => TyDesc::Fn,
            6 => TyDesc::StrBuilder,
            7 => TyDesc::List(self.u32()?),
            8 => TyDesc::Map(self.u32()?, self.u32()?),
            9 => TyDesc::Option(self.u32()?),
            10 => TyDesc::Tuple(self.ids()?),
            11 => TyDesc::Record {
                name: self.str()?,
                fields: self.list(|r| Some((r.str()?, r.u32()?)))?,
            },
            12 => TyDesc::Sum {
                name: self.str()?,
                variants: self.list(|r| Some((r.str()?, r.ids()?)))?,
            },
            _ => return None,
        })
    }
}

/// The `main` of an executable `sspur build` made: its generated `main`
/// passes the process's arguments, its image's bytes and its table of
/// function addresses. Runs the program like `sspur run` and returns the
/// exit code.
///
/// # Safety
/// `argv` holds `argc` readable C strings; `(image, len)` is a readable
/// byte string; `funcs` points to `nfuncs` words, the addresses of the
/// executable's compiled functions in the image's order.
#[no_mangle]
pub unsafe extern "C" fn sspur_aot_main(
    argc: i32,
    argv: *const *const std::ffi::c_char,
    image: *const u8,
    len: usize,
    funcs: *const usize,
    nfuncs: usize,
) -> i32 {
    crate::config::share_malloc_arenas_under_address_limit();
    let args = (1..argc.max(0) as usize)
        .map(|i| {
            // SAFETY: `argv` holds `argc` C strings (the contract).
            unsafe { std::ffi::CStr::from_ptr(*argv.add(i)) }
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    // SAFETY: readable for `len` bytes and `nfuncs` words (the contract).
    let (bytes, addrs) = unsafe {
        (
            std::slice::from_raw_parts(image, len),
            std::slice::from_raw_parts(funcs, nfuncs),
        )
    };
    let Some(program) = Image::decode(bytes).and_then(|i| i.resolve(addrs, args)) else {
        eprintln!("sspur: this executable's program image is damaged");
        return 101;
    };
    // SAFETY: the image and the addresses were written together by
    // `sspur build` for this executable's code.
    let code = unsafe { crate::launch::run(program) };
    use std::io::Write;
    let _ = std::io::stdout().flush();
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_reads_back_as_written() {
        let image = Image {
            types: vec![
                TyDesc::Int,
                TyDesc::List(0),
                TyDesc::Map(0, 1),
                TyDesc::Tuple(vec![0, 1]),
                TyDesc::Record {
                    name: "P".into(),
                    fields: vec![("x".into(), 0)],
                },
                TyDesc::Sum {
                    name: "T".into(),
                    variants: vec![("Leaf".into(), vec![]), ("Node".into(), vec![5, 0])],
                },
            ],
            site_locs: vec!["p.ssp:1:2".into()],
            site_names: vec!["p.ssp:1:2 list literal".into()],
            funcs: vec![Func {
                size: 40,
                loc: "p.ssp:1:1".into(),
                name: Some("main".into()),
                def: Some("p.ssp:1:1".into()),
                calls: vec![Call {
                    ret: 12,
                    at: Some("p.ssp:2:3".into()),
                    target: Some(0),
                }],
            }],
            main: 0,
            chains: true,
            fallback: "p.ssp:1:1".into(),
        };
        let bytes = image.encode();
        assert_eq!(Image::decode(&bytes), Some(image));
        assert_eq!(Image::decode(&bytes[..bytes.len() - 1]), None);
    }
}
