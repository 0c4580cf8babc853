//! ECharts travels in each report gzipped and base64-encoded (about 470 KB instead of
//! 1.1 MB); the page unpacks it with the browser's DecompressionStream. Compressed
//! here once, at build time.

use flate2::write::GzEncoder;
use flate2::Compression;
use std::io::Write;

const SOURCE: &str = "assets/echarts/echarts.min.js";

fn main() {
    println!("cargo:rerun-if-changed={SOURCE}");
    let js = std::fs::read(SOURCE).expect("assets/echarts/echarts.min.js");
    let mut gz = GzEncoder::new(Vec::new(), Compression::best());
    gz.write_all(&js).expect("gzip in memory");
    let packed = gz.finish().expect("gzip in memory");
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    std::fs::write(out.join("echarts.min.js.gz.b64"), base64(&packed)).expect("OUT_DIR");
}

/// Standard base64 with padding (RFC 4648), what the page's atob reads.
fn base64(data: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            s.push(if i <= chunk.len() {
                ABC[(n >> shift) as usize & 63] as char
            } else {
                '='
            });
        }
    }
    s
}
