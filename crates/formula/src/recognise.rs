//! Prelude recovery for `ptxeq lift`: candidate formulas that state an
//! output tensor as a prelude operator applied to the inputs
//! (`y[i0, i1] = softmax(x[i0, :])[i1];`).
//!
//! A candidate is only a proposal: it comes from the tensors' shapes (an
//! input of the output's shape, per-column weights of the row length,
//! the spec's real scalars as `eps`) and from which functions the
//! kernel's element terms apply ([`Hints`]); the lift prints it only after
//! proving it at every element the kernel writes, exactly as it verifies
//! a structural lift. The candidates of one tensor are ordered from the
//! most specific operator to the least, so the first that verifies is the
//! one printed.

use crate::{Context, ScalarValue};

/// What the kernel's element terms apply (collected over a sample of
/// elements by the caller).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hints {
    /// `exp` or `exp2`.
    pub exp: bool,
    /// A `max`.
    pub max: bool,
    /// `log` or `log2`.
    pub log: bool,
    /// `sqrt` / `rsqrt`.
    pub sqrt: bool,
    pub erf: bool,
    pub tanh: bool,
    /// A reciprocal (a division).
    pub recip: bool,
}

/// The prelude candidates for output tensor `out` (a name of `ctx`), most
/// specific first.
pub fn candidates(ctx: &Context, out: &str, hints: &Hints) -> Vec<String> {
    let Some(o) = ctx.tensors.iter().find(|t| t.name == out) else {
        return Vec::new();
    };
    let rank = o.shape.len();
    if rank == 0 {
        return Vec::new();
    }
    let vars: Vec<String> = (0..rank).map(|k| format!("i{k}")).collect();
    let all = vars.join(", ");
    let lhs = format!("{out}[{all}]");
    let inputs: Vec<&crate::TensorDecl> = ctx
        .tensors
        .iter()
        .filter(|t| t.readable && t.name != out)
        .collect();
    let eps: Vec<&str> = ctx
        .scalars
        .iter()
        .filter(|s| matches!(s.value, ScalarValue::Real(_) | ScalarValue::Symbol { .. }))
        .map(|s| s.name.as_str())
        .collect();
    let mut out_c = Vec::new();
    // `x[i0, …, :]`: a row of `x` ending at the last axis, and its element
    // `j` (the output's last coordinate).
    let row_of = |x: &str, outer: &[String]| {
        let mut s: Vec<String> = outer.to_vec();
        s.push(":".into());
        format!("{x}[{}]", s.join(", "))
    };
    let last = o.shape[rank - 1];
    let outer = &vars[..rank - 1];
    let j = &vars[rank - 1];
    for x in inputs.iter().filter(|x| x.shape == o.shape) {
        let row = row_of(&x.name, outer);
        let elem = format!("{}[{all}]", x.name);
        // Row-wise operators.
        if hints.exp && hints.max {
            if hints.log {
                out_c.push(format!("{lhs} = log_softmax({row})[{j}];"));
            }
            out_c.push(format!("{lhs} = softmax({row})[{j}];"));
        }
        if hints.sqrt && last > 0 {
            let vecs: Vec<&&crate::TensorDecl> = inputs
                .iter()
                .filter(|w| w.shape == [last] && w.name != x.name)
                .collect();
            for e in &eps {
                for w in &vecs {
                    for b in &vecs {
                        if b.name != w.name {
                            out_c.push(format!(
                                "{lhs} = layernorm({row}, {}[:], {}[:], {e})[{j}];",
                                w.name, b.name
                            ));
                        }
                    }
                }
                for w in &vecs {
                    out_c.push(format!("{lhs} = rmsnorm({row}, {}[:], {e})[{j}];", w.name));
                }
            }
        }
        // Elementwise operators.
        if hints.erf {
            out_c.push(format!("{lhs} = gelu({elem});"));
        }
        if hints.tanh {
            out_c.push(format!("{lhs} = gelu_tanh({elem});"));
        }
        if hints.exp && !hints.max && hints.recip {
            out_c.push(format!("{lhs} = silu({elem});"));
            out_c.push(format!("{lhs} = sigmoid({elem});"));
        }
        if hints.exp && hints.log && !hints.max {
            out_c.push(format!("{lhs} = softplus({elem});"));
        }
        if hints.max && !hints.exp {
            out_c.push(format!("{lhs} = relu({elem});"));
        }
    }
    // Row statistics: `mean[r]`, `rstd[r]` of a row of an input whose
    // shape is the output's plus one axis.
    for x in inputs
        .iter()
        .filter(|x| x.shape.len() == rank + 1 && x.shape[..rank] == o.shape[..])
    {
        let row = row_of(&x.name, &vars);
        if hints.sqrt && hints.recip {
            for e in &eps {
                out_c.push(format!("{lhs} = rsqrt(var({row}) + {e});"));
            }
        }
        if !hints.exp && !hints.sqrt && !hints.max {
            out_c.push(format!("{lhs} = mean({row});"));
        }
    }
    out_c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ScalarDecl, TensorDecl};

    fn t(name: &str, id: u32, shape: &[u64], readable: bool) -> TensorDecl {
        TensorDecl {
            name: name.into(),
            id,
            shape: shape.to_vec(),
            readable,
            writable: !readable,
        }
    }

    fn ctx() -> Context {
        Context {
            tensors: vec![
                t("x", 0, &[2, 64], true),
                t("w", 1, &[64], true),
                t("b", 2, &[64], true),
                t("y", 3, &[2, 64], false),
                t("rstd", 4, &[2], false),
            ],
            scalars: vec![
                ScalarDecl {
                    name: "n".into(),
                    value: ScalarValue::Int(64),
                },
                ScalarDecl {
                    name: "eps".into(),
                    value: ScalarValue::Real(num_rational::BigRational::new(
                        1.into(),
                        100000.into(),
                    )),
                },
            ],
        }
    }

    #[test]
    fn candidates_follow_shapes_and_hints() {
        let c = ctx();
        let soft = candidates(
            &c,
            "y",
            &Hints {
                exp: true,
                max: true,
                recip: true,
                ..Hints::default()
            },
        );
        assert_eq!(soft, ["y[i0, i1] = softmax(x[i0, :])[i1];"]);
        let norm = candidates(
            &c,
            "y",
            &Hints {
                sqrt: true,
                recip: true,
                ..Hints::default()
            },
        );
        assert_eq!(
            norm,
            [
                "y[i0, i1] = layernorm(x[i0, :], w[:], b[:], eps)[i1];",
                "y[i0, i1] = layernorm(x[i0, :], b[:], w[:], eps)[i1];",
                "y[i0, i1] = rmsnorm(x[i0, :], w[:], eps)[i1];",
                "y[i0, i1] = rmsnorm(x[i0, :], b[:], eps)[i1];",
            ]
        );
        let rstd = candidates(
            &c,
            "rstd",
            &Hints {
                sqrt: true,
                recip: true,
                ..Hints::default()
            },
        );
        assert_eq!(rstd, ["rstd[i0] = rsqrt(var(x[i0, :]) + eps);"]);
        // Every candidate compiles against its context.
        for f in soft.iter().chain(&norm).chain(&rstd) {
            crate::compile(f, &c).unwrap_or_else(|d| panic!("{f}: {d:?}"));
        }
    }
}
