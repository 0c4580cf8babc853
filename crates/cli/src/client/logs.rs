//! Which log files a server may have the client write: those the job files sent to
//! it name (`write_lat_log=PREFIX` → `PREFIX_clat.1.log`, `write_hist_log=PREFIX` →
//! `PREFIX_clat_hist.1.log`, …; a bare option names the job). fio's client writes whatever name a server sends; this one only these.

/// The log prefixes of a server's job files.
pub struct Names(Vec<String>);

impl Names {
    /// From the job files' text: every `write_{lat,bw,iops,hist}_log` value, and every
    /// section's name (the prefix of a bare option). Options given on a server's side
    /// (`--remote-config`) are not known here, so their logs are refused.
    pub fn of(texts: &[String]) -> Names {
        let mut v = Vec::new();
        for line in texts.iter().flat_map(|t| t.lines()).map(str::trim) {
            if let Some(section) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                v.push(section.trim().to_string());
                continue;
            }
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            let keys = [
                "write_lat_log",
                "write_bw_log",
                "write_iops_log",
                "write_hist_log",
            ];
            if keys.contains(&key.trim()) {
                v.push(value.trim().to_string());
            }
        }
        Names(v)
    }

    /// `name` is PREFIX_KIND[.N].log for one of the prefixes, or that with `.fz`
    /// (log_store_compressed).
    pub fn allows(&self, name: &str) -> bool {
        let name = name.strip_suffix(".fz").unwrap_or(name);
        self.0.iter().any(|p| {
            name.strip_prefix(p.as_str())
                .and_then(|rest| rest.strip_prefix('_'))
                .is_some_and(|rest| {
                    !rest.contains('/')
                        && rest.ends_with(".log")
                        && ["lat", "clat", "slat", "bw", "iops", "clat_hist"]
                            .iter()
                            .any(|k| {
                                rest.starts_with(&format!("{k}.")) || rest == format!("{k}.log")
                            })
                })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Names;

    #[test]
    fn only_the_jobs_log_names() {
        let n = Names::of(&["[j]\nwrite_lat_log=out/a\nwrite_bw_log\n".to_string()]);
        assert!(n.allows("out/a_clat.1.log"));
        assert!(n.allows("j_bw.1.log"));
        assert!(n.allows("out/a_lat.log"));
        assert!(n.allows("out/a_clat_hist.1.log"));
        assert!(n.allows("out/a_clat.1.log.fz"));
        assert!(!n.allows("out/a_clat.1.log.fz.fz"));
        assert!(!n.allows("out/a_clat_hist.1.log.x/y"));
        assert!(!n.allows("/etc/passwd"));
        assert!(!n.allows("out/a_clat.1.log/../../x"));
        assert!(!n.allows("out/a_x.log"));
        assert!(!n.allows("other_clat.1.log"));
    }
}
