//! Timing checks of the GEMM kernels, run by hand (see the functions).

use super::*;
#[test]
#[ignore]
fn gemm_shapes_gflops() {
    let shapes = [
        ("tr in_proj", 1536, 16, 512),
        ("tr out", 512, 16, 512),
        ("tr ff1", 2048, 16, 512),
        ("tr ff2", 512, 16, 2048),
        ("conv0", 512, 16, 3584),
        ("convtr1", 3072, 16, 512),
        ("res1a", 128, 96, 768),
        ("res1b", 256, 96, 128),
        ("convtr2", 1280, 96, 256),
        ("res2a", 64, 480, 384),
        ("res2b", 128, 480, 64),
        ("convtr3", 512, 480, 128),
        ("res3a", 32, 1920, 192),
        ("res3b", 64, 1920, 32),
        ("final", 1, 1920, 192),
        ("enc big", 1536, 2208, 512),
        ("enc res", 64, 66000, 384),
    ];
    let mut total = 0.0;
    for &(name, m, n, k) in &shapes {
        let a = PackedMatrix::from_fn(k, m, |i, j| ((i * 31 + j * 7) % 100) as f32 * 1e-3);
        let b: Vec<f32> = (0..n * k).map(|i| ((i * 13) % 100) as f32 * 1e-3).collect();
        let mut c = vec![0f32; n * m];
        let fl = 2.0 * (m * n * k) as f64;
        let iters = ((1e9 / fl) as usize).max(3);
        let mut best = f64::MAX;
        for _ in 0..5 {
            let t0 = std::time::Instant::now();
            for _ in 0..iters {
                gemm_packed(&a, BView::dense(&b, n, k, k), &mut c, m, Init::Zero);
            }
            best = best.min(t0.elapsed().as_secs_f64() / iters as f64);
        }
        if n <= 1920 {
            total += best;
        }
        println!(
            "{name:12} m={m:5} n={n:5} k={k:5}: {:8.1} us {:6.1} GF/s",
            best * 1e6,
            fl / best * 1e-9
        );
    }
    println!("decoder-ish total {:.3} ms", total * 1e3);
}
