//! Errors as JavaScript `Error`s with a one-line message.

use wasm_bindgen::JsError;

/// A JavaScript `Error` whose message is `e`'s text on one line (line breaks become
/// spaces, so that a page can show it as one line).
pub(crate) fn js_error(e: impl std::fmt::Display) -> JsError {
    JsError::new(&one_line(&e.to_string()))
}

/// `text` with every run of line breaks (and the spaces around them) made one space.
pub(crate) fn one_line(text: &str) -> String {
    text.split(['\n', '\r'])
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn line_breaks_become_one_space() {
        assert_eq!(one_line("a\n  b\r\n\nc "), "a b c");
        assert_eq!(one_line("one line"), "one line");
    }
}
