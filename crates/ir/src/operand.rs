//! Instruction operands after name resolution.
//!
//! Names are gone: registers are dense [`RegId`]s into the kernel's register
//! file, variables and params are indices, labels point at instructions.
//! Only function symbols keep their name ([`Symbol::Func`]) because a kernel's
//! IR is a standalone artifact: the callee is looked up in the module by name.

use serde::{Deserialize, Serialize};

use crate::types::{Dim, ScalarType};

macro_rules! id_type {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, Serialize, Deserialize)]
        pub struct $name(pub u32);

        impl $name {
            /// The index into the owning table.
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id_type!(
    /// Dense register number: index into [`crate::KernelIr::regs`].
    RegId
);
id_type!(
    /// Index into [`crate::KernelIr::vars`] (module variables first, then the
    /// function's own, in declaration order).
    VarId
);
id_type!(
    /// Index into [`crate::KernelIr::params`] (arguments in order, then
    /// return params of a `.func`).
    ParamId
);
id_type!(
    /// Index into [`crate::KernelIr::labels`].
    LabelId
);

/// An immediate. Floats are kept as bit patterns so the IR stays `Eq + Hash`
/// and exact; a decimal float literal (`1.5`) is stored as its f64 bits, as
/// PTX itself reads it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum Imm {
    /// Integer literal (signed, wide enough for any 64-bit pattern).
    Int(i128),
    /// `0fXXXXXXXX`.
    F32Bits(u32),
    /// `0dXXXXXXXXXXXXXXXX` or a decimal float literal.
    F64Bits(u64),
}

/// A named memory object used as an address or as a value.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum Symbol {
    /// A `.global`/`.shared`/`.const`/`.local` variable, or a call-site `.param`.
    Var(VarId),
    /// A parameter of the kernel or function being lowered.
    Param(ParamId),
    /// A function (call target, or function address taken as a value).
    Func(String),
}

/// Base of an `[...]` address.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum AddrBase {
    Reg(RegId),
    Symbol(Symbol),
    /// Absolute address `[0x100]`.
    Imm(u64),
}

/// `[base + offset]`.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Address {
    pub base: AddrBase,
    pub offset: i64,
}

/// A read-only special register (`%tid.x`, `%laneid`, ...). These are not in
/// the register file: they are values the executor supplies per thread.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum SpecialReg {
    Tid(Dim),
    Ntid(Dim),
    Ctaid(Dim),
    Nctaid(Dim),
    ClusterId(Dim),
    NclusterId(Dim),
    ClusterCtaid(Dim),
    ClusterNctaid(Dim),
    ClusterCtarank,
    ClusterNctarank,
    IsExplicitCluster,
    Laneid,
    Warpid,
    Nwarpid,
    Smid,
    Nsmid,
    Gridid,
    LanemaskEq,
    LanemaskLe,
    LanemaskLt,
    LanemaskGe,
    LanemaskGt,
    Clock,
    ClockHi,
    Clock64,
    Globaltimer,
    GlobaltimerLo,
    GlobaltimerHi,
    DynamicSmemSize,
    TotalSmemSize,
    AggrSmemSize,
    /// `%reserved_smem_offset_begin`, `_end`, `_cap`: the shared memory
    /// region reserved for NVIDIA system software (cooperative groups use
    /// it for multi-warp tiles); its values are set by the driver.
    ReservedSmemBegin,
    ReservedSmemEnd,
    ReservedSmemCap,
    /// `%reserved_smem_offset_0`, `%reserved_smem_offset_1`.
    ReservedSmemOffset(u8),
    /// `%envreg0`..`%envreg31`.
    Envreg(u8),
    /// `%pm0`..`%pm7`; `%pm0_64`.. are `Pm64`.
    Pm(u8),
    Pm64(u8),
    CurrentGraphExec,
}

impl SpecialReg {
    /// Parses a special-register name including the `%` (`%tid.x`).
    pub fn parse(name: &str) -> Option<Self> {
        use SpecialReg::*;
        let body = name.strip_prefix('%')?;
        if let Some((base, dim)) = body.split_once('.') {
            let dim = Dim::parse(dim)?;
            return Some(match base {
                "tid" => Tid(dim),
                "ntid" => Ntid(dim),
                "ctaid" => Ctaid(dim),
                "nctaid" => Nctaid(dim),
                "clusterid" => ClusterId(dim),
                "nclusterid" => NclusterId(dim),
                "cluster_ctaid" => ClusterCtaid(dim),
                "cluster_nctaid" => ClusterNctaid(dim),
                _ => return None,
            });
        }
        let simple = match body {
            "cluster_ctarank" => Some(ClusterCtarank),
            "cluster_nctarank" => Some(ClusterNctarank),
            "is_explicit_cluster" => Some(IsExplicitCluster),
            "laneid" => Some(Laneid),
            "warpid" => Some(Warpid),
            "nwarpid" => Some(Nwarpid),
            "smid" => Some(Smid),
            "nsmid" => Some(Nsmid),
            "gridid" => Some(Gridid),
            "lanemask_eq" => Some(LanemaskEq),
            "lanemask_le" => Some(LanemaskLe),
            "lanemask_lt" => Some(LanemaskLt),
            "lanemask_ge" => Some(LanemaskGe),
            "lanemask_gt" => Some(LanemaskGt),
            "clock" => Some(Clock),
            "clock_hi" => Some(ClockHi),
            "clock64" => Some(Clock64),
            "globaltimer" => Some(Globaltimer),
            "globaltimer_lo" => Some(GlobaltimerLo),
            "globaltimer_hi" => Some(GlobaltimerHi),
            "dynamic_smem_size" => Some(DynamicSmemSize),
            "total_smem_size" => Some(TotalSmemSize),
            "aggr_smem_size" => Some(AggrSmemSize),
            "reserved_smem_offset_begin" => Some(ReservedSmemBegin),
            "reserved_smem_offset_end" => Some(ReservedSmemEnd),
            "reserved_smem_offset_cap" => Some(ReservedSmemCap),
            "reserved_smem_offset_0" => Some(ReservedSmemOffset(0)),
            "reserved_smem_offset_1" => Some(ReservedSmemOffset(1)),
            "current_graph_exec" => Some(CurrentGraphExec),
            _ => None,
        };
        if simple.is_some() {
            return simple;
        }
        let numbered = |prefix: &str, max: u8| -> Option<u8> {
            let digits = body.strip_prefix(prefix)?;
            let n: u8 = digits.parse().ok()?;
            (n <= max && digits == n.to_string()).then_some(n)
        };
        if let Some(rest) = body.strip_suffix("_64") {
            let digits = rest.strip_prefix("pm")?;
            let n: u8 = digits.parse().ok()?;
            return (n <= 7 && digits == n.to_string()).then_some(Pm64(n));
        }
        numbered("envreg", 31)
            .map(Envreg)
            .or_else(|| numbered("pm", 7).map(Pm))
    }

    /// The PTX name including `%`.
    pub fn name(self) -> String {
        use SpecialReg::*;
        let dimmed = |b: &str, d: Dim| format!("%{b}.{d}");
        match self {
            Tid(d) => dimmed("tid", d),
            Ntid(d) => dimmed("ntid", d),
            Ctaid(d) => dimmed("ctaid", d),
            Nctaid(d) => dimmed("nctaid", d),
            ClusterId(d) => dimmed("clusterid", d),
            NclusterId(d) => dimmed("nclusterid", d),
            ClusterCtaid(d) => dimmed("cluster_ctaid", d),
            ClusterNctaid(d) => dimmed("cluster_nctaid", d),
            ClusterCtarank => "%cluster_ctarank".into(),
            ClusterNctarank => "%cluster_nctarank".into(),
            IsExplicitCluster => "%is_explicit_cluster".into(),
            Laneid => "%laneid".into(),
            Warpid => "%warpid".into(),
            Nwarpid => "%nwarpid".into(),
            Smid => "%smid".into(),
            Nsmid => "%nsmid".into(),
            Gridid => "%gridid".into(),
            LanemaskEq => "%lanemask_eq".into(),
            LanemaskLe => "%lanemask_le".into(),
            LanemaskLt => "%lanemask_lt".into(),
            LanemaskGe => "%lanemask_ge".into(),
            LanemaskGt => "%lanemask_gt".into(),
            Clock => "%clock".into(),
            ClockHi => "%clock_hi".into(),
            Clock64 => "%clock64".into(),
            Globaltimer => "%globaltimer".into(),
            GlobaltimerLo => "%globaltimer_lo".into(),
            GlobaltimerHi => "%globaltimer_hi".into(),
            DynamicSmemSize => "%dynamic_smem_size".into(),
            TotalSmemSize => "%total_smem_size".into(),
            AggrSmemSize => "%aggr_smem_size".into(),
            ReservedSmemBegin => "%reserved_smem_offset_begin".into(),
            ReservedSmemEnd => "%reserved_smem_offset_end".into(),
            ReservedSmemCap => "%reserved_smem_offset_cap".into(),
            ReservedSmemOffset(n) => format!("%reserved_smem_offset_{n}"),
            Envreg(n) => format!("%envreg{n}"),
            Pm(n) => format!("%pm{n}"),
            Pm64(n) => format!("%pm{n}_64"),
            CurrentGraphExec => "%current_graph_exec".into(),
        }
    }

    /// The type PTX gives the register (`%tid.x` is `.u32`, `%clock64` `.u64`).
    pub fn ty(self) -> ScalarType {
        use SpecialReg::*;
        match self {
            Clock64 | Globaltimer | Gridid | Pm64(_) | CurrentGraphExec => ScalarType::U64,
            IsExplicitCluster => ScalarType::Pred,
            LanemaskEq | LanemaskLe | LanemaskLt | LanemaskGe | LanemaskGt => ScalarType::B32,
            ReservedSmemBegin | ReservedSmemEnd | ReservedSmemCap | ReservedSmemOffset(_) => {
                ScalarType::B32
            }
            _ => ScalarType::U32,
        }
    }
}

/// One instruction operand, resolved.
///
/// Decoded instructions keep their operands in PTX source order (destination
/// first, except where PTX itself puts the address first: `st`, `red`,
/// `wmma.store`, ...), with one normalisation: a `d|p` pair destination is
/// split into two positions, the second being [`Operand::Sink`] when absent.
/// Each [`crate::Instr`] variant documents its operand layout.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum Operand {
    Reg(RegId),
    /// Lane of a vector register (`%v.x`), `lane` 0..4.
    RegLane {
        reg: RegId,
        lane: u8,
    },
    Special(SpecialReg),
    Imm(Imm),
    /// A symbol used as a value: the address of a variable / param / function
    /// plus a byte offset (`mov.u64 %rd1, smem;`, `mov.u32 %r, arr+8;`).
    Symbol {
        sym: Symbol,
        offset: i64,
    },
    /// `[base+offset]`.
    Addr(Address),
    /// A tensor-map address with coordinates, `[tmap, {c0, c1}]` (TMA
    /// `cp.async.bulk.tensor`; `im2col` adds a second vector of offsets):
    /// the tensor map's address and the operands after it, as written.
    TensorAddr {
        tmap: Address,
        coords: Vec<Operand>,
    },
    /// `{a, b, c, d}` brace vector.
    Vector(Vec<Operand>),
    /// `_`.
    Sink,
    /// `!%p` (negated predicate source).
    Not(Box<Operand>),
    /// A branch / call-prototype target, resolved.
    Label(LabelId),
    /// `(a, b)` parenthesised list (call return / argument lists).
    List(Vec<Operand>),
    /// `%r|%p` as written. Only appears in decoder *input*; decoded
    /// instructions carry the two halves as separate operands.
    Pair(Box<Operand>, Box<Operand>),
}

impl Operand {
    /// Appends every register this operand mentions: plain and lane
    /// registers, address bases, and the registers inside vectors, lists,
    /// negations and pairs (the one walk every register analysis shares).
    pub fn collect_regs(&self, out: &mut Vec<RegId>) {
        match self {
            Operand::Reg(r) | Operand::RegLane { reg: r, .. } => out.push(*r),
            Operand::Addr(a) => {
                if let AddrBase::Reg(r) = a.base {
                    out.push(r);
                }
            }
            Operand::Vector(v) | Operand::List(v) => v.iter().for_each(|o| o.collect_regs(out)),
            Operand::TensorAddr { tmap, coords } => {
                if let AddrBase::Reg(r) = tmap.base {
                    out.push(r);
                }
                coords.iter().for_each(|o| o.collect_regs(out));
            }
            Operand::Not(o) => o.collect_regs(out),
            Operand::Pair(a, b) => {
                a.collect_regs(out);
                b.collect_regs(out);
            }
            _ => {}
        }
    }

    /// The register, if this is a plain register operand.
    pub fn as_reg(&self) -> Option<RegId> {
        match self {
            Operand::Reg(r) => Some(*r),
            _ => None,
        }
    }

    /// The address, if this is `[...]`.
    pub fn as_addr(&self) -> Option<&Address> {
        match self {
            Operand::Addr(a) => Some(a),
            _ => None,
        }
    }

    /// The integer value, if this is an integer immediate.
    pub fn as_int(&self) -> Option<i128> {
        match self {
            Operand::Imm(Imm::Int(v)) => Some(*v),
            _ => None,
        }
    }

    /// The register parts of a brace-vector operand; any other operand
    /// (a single register) is a one-element vector.
    pub fn parts(&self) -> &[Operand] {
        match self {
            Operand::Vector(v) => v,
            other => std::slice::from_ref(other),
        }
    }

    /// Elements of a brace vector.
    pub fn as_vector(&self) -> Option<&[Operand]> {
        match self {
            Operand::Vector(v) => Some(v),
            _ => None,
        }
    }

    /// True for operands that can receive a value: a register, a lane of a
    /// vector register, or the sink `_`.
    pub fn is_writable(&self) -> bool {
        matches!(
            self,
            Operand::Reg(_) | Operand::RegLane { .. } | Operand::Sink
        )
    }

    /// True for values that can be read: register, special register,
    /// immediate, symbol address, or a negated predicate.
    pub fn is_value(&self) -> bool {
        matches!(
            self,
            Operand::Reg(_)
                | Operand::RegLane { .. }
                | Operand::Special(_)
                | Operand::Imm(_)
                | Operand::Symbol { .. }
                | Operand::Not(_)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_regs_round_trip() {
        for name in [
            "%tid.x",
            "%ntid.z",
            "%ctaid.y",
            "%nctaid.x",
            "%laneid",
            "%lanemask_lt",
            "%clock64",
            "%cluster_ctarank",
            "%cluster_ctaid.x",
            "%envreg3",
            "%pm7",
            "%pm2_64",
            "%dynamic_smem_size",
            "%reserved_smem_offset_begin",
            "%reserved_smem_offset_end",
            "%reserved_smem_offset_cap",
            "%reserved_smem_offset_0",
            "%reserved_smem_offset_1",
        ] {
            let s = SpecialReg::parse(name).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(s.name(), name);
        }
        for bad in [
            "%tid",
            "%tid.w",
            "%r1",
            "tid.x",
            "%envreg32",
            "%pm8",
            "%pm01",
            "%reserved_smem_offset_2",
            "%reserved_smem_offset",
            "%reserved_smem_offset_01",
        ] {
            assert_eq!(SpecialReg::parse(bad), None, "{bad}");
        }
        assert_eq!(SpecialReg::parse("%clock64").unwrap().ty(), ScalarType::U64);
    }
}
