//! Turning `SPEC.toml` / `KERNEL.ptx --spec S.toml` / flag-form arguments
//! into a [`CheckSpec`] and the PTX files it names, registered in the
//! database.

use std::path::{Path, PathBuf};

use clap::Args;
use ptxeq_db::{Database, Slot, SpecInput};
use ptxeq_spec::{CheckSpec, LaunchFlags, SpecFlags};

use crate::input;

/// Launch and tensor flags, for checking a kernel without a spec file.
#[derive(Args, Debug, Default, Clone)]
pub struct SpecFlagArgs {
    /// The check spec (`check.toml`) that describes the launch and tensors.
    #[arg(long, value_name = "SPEC.toml")]
    pub spec: Option<PathBuf>,
    /// The `.entry` to check when a PTX file has several (mangled name).
    #[arg(long, short)]
    pub entry: Option<String>,
    /// Threads per CTA: `128`, `128,1,1` or `16x16` (default: `.reqntid`).
    #[arg(long)]
    pub block: Option<String>,
    /// CTAs in the grid: `4`, `4,2,1` or `4x2` (default 1).
    #[arg(long)]
    pub grid: Option<String>,
    /// Which CTAs to run: `first` (default), `all`, or `x,y,z;x,y,z`.
    #[arg(long)]
    pub ctas: Option<String>,
    /// Bytes of dynamic shared memory (`.extern .shared`).
    #[arg(long, value_name = "BYTES")]
    pub dynamic_shared: Option<u32>,
    /// CTAs per thread-block cluster: `2`, `2,1,1` or `2x2` (default: the
    /// entry's `.reqnctapercluster`, else no explicit clusters).
    #[arg(long, value_name = "DIMS")]
    pub cluster: Option<String>,
    /// A tensor param: `name:dtype[d0,d1,...]:role` with role in|out|inout,
    /// e.g. `x:f32[128]:in`; or `scratch`, a workspace never compared that
    /// one or both kernels use, e.g. `m_ws:f32[64]:scratch`. Repeat for
    /// each tensor.
    #[arg(long = "tensor", value_name = "NAME:DTYPE[SHAPE]:ROLE")]
    pub tensors: Vec<String>,
    /// A scalar param: `name=value`, e.g. `n=128`. Repeat for each scalar.
    #[arg(long = "scalar", value_name = "NAME=VALUE")]
    pub scalars: Vec<String>,
    /// The kernel's params in order, by tensor/scalar name, `_` for unused:
    /// `x,y,n,_` (default: the tensors in flag order, then the scalars).
    /// A by-value struct param is bound field by field in braces,
    /// `name@offset` for a tensor, `name:dtype@offset` for a scalar:
    /// `--params 'x,{a@0,b@8,n:s32@16}'`.
    #[arg(long)]
    pub params: Option<String>,
    /// Compare only this box of a tensor: `NAME=LO:HI,LO:HI`, one half-open
    /// range per dimension (spec: `compare = [[LO, HI], ...]`), e.g.
    /// `C=0:64,0:64`. Repeat for each tensor.
    #[arg(long = "compare", value_name = "NAME=LO:HI,...")]
    pub compares: Vec<String>,
    /// With `--ctas auto`: scan at most N CTAs for writes into the compared
    /// region (default 1048576); a larger grid runs every CTA.
    #[arg(long, value_name = "N")]
    pub auto_scan_limit: Option<u64>,
    /// Most thread-instructions one CTA may execute before the run stops
    /// as `unsupported` (step limit), naming the loop it spins in;
    /// overrides the spec's `[limits] max_steps` (default 100000000).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_steps: Option<u64>,
    /// Most CTAs one check may simulate; a spec asking for more is
    /// refused as `unsupported` before anything runs; overrides the
    /// spec's `[limits] max_ctas` (default 1024).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_ctas: Option<u64>,
    /// Concrete contents of an input, inout or scratch tensor (the verdict
    /// then holds for these values only; gathers/scatters through it get
    /// concrete addresses): `--values idx=3,1,2,0`, `--values idx=iota`,
    /// `--values ws=zeros`, `--values idx=@idx.txt`. Repeat per tensor.
    #[arg(long = "values", value_name = "NAME=VALUES")]
    pub values: Vec<String>,
    /// Bind a `.func` (a bodiless `.extern .func`, or one whose body is
    /// to be replaced) by PTX or unmangled C++ name to a real function
    /// (exp, exp2, exp10, expm1, log, log2, log10, log1p, sqrt, rsqrt,
    /// recip, tanh, sinh, cosh, sin, cos, erf, abs, pow, min, max) or to an
    /// uninterpreted function symbol: `--function my_exp=exp`,
    /// `--function g=uninterpreted`. Repeat per function.
    #[arg(long = "function", value_name = "NAME=FUNCTION")]
    pub functions: Vec<String>,
    /// Give a module-scope `.global`/`.const` variable values at launch or
    /// declare its contents inputs (instead of its initialiser):
    /// `--global MAX_KEY=32`, `--global table=1,2,3:s32`,
    /// `--global c_weights=input:f32`. Repeat per variable.
    #[arg(long = "global", value_name = "NAME=VALUES[:DTYPE]")]
    pub globals: Vec<String>,
}

impl SpecFlagArgs {
    /// The spec with the limit flags applied (they override `[limits]`).
    fn with_limits(&self, mut spec: CheckSpec) -> CheckSpec {
        if let Some(n) = self.max_steps {
            spec.limits.max_steps = n;
        }
        if let Some(n) = self.max_ctas {
            spec.limits.max_ctas = n;
        }
        spec
    }

    fn has_launch_flags(&self) -> bool {
        self.block.is_some()
            || self.grid.is_some()
            || self.ctas.is_some()
            || self.dynamic_shared.is_some()
            || self.cluster.is_some()
            || !self.tensors.is_empty()
            || !self.scalars.is_empty()
            || self.params.is_some()
            || !self.compares.is_empty()
            || self.auto_scan_limit.is_some()
            || !self.values.is_empty()
            || !self.functions.is_empty()
            || !self.globals.is_empty()
    }
}

/// A kernel's own launch keys in the flag form of a pair check
/// (`[reference.launch]` / `[candidate.launch]`): each overrides the shared
/// `--block` / `--grid` / `--ctas` / `--dynamic-shared` for one kernel.
#[derive(Args, Debug, Default, Clone)]
pub struct PairLaunchArgs {
    /// The reference's threads per CTA (`[reference.launch] block`).
    #[arg(long, value_name = "DIMS")]
    pub ref_block: Option<String>,
    /// The reference's grid (`[reference.launch] grid`).
    #[arg(long, value_name = "DIMS")]
    pub ref_grid: Option<String>,
    /// The reference's CTAs to run (`[reference.launch] ctas`).
    #[arg(long, value_name = "CTAS")]
    pub ref_ctas: Option<String>,
    /// The reference's dynamic shared memory bytes.
    #[arg(long, value_name = "BYTES")]
    pub ref_dynamic_shared: Option<u32>,
    /// The candidate's threads per CTA (`[candidate.launch] block`).
    #[arg(long, value_name = "DIMS")]
    pub cand_block: Option<String>,
    /// The candidate's grid (`[candidate.launch] grid`).
    #[arg(long, value_name = "DIMS")]
    pub cand_grid: Option<String>,
    /// The candidate's CTAs to run (`[candidate.launch] ctas`).
    #[arg(long, value_name = "CTAS")]
    pub cand_ctas: Option<String>,
    /// The candidate's dynamic shared memory bytes.
    #[arg(long, value_name = "BYTES")]
    pub cand_dynamic_shared: Option<u32>,
}

impl PairLaunchArgs {
    /// Whether any per-kernel key is given.
    pub fn is_empty(&self) -> bool {
        self.reference().is_empty() && self.candidate().is_empty()
    }

    fn reference(&self) -> LaunchFlags {
        LaunchFlags {
            block: self.ref_block.clone(),
            grid: self.ref_grid.clone(),
            ctas: self.ref_ctas.clone(),
            dynamic_shared: self.ref_dynamic_shared,
        }
    }

    fn candidate(&self) -> LaunchFlags {
        LaunchFlags {
            block: self.cand_block.clone(),
            grid: self.cand_grid.clone(),
            ctas: self.cand_ctas.clone(),
            dynamic_shared: self.cand_dynamic_shared,
        }
    }
}

/// A loaded spec plus the registered PTX file of each kernel it names
/// (the facade's request input).
pub use ptxeq_check::Loaded as LoadedSpec;

/// Resolves `target` (a `.toml` spec, or a `.ptx` kernel with `--spec` or
/// flags) into a spec and its kernels. Errors are printed; `None` means
/// invalid input (exit 3).
pub fn load(db: &Database, target: &Path, args: &SpecFlagArgs) -> Option<LoadedSpec> {
    let is_toml = target.extension().is_some_and(|e| e == "toml");
    let (spec_path, spec) = if is_toml {
        if args.spec.is_some() || args.has_launch_flags() {
            eprintln!(
                "error: {} is a spec; launch flags and --spec go with a PTX file",
                target.display()
            );
            return None;
        }
        (target.to_path_buf(), load_toml(target)?)
    } else if let Some(s) = &args.spec {
        (s.clone(), load_toml(s)?)
    } else {
        let flags = SpecFlags {
            ptx: vec![target.to_path_buf()],
            entry: args.entry.clone(),
            params: args.params.clone(),
            tensors: args.tensors.clone(),
            scalars: args.scalars.clone(),
            block: args.block.clone(),
            grid: args.grid.clone(),
            ctas: args.ctas.clone(),
            dynamic_shared: args.dynamic_shared,
            cluster: args.cluster.clone(),
            compares: args.compares.clone(),
            auto_scan_limit: args.auto_scan_limit,
            values: args.values.clone(),
            functions: args.functions.clone(),
            globals: args.globals.clone(),
            ..SpecFlags::default()
        };
        match CheckSpec::from_flags(&flags) {
            Ok(s) => (PathBuf::from("<flags>"), s),
            Err(e) => {
                eprintln!("error: {e}");
                return None;
            }
        }
    };
    register(db, target, &spec_path, spec, is_toml, args)
}

/// Registers the PTX file of every kernel `spec` names (only those in
/// `target` when a PTX file was given with `--spec`).
fn register(
    db: &Database,
    target: &Path,
    spec_path: &Path,
    spec: CheckSpec,
    is_toml: bool,
    args: &SpecFlagArgs,
) -> Option<LoadedSpec> {
    let spec = args.with_limits(spec);
    let mut kernels = Vec::new();
    for (word, kref) in spec.kernels.iter() {
        // With `KERNEL.ptx --spec S.toml`, check only the kernels in that file.
        if !is_toml && args.spec.is_some() && !same_file(&kref.ptx, target) {
            continue;
        }
        if args.spec.is_some() && args.entry.is_some() && kref.entry != args.entry {
            continue;
        }
        let file = input::load(db, &kref.ptx)?;
        let slot = Slot::of(word);
        kernels.push((slot, file));
    }
    if kernels.is_empty() {
        eprintln!(
            "error: {} names no kernel in {}",
            spec_path.display(),
            target.display()
        );
        return None;
    }
    let spec = SpecInput::new(db, spec_path.to_path_buf(), spec);
    Some(LoadedSpec { spec, kernels })
}

/// The flag form of a pair check: `REF.ptx CAND.ptx --block … --tensor …`
/// (`--candidate-entry` / `--candidate-params` when the candidate differs).
pub fn load_pair(
    db: &Database,
    reference: &Path,
    candidate: &Path,
    args: &SpecFlagArgs,
    pair: &PairLaunchArgs,
    candidate_entry: Option<String>,
    candidate_params: Option<String>,
) -> Option<LoadedSpec> {
    if args.spec.is_some() {
        eprintln!(
            "error: --spec goes with one PTX file; give the spec itself: `ptxeq check SPEC.toml`"
        );
        return None;
    }
    let flags = SpecFlags {
        ptx: vec![reference.to_path_buf(), candidate.to_path_buf()],
        entry: args.entry.clone(),
        candidate_entry,
        params: args.params.clone(),
        candidate_params,
        tensors: args.tensors.clone(),
        scalars: args.scalars.clone(),
        block: args.block.clone(),
        grid: args.grid.clone(),
        ctas: args.ctas.clone(),
        dynamic_shared: args.dynamic_shared,
        cluster: args.cluster.clone(),
        auto_scan_limit: args.auto_scan_limit,
        ref_launch: pair.reference(),
        cand_launch: pair.candidate(),
        compares: args.compares.clone(),
        values: args.values.clone(),
        functions: args.functions.clone(),
        globals: args.globals.clone(),
        formula: None,
    };
    let spec = match CheckSpec::from_flags(&flags) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return None;
        }
    };
    let loaded = register(db, reference, Path::new("<flags>"), spec, true, args)?;
    check_files(db, loaded)
}

/// The flag form of a formula check: `CAND.ptx --formula '…' --block …
/// --tensor …` (the one kernel is the candidate). `formula` is the text,
/// or `@FILE`.
pub fn load_formula(
    db: &Database,
    candidate: &Path,
    args: &SpecFlagArgs,
    formula: &str,
) -> Option<LoadedSpec> {
    if args.spec.is_some() {
        eprintln!(
            "error: --formula goes with launch flags; a spec names its formula itself \
             (`[reference] formula = \"…\"`)"
        );
        return None;
    }
    let text = match formula.strip_prefix('@') {
        Some(file) => match std::fs::read_to_string(file) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: cannot read the formula file {file}: {e}");
                return None;
            }
        },
        None => formula.to_owned(),
    };
    let flags = SpecFlags {
        ptx: vec![candidate.to_path_buf()],
        entry: args.entry.clone(),
        params: args.params.clone(),
        tensors: args.tensors.clone(),
        scalars: args.scalars.clone(),
        block: args.block.clone(),
        grid: args.grid.clone(),
        ctas: args.ctas.clone(),
        dynamic_shared: args.dynamic_shared,
        cluster: args.cluster.clone(),
        compares: args.compares.clone(),
        auto_scan_limit: args.auto_scan_limit,
        values: args.values.clone(),
        functions: args.functions.clone(),
        globals: args.globals.clone(),
        formula: Some(text),
        ..SpecFlags::default()
    };
    let spec = match CheckSpec::from_flags(&flags) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return None;
        }
    };
    let loaded = register(db, candidate, Path::new("<flags>"), spec, true, args)?;
    check_files(db, loaded)
}

/// [`load`], then the syntax and lowering errors of every kernel file
/// (printed); `None` means invalid input (exit 3).
pub fn load_checked(db: &Database, target: &Path, args: &SpecFlagArgs) -> Option<LoadedSpec> {
    check_files(db, load(db, target, args)?)
}

/// Prints the syntax and lowering errors of every kernel file; `None` when
/// there are any.
fn check_files(db: &Database, loaded: LoadedSpec) -> Option<LoadedSpec> {
    for &(_, file) in &loaded.kernels {
        if crate::cmd_parse::report_errors(db, file, file.path(db)) > 0 {
            return None;
        }
    }
    Some(loaded)
}

fn load_toml(path: &Path) -> Option<CheckSpec> {
    match CheckSpec::load(path) {
        Ok(s) => Some(s),
        Err(e) => {
            eprintln!("error: {e}");
            None
        }
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}
