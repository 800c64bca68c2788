//! Kernel and symbol names as a kernel engineer reads them: C++ names
//! demangled (`_Z6ln_optPfS_i` → `ln_opt(float*, float*, int)`) in human
//! output; JSON keeps the mangled name and adds the demangled one.

/// The demangled form of a mangled C++ (Itanium ABI) name; `None` for a
/// plain name or one that does not demangle.
pub fn demangled(name: &str) -> Option<String> {
    if !name.starts_with("_Z") {
        return None;
    }
    let sym = cpp_demangle::Symbol::new(name).ok()?;
    let text = sym
        .demangle(&cpp_demangle::DemangleOptions::default())
        .ok()?;
    (text != name).then_some(text)
}

/// A mangled name for human output: a function-local static (`_ZZ…`, a
/// CUDA `__shared__` array declared in a kernel, demangled `void
/// k<128>(float const*, float*)::tile`) by its own name (`tile`), as the
/// source names it; any other mangled name demangled whole.
pub fn short(mangled: &str) -> Option<String> {
    let d = demangled(mangled)?;
    Some(match (mangled.starts_with("_ZZ"), d.rfind("::")) {
        (true, Some(at)) => d[at + 2..].to_owned(),
        _ => d,
    })
}

/// A name for human output: the demangled name, else the name itself.
pub fn readable(name: &str) -> String {
    demangled(name).unwrap_or_else(|| name.to_owned())
}

/// Replaces every mangled C++ name in `text` (a word starting `_Z`) by its
/// demangled form; the rest of the text is left as it is.
pub fn demangle_words(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("_Z") {
        let starts_word = at == 0
            || !rest[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
            .unwrap_or(tail.len());
        let word = &tail[..end];
        match short(word).filter(|_| starts_word) {
            Some(d) => out.push_str(&d),
            None => out.push_str(word),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mangled_names_demangle_and_plain_ones_stay() {
        assert_eq!(
            demangled("_Z6ln_optPfS_i").as_deref(),
            Some("ln_opt(float*, float*, int)")
        );
        assert_eq!(demangled("softmax_kernel"), None);
        assert_eq!(readable("triton_red_fused"), "triton_red_fused");
        // A shared array declared in a function: by its own name.
        assert_eq!(
            short("_ZZ17forward_diff_smemILi128EEvPKfPfE4tile"),
            Some("tile".to_string())
        );
        assert_eq!(
            demangle_words("race on _ZZ6ln_optE6part_s[1] (x_Zy kept)"),
            "race on part_s[1] (x_Zy kept)"
        );
    }
}
