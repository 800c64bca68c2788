//! The validated check spec. Every value here has passed the checks in
//! `validate`, so consumers (the CLI, the passes) never re-check the basics.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::bindings::{FunctionBinding, GlobalBinding, StructField, Values};
use crate::dtype::{DType, Role};
use crate::verdict::{CaseKind, Verdict};

/// One check: which kernels, how they are launched, what their params are
/// bound to, and (in the corpus) which verdict it must reach.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CheckSpec {
    /// One line: what the case exercises and why the expected verdict is
    /// right. Required in the corpus, optional elsewhere.
    pub note: Option<String>,
    pub launch: Launch,
    pub kernels: Kernels,
    pub tensors: BTreeMap<String, TensorSpec>,
    pub scalars: BTreeMap<String, ScalarValue>,
    /// The expected outcome (corpus only).
    pub expect: Option<Expect>,
    /// `[functions]`: `.func` name → what calls of it compute.
    pub functions: BTreeMap<String, FunctionBinding>,
    /// `[globals]`: module-scope variable name → its contents at launch.
    pub globals: BTreeMap<String, GlobalBinding>,
    /// Bounds on the work of the check (`[limits]`).
    pub limits: RunLimits,
    /// `[tensor_maps]`: TMA tensor maps by name (`tensor_map.rs`).
    #[serde(default)]
    pub tensor_maps: BTreeMap<String, crate::tensor_map::TensorMapSpec>,
    /// Where each key was written (empty for a spec built from flags), so
    /// errors found against the kernel point at the spec line.
    pub locations: crate::SpecLocations,
}

/// Thread-instructions one CTA may execute by default: about 5–10 s of
/// simulation at the engine's 10–20 M thread-instructions/s, over ten
/// times the largest CTA of the corpus (8.6 M, FlashAttention-2 with 512
/// keys), so a loop that never ends is stopped within seconds.
pub const DEFAULT_MAX_STEPS: u64 = 100_000_000;

/// CTAs one check may simulate by default. Every CTA's run (its path
/// trace, footprint and, for `check`, its symbolic state) is kept until
/// the verdict, so memory and time grow with the number of CTAs; a
/// thousand small CTAs take seconds and well under a GiB.
pub const DEFAULT_MAX_CTAS: u64 = 1024;

/// Bounds on the work of one check (`[limits]` in the spec, `--max-steps`
/// / `--max-ctas` on the command line). A bound exists only to keep time
/// and memory finite; hitting one makes the verdict `unsupported`, naming
/// the bound, never a wrong answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RunLimits {
    /// Thread-instructions per CTA.
    pub max_steps: u64,
    /// CTAs simulated (`launch.ctas` selects them; `"all"` means the
    /// whole grid).
    pub max_ctas: u64,
}

impl Default for RunLimits {
    fn default() -> Self {
        RunLimits {
            max_steps: DEFAULT_MAX_STEPS,
            max_ctas: DEFAULT_MAX_CTAS,
        }
    }
}

impl CheckSpec {
    /// Whether this spec compares two kernels or checks one.
    pub fn kind(&self) -> CaseKind {
        self.kernels.kind()
    }
}

/// The launch configuration: the spec's shared `[launch]`, and — resolved
/// per kernel in [`KernelRef::launch`] — that table with the kernel's own
/// `[reference.launch]` / `[candidate.launch]` keys laid over it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Launch {
    /// Threads per CTA. `None`: take it from the entry's `.reqntid` or
    /// `.maxntid` (resolved once the PTX is parsed).
    pub block: Option<[u32; 3]>,
    /// CTAs in the grid; `[1, 1, 1]` by default.
    pub grid: [u32; 3],
    /// Which CTAs are simulated.
    pub ctas: Ctas,
    /// Bytes behind `.extern .shared`.
    pub dynamic_shared: u32,
    /// CTAs per thread-block cluster (`cluster = [2, 1, 1]`). `None`: the
    /// entry's `.reqnctapercluster` if it has one, else no explicit
    /// cluster (every CTA is a cluster of one). Each extent divides the
    /// grid's (checked here), and a PTX `.reqnctapercluster` must agree
    /// (checked once the PTX is bound, `ptxeq_exec::CtaInput`).
    pub cluster: Option<[u32; 3]>,
    /// `ctas = "auto"` scans at most this many CTAs of the grid (a time
    /// bound: each scanned CTA runs its store-address slice); beyond it
    /// every CTA is selected. `None`: [`DEFAULT_AUTO_SCAN_LIMIT`].
    pub auto_scan_limit: Option<u64>,
}

/// Default [`Launch::auto_scan_limit`]: a 1024 × 1024 grid.
pub const DEFAULT_AUTO_SCAN_LIMIT: u64 = 1 << 20;

impl Launch {
    /// The `auto` scan limit in effect.
    pub fn scan_limit(&self) -> u64 {
        self.auto_scan_limit.unwrap_or(DEFAULT_AUTO_SCAN_LIMIT)
    }

    /// CTAs in the grid (saturating: three `u32` extents can exceed `u64`).
    pub fn grid_ctas(&self) -> u64 {
        self.grid
            .iter()
            .map(|&d| u64::from(d))
            .fold(1u64, u64::saturating_mul)
    }

    /// How many CTAs this launch asks for, without listing them (a grid
    /// may have 2⁶³ CTAs). `auto` counts the whole grid: what it selects
    /// is known only after its scan (the db bounds the selection itself).
    pub fn asked_ctas(&self) -> u64 {
        match &self.ctas {
            Ctas::First => 1,
            Ctas::All | Ctas::Auto => self.grid_ctas(),
            Ctas::List(l) => l.len() as u64,
        }
    }
}

impl Default for Launch {
    fn default() -> Self {
        Launch {
            block: None,
            grid: [1, 1, 1],
            ctas: Ctas::First,
            dynamic_shared: 0,
            cluster: None,
            auto_scan_limit: None,
        }
    }
}

/// Which CTAs of the grid a check simulates.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ctas {
    /// CTA (0, 0, 0) only: enough when CTAs are independent by construction.
    First,
    /// Every CTA; global writes of different CTAs must also be disjoint.
    All,
    /// Per kernel, exactly the CTAs whose global writes fall in the
    /// compared elements (every tensor's `compare` region, a whole tensor
    /// where it has none); every CTA when no tensor has a `compare`.
    /// Found by the checker (an over-approximation, never missing a
    /// writer), and listed in the report.
    Auto,
    /// These CTA ids (each inside the grid, no duplicates).
    List(Vec<[u32; 3]>),
}

/// The kernels of a check.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kernels {
    /// An equivalence check of `candidate` against `reference`.
    Pair {
        reference: KernelRef,
        candidate: KernelRef,
    },
    /// A single-kernel check (races, deadlocks, divergence, bounds).
    Single(KernelRef),
    /// An equivalence check of `candidate` against a formula (issue 16):
    /// `[reference] formula = "…"` or `formula_file = "…"`.
    Formula {
        formula: FormulaRef,
        candidate: KernelRef,
    },
}

/// A formula reference: the intended math of the candidate's outputs in
/// the formula language (crate `ptxeq-formula`), compiled against the
/// spec's tensors and scalars when the check runs.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FormulaRef {
    /// The formula's text (read from `file` when the spec names one).
    pub text: String,
    /// `formula_file`, resolved against the spec's directory.
    pub file: Option<PathBuf>,
}

impl FormulaRef {
    /// The name diagnostics use for the formula's text: its file, or
    /// `[reference] formula` for an inline one.
    pub fn origin(&self) -> String {
        match &self.file {
            Some(p) => p.display().to_string(),
            None => "[reference] formula".to_owned(),
        }
    }
}

impl Kernels {
    /// Whether this is a pair or a single kernel.
    pub fn kind(&self) -> CaseKind {
        match self {
            Kernels::Pair { .. } | Kernels::Formula { .. } => CaseKind::Pair,
            Kernels::Single(_) => CaseKind::Single,
        }
    }

    /// The kernels with their role names (`reference`, `candidate`, `kernel`),
    /// which are also the spec table names (a formula reference is not a
    /// kernel: only the candidate is listed).
    pub fn iter(&self) -> Vec<(&'static str, &KernelRef)> {
        match self {
            Kernels::Pair {
                reference,
                candidate,
            } => vec![("reference", reference), ("candidate", candidate)],
            Kernels::Single(k) => vec![("kernel", k)],
            Kernels::Formula { candidate, .. } => vec![("candidate", candidate)],
        }
    }

    /// The formula reference, when the reference is one.
    pub fn formula(&self) -> Option<&FormulaRef> {
        match self {
            Kernels::Formula { formula, .. } => Some(formula),
            _ => None,
        }
    }
}

/// One kernel: a PTX file, an entry in it, and what each param is bound to.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct KernelRef {
    /// The PTX file, already resolved against the spec file's directory.
    pub ptx: PathBuf,
    /// The `.entry` name; `None` when the file must have exactly one.
    pub entry: Option<String>,
    /// One binding per kernel param, in declaration order.
    pub params: Vec<ParamBinding>,
    /// How this kernel is launched: the shared `[launch]` with this
    /// kernel's own `[<table>.launch]` keys laid over it.
    pub launch: Launch,
}

/// What a kernel param receives.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ParamBinding {
    /// The base address of this tensor.
    Tensor(String),
    /// The value of this scalar.
    Scalar(String),
    /// `"_"`: the param is not used by the kernel (e.g. Triton's hidden
    /// pointers); reading it is an error.
    Unused,
    /// A by-value aggregate (`.param .align A .b8 s[N]`) bound field by
    /// field; bytes no field covers read as unused.
    Struct(Vec<StructField>),
    /// A by-value `CUtensorMap` (`.param .align 64 .b8 tm[128]`): the
    /// `[tensor_maps]` entry of this name. Its bytes are opaque.
    #[serde(rename = "tensor_map")]
    TensorMap(String),
}

impl ParamBinding {
    /// The spec word: the tensor / scalar name, or `_`.
    pub fn name(&self) -> &str {
        match self {
            ParamBinding::Tensor(n) | ParamBinding::Scalar(n) | ParamBinding::TensorMap(n) => n,
            ParamBinding::Unused => "_",
            ParamBinding::Struct(_) => "{struct}",
        }
    }
}

/// A tensor bound to a pointer param.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TensorSpec {
    pub role: Role,
    pub dtype: DType,
    /// Row-major extents, outermost first; non-empty, no zero extent.
    pub shape: Vec<u64>,
    /// `compare = [[lo, hi], ...]`: only the elements in this box (one
    /// half-open range per dimension) are compared; `None`: all of them.
    /// Output / inout tensors only.
    pub compare: Option<Vec<[u64; 2]>>,
    /// Concrete contents at launch (`values = …`), for input, inout and
    /// scratch tensors; `None`: symbolic (input, inout) or unwritten
    /// (output, scratch).
    pub values: Option<Values>,
}

impl TensorSpec {
    /// Number of elements, `None` on overflow.
    pub fn elements(&self) -> Option<u64> {
        self.shape
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(d))
    }

    /// Bytes the tensor occupies, `None` on overflow.
    pub fn byte_size(&self) -> Option<u64> {
        self.elements()?.checked_mul(self.dtype.size_bytes())
    }

    /// Whether flat (row-major) element `index` is compared: inside the
    /// `compare` box, or any element when there is none.
    pub fn is_compared(&self, index: u64) -> bool {
        in_region(self.compare.as_deref(), &self.shape, index)
    }
}

/// Whether flat (row-major) element `index` of a tensor of `shape` lies in
/// `region` (one half-open `[lo, hi)` per dimension; `None`: everywhere).
pub fn in_region(region: Option<&[[u64; 2]]>, shape: &[u64], mut index: u64) -> bool {
    let Some(region) = region else {
        return true;
    };
    for (&d, r) in shape.iter().zip(region).rev() {
        if d == 0 {
            return false;
        }
        let c = index % d;
        index /= d;
        if c < r[0] || c >= r[1] {
            return false;
        }
    }
    true
}

/// A compare region in the spec's words: `[[0, 64], [0, 64]]`.
pub fn show_region(region: &[[u64; 2]]) -> String {
    let parts: Vec<String> = region
        .iter()
        .map(|r| format!("[{}, {}]", r[0], r[1]))
        .collect();
    format!("[{}]", parts.join(", "))
}

impl fmt::Display for TensorSpec {
    /// The flag form without the name: `f32[128,4]:in`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<String> = self.shape.iter().map(u64::to_string).collect();
        let role = match self.role {
            Role::Input => "in",
            Role::Output => "out",
            Role::InOut => "inout",
            Role::Scratch => "scratch",
        };
        write!(f, "{}[{}]:{role}", self.dtype, dims.join(","))
    }
}

/// The value of a scalar param.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ScalarValue {
    Int(i64),
    Float(F64),
    /// `alpha = { dtype = "f32" }`: no value — a free real symbol in the
    /// terms (named after the scalar, shared by both kernels). Floating
    /// dtypes only: integer scalars drive control flow and addresses and
    /// stay concrete.
    Symbolic {
        dtype: DType,
    },
}

impl ScalarValue {
    /// A float scalar.
    pub fn float(v: f64) -> Self {
        ScalarValue::Float(F64::new(v))
    }

    /// The dtype of a symbolic scalar.
    pub fn symbolic(&self) -> Option<DType> {
        match self {
            ScalarValue::Symbolic { dtype } => Some(*dtype),
            _ => None,
        }
    }
}

impl fmt::Display for ScalarValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScalarValue::Int(v) => write!(f, "{v}"),
            ScalarValue::Float(v) => write!(f, "{:?}", v.get()),
            ScalarValue::Symbolic { dtype } => write!(f, "symbolic {dtype}"),
        }
    }
}

/// An `f64` compared and hashed by its bit pattern, so specs can be `Eq +
/// Hash` (salsa inputs and cache keys). `-0.0` and `0.0` differ; a NaN
/// equals the same NaN.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(from = "f64", into = "f64")]
pub struct F64(u64);

impl F64 {
    pub fn new(v: f64) -> Self {
        F64(v.to_bits())
    }

    pub fn get(self) -> f64 {
        f64::from_bits(self.0)
    }

    pub fn to_bits(self) -> u64 {
        self.0
    }
}

impl From<f64> for F64 {
    fn from(v: f64) -> Self {
        F64::new(v)
    }
}

impl From<F64> for f64 {
    fn from(v: F64) -> Self {
        v.get()
    }
}

impl fmt::Debug for F64 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.get())
    }
}

/// The expected outcome of a corpus case.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Expect {
    pub verdict: Verdict,
    /// With `unsupported`: the expected reason, in words.
    pub reason: Option<String>,
    pub status: Status,
    /// With `status = "pending"`: which capability is missing.
    pub pending: Option<String>,
    /// A full-size case (minutes and GiBs, e.g. a 4096-sized GEMM): the
    /// default corpus test lists it as ignored and the corpus-wide
    /// auxiliary tests skip it; `-- --include-ignored` runs it.
    pub heavy: bool,
}

/// Whether the tool is expected to reach the verdict today.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    #[default]
    Active,
    /// The tool cannot reach this verdict yet; the case is still checked
    /// for consistency.
    Pending,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Status::Active => "active",
            Status::Pending => "pending",
        })
    }
}
