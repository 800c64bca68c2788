//! Store provenance (`engine/writers.rs`): each written output element
//! names the last store or atomic into it — instruction and thread — and
//! an unwritten element names none. Instruction indices count the
//! kernel's instructions as written below (labels are not instructions).

mod common;
use common::{kernel_run, no_findings};
use ptxeq_exec::InstrRef;

#[test]
fn the_last_store_into_an_element_is_its_writer() {
    let body = "\
        mov.u32 %r1, %tid.x;\n\
        mov.u32 %r5, 1;\n\
        mov.u32 %r6, 2;\n\
        setp.ne.u32 %p1, %r1, 0;\n\
        @%p1 bra T1;\n\
        st.global.u32 [%rd0], %r5;\n\
        st.global.u32 [%rd0], %r6;\n\
        bra END;\n\
        T1:\n\
        st.global.v2.u32 [%rd0+4], {%r5, %r6};\n\
        st.global.u32 [%rd0+12], %r6;\n\
        atom.global.add.u32 %r3, [%rd0+12], %r5;\n\
        END:\n";
    // 0 ld.param, 1 cvta (the wrapper), then the body from index 2.
    // out[3] is stored (11), then updated by an atomic (12): the atomic
    // wrote its final value.
    let (second_store, vector_store, atomic) = (8, 10, 12);
    let run = kernel_run(body, 5, 2, "");
    no_findings(&run);
    let out = &run.outputs[0];
    let w = |i: u64| out.writer(i).map(|s| (s.instr, s.thread.linear, s.cta));
    let at = |index| InstrRef { func: 0, index };
    assert_eq!(w(0), Some((at(second_store), 0, [0, 0, 0])), "{out:?}");
    assert_eq!(w(1), Some((at(vector_store), 1, [0, 0, 0])));
    assert_eq!(w(2), Some((at(vector_store), 1, [0, 0, 0])));
    assert_eq!(w(3), Some((at(atomic), 1, [0, 0, 0])));
    assert_eq!(w(4), None, "out[4] is never written");
    // One writer per written element, sorted by index.
    let idx: Vec<u64> = out.writers.iter().map(|(i, _)| *i).collect();
    assert_eq!(idx, vec![0, 1, 2, 3]);
}
