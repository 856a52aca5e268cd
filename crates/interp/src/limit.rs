//! The heap limit, applied to the same values the native runtime applies it
//! to (docs/runtime.md, `SSPUR_MAX_HEAP_MB`): a list buffer or string block
//! that would not fit in the limit is the `out of memory` trap, at once, in
//! both backends. Sizes are the native layout's: a string block is its
//! bytes; a list buffer a 16-byte header and `cap` elements of 16 bytes
//! (strings and lists) or 8 (everything else). Besides these checks of
//! one request, every live object counts against the limit ([`Charge`]),
//! so a program whose values keep growing traps where native code's heap
//! would pass the limit.
//!
//! Growth of a program value's Rust storage goes through `try_reserve`, so
//! an allocation the system refuses is the same trap, never an abort.

use crate::value::Value;

/// The limit in bytes (read once; a bad `SSPUR_MAX_HEAP_MB` is reported by
/// the CLI before the run, here it falls back to the default).
pub(crate) fn max_heap() -> usize {
    static LIMIT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        rt::Settings::from_env()
            .map(|s| s.max_heap())
            .unwrap_or_else(|_| rt::config::default_max_heap())
    })
}

/// Native bytes of one element of a list holding `sample`.
pub(crate) fn elem_bytes(sample: Option<&Value>) -> u128 {
    match sample {
        Some(Value::Str(_)) | Some(Value::List(_)) => 16,
        _ => 8,
    }
}

/// Whether a list buffer of `cap` elements of `elem` bytes fits.
pub(crate) fn list_fits(cap: u128, elem: u128) -> bool {
    16 + cap.saturating_mul(elem) <= max_heap() as u128
}

/// Whether a string block of `bytes` fits.
pub(crate) fn str_fits(bytes: u128) -> bool {
    bytes <= max_heap() as u128
}

/// Room for `more` items in `v`, or false (the caller traps).
pub(crate) fn reserve<T>(v: &mut Vec<T>, more: usize) -> bool {
    v.try_reserve(more).is_ok()
}

/// A new string of `bytes` capacity, or None (the caller traps).
pub(crate) fn string_with(bytes: usize) -> Option<String> {
    let mut s = String::new();
    s.try_reserve_exact(bytes).ok()?;
    Some(s)
}

/// Live bytes against the limits: `native`, what the values would take in
/// the native layout (checked against [`max_heap`], so both backends trap
/// on the same programs), and `real`, what they take in this process
/// (checked against the machine's default limit, so the interpreter, whose
/// values are several times larger, traps before the system refuses it
/// memory or kills it).
#[derive(Clone, Copy)]
struct Room {
    native: isize,
    real: isize,
}

thread_local! {
    static ROOM: std::cell::Cell<Room> = std::cell::Cell::new(Room {
        native: max_heap().min(isize::MAX as usize) as isize,
        real: real_room().min(isize::MAX as usize) as isize,
    });
    /// Set by a charge that passed a limit; the evaluator traps at the
    /// expression that made it. Never cleared: the trap ends the run.
    static OVER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Room for this process's own values: the default limit, and under `ulimit
/// -v` half of the address space left once the interpreter's
/// stack is mapped (allocator headers, arenas and fragmentation take the
/// rest), so a refused mapping is the trap, not an abort.
fn real_room() -> usize {
    let room = rt::config::default_max_heap();
    rt::config::address_space_left().map_or(room, |a| room.min(a / 2))
}

/// Whether an allocation since the start passed a limit.
#[inline]
pub(crate) fn over() -> bool {
    OVER.with(|o| o.get())
}

/// The bytes one heap object counts for while it lives: taken when it is
/// made or grows, given back when it is dropped. Every program object the
/// native runtime allocates a block for carries one (list buffers, string
/// blocks, records, tuples, constructed sums, `Some`, closures, maps,
/// string builders), so a program that keeps growing traps `out of
/// memory` in both backends instead of exhausting the machine.
#[derive(Default)]
pub(crate) struct Charge {
    native: usize,
    real: usize,
}

impl Charge {
    /// Counts `native` layout bytes and `real` bytes of this process.
    pub(crate) fn new(native: usize, real: usize) -> Charge {
        let mut c = Charge::default();
        c.grow(native, real);
        c
    }

    /// Counts `native` and `real` more bytes for the same object.
    pub(crate) fn grow(&mut self, native: usize, real: usize) {
        self.native = self.native.saturating_add(native);
        self.real = self.real.saturating_add(real);
        ROOM.with(|r| {
            let mut room = r.get();
            room.native = room.native.saturating_sub(clamp(native));
            room.real = room.real.saturating_sub(clamp(real));
            if room.native < 0 || room.real < 0 {
                OVER.with(|o| o.set(true));
            }
            r.set(room);
        });
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        // `try_with`: a value dropped while the thread's locals are torn
        // down has nothing left to give back to.
        let _ = ROOM.try_with(|r| {
            let mut room = r.get();
            room.native = room.native.saturating_add(clamp(self.native));
            room.real = room.real.saturating_add(clamp(self.real));
            r.set(room);
        });
    }
}

fn clamp(n: usize) -> isize {
    n.min(isize::MAX as usize) as isize
}

/// What a Rust allocation of `bytes` takes, with the allocator's header.
pub(crate) fn real(bytes: usize) -> usize {
    bytes + 16
}

/// Native bytes of `n` words.
pub(crate) fn words(n: usize) -> usize {
    n * 8
}

/// Native words of a value (crates/codegen `layout::words`: strings and
/// lists are two, everything else one).
pub(crate) fn value_words(v: &Value) -> usize {
    match v {
        Value::Str(_) | Value::List(_) => 2,
        _ => 1,
    }
}

/// Native bytes of a block of fields `vs` after `extra` words (a tag, a
/// code pointer).
pub(crate) fn fields_bytes(extra: usize, vs: &[Value]) -> usize {
    words(extra + vs.iter().map(value_words).sum::<usize>())
}

/// Real bytes of an `Rc` holding `T` and a boxed slice of `n` values.
pub(crate) fn rc_with_values<T>(n: usize) -> usize {
    real(std::mem::size_of::<T>() + 16) + real(n * std::mem::size_of::<Value>())
}
