//! Declarations: `.reg` expansion and variable/param conversion.

use ptxeq_ir::{InitValue, ParamDecl, RegInfo, ScalarType, Span, StateSpace, VarDecl, VarScope};
use ptxeq_syntax::ast;

use crate::Diags;

/// Register names declared by one `.reg` statement: `%r<4>` expands to
/// `%r0 .. %r3`, a plain name is itself. `None` when that would exceed
/// `budget` names.
pub(crate) fn expand_reg_names(decl: &ast::RegDecl, budget: usize) -> Option<Vec<String>> {
    let names = decl.names();
    let total: usize = names
        .iter()
        .map(|n| n.range.map_or(1, |c| c as usize))
        .fold(0usize, usize::saturating_add);
    if total > budget {
        return None;
    }
    let mut out = Vec::with_capacity(total);
    for n in names {
        match n.range {
            Some(count) => out.extend((0..count).map(|i| numbered(&n.name, i))),
            None => out.push(n.name),
        }
    }
    Some(out)
}

/// `prefix` followed by `i` in decimal (`%r` + 12 → `%r12`), without the
/// formatting machinery: a big `.reg .b32 %r<5000>` makes thousands.
fn numbered(prefix: &str, i: u32) -> String {
    let mut digits = [0u8; 10];
    let mut n = i;
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let mut out = String::with_capacity(prefix.len() + digits.len() - at);
    out.push_str(prefix);
    for &d in &digits[at..] {
        out.push(char::from(d));
    }
    out
}

/// The [`RegInfo`] template of one `.reg` statement.
pub(crate) fn reg_info(decl: &ast::RegDecl, span: Span, diags: &mut Diags) -> RegInfo {
    let ty = parse_ty(decl.ty(), span, "register", diags);
    RegInfo {
        name: String::new(),
        ty,
        vector: decl.vector_width().and_then(|v| u8::try_from(v).ok()),
    }
}

fn parse_ty(ty: Option<String>, span: Span, what: &str, diags: &mut Diags) -> ScalarType {
    match ty.as_deref().map(|t| (t, ScalarType::parse(t))) {
        Some((_, Some(t))) => t,
        Some((t, None)) => {
            diags.push(format!("unsupported {what} type `.{t}`"), span);
            ScalarType::B8
        }
        None => {
            diags.push(format!("{what} declaration without a type"), span);
            ScalarType::B8
        }
    }
}

fn parse_space(
    space: Option<String>,
    default: StateSpace,
    span: Span,
    diags: &mut Diags,
) -> StateSpace {
    match space {
        None => default,
        Some(s) => StateSpace::parse(&s).unwrap_or_else(|| {
            diags.push(format!("unknown state space `.{s}`"), span);
            default
        }),
    }
}

/// Total size: element size × vector width × all dimensions. An unsized
/// dimension makes the size unknown, unless an initialiser fixes it.
fn size_of(
    ty: ScalarType,
    vector: Option<u8>,
    dims: &[Option<u64>],
    init_len: Option<usize>,
) -> Option<u64> {
    let elem = ty
        .size_bytes()
        .checked_mul(u64::from(vector.unwrap_or(1)))?;
    let mut known: u64 = elem;
    let mut open_dims = 0;
    for d in dims {
        match d {
            Some(n) => known = known.checked_mul(*n)?,
            None => open_dims += 1,
        }
    }
    match (open_dims, init_len) {
        (0, _) => Some(known),
        // `.b8 s[] = {1, 2, 3}`: initialiser values are scalar elements.
        (1, Some(n)) => {
            let per = known / elem;
            let scalars = u64::try_from(n).ok()?;
            let count = scalars.div_ceil(per.max(1) * u64::from(vector.unwrap_or(1)));
            known.checked_mul(count)
        }
        _ => None,
    }
}

fn init_values(init: Option<ast::Initializer>) -> Option<Vec<InitValue>> {
    let init = init?;
    Some(
        init.values()
            .into_iter()
            .map(|v| match v {
                ast::InitValue::Int(n) => InitValue::Int(n),
                ast::InitValue::Float(bits, 32) => InitValue::F32Bits(bits as u32),
                ast::InitValue::Float(bits, _) => InitValue::F64Bits(bits),
                ast::InitValue::Symbol(name, offset) => InitValue::Symbol {
                    name,
                    offset,
                    generic: false,
                },
                ast::InitValue::Generic(name, offset) => InitValue::Symbol {
                    name,
                    offset,
                    generic: true,
                },
            })
            .collect(),
    )
}

pub(crate) fn span_of(node: &ptxeq_syntax::SyntaxNode) -> Span {
    let r = node.text_range();
    Span {
        start: r.start().into(),
        end: r.end().into(),
    }
}

/// Lowers a variable declaration; returns it with its PTX byte range.
pub(crate) fn var_decl(
    decl: &ast::VarDecl,
    scope: VarScope,
    diags: &mut Diags,
) -> Option<(VarDecl, Span)> {
    let span = span_of(decl.syntax());
    let Some(name) = decl.name() else {
        diags.push("variable declaration without a name".into(), span);
        return None;
    };
    let space = parse_space(decl.state_space(), StateSpace::Global, span, diags);
    let ty = parse_ty(decl.ty(), span, "variable", diags);
    let vector = decl.vector_width().and_then(|v| u8::try_from(v).ok());
    let dims = decl.array_dims();
    let init = init_values(decl.initializer());
    let size_bytes = size_of(ty, vector, &dims, init.as_ref().map(Vec::len));
    Some((
        VarDecl {
            name,
            space,
            scope,
            linkage: decl.linkage(),
            ty,
            align: decl.align(),
            vector,
            dims,
            size_bytes,
            init,
        },
        span,
    ))
}

pub(crate) fn param_decl(decl: &ast::ParamDecl, is_return: bool, diags: &mut Diags) -> ParamDecl {
    let span = span_of(decl.syntax());
    let name = decl.name().unwrap_or_else(|| {
        diags.push("parameter without a name".into(), span);
        String::from("_")
    });
    let space = parse_space(decl.state_space(), StateSpace::Param, span, diags);
    let ty = parse_ty(decl.ty(), span, "parameter", diags);
    let vector = decl.vector_width().and_then(|v| u8::try_from(v).ok());
    let dims = decl.array_dims();
    ParamDecl {
        name,
        space,
        ty,
        align: decl.align(),
        vector,
        size_bytes: size_of(ty, vector, &dims, None),
        dims,
        is_ptr: decl.is_ptr(),
        ptr_space: decl.ptr_space().and_then(|s| StateSpace::parse(&s)),
        is_return,
        reg: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_names() {
        for i in [0, 1, 9, 10, 99, 100, 12345, u32::MAX] {
            assert_eq!(numbered("%r", i), format!("%r{i}"));
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(size_of(ScalarType::F32, None, &[], None), Some(4));
        assert_eq!(size_of(ScalarType::B8, None, &[Some(512)], None), Some(512));
        assert_eq!(
            size_of(ScalarType::F32, Some(4), &[Some(2), Some(3)], None),
            Some(96)
        );
        assert_eq!(size_of(ScalarType::F32, None, &[None], None), None);
        assert_eq!(size_of(ScalarType::U32, None, &[None], Some(3)), Some(12));
        assert_eq!(
            size_of(ScalarType::U32, None, &[None, Some(2)], Some(6)),
            Some(24)
        );
        assert_eq!(
            size_of(ScalarType::U64, None, &[Some(u64::MAX)], None),
            None
        );
    }
}
