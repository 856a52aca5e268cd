//! Output the runtime writes itself: the program's buffered stdout, stderr,
//! the exit reports and check mode's fatal errors. Used by the entry points
//! (`abi`), the allocation paths (`state`) and the collector (`gc`).

use crate::state::Rt;

/// Bytes of stdout kept before a write.
pub(crate) const STDOUT_BUFFER: usize = 64 << 10;

/// `(p, len)` as a slice (empty when `len` is 0 or `p` null).
///
/// # Safety
/// Unless empty, `len` bytes at `p` must be readable while the slice lives.
pub(crate) unsafe fn bytes<'a>(p: *const u8, len: usize) -> &'a [u8] {
    if len == 0 || p.is_null() {
        &[]
    } else {
        // SAFETY: `len` readable bytes at a non-null `p` (the contract).
        unsafe { std::slice::from_raw_parts(p, len) }
    }
}

/// Writes out the program's stdout buffer.
pub(crate) fn flush(rt: &mut Rt) {
    if !rt.stdout.is_empty() {
        write_fd(1, &rt.stdout);
        rt.stdout.clear();
    }
}

/// Flushes stdout and prints the exit reports, once.
pub(crate) fn finish(rt: &mut Rt) {
    flush(rt);
    if rt.finished {
        return;
    }
    rt.finished = true;
    let report = crate::stats::exit_report(rt);
    if !report.is_empty() {
        write_stderr_raw(report.as_bytes());
    }
}

/// Writes to stderr at once, unbuffered.
pub(crate) fn write_stderr_raw(data: &[u8]) {
    write_fd(2, data);
}

/// Writes all of `data`, retrying on EINTR; gives up silently on other
/// errors (a closed pipe must not turn into a crash of the runtime).
pub(crate) fn write_fd(fd: i32, mut data: &[u8]) {
    while !data.is_empty() {
        // SAFETY: `data` is a live slice of `data.len()` bytes.
        let n = unsafe { libc::write(fd, data.as_ptr() as *const libc::c_void, data.len()) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        data = &data[n as usize..];
    }
}

/// Check mode's fatal error: flush, print, abort.
pub(crate) fn abort_with(rt: &mut Rt, msg: &str) -> ! {
    flush(rt);
    write_stderr_raw(format!("{msg}\n").as_bytes());
    std::process::abort()
}
