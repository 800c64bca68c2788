//! Barriers, fences, mbarriers and warp collectives.

use super::{Mods, Res, check_ops, split_pair};
use crate::instr::{
    BarKind, BarRedOp, FenceKind, FenceProxy, Instr, MatchMode, MbarrierOp, ReduxOp, ShflMode,
    VoteMode,
};
use crate::operand::Operand;
use crate::types::{MemSem, ScalarType, Scope, StateSpace};

pub(super) fn decode(opcode: &str, m: &mut Mods<'_>, ops: Vec<Operand>) -> Res {
    let mut ops = ops;
    let instr = match opcode {
        "bar" if m.flag("warp") => {
            m.require("sync")?;
            check_ops(&ops, &["v"])?;
            Instr::BarWarpSync
        }
        "barrier" if m.flag("cluster") => {
            let arrive = match m.take(|s| match s {
                "arrive" => Some(true),
                "wait" => Some(false),
                _ => None,
            }) {
                Some(a) => a,
                None => return Err("`barrier.cluster` needs `.arrive` or `.wait`".into()),
            };
            let sem = m.take(MemSem::parse);
            let sem_ok = match (arrive, sem) {
                (_, None) => true,
                (true, Some(s)) => matches!(s, MemSem::Release | MemSem::Relaxed),
                (false, Some(s)) => s == MemSem::Acquire,
            };
            if !sem_ok {
                return Err("ordering not accepted on this `barrier.cluster` form".into());
            }
            let aligned = m.flag("aligned");
            check_ops(&ops, &[""])?;
            Instr::BarrierCluster {
                arrive,
                sem,
                aligned,
            }
        }
        "bar" | "barrier" => {
            let legacy = opcode == "bar";
            m.flag("cta");
            let kind = match m.take(|s| match s {
                "sync" => Some(0),
                "arrive" => Some(1),
                "red" => Some(2),
                _ => None,
            }) {
                Some(0) => BarKind::Sync,
                Some(1) => BarKind::Arrive,
                Some(_) => BarKind::Red(m.take_req("barrier reduction", BarRedOp::parse)?),
                None => return Err(format!("`{opcode}` needs `.sync`, `.arrive` or `.red`")),
            };
            let aligned = m.flag("aligned") || legacy;
            match kind {
                BarKind::Red(op) => {
                    let want = if op == BarRedOp::Popc {
                        ScalarType::U32
                    } else {
                        ScalarType::Pred
                    };
                    m.one_type(|t| t == want)?;
                    check_ops(&ops, &["dvv", "dvvv"])?;
                }
                BarKind::Arrive => check_ops(&ops, &["vv"])?,
                BarKind::Sync => check_ops(&ops, &["v", "vv"])?,
            }
            Instr::Bar {
                kind,
                aligned,
                legacy,
            }
        }
        "membar" => {
            let kind = if m.flag("proxy") {
                proxy(m)?
            } else {
                FenceKind::Membar(m.take_req("membar level", |s| match s {
                    "cta" => Some(Scope::Cta),
                    "gl" => Some(Scope::Gpu),
                    "sys" => Some(Scope::Sys),
                    _ => None,
                })?)
            };
            check_ops(&ops, &[""])?;
            Instr::Fence(kind)
        }
        "fence" => {
            let kind = if m.flag("proxy") {
                proxy(m)?
            } else if m.flag("mbarrier_init") {
                m.require("release")?;
                m.require("cluster")?;
                FenceKind::MbarrierInit
            } else {
                let sem = m
                    .take(|s| MemSem::parse(s).filter(|s| matches!(s, MemSem::Sc | MemSem::AcqRel)))
                    .unwrap_or(MemSem::AcqRel);
                let scope = m.take_req("fence scope", Scope::parse)?;
                FenceKind::Sem { sem, scope }
            };
            check_ops(&ops, &[""])?;
            Instr::Fence(kind)
        }
        "mbarrier" => mbarrier(m, &mut ops)?,
        "activemask" => {
            m.one_type(|t| t == ScalarType::B32)?;
            check_ops(&ops, &["d"])?;
            Instr::Activemask
        }
        "elect" => {
            m.require("sync")?;
            ops = split_pair(ops, 0);
            check_ops(&ops, &["ddv"])?;
            Instr::Elect
        }
        "griddepcontrol" => {
            let launch_dependents = match m.take(|s| match s {
                "launch_dependents" => Some(true),
                "wait" => Some(false),
                _ => None,
            }) {
                Some(l) => l,
                None => return Err("`griddepcontrol` needs `.launch_dependents` or `.wait`".into()),
            };
            check_ops(&ops, &[""])?;
            Instr::Griddepcontrol { launch_dependents }
        }
        "setmaxnreg" => {
            let inc = match m.take(|s| match s {
                "inc" => Some(true),
                "dec" => Some(false),
                _ => None,
            }) {
                Some(i) => i,
                None => return Err("`setmaxnreg` needs `.inc` or `.dec`".into()),
            };
            m.require("sync")?;
            m.require("aligned")?;
            m.one_type(|t| t == ScalarType::U32)?;
            check_ops(&ops, &["v"])?;
            Instr::Setmaxnreg { inc }
        }
        "shfl" => {
            let sync = m.flag("sync");
            let mode = m.take_req("shuffle mode", ShflMode::parse)?;
            let ty = m.one_type(|t| t == ScalarType::B32)?;
            ops = split_pair(ops, 0);
            check_ops(&ops, &[if sync { "ddvvvv" } else { "ddvvv" }])?;
            Instr::Shfl { mode, sync, ty }
        }
        "vote" => {
            let sync = m.flag("sync");
            let mode = m.take_req("vote mode", VoteMode::parse)?;
            let want = if mode == VoteMode::Ballot {
                ScalarType::B32
            } else {
                ScalarType::Pred
            };
            let ty = m.one_type(|t| t == want)?;
            check_ops(&ops, &[if sync { "dvv" } else { "dv" }])?;
            Instr::Vote { mode, sync, ty }
        }
        "match" => {
            let mode = m.take_req("match mode", MatchMode::parse)?;
            m.require("sync")?;
            let ty = m.one_type(|t| matches!(t, ScalarType::B32 | ScalarType::B64))?;
            ops = split_pair(ops, 0);
            check_ops(&ops, &["ddvv"])?;
            Instr::Match { mode, ty }
        }
        "redux" => {
            m.require("sync")?;
            let op = m.take_req("reduction", ReduxOp::parse)?;
            let abs = m.flag("abs");
            let nan = m.flag("NaN");
            let ty = m.one_type(|t| {
                matches!(
                    t,
                    ScalarType::B32 | ScalarType::U32 | ScalarType::S32 | ScalarType::F32
                )
            })?;
            check_ops(&ops, &["dvv"])?;
            Instr::Redux { op, ty, abs, nan }
        }
        _ => return Err(format!("unsupported opcode `{opcode}`")),
    };
    Ok((instr, ops))
}

/// `.proxy.alias`, `.proxy.async{.global|.shared::cta|.shared::cluster}`.
fn proxy(m: &mut Mods<'_>) -> Result<FenceKind, String> {
    let proxy = m.take_req("proxy kind", FenceProxy::parse)?;
    let space = if proxy == FenceProxy::Async {
        m.take(|s| {
            StateSpace::parse(s).filter(|s| {
                matches!(
                    s,
                    StateSpace::Global | StateSpace::Shared | StateSpace::SharedCluster
                )
            })
        })
    } else {
        None
    };
    Ok(FenceKind::Proxy { proxy, space })
}

fn mbarrier(m: &mut Mods<'_>, ops: &mut [Operand]) -> Result<Instr, String> {
    let name = m.take_req("mbarrier operation", |s| {
        [
            "init",
            "inval",
            "arrive",
            "arrive_drop",
            "expect_tx",
            "complete_tx",
            "test_wait",
            "try_wait",
            "pending_count",
        ]
        .into_iter()
        .find(|n| *n == s)
    })?;
    let op = match name {
        "init" => MbarrierOp::Init,
        "inval" => MbarrierOp::Inval,
        "arrive" | "arrive_drop" => MbarrierOp::Arrive {
            drop: name == "arrive_drop",
            expect_tx: m.flag("expect_tx"),
            no_complete: m.flag("noComplete"),
        },
        "expect_tx" => MbarrierOp::ExpectTx,
        "complete_tx" => MbarrierOp::CompleteTx,
        "test_wait" | "try_wait" => MbarrierOp::Wait {
            try_wait: name == "try_wait",
            parity: m.flag("parity"),
        },
        _ => MbarrierOp::PendingCount,
    };
    let sem = m.take(|s| {
        MemSem::parse(s)
            .filter(|s| matches!(s, MemSem::Release | MemSem::Acquire | MemSem::Relaxed))
    });
    let scope = m.take(|s| Scope::parse(s).filter(|s| matches!(s, Scope::Cta | Scope::Cluster)));
    let space = m
        .take(|s| {
            StateSpace::parse(s)
                .filter(|s| matches!(s, StateSpace::Shared | StateSpace::SharedCluster))
        })
        .unwrap_or(StateSpace::Generic);
    m.one_type(|t| t == ScalarType::B64)?;
    let sigs: &[&str] = match op {
        MbarrierOp::Init => &["av"],
        MbarrierOp::Inval => &["a"],
        MbarrierOp::Arrive {
            expect_tx: true, ..
        }
        | MbarrierOp::Arrive {
            no_complete: true, ..
        } => &["dav"],
        MbarrierOp::Arrive { .. } => &["da", "dav"],
        MbarrierOp::ExpectTx | MbarrierOp::CompleteTx => &["av"],
        MbarrierOp::Wait { .. } => &["dav", "davv"],
        MbarrierOp::PendingCount => &["dv"],
    };
    check_ops(ops, sigs)?;
    Ok(Instr::Mbarrier {
        op,
        sem,
        scope,
        space,
    })
}
