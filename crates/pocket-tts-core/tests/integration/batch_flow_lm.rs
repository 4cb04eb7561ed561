//! `FlowLmFast::forward_batch` (src/fast/flow_lm/batch.rs) against each stream run alone
//! with `FlowLmFast::step` / `prefill`: streams of different prompt lengths join (their
//! prefill batched with the others' steps, in pieces) and leave at different times, with
//! different decode-step counts, on every flow head and with GQA.
//!
//! Tolerance: none. The batched linears compute each row with the kernels and rounding
//! order of the solo GEMVs, so every latent and EOS logit must have the same bits.

use crate::common;

use pocket_tts_core::config::{Config, FlowType};
use pocket_tts_core::internals::fast::flow_lm::{BatchInput, BatchItem, BatchScratch, FlowLmFast};
use pocket_tts_core::internals::models::flow_lm::FlowLm;
use rand::SeedableRng;
use rand_distr::{Distribution, Normal};

fn normal(n: usize, std: f32, seed: u64) -> Vec<f32> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let d = Normal::new(0.0f32, std).unwrap();
    (0..n).map(|_| d.sample(&mut rng)).collect()
}

/// One stream of the scenario: its prompt, when it joins, how many steps it takes, its
/// decode steps and noise.
struct Plan {
    prompt: Vec<f32>,
    join: usize,
    steps: usize,
    decode_steps: usize,
    noise: Vec<Vec<f32>>,
}

/// (latents, EOS logits) of one stream, each step feeding back its own latent.
type Run = (Vec<Vec<f32>>, Vec<f32>);

fn solo(fast: &FlowLmFast, p: &Plan) -> Run {
    let (d, ldim) = (fast.dim(), fast.ldim());
    let mut state = fast.new_state(4);
    fast.prefill(&p.prompt, p.prompt.len() / d, &mut state)
        .unwrap();
    let mut prev: Option<Vec<f32>> = None;
    let (mut lat, mut eos) = (Vec::new(), Vec::new());
    for n in &p.noise[..p.steps] {
        let mut out = vec![0f32; ldim];
        let e = fast
            .step(prev.as_deref(), n, p.decode_steps, &mut state, &mut out)
            .unwrap();
        prev = Some(out.clone());
        lat.push(out);
        eos.push(e);
    }
    (lat, eos)
}

/// All streams in batched passes: a stream's prompt is fed `piece` positions per pass
/// from its join pass on, mixed with the steps of the streams already generating.
fn batched(fast: &FlowLmFast, plans: &[Plan], piece: usize) -> Vec<Run> {
    let (d, ldim) = (fast.dim(), fast.ldim());
    let mut states: Vec<_> = plans.iter().map(|_| fast.new_state(4)).collect();
    let mut fed = vec![0usize; plans.len()];
    let mut runs: Vec<Run> = plans.iter().map(|_| (Vec::new(), Vec::new())).collect();
    let mut scratch = BatchScratch::default();
    for pass in 0.. {
        let mut items = Vec::new();
        let mut who = Vec::new();
        for (k, (p, s)) in plans.iter().zip(states.iter_mut()).enumerate() {
            if pass < p.join || runs[k].0.len() == p.steps {
                continue;
            }
            let rows = p.prompt.len() / d;
            let input = if fed[k] < rows {
                let n = piece.min(rows - fed[k]);
                let e = &p.prompt[fed[k] * d..(fed[k] + n) * d];
                fed[k] += n;
                BatchInput::Prefill { embeddings: e }
            } else {
                let i = runs[k].0.len();
                BatchInput::Step {
                    previous: runs[k].0.last().map(|v| v.as_slice()),
                    noise: &p.noise[i],
                    decode_steps: p.decode_steps,
                }
            };
            who.push((k, matches!(input, BatchInput::Step { .. })));
            items.push(BatchItem { state: s, input });
        }
        if items.is_empty() {
            break;
        }
        let steps = who.iter().filter(|w| w.1).count();
        let mut latents = vec![0f32; steps * ldim];
        let mut eos = vec![0f32; steps];
        fast.forward_batch(&mut items, &mut scratch, &mut latents, &mut eos)
            .unwrap();
        drop(items);
        let mut j = 0;
        for (k, is_step) in who {
            if is_step {
                runs[k].0.push(latents[j * ldim..(j + 1) * ldim].to_vec());
                runs[k].1.push(eos[j]);
                j += 1;
            }
        }
    }
    runs
}

fn plans(fast: &FlowLmFast, decode_steps: [usize; 3]) -> Vec<Plan> {
    let d = fast.dim();
    let ldim = fast.ldim();
    [(37, 0, 12), (5, 3, 9), (70, 4, 6)]
        .iter()
        .zip(decode_steps)
        .enumerate()
        .map(|(k, (&(len, join, steps), ds))| Plan {
            prompt: normal(len * d, 1.0, 100 + k as u64),
            join,
            steps,
            decode_steps: ds,
            noise: (0..steps)
                .map(|i| normal(ldim, 0.5, 1000 * k as u64 + i as u64))
                .collect(),
        })
        .collect()
}

fn check(what: &str, flow: &FlowLm, threads: usize, decode_steps: [usize; 3]) {
    let mut fast = FlowLmFast::new(flow).unwrap();
    fast.set_prefill_threads(threads);
    let plans = plans(&fast, decode_steps);
    let alone: Vec<Run> = plans.iter().map(|p| solo(&fast, p)).collect();
    for piece in [16, 1000] {
        let together = batched(&fast, &plans, piece);
        for (k, (a, b)) in alone.iter().zip(&together).enumerate() {
            assert_eq!(a.1.len(), b.1.len(), "{what}: stream {k} step count");
            for (i, (x, y)) in a.0.iter().zip(&b.0).enumerate() {
                let same = x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits());
                let err = x
                    .iter()
                    .zip(y)
                    .map(|(p, q)| (p - q).abs())
                    .fold(0f32, f32::max);
                assert!(
                    same,
                    "{what} (pieces of {piece}): stream {k} step {i} latent differs by {err:e}"
                );
            }
            assert_eq!(
                a.1, b.1,
                "{what} (pieces of {piece}): stream {k} EOS logits"
            );
        }
    }
}

#[test]
fn batched_streams_equal_solo_runs_on_every_head() {
    let mut ct = Config::from_yaml_file(&common::fixture("tiny/config.yaml")).unwrap();
    check("tiny (LSD)", &common::random_flow_lm(&ct, 1), 1, [1, 1, 1]);
    check(
        "tiny (LSD), 2 threads, decode steps 1/3/2",
        &common::random_flow_lm(&ct, 2),
        2,
        [1, 3, 2],
    );
    ct.flow_lm.flow.kind = FlowType::FlowMatching;
    check(
        "tiny (flow matching)",
        &common::random_flow_lm(&ct, 3),
        1,
        [2, 2, 1],
    );
    let c7 = Config::builtin("english_7m_2026-10").unwrap();
    check(
        "english_7m (drifting, GQA)",
        &common::random_flow_lm(&c7, 4),
        2,
        [1, 1, 1],
    );
    let c2 = Config::builtin("english_2m_2026-10").unwrap();
    check(
        "english_2m (pointwise)",
        &common::random_flow_lm(&c2, 5),
        1,
        [1, 1, 1],
    );
}
