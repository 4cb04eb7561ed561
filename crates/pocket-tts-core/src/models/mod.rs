//! Whole models, one file per reference model (`pocket_tts/models/*.py`); the pipeline
//! that puts them together (`TTSModel`) is [`crate::tts_model`]. [`weights_view`] is what
//! the runtimes ([`crate::fast`]) read the loaded weights through.

pub mod flow_lm;
pub mod mimi;
pub mod model_state;
pub mod weights_view;
