//! The SEANet encoder and decoder stacks of Mimi as a flat program of ops, mirroring
//! `modules/seanet.py` (`SEANetEncoder`, `SEANetDecoder`, `SEANetResnetBlock`) of
//! `pocket-tts` 4.0.1.
//!
//! [`SeanetF::from_view`] compiles the stack's layer list into convs, transposed convs
//! and residual blocks, each ELU folded into the copy that feeds the next conv's input
//! buffer; [`SeanetStateF`] holds every op's conv history and output buffer, so a
//! streaming run allocates nothing.

use super::conv::{ConvF, ConvTrF};
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

    /// Buffers for running `t_in` steps at a time.
    pub(super) fn new_state(&self, t_in: usize) -> Result<SeanetStateF> {
        let mut t = t_in;
        let mut states = Vec::with_capacity(self.ops.len());
        let mut cur_chans = self.cin;
        for op in &self.ops {
            let st = match op {
                Op::Conv { conv, .. } => {
                    let t_out = conv.out_len(t)?;
                    let s = OpState::Conv {
                        inbuf: vec![0.0; (conv.hist + t) * conv.cin],
                        first: true,
                        out: vec![0.0; t_out * conv.cout],
                    };
                    t = t_out;
                    cur_chans = conv.cout;
                    s
                }
                Op::ConvTr { ct, elu_in } => {
                    let s = OpState::ConvTr {
                        tmp: if *elu_in {
                            vec![0.0; t * ct.cin]
                        } else {
                            Vec::new()
                        },
                        z: vec![0.0; t * ct.kernel * ct.cout],
                        partial: vec![0.0; ct.overlap() * ct.cout],
                        ext: vec![0.0; (t * ct.stride + ct.overlap()) * ct.cout],
                    };
                    t *= ct.stride;
                    cur_chans = ct.cout;
                    s
                }
                Op::Res { convs } => {
                    let n = convs.len();
                    OpState::Res {
                        inbufs: convs
                            .iter()
                            .map(|c| vec![0.0; (c.hist + t) * c.cin])
                            .collect(),
                        firsts: vec![true; n],
                        hidden: convs
                            .iter()
                            .take(n.saturating_sub(1))
                            .map(|c| vec![0.0; t * c.cout])
                            .collect(),
                    }
                }
                Op::Elu => OpState::None,
            };
            states.push(st);
        }
        let _ = cur_chans;
        Ok(SeanetStateF {
            ops: states,
            owner: None,
            t: 0,
            chans: 0,
        })
    }

    /// Runs `t_in` steps of `input` (`[t_in, cin]`) and returns the output `[t_out, cout]`
    /// (a slice of a state buffer).
    pub(super) fn run<'s>(
        &self,
        par: &Par,
        input: &'s [f32],
        t_in: usize,
        state: &'s mut SeanetStateF,
    ) -> Result<&'s [f32]> {
        self.begin(t_in, state);
        for i in 0..self.ops.len() {
            self.run_op(par, i, input, state)?;
        }
        Ok(self.output(input, state))
    }

    /// Ops of the decoder.
    pub(super) fn num_ops(&self) -> usize {
        self.ops.len()
    }

    /// Starts a frame of `t_in` input steps: [`Self::run_op`] for every op in order, then
    /// [`Self::output`], is [`Self::run`] (split so that many streams can run op by op,
    /// each op's weights read once for all of them).
    pub(super) fn begin(&self, t_in: usize, state: &mut SeanetStateF) {
        state.owner = None;
        state.t = t_in;
        state.chans = self.cin;
    }

    /// The frame's output once every op ran: `[t_out, cout]`.
    pub(super) fn output<'s>(&self, input: &'s [f32], state: &'s SeanetStateF) -> &'s [f32] {
        let len = state.t * state.chans;
        match state.owner {
            Some(o) => &state.ops[o].out()[..len],
            None => &input[..len],
        }
    }

    /// Runs op `i` of the frame [`Self::begin`] started (`input`: the frame's input).
    pub(super) fn run_op(
        &self,
        par: &Par,
        i: usize,
        input: &[f32],
        state: &mut SeanetStateF,
    ) -> Result<()> {
        let op = &self.ops[i];
        // Index of the op whose output buffer holds the current activation (None: `input`).
        let mut owner = state.owner;
        let mut t = state.t;
        let mut chans = state.chans;
        {
            let (before, rest) = state.ops.split_at_mut(i);
            let me = &mut rest[0];
            let cur_len = t * chans;
            match (op, me) {
                (Op::Conv { conv, elu_in }, OpState::Conv { inbuf, first, out }) => {
                    let cur = current(before, owner, input, cur_len);
                    let dst = &mut inbuf[conv.hist * conv.cin..(conv.hist + t) * conv.cin];
                    copy_elu(par, cur, dst, *elu_in);
                    conv.forward(par, inbuf, first, t, out, false);
                    t /= conv.stride;
                    chans = conv.cout;
                    owner = Some(i);
                }
                (
                    Op::ConvTr { ct, elu_in },
                    OpState::ConvTr {
                        tmp,
                        z,
                        partial,
                        ext,
                    },
                ) => {
                    let cur = current(before, owner, input, cur_len);
                    let x: &[f32] = if *elu_in {
                        let tmp = &mut tmp[..cur_len];
                        copy_elu(par, cur, tmp, true);
                        tmp
                    } else {
                        cur
                    };
                    ct.forward(par, x, t, z, partial, ext);
                    t *= ct.stride;
                    chans = ct.cout;
                    owner = Some(i);
                }
                (
                    Op::Res { convs },
                    OpState::Res {
                        inbufs,
                        firsts,
                        hidden,
                    },
                ) => {
                    let n = convs.len();
                    let x: &mut [f32] = match owner {
                        Some(o) => before[o].out_mut(),
                        None => {
                            return Err(Error::Unsupported(
                                "Mimi fast path: SEANet starting with a residual block".into(),
                            ))
                        }
                    };
                    let x = &mut x[..cur_len];
                    for j in 0..n {
                        let conv = &convs[j];
                        let (src, dst_hidden) = {
                            let split = j.min(hidden.len());
                            let (h_before, h_rest) = hidden.split_at_mut(split);
                            let src: &[f32] = if j == 0 {
                                &*x
                            } else {
                                &h_before[j - 1][..t * conv.cin]
                            };
                            (src, h_rest.first_mut())
                        };
                        let inbuf = &mut inbufs[j];
                        let dst = &mut inbuf[conv.hist * conv.cin..(conv.hist + t) * conv.cin];
                        copy_elu(par, src, dst, true);
                        if j + 1 < n {
                            let out = dst_hidden.expect("hidden buffer");
                            conv.forward(par, inbuf, &mut firsts[j], t, out, false);
                        } else {
                            // The skip connection: accumulate into x.
                            conv.forward(par, inbuf, &mut firsts[j], t, x, true);
                        }
                    }
                }
                (Op::Elu, OpState::None) => match owner {
                    Some(o) => elu_inplace(par, &mut before[o].out_mut()[..cur_len]),
                    None => {
                        return Err(Error::Unsupported(
                            "Mimi fast path: SEANet starting with an ELU".into(),
                        ))
                    }
                },
                _ => {
                    return Err(Error::invalid_argument(
                        "Mimi fast path: SEANet state does not match its layers",
                    ))
                }
            }
        }
        state.owner = owner;
        state.t = t;
        state.chans = chans;
        Ok(())
    }
}

fn current<'a>(
    before: &'a [OpState],
    owner: Option<usize>,
    input: &'a [f32],
    len: usize,
) -> &'a [f32] {
    match owner {
        Some(o) => &before[o].out()[..len],
        None => &input[..len],
    }
}

/// Buffers and streaming state of one [`Op`].
#[derive(Debug, Clone)]
enum OpState {
    Conv {
        /// `hist` history rows, then the current input rows.
        inbuf: Vec<f32>,
        first: bool,
        out: Vec<f32>,
    },
    ConvTr {
        tmp: Vec<f32>,
        z: Vec<f32>,
        partial: Vec<f32>,
        /// Output rows followed by the overlap rows.
        ext: Vec<f32>,
    },
    Res {
        inbufs: Vec<Vec<f32>>,
        firsts: Vec<bool>,
        hidden: Vec<Vec<f32>>,
    },
    None,
}

impl OpState {
    fn out(&self) -> &[f32] {
        match self {
            OpState::Conv { out, .. } => out,
            OpState::ConvTr { ext, .. } => ext,
            _ => unreachable!("op without an output buffer"),
        }
    }

    fn out_mut(&mut self) -> &mut [f32] {
        match self {
            OpState::Conv { out, .. } => out,
            OpState::ConvTr { ext, .. } => ext,
            _ => unreachable!("op without an output buffer"),
        }
    }
}

/// Streaming state of a [`SeanetF`].
#[derive(Debug, Clone)]
pub(super) struct SeanetStateF {
    ops: Vec<OpState>,
    /// The frame in progress (see [`SeanetF::begin`]): the op whose output holds the
    /// current activation (`None`: the input), its steps and channels.
    owner: Option<usize>,
    t: usize,
    chans: usize,
}

impl SeanetStateF {
    /// Back to a fresh state (zero history, `first` set), without allocating.
    pub(super) fn reset(&mut self) {
        for op in &mut self.ops {
            match op {
                OpState::Conv { inbuf, first, .. } => {
                    inbuf.fill(0.0);
                    *first = true;
                }
                OpState::ConvTr { partial, .. } => partial.fill(0.0),
                OpState::Res { inbufs, firsts, .. } => {
                    inbufs.iter_mut().for_each(|b| b.fill(0.0));
                    firsts.iter_mut().for_each(|f| *f = true);
                }
                OpState::None => {}
            }
        }
    }
}
