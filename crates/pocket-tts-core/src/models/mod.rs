//! Whole models, one file per reference model (`pocket_tts/models/*.py`); the pipeline
//! that puts them together (`TTSModel`) is [`crate::tts_model`]. The runtimes
//! ([`crate::internals::fast`]) read the loaded weights through [`crate::internals::modules::weights_view`].

pub mod flow_lm;
pub mod mimi;
pub mod model_state;
