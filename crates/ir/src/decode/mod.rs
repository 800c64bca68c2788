//! Opcode + modifiers + resolved operands → typed [`Instr`].
//!
//! Usable without the syntax crate: give it the opcode (`"ld"`), the
//! modifiers without dots in source order (`["global", "nc", "v4", "f32"]`)
//! and the operands. PTX lets most modifiers come in any order, so each
//! family *consumes* the modifiers it knows from an unordered bag
//! (`Mods`); anything left over, or a required one missing, makes the
//! instruction [`Instr::Unknown`] with a reason. Order matters only where PTX
//! gives it meaning: the type list of `cvt`/`set`/`mma` (destination first)
//! and the two spaces of a bulk copy (destination first).
//!
//! The decoder never panics; operand counts and kinds are checked against
//! the variant's documented layout so later passes can index operands
//! without re-checking.

mod arith;
mod bits;
mod control;
mod matrix;
mod mem;
mod sync;
mod tcgen05;

use smallvec::SmallVec;

use crate::instr::Instr;
use crate::operand::Operand;
use crate::types::ScalarType;

/// Result of [`decode`]: the instruction and its operands in the variant's
/// documented layout.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Decoded {
    pub instr: Instr,
    pub operands: SmallVec<[Operand; 4]>,
}

/// Decodes one instruction. Never panics; anything not understood becomes
/// [`Instr::Unknown`] (with the operands passed through unchanged).
pub fn decode(opcode: &str, modifiers: &[&str], operands: Vec<Operand>) -> Decoded {
    let mut mods = Mods::new(modifiers);
    // Kept for the `Unknown` fallback; inline (no allocation) for the usual
    // handful of operands.
    let original: SmallVec<[Operand; 4]> = operands.iter().cloned().collect();
    match decode_family(opcode, &mut mods, operands) {
        Ok(Some((instr, ops))) => match mods.finish() {
            Ok(()) => Decoded {
                instr,
                operands: ops.into_iter().collect(),
            },
            Err(reason) => unknown(opcode, modifiers, original, reason),
        },
        Ok(None) => unknown(
            opcode,
            modifiers,
            original,
            format!("unsupported opcode `{opcode}`"),
        ),
        Err(reason) => unknown(opcode, modifiers, original, reason),
    }
}

fn unknown(
    opcode: &str,
    modifiers: &[&str],
    operands: SmallVec<[Operand; 4]>,
    reason: String,
) -> Decoded {
    let mut text = opcode.to_string();
    for m in modifiers {
        text.push('.');
        text.push_str(m);
    }
    Decoded {
        instr: Instr::Unknown { text, reason },
        operands,
    }
}

/// `Ok(None)` = not a decoded opcode.
pub(crate) type FamilyResult = Result<Option<(Instr, Vec<Operand>)>, String>;

fn decode_family(opcode: &str, m: &mut Mods<'_>, ops: Vec<Operand>) -> FamilyResult {
    match opcode {
        "add" | "addc" | "sub" | "subc" | "mul" | "mad" | "madc" | "mul24" | "mad24" | "fma"
        | "div" | "rem" | "neg" | "abs" | "min" | "max" | "copysign" | "sad" | "dp4a" | "dp2a"
        | "rcp" | "sqrt" | "rsqrt" | "ex2" | "lg2" | "sin" | "cos" | "tanh" | "testp" => {
            arith::decode(opcode, m, ops).map(Some)
        }
        "and" | "or" | "xor" | "not" | "cnot" | "lop3" | "shl" | "shr" | "shf" | "bfe" | "bfi"
        | "prmt" | "popc" | "clz" | "brev" | "bfind" | "fns" | "bmsk" | "szext" | "setp"
        | "set" | "selp" | "slct" => bits::decode(opcode, m, ops).map(Some),
        "mov" | "cvt" | "cvta" | "ld" | "ldu" | "st" | "prefetch" | "prefetchu" | "isspacep"
        | "mapa" | "getctarank" | "atom" | "red" | "createpolicy" => {
            mem::decode(opcode, m, ops).map(Some)
        }
        "bra" | "brx" | "call" | "ret" | "exit" | "trap" | "brkpt" | "nanosleep" => {
            control::decode(opcode, m, ops).map(Some)
        }
        "bar" | "barrier" | "membar" | "fence" | "mbarrier" | "activemask" | "elect"
        | "griddepcontrol" | "setmaxnreg" | "shfl" | "vote" | "match" | "redux" => {
            sync::decode(opcode, m, ops).map(Some)
        }
        "mma" | "wmma" | "ldmatrix" | "stmatrix" | "movmatrix" | "cp" | "wgmma" => {
            matrix::decode(opcode, m, ops)
        }
        "tcgen05" => tcgen05::decode(m, ops).map(Some),
        _ => Ok(None),
    }
}

/// What a family decoder returns.
pub(crate) type Res = Result<(Instr, Vec<Operand>), String>;

/// An unordered bag of modifiers that family decoders consume.
#[derive(Debug)]
pub(crate) struct Mods<'a> {
    list: SmallVec<[&'a str; 8]>,
    used: SmallVec<[bool; 8]>,
}

impl<'a> Mods<'a> {
    pub(crate) fn new(list: &[&'a str]) -> Self {
        Mods {
            list: SmallVec::from_slice(list),
            used: SmallVec::from_elem(false, list.len()),
        }
    }

    /// The first modifier as written (for families named by it: `cp.async`).
    pub(crate) fn first(&self) -> Option<&'a str> {
        self.list.first().copied()
    }

    /// Consumes `m` if present.
    pub(crate) fn flag(&mut self, m: &str) -> bool {
        self.take(|s| (s == m).then_some(())).is_some()
    }

    /// Requires `m`.
    pub(crate) fn require(&mut self, m: &str) -> Result<(), String> {
        if self.flag(m) {
            Ok(())
        } else {
            Err(format!("missing required modifier `.{m}`"))
        }
    }

    /// Consumes the first unused modifier that `f` accepts.
    pub(crate) fn take<T>(&mut self, f: impl Fn(&str) -> Option<T>) -> Option<T> {
        for (i, s) in self.list.iter().enumerate() {
            if self.used[i] {
                continue;
            }
            if let Some(v) = f(s) {
                self.used[i] = true;
                return Some(v);
            }
        }
        None
    }

    /// Like [`Mods::take`] but it is an error when none matches.
    pub(crate) fn take_req<T>(
        &mut self,
        what: &str,
        f: impl Fn(&str) -> Option<T>,
    ) -> Result<T, String> {
        self.take(f).ok_or_else(|| format!("missing {what}"))
    }

    /// Consumes all unused type modifiers, in source order.
    pub(crate) fn types(&mut self) -> Vec<ScalarType> {
        let mut out = Vec::new();
        while let Some(t) = self.take(ScalarType::parse) {
            out.push(t);
        }
        out
    }

    /// Exactly one type, accepted by `ok`.
    pub(crate) fn one_type(
        &mut self,
        ok: impl Fn(ScalarType) -> bool,
    ) -> Result<ScalarType, String> {
        let tys = self.types();
        match tys.as_slice() {
            [t] if ok(*t) => Ok(*t),
            [t] => Err(format!("type `.{t}` not accepted here")),
            [] => Err("missing type".into()),
            _ => Err(format!("expected one type, found {}", tys.len())),
        }
    }

    /// Exactly `n` types, in source order.
    pub(crate) fn n_types(&mut self, n: usize) -> Result<Vec<ScalarType>, String> {
        let tys = self.types();
        if tys.len() == n {
            Ok(tys)
        } else {
            Err(format!("expected {n} types, found {}", tys.len()))
        }
    }

    /// `.v2`/`.v4`/`.v8`.
    pub(crate) fn vector(&mut self) -> Option<u8> {
        self.take(|s| match s {
            "v2" => Some(2),
            "v4" => Some(4),
            "v8" => Some(8),
            _ => None,
        })
    }

    /// Error if any modifier was not consumed.
    pub(crate) fn finish(&self) -> Result<(), String> {
        let left: Vec<String> = self
            .list
            .iter()
            .zip(&self.used)
            .filter(|(_, u)| !**u)
            .map(|(s, _)| format!("`.{s}`"))
            .collect();
        if left.is_empty() {
            Ok(())
        } else {
            Err(format!("unexpected modifier {}", left.join(", ")))
        }
    }
}

/// Checks operands against signatures, one character per operand:
/// `d` writable (register, lane, `_`, or a brace vector of those),
/// `v` readable value (or a brace vector of values), `a` address `[..]`,
/// `V` brace vector, `l` label, `L` parenthesised list, `*` anything.
/// Succeeds when any signature matches.
pub(crate) fn check_ops(ops: &[Operand], sigs: &[&str]) -> Result<(), String> {
    if sigs
        .iter()
        .any(|sig| sig.len() == ops.len() && sig.chars().zip(ops).all(|(c, o)| kind_ok(c, o)))
    {
        return Ok(());
    }
    let want: Vec<String> = sigs.iter().map(|s| describe_sig(s)).collect();
    Err(format!(
        "operands: expected {}, found {}",
        want.join(" or "),
        describe_ops(ops)
    ))
}

fn kind_ok(c: char, o: &Operand) -> bool {
    match c {
        'd' => match o {
            Operand::Vector(v) => v.iter().all(Operand::is_writable),
            o => o.is_writable(),
        },
        'v' => match o {
            Operand::Vector(v) => v.iter().all(Operand::is_value),
            o => o.is_value(),
        },
        'a' => matches!(o, Operand::Addr(_)),
        'V' => matches!(o, Operand::Vector(_)),
        'l' => matches!(o, Operand::Label(_)),
        'L' => matches!(o, Operand::List(_)),
        '*' => !matches!(o, Operand::Pair(..)),
        _ => false,
    }
}

fn describe_sig(sig: &str) -> String {
    let parts: Vec<&str> = sig
        .chars()
        .map(|c| match c {
            'd' => "dst",
            'v' => "value",
            'a' => "[addr]",
            'V' => "{vector}",
            'l' => "label",
            'L' => "(list)",
            _ => "any",
        })
        .collect();
    format!("({})", parts.join(", "))
}

fn describe_ops(ops: &[Operand]) -> String {
    let parts: Vec<&str> = ops
        .iter()
        .map(|o| match o {
            Operand::Reg(_) | Operand::RegLane { .. } => "register",
            Operand::Special(_) => "special register",
            Operand::Imm(_) => "immediate",
            Operand::Symbol { .. } => "symbol",
            Operand::Addr(_) => "[addr]",
            Operand::TensorAddr { .. } => "[tmap, {coords}]",
            Operand::Vector(_) => "{vector}",
            Operand::Sink => "_",
            Operand::Not(_) => "!pred",
            Operand::Label(_) => "label",
            Operand::List(_) => "(list)",
            Operand::Pair(..) => "a|b pair",
        })
        .collect();
    format!("({})", parts.join(", "))
}

/// Splits a `d|p` pair at `pos` into two operands, inserting
/// [`Operand::Sink`] when the operand is not a pair. Out of range: unchanged
/// (the signature check reports it).
pub(crate) fn split_pair(mut ops: Vec<Operand>, pos: usize) -> Vec<Operand> {
    if pos >= ops.len() {
        return ops;
    }
    match ops.remove(pos) {
        Operand::Pair(a, b) => {
            ops.insert(pos, *b);
            ops.insert(pos, *a);
        }
        other => {
            ops.insert(pos, Operand::Sink);
            ops.insert(pos, other);
        }
    }
    ops
}

#[cfg(test)]
mod tests;
