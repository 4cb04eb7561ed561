//! Defaults that depend on the language (reference: `default_parameters.py`).

/// The reference's default text for a language (matched by substring, like the reference).
pub fn default_text(language: Option<&str>) -> &'static str {
    const TEXTS: &[(&str, &str)] = &[
        ("english", "Hello world. I am Kyutai's Pocket TTS. I'm fast enough to run on small CPUs. I hope you'll like me."),
        ("french", "Bonjour le monde. Je suis le TTS de poche de Kyutai. Je suis assez rapide pour fonctionner sur de petits CPU. J'espère que vous m'aimerez."),
        ("german", "Hallo Welt. Ich bin Pocket TTS von Kyutai. Ich bin schnell genug, um auch auf kleinen CPUs zu laufen. Ich hoffe, ich gefalle dir."),
        ("portuguese", "Olá mundo. Eu sou o Pocket TTS da Kyutai. Sou rápido o suficiente para rodar em CPUs pequenas. Espero que você goste de mim."),
        ("italian", "Ciao mondo. Sono il Pocket TTS di Kyutai. Sono abbastanza veloce da funzionare su piccole CPU. Spero che ti piacerò."),
        ("dutch", "Hallo wereld. Ik ben Pocket TTS van Kyutai. Ik ben snel genoeg om op kleine CPU's te draaien. Ik hoop dat je me leuk vindt."),
        ("spanish", "Hola mundo. Soy el Pocket TTS de Kyutai. Soy lo suficientemente rápido para funcionar en pequeñas CPU. Espero que te guste."),
    ];
    if let Some(lang) = language {
        for (key, text) in TEXTS {
            if lang.contains(key) {
                return text;
            }
        }
    }
    TEXTS[0].1
}

/// The audio behind the fallback voice `alba`: any model can clone it.
pub const DEFAULT_VOICE_FOR_CUSTOM_MODEL: &str = "hf://kyutai/tts-voices/alba-mackenna/casual.wav";

/// The reference's default voice: the language's predefined voice, or alba's audio
/// file for a custom config.
pub fn default_voice(language: Option<&str>, custom_config: bool) -> &'static str {
    if custom_config {
        return DEFAULT_VOICE_FOR_CUSTOM_MODEL;
    }
    const VOICES: &[(&str, &str)] = &[
        ("italian", "giovanni"),
        ("spanish", "lola"),
        ("german", "juergen"),
        ("portuguese", "rafael"),
        ("french", "estelle"),
        ("dutch", "daan"),
    ];
    if let Some(lang) = language {
        for (key, voice) in VOICES {
            if lang.contains(key) {
                return voice;
            }
        }
    }
    "alba"
}
