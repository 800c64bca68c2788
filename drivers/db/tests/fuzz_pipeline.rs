//! Fuzzing the whole pipeline (issue 13: "fuzzed or bad input still never
//! panics"): corpus cases with a mutated candidate (and sometimes a
//! mutated reference) go through parse, lowering, decoding, idiom
//! recognition, validation, the engine, the symbolic replay and the
//! decision procedure (`ptxeq_db::check`), and mutated specs through
//! `CheckSpec::from_toml_str`. Any verdict is fine; a panic is a bug. A
//! panicking input is written to `target/fuzz-failures/` so it can be
//! replayed with `ptxeq check`.
//!
//! Deterministic (a fixed seed per case); `PTXEQ_FUZZ_ITERS` sets the
//! mutants per case (default 12) and `PTXEQ_FUZZ_SEED` the seed, for
//! longer runs.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use ptxeq_db::{Database, Slot, SpecInput};
use ptxeq_spec::{CheckSpec, Kernels};

/// xorshift64: small, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

const NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "31",
    "32",
    "33",
    "255",
    "1024",
    "65536",
    "2147483647",
    "2147483648",
    "4294967295",
    "-2147483648",
    "9223372036854775807",
    "0xFFFFFFFF",
    "0f7F800000",
    "0f7FC00000",
    "0f00000001",
    "0fFF800000",
    "0d7FF0000000000000",
    "0d0000000000000001",
];

const TYPES: &[&str] = &[
    ".f32", ".f64", ".f16", ".bf16", ".u32", ".s32", ".u64", ".s64", ".b16", ".b8", ".pred",
    ".f16x2", ".u8", ".s8", ".b128",
];

const OPCODES: &[&str] = &[
    "add", "sub", "mul", "mad", "fma", "div", "min", "max", "and", "or", "xor", "shl", "shr",
    "mov", "cvt", "ld", "st", "atom", "red", "bar", "shfl", "vote", "setp", "selp", "ex2", "lg2",
    "rcp", "sqrt", "bra", "ret", "exit", "cp", "mma", "ldmatrix", "wmma", "fence",
];

/// One random edit of a PTX text, at the level a careless edit or a
/// compiler bug would make: lines deleted, duplicated, swapped; numbers,
/// types, opcodes and registers changed; bytes inserted.
fn mutate(text: &str, rng: &mut Rng) -> String {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let n = lines.len();
    if n == 0 {
        return text.to_owned();
    }
    let i = rng.below(n);
    match rng.below(9) {
        0 => {
            lines.remove(i);
        }
        1 => {
            let l = lines[i].clone();
            lines.insert(rng.below(n), l);
        }
        2 => lines.swap(i, rng.below(n)),
        3 => {
            // a number → an interesting value
            let l = &lines[i];
            if let Some(p) = l.find(|c: char| c.is_ascii_digit()) {
                let end = l[p..]
                    .find(|c: char| !c.is_ascii_alphanumeric())
                    .map_or(l.len(), |e| p + e);
                let mut s = l.clone();
                s.replace_range(p..end, rng.pick(NUMBERS));
                lines[i] = s;
            }
        }
        4 => {
            // a type modifier → another type
            let l = lines[i].clone();
            if let Some(t) = TYPES.iter().find(|t| l.contains(*t)) {
                lines[i] = l.replacen(t, rng.pick(TYPES), 1);
            }
        }
        5 => {
            // the opcode → another opcode (modifiers kept)
            let l = lines[i].clone();
            let trimmed = l.trim_start();
            let indent = &l[..l.len() - trimmed.len()];
            if let Some(end) = trimmed.find(['.', ' ', '\t']) {
                let body = &trimmed[end..];
                lines[i] = format!("{indent}{}{body}", rng.pick(OPCODES));
            }
        }
        6 => {
            // a register → another register of the file
            let regs: Vec<&str> = text
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '%' || c == '_'))
                .filter(|w| w.starts_with('%') && w.len() > 1)
                .collect();
            let l = lines[i].clone();
            if let (Some(from), false) = (
                l.split(|c: char| !(c.is_ascii_alphanumeric() || c == '%' || c == '_'))
                    .find(|w| w.starts_with('%') && w.len() > 1),
                regs.is_empty(),
            ) {
                let to = regs[rng.below(regs.len())];
                lines[i] = l.replacen(from, to, 1);
            }
        }
        7 => {
            // stray bytes
            let junk = [
                "{", "}", "[", "]", "(", ";", ",", "|", "@", "!", "\"", "//", "\u{fffd}",
            ];
            let l = &mut lines[i];
            let at = rng.below(l.len() + 1);
            if l.is_char_boundary(at) {
                l.insert_str(at, rng.pick(&junk));
            }
        }
        _ => {
            // a guard on an instruction, or one removed
            let l = lines[i].clone();
            let trimmed = l.trim_start();
            lines[i] = match trimmed.strip_prefix('@') {
                Some(rest) => rest
                    .split_once(char::is_whitespace)
                    .map_or(l.clone(), |(_, ins)| ins.to_owned()),
                None if !trimmed.starts_with(['.', '$', '/', '{', '}']) => {
                    format!("@%p1 {trimmed}")
                }
                None => l,
            };
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

fn corpus_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpus")
}

/// Small cases covering the pipeline's areas: shared-memory reductions,
/// warp collectives, math idioms (f32 branches and scratch arrays, f64
/// calls and tables), tensor cores, cp.async, Triton, races.
const CASES: &[&str] = &[
    "softmax/naive-vs-online-n128",
    "reduction/warp-shuffle-block-reduce",
    "reduction/partial-warp-shfl-120",
    "math/expf-default-vs-fast-sm80",
    "math/sinf-default-vs-fast-sm80",
    "math/powf-default-vs-fast-sm80",
    "math/cos-f64-sm80-vs-sm90",
    "math/pow-f64-sm80-vs-sm90",
    "triton/gelu-tanh-swapped-operands",
    "triton/vector-add-masked",
    "tc-gemm/mma-ldmatrix-f16-64",
    "races/cp-async-wait-fixed",
    "races/missing-barrier-reverse-pair",
    "bugs/reduce-init-subnormal",
];

fn iterations() -> usize {
    std::env::var("PTXEQ_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12)
}

fn seed() -> u64 {
    std::env::var("PTXEQ_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5EED_F022)
}

/// Writes a failing input for replay; returns its path.
fn save(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/fuzz-failures");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(name);
    let _ = std::fs::write(&path, text);
    path
}

/// Runs the full check of `spec` with the given kernel texts.
fn run_check(spec_path: &Path, spec: &CheckSpec, texts: &[(Slot, PathBuf, String)]) {
    let db = Database::default();
    let files: Vec<_> = texts
        .iter()
        .map(|(slot, path, text)| (*slot, db.add_file(path, text.clone())))
        .collect();
    let input = SpecInput::new(&db, spec_path.to_path_buf(), spec.clone());
    if files.len() == 2 {
        let _ = ptxeq_db::check(&db, input, &files);
    } else {
        let _ = ptxeq_db::race_check(&db, input, &files);
    }
}

#[test]
fn mutated_kernels_never_panic_anywhere_in_the_pipeline() {
    let root = corpus_root();
    let mut failures = Vec::new();
    let mut runs = 0;
    for (ci, case) in CASES.iter().enumerate() {
        let spec_path = root.join(case).join("check.toml");
        let Ok(mut spec) = CheckSpec::load(&spec_path) else {
            continue;
        };
        // Bounded work: a mutant may loop.
        spec.limits.max_steps = 300_000;
        let kernels: Vec<(Slot, PathBuf)> = match &spec.kernels {
            Kernels::Pair {
                reference,
                candidate,
            } => vec![
                (Slot::Reference, reference.ptx.clone()),
                (Slot::Candidate, candidate.ptx.clone()),
            ],
            Kernels::Single(k) => vec![(Slot::Kernel, k.ptx.clone())],
            Kernels::Formula { candidate, .. } => vec![(Slot::Candidate, candidate.ptx.clone())],
        };
        let Ok(texts) = kernels
            .iter()
            .map(|(_, p)| std::fs::read_to_string(p))
            .collect::<Result<Vec<_>, _>>()
        else {
            continue;
        };
        let mut rng = Rng(seed() ^ ((ci as u64 + 1) << 32));
        for it in 0..iterations() {
            // Mutate the last kernel (the candidate), sometimes both, with
            // one to three edits.
            let mut mutated: Vec<(Slot, PathBuf, String)> = kernels
                .iter()
                .zip(&texts)
                .map(|((s, p), t)| (*s, p.clone(), t.clone()))
                .collect();
            let last = mutated.len() - 1;
            let targets = if rng.below(4) == 0 {
                0..=last
            } else {
                last..=last
            };
            for k in targets {
                for _ in 0..1 + rng.below(3) {
                    mutated[k].2 = mutate(&mutated[k].2, &mut rng);
                }
            }
            runs += 1;
            let result = catch_unwind(AssertUnwindSafe(|| {
                run_check(&spec_path, &spec, &mutated);
            }));
            if result.is_err() {
                let name = format!("{}--{it}.ptx", case.replace('/', "--"));
                let path = save(&name, &mutated[last].2);
                failures.push(format!(
                    "{case} mutant {it}: panicked; candidate saved to {}",
                    path.display()
                ));
            }
        }
    }
    assert!(runs > 0, "no corpus case found");
    assert!(
        failures.is_empty(),
        "{} panic(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A spec with values at and beyond every limit, and mutated case specs:
/// errors, never panics.
#[test]
fn mutated_specs_never_panic() {
    let root = corpus_root();
    let keys = [
        "block",
        "grid",
        "ctas",
        "dynamic_shared",
        "shape",
        "max_steps",
        "max_ctas",
        "params",
        "verdict",
        "role",
        "dtype",
        "entry",
    ];
    let values = [
        "0",
        "-1",
        "9223372036854775807",
        "18446744073709551616",
        "[]",
        "[0]",
        "[4294967296, 1, 1]",
        "[1, 2, 3, 4]",
        "\"all\"",
        "[[0, 0, 0], [0, 0, 0]]",
        "[[9999999, 0, 0]]",
        "1e400",
        "nan",
        "\"\"",
        "[\"_\"]",
        "{ role = \"input\" }",
        "\"f128\"",
    ];
    let mut rng = Rng(seed());
    let mut checked = 0;
    for case in CASES {
        let path = root.join(case).join("check.toml");
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        for _ in 0..4 * iterations() {
            let mut lines: Vec<String> = text.lines().map(String::from).collect();
            let i = rng.below(lines.len());
            match rng.below(4) {
                0 => {
                    let k = rng.pick(&keys);
                    lines.insert(i, format!("{k} = {}", rng.pick(&values)));
                }
                1 => {
                    if let Some((k, _)) = lines[i].split_once('=') {
                        lines[i] = format!("{k}= {}", rng.pick(&values));
                    }
                }
                2 => {
                    lines.remove(i);
                }
                _ => {
                    let at = rng.below(lines[i].len() + 1);
                    if lines[i].is_char_boundary(at) {
                        lines[i]
                            .insert_str(at, rng.pick(&["[", "]", "{", "\"", "=", "\n[limits]\n"]));
                    }
                }
            }
            let mutated = lines.join("\n");
            let r = catch_unwind(|| CheckSpec::from_toml_str(&mutated, Path::new("/cases/x")));
            assert!(r.is_ok(), "spec parsing panicked on:\n{mutated}");
            checked += 1;
        }
    }
    // The flag form, with broken and extreme values.
    let flag_values = [
        "x:f32[128]:in",
        "x:f32[]:in",
        "x:f32[0]:out",
        "x:f33[4]:in",
        "x:f32[18446744073709551616]:in",
        "x:f32[4294967296,4294967296]:inout",
        "x:f32[4]",
        ":f32[4]:in",
        "x::",
        "\u{1F600}:f32[1]:in",
        "n=1e400",
        "n=-0",
        "n=9223372036854775808",
        "n=",
        "=5",
        "0",
        "4294967296",
        "16x16x16x16",
        "-1,1,1",
        "x,,y",
        "all",
        "0,0,0;0,0,0",
        "1,2;3",
    ];
    for _ in 0..8 * iterations() {
        let v = |rng: &mut Rng| rng.pick(&flag_values).to_string();
        let flags = ptxeq_spec::SpecFlags {
            ptx: (0..1 + rng.below(2))
                .map(|i| PathBuf::from(format!("k{i}.ptx")))
                .collect(),
            entry: (rng.below(2) == 0).then(|| v(&mut rng)),
            params: (rng.below(2) == 0).then(|| v(&mut rng)),
            candidate_params: (rng.below(3) == 0).then(|| v(&mut rng)),
            tensors: (0..rng.below(3)).map(|_| v(&mut rng)).collect(),
            scalars: (0..rng.below(3)).map(|_| v(&mut rng)).collect(),
            block: (rng.below(2) == 0).then(|| v(&mut rng)),
            grid: (rng.below(2) == 0).then(|| v(&mut rng)),
            ctas: (rng.below(2) == 0).then(|| v(&mut rng)),
            dynamic_shared: (rng.below(2) == 0).then(|| rng.next() as u32),
            cluster: (rng.below(2) == 0).then(|| v(&mut rng)),
            ..ptxeq_spec::SpecFlags::default()
        };
        let r = catch_unwind(|| CheckSpec::from_flags(&flags));
        assert!(r.is_ok(), "from_flags panicked on {flags:?}");
        checked += 1;
    }
    assert!(checked > 0);
}

/// Every `.ptx` file of the corpus, mutated: parse, lowering, decoding,
/// idiom recognition over the call graph and the structured-CTA
/// validation never panic.
#[test]
fn mutated_corpus_files_lower_and_recognise_without_panic() {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut stack = vec![corpus_root()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "ptx") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(!files.is_empty());
    let mut rng = Rng(seed() ^ 0xF11E);
    let per_file = iterations().div_ceil(6).max(1);
    let mut failures = Vec::new();
    for (fi, f) in files.iter().enumerate() {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        for it in 0..per_file {
            let mut m = text.clone();
            for _ in 0..1 + rng.below(4) {
                m = mutate(&m, &mut rng);
            }
            let r = catch_unwind(AssertUnwindSafe(|| {
                let lowered = ptxeq_lower::lower_source(&m);
                let funcs = &lowered.module.funcs;
                for k in &lowered.module.kernels {
                    let (rec, _) = ptxeq_idioms::recognise_all(k, funcs);
                    let by_name = |n: &str| funcs.iter().find(|x| x.name == n);
                    let tensors: Vec<bool> = k.args().map(|_| true).collect();
                    let _ = ptxeq_validate::validate(&rec.ir, &by_name, &tensors);
                    for d in &rec.ir.instrs {
                        let _ = d.instr.mnemonic();
                    }
                    let _ = rec.ir.to_string();
                }
            }));
            if r.is_err() {
                let name = format!("file{fi}--{it}.ptx");
                let path = save(&name, &m);
                failures.push(format!(
                    "{}: mutant {it} panicked; saved to {}",
                    f.display(),
                    path.display()
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} panic(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
