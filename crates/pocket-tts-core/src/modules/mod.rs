//! Building blocks, one file per reference module (`pocket_tts/modules/*.py`), and
//! [`weights_view`]: typed read-only views of their loaded weights, what runtimes read.

pub mod attention;
pub mod conv;
pub mod layers;
pub mod linear;
pub mod mlp;
pub mod resample;
pub mod rope;
pub mod seanet;
pub mod text_conditioner;
pub mod transformer;
pub mod weights_view;
