//! The SSPUR_* settings, read once at start-up. A bad value is an error,
//! never a silent default, so a typo in a test's environment cannot quietly
//! turn a check off.

/// How frees behave (`SSPUR_MEM`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemMode {
    /// Frees at last use reuse the block.
    Default,
    /// Every free is a no-op; only the collector reclaims memory.
    Gc,
    /// Frees fill 0xA5 and quarantine; double frees abort; collections audit.
    Check,
}

/// What `SSPUR_GC_STATS` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatsMode {
    Off,
    /// `=1`: the summary lines at exit.
    Summary,
    /// `=sites`: the summary plus the sites whose blocks the collector got.
    Sites,
    /// `=log`: the summary plus one line per collection on stderr as it ends.
    Log,
}

/// All runtime settings; [`Settings::DEFAULT`] is what an empty environment gives.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub mem: MemMode,
    pub gc_stats: StatsMode,
    /// A major collection once the old generation passes max(live + this,
    /// factor x live), live being the old bytes after the last major one.
    pub gc_min_bytes: usize,
    pub gc_factor: f64,
    /// A minor collection after this many bytes of young allocation (scaled
    /// up to 4x by the survival rate).
    pub gc_young_bytes: usize,
    /// Collect every this many bytes of allocation (0 = off).
    pub stress_bytes: usize,
    pub alloc_report: bool,
    /// The n-th allocation attempt fails (0 = never).
    pub fail_alloc_at: u64,
    /// `SSPUR_MAX_HEAP_MB` in bytes; 0 = the default, [`default_max_heap`].
    pub max_heap_bytes: usize,
    /// `SSPUR_BACKTRACE`: print the call chain under a trap (default on).
    pub backtrace: bool,
    /// `SSPUR_STACK_MB`: the program's stack (native: its thread's stack;
    /// the interpreter: [`Settings::max_call_depth`] calls).
    pub stack_mb: usize,
    /// `SSPUR_GC_BARRIER_KB`: the least stack between two stack barriers.
    pub gc_barrier_bytes: usize,
}

impl Settings {
    pub const DEFAULT: Settings = Settings {
        mem: MemMode::Default,
        gc_stats: StatsMode::Off,
        gc_min_bytes: 1 << 20,
        gc_factor: 2.0,
        gc_young_bytes: 2 << 20,
        stress_bytes: 0,
        alloc_report: false,
        fail_alloc_at: 0,
        max_heap_bytes: 0,
        backtrace: true,
        stack_mb: 1024,
        gc_barrier_bytes: 64 << 10,
    };

    /// Calls the interpreter nests per MB of `SSPUR_STACK_MB`: a small
    /// native frame takes about a hundred bytes, so both backends reach
    /// about the same depth (ten million calls in the default 1 GiB).
    pub const CALLS_PER_STACK_MB: usize = 10_000;

    /// The heap limit in bytes: `SSPUR_MAX_HEAP_MB`, or the default.
    pub fn max_heap(&self) -> usize {
        if self.max_heap_bytes != 0 {
            self.max_heap_bytes
        } else {
            default_max_heap()
        }
    }

    /// The program's stack in bytes (`SSPUR_STACK_MB`).
    pub fn stack_bytes(&self) -> usize {
        self.stack_mb << 20
    }

    /// How deep the interpreter lets calls nest before `stack overflow`.
    pub fn max_call_depth(&self) -> usize {
        self.stack_mb * Self::CALLS_PER_STACK_MB
    }

    /// Whether anything reads the allocation counters. This is the single
    /// flag of the "counting only when read" rule.
    pub fn counting(&self) -> bool {
        self.gc_stats != StatsMode::Off
            || self.alloc_report
            || self.fail_alloc_at != 0
            || self.stress_bytes != 0
            || self.mem == MemMode::Check
    }

    /// Whether each block remembers its allocation site.
    pub fn track_sites(&self) -> bool {
        self.gc_stats == StatsMode::Sites || self.mem == MemMode::Check
    }

    /// Parses the settings from an environment lookup (`std::env::var` in
    /// production, a table in tests).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Settings, String> {
        let mut s = Settings::DEFAULT;
        if let Some(v) = get("SSPUR_MEM") {
            s.mem = match v.as_str() {
                "" => MemMode::Default,
                "gc" => MemMode::Gc,
                "check" => MemMode::Check,
                _ => return Err(bad("SSPUR_MEM", &v, "expected `gc` or `check` (or unset)")),
            };
        }
        if let Some(v) = get("SSPUR_GC_STATS") {
            s.gc_stats = match v.as_str() {
                "0" | "" => StatsMode::Off,
                "1" => StatsMode::Summary,
                "sites" => StatsMode::Sites,
                "log" => StatsMode::Log,
                _ => return Err(bad("SSPUR_GC_STATS", &v, "expected `1`, `sites` or `log`")),
            };
        }
        if let Some(v) = get("SSPUR_GC_MIN_MB") {
            let mb: usize = v
                .parse()
                .ok()
                .filter(|&mb: &usize| mb <= 1 << 30)
                .ok_or_else(|| {
                    bad(
                        "SSPUR_GC_MIN_MB",
                        &v,
                        "expected a whole number of megabytes",
                    )
                })?;
            s.gc_min_bytes = mb << 20;
        }
        if let Some(v) = get("SSPUR_GC_YOUNG_MB") {
            s.gc_young_bytes = positive_mb("SSPUR_GC_YOUNG_MB", &v, 1 << 20)? << 20;
        }
        if let Some(v) = get("SSPUR_GC_BARRIER_KB") {
            let kb: usize = v
                .parse()
                .ok()
                .filter(|kb: &usize| (1..=1 << 20).contains(kb))
                .ok_or_else(|| bad("SSPUR_GC_BARRIER_KB", &v, "expected 1 to 1048576 kilobytes"))?;
            s.gc_barrier_bytes = kb << 10;
        }
        if let Some(v) = get("SSPUR_GC_FACTOR") {
            s.gc_factor = v
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite() && *f >= 1.0 && *f <= 1000.0)
                .ok_or_else(|| bad("SSPUR_GC_FACTOR", &v, "expected a number from 1 to 1000"))?;
        }
        if let Some(v) = get("SSPUR_GC_STRESS") {
            let kb: usize = v
                .parse()
                .ok()
                .filter(|kb: &usize| (1..=1 << 30).contains(kb))
                .ok_or_else(|| {
                    bad(
                        "SSPUR_GC_STRESS",
                        &v,
                        "expected a positive number of kilobytes",
                    )
                })?;
            s.stress_bytes = kb << 10;
        }
        if let Some(v) = get("SSPUR_ALLOC_REPORT") {
            s.alloc_report = match v.as_str() {
                "1" => true,
                "0" | "" => false,
                _ => return Err(bad("SSPUR_ALLOC_REPORT", &v, "expected `1` or `0`")),
            };
        }
        if let Some(v) = get("SSPUR_FAIL_ALLOC_AT") {
            s.fail_alloc_at = v.parse().ok().filter(|&n: &u64| n >= 1).ok_or_else(|| {
                bad(
                    "SSPUR_FAIL_ALLOC_AT",
                    &v,
                    "expected a positive whole number",
                )
            })?;
        }
        if let Some(v) = get("SSPUR_MAX_HEAP_MB") {
            s.max_heap_bytes = positive_mb("SSPUR_MAX_HEAP_MB", &v, 1 << 30)? << 20;
        }
        if let Some(v) = get("SSPUR_STACK_MB") {
            s.stack_mb = positive_mb("SSPUR_STACK_MB", &v, 64 << 10)?;
        }
        if let Some(v) = get("SSPUR_BACKTRACE") {
            s.backtrace = match v.as_str() {
                "1" | "" => true,
                "0" => false,
                _ => return Err(bad("SSPUR_BACKTRACE", &v, "expected `0` or `1`")),
            };
        }
        Ok(s)
    }

    /// Reads the process environment. A variable that is not UTF-8 is an error.
    pub fn from_env() -> Result<Settings, String> {
        let bad_utf8 = std::cell::Cell::new(None);
        let s = Settings::from_lookup(|name| match std::env::var(name) {
            Ok(v) => Some(v),
            Err(std::env::VarError::NotPresent) => None,
            Err(std::env::VarError::NotUnicode(_)) => {
                bad_utf8.set(Some(name.to_string()));
                None
            }
        })?;
        match bad_utf8.into_inner() {
            Some(name) => Err(format!("invalid {name}: not valid UTF-8")),
            None => Ok(s),
        }
    }
}

/// The default heap limit: the memory this process may use (the machine's
/// physical memory, or the cgroup's `memory.max` when that is lower) less
/// an eighth of it, and at least 512 MB less: room for the compiler, the
/// runtime's own tables and the rest of the machine. Read once.
pub fn default_max_heap() -> usize {
    static LIMIT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        let phys = physical_memory().unwrap_or(8 << 30);
        let avail = cgroup_limit().map_or(phys, |c| c.min(phys));
        let avail = address_space_left().map_or(avail, |a| a.min(avail));
        let margin = (avail / 8).max(512 << 20);
        avail.saturating_sub(margin).max(64 << 20)
    })
}

/// Under `ulimit -v` (RLIMIT_AS): the address space this process may still
/// map, the limit less what is mapped now. Without it a program under such
/// a limit would meet a refused mapping (the interpreter's Rust allocations
/// abort on one) long before the heap limit.
pub fn address_space_left() -> Option<usize> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit, a live local of that type.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut r) } != 0 || r.rlim_cur == libc::RLIM_INFINITY
    {
        return None;
    }
    let limit = usize::try_from(r.rlim_cur).unwrap_or(usize::MAX);
    Some(limit.saturating_sub(mapped_bytes().unwrap_or(0)))
}

/// Under `ulimit -v`, every thread that allocates (the codegen workers,
/// the program thread) would reserve a malloc arena of 64 MB of address
/// space that is never given back, which the limit cannot spare: threads
/// started after this call share the existing arenas.
pub fn share_malloc_arenas_under_address_limit() {
    if address_space_left().is_some() {
        // SAFETY: mallopt takes two integers; M_ARENA_MAX only bounds the
        // arenas glibc creates from now on.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 1);
        }
    }
}

/// The process's mapped address space (`/proc/self/statm`'s first field).
fn mapped_bytes() -> Option<usize> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: usize = statm.split_whitespace().next()?.parse().ok()?;
    // SAFETY: sysconf takes a name constant and only returns a value.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    (size > 0).then(|| pages.saturating_mul(size as usize))
}

fn physical_memory() -> Option<usize> {
    // SAFETY: sysconf takes a name constant and only returns a value (-1 on
    // error, checked below); it has no pointer arguments.
    let pages = unsafe { libc::sysconf(libc::_SC_PHYS_PAGES) };
    // SAFETY: as above.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    (pages > 0 && size > 0).then(|| (pages as usize).saturating_mul(size as usize))
}

/// The cgroup v2 (`memory.max`) or v1 (`memory.limit_in_bytes`) limit of
/// this process, if one is set.
fn cgroup_limit() -> Option<usize> {
    [
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ]
    .iter()
    .filter_map(|p| std::fs::read_to_string(p).ok())
    .filter_map(|s| s.trim().parse::<usize>().ok())
    .find(|&n| n > 0)
}

/// A positive whole number of megabytes up to `max`.
fn positive_mb(name: &str, v: &str, max: usize) -> Result<usize, String> {
    v.parse()
        .ok()
        .filter(|mb: &usize| (1..=max).contains(mb))
        .ok_or_else(|| bad(name, v, "expected a positive whole number of megabytes"))
}

fn bad(name: &str, value: &str, expected: &str) -> String {
    format!("invalid {name}={value:?}: {expected}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, &str)]) -> Result<Settings, String> {
        Settings::from_lookup(|name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn empty_environment_gives_defaults() {
        let s = parse(&[]).unwrap();
        assert_eq!(s, Settings::DEFAULT);
        assert!(!s.counting());
    }

    #[test]
    fn good_values() {
        type Case<'a> = (&'a [(&'a str, &'a str)], fn(&Settings) -> bool);
        let cases: &[Case] = &[
            (&[("SSPUR_MEM", "gc")], |s| {
                s.mem == MemMode::Gc && !s.counting()
            }),
            (&[("SSPUR_MEM", "check")], |s| {
                s.mem == MemMode::Check && s.counting() && s.track_sites()
            }),
            (&[("SSPUR_GC_STATS", "1")], |s| {
                s.gc_stats == StatsMode::Summary && s.counting()
            }),
            (&[("SSPUR_GC_STATS", "sites")], |s| s.track_sites()),
            (&[("SSPUR_GC_STATS", "log")], |s| {
                s.gc_stats == StatsMode::Log && s.counting() && !s.track_sites()
            }),
            (&[("SSPUR_GC_MIN_MB", "8")], |s| s.gc_min_bytes == 8 << 20),
            (&[("SSPUR_GC_FACTOR", "2.5")], |s| s.gc_factor == 2.5),
            (&[("SSPUR_GC_YOUNG_MB", "2")], |s| {
                s.gc_young_bytes == 2 << 20
            }),
            (&[("SSPUR_GC_STRESS", "4")], |s| {
                s.stress_bytes == 4096 && s.counting()
            }),
            (&[("SSPUR_ALLOC_REPORT", "1")], |s| {
                s.alloc_report && s.counting()
            }),
            (&[("SSPUR_FAIL_ALLOC_AT", "3")], |s| {
                s.fail_alloc_at == 3 && s.counting()
            }),
            (&[("SSPUR_MAX_HEAP_MB", "64")], |s| {
                s.max_heap() == 64 << 20 && !s.counting()
            }),
            (&[("SSPUR_BACKTRACE", "0")], |s| {
                !s.backtrace && !s.counting()
            }),
            (&[("SSPUR_STACK_MB", "64")], |s| {
                s.stack_bytes() == 64 << 20 && s.max_call_depth() == 640_000
            }),
        ];
        for (env, ok) in cases {
            let s = parse(env).unwrap();
            assert!(ok(&s), "{env:?} gave {s:?}");
        }
    }

    #[test]
    fn bad_values_are_errors() {
        let cases: &[(&str, &str)] = &[
            ("SSPUR_MEM", "gcc"),
            ("SSPUR_GC_STATS", "yes"),
            ("SSPUR_GC_MIN_MB", "-1"),
            ("SSPUR_GC_MIN_MB", "lots"),
            ("SSPUR_GC_FACTOR", "0.5"),
            ("SSPUR_GC_YOUNG_MB", "0"),
            ("SSPUR_GC_YOUNG_MB", "big"),
            ("SSPUR_GC_FACTOR", "nan"),
            ("SSPUR_GC_STRESS", "0"),
            ("SSPUR_ALLOC_REPORT", "true"),
            ("SSPUR_FAIL_ALLOC_AT", "0"),
            ("SSPUR_FAIL_ALLOC_AT", "x"),
            ("SSPUR_MAX_HEAP_MB", "0"),
            ("SSPUR_BACKTRACE", "no"),
            ("SSPUR_MAX_HEAP_MB", "1e3"),
            ("SSPUR_STACK_MB", "0"),
            ("SSPUR_STACK_MB", "65537"),
        ];
        for (k, v) in cases {
            let err = parse(&[(k, v)]).unwrap_err();
            assert!(err.starts_with(&format!("invalid {k}=")), "{err}");
        }
    }
}
