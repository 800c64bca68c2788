//! Keyword-like enums shared by declarations and instructions: scalar types,
//! state spaces, rounding modes, comparison operators, memory orderings.
//!
//! Every enum here round-trips through its PTX spelling (without the leading
//! dot): `T::parse(t.as_str()) == Some(t)`. The decoder is built on `parse`,
//! the text dump on `as_str`, so the two can never drift apart.

use serde::{Deserialize, Serialize};

/// Declares a fieldless enum whose variants map 1:1 to PTX keywords.
///
/// Generates `parse`, `as_str`, `ALL` and `Display`. Extra spellings that
/// parse to an existing variant (aliases) are given after `;`.
macro_rules! kw_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $var:ident = $text:literal ),+ $(,)?
        }
        $( ; aliases { $( $alias:literal => $avar:ident ),* $(,)? } )?
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum $name {
            $( $(#[$vmeta])* $var ),+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$var),+];

            /// Parses the PTX spelling (no leading dot).
            pub fn parse(s: &str) -> Option<Self> {
                match s {
                    $( $text => Some($name::$var), )+
                    $( $( $alias => Some($name::$avar), )* )?
                    _ => None,
                }
            }

            /// The canonical PTX spelling (no leading dot).
            pub fn as_str(self) -> &'static str {
                match self {
                    $( $name::$var => $text, )+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
pub(crate) use kw_enum;

kw_enum! {
    /// A PTX fundamental type as written in a declaration or instruction
    /// (`.f32`, `.b64`, `.pred`, packed `.f16x2`, fp8 `.e4m3`, ...).
    pub enum ScalarType {
        B1 = "b1", B8 = "b8", B16 = "b16", B32 = "b32", B64 = "b64", B128 = "b128",
        U4 = "u4", U8 = "u8", U16 = "u16", U32 = "u32", U64 = "u64",
        S4 = "s4", S8 = "s8", S16 = "s16", S32 = "s32", S64 = "s64",
        U16x2 = "u16x2", S16x2 = "s16x2",
        F16 = "f16", F16x2 = "f16x2", Bf16 = "bf16", Bf16x2 = "bf16x2",
        Tf32 = "tf32", F32 = "f32", F32x2 = "f32x2", F64 = "f64",
        E4m3 = "e4m3", E5m2 = "e5m2", E4m3x2 = "e4m3x2", E5m2x2 = "e5m2x2",
        E2m1 = "e2m1", E2m3 = "e2m3", E3m2 = "e3m2",
        E2m1x2 = "e2m1x2", E2m3x2 = "e2m3x2", E3m2x2 = "e3m2x2", Ue8m0x2 = "ue8m0x2",
        Pred = "pred",
    }
}

impl ScalarType {
    /// Width in bits of one value of this type (a packed `x2` type counts both
    /// lanes; `.pred` counts as 1).
    pub fn bit_width(self) -> u32 {
        use ScalarType::*;
        match self {
            B1 | Pred => 1,
            U4 | S4 | E2m1 => 4,
            E2m3 | E3m2 => 6,
            B8 | U8 | S8 | E4m3 | E5m2 | E2m1x2 => 8,
            B16 | U16 | S16 | F16 | Bf16 | E4m3x2 | E5m2x2 | Ue8m0x2 => 16,
            E2m3x2 | E3m2x2 => 16,
            B32 | U32 | S32 | U16x2 | S16x2 | F16x2 | Bf16x2 | Tf32 | F32 => 32,
            B64 | U64 | S64 | F64 | F32x2 => 64,
            B128 => 128,
        }
    }

    /// Size in bytes as laid out in memory (at least one byte).
    pub fn size_bytes(self) -> u64 {
        u64::from(self.bit_width().div_ceil(8))
    }

    /// Floating-point types, packed and fp8/fp6/fp4 formats included.
    pub fn is_float(self) -> bool {
        use ScalarType::*;
        matches!(
            self,
            F16 | F16x2
                | Bf16
                | Bf16x2
                | Tf32
                | F32
                | F32x2
                | F64
                | E4m3
                | E5m2
                | E4m3x2
                | E5m2x2
                | E2m1
                | E2m3
                | E3m2
                | E2m1x2
                | E2m3x2
                | E3m2x2
                | Ue8m0x2
        )
    }

    /// Signed integer types (`.sN`, `.s16x2`).
    pub fn is_signed(self) -> bool {
        use ScalarType::*;
        matches!(self, S4 | S8 | S16 | S32 | S64 | S16x2)
    }

    /// Unsigned integer types (`.uN`, `.u16x2`).
    pub fn is_unsigned(self) -> bool {
        use ScalarType::*;
        matches!(self, U4 | U8 | U16 | U32 | U64 | U16x2)
    }

    /// Untyped bit types (`.bN`).
    pub fn is_bits(self) -> bool {
        use ScalarType::*;
        matches!(self, B1 | B8 | B16 | B32 | B64 | B128)
    }

    /// Integer or bit type (what integer arithmetic accepts).
    pub fn is_int(self) -> bool {
        self.is_signed() || self.is_unsigned() || self.is_bits()
    }

    /// Packed two-lane types (`.f16x2`, `.bf16x2`, `.u16x2`, ...).
    pub fn is_packed(self) -> bool {
        use ScalarType::*;
        matches!(
            self,
            U16x2
                | S16x2
                | F16x2
                | Bf16x2
                | F32x2
                | E4m3x2
                | E5m2x2
                | E2m1x2
                | E2m3x2
                | E3m2x2
                | Ue8m0x2
        )
    }
}

kw_enum! {
    /// A PTX state space. `.shared` and `.shared::cta` are the same space;
    /// `.shared::cluster` addresses any CTA's shared memory in the cluster.
    /// `.param::entry`/`.param::func` parse to [`StateSpace::Param`].
    pub enum StateSpace {
        Reg = "reg", Sreg = "sreg", Const = "const", Global = "global",
        Local = "local", Param = "param", Shared = "shared",
        SharedCluster = "shared::cluster", Tex = "tex",
        /// Not a PTX keyword: an access without a space (`ld.f32`) is generic.
        Generic = "generic",
    }
    ; aliases { "shared::cta" => Shared, "param::entry" => Param, "param::func" => Param }
}

kw_enum! {
    /// Memory-consistency scope (`.cta`, `.cluster`, `.gpu`, `.sys`).
    pub enum Scope { Cta = "cta", Cluster = "cluster", Gpu = "gpu", Sys = "sys" }
}

kw_enum! {
    /// Memory-ordering semantics of a memory operation or fence.
    pub enum MemSem {
        Weak = "weak", Relaxed = "relaxed", Acquire = "acquire", Release = "release",
        AcqRel = "acq_rel", Sc = "sc", Volatile = "volatile", Mmio = "mmio",
    }
}

kw_enum! {
    /// Rounding modifier: float rounding (`.rn` ...) and round-to-integer
    /// (`.rni` ...) forms, plus `.rna` (cvt to tf32) and `.rs` (stochastic).
    pub enum Rounding {
        Rn = "rn", Rz = "rz", Rm = "rm", Rp = "rp", Rna = "rna", Rs = "rs",
        Rni = "rni", Rzi = "rzi", Rmi = "rmi", Rpi = "rpi",
    }
}

kw_enum! {
    /// Comparison operator of `setp`/`set`/`slct`. `lo/ls/hi/hs` are the
    /// unsigned spellings; `equ..geu`, `num`, `nan` the unordered float ones.
    pub enum CmpOp {
        Eq = "eq", Ne = "ne", Lt = "lt", Le = "le", Gt = "gt", Ge = "ge",
        Lo = "lo", Ls = "ls", Hi = "hi", Hs = "hs",
        Equ = "equ", Neu = "neu", Ltu = "ltu", Leu = "leu", Gtu = "gtu", Geu = "geu",
        Num = "num", Nan = "nan",
    }
}

kw_enum! {
    /// Boolean combining operator (`setp.lt.and`, `vote`-free `bar.red`, lop3 form).
    pub enum BoolOp { And = "and", Or = "or", Xor = "xor" }
}

kw_enum! {
    /// Integer multiply result selection.
    pub enum MulMode { Lo = "lo", Hi = "hi", Wide = "wide" }
}

kw_enum! {
    /// Load cache operators (`.ca .cg .cs .lu .cv`) and store ones (`.wb .wt`).
    pub enum CacheOp {
        Ca = "ca", Cg = "cg", Cs = "cs", Lu = "lu", Cv = "cv", Wb = "wb", Wt = "wt",
    }
}

kw_enum! {
    /// Level-qualified cache hints: eviction priorities and prefetch sizes.
    pub enum CacheHint {
        L1EvictNormal = "L1::evict_normal", L1EvictUnchanged = "L1::evict_unchanged",
        L1EvictFirst = "L1::evict_first", L1EvictLast = "L1::evict_last",
        L1NoAllocate = "L1::no_allocate",
        L2EvictNormal = "L2::evict_normal", L2EvictFirst = "L2::evict_first",
        L2EvictLast = "L2::evict_last",
        L2CacheHint = "L2::cache_hint",
        L2Prefetch64B = "L2::64B", L2Prefetch128B = "L2::128B", L2Prefetch256B = "L2::256B",
    }
}

kw_enum! {
    /// `x`, `y`, `z` component of a three-dimensional special register.
    pub enum Dim { X = "x", Y = "y", Z = "z" }
}
