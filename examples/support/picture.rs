//! Pictures shared by the examples.

use anyhow::{Context, Result};
use plotters::prelude::*;
use std::path::Path;

/// A scalar field on linear triangles (three nodes per cell), interpolated
/// barycentrically and coloured by the viridis map over `range`, as a PNG written atomically.
pub fn triangles(path: &Path, coords: &[[f64; 3]], cells: &[u32], u: &[f64], range: (f64, f64)) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let (lo, hi) = coords.iter().fold(([f64::MAX; 2], [f64::MIN; 2]), |(lo, hi), p| {
        ([lo[0].min(p[0]), lo[1].min(p[1])], [hi[0].max(p[0]), hi[1].max(p[1])])
    });
    let w = 800usize;
    let h = ((w as f64) * (hi[1] - lo[1]) / (hi[0] - lo[0])).ceil().max(1.0) as usize;
    let mut rgb = vec![40u8; w * h * 3];
    let to_px = |p: &[f64; 3]| {
        [
            (p[0] - lo[0]) / (hi[0] - lo[0]) * (w - 1) as f64,
            (hi[1] - p[1]) / (hi[1] - lo[1]) * (h - 1) as f64,
        ]
    };
    for t in cells.chunks(3) {
        let [a, b, c] = [0, 1, 2].map(|i| to_px(&coords[t[i] as usize]));
        let det = (b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1]);
        if det.abs() < 1e-12 {
            continue;
        }
        let (x_lo, x_hi) = (
            a[0].min(b[0]).min(c[0]).floor() as usize,
            a[0].max(b[0]).max(c[0]).ceil() as usize,
        );
        let (y_lo, y_hi) = (
            a[1].min(b[1]).min(c[1]).floor() as usize,
            a[1].max(b[1]).max(c[1]).ceil() as usize,
        );
        for py in y_lo..=y_hi.min(h - 1) {
            for px in x_lo..=x_hi.min(w - 1) {
                let (x, y) = (px as f64, py as f64);
                let l1 = ((b[0] - x) * (c[1] - y) - (c[0] - x) * (b[1] - y)) / det;
                let l2 = ((c[0] - x) * (a[1] - y) - (a[0] - x) * (c[1] - y)) / det;
                let l3 = 1.0 - l1 - l2;
                if l1 < -1e-9 || l2 < -1e-9 || l3 < -1e-9 {
                    continue;
                }
                let v = l1 * u[t[0] as usize] + l2 * u[t[1] as usize] + l3 * u[t[2] as usize];
                let v = ((v - range.0) / (range.1 - range.0)).clamp(0.0, 1.0);
                let colour = ViridisRGB::get_color(v);
                rgb[(py * w + px) * 3..][..3].copy_from_slice(&[colour.0, colour.1, colour.2]);
            }
        }
    }
    clforge::runtime::files::replace_file_at(path, |tmp| {
        let mut backend = BitMapBackend::new(tmp, (w as u32, h as u32));
        backend
            .blit_bitmap((0, 0), (w as u32, h as u32), &rgb)
            .map_err(|e| std::io::Error::other(format!("{e:?}")))?;
        backend.present().map_err(|e| std::io::Error::other(format!("{e:?}")))
    })
    .with_context(|| format!("writing {}", path.display()))
}
