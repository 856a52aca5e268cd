//! "Did you mean" hints for misspelt names.

use syntax::Diagnostic;

/// Adds a note naming the closest candidate, if one is close enough.
pub(crate) fn did_you_mean<'a>(
    d: Diagnostic,
    wrong: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Diagnostic {
    let limit = (wrong.chars().count() / 3).max(1);
    let best = candidates
        .into_iter()
        .filter(|c| *c != wrong)
        .map(|c| {
            // `length` for `len`: a prefix of at least three characters.
            let prefix =
                c.len() >= 3 && wrong.starts_with(c) || wrong.len() >= 3 && c.starts_with(wrong);
            (if prefix { 1 } else { distance(wrong, c) }, c)
        })
        .filter(|(dist, _)| *dist <= limit)
        .min();
    match best {
        Some((_, c)) => d.with_note(format!("did you mean `{c}`?")),
        None => d,
    }
}

/// Levenshtein distance over chars (names are short).
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::distance;

    #[test]
    fn distances() {
        for (a, b, d) in [
            ("totl", "total", 1),
            ("length", "len", 3),
            ("", "ab", 2),
            ("ab", "ba", 2),
        ] {
            assert_eq!(distance(a, b), d, "{a} {b}");
        }
    }
}
