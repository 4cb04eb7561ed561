//! The SEANet encoder and decoder stacks of Mimi as a flat program of ops, mirroring
//! `modules/seanet.py` (`SEANetEncoder`, `SEANetDecoder`, `SEANetResnetBlock`) of
//! `pocket-tts` 4.0.1.
//!
//! [`SeanetF::from_view`] compiles the stack's layer list into convs, transposed convs
//! and residual blocks, each ELU folded into the copy that feeds the next conv's input
//! buffer; [`SeanetStateF`] holds every op's conv history and output buffer, so a
//! streaming run allocates nothing.

use super::conv::{ConvF, ConvTrF};
use pocket_tts_simd::gemm::Groups;
use pocket_tts_simd::HalfKind;

use super::par::{copy_elu, elu_inplace, Par};
use crate::modules::weights_view::{SeanetLayerView, SeanetView};
use crate::{Error, Result};

#[derive(Debug, Clone)]
enum Op {
    /// A conv, its input ELU'd first when `elu_in`.
    Conv { conv: ConvF, elu_in: bool },
    /// A transposed conv, its input ELU'd first when `elu_in`.
    ConvTr { ct: ConvTrF, elu_in: bool },
    /// `x + conv_n(elu(… conv_1(elu(x))))`.
    Res { convs: Vec<ConvF> },
    /// A standalone ELU (not followed by a conv).
    Elu,
}

/// A SEANet stack compiled for the fast path.
#[derive(Debug, Clone)]
pub(super) struct SeanetF {
    ops: Vec<Op>,
    pub(super) cin: usize,
    pub(super) cout: usize,
}

impl SeanetF {
    /// Stores every conv's and transposed conv's weights as 16-bit `kind`.
    ///
    /// # Errors
    /// [`crate::Error::WeightOutOfRange`] for a weight `kind` cannot hold.
    pub(super) fn store_half(&mut self, kind: HalfKind) -> Result<()> {
        for op in &mut self.ops {
            match op {
                Op::Conv { conv, .. } => conv.store_half(kind)?,
                Op::ConvTr { ct, .. } => ct.store_half(kind)?,
                Op::Res { convs } => {
                    for c in convs {
                        c.store_half(kind)?;
                    }
                }
                Op::Elu => {}
            }
        }
        Ok(())
    }

    pub(super) fn from_view(stack: &SeanetView<'_>, prefix: &str) -> Result<Self> {
        let mut ops = Vec::new();
        let mut pending_elu = false;
        for (i, layer) in stack.layers.iter().enumerate() {
            let what = format!("{prefix}.model.{i}");
            match layer {
                SeanetLayerView::Elu => {
                    if pending_elu {
                        ops.push(Op::Elu);
                    }
                    pending_elu = true;
                }
                SeanetLayerView::Conv(c) => {
                    ops.push(Op::Conv {
                        conv: ConvF::from_view(c, &what)?,
                        elu_in: pending_elu,
                    });
                    pending_elu = false;
                }
                SeanetLayerView::ConvTr(c) => {
                    ops.push(Op::ConvTr {
                        ct: ConvTrF::from_view(c, &what)?,
                        elu_in: pending_elu,
                    });
                    pending_elu = false;
                }
                SeanetLayerView::Res(block) => {
                    if pending_elu {
                        ops.push(Op::Elu);
                        pending_elu = false;
                    }
                    let convs = block
                        .iter()
                        .enumerate()
                        .map(|(j, c)| ConvF::from_view(c, &format!("{what}.block.{}", 2 * j + 1)))
                        .collect::<Result<Vec<_>>>()?;
                    ops.push(Op::Res { convs });
                }
            }
        }
        if pending_elu {
            ops.push(Op::Elu);
        }
        let mut chans: Option<(usize, usize)> = None;
        let mut cur = 0;
        for op in &ops {
            let (i, o) = match op {
                Op::Conv { conv, .. } => (conv.cin, conv.cout),
                Op::ConvTr { ct, .. } => (ct.cin, ct.cout),
                Op::Res { convs } => {
                    let d = convs.first().map_or(cur, |c| c.cin);
                    (d, d)
                }
                Op::Elu => (cur, cur),
            };
            if chans.is_none() {
                chans = Some((i, i));
            } else if i != cur {
                return Err(Error::InvalidData(format!(
                    "Mimi fast path: {prefix} channel mismatch ({cur} → {i})"
                )));
            }
            cur = o;
        }
        let (cin, _) = chans
            .ok_or_else(|| Error::InvalidData(format!("Mimi fast path: {prefix} has no layers")))?;
        Ok(Self {
            ops,
            cin,
            cout: cur,
        })
    }

    /// Output steps for `t_in` input steps.
    pub(super) fn out_len(&self, mut t: usize) -> Result<usize> {
        for op in &self.ops {
            t = match op {
                Op::Conv { conv, .. } => conv.out_len(t)?,
                Op::ConvTr { ct, .. } => t * ct.stride,
                Op::Res { convs } => {
                    for c in convs {
                        if c.out_len(t)? != t {
                            return Err(Error::Unsupported(
                                "Mimi fast path: strided conv in a residual block".into(),
                            ));
                        }
                    }
                    t
                }
                Op::Elu => t,
            };
        }
        Ok(t)
    }

    /// A fresh streaming state for one stream: every conv's history (zeros, first frame
    /// pending) and every transposed conv's overlap.
    pub(super) fn new_state(&self) -> SeanetStateF {
        let ops = self
            .ops
            .iter()
            .map(|op| match op {
                Op::Conv { conv, .. } => OpState::Conv {
                    hist: vec![0.0; conv.hist * conv.cin],
                    first: true,
                },
                Op::ConvTr { ct, .. } => OpState::ConvTr {
                    partial: vec![0.0; ct.overlap() * ct.cout],
                },
                Op::Res { convs } => OpState::Res {
                    hists: convs.iter().map(|c| vec![0.0; c.hist * c.cin]).collect(),
                    firsts: vec![true; convs.len()],
                },
                Op::Elu => OpState::None,
            })
            .collect();
        SeanetStateF { ops }
    }

    /// Per-stream sizes of the scratch buffers for frames of `t_in` steps.
    fn sizes(&self, t_in: usize) -> Result<ScratchSizes> {
        let mut t = t_in;
        let mut sz = ScratchSizes {
            act: t_in * self.cin,
            ..ScratchSizes::default()
        };
        for op in &self.ops {
            match op {
                Op::Conv { conv, .. } => {
                    sz.inb = sz.inb.max((conv.hist + t) * conv.cin);
                    t = conv.out_len(t)?;
                    sz.act = sz.act.max(t * conv.cout);
                }
                Op::ConvTr { ct, .. } => {
                    sz.z = sz.z.max(t * ct.kernel * ct.cout);
                    t *= ct.stride;
                    sz.act = sz.act.max((t + ct.overlap()) * ct.cout);
                }
                Op::Res { convs } => {
                    for c in convs {
                        sz.inb = sz.inb.max((c.hist + t) * c.cin);
                        sz.hid = sz.hid.max(t * c.cout);
                    }
                }
                Op::Elu => {}
            }
        }
        Ok(sz)
    }

    /// Scratch for up to `streams` streams of frames of up to `t_in` steps.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `t_in` is not a multiple of the strides.
    pub(super) fn new_scratch(&self, streams: usize, t_in: usize) -> Result<SeanetScratchF> {
        let mut sc = SeanetScratchF::default();
        self.fit_scratch(&mut sc, streams, t_in)?;
        Ok(sc)
    }

    /// Grows `sc` to hold `streams` streams of `t_in` steps (nothing when it does).
    ///
    /// # Errors
    /// As [`Self::new_scratch`].
    pub(super) fn fit_scratch(
        &self,
        sc: &mut SeanetScratchF,
        streams: usize,
        t_in: usize,
    ) -> Result<()> {
        if streams <= sc.streams && t_in <= sc.t_in {
            return Ok(());
        }
        let streams = streams.max(sc.streams);
        let t_in = t_in.max(sc.t_in);
        let sz = self.sizes(t_in)?;
        let grow = |v: &mut Vec<f32>, n: usize| {
            if v.len() < n {
                v.resize(n, 0.0);
            }
        };
        grow(&mut sc.act[0], streams * sz.act);
        grow(&mut sc.act[1], streams * sz.act);
        grow(&mut sc.inb, streams * sz.inb);
        grow(&mut sc.hid, streams * sz.hid);
        grow(&mut sc.z, streams * sz.z);
        sc.streams = streams;
        sc.t_in = t_in;
        Ok(())
    }

    /// Runs `t_in` steps of `input` (`[t_in, cin]`) for one stream and returns the output
    /// `[t_out, cout]` (a slice of the scratch).
    pub(super) fn run<'s>(
        &self,
        par: &Par,
        input: &[f32],
        t_in: usize,
        state: &mut SeanetStateF,
        sc: &'s mut SeanetScratchF,
    ) -> Result<&'s [f32]> {
        self.run_many(par, input, t_in, &mut [state], sc)?;
        Ok(sc.output(0))
    }

    /// Runs a frame of `t_in` steps for each of `states.len()` streams, stream `s`'s input
    /// `[t_in, cin]` at `input[s·t_in·cin ..]`, every conv one GEMM over the rows of all the
    /// streams (each stream's history its own); the outputs are then
    /// [`SeanetScratchF::output`]. Each stream's output and state are those of the
    /// stream run alone, bit for bit.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the scratch is too small (see
    /// [`Self::fit_scratch`]) or `t_in` does not fit the strides; [`Error::Unsupported`]
    /// for a stack that starts with a residual block or an ELU.
    pub(super) fn run_many(
        &self,
        par: &Par,
        input: &[f32],
        t_in: usize,
        states: &mut [&mut SeanetStateF],
        sc: &mut SeanetScratchF,
    ) -> Result<()> {
        let n = states.len();
        if n > sc.streams || t_in > sc.t_in || input.len() < n * t_in * self.cin {
            return Err(Error::invalid_argument(
                "Mimi fast path: SEANet scratch too small for the frame",
            ));
        }
        let mut t = t_in;
        let mut ch = self.cin;
        let mut cur = 0;
        let mut stride = t * ch;
        sc.act[0][..n * stride].copy_from_slice(&input[..n * stride]);
        let SeanetScratchF {
            act, inb, hid, z, ..
        } = sc;
        for (i, op) in self.ops.iter().enumerate() {
            let (lo, hi) = act.split_at_mut(1);
            let (x, y) = if cur == 0 {
                (&mut lo[0], &mut hi[0])
            } else {
                (&mut hi[0], &mut lo[0])
            };
            match op {
                Op::Conv { conv, elu_in } => {
                    let ib = (conv.hist + t) * conv.cin;
                    let t_out = conv.out_len(t)?;
                    for (sidx, st) in states.iter_mut().enumerate() {
                        let OpState::Conv { hist, first } = &mut st.ops[i] else {
                            return Err(mismatch());
                        };
                        let slot = &mut inb[sidx * ib..(sidx + 1) * ib];
                        let src = &x[sidx * stride..][..t * ch];
                        gather(par, conv, slot, hist, *first, src, *elu_in);
                    }
                    let groups = Groups {
                        count: n,
                        b_step: ib,
                        c_step: t_out * conv.cout,
                    };
                    conv.product(par, inb, groups, t, y, false);
                    for (sidx, st) in states.iter_mut().enumerate() {
                        if let OpState::Conv { hist, first } = &mut st.ops[i] {
                            roll(conv, &inb[sidx * ib..(sidx + 1) * ib], t, hist);
                            *first = false;
                        }
                    }
                    t = t_out;
                    ch = conv.cout;
                    stride = t * ch;
                    cur = 1 - cur;
                }
                Op::ConvTr { ct, elu_in } => {
                    if *elu_in {
                        for sidx in 0..n {
                            elu_inplace(par, &mut x[sidx * stride..][..t * ch]);
                        }
                    }
                    let zs = t * ct.kernel * ct.cout;
                    let groups = Groups {
                        count: n,
                        b_step: stride,
                        c_step: zs,
                    };
                    ct.product(par, x, groups, t, z);
                    let es = (t * ct.stride + ct.overlap()) * ct.cout;
                    for (sidx, st) in states.iter_mut().enumerate() {
                        let OpState::ConvTr { partial } = &mut st.ops[i] else {
                            return Err(mismatch());
                        };
                        let ext = &mut y[sidx * es..(sidx + 1) * es];
                        ct.overlap_add(&z[sidx * zs..(sidx + 1) * zs], t, partial, ext);
                    }
                    t *= ct.stride;
                    ch = ct.cout;
                    stride = es;
                    cur = 1 - cur;
                }
                Op::Res { convs } => {
                    if i == 0 {
                        return Err(Error::Unsupported(
                            "Mimi fast path: SEANet starting with a residual block".into(),
                        ));
                    }
                    let last = convs.len().saturating_sub(1);
                    for (j, conv) in convs.iter().enumerate() {
                        let ib = (conv.hist + t) * conv.cin;
                        let hs = t * conv.cin;
                        for (sidx, st) in states.iter_mut().enumerate() {
                            let OpState::Res { hists, firsts } = &mut st.ops[i] else {
                                return Err(mismatch());
                            };
                            let slot = &mut inb[sidx * ib..(sidx + 1) * ib];
                            let src: &[f32] = if j == 0 {
                                &x[sidx * stride..][..t * ch]
                            } else {
                                &hid[sidx * hs..(sidx + 1) * hs]
                            };
                            gather(par, conv, slot, &hists[j], firsts[j], src, true);
                        }
                        if j < last {
                            let groups = Groups {
                                count: n,
                                b_step: ib,
                                c_step: t * conv.cout,
                            };
                            conv.product(par, inb, groups, t, hid, false);
                        } else {
                            // The skip connection: accumulate into x.
                            let groups = Groups {
                                count: n,
                                b_step: ib,
                                c_step: stride,
                            };
                            conv.product(par, inb, groups, t, x, true);
                        }
                        for (sidx, st) in states.iter_mut().enumerate() {
                            if let OpState::Res { hists, firsts } = &mut st.ops[i] {
                                roll(conv, &inb[sidx * ib..(sidx + 1) * ib], t, &mut hists[j]);
                                firsts[j] = false;
                            }
                        }
                    }
                }
                Op::Elu => {
                    if i == 0 {
                        return Err(Error::Unsupported(
                            "Mimi fast path: SEANet starting with an ELU".into(),
                        ));
                    }
                    for sidx in 0..n {
                        elu_inplace(par, &mut x[sidx * stride..][..t * ch]);
                    }
                }
            }
        }
        sc.cur = cur;
        sc.stride = stride;
        sc.len = t * ch;
        Ok(())
    }
}

/// Writes one stream's conv input buffer: the input rows (ELU'd when `elu`) after the
/// history rows, which are the stream's history, or on its first frame with replicate
/// padding copies of its first input row.
fn gather(
    par: &Par,
    conv: &ConvF,
    slot: &mut [f32],
    hist: &[f32],
    first: bool,
    src: &[f32],
    elu: bool,
) {
    let h = conv.hist * conv.cin;
    copy_elu(par, src, &mut slot[h..h + src.len()], elu);
    slot[..h].copy_from_slice(hist);
    if first {
        conv.pad_first(slot);
    }
}

/// The stream's new history: the last `hist` rows of its input buffer of `t` input rows.
fn roll(conv: &ConvF, slot: &[f32], t: usize, hist: &mut [f32]) {
    let cin = conv.cin;
    hist.copy_from_slice(&slot[t * cin..(t + conv.hist) * cin]);
}

fn mismatch() -> Error {
    Error::invalid_argument("Mimi fast path: SEANet state does not match its layers")
}

/// Per-stream sizes (floats) of the [`SeanetScratchF`] buffers.
#[derive(Debug, Default, Clone, Copy)]
struct ScratchSizes {
    act: usize,
    inb: usize,
    hid: usize,
    z: usize,
}

/// The streaming state of one stream of a [`SeanetF`]: per op, what is carried from frame
/// to frame.
#[derive(Debug, Clone)]
enum OpState {
    Conv {
        /// The last `hist` input rows, `[hist, cin]`.
        hist: Vec<f32>,
        /// No frame ran yet (replicate padding copies the first row).
        first: bool,
    },
    ConvTr {
        /// The overlap carried to the next frame, `[K − S, cout]`.
        partial: Vec<f32>,
    },
    Res {
        hists: Vec<Vec<f32>>,
        firsts: Vec<bool>,
    },
    None,
}

/// Streaming state of one stream of a [`SeanetF`] (histories and overlaps only; the
/// buffers of a frame are in a [`SeanetScratchF`]).
#[derive(Debug, Clone)]
pub(super) struct SeanetStateF {
    ops: Vec<OpState>,
}

impl SeanetStateF {
    /// Back to a fresh state (zero history, `first` set), without allocating.
    pub(super) fn reset(&mut self) {
        for op in &mut self.ops {
            match op {
                OpState::Conv { hist, first } => {
                    hist.fill(0.0);
                    *first = true;
                }
                OpState::ConvTr { partial } => partial.fill(0.0),
                OpState::Res { hists, firsts } => {
                    hists.iter_mut().for_each(|b| b.fill(0.0));
                    firsts.iter_mut().for_each(|f| *f = true);
                }
                OpState::None => {}
            }
        }
    }
}

/// The buffers of a [`SeanetF`] frame for up to `streams` streams (shared by the streams
/// a thread decodes, not kept per stream): two activation buffers (ping-pong), the
/// stacked conv input buffers, a residual block's hidden activation, a transposed conv's
/// product.
#[derive(Debug, Clone, Default)]
pub(super) struct SeanetScratchF {
    streams: usize,
    t_in: usize,
    act: [Vec<f32>; 2],
    inb: Vec<f32>,
    hid: Vec<f32>,
    z: Vec<f32>,
    /// After a run: the buffer holding the output, its per-stream stride and length.
    cur: usize,
    stride: usize,
    len: usize,
}

impl SeanetScratchF {
    /// Stream `s`'s output of the last [`SeanetF::run_many`]: `[t_out, cout]`.
    pub(super) fn output(&self, s: usize) -> &[f32] {
        &self.act[self.cur][s * self.stride..][..self.len]
    }
}
