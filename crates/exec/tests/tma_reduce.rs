//! `cp.reduce.async.bulk` (`engine/tma.rs`): bulk reductions from shared
//! memory into global memory, strong read-modify-writes of the async proxy
//! in flight until the bulk async-group's wait.
//!
//! The kernel (a grid of 2 CTAs of 32 threads): thread t of CTA b stores
//! x[32b + t] into buf[t], `FENCE`, bar.sync; thread 0 issues `REDUCE` of
//! the 128 bytes of buf into y[0..32], commits and `WAIT`s; then `AFTER`.

mod common;

use common::{input, tensor};
use ptxeq_exec::{
    CVal, Concrete, CtaInput, Finding, FindingKind, GridRun, OobFill, OutputValue, ParamValue,
    Role, Swizzle, TensorMapBinding, TensorMapGeometry, TensorMapHolder, run_grid,
};
use ptxeq_spec::DType;

const FENCE: &str = "fence.proxy.async.shared::cta;";
const REDUCE: &str =
    "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd2], [%r1], 128;";
const WAIT: &str = "cp.async.bulk.wait_group 0;";

struct K<'a> {
    fence: &'a str,
    reduce: &'a str,
    wait: &'a str,
    after: &'a str,
}

const OK: K<'static> = K {
    fence: FENCE,
    reduce: REDUCE,
    wait: WAIT,
    after: "",
};

fn kernel(k: &K<'_>) -> CtaInput {
    let K {
        fence,
        reduce,
        wait,
        after,
    } = k;
    let ptx = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry k(.param .u64 px, .param .u64 py, .param .align 64 .b8 tm[128])\n{{\n\
         .reg .b32 %r<32>;\n.reg .f32 %f<16>;\n.reg .b64 %rd<16>;\n.reg .pred %p<4>;\n\
         .shared .align 128 .b8 buf[128];\n\
         ld.param.u64 %rd1, [px];\nld.param.u64 %rd2, [py];\n\
         cvta.to.global.u64 %rd1, %rd1;\ncvta.to.global.u64 %rd2, %rd2;\n\
         mov.b64 %rd9, tm;\ncvta.param.u64 %rd9, %rd9;\nmov.u32 %r20, 0;\n\
         mov.u32 %r0, %tid.x;\n\
         mov.u32 %r9, %ctaid.x;\n\
         mov.u32 %r1, buf;\n\
         shl.b32 %r2, %r0, 2;\n\
         add.s32 %r3, %r1, %r2;\n\
         shl.b32 %r4, %r9, 5;\n\
         add.s32 %r5, %r4, %r0;\n\
         mul.wide.u32 %rd3, %r5, 4;\n\
         add.s64 %rd4, %rd1, %rd3;\n\
         ld.global.f32 %f1, [%rd4];\n\
         st.shared.f32 [%r3], %f1;\n\
         {fence}\n\
         bar.sync 0;\n\
         setp.ne.u32 %p1, %r0, 0;\n\
         @%p1 bra DONE;\n\
         {reduce}\n\
         cp.async.bulk.commit_group;\n\
         {wait}\n\
         {after}\n\
         DONE:\n\
         ret;\n}}\n"
    );
    let mut inp = input(
        &ptx,
        [32, 1, 1],
        vec![
            tensor("x", Role::Input, DType::F32, &[64]),
            tensor("y", Role::InOut, DType::F32, &[32]),
        ],
        vec![
            ParamValue::Tensor { tensor: 0 },
            ParamValue::Tensor { tensor: 1 },
            ParamValue::TensorMap { map: 0 },
        ],
    );
    inp.bindings.tensor_maps.push(TensorMapBinding {
        name: "tm".into(),
        tensor: 1,
        holder: TensorMapHolder::Param { index: 2 },
        geometry: TensorMapGeometry {
            dims: vec![32],
            strides: vec![],
            box_dims: vec![32],
            element_strides: vec![1],
            swizzle: Swizzle::None,
            oob_fill: OobFill::Zero,
        },
    });
    inp.grid = [2, 1, 1];
    inp
}

fn go(inp: &CtaInput, ctas: &[[u32; 3]]) -> GridRun<CVal> {
    let x: Vec<f64> = (0..64).map(|i| i as f64 + 1.0).collect();
    let y: Vec<f64> = (0..32).map(|i| 1000.0 * i as f64).collect();
    run_grid(inp, ctas, Concrete::new(vec![x, y])).0
}

fn findings(g: &GridRun<CVal>) -> Vec<&Finding> {
    g.runs
        .iter()
        .flat_map(|r| &r.findings)
        .chain(&g.cross)
        .collect()
}

fn y(g: &GridRun<CVal>) -> Vec<Option<f64>> {
    let mut v = vec![None; 32];
    let out = g.outputs.iter().find(|o| o.tensor == 1).expect("y");
    for (i, e) in &out.elements {
        if let OutputValue::Data(x) = e {
            v[*i as usize] = Some(x.get());
        }
    }
    v
}

#[test]
fn two_ctas_reduce_into_one_tensor_without_a_race() {
    let g = go(&kernel(&OK), &[[0, 0, 0], [1, 0, 0]]);
    assert!(findings(&g).is_empty(), "{:#?}", findings(&g));
    for (t, v) in y(&g).iter().enumerate() {
        let want = 1000.0 * t as f64 + (t as f64 + 1.0) + (t as f64 + 33.0);
        assert_eq!(*v, Some(want), "y[{t}]");
    }
}

#[test]
fn a_read_of_the_destination_before_the_wait_races_with_the_reduction() {
    let k = K {
        wait: "",
        after: "ld.global.f32 %f2, [%rd2];",
        ..OK
    };
    let g = go(&kernel(&k), &[[0, 0, 0]]);
    let f = findings(&g)
        .into_iter()
        .find(|f| f.kind == FindingKind::Race)
        .unwrap_or_else(|| panic!("{:#?}", findings(&g)));
    assert!(f.message.contains("y"), "{}", f.message);
}

#[test]
fn after_the_wait_the_destination_can_be_read() {
    let k = K {
        after: "ld.global.f32 %f2, [%rd2];",
        ..OK
    };
    let g = go(&kernel(&k), &[[0, 0, 0]]);
    assert!(findings(&g).is_empty(), "{:#?}", findings(&g));
}

#[test]
fn a_source_written_without_fence_proxy_async_races_with_the_async_proxy_read() {
    let k = K { fence: "", ..OK };
    let g = go(&kernel(&k), &[[0, 0, 0]]);
    assert!(
        findings(&g).iter().any(|f| f.kind == FindingKind::Race),
        "{:#?}",
        findings(&g)
    );
}

#[test]
fn overwriting_the_source_before_wait_group_read_races() {
    let k = K {
        wait: "st.shared.f32 [%r1], %f1;",
        ..OK
    };
    let g = go(&kernel(&k), &[[0, 0, 0]]);
    assert!(
        findings(&g).iter().any(|f| f.kind == FindingKind::Race),
        "{:#?}",
        findings(&g)
    );
}

#[test]
fn a_min_reduction_combines_with_the_old_contents() {
    let k = K {
        reduce: "cp.reduce.async.bulk.global.shared::cta.bulk_group.min.f32 [%rd2], [%r1], 128;",
        ..OK
    };
    let g = go(&kernel(&k), &[[0, 0, 0]]);
    assert!(findings(&g).is_empty(), "{:#?}", findings(&g));
    for (t, v) in y(&g).iter().enumerate() {
        let want = (1000.0 * t as f64).min(t as f64 + 1.0);
        assert_eq!(*v, Some(want), "y[{t}]");
    }
}

#[test]
fn a_float_exchange_like_op_is_not_a_bulk_reduction() {
    let k = K {
        reduce: "cp.reduce.async.bulk.global.shared::cta.bulk_group.and.f32 [%rd2], [%r1], 128;",
        ..OK
    };
    let g = go(&kernel(&k), &[[0, 0, 0]]);
    assert!(
        findings(&g)
            .iter()
            .any(|f| f.kind == FindingKind::Unsupported),
        "{:#?}",
        findings(&g)
    );
}

#[test]
fn a_tensor_bulk_reduction_adds_the_box_into_the_tensor() {
    let k = K {
        reduce: "cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.tile.bulk_group [%rd9, {%r20}], [%r1];",
        ..OK
    };
    let g = go(&kernel(&k), &[[0, 0, 0], [1, 0, 0]]);
    assert!(findings(&g).is_empty(), "{:#?}", findings(&g));
    for (t, v) in y(&g).iter().enumerate() {
        let want = 1000.0 * t as f64 + (t as f64 + 1.0) + (t as f64 + 33.0);
        assert_eq!(*v, Some(want), "y[{t}]");
    }
}

#[test]
fn a_tensor_bulk_reduction_skips_out_of_bounds_elements() {
    // The box starts at coordinate 16: its last 16 elements fall outside
    // the tensor and are not reduced.
    let k = K {
        reduce: "mov.u32 %r20, 16;\ncp.reduce.async.bulk.tensor.1d.global.shared::cta.add.tile.bulk_group [%rd9, {%r20}], [%r1];",
        ..OK
    };
    let g = go(&kernel(&k), &[[0, 0, 0]]);
    assert!(findings(&g).is_empty(), "{:#?}", findings(&g));
    let y = y(&g);
    for (t, v) in y.iter().enumerate().skip(16) {
        let want = 1000.0 * t as f64 + ((t - 16) as f64 + 1.0);
        assert_eq!(*v, Some(want), "y[{t}]");
    }
    assert!(y[..16].iter().all(Option::is_none), "{y:?}");
}
