//! `POCKET_TTS_SIMD` is read once per process, so each request is checked in a child
//! process (this test binary re-run on a single test).

use std::process::Command;

use pocket_tts_simd::{best_available, Isa, ENV_VAR};

const EXPECT_VAR: &str = "POCKET_TTS_SIMD_TEST_EXPECT";

/// Child side: does nothing unless spawned by `env_override_selects_isa`.
#[test]
fn env_override_child() {
    let Ok(expected) = std::env::var(EXPECT_VAR) else {
        return;
    };
    let isa = pocket_tts_simd::detected();
    assert_eq!(
        isa.name(),
        expected,
        "{ENV_VAR}={:?}",
        std::env::var(ENV_VAR)
    );
    // The dispatching kernels run (and agree with the scalar reference).
    let mut x = vec![-3.0f32, -0.5, 0.0, 0.5, 3.0];
    pocket_tts_simd::gelu_tanh(&mut x);
    let mut want = vec![-3.0f32, -0.5, 0.0, 0.5, 3.0];
    pocket_tts_simd::scalar::gelu_tanh(&mut want);
    for (g, w) in x.iter().zip(&want) {
        assert!(
            (g - w).abs() <= 1e-6,
            "gelu on {isa}: {g} vs {w} (tolerance 1e-6)"
        );
    }
}

#[test]
fn env_override_selects_isa() {
    let exe = std::env::current_exe().expect("test executable path");
    let run_child = |request: &str, expected: &str| {
        Command::new(&exe)
            .args(["--exact", "env_override_child", "--test-threads=1"])
            .env(ENV_VAR, request)
            .env(EXPECT_VAR, expected)
            .output()
    };
    // Under an emulating test runner (e.g. cross-testing with qemu-user without binfmt)
    // the binary cannot re-execute itself; then there is nothing to check here.
    let can_reexec = Command::new(&exe)
        .args(["--exact", "env_override_child"])
        .env_remove(EXPECT_VAR)
        .output()
        .is_ok_and(|o| {
            o.status.success() && String::from_utf8_lossy(&o.stdout).contains("1 passed")
        });
    if !can_reexec {
        eprintln!("skipping: this test binary cannot re-execute itself here");
        return;
    }
    let best = best_available();
    let mut cases: Vec<(String, Isa)> = Isa::ALL
        .into_iter()
        .map(|isa| (isa.name().to_uppercase(), isa.resolve()))
        .collect();
    cases.push(("bogus".into(), best));
    cases.push((String::new(), best));
    for (request, expected) in cases {
        let out = run_child(&request, expected.name()).expect("spawn child test process");
        assert!(
            out.status.success(),
            "{ENV_VAR}={request:?} should select {expected}:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("1 passed"),
            "child did not run the check for {request:?}: {stdout}"
        );
    }
}
