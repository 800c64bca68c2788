//! Every formula example of the README (the ```ptxf blocks of "Formula
//! references") compiles against the tensors and scalars its first
//! comment declares, and instantiates at every element of every tensor it
//! defines: the documentation cannot drift from the language.
//!
//! Header syntax: `# tensors: x[4, 8] in, y[4, 8] out; scalars: N = 8`.

use num_rational::BigRational;
use ptxeq_formula::{Context, ScalarDecl, ScalarValue, TensorDecl, compile, render};
use ptxeq_terms::Terms;

fn readme() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md");
    std::fs::read_to_string(path).expect("README.md")
}

/// The ```ptxf blocks, with their first line.
fn blocks(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut cur: Option<(usize, String)> = None;
    for (n, line) in text.lines().enumerate() {
        match &mut cur {
            None if line.trim() == "```ptxf" => cur = Some((n + 2, String::new())),
            None => {}
            Some(_) if line.trim() == "```" => out.extend(cur.take()),
            Some((_, body)) => {
                body.push_str(line);
                body.push('\n');
            }
        }
    }
    assert!(cur.is_none(), "an unclosed ```ptxf block");
    out
}

/// The context a block's header declares.
fn context(header: &str, at: usize) -> Context {
    let header = header
        .strip_prefix('#')
        .unwrap_or_else(|| panic!("README line {at}: no `# tensors: …` header"))
        .trim();
    let mut ctx = Context::default();
    for part in header.split(';') {
        let part = part.trim();
        if let Some(list) = part.strip_prefix("tensors:") {
            // `name[d, d] role` items separated by commas outside brackets.
            let mut depth = 0;
            let mut item = String::new();
            let mut items = Vec::new();
            for c in list.chars() {
                match c {
                    '[' => depth += 1,
                    ']' => depth -= 1,
                    ',' if depth == 0 => {
                        items.push(std::mem::take(&mut item));
                        continue;
                    }
                    _ => {}
                }
                item.push(c);
            }
            items.push(item);
            for it in items {
                let it = it.trim();
                let (decl, role) = it.rsplit_once(' ').expect("`name[shape] role`");
                let (name, shape) = decl.split_once('[').expect("a shape");
                let shape: Vec<u64> = shape
                    .trim_end_matches(']')
                    .split(',')
                    .map(|d| d.trim().parse().expect("an extent"))
                    .collect();
                let (readable, writable) = match role {
                    "in" => (true, false),
                    "out" => (false, true),
                    "inout" => (true, true),
                    r => panic!("README line {at}: role {r}"),
                };
                ctx.tensors.push(TensorDecl {
                    name: name.trim().into(),
                    id: ctx.tensors.len() as u32,
                    shape,
                    readable,
                    writable,
                });
            }
        } else if let Some(list) = part.strip_prefix("scalars:") {
            for it in list.split(',') {
                let (name, v) = it.split_once('=').expect("`name = value`");
                let v = v.trim();
                let value = match v.parse::<i64>() {
                    Ok(i) => ScalarValue::Int(i),
                    Err(_) => ScalarValue::Real(
                        BigRational::from_float(v.parse::<f64>().expect("a number"))
                            .expect("finite"),
                    ),
                };
                ctx.scalars.push(ScalarDecl {
                    name: name.trim().into(),
                    value,
                });
            }
        } else {
            panic!("README line {at}: unknown header part {part:?}");
        }
    }
    ctx
}

#[test]
fn readme_formula_examples_compile_and_instantiate() {
    let text = readme();
    let blocks = blocks(&text);
    // Softmax (2), GEMM, LayerNorm, RMSNorm, causal attention, conv2d, GELU.
    assert!(blocks.len() >= 8, "only {} ```ptxf blocks", blocks.len());
    let mut defined = Vec::new();
    for (at, body) in &blocks {
        let header = body.lines().next().unwrap_or_default();
        let ctx = context(header, *at);
        let c = compile(body, &ctx)
            .unwrap_or_else(|d| panic!("README line {at}:\n{}", render(&d, "README", body)));
        let mut terms = Terms::new();
        let mut inst = c.instance(&mut terms);
        for (def, &id) in c.outputs().iter().enumerate() {
            let t = &ctx.tensors[id as usize];
            defined.push(t.name.clone());
            let n: u64 = t.shape.iter().product();
            for flat in 0..n {
                let mut idx = vec![0u64; t.shape.len()];
                let mut r = flat;
                for k in (0..idx.len()).rev() {
                    idx[k] = r % t.shape[k];
                    r /= t.shape[k];
                }
                if let Err(d) = inst.element(def, &idx) {
                    panic!("README line {at}:\n{}", render(&[d], "README", body));
                }
            }
        }
    }
    for must in ["y", "C", "mean", "rstd", "o", "z"] {
        assert!(
            defined.iter().any(|d| d == must),
            "no example defines {must}"
        );
    }
}
