//! fio's file-name lists.
/// Split fio's `a:b:c` filename list; `\:` is a literal colon.
pub fn split_names(s: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                chars.next();
                if let Some(l) = out.last_mut() {
                    l.push(':');
                }
            }
            ':' => out.push(String::new()),
            _ => {
                if let Some(l) = out.last_mut() {
                    l.push(c)
                }
            }
        }
    }
    out.retain(|n| !n.is_empty());
    out
}
