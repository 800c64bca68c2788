//! Snapshot tests of `Parse::debug_tree` for small representative inputs.
//! Regenerate with `INSTA_UPDATE=always cargo test -p ptxeq-syntax --test snapshots`
//! and review the `.snap` diff.

use ptxeq_syntax::parse;

#[test]
fn instruction_zoo() {
    let text = r#".entry zoo()
{
	@%p1 bra 	$L__BB0_2;
	@!%p2 ld.global.nc.v4.f32 	{%f1, _, %f3, %f4}, [%rd1+-4];
	cp.async.cg.shared.global [%r1], [%rd2], 16, %r3;
	shfl.sync.bfly.b32 	%r1|%p1, %r2, 16, 31, -1;
	mov.u32 	%r5, %tid.x;
	mov.u64 	%rd3, sym+8;
	add.f32 	%f5, %f1, 0f3F800000;
	selp.b32 %r6, 0x1F, 017, !%p3;
	barrier.sync.aligned 1, 64;
	call.uni (retval0), vprintf, (param0, param1);
	call (retval0), %rd4, (param0), prototype_0;
$L__BB0_2:
	ret;
}
"#;
    insta::assert_snapshot!(parse(text).debug_tree());
}

#[test]
fn function_with_params_and_decls() {
    let text = r#".global .align 4 .b8 tbl[8] = {1, 2, {3, 4}, generic($str), sym+4};
.extern .shared .align 16 .b8 smem[];
.visible .func (.param .b32 func_retval0) foo(.param .b64 foo_param_0, .param .align 16 .b8 foo_param_1[16])
.maxntid 128, 1, 1
{
	.reg .pred 	%p<5>;
	.reg .v4 .f32 %v;
	.local .align 8 .b8 	__local_depot0[16];
	{ // callseq 0, 0
	.param .b64 param0;
	prototype_0 : .callprototype ()_ (.param .b64 _);
	}
	.pragma "nounroll";
}
.visible .entry k(
	.param .u64 .ptr .global .align 1 k_param_0
)
.reqntid 128
{
	ret;
}
"#;
    insta::assert_snapshot!(parse(text).debug_tree());
}

#[test]
fn debug_info() {
    let text = r#".version 9.5
.target sm_80, debug
.address_size 64
.entry k()
{
	.loc	1 5 0
	.loc	2 216 16, function_name $L__info_string0, inlined_at 1 15 13 // standard.py:216:16
	ret;
}
	.file	1 "/tmp/a.cu", 1700000000, 1234
	.section	.debug_info
	{
.b32 12
.b32 .debug_abbrev
.b8 135,64
.b64 $L__func_begin0
.b32 $L__func_end0 - $L__func_begin0
$L__info_string0:
.b8 "str"
	}
	.section	.debug_macinfo	{	}
"#;
    insta::assert_snapshot!(parse(text).debug_tree());
}

#[test]
fn recovery() {
    let text = ".entry k()\n{\n\tmov.u32 %r1, %r2\n\tld.f32 %f1, [%rd1;\n\t# junk\n}\n}\n";
    insta::assert_snapshot!(parse(text).debug_tree());
}
