//! `ptxeq eval`: runs one kernel of a spec concretely on given inputs and
//! writes the output elements it writes — to replay a counterexample, or
//! to compare ptxeq's model with a real GPU run on the same inputs
//! (`tools/gpu-validate`, docs/hardware-validation.md).
//!
//! Inputs (`--inputs DIR`): one raw little-endian file per read tensor,
//! `DIR/<tensor>.bin`, holding every element in the spec's dtype (row-major,
//! `elements × size` bytes), and `DIR/<scalar>.bin` (one element) per
//! symbolic scalar. Tensors with concrete `values`, `[globals]` contents and
//! output-only tensors need no file.
//!
//! Outputs (`--out DIR`): per output / inout tensor, `DIR/<tensor>.f64`
//! (every element as a little-endian `f64`; NaN where not written) and
//! `DIR/<tensor>.mask` (one byte per element: 0 not written, 1 written,
//! 2 written but without a value — the engine gave the reason, printed),
//! and `DIR/eval.json`: the kernel, the CTAs run, per tensor the element
//! count and how many were written, and every finding.
//!
//! The run is the concrete domain (`ptxeq_exec::Concrete`): the real value
//! of every operation, approximated by `f64` — not the f32/f16 rounding of
//! the hardware (a comparison with a GPU needs a tolerance) — on the same
//! kernel the checker works on (math-library expansions recognised), over
//! the CTAs the spec selects (its `ctas`), run as one grid over one global
//! memory (`ptxeq_exec::run_grid`) — except a kernel with `wmma`, whose
//! CTAs run one by one (`run_cta` tracks wmma fragment layouts).

use std::path::Path;

use ptxeq_db::KernelSlot;
use ptxeq_exec::{Concrete, CtaInput, FindingKind, Fmt, OutputValue, float_bits_to_f64};
use ptxeq_spec::DType;

use crate::exit::Exit;
use crate::spec_args::{self, SpecFlagArgs};

/// The float format of a float dtype (`None` for integers and `pred`).
fn fmt_of(d: DType) -> Option<Fmt> {
    Some(match d {
        DType::F16 => Fmt::F16,
        DType::Bf16 => Fmt::Bf16,
        DType::F32 => Fmt::F32,
        DType::F64 => Fmt::F64,
        DType::F8e4m3 => Fmt::E4m3,
        DType::F8e5m2 => Fmt::E5m2,
        _ => return None,
    })
}

/// The number one element of `dtype` holds, from its little-endian
/// `bits`: floats decoded, signed integers sign-extended (integers beyond
/// 2^53 lose their low bits in the `f64`).
pub fn element_value(dtype: DType, bits: u64) -> f64 {
    if let Some(f) = fmt_of(dtype) {
        return float_bits_to_f64(f, bits);
    }
    let w = dtype.size_bytes() * 8;
    let signed = matches!(dtype, DType::S8 | DType::S16 | DType::S32 | DType::S64);
    if signed && w < 64 {
        let s = 64 - w;
        ((bits << s) as i64 >> s) as f64
    } else if signed {
        bits as i64 as f64
    } else {
        bits as f64
    }
}

/// Reads `path` as raw little-endian elements of `dtype`: exactly
/// `count` of them, or an error naming the file.
fn read_elements(path: &Path, dtype: DType, count: u64) -> Result<Vec<f64>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let size = dtype.size_bytes() as usize;
    let want = count.saturating_mul(size as u64);
    if bytes.len() as u64 != want {
        return Err(format!(
            "{}: {} bytes, but {count} element(s) of {dtype} are {want} bytes",
            path.display(),
            bytes.len()
        ));
    }
    Ok(bytes
        .chunks_exact(size)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..size].copy_from_slice(c);
            element_value(dtype, u64::from_le_bytes(b))
        })
        .collect())
}

/// The concrete domain's input numbers for `input`: every tensor (by the
/// bound order), then every symbolic scalar.
fn read_inputs(input: &CtaInput, dir: &Path) -> Result<Vec<Vec<f64>>, String> {
    let mut data = Vec::new();
    for (t, info) in input.tensors.iter().enumerate() {
        let path = dir.join(format!("{}.bin", info.name));
        let concrete = input.bindings.tensor_bytes(t as u32).is_some();
        if info.role.is_read() && !concrete {
            data.push(read_elements(&path, info.dtype, info.elements())?);
        } else if path.is_file() && !concrete {
            // An output's or scratch tensor's file is read too (harmless:
            // the kernel writes before it reads, or the run reports it).
            data.push(read_elements(&path, info.dtype, info.elements())?);
        } else {
            data.push(Vec::new());
        }
    }
    for s in &input.symbols {
        let path = dir.join(format!("{}.bin", s.name));
        data.push(read_elements(&path, s.dtype, 1)?);
    }
    Ok(data)
}

/// What a concrete run of the selected CTAs left.
struct EvalRun {
    findings: Vec<ptxeq_exec::Finding>,
    outputs: Vec<ptxeq_exec::TensorOutput<ptxeq_exec::CVal>>,
    notes: Vec<String>,
}

/// Runs `ctas` concretely: as one grid over one global memory
/// (`run_grid`: cross-CTA atomics and the ticket pattern), or — one CTA,
/// or a kernel with `wmma` — CTA by CTA, each from the launch's initial
/// memory, the outputs merged (a later CTA's write of an element wins).
fn run_ctas(input: &CtaInput, ctas: &[[u32; 3]], data: Vec<Vec<f64>>) -> EvalRun {
    if ctas.len() > 1 && !ptxeq_exec::uses_wmma(input) {
        let (g, _) = ptxeq_exec::run_grid(input, ctas, Concrete::new(data));
        let findings = g
            .runs
            .iter()
            .flat_map(|r| r.findings.iter().cloned())
            .chain(g.cross)
            .collect();
        return EvalRun {
            findings,
            outputs: g.outputs,
            notes: g.notes,
        };
    }
    let mut findings = Vec::new();
    let mut merged: std::collections::BTreeMap<u32, ptxeq_exec::TensorOutput<_>> =
        std::collections::BTreeMap::new();
    for &cta in ctas {
        let (run, _) = ptxeq_exec::run_cta(input, cta, Concrete::new(data.clone()));
        findings.extend(run.findings);
        for o in run.outputs {
            let m = merged
                .entry(o.tensor)
                .or_insert_with(|| ptxeq_exec::TensorOutput {
                    tensor: o.tensor,
                    name: o.name.clone(),
                    elements: Vec::new(),
                    writers: Vec::new(),
                });
            let mut all: std::collections::BTreeMap<u64, _> =
                std::mem::take(&mut m.elements).into_iter().collect();
            all.extend(o.elements);
            m.elements = all.into_iter().collect();
        }
    }
    let notes = if ctas.len() > 1 {
        vec!["wmma kernel: CTAs run one by one, each from the launch's initial memory".into()]
    } else {
        Vec::new()
    };
    EvalRun {
        findings,
        outputs: merged.into_values().collect(),
        notes,
    }
}

/// `ptxeq eval TARGET --kernel ROLE --inputs DIR --out DIR`.
pub fn run(target: &Path, args: &SpecFlagArgs, role: &str, inputs: &Path, out: &Path) -> Exit {
    match eval(target, args, role, inputs, out) {
        Ok(exit) => exit,
        Err(e) => {
            eprintln!("error: {e}");
            Exit::Invalid
        }
    }
}

fn eval(
    target: &Path,
    args: &SpecFlagArgs,
    role: &str,
    inputs: &Path,
    out: &Path,
) -> Result<Exit, String> {
    let checker = ptxeq_check::Checker::new();
    let db = checker.db();
    let Some(loaded) = spec_args::load_checked(db, target, args) else {
        return Ok(Exit::Invalid);
    };
    let words: Vec<&str> = loaded.kernels.iter().map(|(s, _)| s.word()).collect();
    let Some(&(slot, file)) = loaded.kernels.iter().find(|(s, _)| s.word() == role) else {
        return Err(format!(
            "the spec has no {role} kernel (it has: {})",
            words.join(", ")
        ));
    };
    let k = KernelSlot::new(db, loaded.spec, slot, file);
    let input = ptxeq_db::cta_input(db, k).clone()?;
    let plan = ptxeq_db::kernel_ctas(db, k);
    if let Some(n) = plan.refused {
        return Err(format!(
            "the launch asks for {n} CTAs, over the CTA limit (--max-ctas or [limits] max_ctas)"
        ));
    }
    let data = read_inputs(&input, inputs)?;
    let run = run_ctas(&input, &plan.ctas, data);
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let findings = &run.findings;
    for f in findings {
        eprintln!("{:?}: {}", f.kind, f.message);
    }
    let mut tensors = Vec::new();
    for o in &run.outputs {
        let info = &input.tensors[o.tensor as usize];
        let n = info.elements() as usize;
        let mut values = vec![f64::NAN; n];
        let mut mask = vec![0u8; n];
        for (i, v) in &o.elements {
            let i = *i as usize;
            if i >= n {
                continue;
            }
            match v {
                OutputValue::Data(x) => {
                    values[i] = x.get();
                    mask[i] = 1;
                }
                OutputValue::Bits(b) => {
                    values[i] = element_value(info.dtype, *b);
                    mask[i] = 1;
                }
                OutputValue::Unsupported(why) => {
                    eprintln!("{}[{i}]: no value: {why}", o.name);
                    mask[i] = 2;
                }
            }
        }
        let bytes: Vec<u8> = values.iter().flat_map(|x| x.to_le_bytes()).collect();
        let write = |name: String, b: &[u8]| {
            let p = out.join(name);
            std::fs::write(&p, b).map_err(|e| format!("{}: {e}", p.display()))
        };
        write(format!("{}.f64", o.name), &bytes)?;
        write(format!("{}.mask", o.name), &mask)?;
        tensors.push(serde_json::json!({
            "name": o.name,
            "dtype": info.dtype.to_string(),
            "elements": n,
            "written": mask.iter().filter(|&&m| m == 1).count(),
            "without_value": mask.iter().filter(|&&m| m == 2).count(),
        }));
    }
    let summary = serde_json::json!({
        "kernel": role,
        "entry": input.kernel.name,
        "ctas": plan.ctas,
        "grid": input.grid,
        "block": input.block,
        "tensors": tensors,
        "findings": findings.iter().map(|f| serde_json::json!({
            "kind": format!("{:?}", f.kind),
            "message": f.message,
        })).collect::<Vec<_>>(),
        "notes": run.notes,
    });
    let p = out.join("eval.json");
    std::fs::write(&p, format!("{summary:#}\n")).map_err(|e| format!("{}: {e}", p.display()))?;
    let written: usize = tensors
        .iter()
        .map(|t| t["written"].as_u64().unwrap_or(0) as usize)
        .sum();
    outln!(
        "{role} `{}`: {} CTA(s) run, {written} output element(s) written to {}",
        input.kernel.name,
        plan.ctas.len(),
        out.display()
    );
    Ok(if findings.is_empty() {
        Exit::Ok
    } else if findings.iter().any(|f| f.kind == FindingKind::Unsupported) {
        Exit::Undecided
    } else {
        Exit::Refuted
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_elements() {
        assert_eq!(element_value(DType::S8, 0xFF), -1.0);
        assert_eq!(element_value(DType::U8, 0xFF), 255.0);
        assert_eq!(element_value(DType::S32, 0xFFFF_FFFE), -2.0);
        assert_eq!(element_value(DType::F32, 0x3FC0_0000), 1.5);
        assert_eq!(element_value(DType::F16, 0x3C00), 1.0);
        assert_eq!(element_value(DType::Bf16, 0xC000), -2.0);
        assert_eq!(element_value(DType::F8e4m3, 0x38), 1.0);
    }
}
