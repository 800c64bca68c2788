//! The one idiom-specific instruction fact: which instructions a
//! recognised sequence never spans. Operand roles (what an instruction
//! reads and writes) come from `ptxeq_ir::facts`.

use ptxeq_ir::Instr;

/// Instructions that change control flow or synchronise (the `control`
/// fact of `ptxeq_ir::facts`), and undecoded ones (whose effect is not
/// known): never skipped over inside a recognised sequence.
pub(crate) fn is_control(i: &Instr) -> bool {
    i.control().is_some() || i.is_unknown()
}
