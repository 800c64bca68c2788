//! Decoding of PTX numeric literals.
//!
//! Shared by the parser (which reports malformed literals as syntax errors)
//! and the typed AST (which returns decoded values), so the two never
//! disagree about what a literal means.

/// A decoded integer literal (without sign: `-` is a separate token).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IntLit {
    pub(crate) value: u64,
    /// Had a `U` suffix.
    pub(crate) unsigned: bool,
}

/// A decoded floating-point literal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum FloatLit {
    /// `0fXXXXXXXX`: exact IEEE single bits.
    F32Bits(u32),
    /// `0dXXXXXXXXXXXXXXXX`: exact IEEE double bits.
    F64Bits(u64),
    /// `1.5`, `1e-3`: a decimal literal (PTX treats it as double precision).
    Decimal(f64),
}

/// Decodes an integer literal: decimal, `0x` hex, `0b` binary, octal with a
/// leading zero, optional `U` suffix. PTX integer literals are 64 bits wide;
/// anything larger is an error.
pub(crate) fn parse_int(text: &str) -> Result<IntLit, &'static str> {
    let (body, unsigned) = match text.strip_suffix(['U', 'u']) {
        Some(b) => (b, true),
        None => (text, false),
    };
    let (digits, radix) =
        if let Some(d) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
            (d, 16)
        } else if let Some(d) = body.strip_prefix("0b").or_else(|| body.strip_prefix("0B")) {
            (d, 2)
        } else if body.len() > 1 && body.starts_with('0') {
            (&body[1..], 8)
        } else {
            (body, 10)
        };
    if digits.is_empty() {
        return Err("integer literal has no digits");
    }
    let mut value: u64 = 0;
    for c in digits.chars() {
        let d = c.to_digit(radix).ok_or(match radix {
            16 => "invalid digit in hexadecimal literal",
            8 => "invalid digit in octal literal",
            2 => "invalid digit in binary literal",
            _ => "invalid digit in integer literal",
        })?;
        value = value
            .checked_mul(radix as u64)
            .and_then(|v| v.checked_add(d as u64))
            .ok_or("integer literal does not fit in 64 bits")?;
    }
    Ok(IntLit { value, unsigned })
}

/// Decodes a floating-point literal: `0f` + 8 hex digits, `0d` + 16 hex
/// digits (either case of `f`/`d`), or a decimal float.
pub(crate) fn parse_float(text: &str) -> Result<FloatLit, &'static str> {
    let bytes = text.as_bytes();
    if bytes.len() >= 2 && bytes[0] == b'0' && matches!(bytes[1], b'f' | b'F' | b'd' | b'D') {
        let digits = &text[2..];
        let single = matches!(bytes[1], b'f' | b'F');
        let want = if single { 8 } else { 16 };
        if digits.len() != want || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(if single {
                "0f float literal needs exactly 8 hex digits"
            } else {
                "0d float literal needs exactly 16 hex digits"
            });
        }
        let bits = u64::from_str_radix(digits, 16).map_err(|_| "invalid float literal")?;
        return Ok(if single {
            FloatLit::F32Bits(bits as u32)
        } else {
            FloatLit::F64Bits(bits)
        });
    }
    if !text
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return Err("invalid float literal");
    }
    text.parse::<f64>()
        .map(FloatLit::Decimal)
        .map_err(|_| "invalid float literal")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints() {
        let v = |t: &str| parse_int(t).map(|l| l.value);
        assert_eq!(v("0"), Ok(0));
        assert_eq!(v("42"), Ok(42));
        assert_eq!(v("0x1F"), Ok(31));
        assert_eq!(v("017"), Ok(15));
        assert_eq!(v("0b101"), Ok(5));
        assert_eq!(
            parse_int("4U"),
            Ok(IntLit {
                value: 4,
                unsigned: true
            })
        );
        assert_eq!(v("18446744073709551615"), Ok(u64::MAX));
        assert!(v("18446744073709551616").is_err());
        assert!(v("0x").is_err());
        assert!(v("09").is_err());
        assert!(v("12abc").is_err());
        assert!(v("0b102").is_err());
    }

    #[test]
    fn floats() {
        assert_eq!(
            parse_float("0f3F800000"),
            Ok(FloatLit::F32Bits(0x3F80_0000))
        );
        assert_eq!(
            parse_float("0F3F800000"),
            Ok(FloatLit::F32Bits(0x3F80_0000))
        );
        assert_eq!(
            parse_float("0d3FF0000000000000"),
            Ok(FloatLit::F64Bits(0x3FF0_0000_0000_0000))
        );
        assert_eq!(parse_float("1.5"), Ok(FloatLit::Decimal(1.5)));
        assert_eq!(parse_float("1e-3"), Ok(FloatLit::Decimal(1e-3)));
        assert!(parse_float("0f3F80").is_err());
        assert!(parse_float("0fZZZZZZZZ").is_err());
        assert!(parse_float("1.5x").is_err());
    }
}
