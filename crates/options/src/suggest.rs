//! "did you mean" for misspelt option names.

/// Optimal string alignment distance (edit distance with transpositions).
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

/// The candidate closest to `name`, if close enough to be a likely typo.
pub fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let best = candidates
        .map(|n| (distance(&name.to_ascii_lowercase(), n), n))
        .min_by_key(|(d, _)| *d);
    match best {
        Some((d, n)) if d <= (name.len() / 3).max(2) => Some(n),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn suggests_close_names() {
        let names = ["iodepth", "ramp_time"];
        assert_eq!(closest("iodpeth", names.into_iter()), Some("iodepth"));
        assert_eq!(closest("ramp_tme", names.into_iter()), Some("ramp_time"));
        assert_eq!(closest("completelydifferent", names.into_iter()), None);
    }
}
