//! `tcgen05.*` — Blackwell (sm_100a) Tensor Memory and fifth-generation
//! MMA. The modelled `.cta_group::1` forms decode to [`Tcgen05Op`]; the
//! others are refused here by name with the reason, so the engine reports
//! them `unsupported` as written (`Instr::Unknown`).

use super::{Mods, Res, check_ops};
use crate::instr::{Instr, Tcgen05Kind, Tcgen05Op, TmemShape};
use crate::operand::Operand;
use crate::types::ScalarType;

/// The operation word after `tcgen05.` (its `::` suffix included).
const OPS: &[&str] = &[
    "alloc",
    "dealloc",
    "relinquish_alloc_permit",
    "ld",
    "st",
    "wait::ld",
    "wait::st",
    "fence::before_thread_sync",
    "fence::after_thread_sync",
    "mma",
    "commit",
    "cp",
    "shift",
];

fn cta_group_1(m: &mut Mods<'_>, what: &str) -> Result<(), String> {
    if m.flag("cta_group::2") {
        return Err(format!(
            "`tcgen05.{what}.cta_group::2` (a CTA pair sharing one MMA) is not modelled: only .cta_group::1"
        ));
    }
    m.require("cta_group::1")
}

fn sync_aligned(m: &mut Mods<'_>) -> Result<(), String> {
    m.require("sync")?;
    m.require("aligned")
}

fn b32(m: &mut Mods<'_>) -> Result<(), String> {
    m.one_type(|t| t == ScalarType::B32).map(|_| ())
}

/// `.x1` .. `.x128`.
fn repeat(s: &str) -> Option<u8> {
    let n: u8 = s.strip_prefix('x')?.parse().ok()?;
    (n.is_power_of_two() && n <= 128).then_some(n)
}

pub(super) fn decode(m: &mut Mods<'_>, ops: Vec<Operand>) -> Res {
    let which = m.take_req("tcgen05 operation", |s| {
        OPS.iter().find(|o| **o == s).copied()
    })?;
    let op = match which {
        "cp" => {
            return Err(
                "`tcgen05.cp` (shared memory to Tensor Memory copy) is not modelled".into(),
            );
        }
        "shift" => {
            return Err("`tcgen05.shift` (Tensor Memory row shift) is not modelled".into());
        }
        "alloc" => {
            cta_group_1(m, which)?;
            sync_aligned(m)?;
            m.flag("shared::cta");
            b32(m)?;
            check_ops(&ops, &["av"])?;
            Tcgen05Op::Alloc
        }
        "dealloc" => {
            cta_group_1(m, which)?;
            sync_aligned(m)?;
            b32(m)?;
            check_ops(&ops, &["vv"])?;
            Tcgen05Op::Dealloc
        }
        "relinquish_alloc_permit" => {
            cta_group_1(m, which)?;
            sync_aligned(m)?;
            check_ops(&ops, &[""])?;
            Tcgen05Op::Relinquish
        }
        "ld" | "st" => {
            sync_aligned(m)?;
            if m.flag("red") {
                return Err("`tcgen05.ld.red` (load with reduction) is not modelled".into());
            }
            let shape = m.take_req("data-path shape", TmemShape::parse)?;
            let num = m.take_req("repeat count (.x1 .. .x128)", repeat)?;
            let ld = which == "ld";
            let packed = m.flag(if ld { "pack::16b" } else { "unpack::16b" });
            b32(m)?;
            let split = shape == TmemShape::S16x32bx2;
            if ld {
                check_ops(&ops, if split { &["dav"] } else { &["da"] })?;
                Tcgen05Op::Ld {
                    shape,
                    num,
                    pack: packed,
                }
            } else {
                check_ops(&ops, if split { &["avv"] } else { &["av"] })?;
                Tcgen05Op::St {
                    shape,
                    num,
                    unpack: packed,
                }
            }
        }
        "wait::ld" | "wait::st" => {
            sync_aligned(m)?;
            check_ops(&ops, &[""])?;
            Tcgen05Op::Wait {
                st: which == "wait::st",
            }
        }
        "fence::before_thread_sync" | "fence::after_thread_sync" => {
            check_ops(&ops, &[""])?;
            Tcgen05Op::Fence {
                after: which == "fence::after_thread_sync",
            }
        }
        "commit" => {
            cta_group_1(m, which)?;
            if m.flag("multicast::cluster") {
                return Err(
                    "`tcgen05.commit.multicast::cluster` (arrive on the mbarriers of several CTAs) is not modelled"
                        .into(),
                );
            }
            m.require("mbarrier::arrive::one")?;
            let cluster = m.flag("shared::cluster");
            m.one_type(|t| t == ScalarType::B64)?;
            check_ops(&ops, &["a"])?;
            Tcgen05Op::Commit { cluster }
        }
        _ => {
            // mma
            for (f, why) in [
                ("sp", "sparse A (`.sp`)"),
                ("ws", "the weight-stationary form (`.ws`)"),
                ("block_scale", "block scaling (`.block_scale`)"),
                ("ashift", "A row shift (`.ashift`)"),
            ] {
                if m.flag(f) {
                    return Err(format!("`tcgen05.mma` with {why} is not modelled"));
                }
            }
            cta_group_1(m, which)?;
            let kind = m.take_req("`.kind`", |s| {
                Some(match s {
                    "kind::f16" => Tcgen05Kind::F16,
                    "kind::tf32" => Tcgen05Kind::Tf32,
                    "kind::f8f6f4" => Tcgen05Kind::F8f6f4,
                    "kind::i8" => Tcgen05Kind::I8,
                    _ => return None,
                })
            });
            let kind = match kind {
                Ok(k) => k,
                Err(_) => {
                    return Err(
                        "`tcgen05.mma` of this `.kind` (block-scaled mxf8f6f4 / mxf4 / mxf4nvf4, or none) is not modelled"
                            .into(),
                    );
                }
            };
            if m.take(|s| s.starts_with("collector::").then_some(()))
                .is_some()
            {
                return Err(
                    "`tcgen05.mma` with a collector-buffer qualifier (`.collector::*`) is not modelled"
                        .into(),
                );
            }
            // [d], a-desc | [a], b-desc, idesc, enable-input-d
            // (disable-output-lane and scale-input-d forms are refused).
            if ops.len() != 5 {
                return Err(format!(
                    "`tcgen05.mma` with {} operands: only `[d-tmem], a, b-desc, idesc, enable-input-d` is modelled (disable-output-lane / scale-input-d forms are not)",
                    ops.len()
                ));
            }
            check_ops(&ops, &["avvvv", "aavvv"])?;
            Tcgen05Op::Mma {
                kind,
                a_tmem: matches!(ops[1], Operand::Addr(_)),
            }
        }
    };
    Ok((Instr::Tcgen05(op), ops))
}
