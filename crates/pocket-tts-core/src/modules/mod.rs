//! Building blocks, one file per reference module (`pocket_tts/modules/*.py`).

pub mod attention;
pub mod conv;
pub mod layers;
pub mod mlp;
pub mod resample;
pub mod rope;
pub mod seanet;
pub mod text_conditioner;
pub mod transformer;
