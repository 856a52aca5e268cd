//! Seeded generators of the benchmark inputs (`bench/NAME.input` names one:
//! `text BYTES` or `csv ROWS`). Shared by `cargo xtask` (full-size inputs,
//! written under `target/bench/`) and the tests (small inputs). The output
//! depends only on the spec: a fixed-seed generator, no system randomness.

/// splitmix64: small, fast and good enough to pick words.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0; the bias is negligible for small n).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// Skewed toward 0: a rough Zipf law, so a few words are very frequent
    /// and most are rare, as in real text.
    fn skewed(&mut self, n: u64) -> u64 {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        ((n as f64) * u * u * u) as u64
    }
}

const SYLLABLES: [&str; 24] = [
    "ka", "lo", "mi", "ra", "tu", "ne", "so", "vi", "da", "pe", "an", "or", "el", "us", "qui",
    "str", "bro", "gen", "ta", "li", "mé", "zü", "ra", "do",
];

/// The vocabulary: `n` distinct words of one to four syllables (a few with
/// non-ASCII letters, so characters and bytes differ).
fn vocabulary(n: usize) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut words = Vec::with_capacity(n);
    let mut rng = Rng(7);
    while words.len() < n {
        let len = 1 + rng.below(4);
        let w: String = (0..len)
            .map(|_| SYLLABLES[rng.below(SYLLABLES.len() as u64) as usize])
            .collect();
        if seen.insert(w.clone()) {
            words.push(w);
        }
    }
    words
}

/// About `bytes` bytes of text: lines of 4 to 15 words separated by single
/// spaces, one word in eight capitalised, an empty line between paragraphs
/// of 3 to 12 lines.
fn text(bytes: usize) -> Vec<u8> {
    let vocab = vocabulary(30_000);
    let mut rng = Rng(2024);
    let mut out = String::with_capacity(bytes + 128);
    let mut paragraph = 3 + rng.below(10);
    while out.len() < bytes {
        let words = 4 + rng.below(12);
        for i in 0..words {
            if i > 0 {
                out.push(' ');
            }
            let w = &vocab[rng.skewed(vocab.len() as u64) as usize];
            if rng.below(8) == 0 {
                let mut cs = w.chars();
                if let Some(c) = cs.next() {
                    out.extend(c.to_uppercase());
                    out.push_str(cs.as_str());
                }
            } else {
                out.push_str(w);
            }
        }
        out.push('\n');
        paragraph -= 1;
        if paragraph == 0 {
            out.push('\n');
            paragraph = 3 + rng.below(10);
        }
    }
    out.into_bytes()
}

/// A header and `rows` sales lines: `date,region,product,quantity,cents`.
fn csv(rows: usize) -> Vec<u8> {
    const REGIONS: [&str; 12] = [
        "north", "south", "east", "west", "central", "coast", "hills", "lakes", "plains", "valley",
        "harbor", "summit",
    ];
    let mut rng = Rng(1999);
    let mut out = String::from("date,region,product,quantity,cents\n");
    for _ in 0..rows {
        let month = 1 + rng.below(12);
        let day = 1 + rng.below(28);
        let region = REGIONS[rng.skewed(REGIONS.len() as u64) as usize];
        let district = rng.below(8);
        let product = rng.skewed(5000);
        let quantity = 1 + rng.below(20);
        let cents = 99 + rng.below(50_000);
        out.push_str(&format!(
            "2025-{month:02}-{day:02},{region}-{district},p{product:04},{quantity},{cents}\n"
        ));
    }
    out.into_bytes()
}

/// The input a spec names: `text BYTES` or `csv ROWS`.
pub fn generate(spec: &str) -> Result<Vec<u8>, String> {
    let words: Vec<&str> = spec.split_whitespace().collect();
    let size = |s: &str| {
        s.parse::<usize>()
            .map_err(|_| format!("input spec {spec:?}: not a size: {s:?}"))
    };
    match words.as_slice() {
        ["text", n] => Ok(text(size(n)?)),
        ["csv", n] => Ok(csv(size(n)?)),
        _ => Err(format!(
            "input spec {spec:?}: expected `text BYTES` or `csv ROWS`"
        )),
    }
}
