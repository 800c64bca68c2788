//! `ptxeq._native`: the compiled half of the `ptxeq` Python package.
//!
//! It holds no checking logic: it turns the Python side's spec (a
//! TOML-shaped JSON object, or a spec file's path) into a
//! [`ptxeq_spec::CheckSpec`], runs the command line's own entry points
//! ([`ptxeq_cli::api`]: the same loading, the same facade
//! ([`ptxeq_check::Checker`]) and the same `ptxeq.check/1` /
//! `ptxeq.race/1` JSON report as `--format json`) and hands the report back as a JSON
//! string, which `python/ptxeq/` turns into a `CheckResult`.
//!
//! Every call builds its own database and holds no Python object while it
//! runs, so it releases the GIL ([`Python::detach`]) for the whole check:
//! calls from several Python threads run in parallel.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ptxeq_check::Checker;
use ptxeq_cli::api::{self, Mode};
use ptxeq_cli::cmd_check::JsonOptions;
use ptxeq_cli::global::GlobalArgs;
use ptxeq_spec::CheckSpec;
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

create_exception!(
    ptxeq,
    UsageError,
    PyValueError,
    "Bad input: a malformed spec, PTX that does not parse, a missing file, or a spec that does not fit the kernels. A refuted check is a result, never this exception."
);

fn mode_of(word: &str) -> Result<Mode, String> {
    match word {
        "check" => Ok(Mode::Check),
        "race" => Ok(Mode::Race),
        "lift" => Ok(Mode::Lift),
        "auto" => Ok(Mode::Auto),
        other => Err(format!(
            "unknown mode `{other}` (check | race | lift | auto)"
        )),
    }
}

/// The database of one call, with the disk cache the CLI's `--cache-dir` /
/// `--no-cache` would give: `cache` is `"default"`, `"none"` or a directory.
fn checker(cache: &str) -> Checker {
    let args = match cache {
        "none" => GlobalArgs {
            no_cache: true,
            ..GlobalArgs::default()
        },
        "default" => GlobalArgs::default(),
        dir => GlobalArgs {
            cache_dir: Some(PathBuf::from(dir)),
            ..GlobalArgs::default()
        },
    };
    Checker::with_cache(args.open_cache())
}

fn run_spec_inner(
    mode: &str,
    spec: CheckSpec,
    spec_path: &Path,
    texts: &BTreeMap<PathBuf, String>,
    cache: &str,
    opts: api::RunOptions,
) -> Result<String, String> {
    let mode = mode_of(mode)?;
    // The tensors' declarations: the report numbers inputs but does not
    // repeat their shapes, which counterexample arrays need.
    let tensors: serde_json::Map<String, serde_json::Value> = spec
        .tensors
        .iter()
        .map(|(name, t)| {
            let decl = serde_json::json!({
                "shape": t.shape,
                "dtype": t.dtype.as_str(),
                "role": t.role.as_str(),
            });
            (name.clone(), decl)
        })
        .collect();
    let checker = checker(cache);
    let loaded = api::load(checker.db(), spec, spec_path, texts)?;
    // The report as text, spliced in: never a tree of JSON values (see
    // `api::run_json_text`).
    let report = api::run_json_text(&checker, mode, &loaded, opts)?;
    let tensors = serde_json::to_string(&tensors)
        .map_err(|e| format!("cannot serialise the tensors: {e}"))?;
    Ok(format!("{{\"report\":{report},\"tensors\":{tensors}}}"))
}

/// The options of one call: the CLI's `--formula-max-steps`, and of a
/// check's report `--json-formula-chars`, `--json-dag-nodes` and `--show`
/// (`None`: the CLI's defaults).
fn run_options(
    formula_max_steps: Option<u64>,
    json_formula_chars: Option<usize>,
    json_dag_nodes: Option<usize>,
    show: Option<usize>,
) -> api::RunOptions {
    let mut json = JsonOptions::default();
    if let Some(n) = json_formula_chars {
        json.formula_chars = n;
    }
    if let Some(n) = json_dag_nodes {
        json.dag_nodes = n;
    }
    if let Some(n) = show {
        json.show = n;
    }
    api::RunOptions {
        formula_max_steps,
        json,
    }
}

/// Checks a spec given as a TOML-shaped JSON object (the keys of
/// `check.toml`); `texts` maps a kernel's `ptx` path to PTX text given
/// inline. Returns the JSON report. Errors name the spec key.
#[pyfunction]
#[pyo3(signature = (mode, spec_json, base_dir, texts, cache = "default", formula_max_steps = None, json_formula_chars = None, show = None, json_dag_nodes = None))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    mode: &str,
    spec_json: &str,
    base_dir: &str,
    texts: BTreeMap<String, String>,
    cache: &str,
    formula_max_steps: Option<u64>,
    json_formula_chars: Option<usize>,
    show: Option<usize>,
    json_dag_nodes: Option<usize>,
) -> PyResult<String> {
    let opts = run_options(formula_max_steps, json_formula_chars, json_dag_nodes, show);
    let texts: BTreeMap<PathBuf, String> = texts
        .into_iter()
        .map(|(k, v)| (PathBuf::from(k), v))
        .collect();
    py.detach(|| {
        let value: serde_json::Value =
            serde_json::from_str(spec_json).map_err(|e| format!("spec: {e}"))?;
        let doc = toml::to_string(&value).map_err(|e| format!("spec: {e}"))?;
        // Errors name the key (`launch.block: …`); the line:column would
        // point into this generated text, which the caller never saw.
        let mut spec =
            CheckSpec::from_toml_str(&doc, Path::new(base_dir)).map_err(|e| e.message)?;
        // Likewise for errors found against the kernel: no spec positions.
        spec.locations = Default::default();
        run_spec_inner(
            mode,
            spec,
            Path::new("<ptxeq.check arguments>"),
            &texts,
            cache,
            opts,
        )
    })
    .map_err(UsageError::new_err)
}

/// Checks the spec file at `path` (`ptxeq check SPEC.toml --format json`;
/// mode `auto`: `check` for a pair, `race` for one kernel), returning what
/// [`run`] returns.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (mode, path, cache = "default", formula_max_steps = None, json_formula_chars = None, show = None, json_dag_nodes = None))]
fn run_file(
    py: Python<'_>,
    mode: &str,
    path: &str,
    cache: &str,
    formula_max_steps: Option<u64>,
    json_formula_chars: Option<usize>,
    show: Option<usize>,
    json_dag_nodes: Option<usize>,
) -> PyResult<String> {
    let opts = run_options(formula_max_steps, json_formula_chars, json_dag_nodes, show);
    py.detach(|| {
        let path = Path::new(path);
        let spec = CheckSpec::load(path).map_err(|e| e.to_string())?;
        run_spec_inner(mode, spec, path, &BTreeMap::new(), cache, opts)
    })
    .map_err(UsageError::new_err)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_file, m)?)?;
    m.add("UsageError", m.py().get_type::<UsageError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
