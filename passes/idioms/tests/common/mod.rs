//! Helpers shared by the `powf`/`pow` recognition tests (each test file
//! is its own crate and uses a subset, hence the `dead_code` allowance).
#![allow(dead_code)]

use ptxeq_idioms::recognise_in;
use ptxeq_ir::{IdiomFn, Instr, KernelIr, Operand, StateSpace};

/// `ptx` with the `n`-th occurrence of `from` inside kernel `name`
/// replaced by `to` (panics when absent, so a near miss cannot silently
/// test the unchanged kernel).
pub fn edit_kernel(ptx: &str, name: &str, from: &str, to: &str, n: usize) -> String {
    let start = ptx.find(&format!(".entry {name}(")).expect("kernel");
    let end = start + ptx[start..].find("\n}\n").expect("end of kernel");
    let body = &ptx[start..end];
    let at = body.match_indices(from).nth(n).expect("occurrence").0;
    format!(
        "{}{}{}{}",
        &ptx[..start + at],
        to,
        &body[at + from.len()..],
        &ptx[end..]
    )
}

/// The operands after the destination of the kernel's recognised `pow`
/// idioms, in program order (`funcs`: the module's functions, for
/// templates that call one).
pub fn pow_args(k: &KernelIr, funcs: &[KernelIr]) -> Vec<Vec<Operand>> {
    recognise_in(k, funcs)
        .ir
        .instrs
        .iter()
        .filter(|d| {
            matches!(
                d.instr,
                Instr::Idiom {
                    func: IdiomFn::Pow,
                    ..
                }
            )
        })
        .map(|d| d.operands[1..].to_vec())
        .collect()
}

/// The registers of the kernel's global loads, in program order.
pub fn loads(k: &KernelIr) -> Vec<Operand> {
    k.instrs
        .iter()
        .filter(|d| matches!(&d.instr, Instr::Ld(m) if m.space == StateSpace::Global))
        .filter_map(|d| d.operands.first().cloned())
        .collect()
}
